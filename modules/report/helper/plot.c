/* `whsim plot`: pictures of runs' outputs; see plot.h. */
#include "plot.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "csv.h"
#include "file-write.h"
#include "gnuplot.h"
#include "wh-error.h"

G_DEFINE_QUARK(wh - plot - error - quark, wh_plot_error)

#define MAX_QUANTILES 2000          /* points of a CDF */
#define MAX_SCATTER 20000           /* points of a scatter plot */
#define MAX_OPS 50000               /* ops on a timeline (the first ones) */
#define MAX_FLOW_SERIES 8           /* flows drawn one by one in the rates plot */
#define MAX_RECORD ((gsize)1 << 20) /* bytes of a record of an input CSV */

/* ---- reading the CSV outputs ---- */

typedef volatile sig_atomic_t Stop;

/* TRUE when the caller's interrupt flag (nullable) is set. */
static gboolean stopped(const Stop *stop)
{
  return stop != NULL && *stop != 0;
}

static gboolean interrupted(GError **error)
{
  return wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_INTERRUPTED,
                      "interrupted; nothing was written");
}

/* `text` as a message may show it on one line: as it is when it is printable UTF-8,
 * else with C escapes; cut after `max` bytes. (transfer full) */
static char *shown(const char *text, gsize max)
{
  g_autofree char *cut = g_strndup(text, max);
  gboolean plain = g_utf8_validate(cut, -1, NULL);
  for (const char *p = cut; plain && *p; p = g_utf8_next_char(p))
    plain = !g_unichar_iscntrl(g_utf8_get_char(p));
  return plain ? g_steal_pointer(&cut) : g_strescape(cut, NULL);
}

typedef struct {
  char *path;     /* as messages show it */
  char **names;   /* the header's column names */
  guint cols;     /* their number */
  guint rows;     /* data lines (line = index + 2) */
  char *text;     /* the fields, unquoted, each NUL-terminated */
  guint32 *field; /* rows * cols offsets into text */
} Csv;

static void csv_free(Csv *c)
{
  if (c == NULL)
    return;
  g_free(c->path);
  g_strfreev(c->names);
  g_free(c->text);
  g_free(c->field);
  g_free(c);
}
G_DEFINE_AUTOPTR_CLEANUP_FUNC(Csv, csv_free)

/* Reads dir/name (a regular file of at most `max_bytes`) with the reader of csv.h:
 * its header must be `header` and its every record have as many fields. The fields
 * are kept back to back, unquoted, in c->text. *out is NULL when the file does not
 * exist. */
static gboolean csv_read(const char *dir, const char *name, const char *header, gsize max_bytes,
                         const Stop *stop, Csv **out, GError **error)
{
  *out = NULL;
  g_autofree char *path = g_build_filename(dir, name, NULL);
  GStatBuf st = {0};
  if (!g_file_test(path, G_FILE_TEST_EXISTS))
    return TRUE;
  g_autoptr(GError) err = NULL;
  g_autoptr(WhCsvReader) r =
      wh_csv_reader_new_file(path, MIN(max_bytes, (gsize)G_MAXUINT32 - 1), MAX_RECORD, &err);
  if (r == NULL || !wh_csv_reader_header(r, header, &err))
    return wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_INPUT, "%s", err->message);
  g_autoptr(Csv) c = g_new0(Csv, 1);
  c->path = g_strdup(wh_csv_reader_name(r));
  c->names = g_strsplit(header, ",", -1);
  c->cols = g_strv_length(c->names);
  g_autoptr(GString) text = g_string_sized_new(g_stat(path, &st) == 0 ? (gsize)st.st_size + 1 : 0);
  g_autoptr(GArray) field = g_array_new(FALSE, FALSE, sizeof(guint32));
  WhCsvRecord rec;
  while (wh_csv_reader_next(r, &rec, &err)) {
    if (rec.n_fields != c->cols)
      return wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_INPUT,
                          "%s:%u: expected %u fields, found %u", c->path, rec.line, c->cols,
                          rec.n_fields);
    guint32 base = (guint32)text->len;
    g_string_append_len(text, rec.text, (gssize)rec.text_len);
    for (guint i = 0; i < rec.n_fields; i++) {
      guint32 at = base + (guint32)(rec.fields[i] - rec.text);
      g_array_append_val(field, at);
    }
    if (++c->rows % 65536 == 0 && stopped(stop))
      return interrupted(error);
  }
  if (err)
    return wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_INPUT, "%s", err->message);
  c->text = g_string_free(g_steal_pointer(&text), FALSE);
  c->field = (guint32 *)(void *)g_array_free(g_steal_pointer(&field), FALSE);
  *out = g_steal_pointer(&c);
  return TRUE;
}

static const char *csv_field(const Csv *c, guint row, guint col)
{
  return c->text + c->field[(gsize)row * c->cols + col];
}

/* Field `col` of data line `row` as a finite number; an empty field is `empty` (NAN:
 * refused). */
static gboolean csv_number(const Csv *c, guint row, guint col, double empty, double *out,
                           GError **error)
{
  const char *s = csv_field(c, row, col);
  char *end = NULL;
  *out = *s ? g_ascii_strtod(s, &end) : empty;
  if (*s ? end == s || *end != '\0' || !isfinite(*out) : isnan(empty)) {
    g_autofree char *text = shown(s, 40);
    return wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_INPUT,
                        "%s:%u: field %s: not a number: \"%s\"", c->path, row + 2, c->names[col],
                        text);
  }
  return TRUE;
}

