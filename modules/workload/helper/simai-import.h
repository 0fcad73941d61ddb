/* Importer for SimAI's workload text format (the files AICB writes and SimAI's
 * astra-sim reads): parses a file into one training iteration's op DAG (or several)
 * and adds it to a WhWorkload the way SimAI's system layer schedules it. Sources read
 * (aliyun/SimAI on GitHub, astra-sim-alibabacloud/astra-sim/): workload/Workload.cc
 * (initialize_workload: the grammar; decode_parallelsim: policies; the iterate_*
 * functions: the schedule), workload/Layer.cc (compute getters, the update delay in
 * Layer::call, blocking vs. non-blocking issue), system/MockNcclGroup.cc (the
 * MockNcclGroup constructor: TP/DP/EP/DP_EP rank groups; flow models: the meaning of
 * sizes), system/Sys.cc (mock_nccl_grobal_group_init: DP = all_gpus / (TP x PP),
 * DP_EP = DP / EP), system/Common.hh (Tick, CLOCK_PERIOD 1, FREQ 1000),
 * network_frontend/ns3/AstraSimNetwork.cc (sim_schedule: NanoSeconds(ticks)), and the
 * examples example/microAllReduce.txt, example/microAllReduce_dp.txt,
 * example/workload_ep_test.txt and example/workload_analytical.txt. */

