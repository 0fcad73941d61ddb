/* What an accelerator does to flows, built on the transport: take a flow's
 * congestion-control state as a plain value (with its times relative to now and its
 * pending CC timers) and put it back, on the same or an isomorphic flow, at the same
 * or a later time; serialize that value to bytes; move a flow's time-stamped state
 * later by a shift; advance a flow by a number of bytes at both ends at once; and
 * complete a flow at once, taking its packets out of the network. All of these are
 * cold operations (per fast-forward or memo hit, not per packet). */
#ifndef WH_FLOW_STATE_H
#define WH_FLOW_STATE_H

#include <glib.h>
#include "rdma-transport.h"

#define WH_CC_SNAPSHOT_TIMERS 2 /* CC timer slots 1 and 2 */
#define WH_CC_SNAPSHOT_BYTES 256

typedef struct {
  char cc[16];                      /* class short name */
  double rate;                      /* sending rate, b/s */
  uint64_t cwnd;                    /* CC window, bytes */
  uint32_t time_set;                /* bit i: time field i of the class was set */
  WhTime taken_at;                  /* absolute time of the snapshot */
  uint8_t state[WH_CC_STATE_BYTES]; /* the CC block, time fields relative to taken_at */
  uint8_t timer_armed[WH_CC_SNAPSHOT_TIMERS];
  int64_t timer_rel[WH_CC_SNAPSHOT_TIMERS];
  uint64_t timer_seq[WH_CC_SNAPSHOT_TIMERS];
} WhCcSnapshot;

/* Syncs the flow's CC (wh_flow_rate) first. */
void wh_flow_cc_snapshot(WhFlow *f, WhCcSnapshot *out);

/* Puts `snap` into `f` at now: state, rate, window and CC timers (re-armed at now +
 * their relative times; byte positions relative to snd_una). When now is the time the snapshot was
 * taken, re-armed timers keep their original sequence numbers, so a restore in the same timeline is
 * exact to the event. Fails if the snapshot belongs to another CC class. */
gboolean wh_flow_cc_restore(WhFlow *f, const WhCcSnapshot *snap, GError **error);

/* Fixed-size, versioned byte form (host byte order: for use within one build on one
 * machine). */
void wh_cc_snapshot_serialize(const WhCcSnapshot *snap, uint8_t out[WH_CC_SNAPSHOT_BYTES]);
gboolean wh_cc_snapshot_deserialize(const uint8_t *bytes, gsize len, WhCcSnapshot *out,
                                    GError **error);

/* Moves the flow's time-stamped state (pacing, RTO deadline, CNP/NACK pacing, CC time
 * fields) `shift` later. Pair with wh_sim_park/unpark of the flow's events (owner
 * id | WH_OWNER_FLOW). */
void wh_transport_shift_flow(WhTransport *tp, WhFlow *f, WhTime shift);

/* Advances flow `f` by `bytes` at both ends: the sender's sequence numbers, the
 * receiver's expected byte, the byte positions the CC keeps (its seq_fields), and
 * every packet of the flow still queued or in flight (data and ACK/NACK/CNP sequence
 * numbers move by `bytes`), so the flow continues as
 * if those bytes had been delivered, with no byte counted twice and no gap for the
 * receiver to NACK. The advanced bytes are counted in the transport's
 * advanced_bytes, neither sent nor delivered. Needs bytes <= size - (highest byte
 * sent): the tail of a flow is always simulated packet by packet. */
gboolean wh_transport_advance(WhTransport *tp, WhFlow *f, uint64_t bytes, GError **error);
/* The same without renumbering the flow's packets: the caller renumbers them (e.g. by
 * scanning only the ports the flow uses, for many flows at once). */
gboolean wh_transport_advance_ends(WhTransport *tp, WhFlow *f, uint64_t bytes, GError **error);

/* Holds flow `f`'s new data (`held` TRUE: it sends nothing new, retransmissions
 * included; its packets in flight go on and their acknowledgements are taken) or lets
 * it send again. */
void wh_transport_hold(WhTransport *tp, WhFlow *f, gboolean held);

/* Completes active flow `f` now, at both ends, as if its every remaining byte and
 * acknowledgement had arrived at this instant: the receiver has every byte (rcv_nxt =
 * size; finish = now, flows_finished and on_done, unless the last byte had already
 * arrived), and the sender has every byte acknowledged (snd_una = snd_nxt = highest
 * sent = size; the flow leaves its host's send heap, its RTO, CC and delayed-ACK timers
 * are cancelled, flows_acked and on_acked, the adaptive router's release), exactly what
 * a completion by packets does, so a workload waiting on it sees it end now. The bytes
 * the receiver had not yet received are counted in advanced_bytes, neither sent nor
 * delivered. Every packet of the flow (data, ACK, NACK, CNP) queued at a port of its
 * data or ACK path or in flight on one of their links is taken out of the network by
 * wh_net_reclaim_flow_at (queue, buffer and PFC counts fixed, resume frames sent where
 * a count falls to XON), counted in the network's reclaimed counters. Under adaptive
 * routing a retransmitted duplicate can still be on a path the flow left; it then
 * arrives as any duplicate after a completion does: the receiver acknowledges it and
 * the sender ignores the acknowledgement. Fails, changing nothing, unless the flow is
 * active (started and not yet acknowledged in full). It cancels and schedules events
 * of the flow and of the ports on its paths: call it while none of them is parked.
 * Cost: O(hops of the two paths + packets queued or in flight there). */
gboolean wh_transport_complete(WhTransport *tp, WhFlow *f, GError **error);
/* wh_transport_complete without the reclaim, for a flow whose ports are parked (their
 * events held, so nothing may be scheduled for them): the flow completes now (its
 * timers are cancelled, its notifications made) with its packets left where they are;
 * the caller reclaims them (wh_net_reclaim_if) once its ports run again, before they
 * can move. */
gboolean wh_transport_complete_in_place(WhTransport *tp, WhFlow *f, GError **error);

#endif
