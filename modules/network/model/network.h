/* The network: hosts, switches and the directed ports between them, built once and
 * then run. A link is a pair of directed ports (one egress per end); each port owns
 * its egress queue disc, its transmitter state and the FIFO of packets in flight on
 * its link, and so owns at most two pending events (transmitter free, next arrival).
 * Switches are output-queued over a shared buffer, mark ECN at dequeue, and send PFC
 * pause/resume frames that cross the link like any frame when an ingress port's
 * buffered bytes for a priority cross XOFF/XON. Routing is per-flow ECMP: a route is
 * computed once per flow (hash of the 5-tuple with a per-switch salt over the
 * shortest-path next hops) and every packet of the flow carries a pointer to it.
 * Per packet per hop the cost is O(1): no allocation, no lookup, no scan. */
#ifndef WH_NETWORK_H
#define WH_NETWORK_H

#include <glib.h>
#include "packet.h"
#include "queue-disc.h"
#include "rng.h"
#include "simulator.h"

#define WH_NETWORK_ERROR (wh_network_error_quark())
GQuark wh_network_error_quark(void);

typedef enum {
  WH_NETWORK_ERROR_TOPOLOGY,
  WH_NETWORK_ERROR_ROUTE,
  WH_NETWORK_ERROR_BUFFER, /* the switch buffer cannot hold what its parameters ask */
} WhNetworkError;

typedef struct WhNet WhNet;

typedef struct {
  uint64_t buffer_bytes; /* per switch, shared by all its ports */
  WhTime switch_delay;   /* forwarding latency added at every switch */
  gboolean pfc;
  uint64_t pfc_xoff, pfc_xon; /* per ingress port and priority (static thresholds) */
  /* dynamic thresholds: PAUSE when an ingress port and priority holds more than
   * pfc_alpha x the switch's free shared buffer (what its ports' headroom leaves of
   * buffer_bytes), RESUME pfc_resume_offset below it; each port's headroom holds what
   * its link brings after a PAUSE: 2 x rate x delay + 3 frames of pfc_frame bytes + the
   * PAUSE frame */
  gboolean pfc_dynamic;
  double pfc_alpha;
  uint64_t pfc_resume_offset;
  uint64_t pfc_frame; /* the largest data frame (MTU + headers) */
  gboolean ecn;
  uint64_t kmin, kmax; /* at ecn_ref_rate; scaled by port rate when ecn_scale */
  double pmax;
  gboolean ecn_scale;
  uint64_t ecn_ref_rate;
  gboolean int_enabled; /* switches append INT records to data packets (HPCC) */
  uint64_t seed;
  /* deadlock watchdog: the run stops when no packet has crossed a link for this long
   * while packets are buffered in switches (0: off) */
  WhTime deadlock_timeout;
  /* perturbation ensemble member (wh::Link::DelayJitter): 0 off; i > 0 adds 0 or 1 ps
   * to each directed port's delay, from the stream seeded by (i, port id) */
  uint64_t delay_jitter;
} WhNetParams;

/* What the watchdog found. */
typedef struct {
  gboolean detected;
  WhTime at;               /* when it was detected */
  WhTime still_since;      /* last time a packet crossed a link (at most) */
  uint64_t buffered_bytes; /* in switch buffers */
  uint32_t switches;       /* switches holding packets */
  uint32_t paused_ports;   /* ports with a priority paused by PFC */
} WhNetDeadlock;

/* What the network needs from the transport layer above it. */
typedef struct {
  /* A packet reached its destination host; the callee owns it. */
  void (*deliver)(void *ctx, WhPacket *pkt);
  /* The NIC of `host` is free: return its next data packet, or NULL and set
   * *next_ready to when one will be ready (WH_TIME_MAX: none pending). Priorities
   * in `paused` are paused by PFC and must not be sent. */
  WhPacket *(*pull)(void *ctx, uint32_t host, uint8_t paused, WhTime *next_ready);
  /* When the next data packet of `host` will be ready (WH_TIME_MAX: none). */
  WhTime (*ready_at)(void *ctx, uint32_t host);
} WhNetTransport;

/* A topology's own router, replacing the shortest-path tables (for topologies whose
 * routes follow from their structure, e.g. the dragonfly's minimal paths). `route`
 * has the contract of wh_net_route. */
