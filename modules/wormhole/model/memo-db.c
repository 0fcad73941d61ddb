/* The memo database: see memo-db.h. */
#include "memo-db.h"
#include "rng.h"
#include "varint.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

#ifndef WH_PROJECT_VERSION
#define WH_PROJECT_VERSION "unknown"
#endif

G_DEFINE_QUARK(wh - memo - error - quark, wh_memo_error)

#define MAGIC "WHMEMODB"
#define BOM 0x01020304u
#define BUILD_ID_BYTES 32
#define HEADER_BYTES (8 + 4 + 4 + BUILD_ID_BYTES + 8 + 8)
/* An entry's head: its signature, kind and two lengths, 11 B at least. */
#define ENTRY_HEAD_MIN_BYTES 11

typedef struct {
  uint64_t signature; /* the table's key points here */
  GArray *entries;    /* WhMemoEntry, owning key and value, in (key, value) order */
} Bucket;

struct WhMemoDb {
  uint64_t config_hash;
  GHashTable *buckets; /* &signature -> Bucket */
  uint32_t n;
  uint64_t bytes;
};

const char *wh_memo_build_id(void)
{
  return "wormhole-sim " WH_PROJECT_VERSION;
}

static void bucket_free(gpointer p)
{
  Bucket *b = p;
  for (guint i = 0; i < b->entries->len; i++) {
    WhMemoEntry *e = &g_array_index(b->entries, WhMemoEntry, i);
    g_free((gpointer)e->key);
    g_free((gpointer)e->value);
  }
  g_array_free(b->entries, TRUE);
  g_free(b);
}

WhMemoDb *wh_memo_db_new(uint64_t config_hash)
{
  WhMemoDb *db = g_new0(WhMemoDb, 1);
  db->config_hash = config_hash;
  db->buckets = g_hash_table_new_full(g_int64_hash, g_int64_equal, NULL, bucket_free);
  return db;
}

void wh_memo_db_free(WhMemoDb *db)
{
  if (db == NULL)
    return;
  g_hash_table_destroy(db->buckets);
  g_free(db);
}

uint64_t wh_memo_db_config_hash(const WhMemoDb *db)
{
  return db->config_hash;
}

uint32_t wh_memo_db_len(const WhMemoDb *db)
{
  return db->n;
}

uint64_t wh_memo_db_bytes(const WhMemoDb *db)
{
  return db->bytes;
}

/* Bytewise order, shorter first. */
static int blob_cmp(const uint8_t *a, uint32_t na, const uint8_t *b, uint32_t nb)
{
  if (na != nb)
    return na < nb ? -1 : 1;
  return na ? memcmp(a, b, na) : 0;
}

static uint64_t entry_bytes(uint32_t key_len, uint32_t value_len)
{
  return sizeof(WhMemoEntry) + key_len + value_len;
}

static gboolean insert(WhMemoDb *db, uint64_t signature, WhMemoKind kind, const void *key,
                       uint32_t key_len, const void *value, uint32_t value_len, gboolean from_file)
{
  Bucket *b = g_hash_table_lookup(db->buckets, &signature);
  if (b == NULL) {
    b = g_new0(Bucket, 1);
    b->signature = signature;
    b->entries = g_array_new(FALSE, FALSE, sizeof(WhMemoEntry));
    g_hash_table_insert(db->buckets, &b->signature, b);
  }
  guint at = 0;
  for (; at < b->entries->len; at++) {
    WhMemoEntry *e = &g_array_index(b->entries, WhMemoEntry, at);
    int c = blob_cmp(key, key_len, e->key, e->key_len);
    if (c < 0)
      break;
    if (c > 0)
      continue;
    /* the same key: keep the value that sorts first (kind, then bytes) */
    int v = kind != e->kind ? (kind < e->kind ? -1 : 1)
                            : blob_cmp(value, value_len, e->value, e->value_len);
    if (v >= 0) {
      e->from_file |= v == 0 && from_file; /* the file holds it too */
      return FALSE;
    }
    db->bytes += (uint64_t)value_len - e->value_len;
    g_free((gpointer)e->value);
    e->value = g_memdup2(value, value_len);
    e->value_len = value_len;
    e->kind = kind;
    e->from_file = from_file;
    return TRUE;
  }
  WhMemoEntry e = {.signature = signature,
                   .kind = kind,
                   .from_file = from_file,
                   .key_len = key_len,
                   .value_len = value_len,
                   .key = g_memdup2(key, key_len),
                   .value = g_memdup2(value, value_len)};
  g_array_insert_val(b->entries, at, e);
  db->n++;
  db->bytes += entry_bytes(key_len, value_len);
  return TRUE;
}

gboolean wh_memo_db_insert(WhMemoDb *db, uint64_t signature, WhMemoKind kind, const void *key,
                           uint32_t key_len, const void *value, uint32_t value_len)
{
  g_return_val_if_fail(db != NULL && (unsigned)kind < WH_MEMO_N_KINDS, FALSE);
  g_return_val_if_fail(key_len <= WH_MEMO_MAX_BLOB_BYTES && value_len <= WH_MEMO_MAX_BLOB_BYTES,
                       FALSE);
  return insert(db, signature, kind, key, key_len, value, value_len, FALSE);
}

