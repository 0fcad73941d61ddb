/* The exact engine against Wormhole on one scenario; see compare.h. */
#include "compare.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gnuplot.h"
#include "outputs.h"
#include "units.h"

enum { EXACT, WORMHOLE, N_SIDES };

typedef struct {
  uint32_t rank;
  const char *kind; /* static */
  char *name;
  WhTime end;
  gboolean ended;
} OpEnd;

/* What the comparison keeps of one run once the run is freed. */
typedef struct {
  const char *what; /* "exact" or "wormhole" */
  WhRunOptions opts;
  char **sets; /* the options' sets (owned) */
  char *dir;
  char *scheduler, *inner_scheduler, *mode;
  const char *cc; /* static */
  uint64_t seed;
  double wall_s;
  uint64_t events, advanced_bytes;
  WhTime sim_end, makespan;
  GArray *flows;             /* WhCompareFlow */
  GArray *ops;               /* OpEnd; empty without a workload */
  GArray *iterations;        /* WhTime per iteration; empty without a workload or when stopped */
  char *summary;             /* its summary.json */
  char *problem;             /* nullable: ended early or inconsistent */
  const char *stopped_early; /* nullable: why it stopped before its natural end (static) */
} Side;

struct WhCompare {
  WhScenario *sc;
  char *dir;
  gboolean workload;
  WhRun *exact_run; /* built by wh_compare_new, freed once executed */
  Side side[N_SIDES];
  WhCompareFctError fct;
  int64_t *match; /* per exact flow: the Wormhole flow's index, or -1 */
  double *flow_error;
  uint32_t ops_compared;
  double op_error_mean, op_error_max;
  char *memo_warning; /* nullable: the memo file was ignored: why */
  GPtrArray *plots;   /* file names */
  const char *plots_note;
  char *problem;
};

/* ---- matching and errors ---- */

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static gboolean index_keys(const WhCompareFlow *f, uint32_t n, const char *what, GHashTable *index,
                           GError **error)
{
  for (uint32_t i = 0; i < n; i++) {
    if (!g_hash_table_insert(index, (gpointer)f[i].key, GUINT_TO_POINTER(i))) {
      g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                  "the %s run has two flows with the key \"%s\": flows cannot be matched", what,
                  f[i].key);
      return FALSE;
    }
  }
  return TRUE;
}

gboolean wh_compare_match_flows(const WhCompareFlow *exact, uint32_t n_exact,
                                const WhCompareFlow *wormhole, uint32_t n_wormhole, int64_t *match,
                                WhCompareFctError *out, GError **error)
{
  memset(out, 0, sizeof *out);
  g_autoptr(GHashTable) ex = g_hash_table_new(g_str_hash, g_str_equal);
  g_autoptr(GHashTable) wh = g_hash_table_new(g_str_hash, g_str_equal);
  if (!index_keys(exact, n_exact, "exact", ex, error) ||
      !index_keys(wormhole, n_wormhole, "Wormhole", wh, error))
    return FALSE;
  g_autofree double *err = g_new(double, n_exact ? n_exact : 1);
  double sum = 0, sum_signed = 0;
  for (uint32_t i = 0; i < n_exact; i++) {
    gpointer v;
    match[i] = -1;
    if (!g_hash_table_lookup_extended(wh, exact[i].key, NULL, &v)) {
      out->only_exact++;
      continue;
    }
    const WhCompareFlow *e = &exact[i], *w = &wormhole[GPOINTER_TO_UINT(v)];
    match[i] = GPOINTER_TO_UINT(v);
    if (e->finish == 0 || w->finish == 0 || e->finish <= e->start) {
      out->unfinished++;
      continue;
    }
    double fe = (double)(e->finish - e->start), fw = (double)w->finish - (double)w->start;
    double rel = (fw - fe) / fe;
    err[out->matched++] = fabs(rel);
    sum += fabs(rel);
    sum_signed += rel;
  }
  for (uint32_t i = 0; i < n_wormhole; i++)
    out->only_wormhole += !g_hash_table_contains(ex, wormhole[i].key);
  if (out->matched) {
    qsort(err, out->matched, sizeof *err, cmp_double);
    out->mean = sum / out->matched;
    out->signed_mean = sum_signed / out->matched;
    out->max = err[out->matched - 1];
    out->p99 = err[(uint32_t)ceil(0.99 * out->matched) - 1];
  }
  return TRUE;
}

