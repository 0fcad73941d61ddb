/* 4-ary min-heap scheduler. Entries keep (time, seq) inline next to the event
 * pointer so sift operations compare without touching the events; each event records
 * its slot, so removal by handle is O(log n). Memory: 24 bytes per pending event. */
#include "scheduler.h"

#include <stdlib.h>

typedef struct {
  WhTime time;
  uint64_t seq;
  WhEvent *ev;
} HeapEntry;

typedef struct {
  WhScheduler parent;
  HeapEntry *a;
  size_t n, cap;
} HeapScheduler;

static inline int entry_before(const HeapEntry *x, const HeapEntry *y)
{
  return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

static inline void place(HeapScheduler *h, size_t i, HeapEntry e)
{
  h->a[i] = e;
  e.ev->pos = (uint32_t)i;
}

static void sift_up(HeapScheduler *h, size_t i, HeapEntry e)
{
  while (i > 0) {
    size_t parent = (i - 1) >> 2;
    if (!entry_before(&e, &h->a[parent]))
      break;
    place(h, i, h->a[parent]);
    i = parent;
  }
  place(h, i, e);
}

static void sift_down(HeapScheduler *h, size_t i, HeapEntry e)
{
  size_t n = h->n;
  for (;;) {
    size_t c = (i << 2) + 1;
    if (c >= n)
      break;
    size_t best = c;
    size_t last = c + 4 < n ? c + 4 : n;
    for (size_t j = c + 1; j < last; j++) {
      if (entry_before(&h->a[j], &h->a[best]))
        best = j;
    }
    if (!entry_before(&h->a[best], &e))
      break;
    place(h, i, h->a[best]);
    i = best;
  }
  place(h, i, e);
}

static WhScheduler *heap_create(void)
{
  HeapScheduler *h = g_new0(HeapScheduler, 1);
  h->parent.klass = &wh_heap_scheduler_class;
  h->cap = 1024;
  h->a = g_new(HeapEntry, h->cap);
  return &h->parent;
}

static void heap_destroy(WhScheduler *self)
{
  HeapScheduler *h = (HeapScheduler *)self;
  g_free(h->a);
  g_free(h);
}

static void heap_insert(WhScheduler *self, WhEvent *ev)
{
  HeapScheduler *h = (HeapScheduler *)self;
  if (h->n == h->cap) {
    h->cap *= 2;
    h->a = g_renew(HeapEntry, h->a, h->cap);
  }
  HeapEntry e = {ev->time, ev->seq, ev};
  h->n++;
  sift_up(h, h->n - 1, e);
}

static WhEvent *heap_peek(WhScheduler *self)
{
  HeapScheduler *h = (HeapScheduler *)self;
  return h->n ? h->a[0].ev : NULL;
}

static void remove_at(HeapScheduler *h, size_t i)
{
  HeapEntry last = h->a[--h->n];
  if (i == h->n)
    return;
  if (i > 0 && entry_before(&last, &h->a[(i - 1) >> 2]))
    sift_up(h, i, last);
  else
    sift_down(h, i, last);
}

static WhEvent *heap_pop(WhScheduler *self)
{
  HeapScheduler *h = (HeapScheduler *)self;
  if (h->n == 0)
    return NULL;
  WhEvent *ev = h->a[0].ev;
  remove_at(h, 0);
  return ev;
}

static void heap_remove(WhScheduler *self, WhEvent *ev)
{
  HeapScheduler *h = (HeapScheduler *)self;
  g_return_if_fail(ev->pos < h->n && h->a[ev->pos].ev == ev);
  remove_at(h, ev->pos);
}

static size_t heap_size(const WhScheduler *self)
{
  return ((const HeapScheduler *)self)->n;
}

const WhSchedulerClass wh_heap_scheduler_class = {
    .name = "heap",
    .type_name = "wh::HeapScheduler",
    .help = "4-ary min-heap: O(log n) insert, pop and removal by handle",
    .create = heap_create,
    .destroy = heap_destroy,
    .insert = heap_insert,
    .peek = heap_peek,
    .pop = heap_pop,
    .remove = heap_remove,
    .size = heap_size,
};
