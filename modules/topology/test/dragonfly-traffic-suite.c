/* Traffic on the dragonfly: uniform random traffic inside a group at >= 90% of the
 * injection bandwidth with minimal routing; adversarial traffic (group i to group
 * i+1) at >= 2x the throughput of minimal routing with adaptive routing; PFC pauses
 * in both runs and every flow complete (deadlock-free with the virtual channels);
 * the single-class control deadlocks and the watchdog reports it; no packet arrives
 * out of order under adaptive routing; path changes are observable. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dragonfly.h"
#include "test-util.h"

static WhRun *build_file(const char *relative, const WhRunOptions *opts)
{
  g_autofree char *path = wh_test_source_path(relative);
  g_autoptr(GError) error = NULL;
  WhScenario *sc = wh_scenario_load(path, &error);
  ck_assert_msg(sc != NULL, "cannot load %s: %s", path, error ? error->message : "?");
  WhRun *run = wh_run_new(sc, opts, &error);
  ck_assert_msg(run != NULL, "%s: %s", path, error ? error->message : "?");
  wh_run_take_scenario(run, sc);
  return run;
}

START_TEST(test_uniform_inside_a_group)
{
  /* 32 hosts of one group, 64 flows of 256 KB each to random hosts: the bytes
   * delivered between 100 us and 1 ms, against what the NICs can inject */
  g_autoptr(WhRun) run = build_file("tests/scenarios/dragonfly-uniform-group.xml", NULL);
  const WhTime t0 = 100 * WH_US, t1 = 1000 * WH_US;
  wh_sim_stop_at(run->sim, t0);
  wh_sim_run(run->sim);
  uint64_t b0 = run->tp->c.data_bytes_arrived;
  wh_sim_stop_at(run->sim, t1);
  wh_sim_run(run->sim);
  uint64_t b1 = run->tp->c.data_bytes_arrived;
  ck_assert_uint_gt(run->tp->n_flows - run->tp->c.flows_finished, 0); /* still loaded */
  double capacity = (double)run->net->n_hosts * 100e9 * wh_time_to_s(t1 - t0);
  double frac = (double)(b1 - b0) * 8 / capacity;
  wh_sim_stop_at(run->sim, WH_TIME_MAX);
  wh_sim_run(run->sim);
  wh_test_assert_clean_end(run);
  fprintf(stderr,
          "dragonfly uniform random inside a group: %.1f%% of injection bandwidth "
          "delivered (100 us .. 1 ms), minimal routing\n",
          frac * 100);
  ck_assert_msg(frac >= 0.90, "delivered %.3f of the injection bandwidth", frac);
}
END_TEST

static void count_reroute(void *data, WhFlow *f, const uint32_t *old, uint16_t old_hops)
{
  uint32_t *n = data;
  (*n)++;
  /* the new path is a chain of links from the sender to the receiver, and differs */
  const WhNet *net = f->tp->net;
  ck_assert_uint_eq(f->fwd[0], wh_net_host_port(net, f->src));
  ck_assert_uint_eq(f->fwd[f->fwd_hops - 1], net->port[wh_net_host_port(net, f->dst)].peer);
  for (uint16_t i = 0; i + 1 < f->fwd_hops; i++)
    ck_assert_uint_eq(net->port[f->fwd[i]].peer_node, net->port[f->fwd[i + 1]].node);
  ck_assert(old != f->fwd &&
            (old_hops != f->fwd_hops || memcmp(old, f->fwd, old_hops * sizeof(uint32_t)) != 0));
}