/* ---- the two runs ---- */

static void side_clear(Side *s)
{
  g_strfreev(s->sets);
  g_free(s->dir);
  g_free(s->scheduler);
  g_free(s->inner_scheduler);
  g_free(s->mode);
  if (s->flows)
    g_array_unref(s->flows);
  for (guint i = 0; s->ops && i < s->ops->len; i++)
    g_free(g_array_index(s->ops, OpEnd, i).name);
  if (s->ops)
    g_array_unref(s->ops);
  if (s->iterations)
    g_array_unref(s->iterations);
  g_free(s->summary);
  g_free(s->problem);
}

void wh_compare_free(WhCompare *c)
{
  if (c == NULL)
    return;
  wh_run_free(c->exact_run);
  for (int k = 0; k < N_SIDES; k++)
    side_clear(&c->side[k]);
  g_free(c->match);
  g_free(c->flow_error);
  if (c->plots)
    g_ptr_array_unref(c->plots);
  g_free(c->problem);
  g_free(c->memo_warning);
  g_free(c->dir);
  g_free(c);
}

/* The options of one side: the user's, plus for the exact run Mode=off on the stock
 * scheduler, for the other --scheduler wormhole. */
static void side_options(WhCompare *c, int k, const WhRunOptions *opts)
{
  Side *s = &c->side[k];
  s->what = k == EXACT ? "exact" : "wormhole";
  if (opts)
    s->opts = *opts;
  s->opts.progress_label = s->what;
  GPtrArray *sets = g_ptr_array_new();
  for (char **p = opts && opts->sets ? opts->sets : NULL; p && *p; p++)
    g_ptr_array_add(sets, g_strdup(*p));
  if (k == EXACT) {
    s->opts.memo_file = NULL; /* the memo database is the Wormhole run's */
    g_ptr_array_add(sets, g_strdup("wh::Wormhole::Mode=off"));
    const char *user = opts ? opts->scheduler : NULL;
    if (g_strcmp0(user, "wormhole") == 0 ||
        (user == NULL && g_strcmp0(c->sc->scheduler, "wormhole") == 0))
      s->opts.scheduler = "heap";
  } else {
    s->opts.scheduler = "wormhole";
  }
  g_ptr_array_add(sets, NULL);
  s->sets = (char **)g_ptr_array_free(sets, FALSE);
  s->opts.sets = s->sets;
}

WhCompare *wh_compare_new(WhScenario *sc, const WhRunOptions *opts, const char *out_dir,
                          GError **error)
{
  g_autoptr(WhCompare) c = g_new0(WhCompare, 1);
  c->sc = sc;
  for (int k = 0; k < N_SIDES; k++)
    side_options(c, k, opts);
  c->exact_run = wh_run_new(sc, &c->side[EXACT].opts, error);
  if (c->exact_run == NULL)
    return NULL;
  if (c->exact_run->tp->n_flows == 0 && c->exact_run->workload == NULL) {
    g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                "%s: nothing to compare: the scenario has neither flows (<flows>, <permutation>, "
                "<shift>, <uniform>) nor a workload",
                sc->path);
    return NULL;
  }
  g_autoptr(WhRun) check = wh_run_new(sc, &c->side[WORMHOLE].opts, error);
  if (check == NULL)
    return NULL;
  c->memo_warning = g_strdup(check->memo_warning);
  c->workload = c->exact_run->workload != NULL;
  c->dir = g_strdup(out_dir);
  if (!wh_output_dir_prepare(out_dir, error))
    return NULL;
  for (int k = 0; k < N_SIDES; k++) {
    c->side[k].dir = g_build_filename(out_dir, c->side[k].what, NULL);
    if (!wh_output_dir_prepare(c->side[k].dir, error))
      return NULL;
  }
  return g_steal_pointer(&c);
}

const WhRun *wh_compare_exact_run(const WhCompare *c)
{
  return c->exact_run;
}

const char *wh_compare_memo_warning(const WhCompare *c)
{
  return c->memo_warning;
}

