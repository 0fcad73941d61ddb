/* The dragonfly topology (wh::Dragonfly) and its router: groups of switches joined
 * all-to-all, global links between every pair of groups, endpoints that are hosts or
 * Frontier-like nodes (8 GCD hosts on an Infinity Fabric, 4 NICs). Hosts are numbered
 * by switch: host = (g a + s) p + e for plain hosts; with Node=frontier, node
 * n = (g a + s) (p / 4) + k holds GCD hosts 8 n .. 8 n + 7, and GCDs 2q, 2q+1 share
 * package q and its NIC q. Cold path, except wh_dragonfly_route (O(route length)). */
#ifndef WH_DRAGONFLY_H
#define WH_DRAGONFLY_H

#include <glib.h>
#include "network.h"
#include "registry.h"

typedef struct WhDragonfly WhDragonfly;

/* The Frontier-like compute node (HPE Cray EX235a): 8 GCD hosts (4 MI250X packages
 * of 2 GCDs) and 4 NICs, one per package. Every count of GCDs per node in the engine
 * and the Piper planner is this one; compile-time, as the node's wiring tables are
 * sized by it. */
#define WH_DRAGONFLY_NODE_GCDS 8
#define WH_DRAGONFLY_NODE_NICS 4

typedef enum {
  WH_DRAGONFLY_MINIMAL,
  WH_DRAGONFLY_VALIANT,  /* every inter-group flow through a random intermediate group */
  WH_DRAGONFLY_ADAPTIVE, /* per flowlet, UGAL: minimal or one Valiant candidate */
} WhDragonflyRouting;

typedef struct {
  uint32_t groups, a, p, h;  /* groups, switches per group, endpoint and global ports */
  uint32_t links_per_pair;   /* global links between every pair of groups (L) */
  gboolean frontier;         /* endpoints are Frontier nodes */
  gboolean virtual_channels; /* data moves to the next priority after a global link */
  uint32_t nodes_per_switch; /* frontier: p / WH_DRAGONFLY_NODE_NICS */
  uint32_t gcds_per_node;    /* frontier: WH_DRAGONFLY_NODE_GCDS hosts per node; else 0 */
  uint32_t hosts, switches;  /* hosts (GCDs with frontier nodes); dragonfly switches */
} WhDragonflyShape;

extern const WhTypeInfo wh_dragonfly_type;

/* The shape the parameters describe (checked: ports fit the radix, global links fit). */
gboolean wh_dragonfly_shape(const WhConfig *cfg, WhDragonflyShape *shape, GError **error);
/* Adds the dragonfly to `net` and installs its router (the network owns it). */
gboolean wh_dragonfly_build(WhNet *net, const WhConfig *cfg, GError **error);
/* (transfer none) (nullable): the dragonfly behind a network's router. */
const WhDragonfly *wh_dragonfly_of(const WhNet *net);
const WhDragonflyShape *wh_dragonfly_get_shape(const WhDragonfly *df);

/* A route as wh_net_route gives it (egress ports, sender's first): minimal when
 * via_group is UINT32_MAX, else Valiant through group via_group (0 if via_group is
 * the source's or destination's group, out of range, or out_cap is too small). */
uint32_t wh_dragonfly_route(const WhNet *net, const WhDragonfly *df, uint32_t src, uint32_t dst,
                            uint64_t tuple_hash, uint32_t via_group, uint32_t *out,
                            uint32_t out_cap);
uint32_t wh_dragonfly_host_group(const WhDragonfly *df, uint32_t host);
/* Adaptive routing: flows whose path is now the minimal one over group gs's k-th link
 * to group gd (0 with other routing modes or out of range). */
uint32_t wh_dragonfly_link_flows(const WhDragonfly *df, uint32_t gs, uint32_t gd, uint32_t k);
/* Node id of switch s of group g. */
uint32_t wh_dragonfly_switch_node(const WhDragonfly *df, uint32_t group, uint32_t s);

#endif
