/* Operation DAGs and collective expansion; see workload.h. The op descriptions live in
 * a WhOpTable (op-table.h); the run state is a struct of arrays allocated when the
 * workload starts, with the successor lists built then from the dependencies in one
 * pool (deps must name earlier ops, so the DAG is acyclic by construction).
 * Transfers live in a growable array; an expansion collects its dependency edges and
 * then lays each transfer's successors out contiguously in a second growable pool
 * (compressed rows, like the ops'), so a transfer may release any number of others. */
#include "workload.h"

#include <stdlib.h>
#include <string.h>

#include "csv.h"

GQuark wh_workload_error_quark(void)
{
  return g_quark_from_static_string("wh-workload-error");
}

enum { OP_WAITING, OP_STARTED, OP_ENDED };

typedef struct {
  uint64_t bytes;
  uint32_t op;
  uint32_t src, dst; /* ranks */
  uint32_t pending;
  uint32_t succ_first, succ_n; /* the transfers it unlocks: xsucc[succ_first ..][0 .. succ_n) */
} Xfer;

G_STATIC_ASSERT(sizeof(Xfer) == 32);

/* A dependency between two transfers of one expansion, before the successor lists are
 * laid out. */
typedef struct {
  uint32_t before, after;
} Edge;

/* What a flow carries: step `step` of a ring collective from its member `index`, or
 * (step EAGER) the transfer `index`. */
typedef struct {
  uint32_t op; /* NONE: not the workload's flow */
  uint32_t step;
  uint32_t index;
} FlowRef;

#define EAGER UINT32_MAX

struct WhWorkload {
  WhTransport *tp;
  uint32_t n_ranks;
  uint32_t *host; /* rank -> host */
  uint8_t *seen;  /* per rank, scratch of check_op (NULL until a collective is added) */
  WhOpTable *ops;
  /* run state, from wh_workload_start on: n_run ops (0 before) */
  uint32_t n_run;
  uint8_t *state; /* OP_* */
  WhTime *start, *end;
  uint32_t *pending;    /* waiting: dependencies not ended; started: transfers not ended */
  uint32_t *succ_begin; /* op i's successors: succ[succ_begin[i] .. succ_begin[i + 1]) */
  uint32_t *succ;
  /* plain arrays grown by doubling (reserve()) rather than GArrays: they grow by one
   * element per transfer and per flow, where a GArray costs a library call each */
  Xfer *xfers; /* sends', all-to-alls' and broadcasts' transfers */
  uint32_t n_xfers, cap_xfers;
  uint32_t *xsucc; /* the transfers' successor lists, one after another */
  uint32_t n_xsucc, cap_xsucc;
  FlowRef *flow_ref; /* flow id -> FlowRef */
  uint32_t n_flow_ref, cap_flow_ref;
  GHashTable *eager_first; /* all-to-all and broadcast op -> its first transfer */
  uint32_t ops_left;
  WhTime alpha;           /* per-message software cost, before a transfer's first byte */
  WhTime *issue_free;     /* per rank: when its issue engine is free (the last first byte) */
  uint32_t rccl_window;   /* rccl all-to-all: sends of one rank in flight at most */
  gboolean rccl_batch;    /* rccl: batches of rccl_window rounds instead of a sliding window */
  uint32_t gcds_per_node; /* hosts h with equal h / gcds_per_node share a node; 0: no nodes */
};

/* the run-state arrays: state, start, end, pending, succ_begin */
G_STATIC_ASSERT(sizeof(uint8_t) + 2 * sizeof(WhTime) + 2 * sizeof(uint32_t) ==
                WH_WORKLOAD_RUN_BYTES_PER_OP);

static const char *const rccl_schedule_choices[] = {"window", "batch", NULL};
static const char *const all_to_all_choices[] = {"pairwise", "direct", "rccl", "halo", NULL};

static const WhParamSpec workload_params[] = {
    {"MessageAlpha", WH_PARAM_TIME, "0ns",
     "per-message software cost (LogP's sender overhead o), paid by the sending rank one "
     "message after another: a transfer of a workload (a message of a collective or a "
     "point-to-point op) ready at t starts max(t, the end of its rank's previous alpha) + "
     "alpha, so k messages ready together start at alpha, 2 alpha, ..., k alpha; the one "
     "model of message overhead (the Frontier preset sets 200ns)",
     0},
    {"RcclWindow", WH_PARAM_INT, "8",
     "the rccl all-to-all algorithm: each rank keeps at most this many sends in flight "
     "(pairwise order: its send to the (k + W)-th peer starts when its send to the k-th "
     "has arrived)",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 1 << 20},
    {"RcclSchedule", WH_PARAM_CHOICE, "window",
     "the rccl all-to-all algorithm's schedule of its RcclWindow: window (a sliding window: "
     "a rank's (k + W)-th send starts when its k-th has arrived) or batch (RCCL's "
     "point-to-point batches: the pairwise rounds in batches of W; a rank starts its sends "
     "of batch b + 1 when its sends and its receives of batch b have all arrived)",
     0, 0, 0, rccl_schedule_choices, WH_PARAM_DIGEST_OMITS_DEFAULT},
    {"AllToAll", WH_PARAM_CHOICE, "pairwise",
     "the algorithm of an all-to-all or all-to-allv op that names none (<collective> "
     "without \"algorithm\"): pairwise, direct, rccl or halo; the Frontier preset sets rccl",
     0, 0, 0, all_to_all_choices, WH_PARAM_DIGEST_OMITS_DEFAULT},
    {NULL},
};