/* As `whsim run` judges a run: stopping at the scenario's stop time, the wall-clock
 * limit or an interrupt is asked for; a deadlock, the retry limit, the time horizon or an
 * inconsistent end state is a problem. */
static char *run_problem(const WhRun *run)
{
  const char *what = run->wormhole ? "Wormhole" : "exact";
  if (wh_run_stopped_early(run)) {
    const char *why = wh_run_stop_reason(run);
    if (strcmp(why, "stop time") == 0 || strcmp(why, "wall-clock limit") == 0 ||
        strcmp(why, "interrupted") == 0)
      return NULL;
    return g_strdup_printf("the %s run stopped early (%s)", what, why);
  }
  g_autoptr(GError) err = NULL;
  if (!wh_run_check(run, &err))
    return g_strdup_printf("the %s run ended in an inconsistent state: %s", what, err->message);
  return NULL;
}

/* Keeps what the comparison needs of a finished run. */
static void side_collect(Side *s, const WhRun *run)
{
  s->wall_s = run->wall_s;
  s->seed = run->seed;
  s->cc = run->cc->name;
  s->events = run->sim->events_executed;
  s->sim_end = run->sim->now;
  s->advanced_bytes = run->tp->c.advanced_bytes;
  s->inner_scheduler = g_strdup(run->sched->name);
  s->scheduler = g_strdup(run->wormhole ? "wormhole" : run->sched->name);
  s->mode = g_strdup(run->wormhole ? wh_wormhole_mode_name(wh_wormhole_params(run->wormhole)->mode)
                                   : "off");
  s->summary = wh_run_summary_json(run, TRUE);
  s->problem = run_problem(run);
  s->stopped_early = wh_run_stopped_early(run) ? wh_run_stop_reason(run) : NULL;
  s->flows = g_array_sized_new(FALSE, TRUE, sizeof(WhCompareFlow), run->tp->n_flows);
  for (uint32_t i = 0; i < run->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(run->tp, i);
    WhCompareFlow cf = {.id = i,
                        .src = f->src,
                        .dst = f->dst,
                        .bytes = f->size,
                        .start = f->start,
                        .finish = f->finish};
    char key[WH_RUN_KEY_LEN];
    g_strlcpy(cf.key, wh_run_flow_key(run, i, key), sizeof cf.key);
    g_array_append_val(s->flows, cf);
    s->makespan = MAX(s->makespan, f->finish);
  }
  s->ops = g_array_new(FALSE, TRUE, sizeof(OpEnd));
  s->iterations = g_array_new(FALSE, TRUE, sizeof(WhTime));
  if (run->workload == NULL)
    return;
  for (uint32_t i = 0; i < wh_workload_n_ops(run->workload); i++) {
    WhOpInfo op;
    wh_workload_op_info(run->workload, i, &op);
    OpEnd e = {op.rank, wh_op_kind_name(op.kind, op.coll), g_strdup(op.name), op.end, op.ended};
    g_array_append_val(s->ops, e);
    s->makespan = MAX(s->makespan, op.end);
  }
  for (uint32_t it = 0; !wh_run_stopped_early(run) && it < run->iterations; it++) {
    WhIterationStats st;
    wh_run_iteration_stats(run, it, &st);
    g_array_append_val(s->iterations, st.time);
  }
}

/* Executes `run`, writes its own outputs into the side's directory and keeps its
 * numbers, then its memo database when it ended without a problem; frees the run. */
static gboolean side_execute(Side *s, WhRun *run, GError **error)
{
  wh_run_execute(run);
  side_collect(s, run);
  gboolean ok = wh_run_write(run, s->dir, error) && (s->problem || wh_run_memo_save(run, error));
  wh_run_free(run);
  return ok;
}

/* ---- results ---- */

static double rel(double wh, double ex)
{
  return ex > 0 ? (wh - ex) / ex : NAN;
}

static WhTime iteration_sum(const Side *s)
{
  WhTime t = 0;
  for (guint i = 0; i < s->iterations->len; i++)
    t += g_array_index(s->iterations, WhTime, i);
  return t;
}

static gboolean have_iterations(const WhCompare *c)
{
  const Side *e = &c->side[EXACT], *w = &c->side[WORMHOLE];
  return c->workload && e->iterations->len > 0 && e->iterations->len == w->iterations->len;
}

