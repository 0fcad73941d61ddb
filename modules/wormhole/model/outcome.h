/* The stored value of a contention phase's outcome (a memo database entry's value):
 * how long the phase lasted, which vertex ended it, and per vertex (graph order) the
 * payload bytes it sent for the first time during the phase and its CC snapshot at the
 * end (wh_cc_snapshot_serialize; the sending rate at the end is the snapshot's).
 *
 * Compact and lossless: integers are varints (varint.h), each vertex's bytes a
 * difference to the previous vertex's, and each snapshot, read as 64-bit words, is
 * written as the words that differ from a reference (an earlier vertex's snapshot
 * within a window, or all zeros), whichever is shortest: a snapshot equal to an
 * earlier one costs 3 B, one that differs in a timer's sequence number a few more,
 * instead of the 256 B of the snapshot. The encoding is a function of the outcome
 * alone, so equal outcomes give equal bytes. Host byte order. Cold path: encoding
 * costs O(n x window x words), decoding O(n x words).
 *
 * A converged phase also keeps, per vertex, the steady state the fast-forward found
 * when it parked the partition at the phase's end: the delivery rate it measured
 * (written as the zigzag difference to the previous vertex's), so that a replay of the phase can go
 * straight on into a skip at those rates. Zeros: not known (the phase converged without being
 * parked). */
#ifndef WH_OUTCOME_H
#define WH_OUTCOME_H

#include <glib.h>
#include <stdint.h>

typedef struct {
  uint64_t duration; /* ps from the tick the pattern was taken to the outcome (completed:
                        the leaving flow's last byte arrived, or its ACK if the byte had
                        arrived before that tick) */
  uint32_t n;        /* vertices */
  uint32_t ended;    /* completed: the vertex that left; converged: UINT32_MAX */
} WhOutcomeHead;

/* A converged vertex's steady state. */
typedef struct {
  uint64_t rate; /* payload bytes per second (0: not known) */
} WhOutcomeSteady;

/* Appends the value of `head` with bytes[0..n-1], the n snapshots at snaps (each
 * WH_CC_SNAPSHOT_BYTES) and, for a converged phase, steady[0..n-1] (nullable: zeros) to
 * `out`. */
void wh_outcome_encode(const WhOutcomeHead *head, const uint64_t *bytes, const uint8_t *snaps,
                       const WhOutcomeSteady *steady, GByteArray *out);

/* Decodes a value of `n` vertices: *head, and (each nullable) `bytes` (uint64),
 * `snaps` and `steady` (WhOutcomeSteady; zeros for a completed phase) set to the
 * vertices' bytes, snapshots and steady states. FALSE when `value` is not such a
 * value (another vertex count, bad lengths, a reference out of range, bytes left over);
 * the arrays are undefined then. */
gboolean wh_outcome_decode(const uint8_t *value, gsize len, uint32_t n, WhOutcomeHead *head,
                           GArray *bytes, GByteArray *snaps, GArray *steady);

/* A drained phase (a phase followed until every member completed, with no flow joining
 * it): per vertex its flow's size, its flow completion time (from its start to its last
 * byte's arrival), its start after the earliest member's, and the payload it had left
 * to send when the pattern was taken. */
typedef struct {
  uint64_t size; /* bytes */
  uint64_t fin;  /* ps */
  uint64_t lag;  /* ps */
  uint64_t left; /* bytes */
} WhOutcomeDrain;

/* Appends a drained phase's value: drain[0..n-1]. Layout: the varint n, then per vertex
 * the zigzag differences of its size, fin, lag and left to the previous vertex's. */
void wh_outcome_drain_encode(const WhOutcomeDrain *drain, uint32_t n, GByteArray *out);

/* Decodes a drained phase's value of `n` vertices into `drain` (WhOutcomeDrain). FALSE
 * when `value` is not such a value. */
gboolean wh_outcome_drain_decode(const uint8_t *value, gsize len, uint32_t n, GArray *drain);

#endif
