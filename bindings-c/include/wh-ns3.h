/* wh-ns3: a plain C API over ns-3 3.37 (Debian's libns3-dev), so a scenario can also
 * be run on stock ns-3 as an independent reference. A simulation has nodes,
 * point-to-point links with a queue disc each way (FIFO, RED with ECN step marking, or
 * a hook queue disc that calls C functions on enqueue, dequeue and drop),
 * and flows (TCP NewReno or DCTCP bulk transfers, UDP at a fixed rate); after a run
 * it reports per-flow completion times, ns-3's event count and link traversals.
 * ns-3's simulator is a process-wide singleton: at most one WhNs3Sim exists at a time,
 * and after it is freed ns-3 cannot be set up again in the same process (its global
 * state, e.g. the time resolution, persists), nor after a C++ caller ran ns-3 itself:
 * run one simulation per process. Time is
 * in picoseconds, as in the native engine (ns-3 is switched to ps resolution).
 * Errors are negative ints; wh_ns3_strerror names them. */
#ifndef WH_NS3_H
#define WH_NS3_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
  WH_NS3_OK = 0,
  WH_NS3_EINVAL = -1,   /* bad argument */
  WH_NS3_ESTATE = -2,   /* wrong order (e.g. a link after the run) */
  WH_NS3_EBUSY = -3,    /* a simulation already exists in this process */
  WH_NS3_EUNUSED = -4,  /* ns-3 was already used in this process */
  WH_NS3_ENOTDONE = -5, /* the flow did not complete */
};

typedef struct WhNs3Sim WhNs3Sim;

typedef enum {
  WH_NS3_QUEUE_FIFO,
  WH_NS3_QUEUE_RED_ECN, /* RED in ECN mode with MinTh = MaxTh = threshold (step) */
  WH_NS3_QUEUE_HOOK,    /* FIFO calling the C functions of a WhNs3Hooks */
} WhNs3QueueKind;

#define WH_NS3_NO_FLOW UINT32_MAX

/* What a hook sees of a packet at a queue disc. Every port's queue disc has two strict-
 * priority bands: band 0 holds TCP segments without payload (ACKs, SYN, FIN), band 1
 * everything else; each band is a queue disc of the port's kind. */
typedef struct {
  uint32_t link;          /* link index: order of wh_ns3_add_link calls, from 0 */
  uint32_t node;          /* the node whose egress port this is */
  uint32_t band;          /* 0: control, 1: data */
  uint32_t flow;          /* flow id (wh_ns3_add_*_flow), or WH_NS3_NO_FLOW */
  uint32_t bytes;         /* size of the IP packet */
  int ecn_capable;        /* the packet carries ECT(0) or ECT(1) */
  uint32_t queue_packets; /* packets in this band without this packet */
  uint64_t queue_bytes;   /* bytes in this band without this packet */
  uint64_t now_ps;        /* simulated time */
} WhNs3HookPacket;

typedef enum {
  WH_NS3_HOOK_PASS, /* go on */
  WH_NS3_HOOK_MARK, /* set ECN CE (a packet that is not ECN-capable passes unmarked) */
  WH_NS3_HOOK_DROP, /* drop the packet (on_drop is then called) */
} WhNs3HookVerdict;

/* Callbacks of a WH_NS3_QUEUE_HOOK queue disc; each may be NULL (PASS). They run inside
 * ns-3's event loop and must not call back into this API. */
typedef struct {
  /* before the packet joins the band's FIFO (full queue: dropped without asking) */
  WhNs3HookVerdict (*on_enqueue)(void *ctx, const WhNs3HookPacket *p);
  /* after the packet has left the FIFO, before it goes to the device */
  WhNs3HookVerdict (*on_dequeue)(void *ctx, const WhNs3HookPacket *p);
  /* a packet dropped by a hook or because the band held limit_packets packets */
  void (*on_drop)(void *ctx, const WhNs3HookPacket *p);
  void *ctx;
} WhNs3Hooks;

typedef struct {
  WhNs3QueueKind kind;
  uint32_t limit_packets;      /* capacity of each band */
  uint32_t ecn_threshold_pkts; /* RED_ECN: marking threshold K, packets */
  const WhNs3Hooks *hooks;     /* HOOK: must outlive the simulation */
} WhNs3QueueConfig;

typedef enum {
  WH_NS3_TCP_NEWRENO,
  WH_NS3_TCP_DCTCP,
} WhNs3TcpVariant;

