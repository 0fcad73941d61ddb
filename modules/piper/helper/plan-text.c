/* The Piper planner's texts and its scenario: the report of a plan (model, assumptions,
 * one row per candidate), the compute model's calibration, and the Frontier scenario of
 * a candidate (wh_piper_emit_scenario), checked by the scenario loader before it is
 * written. Cost: a plan's candidates once; the emitted text is loaded back once. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dragonfly.h"
#include "file-write.h"
#include "piper.h"
#include "scenario.h"
#include "topology-preset.h"
#include "units.h"
#include "wh-error.h"

static void model_header(GString *t, const WhPiperModel *m)
{
  g_string_append_printf(t,
                         "model %s%s%s%s: d %u, L %u, E %u, top-%u, d_ffn %u (%u matrices), H %u "
                         "(%u KV), s %u, V %u; %.1f B parameters (%.1f B in experts)\n",
                         m->name, m->title ? " (" : "", m->title ? m->title : "",
                         m->title ? ")" : "", m->hidden, m->layers, m->experts, m->top_k, m->ffn,
                         m->ffn_mats, m->heads, m->kv_heads, m->seq, m->vocab,
                         wh_piper_params(m) * 1e-9, wh_piper_expert_params(m) * 1e-9);
  if (m->unmodelled && m->unmodelled[0]) {
    g_autofree char *u = g_strjoinv("; ", m->unmodelled);
    g_string_append_printf(t, "not modelled: %s\n", u);
  }
}

static void heldout_range(const WhPiperCatalogue *cat, const WhPiperCompute *c, double *lo,
                          double *hi, uint32_t *n);

/* The value of M of candidate `k` and where it comes from. */
static const char *m_source(const WhPiperPlanOpts *o)
{
  return o->micro_batches ? "given by --micro-batches"
                          : "4 x PP, assumed: the Piper paper does not publish its micro-batch "
                            "count (--micro-batches sets it)";
}

/* The error range of a plan: the spread of the held-out errors of the built-in
 * catalogue (predicted / paper - 1), and the measured TFLOPS/GCD they allow. */
static void plan_range(GString *t, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                       const WhPiperCandidate *b)
{
  double lo, hi;
  uint32_t n;
  heldout_range(wh_piper_catalogue(), c, &lo, &hi, &n);
  if (!b || n == 0)
    return;
  g_string_append_printf(t,
                         "error range: the %u held-out comparisons (whsim plan --calibration) "
                         "err by %+.1f%% to %+.1f%%; for PP%uxEP%u (predicted %.2f TFLOPS/GCD, "
                         "step %.2f ms) they allow %.2f to %.2f TFLOPS/GCD, a step of %.2f to "
                         "%.2f ms\n",
                         n, lo * 100, hi * 100, b->pp, b->ep, b->tflops, b->step * 1e3,
                         b->tflops / (1 + hi), b->tflops / (1 + lo), b->step * 1e3 * (1 + lo),
                         b->step * 1e3 * (1 + hi));
  g_string_append_printf(t, "M = %u micro-batches for PP%uxEP%u: %s\n", b->m, b->pp, b->ep,
                         m_source(o));
}

/* --skew zipf:S for the best mesh: the busiest GCD's load, the step it makes, and the
 * migration's cost and gain per check. The busiest GCD's expert compute and the
 * all-to-alls into it scale with its load over the mean. */
