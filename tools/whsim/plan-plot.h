/* `whsim plan --plot DIR` (plan-plot.c): a plan's pictures through gnuplot. */
#ifndef WH_PLAN_PLOT_H
#define WH_PLAN_PLOT_H

#include <glib.h>

#include "piper.h"

/* Creates `dir` when missing and checks that a file can be written there; FALSE (with
 * the directory and the reason) otherwise, before anything is planned. */
gboolean wh_plan_plot_check_dir(const char *dir, GError **error);
/* Draws plan-memory.svg (candidate `k`, nullable), plan-tflops.svg (every feasible
 * candidate of `p`) and, with `verify_terms` (nullable; wh_piper_verify's), plan-verify.svg
 * into `dir`, beside the .dat files they plot. */
gboolean wh_plan_plot(const char *dir, const WhPiperModel *m, const WhPiperPlanOpts *o,
                      const WhPiperPlan *p, const WhPiperCandidate *k, const double *verify_terms,
                      GError **error);

#endif
