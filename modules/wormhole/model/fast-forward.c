/* Wormhole's fast-forward (skip mode): steady partitions are parked and skipped.
 *
 * Park (t0). After a sampling tick that found a partition steady, an event at the same
 * time tries to park it. Every flow must be eligible: sending new data (not in
 * go-back-N recovery), no NACK outstanding, no path change waiting, and a delivery
 * rate estimate R (payload bytes over time between two ACKs, the later one its latest:
 * exact for a periodic ACK clock, no packet quantization) over a window that lies
 * wholly after the partition's last change of membership (the detector's window for
 * the rate rule, since that change for the idle rule). The skip may last until the
 * first flow reaches its tail: every flow keeps unsent its bytes in flight plus
 * R x (smoothed RTT + TailMargin), so its last packets run packet by packet; a
 * partition is parked only if that is at least MinSkip. Parking freezes its ports
 * (no dequeue), marks its ports and flows parked in the scheduler and moves their
 * pending events there (at most two per port and four per flow: O(events x log n)),
 * holds its flows out of sampling, and schedules one wake event at the target.
 *
 * Resume (t1: the wake, or earlier when something reaches the partition). Each flow
 * advances by R x (t1 - t0) payload bytes rounded down to whole MTUs (sequence numbers
 * at both ends, its packets in the partition's queues and links, its CC's byte fields);
 * ports, flows and the parked events move t1 - t0 later; the ports thaw. The global
 * clock never moves backwards and the rest of the network never waits. A quiet
 * partition whose ACK clocks are exactly periodic with one common period is skipped by
 * whole periods instead (its wake on a period boundary; after an interrupt, the whole
 * periods that reach t1), each flow one MTU a period: it resumes in the exact state.
 *
 * Interrupts. Anything that schedules an event for a parked port or flow (a new flow
 * on a parked NIC, a PFC frame, a compute op's next flow), a flow activating or
 * starting to send over a parked port, moves the wake to now: the skip ends early
 * (a skip-back) and counts only the time up to the interrupt. */
#include <math.h>
#include <string.h>
#include "flow-state.h"
#include "wormhole-private.h"

#define NONE WH_PARTITION_NONE
/* how closely a quiet partition's rate over its window and over the window's second
 * half must agree */
#define QUIET_RATE_AGREEMENT 0.01

static inline WhSkip *skip_at(WhWormhole *wh, uint32_t slot)
{
  return &g_array_index(wh->skips, WhSkip, slot);
}

static inline uint32_t flow_slot(const WhWormhole *wh, uint32_t flow)
{
  return wh_wormhole_owner_slot(wh->sim->sched, flow | WH_OWNER_FLOW);
}

static inline uint32_t port_slot(const WhWormhole *wh, uint32_t port)
{
  return wh_wormhole_owner_slot(wh->sim->sched, port);
}

static void wake(WhSim *sim, void *ctx, uint64_t slot);

/* A converged replay that goes on as a skip at its flows' rhat: parked past the stored
 * phase's duration (a clipped replay is parked for less). */
static inline gboolean replay_skips(const WhSkip *sk)
{
  return sk->memo && sk->target - sk->t0 > sk->memo_dur;
}

/* Something reached parked slot `slot`: resume it now. */
static void interrupt(void *data, uint32_t slot)
{
  WhWormhole *wh = data;
  WhSkip *sk = skip_at(wh, slot);
  WhTime now = wh->sim->now;
  if (sk->wake->time <= now)
    return;
  wh->ss.interrupts++;
  wh_sim_cancel(wh->sim, sk->wake);
  sk->wake = wh_sim_schedule_at(wh->sim, now, wake, wh, slot, WH_OWNER_NONE);
}

void wh_ff_init(WhWormhole *wh)
{
  wh->skips = g_array_new(FALSE, TRUE, sizeof(WhSkip));
  wh->stamp = g_new0(uint32_t, wh->net->n_ports);
  wh_wormhole_park_setup(wh->sim->sched, wh->net->n_ports, interrupt, wh);
}

