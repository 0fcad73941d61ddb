/* Wormhole II tests (skip mode): the scheduler's parking (deferred cancel and insert,
 * interrupts, shifted and late events); with Theta 0 and the idle rule off, skip mode
 * changes no output; the dumbbells of the manual-skip test, now detected and skipped
 * automatically, deliver every byte exactly once and keep each FCT close to the exact
 * engine's; and the adversarial cases: a flow joining a parked partition (skip-back),
 * a neighbour running a million events with PFC pauses next to a parked partition
 * under the parking invariant checker, a compute op ending on a parked NIC. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "test-util.h"
#include "wormhole-private.h"
#include "wormhole.h"

/* ---- the scheduler's parking ---- */

typedef struct {
  uint32_t interrupts, last_slot;
  uint32_t fired[8];
} ParkLog;

static void log_interrupt(void *data, uint32_t slot)
{
  ParkLog *log = data;
  log->interrupts++;
  log->last_slot = slot;
}

static void fire(WhSim *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  ParkLog *log = ctx;
  log->fired[arg]++;
}

START_TEST(test_parking)
{
  g_autoptr(WhSim) sim =
      wh_sim_new_with_scheduler(wh_wormhole_scheduler_new(&wh_heap_scheduler_class));
  ParkLog log = {0};
  wh_wormhole_park_setup(sim->sched, 4, log_interrupt, &log);
  /* port 1 and flow 7 are parked; port 2 and flow 8 are not */
  WhEvent *p1 = wh_sim_schedule_at(sim, 100, fire, &log, 0, 1);
  WhEvent *f7 = wh_sim_schedule_at(sim, 200, fire, &log, 1, 7 | WH_OWNER_FLOW);
  wh_sim_schedule_at(sim, 150, fire, &log, 2, 2);
  wh_sim_schedule_at(sim, 250, fire, &log, 3, 8 | WH_OWNER_FLOW);
  WhEvent *p1b = wh_sim_schedule_at(sim, 120, fire, &log, 4, 1);
  uint32_t slot = wh_wormhole_park_open(sim->sched);
  wh_wormhole_park_owner(sim->sched, 1, slot);
  wh_wormhole_park_owner(sim->sched, 7 | WH_OWNER_FLOW, slot);
  wh_wormhole_park_event(sim->sched, p1, slot);
  wh_wormhole_park_event(sim->sched, f7, slot);
  wh_wormhole_park_event(sim->sched, p1b, slot);
  ck_assert_uint_eq(wh_sim_pending(sim), 5); /* parked events still count as pending */
  ck_assert_uint_eq(wh_wormhole_parked_events(sim->sched), 3);
  /* a parked event cancelled by the model leaves its slot, not the heap */
  wh_sim_cancel(sim, p1b);
  ck_assert_uint_eq(wh_wormhole_park_count(sim->sched, slot, FALSE), 2);
  ck_assert_uint_eq(wh_sim_pending(sim), 4);
  ck_assert_uint_eq(log.interrupts, 0);
  /* an event inserted for a parked owner joins the late list and interrupts */
  wh_sim_schedule_at(sim, 300, fire, &log, 5, 1);
  ck_assert_uint_eq(log.interrupts, 1);
  ck_assert_uint_eq(log.last_slot, slot);
  ck_assert_uint_eq(wh_wormhole_park_count(sim->sched, slot, TRUE), 1);
  /* the rest runs without the parked events */
  wh_sim_stop_at(sim, 160);
  wh_sim_run(sim);
  ck_assert_uint_eq(log.fired[2], 1);
  ck_assert_uint_eq(log.fired[0] + log.fired[1] + log.fired[5], 0);
  ck_assert_uint_eq(sim->now, 150);
  /* unparking: the parked ones 1000 later, the late one at its own time */
  wh_wormhole_park_owner(sim->sched, 1, WH_PARTITION_NONE);
  wh_wormhole_park_owner(sim->sched, 7 | WH_OWNER_FLOW, WH_PARTITION_NONE);
  uint32_t late = 0;
  ck_assert_uint_eq(wh_wormhole_park_close(sim->sched, slot, 1000, &late), 3);
  ck_assert_uint_eq(late, 1);
  ck_assert_uint_eq(wh_wormhole_parked_events(sim->sched), 0);
  ck_assert_uint_eq(wh_sim_pending(sim), 4);
  wh_sim_stop_at(sim, 1150);
  wh_sim_run(sim);
  ck_assert_uint_eq(log.fired[3], 1); /* at 250 */
  ck_assert_uint_eq(log.fired[5], 1); /* at 300: never shifted */
  ck_assert_uint_eq(log.fired[0], 1); /* at 100 + 1000 */
  ck_assert_uint_eq(log.fired[1], 0);
  ck_assert_uint_eq(sim->now, 1100);
  wh_sim_stop_at(sim, WH_TIME_MAX);
  wh_sim_run(sim);
  ck_assert_uint_eq(log.fired[1], 1); /* at 200 + 1000 */
  ck_assert_uint_eq(log.fired[4], 0); /* cancelled while parked */
  ck_assert_uint_eq(sim->now, 1200);
}
END_TEST

