/* The exact engine against Wormhole on one scenario; see compare.h. compare.json is
 * written and a stored summary.json read through json-glib (generator and parser). */
#include "compare.h"
#include "run-private.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "file-read.h"
#include "gnuplot.h"
#include "json-text.h"
#include "outputs.h"
#include "report.h"
#include "run-files.h"
#include "runner.h"
#include "units.h"
#include "wh-error.h"

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
  const char *cc; /* static (a stored run's: the Wormhole run's, found equal) */
  uint64_t seed;
  double wall_s;    /* the simulation loop */
  double process_s; /* the whole run: building, loop, outputs and memo file (< 0: stored) */
  uint64_t events, advanced_bytes;
  WhTime sim_end, makespan;
  GArray *flows;             /* WhCompareFlow */
  GArray *ops;               /* OpEnd; empty without a workload */
  GArray *iterations;        /* WhTime per iteration; empty without a workload or when stopped */
  JsonObject *summary;       /* its summary.json */
  char *problem;             /* nullable: ended early or inconsistent (never a stored run) */
  const char *stopped_early; /* nullable: why it stopped before its natural end (static) */
  gboolean member;           /* an ensemble member read back: its digest is not checked */
  uint32_t jitter;           /* ... unless read from --ensemble-from: its DelayJitter */
  gboolean stored_member;    /* read from --ensemble-from: its digest is checked */
  uint64_t seed_offset;      /* a seed member: its seed less the reference's */
} Side;

/* One metric of the ensemble: each member's deviation from the reference, and
 * Wormhole's. */
typedef struct {
  char *name;
  GArray *members; /* double per member */
  double wormhole;
  gboolean judged; /* FALSE: per-flow errors of a chaotic scenario, shown only */
} EnsembleMetric;

struct WhCompare {
  WhScenario *sc;
  char *dir;
  char *exact_from; /* nullable: the directory of the stored exact run */
  gboolean workload;
  WhRun *run; /* built by wh_compare_new, freed once executed: the exact run, or with a
                 stored exact run the Wormhole run */
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
  /* the perturbation ensemble (wh_compare_set_ensemble); size 0: none */
  uint32_t ens_size;
  guint ens_jobs;
  char *whsim;
  char **ens_extra;
  char *ens_from;     /* nullable: the members are read from here, not run */
  Side *members;      /* ens_size - 1 */
  GArray *ens_metric; /* EnsembleMetric */
  double ens_spread;  /* the members' mean per-flow |FCT error| */
  gboolean chaotic;
  /* the seed members (WhCompareEnsemble.seeds), judged apart from the jitter members */
  uint32_t ens_seeds;
  Side *seed_members;  /* ens_seeds */
  GArray *seed_metric; /* EnsembleMetric */
  double seed_spread;  /* the seed members' mean per-flow |FCT error| */
  gboolean seed_chaotic;
};

/* A member's directory as compare.json names it: below out_dir, or below the
 * --ensemble-from directory it was read from. (transfer full) */
static char *member_dir_text(const WhCompare *c, const char *kind, uint32_t i)
{
  g_autofree char *name = g_strdup_printf("%s-%u/", kind, i);
  return c->ens_from ? g_build_filename(c->ens_from, name, NULL)
                     : g_strconcat("ensemble/", name, NULL);
}
static void add_ensemble(JsonObject *o, const WhCompare *c);

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
  if (s->summary)
    json_object_unref(s->summary);
  g_free(s->problem);
}

static void metrics_free(GArray *metrics)
{
  for (guint i = 0; metrics && i < metrics->len; i++) {
    EnsembleMetric *m = &g_array_index(metrics, EnsembleMetric, i);
    g_free(m->name);
    g_array_unref(m->members);
  }
  if (metrics)
    g_array_unref(metrics);
}

void wh_compare_free(WhCompare *c)
{
  if (c == NULL)
    return;
  wh_run_free(c->run);
  for (int k = 0; k < N_SIDES; k++)
    side_clear(&c->side[k]);
  for (uint32_t i = 0; c->members && i + 1 < c->ens_size; i++)
    side_clear(&c->members[i]);
  g_free(c->members);
  for (uint32_t i = 0; c->seed_members && i < c->ens_seeds; i++)
    side_clear(&c->seed_members[i]);
  g_free(c->seed_members);
  metrics_free(c->ens_metric);
  metrics_free(c->seed_metric);
  g_free(c->whsim);
  g_strfreev(c->ens_extra);
  g_free(c->ens_from);
  g_free(c->match);
  g_free(c->flow_error);
  if (c->plots)
    g_ptr_array_unref(c->plots);
  g_free(c->problem);
  g_free(c->memo_warning);
  g_free(c->dir);
  g_free(c->exact_from);
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
      s->opts.scheduler = WH_SCHEDULER_DEFAULT;
  } else {
    s->opts.scheduler = "wormhole";
  }
  g_ptr_array_add(sets, NULL);
  s->sets = (char **)g_ptr_array_free(sets, FALSE);
  s->opts.sets = s->sets;
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
  s->summary = wh_run_summary_object(run, TRUE);
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
  gint64 t0 = g_get_monotonic_time();
  wh_run_execute(run);
  side_collect(s, run);
  gboolean ok = wh_run_write(run, s->dir, error) && (s->problem || wh_run_memo_save(run, error));
  wh_run_free(run);
  s->process_s += (double)(g_get_monotonic_time() - t0) * 1e-6;
  return ok;
}

/* Builds a side's run, its time counted in the side's process time. */
static WhRun *side_build(Side *s, WhScenario *sc, GError **error)
{
  gint64 t0 = g_get_monotonic_time();
  WhRun *run = wh_run_new(sc, &s->opts, error);
  s->process_s += (double)(g_get_monotonic_time() - t0) * 1e-6;
  return run;
}

/* ---- a stored exact run ---- */

#define OTHER_CONFIGURATION "the stored exact run is of another configuration"
#define MAX_STORED_RECORD 65536           /* bytes of a record of flows.csv or ops.csv */
#define MAX_STORED_BYTES ((gsize)4 << 30) /* bytes of a stored flows.csv or ops.csv */

/* A stored summary.json: its path and, once read, its members. */
typedef struct {
  char *path;
  JsonObject *fields; /* borrowed from the side */
} Summary;

/* Most levels of nesting a stored summary.json may have: json-glib's parser recurses
 * per level (summary.json has three). */
#define MAX_SUMMARY_DEPTH 32

/* Whether `text` nests arrays and objects at most MAX_SUMMARY_DEPTH deep. */
static gboolean depth_ok(const char *text, gsize len)
{
  int depth = 0;
  gboolean in_string = FALSE;
  for (gsize i = 0; i < len; i++) {
    if (in_string && text[i] == '\\')
      i++;
    else if (in_string)
      in_string = text[i] != '"';
    else if (text[i] == '"')
      in_string = TRUE;
    else if ((text[i] == '[' || text[i] == '{') && ++depth > MAX_SUMMARY_DEPTH)
      return FALSE;
    else if (text[i] == ']' || text[i] == '}')
      depth--;
  }
  return TRUE;
}

/* Member `key`; NULL with an error naming the file when it is absent. */
static JsonNode *summary_value(const Summary *s, const char *key, GError **error)
{
  JsonNode *v = json_object_get_member(s->fields, key);
  if (v == NULL)
    wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, "%s: no field \"%s\"", s->path,
                 key);
  return v;
}

/* A bad field: its value as written and what it should be; FALSE. */
static gboolean bad_field(const Summary *s, const char *key, JsonNode *v, const char *want,
                          GError **error)
{
  g_autofree char *text = json_to_string(v, FALSE);
  return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, "%s: field \"%s\": %s: %s",
                      s->path, key, text, want);
}

/* An integer in 0..G_MAXINT64, the range of json-glib's integers. */
static gboolean node_u64(JsonNode *v, uint64_t *out)
{
  if (!JSON_NODE_HOLDS_VALUE(v) || json_node_get_value_type(v) != G_TYPE_INT64 ||
      json_node_get_int(v) < 0)
    return FALSE;
  *out = (uint64_t)json_node_get_int(v);
  return TRUE;
}

static gboolean summary_u64(const Summary *s, const char *key, uint64_t *out, GError **error)
{
  JsonNode *v = summary_value(s, key, error);
  if (v && !node_u64(v, out))
    return bad_field(s, key, v, "not a non-negative integer", error);
  return v != NULL;
}

