/* The memo database of Wormhole's memoization: entries keyed by a 64-bit signature of
 * a contention phase (the flow conflict graph's hash) with, for the exact check, the
 * key's structure as bytes, and a value the caller defines (what the phase did). The
 * database only stores: building keys, checking a candidate and applying a value are
 * the caller's.
 *
 * In memory: a hash table from signature to the entries that carry it (a collision
 * keeps several). Two entries with the same signature and the same key bytes are one:
 * the database keeps the value that sorts first (by kind, so an outcome replaces a mere
 * sighting; then shorter, then bytewise smaller), so the content never depends on the
 * order of insertion.
 *
 * On disk (`--memo FILE`): a header (magic, format version, byte-order mark, build id,
 * configuration hash, entry count), the entries sorted by (signature, key, value), each
 * as its signature (8 B), kind (1 B), key and value lengths (varints, varint.h), key and
 * value, and a 64-bit checksum of everything before it. Written atomically: to a temporary file
 * in the same directory, flushed, then renamed over FILE, so a reader sees the old file
 * or the new one, never a part. A file that is truncated, not a memo file, of another
 * format version, byte order, build or configuration is refused with a message naming
 * the reason; the caller reports it and goes on with an empty database.
 * Engine-neutral: bytes in, bytes out. Cold path (per phase, not per packet). */
#ifndef WH_MEMO_DB_H
#define WH_MEMO_DB_H

#include <glib.h>
#include <stdint.h>

#define WH_MEMO_FORMAT_VERSION 4u
/* Largest file read (one iteration of MoE-32x22B at 1024 GPUs stores about 6 MB). */
#define WH_MEMO_MAX_FILE_BYTES (256u << 20)
/* Largest key or value of one entry. */
#define WH_MEMO_MAX_BLOB_BYTES (16u << 20)

#define WH_MEMO_ERROR (wh_memo_error_quark())
GQuark wh_memo_error_quark(void);

typedef enum {
  WH_MEMO_ERROR_IO,         /* cannot read or write the file */
  WH_MEMO_ERROR_MAGIC,      /* not a memo file */
  WH_MEMO_ERROR_VERSION,    /* another format version */
  WH_MEMO_ERROR_BYTE_ORDER, /* written with the other byte order */
  WH_MEMO_ERROR_BUILD,      /* written by another build */
  WH_MEMO_ERROR_CONFIG,     /* another network or CC configuration */
  WH_MEMO_ERROR_CORRUPT,    /* truncated, bad checksum or bad lengths */
} WhMemoError;

/* What a stored phase did (the value's layout is the caller's). */
typedef enum {
  WH_MEMO_CONVERGED = 0, /* the phase reached steady rates */
  WH_MEMO_COMPLETED = 1, /* the phase ended in completions */
  WH_MEMO_SEEN = 2,      /* the pattern was seen, its outcome not (yet) known */
  WH_MEMO_N_KINDS
} WhMemoKind;

typedef struct {
  uint64_t signature;
  WhMemoKind kind;
  gboolean from_file; /* loaded, not inserted in this run */
  uint32_t key_len, value_len;
  const uint8_t *key, *value;
} WhMemoEntry;

typedef struct WhMemoDb WhMemoDb;

/* An empty database for one configuration (wh_config_digest of the network, transport,
 * queue-disc, CC and topology parameters). */
WhMemoDb *wh_memo_db_new(uint64_t config_hash);
void wh_memo_db_free(WhMemoDb *db);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhMemoDb, wh_memo_db_free)

uint64_t wh_memo_db_config_hash(const WhMemoDb *db);

/* Adds an entry (the bytes are copied). Returns TRUE if the database changed: a new
 * entry, or a value that sorts before the one stored under the same key. */
gboolean wh_memo_db_insert(WhMemoDb *db, uint64_t signature, WhMemoKind kind, const void *key,
                           uint32_t key_len, const void *value, uint32_t value_len);

/* The entries stored under `signature`, in (key, value) order: *n of them, valid until
 * the next insert or load (transfer none; NULL when there are none). */
const WhMemoEntry *wh_memo_db_candidates(const WhMemoDb *db, uint64_t signature, uint32_t *n);

/* Calls fn on every entry, in (signature, key, value) order. */
void wh_memo_db_foreach(const WhMemoDb *db, void (*fn)(const WhMemoEntry *e, void *data),
                        void *data);

/* Entries, and the bytes they hold (keys, values and their bookkeeping). */
uint32_t wh_memo_db_len(const WhMemoDb *db);
uint64_t wh_memo_db_bytes(const WhMemoDb *db);

/* Writes the database to `path` atomically (see above). */
gboolean wh_memo_db_save(const WhMemoDb *db, const char *path, GError **error);

/* Adds the entries of the file at `path` (marked from_file). On any error the database
 * is left as it was. A missing file is WH_MEMO_ERROR_IO with G_FILE_ERROR_NOENT
 * reported in the message; callers that start a new database test for it first. */
gboolean wh_memo_db_load(WhMemoDb *db, const char *path, GError **error);

/* The build id written in and required of a file. */
const char *wh_memo_build_id(void);

#endif