/* ---- on the engine ---- */

static WhRun *run_with(const char *file, WhScenario *sc, const char *scheduler, char **sets)
{
  WhRunOptions opts = {.scheduler = scheduler, .sets = sets};
  WhRun *run = file ? wh_test_run_file(file, &opts) : wh_test_run(sc, &opts);
  wh_test_assert_clean_end(run);
  return run;
}

START_TEST(test_theta_zero_is_exact)
{
  static const char *const files[] = {"scenarios/dumbbell-dcqcn.xml", "scenarios/quickstart.xml",
                                      "scenarios/incast-16to1.xml", "scenarios/workload-dp-pp.xml",
                                      NULL};
  char *sets[] = {"wh::Wormhole::Mode=skip", "wh::Wormhole::Theta=0",
                  "wh::Wormhole::IdleRule=false", NULL};
  for (const char *const *file = files; *file; file++) {
    g_autoptr(WhRun) exact = run_with(*file, NULL, NULL, NULL);
    g_autoptr(WhRun) skip = run_with(*file, NULL, NULL, sets);
    ck_assert_ptr_nonnull(skip->wormhole);
    WhWormholeSkipSummary sk;
    wh_wormhole_skip_summary(skip->wormhole, &sk);
    ck_assert_uint_eq(sk.fast_forwards, 0);
    g_autofree char *fe = wh_test_fingerprint(exact);
    g_autofree char *fs = wh_test_fingerprint(skip);
    ck_assert_msg(strcmp(fe, fs) == 0, "%s: skip with Theta 0 differs:\n%s\n--\n%s", *file, fe, fs);
    ck_assert_uint_eq(skip->sim->events_executed, exact->sim->events_executed);
  }
}
END_TEST

/* The unloaded round trip of a flow: each hop's propagation and one frame's
 * serialization, data out and ACK back. */
static WhTime base_rtt(const WhRun *run, const WhFlow *f)
{
  WhTime t = 0;
  uint32_t frame = run->tp->p.mtu + run->tp->p.header_bytes;
  for (uint16_t h = 0; h < f->fwd_hops; h++) {
    const WhPort *p = &run->net->port[f->fwd[h]];
    t += p->delay + wh_time_tx(frame, p->rate_bps);
  }
  for (uint16_t h = 0; h < f->rev_hops; h++) {
    const WhPort *p = &run->net->port[f->rev[h]];
    t += p->delay + wh_time_tx(run->tp->p.ctrl_bytes, p->rate_bps);
  }
  return t;
}

typedef struct {
  double worst_fct;  /* largest |FCT error| / max(RTT, 1% of FCT) */
  double worst_skip; /* largest |FCT error| / max(RTT, 10% of the flow's skipped time) */
  double events_skipped;
  uint64_t skip_backs, fast_forwards;
} Bounds;

/* Compares every flow of `wh` with the same flow of `exact` (flows matched by source,
 * destination, size and start; each must match exactly one). */
