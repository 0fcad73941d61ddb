/* Presets of real machines: a name ("frontier") standing for the topology generator
 * and the parameter values that model one machine, as (key, value) settings. The
 * scenario loader, the Piper planner and the run all read a machine from here. A
 * preset may set parameters of any registered type, modules above topology included
 * (wh::Workload::MessageAlpha), by name through the configuration: this module
 * includes no header of theirs, and the registry checks each key and value when the
 * settings are applied to a WhConfig. Cold path: a table lookup, O(settings). */
#ifndef WH_TOPOLOGY_PRESET_H
#define WH_TOPOLOGY_PRESET_H

#include <glib.h>
#include <stdint.h>
#include "registry.h"

/* One configuration setting: "Type::Param" and its value, as a scenario's <set>. */
typedef struct {
  const char *key;
  const char *value;
} WhTopologySetting;

typedef struct {
  const char *name;     /* "frontier" */
  const char *topology; /* the generator the preset builds: "wh::Dragonfly" */
  /* The machine's parameters, in order (a later one wins over an earlier one). */
  const WhTopologySetting *settings;
  size_t n_settings;
  /* The size of the machine: a scenario's groups="N" sets topology::groups_param to
   * N, from groups_min to groups_max (groups_default when not given); groups_limit
   * says why the range ends where it does. */
  const char *groups_param; /* "Groups" */
  uint32_t groups_min, groups_max, groups_default;
  const char *groups_limit;
  /* Settings that go with the groups (the machine's routing: Routing=adaptive). A
   * scenario's sets read: the head, the groups, the settings, then its own. */
  const WhTopologySetting *head;
  size_t n_head;
} WhTopologyPreset;

/* (transfer none) (nullable): the preset called `name` (NULL: none). */
const WhTopologyPreset *wh_topology_preset_lookup(const char *name);
/* (transfer none): the presets' names for messages, comma-separated ("frontier"). */
const char *wh_topology_preset_names(void);
/* Sets the preset's settings (not the groups nor the head: a model of the machine
 * needs its rates, delays and message cost, not its size) on `cfg` in order, with
 * origin "preset NAME". FALSE with `error` for an unknown preset
 * (WH_CONFIG_ERROR_BAD_VALUE, the message names the known ones) or a setting the
 * registry refuses (a type not registered: wh_registry_init registers them all). */
gboolean wh_topology_preset_apply(WhConfig *cfg, const char *name, GError **error);

#endif
