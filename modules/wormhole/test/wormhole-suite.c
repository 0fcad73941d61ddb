/* Wormhole I tests: the block-summary window against a brute-force window; the
 * incremental partitions against components recomputed from scratch after every
 * change (merge, split, reroute, deferred rebuilds); ACK paths joining what the data
 * paths alone leave apart; compute events owned by no partition; observe mode leaving
 * every output of every shipped scenario unchanged, with the heap and the calendar
 * scheduler inside; the parameters' recommended defaults and the sampling grain of a
 * lone 400 Gb/s flow. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "congestion-control.h"
#include "partition.h"
#include "steady-window.h"
#include "test-util.h"
#include "wormhole.h"

/* ---- window ---- */

static void check_window(uint32_t l, uint32_t n, uint64_t seed)
{
  WhSteadyWindow w;
  wh_steady_window_init(&w, l);
  double *v = g_new(double, n);
  WhRng rng;
  wh_rng_init(&rng, seed, l);
  uint32_t evals = 0;
  for (uint32_t i = 0; i < n; i++) {
    /* a drifting rate with noise and occasional zeros */
    v[i] = wh_rng_uniform(&rng) < 0.02 ? 0 : 50 + 10 * sin(i * 0.01) + wh_rng_uniform(&rng);
    double dr, mean;
    gboolean ev = wh_steady_window_push(&w, v[i], &dr, &mean);
    uint32_t blocks, b;
    wh_steady_window_shape(l, &blocks, &b);
    gboolean expect = i + 1 >= l && (i + 1) % b == 0;
    ck_assert_msg(ev == expect, "l %u sample %u: evaluation %d, expected %d", l, i, ev, expect);
    if (!ev)
      continue;
    evals++;
    double lo = INFINITY, hi = -INFINITY, sum = 0;
    for (uint32_t k = i + 1 - l; k <= i; k++) {
      lo = MIN(lo, v[k]);
      hi = MAX(hi, v[k]);
      sum += v[k];
    }
    double m = sum / l;
    ck_assert_msg(fabs(mean - m) <= 1e-9 * m, "l %u: mean %.12g vs %.12g", l, mean, m);
    ck_assert_msg(fabs(dr - (hi - lo) / m) <= 1e-9, "l %u: dR %.12g vs %.12g", l, dr,
                  (hi - lo) / m);
    /* the spread of the block means: blocks of b consecutive samples ending at i */
    double blo = INFINITY, bhi = -INFINITY;
    for (uint32_t k = i + 1 - l; k <= i; k += b) {
      double bs = 0;
      for (uint32_t j = k; j < k + b; j++)
        bs += v[j];
      blo = MIN(blo, bs / b);
      bhi = MAX(bhi, bs / b);
    }
    double ms = wh_steady_window_mean_spread(&w);
    ck_assert_msg(fabs(ms - (bhi - blo) / m) <= 1e-9, "l %u: mean spread %.12g vs %.12g", l, ms,
                  (bhi - blo) / m);
    ck_assert_msg(ms <= dr + 1e-12, "l %u: block means spread wider than the samples", l);
  }
  ck_assert_uint_gt(evals, 0);
  g_free(v);
}

START_TEST(test_window_brute_force)
{
  /* divisible by many block counts, prime (one block), small, the paper's sizes */
  static const uint32_t ls[] = {2, 7, 31, 97, 100, 500, 1000, 2000};
  for (size_t i = 0; i < G_N_ELEMENTS(ls); i++)
    check_window(ls[i], 6 * ls[i] + 13, 11 + i);
  uint32_t blocks, b;
  wh_steady_window_shape(2000, &blocks, &b);
  ck_assert_uint_eq(blocks * b, 2000);
  ck_assert_uint_le(blocks, WH_WINDOW_MAX_BLOCKS);
  /* a constant series is perfectly steady; an all-zero one never is */
  WhSteadyWindow w;
  wh_steady_window_init(&w, 4);
  double dr = -1, mean;
  for (int i = 0; i < 4; i++)
    wh_steady_window_push(&w, 7, &dr, &mean);
  ck_assert(dr == 0);
  wh_steady_window_init(&w, 4);
  for (int i = 0; i < 4; i++)
    wh_steady_window_push(&w, 0, &dr, &mean);
  ck_assert(isinf(dr));
}
END_TEST

/* ---- partitions ---- */

/* The true components of the active flows, from scratch: comp[f] = a representative
 * flow of f's component (or -1 when f is not active). */