/* A string field (transfer none: the summary's); NULL with an error. */
static const char *summary_str(const Summary *s, const char *key, GError **error)
{
  JsonNode *v = summary_value(s, key, error);
  if (v && JSON_NODE_HOLDS_VALUE(v) && json_node_get_value_type(v) == G_TYPE_STRING)
    return json_node_get_string(v);
  if (v)
    bad_field(s, key, v, "not a string", error);
  return NULL;
}

static gboolean expect_u64(const Summary *s, const char *key, uint64_t want, GError **error)
{
  uint64_t v;
  if (!summary_u64(s, key, &v, error))
    return FALSE;
  if (v != want)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s: field \"%s\": %" G_GUINT64_FORMAT " in the stored exact run, "
                        "%" G_GUINT64_FORMAT " in this comparison: " OTHER_CONFIGURATION,
                        s->path, key, v, want);
  return TRUE;
}

static gboolean expect_str(const Summary *s, const char *key, const char *want, GError **error)
{
  const char *v = summary_str(s, key, error);
  if (v == NULL)
    return FALSE;
  if (strcmp(v, want) != 0)
    return wh_error_set(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
        "%s: field \"%s\": \"%s\" in the stored exact run, \"%s\" in this comparison: "
        "" OTHER_CONFIGURATION,
        s->path, key, v, want);
  return TRUE;
}

/* Per-iteration times [t0, t1, ...] into `out` (WhTime). */
static gboolean summary_iterations(const Summary *s, GArray *out, GError **error)
{
  JsonNode *v = summary_value(s, "iterations", error);
  if (v == NULL)
    return FALSE;
  JsonArray *a = JSON_NODE_HOLDS_ARRAY(v) ? json_node_get_array(v) : NULL;
  for (guint i = 0; a && i < json_array_get_length(a); i++) {
    uint64_t t;
    if (!node_u64(json_array_get_element(a, i), &t)) {
      g_array_set_size(out, 0);
      break;
    }
    g_array_append_val(out, t);
  }
  if (out->len == 0)
    return bad_field(s, "iterations", v, "not a list of times in ps", error);
  return TRUE;
}

/* Reads DIR/summary.json into the side's summary: one JSON object. */
static gboolean summary_read(Side *s, Summary *sm, GError **error)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!g_file_test(sm->path, G_FILE_TEST_IS_REGULAR))
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, "%s: %s", sm->path,
                        g_file_test(sm->path, G_FILE_TEST_EXISTS)
                            ? "not a regular file"
                            : "missing: not the output directory "
                              "of a whsim run");
  if (!wh_file_read(sm->path, WH_MAX_INPUT_BYTES, &text, &len, &err))
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, "%s: %s", sm->path,
                        err->message);
  g_autoptr(JsonParser) parser = json_parser_new();
  if (!depth_ok(text, len))
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s: not a JSON object of the form whsim writes (nested deeper than %d)",
                        sm->path, MAX_SUMMARY_DEPTH);
  if (!json_parser_load_from_data(parser, text, (gssize)len, &err))
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s: not a JSON object of the form whsim writes: %s", sm->path,
                        err->message);
  JsonNode *root = json_parser_get_root(parser);
  if (root == NULL || !JSON_NODE_HOLDS_OBJECT(root))
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s: not a JSON object of the form whsim writes", sm->path);
  s->summary = sm->fields = json_object_ref(json_node_get_object(root));
  return TRUE;
}

/* The stored run is one of the native engine, exact, of a known scheduler, and ended or
 * stopped at the stop time. */
static gboolean summary_exact_run(Side *s, const Summary *sm, GError **error)
{
  JsonNode *engine = json_object_get_member(sm->fields, "engine");
  if (engine && g_strcmp0(json_node_get_string(engine), "native") != 0)
    return bad_field(sm, "engine", engine, "not a run of the native engine", error);
  JsonNode *mode = json_object_get_member(sm->fields, "wormhole_mode");
  const char *sched = summary_str(sm, "scheduler", error);
  if (sched == NULL)
    return FALSE;
  if (mode || strcmp(sched, "wormhole") == 0)
    return bad_field(sm, mode ? "wormhole_mode" : "scheduler",
                     mode ? mode : json_object_get_member(sm->fields, "scheduler"),
                     "a Wormhole run, not an exact one", error);
  const WhSchedulerClass *sched_class = wh_scheduler_class_lookup(sched);
  if (sched_class == NULL)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s: field \"scheduler\": \"%s\": unknown scheduler (a plugin's needs its "
                        "--plugin)",
                        sm->path, sched);
  const char *stopped = json_object_has_member(sm->fields, "stopped_early")
                            ? summary_str(sm, "stopped_early", error)
                            : "";
  if (stopped == NULL)
    return FALSE;
  if (*stopped && strcmp(stopped, "stop time") != 0)
    return wh_error_set(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
        "%s: field \"stopped_early\": \"%s\": the stored exact run did not finish "
        "(only a run that ends, or stops at the scenario's stop time, is a reference)",
        sm->path, stopped);
  s->stopped_early = *stopped ? "stop time" : NULL;
  s->scheduler = g_strdup(sched_class->name);
  s->inner_scheduler = g_strdup(sched_class->name);
  return TRUE;
}

/* Reads DIR/summary.json and checks it against the built Wormhole run: an exact run of
 * the native engine, of the same scenario, seed, congestion control, configuration
 * digest, network, flows or workload, that finished or stopped at the stop time. Fills
 * the side's numbers that the summary holds. */
static gboolean stored_summary(Side *s, const char *dir, const WhRun *run, GError **error)
{
  g_autofree char *path = g_build_filename(dir, "summary.json", NULL);
  Summary sm = {path, NULL};
  if (!summary_read(s, &sm, error) || !summary_exact_run(s, &sm, error))
    return FALSE;
  char digest[24];
  g_snprintf(digest, sizeof digest, "%016" G_GINT64_MODIFIER "x",
             (guint64)wh_run_config_digest(run));
  if (!expect_str(&sm, "scenario", run->sc->name ? run->sc->name : "", error) ||
      !expect_u64(&sm, "seed", run->seed + s->seed_offset, error) ||
      !expect_str(&sm, "cc", run->cc->name, error))
    return FALSE;
  if (!s->member && !json_object_has_member(sm.fields, "config_digest"))
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s: no field \"config_digest\" (written by an earlier whsim): cannot tell "
                        "whether the stored run had this configuration; run it again",
                        path);
  if (s->stored_member && s->jitter) {
    /* a member read from --ensemble-from: the reference's configuration and its jitter */
    g_autofree char *set = g_strdup_printf("wh::Link::DelayJitter=%u", s->jitter);
    uint64_t d;
    if (!wh_run_config_digest_with(run, set, &d, error))
      return FALSE;
    g_snprintf(digest, sizeof digest, "%016" G_GINT64_MODIFIER "x", (guint64)d);
  }
  if (((!s->member || s->stored_member) && !expect_str(&sm, "config_digest", digest, error)) ||
      !expect_u64(&sm, "hosts", run->net->n_hosts, error) ||
      !expect_u64(&sm, "switches", run->net->n_switches, error))
    return FALSE;
  if (run->workload == NULL && json_object_has_member(sm.fields, "ops"))
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s: field \"ops\": the stored exact run has a workload, this scenario "
                        "none: " OTHER_CONFIGURATION,
                        path);
  if (run->workload == NULL && !expect_u64(&sm, "flows", run->tp->n_flows, error))
    return FALSE;
  if (run->workload && !s->stopped_early) {
    if (!summary_iterations(&sm, s->iterations, error))
      return FALSE;
    if (s->iterations->len != run->iterations)
      return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                          "%s: field \"iterations\": %u iterations in the stored exact run, %u in "
                          "this comparison: " OTHER_CONFIGURATION,
                          path, s->iterations->len, run->iterations);
  }
  if (run->workload && (!expect_u64(&sm, "ranks", wh_workload_n_ranks(run->workload), error) ||
                        !expect_u64(&sm, "ops", wh_workload_n_ops(run->workload), error)))
    return FALSE;
  uint64_t flows, completed;
  if (!summary_u64(&sm, "flows", &flows, error) ||
      !summary_u64(&sm, "flows_completed", &completed, error) ||
      !summary_u64(&sm, "events_executed", &s->events, error) ||
      !summary_u64(&sm, "sim_end_ps", &s->sim_end, error))
    return FALSE;
  if (!s->stopped_early && completed != flows)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s: field \"flows_completed\": %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
                        " flows: the stored exact run did not finish",
                        path, completed, flows);
  JsonNode *wall = summary_value(&sm, "wall_s", error);
  GType type = wall && JSON_NODE_HOLDS_VALUE(wall) ? json_node_get_value_type(wall) : G_TYPE_NONE;
  s->wall_s = type == G_TYPE_DOUBLE || type == G_TYPE_INT64 ? json_node_get_double(wall) : -1;
  if (wall && (!isfinite(s->wall_s) || s->wall_s < 0))
    return bad_field(&sm, "wall_s", wall, "not a number of seconds", error);
  s->mode = g_strdup("off");
  s->seed = run->seed + s->seed_offset;
  s->cc = run->cc->name;
  return wall != NULL;
}

