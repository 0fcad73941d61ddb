/* Fluid flows (FluidWindow > 0, skip and memo modes): a flow whose own delivery rate is
 * steady is taken out of the packet simulation and carried as a fluid at that rate,
 * while every other flow goes on packet by packet beside it.
 *
 * A partition is parked only when every one of its flows is steady and nothing reaches
 * its ports; on a contended fabric partitions join tens of flows through shared links
 * and ACK paths, and one of them always changes. A fluid flow is parked alone: its
 * ports keep running, and it holds on each port of its data path a reservation of its
 * wire rate (the port sends the other flows' packets at its line rate less the
 * reservations, WhPort.rate_bps against line_bps), so the flows beside it see the
 * capacity they saw.
 *
 * Steady (at a tick): over the last FluidWindow (WH_FF_COARSE ACK marks), the flow's
 * delivery rate in each of WH_FLUID_BLOCKS blocks lies within Theta x the mean of the
 * others, the blocks' trend would take WH_FLUID_TREND_WINDOWS windows to move it by
 * Theta (a CC recovering over milliseconds would stop recovering while fluid), the
 * window lies after its last stretch, and at each port of its path it is at most its
 * fair share (the line rate over the flows sending there), or the port has room.
 * Conversion (t0): the flow is held (it sends nothing new); its reservation starts half
 * a smoothed RTT later, when its last packets have about left the middle of its path,
 * and once they are all acknowledged it is parked (park.c: its timers held) until its
 * tail (R x TailMargin and an MTU unsent) or until its trend would have moved it by
 * Theta. Its bytes count from t0 at R.
 * Ends before that: a flow starting or ending on a port of its data path (the shares
 * there change), or a check every quarter window finds it above its fair share of a
 * port that the other flows fill (they would take part of its rate back). At the end
 * the reservation goes, the flow has moved R x (t1 - t0) (whole MTUs) with its events
 * and CC state moved by the time parked, and it sends again at its CC's rate of t0.
 * Flows under adaptive routing are not taken (measured: no gain, and fidelity lost, on
 * the Frontier group). Cost: per tick, a look at each active flow due for a try; per
 * flow start or end, its path's ports and the fluid flows; nothing per packet. */
#include <math.h>
#include <string.h>
#include "flow-state.h"
#include "wormhole-private.h"

#define NONE WH_PARTITION_NONE
#define WH_FLUID_BLOCKS 4
/* a fluid stretch shorter than this many smoothed RTTs is not worth the conversion */
#define WH_FLUID_MIN_RTTS 16
/* no port transmits below this fraction of its line rate for reservations */
#define WH_FLUID_FLOOR 0.02
/* a rate whose trend moves it by Theta within this many windows is not steady */
#define WH_FLUID_TREND_WINDOWS 4
/* a port sending at this fraction of its line rate or more (its reservations counted) is
 * saturated */
#define WH_FLUID_BUSY 0.9

/* FLUID_CUT: held, to be let go at the next fluid event (never from inside a transport
 * notification, where sending again would re-enter the transport) */
enum { FLUID_NONE, FLUID_HOLDING, FLUID_PARKED, FLUID_CUT };

static void fluid_event(WhSim *sim, void *ctx, uint64_t arg);

static void ensure_event(WhWormhole *wh)
{
  if (wh->fluid_event == NULL)
    wh->fluid_event = wh_sim_schedule_at(wh->sim, wh->sim->now, fluid_event, wh, 0, WH_OWNER_NONE);
}

static void port_rate(WhWormhole *wh, uint32_t port)
{
  WhPort *p = &wh->net->port[port];
  double line = (double)p->line_bps;
  double r = line - wh->reserved[port];
  p->rate_bps = wh->fluid_n[port] == 0 || r >= line ? p->line_bps
                : r < WH_FLUID_FLOOR * line         ? (uint64_t)(WH_FLUID_FLOOR * line)
                                                    : (uint64_t)r;
}