typedef struct {
  uint32_t (*route)(const WhNet *net, const void *data, uint32_t src, uint32_t dst,
                    uint64_t tuple_hash, uint32_t *out, uint32_t out_cap);
  void *data;
  GDestroyNotify free_data; /* nullable */
  /* Adaptive routing (nullable): for choice number `flowlet` of a flow, the path its
   * data should take (egress ports, the sender's NIC first; *nhops set); `current` is
   * the path it takes now (one this function returned; NULL at first). The array is
   * owned by the router and stays valid until the network is freed. The transport asks
   * when a flow first sends and then at most once per flowlet_gap (on ACKs, or after
   * an idle gap); it applies a different path only once everything the flow sent is
   * acknowledged, so a path change never reorders its packets. */
  const uint32_t *(*choose)(const WhNet *net, void *data, uint32_t src, uint32_t dst,
                            uint64_t tuple_hash, uint64_t flowlet, const uint32_t *current,
                            uint16_t *nhops);
  /* With choose (nullable): the flow is done with `path`, the last one choose gave it
   * (called once everything it sent is acknowledged), for a router that counts flows. */
  void (*release)(const WhNet *net, void *data, uint32_t src, uint32_t dst, const uint32_t *path);
  WhTime flowlet_gap;
  /* The rate a flow on `route` may send at (nullable: the rate of its first link):
   * for a host behind a faster internal port, its NIC's rate. */
  uint64_t (*line_rate)(const WhNet *net, const void *data, const uint32_t *route, uint32_t hops);
} WhNetRouter;

/* What a link is, for per-link statistics (links.csv, the per-tier summary). A topology
 * sets it with wh_net_set_link_tier; links it does not classify are WH_TIER_LINK. */
typedef enum {
  WH_TIER_LINK,        /* unclassified */
  WH_TIER_HOST,        /* host to its first switch (a Frontier GCD into its fabric) */
  WH_TIER_NIC,         /* a Frontier NIC to its dragonfly switch */
  WH_TIER_FABRIC,      /* Infinity Fabric between the GCDs of a Frontier node */
  WH_TIER_LOCAL,       /* dragonfly: between switches of one group */
  WH_TIER_GLOBAL,      /* dragonfly: between groups */
  WH_TIER_EDGE,        /* fat-tree: host to edge switch */
  WH_TIER_AGGREGATION, /* fat-tree: edge to aggregation (or rail to spine) */
  WH_TIER_CORE,        /* fat-tree: aggregation to core */
  WH_N_TIERS
} WhLinkTier;

/* The tier's name in outputs ("link", "host", "nic", "fabric", ...). */
const char *wh_net_tier_name(WhLinkTier tier);

/* Per directed port, counted always (a few adds per frame): the transmitter's side of
 * what crossed the link. What arrived over it (WhPort.frames and bytes) is counted on
 * the port's line that the arrival touches, the largest egress queue (qd.max_bytes) on
 * the queue disc's first line. */
typedef struct {
  WhTime busy;   /* transmitter busy time (every frame, PFC frames included) */
  WhTime paused; /* time with some priority paused by the peer (PFC), closed
                    (wh_net_port_paused_time adds the open pause) */
} WhPortStats;

typedef struct {
  uint64_t link_traversals; /* data/ACK/NACK/CNP frames crossing a link */
  uint64_t packets_delivered;
  uint64_t pfc_pauses;
  uint64_t pfc_resumes;
  uint64_t drops;
  uint64_t drop_bytes;
  uint64_t drop_data_payload;
  uint64_t reclaimed;              /* packets taken out by wh_net_reclaim_flow_at */
  uint64_t reclaimed_data_payload; /* data bytes they carried */
} WhNetCounters;

/* Dynamic PFC's books, kept beside the ports and nodes (WhNet.pfc_port, pfc_node, only
 * with dynamic thresholds) so that the port and node structs every packet touches stay
 * as small as without them. Like the ingress counts, a port's entry is about what
 * arrived over its link and is buffered at the far node. */
typedef struct {
  /* of the port's ingress_bytes, those held in its headroom (the rest are in the
   * switch's shared pool), and the headroom's size (per priority) */
  uint64_t hdrm_bytes[WH_NPRIO];
  uint64_t headroom;
} WhPortPfc;

typedef struct {
  uint64_t shared_cap, shared_used; /* the shared pool (buffer less every port's headroom)
                                       and the bytes in it */
} WhNodePfc;