typedef gboolean (*RowFn)(const WhCsvRecord *rec, const char *path, void *data, GError **error);

/* Reads the output `name` of the stored run in `dir` a record at a time (csv.h): the
 * first must be `header`; every other is given to `row` with the file's name as
 * messages show it. */
static gboolean stored_csv(const char *dir, const char *name, const char *header, RowFn row,
                           void *data, GError **error)
{
  g_autofree char *path = g_build_filename(dir, name, NULL);
  if (!g_file_test(path, G_FILE_TEST_IS_REGULAR)) {
    g_autofree char *gz = g_strconcat(path, ".gz", NULL);
    return wh_error_set(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, "%s: %s", path,
        g_file_test(path, G_FILE_TEST_EXISTS) ? "not a regular file"
        : g_file_test(gz, G_FILE_TEST_EXISTS)
            ? "missing (only a compressed copy is there: decompress it, e.g. gunzip "
              "-k, whsim reads plain files)"
            : "missing: not the output directory of a whsim run");
  }
  g_autoptr(GError) err = NULL;
  g_autoptr(WhCsvReader) r =
      wh_csv_reader_new_file(path, MAX_STORED_BYTES, MAX_STORED_RECORD, &err);
  if (r == NULL || !wh_csv_reader_header(r, header, &err))
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, "%s", err->message);
  WhCsvRecord rec;
  while (wh_csv_reader_next(r, &rec, &err))
    if (!row(&rec, wh_csv_reader_name(r), data, error))
      return FALSE;
  return err == NULL ||
         wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, "%s", err->message);
}

/* A stored field for a message on one line: control characters, quotes and
 * backslashes as C escapes, UTF-8 kept. (transfer full) */
static char *shown_field(const char *text)
{
  char high[129];
  for (int i = 0; i < 128; i++)
    high[i] = (char)(0x80 + i);
  high[128] = '\0';
  return g_strescape(text, high);
}

/* A field of a stored CSV as an integer in 0..max; empty: 0 when `empty_ok`. */
static gboolean csv_u64(const char *text, const char *path, guint line, const char *field,
                        gboolean empty_ok, uint64_t max, uint64_t *out, GError **error)
{
  *out = 0;
  if (*text == '\0' && empty_ok)
    return TRUE;
  if (!g_ascii_string_to_unsigned(text, 10, 0, max, out, NULL)) {
    g_autofree char *t = shown_field(text);
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s:%u: field %s: \"%s\": expected an integer in 0..%" G_GUINT64_FORMAT,
                        path, line, field, t, (guint64)max);
  }
  return TRUE;
}

/* A field of a stored row that differs from the same of this scenario. */
static gboolean row_differs(const char *path, guint line, const char *field, const char *stored,
                            const char *here, GError **error)
{
  g_autofree char *a = shown_field(stored), *b = shown_field(here);
  return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                      "%s:%u: field %s: %s in the stored exact run, %s in this comparison: "
                      "" OTHER_CONFIGURATION,
                      path, line, field, a, b);
}

static gboolean flow_differs(const char *path, guint line, const char *field, uint64_t stored,
                             uint64_t here, GError **error)
{
  char a[24], b[24];
  g_snprintf(a, sizeof a, "%" G_GUINT64_FORMAT, stored);
  g_snprintf(b, sizeof b, "%" G_GUINT64_FORMAT, here);
  return row_differs(path, line, field, a, b, error);
}

typedef struct {
  Side *side;
  const WhRun *run;
  uint32_t built; /* flows of the built run (the scenario's; a workload's come later) */
} StoredRows;

/* A row of flows.csv (flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key); a flow the
 * scenario defines is checked against the built run's. */
static gboolean flow_row(const WhCsvRecord *rec, const char *path, void *data, GError **error)
{
  const char *const *f = rec->fields;
  guint n = rec->n_fields, line = rec->line;
  StoredRows *r = data;
  GArray *flows = r->side->flows;
  WhCompareFlow cf = {.id = flows->len};
  uint64_t src, dst, fct;
  if (n != 8)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s:%u: expected 8 fields, found %u", path, line, n);
  if (!csv_u64(f[1], path, line, "src", FALSE, G_MAXUINT32, &src, error) ||
      !csv_u64(f[2], path, line, "dst", FALSE, G_MAXUINT32, &dst, error) ||
      !csv_u64(f[3], path, line, "bytes", FALSE, G_MAXUINT64, &cf.bytes, error) ||
      !csv_u64(f[4], path, line, "start_ps", FALSE, G_MAXUINT64, &cf.start, error) ||
      !csv_u64(f[5], path, line, "finish_ps", TRUE, G_MAXUINT64, &cf.finish, error) ||
      !csv_u64(f[6], path, line, "fct_ps", TRUE, G_MAXUINT64, &fct, error))
    return FALSE;
  if (f[7][0] == '\0' || strlen(f[7]) >= sizeof cf.key) {
    g_autofree char *key = shown_field(f[7]);
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s:%u: field key: \"%s\": expected 1 to %u characters", path, line, key,
                        (unsigned)sizeof cf.key - 1);
  }
  cf.src = (uint32_t)src;
  cf.dst = (uint32_t)dst;
  g_strlcpy(cf.key, f[7], sizeof cf.key);
  if (cf.id < r->built) {
    const WhFlow *w = wh_transport_flow(r->run->tp, cf.id);
    char buf[WH_RUN_KEY_LEN];
    const char *key = wh_run_flow_key(r->run, cf.id, buf);
    if (strcmp(key, cf.key) != 0)
      return row_differs(path, line, "key", cf.key, key, error);
    if (cf.src != w->src || cf.dst != w->dst)
      return flow_differs(path, line, cf.src != w->src ? "src" : "dst",
                          cf.src != w->src ? cf.src : cf.dst, cf.src != w->src ? w->src : w->dst,
                          error);
    if (cf.bytes != w->size)
      return flow_differs(path, line, "bytes", cf.bytes, w->size, error);
    if (cf.start != w->start)
      return flow_differs(path, line, "start_ps", cf.start, w->start, error);
  }
  g_array_append_val(flows, cf);
  r->side->makespan = MAX(r->side->makespan, cf.finish);
  return TRUE;
}

/* A row of ops.csv (op_id,rank,kind,name,start_ps,end_ps,deps), checked against the
 * built workload's op of that id. */
static gboolean op_row(const WhCsvRecord *rec, const char *path, void *data, GError **error)
{
  const char *const *f = rec->fields;
  guint n = rec->n_fields, line = rec->line;
  StoredRows *r = data;
  GArray *ops = r->side->ops;
  uint32_t n_ops = wh_workload_n_ops(r->run->workload);
  uint64_t id, rank, end;
  if (n != 7)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s:%u: expected 7 fields, found %u", path, line, n);
  if (!csv_u64(f[0], path, line, "op_id", FALSE, G_MAXUINT32, &id, error) ||
      !csv_u64(f[1], path, line, "rank", FALSE, G_MAXUINT32, &rank, error) ||
      !csv_u64(f[5], path, line, "end_ps", TRUE, G_MAXUINT64, &end, error))
    return FALSE;
  if (id != ops->len)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s:%u: field op_id: %s: expected %u (the ops in order)", path, line, f[0],
                        ops->len);
  if (id >= n_ops)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s:%u: op %s: the stored exact run has more ops than the %u of this "
                        "comparison: " OTHER_CONFIGURATION,
                        path, line, f[0], n_ops);
  const char *name = f[3];
  WhOpInfo op;
  wh_workload_op_info(r->run->workload, (uint32_t)id, &op);
  const char *kind = wh_op_kind_name(op.kind, op.coll);
  if (rank != op.rank)
    return flow_differs(path, line, "rank", rank, op.rank, error);
  if (strcmp(f[2], kind) != 0)
    return row_differs(path, line, "kind", f[2], kind, error);
  if (strcmp(name, op.name) != 0)
    return row_differs(path, line, "name", name, op.name, error);
  OpEnd e = {op.rank, kind, g_strdup(name), end, f[5][0] != '\0'};
  g_array_append_val(ops, e);
  r->side->makespan = MAX(r->side->makespan, e.end);
  return TRUE;
}

