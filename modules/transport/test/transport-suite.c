/* Transport and congestion-control tests: lone-flow FCT against the store-and-
 * forward formula, DCQCN fairness and queue bounds on a shared bottleneck, incast
 * with and without PFC (go-back-N recovery), and end-state conservation on every
 * run. Runs are stepped with wh_sim_stop_at to sample flows and queues: stepping
 * adds no events, so it does not perturb the run it observes. */
#include <check.h>
#include <math.h>

#include "test-util.h"
#include "topology.h"

/* ---- lone flow: FCT = sum of frame serializations + (H-1) x last frame + H delays
 *      + (H-1) switch delays, on H equal-rate hops ---- */

static void check_lone_flow(uint64_t size)
{
  const WhTime delay = WH_US, swdelay = 200 * WH_NS;
  const uint64_t rate = 100000000000ULL;
  g_autoptr(WhScenario) sc = wh_scenario_new("lone-flow", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "1");
  wh_scenario_add_set(sc, "wh::Switch::Delay", "200ns");
  wh_scenario_add_flow(sc, 0, 1, size, 0);
  g_autoptr(WhRun) run = wh_test_run(sc, NULL);
  wh_test_assert_clean_end(run);
  const WhTransportParams *p = &run->tp->p;
  uint64_t full = size / p->mtu, rest = size % p->mtu;
  WhTime serial = full * wh_time_tx(p->mtu + p->header_bytes, rate) +
                  (rest ? wh_time_tx(rest + p->header_bytes, rate) : 0);
  WhTime last = wh_time_tx((rest ? rest : p->mtu) + p->header_bytes, rate);
  const unsigned hops = 3;
  WhTime expect = serial + (hops - 1) * last + hops * delay + (hops - 1) * swdelay;
  WhTime got = wh_transport_flow(run->tp, 0)->finish;
  /* the engine is deterministic and the formula counts every frame: within half a
   * frame time, below any one of its delays (3 x 1 us, 2 x 200 ns) or of the last
   * frame's serializations per hop */
  WhTime frame = wh_time_tx(p->mtu + p->header_bytes, rate);
  fprintf(stderr, "lone flow %" G_GUINT64_FORMAT " B: FCT %.3f us, formula %.3f us (%+.1f ns)\n",
          size, (double)got * 1e-6, (double)expect * 1e-6, ((double)got - (double)expect) * 1e-3);
  ck_assert_msg(2 * got <= 2 * expect + frame && 2 * got + frame >= 2 * expect,
                "size %" G_GUINT64_FORMAT ": FCT %" G_GUINT64_FORMAT
                " ps, formula %" G_GUINT64_FORMAT " ps, tolerance %" G_GUINT64_FORMAT " ps",
                size, got, expect, frame / 2);
  ck_assert_uint_eq(run->net->c.drops, 0);
}

START_TEST(test_lone_flow_one_packet)
{
  check_lone_flow(1000);
}
END_TEST

START_TEST(test_lone_flow_100kb)
{
  check_lone_flow(100000);
}
END_TEST

START_TEST(test_lone_flow_100mb)
{
  check_lone_flow(100000000);
}
END_TEST

/* ---- shared bottleneck: N staggered flows on a dumbbell ---- */

/* "Near Kmin..Kmax": half of the time at most 1.5 x Kmax and 99% of the time at most
 * 2 x Kmax, never drained to nothing for most of the window. */
static void check_queue(WhFairResult r)
{
  const double kmin = 400e3, kmax = 1600e3;
  ck_assert_msg(r.q50 >= kmin / 2 && r.q50 <= 1.5 * kmax, "queue median %" G_GUINT64_FORMAT " B",
                r.q50);
  ck_assert_msg(r.q99 <= 2 * kmax, "queue p99 %" G_GUINT64_FORMAT " B", r.q99);
}

START_TEST(test_dcqcn_4_flows)
{
  WhFairResult r = wh_test_shared_bottleneck("dcqcn", 4, 500 * WH_US, 100 * WH_MS, NULL);
  ck_assert_uint_gt(r.ecn_marks, 0);
  ck_assert_uint_gt(r.cnps, 0);
  ck_assert_msg(r.util > 0.9, "utilization %.3f", r.util);
  wh_test_assert_fair(r, 4);
  check_queue(r);
}
END_TEST

START_TEST(test_dcqcn_16_flows)
{
  WhFairResult r = wh_test_shared_bottleneck("dcqcn", 16, 200 * WH_US, 100 * WH_MS, NULL);
  ck_assert_uint_gt(r.ecn_marks, 0);
  ck_assert_uint_gt(r.cnps, 0);
  wh_test_assert_fair(r, 16);
  check_queue(r);
  ck_assert_msg(r.util > 0.9, "utilization %.3f", r.util);
}
END_TEST

