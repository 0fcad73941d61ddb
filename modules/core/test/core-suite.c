/* Core tests: unit parsing, the type registry and configuration precedence, the two
 * stock schedulers against a sorted reference (uniform, skewed, bursty and tied time
 * distributions, with cancellations), the simulator loop and its event pool, random
 * streams, and bulk memory and tables. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "bulk.h"
#include "registry.h"
#include "rng.h"
#include "simulator.h"
#include "units.h"
#include "wh-error.h"

/* ---- units ---- */

START_TEST(test_units_rate)
{
  uint64_t v;
  ck_assert(wh_units_parse_rate("100Gbps", &v, NULL) && v == 100000000000ULL);
  ck_assert(wh_units_parse_rate("2.5Gbps", &v, NULL) && v == 2500000000ULL);
  ck_assert(wh_units_parse_rate("1Tbps", &v, NULL) && v == 1000000000000ULL);
  ck_assert(wh_units_parse_rate("20Mb/s", &v, NULL) && v == 20000000ULL);
  ck_assert(wh_units_parse_rate("400 Kbps", &v, NULL) && v == 400000ULL);
  g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL, e4 = NULL;
  ck_assert(!wh_units_parse_rate("100", &v, &e1));
  ck_assert(strstr(e1->message, "no unit") != NULL);
  ck_assert(!wh_units_parse_rate("100GBps", &v, &e2));
  ck_assert(strstr(e2->message, "unknown unit \"GBps\"") != NULL);
  ck_assert(!wh_units_parse_rate("-5Gbps", &v, &e3));
  ck_assert(strstr(e3->message, "negative") != NULL);
  ck_assert(!wh_units_parse_rate("", &v, &e4));
}
END_TEST

START_TEST(test_units_bytes)
{
  uint64_t v;
  ck_assert(wh_units_parse_bytes("400KB", &v, NULL) && v == 400000);
  ck_assert(wh_units_parse_bytes("4KiB", &v, NULL) && v == 4096);
  ck_assert(wh_units_parse_bytes("1.5MiB", &v, NULL) && v == 1572864);
  ck_assert(wh_units_parse_bytes("8MB", &v, NULL) && v == 8000000);
  ck_assert(wh_units_parse_bytes("1GB", &v, NULL) && v == 1000000000ULL);
  ck_assert(wh_units_parse_bytes("64B", &v, NULL) && v == 64);
  ck_assert(!wh_units_parse_bytes("10XB", &v, NULL));
  ck_assert(!wh_units_parse_bytes("KB", &v, NULL));
  ck_assert(!wh_units_parse_bytes("1e30TB", &v, NULL));
}
END_TEST

START_TEST(test_units_time)
{
  WhTime t;
  ck_assert(wh_units_parse_time("1us", &t, NULL) && t == WH_US);
  ck_assert(wh_units_parse_time("2.5ns", &t, NULL) && t == 2500);
  ck_assert(wh_units_parse_time("10ps", &t, NULL) && t == 10);
  ck_assert(wh_units_parse_time("3ms", &t, NULL) && t == 3 * WH_MS);
  ck_assert(wh_units_parse_time("1s", &t, NULL) && t == WH_S);
  ck_assert(!wh_units_parse_time("5", &t, NULL));
  ck_assert(!wh_units_parse_time("5min", &t, NULL));
  ck_assert(!wh_units_parse_time("1us junk", &t, NULL));
}
END_TEST

START_TEST(test_tx_time)
{
  ck_assert_uint_eq(wh_time_tx(1000, 100000000000ULL), 80000);
  ck_assert_uint_eq(wh_time_tx(1, 3), 2666666666667ULL); /* rounds up */
  /* the 64-bit path agrees with 128-bit arithmetic at its edges and beyond them */
  static const uint64_t bytes[] = {0, 1, 64, 1500, 9000, (1u << 21) - 1, 1u << 21, 1ULL << 40};
  static const uint64_t rates[] = {1,          3,         7, 400000000000ULL, (1ULL << 60) - 1,
                                   1ULL << 60, UINT64_MAX};
  for (size_t i = 0; i < G_N_ELEMENTS(bytes); i++)
    for (size_t j = 0; j < G_N_ELEMENTS(rates); j++) {
      WhTime want = (WhTime)(((unsigned __int128)bytes[i] * 8u * WH_S + rates[j] - 1) / rates[j]);
      ck_assert_msg(want == wh_time_tx(bytes[i], rates[j]),
                    "%" G_GUINT64_FORMAT " B at %" G_GUINT64_FORMAT " b/s", bytes[i], rates[j]);
    }
}
END_TEST