START_TEST(test_adversarial_adaptive_vs_minimal)
{
  /* 8 groups, every host of group i to group i+1: minimal routing has one global
   * link per group; adaptive routing spreads over Valiant paths */
  g_autoptr(WhRun) min = build_file("tests/scenarios/dragonfly-adversarial-minimal.xml", NULL);
  wh_run_execute(min);
  g_autoptr(WhRun) ada = build_file("tests/scenarios/dragonfly-adversarial-adaptive.xml", NULL);
  uint32_t seen = 0;
  static const WhTransportObserver reroute_observer = {.on_reroute = count_reroute};
  wh_transport_add_observer(ada->tp, &reroute_observer, &seen);
  wh_run_execute(ada);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_run_check(min, &err), "minimal: %s", err ? err->message : "");
  ck_assert_msg(wh_run_check(ada, &err), "adaptive: %s", err ? err->message : "");
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < min->tp->n_flows; i++)
    bytes += wh_transport_flow(min->tp, i)->size;
  double tmin = wh_time_to_s(min->sim->now), tada = wh_time_to_s(ada->sim->now);
  fprintf(stderr,
          "dragonfly adversarial (8 groups): minimal %.1f Gb/s (%.0f us, %" G_GUINT64_FORMAT
          " PFC pauses), adaptive %.1f Gb/s (%.0f us, %" G_GUINT64_FORMAT
          " PFC pauses, %" G_GUINT64_FORMAT " path changes): %.2fx\n",
          (double)bytes * 8 / tmin * 1e-9, tmin * 1e6, min->net->c.pfc_pauses,
          (double)bytes * 8 / tada * 1e-9, tada * 1e6, ada->net->c.pfc_pauses, ada->tp->c.reroutes,
          tmin / tada);
  ck_assert_msg(tmin / tada >= 2.0, "adaptive only %.2fx minimal", tmin / tada);
  /* lossless, deadlock-free: pauses happened and every flow completed (checked above) */
  ck_assert_uint_gt(min->net->c.pfc_pauses, 0);
  ck_assert_uint_gt(ada->net->c.pfc_pauses, 0);
  ck_assert_uint_eq(ada->net->c.drops, 0);
  /* no reordering: no data packet arrived beyond the next expected byte */
  ck_assert_uint_eq(ada->tp->c.out_of_order, 0);
  ck_assert_uint_eq(ada->tp->c.nacks, 0);
  /* path changes happened, and the hook saw each */
  ck_assert_uint_gt(ada->tp->c.reroutes, 0);
  ck_assert_uint_eq(seen, ada->tp->c.reroutes);
  ck_assert_uint_eq(min->tp->c.reroutes, 0);
}
END_TEST

START_TEST(test_single_class_deadlocks)
{
  /* one virtual channel for every hop class, PFC as the only flow control: the
   * watchdog stops the locked run; the same run with the virtual channels completes */
  g_autoptr(WhRun) one = build_file("tests/deadlock/dragonfly-single-class.xml", NULL);
  wh_run_execute(one);
  const WhNetDeadlock *d = &one->net->deadlock;
  fprintf(stderr,
          "dragonfly, one virtual channel: deadlock at %.0f us, no packet moved since %.0f us, "
          "%.1f MB held in %u switches, %u ports paused, %u of %u flows done\n",
          wh_time_to_s(d->at) * 1e6, wh_time_to_s(d->still_since) * 1e6,
          (double)d->buffered_bytes / 1e6, d->switches, d->paused_ports, one->tp->c.flows_finished,
          one->tp->n_flows);
  ck_assert(d->detected);
  ck_assert_str_eq(wh_run_stop_reason(one), "deadlock");
  ck_assert_uint_gt(d->paused_ports, 0);
  ck_assert_uint_lt(one->tp->c.flows_finished, one->tp->n_flows);
  char *sets[] = {"wh::Dragonfly::VirtualChannels=true", NULL};
  WhRunOptions vc = {.sets = sets};
  g_autoptr(WhRun) three = build_file("tests/deadlock/dragonfly-single-class.xml", &vc);
  wh_run_execute(three);
  wh_test_assert_clean_end(three);
  ck_assert(!three->net->deadlock.detected);
  ck_assert_uint_gt(three->net->c.pfc_pauses, 0);
}
END_TEST

/* Infinity Fabric links between the GCDs of a Frontier node, from the node diagram
 * (OLCF user guide; Pearson 2023): quad inside an MI250X, dual and single between
 * them, 50 GB/s (400 Gb/s) per link and direction. */
static const uint8_t if_links[][3] = {
    {0, 1, 4}, {2, 3, 4}, {4, 5, 4}, {6, 7, 4}, {0, 6, 2}, {1, 7, 2},
    {2, 4, 2}, {3, 5, 2}, {0, 2, 1}, {1, 3, 1}, {4, 6, 1}, {5, 7, 1},
};

