/* `whsim plan --verify`: the chosen mesh emitted as a scenario, simulated with Wormhole
 * (skip mode) on a Frontier preset of the emitted size, and the plan set beside the
 * simulation term by term. The simulation's compute durations are the workload
 * builder's own (FLOPs of each op over PeakFlops x Efficiency: a roofline of the op
 * shapes at one efficiency, e_max), not the planner's per-GEMM times, so the compute
 * term tests the planner's FLOP and efficiency model; the communication terms test its
 * link model against the packet-level network. Cost: one simulation of one iteration. */
#include <math.h>
#include <string.h>

#include "piper.h"
#include "run.h"
#include "scenario.h"
#include "wh-error.h"

/* Op durations of the simulated iteration, per term (seconds). */
typedef struct {
  double compute_mb;   /* compute per micro-batch of the busiest rank */
  double a2a;          /* mean all-to-all(v) duration */
  double p2p;          /* mean stage-boundary send duration */
  double ar;           /* longest gradient all-reduce */
  double step;         /* the iteration */
  uint32_t n_a2a_rank; /* all-to-alls of the busiest rank's stage per micro-batch */
} Terms;

static void sim_terms(const WhRun *run, uint32_t ranks, uint32_t m, Terms *t)
{
  const WhWorkload *w = wh_run_workload(run);
  g_autofree double *busy = g_new0(double, ranks);
  double a2a = 0, p2p = 0;
  uint32_t n_a2a = 0, n_p2p = 0;
  memset(t, 0, sizeof *t);
  for (uint32_t i = 0; i < wh_workload_n_ops(w); i++) {
    WhOpInfo o;
    wh_workload_op_info(w, i, &o);
    if (!o.ended)
      continue;
    double d = wh_time_to_s(o.end - o.start);
    if (o.kind == WH_OP_COMPUTE && o.rank < ranks)
      busy[o.rank] += d;
    else if (o.kind == WH_OP_SEND)
      p2p += d, n_p2p++;
    else if (o.coll == WH_COLL_ALL_TO_ALL || o.coll == WH_COLL_ALL_TO_ALLV)
      a2a += d, n_a2a++;
    else if (o.coll == WH_COLL_ALL_REDUCE)
      t->ar = MAX(t->ar, d);
  }
  for (uint32_t r = 0; r < ranks; r++)
    t->compute_mb = MAX(t->compute_mb, busy[r] / m);
  t->a2a = n_a2a ? a2a / n_a2a : 0;
  t->p2p = n_p2p ? p2p / n_p2p : 0;
  WhIterationStats st;
  wh_run_iteration_stats(run, 0, &st);
  t->step = wh_time_to_s(st.time);
}

/* The plan's terms for candidate `k`, as the planner adds them up. */
static void plan_terms(const WhPiperModel *m, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                       const WhPiperNet *net, const WhPiperCandidate *k, Terms *t)
{
  double T = o->tokens > 0 ? o->tokens : m->seq;
  double bwd = o->recompute ? 3 : 2;
  WhPiperLayerTime lt;
  wh_piper_layer_time(c, m, T, k->ep, o->flash, &lt);
  uint32_t l = wh_piper_stage_layers(m, k->pp, 0);
  double head = wh_piper_head_time(c, m, T);
  memset(t, 0, sizeof *t);
  /* the busiest stage: the first (most layers) or the last (the head) */
  uint32_t l_last = wh_piper_stage_layers(m, k->pp, k->pp - 1);
  t->compute_mb = MAX(l * (lt.attn + lt.expert), l_last * (lt.attn + lt.expert) + head) * (1 + bwd);
  t->a2a = wh_piper_a2a_time(net, m, T, k->ep);
  t->p2p = k->t_p2p;
  t->ar = k->t_ar;
  t->step = k->step;
  t->n_a2a_rank = m->experts > 1 && k->ep > 1 ? l * (o->recompute ? 6 : 4) : 0;
}

