/* Training-model presets; see presets.h. Formulas (b = micro-batch size, s = sequence,
 * n = b x s tokens, h = hidden, f = FFN size (per expert), kv = h x kv_heads / heads,
 * V: vocabulary, E experts, k = top-k, mats = 2 FFN matrices (GELU) or 3 (SwiGLU)):
 * Forward FLOPs of one micro-batch through one layer, counting a multiply-add as 2
 * (Narayanan et al., SC'21, sec. 5.1: 24 b s h^2 (1 + s / 6h) for a GPT layer, 72 with
 * backward and 96 with recomputation; the terms below reproduce it with kv = h, f =
 * 4h, mats = 2): attention projections 2 n h (2h + 2 kv) (Q and O are h x h, K and V h
 * x kv: grouped-query attention is modelled), scores and weighted values 4 b s^2 h (no
 * causal-mask saving, as in that paper), FFN 2 mats n h f, or for an MoE router 2 n h
 * E plus k experts per token 2 mats n h f k (balanced routing: every rank gets its
 * share of tokens; with skewed Routing an expert op takes that time x its GPU's token
 * share, see route()), output logits on the last stage 2 n h V. Backward = 2 x forward (3
 * x with recomputation). Every term is divided by TP (Megatron splits each matmul over
 * the TP group; experts are tensor-parallel too). Softmax, norms, activations and the
 * optimizer step cost nothing. Parameters: attention 2h^2 + 2h kv, FFN mats h f (per
 * expert), router h E; GPT adds biases (h + 2kv + h, f + h), two LayerNorms 4h,
 * learned positions s h and a tied embedding V h (12 h^2 + 13 h per layer with f = 4h,
 * as in Narayanan et al. sec. 5.1); Mixtral adds two RMSNorms 2h, an embedding V h and
 * an untied head V h; final norms are ignored. GPT-3 6.7B/13B/175B come out at
 * 6.66/12.85/174.6 B, Mixtral 8x7B at 46.70 B (published: 46.7 B), 8x22B shapes with 8
 * experts at 140.6 B (published: 141 B). Communication (bf16, 2 bytes an element by
 * default): with sequence parallelism (Korthikanti et al. 2022) the activation between
 * layers is split along the sequence over the TP group, so a PP send of one TP rank
 * carries n h x 2 / TP bytes (forward activation; the backward gradient is the same
 * size). MoE all-to-all (Megatron-Core's all-to-all token dispatcher with expert
 * tensor parallelism = TP): each rank routes its n / TP tokens to k experts, so its
 * send buffer is n k h x 2 / TP bytes (1/EP of it to each EP peer, itself included),
 * dispatch and combine in the forward pass and their two gradient all-to-alls in the
 * backward. DP: after the last backward of a stage, a ring all-reduce of that rank's
 * gradients (the stage's non-expert parameters / TP x GradBytes) over the DP group;
 * expert gradients are all-reduced over the expert-data-parallel group (same pp, tp
 * and dp mod EP; size DP / EP: none when EP = DP). With Buckets = B the stage's layers
 * are cut into B groups in backward order (the head's gradients in the first, the
 * embedding's in the last) and each group's all-reduce starts when the last backward
 * reaches its lowest layer, overlapping the rest (a dense stage's last backward is
 * then B compute ops). Not modelled: the tied-embedding gradient all-reduce between
 * first and last stage, the gradient-norm all-reduce, vocabulary padding, load
 * imbalance among experts unless Routing is skewed. FfnMatrices (mats) overrides the family's 2
 * or 3. Op names: compute "i<it>/s<stage>/r<rank>/F<mb>" (dense; "B<mb>", last backward with
 * buckets "B<mb>/part<j>"), MoE
 * ".../F<mb>/L<layer>/attn",
 * ".../L<layer>/expert", ".../F<mb>/head"; sends "i<it>/pp/F<mb>/r<a>>r<b>/<bytes>B"
 * (B<mb> for gradients); all-to-all
 * "i<it>/ep/s<p>/tp<t>/g<group>/F<mb>/L<layer>/dispatch/<bytes>B" (combine; backward
 * combine-grad, dispatch-grad); all-reduce "i<it>/dp/s<p>/tp<t>/b<j>/<bytes>B" and
 * "i<it>/edp/s<p>/tp<t>/e<e>/b<j>/<bytes>B"; expert migration sends
 * "i<it>/migrate/s<p>/tp<t>/g<group>/e<expert>/r<a>>r<b>/<bytes>B". */
#include "presets.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "wh-error.h"

#define NONE UINT32_MAX

static const char *const model_names[] = {"gpt-7b",   "gpt-13b",    "gpt-175b",
                                          "moe-8x7b", "moe-32x22b", NULL};

typedef struct {
  WhModelShape shape;
  uint32_t tp, pp, dp, ep;
} Preset;

static const Preset presets[] = {
    /* gpt-7b: GPT-3 6.7B (Brown et al., "Language Models are Few-Shot Learners", 2020,
     * Table 2.1): 32 layers, d_model 4096, 32 heads of 128, FFN 4 d_model, context
     * 2048; GPT-2 BPE vocabulary of 50257 (Megatron pads it; not modelled) */
    {{WH_FAMILY_GPT, 32, 4096, 16384, 32, 32, 2048, 50257, 1, 1}, 8, 2, 4, 1},
    /* gpt-13b: GPT-3 13B: 40 layers, 40 heads of 128, so d_model 5120 (Table 2.1
     * prints 5140) */
    {{WH_FAMILY_GPT, 40, 5120, 20480, 40, 40, 2048, 50257, 1, 1}, 8, 2, 8, 1},
    /* gpt-175b: GPT-3 175B: 96 layers, d_model 12288, 96 heads of 128 */
    {{WH_FAMILY_GPT, 96, 12288, 49152, 96, 96, 2048, 50257, 1, 1}, 8, 8, 16, 1},
    /* moe-8x7b: Mixtral 8x7B (Jiang et al., "Mixtral of Experts", 2024, Table 1;
     * mistralai/Mixtral-8x7B-v0.1 config.json): 32 layers, hidden 4096, SwiGLU FFN
     * 14336 per expert, 32 heads, 8 KV heads, 8 experts, top-2, vocabulary 32000.
     * Sequence 4096 is our choice (Mixtral was trained with 32k context; the length
     * the Wormhole evaluation used is not public). */
    {{WH_FAMILY_MIXTRAL, 32, 4096, 14336, 32, 8, 4096, 32000, 8, 2}, 8, 2, 8, 8},
    /* moe-32x22b: the layer shapes of Mixtral 8x22B (mistralai Mixtral-8x22B
     * config.json: 56 layers, hidden 6144, FFN 16384, 48 heads, 8 KV heads, top-2;
     * vocabulary 32768 as in Mixtral-8x22B-Instruct-v0.1, the base v0.1 has 32000)
     * with 32 experts: the Wormhole paper names the model but its exact shape is not
     * public, so this is an assumption (about 546 B parameters). Sequence 4096 as
     * above. */
    {{WH_FAMILY_MIXTRAL, 56, 6144, 16384, 48, 8, 4096, 32768, 32, 2}, 8, 8, 16, 16},
};

const char *const *wh_preset_model_names(void)
{
  return model_names;
}

gboolean wh_preset_spec_init(WhPresetSpec *spec, const char *model, GError **error)
{
  for (int i = 0; model_names[i]; i++) {
    if (g_strcmp0(model, model_names[i]) != 0)
      continue;
    const Preset *p = &presets[i];
    *spec = (WhPresetSpec){.model = model_names[i],
                           .shape = p->shape,
                           .tp = p->tp,
                           .pp = p->pp,
                           .dp = p->dp,
                           .ep = p->ep,
                           .micro_batches = 0,
                           .micro_batch_size = 1,
                           .peak_flops = 989e12, /* H100 SXM, dense bf16 */
                           .efficiency = 0.5,
                           .grad_bytes = 2,
                           .act_bytes = 2,
                           .buckets = 1,
                           .recompute = FALSE,
                           .all_to_all = WH_ALGO_DIRECT,
                           .iterations = 1,
                           .routing = WH_ROUTING_UNIFORM,
                           .zipf_s = 1.0,
                           .drift = 0.01,
                           .seed = 1,
                           .migrate_threshold = 1.25,
                           .migrate_period = 1,
                           .migrate_rounds = 8};
    return TRUE;
  }
  g_autofree char *list = g_strjoinv(", ", (char **)model_names);
  return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                      "unknown model preset \"%s\" (one of %s)", model ? model : "", list);
}

