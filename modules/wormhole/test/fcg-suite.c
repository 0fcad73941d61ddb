/* Flow conflict graph tests (the hash corpus): relabelled copies of random labelled,
 * weighted graphs collide and the exact check returns a map that is checked edge by
 * edge; pairs that colour refinement cannot tell apart (two triangles and a 6-cycle,
 * the 4x4 rook's graph and the Shrikhande graph, random 3-regular graphs proven
 * non-isomorphic by an independent invariant) collide and the exact check says no; a
 * label, a weight or the namespace changes the hash; shared ports counted from paths;
 * the vertex limit and node budget; the byte form; the rate quantizer's buckets. All
 * seeded. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "fcg.h"

/* A graph as the test keeps it: labels and an edge list, independent of WhFcg. */
typedef struct {
  uint32_t n, m;
  uint64_t label[400];
  uint32_t ea[2000], eb[2000], ew[2000];
} TGraph;

static void tg_edge(TGraph *t, uint32_t a, uint32_t b, uint32_t w)
{
  g_assert(t->m < G_N_ELEMENTS(t->ea));
  t->ea[t->m] = a;
  t->eb[t->m] = b;
  t->ew[t->m++] = w;
}

static WhFcg *tg_build(const TGraph *t)
{
  WhFcg *g = wh_fcg_new(t->n);
  for (uint32_t v = 0; v < t->n; v++)
    wh_fcg_set_label(g, v, t->label[v]);
  for (uint32_t i = 0; i < t->m; i++)
    wh_fcg_add_edge(g, t->ea[i], t->eb[i], t->ew[i]);
  return g;
}

static void shuffle(GRand *rng, uint32_t *x, uint32_t n)
{
  for (uint32_t i = 0; i < n; i++)
    x[i] = i;
  for (uint32_t i = n; i > 1; i--) {
    uint32_t j = (uint32_t)g_rand_int_range(rng, 0, (gint32)i), tmp = x[i - 1];
    x[i - 1] = x[j];
    x[j] = tmp;
  }
}

/* out: t with vertex v renamed perm[v], its edges listed in a random order and with
 * their ends swapped at random. */
static void tg_relabel(const TGraph *t, GRand *rng, TGraph *out)
{
  uint32_t perm[400], order[2000];
  shuffle(rng, perm, t->n);
  shuffle(rng, order, t->m);
  out->n = t->n;
  out->m = 0;
  for (uint32_t v = 0; v < t->n; v++)
    out->label[perm[v]] = t->label[v];
  for (uint32_t i = 0; i < t->m; i++) {
    uint32_t k = order[i], a = perm[t->ea[k]], b = perm[t->eb[k]];
    if (g_rand_boolean(rng))
      tg_edge(out, a, b, t->ew[k]);
    else
      tg_edge(out, b, a, t->ew[k]);
  }
}

static void tg_random(GRand *rng, TGraph *t, uint32_t n, double p, uint32_t n_labels,
                      uint32_t max_w)
{
  t->n = n;
  t->m = 0;
  for (uint32_t v = 0; v < n; v++)
    t->label[v] = 1000 + (uint64_t)g_rand_int_range(rng, 0, (gint32)n_labels);
  for (uint32_t a = 0; a < n; a++)
    for (uint32_t b = a + 1; b < n; b++)
      if (g_rand_double(rng) < p)
        tg_edge(t, a, b, (uint32_t)g_rand_int_range(rng, 1, (gint32)max_w + 1));
}

/* A random d-regular simple graph (pairing model, retried until simple). */
static void tg_regular(GRand *rng, TGraph *t, uint32_t n, uint32_t d)
{
  uint32_t points[400];
  g_assert(n * d <= G_N_ELEMENTS(points) && (n * d) % 2 == 0);
  for (;;) {
    shuffle(rng, points, n * d);
    gboolean adj[40][40] = {{FALSE}}, simple = TRUE;
    t->n = n;
    t->m = 0;
    for (uint32_t i = 0; i < n * d && simple; i += 2) {
      uint32_t a = points[i] / d, b = points[i + 1] / d;
      simple = a != b && !adj[a][b];
      adj[a][b] = adj[b][a] = TRUE;
      tg_edge(t, a, b, 1);
    }
    if (simple)
      break;
  }
  memset(t->label, 0, sizeof(t->label));
}