/* links[a][b]: Infinity Fabric links joining GCDs a and b; dist[a][b]: fewest fabric
 * hops between them (breadth-first over the diagram). */
static void node_fabric(uint8_t links[8][8], uint8_t dist[8][8])
{
  memset(links, 0, 64);
  for (size_t i = 0; i < G_N_ELEMENTS(if_links); i++)
    links[if_links[i][0]][if_links[i][1]] = links[if_links[i][1]][if_links[i][0]] = if_links[i][2];
  for (uint8_t a = 0; a < 8; a++) {
    memset(dist[a], 0xff, 8);
    dist[a][a] = 0;
    uint8_t q[8], qh = 0, qt = 0;
    q[qt++] = a;
    while (qh < qt) {
      uint8_t u = q[qh++];
      for (uint8_t v = 0; v < 8; v++) {
        if (links[u][v] && dist[a][v] == 0xff) {
          dist[a][v] = (uint8_t)(dist[a][u] + 1);
          q[qt++] = v;
        }
      }
    }
  }
}

START_TEST(test_node_all_to_all_closed_form)
{
  /* all-to-all among the 8 GCDs of one node: every flow takes as many fabric hops as
   * the fewest the node diagram allows, each over a link of the diagram at its rate;
   * the time is set by the most loaded fabric link: max over links of its bytes on the
   * wire / its rate (plus one path latency); the simulation must match within 2% */
  g_autoptr(WhRun) run = build_file("tests/scenarios/frontier-node-all-to-all.xml", NULL);
  const WhNet *net = run->net;
  const WhDragonfly *df = wh_dragonfly_of(net);
  uint32_t sw = wh_dragonfly_switch_node(df, 0, 0), gcd0 = sw + 1; /* GCD switches follow */
  uint8_t links[8][8], dist[8][8];
  node_fabric(links, dist);
  unsigned hops_seen[4] = {0};
  double *load = g_new0(double, net->n_ports);
  WhTime latency = 0;
  for (uint32_t i = 0; i < run->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(run->tp, i);
    ck_assert(f->src < 8 && f->dst < 8);
    /* host -> its GCD switch, the fabric hops, GCD switch -> host */
    ck_assert_uint_eq(f->fwd_hops, dist[f->src][f->dst] + 2);
    hops_seen[dist[f->src][f->dst]]++;
    uint64_t packets = (f->size + run->tp->p.mtu - 1) / run->tp->p.mtu;
    double wire = (double)(f->size + packets * run->tp->p.header_bytes);
    WhTime lat = 0;
    for (uint16_t h = 0; h < f->fwd_hops; h++) {
      const WhPort *p = &net->port[f->fwd[h]];
      ck_assert(p->node != sw && p->peer_node != sw); /* never through a NIC */
      if (h == 0)
        ck_assert_uint_eq(p->peer_node, gcd0 + f->src);
      if (h > 0 && h + 1 < f->fwd_hops) {
        uint32_t u = p->node - gcd0, v = p->peer_node - gcd0;
        ck_assert(u < 8 && v < 8 && links[u][v] > 0);
        ck_assert_uint_eq(p->rate_bps, links[u][v] * 400000000000ULL);
      }
      load[p->id] += wire;
      lat += p->delay + wh_time_tx(run->tp->p.mtu + run->tp->p.header_bytes, p->rate_bps);
    }
    latency = MAX(latency, lat);
  }
  double worst = 0;
  uint32_t at = 0;
  for (uint32_t p = 0; p < net->n_ports; p++) {
    double t = load[p] * 8 / (double)net->port[p].rate_bps;
    if (t > worst) {
      worst = t;
      at = p;
    }
  }
  g_free(load);
  /* the diagram is a cube: from each GCD, 3 others at 1 hop, 3 at 2 and 1 at 3 */
  ck_assert_uint_eq(hops_seen[1], 8 * 3);
  ck_assert_uint_eq(hops_seen[2], 8 * 3);
  ck_assert_uint_eq(hops_seen[3], 8 * 1);
  double expect = worst + wh_time_to_s(latency);
  wh_run_execute(run);
  wh_test_assert_clean_end(run);
  double got = wh_time_to_s(run->sim->now);
  fprintf(stderr,
          "Frontier node all-to-all, 8 GCDs x 7 x 16 MB: %.1f us, closed form %.1f us (%+.2f%%); "
          "bottleneck: the %.0f Gb/s link GCD %u -> GCD %u\n",
          got * 1e6, expect * 1e6, (got - expect) / expect * 100,
          (double)net->port[at].rate_bps * 1e-9, net->port[at].node - gcd0,
          net->port[at].peer_node - gcd0);
  ck_assert_msg(fabs(got - expect) / expect <= 0.02, "%.1f us vs %.1f us", got * 1e6, expect * 1e6);
}
END_TEST

