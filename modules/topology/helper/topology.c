/* Stock topology generators (parameter errors are WH_CONFIG_ERROR and name where the
 * value was set): dumbbell, single-switch star, k-ary 3-tier fat-tree
 * (Al-Fares et al., SIGCOMM 2008, with an oversubscription factor at the edge) and
 * rail-optimized fat-tree (servers of G GPUs, GPU i's NIC on rail switch i, every
 * rail switch linked to every spine). */
#include "topology.h"
#include "dragonfly.h"

#define BAIL_IF(cond)                                                                              \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      return FALSE;                                                                                \
  } while (0)

typedef struct {
  uint64_t rate;
  WhTime delay;
} LinkSpec;

static LinkSpec default_link(const WhConfig *cfg)
{
  LinkSpec l = {wh_config_rate(cfg, "wh::Link", "Rate"), wh_config_time(cfg, "wh::Link", "Delay")};
  return l;
}

/* A link of `tier` (for the per-link statistics). */
static gboolean add_link(WhNet *net, uint32_t a, uint32_t b, LinkSpec l, WhLinkTier tier,
                         GError **error)
{
  uint32_t first = wh_net_build_port_count(net);
  if (!wh_net_add_link(net, a, b, l.rate, l.delay, error))
    return FALSE;
  wh_net_set_link_tier(net, first, tier);
  return TRUE;
}

/* ---- dumbbell: hosts 0..N-1 on the left switch, N..2N-1 on the right ---- */

static const WhParamSpec dumbbell_params[] = {
    {"Pairs", WH_PARAM_INT, "4", "hosts on each side", WH_CHECK_MIN | WH_CHECK_MAX, 1, 65536},
    {"BottleneckRate", WH_PARAM_RATE, "100Gbps", "rate of the link between the two switches",
     WH_CHECK_POSITIVE},
    {NULL},
};
static const WhTypeInfo dumbbell_type = {"wh::Dumbbell", "topology",
                                         "two switches joined by one bottleneck link; hosts "
                                         "0..N-1 left, N..2N-1 right",
                                         dumbbell_params};

static gboolean dumbbell_build(WhNet *net, const WhConfig *cfg, GError **error)
{
  uint32_t n = (uint32_t)wh_config_int(cfg, "wh::Dumbbell", "Pairs");
  LinkSpec l = default_link(cfg);
  uint32_t host0 = 0;
  for (uint32_t i = 0; i < 2 * n; i++) {
    uint32_t id = wh_net_add_host(net);
    if (i == 0)
      host0 = id;
  }
  uint32_t left = wh_net_add_switch(net), right = wh_net_add_switch(net);
  for (uint32_t i = 0; i < n; i++) {
    BAIL_IF(add_link(net, host0 + i, left, l, WH_TIER_HOST, error));
    BAIL_IF(add_link(net, host0 + n + i, right, l, WH_TIER_HOST, error));
  }
  LinkSpec mid = {wh_config_rate(cfg, "wh::Dumbbell", "BottleneckRate"), l.delay};
  return add_link(net, left, right, mid, WH_TIER_LINK, error);
}

/* ---- star: hosts 0..N-1 on one switch ---- */

static const WhParamSpec star_params[] = {
    {"Hosts", WH_PARAM_INT, "16", "hosts on the switch", WH_CHECK_MIN | WH_CHECK_MAX, 2, 65536},
    {NULL},
};
static const WhTypeInfo star_type = {"wh::Star", "topology", "hosts 0..N-1 on one switch",
                                     star_params};

static gboolean star_build(WhNet *net, const WhConfig *cfg, GError **error)
{
  uint32_t n = (uint32_t)wh_config_int(cfg, "wh::Star", "Hosts");
  LinkSpec l = default_link(cfg);
  uint32_t first = 0;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t h = wh_net_add_host(net);
    if (i == 0)
      first = h;
  }
  uint32_t sw = wh_net_add_switch(net);
  for (uint32_t i = 0; i < n; i++)
    BAIL_IF(add_link(net, first + i, sw, l, WH_TIER_HOST, error));
  return TRUE;
}

/* ---- k-ary fat-tree: host id = (pod * k/2 + edge) * (k/2 * O) + slot ---- */

