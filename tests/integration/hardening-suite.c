/* The hardening suite: limits and refusals of the whsim command line, each a
 * regression test for a way a run could hang, overflow, leak a file's content, grow
 * without bound or leave stale outputs. Every case runs the whsim binary on a small
 * scenario written to a temporary directory. */
#include <check.h>
#include <math.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "congestion-control.h"
#include "registry.h"
#include "simai-import.h"
#include "hardening-util.h"
#include "test-util.h"
#include "units.h"

/* Writes `text` as w.txt beside the scenario, a Star of 16 hosts with
 * <workload simai="w.txt" EXTRA/>. */
static void simai_case_files(WhCase *c, const char *text, const char *extra)
{
  g_autofree char *wl = g_build_filename(c->dir, "w.txt", NULL);
  ck_assert(g_file_set_contents(wl, text, -1, NULL));
  g_autofree char *xml =
      g_strdup_printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<scenario name=\"g\">\n"
                      "  <topology type=\"wh::Star\"><param name=\"Hosts\" value=\"16\"/>"
                      "</topology>\n  <workload simai=\"w.txt\" %s/>\n</scenario>\n",
                      extra);
  ck_assert(g_file_set_contents(c->scenario, xml, -1, NULL));
}

/* ---- 1: a frame larger than a buffer ---- */

START_TEST(test_buffer_smaller_than_frame_refused)
{
  static const char *const sets[] = {
      "  <set param=\"wh::Switch::BufferSize\" value=\"1KB\"/>\n",
      "  <set param=\"wh::RdmaFlow::Mtu\" value=\"2MB\"/>\n"
      "  <set param=\"wh::Switch::BufferSize\" value=\"1MB\"/>\n",
      "  <set param=\"wh::Switch::PfcXoff\" value=\"1000B\"/>\n"
      "  <set param=\"wh::Switch::PfcXon\" value=\"0B\"/>\n",
  };
  static const char *const param[] = {"BufferSize", "BufferSize", "PfcXoff"};
  for (size_t i = 0; i < G_N_ELEMENTS(sets); i++) {
    g_autofree char *xml = wh_case_dumbbell_xml(sets[i], "size=\"10KB\"");
    g_autoptr(WhCase) c = wh_case_new(xml);
    ck_assert_int_eq(wh_case_whsim(c, "validate", NULL), 2);
    wh_case_assert_err_has(c, "scenario.xml:");
    wh_case_assert_err_has(c, param[i]);
    wh_case_assert_err_has(c, "one data frame");
    ck_assert_int_eq(wh_case_whsim(c, "run", NULL), 2);
    ck_assert(!g_file_test(c->out_dir, G_FILE_TEST_EXISTS));
  }
}
END_TEST

/* A flow that never sees progress (a 100 ms wire under a 10 us RTO) gives up after
 * MaxRetries rewinds: exit 1, the flow named, the outputs written. */
START_TEST(test_retry_limit_ends_run)
{
  g_autofree char *xml =
      wh_case_dumbbell_xml("  <set param=\"wh::Link::Delay\" value=\"100ms\"/>\n"
                           "  <set param=\"wh::RdmaFlow::Rto\" value=\"10us\"/>\n"
                           "  <set param=\"wh::RdmaFlow::MaxRetries\" value=\"5\"/>\n",
                           "id=\"stuck\" size=\"4KB\"");
  g_autoptr(WhCase) c = wh_case_new(xml);
  ck_assert_int_eq(wh_case_whsim(c, "run", NULL), 1);
  wh_case_assert_err_has(c, "flow stuck");
  wh_case_assert_err_has(c, "5 ");
  wh_case_assert_err_has(c, "MaxRetries");
  wh_case_assert_summary_has(c, "\"stopped_early\" : \"retry limit\"");
}
END_TEST

/* ---- 2: time overflow ---- */

START_TEST(test_times_beyond_horizon_refused)
{
  static const char *const cases[][2] = {
      {"", "size=\"10KB\" start=\"18446744s\""},
      {"", "size=\"10KB\" start=\"1000001s\""},
      {"  <set param=\"wh::Link::Delay\" value=\"10000000s\"/>\n", "size=\"10KB\""},
      {"  <set param=\"wh::RdmaFlow::Rto\" value=\"2000000s\"/>\n", "size=\"10KB\""},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *xml = wh_case_dumbbell_xml(cases[i][0], cases[i][1]);
    g_autoptr(WhCase) c = wh_case_new(xml);
    ck_assert_msg(wh_case_whsim(c, "run", "--wall-limit", "20", NULL) == 2, "case %zu: exit %d: %s",
                  i, c->status, c->err);
    wh_case_assert_err_has(c, "scenario.xml:");
    wh_case_assert_err_has(c, "time horizon of 1000000 s");
  }
}
END_TEST

/* A SimAI time beyond the horizon is refused when the file is read. */
START_TEST(test_simai_time_beyond_horizon_refused)
{
  g_autoptr(WhCase) c = wh_case_new(NULL);
  simai_case_files(c,
                   "DATA all_gpus: 4\n1\n"
                   "a -1 1000000000000001 NONE 0 1000 NONE 0 1000 ALLREDUCE 4096 0\n",
                   "");
  ck_assert_int_eq(wh_case_whsim(c, "validate", NULL), 2);
  wh_case_assert_err_has(c, "w.txt:3: field 3");
  wh_case_assert_err_has(c, "at most 1000000000000000");
}
END_TEST

