/* Flow conflict graphs (the Wormhole paper's memoization key): one vertex per flow,
 * carrying a 64-bit label (the caller folds in what must match: line rate, hop count,
 * quantized sending rate), and an undirected edge between two flows that share links,
 * weighted by the number of links they share. Two partitions whose graphs are
 * isomorphic (labels and weights kept) are the same contention pattern up to the names
 * of their flows.
 *
 * Three operations on it: a canonical 64-bit hash, invariant under relabelling of the
 * vertices (colour refinement, i.e. 1-dimensional Weisfeiler-Leman, from the labels with
 * edge weights in the neighbour multisets); an exact isomorphism check that confirms a
 * hash match and returns the vertex map (individualization-refinement with
 * backtracking); and a logarithmic rate quantizer for the labels. Engine-neutral: flow
 * indices, port ids and labels in; hashes and maps out. Deterministic across runs and
 * platforms (fixed mixing, no pointer values, no hash-table iteration order).
 *
 * Costs: a graph holds 8 B per vertex and 12 B per edge (serialized: about 1 B each),
 * plus, once queried, an adjacency of 4 B per vertex and 16 B per edge. The hash costs O(r (m + n
 * log n)) for n vertices, m edges and r refinement rounds (r <= n, a few in practice).
 * The exact check costs a refinement of both graphs per search node; it is exponential
 * in the worst case, so it is bounded by a vertex count and a node budget. */
#ifndef WH_FCG_H
#define WH_FCG_H

#include <glib.h>
#include <stdint.h>

/* The exact check's default vertex limit. Its search keeps one colouring per level
 * (16 B per vertex per level, at most n levels: 1 MB at 256 vertices) and pays a
 * refinement per node; the limit bounds that memory and a lookup's time. A caller
 * treats WH_FCG_ISO_TOO_LARGE as a miss. */
#define WH_FCG_ISO_MAX_VERTICES 256u
/* The exact check's default budget of search nodes (refinements) before it gives up. */
#define WH_FCG_ISO_MAX_NODES 4096u

typedef enum {
  WH_FCG_ISO_NO,        /* not isomorphic */
  WH_FCG_ISO_YES,       /* isomorphic; the map was written */
  WH_FCG_ISO_TOO_LARGE, /* not decided: over the vertex limit or the node budget */
} WhFcgIso;

typedef struct WhFcg WhFcg;

/* (transfer full) A graph of `n` vertices 0..n-1, labels 0, no edges. */
WhFcg *wh_fcg_new(uint32_t n);
void wh_fcg_free(WhFcg *g);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhFcg, wh_fcg_free)

void wh_fcg_set_label(WhFcg *g, uint32_t v, uint64_t label);
/* An edge a-b (a != b) of weight w > 0. Adding the same pair again adds to its weight
 * (saturating at UINT32_MAX). */
void wh_fcg_add_edge(WhFcg *g, uint32_t a, uint32_t b, uint32_t w);

/* (transfer full) The conflict graph of `n` flows: flow f uses the ports
 * ports[f][0..n_ports[f]-1] (transfer none; a port listed twice counts once) and has the
 * label labels[f] (labels nullable: all 0). Flows sharing k distinct ports get an edge
 * of weight k. Costs O(L + S) for L port uses in all and S (flow, flow, port) sharings,
 * through a port -> flows index. */
WhFcg *wh_fcg_from_paths(uint32_t n, const uint32_t *const *ports, const uint32_t *n_ports,
                         const uint64_t *labels);

uint32_t wh_fcg_n_vertices(const WhFcg *g);
uint64_t wh_fcg_label(const WhFcg *g, uint32_t v);
/* The query functions below take a non-const graph: the first builds its adjacency
 * (merging repeated pairs), which later calls reuse until an edge is added. */
uint32_t wh_fcg_n_edges(WhFcg *g);
/* Appends the graph as bytes: vertex, edge and distinct-label counts (varint.h), the
 * distinct labels (8 B each, in the order of their first vertex), each vertex's label
 * as an index into them, then per vertex its edges to higher vertices (their count,
 * then each as one varint of the gap to the previous upper end and the weight, a
 * second for weights above 4). About 1 B per vertex and per edge plus 8 B per distinct
 * label. Equal graphs give equal bytes. Host byte order, for a memo database. */
void wh_fcg_serialize(WhFcg *g, GByteArray *out);
/* (transfer full) (nullable) The graph of wh_fcg_serialize's bytes; NULL if they are
 * not such bytes (bad lengths, an edge out of range or of weight 0). */
WhFcg *wh_fcg_deserialize(const uint8_t *bytes, size_t len);
/* The weight of edge a-b, 0 when there is none. O(log degree). */
uint32_t wh_fcg_edge_weight(WhFcg *g, uint32_t a, uint32_t b);

/* The canonical hash of `g` in namespace `ns` (the caller's network configuration:
 * congestion control, link speeds, buffers). Isomorphic graphs have equal hashes in
 * one namespace. Colour refinement cannot tell some non-isomorphic graphs apart
 * (regular graphs of one degree, strongly regular graphs of equal parameters): equal
 * hashes must be confirmed with wh_fcg_isomorphic. */
uint64_t wh_fcg_hash(WhFcg *g, uint64_t ns);

/* Whether `a` and `b` are isomorphic, labels and edge weights respected. On
 * WH_FCG_ISO_YES, map_out (nullable, n entries) gets map_out[va] = vb. Graphs of
 * different vertex or edge counts are WH_FCG_ISO_NO at once; otherwise more than
 * `max_vertices` vertices give WH_FCG_ISO_TOO_LARGE without a search, as does a search
 * that exceeds WH_FCG_ISO_MAX_NODES nodes. */
WhFcgIso wh_fcg_isomorphic(WhFcg *a, WhFcg *b, uint32_t *map_out, uint32_t max_vertices);
/* The same with the node budget given (0: none). */
WhFcgIso wh_fcg_isomorphic_bounded(WhFcg *a, WhFcg *b, uint32_t *map_out, uint32_t max_vertices,
                                   uint64_t max_nodes);

/* The bucket of `rate_bps` on a logarithmic scale of ratio 1 + tolerance (tolerance > 0):
 * 0 for rates below 1 b/s (a stopped flow), else 1 + floor(ln(rate) / ln(1 + tolerance)),
 * at most UINT32_MAX. Bucket b >= 1 holds [(1+t)^(b-1), (1+t)^b): two rates in one
 * bucket differ by less than a factor 1 + t, rates a factor 1 + t or more apart are in
 * different buckets, and rates just either side of a bucket edge are in adjacent buckets
 * however close they are. Monotonic (non-decreasing) in the rate. */
uint32_t wh_fcg_quantize_rate(double rate_bps, double tolerance);

#endif