/* ---- DCQCN's lazy increase ticks ----
 * 4 hosts with 6 flows each into one receiver over a 40 Gb/s bottleneck: rates are cut
 * and recover while flows of one NIC wait inside their pacing gaps or queue at it.
 * With wh::DcqcnCc::IncreaseEvents every increase tick is an event that syncs the rate
 * and re-paces its flow; every flow must end at the same picosecond as with the ticks
 * applied lazily, and the events must show that ticks ran. */

static WhRun *run_lazy_ticks(gboolean events)
{
  g_autoptr(WhScenario) sc = wh_scenario_new("lazy-ticks", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "4");
  wh_scenario_add_set(sc, "wh::Dumbbell::BottleneckRate", "40Gbps");
  for (uint32_t h = 0; h < 4; h++)
    for (uint32_t k = 0; k < 6; k++)
      wh_scenario_add_flow(sc, h, 4, 1000000 + 150000 * k, (h * 6 + k) * 20 * WH_US);
  char *sets[] = {events ? "wh::DcqcnCc::IncreaseEvents=true" : "wh::DcqcnCc::IncreaseEvents=false",
                  NULL};
  WhRunOptions opts = {.sets = sets};
  WhRun *run = wh_test_run(sc, &opts);
  wh_test_assert_clean_end(run);
  return run;
}

START_TEST(test_dcqcn_lazy_ticks)
{
  g_autoptr(WhRun) lazy = run_lazy_ticks(FALSE);
  g_autoptr(WhRun) events = run_lazy_ticks(TRUE);
  ck_assert_uint_gt(lazy->tp->c.cnps, 100);
  ck_assert_uint_eq(lazy->tp->n_flows, events->tp->n_flows);
  for (uint32_t i = 0; i < lazy->tp->n_flows; i++) {
    const WhFlow *a = wh_transport_flow(lazy->tp, i), *b = wh_transport_flow(events->tp, i);
    ck_assert_msg(a->finish == b->finish && a->bytes_sent == b->bytes_sent,
                  "flow %u: finish %" G_GUINT64_FORMAT " ps lazy, %" G_GUINT64_FORMAT
                  " ps with tick events",
                  i, (guint64)a->finish, (guint64)b->finish);
  }
  ck_assert_uint_eq(lazy->tp->c.cnps, events->tp->c.cnps);
  ck_assert_uint_eq(wh_net_ecn_marks(lazy->net), wh_net_ecn_marks(events->net));
  uint64_t ticks = events->sim->events_executed - lazy->sim->events_executed;
  fprintf(stderr,
          "lazy ticks: %" G_GUINT64_FORMAT " events, %" G_GUINT64_FORMAT
          " more with tick events, %" G_GUINT64_FORMAT " CNPs\n",
          (guint64)lazy->sim->events_executed, (guint64)ticks, (guint64)lazy->tp->c.cnps);
  ck_assert_uint_gt(events->sim->events_executed, lazy->sim->events_executed + 1000);
}
END_TEST

/* ---- incast 16:1 ---- */

START_TEST(test_incast_pfc_lossless)
{
  g_autoptr(WhRun) run = wh_test_run_file("scenarios/incast-16to1.xml", NULL);
  wh_test_assert_clean_end(run);
  ck_assert_uint_gt(run->net->c.pfc_pauses, 0);
  ck_assert_uint_eq(run->net->c.drops, 0);
  ck_assert_uint_eq(run->tp->c.retx_bytes, 0);
}
END_TEST

START_TEST(test_incast_lossy_go_back_n)
{
  char *sets[] = {"wh::Switch::PfcEnabled=false", "wh::Switch::BufferSize=300KB", NULL};
  WhRunOptions opts = {.sets = sets};
  g_autoptr(WhRun) run = wh_test_run_file("scenarios/incast-16to1.xml", &opts);
  wh_test_assert_clean_end(run);
  ck_assert_uint_eq(run->net->c.pfc_pauses, 0);
  ck_assert_uint_gt(run->net->c.drops, 0);
  ck_assert_uint_gt(run->tp->c.nacks, 0);
  ck_assert_uint_gt(run->tp->c.retx_bytes, 0);
  for (uint32_t i = 0; i < run->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(run->tp, i);
    ck_assert_uint_eq(f->rcv_nxt, f->size);
  }
}
END_TEST

Suite *wh_transport_suite(void)
{
  Suite *s = suite_create("transport");
  TCase *tc = tcase_create("lone-flow");
  tcase_add_test(tc, test_lone_flow_one_packet);
  tcase_add_test(tc, test_lone_flow_100kb);
  tcase_add_test(tc, test_lone_flow_100mb);
  suite_add_tcase(s, tc);
  tc = tcase_create("dcqcn-fairness");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_dcqcn_4_flows);
  tcase_add_test(tc, test_dcqcn_16_flows);
  tcase_add_test(tc, test_dcqcn_lazy_ticks);
  suite_add_tcase(s, tc);
  tc = tcase_create("incast");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_incast_pfc_lossless);
  tcase_add_test(tc, test_incast_lossy_go_back_n);
  suite_add_tcase(s, tc);
  return s;
}
