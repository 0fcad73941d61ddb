/* Operation DAGs and collective expansion; see workload.h. Ops and transfers live in
 * growable arrays; dependency edges are kept as successor lists built when an op is
 * added (deps must name earlier ops, so the DAG is acyclic by construction). */
#include "workload.h"

#include <string.h>

GQuark wh_workload_error_quark(void)
{
  return g_quark_from_static_string("wh-workload-error");
}

typedef struct {
  WhOpKind kind;
  WhCollKind coll;
  WhCollAlgo algo;
  char *name;
  uint32_t rank, dst;
  WhTime duration;
  uint64_t bytes;
  uint32_t *group;
  uint32_t group_n;
  uint32_t *deps;
  uint32_t n_deps;
  GArray *succ; /* uint32_t op ids */
  uint32_t pending;
  WhTime start, end;
  gboolean started, ended;
  uint32_t xfers_left;
  uint32_t n_flows;
  uint32_t first_xfer; /* its transfers are first_xfer.. (contiguous, made at its start) */
} Op;

typedef struct {
  uint32_t op;
  uint32_t src, dst; /* ranks */
  uint64_t bytes;
  uint32_t pending;
  uint32_t next[2]; /* transfers this one unlocks (UINT32_MAX: none) */
} Xfer;

struct WhWorkload {
  WhTransport *tp;
  uint32_t n_ranks;
  uint32_t *host;    /* rank -> host */
  GArray *ops;       /* Op */
  GArray *xfers;     /* Xfer */
  GArray *flow_xfer; /* flow id -> xfer id (UINT32_MAX: not ours) */
  uint32_t ops_left;
  WhTime alpha; /* per-message software cost, before a transfer's first byte */
};

static const WhParamSpec workload_params[] = {
    {"MessageAlpha", WH_PARAM_TIME, "0ns",
     "per-message software cost: every transfer of a workload (a message of a collective "
     "or a point-to-point op) starts this long after it is ready; the one model of message "
     "overhead",
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

static inline Op *op_at(WhWorkload *w, uint32_t i)
{
  return &g_array_index(w->ops, Op, i);
}

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
  w->ops = g_array_new(FALSE, TRUE, sizeof(Op));
  w->xfers = g_array_new(FALSE, TRUE, sizeof(Xfer));
  w->flow_xfer = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  wh_transport_add_observer(tp, &workload_observer, w);
  return w;
}

void wh_workload_free(WhWorkload *w)
{
  if (w == NULL)
    return;
  for (guint i = 0; i < w->ops->len; i++) {
    Op *o = op_at(w, i);
    g_free(o->name);
    g_free(o->group);
    g_free(o->deps);
    g_array_unref(o->succ);
  }
  wh_transport_remove_observer(w->tp, &workload_observer, w);
  g_array_unref(w->ops);
  g_array_unref(w->xfers);
  g_array_unref(w->flow_xfer);
  g_free(w->host);
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

static int64_t add_op(WhWorkload *w, Op *o, const uint32_t *deps, uint32_t n_deps, GError **error)
{
  uint32_t id = w->ops->len;
  for (uint32_t i = 0; i < n_deps; i++) {
    if (deps[i] >= id) {
      g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                  "op %u (%s): dependency %u is not an earlier op", id, o->name, deps[i]);
      g_free(o->name);
      g_free(o->group);
      return -1;
    }
  }
  o->deps = g_memdup2(deps, sizeof(uint32_t) * n_deps);
  o->n_deps = n_deps;
  o->pending = n_deps;
  o->succ = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  g_array_append_val(w->ops, *o);
  for (uint32_t i = 0; i < n_deps; i++)
    g_array_append_val(op_at(w, deps[i])->succ, id);
  w->ops_left++;
  return id;
}

int64_t wh_workload_add_compute(WhWorkload *w, const char *name, uint32_t rank, WhTime duration,
                                const uint32_t *deps, uint32_t n_deps, GError **error)
{
  if (!check_rank(w, rank, name, error))
    return -1;
  Op o = {.kind = WH_OP_COMPUTE, .name = g_strdup(name), .rank = rank, .duration = duration};
  return add_op(w, &o, deps, n_deps, error);
}

int64_t wh_workload_add_send(WhWorkload *w, const char *name, uint32_t src, uint32_t dst,
                             uint64_t bytes, const uint32_t *deps, uint32_t n_deps, GError **error)
{
  if (!check_rank(w, src, name, error) || !check_rank(w, dst, name, error))
    return -1;
  if (src == dst) {
    g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                "%s: a send needs two different ranks", name);
    return -1;
  }
  Op o = {.kind = WH_OP_SEND, .name = g_strdup(name), .rank = src, .dst = dst, .bytes = bytes};
  return add_op(w, &o, deps, n_deps, error);
}

