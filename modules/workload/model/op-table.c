/* Compact op descriptions; see op-table.h. Per-op fields are parallel arrays grown
 * together (by half their size, so the allocated tail stays small); names and groups
 * are interned through hash tables whose keys are the stored strings and groups. */
#include "op-table.h"

#include <string.h>

#include "workload.h"

#define NO_OP_LIMIT (UINT32_MAX - 1)

typedef struct {
  uint8_t kind, coll, algo, tag;
} Head;

/* the per-op arrays below: head, name, rank, arg, size, dep_end */
G_STATIC_ASSERT(sizeof(Head) + 4 * sizeof(uint32_t) + sizeof(uint64_t) == WH_OP_TABLE_BYTES_PER_OP);

typedef struct {
  uint32_t n;
  uint32_t ranks[];
} Group;

typedef struct {
  uint32_t n;     /* n x n entries */
  uint64_t total; /* their sum, without the diagonal */
  uint64_t bytes[];
} Matrix;

struct WhOpTable {
  gint ref;
  uint32_t n, cap;
  Head *head;
  uint32_t *name;    /* id in names */
  uint32_t *rank;    /* see WhOpSpec */
  uint32_t *arg;     /* send: dst; collective: group id */
  uint64_t *size;    /* compute: duration; send, collective: bytes */
  uint32_t *dep_end; /* op i's deps: dep[i ? dep_end[i - 1] : 0 .. dep_end[i]) */
  uint32_t *dep;
  uint64_t n_dep, cap_dep;
  GPtrArray *names;     /* char *, owned */
  GHashTable *name_ids; /* name -> id + 1 */
  GPtrArray *groups;    /* Group *, owned */
  GHashTable *group_ids;
  GPtrArray *matrices; /* Matrix *, owned */
  GHashTable *matrix_ids;
  uint64_t interned_bytes; /* strings and groups */
};

static guint group_hash(gconstpointer key)
{
  const Group *g = key;
  guint h = 2166136261u ^ g->n;
  for (uint32_t i = 0; i < g->n; i++)
    h = (h ^ g->ranks[i]) * 16777619u;
  return h;
}

static gboolean group_equal(gconstpointer a, gconstpointer b)
{
  const Group *x = a, *y = b;
  return x->n == y->n && memcmp(x->ranks, y->ranks, sizeof(uint32_t) * x->n) == 0;
}

static guint matrix_hash(gconstpointer key)
{
  const Matrix *m = key;
  guint h = 2166136261u ^ m->n;
  for (uint64_t i = 0; i < (uint64_t)m->n * m->n; i++)
    h = (h ^ (guint)(m->bytes[i] ^ (m->bytes[i] >> 32))) * 16777619u;
  return h;
}

static gboolean matrix_equal(gconstpointer a, gconstpointer b)
{
  const Matrix *x = a, *y = b;
  return x->n == y->n && memcmp(x->bytes, y->bytes, sizeof(uint64_t) * x->n * x->n) == 0;
}

WhOpTable *wh_op_table_new(void)
{
  WhOpTable *t = g_new0(WhOpTable, 1);
  t->ref = 1;
  t->names = g_ptr_array_new_with_free_func(g_free);
  t->name_ids = g_hash_table_new(g_str_hash, g_str_equal);
  t->groups = g_ptr_array_new_with_free_func(g_free);
  t->group_ids = g_hash_table_new(group_hash, group_equal);
  t->matrices = g_ptr_array_new_with_free_func(g_free);
  t->matrix_ids = g_hash_table_new(matrix_hash, matrix_equal);
  return t;
}

WhOpTable *wh_op_table_ref(WhOpTable *t)
{
  t->ref++;
  return t;
}

gboolean wh_op_table_is_shared(const WhOpTable *t)
{
  return t->ref > 1;
}

void wh_op_table_unref(WhOpTable *t)
{
  if (t == NULL || --t->ref > 0)
    return;
  g_free(t->head);
  g_free(t->name);
  g_free(t->rank);
  g_free(t->arg);
  g_free(t->size);
  g_free(t->dep_end);
  g_free(t->dep);
  g_hash_table_unref(t->name_ids);
  g_hash_table_unref(t->group_ids);
  g_ptr_array_unref(t->names);
  g_ptr_array_unref(t->groups);
  g_hash_table_unref(t->matrix_ids);
  g_ptr_array_unref(t->matrices);
  g_free(t);
}

