/* Flow conflict graphs: construction, canonical hash and exact isomorphism; see fcg.h.
 * Colours are 64-bit hashes (splitmix64 mixing), so the colours of two graphs refined in
 * step are comparable; a neighbour multiset is hashed as the sum of its elements'
 * hashes. A hash collision can only merge colour classes: the exact check stays sound
 * because it verifies every map it returns, and complete because an isomorphism
 * preserves every colour it computes. */
#include "fcg.h"
#include "rng.h"
#include "varint.h"

#include <math.h>
#include <string.h>

typedef struct {
  uint32_t a, b, w; /* a < b */
} Edge;

struct WhFcg {
  uint32_t n;
  uint64_t *label;
  GArray *edges;   /* Edge; sorted and merged while `merged` */
  gboolean merged; /* until an edge is added */
  gboolean built;  /* the adjacency below is the edges' */
  uint32_t *off;   /* n + 1 offsets into nbr/wt */
  uint32_t *nbr;   /* neighbours, ascending per vertex */
  uint32_t *wt;
};

typedef struct {
  uint64_t colour;
  uint32_t v;
} Cell;

#define INDIVIDUAL_SALT 0x6a09e667f3bcc909ull
#define WEIGHT_SALT 0xbb67ae8584caa73bull

#define GOLDEN_GAMMA 0x9e3779b97f4a7c15ull

/* splitmix64: one step of its state, then core's finalizer. */
static inline uint64_t splitmix(uint64_t z)
{
  return wh_mix64(z + GOLDEN_GAMMA);
}

/* Order-dependent fold of x into h. */
static inline uint64_t fold(uint64_t h, uint64_t x)
{
  return splitmix((h << 23 | h >> 41) ^ splitmix(x));
}

#define CMP(x, y) (((x) > (y)) - ((x) < (y)))

static int cmp_u32(const void *pa, const void *pb)
{
  return CMP(*(const uint32_t *)pa, *(const uint32_t *)pb);
}

static int cmp_u64(const void *pa, const void *pb)
{
  return CMP(*(const uint64_t *)pa, *(const uint64_t *)pb);
}

/* By (a, b): equal pairs are merged, their order does not matter. */
static int cmp_edge(const void *pa, const void *pb)
{
  const Edge *x = pa, *y = pb;
  return CMP((uint64_t)x->a << 32 | x->b, (uint64_t)y->a << 32 | y->b);
}

static int cmp_cell(const void *pa, const void *pb)
{
  const Cell *x = pa, *y = pb;
  if (x->colour != y->colour)
    return CMP(x->colour, y->colour);
  return CMP(x->v, y->v);
}

/* Sorts with the comparison inlined (qsort's call per comparison was a tenth of a
 * memo run on MoE-8x7B): quicksort on the median of three, insertion sort below 16
 * elements, and qsort past a depth of 2 log2 n (never quadratic). Each order sorted
 * this way is total on the values that matter (equal keys are equal elements, or are
 * merged after), so the result is the same as qsort's. */
