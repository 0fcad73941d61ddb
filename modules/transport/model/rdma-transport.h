/* The RDMA-style transport: owns every flow, the per-host send schedulers and the
 * sender/receiver logic (segmentation, per-packet ACK, go-back-N on NACK or RTO,
 * CNP generation) and drives a congestion-control class. Each host's NIC pulls its
 * next data packet from a small heap of that host's sendable flows keyed by the time
 * each may next send (its pacing), ties in arrival order: O(log F) per packet for F
 * flows on the host, no scan. A data packet that reaches its receiver is turned into
 * the ACK in place, so the common path allocates nothing. */
#ifndef WH_RDMA_TRANSPORT_H
#define WH_RDMA_TRANSPORT_H

#include <glib.h>
#include "congestion-control.h"
#include "flow.h"
#include "network.h"
#include "registry.h"

#define WH_TRANSPORT_ERROR (wh_transport_error_quark())
GQuark wh_transport_error_quark(void);

typedef enum {
  WH_TRANSPORT_ERROR_FLOW,
} WhTransportError;

typedef struct {
  uint32_t mtu;          /* payload bytes per data packet */
  uint32_t header_bytes; /* per data packet on the wire */
  uint32_t ctrl_bytes;   /* ACK, NACK, CNP frame size */
  uint8_t prio;
  WhTime cnp_interval;
  WhTime nack_interval;
  WhTime rto;
  uint64_t window;            /* max bytes in flight, 0 = unlimited (a CC window overrides) */
  uint32_t ack_every;         /* ACK every N in-order data packets */
  WhTime delayed_ack_timeout; /* with ack_every > 1: ACK a partial batch after this */
} WhTransportParams;

typedef struct {
  uint64_t data_packets_sent;
  uint64_t data_bytes_sent; /* payload, with retransmissions */
  uint64_t data_bytes_arrived;
  uint64_t retx_bytes;
  uint64_t advanced_bytes; /* moved forward by wh_transport_advance, not simulated */
  uint64_t acks, nacks, cnps, timeouts;
  uint64_t reroutes;     /* data path changes (adaptive routing) */
  uint64_t out_of_order; /* data packets that arrived beyond the next expected byte */
  uint32_t flows_finished;
  uint32_t flows_acked;
} WhTransportCounters;

#define WH_FLOW_CHUNK 1024u

typedef struct {
  WhFlow **heap;
  uint32_t n, cap;
} WhHostSched;

typedef void (*WhFlowDoneFn)(void *data, WhFlow *flow);
/* A flow's data path changed (adaptive routing); f->fwd is the new path. */
typedef void (*WhFlowRerouteFn)(void *data, WhFlow *flow, const uint32_t *old_path,
                                uint16_t old_hops);

struct WhTransport {
  WhSim *sim;
  WhNet *net;
  WhTransportParams p;
  const WhCcClass *cc;
  void *cc_params;
  WhFlow **chunks; /* flows in chunks of WH_FLOW_CHUNK: pointers stay valid */
  uint32_t n_flows, n_chunks;
  WhHostSched *hosts;
  uint64_t heap_seq;
  WhTransportCounters c;
  WhFlowDoneFn on_done; /* nullable: called when a flow's last byte arrives */
  void *on_done_data;
  WhFlowRerouteFn on_reroute; /* nullable: called when a flow's data path changes */
  void *on_reroute_data;
};

/* Reads wh::RdmaFlow parameters. */
void wh_transport_params_from_config(WhTransportParams *p, const WhConfig *cfg);

/* (transfer full); `sim` and `net` (transfer none) must outlive it; `cc_params`
 * (transfer full) comes from cc->configure. Installs itself as `net`'s transport. */
WhTransport *wh_transport_new(WhSim *sim, WhNet *net, const WhTransportParams *params,
                              const WhCcClass *cc, void *cc_params);
void wh_transport_free(WhTransport *tp);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhTransport, wh_transport_free)

/* Adds a flow starting at `start`; returns its id (flows are numbered 0.. in order
 * of addition) or -1 with an error (bad host, zero size, src == dst). */
int64_t wh_transport_add_flow(WhTransport *tp, uint32_t src, uint32_t dst, uint64_t size,
                              WhTime start, GError **error);

static inline WhFlow *wh_transport_flow(WhTransport *tp, uint32_t id)
{
  return &tp->chunks[id / WH_FLOW_CHUNK][id % WH_FLOW_CHUNK];
}

static inline WhTime wh_flow_now(const WhFlow *f)
{
  return f->tp->sim->now;
}

#endif