/* Makes (sign 1) or releases (-1) flow f's reservation of its wire rate on its data
 * path. */
static void reserve(WhWormhole *wh, const WhFlow *f, const WhGlueFlow *g, int sign)
{
  double wire = g->fluid_wire;
  for (uint16_t h = 0; h < f->fwd_hops; h++) {
    uint32_t port = f->fwd[h];
    wh->reserved[port] += sign * wire;
    port_rate(wh, port);
  }
}

/* Counts flow f on (sign 1) or off (-1) its data path's ports; a port left with no fluid
 * flow gets its line rate back exactly (the sum of the reservations made and released
 * in floating point may not come back to 0). */
static void count_ports(WhWormhole *wh, const WhFlow *f, int sign)
{
  for (uint16_t h = 0; h < f->fwd_hops; h++) {
    uint32_t port = f->fwd[h];
    if (sign > 0) {
      wh->fluid_n[port]++;
    } else if (--wh->fluid_n[port] == 0) {
      wh->reserved[port] = 0;
      port_rate(wh, port);
    }
  }
}

static void list_remove(WhWormhole *wh, uint32_t id)
{
  for (guint i = 0; i < wh->fluids->len; i++)
    if (g_array_index(wh->fluids, uint32_t, i) == id) {
      g_array_remove_index_fast(wh->fluids, i);
      return;
    }
}

/* Flow `id` leaves the fluid: released, let go, sending again. */
static void release(WhWormhole *wh, WhFlow *f, WhGlueFlow *g)
{
  if (g->fluid_reserved)
    reserve(wh, f, g, -1);
  g->fluid_reserved = FALSE;
  count_ports(wh, f, -1);
  g->fluid = FLUID_NONE;
  list_remove(wh, f->id);
  wh_transport_hold(wh->tp, f, FALSE);
}

static uint64_t fluid_advance(const WhWormhole *wh, const WhSkip *sk, uint32_t id, WhTime dt,
                              WhTime shift)
{
  (void)sk;
  (void)dt;
  (void)shift;
  const WhGlueFlow *g = wh_table_at(&wh->flows, id);
  return (uint64_t)(g->fluid_rate * (double)(wh->sim->now - g->fluid_t0));
}

static uint64_t fluid_keep(const WhWormhole *wh, const WhSkip *sk, const WhFlow *f)
{
  (void)sk;
  return f->snd_max_sent - f->snd_una + wh->tp->p.mtu;
}

static void fluid_end(WhWormhole *wh, WhSkip *sk, WhTime dt)
{
  (void)dt;
  uint32_t id = g_array_index(sk->flows, uint32_t, 0);
  WhFlow *f = wh_transport_flow(wh->tp, id);
  WhGlueFlow *g = wh_wormhole_glue(wh, id);
  wh->fs.cut += wh->sim->now < sk->target;
  wh->fs.drifted += wh->sim->now >= sk->target && sk->target == g->fluid_until;
  wh->fs.time += wh->sim->now - g->fluid_t0;
  g->ff->est_from = wh->sim->now; /* the next window starts after this stretch */
  g->ff->floor = wh->sim->now;
  if (wh->tp->cc->forget_path)
    wh->tp->cc->forget_path(f); /* its INT records predate the stretch */
  release(wh, f, g);
}

static const WhParkPolicy fluid_policy = {
    .name = "fluid", .advance = fluid_advance, .keep = fluid_keep, .end = fluid_end};

/* The rate of a flow over the last window (payload bytes per ps) if it is steady in the
 * mean, else 0: its rate over each of the window's WH_FLUID_BLOCKS blocks lies within
 * Theta x the window's mean of the others, and their trend (least squares) moves it by
 * at most Theta / 2 over a window. *drift_for: how long the trend takes to move it by
 * Theta (WH_TIME_MAX: no trend). */
