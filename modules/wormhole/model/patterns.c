/* Contention patterns: the flow conflict graph of every phase, counted as new or
 * repeated (see wormhole-private.h). A phase starts when a partition's membership
 * changes; its graph is built at the first sampling tick after the change, so flows
 * that start at one instant (one collective) are in one phase. Vertex labels: the
 * flow's line rate, its hop count, its sending rate and the bytes it has left at that
 * tick, the last two quantized with RateTolerance; edge weights: ports shared (data
 * and ACK paths). The pattern's key is the graph's hash in the run's configuration
 * namespace, confirmed by the exact isomorphism check against every stored graph with
 * that hash. Cold path: once per phase, O(flows x path length) to build plus the hash
 * and the checks; a graph built again in the same vertex order as one looked up before
 * (a collective repeated on the same ranks) takes that lookup's match without them. */
#include <math.h>
#include <string.h>

#include "fcg.h"
#include "flow-state.h"
#include "memo-db.h"
#include "units.h"
#include "varint.h"
#include "wormhole-private.h"

/* The bytes of graphs remembered with their match (lookup_remember): a graph built
 * again in the same vertex order then costs its serialization and one table probe. */
#define WH_LOOKUPS_MAX_BYTES (8u << 20)

static void replay_free(gpointer p);
static void lookup_free(gpointer p);
static void drain_drop(WhWormhole *wh, WhDrain *dr);

/* A graph's bytes hashed 8 at a time (g_bytes_hash takes one per step, and the keys
 * of the lookup caches run to kilobytes). */
static guint bytes_hash(gconstpointer key)
{
  gsize n;
  const uint8_t *d = g_bytes_get_data((GBytes *)key, &n);
  uint64_t h = wh_mix64(n), w;
  for (; n >= 8; n -= 8, d += 8) {
    memcpy(&w, d, 8);
    h = wh_mix64(h ^ w);
  }
  w = 0;
  memcpy(&w, d, n);
  h = wh_mix64(h ^ w);
  return (guint)(h ^ h >> 32);
}

void wh_patterns_init(WhWormhole *wh)
{
  wh->memo = wh_memo_db_new(wh->p.config_hash);
  wh->phases = g_ptr_array_new();
  wh->replays = g_ptr_array_new_with_free_func(replay_free);
  wh->drains = g_ptr_array_new();
  wh->unstarted = g_new0(uint32_t, wh->net->n_hosts);
  wh->lookups =
      g_hash_table_new_full(bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref, lookup_free);
  wh->lookups_at = g_hash_table_new_full(bytes_hash, g_bytes_equal, (GDestroyNotify)g_bytes_unref,
                                         (GDestroyNotify)g_bytes_unref);
}

static void phase_free(WhPhase *ph)
{
  g_byte_array_unref(ph->key);
  g_array_unref(ph->flows);
  g_array_unref(ph->snd0);
  g_free(ph);
}

void wh_patterns_free(WhWormhole *wh)
{
  g_clear_pointer(&wh->memo, wh_memo_db_free);
  if (wh->phases) {
    for (guint i = 0; i < wh->phases->len; i++)
      phase_free(wh->phases->pdata[i]);
    g_clear_pointer(&wh->phases, g_ptr_array_unref);
  }
  if (wh->replay_event) {
    wh_sim_cancel(wh->sim, wh->replay_event);
    wh->replay_event = NULL;
  }
  g_clear_pointer(&wh->replays, g_ptr_array_unref);
  if (wh->settle_event) {
    wh_sim_cancel(wh->sim, wh->settle_event);
    wh->settle_event = NULL;
  }
  g_clear_pointer(&wh->unstarted, g_free);
  while (wh->drains && wh->drains->len > 0)
    drain_drop(wh, wh->drains->pdata[wh->drains->len - 1]);
  g_clear_pointer(&wh->drains, g_ptr_array_unref);
  g_clear_pointer(&wh->lookups, g_hash_table_unref);
  g_clear_pointer(&wh->lookups_at, g_hash_table_unref);
}

/* ---- drains (memo mode): phases followed until every member completed ---- */

/* A drained outcome is stored beside its pattern's entry, under the pattern's signature
 * and key followed by this byte; its kind keeps it out of the exact check's candidates. */
static const uint8_t drain_tag = 0xd5;

/* The drained outcome stored beside entry `e`, or NULL. */
static const WhMemoEntry *drained_of(const WhWormhole *wh, const WhMemoEntry *e)
{
  uint32_t nc = 0;
  const WhMemoEntry *cand = wh_memo_db_candidates(wh->memo, e->signature, &nc);
  for (uint32_t i = 0; i < nc; i++)
    if (cand[i].kind == WH_MEMO_DRAINED && cand[i].key_len == e->key_len + 1 &&
        memcmp(cand[i].key, e->key, e->key_len) == 0 && cand[i].key[e->key_len] == drain_tag)
      return &cand[i];
  return NULL;
}

/* Ends following `dr` (stored or abandoned). */
static void drain_drop(WhWormhole *wh, WhDrain *dr)
{
  for (uint32_t i = 0; i < dr->n; i++) {
    WhGlueFlow *g = wh_wormhole_glue(wh, dr->flows[i]);
    if (g->drain == dr)
      g->drain = NULL;
  }
  g_ptr_array_remove_index_fast(wh->drains, dr->at);
  if (dr->at < wh->drains->len)
    ((WhDrain *)wh->drains->pdata[dr->at])->at = dr->at;
  g_byte_array_unref(dr->key);
  g_free(dr->flows);
  g_free(dr->out);
  g_free(dr);
}

/* The flows `ordered` (in the stored graph's vertex order) are a phase whose pattern
 * (sig, key) was just looked up. If they are what remains of one followed phase
 * (members left it, none joined), that phase goes on; else the phases any of them were
 * in are abandoned (a flow joined) and this one is followed (if `open`), unless a member
 * had already completed. */