#define DEFINE_SORT(NAME, T, CMPFN)                                                                \
  static void NAME##_rec(T *a, size_t n, unsigned depth)                                           \
  {                                                                                                \
    while (n > 16) {                                                                               \
      if (depth-- == 0) {                                                                          \
        qsort(a, n, sizeof(T), CMPFN);                                                             \
        return;                                                                                    \
      }                                                                                            \
      T *lo = a, *mid = a + n / 2, *hi = a + n - 1, tmp;                                           \
      if (CMPFN(mid, lo) < 0) {                                                                    \
        tmp = *mid, *mid = *lo, *lo = tmp;                                                         \
      }                                                                                            \
      if (CMPFN(hi, mid) < 0) {                                                                    \
        tmp = *hi, *hi = *mid, *mid = tmp;                                                         \
        if (CMPFN(mid, lo) < 0) {                                                                  \
          tmp = *mid, *mid = *lo, *lo = tmp;                                                       \
        }                                                                                          \
      }                                                                                            \
      T pivot = *mid;                                                                              \
      size_t i = 0, j = n - 1;                                                                     \
      for (;;) {                                                                                   \
        while (CMPFN(&a[i], &pivot) < 0)                                                           \
          i++;                                                                                     \
        while (CMPFN(&pivot, &a[j]) < 0)                                                           \
          j--;                                                                                     \
        if (i >= j)                                                                                \
          break;                                                                                   \
        tmp = a[i], a[i] = a[j], a[j] = tmp;                                                       \
        i++;                                                                                       \
        j--;                                                                                       \
      }                                                                                            \
      /* a[0..j] <= pivot <= a[j+1..n-1]: recurse on the smaller side */                           \
      if (j + 1 < n - j - 1) {                                                                     \
        NAME##_rec(a, j + 1, depth);                                                               \
        a += j + 1;                                                                                \
        n -= j + 1;                                                                                \
      } else {                                                                                     \
        NAME##_rec(a + j + 1, n - j - 1, depth);                                                   \
        n = j + 1;                                                                                 \
      }                                                                                            \
    }                                                                                              \
    for (size_t i = 1; i < n; i++) {                                                               \
      T x = a[i];                                                                                  \
      size_t k = i;                                                                                \
      for (; k > 0 && CMPFN(&x, &a[k - 1]) < 0; k--)                                               \
        a[k] = a[k - 1];                                                                           \
      a[k] = x;                                                                                    \
    }                                                                                              \
  }                                                                                                \
  static void NAME(T *a, size_t n)                                                                 \
  {                                                                                                \
    unsigned depth = 0;                                                                            \
    for (size_t m = n; m > 1; m >>= 1)                                                             \
      depth += 2;                                                                                  \
    NAME##_rec(a, n, depth);                                                                       \
  }

DEFINE_SORT(sort_u32, uint32_t, cmp_u32)
DEFINE_SORT(sort_u64, uint64_t, cmp_u64)
DEFINE_SORT(sort_edges, Edge, cmp_edge)
DEFINE_SORT(sort_cell_array, Cell, cmp_cell)

WhFcg *wh_fcg_new(uint32_t n)
{
  WhFcg *g = g_new0(WhFcg, 1);
  g->n = n;
  g->label = g_new0(uint64_t, n);
  g->edges = g_array_new(FALSE, FALSE, sizeof(Edge));
  return g;
}

static void drop_adjacency(WhFcg *g)
{
  g_clear_pointer(&g->off, g_free);
  g_clear_pointer(&g->nbr, g_free);
  g_clear_pointer(&g->wt, g_free);
  g->built = FALSE;
}

void wh_fcg_free(WhFcg *g)
{
  if (g == NULL)
    return;
  drop_adjacency(g);
  g_array_unref(g->edges);
  g_free(g->label);
  g_free(g);
}

void wh_fcg_set_label(WhFcg *g, uint32_t v, uint64_t label)
{
  g_return_if_fail(g != NULL && v < g->n);
  g->label[v] = label;
}

void wh_fcg_add_edge(WhFcg *g, uint32_t a, uint32_t b, uint32_t w)
{
  g_return_if_fail(g != NULL && a < g->n && b < g->n && a != b && w > 0);
  Edge e = {MIN(a, b), MAX(a, b), w};
  g_array_append_val(g->edges, e);
  g->merged = FALSE;
  if (g->built)
    drop_adjacency(g);
}

/* Sorts and merges the edge list (serialization needs no more). */
static void merge_edges(WhFcg *g)
{
  if (g->merged)
    return;
  Edge *e = (Edge *)(void *)g->edges->data;
  guint len = g->edges->len, m = 0;
  /* wh_fcg_from_paths gives them sorted and distinct: no sort then */
  gboolean sorted = TRUE;
  for (guint i = 1; sorted && i < len; i++)
    sorted = e[i - 1].a < e[i].a || (e[i - 1].a == e[i].a && e[i - 1].b < e[i].b);
  if (!sorted)
    sort_edges(e, len);
  for (guint i = 0; i < len; i++) {
    if (m > 0 && e[m - 1].a == e[i].a && e[m - 1].b == e[i].b)
      e[m - 1].w = e[i].w > UINT32_MAX - e[m - 1].w ? UINT32_MAX : e[m - 1].w + e[i].w;
    else
      e[m++] = e[i];
  }
  g_array_set_size(g->edges, m);
  g->merged = TRUE;
}

