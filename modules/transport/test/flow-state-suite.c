/* Flow-state tests: CC snapshot/restore through bytes reproduces a run exactly from
 * the restore on (and a scrambled state without the restore does not); parking and
 * shifting the whole network reproduces the run exactly, shifted; advancing flows
 * across a frozen, parked and shifted network moves each receiver by exactly the
 * advanced bytes, delivers every byte exactly once, without retransmissions, and keeps
 * each FCT within max(one RTT, a quarter of the skip) of the run that simulated the
 * skipped interval packet by packet (DCQCN, HPCC, DCTCP), while the same skip with
 * nothing advanced misses that bound; the rate sampler observes without changing the
 * run and counts every delivered byte exactly once; completing a flow mid-flight ends
 * it at that instant at both ends, leaves none of its packets in the network and every
 * queue, buffer and PFC count in agreement with the packets left (the other flows then
 * get the link sooner), ends a workload op at that instant, and is refused for a flow
 * that is not active. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "flow-state.h"
#include "rate-sampler.h"
#include "test-util.h"
#include "workload.h"

/* Four flows on a 100 Gb/s dumbbell, started 100 us apart; flow i carries
 * size x (1 + i x spread). */
static WhScenario *four_flows_spread(uint64_t size, double spread)
{
  WhScenario *sc = wh_scenario_new("four-flows", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "4");
  for (uint32_t i = 0; i < 4; i++)
    wh_scenario_add_flow(sc, i, 4 + i, (uint64_t)((double)size * (1 + i * spread)),
                         i * 100 * WH_US);
  return sc;
}

static WhScenario *four_flows(uint64_t size)
{
  WhScenario *sc = wh_scenario_new("four-flows", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "4");
  for (uint32_t i = 0; i < 4; i++)
    wh_scenario_add_flow(sc, i, 4 + i, size, i * 100 * WH_US);
  return sc;
}

static WhRun *start(WhScenario *sc, const char *cc, WhTime until)
{
  WhRunOptions opts = {.cc = cc};
  g_autoptr(GError) err = NULL;
  WhRun *run = wh_run_new(sc, &opts, &err);
  ck_assert_msg(run != NULL, "%s", err ? err->message : "");
  wh_sim_stop_at(run->sim, until);
  wh_sim_run(run->sim);
  return run;
}

static WhRun *build_run(WhScenario *sc, const char *cc)
{
  WhRunOptions opts = {.cc = cc};
  g_autoptr(GError) err = NULL;
  WhRun *run = wh_run_new(sc, &opts, &err);
  ck_assert_msg(run != NULL, "%s", err ? err->message : "");
  return run;
}

static char *finish(WhRun *run)
{
  wh_sim_stop_at(run->sim, WH_TIME_MAX);
  wh_sim_run(run->sim);
  wh_test_assert_clean_end(run);
  g_autofree char *summary = wh_run_summary_json(run, FALSE);
  GString *s = g_string_new(summary);
  for (uint32_t i = 0; i < run->tp->n_flows; i++)
    g_string_append_printf(s, "%u:%" G_GUINT64_FORMAT "\n", i,
                           (guint64)wh_transport_flow(run->tp, i)->finish);
  return g_string_free(s, FALSE);
}

/* Overwrites every active flow's CC state with nonsense and drops its CC timers; with
 * `rate`, also sends it at line rate (which wakes its NIC early: extra, harmless
 * events). */
static void scramble(WhRun *run, gboolean rate)
{
  for (uint32_t i = 0; i < run->tp->n_flows; i++) {
    WhFlow *f = wh_transport_flow(run->tp, i);
    if (f->state != WH_FLOW_ACTIVE)
      continue;
    WhCcSnapshot junk;
    wh_flow_cc_snapshot(f, &junk);
    memset(junk.state, 0x5a, sizeof junk.state);
    junk.time_set = 0;
    memset(junk.timer_armed, 0, sizeof junk.timer_armed);
    if (rate)
      junk.rate = (double)f->line_rate;
    ck_assert(wh_flow_cc_restore(f, &junk, NULL));
  }
}

static void restore_all(WhRun *run, uint8_t bytes[4][WH_CC_SNAPSHOT_BYTES])
{
  for (uint32_t i = 0; i < 4; i++) {
    WhCcSnapshot snap;
    g_autoptr(GError) err = NULL;
    ck_assert_msg(wh_cc_snapshot_deserialize(bytes[i], WH_CC_SNAPSHOT_BYTES, &snap, &err), "%s",
                  err ? err->message : "");
    ck_assert_msg(wh_flow_cc_restore(wh_transport_flow(run->tp, i), &snap, &err), "%s",
                  err ? err->message : "");
  }
}

static const char *snapshot_ccs[] = {"dcqcn", "hpcc", "dctcp", "timely"};

