/* Scenario and run tests: every scenario shipped in scenarios/ and tests/scenarios/
 * builds, completes with a clean end state (all flows done, bytes sent = delivered +
 * dropped, no packet or event left in the pools), and gives identical outputs with
 * the heap and the calendar scheduler; the whsim binary writes the documented
 * outputs, is deterministic for a seed (all but wall-clock fields), lets the command
 * line override the scenario, lists its types, and prints a Wormhole line that agrees
 * with summary.json in every mode. */
#include <check.h>
#include <glib/gstdio.h>
#include <string.h>

#include "test-util.h"

/* Outputs that must match bit for bit: the summary without wall-clock fields, and
 * every flow's finish time. */
/* No op starts before every op it depends on has ended, and every op ended. */
static void check_dag_order(const WhRun *run)
{
  if (run->workload == NULL)
    return;
  uint32_t n = wh_workload_n_ops(run->workload);
  for (uint32_t i = 0; i < n; i++) {
    WhOpInfo op;
    wh_workload_op_info(run->workload, i, &op);
    ck_assert_msg(op.end >= op.start && (op.end > 0 || op.start == 0), "op %u did not end", i);
    for (uint32_t d = 0; d < op.n_deps; d++) {
      WhOpInfo dep;
      wh_workload_op_info(run->workload, op.deps[d], &dep);
      ck_assert_msg(op.start >= dep.end, "op %u (%s) starts before op %u (%s) ends", i, op.name,
                    dep.id, dep.name);
    }
  }
}

static char *fingerprint(const WhRun *run)
{
  g_autofree char *summary = wh_run_summary_json(run, FALSE);
  GString *s = g_string_new(summary);
  for (uint32_t i = 0; i < run->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(run->tp, i);
    g_string_append_printf(s, "%u:%" G_GUINT64_FORMAT "\n", i, (guint64)f->finish);
  }
  return g_string_free(s, FALSE);
}

START_TEST(test_every_scenario_both_schedulers)
{
  g_autoptr(GPtrArray) files = wh_test_scenario_files();
  ck_assert_uint_ge(files->len, 5);
  for (guint i = 0; i < files->len; i++) {
    const char *file = files->pdata[i];
    WhRunOptions heap = {.scheduler = "heap"}, cal = {.scheduler = "calendar"};
    g_autoptr(WhRun) a = wh_test_run_file(file, &heap);
    g_autoptr(GError) err = NULL;
    ck_assert_msg(wh_run_check(a, &err), "%s: %s", file, err ? err->message : "");
    check_dag_order(a);
    g_autoptr(WhRun) b = wh_test_run_file(file, &cal);
    ck_assert_msg(wh_run_check(b, &err), "%s (calendar): %s", file, err ? err->message : "");
    g_autofree char *fa = fingerprint(a), *fb = fingerprint(b);
    /* the summaries name their scheduler; everything else must agree */
    g_autofree char *fb_as_heap = g_strdup(fb);
    char *p = strstr(fb_as_heap, "\"calendar\"");
    ck_assert_ptr_nonnull(p);
    memcpy(p, "\"heap\"", 6);
    memmove(p + 6, p + 10, strlen(p + 10) + 1);
    ck_assert_msg(strcmp(fa, fb_as_heap) == 0, "%s: heap and calendar differ:\n%s\n--\n%s", file,
                  fa, fb);
    ck_assert_uint_gt(a->sim->events_executed, 0);
  }
}
END_TEST