void wh_ff_free(WhWormhole *wh)
{
  if (wh->skips == NULL)
    return;
  for (guint i = 0; i < wh->skips->len; i++) {
    WhSkip *sk = skip_at(wh, i);
    if (sk->ports)
      g_array_unref(sk->ports);
    if (sk->flows)
      g_array_unref(sk->flows);
  }
  g_array_unref(wh->skips);
  g_free(wh->stamp);
}

static void interrupt_path(WhWormhole *wh, const uint32_t *ports, uint32_t n)
{
  for (uint32_t i = 0; i < n; i++) {
    uint32_t slot = port_slot(wh, ports[i]);
    if (slot != NONE)
      interrupt(wh, slot);
  }
}

void wh_ff_on_activate(WhWormhole *wh, WhFlow *f)
{
  interrupt_path(wh, f->fwd, f->fwd_hops);
  interrupt_path(wh, f->rev, f->rev_hops);
}

void wh_ff_on_start(WhWormhole *wh, WhFlow *f)
{
  WhGlueFlow *g = wh_wormhole_glue(wh, f->id);
  g->ff = g_new0(WhFfRing, 1);
  g->ff->ack_t = wh->sim->now;
  g->ff->ack_una = f->snd_una;
  interrupt_path(wh, f->fwd, f->fwd_hops);
  interrupt_path(wh, f->rev, f->rev_hops);
}

void wh_ff_on_ack(WhWormhole *wh, WhFlow *f, WhGlueFlow *g)
{
  if (f->snd_una != g->ff->ack_una) {
    g->ff->ack_t = wh->sim->now;
    g->ff->ack_una = f->snd_una;
  }
}

void wh_ff_on_acked(WhWormhole *wh, WhFlow *f, WhGlueFlow *g)
{
  (void)wh;
  (void)f;
  g_free(g->ff);
  g->ff = NULL;
}

/* Coarse marks span the rate rule's window. */
static uint32_t coarse_stride(const WhWormhole *wh)
{
  return MAX(1u, wh->p.det.window / WH_FF_COARSE);
}

void wh_ff_sample(WhWormhole *wh, WhGlueFlow *g)
{
  WhFfRing *r = g->ff;
  WhAckMark m = {r->ack_t, r->ack_una};
  r->fine[r->n_fine++ % WH_FF_FINE] = m;
  if (r->ticks++ % coarse_stride(wh) == 0)
    r->coarse[r->n_coarse++ % WH_FF_COARSE] = m;
}

/* The flow's delivery rate (payload bytes per ps) from the oldest mark at or after
 * `from` to its latest ACK; 0 when there is too little to measure. */
static double rate_since(const WhFfRing *r, WhTime from, uint64_t min_bytes)
{
  const WhAckMark *best = NULL;
  uint32_t n = MIN(r->n_coarse, WH_FF_COARSE);
  for (uint32_t k = 0; k < n && best == NULL; k++) {
    const WhAckMark *m = &r->coarse[(r->n_coarse - n + k) % WH_FF_COARSE];
    if (m->t >= from && m->t < r->ack_t)
      best = m;
  }
  n = MIN(r->n_fine, WH_FF_FINE);
  for (uint32_t k = 0; k < n; k++) {
    const WhAckMark *m = &r->fine[(r->n_fine - n + k) % WH_FF_FINE];
    if (m->t >= from && m->t < r->ack_t && (best == NULL || m->t < best->t))
      best = m;
  }
  if (best == NULL || r->ack_una - best->una < min_bytes)
    return 0;
  return (double)(r->ack_una - best->una) / (double)(r->ack_t - best->t);
}

/* The period of a flow whose ACK clock is exactly periodic from `from` on: every mark
 * since then lies a whole number of MTUs behind its latest ACK, that many periods
 * earlier (0: not periodic, or too little to tell). */
