/* The merge of a sweep's cells into sweep.csv and sweep.json (sweep.h): per cell its
 * coordinates, its status and the key results, read from the cell's outputs: from
 * summary.json the iteration time (with a workload) and the events, from flows.csv the
 * makespan (last finish - first start) and the FCT quantiles (nearest rank, over
 * finished flows), from compare.json Wormhole's speedups and errors (a compare cell's
 * other results are its exact run's, in exact/). Cost: one read of each cell's files. */
#include "sweep.h"

#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "csv.h"
#include "file-read.h"
#include "json-text.h"
#include "outputs.h"

#define RESULT_MAX_BYTES ((gsize)256 << 20)
#define FLOWS_HEADER "flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key"

/* The key results, in column order; an integer column holds picoseconds or a count. */
const char *const wh_sweep_result_columns[] = {
    "iteration_time_ps",
    "makespan_ps",
    "fct_p50_ps",
    "fct_p99_ps",
    "fct_max_ps",
    "events",
    "wall_s",
    "wormhole_wall_speedup",
    "wormhole_event_speedup",
    "wormhole_time_error",
    "wormhole_fct_error_p99",
    NULL,
};
enum {
  R_ITER,
  R_MAKESPAN,
  R_P50,
  R_P99,
  R_MAX,
  R_EVENTS,
  R_WALL,
  R_WALL_SPEEDUP,
  R_EVENT_SPEEDUP,
  R_TIME_ERROR,
  R_FCT_ERROR,
  R_N
};
static const gboolean result_is_int[R_N] = {TRUE, TRUE, TRUE, TRUE, TRUE, TRUE};

typedef struct {
  gboolean has[R_N];
  double v[R_N];
} Results;

static void put(Results *r, int k, double v)
{
  r->has[k] = TRUE;
  r->v[k] = v;
}

static JsonObject *read_object(const char *path)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!wh_file_read(path, RESULT_MAX_BYTES, &text, &len, NULL))
    return NULL;
  g_autoptr(JsonParser) parser = json_parser_new();
  if (!json_parser_load_from_data(parser, text, (gssize)len, NULL))
    return NULL;
  JsonNode *root = json_parser_get_root(parser);
  return root && JSON_NODE_HOLDS_OBJECT(root) ? json_object_ref(json_node_get_object(root)) : NULL;
}

