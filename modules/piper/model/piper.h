/* Piper resource model (Dash and Wang, "Piper: Efficient Large-Scale MoE Training via
 * Resource Modeling and Pipelined Hybrid Parallelism", ORNL 2026): a catalogue of MoE
 * models (GLib key files), the memory model (the paper's literal per-stage formula and
 * a per-GCD form in tokens per GCD), a compute model of an MI250X GCD calibrated on the
 * paper's single-layer measurements, a communication model on the Frontier preset's
 * link rates, and the PP x EP strategy planner behind `whsim plan`. Formulas and
 * assumptions: docs/modules/piper.md. */
#ifndef WH_PIPER_H
#define WH_PIPER_H

#include <glib.h>
#include <stdint.h>
#include <stdio.h>

#include "registry.h"

#define WH_PIPER_ERROR (wh_piper_error_quark())
GQuark wh_piper_error_quark(void);

enum { WH_PIPER_ERROR_INVALID };

/* ---- catalogue ---- */

typedef struct {
  char *name, *title, *source;
  uint32_t hidden, layers, experts, top_k, ffn, heads, kv_heads, seq, vocab, ffn_mats;
  char **sets;                                                /* NULL-terminated, may be empty */
  char **unmodelled;                                          /* NULL-terminated, may be empty */
  double single_layer_tflops, full_model_tflops, weak_tflops; /* 0: not measured */
  gboolean full_model_recompute;
  uint32_t weak_gcds;
} WhPiperModel;

typedef struct {
  WhPiperModel *models;
  uint32_t n;
} WhPiperCatalogue;

/* The built-in catalogue (modules/piper/data/models.ini, embedded at build time). */
const WhPiperCatalogue *wh_piper_catalogue(void);
/* Parses key-file text: every group is a model. `file` names it in errors. */
WhPiperCatalogue *wh_piper_catalogue_parse(const char *text, size_t len, const char *file,
                                           GError **error);
/* The cap on a model file given to --model (a catalogue of a few models is a few KB). */
#define WH_PIPER_MAX_MODEL_FILE_BYTES ((gsize)1 << 20)
/* Reads and parses a model file: a regular file of at most
 * WH_PIPER_MAX_MODEL_FILE_BYTES (a FIFO or device is refused, not read). */
WhPiperCatalogue *wh_piper_catalogue_load(const char *path, GError **error);
void wh_piper_catalogue_free(WhPiperCatalogue *c);
const WhPiperModel *wh_piper_find(const WhPiperCatalogue *c, const char *name);
gboolean wh_piper_in_set(const WhPiperModel *m, const char *set);

/* Parameters: L (2d^2 + 2d kv + mats E d d_ffn) + 2 V d. */
double wh_piper_params(const WhPiperModel *m);
double wh_piper_expert_params(const WhPiperModel *m);

/* ---- memory ---- */

typedef struct {
  double tokens;      /* T: tokens per GCD per micro-batch (per-GCD form) */
  double b_over_m;    /* b / M of the literal form */
  double b, m;        /* b and M of the literal form's expert term 2bsk / (M EP) */
  gboolean flash;     /* FlashAttention: no s^2 term */
  gboolean recompute; /* activation checkpointing (per-GCD form only) */
} WhPiperMemOpts;

/* The paper's formula, bytes, stage i (0-based) of PP stages. */
double wh_piper_mem_literal(const WhPiperModel *m, uint32_t pp, uint32_t ep, uint32_t stage,
                            const WhPiperMemOpts *o);
/* The per-GCD form, bytes, stage i: layers of the stage (L % PP spread over the first
 * stages), embedding on stage 0 and output head on the last. */
double wh_piper_mem_gcd(const WhPiperModel *m, uint32_t pp, uint32_t ep, uint32_t stage,
                        const WhPiperMemOpts *o);
uint32_t wh_piper_stage_layers(const WhPiperModel *m, uint32_t pp, uint32_t stage);

/* ---- compute ---- */

/* GEMM efficiency on a GCD: e_max x m / (m + m0) x n / (n + n0) x k / (k + n0) for an
 * m x k by k x n product (m tokens). */
typedef struct {
  double peak; /* FLOP/s per GCD: 191.5e12 */
  double e_max, m0, n0;
} WhPiperCompute;

/* Forward times (s) of one layer on one GCD for T tokens with EP-way experts. */
typedef struct {
  double attn, expert;             /* forward seconds */
  double attn_flops, expert_flops; /* forward FLOPs (model FLOPs) */
} WhPiperLayerTime;

void wh_piper_layer_time(const WhPiperCompute *c, const WhPiperModel *m, double tokens, uint32_t ep,
                         gboolean flash, WhPiperLayerTime *out);
/* Forward time of the output head (logits, V x d) for T tokens; 0 without a vocabulary. */
double wh_piper_head_time(const WhPiperCompute *c, const WhPiperModel *m, double tokens);
/* The single-layer prediction (one node, EP 8, T = s), TFLOPS per GCD. */
double wh_piper_single_layer_tflops(const WhPiperCompute *c, const WhPiperModel *m);
/* Fits e_max, m0, n0 on the catalogue's single-layer measurements (least squares on
 * log TFLOPS); returns the sum of squared log residuals. */
