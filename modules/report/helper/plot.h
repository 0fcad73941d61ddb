/* `whsim plot`: pictures of one run's outputs, or of several runs overlaid, drawn by
 * gnuplot as PNG and SVG into a plots/ directory. From flows.csv the FCT CDF (and the
 * slowdown against flow size when sizes vary, the ideal time being the size at the
 * sender's link rate from links.csv, for senders with one port); from ops.csv a
 * timeline of the ops per rank; from rates.csv and queues.csv the delivered rate and
 * the largest queue over time; from links.csv the CDF of link busy time per tier; from
 * compare-flows.csv (a `whsim compare` directory, whose runs exact/ and wormhole/ are
 * then overlaid too) the CDF of Wormhole's per-flow FCT error. A plot is drawn when at
 * least one run has its input. Every input is a regular file of at most
 * WH_PLOT_MAX_INPUT_BYTES, read as RFC 4180 records (csv.h). The script gnuplot runs holds only its
 * own commands, numbers it formatted and labels quoted by wh_gnuplot_quote. The pictures are drawn
 * into a staging directory and, once all are drawn, renamed into plots/ one by one; plots/ keeps
 * every file whose name is not one of plot's own. SIGINT and SIGTERM (the flag `stop` that a signal
 * handler sets, nullable) stop it between steps with nothing written. Cost: one pass over each CSV
 * file, its fields kept (about the file's size, plus 4 bytes per field), and one gnuplot process;
 * series of more than a few thousand points are thinned to evenly spaced quantiles or samples. */
#ifndef WH_PLOT_H
#define WH_PLOT_H

#include <glib.h>
#include <signal.h>

/* The cap on each CSV file plot reads, in bytes (256 MiB). */
#define WH_PLOT_MAX_INPUT_BYTES ((gsize)256 << 20)

#define WH_PLOT_ERROR (wh_plot_error_quark())
GQuark wh_plot_error_quark(void);

typedef enum {
  WH_PLOT_ERROR_INPUT,       /* bad input: no gnuplot, not a run directory, a malformed,
                                too large or not regular CSV file, plots/ not a directory */
  WH_PLOT_ERROR_FAILED,      /* gnuplot failed or the directory could not be written */
  WH_PLOT_ERROR_INTERRUPTED, /* the caller's interrupt flag was set (SIGINT, SIGTERM) */
} WhPlotError;

/* Plots the runs in `dirs` (NULL-terminated, at least one; series are labelled by each
 * directory's name) into out_dir/plots/ (created when missing), replacing the files
 * of an earlier plot there: the names plot draws (fct-cdf, slowdown-vs-size,
 * op-timeline, op-timeline-N, rates, queues, link-utilization, fct-error-cdf, each
 * .png and .svg) that this plot does not draw are removed, every other file is kept.
 * `written` (nullable) receives the names of the files drawn (transfer full
 * strings). `stop` (nullable): an interrupt flag; once set, plot stops with
 * WH_PLOT_ERROR_INTERRUPTED and writes nothing. */
gboolean wh_plot_runs(char **dirs, const char *out_dir, GPtrArray *written,
                      const volatile sig_atomic_t *stop, GError **error);

/* The gnuplot script wh_plot_runs would run for `dirs` (transfer full), each input
 * capped at `max_input_bytes`; `files` (nullable) receives the names it draws
 * (transfer full strings). For tests and the fuzzer: it runs nothing. */
char *wh_plot_script(char **dirs, gsize max_input_bytes, GPtrArray *files,
                     const volatile sig_atomic_t *stop, GError **error);

#endif