/* One run directory and the outputs it holds (each nullable). */
typedef struct {
  char *dir, *label;
  Csv *flows, *links, *ops, *rates, *queues, *compare;
} Run;

static void run_clear(Run *r)
{
  g_free(r->dir);
  g_free(r->label);
  csv_free(r->flows);
  csv_free(r->links);
  csv_free(r->ops);
  csv_free(r->rates);
  csv_free(r->queues);
  csv_free(r->compare);
}

static gboolean run_read(Run *r, const char *dir, gsize max_bytes, const Stop *stop, GError **error)
{
  r->dir = g_strdup(dir);
  r->label = g_path_get_basename(dir); /* quoted where it is drawn */
  g_autofree char *shown_dir = shown(dir, 4096);
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
    return wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_INPUT, "%s: not a directory",
                        shown_dir);
  if (!csv_read(dir, "flows.csv", "flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key", max_bytes,
                stop, &r->flows, error) ||
      !csv_read(dir, "links.csv",
                "port,node,peer_node,tier,rate_bps,frames,bytes,busy_ps,busy_fraction,pause_ps,"
                "max_queue_bytes",
                max_bytes, stop, &r->links, error) ||
      !csv_read(dir, "ops.csv", "op_id,rank,kind,name,start_ps,end_ps,deps", max_bytes, stop,
                &r->ops, error) ||
      !csv_read(dir, "rates.csv", "period_start_ps,flow_id,sent_bps,delivered_bps", max_bytes, stop,
                &r->rates, error) ||
      !csv_read(dir, "queues.csv", "period_end_ps,port,node,queue_bytes", max_bytes, stop,
                &r->queues, error) ||
      !csv_read(dir, "compare-flows.csv",
                "key,src,dst,bytes,flow_id_exact,flow_id_wormhole,fct_exact_ps,fct_wormhole_ps,"
                "rel_error",
                max_bytes, stop, &r->compare, error))
    return FALSE;
  if (!r->flows && !r->links && !r->ops && !r->rates && !r->queues && !r->compare)
    return wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_INPUT,
                        "%s: no whsim outputs to plot (flows.csv, links.csv, ops.csv, rates.csv, "
                        "queues.csv or compare-flows.csv)",
                        shown_dir);
  return TRUE;
}

/* ---- the gnuplot script ---- */

typedef struct {
  GString *data; /* the datablocks */
  GString *draw; /* the plots */
  guint blocks;
  GPtrArray *files; /* names drawn (transfer full) */
} Script;

/* Starts a datablock; its name goes to `name`. End it with block_end. */
static void block_begin(Script *s, char name[16])
{
  g_snprintf(name, 16, "$d%u", s->blocks++);
  g_string_append_printf(s->data, "%s << EOD\n", name);
}

static void block_end(Script *s)
{
  g_string_append(s->data, "EOD\n");
}

/* Draws `file`.png and `file`.svg with `settings` (titles, axes) and the plot command. */
static void emit(Script *s, const char *file, const char *settings, const char *plot)
{
  g_string_append_printf(s->draw,
                         "reset\nset grid\nset key top left\n%s"
                         "set terminal pngcairo noenhanced size 900,600 font 'sans,10'\n"
                         "set output '%s.png'\n%s\n"
                         "set terminal svg noenhanced size 900,600 font 'sans,11'\n"
                         "set output '%s.svg'\nreplot\nunset output\n",
                         settings, file, plot, file);
  g_ptr_array_add(s->files, g_strdup_printf("%s.png", file));
  g_ptr_array_add(s->files, g_strdup_printf("%s.svg", file));
}

