/* Between the Wormhole scheduler and the Wormhole observer (not for other callers). */
#ifndef WH_WORMHOLE_PRIVATE_H
#define WH_WORMHOLE_PRIVATE_H

#include <json-glib/json-glib.h>
#include "bulk.h"
#include "flow-state.h"
#include "memo-db.h"
#include "outcome.h"
#include "steady-detector.h"
#include "steady-window.h"
#include "wormhole.h"

#define WH_STUDY_WINDOWS 3

/* Skip mode: a flow's recent progress, (time of an ACK that moved snd_una, snd_una
 * then), at every tick (fine) and every `stride` ticks (coarse), to estimate its
 * delivery rate over a window ending at its latest ACK. */
#define WH_FF_FINE 16
#define WH_FF_COARSE 32
typedef struct {
  WhTime t;
  uint64_t una;
} WhAckMark;

typedef struct {
  WhTime ack_t; /* latest ACK that moved snd_una, and snd_una then */
  uint64_t ack_una;
  WhAckMark fine[WH_FF_FINE], coarse[WH_FF_COARSE];
  uint32_t n_fine, n_coarse, ticks, n_flu;
  WhTime est_from; /* the estimate at the last park used marks from here on */
  WhTime floor;    /* marks before this are not used (they precede that window) */
  /* with FluidWindow only (the ring is that much longer): a mark every fluid_stride
   * ticks, WH_FF_COARSE of them spanning the window */
  WhAckMark flu[];
} WhFfRing;

typedef struct {
  uint64_t last_rcv;
  uint64_t samples;
  WhSteadyWindow *study; /* nullable: 4 quantities x WH_STUDY_WINDOWS */
  double srtt_ps;
  uint64_t *ring; /* delivered-avg: rcv_nxt at the last AvgPeriods + 1 ticks */
  uint32_t ring_n, ring_head;
  WhTime line_since; /* the tick since which it sends at line rate (0: it does not) */
  /* skip mode */
  WhFfRing *ff;      /* while active */
  double rhat;       /* payload bytes per ps, estimated when its partition was parked */
  uint64_t adv_now;  /* bytes being advanced by the current resume */
  uint64_t advanced; /* bytes advanced in total */
  WhTime skipped;    /* time spent parked */
  /* memo mode: what the replay it is parked in gives it */
  uint64_t memo_bytes; /* payload bytes at the replay's end (a drain: what it had left) */
  uint8_t *memo_snap;  /* its CC snapshot at the end (nullable) */
  WhTime memo_fin;     /* a drain: its completion, from the drain's start */
  /* memo mode: the phase followed until every member completes (patterns.c), and this
   * flow's vertex in it */
  struct WhDrain *drain;
  uint32_t drain_v;
  /* memo mode: counted among its host's flows waiting for their first packet; its first
   * packet left (the transport may report either event first) */
  uint8_t unstarted, started;
  /* FluidWindow (fluid.c): none, holding its new data, or parked as a fluid (and
   * whether its reservation is made); its rate
   * (payload bytes per ps, and wire b/s reserved), since when, and the next tick at
   * which it may be tried */
  uint8_t fluid, fluid_reserved;
  double fluid_rate, fluid_wire;
  WhTime fluid_t0, fluid_retry;
  WhTime fluid_until; /* its trend would have moved its rate by Theta then */
} WhGlueFlow;

typedef struct WhParkPolicy WhParkPolicy;

/* A parked partition, by park slot (park.c). */
typedef struct {
  gboolean used;
  const WhParkPolicy *policy; /* what the park is for: a skip, a replay */
  WhTime t0, target;
  WhEvent *wake;
  GArray *ports, *flows; /* uint32 ids */
  /* the replay policy: the stored phase replayed */
  WhTime memo_dur;    /* the stored phase's duration (target - t0) */
  uint32_t memo_done; /* the flow that completes at its end (NONE: it converged) */
  /* a quiet partition's packet period (every flow sends one MTU per period), or 0 (a
   * replay's is 0): a skip of whole periods moves each flow by whole packets in phase
   * with its sends */
  WhTime period;
  /* Tails=rate: the flow that completes at the target (NONE: none) */
  uint32_t done;
  /* the drain policy: its start (each flow's memo_fin counts from it), the pending
   * completion of each of its flows (by position in the drained outcome; NULL: none,
   * or done), and the flows completed in place (their packets reclaimed at the end) */
  WhTime drain_t0;
  GArray *drain_events, *drain_done;
} WhSkip;

