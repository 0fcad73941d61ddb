/* The steady-state monitor for ns-3 (C++ inside the shim, used by ns3::WhCScheduler
 * with Class=wormhole). It changes nothing in the model: it listens to the PhyTxBegin
 * and PhyRxEnd trace sources of every point-to-point device (found through a Config
 * path when the first event is popped), identifies flows by their 5-tuple as ns-3's
 * flow monitor does, and feeds the engine-neutral detector of Wormhole I
 * (steady-detector.h): a flow's ports are the devices that transmitted its packets,
 * either way; its delivered payload is the highest sequence number that reached the
 * receiving host (TCP; UDP: every payload byte); its sample each period tau is the
 * sending socket's congestion window over its smoothed RTT (found in the sender's
 * TcpL4Protocol SocketList when the SYN leaves, read through its CongestionWindow and
 * RTT trace sources), or that payload's rate. Ticks ride on the scheduler's pops (no event of its
 * own, so the simulation's events and results stay identical). ns-3 events carry no packet or port,
 * only a node id: events are counted per node exactly and shared among the node's devices in
 * proportion to the bytes each transmitted, which is the estimate of "events in steady intervals".
 * Cost: per packet a copy of its first 64 header bytes to the stack, one hash probe and a scan of
 * the flow's ports (a path's length); per pop one counter; per tick O(active flows + nodes +
 * devices). */
#ifndef WH_NS3_MONITOR_H
#define WH_NS3_MONITOR_H

#include <glib.h> /* first, outside extern "C" */
#include <ns3/nstime.h>

#include <string>

extern "C" {
#include "event.h"
}

struct WhNs3MonitorParams {
  double theta;
  uint32_t window;
  ns3::Time period;
  ns3::Time idle_window; /* 0: no idle rule */
  bool cwnd_rtt;         /* sample cwnd / smoothed RTT (else the delivered rate) */
};

/* The Quantity values: "cwnd-rtt", "delivered", NULL. */
extern const char *const wh_ns3_monitor_quantities[];

struct WhNs3Monitor;

/* (transfer full) `report`: where wh_ns3_monitor_free writes the JSON ("" none). */
WhNs3Monitor *wh_ns3_monitor_new(const WhNs3MonitorParams *p, const std::string &report);
/* For a simulation the monitor may not watch (ns-3 was already used in this process,
 * `why`): says so on stderr and writes, to `report` ("" none), a report with that
 * status and no numbers. */
void wh_ns3_monitor_refused(const std::string &report, const std::string &why);
/* Writes the report (if it has a path and was not taken) and frees. */
void wh_ns3_monitor_free(WhNs3Monitor *m);
/* Before the scheduler pops `next` (nullable): attaches on the first call, counts
 * the event and takes the sampling ticks up to its time while the simulation runs. */
void wh_ns3_monitor_before_pop(WhNs3Monitor *m, const WhEvent *next);

#endif
