/* Wormhole's skip mode: the policies that decide what to park, for how long, and how
 * far its flows move; the parking itself is park.c's.
 *
 * The skip policy (t0). After a sampling tick that found a partition steady, an event
 * at the same time tries to park it. Every flow must be eligible: sending new data (not
 * in go-back-N recovery), no NACK outstanding, no path change waiting, and a delivery
 * rate estimate R (payload bytes over time between two ACKs, the later one its latest:
 * exact for a periodic ACK clock, no packet quantization) over a window that lies
 * wholly after the partition's last change of membership (the detector's window for
 * the rate rule, since that change for the idle rule). The skip may last until the
 * first flow reaches its tail: every flow keeps unsent its bytes in flight plus
 * R x (smoothed RTT + TailMargin), so its last packets run packet by packet; a
 * partition is parked only if that is at least MinSkip. At the resume each flow moves
 * R x (t1 - t0). A quiet partition whose ACK clocks are exactly periodic with one
 * common period is skipped by whole periods instead (its wake on a period boundary;
 * after an interrupt, the whole periods that reach t1), each flow one MTU a period: it
 * resumes in the exact state. With Tails=rate, a skip at measured rates may instead
 * last until its first flow would deliver its last byte, and that flow completes then.
 *
 * The replay policy (memo mode). A phase whose contention pattern was stored with its
 * outcome is parked for the stored phase's duration: each flow moves its stored bytes
 * and takes its stored CC state, and the flow that ended the phase completes; a
 * converged outcome goes on as a skip at its stored rates. */
#include <math.h>
#include <string.h>
#include "flow-state.h"
#include "wormhole-private.h"

#define NONE WH_PARTITION_NONE
/* how closely a quiet partition's rate over its window and over the window's second
 * half must agree */
#define QUIET_RATE_AGREEMENT 0.01

/* A converged replay that goes on as a skip at its flows' rhat: parked past the stored
 * phase's duration (a clipped replay is parked for less). */
static inline gboolean replay_skips(const WhSkip *sk)
{
  return sk->target - sk->t0 > sk->memo_dur;
}

void wh_ff_on_activate(WhWormhole *wh, WhFlow *f)
{
  wh_park_interrupt_path(wh, f->fwd, f->fwd_hops);
  wh_park_interrupt_path(wh, f->rev, f->rev_hops);
}