/* Merges the edge list, then builds the adjacency (neighbours ascending: the edges come
 * sorted by their lower end, then their upper end). */
static void build(WhFcg *g)
{
  if (g->built)
    return;
  merge_edges(g);
  const Edge *e = (const Edge *)(const void *)g->edges->data;
  guint m = g->edges->len;
  g->off = g_new0(uint32_t, g->n + 1);
  g->nbr = g_new(uint32_t, 2 * (size_t)m);
  g->wt = g_new(uint32_t, 2 * (size_t)m);
  for (guint i = 0; i < m; i++) {
    g->off[e[i].a + 1]++;
    g->off[e[i].b + 1]++;
  }
  for (uint32_t v = 0; v < g->n; v++)
    g->off[v + 1] += g->off[v];
  g_autofree uint32_t *fill = g_memdup2(g->off, sizeof(uint32_t) * g->n);
  for (guint i = 0; i < m; i++) {
    uint32_t pa = fill[e[i].a]++, pb = fill[e[i].b]++;
    g->nbr[pa] = e[i].b;
    g->wt[pa] = e[i].w;
    g->nbr[pb] = e[i].a;
    g->wt[pb] = e[i].w;
  }
  g->built = TRUE;
}

WhFcg *wh_fcg_from_paths(uint32_t n, const uint32_t *const *ports, const uint32_t *n_ports,
                         const uint64_t *labels)
{
  g_return_val_if_fail(n == 0 || (ports != NULL && n_ports != NULL), NULL);
  WhFcg *g = wh_fcg_new(n);
  if (labels != NULL && n > 0)
    memcpy(g->label, labels, sizeof(uint64_t) * n);
  /* dense port indices, in order of first use, through an open-addressing table of
   * at least twice the port uses (a slot's dense index UINT32_MAX: empty) */
  size_t uses = 0;
  for (uint32_t f = 0; f < n; f++)
    uses += n_ports[f];
  g_autofree uint32_t *use_port = g_new(uint32_t, MAX(uses, 1u)); /* dense port of each use */
  size_t cap = 16;
  while (cap < 2 * uses)
    cap *= 2;
  g_autofree uint32_t *slot_port = g_new(uint32_t, cap);
  g_autofree uint32_t *slot_dense = g_new(uint32_t, cap);
  memset(slot_dense, 0xff, cap * sizeof(uint32_t));
  uint32_t n_dense = 0;
  size_t u = 0;
  for (uint32_t f = 0; f < n; f++)
    for (uint32_t i = 0; i < n_ports[f]; i++) {
      uint32_t port = ports[f][i];
      size_t h = (size_t)(splitmix(port) & (cap - 1));
      while (slot_dense[h] != UINT32_MAX && slot_port[h] != port)
        h = (h + 1) & (cap - 1);
      if (slot_dense[h] == UINT32_MAX) {
        slot_port[h] = port;
        slot_dense[h] = n_dense++;
      }
      use_port[u++] = slot_dense[h];
    }
  /* port -> flows (ascending, each flow once), as offsets into `members` */
  g_autofree uint32_t *start = g_new0(uint32_t, (size_t)n_dense + 1);
  g_autofree uint32_t *stamp = g_new0(uint32_t, n_dense); /* last flow + 1 seen */
  u = 0;
  for (uint32_t f = 0; f < n; f++)
    for (uint32_t i = 0; i < n_ports[f]; i++, u++)
      if (stamp[use_port[u]] != f + 1) {
        stamp[use_port[u]] = f + 1;
        start[use_port[u] + 1]++;
      }
  for (uint32_t p = 0; p < n_dense; p++)
    start[p + 1] += start[p];
  g_autofree uint32_t *members = g_new(uint32_t, start[n_dense]);
  g_autofree uint32_t *fill = g_memdup2(start, sizeof(uint32_t) * ((size_t)n_dense + 1));
  memset(stamp, 0, sizeof(uint32_t) * n_dense);
  u = 0;
  for (uint32_t f = 0; f < n; f++)
    for (uint32_t i = 0; i < n_ports[f]; i++, u++)
      if (stamp[use_port[u]] != f + 1) {
        stamp[use_port[u]] = f + 1;
        members[fill[use_port[u]]++] = f;
      }
  /* per flow a: count the ports it shares with each later flow b */
  g_autofree uint32_t *shared = g_new0(uint32_t, n);
  g_autofree uint32_t *touched = g_new(uint32_t, n);
  memset(stamp, 0, sizeof(uint32_t) * n_dense);
  u = 0;
  for (uint32_t a = 0; a < n; a++) {
    uint32_t n_touched = 0;
    for (uint32_t i = 0; i < n_ports[a]; i++, u++) {
      uint32_t p = use_port[u];
      if (stamp[p] == a + 1)
        continue;
      stamp[p] = a + 1;
      for (uint32_t k = start[p]; k < start[p + 1]; k++) {
        uint32_t b = members[k];
        if (b <= a)
          continue;
        if (shared[b]++ == 0)
          touched[n_touched++] = b;
      }
    }
    /* the edges of a in ascending b, so that build() need not sort: a scan of the
     * later flows when they are few against those touched, else a sort of these */
    guint m = g->edges->len;
    g_array_set_size(g->edges, m + n_touched);
    Edge *e = &g_array_index(g->edges, Edge, m);
    if ((uint64_t)n_touched * 8 >= n - a - 1) {
      for (uint32_t b = a + 1, left = n_touched; left > 0; b++) {
        if (shared[b] == 0)
          continue;
        left--;
        *e++ = (Edge){a, b, shared[b]};
        shared[b] = 0;
      }
    } else {
      sort_u32(touched, n_touched);
      for (uint32_t k = 0; k < n_touched; k++) {
        *e++ = (Edge){a, touched[k], shared[touched[k]]};
        shared[touched[k]] = 0;
      }
    }
  }
  return g;
}

