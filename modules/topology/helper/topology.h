/* Topology helpers: generators that add hosts, switches and links to a network under
 * construction. Each generator is a registered type with its own parameters
 * (wh::FatTree::K, ...); every link takes wh::Link::Rate and wh::Link::Delay unless
 * the generator says otherwise. Hosts are numbered 0.. in the order documented for
 * each generator. Cold path: runs once per simulation. */
#ifndef WH_TOPOLOGY_H
#define WH_TOPOLOGY_H

#include <glib.h>
#include "network.h"
#include "registry.h"

typedef struct {
  const WhTypeInfo *type;
  gboolean (*build)(WhNet *net, const WhConfig *cfg, GError **error);
  /* The size `build` would make, from the parameters alone, so a network too large
   * for memory is refused before anything is allocated. */
  gboolean (*size)(const WhConfig *cfg, WhNetSize *out, GError **error);
} WhTopologyClass;

/* (transfer none) (nullable) by type name ("wh::FatTree") */
const WhTopologyClass *wh_topology_lookup(const char *name);
const WhTopologyClass *const *wh_topology_classes(void);

#endif
