/* The malformed-input suite: every file in tests/bad-inputs/ is run through the whsim
 * binary (`whsim run FILE --out DIR`) and must be refused with exit status 2, a message
 * on stderr that starts with "whsim: ", names the file, carries the expected words (the
 * attribute or parameter and the offending value, or the reason: DOCTYPE, XInclude,
 * UTF-8, empty, disconnected...) and, where one applies, the ":LINE:" of the fault, and
 * no summary.json or flows.csv may appear in the output directory. The table below is
 * the expectation for each file; a further test checks that every file in the corpus
 * is in the table, and another that a refused run leaves an existing output directory
 * byte-identical. Every validation harness (validation/NAME/run.sh) documents --check
 * in its --help and refuses an unknown argument with exit status 2. */
#include <check.h>
#include <glib/gstdio.h>
#include <string.h>

#include "test-util.h"

#define MAX_EXPECT 4

typedef struct {
  const char *file;               /* in tests/bad-inputs/ */
  const char *expect[MAX_EXPECT]; /* substrings of stderr, NULL-terminated */
  int line;                       /* expected ":LINE:", or 0 when no line applies */
} BadInput;

static const BadInput bad_inputs[] = {
    /* Not well-formed XML. */
    {"malformed-unclosed-tag.xml", {"malformed XML", "flow"}, 8},
    {"malformed-mismatched-tag.xml", {"malformed XML", "flows"}, 8},
    {"malformed-garbage-after-root.xml", {"malformed XML", "Extra content"}, 7},
    {"nesting-deep.xml", {"malformed XML", "nested too deeply"}, 6},
    {"empty.xml", {"empty"}, 0},
    {"whitespace-only.xml", {"empty"}, 0},
    /* Encodings: scenario files are UTF-8 only. */
    {"encoding-invalid-utf8.xml", {"UTF-8", "0xe9"}, 3},
    {"encoding-declared-latin1.xml", {"UTF-8", "ISO-8859-1"}, 1},
    /* Refused XML features. */
    {"security-external-entity.xml", {"DOCTYPE"}, 2},
    {"security-billion-laughs.xml", {"DOCTYPE"}, 2},
    {"security-xinclude.xml", {"XInclude"}, 3},
    /* Schema violations. */
    {"schema-unknown-element.xml", {"schema", "trafficgen"}, 6},
    {"schema-flow-missing-size.xml", {"<flow>", "required attribute", "size"}, 7},
    {"schema-topology-missing.xml", {"lacks", "<topology>"}, 2},
    /* <set> and <param>: types, parameters, units and bounds. */
    {"set-unknown-parameter.xml", {"wh::Link", "Bogus"}, 3},
    {"set-unknown-type.xml", {"unknown type", "wh::Router"}, 3},
    {"unit-rate-typo.xml", {"wh::Link::Rate", "100Gbpx", "Gbpx"}, 3},
    {"rate-zero-set.xml", {"wh::Link::Rate", "0Gbps", "greater than zero"}, 3},
    {"rate-negative-set.xml", {"wh::Link::Rate", "-5Gbps", "negative"}, 3},
    {"dcqcn-pmax-above-one.xml", {"wh::DcqcnCc::Pmax", "1.5", "at most 1"}, 3},
    {"dcqcn-kmin-above-kmax.xml", {"wh::DcqcnCc", "Kmin", "Kmax"}, 0},
    {"pfc-xon-above-xoff.xml", {"wh::Switch::PfcXon", "wh::Switch::PfcXoff"}, 0},
    {"fattree-odd-k.xml", {"wh::FatTree::K", "5", "even"}, 4},
    /* <scenario> attributes. */
    {"scenario-unknown-cc.xml", {"\"cc\"", "swift"}, 2},
    {"scenario-unknown-scheduler.xml", {"\"scheduler\"", "splay"}, 2},
    /* wh::Wormhole: bounds and choices. */
    {"wormhole-theta-one.xml", {"wh::Wormhole::Theta", "below 1"}, 3},
    {"wormhole-theta-negative.xml", {"wh::Wormhole::Theta", "-0.1", "at least 0"}, 3},
    {"wormhole-window-one.xml", {"wh::Wormhole::Window", "at least 2"}, 3},
    {"wormhole-sample-period-zero.xml", {"wh::Wormhole::SamplePeriod", "greater than zero"}, 3},
    {"wormhole-quantity-unknown.xml", {"wh::WormholeStudy::Quantity", "queue-length"}, 3},
    {"wormhole-mode-unknown.xml", {"wh::Wormhole::Mode", "turbo"}, 4},
    {"wormhole-rate-tolerance-zero.xml", {"wh::Wormhole::RateTolerance", "0"}, 4},
    /* parameters that were removed or moved: what to do instead */
    {"wormhole-exact-only-removed.xml", {"wh::Wormhole::ExactOnly", "was removed", "drop"}, 4},
    {"workload-instant-order-removed.xml",
     {"wh::Workload::InstantOrder", "was removed", "drop"},
     4},
    {"wormhole-study-moved.xml", {"wh::Wormhole::Study", "moved to wh::WormholeStudy::Study"}, 4},
    {"wormhole-line-fraction-moved.xml",
     {"wh::Wormhole::LineFraction", "wh::HpccCc::LineFraction"},
     5},
    {"wormhole-tail-margin-negative.xml", {"wh::Wormhole::TailMargin", "-5us"}, 4},
    /* Topologies. */
    {"topology-unknown-type.xml", {"\"type\"", "wh::Torus"}, 3},
    {"custom-duplicate-node-id.xml", {"duplicate node id", "\"s\""}, 6},
    {"custom-link-undeclared-node.xml", {"<link> attribute \"a\"", "h1"}, 7},
    {"rate-zero-custom-link.xml", {"\"rate\"", "0Gbps", "greater than zero"}, 7},
    {"rate-negative-custom-link.xml", {"\"rate\"", "-5Gbps", "negative"}, 8},
    {"custom-disconnected.xml", {"disconnected"}, 0},
    {"custom-host-two-links.xml", {"h1", "second link"}, 10},
    {"custom-host-to-host-link.xml", {"h1", "h2", "host"}, 6},
    {"preset-unknown.xml", {"\"preset\"", "aurora", "frontier"}, 3},
    {"preset-groups-too-many.xml", {"\"groups\"", "78", "1..77"}, 3},
    {"topology-type-and-preset.xml", {"schema", "preset"}, 3},
    {"dragonfly-ports-beyond-radix.xml", {"wh::Dragonfly::Radix", "60 endpoint"}, 4},
    {"dragonfly-valiant-two-groups.xml", {"wh::Dragonfly::Routing", "3 groups"}, 5},
    {"preset-groups-set-twice.xml", {"wh::Dragonfly::Groups", "once"}, 3},
    {"frontier-nic-delay-negative.xml", {"wh::Dragonfly::NicDelay", "-1us", "negative"}, 4},
    {"frontier-fabric-efficiency-above-one.xml",
     {"wh::Dragonfly::FabricEfficiency", "1.2", "at most 1"},
     3},
    {"placement-node-outside.xml", {"<placement>", "\"nodes\"", "999", "outside"}, 7},
    {"placement-node-twice.xml", {"<placement>", "\"nodes\"", "node 3", "twice"}, 7},
    {"placement-too-many-ranks.xml", {"<placement>", "16 ranks", "8 GCDs"}, 7},
    {"workload-alpha-negative.xml", {"wh::Workload::MessageAlpha", "-2us", "negative"}, 3},
    /* Flows. */
    {"flow-size-zero.xml", {"\"size\"", "0B", "greater than zero"}, 7},
    {"unit-size-unknown-suffix.xml", {"\"size\"", "10XB", "XB"}, 7},
    {"unit-time-missing.xml", {"\"start\"", "\"100\"", "unit"}, 7},
    {"sample-period-zero.xml", {"\"sample-period\"", "greater than zero"}, 2},
    /* Workloads. */
    {"workload-unknown-dep.xml", {"\"deps\"", "later", "defined before"}, 6},
    {"workload-rank-beyond-hosts.xml", {"rank 7", "4 hosts"}, 4},
    {"workload-bad-kind.xml", {"\"kind\"", "broadcast"}, 5},
    {"workload-algorithm-mismatch.xml", {"algorithm", "all-reduce"}, 5},
    {"workload-bad-ranks.xml", {"\"ranks\"", "3-1"}, 5},
    {"a2av-matrix-short-row.xml", {"<matrix>", "row 1", "2 entries", "3 x 3"}, 8},
    {"a2av-matrix-rows-missing.xml", {"<matrix>", "2 rows", "3 x 3"}, 9},
    {"a2av-matrix-negative.xml", {"<matrix>", "row 1, entry 2", "-6KB", "negative"}, 8},
    {"a2av-matrix-file-negative.xml", {"a2av-matrix-negative.txt:4:", "-3KB", "negative"}, 6},
    /* MoE routing skew and expert migration (wh::ModelPreset). */
    {"routing-zipf-s-negative.xml", {"wh::ModelPreset::ZipfS", "-0.5", "at least 0"}, 8},
    {"migration-threshold-below-one.xml",
     {"wh::ModelPreset::MigrationThreshold", "0.9", "at least 1"},
     9},
    {"routing-file-expert-count.xml", {"seven-experts.txt:3:", "7 expert counts", "8 experts"}, 13},
    {"a2av-matrix-file-outside.xml", {"<collective matrix>", "README.md", "outside"}, 6},
    {"a2av-size-and-matrix.xml", {"all-to-allv", "\"size\""}, 5},
    {"a2av-halo-no-frontier.xml", {"algorithm", "halo", "Frontier"}, 7},
    {"a2av-too-many-ranks.xml", {"\"ranks\"", "1000000 ranks", "at most 8192"}, 6},
    {"flow-host-index-out-of-range.xml", {"\"dst\"", "\"7\""}, 8},
    {"flow-unknown-host-name.xml", {"\"dst\"", "h9"}, 11},
    {"flow-duplicate-id.xml", {"duplicate flow id", "\"x\""}, 9},
    {"pattern-shift-offset-multiple.xml", {"<shift>", "offset 8", "itself"}, 7},
    {"pattern-hosts-malformed.xml", {"\"hosts\"", "\"5\"", "FIRST:COUNT"}, 7},
    {"pattern-hosts-beyond-topology.xml", {"<uniform>", "8..107", "16 hosts"}, 7},
    {"pattern-flows-zero.xml", {"\"flows\"", "\"0\""}, 7},
};