/* ---- registry and configuration ---- */

START_TEST(test_config_set_and_precedence)
{
  g_autoptr(WhConfig) cfg = wh_config_new();
  ck_assert_uint_eq(wh_config_bytes(cfg, "wh::DcqcnCc", "Kmin"), 400000);
  ck_assert(wh_config_set_assignment(cfg, "wh::DcqcnCc::Kmin=100KB", "scenario", NULL));
  ck_assert(wh_config_set_assignment(cfg, "wh::DcqcnCc::Kmin=200KiB", "command line", NULL));
  ck_assert_uint_eq(wh_config_bytes(cfg, "wh::DcqcnCc", "Kmin"), 204800);
  ck_assert_str_eq(wh_config_origin(cfg, "wh::DcqcnCc", "Kmin"), "command line");
  ck_assert(wh_config_set(cfg, "wh::Link::Rate", "400Gbps", NULL, NULL));
  ck_assert_uint_eq(wh_config_rate(cfg, "wh::Link", "Rate"), 400000000000ULL);
}
END_TEST

START_TEST(test_config_errors)
{
  g_autoptr(WhConfig) cfg = wh_config_new();
  g_autoptr(GError) e1 = NULL, e2 = NULL, e3 = NULL, e4 = NULL, e5 = NULL, e6 = NULL;
  ck_assert(!wh_config_set(cfg, "wh::Nope::X", "1", NULL, &e1));
  ck_assert(g_error_matches(e1, WH_CONFIG_ERROR, WH_CONFIG_ERROR_UNKNOWN_TYPE));
  ck_assert(!wh_config_set(cfg, "wh::Link::Speed", "1Gbps", NULL, &e2));
  ck_assert(g_error_matches(e2, WH_CONFIG_ERROR, WH_CONFIG_ERROR_UNKNOWN_PARAM));
  /* a value its unit parser refuses keeps the parser's code, prefixed with the key */
  ck_assert(!wh_config_set(cfg, "wh::Link::Rate", "1GB", NULL, &e3));
  ck_assert(g_error_matches(e3, WH_UNITS_ERROR, WH_UNITS_ERROR_UNIT));
  ck_assert(g_str_has_prefix(e3->message, "wh::Link::Rate: "));
  g_autoptr(GError) e7 = NULL, e8 = NULL, e9 = NULL;
  ck_assert(!wh_config_set(cfg, "wh::Link::Rate", "fast", NULL, &e7));
  ck_assert(g_error_matches(e7, WH_UNITS_ERROR, WH_UNITS_ERROR_SYNTAX));
  ck_assert(!wh_config_set(cfg, "wh::Link::Delay", "-1us", NULL, &e8));
  ck_assert(g_error_matches(e8, WH_UNITS_ERROR, WH_UNITS_ERROR_RANGE));
  ck_assert(!wh_config_set_assignment(cfg, "wh::Link::Delay=-1us", "test", &e9));
  ck_assert(g_error_matches(e9, WH_UNITS_ERROR, WH_UNITS_ERROR_RANGE));
  ck_assert(!wh_config_set(cfg, "wh::Link::Rate", "0Gbps", NULL, &e4));
  ck_assert(strstr(e4->message, "greater than zero") != NULL);
  ck_assert(!wh_config_set(cfg, "Rate", "1Gbps", NULL, &e5));
  ck_assert(g_error_matches(e5, WH_CONFIG_ERROR, WH_CONFIG_ERROR_SYNTAX));
  ck_assert(!wh_config_set(cfg, "wh::DcqcnCc::Pmax", "1.5", NULL, &e6));
  /* a failed set leaves the previous value in force */
  ck_assert_double_eq(wh_config_double(cfg, "wh::DcqcnCc", "Pmax"), 0.2);
}
END_TEST

START_TEST(test_registry_lists_types)
{
  static const char *expected[] = {"wh::DcqcnCc",          "wh::Link",    "wh::Switch",
                                   "wh::RdmaFlow",         "wh::FatTree", "wh::RailFatTree",
                                   "wh::Dumbbell",         "wh::Star",    "wh::HeapScheduler",
                                   "wh::CalendarScheduler"};
  for (size_t i = 0; i < G_N_ELEMENTS(expected); i++)
    ck_assert_msg(wh_registry_lookup(expected[i]) != NULL, "%s not registered", expected[i]);
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  wh_registry_print(f);
  fclose(f);
  ck_assert(strstr(buf, "Kmin") && strstr(buf, "400KB") && strstr(buf, "Gbps"));
  free(buf);
}
END_TEST

