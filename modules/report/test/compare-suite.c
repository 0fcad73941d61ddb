/* `whsim compare`: matching flows by key (in-process, on made-up runs whose flow ids
 * and order differ), and the command on small scenarios: compare.json and the CSVs
 * carry their fields, every flow key appears once in each run, Wormhole forced to
 * observe (which changes nothing) shows zero errors and an event speedup of exactly 1,
 * the event counts agree with each run's own summary, a comparison written into an old
 * directory leaves no stale comparison file, and runs stopped at the scenario's stop
 * time are reported, not failed. With --exact, a stored exact run (files on disk, as an
 * earlier compare or `whsim run` wrote them) gives what a live comparison gives, but
 * for the wall times, and is never changed; one of another configuration, not exact,
 * unfinished or unreadable is refused with status 2, naming the file and field. The
 * perturbation ensemble: wh::Link::DelayJitter members are deterministic, differ from
 * each other and from the default, which keeps the configuration digest; --ensemble
 * writes its object with verdicts and the members' outputs, refuses sizes outside 2..64,
 * and fails when a member fails; the runner keeps to its limit of children, reports
 * statuses and stderr, and stops on an interrupt. Wall time is never asserted, but for
 * a lower bound on sleeps run two at a time. */
#include <check.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>
#include <sys/wait.h>

#include "compare.h"
#include "csv.h"
#include "runner.h"
#include "test-util.h"

static WhCompareFlow flow(const char *key, uint32_t id, WhTime start, WhTime finish)
{
  WhCompareFlow f = {.id = id, .src = 0, .dst = 1, .bytes = 1000, .start = start, .finish = finish};
  g_strlcpy(f.key, key, sizeof f.key);
  return f;
}

START_TEST(test_match_by_key)
{
  /* the Wormhole run started the same transfers in another order (other flow ids);
   * op1.0 took 10% longer, op2.0 5% less, op3.0 is missing and op9.0 is new */
  WhCompareFlow exact[] = {flow("op0.0", 0, 0, 1000), flow("op1.0", 1, 0, 2000),
                           flow("op2.0", 2, 100, 1100), flow("op3.0", 3, 0, 500),
                           flow("op1.1", 4, 0, 0)};
  WhCompareFlow wh[] = {flow("op1.1", 0, 0, 700), flow("op2.0", 1, 100, 1050),
                        flow("op9.0", 2, 0, 10), flow("op1.0", 3, 0, 2200),
                        flow("op0.0", 4, 0, 1000)};
  int64_t match[G_N_ELEMENTS(exact)];
  WhCompareFctError e;
  g_autoptr(GError) err = NULL;
  ck_assert(
      wh_compare_match_flows(exact, G_N_ELEMENTS(exact), wh, G_N_ELEMENTS(wh), match, &e, &err));
  int64_t expect[] = {4, 3, 1, -1, 0};
  for (size_t i = 0; i < G_N_ELEMENTS(expect); i++)
    ck_assert_int_eq(match[i], expect[i]);
  ck_assert_uint_eq(e.matched, 3);
  ck_assert_uint_eq(e.unfinished, 1); /* op1.1 did not complete in the exact run */
  ck_assert_uint_eq(e.only_exact, 1);
  ck_assert_uint_eq(e.only_wormhole, 1);
  ck_assert_double_eq_tol(e.max, 0.10, 1e-12);
  ck_assert_double_eq_tol(e.p99, 0.10, 1e-12);
  ck_assert_double_eq_tol(e.mean, 0.15 / 3, 1e-12);
  ck_assert_double_eq_tol(e.signed_mean, 0.05 / 3, 1e-12);
  /* a key twice in one run cannot be matched */
  wh[2] = flow("op0.0", 2, 0, 10);
  ck_assert(
      !wh_compare_match_flows(exact, G_N_ELEMENTS(exact), wh, G_N_ELEMENTS(wh), match, &e, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "\"op0.0\""));
}
END_TEST

START_TEST(test_p99_nearest_rank)
{
  /* 200 flows, errors 0.5%, 1%, ..., 100%: the 198th smallest is the p99 */
  enum { N = 200 };
  WhCompareFlow exact[N], wh[N];
  for (uint32_t i = 0; i < N; i++) {
    char key[16];
    g_snprintf(key, sizeof key, "f%u", i);
    exact[i] = flow(key, i, 0, 100000);
    wh[N - 1 - i] = flow(key, N - 1 - i, 0, 100000 + 500 * (i + 1));
  }
  int64_t match[N];
  WhCompareFctError e;
  ck_assert(wh_compare_match_flows(exact, N, wh, N, match, &e, NULL));
  ck_assert_uint_eq(e.matched, N);
  ck_assert_double_eq_tol(e.p99, 0.99, 1e-12);
  ck_assert_double_eq_tol(e.max, 1.0, 1e-12);
  ck_assert_double_eq_tol(e.mean, 0.5025, 1e-12);
}
END_TEST

/* The number after `"key": ` in `json` (the first occurrence). */
static double json_number(const char *json, const char *key)
{
  g_autofree char *quoted = g_strdup_printf("\"%s\" : ", key);
  const char *at = strstr(json, quoted);
  ck_assert_msg(at != NULL, "no %s in %s", key, json);
  char *end = NULL;
  double v = g_ascii_strtod(at + strlen(quoted), &end);
  ck_assert_msg(end != at + strlen(quoted), "%s is not a number in %s", key, json);
  return v;
}

/* Asserts the value at the JSONPath `path` of `json` is `want` (compact JSON). */
static void assert_json_at(const char *json, const char *path, const char *want)
{
  g_autofree char *v = wh_test_json_at(json, path);
  ck_assert_msg(g_strcmp0(v, want) == 0, "%s: %s, not %s", path, v ? v : "(none)", want);
}

/* The keys (last column) of a flows.csv, each asserted once; as a set. */
static GHashTable *flow_keys(const char *dir)
{
  g_autofree char *csv = wh_test_read_in(dir, "flows.csv");
  g_autoptr(GPtrArray) rows =
      wh_test_csv_rows(csv, "flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key");
  GHashTable *keys = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  for (guint i = 0; i < rows->len; i++) {
    char **f = rows->pdata[i];
    ck_assert_uint_eq(g_strv_length(f), 8);
    const char *key = f[7];
    ck_assert_msg(*key, "a flow without a key: %s", f[0]);
    ck_assert_msg(g_hash_table_add(keys, g_strdup(key)), "key %s twice in %s", key, dir);
  }
  return keys;
}

static void assert_same_keys(const char *out)
{
  g_autofree char *de = g_build_filename(out, "exact", NULL);
  g_autofree char *dw = g_build_filename(out, "wormhole", NULL);
  g_autoptr(GHashTable) ke = flow_keys(de), kw = flow_keys(dw);
  ck_assert_uint_gt(g_hash_table_size(ke), 0);
  ck_assert_uint_eq(g_hash_table_size(ke), g_hash_table_size(kw));
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init(&it, ke);
  while (g_hash_table_iter_next(&it, &k, NULL))
    ck_assert_msg(g_hash_table_contains(kw, k), "key %s only in the exact run", (char *)k);
}

