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

/* Checks that the run can be expressed on ns-3 (error names the scenario). */
gboolean wh_ns3_engine_check(const WhRun *run, GError **error);

/* Runs the scenario on ns-3 (one per process) and writes DIR/summary.json and
 * DIR/flows.csv; prints a short report unless `quiet`. */
/* `scheduler` (nullable): a project scheduler ("heap", "calendar") to run ns-3's event
 * list on instead of ns-3's MapScheduler. */
gboolean wh_ns3_engine_run(WhRun *run, const char *dir, const char *scheduler, gboolean quiet,
                           GError **error);

#endif