uint32_t wh_fcg_n_vertices(const WhFcg *g)
{
  g_return_val_if_fail(g != NULL, 0);
  return g->n;
}

uint64_t wh_fcg_label(const WhFcg *g, uint32_t v)
{
  g_return_val_if_fail(g != NULL && v < g->n, 0);
  return g->label[v];
}

uint32_t wh_fcg_n_edges(WhFcg *g)
{
  g_return_val_if_fail(g != NULL, 0);
  build(g);
  return g->edges->len;
}

/* Weights above this take a second varint after the edge's. */
#define SMALL_WEIGHTS 3u

void wh_fcg_serialize(WhFcg *g, GByteArray *out)
{
  g_return_if_fail(g != NULL && out != NULL);
  merge_edges(g);
  /* the distinct labels, in the order of their first vertex */
  g_autoptr(GHashTable) index = g_hash_table_new(g_int64_hash, g_int64_equal);
  g_autofree uint32_t *of = g_new(uint32_t, MAX(g->n, 1u));
  g_autoptr(GArray) distinct = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  for (uint32_t v = 0; v < g->n; v++) {
    gpointer at;
    if (!g_hash_table_lookup_extended(index, &g->label[v], NULL, &at)) {
      at = GUINT_TO_POINTER(distinct->len);
      g_hash_table_insert(index, &g->label[v], at);
      g_array_append_val(distinct, g->label[v]);
    }
    of[v] = GPOINTER_TO_UINT(at);
  }
  /* written in place, into room for the longest form: three counts, the labels, per
   * vertex its label index and edge count, per edge two varints */
  guint from = out->len;
  size_t room = 3 * WH_VARINT_MAX_BYTES + (size_t)distinct->len * sizeof(uint64_t) +
                (size_t)g->n * 2 * WH_VARINT_MAX_BYTES +
                (size_t)g->edges->len * 2 * WH_VARINT_MAX_BYTES;
  g_byte_array_set_size(out, (guint)(from + room));
  uint8_t *w = out->data + from;
  w = wh_varint_write(w, g->n);
  w = wh_varint_write(w, g->edges->len);
  w = wh_varint_write(w, distinct->len);
  if (distinct->len) {
    memcpy(w, distinct->data, distinct->len * sizeof(uint64_t));
    w += distinct->len * sizeof(uint64_t);
  }
  for (uint32_t v = 0; v < g->n; v++)
    w = wh_varint_write(w, of[v]);
  /* per vertex, the edges to higher vertices: their count, then each as the gap to the
   * previous upper end with the weight in the low bits */
  const Edge *e = (const Edge *)(const void *)g->edges->data;
  guint i = 0;
  for (uint32_t a = 0; a < g->n; a++) {
    guint j = i;
    while (j < g->edges->len && e[j].a == a)
      j++;
    w = wh_varint_write(w, j - i);
    for (uint32_t prev = a; i < j; prev = e[i++].b) {
      uint32_t wt = MIN(e[i].w - 1, SMALL_WEIGHTS);
      w = wh_varint_write(w, (uint64_t)(e[i].b - prev - 1) << 2 | wt);
      if (wt == SMALL_WEIGHTS)
        w = wh_varint_write(w, e[i].w - 1 - SMALL_WEIGHTS);
    }
  }
  g_byte_array_set_size(out, (guint)(w - out->data));
}