/* Rows of a CSV text, without its header. */
static guint csv_rows(const char *csv)
{
  guint n = 0;
  for (const char *p = strchr(csv, '\n'); p && p[1]; p = strchr(p + 1, '\n'))
    n++;
  return n;
}

START_TEST(test_compare_observe_workload)
{
  /* a workload (sends, ring all-reduces, a pairwise all-to-all, two iterations) with
   * Wormhole in observe mode: the two runs are the same simulation */
  g_autofree char *scenario = wh_test_source_path("scenarios/workload-dp-pp.xml");
  g_autofree char *tmp = g_dir_make_tmp("whsim-compare-XXXXXX", NULL);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  const char *args[] = {"compare", scenario, "--out", out, "--set", "wh::Wormhole::Mode=observe",
                        NULL};
  g_autofree char *stdout_text = NULL, *stderr_text = NULL;
  ck_assert_int_eq(wh_test_whsim(args, &stdout_text, &stderr_text), 0);
  ck_assert_msg(g_str_has_prefix(stdout_text, "compare    workload-dp-pp") &&
                    strstr(stdout_text, "\niteration  ") && strstr(stdout_text, "\nFCT error  "),
                "summary: %s", stdout_text);
  g_autofree char *json = wh_test_read_in(out, "compare.json");
  ck_assert_ptr_nonnull(strstr(json, "\"mode\" : \"off\""));
  ck_assert_ptr_nonnull(strstr(json, "\"mode\" : \"observe\""));
  ck_assert_ptr_nonnull(strstr(json, "\"wall_speedup\" : "));
  assert_json_at(json, "$.iteration_time_error_per_iteration", "[0.0,0.0]");
  ck_assert_ptr_nonnull(strstr(json, "\"wormhole_mode\" : \"observe\""));
  ck_assert(json_number(json, "event_speedup") == 1.0);
  ck_assert(json_number(json, "events_skipped") == 0.0);
  ck_assert(json_number(json, "iteration_time_error") == 0.0);
  ck_assert(json_number(json, "makespan_error") == 0.0);
  const char *fct = strstr(json, "\"fct_error\" : ");
  ck_assert_ptr_nonnull(fct);
  ck_assert(json_number(fct, "mean") == 0.0 && json_number(fct, "p99") == 0.0 &&
            json_number(fct, "max") == 0.0 && json_number(fct, "signed_mean") == 0.0);
  ck_assert(json_number(fct, "only_exact") == 0 && json_number(fct, "only_wormhole") == 0);
  const char *ops = strstr(json, "\"op_end_time_error\" : ");
  ck_assert_ptr_nonnull(ops);
  ck_assert(json_number(ops, "ops") > 0 && json_number(ops, "max") == 0.0);
  ck_assert(json_number(json, "bytes_skipped") == 0);
  assert_same_keys(out);
  g_autofree char *de = g_build_filename(out, "exact", NULL);
  g_autoptr(GHashTable) keys = flow_keys(de);
  ck_assert(g_hash_table_contains(keys, "op6.0")); /* the all-to-all's first transfer */
  g_autofree char *flows = wh_test_read_in(out, "compare-flows.csv");
  ck_assert(g_str_has_prefix(flows, "key,src,dst,bytes,flow_id_exact,flow_id_wormhole,"
                                    "fct_exact_ps,fct_wormhole_ps,rel_error\n"));
  ck_assert_uint_eq(csv_rows(flows), g_hash_table_size(keys));
  ck_assert_uint_eq(json_number(fct, "flows"), g_hash_table_size(keys));
  g_autofree char *ops_csv = wh_test_read_in(out, "compare-ops.csv");
  ck_assert_uint_eq(csv_rows(ops_csv), 2 * 15);
  /* plots when gnuplot is on the PATH, and the reason when it is not */
  g_autofree char *gnuplot = g_find_program_in_path("gnuplot");
  if (gnuplot) {
    g_autofree char *svg = wh_test_read_in(out, "compare-fct.svg");
    ck_assert(g_str_has_prefix(svg, "<?xml"));
    assert_json_at(json, "$.plots[0]", "\"compare-fct.svg\"");
  } else {
    ck_assert_ptr_nonnull(strstr(json, "\"plots\" : []"));
  }
  /* the same comparison into the same directory on a scenario without a workload:
   * compare-ops.csv of the first is stale and goes */
  g_autofree char *dumbbell = wh_test_source_path("scenarios/dumbbell-dcqcn.xml");
  const char *again[] = {"compare", dumbbell, "--out", out, "--quiet", NULL};
  ck_assert_int_eq(wh_test_whsim(again, NULL, NULL), 0);
  g_autofree char *ops_path = g_build_filename(out, "compare-ops.csv", NULL);
  gboolean stale = g_file_test(ops_path, G_FILE_TEST_EXISTS);
  g_autofree char *json2 = wh_test_read_in(out, "compare.json");
  wh_test_remove_tree(tmp);
  ck_assert_msg(!stale, "compare-ops.csv of an earlier comparison was left");
  ck_assert_ptr_nonnull(strstr(json2, "\"iteration_time_error\" : null"));
}
END_TEST

START_TEST(test_compare_skip_counts)
{
  /* the default Wormhole mode (skip): whatever it skips, compare.json's events and
   * speedups are those of the two runs' own summaries */
  g_autofree char *scenario = wh_test_source_path("scenarios/dumbbell-dcqcn.xml");
  g_autofree char *tmp = g_dir_make_tmp("whsim-compare-XXXXXX", NULL);
  const char *args[] = {"compare", scenario, "--out", tmp, "--quiet", NULL};
  ck_assert_int_eq(wh_test_whsim(args, NULL, NULL), 0);
  g_autofree char *json = wh_test_read_in(tmp, "compare.json");
  g_autofree char *de = g_build_filename(tmp, "exact", NULL);
  g_autofree char *dw = g_build_filename(tmp, "wormhole", NULL);
  g_autofree char *se = wh_test_read_in(de, "summary.json"),
                  *sw = wh_test_read_in(dw, "summary.json");
  assert_same_keys(tmp);
  wh_test_remove_tree(tmp);
  ck_assert_ptr_nonnull(strstr(json, "\"mode\" : \"skip\""));
  ck_assert_ptr_null(strstr(se, "\"wormhole_mode\""));
  ck_assert_ptr_nonnull(strstr(sw, "\"wormhole_mode\" : \"skip\""));
  double ee = json_number(se, "events_executed"), ew = json_number(sw, "events_executed");
  ck_assert(json_number(strstr(json, "\"exact\" : "), "events_executed") == ee);
  ck_assert(json_number(strstr(json, "\"wormhole\" : "), "events_executed") == ew);
  ck_assert_double_eq_tol(json_number(json, "event_speedup"), ee / ew, 1e-8 * ee / ew);
  ck_assert_double_eq_tol(json_number(json, "events_skipped"), 1 - ew / ee, 1e-8);
  double we = json_number(strstr(json, "\"exact\" : "), "wall_s"),
         ww = json_number(strstr(json, "\"wormhole\" : "), "wall_s");
  ck_assert_double_eq_tol(json_number(json, "wall_speedup"), we / ww, 1e-3 * we / ww);
  /* each run's whole time (building, loop, outputs) holds its loop's */
  double pe = json_number(strstr(json, "\"exact\" : "), "process_s"),
         pw = json_number(strstr(json, "\"wormhole\" : "), "process_s");
  ck_assert(pe >= we && pw >= ww);
  ck_assert_double_eq_tol(json_number(json, "process_speedup"), pe / pw, 1e-3 * pe / pw);
  const char *fct = strstr(json, "\"fct_error\" : ");
  ck_assert(json_number(fct, "flows") == 4);
  ck_assert(isfinite(json_number(fct, "p99")));
}
END_TEST