/* A number member of `o` (a path of member names), when there is one. */
static gboolean member_number(JsonObject *o, const char *name, const char *sub, double *out)
{
  JsonNode *n = o ? json_object_get_member(o, name) : NULL;
  if (n && sub && JSON_NODE_HOLDS_OBJECT(n))
    n = json_object_get_member(json_node_get_object(n), sub);
  else if (sub)
    n = NULL;
  if (n == NULL || !JSON_NODE_HOLDS_VALUE(n))
    return FALSE;
  GType t = json_node_get_value_type(n);
  if (t != G_TYPE_INT64 && t != G_TYPE_DOUBLE)
    return FALSE;
  *out = json_node_get_double(n);
  return TRUE;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The makespan and FCT quantiles of a run's flows.csv. */
static void flow_results(const char *dir, Results *r)
{
  g_autofree char *path = g_build_filename(dir, "flows.csv", NULL);
  g_autoptr(WhCsvReader) rd = wh_csv_reader_new_file(path, RESULT_MAX_BYTES, 1 << 16, NULL);
  if (rd == NULL || !wh_csv_reader_header(rd, FLOWS_HEADER, NULL))
    return;
  g_autoptr(GArray) fct = g_array_new(FALSE, FALSE, sizeof(double));
  double first = INFINITY, last = -INFINITY;
  WhCsvRecord rec;
  while (wh_csv_reader_next(rd, &rec, NULL)) {
    if (rec.n_fields != 8 || !*rec.fields[5])
      continue;
    double start = g_ascii_strtod(rec.fields[4], NULL),
           finish = g_ascii_strtod(rec.fields[5], NULL);
    double f = g_ascii_strtod(rec.fields[6], NULL);
    first = MIN(first, start);
    last = MAX(last, finish);
    g_array_append_val(fct, f);
  }
  if (fct->len == 0)
    return;
  g_array_sort(fct, cmp_double);
  put(r, R_MAKESPAN, last - first);
  const double q[] = {0.5, 0.99, 1.0};
  for (int i = 0; i < 3; i++) {
    guint k = (guint)ceil(q[i] * fct->len);
    put(r, R_P50 + i, g_array_index(fct, double, MAX(k, 1) - 1));
  }
}

/* The results of a complete cell from its directory. */
static void cell_results(const WhSweepCell *c, const char *dir, JsonObject *record, Results *r)
{
  memset(r, 0, sizeof *r);
  double v;
  if (member_number(record, "wall_s", NULL, &v))
    put(r, R_WALL, v);
  g_autofree char *run_dir =
      c->mode == WH_SWEEP_MODE_COMPARE ? g_build_filename(dir, "exact", NULL) : g_strdup(dir);
  g_autofree char *summary_path = g_build_filename(run_dir, "summary.json", NULL);
  g_autoptr(JsonObject) summary = read_object(summary_path);
  if (member_number(summary, "iteration_time_ps", NULL, &v))
    put(r, R_ITER, v);
  if (member_number(summary, "events_executed", NULL, &v))
    put(r, R_EVENTS, v);
  flow_results(run_dir, r);
  if (c->mode != WH_SWEEP_MODE_COMPARE)
    return;
  g_autofree char *cmp_path = g_build_filename(dir, "compare.json", NULL);
  g_autoptr(JsonObject) cmp = read_object(cmp_path);
  if (member_number(cmp, "wall_speedup", NULL, &v))
    put(r, R_WALL_SPEEDUP, v);
  if (member_number(cmp, "event_speedup", NULL, &v))
    put(r, R_EVENT_SPEEDUP, v);
  if (member_number(cmp, "iteration_time_error", NULL, &v) ||
      member_number(cmp, "makespan_error", NULL, &v))
    put(r, R_TIME_ERROR, v);
  if (member_number(cmp, "fct_error", "p99", &v))
    put(r, R_FCT_ERROR, v);
}

/* A result as CSV text: integers without a fraction, others with 9 significant
 * digits; empty when missing. (transfer full) */
static char *result_text(const Results *r, int k)
{
  if (!r->has[k])
    return g_strdup("");
  if (result_is_int[k])
    return g_strdup_printf("%.0f", r->v[k]);
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  return g_strdup(g_ascii_formatd(buf, sizeof buf, "%.9g", r->v[k]));
}

static const char *state_name(WhSweepCellState s)
{
  return s == WH_SWEEP_CELL_OK ? "ok" : s == WH_SWEEP_CELL_FAILED ? "failed" : "missing";
}

typedef struct {
  const WhSweep *sw;
  const char *out_dir;
  GString *csv;
  JsonBuilder *json;
  WhSweepCounts counts;
} Merge;

static void csv_header(Merge *m)
{
  g_string_append(m->csv, "cell,scenario");
  for (guint i = 0; i < m->sw->params->len; i++) {
    g_string_append_c(m->csv, ',');
    wh_csv_field(m->csv, ((WhSweepParam *)m->sw->params->pdata[i])->name);
  }
  g_string_append(m->csv, ",seed,mode,status,exit_status,error");
  for (const char *const *c = wh_sweep_result_columns; *c; c++)
    g_string_append_printf(m->csv, ",%s", *c);
  g_string_append_c(m->csv, '\n');
}

static void json_string_or_null(JsonBuilder *b, const char *name, const char *v)
{
  json_builder_set_member_name(b, name);
  if (v)
    json_builder_add_string_value(b, v);
  else
    json_builder_add_null_value(b);
}

/* What merge reads of one cell. */
typedef struct {
  WhSweepCellState state;
  const char *error; /* the failed cell's last error line (nullable; owned by record) */
  char *exit_text;   /* its exit status, "" when missing */
  JsonObject *record;
  Results r;
} CellRead;

static void cell_read(const WhSweep *sw, const char *out_dir, guint i, CellRead *cr)
{
  const WhSweepCell *c = &sw->cells[i];
  g_autofree char *dir = g_build_filename(out_dir, "cells", c->id, NULL);
  g_autofree char *rec_path = g_build_filename(dir, "cell.json", NULL);
  memset(cr, 0, sizeof *cr);
  cr->record = read_object(rec_path);
  if (cr->record &&
      g_strcmp0(json_object_get_string_member_with_default(cr->record, "cell", ""), c->id) != 0)
    g_clear_pointer(&cr->record, json_object_unref);
  JsonObject *rec = cr->record;
  const char *status = rec ? json_object_get_string_member_with_default(rec, "status", "") : "";
  cr->state = strcmp(status, "ok") == 0       ? WH_SWEEP_CELL_OK
              : strcmp(status, "failed") == 0 ? WH_SWEEP_CELL_FAILED
                                              : WH_SWEEP_CELL_MISSING;
  if (cr->state != WH_SWEEP_CELL_MISSING)
    cell_results(c, dir, rec, &cr->r);
  if (cr->state == WH_SWEEP_CELL_FAILED)
    cr->error = json_object_get_string_member_with_default(rec, "error", NULL);
  cr->exit_text =
      cr->state == WH_SWEEP_CELL_MISSING
          ? g_strdup("")
          : g_strdup_printf("%" G_GINT64_FORMAT,
                            json_object_get_int_member_with_default(rec, "exit_status", -1));
}

static void cell_read_clear(CellRead *cr)
{
  g_free(cr->exit_text);
  if (cr->record)
    json_object_unref(cr->record);
}

/* The cell's row of sweep.csv. */
static void cell_csv(Merge *m, guint i, const CellRead *cr)
{
  const WhSweep *sw = m->sw;
  const WhSweepCell *c = &sw->cells[i];
  wh_csv_field(m->csv, c->id);
  g_string_append_c(m->csv, ',');
  wh_csv_field(m->csv, ((WhSweepScenario *)sw->scenarios->pdata[c->scenario])->name);
  for (guint p = 0; p < sw->params->len; p++) {
    g_string_append_c(m->csv, ',');
    wh_csv_field(m->csv, c->values[p]);
  }
  g_string_append_printf(m->csv, ",%" G_GUINT64_FORMAT ",%s,%s,%s,", c->seed,
                         wh_sweep_mode_name(c->mode), state_name(cr->state), cr->exit_text);
  wh_csv_field(m->csv, cr->error ? cr->error : "");
  for (int k = 0; k < R_N; k++) {
    g_autofree char *t = result_text(&cr->r, k);
    g_string_append_printf(m->csv, ",%s", t);
  }
  g_string_append_c(m->csv, '\n');
}

/* The cell's object in sweep.json. */
static void cell_json(Merge *m, guint i, const CellRead *cr)
{
  const WhSweep *sw = m->sw;
  const WhSweepCell *c = &sw->cells[i];
  JsonBuilder *b = m->json;
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "cell");
  json_builder_add_string_value(b, c->id);
  json_builder_set_member_name(b, "scenario");
  json_builder_add_string_value(b, ((WhSweepScenario *)sw->scenarios->pdata[c->scenario])->name);
  json_builder_set_member_name(b, "params");
  json_builder_begin_object(b);
  for (guint p = 0; p < sw->params->len; p++) {
    json_builder_set_member_name(b, ((WhSweepParam *)sw->params->pdata[p])->name);
    json_builder_add_string_value(b, c->values[p]);
  }
  json_builder_end_object(b);
  json_builder_set_member_name(b, "seed");
  json_builder_add_int_value(b, (gint64)c->seed);
  json_builder_set_member_name(b, "mode");
  json_builder_add_string_value(b, wh_sweep_mode_name(c->mode));
  json_builder_set_member_name(b, "status");
  json_builder_add_string_value(b, state_name(cr->state));
  json_builder_set_member_name(b, "exit_status");
  if (*cr->exit_text)
    json_builder_add_int_value(b, g_ascii_strtoll(cr->exit_text, NULL, 10));
  else
    json_builder_add_null_value(b);
  json_string_or_null(b, "error", cr->error);
  json_builder_set_member_name(b, "results");
  json_builder_begin_object(b);
  for (int k = 0; k < R_N; k++) {
    json_builder_set_member_name(b, wh_sweep_result_columns[k]);
    if (!cr->r.has[k])
      json_builder_add_null_value(b);
    else if (result_is_int[k])
      json_builder_add_int_value(b, (gint64)cr->r.v[k]);
    else
      json_builder_add_double_value(b, cr->r.v[k]);
  }
  json_builder_end_object(b);
  json_builder_end_object(b);
}