/* The map is a bijection that keeps labels and every edge with its weight. */
static void check_map(const TGraph *a, WhFcg *b, const uint32_t *map)
{
  gboolean seen[400] = {FALSE};
  ck_assert_uint_eq(wh_fcg_n_vertices(b), a->n);
  for (uint32_t v = 0; v < a->n; v++) {
    ck_assert_uint_lt(map[v], a->n);
    ck_assert(!seen[map[v]]);
    seen[map[v]] = TRUE;
    ck_assert_uint_eq(wh_fcg_label(b, map[v]), a->label[v]);
  }
  for (uint32_t i = 0; i < a->m; i++)
    ck_assert_uint_eq(wh_fcg_edge_weight(b, map[a->ea[i]], map[a->eb[i]]), a->ew[i]);
  ck_assert_uint_eq(wh_fcg_n_edges(b), a->m);
}

/* t and a relabelled copy: equal hashes, and an exact map that checks out. */
static void check_self_isomorphic(const TGraph *t, GRand *rng)
{
  static TGraph r;
  tg_relabel(t, rng, &r);
  g_autoptr(WhFcg) a = tg_build(t);
  g_autoptr(WhFcg) b = tg_build(&r);
  ck_assert_uint_eq(wh_fcg_hash(a, 7), wh_fcg_hash(b, 7));
  uint32_t map[400];
  ck_assert_int_eq(wh_fcg_isomorphic(a, b, map, WH_FCG_ISO_MAX_VERTICES), WH_FCG_ISO_YES);
  check_map(t, b, map);
  /* against a copy in the same vertex order: the identity, found without a search */
  g_autoptr(WhFcg) c = tg_build(t);
  ck_assert_int_eq(wh_fcg_isomorphic(a, c, map, WH_FCG_ISO_MAX_VERTICES), WH_FCG_ISO_YES);
  check_map(t, c, map);
  for (uint32_t v = 0; v < t->n; v++)
    ck_assert_uint_eq(map[v], v);
}

/* Two graphs colour refinement cannot tell apart: equal hashes, exact check no. */
static void check_collision_told_apart(const TGraph *x, const TGraph *y)
{
  g_autoptr(WhFcg) a = tg_build(x);
  g_autoptr(WhFcg) b = tg_build(y);
  ck_assert_uint_eq(wh_fcg_hash(a, 7), wh_fcg_hash(b, 7));
  ck_assert_int_eq(wh_fcg_isomorphic(a, b, NULL, WH_FCG_ISO_MAX_VERTICES), WH_FCG_ISO_NO);
  ck_assert_int_eq(wh_fcg_isomorphic(b, a, NULL, WH_FCG_ISO_MAX_VERTICES), WH_FCG_ISO_NO);
}

/* ---- relabelled graphs ---- */

START_TEST(test_relabelled_random)
{
  g_autoptr(GRand) rng = g_rand_new_with_seed(1400 + (guint32)_i);
  static TGraph t;
  /* sparse and dense, few and many labels and weights */
  const double p[] = {0.05, 0.15, 0.4};
  for (uint32_t k = 0; k < 3; k++) {
    tg_random(rng, &t, (uint32_t)g_rand_int_range(rng, 10, 60), p[k], 1 + k, 1 + 2 * k);
    check_self_isomorphic(&t, rng);
  }
}
END_TEST

START_TEST(test_relabelled_symmetric)
{
  /* graphs refinement leaves in one class: the search must individualize */
  g_autoptr(GRand) rng = g_rand_new_with_seed(14);
  static TGraph t;
  tg_regular(rng, &t, 20, 3);
  check_self_isomorphic(&t, rng);
  /* ten disjoint triangles, then a complete graph */
  t.n = 30;
  t.m = 0;
  memset(t.label, 0, sizeof(t.label));
  for (uint32_t c = 0; c < 10; c++)
    for (uint32_t i = 0; i < 3; i++)
      tg_edge(&t, 3 * c + i, 3 * c + (i + 1) % 3, 2);
  check_self_isomorphic(&t, rng);
  t.n = 12;
  t.m = 0;
  for (uint32_t a = 0; a < t.n; a++)
    for (uint32_t b = a + 1; b < t.n; b++)
      tg_edge(&t, a, b, 1);
  check_self_isomorphic(&t, rng);
}
END_TEST

