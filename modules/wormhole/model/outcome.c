/* A phase outcome's compact byte form: see outcome.h. Layout: varints of the duration,
 * the vertex count and ended + 1 (0: converged); then per vertex the zigzag difference
 * of its bytes to the previous vertex's, for a converged phase the zigzag differences
 * of its steady rate and round-trip time to the previous vertex's, the reference of
 * its snapshot (0: zeros, r: the snapshot r vertices back), the count of words that
 * differ from it, and per such word the gap to the previous one and the zigzag
 * difference to the reference's word. */
#include "outcome.h"

#include <string.h>

#include "flow-state.h"
#include "varint.h"

#define WORDS (WH_CC_SNAPSHOT_BYTES / 8)
/* How many earlier vertices a snapshot may refer to. */
#define WINDOW 64u

G_STATIC_ASSERT(WH_CC_SNAPSHOT_BYTES % 8 == 0);

static guint varint_len(uint64_t v)
{
  return v ? (guint)(64 - __builtin_clzll(v) + 6) / 7 : 1; /* 7 bits a byte */
}

static void words_of(const uint8_t *snap, uint64_t w[WORDS])
{
  if (snap)
    memcpy(w, snap, WH_CC_SNAPSHOT_BYTES);
  else
    memset(w, 0, WH_CC_SNAPSHOT_BYTES);
}

/* Bytes taken by `w` written against `ref`, or limit + 1 as soon as they exceed
 * `limit` (such a reference cannot be chosen; the count of changed words takes at
 * least one byte more). */
static guint delta_len(const uint64_t *w, const uint64_t *ref, guint limit)
{
  guint len = 0, changed = 0, prev = 0;
  for (guint j = 0; j < WORDS; j++) {
    if (w[j] == ref[j])
      continue;
    len += varint_len(j - prev) + varint_len(wh_zigzag_diff(w[j], ref[j]));
    if (len >= limit)
      return limit + 1;
    prev = j + 1;
    changed++;
  }
  return len + varint_len(changed);
}

void wh_outcome_encode(const WhOutcomeHead *head, const uint64_t *bytes, const uint8_t *snaps,
                       const WhOutcomeSteady *steady, GByteArray *out)
{
  uint32_t n = head->n;
  gboolean converged = head->ended == UINT32_MAX;
  WhOutcomeSteady prev = {0};
  wh_varint_put(out, head->duration);
  wh_varint_put(out, n);
  wh_varint_put(out, head->ended == UINT32_MAX ? 0 : (uint64_t)head->ended + 1);
  uint64_t zero[WORDS] = {0}, ref[WORDS];
  /* every vertex's words, read once: a vertex is compared with up to WINDOW before it */
  g_autofree uint64_t *all = g_new(uint64_t, (size_t)MAX(n, 1u) * WORDS);
  for (uint32_t i = 0; i < n; i++)
    words_of(snaps + (size_t)i * WH_CC_SNAPSHOT_BYTES, all + (size_t)i * WORDS);
  for (uint32_t i = 0; i < n; i++) {
    wh_varint_put(out, wh_zigzag_diff(bytes[i], i ? bytes[i - 1] : 0));
    if (converged) {
      WhOutcomeSteady s = steady ? steady[i] : (WhOutcomeSteady){0};
      wh_varint_put(out, wh_zigzag_diff(s.rate, prev.rate));
      prev = s;
    }
    const uint64_t *w = all + (size_t)i * WORDS;
    /* the shortest reference; on a tie the nearest, zeros last */
    uint32_t best = 0;
    guint best_len = delta_len(w, zero, G_MAXUINT - 1);
    /* one byte (no word changed) is the shortest form: once a reference takes it, no
     * later one can be chosen */
    for (uint32_t r = 1; r <= MIN(i, WINDOW) && (best == 0 || best_len > 1); r++) {
      guint len = delta_len(w, w - (size_t)r * WORDS, best_len);
      if (len < best_len || (len == best_len && best == 0)) {
        best = r;
        best_len = len;
      }
    }
    if (best)
      memcpy(ref, w - (size_t)best * WORDS, sizeof ref);
    else
      memset(ref, 0, sizeof ref);
    wh_varint_put(out, best);
    guint changed = 0, prev = 0;
    for (guint j = 0; j < WORDS; j++)
      changed += w[j] != ref[j];
    wh_varint_put(out, changed);
    for (guint j = 0; j < WORDS; j++) {
      if (w[j] == ref[j])
        continue;
      wh_varint_put(out, j - prev);
      wh_varint_put(out, wh_zigzag_diff(w[j], ref[j]));
      prev = j + 1;
    }
  }
}

