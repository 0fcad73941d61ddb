/* Calendar queue scheduler (R. Brown, "Calendar queues", CACM 31(10), 1988).
 * Events hash by time into `nb` buckets of width `w` picoseconds (one "year" is
 * nb * w); each bucket is a sorted doubly-linked list. Pop scans forward from the
 * current bucket for an event inside the current year, falling back to a direct
 * search of bucket heads after a full empty year. The bucket count doubles when the
 * queue holds more than twice as many events and halves when it holds fewer than a
 * quarter: a queue whose population swings by 2x (an accelerator that parks and
 * resumes thousands of events at a time) rebuilt at every swing with Brown's 2x and
 * 1/2. The width is re-estimated from
 * the mean separation of the earliest events (ties counted), on resize and when the
 * scan cost per operation grows, so insert and pop stay O(1) expected for smooth time
 * distributions. The bucket array lies on huge pages once it reaches 1 MB. Ties keep
 * (time, seq) order, so the calendar pops the exact sequence the heap pops. */
#include "scheduler.h"

#include "bulk.h"

#define CAL_MIN_BUCKETS 16u
#define CAL_SAMPLE 64u       /* earliest events the width is estimated from... */
#define CAL_SAMPLE_MAX 4096u /* ...or more, up to this, while fewer than half differ */
#define CAL_WIDTH_GAPS 4.0   /* width: this many mean separations, ties counted */
/* The scan cost of an operation: an insert's step reads an event (most likely a cache
 * miss), a pop's step a bucket of an array read in order; a re-estimate when the mean
 * over a window exceeds the limit */
#define CAL_INSERT_STEP 4u
#define CAL_COST_LIMIT 2u  /* per operation, in pop steps */
#define CAL_BACKOFF_MAX 6u /* a re-estimate that did not help: windows up to 64x longer */

/* A bucket keeps its tail's (time, seq), so an insert at or after the tail, the common
 * case, links the event without first reading the tail event (a cache miss that cost
 * most of an insert's time); its head's time, so that the pop's scan reads no event of
 * the buckets it passes; and the last event inserted before its tail (the finger, moved
 * to a neighbour when that event leaves), where the next such insert often belongs:
 * flows that start together arm their timers for one instant, and each of hundreds of
 * thousands of events then goes right behind the one before it, where a scan from
 * either end passed them all. An append sets no finger and reads none. */
typedef struct {
  WhEvent *head, *tail, *finger;
  WhTime head_time, tail_time;
  uint64_t tail_seq;
} Bucket;

typedef struct {
  WhScheduler parent;
  Bucket *b;
  uint32_t nb; /* power of two */
  WhTime w;    /* bucket width in ps, >= 1 */
  size_t n;
  uint32_t cur;   /* bucket being scanned */
  WhTime cur_top; /* exclusive end of the current bucket's window */
  gboolean resizing;
  uint64_t ops, cost; /* operations and scan cost since the last check */
  uint32_t backoff;   /* the window is max(nb, 1024) << backoff operations */
  uint64_t window;
  uint64_t window_insert; /* st.insert_scans + insert_steps when the window began */
  WhCalendarStats st;     /* (buckets, width and pending filled when asked) */
} CalendarScheduler;

static inline uint32_t bucket_of(const CalendarScheduler *c, WhTime t)
{
  return (uint32_t)((t / c->w) & (c->nb - 1));
}

/* Links ev in front of `at` (an event of bucket bk). */
static void link_before(Bucket *bk, WhEvent *ev, WhEvent *at)
{
  ev->next = at;
  ev->prev = at->prev;
  if (at->prev) {
    at->prev->next = ev;
  } else {
    bk->head = ev;
    bk->head_time = ev->time;
  }
  at->prev = ev;
}