/* What a scenario written for an earlier version may still set. */
static const WhParamGone workload_gone[] = {
    {"InstantOrder",
     "was removed: its op order served only Wormhole's removed ExactOnly; drop the setting "
     "(what ends in one instant is taken in the order the simulator runs its events)"},
    {NULL},
};

const WhTypeInfo wh_workload_type = {"wh::Workload", "workload",
                                     "settings of every workload (trace, preset or SimAI)",
                                     workload_params, workload_gone};

void wh_workload_set_message_alpha(WhWorkload *w, WhTime alpha)
{
  w->alpha = alpha;
}

void wh_workload_set_rccl_window(WhWorkload *w, uint32_t window)
{
  g_return_if_fail(window > 0);
  w->rccl_window = window;
}

void wh_workload_set_rccl_batch(WhWorkload *w, gboolean batch)
{
  w->rccl_batch = batch;
}

void wh_workload_set_gcds_per_node(WhWorkload *w, uint32_t gcds)
{
  w->gcds_per_node = gcds;
}

#define NONE UINT32_MAX

static void flow_done(void *data, WhFlow *flow);

static const WhTransportObserver workload_observer = {.on_done = flow_done};

WhWorkload *wh_workload_new(WhTransport *tp, uint32_t n_ranks)
{
  WhWorkload *w = g_new0(WhWorkload, 1);
  w->tp = tp;
  w->n_ranks = n_ranks;
  w->host = g_new(uint32_t, n_ranks);
  w->issue_free = g_new0(WhTime, n_ranks);
  for (uint32_t r = 0; r < n_ranks; r++)
    w->host[r] = r;
  w->ops = wh_op_table_new();
  w->rccl_window = 8;
  w->eager_first = g_hash_table_new(NULL, NULL);
  wh_transport_add_observer(tp, &workload_observer, w);
  return w;
}

void wh_workload_free(WhWorkload *w)
{
  if (w == NULL)
    return;
  wh_transport_remove_observer(w->tp, &workload_observer, w);
  wh_op_table_unref(w->ops);
  g_free(w->state);
  g_free(w->start);
  g_free(w->end);
  g_free(w->pending);
  g_free(w->succ_begin);
  g_free(w->succ);
  g_free(w->xfers);
  g_free(w->xsucc);
  g_free(w->flow_ref);
  g_hash_table_unref(w->eager_first);
  g_free(w->host);
  g_free(w->issue_free);
  g_free(w->seen);
  g_free(w);
}

gboolean wh_workload_map_rank(WhWorkload *w, uint32_t rank, uint32_t host, GError **error)
{
  if (rank >= w->n_ranks || host >= w->tp->net->n_hosts) {
    g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                "rank %u -> host %u: no such rank or host", rank, host);
    return FALSE;
  }
  w->host[rank] = host;
  return TRUE;
}

static gboolean check_rank(WhWorkload *w, uint32_t rank, const char *what, GError **error)
{
  if (rank < w->n_ranks)
    return TRUE;
  g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
              "%s: no rank %u (the job has ranks 0..%u)", what, rank, w->n_ranks - 1);
  return FALSE;
}

/* The workload's own table, copied first if it is shared. */
static gboolean own_table(WhWorkload *w, GError **error)
{
  if (!wh_op_table_is_shared(w->ops))
    return TRUE;
  WhOpTable *copy = wh_op_table_copy(w->ops, error);
  if (copy == NULL)
    return FALSE;
  wh_op_table_unref(w->ops);
  w->ops = copy;
  return TRUE;
}

static int64_t add_op(WhWorkload *w, WhOpSpec *o, const uint32_t *deps, uint32_t n_deps,
                      GError **error)
{
  uint32_t id = wh_op_table_len(w->ops);
  if (w->n_run) {
    g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                "op %u (%s): the workload has started; ops are added before", id, o->name);
    return -1;
  }
  for (uint32_t i = 0; i < n_deps; i++) {
    if (deps[i] >= id) {
      g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                  "op %u (%s): dependency %u is not an earlier op", id, o->name, deps[i]);
      return -1;
    }
  }
  o->deps = deps;
  o->n_deps = n_deps;
  if (!own_table(w, error) || wh_op_table_add(w->ops, o, error) < 0)
    return -1;
  w->ops_left++;
  return id;
}