WhFcg *wh_fcg_deserialize(const uint8_t *bytes, size_t len)
{
  gsize at = 0;
  uint32_t n, m, k;
  if (bytes == NULL || !wh_varint_get32(bytes, len, &at, &n) ||
      !wh_varint_get32(bytes, len, &at, &m) || !wh_varint_get32(bytes, len, &at, &k))
    return NULL;
  /* every vertex takes a byte at least, every edge one, every label 8 */
  if (k > n || (k == 0) != (n == 0) || n > len - at || m > len - at ||
      (uint64_t)k * sizeof(uint64_t) > len - at)
    return NULL;
  const uint8_t *labels = bytes + at;
  at += (gsize)k * sizeof(uint64_t);
  g_autoptr(WhFcg) g = wh_fcg_new(n);
  for (uint32_t v = 0; v < n; v++) {
    uint32_t x;
    if (!wh_varint_get32(bytes, len, &at, &x) || x >= k)
      return NULL;
    memcpy(&g->label[v], labels + (gsize)x * sizeof(uint64_t), sizeof(uint64_t));
  }
  uint64_t edges = 0;
  for (uint32_t a = 0; a < n; a++) {
    uint32_t deg;
    if (!wh_varint_get32(bytes, len, &at, &deg) || deg > m - edges)
      return NULL;
    edges += deg;
    uint64_t b = a;
    for (uint32_t i = 0; i < deg; i++) {
      uint64_t x, more = 0;
      if (!wh_varint_get(bytes, len, &at, &x))
        return NULL;
      b += (x >> 2) + 1;
      uint64_t w = (x & 3) + 1;
      if ((x & 3) == SMALL_WEIGHTS &&
          (!wh_varint_get(bytes, len, &at, &more) || more > UINT32_MAX - w))
        return NULL;
      w += more;
      if (b >= n)
        return NULL;
      wh_fcg_add_edge(g, a, (uint32_t)b, (uint32_t)w);
    }
  }
  if (edges != m || at != len)
    return NULL;
  return g_steal_pointer(&g);
}

uint32_t wh_fcg_edge_weight(WhFcg *g, uint32_t a, uint32_t b)
{
  g_return_val_if_fail(g != NULL && a < g->n && b < g->n, 0);
  build(g);
  uint32_t lo = g->off[a], hi = g->off[a + 1];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (g->nbr[mid] < b)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < g->off[a + 1] && g->nbr[lo] == b ? g->wt[lo] : 0;
}

