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
#include "bulk.h"
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
  uint32_t max_retries;       /* go-back-N rewinds in a row without progress, then give
                               * up; 0: never */
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

/* One flow waiting at its host's NIC, with its key: (at, seq) = (next_avail, order of entry). */
typedef struct {
  WhTime at;
  uint64_t seq;
  WhFlow *flow;
} WhHostEntry;

typedef struct {
  WhHostEntry *heap;
  uint32_t n, cap;
} WhHostSched;

/* What observers hear of flows (each callback nullable). Observers must not change
 * the model. Several may be attached; they are called in the order they were added. */
typedef struct {
  /* The flow starts: it is active and may send (before it asks its NIC to). */
  void (*on_activate)(void *data, WhFlow *flow);
  /* The flow's first data packet is about to go out (before it is built). */
  void (*on_start)(void *data, WhFlow *flow);
  /* The CC changed the flow's rate or window (f->rate, f->cwnd hold the new value). */
  void (*on_rate)(void *data, WhFlow *flow);
  /* An ACK reached the sender (before the CC sees it). */
  void (*on_ack)(void *data, WhFlow *flow, const WhPacket *ack);
  /* The flow's last byte arrived at the receiver (f->finish is set). */
  void (*on_done)(void *data, WhFlow *flow);
  /* Every byte is acknowledged: the sender is done and the flow leaves the network. */
  void (*on_acked)(void *data, WhFlow *flow);
  /* The flow's data path changed (adaptive routing); f->fwd is the new path. */
  void (*on_reroute)(void *data, WhFlow *flow, const uint32_t *old_path, uint16_t old_hops);
} WhTransportObserver;

/* WhTransportObserver's members, all callbacks. */
#define WH_TRANSPORT_CALLBACKS 7
G_STATIC_ASSERT(sizeof(WhTransportObserver) == WH_TRANSPORT_CALLBACKS * sizeof(void (*)(void)));

typedef struct {
  const WhTransportObserver *obs;
  void *data;
} WhTransportObserverSlot;

struct WhTransport {
  WhSim *sim;
  WhNet *net;
  WhTransportParams p;
  const WhCcClass *cc;
  void *cc_params;
  WhFlow **chunks;    /* flows in chunks of WH_FLOW_CHUNK: pointers stay valid */
  WhBulk *chunk_mem;  /* the chunks' memory and the route store's */
  WhWordStore routes; /* the flows' routes, on chunk_mem */
  uint32_t n_flows, n_chunks;
  WhHostSched *hosts;
  uint64_t heap_seq;
  WhTransportCounters c;
  WhTransportObserverSlot *observers;
  uint32_t n_observers;
  /* per callback (WhTransportObserver's members in order): the observers that have it */
  WhTransportObserverSlot *with_cb[WH_TRANSPORT_CALLBACKS];
  uint32_t n_with_cb[WH_TRANSPORT_CALLBACKS];
  int64_t gave_up; /* -1, or the flow that hit max_retries (the simulator was stopped) */
};

/* Reads wh::RdmaFlow parameters. */
void wh_transport_params_from_config(WhTransportParams *p, const WhConfig *cfg);

/* (transfer full); `sim` and `net` (transfer none) must outlive it; `cc_params`
 * (transfer full) comes from cc->configure. Installs itself as `net`'s transport. */
WhTransport *wh_transport_new(WhSim *sim, WhNet *net, const WhTransportParams *params,
                              const WhCcClass *cc, void *cc_params);
void wh_transport_free(WhTransport *tp);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhTransport, wh_transport_free)

/* Adds an observer after those already attached (transfer none: both must outlive
 * the transport or be removed); removes it by the same pair. Cold path. */
void wh_transport_add_observer(WhTransport *tp, const WhTransportObserver *obs, void *data);
void wh_transport_remove_observer(WhTransport *tp, const WhTransportObserver *obs, void *data);

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
