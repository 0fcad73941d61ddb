/* The Wormhole scheduler: a stock scheduler (heap, calendar or a plugin's) wrapped so
 * that every event it hands out is counted against its owner, a directed port or a
 * flow; the detector sums these counts over a partition's ports and flows to measure
 * the events a steady interval holds. The order of events is the inner scheduler's,
 * untouched. Cost: one counter increment per event. */
#include <string.h>
#include "wormhole-private.h"

typedef struct {
  WhScheduler base;
  WhScheduler *inner;
  const WhSchedulerClass *inner_class;
  WhEventCounts counts;
} WormholeScheduler;

static WhScheduler *ws_wrap(const WhSchedulerClass *inner)
{
  WormholeScheduler *s = g_new0(WormholeScheduler, 1);
  s->base.klass = &wh_wormhole_scheduler_class;
  s->inner = inner->create();
  s->inner_class = inner;
  return &s->base;
}

static WhScheduler *ws_create(void)
{
  return ws_wrap(&wh_heap_scheduler_class);
}

static void ws_destroy(WhScheduler *self)
{
  WormholeScheduler *s = (WormholeScheduler *)self;
  s->inner->klass->destroy(s->inner);
  g_free(s->counts.port);
  g_free(s->counts.flow);
  g_free(s);
}

static void ws_insert(WhScheduler *self, WhEvent *ev)
{
  WormholeScheduler *s = (WormholeScheduler *)self;
  s->inner->klass->insert(s->inner, ev);
}

static WhEvent *ws_peek(WhScheduler *self)
{
  WormholeScheduler *s = (WormholeScheduler *)self;
  return s->inner->klass->peek(s->inner);
}

static WhEvent *ws_pop(WhScheduler *self)
{
  WormholeScheduler *s = (WormholeScheduler *)self;
  WhEvent *ev = s->inner->klass->pop(s->inner);
  if (ev == NULL)
    return NULL;
  WhEventCounts *c = &s->counts;
  uint32_t o = ev->owner;
  c->total++;
  if (o < c->n_ports)
    c->port[o]++;
  else if (o == WH_OWNER_NONE || !(o & WH_OWNER_FLOW))
    c->other++;
  else if ((o & ~WH_OWNER_FLOW) < c->flow_cap)
    c->flow[o & ~WH_OWNER_FLOW]++;
  else
    c->flow_unattributed++;
  return ev;
}

static void ws_remove(WhScheduler *self, WhEvent *ev)
{
  WormholeScheduler *s = (WormholeScheduler *)self;
  s->inner->klass->remove(s->inner, ev);
}

static size_t ws_size(const WhScheduler *self)
{
  const WormholeScheduler *s = (const WormholeScheduler *)self;
  return s->inner->klass->size(s->inner);
}

const WhSchedulerClass wh_wormhole_scheduler_class = {
    .name = "wormhole",
    .type_name = "wh::WormholeScheduler",
    .help = "Wormhole: wraps a stock scheduler (heap unless --scheduler names another with "
            "wh::Wormhole::Mode set) and attributes events to network partitions",
    .create = ws_create,
    .destroy = ws_destroy,
    .insert = ws_insert,
    .peek = ws_peek,
    .pop = ws_pop,
    .remove = ws_remove,
    .size = ws_size,
};

WhScheduler *wh_wormhole_scheduler_new(const WhSchedulerClass *inner)
{
  g_return_val_if_fail(inner != NULL && inner != &wh_wormhole_scheduler_class, NULL);
  return ws_wrap(inner);
}

const WhSchedulerClass *wh_wormhole_scheduler_inner(const WhScheduler *s)
{
  if (s == NULL || s->klass != &wh_wormhole_scheduler_class)
    return NULL;
  return ((const WormholeScheduler *)s)->inner_class;
}

WhEventCounts *wh_wormhole_scheduler_counts(WhScheduler *self, uint32_t n_ports, uint32_t flows)
{
  g_return_val_if_fail(self->klass == &wh_wormhole_scheduler_class, NULL);
  WormholeScheduler *s = (WormholeScheduler *)self;
  WhEventCounts *c = &s->counts;
  if (c->n_ports != n_ports) {
    g_free(c->port);
    c->port = g_new0(uint64_t, n_ports);
    c->n_ports = n_ports;
  }
  if (flows > c->flow_cap) {
    uint32_t cap = MAX(1024u, c->flow_cap);
    while (cap < flows)
      cap *= 2;
    c->flow = g_renew(uint64_t, c->flow, cap);
    memset(c->flow + c->flow_cap, 0, (cap - c->flow_cap) * sizeof(uint64_t));
    c->flow_cap = cap;
  }
  return c;
}