/* An op's ranks (and a collective's group and algorithm) against the workload's. */
static gboolean check_op(WhWorkload *w, const WhOpSpec *o, GError **error)
{
  const char *name = o->name;
  if (o->kind == WH_OP_COMPUTE)
    return check_rank(w, o->rank, name, error);
  if (o->kind == WH_OP_SEND) {
    if (!check_rank(w, o->rank, name, error) || !check_rank(w, o->dst, name, error))
      return FALSE;
    if (o->rank == o->dst) {
      g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                  "%s: a send needs two different ranks", name);
      return FALSE;
    }
    return TRUE;
  }
  uint32_t n = o->group_n;
  const uint32_t *group = o->group;
  if (n == 0) {
    g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID, "%s: empty group", name);
    return FALSE;
  }
  if (w->seen == NULL)
    w->seen = g_new0(uint8_t, w->n_ranks);
  gboolean ok = TRUE;
  uint32_t i = 0;
  for (; ok && i < n; i++) { /* marks the members, then clears the marks it made */
    ok = check_rank(w, group[i], name, error);
    if (ok && w->seen[group[i]]) {
      g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                  "%s: rank %u appears twice in the group", name, group[i]);
      ok = FALSE;
    } else if (ok) {
      w->seen[group[i]] = 1;
    }
  }
  for (uint32_t j = 0; j < i; j++)
    if (group[j] < w->n_ranks)
      w->seen[group[j]] = 0;
  if (!ok)
    return FALSE;
  gboolean a2a = o->coll == WH_COLL_ALL_TO_ALL || o->coll == WH_COLL_ALL_TO_ALLV;
  if (a2a != (o->algo == WH_ALGO_PAIRWISE || o->algo == WH_ALGO_DIRECT || o->algo == WH_ALGO_RCCL ||
              o->algo == WH_ALGO_HALO)) {
    g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                "%s: algorithm does not apply to this collective (ring for all-reduce, "
                "reduce-scatter and all-gather; pairwise, direct, rccl or halo for "
                "all-to-all and all-to-allv)",
                name);
    return FALSE;
  }
  if (o->algo == WH_ALGO_HALO && w->gcds_per_node == 0) {
    g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                "%s: algorithm \"halo\" needs a machine of Frontier nodes "
                "(wh::Dragonfly::Node=frontier, e.g. <topology preset=\"frontier\">); this "
                "topology has none",
                name);
    return FALSE;
  }
  if ((o->coll == WH_COLL_ALL_TO_ALLV) != (o->matrix != NULL)) {
    g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID, "%s: %s", name,
                o->matrix ? "only an all-to-allv takes a size matrix"
                          : "an all-to-allv needs its size matrix");
    return FALSE;
  }
  return TRUE;
}

static int64_t check_and_add(WhWorkload *w, WhOpSpec *o, const uint32_t *deps, uint32_t n_deps,
                             GError **error)
{
  if (!check_op(w, o, error))
    return -1;
  return add_op(w, o, deps, n_deps, error);
}

int64_t wh_workload_add_compute(WhWorkload *w, const char *name, uint32_t rank, WhTime duration,
                                const uint32_t *deps, uint32_t n_deps, GError **error)
{
  WhOpSpec o = {.kind = WH_OP_COMPUTE, .name = name, .rank = rank, .duration = duration};
  return check_and_add(w, &o, deps, n_deps, error);
}

int64_t wh_workload_add_send(WhWorkload *w, const char *name, uint32_t src, uint32_t dst,
                             uint64_t bytes, const uint32_t *deps, uint32_t n_deps, GError **error)
{
  WhOpSpec o = {.kind = WH_OP_SEND, .name = name, .rank = src, .dst = dst, .bytes = bytes};
  return check_and_add(w, &o, deps, n_deps, error);
}

/* A collective: `matrix` (nullable) for an all-to-allv, else `bytes`. */
static int64_t add_collective(WhWorkload *w, const char *name, WhCollKind kind, WhCollAlgo algo,
                              const uint32_t *group, uint32_t n, uint64_t bytes,
                              const uint64_t *matrix, const uint32_t *deps, uint32_t n_deps,
                              GError **error)
{
  WhOpSpec o = {.kind = WH_OP_COLLECTIVE,
                .coll = kind,
                .algo = algo,
                .name = name,
                .rank = n ? group[0] : 0,
                .bytes = bytes,
                .group = group,
                .group_n = n,
                .matrix = matrix};
  return check_and_add(w, &o, deps, n_deps, error);
}

int64_t wh_workload_add_collective(WhWorkload *w, const char *name, WhCollKind kind,
                                   WhCollAlgo algo, const uint32_t *group, uint32_t n,
                                   uint64_t bytes, const uint32_t *deps, uint32_t n_deps,
                                   GError **error)
{
  return add_collective(w, name, kind, algo, group, n, bytes, NULL, deps, n_deps, error);
}

int64_t wh_workload_add_all_to_allv(WhWorkload *w, const char *name, WhCollAlgo algo,
                                    const uint32_t *group, uint32_t n, const uint64_t *matrix,
                                    const uint32_t *deps, uint32_t n_deps, GError **error)
{
  return add_collective(w, name, WH_COLL_ALL_TO_ALLV, algo, group, n, 0, matrix, deps, n_deps,
                        error);
}

/* Every op of `t` passes the builders' checks. */
static gboolean check_table(WhWorkload *w, const WhOpTable *t, GError **error)
{
  for (uint32_t i = 0; i < wh_op_table_len(t); i++) {
    WhOpSpec o;
    wh_op_table_get(t, i, &o);
    if (!check_op(w, &o, error))
      return FALSE;
    for (uint32_t d = 0; d < o.n_deps; d++) {
      if (o.deps[d] >= i) {
        g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                    "op %u (%s): dependency %u is not an earlier op", i, o.name, o.deps[d]);
        return FALSE;
      }
    }
  }
  return TRUE;
}

gboolean wh_workload_add_table(WhWorkload *w, WhOpTable *t, GError **error)
{
  uint32_t base = wh_op_table_len(w->ops), n = wh_op_table_len(t);
  if (base == 0 && w->n_run == 0) {
    if (!check_table(w, t, error))
      return FALSE;
    wh_op_table_unref(w->ops);
    w->ops = wh_op_table_ref(t);
    w->ops_left = n;
    return TRUE;
  }
  g_autoptr(GArray) deps = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++) {
    WhOpSpec o;
    wh_op_table_get(t, i, &o);
    g_array_set_size(deps, o.n_deps);
    for (uint32_t d = 0; d < o.n_deps; d++)
      g_array_index(deps, uint32_t, d) = base + o.deps[d];
    if (check_and_add(w, &o, (const uint32_t *)deps->data, o.n_deps, error) < 0)
      return FALSE;
  }
  return TRUE;
}