/* ---- formulas ---- */

static uint64_t div_ceil(uint64_t a, uint64_t b)
{
  return (a + b - 1) / b;
}

static uint32_t micro_batches(const WhPresetSpec *s)
{
  return s->micro_batches ? s->micro_batches : s->pp;
}

static gboolean is_moe(const WhPresetSpec *s)
{
  return s->shape.experts > 1;
}

static uint64_t ffn_mats(const WhModelShape *m)
{
  if (m->ffn_mats)
    return m->ffn_mats;
  return m->family == WH_FAMILY_MIXTRAL ? 3 : 2;
}

static uint64_t kv_dim(const WhModelShape *m)
{
  return (uint64_t)m->hidden / m->heads * m->kv_heads;
}

/* Parameters of one layer outside its experts. */
static uint64_t layer_params(const WhModelShape *m)
{
  uint64_t h = m->hidden, f = m->ffn, kv = kv_dim(m);
  uint64_t p = 2 * h * h + 2 * h * kv;
  p += m->experts > 1 ? h * m->experts : ffn_mats(m) * h * f;
  if (m->family == WH_FAMILY_GPT) {
    p += 2 * h + 2 * kv + 4 * h; /* attention biases, two LayerNorms */
    if (m->experts == 1)
      p += f + h; /* FFN biases */
  } else {
    p += 2 * h; /* two RMSNorms */
  }
  return p;
}

/* Parameters of one layer's experts, all of them. */
static uint64_t layer_expert_params(const WhModelShape *m)
{
  return m->experts > 1 ? (uint64_t)m->experts * ffn_mats(m) * m->hidden * m->ffn : 0;
}

/* The first stage's embedding (and GPT's learned positions). */
static uint64_t embed_params(const WhModelShape *m)
{
  uint64_t p = (uint64_t)m->vocab * m->hidden;
  return m->family == WH_FAMILY_GPT ? p + (uint64_t)m->seq * m->hidden : p;
}

/* The last stage's output head: Mixtral's own; GPT's is the tied embedding, of which
 * the last stage keeps a copy (Megatron) when it is not also the first. */
static uint64_t head_params(const WhModelShape *m, uint32_t pp)
{
  if (m->family == WH_FAMILY_GPT && pp == 1)
    return 0;
  return (uint64_t)m->vocab * m->hidden;
}

static uint64_t model_params(const WhModelShape *m)
{
  uint64_t p = (uint64_t)m->layers * (layer_params(m) + layer_expert_params(m)) + embed_params(m);
  return m->family == WH_FAMILY_GPT ? p : p + (uint64_t)m->vocab * m->hidden;
}

/* Forward FLOPs of one micro-batch, whole (not divided by TP). */
static double attn_flops(const WhPresetSpec *s)
{
  const WhModelShape *m = &s->shape;
  double b = s->micro_batch_size, sq = m->seq, h = m->hidden, n = b * sq;
  double f = 2 * n * h * (2 * h + 2 * (double)kv_dim(m)) + 4 * b * sq * sq * h;
  if (m->experts > 1)
    f += 2 * n * h * m->experts;
  return f;
}

static double ffn_flops(const WhPresetSpec *s)
{
  const WhModelShape *m = &s->shape;
  double n = (double)s->micro_batch_size * m->seq;
  double k = m->experts > 1 ? m->top_k : 1;
  return 2 * (double)ffn_mats(m) * n * m->hidden * m->ffn * k;
}

static double head_flops(const WhPresetSpec *s)
{
  const WhModelShape *m = &s->shape;
  return 2.0 * s->micro_batch_size * m->seq * m->hidden * m->vocab;
}

static double bwd_factor(const WhPresetSpec *s)
{
  return s->recompute ? 3 : 2;
}

static WhTime op_time(const WhPresetSpec *s, double flops)
{
  return (WhTime)llround(flops / (s->peak_flops * s->efficiency) * 1e12);
}

typedef enum { OP_ATTN, OP_EXPERT, OP_HEAD } MoeOp;

/* Duration of an MoE compute op: from FLOPs, or the spec's fixed forward time (x the
 * backward factor for a backward op). `flops` is the op's whole-layer forward count. */
static WhTime moe_time(const WhPresetSpec *s, MoeOp op, gboolean fwd, double flops)
{
  if (s->fixed_times) {
    WhTime t = op == OP_ATTN ? s->attn_time : op == OP_EXPERT ? s->expert_time : s->head_time;
    return fwd ? t : (WhTime)bwd_factor(s) * t;
  }
  /* the same expressions as the dense path, so that durations do not change */
  return fwd ? op_time(s, flops / s->tp) : op_time(s, bwd_factor(s) / s->tp * flops);
}

static uint32_t stage_layers(const WhPresetSpec *s, uint32_t p)
{
  return s->shape.layers / s->pp + (p < s->shape.layers % s->pp);
}

static uint32_t stage_first(const WhPresetSpec *s, uint32_t p)
{
  return p * (s->shape.layers / s->pp) + MIN(p, s->shape.layers % s->pp);
}

/* Layers of bucket j of stage p; bucket 0 holds the stage's last layers. */
static uint32_t bucket_layers(const WhPresetSpec *s, uint32_t p, uint32_t j)
{
  uint32_t lp = stage_layers(s, p);
  return lp / s->buckets + (j < lp % s->buckets);
}

/* Per-rank gradient bytes of bucket j of stage p: outside and inside the experts. */
static void bucket_bytes(const WhPresetSpec *s, uint32_t p, uint32_t j, uint64_t *dense,
                         uint64_t *expert)
{
  const WhModelShape *m = &s->shape;
  uint64_t c = bucket_layers(s, p, j), params = c * layer_params(m);
  if (j == 0 && p == s->pp - 1)
    params += head_params(m, s->pp);
  if (j == s->buckets - 1 && p == 0)
    params += embed_params(m);
  *dense = div_ceil(params, s->tp) * s->grad_bytes;
  *expert =
      m->experts > 1 ? div_ceil(c * layer_expert_params(m) / s->ep, s->tp) * s->grad_bytes : 0;
}

static uint64_t pp_send_bytes(const WhPresetSpec *s)
{
  return div_ceil((uint64_t)s->micro_batch_size * s->shape.seq * s->shape.hidden * s->act_bytes,
                  s->tp);
}

static uint64_t a2a_bytes(const WhPresetSpec *s)
{
  return div_ceil((uint64_t)s->micro_batch_size * s->shape.seq * s->shape.top_k * s->shape.hidden *
                      s->act_bytes,
                  s->tp);
}

/* ---- checks ---- */

static gboolean routing_check(const WhPresetSpec *s, const char *name, GError **error)
{
  if (!(s->zipf_s >= 0) || !isfinite(s->zipf_s))
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: ZipfS %g: the Zipf exponent must be at least 0", name, s->zipf_s);
  if (!(s->drift >= 0 && s->drift <= 1))
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: RoutingDrift %g: a probability in [0, 1]", name, s->drift);
  if (!(s->migrate_threshold >= 1) || !isfinite(s->migrate_threshold))
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: MigrationThreshold %g: max/mean load is at least 1", name,
                        s->migrate_threshold);
  if (s->migrate_period == 0 || s->migrate_rounds == 0)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: MigrationPeriod and MigrationRounds must be at least 1", name);
  if (s->routing == WH_ROUTING_UNIFORM) {
    if (s->migrate)
      return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                          "%s: Migration needs skewed routing (Routing zipf or file)", name);
    return TRUE;
  }
  if (s->routing != WH_ROUTING_ZIPF && s->routing != WH_ROUTING_FILE)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: Routing must be uniform, zipf or file", name);
  if (s->shape.experts < 2 || s->ep < 2)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: skewed Routing needs an MoE model with EP at least 2", name);
  if (s->routing == WH_ROUTING_FILE && (s->routing_counts == NULL || s->routing_rows == 0))
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: Routing file without expert counts (<workload routing=...>)", name);
  return TRUE;
}