static int64_t root_of(int64_t *comp, int64_t f)
{
  while (comp[f] != f)
    f = comp[f];
  return f;
}

static void components(uint32_t n_flows, uint32_t n_ports, uint32_t *const *ports,
                       const uint32_t *np, const gboolean *active, int64_t *comp)
{
  int64_t *first = g_new(int64_t, n_ports);
  for (uint32_t p = 0; p < n_ports; p++)
    first[p] = -1;
  for (uint32_t f = 0; f < n_flows; f++)
    comp[f] = active[f] ? (int64_t)f : -1;
  for (uint32_t f = 0; f < n_flows; f++) {
    if (!active[f])
      continue;
    for (uint32_t i = 0; i < np[f]; i++) {
      uint32_t p = ports[f][i];
      if (first[p] < 0) {
        first[p] = f;
        continue;
      }
      int64_t a = root_of(comp, first[p]), b = root_of(comp, f);
      if (a != b)
        comp[MAX(a, b)] = MIN(a, b);
    }
  }
  for (uint32_t f = 0; f < n_flows; f++)
    if (active[f])
      comp[f] = root_of(comp, f);
  g_free(first);
}

/* Each true component lies inside one partition; with `exact`, partitions are exactly
 * the components. */
static void check_against_truth(WhPartitions *pm, uint32_t n_flows, uint32_t n_ports,
                                uint32_t *const *ports, const uint32_t *np, const gboolean *active,
                                gboolean exact)
{
  int64_t comp[64];
  components(n_flows, n_ports, ports, np, active, comp);
  uint32_t members = 0;
  for (uint32_t i = 0; i < wh_partitions_n_live(pm); i++) {
    const WhPartition *p = wh_partitions_live(pm, i);
    uint32_t n = 0;
    for (uint32_t f = wh_partitions_first_flow(p); f != WH_PARTITION_NONE;
         f = wh_partitions_next_flow(pm, p, f))
      n++;
    ck_assert_uint_eq(n, p->n_flows);
    members += n;
  }
  uint32_t n_active = 0;
  for (uint32_t a = 0; a < n_flows; a++) {
    if (!active[a])
      continue;
    n_active++;
    for (uint32_t b = 0; b < n_flows; b++) {
      if (!active[b])
        continue;
      const WhPartition *pa = wh_partitions_of_flow(pm, a), *pb = wh_partitions_of_flow(pm, b);
      ck_assert_ptr_nonnull(pa);
      if (comp[a] == comp[b])
        ck_assert_msg(pa == pb, "flows %u and %u share a component but not a partition", a, b);
      else if (exact)
        ck_assert_msg(pa != pb, "flows %u and %u: one partition, two components", a, b);
    }
  }
  ck_assert_uint_eq(members, n_active);
}

START_TEST(test_partitions_merge_split_reroute)
{
  g_autoptr(WhPartitions) pm = wh_partitions_new(16, NULL, NULL);
  uint32_t a[] = {1, 2}, b[] = {3, 4}, c[] = {2, 3}, d[] = {9, 10}, d2[] = {4, 11};
  wh_partitions_add_flow(pm, 0, a, 2, 0, 0);
  wh_partitions_add_flow(pm, 1, b, 2, 0, 1);
  ck_assert_uint_eq(wh_partitions_n_live(pm), 2);
  /* c touches both: a merge */
  wh_partitions_add_flow(pm, 2, c, 2, WH_PFLAG_UNSTEADY, 2);
  ck_assert_uint_eq(wh_partitions_n_live(pm), 1);
  const WhPartition *p = wh_partitions_of_flow(pm, 0);
  ck_assert_uint_eq(p->n_flows, 3);
  ck_assert_uint_eq(p->n_flag[0], 1);
  const WhPartitionRecord *r = wh_partitions_record(pm, p->id);
  ck_assert_int_eq(r->cause, WH_PART_MERGE);
  ck_assert_uint_eq(r->n_parents, 2);
  wh_partitions_add_flow(pm, 3, d, 2, 0, 3);
  ck_assert_uint_eq(wh_partitions_n_live(pm), 2);
  /* c leaves: a and b split apart */
  wh_partitions_remove_flow(pm, 2, 4);
  ck_assert_uint_eq(wh_partitions_n_live(pm), 3);
  ck_assert_ptr_ne(wh_partitions_of_flow(pm, 0), wh_partitions_of_flow(pm, 1));
  r = wh_partitions_record(pm, wh_partitions_of_flow(pm, 0)->id);
  ck_assert_int_eq(r->cause, WH_PART_SPLIT);
  ck_assert_uint_eq(wh_partitions_of_flow(pm, 0)->n_flag[0], 0);
  /* d is rerouted onto b's port 4: it joins b; then back apart */
  wh_partitions_reroute_flow(pm, 3, d2, 2, 5);
  ck_assert_ptr_eq(wh_partitions_of_flow(pm, 3), wh_partitions_of_flow(pm, 1));
  ck_assert_uint_eq(wh_partitions_n_live(pm), 2);
  wh_partitions_reroute_flow(pm, 3, d, 2, 6);
  ck_assert_ptr_ne(wh_partitions_of_flow(pm, 3), wh_partitions_of_flow(pm, 1));
  ck_assert_uint_eq(wh_partitions_n_live(pm), 3);
  /* a signal at port 4 reaches b's partition only */
  wh_partitions_port_signal(pm, 4, 77);
  ck_assert_uint_eq(wh_partitions_of_flow(pm, 1)->last_signal, 77);
  ck_assert_uint_eq(wh_partitions_of_flow(pm, 0)->last_signal, 0);
}
END_TEST

