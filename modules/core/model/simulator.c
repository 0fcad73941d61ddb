/* Simulator loop and event pool; see simulator.h. Slabs of 4096 events are never
 * returned to the system before wh_sim_free, so a run's event memory is bounded by
 * its peak number of pending events. */
#include "simulator.h"

#include "bulk.h"

#include <stdlib.h>
#include <time.h>

#define SLAB_EVENTS 4096

WhSim *wh_sim_new(const WhSchedulerClass *klass)
{
  g_return_val_if_fail(klass != NULL, NULL);
  return wh_sim_new_with_scheduler(klass->create());
}

WhSim *wh_sim_new_with_scheduler(WhScheduler *sched)
{
  g_return_val_if_fail(sched != NULL, NULL);
  WhSim *sim = g_new0(WhSim, 1);
  sim->sched = sched;
  sim->slabs = g_ptr_array_new();
  sim->slab_bulk = wh_bulk_new();
  sim->stop_at = WH_TIME_MAX;
  sim->due_limit = WH_TIME_HORIZON;
  sim->monitor_next = WH_TIME_MAX;
  return sim;
}

void wh_sim_free(WhSim *sim)
{
  if (sim == NULL)
    return;
  sim->sched->klass->destroy(sim->sched);
  g_ptr_array_unref(sim->slabs);
  wh_bulk_free(sim->slab_bulk);
  g_free(sim->monitors);
  g_free(sim);
}

WhEvent *wh_sim_event_alloc(WhSim *sim)
{
  WhEvent *slab = wh_bulk_alloc0(sim->slab_bulk, sizeof(WhEvent) * SLAB_EVENTS);
  g_ptr_array_add(sim->slabs, slab);
  for (size_t i = 0; i < SLAB_EVENTS - 1; i++)
    slab[i].next = &slab[i + 1];
  slab[SLAB_EVENTS - 1].next = sim->free_list;
  sim->free_list = slab;
  return slab;
}

static inline void release(WhSim *sim, WhEvent *ev)
{
  ev->fn = NULL;
  ev->next = sim->free_list;
  sim->free_list = ev;
  sim->events_live--;
}

void wh_sim_cancel(WhSim *sim, WhEvent *ev)
{
  g_return_if_fail(ev != NULL && ev->fn != NULL);
  sim->sched->klass->remove(sim->sched, ev);
  release(sim, ev);
}

WhEvent *wh_sim_schedule_at_seq(WhSim *sim, WhTime at, uint64_t seq, WhEventFn fn, void *ctx,
                                uint64_t arg, uint32_t owner)
{
  g_return_val_if_fail(seq < sim->next_seq, NULL);
  return wh_sim_insert_new(sim, wh_sim_checked_time(sim, at), seq, fn, ctx, arg, owner);
}

void wh_sim_park(WhSim *sim, WhOwnerMatch match, void *data, GPtrArray *parked)
{
  guint first = parked->len;
  for (guint s = 0; s < sim->slabs->len; s++) {
    WhEvent *slab = sim->slabs->pdata[s];
    for (size_t i = 0; i < SLAB_EVENTS; i++) {
      WhEvent *ev = &slab[i];
      if (ev->fn == NULL || !match(ev->owner, data))
        continue;
      sim->sched->klass->remove(sim->sched, ev);
      g_ptr_array_add(parked, ev);
    }
  }
  /* a deterministic order, whatever the slab layout */
  qsort(parked->pdata + first, parked->len - first, sizeof(gpointer), wh_event_ptr_order);
}

void wh_sim_unpark(WhSim *sim, GPtrArray *parked, WhTime shift)
{
  for (guint i = 0; i < parked->len; i++) {
    WhEvent *ev = parked->pdata[i];
    ev->time += shift;
    sim->sched->klass->insert(sim->sched, ev);
  }
  g_ptr_array_set_size(parked, 0);
}

static void monitors_update_next(WhSim *sim)
{
  WhTime next = WH_TIME_MAX;
  for (uint32_t i = 0; i < sim->n_monitors; i++)
    next = MIN(next, sim->monitors[i].next);
  sim->monitor_next = next;
}

uint32_t wh_sim_add_monitor(WhSim *sim, WhMonitorFn fn, void *ctx, WhTime first)
{
  g_return_val_if_fail(fn != NULL, G_MAXUINT32);
  sim->monitors = g_renew(WhMonitor, sim->monitors, sim->n_monitors + 1);
  sim->monitors[sim->n_monitors++] = (WhMonitor){.fn = fn, .ctx = ctx, .next = first};
  monitors_update_next(sim);
  return sim->n_monitors - 1;
}

void wh_sim_monitor_arm(WhSim *sim, uint32_t id, WhTime next)
{
  g_return_if_fail(id < sim->n_monitors);
  sim->monitors[id].next = next;
  if (next < sim->monitor_next)
    sim->monitor_next = next;
  else
    monitors_update_next(sim);
}