START_TEST(test_snapshot_restore)
{
  const char *cc = snapshot_ccs[_i];
  const WhTime t = 1500 * WH_US;
  g_autoptr(WhScenario) sc = four_flows(20000000);
  /* run A: snapshot at t, serialized, then run on */
  g_autoptr(WhRun) a = start(sc, cc, t);
  uint8_t bytes[4][WH_CC_SNAPSHOT_BYTES];
  gboolean active[4];
  unsigned armed = 0, ticking = 0;
  for (uint32_t i = 0; i < 4; i++) {
    WhFlow *f = wh_transport_flow(a->tp, i);
    active[i] = f->state == WH_FLOW_ACTIVE;
    ck_assert(active[i]);
    WhCcSnapshot snap;
    wh_flow_cc_snapshot(f, &snap);
    armed += snap.timer_armed[0] + snap.timer_armed[1];
    ticking += (snap.time_set >> 2) & 1; /* DCQCN: rp_deadline, the lazy increase ticks */
    wh_cc_snapshot_serialize(&snap, bytes[i]);
  }
  if (strcmp(cc, "dcqcn") == 0) {
    ck_assert_uint_gt(a->tp->c.cnps, 0);   /* the state is not the initial one */
    ck_assert_uint_gt(armed + ticking, 0); /* timers or increase ticks pending */
  }
  g_autofree char *fa = finish(a);
  /* run B: same history to t, state scrambled, then restored from the bytes */
  g_autoptr(WhRun) b = start(sc, cc, t);
  scramble(b, FALSE);
  restore_all(b, bytes);
  g_autofree char *fb = finish(b);
  ck_assert_str_eq(fa, fb);
  /* with the rate scrambled too, the NIC wakes early once: same flows, same times */
  g_autoptr(WhRun) d = start(sc, cc, t);
  scramble(d, TRUE);
  restore_all(d, bytes);
  g_autofree char *fd = finish(d);
  ck_assert_str_eq(strstr(fa, "\"packets_delivered\""), strstr(fd, "\"packets_delivered\""));
  /* control: scrambled without the restore, the run differs */
  g_autoptr(WhRun) c = start(sc, cc, t);
  scramble(c, FALSE);
  g_autofree char *fc = finish(c);
  ck_assert_str_ne(fa, fc);
  /* a snapshot refuses the wrong bytes */
  WhCcSnapshot snap;
  bytes[0][0] ^= 0xff;
  ck_assert(!wh_cc_snapshot_deserialize(bytes[0], sizeof bytes[0], &snap, NULL));
}
END_TEST

/* Four equal flows on a 4-pair dumbbell, started 100 us apart; with `mirrored` the
 * flow started r-th runs over host pair 3 - r instead of r: the same contention
 * pattern on other hosts and ports. */
static WhScenario *four_roles(gboolean mirrored)
{
  WhScenario *sc = wh_scenario_new("four-roles", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "4");
  for (uint32_t r = 0; r < 4; r++) {
    uint32_t k = mirrored ? 3 - r : r;
    wh_scenario_add_flow(sc, k, 4 + k, 20000000, r * 100 * WH_US);
  }
  return sc;
}

START_TEST(test_cross_flow_restore)
{
  /* run A to t, its CC states taken; run B, the mirrored dumbbell (other hosts, ports
   * and flow ids' paths), to t, its states scrambled, then each flow given its
   * counterpart's state from A: B's FCTs stay within 1% of A's counterparts'. Controls:
   * B scrambled and not restored (must differ), B left alone (printed). With four equal
   * flows started at one instant instead, B alone already differs from A by up to 15%
   * (HPCC): which flow's packet goes first decides the shares, and a restore there is
   * judged against that. */
  const char *cc = snapshot_ccs[_i];
  const WhTime t = 1500 * WH_US;
  g_autoptr(WhScenario) sa = four_roles(FALSE);
  g_autoptr(WhScenario) sb = four_roles(TRUE);
  g_autoptr(WhRun) a = start(sa, cc, t);
  uint8_t bytes[4][WH_CC_SNAPSHOT_BYTES];
  for (uint32_t i = 0; i < 4; i++) {
    WhCcSnapshot snap;
    wh_flow_cc_snapshot(wh_transport_flow(a->tp, i), &snap);
    wh_cc_snapshot_serialize(&snap, bytes[i]);
  }
  g_autofree char *fa = finish(a);
  double worst = 0, worst_control = 0;
  double worst_natural = 0;
  for (int restore = 2; restore >= 0; restore--) {
    g_autoptr(WhRun) b = start(sb, cc, t);
    if (restore < 2)
      scramble(b, FALSE);
    for (uint32_t j = 0; restore == 1 && j < 4; j++) {
      WhCcSnapshot snap;
      ck_assert(wh_cc_snapshot_deserialize(bytes[j], WH_CC_SNAPSHOT_BYTES, &snap, NULL));
      g_autoptr(GError) err = NULL;
      ck_assert_msg(wh_flow_cc_restore(wh_transport_flow(b->tp, j), &snap, &err), "%s",
                    err ? err->message : "");
    }
    g_autofree char *fb = finish(b);
    for (uint32_t j = 0; j < 4; j++) {
      const WhFlow *x = wh_transport_flow(a->tp, j), *y = wh_transport_flow(b->tp, j);
      double e = fabs((double)(y->finish - y->start) - (double)(x->finish - x->start)) /
                 (double)(x->finish - x->start);
      if (restore == 2)
        worst_natural = MAX(worst_natural, e);
      else if (restore)
        worst = MAX(worst, e);
      else
        worst_control = MAX(worst_control, e);
    }
  }
  fprintf(stderr,
          "%s: cross-flow restore: worst FCT error %.4f%% (scrambled, not restored: %.4f%%; "
          "not touched: %.4f%%)\n",
          cc, worst * 100, worst_control * 100, worst_natural * 100);
  ck_assert_msg(worst <= 0.01, "%s: a restored flow's FCT is off by %.3f%%", cc, worst * 100);
}
END_TEST