static void drain_follow(WhWormhole *wh, const GArray *ordered, gboolean open, uint64_t sig,
                         const uint8_t *key, uint32_t key_len)
{
  uint32_t n = ordered->len;
  if (wh->p.mode != WH_WORMHOLE_MEMO || n == 0)
    return;
  WhDrain *cur = wh_wormhole_glue(wh, g_array_index(ordered, uint32_t, 0))->drain;
  gboolean same = cur != NULL;
  for (uint32_t i = 1; same && i < n; i++)
    same = wh_wormhole_glue(wh, g_array_index(ordered, uint32_t, i))->drain == cur;
  if (same)
    return;
  for (uint32_t i = 0; i < n; i++) {
    WhDrain *d = wh_wormhole_glue(wh, g_array_index(ordered, uint32_t, i))->drain;
    if (d)
      drain_drop(wh, d);
  }
  for (uint32_t i = 0; open && i < n; i++) {
    const WhFlow *f = wh_transport_flow(wh->tp, g_array_index(ordered, uint32_t, i));
    if (f->rcv_nxt >= f->size)
      return;
  }
  if (!open)
    return;
  WhDrain *dr = g_new0(WhDrain, 1);
  dr->at = wh->drains->len;
  dr->sig = sig;
  dr->key = g_byte_array_sized_new(key_len);
  g_byte_array_append(dr->key, key, key_len);
  dr->t0 = wh->sim->now;
  dr->n = n;
  dr->flows = g_memdup2(ordered->data, (gsize)n * sizeof(uint32_t));
  dr->out = g_new(WhOutcomeDrain, n);
  WhTime first = WH_TIME_MAX;
  for (uint32_t i = 0; i < n; i++)
    first = MIN(first, wh_transport_flow(wh->tp, dr->flows[i])->start);
  for (uint32_t i = 0; i < n; i++) {
    const WhFlow *f = wh_transport_flow(wh->tp, dr->flows[i]);
    dr->out[i] = (WhOutcomeDrain){.size = f->size,
                                  .left = f->size - f->snd_max_sent,
                                  .fin = WH_TIME_MAX,
                                  .lag = (uint64_t)(f->start - first)};
    WhGlueFlow *g = wh_wormhole_glue(wh, dr->flows[i]);
    g->drain = dr;
    g->drain_v = i;
  }
  g_ptr_array_add(wh->drains, dr);
}

void wh_patterns_drain_ends(WhWormhole *wh, WhFlow *f)
{
  WhGlueFlow *g = wh_wormhole_glue(wh, f->id);
  WhDrain *dr = g->drain;
  if (dr == NULL || dr->out[g->drain_v].fin != WH_TIME_MAX)
    return;
  /* a flow joined its partition since the phase began: not a drain of these flows */
  const WhPartition *p = wh_partitions_of_flow(wh_detector_partitions(wh->det), f->id);
  if (p == NULL || p->joined > dr->t0) {
    drain_drop(wh, dr);
    return;
  }
  dr->out[g->drain_v].fin = (uint64_t)(wh->sim->now - f->start); /* its FCT */
  if (++dr->n_done < dr->n)
    return;
  if (wh_memo_db_bytes(wh->memo) < wh->p.memo_max_bytes) {
    g_autoptr(GByteArray) v = g_byte_array_new();
    wh_outcome_drain_encode(dr->out, dr->n, v);
    g_byte_array_append(dr->key, &drain_tag, 1);
    wh_memo_db_insert(wh->memo, dr->sig, WH_MEMO_DRAINED, dr->key->data, dr->key->len, v->data,
                      v->len);
    wh->ps.drained++;
  } else {
    wh->ps.not_stored++;
  }
  drain_drop(wh, dr);
}

/* ---- outcomes ---- */

/* The phase's partition if it is still the one whose pattern was taken (live, its
 * membership unchanged since), else NULL. */
static WhPartition *phase_partition(WhWormhole *wh, const WhPhase *ph)
{
  const WhPartitions *pm = wh_detector_partitions(wh->det);
  if (ph->flows->len == 0)
    return NULL;
  /* one member tells: a change of membership moves `since` */
  WhPartition *p = wh_partitions_of_flow(pm, g_array_index(ph->flows, uint32_t, 0));
  return p && p->id == ph->part_id && p->since == ph->since ? p : NULL;
}

/* `parked`: a converged phase whose partition the fast-forward has just parked, so each
 * flow's estimated rate and smoothed RTT are its steady state. */
static void record(WhWormhole *wh, const WhPhase *ph, WhMemoKind kind, uint32_t ended,
                   gboolean parked)
{
  WhTime now = wh->sim->now;
  WhOutcomeHead head = {.duration = (uint64_t)(now - ph->t0), .n = ph->flows->len, .ended = ended};
  g_autofree uint64_t *bytes = g_new(uint64_t, MAX(head.n, 1u));
  g_autofree uint8_t *snaps = g_malloc((gsize)MAX(head.n, 1u) * WH_CC_SNAPSHOT_BYTES);
  g_autofree WhOutcomeSteady *steady = g_new0(WhOutcomeSteady, MAX(head.n, 1u));
  for (guint i = 0; i < head.n; i++) {
    WhFlow *f = wh_transport_flow(wh->tp, g_array_index(ph->flows, uint32_t, i));
    bytes[i] = f->snd_max_sent - g_array_index(ph->snd0, uint64_t, i);
    WhCcSnapshot snap;
    wh_flow_cc_snapshot(f, &snap);
    wh_cc_snapshot_serialize(&snap, snaps + (gsize)i * WH_CC_SNAPSHOT_BYTES);
    if (parked) {
      const WhGlueFlow *g = wh_wormhole_glue(wh, f->id);
      steady[i].rate = (uint64_t)llround(g->rhat * 1e12);
    }
  }
  g_autoptr(GByteArray) v = g_byte_array_new();
  wh_outcome_encode(&head, bytes, snaps, steady, v);
  wh_memo_db_insert(wh->memo, ph->sig, kind, ph->key->data, ph->key->len, v->data, v->len);
  if (kind == WH_MEMO_CONVERGED)
    wh->ps.converged++;
  else
    wh->ps.completed++;
}