static Bounds compare(const char *name, const WhRun *exact, const WhRun *wh)
{
  Bounds b = {0};
  ck_assert_uint_eq(exact->tp->n_flows, wh->tp->n_flows);
  for (uint32_t i = 0; i < wh->tp->n_flows; i++) {
    const WhFlow *w = wh_transport_flow(wh->tp, i), *e = NULL;
    for (uint32_t k = 0; k < exact->tp->n_flows; k++) {
      const WhFlow *c = wh_transport_flow(exact->tp, k);
      if (c->src == w->src && c->dst == w->dst && c->size == w->size && c->start == w->start) {
        ck_assert_msg(e == NULL, "%s: flows are not told apart", name);
        e = c;
      }
    }
    ck_assert_ptr_nonnull(e);
    double fe = (double)(e->finish - e->start), fw = (double)(w->finish - w->start);
    double err = fabs(fw - fe), rtt = (double)base_rtt(exact, e);
    WhTime skipped;
    uint64_t adv;
    wh_wormhole_flow_skip(wh->wormhole, i, &skipped, &adv);
    /* the skip's own bound, for flows that spent a meaningful part of their life
     * parked (at least 1% of it; below that, max(RTT, 1%) is the stricter bound) */
    double r1 = err / MAX(rtt, 0.01 * fe);
    double r2 = (double)skipped >= 0.01 * fe ? err / MAX(rtt, 0.1 * (double)skipped) : 0;
    fprintf(stderr,
            "%s: flow %u->%u FCT %.1f us exact, %.1f us with skips (%+.3f%%), %.1f us skipped, "
            "%.1f MB advanced\n",
            name, w->src, w->dst, fe * 1e-6, fw * 1e-6, (fw - fe) / fe * 100,
            (double)skipped * 1e-6, (double)adv / 1e6);
    b.worst_fct = MAX(b.worst_fct, r1);
    b.worst_skip = MAX(b.worst_skip, r2);
  }
  WhWormholeSkipSummary sk;
  wh_wormhole_skip_summary(wh->wormhole, &sk);
  b.skip_backs = sk.skip_backs;
  b.fast_forwards = sk.fast_forwards;
  b.events_skipped = 1 - (double)wh->sim->events_executed / (double)exact->sim->events_executed;
  fprintf(stderr,
          "%s: %" G_GUINT64_FORMAT " fast-forwards, %" G_GUINT64_FORMAT
          " skip-backs, events %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT
          " (%.1f%% skipped); worst FCT error %.2f x max(RTT, 1%%), %.2f x max(RTT, 10%% of "
          "skipped)\n",
          name, sk.fast_forwards, sk.skip_backs, exact->sim->events_executed,
          wh->sim->events_executed, b.events_skipped * 100, b.worst_fct, b.worst_skip);
  ck_assert(wh_wormhole_check_bytes(wh->wormhole, NULL));
  ck_assert_uint_eq(wh->tp->c.advanced_bytes, sk.advanced_bytes);
  return b;
}

/* Four flows on a 100 Gb/s dumbbell, started 100 us apart; flow i carries
 * size x (1 + i / 2) (the manual-skip test's cases). */
static WhScenario *four_flows(uint64_t size, const char *const *sets)
{
  WhScenario *sc = wh_scenario_new("four-flows", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "4");
  for (const char *const *set = sets; set && *set; set++) {
    g_auto(GStrv) kv = g_strsplit(*set, "=", 2);
    wh_scenario_add_set(sc, kv[0], kv[1]);
  }
  for (uint32_t i = 0; i < 4; i++)
    wh_scenario_add_flow(sc, i, 4 + i, (uint64_t)((double)size * (1 + i * 0.5)), i * 100 * WH_US);
  return sc;
}

typedef struct {
  const char *cc;
  const char *const *sets;
  uint64_t size;
  gboolean assert_events, assert_fct;
} DumbbellCase;