typedef struct {
  uint64_t fast_forwards, skip_backs, interrupts;
  uint64_t advanced_bytes;
  WhTime skipped_flow_time; /* sum over skips of length x flows */
  WhTime skipped_time;      /* sum over skips of length */
  uint64_t events_skipped_est;
  uint64_t tries, refused_short, refused_unsteady, refused_recovery;
  /* memo mode */
  uint64_t replays, replays_whole, replays_cut, replays_refused, replay_completions;
  uint64_t replays_refused_busy;    /* a flow in recovery, parked, not sending yet, ... */
  uint64_t replays_refused_instant; /* the stored phase lasted no time */
  uint64_t replays_refused_left;    /* the flow that ends it has other bytes left */
  uint64_t replays_clipped;         /* shortened: a survivor would have reached its tail */
  uint64_t replays_refused_tail;    /* ... so soon that the rest was not worth parking */
  uint64_t replays_skipping;        /* converged replays that go on as a skip */
  uint64_t tail_completions;        /* Tails=rate: flows completed at the end of a skip */
  /* memo mode: drains (drained outcomes replayed: every flow parked until it completes) */
  uint64_t drains, drains_whole, drains_cut, drains_refused, drain_completions;
} WhSkipStats;

typedef struct {
  uint64_t holds;          /* flows held to become fluid */
  uint64_t parks;          /* ... parked as fluids once their flight drained */
  uint64_t cut;            /* fluid stretches ended before their tails */
  uint64_t drifted;        /* ... ended where their trend had moved their rate by Theta */
  uint64_t interrupts;     /* fluid flows reached by a flow starting or ending on their path */
  uint64_t refused_short;  /* steady flows too close to their tails */
  uint64_t refused_unfair; /* steady flows above their fair share of a saturated port */
  uint64_t refused_trend;  /* steady flows whose rate was on a trend */
  uint64_t squeezed;       /* fluid flows above their share of a port the others filled */
  WhTime time;             /* sum over fluid stretches of their length */
} WhFluidStats;

typedef struct {
  uint64_t phases;                   /* phases whose pattern was looked up */
  uint64_t repeated;                 /* ... and found among the patterns seen before */
  uint64_t repeated_from_file;       /* ... as a pattern loaded from a memo file */
  uint64_t recalled;                 /* ... built in the same vertex order as one looked up
                                        before, so matched without the hash and the check */
  uint64_t hits[WH_MEMO_N_KINDS];    /* repeated, by the kind of the stored entry found */
  uint64_t replays[WH_MEMO_N_KINDS]; /* memo mode: replays started, by that kind */
  uint64_t distinct;                 /* patterns stored (new ones) */
  uint64_t collisions;               /* a stored pattern with the same hash, not isomorphic */
  uint64_t too_large;                /* the exact check gave up, or the phase has more flows than it
                                        takes and LargePhases=new (not stored): counted as new */
  uint64_t large;                    /* phases with more flows than the exact check takes */
  uint64_t large_repeated;           /* ... matched in place (LargePhases=in-place) */
  uint64_t not_stored;               /* new patterns left out: the store had reached MemoMaxBytes */
  uint64_t flows_max;                /* the largest phase, in flows */
  uint64_t flows_sum;                /* flows over all phases */
  /* outcomes of new patterns' phases, recorded with them */
  uint64_t converged; /* the partition became steady */
  uint64_t completed; /* a member left (its last byte acknowledged) */
  uint64_t abandoned; /* the membership changed otherwise first (a flow joined, ...) */
  uint64_t drained;   /* memo mode: phases followed until every member completed */
  /* per size class (floor(log2(flows))): phases looked up, and found */
  uint32_t class_lookups[32], class_hits[32], class_seen[32];
  uint64_t backed_off; /* phases not looked up: their size class hardly repeats */
} WhPatternStats;

/* A phase whose pattern was new, open until it converges or a member leaves (its
 * outcome is then stored with the pattern) or its membership changes otherwise. */
typedef struct {
  uint32_t part_id; /* its partition, and that partition's last change then */
  WhTime since;
  WhTime t0; /* the tick its pattern was taken at */
  uint64_t sig;
  GByteArray *key; /* the serialized graph */
  GArray *flows;   /* uint32 flow ids, in vertex order */
  GArray *snd0;    /* uint64 highest byte sent of each at t0 */
} WhPhase;

