/* The event: a handler, its context and argument, a time and a sequence number that
 * together give a total order (time, then seq: FIFO among equal times), and an owner
 * (a directed port or a flow) so an accelerator can map every pending event to a
 * network partition. Events live in the simulator's pool (no malloc per event); the
 * scheduler-private fields let a scheduler remove an event by handle in O(log n). */
#ifndef WH_EVENT_H
#define WH_EVENT_H

#include <stdint.h>
#include "wh-time.h"

typedef struct WhSim WhSim;
typedef struct WhEvent WhEvent;

typedef void (*WhEventFn)(WhSim *sim, void *ctx, uint64_t arg);

/* Owner tags: a directed port id, or a flow id with WH_OWNER_FLOW set. */
#define WH_OWNER_FLOW 0x80000000u
#define WH_OWNER_NONE 0xffffffffu

struct WhEvent {
  WhTime time;
  uint64_t seq;
  WhEventFn fn;
  void *ctx;
  uint64_t arg;
  uint32_t owner;
  uint32_t pos;  /* scheduler-private: heap slot or calendar bucket */
  WhEvent *next; /* scheduler-private list link; pool free list */
  WhEvent *prev; /* scheduler-private list link */
};

/* Events run per owner (an accelerator's estimate of what a stretch of a partition's
 * time costs): per directed port and per flow id; flows at or beyond flow_cap count in
 * flow_unattributed, events owned by no port or flow (compute) in `other`. The owner
 * grows the arrays; the simulator only adds (wh_sim_count_events). */
typedef struct {
  uint64_t *port;
  uint32_t n_ports;
  uint64_t *flow;
  uint32_t flow_cap;
  uint64_t flow_unattributed;
  uint64_t other;
  uint64_t total;
} WhEventCounts;

static inline void wh_event_counts_add(WhEventCounts *c, uint32_t owner)
{
  c->total++;
  if (owner < c->n_ports)
    c->port[owner]++;
  else if (owner == WH_OWNER_NONE || !(owner & WH_OWNER_FLOW))
    c->other++;
  else if ((owner & ~WH_OWNER_FLOW) < c->flow_cap)
    c->flow[owner & ~WH_OWNER_FLOW]++;
  else
    c->flow_unattributed++;
}

/* Strict (time, seq) order. */
static inline int wh_event_before(const WhEvent *a, const WhEvent *b)
{
  return a->time < b->time || (a->time == b->time && a->seq < b->seq);
}

/* (time, seq) order of two WhEvent pointers, for qsort and g_ptr_array_sort. */
static inline int wh_event_ptr_order(const void *a, const void *b)
{
  const WhEvent *x = *(WhEvent *const *)a, *y = *(WhEvent *const *)b;
  return wh_event_before(x, y) ? -1 : wh_event_before(y, x);
}

#endif