/* Reads the stored exact run in `dir` into the exact side, checking it against the
 * built Wormhole run `run`; bad input names the file and field. */
static gboolean stored_load(Side *s, const char *dir, const WhRun *run, GError **error)
{
  s->flows = g_array_new(FALSE, TRUE, sizeof(WhCompareFlow));
  s->ops = g_array_new(FALSE, TRUE, sizeof(OpEnd));
  s->iterations = g_array_new(FALSE, TRUE, sizeof(WhTime));
  s->dir = g_strdup(dir);
  s->process_s = -1; /* measured at another time, with other outputs */
  StoredRows rows = {s, run, run->tp->n_flows};
  if (!stored_summary(s, dir, run, error) ||
      !stored_csv(dir, "flows.csv", "flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key", flow_row,
                  &rows, error))
    return FALSE;
  g_autofree char *flows = g_build_filename(dir, "flows.csv", NULL);
  if (s->flows->len < rows.built || (run->workload == NULL && s->flows->len != rows.built))
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s: %u flows in the stored exact run, %u in this comparison: %s", flows,
                        s->flows->len, rows.built, OTHER_CONFIGURATION);
  if (run->workload == NULL)
    return TRUE;
  if (!stored_csv(dir, "ops.csv", "op_id,rank,kind,name,start_ps,end_ps,deps", op_row, &rows,
                  error))
    return FALSE;
  g_autofree char *ops = g_build_filename(dir, "ops.csv", NULL);
  uint32_t n_ops = wh_workload_n_ops(run->workload);
  if (s->ops->len != n_ops)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s: %u ops in the stored exact run, %u in this comparison: %s", ops,
                        s->ops->len, n_ops, OTHER_CONFIGURATION);
  for (guint i = 0; !s->stopped_early && i < s->ops->len; i++)
    if (!g_array_index(s->ops, OpEnd, i).ended)
      return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                          "%s:%u: op %u did not end: the stored exact run did not finish", ops,
                          i + 2, i);
  return TRUE;
}

/* `path` absolute with its symbolic links resolved, also where its last components do
 * not exist yet (those are kept as written). (transfer full) */
static char *resolve_path(const char *path)
{
  g_autofree char *abs = g_canonicalize_filename(path, NULL);
  char *real = realpath(abs, NULL);
  if (real) {
    char *r = g_strdup(real);
    free(real);
    return r;
  }
  g_autofree char *parent = g_path_get_dirname(abs), *base = g_path_get_basename(abs);
  if (strcmp(parent, abs) == 0)
    return g_steal_pointer(&abs);
  g_autofree char *up = resolve_path(parent);
  return g_build_filename(up, base, NULL);
}

static gboolean path_within(const char *path, const char *dir)
{
  size_t n = strlen(dir);
  return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/' || dir[n - 1] == '/');
}

/* A stored exact run's directory must exist, and this comparison must not write into
 * it: neither `out_dir` nor anything below may be it or inside it, and out_dir/wormhole
 * may not be it. */
static gboolean check_exact_dir(const char *exact_dir, const char *out_dir, GError **error)
{
  if (!g_file_test(exact_dir, G_FILE_TEST_IS_DIR))
    return wh_error_set(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
        "--exact %s: not a directory (expected the exact/ directory of a `whsim "
        "compare --out` or the output directory of `whsim run` on the exact engine)",
        exact_dir);
  g_autofree char *ex = resolve_path(exact_dir), *out = resolve_path(out_dir);
  g_autofree char *wormhole = g_build_filename(out, "wormhole", NULL);
  if (path_within(out, ex))
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "--out %s: inside the stored exact run --exact %s, which a comparison only "
                        "reads: choose another output directory",
                        out_dir, exact_dir);
  if (strcmp(wormhole, ex) == 0)
    return wh_error_set(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
        "--exact %s: is the directory where the Wormhole run of --out %s writes its "
        "outputs: choose another output directory",
        exact_dir, out_dir);
  return TRUE;
}

/* ---- building ---- */

WhCompare *wh_compare_new(WhScenario *sc, const WhRunOptions *opts, const char *out_dir,
                          const char *exact_dir, GError **error)
{
  g_autoptr(WhCompare) c = g_new0(WhCompare, 1);
  c->sc = sc;
  for (int k = 0; k < N_SIDES; k++)
    side_options(c, k, opts);
  if (exact_dir && !check_exact_dir(exact_dir, out_dir, error))
    return NULL;
  c->run = side_build(&c->side[exact_dir ? WORMHOLE : EXACT], sc, error);
  if (c->run == NULL)
    return NULL;
  if (c->run->tp->n_flows == 0 && c->run->workload == NULL) {
    g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                "%s: nothing to compare: the scenario has neither flows (<flows>, <permutation>, "
                "<shift>, <uniform>) nor a workload",
                sc->path);
    return NULL;
  }
  if (exact_dir) {
    c->memo_warning = g_strdup(c->run->memo_warning);
    c->exact_from = g_strdup(exact_dir);
    if (!stored_load(&c->side[EXACT], exact_dir, c->run, error))
      return NULL;
  } else {
    g_autoptr(WhRun) check = wh_run_new(sc, &c->side[WORMHOLE].opts, error);
    if (check == NULL)
      return NULL;
    c->memo_warning = g_strdup(check->memo_warning);
  }
  c->workload = c->run->workload != NULL;
  c->dir = g_strdup(out_dir);
  if (!wh_output_dir_prepare(out_dir, error))
    return NULL;
  for (int k = exact_dir ? WORMHOLE : EXACT; k < N_SIDES; k++) {
    c->side[k].dir = g_build_filename(out_dir, c->side[k].what, NULL);
    if (!wh_output_dir_prepare(c->side[k].dir, error))
      return NULL;
  }
  return g_steal_pointer(&c);
}

const WhRun *wh_compare_built_run(const WhCompare *c)
{
  return c->run;
}