/* ---- colour refinement ---- */

/* Scratch for refining k <= 2 graphs of n vertices in step. */
typedef struct {
  uint32_t n;
  uint64_t *next[2];
  uint64_t *sorted[2];
} Refiner;

static void refiner_init(Refiner *r, uint32_t n, int k)
{
  r->n = n;
  for (int i = 0; i < 2; i++) {
    r->next[i] = i < k ? g_new(uint64_t, n) : NULL;
    r->sorted[i] = i < k ? g_new(uint64_t, n) : NULL;
  }
}

static void refiner_clear(Refiner *r)
{
  for (int i = 0; i < 2; i++) {
    g_free(r->next[i]);
    g_free(r->sorted[i]);
  }
}

static void initial_colours(const WhFcg *g, uint64_t *col)
{
  for (uint32_t v = 0; v < g->n; v++)
    col[v] = splitmix(g->label[v]);
}

/* One round: a vertex's new colour hashes its colour and the multiset of its
 * neighbours' (colour, weight). */
static void refine_round(const WhFcg *g, const uint64_t *col, uint64_t *out)
{
  for (uint32_t v = 0; v < g->n; v++) {
    uint64_t acc = 0;
    for (uint32_t k = g->off[v]; k < g->off[v + 1]; k++)
      acc += splitmix(col[g->nbr[k]] ^ splitmix(WEIGHT_SALT + g->wt[k]));
    out[v] = fold(col[v], acc);
  }
}

/* Sorts the colours of graph i of the refiner and returns how many are distinct. */
static uint32_t sort_count(Refiner *r, int i, const uint64_t *col)
{
  memcpy(r->sorted[i], col, sizeof(uint64_t) * r->n);
  sort_u64(r->sorted[i], r->n);
  uint32_t cells = 0;
  for (uint32_t v = 0; v < r->n; v++)
    cells += v == 0 || r->sorted[i][v] != r->sorted[i][v - 1];
  return cells;
}

/* Sorts and counts the colours of the k graphs; FALSE when their multisets differ. */
static gboolean sort_compare(Refiner *r, int k, uint64_t *const col[], uint32_t *cells)
{
  *cells = sort_count(r, 0, col[0]);
  if (k == 2) {
    sort_count(r, 1, col[1]);
    return memcmp(r->sorted[0], r->sorted[1], sizeof(uint64_t) * r->n) == 0;
  }
  return TRUE;
}

/* Refines the colourings col[0..k-1] of graphs g[0..k-1] in step, in place, until the
 * partition is stable (at most n rounds). FALSE as soon as two graphs' colour multisets
 * differ (they are then not isomorphic under the colourings given). *cells: the number
 * of colour classes at the end. */
static gboolean refine(Refiner *r, WhFcg *const g[], uint64_t *const col[], int k, uint32_t *cells)
{
  *cells = 0;
  if (r->n == 0)
    return TRUE;
  if (!sort_compare(r, k, col, cells))
    return FALSE;
  for (uint32_t round = 0; round < r->n && *cells < r->n; round++) {
    for (int i = 0; i < k; i++)
      refine_round(g[i], col[i], r->next[i]);
    uint32_t now;
    if (!sort_compare(r, k, r->next, &now))
      return FALSE;
    for (int i = 0; i < k; i++)
      memcpy(col[i], r->next[i], sizeof(uint64_t) * r->n);
    if (now == *cells)
      break;
    *cells = now;
  }
  return TRUE;
}