static void drop_phase(WhWormhole *wh, guint i)
{
  phase_free(g_ptr_array_steal_index_fast(wh->phases, i));
}

/* A member's phase ends when its last byte arrives (its FCT; it leaves the partition
 * when that byte's ACK is back, half a round trip later): the outcome is recorded then,
 * or, for a flow whose last byte had arrived before the phase's pattern was taken, when
 * it leaves (the caller calls this at both: the first records, the second finds no
 * phase). */
void wh_patterns_flow_ends(WhWormhole *wh, WhFlow *f)
{
  wh_patterns_drain_ends(wh, f);
  for (guint i = 0; i < wh->phases->len; i++) {
    WhPhase *ph = wh->phases->pdata[i];
    for (guint k = 0; k < ph->flows->len; k++) {
      if (g_array_index(ph->flows, uint32_t, k) != f->id)
        continue;
      if (phase_partition(wh, ph))
        record(wh, ph, WH_MEMO_COMPLETED, k, FALSE);
      else
        wh->ps.abandoned++;
      drop_phase(wh, i);
      return;
    }
  }
}

/* At a tick: phases whose partition changed are abandoned; in observe mode those that
 * became steady are recorded (with a fast-forward, a phase converges when its partition
 * is parked: wh_patterns_parked). */
static void sweep_phases(WhWormhole *wh)
{
  for (guint i = wh->phases->len; i-- > 0;) {
    WhPhase *ph = wh->phases->pdata[i];
    WhPartition *p = phase_partition(wh, ph);
    if (p == NULL) {
      wh->ps.abandoned++;
      drop_phase(wh, i);
    } else if (p->kind != WH_STEADY_NONE && !wh_wormhole_mode_skips(wh->p.mode)) {
      record(wh, ph, WH_MEMO_CONVERGED, UINT32_MAX, FALSE);
      drop_phase(wh, i);
    }
  }
}

void wh_patterns_parked(WhWormhole *wh, const WhPartition *p)
{
  for (guint i = 0; wh->phases && i < wh->phases->len; i++) {
    WhPhase *ph = wh->phases->pdata[i];
    if (ph->part_id == p->id && ph->since == p->since) {
      /* only a quiet partition's rates carry over to another instance of its pattern:
       * under the rate rule they also depend on queues and marking, which a replay does
       * not restore (such an outcome keeps no steady state and is not replayed) */
      record(wh, ph, WH_MEMO_CONVERGED, UINT32_MAX, p->kind == WH_STEADY_IDLE);
      drop_phase(wh, i);
      return;
    }
  }
}

static gboolean phase_open(WhWormhole *wh, const WhPartition *p)
{
  for (guint i = 0; i < wh->phases->len; i++) {
    const WhPhase *ph = wh->phases->pdata[i];
    if (ph->part_id == p->id && ph->since == p->since)
      return TRUE;
  }
  return FALSE;
}

static void open_phase(WhWormhole *wh, const WhPartition *p, uint64_t sig, const GByteArray *key,
                       const GArray *ids)
{
  WhPhase *ph = g_new0(WhPhase, 1);
  ph->part_id = p->id;
  ph->since = p->since;
  ph->t0 = wh->sim->now;
  ph->sig = sig;
  ph->key = g_byte_array_sized_new(key->len);
  g_byte_array_append(ph->key, key->data, key->len);
  ph->flows = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), ids->len);
  g_array_append_vals(ph->flows, ids->data, ids->len);
  ph->snd0 = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), ids->len);
  for (guint i = 0; i < ids->len; i++) {
    uint64_t r = wh_transport_flow(wh->tp, g_array_index(ids, uint32_t, i))->snd_max_sent;
    g_array_append_val(ph->snd0, r);
  }
  g_ptr_array_add(wh->phases, ph);
}

/* A flow's sending rate for its label: the CC's rate, or window / smoothed RTT for a
 * window CC (line rate until it has an RTT sample). */
static double flow_rate(WhWormhole *wh, WhFlow *f)
{
  if (!f->cwnd)
    return wh_flow_rate(f);
  double srtt = wh_wormhole_glue(wh, f->id)->srtt_ps;
  return srtt > 0 ? (double)f->cwnd * 8 / (srtt * 1e-12) : (double)f->line_rate;
}

/* ---- replays (memo mode) ---- */

typedef struct {
  uint32_t part_id;
  WhTime since;
  WhMemoKind kind;     /* of the stored entry */
  GArray *flows;       /* current flow ids, in the stored graph's vertex order */
  WhOutcomeHead head;  /* the stored outcome, decoded */
  GArray *bytes;       /* uint64 per vertex */
  GByteArray *snaps;   /* WH_CC_SNAPSHOT_BYTES per vertex */
  GArray *steady;      /* WhOutcomeSteady per vertex */
  gboolean replayable; /* the outcome above can be replayed */
  GArray *drain;       /* the pattern's drained outcome (WhOutcomeDrain per vertex; empty:
                          none), tried first */
} Replay;

static void replay_free(gpointer p)
{
  Replay *r = p;
  g_array_unref(r->flows);
  g_array_unref(r->bytes);
  g_byte_array_unref(r->snaps);
  g_array_unref(r->steady);
  g_array_unref(r->drain);
  g_free(r);
}

/* An event at the tick's time: the replays found at the tick are started (parking is
 * done from an event, as for skips). */