static void draw_ports(WhRng *rng, gboolean big, uint32_t P, uint32_t len, uint32_t *out,
                       uint32_t *n)
{
  *n = 1 + (uint32_t)wh_rng_next(rng) % len;
  uint32_t base = (uint32_t)wh_rng_next(rng) % P;
  for (uint32_t i = 0; i < *n; i++)
    out[i] = big ? (base + i) % P : (uint32_t)wh_rng_next(rng) % P;
}

/* Random joins, departures and reroutes against components from scratch. Ports are
 * few so partitions merge and split often; `big` makes partitions defer rebuilds. */
static void random_ops(gboolean big)
{
  enum { F = 40 };
  const uint32_t P = big ? 40000 : 60;
  g_autoptr(WhPartitions) pm = wh_partitions_new(P, NULL, NULL);
  uint32_t *ports[F], np[F];
  gboolean active[F] = {0};
  WhRng rng;
  wh_rng_init(&rng, big ? 7 : 5, 1);
  /* big: runs of up to 1200 consecutive ports, so a few flows exceed
   * WH_PARTITION_EAGER_PORTS; small: 3 random ports of 60 */
  uint32_t len = big ? 1200 : 3;
  for (uint32_t f = 0; f < F; f++)
    ports[f] = g_new(uint32_t, len);
  for (uint32_t step = 0; step < 3000; step++) {
    uint32_t f = (uint32_t)wh_rng_next(&rng) % F;
    if (!active[f]) {
      draw_ports(&rng, big, P, len, ports[f], &np[f]);
      wh_partitions_add_flow(pm, f, ports[f], np[f], 0, step);
      active[f] = TRUE;
    } else if (wh_rng_uniform(&rng) < 0.3) {
      draw_ports(&rng, big, P, len, ports[f], &np[f]);
      wh_partitions_reroute_flow(pm, f, ports[f], np[f], step);
    } else {
      wh_partitions_remove_flow(pm, f, step);
      active[f] = FALSE;
    }
    check_against_truth(pm, F, P, ports, np, active, !big);
    if (big && step % 50 == 0) {
      wh_partitions_settle(pm, step);
      check_against_truth(pm, F, P, ports, np, active, TRUE);
    }
  }
  uint64_t merges, splits, rebuilds;
  wh_partitions_counts(pm, &merges, &splits, &rebuilds);
  ck_assert_uint_gt(merges, 10);
  ck_assert_uint_gt(splits, 10);
  for (uint32_t f = 0; f < F; f++)
    g_free(ports[f]);
}

START_TEST(test_partitions_random_against_truth)
{
  random_ops(FALSE);
}
END_TEST

START_TEST(test_partitions_deferred_rebuild)
{
  random_ops(TRUE);
}
END_TEST

/* ---- on the engine ---- */

static WhRun *observe_run(const char *file, const char *scheduler, char **extra)
{
  GPtrArray *sets = g_ptr_array_new();
  g_ptr_array_add(sets, (char *)"wh::Wormhole::Mode=observe");
  for (char **s = extra; s && *s; s++)
    g_ptr_array_add(sets, *s);
  g_ptr_array_add(sets, NULL);
  WhRunOptions opts = {.scheduler = scheduler, .sets = (char **)sets->pdata};
  WhRun *run = wh_test_run_file(file, &opts);
  g_ptr_array_free(sets, TRUE);
  ck_assert_ptr_nonnull(run->wormhole);
  return run;
}