static void skew_text(GString *t, const WhPiperModel *m, const WhPiperPlanOpts *o,
                      const WhPiperCandidate *b)
{
  if (!b || !o->skew || m->experts < 2 || b->ep < 2)
    return;
  WhPiperSkew k;
  uint32_t rounds = o->migration_rounds ? o->migration_rounds : 8;
  uint32_t period = o->migration_period ? o->migration_period : 1;
  wh_piper_skew(m, b->ep, o->skew_s, rounds, &k);
  double l = b->busiest_layers, bwd = o->recompute ? 3 : 2, a2as = o->recompute ? 6 : 4;
  double per_x = l * ((1 + bwd) * b->t_expert + a2as * b->t_a2a); /* per unit of load */
  double slots = b->m + b->pp - 1;
  double step_skew = b->step + slots * per_x * (k.before - 1);
  double step_mig = b->step + slots * per_x * (k.after - 1);
  /* a swap moves two experts, one each way at once, over the fabric inside a node or
   * a NIC between nodes; every layer of the stage migrates */
  double bytes = wh_piper_expert_state_bytes(m, m->ffn_mats);
  double rate = b->ep <= 8 ? 0.76 * 50e9 : 25e9;
  double cost = k.swaps * l * bytes / rate;
  g_string_append_printf(t,
                         "skew zipf:%g on PP%uxEP%u: busiest GCD load %.3f x the mean (the "
                         "hottest expert alone: %.3f); step %.2f ms (%+.1f%% against balanced "
                         "routing)\n",
                         o->skew_s, b->pp, b->ep, k.before, k.hottest, step_skew * 1e3,
                         (step_skew / b->step - 1) * 100);
  g_string_append_printf(t,
                         "migration every %u step%s: %u swap%s (of at most %u) bring it to %.3f x; "
                         "cost %.2f ms per check (%u x %u layers x 2 experts of %.2f GB at %.1f "
                         "GB/s), gain %.2f ms per period; step %.2f ms after\n",
                         period, period == 1 ? "" : "s", k.swaps, k.swaps == 1 ? "" : "s", rounds,
                         k.after, cost * 1e3, k.swaps, (uint32_t)l, bytes * 1e-9, rate * 1e-9,
                         period * (step_skew - step_mig) * 1e3, step_mig * 1e3);
}

char *wh_piper_migration_table_text(const WhPiperCatalogue *cat)
{
  GString *t = g_string_new(
      "migration cost (the paper's Table IV): full per-layer reassignment, each of 8 GPUs "
      "sending its E/8 experts at 50 GB/s\n");
  g_string_append_printf(t, "%-18s %5s %11s %11s %11s %11s\n", "model", "E/8", "48dd_ffn GB", "GiB",
                         "ms", "own mats GB");
  for (uint32_t i = 0; i < cat->n; i++) {
    const WhPiperModel *m = &cat->models[i];
    if (!wh_piper_in_set(m, "migration"))
      continue;
    double per = MAX(1.0, m->experts / 8.0);
    double paper = per * wh_piper_expert_state_bytes(m, 3);
    g_string_append_printf(t, "%-18s %5.0f %11.2f %11.2f %11.1f %11.2f\n", m->name, per,
                           paper * 1e-9, paper / (1u << 30), paper / (1u << 30) / 50 * 1e3,
                           per * wh_piper_expert_state_bytes(m, m->ffn_mats) * 1e-9);
  }
  return g_string_free(t, FALSE);
}