/* ---- non-isomorphic pairs that collide ---- */

START_TEST(test_triangles_vs_hexagon)
{
  static TGraph x, y;
  x.n = y.n = 6;
  for (uint32_t i = 0; i < 3; i++) {
    tg_edge(&x, i, (i + 1) % 3, 1);
    tg_edge(&x, 3 + i, 3 + (i + 1) % 3, 1);
  }
  for (uint32_t i = 0; i < 6; i++)
    tg_edge(&y, i, (i + 1) % 6, 1);
  check_collision_told_apart(&x, &y);
}
END_TEST

/* The 4x4 rook's graph (same row or column) and the Shrikhande graph (Z4 x Z4, steps
 * +-(0,1), +-(1,0), +-(1,1)): both strongly regular (16,6,2,2). */
static void rook_and_shrikhande(TGraph *rook, TGraph *shri)
{
  memset(rook, 0, sizeof(*rook));
  memset(shri, 0, sizeof(*shri));
  rook->n = shri->n = 16;
  for (uint32_t u = 0; u < 16; u++)
    for (uint32_t v = u + 1; v < 16; v++) {
      uint32_t dr = (v / 4 - u / 4 + 4) % 4, dc = (v % 4 - u % 4 + 4) % 4;
      if (u / 4 == v / 4 || u % 4 == v % 4)
        tg_edge(rook, u, v, 1);
      gboolean step = (dr == 0 && (dc == 1 || dc == 3)) || (dc == 0 && (dr == 1 || dr == 3)) ||
                      (dr == dc && (dr == 1 || dr == 3));
      if (step)
        tg_edge(shri, u, v, 1);
    }
}

/* Cliques of 4 vertices, by brute force (an invariant independent of the module). */
static uint32_t count_k4(const TGraph *t)
{
  gboolean adj[16][16] = {{FALSE}};
  for (uint32_t i = 0; i < t->m; i++)
    adj[t->ea[i]][t->eb[i]] = adj[t->eb[i]][t->ea[i]] = TRUE;
  uint32_t k4 = 0;
  for (uint32_t a = 0; a < t->n; a++)
    for (uint32_t b = a + 1; b < t->n; b++)
      for (uint32_t c = b + 1; c < t->n; c++)
        for (uint32_t d = c + 1; d < t->n; d++)
          k4 += adj[a][b] && adj[a][c] && adj[a][d] && adj[b][c] && adj[b][d] && adj[c][d];
  return k4;
}

START_TEST(test_rook_vs_shrikhande)
{
  static TGraph rook, shri;
  rook_and_shrikhande(&rook, &shri);
  ck_assert_uint_eq(rook.m, 48);
  ck_assert_uint_eq(shri.m, 48);
  ck_assert_uint_eq(count_k4(&rook), 8); /* rows and columns */
  ck_assert_uint_eq(count_k4(&shri), 0);
  check_collision_told_apart(&rook, &shri);
  g_autoptr(GRand) rng = g_rand_new_with_seed(16);
  check_self_isomorphic(&rook, rng);
  check_self_isomorphic(&shri, rng);
}
END_TEST

/* Sorted per-vertex distance profiles (vertices at distance 1, 2, ..., 5 bits each): an
 * isomorphism invariant computed by breadth-first search, independent of the module. */
static void distance_profile(const TGraph *t, uint64_t *out)
{
  gboolean adj[40][40] = {{FALSE}};
  for (uint32_t i = 0; i < t->m; i++)
    adj[t->ea[i]][t->eb[i]] = adj[t->eb[i]][t->ea[i]] = TRUE;
  for (uint32_t s = 0; s < t->n; s++) {
    uint32_t dist[40], queue[40], head = 0, tail = 0;
    for (uint32_t v = 0; v < t->n; v++)
      dist[v] = UINT32_MAX;
    dist[s] = 0;
    queue[tail++] = s;
    out[s] = 0;
    while (head < tail) {
      uint32_t u = queue[head++];
      for (uint32_t v = 0; v < t->n; v++)
        if (adj[u][v] && dist[v] == UINT32_MAX) {
          dist[v] = dist[u] + 1;
          queue[tail++] = v;
          out[s] += (uint64_t)1 << (5 * (dist[v] - 1));
        }
    }
  }
  for (uint32_t i = 1; i < t->n; i++) /* insertion sort */
    for (uint32_t j = i; j > 0 && out[j - 1] > out[j]; j--) {
      uint64_t tmp = out[j];
      out[j] = out[j - 1];
      out[j - 1] = tmp;
    }
}