/* Appends ", " between the series of a plot command. */
static void series_sep(GString *plot)
{
  if (plot->len > strlen("plot "))
    g_string_append(plot, ", ");
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Sorts `v` and writes its CDF ("value fraction" lines, at most MAX_QUANTILES) as a
 * datablock; adds it to `plot` as a step series titled `title`. */
static void add_cdf(Script *s, GString *plot, GArray *v, const char *title)
{
  if (v->len == 0)
    return;
  g_array_sort(v, cmp_double);
  char name[16];
  block_begin(s, name);
  guint n = v->len, k = MIN(n, MAX_QUANTILES);
  g_string_append_printf(s->data, "%.9g 0\n", g_array_index(v, double, 0)); /* the rise */
  for (guint j = 0; j < k; j++) {
    guint i = k == n ? j : (guint)((guint64)j * (n - 1) / (k - 1));
    g_string_append_printf(s->data, "%.9g %.6f\n", g_array_index(v, double, i),
                           (double)(i + 1) / n);
  }
  block_end(s);
  series_sep(plot);
  g_autofree char *quoted = wh_gnuplot_quote(title);
  g_string_append_printf(plot, "%s using 1:2 with steps lw 2 title %s", name, quoted);
}

/* A time axis: the unit that suits times up to `max_ps`. */
typedef struct {
  double ps;
  const char *name;
} TimeUnit;

static TimeUnit time_unit(double max_ps)
{
  if (max_ps < 1e10)
    return (TimeUnit){1e6, "us"};
  if (max_ps < 1e13)
    return (TimeUnit){1e9, "ms"};
  return (TimeUnit){1e12, "s"};
}

/* ---- the plots ---- */

/* Draws `file` with `settings` if `plot` has a series; frees `plot`. */
static void emit_plot(Script *s, const char *file, const char *settings, GString *plot)
{
  if (plot->len > strlen("plot "))
    emit(s, file, settings, plot->str);
  g_string_free(plot, TRUE);
}

/* A CDF per run of column `col` of the Csv at `offset` in Run (runs without it have
 * none), times `scale` (of the absolute value with `absolute`); an empty field is
 * `empty`, and values that are not finite or are negative are left out. */
static gboolean plot_column_cdf(Script *s, Run *runs, guint n, size_t offset, guint col,
                                double empty, gboolean absolute, double scale, const char *file,
                                const char *settings, GError **error)
{
  GString *plot = g_string_new("plot ");
  for (guint r = 0; r < n; r++) {
    const Csv *c = *(Csv **)((char *)&runs[r] + offset);
    g_autoptr(GArray) v = g_array_new(FALSE, FALSE, sizeof(double));
    for (guint i = 0; c && i < c->rows; i++) {
      double x;
      if (!csv_number(c, i, col, empty, &x, error)) {
        g_string_free(plot, TRUE);
        return FALSE;
      }
      x = (absolute ? fabs(x) : x) * scale;
      if (isfinite(x) && x >= 0)
        g_array_append_val(v, x);
    }
    add_cdf(s, plot, v, runs[r].label);
  }
  emit_plot(s, file, settings, plot);
  return TRUE;
}

static gboolean plot_fct(Script *s, Run *runs, guint n, GError **error)
{
  return plot_column_cdf(
      s, runs, n, G_STRUCT_OFFSET(Run, flows), 6, -1, FALSE, 1e-6, "fct-cdf",
      "set title 'Flow completion times (CDF of the completed flows)'\nset logscale x\n"
      "set xlabel 'flow completion time (us)'\nset ylabel 'fraction of flows'\n"
      "set yrange [0:1]\n",
      error);
}

/* Slowdown against size for the runs whose flows have more than one size: FCT over
 * the size's serialization time at the sender's link rate: the rate of the one port
 * links.csv lists for node `src` (the topologies number hosts first; a sender with
 * several ports, or none listed, is left out). */
static gboolean plot_slowdown(Script *s, Run *runs, guint n, GError **error)
{
  GString *plot = g_string_new("plot ");
  gboolean ok = TRUE;
  for (guint r = 0; r < n && ok; r++) {
    const Csv *c = runs[r].flows, *l = runs[r].links;
    if (c == NULL || l == NULL)
      continue;
    /* node -> the rate of its port, NAN when it has several (a switch) */
    g_autoptr(GHashTable) rate = g_hash_table_new_full(g_str_hash, g_str_equal, NULL, g_free);
    for (guint i = 0; i < l->rows && ok; i++) {
      double *bps = g_new(double, 1);
      ok = csv_number(l, i, 4, NAN, bps, error);
      if (ok && g_hash_table_contains(rate, csv_field(l, i, 1)))
        *bps = NAN;
      g_hash_table_replace(rate, (gpointer)csv_field(l, i, 1), bps);
    }
    gboolean sizes_vary = FALSE;
    for (guint i = 1; c && i < c->rows; i++)
      sizes_vary = sizes_vary || strcmp(csv_field(c, i, 3), csv_field(c, 0, 3)) != 0;
    if (!ok || !sizes_vary)
      continue;
    char name[16];
    block_begin(s, name);
    guint step = c->rows / MAX_SCATTER + 1, points = 0;
    for (guint i = 0; i < c->rows && ok; i += step) {
      double bytes, fct;
      const double *bps = g_hash_table_lookup(rate, csv_field(c, i, 1));
      ok = csv_number(c, i, 3, NAN, &bytes, error) && csv_number(c, i, 6, -1, &fct, error);
      if (ok && fct > 0 && bytes > 0 && bps && *bps > 0) {
        g_string_append_printf(s->data, "%.0f %.6g\n", bytes, fct / (bytes * 8 / *bps * 1e12));
        points++;
      }
    }
    block_end(s);
    if (points) {
      series_sep(plot);
      g_autofree char *quoted = wh_gnuplot_quote(runs[r].label);
      g_string_append_printf(plot, "%s using 1:2 with points pt 7 ps 0.6 title %s", name, quoted);
    }
  }
  if (!ok)
    g_string_truncate(plot, strlen("plot ")); /* nothing is drawn after an error */
  emit_plot(s, "slowdown-vs-size",
            "set title 'Slowdown: FCT over the size''s time at the sender''s link rate'\n"
            "set logscale xy\nset xlabel 'flow size (bytes)'\n"
            "set ylabel 'slowdown (FCT / ideal FCT)'\n",
            plot);
  return ok;
}

/* A timeline per run with a workload: each op a segment at its rank from its start to
 * its end, computation and communication in two colours. */
static gboolean plot_ops(Script *s, Run *runs, guint n, GError **error)
{
  for (guint r = 0; r < n; r++) {
    const Csv *c = runs[r].ops;
    if (c == NULL)
      continue;
    double max_end = 0;
    guint rows = MIN(c->rows, MAX_OPS);
    g_autofree double *t = g_new0(double, 3 * (rows ? rows : 1));
    for (guint i = 0; i < rows; i++) {
      if (!csv_number(c, i, 1, NAN, &t[3 * i], error) ||
          !csv_number(c, i, 4, 0, &t[3 * i + 1], error) ||
          !csv_number(c, i, 5, 0, &t[3 * i + 2], error))
        return FALSE;
      max_end = MAX(max_end, t[3 * i + 2]);
    }
    TimeUnit u = time_unit(max_end);
    char block[2][16];
    for (int k = 0; k < 2; k++) {
      block_begin(s, block[k]);
      for (guint i = 0; i < rows; i++) {
        gboolean compute = strcmp(csv_field(c, i, 2), "compute") == 0;
        double start = t[3 * i + 1], end = t[3 * i + 2];
        if (compute == (k == 0) && end > 0)
          g_string_append_printf(s->data, "%.6f %.0f %.6f\n", start / u.ps, t[3 * i],
                                 (end - start) / u.ps);
      }
      block_end(s);
    }
    g_autofree char *file =
        n == 1 ? g_strdup("op-timeline") : g_strdup_printf("op-timeline-%u", r + 1);
    g_autofree char *title =
        g_strdup_printf("Ops over time: %s (%u of %u ops%s)", runs[r].label, rows, c->rows,
                        rows < c->rows ? ", the first ones" : "");
    g_autofree char *quoted = wh_gnuplot_quote(title);
    g_autofree char *settings = g_strdup_printf(
        "set title %s\nset xlabel 'time (%s)'\n"
        "set ylabel 'rank'\nset key outside top center horizontal\nset yrange [-1:*] reverse\n",
        quoted, u.name);
    g_autofree char *plot = g_strdup_printf(
        "plot %s using 1:2:3:(0) with vectors nohead lw 4 lc rgb '#3b7dd8' title 'compute', "
        "%s using 1:($2+0.25):3:(0) with vectors nohead lw 4 lc rgb '#e0702a' "
        "title 'communication (send, collective)'",
        block[0], block[1]);
    emit(s, file, settings, plot);
  }
  return TRUE;
}

typedef struct {
  double t, v;
} Point;

static int cmp_point(const void *a, const void *b)
{
  return cmp_double(&((const Point *)a)->t, &((const Point *)b)->t);
}

/* Column `value` of `c` against column `time`, summed (or, with `take_max`, the
 * largest) per distinct time, in time order, of the rows whose column `key` is `only`
 * (NULL: every row). (transfer full) */
static GArray *per_time(const Csv *c, guint time, guint value, gboolean take_max, guint key,
                        const char *only, GError **error)
{
  g_autoptr(GArray) pts = g_array_sized_new(FALSE, FALSE, sizeof(Point), c->rows);
  for (guint i = 0; i < c->rows; i++) {
    Point p;
    if (only && strcmp(csv_field(c, i, key), only) != 0)
      continue;
    if (!csv_number(c, i, time, NAN, &p.t, error) || !csv_number(c, i, value, NAN, &p.v, error))
      return NULL;
    g_array_append_val(pts, p);
  }
  g_array_sort(pts, cmp_point);
  guint m = 0;
  for (guint i = 0; i < pts->len; i++) {
    Point p = g_array_index(pts, Point, i);
    Point *last = m ? &g_array_index(pts, Point, m - 1) : NULL;
    if (last && last->t == p.t)
      last->v = take_max ? MAX(last->v, p.v) : last->v + p.v;
    else
      g_array_index(pts, Point, m++) = p;
  }
  g_array_set_size(pts, m);
  return g_steal_pointer(&pts);
}

/* Writes `pts` (time scaled by `u`, value by `scale`) as a datablock, thinned to at
 * most MAX_SCATTER points, and adds it to `plot` as a line titled `title`. */
static void add_line(Script *s, GString *plot, const GArray *pts, TimeUnit u, double scale,
                     const char *title)
{
  if (pts->len == 0)
    return;
  char name[16];
  block_begin(s, name);
  guint step = pts->len / MAX_SCATTER + 1;
  for (guint i = 0; i < pts->len; i += step) {
    const Point *p = &g_array_index(pts, Point, i);
    g_string_append_printf(s->data, "%.6f %.6g\n", p->t / u.ps, p->v * scale);
  }
  block_end(s);
  series_sep(plot);
  g_autofree char *quoted = wh_gnuplot_quote(title);
  g_string_append_printf(plot, "%s using 1:2 with lines lw 2 title %s", name, quoted);
}

static double max_time(GArray *const *series, guint n)
{
  double m = 0;
  for (guint i = 0; i < n; i++)
    if (series[i] && series[i]->len)
      m = MAX(m, g_array_index(series[i], Point, series[i]->len - 1).t);
  return m;
}

/* Draws `file`: the `series` (Point arrays) against time, values times `scale`, each
 * titled by the string of `titles` at its index, when there is one at least. */
static void emit_lines(Script *s, const char *file, GPtrArray *series, GPtrArray *titles,
                       double scale, const char *title, const char *ylabel)
{
  if (series->len == 0)
    return;
  TimeUnit u = time_unit(max_time((GArray *const *)series->pdata, series->len));
  GString *plot = g_string_new("plot ");
  for (guint i = 0; i < series->len; i++)
    add_line(s, plot, series->pdata[i], u, scale, titles->pdata[i]);
  g_autofree char *settings =
      g_strdup_printf("set title '%s'\nset xlabel 'time (%s)'\nset ylabel '%s'\n"
                      "set yrange [0:*]\nset key outside right top\n",
                      title, u.name, ylabel);
  emit_plot(s, file, settings, plot);
}

/* The delivered rate over time: every run's total and, for a single run with few
 * flows, each flow's. */
static gboolean plot_rates(Script *s, Run *runs, guint n, GError **error)
{
  g_autoptr(GPtrArray) series = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  g_autoptr(GPtrArray) titles = g_ptr_array_new_with_free_func(g_free);
  for (guint r = 0; r < n; r++) {
    const Csv *c = runs[r].rates;
    if (c == NULL)
      continue;
    GArray *total = per_time(c, 0, 3, FALSE, 0, NULL, error);
    if (total == NULL)
      return FALSE;
    g_ptr_array_add(series, total);
    g_ptr_array_add(titles, g_strdup_printf(n == 1 ? "all flows" : "%s: all flows", runs[r].label));
    g_autoptr(GHashTable) flows = g_hash_table_new(g_str_hash, g_str_equal);
    g_autoptr(GPtrArray) order = g_ptr_array_new();
    for (guint i = 0; i < c->rows; i++)
      if (g_hash_table_add(flows, (gpointer)csv_field(c, i, 1)))
        g_ptr_array_add(order, (gpointer)csv_field(c, i, 1));
    for (guint f = 0; n == 1 && order->len > 1 && order->len <= MAX_FLOW_SERIES && f < order->len;
         f++) {
      GArray *one = per_time(c, 0, 3, FALSE, 1, order->pdata[f], error);
      if (one == NULL)
        return FALSE;
      g_ptr_array_add(series, one);
      g_ptr_array_add(titles, g_strdup_printf("flow %s", (const char *)order->pdata[f]));
    }
  }
  emit_lines(s, "rates", series, titles, 1e-9, "Delivered rate per sample period",
             "delivered rate (Gb/s)");
  return TRUE;
}

/* The largest queue over every port, per sample period. */
static gboolean plot_queues(Script *s, Run *runs, guint n, GError **error)
{
  g_autoptr(GPtrArray) series = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  g_autoptr(GPtrArray) titles = g_ptr_array_new_with_free_func(g_free);
  for (guint r = 0; r < n; r++) {
    if (runs[r].queues == NULL)
      continue;
    GArray *q = per_time(runs[r].queues, 0, 3, TRUE, 0, NULL, error);
    if (q == NULL)
      return FALSE;
    g_ptr_array_add(series, q);
    g_ptr_array_add(titles, g_strdup(runs[r].label));
  }
  emit_lines(s, "queues", series, titles, 1e-3, "Largest queue over all ports, per sample period",
             "queue (KB)");
  return TRUE;
}

/* Per tier, the CDF of the ports' busy time (links.csv lists the ports that carried a
 * frame or were paused). */
static gboolean plot_links(Script *s, Run *runs, guint n, GError **error)
{
  GString *plot = g_string_new("plot ");
  for (guint r = 0; r < n; r++) {
    const Csv *c = runs[r].links;
    if (c == NULL)
      continue;
    g_autoptr(GPtrArray) tiers = g_ptr_array_new();
    for (guint i = 0; i < c->rows; i++)
      if (!g_ptr_array_find_with_equal_func(tiers, csv_field(c, i, 3), g_str_equal, NULL))
        g_ptr_array_add(tiers, (gpointer)csv_field(c, i, 3));
    for (guint t = 0; t < tiers->len; t++) {
      g_autoptr(GArray) v = g_array_new(FALSE, FALSE, sizeof(double));
      for (guint i = 0; i < c->rows; i++) {
        double busy;
        if (strcmp(csv_field(c, i, 3), tiers->pdata[t]) != 0)
          continue;
        if (!csv_number(c, i, 8, NAN, &busy, error)) {
          g_string_free(plot, TRUE);
          return FALSE;
        }
        busy *= 100;
        g_array_append_val(v, busy);
      }
      g_autofree char *title =
          n == 1 ? g_strdup_printf("%s links", (const char *)tiers->pdata[t])
                 : g_strdup_printf("%s: %s links", runs[r].label, (const char *)tiers->pdata[t]);
      add_cdf(s, plot, v, title);
    }
  }
  emit_plot(s, "link-utilization",
            "set title 'Link utilization per tier (CDF over the ports that carried traffic)'\n"
            "set xlabel 'busy time (% of the simulated time)'\nset ylabel 'fraction of ports'\n"
            "set xrange [0:100]\nset yrange [0:1]\n",
            plot);
  return TRUE;
}

/* From a `whsim compare` directory: the CDF of |FCT error| of the flows both runs
 * completed. */
static gboolean plot_fct_error(Script *s, Run *runs, guint n, GError **error)
{
  return plot_column_cdf(
      s, runs, n, G_STRUCT_OFFSET(Run, compare), 8, INFINITY, TRUE, 100, "fct-error-cdf",
      "set title 'Per-flow FCT error of Wormhole against the exact run (CDF)'\n"
      "set xlabel '|FCT error| (% of the exact FCT)'\nset ylabel 'fraction of flows'\n"
      "set xrange [0:*]\nset yrange [0:1]\n",
      error);
}

/* ---- a sweep folder (whsim sweep): each result against each varied parameter ---- */

/* The header of dir/sweep.csv (its first record, the names joined by commas), or NULL
 * with an error when it is not a sweep's. (transfer full) */
static char *sweep_header(const char *dir, gsize max_bytes, GError **error)
{
  g_autofree char *path = g_build_filename(dir, "sweep.csv", NULL);
  g_autoptr(GError) err = NULL;
  g_autoptr(WhCsvReader) r = wh_csv_reader_new_file(path, max_bytes, MAX_RECORD, &err);
  WhCsvRecord rec;
  if (r == NULL || !wh_csv_reader_next(r, &rec, &err)) {
    wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_INPUT, "%s",
                 err ? err->message : "sweep.csv: empty");
    return NULL;
  }
  g_autoptr(GString) h = g_string_new(NULL);
  for (guint i = 0; i < rec.n_fields; i++) {
    if (wh_csv_needs_quotes(rec.fields[i]))
      break;
    g_string_append_printf(h, "%s%s", i ? "," : "", rec.fields[i]);
  }
  if (!g_str_has_prefix(h->str, "cell,scenario,") || !strstr(h->str, ",seed,mode,status,")) {
    g_autofree char *shown_path = shown(path, 4096);
    wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_INPUT, "%s:1: not the header of a whsim sweep",
                 shown_path);
    return NULL;
  }
  return g_string_free(g_steal_pointer(&h), FALSE);
}