START_TEST(test_whsim_outputs_and_determinism)
{
  g_autofree char *scenario = wh_test_source_path("tests/scenarios/fattree-k4-mixed.xml");
  g_autofree char *d1 = g_dir_make_tmp("whsim-XXXXXX", NULL);
  g_autofree char *d2 = g_dir_make_tmp("whsim-XXXXXX", NULL);
  const char *a1[] = {"run", scenario, "--out", d1, "--seed", "5", NULL};
  const char *a2[] = {"run", scenario, "--out", d2, "--seed", "5", "--quiet", NULL};
  g_autofree char *out = NULL;
  ck_assert_int_eq(wh_test_whsim(a1, &out, NULL), 0);
  ck_assert_ptr_nonnull(strstr(out, "40 flows"));
  ck_assert_int_eq(wh_test_whsim(a2, NULL, NULL), 0);
  g_autofree char *s1 = wh_test_read_in(d1, "summary.json"),
                  *s2 = wh_test_read_in(d2, "summary.json");
  g_autofree char *c1 = wh_test_read_in(d1, "flows.csv"), *c2 = wh_test_read_in(d2, "flows.csv");
  static const char *fields[] = {"sim_end_ps",
                                 "events_executed",
                                 "packets_delivered",
                                 "link_traversals",
                                 "pfc_pauses",
                                 "ecn_marks",
                                 "cnps",
                                 "drops",
                                 "\"flows\"",
                                 "wall_s"};
  for (size_t i = 0; i < G_N_ELEMENTS(fields); i++)
    ck_assert_msg(strstr(s1, fields[i]) != NULL, "summary.json lacks %s", fields[i]);
  ck_assert(g_str_has_prefix(c1, "flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key\n"));
  ck_assert_str_eq(c1, c2);
  g_autofree char *w1 = wh_test_strip_wall(s1), *w2 = wh_test_strip_wall(s2);
  ck_assert_str_eq(w1, w2);
  /* another seed moves ECMP paths and ECN draws: the run changes */
  g_autofree char *d3 = g_dir_make_tmp("whsim-XXXXXX", NULL);
  const char *a3[] = {"run", scenario,  "--out",           d3,     "--seed",
                      "6",   "--quiet", "--sample-period", "20us", NULL};
  ck_assert_int_eq(wh_test_whsim(a3, NULL, NULL), 0);
  g_autofree char *c3 = wh_test_read_in(d3, "flows.csv");
  ck_assert_str_ne(c1, c3);
  g_autofree char *r3 = wh_test_read_in(d3, "rates.csv"), *q3 = wh_test_read_in(d3, "queues.csv");
  ck_assert(g_str_has_prefix(r3, "period_start_ps,flow_id,sent_bps,delivered_bps\n0,"));
  ck_assert(g_str_has_prefix(q3, "period_end_ps,port,node,queue_bytes\n"));
  g_autofree char *r3p = g_build_filename(d3, "rates.csv", NULL);
  g_autofree char *q3p = g_build_filename(d3, "queues.csv", NULL);
  g_remove(r3p);
  g_remove(q3p);
  const char *dirs[] = {d1, d2, d3};
  for (size_t i = 0; i < 3; i++) {
    g_autofree char *f1 = g_build_filename(dirs[i], "summary.json", NULL);
    g_autofree char *f2 = g_build_filename(dirs[i], "flows.csv", NULL);
    g_autofree char *f3 = g_build_filename(dirs[i], "links.csv", NULL);
    g_remove(f1);
    g_remove(f2);
    g_remove(f3);
    g_rmdir(dirs[i]);
  }
}
END_TEST

START_TEST(test_command_line_overrides_scenario)
{
  /* The scenario pins 100 Gb/s links; --set halves them: the lone flow takes about
   * twice as long. */
  g_autoptr(WhScenario) sc = wh_scenario_new("override", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "1");
  wh_scenario_add_set(sc, "wh::Link::Rate", "100Gbps");
  wh_scenario_add_set(sc, "wh::Dumbbell::BottleneckRate", "100Gbps");
  wh_scenario_add_flow(sc, 0, 1, 10000000, 0);
  g_autoptr(WhRun) fast = wh_test_run(sc, NULL);
  char *sets[] = {"wh::Link::Rate=50Gbps", "wh::Dumbbell::BottleneckRate=50Gbps", NULL};
  WhRunOptions opts = {.sets = sets};
  g_autoptr(WhRun) slow = wh_test_run(sc, &opts);
  double ratio = (double)wh_transport_flow(slow->tp, 0)->finish /
                 (double)wh_transport_flow(fast->tp, 0)->finish;
  ck_assert_msg(ratio > 1.95 && ratio < 2.0, "FCT ratio %.4f", ratio);
}
END_TEST