/* Memo mode: a phase followed, past its converged outcome, until every member has
 * completed with no flow joining it (members leaving is what it waits for); then its
 * drained outcome is stored under its pattern: when each member completed. */
typedef struct WhDrain {
  guint at; /* index in wh->drains */
  uint64_t sig;
  GByteArray *key;  /* the stored graph's bytes */
  GByteArray *base; /* the pattern's outcome before (its value; empty: none) ... */
  int base_kind;    /* ... and its kind */
  WhTime t0;        /* the tick its pattern was taken at */
  uint32_t n, n_done;
  uint32_t *flows;     /* in the stored graph's vertex order */
  WhOutcomeDrain *out; /* size, fin: its FCT (WH_TIME_MAX until it completes), lag, left */
} WhDrain;

struct WhWormhole {
  WhSim *sim;
  WhNet *net;
  WhTransport *tp;
  WhWormholeParams p;
  WhDetector *det;
  WhEventCounts counts; /* filled by the simulator's loop (wh_sim_count_events) */
  uint32_t monitor;
  WhTime next_tick;
  gboolean ticking;
  WhTable flows;       /* WhGlueFlow by flow id */
  WhRecycler ff_rings; /* the active flows' WhFfRing */
  uint64_t frame_bytes;
  const char *(*label)(void *ctx, uint32_t flow, char buf[24]);
  void *label_ctx;
  WhDrStats *study; /* nullable: 4 quantities x WH_STUDY_WINDOWS */
  /* skip mode */
  GArray *skips;   /* WhSkip by park slot */
  WhEvent *action; /* pending: try to park the steady partitions */
  uint32_t *stamp; /* per port, to visit each once */
  uint32_t stamp_gen;
  WhSkipStats ss;
  /* contention patterns (patterns.c) */
  struct WhMemoDb *memo; /* nullable: Patterns off */
  WhPatternStats ps;
  GPtrArray *phases; /* open WhPhase */
  /* graphs already looked up, by their bytes in the order built (wh_fcg_serialize): the
   * stored entry each matched and the vertex map, so that a graph built again in the
   * same order skips the hash and the exact check (GBytes -> WhLookup) */
  GHashTable *lookups;
  uint64_t lookups_bytes;
  /* the same graphs by their in-place keys (flows' labels and ports, in order): a phase
   * on the same ports as one looked up before finds its graph's bytes without building
   * the graph (GBytes -> GBytes) */
  GHashTable *lookups_at;
  uint64_t lookups_at_bytes;
  GPtrArray *drains;     /* memo mode: open WhDrain */
  uint32_t *drain_refs;  /* per port: the flows of its drain (parked) that use it */
  GPtrArray *replays;    /* memo mode: replays found at the last tick */
  WhEvent *replay_event; /* pending: start them */
  /* memo mode: per host, the flows activated whose first packet has not left (a phase
   * whose hosts have none is complete, and is looked up without waiting for a tick) */
  uint32_t *unstarted;
  WhEvent *settle_event; /* pending: look up the complete phases */
  /* FluidWindow (fluid.c): the fluid flows (held or parked), per port the fluid flows
   * on it and the wire rate they reserve */
  GArray *fluids;
  uint32_t *fluid_n;
  double *reserved;
  uint32_t *port_flows; /* flows sending over the port (started, not yet acknowledged) */
  uint64_t *seen_tx;    /* its tx_bytes at the last check of shares, and when */
  WhTime *seen_at;
  WhTime fluid_checked;
  WhEvent *fluid_event;
  gboolean fluid_try;
  uint32_t fluid_stride; /* ticks between a flow's fluid marks */
  WhFluidStats fs;
};

/* A flow's glue record (zero when first asked for). */
static inline WhGlueFlow *wh_wormhole_glue(WhWormhole *wh, uint32_t id)
{
  if (G_UNLIKELY(id >= wh->flows.len))
    wh_table_grow(&wh->flows, id + 1);
  return wh_table_at(&wh->flows, id);
}

/* Contention patterns (patterns.c): at the first tick after a partition's membership
 * changed, its flow conflict graph is built, hashed and looked up among the patterns
 * seen so far (confirmed by the exact isomorphism check); a new one is stored. */
void wh_patterns_init(WhWormhole *wh);
void wh_patterns_free(WhWormhole *wh);
void wh_patterns_after_tick(WhWormhole *wh, WhTime t);
/* Memo mode: flow `f` was activated (`started` FALSE), or its first packet left. Once
 * no flow waits for its first packet at the hosts of a partition that changed, the
 * partition is looked up at once, not at the next tick. */