START_TEST(test_dumbbells)
{
  /* HPCC with W_AI = (1 - eta) x B / N for N = 4 flows (the HPCC paper's sizing);
   * DCTCP with its marking band and 4 KB packets, as in the manual-skip test. The
   * steadiness measure is the delivery rate averaged over 0.2-1 ms: the CC rates of
   * these shared bottlenecks swing by 20% and more between microseconds (the dR
   * table of validation/wormhole/report.md) while their averages hold. */
  static const char *hpcc[] = {"wh::HpccCc::Wai=1.25Gbps", NULL};
  static const char *dctcp[] = {"wh::DctcpCc::Kmin=250KB", "wh::DctcpCc::Kmax=350KB",
                                "wh::RdmaFlow::Mtu=4096B", NULL};
  static const DumbbellCase cases[] = {
      /* DCQCN's FCTs move by up to 2.5% between two seeds of the exact engine (random
       * ECN marking): its 1% bound is printed, not asserted (validation/wormhole/skip.sh
       * reports it beside that spread) */
      {"dcqcn", NULL, 300000000, TRUE, FALSE},
      {"hpcc", hpcc, 60000000, TRUE, TRUE},
      {"dctcp", dctcp, 1500000000, FALSE, TRUE},
  };
  static char *detect_dcqcn[] = {
      "wh::Wormhole::Mode=skip", "wh::WormholeStudy::Quantity=delivered-avg",
      "wh::WormholeStudy::AvgPeriods=1000", "wh::Wormhole::Window=10000", NULL};
  static char *detect_hpcc[] = {
      "wh::Wormhole::Mode=skip", "wh::WormholeStudy::Quantity=delivered-avg",
      "wh::WormholeStudy::AvgPeriods=200", "wh::Wormhole::Window=2000", NULL};
  const DumbbellCase *c = &cases[_i];
  char **detect = strcmp(c->cc, "hpcc") == 0 ? detect_hpcc : detect_dcqcn;
  g_autoptr(WhScenario) sc = four_flows(c->size, c->sets);
  WhRunOptions eo = {.cc = c->cc}, wo = {.cc = c->cc, .sets = detect};
  g_autoptr(WhRun) exact = wh_test_run(sc, &eo);
  g_autoptr(WhRun) wh = wh_test_run(sc, &wo);
  wh_test_assert_clean_end(exact);
  wh_test_assert_clean_end(wh);
  Bounds b = compare(c->cc, exact, wh);
  ck_assert_uint_gt(b.fast_forwards, 0);
  ck_assert_msg(b.worst_skip <= 1, "%s: an FCT error exceeds 10%% of the time skipped (%.2f x)",
                c->cc, b.worst_skip);
  if (c->assert_events)
    ck_assert_msg(b.events_skipped >= 0.30, "%s: %.1f%% of the events skipped", c->cc,
                  b.events_skipped * 100);
  if (c->assert_fct)
    ck_assert_msg(b.worst_fct <= 1, "%s: an FCT is off by %.2f x max(RTT, 1%%)", c->cc,
                  b.worst_fct);
}
END_TEST

START_TEST(test_tails_at_rate)
{
  /* Tails=rate on the HPCC dumbbell: each skip at measured rates goes on to the first
   * completion and makes it there, so more is skipped than with packet tails, every byte
   * is delivered once (the completed flows' in-flight packets reclaimed), and each FCT
   * stays within 10% of the time its flow was skipped */
  static const char *hpcc[] = {"wh::HpccCc::Wai=1.25Gbps", NULL};
  static char *packets[] = {"wh::Wormhole::Mode=skip", "wh::WormholeStudy::Quantity=delivered-avg",
                            "wh::WormholeStudy::AvgPeriods=200", "wh::Wormhole::Window=2000", NULL};
  static char *rate[] = {
      "wh::Wormhole::Mode=skip",           "wh::WormholeStudy::Quantity=delivered-avg",
      "wh::WormholeStudy::AvgPeriods=200", "wh::Wormhole::Window=2000",
      "wh::Wormhole::Tails=rate",          NULL};
  g_autoptr(WhScenario) sc = four_flows(60000000, hpcc);
  WhRunOptions eo = {.cc = "hpcc"}, po = {.cc = "hpcc", .sets = packets},
               ro = {.cc = "hpcc", .sets = rate};
  g_autoptr(WhRun) exact = wh_test_run(sc, &eo);
  g_autoptr(WhRun) tails = wh_test_run(sc, &po);
  g_autoptr(WhRun) at_rate = wh_test_run(sc, &ro);
  wh_test_assert_clean_end(at_rate);
  Bounds bp = compare("hpcc packet tails", exact, tails);
  Bounds br = compare("hpcc tails at rate", exact, at_rate);
  ck_assert_uint_eq(tails->wormhole->ss.tail_completions, 0);
  ck_assert_uint_gt(at_rate->wormhole->ss.tail_completions, 0);
  ck_assert_msg(br.events_skipped > bp.events_skipped, "%.1f%% skipped, %.1f%% with packet tails",
                br.events_skipped * 100, bp.events_skipped * 100);
  ck_assert_msg(br.worst_skip <= 1, "an FCT error exceeds 10%% of the time skipped (%.2f x)",
                br.worst_skip);
}
END_TEST

