/* Per-flow ECMP routing for ns-3 nodes (C++ side of the shim); see wh-ns3-ecmp.cc. */
#ifndef WH_NS3_ECMP_H
#define WH_NS3_ECMP_H

#include <ns3/node-container.h>

#include <cstdint>

/* Installs per-flow ECMP on every node (after addresses are assigned): flows hash on
 * their 5-tuple with a per-node salt derived from `seed`. */
void wh_ns3_install_ecmp(ns3::NodeContainer &nodes, uint64_t seed);

/* Pins the paths (node ids, source first) of the flow whose receiver listens on
 * `port`: data to the port follows `fwd`, packets from it follow `rev`. */
void wh_ns3_ecmp_pin(uint16_t port, const uint32_t *fwd, uint32_t nf, const uint32_t *rev,
                     uint32_t nr);

#endif
