/* The memo database: see memo-db.h. */
#include "memo-db.h"
#include "rng.h"
#include "varint.h"
#include "wh-error.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

uint64_t wh_memo_entry_memory(uint32_t key_len, uint32_t value_len)
{
  return entry_bytes(key_len, value_len) + WH_MEMO_ENTRY_HEAP_BYTES;
}

/* The order of two values of one key: the one that sorts first is kept (by kind, then
 * bytes). */
static int value_cmp(WhMemoKind ka, const uint8_t *va, uint32_t na, WhMemoKind kb,
                     const uint8_t *vb, uint32_t nb)
{
  return ka != kb ? (ka < kb ? -1 : 1) : blob_cmp(va, na, vb, nb);
}

/* The file's order of entries: by signature, then key. */
static int entry_cmp(uint64_t sa, const uint8_t *ka, uint32_t na, uint64_t sb, const uint8_t *kb,
                     uint32_t nb)
{
  return sa != sb ? (sa < sb ? -1 : 1) : blob_cmp(ka, na, kb, nb);
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
    int v = value_cmp(kind, value, value_len, e->kind, e->value, e->value_len);
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

/* Whether the first `n` bytes of a file are its magic, or all of it when shorter (an
 * empty file, or a memo file cut inside its magic). */
static gboolean magic_ok(const uint8_t *p, gsize n)
{
  return memcmp(p, MAGIC, MIN(n, (gsize)8)) == 0;
}

/* ---- reading: a stream over the file, checksummed as it goes ---- */

typedef struct {
  FILE *f;
  const char *path; /* in messages */
  uint64_t size;    /* the file's bytes */
  uint64_t at;      /* bytes read */
  uint64_t sum;     /* FNV-1a of the bytes read */
} Reader;

/* Opens `file`, named `path` in messages. */
static gboolean reader_open(Reader *r, const char *file, const char *path, GError **error)
{
  *r = (Reader){.path = path, .sum = WH_FNV1A_INIT};
  r->f = fopen(file, "rbe");
  if (r->f == NULL)
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0, "cannot read: %s",
                           g_strerror(errno));
  struct stat st;
  if (fstat(fileno(r->f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(r->f);
    r->f = NULL;
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0, "not a regular file");
  }
  r->size = (uint64_t)st.st_size;
  return TRUE;
}

static void reader_close(Reader *r)
{
  if (r->f)
    fclose(r->f);
  r->f = NULL;
}

static gboolean reader_rewind(Reader *r)
{
  r->at = 0;
  r->sum = WH_FNV1A_INIT;
  return fseek(r->f, 0, SEEK_SET) == 0;
}

/* n bytes of the body (everything before the checksum). */
static gboolean get(Reader *r, void *p, size_t n)
{
  if (n > r->size - 8 - r->at || (n && fread(p, 1, n, r->f) != n))
    return FALSE;
  r->sum = wh_fnv1a(r->sum, p, n);
  r->at += n;
  return TRUE;
}

static gboolean get_varint32(Reader *r, uint32_t *v)
{
  uint8_t buf[WH_VARINT_MAX_BYTES];
  gsize len = 0, at = 0;
  do {
    if (len == sizeof buf || !get(r, &buf[len], 1))
      return FALSE;
  } while (buf[len++] & 0x80);
  return wh_varint_get32(buf, len, &at, v);
}

typedef struct {
  uint64_t signature;
  WhMemoKind kind;
  uint32_t key_len, value_len;
  const uint8_t *key, *value;
} Parsed;

/* Called on each entry of a walk; FALSE stops it. */
typedef gboolean (*EntryFn)(const Parsed *e, void *data);

/* The header, up to the configuration hash and entry count: the magic first, so that a
 * file that is not a memo file is told apart from a damaged one. */
static gboolean read_header(Reader *r, uint64_t *config_hash, uint64_t *n, GError **error)
{
  uint8_t h[HEADER_BYTES];
  gsize want = (gsize)MIN(r->size, (uint64_t)HEADER_BYTES);
  if (fread(h, 1, want, r->f) != want)
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, r->path, 0, "cannot read: %s",
                           g_strerror(errno ? errno : EIO));
  if (!magic_ok(h, want))
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_MAGIC, r->path, 0,
                           "not a Wormhole memo file (bad magic)");
  if (r->size < HEADER_BYTES + 8)
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_CORRUPT, r->path, 0,
                           "truncated (%" G_GUINT64_FORMAT " bytes, the header alone needs %d)",
                           r->size, HEADER_BYTES + 8);
  r->sum = wh_fnv1a(r->sum, h, HEADER_BYTES);
  r->at = HEADER_BYTES;
  uint32_t version, bom;
  memcpy(&version, h + 8, 4);
  memcpy(&bom, h + 12, 4);
  if (bom != BOM)
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_BYTE_ORDER, r->path, 0,
                           bom == GUINT32_SWAP_LE_BE(BOM)
                               ? "written on a machine of the other byte order"
                               : "bad byte-order mark");
  if (version != WH_MEMO_FORMAT_VERSION)
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_VERSION, r->path, 0,
                           "format version %u, this build reads %u", version,
                           WH_MEMO_FORMAT_VERSION);
  char build[BUILD_ID_BYTES + 1] = {0};
  memcpy(build, h + 16, BUILD_ID_BYTES);
  if (strcmp(build, wh_memo_build_id()) != 0) {
    g_autofree char *shown = g_strescape(build, NULL); /* any byte, printable */
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_BUILD, r->path, 0,
                           "written by \"%s\", this is \"%s\"", shown, wh_memo_build_id());
  }
  memcpy(config_hash, h + 16 + BUILD_ID_BYTES, 8);
  memcpy(n, h + 24 + BUILD_ID_BYTES, 8);
  return TRUE;
}