static double steady_rate(const WhWormhole *wh, const WhFfRing *r, WhTime from, WhTime *drift_for)
{
  if (r->n_flu < WH_FF_COARSE)
    return 0;
  WhAckMark m[WH_FF_COARSE + 1];
  for (uint32_t k = 0; k < WH_FF_COARSE; k++)
    m[k] = r->flu[(r->n_flu + k) % WH_FF_COARSE];
  m[WH_FF_COARSE] = (WhAckMark){r->ack_t, r->ack_una};
  if (m[0].t < from || m[0].t < r->floor)
    return 0;
  const uint32_t per = WH_FF_COARSE / WH_FLUID_BLOCKS;
  double lo = INFINITY, hi = 0, v[WH_FLUID_BLOCKS], mid[WH_FLUID_BLOCKS];
  for (uint32_t b = 0; b < WH_FLUID_BLOCKS; b++) {
    const WhAckMark *a = &m[b * per], *z = &m[(b + 1) * per];
    if (z->t <= a->t || z->una <= a->una)
      return 0;
    v[b] = (double)(z->una - a->una) / (double)(z->t - a->t);
    mid[b] = 0.5 * (double)(a->t + z->t);
    lo = MIN(lo, v[b]);
    hi = MAX(hi, v[b]);
  }
  double span = (double)(m[WH_FF_COARSE].t - m[0].t);
  double mean = (double)(m[WH_FF_COARSE].una - m[0].una) / span, theta = wh->p.det.theta;
  if (hi - lo > theta * mean)
    return 0;
  double tm = 0, vm = 0, sxy = 0, sxx = 0;
  for (uint32_t b = 0; b < WH_FLUID_BLOCKS; b++) {
    tm += mid[b] / WH_FLUID_BLOCKS;
    vm += v[b] / WH_FLUID_BLOCKS;
  }
  for (uint32_t b = 0; b < WH_FLUID_BLOCKS; b++) {
    sxy += (mid[b] - tm) * (v[b] - vm);
    sxx += (mid[b] - tm) * (mid[b] - tm);
  }
  double slope = sxx > 0 ? fabs(sxy / sxx) : 0; /* bytes per ps, per ps */
  if (slope * span > 0.5 * theta * mean)
    return 0;
  *drift_for = slope > 0 ? (WhTime)MIN(theta * mean / slope, 1e18) : WH_TIME_MAX;
  return mean;
}

/* How long flow f may stay fluid at r payload bytes per ps from t0 on: until its tail
 * (R x TailMargin and an MTU unsent). */
static WhTime fluid_length(const WhWormhole *wh, const WhFlow *f, double r, WhTime t0)
{
  WhTime now = wh->sim->now;
  double keep = r * (double)wh->p.tail_margin + wh->tp->p.mtu;
  double left = (double)(f->size - f->snd_max_sent) - r * (double)(now - t0) - keep;
  return left > 0 ? (WhTime)(left / r) : 0;
}

/* What port `port` has sent since its snapshot, in b/s (the snapshot taken before now). */
static double sent_bps(const WhWormhole *wh, uint32_t port)
{
  WhTime now = wh->sim->now, at = wh->seen_at[port];
  return (double)(wh->net->port[port].tx_bytes - wh->seen_tx[port]) * 8e12 / (double)(now - at);
}

/* Whether port `port` has been sending at about its line rate since its snapshot, its
 * reservations counted (no snapshot before now: yes). */
static gboolean saturated(const WhWormhole *wh, uint32_t port)
{
  WhTime at = wh->seen_at[port];
  if (at == 0 || wh->sim->now <= at)
    return TRUE;
  return sent_bps(wh, port) + wh->reserved[port] >=
         WH_FLUID_BUSY * (double)wh->net->port[port].line_bps;
}

