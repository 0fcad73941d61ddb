/* Tests of Wormhole's steady-state monitor on ns-3 (wh-ns3-wormhole.h, ns3::WhCScheduler
 * with Class=wormhole): every Class value passes the conformance check against
 * MapScheduler; a dumbbell (two DCTCP flows through a RED/ECN bottleneck, a UDP stream
 * the other way) runs in two forked children, without and with the monitor, which
 * must give the same flow times, event count and link traversals, while the monitor
 * (reading the sockets' windows and RTTs through their trace sources) accounts for
 * every payload byte of every flow exactly; an unchanged ns-3 program
 * (validation/ns3/plain) prints the same results stock, on Class=heap and on
 * Class=wormhole with libwh-ns3-wormhole.so preloaded, and gets wormhole-ns3.json from
 * the library; the same program, loading the library only after a first simulation,
 * runs its second one on Class=wormhole as stock, told that ns-3 was already used
 * (no monitor, no numbers); whsim's --ns3-wormhole observe leaves flows.csv and summary.json as
 * they are (dequeue marking: the hook queue disc); and bad inputs. About 15 s. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "test-util.h"
#include "wh-ns3-scheduler.h"
#include "wh-ns3-wormhole.h"
#include "wh-ns3.h"

#define RATE 10000000000ULL
#define NFLOWS 3

static const uint64_t flow_bytes[NFLOWS] = {2000000, 2000000, 1000000};

typedef struct {
  int rc, step;
  uint64_t finish[NFLOWS];
  WhNs3Stats stats;
  uint32_t monitor_flows;
  WhNs3WormholeFlow flows[NFLOWS + 1];
  int report_before_rc, report_rc;
  int report_has_speedup;
} Observed;

#define STEP(r, n, call)                                                                           \
  do {                                                                                             \
    if (((r)->rc = (call)) != WH_NS3_OK) {                                                         \
      (r)->step = (n);                                                                             \
      return;                                                                                      \
    }                                                                                              \
  } while (0)

/* Senders 0, 1 -> switch 2 -> (RED/ECN K = 20) -> switch 3 -> receivers 4, 5; DCTCP
 * 0 -> 4 and 1 -> 5 (20 us later), UDP at 2 Gb/s 5 -> 1 against the ACKs. */
static void dumbbell(gboolean observe, Observed *r)
{
  WhNs3TcpConfig tcp = {.segment_size = 1000,
                        .initial_cwnd = 10,
                        .socket_buffer = 1 << 20,
                        .delack_count = 1,
                        .min_rto_ps = 200000000000ULL};
  WhNs3Sim *sim = NULL;
  STEP(r, 1, wh_ns3_sim_new(&tcp, &sim));
  WhNs3WormholeParams p = {.theta = 0.2,
                           .window = 100,
                           .period_ps = 10000000,
                           .idle_window_ps = 10000000,
                           .cwnd_rtt = 1};
  if (observe)
    STEP(r, 2, wh_ns3_wormhole_observe(&p));
  STEP(r, 3, wh_ns3_add_nodes(sim, 6, NULL));
  WhNs3QueueConfig edge = {.kind = WH_NS3_QUEUE_FIFO, .limit_packets = 1000};
  WhNs3QueueConfig red = {
      .kind = WH_NS3_QUEUE_RED_ECN, .limit_packets = 1000, .ecn_threshold_pkts = 20};
  static const uint32_t ends[5][2] = {{0, 2}, {1, 2}, {2, 3}, {3, 4}, {3, 5}};
  for (uint32_t l = 0; l < 5; l++)
    STEP(r, 4,
         wh_ns3_add_link(sim, ends[l][0], ends[l][1], RATE, l == 2 ? 4000000 : 1000000,
                         l == 2 ? &red : &edge));
  STEP(r, 5, wh_ns3_finalize(sim));
  STEP(r, 6, wh_ns3_add_tcp_flow(sim, 0, 4, flow_bytes[0], 0, WH_NS3_TCP_DCTCP, NULL));
  STEP(r, 7, wh_ns3_add_tcp_flow(sim, 1, 5, flow_bytes[1], 20000000, WH_NS3_TCP_DCTCP, NULL));
  STEP(r, 8, wh_ns3_add_udp_flow(sim, 5, 1, flow_bytes[2], 10000000, 2000000000ULL, 1000, NULL));
  char *json = NULL;
  r->report_before_rc = wh_ns3_wormhole_report(&json); /* not run yet */
  STEP(r, 10, wh_ns3_run(sim, 0));
  for (uint32_t f = 0; f < NFLOWS; f++)
    STEP(r, 11, wh_ns3_flow_times(sim, f, NULL, &r->finish[f]));
  STEP(r, 12, wh_ns3_stats(sim, &r->stats));
  r->monitor_flows = wh_ns3_wormhole_n_flows();
  for (uint32_t i = 0; i < r->monitor_flows && i <= NFLOWS; i++)
    wh_ns3_wormhole_flow(i, &r->flows[i]);
  r->report_rc = wh_ns3_wormhole_report(&json);
  r->report_has_speedup = json && strstr(json, "\"estimated_speedup\": ") != NULL &&
                          strstr(json, "\"quantity\": \"cwnd-rtt\"") != NULL;
  free(json);
  wh_ns3_sim_free(sim);
}