static void start_replays(WhSim *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  (void)arg;
  WhWormhole *wh = ctx;
  wh->replay_event = NULL;
  const WhPartitions *pm = wh_detector_partitions(wh->det);
  for (guint k = 0; k < wh->replays->len; k++) {
    Replay *r = wh->replays->pdata[k];
    const WhPartition *p = wh_partitions_of_flow(pm, g_array_index(r->flows, uint32_t, 0));
    if (p == NULL || p->id != r->part_id || p->since != r->since)
      continue; /* changed since the tick */
    const uint32_t *flows = (const uint32_t *)r->flows->data;
    if (r->drain->len > 0 &&
        wh_ff_drain(wh, p, flows, (const WhOutcomeDrain *)r->drain->data, r->flows->len)) {
      wh->ps.replays[WH_MEMO_DRAINED]++;
      continue;
    }
    if (!r->replayable)
      continue;
    const WhOutcomeHead *h = &r->head;
    wh->ps.replays[r->kind] +=
        wh_ff_replay(wh, p, (const uint32_t *)r->flows->data, (const uint64_t *)r->bytes->data,
                     r->snaps->data, (const WhOutcomeSteady *)r->steady->data, h->n,
                     h->ended == UINT32_MAX ? h->n : h->ended, (WhTime)h->duration);
  }
  g_ptr_array_set_size(wh->replays, 0);
}

static void queue_replay(WhWormhole *wh, const WhPartition *p, const GArray *ordered,
                         const WhMemoEntry *e, const WhMemoEntry *drained)
{
  Replay *r = g_new0(Replay, 1);
  r->bytes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  r->snaps = g_byte_array_new();
  r->steady = g_array_new(FALSE, FALSE, sizeof(WhOutcomeSteady));
  r->drain = g_array_new(FALSE, FALSE, sizeof(WhOutcomeDrain));
  r->flows = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), ordered->len);
  if (drained &&
      !wh_outcome_drain_decode(drained->value, drained->value_len, ordered->len, r->drain))
    g_array_set_size(r->drain, 0);
  r->replayable =
      e->kind != WH_MEMO_SEEN && wh_outcome_decode(e->value, e->value_len, ordered->len, &r->head,
                                                   r->bytes, r->snaps, r->steady);
  /* a converged outcome with no steady state to go on with is left to the fast-forward */
  if (r->replayable && e->kind == WH_MEMO_CONVERGED &&
      (r->steady->len == 0 || g_array_index(r->steady, WhOutcomeSteady, 0).rate == 0))
    r->replayable = FALSE;
  if (!r->replayable && r->drain->len == 0) {
    replay_free(r);
    return;
  }
  r->part_id = p->id;
  r->since = p->since;
  r->kind = e->kind;
  g_array_append_vals(r->flows, ordered->data, ordered->len);
  g_ptr_array_add(wh->replays, r);
  if (wh->replay_event == NULL)
    wh->replay_event =
        wh_sim_schedule_at(wh->sim, wh->sim->now, start_replays, wh, 0, WH_OWNER_NONE);
}

/* A graph looked up before, by its bytes in the order it was built: the stored entry it
 * matched (signature and key) and the map from its vertices to that entry's. */
typedef struct {
  uint64_t sig;
  GBytes *key;
  uint32_t n;
  uint32_t map[];
} WhLookup;

static void lookup_free(gpointer p)
{
  WhLookup *lk = p;
  g_bytes_unref(lk->key);
  g_free(lk);
}

/* Remembers that the graph of bytes `raw` matched the entry (sig, key) through `map`,
 * while the remembered graphs hold under WH_LOOKUPS_MAX_BYTES. */
static void lookup_remember(WhWormhole *wh, const GByteArray *raw, uint64_t sig, const uint8_t *key,
                            uint32_t key_len, const uint32_t *map, uint32_t n)
{
  uint64_t cost = raw->len + key_len + sizeof(WhLookup) + (uint64_t)n * sizeof(uint32_t);
  if (wh->lookups_bytes + cost > WH_LOOKUPS_MAX_BYTES)
    return;
  WhLookup *lk = g_malloc(sizeof *lk + (size_t)n * sizeof(uint32_t));
  lk->sig = sig;
  lk->key = g_bytes_new(key, key_len);
  lk->n = n;
  memcpy(lk->map, map, (size_t)n * sizeof(uint32_t));
  if (g_hash_table_insert(wh->lookups, g_bytes_new(raw->data, raw->len), lk))
    wh->lookups_bytes += cost;
}

/* The stored entry that the graph of bytes `raw` matched when it was looked up before,
 * as it is now (its kind may have moved from seen to an outcome), and the map to it;
 * NULL if the graph was not looked up before. */
static const WhMemoEntry *lookup_recall_bytes(WhWormhole *wh, GBytes *b, const uint32_t **map)
{
  const WhLookup *lk = g_hash_table_lookup(wh->lookups, b);
  if (lk == NULL)
    return NULL;
  uint32_t nc = 0;
  const WhMemoEntry *cand = wh_memo_db_candidates(wh->memo, lk->sig, &nc);
  size_t len = 0;
  const uint8_t *key = g_bytes_get_data(lk->key, &len);
  for (uint32_t i = 0; i < nc; i++) {
    if (cand[i].key_len == len && memcmp(cand[i].key, key, len) == 0) {
      *map = lk->map;
      return &cand[i];
    }
  }
  return NULL;
}

static const WhMemoEntry *lookup_recall(WhWormhole *wh, const GByteArray *raw, const uint32_t **map)
{
  g_autoptr(GBytes) b = g_bytes_new_static(raw->data, raw->len);
  return lookup_recall_bytes(wh, b, map);
}

/* Remembers that the phase of in-place key `at` has the graph of bytes `raw` (looked up
 * before, so in wh->lookups), while those keys hold under WH_LOOKUPS_MAX_BYTES. */
static void lookup_remember_at(WhWormhole *wh, const GByteArray *at, const GByteArray *raw)
{
  uint64_t cost = (uint64_t)at->len + raw->len + 2 * sizeof(GBytes *);
  if (wh->lookups_at_bytes + cost > WH_LOOKUPS_MAX_BYTES)
    return;
  if (g_hash_table_insert(wh->lookups_at, g_bytes_new(at->data, at->len),
                          g_bytes_new(raw->data, raw->len)))
    wh->lookups_at_bytes += cost;
}