/* The entries after the header, each checked (kind, lengths, order: strictly ascending
 * (signature, key)) and handed to fn (nullable); NULL when they all are, else why not.
 * (transfer full) */
static char *read_entries(Reader *r, uint64_t n, EntryFn fn, void *data, gboolean *stopped)
{
  if (n > (r->size - 8 - r->at) / ENTRY_HEAD_MIN_BYTES)
    return g_strdup_printf("%" G_GUINT64_FORMAT " entries cannot fit", n);
  g_autoptr(GByteArray) key = g_byte_array_new(), value = g_byte_array_new();
  g_autoptr(GByteArray) prev = g_byte_array_new();
  uint64_t prev_sig = 0;
  for (uint64_t i = 0; i < n; i++) {
    Parsed e;
    uint8_t head[9];
    if (!get(r, head, sizeof head))
      return g_strdup_printf("entry %" G_GUINT64_FORMAT " truncated", i);
    memcpy(&e.signature, head, 8);
    e.kind = (WhMemoKind)head[8];
    if (!get_varint32(r, &e.key_len) || !get_varint32(r, &e.value_len) ||
        head[8] >= WH_MEMO_N_KINDS || e.key_len > WH_MEMO_MAX_BLOB_BYTES ||
        e.value_len > WH_MEMO_MAX_BLOB_BYTES ||
        (uint64_t)e.key_len + e.value_len > r->size - 8 - r->at)
      return g_strdup_printf("entry %" G_GUINT64_FORMAT " has bad lengths or kind", i);
    g_byte_array_set_size(key, e.key_len);
    g_byte_array_set_size(value, e.value_len);
    if (!get(r, key->data, e.key_len) || !get(r, value->data, e.value_len))
      return g_strdup_printf("entry %" G_GUINT64_FORMAT " truncated", i);
    if (i > 0 && entry_cmp(prev_sig, prev->data, prev->len, e.signature, key->data, e.key_len) >= 0)
      return g_strdup_printf("entry %" G_GUINT64_FORMAT " out of order (the entries are sorted "
                             "by signature and key, each once)",
                             i);
    e.key = key->data;
    e.value = value->data;
    if (fn && !fn(&e, data)) {
      *stopped = TRUE;
      return NULL;
    }
    prev_sig = e.signature;
    GByteArray *t = prev;
    prev = key;
    key = t;
  }
  if (r->at != r->size - 8)
    return g_strdup_printf("%" G_GUINT64_FORMAT " bytes after the last entry", r->size - 8 - r->at);
  return NULL;
}