/* The port from GCD a's fabric switch to GCD b's (a direct fabric link). */
static uint32_t net_gcd_port(const WhNet *net, uint32_t a, uint32_t b)
{
  uint32_t fa = net->port[net->port[wh_net_host_port(net, a)].peer].node;
  uint32_t fb = net->port[net->port[wh_net_host_port(net, b)].peer].node;
  for (uint32_t k = 0; k < net->node[fa].nports; k++)
    if (net->port[net->node[fa].ports[k]].peer_node == fb)
      return net->node[fa].ports[k];
  ck_abort_msg("no fabric link %u-%u", a, b);
  return 0;
}

/* Data packets queued at local egress ports, by priority (a queue hook). */
typedef struct {
  const WhNet *net;
  uint64_t by_prio[WH_NPRIO];
} PrioCount;

static void count_local_prio(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  PrioCount *pc = data;
  if (pkt->type == WH_PKT_DATA && pc->net->port[qd->port].tier == WH_TIER_LOCAL)
    pc->by_prio[pkt->prio]++;
}

static double pairs_run(const char *file, PrioCount *pc)
{
  g_autoptr(WhRun) run = build_file(file, NULL);
  static const WhQueueHooks hooks = {.on_enqueue = count_local_prio};
  pc->net = run->net;
  wh_net_add_hooks(run->net, &hooks, pc);
  wh_run_execute(run);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_run_check(run, &err), "%s: %s", file, err ? err->message : "");
  ck_assert(!run->net->deadlock.detected);
  ck_assert_uint_eq(run->tp->c.out_of_order, 0);
  ck_assert_uint_eq(run->net->c.drops, 0);
  ck_assert_uint_gt(run->net->c.pfc_pauses, 0);
  wh_net_remove_hooks(run->net, &hooks, pc);
  return (double)run->tp->c.data_bytes_arrived / wh_time_to_s(run->sim->now);
}

START_TEST(test_adaptive_inside_a_group)
{
  /* 8 GCD pairs between nodes on two switches of one Frontier group: minimal routing
   * has the one local link between them; adaptive routing detours through other
   * switches of the group (second local hop in the next virtual channel) and reaches
   * at least 90% of the 4 NICs' 100 GB/s, 1.5x minimal or more */
  PrioCount pm = {0}, pa = {0};
  double min = pairs_run("tests/scenarios/frontier-group-pairs-minimal.xml", &pm);
  double ada = pairs_run("tests/scenarios/frontier-group-pairs-adaptive.xml", &pa);
  fprintf(stderr,
          "Frontier group, 8 GCD pairs across two switches: minimal %.1f GB/s, adaptive %.1f "
          "GB/s (%.2fx); detour hops in the next class: %" G_GUINT64_FORMAT "\n",
          min * 1e-9, ada * 1e-9, ada / min, pa.by_prio[2]);
  ck_assert_msg(ada >= 0.9 * 100e9, "adaptive %.1f GB/s", ada * 1e-9);
  ck_assert_msg(ada >= 1.5 * min, "adaptive %.1f vs minimal %.1f GB/s", ada * 1e-9, min * 1e-9);
  /* one group: minimal paths stay in class 0 (priority 3); detours' second hops go
   * to class 1 (priority 2); nothing lower */
  ck_assert_uint_eq(pm.by_prio[2], 0);
  ck_assert_uint_gt(pa.by_prio[2], 0);
  ck_assert_uint_eq(pm.by_prio[1] + pa.by_prio[1], 0);
}
END_TEST

