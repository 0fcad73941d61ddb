/* `whsim plot`: pictures of one run's outputs, or of several runs overlaid, drawn by
 * gnuplot as PNG and SVG into a plots/ directory. From flows.csv the FCT CDF (and the
 * slowdown against flow size when sizes vary, the ideal time being the size at the
 * sender's link rate from links.csv, for senders with one port); from ops.csv a
 * timeline of the ops per rank; from rates.csv and queues.csv the delivered rate and
 * the largest queue over time; from links.csv the CDF of link busy time per tier; from
 * compare-flows.csv (a `whsim compare` directory, whose runs exact/ and wormhole/ are
 * then overlaid too) the CDF of Wormhole's per-flow FCT error. A plot is drawn when at
 * least one run has its input. The directory appears complete or not at all: the
 * files are drawn into a staging directory that is renamed into place. Cost: one pass
 * over each CSV file and one gnuplot process; series of more than a few thousand
 * points are thinned to evenly spaced quantiles or samples. */
#ifndef WH_PLOT_H
#define WH_PLOT_H

#include <glib.h>

#define WH_PLOT_ERROR (wh_plot_error_quark())
GQuark wh_plot_error_quark(void);

typedef enum {
  WH_PLOT_ERROR_INPUT,  /* bad input: no gnuplot, not a run directory, a malformed CSV */
  WH_PLOT_ERROR_FAILED, /* gnuplot failed or the directory could not be written */
} WhPlotError;

/* Plots the runs in `dirs` (NULL-terminated, at least one; series are labelled by each
 * directory's name) into out_dir/plots/, replacing an earlier plots/ there. `written`
 * (nullable) receives the names of the files drawn (transfer full strings). */
gboolean wh_plot_runs(char **dirs, const char *out_dir, GPtrArray *written, GError **error);

#endif