void wh_patterns_flow_activated(WhWormhole *wh, const WhFlow *f, gboolean started);
/* A flow's last byte arrived, and again when it is about to leave its partition (its
 * last byte acknowledged): the phase it belongs to ends. */
void wh_patterns_flow_ends(WhWormhole *wh, WhFlow *f);
/* The fast-forward parked partition `p`: the phase it was in, if followed, converged,
 * and its outcome is recorded with each flow's rate estimate and smoothed RTT. */
void wh_patterns_parked(WhWormhole *wh, const WhPartition *p);
/* Memo mode: flow `f` completed (its last byte arrived): the drain it is in, if any,
 * takes its completion time, and is stored once every member has one. */
void wh_patterns_drain_ends(WhWormhole *wh, WhFlow *f);
/* The "patterns" object of wormhole.json (transfer full). */
JsonObject *wh_patterns_json(const WhWormhole *wh);
/* Makes sure the sampling ticks run (after flows were released or started). */
void wh_wormhole_arm_ticks(WhWormhole *wh);

/* The park/resume mechanism (park.c), used by the policies of fast-forward.c. A policy
 * says how far each flow of a parked partition moves when the park ends (`advance`:
 * payload bytes over the `dt` it was parked, `shift` the time its events move; the
 * mechanism rounds down to whole MTUs and stops short of the bytes `keep` leaves
 * unsent) and ends what ends with the park (`end`, after the flows moved and the ports
 * thawed). */
struct WhParkPolicy {
  const char *name;
  uint64_t (*advance)(const WhWormhole *wh, const WhSkip *sk, uint32_t flow, WhTime dt,
                      WhTime shift);
  uint64_t (*keep)(const WhWormhole *wh, const WhSkip *sk, const WhFlow *f);
  void (*end)(WhWormhole *wh, WhSkip *sk, WhTime dt);
};
void wh_park_init(WhWormhole *wh);
void wh_park_free(WhWormhole *wh);
/* Parks `flows` and `ports` (a partition's) until now + `len` for `policy`; returns the
 * slot (its WhSkip: the policy's fields are set by the caller). */
uint32_t wh_park(WhWormhole *wh, const GArray *flows, const GArray *ports, WhTime len,
                 const WhParkPolicy *policy);
/* Something reaches `ports` (a flow activating or starting on them): the parks that
 * hold any of them end now. */
void wh_park_interrupt_path(WhWormhole *wh, const uint32_t *ports, uint32_t n);
/* Ends the park of `slot` now, as an interrupt does. */
void wh_park_interrupt_slot(WhWormhole *wh, uint32_t slot);
/* Completes flow `id` without the packets it still had to send or deliver. */
gboolean wh_park_complete(WhWormhole *wh, uint32_t id);
/* Resumes every parked partition now (end of run). */
void wh_park_finish(WhWormhole *wh);
static inline WhSkip *wh_skip_at(WhWormhole *wh, uint32_t slot)
{
  return &g_array_index(wh->skips, WhSkip, slot);
}

/* Skip mode's policies (fast-forward.c). */
void wh_ff_on_activate(WhWormhole *wh, WhFlow *f);
void wh_ff_on_start(WhWormhole *wh, WhFlow *f);
void wh_ff_on_ack(WhWormhole *wh, WhFlow *f, WhGlueFlow *g);
void wh_ff_on_acked(WhWormhole *wh, WhFlow *f, WhGlueFlow *g);
/* At a tick, for a sampled flow; then once after the detector's tick. */
void wh_ff_sample(WhWormhole *wh, WhGlueFlow *g);
void wh_ff_after_tick(WhWormhole *wh, WhTime t);
/* Resumes every parked partition now (end of run). */
void wh_ff_finish(WhWormhole *wh);
/* Fluid flows (fluid.c). */
void wh_fluid_init(WhWormhole *wh);
void wh_fluid_free(WhWormhole *wh);
void wh_fluid_after_tick(WhWormhole *wh);
void wh_fluid_on_ack(WhWormhole *wh, WhFlow *f, WhGlueFlow *g);
/* Flow f starts or ends: the fluid flows on its data path end now. */
void wh_fluid_interrupt(WhWormhole *wh, const WhFlow *f);
/* Counts a flow on (sign 1) or off (-1) the ports of a data path. */
void wh_fluid_count_path(WhWormhole *wh, const uint32_t *path, uint16_t hops, int sign);
/* Ends every fluid stretch now (end of run). */
void wh_fluid_finish(WhWormhole *wh);

