/* The flow: an RDMA queue-pair-like reliable connection from one host to another
 * with a byte stream of known size. The sender segments it into MTU-sized packets
 * paced at the CC's rate; the receiver acknowledges every packet (cumulative ACK),
 * sends a NACK on a sequence gap (the sender goes back N) and a CNP for ECN-marked
 * packets (at most one per CNP interval). Flows are stored in one array by the
 * transport; a flow's CC keeps its state in `cc_state`. */
#ifndef WH_FLOW_H
#define WH_FLOW_H

#include <stdint.h>
#include "simulator.h"

#define WH_CC_STATE_BYTES 128
#define WH_FLOW_TIMERS 4 /* slot 0: start and RTO; 1, 2: the CC's; 3: delayed ACK */
#define WH_FLOW_TIMER_DELACK 3u
#define WH_NO_HEAP 0xffffffffu

typedef struct WhTransport WhTransport;
typedef struct WhFlow WhFlow;

typedef enum {
  WH_FLOW_PENDING,
  WH_FLOW_ACTIVE,
  WH_FLOW_SENT, /* every byte acknowledged */
} WhFlowState;

struct WhFlow {
  WhTransport *tp;
  uint32_t id;
  uint32_t src, dst;
  uint64_t size;
  WhTime start;
  WhTime finish;             /* last byte delivered at the receiver; 0 until then */
  const uint32_t *fwd, *rev; /* data path (current flowlet's) and ACK path; the initial
                              * ones live in the transport's route store */
  uint16_t fwd_hops, rev_hops;
  uint64_t tuple_hash;
  /* adaptive routing: flowlets and path changes */
  uint64_t flowlets;         /* paths chosen by the router */
  uint32_t reroutes;         /* times the data path changed */
  const uint32_t *next_path; /* a change waiting for the flight to drain (sending held) */
  uint16_t next_hops;
  WhTime last_choice; /* when the router was last asked */
  uint8_t state;
  uint8_t prio;
  uint8_t held;       /* an accelerator holds its new data (wh_transport_hold) */
  uint64_t line_rate; /* sender NIC rate, b/s */
  /* sender */
  uint64_t snd_nxt, snd_una;
  uint64_t snd_max_sent; /* highest byte ever sent, to tell retransmissions */
  double rate;           /* current sending rate, b/s */
  uint64_t cwnd;         /* CC's window in bytes; 0: none (wh::RdmaFlow::Window applies) */
  WhTime next_avail;
  WhTime last_tx;
  uint32_t last_tx_size;
  uint32_t heap_pos;
  WhTime rto_deadline;
  uint64_t retry_una;              /* snd_una at the last go-back-N rewind */
  uint32_t retries;                /* rewinds in a row without snd_una moving */
  WhEvent *timers[WH_FLOW_TIMERS]; /* pending timer events, cancelled when the flow ends */
  uint64_t bytes_sent;             /* payload, with retransmissions */
  uint64_t retx_bytes;
  /* receiver */
  uint64_t rcv_nxt;
  WhTime last_cnp;
  gboolean cnp_sent;
  uint64_t nack_for;
  WhTime nack_time;
  gboolean nack_sent;
  uint32_t ack_pending; /* data packets received since the last ACK */
  uint8_t ece_pending;  /* one of them carried CE */
  union {
    uint8_t bytes[WH_CC_STATE_BYTES];
    uint64_t align;
  } cc;
};

void wh_flow_set_rate(WhFlow *f, double rate_bps);
/* The flow's rate now: applies the changes a CC with lazy changes (sync) has due. */
double wh_flow_rate(WhFlow *f);
/* The time to send `wire_bytes` at `rate_bps` (line rate and above: the NIC's time). */
WhTime wh_flow_pace(const WhFlow *f, double rate_bps, uint32_t wire_bytes);
/* For a CC with lazy changes whose schedule changed without a rate change: a flow
 * still inside its pacing gap is paced again from its last packet (next_send);
 * an eligible flow keeps its place. */
void wh_flow_repace(WhFlow *f);
/* Sets the CC's window in bytes (0: no window); may let the sender go on. */
void wh_flow_set_window(WhFlow *f, uint64_t bytes);
/* Arms CC timer `timer` (1 or 2) to fire at `at`; at most one pending per timer. */
void wh_flow_timer_at(WhFlow *f, WhTime at, unsigned timer);

#endif