static void run_child(const void *observe, void *out)
{
  dumbbell(*(const gboolean *)observe, out);
}

/* dumbbell(observe) in a forked child: one ns-3 simulation per process. */
static void reap(WhTestChild c, const char *name, Observed *r)
{
  wh_test_join(c, name, r);
  ck_assert_msg(r->rc == WH_NS3_OK, "%s: step %d: %s", name, r->step, wh_ns3_strerror(r->rc));
}

START_TEST(test_every_class_conforms)
{
  static const char *const names[] = {"heap", "calendar", "wormhole"};
  for (unsigned i = 0; i < 3; i++)
    ck_assert_msg(wh_ns3_c_scheduler_check_class(names[i], 100000, 7) == WH_NS3_OK, "Class=%s",
                  names[i]);
  ck_assert_int_eq(wh_ns3_c_scheduler_check_class("map", 10, 1), WH_NS3_EINVAL);
  ck_assert_int_eq(wh_ns3_c_scheduler_check_class(NULL, 10, 1), WH_NS3_EINVAL);
  WhNs3SchedulerCounts c; /* a check selects nothing */
  ck_assert_int_eq(wh_ns3_c_scheduler_counts(&c), WH_NS3_ESTATE);
}
END_TEST

START_TEST(test_monitor_changes_nothing_and_counts_every_byte)
{
  static const gboolean no = FALSE, yes = TRUE;
  WhTestChild off = wh_test_fork(run_child, &no, sizeof(Observed));
  WhTestChild on = wh_test_fork(run_child, &yes, sizeof(Observed));
  Observed a, b;
  reap(off, "without the monitor", &a);
  reap(on, "with the monitor", &b);
  for (int f = 0; f < NFLOWS; f++)
    ck_assert_msg(a.finish[f] == b.finish[f], "flow %d: finish %llu ps vs %llu ps", f,
                  (unsigned long long)a.finish[f], (unsigned long long)b.finish[f]);
  ck_assert_uint_eq(a.stats.events, b.stats.events);
  ck_assert_uint_eq(a.stats.link_traversals, b.stats.link_traversals);
  ck_assert_uint_eq(a.stats.end_ps, b.stats.end_ps);
  ck_assert_uint_eq(a.monitor_flows, 0);
  ck_assert_int_eq(a.report_rc, WH_NS3_ESTATE);
  /* the monitor saw exactly the three flows, in order of their first packet, each
   * over its devices (three hops each way; UDP one way) and every payload byte once */
  ck_assert_uint_eq(b.monitor_flows, NFLOWS);
  for (int i = 0; i < NFLOWS; i++) {
    const WhNs3WormholeFlow *f = &b.flows[i];
    uint32_t id = f->dport - 10000u;
    ck_assert_uint_lt(id, NFLOWS);
    ck_assert_uint_eq(f->proto, id == 2 ? 17 : 6);
    ck_assert_uint_eq(f->n_ports, id == 2 ? 3 : 6);
    ck_assert_msg(f->delivered == flow_bytes[id], "flow %u: the monitor counted %llu of %llu bytes",
                  id, (unsigned long long)f->delivered, (unsigned long long)flow_bytes[id]);
  }
  ck_assert_int_eq(b.report_before_rc, WH_NS3_ESTATE);
  ck_assert_int_eq(b.report_rc, WH_NS3_OK);
  ck_assert(b.report_has_speedup);
}
END_TEST

