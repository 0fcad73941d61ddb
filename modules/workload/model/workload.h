/* Training workloads: a job is a set of ranks (one per host) and a DAG of operations:
 * compute(rank, duration), p2p send(src, dst, bytes) and collectives over a rank group
 * (all-reduce, reduce-scatter, all-gather, all-to-all, all-to-allv) with a chosen
 * algorithm. When an operation's dependencies have all ended it starts; a collective
 * expands into transfers (one flow each) with their own step dependencies (ring: the
 * chunk a rank forwards in step k+1 is the one it received in step k; pairwise
 * all-to-all: round i+1 of a rank follows its round-i send and receive; rccl: a rank's
 * k-th send follows its (k-W)-th; direct: all at once; halo: intra-node pairs and
 * per-node packed messages at once, each forwarded inside the receiving node after the
 * messages it carries arrived), and ends when its last transfer's last byte arrives.
 * An all-to-allv takes its per-pair sizes from a matrix; an empty pair makes no
 * transfer. The workload drives the transport: it adds flows as transfers become
 * ready and hears of their completion through the transport's flow-done callback.
 * Cost: O(1) per transfer and dependency edge, plus one event per compute operation
 * (owned by no port or flow: WH_OWNER_NONE, so an accelerator never holds it in a
 * network partition). Memory: the ops are a compact table (op-table.h), 53 bytes per
 * op and 8 per dependency edge once started; a ring collective keeps no transfer list
 * (each step's transfer is made when it becomes ready), an all-to-all(v) or broadcast
 * 32 bytes per transfer and 4 per dependency between its transfers while the run
 * lasts, and every flow of the workload 12 bytes. */
#ifndef WH_WORKLOAD_H
#define WH_WORKLOAD_H

#include <glib.h>
#include "rdma-transport.h"
#include "op-table.h"
#include "registry.h"

#define WH_WORKLOAD_ERROR (wh_workload_error_quark())
GQuark wh_workload_error_quark(void);

typedef enum {
  WH_WORKLOAD_ERROR_INVALID,
} WhWorkloadError;

typedef struct WhWorkload WhWorkload;

/* Bytes an op costs in a workload: its description (op-table.h) and its run state
 * (state, start and end, pending count, where its successors begin), without its
 * name, group and edges; an edge costs WH_WORKLOAD_BYTES_PER_DEP (the dependency and
 * the successor entry). A name or group used by many ops is stored once
 * (WH_OP_TABLE_BYTES_PER_ENTRY plus its text or ranks). Measured in docs/modules/workload.md;
 * the workload suite checks them against the heap. */
#define WH_WORKLOAD_RUN_BYTES_PER_OP 25u
#define WH_WORKLOAD_BYTES_PER_OP (WH_OP_TABLE_BYTES_PER_OP + WH_WORKLOAD_RUN_BYTES_PER_OP)
#define WH_WORKLOAD_BYTES_PER_DEP (WH_OP_TABLE_BYTES_PER_DEP + 4u)
/* What a run with a workload holds besides its ops and the network's estimate (the
 * simulator's event pool and scheduler, the transport's tables; measured: 0.4 MB),
 * added to every workload estimate. */
#define WH_WORKLOAD_BYTES_FIXED (1u << 20)
/* An estimate for ops each with a name of its own (up to 64 bytes) and a few edges:
 * the memory budget of `<workload>` ops and model presets. */
#define WH_WORKLOAD_BYTES_PER_NAMED_OP                                                             \
  (WH_WORKLOAD_BYTES_PER_OP + WH_OP_TABLE_BYTES_PER_ENTRY + 80u + 4 * WH_WORKLOAD_BYTES_PER_DEP)

/* (transfer full); `tp` (transfer none) must outlive it. Ranks 0..n_ranks-1 run on
 * hosts 0..n_ranks-1 unless wh_workload_map_rank says otherwise. The workload installs
 * itself as the transport's flow-done callback. */
WhWorkload *wh_workload_new(WhTransport *tp, uint32_t n_ranks);
void wh_workload_free(WhWorkload *w);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhWorkload, wh_workload_free)

/* The per-message software cost (wh::Workload::MessageAlpha, LogP's sender overhead):
 * each rank pays it one message after another, so a transfer of rank r ready at t
 * starts at max(t, the start of r's previous transfer) + `alpha`. */
void wh_workload_set_message_alpha(WhWorkload *w, WhTime alpha);

/* The rccl all-to-all algorithm keeps at most `window` sends of a rank in flight
 * (wh::Workload::RcclWindow, default 8). */
void wh_workload_set_rccl_window(WhWorkload *w, uint32_t window);
/* wh::Workload::RcclSchedule=batch: the rccl all-to-all's pairwise rounds go in batches
 * of the window; a rank's sends of batch b + 1 wait for all its sends and receives of
 * batch b (RCCL's point-to-point batches). FALSE (default): the sliding window. */
void wh_workload_set_rccl_batch(WhWorkload *w, gboolean batch);