char *wh_piper_plan_text(const WhPiperModel *m, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                         const WhPiperPlan *p)
{
  GString *t = g_string_new(NULL);
  model_header(t, m);
  double T = o->tokens > 0 ? o->tokens : m->seq;
  char mtext[32] = "4 PP";
  if (o->micro_batches)
    g_snprintf(mtext, sizeof mtext, "%u", o->micro_batches);
  g_string_append_printf(
      t,
      "assumptions: %u GCDs; T = %.0f tokens per GCD per micro-batch; M = %s micro-batches; "
      "FlashAttention %s; activation checkpointing %s; HBM %.1f GB x %.2f usable; memory in the "
      "per-GCD form (literal form, b/M = T/s, for stage 0 beside it); compute model e_max "
      "%.3f, m0 %.0f, n0 %.0f at %.1f TFLOPS peak\n",
      o->gcds, T, mtext, o->flash ? "on" : "off", o->recompute ? "on" : "off", o->hbm * 1e-9,
      o->usable, c->e_max, c->m0, c->n0, c->peak * 1e-12);
  /* rank the feasible candidates by TFLOPS */
  g_autofree uint32_t *rank = g_new0(uint32_t, p->n);
  uint32_t feasible = 0, structural = 0;
  for (uint32_t i = 0; i < p->n; i++) {
    if (p->c[i].mem)
      structural++;
    if (!p->c[i].feasible)
      continue;
    feasible++;
    rank[i] = 1;
    for (uint32_t j = 0; j < p->n; j++) {
      if (p->c[j].feasible &&
          (p->c[j].tflops > p->c[i].tflops || (p->c[j].tflops == p->c[i].tflops && j < i)))
        rank[i]++;
    }
  }
  g_string_append_printf(t, "%7s %4s %4s %5s %10s %10s %10s %10s %10s %7s  %s\n", "mesh", "PP",
                         "EP", "M", "stage0 GB", "lit0 GB", "max GB", "step ms", "TFLOPS/GCD",
                         "MFU", "status");
  for (uint32_t i = 0; i < p->n; i++) {
    const WhPiperCandidate *k = &p->c[i];
    g_autofree char *mesh = g_strdup_printf("%ux%u", k->pp, k->ep);
    if (!k->mem) {
      g_string_append_printf(t, "%7s %4u %4u %5s %10s %10s %10s %10s %10s %7s  no: %s\n", mesh,
                             k->pp, k->ep, "-", "-", "-", "-", "-", "-", "-", k->reason);
      continue;
    }
    double mx = 0;
    for (uint32_t s = 0; s < k->pp; s++)
      mx = MAX(mx, k->mem[s]);
    g_autofree char *status =
        k->feasible ? g_strdup_printf("rank %u", rank[i]) : g_strdup_printf("no: %s", k->reason);
    g_string_append_printf(t, "%7s %4u %4u %5u %10.1f %10.1f %10.1f %10.2f %10.2f %6.1f%%  %s\n",
                           mesh, k->pp, k->ep, k->m, k->mem[0] * 1e-9, k->mem_literal0 * 1e-9,
                           mx * 1e-9, k->step * 1e3, k->tflops, k->mfu * 100, status);
  }
  g_string_append_printf(
      t, "%u candidate%s pass EP | E, PP <= L and EP <= 32; %u fit%s in memory\n", structural,
      structural == 1 ? "" : "s", feasible, feasible == 1 ? "s" : "");
  plan_range(t, o, c, wh_piper_plan_best(p));
  skew_text(t, m, o, wh_piper_plan_best(p));
  for (uint32_t i = 0; i < p->n; i++) {
    const WhPiperCandidate *k = &p->c[i];
    if (!k->mem)
      continue;
    g_string_append_printf(t, "memory per stage, PP%uxEP%u (GB):", k->pp, k->ep);
    for (uint32_t s = 0; s < k->pp; s++)
      g_string_append_printf(t, " %.1f", k->mem[s] * 1e-9);
    g_string_append_printf(t,
                           "\ntime per micro-batch, PP%uxEP%u: forward %.3f ms, backward %.3f "
                           "ms (busiest stage), stage send %.3f ms, all-reduce %.3f ms\n",
                           k->pp, k->ep, k->t_fwd * 1e3, k->t_bwd * 1e3, k->t_p2p * 1e3,
                           k->t_ar * 1e3);
    double slots = k->m + k->pp - 1;
    g_string_append_printf(t,
                           "per layer forward, PP%uxEP%u: attention %.3f ms, experts %.3f ms, "
                           "one all-to-all %.3f ms; bubble %.1f%% of the step ((PP - 1) / (M + "
                           "PP - 1))\n",
                           k->pp, k->ep, k->t_attn * 1e3, k->t_expert * 1e3, k->t_a2a * 1e3,
                           (k->pp - 1) / slots * 100);
  }
  return g_string_free(t, FALSE);
}

/* The smallest power-of-two GCD count (one node or more) with a feasible plan, for held-out full
 * models whose GCD counts are not given. */
static const WhPiperCandidate *plan_smallest(const WhPiperModel *m, WhPiperPlanOpts *o,
                                             const WhPiperCompute *c, const WhPiperNet *net,
                                             WhPiperPlan *p)
{
  for (uint32_t n = WH_DRAGONFLY_NODE_GCDS; n <= 4096; n *= 2) {
    o->gcds = n;
    if (!wh_piper_plan(m, o, c, net, p, NULL))
      continue;
    const WhPiperCandidate *b = wh_piper_plan_best(p);
    if (b)
      return b;
    wh_piper_plan_clear(p);
  }
  return NULL;
}

/* One held-out comparison: a model's full-model or weak-scaling measurement beside the
 * planner's best mesh (flash on, T = s, M = 4 PP; checkpointing where the paper used it). */
typedef struct {
  const WhPiperModel *m;
  double paper, model;
  uint32_t gcds, pp, ep;
  gboolean recompute, fits;
} HeldOut;

/* The held-out comparisons of `cat` (in catalogue order, full model before weak
 * scaling). (transfer full) */