/* ---- schedulers: both stock classes against a sorted reference ---- */

typedef enum { DIST_UNIFORM, DIST_SKEWED, DIST_BURSTY, DIST_TIED, DIST_ARMED } Dist;

static WhTime draw(WhRng *r, Dist d, WhTime now)
{
  switch (d) {
  case DIST_UNIFORM:
    return now + wh_rng_next(r) % (100 * WH_US);
  case DIST_SKEWED: /* heavy tail: exponential of an exponential */
    return now + (WhTime)(exp(8.0 * wh_rng_uniform(r)) * wh_rng_uniform(r) * 1e3);
  case DIST_BURSTY: /* tight clusters far apart */
    return now + (wh_rng_next(r) % 8 == 0 ? 10 * WH_MS : 0) + wh_rng_next(r) % 50;
  case DIST_TIED:
    return now + (wh_rng_next(r) % 4) * WH_US;
  case DIST_ARMED: /* packet spacing, and timers armed together for one far instant */
    return wh_rng_next(r) % 2 ? (now / (2 * WH_MS) + 1) * 2 * WH_MS : now + wh_rng_next(r) % 50;
  }
  return now;
}

static gint cmp_event(gconstpointer a, gconstpointer b, gpointer unused)
{
  const WhEvent *x = a, *y = b;
  (void)unused;
  return wh_event_before(x, y) ? -1 : wh_event_before(y, x) ? 1 : 0;
}

/* The reference: a GSequence sorted by (time, seq); each event keeps its iterator in
 * ctx and its slot in the `pending` array in arg, for random cancellation. */
typedef struct {
  GSequence *seq;
  GPtrArray *pending;
} Reference;

static void ref_add(Reference *ref, WhEvent *e)
{
  e->ctx = g_sequence_insert_sorted(ref->seq, e, cmp_event, NULL);
  e->arg = ref->pending->len;
  g_ptr_array_add(ref->pending, e);
}

static void ref_remove(Reference *ref, WhEvent *e)
{
  g_sequence_remove(e->ctx);
  WhEvent *last = g_ptr_array_index(ref->pending, ref->pending->len - 1);
  ref->pending->pdata[e->arg] = last;
  last->arg = e->arg;
  g_ptr_array_set_size(ref->pending, ref->pending->len - 1);
}

/* Hold-model workload: pop one, push one or two (the queue grows, then drains), with
 * one in 16 pops followed by a cancellation of a random pending event. Every pop must
 * return the minimum of the reference. */
static void exercise(const WhSchedulerClass *klass, Dist d)
{
  WhScheduler *s = klass->create();
  Reference ref = {g_sequence_new(NULL), g_ptr_array_new()};
  WhEvent *pool = g_new0(WhEvent, 200000);
  size_t used = 0;
  uint64_t seq = 0;
  WhRng r;
  wh_rng_init(&r, 42, d);
  WhTime now = 0;
  for (int i = 0; i < 2000; i++) {
    WhEvent *e = &pool[used++];
    e->time = draw(&r, d, now);
    e->seq = seq++;
    klass->insert(s, e);
    ref_add(&ref, e);
  }
  for (int step = 0; step < 60000 && ref.pending->len; step++) {
    WhEvent *ev = klass->pop(s);
    WhEvent *want = g_sequence_get(g_sequence_get_begin_iter(ref.seq));
    ck_assert_ptr_eq(ev, want);
    ck_assert_uint_ge(ev->time, now);
    now = ev->time;
    ref_remove(&ref, ev);
    int pushes = step < 30000 ? 1 + (int)(wh_rng_next(&r) % 2) : (int)(wh_rng_next(&r) % 2);
    for (int k = 0; k < pushes && used < 200000; k++) {
      WhEvent *e = &pool[used++];
      e->time = draw(&r, d, now);
      e->seq = seq++;
      klass->insert(s, e);
      ref_add(&ref, e);
    }
    if (step % 16 == 0 && ref.pending->len > 1) {
      WhEvent *victim = ref.pending->pdata[wh_rng_next(&r) % ref.pending->len];
      klass->remove(s, victim);
      ref_remove(&ref, victim);
    }
    ck_assert_uint_eq(klass->size(s), ref.pending->len);
  }
  g_sequence_free(ref.seq);
  g_ptr_array_free(ref.pending, TRUE);
  g_free(pool);
  klass->destroy(s);
}