static WhTime ack_period(const WhFfRing *r, WhTime from, uint64_t mtu)
{
  WhTime q = 0;
  uint64_t span = 0;
  for (unsigned ring = 0; ring < 2; ring++) {
    const WhAckMark *marks = ring ? r->coarse : r->fine;
    uint32_t n = ring ? MIN(r->n_coarse, WH_FF_COARSE) : MIN(r->n_fine, WH_FF_FINE);
    for (uint32_t k = 0; k < n; k++) {
      const WhAckMark *m = &marks[k];
      if (m->t < from || m->t >= r->ack_t)
        continue;
      uint64_t du = r->ack_una - m->una;
      WhTime dt = r->ack_t - m->t;
      if (du == 0 || du % mtu != 0 || dt % (du / mtu) != 0)
        return 0;
      if (q == 0)
        q = dt / (du / mtu);
      else if (dt / (du / mtu) != q)
        return 0;
      span = MAX(span, du / mtu);
    }
  }
  return span >= 4 ? q : 0;
}

/* The partition's flows (ids) and ports (each once). */
static void collect(WhWormhole *wh, const WhPartition *p, GArray *flows, GArray *ports)
{
  const WhPartitions *pm = wh_detector_partitions(wh->det);
  if (++wh->stamp_gen == 0) {
    memset(wh->stamp, 0, wh->net->n_ports * sizeof(uint32_t));
    wh->stamp_gen = 1;
  }
  for (uint32_t f = wh_partitions_first_flow(p); f != NONE; f = wh_partitions_next_flow(pm, p, f)) {
    g_array_append_val(flows, f);
    uint32_t n;
    const uint32_t *fp = wh_partitions_flow_ports(pm, f, &n);
    for (uint32_t i = 0; i < n; i++) {
      if (wh->stamp[fp[i]] == wh->stamp_gen)
        continue;
      wh->stamp[fp[i]] = wh->stamp_gen;
      g_array_append_val(ports, fp[i]);
    }
  }
}

/* Whether a flow waits at one of the partition's NICs to send its first packet: it is
 * not in the partition yet, and parking the NIC would hold it back. */
static gboolean foreign_waiter(WhWormhole *wh, const WhPartition *p, const GArray *ports)
{
  const WhPartitions *pm = wh_detector_partitions(wh->det);
  for (guint i = 0; i < ports->len; i++) {
    const WhPort *port = &wh->net->port[g_array_index(ports, uint32_t, i)];
    const WhNode *node = &wh->net->node[port->node];
    if (node->is_switch)
      continue;
    const WhHostSched *h = &wh->tp->hosts[node->index];
    for (uint32_t k = 0; k < h->n; k++)
      if (wh_partitions_of_flow(pm, h->heap[k].flow->id) != p)
        return TRUE;
  }
  return FALSE;
}

/* Whether flow f may be parked: sending new data (no go-back-N recovery), no NACK
 * outstanding, no path change waiting, not parked already. */
static gboolean parkable(WhWormhole *wh, const WhFlow *f, const WhGlueFlow *g)
{
  WhTime srtt = (WhTime)g->srtt_ps, now = wh->sim->now;
  return f->state == WH_FLOW_ACTIVE && g->ff != NULL && f->snd_nxt >= f->snd_max_sent &&
         f->next_path == NULL &&
         !(f->nack_sent && now - f->nack_time < 4 * srtt + wh->tp->p.nack_interval) &&
         flow_slot(wh, f->id) == NONE;
}

/* How long flow f may be skipped at r payload bytes per ps once it has sent `ahead`
 * more bytes: until it reaches its tail (its bytes in flight, r x TailMargin and an MTU
 * kept unsent), and no later than its next flowlet choice. */
static WhTime tail_time(const WhWormhole *wh, const WhFlow *f, double r, uint64_t ahead)
{
  const WhTransport *tp = wh->tp;
  WhTime now = wh->sim->now;
  double keep = (double)(f->snd_max_sent - f->snd_una) + r * (double)wh->p.tail_margin + tp->p.mtu;
  double left = (double)(f->size - f->snd_max_sent) - (double)ahead - keep;
  WhTime lf = left > 0 ? (WhTime)(left / r) : 0;
  if (wh->net->router.choose) {
    WhTime next_choice = f->last_choice + wh->net->router.flowlet_gap;
    lf = MIN(lf, next_choice > now ? next_choice - now : 0);
  }
  return lf;
}

