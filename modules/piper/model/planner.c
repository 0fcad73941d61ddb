/* The Piper strategy planner: enumerates PP x EP meshes of N GCDs, evaluates memory
 * (per-GCD form, every stage), step time under 1F1B with its bubble, TFLOPS per GCD
 * and MFU, and ranks the feasible ones. See docs/modules/piper.md. */
#include <math.h>
#include <string.h>

#include "dragonfly.h"
#include "piper.h"
#include "units.h"
#include "wh-error.h"

static void evaluate(const WhPiperModel *m, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                     const WhPiperNet *net, WhPiperCandidate *k)
{
  uint32_t pp = k->pp, ep = k->ep;
  double T = o->tokens > 0 ? o->tokens : m->seq;
  k->m = o->micro_batches ? o->micro_batches : 4 * pp;
  WhPiperMemOpts mo = {
      .tokens = T, .b_over_m = T / m->seq, .m = k->m, .flash = o->flash, .recompute = o->recompute};
  k->mem = g_new(double, pp);
  double cap = o->hbm * o->usable, worst = 0;
  uint32_t worst_stage = 0;
  for (uint32_t i = 0; i < pp; i++) {
    k->mem[i] = wh_piper_mem_gcd(m, pp, ep, i, &mo);
    if (k->mem[i] > worst) {
      worst = k->mem[i];
      worst_stage = i;
    }
  }
  k->mem_literal0 = wh_piper_mem_literal(m, pp, ep, 0, &mo);
  WhPiperLayerTime lt;
  wh_piper_layer_time(c, m, T, ep, o->flash, &lt);
  double a2a = wh_piper_a2a_time(net, m, T, ep), bwd = o->recompute ? 3 : 2;
  double busiest = 0;
  for (uint32_t i = 0; i < pp; i++) {
    double l = wh_piper_stage_layers(m, pp, i),
           head = i == pp - 1 ? wh_piper_head_time(c, m, T) : 0;
    double f = l * (lt.attn + lt.expert + 2 * a2a) + head;
    double b = l * (bwd * (lt.attn + lt.expert) + (o->recompute ? 4 : 2) * a2a) + 2 * head;
    if (f + b > busiest) {
      busiest = f + b;
      k->t_fwd = f;
      k->t_bwd = b;
      k->busiest_layers = (uint32_t)l;
    }
    k->t_ar = MAX(k->t_ar, wh_piper_allreduce_time(net, m, pp, ep, i));
  }
  k->t_p2p = pp > 1 ? wh_piper_p2p_time(net, m, T, ep) : 0;
  k->t_a2a = a2a;
  k->t_expert = lt.expert;
  k->t_attn = lt.attn;
  k->step = (k->m + pp - 1) * (busiest + 2 * k->t_p2p) + k->t_ar;
  double head_flops = 2.0 * T * m->hidden * m->vocab;
  double flops = 3.0 * k->m * ep * (m->layers * (lt.attn_flops + lt.expert_flops) + head_flops);
  k->tflops = flops / ((double)pp * ep * k->step) * 1e-12;
  k->mfu = k->tflops * 1e12 / WH_PIPER_PEAK;
  if (worst > cap) {
    g_snprintf(k->reason, sizeof k->reason,
               "stage %u needs %.1f GB > %.1f GB of HBM (%.0f%% usable)", worst_stage, worst * 1e-9,
               cap * 1e-9, o->usable * 100);
    return;
  }
  k->feasible = TRUE;
}