uint64_t wh_fcg_hash(WhFcg *g, uint64_t ns)
{
  g_return_val_if_fail(g != NULL, 0);
  build(g);
  uint32_t n = g->n, m = g->edges->len, cells;
  Refiner r;
  refiner_init(&r, n, 1);
  g_autofree uint64_t *col = g_new(uint64_t, n);
  initial_colours(g, col);
  refine(&r, &g, &col, 1, &cells);
  uint64_t h = fold(fold(splitmix(ns), n), m);
  for (uint32_t v = 0; v < n; v++) /* r.sorted[0]: the final colours, sorted */
    h = fold(h, r.sorted[0][v]);
  /* the edge multiset of (lower colour, upper colour, weight), as the sum of its
   * elements' hashes like the neighbours' in a round: sorting the edges cost more than
   * the refinement on large phases */
  uint64_t edges = 0;
  const Edge *e = (const Edge *)(const void *)g->edges->data;
  for (uint32_t i = 0; i < m; i++) {
    uint64_t ca = col[e[i].a], cb = col[e[i].b];
    edges += fold(fold(splitmix(MIN(ca, cb)), MAX(ca, cb)), e[i].w);
  }
  h = fold(h, edges);
  refiner_clear(&r);
  return h;
}

/* ---- exact isomorphism: individualization-refinement ---- */

typedef struct {
  WhFcg *g[2];
  uint32_t n;
  Refiner r;
  uint64_t *stack; /* per level: graph a's colours, then graph b's */
  uint32_t levels; /* allocated */
  Cell *cells[2];
  uint32_t *map;
  uint64_t *mark; /* per vertex of b: 1 + the weight of its edge to the vertex checked */
  uint64_t nodes, max_nodes;
  gboolean gave_up;
} Search;

static uint64_t *level_colours(Search *s, uint32_t depth, int i)
{
  return s->stack + ((size_t)depth * 2 + (size_t)i) * s->n;
}

static void ensure_level(Search *s, uint32_t depth)
{
  if (depth < s->levels)
    return;
  s->levels = MAX(depth + 1, s->levels * 2);
  s->stack = g_renew(uint64_t, s->stack, (size_t)s->levels * 2 * s->n);
}

/* Fills cells[i] with graph i's (colour, vertex), sorted. */
static void sort_cells(Search *s, int i, const uint64_t *col)
{
  for (uint32_t v = 0; v < s->n; v++)
    s->cells[i][v] = (Cell){col[v], v};
  sort_cell_array(s->cells[i], s->n);
}

/* Whether map (a -> b, a bijection) keeps every label, edge and weight. */
static gboolean verify(Search *s)
{
  WhFcg *a = s->g[0], *b = s->g[1];
  for (uint32_t v = 0; v < s->n; v++) {
    uint32_t mv = s->map[v];
    if (a->label[v] != b->label[mv] || a->off[v + 1] - a->off[v] != b->off[mv + 1] - b->off[mv])
      return FALSE;
    for (uint32_t k = b->off[mv]; k < b->off[mv + 1]; k++)
      s->mark[b->nbr[k]] = (uint64_t)b->wt[k] + 1;
    gboolean ok = TRUE;
    for (uint32_t k = a->off[v]; k < a->off[v + 1] && ok; k++)
      ok = s->mark[s->map[a->nbr[k]]] == (uint64_t)a->wt[k] + 1;
    for (uint32_t k = b->off[mv]; k < b->off[mv + 1]; k++)
      s->mark[b->nbr[k]] = 0;
    if (!ok)
      return FALSE;
  }
  return TRUE;
}

/* Refines level `depth`; at a discrete colouring tries the map it gives, else
 * individualizes a vertex of graph a's smallest non-trivial class against each vertex
 * of graph b of the same colour. */