/* One direction of a link: 512 bytes on x86-64, so that indexing net->port is a
 * shift, in an array aligned to a cache line. Laid out by use, as the port array
 * outgrows the caches from a few thousand hosts (docs/notes/2026-12-engine-scaling.md): the first
 * cache line holds what the arrival, the transmitter and PFC's checks read; the second what the
 * arrival counts and, for PFC, the far node's books of what came over this link (its
 * ingress counts: a packet's arrival and its departure from the far node's buffer touch
 * this line, not a line of the far node's port); the third the transmitter's rate and
 * counters; then the queue disc, its own first line on the fourth. Keep new fields in
 * the spare bytes (the second line's for the hot path), or mind the size and the
 * lines. */
typedef struct {
  uint32_t id;
  uint32_t node, peer_node;
  uint32_t peer;     /* the reverse direction: the peer node's port on this link */
  WhTime busy_until; /* transmitter free at */
  WhEvent *tx_event;
  WhPacket *fly_head, *fly_tail;
  WhEvent *fly_event;
  uint8_t paused;      /* priorities paused by the peer (PFC) */
  uint8_t pfc_pending; /* priorities whose PFC state (the peer port's pfc_state) this port
                          has not sent yet */
  uint8_t frozen;      /* held still by wh_net_freeze_port: no dequeue */
  uint8_t vc_bump;     /* WhVcBump: when data crossing this link moves to the next
                          virtual channel (priority - 1, down to 1) */
  uint8_t tier;        /* WhLinkTier */
  uint8_t at_switch;   /* the port's node is a switch (the hot path reads no node) */
  /* second cache line: the link's far end */
  uint64_t frames; /* data/ACK/NACK/CNP frames that arrived over the link */
  /* bytes buffered at the far node (a switch) that arrived over this link, per
   * priority: at most the switch's buffer, which PFC keeps below 4 GiB */
  uint32_t ingress_bytes[WH_NPRIO];
  uint64_t bytes;        /* bytes on the wire of those frames (not beside frames: GCC would
                            pair their two increments into vector instructions that cost
                            more than the adds) */
  uint8_t pfc_data_mask; /* priorities subject to PFC at the far node (static thresholds) */
  uint8_t pfc_dyn_mask;  /* ... (dynamic thresholds) */
  uint8_t pfc_state;     /* priorities the far node asks this port to pause (its port
                            `peer` sends the frames) */
  uint8_t spare1[13];
  /* third cache line: the transmitter */
  uint64_t rate_bps; /* what the transmitter sends at: the link's rate, less what an
                        accelerator reserves for traffic it carries outside the packets */
  WhTime delay;      /* propagation, plus the peer switch's forwarding delay */
  uint64_t tx_bytes;
  WhPortStats st;
  WhTime pause_since; /* when the current pause began (paused != 0) */
  uint32_t host;      /* a host's port: the host index (the NIC's pull reads no WhNode) */
  uint32_t spare2;
  uint64_t line_bps; /* the link's rate, as configured */
  /* fourth and on */
  WhQueueDisc qd;
} WhPort;

typedef struct {
  gboolean is_switch;
  uint32_t index; /* host index or switch index */
  uint32_t *ports;
  uint32_t nports;
  uint64_t salt;    /* switches: ECMP hash salt */
  WhTime fwd_delay; /* switches: forwarding latency (WH_TIME_MAX: params.switch_delay) */
  uint32_t leaf;    /* switches with hosts: leaf index, else WH_NO_PORT */
} WhNode;

struct WhNet {
  WhSim *sim;
  WhNetParams p;
  WhNode *node;
  uint32_t n_nodes;
  /* per node: bytes in a switch's shared buffer (0 for hosts), an array of its own that
   * every hop reads and writes, so that a packet touches no WhNode
   * (docs/notes/2026-12-engine-scaling.md) */
  uint64_t *buffer_used;
  WhPort *port;
  uint32_t n_ports;
  uint32_t *host_node; /* host index -> node id */
  uint32_t *host_port; /* host index -> its port (wh_net_host_port) */
  uint32_t n_hosts;
  uint32_t n_switches;
  gboolean finalized;
  /* routing: dist[node * n_leaves + leaf], hops to the leaf switch; unused when a
   * topology router is set */
  uint16_t *dist;
  uint32_t n_leaves;
  WhNetRouter router;
  /* packet pool */
  WhPacket *pkt_free;
  struct WhBulk *pkt_bulk; /* packet slabs (INT off) */
  GPtrArray *int_blocks;   /* packet slabs with their INT records (INT on; NULL before) */
  uint64_t pkt_live;
  WhNetTransport tp;
  void *tp_ctx;
  WhNetCounters c;
  GArray *build_nodes, *build_ports; /* until finalize */
  WhTime last_move;                  /* when a packet last arrived over a link */
  uint64_t pfc_alpha_q16;            /* dynamic PFC: pfc_alpha in 1/65536 */
  WhPortPfc *pfc_port;               /* dynamic PFC: per port (NULL without) */
  WhNodePfc *pfc_node;               /* dynamic PFC: per node (NULL without) */
  WhNetDeadlock deadlock;
};

