/* Tests of `whsim export-hpcc` (hpcc-export.h): the translation of scenarios to the HPCC
 * project's ns-3 simulator's inputs, read back as that simulator reads them (no HPCC
 * build needed: validation/hpcc-ns3/run.sh runs it), and the refusals of what it cannot
 * express. Each case spawns whsim on a small scenario: milliseconds. */
#include <check.h>
#include <string.h>
#include <sys/wait.h>

#include "test-util.h"

/* The keys scratch/third.cc of the HPCC simulator reads from config.txt, less DATA_RATE
 * and LINK_DELAY, which it reads and never uses (the topology carries rates and delays). */
static const char *const hpcc_keys[] = {"ENABLE_QCN",
                                        "USE_DYNAMIC_PFC_THRESHOLD",
                                        "CLAMP_TARGET_RATE",
                                        "PAUSE_TIME",
                                        "PACKET_PAYLOAD_SIZE",
                                        "L2_CHUNK_SIZE",
                                        "L2_ACK_INTERVAL",
                                        "L2_BACK_TO_ZERO",
                                        "TOPOLOGY_FILE",
                                        "FLOW_FILE",
                                        "TRACE_FILE",
                                        "TRACE_OUTPUT_FILE",
                                        "SIMULATOR_STOP_TIME",
                                        "ALPHA_RESUME_INTERVAL",
                                        "RP_TIMER",
                                        "EWMA_GAIN",
                                        "FAST_RECOVERY_TIMES",
                                        "RATE_AI",
                                        "RATE_HAI",
                                        "ERROR_RATE_PER_LINK",
                                        "CC_MODE",
                                        "RATE_DECREASE_INTERVAL",
                                        "MIN_RATE",
                                        "FCT_OUTPUT_FILE",
                                        "HAS_WIN",
                                        "GLOBAL_T",
                                        "MI_THRESH",
                                        "VAR_WIN",
                                        "FAST_REACT",
                                        "U_TARGET",
                                        "INT_MULTI",
                                        "RATE_BOUND",
                                        "ACK_HIGH_PRIO",
                                        "DCTCP_RATE_AI",
                                        "PFC_OUTPUT_FILE",
                                        "LINK_DOWN",
                                        "ENABLE_TRACE",
                                        "KMAX_MAP",
                                        "KMIN_MAP",
                                        "PMAX_MAP",
                                        "BUFFER_SIZE",
                                        "QLEN_MON_FILE",
                                        "QLEN_MON_START",
                                        "QLEN_MON_END",
                                        "MULTI_RATE",
                                        "SAMPLE_FEEDBACK",
                                        "PINT_LOG_BASE",
                                        "PINT_PROB",
                                        NULL};

#define SCENARIO_HEAD                                                                              \
  "<?xml version=\"1.0\"?>\n<scenario name=\"t\" seed=\"1\" cc=\"%s\">\n"                          \
  "<set param=\"wh::Link::Rate\" value=\"100Gbps\"/>\n"                                            \
  "<set param=\"wh::Switch::BufferSize\" value=\"32MiB\"/>\n"                                      \
  "<set param=\"wh::Switch::PfcThreshold\" value=\"dynamic\"/>\n"                                  \
  "<set param=\"wh::RdmaFlow::NackInterval\" value=\"500us\"/>\n%s"

/* A 4-host star scenario with cc, extra <set> lines and flows; its path (transfer full). */
static char *write_scenario(const char *dir, const char *cc, const char *sets, const char *flows)
{
  g_autofree char *text = g_strdup_printf(
      SCENARIO_HEAD "<topology type=\"wh::Star\"><param name=\"Hosts\" value=\"4\"/></topology>\n"
                    "<flows>\n%s</flows>\n</scenario>\n",
      cc, sets, flows);
  char *path = g_build_filename(dir, "s.xml", NULL);
  ck_assert(g_file_set_contents(path, text, -1, NULL));
  return path;
}

static const char *const two_flows =
    "<flow id=\"late\" src=\"0\" dst=\"3\" size=\"2MB\" start=\"5us\"/>\n"
    "<flow id=\"early\" src=\"0\" dst=\"3\" size=\"1MB\" start=\"0us\"/>\n"
    "<flow id=\"other\" src=\"1\" dst=\"3\" size=\"3000B\" start=\"5us\"/>\n";