/* Walks the file from its start: the header (refused at once when it is not a memo
 * file of this build's format), then every entry in order, handed to fn (nullable;
 * when fn stops the walk, TRUE at once). A file that does not check out otherwise is
 * refused after its checksum is compared: a mismatch is the reason given first, as
 * damage explains whatever else is wrong. The entry count in *n. Memory: one entry. */
static gboolean walk(Reader *r, uint64_t config_hash, uint64_t *n, EntryFn fn, void *data,
                     GError **error)
{
  if (!reader_rewind(r))
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, r->path, 0, "cannot read: %s",
                           g_strerror(errno));
  uint64_t cfg = 0;
  if (!read_header(r, &cfg, n, error))
    return FALSE;
  g_autofree char *why = NULL;
  WhMemoError code = WH_MEMO_ERROR_CORRUPT;
  gboolean stopped = FALSE;
  if (cfg != config_hash) {
    code = WH_MEMO_ERROR_CONFIG;
    why = g_strdup_printf("made with another configuration (hash %016" G_GINT64_MODIFIER
                          "x, this run's %016" G_GINT64_MODIFIER "x)",
                          cfg, config_hash);
  } else {
    why = read_entries(r, *n, fn, data, &stopped);
    if (stopped)
      return TRUE;
  }
  /* the rest, for the checksum */
  uint8_t buf[1 << 16];
  while (r->at < r->size - 8) {
    size_t k = (size_t)MIN((uint64_t)sizeof buf, r->size - 8 - r->at);
    if (!get(r, buf, k))
      return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, r->path, 0, "cannot read: %s",
                             g_strerror(errno ? errno : EIO));
  }
  uint64_t stored;
  if (fread(&stored, 1, 8, r->f) != 8)
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, r->path, 0, "cannot read: %s",
                           g_strerror(errno ? errno : EIO));
  if (stored != r->sum)
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_CORRUPT, r->path, 0,
                           "checksum mismatch (truncated or damaged)");
  if (why)
    return wh_error_set_at(error, WH_MEMO_ERROR, code, r->path, 0, "%s", why);
  return TRUE;
}

gboolean wh_memo_file_probe(const char *path, GError **error)
{
  Reader r;
  if (!reader_open(&r, path, path, error))
    return FALSE;
  uint8_t h[8];
  gsize want = (gsize)MIN(r.size, (uint64_t)sizeof h);
  gboolean read = fread(h, 1, want, r.f) == want;
  int err = errno;
  reader_close(&r);
  if (!read)
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0, "cannot read: %s",
                           g_strerror(err ? err : EIO));
  if (!magic_ok(h, want))
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_MAGIC, path, 0,
                           "not a Wormhole memo file (it does not start with " MAGIC ")");
  return TRUE;
}

/* ---- loading ---- */

typedef struct {
  WhMemoDb *db;
  const WhMemoLoad *bounds;
  uint64_t bytes, memory; /* the database's, with the entries that fit so far */
  uint64_t fit, done;     /* entries that fit (a prefix), and those inserted */
  gboolean full;
} Fit;

static gboolean fit_entry(const Parsed *e, void *data)
{
  Fit *f = data;
  if (f->full)
    return TRUE;
  f->bytes += entry_bytes(e->key_len, e->value_len);
  f->memory += wh_memo_entry_memory(e->key_len, e->value_len);
  f->full = (f->bounds->max_bytes && f->bytes > f->bounds->max_bytes) ||
            (f->bounds->max_memory && f->memory > f->bounds->max_memory);
  f->fit += !f->full;
  return TRUE;
}