double wh_piper_calibrate(const WhPiperCatalogue *cat, WhPiperCompute *out);
/* The calibrated model of the built-in catalogue (computed once). */
const WhPiperCompute *wh_piper_compute_default(void);

/* ---- communication (Frontier preset link rates) ---- */

typedef struct {
  double nic; /* bytes/s per NIC: 25e9 */
  double nics_per_node, gcds_per_node;
  double fabric;        /* bytes/s of one xGMI link as delivered: 50e9 x FabricEfficiency */
  double latency;       /* s per message: wh::Workload::MessageAlpha */
  uint32_t switch_gcds; /* GCDs on one Rosetta switch: 32 */
  /* rounds per batch of the EP all-to-all (wh::ModelPreset::AllToAll=rccl with
   * wh::Workload::RcclSchedule=batch: wh::Workload::RcclWindow); 0: all at once */
  uint32_t a2a_batch;
} WhPiperNet;

/* The Frontier preset's machine (wh_topology_preset_apply). */
void wh_piper_net_default(WhPiperNet *n);
/* The rates and message cost from `cfg` (wh::Dragonfly::EndpointRate, FabricLinkRate x
 * FabricEfficiency, wh::Workload::MessageAlpha); the counts are left as they are. */
void wh_piper_net_from_config(const WhConfig *cfg, WhPiperNet *n);
/* One all-to-all of 2 T k d bytes per GCD over EP consecutive GCDs, seconds: the
 * busiest link's time plus one MessageAlpha, or, when longer, the EP - 1 alphas a GCD
 * pays one after another (plus, off the node, its last chunk at a NIC's rate). With
 * a2a_batch B, the simulator's batches: round i (GCD r sends to (r + i) mod EP) is in
 * batch i / B, and each batch costs that formula over the chunks of its rounds (the
 * busiest GCD's off-node and on-node chunks), one batch after another. */
double wh_piper_a2a_time(const WhPiperNet *n, const WhPiperModel *m, double tokens, uint32_t ep);
/* One stage-boundary send of 2 T d bytes, seconds (a NIC share: stages are on
 * different nodes unless EP < 8). */
double wh_piper_p2p_time(const WhPiperNet *n, const WhPiperModel *m, double tokens, uint32_t ep);
/* Ring all-reduce over the EP group of a stage's non-expert gradients (2 bytes). */
double wh_piper_allreduce_time(const WhPiperNet *n, const WhPiperModel *m, uint32_t pp, uint32_t ep,
                               uint32_t stage);

/* ---- planner ---- */

typedef struct {
  uint32_t gcds;
  double tokens;          /* per GCD per micro-batch; 0: s */
  uint32_t micro_batches; /* 0: 4 PP */
  gboolean flash, recompute;
  double hbm;    /* bytes: 64 GiB */
  double usable; /* fraction of hbm usable: 1.0 */
  /* machine settings ("Type::Param=VALUE": wh::Dragonfly::*, wh::Workload::MessageAlpha)
   * that an emitted scenario repeats as <set>, so it simulates the planned machine;
   * NULL-terminated, nullable */
  const char *const *machine_sets;
  uint32_t groups; /* Frontier groups of an emitted scenario; 0: wh_piper_groups' rule */
  /* an emitted scenario's compute: the builder's FLOPs of each op at e_max of the peak
   * (a roofline of the op shapes) instead of the compute model's times (FixedTimes) */
  gboolean roofline;
  /* --skew zipf:S: the plan adds the skewed step and migration */
  gboolean skew;
  double skew_s;
  uint32_t migration_rounds; /* swaps per check (wh::ModelPreset::MigrationRounds: 8) */
  uint32_t migration_period; /* steps between checks (MigrationPeriod: 1) */
} WhPiperPlanOpts;

typedef struct {
  uint32_t pp, ep, m;
  gboolean feasible;
  char reason[160];
  double *mem; /* per stage, bytes (per-GCD form); NULL when not evaluated */
  double mem_literal0;
  double t_fwd, t_bwd, t_p2p, t_ar, step; /* seconds */
  double t_a2a, t_expert;  /* one all-to-all; one layer's experts forward (seconds) */
  double t_attn;           /* one layer's attention (and router) forward (seconds) */
  uint32_t busiest_layers; /* layers of the busiest stage */
  double tflops, mfu;
} WhPiperCandidate;

typedef struct {
  WhPiperCandidate *c;
  uint32_t n;
} WhPiperPlan;

#define WH_PIPER_MAX_GCDS (74u * 1024u) /* the Frontier preset's 74 groups */
#define WH_PIPER_PEAK 191.5e12

gboolean wh_piper_plan(const WhPiperModel *m, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                       const WhPiperNet *net, WhPiperPlan *out, GError **error);
void wh_piper_plan_clear(WhPiperPlan *p);
/* The best feasible candidate (highest TFLOPS), or NULL. */
const WhPiperCandidate *wh_piper_plan_best(const WhPiperPlan *p);

