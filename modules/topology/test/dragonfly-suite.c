/* Dragonfly structure and routing: ports per switch by class (endpoint, local,
 * global), links per group pair, spare global ports (idle or parallel), every route
 * valid (a chain of links from the source host to the destination host), minimal
 * paths of at most 3 switch-to-switch hops and Valiant paths of at most 5 through the
 * chosen group, and the Frontier node: 8 GCDs on the Infinity Fabric wiring, NICs by
 * package, traffic inside a node never on a dragonfly switch. */
#include <check.h>
#include <string.h>

#include "dragonfly.h"
#include "test-util.h"
#include "topology.h"

static WhNet *build_df(WhSim *sim, const char *const *sets)
{
  g_autoptr(WhConfig) cfg = wh_config_new();
  for (const char *const *s = sets; s && *s; s++)
    ck_assert(wh_config_set_assignment(cfg, *s, "test", NULL));
  WhNetParams np = {.buffer_bytes = 1000000, .seed = 1, .ecn_ref_rate = 1};
  WhNet *net = wh_net_new(sim, &np);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_topology_lookup("wh::Dragonfly")->build(net, cfg, &err) &&
                    wh_net_finalize(net, &err),
                "%s", err ? err->message : "");
  ck_assert_ptr_nonnull(wh_dragonfly_of(net));
  return net;
}

static gboolean is_df_switch(const WhNet *net, uint32_t node)
{
  const WhDragonfly *df = wh_dragonfly_of(net);
  const WhDragonflyShape *sh = wh_dragonfly_get_shape(df);
  uint32_t sw0 = wh_dragonfly_switch_node(df, 0, 0);
  return node >= sw0 && node < sw0 + sh->switches;
}

static uint32_t group_of_switch(const WhNet *net, uint32_t node)
{
  const WhDragonfly *df = wh_dragonfly_of(net);
  return (node - wh_dragonfly_switch_node(df, 0, 0)) / wh_dragonfly_get_shape(df)->a;
}

/* Checks that route[] chains from host src to host dst; returns its switch-to-switch
 * hops between dragonfly switches, and ORs into *groups the groups it visits. */
static uint32_t check_route(const WhNet *net, const uint32_t *r, uint32_t n, uint32_t src,
                            uint32_t dst, uint64_t *groups)
{
  ck_assert_uint_ge(n, 2);
  ck_assert_uint_eq(r[0], wh_net_host_port(net, src));
  ck_assert_uint_eq(r[n - 1], net->port[wh_net_host_port(net, dst)].peer);
  uint32_t hops = 0;
  for (uint32_t i = 0; i < n; i++) {
    const WhPort *p = &net->port[r[i]];
    if (i + 1 < n)
      ck_assert_uint_eq(p->peer_node, net->port[r[i + 1]].node);
    if (is_df_switch(net, p->node) && is_df_switch(net, p->peer_node))
      hops++;
    if (groups && is_df_switch(net, p->node))
      *groups |= 1ULL << (group_of_switch(net, p->node) & 63);
  }
  return hops;
}

START_TEST(test_balanced_structure)
{
  /* Kim et al.'s balanced dragonfly a = 2p = 2h = 4: 9 groups, 72 hosts */
  g_autoptr(WhSim) sim = wh_sim_new(&wh_heap_scheduler_class);
  const char *sets[] = {"wh::Dragonfly::Groups=9", "wh::Dragonfly::SwitchesPerGroup=4",
                        "wh::Dragonfly::EndpointsPerSwitch=2",
                        "wh::Dragonfly::GlobalPortsPerSwitch=2", NULL};
  g_autoptr(WhNet) net = build_df(sim, sets);
  ck_assert_uint_eq(net->n_hosts, 72);
  ck_assert_uint_eq(net->n_switches, 36);
  uint32_t pair_links[9][9] = {{0}};
  for (uint32_t n = 0; n < net->n_nodes; n++) {
    if (!net->node[n].is_switch)
      continue;
    uint32_t ep = 0, local = 0, global = 0;
    for (uint32_t k = 0; k < net->node[n].nports; k++) {
      uint32_t v = net->port[net->node[n].ports[k]].peer_node;
      if (!net->node[v].is_switch) {
        ep++;
      } else if (group_of_switch(net, v) == group_of_switch(net, n)) {
        local++;
      } else {
        global++;
        pair_links[group_of_switch(net, n)][group_of_switch(net, v)]++;
      }
      /* virtual channels: global links always move data to the next class, local links
       * when the next hop is local too (a detour), endpoint links never */
      const WhPort *port = &net->port[net->node[n].ports[k]];
      WhVcBump want = !net->node[v].is_switch                              ? WH_VC_BUMP_NONE
                      : group_of_switch(net, v) != group_of_switch(net, n) ? WH_VC_BUMP_ALWAYS
                                                                           : WH_VC_BUMP_SAME_TIER;
      ck_assert_uint_eq(port->vc_bump, want);
    }
    ck_assert_uint_eq(ep, 2);
    ck_assert_uint_eq(local, 3);
    ck_assert_uint_eq(global, 2);
  }
  for (uint32_t i = 0; i < 9; i++)
    for (uint32_t j = 0; j < 9; j++)
      ck_assert_uint_eq(pair_links[i][j], i == j ? 0 : 1);
}
END_TEST