START_TEST(test_random_regular_pairs)
{
  /* pairs of 3-regular graphs on 20 vertices whose distance profiles differ (so they
   * are certainly not isomorphic) */
  g_autoptr(GRand) rng = g_rand_new_with_seed(20);
  static TGraph x, y;
  uint32_t pairs = 0;
  for (uint32_t tries = 0; tries < 40 && pairs < 6; tries++) {
    tg_regular(rng, &x, 20, 3);
    tg_regular(rng, &y, 20, 3);
    uint64_t px[20], py[20];
    distance_profile(&x, px);
    distance_profile(&y, py);
    if (memcmp(px, py, sizeof(px)) == 0)
      continue;
    pairs++;
    check_collision_told_apart(&x, &y);
    check_self_isomorphic(&x, rng);
    check_self_isomorphic(&y, rng);
  }
  ck_assert_uint_eq(pairs, 6);
}
END_TEST

/* ---- what changes the hash ---- */

START_TEST(test_label_weight_namespace)
{
  g_autoptr(GRand) rng = g_rand_new_with_seed(77);
  static TGraph t, r;
  tg_random(rng, &t, 30, 0.2, 2, 3);
  g_autoptr(WhFcg) a = tg_build(&t);
  uint64_t h = wh_fcg_hash(a, 7);
  ck_assert_uint_ne(h, wh_fcg_hash(a, 8));
  ck_assert_uint_eq(h, wh_fcg_hash(a, 7)); /* stable across calls */
  /* one label changed, in a relabelled copy */
  tg_relabel(&t, rng, &r);
  r.label[5] ^= 1u << 20;
  g_autoptr(WhFcg) b = tg_build(&r);
  ck_assert_uint_ne(h, wh_fcg_hash(b, 7));
  ck_assert_int_eq(wh_fcg_isomorphic(a, b, NULL, WH_FCG_ISO_MAX_VERTICES), WH_FCG_ISO_NO);
  /* one edge weight changed */
  tg_relabel(&t, rng, &r);
  r.ew[r.m / 2]++;
  g_autoptr(WhFcg) c = tg_build(&r);
  ck_assert_uint_ne(h, wh_fcg_hash(c, 7));
  ck_assert_int_eq(wh_fcg_isomorphic(a, c, NULL, WH_FCG_ISO_MAX_VERTICES), WH_FCG_ISO_NO);
  /* a repeated pair adds to the weight */
  g_autoptr(WhFcg) d = tg_build(&t);
  wh_fcg_add_edge(d, t.eb[0], t.ea[0], 1);
  ck_assert_uint_eq(wh_fcg_edge_weight(d, t.ea[0], t.eb[0]), t.ew[0] + 1);
  ck_assert_uint_eq(wh_fcg_n_edges(d), t.m);
  ck_assert_uint_ne(h, wh_fcg_hash(d, 7));
}
END_TEST

START_TEST(test_weights_refine)
{
  /* two 6-cycles with three edges of weight 1 and three of weight 2: alternating, and
   * in runs. Same labels and weight multiset; only refinement that reads weights sees
   * that every vertex of the first has one edge of each weight. */
  static TGraph x, y;
  const uint32_t wx[] = {1, 2, 1, 2, 1, 2}, wy[] = {1, 1, 2, 2, 1, 2};
  x.n = y.n = 6;
  for (uint32_t i = 0; i < 6; i++) {
    tg_edge(&x, i, (i + 1) % 6, wx[i]);
    tg_edge(&y, i, (i + 1) % 6, wy[i]);
  }
  g_autoptr(WhFcg) a = tg_build(&x);
  g_autoptr(WhFcg) b = tg_build(&y);
  ck_assert_uint_ne(wh_fcg_hash(a, 7), wh_fcg_hash(b, 7));
  ck_assert_int_eq(wh_fcg_isomorphic(a, b, NULL, WH_FCG_ISO_MAX_VERTICES), WH_FCG_ISO_NO);
}
END_TEST