/* Runs the plain ns-3 program in `dir` with `args` (NULL-terminated), the library
 * preloaded when `preload`, and the environment variables `vars` ("NAME=VALUE",
 * NULL-terminated, nullable); returns the exit status (-1: killed) and its output. */
static int run_plain(const char *dir, gboolean preload, const char *const *args,
                     const char *const *vars, char **out, char **err)
{
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (gpointer)WH_NS3_PLAIN_PATH);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add(argv, (gpointer)*a);
  g_ptr_array_add(argv, NULL);
  char **env = g_get_environ();
  env = g_environ_unsetenv(env, "LD_PRELOAD");
#ifdef WH_SANITIZER_PRELOAD
  /* the library is sanitized and the plain program is not: the sanitizer runtimes go
   * first, and the program's own allocations left at exit (ns-3's) are not reported */
  if (preload) {
    env = g_environ_setenv(env, "LD_PRELOAD", WH_SANITIZER_PRELOAD ":" WH_NS3_WORMHOLE_LIB, TRUE);
    env = g_environ_setenv(env, "ASAN_OPTIONS", "detect_leaks=0", TRUE);
  }
#else
  if (preload)
    env = g_environ_setenv(env, "LD_PRELOAD", WH_NS3_WORMHOLE_LIB, TRUE);
#endif
  for (const char *const *v = vars; v && *v; v++) {
    g_auto(GStrv) kv = g_strsplit(*v, "=", 2);
    env = g_environ_setenv(env, kv[0], kv[1], TRUE);
  }
  int status = -1;
  g_autoptr(GError) error = NULL;
  gboolean ok = g_spawn_sync(dir, (char **)argv->pdata, env, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                             &status, &error);
  g_ptr_array_free(argv, TRUE);
  g_strfreev(env);
  ck_assert_msg(ok, "cannot run %s: %s", WH_NS3_PLAIN_PATH, error ? error->message : "?");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static unsigned count_of(const char *text, const char *what)
{
  unsigned n = 0;
  for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
    n++;
  return n;
}