static void compare_ops(WhCompare *c)
{
  const GArray *e = c->side[EXACT].ops, *w = c->side[WORMHOLE].ops;
  double sum = 0;
  for (guint i = 0; i < e->len && i < w->len; i++) {
    const OpEnd *a = &g_array_index(e, OpEnd, i), *b = &g_array_index(w, OpEnd, i);
    if (!a->ended || !b->ended || a->end == 0)
      continue;
    double err = fabs(rel((double)b->end, (double)a->end));
    sum += err;
    c->op_error_max = MAX(c->op_error_max, err);
    c->ops_compared++;
  }
  c->op_error_mean = c->ops_compared ? sum / c->ops_compared : 0;
}

/* Appends a number, or null when it is not finite. */
static void jnum(GString *j, double v)
{
  if (isfinite(v))
    g_string_append_printf(j, "%.9g", v);
  else
    g_string_append(j, "null");
}

static gboolean keep_wormhole_field(const char *key, size_t len)
{
  static const char *const fields[] = {"fast_forwards", "skip_backs", "advanced_bytes",
                                       "time_steady_fraction", "events_skipped_est"};
  if ((len >= 8 && strncmp(key, "wormhole", 8) == 0) || (len >= 5 && strncmp(key, "memo_", 5) == 0))
    return TRUE;
  for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
    if (strlen(fields[i]) == len && strncmp(key, fields[i], len) == 0)
      return TRUE;
  return FALSE;
}

static const char *skip_space(const char *p)
{
  while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
    p++;
  return p;
}

/* Appends the top-level members of the JSON object `json` that Wormhole reports
 * (keep_wormhole_field), as `"key": value` separated by commas; values are copied as
 * written. */
static void copy_wormhole_fields(GString *j, const char *json)
{
  const char *p = strchr(json, '{'), *sep = "";
  if (p == NULL)
    return;
  for (p = skip_space(p + 1); *p == '"';) {
    const char *k0 = p + 1, *k1 = strchr(k0, '"');
    if (k1 == NULL)
      return;
    p = skip_space(k1 + 1);
    if (*p != ':')
      return;
    const char *v0 = p = skip_space(p + 1);
    int depth = 0;
    gboolean in_string = FALSE;
    for (; *p; p++) {
      if (in_string) {
        if (*p == '\\' && p[1])
          p++;
        else if (*p == '"')
          in_string = FALSE;
      } else if (*p == '"') {
        in_string = TRUE;
      } else if (*p == '{' || *p == '[') {
        depth++;
      } else if ((*p == '}' || *p == ']') && depth-- == 0) {
        break;
      } else if (*p == ',' && depth == 0) {
        break;
      }
    }
    const char *v1 = p;
    while (v1 > v0 && (v1[-1] == ' ' || v1[-1] == '\n'))
      v1--;
    if (keep_wormhole_field(k0, (size_t)(k1 - k0))) {
      g_string_append_printf(j, "%s\n    \"%.*s\": %.*s", sep, (int)(k1 - k0), k0, (int)(v1 - v0),
                             v0);
      sep = ",";
    }
    if (*p != ',')
      return;
    p = skip_space(p + 1);
  }
}

static void json_side(GString *j, const Side *s)
{
  g_string_append_printf(j,
                         "  \"%s\": {\"scheduler\": \"%s\", \"inner_scheduler\": \"%s\", "
                         "\"mode\": \"%s\", \"wall_s\": %.6f, \"events_executed\": "
                         "%" G_GUINT64_FORMAT ", \"sim_end_ps\": %" G_GUINT64_FORMAT
                         ", \"makespan_ps\": %" G_GUINT64_FORMAT ", ",
                         s->what, s->scheduler, s->inner_scheduler, s->mode, s->wall_s, s->events,
                         (guint64)s->sim_end, (guint64)s->makespan);
  if (s->iterations->len)
    g_string_append_printf(j, "\"iteration_time_ps\": %" G_GUINT64_FORMAT ", ",
                           (guint64)(iteration_sum(s) / s->iterations->len));
  if (s->stopped_early)
    g_string_append_printf(j, "\"stopped_early\": \"%s\", ", s->stopped_early);
  g_string_append(j, "\"problem\": ");
  if (s->problem) {
    g_autofree char *p = g_strescape(s->problem, NULL);
    g_string_append_printf(j, "\"%s\"},\n", p);
  } else {
    g_string_append(j, "null},\n");
  }
}