uint32_t wh_preset_ranks(const WhPresetSpec *spec)
{
  return spec->tp * spec->pp * spec->dp;
}

gboolean wh_preset_spec_check(const WhPresetSpec *s, GError **error)
{
  const WhModelShape *m = &s->shape;
  const char *name = s->model ? s->model : "model";
  struct {
    const char *what;
    uint32_t v;
  } pos[] = {{"TP", s->tp},
             {"PP", s->pp},
             {"DP", s->dp},
             {"EP", s->ep},
             {"micro-batch size", s->micro_batch_size},
             {"buckets", s->buckets},
             {"gradient bytes", s->grad_bytes},
             {"activation bytes", s->act_bytes},
             {"iterations", s->iterations},
             {"layers", m->layers},
             {"hidden", m->hidden},
             {"FFN size", m->ffn},
             {"heads", m->heads},
             {"KV heads", m->kv_heads},
             {"sequence length", m->seq},
             {"vocabulary", m->vocab},
             {"experts", m->experts},
             {"top-k", m->top_k}};
  for (size_t i = 0; i < G_N_ELEMENTS(pos); i++) {
    if (pos[i].v == 0)
      return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                          "%s: %s must be at least 1", name, pos[i].what);
  }
  if ((uint64_t)s->tp * s->pp * s->dp > (1u << 24))
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: TP x PP x DP = %" PRIu64 " ranks is too many", name,
                        (uint64_t)s->tp * s->pp * s->dp);
  if (m->hidden % m->heads || m->heads % m->kv_heads)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: hidden %u, heads %u and KV heads %u do not divide", name, m->hidden,
                        m->heads, m->kv_heads);
  if (m->heads % s->tp)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: TP %u does not divide the %u heads", name, s->tp, m->heads);
  if (m->layers < s->pp)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: PP %u is more than the %u layers", name, s->pp, m->layers);
  if (s->buckets > m->layers / s->pp)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: %u buckets but a stage may have only %u layers", name, s->buckets,
                        m->layers / s->pp);
  if (m->experts == 1 && s->ep != 1)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: EP %u on a dense model (EP must be 1)", name, s->ep);
  if (s->fixed_times && m->experts == 1)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: FixedTimes applies to MoE models only", name);
  if (m->ffn_mats != 0 && m->ffn_mats != 2 && m->ffn_mats != 3)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: FfnMatrices %u: expected 2 (GELU), 3 (SwiGLU) or 0 (the family's)",
                        name, m->ffn_mats);
  if (m->top_k > m->experts)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: top-%u of %u experts", name, m->top_k, m->experts);
  if (s->dp % s->ep || m->experts % s->ep)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: EP %u must divide DP %u and the %u experts", name, s->ep, s->dp,
                        m->experts);
  if (!(s->peak_flops > 0) || !(s->efficiency > 0) || s->efficiency > 1)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: peak FLOP/s must be positive and efficiency in (0, 1]", name);
  if (s->all_to_all != WH_ALGO_DIRECT && s->all_to_all != WH_ALGO_PAIRWISE &&
      s->all_to_all != WH_ALGO_RCCL && s->all_to_all != WH_ALGO_HALO)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: the all-to-all algorithm must be direct, pairwise, rccl or halo",
                        name);
  return routing_check(s, name, error);
}

/* ---- building ---- */

typedef struct {
  WhWorkload *w;
  const WhPresetSpec *s;
  uint32_t P, D, T, m, EP, it;
  uint32_t *last;     /* per rank: last op of its chain (NONE: none yet) */
  GArray **pending;   /* per rank: ops its next chained op also waits for */
  GArray **next_iter; /* per rank: all-reduces the next iteration waits for */
  uint32_t *fsend;    /* [(p * m + mb) * D * T + d * T + t]: forward send of stage p */
  uint32_t *bsend;    /* same, backward send of stage p */
  GArray *deps, *group;
  char name[192];
  GError **error;
  /* skewed routing (NULL order: uniform), shared by every EP group */
  uint32_t E;
  uint32_t *order;     /* [k]: the expert of popularity rank k (zipf) */
  uint32_t *gcd_of;    /* [e]: the EP member holding expert e */
  uint64_t *counts;    /* [e]: this iteration's tokens of expert e in one EP group */
  uint64_t *load;      /* [i]: tokens of EP member i (its experts' counts) */
  uint64_t *dispatch;  /* EP x EP bytes: the dispatch all-to-allv */
  uint64_t *combine;   /* its transpose */
  uint64_t total;      /* tokens x top-k of one EP group per micro-batch and layer */
  WhExpertSwap *swaps; /* migrate_rounds */
  WhRng rng;           /* ranking and drift */
  GArray *checks;      /* nullable: WhMigrationCheck */
} Builder;

static uint32_t rank_of(const Builder *b, uint32_t p, uint32_t d, uint32_t t)
{
  return (p * b->D + d) * b->T + t;
}

static void add_dep(Builder *b, uint32_t id)
{
  for (guint i = 0; i < b->deps->len; i++) {
    if (g_array_index(b->deps, uint32_t, i) == id)
      return;
  }
  g_array_append_val(b->deps, id);
}

/* Adds rank r's chain predecessor and pending deps to b->deps, consuming them. */
static void take_chain(Builder *b, uint32_t r)
{
  if (b->last[r] != NONE)
    add_dep(b, b->last[r]);
  GArray *p = b->pending[r];
  for (guint i = 0; i < p->len; i++)
    add_dep(b, g_array_index(p, uint32_t, i));
  g_array_set_size(p, 0);
}

static gboolean compute_for(Builder *b, uint32_t r, WhTime t)
{
  g_array_set_size(b->deps, 0);
  take_chain(b, r);
  int64_t id = wh_workload_add_compute(b->w, b->name, r, t, (const uint32_t *)b->deps->data,
                                       b->deps->len, b->error);
  if (id < 0)
    return FALSE;
  b->last[r] = (uint32_t)id;
  return TRUE;
}

static gboolean compute(Builder *b, uint32_t r, double flops)
{
  return compute_for(b, r, op_time(b->s, flops));
}

static int64_t send(Builder *b, uint32_t src, uint32_t dst, uint64_t bytes)
{
  uint32_t dep = b->last[src];
  return wh_workload_add_send(b->w, b->name, src, dst, bytes, &dep, 1, b->error);
}

/* A collective over b->group. Chained: it consumes and becomes the members' chain
 * (all-to-all); else it waits for their last ops only and the next iteration waits
 * for it (gradient all-reduce). */
static gboolean collective(Builder *b, WhCollKind kind, WhCollAlgo algo, uint64_t bytes,
                           const uint64_t *matrix, gboolean chained)
{
  const uint32_t *g = (const uint32_t *)b->group->data;
  uint32_t n = b->group->len;
  g_array_set_size(b->deps, 0);
  for (uint32_t i = 0; i < n; i++) {
    if (chained)
      take_chain(b, g[i]);
    else
      add_dep(b, b->last[g[i]]);
  }
  const uint32_t *deps = (const uint32_t *)b->deps->data;
  int64_t id = matrix ? wh_workload_add_all_to_allv(b->w, b->name, algo, g, n, matrix, deps,
                                                    b->deps->len, b->error)
                      : wh_workload_add_collective(b->w, b->name, kind, algo, g, n, bytes, deps,
                                                   b->deps->len, b->error);
  if (id < 0)
    return FALSE;
  uint32_t v = (uint32_t)id;
  for (uint32_t i = 0; i < n; i++) {
    if (chained)
      b->last[g[i]] = v;
    else
      g_array_append_val(b->next_iter[g[i]], v);
  }
  return TRUE;
}

