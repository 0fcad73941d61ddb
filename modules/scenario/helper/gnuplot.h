/* Running gnuplot, the plotting program whsim's pictures come from (`whsim compare`'s
 * SVGs, `whsim plot`). A script is written to a temporary file and gnuplot runs on it
 * as a child process, its standard error discarded. Cost: one process per call. */
#ifndef WH_GNUPLOT_H
#define WH_GNUPLOT_H

#include <glib.h>

/* The gnuplot program on the PATH, or NULL. (transfer full) */
char *wh_gnuplot_find(void);

/* Runs `gnuplot` on `script` in directory `workdir` (nullable: the current one), so the
 * script's relative `set output` names land there. TRUE when gnuplot ran and exited 0;
 * then `out` (nullable) receives its standard output (transfer full). */
gboolean wh_gnuplot_run(const char *gnuplot, const char *script, const char *workdir, char **out);

#endif