/* Each time is inside the horizon but their sum is not: the run stops with exit 1. */
START_TEST(test_sum_beyond_horizon_stops_run)
{
  g_autofree char *xml = wh_case_dumbbell_xml("  <set param=\"wh::Link::Delay\" value=\"2s\"/>\n",
                                              "size=\"10KB\" start=\"999999s\"");
  g_autoptr(WhCase) c = wh_case_new(xml);
  ck_assert_int_eq(wh_case_whsim(c, "run", "--wall-limit", "20", NULL), 1);
  wh_case_assert_err_has(c, "past the time horizon of 1000000 s");
  wh_case_assert_summary_has(c, "\"stopped_early\" : \"time horizon\"");
}
END_TEST

/* ---- 3 and 4: referenced files and reads ---- */

static char *simai_xml(const char *path)
{
  return g_strdup_printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<scenario name=\"simai\">\n"
                         "  <topology type=\"wh::Star\"><param name=\"Hosts\" value=\"16\"/>"
                         "</topology>\n  <workload simai=\"%s\"/>\n</scenario>\n",
                         path);
}

/* A SimAI file outside the scenario's directory tree is refused without reading it:
 * an absolute path, a relative path that climbs out, a symbolic link that points out.
 * With --data-dir naming its directory the same file loads. */
START_TEST(test_referenced_file_confined)
{
  g_autoptr(WhCase) c = wh_case_new(NULL);
  g_autofree char *good = wh_test_source_path("scenarios/workloads/gpt-tp8-dp2-16gpu.txt");
  g_autofree char *good_dir = g_path_get_dirname(good);
  g_autofree char *secret = g_build_filename(c->dir, "secret.txt", NULL);
  ck_assert(g_file_set_contents(secret, "TOPSECRET-LINE\n", -1, NULL));
  g_autofree char *sub = g_build_filename(c->dir, "sub", NULL);
  ck_assert_int_eq(g_mkdir(sub, 0755), 0);
  g_free(c->scenario);
  c->scenario = g_build_filename(sub, "scenario.xml", NULL);
  g_autofree char *link = g_build_filename(sub, "link.txt", NULL);
  ck_assert_int_eq(symlink(secret, link), 0);
  const char *paths[] = {"/etc/passwd", secret, "../secret.txt", "link.txt", good};
  for (size_t i = 0; i < G_N_ELEMENTS(paths); i++) {
    g_autofree char *xml = simai_xml(paths[i]);
    ck_assert(g_file_set_contents(c->scenario, xml, -1, NULL));
    ck_assert_msg(wh_case_whsim(c, "validate", NULL) == 2, "%s: exit %d", paths[i], c->status);
    wh_case_assert_err_has(c, "outside");
    wh_case_assert_err_has(c, "--data-dir");
    ck_assert_msg(strstr(c->err, "TOPSECRET") == NULL && strstr(c->err, "root:") == NULL,
                  "content leaked: %s", c->err);
  }
  ck_assert_int_eq(wh_case_whsim(c, "validate", "--data-dir", good_dir, NULL), 0);
}
END_TEST

/* A bad value is quoted by a short, printable prefix only. */
START_TEST(test_bad_value_quoted_short)
{
  g_autoptr(GString) value = g_string_new("\x01secret");
  for (int i = 0; i < 500; i++)
    g_string_append(value, "y");
  g_autofree char *set = g_strdup_printf(
      "  <set param=\"wh::Link::Rate\" value=\"%s\"/>\n  <set param=\"wh::Link::Delay\" "
      "value=\"%s\"/>\n",
      value->str + 1, value->str + 1);
  g_autofree char *xml = wh_case_dumbbell_xml(set, "size=\"1KB\"");
  g_autoptr(WhCase) c = wh_case_new(xml);
  ck_assert_int_eq(wh_case_whsim(c, "validate", NULL), 2);
  wh_case_assert_err_has(c, "\"secretyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\"...");
  ck_assert_msg(strlen(c->err) < 300, "%zu bytes: %s", strlen(c->err), c->err);
  g_autofree char *q = wh_units_quote(value->str);
  ck_assert_str_eq(q, "\"\\x01secretyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\"...");
}
END_TEST

/* A FIFO, a directory and a file above the size cap are refused at once. */
START_TEST(test_non_regular_and_huge_inputs_refused)
{
  g_autoptr(WhCase) c = wh_case_new(NULL);
  g_autofree char *fifo = g_build_filename(c->dir, "fifo.txt", NULL);
  g_autofree char *huge = g_build_filename(c->dir, "huge.txt", NULL);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  ck_assert(g_file_set_contents(huge, "1\n", -1, NULL));
  ck_assert_int_eq(truncate(huge, (off_t)300 << 20), 0); /* sparse: costs no disk */
  const char *names[] = {"fifo.txt", "huge.txt", "."};
  const char *why[] = {"not a regular file", "larger than the 256 MiB", "not a regular file"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    g_autofree char *xml = simai_xml(names[i]);
    ck_assert(g_file_set_contents(c->scenario, xml, -1, NULL));
    ck_assert_msg(wh_case_whsim(c, "run", NULL) == 2, "%s: exit %d", names[i], c->status);
    wh_case_assert_err_has(c, why[i]);
  }
  const char *fifo_args[] = {"validate", fifo, NULL};
  const char *huge_args[] = {"validate", huge, NULL};
  g_autofree char *err1 = NULL, *err2 = NULL;
  ck_assert_int_eq(wh_test_whsim(fifo_args, NULL, &err1), 2);
  ck_assert_ptr_nonnull(strstr(err1, "not a regular file"));
  ck_assert_int_eq(wh_test_whsim(huge_args, NULL, &err2), 2);
  ck_assert_ptr_nonnull(strstr(err2, "larger than"));
}
END_TEST

