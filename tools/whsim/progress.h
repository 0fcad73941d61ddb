/* The status line of a long run: one line on stderr, rewritten in place on a terminal,
 * with the simulated time, the ops or flows done of their total, the event rate and,
 * when the fraction of work done is known, an estimate of the wall time left. It is
 * fed by a run's progress callback (run.h: wh_progress_run_callback), from the
 * simulator's cold path (every 2^20 events), adds no events and appears only after a
 * second of work. Cost: one formatted write at most every quarter second
 * (every five seconds when stderr is not a terminal). */
#ifndef WH_PROGRESS_H
#define WH_PROGRESS_H

#include <glib.h>
#include <stdio.h>
#include "run.h"

typedef enum {
  WH_PROGRESS_AUTO,   /* only when stderr is a terminal (the default) */
  WH_PROGRESS_ALWAYS, /* also when it is not: one line per update */
  WH_PROGRESS_NEVER,
} WhProgressMode;

/* Parses "auto", "always" or "never". */
gboolean wh_progress_mode_parse(const char *text, WhProgressMode *out);

/* The text of the status line (no line ending), after `label` and ": " when it is not
 * NULL. (transfer full) */
char *wh_progress_format(const WhRunProgress *s, const char *label);

typedef struct WhProgress WhProgress;

/* A status line on `out` (transfer none), prefixed with `label` (nullable, transfer
 * none, must outlive it); NULL when `mode` shows nothing on `out`. (transfer full) */
WhProgress *wh_progress_new(WhProgressMode mode, FILE *out, const char *label);
/* TRUE when a sample taken now, `wall_s` into the run, would be shown. */
gboolean wh_progress_due(const WhProgress *p, double wall_s);
void wh_progress_show(WhProgress *p, const WhRunProgress *s);
/* A status line for work that has no simulator to feed it (loading and building a
 * scenario): a thread shows "`label`: N s elapsed" as wh_progress_show would, until
 * wh_progress_free. NULL when `mode` shows nothing on `out`. (transfer full) */
WhProgress *wh_progress_new_ticker(WhProgressMode mode, FILE *out, const char *label);

/* Stops a ticker's thread, erases the line from a terminal (nothing else is left
 * behind) and frees. */
void wh_progress_free(WhProgress *p);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhProgress, wh_progress_free)

/* A run's status line: give wh_progress_run_callback as the run options' progress and a
 * WhProgressRun (its mode set, `line` NULL) as progress_data; the line is made when the
 * run starts, with the run's label, and erased when it ends. */
typedef struct {
  WhProgressMode mode;
  WhProgress *line;
} WhProgressRun;
void wh_progress_run_callback(WhRunProgressEvent ev, const WhRunProgress *p, void *data);

#endif