static GArray *heldout(const WhPiperCatalogue *cat, const WhPiperCompute *c)
{
  WhPiperNet net;
  wh_piper_net_default(&net);
  GArray *rows = g_array_new(FALSE, TRUE, sizeof(HeldOut));
  for (uint32_t i = 0; i < cat->n; i++) {
    const WhPiperModel *m = &cat->models[i];
    for (int kind = 0; kind < 2; kind++) {
      double paper = kind == 0 ? m->full_model_tflops : m->weak_tflops;
      if (!(paper > 0))
        continue;
      WhPiperPlanOpts o = {.flash = TRUE,
                           .recompute = kind == 0 && m->full_model_recompute,
                           .hbm = 64.0 * 1024 * 1024 * 1024,
                           .usable = 1.0};
      WhPiperPlan p = {0};
      const WhPiperCandidate *b = NULL;
      if (kind == 0)
        b = plan_smallest(m, &o, c, &net, &p);
      else {
        o.gcds = m->weak_gcds;
        if (wh_piper_plan(m, &o, c, &net, &p, NULL))
          b = wh_piper_plan_best(&p);
      }
      HeldOut h = {.m = m, .paper = paper, .gcds = o.gcds, .recompute = o.recompute};
      if (b) {
        h.fits = TRUE;
        h.model = b->tflops;
        h.pp = b->pp;
        h.ep = b->ep;
      }
      g_array_append_val(rows, h);
      wh_piper_plan_clear(&p);
    }
  }
  return rows;
}

static void heldout_range(const WhPiperCatalogue *cat, const WhPiperCompute *c, double *lo,
                          double *hi, uint32_t *n)
{
  static gsize done = 0;
  static double s_lo, s_hi;
  static uint32_t s_n;
  if (cat == wh_piper_catalogue() && c == wh_piper_compute_default() && done) {
    *lo = s_lo, *hi = s_hi, *n = s_n;
    return;
  }
  g_autoptr(GArray) rows = heldout(cat, c);
  *lo = G_MAXDOUBLE, *hi = -G_MAXDOUBLE, *n = 0;
  for (guint i = 0; i < rows->len; i++) {
    const HeldOut *h = &g_array_index(rows, HeldOut, i);
    if (!h->fits)
      continue;
    double e = h->model / h->paper - 1;
    *lo = MIN(*lo, e);
    *hi = MAX(*hi, e);
    (*n)++;
  }
  if (cat == wh_piper_catalogue() && c == wh_piper_compute_default()) {
    s_lo = *lo, s_hi = *hi, s_n = *n;
    done = 1;
  }
}

char *wh_piper_calibration_text(const WhPiperCatalogue *cat, const WhPiperCompute *c)
{
  GString *t = g_string_new(NULL);
  g_string_append_printf(t,
                         "compute model: efficiency = e_max m/(m+m0) n/(n+n0) k/(k+n0) per GEMM "
                         "(m x k by k x n), e_max %.4f, m0 %.1f, n0 %.1f, peak %.1f TFLOPS\n",
                         c->e_max, c->m0, c->n0, c->peak * 1e-12);
  g_string_append(t, "fitted: one MoE layer on one node (EP 8, T = s = 4096), TFLOPS/GCD\n");
  g_string_append_printf(t, "%-18s %9s %9s %9s\n", "model", "paper", "model", "residual");
  for (uint32_t i = 0; i < cat->n; i++) {
    const WhPiperModel *m = &cat->models[i];
    if (!(m->single_layer_tflops > 0))
      continue;
    double p = wh_piper_single_layer_tflops(c, m);
    g_string_append_printf(t, "%-18s %9.1f %9.1f %+8.1f%%\n", m->name, m->single_layer_tflops, p,
                           (p / m->single_layer_tflops - 1) * 100);
  }
  g_string_append(t, "held out (not fitted), TFLOPS/GCD, flash on, T = s, M = 4 PP:\n");
  g_string_append_printf(t, "%-18s %6s %11s %9s %9s %9s\n", "model", "GCDs", "mesh", "paper",
                         "model", "error");
  g_autoptr(GArray) rows = heldout(cat, c);
  for (guint i = 0; i < rows->len; i++) {
    const HeldOut *h = &g_array_index(rows, HeldOut, i);
    if (h->fits) {
      g_autofree char *mesh = g_strdup_printf("PP%uxEP%u", h->pp, h->ep);
      g_string_append_printf(t, "%-18s %6u %11s %9.2f %9.2f %+8.1f%%%s\n", h->m->name, h->gcds,
                             mesh, h->paper, h->model, (h->model / h->paper - 1) * 100,
                             h->recompute ? " (checkpointing)" : "");
    } else {
      g_string_append_printf(t, "%-18s %6s %11s %9.2f %9s\n", h->m->name, "-", "none fits",
                             h->paper, "-");
    }
  }
  double lo, hi;
  uint32_t n;
  heldout_range(cat, c, &lo, &hi, &n);
  if (n)
    g_string_append_printf(t,
                           "error range of every plan: %+.1f%% to %+.1f%% (the spread of the %u "
                           "held-out errors)\n",
                           lo * 100, hi * 100, n);
  return g_string_free(t, FALSE);
}