/* A packet's size is 16-bit and, with PFC, a port's ingress counts 32-bit: a frame
 * above 65,535 B, or a PFC switch buffer of 4 GiB or more, is refused with the
 * parameter named, before the run. */
START_TEST(test_size_limits)
{
  char *mtu[] = {"wh::RdmaFlow::Mtu=65500B", NULL};
  char *ctrl[] = {"wh::RdmaFlow::ControlBytes=70000B", NULL};
  char *buffer[] = {"wh::Switch::BufferSize=4GiB", NULL};
  char **sets[] = {mtu, ctrl, buffer};
  const char *says[] = {"larger than 65535 B", "larger than 65535 B", "less than 4 GiB"};
  for (int i = 0; i < 3; i++) {
    g_autofree char *path = wh_test_source_path("scenarios/incast-16to1.xml");
    g_autoptr(GError) err = NULL;
    g_autoptr(WhScenario) sc = wh_scenario_load(path, &err);
    ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
    WhRunOptions opts = {.sets = sets[i]};
    g_autoptr(WhRun) run = wh_run_new(sc, &opts, &err);
    ck_assert_ptr_null(run);
    ck_assert_ptr_nonnull(err);
    ck_assert_msg(strstr(err->message, says[i]) != NULL, "%s", err->message);
  }
}
END_TEST

START_TEST(test_deadlock_watchdog)
{
  /* tests/deadlock/pfc-ring.xml deadlocks by construction (a cycle of PFC pauses
   * around a ring of switches): the watchdog stops the run once no packet has crossed
   * a link for its 200 us, with the packets still in the switches and the pauses in
   * place; the summary says so. With PFC off (and DCQCN's ECN on) the same traffic
   * completes. */
  g_autoptr(WhRun) run = wh_test_run_file("tests/deadlock/pfc-ring.xml", NULL);
  const WhNetDeadlock *d = &run->net->deadlock;
  ck_assert(d->detected);
  ck_assert(wh_run_stopped_early(run));
  ck_assert_str_eq(wh_run_stop_reason(run), "deadlock");
  ck_assert_uint_ge(d->at - d->still_since, 200000000ULL);
  ck_assert_uint_gt(d->buffered_bytes, 0);
  ck_assert_uint_eq(d->switches, 5);
  ck_assert_uint_ge(d->paused_ports, 5);
  ck_assert_uint_lt(run->tp->c.flows_finished, run->tp->n_flows);
  g_autofree char *summary = wh_run_summary_json(run, FALSE);
  ck_assert_ptr_nonnull(strstr(summary, "\"stopped_early\" : \"deadlock\""));
  ck_assert_ptr_nonnull(strstr(summary, "\"buffered_bytes\""));
  char *sets[] = {"wh::Switch::PfcEnabled=false", "wh::Switch::EcnEnabled=true", NULL};
  WhRunOptions lossy = {.sets = sets};
  g_autoptr(WhRun) ok = wh_test_run_file("tests/deadlock/pfc-ring.xml", &lossy);
  wh_test_assert_clean_end(ok);
  ck_assert(!ok->net->deadlock.detected);
}
END_TEST

START_TEST(test_whsim_list_and_usage)
{
  const char *list[] = {"list", NULL};
  g_autofree char *out = NULL;
  ck_assert_int_eq(wh_test_whsim(list, &out, NULL), 0);
  ck_assert_ptr_nonnull(strstr(out, "wh::DcqcnCc"));
  ck_assert_ptr_nonnull(strstr(out, "Kmin"));
  ck_assert_ptr_nonnull(strstr(out, "wh::FatTree"));
  const char *bad[] = {"frobnicate", NULL};
  g_autofree char *err = NULL;
  ck_assert_int_eq(wh_test_whsim(bad, NULL, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "unknown command"));
  g_autofree char *scenario = wh_test_source_path("scenarios/dumbbell-dcqcn.xml");
  const char *badset[] = {"run", scenario, "--set", "wh::Link::Rate=fast", NULL};
  g_autofree char *err2 = NULL;
  ck_assert_int_eq(wh_test_whsim(badset, NULL, &err2), 2);
  ck_assert_ptr_nonnull(strstr(err2, "wh::Link::Rate"));
}
END_TEST