START_TEST(test_compare_stop_time)
{
  /* a scenario that stops before its flows complete: as for whsim run, not a failure;
   * both runs say why they stopped, and the unfinished flows are counted, not compared */
  g_autofree char *tmp = g_dir_make_tmp("whsim-compare-XXXXXX", NULL);
  g_autofree char *scenario = g_build_filename(tmp, "stop.xml", NULL);
  static const char xml[] =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<scenario name=\"stop\" stop=\"500us\">\n"
      "  <topology type=\"wh::Dumbbell\"><param name=\"Pairs\" value=\"2\"/></topology>\n"
      "  <flows><flow src=\"0\" dst=\"2\" size=\"20MB\"/><flow src=\"1\" dst=\"3\" "
      "size=\"20KB\"/></flows>\n</scenario>\n";
  ck_assert(g_file_set_contents(scenario, xml, -1, NULL));
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  const char *args[] = {"compare", scenario, "--out", out, NULL};
  g_autofree char *stdout_text = NULL;
  int status = wh_test_whsim(args, &stdout_text, NULL);
  g_autofree char *json = wh_test_read_in(out, "compare.json");
  wh_test_remove_tree(tmp);
  ck_assert_int_eq(status, 0);
  ck_assert_ptr_nonnull(strstr(stdout_text, "\nstopped    exact run: stop time at "));
  for (int k = 0; k < 2; k++) {
    const char *side = k ? "$.wormhole" : "$.exact";
    g_autofree char *stopped = g_strconcat(side, ".stopped_early", NULL);
    g_autofree char *problem = g_strconcat(side, ".problem", NULL);
    assert_json_at(json, stopped, "\"stop time\"");
    assert_json_at(json, problem, "null");
  }
  const char *fct = strstr(json, "\"fct_error\" : ");
  ck_assert(json_number(fct, "flows") == 1 && json_number(fct, "unfinished") == 1);
}
END_TEST

