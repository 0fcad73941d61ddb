/* The scheduler class interface: a priority queue of events ordered by (time, seq).
 * Implementations register a WhSchedulerClass with designated initializers; the
 * simulator calls through it once per insert/pop. Every implementation must pop the
 * same sequence of events for the same inserts, so the choice of scheduler never
 * changes results, only speed. Stock classes: a 4-ary heap (O(log n)) and a
 * calendar queue (Brown 1988, O(1) expected for smooth time distributions). */
#ifndef WH_SCHEDULER_H
#define WH_SCHEDULER_H

#include <glib.h>
#include <stddef.h>
#include "event.h"

typedef struct WhScheduler WhScheduler;

typedef struct {
  const char *name; /* short name used by --scheduler */
  const char *type_name;
  const char *help;
  WhScheduler *(*create)(void);
  void (*destroy)(WhScheduler *self);
  void (*insert)(WhScheduler *self, WhEvent *ev);
  WhEvent *(*peek)(WhScheduler *self);
  WhEvent *(*pop)(WhScheduler *self);
  void (*remove)(WhScheduler *self, WhEvent *ev);
  size_t (*size)(const WhScheduler *self);
} WhSchedulerClass;

struct WhScheduler {
  const WhSchedulerClass *klass;
  /* nullable: after a pop, an event that is likely to be popped next, or NULL; only a
   * prefetch hint (the simulator reads its owner before running the popped event), so
   * a wrong one costs time, never results. A class that never sets it leaves NULL. */
  WhEvent *hint;
};

extern const WhSchedulerClass wh_heap_scheduler_class;
extern const WhSchedulerClass wh_calendar_scheduler_class;

/* What a calendar queue did so far: its bucket count, width and pending events now;
 * its operations (inserts and pops), the inserts that scanned their bucket and the
 * events they passed, the buckets pops passed (a direct search, after a year without
 * an event, counts two passes over all of them), and the re-estimates and resizes with
 * the events they moved. Counted always, at no cost per operation beyond the queue's
 * own cost accounting. */
typedef struct {
  uint32_t buckets;
  WhTime width;
  size_t pending;
  uint64_t operations, insert_scans, insert_steps;
  uint64_t pop_steps, direct_searches;
  uint64_t rebuilds, rebuild_events;
} WhCalendarStats;

/* Fills *out and returns TRUE when `sched` is a calendar queue, else FALSE. */
gboolean wh_calendar_scheduler_stats(const WhScheduler *sched, WhCalendarStats *out);

/* The scheduler a run uses when neither its scenario nor the command line names one,
 * and the one Wormhole wraps unless told otherwise: the calendar queue, which pops the
 * heap's order in less time on every large run measured (docs/user-guide.md). */
#define WH_SCHEDULER_DEFAULT "calendar"

/* Looks a class up by short name ("heap", "calendar") or type name
 * ("wh::HeapScheduler"); NULL if unknown. (transfer none) */
const WhSchedulerClass *wh_scheduler_class_lookup(const char *name);

/* All classes known now (stock, then registered), NULL-terminated. (transfer none) */
const WhSchedulerClass *const *wh_scheduler_classes(void);

/* Adds a class at run time, typically from a plugin's wh_plugin_init, so --scheduler
 * and the scenario's scheduler attribute can name it (and Wormhole can wrap it).
 * (transfer none): `klass` must stay valid for the process. A name already taken (or
 * "wormhole") is an error. */
gboolean wh_scheduler_register(const WhSchedulerClass *klass, GError **error);

#endif
