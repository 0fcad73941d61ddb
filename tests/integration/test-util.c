/* Shared test helpers; see test-util.h. */
#include "test-util.h"

#include <check.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <malloc.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "csv.h"

char *wh_test_source_path(const char *relative)
{
  const char *root = g_getenv("WH_SOURCE_ROOT");
  g_autofree char *base = root ? g_strdup(root) : g_build_filename(g_get_current_dir(), "..", NULL);
  return g_build_filename(base, relative, NULL);
}

int wh_test_whsim_setup(const char *const *args, GSpawnChildSetupFunc setup, gpointer data,
                        char **out, char **err)
{
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (gpointer)WH_WHSIM_PATH);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add(argv, (gpointer)*a);
  g_ptr_array_add(argv, NULL);
  int status = -1;
  g_autoptr(GError) error = NULL;
  gboolean ok = g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, setup, data, out,
                             err, &status, &error);
  g_ptr_array_free(argv, TRUE);
  ck_assert_msg(ok, "cannot run whsim: %s", error ? error->message : "?");
  return status;
}

int wh_test_whsim(const char *const *args, char **out, char **err)
{
  int status = wh_test_whsim_setup(args, NULL, NULL, out, err);
  ck_assert_msg(WIFEXITED(status), "whsim did not exit normally (status %d)", status);
  return WEXITSTATUS(status);
}

WhTestChild wh_test_fork(void (*fn)(const void *arg, void *out), const void *arg, size_t size)
{
  int fds[2];
  ck_assert_int_eq(pipe(fds), 0);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    char *out = g_malloc0(size);
    fn(arg, out);
    for (size_t sent = 0; sent < size;) {
      ssize_t n = write(fds[1], out + sent, size - sent);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        _exit(2);
      sent += (size_t)n;
    }
    _exit(0);
  }
  close(fds[1]);
  return (WhTestChild){pid, fds[0], size};
}

void wh_test_join(WhTestChild c, const char *name, void *out)
{
  size_t got = 0;
  while (got < c.size) {
    ssize_t n = read(c.fd, (char *)out + got, c.size - got);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    got += (size_t)n;
  }
  close(c.fd);
  int status = 0;
  ck_assert_int_eq(waitpid(c.pid, &status, 0), c.pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s child: status 0x%x", name,
                status);
  ck_assert_msg(got == c.size, "%s child: %zu of %zu bytes", name, got, c.size);
}

char *wh_test_read_in(const char *dir, const char *name)
{
  g_autofree char *path = g_build_filename(dir, name, NULL);
  char *text = NULL;
  ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "missing %s", path);
  return text;
}

GPtrArray *wh_test_csv_rows(const char *text, const char *header)
{
  g_autoptr(WhCsvReader) r = wh_csv_reader_new_data("csv", text, strlen(text), (gsize)1 << 20);
  g_autoptr(GError) err = NULL;
  if (header)
    ck_assert_msg(wh_csv_reader_header(r, header, &err), "%s", err->message);
  GPtrArray *rows = g_ptr_array_new_with_free_func((GDestroyNotify)g_strfreev);
  WhCsvRecord rec;
  gboolean first = header == NULL;
  while (wh_csv_reader_next(r, &rec, &err)) {
    if (first) {
      first = FALSE;
      continue;
    }
    char **f = g_new0(char *, rec.n_fields + 1);
    for (guint i = 0; i < rec.n_fields; i++)
      f[i] = g_strdup(rec.fields[i]);
    g_ptr_array_add(rows, f);
  }
  ck_assert_msg(err == NULL, "%s", err ? err->message : "");
  return rows;
}

void wh_test_remove_tree(const char *path)
{
  if (g_file_test(path, G_FILE_TEST_IS_DIR) && !g_file_test(path, G_FILE_TEST_IS_SYMLINK)) {
    g_autoptr(GDir) dir = g_dir_open(path, 0, NULL);
    const char *name;
    while (dir && (name = g_dir_read_name(dir)) != NULL) {
      g_autofree char *child = g_build_filename(path, name, NULL);
      wh_test_remove_tree(child);
    }
    g_rmdir(path);
  } else {
    g_remove(path);
  }
}