START_TEST(test_observe_changes_nothing)
{
  g_autoptr(GPtrArray) files = wh_test_scenario_files();
  uint32_t checked = 0;
  for (guint i = 0; i < files->len; i++) {
    const char *file = files->pdata[i];
    if (strstr(file, "bench-fattree-k16")) /* 1024 hosts: validation/wormhole covers it */
      continue;
    g_autoptr(WhRun) exact = wh_test_run_file(file, NULL);
    g_autofree char *fe = wh_test_fingerprint(exact);
    const char *inner[] = {"heap", "calendar"};
    for (int k = 0; k < 2; k++) {
      g_autoptr(WhRun) obs = observe_run(file, inner[k], NULL);
      g_autofree char *fo = wh_test_fingerprint(obs);
      ck_assert_msg(strcmp(fe, fo) == 0, "%s: observe (%s) differs:\n%s\n--\n%s", file, inner[k],
                    fe, fo);
      ck_assert_uint_eq(obs->sim->events_executed, exact->sim->events_executed);
      g_autofree char *json = wh_wormhole_json(obs->wormhole);
      ck_assert_ptr_nonnull(strstr(json, "\"partitions\""));
    }
    checked++;
  }
  ck_assert_uint_ge(checked, 10);
}
END_TEST

START_TEST(test_compute_events_in_no_partition)
{
  /* every event owned by no port or flow is a compute op's end, and the workload's
   * compute ops all ran through the scheduler as such */
  g_autoptr(WhRun) run = observe_run("scenarios/quickstart.xml", NULL, NULL);
  uint32_t compute = 0;
  for (uint32_t i = 0; i < wh_workload_n_ops(run->workload); i++) {
    WhOpInfo op;
    wh_workload_op_info(run->workload, i, &op);
    compute += op.kind == WH_OP_COMPUTE && op.end > op.start;
  }
  ck_assert_uint_gt(compute, 0);
  const WhEventCounts *c = wh_wormhole_event_counts(run->wormhole);
  ck_assert_uint_eq(c->other, compute);
  uint64_t sum = c->other + c->flow_unattributed;
  for (uint32_t p = 0; p < c->n_ports; p++)
    sum += c->port[p];
  for (uint32_t f = 0; f < c->flow_cap; f++)
    sum += c->flow[f];
  ck_assert_uint_eq(sum, c->total);
  ck_assert_uint_eq(c->total, run->sim->events_executed);
}
END_TEST

START_TEST(test_ack_paths_join_partitions)
{
  /* a ring h0 -> h1 -> h2 -> h3 -> h0 on one switch: each flow's data path is its own
   * NIC and the switch's port to its receiver, so data paths alone are disjoint; the ACK
   * of h0 -> h1 leaves h1's NIC, which carries h1 -> h2's data: one partition of 4 */
  g_autoptr(WhScenario) sc = wh_scenario_new("ring", "wh::Star");
  wh_scenario_add_set(sc, "wh::Star::Hosts", "4");
  for (uint32_t i = 0; i < 4; i++)
    wh_scenario_add_flow(sc, i, (i + 1) % 4, 2000000, 0);
  WhRunOptions opts = {.sets = (char *[]){"wh::Wormhole::Mode=observe", NULL}};
  g_autoptr(WhRun) run = wh_test_run(sc, &opts);
  const WhPartitions *pm = wh_detector_partitions(wh_wormhole_detector(run->wormhole));
  uint32_t max_flows = 0;
  for (uint32_t i = 0; i < wh_partitions_n_records(pm); i++)
    max_flows = MAX(max_flows, wh_partitions_record(pm, i)->max_flows);
  ck_assert_uint_eq(max_flows, 4);
  /* the same flows by data paths only */
  g_autoptr(WhPartitions) data_only = wh_partitions_new(run->net->n_ports, NULL, NULL);
  for (uint32_t i = 0; i < 4; i++) {
    const WhFlow *f = wh_transport_flow(run->tp, i);
    wh_partitions_add_flow(data_only, i, f->fwd, f->fwd_hops, 0, 0);
  }
  ck_assert_uint_eq(wh_partitions_n_live(data_only), 4);
}
END_TEST