START_TEST(test_scheduler_distributions)
{
  const WhSchedulerClass *const *classes = wh_scheduler_classes();
  for (size_t c = 0; classes[c]; c++)
    exercise(classes[c], (Dist)_i);
}
END_TEST

START_TEST(test_scheduler_lookup)
{
  ck_assert_ptr_eq(wh_scheduler_class_lookup("heap"), &wh_heap_scheduler_class);
  ck_assert_ptr_eq(wh_scheduler_class_lookup("wh::CalendarScheduler"),
                   &wh_calendar_scheduler_class);
  ck_assert_ptr_null(wh_scheduler_class_lookup("splay"));
}
END_TEST

/* Network-like traffic for the calendar: 2048 ports, each with one pending event that
 * it re-arms one packet time (335 ns, plus a drift of up to 1 ns that is the port's own)
 * later, or four packet times for every other port (two kinds of events interleave, as
 * transmissions and arrivals do). The ports start in step, in ties, and drift apart.
 * Both schedulers pop the same sequence; and once the ties have spread, the calendar's
 * width has followed them: its scan cost is below one pop step per operation (an
 * insert's step counting four), and its re-estimates moved fewer events than half its
 * operations. */
START_TEST(test_calendar_follows_ports)
{
  enum { PORTS = 2048, POPS = 400000 };
  const WhTime pkt = 335000;
  WhScheduler *sched[2] = {wh_heap_scheduler_class.create(), wh_calendar_scheduler_class.create()};
  WhEvent *pool[2] = {g_new0(WhEvent, PORTS), g_new0(WhEvent, PORTS)};
  for (int k = 0; k < 2; k++) {
    for (uint32_t i = 0; i < PORTS; i++) {
      pool[k][i] = (WhEvent){.time = (WhTime)(i % 4), .seq = i, .owner = i};
      sched[k]->klass->insert(sched[k], &pool[k][i]);
    }
  }
  uint64_t seq = PORTS;
  WhCalendarStats half = {0}, end = {0};
  for (int step = 0; step < POPS; step++) {
    if (step == POPS / 2)
      ck_assert(wh_calendar_scheduler_stats(sched[1], &half));
    WhEvent *ev[2];
    for (int k = 0; k < 2; k++)
      ev[k] = sched[k]->klass->pop(sched[k]);
    ck_assert_uint_eq(ev[0]->owner, ev[1]->owner);
    ck_assert_uint_eq(ev[0]->time, ev[1]->time);
    uint32_t i = ev[0]->owner;
    WhTime next = ev[0]->time + (i % 2 ? 4 : 1) * pkt + (WhTime)(i * 7919u % 1000u);
    for (int k = 0; k < 2; k++) {
      ev[k]->time = next;
      ev[k]->seq = seq;
      sched[k]->klass->insert(sched[k], ev[k]);
    }
    seq++;
  }
  ck_assert(wh_calendar_scheduler_stats(sched[1], &end));
  WhCalendarStats none;
  ck_assert(!wh_calendar_scheduler_stats(sched[0], &none)); /* a heap has none */
  /* the scan cost of the second half, an insert's step (an event read) counting as
   * four of a pop's (a bucket of the array read in order) */
  uint64_t ops = end.operations - half.operations;
  uint64_t cost = 4 * (end.insert_steps - half.insert_steps) + end.pop_steps - half.pop_steps;
  ck_assert_uint_eq(end.pending, PORTS);
  ck_assert_uint_ge(end.rebuilds, 1);
  ck_assert_msg(cost < ops,
                "scan cost %.2f per operation (width %" G_GUINT64_FORMAT " ps, %u buckets)",
                (double)cost / (double)ops, end.width, end.buckets);
  ck_assert_uint_lt(end.rebuild_events, end.operations / 2);
  for (int k = 0; k < 2; k++) {
    sched[k]->klass->destroy(sched[k]);
    g_free(pool[k]);
  }
}
END_TEST

/* ---- simulator loop ---- */

typedef struct {
  GArray *order;
  WhEvent *victim;
} LoopCtx;

