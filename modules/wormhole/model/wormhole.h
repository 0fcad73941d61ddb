/* Wormhole on the native engine: the replacement scheduler (a stock scheduler wrapped
 * so that events can be attributed to partitions) and the observer that feeds the
 * engine-neutral detector (steady-detector.h) from the transport's flow notifications,
 * the queue discs' hooks and a sampling monitor on the simulator. The models never
 * know it is there: it adds no events and draws no random numbers, so every output of
 * a run is what the exact engine gives (observe mode). Parameters: wh::Wormhole, the
 * congestion control class's LineFraction and RateWindow, and wh::WormholeStudy for
 * studies of the detector.
 * Cost with Mode=off: nothing (none of it is attached). In observe mode: one counter
 * per event (the scheduler), one hook call per enqueue and mark (the idle rule's
 * congestion signals), O(active flows) per sample period. */
#ifndef WH_WORMHOLE_H
#define WH_WORMHOLE_H

#include <glib.h>
#include <stdio.h>
#include "rdma-transport.h"
#include "registry.h"
#include "steady-detector.h"

typedef enum {
  WH_WORMHOLE_OFF,
  WH_WORMHOLE_OBSERVE,
  WH_WORMHOLE_SKIP,
  WH_WORMHOLE_MEMO,
} WhWormholeMode;

typedef enum {
  WH_QUANTITY_CC_RATE,       /* the CC's rate variable */
  WH_QUANTITY_DELIVERED,     /* payload delivered per period */
  WH_QUANTITY_DELIVERED_AVG, /* payload delivered over the last AvgPeriods periods */
  WH_QUANTITY_CWND_RTT,      /* window over smoothed RTT (window CCs), else the rate */
} WhQuantity;

typedef struct {
  WhWormholeMode mode;
  WhQuantity quantity;
  WhDetectorParams det;
  uint32_t avg_periods;
  double line_fraction;    /* the idle rule's line rate, as a fraction of the NIC's */
  gboolean study;          /* every quantity at l = 100, 500, 2000 too */
  WhTime tail_margin;      /* skip: sending time left unsent beyond in-flight + one RTT */
  WhTime min_skip;         /* skip: shortest fast-forward worth taking */
  WhTime rate_window;      /* skip: a quiet partition's rates are measured over this long */
  gboolean patterns;       /* count contention patterns (flow conflict graphs) per phase */
  double rate_tolerance;   /* patterns: rates within a factor 1 + this share a bucket */
  uint64_t config_hash;    /* patterns: the namespace (network, transport, CC parameters) */
  uint64_t memo_max_bytes; /* patterns: no new pattern is stored beyond this */
  gboolean large_in_place; /* patterns: phases above the exact check matched in place */
  gboolean complete_tails; /* skip at measured rates: up to the first completion, made there */
  gboolean fluid;          /* skip, memo: steady flows go on as fluids beside the packets */
  WhTime fluid_window;     /* ... steady over this long (0: off) */
} WhWormholeParams;

extern const WhTypeInfo wh_wormhole_type;
extern const WhTypeInfo wh_wormhole_study_type;
extern const WhSchedulerClass wh_wormhole_scheduler_class;

const char *wh_wormhole_mode_name(WhWormholeMode mode);
/* Whether a mode fast-forwards steady partitions (skip, and memo on top of it). */
static inline gboolean wh_wormhole_mode_skips(WhWormholeMode mode)
{
  return mode == WH_WORMHOLE_SKIP || mode == WH_WORMHOLE_MEMO;
}
const char *wh_quantity_name(WhQuantity q);

/* Reads wh::Wormhole, wh::WormholeStudy and the LineFraction and RateWindow of
 * congestion control `cc`'s class (docs/modules/wormhole.md). `scheduler_wormhole`: the user
 * asked for --scheduler wormhole (observe mode unless Mode says otherwise). Errors
 * name the parameter and where it was set. */
gboolean wh_wormhole_params_from_config(WhWormholeParams *p, const WhConfig *cfg, const char *cc,
                                        gboolean scheduler_wormhole, GError **error);

/* The Wormhole scheduler around a fresh `inner` scheduler (transfer full). */
WhScheduler *wh_wormhole_scheduler_new(const WhSchedulerClass *inner);
/* The inner class of a Wormhole scheduler, NULL for any other scheduler. */
const WhSchedulerClass *wh_wormhole_scheduler_inner(const WhScheduler *s);

typedef struct WhWormhole WhWormhole;