/* /dev/zero as the scenario and as the workload: refused before any read. */
START_TEST(test_device_inputs_refused)
{
  const char *args[] = {"run", "/dev/zero", "--out", "/nonexistent-dir/out", NULL};
  g_autofree char *err = NULL;
  ck_assert_int_eq(wh_test_whsim(args, NULL, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "not a regular file"));
  g_autofree char *xml = simai_xml("/dev/zero");
  g_autoptr(WhCase) c = wh_case_new(xml);
  ck_assert_int_eq(wh_case_whsim(c, "run", "--data-dir", "/dev", NULL), 2);
  wh_case_assert_err_has(c, "not a regular file");
}
END_TEST

/* ---- 5: memory budget ---- */

/* A fat-tree inside the parameter bounds (33.5 M hosts) is refused from its
 * parameters, before anything is allocated, with the estimate and the budget. */
START_TEST(test_network_over_budget_refused)
{
  g_autoptr(WhCase) c =
      wh_case_new("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<scenario name=\"big\">\n"
                  "  <topology type=\"wh::FatTree\"><param name=\"K\" value=\"128\"/>"
                  "<param name=\"Oversubscription\" value=\"64\"/></topology>\n"
                  "  <flows><flow src=\"0\" dst=\"1\" size=\"1KB\"/></flows>\n</scenario>\n");
  ck_assert_int_eq(wh_case_whsim(c, "validate", NULL), 2);
  wh_case_assert_err_has(c, "scenario.xml:3:");
  wh_case_assert_err_has(c, "33554432 hosts");
  wh_case_assert_err_has(c, "GB; the memory budget is");
  ck_assert_int_eq(wh_case_whsim(c, "run", "--max-memory", "100GB", NULL), 2);
  wh_case_assert_err_has(c, "memory budget is 100.0 GB");
  /* a small network under a tiny budget: the budget is what refuses it */
  g_autofree char *xml = wh_case_dumbbell_xml("", "size=\"10KB\"");
  ck_assert(g_file_set_contents(c->scenario, xml, -1, NULL));
  ck_assert_int_eq(wh_case_whsim(c, "run", "--max-memory", "1KB", NULL), 2);
  wh_case_assert_err_has(c, "--max-memory");
  ck_assert_int_eq(wh_case_whsim(c, "run", "--max-memory", "0B", NULL), 2);
  ck_assert_int_eq(wh_case_whsim(c, "run", "--max-memory", "64MB", "-q", NULL), 0);
}
END_TEST

/* A SimAI file whose ops would not fit is refused after parsing, before any op is
 * made: the estimate (ops and bytes) and the budget are named. */
START_TEST(test_workload_over_budget_refused)
{
  g_autoptr(GString) txt = g_string_new("DATA all_gpus: 8\n20000\n");
  for (int i = 0; i < 20000; i++)
    g_string_append_printf(txt, "l%d -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 1048576 10\n", i);
  g_autofree char *xml = simai_xml("big.txt");
  g_autoptr(WhCase) c = wh_case_new(xml);
  g_autofree char *wl = g_build_filename(c->dir, "big.txt", NULL);
  ck_assert(g_file_set_contents(wl, txt->str, -1, NULL));
  ck_assert_int_eq(wh_case_whsim(c, "run", "--max-memory", "20MB", NULL), 2);
  wh_case_assert_err_has(c, "big.txt: 20000 layers on 8 GPUs make about 659992 ops");
  wh_case_assert_err_has(c, "(--max-memory)");
}
END_TEST

/* Model presets and native workloads are sized before they are built too. */
START_TEST(test_preset_and_native_workloads_over_budget_refused)
{
  g_autofree char *preset = wh_test_source_path("scenarios/presets/gpt-175b-dcqcn.xml");
  g_autofree char *native = wh_test_source_path("scenarios/workload-dp-pp.xml");
  const char *args1[] = {"run", preset, "--iterations", "100000", "--max-memory", "8GB", NULL};
  const char *args2[] = {"run", native, "--iterations", "100000", "--max-memory", "50MB", NULL};
  g_autofree char *err1 = NULL, *err2 = NULL;
  ck_assert_int_eq(wh_test_whsim(args1, NULL, &err1), 2);
  ck_assert_msg(strstr(err1, "<workload model>: 3078400000 ops (100000 iterations) need about") !=
                    NULL,
                "%s", err1);
  ck_assert_int_eq(wh_test_whsim(args2, NULL, &err2), 2);
  ck_assert_msg(strstr(err2, "<workload>: 1500000 ops (100000 iterations)") != NULL, "%s", err2);
  ck_assert_msg(strstr(err2, "(--max-memory)") != NULL, "%s", err2);
}
END_TEST

/* ---- 6: outputs ---- */

/* Counts the entries of `dir`. */
static int count_entries(const char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  int n = 0;
  while (d && g_dir_read_name(d))
    n++;
  return n;
}

START_TEST(test_out_not_a_directory_refused_before_run)
{
  g_autofree char *xml = wh_case_dumbbell_xml("", "size=\"10KB\"");
  g_autoptr(WhCase) c = wh_case_new(xml);
  ck_assert(g_file_set_contents(c->out_dir, "mine\n", -1, NULL));
  ck_assert_int_eq(wh_case_whsim(c, "run", "--out", c->out_dir, NULL), 2);
  wh_case_assert_err_has(c, c->out_dir);
  wh_case_assert_err_has(c, "not a directory");
  ck_assert_msg(c->out[0] == '\0', "the run went ahead: %s", c->out);
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(c->out_dir, &text, NULL, NULL));
  ck_assert_str_eq(text, "mine\n");
  ck_assert_int_eq(wh_case_whsim(c, "run", "--out", "", NULL), 2);
  wh_case_assert_err_has(c, "empty");
}
END_TEST

/* A second run without --sample-period removes the first run's rates.csv and
 * queues.csv, and leaves every file whsim does not write alone. */
