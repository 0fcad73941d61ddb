/* The Wormhole scheduler: a stock scheduler (heap, calendar or a plugin's) wrapped so
 * that a fast-forwarded partition's events can be held out of it (skip and memo modes;
 * observe mode runs on the stock scheduler itself, the simulator counting events by
 * owner). The order of events is the inner scheduler's, untouched.
 *
 * Parking: the events of a fast-forwarded partition are taken out of the
 * inner scheduler into that partition's park slot (a list through the events'
 * scheduler-private links), and its owners are marked parked. While they are, an
 * event inserted for one of them joins the slot's list of late events (its time is
 * real time, never shifted) and the slot's owner is told (an interrupt: something
 * reached the partition); a parked event cancelled by the model leaves its list.
 * Nothing parked is ever handed out; unparking shifts the parked events (not the late
 * ones) and puts all of them back. Cost with nothing parked: one test per insert and
 * remove. */
#include <string.h>
#include "wormhole-private.h"

#define NO_SLOT WH_PARTITION_NONE

typedef struct {
  WhEvent *head[2]; /* parked, late */
  uint32_t n;
  gboolean used;
} ParkSlot;

typedef struct {
  WhScheduler base;
  WhScheduler *inner;
  const WhSchedulerClass *inner_class;
  /* parking */
  uint32_t *port_slot; /* per port: park slot or NO_SLOT */
  uint32_t n_ports;
  uint32_t *flow_slot; /* per flow id (below flow_slot_cap) */
  uint32_t flow_slot_cap;
  GArray *slots; /* ParkSlot */
  uint32_t slots_used;
  uint64_t parked; /* events in every slot */
  WhParkInterruptFn interrupt;
  void *interrupt_data;
  GPtrArray *back; /* scratch: the events a slot puts back */
} WormholeScheduler;

static inline uint32_t owner_slot(const WormholeScheduler *s, uint32_t owner)
{
  if (owner == WH_OWNER_NONE)
    return NO_SLOT;
  if (owner & WH_OWNER_FLOW) {
    uint32_t id = owner & ~WH_OWNER_FLOW;
    return id < s->flow_slot_cap ? s->flow_slot[id] : NO_SLOT;
  }
  return owner < s->n_ports ? s->port_slot[owner] : NO_SLOT;
}

static void list_push(WormholeScheduler *s, uint32_t slot, unsigned which, WhEvent *ev)
{
  ParkSlot *ps = &g_array_index(s->slots, ParkSlot, slot);
  ev->pos = which;
  ev->prev = NULL;
  ev->next = ps->head[which];
  if (ev->next)
    ev->next->prev = ev;
  ps->head[which] = ev;
  ps->n++;
  s->parked++;
}

static void list_unlink(WormholeScheduler *s, uint32_t slot, WhEvent *ev)
{
  ParkSlot *ps = &g_array_index(s->slots, ParkSlot, slot);
  if (ev->prev)
    ev->prev->next = ev->next;
  else
    ps->head[ev->pos] = ev->next;
  if (ev->next)
    ev->next->prev = ev->prev;
  ev->next = ev->prev = NULL;
  ps->n--;
  s->parked--;
}

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
  return ws_wrap(wh_scheduler_class_lookup(WH_SCHEDULER_DEFAULT));
}

static void ws_destroy(WhScheduler *self)
{
  WormholeScheduler *s = (WormholeScheduler *)self;
  s->inner->klass->destroy(s->inner);
  g_free(s->port_slot);
  g_free(s->flow_slot);
  if (s->slots)
    g_array_unref(s->slots);
  if (s->back)
    g_ptr_array_unref(s->back);
  g_free(s);
}

static void ws_insert(WhScheduler *self, WhEvent *ev)
{
  WormholeScheduler *s = (WormholeScheduler *)self;
  if (G_UNLIKELY(s->slots_used)) {
    uint32_t slot = owner_slot(s, ev->owner);
    if (slot != NO_SLOT) {
      list_push(s, slot, 1, ev);
      s->interrupt(s->interrupt_data, slot);
      return;
    }
  }
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
  /* the inner queue's prefetch hint (an event it holds, so none parked) */
  self->hint = s->inner->hint;
  return ev;
}

static void ws_remove(WhScheduler *self, WhEvent *ev)
{
  WormholeScheduler *s = (WormholeScheduler *)self;
  if (G_UNLIKELY(s->slots_used)) {
    uint32_t slot = owner_slot(s, ev->owner);
    if (slot != NO_SLOT) {
      list_unlink(s, slot, ev);
      return;
    }
  }
  s->inner->klass->remove(s->inner, ev);
}

static size_t ws_size(const WhScheduler *self)
{
  const WormholeScheduler *s = (const WormholeScheduler *)self;
  return s->inner->klass->size(s->inner) + s->parked;
}