/* ---- execution ---- */

static void op_end(WhWorkload *w, uint32_t id);

/* `arr` (of `*cap` elements of `elem` bytes) with room for `need`, grown by doubling. */
static inline void *reserve(void *arr, uint32_t *cap, uint64_t need, size_t elem)
{
  if (G_LIKELY(need <= *cap))
    return arr;
  g_assert(need <= UINT32_MAX);
  *cap = (uint32_t)MIN(MAX(need, MAX(2 * (uint64_t)*cap, 64)), UINT32_MAX);
  return g_realloc_n(arr, *cap, elem);
}

/* A transfer of rank `src`, ready now. The rank's one issue engine pays MessageAlpha
 * per message, one after another: the first byte leaves alpha after the later of now
 * and the end of the rank's previous alpha (with alpha 0 that is now). */
static void add_flow(WhWorkload *w, uint32_t src, uint32_t dst, uint64_t bytes, FlowRef ref)
{
  g_autoptr(GError) err = NULL;
  WhTime start = MAX(w->tp->sim->now, w->issue_free[src]) + w->alpha;
  w->issue_free[src] = start;
  int64_t flow = wh_transport_add_flow(w->tp, w->host[src], w->host[dst], bytes, start, &err);
  g_assert(flow >= 0); /* ranks and sizes were checked when the op was added */
  w->flow_ref = reserve(w->flow_ref, &w->cap_flow_ref, (uint64_t)flow + 1, sizeof(FlowRef));
  while (w->n_flow_ref < (uint64_t)flow)
    w->flow_ref[w->n_flow_ref++] = (FlowRef){.op = NONE};
  w->flow_ref[flow] = ref;
  w->n_flow_ref = MAX(w->n_flow_ref, (uint32_t)flow + 1);
}

static void start_xfer(WhWorkload *w, uint32_t x)
{
  const Xfer *t = &w->xfers[x];
  add_flow(w, t->src, t->dst, t->bytes, (FlowRef){.op = t->op, .step = EAGER, .index = x});
}

/* Ring collectives make their transfers as they become ready: step k + 1 of member
 * r + 1 forwards what arrived from member r in step k, its one dependency. */
static gboolean is_ring(const WhOpSpec *o)
{
  return o->coll != WH_COLL_ALL_TO_ALL && o->coll != WH_COLL_ALL_TO_ALLV &&
         o->coll != WH_COLL_BROADCAST;
}

static uint32_t ring_steps(const WhOpSpec *o)
{
  return o->coll == WH_COLL_ALL_REDUCE ? 2 * (o->group_n - 1) : o->group_n - 1;
}

static void start_ring(WhWorkload *w, uint32_t id, const WhOpSpec *o, uint32_t k, uint32_t r)
{
  uint32_t n = o->group_n;
  add_flow(w, o->group[r], o->group[(r + 1) % n], (o->bytes + n - 1) / n,
           (FlowRef){.op = id, .step = k, .index = r});
}

static inline uint32_t new_xfer(WhWorkload *w, uint32_t op, uint32_t src, uint32_t dst,
                                uint64_t bytes)
{
  g_assert(w->n_xfers < NONE);
  w->xfers = reserve(w->xfers, &w->cap_xfers, (uint64_t)w->n_xfers + 1, sizeof(Xfer));
  w->xfers[w->n_xfers] = (Xfer){.op = op, .src = src, .dst = dst, .bytes = bytes};
  return w->n_xfers++;
}

/* Transfer `after` waits for `before` (both of the expansion being made). */
static void link_xfers(WhWorkload *w, GArray *edges, uint32_t before, uint32_t after)
{
  Edge e = {before, after};
  g_array_append_val(edges, e);
  w->xfers[after].pending++;
}

/* Lays out the successor lists of transfers `first`.. from `edges`: each transfer's
 * successors in the order their edges were made. */
static void build_succ(WhWorkload *w, uint32_t first, const GArray *edges)
{
  Xfer *x = w->xfers;
  const Edge *e = (const Edge *)(const void *)edges->data;
  for (guint i = 0; i < edges->len; i++)
    x[e[i].before].succ_n++;
  uint64_t end = w->n_xsucc; /* counts -> ends */
  for (uint32_t i = first; i < w->n_xfers; i++)
    x[i].succ_first = (uint32_t)(end += x[i].succ_n);
  g_assert(end < NONE);
  w->xsucc = reserve(w->xsucc, &w->cap_xsucc, end, sizeof(uint32_t));
  w->n_xsucc = (uint32_t)end;
  uint32_t *succ = w->xsucc;
  for (guint i = edges->len; i-- > 0;) /* ends -> begins, filled from the back */
    succ[--x[e[i].before].succ_first] = e[i].after;
}

/* Bytes from member i to member j of an all-to-all(v). */
static uint64_t pair_bytes(const WhOpSpec *o, uint32_t i, uint32_t j)
{
  uint32_t n = o->group_n;
  return o->matrix ? o->matrix[(uint64_t)i * n + j] : (o->bytes + n - 1) / n;
}

/* The rccl all-to-all in batches (wh::Workload::RcclSchedule=batch): the rounds of the
 * pairwise order (member r sends to (r + i) mod n in round i) go in batches of W
 * rounds; a member's sends of a batch wait for every send and every receive it had in
 * the batch before (up to 2 W transfers), as RCCL runs its point-to-point operations
 * batch after batch. */
