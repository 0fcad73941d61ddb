/* Operation DAGs and collective expansion; see workload.h. The op descriptions live in
 * a WhOpTable (op-table.h); the run state is a struct of arrays allocated when the
 * workload starts, with the successor lists built then from the dependencies in one
 * pool (deps must name earlier ops, so the DAG is acyclic by construction).
 * Transfers live in a growable array. */
#include "workload.h"

#include <string.h>

GQuark wh_workload_error_quark(void)
{
  return g_quark_from_static_string("wh-workload-error");
}

enum { OP_WAITING, OP_STARTED, OP_ENDED };

typedef struct {
  uint32_t op;
  uint32_t src, dst; /* ranks */
  uint64_t bytes;
  uint32_t pending;
  uint32_t next[2]; /* transfers this one unlocks (UINT32_MAX: none) */
} Xfer;

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
  GArray *xfers;           /* Xfer: sends, all-to-alls and broadcasts */
  GArray *flow_ref;        /* flow id -> FlowRef */
  GHashTable *eager_first; /* all-to-all and broadcast op -> its first transfer */
  uint32_t ops_left;
  WhTime alpha; /* per-message software cost, before a transfer's first byte */
};

/* the run-state arrays: state, start, end, pending, succ_begin */
G_STATIC_ASSERT(sizeof(uint8_t) + 2 * sizeof(WhTime) + 2 * sizeof(uint32_t) ==
                WH_WORKLOAD_RUN_BYTES_PER_OP);

static const WhParamSpec workload_params[] = {
    {"MessageAlpha", WH_PARAM_TIME, "0ns",
     "per-message software cost: every transfer of a workload (a message of a collective "
     "or a point-to-point op) starts this long after it is ready; the one model of message "
     "overhead (the Frontier preset sets 200ns)",
     0},
    {NULL},
};

const WhTypeInfo wh_workload_type = {"wh::Workload", "workload",
                                     "settings of every workload (trace, preset or SimAI)",
                                     workload_params};