START_TEST(test_stale_outputs_removed)
{
  g_autofree char *xml = wh_case_dumbbell_xml("", "size=\"10KB\"");
  g_autoptr(WhCase) c = wh_case_new(xml);
  ck_assert_int_eq(wh_case_whsim(c, "run", "--sample-period", "1us", "-q", NULL), 0);
  g_autofree char *rates = g_build_filename(c->out_dir, "rates.csv", NULL);
  g_autofree char *queues = g_build_filename(c->out_dir, "queues.csv", NULL);
  g_autofree char *notes = g_build_filename(c->out_dir, "notes.txt", NULL);
  g_autofree char *other = g_build_filename(c->out_dir, "rates.csv.bak", NULL);
  ck_assert(g_file_test(rates, G_FILE_TEST_IS_REGULAR));
  ck_assert(g_file_set_contents(notes, "keep\n", -1, NULL));
  ck_assert(g_file_set_contents(other, "keep\n", -1, NULL));
  ck_assert_int_eq(count_entries(c->out_dir), 7);
  ck_assert_int_eq(wh_case_whsim(c, "run", "-q", NULL), 0);
  ck_assert_msg(!g_file_test(rates, G_FILE_TEST_EXISTS), "rates.csv of the earlier run is left");
  ck_assert(!g_file_test(queues, G_FILE_TEST_EXISTS));
  ck_assert(g_file_test(notes, G_FILE_TEST_IS_REGULAR));
  ck_assert(g_file_test(other, G_FILE_TEST_IS_REGULAR));
  /* summary.json, flows.csv, links.csv and the two files of the user; no staging
   * directory */
  ck_assert_int_eq(count_entries(c->out_dir), 5);
}
END_TEST

/* ---- 7: command line ---- */

START_TEST(test_cli_bad_numbers_refused)
{
  static const char *const bad[][2] = {
      {"--wall-limit", "nan"}, {"--wall-limit", "inf"}, {"--wall-limit", "0"},
      {"--wall-limit", "-1"},  {"--wall-limit", "1s"},  {"--iterations", "0"},
      {"--iterations", "-3"},  {"--iterations", "1e3"}, {"--iterations", "100001"},
  };
  g_autofree char *xml = wh_case_dumbbell_xml("", "size=\"10KB\"");
  g_autoptr(WhCase) c = wh_case_new(xml);
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    ck_assert_msg(wh_case_whsim(c, "run", bad[i][0], bad[i][1], NULL) == 2, "%s %s: exit %d",
                  bad[i][0], bad[i][1], c->status);
    wh_case_assert_err_has(c, bad[i][0]);
    ck_assert(!g_file_test(c->out_dir, G_FILE_TEST_EXISTS));
  }
  ck_assert_int_eq(wh_case_whsim(c, "run", "--wall-limit", "30", "--iterations", "2", "-q", NULL),
                   0);
}
END_TEST

/* `whsim --help` names every option `whsim run --help` does. */
START_TEST(test_top_level_help_lists_run_options)
{
  const char *top_args[] = {"--help", NULL};
  const char *run_args[] = {"run", "--help", NULL};
  g_autofree char *top = NULL, *run = NULL;
  ck_assert_int_eq(wh_test_whsim(top_args, &top, NULL), 0);
  ck_assert_int_eq(wh_test_whsim(run_args, &run, NULL), 0);
  g_auto(GStrv) words = g_strsplit_set(run, " \n=,", -1);
  int n = 0;
  for (char **w = words; *w; w++) {
    if (!g_str_has_prefix(*w, "--") || strlen(*w) < 3)
      continue;
    n++;
    ck_assert_msg(strstr(top, *w) != NULL, "whsim --help lacks %s", *w);
  }
  ck_assert_int_ge(n, 14);
}
END_TEST

/* ---- 9: sizes written as integral floats ---- */

static const char float_sizes[] =
    "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 2 vpp: 1 ga: 1 all_gpus: 8 "
    "checkpoints: 0 checkpoint_initiates: 0 pp_comm: 8388608.0\n"
    "2\n"
    "attn -1 1000 ALLREDUCE 4194304.0 1000 ALLREDUCE 4194304.00 1000 ALLREDUCE 2097152.0 10\n"
    "mlp -1 1000 ALLREDUCE 4194304 1000 NONE 0.0 1000 ALLREDUCE 2097152 10\n";

START_TEST(test_simai_integral_float_sizes)
{
  g_autoptr(GError) err = NULL;
  WhSimaiStats st_float, st_int;
  WhSimaiOptions opts = {.keep_tp = TRUE, .stats = &st_float};
  g_autoptr(WhSimaiPlan) plan =
      wh_simai_plan_parse(float_sizes, strlen(float_sizes), "f.txt", 8, &opts, &err);
  ck_assert_msg(plan != NULL, "%s", err ? err->message : "");
  g_autofree char *ints = g_strdup(float_sizes);
  for (char *p; (p = strstr(ints, ".0")) != NULL;) {
    size_t zeros = strspn(p + 1, "0");
    memmove(p, p + 1 + zeros, strlen(p + 1 + zeros) + 1);
  }
  opts.stats = &st_int;
  g_autoptr(WhSimaiPlan) plan2 = wh_simai_plan_parse(ints, strlen(ints), "i.txt", 8, &opts, &err);
  ck_assert_msg(plan2 != NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(wh_simai_plan_n_ops(plan), wh_simai_plan_n_ops(plan2));
  ck_assert_uint_eq(st_float.n_collectives, st_int.n_collectives);
  for (guint i = 0; i < wh_simai_plan_n_ops(plan); i++) {
    WhSimaiOp a, b;
    wh_simai_plan_op(plan, i, &a);
    wh_simai_plan_op(plan2, i, &b);
    ck_assert_uint_eq(a.bytes, b.bytes);
  }
  /* a fraction, an exponent or a float compute time stay refused */
  static const char *const bad[][2] = {{"4194304.0 1000 ALLREDUCE 4194304.00", "4194304.5 1000 "
                                                                               "ALLREDUCE 4194304"},
                                       {"pp_comm: 8388608.0", "pp_comm: 8.388608e6"},
                                       {"attn -1 1000 ", "attn -1 1000.0 "}};
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_auto(GStrv) parts = g_strsplit(float_sizes, bad[i][0], 2);
    g_autofree char *text = g_strjoin(bad[i][1], parts[0], parts[1], NULL);
    g_clear_error(&err);
    g_autoptr(WhSimaiPlan) p = wh_simai_plan_parse(text, strlen(text), "b.txt", 8, &opts, &err);
    ck_assert_msg(p == NULL, "case %zu accepted", i);
    ck_assert_msg(strstr(err->message, "is not a number") != NULL, "%s", err->message);
  }
}
END_TEST