/* Calls every monitor that is due at `now`, in the order they were added. */
static void run_monitors(WhSim *sim)
{
  for (uint32_t i = 0; i < sim->n_monitors && !sim->stopped; i++) {
    WhMonitor *m = &sim->monitors[i];
    if (m->next <= sim->now)
      m->next = m->fn(sim, m->ctx);
  }
  monitors_update_next(sim);
}

static double monotonic_s(void)
{
  return (double)g_get_monotonic_time() * 1e-6;
}

void wh_sim_count_events(WhSim *sim, WhEventCounts *counts)
{
  sim->counts = counts;
}

void wh_sim_set_owner_prefetch(WhSim *sim, const void *base, size_t stride, uint32_t n,
                               uint32_t follow)
{
  g_return_if_fail(base == NULL || (stride > 0 && (stride & (stride - 1)) == 0));
  sim->prefetch_base = base;
  sim->prefetch_n = base ? n : 0;
  sim->prefetch_shift = base ? (uint32_t)__builtin_ctzll(stride) : 0;
  sim->prefetch_follow = follow;
}

/* The record of the owner of the event the scheduler expects next, or NULL. */
static inline const char *hint_record(const WhSim *sim, const WhEvent *hint)
{
  if (hint == NULL || hint->owner >= sim->prefetch_n)
    return NULL;
  return sim->prefetch_base + ((size_t)hint->owner << sim->prefetch_shift);
}

/* The event loop, inlined twice: with counts == NULL the counting is compiled out. */
static G_ALWAYS_INLINE inline void run_loop(WhSim *sim, WhEventCounts *counts)
{
  WhScheduler *s = sim->sched;
  WhEvent *(*pop)(WhScheduler *) = s->klass->pop;
  double t0 = monotonic_s();
  sim->interrupted = sim->interrupt != NULL && *sim->interrupt != 0;
  sim->stopped = sim->past_horizon != 0 || sim->interrupted;
  sim->wall_stopped = FALSE;
  gboolean watch = sim->progress != NULL || sim->wall_limit_s > 0 || sim->interrupt != NULL;
  s->hint = NULL;
  while (!sim->stopped) {
    WhEvent *ev = pop(s);
    if (ev == NULL)
      break;
    const char *rec = hint_record(sim, s->hint);
    if (rec) {
      __builtin_prefetch(rec);
      __builtin_prefetch(rec + 64);
    }
    if (G_UNLIKELY(ev->time > sim->due_limit)) {
      if (ev->time > WH_TIME_HORIZON)
        wh_sim_beyond_horizon(sim, ev->time);
      s->klass->insert(s, ev);
      break;
    }
    sim->now = ev->time;
    if (G_UNLIKELY(ev->time >= sim->monitor_next)) {
      run_monitors(sim);
      if (sim->stopped) {
        s->klass->insert(s, ev);
        break;
      }
    }
    if (counts)
      wh_event_counts_add(counts, ev->owner);
    WhEventFn fn = ev->fn;
    void *ctx = ev->ctx;
    uint64_t arg = ev->arg;
    release(sim, ev);
    sim->events_executed++;
    fn(sim, ctx, arg);
    if (rec)
      __builtin_prefetch(*(const void *const *)(rec + sim->prefetch_follow));
    if (G_UNLIKELY(watch && (sim->events_executed & ((1u << 20) - 1)) == 0)) {
      if (sim->interrupt != NULL && *sim->interrupt != 0) {
        sim->interrupted = TRUE;
        break;
      }
      double dt = monotonic_s() - t0;
      if (sim->wall_limit_s > 0 && dt > sim->wall_limit_s) {
        sim->wall_stopped = TRUE;
        break;
      }
      if (sim->progress != NULL)
        sim->progress(sim, dt, sim->progress_ctx);
    }
  }
}

void wh_sim_run(WhSim *sim)
{
  if (sim->counts)
    run_loop(sim, sim->counts);
  else
    run_loop(sim, NULL);
}

WhTime wh_sim_beyond_horizon(WhSim *sim, WhTime at)
{
  if (sim->past_horizon == 0)
    sim->past_horizon = at < sim->now ? WH_TIME_MAX : at;
  sim->stopped = TRUE;
  return WH_TIME_HORIZON + 1;
}

void wh_sim_stop_at(WhSim *sim, WhTime t)
{
  sim->stop_at = t;
  sim->due_limit = MIN(t, WH_TIME_HORIZON);
}

void wh_sim_stop(WhSim *sim)
{
  sim->stopped = TRUE;
}

gboolean wh_sim_poll_interrupt(WhSim *sim)
{
  if (sim->interrupt == NULL || *sim->interrupt == 0)
    return FALSE;
  sim->interrupted = TRUE;
  sim->stopped = TRUE;
  return TRUE;
}

size_t wh_sim_pending(const WhSim *sim)
{
  return sim->sched->klass->size(sim->sched);
}