START_TEST(test_lone_flow_grain)
{
  /* one flow at 400 Gb/s with 4 KB packets delivers 12 or 13 packets per microsecond:
   * its per-period delivery spreads by 1/12.5 = 8%, its CC rate not at all */
  char *delivered[] = {"wh::WormholeStudy::Quantity=delivered", "wh::Wormhole::Window=100", NULL};
  g_autoptr(WhRun) a = observe_run("validation/wormhole/scenarios/lone-400g.xml", NULL, delivered);
  double med = wh_detector_dr_quantile(wh_wormhole_detector(a->wormhole), 0.5);
  ck_assert_msg(fabs(med - 0.08) <= 0.01, "delivered dR median %.4f", med);
  char *rate[] = {"wh::WormholeStudy::Quantity=cc-rate", "wh::Wormhole::Window=100", NULL};
  g_autoptr(WhRun) b = observe_run("validation/wormhole/scenarios/lone-400g.xml", NULL, rate);
  ck_assert(wh_detector_dr_quantile(wh_wormhole_detector(b->wormhole), 0.5) == 0);
  /* the cc-rate run finds the flow steady; the idle rule finds its partition quiet */
  WhDetectorStats st;
  wh_detector_stats(wh_wormhole_detector(b->wormhole), &st);
  ck_assert_uint_gt(st.intervals[WH_STEADY_RATE], 0);
  ck_assert_uint_gt(st.events[WH_STEADY_RATE], 0);
}
END_TEST

/* The registered default of `type`::`param`, parsed. */
static WhParamValue registered(const char *type, const char *param)
{
  const WhParamSpec *spec = wh_type_find_param(wh_registry_lookup(type), param);
  ck_assert_ptr_nonnull(spec);
  WhParamValue v;
  ck_assert(wh_param_parse(spec, spec->def, &v, NULL));
  return v;
}

/* What a run takes when nothing is set is what `whsim list` registers: wh::Wormhole's
 * defaults and, per congestion control, its class's LineFraction and RateWindow. */
START_TEST(test_registered_defaults_are_effective)
{
  g_autoptr(WhConfig) cfg = wh_config_new();
  WhWormholeParams p;
  g_autoptr(GError) err = NULL;
  ck_assert(wh_wormhole_params_from_config(&p, cfg, "dcqcn", FALSE, &err));
  ck_assert_int_eq(p.mode, WH_WORMHOLE_OFF);
  ck_assert(wh_wormhole_params_from_config(&p, cfg, "dcqcn", TRUE, &err));
  ck_assert_int_eq(p.mode, WH_WORMHOLE_SKIP);
  for (const WhCcClass *const *k = wh_cc_classes(); *k; k++) {
    const char *cc = (*k)->name, *type = (*k)->type->name;
    ck_assert(wh_wormhole_params_from_config(&p, cfg, cc, FALSE, &err));
    ck_assert(p.det.theta == registered("wh::Wormhole", "Theta").d);
    ck_assert_uint_eq(p.det.window, registered("wh::Wormhole", "Window").i);
    ck_assert_uint_eq(p.det.period, registered("wh::Wormhole", "SamplePeriod").t);
    ck_assert_uint_eq(p.tail_margin, registered("wh::Wormhole", "TailMargin").t);
    ck_assert(p.rate_tolerance == registered("wh::Wormhole", "RateTolerance").d);
    ck_assert_msg(p.line_fraction == registered(type, "LineFraction").d, "%s", cc);
    ck_assert_msg(p.rate_window == registered(type, "RateWindow").t, "%s", cc);
    ck_assert_int_eq(p.quantity,
                     strcmp(cc, "dctcp") == 0 ? WH_QUANTITY_CWND_RTT : WH_QUANTITY_CC_RATE);
  }
  /* a value set by the user wins; a CC's value reaches only runs of that CC */
  ck_assert(wh_config_set(cfg, "wh::Wormhole::Window", "321", "test", &err));
  ck_assert(wh_config_set(cfg, "wh::HpccCc::LineFraction", "0.75", "test", &err));
  ck_assert(wh_config_set(cfg, "wh::WormholeStudy::Quantity", "delivered", "test", &err));
  ck_assert(wh_wormhole_params_from_config(&p, cfg, "hpcc", FALSE, &err));
  ck_assert_uint_eq(p.det.window, 321);
  ck_assert(p.line_fraction == 0.75);
  ck_assert_int_eq(p.quantity, WH_QUANTITY_DELIVERED);
  ck_assert(wh_wormhole_params_from_config(&p, cfg, "dcqcn", FALSE, &err));
  ck_assert(p.line_fraction == registered("wh::DcqcnCc", "LineFraction").d);
  ck_assert(wh_config_set(cfg, "wh::Wormhole::Mode", "off", "test", &err));
  ck_assert(!wh_wormhole_params_from_config(&p, cfg, "dcqcn", TRUE, &err));
  ck_assert_ptr_nonnull(strstr(err->message, "--scheduler wormhole"));
}
END_TEST

