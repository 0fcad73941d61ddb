/* The Piper resource model: memory (literal and per-GCD forms), the compute model of
 * an MI250X GCD and its calibration, and the communication model. See docs/modules/piper.md. */
#include <math.h>

#include "dragonfly.h"
#include "piper.h"
#include "topology-preset.h"

/* ---- memory ---- */

uint32_t wh_piper_stage_layers(const WhPiperModel *m, uint32_t pp, uint32_t stage)
{
  return m->layers / pp + (stage < m->layers % pp);
}

double wh_piper_mem_literal(const WhPiperModel *m, uint32_t pp, uint32_t ep, uint32_t stage,
                            const WhPiperMemOpts *o)
{
  double d = m->hidden, f = m->ffn, s = m->seq, E = m->experts, k = m->top_k, H = m->heads,
         mats = m->ffn_mats, bm = o->b_over_m;
  double state = 64 * d * d + 16 * mats * E / ep * d * f;
  double act = 12 * bm * s * d + 2 * bm * s * k / ep * (mats * f + d);
  if (!o->flash)
    act += 4 * bm * H * s * s;
  return (double)m->layers / pp * (state + (pp - stage) * act);
}

/* Activation bytes of one layer for one micro-batch of T tokens on one GCD. */
static double layer_act(const WhPiperModel *m, double T, gboolean flash)
{
  double d = m->hidden, s = m->seq;
  double a = 12 * T * d + 2 * T * m->top_k * (m->ffn_mats * (double)m->ffn + d);
  if (!flash)
    a += 4 * (T / s) * m->heads * s * s;
  return a;
}

double wh_piper_mem_gcd(const WhPiperModel *m, uint32_t pp, uint32_t ep, uint32_t stage,
                        const WhPiperMemOpts *o)
{
  double d = m->hidden, kv = d / m->heads * m->kv_heads, T = o->tokens;
  double l = wh_piper_stage_layers(m, pp, stage);
  double params =
      l * (2 * d * d + 2 * d * kv + (double)m->ffn_mats * m->experts / ep * d * (double)m->ffn);
  if (stage == 0)
    params += (double)m->vocab * d; /* embedding */
  if (stage == pp - 1)
    params += (double)m->vocab * d; /* output head */
  double inflight = MIN((double)(pp - stage), o->m > 0 ? o->m : (double)(pp - stage));
  double act = o->recompute ? inflight * l * 2 * T * d + layer_act(m, T, o->flash)
                            : inflight * l * layer_act(m, T, o->flash);
  return 16 * params + act;
}

/* ---- compute ---- */

static double gemm_eff(const WhPiperCompute *c, double m, double n, double k)
{
  return c->e_max * (m / (m + c->m0)) * (n / (n + c->n0)) * (k / (k + c->n0));
}

static double gemm_time(const WhPiperCompute *c, double m, double n, double k, double count)
{
  return count * 2 * m * n * k / (c->peak * gemm_eff(c, m, n, k));
}

void wh_piper_layer_time(const WhPiperCompute *c, const WhPiperModel *m, double T, uint32_t ep,
                         gboolean flash, WhPiperLayerTime *out)
{
  (void)flash; /* same FLOPs; FlashAttention changes memory, not the GEMM shapes here */
  double d = m->hidden, kv = d / m->heads * m->kv_heads, s = m->seq, hd = d / m->heads,
         E = m->experts, f = m->ffn, mats = m->ffn_mats;
  double seqs = T / s;
  /* Q and O (d x d), K and V (d x kv), router (d x E); scores Q K^T and P V per head */
  out->attn = gemm_time(c, T, d, d, 2) + gemm_time(c, T, kv, d, 2) + gemm_time(c, T, E, d, 1) +
              gemm_time(c, s, s, hd, seqs * m->heads) + gemm_time(c, s, hd, s, seqs * m->heads);
  out->attn_flops = 2 * T * d * (2 * d + 2 * kv) + 2 * T * d * E + 4 * T * s * d;
  /* E / EP local experts, each with T k EP / E tokens (balanced routing) */
  double local = E / ep, me = T * m->top_k / local;
  out->expert = gemm_time(c, me, f, d, local * (mats - 1)) + gemm_time(c, me, d, f, local);
  out->expert_flops = 2 * mats * T * m->top_k * d * f;
}

static uint32_t node_ep(const WhPiperModel *m)
{
  uint32_t ep = WH_DRAGONFLY_NODE_GCDS;
  while (m->experts % ep)
    ep /= 2;
  return ep;
}

double wh_piper_single_layer_tflops(const WhPiperCompute *c, const WhPiperModel *m)
{
  WhPiperLayerTime t;
  wh_piper_layer_time(c, m, m->seq, node_ep(m), TRUE, &t);
  return (t.attn_flops + t.expert_flops) / (t.attn + t.expert) * 1e-12;
}