/* Attaches the observer to a built run (in skip and memo modes sim must run on a
 * Wormhole scheduler; observe mode runs on any).
 * `label` names flows in the report. (transfer full) */
WhWormhole *wh_wormhole_new(WhSim *sim, WhNet *net, WhTransport *tp, const WhWormholeParams *p,
                            const char *(*label)(void *ctx, uint32_t flow, char buf[24]),
                            void *label_ctx);
void wh_wormhole_free(WhWormhole *wh);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhWormhole, wh_wormhole_free)

/* Closes what is open at the end of the run. */
void wh_wormhole_finish(WhWormhole *wh);
const WhWormholeParams *wh_wormhole_params(const WhWormhole *wh);
const WhDetector *wh_wormhole_detector(const WhWormhole *wh);
/* The scheduler's event counters (transfer none). */
const WhEventCounts *wh_wormhole_event_counts(const WhWormhole *wh);
/* The report (wormhole.json) (transfer full). */
char *wh_wormhole_json(const WhWormhole *wh);
/* wormhole-flows.csv, a line per flow in id order (with the flow's label quoted as
 * RFC 4180 asks): the detector's record (when it watched the flow), the time parked,
 * the payload bytes advanced and the payload bytes still sent as packets (the first
 * time). */
void wh_wormhole_flows_csv_header(FILE *out);
void wh_wormhole_flows_csv_line(const WhWormhole *wh, uint32_t flow, FILE *out);
/* Skip mode: what was fast-forwarded. */
typedef struct {
  uint64_t fast_forwards;      /* partitions parked */
  uint64_t skip_backs;         /* skips ended early by something reaching the partition */
  uint64_t advanced_bytes;     /* payload moved forward instead of simulated */
  double time_steady_fraction; /* flow time spent parked / flow time of all flows */
  uint64_t events_skipped_est; /* packets advanced x events per packet on their paths */
  WhTime skipped_time;         /* sum of skip lengths */
} WhWormholeSkipSummary;
void wh_wormhole_skip_summary(const WhWormhole *wh, WhWormholeSkipSummary *out);
/* Skip mode: the time a flow spent parked and the bytes it was advanced. */
void wh_wormhole_flow_skip(const WhWormhole *wh, uint32_t flow, WhTime *time, uint64_t *bytes);
/* Skip mode, at the end: every flow that finished delivered exactly its size, each
 * byte once: first-time payload sent + advanced = size, receiver at the size. */
gboolean wh_wormhole_check_bytes(const WhWormhole *wh, GError **error);
/* Skip mode, any time: the parked events are exactly the pending events of the parked
 * ports and flows (for tests: O(parked ports and flows + parked events)). */
gboolean wh_wormhole_check_parking(const WhWormhole *wh, GError **error);

/* Contention patterns (Patterns on, else all zero): phases looked up, repeats found
 * (how many of them matched a pattern loaded from a memo file, and how many matched an
 * entry that was only seen, had converged or had completed: the three add up to
 * hits), replays started by the kind of the outcome replayed (memo mode: a drained
 * outcome, stored beside its pattern's entry, first), patterns stored new, and the memo
 * database's size. */
typedef struct {
  uint64_t lookups, hits, hits_from_file, distinct;
  uint64_t hits_seen, hits_converged, hits_completed;
  uint64_t replays_converged, replays_completed, replays_drained;
  uint32_t db_entries;
  uint64_t db_bytes;
} WhWormholeMemoSummary;
void wh_wormhole_memo_summary(const WhWormhole *wh, WhWormholeMemoSummary *out);
/* Patterns on: adds a memo file's entries to the database, before the run: the
 * file's first entries (in its order) while the database stays within MemoMaxBytes and
 * the entries' heap within `max_memory` (0: no bound); *loaded of the file's *entries
 * are read in. On error (WH_MEMO_ERROR, see memo-db.h) the database is left as it was. */
gboolean wh_wormhole_memo_load(WhWormhole *wh, const char *path, uint64_t max_memory,
                               uint64_t *loaded, uint64_t *entries, GError **error);
/* Patterns on: writes the database to `path`, merged with the file there under its
 * lock and capped at MemoMaxBytes (wh_memo_db_save_bounded: the union's first entries
 * in the file's order while their bytes stay within it); *written of the union's
 * *entries are written (both nullable), the others left out. */
gboolean wh_wormhole_memo_save(const WhWormhole *wh, const char *path, uint64_t *written,
                               uint64_t *entries, GError **error);

/* Bytes held by the observer and detector now (an estimate). */
uint64_t wh_wormhole_memory(const WhWormhole *wh);

#endif