static void record(WhSim *sim, void *ctx, uint64_t arg)
{
  LoopCtx *c = ctx;
  (void)sim;
  g_array_append_val(c->order, arg);
}

static void canceller(WhSim *sim, void *ctx, uint64_t arg)
{
  LoopCtx *c = ctx;
  g_array_append_val(c->order, arg);
  wh_sim_cancel(sim, c->victim);
}

START_TEST(test_sim_order_cancel_stop)
{
  const WhSchedulerClass *const *classes = wh_scheduler_classes();
  for (size_t k = 0; classes[k]; k++) {
    g_autoptr(WhSim) sim = wh_sim_new(classes[k]);
    LoopCtx c = {g_array_new(FALSE, FALSE, sizeof(uint64_t)), NULL};
    wh_sim_schedule_at(sim, 10, record, &c, 1, 0);
    wh_sim_schedule_at(sim, 5, canceller, &c, 0, 0);
    wh_sim_schedule_at(sim, 10, record, &c, 2, 0); /* same time: FIFO after 1 */
    c.victim = wh_sim_schedule_at(sim, 7, record, &c, 99, 0);
    wh_sim_schedule_at(sim, 30, record, &c, 3, 0);
    wh_sim_stop_at(sim, 20);
    wh_sim_run(sim);
    ck_assert_uint_eq(c.order->len, 3);
    ck_assert_uint_eq(g_array_index(c.order, uint64_t, 0), 0);
    ck_assert_uint_eq(g_array_index(c.order, uint64_t, 1), 1);
    ck_assert_uint_eq(g_array_index(c.order, uint64_t, 2), 2);
    ck_assert_uint_eq(wh_sim_now(sim), 10);
    ck_assert_uint_eq(wh_sim_pending(sim), 1);
    wh_sim_stop_at(sim, WH_TIME_MAX);
    wh_sim_run(sim);
    ck_assert_uint_eq(c.order->len, 4);
    ck_assert_uint_eq(sim->events_live, 0);
    g_array_free(c.order, TRUE);
  }
}
END_TEST

static void chain(WhSim *sim, void *ctx, uint64_t arg)
{
  if (arg > 0)
    wh_sim_schedule(sim, 1, chain, ctx, arg - 1, 0);
}

/* Schedules an event at WH_TIME_MAX - arg + 1 from now: a sum that wraps (arg > 0). */
static void wrapper(WhSim *sim, void *ctx, uint64_t arg)
{
  record(sim, ctx, arg);
  wh_sim_schedule_at(sim, sim->now + (WH_TIME_MAX - arg + 1), record, ctx, 98, 0);
}

/* The horizon guard, on every scheduler: an event past WH_TIME_HORIZON stops the run
 * when it comes due (what lies before it has run; it stays queued, even on a second
 * wh_sim_run), and a time before now (a wrapped sum) stops the run at once. */
START_TEST(test_sim_horizon)
{
  const WhSchedulerClass *const *classes = wh_scheduler_classes();
  for (size_t k = 0; classes[k]; k++) {
    g_autoptr(WhSim) sim = wh_sim_new(classes[k]);
    LoopCtx c = {g_array_new(FALSE, FALSE, sizeof(uint64_t)), NULL};
    wh_sim_schedule_at(sim, WH_TIME_HORIZON + 5, record, &c, 99, 0);
    wh_sim_schedule_at(sim, WH_TIME_HORIZON, record, &c, 1, 0);
    wh_sim_schedule_at(sim, 10, record, &c, 0, 0);
    wh_sim_run(sim);
    ck_assert_uint_eq(c.order->len, 2);
    ck_assert_uint_eq(g_array_index(c.order, uint64_t, 1), 1);
    ck_assert_uint_eq(sim->past_horizon, WH_TIME_HORIZON + 5);
    ck_assert_uint_eq(wh_sim_now(sim), WH_TIME_HORIZON);
    ck_assert_uint_eq(wh_sim_pending(sim), 1);
    wh_sim_run(sim);
    ck_assert_uint_eq(c.order->len, 2);

    g_autoptr(WhSim) wrap = wh_sim_new(classes[k]);
    g_array_set_size(c.order, 0);
    wh_sim_schedule_at(wrap, 100, wrapper, &c, 20, 0);
    wh_sim_schedule_at(wrap, 200, record, &c, 2, 0);
    wh_sim_run(wrap);
    ck_assert_uint_eq(c.order->len, 1);
    ck_assert_uint_eq(wrap->past_horizon, WH_TIME_MAX);
    ck_assert_uint_eq(wh_sim_now(wrap), 100);
    ck_assert_uint_eq(wh_sim_pending(wrap), 2);
    g_array_free(c.order, TRUE);
  }
}
END_TEST