/* The CC classes' Wormhole values stay out of the configuration digest at their
 * defaults (stored runs and memo files made when they were wh::Wormhole parameters,
 * outside the digest, stay valid), and count when set to another value. */
START_TEST(test_cc_values_digest)
{
  static const char *const kinds[] = {"congestion-control", NULL};
  static const char *const params[] = {"LineFraction", "RateWindow"};
  for (const WhCcClass *const *k = wh_cc_classes(); *k; k++) {
    for (size_t i = 0; i < G_N_ELEMENTS(params); i++) {
      const WhParamSpec *spec = wh_type_find_param((*k)->type, params[i]);
      ck_assert_msg(spec && (spec->flags & WH_PARAM_DIGEST_OMITS_DEFAULT), "%s::%s",
                    (*k)->type->name, params[i]);
      g_autoptr(WhConfig) cfg = wh_config_new();
      uint64_t plain = wh_config_digest(cfg, kinds);
      ck_assert(wh_config_set_param(cfg, (*k)->type->name, params[i], spec->def, NULL, NULL));
      ck_assert_uint_eq(wh_config_digest(cfg, kinds), plain);
      const char *other = spec->kind == WH_PARAM_TIME ? "41us" : "0.5";
      ck_assert(wh_config_set_param(cfg, (*k)->type->name, params[i], other, NULL, NULL));
      ck_assert_uint_ne(wh_config_digest(cfg, kinds), plain);
    }
  }
}
END_TEST

/* A parameter that was removed or moved is refused with what replaced it. */
START_TEST(test_gone_parameters_refused)
{
  static const char *const gone[][2] = {
      {"wh::Wormhole::ExactOnly", "was removed"},
      {"wh::Workload::InstantOrder", "was removed"},
      {"wh::Wormhole::ReplayConverged", "was removed"},
      {"wh::Wormhole::Study", "moved to wh::WormholeStudy::Study"},
      {"wh::Wormhole::Quantity", "moved to wh::WormholeStudy::Quantity"},
      {"wh::Wormhole::LineFraction", "wh::HpccCc::LineFraction"},
      {"wh::Wormhole::RateWindow", "wh::DcqcnCc::RateWindow"},
  };
  g_autoptr(WhConfig) cfg = wh_config_new();
  for (size_t i = 0; i < G_N_ELEMENTS(gone); i++) {
    g_autoptr(GError) err = NULL;
    ck_assert(!wh_config_set(cfg, gone[i][0], "1", "x.xml:3", &err));
    ck_assert(g_error_matches(err, WH_CONFIG_ERROR, WH_CONFIG_ERROR_UNKNOWN_PARAM));
    ck_assert_msg(strstr(err->message, gone[i][0]) && strstr(err->message, gone[i][1]), "%s",
                  err->message);
  }
}
END_TEST

Suite *wh_wormhole_suite(void)
{
  Suite *s = suite_create("wormhole");
  TCase *tc = tcase_create("window");
  tcase_add_test(tc, test_window_brute_force);
  suite_add_tcase(s, tc);
  tc = tcase_create("partitions");
  tcase_add_test(tc, test_partitions_merge_split_reroute);
  tcase_add_test(tc, test_partitions_random_against_truth);
  tcase_add_test(tc, test_partitions_deferred_rebuild);
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  tc = tcase_create("observe");
  tcase_add_test(tc, test_compute_events_in_no_partition);
  tcase_add_test(tc, test_ack_paths_join_partitions);
  tcase_add_test(tc, test_lone_flow_grain);
  tcase_add_test(tc, test_registered_defaults_are_effective);
  tcase_add_test(tc, test_cc_values_digest);
  tcase_add_test(tc, test_gone_parameters_refused);
  tcase_set_timeout(tc, 60);
  suite_add_tcase(s, tc);
  tc = tcase_create("observe-identity");
  tcase_add_test(tc, test_observe_changes_nothing);
  tcase_set_timeout(tc, 300);
  suite_add_tcase(s, tc);
  return s;
}