/* The value of `key` in config.txt text (transfer full), NULL if absent. */
static char *config_value(const char *config, const char *key)
{
  g_auto(GStrv) lines = g_strsplit(config, "\n", -1);
  for (char **l = lines; *l; l++) {
    size_t n = strlen(key);
    if (strncmp(*l, key, n) == 0 && (*l)[n] == ' ')
      return g_strdup(*l + n + 1);
  }
  return NULL;
}

START_TEST(test_translation)
{
  static const char *const ccs[] = {"dcqcn", "hpcc", "timely", "dctcp"};
  static const char *const modes[] = {"1", "3", "7", "8"};
  g_autofree char *tmp = g_dir_make_tmp("wh-hpcc-XXXXXX", NULL);
  g_autofree char *scen = write_scenario(tmp, ccs[_i], "", two_flows);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  const char *args[] = {"export-hpcc", scen, "--out", out, NULL};
  g_autofree char *err = NULL;
  ck_assert_msg(wh_test_whsim(args, NULL, &err) == 0, "%s", err);
  g_autofree char *config = wh_test_read_in(out, "config.txt");
  for (const char *const *k = hpcc_keys; *k; k++) {
    g_autofree char *v = config_value(config, *k);
    ck_assert_msg(v != NULL && *v, "%s: config.txt lacks %s", ccs[_i], *k);
  }
  g_autofree char *mode = config_value(config, "CC_MODE");
  ck_assert_str_eq(mode, modes[_i]);
  /* 4 hosts (0-3) and the switch (4): its topology file, one line per link */
  g_autofree char *topo = wh_test_read_in(out, "topology.txt");
  ck_assert_str_eq(topo, "5 1 4\n4\n0 4 100000000000bps 1000ns 0\n1 4 100000000000bps 1000ns 0\n"
                         "2 4 100000000000bps 1000ns 0\n3 4 100000000000bps 1000ns 0\n");
  /* flows in start order; a second flow of a host pair gets the next source port */
  g_autofree char *flows = wh_test_read_in(out, "flow.txt");
  ck_assert_str_eq(flows, "3\n0 3 3 100 1000000 0.000000000000\n"
                          "0 3 3 100 2000000 0.000005000000\n1 3 3 100 3000 0.000005000000\n");
  /* the ACK return: two hops of 1 us plus 48-byte ACKs (76 with HPCC's INT) at 100 Gb/s */
  uint64_t ack = 2 * (1000000 + (_i == 1 ? 76 : 48) * 80);
  g_autofree char *expect_map =
      g_strdup_printf("line,flow_id,src_node,dst_node,sport,bytes,start_ps,ack_return_ps\n"
                      "0,early,0,3,10000,1000000,0,%" G_GUINT64_FORMAT "\n"
                      "1,late,0,3,10001,2000000,5000000,%" G_GUINT64_FORMAT "\n"
                      "2,other,1,3,10000,3000,5000000,%" G_GUINT64_FORMAT "\n",
                      ack, ack, ack);
  g_autofree char *map = wh_test_read_in(out, "flow-map.csv");
  ck_assert_str_eq(map, expect_map);
  wh_test_remove_tree(tmp);
}
END_TEST

/* Parameters reach config.txt in its units. */
START_TEST(test_parameters)
{
  g_autofree char *tmp = g_dir_make_tmp("wh-hpcc-XXXXXX", NULL);
  g_autofree char *scen = write_scenario(tmp, "dcqcn",
                                         "<set param=\"wh::DcqcnCc::Kmin\" value=\"200KB\"/>\n"
                                         "<set param=\"wh::DcqcnCc::Kmax\" value=\"800KB\"/>\n"
                                         "<set param=\"wh::DcqcnCc::RpTimer\" value=\"300us\"/>\n"
                                         "<set param=\"wh::DcqcnCc::Rai\" value=\"10Mbps\"/>\n"
                                         "<set param=\"wh::RdmaFlow::Mtu\" value=\"1500B\"/>\n"
                                         "<set param=\"wh::Switch::PfcAlpha\" value=\"0.25\"/>\n",
                                         two_flows);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  const char *args[] = {"export-hpcc", scen, "--out", out, "--set", "wh::Link::Delay=2500ns", NULL};
  g_autofree char *err = NULL;
  ck_assert_msg(wh_test_whsim(args, NULL, &err) == 0, "%s", err);
  g_autofree char *config = wh_test_read_in(out, "config.txt");
  static const char *const expect[][2] = {{"KMIN_MAP", "1 100000000000 200"},
                                          {"KMAX_MAP", "1 100000000000 800"},
                                          {"PMAX_MAP", "1 100000000000 0.2"},
                                          {"RP_TIMER", "300.000000"},
                                          {"RATE_AI", "10000000bps"},
                                          {"PACKET_PAYLOAD_SIZE", "1500"},
                                          {"BUFFER_SIZE", "32"},
                                          {"ENABLE_QCN", "1"},
                                          {"L2_ACK_INTERVAL", "1"},
                                          {"ACK_HIGH_PRIO", "1"}};
  for (size_t i = 0; i < G_N_ELEMENTS(expect); i++) {
    g_autofree char *v = config_value(config, expect[i][0]);
    ck_assert_msg(v && strcmp(v, expect[i][1]) == 0, "%s: %s, expected %s", expect[i][0], v,
                  expect[i][1]);
  }
  g_autofree char *topo = wh_test_read_in(out, "topology.txt");
  ck_assert_ptr_nonnull(strstr(topo, " 2500ns 0\n"));
  wh_test_remove_tree(tmp);
}
END_TEST