/* Tails=rate: the first of `flows` (rates in rhat) to deliver its last byte at its rate
 * completes at that time, if no other flow reaches its tail before then; then the skip
 * lasts until that time and *done is that flow. Else `len` (the skip up to the first
 * tail) stays, and *done NONE. */
static WhTime skip_to_completion(WhWormhole *wh, GArray *flows, WhTime len, uint32_t *done)
{
  WhTime first = WH_TIME_MAX, tails = WH_TIME_MAX;
  uint32_t which = NONE;
  for (guint i = 0; i < flows->len; i++) {
    const WhFlow *f = wh_transport_flow(wh->tp, g_array_index(flows, uint32_t, i));
    double r = wh_wormhole_glue(wh, f->id)->rhat;
    WhTime c = (WhTime)ceil((double)(f->size - f->rcv_nxt) / r);
    if (c < first) {
      if (which != NONE) /* the previous first keeps its tail */
        tails = MIN(tails, tail_time(wh, wh_transport_flow(wh->tp, which),
                                     wh_wormhole_glue(wh, which)->rhat, 0));
      first = c;
      which = f->id;
    } else {
      tails = MIN(tails, tail_time(wh, f, r, 0));
    }
  }
  if (which == NONE || first > tails || first <= len)
    return len;
  *done = which;
  return first;
}

/* How long partition `p` may be skipped from now (0: not now; *retry: when to try
 * again); fills each flow's rate estimate. */
static WhTime skip_length(WhWormhole *wh, const WhPartition *p, GArray *flows, GArray *ports,
                          WhTime *retry, WhTime *period, uint32_t *done)
{
  *done = NONE;
  WhTime now = wh->sim->now;
  WhTransport *tp = wh->tp;
  const WhDetectorParams *dp = &wh->p.det;
  WhTime rate_window = (WhTime)dp->window * dp->period;
  /* quiet (the idle rule holds now): rates from the quiet stretch; else the rate rule's
   * window must lie wholly after the last change of membership */
  gboolean quiet = dp->idle_rule && p->n_flag[1] == 0 && now - p->since >= dp->idle_window &&
                   (p->last_signal == 0 || now - p->last_signal >= dp->idle_window);
  if (!quiet && now - p->since < rate_window) {
    *retry = p->since + rate_window;
    wh->ss.refused_unsteady++;
    return 0;
  }
  WhTime len = WH_TIME_MAX;
  *period = 0;
  gboolean periodic = quiet;
  for (guint i = 0; i < flows->len; i++) {
    WhFlow *f = wh_transport_flow(tp, g_array_index(flows, uint32_t, i));
    WhGlueFlow *g = wh_wormhole_glue(wh, f->id);
    WhTime srtt = (WhTime)g->srtt_ps;
    if (srtt == 0 || !parkable(wh, f, g)) {
      *retry = now + 4 * MAX(srtt, dp->period);
      wh->ss.refused_recovery++;
      return 0;
    }
    WhTime from =
        quiet ? MAX(MAX(p->since, p->last_signal), g->line_since) + MAX(srtt, dp->idle_window)
              : now - rate_window;
    from = MAX(from, g->ff->floor);
    if (quiet && now - MIN(from, now) < wh->p.rate_window) {
      /* a quiet partition's rate is measured over RateWindow at least */
      *retry = from + wh->p.rate_window;
      wh->ss.refused_unsteady++;
      return 0;
    }
    g->ff->est_from = from;
    double r = rate_since(g->ff, from, 4 * (uint64_t)tp->p.mtu);
    /* the idle rule says nothing of the rate itself: a flow still settling from its
     * start (HPCC from line rate to its target utilization) is not steady until its
     * rate over the window and over the window's second half agree */
    if (quiet && r > 0) {
      double late = rate_since(g->ff, from + (g->ff->ack_t - MIN(from, g->ff->ack_t)) / 2,
                               2 * (uint64_t)tp->p.mtu);
      if (!(late > 0) || fabs(r - late) > QUIET_RATE_AGREEMENT * late)
        r = 0;
    }
    if (!(r > 0)) {
      *retry = now + MAX(srtt, dp->period);
      wh->ss.refused_unsteady++;
      return 0;
    }
    g->rhat = r;
    len = MIN(len, tail_time(wh, f, r, 0));
    /* a quiet flow whose ACKs come exactly periodically, one MTU a period, the same
     * period as the flows before it */
    WhTime pf = periodic ? ack_period(g->ff, from, tp->p.mtu) : 0;
    if (i == 0)
      *period = pf;
    periodic = pf > 0 && pf == *period;
  }
  if (periodic)
    len = len / *period * *period;
  else
    *period = 0;
  if (!periodic && wh->p.complete_tails)
    len = skip_to_completion(wh, flows, len, done);
  if (foreign_waiter(wh, p, ports)) {
    *retry = now + dp->period;
    wh->ss.refused_recovery++;
    return 0;
  }
  if (len < MAX(wh->p.min_skip, 1)) {
    *retry = now + MAX(wh->p.min_skip, dp->period);
    wh->ss.refused_short++;
    return 0;
  }
  return len;
}