/* ---- 11: the GPU count of a SimAI job ---- */

START_TEST(test_simai_gpus_attribute)
{
  static const char data_file[] = "DATA\n1\nfc -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 65536 0\n";
  static const char micro_file[] =
      "MICRO\n1\nfc -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 65536 0\n";
  static const char hybrid_file[] =
      "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 checkpoints: 0 "
      "checkpoint_initiates: 0\n1\n"
      "attn -1 1000 ALLREDUCE 4096 1000 NONE 0 1000 ALLREDUCE 65536 0\n";
  g_autoptr(WhCase) c = wh_case_new(NULL);
  /* the count from the scenario, for a file without all_gpus: */
  simai_case_files(c, data_file, "gpus=\"8\"");
  ck_assert_int_eq(wh_case_whsim(c, "run", "-q", NULL), 0);
  ck_assert_msg(strstr(c->err, "warning") == NULL, "%s", c->err);
  wh_case_assert_summary_has(c, "\"ranks\" : 8,");
  simai_case_files(c, hybrid_file, "gpus=\"4\"");
  ck_assert_int_eq(wh_case_whsim(c, "run", "-q", NULL), 0);
  wh_case_assert_summary_has(c, "\"ranks\" : 4,");
  /* no count anywhere: every host, said on stderr and in summary.json */
  simai_case_files(c, micro_file, "");
  ck_assert_int_eq(wh_case_whsim(c, "run", "-q", NULL), 0);
  wh_case_assert_err_has(c, "warning");
  wh_case_assert_err_has(c, "all 16 hosts");
  wh_case_assert_summary_has(c, "\"gpus_from_hosts\" : true");
  /* disagreements and impossible counts are refused */
  g_autofree char *with_all = g_strdup_printf("DATA all_gpus: 8\n%s", data_file + 5);
  const struct {
    const char *file, *attr, *expect;
  } refused[] = {
      {with_all, "gpus=\"16\"", "8 GPUs, but the scenario gives gpus=\"16\""},
      {data_file, "gpus=\"32\"", "only 16 ranks"},
      {hybrid_file, "gpus=\"5\"", "not a multiple"},
      {hybrid_file, "", "gpus="},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(refused); i++) {
    simai_case_files(c, refused[i].file, refused[i].attr);
    ck_assert_int_eq(wh_case_whsim(c, "validate", NULL), 2);
    wh_case_assert_err_has(c, refused[i].expect);
  }
}
END_TEST

/* ---- 10: content the importer does not simulate is reported ---- */

START_TEST(test_simai_dropped_content_reported)
{
  g_autoptr(WhCase) c = wh_case_new(NULL);
  /* DATA issues only weight-grad comms: the forward ALLREDUCE is not issued; a
   * weight-grad comm of 0 bytes moves nothing */
  simai_case_files(c,
                   "DATA all_gpus: 4\n2\n"
                   "a -1 1000 ALLREDUCE 4096 1000 NONE 0 1000 ALLREDUCE 65536 0\n"
                   "b -1 1000 NONE 0 1000 NONE 0 1000 ALLREDUCE 0 0\n",
                   "");
  ck_assert_int_eq(wh_case_whsim(c, "run", "-q", NULL), 0);
  wh_case_assert_err_has(c, "1 comm fields per iteration are not simulated");
  wh_case_assert_err_has(c, "1 collectives per iteration move nothing");
  wh_case_assert_summary_has(c, "\"comm_fields_not_issued\" : 1,");
  wh_case_assert_summary_has(c, "\"trivial_collectives\" : 1,");
  wh_case_assert_summary_has(c, "\"header_keys\" : \"\"");
  simai_case_files(c,
                   "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 2 vpp: 2 ga: 4 "
                   "all_gpus: 8 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 1024\n1\n"
                   "attn -1 1000 ALLREDUCE 4096 1000 NONE 0 1000 ALLREDUCE 65536 0\n",
                   "");
  ck_assert_int_eq(wh_case_whsim(c, "validate", NULL), 0);
  wh_case_assert_err_has(c, "header keys not simulated (pp: 2, pp_comm: 1024, vpp: 2, ga: 4)");
}
END_TEST

/* ---- 12: broadcast ---- */

