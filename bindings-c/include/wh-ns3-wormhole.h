/* wh-ns3-wormhole: Wormhole's steady-state monitor on stock ns-3, observe only. The
 * monitor rides on ns3::WhCScheduler with Class=wormhole (the 4-ary heap plus the
 * monitor): an unchanged ns-3 program selects it by name (SchedulerType) with
 * libwh-ns3-wormhole.so loaded and gets wormhole-ns3.json when its simulation is
 * destroyed; a program on this C API (wh-ns3.h) selects it with
 * wh_ns3_wormhole_observe and reads the report and the flows here. It measures what
 * a fast-forward could skip; nothing is skipped and the simulation's results and event
 * count are those of a run without it. Per process, like wh-ns3.h. */
#ifndef WH_NS3_WORMHOLE_H
#define WH_NS3_WORMHOLE_H

#include <stdint.h>

#include "wh-ns3.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  double theta;            /* [0, 1): steady when a flow's rate spread is below this */
  uint32_t window;         /* l >= 2 samples */
  uint64_t period_ps;      /* tau > 0 */
  uint64_t idle_window_ps; /* the idle rule's window; 0: no idle rule */
  int cwnd_rtt;            /* 1: sample a TCP flow's cwnd / smoothed RTT; 0: its delivered rate */
} WhNs3WormholeParams;

/* Runs the simulation's event list on ns3::WhCScheduler with Class=wormhole and these
 * parameters. After wh_ns3_sim_new, before wh_ns3_run and before any other scheduler
 * choice: WH_NS3_ESTATE otherwise; WH_NS3_EUNUSED when ns-3 was already used in this
 * process (as wh_ns3_sim_new tells); WH_NS3_EINVAL for bad parameters. */
int wh_ns3_wormhole_observe(const WhNs3WormholeParams *p);

/* After wh_ns3_run, before wh_ns3_sim_free: closes the monitor's open intervals and
 * returns the report (transfer full, g_free). WH_NS3_ESTATE without a monitor or
 * before the run. */
int wh_ns3_wormhole_report(char **json);

typedef struct {
  uint32_t src_ip, dst_ip; /* host byte order */
  uint16_t sport, dport;
  uint8_t proto;      /* 6 TCP, 17 UDP */
  uint64_t delivered; /* payload bytes that reached the receiving host, once each */
  uint32_t n_ports;   /* devices its packets crossed, either way */
  int ended;          /* TCP: the FIN reached the receiver after all the data */
} WhNs3WormholeFlow;

/* The flows seen so far, in the order of their first packet (while the monitor
 * exists: until wh_ns3_sim_free). */
uint32_t wh_ns3_wormhole_n_flows(void);
int wh_ns3_wormhole_flow(uint32_t i, WhNs3WormholeFlow *out);

#ifdef __cplusplus
}
#endif

#endif