START_TEST(test_routes_all_pairs)
{
  /* every pair, minimal and Valiant through every other group, several hashes */
  g_autoptr(WhSim) sim = wh_sim_new(&wh_heap_scheduler_class);
  const char *sets[] = {"wh::Dragonfly::Groups=5",
                        "wh::Dragonfly::SwitchesPerGroup=4",
                        "wh::Dragonfly::EndpointsPerSwitch=2",
                        "wh::Dragonfly::GlobalPortsPerSwitch=2",
                        "wh::Dragonfly::GlobalLinksPerPair=2",
                        NULL};
  g_autoptr(WhNet) net = build_df(sim, sets);
  const WhDragonfly *df = wh_dragonfly_of(net);
  uint32_t r[32];
  uint32_t max_min = 0, max_val = 0;
  for (uint32_t s = 0; s < net->n_hosts; s++)
    for (uint32_t d = 0; d < net->n_hosts; d++) {
      if (s == d)
        continue;
      for (uint64_t h = 0; h < 3; h++) {
        uint32_t n = wh_net_route(net, s, d, h * 7919 + s, r, 32);
        uint32_t hops = check_route(net, r, n, s, d, NULL);
        ck_assert_uint_le(hops, 3);
        max_min = MAX(max_min, hops);
        if (s / 2 == d / 2)
          ck_assert_uint_eq(n, 2); /* same switch */
      }
      uint32_t gs = wh_dragonfly_host_group(df, s), gd = wh_dragonfly_host_group(df, d);
      for (uint32_t via = 0; via < 5; via++) {
        uint32_t n = wh_dragonfly_route(net, df, s, d, s * 31 + d, via, r, 32);
        if (via == gs || via == gd) {
          ck_assert_uint_eq(n, 0);
          continue;
        }
        uint64_t groups = 0;
        uint32_t hops = check_route(net, r, n, s, d, &groups);
        ck_assert_uint_le(hops, 5);
        ck_assert(groups & (1ULL << via));
        max_val = MAX(max_val, hops);
      }
    }
  ck_assert_uint_eq(max_min, 3);
  ck_assert_uint_eq(max_val, 5);
}
END_TEST

START_TEST(test_spare_global_ports)
{
  /* 3 groups of 4 switches with 2 global ports each: 8 global ports per group for 2
   * peers; idle leaves 6 unused, parallel makes 4 links per pair */
  g_autoptr(WhSim) sim = wh_sim_new(&wh_heap_scheduler_class);
  const char *idle[] = {"wh::Dragonfly::Groups=3", NULL};
  const char *par[] = {"wh::Dragonfly::Groups=3", "wh::Dragonfly::SpareGlobalPorts=parallel", NULL};
  g_autoptr(WhNet) a = build_df(sim, idle);
  g_autoptr(WhNet) b = build_df(sim, par);
  ck_assert_uint_eq(wh_dragonfly_get_shape(wh_dragonfly_of(a))->links_per_pair, 1);
  ck_assert_uint_eq(wh_dragonfly_get_shape(wh_dragonfly_of(b))->links_per_pair, 4);
  /* link count: hosts + local + global */
  ck_assert_uint_eq(a->n_ports / 2, 24 + 3 * 6 + 3 * 1);
  ck_assert_uint_eq(b->n_ports / 2, 24 + 3 * 6 + 3 * 4);
  for (uint32_t n = 0; n < b->n_nodes; n++)
    if (b->node[n].is_switch)
      ck_assert_uint_eq(b->node[n].nports, 2 + 3 + 2); /* every global port used */
}
END_TEST