/* The all-to-alls of layer l on stage p, one per (tp, EP group). */
static gboolean all_to_all(Builder *b, uint32_t p, gboolean fwd, uint32_t mb, uint32_t l,
                           const char *what)
{
  if (b->EP < 2)
    return TRUE;
  uint64_t bytes = a2a_bytes(b->s);
  /* skewed: dispatch and the gradient of combine carry tokens to their experts */
  const uint64_t *matrix = NULL;
  if (b->order) {
    gboolean to_experts = strcmp(what, "dispatch") == 0 || strcmp(what, "combine-grad") == 0;
    matrix = to_experts ? b->dispatch : b->combine;
    bytes = 0;
    for (uint32_t i = 0; i < b->EP; i++) {
      for (uint32_t j = 0; j < b->EP; j++)
        bytes += i != j ? matrix[i * b->EP + j] : 0;
    }
  }
  for (uint32_t t = 0; t < b->T; t++) {
    for (uint32_t g = 0; g < b->D / b->EP; g++) {
      g_array_set_size(b->group, 0);
      for (uint32_t i = 0; i < b->EP; i++) {
        uint32_t r = rank_of(b, p, g * b->EP + i, t);
        g_array_append_val(b->group, r);
      }
      g_snprintf(b->name, sizeof b->name, "i%u/ep/s%u/tp%u/g%u/%c%u/L%u/%s/%" PRIu64 "B", b->it, p,
                 t, g, fwd ? 'F' : 'B', mb, l, what, bytes);
      if (!collective(b, WH_COLL_ALL_TO_ALL, b->s->all_to_all, bytes, matrix, TRUE))
        return FALSE;
    }
  }
  return TRUE;
}

/* The gradient all-reduces of bucket j of stage p (after its ranks' last ops). */
static gboolean all_reduce(Builder *b, uint32_t p, uint32_t j)
{
  uint64_t dense, expert;
  bucket_bytes(b->s, p, j, &dense, &expert);
  for (uint32_t t = 0; t < b->T; t++) {
    if (b->D > 1 && dense > 0) {
      g_array_set_size(b->group, 0);
      for (uint32_t d = 0; d < b->D; d++) {
        uint32_t r = rank_of(b, p, d, t);
        g_array_append_val(b->group, r);
      }
      g_snprintf(b->name, sizeof b->name, "i%u/dp/s%u/tp%u/b%u/%" PRIu64 "B", b->it, p, t, j,
                 dense);
      if (!collective(b, WH_COLL_ALL_REDUCE, WH_ALGO_RING, dense, NULL, FALSE))
        return FALSE;
    }
    if (b->D / b->EP > 1 && expert > 0) {
      for (uint32_t e = 0; e < b->EP; e++) {
        g_array_set_size(b->group, 0);
        for (uint32_t k = 0; k < b->D / b->EP; k++) {
          uint32_t r = rank_of(b, p, e + k * b->EP, t);
          g_array_append_val(b->group, r);
        }
        g_snprintf(b->name, sizeof b->name, "i%u/edp/s%u/tp%u/e%u/b%u/%" PRIu64 "B", b->it, p, t, e,
                   j, expert);
        if (!collective(b, WH_COLL_ALL_REDUCE, WH_ALGO_RING, expert, NULL, FALSE))
          return FALSE;
      }
    }
  }
  return TRUE;
}

/* The expert op of EP member i: the balanced time x its share of the group's tokens
 * (load[i] / (total / EP)). */
static WhTime expert_time(const Builder *b, gboolean fwd, uint32_t i)
{
  WhTime t = moe_time(b->s, OP_EXPERT, fwd, ffn_flops(b->s));
  if (b->order == NULL)
    return t;
  return (WhTime)llround((double)t * (double)b->load[i] * b->EP / (double)b->total);
}

/* Bytes of one expert's state of stage p on one TP rank: 16 x mats x h x f per layer
 * (bf16 weights and gradients, fp32 master weights and two Adam moments), split over
 * the TP group as the expert is. */
static uint64_t expert_state_bytes(const Builder *b, uint32_t p)
{
  const WhModelShape *m = &b->s->shape;
  return div_ceil((uint64_t)stage_layers(b->s, p) * 16 * ffn_mats(m) * m->hidden * m->ffn, b->T);
}

/* A migration send from rank x to y: after x's last op and what the next iteration
 * waits for (the optimizer step follows the gradient all-reduces); both ranks' next
 * ops wait for it. */
static gboolean migration_send(Builder *b, uint32_t x, uint32_t y, uint64_t bytes)
{
  g_array_set_size(b->deps, 0);
  if (b->last[x] != NONE)
    add_dep(b, b->last[x]);
  for (guint i = 0; i < b->pending[x]->len; i++)
    add_dep(b, g_array_index(b->pending[x], uint32_t, i));
  int64_t id = wh_workload_add_send(b->w, b->name, x, y, bytes, (const uint32_t *)b->deps->data,
                                    b->deps->len, b->error);
  if (id < 0)
    return FALSE;
  uint32_t v = (uint32_t)id;
  g_array_append_val(b->next_iter[x], v);
  g_array_append_val(b->next_iter[y], v);
  return TRUE;
}

/* Migration check before iteration b->it, on the previous iteration's counts. */
static gboolean migrate(Builder *b)
{
  const WhPresetSpec *s = b->s;
  WhMigrationCheck c = {.iteration = b->it};
  c.imbalance_before = c.imbalance_after = wh_routing_imbalance(b->load, b->EP);
  if (c.imbalance_before > s->migrate_threshold)
    c.swaps = wh_routing_hill_climb(b->counts, b->E, b->EP, b->gcd_of, s->migrate_rounds, b->swaps);
  if (c.swaps > 0) {
    wh_routing_gcd_load(b->counts, b->E, b->gcd_of, b->EP, b->load);
    c.imbalance_after = wh_routing_imbalance(b->load, b->EP);
  }
  for (uint32_t k = 0; k < c.swaps; k++) {
    const WhExpertSwap *sw = &b->swaps[k];
    for (uint32_t p = 0; p < b->P; p++) {
      uint64_t bytes = expert_state_bytes(b, p);
      for (uint32_t t = 0; t < b->T; t++) {
        for (uint32_t g = 0; g < b->D / b->EP; g++) {
          uint32_t x = rank_of(b, p, g * b->EP + sw->ga, t),
                   y = rank_of(b, p, g * b->EP + sw->gb, t);
          g_snprintf(b->name, sizeof b->name, "i%u/migrate/s%u/tp%u/g%u/e%u/r%u>r%u/%" PRIu64 "B",
                     b->it, p, t, g, sw->a, x, y, bytes);
          if (!migration_send(b, x, y, bytes))
            return FALSE;
          g_snprintf(b->name, sizeof b->name, "i%u/migrate/s%u/tp%u/g%u/e%u/r%u>r%u/%" PRIu64 "B",
                     b->it, p, t, g, sw->b, y, x, bytes);
          if (!migration_send(b, y, x, bytes))
            return FALSE;
          c.bytes += 2 * bytes;
          c.flows += 2;
        }
      }
    }
  }
  /* the sends wait for the optimizer step: move them into the pending lists */
  for (uint32_t r = 0; r < b->P * b->D * b->T; r++) {
    g_array_append_vals(b->pending[r], b->next_iter[r]->data, b->next_iter[r]->len);
    g_array_set_size(b->next_iter[r], 0);
  }
  if (b->checks)
    g_array_append_val(b->checks, c);
  return TRUE;
}

/* This iteration's expert counts, loads and all-to-allv matrices (skewed routing);
 * a migration check first when one is due. */
static gboolean route(Builder *b)
{
  const WhPresetSpec *s = b->s;
  if (b->order == NULL)
    return TRUE;
  if (s->migrate && b->it > 0 && b->it % s->migrate_period == 0 && !migrate(b))
    return FALSE;
  if (s->routing == WH_ROUTING_ZIPF) {
    if (b->it > 0)
      wh_routing_drift(b->order, b->E, s->drift, &b->rng);
    wh_routing_zipf_counts(b->order, b->E, s->zipf_s, b->total, b->counts);
  } else {
    const uint64_t *row = s->routing_counts + (uint64_t)(b->it % s->routing_rows) * b->E;
    g_autofree double *w = g_new(double, b->E);
    for (uint32_t e = 0; e < b->E; e++)
      w[e] = (double)row[e];
    wh_routing_apportion(w, b->E, b->total, b->counts);
  }
  wh_routing_gcd_load(b->counts, b->E, b->gcd_of, b->EP, b->load);
  uint64_t token_bytes = (uint64_t)s->shape.hidden * s->act_bytes;
  wh_routing_dispatch_matrix(b->counts, b->E, b->gcd_of, b->EP, token_bytes, b->dispatch);
  for (uint32_t i = 0; i < b->EP; i++) {
    for (uint32_t j = 0; j < b->EP; j++)
      b->combine[j * b->EP + i] = b->dispatch[i * b->EP + j];
  }
  return TRUE;
}