/* The index of `value` in `list` (appended when new). */
static guint index_of(GPtrArray *list, const char *value)
{
  guint i;
  if (!g_ptr_array_find_with_equal_func(list, value, g_str_equal, &i)) {
    g_ptr_array_add(list, (gpointer)value);
    i = list->len - 1;
  }
  return i;
}

/* One series of a sweep plot: per x index, the values over seeds. */
typedef struct {
  char *title;
  GPtrArray *ys; /* GArray of double per x index (nullable) */
} SweepSeries;

static void sweep_series_free(gpointer p)
{
  SweepSeries *s = p;
  g_free(s->title);
  g_ptr_array_unref(s->ys);
  g_free(s);
}

#define SWEEP_MAX_SERIES 10

/* Result column `rc` against parameter column `pc` of the ok rows, one series per
 * combination of the other coordinates (scenario, parameters, mode), each point the
 * mean over seeds with the smallest and largest as error bars. */
static gboolean plot_sweep_pair(Script *s, const Csv *c, guint pc, guint rc, guint seed_col,
                                GError **error)
{
  g_autoptr(GPtrArray) xs = g_ptr_array_new(), keys = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GPtrArray) series = g_ptr_array_new_with_free_func(sweep_series_free);
  for (guint r = 0; r < c->rows; r++) {
    double y;
    if (strcmp(csv_field(c, r, seed_col + 2), "ok") != 0 || !*csv_field(c, r, rc))
      continue;
    if (!csv_number(c, r, rc, NAN, &y, error))
      return FALSE;
    g_autoptr(GString) key = g_string_new(csv_field(c, r, 1));
    for (guint k = 2; k < seed_col; k++)
      if (k != pc)
        g_string_append_printf(key, " %s=%s", c->names[k], csv_field(c, r, k));
    g_string_append_printf(key, " %s", csv_field(c, r, seed_col + 1));
    guint si;
    if (!g_ptr_array_find_with_equal_func(keys, key->str, g_str_equal, &si)) {
      if (keys->len == SWEEP_MAX_SERIES)
        continue;
      SweepSeries *ns = g_new0(SweepSeries, 1);
      ns->title = g_strdup(key->str);
      ns->ys = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
      g_ptr_array_add(series, ns);
      g_ptr_array_add(keys, g_string_free(g_steal_pointer(&key), FALSE));
      si = keys->len - 1;
    }
    SweepSeries *ss = series->pdata[si];
    guint x = index_of(xs, csv_field(c, r, pc));
    while (ss->ys->len <= x)
      g_ptr_array_add(ss->ys, g_array_new(FALSE, FALSE, sizeof(double)));
    g_array_append_val((GArray *)ss->ys->pdata[x], y);
  }
  if (series->len == 0)
    return TRUE;
  GString *plot = g_string_new("plot ");
  for (guint i = 0; i < series->len; i++) {
    SweepSeries *ss = series->pdata[i];
    char name[16];
    block_begin(s, name);
    for (guint x = 0; x < ss->ys->len; x++) {
      GArray *v = ss->ys->pdata[x];
      double sum = 0, lo = INFINITY, hi = -INFINITY;
      for (guint k = 0; k < v->len; k++) {
        double y = g_array_index(v, double, k);
        sum += y, lo = MIN(lo, y), hi = MAX(hi, y);
      }
      if (v->len)
        g_string_append_printf(s->data, "%u %.9g %.9g %.9g\n", x, sum / v->len, lo, hi);
    }
    block_end(s);
    series_sep(plot);
    g_autofree char *title = wh_gnuplot_quote(ss->title);
    g_string_append_printf(plot, "%s using 1:2:3:4 with yerrorlines lw 2 title %s", name, title);
  }
  g_autoptr(GString) settings = g_string_new("set xtics (");
  for (guint x = 0; x < xs->len; x++) {
    g_autofree char *label = wh_gnuplot_quote(xs->pdata[x]);
    g_string_append_printf(settings, "%s%s %u", x ? ", " : "", label, x);
  }
  g_autofree char *xlabel = wh_gnuplot_quote(c->names[pc]);
  g_autofree char *ylabel = wh_gnuplot_quote(c->names[rc]);
  g_string_append_printf(settings,
                         ")\nset xrange [-0.5:%u.5]\nset xlabel %s\nset ylabel %s\n"
                         "set title 'mean over seeds; bars: smallest to largest'\n",
                         xs->len - 1, xlabel, ylabel);
  g_autofree char *file = g_strdup_printf("sweep-%s-vs-p%u", c->names[rc], pc - 1);
  emit_plot(s, file, settings->str, plot);
  return TRUE;
}