/* The cell's row of sweep.csv and its object in sweep.json. */
static void merge_cell(Merge *m, guint i)
{
  CellRead cr;
  cell_read(m->sw, m->out_dir, i, &cr);
  m->counts.ok += cr.state == WH_SWEEP_CELL_OK;
  m->counts.failed += cr.state == WH_SWEEP_CELL_FAILED;
  m->counts.missing += cr.state == WH_SWEEP_CELL_MISSING;
  cell_csv(m, i, &cr);
  cell_json(m, i, &cr);
  cell_read_clear(&cr);
}

/* The specification as sweep.json holds it. */
static void spec_json(JsonBuilder *b, const WhSweep *sw)
{
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "file");
  json_builder_add_string_value(b, sw->path);
  json_builder_set_member_name(b, "scenarios");
  json_builder_begin_array(b);
  for (guint i = 0; i < sw->scenarios->len; i++) {
    const WhSweepScenario *s = sw->scenarios->pdata[i];
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "file");
    json_builder_add_string_value(b, s->file);
    json_builder_set_member_name(b, "name");
    json_builder_add_string_value(b, s->name);
    json_builder_set_member_name(b, "sha256");
    json_builder_add_string_value(b, s->digest);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_set_member_name(b, "blocks");
  json_builder_begin_array(b);
  for (guint k = 0; k < sw->blocks->len; k++) {
    const WhSweepBlock *bk = &g_array_index(sw->blocks, WhSweepBlock, k);
    json_builder_begin_object(b);
    json_builder_set_member_name(b, "combine");
    json_builder_add_string_value(b, bk->zip ? "zip" : "grid");
    json_builder_set_member_name(b, "params");
    json_builder_begin_object(b);
    for (guint i = bk->first; i < bk->first + bk->n; i++) {
      const WhSweepParam *p = sw->params->pdata[i];
      json_builder_set_member_name(b, p->name);
      json_builder_begin_array(b);
      for (guint v = 0; v < p->values->len; v++)
        json_builder_add_string_value(b, p->values->pdata[v]);
      json_builder_end_array(b);
    }
    json_builder_end_object(b);
    json_builder_end_object(b);
  }
  json_builder_end_array(b);
  json_builder_set_member_name(b, "seeds");
  json_builder_begin_array(b);
  for (guint i = 0; i < sw->seeds->len; i++)
    json_builder_add_int_value(b, (gint64)g_array_index(sw->seeds, uint64_t, i));
  json_builder_end_array(b);
  json_builder_set_member_name(b, "modes");
  json_builder_begin_array(b);
  for (guint i = 0; i < sw->modes->len; i++)
    json_builder_add_string_value(b, wh_sweep_mode_name(g_array_index(sw->modes, WhSweepMode, i)));
  json_builder_end_array(b);
  json_builder_end_object(b);
}