/* A repeat of the stored entry `e`, whose graph's vertex map[v] is the current flow
 * ids[v]: in memo mode a replay of its outcome, else followed for its outcome. */
/* Lookups back off where patterns do not repeat: once a size class of phases (floor of
 * log2 of its flows) has been looked up WH_BACKOFF_MIN times and found fewer than one in
 * WH_BACKOFF_RATIO, only one of its phases in WH_BACKOFF_EVERY is looked up (so a class
 * whose phases start to repeat is found again). A lookup of a large phase costs up to a
 * few million instructions (its graph, hash and outcome), as much as thousands of
 * events; one that never finds anything only costs. */
#define WH_BACKOFF_MIN 32u
#define WH_BACKOFF_RATIO 32u
#define WH_BACKOFF_EVERY 16u

static uint32_t size_class(uint32_t flows)
{
  return flows > 1 ? 31u - (uint32_t)__builtin_clz(flows) : 0;
}

/* Whether phase `p` is looked up (counted in its class), or left: backed off. */
static gboolean look_up_class(WhPatternStats *ps, const WhPartition *p)
{
  uint32_t c = size_class(p->n_flows);
  gboolean back_off = ps->class_lookups[c] >= WH_BACKOFF_MIN &&
                      (uint64_t)ps->class_hits[c] * WH_BACKOFF_RATIO < ps->class_lookups[c];
  if (back_off && ps->class_seen[c]++ % WH_BACKOFF_EVERY != 0) {
    ps->backed_off++;
    return FALSE;
  }
  ps->class_lookups[c]++;
  return TRUE;
}

static void repeat(WhWormhole *wh, const WhPartition *p, const GArray *ids, const uint32_t *map,
                   const WhMemoEntry *e, uint64_t sig, GByteArray *key)
{
  WhPatternStats *ps = &wh->ps;
  ps->class_hits[size_class(ids->len)]++;
  ps->repeated++;
  ps->repeated_from_file += e->from_file;
  ps->hits[e->kind]++;
  /* the current flows in the stored graph's vertex order */
  g_autoptr(GArray) ordered = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), ids->len);
  g_array_set_size(ordered, ids->len);
  for (guint v = 0; v < ids->len; v++)
    g_array_index(ordered, uint32_t, map[v]) = g_array_index(ids, uint32_t, v);
  /* memo mode: a pattern whose phase drained is replayed as a drain; one that ended in
   * a completion or converged is replayed (a converged one goes on as a skip at its
   * stored rates: docs/modules/wormhole.md); a phase is followed until every flow
   * completes unless its drained outcome is known */
  const WhMemoEntry *drained = wh->p.mode == WH_WORMHOLE_MEMO ? drained_of(wh, e) : NULL;
  drain_follow(wh, ordered, drained == NULL, e->signature, e->key, e->key_len);
  if (wh->p.mode == WH_WORMHOLE_MEMO && (e->kind != WH_MEMO_SEEN || drained)) {
    queue_replay(wh, p, ordered, e, drained);
    if (e->kind != WH_MEMO_SEEN)
      return;
  }
  /* seen, but its outcome is not known yet: follow this phase for it */
  if (e->kind == WH_MEMO_SEEN && !phase_open(wh, p)) {
    g_byte_array_set_size(key, 0);
    g_byte_array_append(key, e->key, e->key_len);
    open_phase(wh, p, sig, key, ordered);
  }
}

/* A large phase's in-place key starts with this byte, which no graph's bytes start
 * with (they start with the vertex count, a varint of at least 1). */
#define WH_IN_PLACE_TAG 0

/* The in-place key of a phase: the tag, the flow count, the distinct vertex labels
 * (8 B each, in order of first use), then per flow (in the partition's order) its
 * label's index, its port count and its ports, each as the zigzag difference to the
 * port at the same position on the previous flow's path (or to the flow's previous
 * port): equal keys mean the same labels on the same ports in the same order, so the
 * same graph in the same vertex order. */
/* Distinct labels looked for by a scan, at most. */
#define WH_LABELS_SCAN 16u

/* The index of each distinct label among labels[0..n-1] in order of first use (the
 * table keys point into `labels`). */
static GHashTable *labels_index(const GArray *labels, uint32_t n)
{
  GHashTable *index = g_hash_table_new(g_int64_hash, g_int64_equal);
  for (uint32_t f = 0; f < n; f++) {
    const uint64_t *l = &g_array_index(labels, uint64_t, f);
    if (!g_hash_table_contains(index, l))
      g_hash_table_insert(index, (gpointer)l, GUINT_TO_POINTER(g_hash_table_size(index)));
  }
  return index;
}