/* Sum of squared log residuals with e_max at its optimum for (m0, n0). */
static double fit_cost(const WhPiperCatalogue *cat, WhPiperCompute *c)
{
  double sum = 0, sq = 0;
  uint32_t n = 0;
  c->e_max = 1;
  for (uint32_t i = 0; i < cat->n; i++) {
    const WhPiperModel *m = &cat->models[i];
    if (!(m->single_layer_tflops > 0))
      continue;
    double r = log(m->single_layer_tflops) - log(wh_piper_single_layer_tflops(c, m));
    sum += r;
    sq += r * r;
    n++;
  }
  if (n == 0)
    return 0;
  double mean = sum / n;
  c->e_max = exp(mean);
  return sq - n * mean * mean;
}

double wh_piper_calibrate(const WhPiperCatalogue *cat, WhPiperCompute *out)
{
  WhPiperCompute c = {.peak = WH_PIPER_PEAK}, best = c;
  double best_cost = INFINITY;
  /* a log grid over m0, n0 in [1, 65536] (and 0), then a finer grid around the best */
  double lo_m = 0, hi_m = 16, lo_n = 0, hi_n = 16;
  for (int round = 0; round < 3; round++) {
    int steps = 64;
    double bm = 0, bn = 0;
    for (int i = 0; i <= steps; i++) {
      for (int j = 0; j <= steps; j++) {
        double lm = lo_m + (hi_m - lo_m) * i / steps, ln = lo_n + (hi_n - lo_n) * j / steps;
        c.m0 = round == 0 && i == 0 ? 0 : exp2(lm);
        c.n0 = round == 0 && j == 0 ? 0 : exp2(ln);
        double cost = fit_cost(cat, &c);
        if (cost < best_cost) {
          best_cost = cost;
          best = c;
          bm = lm;
          bn = ln;
        }
      }
    }
    double wm = (hi_m - lo_m) / 8, wn = (hi_n - lo_n) / 8;
    lo_m = bm - wm;
    hi_m = bm + wm;
    lo_n = bn - wn;
    hi_n = bn + wn;
  }
  fit_cost(cat, &best);
  *out = best;
  return best_cost;
}

const WhPiperCompute *wh_piper_compute_default(void)
{
  static WhPiperCompute c;
  static gsize done;
  if (g_once_init_enter(&done)) {
    wh_piper_calibrate(wh_piper_catalogue(), &c);
    g_once_init_leave(&done, 1);
  }
  return &c;
}

/* ---- communication ---- */

void wh_piper_net_from_config(const WhConfig *cfg, WhPiperNet *n)
{
  /* the machine of the Frontier preset, as the scenarios simulate it: a NIC at the
   * preset's EndpointRate, an xGMI link at FabricLinkRate x FabricEfficiency, and
   * wh::Workload::MessageAlpha as the software cost of every message */
  n->nic = (double)wh_config_rate(cfg, "wh::Dragonfly", "EndpointRate") / 8.0;
  n->fabric = (double)wh_config_rate(cfg, "wh::Dragonfly", "FabricLinkRate") / 8.0 *
              wh_config_double(cfg, "wh::Dragonfly", "FabricEfficiency");
  n->latency = wh_time_to_s(wh_config_time(cfg, "wh::Workload", "MessageAlpha"));
  gboolean batch = g_strcmp0(wh_config_choice(cfg, "wh::ModelPreset", "AllToAll"), "rccl") == 0 &&
                   g_strcmp0(wh_config_choice(cfg, "wh::Workload", "RcclSchedule"), "batch") == 0;
  n->a2a_batch = batch ? (uint32_t)wh_config_int(cfg, "wh::Workload", "RcclWindow") : 0;
}

void wh_piper_net_default(WhPiperNet *n)
{
  /* the Frontier node's NICs and GCDs, 32 GCDs per Rosetta switch; rates and the
   * message cost from the Frontier preset */
  *n = (WhPiperNet){.nics_per_node = WH_DRAGONFLY_NODE_NICS,
                    .gcds_per_node = WH_DRAGONFLY_NODE_GCDS,
                    .switch_gcds = 32};
  g_autoptr(WhConfig) cfg = wh_config_new();
  gboolean ok = wh_topology_preset_apply(cfg, "frontier", NULL);
  g_assert(ok);
  wh_piper_net_from_config(cfg, n);
}

/* Per-GCD share of the node's NICs when `senders` GCDs of a node send at once. */
static double nic_share(const WhPiperNet *n, double senders)
{
  return n->nic * MIN(1.0, n->nics_per_node / senders);
}

/* GCDs of an EP group on one node of g GCDs: EP consecutive ranks, so gcd(EP, g) for
 * sure. */