gboolean wh_piper_groups(uint32_t gcds, uint32_t requested, uint32_t *out, GError **error)
{
  const WhTopologyPreset *fr = wh_topology_preset_lookup("frontier");
  uint32_t per_group = WH_DRAGONFLY_NODE_GCDS * 128, nodes = gcds / WH_DRAGONFLY_NODE_GCDS;
  uint32_t need = (gcds + per_group - 1) / per_group;
  if (requested && requested < need)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "--groups %u: cannot hold the job: %u GCDs (%u nodes) need at least %u "
                        "groups of 128 nodes",
                        requested, gcds, nodes, need);
  if (requested > fr->groups_max)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "--groups %u: the Frontier preset builds at most %u groups", requested,
                        fr->groups_max);
  *out = requested
             ? requested
             : (nodes >= WH_PIPER_LARGE_JOB_NODES ? MAX(need, WH_PIPER_MIN_LARGE_GROUPS) : need);
  return TRUE;
}

/* The emitted scenario's fixed op times (ps) of candidate `k`; FALSE when one is
 * outside the time horizon. */
static gboolean op_times(const WhPiperModel *m, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                         const WhPiperCandidate *k, const char *path, WhPiperOpTimes *out,
                         GError **error)
{
  double T = o->tokens > 0 ? o->tokens : m->seq;
  WhPiperLayerTime lt;
  wh_piper_layer_time(c, m, T, k->ep, o->flash, &lt);
  const struct {
    const char *field;
    double s;
  } times_s[] = {
      {"AttnTime", lt.attn}, {"ExpertTime", lt.expert}, {"HeadTime", wh_piper_head_time(c, m, T)}};
  uint64_t ps[G_N_ELEMENTS(times_s)];
  for (size_t i = 0; i < G_N_ELEMENTS(times_s); i++) {
    double v = times_s[i].s * 1e12;
    if (!isfinite(v) || v < 0 || v > (double)WH_TIME_HORIZON)
      return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                          "--emit-scenario %s: model %s, PP%uxEP%u: field "
                          "wh::ModelPreset::%s = %g s is outside 0..%.0f s (the time horizon); "
                          "not written",
                          path, m->name, k->pp, k->ep, times_s[i].field, times_s[i].s,
                          wh_time_to_s(WH_TIME_HORIZON));
    ps[i] = (uint64_t)llround(v);
  }
  *out = (WhPiperOpTimes){.attn = ps[0], .expert = ps[1], .head = ps[2]};
  return TRUE;
}

/* Appends the wh::ModelPreset shape of model `m` under candidate `k` (T tokens per GCD
 * per micro-batch) as <set> lines. */
static void append_model_sets(GString *x, const WhPiperModel *m, const WhPiperCandidate *k,
                              double T)
{
  struct {
    const char *param;
    uint64_t v;
  } sets[] = {{"TP", 1},
              {"PP", k->pp},
              {"DP", k->ep},
              {"EP", k->ep},
              {"MicroBatches", k->m},
              {"Layers", m->layers},
              {"Hidden", m->hidden},
              {"Ffn", m->ffn},
              {"Heads", m->heads},
              {"KvHeads", m->kv_heads},
              {"SeqLength", (uint64_t)T},
              {"Vocab", m->vocab ? m->vocab : 1},
              {"Experts", m->experts},
              {"TopK", m->top_k},
              {"FfnMatrices", m->ffn_mats}};
  for (size_t i = 0; i < G_N_ELEMENTS(sets); i++)
    g_string_append_printf(
        x, "  <set param=\"wh::ModelPreset::%s\" value=\"%" G_GUINT64_FORMAT "\"/>\n",
        sets[i].param, sets[i].v);
}

/* Appends the <set> lines of the ops' compute: the builder's roofline (PeakFlops and
 * Efficiency) with o->roofline, else the fixed times `t`. */