static void bucket_insert(CalendarScheduler *c, WhEvent *ev)
{
  uint32_t i = bucket_of(c, ev->time);
  Bucket *bk = &c->b[i];
  ev->pos = i;
  if (bk->tail == NULL || ev->time > bk->tail_time ||
      (ev->time == bk->tail_time && ev->seq > bk->tail_seq)) {
    /* the latest in its bucket: appended */
    ev->prev = bk->tail;
    ev->next = NULL;
    if (bk->tail) {
      bk->tail->next = ev;
    } else {
      bk->head = ev;
      bk->head_time = ev->time;
    }
    bk->tail = ev;
    bk->tail_time = ev->time;
    bk->tail_seq = ev->seq;
    return;
  }
  if (ev->time < bk->head_time) {
    link_before(bk, ev, bk->head);
    return;
  }
  /* ev goes before the tail, after `lo` (NULL: the head may follow it) and before `hi`;
   * the finger narrows that range. Scanned from the end nearer in time. */
  c->cost += CAL_INSERT_STEP;
  c->st.insert_scans++;
  WhEvent *fg = bk->finger;
  bk->finger = ev;
  WhEvent *lo = NULL, *hi = bk->tail;
  WhTime lo_time = bk->head_time, hi_time = bk->tail_time;
  if (fg != NULL) {
    if (wh_event_before(ev, fg)) {
      hi = fg;
      hi_time = fg->time;
    } else {
      lo = fg;
      lo_time = fg->time;
    }
  }
  if (ev->time - lo_time <= hi_time - ev->time) {
    WhEvent *at = lo ? lo->next : bk->head;
    while (!wh_event_before(ev, at)) { /* ends at hi at the latest */
      at = at->next;
      c->cost += CAL_INSERT_STEP;
      c->st.insert_steps++;
    }
    link_before(bk, ev, at);
    return;
  }
  WhEvent *after = hi->prev;
  while (after && wh_event_before(ev, after)) { /* ends at lo at the latest */
    after = after->prev;
    c->cost += CAL_INSERT_STEP;
    c->st.insert_steps++;
  }
  if (after == NULL) {
    link_before(bk, ev, bk->head);
    return;
  }
  ev->prev = after;
  ev->next = after->next; /* not NULL: after lies before hi */
  after->next = ev;
  ev->next->prev = ev;
}

static void bucket_unlink(CalendarScheduler *c, WhEvent *ev)
{
  Bucket *bk = &c->b[ev->pos];
  if (bk->finger == ev)
    bk->finger = ev->prev ? ev->prev : ev->next;
  if (ev->prev) {
    ev->prev->next = ev->next;
  } else {
    bk->head = ev->next;
    bk->head_time = bk->head ? bk->head->time : WH_TIME_MAX;
  }
  if (ev->next) {
    ev->next->prev = ev->prev;
  } else {
    bk->tail = ev->prev;
    if (bk->tail) {
      bk->tail_time = bk->tail->time;
      bk->tail_seq = bk->tail->seq;
    }
  }
  ev->next = ev->prev = NULL;
}

static void set_position(CalendarScheduler *c, WhTime t)
{
  c->cur = bucket_of(c, t);
  c->cur_top = (t / c->w + 1) * c->w;
}

/* Finds the earliest event without changing the scan position when `commit` is
 * false. */
static WhEvent *find_min(CalendarScheduler *c, gboolean commit)
{
  if (c->n == 0)
    return NULL;
  const Bucket *bk = &c->b[c->cur], *end = c->b + c->nb;
  const WhTime w = c->w;
  WhTime top = c->cur_top;
  for (uint32_t k = 0; k < c->nb; k++) {
    if (bk->head_time < top) { /* WH_TIME_MAX when empty */
      if (commit) {
        c->cur = (uint32_t)(bk - c->b);
        c->cur_top = top;
        c->cost += k;
      }
      return bk->head;
    }
    top += w;
    if (++bk == end)
      bk = c->b;
  }
  if (commit) {
    c->cost += c->nb * 2u;
    c->st.direct_searches++;
  }
  /* A whole year without an event in its window: direct search. */
  WhEvent *best = NULL;
  for (uint32_t j = 0; j < c->nb; j++) {
    WhEvent *h = c->b[j].head;
    if (h && (best == NULL || wh_event_before(h, best)))
      best = h;
  }
  if (commit)
    set_position(c, best->time);
  return best;
}

static void rebuild(CalendarScheduler *c, uint32_t new_nb);

/* Empty buckets, each with its head's time at WH_TIME_MAX: the pop's scan reads one
 * field per bucket it passes. */
static Bucket *new_buckets(uint32_t nb)
{
  Bucket *b = wh_huge_alloc0(sizeof(Bucket) * nb);
  for (uint32_t i = 0; i < nb; i++)
    b[i].head_time = WH_TIME_MAX;
  return b;
}

static void set_window(CalendarScheduler *c)
{
  c->window = (uint64_t)MAX(c->nb, 1024u) << c->backoff;
}