static gboolean match_all(uint32_t owner, void *data)
{
  (void)owner;
  (void)data;
  return TRUE;
}

/* Skips [t, t + dt) of a contended 4-flow run (sizes 1, 1.5, 2, 2.5 x size, so the
 * flows finish one after another rather than in a near tie): freeze every port, park every event,
 * advance each flow by its delivery rate over the preceding `window` times dt, shift
 * ports, flows and events by dt, resume. The rate window spans several periods of
 * the CCs' rate oscillation (as a steady-state detector's window must). */
typedef struct {
  const char *cc;
  const char *const *sets;
  uint64_t size;
  WhTime t, dt, window;
} AdvanceCase;

/* Parks everything at t, shifts it all by dt and resumes without advancing: the rest of the run
 * must be the reference run moved dt later, exactly. */
static void check_pure_shift(const AdvanceCase *c)
{
  g_autoptr(WhScenario) sc = four_flows_spread(c->size, 0.5);
  for (const char *const *set = c->sets; set && *set; set++) {
    g_auto(GStrv) kv = g_strsplit(*set, "=", 2);
    wh_scenario_add_set(sc, kv[0], kv[1]);
  }
  g_autoptr(WhRun) ref = start(sc, c->cc, WH_TIME_MAX);
  g_autofree char *fref = finish(ref);
  g_autoptr(WhRun) run = start(sc, c->cc, c->t);
  g_autoptr(GPtrArray) parked = g_ptr_array_new();
  wh_sim_park(run->sim, match_all, NULL, parked);
  for (uint32_t i = 0; i < 4; i++)
    wh_transport_shift_flow(run->tp, wh_transport_flow(run->tp, i), c->dt);
  for (uint32_t p = 0; p < run->net->n_ports; p++)
    wh_net_shift_port(run->net, p, c->dt);
  wh_sim_unpark(run->sim, parked, c->dt);
  g_autofree char *frun = finish(run);
  for (uint32_t i = 0; i < 4; i++) {
    const WhFlow *a = wh_transport_flow(ref->tp, i), *b = wh_transport_flow(run->tp, i);
    ck_assert_uint_gt(a->finish, c->t);
    ck_assert_msg(b->finish == a->finish + c->dt,
                  "%s flow %u: finish %" G_GUINT64_FORMAT " vs %" G_GUINT64_FORMAT " + shift",
                  c->cc, i, b->finish, a->finish);
  }
  ck_assert_uint_eq(run->sim->events_executed, ref->sim->events_executed);
}

/* Runs case `c` with the skip, advancing each flow by `fraction` of the bytes its
 * delivery rate over the window predicts (1: the real skip; 0: the negative control,
 * a skip that moves no bytes), and returns the largest ratio of a flow's FCT error
 * (against the run that simulated the skipped interval) to its tolerance,
 * max(one RTT, dt / 4): an advance that moved no bytes delays every flow by about dt. */