START_TEST(test_plugin_cc)
{
  /* A lone 1 MB flow under the example fixed-rate CC at 10 Gb/s (4 KiB payload, 62 B
   * headers per packet in that scenario) takes about 1 MB x 4158/4096 / 10 Gb/s. */
  g_autofree char *scenario = wh_test_source_path("tests/scenarios/custom-diamond.xml");
  g_autofree char *dir = g_dir_make_tmp("whsim-XXXXXX", NULL);
  const char *list[] = {"list", "--plugin", WH_FIXED_RATE_PLUGIN, NULL};
  g_autofree char *out = NULL;
  ck_assert_int_eq(wh_test_whsim(list, &out, NULL), 0);
  ck_assert_ptr_nonnull(strstr(out, "wh::FixedRateCc"));
  const char *run[] = {
      "run",  scenario,     "--out", dir, "--quiet", "--plugin", WH_FIXED_RATE_PLUGIN,
      "--cc", "fixed-rate", NULL};
  ck_assert_int_eq(wh_test_whsim(run, NULL, NULL), 0);
  g_autofree char *summary = wh_test_read_in(dir, "summary.json");
  ck_assert_ptr_nonnull(strstr(summary, "\"cc\" : \"fixed-rate\""));
  ck_assert_ptr_nonnull(strstr(summary, "\"ecn_marks\" : 0,"));
  g_autofree char *csv = wh_test_read_in(dir, "flows.csv");
  /* flow z: 1 MB from b0 to a1, alone on its path in that direction */
  g_autoptr(GPtrArray) rows = wh_test_csv_rows(csv, NULL);
  char **cols = NULL;
  for (guint i = 0; i < rows->len; i++)
    if (strcmp(((char **)rows->pdata[i])[0], "z") == 0)
      cols = rows->pdata[i];
  ck_assert_ptr_nonnull(cols);
  ck_assert_int_eq(g_strv_length(cols), 8);
  ck_assert_str_eq(cols[7], "z"); /* the key of a scenario flow is its id */
  guint64 fct = g_ascii_strtoull(cols[6], NULL, 10);
  double expect = 1e6 * 4158.0 / 4096.0 * 8 / 10e9 * 1e12;
  ck_assert_msg(fct > expect * 0.99 && fct < expect * 1.03, "FCT %" G_GUINT64_FORMAT " ps", fct);
  const char *missing[] = {"list", "--plugin", "/nonexistent/libnothing.so", NULL};
  g_autofree char *err = NULL;
  ck_assert_int_eq(wh_test_whsim(missing, NULL, &err), 2);
  ck_assert_ptr_nonnull(strstr(err, "cannot load plugin"));
  g_autofree char *f1 = g_build_filename(dir, "summary.json", NULL);
  g_autofree char *f2 = g_build_filename(dir, "flows.csv", NULL);
  g_autofree char *f3 = g_build_filename(dir, "links.csv", NULL);
  g_remove(f1);
  g_remove(f2);
  g_remove(f3);
  g_rmdir(dir);
}
END_TEST

/* The value of "key": N at its first occurrence in a JSON text. */
static guint64 json_u64(const char *json, const char *key)
{
  g_autofree char *k = g_strdup_printf("\"%s\" : ", key);
  const char *p = strstr(json, k);
  ck_assert_msg(p != NULL, "no %s", key);
  return g_ascii_strtoull(p + strlen(k), NULL, 10);
}

/* links.csv of `file`: frames and bytes summed over the ports equal link_traversals and
 * link_bytes of the summary, and the per-tier summary's frames too; every port's busy
 * time covers its bytes at its rate; every tier named in `tiers` carried frames; PFC
 * pause time appears where the run paused. */
