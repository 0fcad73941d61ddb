/* Topology generator tests: node and link counts of every generator, the wiring that
 * defines each (fat-tree pods and cores, oversubscription, rail switches per GPU
 * index), route lengths, and parameter errors. */
#include <check.h>
#include <string.h>

#include "test-util.h"
#include "topology.h"

static WhNet *build_net(WhSim *sim, const char *type, const char *const *sets)
{
  g_autoptr(WhConfig) cfg = wh_config_new();
  for (const char *const *s = sets; s && *s; s++)
    ck_assert(wh_config_set_assignment(cfg, *s, "test", NULL));
  WhNetParams np = {.buffer_bytes = 1000000, .seed = 1, .ecn_ref_rate = 1};
  WhNet *net = wh_net_new(sim, &np);
  const WhTopologyClass *t = wh_topology_lookup(type);
  ck_assert_ptr_nonnull(t);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(t->build(net, cfg, &err) && wh_net_finalize(net, &err), "%s",
                err ? err->message : "");
  return net;
}

static uint32_t route_hops(WhNet *net, uint32_t a, uint32_t b)
{
  uint32_t r[64];
  return wh_net_route(net, a, b, 12345, r, 64);
}

START_TEST(test_fat_tree_counts)
{
  g_autoptr(WhSim) sim = wh_sim_new(&wh_heap_scheduler_class);
  const char *k8[] = {"wh::FatTree::K=8", NULL};
  g_autoptr(WhNet) net = build_net(sim, "wh::FatTree", k8);
  ck_assert_uint_eq(net->n_hosts, 128);
  ck_assert_uint_eq(net->n_switches, 8 * 4 * 2 + 16);
  ck_assert_uint_eq(net->n_ports, 2 * (128 + 8 * 4 * 4 * 2));
  ck_assert_uint_eq(route_hops(net, 0, 1), 2);   /* same edge */
  ck_assert_uint_eq(route_hops(net, 0, 4), 4);   /* same pod */
  ck_assert_uint_eq(route_hops(net, 0, 127), 6); /* across pods */
  /* every switch has radix k */
  for (uint32_t n = 0; n < net->n_nodes; n++) {
    if (net->node[n].is_switch)
      ck_assert_uint_eq(net->node[n].nports, 8);
  }
}
END_TEST

START_TEST(test_fat_tree_oversubscription)
{
  g_autoptr(WhSim) sim = wh_sim_new(&wh_heap_scheduler_class);
  const char *sets[] = {"wh::FatTree::K=4", "wh::FatTree::Oversubscription=3", NULL};
  g_autoptr(WhNet) net = build_net(sim, "wh::FatTree", sets);
  ck_assert_uint_eq(net->n_hosts, 48);
  /* every edge switch: 6 hosts down, 2 aggregation switches up (an edge switch is
   * one a host hangs off) */
  uint32_t edges = 0;
  for (uint32_t n = 0; n < net->n_nodes; n++) {
    const WhNode *sw = &net->node[n];
    uint32_t hosts = 0, switches = 0;
    for (uint32_t k = 0; sw->is_switch && k < sw->nports; k++) {
      const WhNode *peer = &net->node[net->port[sw->ports[k]].peer_node];
      hosts += !peer->is_switch;
      switches += peer->is_switch;
    }
    if (hosts == 0)
      continue;
    edges++;
    ck_assert_uint_eq(hosts, 6);
    ck_assert_uint_eq(switches, 2);
  }
  ck_assert_uint_eq(edges, 4 * 2); /* k pods x k/2 edge switches */
}
END_TEST

START_TEST(test_rail_wiring)
{
  g_autoptr(WhSim) sim = wh_sim_new(&wh_heap_scheduler_class);
  const char *sets[] = {"wh::RailFatTree::Servers=4", "wh::RailFatTree::GpusPerServer=8",
                        "wh::RailFatTree::Spines=2", NULL};
  g_autoptr(WhNet) net = build_net(sim, "wh::RailFatTree", sets);
  ck_assert_uint_eq(net->n_hosts, 32);
  ck_assert_uint_eq(net->n_switches, 10);
  /* GPU g of every server hangs off the same rail switch */
  for (uint32_t g = 0; g < 8; g++) {
    uint32_t rail = net->port[wh_net_host_port(net, g)].peer_node;
    for (uint32_t s = 1; s < 4; s++)
      ck_assert_uint_eq(net->port[wh_net_host_port(net, s * 8 + g)].peer_node, rail);
  }
  ck_assert_uint_eq(route_hops(net, 0, 8), 2); /* same rail, other server */
  ck_assert_uint_eq(route_hops(net, 0, 1), 4); /* other rail: via a spine */
  ck_assert_uint_eq(route_hops(net, 0, 31), 4);
}
END_TEST

START_TEST(test_dumbbell_and_star)
{
  g_autoptr(WhSim) sim = wh_sim_new(&wh_heap_scheduler_class);
  const char *db[] = {"wh::Dumbbell::Pairs=3", "wh::Dumbbell::BottleneckRate=40Gbps", NULL};
  g_autoptr(WhNet) net = build_net(sim, "wh::Dumbbell", db);
  ck_assert_uint_eq(net->n_hosts, 6);
  ck_assert_uint_eq(net->n_switches, 2);
  uint32_t r[8];
  ck_assert_uint_eq(wh_net_route(net, 0, 3, 1, r, 8), 3);
  ck_assert_uint_eq(net->port[r[1]].rate_bps, 40000000000ULL);
  const char *st[] = {"wh::Star::Hosts=5", NULL};
  g_autoptr(WhNet) star = build_net(sim, "wh::Star", st);
  ck_assert_uint_eq(star->n_hosts, 5);
  ck_assert_uint_eq(route_hops(star, 0, 4), 2);
}
END_TEST

START_TEST(test_parameter_errors)
{
  g_autoptr(WhConfig) cfg = wh_config_new();
  ck_assert(wh_config_set_assignment(cfg, "wh::FatTree::K=6", "test", NULL));
  g_autoptr(GError) e1 = NULL;
  ck_assert(!wh_config_set_assignment(cfg, "wh::FatTree::K=1", "test", &e1));
  g_autoptr(GError) e2 = NULL;
  ck_assert(wh_config_set_assignment(cfg, "wh::FatTree::K=7", "here:3", NULL));
  g_autoptr(WhSim) sim = wh_sim_new(&wh_heap_scheduler_class);
  WhNetParams np = {.buffer_bytes = 1, .seed = 1, .ecn_ref_rate = 1};
  g_autoptr(WhNet) net = wh_net_new(sim, &np);
  ck_assert(!wh_topology_lookup("wh::FatTree")->build(net, cfg, &e2));
  ck_assert_ptr_nonnull(strstr(e2->message, "here:3"));
  ck_assert_ptr_nonnull(strstr(e2->message, "even"));
  ck_assert_ptr_null(wh_topology_lookup("wh::Torus"));
}
END_TEST

Suite *wh_topology_suite(void)
{
  Suite *s = suite_create("topology");
  TCase *tc = tcase_create("generators");
  tcase_add_test(tc, test_fat_tree_counts);
  tcase_add_test(tc, test_fat_tree_oversubscription);
  tcase_add_test(tc, test_rail_wiring);
  tcase_add_test(tc, test_dumbbell_and_star);
  tcase_add_test(tc, test_parameter_errors);
  suite_add_tcase(s, tc);
  return s;
}