static uint32_t on_node(uint32_t ep, uint32_t g)
{
  uint32_t a = ep, b = g;
  while (b) {
    uint32_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* The all-to-all of `chunk` bytes per pair over EP consecutive GCDs, when each GCD
 * sends `k_on` chunks inside its node and `k_off` off it (of the on - 1 and EP - on it
 * has in all): the formula of wh_piper_a2a_time with the link loads scaled. */
static double a2a_part(const WhPiperNet *n, double chunk, uint32_t ep, uint32_t on, double k_on,
                       double k_off, double msgs)
{
  uint32_t g = (uint32_t)n->gcds_per_node;
  double t_on = on == 2   ? chunk / (4 * n->fabric)
                : on == 4 ? 3 * chunk / n->fabric
                : on >= g ? 6 * chunk / n->fabric
                          : 0;
  if (on > 1)
    t_on *= k_on / (on - 1);
  double t_off = k_off * chunk / nic_share(n, g);
  double t_issue = msgs * n->latency + (k_off > 0 ? chunk / n->nic : 0);
  (void)ep;
  return MAX(MAX(t_on, t_off) + n->latency, t_issue);
}

/* In batches of B rounds: each batch's busiest GCD (packed: GCD r of node r / g). */
static double a2a_batches(const WhPiperNet *n, double chunk, uint32_t ep, uint32_t on, uint32_t B)
{
  uint32_t g = (uint32_t)n->gcds_per_node;
  double t = 0;
  for (uint32_t first = 0; first < ep; first += B) {
    uint32_t last = MIN(first + B, ep); /* rounds first .. last - 1, round 0 is the GCD */
    double k_on = 0, k_off = 0, msgs = 0;
    for (uint32_t r = 0; r < ep; r++) {
      double a = 0, b = 0;
      for (uint32_t i = MAX(first, 1u); i < last; i++) {
        uint32_t d = (r + i) % ep;
        if (d / g == r / g)
          a++;
        else
          b++;
      }
      k_on = MAX(k_on, a), k_off = MAX(k_off, b), msgs = MAX(msgs, a + b);
    }
    if (msgs > 0)
      t += a2a_part(n, chunk, ep, on, k_on, k_off, msgs);
  }
  return t;
}

double wh_piper_a2a_time(const WhPiperNet *n, const WhPiperModel *m, double T, uint32_t ep)
{
  if (ep < 2)
    return 0;
  double S = 2 * T * m->top_k * m->hidden, chunk = S / ep;
  uint32_t g = (uint32_t)n->gcds_per_node, on = on_node(ep, g);
  if (n->a2a_batch > 0 && n->a2a_batch < ep)
    return a2a_batches(n, chunk, ep, on, n->a2a_batch);
  /* inside the node: the busiest Infinity Fabric link carries 1 chunk on a quad link
   * (2 GCDs of one MI250X), 3 chunks on a single link (4 GCDs) or 6 (8 GCDs), with
   * the node's shortest-path routes */
  double t_on = on == 2   ? chunk / (4 * n->fabric)
                : on == 4 ? 3 * chunk / n->fabric
                : on >= g ? 6 * chunk / n->fabric
                          : 0;
  /* off the node: the GCD's share of the node's NICs (all its GCDs send) */
  double t_off = ep > on ? chunk * (ep - on) / nic_share(n, g) : 0;
  /* MessageAlpha is paid one message after another: a GCD's last message leaves
   * (EP - 1) alphas after the start and, off the node, still crosses a NIC */
  double t_issue = (ep - 1) * n->latency + (ep > on ? chunk / n->nic : 0);
  return MAX(MAX(t_on, t_off) + n->latency, t_issue);
}

double wh_piper_p2p_time(const WhPiperNet *n, const WhPiperModel *m, double T, uint32_t ep)
{
  double S = 2 * T * m->hidden;
  return S / nic_share(n, MIN((double)ep, n->gcds_per_node)) + n->latency;
}

double wh_piper_allreduce_time(const WhPiperNet *n, const WhPiperModel *m, uint32_t pp, uint32_t ep,
                               uint32_t stage)
{
  if (ep < 2)
    return 0;
  double d = m->hidden, kv = d / m->heads * m->kv_heads;
  double p = wh_piper_stage_layers(m, pp, stage) * (2 * d * d + 2 * d * kv);
  if (stage == 0)
    p += (double)m->vocab * d;
  if (stage == pp - 1)
    p += (double)m->vocab * d;
  /* a ring over consecutive GCDs: each step, one GCD per node sends off its node (the
   * last to the next node's first), on a NIC of its own, and the others over the
   * fabric; the lockstep ring goes at its slowest hop */
  double rate = ep <= n->gcds_per_node ? n->fabric : MIN(n->fabric, n->nic);
  return 2.0 * (ep - 1) / ep * 2 * p / rate + 2.0 * (ep - 1) * n->latency;
}

double wh_piper_head_time(const WhPiperCompute *c, const WhPiperModel *m, double T)
{
  return m->vocab ? gemm_time(c, T, m->vocab, m->hidden, 1) : 0;
}