static double check_advance(const AdvanceCase *c, double fraction)
{
  const char *cc = c->cc;
  const char *const *sets = c->sets;
  const WhTime t = c->t, dt = c->dt, window = c->window;
  const uint64_t size = c->size;
  g_autoptr(WhScenario) sc = four_flows_spread(size, 0.5);
  for (const char *const *set = sets; set && *set; set++) {
    g_auto(GStrv) kv = g_strsplit(*set, "=", 2);
    wh_scenario_add_set(sc, kv[0], kv[1]);
  }
  g_autoptr(WhRun) ref = start(sc, cc, WH_TIME_MAX);
  g_autofree char *fref = finish(ref);
  g_autoptr(WhRun) run = start(sc, cc, t - window);
  uint64_t before[4];
  for (uint32_t i = 0; i < 4; i++)
    before[i] = wh_transport_flow(run->tp, i)->rcv_nxt;
  /* Wormhole's steadiness measure over the rate window, from 1 ms delivery samples:
   * dR = (max - min) / mean (the paper skips when dR < theta = 5%) */
  const WhTime sample = WH_MS;
  WhRateSampler *rs = wh_rate_sampler_new(run->tp, sample);
  wh_sim_stop_at(run->sim, t);
  wh_sim_run(run->sim);
  wh_rate_sampler_close(rs, t);
  for (uint32_t i = 0; i < 4; i++) {
    uint32_t k0 = (uint32_t)((t - window) / sample), k1 = (uint32_t)(t / sample);
    double lo = INFINITY, hi = 0, sum = 0;
    for (uint32_t k = k0; k < k1; k++) {
      double r = wh_rate_sampler_delivery_rate(rs, i, k, k + 1);
      lo = MIN(lo, r);
      hi = MAX(hi, r);
      sum += r;
    }
    fprintf(stderr, "%s before the skip: flow %u rate %.2f Gb/s, dR %.1f%% over %u ms\n", cc, i,
            sum / (k1 - k0) * 1e-9, (hi - lo) / (sum / (k1 - k0)) * 100, k1 - k0);
  }
  wh_rate_sampler_free(rs);
  WhNet *net = run->net;
  for (uint32_t p = 0; p < net->n_ports; p++)
    wh_net_freeze_port(net, p, TRUE);
  g_autoptr(GPtrArray) parked = g_ptr_array_new();
  wh_sim_park(run->sim, match_all, NULL, parked);
  ck_assert_uint_eq(wh_sim_pending(run->sim), 0);
  uint64_t advanced = 0, bytes[4], at_t[4];
  for (uint32_t i = 0; i < 4; i++) {
    WhFlow *f = wh_transport_flow(run->tp, i);
    double rate = (double)(f->rcv_nxt - before[i]) / wh_time_to_s(window); /* bytes/s */
    bytes[i] = (uint64_t)(fraction * rate * wh_time_to_s(dt));
    at_t[i] = f->rcv_nxt;
    g_autoptr(GError) err = NULL;
    ck_assert_msg(wh_transport_advance(run->tp, f, bytes[i], &err), "%s", err ? err->message : "");
    advanced += bytes[i];
    wh_transport_shift_flow(run->tp, f, dt);
  }
  for (uint32_t p = 0; p < net->n_ports; p++)
    wh_net_shift_port(net, p, dt);
  wh_sim_unpark(run->sim, parked, dt);
  for (uint32_t p = 0; p < net->n_ports; p++)
    wh_net_freeze_port(net, p, FALSE);
  /* across the skip, each receiver's next expected byte moved by exactly its advance */
  for (uint32_t i = 0; i < 4; i++)
    ck_assert_uint_eq(wh_transport_flow(run->tp, i)->rcv_nxt - at_t[i], bytes[i]);
  g_autofree char *frun = finish(run);
  ck_assert_uint_eq(run->tp->c.advanced_bytes, advanced);
  ck_assert_uint_eq(run->tp->c.retx_bytes, 0);
  ck_assert_uint_eq(run->tp->c.nacks, 0);
  ck_assert_uint_eq(run->tp->c.timeouts, 0);
  /* one RTT: data and ACK across the three hops, unloaded */
  const WhFlow *f0 = wh_transport_flow(ref->tp, 0);
  WhTime rtt = 6 * WH_US + 3 * wh_time_tx(run->tp->p.mtu + run->tp->p.header_bytes,
                                          net->port[f0->fwd[0]].rate_bps);
  double tol = MAX((double)rtt, 0.25 * (double)dt), worst = 0;
  for (uint32_t i = 0; i < 4; i++) {
    const WhFlow *a = wh_transport_flow(ref->tp, i), *b = wh_transport_flow(run->tp, i);
    ck_assert_uint_eq(b->rcv_nxt, b->size);
    double fa = (double)(a->finish - a->start), fb = (double)(b->finish - b->start);
    worst = MAX(worst, fabs(fb - fa) / tol);
    fprintf(stderr,
            "%s advance x%.0f: flow %u FCT %.1f us packet by packet, %.1f us skipped (%+.1f us, "
            "tolerance %.1f us)\n",
            cc, fraction, i, fa * 1e-6, fb * 1e-6, (fb - fa) * 1e-6, tol * 1e-6);
  }
  return worst;
}

START_TEST(test_advance)
{
  /* HPCC with W_AI = (1 - eta) x B / N for N = 4 flows, the HPCC paper's sizing for
   * fair convergence (its run.py default, 40 Mb/s, converges to a drifting unfair
   * split that no rate window predicts) */
  static const char *hpcc[] = {"wh::HpccCc::Wai=1.25Gbps", NULL};
  static const char *dctcp[] = {"wh::DctcpCc::Kmin=250KB", "wh::DctcpCc::Kmax=350KB",
                                "wh::RdmaFlow::Mtu=4096B", NULL};
  /* Each skip starts after the CC has converged (DCQCN's shares settle over tens of
   * ms) and estimates rates over a window spanning many CC periods: DCTCP's per-flow
   * rates swing by about 40% between 1 ms samples (dR, printed; DCQCN 3-6%, HPCC
   * 0.5-2%), so its window is 50 ms. Each skip is long against the drift by which
   * the run's later course departs from the reference anyway (DCQCN and DCTCP shares
   * wander by up to ~0.5% over the hundreds of ms left, 1-4 ms of FCT; HPCC's by tens
   * of us), so that a quarter of it bounds the error. */
  static const AdvanceCase cases[] = {
      {"dcqcn", NULL, 300000000, 60 * WH_MS, 10 * WH_MS, 10 * WH_MS},
      {"hpcc", hpcc, 60000000, 12 * WH_MS, 2 * WH_MS, 4 * WH_MS},
      {"dctcp", dctcp, 1500000000, 100 * WH_MS, 40 * WH_MS, 50 * WH_MS},
  };
  check_pure_shift(&cases[_i]);
  double worst = check_advance(&cases[_i], 1);
  ck_assert_msg(worst <= 1, "%s: an FCT is off by %.2f x its tolerance", cases[_i].cc, worst);
  /* negative control: the same skip advancing no bytes misses the bound */
  double control = check_advance(&cases[_i], 0);
  ck_assert_msg(control > 1, "%s: a skip that moved no bytes passes (%.2f x tolerance)",
                cases[_i].cc, control);
}
END_TEST

