/* The simulator: the clock, the event pool and the loop. Events are allocated from a
 * slab pool and recycled, so scheduling never calls malloc in steady state. The loop
 * pops the earliest (time, seq) event, advances the clock and calls its handler.
 * A handler may schedule or cancel other events; an event handle is valid until its
 * handler starts or it is cancelled. */
#ifndef WH_SIMULATOR_H
#define WH_SIMULATOR_H

#include <glib.h>
#include <signal.h>
#include "event.h"
#include "scheduler.h"

/* A monitor's callback: returns when it wants to be called next (> now), or
 * WH_TIME_MAX for never (until re-armed with wh_sim_monitor_arm). */
typedef WhTime (*WhMonitorFn)(WhSim *sim, void *ctx);

/* A progress callback: called on the cold path (every 2^20 events) with the wall time
 * the current wh_sim_run has taken so far. It must not change the model. */
typedef void (*WhSimProgressFn)(WhSim *sim, double wall_s, void *ctx);

typedef struct {
  WhMonitorFn fn;
  void *ctx;
  WhTime next;
} WhMonitor;

struct WhSim {
  WhTime now;
  uint64_t next_seq;
  uint64_t events_executed;
  WhScheduler *sched;
  WhEvent *free_list;
  GPtrArray *slabs; /* the event pool's slabs, from slab_bulk */
  struct WhBulk *slab_bulk;
  uint64_t events_live; /* allocated and not yet returned to the pool */
  WhTime stop_at;
  WhTime due_limit; /* MIN(stop_at, WH_TIME_HORIZON): the loop's one compare per event */
  gboolean stopped;
  /* Optional progress callback, wall-clock limit and interrupt flag (cold: checked
   * every 2^20 events, and the flag once more when a run starts). */
  WhSimProgressFn progress; /* nullable */
  void *progress_ctx;
  double wall_limit_s;   /* > 0: stop once the loop has run this long */
  gboolean wall_stopped; /* the last run stopped at the wall-clock limit */
  /* nullable: a flag a signal handler sets (non-zero: stop); the run then stops
   * between two events, leaving the rest queued, and sets `interrupted` */
  const volatile sig_atomic_t *interrupt;
  gboolean interrupted; /* the last run stopped because *interrupt was set */
  /* Monitors (a deadlock watchdog, an accelerator's sampler): each is called once the
   * next event's time reaches its own next time, before that event runs, with `now` at
   * that time, and returns its next time (WH_TIME_MAX: none). Monitors add no events, so
   * they change no event counts; one may stop the run (the event then stays queued).
   * monitor_next is the earliest of their next times. */
  WhMonitor *monitors;
  uint32_t n_monitors;
  WhTime monitor_next;
  WhTime past_horizon;   /* 0, or a time beyond WH_TIME_HORIZON that came due: stopped */
  WhEventCounts *counts; /* nullable: every event run is counted by owner */
  /* Owner prefetch (wh_sim_set_owner_prefetch): owner o < prefetch_n has its record at
   * prefetch_base + (o << prefetch_shift), a pointer to follow at prefetch_follow */
  const char *prefetch_base;
  uint32_t prefetch_n;
  uint32_t prefetch_shift;
  uint32_t prefetch_follow;
};

/* (transfer full) */
WhSim *wh_sim_new(const WhSchedulerClass *klass);
/* Runs on `sched` (transfer full), e.g. a scheduler that wraps another. */
WhSim *wh_sim_new_with_scheduler(WhScheduler *sched);
void wh_sim_free(WhSim *sim);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhSim, wh_sim_free)

/* Counts every event run from the next wh_sim_run on against its owner in `counts`
 * (transfer none; NULL: stop counting). With none, the loop pays nothing for it: it is
 * chosen once per wh_sim_run. */
void wh_sim_count_events(WhSim *sim, WhEventCounts *counts);

/* Owners 0..n-1 have records of `stride` bytes (a power of two) from `base` (transfer
 * none; NULL: none), e.g. the network's ports, each holding at byte `follow` a pointer
 * (nullable) to what its next event most likely reads first (a port's head packet in
 * flight). Once an event is popped, the loop prefetches the first two cache lines of
 * the record of the owner of the event the scheduler expects next (WhScheduler.hint),
 * and once the event has run, the object that record's pointer names: that event's
 * misses overlap this one's work. */
void wh_sim_set_owner_prefetch(WhSim *sim, const void *base, size_t stride, uint32_t n,
                               uint32_t follow);

static inline WhTime wh_sim_now(const WhSim *sim)
{
  return sim->now;
}

/* Slabs the event pool has allocated so far (each holds a fixed number of events). */
static inline guint wh_sim_pool_slabs(const WhSim *sim)
{
  return sim->slabs->len;
}