static int cmp_name(gconstpointer a, gconstpointer b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file of directory `dir` (not below) with its text, joined: to see that a stored
 * exact run is left as it was. (transfer full) */
static char *dir_snapshot(const char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  for (const char *n; (n = g_dir_read_name(d));)
    g_ptr_array_add(names, g_strdup(n));
  g_ptr_array_sort(names, cmp_name);
  GString *s = g_string_new(NULL);
  for (guint i = 0; i < names->len; i++) {
    g_autofree char *text = wh_test_read_in(dir, names->pdata[i]);
    g_string_append_printf(s, "== %s\n%s", (char *)names->pdata[i], text);
  }
  return g_string_free(s, FALSE);
}

/* compare.json without the fields that differ between a live and a stored exact side:
 * wall times (measured at other times), exact_from and the list of files; compact.
 * (transfer full) */
static char *strip_stored(const char *json)
{
  g_autoptr(JsonParser) parser = json_parser_new();
  ck_assert(json_parser_load_from_data(parser, json, -1, NULL));
  JsonObject *o = json_node_get_object(json_parser_get_root(parser));
  json_object_remove_member(o, "wall_speedup");
  json_object_remove_member(o, "process_speedup");
  json_object_remove_member(o, "exact_from");
  json_object_remove_member(o, "files");
  for (int k = 0; k < 2; k++) {
    JsonObject *side = json_object_get_object_member(o, k ? "wormhole" : "exact");
    json_object_remove_member(side, "wall_s");
    json_object_remove_member(side, "process_s");
  }
  return json_to_string(json_parser_get_root(parser), FALSE);
}

/* Compares `scenario` live into tmp/live, then against tmp/live/exact stored into
 * tmp/stored, both with `extra` (NULL-terminated, at most 4); asserts everything but the
 * wall times agrees and the stored run is left as it was. */
static void check_stored_like_live(const char *tmp, const char *scenario, const char *const *extra)
{
  g_autofree char *live = g_build_filename(tmp, "live", NULL);
  g_autofree char *stored = g_build_filename(tmp, "stored", NULL);
  g_autofree char *exact = g_build_filename(live, "exact", NULL);
  const char *a[12] = {"compare", scenario, "--out", live, "--quiet"};
  const char *b[12] = {"compare", scenario, "--out", stored, "--exact", exact};
  for (int i = 0; extra[i]; i++)
    a[5 + i] = b[6 + i] = extra[i];
  ck_assert_int_eq(wh_test_whsim(a, NULL, NULL), 0);
  g_autofree char *before = dir_snapshot(exact);
  g_autofree char *out = NULL, *err = NULL;
  ck_assert_msg(wh_test_whsim(b, &out, &err) == 0, "%s", err);
  g_autofree char *line = g_strdup_printf("the stored exact run in %s", exact);
  ck_assert_msg(strstr(out, line) && strstr(out, "stored: measured at another time"), "%s", out);
  g_autofree char *after = dir_snapshot(exact);
  ck_assert_msg(strcmp(before, after) == 0, "the stored exact run was changed");
  g_autofree char *jl = wh_test_read_in(live, "compare.json");
  g_autofree char *js = wh_test_read_in(stored, "compare.json");
  ck_assert_ptr_nonnull(strstr(jl, "\"exact_from\" : null,"));
  g_autofree char *from = g_strdup_printf("\"exact_from\" : \"%s\",", exact);
  ck_assert_ptr_nonnull(strstr(js, from));
  assert_json_at(js, "$.files[0]", "\"wormhole/\"");
  assert_json_at(js, "$.files[1]", "\"compare-flows.csv\"");
  g_autofree char *sl = strip_stored(jl), *ss = strip_stored(js);
  ck_assert_str_eq(sl, ss);
  ck_assert(json_number(js, "event_speedup") == json_number(jl, "event_speedup"));
  /* the exact wall is the stored summary's, the Wormhole wall this run's */
  g_autofree char *summary = wh_test_read_in(exact, "summary.json");
  double we = json_number(strstr(js, "\"exact\" : "), "wall_s"),
         ww = json_number(strstr(js, "\"wormhole\" : "), "wall_s");
  ck_assert(we == json_number(summary, "wall_s"));
  ck_assert_double_eq_tol(json_number(js, "wall_speedup"), we / ww, 1e-3 * we / ww);
  g_autofree char *fl = wh_test_read_in(live, "compare-flows.csv");
  g_autofree char *fs = wh_test_read_in(stored, "compare-flows.csv");
  ck_assert_msg(strcmp(fl, fs) == 0, "compare-flows.csv differs");
  g_autofree char *ops = g_build_filename(live, "compare-ops.csv", NULL);
  if (g_file_test(ops, G_FILE_TEST_EXISTS)) {
    g_autofree char *ol = wh_test_read_in(live, "compare-ops.csv");
    g_autofree char *os = wh_test_read_in(stored, "compare-ops.csv");
    ck_assert_msg(strcmp(ol, os) == 0, "compare-ops.csv differs");
  }
  g_autofree char *exact_out = g_build_filename(stored, "exact", NULL);
  ck_assert(!g_file_test(exact_out, G_FILE_TEST_EXISTS));
}

START_TEST(test_compare_stored_flows)
{
  /* flows without a workload, Wormhole skipping: a comparison against the stored exact
   * run reports what a live one does */
  g_autofree char *scenario = wh_test_source_path("scenarios/dumbbell-dcqcn.xml");
  g_autofree char *tmp = g_dir_make_tmp("whsim-compare-XXXXXX", NULL);
  const char *extra[] = {NULL};
  check_stored_like_live(tmp, scenario, extra);
  g_autofree char *stored = g_build_filename(tmp, "stored", NULL);
  g_autofree char *json = wh_test_read_in(stored, "compare.json");
  wh_test_remove_tree(tmp);
  ck_assert(json_number(strstr(json, "\"fct_error\" : "), "flows") == 4);
  ck_assert(json_number(json, "bytes_skipped") > 0);
}
END_TEST

START_TEST(test_compare_stored_workload)
{
  /* a workload (ops, an iteration), with a --set that changes the configuration digest:
   * the stored run carries it, and op end errors agree too */
  g_autofree char *scenario = wh_test_source_path("scenarios/workload-dp-pp.xml");
  g_autofree char *tmp = g_dir_make_tmp("whsim-compare-XXXXXX", NULL);
  const char *extra[] = {"--iterations", "1", "--set", "wh::Link::Delay=2us", NULL};
  check_stored_like_live(tmp, scenario, extra);
  g_autofree char *stored = g_build_filename(tmp, "stored", NULL);
  g_autofree char *json = wh_test_read_in(stored, "compare.json");
  wh_test_remove_tree(tmp);
  ck_assert(json_number(strstr(json, "\"op_end_time_error\" : "), "ops") == 15);
  ck_assert_ptr_nonnull(strstr(json, "\"iteration_time_error_per_iteration\" : ["));
}
END_TEST

/* Runs `whsim compare` with `args` into tmp/out: refused with status 2, the message
 * holding `file` and `field`, and no comparison written. */
static void assert_refused(const char *tmp, const char *const *args, const char *file,
                           const char *field)
{
  g_autofree char *err = NULL;
  int status = wh_test_whsim(args, NULL, &err);
  ck_assert_msg(status == 2, "status %d: %s", status, err);
  ck_assert_msg(strstr(err, file) && strstr(err, field), "expected %s and %s in: %s", file, field,
                err);
  g_autofree char *json = g_build_filename(tmp, "out", "compare.json", NULL);
  ck_assert_msg(!g_file_test(json, G_FILE_TEST_EXISTS), "a comparison was written: %s", err);
}

/* A copy of the stored run `from` in tmp/`name` whose file `file` has `old` (its first
 * occurrence, which must exist) replaced by `new`, or is removed when `old` is NULL.
 * (transfer full) */
static char *edited_copy(const char *tmp, const char *from, const char *name, const char *file,
                         const char *old, const char *new)
{
  char *dir = g_build_filename(tmp, name, NULL);
  ck_assert_int_eq(g_mkdir(dir, 0755), 0);
  const char *files[] = {"summary.json", "flows.csv", "ops.csv", "links.csv"};
  for (size_t i = 0; i < G_N_ELEMENTS(files); i++) {
    g_autofree char *src = g_build_filename(from, files[i], NULL);
    g_autofree char *dst = g_build_filename(dir, files[i], NULL);
    g_autofree char *text = NULL;
    if (!g_file_get_contents(src, &text, NULL, NULL))
      continue;
    if (strcmp(files[i], file) == 0) {
      if (old == NULL)
        continue;
      char *at = strstr(text, old);
      ck_assert_msg(at != NULL, "%s has no %s", src, old);
      *at = '\0';
      g_autofree char *edited = g_strconcat(text, new, at + strlen(old), NULL);
      g_free(text);
      text = g_steal_pointer(&edited);
    }
    ck_assert(g_file_set_contents(dst, text, -1, NULL));
  }
  return dir;
}

START_TEST(test_compare_stored_refused)
{
  /* stored exact runs of another configuration, not exact, unfinished, or unreadable
   * are refused before anything runs, naming the file and field; the stored runs are
   * left as they were */
  g_autofree char *dumbbell = wh_test_source_path("scenarios/dumbbell-dcqcn.xml");
  g_autofree char *workload = wh_test_source_path("scenarios/workload-dp-pp.xml");
  g_autofree char *tmp = g_dir_make_tmp("whsim-compare-XXXXXX", NULL);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  g_autofree char *ref = g_build_filename(tmp, "ref", NULL);
  g_autofree char *exact = g_build_filename(ref, "exact", NULL);
  g_autofree char *wormhole = g_build_filename(ref, "wormhole", NULL);
  g_autofree char *wl = g_build_filename(tmp, "wl", NULL);
  const char *make[] = {"compare", dumbbell, "--out", ref, "--quiet", NULL};
  ck_assert_int_eq(wh_test_whsim(make, NULL, NULL), 0);
  /* `whsim run` on the exact engine writes a stored run too */
  const char *make_wl[] = {"run", workload, "--out", wl, "--iterations", "1", "--quiet", NULL};
  ck_assert_int_eq(wh_test_whsim(make_wl, NULL, NULL), 0);
  g_autofree char *before = dir_snapshot(exact), *before_wl = dir_snapshot(wl);
  g_autofree char *summary = g_build_filename(exact, "summary.json", NULL);
  g_autofree char *wl_summary = g_build_filename(wl, "summary.json", NULL);
#define REFUSED(file, field, ...)                                                                  \
  do {                                                                                             \
    const char *args_[] = {"compare", __VA_ARGS__, NULL};                                          \
    assert_refused(tmp, args_, file, field);                                                       \
  } while (0)
  REFUSED(summary, "field \"seed\"", dumbbell, "--out", out, "--exact", exact, "--seed", "2");
  REFUSED(summary, "field \"cc\"", dumbbell, "--out", out, "--exact", exact, "--cc", "dctcp");
  REFUSED(summary, "field \"config_digest\"", dumbbell, "--out", out, "--exact", exact, "--set",
          "wh::Link::Delay=2us");
  REFUSED(summary, "field \"scenario\"", workload, "--out", out, "--exact", exact);
  REFUSED(wl_summary, "field \"iterations\"", workload, "--out", out, "--exact", wl);
  g_autofree char *wh_summary = g_build_filename(wormhole, "summary.json", NULL);
  REFUSED(wh_summary, "field \"wormhole_mode\"", dumbbell, "--out", out, "--exact", wormhole);
  /* the directory, and --out into it */
  g_autofree char *json = g_build_filename(ref, "compare.json", NULL);
  REFUSED(json, "not a directory", dumbbell, "--out", out, "--exact", json);
  g_autofree char *inside = g_build_filename(exact, "again", NULL);
  REFUSED(inside, "inside the stored exact run", dumbbell, "--out", inside, "--exact", exact);
  REFUSED(exact, "inside the stored exact run", dumbbell, "--out", exact, "--exact", exact);
  REFUSED(wormhole, "the Wormhole run", dumbbell, "--out", ref, "--exact", wormhole);
  /* edited copies: each refused for what was changed */
  static const struct {
    const char *file, *old, *new, *field;
  } edits[] = {
      {"summary.json", "\"cc\" : ", "\"stopped_early\" : \"wall-clock limit\",\n  \"cc\" : ",
       "field \"stopped_early\""},
      {"summary.json",
       "\"cc\" : ", "\"stopped_early\" : \"interrupted\",\n  \"cc\" : ", "field \"stopped_early\""},
      {"summary.json", "\"flows_completed\" : 4", "\"flows_completed\" : 3",
       "field \"flows_completed\""},
      {"summary.json", "\"config_digest\"", "\"digest\"", "no field \"config_digest\""},
      {"summary.json", "\"seed\"", "\"engine\" : \"ns3\",\n  \"seed\"", "field \"engine\""},
      {"summary.json", "\"hosts\" : 8", "\"hosts\" : 9", "field \"hosts\""},
      {"summary.json", "\"scheduler\" : \"calendar\"", "\"scheduler\" : \"none\"",
       "field \"scheduler\""},
      {"summary.json", "\"flows\" : 4\n}", "\"flows\" : 4\n", "not a JSON object"},
      {"summary.json", NULL, NULL, "missing"},
      {"flows.csv", NULL, NULL, "missing"},
      {"flows.csv", ",20000000,", ",20000001,", "flows.csv:2: field bytes"},
      {"flows.csv", ",100000000,", ",100000001,", "flows.csv:3: field start_ps"},
      {"flows.csv", ",b\n", ",bb\n", "flows.csv:3: field key"},
      {"flows.csv", ",1,5,", ",x,5,", "flows.csv:3: field src"},
      {"flows.csv", "flow_id,", "id,", "flows.csv:1: expected the header"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(edits); i++) {
    g_autofree char *name = g_strdup_printf("edit%zu", i);
    g_autofree char *dir = edited_copy(tmp, exact, name, edits[i].file, edits[i].old, edits[i].new);
    g_autofree char *file = g_build_filename(dir, edits[i].file, NULL);
    REFUSED(file, edits[i].field, dumbbell, "--out", out, "--exact", dir);
  }
  /* a workload run: its ops as this scenario builds them, and that ended */
  g_autofree char *wl_op = edited_copy(tmp, wl, "wl-op", "ops.csv", ",f8,", ",f9,");
  g_autofree char *wl_op_csv = g_build_filename(wl_op, "ops.csv", NULL);
  REFUSED(wl_op_csv, "field name", workload, "--out", out, "--exact", wl_op, "--iterations", "1");
  g_autofree char *wl_end = edited_copy(tmp, wl, "wl-end", "ops.csv", ",564506120,2\n", ",,2\n");
  g_autofree char *wl_end_csv = g_build_filename(wl_end, "ops.csv", NULL);
  REFUSED(wl_end_csv, "did not end", workload, "--out", out, "--exact", wl_end, "--iterations",
          "1");
  /* a workload flow of another size: known only once the Wormhole run made its flows */
  g_autofree char *wl_flow = edited_copy(tmp, wl, "wl-flow", "flows.csv", ",8000000,", ",999,");
  g_autofree char *wl_flow_csv = g_build_filename(wl_flow, "flows.csv", NULL);
  REFUSED(wl_flow_csv, "field bytes", workload, "--out", out, "--exact", wl_flow, "--iterations",
          "1");
#undef REFUSED
  g_autofree char *after = dir_snapshot(exact), *after_wl = dir_snapshot(wl);
  wh_test_remove_tree(tmp);
  ck_assert_msg(strcmp(before, after) == 0, "the stored exact run was changed");
  ck_assert_msg(strcmp(before_wl, after_wl) == 0, "the stored run of whsim run was changed");
}
END_TEST

/* The name of the scenarios of test_json_strings and the id of their first flow and
 * their send, as the loader reads them: non-ASCII, a double quote, a backslash and a
 * tab (the one control character an XML attribute can carry). */
#define HOSTILE_NAME "caf\xc3\xa9 \"q\" back\\slash\ttab"
#define HOSTILE_ID "\xc3\xa9\"\\\ta"

/* The string at the JSONPath `path` of the JSON text `json`, as json-glib's parser
 * reads it; NULL when there is none or it is not a string. (transfer full) */
static char *json_string_at(const char *json, const char *path)
{
  g_autoptr(JsonParser) parser = json_parser_new();
  g_autoptr(GError) err = NULL;
  ck_assert_msg(json_parser_load_from_data(parser, json, -1, &err), "not JSON (%s): %s",
                err ? err->message : "", json);
  g_autoptr(JsonNode) found = json_path_query(path, json_parser_get_root(parser), NULL);
  JsonArray *a = found ? json_node_get_array(found) : NULL;
  JsonNode *v = a && json_array_get_length(a) ? json_array_get_element(a, 0) : NULL;
  return v && JSON_NODE_HOLDS_VALUE(v) ? g_strdup(json_node_get_string(v)) : NULL;
}

/* Asserts the string at `path` of the JSON file `name` in `dir` is `want`, and that
 * Python's json module, a strict reader (json-glib's parser also takes GLib's octal
 * escapes), reads the file. */
static void assert_json_string(const char *dir, const char *name, const char *path,
                               const char *want)
{
  g_autofree char *file = g_build_filename(dir, name, NULL);
  const char *argv[] = {"python3", "-c", "import json, sys; json.load(open(sys.argv[1]))", file,
                        NULL};
  g_autofree char *err = NULL;
  int status = -1;
  ck_assert(g_spawn_sync(NULL, (char **)argv, NULL,
                         G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL, NULL, &err,
                         &status, NULL));
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "python3 json.load(%s): %s", file,
                err);
  g_autofree char *json = wh_test_read_in(dir, name);
  g_autofree char *v = json_string_at(json, path);
  ck_assert_msg(g_strcmp0(v, want) == 0, "%s/%s: %s is \"%s\", not \"%s\"", dir, name, path,
                v ? v : "(none)", want);
}

START_TEST(test_json_strings)
{
  static const char flows_xml[] =
      "<scenario name=\"caf\xc3\xa9 &quot;q&quot; back\\slash&#9;tab\" seed=\"1\">\n"
      "  <topology type=\"wh::Dumbbell\"><param name=\"Pairs\" value=\"2\"/></topology>\n"
      "  <flows>\n"
      "    <flow id=\"\xc3\xa9&quot;\\&#9;a\" src=\"0\" dst=\"2\" size=\"2MB\" start=\"0us\"/>\n"
      "    <flow id=\"b\" src=\"1\" dst=\"3\" size=\"2MB\" start=\"10us\"/>\n"
      "  </flows>\n"
      "</scenario>\n";
  static const char workload_xml[] =
      "<scenario name=\"caf\xc3\xa9 &quot;q&quot; back\\slash&#9;tab\" seed=\"1\">\n"
      "  <topology type=\"wh::Dumbbell\"><param name=\"Pairs\" value=\"2\"/></topology>\n"
      "  <workload iterations=\"1\">\n"
      "    <compute id=\"f0\" rank=\"0\" duration=\"10us\"/>\n"
      "    <send id=\"\xc3\xa9&quot;\\&#9;a\" src=\"0\" dst=\"2\" size=\"1MB\" deps=\"f0\"/>\n"
      "  </workload>\n"
      "</scenario>\n";
  g_autofree char *tmp = g_dir_make_tmp("whsim-json-XXXXXX", NULL);
  g_autofree char *flows = g_build_filename(tmp, "flows.xml", NULL);
  g_autofree char *workload = g_build_filename(tmp, "workload.xml", NULL);
  ck_assert(g_file_set_contents(flows, flows_xml, -1, NULL));
  ck_assert(g_file_set_contents(workload, workload_xml, -1, NULL));
  g_autofree char *cmp = g_build_filename(tmp, "compare", NULL);
  g_autofree char *exact = g_build_filename(cmp, "exact", NULL);
  g_autofree char *wormhole = g_build_filename(cmp, "wormhole", NULL);
  g_autofree char *stored = g_build_filename(tmp, "stored", NULL);
  g_autofree char *run = g_build_filename(tmp, "run", NULL);
  const char *compare[] = {"compare", flows, "--out", cmp, "--quiet", NULL};
  const char *again[] = {"compare", flows, "--out", stored, "--exact", exact, "--quiet", NULL};
  const char *run_args[] = {"run", workload, "--out", run, "--quiet", NULL};
  g_autofree char *err = NULL, *err2 = NULL, *err3 = NULL;
  ck_assert_msg(wh_test_whsim(compare, NULL, &err) == 0, "%s", err);
  /* the stored exact run's summary is read back and its name matched */
  ck_assert_msg(wh_test_whsim(again, NULL, &err2) == 0, "%s", err2);
  ck_assert_msg(wh_test_whsim(run_args, NULL, &err3) == 0, "%s", err3);
  assert_json_string(cmp, "compare.json", "$.scenario", HOSTILE_NAME);
  assert_json_string(stored, "compare.json", "$.scenario", HOSTILE_NAME);
  assert_json_string(exact, "summary.json", "$.scenario", HOSTILE_NAME);
  assert_json_string(wormhole, "summary.json", "$.scenario", HOSTILE_NAME);
  /* the per-flow table names the send by its id, read back as CSV */
  g_autofree char *wflows = g_build_filename(wormhole, "wormhole-flows.csv", NULL);
  g_autoptr(WhCsvReader) reader = wh_csv_reader_new_file(wflows, 1 << 20, 4096, NULL);
  WhCsvRecord rec;
  ck_assert(reader && wh_csv_reader_next(reader, &rec, NULL) &&
            g_strcmp0(rec.fields[0], "flow_id") == 0);
  ck_assert_msg(wh_csv_reader_next(reader, &rec, NULL) && g_strcmp0(rec.fields[0], HOSTILE_ID) == 0,
                "wormhole-flows.csv does not start with the send's id");
  assert_json_string(run, "summary.json", "$.scenario", HOSTILE_NAME);
  g_autofree char *trace = wh_test_read_in(run, "trace.json");
  gboolean found = FALSE;
  for (int i = 0; !found && i < 64; i++) {
    g_autofree char *path = g_strdup_printf("$.traceEvents[%d].name", i);
    g_autofree char *name = json_string_at(trace, path);
    found = g_strcmp0(name, HOSTILE_ID) == 0;
  }
  ck_assert_msg(found, "trace.json has no event named after the send: %s", trace);
  wh_test_remove_tree(tmp);
}
END_TEST

/* ---- the perturbation ensemble ---- */

/* The value at `key` of a run's summary.json, as compact JSON. (transfer full) */
static char *summary_at(const char *dir, const char *path)
{
  g_autofree char *json = wh_test_read_in(dir, "summary.json");
  g_autoptr(JsonNode) root = json_from_string(json, NULL);
  g_autoptr(JsonNode) v = json_path_query(path, root, NULL);
  return json_to_string(v, FALSE);
}

START_TEST(test_delay_jitter)
{
  /* members are deterministic, differ from each other and from the default, and the
   * default (written or not) keeps the configuration digest */
  g_autofree char *scenario = wh_test_source_path("scenarios/incast-16to1.xml");
  g_autofree char *tmp = g_dir_make_tmp("whsim-jitter-XXXXXX", NULL);
  const char *sets[] = {NULL, "wh::Link::DelayJitter=0", "wh::Link::DelayJitter=1",
                        "wh::Link::DelayJitter=1", "wh::Link::DelayJitter=2"};
  char *flows[5], *digest[5];
  for (int i = 0; i < 5; i++) {
    g_autofree char *name = g_strdup_printf("r%d", i);
    g_autofree char *out = g_build_filename(tmp, name, NULL);
    const char *args[] = {"run",   scenario, "--out", out, "--quiet", sets[i] ? "--set" : NULL,
                          sets[i], NULL};
    g_autofree char *err = NULL;
    ck_assert_msg(wh_test_whsim(args, NULL, &err) == 0, "%s", err);
    flows[i] = wh_test_read_in(out, "flows.csv");
    digest[i] = summary_at(out, "$.config_digest");
  }
  ck_assert_str_eq(flows[0], flows[1]);
  ck_assert_str_eq(digest[0], digest[1]);
  ck_assert_str_eq(flows[2], flows[3]);
  ck_assert_str_ne(flows[2], flows[4]);
  ck_assert_str_ne(flows[0], flows[2]);
  ck_assert_str_ne(flows[0], flows[4]);
  ck_assert_str_ne(digest[0], digest[2]);
  for (int i = 0; i < 5; i++) {
    g_free(flows[i]);
    g_free(digest[i]);
  }
  /* only a non-negative integer */
  static const char *const bad[] = {"-1", "1.5", "x"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autofree char *set = g_strconcat("wh::Link::DelayJitter=", bad[i], NULL);
    g_autofree char *out = g_build_filename(tmp, "bad", NULL);
    const char *args[] = {"run", scenario, "--out", out, "--quiet", "--set", set, NULL};
    g_autofree char *err = NULL;
    ck_assert_int_eq(wh_test_whsim(args, NULL, &err), 2);
    ck_assert_ptr_nonnull(strstr(err, "DelayJitter"));
  }
  wh_test_remove_tree(tmp);
}
END_TEST

START_TEST(test_compare_ensemble)
{
  g_autofree char *scenario = wh_test_source_path("scenarios/dumbbell-dcqcn.xml");
  g_autofree char *tmp = g_dir_make_tmp("whsim-compare-XXXXXX", NULL);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  const char *args[] = {"compare",          scenario, "--out", out, "--ensemble", "3",
                        "--ensemble-seeds", "2",      "-j",    "2", NULL};
  g_autofree char *text = NULL, *err = NULL;
  ck_assert_msg(wh_test_whsim(args, &text, &err) == 0, "%s", err);
  ck_assert_msg(strstr(text, "\nensemble   the reference and 2 members") &&
                    strstr(text, "\nverdicts   ") && strstr(text, "\nseeds      2 seed members"),
                "summary: %s", text);
  g_autofree char *json = wh_test_read_in(out, "compare.json");
  assert_json_at(json, "$.ensemble.members", "2");
  assert_json_at(json, "$.ensemble.size", "3");
  assert_json_at(json, "$.ensemble.member_dirs", "[\"ensemble/member-1/\",\"ensemble/member-2/\"]");
  static const char *const metrics[] = {"makespan",
                                        "fct.point-to-point.p50",
                                        "fct.point-to-point.p90",
                                        "fct.point-to-point.p99",
                                        "fct.point-to-point.max",
                                        "per_flow_spread"};
  for (size_t i = 0; i < G_N_ELEMENTS(metrics); i++) {
    g_autofree char *verdict = g_strdup_printf("$.ensemble.metrics['%s'].verdict", metrics[i]);
    g_autofree char *v = json_string_at(json, verdict);
    ck_assert_msg(g_strcmp0(v, "inside") == 0 || g_strcmp0(v, "outside") == 0, "%s: %s", metrics[i],
                  v ? v : "(none)");
    g_autoptr(JsonNode) root = json_from_string(json, NULL);
    g_autofree char *path =
        g_strdup_printf("$.ensemble.metrics['%s'].exact_ensemble[1]", metrics[i]);
    g_autoptr(JsonNode) second = json_path_query(path, root, NULL);
    ck_assert_uint_eq(json_array_get_length(json_node_get_array(second)), 1);
    /* the seed members: the same metrics, over their own values */
    g_autofree char *seed_members =
        g_strdup_printf("$.ensemble.seeds.metrics['%s'].exact_ensemble", metrics[i]);
    g_autoptr(JsonNode) seed_values = json_path_query(seed_members, root, NULL);
    JsonArray *found = json_node_get_array(seed_values);
    ck_assert_uint_eq(json_array_get_length(found), 1);
    ck_assert_uint_eq(json_array_get_length(json_array_get_array_element(found, 0)), 2);
    static const char *const fields[] = {"exact_ensemble_max", "exact_ensemble_mean", "wormhole",
                                         "verdict", "ratio"};
    for (size_t f = 0; f < G_N_ELEMENTS(fields); f++) {
      g_autofree char *at =
          g_strdup_printf("$.ensemble.seeds.metrics['%s'].%s", metrics[i], fields[f]);
      g_autoptr(JsonNode) field = json_path_query(at, root, NULL);
      ck_assert_msg(json_array_get_length(json_node_get_array(field)) == 1, "%s", at);
    }
  }
  assert_json_at(json, "$.ensemble.seeds.size", "2");
  assert_json_at(json, "$.ensemble.seeds.member_dirs",
                 "[\"ensemble/seed-1/\",\"ensemble/seed-2/\"]");
  g_autofree char *exact_dir = g_build_filename(out, "exact", NULL);
  g_autofree char *ref_seed = summary_at(exact_dir, "$.seed");
  for (int i = 1; i <= 2; i++) {
    g_autofree char *name = g_strdup_printf("ensemble/seed-%d", i);
    g_autofree char *dir = g_build_filename(out, name, NULL);
    g_autofree char *seed = summary_at(dir, "$.seed");
    ck_assert_str_ne(seed, ref_seed); /* a seed member runs another seed */
  }
  for (int i = 1; i <= 2; i++) {
    g_autofree char *name = g_strdup_printf("ensemble/member-%d", i);
    g_autofree char *dir = g_build_filename(out, name, NULL);
    g_autofree char *flows = wh_test_read_in(dir, "flows.csv");
    g_autofree char *digest = summary_at(dir, "$.config_digest");
    g_autofree char *exact = g_build_filename(out, "exact", NULL);
    g_autofree char *ref = summary_at(exact, "$.config_digest");
    ck_assert_str_ne(digest, ref); /* a member is the exact run perturbed */
  }
  /* the same ensemble read back (--ensemble-from) against the stored exact run: the same
   * verdicts, and only Wormhole runs */
  g_autofree char *edir = g_build_filename(out, "ensemble", NULL);
  g_autofree char *again = g_build_filename(tmp, "again", NULL);
  const char *reuse[] = {
      "compare", scenario,          "--out", again,     "--ensemble", "3", "--ensemble-seeds",
      "2",       "--ensemble-from", edir,    "--exact", exact_dir,    NULL};
  g_autofree char *reuse_err = NULL;
  ck_assert_msg(wh_test_whsim(reuse, NULL, &reuse_err) == 0, "%s", reuse_err);
  g_autofree char *json2 = wh_test_read_in(again, "compare.json");
  g_autofree char *metrics1 = wh_test_json_at(json, "$.ensemble.metrics");
  g_autofree char *metrics2 = wh_test_json_at(json2, "$.ensemble.metrics");
  ck_assert_str_eq(metrics1, metrics2);
  g_autofree char *seeds1 = wh_test_json_at(json, "$.ensemble.seeds.metrics");
  g_autofree char *seeds2 = wh_test_json_at(json2, "$.ensemble.seeds.metrics");
  ck_assert_str_eq(seeds1, seeds2);
  g_autofree char *from = json_string_at(json2, "$.ensemble.members_from");
  ck_assert_str_eq(from, edir);
  g_autofree char *again_ens = g_build_filename(again, "ensemble", NULL);
  ck_assert(!g_file_test(again_ens, G_FILE_TEST_EXISTS));
  /* refused, naming the member's file: a member missing, another configuration */
  const char *missing[] = {"compare", scenario,          "--out", again, "--ensemble",
                           "4",       "--ensemble-from", edir,    NULL};
  g_autofree char *missing_err = NULL;
  ck_assert_int_eq(wh_test_whsim(missing, NULL, &missing_err), 2);
  ck_assert_msg(strstr(missing_err, "member-3/summary.json"), "%s", missing_err);
  const char *other[] = {"compare", scenario,          "--out", again,   "--ensemble",
                         "3",       "--ensemble-from", edir,    "--set", "wh::Link::Delay=2us",
                         NULL};
  g_autofree char *other_err = NULL;
  ck_assert_int_eq(wh_test_whsim(other, NULL, &other_err), 2);
  ck_assert_msg(strstr(other_err, "member-1/summary.json") && strstr(other_err, "config_digest"),
                "%s", other_err);
  wh_test_remove_tree(tmp);
}
END_TEST

START_TEST(test_compare_ensemble_refused)
{
  g_autofree char *scenario = wh_test_source_path("scenarios/dumbbell-dcqcn.xml");
  g_autofree char *tmp = g_dir_make_tmp("whsim-compare-XXXXXX", NULL);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  static const char *const bad[][2] = {
      {"--ensemble", "1"}, {"--ensemble", "1000"},    {"--ensemble", "65"},    {"--ensemble", "x"},
      {"--jobs", "2"},     {"--ensemble-seeds", "1"}, {"--ensemble-from", "."}};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    const char *args[] = {"compare", scenario, "--out", out, bad[i][0], bad[i][1], NULL};
    g_autofree char *err = NULL;
    ck_assert_int_eq(wh_test_whsim(args, NULL, &err), 2);
    ck_assert_msg(strstr(err, bad[i][0]) != NULL, "%s", err);
  }
  const char *zero[] = {"compare", scenario, "--out", out, "--ensemble", "2", "-j", "0", NULL};
  g_autofree char *zero_err = NULL;
  ck_assert_int_eq(wh_test_whsim(zero, NULL, &zero_err), 2);
  ck_assert_ptr_nonnull(strstr(zero_err, "--jobs 0"));
  const char *many[] = {"compare", scenario,           "--out", out, "--ensemble",
                        "2",       "--ensemble-seeds", "65",    NULL};
  g_autofree char *many_err = NULL;
  ck_assert_int_eq(wh_test_whsim(many, NULL, &many_err), 2);
  ck_assert_ptr_nonnull(strstr(many_err, "--ensemble-seeds 65"));
  wh_test_remove_tree(tmp);
}
END_TEST