void wh_ff_on_start(WhWormhole *wh, WhFlow *f)
{
  WhGlueFlow *g = wh_wormhole_glue(wh, f->id);
  /* the marks are read only up to their counts */
  WhFfRing *r = wh_recycler_take(&wh->ff_rings);
  r->ack_t = wh->sim->now;
  r->ack_una = f->snd_una;
  r->n_fine = r->n_coarse = r->ticks = r->n_flu = 0;
  r->est_from = r->floor = 0;
  g->ff = r;
  wh_park_interrupt_path(wh, f->fwd, f->fwd_hops);
  wh_park_interrupt_path(wh, f->rev, f->rev_hops);
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
  (void)f;
  wh_recycler_give(&wh->ff_rings, g->ff);
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
  if (wh->p.fluid && r->ticks % wh->fluid_stride == 0)
    r->flu[r->n_flu++ % WH_FF_COARSE] = m;
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
  return f->state == WH_FLOW_ACTIVE && !f->held && g->ff != NULL && f->snd_nxt >= f->snd_max_sent &&
         f->next_path == NULL &&
         !(f->nack_sent && now - f->nack_time < 4 * srtt + wh->tp->p.nack_interval) &&
         wh_flow_park_slot(wh, f->id) == NONE;
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

/* The skip policy: each flow moves R x dt (a periodic park: a frame per period) and
 * keeps its packets in flight and an MTU unsent; Tails=rate's flow moves nothing and
 * completes at the target. */
static uint64_t skip_advance(const WhWormhole *wh, const WhSkip *sk, uint32_t id, WhTime dt,
                             WhTime shift)
{
  uint64_t mtu = wh->tp->p.mtu;
  if (id == sk->done && wh->sim->now >= sk->target)
    return 0; /* completed at the end */
  const WhGlueFlow *g = wh_table_at(&wh->flows, id);
  return sk->period ? (uint64_t)(shift / sk->period) * mtu
                    : (uint64_t)(g->rhat * (double)dt) / mtu * mtu;
}

static uint64_t skip_keep(const WhWormhole *wh, const WhSkip *sk, const WhFlow *f)
{
  (void)sk;
  return f->snd_max_sent - f->snd_una + wh->tp->p.mtu;
}

static void skip_end(WhWormhole *wh, WhSkip *sk, WhTime dt)
{
  (void)dt;
  if (sk->done != NONE && wh->sim->now >= sk->target && wh_park_complete(wh, sk->done))
    wh->ss.tail_completions++;
}

static const WhParkPolicy skip_policy = {
    .name = "skip", .advance = skip_advance, .keep = skip_keep, .end = skip_end};

/* The replay policy: each flow moves its stored bytes (the elapsed fraction if the
 * replay was cut) and, in a converged replay that goes on as a skip, R x the time past
 * the stored phase; the flow that ended the phase moves nothing and completes at the
 * end. A replay checked its room, so a flow keeps one MTU unsent (a skip after it:
 * also its packets in flight). */
static uint64_t replay_advance(const WhWormhole *wh, const WhSkip *sk, uint32_t id, WhTime dt,
                               WhTime shift)
{
  (void)shift;
  uint64_t mtu = wh->tp->p.mtu;
  if (id == sk->memo_done && dt >= sk->memo_dur)
    return 0; /* completed at the end */
  const WhGlueFlow *g = wh_table_at(&wh->flows, id);
  return (uint64_t)((double)g->memo_bytes * MIN(1.0, (double)dt / (double)sk->memo_dur) +
                    (replay_skips(sk) && dt > sk->memo_dur ? g->rhat * (double)(dt - sk->memo_dur)
                                                           : 0)) /
         mtu * mtu;
}

static uint64_t replay_keep(const WhWormhole *wh, const WhSkip *sk, const WhFlow *f)
{
  uint64_t mtu = wh->tp->p.mtu;
  return replay_skips(sk) ? f->snd_max_sent - f->snd_una + mtu : mtu;
}

/* After a replay's flows were advanced and its ports thawed: a whole replay puts each
 * survivor's stored CC state in place and completes the flow that ended the phase. */
static void replay_end(WhWormhole *wh, WhSkip *sk, WhTime dt)
{
  gboolean whole = dt >= sk->memo_dur;
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
  if (whole && sk->memo_done != NONE && wh_park_complete(wh, sk->memo_done))
    wh->ss.replay_completions++;
}

static const WhParkPolicy replay_policy = {
    .name = "replay", .advance = replay_advance, .keep = replay_keep, .end = replay_end};

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
  uint32_t slot = wh_park(wh, pf, ports, frac < 1 ? len : dur + more, &replay_policy);
  wh->ss.replays_clipped += frac < 1;
  wh->ss.replays_skipping += more > 0;
  WhSkip *sk = wh_skip_at(wh, slot);
  sk->memo_dur = dur;
  sk->memo_done = done < n ? flows[done] : NONE;
  wh->ss.replays++;
  return TRUE;
}

/* The drain policy: a partition parked until its last flow's completion, each of the
 * others completed in place at its own (drain_complete) while the rest stay parked. A
 * whole drain moves no flow and completes the last ones at its end; an interrupt gives
 * each flow still parked the elapsed fraction of the bytes it had left, and it runs on
 * packet by packet. */
static uint64_t drain_advance(const WhWormhole *wh, const WhSkip *sk, uint32_t id, WhTime dt,
                              WhTime shift)
{
  (void)dt;
  (void)shift;
  WhTime now = wh->sim->now;
  if (now >= sk->target)
    return 0;
  const WhGlueFlow *g = wh_table_at(&wh->flows, id);
  double frac = g->memo_fin ? MIN(1.0, (double)(now - sk->drain_t0) / (double)g->memo_fin) : 1;
  return (uint64_t)((double)g->memo_bytes * frac) / wh->tp->p.mtu * wh->tp->p.mtu;
}