/* The script of a sweep folder: each result column against each varied parameter. */
static char *sweep_script(const char *dir, gsize max_bytes, GPtrArray *files, const Stop *stop,
                          GError **error)
{
  g_autofree char *header = sweep_header(dir, MIN(max_bytes, (gsize)G_MAXUINT32 - 1), error);
  g_autoptr(Csv) c = NULL;
  if (header == NULL || !csv_read(dir, "sweep.csv", header, max_bytes, stop, &c, error))
    return NULL;
  guint seed_col = 2;
  while (strcmp(c->names[seed_col], "seed") != 0)
    seed_col++;
  Script s = {g_string_new(NULL), g_string_new(NULL), 0, g_ptr_array_new_with_free_func(g_free)};
  gboolean ok = TRUE;
  for (guint pc = 2; ok && pc < seed_col; pc++)
    for (guint rc = seed_col + 5; ok && rc < c->cols; rc++)
      ok = plot_sweep_pair(&s, c, pc, rc, seed_col, error);
  if (ok && s.files->len == 0)
    ok =
        wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_INPUT,
                     "%s: nothing to plot (no varied parameter, or no cell with results)", c->path);
  for (guint i = 0; ok && files && i < s.files->len; i++)
    g_ptr_array_add(files, g_strdup(s.files->pdata[i]));
  g_ptr_array_unref(s.files);
  g_string_append(s.data, s.draw->str);
  g_string_free(s.draw, TRUE);
  return ok ? g_string_free(s.data, FALSE) : (g_string_free(s.data, TRUE), NULL);
}