START_TEST(test_adaptive_parallel_global_links)
{
  /* 8 GCD pairs between the two groups of a 2-group Frontier preset: the 4 parallel
   * global links are exactly the 4 NICs' limit. The router spreads the flows 2 per
   * link by its flow counts (hashing alone put several on one link; queues alone
   * flapped): >= 90% of the 4 NICs' 100 GB/s, each link between 20% and 30% of the
   * bytes, and every count back to 0 once the flows are done */
  g_autoptr(WhRun) run = build_file("tests/scenarios/frontier-groups-pairs-adaptive.xml", NULL);
  wh_run_execute(run);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_run_check(run, &err), "%s", err ? err->message : "");
  ck_assert_uint_eq(run->tp->c.out_of_order, 0);
  ck_assert_uint_eq(run->net->c.drops, 0);
  double rate = (double)run->tp->c.data_bytes_arrived / wh_time_to_s(run->sim->now);
  const WhDragonfly *df = wh_dragonfly_of(run->net);
  uint64_t bytes[4] = {0}, total = 0;
  for (uint32_t k = 0; k < 4; k++) {
    uint32_t a = wh_dragonfly_switch_node(df, 0, 0), b = wh_dragonfly_switch_node(df, 1, 0);
    for (uint32_t i = 0; i < run->net->n_ports; i++) {
      const WhPort *p = &run->net->port[i];
      if (p->tier == WH_TIER_GLOBAL && p->node == a + k && p->peer_node == b + k)
        bytes[k] = p->bytes;
    }
    total += bytes[k];
    ck_assert_uint_eq(wh_dragonfly_link_flows(df, 0, 1, k), 0);
  }
  fprintf(stderr,
          "Frontier 2 groups, 8 GCD pairs between groups: %.1f GB/s, %" G_GUINT64_FORMAT
          " path changes; global links %.1f%% %.1f%% %.1f%% %.1f%% of the bytes\n",
          rate * 1e-9, run->tp->c.reroutes, 100.0 * bytes[0] / total, 100.0 * bytes[1] / total,
          100.0 * bytes[2] / total, 100.0 * bytes[3] / total);
  ck_assert_msg(rate >= 0.9 * 100e9, "%.1f GB/s", rate * 1e-9);
  for (uint32_t k = 0; k < 4; k++)
    ck_assert_msg(bytes[k] >= total / 5 && bytes[k] <= total * 3 / 10, "link %u: %.1f%%", k,
                  100.0 * bytes[k] / total);
}
END_TEST

/* A run of the Frontier preset (1 group) built from XML text with `extra` settings. */
static WhRun *preset_run(const char *extra, const char *body)
{
  g_autofree char *xml =
      g_strdup_printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<scenario name=\"lat\">\n%s"
                      "  <topology preset=\"frontier\" groups=\"1\"/>\n%s</scenario>\n",
                      extra, body);
  g_autoptr(GError) err = NULL;
  WhScenario *sc = wh_scenario_load_memory(xml, strlen(xml), "lat.xml", &err);
  ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
  WhRun *run = wh_run_new(sc, NULL, &err);
  ck_assert_msg(run != NULL, "%s", err ? err->message : "");
  wh_run_take_scenario(run, sc);
  wh_run_execute(run);
  ck_assert_msg(wh_run_check(run, &err), "%s", err ? err->message : "");
  return run;
}

/* One-packet latencies (FCT of a 1 KB message) from GCD 0 to GCD 1 (same package, one
 * fabric hop), GCD 8 (another node on the switch) and GCD 32 (another switch). */
static void one_packet(const char *extra, WhTime out[3])
{
  static const char flows[] = "  <flows><flow src=\"0\" dst=\"1\" size=\"1KB\"/>"
                              "<flow src=\"2\" dst=\"8\" size=\"1KB\" start=\"100us\"/>"
                              "<flow src=\"4\" dst=\"32\" size=\"1KB\" start=\"200us\"/></flows>\n";
  g_autoptr(WhRun) run = preset_run(extra, flows);
  for (uint32_t i = 0; i < 3; i++) {
    const WhFlow *f = wh_transport_flow(run->tp, i);
    out[i] = f->finish - f->start;
  }
}