static void park_event(WhWormhole *wh, WhEvent *ev, uint32_t slot)
{
  if (ev)
    wh_wormhole_park_event(wh->sim->sched, ev, slot);
}

static uint32_t park(WhWormhole *wh, GArray *flows, GArray *ports, WhTime len)
{
  WhScheduler *sched = wh->sim->sched;
  WhTime now = wh->sim->now;
  uint32_t slot = wh_wormhole_park_open(sched);
  if (slot >= wh->skips->len)
    g_array_set_size(wh->skips, slot + 1);
  WhSkip *sk = skip_at(wh, slot);
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
  sk->memo = FALSE;
  sk->period = 0;
  sk->done = NONE;
  sk->wake = wh_sim_schedule_at(wh->sim, sk->target, wake, wh, slot, WH_OWNER_NONE);
  wh->ss.fast_forwards++;
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
static gboolean complete(WhWormhole *wh, uint32_t id)
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

/* After a replay's flows were advanced and its ports thawed: a whole replay puts each
 * survivor's stored CC state in place and completes the flow that ended the phase. */
static void replay_end(WhWormhole *wh, WhSkip *sk, gboolean whole)
{
  wh->ss.replays_whole += whole;
  wh->ss.replays_cut += !whole;
  for (guint i = 0; i < sk->flows->len; i++) {
    uint32_t id = g_array_index(sk->flows, uint32_t, i);
    WhFlow *f = wh_transport_flow(wh->tp, id);
    WhGlueFlow *g = wh_wormhole_glue(wh, id);
    if (whole && g->memo_snap) {
      WhCcSnapshot snap;
      if (wh_cc_snapshot_deserialize(g->memo_snap, WH_CC_SNAPSHOT_BYTES, &snap, NULL))
        if (wh_flow_cc_restore(f, &snap, NULL) && wh->tp->cc->forget_path)
          wh->tp->cc->forget_path(f); /* the snapshot's path records are another flow's */
    }
    g_clear_pointer(&g->memo_snap, g_free);
    g->memo_bytes = 0;
  }
  if (whole && sk->memo_done != NONE && complete(wh, sk->memo_done))
    wh->ss.replay_completions++;
  sk->memo = FALSE;
}

static void resume(WhWormhole *wh, uint32_t slot)
{
  WhSkip *sk = skip_at(wh, slot);
  WhScheduler *sched = wh->sim->sched;
  WhTransport *tp = wh->tp;
  WhTime now = wh->sim->now, dt = now - sk->t0;
  uint64_t mtu = tp->p.mtu;
  /* a periodic partition moves by whole periods, its phase kept: after an interrupt
   * its events land up to a period after now */
  WhTime shift = sk->period ? (dt + sk->period - 1) / sk->period * sk->period : dt;
  /* what each flow advances: R x dt (a periodic one: a frame per period), whole MTUs,
   * never into its tail */
  for (guint i = 0; i < sk->flows->len; i++) {
    uint32_t id = g_array_index(sk->flows, uint32_t, i);
    WhFlow *f = wh_transport_flow(tp, id);
    WhGlueFlow *g = wh_wormhole_glue(wh, id);
    uint64_t b = sk->period ? (uint64_t)(shift / sk->period) * mtu
                            : (uint64_t)(g->rhat * (double)dt) / mtu * mtu;
    if (sk->memo) /* a replay: its stored bytes, the elapsed fraction if it was cut, and
                     what the skip after it moved */
      b = id == sk->memo_done && dt >= sk->memo_dur
              ? 0 /* completed below */
              : (uint64_t)((double)g->memo_bytes * MIN(1.0, (double)dt / (double)sk->memo_dur) +
                           (replay_skips(sk) && dt > sk->memo_dur
                                ? g->rhat * (double)(dt - sk->memo_dur)
                                : 0)) /
                    mtu * mtu;
    if (id == sk->done && now >= sk->target)
      b = 0; /* completed below */
    uint64_t inflight = f->snd_max_sent - f->snd_una;
    uint64_t room = f->size - f->snd_max_sent;
    /* a replay checked its room; a skip keeps the packets in flight theirs */
    uint64_t keep = sk->memo && !replay_skips(sk) ? mtu : inflight + mtu;
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
    /* the observer's baselines move with the flow: the skip is invisible to sampling */
    g->last_rcv += b;
    for (uint32_t k = 0; g->ring && k < wh->p.avg_periods + 1; k++)
      g->ring[k] += b;
    /* its rate marks too (the skip is invisible to them), from where its last estimate
     * began: the next estimate may extend that window but not reach before it */
    WhFfRing *r = g->ff;
    r->floor = r->est_from + shift;
    r->ack_t += shift;
    r->ack_una += b;
    for (uint32_t k = 0; k < WH_FF_FINE; k++) {
      r->fine[k].t += shift;
      r->fine[k].una += b;
    }
    for (uint32_t k = 0; k < WH_FF_COARSE; k++) {
      r->coarse[k].t += shift;
      r->coarse[k].una += b;
    }
    wh_detector_flow_hold(wh->det, id, FALSE);
  }
  for (guint i = 0; i < sk->ports->len; i++)
    wh_net_freeze_port(wh->net, g_array_index(sk->ports, uint32_t, i), FALSE);
  if (sk->memo)
    replay_end(wh, sk, dt >= sk->memo_dur);
  if (sk->done != NONE && now >= sk->target && complete(wh, sk->done))
    wh->ss.tail_completions++;
  sk->done = NONE;
  wh->ss.skip_backs += now < sk->target;
  wh->ss.skipped_time += shift;
  wh->ss.skipped_flow_time += shift * sk->flows->len;
  wh->ss.events_skipped_est += events_est;
  sk->used = FALSE;
  sk->wake = NULL;
  wh_wormhole_arm_ticks(wh);
}

/* How long a converged replay's flows, once they have sent their stored bytes, may go
 * on as a skip at their stored steady rates (each keeping its tail, as skip_length
 * does; each flow's rhat is set to its rate); 0 when a rate is not known or that is
 * shorter than MinSkip. */
static WhTime skip_after(WhWormhole *wh, const uint32_t *flows, const uint64_t *bytes,
                         const WhOutcomeSteady *steady, uint32_t n)
{
  WhTime len = WH_TIME_MAX;
  for (uint32_t i = 0; i < n && steady; i++) {
    if (steady[i].rate == 0)
      return 0;
    len = MIN(len, tail_time(wh, wh_transport_flow(wh->tp, flows[i]),
                             (double)steady[i].rate * 1e-12, bytes[i]));
  }
  if (steady == NULL || n == 0 || len < MAX(wh->p.min_skip, 1))
    return 0;
  for (uint32_t i = 0; i < n; i++)
    wh_wormhole_glue(wh, flows[i])->rhat = (double)steady[i].rate * 1e-12;
  return len;
}

gboolean wh_ff_replay(WhWormhole *wh, const WhPartition *p, const uint32_t *flows,
                      const uint64_t *bytes, const uint8_t *snaps, const WhOutcomeSteady *steady,
                      uint32_t n, uint32_t done, WhTime dur)
{
  WhTransport *tp = wh->tp;
  uint64_t mtu = tp->p.mtu;
  g_autoptr(GArray) pf = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_autoptr(GArray) ports = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  collect(wh, p, pf, ports);
  /* a stored phase of no duration (its flow's last byte had arrived when its pattern
   * was taken) has nothing to replay */
  uint64_t *why = dur > 0 ? &wh->ss.replays_refused_busy : &wh->ss.replays_refused_instant;
  double frac = 1;
  gboolean ok = pf->len == n && dur > 0 && !foreign_waiter(wh, p, ports);
  for (uint32_t i = 0; ok && i < n; i++) {
    WhFlow *f = wh_transport_flow(tp, flows[i]);
    const WhGlueFlow *g = wh_wormhole_glue(wh, flows[i]);
    why = &wh->ss.replays_refused_busy;
    ok = parkable(wh, f, g);
    if (!ok)
      break;
    if (i == done) {
      /* the flow that completes must have about the bytes left it had */
      uint64_t left = f->size - f->rcv_nxt;
      uint64_t slack = MAX((uint64_t)(wh->p.rate_tolerance * (double)bytes[i]), 4 * mtu);
      ok = left + slack >= bytes[i] && left <= bytes[i] + slack;
      why = &wh->ss.replays_refused_left;
    } else if (bytes[i] + mtu > f->size - f->snd_max_sent) {
      /* a survivor would reach its tail before the stored phase's end: it has less left
       * than its counterpart had, and would have finished first. The replay stops
       * where the first such survivor reaches its last MTU (a cut replay: each flow the
       * fraction of its bytes, no snapshot, no completion), and the phase runs on
       * packet by packet from there. */
      uint64_t room = f->size - f->snd_max_sent;
      double fr = room > mtu && bytes[i] > 0 ? (double)(room - mtu) / (double)bytes[i] : 0;
      frac = MIN(frac, fr);
    }
  }
  WhTime len = (WhTime)((double)dur * frac);
  if (ok && frac < 1 && len < MAX(wh->p.min_skip, 1)) {
    ok = FALSE;
    why = &wh->ss.replays_refused_tail;
  }
  if (!ok) {
    wh->ss.replays_refused++;
    (*why)++;
    return FALSE;
  }
  WhTime more = frac < 1 || done < n ? 0 : skip_after(wh, flows, bytes, steady, n);
  for (uint32_t i = 0; i < n; i++) {
    WhGlueFlow *g = wh_wormhole_glue(wh, flows[i]);
    g->memo_bytes = bytes[i];
    g_free(g->memo_snap);
    g->memo_snap = i == done
                       ? NULL
                       : g_memdup2(snaps + (size_t)i * WH_CC_SNAPSHOT_BYTES, WH_CC_SNAPSHOT_BYTES);
  }
  uint32_t slot = park(wh, pf, ports, frac < 1 ? len : dur + more);
  wh->ss.replays_clipped += frac < 1;
  wh->ss.replays_skipping += more > 0;
  WhSkip *sk = skip_at(wh, slot);
  sk->memo = TRUE;
  sk->memo_dur = dur;
  sk->memo_done = done < n ? flows[done] : NONE;
  wh->ss.fast_forwards--; /* a replay, not a skip */
  wh->ss.replays++;
  return TRUE;
}

static void wake(WhSim *sim, void *ctx, uint64_t slot)
{
  (void)sim;
  resume(ctx, (uint32_t)slot);
}

static gboolean candidate(const WhWormhole *wh, const WhPartition *p, WhTime t)
{
  return p->kind != WH_STEADY_NONE && p->n_flows > 0 && p->skip_retry <= t &&
         flow_slot(wh, wh_partitions_first_flow(p)) == NONE;
}

/* An event at a tick's time (after the event the tick ran before): parks what it can. */
static void try_park(WhSim *sim, void *ctx, uint64_t arg)
{
  (void)arg;
  WhWormhole *wh = ctx;
  wh->action = NULL;
  const WhPartitions *pm = wh_detector_partitions(wh->det);
  g_autoptr(GArray) flows = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_autoptr(GArray) ports = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t i = 0; i < wh_partitions_n_live(pm); i++) {
    WhPartition *p = wh_partitions_live(pm, i);
    if (!candidate(wh, p, sim->now))
      continue;
    wh->ss.tries++;
    g_array_set_size(flows, 0);
    g_array_set_size(ports, 0);
    collect(wh, p, flows, ports);
    WhTime retry = 0, period = 0;
    uint32_t done = NONE;
    WhTime len = skip_length(wh, p, flows, ports, &retry, &period, &done);
    if (len == 0) {
      p->skip_retry = retry;
      continue;
    }
    WhSkip *sk = skip_at(wh, park(wh, flows, ports, len));
    sk->period = period;
    sk->done = done;
    if (wh->memo)
      wh_patterns_parked(wh, p);
  }
}