/* TCP settings, applied to every TCP socket (ns-3 defaults in brackets). */
typedef struct {
  uint32_t segment_size;  /* bytes of payload [536] */
  uint32_t initial_cwnd;  /* segments [10] */
  uint32_t socket_buffer; /* bytes, send and receive [131072] */
  uint32_t delack_count;  /* [2] */
  uint64_t min_rto_ps;    /* [1 s] */
  int sack;               /* [1] */
  int timestamps;         /* [1] */
} WhNs3TcpConfig;

typedef struct {
  uint64_t events;          /* ns-3 events executed */
  uint64_t link_traversals; /* packets put on a point-to-point link */
  uint64_t end_ps;          /* simulated time at the end */
} WhNs3Stats;

const char *wh_ns3_strerror(int code);

/* Where this process is in the one-simulation life cycle. */
enum {
  WH_NS3_PHASE_NONE,  /* no simulation yet */
  WH_NS3_PHASE_BUILT, /* created, not run */
  WH_NS3_PHASE_RAN,   /* run */
  WH_NS3_PHASE_FREED, /* freed: ns-3 cannot be used again */
};
int wh_ns3_sim_phase(void);

/* Creates the (only) simulation; `tcp` nullable: ns-3 defaults. WH_NS3_EUNUSED, with
 * nothing of ns-3 changed, when this process already used ns-3: a simulation of this
 * API was freed, a packet was created, or Simulator::Run or Time::SetResolution was
 * called. */
int wh_ns3_sim_new(const WhNs3TcpConfig *tcp, WhNs3Sim **out);
void wh_ns3_sim_free(WhNs3Sim *sim);

/* Adds n nodes; *first receives the id of the first (ids are consecutive). */
int wh_ns3_add_nodes(WhNs3Sim *sim, uint32_t n, uint32_t *first);
/* A full-duplex link with the same queue disc config in each direction. */
int wh_ns3_add_link(WhNs3Sim *sim, uint32_t a, uint32_t b, uint64_t rate_bps, uint64_t delay_ps,
                    const WhNs3QueueConfig *queue);
typedef enum {
  WH_NS3_ROUTING_GLOBAL, /* ns-3's global routing: one shortest path per destination */
  WH_NS3_ROUTING_ECMP,   /* per-flow ECMP: 5-tuple hash salted per node, over shortest paths */
} WhNs3Routing;

/* Computes routes; after the last link, before the first flow. wh_ns3_finalize uses
 * global routing; `seed` salts the ECMP hash. */
int wh_ns3_finalize(WhNs3Sim *sim);
int wh_ns3_finalize_routing(WhNs3Sim *sim, WhNs3Routing routing, uint64_t seed);

/* Flows get ids 0, 1, ... in the order they are added (TCP and UDP together); at most
 * WH_NS3_MAX_FLOWS per simulation (each has its own port, below ns-3's ephemeral ports). */
#define WH_NS3_MAX_FLOWS 39152u
int wh_ns3_add_tcp_flow(WhNs3Sim *sim, uint32_t src, uint32_t dst, uint64_t bytes,
                        uint64_t start_ps, WhNs3TcpVariant variant, uint32_t *flow);
/* UDP at `rate_bps` of payload in `packet_bytes` datagrams until `bytes` are sent. */
int wh_ns3_add_udp_flow(WhNs3Sim *sim, uint32_t src, uint32_t dst, uint64_t bytes,
                        uint64_t start_ps, uint64_t rate_bps, uint32_t packet_bytes,
                        uint32_t *flow);

/* Runs until every flow has completed, or until stop_ps (0: no limit). */
int wh_ns3_run(WhNs3Sim *sim, uint64_t stop_ps);

/* With ECMP routing: pins a flow's paths (node ids, sender first for `fwd`, receiver
 * first for `rev`, each ending at the other host), e.g. to follow the routes another
 * engine chose. */
int wh_ns3_pin_flow_path(WhNs3Sim *sim, uint32_t flow, const uint32_t *fwd, uint32_t nf,
                         const uint32_t *rev, uint32_t nr);

/* Start and time the last byte reached the receiving application. */
int wh_ns3_flow_times(const WhNs3Sim *sim, uint32_t flow, uint64_t *start_ps, uint64_t *finish_ps);
int wh_ns3_stats(const WhNs3Sim *sim, WhNs3Stats *out);

#ifdef __cplusplus
}
#endif

#endif
