/* Dragonfly topology (Kim, Dally, Scott, Abts, "Technology-Driven, Highly-Scalable
 * Dragonfly Topology", ISCA 2008) with its own router, and the Frontier-like compute
 * node (HPE Cray EX235a: 8 MI250X GCDs, 4 NICs). See dragonfly.h and docs/modules/topology.md.
 *
 * Wiring. Group g has switches (g, 0..a-1), joined all-to-all by local links. Between
 * every pair of groups there are L global links; group i numbers its global links by
 * the peer's offset d = (j - i) mod G (d = 1..G-1) and the link index k: m = (d - 1) L + k,
 * and link m leaves from switch m mod a, so each switch carries at most ceil((G-1) L / a)
 * global links (checked against GlobalPortsPerSwitch). With SpareGlobalPorts=parallel,
 * L is raised to floor(a h / (G - 1)) so the unused global ports add parallel links.
 *
 * Routing. Minimal: local hop to the switch holding the chosen global link (one of the
 * L links to the destination group, by flow hash), the global link, a local hop to the
 * destination switch: at most 3 switch-to-switch hops. Valiant: minimal to a random
 * intermediate group (the switch where the global link lands), then minimal to the
 * destination: at most 5. Adaptive: UGAL per flowlet over the L minimal paths (one per
 * parallel global link), one Valiant path (3 or more groups), and inside a group the
 * direct hop and detours through other switches of the group. Inside a Frontier node, GCD to GCD
 * takes a shortest up-down path over the Infinity Fabric links (per-flow choice among equal ones);
 * a GCD reaches the network through the NIC of its own package (GPU-NIC affinity). Routes are built
 * from tables of port ids: no search per flow.
 *
 * Deadlock freedom under PFC: data moves to the next virtual channel (priority - 1)
 * after every global link, so a route uses channel classes 0 (source group), 1 (after
 * the first global link) and 2 (after the second, Valiant only) in order, and inside a
 * class no channel waits on another of the same class in a cycle (local hops are
 * separated by global hops; node fabric paths are up-down). A detour inside a group
 * takes two local hops in a row: the second moves to the next class (local ports bump
 * when the next link is local too), so it waits only on the endpoint link. */
#include "dragonfly.h"

#include <math.h>
#include <string.h>

#include "wh-error.h"

#define GCDS WH_DRAGONFLY_NODE_GCDS
#define NICS WH_DRAGONFLY_NODE_NICS
#define MAX_NODE_PATHS 8

/* Frontier node wiring (Pearson, "Interconnect Bandwidth Heterogeneity on AMD MI250x
 * and Infinity Fabric", 2023; OLCF Frontier user guide node diagram): GCD pairs joined
 * by 4 (quad: the two GCDs of one MI250X), 2 (dual) or 1 (single) Infinity Fabric links
 * of 50 GB/s per direction each. */
static const struct {
  uint8_t a, b, links;
} node_wiring[] = {
    {0, 1, 4}, {2, 3, 4}, {4, 5, 4}, {6, 7, 4}, /* quad: one MI250X */
    {0, 6, 2}, {1, 7, 2}, {2, 4, 2}, {3, 5, 2}, /* dual */
    {0, 2, 1}, {1, 3, 1}, {4, 6, 1}, {5, 7, 1}, /* single */
};

/* Shortest paths between GCDs of one node, as GCD sequences (computed once). */
typedef struct {
  uint8_t n_paths, len; /* len: GCDs on the path, both ends included */
  uint8_t gcd[MAX_NODE_PATHS][GCDS];
} NodePaths;

struct WhDragonfly {
  WhDragonflyShape shape;
  uint32_t sw0;          /* node id of switch (0, 0); switch (g, s) is sw0 + g a + s */
  uint32_t *local_port;  /* [(g a + s) a + t]: port from (g, s) to (g, t) */
  uint32_t *global_port; /* [(i G + j) L + k]: port of group i's k-th link to group j */
  uint32_t *host_sw;     /* plain endpoints: switch index (g a + s) per host */
  /* Frontier nodes */
  uint32_t gsw0;      /* node id of GCD switch 0 of node 0; node n's are gsw0 + GCDS n .. */
  uint32_t *gcd_port; /* [(n GCDS + c1) GCDS + c2]: port from GCD switch c1 to c2 of node n */
  uint32_t *nic_up;   /* [n 4 + q]: port from node n's NIC GCD switch to its switch */
  uint32_t *nic_down; /* [n 4 + q]: port from the switch to node n's NIC q */
  NodePaths paths[GCDS][GCDS];
  /* routing */
  WhDragonflyRouting routing;
  uint64_t ugal_bias;
  gboolean ugal_path;   /* UGAL sees the queues of the whole path, not the source group's */
  GHashTable *interned; /* set of uint32_t[1 + hops]: hops, then the ports */
  /* adaptive: [(i G + j) L + k], flows whose path is the minimal one over group i's
   * k-th link to group j (a move counts on the new link and leaves the old one; a
   * finished flow leaves through df_release) */
  uint32_t *link_flows;
  /* adaptive: [(g a + s) a + t], flows inside a group whose path crosses the local link
   * from switch (g, s) to (g, t), counted the same way */
  uint32_t *local_flows;
};

/* Interned routes: [hops, port, port, ...], hashed and compared by content, so a
 * route is stored once however many flows take it. */
static guint route_hash(gconstpointer k)
{
  const uint32_t *r = k;
  uint64_t h = r[0];
  for (uint32_t i = 1; i <= r[0]; i++)
    h = wh_mix64(h ^ r[i]);
  return (guint)h;
}

static gboolean route_equal(gconstpointer a, gconstpointer b)
{
  const uint32_t *x = a, *y = b;
  return x[0] == y[0] && memcmp(x + 1, y + 1, x[0] * sizeof(uint32_t)) == 0;
}

/* ---- parameters ---- */

static const char *const node_choices[] = {"host", "frontier", NULL};
static const char *const spare_choices[] = {"idle", "parallel", NULL};
static const char *const routing_choices[] = {"minimal", "valiant", "adaptive", NULL};
static const char *const ugal_choices[] = {"source-group", "path", NULL};

