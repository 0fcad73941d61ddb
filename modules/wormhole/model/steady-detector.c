/* The steady-state detector; see steady-detector.h. */
#include "steady-detector.h"

#include <math.h>
#include <string.h>
#include "bulk.h"
#include "json-text.h"
#include "steady-window.h"
#include "units.h"

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

/* ---- report ---- */

static const char *kind_name(uint8_t k)
{
  return k == WH_STEADY_RATE ? "rate" : k == WH_STEADY_IDLE ? "idle" : "none";
}

/* `v` to six significant digits, or null when it is not finite. */
static JsonNode *num_g6(double v)
{
  JsonNode *n = json_node_alloc();
  return isfinite(v) ? json_node_init_double(n, wh_units_round(v, "%.6g")) : json_node_init_null(n);
}

/* `v` to six decimals. */
static double fixed6(double v)
{
  return wh_units_round(v, "%.6f");
}

JsonObject *wh_dr_stats_json(const WhDrStats *s)
{
  JsonObject *o = json_object_new(), *frac = json_object_new();
  json_object_set_int_member(o, "evaluations", (gint64)s->n);
  json_object_set_member(o, "p10", num_g6(wh_dr_stats_quantile(s, 0.10)));
  json_object_set_member(o, "median", num_g6(wh_dr_stats_quantile(s, 0.5)));
  json_object_set_member(o, "p90", num_g6(wh_dr_stats_quantile(s, 0.90)));
  double n = s->n ? (double)s->n : 1;
  for (unsigned i = 0; i < 4; i++) {
    char key[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(key, sizeof key, "%.2f", wh_dr_report_thetas[i]);
    json_object_set_double_member(frac, key, fixed6((double)s->below[i] / n));
  }
  json_object_set_object_member(o, "steady_fraction", frac);
  return o;
}

static void json_history(const WhDetector *d, JsonObject *o)
{
  uint64_t merges, splits, rebuilds;
  wh_partitions_counts(d->pm, &merges, &splits, &rebuilds);
  uint32_t n = wh_partitions_n_records(d->pm), max_flows = 0;
  static const char *const causes[] = {"new", "merge", "split"};
  JsonArray *history = json_array_new();
  for (uint32_t i = 0; i < n; i++) {
    const WhPartitionRecord *r = wh_partitions_record(d->pm, i);
    max_flows = MAX(max_flows, r->max_flows);
    JsonObject *x = json_object_new();
    JsonArray *parents = json_array_new();
    json_object_set_int_member(x, "id", r->id);
    json_object_set_string_member(x, "cause", causes[r->cause]);
    json_object_set_int_member(x, "created_ps", (gint64)r->created);
    if (r->ended != WH_TIME_MAX)
      json_object_set_int_member(x, "ended_ps", (gint64)r->ended);
    for (uint32_t k = 0; k < MIN(r->n_parents, 2u); k++)
      json_array_add_int_element(parents, r->parents[k]);
    if (r->n_parents > 2) {
      g_autofree char *more = g_strdup_printf("+%u more", r->n_parents - 2);
      json_array_add_string_element(parents, more);
    }
    json_object_set_array_member(x, "parents", parents);
    json_object_set_int_member(x, "max_flows", r->max_flows);
    json_object_set_int_member(x, "joins", r->joins);
    json_array_add_object_element(history, x);
  }
  JsonObject *p = json_object_new();
  json_object_set_int_member(p, "created", n);
  json_object_set_int_member(p, "merges", (gint64)merges);
  json_object_set_int_member(p, "splits", (gint64)splits);
  json_object_set_int_member(p, "rebuilds", (gint64)rebuilds);
  json_object_set_int_member(p, "max_flows", max_flows);
  json_object_set_array_member(p, "history", history);
  json_object_set_object_member(o, "partitions", p);
}

/* How big partitions were, sampled at every tick. */
static void json_sizes(const WhDetector *d, JsonObject *o)
{
  JsonObject *sizes = json_object_new(), *ticks = json_object_new();
  json_object_set_int_member(sizes, "max_live", d->max_live);
  for (uint32_t n = 0; n < WH_DETECTOR_SIZE_BINS; n++) {
    if (d->size_ticks[n] == 0)
      continue;
    g_autofree char *key = g_strdup_printf("%u%s", n, n == WH_DETECTOR_SIZE_BINS - 1 ? "+" : "");
    json_object_set_int_member(ticks, key, (gint64)d->size_ticks[n]);
  }
  json_object_set_object_member(sizes, "ticks_by_flows", ticks);
  json_object_set_object_member(o, "partition_sizes", sizes);
}

/* A table: {"columns": [names...], "rows": `rows`} (transfer full of `rows`). */
static JsonObject *table(const char *const *columns, JsonArray *rows)
{
  JsonObject *t = json_object_new();
  JsonArray *c = json_array_new();
  for (const char *const *p = columns; *p; p++)
    json_array_add_string_element(c, *p);
  json_object_set_array_member(t, "columns", c);
  json_object_set_array_member(t, "rows", rows);
  return t;
}

static void json_intervals(const WhDetector *d, JsonObject *o)
{
  static const char *const cols[] = {"partition", "kind",  "flows",  "start_ps",
                                     "end_ps",    "bytes", "events", NULL};
  JsonArray *rows = json_array_new();
  for (guint i = 0; i < d->intervals->len; i++) {
    const Interval *iv = &g_array_index(d->intervals, Interval, i);
    JsonArray *r = json_array_new();
    json_array_add_int_element(r, iv->part_id);
    json_array_add_string_element(r, kind_name(iv->kind));
    json_array_add_int_element(r, iv->flows);
    json_array_add_int_element(r, (gint64)iv->start);
    json_array_add_int_element(r, (gint64)iv->end);
    json_array_add_int_element(r, (gint64)iv->bytes);
    json_array_add_int_element(r, (gint64)iv->events);
    json_array_add_array_element(rows, r);
  }
  json_object_set_object_member(o, "steady_intervals", table(cols, rows));
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

uint32_t wh_detector_flow_count(const WhDetector *d)
{
  return d->flows.len;
}

static void json_flows(const WhDetector *d, JsonObject *o)
{
  static const char *const cols[] = {"flow",
                                     "start_ps",
                                     "end_ps",
                                     "samples",
                                     "steady_fraction",
                                     "partition_steady_fraction",
                                     "evaluations",
                                     "dr_min",
                                     "dr_mean",
                                     "dr_max",
                                     NULL};
  JsonArray *rows = json_array_new();
  char buf[24];
  WhDetectorFlow x;
  for (guint i = 0; i < d->flows.len; i++) {
    if (!wh_detector_flow(d, i, &x))
      continue;
    JsonArray *r = json_array_new();
    json_array_add_string_element(r, d->src.label(d->src.ctx, i, buf));
    json_array_add_int_element(r, (gint64)x.start);
    json_array_add_int_element(r, (gint64)x.end);
    json_array_add_int_element(r, x.samples);
    json_array_add_element(r, num_g6(x.steady_fraction));
    json_array_add_element(r, num_g6(x.partition_steady_fraction));
    json_array_add_int_element(r, x.evaluations);
    json_array_add_element(r, num_g6(x.dr_min));
    json_array_add_element(r, num_g6(x.dr_mean));
    json_array_add_element(r, num_g6(x.dr_max));
    json_array_add_array_element(rows, r);
  }
  json_object_set_object_member(o, "flows", table(cols, rows));
}

/* The steady time, bytes and events by the rule that found them, and what a fast-forward
 * could skip at most. */
static void json_steady(const WhDetector *d, JsonObject *o)
{
  const WhDetectorStats *s = &d->st;
  uint64_t total_ev = d->counts ? d->counts->total : 0;
  JsonObject *steady = json_object_new();
  for (unsigned k = WH_STEADY_RATE; k <= WH_STEADY_IDLE; k++) {
    JsonObject *x = json_object_new();
    json_object_set_int_member(x, "intervals", (gint64)s->intervals[k]);
    json_object_set_int_member(x, "flow_time_ps", (gint64)s->flow_time[k]);
    json_object_set_int_member(x, "bytes", (gint64)s->bytes[k]);
    json_object_set_int_member(x, "events", (gint64)s->events[k]);
    json_object_set_object_member(steady, kind_name((uint8_t)k), x);
  }
  uint64_t skip_ev = s->events[1] + s->events[2];
  json_object_set_int_member(steady, "events_total", (gint64)total_ev);
  json_object_set_int_member(steady, "skippable_events_est", (gint64)skip_ev);
  json_object_set_int_member(steady, "skippable_bytes_est", (gint64)(s->bytes[1] + s->bytes[2]));
  json_object_set_double_member(steady, "skippable_event_fraction",
                                fixed6(total_ev ? (double)skip_ev / (double)total_ev : 0.0));
  json_object_set_object_member(o, "steady", steady);
}

char *wh_detector_json_object(const WhDetector *d, JsonObject *o, gboolean per_flow)
{
  const WhDetectorStats *s = &d->st;
  uint32_t blocks, bsize;
  wh_steady_window_shape(d->p.window, &blocks, &bsize);
  json_object_set_int_member(o, "window_blocks", blocks);
  json_object_set_int_member(o, "block_samples", bsize);
  json_object_set_int_member(o, "ticks", (gint64)s->ticks);
  json_object_set_int_member(o, "samples", (gint64)s->samples);
  json_object_set_int_member(o, "flows_observed", s->flows_seen);
  json_object_set_int_member(o, "max_active_flows", s->max_active);
  json_object_set_object_member(o, "dr", wh_dr_stats_json(&d->dr));
  json_object_set_double_member(
      o, "steady_fraction_theta",
      fixed6(s->evaluations ? (double)s->steady_evals_theta / (double)s->evaluations : 0.0));
  json_steady(d, o);
  json_sizes(d, o);
  json_history(d, o);
  json_intervals(d, o);
  if (per_flow)
    json_flows(d, o);
  return wh_json_text(o);
}

char *wh_detector_json(const WhDetector *d, const char *header)
{
  g_autoptr(JsonObject) o = json_object_new();
  g_autofree char *text = wh_detector_json_object(d, o, TRUE);
  if (header == NULL || *header == '\0')
    return g_steal_pointer(&text);
  return g_strconcat("{\n", header, text + strlen("{\n"), NULL);
}