/* GRAMMAR. Fields are separated by spaces or tabs; "\r\n" line ends are accepted;
 * blank lines after line 2 are skipped; there are no comments.
 *   Line 1, the header: POLICY [KEY VALUE]...  POLICY is one of
 *     HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_TRANSFORMER  (tensor/data/expert parallel)
 *     DATA                                                  (data parallel)
 *     MICRO                                                 (collective microbenchmark)
 *   SimAI's other policies (HYBRID_DLRM, HYBRID_DLRM_ENHANCED, MODEL,
 *   HYBRID_DATA_MODEL, HYBRID_MODEL_DATA, HYBRID_CUSTOMIZED, DISTRIBUTED_INFERENCE)
 *   are refused as unsupported; anything else as unknown. Keys (each at most once):
 *     model_parallel_NPU_group: N  TP size (>= 1; required by the HYBRID policies)
 *     all_gpus: N                  GPUs in the job (>= 1; required by HYBRID; optional
 *                                  for DATA/MICRO, default: every rank of the workload)
 *     ep: N   pp: N   vpp: N   ga: N           (>= 1, default 1)
 *     checkpoints: N L1..LN   checkpoint_initiates: N L1..LN   (layer indices)
 *     pp_comm N  or  pp_comm: N   (bytes, >= 0)
 *   An unknown key is an error (SimAI ignores it). For DATA/MICRO only all_gpus: is
 *   used.
 *   Line 2: the layer count L (one integer, 1..1000000).
 *   Lines 3..: one line per layer, exactly 12 fields:
 *     1 name                 (any token; used in op names, sanitized)
 *     2 dependency           (integer >= -1; SimAI reads and ignores it; so do we)
 *     3 forward compute time         (ns)     4 forward comm type     5 forward comm size   (B)
 *     6 input-grad compute time      (ns)     7 input-grad comm type  8 input-grad comm size (B)
 *     9 weight-grad compute time     (ns)    10 weight-grad comm type 11 weight-grad comm size (B)
 *    12 update time (ns): a delay after each of the layer's collectives ends (Layer::call)
 *   Exactly L layer lines. Numbers are unsigned decimal integers (no sign, point or
 *   exponent). Units: times are SimAI ticks = nanoseconds (Common.hh CLOCK_PERIOD 1,
 *   FREQ 1000 converts ticks to us in reports; the ns-3 frontend schedules
 *   NanoSeconds(ticks)); sizes are bytes. Comm types: NONE, or ALLREDUCE, ALLGATHER,
 *   REDUCESCATTER, ALLTOALL, each optionally suffixed _EP or _DP_EP (the group);
 *   ALLREDUCEALLTOALL is refused (SimAI itself matches it as ALLREDUCE with no group).
 *
 * GROUPS (MockNcclGroup): ranks 0..all_gpus-1 map to workload ranks 0..all_gpus-1.
 * TP = model_parallel_NPU_group consecutive ranks {t*TP .. t*TP+TP-1}; with
 * S = TP x PP and DP = all_gpus / S: DP group of rank r = {r mod S + j*S : j < DP}
 * (stride S); EP group = EP consecutive members of r's DP group (SimAI: the k-th ranks
 * of EP consecutive TP groups); DP_EP group = the members of r's DP group whose
 * index j is congruent to r's modulo EP (DP / EP of them). all_gpus must be a multiple
 * of S and EP must divide DP. Which group a comm uses: in the HYBRID policies a plain
 * type is TP for the forward and input-grad comms and DP for the weight-grad comm;
 * _EP is EP and _DP_EP is DP_EP in any phase. In DATA and MICRO the weight-grad comm
 * spans all all_gpus ranks (SimAI: every dimension involved); _EP/_DP_EP are errors.
 * Collectives: ALLREDUCE -> all-reduce ring, ALLGATHER -> all-gather ring,
 * REDUCESCATTER -> reduce-scatter ring, ALLTOALL -> all-to-all pairwise; the size
 * keeps its meaning (all-reduce: each rank's buffer; reduce-scatter: the full input;
 * all-gather: the full output; all-to-all: each rank's send buffer), as MockNccl's
 * flow models divide it by the group size. NONE: no op.
 *
 * DAG (per rank r, "stream" = the op r's next step waits for; every compute op of r
 * depends on r's stream, a collective on the streams of all its members):
 *   HYBRID_TRANSFORMER[_FWD_IN_BCKWD] (iterate_hybrid_parallel_Transformer*):
 *     forward, layers 0..L-1: [iteration > 0: wait for this layer's weight-grad comm
 *       of the previous iteration] fwd compute(r); fwd comm, blocking: each member's
 *       stream becomes the collective (or its update op on r).
 *     backward, layers L-1..0: ig compute(r); ig comm, blocking; wg compute(r); wg
 *       comm, non-blocking: it depends on the members' wg computes but the streams stay
 *       on the wg compute, so the next layer's ig compute overlaps it.
 *   DATA (iterate_data_parallel): forward computes 0..L-1 (no comm); then wg(L-1),
 *     wg comm, ig(L-1), wg(L-2), wg comm, ig(L-2), ..., ig(1), wg(0), wg comm: as in
 *     SimAI the weight grad comes before the input grad and layer 0 has no input-grad
 *     compute; forward and input-grad comm fields are never issued (counted ignored).
 *   MICRO (iterate_micro_benchmark): layer 0's weight-grad comm only, no compute,
 *     one per iteration, all at once (SimAI issues them in one loop); the other
 *     layers are parsed and checked, and their comm fields counted ignored.
 *   Update time u > 0: after a collective, one compute op of u on each member,
 *     depending on the collective; it takes the collective's place in the stream (or
 *     as what the next iteration's forward of the layer waits for).
 *   Skipped, with no op: compute times of 0 (the stream stays), comms with size 0 or
 *     a group of one rank (counted trivial), TP-group collectives unless keep_tp
 *     (counted dropped; their update ops go too, as nothing ends to be delayed).
 *   Ops are added iteration by iteration in a fixed order, so every iteration has
 *   stats.ops_per_iteration ops numbered contiguously.
 *
 * SIMPLIFIED vs SimAI: a collective is one op that ends when all of its transfers
 *   end, and every member waits for that end (SimAI ranks leave a collective on their
 *   own); one ring per collective (NCCL uses several channels; no tree/NVLS/PXN);
 *   no NVLink: kept TP traffic crosses the fabric; pipeline parallelism is not
 *   modeled (pp only shapes the DP stride; pp_comm, vpp and ga are parsed and checked
 *   but unused, as in SimAI's packet-level path, where only the analytical report
 *   uses them); checkpoints are parsed but never trigger forward-in-backward
 *   recomputation (SimAI never fills need_checkpoint_initiation either); SimAI's
 *   compute/comm scale factors are 1; EP/DP_EP groups for pp > 1 use the DP-group
 *   generalization above (SimAI's own loops assume pp = 1).
 *
 * ERRORS: every malformed input fails with "FILE:LINE: ..." naming the field where
 * one applies, e.g. `x.txt:4: field 3 (forward compute time): "abc" is not a number`. */
#ifndef WH_SIMAI_IMPORT_H
#define WH_SIMAI_IMPORT_H

#include <glib.h>
#include <stdio.h>

#include "workload.h"

#define WH_SIMAI_ERROR (wh_simai_error_quark())
GQuark wh_simai_error_quark(void);

typedef enum {
  WH_SIMAI_ERROR_IO,        /* the file cannot be read */
  WH_SIMAI_ERROR_PARSE,     /* malformed text */
  WH_SIMAI_ERROR_INVALID,   /* well-formed but impossible: groups, GPU count */
  WH_SIMAI_ERROR_TOO_LARGE, /* the ops would not fit the memory budget */
} WhSimaiError;

typedef enum {
  WH_SIMAI_POLICY_DATA,
  WH_SIMAI_POLICY_MICRO,
  WH_SIMAI_POLICY_HYBRID_TRANSFORMER,
  WH_SIMAI_POLICY_HYBRID_TRANSFORMER_FWD_IN_BCKWD,
} WhSimaiPolicy;