static const WhParamSpec dragonfly_params[] = {
    {"Groups", WH_PARAM_INT, "9", "groups", WH_CHECK_MIN | WH_CHECK_MAX, 1, 1024},
    {"SwitchesPerGroup", WH_PARAM_INT, "4", "switches per group (a), joined all-to-all",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 256},
    {"EndpointsPerSwitch", WH_PARAM_INT, "2",
     "endpoint ports per switch (p): hosts, or with Node=frontier NICs (4 per node)",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 256},
    {"GlobalPortsPerSwitch", WH_PARAM_INT, "2", "global ports per switch (h)",
     WH_CHECK_MIN | WH_CHECK_MAX, 0, 256},
    {"GlobalLinksPerPair", WH_PARAM_INT, "1", "global links between every pair of groups (L)",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 4096},
    {"SpareGlobalPorts", WH_PARAM_CHOICE, "idle",
     "global ports left over with fewer groups than a*h+1: idle, or parallel (raise L to "
     "floor(a*h/(Groups-1)))",
     0, 0, 0, spare_choices},
    {"Radix", WH_PARAM_INT, "64", "switch ports; p + a - 1 + h must fit",
     WH_CHECK_MIN | WH_CHECK_MAX, 2, 4096},
    {"EndpointRate", WH_PARAM_RATE, "100Gbps",
     "endpoint link rate; when not set, wh::Link::Rate (the default listed here is not used)",
     WH_CHECK_POSITIVE},
    {"LocalRate", WH_PARAM_RATE, "100Gbps",
     "intra-group link rate; when not set, wh::Link::Rate (the default listed here is not used)",
     WH_CHECK_POSITIVE},
    {"GlobalRate", WH_PARAM_RATE, "100Gbps",
     "inter-group link rate; when not set, wh::Link::Rate (the default listed here is not used)",
     WH_CHECK_POSITIVE},
    {"SwitchDelay", WH_PARAM_TIME, "0ns",
     "forwarding latency of a dragonfly switch; when not set, wh::Switch::Delay (the "
     "default listed here is not used)",
     0},
    {"EndpointDelay", WH_PARAM_TIME, "1us",
     "endpoint link delay; when not set, wh::Link::Delay (the default listed here is not used)", 0},
    {"LocalDelay", WH_PARAM_TIME, "1us",
     "intra-group link delay; when not set, wh::Link::Delay (the default listed here is not used)",
     0},
    {"GlobalDelay", WH_PARAM_TIME, "1us",
     "inter-group link delay; when not set, wh::Link::Delay (the default listed here is not used)",
     0},
    {"VirtualChannels", WH_PARAM_BOOL, "true",
     "data moves to the next priority after each global link (3 classes, deadlock-free "
     "with PFC; needs wh::RdmaFlow::Priority >= 3); false: one class for every hop",
     0},
    {"Routing", WH_PARAM_CHOICE, "minimal",
     "minimal; valiant (every flow between groups through a random intermediate group; 3 or "
     "more groups); adaptive (per flowlet, UGAL over every parallel global link, a Valiant "
     "path with 3 or more groups, and detours through other switches inside a group)",
     0, 0, 0, routing_choices},
    {"UgalBias", WH_PARAM_BYTES, "8KB",
     "adaptive: a non-minimal path (Valiant, or a detour inside a group) is taken when "
     "q_min * h_min > q_alt * h_alt + UgalBias (q: bytes queued at the path's egress ports "
     "in the source group, h: switch hops)",
     0},
    {"UgalQueues", WH_PARAM_CHOICE, "source-group",
     "adaptive: whose queues UGAL compares: source-group (the switches of the sending "
     "group, up to the first global link, as a real switch sees them) or path (every "
     "switch of the path: an oracle, UGAL-G)",
     0, 0, 0, ugal_choices},
    {"FlowletGap", WH_PARAM_TIME, "0ps",
     "adaptive: silence before a flow may change path (0: the base-latency difference of "
     "the longest Valiant and the shortest path); a change also waits until the flow's "
     "last packet has arrived",
     0},
    {"Node", WH_PARAM_CHOICE, "host",
     "what an endpoint port connects: a host, or (frontier) one of the 4 NICs of a node of "
     "8 GCD hosts joined by Infinity Fabric",
     0, 0, 0, node_choices},
    {"FabricLinkRate", WH_PARAM_RATE, "400Gbps",
     "frontier: one Infinity Fabric link, per direction (quad = 4, dual = 2 of them)",
     WH_CHECK_POSITIVE},
    {"FabricDelay", WH_PARAM_TIME, "100ns",
     "frontier: delay of an Infinity Fabric hop (fabric switches add no forwarding delay)", 0},
    {"FabricEfficiency", WH_PARAM_DOUBLE, "1",
     "frontier: the fraction of FabricLinkRate a fabric link delivers, in (0, 1] (the "
     "Frontier preset sets 0.76, fitted on measured per-pair xGMI bandwidth)",
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1},
    {"NicDelay", WH_PARAM_TIME, "0ns",
     "frontier: latency of a NIC, per packet, each way (added to both directions of the "
     "NIC's link: a packet between nodes pays it twice, at the sending and the receiving "
     "NIC; the Frontier preset sets 860ns)",
     0},
    {"HostDelay", WH_PARAM_TIME, "0ns",
     "frontier: latency of a GCD's host interface, per packet, each way (added to both "
     "directions of the GCD's own port: every packet pays it twice, leaving and arriving)",
     0},
    {"GcdPortRate", WH_PARAM_RATE, "3200Gbps",
     "frontier: a GCD's own port into its fabric switch (above the sum of its fabric links)",
     WH_CHECK_POSITIVE},
    {NULL},
};

const WhTypeInfo wh_dragonfly_type = {
    "wh::Dragonfly", "topology",
    "dragonfly: Groups x SwitchesPerGroup switches, all-to-all inside a group, "
    "GlobalLinksPerPair links between every pair of groups; endpoints are hosts or "
    "Frontier-like nodes; minimal, Valiant or adaptive (UGAL per flowlet) routing",
    dragonfly_params};

/* ---- node-internal paths ---- */

/* Paths inside a node follow up-down routing (Schroeder et al., "Autonet", 1991) over
 * a BFS tree rooted at GCD 0: a path goes "up" (towards the root, by (depth, id)) and
 * then only "down", which keeps the node's fabric free of cyclic buffer dependencies
 * under PFC without spending a virtual channel. Among the legal paths the shortest are
 * kept (for this wiring every pair has a legal shortest path). */
typedef struct {
  uint8_t adj[GCDS][GCDS];
  uint8_t key[GCDS]; /* depth * GCDS + id: smaller is closer to the root */
  uint8_t path[GCDS];
} NodeSearch;

