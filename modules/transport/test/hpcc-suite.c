/* HPCC tests (hpcc-cc.c; Li et al., SIGCOMM 2019; the HPCC project's rdma-hw.cc and
 * run.py): a lone flow settles at eta x line rate with the window eta x line rate x base
 * RTT and as much payload in flight, and its FCT is the line-rate FCT stretched by at
 * most 1/eta; N = 4 and 16 staggered flows on a 100 Gb/s dumbbell share it fairly at
 * eta utilization, unsaturated, over near-empty queues, with no ECN mark, CNP or PFC
 * pause (and a run aiming at full utilization is seen saturated). Each case runs a few
 * seconds of CPU at most. */
#include <check.h>
#include <math.h>

#include "test-util.h"

static const double eta = 0.95; /* wh::HpccCc::Eta default */

/* ---- lone flow on the dumbbell: 3 hops of 100 Gb/s, 1 us each ---- */

START_TEST(test_lone_flow)
{
  const uint64_t size = 10000000, rate = 100000000000ULL;
  const WhTime delay = WH_US;
  const unsigned hops = 3;
  g_autoptr(WhScenario) sc = wh_scenario_new("hpcc-lone", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "1");
  wh_scenario_add_flow(sc, 0, 1, size, 0);
  WhRunOptions opts = {.cc = "hpcc"};
  g_autoptr(GError) error = NULL;
  g_autoptr(WhRun) run = wh_run_new(sc, &opts, &error);
  ck_assert_msg(run != NULL, "%s", error ? error->message : "");
  const WhTransportParams *p = &run->tp->p;
  const WhFlow *f = wh_transport_flow(run->tp, 0);
  /* base RTT: a full data frame out and an ACK back, store and forward at each hop */
  WhTime base_rtt = hops * (2 * delay + wh_time_tx(p->mtu + p->header_bytes, rate) +
                            wh_time_tx(p->ctrl_bytes, rate));
  /* mid-flow: rate settled at eta x line (+ Wai, 40 Mb/s: 0.04%); the window is
   * eta x line rate x base RTT, and the payload actually in flight is what that rate
   * carries in one base RTT (the data frames' payload share of it) within one packet */
  wh_sim_stop_at(run->sim, 400 * WH_US);
  wh_sim_run(run->sim);
  double mid_rate = f->rate;
  uint64_t mid_cwnd = f->cwnd, in_flight = f->snd_nxt - f->snd_una;
  double bdp = eta * (double)rate * wh_time_to_s(base_rtt) / 8;
  double payload_bdp = bdp * p->mtu / (p->mtu + p->header_bytes);
  fprintf(stderr,
          "hpcc lone flow at 400 us: window %" G_GUINT64_FORMAT " B, in flight %" G_GUINT64_FORMAT
          " B; eta x B x T %.0f B (payload %.0f B)\n",
          mid_cwnd, in_flight, bdp, payload_bdp);
  ck_assert_msg(fabs(mid_rate / (eta * rate) - 1) < 0.005, "mid-flow rate %.3f Gb/s",
                mid_rate * 1e-9);
  ck_assert_msg(fabs((double)mid_cwnd / bdp - 1) < 0.001,
                "window %" G_GUINT64_FORMAT " B vs eta x B x T %.0f B", mid_cwnd, bdp);
  ck_assert_msg(fabs((double)in_flight - payload_bdp) <= p->mtu,
                "in flight %" G_GUINT64_FORMAT " B vs %.0f B", in_flight, payload_bdp);
  wh_sim_stop_at(run->sim, WH_TIME_MAX);
  wh_sim_run(run->sim);
  wh_test_assert_clean_end(run);
  /* line-rate FCT: every frame serialized once at the sender, the last one H-1 more
   * times, H delays; HPCC sends the first RTT at line rate, then at eta x line */
  uint64_t full = size / p->mtu, rest = size % p->mtu;
  WhTime serial = full * wh_time_tx(p->mtu + p->header_bytes, rate) +
                  (rest ? wh_time_tx(rest + p->header_bytes, rate) : 0);
  WhTime last = wh_time_tx((rest ? rest : p->mtu) + p->header_bytes, rate);
  WhTime latency = (hops - 1) * last + hops * delay;
  double ideal = (double)(serial + latency);
  double at_eta = (double)serial / eta + (double)latency;
  double fct = (double)f->finish;
  fprintf(stderr,
          "hpcc lone 10 MB flow: FCT %.2f us, line-rate FCT %.2f us (x%.4f), at eta %.2f us; "
          "mid-flow rate %.3f Gb/s, window %" G_GUINT64_FORMAT " B, base RTT %.3f us\n",
          fct * 1e-6, ideal * 1e-6, fct / ideal, at_eta * 1e-6, mid_rate * 1e-9, mid_cwnd,
          wh_time_to_s(base_rtt) * 1e6);
  ck_assert_msg(fct >= ideal && fct <= 1.005 * at_eta, "FCT %.0f ps, line rate %.0f, at eta %.0f",
                fct, ideal, at_eta);
  ck_assert_uint_eq(run->net->c.drops, 0);
  ck_assert_uint_eq(run->tp->c.retx_bytes, 0);
}
END_TEST