static const WhParamSpec fat_tree_params[] = {
    {"K", WH_PARAM_INT, "4", "switch radix k (even): k pods, (k/2)^2 cores",
     WH_CHECK_MIN | WH_CHECK_MAX, 2, 128},
    {"Oversubscription", WH_PARAM_INT, "1", "hosts per edge switch = O * k/2",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 64},
    {NULL},
};
static const WhTypeInfo fat_tree_type = {"wh::FatTree", "topology",
                                         "3-tier k-ary fat-tree (Al-Fares wiring): k^3/4 * O "
                                         "hosts",
                                         fat_tree_params};

static gboolean fat_tree_build(WhNet *net, const WhConfig *cfg, GError **error)
{
  int64_t k = wh_config_int(cfg, "wh::FatTree", "K");
  uint32_t o = (uint32_t)wh_config_int(cfg, "wh::FatTree", "Oversubscription");
  if (k % 2 != 0) {
    const char *o = wh_config_origin(cfg, "wh::FatTree", "K");
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                "%s%swh::FatTree::K = %" G_GINT64_FORMAT ": must be even", o ? o : "",
                o ? ": " : "", k);
    return FALSE;
  }
  uint32_t h = (uint32_t)k / 2, pods = (uint32_t)k;
  uint32_t per_edge = h * o;
  LinkSpec l = default_link(cfg);
  uint32_t n_hosts = pods * h * per_edge;
  uint32_t host0 = 0;
  for (uint32_t i = 0; i < n_hosts; i++) {
    uint32_t id = wh_net_add_host(net);
    if (i == 0)
      host0 = id;
  }
  uint32_t *edge = g_new(uint32_t, pods * h), *agg = g_new(uint32_t, pods * h);
  uint32_t *core = g_new(uint32_t, h * h);
  for (uint32_t i = 0; i < pods * h; i++)
    edge[i] = wh_net_add_switch(net);
  for (uint32_t i = 0; i < pods * h; i++)
    agg[i] = wh_net_add_switch(net);
  for (uint32_t i = 0; i < h * h; i++)
    core[i] = wh_net_add_switch(net);
  gboolean ok = TRUE;
  for (uint32_t e = 0; e < pods * h && ok; e++)
    for (uint32_t s = 0; s < per_edge && ok; s++)
      ok = add_link(net, host0 + e * per_edge + s, edge[e], l, WH_TIER_EDGE, error);
  for (uint32_t p = 0; p < pods && ok; p++)
    for (uint32_t e = 0; e < h && ok; e++)
      for (uint32_t a = 0; a < h && ok; a++)
        ok = add_link(net, edge[p * h + e], agg[p * h + a], l, WH_TIER_AGGREGATION, error);
  for (uint32_t p = 0; p < pods && ok; p++)
    for (uint32_t a = 0; a < h && ok; a++)
      for (uint32_t m = 0; m < h && ok; m++)
        ok = add_link(net, agg[p * h + a], core[a * h + m], l, WH_TIER_CORE, error);
  g_free(edge);
  g_free(agg);
  g_free(core);
  return ok;
}

/* ---- rail-optimized: host id = server * G + gpu; rail switch r serves gpu r ---- */

static const WhParamSpec rail_params[] = {
    {"Servers", WH_PARAM_INT, "4", "servers", WH_CHECK_MIN | WH_CHECK_MAX, 1, 65536},
    {"GpusPerServer", WH_PARAM_INT, "8", "GPUs (NICs) per server = rails",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 64},
    {"Spines", WH_PARAM_INT, "4", "spine switches joining the rails", WH_CHECK_MIN | WH_CHECK_MAX,
     1, 4096},
    {NULL},
};
static const WhTypeInfo rail_type = {"wh::RailFatTree", "topology",
                                     "rail-optimized 2-tier fat-tree: GPU i of every server on "
                                     "rail switch i, rails joined by spines",
                                     rail_params};

static gboolean rail_build(WhNet *net, const WhConfig *cfg, GError **error)
{
  uint32_t s = (uint32_t)wh_config_int(cfg, "wh::RailFatTree", "Servers");
  uint32_t g = (uint32_t)wh_config_int(cfg, "wh::RailFatTree", "GpusPerServer");
  uint32_t sp = (uint32_t)wh_config_int(cfg, "wh::RailFatTree", "Spines");
  LinkSpec l = default_link(cfg);
  uint32_t host0 = 0;
  for (uint32_t i = 0; i < s * g; i++) {
    uint32_t id = wh_net_add_host(net);
    if (i == 0)
      host0 = id;
  }
  uint32_t rail0 = 0, spine0 = 0;
  for (uint32_t r = 0; r < g; r++) {
    uint32_t id = wh_net_add_switch(net);
    if (r == 0)
      rail0 = id;
  }
  for (uint32_t p = 0; p < sp; p++) {
    uint32_t id = wh_net_add_switch(net);
    if (p == 0)
      spine0 = id;
  }
  for (uint32_t srv = 0; srv < s; srv++)
    for (uint32_t r = 0; r < g; r++)
      BAIL_IF(add_link(net, host0 + srv * g + r, rail0 + r, l, WH_TIER_EDGE, error));
  for (uint32_t r = 0; r < g; r++)
    for (uint32_t p = 0; p < sp; p++)
      BAIL_IF(add_link(net, rail0 + r, spine0 + p, l, WH_TIER_AGGREGATION, error));
  return TRUE;
}