/* ---- from paths ---- */

START_TEST(test_from_paths_dumbbell)
{
  /* hosts 0-2 left, 3-5 right; ports: uplinks 0-2, the bottleneck 10 (and 0xfffffff0
   * back), downlinks 20+j. f0: h0->h3, f1: h1->h4, f2: h2->h3 (its path lists the
   * bottleneck twice), f3: h5->h1 (the other direction). */
  const uint32_t p0[] = {0, 10, 23}, p1[] = {1, 10, 24}, p2[] = {2, 10, 10, 23},
                 p3[] = {25, 0xfffffff0u, 21};
  const uint32_t *ports[] = {p0, p1, p2, p3};
  const uint32_t n_ports[] = {3, 3, 4, 3};
  const uint64_t labels[] = {11, 12, 13, 14};
  g_autoptr(WhFcg) g = wh_fcg_from_paths(4, ports, n_ports, labels);
  ck_assert_uint_eq(wh_fcg_n_vertices(g), 4);
  ck_assert_uint_eq(wh_fcg_n_edges(g), 3);
  ck_assert_uint_eq(wh_fcg_edge_weight(g, 0, 1), 1);
  ck_assert_uint_eq(wh_fcg_edge_weight(g, 1, 0), 1);
  ck_assert_uint_eq(wh_fcg_edge_weight(g, 0, 2), 2); /* bottleneck and downlink 23 */
  ck_assert_uint_eq(wh_fcg_edge_weight(g, 1, 2), 1);
  for (uint32_t v = 0; v < 3; v++)
    ck_assert_uint_eq(wh_fcg_edge_weight(g, v, 3), 0);
  ck_assert_uint_eq(wh_fcg_label(g, 3), 14);
  /* the hash is part of the memo database's format: a change must be deliberate */
  ck_assert_uint_eq(wh_fcg_hash(g, 0), 0xdb1db5ebdf856121ull);
}
END_TEST

START_TEST(test_from_paths_random)
{
  /* against a pairwise count: 50 flows, paths of 1-8 ports out of 40 */
  g_autoptr(GRand) rng = g_rand_new_with_seed(50);
  uint32_t store[50][8], n_ports[50];
  const uint32_t *ports[50];
  for (uint32_t f = 0; f < 50; f++) {
    n_ports[f] = (uint32_t)g_rand_int_range(rng, 1, 9);
    for (uint32_t i = 0; i < n_ports[f]; i++)
      store[f][i] = 1000u * (uint32_t)g_rand_int_range(rng, 0, 40);
    ports[f] = store[f];
  }
  g_autoptr(WhFcg) g = wh_fcg_from_paths(50, ports, n_ports, NULL);
  uint32_t edges = 0;
  for (uint32_t a = 0; a < 50; a++)
    for (uint32_t b = 0; b < 50; b++) {
      uint32_t shared = 0;
      for (uint32_t i = 0; i < n_ports[a]; i++) {
        gboolean first = TRUE, in_b = FALSE;
        for (uint32_t k = 0; k < i; k++)
          first = first && store[a][k] != store[a][i];
        for (uint32_t k = 0; k < n_ports[b]; k++)
          in_b = in_b || store[b][k] == store[a][i];
        shared += first && in_b;
      }
      ck_assert_uint_eq(wh_fcg_edge_weight(g, a, b), a == b ? 0 : shared);
      edges += a < b && shared > 0;
    }
  ck_assert_uint_eq(wh_fcg_n_edges(g), edges);
  ck_assert_uint_eq(wh_fcg_label(g, 7), 0);
}
END_TEST

/* ---- limits ---- */

