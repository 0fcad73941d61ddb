/* Wormhole's one park/resume mechanism, which the policies (fast-forward.c: a skip at
 * measured rates, a replay of a stored outcome) use.
 *
 * Park (t0). The partition's ports freeze (no dequeue), its ports and flows are marked
 * parked in the scheduler and their pending events move there (at most two per port
 * and four per flow: O(events x log n)), its flows are held out of sampling, and one
 * wake event is scheduled at the target the policy chose.
 *
 * Resume (t1: the wake, or earlier when something reaches the partition). Each flow
 * advances by the payload bytes its policy gives, rounded down to whole MTUs and never
 * into the bytes the policy keeps unsent (sequence numbers at both ends, its packets in
 * the partition's queues and links, its CC's byte fields); ports, flows and the parked
 * events move t1 - t0 later (a periodic park: the whole periods that reach t1); the
 * observers' baselines (the delivered-bytes rings, the ACK marks) move with them, so
 * the park is invisible to sampling; the ports thaw; and the policy ends what ends with
 * the park (a replay's snapshots and completion, a skip's tail completion). The global
 * clock never moves backwards and the rest of the network never waits.
 *
 * Interrupts. Anything that schedules an event for a parked port or flow moves the wake
 * to now: the park ends early (a skip-back) and counts only the time up to the
 * interrupt. Cost: O(ports + flows + parked events) per park and resume; nothing per
 * event while nothing is parked. */
#include <string.h>
#include "wormhole-private.h"

#define NONE WH_PARTITION_NONE

static void wake(WhSim *sim, void *ctx, uint64_t slot);

/* Something reached parked slot `slot`: resume it now. */
static void interrupt(void *data, uint32_t slot)
{
  WhWormhole *wh = data;
  WhSkip *sk = wh_skip_at(wh, slot);
  WhTime now = wh->sim->now;
  if (sk->wake->time <= now)
    return;
  wh->ss.interrupts++;
  wh_sim_cancel(wh->sim, sk->wake);
  sk->wake = wh_sim_schedule_at(wh->sim, now, wake, wh, slot, WH_OWNER_NONE);
}

void wh_park_interrupt_slot(WhWormhole *wh, uint32_t slot)
{
  interrupt(wh, slot);
}

void wh_park_interrupt_path(WhWormhole *wh, const uint32_t *ports, uint32_t n)
{
  for (uint32_t i = 0; i < n; i++) {
    uint32_t slot = wh_port_park_slot(wh, ports[i]);
    if (slot != NONE)
      interrupt(wh, slot);
  }
}

void wh_park_init(WhWormhole *wh)
{
  wh->skips = g_array_new(FALSE, TRUE, sizeof(WhSkip));
  wh->stamp = g_new0(uint32_t, wh->net->n_ports);
  wh_wormhole_park_setup(wh->sim->sched, wh->net->n_ports, interrupt, wh);
}

void wh_park_free(WhWormhole *wh)
{
  if (wh->skips == NULL)
    return;
  for (guint i = 0; i < wh->skips->len; i++) {
    WhSkip *sk = wh_skip_at(wh, i);
    if (sk->ports)
      g_array_unref(sk->ports);
    if (sk->flows)
      g_array_unref(sk->flows);
    if (sk->drain_events) {
      g_array_unref(sk->drain_events);
      g_array_unref(sk->drain_done);
    }
  }
  g_array_unref(wh->skips);
  g_free(wh->stamp);
  g_free(wh->drain_refs);
}

static void park_event(WhWormhole *wh, WhEvent *ev, uint32_t slot)
{
  if (ev)
    wh_wormhole_park_event(wh->sim->sched, ev, slot);
}

uint32_t wh_park(WhWormhole *wh, const GArray *flows, const GArray *ports, WhTime len,
                 const WhParkPolicy *policy)
{
  WhScheduler *sched = wh->sim->sched;
  WhTime now = wh->sim->now;
  uint32_t slot = wh_wormhole_park_open(sched);
  if (slot >= wh->skips->len)
    g_array_set_size(wh->skips, slot + 1);
  WhSkip *sk = wh_skip_at(wh, slot);
  if (sk->ports == NULL) {
    sk->ports = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    sk->flows = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  }
  g_array_set_size(sk->ports, 0);
  g_array_set_size(sk->flows, 0);
  g_array_append_vals(sk->ports, ports->data, ports->len);
  g_array_append_vals(sk->flows, flows->data, flows->len);
  sk->used = TRUE;
  sk->t0 = now;
  sk->target = now + len;
  for (guint i = 0; i < ports->len; i++) {
    uint32_t id = g_array_index(ports, uint32_t, i);
    WhPort *port = &wh->net->port[id];
    wh_wormhole_park_owner(sched, id, slot);
    wh_net_freeze_port(wh->net, id, TRUE);
    park_event(wh, port->tx_event, slot);
    park_event(wh, port->fly_event, slot);
  }
  for (guint i = 0; i < flows->len; i++) {
    uint32_t id = g_array_index(flows, uint32_t, i);
    WhFlow *f = wh_transport_flow(wh->tp, id);
    wh_wormhole_park_owner(sched, id | WH_OWNER_FLOW, slot);
    for (unsigned k = 0; k < WH_FLOW_TIMERS; k++)
      park_event(wh, f->timers[k], slot);
    wh_detector_flow_hold(wh->det, id, TRUE);
  }
  sk->policy = policy;
  sk->period = 0;
  sk->done = NONE;
  sk->memo_dur = 0;
  sk->memo_done = NONE;
  sk->drain_t0 = 0;
  sk->wake = wh_sim_schedule_at(wh->sim, sk->target, wake, wh, slot, WH_OWNER_NONE);
  return slot;
}

