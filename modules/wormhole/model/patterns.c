/* Contention patterns: the flow conflict graph of every phase, counted as new or
 * repeated (see wormhole-private.h). A phase starts when a partition's membership
 * changes; its graph is built at the first sampling tick after the change, so flows
 * that start at one instant (one collective) are in one phase. Vertex labels: the
 * flow's line rate, its hop count and its sending rate at that tick, quantized with
 * RateTolerance; edge weights: ports shared (data and ACK paths). The pattern's key is
 * the graph's hash in the run's configuration namespace, confirmed by the exact
 * isomorphism check against every stored graph with that hash. Cold path: once per
 * phase, O(flows x path length) to build plus the hash and the checks. */
#include <math.h>
#include <string.h>

#include "fcg.h"
#include "memo-db.h"
#include "wormhole-private.h"

void wh_patterns_init(WhWormhole *wh)
{
  wh->memo = wh_memo_db_new(wh->p.config_hash);
}

void wh_patterns_free(WhWormhole *wh)
{
  g_clear_pointer(&wh->memo, wh_memo_db_free);
}

/* A flow's sending rate for its label: the CC's rate, or window / smoothed RTT for a
 * window CC (line rate until it has an RTT sample). */
static double flow_rate(WhWormhole *wh, const WhFlow *f)
{
  if (!f->cwnd)
    return f->rate;
  double srtt = wh_wormhole_glue(wh, f->id)->srtt_ps;
  return srtt > 0 ? (double)f->cwnd * 8 / (srtt * 1e-12) : (double)f->line_rate;
}

static void count_phase(WhWormhole *wh, const WhPartition *p, GArray *ids, GPtrArray *paths,
                        GArray *lens, GArray *labels, GByteArray *key)
{
  WhPatternStats *ps = &wh->ps;
  const WhPartitions *pm = wh_detector_partitions(wh->det);
  g_array_set_size(ids, 0);
  g_ptr_array_set_size(paths, 0);
  g_array_set_size(lens, 0);
  g_array_set_size(labels, 0);
  for (uint32_t id = wh_partitions_first_flow(p); id != WH_PARTITION_NONE;
       id = wh_partitions_next_flow(pm, p, id)) {
    const WhFlow *f = wh_transport_flow(wh->tp, id);
    uint32_t n = 0;
    const uint32_t *ports = wh_partitions_flow_ports(pm, id, &n);
    uint64_t label = wh_mix64(f->line_rate ^ (uint64_t)f->fwd_hops << 48);
    label = wh_mix64(label ^ wh_fcg_quantize_rate(flow_rate(wh, f), wh->p.rate_tolerance));
    g_array_append_val(ids, id);
    g_ptr_array_add(paths, (gpointer)ports);
    g_array_append_val(lens, n);
    g_array_append_val(labels, label);
  }
  if (ids->len == 0)
    return;
  g_autoptr(WhFcg) g =
      wh_fcg_from_paths(ids->len, (const uint32_t *const *)paths->pdata,
                        (const uint32_t *)lens->data, (const uint64_t *)labels->data);
  uint64_t sig = wh_fcg_hash(g, wh->p.config_hash);
  ps->phases++;
  ps->flows_sum += ids->len;
  ps->flows_max = MAX(ps->flows_max, ids->len);
  uint32_t nc = 0;
  const WhMemoEntry *cand = wh_memo_db_candidates(wh->memo, sig, &nc);
  gboolean gave_up = FALSE;
  for (uint32_t i = 0; i < nc; i++) {
    g_autoptr(WhFcg) stored = wh_fcg_deserialize(cand[i].key, cand[i].key_len);
    if (stored == NULL)
      continue;
    WhFcgIso iso = wh_fcg_isomorphic(g, stored, NULL, WH_FCG_ISO_MAX_VERTICES);
    if (iso == WH_FCG_ISO_YES) {
      ps->repeated++;
      return;
    }
    if (iso == WH_FCG_ISO_TOO_LARGE)
      gave_up = TRUE;
    else
      ps->collisions++;
  }
  /* new (or not confirmed): stored under its hash with its graph as the key */
  ps->too_large += gave_up;
  g_byte_array_set_size(key, 0);
  wh_fcg_serialize(g, key);
  if (wh_memo_db_insert(wh->memo, sig, WH_MEMO_CONVERGED, key->data, key->len, NULL, 0))
    ps->distinct++;
  else
    ps->repeated++; /* the very same graph, which the check gave up on */
}

void wh_patterns_after_tick(WhWormhole *wh, WhTime t)
{
  const WhPartitions *pm = wh_detector_partitions(wh->det);
  GArray *ids = NULL, *lens = NULL, *labels = NULL;
  GPtrArray *paths = NULL;
  GByteArray *key = NULL;
  for (uint32_t i = 0; i < wh_partitions_n_live(pm); i++) {
    WhPartition *p = wh_partitions_live(pm, i);
    if (p->pattern_seen || p->n_flows == 0 || t <= p->since)
      continue;
    p->pattern_seen = 1;
    if (ids == NULL) {
      ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
      lens = g_array_new(FALSE, FALSE, sizeof(uint32_t));
      labels = g_array_new(FALSE, FALSE, sizeof(uint64_t));
      paths = g_ptr_array_new();
      key = g_byte_array_new();
    }
    count_phase(wh, p, ids, paths, lens, labels, key);
  }
  if (ids) {
    g_array_unref(ids);
    g_array_unref(lens);
    g_array_unref(labels);
    g_ptr_array_unref(paths);
    g_byte_array_unref(key);
  }
}

void wh_patterns_json(const WhWormhole *wh, GString *out)
{
  const WhPatternStats *ps = &wh->ps;
  g_string_append_printf(
      out,
      "  \"patterns\": {\"rate_tolerance\": %g, \"phases\": %" G_GUINT64_FORMAT
      ", \"repeated\": %" G_GUINT64_FORMAT ", \"distinct\": %" G_GUINT64_FORMAT
      ", \"hash_collisions\": %" G_GUINT64_FORMAT ", \"too_large\": %" G_GUINT64_FORMAT
      ", \"flows_max\": %" G_GUINT64_FORMAT ", \"flows_mean\": %.3f, \"db_entries\": %u"
      ", \"db_bytes\": %" G_GUINT64_FORMAT "},\n",
      wh->p.rate_tolerance, ps->phases, ps->repeated, ps->distinct, ps->collisions, ps->too_large,
      ps->flows_max, ps->phases ? (double)ps->flows_sum / ps->phases : 0.0,
      wh_memo_db_len(wh->memo), wh_memo_db_bytes(wh->memo));
}
