/* The steady-state detector; see steady-detector.h. */
#include "steady-detector.h"

#include <math.h>
#include <string.h>
#include "bulk.h"
#include "steady-window.h"

#define NONE WH_PARTITION_NONE
/* dR histogram: bin 0 holds dR == 0; then bins of 1% relative width from 1e-6 up;
 * the last bin holds everything above (and +inf). */
#define HIST_LO 1e-6
#define HIST_RATIO 1.01
#define HIST_BINS WH_DR_BINS

const double wh_dr_report_thetas[4] = {0.03, 0.05, 0.10, 0.20};

typedef struct {
  WhSteadyWindow *win; /* while active */
  uint32_t active_slot;
  uint8_t state; /* 0 unseen, 1 active, 2 ended */
  uint8_t steady, at_line, baseline, held;
  WhTime start, end;
  uint32_t samples, steady_samples;
  uint32_t evals, finite_evals;
  float dr_min, dr_max;
  double dr_sum;
  WhTime part_steady; /* time in a steady partition */
} DFlow;

typedef struct {
  uint32_t part_id;
  uint8_t kind;
  uint32_t flows;
  WhTime start, end;
  uint64_t bytes, events;
} Interval;

struct WhDetector {
  WhDetectorParams p;
  WhDetectorSource src;
  const WhEventCounts *counts;
  WhPartitions *pm;
  WhTable flows;  /* DFlow by id */
  GArray *active; /* uint32 flow ids */
  GArray *intervals;
  WhDrStats dr;
  WhDetectorStats st;
  uint32_t *stamp; /* per port: last visit mark, to count each port once */
  uint32_t stamp_gen;
  uint32_t n_ports;
  WhTime now;
  /* partition-ticks by member count (the last bin: that many or more) */
  uint64_t size_ticks[WH_DETECTOR_SIZE_BINS];
  uint32_t max_live;
};

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
  d->active = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  d->intervals = g_array_new(FALSE, FALSE, sizeof(Interval));
  d->stamp = g_new0(uint32_t, n_ports);
  return d;
}

void wh_detector_free(WhDetector *d)
{
  if (d == NULL)
    return;
  for (guint i = 0; i < d->flows.len; i++)
    g_free(flow_at(d, i)->win);
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
  x->win = g_new(WhSteadyWindow, 1);
  wh_steady_window_init(x->win, d->p.window);
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
  g_free(x->win);
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

/* ---- report ---- */

static const char *kind_name(uint8_t k)
{
  return k == WH_STEADY_RATE ? "rate" : k == WH_STEADY_IDLE ? "idle" : "none";
}

static void json_num(GString *j, double v)
{
  if (isfinite(v))
    g_string_append_printf(j, "%.6g", v);
  else
    g_string_append(j, "null");
}

void wh_dr_stats_json(const WhDrStats *s, GString *j)
{
  g_string_append_printf(j, "{\"evaluations\": %" G_GUINT64_FORMAT ", \"p10\": ", s->n);
  json_num(j, wh_dr_stats_quantile(s, 0.10));
  g_string_append(j, ", \"median\": ");
  json_num(j, wh_dr_stats_quantile(s, 0.5));
  g_string_append(j, ", \"p90\": ");
  json_num(j, wh_dr_stats_quantile(s, 0.90));
  g_string_append(j, ", \"steady_fraction\": {");
  double n = s->n ? (double)s->n : 1;
  for (unsigned i = 0; i < 4; i++)
    g_string_append_printf(j, "%s\"%.2f\": %.6f", i ? ", " : "", wh_dr_report_thetas[i],
                           (double)s->below[i] / n);
  g_string_append(j, "}}");
}

static void json_history(const WhDetector *d, GString *j)
{
  uint64_t merges, splits, rebuilds;
  wh_partitions_counts(d->pm, &merges, &splits, &rebuilds);
  uint32_t n = wh_partitions_n_records(d->pm), max_flows = 0;
  for (uint32_t i = 0; i < n; i++)
    max_flows = MAX(max_flows, wh_partitions_record(d->pm, i)->max_flows);
  static const char *const causes[] = {"new", "merge", "split"};
  g_string_append_printf(j,
                         "  \"partitions\": {\"created\": %u, \"merges\": %" G_GUINT64_FORMAT
                         ", \"splits\": %" G_GUINT64_FORMAT ", \"rebuilds\": %" G_GUINT64_FORMAT
                         ", \"max_flows\": %u, \"history\": [\n",
                         n, merges, splits, rebuilds, max_flows);
  for (uint32_t i = 0; i < n; i++) {
    const WhPartitionRecord *r = wh_partitions_record(d->pm, i);
    g_string_append_printf(j,
                           "    {\"id\": %u, \"cause\": \"%s\", \"created_ps\": %" G_GUINT64_FORMAT,
                           r->id, causes[r->cause], (guint64)r->created);
    if (r->ended != WH_TIME_MAX)
      g_string_append_printf(j, ", \"ended_ps\": %" G_GUINT64_FORMAT, (guint64)r->ended);
    g_string_append(j, ", \"parents\": [");
    for (uint32_t k = 0; k < MIN(r->n_parents, 2u); k++)
      g_string_append_printf(j, "%s%u", k ? ", " : "", r->parents[k]);
    if (r->n_parents > 2)
      g_string_append_printf(j, ", \"+%u more\"", r->n_parents - 2);
    g_string_append_printf(j, "], \"max_flows\": %u, \"joins\": %u}%s\n", r->max_flows, r->joins,
                           i + 1 < n ? "," : "");
  }
  g_string_append(j, "  ]},\n");
}

/* How big partitions were, sampled at every tick. */
static void json_sizes(const WhDetector *d, GString *j)
{
  g_string_append_printf(j, "  \"partition_sizes\": {\"max_live\": %u, \"ticks_by_flows\": {",
                         d->max_live);
  gboolean first = TRUE;
  for (uint32_t n = 0; n < WH_DETECTOR_SIZE_BINS; n++) {
    if (d->size_ticks[n] == 0)
      continue;
    g_string_append_printf(j, "%s\"%u%s\": %" G_GUINT64_FORMAT, first ? "" : ", ", n,
                           n == WH_DETECTOR_SIZE_BINS - 1 ? "+" : "", d->size_ticks[n]);
    first = FALSE;
  }
  g_string_append(j, "}},\n");
}

static void json_intervals(const WhDetector *d, GString *j)
{
  g_string_append(j, "  \"steady_intervals\": {\"columns\": [\"partition\", \"kind\", \"flows\", "
                     "\"start_ps\", \"end_ps\", \"bytes\", \"events\"], \"rows\": [\n");
  for (guint i = 0; i < d->intervals->len; i++) {
    const Interval *iv = &g_array_index(d->intervals, Interval, i);
    g_string_append_printf(j,
                           "    [%u, \"%s\", %u, %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
                           ", %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT "]%s\n",
                           iv->part_id, kind_name(iv->kind), iv->flows, (guint64)iv->start,
                           (guint64)iv->end, iv->bytes, iv->events,
                           i + 1 < d->intervals->len ? "," : "");
  }
  g_string_append(j, "  ]},\n");
}