START_TEST(test_limits)
{
  g_autoptr(GRand) rng = g_rand_new_with_seed(300);
  static TGraph t, r;
  t.n = 300;
  for (uint32_t v = 0; v + 1 < t.n; v++)
    tg_edge(&t, v, v + 1, 1 + v % 2);
  tg_relabel(&t, rng, &r);
  g_autoptr(WhFcg) a = tg_build(&t);
  g_autoptr(WhFcg) b = tg_build(&r);
  ck_assert_int_eq(wh_fcg_isomorphic(a, b, NULL, WH_FCG_ISO_MAX_VERTICES), WH_FCG_ISO_TOO_LARGE);
  uint32_t map[400];
  ck_assert_int_eq(wh_fcg_isomorphic(a, b, map, 300), WH_FCG_ISO_YES);
  check_map(&t, b, map);
  /* different sizes are told apart whatever the limit */
  g_autoptr(WhFcg) c = wh_fcg_new(299);
  ck_assert_int_eq(wh_fcg_isomorphic(a, c, NULL, 10), WH_FCG_ISO_NO);
  /* the node budget: rook vs Shrikhande needs more than one node */
  static TGraph rook, shri;
  rook_and_shrikhande(&rook, &shri);
  g_autoptr(WhFcg) x = tg_build(&rook);
  g_autoptr(WhFcg) y = tg_build(&shri);
  ck_assert_int_eq(wh_fcg_isomorphic_bounded(x, y, NULL, 16, 1), WH_FCG_ISO_TOO_LARGE);
  ck_assert_int_eq(wh_fcg_isomorphic_bounded(x, y, NULL, 16, 0), WH_FCG_ISO_NO);
  /* empty graphs */
  g_autoptr(WhFcg) e0 = wh_fcg_new(0);
  g_autoptr(WhFcg) e1 = wh_fcg_new(0);
  ck_assert_int_eq(wh_fcg_isomorphic(e0, e1, NULL, 0), WH_FCG_ISO_YES);
  ck_assert_uint_eq(wh_fcg_hash(e0, 3), wh_fcg_hash(e1, 3));
}
END_TEST

/* ---- rate quantization ---- */

/* The byte form: a graph comes back with its labels and weights (large ones included),
 * the bytes of a relabelled copy built in another edge order equal the original's only
 * if the graph is the same, every truncation and every byte left over is refused, and
 * the bytes are about one per vertex and edge. */
START_TEST(test_serialize)
{
  g_autoptr(GRand) rng = g_rand_new_with_seed(500);
  static TGraph t, r;
  tg_random(rng, &t, 60, 0.3, 5, 9);
  tg_edge(&t, 0, 59, UINT32_MAX - 7);
  g_autoptr(WhFcg) a = tg_build(&t);
  g_autoptr(GByteArray) bytes = g_byte_array_new();
  wh_fcg_serialize(a, bytes);
  ck_assert_uint_lt(bytes->len, 5 * 8 + 2 * (t.n + t.m) + 16);
  g_autoptr(WhFcg) b = wh_fcg_deserialize(bytes->data, bytes->len);
  ck_assert_ptr_nonnull(b);
  ck_assert_uint_eq(wh_fcg_n_vertices(b), t.n);
  ck_assert_uint_eq(wh_fcg_n_edges(b), wh_fcg_n_edges(a));
  for (uint32_t v = 0; v < t.n; v++)
    ck_assert_uint_eq(wh_fcg_label(b, v), t.label[v]);
  for (uint32_t i = 0; i < t.m; i++)
    ck_assert_uint_eq(wh_fcg_edge_weight(b, t.ea[i], t.eb[i]),
                      wh_fcg_edge_weight(a, t.ea[i], t.eb[i]));
  ck_assert_uint_eq(wh_fcg_edge_weight(b, 59, 0), wh_fcg_edge_weight(a, 0, 59));
  ck_assert_uint_ge(wh_fcg_edge_weight(b, 59, 0), UINT32_MAX - 7);
  /* the same graph from its edges in another order: the same bytes */
  static TGraph same;
  same = t;
  for (uint32_t i = 0; i < t.m; i++) {
    uint32_t k = t.m - 1 - i;
    same.ea[i] = t.eb[k];
    same.eb[i] = t.ea[k];
    same.ew[i] = t.ew[k];
  }
  g_autoptr(WhFcg) c = tg_build(&same);
  g_autoptr(GByteArray) again = g_byte_array_new();
  wh_fcg_serialize(c, again);
  ck_assert(again->len == bytes->len && memcmp(again->data, bytes->data, bytes->len) == 0);
  /* a relabelled copy is another vertex order: other bytes (60 vertices, 5 labels) */
  tg_relabel(&t, rng, &r);
  g_autoptr(WhFcg) d = tg_build(&r);
  g_byte_array_set_size(again, 0);
  wh_fcg_serialize(d, again);
  ck_assert(again->len != bytes->len || memcmp(again->data, bytes->data, bytes->len) != 0);
  for (guint len = 0; len < bytes->len; len++)
    ck_assert_ptr_null(wh_fcg_deserialize(bytes->data, len));
  g_byte_array_append(bytes, (const guint8 *)"", 1);
  ck_assert_ptr_null(wh_fcg_deserialize(bytes->data, bytes->len));
  /* damaged bytes: refused or a graph, never a crash */
  g_byte_array_set_size(bytes, bytes->len - 1);
  for (guint i = 0; i < bytes->len; i++) {
    for (guint bit = 0; bit < 8; bit++) {
      bytes->data[i] ^= (uint8_t)(1u << bit);
      wh_fcg_free(wh_fcg_deserialize(bytes->data, bytes->len));
      bytes->data[i] ^= (uint8_t)(1u << bit);
    }
  }
  /* the empty graph */
  g_autoptr(WhFcg) e = wh_fcg_new(0);
  g_byte_array_set_size(bytes, 0);
  wh_fcg_serialize(e, bytes);
  g_autoptr(WhFcg) e2 = wh_fcg_deserialize(bytes->data, bytes->len);
  ck_assert_ptr_nonnull(e2);
  ck_assert_uint_eq(wh_fcg_n_vertices(e2), 0);
}
END_TEST