START_TEST(test_endpoint_latency)
{
  /* NicDelay is paid at the sending and at the receiving NIC, HostDelay where a packet
   * leaves its GCD and where it enters the other: exactly, per packet */
  WhTime base[3], with[3];
  one_packet("  <set param=\"wh::Dragonfly::NicDelay\" value=\"0ns\"/>\n", base);
  one_packet("  <set param=\"wh::Dragonfly::NicDelay\" value=\"700ns\"/>\n"
             "  <set param=\"wh::Dragonfly::HostDelay\" value=\"300ns\"/>\n",
             with);
  fprintf(stderr,
          "Frontier one-packet latency (us), no endpoint delay / NicDelay 700 ns + HostDelay "
          "300 ns: same "
          "package %.3f / %.3f, same switch %.3f / %.3f, other switch %.3f / %.3f\n",
          base[0] * 1e-6, with[0] * 1e-6, base[1] * 1e-6, with[1] * 1e-6, base[2] * 1e-6,
          with[2] * 1e-6);
  ck_assert_uint_eq(with[0] - base[0], 2 * 300 * WH_NS);
  ck_assert_uint_eq(with[1] - base[1], 2 * 300 * WH_NS + 2 * 700 * WH_NS);
  ck_assert_uint_eq(with[2] - base[2], 2 * 300 * WH_NS + 2 * 700 * WH_NS);
  ck_assert_uint_gt(base[2], base[1]); /* another switch: a local hop more */
}
END_TEST

START_TEST(test_message_alpha)
{
  /* every transfer of a workload starts MessageAlpha after it is ready: the first send
   * ends alpha later, the second (after the first) starts alpha after it */
  static const char wl[] = "  <workload>\n"
                           "    <send id=\"a\" src=\"0\" dst=\"8\" size=\"64KB\"/>\n"
                           "    <send id=\"b\" src=\"8\" dst=\"0\" size=\"64KB\" deps=\"a\"/>\n"
                           "  </workload>\n";
  g_autoptr(WhRun) base =
      preset_run("  <set param=\"wh::Workload::MessageAlpha\" value=\"0ns\"/>\n", wl);
  g_autoptr(WhRun) with =
      preset_run("  <set param=\"wh::Workload::MessageAlpha\" value=\"2us\"/>\n", wl);
  WhOpInfo a0, b0, a1, b1;
  wh_workload_op_info(base->workload, 0, &a0);
  wh_workload_op_info(base->workload, 1, &b0);
  wh_workload_op_info(with->workload, 0, &a1);
  wh_workload_op_info(with->workload, 1, &b1);
  ck_assert_uint_eq(a1.end - a0.end, 2 * WH_US);
  ck_assert_uint_eq(wh_transport_flow(with->tp, 0)->start, 2 * WH_US);
  ck_assert_uint_eq(wh_transport_flow(with->tp, 1)->start, a1.end + 2 * WH_US);
  ck_assert_uint_eq(wh_transport_flow(base->tp, 1)->start, a0.end);
  /* the second transfer itself takes about as long (its congestion control's timers
   * run on absolute time, so not to the picosecond) */
  ck_assert_uint_ge(b1.end - b0.end, 4 * WH_US - 10 * WH_NS);
  ck_assert_uint_le(b1.end - b0.end, 4 * WH_US + 10 * WH_NS);
}
END_TEST