char *wh_compare_json(const WhCompare *c)
{
  const Side *e = &c->side[EXACT], *w = &c->side[WORMHOLE];
  GString *j = g_string_new("{\n");
  g_autofree char *name = g_strescape(c->sc->name ? c->sc->name : "", NULL);
  g_string_append_printf(
      j, "  \"scenario\": \"%s\",\n  \"seed\": %" G_GUINT64_FORMAT ",\n  \"cc\": \"%s\",\n", name,
      e->seed, e->cc);
  json_side(j, e);
  json_side(j, w);
  g_string_append(j, "  \"wall_speedup\": ");
  jnum(j, w->wall_s > 0 ? e->wall_s / w->wall_s : NAN);
  g_string_append(j, ",\n  \"event_speedup\": ");
  jnum(j, w->events ? (double)e->events / (double)w->events : NAN);
  g_string_append(j, ",\n  \"events_skipped\": ");
  jnum(j, e->events ? 1.0 - (double)w->events / (double)e->events : NAN);
  g_string_append(j, ",\n  \"makespan_error\": ");
  jnum(j, rel((double)w->makespan, (double)e->makespan));
  g_string_append(j, ",\n  \"iteration_time_error\": ");
  if (have_iterations(c)) {
    jnum(j, rel((double)iteration_sum(w), (double)iteration_sum(e)));
    g_string_append(j, ",\n  \"iteration_time_error_per_iteration\": [");
    for (guint i = 0; i < e->iterations->len; i++) {
      g_string_append(j, i ? ", " : "");
      jnum(j, rel((double)g_array_index(w->iterations, WhTime, i),
                  (double)g_array_index(e->iterations, WhTime, i)));
    }
    g_string_append(j, "]");
  } else {
    g_string_append(j, "null");
  }
  if (c->workload)
    g_string_append_printf(
        j, ",\n  \"op_end_time_error\": {\"ops\": %u, \"mean\": %.9g, \"max\": %.9g}",
        c->ops_compared, c->op_error_mean, c->op_error_max);
  const WhCompareFctError *f = &c->fct;
  g_string_append_printf(j,
                         ",\n  \"fct_error\": {\"flows\": %u, \"unfinished\": %u, \"only_exact\": "
                         "%u, \"only_wormhole\": %u, \"mean\": %.9g, \"p99\": %.9g, \"max\": "
                         "%.9g, \"signed_mean\": %.9g},\n",
                         f->matched, f->unfinished, f->only_exact, f->only_wormhole, f->mean,
                         f->p99, f->max, f->signed_mean);
  g_string_append_printf(j, "  \"bytes_skipped\": %" G_GUINT64_FORMAT ",\n", w->advanced_bytes);
  g_string_append(j, "  \"wormhole_summary\": {");
  copy_wormhole_fields(j, w->summary);
  g_string_append(j, "\n  },\n  \"files\": [\"exact/\", \"wormhole/\", \"compare-flows.csv\"");
  if (c->workload)
    g_string_append(j, ", \"compare-ops.csv\"");
  g_string_append(j, "],\n  \"plots\": [");
  for (guint i = 0; c->plots && i < c->plots->len; i++)
    g_string_append_printf(j, "%s\"%s\"", i ? ", " : "", (const char *)c->plots->pdata[i]);
  g_string_append(j, "]");
  if (c->plots_note)
    g_string_append_printf(j, ",\n  \"plots_note\": \"%s\"", c->plots_note);
  g_string_append(j, "\n}\n");
  return g_string_free(j, FALSE);
}