static void in_place_key(GByteArray *out, const GPtrArray *paths, const GArray *lens,
                         const GArray *labels)
{
  uint32_t n = lens->len;
  /* each label's index in order of first use: found by a scan while there are few
   * distinct labels (the usual case), through a hash table past WH_LABELS_SCAN */
  g_autoptr(GHashTable) index = NULL;
  g_autofree uint32_t *idx = g_new(uint32_t, MAX(n, 1u));
  g_autoptr(GByteArray) table = g_byte_array_new();
  uint32_t distinct = 0;
  size_t room = 1 + 2 * WH_VARINT_MAX_BYTES; /* tag, counts */
  for (uint32_t f = 0; f < n; f++) {
    const uint64_t *l = &g_array_index(labels, uint64_t, f);
    uint32_t i = distinct;
    if (index == NULL) {
      const uint64_t *seen = (const uint64_t *)(const void *)table->data;
      for (i = 0; i < distinct && memcmp(&seen[i], l, sizeof *l) != 0; i++)
        ;
    } else {
      gpointer v;
      if (g_hash_table_lookup_extended(index, l, NULL, &v))
        i = GPOINTER_TO_UINT(v);
    }
    if (i == distinct) {
      g_byte_array_append(table, (const uint8_t *)l, sizeof *l);
      distinct++;
      if (index)
        g_hash_table_insert(index, (gpointer)l, GUINT_TO_POINTER(i));
      else if (distinct > WH_LABELS_SCAN)
        index = labels_index(labels, f + 1);
    }
    idx[f] = i;
    room += (2 + (size_t)g_array_index(lens, uint32_t, f)) * WH_VARINT_MAX_BYTES;
  }
  room += table->len;
  /* written in place into room for the longest form, then cut to what was written */
  g_byte_array_set_size(out, (guint)room);
  uint8_t *w = out->data;
  *w++ = WH_IN_PLACE_TAG;
  w = wh_varint_write(w, n);
  w = wh_varint_write(w, distinct);
  memcpy(w, table->data, table->len);
  w += table->len;
  const uint32_t *prev = NULL;
  uint32_t prev_len = 0;
  for (uint32_t f = 0; f < n; f++) {
    const uint32_t *path = paths->pdata[f];
    uint32_t len = g_array_index(lens, uint32_t, f);
    w = wh_varint_write(w, idx[f]);
    w = wh_varint_write(w, len);
    for (uint32_t k = 0; k < len; k++) {
      uint64_t ref = k < prev_len ? prev[k] : k > 0 ? path[k - 1] : 0;
      w = wh_varint_write(w, wh_zigzag_diff(path[k], ref));
    }
    prev = path;
    prev_len = len;
  }
  g_byte_array_set_size(out, (guint)(w - out->data));
}

/* A phase with more flows than the exact check takes (LargePhases=in-place): repeated
 * only where a stored one had the same in-place key (byte for byte, never a bare
 * signature), taken with the identity map; no graph is built, and nothing goes to the
 * remembered lookups (the key is its own lookup). */
static void count_in_place(WhWormhole *wh, const WhPartition *p, GArray *ids, GPtrArray *paths,
                           GArray *lens, GArray *labels, GByteArray *key, GByteArray *raw,
                           GArray *map)
{
  WhPatternStats *ps = &wh->ps;
  in_place_key(raw, paths, lens, labels);
  g_array_set_size(map, ids->len);
  for (guint v = 0; v < ids->len; v++)
    g_array_index(map, uint32_t, v) = v;
  uint64_t sig = wh_mix64(wh_fnv1a(WH_FNV1A_INIT ^ wh->p.config_hash, raw->data, raw->len));
  uint32_t nc = 0;
  const WhMemoEntry *cand = wh_memo_db_candidates(wh->memo, sig, &nc);
  for (uint32_t i = 0; i < nc; i++) {
    if (cand[i].key_len == raw->len && memcmp(cand[i].key, raw->data, raw->len) == 0) {
      ps->large_repeated++;
      repeat(wh, p, ids, (const uint32_t *)map->data, &cand[i], sig, key);
      return;
    }
  }
  ps->distinct++;
  gboolean room = wh_memo_db_bytes(wh->memo) < wh->p.memo_max_bytes;
  drain_follow(wh, ids, room, sig, raw->data, raw->len);
  if (!room) {
    ps->not_stored++;
    return;
  }
  wh_memo_db_insert(wh->memo, sig, WH_MEMO_SEEN, raw->data, raw->len, NULL, 0);
  open_phase(wh, p, sig, raw, ids);
}