static void renumber(WhPacket *pkt, void *data)
{
  WhWormhole *wh = data;
  if (pkt->type == WH_PKT_PFC || pkt->flow == NULL)
    return;
  pkt->seq += wh_wormhole_glue(wh, pkt->flow->id)->adv_now;
}

/* Completes flow `id` without the packets it still had to send or deliver: delivered
 * without packets is what the receiver lacked (those in flight are reclaimed); never
 * sent at all, what the sender had not sent. */
gboolean wh_park_complete(WhWormhole *wh, uint32_t id)
{
  WhFlow *f = wh_transport_flow(wh->tp, id);
  uint64_t left = f->size - f->rcv_nxt, unsent = f->size - f->snd_max_sent;
  g_autoptr(GError) err = NULL;
  if (!wh_transport_complete(wh->tp, f, &err))
    return FALSE;
  wh_wormhole_glue(wh, f->id)->advanced += unsent;
  wh->ss.advanced_bytes += left;
  return TRUE;
}

/* A flow moved `b` bytes and `shift` later: its observers' baselines move with it, so
 * the park is invisible to sampling; its rate marks too, from where its last estimate
 * began (the next estimate may extend that window but not reach before it). */
static void move_observers(WhWormhole *wh, WhGlueFlow *g, uint64_t b, WhTime shift)
{
  g->last_rcv += b;
  for (uint32_t k = 0; g->ring && k < wh->p.avg_periods + 1; k++)
    g->ring[k] += b;
  WhFfRing *r = g->ff;
  r->floor = r->est_from + shift;
  r->ack_t += shift;
  r->ack_una += b;
  for (uint32_t k = 0; k < MIN(r->n_fine, WH_FF_FINE); k++) {
    r->fine[k].t += shift;
    r->fine[k].una += b;
  }
  for (uint32_t k = 0; k < MIN(r->n_coarse, WH_FF_COARSE); k++) {
    r->coarse[k].t += shift;
    r->coarse[k].una += b;
  }
  for (uint32_t k = 0; k < MIN(r->n_flu, WH_FF_COARSE); k++) {
    r->flu[k].t += shift;
    r->flu[k].una += b;
  }
}

/* Ends the park of `slot` now: every flow advances (its policy says by how much), its
 * packets and events move by the time parked, the observers' baselines move with it,
 * the ports thaw, and the policy ends what ends with the park. */
static void resume(WhWormhole *wh, uint32_t slot)
{
  WhSkip *sk = wh_skip_at(wh, slot);
  WhScheduler *sched = wh->sim->sched;
  WhTransport *tp = wh->tp;
  WhTime now = wh->sim->now, dt = now - sk->t0;
  uint64_t mtu = tp->p.mtu;
  /* a periodic partition moves by whole periods, its phase kept: after an interrupt
   * its events land up to a period after now */
  WhTime shift = sk->period ? (dt + sk->period - 1) / sk->period * sk->period : dt;
  /* what each flow advances: what its policy gives, in whole MTUs, never into the bytes
   * the policy keeps unsent */
  for (guint i = 0; i < sk->flows->len; i++) {
    uint32_t id = g_array_index(sk->flows, uint32_t, i);
    WhFlow *f = wh_transport_flow(tp, id);
    WhGlueFlow *g = wh_wormhole_glue(wh, id);
    uint64_t b = sk->policy->advance(wh, sk, id, dt, shift);
    uint64_t room = f->size - f->snd_max_sent, keep = sk->policy->keep(wh, sk, f);
    room = room > keep ? (room - keep) / mtu * mtu : 0;
    g->adv_now = MIN(b, room);
    wh_wormhole_park_owner(sched, id | WH_OWNER_FLOW, NONE);
  }
  for (guint i = 0; i < sk->ports->len; i++)
    wh_wormhole_park_owner(sched, g_array_index(sk->ports, uint32_t, i), NONE);
  for (guint i = 0; i < sk->ports->len; i++) {
    uint32_t id = g_array_index(sk->ports, uint32_t, i);
    wh_net_foreach_packet_at(wh->net, id, renumber, wh);
    wh_net_shift_port_from(wh->net, id, sk->t0, shift);
  }
  wh_wormhole_park_close(sched, slot, shift, NULL);
  uint64_t events_est = 0;
  for (guint i = 0; i < sk->flows->len; i++) {
    uint32_t id = g_array_index(sk->flows, uint32_t, i);
    WhFlow *f = wh_transport_flow(tp, id);
    WhGlueFlow *g = wh_wormhole_glue(wh, id);
    uint64_t b = g->adv_now;
    g->adv_now = 0;
    wh_transport_shift_flow(tp, f, shift);
    g_autoptr(GError) err = NULL;
    if (!wh_transport_advance_ends(tp, f, b, &err))
      g_error("wormhole: %s", err->message); /* the bound above makes this unreachable */
    g->advanced += b;
    g->skipped += shift;
    wh->ss.advanced_bytes += b;
    events_est += b / mtu * 2 * ((uint64_t)f->fwd_hops + f->rev_hops / MAX(tp->p.ack_every, 1));
    move_observers(wh, g, b, shift);
    wh_detector_flow_hold(wh->det, id, FALSE);
  }
  for (guint i = 0; i < sk->ports->len; i++)
    wh_net_freeze_port(wh->net, g_array_index(sk->ports, uint32_t, i), FALSE);
  sk->policy->end(wh, sk, dt);
  wh->ss.skip_backs += now < sk->target;
  wh->ss.skipped_time += shift;
  wh->ss.skipped_flow_time += shift * sk->flows->len;
  wh->ss.events_skipped_est += events_est;
  sk->used = FALSE;
  sk->wake = NULL;
  wh_wormhole_arm_ticks(wh);
}