/* (transfer full); `sim` (transfer none) must outlive the network. */
WhNet *wh_net_new(WhSim *sim, const WhNetParams *params);

/* The size of a network before it is built, and the bytes it will take once built:
 * nodes, ports and the distance table (nodes x leaves), the dominant term. */
typedef struct {
  uint64_t hosts, switches, links;
  uint64_t leaves; /* switches with hosts attached */
} WhNetSize;
uint64_t wh_net_estimate_bytes(const WhNetSize *size);
void wh_net_free(WhNet *net);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhNet, wh_net_free)

/* Building: returns the new node id. Hosts are numbered 0.. in creation order. */
uint32_t wh_net_add_host(WhNet *net);
uint32_t wh_net_add_switch(WhNet *net);
/* Before finalize: this switch's forwarding latency instead of params.switch_delay. */
void wh_net_set_switch_delay(WhNet *net, uint32_t node, WhTime delay);
/* A switch's forwarding latency (0 for hosts). */
WhTime wh_net_switch_delay(const WhNet *net, uint32_t node);
/* Adds a link: two ports, the a-side one first (its id is the port count before the
 * call), then the b-side one. */
gboolean wh_net_add_link(WhNet *net, uint32_t a, uint32_t b, uint64_t rate_bps, WhTime delay,
                         GError **error);
/* Before finalize: the number of ports added so far. */
uint32_t wh_net_build_port_count(const WhNet *net);
/* When data crossing a port's link moves to the next virtual channel (priority - 1,
 * down to 1, at the far end): never, always (a dragonfly's global links), or only when
 * its next link has the same tier as this one (a dragonfly's local links: the second of
 * two local hops in a row, as on a detour through another switch of the group). */
typedef enum {
  WH_VC_BUMP_NONE,
  WH_VC_BUMP_ALWAYS,
  WH_VC_BUMP_SAME_TIER,
} WhVcBump;

/* Before finalize: the port's WhVcBump mode (WhPort.vc_bump). */
void wh_net_set_port_vc_bump(WhNet *net, uint32_t port, WhVcBump mode);
/* Before finalize: the tier of the link whose a-side port is `port` (both directions). */
void wh_net_set_link_tier(WhNet *net, uint32_t port, WhLinkTier tier);
/* Time `port` has spent paused by its peer up to now (the open pause included). */
WhTime wh_net_port_paused_time(const WhNet *net, const WhPort *port);
/* Before finalize: routes come from `router` (copied; the network frees its data)
 * instead of shortest-path tables. The router is then responsible for connectivity. */
void wh_net_set_router(WhNet *net, const WhNetRouter *router);
/* Checks the topology (connected, each host on exactly one link to a switch) and
 * computes routing tables (unless a router is set). */
gboolean wh_net_finalize(WhNet *net, GError **error);

void wh_net_set_transport(WhNet *net, const WhNetTransport *tp, void *ctx);
/* Before any packet: every queue disc keeps priority `prio`'s band on its first line
 * (the transport's data priority; WH_QUEUE_HOT_PRIO until told). Speed only. */
void wh_net_set_data_priority(WhNet *net, unsigned prio);

/* The ECMP route from host `src` to host `dst` for a flow whose 5-tuple hashes to
 * `tuple_hash`: fills out[] (egress port ids, sender NIC first) and returns the hop
 * count, or 0 if out_cap is too small. */
uint32_t wh_net_route(const WhNet *net, uint32_t src, uint32_t dst, uint64_t tuple_hash,
                      uint32_t *out, uint32_t out_cap);
uint32_t wh_net_host_port(const WhNet *net, uint32_t host);

WhPacket *wh_net_packet_alloc(WhNet *net);

static inline WhPacket *wh_net_packet_new(WhNet *net)
{
  WhPacket *pkt = net->pkt_free ? net->pkt_free : wh_net_packet_alloc(net);
  net->pkt_free = pkt->next;
  net->pkt_live++;
  return pkt;
}