static void count_phase(WhWormhole *wh, const WhPartition *p, GArray *ids, GPtrArray *paths,
                        GArray *lens, GArray *labels, GByteArray *key, GByteArray *raw, GArray *map,
                        GByteArray *at)
{
  WhPatternStats *ps = &wh->ps;
  const WhPartitions *pm = wh_detector_partitions(wh->det);
  /* sized once to the members (the partition counts them), filled in place */
  g_array_set_size(ids, p->n_flows);
  g_ptr_array_set_size(paths, (gint)p->n_flows);
  g_array_set_size(lens, p->n_flows);
  g_array_set_size(labels, p->n_flows);
  uint32_t k = 0;
  /* the last rate quantized (flows of a phase mostly share one: their line rate) */
  double last_rate = -1;
  uint32_t last_class = 0;
  for (uint32_t id = wh_partitions_first_flow(p); id != WH_PARTITION_NONE && k < p->n_flows;
       id = wh_partitions_next_flow(pm, p, id), k++) {
    WhFlow *f = wh_transport_flow(wh->tp, id);
    uint32_t n = 0;
    paths->pdata[k] = (gpointer)wh_partitions_flow_ports(pm, id, &n);
    uint64_t label = wh_mix64(f->line_rate ^ (uint64_t)f->fwd_hops << 48);
    double rate = flow_rate(wh, f);
    if (rate != last_rate) {
      last_rate = rate;
      last_class = wh_fcg_quantize_rate(rate, wh->p.rate_tolerance);
    }
    label = wh_mix64(label ^ last_class);
    g_array_index(ids, uint32_t, k) = id;
    g_array_index(lens, uint32_t, k) = n;
    g_array_index(labels, uint64_t, k) = label;
  }
  g_array_set_size(ids, k);
  g_ptr_array_set_size(paths, (gint)k);
  g_array_set_size(lens, k);
  g_array_set_size(labels, k);
  if (ids->len == 0)
    return;
  ps->phases++;
  ps->flows_sum += ids->len;
  ps->flows_max = MAX(ps->flows_max, ids->len);
  /* more flows than the exact check takes: matched only in place (LargePhases=in-place),
   * else no repeat could ever be confirmed, so the phase is new, and neither its graph
   * nor its outcome is kept */
  if (ids->len > WH_FCG_ISO_MAX_VERTICES) {
    ps->large++;
    if (wh->p.large_in_place) {
      count_in_place(wh, p, ids, paths, lens, labels, key, raw, map);
      return;
    }
    ps->too_large++;
    ps->distinct++;
    drain_follow(wh, ids, FALSE, 0, NULL, 0);
    return;
  }
  /* the same flows' labels on the same ports as a phase looked up before: the same
   * graph in the same vertex order, whose bytes are recalled without building it */
  in_place_key(at, paths, lens, labels);
  const uint32_t *known_map = NULL;
  const WhMemoEntry *known = NULL;
  {
    g_autoptr(GBytes) b = g_bytes_new_static(at->data, at->len);
    GBytes *graph = g_hash_table_lookup(wh->lookups_at, b);
    known = graph ? lookup_recall_bytes(wh, graph, &known_map) : NULL;
  }
  if (known) {
    ps->recalled++;
    repeat(wh, p, ids, known_map, known, known->signature, key);
    return;
  }
  g_autoptr(WhFcg) g =
      wh_fcg_from_paths(ids->len, (const uint32_t *const *)paths->pdata,
                        (const uint32_t *)lens->data, (const uint64_t *)labels->data);
  /* the same graph in the same vertex order as one looked up before: the same match,
   * without the hash and the exact check */
  g_byte_array_set_size(raw, 0);
  wh_fcg_serialize(g, raw);
  known = lookup_recall(wh, raw, &known_map);
  if (known) {
    lookup_remember_at(wh, at, raw);
    ps->recalled++;
    repeat(wh, p, ids, known_map, known, known->signature, key);
    return;
  }
  uint64_t sig = wh_fcg_hash(g, wh->p.config_hash);
  uint32_t nc = 0;
  const WhMemoEntry *cand = wh_memo_db_candidates(wh->memo, sig, &nc);
  gboolean gave_up = FALSE;
  for (uint32_t i = 0; i < nc; i++) {
    if (cand[i].kind == WH_MEMO_DRAINED ||
        (cand[i].key_len > 0 && cand[i].key[0] == WH_IN_PLACE_TAG))
      continue; /* a drained outcome, or a large phase's in-place key: never a graph */
    g_autoptr(WhFcg) stored = wh_fcg_deserialize(cand[i].key, cand[i].key_len);
    if (stored == NULL)
      continue;
    g_array_set_size(map, ids->len);
    WhFcgIso iso = wh_fcg_isomorphic(g, stored, (uint32_t *)map->data, WH_FCG_ISO_MAX_VERTICES);
    if (iso == WH_FCG_ISO_YES) {
      lookup_remember(wh, raw, sig, cand[i].key, cand[i].key_len, (const uint32_t *)map->data,
                      ids->len);
      lookup_remember_at(wh, at, raw);
      repeat(wh, p, ids, (const uint32_t *)map->data, &cand[i], sig, key);
      return;
    }
    if (iso == WH_FCG_ISO_TOO_LARGE)
      gave_up = TRUE;
    else
      ps->collisions++;
  }
  /* new (or not confirmed): counted, and its phase followed until its outcome, which
   * is stored with its graph as the key */
  ps->too_large += gave_up;
  ps->distinct++;
  gboolean room = wh_memo_db_bytes(wh->memo) < wh->p.memo_max_bytes;
  drain_follow(wh, ids, room, sig, raw->data, raw->len);
  if (!room) {
    ps->not_stored++;
    return;
  }
  wh_memo_db_insert(wh->memo, sig, WH_MEMO_SEEN, raw->data, raw->len, NULL, 0);
  g_array_set_size(map, ids->len);
  for (guint v = 0; v < ids->len; v++)
    g_array_index(map, uint32_t, v) = v;
  lookup_remember(wh, raw, sig, raw->data, raw->len, (const uint32_t *)map->data, ids->len);
  lookup_remember_at(wh, at, raw);
  open_phase(wh, p, sig, raw, ids);
}

/* The flows of `p` started together (at one instant) and have all sent their first
 * packet, and so has every other flow started at their hosts. */
static gboolean phase_complete(WhWormhole *wh, const WhPartition *p)
{
  const WhPartitions *pm = wh_detector_partitions(wh->det);
  WhTime start = wh_transport_flow(wh->tp, wh_partitions_first_flow(p))->start;
  for (uint32_t id = wh_partitions_first_flow(p); id != WH_PARTITION_NONE;
       id = wh_partitions_next_flow(pm, p, id)) {
    const WhFlow *f = wh_transport_flow(wh->tp, id);
    if (f->start != start || wh->unstarted[f->src] > 0)
      return FALSE;
  }
  return TRUE;
}

/* Looks up the partitions that changed before `t` (at a tick), or at `t` and are
 * complete (`settle`). */
static void look_up(WhWormhole *wh, WhTime t, gboolean settle)
{
  sweep_phases(wh);
  const WhPartitions *pm = wh_detector_partitions(wh->det);
  GArray *ids = NULL, *lens = NULL, *labels = NULL;
  GPtrArray *paths = NULL;
  GByteArray *key = NULL, *raw = NULL, *at = NULL;
  GArray *map = NULL;
  for (uint32_t i = 0; i < wh_partitions_n_live(pm); i++) {
    WhPartition *p = wh_partitions_live(pm, i);
    if (p->pattern_seen || p->n_flows == 0 || t < p->since || (!settle && t == p->since) ||
        p->hold || (settle && !phase_complete(wh, p)))
      continue;
    p->pattern_seen = 1;
    if (!look_up_class(&wh->ps, p))
      continue;
    if (ids == NULL) {
      ids = g_array_new(FALSE, FALSE, sizeof(uint32_t));
      lens = g_array_new(FALSE, FALSE, sizeof(uint32_t));
      labels = g_array_new(FALSE, FALSE, sizeof(uint64_t));
      paths = g_ptr_array_new();
      key = g_byte_array_new();
      raw = g_byte_array_new();
      at = g_byte_array_new();
      map = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    }
    count_phase(wh, p, ids, paths, lens, labels, key, raw, map, at);
  }
  if (ids) {
    g_array_unref(ids);
    g_array_unref(lens);
    g_array_unref(labels);
    g_ptr_array_unref(paths);
    g_byte_array_unref(key);
    g_byte_array_unref(raw);
    g_byte_array_unref(at);
    g_array_unref(map);
  }
}

