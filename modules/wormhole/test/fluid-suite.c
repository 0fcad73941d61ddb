/* Fluid flows (wh::Wormhole::FluidWindow): flows sharing a DCQCN bottleneck go fluid, deliver
 * every byte once and finish close to the exact engine; a flow starting on a fluid
 * flow's path ends its stretch; a flow added beside a reservation keeps its NIC's line
 * rate; every reservation is gone at the end. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "test-util.h"
#include "wormhole-private.h"
#include "wormhole.h"

static char *fluid_sets[] = {"wh::Wormhole::Mode=skip", "wh::Wormhole::FluidWindow=200us", NULL};

/* A dumbbell of `pairs` pairs at 100 Gb/s with DCQCN; flows added by the caller. */
static WhScenario *dumbbell(const char *name, unsigned pairs)
{
  WhScenario *sc = wh_scenario_new(name, "wh::Dumbbell");
  g_autofree char *n = g_strdup_printf("%u", pairs);
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", n);
  return sc;
}

/* The flow of `run` from src to dst of `size` bytes (exactly one). */
static const WhFlow *find(const WhRun *run, uint32_t src, uint32_t dst, uint64_t size)
{
  const WhFlow *found = NULL;
  for (uint32_t i = 0; i < run->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(run->tp, i);
    if (f->src == src && f->dst == dst && f->size == size) {
      ck_assert_ptr_null(found);
      found = f;
    }
  }
  ck_assert_ptr_nonnull(found);
  return found;
}

/* Every flow delivered its size exactly once, and no port keeps a reservation. */
static void assert_bytes_and_rates(const WhRun *wh)
{
  ck_assert(wh_wormhole_check_bytes(wh->wormhole, NULL));
  WhWormholeSkipSummary sk;
  wh_wormhole_skip_summary(wh->wormhole, &sk);
  ck_assert_uint_eq(wh->tp->c.advanced_bytes, sk.advanced_bytes);
  for (uint32_t p = 0; p < wh->net->n_ports; p++)
    ck_assert_uint_eq(wh->net->port[p].rate_bps, wh->net->port[p].line_bps);
}

/* The largest |FCT error| of `wh` against `exact`, as a fraction of the exact FCT. */
static double worst_fct(const char *name, const WhRun *exact, const WhRun *wh)
{
  double worst = 0;
  for (uint32_t i = 0; i < exact->tp->n_flows; i++) {
    const WhFlow *e = wh_transport_flow(exact->tp, i);
    const WhFlow *w = find(wh, e->src, e->dst, e->size);
    double fe = (double)(e->finish - e->start), fw = (double)(w->finish - w->start);
    fprintf(stderr, "%s: flow %u->%u FCT %.1f us exact, %.1f us fluid (%+.2f%%)\n", name, e->src,
            e->dst, fe * 1e-6, fw * 1e-6, (fw - fe) / fe * 100);
    worst = MAX(worst, fabs(fw - fe) / fe);
  }
  return worst;
}

/* Runs `sc` on the exact engine and with `sets`; each FCT of the second within 5% of
 * the first's, every byte delivered once and no reservation left. Returns the second
 * (transfer full); *events_exact: the first's events. */
static WhRun *judge(const char *name, WhScenario *sc, char **sets, uint64_t *events_exact)
{
  WhRunOptions eo = {0}, wo = {.sets = sets};
  g_autoptr(WhRun) exact = wh_test_run(sc, &eo);
  WhRun *wh = wh_test_run(sc, &wo);
  wh_test_assert_clean_end(exact);
  wh_test_assert_clean_end(wh);
  fprintf(stderr,
          "%s: %" G_GUINT64_FORMAT " stretches, events %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT
          "\n",
          name, wh->wormhole->fs.parks, exact->sim->events_executed, wh->sim->events_executed);
  double worst = worst_fct(name, exact, wh);
  ck_assert_msg(worst <= 0.05, "%s: an FCT is off by %.2f%%", name, worst * 100);
  assert_bytes_and_rates(wh);
  *events_exact = exact->sim->events_executed;
  return wh;
}

/* Three flows of 150 MB share the bottleneck, started 50 us apart: once each is steady
 * it goes fluid, most of the events go, and each FCT stays within 5% (the exact engine's
 * own FCTs move by up to 6% between seeds on this dumbbell). */