START_TEST(test_sampler_changes_nothing)
{
  /* a fat-tree with ECMP, ECN and PFC: the same run with and without the sampler */
  g_autofree char *path = wh_test_source_path("tests/scenarios/fattree-k4-mixed.xml");
  g_autoptr(WhScenario) sc = wh_scenario_load(path, NULL);
  ck_assert_ptr_nonnull(sc);
  g_autoptr(WhRun) plain = start(sc, NULL, WH_TIME_MAX);
  g_autofree char *fp = finish(plain);
  g_autoptr(WhRun) observed = build_run(sc, NULL);
  g_autoptr(WhRateSampler) s = wh_rate_sampler_new(observed->tp, 10 * WH_US);
  g_autofree char *fo = finish(observed);
  ck_assert_str_eq(fp, fo);
  wh_rate_sampler_close(s, observed->sim->now);
  ck_assert_uint_gt(wh_rate_sampler_periods(s), 50);
  /* every byte of every flow was seen leaving its sender and reaching its last hop,
   * once (a retransmitted byte once more: nothing is dropped here) */
  ck_assert_uint_eq(observed->net->c.drops, 0);
  for (uint32_t i = 0; i < observed->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(observed->tp, i);
    uint64_t sent = 0, delivered = 0;
    for (uint32_t k = 0; k <= wh_rate_sampler_periods(s); k++) {
      sent += wh_rate_sampler_sent(s, i, k);
      delivered += wh_rate_sampler_delivered(s, i, k);
    }
    ck_assert_uint_eq(sent, f->bytes_sent);
    ck_assert_uint_eq(delivered, f->size + f->retx_bytes);
  }
}
END_TEST

START_TEST(test_sampler_values)
{
  /* four flows on the dumbbell, compared with the same run stepped to each period's
   * end: sampled queues equal the queue read there, and the bytes a flow delivered in
   * a period equal the payload its receiver's last link carried in it */
  const WhTime period = 20 * WH_US, end = 3 * WH_MS;
  g_autoptr(WhScenario) sc = four_flows(30000000);
  g_autoptr(WhRun) a = build_run(sc, NULL);
  g_autoptr(WhRateSampler) s = wh_rate_sampler_new(a->tp, period);
  wh_sim_stop_at(a->sim, end);
  wh_sim_run(a->sim);
  wh_rate_sampler_close(s, end);
  g_autoptr(WhRun) b = build_run(sc, NULL);
  const WhTransportParams *p = &b->tp->p;
  uint32_t bott = wh_transport_flow(b->tp, 0)->fwd[1], last[4];
  uint64_t tx[4] = {0};
  for (uint32_t i = 0; i < 4; i++)
    last[i] = wh_transport_flow(b->tp, i)->fwd[2];
  for (uint32_t k = 0; k < end / period; k++) {
    wh_sim_stop_at(b->sim, (k + 1) * period - 1);
    wh_sim_run(b->sim);
    ck_assert_uint_eq(wh_rate_sampler_queue(s, bott, k), b->net->port[bott].qd.total_bytes);
    for (uint32_t i = 0; i < 4; i++) {
      uint64_t now_tx = b->net->port[last[i]].tx_bytes;
      /* full-size packets only in this window: wire = payload x (mtu + header) / mtu */
      ck_assert_uint_eq(wh_rate_sampler_delivered(s, i, k) * (p->mtu + p->header_bytes),
                        (now_tx - tx[i]) * p->mtu);
      tx[i] = now_tx;
    }
  }
  uint32_t k0 = (uint32_t)(WH_MS / period), k1 = (uint32_t)(end / period);
  for (uint32_t i = 0; i < 4; i++)
    ck_assert_double_gt(wh_rate_sampler_delivery_rate(s, i, k0, k1), 1e9);
}
END_TEST

/* ---- completing a flow ---- */

typedef struct {
  const WhFlow *flow;
  uint32_t n;
} FlowPackets;

static void count_flow_packet(WhPacket *pkt, void *data)
{
  FlowPackets *c = data;
  c->n += pkt->flow == c->flow;
}

static uint32_t packets_of(WhRun *run, const WhFlow *f)
{
  FlowPackets c = {f, 0};
  wh_net_foreach_packet(run->net, count_flow_packet, &c);
  return c.n;
}

/* The network's counts agree with the packets it holds: each queue's byte and packet
 * counts, each switch's shared-buffer occupancy, each ingress port's PFC counts (and a
 * pause asked for only while its count is above XON, else it would never be lifted),
 * and each link's arrival event set for the first packet on it, none without one. */