gboolean wh_outcome_decode(const uint8_t *value, gsize len, uint32_t n, WhOutcomeHead *head,
                           GArray *bytes, GByteArray *snaps, GArray *steady)
{
  gsize at = 0;
  uint32_t ended;
  if (value == NULL || !wh_varint_get(value, len, &at, &head->duration) ||
      !wh_varint_get32(value, len, &at, &head->n) || !wh_varint_get32(value, len, &at, &ended))
    return FALSE;
  /* a vertex takes 3 B at least */
  if (head->n != n || n > (len - at) / 3 || ended > n)
    return FALSE;
  head->ended = ended == 0 ? UINT32_MAX : ended - 1;
  g_autoptr(GByteArray) own = snaps ? NULL : g_byte_array_new();
  GByteArray *s = snaps ? snaps : own;
  g_byte_array_set_size(s, n * WH_CC_SNAPSHOT_BYTES);
  if (bytes)
    g_array_set_size(bytes, n);
  if (steady)
    g_array_set_size(steady, n);
  uint64_t b = 0, w[WORDS];
  WhOutcomeSteady st = {0};
  for (uint32_t i = 0; i < n; i++) {
    uint64_t z, r, changed;
    if (!wh_varint_get(value, len, &at, &z))
      return FALSE;
    b = wh_zigzag_undiff(z, b);
    if (ended == 0) {
      uint64_t zr;
      if (!wh_varint_get(value, len, &at, &zr))
        return FALSE;
      st.rate = wh_zigzag_undiff(zr, st.rate);
    }
    if (steady)
      g_array_index(steady, WhOutcomeSteady, i) = st;
    if (!wh_varint_get(value, len, &at, &r) || r > i || r > WINDOW ||
        !wh_varint_get(value, len, &at, &changed) || changed > WORDS)
      return FALSE;
    if (bytes)
      g_array_index(bytes, uint64_t, i) = b;
    uint8_t *snap = s->data + (size_t)i * WH_CC_SNAPSHOT_BYTES;
    words_of(r ? snap - r * WH_CC_SNAPSHOT_BYTES : NULL, w);
    uint64_t j = 0;
    for (uint64_t c = 0; c < changed; c++, j++) {
      uint64_t gap;
      if (!wh_varint_get(value, len, &at, &gap) || gap >= WORDS - j ||
          !wh_varint_get(value, len, &at, &z))
        return FALSE;
      j += gap;
      w[j] = wh_zigzag_undiff(z, w[j]);
    }
    memcpy(snap, w, WH_CC_SNAPSHOT_BYTES);
  }
  return at == len;
}

void wh_outcome_drain_encode(const WhOutcomeDrain *drain, uint32_t n, GByteArray *out)
{
  wh_varint_put(out, n);
  WhOutcomeDrain prev = {0};
  for (uint32_t i = 0; i < n; i++) {
    wh_varint_put(out, wh_zigzag_diff(drain[i].size, prev.size));
    wh_varint_put(out, wh_zigzag_diff(drain[i].fin, prev.fin));
    wh_varint_put(out, wh_zigzag_diff(drain[i].lag, prev.lag));
    wh_varint_put(out, wh_zigzag_diff(drain[i].left, prev.left));
    prev = drain[i];
  }
}

gboolean wh_outcome_drain_decode(const uint8_t *value, gsize len, uint32_t n, GArray *drain)
{
  gsize at = 0;
  uint32_t m;
  /* a vertex takes 4 B at least */
  if (value == NULL || !wh_varint_get32(value, len, &at, &m) || m != n || n > (len - at) / 4)
    return FALSE;
  g_array_set_size(drain, n);
  WhOutcomeDrain d = {0};
  for (uint32_t i = 0; i < n; i++) {
    uint64_t zl, zf, zg, zb;
    if (!wh_varint_get(value, len, &at, &zl) || !wh_varint_get(value, len, &at, &zf) ||
        !wh_varint_get(value, len, &at, &zg) || !wh_varint_get(value, len, &at, &zb))
      return FALSE;
    d.left = wh_zigzag_undiff(zb, d.left);
    d.size = wh_zigzag_undiff(zl, d.size);
    d.fin = wh_zigzag_undiff(zf, d.fin);
    d.lag = wh_zigzag_undiff(zg, d.lag);
    g_array_index(drain, WhOutcomeDrain, i) = d;
  }
  return at == len;
}