int64_t wh_workload_add_collective(WhWorkload *w, const char *name, WhCollKind kind,
                                   WhCollAlgo algo, const uint32_t *group, uint32_t n,
                                   uint64_t bytes, const uint32_t *deps, uint32_t n_deps,
                                   GError **error)
{
  if (n == 0) {
    g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID, "%s: empty group", name);
    return -1;
  }
  for (uint32_t i = 0; i < n; i++) {
    if (!check_rank(w, group[i], name, error))
      return -1;
    for (uint32_t j = 0; j < i; j++) {
      if (group[j] == group[i]) {
        g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                    "%s: rank %u appears twice in the group", name, group[i]);
        return -1;
      }
    }
  }
  gboolean a2a = kind == WH_COLL_ALL_TO_ALL;
  if (a2a != (algo == WH_ALGO_PAIRWISE || algo == WH_ALGO_DIRECT)) {
    g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                "%s: algorithm does not apply to this collective (ring for all-reduce, "
                "reduce-scatter and all-gather; pairwise or direct for all-to-all)",
                name);
    return -1;
  }
  Op o = {.kind = WH_OP_COLLECTIVE,
          .coll = kind,
          .algo = algo,
          .name = g_strdup(name),
          .rank = group[0],
          .bytes = bytes,
          .group = g_memdup2(group, sizeof(uint32_t) * n),
          .group_n = n};
  return add_op(w, &o, deps, n_deps, error);
}

/* ---- execution ---- */

static void op_end(WhWorkload *w, uint32_t id);