static void set_op_cap(WhOpTable *t, uint32_t cap)
{
  t->head = g_renew(Head, t->head, cap);
  t->name = g_renew(uint32_t, t->name, cap);
  t->rank = g_renew(uint32_t, t->rank, cap);
  t->arg = g_renew(uint32_t, t->arg, cap);
  t->size = g_renew(uint64_t, t->size, cap);
  t->dep_end = g_renew(uint32_t, t->dep_end, cap);
  t->cap = cap;
}

void wh_op_table_reserve(WhOpTable *t, uint64_t ops, uint64_t deps)
{
  g_return_if_fail(!wh_op_table_is_shared(t));
  uint64_t want = MIN((uint64_t)t->n + ops, (uint64_t)NO_OP_LIMIT);
  if (want > t->cap)
    set_op_cap(t, (uint32_t)want);
  uint64_t want_dep = MIN(t->n_dep + deps, (uint64_t)UINT32_MAX);
  if (want_dep > t->cap_dep) {
    t->dep = g_renew(uint32_t, t->dep, want_dep);
    t->cap_dep = want_dep;
  }
}

void wh_op_table_trim(WhOpTable *t)
{
  if (t->cap > t->n)
    set_op_cap(t, MAX(t->n, 1));
  if (t->cap_dep > t->n_dep) {
    t->cap_dep = MAX(t->n_dep, 1);
    t->dep = g_renew(uint32_t, t->dep, t->cap_dep);
  }
}

static uint64_t grown(uint64_t cap, uint64_t need, uint64_t limit)
{
  uint64_t c = MAX(cap + cap / 2, 16);
  return MIN(MAX(c, need), limit);
}

static uint32_t intern_name(WhOpTable *t, const char *name)
{
  gpointer id = g_hash_table_lookup(t->name_ids, name);
  if (id)
    return GPOINTER_TO_UINT(id) - 1;
  char *copy = g_strdup(name);
  g_ptr_array_add(t->names, copy);
  g_hash_table_insert(t->name_ids, copy, GUINT_TO_POINTER(t->names->len));
  t->interned_bytes += strlen(name) + 1 + WH_OP_TABLE_BYTES_PER_ENTRY;
  return t->names->len - 1;
}

/* Keeps one copy of `obj` (a g_malloc'd block of `size` bytes): the index of an equal
 * one already in `arr` (and `obj` is freed), or of `obj`, added. */
static uint32_t intern(WhOpTable *t, GPtrArray *arr, GHashTable *ids, gpointer obj, size_t size)
{
  gpointer id = g_hash_table_lookup(ids, obj);
  if (id) {
    g_free(obj);
    return GPOINTER_TO_UINT(id) - 1;
  }
  g_ptr_array_add(arr, obj);
  g_hash_table_insert(ids, obj, GUINT_TO_POINTER(arr->len));
  t->interned_bytes += size + WH_OP_TABLE_BYTES_PER_ENTRY;
  return arr->len - 1;
}

static uint32_t intern_group(WhOpTable *t, const uint32_t *ranks, uint32_t n)
{
  size_t size = sizeof(Group) + sizeof(uint32_t) * n;
  Group *g = g_malloc(size);
  g->n = n;
  memcpy(g->ranks, ranks, sizeof(uint32_t) * n);
  return intern(t, t->groups, t->group_ids, g, size);
}

static uint32_t intern_matrix(WhOpTable *t, const uint64_t *bytes, uint32_t n)
{
  uint64_t cells = (uint64_t)n * n;
  size_t size = sizeof(Matrix) + sizeof(uint64_t) * cells;
  Matrix *m = g_malloc(size);
  m->n = n;
  m->total = 0;
  memcpy(m->bytes, bytes, sizeof(uint64_t) * cells);
  for (uint64_t i = 0; i < cells; i++)
    m->total += i / n == i % n ? 0 : bytes[i];
  return intern(t, t->matrices, t->matrix_ids, m, size);
}