static char *flows_csv(const WhCompare *c)
{
  const GArray *e = c->side[EXACT].flows, *w = c->side[WORMHOLE].flows;
  GString *csv = g_string_new(
      "key,src,dst,bytes,flow_id_exact,flow_id_wormhole,fct_exact_ps,fct_wormhole_ps,rel_error\n");
  for (guint i = 0; i < e->len; i++) {
    const WhCompareFlow *a = &g_array_index(e, WhCompareFlow, i);
    const WhCompareFlow *b =
        c->match[i] >= 0 ? &g_array_index(w, WhCompareFlow, c->match[i]) : NULL;
    g_string_append_printf(csv, "%s,%u,%u,%" G_GUINT64_FORMAT ",%u,", a->key, a->src, a->dst,
                           a->bytes, a->id);
    if (b)
      g_string_append_printf(csv, "%u", b->id);
    g_string_append_c(csv, ',');
    if (a->finish)
      g_string_append_printf(csv, "%" G_GUINT64_FORMAT, (guint64)(a->finish - a->start));
    g_string_append_c(csv, ',');
    if (b && b->finish)
      g_string_append_printf(csv, "%" G_GUINT64_FORMAT, (guint64)(b->finish - b->start));
    g_string_append_c(csv, ',');
    if (isfinite(c->flow_error[i]))
      g_string_append_printf(csv, "%.9g", c->flow_error[i]);
    g_string_append_c(csv, '\n');
  }
  return g_string_free(csv, FALSE);
}

static char *ops_csv(const WhCompare *c)
{
  const GArray *e = c->side[EXACT].ops, *w = c->side[WORMHOLE].ops;
  GString *csv =
      g_string_new("op_id,rank,kind,name,end_exact_ps,end_wormhole_ps,end_time_rel_error\n");
  for (guint i = 0; i < e->len && i < w->len; i++) {
    const OpEnd *a = &g_array_index(e, OpEnd, i), *b = &g_array_index(w, OpEnd, i);
    g_string_append_printf(csv, "%u,%u,%s,%s,", i, a->rank, a->kind, a->name);
    if (a->ended)
      g_string_append_printf(csv, "%" G_GUINT64_FORMAT, (guint64)a->end);
    g_string_append_c(csv, ',');
    if (b->ended)
      g_string_append_printf(csv, "%" G_GUINT64_FORMAT, (guint64)b->end);
    g_string_append_c(csv, ',');
    if (a->ended && b->ended && a->end > 0)
      g_string_append_printf(csv, "%.9g", rel((double)b->end, (double)a->end));
    g_string_append_c(csv, '\n');
  }
  return g_string_free(csv, FALSE);
}

/* ---- plots ---- */

/* Runs gnuplot on `script`; its standard output (an SVG document) or NULL. */
static char *gnuplot_svg(const char *gnuplot, const char *script)
{
  char *svg = NULL;
  if (!wh_gnuplot_run(gnuplot, script, NULL, &svg) || !g_str_has_prefix(svg, "<?xml"))
    g_clear_pointer(&svg, g_free);
  return svg;
}

/* An FCT scatter (Wormhole against exact, log-log, with the diagonal) and the CDF of
 * the absolute FCT errors, added to `set` when gnuplot runs. */