gboolean wh_piper_plan(const WhPiperModel *m, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                       const WhPiperNet *net, WhPiperPlan *out, GError **error)
{
  *out = (WhPiperPlan){0};
  uint32_t N = o->gcds;
  if (N == 0 || N % WH_DRAGONFLY_NODE_GCDS)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "--gcds %u: must be a positive multiple of %u (whole Frontier nodes)", N,
                        WH_DRAGONFLY_NODE_GCDS);
  if (N > WH_PIPER_MAX_GCDS)
    return wh_error_set(
        error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
        "--gcds %u: more than the %u GCDs of the largest Frontier machine the preset "
        "builds (74 groups)",
        N, WH_PIPER_MAX_GCDS);
  if (o->tokens < 0 || o->tokens > 1e9 || o->tokens != floor(o->tokens))
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "--tokens %g: must be a positive integer", o->tokens);
  if (!(o->usable > 0) || o->usable > 1)
    return wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                        "--usable-fraction %g: must be in (0, 1]", o->usable);
  GArray *cand = g_array_new(FALSE, TRUE, sizeof(WhPiperCandidate));
  uint32_t structural = 0;
  for (uint32_t ep = 1; ep <= N; ep++) {
    if (N % ep)
      continue;
    WhPiperCandidate k = {.pp = N / ep, .ep = ep};
    if (m->experts % ep)
      g_snprintf(k.reason, sizeof k.reason, "EP %u does not divide E = %u", ep, m->experts);
    else if (k.pp > m->layers)
      g_snprintf(k.reason, sizeof k.reason, "PP %u is more than L = %u layers", k.pp, m->layers);
    else if (ep > net->switch_gcds)
      g_snprintf(k.reason, sizeof k.reason, "EP %u > %u: the EP group leaves one switch", ep,
                 net->switch_gcds);
    else {
      structural++;
      evaluate(m, o, c, net, &k);
    }
    g_array_append_val(cand, k);
  }
  if (structural == 0) {
    g_array_free(cand, TRUE);
    return wh_error_set(
        error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
        "model %s on --gcds %u: no EP <= %u divides both E = %u and N with PP = N / EP "
        "<= L = %u",
        m->name, N, net->switch_gcds, m->experts, m->layers);
  }
  out->n = cand->len;
  out->c = (WhPiperCandidate *)g_array_free(cand, FALSE);
  return TRUE;
}

void wh_piper_plan_clear(WhPiperPlan *p)
{
  for (uint32_t i = 0; i < p->n; i++)
    g_free(p->c[i].mem);
  g_free(p->c);
  *p = (WhPiperPlan){0};
}

const WhPiperCandidate *wh_piper_plan_best(const WhPiperPlan *p)
{
  const WhPiperCandidate *best = NULL;
  for (uint32_t i = 0; i < p->n; i++) {
    if (p->c[i].feasible && (!best || p->c[i].tflops > best->tflops))
      best = &p->c[i];
  }
  return best;
}

/* ---- parameters ---- */

static const WhParamSpec piper_params[] = {
    {"HbmCapacity", WH_PARAM_BYTES, "64GiB",
     "HBM per GCD (MI250X: 64 GiB = 68.7 GB; the runtime reports 65,520 MiB)", WH_CHECK_POSITIVE},
    {"UsableFraction", WH_PARAM_DOUBLE, "1.0",
     "fraction of HbmCapacity a plan may fill (the rest: runtime reserve)",
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1},
    {"NicsPerNode", WH_PARAM_INT, G_STRINGIFY(WH_DRAGONFLY_NODE_NICS),
     "NICs per node of " G_STRINGIFY(WH_DRAGONFLY_NODE_GCDS) " GCDs", WH_CHECK_MIN | WH_CHECK_MAX,
     1, WH_DRAGONFLY_NODE_GCDS},
    {"EpLimit", WH_PARAM_INT, "32", "largest EP group: the GCDs on one Rosetta switch",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 1 << 20},
    {NULL},
};

const WhTypeInfo wh_piper_type = {
    .name = "wh::Piper",
    .kind = "planner",
    .help = "the Piper planner (whsim plan): HBM capacity and the link rates of its model",
    .params = piper_params,
};

void wh_piper_settings(const WhConfig *cfg, WhPiperPlanOpts *o, WhPiperNet *n)
{
  const char *t = wh_piper_type.name;
  o->hbm = (double)wh_config_bytes(cfg, t, "HbmCapacity");
  o->usable = wh_config_double(cfg, t, "UsableFraction");
  n->nics_per_node = (double)wh_config_int(cfg, t, "NicsPerNode");
  n->switch_gcds = (uint32_t)wh_config_int(cfg, t, "EpLimit");
  wh_piper_net_from_config(cfg, n);
}