START_TEST(test_compare_member_fails)
{
  /* a member that fails (here a stand-in for whsim that exits 3) fails the comparison
   * with its status and message */
  g_autofree char *tmp = g_dir_make_tmp("whsim-compare-XXXXXX", NULL);
  g_autofree char *fake = g_build_filename(tmp, "fake-whsim", NULL);
  ck_assert(g_file_set_contents(fake, "#!/bin/sh\necho 'member broke' >&2\nexit 3\n", -1, NULL));
  ck_assert_int_eq(g_chmod(fake, 0755), 0);
  g_autofree char *path = wh_test_source_path("scenarios/dumbbell-dcqcn.xml");
  g_autoptr(GError) err = NULL;
  g_autoptr(WhScenario) sc = wh_scenario_load(path, &err);
  ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  g_autoptr(WhCompare) c = wh_compare_new(sc, NULL, out, NULL, &err);
  ck_assert_msg(c != NULL, "%s", err ? err->message : "");
  WhCompareEnsemble bad = {.size = 1, .jobs = 1, .whsim = fake};
  ck_assert(!wh_compare_set_ensemble(c, &bad, &err));
  ck_assert(g_error_matches(err, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE));
  g_clear_error(&err);
  WhCompareEnsemble ens = {.size = 3, .jobs = 2, .whsim = fake};
  ck_assert(wh_compare_set_ensemble(c, &ens, &err));
  ck_assert(!wh_compare_execute(c, &err));
  ck_assert_msg(strstr(err->message, "ensemble member 1") &&
                    strstr(err->message, "exit status 3") && strstr(err->message, "member broke"),
                "%s", err->message);
  wh_test_remove_tree(tmp);
}
END_TEST

