/* The translator of a run to the inputs of the HPCC project's ns-3 simulator
 * (alibaba-edu/High-Precision-Congestion-Control, scratch/third.cc): its topology file,
 * flow file, config.txt (every key it reads written explicitly, since it ignores
 * unknown ones) and an empty trace list, plus flow-map.csv (which line of its fct.txt
 * is which flow of the run) and notes.txt (the mappings that are not exact). What the
 * HPCC simulator cannot express is refused with an error naming the feature. The
 * mapping is documented in docs/hpcc-ns3.md. Costs one pass over the network and the
 * flows; nothing is simulated. */
#ifndef WH_HPCC_EXPORT_H
#define WH_HPCC_EXPORT_H

#include <glib.h>
#include "run.h"

/* The files written into the output directory, in this order. */
extern const char *const wh_hpcc_export_files[];

/* Checks that the run can be expressed for the HPCC simulator; FALSE with an error
 * (WH_SCENARIO_ERROR_VALUE) naming the scenario and the first feature it cannot
 * express. */
gboolean wh_hpcc_export_check(const WhRun *run, GError **error);

/* Writes the HPCC simulator's inputs for `run` (built, not executed) into `dir` (an
 * existing directory), staged and put in place together; the notes of inexact
 * mappings, one per line, are also returned in `notes` (nullable; transfer full). */
gboolean wh_hpcc_export_write(const WhRun *run, const char *dir, char **notes, GError **error);

#endif