static gboolean add_plots(WhCompare *c, WhOutputSet *set, GError **error)
{
  c->plots = g_ptr_array_new();
  g_autofree char *gnuplot = wh_gnuplot_find();
  if (gnuplot == NULL) {
    c->plots_note = "gnuplot is not on the PATH: no plots";
    return TRUE;
  }
  if (c->fct.matched == 0) {
    c->plots_note = "no flow completed in both runs: no plots";
    return TRUE;
  }
  const GArray *e = c->side[EXACT].flows, *w = c->side[WORMHOLE].flows;
  GString *pts = g_string_new(NULL);
  g_autofree double *errs = g_new(double, e->len);
  uint32_t n = 0;
  for (guint i = 0; i < e->len; i++) {
    if (!isfinite(c->flow_error[i]))
      continue;
    const WhCompareFlow *a = &g_array_index(e, WhCompareFlow, i);
    const WhCompareFlow *b = &g_array_index(w, WhCompareFlow, c->match[i]);
    g_string_append_printf(pts, "%.6f %.6f\n", (double)(a->finish - a->start) * 1e-6,
                           (double)(b->finish - b->start) * 1e-6);
    errs[n++] = fabs(c->flow_error[i]) * 100;
  }
  qsort(errs, n, sizeof *errs, cmp_double);
  GString *cdf = g_string_new(NULL);
  for (uint32_t i = 0; i < n; i++)
    g_string_append_printf(cdf, "%.9g %.6f\n", errs[i], (double)(i + 1) / n);
  g_autofree char *title = g_strescape(c->sc->name ? c->sc->name : "", NULL);
  const char *head = "set terminal svg size 640,480 font 'sans,11'\nset key top left\n";
  g_autofree char *scatter = g_strdup_printf(
      "%s$d << EOD\n%sEOD\nset title \"%s: flow completion times\"\nset logscale xy\n"
      "set xlabel 'exact FCT (us)'\nset ylabel 'Wormhole FCT (us)'\n"
      "plot $d using 1:2 with points pt 7 ps 0.5 title 'flows', x with lines dt 2 title "
      "'equal'\n",
      head, pts->str, title);
  g_autofree char *cdf_script =
      g_strdup_printf("%s$d << EOD\n%sEOD\nset title \"%s: FCT error of Wormhole\"\nset xrange "
                      "[0:*]\nset yrange [0:1]\n"
                      "set xlabel '|FCT error| (%%)'\nset ylabel 'fraction of flows'\n"
                      "plot $d using 1:2 with steps title 'CDF'\n",
                      head, cdf->str, title);
  g_string_free(pts, TRUE);
  g_string_free(cdf, TRUE);
  const char *names[] = {"compare-fct.svg", "compare-fct-error-cdf.svg"};
  char *svg[] = {gnuplot_svg(gnuplot, scatter), NULL};
  svg[1] = svg[0] ? gnuplot_svg(gnuplot, cdf_script) : NULL;
  gboolean ok = TRUE;
  if (svg[1] == NULL)
    c->plots_note = "gnuplot failed: no plots";
  for (int k = 0; k < 2 && ok && svg[1]; k++) {
    ok = wh_output_set_add(set, names[k], svg[k], error);
    g_ptr_array_add(c->plots, (gpointer)names[k]);
  }
  g_free(svg[0]);
  g_free(svg[1]);
  return ok;
}

/* ---- execution ---- */

static gboolean write_comparison(WhCompare *c, GError **error)
{
  g_autoptr(WhOutputSet) set = wh_output_set_new(c->dir, error);
  if (set == NULL || !add_plots(c, set, error))
    return FALSE;
  g_autofree char *json = wh_compare_json(c);
  g_autofree char *flows = flows_csv(c);
  g_autofree char *ops = c->workload ? ops_csv(c) : NULL;
  return wh_output_set_add(set, "compare.json", json, error) &&
         wh_output_set_add(set, "compare-flows.csv", flows, error) &&
         (ops == NULL || wh_output_set_add(set, "compare-ops.csv", ops, error)) &&
         wh_output_set_commit(set, error);
}

gboolean wh_compare_execute(WhCompare *c, GError **error)
{
  g_return_val_if_fail(c->exact_run != NULL, FALSE);
  if (!side_execute(&c->side[EXACT], g_steal_pointer(&c->exact_run), error))
    return FALSE;
  WhRun *run = wh_run_new(c->sc, &c->side[WORMHOLE].opts, error);
  if (run == NULL || !side_execute(&c->side[WORMHOLE], run, error))
    return FALSE;
  const Side *e = &c->side[EXACT], *w = &c->side[WORMHOLE];
  c->match = g_new(int64_t, e->flows->len ? e->flows->len : 1);
  c->flow_error = g_new(double, e->flows->len ? e->flows->len : 1);
  if (!wh_compare_match_flows((const WhCompareFlow *)e->flows->data, e->flows->len,
                              (const WhCompareFlow *)w->flows->data, w->flows->len, c->match,
                              &c->fct, error))
    return FALSE;
  for (guint i = 0; i < e->flows->len; i++) {
    const WhCompareFlow *a = &g_array_index(e->flows, WhCompareFlow, i);
    const WhCompareFlow *b =
        c->match[i] >= 0 ? &g_array_index(w->flows, WhCompareFlow, c->match[i]) : NULL;
    c->flow_error[i] =
        b && a->finish > a->start && b->finish
            ? rel((double)b->finish - (double)b->start, (double)(a->finish - a->start))
            : NAN;
  }
  compare_ops(c);
  if (e->problem || w->problem)
    c->problem = g_strjoin("; ", e->problem ? e->problem : w->problem,
                           e->problem && w->problem ? w->problem : NULL, NULL);
  else if (!e->stopped_early && !w->stopped_early && (c->fct.only_exact || c->fct.only_wormhole))
    c->problem = g_strdup_printf("%u flows of the exact run and %u of the Wormhole run have no "
                                 "counterpart with the same key",
                                 c->fct.only_exact, c->fct.only_wormhole);
  return write_comparison(c, error);
}