WhRun *wh_test_run(WhScenario *sc, const WhRunOptions *opts)
{
  g_autoptr(GError) error = NULL;
  WhRun *run = wh_run_new(sc, opts, &error);
  ck_assert_msg(run != NULL, "scenario %s does not build: %s", sc->path,
                error ? error->message : "?");
  wh_run_execute(run);
  return run;
}

void wh_test_assert_clean_end(const WhRun *run)
{
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_run_check(run, &err), "end state: %s", err ? err->message : "");
}

WhRun *wh_test_run_file(const char *relative, const WhRunOptions *opts)
{
  g_autofree char *path = wh_test_source_path(relative);
  g_autoptr(GError) error = NULL;
  WhScenario *sc = wh_scenario_load(path, &error);
  ck_assert_msg(sc != NULL, "cannot load %s: %s", path, error ? error->message : "?");
  WhRun *run = wh_test_run(sc, opts);
  wh_run_take_scenario(run, sc);
  return run;
}

static gint cmp_u64(gconstpointer a, gconstpointer b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

WhFairResult wh_test_shared_bottleneck(const char *cc, unsigned n, WhTime gap, WhTime window,
                                       char **sets)
{
  g_autoptr(WhScenario) sc = wh_scenario_new("fairness", "wh::Dumbbell");
  g_autofree char *pairs = g_strdup_printf("%u", n);
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", pairs);
  WhTime all_on = (n - 1) * gap;
  /* Size each flow so all are still running at the end of the window, and end soon
   * after it. */
  uint64_t size = (uint64_t)(100e9 / 8 * (wh_time_to_s(all_on) + 1.1 * wh_time_to_s(window) / n));
  for (unsigned i = 0; i < n; i++)
    wh_scenario_add_flow(sc, i, n + i, size, i * gap);
  WhRunOptions opts = {.cc = cc, .sets = sets};
  g_autoptr(GError) error = NULL;
  g_autoptr(WhRun) run = wh_run_new(sc, &opts, &error);
  ck_assert_msg(run != NULL, "%s", error ? error->message : "");
  /* bottleneck port: left switch -> right switch, the one data flows cross */
  const WhFlow *f0 = wh_transport_flow(run->tp, 0);
  const WhPort *bott = &run->net->port[f0->fwd[1]];
  WhTime t_begin = all_on + window / 2, t_end = all_on + window;
  wh_sim_stop_at(run->sim, t_begin);
  wh_sim_run(run->sim);
  uint64_t *b0 = g_new(uint64_t, n);
  for (unsigned i = 0; i < n; i++)
    b0[i] = wh_transport_flow(run->tp, i)->rcv_nxt;
  uint64_t tx0 = bott->tx_bytes;
  WhFairResult r = {0};
  GArray *q = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  for (WhTime t = t_begin + 10 * WH_US; t <= t_end; t += 10 * WH_US) {
    wh_sim_stop_at(run->sim, t);
    wh_sim_run(run->sim);
    g_array_append_val(q, bott->qd.total_bytes);
    r.qmax_late = MAX(r.qmax_late, bott->qd.total_bytes);
  }
  g_array_sort(q, cmp_u64);
  r.q50 = g_array_index(q, uint64_t, q->len / 2);
  r.q99 = g_array_index(q, uint64_t, q->len * 99 / 100);
  g_array_free(q, TRUE);
  double sum = 0, sumsq = 0, cap = 100e9 / 8 * wh_time_to_s(t_end - t_begin);
  double *x = g_new(double, n);
  for (unsigned i = 0; i < n; i++) {
    x[i] = (double)(wh_transport_flow(run->tp, i)->rcv_nxt - b0[i]);
    sum += x[i];
    sumsq += x[i] * x[i];
  }
  /* shares of what the bottleneck delivered, so header overhead does not count */
  r.min_share = 1e9;
  for (unsigned i = 0; i < n; i++) {
    r.min_share = MIN(r.min_share, x[i] / sum);
    r.max_share = MAX(r.max_share, x[i] / sum);
  }
  g_free(x);
  r.jain = sum * sum / (n * sumsq);
  r.util = (double)(bott->tx_bytes - tx0) / cap;
  g_free(b0);
  /* finish the run: every flow completes and the end state is clean */
  wh_sim_stop_at(run->sim, WH_TIME_MAX);
  wh_sim_run(run->sim);
  wh_test_assert_clean_end(run);
  r.ecn_marks = wh_net_ecn_marks(run->net);
  r.cnps = run->tp->c.cnps;
  r.pfc_pauses = run->net->c.pfc_pauses;
  fprintf(stderr,
          "%s %u flows: Jain %.5f, shares %.4f..%.4f, utilization %.3f, queue median %.0f KB, "
          "p99 %.0f KB, peak %.0f KB, %" G_GUINT64_FORMAT " PFC pauses\n",
          cc, n, r.jain, r.min_share, r.max_share, r.util, r.q50 / 1e3, r.q99 / 1e3,
          r.qmax_late / 1e3, run->net->c.pfc_pauses);
  return r;
}

void wh_test_assert_fair(WhFairResult r, unsigned n)
{
  ck_assert_msg(r.jain > 0.99, "Jain index %.4f", r.jain);
  double fair = 1.0 / n;
  ck_assert_msg(fabs(r.min_share - fair) / fair < 0.05 && fabs(r.max_share - fair) / fair < 0.05,
                "shares %.4f..%.4f, fair %.4f", r.min_share, r.max_share, fair);
}

char *wh_test_json_at(const char *json, const char *path)
{
  g_autoptr(JsonParser) parser = json_parser_new();
  g_autoptr(GError) err = NULL;
  ck_assert_msg(json_parser_load_from_data(parser, json, -1, &err), "not JSON (%s): %s",
                err ? err->message : "", json);
  g_autoptr(JsonNode) found = json_path_query(path, json_parser_get_root(parser), &err);
  ck_assert_msg(found != NULL, "JSONPath %s: %s", path, err ? err->message : "");
  JsonArray *a = json_node_get_array(found);
  return json_array_get_length(a) ? json_to_string(json_array_get_element(a, 0), FALSE) : NULL;
}

char *wh_test_strip_wall(const char *json)
{
  g_auto(GStrv) lines = g_strsplit(json, "\n", -1);
  GString *s = g_string_new(NULL);
  for (char **l = lines; *l; l++) {
    if (!strstr(*l, "\"wall_s\""))
      g_string_append_printf(s, "%s\n", *l);
  }
  return g_string_free(s, FALSE);
}

GPtrArray *wh_test_scenario_files(void)
{
  GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
  const char *dirs[] = {"scenarios", "tests/scenarios"};
  for (size_t i = 0; i < G_N_ELEMENTS(dirs); i++) {
    g_autofree char *dir = wh_test_source_path(dirs[i]);
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    const char *name;
    while ((name = g_dir_read_name(d)) != NULL) {
      if (g_str_has_suffix(name, ".xml"))
        g_ptr_array_add(files, g_build_filename(dirs[i], name, NULL));
    }
  }
  g_ptr_array_sort(files, (GCompareFunc)g_strcmp0);
  return files;
}

uint64_t wh_test_heap_bytes(void)
{
  struct mallinfo2 m = mallinfo2();
  return (uint64_t)m.uordblks + m.hblkhd;
}

char *wh_test_fingerprint(const WhRun *run)
{
  static const char *const wormhole_keys[] = {"\"scheduler\"",
                                              "\"wormhole",
                                              "\"fast_forwards\"",
                                              "\"skip_backs\"",
                                              "\"advanced_bytes\"",
                                              "\"time_steady_fraction\"",
                                              "\"events_skipped_est\"",
                                              "\"memo_",
                                              NULL};
  g_autofree char *summary = wh_run_summary_json(run, FALSE);
  GString *s = g_string_new(NULL);
  g_auto(GStrv) lines = g_strsplit(summary, "\n", -1);
  for (char **l = lines; *l; l++) {
    gboolean keep = TRUE;
    for (const char *const *k = wormhole_keys; *k && keep; k++)
      keep = strstr(*l, *k) == NULL;
    if (keep)
      g_string_append_printf(s, "%s\n", *l);
  }
  for (uint32_t i = 0; i < run->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(run->tp, i);
    g_string_append_printf(s, "%u:%" G_GUINT64_FORMAT ":%" G_GUINT64_FORMAT "\n", i,
                           (guint64)f->start, (guint64)f->finish);
  }
  return g_string_free(s, FALSE);
}