#define N_BAD_INPUTS ((int)G_N_ELEMENTS(bad_inputs))

static char *make_tmp_dir(void)
{
  g_autoptr(GError) error = NULL;
  char *dir = g_dir_make_tmp("wh-bad-inputs-XXXXXX", &error);
  ck_assert_msg(dir != NULL, "cannot make a temporary directory: %s", error ? error->message : "?");
  return dir;
}

static char *bad_input_path(const char *file)
{
  g_autofree char *rel = g_build_filename("tests", "bad-inputs", file, NULL);
  return wh_test_source_path(rel);
}

START_TEST(test_bad_input_refused)
{
  const BadInput *bi = &bad_inputs[_i];
  g_autofree char *path = bad_input_path(bi->file);
  ck_assert_msg(g_file_test(path, G_FILE_TEST_IS_REGULAR), "%s: missing from the corpus", path);
  g_autofree char *tmp = make_tmp_dir();
  g_autofree char *out_dir = g_build_filename(tmp, "out", NULL);
  g_autofree char *summary = g_build_filename(out_dir, "summary.json", NULL);
  g_autofree char *flows = g_build_filename(out_dir, "flows.csv", NULL);
  const char *args[] = {"run", path, "--out", out_dir, NULL};
  g_autofree char *out = NULL;
  g_autofree char *err = NULL;
  int status = wh_test_whsim(args, &out, &err);
  gboolean wrote_summary = g_file_test(summary, G_FILE_TEST_EXISTS);
  gboolean wrote_flows = g_file_test(flows, G_FILE_TEST_EXISTS);
  wh_test_remove_tree(tmp);

  ck_assert_msg(status == 2, "%s: exit status %d, expected 2; stderr: %s", bi->file, status, err);
  ck_assert_msg(!wrote_summary && !wrote_flows, "%s: outputs written although refused", bi->file);
  ck_assert_msg(out[0] == '\0', "%s: unexpected stdout: %s", bi->file, out);
  ck_assert_msg(g_str_has_prefix(err, "whsim: "), "%s: stderr lacks the \"whsim: \" prefix: %s",
                bi->file, err);
  const char *named = strstr(err, path);
  ck_assert_msg(named != NULL, "%s: stderr does not name the file: %s", bi->file, err);
  /* Look for the words after the path: the file names repeat them. */
  const char *msg = named + strlen(path);
  for (int k = 0; k < MAX_EXPECT && bi->expect[k]; k++)
    ck_assert_msg(strstr(msg, bi->expect[k]) != NULL, "%s: stderr lacks \"%s\": %s", bi->file,
                  bi->expect[k], err);
  if (bi->line > 0) {
    g_autofree char *at = g_strdup_printf("%s:%d:", path, bi->line);
    ck_assert_msg(strstr(err, at) != NULL, "%s: stderr lacks line \"%s\": %s", bi->file, at, err);
  }
}
END_TEST