/* The machine's hosts form nodes of `gcds` GCDs each (host h on GCD h mod gcds of node
 * h / gcds: Frontier nodes have 8); 0 (the default): no nodes, and the halo all-to-all
 * is refused. */
void wh_workload_set_gcds_per_node(WhWorkload *w, uint32_t gcds);

/* The registered parameters (type "wh::Workload"). */
extern const WhTypeInfo wh_workload_type;

gboolean wh_workload_map_rank(WhWorkload *w, uint32_t rank, uint32_t host, GError **error);

/* Builders: return the new op's id (ops are numbered 0.. in order), or -1 with an
 * error. `deps` (nullable) lists op ids that must end first; only earlier ops. */
int64_t wh_workload_add_compute(WhWorkload *w, const char *name, uint32_t rank, WhTime duration,
                                const uint32_t *deps, uint32_t n_deps, GError **error);
int64_t wh_workload_add_send(WhWorkload *w, const char *name, uint32_t src, uint32_t dst,
                             uint64_t bytes, const uint32_t *deps, uint32_t n_deps, GError **error);
int64_t wh_workload_add_collective(WhWorkload *w, const char *name, WhCollKind kind,
                                   WhCollAlgo algo, const uint32_t *group, uint32_t n,
                                   uint64_t bytes, const uint32_t *deps, uint32_t n_deps,
                                   GError **error);

/* An all-to-allv over `group`: `matrix` (n x n, row-major, copied) holds the bytes
 * member i sends member j; the diagonal is a local copy and moves nothing, a zero
 * entry makes no transfer. `algo`: pairwise, direct, rccl or halo (see above). */
int64_t wh_workload_add_all_to_allv(WhWorkload *w, const char *name, WhCollAlgo algo,
                                    const uint32_t *group, uint32_t n, const uint64_t *matrix,
                                    const uint32_t *deps, uint32_t n_deps, GError **error);

/* Adds every op of `t` after the ops `w` has, its dependencies shifted by their
 * count; a workload without ops shares `t` (transfer none; it takes a reference)
 * instead of copying it. Ops are added before wh_workload_start only. */
gboolean wh_workload_add_table(WhWorkload *w, WhOpTable *t, GError **error);

/* Starts every op without dependencies at the current time; allocates the run state
 * and the successor lists. */
void wh_workload_start(WhWorkload *w);

uint32_t wh_workload_n_ops(const WhWorkload *w);
uint32_t wh_workload_n_ranks(const WhWorkload *w);
/* The bytes the ops take: their table and (once started) their run state. */
uint64_t wh_workload_op_bytes(const WhWorkload *w);
gboolean wh_workload_done(const WhWorkload *w);
/* Ops ended so far (O(1)). */
uint32_t wh_workload_ops_ended(const WhWorkload *w);

typedef struct {
  uint32_t id;
  WhOpKind kind;
  const char *name;
  uint32_t rank;     /* compute: its rank; send: the source; collective: the group's first */
  WhTime start, end; /* end 0: not ended */
  gboolean started, ended;
  const uint32_t *deps;
  uint32_t n_deps;
  uint32_t dst;          /* send: the receiving rank */
  WhCollKind coll;       /* collective: its kind */
  const uint32_t *group; /* collective: its ranks */
  uint32_t group_n;
  uint64_t bytes;
} WhOpInfo;

void wh_workload_op_info(const WhWorkload *w, uint32_t op, WhOpInfo *out);

/* The op that put transport flow `flow` on the network and the index of its transfer
 * inside that op (a send has transfer 0; a collective numbers its transfers in the order
 * of its expansion: step by step, rank by rank). Unlike flow ids, which follow the order
 * in which transfers became ready, the pair does not depend on timing. FALSE for a flow
 * the workload did not add. */
gboolean wh_workload_flow_origin(const WhWorkload *w, uint32_t flow, uint32_t *op, uint32_t *index);

const char *wh_op_kind_name(WhOpKind kind, WhCollKind coll);
gboolean wh_coll_kind_parse(const char *text, WhCollKind *out);
gboolean wh_coll_algo_parse(const char *text, WhCollAlgo *out);

/* The simulated time now (the end of a stopped run). */
WhTime wh_workload_now(const WhWorkload *w);

/* Writes ops.csv: op_id,rank,kind,name,start_ps,end_ps,deps (deps ';'-separated, the
 * name quoted as RFC 4180 asks when it holds a comma, a quote or a line break); an
 * op that had not started has neither time, one still running no end_ps. */
char *wh_workload_ops_csv(const WhWorkload *w);

/* The ops as a Chrome trace-event JSON document (Perfetto, chrome://tracing): one
 * process per rank, a span per op on every rank it involves, and a flow arrow from
 * sender to receiver for each send. Compute and communication spans go on tracks
 * ("compute", "communication", then "compute 2", ... as needed) such that spans on
 * one track never overlap; an op still running when the run stopped spans to the
 * end and carries "unfinished": true. (transfer full) */
char *wh_workload_trace_json(const WhWorkload *w);

#endif