const WhMemoEntry *wh_memo_db_candidates(const WhMemoDb *db, uint64_t signature, uint32_t *n)
{
  const Bucket *b = g_hash_table_lookup(db->buckets, &signature);
  *n = b ? b->entries->len : 0;
  return b ? (const WhMemoEntry *)(gconstpointer)b->entries->data : NULL;
}

/* ---- the file ---- */

static void put(GByteArray *out, const void *p, gsize n)
{
  g_byte_array_append(out, p, (guint)n);
}

static gint cmp_u64(gconstpointer a, gconstpointer b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* The signatures held, ascending. (transfer full) */
static GArray *sorted_signatures(const WhMemoDb *db)
{
  GArray *sigs = g_array_sized_new(FALSE, FALSE, sizeof(uint64_t), g_hash_table_size(db->buckets));
  GHashTableIter it;
  gpointer k;
  g_hash_table_iter_init(&it, db->buckets);
  while (g_hash_table_iter_next(&it, &k, NULL))
    g_array_append_val(sigs, *(uint64_t *)k);
  g_array_sort(sigs, cmp_u64);
  return sigs;
}

void wh_memo_db_foreach(const WhMemoDb *db, void (*fn)(const WhMemoEntry *e, void *data),
                        void *data)
{
  g_autoptr(GArray) sigs = sorted_signatures(db);
  for (guint i = 0; i < sigs->len; i++) {
    const Bucket *b = g_hash_table_lookup(db->buckets, &g_array_index(sigs, uint64_t, i));
    for (guint j = 0; j < b->entries->len; j++)
      fn(&g_array_index(b->entries, WhMemoEntry, j), data);
  }
}

gboolean wh_memo_db_save(const WhMemoDb *db, const char *path, GError **error)
{
  g_autoptr(GByteArray) out = g_byte_array_new();
  char build[BUILD_ID_BYTES] = {0};
  g_strlcpy(build, wh_memo_build_id(), sizeof build);
  uint32_t version = WH_MEMO_FORMAT_VERSION, bom = BOM;
  uint64_t n = db->n;
  put(out, MAGIC, 8);
  put(out, &version, 4);
  put(out, &bom, 4);
  put(out, build, BUILD_ID_BYTES);
  put(out, &db->config_hash, 8);
  put(out, &n, 8);
  g_autoptr(GArray) sigs = sorted_signatures(db);
  for (guint i = 0; i < sigs->len; i++) {
    const Bucket *b = g_hash_table_lookup(db->buckets, &g_array_index(sigs, uint64_t, i));
    for (guint j = 0; j < b->entries->len; j++) {
      const WhMemoEntry *e = &g_array_index(b->entries, WhMemoEntry, j);
      uint8_t kind = (uint8_t)e->kind;
      put(out, &e->signature, 8);
      put(out, &kind, 1);
      wh_varint_put(out, e->key_len);
      wh_varint_put(out, e->value_len);
      put(out, e->key, e->key_len);
      put(out, e->value, e->value_len);
    }
  }
  uint64_t sum = wh_fnv1a(WH_FNV1A_INIT, out->data, out->len);
  put(out, &sum, 8);

  if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, "%s: is a directory", path);
    return FALSE;
  }
  g_autofree char *tmp = g_strdup_printf("%s.XXXXXX", path);
  int fd = g_mkstemp_full(tmp, O_WRONLY, 0644);
  if (fd < 0) {
    g_set_error(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, "%s: cannot write: %s", path,
                g_strerror(errno));
    return FALSE;
  }
  gsize done = 0;
  while (done < out->len) {
    ssize_t w = write(fd, out->data + done, out->len - done);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    done += (gsize)w;
  }
  int err = done == out->len ? 0 : errno ? errno : EIO;
  if (err == 0 && fsync(fd) != 0)
    err = errno;
  if (close(fd) != 0 && err == 0)
    err = errno;
  if (err == 0 && g_rename(tmp, path) != 0)
    err = errno;
  if (err != 0) {
    g_unlink(tmp);
    g_set_error(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, "%s: cannot write: %s", path,
                g_strerror(err));
    return FALSE;
  }
  return TRUE;
}