/* Every file in tests/bad-inputs/ has an entry in the table, and vice versa. */
START_TEST(test_corpus_matches_table)
{
  g_autofree char *dir_path = wh_test_source_path("tests/bad-inputs");
  g_autoptr(GError) error = NULL;
  GDir *dir = g_dir_open(dir_path, 0, &error);
  ck_assert_msg(dir != NULL, "cannot list %s: %s", dir_path, error ? error->message : "?");
  g_autoptr(GHashTable) listed = g_hash_table_new(g_str_hash, g_str_equal);
  for (int i = 0; i < N_BAD_INPUTS; i++)
    g_hash_table_add(listed, (gpointer)bad_inputs[i].file);
  g_autoptr(GString) untested = g_string_new(NULL);
  int n_files = 0;
  const char *name;
  while ((name = g_dir_read_name(dir)) != NULL) {
    g_autofree char *path = g_build_filename(dir_path, name, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_DIR))
      continue; /* e.g. simai/: workload files, tested by the simai suite */
    n_files++;
    if (!g_hash_table_contains(listed, name))
      g_string_append_printf(untested, " %s", name);
  }
  g_dir_close(dir);
  ck_assert_msg(untested->len == 0, "files in %s without an entry in bad_inputs[]:%s", dir_path,
                untested->str);
  ck_assert_msg(n_files == N_BAD_INPUTS, "%d files in %s but %d table entries", n_files, dir_path,
                N_BAD_INPUTS);
  ck_assert_int_ge(n_files, 20);
}
END_TEST

