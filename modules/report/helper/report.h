/* A run's report: the lines `whsim run` prints, the warnings about what a scenario left
 * to a default, and the size `whsim validate` prints, made from the same numbers as
 * summary.json (wh_run_summary_json, also made in report.c) so that the terminal and
 * the file cannot disagree. Each costs one pass over the flows (the printed report) or
 * the ops (validate's sizes). */
#ifndef WH_REPORT_H
#define WH_REPORT_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include "run.h"

/* The printed report of a run that executed: scenario, network, flows, FCT, workload,
 * congestion, engine, Wormhole (what it skipped, replayed or only detected, in the
 * words of its mode) and, with `out_dir` (nullable), the output files; one line each,
 * every line ending in a newline. (transfer full) */
char *wh_run_report_text(const WhRun *run, const char *out_dir);

/* The warnings about what the scenario left to a default that may not be meant (a
 * SimAI file's fields not simulated, GPUs taken from the hosts), one sentence each
 * without a trailing newline; an empty vector when none. (transfer full) */
char **wh_run_warnings(const WhRun *run);

/* What `whsim validate` prints of a built run: "PATH: valid (hosts, switches, flows)"
 * and, with a workload, its ranks and ops and per kind of op and group size the count
 * of ops and the bytes they move, sorted by kind. (transfer full) */
char *wh_run_validate_text(const WhRun *run, const char *path);

/* The summary as a JSON object (transfer full); `with_wall` adds wall_s. Made from the
 * same numbers as the printed report. */
JsonObject *wh_run_summary_object(const WhRun *run, gboolean with_wall);

/* The same as the text of summary.json (transfer full). */
char *wh_run_summary_json(const WhRun *run, gboolean with_wall);

#endif