/* Sets the flag at `data` after 0.3 s. */
static gpointer raise_flag(gpointer data)
{
  g_usleep(300000);
  *(volatile sig_atomic_t *)data = 1;
  return NULL;
}

START_TEST(test_runner)
{
  /* at most `parallel` children at once, each one's status and stderr */
  char *sleep_argv[] = {"sleep", "0.3", NULL};
  char *fail_argv[] = {"sh", "-c", "echo out; echo boom >&2; exit 3", NULL};
  char *kill_argv[] = {"sh", "-c", "kill -9 $$", NULL};
  WhRunnerJob jobs[6] = {{sleep_argv}, {sleep_argv}, {fail_argv},
                         {sleep_argv}, {sleep_argv}, {kill_argv}};
  guint peak = 0;
  g_autoptr(GError) err = NULL;
  gint64 t0 = g_get_monotonic_time();
  ck_assert(wh_runner_run(jobs, 6, 2, NULL, &peak, &err));
  double took = (double)(g_get_monotonic_time() - t0) * 1e-6;
  ck_assert_uint_eq(peak, 2);
  ck_assert_msg(took >= 0.55, "four sleeps of 0.3 s two at a time took %.3f s", took);
  for (int i = 0; i < 6; i++)
    ck_assert(jobs[i].done);
  ck_assert_int_eq(jobs[0].exit_status, 0);
  ck_assert_int_eq(jobs[2].exit_status, 3);
  ck_assert_str_eq(jobs[2].log, "boom\n");
  ck_assert_int_eq(jobs[5].exit_status, -1);
  ck_assert_int_eq(jobs[5].term_signal, 9);
  g_autofree char *status = wh_runner_job_status_text(&jobs[5]);
  ck_assert_str_eq(status, "killed by signal 9");
  for (int i = 0; i < 6; i++)
    wh_runner_job_clear(&jobs[i]);
  /* a program that does not exist */
  char *missing_argv[] = {"/nonexistent/whsim", NULL};
  WhRunnerJob missing = {missing_argv};
  ck_assert(!wh_runner_run(&missing, 1, 1, NULL, NULL, &err));
  ck_assert(g_error_matches(err, WH_RUNNER_ERROR, WH_RUNNER_ERROR_SPAWN));
  g_clear_error(&err);
  /* an interrupt: the running children are stopped, nothing more starts */
  volatile sig_atomic_t flag = 0;
  char *long_argv[] = {"sleep", "30", NULL};
  WhRunnerJob three[3] = {{long_argv}, {long_argv}, {long_argv}};
  t0 = g_get_monotonic_time();
  GThread *t = g_thread_new("interrupt", raise_flag, (gpointer)&flag);
  ck_assert(!wh_runner_run(three, 3, 2, &flag, NULL, &err));
  g_thread_join(t);
  ck_assert(g_error_matches(err, WH_RUNNER_ERROR, WH_RUNNER_ERROR_INTERRUPTED));
  ck_assert(three[0].done && three[1].done && !three[2].done);
  ck_assert_int_eq(three[0].term_signal, SIGTERM);
  ck_assert((g_get_monotonic_time() - t0) < 10 * G_USEC_PER_SEC);
  for (int i = 0; i < 3; i++)
    wh_runner_job_clear(&three[i]);
}
END_TEST

