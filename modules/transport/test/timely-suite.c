/* TIMELY tests: a lone flow stays at line rate (FCT against the store-and-forward
 * formula); 4 staggered flows on a 100 Gb/s dumbbell keep the bottleneck busy with the
 * aggregate rate cycling around capacity (original TIMELY; fairness is printed, not
 * asserted: the original can settle unfairly), and the patched TIMELY of Zhu et al.
 * converges to its unique fixed point: fair rates and the standing queue its equation
 * predicts, for 4 and 16 flows. Rates are sampled by stepping the run (no events
 * added); each run simulates at most 100 ms (well under a second of wall time). */
#include <check.h>
#include <math.h>

#include "test-util.h"
#include "topology.h"

#define RATE 100e9

/* A lone flow's RTT never reaches TLow (50 us), so TIMELY only increases and the flow
 * keeps its initial line rate: FCT equal to the no-CC store-and-forward formula. */
START_TEST(test_lone_flow_line_rate)
{
  const uint64_t size = 10000000, rate = 100000000000ULL;
  g_autoptr(WhScenario) sc = wh_scenario_new("timely-lone", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "1");
  wh_scenario_add_flow(sc, 0, 1, size, 0);
  WhRunOptions opts = {.cc = "timely"};
  g_autoptr(WhRun) run = wh_test_run(sc, &opts);
  wh_test_assert_clean_end(run);
  const WhTransportParams *p = &run->tp->p;
  WhTime serial = size / p->mtu * wh_time_tx(p->mtu + p->header_bytes, rate);
  WhTime expect = serial + 2 * wh_time_tx(p->mtu + p->header_bytes, rate) + 3 * WH_US;
  WhTime got = wh_transport_flow(run->tp, 0)->finish;
  /* within half a frame time (the engine is deterministic), below any delay term */
  WhTime frame = wh_time_tx(p->mtu + p->header_bytes, rate);
  ck_assert_msg(2 * got <= 2 * expect + frame && 2 * got + frame >= 2 * expect,
                "FCT %" G_GUINT64_FORMAT " ps vs %" G_GUINT64_FORMAT " ps", got, expect);
  ck_assert_uint_eq(run->net->c.drops, 0);
}
END_TEST

/* ---- shared bottleneck: the aggregate of the flows' rates, sampled every 10 us over
 *      the second half of the window (same scenario as wh_test_shared_bottleneck) ---- */

typedef struct {
  double agg_p5, agg_p50, agg_p95; /* sum of the flows' rates, fraction of capacity */
  double end_min, end_max;         /* flows' rates at the end, fraction of C / N */
} RateResult;

