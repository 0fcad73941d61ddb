/* The steady-state detector; see steady-detector.h. */
#include "steady-detector.h"

#include <math.h>
#include <string.h>
#include "bulk.h"
#include "steady-detector-private.h"
#include "steady-window.h"
#include "units.h"

#define NONE WH_PARTITION_NONE
/* dR histogram: bin 0 holds dR == 0; then bins of 1% relative width from 1e-6 up;
 * the last bin holds everything above (and +inf). */
#define HIST_LO 1e-6
#define HIST_RATIO 1.01
#define HIST_BINS WH_DR_BINS

const double wh_dr_report_thetas[4] = {0.03, 0.05, 0.10, 0.20};

/* the detector's state is in steady-detector-private.h (shared with its report) */

static inline DFlow *flow_at(const WhDetector *d, uint32_t f)
{
  return wh_table_at(&d->flows, f);
}

/* Events run so far by a partition's ports (each once) and flows. */
static uint64_t part_events(WhDetector *d, const WhPartition *p)
{
  const WhEventCounts *c = d->counts;
  if (c == NULL)
    return 0;
  if (++d->stamp_gen == 0) {
    memset(d->stamp, 0, d->n_ports * sizeof(uint32_t));
    d->stamp_gen = 1;
  }
  uint64_t ev = 0;
  for (uint32_t f = wh_partitions_first_flow(p); f != NONE;
       f = wh_partitions_next_flow(d->pm, p, f)) {
    uint32_t n;
    const uint32_t *ports = wh_partitions_flow_ports(d->pm, f, &n);
    for (uint32_t i = 0; i < n; i++) {
      if (d->stamp[ports[i]] == d->stamp_gen || ports[i] >= c->n_ports)
        continue;
      d->stamp[ports[i]] = d->stamp_gen;
      ev += c->port[ports[i]];
    }
    if (f < c->flow_cap)
      ev += c->flow[f];
  }
  return ev;
}

static uint64_t part_bytes(WhDetector *d, const WhPartition *p)
{
  uint64_t b = 0;
  for (uint32_t f = wh_partitions_first_flow(p); f != NONE;
       f = wh_partitions_next_flow(d->pm, p, f))
    b += d->src.delivered(d->src.ctx, f);
  return b;
}

static void interval_open(WhDetector *d, WhPartition *p, WhSteadyKind kind, WhTime t)
{
  p->kind = (uint8_t)kind;
  p->kind_since = t;
  p->mark_events = part_events(d, p);
  p->mark_bytes = part_bytes(d, p);
}

static void interval_close(WhDetector *d, WhPartition *p, WhTime t)
{
  if (p->kind == WH_STEADY_NONE)
    return;
  Interval iv = {.part_id = p->id, .kind = p->kind, .flows = p->n_flows, .start = p->kind_since};
  iv.end = t;
  iv.events = part_events(d, p) - p->mark_events;
  iv.bytes = part_bytes(d, p) - p->mark_bytes;
  g_array_append_val(d->intervals, iv);
  d->st.intervals[iv.kind]++;
  d->st.flow_time[iv.kind] += (t - iv.start) * p->n_flows;
  d->st.bytes[iv.kind] += iv.bytes;
  d->st.events[iv.kind] += iv.events;
  for (uint32_t f = wh_partitions_first_flow(p); f != NONE;
       f = wh_partitions_next_flow(d->pm, p, f))
    flow_at(d, f)->part_steady += t - iv.start;
  p->kind = WH_STEADY_NONE;
  p->kind_since = t;
}

static void before_change(void *data, WhPartition *p)
{
  WhDetector *d = data;
  interval_close(d, p, d->now);
}

WhDetector *wh_detector_new(const WhDetectorParams *p, uint32_t n_ports,
                            const WhDetectorSource *src, const WhEventCounts *counts)
{
  g_return_val_if_fail(p->window >= 2 && p->period > 0 && p->theta >= 0 && p->theta < 1, NULL);
  WhDetector *d = g_new0(WhDetector, 1);
  d->p = *p;
  d->src = *src;
  d->counts = counts;
  d->n_ports = n_ports;
  d->pm = wh_partitions_new(n_ports, before_change, d);
  wh_table_init(&d->flows, sizeof(DFlow));
  d->windows = (WhRecycler){wh_bulk_new(), NULL, sizeof(WhSteadyWindow)};
  wh_steady_window_shape(p->window, &d->win_blocks, &d->win_block_size);
  d->active = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  d->intervals = g_array_new(FALSE, FALSE, sizeof(Interval));
  d->stamp = g_new0(uint32_t, n_ports);
  return d;
}