static uint64_t drain_keep(const WhWormhole *wh, const WhSkip *sk, const WhFlow *f)
{
  (void)sk;
  (void)f;
  return wh->tp->p.mtu;
}

/* Completes flow `id` now with its packets left where they are (reclaimed by the
 * caller, in one pass over the ports), counting what it did not send as advanced and
 * the completion as the drain's. */
static void complete_in_place(WhWormhole *wh, uint32_t id, WhTime parked_at)
{
  WhFlow *f = wh_transport_flow(wh->tp, id);
  WhGlueFlow *g = wh_wormhole_glue(wh, id);
  uint64_t left = f->size - f->rcv_nxt, unsent = f->size - f->snd_max_sent;
  g_autoptr(GError) err = NULL;
  if (!wh_transport_complete_in_place(wh->tp, f, &err))
    g_error("wormhole: %s", err->message); /* every drained flow was parked active */
  g->advanced += unsent;
  g->skipped += wh->sim->now - parked_at;
  wh->ss.advanced_bytes += left;
  wh->ss.drain_completions++;
}

/* A packet of a completed flow (the drain's, the only ones on its ports). */
static int of_done_flow(const WhPacket *pkt, const void *data)
{
  (void)data;
  return pkt->flow != NULL && pkt->flow->state != WH_FLOW_ACTIVE;
}

/* A packet of flow `data` or of a completed flow. */
static int of_flow_or_done(const WhPacket *pkt, const void *data)
{
  return pkt->flow != NULL && (pkt->flow == data || pkt->flow->state != WH_FLOW_ACTIVE);
}

/* A port of a drain that no parked flow uses any more runs again now: its events come
 * back the time parked later, with its own state, its packets of `flow` (about to
 * complete) and of completed flows are reclaimed, and it thaws; so a flow that starts
 * on it (the workload's next step) does not end the drain. */
static void release_port(WhWormhole *wh, WhSkip *sk, uint32_t port, const WhFlow *flow)
{
  WhScheduler *sched = wh->sim->sched;
  WhPort *pt = &wh->net->port[port];
  WhTime shift = wh->sim->now - sk->t0;
  if (pt->tx_event)
    wh_wormhole_unpark_event(sched, pt->tx_event, shift);
  if (pt->fly_event)
    wh_wormhole_unpark_event(sched, pt->fly_event, shift);
  wh_wormhole_park_owner(sched, port, NONE);
  wh_net_shift_port_from(wh->net, port, sk->t0, shift);
  wh_net_reclaim_if(wh->net, port, of_flow_or_done, flow);
  wh_net_freeze_port(wh->net, port, FALSE);
  for (guint i = 0; i < sk->ports->len; i++) {
    if (g_array_index(sk->ports, uint32_t, i) == port) {
      g_array_remove_index_fast(sk->ports, i);
      break;
    }
  }
}

/* Ports of a drain ran again: its partition is rebuilt now, so that a flow on those
 * ports is not held in one partition with the parked flows (held, it would be neither
 * looked up nor skipped until the drain ends); the partitions of the flows still parked
 * are held again. */
static void drain_split(WhWormhole *wh, WhSkip *sk)
{
  WhPartitions *pm = (WhPartitions *)wh_detector_partitions(wh->det);
  WhTime now = wh->sim->now;
  for (guint i = 0; i < sk->flows->len; i++) {
    WhPartition *p = wh_partitions_of_flow(pm, g_array_index(sk->flows, uint32_t, i));
    if (p && p->hold)
      wh_partitions_hold(pm, p, FALSE, now);
  }
  for (guint i = 0; i < sk->flows->len; i++) {
    WhPartition *p = wh_partitions_of_flow(pm, g_array_index(sk->flows, uint32_t, i));
    if (p && !p->hold)
      wh_partitions_hold(pm, p, TRUE, now);
  }
}

/* A drained flow's completion, while its partition stays parked: it leaves the park,
 * the ports only it still used run again, and it completes in place (its timers, still
 * parked, are cancelled by the completion); its packets on the ports still parked are
 * reclaimed when the park ends (drain_end). */