static void assert_net_consistent(const WhNet *net)
{
  g_autofree uint64_t *buffer = g_new0(uint64_t, net->n_nodes);
  g_autofree uint64_t *ingress = g_new0(uint64_t, (gsize)net->n_ports * WH_NPRIO);
  for (uint32_t i = 0; i < net->n_ports; i++) {
    const WhPort *p = &net->port[i];
    uint64_t total = 0;
    uint32_t packets = 0;
    for (unsigned q = 0; q < WH_NPRIO; q++) {
      uint64_t bytes = 0;
      const WhPacket *last = NULL;
      for (const WhPacket *pkt = wh_queue_disc_band_const(&p->qd, q)->head; pkt;
           last = pkt, pkt = pkt->next) {
        bytes += pkt->size;
        packets++;
        if (!net->node[p->node].is_switch)
          continue;
        buffer[p->node] += pkt->size;
        uint32_t in = pkt->route[pkt->hop - 1]; /* the port of the link it came over */
        if (net->port[in].pfc_data_mask & (1u << pkt->in_prio))
          ingress[(gsize)in * WH_NPRIO + pkt->in_prio] += pkt->size;
      }
      ck_assert_ptr_eq(wh_queue_disc_band_const(&p->qd, q)->tail, last);
      ck_assert_uint_eq(wh_queue_disc_band_const(&p->qd, q)->bytes, bytes);
      ck_assert_uint_eq((p->qd.nonempty >> q) & 1u, bytes > 0);
      total += bytes;
    }
    ck_assert_uint_eq(p->qd.total_bytes, total);
    ck_assert_uint_eq(wh_queue_disc_packets(&p->qd), packets);
    const WhPacket *last = NULL;
    for (const WhPacket *pkt = p->fly_head; pkt; pkt = pkt->next)
      last = pkt;
    ck_assert_ptr_eq(p->fly_tail, last);
    if (p->fly_head)
      ck_assert_msg(p->fly_event && p->fly_event->time <= p->fly_head->arrive,
                    "port %u: no arrival event for the first packet on its link", i);
    else
      ck_assert_msg(p->fly_event == NULL, "port %u: an arrival event with no packet", i);
  }
  for (uint32_t n = 0; n < net->n_nodes; n++)
    if (net->node[n].is_switch)
      ck_assert_uint_eq(net->buffer_used[n], buffer[n]);
  for (uint32_t i = 0; i < net->n_ports; i++) {
    const WhPort *p = &net->port[i];
    for (unsigned q = 0; q < WH_NPRIO; q++) {
      if (!(p->pfc_data_mask & (1u << q)))
        continue;
      ck_assert_uint_eq(p->ingress_bytes[q], ingress[(gsize)i * WH_NPRIO + q]);
      if ((p->pfc_state >> q) & 1u)
        ck_assert_msg(p->ingress_bytes[q] > net->p.pfc_xon,
                      "port %u priority %u: paused at %u B, at or below XON", i, q,
                      p->ingress_bytes[q]);
    }
  }
}

/* Completes flow `id` of `run` now and checks the flow at both ends and the network. */
static void complete_now(WhRun *run, uint32_t id)
{
  WhFlow *f = wh_transport_flow(run->tp, id);
  ck_assert_uint_eq(f->state, WH_FLOW_ACTIVE);
  ck_assert_uint_gt(packets_of(run, f), 0);
  uint64_t delivered = f->rcv_nxt, advanced = run->tp->c.advanced_bytes;
  uint64_t sent = run->tp->c.data_bytes_sent, arrived = run->tp->c.data_bytes_arrived;
  uint32_t finished = run->tp->c.flows_finished;
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_transport_complete(run->tp, f, &err), "%s", err ? err->message : "");
  WhTime now = run->sim->now;
  ck_assert_uint_eq(f->finish, now);
  ck_assert_uint_eq(f->state, WH_FLOW_SENT);
  ck_assert_uint_eq(f->rcv_nxt, f->size);
  ck_assert_uint_eq(f->snd_una, f->size);
  ck_assert_uint_eq(f->snd_max_sent, f->size);
  ck_assert_uint_eq(run->tp->c.advanced_bytes - advanced, f->size - delivered);
  ck_assert_uint_eq(run->tp->c.data_bytes_sent, sent);
  ck_assert_uint_eq(run->tp->c.data_bytes_arrived, arrived);
  ck_assert_uint_eq(run->tp->c.flows_finished, finished + 1);
  ck_assert_uint_eq(packets_of(run, f), 0);
  for (unsigned k = 0; k < WH_FLOW_TIMERS; k++)
    ck_assert_ptr_null(f->timers[k]);
  ck_assert_uint_eq(f->heap_pos, WH_NO_HEAP);
  assert_net_consistent(run->net);
}

/* Runs `sc` to the end; the end state is clean and the network empty. */
static void run_to_end(WhRun *run)
{
  wh_sim_stop_at(run->sim, WH_TIME_MAX);
  wh_sim_run(run->sim);
  wh_test_assert_clean_end(run);
  assert_net_consistent(run->net);
  for (uint32_t i = 0; i < run->net->n_ports; i++) {
    const WhPort *p = &run->net->port[i];
    ck_assert_uint_eq(p->pfc_state | p->paused | p->pfc_pending, 0);
  }
}