static void append_compute_sets(GString *x, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                                const WhPiperOpTimes *t)
{
  g_string_append_printf(x, "  <set param=\"wh::ModelPreset::Recompute\" value=\"%s\"/>\n",
                         o->recompute ? "true" : "false");
  if (o->roofline)
    g_string_append_printf(x,
                           "  <set param=\"wh::ModelPreset::PeakFlops\" value=\"%.6g\"/>\n"
                           "  <set param=\"wh::ModelPreset::Efficiency\" value=\"%.6g\"/>\n",
                           c->peak, c->e_max);
  else
    g_string_append_printf(
        x,
        "  <set param=\"wh::ModelPreset::FixedTimes\" value=\"true\"/>\n"
        "  <set param=\"wh::ModelPreset::AttnTime\" value=\"%" G_GUINT64_FORMAT "ps\"/>\n"
        "  <set param=\"wh::ModelPreset::ExpertTime\" value=\"%" G_GUINT64_FORMAT "ps\"/>\n"
        "  <set param=\"wh::ModelPreset::HeadTime\" value=\"%" G_GUINT64_FORMAT "ps\"/>\n",
        t->attn, t->expert, t->head);
}

gboolean wh_piper_emit_scenario(const WhPiperModel *m, const WhPiperPlanOpts *o,
                                const WhPiperCompute *c, const WhPiperCandidate *k,
                                const char *path, WhPiperOpTimes *times, GError **error)
{
  if (m->experts < 2)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "model %s: --emit-scenario needs an MoE model (E >= 2)", m->name);
  double T = o->tokens > 0 ? o->tokens : m->seq;
  WhPiperOpTimes t;
  if (!op_times(m, o, c, k, path, &t, error))
    return FALSE;
  if (times)
    *times = t;
  uint32_t n = k->pp * k->ep, groups;
  if (!wh_piper_groups(n, o->groups, &groups, error))
    return FALSE;
  GString *x = g_string_new("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
  g_autofree char *name = g_markup_printf_escaped("%s-pp%uxep%u", m->name, k->pp, k->ep);
  g_autofree char *title = g_markup_escape_text(m->title ? m->title : m->name, -1);
  g_string_append_printf(x, "<scenario name=\"%s\" seed=\"1\" cc=\"dcqcn\">\n", name);
  g_string_append_printf(
      x,
      "  <description>Written by whsim plan: %s on %u GCDs of a Frontier-like machine, PP %u x "
      "EP %u (TP 1, DP = EP: each stage's EP group is %u consecutive GCDs), %u micro-batches "
      "of %.0f tokens per GCD, 1F1B. Compute durations are the Piper compute model's "
      "(FlashAttention %s, activation checkpointing %s); SeqLength holds the tokens per GCD "
      "per micro-batch.%s</description>\n",
      title, n, k->pp, k->ep, k->ep, k->m, T, o->flash ? "on" : "off", o->recompute ? "on" : "off",
      m->vocab ? "" : " The model has no vocabulary: Vocab 1 and a zero head time stand in.");
  append_model_sets(x, m, k, T);
  append_compute_sets(x, o, c, &t);
  for (const char *const *a = o->machine_sets; a && *a; a++) {
    const char *eq = strchr(*a, '=');
    g_autofree char *key = g_markup_escape_text(*a, eq - *a);
    g_autofree char *value = g_markup_escape_text(eq + 1, -1);
    g_string_append_printf(x, "  <set param=\"%s\" value=\"%s\"/>\n", key, value);
  }
  g_string_append_printf(x,
                         "  <topology preset=\"frontier\" groups=\"%u\"/>\n"
                         "  <workload model=\"moe-8x7b\"/>\n</scenario>\n",
                         groups);
  /* what is written must load: the loader's own checks, on the text, before writing */
  g_autoptr(GError) err = NULL;
  g_autoptr(WhScenario) back = wh_scenario_load_memory(x->str, x->len, path, &err);
  if (back == NULL) {
    g_string_free(x, TRUE);
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "--emit-scenario %s: model %s, PP%uxEP%u: not written: %s", path, m->name,
                        k->pp, k->ep, err->message);
  }
  gboolean ok = wh_file_check_replaceable(path, &err) &&
                g_file_set_contents(path, x->str, (gssize)x->len, &err);
  g_string_free(x, TRUE);
  if (!ok)
    g_set_error(error, G_FILE_ERROR, err->code, "--emit-scenario %s", err->message);
  return ok;
}