static gboolean search(Search *s, uint32_t depth)
{
  if (s->max_nodes > 0 && ++s->nodes > s->max_nodes) {
    s->gave_up = TRUE;
    return FALSE;
  }
  uint64_t *col[2] = {level_colours(s, depth, 0), level_colours(s, depth, 1)};
  uint32_t n = s->n, n_cells;
  if (!refine(&s->r, s->g, col, 2, &n_cells))
    return FALSE;
  sort_cells(s, 0, col[0]);
  if (n_cells == n) {
    sort_cells(s, 1, col[1]);
    for (uint32_t i = 0; i < n; i++)
      s->map[s->cells[0][i].v] = s->cells[1][i].v;
    return verify(s);
  }
  uint32_t best = 0, best_len = UINT32_MAX;
  for (uint32_t i = 0, j; i < n; i = j) {
    for (j = i + 1; j < n && s->cells[0][j].colour == s->cells[0][i].colour; j++)
      ;
    if (j - i > 1 && j - i < best_len) {
      best = i;
      best_len = j - i;
    }
  }
  uint32_t v = s->cells[0][best].v;
  uint64_t colour = s->cells[0][best].colour, single = splitmix(colour ^ INDIVIDUAL_SALT);
  ensure_level(s, depth + 1);
  for (uint32_t u = 0; u < n; u++) {
    if (level_colours(s, depth, 1)[u] != colour)
      continue;
    for (int i = 0; i < 2; i++)
      memcpy(level_colours(s, depth + 1, i), level_colours(s, depth, i), sizeof(uint64_t) * n);
    level_colours(s, depth + 1, 0)[v] = single;
    level_colours(s, depth + 1, 1)[u] = single;
    if (search(s, depth + 1))
      return TRUE;
    if (s->gave_up)
      return FALSE;
  }
  return FALSE;
}

WhFcgIso wh_fcg_isomorphic_bounded(WhFcg *a, WhFcg *b, uint32_t *map_out, uint32_t max_vertices,
                                   uint64_t max_nodes)
{
  g_return_val_if_fail(a != NULL && b != NULL, WH_FCG_ISO_NO);
  build(a);
  build(b);
  if (a->n != b->n || a->edges->len != b->edges->len)
    return WH_FCG_ISO_NO;
  if (a->n > max_vertices)
    return WH_FCG_ISO_TOO_LARGE;
  uint32_t n = a->n;
  /* the same graph in the same vertex order (a recurring phase whose flows were listed
   * alike): the identity, checked in O(n + m) with no search */
  if ((n == 0 || memcmp(a->label, b->label, sizeof(uint64_t) * n) == 0) &&
      (a->edges->len == 0 ||
       memcmp(a->edges->data, b->edges->data, sizeof(Edge) * a->edges->len) == 0)) {
    for (uint32_t v = 0; map_out != NULL && v < n; v++)
      map_out[v] = v;
    return WH_FCG_ISO_YES;
  }
  Search s = {.g = {a, b}, .n = n, .max_nodes = max_nodes, .levels = 4};
  refiner_init(&s.r, n, 2);
  s.stack = g_new(uint64_t, (size_t)s.levels * 2 * n);
  s.cells[0] = g_new(Cell, n);
  s.cells[1] = g_new(Cell, n);
  s.map = g_new(uint32_t, n);
  s.mark = g_new0(uint64_t, n);
  initial_colours(a, level_colours(&s, 0, 0));
  initial_colours(b, level_colours(&s, 0, 1));
  gboolean found = search(&s, 0);
  if (found && map_out != NULL && n > 0)
    memcpy(map_out, s.map, sizeof(uint32_t) * n);
  refiner_clear(&s.r);
  g_free(s.stack);
  g_free(s.cells[0]);
  g_free(s.cells[1]);
  g_free(s.map);
  g_free(s.mark);
  return found ? WH_FCG_ISO_YES : s.gave_up ? WH_FCG_ISO_TOO_LARGE : WH_FCG_ISO_NO;
}

WhFcgIso wh_fcg_isomorphic(WhFcg *a, WhFcg *b, uint32_t *map_out, uint32_t max_vertices)
{
  return wh_fcg_isomorphic_bounded(a, b, map_out, max_vertices, WH_FCG_ISO_MAX_NODES);
}

uint32_t wh_fcg_quantize_rate(double rate_bps, double tolerance)
{
  g_return_val_if_fail(tolerance > 0 && isfinite(tolerance), 0);
  g_return_val_if_fail(!isnan(rate_bps), 0);
  if (rate_bps < 1)
    return 0;
  double b = floor(log(rate_bps) / log1p(tolerance));
  return b >= (double)UINT32_MAX - 1 ? UINT32_MAX : (uint32_t)b + 1;
}