/* One collective over the 8 hosts of a star; its time and the bytes delivered. */
static WhTime run_one_collective(WhCollKind kind, uint64_t bytes, uint64_t *delivered)
{
  g_autoptr(WhScenario) sc = wh_scenario_new("coll", "wh::Star");
  wh_scenario_add_set(sc, "wh::Star::Hosts", "8");
  g_autoptr(GError) err = NULL;
  g_autoptr(WhRun) run = wh_run_new(sc, NULL, &err);
  ck_assert_msg(run != NULL, "%s", err ? err->message : "");
  WhWorkload *w = wh_workload_new(run->tp, 8);
  static const uint32_t g[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  ck_assert_int_eq(
      wh_workload_add_collective(w, "c", kind, WH_ALGO_RING, g, 8, bytes, NULL, 0, &err), 0);
  wh_workload_start(w);
  wh_sim_run(run->sim);
  ck_assert(wh_workload_done(w));
  ck_assert_msg(wh_run_check(run, &err), "%s", err ? err->message : "");
  WhOpInfo info;
  wh_workload_op_info(w, 0, &info);
  *delivered = run->tp->c.data_bytes_arrived;
  wh_workload_free(w);
  return info.end - info.start;
}

/* A pipelined broadcast moves the root's buffer to the 7 others (7 x 8 chunks of S/8)
 * in 2 (n - 1) steps of S/n, the step count of a ring all-reduce of the same size. */
START_TEST(test_broadcast_collective)
{
  const uint64_t size = 8 << 20;
  uint64_t bcast_bytes = 0, ar_bytes = 0;
  WhTime bcast = run_one_collective(WH_COLL_BROADCAST, size, &bcast_bytes);
  WhTime ar = run_one_collective(WH_COLL_ALL_REDUCE, size, &ar_bytes);
  ck_assert_uint_eq(bcast_bytes, 7 * size);
  double rel = ((double)bcast - (double)ar) / (double)ar;
  fprintf(stderr, "broadcast 8 MiB over 8: %.3f us, ring all-reduce %.3f us (%+.2f%%)\n",
          (double)bcast * 1e-6, (double)ar * 1e-6, rel * 100);
  ck_assert_msg(fabs(rel) < 0.02, "broadcast %.0f ps vs all-reduce %.0f ps", (double)bcast,
                (double)ar);
}
END_TEST

/* A SimAI BROADCAST is simulated as one: its op shows in ops.csv and moves bytes. */
START_TEST(test_simai_broadcast)
{
  g_autoptr(WhCase) c = wh_case_new(NULL);
  simai_case_files(c, "DATA all_gpus: 4\n1\nfc -1 1000 NONE 0 1000 NONE 0 1000 BROADCAST 65536 0\n",
                   "");
  ck_assert_int_eq(wh_case_whsim(c, "run", "-q", NULL), 0);
  g_autofree char *path = g_build_filename(c->out_dir, "ops.csv", NULL);
  g_autofree char *ops = NULL;
  ck_assert(g_file_get_contents(path, &ops, NULL, NULL));
  ck_assert_msg(strstr(ops, ",broadcast,") != NULL, "%s", ops);
  wh_case_assert_summary_has(c, "\"data_bytes_delivered\" : 196608,");
}
END_TEST

/* ---- 14: partial runs and traces ---- */

typedef struct {
  unsigned pid, tid;
  double ts, dur;
} TraceSpan;

static gint trace_span_cmp(gconstpointer pa, gconstpointer pb)
{
  const TraceSpan *a = pa, *b = pb;
  if (a->pid != b->pid || a->tid != b->tid)
    return a->pid != b->pid ? (a->pid < b->pid ? -1 : 1) : (a->tid < b->tid ? -1 : 1);
  return a->ts < b->ts ? -1 : a->ts > b->ts;
}

/* Two sends from rank 0 at once overlap on its communication track; the scenario stops
 * while both run. ops.csv gives their start and no end; trace.json shows them as
 * unfinished spans to the stop, on tracks where no two spans overlap. */
START_TEST(test_partial_run_and_trace_lanes)
{
  g_autoptr(WhCase) c = wh_case_new(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<scenario name=\"overlap\" stop=\"30us\">\n"
      "  <topology type=\"wh::Star\"><param name=\"Hosts\" value=\"4\"/></topology>\n"
      "  <workload>\n"
      "    <send id=\"a\" src=\"0\" dst=\"1\" size=\"1MB\"/>\n"
      "    <send id=\"b\" src=\"0\" dst=\"2\" size=\"2MB\"/>\n"
      "    <compute id=\"c\" rank=\"3\" duration=\"10us\"/>\n"
      "    <send id=\"d\" src=\"3\" dst=\"0\" size=\"100KB\" deps=\"c\"/>\n"
      "    <compute id=\"e\" rank=\"1\" duration=\"1us\" deps=\"a\"/>\n"
      "  </workload>\n</scenario>\n");
  ck_assert_int_eq(wh_case_whsim(c, "run", "-q", NULL), 0);
  g_autofree char *ops_path = g_build_filename(c->out_dir, "ops.csv", NULL);
  g_autofree char *trace_path = g_build_filename(c->out_dir, "trace.json", NULL);
  g_autofree char *ops = NULL, *trace = NULL;
  ck_assert(g_file_get_contents(ops_path, &ops, NULL, NULL));
  ck_assert(g_file_get_contents(trace_path, &trace, NULL, NULL));
  ck_assert_msg(strstr(ops, "\n0,0,send,a,0,,\n") != NULL, "%s", ops);
  ck_assert_msg(strstr(ops, "\n1,0,send,b,0,,\n") != NULL, "%s", ops);
  ck_assert_msg(strstr(ops, "\n4,1,compute,e,,,0\n") != NULL, "%s", ops); /* never started */
  g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(TraceSpan));
  int unfinished = 0;
  g_auto(GStrv) lines = g_strsplit(trace, "\n", -1);
  for (char **l = lines; *l; l++) {
    const char *x = strstr(*l, "\"ph\":\"X\"");
    if (x == NULL)
      continue;
    TraceSpan sp;
    ck_assert_int_eq(sscanf(x, "\"ph\":\"X\",\"ts\":%lf,\"dur\":%lf,\"pid\":%u,\"tid\":%u", &sp.ts,
                            &sp.dur, &sp.pid, &sp.tid),
                     4);
    g_array_append_val(spans, sp);
    unfinished += strstr(*l, "\"unfinished\":true") != NULL;
    ck_assert_msg(strstr(*l, "\"name\":\"e\"") == NULL, "an op that never ran has a span");
  }
  ck_assert_int_eq(unfinished, 4); /* a and b, on sender and receiver */
  ck_assert_uint_eq(spans->len, 2 + 2 + 1 + 2);
  g_array_sort(spans, trace_span_cmp);
  for (guint i = 1; i < spans->len; i++) {
    const TraceSpan *p = &g_array_index(spans, TraceSpan, i - 1), *q = p + 1;
    if (p->pid == q->pid && p->tid == q->tid)
      ck_assert_msg(q->ts >= p->ts + p->dur - 1e-9,
                    "rank %u thread %u: spans at %.6f and %.6f overlap", p->pid, p->tid, p->ts,
                    q->ts);
  }
}
END_TEST