void wh_detector_free(WhDetector *d)
{
  if (d == NULL)
    return;
  wh_bulk_free(d->windows.bulk);
  wh_partitions_free(d->pm);
  wh_table_clear(&d->flows);
  g_array_unref(d->active);
  g_array_unref(d->intervals);
  g_free(d->stamp);
  g_free(d);
}

void wh_detector_flow_start(WhDetector *d, uint32_t flow, const uint32_t *ports, uint32_t n,
                            WhTime now)
{
  d->now = now;
  if (flow >= d->flows.len)
    wh_table_grow(&d->flows, flow + 1);
  DFlow *x = flow_at(d, flow);
  g_return_if_fail(x->state == 0);
  x->state = 1;
  x->start = now;
  x->baseline = 1;
  x->dr_min = INFINITY;
  x->win = wh_recycler_take(&d->windows);
  wh_steady_window_reset(x->win, d->win_blocks, d->win_block_size);
  x->active_slot = d->active->len;
  g_array_append_val(d->active, flow);
  d->st.flows_seen++;
  d->st.max_active = MAX(d->st.max_active, d->active->len);
  wh_partitions_add_flow(d->pm, flow, ports, n, WH_PFLAG_UNSTEADY | WH_PFLAG_BELOW_LINE, now);
}

void wh_detector_flow_end(WhDetector *d, uint32_t flow, WhTime now)
{
  d->now = now;
  g_return_if_fail(flow < d->flows.len && flow_at(d, flow)->state == 1);
  DFlow *x = flow_at(d, flow);
  wh_partitions_remove_flow(d->pm, flow, now);
  x->state = 2;
  x->end = now;
  wh_recycler_give(&d->windows, x->win);
  x->win = NULL;
  if (x->held)
    return;
  uint32_t last = g_array_index(d->active, uint32_t, d->active->len - 1);
  g_array_index(d->active, uint32_t, x->active_slot) = last;
  flow_at(d, last)->active_slot = x->active_slot;
  g_array_set_size(d->active, d->active->len - 1);
}

void wh_detector_flow_hold(WhDetector *d, uint32_t flow, gboolean held)
{
  g_return_if_fail(flow < d->flows.len && flow_at(d, flow)->state == 1);
  DFlow *x = flow_at(d, flow);
  if (x->held == (held != 0))
    return;
  x->held = held != 0;
  if (held) {
    uint32_t last = g_array_index(d->active, uint32_t, d->active->len - 1);
    g_array_index(d->active, uint32_t, x->active_slot) = last;
    flow_at(d, last)->active_slot = x->active_slot;
    g_array_set_size(d->active, d->active->len - 1);
  } else {
    x->active_slot = d->active->len;
    g_array_append_val(d->active, flow);
  }
}

void wh_detector_flow_reroute(WhDetector *d, uint32_t flow, const uint32_t *ports, uint32_t n,
                              WhTime now)
{
  d->now = now;
  wh_partitions_reroute_flow(d->pm, flow, ports, n, now);
}

void wh_detector_port_signal(WhDetector *d, uint32_t port, WhTime now)
{
  wh_partitions_port_signal(d->pm, port, now);
}

uint32_t wh_detector_n_active(const WhDetector *d)
{
  return d->active->len;
}

uint32_t wh_detector_active(const WhDetector *d, uint32_t i)
{
  return g_array_index(d->active, uint32_t, i);
}

static uint32_t hist_bin(double dr)
{
  if (dr <= 0)
    return 0;
  if (!isfinite(dr))
    return HIST_BINS - 1;
  double k = floor(log(dr / HIST_LO) / log(HIST_RATIO));
  if (k < 0)
    return 1;
  return (uint32_t)MIN(k + 2, (double)(HIST_BINS - 1));
}