/* ---- sizes, from the parameters alone ---- */

static gboolean dumbbell_size(const WhConfig *cfg, WhNetSize *out, GError **error)
{
  (void)error;
  uint64_t n = (uint64_t)wh_config_int(cfg, "wh::Dumbbell", "Pairs");
  *out = (WhNetSize){.hosts = 2 * n, .switches = 2, .links = 2 * n + 1, .leaves = 2};
  return TRUE;
}

static gboolean star_size(const WhConfig *cfg, WhNetSize *out, GError **error)
{
  (void)error;
  uint64_t n = (uint64_t)wh_config_int(cfg, "wh::Star", "Hosts");
  *out = (WhNetSize){.hosts = n, .switches = 1, .links = n, .leaves = 1};
  return TRUE;
}

static gboolean fat_tree_size(const WhConfig *cfg, WhNetSize *out, GError **error)
{
  (void)error;
  uint64_t k = (uint64_t)wh_config_int(cfg, "wh::FatTree", "K"), h = k / 2;
  uint64_t o = (uint64_t)wh_config_int(cfg, "wh::FatTree", "Oversubscription");
  uint64_t hosts = k * h * h * o;
  *out = (WhNetSize){.hosts = hosts,
                     .switches = 2 * k * h + h * h,
                     .links = hosts + 2 * k * h * h,
                     .leaves = k * h};
  return TRUE;
}

static gboolean rail_size(const WhConfig *cfg, WhNetSize *out, GError **error)
{
  (void)error;
  uint64_t s = (uint64_t)wh_config_int(cfg, "wh::RailFatTree", "Servers");
  uint64_t g = (uint64_t)wh_config_int(cfg, "wh::RailFatTree", "GpusPerServer");
  uint64_t sp = (uint64_t)wh_config_int(cfg, "wh::RailFatTree", "Spines");
  *out = (WhNetSize){.hosts = s * g, .switches = g + sp, .links = s * g + g * sp, .leaves = g};
  return TRUE;
}

/* An upper estimate: every switch port used; Frontier nodes add a switch per GCD. */
static gboolean dragonfly_size(const WhConfig *cfg, WhNetSize *out, GError **error)
{
  WhDragonflyShape sh;
  if (!wh_dragonfly_shape(cfg, &sh, error))
    return FALSE;
  uint64_t per_switch = (uint64_t)sh.p + sh.a + sh.h, extra = sh.frontier ? sh.hosts : 0;
  *out = (WhNetSize){.hosts = sh.hosts,
                     .switches = sh.switches + extra,
                     .links = (uint64_t)sh.switches * per_switch + 8 * extra,
                     .leaves = sh.frontier ? extra : sh.switches};
  return TRUE;
}

/* ---- registry ---- */

static const WhTopologyClass dumbbell = {&dumbbell_type, dumbbell_build, dumbbell_size};
static const WhTopologyClass star = {&star_type, star_build, star_size};
static const WhTopologyClass fat_tree = {&fat_tree_type, fat_tree_build, fat_tree_size};
static const WhTopologyClass rail = {&rail_type, rail_build, rail_size};

static const WhTopologyClass dragonfly = {&wh_dragonfly_type, wh_dragonfly_build, dragonfly_size};

static const WhTopologyClass *const classes[] = {&dumbbell, &star,      &fat_tree,
                                                 &rail,     &dragonfly, NULL};

const WhTopologyClass *const *wh_topology_classes(void)
{
  return classes;
}

const WhTopologyClass *wh_topology_lookup(const char *name)
{
  for (size_t i = 0; classes[i]; i++) {
    if (g_strcmp0(name, classes[i]->type->name) == 0)
      return classes[i];
  }
  return NULL;
}