/* A refused run must not touch what an earlier run left in its output directory. */
START_TEST(test_existing_outputs_untouched)
{
  static const char *const inputs[] = {
      "malformed-unclosed-tag.xml",       /* refused by the XML parser */
      "schema-unknown-element.xml",       /* refused by the schema */
      "set-unknown-parameter.xml",        /* refused by the value checks */
      "custom-disconnected.xml",          /* refused while building the network */
      "flow-host-index-out-of-range.xml", /* refused while adding flows, the last check */
  };
  static const char summary_text[] = "{\n  \"scenario\": \"earlier run\",\n  \"flows\": 1\n}\n";
  static const char flows_text[] = "flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps\n"
                                   "a,0,1,1000,0,5000,5000\n";
  g_autofree char *tmp = make_tmp_dir();
  g_autofree char *summary = g_build_filename(tmp, "summary.json", NULL);
  g_autofree char *flows = g_build_filename(tmp, "flows.csv", NULL);
  ck_assert(g_file_set_contents(summary, summary_text, -1, NULL));
  ck_assert(g_file_set_contents(flows, flows_text, -1, NULL));

  int statuses[G_N_ELEMENTS(inputs)];
  for (size_t i = 0; i < G_N_ELEMENTS(inputs); i++) {
    g_autofree char *path = bad_input_path(inputs[i]);
    const char *args[] = {"run", path, "--out", tmp, NULL};
    g_autofree char *out = NULL;
    g_autofree char *err = NULL;
    statuses[i] = wh_test_whsim(args, &out, &err);
  }
  g_autofree char *summary_after = NULL;
  g_autofree char *flows_after = NULL;
  gsize summary_len = 0, flows_len = 0;
  gboolean read_summary = g_file_get_contents(summary, &summary_after, &summary_len, NULL);
  gboolean read_flows = g_file_get_contents(flows, &flows_after, &flows_len, NULL);
  int n_entries = 0;
  GDir *dir = g_dir_open(tmp, 0, NULL);
  if (dir) {
    while (g_dir_read_name(dir))
      n_entries++;
    g_dir_close(dir);
  }
  wh_test_remove_tree(tmp);

  for (size_t i = 0; i < G_N_ELEMENTS(inputs); i++)
    ck_assert_msg(statuses[i] == 2, "%s: exit status %d, expected 2", inputs[i], statuses[i]);
  ck_assert_msg(read_summary && summary_len == strlen(summary_text) &&
                    memcmp(summary_after, summary_text, summary_len) == 0,
                "summary.json was changed by a refused run");
  ck_assert_msg(read_flows && flows_len == strlen(flows_text) &&
                    memcmp(flows_after, flows_text, flows_len) == 0,
                "flows.csv was changed by a refused run");
  ck_assert_msg(n_entries == 2, "the output directory holds %d entries after refused runs, not 2",
                n_entries);
}
END_TEST