/* The counters the window's cost leaves: operations, and the pops' share of the cost. */
static void count_window(const CalendarScheduler *c, WhCalendarStats *st)
{
  uint64_t ins = c->st.insert_scans + c->st.insert_steps;
  st->operations += c->ops;
  st->pop_steps += c->cost - CAL_INSERT_STEP * (ins - c->window_insert);
}

/* Brown's calendar keeps its bucket width until the queue doubles or halves; network
 * traffic changes its time scale without changing its size (a burst of ties at start,
 * then per-packet spacing), so the width is also re-estimated whenever the mean scan
 * cost over a window of operations exceeds CAL_COST_LIMIT (as in the dynamic
 * calendar queue of Oh and Ahn, 1999). When the window after a re-estimate is slow
 * too, the re-estimate did not help (a cost that the time distribution makes), and the
 * next window is twice as long, so re-estimates cost at most a small share. */
static G_NO_INLINE void check_window(CalendarScheduler *c)
{
  count_window(c, &c->st);
  c->window_insert = c->st.insert_scans + c->st.insert_steps;
  gboolean slow = c->cost > (uint64_t)CAL_COST_LIMIT * c->ops;
  c->ops = c->cost = 0;
  if (!slow) {
    c->backoff = 0;
    set_window(c);
    return;
  }
  if (c->resizing)
    return;
  if (c->backoff < CAL_BACKOFF_MAX)
    c->backoff++;
  rebuild(c, c->nb); /* sets the window */
}

static inline void check_cost(CalendarScheduler *c)
{
  if (G_UNLIKELY(++c->ops >= c->window))
    check_window(c);
}

static WhScheduler *calendar_create(void)
{
  CalendarScheduler *c = g_new0(CalendarScheduler, 1);
  c->parent.klass = &wh_calendar_scheduler_class;
  c->nb = CAL_MIN_BUCKETS;
  c->w = WH_US;
  c->b = new_buckets(c->nb);
  set_window(c);
  set_position(c, 0);
  return &c->parent;
}

static void calendar_destroy(WhScheduler *self)
{
  CalendarScheduler *c = (CalendarScheduler *)self;
  wh_huge_free(c->b, sizeof(Bucket) * c->nb);
  g_free(c);
}

static void calendar_insert(WhScheduler *self, WhEvent *ev)
{
  CalendarScheduler *c = (CalendarScheduler *)self;
  if (c->n == 0 || ev->time < c->cur_top - c->w)
    set_position(c, ev->time);
  bucket_insert(c, ev);
  c->n++;
  if (!c->resizing && c->n > 2u * c->nb)
    rebuild(c, c->nb * 2);
  else
    check_cost(c);
}

static WhEvent *calendar_peek(WhScheduler *self)
{
  return find_min((CalendarScheduler *)self, FALSE);
}

static WhEvent *calendar_pop(WhScheduler *self)
{
  CalendarScheduler *c = (CalendarScheduler *)self;
  WhEvent *ev = find_min(c, TRUE);
  if (ev == NULL)
    return NULL;
  /* the hint: the bucket's next event (its time is read to unlink ev) if it lies in the
   * window, else the next bucket's head */
  WhEvent *next = ev->next;
  uint32_t i = ev->pos;
  bucket_unlink(c, ev);
  c->n--;
  c->parent.hint = next && next->time < c->cur_top ? next : c->b[(i + 1) & (c->nb - 1)].head;
  if (!c->resizing && c->nb > CAL_MIN_BUCKETS && c->n < c->nb / 4)
    rebuild(c, c->nb / 2); /* below a quarter: see the top */
  else
    check_cost(c);
  return ev;
}

static void calendar_remove(WhScheduler *self, WhEvent *ev)
{
  CalendarScheduler *c = (CalendarScheduler *)self;
  g_return_if_fail(ev->pos < c->nb);
  bucket_unlink(c, ev);
  c->n--;
}

static size_t calendar_size(const WhScheduler *self)
{
  return ((const CalendarScheduler *)self)->n;
}