typedef enum {
  WH_SIMAI_GROUP_NONE, /* compute ops */
  WH_SIMAI_GROUP_TP,
  WH_SIMAI_GROUP_DP,
  WH_SIMAI_GROUP_EP,
  WH_SIMAI_GROUP_DP_EP,
  WH_SIMAI_GROUP_ALL, /* DATA / MICRO weight-grad comms */
} WhSimaiGroup;

/* Counts per iteration (every iteration adds the same ops). */
typedef struct {
  WhSimaiPolicy policy;
  uint32_t n_layers, n_gpus;
  uint32_t tp, dp, ep, pp; /* DATA / MICRO: tp = pp = ep = 1, dp = n_gpus */
  uint32_t ops_per_iteration;
  uint32_t n_compute; /* compute ops, update ops included */
  uint32_t n_update;  /* update-delay compute ops */
  uint32_t n_collectives;
  uint32_t dropped_tp;       /* TP-group collectives left out (keep_tp FALSE), one per group */
  uint64_t dropped_tp_bytes; /* the sum of their sizes */
  uint32_t skipped_trivial;  /* collectives of size 0 or over one rank, one per group */
  uint32_t ignored_comms;    /* comm fields (not NONE) the policy never issues */
  gboolean gpus_from_hosts;  /* neither all_gpus: nor options.gpus: one GPU per rank available */
  char unmodelled_keys[160]; /* header keys given but not simulated, "pp: 2, ga: 4"; "" none */
} WhSimaiStats;

typedef struct {
  gboolean keep_tp;    /* emit TP-group collectives; default FALSE: Wormhole's setup keeps
                          TP/SP traffic inside a server (NVLink), off the fabric */
  uint32_t iterations; /* 0 or 1: one iteration */
  WhSimaiStats *stats; /* nullable: filled on success */
  uint32_t gpus;       /* > 0: the GPU count (a file's all_gpus: must agree) */
  uint64_t max_bytes;  /* > 0: refuse (WH_SIMAI_ERROR_TOO_LARGE) a plan estimated larger */
  FILE *progress;      /* nullable: a plan of WH_SIMAI_PROGRESS_OPS ops or more reports
                          there each tenth of its ops made */
} WhSimaiOptions;

#define WH_SIMAI_PROGRESS_OPS 1000000u

/* One op of a plan: a view into the plan's op table (valid while the plan lives). */
typedef struct {
  WhOpKind kind; /* WH_OP_COMPUTE or WH_OP_COLLECTIVE */
  WhCollKind coll;
  WhCollAlgo algo;
  WhSimaiGroup group_kind;
  const char *name;      /* "L<i>.<layer>.<fwd|ig|wg>[-comm.<group><k>|-update]" */
  uint32_t rank;         /* compute: its rank; collective: the group's first */
  const uint32_t *group; /* collective: its ranks, ascending */
  uint32_t n_group;
  uint64_t bytes;
  WhTime duration;      /* compute, ps */
  const uint32_t *deps; /* indices of earlier ops of the plan, ascending */
  uint32_t n_deps;
} WhSimaiOp;

typedef struct {
  char *name; /* the file name used in messages */
  WhSimaiStats stats;
  WhOpTable *ops; /* in order; the tag of an op is its WhSimaiGroup */
} WhSimaiPlan;

uint32_t wh_simai_plan_n_ops(const WhSimaiPlan *plan);
void wh_simai_plan_op(const WhSimaiPlan *plan, uint32_t i, WhSimaiOp *out);

/* Parses and schedules; `max_ranks` (0: no limit) is the number of ranks available;
 * more GPUs than that is an error. `opts` nullable: defaults. (transfer full) */
WhSimaiPlan *wh_simai_plan_load(const char *path, uint32_t max_ranks, const WhSimaiOptions *opts,
                                GError **error);
WhSimaiPlan *wh_simai_plan_parse(const char *data, gsize len, const char *name, uint32_t max_ranks,
                                 const WhSimaiOptions *opts, GError **error);
void wh_simai_plan_free(WhSimaiPlan *plan);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhSimaiPlan, wh_simai_plan_free)

/* Adds the plan's ops to `w` after the ops it already has (plan dependencies are
 * shifted by that count); a workload without ops shares the plan's table instead of
 * copying it (wh_workload_add_table). On failure `w` may hold part of the plan. */
gboolean wh_simai_plan_apply(const WhSimaiPlan *plan, WhWorkload *w, GError **error);

/* Load (or parse) and apply in one step; the workload's rank count is the limit. */
gboolean wh_simai_import(WhWorkload *w, const char *path, const WhSimaiOptions *opts,
                         GError **error);
gboolean wh_simai_import_memory(WhWorkload *w, const char *data, gsize len, const char *name,
                                const WhSimaiOptions *opts, GError **error);

const char *wh_simai_policy_name(WhSimaiPolicy policy);
const char *wh_simai_group_name(WhSimaiGroup group); /* "tp", "dp", "ep", "dpep", "all" */

#endif