static gboolean refuse(GError **error, WhMemoError code, const char *path, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

static gboolean refuse(GError **error, WhMemoError code, const char *path, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  g_autofree char *why = g_strdup_vprintf(fmt, ap);
  va_end(ap);
  g_set_error(error, WH_MEMO_ERROR, code, "%s: %s", path, why);
  return FALSE;
}

typedef struct {
  uint64_t signature;
  uint32_t kind, key_len, value_len;
  const uint8_t *key, *value;
} Parsed;

gboolean wh_memo_db_load(WhMemoDb *db, const char *path, GError **error)
{
  GStatBuf st;
  if (g_stat(path, &st) != 0)
    return refuse(error, WH_MEMO_ERROR_IO, path, "cannot read: %s", g_strerror(errno));
  if (!S_ISREG(st.st_mode))
    return refuse(error, WH_MEMO_ERROR_IO, path, "not a regular file");
  if ((guint64)st.st_size > WH_MEMO_MAX_FILE_BYTES)
    return refuse(error, WH_MEMO_ERROR_CORRUPT, path,
                  "%" G_GUINT64_FORMAT " bytes, more than a memo file may hold (%u)",
                  (guint64)st.st_size, WH_MEMO_MAX_FILE_BYTES);
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) ioerr = NULL;
  if (!g_file_get_contents(path, &text, &len, &ioerr))
    return refuse(error, WH_MEMO_ERROR_IO, path, "cannot read: %s", ioerr->message);
  const uint8_t *p = (const uint8_t *)text;
  if (len < 8 || memcmp(p, MAGIC, 8) != 0)
    return refuse(error, WH_MEMO_ERROR_MAGIC, path, "not a Wormhole memo file (bad magic)");
  if (len < HEADER_BYTES + 8)
    return refuse(error, WH_MEMO_ERROR_CORRUPT, path,
                  "truncated (%" G_GSIZE_FORMAT " bytes, the header alone needs %d)", len,
                  HEADER_BYTES + 8);
  uint32_t version, bom;
  memcpy(&version, p + 8, 4);
  memcpy(&bom, p + 12, 4);
  if (bom != BOM)
    return refuse(error, WH_MEMO_ERROR_BYTE_ORDER, path,
                  bom == GUINT32_SWAP_LE_BE(BOM) ? "written on a machine of the other byte order"
                                                 : "bad byte-order mark");
  if (version != WH_MEMO_FORMAT_VERSION)
    return refuse(error, WH_MEMO_ERROR_VERSION, path, "format version %u, this build reads %u",
                  version, WH_MEMO_FORMAT_VERSION);
  char build[BUILD_ID_BYTES + 1] = {0};
  memcpy(build, p + 16, BUILD_ID_BYTES);
  if (strcmp(build, wh_memo_build_id()) != 0)
    return refuse(error, WH_MEMO_ERROR_BUILD, path, "written by \"%s\", this is \"%s\"", build,
                  wh_memo_build_id());
  uint64_t stored_sum, cfg, n;
  memcpy(&stored_sum, p + len - 8, 8);
  if (wh_fnv1a(WH_FNV1A_INIT, p, len - 8) != stored_sum)
    return refuse(error, WH_MEMO_ERROR_CORRUPT, path, "checksum mismatch (truncated or damaged)");
  memcpy(&cfg, p + 16 + BUILD_ID_BYTES, 8);
  memcpy(&n, p + 24 + BUILD_ID_BYTES, 8);
  if (cfg != db->config_hash)
    return refuse(error, WH_MEMO_ERROR_CONFIG, path,
                  "made with another configuration (hash %016" G_GINT64_MODIFIER
                  "x, this run's %016" G_GINT64_MODIFIER "x)",
                  cfg, db->config_hash);
  gsize at = HEADER_BYTES, end = len - 8;
  if (n > (end - at) / ENTRY_HEAD_MIN_BYTES)
    return refuse(error, WH_MEMO_ERROR_CORRUPT, path, "%" G_GUINT64_FORMAT " entries cannot fit",
                  n);
  g_autoptr(GArray) parsed = g_array_sized_new(FALSE, FALSE, sizeof(Parsed), (guint)n);
  for (uint64_t i = 0; i < n; i++) {
    Parsed e;
    if (end - at < ENTRY_HEAD_MIN_BYTES)
      return refuse(error, WH_MEMO_ERROR_CORRUPT, path, "entry %" G_GUINT64_FORMAT " truncated", i);
    memcpy(&e.signature, p + at, 8);
    e.kind = p[at + 8];
    at += 9;
    if (!wh_varint_get32(p, end, &at, &e.key_len) || !wh_varint_get32(p, end, &at, &e.value_len) ||
        e.kind >= WH_MEMO_N_KINDS || e.key_len > WH_MEMO_MAX_BLOB_BYTES ||
        e.value_len > WH_MEMO_MAX_BLOB_BYTES || (gsize)e.key_len + e.value_len > end - at)
      return refuse(error, WH_MEMO_ERROR_CORRUPT, path,
                    "entry %" G_GUINT64_FORMAT " has bad lengths or kind", i);
    e.key = p + at;
    e.value = p + at + e.key_len;
    at += (gsize)e.key_len + e.value_len;
    g_array_append_val(parsed, e);
  }
  if (at != end)
    return refuse(error, WH_MEMO_ERROR_CORRUPT, path,
                  "%" G_GSIZE_FORMAT " bytes after the last entry", end - at);
  for (guint i = 0; i < parsed->len; i++) {
    const Parsed *e = &g_array_index(parsed, Parsed, i);
    insert(db, e->signature, (WhMemoKind)e->kind, e->key, e->key_len, e->value, e->value_len, TRUE);
  }
  return TRUE;
}