static void drain_complete(WhSim *sim, void *ctx, uint64_t arg)
{
  WhWormhole *wh = ctx;
  uint32_t id = (uint32_t)arg, k = (uint32_t)(arg >> 32);
  WhSkip *sk = wh_skip_at(wh, wh_flow_park_slot(wh, id));
  g_array_index(sk->drain_events, WhEvent *, k) = NULL;
  for (guint i = 0; i < sk->flows->len; i++) {
    if (g_array_index(sk->flows, uint32_t, i) == id) {
      g_array_remove_index_fast(sk->flows, i);
      break;
    }
  }
  uint32_t n;
  const uint32_t *fp = wh_partitions_flow_ports(wh_detector_partitions(wh->det), id, &n);
  uint32_t freed[2 * 256]; /* a flow's ports, both paths (as on_start takes them) */
  g_return_if_fail(n <= G_N_ELEMENTS(freed));
  uint32_t n_freed = 0;
  for (uint32_t i = 0; i < n; i++)
    if (--wh->drain_refs[fp[i]] == 0)
      freed[n_freed++] = fp[i];
  WhFlow *f = wh_transport_flow(wh->tp, id);
  for (uint32_t i = 0; i < n_freed; i++)
    release_port(wh, sk, freed[i], f);
  wh_detector_flow_hold(wh->det, id, FALSE);
  complete_in_place(wh, id, sk->t0);
  wh_wormhole_park_owner(sim->sched, id | WH_OWNER_FLOW, NONE);
  g_array_append_val(sk->drain_done, id);
  if (n_freed > 0)
    drain_split(wh, sk);
}

static void drain_end(WhWormhole *wh, WhSkip *sk, WhTime dt)
{
  (void)dt;
  WhTime now = wh->sim->now;
  gboolean whole = now >= sk->target;
  for (guint i = 0; i < sk->ports->len; i++)
    wh->drain_refs[g_array_index(sk->ports, uint32_t, i)] = 0;
  for (guint i = 0; i < sk->drain_events->len; i++) {
    WhEvent **ev = &g_array_index(sk->drain_events, WhEvent *, i);
    if (*ev)
      wh_sim_cancel(wh->sim, *ev);
    *ev = NULL;
  }
  for (guint i = 0; whole && i < sk->flows->len; i++)
    complete_in_place(wh, g_array_index(sk->flows, uint32_t, i), sk->t0);
  /* the completed flows' packets, in one pass over each port */
  if (sk->drain_done->len > 0 || whole)
    for (guint i = 0; i < sk->ports->len; i++)
      wh_net_reclaim_if(wh->net, g_array_index(sk->ports, uint32_t, i), of_done_flow, NULL);
  WhPartitions *pm = (WhPartitions *)wh_detector_partitions(wh->det);
  for (guint i = 0; i < sk->flows->len; i++) {
    WhPartition *p = wh_partitions_of_flow(pm, g_array_index(sk->flows, uint32_t, i));
    if (p && p->hold)
      wh_partitions_hold(pm, p, FALSE, now);
  }
  wh->ss.drains_whole += whole;
  wh->ss.drains_cut += !whole;
}

static const WhParkPolicy drain_policy = {
    .name = "drain", .advance = drain_advance, .keep = drain_keep, .end = drain_end};