static void check_links(const char *file, const char *const *tiers)
{
  WhRunOptions o = {0};
  g_autoptr(WhRun) run = wh_test_run_file(file, &o);
  g_autofree char *summary = wh_run_summary_json(run, FALSE);
  g_autofree char *csv = wh_run_links_csv(run);
  g_autoptr(GPtrArray) rows = wh_test_csv_rows(csv, "port,node,peer_node,tier,rate_bps,frames,"
                                                    "bytes,busy_ps,busy_fraction,pause_ps,"
                                                    "max_queue_bytes");
  guint64 frames = 0, bytes = 0, pause = 0, tier_frames[16] = {0};
  double end = (double)run->sim->now;
  for (guint i = 0; i < rows->len; i++) {
    char **f = rows->pdata[i];
    ck_assert_uint_eq(g_strv_length(f), 11);
    guint64 rate = g_ascii_strtoull(f[4], NULL, 10), fr = g_ascii_strtoull(f[5], NULL, 10);
    guint64 by = g_ascii_strtoull(f[6], NULL, 10);
    frames += fr;
    bytes += by;
    pause += g_ascii_strtoull(f[9], NULL, 10);
    double busy = (double)g_ascii_strtoull(f[7], NULL, 10),
           need = (double)by * 8 / (double)rate * 1e12;
    ck_assert_msg(busy >= need * (1 - 1e-9) && busy <= end, "%s: port %s busy %.0f < %.0f", file,
                  f[0], busy, need);
    for (int t = 0; t < WH_N_TIERS; t++)
      if (strcmp(f[3], wh_net_tier_name((WhLinkTier)t)) == 0)
        tier_frames[t] += fr;
  }
  ck_assert_uint_eq(frames, json_u64(summary, "link_traversals"));
  ck_assert_uint_eq(bytes, json_u64(summary, "link_bytes"));
  ck_assert_uint_eq(frames, run->net->c.link_traversals);
  guint64 from_tiers = 0;
  for (int t = 0; t < WH_N_TIERS; t++) {
    g_autofree char *k = g_strdup_printf("\"%s\" : {", wh_net_tier_name((WhLinkTier)t));
    const char *p = strstr(summary, k);
    ck_assert_msg(tier_frames[t] == 0 || p != NULL, "%s: tier %s missing", file, k);
    if (p) {
      from_tiers += json_u64(p, "frames");
      ck_assert_uint_eq(json_u64(p, "frames"), tier_frames[t]);
    }
  }
  ck_assert_uint_eq(from_tiers, frames);
  for (size_t i = 0; tiers[i]; i++) {
    g_autofree char *k = g_strdup_printf(",%s,", tiers[i]);
    ck_assert_msg(strstr(csv, k) != NULL, "%s: no %s link in links.csv", file, tiers[i]);
  }
  ck_assert_msg((pause > 0) == (run->net->c.pfc_pauses > 0),
                "%s: pause time %" G_GUINT64_FORMAT " with %" G_GUINT64_FORMAT " pauses", file,
                pause, run->net->c.pfc_pauses);
}

START_TEST(test_links_csv)
{
  static const char *const fat[] = {"edge", "aggregation", "core", NULL};
  check_links("tests/scenarios/fattree-k4-mixed.xml", fat);
  static const char *const node[] = {"host", "fabric", NULL};
  check_links("tests/scenarios/frontier-node-all-to-all.xml", node);
  static const char *const df[] = {"host", "local", "global", NULL};
  check_links("tests/scenarios/dragonfly-adversarial-minimal.xml", df);
}
END_TEST

/* The hosts a 16-rank all-to-all on 2 Frontier groups runs on under `placement`: the
 * sorted set of flow sources (one per rank), as text. */
static char *placed_hosts(const char *placement, uint64_t seed)
{
  g_autofree char *xml = g_strdup_printf(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<scenario name=\"place\" "
      "seed=\"%" G_GUINT64_FORMAT
      "\">\n  <topology preset=\"frontier\" groups=\"2\"/>\n  <workload>\n"
      "    <collective id=\"a\" kind=\"all-to-all\" algorithm=\"pairwise\" ranks=\"0-15\" "
      "size=\"64KB\"/>\n  </workload>\n  %s\n</scenario>\n",
      seed, placement);
  g_autoptr(GError) err = NULL;
  WhScenario *sc = wh_scenario_load_memory(xml, strlen(xml), "place.xml", &err);
  ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
  g_autoptr(WhRun) run = wh_run_new(sc, NULL, &err);
  ck_assert_msg(run != NULL, "%s", err ? err->message : "");
  wh_run_take_scenario(run, sc);
  wh_run_execute(run);
  gboolean used[2048] = {FALSE};
  for (uint32_t i = 0; i < run->tp->n_flows; i++)
    used[wh_transport_flow(run->tp, i)->src] = TRUE;
  GString *out = g_string_new(NULL);
  for (uint32_t h = 0; h < 2048; h++)
    if (used[h])
      g_string_append_printf(out, "%s%u", out->len ? " " : "", h);
  return g_string_free(out, FALSE);
}