void wh_ff_after_tick(WhWormhole *wh, WhTime t)
{
  if (wh->action)
    return;
  const WhPartitions *pm = wh_detector_partitions(wh->det);
  for (uint32_t i = 0; i < wh_partitions_n_live(pm); i++) {
    if (candidate(wh, wh_partitions_live(pm, i), t)) {
      wh->action = wh_sim_schedule_at(wh->sim, wh->sim->now, try_park, wh, 0, WH_OWNER_NONE);
      return;
    }
  }
}

void wh_ff_finish(WhWormhole *wh)
{
  if (wh->skips == NULL)
    return;
  for (guint i = 0; i < wh->skips->len; i++) {
    WhSkip *sk = skip_at(wh, i);
    if (!sk->used)
      continue;
    wh_sim_cancel(wh->sim, sk->wake);
    resume(wh, i);
  }
  if (wh->action) {
    wh_sim_cancel(wh->sim, wh->action);
    wh->action = NULL;
  }
}

void wh_wormhole_skip_summary(const WhWormhole *wh, WhWormholeSkipSummary *out)
{
  memset(out, 0, sizeof *out);
  out->fast_forwards = wh->ss.fast_forwards;
  out->skip_backs = wh->ss.skip_backs;
  out->advanced_bytes = wh->ss.advanced_bytes;
  out->events_skipped_est = wh->ss.events_skipped_est;
  out->skipped_time = wh->ss.skipped_time;
  double flow_time = 0;
  for (uint32_t i = 0; i < wh->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(wh->tp, i);
    if (f->state == WH_FLOW_PENDING || wh->sim->now < f->start)
      continue;
    flow_time += (double)((f->finish ? f->finish : wh->sim->now) - f->start);
  }
  out->time_steady_fraction = flow_time > 0 ? (double)wh->ss.skipped_flow_time / flow_time : 0;
}