static void expand_batches(WhWorkload *w, uint32_t id, const WhOpSpec *o, GArray *edges, uint32_t W)
{
  uint32_t n = o->group_n;
  const uint32_t *g = o->group;
  g_autofree uint32_t *prev = g_new(uint32_t, (uint64_t)n * 2 * W);
  g_autofree uint32_t *cur = g_new(uint32_t, (uint64_t)n * 2 * W);
  g_autofree uint32_t *prev_n = g_new0(uint32_t, n), *cur_n = g_new0(uint32_t, n);
  for (uint32_t i = 1; i < n; i++) {
    if (i % W == 0) { /* a new batch: this one's transfers become `prev` */
      uint32_t *t = prev;
      prev = cur;
      cur = t;
      t = prev_n;
      prev_n = cur_n;
      cur_n = t;
      memset(cur_n, 0, sizeof(uint32_t) * n);
    }
    for (uint32_t r = 0; r < n; r++) {
      uint32_t d = (r + i) % n;
      uint64_t bytes = pair_bytes(o, r, d);
      if (bytes == 0)
        continue;
      uint32_t x = new_xfer(w, id, g[r], g[d], bytes);
      for (uint32_t k = 0; k < prev_n[r]; k++)
        link_xfers(w, edges, prev[(uint64_t)r * 2 * W + k], x);
      cur[(uint64_t)r * 2 * W + cur_n[r]++] = x;
      cur[(uint64_t)d * 2 * W + cur_n[d]++] = x;
    }
  }
}

/* The flat all-to-alls: in round i (1..n-1) member r sends to member (r + i) mod n,
 * an empty message being no transfer. Pairwise: r's message of a round waits for its
 * last send and its last receive of the rounds before; rccl: r's k-th message waits
 * for its (k - W)-th; direct: nothing waits. */
static void expand_flat(WhWorkload *w, uint32_t id, const WhOpSpec *o, GArray *edges)
{
  uint32_t n = o->group_n, W = MIN(w->rccl_window, n); /* a rank has n - 1 sends */
  const uint32_t *g = o->group;
  g_autofree uint32_t *last_send = NULL, *last_recv = NULL, *round = NULL, *sent = NULL;
  g_autofree uint32_t *window = NULL;
  if (o->algo == WH_ALGO_PAIRWISE) {
    last_send = g_new(uint32_t, n);
    last_recv = g_new(uint32_t, n);
    round = g_new(uint32_t, n);
    memset(last_send, 0xff, sizeof(uint32_t) * n);
    memset(last_recv, 0xff, sizeof(uint32_t) * n);
  } else if (o->algo == WH_ALGO_RCCL && w->rccl_batch) {
    expand_batches(w, id, o, edges, W);
    return;
  } else if (o->algo == WH_ALGO_RCCL) {
    sent = g_new0(uint32_t, n);
    window = g_new(uint32_t, (uint64_t)n * W);
  }
  for (uint32_t i = 1; i < n; i++) {
    for (uint32_t r = 0; r < n; r++) {
      uint32_t d = (r + i) % n;
      uint64_t bytes = pair_bytes(o, r, d);
      uint32_t x = bytes ? new_xfer(w, id, g[r], g[d], bytes) : NONE;
      if (last_send) {
        round[r] = x;
        if (x != NONE && last_send[r] != NONE)
          link_xfers(w, edges, last_send[r], x);
        if (x != NONE && last_recv[r] != NONE && last_recv[r] != last_send[r])
          link_xfers(w, edges, last_recv[r], x);
      } else if (window && x != NONE) {
        uint32_t *slot = &window[(uint64_t)r * W + sent[r] % W];
        if (sent[r]++ >= W)
          link_xfers(w, edges, *slot, x);
        *slot = x;
      }
    }
    for (uint32_t r = 0; last_send && r < n; r++) {
      if (round[r] != NONE) {
        last_send[r] = round[r];
        last_recv[(r + i) % n] = round[r];
      }
    }
  }
}

typedef struct {
  uint32_t host, pos;
} HostPos;