START_TEST(test_unchanged_program_three_ways)
{
  g_autofree char *dir = g_dir_make_tmp("wh-ns3-plain-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  static const char *const stock[] = {NULL};
  static const char *const heap[] = {"--SchedulerType=ns3::WhCScheduler",
                                     "--ns3::WhCScheduler::Class=heap", NULL};
  /* wormhole through ns-3's environment variables, which any program reads */
  static const char *const wormhole_env[] = {
      "NS_GLOBAL_VALUE=SchedulerType=ns3::WhCScheduler",
      "NS_ATTRIBUTE_DEFAULT=ns3::WhCScheduler::Class=wormhole;ns3::WhCScheduler::Window=100", NULL};
  g_autofree char *out_stock = NULL, *out_heap = NULL, *out_wh = NULL;
  ck_assert_int_eq(run_plain(dir, FALSE, stock, NULL, &out_stock, NULL), 0);
  ck_assert_msg(strstr(out_stock, "flow 1 fct_ns ") && strstr(out_stock, "events "), "%s",
                out_stock);
  ck_assert_int_eq(run_plain(dir, TRUE, heap, NULL, &out_heap, NULL), 0);
  g_autofree char *report = g_build_filename(dir, "wormhole-ns3.json", NULL);
  ck_assert(!g_file_test(report, G_FILE_TEST_EXISTS)); /* only Class=wormhole writes it */
  ck_assert_int_eq(run_plain(dir, TRUE, stock, wormhole_env, &out_wh, NULL), 0);
  ck_assert_str_eq(out_heap, out_stock);
  ck_assert_str_eq(out_wh, out_stock);
  /* the library attached the monitor and wrote the report on Simulator::Destroy */
  g_autofree char *json = wh_test_read_in(dir, "wormhole-ns3.json");
  ck_assert_uint_eq(count_of(json, "\"tcp\", 2000000, 6, true]"), 2);
  ck_assert_ptr_nonnull(strstr(json, "\"estimated_speedup\": "));
  ck_assert_ptr_nonnull(strstr(json, "\"window\": 100,"));
  ck_assert_ptr_nonnull(strstr(json, "\"status\": \"ok\","));
  /* without the library, ns-3 does not know the scheduler */
  g_autofree char *err = NULL;
  ck_assert_int_ne(run_plain(dir, FALSE, heap, NULL, NULL, &err), 0);
  ck_assert_ptr_nonnull(strstr(err, "Invalid command-line argument: --SchedulerType"));
  wh_test_remove_tree(dir);
}
END_TEST

/* An unchanged program that ran and destroyed a simulation, then loads the library
 * (dlopen) and runs again with Class=wormhole: the library sees the earlier use, says
 * so once on stderr, attaches no monitor and leaves the simulation as stock. */
START_TEST(test_unchanged_program_loads_library_after_a_run)
{
  g_autofree char *dir = g_dir_make_tmp("wh-ns3-plain-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  static const char *const twice[] = {"--runs=2", NULL};
  static const char *const twice_plugin[] = {"--runs=2", "--plugin=" WH_NS3_WORMHOLE_LIB, NULL};
  static const char *const wormhole_env[] = {
      "NS_GLOBAL_VALUE=SchedulerType=ns3::WhCScheduler",
      "NS_ATTRIBUTE_DEFAULT=ns3::WhCScheduler::Class=wormhole;ns3::WhCScheduler::Window=100", NULL};
  g_autofree char *out_stock = NULL, *out_wh = NULL, *err_wh = NULL;
  ck_assert_int_eq(run_plain(dir, FALSE, twice, NULL, &out_stock, NULL), 0);
  ck_assert_msg(strstr(out_stock, "run 2\nflow 0 fct_ns "), "%s", out_stock);
  ck_assert_int_eq(run_plain(dir, FALSE, twice_plugin, wormhole_env, &out_wh, &err_wh), 0);
  ck_assert_str_eq(out_wh, out_stock);
  static const char *const line = "ns3::WhCScheduler: ns-3 was already used in this process "
                                  "(WH_NS3_EUNUSED): ";
  ck_assert_msg(count_of(err_wh, line) == 1, "%s", err_wh);
  g_autofree char *json = wh_test_read_in(dir, "wormhole-ns3.json");
  ck_assert_msg(strstr(json, "\"status\": \"WH_NS3_EUNUSED\""), "%s", json);
  ck_assert_msg(!strstr(json, "\"estimated_speedup\"") && !strstr(json, "\"ns3_flows\""), "%s",
                json);
  wh_test_remove_tree(dir);
}
END_TEST

START_TEST(test_unknown_class_names_the_valid_ones)
{
  static const char *const bogus[] = {"--SchedulerType=ns3::WhCScheduler",
                                      "--ns3::WhCScheduler::Class=fastest", NULL};
  g_autofree char *err = NULL;
  ck_assert_int_ne(run_plain(NULL, TRUE, bogus, NULL, NULL, &err), 0);
  ck_assert_msg(strstr(err, "Class \"fastest\" is not one of heap, calendar, wormhole"), "%s", err);
}
END_TEST

START_TEST(test_whsim_observe_changes_no_output)
{
  g_autofree char *xml = wh_test_source_path("validation/ns3/dumbbell-2.xml");
  g_autofree char *dir = g_dir_make_tmp("wh-ns3-observe-XXXXXX", NULL);
  g_autofree char *off = g_build_filename(dir, "off", NULL);
  g_autofree char *on = g_build_filename(dir, "on", NULL);
  const char *const run_off[] = {"run",     xml,  "--engine", "ns3", "--ns3-marking",
                                 "dequeue", "-q", "--out",    off,   NULL};
  const char *const run_on[] = {
      "run", xml,     "--engine", "ns3", "--ns3-marking", "dequeue", "--ns3-wormhole", "observe",
      "-q",  "--out", on,         NULL};
  ck_assert_int_eq(wh_test_whsim(run_off, NULL, NULL), 0);
  ck_assert_int_eq(wh_test_whsim(run_on, NULL, NULL), 0);
  g_autofree char *csv_off = wh_test_read_in(off, "flows.csv");
  g_autofree char *csv_on = wh_test_read_in(on, "flows.csv");
  ck_assert_str_eq(csv_on, csv_off);
  g_autofree char *sum_off = wh_test_read_in(off, "summary.json");
  g_autofree char *sum_on = wh_test_read_in(on, "summary.json");
  g_autofree char *strip_off = wh_test_strip_wall(sum_off);
  g_autofree char *strip_on = wh_test_strip_wall(sum_on);
  ck_assert_str_eq(strip_on, strip_off);
  g_autofree char *json = wh_test_read_in(on, "wormhole-ns3.json");
  ck_assert_uint_eq(count_of(json, "\"tcp\", 20000000, 6, "), 2);
  wh_test_remove_tree(dir);
}
END_TEST

START_TEST(test_bad_inputs)
{
  g_autofree char *xml = wh_test_source_path("validation/ns3/dumbbell-2.xml");
  g_autofree char *err = NULL;
  const char *const skip[] = {"run", xml, "--engine", "ns3", "--ns3-wormhole", "skip", NULL};
  ck_assert_int_eq(wh_test_whsim(skip, NULL, &err), 2);
  ck_assert_msg(strstr(err, "--ns3-wormhole skip: expected observe"), "%s", err);
  g_free(g_steal_pointer(&err));
  const char *const native[] = {"run", xml, "--ns3-wormhole", "observe", NULL};
  ck_assert_int_eq(wh_test_whsim(native, NULL, &err), 2);
  ck_assert_msg(strstr(err, "--ns3-wormhole applies only with --engine ns3"), "%s", err);
  g_free(g_steal_pointer(&err));
  const char *const rate[] = {"run",
                              xml,
                              "--engine",
                              "ns3",
                              "--ns3-wormhole",
                              "observe",
                              "--set",
                              "wh::WormholeStudy::Quantity=cc-rate",
                              NULL};
  ck_assert_int_eq(wh_test_whsim(rate, NULL, &err), 2);
  ck_assert_msg(strstr(err, "on ns-3 the monitor samples cwnd-rtt or delivered"), "%s", err);

  /* the C API: order, parameters, and a process whose ns-3 was used and torn down */
  WhNs3WormholeParams p = {.theta = 0.05, .window = 100, .period_ps = 1000000};
  ck_assert_int_eq(wh_ns3_wormhole_observe(&p), WH_NS3_ESTATE); /* no simulation yet */
  ck_assert_int_eq(wh_ns3_wormhole_observe(NULL), WH_NS3_EINVAL);
  WhNs3WormholeParams bad = p;
  bad.theta = 1;
  ck_assert_int_eq(wh_ns3_wormhole_observe(&bad), WH_NS3_EINVAL);
  bad = p;
  bad.cwnd_rtt = 2;
  ck_assert_int_eq(wh_ns3_wormhole_observe(&bad), WH_NS3_EINVAL);
  bad = p;
  bad.window = 1;
  ck_assert_int_eq(wh_ns3_wormhole_observe(&bad), WH_NS3_EINVAL);
  WhNs3Sim *sim = NULL;
  ck_assert_int_eq(wh_ns3_sim_new(NULL, &sim), WH_NS3_OK);
  ck_assert_int_eq(wh_ns3_add_nodes(sim, 2, NULL), WH_NS3_OK);
  wh_ns3_sim_free(sim);
  ck_assert_int_eq(wh_ns3_wormhole_observe(&p), WH_NS3_EUNUSED);
  char *json = NULL;
  ck_assert_int_eq(wh_ns3_wormhole_report(&json), WH_NS3_ESTATE);
  ck_assert_ptr_null(json);
}
END_TEST

Suite *wh_ns3_wormhole_suite(void)
{
  Suite *s = suite_create("ns3-wormhole");
  TCase *tc = tcase_create("monitor");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_every_class_conforms);
  tcase_add_test(tc, test_monitor_changes_nothing_and_counts_every_byte);
  tcase_add_test(tc, test_unchanged_program_three_ways);
  tcase_add_test(tc, test_unchanged_program_loads_library_after_a_run);
  tcase_add_test(tc, test_unknown_class_names_the_valid_ones);
  tcase_add_test(tc, test_whsim_observe_changes_no_output);
  tcase_add_test(tc, test_bad_inputs);
  suite_add_tcase(s, tc);
  return s;
}