const char *wh_compare_memo_warning(const WhCompare *c)
{
  return c->memo_warning;
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

/* `v` to nine significant digits, or null when it is not finite. */
static void set_num(JsonObject *o, const char *key, double v)
{
  if (isfinite(v))
    json_object_set_double_member(o, key, wh_units_round(v, "%.9g"));
  else
    json_object_set_null_member(o, key);
}

static gboolean keep_wormhole_field(const char *key)
{
  static const char *const fields[] = {"fast_forwards", "skip_backs", "advanced_bytes",
                                       "time_steady_fraction", "events_skipped_est"};
  if (g_str_has_prefix(key, "wormhole") || g_str_has_prefix(key, "memo_"))
    return TRUE;
  for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
    if (strcmp(key, fields[i]) == 0)
      return TRUE;
  return FALSE;
}

/* The members of the summary `summary` that Wormhole reports (keep_wormhole_field), in
 * its order, copied. (transfer full) */
static JsonObject *wormhole_fields(JsonObject *summary)
{
  JsonObject *o = json_object_new();
  g_autoptr(GList) keys = json_object_get_members(summary);
  for (GList *k = keys; k; k = k->next)
    if (keep_wormhole_field(k->data))
      json_object_set_member(o, k->data, json_object_dup_member(summary, k->data));
  return o;
}

static void add_side(JsonObject *o, const Side *s)
{
  JsonObject *x = json_object_new();
  json_object_set_string_member(x, "scheduler", s->scheduler);
  json_object_set_string_member(x, "inner_scheduler", s->inner_scheduler);
  json_object_set_string_member(x, "mode", s->mode);
  json_object_set_double_member(x, "wall_s", wh_units_round(s->wall_s, "%.6f"));
  if (s->process_s >= 0)
    json_object_set_double_member(x, "process_s", wh_units_round(s->process_s, "%.6f"));
  else
    json_object_set_null_member(x, "process_s");
  json_object_set_int_member(x, "events_executed", (gint64)s->events);
  json_object_set_int_member(x, "sim_end_ps", (gint64)s->sim_end);
  json_object_set_int_member(x, "makespan_ps", (gint64)s->makespan);
  if (s->iterations->len)
    json_object_set_int_member(x, "iteration_time_ps",
                               (gint64)(iteration_sum(s) / s->iterations->len));
  if (s->stopped_early)
    json_object_set_string_member(x, "stopped_early", s->stopped_early);
  if (s->problem)
    json_object_set_string_member(x, "problem", s->problem);
  else
    json_object_set_null_member(x, "problem");
  json_object_set_object_member(o, s->what, x);
}

/* The errors of the Wormhole run against the exact one: iteration times, op ends, FCT. */
static void add_errors(JsonObject *o, const WhCompare *c)
{
  const Side *e = &c->side[EXACT], *w = &c->side[WORMHOLE];
  set_num(o, "makespan_error", rel((double)w->makespan, (double)e->makespan));
  if (have_iterations(c)) {
    set_num(o, "iteration_time_error", rel((double)iteration_sum(w), (double)iteration_sum(e)));
    JsonArray *per = json_array_new();
    for (guint i = 0; i < e->iterations->len; i++) {
      double v = rel((double)g_array_index(w->iterations, WhTime, i),
                     (double)g_array_index(e->iterations, WhTime, i));
      if (isfinite(v))
        json_array_add_double_element(per, wh_units_round(v, "%.9g"));
      else
        json_array_add_null_element(per);
    }
    json_object_set_array_member(o, "iteration_time_error_per_iteration", per);
  } else {
    json_object_set_null_member(o, "iteration_time_error");
  }
  if (c->workload) {
    JsonObject *ops = json_object_new();
    json_object_set_int_member(ops, "ops", c->ops_compared);
    set_num(ops, "mean", c->op_error_mean);
    set_num(ops, "max", c->op_error_max);
    json_object_set_object_member(o, "op_end_time_error", ops);
  }
  const WhCompareFctError *f = &c->fct;
  JsonObject *fct = json_object_new();
  json_object_set_int_member(fct, "flows", f->matched);
  json_object_set_int_member(fct, "unfinished", f->unfinished);
  json_object_set_int_member(fct, "only_exact", f->only_exact);
  json_object_set_int_member(fct, "only_wormhole", f->only_wormhole);
  set_num(fct, "mean", f->mean);
  set_num(fct, "p99", f->p99);
  set_num(fct, "max", f->max);
  set_num(fct, "signed_mean", f->signed_mean);
  json_object_set_object_member(o, "fct_error", fct);
}

char *wh_compare_json(const WhCompare *c)
{
  const Side *e = &c->side[EXACT], *w = &c->side[WORMHOLE];
  g_autoptr(JsonObject) o = json_object_new();
  json_object_set_string_member(o, "scenario", c->sc->name ? c->sc->name : "");
  json_object_set_int_member(o, "seed", (gint64)e->seed);
  json_object_set_string_member(o, "cc", e->cc);
  if (c->exact_from)
    json_object_set_string_member(o, "exact_from", c->exact_from);
  else
    json_object_set_null_member(o, "exact_from");
  add_side(o, e);
  add_side(o, w);
  set_num(o, "wall_speedup", w->wall_s > 0 ? e->wall_s / w->wall_s : NAN);
  set_num(o, "process_speedup",
          e->process_s > 0 && w->process_s > 0 ? e->process_s / w->process_s : NAN);
  set_num(o, "event_speedup", w->events ? (double)e->events / (double)w->events : NAN);
  set_num(o, "events_skipped", e->events ? 1.0 - (double)w->events / (double)e->events : NAN);
  add_errors(o, c);
  if (c->ens_size)
    add_ensemble(o, c);
  json_object_set_int_member(o, "bytes_skipped", (gint64)w->advanced_bytes);
  json_object_set_object_member(o, "wormhole_summary", wormhole_fields(w->summary));
  JsonArray *files = json_array_new();
  if (!c->exact_from)
    json_array_add_string_element(files, "exact/");
  json_array_add_string_element(files, "wormhole/");
  json_array_add_string_element(files, "compare-flows.csv");
  if (c->workload)
    json_array_add_string_element(files, "compare-ops.csv");
  json_object_set_array_member(o, "files", files);
  JsonArray *plots = json_array_new();
  for (guint i = 0; c->plots && i < c->plots->len; i++)
    json_array_add_string_element(plots, c->plots->pdata[i]);
  json_object_set_array_member(o, "plots", plots);
  if (c->plots_note)
    json_object_set_string_member(o, "plots_note", c->plots_note);
  return wh_json_text(o);
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
    wh_csv_field(csv, a->key);
    g_string_append_printf(csv, ",%u,%u,%" G_GUINT64_FORMAT ",%u,", a->src, a->dst, a->bytes,
                           a->id);
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
    g_string_append_printf(csv, "%u,%u,%s,", i, a->rank, a->kind);
    wh_csv_field(csv, a->name);
    g_string_append_c(csv, ',');
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

/* Runs gnuplot on `script` (in a new empty working directory); its standard output
 * (an SVG document) or NULL. */
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
  /* the scenario's name enters the scripts only as a quoted literal (gnuplot.h) */
  const char *name = c->sc->name ? c->sc->name : "";
  g_autofree char *fct_title = g_strdup_printf("%s: flow completion times", name);
  g_autofree char *error_title = g_strdup_printf("%s: FCT error of Wormhole", name);
  g_autofree char *fct_quoted = wh_gnuplot_quote(fct_title);
  g_autofree char *error_quoted = wh_gnuplot_quote(error_title);
  const char *head = "set terminal svg noenhanced size 640,480 font 'sans,11'\nset key top left\n";
  g_autofree char *scatter = g_strdup_printf(
      "%s$d << EOD\n%sEOD\nset title %s\nset logscale xy\n"
      "set xlabel 'exact FCT (us)'\nset ylabel 'Wormhole FCT (us)'\n"
      "plot $d using 1:2 with points pt 7 ps 0.5 title 'flows', x with lines dt 2 title "
      "'equal'\n",
      head, pts->str, fct_quoted);
  g_autofree char *cdf_script =
      g_strdup_printf("%s$d << EOD\n%sEOD\nset title %s\nset xrange "
                      "[0:*]\nset yrange [0:1]\n"
                      "set xlabel '|FCT error| (%%)'\nset ylabel 'fraction of flows'\n"
                      "plot $d using 1:2 with steps title 'CDF'\n",
                      head, cdf->str, error_quoted);
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

/* ---- the perturbation ensemble ---- */

gboolean wh_compare_set_ensemble(WhCompare *c, const WhCompareEnsemble *ens, GError **error)
{
  if (ens->size < 2 || ens->size > WH_COMPARE_ENSEMBLE_MAX)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "--ensemble %u: expected 2..%d runs (the reference and 1..%d members)",
                        ens->size, WH_COMPARE_ENSEMBLE_MAX, WH_COMPARE_ENSEMBLE_MAX - 1);
  if (ens->jobs < 1)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "--jobs: expected at least 1");
  if (ens->seeds > WH_COMPARE_ENSEMBLE_SEEDS_MAX)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "--ensemble-seeds %u: expected 0..%d seed members", ens->seeds,
                        WH_COMPARE_ENSEMBLE_SEEDS_MAX);
  c->ens_size = ens->size;
  c->ens_seeds = ens->seeds;
  c->seed_members = g_new0(Side, ens->seeds ? ens->seeds : 1);
  c->ens_jobs = ens->jobs;
  c->whsim = g_strdup(ens->whsim);
  c->ens_extra = g_strdupv(ens->extra_args);
  c->ens_from = g_strdup(ens->from_dir);
  c->members = g_new0(Side, ens->size - 1);
  if (c->ens_from && !g_file_test(c->ens_from, G_FILE_TEST_IS_DIR))
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "--ensemble-from %s: not a directory", c->ens_from);
  g_autofree char *dir = g_build_filename(c->dir, "ensemble", NULL);
  if (c->ens_from == NULL && g_mkdir_with_parents(dir, 0777) != 0)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s: cannot create the directory: %s", dir, g_strerror(errno));
  return TRUE;
}