static void node_dfs(NodeSearch *ns, NodePaths *np, uint8_t t, int depth, int max_len,
                     gboolean down)
{
  uint8_t u = ns->path[depth];
  if (u == t) {
    if (depth + 1 < np->len) { /* shorter than what was found: start over */
      np->len = (uint8_t)(depth + 1);
      np->n_paths = 0;
    }
    if (depth + 1 == np->len && np->n_paths < MAX_NODE_PATHS)
      memcpy(np->gcd[np->n_paths++], ns->path, GCDS);
    return;
  }
  if (depth + 1 >= max_len || depth + 1 >= np->len)
    return;
  for (uint8_t v = 0; v < GCDS; v++) {
    if (!ns->adj[u][v])
      continue;
    gboolean is_down = ns->key[v] > ns->key[u];
    if (down && !is_down)
      continue; /* no "up" after a "down" */
    gboolean seen = FALSE;
    for (int i = 0; i <= depth; i++)
      seen |= ns->path[i] == v;
    if (seen)
      continue;
    ns->path[depth + 1] = v;
    node_dfs(ns, np, t, depth + 1, max_len, is_down);
  }
}

static void node_paths_init(WhDragonfly *df)
{
  NodeSearch ns;
  memset(&ns, 0, sizeof ns);
  for (size_t i = 0; i < G_N_ELEMENTS(node_wiring); i++)
    ns.adj[node_wiring[i].a][node_wiring[i].b] = ns.adj[node_wiring[i].b][node_wiring[i].a] = 1;
  uint8_t depth[GCDS], q[GCDS], qh = 0, qt = 0;
  memset(depth, 0xff, sizeof depth);
  depth[0] = 0;
  q[qt++] = 0;
  while (qh < qt) {
    uint8_t u = q[qh++];
    for (uint8_t v = 0; v < GCDS; v++)
      if (ns.adj[u][v] && depth[v] == 0xff) {
        depth[v] = (uint8_t)(depth[u] + 1);
        q[qt++] = v;
      }
  }
  for (uint8_t v = 0; v < GCDS; v++)
    ns.key[v] = (uint8_t)(depth[v] * GCDS + v);
  for (uint8_t s = 0; s < GCDS; s++)
    for (uint8_t t = 0; t < GCDS; t++) {
      NodePaths *np = &df->paths[s][t];
      np->len = GCDS + 1;
      np->n_paths = 0;
      ns.path[0] = s;
      node_dfs(&ns, np, t, 0, GCDS, FALSE);
      g_assert(np->n_paths > 0);
    }
}

/* ---- building ---- */

/* Where wh::Dragonfly::`param` was set; for a default, where another part of the shape
 * was (NULL when none was set). (transfer none) */
static const char *shape_origin(const WhConfig *cfg, const char *param)
{
  static const char *const shape[] = {"EndpointsPerSwitch",
                                      "SwitchesPerGroup",
                                      "GlobalPortsPerSwitch",
                                      "GlobalLinksPerPair",
                                      "Groups",
                                      "Radix",
                                      "Node",
                                      NULL};
  const char *o = wh_config_origin(cfg, "wh::Dragonfly", param);
  for (size_t i = 0; o == NULL && shape[i]; i++)
    o = wh_config_origin(cfg, "wh::Dragonfly", shape[i]);
  return o;
}

/* A tier's rate or delay: its own parameter when set, else the wh::Link one. */
static uint64_t tier_rate(const WhConfig *cfg, const char *param)
{
  if (wh_config_origin(cfg, "wh::Dragonfly", param))
    return wh_config_rate(cfg, "wh::Dragonfly", param);
  return wh_config_rate(cfg, "wh::Link", "Rate");
}

static WhTime tier_delay(const WhConfig *cfg, const char *param)
{
  if (wh_config_origin(cfg, "wh::Dragonfly", param))
    return wh_config_time(cfg, "wh::Dragonfly", param);
  return wh_config_time(cfg, "wh::Link", "Delay");
}

gboolean wh_dragonfly_shape(const WhConfig *cfg, WhDragonflyShape *sh, GError **error)
{
  memset(sh, 0, sizeof *sh);
  sh->groups = (uint32_t)wh_config_int(cfg, "wh::Dragonfly", "Groups");
  sh->a = (uint32_t)wh_config_int(cfg, "wh::Dragonfly", "SwitchesPerGroup");
  sh->p = (uint32_t)wh_config_int(cfg, "wh::Dragonfly", "EndpointsPerSwitch");
  sh->h = (uint32_t)wh_config_int(cfg, "wh::Dragonfly", "GlobalPortsPerSwitch");
  sh->links_per_pair = (uint32_t)wh_config_int(cfg, "wh::Dragonfly", "GlobalLinksPerPair");
  sh->frontier = g_strcmp0(wh_config_choice(cfg, "wh::Dragonfly", "Node"), "frontier") == 0;
  sh->virtual_channels = wh_config_bool(cfg, "wh::Dragonfly", "VirtualChannels");
  if (sh->virtual_channels && wh_config_int(cfg, "wh::RdmaFlow", "Priority") < 3) {
    return wh_error_set_at(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                           wh_config_origin(cfg, "wh::RdmaFlow", "Priority"), 0,
                           "wh::RdmaFlow::Priority = %" G_GINT64_FORMAT
                           ": wh::Dragonfly::VirtualChannels needs data at priority 3 or above (3 "
                           "classes: priority, priority - 1, priority - 2)",
                           wh_config_int(cfg, "wh::RdmaFlow", "Priority"));
  }
  uint32_t radix = (uint32_t)wh_config_int(cfg, "wh::Dragonfly", "Radix");
  uint32_t G = sh->groups, a = sh->a;
  if (sh->frontier && sh->p % NICS != 0)
    return wh_error_set_at(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                           shape_origin(cfg, "EndpointsPerSwitch"), 0,
                           "wh::Dragonfly::EndpointsPerSwitch: "
                           "%u: with Node=frontier it counts NICs, 4 per node: use a multiple of 4",
                           sh->p);
  if (sh->p + a - 1 + sh->h > radix)
    return wh_error_set_at(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                           shape_origin(cfg, "Radix"), 0,
                           "wh::Dragonfly::Radix: "
                           "%u ports cannot hold %u endpoint + %u local + %u global ports",
                           radix, sh->p, a - 1, sh->h);
  if (G > 1) {
    uint64_t ports = (uint64_t)a * sh->h;
    if (g_strcmp0(wh_config_choice(cfg, "wh::Dragonfly", "SpareGlobalPorts"), "parallel") == 0 &&
        ports / (G - 1) > sh->links_per_pair)
      sh->links_per_pair = (uint32_t)(ports / (G - 1));
    uint64_t need = (uint64_t)(G - 1) * sh->links_per_pair;
    if (need > ports)
      return wh_error_set_at(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                             shape_origin(cfg, "GlobalPortsPerSwitch"), 0,
                             "wh::Dragonfly::GlobalPortsPerSwitch: "
                             "%u global ports on each of %u switches cannot hold %" G_GUINT64_FORMAT
                             " global links per group (%u peer groups x %u links per pair)",
                             sh->h, a, need, G - 1, sh->links_per_pair);
    if ((uint64_t)G * G * sh->links_per_pair > (1u << 28))
      return wh_error_set_at(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                             shape_origin(cfg, "Groups"), 0,
                             "wh::Dragonfly::Groups: "
                             "%u groups x %u links per pair: too many links",
                             G, sh->links_per_pair);
  }
  const char *routing = wh_config_choice(cfg, "wh::Dragonfly", "Routing");
  if (G < 3 && g_strcmp0(routing, "valiant") == 0)
    return wh_error_set_at(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                           shape_origin(cfg, "Routing"), 0,
                           "wh::Dragonfly::Routing: "
                           "valiant routing needs an intermediate group, so at least 3 groups (%u "
                           "here; adaptive routing works with any number)",
                           G);
  sh->nodes_per_switch = sh->frontier ? sh->p / NICS : 0;
  sh->gcds_per_node = sh->frontier ? GCDS : 0;
  uint64_t hosts = (uint64_t)G * a * sh->p * (sh->frontier ? GCDS / NICS : 1);
  if (hosts > (1u << 24))
    return wh_error_set_at(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                           shape_origin(cfg, "Groups"), 0,
                           "wh::Dragonfly::Groups: "
                           "%" G_GUINT64_FORMAT " hosts: too many (limit %u)",
                           hosts, 1u << 24);
  sh->hosts = (uint32_t)hosts;
  sh->switches = G * a;
  return TRUE;
}