gboolean wh_sweep_merge(const WhSweep *sw, const char *out_dir, WhSweepCounts *counts,
                        GError **error)
{
  g_autoptr(JsonBuilder) b = json_builder_new();
  Merge m = {sw, out_dir, g_string_new(NULL), b, {0}};
  csv_header(&m);
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "sweep");
  json_builder_add_string_value(b, sw->name);
  json_builder_set_member_name(b, "build_id");
  json_builder_add_string_value(b, sw->build_id);
  json_builder_set_member_name(b, "spec");
  spec_json(b, sw);
  json_builder_set_member_name(b, "cells");
  json_builder_begin_array(b);
  for (guint i = 0; i < sw->n_cells; i++)
    merge_cell(&m, i);
  json_builder_end_array(b);
  json_builder_set_member_name(b, "counts");
  json_builder_begin_object(b);
  const char *names[] = {"ok", "failed", "missing"};
  const guint values[] = {m.counts.ok, m.counts.failed, m.counts.missing};
  for (int i = 0; i < 3; i++) {
    json_builder_set_member_name(b, names[i]);
    json_builder_add_int_value(b, values[i]);
  }
  json_builder_end_object(b);
  json_builder_end_object(b);
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  g_autofree char *json = wh_json_text(json_node_get_object(root));
  g_autofree char *csv = g_string_free(m.csv, FALSE);
  if (counts)
    *counts = m.counts;
  g_autoptr(WhOutputSet) set = wh_output_set_new(out_dir, error);
  return set && wh_output_set_add(set, "sweep.csv", csv, error) &&
         wh_output_set_add(set, "sweep.json", json, error) && wh_output_set_commit(set, error);
}