void wh_wormhole_flow_skip(const WhWormhole *wh, uint32_t flow, WhTime *time, uint64_t *bytes)
{
  const WhGlueFlow *g = flow < wh->flows.len ? wh_table_at(&wh->flows, flow) : NULL;
  *time = g ? g->skipped : 0;
  *bytes = g ? g->advanced : 0;
}

gboolean wh_wormhole_check_bytes(const WhWormhole *wh, GError **error)
{
  for (uint32_t i = 0; i < wh->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(wh->tp, i);
    if (f->finish == 0)
      continue;
    uint64_t adv =
        i < wh->flows.len ? ((const WhGlueFlow *)wh_table_at(&wh->flows, i))->advanced : 0;
    if (f->rcv_nxt != f->size || f->bytes_sent - f->retx_bytes + adv != f->size) {
      g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                  "wormhole: flow %u of %" G_GUINT64_FORMAT " bytes: received %" G_GUINT64_FORMAT
                  ", sent %" G_GUINT64_FORMAT " for the first time + %" G_GUINT64_FORMAT
                  " advanced",
                  i, f->size, f->rcv_nxt, f->bytes_sent - f->retx_bytes, adv);
      return FALSE;
    }
  }
  return TRUE;
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
      if (port_slot(wh, id) != i || !p->frozen) {
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
      if (flow_slot(wh, id) != i) {
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