static int host_pos_cmp(const void *a, const void *b)
{
  const HostPos *x = a, *y = b;
  if (x->host != y->host)
    return x->host < y->host ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Phase I of a HALO exchange: inside each of the K nodes (node k: members
 * pos[nbeg[k] .. nbeg[k + 1]) by host), member i of m sends to its (i + t) mod m-th
 * for t = 1 .. m - 1. */
static void halo_inside_nodes(WhWorkload *w, uint32_t id, const WhOpSpec *o, const uint32_t *pos,
                              const uint32_t *nbeg, uint32_t K)
{
  const uint32_t *g = o->group;
  for (uint32_t k = 0; k < K; k++) {
    uint32_t m = nbeg[k + 1] - nbeg[k];
    for (uint32_t i = 0; i < m; i++)
      for (uint32_t t = 1; t < m; t++) {
        uint32_t a = pos[nbeg[k] + i], b = pos[nbeg[k] + (i + t) % m];
        uint64_t bytes = pair_bytes(o, a, b);
        if (bytes)
          new_xfer(w, id, g[a], g[b], bytes);
      }
  }
}

/* HALO on nodes of gcds_per_node GCDs (host h on GCD h mod G of node h / G). The
 * group's members are sorted by host; a node's members are contiguous there.
 * Phase I: every pair on one node, directly. Phase II: member a sends, for every other
 * node B of the group, the bytes of all its rows for B's members as one message to
 * its relay on B: the member of B on a's GCD index, else the (index mod |B|)-th
 * member of B. Phase III: relay q sends each other member d of its node the bytes it
 * received for d, one message summed over its sources; it waits on exactly the
 * Phase II transfers into q whose source has bytes for d. Phases I and II start
 * together. Transfers are numbered phase by phase; returns the first of Phase II.
 * Inside a phase each sender's messages go round from its next peer (node), as the
 * flat algorithms' rounds do, so that serially issued messages do not all converge
 * on one node or GCD first. */
static uint32_t expand_halo(WhWorkload *w, uint32_t id, const WhOpSpec *o, GArray *edges)
{
  uint32_t n = o->group_n, G = w->gcds_per_node;
  const uint32_t *g = o->group;
  g_autofree HostPos *by_host = g_new(HostPos, n);
  g_autofree uint32_t *pos = g_new(uint32_t, n);      /* members by host */
  g_autofree uint32_t *node_of = g_new(uint32_t, n);  /* member -> its node's index */
  g_autofree uint32_t *nbeg = g_new(uint32_t, n + 1); /* node k: pos[nbeg[k] .. nbeg[k + 1]) */
  for (uint32_t i = 0; i < n; i++)
    by_host[i] = (HostPos){w->host[g[i]], i};
  qsort(by_host, n, sizeof(HostPos), host_pos_cmp);
  for (uint32_t i = 0; i < n; i++)
    pos[i] = by_host[i].pos;
  uint32_t K = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (i == 0 || w->host[g[pos[i]]] / G != w->host[g[pos[i - 1]]] / G)
      nbeg[K++] = i;
    node_of[pos[i]] = K - 1;
  }
  nbeg[K] = n;
  halo_inside_nodes(w, id, o, pos, nbeg, K);
  /* Phase II: (source, relay) of each transfer, then the transfers into each relay */
  uint32_t p2 = w->n_xfers;
  g_autoptr(GArray) src = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_autoptr(GArray) dst = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t i = 0; i < n; i++) {
    uint32_t a = pos[i], gcd = w->host[g[a]] % G;
    for (uint32_t t = 1; t < K; t++) { /* from the next node on, round the group */
      uint32_t k = (node_of[a] + t) % K;
      uint64_t bytes = 0;
      uint32_t relay = pos[nbeg[k] + gcd % (nbeg[k + 1] - nbeg[k])];
      for (uint32_t j = nbeg[k]; j < nbeg[k + 1]; j++) {
        bytes += pair_bytes(o, a, pos[j]);
        if (w->host[g[pos[j]]] % G == gcd)
          relay = pos[j];
      }
      if (bytes == 0)
        continue;
      new_xfer(w, id, g[a], g[relay], bytes);
      g_array_append_val(src, a);
      g_array_append_val(dst, relay);
    }
  }
  g_autofree uint32_t *in_beg = g_new0(uint32_t, n + 1); /* relay q: in[in_beg[q] ..) */
  g_autofree uint32_t *in = g_new(uint32_t, src->len);   /* Phase II transfer numbers */
  for (guint t = 0; t < dst->len; t++)
    in_beg[g_array_index(dst, uint32_t, t) + 1]++;
  for (uint32_t q = 0; q < n; q++)
    in_beg[q + 1] += in_beg[q];
  g_autofree uint32_t *fill = g_memdup2(in_beg, sizeof(uint32_t) * n);
  for (guint t = 0; t < dst->len; t++)
    in[fill[g_array_index(dst, uint32_t, t)]++] = t;
  /* Phase III */
  for (uint32_t i = 0; i < n; i++) {
    uint32_t q = pos[i], k = node_of[q], m = nbeg[k + 1] - nbeg[k];
    for (uint32_t u = 1; u < m; u++) { /* from the next member on, round the node */
      uint32_t d = pos[nbeg[k] + (i - nbeg[k] + u) % m];
      uint64_t bytes = 0;
      for (uint32_t t = in_beg[q]; d != q && t < in_beg[q + 1]; t++)
        bytes += pair_bytes(o, g_array_index(src, uint32_t, in[t]), d);
      if (bytes == 0)
        continue;
      uint32_t x = new_xfer(w, id, g[q], g[d], bytes);
      for (uint32_t t = in_beg[q]; t < in_beg[q + 1]; t++) {
        if (pair_bytes(o, g_array_index(src, uint32_t, in[t]), d))
          link_xfers(w, edges, p2 + in[t], x);
      }
    }
  }
  return p2;
}

/* Expands an all-to-all(v) or a broadcast into transfers; returns the index of the
 * first. `*issue` receives the transfer its ready ones are issued from (wrapping round
 * to the first): HALO's Phase II, so that a member issues its slow messages between
 * nodes before those inside its node; else the first. */
static uint32_t expand(WhWorkload *w, uint32_t id, const WhOpSpec *o, uint32_t *issue)
{
  uint32_t n = o->group_n, first = w->n_xfers;
  const uint32_t *g = o->group;
  g_autoptr(GArray) edges = g_array_new(FALSE, FALSE, sizeof(Edge));
  *issue = first;
  if (o->coll == WH_COLL_ALL_TO_ALL || o->coll == WH_COLL_ALL_TO_ALLV) {
    if (o->algo == WH_ALGO_HALO)
      *issue = expand_halo(w, id, o, edges);
    else
      expand_flat(w, id, o, edges);
  } else {
    /* broadcast, a pipelined chain: chunk j crosses hop i (g[i] -> g[i + 1]) after it
     * crossed hop i - 1 and after chunk j - 1 crossed hop i: 2 (n - 1) steps of size / n */
    uint64_t chunk = (o->bytes + n - 1) / n;
    for (uint32_t j = 0; j < n; j++) {
      for (uint32_t i = 0; i + 1 < n; i++) {
        uint32_t x = new_xfer(w, id, g[i], g[i + 1], chunk);
        if (i > 0)
          link_xfers(w, edges, x - 1, x);
        if (j > 0)
          link_xfers(w, edges, x - (n - 1), x);
      }
    }
  }
  build_succ(w, first, edges);
  return first;
}