static gboolean df_link(WhNet *net, uint32_t a, uint32_t b, uint64_t rate, WhTime delay,
                        WhLinkTier tier, uint32_t *port_ab, GError **error)
{
  uint32_t first = wh_net_build_port_count(net);
  if (!wh_net_add_link(net, a, b, rate, delay, error))
    return FALSE;
  wh_net_set_link_tier(net, first, tier);
  if (port_ab)
    *port_ab = first; /* ports are added a-side first */
  return TRUE;
}

static void dragonfly_free(WhDragonfly *df)
{
  if (df == NULL)
    return;
  g_free(df->local_port);
  g_free(df->global_port);
  g_free(df->host_sw);
  g_free(df->gcd_port);
  g_free(df->nic_up);
  g_free(df->nic_down);
  g_free(df->link_flows);
  g_free(df->local_flows);
  if (df->interned)
    g_hash_table_unref(df->interned);
  g_free(df);
}

/* Frontier nodes: a GCD's own port is faster than anything behind it, so a flow's
 * line rate is its route's slowest link: the NIC (200 Gb/s) between nodes, the
 * narrowest Infinity Fabric link inside a node. */
static uint64_t df_line_rate(const WhNet *net, const void *data, const uint32_t *route,
                             uint32_t hops)
{
  (void)data;
  uint64_t r = UINT64_MAX;
  for (uint32_t i = 0; i < hops; i++)
    r = MIN(r, net->port[route[i]].line_bps);
  return r;
}

static void dragonfly_free_data(gpointer data)
{
  dragonfly_free(data);
}

static uint32_t df_route(const WhNet *net, const void *data, uint32_t src, uint32_t dst,
                         uint64_t hash, uint32_t *out, uint32_t cap);
static void df_release(const WhNet *net, void *data, uint32_t src, uint32_t dst,
                       const uint32_t *path);
static const uint32_t *df_choose(const WhNet *net, void *data, uint32_t src, uint32_t dst,
                                 uint64_t hash, uint64_t flowlet, const uint32_t *current,
                                 uint16_t *nhops);

/* The Frontier nodes: per node, 8 GCD hosts on their fabric switches, the Infinity
 * Fabric links between those, and the 4 NICs up to the node's dragonfly switch. */
static gboolean build_frontier_nodes(WhNet *net, WhDragonfly *df, const WhConfig *cfg,
                                     uint32_t host0, GError **error)
{
  const WhDragonflyShape *sh = &df->shape;
  uint32_t nodes = sh->switches * sh->nodes_per_switch;
  double eff = wh_config_double(cfg, "wh::Dragonfly", "FabricEfficiency");
  uint64_t fab =
      (uint64_t)llround((double)wh_config_rate(cfg, "wh::Dragonfly", "FabricLinkRate") * eff);
  WhTime fab_delay = wh_config_time(cfg, "wh::Dragonfly", "FabricDelay");
  WhTime nic_delay = wh_config_time(cfg, "wh::Dragonfly", "NicDelay");
  WhTime host_delay = wh_config_time(cfg, "wh::Dragonfly", "HostDelay");
  uint64_t gcd_rate = wh_config_rate(cfg, "wh::Dragonfly", "GcdPortRate");
  uint64_t ep_rate = tier_rate(cfg, "EndpointRate");
  WhTime ep_delay = tier_delay(cfg, "EndpointDelay");
  df->gsw0 = wh_net_add_switch(net);
  for (uint32_t i = 1; i < nodes * GCDS; i++)
    wh_net_add_switch(net);
  for (uint32_t i = 0; i < nodes * GCDS; i++)
    wh_net_set_switch_delay(net, df->gsw0 + i, 0); /* in FabricDelay */
  df->gcd_port = g_new(uint32_t, (size_t)nodes * GCDS * GCDS);
  memset(df->gcd_port, 0xff, sizeof(uint32_t) * (size_t)nodes * GCDS * GCDS);
  df->nic_up = g_new(uint32_t, (size_t)nodes * NICS);
  df->nic_down = g_new(uint32_t, (size_t)nodes * NICS);
  node_paths_init(df);
  gboolean ok = TRUE;
  for (uint32_t n = 0; n < nodes && ok; n++) {
    uint32_t gs = df->gsw0 + n * GCDS;
    for (uint32_t c = 0; c < GCDS && ok; c++)
      ok = df_link(net, host0 + n * GCDS + c, gs + c, gcd_rate, fab_delay + host_delay,
                   WH_TIER_HOST, NULL, error);
    for (size_t w = 0; w < G_N_ELEMENTS(node_wiring) && ok; w++) {
      uint32_t pa = 0, ca = node_wiring[w].a, cb = node_wiring[w].b;
      ok = df_link(net, gs + ca, gs + cb, fab * node_wiring[w].links, fab_delay, WH_TIER_FABRIC,
                   &pa, error);
      df->gcd_port[(size_t)n * GCDS * GCDS + ca * GCDS + cb] = pa;
      df->gcd_port[(size_t)n * GCDS * GCDS + cb * GCDS + ca] = pa + 1;
    }
    /* NIC q hangs off the first GCD of package q; its port on the node's switch */
    for (uint32_t q = 0; q < NICS && ok; q++) {
      uint32_t pu = 0;
      ok = df_link(net, gs + 2 * q, df->sw0 + n / sh->nodes_per_switch, ep_rate,
                   ep_delay + nic_delay, WH_TIER_NIC, &pu, error);
      df->nic_up[n * NICS + q] = pu;
      df->nic_down[n * NICS + q] = pu + 1;
    }
  }
  return ok;
}