static void row(GString *s, const char *term, double plan, double sim)
{
  g_string_append_printf(s, "%-28s %12.3f %12.3f ", term, plan * 1e3, sim * 1e3);
  if (plan > 0 && sim > 0)
    g_string_append_printf(s, "%+8.1f%%\n", (sim / plan - 1) * 100);
  else
    g_string_append(s, "       -\n");
}

const char *const wh_piper_verify_term_names[WH_PIPER_VERIFY_TERMS] = {
    "compute per micro-batch", "pipeline send",     "expert all-to-all",
    "gradient all-reduce",     "bubble (residual)", "step"};

gboolean wh_piper_verify(const WhPiperModel *m, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                         const WhPiperNet *net, const WhPiperCandidate *k, const char *path,
                         GString *out, double terms[2 * WH_PIPER_VERIFY_TERMS], GError **error)
{
  if (!k->feasible)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "--verify: PP%uxEP%u does not fit: %s", k->pp, k->ep, k->reason);
  WhPiperPlanOpts ro = *o;
  ro.roofline = TRUE;
  if (!wh_piper_emit_scenario(m, &ro, c, k, path, NULL, error))
    return FALSE;
  g_autoptr(WhScenario) sc = wh_scenario_load(path, error);
  if (!sc)
    return FALSE;
  char *sets[] = {"wh::Wormhole::Mode=skip", NULL};
  gint64 t0 = g_get_monotonic_time();
  g_autoptr(WhRun) run = wh_run_new(sc, &(WhRunOptions){.sets = sets}, error);
  if (!run)
    return FALSE;
  wh_run_execute(run);
  g_auto(WhRunStatus) status = {0};
  wh_run_status(run, &status);
  if (status.failed || !wh_workload_done(wh_run_workload(run))) {
    /* not bad input: the simulation failed (exit status 1) */
    return wh_error_set(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                        "--verify: the simulation of %s did not finish: %s", path,
                        status.message ? status.message : "ops left unfinished");
  }
  double wall = (g_get_monotonic_time() - t0) * 1e-6;
  uint32_t ranks = k->pp * k->ep;
  Terms p, s;
  plan_terms(m, o, c, net, k, &p);
  sim_terms(run, ranks, k->m, &s);
  /* the bubble, on both sides: what the step has beyond M micro-batches of the busiest
   * stage's work (compute, its all-to-alls, two sends) and the all-reduce */
  double pb = p.step - k->m * (p.compute_mb + p.n_a2a_rank * p.a2a + 2 * p.p2p) - p.ar;
  double sb = s.step - k->m * (s.compute_mb + p.n_a2a_rank * s.a2a + 2 * s.p2p) - s.ar;
  g_string_append_printf(out,
                         "verify: PP%uxEP%u, M = %u, %s simulated with Wormhole (skip mode) in "
                         "%.1f s of wall\n",
                         k->pp, k->ep, k->m, path, wall);
  g_string_append_printf(out, "%-28s %12s %12s %9s\n", "term (ms)", "plan", "simulated",
                         "sim/plan");
  const double v[2 * WH_PIPER_VERIFY_TERMS] = {
      p.compute_mb, s.compute_mb, p.p2p, s.p2p, p.a2a, s.a2a, p.ar, s.ar, pb, sb, p.step, s.step};
  for (int i = 0; i < WH_PIPER_VERIFY_TERMS; i++)
    row(out, wh_piper_verify_term_names[i], v[2 * i], v[2 * i + 1]);
  if (terms)
    memcpy(terms, v, sizeof v);
  g_string_append_printf(out,
                         "simulated compute: the workload builder's FLOPs of each op at %.3f of "
                         "%.1f TFLOPS (a roofline of the op shapes, not the planner's per-GEMM "
                         "efficiency); busiest rank, per micro-batch\n",
                         c->e_max, c->peak * 1e-12);
  return TRUE;
}