/* ---- 15: validate reports a workload's size ---- */

START_TEST(test_validate_reports_workload)
{
  g_autofree char *path = wh_test_source_path("scenarios/simai-gpt-tp8-dp2.xml");
  const char *args[] = {"validate", path, NULL};
  g_autofree char *out = NULL;
  ck_assert_int_eq(wh_test_whsim(args, &out, NULL), 0);
  ck_assert_msg(strstr(out, "16 ranks, 288 ops") != NULL, "%s", out);
  ck_assert_msg(strstr(out, "all-reduce over 2 ranks") != NULL, "%s", out);
  ck_assert_msg(strstr(out, "all-to-all over 2 ranks") != NULL, "%s", out);
  ck_assert_msg(strstr(out, "MB") != NULL, "%s", out);
}
END_TEST

/* ---- 16: layering and one registration discipline ---- */

/* The include flags (-I, -D, -std) with which the build compiles `source` (a path
 * relative to the source root), from the build's compile_commands.json, and the
 * directory the command runs in. (transfer full) */
static char **compile_flags(const char *source, char **dir)
{
  g_autofree char *path = g_build_filename(WH_BUILD_ROOT, "compile_commands.json", NULL);
  g_autofree char *json = NULL;
  ck_assert_msg(g_file_get_contents(path, &json, NULL, NULL), "%s: cannot read", path);
  g_autoptr(GRegex) re = g_regex_new("\"directory\": \"((?:[^\"\\\\]|\\\\.)*)\",\\s*"
                                     "\"command\": \"((?:[^\"\\\\]|\\\\.)*)\",\\s*"
                                     "\"file\": \"((?:[^\"\\\\]|\\\\.)*)\"",
                                     0, 0, NULL);
  g_autoptr(GMatchInfo) m = NULL;
  for (g_regex_match(re, json, 0, &m); g_match_info_matches(m); g_match_info_next(m, NULL)) {
    g_autofree char *file = g_match_info_fetch(m, 3);
    if (!g_str_has_suffix(file, source))
      continue;
    g_autofree char *cmd = g_match_info_fetch(m, 2);
    g_autofree char *plain = g_strcompress(cmd);
    g_auto(GStrv) argv = NULL;
    ck_assert(g_shell_parse_argv(plain, NULL, &argv, NULL));
    g_autoptr(GPtrArray) flags = g_ptr_array_new();
    for (char **a = argv; *a; a++)
      if (g_str_has_prefix(*a, "-I") || g_str_has_prefix(*a, "-D") || g_str_has_prefix(*a, "-std"))
        g_ptr_array_add(flags, g_strdup(*a));
    g_ptr_array_add(flags, NULL);
    *dir = g_match_info_fetch(m, 1);
    return (char **)g_ptr_array_free(g_steal_pointer(&flags), FALSE);
  }
  ck_abort_msg("%s: no compile command for %s", path, source);
  return NULL;
}