/* The command line of an ensemble member: `whsim run` with the exact run's options (its
 * congestion control as built, its sets with Mode=off), the seed as built plus
 * `seed_offset`, and with `jitter` > 0 DelayJitter=jitter. (transfer full) */
static char **member_argv(const WhCompare *c, const WhRun *built, uint32_t jitter,
                          uint64_t seed_offset, const char *dir)
{
  const WhRunOptions *o = &c->side[EXACT].opts;
  GPtrArray *a = g_ptr_array_new();
  g_ptr_array_add(a, g_strdup(c->whsim));
  g_ptr_array_add(a, g_strdup("run"));
  g_ptr_array_add(a, g_strdup(c->sc->path));
  g_ptr_array_add(a, g_strdup("--quiet"));
  g_ptr_array_add(a, g_strdup("--progress=never"));
  g_ptr_array_add(a, g_strconcat("--out=", dir, NULL));
  g_ptr_array_add(a, g_strdup_printf("--seed=%" G_GUINT64_FORMAT, built->seed + seed_offset));
  g_ptr_array_add(a, g_strconcat("--cc=", built->cc->name, NULL));
  if (o->scheduler)
    g_ptr_array_add(a, g_strconcat("--scheduler=", o->scheduler, NULL));
  if (o->iterations)
    g_ptr_array_add(a, g_strdup_printf("--iterations=%u", o->iterations));
  if (o->data_dir)
    g_ptr_array_add(a, g_strconcat("--data-dir=", o->data_dir, NULL));
  if (o->max_memory)
    g_ptr_array_add(a, g_strdup_printf("--max-memory=%" G_GUINT64_FORMAT "B", o->max_memory));
  for (char **p = c->ens_extra; p && *p; p++)
    g_ptr_array_add(a, g_strdup(*p));
  for (char **p = c->side[EXACT].sets; p && *p; p++)
    g_ptr_array_add(a, g_strconcat("--set=", *p, NULL));
  if (jitter)
    g_ptr_array_add(a, g_strdup_printf("--set=wh::Link::DelayJitter=%u", jitter));
  g_ptr_array_add(a, NULL);
  return (char **)g_ptr_array_free(a, FALSE);
}

/* Runs the members, the jitter members then the seed members, as child processes in one
 * batch (at most ens_jobs at a time) and reads their outputs back as stored exact runs
 * checked against `built`. A member that fails fails the comparison with its message. */
static gboolean run_members(WhCompare *c, const WhRun *built, GError **error)
{
  uint32_t nj = c->ens_size - 1, n = nj + c->ens_seeds;
  g_autofree WhRunnerJob *jobs = g_new0(WhRunnerJob, n);
  g_auto(GStrv) dirs = g_new0(char *, n + 1);
  g_auto(GStrv) what = g_new0(char *, n + 1);
  for (uint32_t i = 0; i < n; i++) {
    gboolean jitter = i < nj;
    uint32_t k = jitter ? i + 1 : i - nj + 1;
    g_autofree char *name = g_strdup_printf(jitter ? "member-%u" : "seed-%u", k);
    dirs[i] = c->ens_from ? g_build_filename(c->ens_from, name, NULL)
                          : g_build_filename(c->dir, "ensemble", name, NULL);
    jobs[i].argv = member_argv(c, built, jitter ? k : 0, jitter ? 0 : k, dirs[i]);
    what[i] = jitter ? g_strdup_printf("ensemble member %u (wh::Link::DelayJitter=%u", k, k)
                     : g_strdup_printf("ensemble seed member %u (--seed %" G_GUINT64_FORMAT, k,
                                       built->seed + k);
  }
  g_autoptr(GError) err = NULL;
  gboolean ok = c->ens_from != NULL ||
                wh_runner_run(jobs, n, c->ens_jobs, c->side[EXACT].opts.interrupt, NULL, &err);
  if (!ok)
    g_set_error(error, WH_RUNNER_ERROR, err->code, "ensemble members: %s", err->message);
  for (uint32_t i = 0; ok && i < n; i++) {
    if (jobs[i].exit_status == 0 && jobs[i].term_signal == 0)
      continue;
    g_autofree char *status = wh_runner_job_status_text(&jobs[i]);
    g_autofree char *log = g_strdup(jobs[i].log ? jobs[i].log : "");
    g_set_error(error, WH_RUNNER_ERROR, WH_RUNNER_ERROR_SPAWN, "%s, outputs in %s) failed (%s)%s%s",
                what[i], dirs[i], status, *g_strstrip(log) ? ": " : "", log);
    ok = FALSE;
  }
  for (uint32_t i = 0; i < n; i++) {
    g_strfreev(jobs[i].argv);
    wh_runner_job_clear(&jobs[i]);
  }
  for (uint32_t i = 0; ok && i < n; i++) {
    Side *s = i < nj ? &c->members[i] : &c->seed_members[i - nj];
    s->what = "member";
    s->member = TRUE;
    s->seed_offset = i < nj ? 0 : i - nj + 1;
    s->jitter = i < nj ? i + 1 : 0;
    s->stored_member = c->ens_from != NULL;
    ok = stored_load(s, dirs[i], built, error);
  }
  return ok;
}

/* The nearest-rank quantile q of the n sorted values v (NAN when n is 0). */
static double quantile(const double *v, guint n, double q)
{
  if (n == 0)
    return NAN;
  guint r = (guint)ceil(q * n);
  return v[r ? r - 1 : 0];
}

/* The class of an exact flow: its op's kind for a workload's flow, else
 * "point-to-point". (static) */
static const char *flow_class(const WhCompare *c, const WhCompareFlow *f)
{
  const GArray *ops = c->side[EXACT].ops;
  unsigned op, index;
  char tail;
  if (c->workload && sscanf(f->key, "op%u.%u%c", &op, &index, &tail) == 2 && op < ops->len)
    return g_array_index(ops, OpEnd, op).kind;
  return "point-to-point";
}

/* Appends metric `name`'s value for a member's sample, or sets Wormhole's. */
static void metric_put(GArray *metrics, guint *at, const char *name, gboolean wormhole, double v)
{
  if (*at >= metrics->len) {
    EnsembleMetric m = {g_strdup(name), g_array_new(FALSE, TRUE, sizeof(double)), NAN, TRUE};
    g_array_append_val(metrics, m);
  }
  EnsembleMetric *m = &g_array_index(metrics, EnsembleMetric, *at);
  if (wormhole)
    m->wormhole = v;
  else
    g_array_append_val(m->members, v);
  (*at)++;
}

/* The sorted values of `v` whose class (per exact flow or op) is `cls`. */
static guint sorted_of(const double *v, const char *const *cls, guint n, const char *want,
                       double *out)
{
  guint k = 0;
  for (guint i = 0; i < n; i++)
    if (isfinite(v[i]) && strcmp(cls[i], want) == 0)
      out[k++] = v[i];
  qsort(out, k, sizeof *out, cmp_double);
  return k;
}

/* The deviations of sample `s` (a member, or the Wormhole run) from the reference, into
 * `metrics`: the iteration time (or
 * makespan), per op kind the end-time error quantiles, per flow class the relative
 * differences of the FCT quantiles, and the per-flow spread (mean |FCT error|). The
 * metrics come in the same order for every sample, classes in the exact run's order. */