/* ---- the script of a set of runs ---- */

char *wh_plot_script(char **dirs, gsize max_input_bytes, GPtrArray *files, const Stop *stop,
                     GError **error)
{
  g_return_val_if_fail(dirs != NULL && dirs[0] != NULL, NULL);
  g_autofree char *sweep_csv = g_build_filename(dirs[0], "sweep.csv", NULL);
  if (dirs[1] == NULL && g_file_test(sweep_csv, G_FILE_TEST_EXISTS))
    return sweep_script(dirs[0], max_input_bytes, files, stop, error);
  /* a `whsim compare` directory brings its two runs, exact/ and wormhole/ */
  g_autoptr(GPtrArray) all = g_ptr_array_new_with_free_func(g_free);
  for (char **d = dirs; *d; d++) {
    g_ptr_array_add(all, g_strdup(*d));
    g_autofree char *compare = g_build_filename(*d, "compare-flows.csv", NULL);
    for (int k = 0; k < 2 && g_file_test(compare, G_FILE_TEST_EXISTS); k++) {
      char *sub = g_build_filename(*d, k == 0 ? "exact" : "wormhole", NULL);
      if (g_file_test(sub, G_FILE_TEST_IS_DIR))
        g_ptr_array_add(all, sub);
      else
        g_free(sub);
    }
  }
  guint n = all->len;
  Run *runs = g_new0(Run, n);
  Script s = {g_string_new(NULL), g_string_new(NULL), 0, g_ptr_array_new_with_free_func(g_free)};
  gboolean ok = TRUE;
  for (guint r = 0; r < n && ok; r++)
    ok = run_read(&runs[r], all->pdata[r], max_input_bytes, stop, error);
  ok = ok && (!stopped(stop) || interrupted(error)) && plot_fct(&s, runs, n, error) &&
       plot_slowdown(&s, runs, n, error) && plot_ops(&s, runs, n, error) &&
       plot_rates(&s, runs, n, error) && plot_queues(&s, runs, n, error) &&
       plot_links(&s, runs, n, error) && plot_fct_error(&s, runs, n, error);
  if (ok && s.files->len == 0) {
    g_autofree char *dir = shown(dirs[0], 4096);
    ok = wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_INPUT,
                      "%s: nothing to plot (no completed flow, op, sample or link)", dir);
  }
  for (guint i = 0; ok && files && i < s.files->len; i++)
    g_ptr_array_add(files, g_strdup(s.files->pdata[i]));
  for (guint r = 0; r < n; r++)
    run_clear(&runs[r]);
  g_free(runs);
  g_ptr_array_unref(s.files);
  g_string_append(s.data, s.draw->str);
  g_string_free(s.draw, TRUE);
  return ok ? g_string_free(s.data, FALSE) : (g_string_free(s.data, TRUE), NULL);
}