static void compute_done(WhSim *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  op_end(ctx, (uint32_t)arg);
}

static void op_start(WhWorkload *w, uint32_t id)
{
  WhOpSpec o;
  wh_op_table_get(w->ops, id, &o);
  w->state[id] = OP_STARTED;
  w->start[id] = w->tp->sim->now;
  switch (o.kind) {
  case WH_OP_COMPUTE: {
    /* not network work: owned by no port or flow, so no partition holds it */
    wh_sim_schedule(w->tp->sim, o.duration, compute_done, w, id, WH_OWNER_NONE);
    return;
  }
  case WH_OP_SEND:
    if (o.bytes == 0)
      break;
    w->pending[id] = 1;
    start_xfer(w, new_xfer(w, id, o.rank, o.dst, o.bytes));
    return;
  case WH_OP_COLLECTIVE: {
    if (o.group_n < 2 || o.bytes == 0)
      break;
    if (is_ring(&o)) {
      w->pending[id] = ring_steps(&o) * o.group_n;
      for (uint32_t r = 0; r < o.group_n; r++)
        start_ring(w, id, &o, 0, r);
      return;
    }
    uint32_t issue, first = expand(w, id, &o, &issue), last = w->n_xfers;
    w->pending[id] = last - first;
    g_hash_table_insert(w->eager_first, GUINT_TO_POINTER(id), GUINT_TO_POINTER(first));
    for (uint32_t k = 0; k < last - first; k++) { /* issue .. last, then first .. issue */
      uint32_t x = issue + k < last ? issue + k : issue + k - (last - first);
      if (w->xfers[x].pending == 0)
        start_xfer(w, x);
    }
    return;
  }
  }
  op_end(w, id); /* nothing to move: ends at once */
}

static void op_end(WhWorkload *w, uint32_t id)
{
  w->end[id] = w->tp->sim->now;
  w->state[id] = OP_ENDED;
  w->ops_left--;
  uint32_t stop =
      id + 1 < w->n_run ? w->succ_begin[id + 1] : (uint32_t)wh_op_table_n_deps_total(w->ops);
  for (uint32_t i = w->succ_begin[id]; i < stop; i++) {
    uint32_t s = w->succ[i];
    if (--w->pending[s] == 0)
      op_start(w, s);
  }
}

/* The flow of `ref` ended. */
static void ended(WhWorkload *w, FlowRef ref)
{
  if (ref.step == EAGER) {
    Xfer t = w->xfers[ref.index];
    for (uint32_t k = 0; k < t.succ_n; k++) {
      uint32_t s = w->xsucc[t.succ_first + k];
      if (--w->xfers[s].pending == 0)
        start_xfer(w, s);
    }
  } else {
    WhOpSpec o;
    wh_op_table_get(w->ops, ref.op, &o);
    if (ref.step + 1 < ring_steps(&o))
      start_ring(w, ref.op, &o, ref.step + 1, (ref.index + 1) % o.group_n);
  }
  if (--w->pending[ref.op] == 0)
    op_end(w, ref.op);
}

static void flow_done(void *data, WhFlow *flow)
{
  WhWorkload *w = data;
  if (flow->id >= w->n_flow_ref)
    return;
  FlowRef ref = w->flow_ref[flow->id];
  if (ref.op != NONE)
    ended(w, ref);
}

/* The run state: every op waiting on all its dependencies; the successor lists in
 * the order the ops were added (op_end starts them in that order). */
static void alloc_run_state(WhWorkload *w)
{
  wh_op_table_trim(w->ops);
  uint32_t n = wh_op_table_len(w->ops);
  uint64_t edges = wh_op_table_n_deps_total(w->ops);
  w->n_run = n;
  w->state = g_new0(uint8_t, n);
  w->start = g_new0(WhTime, n);
  w->end = g_new0(WhTime, n);
  w->pending = g_new(uint32_t, n);
  w->succ_begin = g_new0(uint32_t, n);
  w->succ = g_new(uint32_t, edges);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t nd;
    const uint32_t *deps = wh_op_table_deps(w->ops, i, &nd);
    w->pending[i] = nd;
    for (uint32_t d = 0; d < nd; d++)
      w->succ_begin[deps[d]]++;
  }
  uint32_t sum = 0; /* counts -> ends */
  for (uint32_t i = 0; i < n; i++)
    sum = w->succ_begin[i] += sum;
  for (uint32_t i = n; i-- > 0;) { /* ends -> begins, filled from the back */
    uint32_t nd;
    const uint32_t *deps = wh_op_table_deps(w->ops, i, &nd);
    for (uint32_t d = nd; d-- > 0;)
      w->succ[--w->succ_begin[deps[d]]] = i;
  }
}

void wh_workload_start(WhWorkload *w)
{
  if (w->n_run == 0)
    alloc_run_state(w);
  for (uint32_t i = 0; i < w->n_run; i++) {
    uint32_t nd;
    wh_op_table_deps(w->ops, i, &nd);
    if (w->state[i] == OP_WAITING && nd == 0)
      op_start(w, i);
  }
}