const WhSchedulerClass wh_wormhole_scheduler_class = {
    .name = "wormhole",
    .type_name = "wh::WormholeScheduler",
    .help = "Wormhole: wraps a stock scheduler (calendar unless --scheduler names another with "
            "wh::Wormhole::Mode set) so that fast-forwarded partitions' events can be held out "
            "of it",
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

/* ---- parking ---- */

static WormholeScheduler *ws_of(WhScheduler *self)
{
  g_return_val_if_fail(self->klass == &wh_wormhole_scheduler_class, NULL);
  return (WormholeScheduler *)self;
}

void wh_wormhole_park_setup(WhScheduler *self, uint32_t n_ports, WhParkInterruptFn interrupt,
                            void *data)
{
  WormholeScheduler *s = ws_of(self);
  g_return_if_fail(s->slots == NULL);
  s->n_ports = n_ports;
  s->port_slot = g_new(uint32_t, n_ports);
  memset(s->port_slot, 0xff, n_ports * sizeof(uint32_t));
  s->slots = g_array_new(FALSE, TRUE, sizeof(ParkSlot));
  s->interrupt = interrupt;
  s->interrupt_data = data;
}

uint32_t wh_wormhole_park_open(WhScheduler *self)
{
  WormholeScheduler *s = ws_of(self);
  uint32_t slot = 0;
  while (slot < s->slots->len && g_array_index(s->slots, ParkSlot, slot).used)
    slot++;
  if (slot == s->slots->len)
    g_array_set_size(s->slots, slot + 1);
  ParkSlot *ps = &g_array_index(s->slots, ParkSlot, slot);
  memset(ps, 0, sizeof *ps);
  ps->used = TRUE;
  s->slots_used++;
  return slot;
}

void wh_wormhole_park_owner(WhScheduler *self, uint32_t owner, uint32_t slot)
{
  WormholeScheduler *s = ws_of(self);
  if (owner & WH_OWNER_FLOW) {
    uint32_t id = owner & ~WH_OWNER_FLOW;
    if (id >= s->flow_slot_cap) {
      uint32_t cap = MAX(1024u, s->flow_slot_cap);
      while (cap <= id)
        cap *= 2;
      s->flow_slot = g_renew(uint32_t, s->flow_slot, cap);
      memset(s->flow_slot + s->flow_slot_cap, 0xff, (cap - s->flow_slot_cap) * sizeof(uint32_t));
      s->flow_slot_cap = cap;
    }
    s->flow_slot[id] = slot;
  } else {
    g_return_if_fail(owner < s->n_ports);
    s->port_slot[owner] = slot;
  }
}

uint32_t wh_wormhole_owner_slot(const WhScheduler *self, uint32_t owner)
{
  return owner_slot((const WormholeScheduler *)self, owner);
}

void wh_wormhole_park_event(WhScheduler *self, WhEvent *ev, uint32_t slot)
{
  WormholeScheduler *s = ws_of(self);
  s->inner->klass->remove(s->inner, ev);
  list_push(s, slot, 0, ev);
}

void wh_wormhole_unpark_event(WhScheduler *self, WhEvent *ev, WhTime shift)
{
  WormholeScheduler *s = ws_of(self);
  uint32_t slot = owner_slot(s, ev->owner);
  g_return_if_fail(slot != NO_SLOT);
  gboolean late = ev->pos == 1;
  list_unlink(s, slot, ev);
  if (!late)
    ev->time += shift;
  s->inner->klass->insert(s->inner, ev);
}

uint32_t wh_wormhole_park_close(WhScheduler *self, uint32_t slot, WhTime shift, uint32_t *late)
{
  WormholeScheduler *s = ws_of(self);
  ParkSlot *ps = &g_array_index(s->slots, ParkSlot, slot);
  uint32_t n_late = 0;
  /* put back in (time, seq) order: the events of one bucket of a calendar queue then
   * go in one after the other where the one before went (its finger), not each after a
   * scan of the bucket */
  if (s->back == NULL)
    s->back = g_ptr_array_new();
  g_ptr_array_set_size(s->back, 0);
  for (unsigned which = 0; which < 2; which++) {
    for (WhEvent *ev = ps->head[which], *next; ev; ev = next) {
      next = ev->next;
      ev->next = ev->prev = NULL;
      if (which == 0)
        ev->time += shift;
      else
        n_late++;
      g_ptr_array_add(s->back, ev);
    }
    ps->head[which] = NULL;
  }
  g_ptr_array_sort(s->back, wh_event_ptr_order);
  for (guint i = 0; i < s->back->len; i++)
    s->inner->klass->insert(s->inner, s->back->pdata[i]);
  uint32_t n = s->back->len;
  s->parked -= ps->n;
  ps->n = 0;
  ps->used = FALSE;
  s->slots_used--;
  if (late)
    *late = n_late;
  return n;
}

uint32_t wh_wormhole_park_count(const WhScheduler *self, uint32_t slot, gboolean late)
{
  const WormholeScheduler *s = (const WormholeScheduler *)self;
  const ParkSlot *ps = &g_array_index(s->slots, ParkSlot, slot);
  uint32_t n = 0;
  for (const WhEvent *ev = ps->head[late ? 1 : 0]; ev; ev = ev->next)
    n++;
  return n;
}

gboolean wh_wormhole_park_holds(const WhScheduler *self, uint32_t slot, const WhEvent *ev)
{
  const WormholeScheduler *s = (const WormholeScheduler *)self;
  const ParkSlot *ps = &g_array_index(s->slots, ParkSlot, slot);
  for (unsigned which = 0; which < 2; which++)
    for (const WhEvent *e = ps->head[which]; e; e = e->next)
      if (e == ev)
        return TRUE;
  return FALSE;
}

gboolean wh_wormhole_park_holds_any(const WhScheduler *self, const WhEvent *ev)
{
  const WormholeScheduler *s = (const WormholeScheduler *)self;
  for (guint i = 0; s->slots && i < s->slots->len; i++)
    if (g_array_index(s->slots, ParkSlot, i).used && wh_wormhole_park_holds(self, i, ev))
      return TRUE;
  return FALSE;
}

uint64_t wh_wormhole_parked_events(const WhScheduler *self)
{
  return ((const WormholeScheduler *)self)->parked;
}