/* Skewed routing state: the ranking starts as a seeded shuffle of the experts (the
 * expert at rank k is not expert k), experts e are placed on member e / (E / EP). */
static void route_init(Builder *b)
{
  const WhPresetSpec *s = b->s;
  if (s->routing == WH_ROUTING_UNIFORM)
    return;
  uint32_t E = b->E = s->shape.experts;
  b->order = g_new(uint32_t, E);
  b->gcd_of = g_new(uint32_t, E);
  b->counts = g_new(uint64_t, E);
  b->load = g_new(uint64_t, b->EP);
  b->dispatch = g_new(uint64_t, (uint64_t)b->EP * b->EP);
  b->combine = g_new(uint64_t, (uint64_t)b->EP * b->EP);
  b->swaps = g_new(WhExpertSwap, s->migrate_rounds);
  wh_rng_init(&b->rng, s->seed, 0x726f757465ULL);
  for (uint32_t e = 0; e < E; e++) {
    b->order[e] = e;
    b->gcd_of[e] = e / (E / b->EP);
  }
  for (uint32_t i = 0; i + 1 < E; i++) {
    uint32_t j = i + (uint32_t)(wh_rng_next(&b->rng) % (E - i));
    uint32_t t = b->order[i];
    b->order[i] = b->order[j];
    b->order[j] = t;
  }
  /* each of the EP members routes its b s / TP tokens (sequence parallel) to top-k */
  b->total = div_ceil((uint64_t)s->micro_batch_size * s->shape.seq, b->T) * b->EP * s->shape.top_k;
}

static void route_free(Builder *b)
{
  g_free(b->order);
  g_free(b->gcd_of);
  g_free(b->counts);
  g_free(b->load);
  g_free(b->dispatch);
  g_free(b->combine);
  g_free(b->swaps);
}

#define FOR_STAGE_RANKS(b, p, r)                                                                   \
  for (uint32_t d_ = 0; d_ < (b)->D; d_++)                                                         \
    for (uint32_t t_ = 0, r = rank_of(b, p, d_, 0); t_ < (b)->T; t_++, r++)

/* Sends of stage p's step (fwd, mb) to stage `to`, recorded in `slot`. */
static gboolean sends(Builder *b, uint32_t p, uint32_t to, gboolean fwd, uint32_t mb,
                      uint32_t *slot)
{
  uint64_t bytes = pp_send_bytes(b->s);
  uint32_t i = 0;
  FOR_STAGE_RANKS(b, p, r)
  {
    uint32_t dst = rank_of(b, to, d_, t_);
    g_snprintf(b->name, sizeof b->name, "i%u/pp/%c%u/r%u>r%u/%" PRIu64 "B", b->it, fwd ? 'F' : 'B',
               mb, r, dst, bytes);
    int64_t id = send(b, r, dst, bytes);
    if (id < 0)
      return FALSE;
    slot[i++] = (uint32_t)id;
  }
  return TRUE;
}

static void receive(Builder *b, uint32_t p, const uint32_t *slot)
{
  uint32_t i = 0;
  FOR_STAGE_RANKS(b, p, r)
  {
    g_array_append_val(b->pending[r], slot[i]);
    i++;
  }
}

static gboolean forward(Builder *b, uint32_t p, uint32_t mb)
{
  const WhPresetSpec *s = b->s;
  uint32_t DT = b->D * b->T, first = stage_first(s, p), lp = stage_layers(s, p);
  gboolean last_stage = p == b->P - 1;
  if (p > 0)
    receive(b, p, b->fsend + ((p - 1) * b->m + mb) * DT);
  if (!is_moe(s)) {
    double flops = lp * (attn_flops(s) + ffn_flops(s)) + (last_stage ? head_flops(s) : 0);
    FOR_STAGE_RANKS(b, p, r)
    {
      g_snprintf(b->name, sizeof b->name, "i%u/s%u/r%u/F%u", b->it, p, r, mb);
      if (!compute(b, r, flops / b->T))
        return FALSE;
    }
  } else {
    for (uint32_t l = first; l < first + lp; l++) {
      FOR_STAGE_RANKS(b, p, r)
      {
        g_snprintf(b->name, sizeof b->name, "i%u/s%u/r%u/F%u/L%u/attn", b->it, p, r, mb, l);
        if (!compute_for(b, r, moe_time(s, OP_ATTN, TRUE, attn_flops(s))))
          return FALSE;
      }
      if (!all_to_all(b, p, TRUE, mb, l, "dispatch"))
        return FALSE;
      FOR_STAGE_RANKS(b, p, r)
      {
        g_snprintf(b->name, sizeof b->name, "i%u/s%u/r%u/F%u/L%u/expert", b->it, p, r, mb, l);
        if (!compute_for(b, r, expert_time(b, TRUE, d_ % b->EP)))
          return FALSE;
      }
      if (!all_to_all(b, p, TRUE, mb, l, "combine"))
        return FALSE;
    }
    if (last_stage) {
      FOR_STAGE_RANKS(b, p, r)
      {
        g_snprintf(b->name, sizeof b->name, "i%u/s%u/r%u/F%u/head", b->it, p, r, mb);
        if (!compute_for(b, r, moe_time(s, OP_HEAD, TRUE, head_flops(s))))
          return FALSE;
      }
    }
  }
  return last_stage || sends(b, p, p + 1, TRUE, mb, b->fsend + (p * b->m + mb) * DT);
}

static gboolean backward(Builder *b, uint32_t p, uint32_t mb)
{
  const WhPresetSpec *s = b->s;
  uint32_t DT = b->D * b->T, first = stage_first(s, p), lp = stage_layers(s, p);
  gboolean last_stage = p == b->P - 1, final = mb == b->m - 1;
  double k = bwd_factor(s) / b->T;
  if (!last_stage)
    receive(b, p, b->bsend + ((p + 1) * b->m + mb) * DT);
  if (!is_moe(s)) {
    double layer = attn_flops(s) + ffn_flops(s), head = last_stage ? head_flops(s) : 0;
    if (!final) {
      FOR_STAGE_RANKS(b, p, r)
      {
        g_snprintf(b->name, sizeof b->name, "i%u/s%u/r%u/B%u", b->it, p, r, mb);
        if (!compute(b, r, k * (lp * layer + head)))
          return FALSE;
      }
    } else {
      for (uint32_t j = 0; j < s->buckets; j++) {
        double flops = bucket_layers(s, p, j) * layer + (j == 0 ? head : 0);
        FOR_STAGE_RANKS(b, p, r)
        {
          if (s->buckets > 1)
            g_snprintf(b->name, sizeof b->name, "i%u/s%u/r%u/B%u/part%u", b->it, p, r, mb, j);
          else
            g_snprintf(b->name, sizeof b->name, "i%u/s%u/r%u/B%u", b->it, p, r, mb);
          if (!compute(b, r, k * flops))
            return FALSE;
        }
        if (!all_reduce(b, p, j))
          return FALSE;
      }
    }
  } else {
    if (last_stage) {
      FOR_STAGE_RANKS(b, p, r)
      {
        g_snprintf(b->name, sizeof b->name, "i%u/s%u/r%u/B%u/head", b->it, p, r, mb);
        if (!compute_for(b, r, moe_time(s, OP_HEAD, FALSE, head_flops(s))))
          return FALSE;
      }
    }
    uint32_t j = 0, left = bucket_layers(s, p, 0);
    for (uint32_t l = first + lp; l-- > first;) {
      if (!all_to_all(b, p, FALSE, mb, l, "combine-grad"))
        return FALSE;
      FOR_STAGE_RANKS(b, p, r)
      {
        g_snprintf(b->name, sizeof b->name, "i%u/s%u/r%u/B%u/L%u/expert", b->it, p, r, mb, l);
        if (!compute_for(b, r, expert_time(b, FALSE, d_ % b->EP)))
          return FALSE;
      }
      if (!all_to_all(b, p, FALSE, mb, l, "dispatch-grad"))
        return FALSE;
      FOR_STAGE_RANKS(b, p, r)
      {
        g_snprintf(b->name, sizeof b->name, "i%u/s%u/r%u/B%u/L%u/attn", b->it, p, r, mb, l);
        if (!compute_for(b, r, moe_time(s, OP_ATTN, FALSE, attn_flops(s))))
          return FALSE;
      }
      if (final && --left == 0) {
        if (!all_reduce(b, p, j))
          return FALSE;
        if (++j < s->buckets)
          left = bucket_layers(s, p, j);
      }
    }
  }
  return p == 0 || sends(b, p, p - 1, FALSE, mb, b->bsend + (p * b->m + mb) * DT);
}