void wh_patterns_after_tick(WhWormhole *wh, WhTime t)
{
  look_up(wh, t, FALSE);
}

static void settle(WhSim *sim, void *ctx, uint64_t arg)
{
  (void)arg;
  WhWormhole *wh = ctx;
  wh->settle_event = NULL;
  look_up(wh, sim->now, TRUE);
}

void wh_patterns_flow_activated(WhWormhole *wh, const WhFlow *f, gboolean started)
{
  WhGlueFlow *g = wh_wormhole_glue(wh, f->id);
  if (!started) {
    if (!g->started && !g->unstarted) {
      g->unstarted = 1;
      wh->unstarted[f->src]++;
    }
    return;
  }
  g->started = 1;
  if (g->unstarted) {
    g->unstarted = 0;
    wh->unstarted[f->src]--;
  }
  if (wh->p.mode == WH_WORMHOLE_MEMO && wh->settle_event == NULL)
    wh->settle_event = wh_sim_schedule_at(wh->sim, wh->sim->now, settle, wh, 0, WH_OWNER_NONE);
}

/* Sets the integer members `keys` of `o` to `values`, in order. */
static void set_ints(JsonObject *o, const char *const *keys, const uint64_t *values, size_t n)
{
  for (size_t i = 0; i < n; i++)
    json_object_set_int_member(o, keys[i], (gint64)values[i]);
}

JsonObject *wh_patterns_json(const WhWormhole *wh)
{
  const WhPatternStats *ps = &wh->ps;
  JsonObject *o = json_object_new(), *hits = json_object_new(), *replays = json_object_new(),
             *outcomes = json_object_new();
  json_object_set_double_member(o, "rate_tolerance", wh_units_round(wh->p.rate_tolerance, "%g"));
  static const char *const counts[] = {"phases", "repeated", "repeated_from_file", "recalled"};
  set_ints(o, counts,
           (const uint64_t[]){ps->phases, ps->repeated, ps->repeated_from_file, ps->recalled}, 4);
  static const char *const kinds[] = {"seen", "converged", "completed", "drained"};
  set_ints(hits, kinds,
           (const uint64_t[]){ps->hits[WH_MEMO_SEEN], ps->hits[WH_MEMO_CONVERGED],
                              ps->hits[WH_MEMO_COMPLETED]},
           3);
  json_object_set_object_member(o, "hits", hits);
  set_ints(replays, kinds + 1,
           (const uint64_t[]){ps->replays[WH_MEMO_CONVERGED], ps->replays[WH_MEMO_COMPLETED],
                              ps->replays[WH_MEMO_DRAINED]},
           3);
  json_object_set_object_member(o, "replays", replays);
  static const char *const sizes[] = {"distinct",       "hash_collisions", "too_large", "large",
                                      "large_repeated", "not_stored",      "flows_max"};
  set_ints(o, sizes,
           (const uint64_t[]){ps->distinct, ps->collisions, ps->too_large, ps->large,
                              ps->large_repeated, ps->not_stored, ps->flows_max},
           7);
  json_object_set_double_member(
      o, "flows_mean",
      wh_units_round(ps->phases ? (double)ps->flows_sum / ps->phases : 0.0, "%.3f"));
  static const char *const ends[] = {"converged", "completed", "abandoned", "drained"};
  set_ints(outcomes, ends,
           (const uint64_t[]){ps->converged, ps->completed, ps->abandoned, ps->drained}, 4);
  json_object_set_object_member(o, "outcomes", outcomes);
  json_object_set_int_member(o, "backed_off", (gint64)ps->backed_off);
  json_object_set_int_member(o, "db_entries", wh_memo_db_len(wh->memo));
  json_object_set_int_member(o, "db_bytes", (gint64)wh_memo_db_bytes(wh->memo));
  return o;
}

void wh_wormhole_memo_summary(const WhWormhole *wh, WhWormholeMemoSummary *out)
{
  *out = (WhWormholeMemoSummary){0};
  if (wh->memo == NULL)
    return;
  out->lookups = wh->ps.phases;
  out->hits = wh->ps.repeated;
  out->hits_from_file = wh->ps.repeated_from_file;
  out->hits_seen = wh->ps.hits[WH_MEMO_SEEN];
  out->hits_converged = wh->ps.hits[WH_MEMO_CONVERGED];
  out->hits_completed = wh->ps.hits[WH_MEMO_COMPLETED];
  out->replays_converged = wh->ps.replays[WH_MEMO_CONVERGED];
  out->replays_completed = wh->ps.replays[WH_MEMO_COMPLETED];
  out->replays_drained = wh->ps.replays[WH_MEMO_DRAINED];
  out->distinct = wh->ps.distinct;
  out->db_entries = wh_memo_db_len(wh->memo);
  out->db_bytes = wh_memo_db_bytes(wh->memo);
}

gboolean wh_wormhole_memo_load(WhWormhole *wh, const char *path, uint64_t max_memory,
                               uint64_t *loaded, uint64_t *entries, GError **error)
{
  g_return_val_if_fail(wh->memo != NULL, FALSE);
  WhMemoLoad load = {.max_bytes = wh->p.memo_max_bytes, .max_memory = max_memory};
  gboolean ok = wh_memo_db_load_bounded(wh->memo, path, &load, error);
  *loaded = load.loaded;
  *entries = load.entries;
  return ok;
}

gboolean wh_wormhole_memo_save(const WhWormhole *wh, const char *path, uint64_t *written,
                               uint64_t *entries, GError **error)
{
  g_return_val_if_fail(wh->memo != NULL, FALSE);
  WhMemoSave save = {.max_bytes = wh->p.memo_max_bytes};
  gboolean ok = wh_memo_db_save_bounded(wh->memo, path, &save, error);
  if (written)
    *written = save.written;
  if (entries)
    *entries = save.entries;
  return ok;
}