START_TEST(test_complete_lone_flow)
{
  g_autoptr(WhScenario) sc = wh_scenario_new("lone", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "1");
  wh_scenario_add_flow(sc, 0, 1, 1000000, 10 * WH_US);
  g_autoptr(WhRun) ref = start(sc, NULL, WH_TIME_MAX);
  run_to_end(ref);
  const WhFlow *fr = wh_transport_flow(ref->tp, 0);
  WhTime mid = fr->start + (fr->finish - fr->start) / 2;
  g_autoptr(WhRun) run = start(sc, NULL, mid);
  const WhFlow *f = wh_transport_flow(run->tp, 0);
  ck_assert_uint_gt(f->rcv_nxt, 0);
  ck_assert_uint_lt(f->rcv_nxt, f->size);
  WhTime now = run->sim->now;
  complete_now(run, 0);
  ck_assert_uint_gt(run->net->c.reclaimed, 0);
  run_to_end(run);
  ck_assert_uint_eq(f->finish, now);
  ck_assert_uint_le(run->sim->now, ref->sim->now);
  /* at the instant the last byte arrives, its ACK still on the way: the receiver's
   * finish stands, the sender completes now and the ACK is taken out */
  g_autoptr(WhRun) late = start(sc, NULL, fr->finish);
  WhFlow *fl = wh_transport_flow(late->tp, 0);
  ck_assert_uint_eq(fl->finish, fr->finish);
  ck_assert_uint_eq(fl->state, WH_FLOW_ACTIVE);
  ck_assert_uint_gt(packets_of(late, fl), 0);
  ck_assert(wh_transport_complete(late->tp, fl, NULL));
  ck_assert_uint_eq(fl->finish, fr->finish);
  ck_assert_uint_eq(fl->state, WH_FLOW_SENT);
  ck_assert_uint_eq(late->tp->c.flows_finished, 1);
  ck_assert_uint_eq(late->tp->c.flows_acked, 1);
  ck_assert_uint_eq(late->tp->c.advanced_bytes, 0);
  ck_assert_uint_eq(packets_of(late, fl), 0);
  run_to_end(late);
}
END_TEST

/* Two 2 MB flows into one bottleneck, with XOFF low enough that the left switch pauses
 * both senders; flow 0 is completed once a quarter of the reference run has passed,
 * with queues and pauses in place. */
static WhScenario *two_flows_pfc(void)
{
  WhScenario *sc = wh_scenario_new("two", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "2");
  wh_scenario_add_set(sc, "wh::Switch::PfcXoff", "40KB");
  wh_scenario_add_set(sc, "wh::Switch::PfcXon", "20KB");
  wh_scenario_add_flow(sc, 0, 2, 2000000, 0);
  wh_scenario_add_flow(sc, 1, 3, 2000000, 0);
  return sc;
}

START_TEST(test_complete_shared_bottleneck)
{
  g_autoptr(WhScenario) sc = two_flows_pfc();
  g_autoptr(WhRun) ref = start(sc, NULL, WH_TIME_MAX);
  run_to_end(ref);
  const WhFlow *r1 = wh_transport_flow(ref->tp, 1);
  WhTime at = MAX(wh_transport_flow(ref->tp, 0)->finish, r1->finish) / 4;
  g_autoptr(WhRun) run = start(sc, NULL, at);
  uint64_t buffered = 0;
  for (uint32_t n = 0; n < run->net->n_nodes; n++)
    buffered += run->net->buffer_used[n];
  ck_assert_uint_gt(run->net->c.pfc_pauses, 0);
  ck_assert_uint_gt(buffered, 0);
  /* the left switch has paused flow 0's sender; taking flow 0's packets out of its
   * buffer brings that ingress count (kept on the sender's port) to zero, so the resume
   * frame is on its way from the switch's port */
  const WhFlow *f0 = wh_transport_flow(run->tp, 0);
  const WhPort *link0 = &run->net->port[f0->fwd[0]];
  const WhPort *in0 = &run->net->port[link0->peer];
  const uint8_t bit = (uint8_t)(1u << f0->prio);
  ck_assert_uint_eq(link0->pfc_state & bit, bit);
  ck_assert_uint_gt(link0->ingress_bytes[f0->prio], run->net->p.pfc_xon);
  complete_now(run, 0);
  ck_assert_uint_eq(link0->ingress_bytes[f0->prio], 0);
  ck_assert_uint_eq(link0->pfc_state & bit, 0);
  ck_assert_uint_eq(in0->pfc_pending & bit, bit);
  run_to_end(run);
  const WhFlow *f1 = wh_transport_flow(run->tp, 1);
  ck_assert_uint_eq(f1->rcv_nxt, f1->size);
  ck_assert_uint_eq(run->net->c.drops, 0);
  ck_assert_uint_eq(f1->bytes_sent - f1->retx_bytes, f1->size);
  ck_assert_uint_eq(run->net->c.pfc_resumes, run->net->c.pfc_pauses);
  ck_assert_msg(f1->finish < r1->finish,
                "the survivor ends at %" G_GUINT64_FORMAT " ps, not before %" G_GUINT64_FORMAT,
                (guint64)f1->finish, (guint64)r1->finish);
  fprintf(stderr, "complete: survivor FCT %.1f us, %.1f us with both flows to the end\n",
          (double)(f1->finish - f1->start) * 1e-6, (double)(r1->finish - r1->start) * 1e-6);
}
END_TEST