/* Whether a flow may go fluid at `wire` b/s as far as its share of each port of its
 * path goes: at most its fair share (the port's line rate over the flows sending
 * there), or above it at a port that is not saturated (the others leave room).
 * A flow above its share where the port is full measured its rate while the others
 * sent less (starting, paused, held, slowed); held at that rate it would starve them.
 * FALSE with *later set: a port had no snapshot from between half a check interval
 * `iv` and three ago; one is taken now, ask again after `iv`. */
static gboolean fair(WhWormhole *wh, const WhFlow *f, double wire, WhTime iv, gboolean *later)
{
  WhTime now = wh->sim->now;
  gboolean ok = TRUE;
  *later = FALSE;
  for (uint16_t h = 0; h < f->fwd_hops; h++) {
    uint32_t port = f->fwd[h], n = wh->port_flows[port];
    const WhPort *p = &wh->net->port[port];
    if (n <= 1 || wire <= (1 + wh->p.det.theta) * (double)p->line_bps / n)
      continue;
    WhTime at = wh->seen_at[port];
    if (at == 0 || now - at < iv / 2 || now - at > 3 * iv) {
      wh->seen_tx[port] = p->tx_bytes;
      wh->seen_at[port] = now;
      *later = TRUE;
      ok = FALSE;
    } else if (saturated(wh, port)) {
      *later = FALSE;
      return FALSE;
    }
  }
  return ok;
}

static gboolean eligible(WhWormhole *wh, const WhFlow *f, const WhGlueFlow *g)
{
  WhTime srtt = (WhTime)g->srtt_ps, now = wh->sim->now;
  return f->state == WH_FLOW_ACTIVE && !f->held && g->ff != NULL && g->fluid == FLUID_NONE &&
         g->drain == NULL && srtt > 0 && f->snd_nxt >= f->snd_max_sent && f->next_path == NULL &&
         !(f->nack_sent && now - f->nack_time < 4 * srtt + wh->tp->p.nack_interval) &&
         wh_flow_park_slot(wh, f->id) == NONE && wh->net->router.choose == NULL;
}

/* A fluid flow above its fair share of a port (its line rate over the flows sending
 * there) whose other flows fill what it leaves them: in the exact run they would take
 * part of its rate back. Checked every quarter window, on each port's transmitted bytes
 * since the check before. */
static void check_shares(WhWormhole *wh)
{
  WhTime now = wh->sim->now, last = wh->fluid_checked;
  for (guint i = 0; i < wh->fluids->len; i++) {
    uint32_t id = g_array_index(wh->fluids, uint32_t, i);
    WhFlow *f = wh_transport_flow(wh->tp, id);
    WhGlueFlow *g = wh_wormhole_glue(wh, id);
    if (g->fluid != FLUID_PARKED)
      continue;
    for (uint16_t h = 0; h < f->fwd_hops; h++) {
      uint32_t port = f->fwd[h], n = wh->port_flows[port];
      const WhPort *p = &wh->net->port[port];
      if (n <= 1 || g->fluid_wire <= (1 + wh->p.det.theta) * (double)p->line_bps / n ||
          wh->seen_at[port] != last || now <= last)
        continue;
      if (sent_bps(wh, port) >= WH_FLUID_BUSY * (double)p->rate_bps) {
        wh->fs.squeezed++;
        wh_park_interrupt_slot(wh, wh_flow_park_slot(wh, id));
        break;
      }
    }
  }
  for (guint i = 0; i < wh->fluids->len; i++) {
    const WhFlow *f = wh_transport_flow(wh->tp, g_array_index(wh->fluids, uint32_t, i));
    for (uint16_t h = 0; h < f->fwd_hops; h++) {
      wh->seen_tx[f->fwd[h]] = wh->net->port[f->fwd[h]].tx_bytes;
      wh->seen_at[f->fwd[h]] = now;
    }
  }
  wh->fluid_checked = now;
}