static const char *frontier2[] = {"wh::Dragonfly::Groups=2",
                                  "wh::Dragonfly::SwitchesPerGroup=32",
                                  "wh::Dragonfly::EndpointsPerSwitch=16",
                                  "wh::Dragonfly::GlobalPortsPerSwitch=16",
                                  "wh::Dragonfly::GlobalLinksPerPair=4",
                                  "wh::Dragonfly::Node=frontier",
                                  NULL};

START_TEST(test_frontier_structure)
{
  /* Frontier's group: 32 switches, 16 NIC ports each (4 nodes x 4 NICs), 31 local
   * ports, 4 global links to every other group; 128 nodes = 1024 GCDs per group */
  g_autoptr(WhSim) sim = wh_sim_new(&wh_heap_scheduler_class);
  g_autoptr(WhNet) net = build_df(sim, frontier2);
  const WhDragonfly *df = wh_dragonfly_of(net);
  ck_assert_uint_eq(net->n_hosts, 2048);
  uint32_t global = 0;
  for (uint32_t g = 0; g < 2; g++)
    for (uint32_t s = 0; s < 32; s++) {
      uint32_t n = wh_dragonfly_switch_node(df, g, s);
      uint32_t ep = 0, local = 0, gl = 0;
      for (uint32_t k = 0; k < net->node[n].nports; k++) {
        uint32_t v = net->port[net->node[n].ports[k]].peer_node;
        if (!is_df_switch(net, v)) {
          ep++;
        } else if (group_of_switch(net, v) == g) {
          local++;
        } else {
          /* link m = k of the L = 4 to the other group leaves from switch m mod 32
           * and lands on the same index there */
          ck_assert_uint_eq(v, wh_dragonfly_switch_node(df, 1 - g, s));
          gl++;
        }
      }
      ck_assert_uint_eq(ep, 16);
      ck_assert_uint_eq(local, 31);
      ck_assert_uint_eq(gl, s < 4 ? 1 : 0);
      global += gl;
    }
  ck_assert_uint_eq(global, 2 * 4);
  /* node 0: GCD 0 -> 1 over the quad link (1600 Gb/s), never touching the switch */
  uint32_t r[32];
  uint32_t n = wh_net_route(net, 0, 1, 1, r, 32);
  ck_assert_uint_eq(n, 3);
  ck_assert_uint_eq(net->port[r[1]].rate_bps, 1600000000000ULL);
  /* GCD 0 -> 5: no two-hop path on this wiring, three fabric hops */
  ck_assert_uint_eq(wh_net_route(net, 0, 5, 1, r, 32), 5);
  for (uint32_t a = 0; a < 8; a++)
    for (uint32_t b = 0; b < 8; b++) {
      if (a == b)
        continue;
      uint32_t m = wh_net_route(net, a, b, a * 8 + b, r, 32);
      check_route(net, r, m, a, b, NULL);
      for (uint32_t i = 0; i < m; i++)
        ck_assert(!is_df_switch(net, net->port[r[i]].node));
    }
  /* GCD 3 (package 1) of node 0 leaves through NIC 1: GCD 3 -> GCD 2 -> switch */
  n = wh_net_route(net, 3, 1024 + 8 * 5 + 6, 9, r, 32);
  check_route(net, r, n, 3, 1024 + 8 * 5 + 6, NULL);
  ck_assert_uint_eq(net->port[r[1]].peer_node, net->port[wh_net_host_port(net, 2)].peer_node);
  ck_assert(is_df_switch(net, net->port[r[2]].peer_node));
  /* every GCD reaches every other: a valid route with at most 3 dragonfly hops (plain
   * checks in the loop: Check's asserts cost a system call each) */
  uint64_t bad = 0, routes = 0;
  for (uint32_t s = 0; s < 2048; s++)
    for (uint32_t d = 0; d < 2048; d++) {
      if (s == d)
        continue;
      uint32_t m = wh_net_route(net, s, d, s ^ d, r, 32);
      routes++;
      if (m == 0 || r[0] != wh_net_host_port(net, s) ||
          r[m - 1] != net->port[wh_net_host_port(net, d)].peer) {
        bad++;
        continue;
      }
      uint32_t hops = 0;
      for (uint32_t i = 0; i + 1 < m; i++) {
        bad += net->port[r[i]].peer_node != net->port[r[i + 1]].node;
        hops += is_df_switch(net, net->port[r[i + 1]].node) &&
                is_df_switch(net, net->port[r[i + 1]].peer_node);
      }
      bad += hops > 3;
    }
  ck_assert_uint_eq(routes, 2048u * 2047u);
  ck_assert_uint_eq(bad, 0);
}
END_TEST

