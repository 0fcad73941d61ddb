/* The memo database of Wormhole's memoization: entries keyed by a 64-bit signature of
 * a contention phase (the flow conflict graph's hash) with, for the exact check, the
 * key's structure as bytes, and a value the caller defines (what the phase did). The
 * database only stores: building keys, checking a candidate and applying a value are
 * the caller's.
 *
 * In memory: a hash table from signature to the entries that carry it (a collision
 * keeps several). Two entries with the same signature and the same key bytes are one:
 * the database keeps the value that sorts first (by kind, so an outcome replaces a mere
 * sighting; then shorter, then bytewise smaller), so the
 * content never depends on the order of insertion.
 *
 * On disk (`--memo FILE`): a header (magic, format version, byte-order mark, build id,
 * configuration hash, entry count), the entries sorted by (signature, key), each key
 * once, each as its signature (8 B), kind (1 B), key and value lengths (varints,
 * varint.h), key and value, and a 64-bit checksum of everything before it. Files are
 * read and written as streams: loading and saving hold one entry of the file at a
 * time, whatever its size. Saving takes an exclusive lock on FILE.lock (flock; the
 * lock file stays), reads the file again, writes the union of its entries and the
 * database's (one key in both: the value that sorts first) to a temporary file in the
 * same directory, flushed, then renamed over FILE, so a reader sees the old file or
 * the new one, never a part, and runs that share a file keep each other's entries. A
 * symbolic link is followed: the file it points to is the one replaced, in its own
 * directory. A file that does not start with the magic is not a memo file and is
 * never replaced; one without write permission in its mode bits neither. A file that
 * is truncated, damaged, of another format version, byte order, build or configuration
 * is refused with a message naming the reason; the caller reports it and goes on with
 * an empty database, and saving replaces it.
 *
 * A bounded save (WhMemoSave; Wormhole's is bounded by MemoMaxBytes) caps what it
 * writes: the union's entries are kept in the file's order, (signature, key, value),
 * while the running total of the bytes they count (wh_memo_db_bytes' measure) stays
 * within max_bytes; the first entry that would pass it and every later one are left
 * out. That is the prefix a load bounded by the same max_bytes takes, so a file saved
 * under a bound loads whole under it; and what a file holds depends only on the union
 * of the entries saved into it, not on which save came first (but for a key whose
 * value gets smaller after entries were cut: an outcome of a kind that sorts first,
 * shorter than the value it replaces, leaves room the entries already cut do not come
 * back to).
 *
 * Engine-neutral: bytes in, bytes out. Cold path (per phase, not per packet). */
#ifndef WH_MEMO_DB_H
#define WH_MEMO_DB_H

#include <glib.h>
#include <stdint.h>

#define WH_MEMO_FORMAT_VERSION 6u
/* The heap an entry takes beyond the bytes wh_memo_db_bytes counts for it (its key and
 * value allocations, its bucket and array, its hash-table slot), as measured with
 * glibc's allocator: what loading a file is bounded by (WhMemoLoad). */
#define WH_MEMO_ENTRY_HEAP_BYTES 192u
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
  WH_MEMO_ERROR_CORRUPT,    /* truncated, bad checksum, bad lengths or order */
  WH_MEMO_ERROR_READ_ONLY,  /* no write permission in the file's mode: not written */
} WhMemoError;

/* What a stored phase did (the value's layout is the caller's). */
typedef enum {
  WH_MEMO_CONVERGED = 0, /* the phase reached steady rates */
  WH_MEMO_COMPLETED = 1, /* the phase ended in completions */
  WH_MEMO_SEEN = 2,      /* the pattern was seen, its outcome not (yet) known */
  WH_MEMO_DRAINED = 3,   /* the phase ran until every flow in it completed: when each did
                            (under its pattern's key and a tag, beside the pattern's entry) */
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

/* A bound on a save and what it did. */
typedef struct {
  uint64_t max_bytes; /* in: the bytes (wh_memo_db_bytes' measure) the entries written may
                         count; 0: none */
  uint64_t entries;   /* out: the union's entries (the file's and the database's) */
  uint64_t written;   /* out: the entries written: the union's first ones (in (signature,
                         key) order) within max_bytes; entries - written were left out */
} WhMemoSave;

/* Writes the database to `path`: merged under the lock with the file there, capped at
 * `save`'s bound, then renamed over it (see above). Fails, leaving the file as it is,
 * when it is not a memo file, cannot be read, or is read-only
 * (WH_MEMO_ERROR_READ_ONLY). */
gboolean wh_memo_db_save_bounded(const WhMemoDb *db, const char *path, WhMemoSave *save,
                                 GError **error);

/* wh_memo_db_save_bounded without a bound: the whole union. */
gboolean wh_memo_db_save(const WhMemoDb *db, const char *path, GError **error);

/* Bounds on a load and what it did. */
typedef struct {
  uint64_t max_bytes;  /* in: the database's bytes (wh_memo_db_bytes) not to exceed; 0: none */
  uint64_t max_memory; /* in: the heap the entries read in may take (wh_memo_entry_memory); 0:
                          none */
  uint64_t entries;    /* out: the file's entries */
  uint64_t loaded;     /* out: the entries read in: the file's first ones (in (signature, key)
                          order) that fit both bounds */
} WhMemoLoad;

/* Adds the entries of the file at `path` (marked from_file) that fit `load`'s bounds:
 * the whole file is checked first, and the entries that fit are counted without being
 * allocated, then read in; the others stay in the file (a save keeps them as far as its
 * cap allows). On any error the database is left as it was. A missing file is
 * WH_MEMO_ERROR_IO with G_FILE_ERROR_NOENT reported in the message; callers that start a
 * new database test for it first. */
gboolean wh_memo_db_load_bounded(WhMemoDb *db, const char *path, WhMemoLoad *load, GError **error);

/* wh_memo_db_load_bounded without bounds. */
gboolean wh_memo_db_load(WhMemoDb *db, const char *path, GError **error);

/* The heap one entry takes in a database, its bookkeeping included (an estimate). */
uint64_t wh_memo_entry_memory(uint32_t key_len, uint32_t value_len);

/* Whether the existing file at `path` starts like a memo file (at most 8 bytes read):
 * WH_MEMO_ERROR_MAGIC when it does not, WH_MEMO_ERROR_IO when it cannot be read. An
 * empty file, or one cut inside the magic, passes (a truncated memo file). */
gboolean wh_memo_file_probe(const char *path, GError **error);

/* What `--memo FILE` needs before anything runs: a non-empty path; a symbolic link
 * that leads to a file (one to a missing file is refused); not a directory or another
 * non-regular file; an existing directory; an existing file that starts like a memo
 * file (refused with WH_MEMO_ERROR_MAGIC otherwise). A file without write permission
 * in its mode bits sets *read_only (it will be loaded, never written); otherwise the
 * directory must be writable. Errors are "PATH: why". */
gboolean wh_memo_file_check(const char *path, gboolean *read_only, GError **error);

/* The build id written in and required of a file. */
const char *wh_memo_build_id(void);

#endif