/* Hosts (p per switch) or Frontier nodes, then the switches' local and global links. */
static gboolean build_links(WhNet *net, WhDragonfly *df, const WhConfig *cfg, uint32_t host0,
                            GError **error)
{
  const WhDragonflyShape *sh = &df->shape;
  uint32_t G = sh->groups, a = sh->a, p = sh->p, L = sh->links_per_pair;
  uint64_t lo_rate = tier_rate(cfg, "LocalRate"), gl_rate = tier_rate(cfg, "GlobalRate");
  WhTime lo_delay = tier_delay(cfg, "LocalDelay"), gl_delay = tier_delay(cfg, "GlobalDelay");
  gboolean ok = TRUE;
  if (sh->frontier) {
    ok = build_frontier_nodes(net, df, cfg, host0, error);
  } else {
    uint64_t ep_rate = tier_rate(cfg, "EndpointRate");
    WhTime ep_delay = tier_delay(cfg, "EndpointDelay");
    df->host_sw = g_new(uint32_t, sh->hosts);
    for (uint32_t hst = 0; hst < sh->hosts && ok; hst++) {
      df->host_sw[hst] = hst / p;
      ok = df_link(net, host0 + hst, df->sw0 + hst / p, ep_rate, ep_delay, WH_TIER_HOST, NULL,
                   error);
    }
  }
  df->local_port = g_new(uint32_t, (size_t)G * a * a);
  memset(df->local_port, 0xff, sizeof(uint32_t) * (size_t)G * a * a);
  for (uint32_t g = 0; g < G && ok; g++)
    for (uint32_t s = 0; s < a && ok; s++)
      for (uint32_t t = s + 1; t < a && ok; t++) {
        uint32_t pst = 0;
        ok = df_link(net, df->sw0 + g * a + s, df->sw0 + g * a + t, lo_rate, lo_delay,
                     WH_TIER_LOCAL, &pst, error);
        df->local_port[((size_t)g * a + s) * a + t] = pst;
        df->local_port[((size_t)g * a + t) * a + s] = pst + 1;
        if (ok && sh->virtual_channels) { /* a detour's second local hop: next class */
          wh_net_set_port_vc_bump(net, pst, WH_VC_BUMP_SAME_TIER);
          wh_net_set_port_vc_bump(net, pst + 1, WH_VC_BUMP_SAME_TIER);
        }
      }
  /* global links: group i's m-th link (m = (d - 1) L + k, d the peer's offset) leaves
   * from switch m mod a */
  df->global_port = g_new(uint32_t, (size_t)G * G * L);
  memset(df->global_port, 0xff, sizeof(uint32_t) * (size_t)G * G * L);
  for (uint32_t i = 0; i < G && ok; i++)
    for (uint32_t j = i + 1; j < G && ok; j++)
      for (uint32_t k = 0; k < L && ok; k++) {
        uint32_t mi = ((j - i + G) % G - 1) * L + k, mj = ((i - j + G) % G - 1) * L + k;
        uint32_t pij = 0;
        ok = df_link(net, df->sw0 + i * a + mi % a, df->sw0 + j * a + mj % a, gl_rate, gl_delay,
                     WH_TIER_GLOBAL, &pij, error);
        df->global_port[((size_t)i * G + j) * L + k] = pij;
        df->global_port[((size_t)j * G + i) * L + k] = pij + 1;
        if (ok && sh->virtual_channels) {
          wh_net_set_port_vc_bump(net, pij, WH_VC_BUMP_ALWAYS);
          wh_net_set_port_vc_bump(net, pij + 1, WH_VC_BUMP_ALWAYS);
        }
      }
  return ok;
}

/* Routing mode and UGAL settings from the configuration; installs the router. */
static void install_router(WhNet *net, WhDragonfly *df, const WhConfig *cfg)
{
  const char *routing = wh_config_choice(cfg, "wh::Dragonfly", "Routing");
  df->routing = g_strcmp0(routing, "valiant") == 0    ? WH_DRAGONFLY_VALIANT
                : g_strcmp0(routing, "adaptive") == 0 ? WH_DRAGONFLY_ADAPTIVE
                                                      : WH_DRAGONFLY_MINIMAL;
  df->ugal_bias = wh_config_bytes(cfg, "wh::Dragonfly", "UgalBias");
  df->ugal_path = g_strcmp0(wh_config_choice(cfg, "wh::Dragonfly", "UgalQueues"), "path") == 0;
  df->interned = g_hash_table_new_full(route_hash, route_equal, g_free, NULL);
  WhNetRouter r = {.route = df_route, .data = df, .free_data = dragonfly_free_data};
  if (df->shape.frontier)
    r.line_rate = df_line_rate;
  if (df->routing == WH_DRAGONFLY_ADAPTIVE) {
    r.choose = df_choose;
    r.release = df_release;
    df->link_flows =
        g_new0(uint32_t, (size_t)df->shape.groups * df->shape.groups * df->shape.links_per_pair);
    df->local_flows = g_new0(uint32_t, (size_t)df->shape.switches * df->shape.a);
    r.flowlet_gap = wh_config_time(cfg, "wh::Dragonfly", "FlowletGap");
    if (r.flowlet_gap == 0) { /* longest Valiant path minus the shortest path */
      WhTime sw = wh_config_origin(cfg, "wh::Dragonfly", "SwitchDelay")
                      ? wh_config_time(cfg, "wh::Dragonfly", "SwitchDelay")
                      : wh_config_time(cfg, "wh::Switch", "Delay");
      r.flowlet_gap =
          3 * (tier_delay(cfg, "LocalDelay") + sw) + 2 * (tier_delay(cfg, "GlobalDelay") + sw);
    }
  }
  wh_net_set_router(net, &r);
}