/* Holds steady flows (t0), parks those whose flight has drained. */
static void fluid_event(WhSim *sim, void *ctx, uint64_t arg)
{
  (void)arg;
  WhWormhole *wh = ctx;
  wh->fluid_event = NULL;
  WhTime now = sim->now;
  const WhDetectorParams *dp = &wh->p.det;
  WhTime window = wh->p.fluid_window;
  gboolean check = wh->fluid_try && now >= wh->fluid_checked + window / WH_FLUID_BLOCKS;
  if (wh->fluid_try) {
    wh->fluid_try = FALSE;
    uint32_t n = wh_detector_n_active(wh->det);
    for (uint32_t i = 0; i < n; i++) {
      uint32_t id = wh_detector_active(wh->det, i);
      WhFlow *f = wh_transport_flow(wh->tp, id);
      WhGlueFlow *g = wh_wormhole_glue(wh, id);
      if (g->fluid_retry > now || !eligible(wh, f, g))
        continue;
      WhTime drift_for = WH_TIME_MAX;
      WhTime span = (WhTime)wh->fluid_stride * WH_FF_COARSE * dp->period + dp->period;
      double r = steady_rate(wh, g->ff, now > span ? now - span : 0, &drift_for);
      if (!(r > 0)) {
        g->fluid_retry = now + window / WH_FLUID_BLOCKS;
        continue;
      }
      /* a rate on a trend (a CC recovering over milliseconds) would stop its trend
       * while fluid: only where the trend takes WH_FLUID_TREND_WINDOWS windows to move it
       * by Theta */
      if (drift_for < WH_FLUID_TREND_WINDOWS * window) {
        wh->fs.refused_trend++;
        g->fluid_retry = now + window / WH_FLUID_BLOCKS;
        continue;
      }
      double wire = r * 8e12 * (double)wh->frame_bytes / (double)wh->tp->p.mtu;
      gboolean later;
      if (!fair(wh, f, wire, window / WH_FLUID_BLOCKS, &later)) {
        wh->fs.refused_unfair += !later;
        g->fluid_retry = now + window / WH_FLUID_BLOCKS;
        continue;
      }
      if (fluid_length(wh, f, r, now) < WH_FLUID_MIN_RTTS * (WhTime)g->srtt_ps) {
        wh->fs.refused_short++;
        g->fluid_retry = WH_TIME_MAX;
        continue;
      }
      g->fluid_rate = r;
      g->fluid_wire = wire;
      g->fluid_t0 = now;
      g->fluid_until = drift_for < WH_TIME_MAX - now ? now + drift_for : WH_TIME_MAX;
      g->fluid = FLUID_HOLDING;
      count_ports(wh, f, 1);
      g_array_append_val(wh->fluids, id);
      wh_transport_hold(wh->tp, f, TRUE);
      wh->fs.holds++;
    }
  }
  if (check)
    check_shares(wh);
  for (guint i = 0; i < wh->fluids->len; i++) {
    uint32_t id = g_array_index(wh->fluids, uint32_t, i);
    WhFlow *f = wh_transport_flow(wh->tp, id);
    WhGlueFlow *g = wh_wormhole_glue(wh, id);
    if (g->fluid == FLUID_CUT) {
      release(wh, f, g);
      i--;
      continue;
    }
    if (g->fluid != FLUID_HOLDING)
      continue;
    /* its reservation starts when its last packets have about passed the middle of its
     * path: before, they still load the ports; after, they no longer would */
    if (!g->fluid_reserved && now >= g->fluid_t0 + (WhTime)g->srtt_ps / 2) {
      reserve(wh, f, g, 1);
      g->fluid_reserved = TRUE;
    }
    if (f->snd_una < f->snd_nxt)
      continue;
    WhTime len = MIN(fluid_length(wh, f, g->fluid_rate, g->fluid_t0),
                     g->fluid_until > now ? g->fluid_until - now : 0);
    if (len < MAX(wh->p.min_skip, 1)) {
      release(wh, f, g);
      i--;
      continue;
    }
    if (!g->fluid_reserved)
      reserve(wh, f, g, 1);
    g->fluid_reserved = TRUE;
    g->fluid = FLUID_PARKED;
    g_autoptr(GArray) flows = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_autoptr(GArray) ports = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_array_append_val(flows, id);
    wh_park(wh, flows, ports, len, &fluid_policy);
    wh->fs.parks++;
  }
}