static gboolean insert_entry(const Parsed *e, void *data)
{
  Fit *f = data;
  insert(f->db, e->signature, e->kind, e->key, e->key_len, e->value, e->value_len, TRUE);
  return ++f->done < f->fit;
}

gboolean wh_memo_db_load_bounded(WhMemoDb *db, const char *path, WhMemoLoad *load, GError **error)
{
  Reader r;
  if (!reader_open(&r, path, path, error))
    return FALSE;
  /* first the whole file is checked and the entries that fit are counted, without
   * allocating them; then those are read in */
  Fit f = {.db = db, .bounds = load, .bytes = db->bytes};
  uint64_t n = 0;
  gboolean ok = walk(&r, db->config_hash, &n, fit_entry, &f, error) &&
                (f.fit == 0 || walk(&r, db->config_hash, &n, insert_entry, &f, error));
  reader_close(&r);
  load->entries = ok ? n : 0;
  load->loaded = ok ? f.done : 0;
  return ok;
}

gboolean wh_memo_db_load(WhMemoDb *db, const char *path, GError **error)
{
  WhMemoLoad load = {0};
  return wh_memo_db_load_bounded(db, path, &load, error);
}

/* ---- saving: merged with the file under a lock, written to a temporary file ---- */

typedef struct {
  FILE *f;
  uint64_t sum;
} Writer;

static void put(Writer *w, const void *p, size_t n)
{
  if (n == 0)
    return;
  fwrite(p, 1, n, w->f);
  w->sum = wh_fnv1a(w->sum, p, n);
}

static void put_entry(Writer *w, uint64_t signature, WhMemoKind kind, const uint8_t *key,
                      uint32_t key_len, const uint8_t *value, uint32_t value_len)
{
  uint8_t head[9 + 2 * WH_VARINT_MAX_BYTES];
  memcpy(head, &signature, 8);
  head[8] = (uint8_t)kind;
  uint8_t *end = wh_varint_write(wh_varint_write(head + 9, key_len), value_len);
  put(w, head, (size_t)(end - head));
  put(w, key, key_len);
  put(w, value, value_len);
}

/* The union of the database's entries and a file's, in the file's order: the
 * database's walked beside the file's (one key in both: the value that sorts first),
 * counted, or written when w is set. Within max_bytes, the union's first entries are
 * kept while the bytes they count (entry_bytes, as wh_memo_db_bytes counts them) stay
 * within it; the first that would pass it and all later ones are left out. */
typedef struct {
  const WhMemoDb *db;
  GArray *sigs;       /* the database's signatures, ascending */
  guint si, bj;       /* the next entry: bucket sigs[si], entry bj */
  Writer *w;          /* nullable: only count */
  uint64_t max_bytes; /* 0: no bound */
  uint64_t bytes;     /* the kept entries' */
  gboolean full;      /* an entry did not fit: the rest are left out */
  uint64_t total;     /* the union's entries */
  uint64_t count;     /* those kept */
} Merge;

static const WhMemoEntry *merge_peek(Merge *m)
{
  for (; m->si < m->sigs->len; m->si++, m->bj = 0) {
    const Bucket *b = g_hash_table_lookup(m->db->buckets, &g_array_index(m->sigs, uint64_t, m->si));
    if (m->bj < b->entries->len)
      return &g_array_index(b->entries, WhMemoEntry, m->bj);
  }
  return NULL;
}

static void merge_emit(Merge *m, uint64_t signature, WhMemoKind kind, const uint8_t *key,
                       uint32_t key_len, const uint8_t *value, uint32_t value_len)
{
  m->total++;
  if (!m->full) {
    m->bytes += entry_bytes(key_len, value_len);
    m->full = m->max_bytes && m->bytes > m->max_bytes;
  }
  if (m->full)
    return;
  m->count++;
  if (m->w)
    put_entry(m->w, signature, kind, key, key_len, value, value_len);
}

static void merge_emit_db(Merge *m, const WhMemoEntry *e)
{
  merge_emit(m, e->signature, e->kind, e->key, e->key_len, e->value, e->value_len);
  m->bj++;
}