gboolean wh_dragonfly_build(WhNet *net, const WhConfig *cfg, GError **error)
{
  WhDragonflyShape sh;
  if (!wh_dragonfly_shape(cfg, &sh, error))
    return FALSE;
  WhDragonfly *df = g_new0(WhDragonfly, 1);
  df->shape = sh;
  uint32_t host0 = 0;
  for (uint32_t i = 0; i < sh.hosts; i++) {
    uint32_t id = wh_net_add_host(net);
    if (i == 0)
      host0 = id;
  }
  df->sw0 = wh_net_add_switch(net);
  for (uint32_t i = 1; i < sh.switches; i++)
    wh_net_add_switch(net);
  if (wh_config_origin(cfg, "wh::Dragonfly", "SwitchDelay")) {
    WhTime d = wh_config_time(cfg, "wh::Dragonfly", "SwitchDelay");
    for (uint32_t i = 0; i < sh.switches; i++)
      wh_net_set_switch_delay(net, df->sw0 + i, d);
  }
  if (!build_links(net, df, cfg, host0, error)) {
    dragonfly_free(df);
    return FALSE;
  }
  install_router(net, df, cfg);
  return TRUE;
}

const WhDragonfly *wh_dragonfly_of(const WhNet *net)
{
  return net->router.route == df_route ? net->router.data : NULL;
}

const WhDragonflyShape *wh_dragonfly_get_shape(const WhDragonfly *df)
{
  return &df->shape;
}

/* ---- routing ---- */

/* The switch index (g a + s) a host's traffic enters the network at, and, for Frontier
 * nodes, its node and GCD. */
static uint32_t host_switch(const WhDragonfly *df, uint32_t host, uint32_t *node, uint32_t *gcd)
{
  if (!df->shape.frontier)
    return df->host_sw[host];
  *node = host / GCDS;
  *gcd = host % GCDS;
  return *node / df->shape.nodes_per_switch;
}

typedef struct {
  uint32_t *out;
  uint32_t n, cap;
} Path;

static gboolean push(Path *pa, uint32_t port)
{
  if (pa->n >= pa->cap)
    return FALSE;
  pa->out[pa->n++] = port;
  return TRUE;
}

/* Switch-to-switch hops from switch index S to D, minimal; `k` picks the global link. */
static gboolean minimal_hops(const WhNet *net, const WhDragonfly *df, uint32_t S, uint32_t D,
                             uint64_t k, Path *pa)
{
  uint32_t a = df->shape.a, G = df->shape.groups, L = df->shape.links_per_pair;
  if (S == D)
    return TRUE;
  uint32_t g1 = S / a, g2 = D / a;
  if (g1 == g2)
    return push(pa, df->local_port[(size_t)S * a + D % a]);
  uint32_t gp = df->global_port[((size_t)g1 * G + g2) * L + k % L];
  uint32_t x = net->port[gp].node - df->sw0, y = net->port[gp].peer_node - df->sw0;
  if (x != S && !push(pa, df->local_port[(size_t)S * a + x % a]))
    return FALSE;
  if (!push(pa, gp))
    return FALSE;
  return y == D || push(pa, df->local_port[(size_t)y * a + D % a]);
}

/* Inside node n: from GCD c1 to c2 along one of the shortest paths. */
static gboolean node_hops(const WhDragonfly *df, uint32_t n, uint32_t c1, uint32_t c2,
                          uint64_t hash, Path *pa)
{
  const NodePaths *np = &df->paths[c1][c2];
  const uint8_t *g = np->gcd[hash % np->n_paths];
  for (uint32_t i = 0; i + 1 < np->len; i++)
    if (!push(pa, df->gcd_port[(size_t)n * GCDS * GCDS + g[i] * GCDS + g[i + 1]]))
      return FALSE;
  return TRUE;
}

/* What a path takes besides the structure: an intermediate group (Valiant between
 * groups), an intermediate switch of the group (a detour inside a group), the global
 * link to the destination group (else by hash). NONE where there is no such choice. */
#define NONE UINT32_MAX
typedef struct {
  uint32_t via_group, via_switch, link;
} Choice;

static const Choice by_hash = {NONE, NONE, NONE};

static uint32_t df_path(const WhNet *net, const WhDragonfly *df, uint32_t src, uint32_t dst,
                        uint64_t hash, Choice ch, uint32_t *out, uint32_t cap)
{
  Path pa = {out, 0, cap};
  uint32_t ns = 0, cs = 0, nd = 0, cd = 0;
  uint32_t S = host_switch(df, src, &ns, &cs), D = host_switch(df, dst, &nd, &cd);
  uint64_t h1 = wh_mix64(hash), h2 = wh_mix64(h1);
  if (!push(&pa, wh_net_host_port(net, src)))
    return 0;
  if (df->shape.frontier) {
    if (ns == nd) {
      if (!node_hops(df, ns, cs, cd, h1, &pa))
        return 0;
      uint32_t last = net->port[wh_net_host_port(net, dst)].peer;
      return push(&pa, last) ? pa.n : 0;
    }
    /* to the first GCD of the package, whose NIC leads to the switch */
    if (!node_hops(df, ns, cs, cs & ~1u, h1, &pa) || !push(&pa, df->nic_up[ns * NICS + cs / 2]))
      return 0;
  }
  uint32_t a = df->shape.a;
  if (ch.via_group != NONE) {
    /* minimal to the intermediate group's landing switch, then on */
    uint32_t G = df->shape.groups, L = df->shape.links_per_pair;
    uint32_t gp = df->global_port[((size_t)(S / a) * G + ch.via_group) * L + h1 % L];
    uint32_t land = net->port[gp].peer_node - df->sw0;
    if (!minimal_hops(net, df, S, land, h1, &pa) || !minimal_hops(net, df, land, D, h2, &pa))
      return 0;
  } else if (ch.via_switch != NONE) {
    /* two local hops through switch via_switch of the group */
    uint32_t t = (S / a) * a + ch.via_switch;
    if (!push(&pa, df->local_port[(size_t)S * a + ch.via_switch]) ||
        !push(&pa, df->local_port[(size_t)t * a + D % a]))
      return 0;
  } else if (!minimal_hops(net, df, S, D, ch.link != NONE ? ch.link : h1, &pa)) {
    return 0;
  }
  if (df->shape.frontier) {
    if (!push(&pa, df->nic_down[nd * NICS + cd / 2]) || !node_hops(df, nd, cd & ~1u, cd, h2, &pa))
      return 0;
  }
  uint32_t last = net->port[wh_net_host_port(net, dst)].peer;
  return push(&pa, last) ? pa.n : 0;
}

/* A random intermediate group for a flow between groups gs and gd (G >= 3). */
static uint32_t pick_via(const WhDragonfly *df, uint32_t gs, uint32_t gd, uint64_t r)
{
  uint32_t G = df->shape.groups;
  uint32_t v = (uint32_t)(r % (G - 2));
  uint32_t lo = MIN(gs, gd), hi = MAX(gs, gd);
  if (v >= lo)
    v++;
  if (v >= hi)
    v++;
  return v;
}