/* Step k of stage p under 1F1B: min(P - 1 - p, m) warm-up forwards, then F/B pairs,
 * then the remaining backwards. */
static void step_at(uint32_t P, uint32_t m, uint32_t p, uint32_t k, gboolean *fwd, uint32_t *mb)
{
  uint32_t warm = MIN(P - 1 - p, m);
  if (k < warm) {
    *fwd = TRUE;
    *mb = k;
    return;
  }
  k -= warm;
  if (k < 2 * (m - warm)) {
    *fwd = k % 2 == 0;
    *mb = *fwd ? warm + k / 2 : k / 2;
    return;
  }
  *fwd = FALSE;
  *mb = m - warm + (k - 2 * (m - warm));
}

static gboolean iteration(Builder *b)
{
  uint32_t P = b->P, m = b->m;
  if (!route(b))
    return FALSE;
  g_autofree uint32_t *pos = g_new0(uint32_t, P);
  g_autofree gboolean *fdone = g_new0(gboolean, P * m), *bdone = g_new0(gboolean, P * m);
  uint32_t left = P * 2 * m;
  while (left > 0) {
    gboolean progress = FALSE;
    for (uint32_t p = 0; p < P; p++) {
      while (pos[p] < 2 * m) {
        gboolean fwd;
        uint32_t mb;
        step_at(P, m, p, pos[p], &fwd, &mb);
        gboolean ready =
            fwd ? p == 0 || fdone[(p - 1) * m + mb] : p == P - 1 || bdone[(p + 1) * m + mb];
        if (!ready)
          break;
        if (!(fwd ? forward(b, p, mb) : backward(b, p, mb)))
          return FALSE;
        (fwd ? fdone : bdone)[p * m + mb] = TRUE;
        pos[p]++;
        left--;
        progress = TRUE;
      }
    }
    g_assert(progress); /* 1F1B cannot deadlock */
  }
  for (uint32_t r = 0; r < P * b->D * b->T; r++) {
    g_array_append_vals(b->pending[r], b->next_iter[r]->data, b->next_iter[r]->len);
    g_array_set_size(b->next_iter[r], 0);
  }
  return TRUE;
}

gboolean wh_preset_build(WhWorkload *w, const WhPresetSpec *spec, GError **error)
{
  return wh_preset_build_checks(w, spec, NULL, error);
}

gboolean wh_preset_build_checks(WhWorkload *w, const WhPresetSpec *spec, GArray *checks,
                                GError **error)
{
  if (!wh_preset_spec_check(spec, error))
    return FALSE;
  uint32_t n = wh_preset_ranks(spec);
  if (wh_workload_n_ranks(w) != n)
    return wh_error_set(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                        "%s: TP %u x PP %u x DP %u needs %u ranks but the workload has %u",
                        spec->model ? spec->model : "model", spec->tp, spec->pp, spec->dp, n,
                        wh_workload_n_ranks(w));
  for (uint32_t r = 0; r < n; r++) {
    if (!wh_workload_map_rank(w, r, r, error)) {
      g_prefix_error(error, "%s needs %u hosts: ", spec->model ? spec->model : "model", n);
      return FALSE;
    }
  }
  Builder b = {.w = w,
               .s = spec,
               .P = spec->pp,
               .D = spec->dp,
               .T = spec->tp,
               .m = micro_batches(spec),
               .EP = spec->ep,
               .error = error,
               .checks = checks};
  route_init(&b);
  uint32_t slots = b.P * b.m * b.D * b.T;
  b.last = g_new(uint32_t, n);
  b.pending = g_new(GArray *, n);
  b.next_iter = g_new(GArray *, n);
  for (uint32_t r = 0; r < n; r++) {
    b.last[r] = NONE;
    b.pending[r] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    b.next_iter[r] = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  }
  b.fsend = g_new(uint32_t, slots);
  b.bsend = g_new(uint32_t, slots);
  b.deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  b.group = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  gboolean ok = TRUE;
  for (b.it = 0; ok && b.it < spec->iterations; b.it++)
    ok = iteration(&b);
  for (uint32_t r = 0; r < n; r++) {
    g_array_unref(b.pending[r]);
    g_array_unref(b.next_iter[r]);
  }
  g_free(b.last);
  g_free(b.pending);
  g_free(b.next_iter);
  g_free(b.fsend);
  g_free(b.bsend);
  g_array_unref(b.deps);
  g_array_unref(b.group);
  route_free(&b);
  return ok;
}

/* ---- facts ---- */

/* Payload bytes a ring all-reduce of `size` over n ranks puts on the network. */
static uint64_t ring_total(uint64_t n, uint64_t size)
{
  return n > 1 && size > 0 ? n * 2 * (n - 1) * div_ceil(size, n) : 0;
}

/* Compute time of one rank of stage p per iteration, summed op by op as built. */
static WhTime stage_compute_time(const WhPresetSpec *s, uint32_t p)
{
  uint32_t m = micro_batches(s), lp = stage_layers(s, p), T = s->tp;
  double head = p == s->pp - 1 ? head_flops(s) : 0, k = bwd_factor(s) / T;
  if (is_moe(s)) {
    WhTime f = lp * (moe_time(s, OP_ATTN, TRUE, attn_flops(s)) +
                     moe_time(s, OP_EXPERT, TRUE, ffn_flops(s))),
           bw = lp * (moe_time(s, OP_ATTN, FALSE, attn_flops(s)) +
                      moe_time(s, OP_EXPERT, FALSE, ffn_flops(s)));
    if (p == s->pp - 1) {
      f += moe_time(s, OP_HEAD, TRUE, head);
      bw += moe_time(s, OP_HEAD, FALSE, head);
    }
    return m * (f + bw);
  }
  double layer = attn_flops(s) + ffn_flops(s);
  WhTime t =
      m * op_time(s, (lp * layer + head) / T) + (m - 1) * op_time(s, k * (lp * layer + head));
  for (uint32_t j = 0; j < s->buckets; j++)
    t += op_time(s, k * (bucket_layers(s, p, j) * layer + (j == 0 ? head : 0)));
  return t;
}