/* What it cannot express: exit 2, the feature named, nothing written. */
static const struct {
  const char *cc, *sets, *expect;
} refusals[] = {
    {"dcqcn", "<set param=\"wh::Switch::PfcEnabled\" value=\"false\"/>\n", "PFC off"},
    {"dcqcn", "<set param=\"wh::Switch::PfcThreshold\" value=\"static\"/>\n",
     "static PFC thresholds"},
    {"hpcc", "<set param=\"wh::Link::Rate\" value=\"40Gbps\"/>\n", "INT records"},
    {"dcqcn", "<set param=\"wh::RdmaFlow::AckEvery\" value=\"2\"/>\n", "delayed ACKs"},
    {"timely", "<set param=\"wh::TimelyCc::Beta\" value=\"0.5\"/>\n", "wh::TimelyCc::Beta"},
    {"timely", "<set param=\"wh::TimelyCc::Patched\" value=\"true\"/>\n", "patched TIMELY"},
    {"dcqcn", "<set param=\"wh::Switch::BufferSize\" value=\"32MB\"/>\n", "whole MiB"},
    {"dcqcn", "<set param=\"wh::Switch::Delay\" value=\"100ns\"/>\n", "forwarding delay"},
    {"dcqcn", "<set param=\"wh::Link::Delay\" value=\"1500ps\"/>\n", "whole nanoseconds"},
    {"dcqcn", "<set param=\"wh::RdmaFlow::NackInterval\" value=\"100us\"/>\n", "NackInterval"},
    {"dcqcn", "<set param=\"wh::Switch::PfcAlpha\" value=\"0.3\"/>\n", "PfcAlpha"},
    {"hpcc", "<set param=\"wh::HpccCc::BaseRtt\" value=\"10us\"/>\n", "BaseRtt"},
    {"dcqcn", "<set param=\"wh::RdmaFlow::Window\" value=\"64KB\"/>\n", "wh::RdmaFlow::Window"},
};

START_TEST(test_refusals)
{
  g_autofree char *tmp = g_dir_make_tmp("wh-hpcc-XXXXXX", NULL);
  g_autofree char *scen = write_scenario(tmp, refusals[_i].cc, refusals[_i].sets, two_flows);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  const char *args[] = {"export-hpcc", scen, "--out", out, NULL};
  g_autofree char *err = NULL;
  ck_assert_int_eq(wh_test_whsim(args, NULL, &err), 2);
  ck_assert_msg(strstr(err, refusals[_i].expect) && strstr(err, scen) &&
                    strstr(err, "HPCC simulator cannot express"),
                "message lacks \"%s\" or the file: %s", refusals[_i].expect, err);
  ck_assert_msg(!g_file_test(out, G_FILE_TEST_EXISTS), "%s written on a refusal", out);
  wh_test_remove_tree(tmp);
}
END_TEST