static uint32_t df_route(const WhNet *net, const void *data, uint32_t src, uint32_t dst,
                         uint64_t hash, uint32_t *out, uint32_t cap)
{
  const WhDragonfly *df = data;
  Choice ch = by_hash;
  if (df->routing == WH_DRAGONFLY_VALIANT && df->shape.groups >= 3) {
    uint32_t gs = wh_dragonfly_host_group(df, src), gd = wh_dragonfly_host_group(df, dst);
    if (gs != gd)
      ch.via_group = pick_via(df, gs, gd, wh_mix64(hash ^ 0x5a17a47ULL));
  }
  return df_path(net, df, src, dst, hash, ch, out, cap);
}

/* A candidate route, built in `buf` (65 words): [hops, port, port, ...]. */
static void build_route(const WhNet *net, const WhDragonfly *df, uint32_t src, uint32_t dst,
                        uint64_t hash, Choice ch, uint32_t *buf)
{
  buf[0] = df_path(net, df, src, dst, hash, ch, buf + 1, 64);
  g_assert(buf[0] > 0);
}

/* The interned copy of route `r`, stored on first use. */
static const uint32_t *intern_route(WhDragonfly *df, const uint32_t *r)
{
  uint32_t *k = g_hash_table_lookup(df->interned, r);
  if (k == NULL) {
    k = g_memdup2(r, (r[0] + 1) * sizeof(uint32_t));
    g_hash_table_add(df->interned, k);
  }
  return k;
}

/* What UGAL knows of a path: bytes queued at its switch egress ports inside the source
 * group (the first switch up to and including the first global link: what the source
 * group's switches know), or along the whole path with UgalQueues=path; its
 * switch-to-switch hops; whether it is minimal (one global link between groups, at
 * most one local hop inside a group). */
typedef struct {
  uint64_t q;
  uint32_t hops;
  gboolean minimal;
} PathLoad;

static PathLoad path_load(const WhNet *net, const WhDragonfly *df, const uint32_t *r)
{
  PathLoad l = {0, 0, TRUE};
  uint32_t n = r[0], globals = 0, locals = 0;
  for (uint32_t i = 1; i <= n; i++) {
    const WhPort *p = &net->port[r[i]];
    uint32_t a = p->node - df->sw0, b = p->peer_node - df->sw0;
    gboolean sw_a = a < df->shape.switches, sw_b = b < df->shape.switches;
    if ((globals == 0 || df->ugal_path) && sw_a)
      l.q += p->qd.total_bytes;
    if (sw_a && sw_b) {
      l.hops++;
      if (a / df->shape.a != b / df->shape.a)
        globals++; /* the first global link ends the source group's part */
      else
        locals++;
    }
  }
  l.minimal = globals ? globals == 1 : locals <= 1;
  return l;
}

/* UGAL's cost of a path against another: between two minimal paths (the parallel
 * global links, which differ in hops only by where the links start and end) the bytes
 * queued, else those bytes x the switch-to-switch hops. */
static uint64_t ugal_cost(PathLoad l, PathLoad other)
{
  return l.minimal && other.minimal ? l.q : l.q * l.hops;
}

/* Which of the L links from group gs to gd (slots base .. base + L - 1 of global_port)
 * route `r` crosses; NONE if it crosses none of them (a Valiant path). */
static uint32_t minimal_link(const WhNet *net, const WhDragonfly *df, const uint32_t *r,
                             size_t base)
{
  for (uint32_t i = 1; i <= r[0]; i++) {
    if (net->port[r[i]].tier != WH_TIER_GLOBAL)
      continue;
    for (uint32_t k = 0; k < df->shape.links_per_pair; k++)
      if (df->global_port[base + k] == r[i])
        return k;
    return NONE;
  }
  return NONE;
}

/* The most flows on a local link of route `r` (a path inside a group), then `delta`
 * (+1, -1 or 0) added to the count of each of its local links. */
static uint32_t local_flows(const WhNet *net, WhDragonfly *df, const uint32_t *r, int delta)
{
  uint32_t most = 0, a = df->shape.a;
  for (uint32_t i = 1; i <= r[0]; i++) {
    const WhPort *p = &net->port[r[i]];
    if (p->tier != WH_TIER_LOCAL)
      continue;
    uint32_t *cnt =
        &df->local_flows[(size_t)(p->node - df->sw0) * a + (p->peer_node - df->sw0) % a];
    most = MAX(most, *cnt);
    if (delta >= 0 || *cnt > 0)
      *cnt = (uint32_t)((int64_t)*cnt + delta);
  }
  return most;
}

/* A flow's move from its current path (nullable) to another: inside a group (`local`),
 * else over minimal global link `link` (NONE: a non-minimal path) from `old` (NONE when
 * it had none), among the parallel links from `base`. */
typedef struct {
  gboolean local;
  size_t base;
  uint32_t link, old;
} Move;

/* Hysteresis: leaving the current path costs a drained flight, so it is left only for a
 * path `pick` cheaper by the bias, and for a parallel link or path inside a group only
 * when that evens out the flows on them. TRUE when the flow keeps `current`. */
static gboolean keeps_current(const WhNet *net, WhDragonfly *df, const uint32_t *current,
                              const uint32_t *pick, PathLoad lp, const Move *mv)
{
  PathLoad lc = path_load(net, df, current - 1);
  gboolean worse = ugal_cost(lc, lp) <= ugal_cost(lp, lc) + df->ugal_bias;
  if (mv->old != NONE && mv->link != NONE)
    worse |= df->link_flows[mv->base + mv->link] + 2 > df->link_flows[mv->base + mv->old];
  if (mv->local)
    worse |= local_flows(net, df, pick, 0) + 2 > local_flows(net, df, current - 1, 0);
  return worse;
}

/* Counts the flow on `pick` and off `current` (nullable): on local links inside a group,
 * else on the parallel global links. */
static void count_move(const WhNet *net, WhDragonfly *df, const uint32_t *current,
                       const uint32_t *pick, const Move *mv)
{
  if (mv->local) {
    local_flows(net, df, pick, 1);
    if (current)
      local_flows(net, df, current - 1, -1);
    return;
  }
  if (mv->link != NONE)
    df->link_flows[mv->base + mv->link]++;
  if (mv->old != NONE && df->link_flows[mv->base + mv->old] > 0)
    df->link_flows[mv->base + mv->old]--;
}