const char *wh_compare_problem(const WhCompare *c)
{
  return c->problem;
}

/* ---- the printed summary ---- */

void wh_compare_print(const WhCompare *c, FILE *out)
{
  const Side *e = &c->side[EXACT], *w = &c->side[WORMHOLE];
  fprintf(out,
          "compare    %s (seed %" G_GUINT64_FORMAT ", %s): the exact engine (%s scheduler), "
          "then Wormhole (mode %s), in this process\n",
          c->sc->name ? c->sc->name : "", e->seed, e->cc, e->scheduler, w->mode);
  if (have_iterations(c)) {
    double te = (double)iteration_sum(e) / e->iterations->len,
           tw = (double)iteration_sum(w) / w->iterations->len;
    fprintf(out,
            "iteration  %.3f us exact, %.3f us Wormhole: error %+.3f%% (time per iteration, "
            "%u iteration%s)\n",
            te * 1e-6, tw * 1e-6, rel(tw, te) * 100, e->iterations->len,
            e->iterations->len == 1 ? "" : "s");
  } else if (e->stopped_early || w->stopped_early) {
    fprintf(out,
            "stopped    exact run: %s at %.3f us; Wormhole run: %s at %.3f us (the errors "
            "below cover what completed in both)\n",
            e->stopped_early ? e->stopped_early : "completed", (double)e->sim_end * 1e-6,
            w->stopped_early ? w->stopped_early : "completed", (double)w->sim_end * 1e-6);
  } else {
    fprintf(out,
            "makespan   %.3f us exact, %.3f us Wormhole: error %+.3f%% (until the last flow "
            "completed)\n",
            (double)e->makespan * 1e-6, (double)w->makespan * 1e-6,
            rel((double)w->makespan, (double)e->makespan) * 100);
  }
  fprintf(out,
          "speedup    %.2fx in wall time (%.3f s exact, %.3f s Wormhole); %.2fx in events "
          "(%.1f%% of the exact run's %" G_GUINT64_FORMAT " skipped)\n",
          w->wall_s > 0 ? e->wall_s / w->wall_s : 0, e->wall_s, w->wall_s,
          w->events ? (double)e->events / (double)w->events : 0,
          e->events ? (1 - (double)w->events / (double)e->events) * 100 : 0, e->events);
  const WhCompareFctError *f = &c->fct;
  fprintf(out,
          "FCT error  %u flows matched by key: |error| mean %.3f%%, p99 %.3f%%, max %.3f%% "
          "(signed mean %+.3f%%)",
          f->matched, f->mean * 100, f->p99 * 100, f->max * 100, f->signed_mean * 100);
  if (f->unfinished)
    fprintf(out, "; %u more did not complete in both runs", f->unfinished);
  fputc('\n', out);
  if (c->workload)
    fprintf(out, "op ends    %u ops: end-time error mean %.3f%%, max %.3f%%\n", c->ops_compared,
            c->op_error_mean * 100, c->op_error_max * 100);
  g_autofree char *bytes = wh_units_format_bytes(w->advanced_bytes);
  fprintf(out, "skipped    %s of payload advanced by fast-forwards instead of sent as packets\n",
          bytes);
  if (c->problem)
    fprintf(out, "problem    %s\n", c->problem);
  fprintf(out,
          "outputs    %s/compare.json, compare-flows.csv%s%s; each run's own outputs in "
          "exact/ and wormhole/\n",
          c->dir, c->workload ? ", compare-ops.csv" : "",
          c->plots && c->plots->len ? ", compare-fct.svg, compare-fct-error-cdf.svg" : "");
}
