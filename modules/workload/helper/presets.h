/* Training-model presets: one call adds a training iteration's op DAG (compute, p2p
 * sends, collectives) for a transformer (GPT-style dense or Mixtral-style MoE) under a
 * TP x PP x DP (x EP) parallel configuration, in the setting of the Wormhole paper's
 * evaluation (rail-optimized fat-tree, one GPU = one rank = one host, micro-batch 1,
 * PP micro-batches per iteration so the global batch is DP x PP, and only DP, PP and
 * EP traffic on the network: tensor-parallel (TP/SP) traffic stays on NVLink inside a
 * server and is not simulated, but its volume is reported by wh_preset_facts). Rank
 * mapping: rank = (pp * DP + dp) * TP + tp, and rank r runs on host r; on a
 * wh::RailFatTree with GpusPerServer = TP (host = server * G + gpu) a TP group is one
 * server, GPU index = tp, and every DP, EP and PP peer of a rank is the same GPU index
 * of another server, i.e. all network traffic stays on one rail. Each pipeline stage
 * runs the 1F1B schedule of Narayanan et al., "Efficient Large-Scale Language Model
 * Training on GPU Clusters Using Megatron-LM", SC'21 (PipeDream-Flush): min(PP - 1 -
 * stage, m) warm-up forwards, then alternating forward/backward, then the remaining
 * backwards; a rank's compute ops form a chain in that order. Sends are asynchronous
 * (the sender's chain does not wait for them); a receiver's op waits for the send.
 * Compute time = FLOPs / (PeakFlops x Efficiency). The FLOP, parameter and byte
 * formulas, with sources and what is approximate, are in presets.c. Op names (unique,
 * usable to find ops in ops.csv) are "i<iter>/..." paths; communication op names end
 * in their size, "/<bytes>B" (see presets.c). */
#ifndef WH_PRESETS_H
#define WH_PRESETS_H

#include <glib.h>
#include "registry.h"
#include "routing-skew.h"
#include "workload.h"

typedef enum {
  /* GPT-3 style (Brown et al. 2020; Megatron-LM GPT): GELU FFN of 2 matrices, biases,
   * LayerNorm, learned positions, input and output embeddings tied */
  WH_FAMILY_GPT,
  /* Mixtral style (Jiang et al. 2024): SwiGLU FFN of 3 matrices, no biases, RMSNorm,
   * RoPE, untied output head; grouped-query attention through kv_heads */
  WH_FAMILY_MIXTRAL,
} WhModelFamily;

typedef struct {
  WhModelFamily family;
  uint32_t layers, hidden, ffn; /* ffn: per expert for an MoE */
  uint32_t heads, kv_heads;     /* kv_heads < heads: grouped-query attention */
  uint32_t seq, vocab;
  uint32_t experts, top_k; /* experts 1: dense; > 1: every layer is an MoE layer */
  uint32_t ffn_mats;       /* FFN matrices: 2 (GELU) or 3 (SwiGLU); 0: the family's */
} WhModelShape;

typedef struct {
  const char *model; /* preset name, for reports (static) */
  WhModelShape shape;
  uint32_t tp, pp, dp, ep; /* ep divides dp and shape.experts; 1 for a dense model */
  uint32_t micro_batches;  /* per iteration; 0: pp (global batch = dp x pp) */
  uint32_t micro_batch_size;
  double peak_flops;              /* per GPU, FLOP/s */
  double efficiency;              /* achieved fraction of peak, (0, 1] */
  uint32_t grad_bytes, act_bytes; /* bytes per gradient / activation element (bf16: 2) */
  uint32_t buckets;               /* DP gradient buckets per stage (<= layers per stage) */
  gboolean recompute;             /* full activation recomputation: backward = 3 x forward */
  WhCollAlgo all_to_all;          /* WH_ALGO_DIRECT, PAIRWISE, RCCL or HALO */
  uint32_t iterations;            /* iterations to add; iteration i's ops are contiguous */
  /* MoE only: TRUE takes every compute op's duration from the times below instead of
   * FLOPs / (peak x efficiency): forward attention (with the router), forward experts
   * and forward output head of one micro-batch on one rank; a backward op takes
   * 2 x (3 x with recompute) its forward time */
  gboolean fixed_times;
  WhTime attn_time, expert_time, head_time;
  /* MoE routing (docs/modules/workload.md "Routing skew and expert migration"): uniform is
   * the balanced all-to-all; zipf and file draw per-iteration expert counts that set
   * the all-to-allv sizes and each GCD's expert time. Needs EP >= 2. */
  WhRoutingKind routing;
  double zipf_s;                  /* Zipf exponent, >= 0 (default 1) */
  double drift;                   /* ranking drift: adjacent-swap probability (default 0.01) */
  uint64_t seed;                  /* the scenario seed: ranking and drift draws */
  const uint64_t *routing_counts; /* file: routing_rows x experts (transfer none) */
  uint32_t routing_rows;          /* iteration i takes row i mod routing_rows */
  /* Expert migration: every migrate_period iterations, when max/mean GCD load of the
   * previous iteration is above migrate_threshold (>= 1), at most migrate_rounds
   * hill-climb swaps per EP group, the moved experts sent as flows */
  gboolean migrate;
  double migrate_threshold;                /* default 1.25 */
  uint32_t migrate_period, migrate_rounds; /* defaults 1 and 8 */
} WhPresetSpec;