void wh_fluid_after_tick(WhWormhole *wh)
{
  wh->fluid_try = TRUE;
  ensure_event(wh);
}

void wh_fluid_on_ack(WhWormhole *wh, WhFlow *f, WhGlueFlow *g)
{
  if (g->fluid == FLUID_HOLDING && f->snd_una >= f->snd_nxt)
    ensure_event(wh);
}

void wh_fluid_count_path(WhWormhole *wh, const uint32_t *path, uint16_t hops, int sign)
{
  for (uint16_t h = 0; h < hops; h++)
    wh->port_flows[path[h]] += (uint32_t)sign;
}

/* A flow starts or ends on `f`'s data path: the fluid flows there end now. */
void wh_fluid_interrupt(WhWormhole *wh, const WhFlow *f)
{
  if (wh->fluids == NULL || wh->fluids->len == 0)
    return;
  gboolean any = FALSE;
  for (uint16_t h = 0; h < f->fwd_hops && !any; h++)
    any = wh->fluid_n[f->fwd[h]] > 0;
  if (!any)
    return;
  for (guint i = 0; i < wh->fluids->len; i++) {
    uint32_t id = g_array_index(wh->fluids, uint32_t, i);
    if (id == f->id)
      continue;
    WhFlow *x = wh_transport_flow(wh->tp, id);
    gboolean shared = FALSE;
    for (uint16_t a = 0; a < x->fwd_hops && !shared; a++)
      for (uint16_t b = 0; b < f->fwd_hops && !shared; b++)
        shared = x->fwd[a] == f->fwd[b];
    if (!shared)
      continue;
    WhGlueFlow *g = wh_wormhole_glue(wh, id);
    wh->fs.interrupts++;
    if (g->fluid == FLUID_HOLDING) {
      g->fluid = FLUID_CUT;
      ensure_event(wh);
    } else if (g->fluid == FLUID_PARKED) {
      wh_park_interrupt_slot(wh, wh_flow_park_slot(wh, id));
    }
  }
}

void wh_fluid_init(WhWormhole *wh)
{
  uint32_t n = wh->net->n_ports;
  wh->fluids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  WhTime mark_every = wh->p.det.period * WH_FF_COARSE;
  wh->fluid_stride = (uint32_t)MAX(1, (wh->p.fluid_window + mark_every - 1) / mark_every);
  wh->fluid_n = g_new0(uint32_t, n);
  wh->reserved = g_new0(double, n);
  wh->port_flows = g_new0(uint32_t, n);
  wh->seen_tx = g_new0(uint64_t, n);
  wh->seen_at = g_new0(WhTime, n);
}

void wh_fluid_finish(WhWormhole *wh)
{
  if (wh->fluids == NULL)
    return;
  while (wh->fluids->len > 0) {
    uint32_t id = g_array_index(wh->fluids, uint32_t, 0);
    release(wh, wh_transport_flow(wh->tp, id), wh_wormhole_glue(wh, id));
  }
  if (wh->fluid_event) {
    wh_sim_cancel(wh->sim, wh->fluid_event);
    wh->fluid_event = NULL;
  }
}

void wh_fluid_free(WhWormhole *wh)
{
  if (wh->fluids == NULL)
    return;
  g_array_unref(wh->fluids);
  g_free(wh->fluid_n);
  g_free(wh->reserved);
  g_free(wh->port_flows);
  g_free(wh->seen_tx);
  g_free(wh->seen_at);
}