START_TEST(test_message_alpha_serial)
{
  /* a rank pays MessageAlpha one message after another (one issue engine): rank 0's
   * three sends, ready together, start at 2, 4 and 6 us; rank 1's one send, ready at
   * the same time, at 2 us. Rank 0's fifth send waits on its first: ready when the
   * first arrives (before 6 us), it waits for rank 0's third alpha to end and starts at
   * 8 us. */
  static const char wl[] = "  <workload>\n"
                           "    <send id=\"a\" src=\"0\" dst=\"8\" size=\"4KB\"/>\n"
                           "    <send id=\"b\" src=\"0\" dst=\"16\" size=\"4KB\"/>\n"
                           "    <send id=\"c\" src=\"0\" dst=\"24\" size=\"4KB\"/>\n"
                           "    <send id=\"d\" src=\"1\" dst=\"9\" size=\"4KB\"/>\n"
                           "    <send id=\"e\" src=\"0\" dst=\"8\" size=\"4KB\" deps=\"a\"/>\n"
                           "  </workload>\n";
  g_autoptr(WhRun) run =
      preset_run("  <set param=\"wh::Workload::MessageAlpha\" value=\"2us\"/>\n", wl);
  ck_assert_uint_eq(run->tp->n_flows, 5);
  ck_assert_uint_eq(wh_transport_flow(run->tp, 0)->start, 2 * WH_US);
  ck_assert_uint_eq(wh_transport_flow(run->tp, 1)->start, 4 * WH_US);
  ck_assert_uint_eq(wh_transport_flow(run->tp, 2)->start, 6 * WH_US);
  ck_assert_uint_eq(wh_transport_flow(run->tp, 3)->start, 2 * WH_US);
  WhOpInfo a;
  wh_workload_op_info(run->workload, 0, &a);
  ck_assert_uint_lt(a.end, 6 * WH_US);
  ck_assert_uint_eq(wh_transport_flow(run->tp, 4)->start, 8 * WH_US);
}
END_TEST

START_TEST(test_adaptive_all_to_all_two_switches)
{
  /* a direct all-to-all of 16 GCDs on nodes 0 and 4 (switches 0 and 1 of one group),
   * 1 MB per pair: 64 flows each way between the switches, 4 NICs' worth, all starting
   * at once onto one direct local link. The router's flow counts send most of them over
   * detours from their first choice: within 10% of the NIC limit (each NIC: its 2 GCDs'
   * 8 MB off the node at 25 GB/s x 4096/4158), with few path changes */
  static const char wl[] =
      "  <workload>\n"
      "    <collective id=\"a2a\" kind=\"all-to-all\" algorithm=\"direct\" ranks=\"0-15\" "
      "size=\"16MB\"/>\n"
      "  </workload>\n"
      "  <placement policy=\"nodes\" nodes=\"0 4\"/>\n";
  g_autoptr(WhRun) run = preset_run("", wl);
  WhOpInfo op;
  wh_workload_op_info(run->workload, 0, &op);
  double t = wh_time_to_s(op.end - op.start), limit = 2 * 8e6 / (25e9 * 4096 / 4158);
  fprintf(stderr,
          "Frontier group, direct all-to-all of 16 GCDs across two switches: %.1f us, NIC "
          "limit %.1f us (%.3fx), %" G_GUINT64_FORMAT " path changes\n",
          t * 1e6, limit * 1e6, t / limit, run->tp->c.reroutes);
  ck_assert_msg(t <= 1.1 * limit, "%.1f us against a limit of %.1f us", t * 1e6, limit * 1e6);
  ck_assert_uint_eq(run->tp->c.out_of_order, 0);
  ck_assert_uint_eq(run->net->c.drops, 0);
}
END_TEST