/* Every malformed SimAI workload file, referenced from a scenario: whsim exits 2 and
 * names the workload file with a line number. */
START_TEST(test_simai_files_refused)
{
  g_autofree char *dir_path = wh_test_source_path("tests/bad-inputs/simai");
  g_autoptr(GDir) dir = g_dir_open(dir_path, 0, NULL);
  ck_assert_ptr_nonnull(dir);
  g_autofree char *tmp = g_dir_make_tmp("whsim-simai-XXXXXX", NULL);
  g_autofree char *scenario = g_build_filename(tmp, "scenario.xml", NULL);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  const char *name;
  int n = 0;
  while ((name = g_dir_read_name(dir)) != NULL) {
    g_autofree char *wl = g_build_filename(dir_path, name, NULL);
    g_autofree char *xml = g_strdup_printf(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<scenario name=\"simai\">\n"
        "  <topology type=\"wh::Star\"><param name=\"Hosts\" value=\"16\"/></topology>\n"
        "  <workload simai=\"%s\"/>\n</scenario>\n",
        wl);
    ck_assert(g_file_set_contents(scenario, xml, -1, NULL));
    const char *args[] = {"run", scenario, "--out", out, "--data-dir", dir_path, NULL};
    g_autofree char *err = NULL;
    ck_assert_int_eq(wh_test_whsim(args, NULL, &err), 2);
    ck_assert_msg(strstr(err, name) != NULL, "%s: message lacks the file: %s", name, err);
    g_autofree char *tail = g_strdup(strstr(err, name) + strlen(name));
    ck_assert_msg(tail[0] == ':' && g_ascii_isdigit(tail[1]), "%s: no line number: %s", name, err);
    ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS));
    n++;
  }
  ck_assert_int_ge(n, 8);
  g_remove(scenario);
  g_rmdir(tmp);
}
END_TEST

/* Runs `script` with one argument; returns its exit status, its stdout and stderr in
 * *out and *err. */