Suite *wh_compare_suite(void)
{
  Suite *s = suite_create("compare");
  TCase *match = tcase_create("match");
  tcase_add_test(match, test_match_by_key);
  tcase_add_test(match, test_p99_nearest_rank);
  suite_add_tcase(s, match);
  TCase *cli = tcase_create("whsim-compare");
  tcase_set_timeout(cli, 60);
  tcase_add_test(cli, test_compare_observe_workload);
  tcase_add_test(cli, test_compare_skip_counts);
  tcase_add_test(cli, test_compare_stop_time);
  tcase_add_test(cli, test_compare_stored_flows);
  tcase_add_test(cli, test_compare_stored_workload);
  tcase_add_test(cli, test_compare_stored_refused);
  suite_add_tcase(s, cli);
  TCase *strings = tcase_create("json-strings");
  tcase_set_timeout(strings, 60);
  tcase_add_test(strings, test_json_strings);
  suite_add_tcase(s, strings);
  TCase *ens = tcase_create("ensemble");
  tcase_set_timeout(ens, 120);
  tcase_add_test(ens, test_runner);
  tcase_add_test(ens, test_delay_jitter);
  tcase_add_test(ens, test_compare_ensemble);
  tcase_add_test(ens, test_compare_ensemble_refused);
  tcase_add_test(ens, test_compare_member_fails);
  suite_add_tcase(s, ens);
  return s;
}