START_TEST(test_fluid_shares_a_bottleneck)
{
  g_autoptr(WhScenario) sc = dumbbell("fluid-three", 3);
  for (uint32_t i = 0; i < 3; i++)
    wh_scenario_add_flow(sc, i, 3 + i, 150000000, i * 50 * WH_US);
  uint64_t events_exact;
  g_autoptr(WhRun) wh = judge("fluid-three", sc, fluid_sets, &events_exact);
  ck_assert_uint_ge(wh->wormhole->fs.parks, 3);
  ck_assert_uint_lt(wh->sim->events_executed * 2, events_exact);
}
END_TEST

/* A long flow goes fluid alone on the dumbbell (the idle rule off, so that no quiet
 * partition is skipped first); a second flow from the same host starts on its path
 * later and ends first. Its start ends the first flow's stretch (the two then share
 * the NIC), its end ends the next one (without that, the first flow finished 55% late,
 * held at half the link), and both FCTs stay within 5% of the exact engine's. */
START_TEST(test_fluid_interrupted_by_a_start)
{
  g_autoptr(WhScenario) sc = dumbbell("fluid-join", 2);
  wh_scenario_add_flow(sc, 0, 2, 400000000, 0);
  wh_scenario_add_flow(sc, 0, 3, 100000000, 2 * WH_MS);
  char *sets[] = {"wh::Wormhole::Mode=skip", "wh::Wormhole::FluidWindow=200us",
                  "wh::Wormhole::IdleRule=false", NULL};
  uint64_t events_exact;
  g_autoptr(WhRun) wh = judge("fluid-join", sc, sets, &events_exact);
  ck_assert_uint_ge(wh->wormhole->fs.interrupts, 1);
  ck_assert_uint_ge(wh->wormhole->fs.cut, 1);
  const WhFlow *late = find(wh, 0, 3, 100000000);
  ck_assert_uint_eq(late->line_rate, wh->net->port[late->fwd[0]].line_bps);
}
END_TEST

/* A flow added while a reservation holds part of its NIC's link (a workload adds flows as
 * its ops start) takes the NIC's line rate, not what the reservation leaves: a flow
 * capped at that would crawl for the rest of its life. */
START_TEST(test_fluid_new_flow_line_rate)
{
  g_autoptr(WhScenario) sc = dumbbell("fluid-line", 2);
  wh_scenario_add_flow(sc, 0, 2, 1000000, 0);
  WhRunOptions wo = {.sets = fluid_sets};
  g_autoptr(WhRun) wh = wh_test_run(sc, &wo);
  wh_test_assert_clean_end(wh);
  WhPort *nic = &wh->net->port[wh_net_host_port(wh->net, 0)];
  nic->rate_bps = nic->line_bps / 50; /* as a reservation of 98% leaves it */
  int64_t id = wh_transport_add_flow(wh->tp, 0, 3, 1000000, wh->sim->now, NULL);
  ck_assert_int_ge(id, 0);
  ck_assert_uint_eq(wh_transport_flow(wh->tp, (uint32_t)id)->line_rate, nic->line_bps);
  nic->rate_bps = nic->line_bps;
}
END_TEST

/* Off by default: the same runs without FluidWindow make no stretch. */
START_TEST(test_fluid_off_by_default)
{
  g_autoptr(WhScenario) sc = dumbbell("fluid-off", 2);
  wh_scenario_add_flow(sc, 0, 2, 100000000, 0);
  char *sets[] = {"wh::Wormhole::Mode=skip", NULL};
  WhRunOptions wo = {.sets = sets};
  g_autoptr(WhRun) wh = wh_test_run(sc, &wo);
  wh_test_assert_clean_end(wh);
  ck_assert(!wh->wormhole->p.fluid);
  ck_assert_uint_eq(wh->wormhole->fs.holds, 0);
  ck_assert_ptr_null(wh->wormhole->fluids);
}
END_TEST

Suite *wh_fluid_suite(void)
{
  Suite *s = suite_create("fluid");
  TCase *tc = tcase_create("dumbbells");
  tcase_add_test(tc, test_fluid_shares_a_bottleneck);
  tcase_add_test(tc, test_fluid_interrupted_by_a_start);
  tcase_add_test(tc, test_fluid_new_flow_line_rate);
  tcase_add_test(tc, test_fluid_off_by_default);
  tcase_set_timeout(tc, 300);
  suite_add_tcase(s, tc);
  return s;
}