static inline void wh_net_packet_free(WhNet *net, WhPacket *pkt)
{
  pkt->next = net->pkt_free;
  net->pkt_free = pkt;
  net->pkt_live--;
}

/* Queues a control packet (ACK/NACK/CNP) at the NIC of `host`. */
void wh_net_host_send(WhNet *net, uint32_t host, WhPacket *pkt);
/* Tells the NIC of `host` that a flow has data ready at `at`. */
void wh_net_host_kick(WhNet *net, uint32_t host, WhTime at);

/* Arms the deadlock watchdog (params.deadlock_timeout > 0, PFC on) on the simulator's
 * monitor (checks every half timeout of simulated time, when an event runs): when no
 * packet has arrived over any link for the timeout, switches hold packets, some port
 * is paused and no port can move anything (none transmitting, nothing on a wire,
 * every queued packet behind a paused priority), the run stops and net->deadlock is
 * filled. */
void wh_net_start_watchdog(WhNet *net);
/* At the end of a run (PFC on): packets left in switches, in the deadlock state, with
 * no event to move them is a deadlock too (fills net->deadlock; returns whether one
 * was found). */
gboolean wh_net_check_stuck(WhNet *net);

/* Adds an observer to every port's queue disc (switch ports and NICs), after any
 * already attached; remove it with the same (hooks, data) pair. */
void wh_net_add_hooks(WhNet *net, const WhQueueHooks *hooks, void *data);
void wh_net_remove_hooks(WhNet *net, const WhQueueHooks *hooks, void *data);

uint64_t wh_net_ecn_marks(const WhNet *net);
/* Bytes of the frames that crossed links (data, ACK, NACK, CNP): the sum of every
 * port's bytes, computed when asked rather than counted twice per frame. */
uint64_t wh_net_link_bytes(const WhNet *net);

/* Freezing (for an accelerator; separate from PFC): a frozen port dequeues nothing,
 * keeping its queue and its switch's buffer occupancy; arrivals still enter it.
 * Unfreezing lets it transmit again. */
void wh_net_freeze_port(WhNet *net, uint32_t port, gboolean frozen);

/* Moves a port's time-stamped state `shift` later: its transmitter's busy-until, the
 * arrival times of the packets in flight on its link, and the timestamps (send time,
 * INT records) of the packets queued at it or in flight on its link. Pair with wh_sim_park /
 * wh_sim_unpark of the port's events. */
void wh_net_shift_port(WhNet *net, uint32_t port, WhTime shift);
/* The same for a port held still since `from` (a lazy fast-forward that shifts when it
 * resumes): its transmitter's busy-until moves if it lay beyond `from`. */
void wh_net_shift_port_from(WhNet *net, uint32_t port, WhTime from, WhTime shift);

/* Calls fn on every packet queued at a port or in flight on a link. Cost: O(packets
 * in the network); for rare operations. */
void wh_net_foreach_packet(WhNet *net, void (*fn)(WhPacket *pkt, void *data), void *data);
/* The same for the packets queued at one port or in flight on its link. */
void wh_net_foreach_packet_at(WhNet *net, uint32_t port, void (*fn)(WhPacket *pkt, void *data),
                              void *data);

/* Takes every packet of `flow` (data, ACK, NACK, CNP) out of the network at `port`:
 * out of its egress queue and off its link, back to the packet pool, counted in
 * c.reclaimed (and their payload in c.reclaimed_data_payload), never delivered.
 * Queued packets leave as at a dequeue: the queue disc's byte counts, the switch's
 * shared-buffer occupancy and the ingress port's PFC count drop by their size, and
 * an ingress count that falls to XON sends the resume frame as a dequeue would; the
 * queue disc's observers hear each one as a drop. A packet on the link is removed from
 * the link's FIFO, including one still being serialized: the transmitter stays busy
 * until its last bit would have left (the wire time was spent), and the link's arrival
 * event is moved to the next packet left on it, or cancelled. Returns the packets
 * taken. It may cancel and schedule events of this port and of the ingress ports of
 * the packets it takes: none of them may be parked. Cost: O(packets queued at the
 * port and on its link). */
uint32_t wh_net_reclaim_flow_at(WhNet *net, uint32_t port, const struct WhFlow *flow);
/* wh_net_reclaim_flow_at for the packets `pred` (with `data`) takes, whatever their flow:
 * one pass over the port for many flows. */
uint32_t wh_net_reclaim_if(WhNet *net, uint32_t port, int (*pred)(const WhPacket *, const void *),
                           const void *data);

#endif