static void wake(WhSim *sim, void *ctx, uint64_t slot)
{
  (void)sim;
  resume(ctx, (uint32_t)slot);
}

/* Resumes every parked partition now (end of run). */
void wh_park_finish(WhWormhole *wh)
{
  if (wh->skips == NULL)
    return;
  for (guint i = 0; i < wh->skips->len; i++) {
    WhSkip *sk = wh_skip_at(wh, i);
    if (!sk->used)
      continue;
    wh_sim_cancel(wh->sim, sk->wake);
    resume(wh, i);
  }
}

static gboolean check_event(const WhWormhole *wh, const WhEvent *ev, uint32_t slot,
                            const char *what, uint32_t id, GError **error)
{
  if (ev == NULL)
    return TRUE;
  if (slot == NONE ? wh_wormhole_park_holds_any(wh->sim->sched, ev)
                   : !wh_wormhole_park_holds(wh->sim->sched, slot, ev)) {
    g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                "wormhole: the pending event of %s %u is %s", what, id,
                slot == NONE ? "parked though its owner is not" : "not in its park slot");
    return FALSE;
  }
  return TRUE;
}

gboolean wh_wormhole_check_parking(const WhWormhole *wh, GError **error)
{
  if (wh->skips == NULL)
    return TRUE;
  uint64_t listed = 0;
  for (guint i = 0; i < wh->skips->len; i++) {
    const WhSkip *sk = &g_array_index(wh->skips, WhSkip, i);
    if (!sk->used)
      continue;
    listed += wh_wormhole_park_count(wh->sim->sched, i, FALSE) +
              wh_wormhole_park_count(wh->sim->sched, i, TRUE);
    if (sk->wake == NULL || sk->wake->time < wh->sim->now) {
      g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                  "wormhole: parked slot %u has no wake event ahead", i);
      return FALSE;
    }
    for (guint k = 0; k < sk->ports->len; k++) {
      uint32_t id = g_array_index(sk->ports, uint32_t, k);
      const WhPort *p = &wh->net->port[id];
      if (wh_port_park_slot(wh, id) != i || !p->frozen) {
        g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                    "wormhole: port %u of parked slot %u is not parked and frozen", id, i);
        return FALSE;
      }
      if (!check_event(wh, p->tx_event, i, "port", id, error) ||
          !check_event(wh, p->fly_event, i, "port", id, error))
        return FALSE;
    }
    for (guint k = 0; k < sk->flows->len; k++) {
      uint32_t id = g_array_index(sk->flows, uint32_t, k);
      const WhFlow *f = wh_transport_flow(wh->tp, id);
      if (wh_flow_park_slot(wh, id) != i) {
        g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                    "wormhole: flow %u of parked slot %u is not parked", id, i);
        return FALSE;
      }
      for (unsigned t = 0; t < WH_FLOW_TIMERS; t++)
        if (!check_event(wh, f->timers[t], i, "flow", id, error))
          return FALSE;
    }
  }
  if (listed != wh_wormhole_parked_events(wh->sim->sched)) {
    g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                "wormhole: %" G_GUINT64_FORMAT " events listed in slots, %" G_GUINT64_FORMAT
                " counted parked",
                listed, wh_wormhole_parked_events(wh->sim->sched));
    return FALSE;
  }
  return TRUE;
}