/* The width: CAL_WIDTH_GAPS times the mean separation of the earliest events, ties
 * counted as separations of zero, after discarding separations larger than twice the
 * first mean (Brown's trim). Brown takes three times the mean of the separations; a
 * network run's events come in ties and near-ties (ports that send in step), and a
 * width from the distinct times alone (2.4 ns on the k=16 fat-tree) held tens of events
 * per bucket once the ties spread out: 81% of inserts then scanned, 2.3 events each,
 * every one a likely cache miss. With the ties counted (67 ps there) 8% scan, 0.08
 * steps per insert, for 0.7 empty buckets passed per pop (docs/notes/2026-12-engine-scaling.md). A
 * sample of ties only says nothing of the time scale: the width stays. */
static WhTime estimate_width(WhEvent **sample, uint32_t k, WhTime old_w)
{
  if (k < 2 || sample[k - 1]->time == sample[0]->time)
    return old_w;
  double mean = (double)(sample[k - 1]->time - sample[0]->time) / (double)(k - 1);
  double sum = 0;
  uint32_t m = 0;
  for (uint32_t i = 1; i < k; i++) {
    double d = (double)(sample[i]->time - sample[i - 1]->time);
    if (d <= 2.0 * mean) {
      sum += d;
      m++;
    }
  }
  double w = CAL_WIDTH_GAPS * (sum > 0 ? sum / m : mean);
  if (w < 1.0)
    return 1;
  return (WhTime)w;
}

static void rebuild(CalendarScheduler *c, uint32_t new_nb)
{
  c->resizing = TRUE;
  /* Ties say nothing of the time scale, and a network run makes many (NICs that start
   * together send in step, flows that start together arm one instant): the sample
   * grows until half of it are distinct times. With the first 64 events all at one
   * instant, the width stayed at its first value of 1 us for hundreds of thousands of
   * packet events, and an insert scanned thousands. */
  WhEvent **sample = g_new(WhEvent *, CAL_SAMPLE_MAX);
  uint32_t k = 0, gaps = 0;
  while (c->n > 0 && k < CAL_SAMPLE_MAX && (k < CAL_SAMPLE || gaps < CAL_SAMPLE / 2)) {
    sample[k] = calendar_pop(&c->parent);
    if (k > 0 && sample[k]->time != sample[k - 1]->time)
      gaps++;
    k++;
  }
  WhTime new_w = estimate_width(sample, k, c->w);
  c->st.rebuilds++;
  c->st.rebuild_events += c->n + k;

  /* Collect the remaining events into one chain, each bucket's in its (time, seq)
   * order, so that reinserting them, scanned from a bucket's tail, finds each one's
   * place at once: in reverse order, a bucket of many equal times (timers that flows
   * started together arm for the same instant) took quadratic time. */
  WhEvent *chain = NULL, **link = &chain;
  for (uint32_t i = 0; i < c->nb; i++) {
    if (c->b[i].head) {
      *link = c->b[i].head;
      link = &c->b[i].tail->next;
    }
  }
  *link = NULL;
  wh_huge_free(c->b, sizeof(Bucket) * c->nb);
  c->nb = new_nb;
  c->w = new_w;
  c->b = new_buckets(c->nb);
  set_window(c);
  c->n = 0;
  set_position(c, k ? sample[0]->time : 0);
  for (uint32_t i = 0; i < k; i++) {
    bucket_insert(c, sample[i]);
    c->n++;
  }
  while (chain) {
    WhEvent *next = chain->next;
    bucket_insert(c, chain);
    c->n++;
    chain = next;
  }
  if (k == 0)
    set_position(c, 0);
  g_free(sample);
  c->resizing = FALSE;
}

gboolean wh_calendar_scheduler_stats(const WhScheduler *self, WhCalendarStats *out)
{
  g_return_val_if_fail(self != NULL && out != NULL, FALSE);
  if (self->klass != &wh_calendar_scheduler_class)
    return FALSE;
  const CalendarScheduler *c = (const CalendarScheduler *)self;
  *out = c->st;
  count_window(c, out);
  out->buckets = c->nb;
  out->width = c->w;
  out->pending = c->n;
  return TRUE;
}

const WhSchedulerClass wh_calendar_scheduler_class = {
    .name = "calendar",
    .type_name = "wh::CalendarScheduler",
    .help = "calendar queue (Brown 1988): O(1) expected insert and pop, resizing buckets",
    .create = calendar_create,
    .destroy = calendar_destroy,
    .insert = calendar_insert,
    .peek = calendar_peek,
    .pop = calendar_pop,
    .remove = calendar_remove,
    .size = calendar_size,
};