static gint cmp_double(gconstpointer a, gconstpointer b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static RateResult sample_rates(unsigned n, WhTime gap, WhTime window, char **sets)
{
  g_autoptr(WhScenario) sc = wh_scenario_new("timely-rates", "wh::Dumbbell");
  g_autofree char *pairs = g_strdup_printf("%u", n);
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", pairs);
  WhTime all_on = (n - 1) * gap;
  uint64_t size = (uint64_t)(RATE / 8 * (wh_time_to_s(all_on) + 1.1 * wh_time_to_s(window) / n));
  for (unsigned i = 0; i < n; i++)
    wh_scenario_add_flow(sc, i, n + i, size, i * gap);
  WhRunOptions opts = {.cc = "timely", .sets = sets};
  g_autoptr(GError) error = NULL;
  g_autoptr(WhRun) run = wh_run_new(sc, &opts, &error);
  ck_assert_msg(run != NULL, "%s", error ? error->message : "");
  GArray *agg = g_array_new(FALSE, FALSE, sizeof(double));
  for (WhTime t = all_on + window / 2 + 10 * WH_US; t <= all_on + window; t += 10 * WH_US) {
    wh_sim_stop_at(run->sim, t);
    wh_sim_run(run->sim);
    double sum = 0;
    for (unsigned i = 0; i < n; i++)
      sum += wh_transport_flow(run->tp, i)->rate;
    sum /= RATE;
    g_array_append_val(agg, sum);
  }
  RateResult r = {.end_min = 1e9};
  for (unsigned i = 0; i < n; i++) {
    double x = wh_transport_flow(run->tp, i)->rate / (RATE / n);
    r.end_min = MIN(r.end_min, x);
    r.end_max = MAX(r.end_max, x);
  }
  g_array_sort(agg, cmp_double);
  r.agg_p5 = g_array_index(agg, double, agg->len * 5 / 100);
  r.agg_p50 = g_array_index(agg, double, agg->len / 2);
  r.agg_p95 = g_array_index(agg, double, agg->len * 95 / 100);
  g_array_free(agg, TRUE);
  fprintf(stderr,
          "timely %u flows%s: aggregate rate p5/p50/p95 %.3f/%.3f/%.3f of capacity, "
          "final rates %.3f..%.3f of C/N\n",
          n, sets ? " (patched)" : "", r.agg_p5, r.agg_p50, r.agg_p95, r.end_min, r.end_max);
  return r;
}

/* Original TIMELY, stated before measuring: below TLow it only adds, above it the
 * gradient cuts, so the aggregate rate cycles around capacity; it must not collapse or
 * run away (median within 10% of capacity, 5th percentile above half of it), the queue
 * never reaches the THigh regime ((THigh - base RTT) x C, about 6.2 MB; its 99th
 * percentile stays below it) and the bottleneck stays more than 90% utilized. */
START_TEST(test_timely_4_flows)
{
  WhFairResult r = wh_test_shared_bottleneck("timely", 4, 500 * WH_US, 50 * WH_MS, NULL);
  ck_assert_uint_eq(r.ecn_marks, 0);
  ck_assert_uint_eq(r.cnps, 0);
  ck_assert_msg(r.util > 0.9, "utilization %.3f", r.util);
  ck_assert_msg(r.q99 < 6.2e6, "queue p99 %" G_GUINT64_FORMAT " B", r.q99);
  RateResult rr = sample_rates(4, 500 * WH_US, 50 * WH_MS, NULL);
  ck_assert_msg(fabs(rr.agg_p50 - 1.0) < 0.1, "aggregate rate median %.3f", rr.agg_p50);
  ck_assert_msg(rr.agg_p5 > 0.5, "aggregate rate p5 %.3f", rr.agg_p5);
}
END_TEST

/* Patched TIMELY's fixed point (gradient 0, so w = 1/2): Rai = R PatchedBeta err with
 * R = C/N for every flow, i.e. RTT* = RttRef (1 + N Rai / (PatchedBeta C)): 75 us for
 * N = 4, 150 us for N = 16 (Rai 100 Mb/s, PatchedBeta 0.008, RttRef 50 us). The standing
 * queue is (RTT* - base RTT) x C, base RTT = data frame serialization at the NIC and
 * two switches + 3 x 1 us + the ACK's 3 x (64 B serialization + 1 us) = 6.27 us. Bounds
 * stated before measuring: queue median within 10% of that, utilization > 99%, every
 * share within 5% of 1/N and Jain > 0.99 over the second half, the aggregate rate at
 * capacity within 2% (p5..p95) and every flow's final rate within 5% of C / N. The
 * patched update moves a rate by ~0.2% per round trip, so the window is 100 ms. */
static void check_patched(unsigned n, WhTime gap)
{
  char *sets[] = {"wh::TimelyCc::Patched=true", NULL};
  WhFairResult r = wh_test_shared_bottleneck("timely", n, gap, 100 * WH_MS, sets);
  double rtt = 50e-6 * (1 + n * 100e6 / (0.008 * RATE));
  double base = 3 * 1062 * 8 / RATE + 3e-6 + 3 * (64 * 8 / RATE + 1e-6);
  double q = (rtt - base) * RATE / 8;
  fprintf(stderr, "patched timely %u flows: fixed-point queue %.0f KB\n", n, q / 1e3);
  ck_assert_msg(fabs((double)r.q50 - q) < 0.1 * q, "queue median %" G_GUINT64_FORMAT " B", r.q50);
  ck_assert_msg(r.util > 0.99, "utilization %.3f", r.util);
  ck_assert_msg(r.jain > 0.99, "Jain index %.4f", r.jain);
  double fair = 1.0 / n;
  ck_assert_msg(r.min_share > 0.95 * fair && r.max_share < 1.05 * fair, "shares %.4f..%.4f",
                r.min_share, r.max_share);
  RateResult rr = sample_rates(n, gap, 100 * WH_MS, sets);
  ck_assert_msg(rr.agg_p5 > 0.98 && rr.agg_p95 < 1.02, "aggregate rate %.3f..%.3f", rr.agg_p5,
                rr.agg_p95);
  ck_assert_msg(rr.end_min > 0.95 && rr.end_max < 1.05, "final rates %.3f..%.3f of C/N", rr.end_min,
                rr.end_max);
}

START_TEST(test_patched_timely_4_flows)
{
  check_patched(4, 500 * WH_US);
}
END_TEST

START_TEST(test_patched_timely_16_flows)
{
  check_patched(16, 200 * WH_US);
}
END_TEST

Suite *wh_timely_suite(void)
{
  Suite *s = suite_create("timely");
  TCase *tc = tcase_create("timely-lone-flow");
  tcase_add_test(tc, test_lone_flow_line_rate);
  suite_add_tcase(s, tc);
  tc = tcase_create("timely-shared-bottleneck");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_timely_4_flows);
  tcase_add_test(tc, test_patched_timely_4_flows);
  tcase_add_test(tc, test_patched_timely_16_flows);
  suite_add_tcase(s, tc);
  return s;
}