static int run_script(const char *script, const char *arg, char **out, char **err)
{
  const char *argv[] = {"bash", script, arg, NULL};
  int status = -1;
  g_autoptr(GError) error = NULL;
  ck_assert_msg(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, out, err,
                             &status, &error),
                "cannot run %s: %s", script, error ? error->message : "?");
  ck_assert(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* `script` documents --check in its --help and refuses an unknown argument with exit
 * status 2, naming it. */
static void check_harness_options(const char *script)
{
  g_autofree char *help = NULL, *herr = NULL, *out = NULL, *err = NULL;
  ck_assert_int_eq(run_script(script, "--help", &help, &herr), 0);
  ck_assert_msg(strstr(help, "--check") != NULL, "%s --help does not document --check", script);
  ck_assert_int_eq(run_script(script, "--no-such-option", &out, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "--no-such-option"));
}

/* Every validation harness (validation/NAME/run.sh, and the further scripts listed
 * here) takes --check (and documents it in --help), and refuses an unknown argument
 * with exit status 2 before running anything. */
START_TEST(test_validation_scripts_have_check)
{
  g_autofree char *dir = wh_test_source_path("validation");
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  unsigned n = 0;
  for (const char *name; (name = g_dir_read_name(d)) != NULL;) {
    g_autofree char *script = g_build_filename(dir, name, "run.sh", NULL);
    if (!g_file_test(script, G_FILE_TEST_EXISTS))
      continue;
    check_harness_options(script);
    n++;
  }
  ck_assert_uint_ge(n, 2);
  static const char *const more[] = {"piper/training.sh"};
  for (size_t i = 0; i < G_N_ELEMENTS(more); i++) {
    g_autofree char *script = g_build_filename(dir, more[i], NULL);
    ck_assert_msg(g_file_test(script, G_FILE_TEST_EXISTS), "%s is missing", script);
    check_harness_options(script);
  }
}
END_TEST

/* `whsim compare` refuses, with exit status 2, a message naming the file and nothing
 * written: a scenario with neither flows nor a workload (tests/bad-inputs/compare/),
 * --out naming an existing regular file (left as it was), and a run directory whose
 * exact/ is a regular file. */
START_TEST(test_compare_refused)
{
  g_autofree char *no_traffic = bad_input_path("compare/no-traffic.xml");
  g_autofree char *scenario = wh_test_source_path("scenarios/dumbbell-dcqcn.xml");
  g_autofree char *tmp = make_tmp_dir();
  g_autofree char *out_dir = g_build_filename(tmp, "out", NULL);
  g_autofree char *file = g_build_filename(tmp, "a-file", NULL);
  g_autofree char *taken = g_build_filename(tmp, "taken", NULL);
  g_autofree char *taken_exact = g_build_filename(taken, "exact", NULL);
  static const char text[] = "not a directory\n";
  ck_assert(g_file_set_contents(file, text, -1, NULL));
  ck_assert_int_eq(g_mkdir(taken, 0755), 0);
  ck_assert(g_file_set_contents(taken_exact, text, -1, NULL));
  struct {
    const char *scenario, *out, *named, *expect;
  } cases[] = {
      {no_traffic, out_dir, no_traffic, "nothing to compare"},
      {scenario, file, file, "not a directory"},
      {scenario, taken, taken_exact, "not a directory"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const char *args[] = {"compare", cases[i].scenario, "--out", cases[i].out, NULL};
    g_autofree char *out = NULL, *err = NULL;
    int status = wh_test_whsim(args, &out, &err);
    ck_assert_msg(status == 2, "case %zu: exit status %d, expected 2; stderr: %s", i, status, err);
    ck_assert_msg(g_str_has_prefix(err, "whsim: "), "case %zu: %s", i, err);
    const char *named = strstr(err, cases[i].named);
    ck_assert_msg(named != NULL, "case %zu: stderr does not name %s: %s", i, cases[i].named, err);
    ck_assert_msg(strstr(named, cases[i].expect) != NULL, "case %zu: stderr lacks \"%s\": %s", i,
                  cases[i].expect, err);
    ck_assert_msg(out[0] == '\0', "case %zu: unexpected stdout: %s", i, out);
  }
  gboolean out_made = g_file_test(out_dir, G_FILE_TEST_EXISTS);
  g_autofree char *after = NULL, *after_exact = NULL;
  ck_assert(g_file_get_contents(file, &after, NULL, NULL));
  ck_assert(g_file_get_contents(taken_exact, &after_exact, NULL, NULL));
  g_autofree char *taken_wormhole = g_build_filename(taken, "wormhole", NULL);
  gboolean taken_wormhole_made = g_file_test(taken_wormhole, G_FILE_TEST_EXISTS);
  wh_test_remove_tree(tmp);
  ck_assert_msg(!out_made, "a refused compare created its output directory");
  ck_assert_str_eq(after, text);
  ck_assert_str_eq(after_exact, text);
  ck_assert_msg(!taken_wormhole_made, "a refused compare created wormhole/");
}
END_TEST

Suite *wh_bad_inputs_suite(void)
{
  Suite *s = suite_create("bad-inputs");
  TCase *tc = tcase_create("refused");
  tcase_set_timeout(tc, 30);
  tcase_add_loop_test(tc, test_bad_input_refused, 0, N_BAD_INPUTS);
  suite_add_tcase(s, tc);
  TCase *corpus = tcase_create("corpus");
  tcase_add_test(corpus, test_corpus_matches_table);
  tcase_add_test(corpus, test_simai_files_refused);
  tcase_set_timeout(corpus, 60);
  suite_add_tcase(s, corpus);
  TCase *outputs = tcase_create("outputs");
  tcase_set_timeout(outputs, 30);
  tcase_add_test(outputs, test_existing_outputs_untouched);
  tcase_add_test(outputs, test_compare_refused);
  suite_add_tcase(s, outputs);
  TCase *validation = tcase_create("validation-scripts");
  tcase_add_test(validation, test_validation_scripts_have_check);
  suite_add_tcase(s, validation);
  return s;
}