/* UGAL over every candidate of a flowlet. Between groups: each of the L minimal paths
 * (one per parallel global link; between equal queues, as when flows start together in
 * an idle network, the link fewer flows take wins, then the flow's hashed one), and
 * with 3 or more groups one Valiant path through a random intermediate group, taken
 * when the best minimal path costs more than it + UgalBias. Inside a group, between
 * two switches: the direct local hop, and LOCAL_DETOURS detours through random other
 * switches of the group, the cheapest taken when the direct hop costs more than it +
 * UgalBias; with queues that do not decide it (a flow's first choice), the detour when
 * the direct hop's flows + 1 exceed twice the detour's flows + 1 (flows: the most on a
 * local link of the path). A flow leaves its path only for one cheaper by UgalBias,
 * and leaves one parallel global link for another, or one path inside a group for
 * another, only when that evens out the flows on them (the other has at least two
 * fewer): queues alone flap, each flow seeing the same short queue (often only a rate
 * dip of the flows there) and moving at once. */
#define LOCAL_DETOURS 4
static const uint32_t *df_choose(const WhNet *net, void *data, uint32_t src, uint32_t dst,
                                 uint64_t hash, uint64_t flowlet, const uint32_t *current,
                                 uint16_t *nhops)
{
  WhDragonfly *df = data;
  /* The candidates are built on the stack and only the one taken is interned (one
   * table lookup per choice, none when the flow keeps its path). */
  uint32_t bufs[3][65];
  uint32_t *best = bufs[0], *cand = bufs[1], *other = bufs[2], *swap;
  build_route(net, df, src, dst, hash, by_hash, best);
  PathLoad lp = path_load(net, df, best);
  uint32_t n, c, a = df->shape.a, G = df->shape.groups, L = df->shape.links_per_pair;
  uint32_t S = host_switch(df, src, &n, &c), D = host_switch(df, dst, &n, &c);
  uint32_t gs = S / a, gd = D / a;
  uint64_t r = wh_mix64(hash ^ (flowlet * 0x9e3779b97f4a7c15ULL));
  gboolean have_alt = FALSE; /* `other` holds the best non-minimal candidate */
  PathLoad la = {UINT64_MAX / 64, 1, FALSE};
  uint32_t alt_flows = 0;
  size_t base = ((size_t)gs * G + gd) * L;
  uint32_t link = (uint32_t)(wh_mix64(hash) % L); /* the hashed path's */
  if (gs != gd) {
    for (uint32_t k = 0; k < L && L > 1; k++) {
      build_route(net, df, src, dst, hash, (Choice){NONE, NONE, k}, cand);
      PathLoad lm = path_load(net, df, cand);
      if (lm.q < lp.q || (lm.q == lp.q && df->link_flows[base + k] < df->link_flows[base + link])) {
        swap = best, best = cand, cand = swap;
        lp = lm;
        link = k;
      }
    }
    if (G >= 3) {
      build_route(net, df, src, dst, hash, (Choice){pick_via(df, gs, gd, r), NONE, NONE}, other);
      la = path_load(net, df, other);
      have_alt = TRUE;
    }
  } else if (S != D && a >= 3) {
    uint32_t lo = MIN(S % a, D % a), hi = MAX(S % a, D % a);
    for (uint32_t i = 0; i < LOCAL_DETOURS; i++) {
      r = wh_mix64(r + i);
      uint32_t t = (uint32_t)(r % (a - 2));
      t += t >= lo;
      t += t >= hi;
      build_route(net, df, src, dst, hash, (Choice){NONE, t, NONE}, cand);
      PathLoad ld = path_load(net, df, cand);
      uint32_t fd = local_flows(net, df, cand, 0);
      if (!have_alt || ld.q * ld.hops < la.q * la.hops ||
          (ld.q * ld.hops == la.q * la.hops && fd < alt_flows)) {
        swap = other, other = cand, cand = swap;
        la = ld;
        alt_flows = fd;
        have_alt = TRUE;
      }
    }
  }
  const uint32_t *pick = best, *alt = have_alt ? other : NULL;
  gboolean take = alt && ugal_cost(lp, la) > ugal_cost(la, lp) + df->ugal_bias;
  if (alt && gs == gd && !take && current == NULL)
    take = (uint64_t)local_flows(net, df, pick, 0) + 1 > 2 * ((uint64_t)alt_flows + 1);
  if (take) {
    pick = alt;
    lp = la;
    link = NONE;
  }
  Move mv = {.local = gs == gd,
             .base = base,
             .link = link,
             .old = gs != gd && current ? minimal_link(net, df, current - 1, base) : NONE};
  if (current &&
      (route_equal(current - 1, pick) || keeps_current(net, df, current, pick, lp, &mv))) {
    *nhops = (uint16_t)current[-1];
    return current;
  }
  count_move(net, df, current, pick, &mv);
  pick = intern_route(df, pick);
  *nhops = (uint16_t)pick[0];
  return pick + 1;
}

/* A flow is done with `path` (one df_choose returned): it leaves its links' counts. */
static void df_release(const WhNet *net, void *data, uint32_t src, uint32_t dst,
                       const uint32_t *path)
{
  WhDragonfly *df = data;
  uint32_t n, c, a = df->shape.a, G = df->shape.groups, L = df->shape.links_per_pair;
  uint32_t gs = host_switch(df, src, &n, &c) / a, gd = host_switch(df, dst, &n, &c) / a;
  if (gs == gd) {
    local_flows(net, df, path - 1, -1);
    return;
  }
  size_t base = ((size_t)gs * G + gd) * L;
  uint32_t k = minimal_link(net, df, path - 1, base);
  if (k != NONE && df->link_flows[base + k] > 0)
    df->link_flows[base + k]--;
}

uint32_t wh_dragonfly_route(const WhNet *net, const WhDragonfly *df, uint32_t src, uint32_t dst,
                            uint64_t hash, uint32_t via_group, uint32_t *out, uint32_t cap)
{
  uint32_t a = df->shape.a;
  if (via_group != UINT32_MAX) {
    uint32_t n, c;
    uint32_t gs = host_switch(df, src, &n, &c) / a, gd = host_switch(df, dst, &n, &c) / a;
    if (via_group >= df->shape.groups || via_group == gs || via_group == gd)
      return 0;
  }
  return df_path(net, df, src, dst, hash, (Choice){via_group, NONE, NONE}, out, cap);
}

uint32_t wh_dragonfly_host_group(const WhDragonfly *df, uint32_t host)
{
  uint32_t n, c;
  return host_switch(df, host, &n, &c) / df->shape.a;
}

uint32_t wh_dragonfly_link_flows(const WhDragonfly *df, uint32_t gs, uint32_t gd, uint32_t k)
{
  uint32_t G = df->shape.groups, L = df->shape.links_per_pair;
  if (df->link_flows == NULL || gs >= G || gd >= G || k >= L)
    return 0;
  return df->link_flows[((size_t)gs * G + gd) * L + k];
}

uint32_t wh_dragonfly_switch_node(const WhDragonfly *df, uint32_t group, uint32_t s)
{
  return df->sw0 + group * df->shape.a + s;
}