void wh_detector_sample(WhDetector *d, uint32_t flow, WhTime t, double value, gboolean at_line)
{
  DFlow *x = flow_at(d, flow);
  uint8_t flags = wh_partitions_flags(d->pm, flow);
  flags = at_line ? flags & ~WH_PFLAG_BELOW_LINE : flags | WH_PFLAG_BELOW_LINE;
  x->at_line = at_line != 0;
  if (x->baseline) {
    x->baseline = 0;
    wh_partitions_set_flags(d->pm, flow, flags);
    return;
  }
  d->st.samples++;
  x->samples++;
  double dr, mean;
  if (wh_steady_window_push(x->win, value, &dr, &mean)) {
    if (d->p.mean_rule)
      dr = wh_steady_window_mean_spread(x->win);
    x->steady = dr < d->p.theta;
    flags = x->steady ? flags & ~WH_PFLAG_UNSTEADY : flags | WH_PFLAG_UNSTEADY;
    if (t < d->p.stats_from)
      goto done;
    d->st.evaluations++;
    x->evals++;
    wh_dr_stats_add(&d->dr, dr);
    for (unsigned i = 0; i < 4; i++)
      d->st.steady_evals[i] += dr < wh_dr_report_thetas[i];
    d->st.steady_evals_theta += x->steady;
    if (isfinite(dr)) {
      x->finite_evals++;
      x->dr_sum += dr;
      x->dr_min = MIN(x->dr_min, (float)dr);
      x->dr_max = MAX(x->dr_max, (float)dr);
    } else {
      x->dr_max = INFINITY;
    }
  }
done:
  x->steady_samples += x->steady;
  wh_partitions_set_flags(d->pm, flow, flags);
}

void wh_detector_tick(WhDetector *d, WhTime t)
{
  d->now = t;
  d->st.ticks++;
  d->max_live = MAX(d->max_live, wh_partitions_n_live(d->pm));
  for (uint32_t i = 0; i < wh_partitions_n_live(d->pm); i++) {
    WhPartition *p = wh_partitions_live(d->pm, i);
    d->size_ticks[MIN(p->n_flows, WH_DETECTOR_SIZE_BINS - 1)]++;
    WhSteadyKind kind = WH_STEADY_NONE;
    if (p->n_flows > 0 && p->n_flag[0] == 0)
      kind = WH_STEADY_RATE;
    else if (d->p.idle_rule && p->n_flows > 0 && p->n_flag[1] == 0 &&
             t - p->since >= d->p.idle_window &&
             (p->last_signal == 0 || t - p->last_signal >= d->p.idle_window))
      kind = WH_STEADY_IDLE;
    if (kind == p->kind)
      continue;
    interval_close(d, p, t);
    if (kind != WH_STEADY_NONE)
      interval_open(d, p, kind, t);
  }
}

void wh_detector_finish(WhDetector *d, WhTime now)
{
  d->now = now;
  for (uint32_t i = 0; i < wh_partitions_n_live(d->pm); i++)
    interval_close(d, wh_partitions_live(d->pm, i), now);
}

void wh_detector_stats(const WhDetector *d, WhDetectorStats *out)
{
  *out = d->st;
}

void wh_dr_stats_add(WhDrStats *s, double dr)
{
  s->n++;
  s->hist[hist_bin(dr)]++;
  for (unsigned i = 0; i < 4; i++)
    s->below[i] += dr < wh_dr_report_thetas[i];
}

double wh_dr_stats_quantile(const WhDrStats *s, double q)
{
  if (s->n == 0)
    return NAN;
  uint64_t want = (uint64_t)ceil(q * (double)s->n), seen = 0;
  if (want == 0)
    want = 1;
  for (uint32_t b = 0; b < HIST_BINS; b++) {
    seen += s->hist[b];
    if (seen >= want) {
      if (b == 0)
        return 0;
      if (b == 1)
        return HIST_LO;
      if (b == HIST_BINS - 1)
        return INFINITY;
      return HIST_LO * pow(HIST_RATIO, (double)(b - 2) + 0.5);
    }
  }
  return INFINITY;
}

double wh_detector_dr_quantile(const WhDetector *d, double q)
{
  return wh_dr_stats_quantile(&d->dr, q);
}

const WhPartitions *wh_detector_partitions(const WhDetector *d)
{
  return d->pm;
}

gboolean wh_detector_flow_steady(const WhDetector *d, uint32_t flow)
{
  return flow < d->flows.len && flow_at(d, flow)->steady;
}

gboolean wh_detector_flow(const WhDetector *d, uint32_t flow, WhDetectorFlow *out)
{
  if (flow >= d->flows.len)
    return FALSE;
  const DFlow *x = flow_at(d, flow);
  if (x->state == 0)
    return FALSE;
  WhTime end = x->state == 2 ? x->end : d->now;
  *out = (WhDetectorFlow){
      .start = x->start,
      .end = end,
      .samples = x->samples,
      .evaluations = x->evals,
      .steady_fraction = x->samples ? (double)x->steady_samples / x->samples : 0,
      .partition_steady_fraction =
          end > x->start ? (double)x->part_steady / (double)(end - x->start) : 0,
      .dr_min = x->finite_evals ? x->dr_min : NAN,
      .dr_mean = x->finite_evals ? x->dr_sum / x->finite_evals : NAN,
      .dr_max = x->evals ? x->dr_max : NAN,
  };
  return TRUE;
}