gboolean wh_preset_facts(const WhPresetSpec *s, WhPresetFacts *out, GError **error)
{
  if (!wh_preset_spec_check(s, error))
    return FALSE;
  const WhModelShape *md = &s->shape;
  uint64_t P = s->pp, D = s->dp, T = s->tp, EP = s->ep, m = micro_batches(s), L = md->layers,
           B = s->buckets, n = P * D * T;
  WhPresetFacts f = {.ranks = (uint32_t)n,
                     .micro_batches = (uint32_t)m,
                     .global_batch = (uint32_t)(D * m * s->micro_batch_size)};
  if (is_moe(s))
    f.n_compute = (uint32_t)(D * T * (4 * m * L + 2 * m));
  else
    f.n_compute = (uint32_t)(n * 2 * m + n * (B - 1));
  f.n_send = (uint32_t)(2 * m * (P - 1) * D * T);
  f.n_all_to_all = EP > 1 ? (uint32_t)(4 * m * L * T * (D / EP)) : 0;
  f.n_all_reduce =
      (uint32_t)((D > 1 ? P * T * B : 0) + (is_moe(s) && D / EP > 1 ? P * T * EP * B : 0));
  f.ops = f.n_compute + f.n_send + f.n_all_to_all + f.n_all_reduce;
  f.params = model_params(md);
  f.expert_params = L * layer_expert_params(md);
  double fwd = L * (attn_flops(s) + ffn_flops(s)) + head_flops(s);
  f.flops = (double)D * m * fwd * (1 + bwd_factor(s));
  f.model_flops = 3 * fwd * D * m;
  for (uint32_t p = 0; p < P; p++)
    f.compute_time = MAX(f.compute_time, stage_compute_time(s, p));
  f.pp_send_bytes = pp_send_bytes(s);
  f.pp_bytes = f.n_send * f.pp_send_bytes;
  f.a2a_bytes = EP > 1 ? a2a_bytes(s) : 0;
  f.ep_bytes = f.n_all_to_all * EP * (EP - 1) * div_ceil(f.a2a_bytes, EP);
  for (uint32_t p = 0; p < P; p++) {
    uint64_t rank_bytes = 0;
    for (uint32_t j = 0; j < B; j++) {
      uint64_t dense, expert;
      bucket_bytes(s, p, j, &dense, &expert);
      if (D > 1)
        rank_bytes += dense;
      if (D / EP > 1)
        rank_bytes += expert;
      f.dp_bytes += T * ring_total(D, dense) + T * EP * ring_total(D / EP, expert);
    }
    f.dp_rank_bytes = MAX(f.dp_rank_bytes, rank_bytes);
  }
  /* TP with sequence parallelism (Korthikanti et al. 2022): per layer and micro-batch
   * two all-gathers and two reduce-scatters of the n h activation forward and again
   * backward (and forward again with recomputation), each moving (T - 1) x size over
   * the group; MoE layers also all-gather and reduce-scatter the n k dispatched tokens
   * over the expert's TP group. */
  if (T > 1) {
    uint64_t act = (uint64_t)s->micro_batch_size * md->seq * md->hidden * s->act_bytes;
    uint64_t per_pass = 4 * act + (is_moe(s) ? 2 * act * md->top_k : 0);
    f.tp_bytes = D * m * L * (T - 1) * per_pass * (s->recompute ? 3 : 2);
  }
  *out = f;
  return TRUE;
}

static char *size_text(uint64_t bytes)
{
  return g_format_size_full(bytes, G_FORMAT_SIZE_DEFAULT);
}

char *wh_preset_facts_text(const WhPresetSpec *s, const WhPresetFacts *f)
{
  const WhModelShape *m = &s->shape;
  GString *t = g_string_new(NULL);
  g_string_append_printf(t,
                         "model %s: %u layers, hidden %u, FFN %u, %u heads (%u KV), sequence %u, "
                         "vocabulary %u",
                         s->model ? s->model : "custom", m->layers, m->hidden, m->ffn, m->heads,
                         m->kv_heads, m->seq, m->vocab);
  if (m->experts > 1)
    g_string_append_printf(t, ", %u experts top-%u", m->experts, m->top_k);
  g_string_append_printf(t, "; %" PRIu64 " parameters (%.2f B)", f->params, f->params * 1e-9);
  if (f->expert_params)
    g_string_append_printf(t, ", %.2f B in experts", f->expert_params * 1e-9);
  g_string_append_printf(t,
                         "\nparallel: TP %u x PP %u x DP %u (EP %u) = %u GPUs, rank = (pp x DP + "
                         "dp) x TP + tp on host rank; %u micro-batches of %u per iteration, "
                         "global batch %u sequences\n",
                         s->tp, s->pp, s->dp, s->ep, f->ranks, f->micro_batches,
                         s->micro_batch_size, f->global_batch);
  if (s->fixed_times)
    g_string_append_printf(t,
                           "compute: %.4g FLOP per iteration (model %.4g), fixed forward times "
                           "per layer %.3f us attention, %.3f us experts, head %.3f us; busiest "
                           "GPU %.3f ms of compute per iteration%s\n",
                           f->flops, f->model_flops, (double)s->attn_time * 1e-6,
                           (double)s->expert_time * 1e-6, (double)s->head_time * 1e-6,
                           (double)f->compute_time * 1e-9, s->recompute ? " (recomputation)" : "");
  else
    g_string_append_printf(t,
                           "compute: %.4g FLOP per iteration (model %.4g), %.4g FLOP/s x %.2f; "
                           "busiest GPU %.3f ms of compute per iteration%s\n",
                           f->flops, f->model_flops, s->peak_flops, s->efficiency,
                           (double)f->compute_time * 1e-9, s->recompute ? " (recomputation)" : "");
  g_string_append_printf(
      t, "ops per iteration: %u (%u compute, %u send, %u all-reduce, %u all-to-all)\n", f->ops,
      f->n_compute, f->n_send, f->n_all_reduce, f->n_all_to_all);
  g_autofree char *dp = size_text(f->dp_bytes), *dpr = size_text(f->dp_rank_bytes),
                  *pp = size_text(f->pp_bytes), *pps = size_text(f->pp_send_bytes),
                  *ep = size_text(f->ep_bytes), *a2a = size_text(f->a2a_bytes),
                  *tp = size_text(f->tp_bytes);
  g_string_append_printf(t,
                         "network per iteration: DP %" PRIu64 " B (%s; %s all-reduced per GPU in "
                         "%u buckets), PP %" PRIu64 " B (%s; %s per send), EP %" PRIu64
                         " B (%s; %s all-to-all buffer per GPU)\n",
                         f->dp_bytes, dp, dpr, s->buckets, f->pp_bytes, pp, pps, f->ep_bytes, ep,
                         a2a);
  if (s->routing == WH_ROUTING_ZIPF)
    g_string_append_printf(t,
                           "routing: Zipf s %.3g over a ranking drifting with probability %.3g "
                           "per adjacent pair and iteration (EP volume above: balanced)\n",
                           s->zipf_s, s->drift);
  else if (s->routing == WH_ROUTING_FILE)
    g_string_append_printf(t,
                           "routing: expert counts from a file, %u rows (EP volume above: "
                           "balanced)\n",
                           s->routing_rows);
  if (s->migrate)
    g_string_append_printf(t,
                           "migration: every %u iterations above max/mean %.3g, at most %u "
                           "swaps\n",
                           s->migrate_period, s->migrate_threshold, s->migrate_rounds);
  g_string_append_printf(
      t, "TP traffic not modelled: %" PRIu64 " bytes (%s) per iteration stay inside servers",
      f->tp_bytes, tp);
  return g_string_free(t, FALSE);
}

/* ---- registered parameters ---- */

static const char *const a2a_choices[] = {"direct", "pairwise", "rccl", "halo", NULL};
static const char *const routing_choices[] = {"uniform", "zipf", "file", NULL};

#define SHAPE(name, help)                                                                          \
  {                                                                                                \
    name, WH_PARAM_INT, "0", help "; 0 = the preset's", WH_CHECK_MIN | WH_CHECK_MAX, 0, 1 << 24    \
  }