static gboolean sample_metrics(WhCompare *c, GArray *metrics, const Side *s, gboolean wormhole,
                               GError **error)
{
  const Side *e = &c->side[EXACT];
  guint at = 0;
  gboolean iter = c->workload && e->iterations->len > 0;
  double t = iter ? (s->iterations->len == e->iterations->len
                         ? rel((double)iteration_sum(s), (double)iteration_sum(e))
                         : NAN)
                  : rel((double)s->makespan, (double)e->makespan);
  metric_put(metrics, &at, iter ? "iteration_time" : "makespan", wormhole, fabs(t));
  g_autoptr(GPtrArray) kinds = g_ptr_array_new();
  guint n_ops = e->ops->len;
  g_autofree double *op_err = g_new(double, n_ops + 1), *buf = g_new(double, n_ops + 1);
  g_autofree const char **op_kind = g_new(const char *, n_ops + 1);
  for (guint i = 0; i < n_ops; i++) {
    const OpEnd *a = &g_array_index(e->ops, OpEnd, i);
    const OpEnd *b = i < s->ops->len ? &g_array_index(s->ops, OpEnd, i) : NULL;
    op_kind[i] = a->kind;
    op_err[i] =
        b && a->ended && b->ended && a->end > 0 ? fabs(rel((double)b->end, (double)a->end)) : NAN;
    if (!g_ptr_array_find_with_equal_func(kinds, a->kind, g_str_equal, NULL))
      g_ptr_array_add(kinds, (gpointer)a->kind);
  }
  static const char *const qn[] = {"p50", "p99", "max"};
  static const double qv[] = {0.5, 0.99, 1.0};
  for (guint j = 0; j < kinds->len; j++) {
    guint m = sorted_of(op_err, op_kind, n_ops, kinds->pdata[j], buf);
    for (int q = 0; q < 3; q++) {
      g_autofree char *name = g_strdup_printf("op_end_time.%s.%s", (char *)kinds->pdata[j], qn[q]);
      metric_put(metrics, &at, name, wormhole, quantile(buf, m, qv[q]));
    }
  }
  guint ne = e->flows->len;
  g_autofree int64_t *match = g_new(int64_t, ne + 1);
  WhCompareFctError fe;
  if (!wh_compare_match_flows((const WhCompareFlow *)e->flows->data, ne,
                              (const WhCompareFlow *)s->flows->data, s->flows->len, match, &fe,
                              error))
    return FALSE;
  g_autofree double *fct_e = g_new(double, ne + 1), *fct_s = g_new(double, ne + 1);
  g_autofree double *be = g_new(double, ne + 1), *bs = g_new(double, ne + 1);
  g_autofree const char **cls = g_new(const char *, ne + 1);
  g_autoptr(GPtrArray) classes = g_ptr_array_new();
  for (guint i = 0; i < ne; i++) {
    const WhCompareFlow *a = &g_array_index(e->flows, WhCompareFlow, i);
    const WhCompareFlow *b =
        match[i] >= 0 ? &g_array_index(s->flows, WhCompareFlow, match[i]) : NULL;
    cls[i] = flow_class(c, a);
    fct_e[i] = a->finish > a->start ? (double)(a->finish - a->start) : NAN;
    fct_s[i] = b && b->finish > b->start ? (double)(b->finish - b->start) : NAN;
    if (!g_ptr_array_find_with_equal_func(classes, cls[i], g_str_equal, NULL))
      g_ptr_array_add(classes, (gpointer)cls[i]);
  }
  static const char *const fn[] = {"p50", "p90", "p99", "max"};
  static const double fv[] = {0.5, 0.9, 0.99, 1.0};
  for (guint j = 0; j < classes->len; j++) {
    guint me = sorted_of(fct_e, cls, ne, classes->pdata[j], be);
    guint ms = sorted_of(fct_s, cls, ne, classes->pdata[j], bs);
    for (int q = 0; q < 4; q++) {
      g_autofree char *name = g_strdup_printf("fct.%s.%s", (char *)classes->pdata[j], fn[q]);
      metric_put(metrics, &at, name, wormhole,
                 fabs(rel(quantile(bs, ms, fv[q]), quantile(be, me, fv[q]))));
    }
  }
  metric_put(metrics, &at, "per_flow_spread", wormhole, fe.matched ? fe.mean : NAN);
  return TRUE;
}

/* The metrics of the members `members` (n of them) and of the Wormhole run, into a new
 * array at `out`; their mean per-flow spread and whether it is chaotic. */
static gboolean members_metrics(WhCompare *c, const Side *members, uint32_t n, GArray **out,
                                double *spread_mean, gboolean *chaotic, GError **error)
{
  GArray *metrics = *out = g_array_new(FALSE, TRUE, sizeof(EnsembleMetric));
  for (uint32_t k = 0; k < n; k++)
    if (!sample_metrics(c, metrics, &members[k], FALSE, error))
      return FALSE;
  if (!sample_metrics(c, metrics, &c->side[WORMHOLE], TRUE, error))
    return FALSE;
  EnsembleMetric *spread = &g_array_index(metrics, EnsembleMetric, metrics->len - 1);
  double sum = 0;
  for (guint i = 0; i < spread->members->len; i++)
    sum += g_array_index(spread->members, double, i);
  *spread_mean = sum / spread->members->len;
  *chaotic = *spread_mean > WH_COMPARE_CHAOTIC_SPREAD;
  spread->judged = !*chaotic;
  return TRUE;
}

/* After both runs: the jitter members' metrics and, apart, the seed members'. */
static gboolean ensemble_metrics(WhCompare *c, GError **error)
{
  return members_metrics(c, c->members, c->ens_size - 1, &c->ens_metric, &c->ens_spread,
                         &c->chaotic, error) &&
         (c->ens_seeds == 0 || members_metrics(c, c->seed_members, c->ens_seeds, &c->seed_metric,
                                               &c->seed_spread, &c->seed_chaotic, error));
}

/* The largest member deviation (NAN when none is finite). */
static double member_max(const EnsembleMetric *m)
{
  double mx = NAN;
  for (guint i = 0; i < m->members->len; i++) {
    double v = g_array_index(m->members, double, i);
    if (isfinite(v) && !(v <= mx))
      mx = v;
  }
  return mx;
}

/* "inside", "outside" or NULL (not judged, or no value to judge). */
static const char *verdict(const EnsembleMetric *m)
{
  double mx = member_max(m);
  if (!m->judged || !isfinite(m->wormhole) || !isfinite(mx))
    return NULL;
  return m->wormhole <= mx ? "inside" : "outside";
}

/* The metrics' object: per metric the members' values, their max and mean, Wormhole's,
 * the verdict and the ratio; the counts of judged metrics and of those inside. */
static JsonObject *metrics_json(const GArray *metrics, guint *judged, guint *inside)
{
  JsonObject *o = json_object_new();
  *judged = *inside = 0;
  for (guint i = 0; metrics && i < metrics->len; i++) {
    const EnsembleMetric *m = &g_array_index(metrics, EnsembleMetric, i);
    JsonObject *y = json_object_new();
    JsonArray *mem = json_array_new();
    double sum = 0;
    guint n = 0;
    for (guint k = 0; k < m->members->len; k++) {
      double v = g_array_index(m->members, double, k);
      if (isfinite(v)) {
        json_array_add_double_element(mem, wh_units_round(v, "%.9g"));
        sum += v;
        n++;
      } else {
        json_array_add_null_element(mem);
      }
    }
    json_object_set_array_member(y, "exact_ensemble", mem);
    double mx = member_max(m);
    set_num(y, "exact_ensemble_max", mx);
    set_num(y, "exact_ensemble_mean", n ? sum / n : NAN);
    set_num(y, "wormhole", m->wormhole);
    json_object_set_boolean_member(y, "judged", m->judged);
    const char *v = verdict(m);
    if (v)
      json_object_set_string_member(y, "verdict", v);
    else
      json_object_set_null_member(y, "verdict");
    set_num(y, "ratio", mx > 0 ? m->wormhole / mx : NAN);
    *judged += v != NULL;
    *inside += v && strcmp(v, "inside") == 0;
    json_object_set_object_member(o, m->name, y);
  }
  return o;
}

/* The seed members' object: their count, directories, spread and metrics. */
static JsonObject *seeds_json(const WhCompare *c)
{
  JsonObject *x = json_object_new();
  json_object_set_int_member(x, "size", c->ens_seeds);
  json_object_set_string_member(x, "knob", "--seed");
  json_object_set_int_member(x, "seed_first", (gint64)(c->side[EXACT].seed + 1));
  json_object_set_int_member(x, "seed_last", (gint64)(c->side[EXACT].seed + c->ens_seeds));
  JsonArray *dirs = json_array_new();
  for (uint32_t i = 1; i <= c->ens_seeds; i++) {
    g_autofree char *d = member_dir_text(c, "seed", i);
    json_array_add_string_element(dirs, d);
  }
  json_object_set_array_member(x, "member_dirs", dirs);
  set_num(x, "member_spread_mean", c->seed_spread);
  json_object_set_boolean_member(x, "chaotic", c->seed_chaotic);
  guint judged, inside;
  json_object_set_object_member(x, "metrics", metrics_json(c->seed_metric, &judged, &inside));
  json_object_set_int_member(x, "judged", judged);
  json_object_set_int_member(x, "inside", inside);
  return x;
}

