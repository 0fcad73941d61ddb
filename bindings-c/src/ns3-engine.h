/* The ns-3 engine of whsim (`whsim run --engine ns3`): the scenario's network and
 * flows, already built by the native engine's loader, are rebuilt on stock ns-3
 * through the C API (bindings-c/include/wh-ns3.h) and run there; the outputs have the
 * native engine's format. Only what ns-3 can express is accepted: DCTCP (TCP) flows
 * over lossy ECN-marking queues. PFC, the RDMA congestion controls, INT and workloads
 * are refused with an error, not approximated. Cold path. */
#ifndef WH_NS3_ENGINE_H
#define WH_NS3_ENGINE_H

#include <glib.h>
#include "run.h"

typedef struct {
  /* nullable: a project scheduler ("heap", "calendar") to run ns-3's event list on
   * instead of ns-3's MapScheduler */
  const char *scheduler;
  /* nullable: "red" (default): ns-3's RED queue disc marks as a step at enqueue;
   * "dequeue": a hook queue disc marks at dequeue from C, as the native engine does */
  const char *marking;
  /* nullable: "observe" runs Wormhole's steady-state monitor on ns-3
   * (wh-ns3-wormhole.h) with the scenario's wh::Wormhole parameters and writes
   * DIR/wormhole-ns3.json; results and events are those of a run without it */
  const char *wormhole;
  gboolean quiet; /* print nothing on success */
} WhNs3EngineOptions;

/* Checks that the run and the options can be expressed on ns-3 (error names the
 * scenario or the option). */
gboolean wh_ns3_engine_check(const WhRun *run, const WhNs3EngineOptions *opts, GError **error);

/* Runs the scenario on ns-3 (one per process) and writes DIR/summary.json and
 * DIR/flows.csv; prints a short report unless opts->quiet. */
gboolean wh_ns3_engine_run(WhRun *run, const char *dir, const WhNs3EngineOptions *opts,
                           GError **error);

#endif