gboolean wh_ff_drain(WhWormhole *wh, const WhPartition *p, const uint32_t *flows,
                     const WhOutcomeDrain *drain, uint32_t n)
{
  WhTransport *tp = wh->tp;
  uint64_t mtu = tp->p.mtu;
  g_autoptr(GArray) pf = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_autoptr(GArray) ports = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  collect(wh, p, pf, ports);
  /* flows that contend with each other: a lone flow's phase is a quiet flow at its line
   * rate, which the periodic skip takes exactly and, unlike a drain, a later arrival
   * cuts at a known rate */
  gboolean ok = pf->len == n && n > 1 && !foreign_waiter(wh, p, ports);
  WhTime last = 0, now = wh->sim->now, first = WH_TIME_MAX;
  for (uint32_t i = 0; ok && i < n; i++)
    first = MIN(first, wh_transport_flow(tp, flows[i])->start);
  for (uint32_t i = 0; ok && i < n; i++) {
    WhFlow *f = wh_transport_flow(tp, flows[i]);
    /* its counterpart's size, and a completion ahead (a stored value from a file is
     * checked like any input: within the clock's range) */
    ok = f->size == drain[i].size && drain[i].fin <= (uint64_t)(WH_TIME_MAX - f->start) &&
         f->start + (WhTime)drain[i].fin > now;
    /* started as long after the earliest as its counterpart did, to the picosecond: a
     * drain replays whole flows from their starts, and flows that start out of step
     * (by a frame, from an earlier approximation) are left to the packets, which bring
     * them back in step as the exact engine would, where a drain would carry the offset
     * on to the phases after it */
    ok = ok && parkable(wh, f, wh_wormhole_glue(wh, flows[i])) && f->rcv_nxt < f->size &&
         (uint64_t)(f->start - first) == drain[i].lag;
    /* at the same point of its life: about the bytes left its counterpart had (within
     * RateTolerance of them, or 4 MTUs) */
    uint64_t left = f->size - f->snd_max_sent, want = ok ? drain[i].left : 0;
    uint64_t slack = MAX((uint64_t)(wh->p.rate_tolerance * (double)want), 4 * mtu);
    ok = ok && want <= f->size && left + slack >= want && left <= want + slack;
    if (ok)
      last = MAX(last, f->start + (WhTime)drain[i].fin - now);
  }
  if (!ok) {
    wh->ss.drains_refused++;
    return FALSE;
  }
  for (uint32_t i = 0; i < n; i++) {
    WhGlueFlow *g = wh_wormhole_glue(wh, flows[i]);
    const WhFlow *f = wh_transport_flow(tp, flows[i]);
    g->memo_bytes = f->size - f->snd_max_sent;
    g->memo_fin = wh_transport_flow(tp, flows[i])->start + (WhTime)drain[i].fin - now;
    g_clear_pointer(&g->memo_snap, g_free);
  }
  WhSkip *sk = wh_skip_at(wh, wh_park(wh, pf, ports, last, &drain_policy));
  sk->drain_t0 = now;
  if (sk->drain_events == NULL) {
    sk->drain_events = g_array_new(FALSE, TRUE, sizeof(WhEvent *));
    sk->drain_done = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  }
  g_array_set_size(sk->drain_events, 0);
  g_array_set_size(sk->drain_done, 0);
  g_array_set_size(sk->drain_events, n);
  for (uint32_t i = 0; i < n; i++) {
    WhTime fin = wh_wormhole_glue(wh, flows[i])->memo_fin;
    if (fin < last)
      g_array_index(sk->drain_events, WhEvent *, i) = wh_sim_schedule_at(
          wh->sim, now + fin, drain_complete, wh, (uint64_t)i << 32 | flows[i], WH_OWNER_NONE);
  }
  const WhPartitions *pm = wh_detector_partitions(wh->det);
  if (wh->drain_refs == NULL)
    wh->drain_refs = g_new0(uint32_t, wh->net->n_ports);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t np;
    const uint32_t *fp = wh_partitions_flow_ports(pm, flows[i], &np);
    for (uint32_t k = 0; k < np; k++)
      wh->drain_refs[fp[k]]++;
  }
  wh_partitions_hold((WhPartitions *)pm, (WhPartition *)p, TRUE, now);
  wh->ss.drains++;
  return TRUE;
}

static gboolean candidate(const WhWormhole *wh, const WhPartition *p, WhTime t)
{
  return p->kind != WH_STEADY_NONE && p->n_flows > 0 && p->skip_retry <= t &&
         wh_flow_park_slot(wh, wh_partitions_first_flow(p)) == NONE;
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
    WhSkip *sk = wh_skip_at(wh, wh_park(wh, flows, ports, len, &skip_policy));
    wh->ss.fast_forwards++;
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
  wh_park_finish(wh);
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