START_TEST(test_placement)
{
  /* 16 ranks = 2 nodes of 8 GCDs */
  g_autofree char *dflt = placed_hosts("", 1);
  g_autofree char *contig = placed_hosts("<placement policy=\"contiguous\"/>", 1);
  ck_assert_str_eq(dflt, "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15");
  ck_assert_str_eq(contig, dflt);
  /* one node per switch: nodes 0 and 4 (4 nodes per switch) */
  g_autofree char *sw = placed_hosts("<placement policy=\"per-switch\"/>", 1);
  ck_assert_str_eq(sw, "0 1 2 3 4 5 6 7 32 33 34 35 36 37 38 39");
  /* an explicit list, in rank order: node 200 (group 1) holds ranks 0-7 */
  g_autofree char *list = placed_hosts("<placement policy=\"nodes\" nodes=\"200 3\"/>", 1);
  ck_assert_str_eq(list, "24 25 26 27 28 29 30 31 1600 1601 1602 1603 1604 1605 1606 1607");
  /* random: reproducible for a seed, another seed draws other nodes */
  g_autofree char *r1 = placed_hosts("<placement policy=\"random\" seed=\"7\"/>", 1);
  g_autofree char *r2 = placed_hosts("<placement policy=\"random\" seed=\"7\"/>", 2);
  g_autofree char *r3 = placed_hosts("<placement policy=\"random\" seed=\"8\"/>", 1);
  ck_assert_str_eq(r1, r2);
  ck_assert_str_ne(r1, r3);
  ck_assert_str_ne(r1, dflt);
}
END_TEST

/* A number of summary.json: the value of "key"; asserts the field is there. */
static uint64_t summary_number(const char *summary, const char *key)
{
  g_autofree char *field = g_strdup_printf("\"%s\" : ", key);
  const char *at = strstr(summary, field);
  ck_assert_msg(at != NULL, "summary.json lacks %s", key);
  return g_ascii_strtoull(at + strlen(field), NULL, 10);
}

/* The printed line that starts with `label` (transfer full; NULL: none). */
static char *printed_line(const char *out, const char *label)
{
  g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
  for (char **l = lines; *l; l++)
    if (g_str_has_prefix(*l, label))
      return g_strdup(*l);
  return NULL;
}

/* The printed Wormhole line says what the mode did, in the summary's numbers: nothing
 * without Wormhole, detection only in observe mode, fast-forwards in skip mode,
 * fast-forwards, replays and memo hits in memo mode. */