static void json_flows(const WhDetector *d, GString *j)
{
  g_string_append(j, "  \"flows\": {\"columns\": [\"flow\", \"start_ps\", \"end_ps\", \"samples\", "
                     "\"steady_fraction\", \"partition_steady_fraction\", \"evaluations\", "
                     "\"dr_min\", \"dr_mean\", \"dr_max\"], \"rows\": [\n");
  gboolean first = TRUE;
  char buf[24];
  for (guint i = 0; i < d->flows.len; i++) {
    const DFlow *x = flow_at(d, i);
    if (x->state == 0)
      continue;
    WhTime end = x->state == 2 ? x->end : d->now;
    g_autofree char *label = g_strescape(d->src.label(d->src.ctx, i, buf), NULL);
    g_string_append_printf(j, "%s    [\"%s\", %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ", %u, ",
                           first ? "" : ",\n", label, (guint64)x->start, (guint64)end, x->samples);
    json_num(j, x->samples ? (double)x->steady_samples / x->samples : 0);
    g_string_append(j, ", ");
    json_num(j, end > x->start ? (double)x->part_steady / (double)(end - x->start) : 0);
    g_string_append_printf(j, ", %u, ", x->evals);
    json_num(j, x->finite_evals ? x->dr_min : NAN);
    g_string_append(j, ", ");
    json_num(j, x->finite_evals ? x->dr_sum / x->finite_evals : NAN);
    g_string_append(j, ", ");
    json_num(j, x->evals ? x->dr_max : NAN);
    g_string_append(j, "]");
    first = FALSE;
  }
  g_string_append(j, "\n  ]}\n");
}

char *wh_detector_json(const WhDetector *d, const char *header)
{
  const WhDetectorStats *s = &d->st;
  GString *j = g_string_new("{\n");
  if (header)
    g_string_append(j, header);
  uint32_t blocks, bsize;
  wh_steady_window_shape(d->p.window, &blocks, &bsize);
  g_string_append_printf(j, "  \"window_blocks\": %u,\n  \"block_samples\": %u,\n", blocks, bsize);
  g_string_append_printf(j,
                         "  \"ticks\": %" G_GUINT64_FORMAT ",\n  \"samples\": %" G_GUINT64_FORMAT
                         ",\n  \"flows_observed\": %u,\n  \"max_active_flows\": %u,\n",
                         s->ticks, s->samples, s->flows_seen, s->max_active);
  g_string_append(j, "  \"dr\": ");
  wh_dr_stats_json(&d->dr, j);
  g_string_append_printf(j, ",\n  \"steady_fraction_theta\": %.6f,\n",
                         s->evaluations ? (double)s->steady_evals_theta / (double)s->evaluations
                                        : 0.0);
  uint64_t total_ev = d->counts ? d->counts->total : 0;
  g_string_append(j, "  \"steady\": {");
  for (unsigned k = WH_STEADY_RATE; k <= WH_STEADY_IDLE; k++)
    g_string_append_printf(
        j,
        "\"%s\": {\"intervals\": %" G_GUINT64_FORMAT ", \"flow_time_ps\": %" G_GUINT64_FORMAT
        ", \"bytes\": %" G_GUINT64_FORMAT ", \"events\": %" G_GUINT64_FORMAT "}, ",
        kind_name((uint8_t)k), s->intervals[k], (guint64)s->flow_time[k], s->bytes[k],
        s->events[k]);
  uint64_t skip_ev = s->events[1] + s->events[2];
  g_string_append_printf(
      j,
      "\"events_total\": %" G_GUINT64_FORMAT ", \"skippable_events_est\": %" G_GUINT64_FORMAT
      ", \"skippable_bytes_est\": %" G_GUINT64_FORMAT ", \"skippable_event_fraction\": %.6f},\n",
      total_ev, skip_ev, s->bytes[1] + s->bytes[2],
      total_ev ? (double)skip_ev / (double)total_ev : 0.0);
  json_sizes(d, j);
  json_history(d, j);
  json_intervals(d, j);
  json_flows(d, j);
  g_string_append(j, "}\n");
  return g_string_free(j, FALSE);
}
