/* The machine presets (topology-preset.h): today the Frontier-like machine. Each is a
 * static table; lookup is a scan of the few presets by name, and applying one costs a
 * configuration set per setting. */
#include "topology-preset.h"

#include <string.h>

/* The Frontier-like machine (see docs/modules/topology.md): HPE Cray EX235a nodes on a
 * Slingshot-11 dragonfly. A scenario applies these as its lowest-priority settings:
 * its own <set>, <param> and --set win. */
static const WhTopologySetting frontier_settings[] = {
    {"wh::Dragonfly::SwitchesPerGroup", "32"},
    {"wh::Dragonfly::EndpointsPerSwitch", "16"},
    {"wh::Dragonfly::GlobalPortsPerSwitch", "16"},
    {"wh::Dragonfly::GlobalLinksPerPair", "4"},
    {"wh::Dragonfly::SpareGlobalPorts", "idle"},
    {"wh::Dragonfly::Radix", "64"},
    {"wh::Dragonfly::Node", "frontier"},
    {"wh::Dragonfly::EndpointRate", "200Gbps"},
    {"wh::Dragonfly::LocalRate", "200Gbps"},
    {"wh::Dragonfly::GlobalRate", "200Gbps"},
    {"wh::Dragonfly::SwitchDelay", "350ns"},
    {"wh::Dragonfly::EndpointDelay", "10ns"},
    {"wh::Dragonfly::LocalDelay", "10ns"},
    {"wh::Dragonfly::GlobalDelay", "100ns"},
    {"wh::Dragonfly::UgalBias", "32KB"},
    /* calibrated on published MI250X / Slingshot-11 measurements (docs/modules/topology.md):
     * per-pair Infinity Fabric bandwidth, and one-way small-message latency inside a
     * node (0.50 us) and between two nodes on one switch (2.50 us) */
    {"wh::Dragonfly::FabricEfficiency", "0.76"},
    {"wh::Dragonfly::NicDelay", "860ns"},
    {"wh::Dragonfly::HostDelay", "0ns"},
    /* parameters of the workload module (above this one), set by name */
    {"wh::Workload::MessageAlpha", "200ns"},
    /* the collective model (validation/frontier/report.md): an all-to-all that names
     * no algorithm, and the model presets' EP all-to-alls, run as RCCL's point-to-point
     * batches, 13 pairwise rounds a batch (fitted); within 15% of the measured RCCL all-to-all
     * goodput on 16 to 128 MI250X GCDs of Slingshot-11 (De Sensi et al., SC24) */
    {"wh::Workload::AllToAll", "rccl"},
    {"wh::Workload::RcclWindow", "13"},
    {"wh::Workload::RcclSchedule", "batch"},
    {"wh::ModelPreset::AllToAll", "rccl"},
    {"wh::Switch::BufferSize", "32MB"},
    {"wh::Switch::PfcXoff", "320KB"},
    {"wh::Switch::PfcXon", "288KB"},
    {"wh::RdmaFlow::Mtu", "4096B"},
    /* far above any queueing delay of this lossless fabric, as RDMA NICs are set: the
     * default 2 ms expired under the queues in front of a few global links and
     * retransmitted data that was only waiting (docs/modules/topology.md) */
    {"wh::RdmaFlow::Rto", "1s"},
};

/* Slingshot routes adaptively (with fewer than 3 groups: among the minimal paths and
 * detours inside a group, no Valiant path) */
static const WhTopologySetting frontier_head[] = {
    {"wh::Dragonfly::Routing", "adaptive"},
};

static const WhTopologyPreset presets[] = {
    {
        .name = "frontier",
        .topology = "wh::Dragonfly",
        .settings = frontier_settings,
        .n_settings = G_N_ELEMENTS(frontier_settings),
        .groups_param = "Groups",
        .groups_min = 1,
        .groups_max = 77,
        .groups_default = 1,
        .groups_limit = "Frontier launched with 74 groups of 128 nodes; the current user guide "
                        "counts 77 cabinets",
        .head = frontier_head,
        .n_head = G_N_ELEMENTS(frontier_head),
    },
};

const WhTopologyPreset *wh_topology_preset_lookup(const char *name)
{
  for (size_t i = 0; name && i < G_N_ELEMENTS(presets); i++)
    if (strcmp(presets[i].name, name) == 0)
      return &presets[i];
  return NULL;
}

const char *wh_topology_preset_names(void)
{
  static gsize done = 0;
  static char *names;
  if (g_once_init_enter(&done)) {
    GString *s = g_string_new(NULL);
    for (size_t i = 0; i < G_N_ELEMENTS(presets); i++)
      g_string_append_printf(s, "%s%s", i ? ", " : "", presets[i].name);
    names = g_string_free(s, FALSE);
    g_once_init_leave(&done, 1);
  }
  return names;
}

gboolean wh_topology_preset_apply(WhConfig *cfg, const char *name, GError **error)
{
  const WhTopologyPreset *p = wh_topology_preset_lookup(name);
  if (p == NULL) {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                "unknown preset \"%s\" (known: %s)", name ? name : "", wh_topology_preset_names());
    return FALSE;
  }
  g_autofree char *origin = g_strdup_printf("preset %s", p->name);
  for (size_t i = 0; i < p->n_settings; i++)
    if (!wh_config_set(cfg, p->settings[i].key, p->settings[i].value, origin, error))
      return FALSE;
  return TRUE;
}
