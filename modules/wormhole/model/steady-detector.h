/* The steady-state detector (Wormhole I, observe-only): per active flow, a rate
 * sample every period (tau) into a block-summary window of l samples
 * (steady-window.h); a flow is steady when the spread dR = (max - min) / mean over its
 * last l samples is below theta; a partition (partition.h) is steady when all of its
 * flows are. The idle rule also counts as steady a partition with no congestion
 * signal (ECN mark, CNP, PFC frame, queue above two frames: a data frame and the control frames
 * interleaved with it are not a standing queue) at any of its ports and no change of membership for
 * an idle window, and every flow at its line rate. Each steady interval of a partition is recorded
 * with the bytes its flows delivered and the events its ports and flows ran meanwhile: what a
 * fast-forward could skip.
 *
 * Engine-neutral: the caller feeds flow starts and ends (with their ports), port
 * signals and, at each sampling tick, one sample per active flow; event counts come
 * from counters indexed by port and flow id, which the caller's scheduler fills.
 * Cost: nothing per packet here; per tick O(active flows + live partitions); per
 * steady interval O(its ports). Memory: about 0.9 KB per active flow (its window of
 * at most 32 blocks), about 130 B per flow ever seen (with the observer's own), 15 KB of
 * histogram. */
#ifndef WH_STEADY_DETECTOR_H
#define WH_STEADY_DETECTOR_H

#include <glib.h>
#include <stdint.h>
#include "event.h"
#include "partition.h"
#include "wh-time.h"

typedef enum {
  WH_STEADY_NONE,
  WH_STEADY_RATE, /* every flow's dR below theta */
  WH_STEADY_IDLE, /* the idle rule */
} WhSteadyKind;

typedef struct {
  double theta;       /* [0, 1): 0 never steady */
  uint32_t window;    /* l >= 2 samples */
  WhTime period;      /* tau > 0 */
  gboolean idle_rule; /* also count idle partitions as steady */
  WhTime idle_window;
  WhTime stats_from;  /* dR statistics count evaluations from this time on */
  gboolean mean_rule; /* dR of the window's block means instead of its samples */
} WhDetectorParams;

/* Event counters (WhEventCounts, event.h) the caller's engine fills: events run per
 * owning port and per owning flow. */

typedef struct {
  /* a flow's payload bytes delivered so far (to measure skippable bytes) */
  uint64_t (*delivered)(void *ctx, uint32_t flow);
  /* a flow's name in the report (written to buf, or a constant) (transfer none) */
  const char *(*label)(void *ctx, uint32_t flow, char buf[24]);
  void *ctx;
} WhDetectorSource;

/* A distribution of dR values: a histogram of 1% relative bins from 1e-6 up (plus
 * one bin for 0 and one for +inf and above), and exact counts below the reported
 * thetas 3, 5, 10 and 20%. 15 KB. */
#define WH_DR_BINS 1855
typedef struct {
  uint64_t n;
  uint64_t below[4];
  uint64_t hist[WH_DR_BINS];
} WhDrStats;

extern const double wh_dr_report_thetas[4];
void wh_dr_stats_add(WhDrStats *s, double dr);
/* Quantile q of the values (a bin's geometric middle; +inf above the histogram). */
double wh_dr_stats_quantile(const WhDrStats *s, double q);

#define WH_DETECTOR_SIZE_BINS 4097u

typedef struct WhDetector WhDetector;

/* (transfer full); `counts` (transfer none, nullable) must outlive it. */
WhDetector *wh_detector_new(const WhDetectorParams *p, uint32_t n_ports,
                            const WhDetectorSource *src, const WhEventCounts *counts);
void wh_detector_free(WhDetector *d);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhDetector, wh_detector_free)

void wh_detector_flow_start(WhDetector *d, uint32_t flow, const uint32_t *ports, uint32_t n,
                            WhTime now);
void wh_detector_flow_end(WhDetector *d, uint32_t flow, WhTime now);
void wh_detector_flow_reroute(WhDetector *d, uint32_t flow, const uint32_t *ports, uint32_t n,
                              WhTime now);
/* A held flow (its partition is fast-forwarded) is left out of the active flows (not
 * sampled) until released; its window and membership stay as they are. */
void wh_detector_flow_hold(WhDetector *d, uint32_t flow, gboolean held);
void wh_detector_port_signal(WhDetector *d, uint32_t port, WhTime now);

/* Active flows (to sample at a tick): index 0..n-1. */
uint32_t wh_detector_n_active(const WhDetector *d);
uint32_t wh_detector_active(const WhDetector *d, uint32_t i);
/* One tick at time t: a sample of every active flow (value: the chosen quantity;
 * at_line: the flow sends at its line rate), then wh_detector_tick(t). A flow's first
 * tick only sets its baseline (no sample). */
void wh_detector_sample(WhDetector *d, uint32_t flow, WhTime t, double value, gboolean at_line);
void wh_detector_tick(WhDetector *d, WhTime t);
/* Closes open intervals at `now` (end of run). */
void wh_detector_finish(WhDetector *d, WhTime now);

/* Results. */
typedef struct {
  uint64_t ticks, samples, evaluations;
  uint64_t steady_evals[4]; /* dR < 3%, 5%, 10%, 20% */
  uint64_t steady_evals_theta;
  uint64_t intervals[3]; /* by WhSteadyKind (index 0 unused) */
  WhTime flow_time[3];   /* flow x time in steady partitions, by kind */
  uint64_t bytes[3];     /* delivered in steady partitions, by kind */
  uint64_t events[3];    /* run in steady partitions, by kind */
  uint32_t flows_seen;
  uint32_t max_active;
} WhDetectorStats;
void wh_detector_stats(const WhDetector *d, WhDetectorStats *out);
/* Quantile q of every evaluated dR (+inf when above the histogram). */
double wh_detector_dr_quantile(const WhDetector *d, double q);
const WhPartitions *wh_detector_partitions(const WhDetector *d);
gboolean wh_detector_flow_steady(const WhDetector *d, uint32_t flow);

/* One flow's record: when it was watched, its samples, the fraction of them steady, the
 * fraction of its time in a steady partition, and its dR over its evaluations (NaN
 * without one). */
typedef struct {
  WhTime start, end; /* end: now while it is active */
  uint32_t samples, evaluations;
  double steady_fraction, partition_steady_fraction;
  double dr_min, dr_mean, dr_max;
} WhDetectorFlow;
/* FALSE when `flow` was never watched (`out` is then left as it is). */
gboolean wh_detector_flow(const WhDetector *d, uint32_t flow, WhDetectorFlow *out);

#endif