START_TEST(test_whsim_wormhole_line)
{
  static const char *const modes[] = {"off", "observe", "skip", "memo"};
  const char *mode = modes[_i];
  g_autofree char *scenario = wh_test_source_path("scenarios/quickstart.xml");
  g_autofree char *dir = g_dir_make_tmp("whsim-XXXXXX", NULL);
  g_autofree char *set = g_strdup_printf("wh::Wormhole::Mode=%s", mode);
  const char *args[] = {"run",      scenario, "--out", dir, "--scheduler",
                        "wormhole", "--set",  set,     NULL};
  const char *plain[] = {"run", scenario, "--out", dir, NULL};
  g_autofree char *out = NULL;
  ck_assert_int_eq(wh_test_whsim(_i == 0 ? plain : args, &out, NULL), 0);
  g_autofree char *summary = wh_test_read_in(dir, "summary.json");
  g_autofree char *line = printed_line(out, "wormhole ");
  wh_test_remove_tree(dir);
  if (_i == 0) {
    ck_assert_msg(line == NULL, "a Wormhole line without Wormhole: %s", line);
    ck_assert_ptr_null(strstr(summary, "wormhole_mode"));
    return;
  }
  ck_assert_msg(line != NULL, "mode %s: no Wormhole line in\n%s", mode, out);
  g_autofree char *mode_field = g_strdup_printf("\"wormhole_mode\" : \"%s\"", mode);
  ck_assert_ptr_nonnull(strstr(summary, mode_field));
  uint64_t parts = summary_number(summary, "wormhole_partitions");
  if (strcmp(mode, "observe") == 0) {
    ck_assert_ptr_null(strstr(summary, "\"fast_forwards\""));
    g_autofree char *observed =
        g_strdup_printf("wormhole   observe: %" G_GUINT64_FORMAT " partition", parts);
    ck_assert_msg(g_str_has_prefix(line, observed), "%s does not start with \"%s\"", line,
                  observed);
    ck_assert(g_str_has_suffix(line, "nothing was skipped"));
    return;
  }
  ck_assert_msg(strstr(line, "nothing was skipped") == NULL, "mode %s: %s", mode, line);
  g_autofree char *parts_text = g_strdup_printf("; %" G_GUINT64_FORMAT " partition", parts);
  ck_assert_msg(strstr(line, parts_text), "%s lacks \"%s\"", line, parts_text);
  uint64_t ff = summary_number(summary, "fast_forwards");
  ck_assert_uint_gt(ff, 0);
  g_autofree char *skipped = g_strdup_printf("wormhole   %s: %" G_GUINT64_FORMAT
                                             " fast-forwards (%" G_GUINT64_FORMAT " ended early)",
                                             mode, ff, summary_number(summary, "skip_backs"));
  ck_assert_msg(g_str_has_prefix(line, skipped), "%s does not start with \"%s\"", line, skipped);
  if (strcmp(mode, "skip") == 0) {
    ck_assert_ptr_null(strstr(line, "replays"));
    return;
  }
  uint64_t converged = summary_number(summary, "memo_replays_converged");
  uint64_t completed = summary_number(summary, "memo_replays_completed");
  uint64_t drained = summary_number(summary, "memo_replays_drained");
  uint64_t hits = summary_number(summary, "memo_hits");
  ck_assert_uint_gt(converged + completed + drained, 0);
  g_autofree char *memo = g_strdup_printf(
      "%s, %" G_GUINT64_FORMAT " replays (%" G_GUINT64_FORMAT " converged, %" G_GUINT64_FORMAT
      " completed, %" G_GUINT64_FORMAT " drained) of %" G_GUINT64_FORMAT
      " memo hits in %" G_GUINT64_FORMAT " lookups (%" G_GUINT64_FORMAT
      " hits from the memo file), ",
      skipped, converged + completed + drained, converged, completed, drained, hits,
      summary_number(summary, "memo_lookups"), summary_number(summary, "memo_hits_from_file"));
  ck_assert_msg(g_str_has_prefix(line, memo), "%s does not start with \"%s\"", line, memo);
}
END_TEST

Suite *wh_scenario_suite(void)
{
  Suite *s = suite_create("scenario");
  TCase *tc = tcase_create("scenarios");
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, test_every_scenario_both_schedulers);
  suite_add_tcase(s, tc);
  tc = tcase_create("cli");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_whsim_outputs_and_determinism);
  tcase_add_test(tc, test_command_line_overrides_scenario);
  tcase_add_test(tc, test_whsim_list_and_usage);
  tcase_add_test(tc, test_plugin_cc);
  tcase_add_loop_test(tc, test_whsim_wormhole_line, 0, 4);
  suite_add_tcase(s, tc);
  tc = tcase_create("placement");
  tcase_add_test(tc, test_placement);
  suite_add_tcase(s, tc);
  tc = tcase_create("links");
  tcase_add_test(tc, test_links_csv);
  suite_add_tcase(s, tc);
  tc = tcase_create("limits");
  tcase_add_test(tc, test_size_limits);
  suite_add_tcase(s, tc);
  TCase *wd = tcase_create("watchdog");
  tcase_add_test(wd, test_deadlock_watchdog);
  suite_add_tcase(s, wd);
  return s;
}