/* Compiles a file holding only `#include "HEADER"` with `flags`; TRUE when it compiles. */
static gboolean header_visible(char **flags, const char *dir, const char *header, char **err)
{
  g_autofree char *tmp = g_dir_make_tmp("wh-layering-XXXXXX", NULL);
  g_autofree char *probe = g_build_filename(tmp, "probe.c", NULL);
  g_autofree char *text = g_strdup_printf("#include \"%s\"\n", header);
  ck_assert(g_file_set_contents(probe, text, -1, NULL));
  g_autoptr(GPtrArray) argv = g_ptr_array_new();
  g_ptr_array_add(argv, "cc");
  g_ptr_array_add(argv, "-fsyntax-only");
  for (char **f = flags; *f; f++)
    g_ptr_array_add(argv, *f);
  g_ptr_array_add(argv, probe);
  g_ptr_array_add(argv, NULL);
  int status = -1;
  ck_assert(g_spawn_sync(dir, (char **)argv->pdata, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL,
                         err, &status, NULL));
  g_unlink(probe);
  g_rmdir(tmp);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The layering the build enforces: a module's sources see the headers of the modules it
 * declares in its meson.build (and theirs), and no other: a header of a module above
 * (or beside) it does not compile. Each row: a source of the module, a header it may
 * include, and headers it must not reach. */
START_TEST(test_modules_see_only_declared_headers)
{
  static const struct {
    const char *source, *allowed, *banned[4];
  } rows[] = {
      {"modules/core/model/units.c", "wh-time.h", {"queue-disc.h", "network.h", "run.h"}},
      {"modules/traffic-control/model/queue-disc.c", "packet.h", {"network.h", "run.h"}},
      {"modules/network/model/network.c", "queue-disc.h", {"rdma-transport.h", "topology.h"}},
      {"modules/transport/model/rdma-transport.c",
       "network.h",
       {"topology.h", "workload.h", "wormhole.h"}},
      {"modules/topology/helper/topology.c",
       "network.h",
       {"rdma-transport.h", "workload.h", "scenario.h"}},
      {"modules/workload/model/workload.c",
       "rdma-transport.h",
       {"wormhole.h", "topology.h", "scenario.h"}},
      {"modules/wormhole/model/wormhole.c", "rdma-transport.h", {"workload.h", "scenario.h"}},
      {"modules/scenario/model/scenario.c",
       "wormhole.h",
       {"outputs.h", "compare.h", "progress.h", "piper.h"}},
      {"modules/report/helper/outputs.c", "run.h", {"piper.h", "progress.h", "interrupt.h"}},
      {"modules/piper/model/catalogue.c", "topology-preset.h", {"outputs.h", "progress.h"}},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(rows); i++) {
    g_autofree char *dir = NULL;
    g_auto(GStrv) flags = compile_flags(rows[i].source, &dir);
    g_autofree char *err = NULL;
    ck_assert_msg(header_visible(flags, dir, rows[i].allowed, &err), "%s cannot include %s: %s",
                  rows[i].source, rows[i].allowed, err);
    for (int b = 0; b < 4 && rows[i].banned[b]; b++) {
      g_clear_pointer(&err, g_free);
      ck_assert_msg(!header_visible(flags, dir, rows[i].banned[b], &err),
                    "%s sees %s, a header of a module it does not declare", rows[i].source,
                    rows[i].banned[b]);
      /* not found itself (a header found whose own includes are not is seen) */
      g_autofree char *missing = g_strdup_printf("%s: No such file", rows[i].banned[b]);
      ck_assert_msg(strstr(err, missing), "%s sees %s: %s", rows[i].source, rows[i].banned[b], err);
    }
  }
}
END_TEST

static const WhParamSpec dup_params[] = {{NULL}};
static const WhTypeInfo dup_type = {"wh::Test::Dup", "test", "a type registered twice", dup_params};
static const WhParamSpec bad_default_params[] = {
    {"Rate", WH_PARAM_RATE, "fast", "a default that does not parse"}, {NULL}};
static const WhTypeInfo bad_default_type = {"wh::Test::BadDefault", "test", "bad default",
                                            bad_default_params};

/* A duplicate type is a GError in the type registry as in the CC registry. */
START_TEST(test_duplicate_registration_is_an_error)
{
  g_autoptr(GError) err = NULL;
  ck_assert(wh_registry_register(&dup_type, &err));
  ck_assert(!wh_registry_register(&dup_type, &err));
  ck_assert(g_error_matches(err, WH_CONFIG_ERROR, WH_CONFIG_ERROR_UNKNOWN_TYPE));
  ck_assert_ptr_nonnull(strstr(err->message, "wh::Test::Dup"));
  g_clear_error(&err);
  ck_assert(!wh_registry_register(&bad_default_type, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "Rate"));
  ck_assert_ptr_null(wh_registry_lookup("wh::Test::BadDefault"));
  g_clear_error(&err);
  ck_assert(!wh_cc_register(&wh_dcqcn_cc_class, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "already registered"));
}
END_TEST

Suite *wh_hardening_suite(void)
{
  Suite *s = suite_create("hardening");
  TCase *tc = tcase_create("hangs");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_buffer_smaller_than_frame_refused);
  tcase_add_test(tc, test_retry_limit_ends_run);
  tcase_add_test(tc, test_times_beyond_horizon_refused);
  tcase_add_test(tc, test_sum_beyond_horizon_stops_run);
  tcase_add_test(tc, test_simai_time_beyond_horizon_refused);
  suite_add_tcase(s, tc);
  TCase *files = tcase_create("files");
  tcase_set_timeout(files, 60);
  tcase_add_test(files, test_referenced_file_confined);
  tcase_add_test(files, test_bad_value_quoted_short);
  tcase_add_test(files, test_non_regular_and_huge_inputs_refused);
  suite_add_tcase(s, files);
  TCase *devices = tcase_create("devices");
  tcase_set_timeout(devices, 30);
  tcase_add_test(devices, test_device_inputs_refused);
  suite_add_tcase(s, devices);
  TCase *memory = tcase_create("memory");
  tcase_set_timeout(memory, 60);
  tcase_add_test(memory, test_network_over_budget_refused);
  tcase_add_test(memory, test_workload_over_budget_refused);
  tcase_add_test(memory, test_preset_and_native_workloads_over_budget_refused);
  suite_add_tcase(s, memory);
  TCase *importer = tcase_create("importer");
  tcase_add_test(importer, test_simai_integral_float_sizes);
  tcase_add_test(importer, test_simai_gpus_attribute);
  tcase_add_test(importer, test_simai_dropped_content_reported);
  tcase_add_test(importer, test_broadcast_collective);
  tcase_add_test(importer, test_simai_broadcast);
  tcase_set_timeout(importer, 60);
  suite_add_tcase(s, importer);
  TCase *layering = tcase_create("layering");
  tcase_set_timeout(layering, 30);
  tcase_add_test(layering, test_modules_see_only_declared_headers);
  tcase_add_test(layering, test_duplicate_registration_is_an_error);
  suite_add_tcase(s, layering);
  TCase *outputs = tcase_create("outputs");
  tcase_set_timeout(outputs, 60);
  tcase_add_test(outputs, test_out_not_a_directory_refused_before_run);
  tcase_add_test(outputs, test_stale_outputs_removed);
  suite_add_tcase(s, outputs);
  TCase *cli = tcase_create("cli");
  tcase_set_timeout(cli, 60);
  tcase_add_test(cli, test_cli_bad_numbers_refused);
  tcase_add_test(cli, test_top_level_help_lists_run_options);
  tcase_add_test(cli, test_validate_reports_workload);
  tcase_add_test(cli, test_partial_run_and_trace_lanes);
  suite_add_tcase(s, cli);
  return s;
}