/* One migration check of a skewed build (the same for every EP group): the load
 * max/mean of the iteration before, before and after the swaps, and what moved. */
typedef struct {
  uint32_t iteration; /* the iteration whose ops wait for the moved experts */
  uint32_t swaps;     /* per EP group; 0: below the threshold or no swap helped */
  double imbalance_before, imbalance_after;
  uint64_t bytes; /* on the network, over all EP groups, stages and TP ranks */
  uint32_t flows;
} WhMigrationCheck;

/* The preset names, NULL-terminated: gpt-7b, gpt-13b, gpt-175b, moe-8x7b,
 * moe-32x22b. */
const char *const *wh_preset_model_names(void);

/* Fills `spec` with a preset's shape and default parallel configuration (gpt-7b TP8
 * PP2 DP4 on 64 GPUs; gpt-13b TP8 PP2 DP8 on 128; gpt-175b TP8 PP8 DP16 on 1024;
 * moe-8x7b TP8 PP2 DP8 EP8 on 128; moe-32x22b TP8 PP8 DP16 EP16 on 1024) and the
 * defaults: micro_batches 0 (= pp), micro-batch size 1, 989 TFLOP/s at efficiency 0.5,
 * bf16 gradients and activations, 1 bucket, no recomputation, direct all-to-all, 1
 * iteration, uniform routing (Zipf s 1, drift 0.01, seed 1), no migration (threshold
 * 1.25, period 1, 8 rounds). Fields may be changed afterwards. */
gboolean wh_preset_spec_init(WhPresetSpec *spec, const char *model, GError **error);

/* The registered parameters (type "wh::ModelPreset", kind "workload"); the caller
 * registers it. Shape and parallel parameters of 0 keep the preset's value. */
extern const WhTypeInfo wh_model_preset_type;

/* Fills `spec` from the wh::ModelPreset parameters of `cfg` (Model, then overrides)
 * and checks it. iterations is set to 1. With Routing file the check is left to the
 * caller, which sets routing_counts (and seed) first. */
gboolean wh_preset_spec_from_config(WhPresetSpec *spec, const WhConfig *cfg, GError **error);

/* Checks divisibility and ranges (heads % tp, dp % ep, experts % ep, ...). */
gboolean wh_preset_spec_check(const WhPresetSpec *spec, GError **error);

uint32_t wh_preset_ranks(const WhPresetSpec *spec);
static inline uint32_t wh_preset_rank(const WhPresetSpec *spec, uint32_t pp, uint32_t dp,
                                      uint32_t tp)
{
  return (pp * spec->dp + dp) * spec->tp + tp;
}

/* Adds spec->iterations training iterations to `w`, which must have exactly
 * wh_preset_ranks(spec) ranks (mapped to hosts 0..ranks-1, which must exist). The
 * first ops of iteration i + 1 on a rank wait for its last compute op and for every
 * DP all-reduce it takes part in of iteration i (the optimizer step, which takes no
 * time). On error the workload may hold part of the ops: discard it. */
gboolean wh_preset_build(WhWorkload *w, const WhPresetSpec *spec, GError **error);

/* wh_preset_build, appending a WhMigrationCheck to `checks` (nullable) for every
 * migration check of a build with spec->migrate. */
gboolean wh_preset_build_checks(WhWorkload *w, const WhPresetSpec *spec, GArray *checks,
                                GError **error);

/* Summary facts of one iteration, computed from the spec alone (no build). Byte
 * counts are payload bytes summed over every flow (one collective step or p2p send is
 * one flow), exactly what the build puts on the network. */
typedef struct {
  uint32_t ranks, micro_batches, global_batch;                 /* global batch in sequences */
  uint32_t ops, n_compute, n_send, n_all_reduce, n_all_to_all; /* per iteration */
  uint64_t params;                                             /* whole model */
  uint64_t expert_params;                                      /* of which in experts */
  double flops;           /* executed per iteration by all GPUs (with recomputation) */
  double model_flops;     /* 3 x forward FLOPs x global batch (no recomputation) */
  WhTime compute_time;    /* busiest rank's compute per iteration */
  uint64_t pp_send_bytes; /* one stage-to-stage send of one TP rank */
  uint64_t a2a_bytes;     /* one all-to-all: each rank's send buffer (0: no EP) */
  uint64_t dp_rank_bytes; /* largest per-rank gradient all-reduce volume (all buckets) */
  uint64_t dp_bytes, pp_bytes, ep_bytes; /* per iteration, on the network */
  uint64_t tp_bytes;                     /* per iteration, inside servers: NOT simulated */
} WhPresetFacts;

gboolean wh_preset_facts(const WhPresetSpec *spec, WhPresetFacts *out, GError **error);

/* A printable multi-line report of `spec` and `facts`, ending with "TP traffic not
 * modelled: X bytes per iteration stay inside servers". (transfer full) */
char *wh_preset_facts_text(const WhPresetSpec *spec, const WhPresetFacts *facts);

#endif