/* ---- putting the files in place ---- */

/* TRUE when `name` is one that plot draws (plot.h lists them). */
static gboolean own_name(const char *name)
{
  static const char *const bases[] = {"fct-cdf", "slowdown-vs-size", "op-timeline",  "rates",
                                      "queues",  "link-utilization", "fct-error-cdf"};
  const char *dot = strrchr(name, '.');
  if (dot == NULL || (strcmp(dot, ".png") != 0 && strcmp(dot, ".svg") != 0))
    return FALSE;
  if (g_str_has_prefix(name, "sweep-"))
    return TRUE;
  gsize len = (gsize)(dot - name), prefix = strlen("op-timeline-");
  for (guint i = 0; i < G_N_ELEMENTS(bases); i++)
    if (len == strlen(bases[i]) && strncmp(name, bases[i], len) == 0)
      return TRUE;
  if (len <= prefix || strncmp(name, "op-timeline-", prefix) != 0)
    return FALSE;
  for (gsize i = prefix; i < len; i++)
    if (!g_ascii_isdigit(name[i]))
      return FALSE;
  return TRUE;
}

/* Refuses a `final` that exists and is not a directory (a symbolic link, a file). */
static gboolean check_target(const char *final, GError **error)
{
  GStatBuf st;
  if (g_lstat(final, &st) != 0 || S_ISDIR(st.st_mode))
    return TRUE;
  g_autofree char *path = shown(final, 4096);
  return wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_INPUT,
                      "%s exists and is not a directory (a symbolic link or a file): not replaced",
                      path);
}