static void start_xfer(WhWorkload *w, uint32_t x)
{
  Xfer *t = &g_array_index(w->xfers, Xfer, x);
  g_autoptr(GError) err = NULL;
  int64_t flow = wh_transport_add_flow(w->tp, w->host[t->src], w->host[t->dst], t->bytes,
                                       w->tp->sim->now + w->alpha, &err);
  g_assert(flow >= 0); /* ranks and sizes were checked when the op was added */
  while (w->flow_xfer->len <= (guint)flow) {
    uint32_t none = NONE;
    g_array_append_val(w->flow_xfer, none);
  }
  g_array_index(w->flow_xfer, uint32_t, flow) = x;
  op_at(w, t->op)->n_flows++;
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

/* Expands a collective into transfers; returns the index of the first. */
static uint32_t expand(WhWorkload *w, uint32_t id)
{
  Op *o = op_at(w, id);
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
  if (o->coll == WH_COLL_BROADCAST) {
    /* pipelined chain: chunk j crosses hop i (g[i] -> g[i + 1]) after it crossed hop
     * i - 1 and after chunk j - 1 crossed hop i: 2 (n - 1) steps of size / n */
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
  /* ring: steps of one chunk from each rank to the next; step k + 1 of rank r
   * forwards what arrived from rank r - 1 in step k */
  uint32_t steps = o->coll == WH_COLL_ALL_REDUCE ? 2 * (n - 1) : n - 1;
  for (uint32_t k = 0; k < steps; k++) {
    for (uint32_t r = 0; r < n; r++) {
      uint32_t x = new_xfer(w, id, g[r], g[(r + 1) % n], chunk);
      if (k > 0)
        link_xfers(w, first + (k - 1) * n + (r + n - 1) % n, x);
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
  Op *o = op_at(w, id);
  o->started = TRUE;
  o->start = w->tp->sim->now;
  switch (o->kind) {
  case WH_OP_COMPUTE: {
    /* not network work: owned by no port or flow, so no partition holds it */
    wh_sim_schedule(w->tp->sim, o->duration, compute_done, w, id, WH_OWNER_NONE);
    return;
  }
  case WH_OP_SEND:
    if (o->bytes == 0)
      break;
    o->xfers_left = 1;
    o->first_xfer = w->xfers->len;
    start_xfer(w, new_xfer(w, id, o->rank, o->dst, o->bytes));
    return;
  case WH_OP_COLLECTIVE: {
    if (o->group_n < 2 || o->bytes == 0)
      break;
    uint32_t first = expand(w, id), last = w->xfers->len;
    op_at(w, id)->xfers_left = last - first;
    op_at(w, id)->first_xfer = first;
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
  Op *o = op_at(w, id);
  o->end = w->tp->sim->now;
  o->ended = TRUE;
  w->ops_left--;
  for (guint i = 0; i < o->succ->len; i++) {
    uint32_t s = g_array_index(o->succ, uint32_t, i);
    if (--op_at(w, s)->pending == 0)
      op_start(w, s);
  }
}

static void flow_done(void *data, WhFlow *flow)
{
  WhWorkload *w = data;
  if (flow->id >= w->flow_xfer->len)
    return;
  uint32_t x = g_array_index(w->flow_xfer, uint32_t, flow->id);
  if (x == NONE)
    return;
  Xfer t = g_array_index(w->xfers, Xfer, x);
  for (int k = 0; k < 2; k++) {
    if (t.next[k] != NONE && --g_array_index(w->xfers, Xfer, t.next[k]).pending == 0)
      start_xfer(w, t.next[k]);
  }
  if (--op_at(w, t.op)->xfers_left == 0)
    op_end(w, t.op);
}

void wh_workload_start(WhWorkload *w)
{
  uint32_t n = w->ops->len;
  for (uint32_t i = 0; i < n; i++) {
    Op *o = op_at(w, i);
    if (!o->started && o->n_deps == 0)
      op_start(w, i);
  }
}

uint32_t wh_workload_n_ops(const WhWorkload *w)
{
  return w->ops->len;
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

void wh_workload_op_info(const WhWorkload *w, uint32_t id, WhOpInfo *out)
{
  const Op *o = &g_array_index(w->ops, Op, id);
  *out = (WhOpInfo){.id = id,
                    .kind = o->kind,
                    .name = o->name,
                    .rank = o->rank,
                    .start = o->start,
                    .end = o->end,
                    .started = o->started,
                    .ended = o->ended,
                    .deps = o->deps,
                    .n_deps = o->n_deps,
                    .n_flows = o->n_flows,
                    .dst = o->dst,
                    .coll = o->coll,
                    .group = o->group,
                    .group_n = o->group_n,
                    .bytes = o->bytes};
}

gboolean wh_workload_flow_origin(const WhWorkload *w, uint32_t flow, uint32_t *op, uint32_t *index)
{
  if (flow >= w->flow_xfer->len || g_array_index(w->flow_xfer, uint32_t, flow) == NONE)
    return FALSE;
  uint32_t x = g_array_index(w->flow_xfer, uint32_t, flow);
  const Xfer *t = &g_array_index(w->xfers, Xfer, x);
  *op = t->op;
  *index = x - g_array_index(w->ops, Op, t->op).first_xfer;
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
  for (guint i = 0; i < w->ops->len; i++) {
    const Op *o = &g_array_index(w->ops, Op, i);
    g_string_append_printf(s, "%u,%u,%s,%s,", i, o->rank, wh_op_kind_name(o->kind, o->coll),
                           o->name);
    if (o->started) /* an op still running when the run stopped has no end */
      g_string_append_printf(s, "%" G_GUINT64_FORMAT ",", (guint64)o->start);
    else
      g_string_append_c(s, ',');
    if (o->ended)
      g_string_append_printf(s, "%" G_GUINT64_FORMAT ",", (guint64)o->end);
    else
      g_string_append_c(s, ',');
    for (uint32_t d = 0; d < o->n_deps; d++)
      g_string_append_printf(s, "%s%u", d ? ";" : "", o->deps[d]);
    g_string_append_c(s, '\n');
  }
  return g_string_free(s, FALSE);
}