static const WhParamSpec preset_params[] = {
    {"Model", WH_PARAM_CHOICE, "gpt-13b",
     "model preset: gpt-7b, gpt-13b, gpt-175b (GPT-3 shapes), moe-8x7b (Mixtral 8x7B), "
     "moe-32x22b (Mixtral 8x22B layers, 32 experts)",
     0, 0, 0, model_names},
    SHAPE("TP", "tensor-parallel GPUs (within a server; their traffic is not simulated)"),
    SHAPE("PP", "pipeline stages"),
    SHAPE("DP", "data-parallel replicas"),
    SHAPE("EP", "expert-parallel GPUs (divides DP and the experts)"),
    SHAPE("MicroBatches", "micro-batches per iteration (global batch = DP x this)"),
    {"MicroBatchSize", WH_PARAM_INT, "1", "sequences per micro-batch", WH_CHECK_MIN | WH_CHECK_MAX,
     1, 1 << 16},
    SHAPE("Layers", "transformer layers"),
    SHAPE("Hidden", "hidden size"),
    SHAPE("Ffn", "FFN size (per expert)"),
    SHAPE("Heads", "attention heads"),
    SHAPE("KvHeads", "key/value heads (grouped-query attention)"),
    SHAPE("SeqLength", "sequence length"),
    SHAPE("Vocab", "vocabulary size"),
    SHAPE("Experts", "experts per MoE layer (1: dense)"),
    SHAPE("TopK", "experts per token"),
    {"FfnMatrices", WH_PARAM_INT, "0",
     "FFN matrices per expert: 2 (GELU), 3 (SwiGLU); 0 = the family's (GPT 2, Mixtral 3)",
     WH_CHECK_MIN | WH_CHECK_MAX, 0, 3},
    {"PeakFlops", WH_PARAM_DOUBLE, "989e12", "peak FLOP/s per GPU (H100 SXM dense bf16)",
     WH_CHECK_POSITIVE},
    {"Efficiency", WH_PARAM_DOUBLE, "0.5", "achieved fraction of the peak",
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1},
    {"Buckets", WH_PARAM_INT, "1",
     "DP gradient buckets per stage (1: one all-reduce after the last backward)",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 1 << 16},
    {"GradBytes", WH_PARAM_INT, "2", "bytes per gradient element (bf16)",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 8},
    {"ActBytes", WH_PARAM_INT, "2", "bytes per activation element (bf16)",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 8},
    {"Recompute", WH_PARAM_BOOL, "false", "full activation recomputation (backward = 3 forward)"},
    {"FixedTimes", WH_PARAM_BOOL, "false",
     "MoE: compute op durations from AttnTime, ExpertTime, HeadTime (backward 2x, 3x with "
     "Recompute) instead of FLOPs / (PeakFlops x Efficiency)"},
    {"AttnTime", WH_PARAM_TIME, "0ps",
     "with FixedTimes: forward attention (and router) of a layer"},
    {"ExpertTime", WH_PARAM_TIME, "0ps", "with FixedTimes: forward experts of a layer"},
    {"HeadTime", WH_PARAM_TIME, "0ps", "with FixedTimes: forward output head (last stage)"},
    {"AllToAll", WH_PARAM_CHOICE, "direct",
     "EP all-to-all algorithm: direct, pairwise, rccl (wh::Workload::RcclWindow and "
     "RcclSchedule) or halo (needs Frontier nodes); the Frontier preset sets rccl",
     0, 0, 0, a2a_choices},
    {"Routing", WH_PARAM_CHOICE, "uniform",
     "MoE expert token counts per iteration: uniform (balanced all-to-all), zipf (Zipf(ZipfS) "
     "over a drifting expert ranking) or file (<workload routing=FILE>: a row of counts per "
     "iteration); skewed routing makes the all-to-alls all-to-allv",
     0, 0, 0, routing_choices},
    {"ZipfS", WH_PARAM_DOUBLE, "1", "Zipf exponent s of Routing zipf (0: uniform)", WH_CHECK_MIN,
     0},
    {"RoutingDrift", WH_PARAM_DOUBLE, "0.01",
     "Routing zipf: each iteration, adjacent ranks k, k + 1 swap with this probability",
     WH_CHECK_MIN | WH_CHECK_MAX, 0, 1},
    {"Migration", WH_PARAM_BOOL, "false",
     "expert migration by hill climbing within each EP group (needs skewed Routing)"},
    {"MigrationThreshold", WH_PARAM_DOUBLE, "1.25",
     "migrate when max/mean GPU token load of the last iteration is above this", WH_CHECK_MIN, 1},
    {"MigrationPeriod", WH_PARAM_INT, "1", "check for migration every this many iterations",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 1 << 20},
    {"MigrationRounds", WH_PARAM_INT, "8", "at most this many expert swaps per check",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 1 << 16},
    {NULL},
};

const WhTypeInfo wh_model_preset_type = {
    .name = "wh::ModelPreset",
    .kind = "workload",
    .help = "training iteration of a GPT or MoE model under TP x PP x DP (x EP), 1F1B",
    .params = preset_params,
};

gboolean wh_preset_spec_from_config(WhPresetSpec *spec, const WhConfig *cfg, GError **error)
{
  const char *type = wh_model_preset_type.name;
  if (!wh_preset_spec_init(spec, wh_config_choice(cfg, type, "Model"), error))
    return FALSE;
  static const struct {
    const char *param;
    size_t offset;
  } overrides[] = {
      {"TP", offsetof(WhPresetSpec, tp)},
      {"PP", offsetof(WhPresetSpec, pp)},
      {"DP", offsetof(WhPresetSpec, dp)},
      {"EP", offsetof(WhPresetSpec, ep)},
      {"MicroBatches", offsetof(WhPresetSpec, micro_batches)},
      {"MicroBatchSize", offsetof(WhPresetSpec, micro_batch_size)},
      {"Layers", offsetof(WhPresetSpec, shape.layers)},
      {"Hidden", offsetof(WhPresetSpec, shape.hidden)},
      {"Ffn", offsetof(WhPresetSpec, shape.ffn)},
      {"Heads", offsetof(WhPresetSpec, shape.heads)},
      {"KvHeads", offsetof(WhPresetSpec, shape.kv_heads)},
      {"SeqLength", offsetof(WhPresetSpec, shape.seq)},
      {"Vocab", offsetof(WhPresetSpec, shape.vocab)},
      {"Experts", offsetof(WhPresetSpec, shape.experts)},
      {"TopK", offsetof(WhPresetSpec, shape.top_k)},
      {"FfnMatrices", offsetof(WhPresetSpec, shape.ffn_mats)},
      {"Buckets", offsetof(WhPresetSpec, buckets)},
      {"GradBytes", offsetof(WhPresetSpec, grad_bytes)},
      {"ActBytes", offsetof(WhPresetSpec, act_bytes)},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(overrides); i++) {
    int64_t v = wh_config_int(cfg, type, overrides[i].param);
    if (v > 0)
      *(uint32_t *)((char *)spec + overrides[i].offset) = (uint32_t)v;
  }
  spec->peak_flops = wh_config_double(cfg, type, "PeakFlops");
  spec->efficiency = wh_config_double(cfg, type, "Efficiency");
  spec->recompute = wh_config_bool(cfg, type, "Recompute");
  spec->fixed_times = wh_config_bool(cfg, type, "FixedTimes");
  spec->attn_time = wh_config_time(cfg, type, "AttnTime");
  spec->expert_time = wh_config_time(cfg, type, "ExpertTime");
  spec->head_time = wh_config_time(cfg, type, "HeadTime");
  if (!wh_coll_algo_parse(wh_config_choice(cfg, type, "AllToAll"), &spec->all_to_all))
    spec->all_to_all = WH_ALGO_DIRECT; /* the choices are checked when set */
  const char *routing = wh_config_choice(cfg, type, "Routing");
  spec->routing = g_strcmp0(routing, "zipf") == 0   ? WH_ROUTING_ZIPF
                  : g_strcmp0(routing, "file") == 0 ? WH_ROUTING_FILE
                                                    : WH_ROUTING_UNIFORM;
  spec->zipf_s = wh_config_double(cfg, type, "ZipfS");
  spec->drift = wh_config_double(cfg, type, "RoutingDrift");
  spec->migrate = wh_config_bool(cfg, type, "Migration");
  spec->migrate_threshold = wh_config_double(cfg, type, "MigrationThreshold");
  spec->migrate_period = (uint32_t)wh_config_int(cfg, type, "MigrationPeriod");
  spec->migrate_rounds = (uint32_t)wh_config_int(cfg, type, "MigrationRounds");
  spec->iterations = 1;
  if (spec->routing == WH_ROUTING_FILE)
    return TRUE; /* checked once the caller has loaded the counts */
  if (!wh_preset_spec_check(spec, error)) {
    g_prefix_error(error, "%s: ", type);
    return FALSE;
  }
  return TRUE;
}