START_TEST(test_complete_workload_op)
{
  /* send 0 -> 1 (4 MB), then a compute on rank 1 that depends on it */
  g_autoptr(WhScenario) sc = wh_scenario_new("op", "wh::Star");
  wh_scenario_add_set(sc, "wh::Star::Hosts", "4");
  g_autoptr(WhRun) run = build_run(sc, NULL);
  WhWorkload *w = wh_workload_new(run->tp, 4);
  g_autoptr(GError) err = NULL;
  ck_assert_int_eq(wh_workload_add_send(w, "act", 0, 1, 4000000, NULL, 0, &err), 0);
  uint32_t dep[] = {0};
  ck_assert_int_eq(wh_workload_add_compute(w, "fwd", 1, 30 * WH_US, dep, 1, &err), 1);
  wh_workload_start(w);
  wh_sim_stop_at(run->sim, 100 * WH_US);
  wh_sim_run(run->sim);
  WhOpInfo send, next;
  wh_workload_op_info(w, 0, &send);
  ck_assert(send.started && !send.ended);
  ck_assert_uint_eq(run->tp->n_flows, 1);
  uint32_t op = 99, index = 99;
  ck_assert(wh_workload_flow_origin(w, 0, &op, &index));
  ck_assert_uint_eq(op, 0);
  complete_now(run, 0);
  WhTime now = run->sim->now;
  wh_workload_op_info(w, 0, &send);
  wh_workload_op_info(w, 1, &next);
  ck_assert(send.ended);
  ck_assert_uint_eq(send.end, now);
  ck_assert(next.started);
  ck_assert_uint_eq(next.start, now);
  run_to_end(run);
  ck_assert(wh_workload_done(w));
  wh_workload_op_info(w, 1, &next);
  ck_assert_uint_eq(next.end, now + 30 * WH_US);
  wh_workload_free(w);
}
END_TEST

/* A refused completion leaves the flow and the transport's counters as they were. */
static void assert_refused(WhRun *run, uint32_t id, const char *why)
{
  WhFlow *f = wh_transport_flow(run->tp, id);
  WhFlow before = *f;
  WhTransportCounters c = run->tp->c;
  WhNetCounters nc = run->net->c;
  uint64_t events = wh_sim_pending(run->sim);
  g_autoptr(GError) err = NULL;
  ck_assert(!wh_transport_complete(run->tp, f, &err));
  ck_assert_ptr_nonnull(err);
  ck_assert_msg(strstr(err->message, why) != NULL, "%s", err->message);
  ck_assert_int_eq(memcmp(&before, f, sizeof before), 0);
  ck_assert_int_eq(memcmp(&c, &run->tp->c, sizeof c), 0);
  ck_assert_int_eq(memcmp(&nc, &run->net->c, sizeof nc), 0);
  ck_assert_uint_eq(wh_sim_pending(run->sim), events);
}

START_TEST(test_complete_refused)
{
  g_autoptr(WhScenario) sc = wh_scenario_new("refused", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "2");
  wh_scenario_add_flow(sc, 0, 2, 100000, 0);
  wh_scenario_add_flow(sc, 1, 3, 100000, 50 * WH_US);
  g_autoptr(WhRun) run = start(sc, NULL, 40 * WH_US);
  ck_assert_uint_eq(wh_transport_flow(run->tp, 0)->state, WH_FLOW_SENT);
  assert_refused(run, 0, "already complete");
  ck_assert_uint_eq(wh_transport_flow(run->tp, 1)->state, WH_FLOW_PENDING);
  assert_refused(run, 1, "has not started");
  run_to_end(run);
  ck_assert_uint_eq(run->tp->c.advanced_bytes, 0);
}
END_TEST

Suite *wh_flow_state_suite(void)
{
  Suite *s = suite_create("flow-state");
  TCase *tc = tcase_create("snapshot");
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, test_snapshot_restore, 0, G_N_ELEMENTS(snapshot_ccs));
  tcase_add_loop_test(tc, test_cross_flow_restore, 0, G_N_ELEMENTS(snapshot_ccs));
  suite_add_tcase(s, tc);
  tc = tcase_create("advance");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, test_advance, 0, 3);
  suite_add_tcase(s, tc);
  tc = tcase_create("sampler");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_sampler_changes_nothing);
  tcase_add_test(tc, test_sampler_values);
  suite_add_tcase(s, tc);
  tc = tcase_create("complete");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_complete_lone_flow);
  tcase_add_test(tc, test_complete_shared_bottleneck);
  tcase_add_test(tc, test_complete_workload_op);
  tcase_add_test(tc, test_complete_refused);
  suite_add_tcase(s, tc);
  return s;
}