/* The planner's report: the model, the assumptions, one row per candidate (memory,
 * step time, TFLOPS/GCD, MFU, rank or the reason it fails), memory of every stage.
 * (transfer full) */
char *wh_piper_plan_text(const WhPiperModel *m, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                         const WhPiperPlan *p);
/* The compute model's fit (residuals on the single-layer values) and its held-out
 * predictions (full models, weak scaling) beside the paper's. (transfer full) */
char *wh_piper_calibration_text(const WhPiperCatalogue *cat, const WhPiperCompute *c);

/* Groups of 128 nodes (1024 GCDs) are needed to hold `gcds`; a job of 256 nodes or
 * more gets at least WH_PIPER_MIN_LARGE_GROUPS, so that adaptive routing has groups
 * beyond the job's to detour through, as the full machine has. */
#define WH_PIPER_LARGE_JOB_NODES 256u
#define WH_PIPER_MIN_LARGE_GROUPS 4u
/* The groups of the machine an emitted scenario of `gcds` runs on: `requested` (0: the
 * rule above), refused (FALSE, `error` naming --groups) when it cannot hold the job or
 * exceeds the preset's 77 groups. */
gboolean wh_piper_groups(uint32_t gcds, uint32_t requested, uint32_t *out, GError **error);

/* Compute durations written into an emitted scenario, picoseconds (forward; the
 * builder makes a backward op 2x, 3x with recomputation). */
typedef struct {
  uint64_t attn, expert, head;
} WhPiperOpTimes;

/* Writes a Frontier scenario of candidate `k` through the wh::ModelPreset builder:
 * TP 1, DP = EP, the model's shape, and FixedTimes with the compute model's times
 * (stored in `times`, nullable). */
gboolean wh_piper_emit_scenario(const WhPiperModel *m, const WhPiperPlanOpts *o,
                                const WhPiperCompute *c, const WhPiperCandidate *k,
                                const char *path, WhPiperOpTimes *times, GError **error);

/* ---- routing skew and migration (skew.c) ---- */

#define WH_PIPER_MAX_ZIPF_S 8.0
/* Parses --skew's "zipf:S" (0 <= S <= WH_PIPER_MAX_ZIPF_S); FALSE with the value named. */
gboolean wh_piper_skew_parse(const char *text, double *s, GError **error);

typedef struct {
  double before;  /* busiest GCD's token load over the mean (experts in index order) */
  double after;   /* the same after the hill climbing */
  double hottest; /* the hottest expert's share x EP: no placement goes below it */
  uint32_t swaps; /* expert swaps the hill climbing made (at most `rounds`) */
} WhPiperSkew;

/* Zipf(s) shares over the E experts, E / EP on each GCD of the EP group in index order;
 * then up to `rounds` swaps between the most and the least loaded GCD, each the swap
 * that lowers the larger of the two loads most (the paper's hill climbing). */
void wh_piper_skew(const WhPiperModel *m, uint32_t ep, double s, uint32_t rounds, WhPiperSkew *out);
/* Bytes moved with one expert: 16 bytes per parameter (weights, gradients, optimizer)
 * of `mats` matrices of d x d_ffn. */
double wh_piper_expert_state_bytes(const WhPiperModel *m, uint32_t mats);
/* The paper's migration cost table (Table IV) for the catalogue's models of the
 * migration set: full per-layer reassignment, each of 8 GPUs sending its E / 8 experts
 * at 50 GB/s, with the paper's 48 d d_ffn bytes per expert and with the model's own
 * matrices. (transfer full) */
char *wh_piper_migration_table_text(const WhPiperCatalogue *cat);

/* `whsim plan --verify`: emits candidate `k` to `path` with roofline compute, simulates
 * it with Wormhole (skip mode) and appends the plan and the simulation side by side,
 * term by term (compute, pipeline send, expert all-to-all, gradient all-reduce, bubble,
 * step), to `out`, and (nullable `terms`) plan and simulation of term i, seconds, at
 * 2i and 2i + 1. A candidate that does not fit is refused (WH_PIPER_ERROR). */
#define WH_PIPER_VERIFY_TERMS 6
/* The terms' names, in the order of `terms` below. */
extern const char *const wh_piper_verify_term_names[WH_PIPER_VERIFY_TERMS];
gboolean wh_piper_verify(const WhPiperModel *m, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                         const WhPiperNet *net, const WhPiperCandidate *k, const char *path,
                         GString *out, double terms[2 * WH_PIPER_VERIFY_TERMS], GError **error);

/* The registered parameters (type "wh::Piper", kind "planner"): HbmCapacity,
 * UsableFraction, NicsPerNode, EpLimit. The machine's rates and message cost are the
 * Frontier preset's (wh_piper_net_from_config). */
extern const WhTypeInfo wh_piper_type;
/* Reads them from `cfg` into the plan options (hbm, usable) and `n` (the rest, and the
 * rates through wh_piper_net_from_config: apply the preset to `cfg` first). */
void wh_piper_settings(const WhConfig *cfg, WhPiperPlanOpts *o, WhPiperNet *n);

#endif
