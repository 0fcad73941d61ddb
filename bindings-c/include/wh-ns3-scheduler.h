/* wh-ns3-scheduler: runs ns-3's event list on one of the project's C schedulers (any
 * WhSchedulerClass: the 4-ary heap, the calendar queue, or a later accelerator's), so
 * the ns-3 reference run and the native engine can share a scheduler and a scheduler
 * can be checked against ns-3's own MapScheduler on real traffic. ns-3 orders events
 * by (timestamp, uid), exactly the project's (time, seq), so the choice never changes
 * a result. Each pending ns-3 event costs one pooled WhEvent (72 bytes) plus a
 * 16-byte slot in a uid-keyed hash table; every operation is one indirect call into
 * the C class plus an O(1) table probe. The shim counts the calls it makes into the
 * C class so a test can prove the events went through it, and offers a conformance
 * check of any class against MapScheduler. Like wh-ns3.h, this is per process: one
 * ns-3 simulation, one scheduler choice. */
#ifndef WH_NS3_SCHEDULER_H
#define WH_NS3_SCHEDULER_H

#include <stdint.h>
#include <glib.h> /* first, outside extern "C": scheduler.h includes it */

#include "wh-ns3.h"

#ifdef __cplusplus
extern "C" {
#endif

#include "scheduler.h"

typedef struct {
  uint64_t inserts;  /* calls to klass->insert */
  uint64_t pops;     /* calls to klass->pop (ns-3's RemoveNext) */
  uint64_t removes;  /* calls to klass->remove (ns-3's Remove, i.e. Simulator::Remove) */
  uint64_t peeks;    /* calls to klass->peek (ns-3's PeekNext; Simulator::Run never
                      * peeks, it pops) */
  uint64_t max_size; /* most events pending at once */
  uint64_t pending;  /* events in the C scheduler now, by its own size() */
} WhNs3SchedulerCounts;

/* Makes ns-3 run its event list on `klass` (every member must be set): creates the
 * ns-3 scheduler "ns3::WhCScheduler" through an ObjectFactory and hands it to
 * Simulator::SetScheduler, which moves the events already scheduled into it. Call
 * after wh_ns3_sim_new and before wh_ns3_run (WH_NS3_ESTATE otherwise); resets the
 * counts. `klass` must outlive the simulation. */
int wh_ns3_use_c_scheduler(const WhSchedulerClass *klass);

/* The counts of the C scheduler last selected in this process (still readable after
 * wh_ns3_sim_free, whose teardown pops the leftover events); WH_NS3_ESTATE if none
 * was selected. Always inserts == pops + removes + pending. */
int wh_ns3_c_scheduler_counts(WhNs3SchedulerCounts *out);

/* A conformance check of `klass` against ns-3's MapScheduler, without a simulation:
 * `ops` random operations (inserts at now + a delay drawn so that times tie often,
 * peeks, pops, removals of random pending events by handle, in a growing then a
 * shrinking phase; `seed` picks them) go to an ns3::WhCScheduler on `klass` and to a
 * MapScheduler, then both are drained, comparing every result. Returns WH_NS3_OK,
 * WH_NS3_EINVAL, or the 1-based index of the first operation where the two disagree
 * (ops + 1: the drain). Touches neither the simulation nor the counts. */
int wh_ns3_c_scheduler_check(const WhSchedulerClass *klass, uint32_t ops, uint64_t seed);

/* The same check of the ns3::WhCScheduler an ObjectFactory makes with Class=`name`
 * (heap, calendar, wormhole: the heap with the monitor, which stays detached: it is
 * not the simulation's scheduler); WH_NS3_EINVAL for another name. Leaves the counts as they were.
 */
int wh_ns3_c_scheduler_check_class(const char *name, uint32_t ops, uint64_t seed);

#ifdef __cplusplus
}
#endif

#endif
