/* MoE routing skew and expert migration, as pure functions over one expert-parallel
 * (EP) group: per-iteration expert token counts (uniform, Zipf(s) over a slowly
 * drifting expert ranking, or rows of a file), the per-GCD load they put on an expert
 * placement, the all-to-allv dispatch matrix they imply, and the hill climb that swaps
 * experts between the most and the least loaded GCD (Piper, ORNL 2026). Costs: counts
 * O(E) per iteration, the dispatch matrix O(E x G + G^2), one hill-climb round
 * O(E + (E / G)^2). */
#ifndef WH_ROUTING_SKEW_H
#define WH_ROUTING_SKEW_H

#include <glib.h>
#include <stdint.h>
#include "rng.h"

typedef enum {
  WH_ROUTING_UNIFORM, /* balanced: every expert gets the same share (the default) */
  WH_ROUTING_ZIPF,    /* Zipf(s) over a persistent ranking drifting by adjacent swaps */
  WH_ROUTING_FILE,    /* rows of a file: one row of expert counts per iteration */
} WhRoutingKind;

/* Expert counts: `total` apportioned to E experts in proportion to `weights` by the
 * largest-remainder method (floors first, then one each to the largest remainders, the
 * lower index first among equal remainders), so they sum to `total` exactly. All
 * weights must be >= 0 and at least one > 0. */
void wh_routing_apportion(const double *weights, uint32_t E, uint64_t total, uint64_t *counts);

/* Zipf(s) counts: the expert at popularity rank k (order[k], k = 0 the most popular)
 * gets weight 1 / (k + 1)^s, apportioned as above in rank order (a tie goes to the
 * more popular rank), so counts never rise along the ranking. s = 0 is uniform. */
void wh_routing_zipf_counts(const uint32_t *order, uint32_t E, double s, uint64_t total,
                            uint64_t *counts);

/* One iteration of ranking drift: for k = 0, 1, ..., E - 2 in turn, order[k] and
 * order[k + 1] swap with probability p (one uniform draw of `rng` per k). */
void wh_routing_drift(uint32_t *order, uint32_t E, double p, WhRng *rng);

/* Parses a routing file: one row per iteration of E non-negative integer counts
 * separated by blanks; '#' starts a comment; blank lines are skipped. Refuses a row
 * with another count of numbers (naming `file`, the line and E), a negative or
 * non-integer entry, a row of zeros and a file without rows. `*counts` (transfer full)
 * receives rows x E counts. */
gboolean wh_routing_file_parse(const char *text, uint32_t E, const char *file, uint64_t **counts,
                               uint32_t *rows, GError **error);

/* Per-GCD load: load[g] = the sum of counts[e] over the experts e with gcd_of[e] = g. */
void wh_routing_gcd_load(const uint64_t *counts, uint32_t E, const uint32_t *gcd_of, uint32_t G,
                         uint64_t *load);

/* max / mean of `load` over G GCDs (1 when all are 0). */
double wh_routing_imbalance(const uint64_t *load, uint32_t G);

/* The dispatch all-to-allv of one EP group of G members, every member routing the same
 * expert distribution: member i sends expert e the tokens counts[e] / G (plus one for
 * the first counts[e] mod G members), so m[i * G + j] = token_bytes x the tokens of i
 * for the experts on member j; column j sums to token_bytes x load[j]. The combine is
 * its transpose. */
void wh_routing_dispatch_matrix(const uint64_t *counts, uint32_t E, const uint32_t *gcd_of,
                                uint32_t G, uint64_t token_bytes, uint64_t *m);

typedef struct {
  uint32_t a, b;   /* experts swapped: a moves from GCD ga to gb, b from gb to ga */
  uint32_t ga, gb; /* ga: the most loaded GCD before the swap, gb: the least */
} WhExpertSwap;

/* Hill climbing over one EP group (Piper): at most `rounds` rounds, each taking the
 * most and the least loaded GCD (the lowest index among equals) and applying the swap
 * of an expert a on the former with an expert b on the latter, 0 < load(a) - load(b) <
 * gap, that leaves the two closest (the smallest |gap - 2 (load(a) - load(b))|, the
 * first in (a, b) order among equals); it stops when no swap narrows the gap. Both
 * GCDs end inside their old range, so max / mean never rises. `gcd_of` is updated;
 * the swaps go to `swaps` (room for `rounds`). Returns their count. */
uint32_t wh_routing_hill_climb(const uint64_t *expert_load, uint32_t E, uint32_t G,
                               uint32_t *gcd_of, uint32_t rounds, WhExpertSwap *swaps);

#endif