START_TEST(test_frontier_preset)
{
  /* <topology preset="frontier" groups="2"/>: Frontier's shape (2 x 1024 GCDs, 32
   * switches per group with 16 NIC ports, 4 global links per pair, 200 Gb/s, 350 ns
   * switches); its settings rank below the scenario's own <set> and <param>; the
   * summary names the stand-in congestion control */
  static const char xml[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                            "<scenario name=\"preset\" cc=\"hpcc\">\n"
                            "  <set param=\"wh::Dragonfly::Routing\" value=\"minimal\"/>\n"
                            "  <topology preset=\"frontier\" groups=\"2\">\n"
                            "    <param name=\"GlobalDelay\" value=\"250ns\"/>\n"
                            "  </topology>\n"
                            "  <flows><flow src=\"0\" dst=\"2047\" size=\"64KB\"/></flows>\n"
                            "</scenario>\n";
  g_autoptr(GError) err = NULL;
  WhScenario *sc = wh_scenario_load_memory(xml, sizeof xml - 1, "preset.xml", &err);
  ck_assert_msg(sc != NULL, "%s", err ? err->message : "");
  g_autoptr(WhRun) run = wh_run_new(sc, NULL, &err);
  ck_assert_msg(run != NULL, "%s", err ? err->message : "");
  wh_run_take_scenario(run, sc);
  const WhDragonfly *df = wh_dragonfly_of(run->net);
  const WhDragonflyShape *sh = wh_dragonfly_get_shape(df);
  ck_assert_uint_eq(run->net->n_hosts, 2048);
  ck_assert_uint_eq(sh->groups, 2);
  ck_assert_uint_eq(sh->a, 32);
  ck_assert_uint_eq(sh->p, 16);
  ck_assert_uint_eq(sh->links_per_pair, 4);
  ck_assert(sh->frontier);
  ck_assert_str_eq(wh_config_choice(run->cfg, "wh::Dragonfly", "Routing"), "minimal");
  ck_assert_uint_eq(wh_config_time(run->cfg, "wh::Dragonfly", "GlobalDelay"), 250 * WH_NS);
  /* a global link: 200 Gb/s, 250 ns + the 350 ns of the switch it enters */
  uint32_t n = wh_dragonfly_switch_node(df, 0, 0);
  gboolean seen = FALSE;
  for (uint32_t k = 0; k < run->net->node[n].nports; k++) {
    const WhPort *p = &run->net->port[run->net->node[n].ports[k]];
    if (p->vc_bump == WH_VC_BUMP_ALWAYS) {
      ck_assert_uint_eq(p->rate_bps, 200000000000ULL);
      ck_assert_uint_eq(p->delay, 600 * WH_NS);
      seen = TRUE;
    }
  }
  ck_assert(seen);
  /* the preset's fabric links deliver FabricEfficiency 0.76 of nominal: the quad link
   * GCD 0 -> 1 is 0.76 x 4 x 400 Gb/s; with FabricEfficiency 1 it is nominal */
  ck_assert_double_eq(wh_config_double(run->cfg, "wh::Dragonfly", "FabricEfficiency"), 0.76);
  ck_assert_uint_eq(run->net->port[net_gcd_port(run->net, 0, 1)].rate_bps, 1216000000000ULL);
  {
    static const char eff[] = "  <set param=\"wh::Dragonfly::FabricEfficiency\" value=\"1\"/>\n";
    g_autoptr(WhRun) r1 = preset_run(eff, "");
    ck_assert_uint_eq(r1->net->port[net_gcd_port(r1->net, 0, 1)].rate_bps, 1600000000000ULL);
  }
  /* the calibrated endpoint latency and message cost (docs/modules/topology.md) */
  ck_assert_uint_eq(wh_config_time(run->cfg, "wh::Dragonfly", "NicDelay"), 860 * WH_NS);
  ck_assert_uint_eq(wh_config_time(run->cfg, "wh::Workload", "MessageAlpha"), 200 * WH_NS);
  wh_run_execute(run);
  ck_assert_msg(wh_run_check(run, &err), "%s", err ? err->message : "");
  g_autofree char *summary = wh_run_summary_json(run, FALSE);
  ck_assert_ptr_nonnull(strstr(summary, "\"topology_preset\" : \"frontier\""));
  ck_assert_ptr_nonnull(strstr(summary, "hpcc stands in"));
}
END_TEST

Suite *wh_dragonfly_traffic_suite(void)
{
  const struct {
    const char *name;
    const TTest *test;
  } cases[] = {
      {"uniform", test_uniform_inside_a_group},
      {"adversarial", test_adversarial_adaptive_vs_minimal},
      {"deadlock", test_single_class_deadlocks},
      {"node", test_node_all_to_all_closed_form},
      {"preset", test_frontier_preset},
      {"group-adaptive", test_adaptive_inside_a_group},
      {"parallel-global-links", test_adaptive_parallel_global_links},
      {"group-all-to-all", test_adaptive_all_to_all_two_switches},
      {"endpoint-latency", test_endpoint_latency},
      {"message-alpha", test_message_alpha},
      {"message-alpha-serial", test_message_alpha_serial},
  };
  Suite *s = suite_create("dragonfly-traffic");
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    TCase *tc = tcase_create(cases[i].name);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cases[i].test);
    suite_add_tcase(s, tc);
  }
  return s;
}