/* Flows at line rate on a 400 Gb/s dumbbell (DCQCN, 4 KB frames), with the idle rule:
 * each quiet partition is periodic (one frame per period; a pair in opposite
 * directions shares its NICs with the other's ACKs, a longer period), so a skip of
 * whole periods, or one moved to whole periods after an interrupt, moves each flow by
 * whole packets in phase: every finish time equals the exact engine's to the
 * picosecond. Case 0: one flow; 1: a second flow joins the parked bottleneck at a
 * time off the period (a skip-back, then the two share it); 2: the opposite pair. */
START_TEST(test_periodic_skips_are_exact)
{
  WhScenario *sc = wh_scenario_new("periodic", "wh::Dumbbell");
  static const char *const sets[][2] = {
      {"wh::Dumbbell::Pairs", "2"},       {"wh::Dumbbell::BottleneckRate", "400Gbps"},
      {"wh::Link::Rate", "400Gbps"},      {"wh::Link::Delay", "1us"},
      {"wh::RdmaFlow::Mtu", "4096B"},     {"wh::Switch::PfcEnabled", "true"},
      {"wh::Switch::BufferSize", "32MB"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(sets); i++)
    wh_scenario_add_set(sc, sets[i][0], sets[i][1]);
  const uint64_t size = 2621440;
  wh_scenario_add_flow(sc, 0, 2, size, 0);
  if (_i == 1)
    wh_scenario_add_flow(sc, 1, 3, size, 31013 * WH_NS);
  else if (_i == 2)
    wh_scenario_add_flow(sc, 2, 0, size, 0);
  WhRunOptions eo = {.cc = "dcqcn"},
               wo = {.cc = "dcqcn", .sets = (char *[]){"wh::Wormhole::Mode=skip", NULL}};
  g_autoptr(WhRun) exact = wh_test_run(sc, &eo);
  g_autoptr(WhRun) wh = wh_test_run(sc, &wo);
  wh_scenario_free(sc);
  wh_test_assert_clean_end(exact);
  wh_test_assert_clean_end(wh);
  Bounds b = compare("periodic", exact, wh);
  ck_assert_uint_ge(b.fast_forwards, 1);
  if (_i == 1)
    ck_assert_uint_ge(b.skip_backs, 1);
  ck_assert_uint_eq(exact->tp->n_flows, wh->tp->n_flows);
  for (uint32_t i = 0; i < wh->tp->n_flows; i++) {
    WhTime skipped;
    uint64_t adv;
    wh_wormhole_flow_skip(wh->wormhole, i, &skipped, &adv);
    if (i == 0)
      ck_assert_uint_gt(adv, 0);
    ck_assert_msg(wh_transport_flow(wh->tp, i)->finish == wh_transport_flow(exact->tp, i)->finish,
                  "case %d, flow %u: finish %" G_GUINT64_FORMAT " ps with skips, %" G_GUINT64_FORMAT
                  " ps exact",
                  _i, i, wh_transport_flow(wh->tp, i)->finish,
                  wh_transport_flow(exact->tp, i)->finish);
  }
}
END_TEST

START_TEST(test_skip_back_on_join)
{
  const char *file = "validation/wormhole/scenarios/skip-join.xml";
  char *sets[] = {"wh::Wormhole::Mode=skip", NULL};
  g_autoptr(WhRun) exact = run_with(file, NULL, NULL, NULL);
  g_autoptr(WhRun) wh = run_with(file, NULL, NULL, sets);
  Bounds b = compare("join", exact, wh);
  ck_assert_uint_ge(b.skip_backs, 1);
  ck_assert_msg(b.worst_fct <= 1 && b.worst_skip <= 1, "join: %.2f / %.2f x bound", b.worst_fct,
                b.worst_skip);
}
END_TEST

START_TEST(test_pfc_neighbour_checked)
{
  const char *file = "validation/wormhole/scenarios/skip-pfc-neighbour.xml";
  g_autoptr(WhRun) exact = run_with(file, NULL, NULL, NULL);
  WhRunOptions opts = {.sets = (char *[]){"wh::Wormhole::Mode=skip", NULL}};
  g_autofree char *path = wh_test_source_path(file);
  WhScenario *sc = wh_scenario_load(path, NULL);
  ck_assert_ptr_nonnull(sc);
  g_autoptr(WhRun) wh = wh_run_new(sc, &opts, NULL);
  ck_assert_ptr_nonnull(wh);
  wh_run_take_scenario(wh, sc);
  /* step the run 5 us at a time and check the parking invariants in between */
  uint32_t checks = 0, parked_checks = 0;
  for (WhTime until = 5 * WH_US; wh_sim_pending(wh->sim) > 0; until += 5 * WH_US) {
    wh_sim_stop_at(wh->sim, until);
    wh_sim_run(wh->sim);
    g_autoptr(GError) err = NULL;
    if (!wh_wormhole_check_parking(wh->wormhole, &err))
      ck_abort_msg("at %.3f us: %s", wh_time_to_s(wh->sim->now) * 1e6, err->message);
    checks++;
    parked_checks += wh_wormhole_parked_events(wh->sim->sched) > 0;
  }
  wh_wormhole_finish(wh->wormhole);
  wh_test_assert_clean_end(wh);
  fprintf(stderr,
          "pfc-neighbour: %u checks, %u with events parked, %" G_GUINT64_FORMAT
          " events, %" G_GUINT64_FORMAT " PFC pauses\n",
          checks, parked_checks, wh->sim->events_executed, wh->net->c.pfc_pauses);
  ck_assert_uint_gt(parked_checks, 1000);
  ck_assert_uint_ge(wh->sim->events_executed, 1000000);
  ck_assert_uint_gt(wh->net->c.pfc_pauses, 0);
  Bounds b = compare("pfc-neighbour", exact, wh);
  ck_assert_msg(b.worst_fct <= 1 && b.worst_skip <= 1, "pfc-neighbour: %.2f / %.2f x bound",
                b.worst_fct, b.worst_skip);
}
END_TEST

START_TEST(test_compute_on_parked_nic)
{
  const char *file = "validation/wormhole/scenarios/skip-compute.xml";
  char *sets[] = {"wh::Wormhole::Mode=skip", NULL};
  g_autoptr(WhRun) exact = run_with(file, NULL, NULL, NULL);
  g_autoptr(WhRun) wh = run_with(file, NULL, NULL, sets);
  Bounds b = compare("compute", exact, wh);
  ck_assert_uint_ge(b.skip_backs, 1);
  ck_assert_msg(b.worst_fct <= 1 && b.worst_skip <= 1, "compute: %.2f / %.2f x bound", b.worst_fct,
                b.worst_skip);
  /* the compute op ends on time and the send after it starts then */
  for (uint32_t i = 0; i < wh_workload_n_ops(wh->workload); i++) {
    WhOpInfo a, e;
    wh_workload_op_info(wh->workload, i, &a);
    wh_workload_op_info(exact->workload, i, &e);
    if (a.kind == WH_OP_COMPUTE)
      ck_assert_uint_eq(a.end, e.end);
    else
      ck_assert_uint_eq(a.start, e.start);
  }
}
END_TEST

Suite *wh_skip_suite(void)
{
  Suite *s = suite_create("skip");
  TCase *tc = tcase_create("parking");
  tcase_add_test(tc, test_parking);
  suite_add_tcase(s, tc);
  tc = tcase_create("exact");
  tcase_add_test(tc, test_theta_zero_is_exact);
  tcase_set_timeout(tc, 120);
  suite_add_tcase(s, tc);
  tc = tcase_create("dumbbells");
  tcase_add_loop_test(tc, test_dumbbells, 0, 3);
  tcase_add_test(tc, test_tails_at_rate);
  tcase_add_loop_test(tc, test_periodic_skips_are_exact, 0, 3);
  tcase_set_timeout(tc, 300);
  suite_add_tcase(s, tc);
  tc = tcase_create("adversarial");
  tcase_add_test(tc, test_skip_back_on_join);
  tcase_add_test(tc, test_pfc_neighbour_checked);
  tcase_add_test(tc, test_compute_on_parked_nic);
  tcase_set_timeout(tc, 300);
  suite_add_tcase(s, tc);
  return s;
}