START_TEST(test_sim_pool_reuse)
{
  g_autoptr(WhSim) sim = wh_sim_new(&wh_heap_scheduler_class);
  for (int i = 0; i < 100; i++)
    wh_sim_schedule(sim, (WhTime)i, chain, NULL, 10000, 0);
  wh_sim_run(sim);
  ck_assert_uint_eq(sim->events_executed, 100 * 10001);
  /* 100 events pending at most: one slab suffices for a million events */
  ck_assert_uint_eq(wh_sim_pool_slabs(sim), 1);
  ck_assert_uint_eq(sim->events_live, 0);
}
END_TEST

/* ---- random streams ---- */

START_TEST(test_rng_streams)
{
  WhRng a, b, c;
  wh_rng_init(&a, 7, 1);
  wh_rng_init(&b, 7, 1);
  wh_rng_init(&c, 7, 2);
  int same = 0;
  double sum = 0;
  for (int i = 0; i < 10000; i++) {
    uint64_t x = wh_rng_next(&a);
    ck_assert_uint_eq(x, wh_rng_next(&b));
    same += x == wh_rng_next(&c);
    sum += (double)(x >> 11) * 0x1.0p-53;
  }
  ck_assert_int_eq(same, 0);
  ck_assert(fabs(sum / 10000 - 0.5) < 0.02);
}
END_TEST

/* ---- bulk memory ---- */

/* Blocks are zero, aligned, distinct and keep their contents as the arena grows past
 * its malloc'ed start into mapped regions, including a block larger than a region. */
START_TEST(test_bulk_blocks)
{
  WhBulk *b = wh_bulk_new();
  enum { N = 64 };
  uint8_t *blk[N];
  size_t size[N];
  for (int i = 0; i < N; i++) {
    size[i] = i == N / 2 ? (size_t)WH_BULK_REGION + 12345 : (size_t)100000 + (size_t)i * 977;
    blk[i] = wh_bulk_alloc0(b, size[i]);
    ck_assert_uint_eq((uintptr_t)blk[i] % WH_BULK_ALIGN, 0);
    for (size_t k = 0; k < size[i]; k += 511)
      ck_assert_uint_eq(blk[i][k], 0);
    ck_assert_uint_eq(blk[i][size[i] - 1], 0);
    memset(blk[i], i + 1, size[i]);
  }
  for (int i = 0; i < N; i++) {
    ck_assert_uint_eq(blk[i][0], (uint8_t)(i + 1));
    ck_assert_uint_eq(blk[i][size[i] - 1], (uint8_t)(i + 1));
  }
  ck_assert_uint_ge(wh_bulk_used(b), WH_BULK_REGION + 63u * 100000u);
  ck_assert_uint_ge(wh_bulk_reserved(b), wh_bulk_used(b));
  wh_bulk_free(b);
  wh_bulk_free(NULL);
}
END_TEST

/* A huge-page array is zeroed and aligned, small (from malloc) or large (mapped on its
 * own), and holds what is written to it until freed. */
START_TEST(test_bulk_huge)
{
  const size_t sizes[] = {64, 100000, WH_BULK_SMALL, (size_t)3 * WH_BULK_REGION + 4321};
  for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
    uint8_t *p = wh_huge_alloc0(sizes[i]);
    ck_assert_uint_eq((uintptr_t)p % WH_BULK_ALIGN, 0);
    for (size_t k = 0; k < sizes[i]; k += 4093)
      ck_assert_uint_eq(p[k], 0);
    ck_assert_uint_eq(p[sizes[i] - 1], 0);
    memset(p, (int)i + 1, sizes[i]);
    ck_assert_uint_eq(p[sizes[i] - 1], (uint8_t)(i + 1));
    wh_huge_free(p, sizes[i]);
  }
  wh_huge_free(NULL, 0);
}
END_TEST