uint32_t wh_workload_n_ops(const WhWorkload *w)
{
  return wh_op_table_len(w->ops);
}

uint32_t wh_workload_n_ranks(const WhWorkload *w)
{
  return w->n_ranks;
}

gboolean wh_workload_done(const WhWorkload *w)
{
  return w->ops_left == 0;
}

uint32_t wh_workload_ops_ended(const WhWorkload *w)
{
  return wh_workload_n_ops(w) - w->ops_left;
}

WhTime wh_workload_now(const WhWorkload *w)
{
  return w->tp->sim->now;
}

uint64_t wh_workload_op_bytes(const WhWorkload *w)
{
  return wh_op_table_bytes(w->ops) + (uint64_t)w->n_run * WH_WORKLOAD_RUN_BYTES_PER_OP +
         (w->n_run ? wh_op_table_n_deps_total(w->ops) * sizeof(uint32_t) : 0);
}

void wh_workload_op_info(const WhWorkload *w, uint32_t id, WhOpInfo *out)
{
  WhOpSpec o;
  wh_op_table_get(w->ops, id, &o);
  uint8_t state = id < w->n_run ? w->state[id] : OP_WAITING;
  *out = (WhOpInfo){.id = id,
                    .kind = o.kind,
                    .name = o.name,
                    .rank = o.rank,
                    .start = id < w->n_run ? w->start[id] : 0,
                    .end = id < w->n_run ? w->end[id] : 0,
                    .started = state != OP_WAITING,
                    .ended = state == OP_ENDED,
                    .deps = o.deps,
                    .n_deps = o.n_deps,
                    .dst = o.dst,
                    .coll = o.coll,
                    .group = o.group,
                    .group_n = o.group_n,
                    .bytes = o.kind == WH_OP_COMPUTE ? 0 : o.bytes};
}

gboolean wh_workload_flow_origin(const WhWorkload *w, uint32_t flow, uint32_t *op, uint32_t *index)
{
  if (flow >= w->n_flow_ref || w->flow_ref[flow].op == NONE)
    return FALSE;
  FlowRef ref = w->flow_ref[flow];
  *op = ref.op;
  if (ref.step != EAGER) {
    /* a ring step: the expansion order is step by step, member by member */
    WhOpSpec o;
    wh_op_table_get(w->ops, ref.op, &o);
    *index = ref.step * o.group_n + ref.index;
    return TRUE;
  }
  gpointer first;
  /* a send's one transfer, or an all-to-all's or broadcast's, made together */
  *index = g_hash_table_lookup_extended(w->eager_first, GUINT_TO_POINTER(ref.op), NULL, &first)
               ? ref.index - GPOINTER_TO_UINT(first)
               : 0;
  return TRUE;
}

const char *wh_op_kind_name(WhOpKind kind, WhCollKind coll)
{
  static const char *colls[] = {"all-reduce", "reduce-scatter", "all-gather",
                                "all-to-all", "broadcast",      "all-to-allv"};
  switch (kind) {
  case WH_OP_COMPUTE:
    return "compute";
  case WH_OP_SEND:
    return "send";
  case WH_OP_COLLECTIVE:
    return colls[coll];
  }
  return "?";
}

gboolean wh_coll_kind_parse(const char *text, WhCollKind *out)
{
  static const struct {
    const char *name;
    WhCollKind kind;
  } names[] = {{"all-reduce", WH_COLL_ALL_REDUCE},
               {"reduce-scatter", WH_COLL_REDUCE_SCATTER},
               {"all-gather", WH_COLL_ALL_GATHER},
               {"all-to-all", WH_COLL_ALL_TO_ALL},
               {"all-to-allv", WH_COLL_ALL_TO_ALLV}};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    if (g_strcmp0(text, names[i].name) == 0) {
      *out = names[i].kind;
      return TRUE;
    }
  }
  return FALSE;
}

gboolean wh_coll_algo_parse(const char *text, WhCollAlgo *out)
{
  static const char *names[] = {"ring", "pairwise", "direct", "rccl", "halo"};
  for (int i = 0; i < 5; i++) {
    if (g_strcmp0(text, names[i]) == 0) {
      *out = (WhCollAlgo)i;
      return TRUE;
    }
  }
  return FALSE;
}

char *wh_workload_ops_csv(const WhWorkload *w)
{
  GString *s = g_string_new("op_id,rank,kind,name,start_ps,end_ps,deps\n");
  for (uint32_t i = 0; i < wh_op_table_len(w->ops); i++) {
    WhOpInfo o;
    wh_workload_op_info(w, i, &o);
    g_string_append_printf(s, "%u,%u,%s,", i, o.rank, wh_op_kind_name(o.kind, o.coll));
    wh_csv_field(s, o.name);
    g_string_append_c(s, ',');
    if (o.started) /* an op still running when the run stopped has no end */
      g_string_append_printf(s, "%" G_GUINT64_FORMAT ",", (guint64)o.start);
    else
      g_string_append_c(s, ',');
    if (o.ended)
      g_string_append_printf(s, "%" G_GUINT64_FORMAT ",", (guint64)o.end);
    else
      g_string_append_c(s, ',');
    for (uint32_t d = 0; d < o.n_deps; d++)
      g_string_append_printf(s, "%s%u", d ? ";" : "", o.deps[d]);
    g_string_append_c(s, '\n');
  }
  return g_string_free(s, FALSE);
}