void wh_workload_set_message_alpha(WhWorkload *w, WhTime alpha)
{
  w->alpha = alpha;
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
  for (uint32_t r = 0; r < n_ranks; r++)
    w->host[r] = r;
  w->ops = wh_op_table_new();
  w->xfers = g_array_new(FALSE, TRUE, sizeof(Xfer));
  w->flow_ref = g_array_new(FALSE, FALSE, sizeof(FlowRef));
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
  g_array_unref(w->xfers);
  g_array_unref(w->flow_ref);
  g_hash_table_unref(w->eager_first);
  g_free(w->host);
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
  gboolean a2a = o->coll == WH_COLL_ALL_TO_ALL;
  if (a2a != (o->algo == WH_ALGO_PAIRWISE || o->algo == WH_ALGO_DIRECT)) {
    g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                "%s: algorithm does not apply to this collective (ring for all-reduce, "
                "reduce-scatter and all-gather; pairwise or direct for all-to-all)",
                name);
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

int64_t wh_workload_add_collective(WhWorkload *w, const char *name, WhCollKind kind,
                                   WhCollAlgo algo, const uint32_t *group, uint32_t n,
                                   uint64_t bytes, const uint32_t *deps, uint32_t n_deps,
                                   GError **error)
{
  WhOpSpec o = {.kind = WH_OP_COLLECTIVE,
                .coll = kind,
                .algo = algo,
                .name = name,
                .rank = n ? group[0] : 0,
                .bytes = bytes,
                .group = group,
                .group_n = n};
  return check_and_add(w, &o, deps, n_deps, error);
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

static void add_flow(WhWorkload *w, uint32_t src, uint32_t dst, uint64_t bytes, FlowRef ref)
{
  g_autoptr(GError) err = NULL;
  int64_t flow = wh_transport_add_flow(w->tp, w->host[src], w->host[dst], bytes,
                                       w->tp->sim->now + w->alpha, &err);
  g_assert(flow >= 0); /* ranks and sizes were checked when the op was added */
  FlowRef none = {.op = NONE};
  while (w->flow_ref->len <= (guint)flow)
    g_array_append_val(w->flow_ref, none);
  g_array_index(w->flow_ref, FlowRef, flow) = ref;
}

static void start_xfer(WhWorkload *w, uint32_t x)
{
  const Xfer *t = &g_array_index(w->xfers, Xfer, x);
  add_flow(w, t->src, t->dst, t->bytes, (FlowRef){.op = t->op, .step = EAGER, .index = x});
}

/* Ring collectives make their transfers as they become ready: step k + 1 of member
 * r + 1 forwards what arrived from member r in step k, its one dependency. */
static gboolean is_ring(const WhOpSpec *o)
{
  return o->coll != WH_COLL_ALL_TO_ALL && o->coll != WH_COLL_BROADCAST;
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

static uint32_t new_xfer(WhWorkload *w, uint32_t op, uint32_t src, uint32_t dst, uint64_t bytes)
{
  Xfer t = {.op = op, .src = src, .dst = dst, .bytes = bytes, .next = {NONE, NONE}};
  g_array_append_val(w->xfers, t);
  return w->xfers->len - 1;
}

static void link_xfers(WhWorkload *w, uint32_t before, uint32_t after)
{
  Xfer *b = &g_array_index(w->xfers, Xfer, before);
  int slot = b->next[0] == NONE ? 0 : 1;
  g_assert(b->next[slot] == NONE);
  b->next[slot] = after;
  g_array_index(w->xfers, Xfer, after).pending++;
}

/* Expands an all-to-all or a broadcast into transfers; returns the index of the first. */
static uint32_t expand(WhWorkload *w, uint32_t id, const WhOpSpec *o)
{
  uint32_t n = o->group_n, first = w->xfers->len;
  const uint32_t *g = o->group;
  uint64_t chunk = (o->bytes + n - 1) / n;
  if (o->coll == WH_COLL_ALL_TO_ALL) {
    /* round i in 1..n-1: rank r sends to (r + i) mod n */
    for (uint32_t i = 1; i < n; i++) {
      for (uint32_t r = 0; r < n; r++) {
        uint32_t x = new_xfer(w, id, g[r], g[(r + i) % n], chunk);
        if (o->algo == WH_ALGO_PAIRWISE && i > 1) {
          uint32_t prev_send = first + (i - 2) * n + r;
          uint32_t prev_recv = first + (i - 2) * n + (r + n - (i - 1)) % n;
          link_xfers(w, prev_send, x);
          if (prev_recv != prev_send)
            link_xfers(w, prev_recv, x);
        }
      }
    }
    return first;
  }
  /* broadcast, a pipelined chain: chunk j crosses hop i (g[i] -> g[i + 1]) after it
   * crossed hop i - 1 and after chunk j - 1 crossed hop i: 2 (n - 1) steps of size / n */
  for (uint32_t j = 0; j < n; j++) {
    for (uint32_t i = 0; i + 1 < n; i++) {
      uint32_t x = new_xfer(w, id, g[i], g[i + 1], chunk);
      if (i > 0)
        link_xfers(w, x - 1, x);
      if (j > 0)
        link_xfers(w, x - (n - 1), x);
    }
  }
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
    uint32_t first = expand(w, id, &o), last = w->xfers->len;
    w->pending[id] = last - first;
    g_hash_table_insert(w->eager_first, GUINT_TO_POINTER(id), GUINT_TO_POINTER(first));
    for (uint32_t x = first; x < last; x++) {
      if (g_array_index(w->xfers, Xfer, x).pending == 0)
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

static void flow_done(void *data, WhFlow *flow)
{
  WhWorkload *w = data;
  if (flow->id >= w->flow_ref->len)
    return;
  FlowRef ref = g_array_index(w->flow_ref, FlowRef, flow->id);
  if (ref.op == NONE)
    return;
  if (ref.step == EAGER) {
    Xfer t = g_array_index(w->xfers, Xfer, ref.index);
    for (int k = 0; k < 2; k++) {
      if (t.next[k] != NONE && --g_array_index(w->xfers, Xfer, t.next[k]).pending == 0)
        start_xfer(w, t.next[k]);
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
  if (flow >= w->flow_ref->len || g_array_index(w->flow_ref, FlowRef, flow).op == NONE)
    return FALSE;
  FlowRef ref = g_array_index(w->flow_ref, FlowRef, flow);
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
  static const char *colls[] = {"all-reduce", "reduce-scatter", "all-gather", "all-to-all",
                                "broadcast"};
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
  static const char *names[] = {"all-reduce", "reduce-scatter", "all-gather", "all-to-all"};
  for (int i = 0; i < 4; i++) {
    if (g_strcmp0(text, names[i]) == 0) {
      *out = (WhCollKind)i;
      return TRUE;
    }
  }
  return FALSE;
}

gboolean wh_coll_algo_parse(const char *text, WhCollAlgo *out)
{
  static const char *names[] = {"ring", "pairwise", "direct"};
  for (int i = 0; i < 3; i++) {
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
    g_string_append_printf(s, "%u,%u,%s,%s,", i, o.rank, wh_op_kind_name(o.kind, o.coll), o.name);
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
