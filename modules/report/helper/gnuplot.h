/* Running gnuplot, the plotting program whsim's pictures come from (`whsim compare`'s
 * SVGs, `whsim plot`), and quoting text for its scripts. A script is written to a
 * temporary file and gnuplot runs on it as a child process in a working directory the
 * caller names, its standard error discarded. Text that came from an input (a scenario
 * name, a CSV field, a directory name) enters a script only through wh_gnuplot_quote:
 * gnuplot expands backticks (a shell command) and `@` macros in double-quoted strings
 * and runs a line starting with `!`, but takes a single-quoted string literally, a
 * doubled quote standing for one. Cost: one process per run; a quote is one pass. */
#ifndef WH_GNUPLOT_H
#define WH_GNUPLOT_H

#include <glib.h>

/* The characters of a quoted label kept; longer text is cut and ends in "...". */
#define WH_GNUPLOT_MAX_LABEL 120

/* The gnuplot program on the PATH, or NULL. (transfer full) */
char *wh_gnuplot_find(void);

/* `text` (nullable: empty) as a complete single-quoted gnuplot string literal, quotes
 * included, safe anywhere a string may stand: a quote is doubled (but one at the start
 * or after another becomes U+2019, as gnuplot reads a doubled quote as one only after
 * another character), invalid UTF-8 is
 * replaced (U+FFFD), control characters (newlines among them) and the characters an
 * SVG document may not hold become spaces, and it is cut after WH_GNUPLOT_MAX_LABEL
 * characters. Use with `noenhanced` terminals, so that `^`, `_`, `{` and `@` are
 * drawn as they are. (transfer full) */
char *wh_gnuplot_quote(const char *text);

/* Runs `gnuplot` on `script` in directory `workdir` (nullable: a new empty temporary
 * directory, removed after), so the script's relative `set output` names land there. TRUE when
 * gnuplot ran and exited 0; then `out` (nullable) receives its standard output (transfer full). */
gboolean wh_gnuplot_run(const char *gnuplot, const char *script, const char *workdir, char **out);

#endif