/* A refusal leaves an earlier translation in place. */
START_TEST(test_refusal_keeps_outputs)
{
  g_autofree char *tmp = g_dir_make_tmp("wh-hpcc-XXXXXX", NULL);
  g_autofree char *scen = write_scenario(tmp, "dcqcn", "", two_flows);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  const char *args[] = {"export-hpcc", scen, "--out", out, NULL};
  ck_assert_int_eq(wh_test_whsim(args, NULL, NULL), 0);
  g_autofree char *before = wh_test_read_in(out, "config.txt");
  const char *bad[] = {"export-hpcc", scen, "--out", out, "--set", "wh::RdmaFlow::AckEvery=4",
                       NULL};
  g_autofree char *err = NULL;
  ck_assert_int_eq(wh_test_whsim(bad, NULL, &err), 2);
  g_autofree char *after = wh_test_read_in(out, "config.txt");
  ck_assert_str_eq(before, after);
  const char *usage[] = {"export-hpcc", scen, NULL};
  g_autofree char *usage_err = NULL;
  ck_assert_int_eq(wh_test_whsim(usage, NULL, &usage_err), 2);
  ck_assert_ptr_nonnull(strstr(usage_err, "--out DIR"));
  wh_test_remove_tree(tmp);
}
END_TEST

/* The translation and a run's outputs keep apart in one directory: neither removes the
 * other's files as stale. */
START_TEST(test_shared_directory)
{
  g_autofree char *tmp = g_dir_make_tmp("wh-hpcc-XXXXXX", NULL);
  g_autofree char *scen = write_scenario(tmp, "dcqcn", "", two_flows);
  g_autofree char *out = g_build_filename(tmp, "out", NULL);
  const char *run[] = {"run", scen, "--out", out, "-q", NULL};
  const char *exp[] = {"export-hpcc", scen, "--out", out, NULL};
  g_autofree char *err = NULL, *err2 = NULL, *err3 = NULL;
  ck_assert_msg(wh_test_whsim(run, NULL, &err) == 0, "%s", err);
  ck_assert_msg(wh_test_whsim(exp, NULL, &err2) == 0, "%s", err2);
  g_autofree char *flows = wh_test_read_in(out, "flows.csv");
  ck_assert_msg(wh_test_whsim(run, NULL, &err3) == 0, "%s", err3);
  g_autofree char *config = wh_test_read_in(out, "config.txt");
  g_autofree char *notes = wh_test_read_in(out, "notes.txt");
  wh_test_remove_tree(tmp);
}
END_TEST

/* validation/hpcc-ns3/build.sh on a missing archive and on one with another sha256:
 * exit 2 naming the path and the expected hash, before anything is built. */
START_TEST(test_build_script_refusals)
{
  g_autofree char *script = wh_test_source_path("validation/hpcc-ns3/build.sh");
  g_autofree char *tmp = g_dir_make_tmp("wh-hpcc-XXXXXX", NULL);
  g_autofree char *missing = g_build_filename(tmp, "no-such.tar.gz", NULL);
  g_autofree char *junk = g_build_filename(tmp, "junk.tar.gz", NULL);
  ck_assert(g_file_set_contents(junk, "not the archive\n", -1, NULL));
  g_autofree char *build = g_build_filename(tmp, "build", NULL);
  static const char *const expected =
      "da07641d10b292683617e06c5a0a9f142e25d13b0abbffef1c64478c52c9ac19";
  const char *tarballs[] = {missing, junk};
  for (int i = 0; i < 2; i++) {
    const char *argv[] = {script, "--tarball", tarballs[i], NULL};
    g_auto(GStrv) env = g_environ_setenv(g_get_environ(), "WH_BUILD", build, TRUE);
    g_autofree char *out = NULL, *err = NULL;
    int status = 0;
    g_autoptr(GError) error = NULL;
    ck_assert(g_spawn_sync(NULL, (char **)argv, env, G_SPAWN_DEFAULT, NULL, NULL, &out, &err,
                           &status, &error));
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 2, "%s: status %d: %s", tarballs[i],
                  status, err);
    ck_assert_msg(strstr(err, tarballs[i]) && strstr(err, expected), "%s: %s", tarballs[i], err);
    ck_assert_msg(!g_file_test(build, G_FILE_TEST_EXISTS), "%s: something was built", tarballs[i]);
  }
  wh_test_remove_tree(tmp);
}
END_TEST

Suite *wh_hpcc_export_suite(void)
{
  Suite *s = suite_create("hpcc-export");
  TCase *tc = tcase_create("translation");
  tcase_add_loop_test(tc, test_translation, 0, 4);
  tcase_add_test(tc, test_parameters);
  tcase_add_test(tc, test_shared_directory);
  suite_add_tcase(s, tc);
  tc = tcase_create("refusals");
  tcase_add_loop_test(tc, test_refusals, 0, (int)G_N_ELEMENTS(refusals));
  tcase_add_test(tc, test_refusal_keeps_outputs);
  tcase_add_test(tc, test_build_script_refusals);
  suite_add_tcase(s, tc);
  return s;
}