/* Moves the `files` drawn in `staging` into `final` (created when missing) one by one,
 * then removes the regular files there with plot's own names that were not drawn this
 * time (an earlier plot's). */
static gboolean put_in_place(const char *staging, const char *final, GPtrArray *files,
                             GError **error)
{
  g_autofree char *shown_final = shown(final, 4096);
  if (g_mkdir(final, 0755) != 0 && errno != EEXIST)
    return wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_FAILED, "%s: cannot create: %s",
                        shown_final, g_strerror(errno));
  if (!check_target(final, error))
    return FALSE;
  for (guint i = 0; i < files->len; i++) {
    g_autofree char *from = g_build_filename(staging, files->pdata[i], NULL);
    g_autofree char *to = g_build_filename(final, files->pdata[i], NULL);
    if (g_rename(from, to) != 0)
      return wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_FAILED, "%s/%s: cannot write: %s",
                          shown_final, (const char *)files->pdata[i], g_strerror(errno));
  }
  g_autoptr(GDir) d = g_dir_open(final, 0, NULL);
  g_autoptr(GPtrArray) stale = g_ptr_array_new_with_free_func(g_free);
  for (const char *name; d && (name = g_dir_read_name(d)) != NULL;)
    if (own_name(name) && !g_ptr_array_find_with_equal_func(files, name, g_str_equal, NULL))
      g_ptr_array_add(stale, g_build_filename(final, name, NULL));
  for (guint i = 0; i < stale->len; i++) {
    GStatBuf st;
    if (g_lstat(stale->pdata[i], &st) == 0 && S_ISREG(st.st_mode))
      g_remove(stale->pdata[i]);
  }
  return TRUE;
}

gboolean wh_plot_runs(char **dirs, const char *out_dir, GPtrArray *written, const Stop *stop,
                      GError **error)
{
  g_return_val_if_fail(dirs != NULL && dirs[0] != NULL, FALSE);
  g_autofree char *final = g_build_filename(out_dir, "plots", NULL);
  g_autofree char *gnuplot = wh_gnuplot_find();
  if (gnuplot == NULL)
    return wh_error_set(
        error, WH_PLOT_ERROR, WH_PLOT_ERROR_INPUT,
        "gnuplot is not on the PATH: install it (Debian: gnuplot-nox) to draw plots; "
        "nothing was written");
  if (!check_target(final, error))
    return FALSE;
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *script = wh_plot_script(dirs, WH_PLOT_MAX_INPUT_BYTES, files, stop, error);
  if (script == NULL)
    return FALSE;
  g_autofree char *tmpl = g_build_filename(out_dir, ".plots-XXXXXX", NULL);
  g_autofree char *staging = g_mkdtemp_full(g_steal_pointer(&tmpl), 0755);
  if (staging == NULL) {
    g_autofree char *dir = shown(out_dir, 4096);
    return wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_FAILED, "%s: cannot write: %s", dir,
                        g_strerror(errno));
  }
  gboolean ok = wh_gnuplot_run(gnuplot, script, staging, NULL);
  for (guint i = 0; ok && i < files->len; i++) {
    g_autofree char *path = g_build_filename(staging, files->pdata[i], NULL);
    GStatBuf st;
    ok = g_stat(path, &st) == 0 && st.st_size > 0;
  }
  if (stopped(stop)) {
    ok = interrupted(error);
  } else if (!ok) {
    g_autofree char *dir = shown(dirs[0], 4096);
    wh_error_set(error, WH_PLOT_ERROR, WH_PLOT_ERROR_FAILED,
                 "gnuplot failed on the plots of %s; nothing was written", dir);
  }
  ok = ok && put_in_place(staging, final, files, error);
  wh_file_remove_flat_dir(staging);
  for (guint i = 0; ok && written && i < files->len; i++)
    g_ptr_array_add(written, g_strdup(files->pdata[i]));
  return ok;
}