static gboolean merge_entry(const Parsed *d, void *data)
{
  Merge *m = data;
  const WhMemoEntry *e;
  int c = 0;
  while ((e = merge_peek(m)) != NULL &&
         (c = entry_cmp(e->signature, e->key, e->key_len, d->signature, d->key, d->key_len)) < 0)
    merge_emit_db(m, e);
  if (e && c == 0) {
    if (value_cmp(e->kind, e->value, e->value_len, d->kind, d->value, d->value_len) <= 0) {
      merge_emit_db(m, e);
      return TRUE;
    }
    m->bj++;
  }
  merge_emit(m, d->signature, d->kind, d->key, d->key_len, d->value, d->value_len);
  return TRUE;
}

static void merge_rest(Merge *m)
{
  for (const WhMemoEntry *e; (e = merge_peek(m)) != NULL;)
    merge_emit_db(m, e);
}

/* Walks the union: the file's entries (r, nullable: none) and the database's. */
static gboolean merge_walk(Merge *m, Reader *r, GError **error)
{
  m->si = m->bj = 0;
  m->bytes = m->total = m->count = 0;
  m->full = FALSE;
  uint64_t n;
  if (r && !walk(r, m->db->config_hash, &n, merge_entry, m, error))
    return FALSE;
  merge_rest(m);
  return TRUE;
}

/* Writes the union to a temporary file beside `target` (with `mode`), then renames it
 * over `target`. */
static gboolean write_union(Merge *m, Reader *r, const char *path, const char *target, mode_t mode,
                            GError **error)
{
  g_autofree char *tmp = g_strdup_printf("%s.XXXXXX", target);
  int fd = g_mkstemp_full(tmp, O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0)
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0, "cannot write: %s",
                           g_strerror(errno));
  int err = mode && fchmod(fd, mode) != 0 ? errno : 0;
  Writer w = {.f = err ? NULL : fdopen(fd, "wb"), .sum = WH_FNV1A_INIT};
  if (w.f == NULL) {
    err = err ? err : errno;
    close(fd);
  } else {
    char build[BUILD_ID_BYTES] = {0};
    g_strlcpy(build, wh_memo_build_id(), sizeof build);
    uint32_t version = WH_MEMO_FORMAT_VERSION, bom = BOM;
    uint64_t n = m->count;
    put(&w, MAGIC, 8);
    put(&w, &version, 4);
    put(&w, &bom, 4);
    put(&w, build, BUILD_ID_BYTES);
    put(&w, &m->db->config_hash, 8);
    put(&w, &n, 8);
    m->w = &w;
    g_autoptr(GError) merr = NULL;
    if (!merge_walk(m, r, &merr) || m->count != n)
      err = EIO; /* the file changed under the lock */
    m->w = NULL;
    uint64_t sum = w.sum;
    fwrite(&sum, 1, 8, w.f);
    if (err == 0 && (fflush(w.f) != 0 || ferror(w.f)))
      err = errno ? errno : EIO;
    if (err == 0 && fsync(fd) != 0)
      err = errno;
    if (fclose(w.f) != 0 && err == 0)
      err = errno;
  }
  if (err == 0 && g_rename(tmp, target) != 0)
    err = errno;
  if (err != 0) {
    g_unlink(tmp);
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0, "cannot write: %s",
                           g_strerror(err));
  }
  return TRUE;
}

/* Under the lock: the file now at `target` is read again and merged; one that is not a
 * memo file, cannot be read or is read-only is not replaced; a stale or damaged one is. */