START_TEST(test_shape_checks)
{
  /* the whole machine's shape fits (74 groups, 75,776 GCDs); bad shapes are refused
   * naming the parameter */
  g_autoptr(WhConfig) cfg = wh_config_new();
  for (const char *const *s = frontier2; *s; s++)
    ck_assert(wh_config_set_assignment(cfg, *s, "test", NULL));
  ck_assert(wh_config_set_assignment(cfg, "wh::Dragonfly::Groups=74", "test", NULL));
  WhDragonflyShape sh;
  g_autoptr(GError) e0 = NULL;
  ck_assert_msg(wh_dragonfly_shape(cfg, &sh, &e0), "%s", e0 ? e0->message : "");
  ck_assert_uint_eq(sh.hosts, 74 * 1024);
  ck_assert(wh_config_set_assignment(cfg, "wh::Dragonfly::Groups=200", "here:7", NULL));
  g_autoptr(GError) e1 = NULL;
  ck_assert(!wh_dragonfly_shape(cfg, &sh, &e1));
  ck_assert_ptr_nonnull(strstr(e1->message, "GlobalPortsPerSwitch"));
  ck_assert(wh_config_set_assignment(cfg, "wh::Dragonfly::Groups=2", "test", NULL));
  ck_assert(wh_config_set_assignment(cfg, "wh::Dragonfly::EndpointsPerSwitch=6", "here:9", NULL));
  g_autoptr(GError) e2 = NULL;
  ck_assert(!wh_dragonfly_shape(cfg, &sh, &e2));
  ck_assert_ptr_nonnull(strstr(e2->message, "here:9"));
  ck_assert_ptr_nonnull(strstr(e2->message, "multiple of 4"));
  ck_assert(wh_config_set_assignment(cfg, "wh::Dragonfly::EndpointsPerSwitch=24", "test", NULL));
  g_autoptr(GError) e3 = NULL;
  ck_assert(!wh_dragonfly_shape(cfg, &sh, &e3));
  ck_assert_ptr_nonnull(strstr(e3->message, "Radix"));
  /* three virtual channels need data at priority 3 or above */
  ck_assert(wh_config_set_assignment(cfg, "wh::Dragonfly::EndpointsPerSwitch=16", "test", NULL));
  ck_assert(wh_config_set_assignment(cfg, "wh::RdmaFlow::Priority=2", "here:11", NULL));
  g_autoptr(GError) e4 = NULL;
  ck_assert(!wh_dragonfly_shape(cfg, &sh, &e4));
  ck_assert_ptr_nonnull(strstr(e4->message, "here:11"));
  ck_assert(wh_config_set_assignment(cfg, "wh::Dragonfly::VirtualChannels=false", "test", NULL));
  g_autoptr(GError) e5 = NULL;
  ck_assert_msg(wh_dragonfly_shape(cfg, &sh, &e5), "%s", e5 ? e5->message : "");
}
END_TEST

Suite *wh_dragonfly_suite(void)
{
  Suite *s = suite_create("dragonfly");
  TCase *structure = tcase_create("structure");
  tcase_add_test(structure, test_balanced_structure);
  tcase_add_test(structure, test_spare_global_ports);
  tcase_add_test(structure, test_shape_checks);
  suite_add_tcase(s, structure);
  TCase *routes = tcase_create("routes");
  tcase_add_test(routes, test_routes_all_pairs);
  suite_add_tcase(s, routes);
  TCase *frontier = tcase_create("frontier");
  tcase_set_timeout(frontier, 60);
  tcase_add_test(frontier, test_frontier_structure);
  suite_add_tcase(s, frontier);
  return s;
}
