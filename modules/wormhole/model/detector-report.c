/* The steady-state detector's report (detector-report.h): its counts, dR statistics,
 * partition history, steady intervals and per-flow records as json-glib objects, read
 * from the detector's state after (or during) a run. Cost: one pass over the flows,
 * intervals and partitions recorded; nothing during the run. */
#include "detector-report.h"

#include <math.h>
#include "json-text.h"
#include "steady-detector-private.h"
#include "units.h"

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