WhEvent *wh_sim_event_alloc(WhSim *sim);
/* Cold: an event due past WH_TIME_HORIZON, or asked for before now (a wrapped sum):
 * stops the run. */
WhTime wh_sim_beyond_horizon(WhSim *sim, WhTime at);

/* `at`, checked for scheduling: a time before now can only be a wrapped sum, which
 * stops the run (the event then goes past the horizon). A time past the horizon is
 * caught by wh_sim_run when it comes due (one compare per event there, none here). */
static inline WhTime wh_sim_checked_time(WhSim *sim, WhTime at)
{
  return G_UNLIKELY(at < sim->now) ? wh_sim_beyond_horizon(sim, at) : at;
}

/* Takes an event from the pool and inserts it at (at, seq), `at` already checked; the
 * body of the two schedule calls below. */
static inline WhEvent *wh_sim_insert_new(WhSim *sim, WhTime at, uint64_t seq, WhEventFn fn,
                                         void *ctx, uint64_t arg, uint32_t owner)
{
  WhEvent *ev = sim->free_list ? sim->free_list : wh_sim_event_alloc(sim);
  sim->free_list = ev->next;
  sim->events_live++;
  ev->time = at;
  ev->seq = seq;
  ev->fn = fn;
  ev->ctx = ctx;
  ev->arg = arg;
  ev->owner = owner;
  sim->sched->klass->insert(sim->sched, ev);
  return ev;
}

/* Schedules fn(sim, ctx, arg) at absolute time `at` (>= now). Returns the event
 * handle (transfer none), valid until it runs or is cancelled. */
static inline WhEvent *wh_sim_schedule_at(WhSim *sim, WhTime at, WhEventFn fn, void *ctx,
                                          uint64_t arg, uint32_t owner)
{
  at = wh_sim_checked_time(sim, at);
  return wh_sim_insert_new(sim, at, sim->next_seq++, fn, ctx, arg, owner);
}

static inline WhEvent *wh_sim_schedule(WhSim *sim, WhTime delay, WhEventFn fn, void *ctx,
                                       uint64_t arg, uint32_t owner)
{
  WhTime at = sim->now + delay;
  return wh_sim_schedule_at(sim, at < delay ? WH_TIME_MAX : at, fn, ctx, arg, owner);
}

/* Removes a pending event and returns it to the pool. */
void wh_sim_cancel(WhSim *sim, WhEvent *ev);

/* Like wh_sim_schedule_at, but with the sequence number of an event taken out earlier
 * (a restored timer), so it keeps its place among events of the same time. */
WhEvent *wh_sim_schedule_at_seq(WhSim *sim, WhTime at, uint64_t seq, WhEventFn fn, void *ctx,
                                uint64_t arg, uint32_t owner);

/* Parking: takes every pending event whose owner satisfies `match` out of the
 * scheduler into `parked` (a GPtrArray of WhEvent*, in (time, seq) order), so a part
 * of the model can be held still while the rest runs; wh_sim_unpark puts them back
 * `shift` later, keeping their sequence numbers. Cost: one scan of the event pool,
 * O(pool + parked log parked): for rare operations, not per packet. */
typedef gboolean (*WhOwnerMatch)(uint32_t owner, void *data);
void wh_sim_park(WhSim *sim, WhOwnerMatch match, void *data, GPtrArray *parked);
void wh_sim_unpark(WhSim *sim, GPtrArray *parked, WhTime shift);

/* For work inside one event that can take long (an observer filling samples): when the
 * interrupt flag is set, stops the run as the loop's own check would (`interrupted`),
 * and returns TRUE. Cold: one load when no signal came. */
gboolean wh_sim_poll_interrupt(WhSim *sim);

/* Runs until no event is left, wh_sim_stop() is called, or the next event lies
 * beyond the stop time set with wh_sim_stop_at() or beyond WH_TIME_HORIZON (then
 * past_horizon is set); an event that stops the run stays queued. */
void wh_sim_run(WhSim *sim);
void wh_sim_stop_at(WhSim *sim, WhTime t);
void wh_sim_stop(WhSim *sim);

size_t wh_sim_pending(const WhSim *sim);

/* Adds a monitor first called once an event reaches `first` (WH_TIME_MAX: not yet);
 * monitors run in the order they were added. Returns its handle for
 * wh_sim_monitor_arm. Cold path. */
uint32_t wh_sim_add_monitor(WhSim *sim, WhMonitorFn fn, void *ctx, WhTime first);
/* Sets when monitor `id` is next called (from anywhere, e.g. an event handler). */
void wh_sim_monitor_arm(WhSim *sim, uint32_t id, WhTime next);

#endif