/* Memo mode: parks partition `p` for `dur` to replay a stored outcome. flows[i] (all of
 * p's flows) receives bytes[i] payload bytes by the end and takes the CC snapshot
 * snaps + i x WH_CC_SNAPSHOT_BYTES then; flows[done] (done < n) completes then. A
 * converged outcome whose steady states are known (done == n, every steady[i].rate > 0)
 * goes on as a skip at those rates, for as long as a skip could last (each flow keeps
 * its tail), if that is at least MinSkip. An interrupt before `dur` cuts the replay:
 * each flow gets the elapsed fraction of its bytes, no snapshot and no completion; one
 * during the skip that follows counts the skip up to it. FALSE (nothing done) if a flow
 * is not eligible. */
gboolean wh_ff_replay(WhWormhole *wh, const WhPartition *p, const uint32_t *flows,
                      const uint64_t *bytes, const uint8_t *snaps, const WhOutcomeSteady *steady,
                      uint32_t n, uint32_t done, WhTime dur);

/* Memo mode: parks partition `p` (of two flows or more) to replay a drained outcome:
 * flows[i] (all of p's flows) completes drain[i].fin after its start; until then it is parked (the
 * partition stays parked until the last completion, its rebuilds held). Refused (FALSE, nothing
 * done) when a flow is not eligible, is not of drain[i].size bytes, did not start
 * drain[i].lag after the earliest of them, or has not about drain[i].left bytes left to
 * send.
 * An interrupt ends it: each remaining flow gets the elapsed fraction of its bytes and
 * runs on packet by packet. */
gboolean wh_ff_drain(WhWormhole *wh, const WhPartition *p, const uint32_t *flows,
                     const WhOutcomeDrain *drain, uint32_t n);

/* Parking (see wormhole-scheduler.c). `interrupt` is called when an event is inserted
 * for a parked owner (it joins the slot's late events). Slots are small integers. */
typedef void (*WhParkInterruptFn)(void *data, uint32_t slot);
void wh_wormhole_park_setup(WhScheduler *self, uint32_t n_ports, WhParkInterruptFn interrupt,
                            void *data);
uint32_t wh_wormhole_park_open(WhScheduler *self);
/* Marks an owner (a port id, or a flow id | WH_OWNER_FLOW) parked in `slot`
 * (WH_PARTITION_NONE: not parked). Its pending events must be parked alongside. */
void wh_wormhole_park_owner(WhScheduler *self, uint32_t owner, uint32_t slot);
uint32_t wh_wormhole_owner_slot(const WhScheduler *self, uint32_t owner);
/* The park slot of flow `flow`, of port `port` (WH_PARTITION_NONE: not parked). */
static inline uint32_t wh_flow_park_slot(const WhWormhole *wh, uint32_t flow)
{
  return wh_wormhole_owner_slot(wh->sim->sched, flow | WH_OWNER_FLOW);
}
static inline uint32_t wh_port_park_slot(const WhWormhole *wh, uint32_t port)
{
  return wh_wormhole_owner_slot(wh->sim->sched, port);
}
/* Moves a pending event from the inner scheduler into the slot. */
void wh_wormhole_park_event(WhScheduler *self, WhEvent *ev, uint32_t slot);
/* Puts one event of a parked owner back (`shift` later if it was parked, as it is if it
 * was late); its owner is then unmarked by the caller. */
void wh_wormhole_unpark_event(WhScheduler *self, WhEvent *ev, WhTime shift);
/* Puts the slot's events back (parked ones `shift` later, late ones as they are) and
 * frees the slot; the owners must be unmarked first. Returns the events put back, the
 * late ones among them in *late (nullable). */
uint32_t wh_wormhole_park_close(WhScheduler *self, uint32_t slot, WhTime shift, uint32_t *late);
/* For checks: the events in a slot's list (parked or late), whether it holds `ev`, and
 * all parked events. O(events in the slot). */
uint32_t wh_wormhole_park_count(const WhScheduler *self, uint32_t slot, gboolean late);
gboolean wh_wormhole_park_holds(const WhScheduler *self, uint32_t slot, const WhEvent *ev);
gboolean wh_wormhole_park_holds_any(const WhScheduler *self, const WhEvent *ev);
uint64_t wh_wormhole_parked_events(const WhScheduler *self);

#endif