int64_t wh_op_table_add(WhOpTable *t, const WhOpSpec *op, GError **error)
{
  g_return_val_if_fail(!wh_op_table_is_shared(t), -1);
  if (t->n >= NO_OP_LIMIT || t->n_dep + op->n_deps > UINT32_MAX) {
    g_set_error(error, WH_WORKLOAD_ERROR, WH_WORKLOAD_ERROR_INVALID,
                "op %u (%s): a workload holds at most %u ops and %u dependency edges", t->n,
                op->name, NO_OP_LIMIT, UINT32_MAX);
    return -1;
  }
  if (t->n == t->cap)
    set_op_cap(t, (uint32_t)grown(t->cap, t->n + 1, NO_OP_LIMIT));
  if (t->n_dep + op->n_deps > t->cap_dep) {
    t->cap_dep = grown(t->cap_dep, t->n_dep + op->n_deps, UINT32_MAX);
    t->dep = g_renew(uint32_t, t->dep, t->cap_dep);
  }
  uint32_t id = t->n++;
  t->head[id] = (Head){op->kind, op->coll, op->algo, op->tag};
  t->name[id] = intern_name(t, op->name);
  t->rank[id] = op->rank;
  t->arg[id] = op->kind == WH_OP_SEND         ? op->dst
               : op->kind == WH_OP_COLLECTIVE ? intern_group(t, op->group, op->group_n)
                                              : 0;
  gboolean v = op->kind == WH_OP_COLLECTIVE && op->coll == WH_COLL_ALL_TO_ALLV;
  t->size[id] = op->kind == WH_OP_COMPUTE ? op->duration
                : v                       ? intern_matrix(t, op->matrix, op->group_n)
                                          : op->bytes;
  if (op->n_deps)
    memcpy(t->dep + t->n_dep, op->deps, sizeof(uint32_t) * op->n_deps);
  t->n_dep += op->n_deps;
  t->dep_end[id] = (uint32_t)t->n_dep;
  return id;
}

uint32_t wh_op_table_len(const WhOpTable *t)
{
  return t->n;
}

uint64_t wh_op_table_n_deps_total(const WhOpTable *t)
{
  return t->n_dep;
}

WhOpKind wh_op_table_kind(const WhOpTable *t, uint32_t id)
{
  return (WhOpKind)t->head[id].kind;
}

const uint32_t *wh_op_table_deps(const WhOpTable *t, uint32_t id, uint32_t *n)
{
  uint32_t begin = id ? t->dep_end[id - 1] : 0;
  *n = t->dep_end[id] - begin;
  return t->dep + begin;
}

void wh_op_table_get(const WhOpTable *t, uint32_t id, WhOpSpec *out)
{
  Head h = t->head[id];
  *out = (WhOpSpec){.kind = (WhOpKind)h.kind,
                    .coll = (WhCollKind)h.coll,
                    .algo = (WhCollAlgo)h.algo,
                    .tag = h.tag,
                    .name = t->names->pdata[t->name[id]],
                    .rank = t->rank[id]};
  out->deps = wh_op_table_deps(t, id, &out->n_deps);
  if (h.kind == WH_OP_COMPUTE) {
    out->duration = t->size[id];
    return;
  }
  out->bytes = t->size[id];
  if (h.kind == WH_OP_SEND) {
    out->dst = t->arg[id];
    return;
  }
  const Group *g = t->groups->pdata[t->arg[id]];
  out->group = g->ranks;
  out->group_n = g->n;
  if (h.coll == WH_COLL_ALL_TO_ALLV) {
    const Matrix *m = t->matrices->pdata[t->size[id]];
    out->matrix = m->bytes;
    out->bytes = m->total;
  }
}

WhOpTable *wh_op_table_copy(const WhOpTable *t, GError **error)
{
  g_autoptr(WhOpTable) c = wh_op_table_new();
  wh_op_table_reserve(c, t->n, t->n_dep);
  for (uint32_t i = 0; i < t->n; i++) {
    WhOpSpec op;
    wh_op_table_get(t, i, &op);
    if (wh_op_table_add(c, &op, error) < 0)
      return NULL;
  }
  return g_steal_pointer(&c);
}

uint64_t wh_op_table_bytes(const WhOpTable *t)
{
  return sizeof *t + (uint64_t)t->cap * WH_OP_TABLE_BYTES_PER_OP +
         t->cap_dep * WH_OP_TABLE_BYTES_PER_DEP + t->interned_bytes;
}