/* BaseRtt overrides the route's RTT: the initial window is line rate x BaseRtt. */
START_TEST(test_base_rtt_param)
{
  g_autoptr(WhScenario) sc = wh_scenario_new("hpcc-base-rtt", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "1");
  wh_scenario_add_flow(sc, 0, 1, 1000000, 0);
  char *sets[] = {"wh::HpccCc::BaseRtt=10us", NULL};
  WhRunOptions opts = {.cc = "hpcc", .sets = sets};
  g_autoptr(GError) error = NULL;
  g_autoptr(WhRun) run = wh_run_new(sc, &opts, &error);
  ck_assert_msg(run != NULL, "%s", error ? error->message : "");
  wh_sim_stop_at(run->sim, WH_NS);
  wh_sim_run(run->sim);
  ck_assert_uint_eq(wh_transport_flow(run->tp, 0)->cwnd, 125000); /* 100 Gb/s x 10 us */
  wh_sim_stop_at(run->sim, WH_TIME_MAX);
  wh_sim_run(run->sim);
  wh_test_assert_clean_end(run);
}
END_TEST

/* ---- shared bottleneck ---- */

/* HPCC holds the most loaded link's normalized inflight at eta: the bottleneck runs at
 * eta of its capacity plus what the flows' additive steps add between multiplicative
 * ones (at most (1 - eta) with the Wai below), and is never saturated: at least 1% of
 * its time stays idle (a saturated link, as in test_saturated_control, sends
 * 100% of the time behind a standing queue), and the queue term
 * is driven to zero, so in steady state (no flow joins in the measured half) a queue
 * only forms where paced packets of different senders coincide: median under 10 KB
 * (ten frames), p99 under 50 KB (below one BDP, 78 KB). Nothing is ECN-marked, no CNP
 * is sent and the queue never nears PFC's 1 MB XOFF. */
static void check_steady(WhFairResult r)
{
  ck_assert_msg(r.util > eta - 0.03 && r.util < 0.99, "utilization %.4f", r.util);
  ck_assert_msg(r.q50 < 10000, "queue median %" G_GUINT64_FORMAT " B", r.q50);
  ck_assert_msg(r.q99 < 50000, "queue p99 %" G_GUINT64_FORMAT " B", r.q99);
  ck_assert_uint_eq(r.ecn_marks, 0);
  ck_assert_uint_eq(r.cnps, 0);
  ck_assert_uint_eq(r.pfc_pauses, 0);
}

/* Fairness needs the additive increase to dominate the per-flow bias of the queue
 * term: a paced flow never queues behind itself, so a larger flow reads a slightly
 * shorter queue (here ~0.1% of u), and at equilibrium R_i = Wai c_i / (c_i - 1) with
 * c_i - 1 ~ N Wai / (eta B), so a bias well under N Wai / B shifts the shares. The
 * tests set Wai by the paper's rule for N flows on the link, W_AI = W_init (1 - eta) / N
 * (N increases fill the headroom in one RTT): (1 - eta) x 100 Gb/s / N. */
static WhFairResult run_fair(unsigned n, WhTime gap)
{
  char wai[64];
  g_snprintf(wai, sizeof wai, "wh::HpccCc::Wai=%.0fbps", (1 - eta) * 100e9 / n);
  char *sets[] = {wai, NULL};
  return wh_test_shared_bottleneck("hpcc", n, gap, 20 * WH_MS, sets);
}

START_TEST(test_4_flows)
{
  WhFairResult r = run_fair(4, 500 * WH_US);
  wh_test_assert_fair(r, 4);
  check_steady(r);
}
END_TEST

START_TEST(test_16_flows)
{
  WhFairResult r = run_fair(16, 200 * WH_US);
  wh_test_assert_fair(r, 16);
  check_steady(r);
}
END_TEST

/* With run.py's Wai (40 Mb/s at 100 Gb/s) the link still runs at eta over near-empty
 * queues, but the shares settle where the queue-term bias puts them (not checked). */
START_TEST(test_4_flows_run_py_wai)
{
  check_steady(wh_test_shared_bottleneck("hpcc", 4, 500 * WH_US, 20 * WH_MS, NULL));
}
END_TEST

/* Negative control: HPCC aiming at full utilization (eta = 1) with additive steps four
 * times the fair ones saturates the link, and check_steady's bound sees it. */
START_TEST(test_saturated_control)
{
  char *sets[] = {"wh::HpccCc::Eta=1", "wh::HpccCc::Wai=5Gbps", NULL};
  WhFairResult r = wh_test_shared_bottleneck("hpcc", 4, 500 * WH_US, 20 * WH_MS, sets);
  ck_assert_msg(r.util >= 0.99, "utilization %.4f", r.util);
}
END_TEST

Suite *wh_hpcc_suite(void)
{
  Suite *s = suite_create("hpcc");
  TCase *tc = tcase_create("lone-flow");
  tcase_add_test(tc, test_lone_flow);
  tcase_add_test(tc, test_base_rtt_param);
  suite_add_tcase(s, tc);
  tc = tcase_create("fairness");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_4_flows);
  tcase_add_test(tc, test_16_flows);
  tcase_add_test(tc, test_4_flows_run_py_wai);
  tcase_add_test(tc, test_saturated_control);
  suite_add_tcase(s, tc);
  return s;
}