static void add_ensemble(JsonObject *o, const WhCompare *c)
{
  JsonObject *x = json_object_new();
  json_object_set_int_member(x, "size", c->ens_size);
  json_object_set_int_member(x, "members", c->ens_size - 1);
  json_object_set_string_member(x, "knob", "wh::Link::DelayJitter");
  json_object_set_int_member(x, "jobs", c->ens_jobs);
  JsonArray *dirs = json_array_new();
  for (uint32_t i = 1; i < c->ens_size; i++) {
    g_autofree char *d = member_dir_text(c, "member", i);
    json_array_add_string_element(dirs, d);
  }
  json_object_set_array_member(x, "member_dirs", dirs);
  if (c->ens_from)
    json_object_set_string_member(x, "members_from", c->ens_from);
  else
    json_object_set_null_member(x, "members_from");
  set_num(x, "member_spread_mean", c->ens_spread);
  set_num(x, "chaotic_spread", WH_COMPARE_CHAOTIC_SPREAD);
  json_object_set_boolean_member(x, "chaotic", c->chaotic);
  guint judged, inside;
  json_object_set_object_member(x, "metrics", metrics_json(c->ens_metric, &judged, &inside));
  json_object_set_int_member(x, "judged", judged);
  json_object_set_int_member(x, "inside", inside);
  if (c->ens_seeds)
    json_object_set_object_member(x, "seeds", seeds_json(c));
  json_object_set_object_member(o, "ensemble", x);
}

/* The counts of judged metrics and of those inside, and the metrics outside with their
 * ratios, comma-separated. (transfer full) */
static char *verdicts_text(const GArray *metrics, guint *judged, guint *inside)
{
  *judged = *inside = 0;
  GString *outside = g_string_new(NULL);
  for (guint i = 0; metrics && i < metrics->len; i++) {
    const EnsembleMetric *m = &g_array_index(metrics, EnsembleMetric, i);
    const char *v = verdict(m);
    double mx = member_max(m);
    *judged += v != NULL;
    *inside += v && strcmp(v, "inside") == 0;
    if (v && strcmp(v, "outside") == 0)
      g_string_append_printf(outside, "%s%s (%.2fx)", outside->len ? ", " : "", m->name,
                             mx > 0 ? m->wormhole / mx : INFINITY);
  }
  return g_string_free(outside, FALSE);
}

/* The ensemble's lines of the printed summary. */
static void print_ensemble(const WhCompare *c, FILE *out)
{
  g_autofree char *at = c->ens_from ? g_strdup_printf("read from %s", c->ens_from)
                                    : g_strdup_printf("outputs in %s/ensemble", c->dir);
  fprintf(out,
          "ensemble   the reference and %u members (wh::Link::DelayJitter=1..%u, %s/): "
          "per-flow spread %.3f%%%s\n",
          c->ens_size - 1, c->ens_size - 1, at, c->ens_spread * 100,
          c->chaotic ? ": chaotic (above 5%), per-flow errors shown, not judged" : "");
  for (guint i = 0; c->ens_metric && i < c->ens_metric->len; i++) {
    const EnsembleMetric *m = &g_array_index(c->ens_metric, EnsembleMetric, i);
    const char *v = verdict(m);
    if (i == 0 || i + 1 == c->ens_metric->len)
      fprintf(out, "  %-22s Wormhole %.3f%%, ensemble max %.3f%%: %s\n", m->name, m->wormhole * 100,
              member_max(m) * 100, v ? v : "not judged");
  }
  guint judged, inside;
  g_autofree char *outside = verdicts_text(c->ens_metric, &judged, &inside);
  fprintf(out, "verdicts   %u of %u judged metrics inside the ensemble%s%s\n", inside, judged,
          *outside ? "; outside: " : "", outside);
  if (c->ens_seeds == 0 || c->seed_metric == NULL)
    return;
  g_autofree char *seed_outside = verdicts_text(c->seed_metric, &judged, &inside);
  fprintf(out,
          "seeds      %u seed members (--seed %" G_GUINT64_FORMAT "..%" G_GUINT64_FORMAT
          ", %s/seed-k/): per-flow spread %.3f%%%s; %u of %u judged "
          "metrics inside%s%s\n",
          c->ens_seeds, c->side[EXACT].seed + 1, c->side[EXACT].seed + c->ens_seeds, at,
          c->seed_spread * 100, c->seed_chaotic ? " (chaotic: per_flow_spread not judged)" : "",
          inside, judged, *seed_outside ? "; outside: " : "", seed_outside);
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

/* With a stored exact run, whose workload flows could not be checked before the run:
 * each flow matched by key has the same source, destination and size in both runs. */
static gboolean check_stored_flows(const WhCompare *c, GError **error)
{
  const Side *e = &c->side[EXACT], *w = &c->side[WORMHOLE];
  static const char *const fields[] = {"src", "dst", "bytes"};
  for (guint i = 0; i < e->flows->len; i++) {
    if (c->match[i] < 0)
      continue;
    const WhCompareFlow *a = &g_array_index(e->flows, WhCompareFlow, i);
    const WhCompareFlow *b = &g_array_index(w->flows, WhCompareFlow, c->match[i]);
    uint64_t x[] = {a->src, a->dst, a->bytes}, y[] = {b->src, b->dst, b->bytes};
    for (int k = 0; k < 3; k++) {
      if (x[k] != y[k]) {
        g_autofree char *path = g_build_filename(c->exact_from, "flows.csv", NULL);
        return flow_differs(path, i + 2, fields[k], x[k], y[k], error);
      }
    }
  }
  return TRUE;
}

gboolean wh_compare_execute(WhCompare *c, GError **error)
{
  g_return_val_if_fail(c->run != NULL, FALSE);
  if (c->ens_size && !run_members(c, c->run, error))
    return FALSE;
  WhRun *run = g_steal_pointer(&c->run);
  if (c->exact_from == NULL) {
    if (!side_execute(&c->side[EXACT], run, error))
      return FALSE;
    run = side_build(&c->side[WORMHOLE], c->sc, error);
  }
  if (run == NULL || !side_execute(&c->side[WORMHOLE], run, error))
    return FALSE;
  const Side *e = &c->side[EXACT], *w = &c->side[WORMHOLE];
  c->match = g_new(int64_t, e->flows->len ? e->flows->len : 1);
  c->flow_error = g_new(double, e->flows->len ? e->flows->len : 1);
  if (!wh_compare_match_flows((const WhCompareFlow *)e->flows->data, e->flows->len,
                              (const WhCompareFlow *)w->flows->data, w->flows->len, c->match,
                              &c->fct, error) ||
      (c->exact_from && !check_stored_flows(c, error)))
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
  if (c->ens_size && !ensemble_metrics(c, error))
    return FALSE;
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
  if (c->exact_from)
    fprintf(out,
            "compare    %s (seed %" G_GUINT64_FORMAT ", %s): the stored exact run in %s (%s "
            "scheduler), against Wormhole (mode %s) run now\n",
            c->sc->name ? c->sc->name : "", e->seed, e->cc, c->exact_from, e->scheduler, w->mode);
  else
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
          "speedup    %.2fx in wall time (%.3f s exact%s %.3f s Wormhole); %.2fx in events "
          "(%.1f%% of the exact run's %" G_GUINT64_FORMAT " skipped)\n",
          w->wall_s > 0 ? e->wall_s / w->wall_s : 0, e->wall_s,
          c->exact_from ? ", stored: measured at another time;" : ",", w->wall_s,
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
  if (c->ens_size && c->ens_metric)
    print_ensemble(c, out);
  if (c->problem)
    fprintf(out, "problem    %s\n", c->problem);
  fprintf(out, "outputs    %s/compare.json, compare-flows.csv%s%s; %s\n", c->dir,
          c->workload ? ", compare-ops.csv" : "",
          c->plots && c->plots->len ? ", compare-fct.svg, compare-fct-error-cdf.svg" : "",
          c->exact_from ? "the Wormhole run's own outputs in wormhole/"
                        : "each run's own outputs in exact/ and wormhole/");
}