/* A table grows without moving its elements; new elements are zero; clear empties it. */
START_TEST(test_bulk_table)
{
  typedef struct {
    uint64_t a;
    uint32_t b;
    uint8_t c[20];
  } Elem;
  WhTable t;
  wh_table_init(&t, sizeof(Elem));
  ck_assert_uint_eq(t.len, 0);
  wh_table_grow(&t, 1);
  Elem *first = wh_table_at(&t, 0);
  first->a = 42;
  uint32_t n = 300000; /* 11 MB: past the malloc'ed start, into regions */
  for (uint32_t i = 1; i <= n; i += 997) {
    wh_table_grow(&t, i + 1);
    Elem *e = wh_table_at(&t, i);
    ck_assert_uint_eq(e->a, 0);
    ck_assert_uint_eq(e->c[19], 0);
    e->a = i;
    e->b = ~i;
  }
  wh_table_grow(&t, 5); /* never shrinks */
  ck_assert_uint_ge(t.len, n - 997);
  ck_assert_ptr_eq(wh_table_at(&t, 0), first);
  ck_assert_uint_eq(first->a, 42);
  for (uint32_t i = 1; i <= n; i += 997) {
    Elem *e = wh_table_at(&t, i);
    ck_assert_uint_eq(e->a, i);
    ck_assert_uint_eq(e->b, ~i);
    ck_assert_uint_eq(((Elem *)wh_table_at(&t, i + 1))->a, 0);
  }
  wh_table_clear(&t);
  ck_assert_uint_eq(t.len, 0);
  ck_assert_uint_eq(t.elem, sizeof(Elem));
  wh_table_grow(&t, 3);
  ck_assert_uint_eq(((Elem *)wh_table_at(&t, 2))->a, 0);
  wh_table_clear(&t);
}
END_TEST

/* The shared error helper: "FILE:LINE: ", "FILE: " or no prefix, FALSE, and a NULL
 * error left alone. */
START_TEST(test_error_helper)
{
  GQuark q = g_quark_from_static_string("wh-test-error");
  GError *e = NULL;
  ck_assert(!wh_error_set_at(&e, q, 3, "a.xml", 12, "bad %s", "value"));
  ck_assert(g_error_matches(e, q, 3));
  ck_assert_str_eq(e->message, "a.xml:12: bad value");
  g_clear_error(&e);
  ck_assert(!wh_error_set_at(&e, q, 4, "a.xml", 0, "%d%%", 50));
  ck_assert_str_eq(e->message, "a.xml: 50%");
  g_clear_error(&e);
  ck_assert(!wh_error_set_at(&e, q, 5, NULL, 7, "no file"));
  ck_assert_str_eq(e->message, "no file");
  g_clear_error(&e);
  ck_assert(!wh_error_set(&e, q, 6, "%s: %u", "n", 2u));
  ck_assert_str_eq(e->message, "n: 2");
  ck_assert_int_eq(e->code, 6);
  g_clear_error(&e);
  ck_assert(!wh_error_set(NULL, q, 1, "ignored"));
}
END_TEST

Suite *wh_core_suite(void)
{
  Suite *s = suite_create("core");
  TCase *tc = tcase_create("units");
  tcase_add_test(tc, test_units_rate);
  tcase_add_test(tc, test_units_bytes);
  tcase_add_test(tc, test_units_time);
  tcase_add_test(tc, test_tx_time);
  suite_add_tcase(s, tc);
  tc = tcase_create("registry");
  tcase_add_test(tc, test_config_set_and_precedence);
  tcase_add_test(tc, test_config_errors);
  tcase_add_test(tc, test_registry_lists_types);
  tcase_add_test(tc, test_error_helper);
  suite_add_tcase(s, tc);
  tc = tcase_create("scheduler");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_scheduler_distributions, DIST_UNIFORM, DIST_ARMED + 1);
  tcase_add_test(tc, test_scheduler_lookup);
  tcase_add_test(tc, test_calendar_follows_ports);
  suite_add_tcase(s, tc);
  tc = tcase_create("simulator");
  tcase_add_test(tc, test_sim_order_cancel_stop);
  tcase_add_test(tc, test_sim_horizon);
  tcase_add_test(tc, test_sim_pool_reuse);
  tcase_add_test(tc, test_rng_streams);
  suite_add_tcase(s, tc);
  tc = tcase_create("bulk");
  tcase_add_test(tc, test_bulk_blocks);
  tcase_add_test(tc, test_bulk_table);
  tcase_add_test(tc, test_bulk_huge);
  suite_add_tcase(s, tc);
  return s;
}