START_TEST(test_quantize)
{
  const double tols[] = {0.01, 0.05, 0.25};
  for (uint32_t k = 0; k < G_N_ELEMENTS(tols); k++) {
    double t = tols[k];
    uint32_t prev = 0;
    for (double r = 0.5; r < 1e12; r *= 1.0007) {
      uint32_t b = wh_fcg_quantize_rate(r, t);
      ck_assert_uint_ge(b, prev); /* monotonic */
      prev = b;
      if (r < 1) {
        ck_assert_uint_eq(b, 0);
        continue;
      }
      /* bucket b holds [(1+t)^(b-1), (1+t)^b) */
      ck_assert(pow(1 + t, b - 1.0) <= r * (1 + 1e-12));
      ck_assert(r < pow(1 + t, b) * (1 + 1e-12));
      /* a factor 1 + t higher is the next bucket or later */
      ck_assert_uint_gt(wh_fcg_quantize_rate(r * (1 + t) * (1 + 1e-9), t), b);
    }
    /* just either side of a bucket edge: adjacent buckets */
    double edge = pow(1 + t, 200);
    ck_assert_uint_eq(wh_fcg_quantize_rate(edge * (1 - 1e-9), t), 200);
    ck_assert_uint_eq(wh_fcg_quantize_rate(edge * (1 + 1e-9), t), 201);
  }
  ck_assert_uint_eq(wh_fcg_quantize_rate(0, 0.05), 0);
  ck_assert_uint_eq(wh_fcg_quantize_rate(1, 0.05), 1);
  ck_assert_uint_eq(wh_fcg_quantize_rate(1e300, 1e-12), UINT32_MAX);
}
END_TEST

Suite *wh_fcg_suite(void)
{
  Suite *s = suite_create("fcg");
  TCase *tc = tcase_create("isomorphic");
  tcase_add_loop_test(tc, test_relabelled_random, 0, 8);
  tcase_add_test(tc, test_relabelled_symmetric);
  suite_add_tcase(s, tc);
  tc = tcase_create("collisions");
  tcase_add_test(tc, test_triangles_vs_hexagon);
  tcase_add_test(tc, test_rook_vs_shrikhande);
  tcase_add_test(tc, test_random_regular_pairs);
  tcase_add_test(tc, test_label_weight_namespace);
  tcase_add_test(tc, test_weights_refine);
  suite_add_tcase(s, tc);
  tc = tcase_create("paths");
  tcase_add_test(tc, test_from_paths_dumbbell);
  tcase_add_test(tc, test_from_paths_random);
  suite_add_tcase(s, tc);
  tc = tcase_create("limits");
  tcase_add_test(tc, test_limits);
  tcase_add_test(tc, test_serialize);
  tcase_add_test(tc, test_quantize);
  tcase_set_timeout(tc, 30); /* 0.2 s of CPU; the default 4 s was missed on a loaded machine */
  suite_add_tcase(s, tc);
  return s;
}