static gboolean save_locked(const WhMemoDb *db, const char *path, const char *target,
                            WhMemoSave *save, GError **error)
{
  g_autoptr(GArray) sigs = sorted_signatures(db);
  Merge m = {.db = db, .sigs = sigs, .max_bytes = save->max_bytes};
  GStatBuf st;
  mode_t mode = 0;
  Reader r = {0};
  gboolean merge = FALSE;
  if (g_stat(target, &st) == 0) {
    if ((st.st_mode & 0222) == 0)
      return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_READ_ONLY, path, 0,
                             "read-only (no write permission in its mode): not written");
    mode = st.st_mode & 07777;
    g_autoptr(GError) err = NULL;
    merge = reader_open(&r, target, path, &err) && merge_walk(&m, &r, &err);
    if (!merge && (err->code == WH_MEMO_ERROR_MAGIC || err->code == WH_MEMO_ERROR_IO)) {
      reader_close(&r);
      g_set_error(error, WH_MEMO_ERROR, err->code, "%s: not replaced", err->message);
      return FALSE;
    }
  }
  if (!merge)
    merge_walk(&m, NULL, NULL);
  gboolean ok = write_union(&m, merge ? &r : NULL, path, target, mode, error);
  reader_close(&r);
  save->entries = ok ? m.total : 0;
  save->written = ok ? m.count : 0;
  return ok;
}

/* `path` with its symbolic links resolved; a missing path is itself (a new file). */
static char *resolve(const char *path, GError **error)
{
  GStatBuf st;
  if (g_lstat(path, &st) != 0)
    return g_strdup(path);
  char *real = realpath(path, NULL);
  if (real == NULL) {
    wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0, "%s",
                    errno == ENOENT ? "a symbolic link to a missing file" : g_strerror(errno));
    return NULL;
  }
  char *copy = g_strdup(real);
  free(real);
  return copy;
}

gboolean wh_memo_db_save_bounded(const WhMemoDb *db, const char *path, WhMemoSave *save,
                                 GError **error)
{
  save->entries = save->written = 0;
  if (g_file_test(path, G_FILE_TEST_IS_DIR))
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0, "is a directory");
  g_autofree char *target = resolve(path, error);
  if (target == NULL)
    return FALSE;
  g_autofree char *lock_path = g_strconcat(target, ".lock", NULL);
  int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (lock < 0)
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0, "cannot lock %s: %s",
                           lock_path, g_strerror(errno));
  while (flock(lock, LOCK_EX) != 0) {
    if (errno != EINTR) {
      int err = errno;
      close(lock);
      return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0, "cannot lock %s: %s",
                             lock_path, g_strerror(err));
    }
  }
  gboolean ok = save_locked(db, path, target, save, error);
  close(lock); /* releases the lock */
  return ok;
}

gboolean wh_memo_db_save(const WhMemoDb *db, const char *path, GError **error)
{
  WhMemoSave save = {0};
  return wh_memo_db_save_bounded(db, path, &save, error);
}

gboolean wh_memo_file_check(const char *path, gboolean *read_only, GError **error)
{
  *read_only = FALSE;
  GStatBuf st;
  if (path[0] == '\0')
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0, "an empty path");
  g_autofree char *target = resolve(path, error);
  if (target == NULL)
    return FALSE;
  gboolean exists = g_stat(target, &st) == 0;
  if (exists && S_ISDIR(st.st_mode))
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0, "is a directory");
  if (exists && !S_ISREG(st.st_mode))
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0, "not a regular file");
  g_autofree char *dir = g_path_get_dirname(target);
  if (!g_file_test(dir, G_FILE_TEST_IS_DIR))
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0,
                           "its directory does not exist");
  if (exists && !wh_memo_file_probe(target, error)) {
    if (g_error_matches(*error, WH_MEMO_ERROR, WH_MEMO_ERROR_MAGIC)) {
      g_clear_error(error);
      return wh_error_set_at(
          error, WH_MEMO_ERROR, WH_MEMO_ERROR_MAGIC, path, 0,
          "not a Wormhole memo file (it does not start with " MAGIC
          "); refused, and left as it is: give the path of a memo file, or a new one");
    }
    return FALSE;
  }
  *read_only = exists && (st.st_mode & 0222) == 0;
  if (!*read_only && access(dir, W_OK | X_OK) != 0)
    return wh_error_set_at(error, WH_MEMO_ERROR, WH_MEMO_ERROR_IO, path, 0,
                           "its directory is not writable");
  return TRUE;
}
