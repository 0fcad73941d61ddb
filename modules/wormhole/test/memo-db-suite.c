/* The memo database: content independent of insertion order, a file round trip that
 * is byte for byte stable, every kind of bad file refused with its reason and the
 * database left as it was, atomic saves that merge with the file, capped saves,
 * bounded loads, and the configuration digest that namespaces a file. */
#include <check.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "fcg.h"
#include "memo-db.h"
#include "registry.h"
#include "rng.h"
#include "test-util.h"
#include "wormhole-private.h"

typedef struct {
  uint64_t sig;
  WhMemoKind kind;
  const char *key, *value;
} Item;

/* signatures 7 and 9 collide on purpose (two keys each); key "a" of 7 twice */
static const Item items[] = {
    {7, WH_MEMO_CONVERGED, "a", "value-1"},       {9, WH_MEMO_COMPLETED, "x", "v"},
    {7, WH_MEMO_CONVERGED, "b", "value-2"},       {3, WH_MEMO_CONVERGED, "k", ""},
    {7, WH_MEMO_CONVERGED, "a", "value-0"},       {9, WH_MEMO_CONVERGED, "yy", "w"},
    {1ull << 63, WH_MEMO_COMPLETED, "z", "tail"},
};

static WhMemoDb *fill(const guint *order, guint n)
{
  WhMemoDb *db = wh_memo_db_new(0x1234);
  for (guint i = 0; i < n; i++) {
    const Item *it = &items[order[i]];
    wh_memo_db_insert(db, it->sig, it->kind, it->key, (uint32_t)strlen(it->key), it->value,
                      (uint32_t)strlen(it->value));
  }
  return db;
}

static char *tmp_dir(void)
{
  char *dir = g_dir_make_tmp("memo-XXXXXX", NULL);
  ck_assert_ptr_nonnull(dir);
  return dir;
}

static GBytes *file_bytes(const char *path)
{
  char *text = NULL;
  gsize len = 0;
  ck_assert(g_file_get_contents(path, &text, &len, NULL));
  return g_bytes_new_take(text, len);
}

START_TEST(test_order_independent)
{
  guint n = G_N_ELEMENTS(items);
  guint fwd[G_N_ELEMENTS(items)], rev[G_N_ELEMENTS(items)];
  for (guint i = 0; i < n; i++) {
    fwd[i] = i;
    rev[i] = n - 1 - i;
  }
  g_autoptr(WhMemoDb) a = fill(fwd, n);
  g_autoptr(WhMemoDb) b = fill(rev, n);
  /* 7 entries less the duplicate key */
  ck_assert_uint_eq(wh_memo_db_len(a), n - 1);
  ck_assert_uint_eq(wh_memo_db_len(b), n - 1);
  ck_assert_uint_eq(wh_memo_db_bytes(a), wh_memo_db_bytes(b));
  uint32_t k = 0;
  const WhMemoEntry *e = wh_memo_db_candidates(a, 7, &k);
  ck_assert_uint_eq(k, 2);
  /* the duplicate keeps the value that sorts first, whatever came first */
  ck_assert_uint_eq(e[0].key_len, 1);
  ck_assert_int_eq(e[0].key[0], 'a');
  ck_assert(e[0].value_len == 7 && memcmp(e[0].value, "value-0", 7) == 0);
  ck_assert(!e[0].from_file);
  ck_assert_int_eq(e[1].key[0], 'b');
  ck_assert_ptr_null(wh_memo_db_candidates(a, 8, &k));
  ck_assert_uint_eq(k, 0);
  /* a worse value for a stored key changes nothing */
  ck_assert(!wh_memo_db_insert(a, 7, WH_MEMO_CONVERGED, "a", 1, "value-9", 7));
  ck_assert(wh_memo_db_insert(a, 7, WH_MEMO_CONVERGED, "a", 1, "v", 1));
  ck_assert(wh_memo_db_insert(b, 7, WH_MEMO_CONVERGED, "a", 1, "v", 1));

  g_autofree char *dir = tmp_dir();
  g_autofree char *pa = g_build_filename(dir, "a.memo", NULL);
  g_autofree char *pb = g_build_filename(dir, "b.memo", NULL);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_memo_db_save(a, pa, &err), "%s", err ? err->message : "");
  ck_assert(wh_memo_db_save(b, pb, NULL));
  g_autoptr(GBytes) ba = file_bytes(pa);
  g_autoptr(GBytes) bb = file_bytes(pb);
  ck_assert(g_bytes_equal(ba, bb));
  wh_test_remove_tree(dir);
}
END_TEST

START_TEST(test_round_trip)
{
  guint order[] = {0, 1, 2, 3, 4, 5, 6};
  g_autoptr(WhMemoDb) a = fill(order, G_N_ELEMENTS(order));
  g_autofree char *dir = tmp_dir();
  g_autofree char *p1 = g_build_filename(dir, "one.memo", NULL);
  g_autofree char *p2 = g_build_filename(dir, "two.memo", NULL);
  ck_assert(wh_memo_db_save(a, p1, NULL));
  g_autoptr(WhMemoDb) b = wh_memo_db_new(0x1234);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_memo_db_load(b, p1, &err), "%s", err ? err->message : "");
  ck_assert_uint_eq(wh_memo_db_len(b), wh_memo_db_len(a));
  ck_assert_uint_eq(wh_memo_db_bytes(b), wh_memo_db_bytes(a));
  for (guint i = 0; i < G_N_ELEMENTS(items); i++) {
    uint32_t na = 0, nb = 0;
    const WhMemoEntry *ea = wh_memo_db_candidates(a, items[i].sig, &na);
    const WhMemoEntry *eb = wh_memo_db_candidates(b, items[i].sig, &nb);
    ck_assert_uint_eq(na, nb);
    for (uint32_t j = 0; j < na; j++) {
      ck_assert_uint_eq(ea[j].kind, eb[j].kind);
      ck_assert(ea[j].key_len == eb[j].key_len && !memcmp(ea[j].key, eb[j].key, ea[j].key_len));
      ck_assert(ea[j].value_len == eb[j].value_len &&
                (ea[j].value_len == 0 || !memcmp(ea[j].value, eb[j].value, ea[j].value_len)));
      ck_assert(eb[j].from_file);
    }
  }
  /* saved again: the same bytes */
  ck_assert(wh_memo_db_save(b, p2, NULL));
  g_autoptr(GBytes) b1 = file_bytes(p1);
  g_autoptr(GBytes) b2 = file_bytes(p2);
  ck_assert(g_bytes_equal(b1, b2));
  /* a second load of the same file adds nothing */
  ck_assert(wh_memo_db_load(b, p1, NULL));
  ck_assert_uint_eq(wh_memo_db_len(b), wh_memo_db_len(a));
  wh_test_remove_tree(dir);
}
END_TEST

/* Writes `bytes` (len) to path. */
static void write_bytes(const char *path, const void *bytes, gsize len)
{
  ck_assert(g_file_set_contents(path, bytes, (gssize)len, NULL));
}

START_TEST(test_bad_files)
{
  guint order[] = {0, 1, 2, 3, 4, 5, 6};
  g_autoptr(WhMemoDb) a = fill(order, G_N_ELEMENTS(order));
  g_autofree char *dir = tmp_dir();
  g_autofree char *good = g_build_filename(dir, "good.memo", NULL);
  g_autofree char *bad = g_build_filename(dir, "bad.memo", NULL);
  ck_assert(wh_memo_db_save(a, good, NULL));
  g_autoptr(GBytes) gb = file_bytes(good);
  gsize len = 0;
  const uint8_t *orig = g_bytes_get_data(gb, &len);
  g_autofree uint8_t *buf = g_malloc(len);
  struct {
    const char *what;
    gsize offset; /* byte to change (G_MAXSIZE: none) */
    uint8_t xor ;
    gsize keep; /* bytes kept (truncation) */
    WhMemoError code;
    const char *says;
  } cases[] = {
      {"wrong magic", 0, 0x20, len, WH_MEMO_ERROR_MAGIC, "not a Wormhole memo file"},
      {"wrong version", 8, 0x01, len, WH_MEMO_ERROR_VERSION, "format version"},
      {"other build", 16, 0x01, len, WH_MEMO_ERROR_BUILD, "written by"},
      {"payload damaged", len - 12, 0x40, len, WH_MEMO_ERROR_CORRUPT, "checksum"},
      {"checksum damaged", len - 1, 0x01, len, WH_MEMO_ERROR_CORRUPT, "checksum"},
      {"truncated in an entry", G_MAXSIZE, 0, len - 20, WH_MEMO_ERROR_CORRUPT, "checksum"},
      {"truncated in the header", G_MAXSIZE, 0, 30, WH_MEMO_ERROR_CORRUPT, "truncated"},
      {"empty (a memo file cut short, not another file)", G_MAXSIZE, 0, 0, WH_MEMO_ERROR_CORRUPT,
       "truncated"},
      {"cut inside the magic", G_MAXSIZE, 0, 5, WH_MEMO_ERROR_CORRUPT, "truncated"},
  };
  for (guint c = 0; c < G_N_ELEMENTS(cases); c++) {
    memcpy(buf, orig, len);
    if (cases[c].offset != G_MAXSIZE)
      buf[cases[c].offset] ^= cases[c].xor ;
    write_bytes(bad, buf, cases[c].keep);
    g_autoptr(WhMemoDb) b = wh_memo_db_new(0x1234);
    wh_memo_db_insert(b, 5, WH_MEMO_CONVERGED, "q", 1, "r", 1);
    g_autoptr(GError) err = NULL;
    ck_assert_msg(!wh_memo_db_load(b, bad, &err), "%s: loaded", cases[c].what);
    ck_assert_msg(g_error_matches(err, WH_MEMO_ERROR, (gint)cases[c].code), "%s: %s", cases[c].what,
                  err->message);
    ck_assert_msg(strstr(err->message, cases[c].says) && strstr(err->message, bad), "%s: %s",
                  cases[c].what, err->message);
    /* left as it was */
    ck_assert_uint_eq(wh_memo_db_len(b), 1);
  }
  /* the other byte order: the mark swapped */
  memcpy(buf, orig, len);
  uint32_t bom;
  memcpy(&bom, buf + 12, 4);
  bom = GUINT32_SWAP_LE_BE(bom);
  memcpy(buf + 12, &bom, 4);
  write_bytes(bad, buf, len);
  g_autoptr(WhMemoDb) c = wh_memo_db_new(0x1234);
  g_autoptr(GError) err = NULL;
  ck_assert(!wh_memo_db_load(c, bad, &err));
  ck_assert(g_error_matches(err, WH_MEMO_ERROR, WH_MEMO_ERROR_BYTE_ORDER));
  ck_assert_ptr_nonnull(strstr(err->message, "other byte order"));
  /* another configuration */
  g_autoptr(WhMemoDb) d = wh_memo_db_new(0x1235);
  g_clear_error(&err);
  ck_assert(!wh_memo_db_load(d, good, &err));
  ck_assert(g_error_matches(err, WH_MEMO_ERROR, WH_MEMO_ERROR_CONFIG));
  ck_assert_uint_eq(wh_memo_db_len(d), 0);
  /* not there; a directory */
  g_autofree char *none = g_build_filename(dir, "none.memo", NULL);
  g_clear_error(&err);
  ck_assert(!wh_memo_db_load(d, none, &err));
  ck_assert(g_error_matches(err, WH_MEMO_ERROR, WH_MEMO_ERROR_IO));
  g_clear_error(&err);
  ck_assert(!wh_memo_db_load(d, dir, &err));
  ck_assert(g_error_matches(err, WH_MEMO_ERROR, WH_MEMO_ERROR_IO));
  g_unlink(bad);
  wh_test_remove_tree(dir);
}
END_TEST

START_TEST(test_atomic_save)
{
  guint order[] = {0, 1, 2};
  g_autoptr(WhMemoDb) a = fill(order, G_N_ELEMENTS(order));
  g_autofree char *dir = tmp_dir();
  g_autofree char *path = g_build_filename(dir, "db.memo", NULL);
  ck_assert(wh_memo_db_save(a, path, NULL));
  g_autoptr(GBytes) before = file_bytes(path);
  /* a save that cannot happen leaves the old file whole and no temporary behind (the
   * lock file beside it stays) */
  g_autoptr(GError) err = NULL;
  ck_assert(!wh_memo_db_save(a, dir, &err));
  ck_assert(g_error_matches(err, WH_MEMO_ERROR, WH_MEMO_ERROR_IO));
  ck_assert_ptr_nonnull(strstr(err->message, "directory"));
  g_autofree char *nowhere = g_build_filename(dir, "no-such-dir", "db.memo", NULL);
  g_clear_error(&err);
  ck_assert(!wh_memo_db_save(a, nowhere, &err));
  ck_assert_ptr_nonnull(strstr(err->message, nowhere));
  g_autoptr(GBytes) after = file_bytes(path);
  ck_assert(g_bytes_equal(before, after));
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  guint files = 0;
  for (const char *n; (n = g_dir_read_name(d)) != NULL;)
    files += strcmp(n, "db.memo.lock") != 0;
  ck_assert_uint_eq(files, 1);
  wh_test_remove_tree(dir);
}
END_TEST

START_TEST(test_merge_and_bounds)
{
  /* two databases saved to one file: the file holds their union, as one database with
   * every entry would write it (the duplicate key keeps the value that sorts first) */
  guint first[] = {0, 1, 2}, second[] = {3, 4, 5, 6}, all[] = {0, 1, 2, 3, 4, 5, 6};
  g_autoptr(WhMemoDb) x = fill(first, G_N_ELEMENTS(first));
  g_autoptr(WhMemoDb) y = fill(second, G_N_ELEMENTS(second));
  g_autoptr(WhMemoDb) u = fill(all, G_N_ELEMENTS(all));
  g_autofree char *dir = tmp_dir();
  g_autofree char *shared = g_build_filename(dir, "shared.memo", NULL);
  g_autofree char *whole = g_build_filename(dir, "whole.memo", NULL);
  g_autoptr(GError) err = NULL;
  ck_assert_msg(wh_memo_db_save(x, shared, &err), "%s", err ? err->message : "");
  ck_assert_msg(wh_memo_db_save(y, shared, &err), "%s", err ? err->message : "");
  ck_assert(wh_memo_db_save(u, whole, NULL));
  g_autoptr(GBytes) bs = file_bytes(shared);
  g_autoptr(GBytes) bw = file_bytes(whole);
  ck_assert(g_bytes_equal(bs, bw));

  /* a bounded load reads the file's first entries that fit, and says so */
  g_autoptr(WhMemoDb) b = wh_memo_db_new(0x1234);
  WhMemoLoad load = {.max_bytes = 2 * wh_memo_db_bytes(u) / wh_memo_db_len(u)};
  ck_assert(wh_memo_db_load_bounded(b, whole, &load, NULL));
  ck_assert_uint_eq(load.entries, wh_memo_db_len(u));
  ck_assert_uint_gt(load.loaded, 0);
  ck_assert_uint_lt(load.loaded, load.entries);
  ck_assert_uint_eq(wh_memo_db_len(b), load.loaded);
  ck_assert_uint_le(wh_memo_db_bytes(b), load.max_bytes);
  ck_assert_ptr_nonnull(wh_memo_db_candidates(b, 3, &(uint32_t){0})); /* the first signature */
  WhMemoLoad heap = {.max_memory = wh_memo_entry_memory(1, 1)};
  g_autoptr(WhMemoDb) h = wh_memo_db_new(0x1234);
  ck_assert(wh_memo_db_load_bounded(h, whole, &heap, NULL));
  ck_assert_uint_eq(heap.loaded, 1);

  /* entries out of order (two swapped, the checksum made right) are refused */
  g_autoptr(WhMemoDb) two = wh_memo_db_new(0x1234);
  wh_memo_db_insert(two, 1, WH_MEMO_SEEN, "k", 1, NULL, 0);
  wh_memo_db_insert(two, 2, WH_MEMO_SEEN, "k", 1, NULL, 0);
  g_autofree char *swapped = g_build_filename(dir, "swapped.memo", NULL);
  ck_assert(wh_memo_db_save(two, swapped, NULL));
  g_autoptr(GBytes) tb = file_bytes(swapped);
  gsize len = 0;
  const uint8_t *t = g_bytes_get_data(tb, &len);
  ck_assert_uint_eq(len, 64 + 2 * 12 + 8);
  uint8_t buf[64 + 2 * 12 + 8];
  memcpy(buf, t, 64);
  memcpy(buf + 64, t + 76, 12);
  memcpy(buf + 76, t + 64, 12);
  uint64_t sum = wh_fnv1a(WH_FNV1A_INIT, buf, 88);
  memcpy(buf + 88, &sum, 8);
  write_bytes(swapped, buf, sizeof buf);
  g_autoptr(WhMemoDb) o = wh_memo_db_new(0x1234);
  g_clear_error(&err);
  ck_assert(!wh_memo_db_load(o, swapped, &err));
  ck_assert_msg(g_error_matches(err, WH_MEMO_ERROR, WH_MEMO_ERROR_CORRUPT) &&
                    strstr(err->message, "out of order"),
                "%s", err->message);
  /* a save over it replaces it (a damaged database), a save over a file that is not a
   * memo file does not */
  g_clear_error(&err);
  ck_assert_msg(wh_memo_db_save(two, swapped, &err), "%s", err ? err->message : "");
  g_autofree char *other = g_build_filename(dir, "notes.txt", NULL);
  write_bytes(other, "notes\n", 6);
  g_clear_error(&err);
  ck_assert(!wh_memo_db_save(two, other, &err));
  ck_assert_msg(g_error_matches(err, WH_MEMO_ERROR, WH_MEMO_ERROR_MAGIC), "%s", err->message);
  g_autoptr(GBytes) nb = file_bytes(other);
  ck_assert_uint_eq(g_bytes_get_size(nb), 6);
  wh_test_remove_tree(dir);
}
END_TEST

/* An entry of the capped-save test: its fields, copied. */
typedef struct {
  uint64_t sig;
  WhMemoKind kind;
  GBytes *key, *value;
} Copy;

static void copy_entry(const WhMemoEntry *e, void *data)
{
  Copy c = {.sig = e->signature,
            .kind = e->kind,
            .key = g_bytes_new(e->key, e->key_len),
            .value = g_bytes_new(e->value, e->value_len)};
  g_array_append_val((GArray *)data, c);
}

static void copy_clear(gpointer p)
{
  Copy *c = p;
  g_bytes_unref(c->key);
  g_bytes_unref(c->value);
}

/* The file's order: signature, then key (shorter first, then bytewise). */
static gint copy_cmp(gconstpointer a, gconstpointer b)
{
  const Copy *x = a, *y = b;
  if (x->sig != y->sig)
    return x->sig < y->sig ? -1 : 1;
  gsize nx = g_bytes_get_size(x->key), ny = g_bytes_get_size(y->key);
  if (nx != ny)
    return nx < ny ? -1 : 1;
  return nx ? memcmp(g_bytes_get_data(x->key, NULL), g_bytes_get_data(y->key, NULL), nx) : 0;
}

/* The bytes wh_memo_db_bytes counts for an entry. */
static uint64_t copy_bytes(const Copy *c)
{
  return sizeof(WhMemoEntry) + g_bytes_get_size(c->key) + g_bytes_get_size(c->value);
}

/* Entry i of a capped-save database: its key and value depend on the signature only, so
 * the two databases agree where they overlap; some values are long, most short. */
static void insert_numbered(WhMemoDb *db, uint64_t sig, WhMemoKind kind)
{
  char key[32], value[200];
  int kn = g_snprintf(key, sizeof key, "key-%" G_GUINT64_FORMAT, sig);
  guint vn = sig % 7 == 0 ? 150 : (guint)(sig % 13);
  memset(value, (int)('a' + sig % 26), vn);
  wh_memo_db_insert(db, sig, kind, key, (uint32_t)kn, value, vn);
}

START_TEST(test_save_capped)
{
  /* two databases whose union exceeds the cap, overlapping on some keys (one of them
   * with a sighting in x and an outcome in y: the outcome wins) */
  g_autoptr(WhMemoDb) x = wh_memo_db_new(0x1234);
  g_autoptr(WhMemoDb) y = wh_memo_db_new(0x1234);
  for (uint64_t i = 0; i < 40; i++)
    insert_numbered(x, i * 3, WH_MEMO_CONVERGED);
  for (uint64_t i = 0; i < 40; i++)
    insert_numbered(y, i * 5, WH_MEMO_CONVERGED);
  wh_memo_db_insert(x, 1000, WH_MEMO_SEEN, "both", 4, NULL, 0);
  wh_memo_db_insert(y, 1000, WH_MEMO_COMPLETED, "both", 4, "outcome", 7);

  /* the expected file: the union sorted, kept while the running bytes stay within the
   * cap; the cap chosen so that the first entry left out is a long one followed by a
   * short one that alone would still fit (it is left out too) */
  g_autoptr(GArray) all = g_array_new(FALSE, FALSE, sizeof(Copy));
  g_array_set_clear_func(all, copy_clear);
  g_autoptr(WhMemoDb) u = wh_memo_db_new(0x1234);
  for (uint64_t i = 0; i < 40; i++) {
    insert_numbered(u, i * 3, WH_MEMO_CONVERGED);
    insert_numbered(u, i * 5, WH_MEMO_CONVERGED);
  }
  wh_memo_db_insert(u, 1000, WH_MEMO_COMPLETED, "both", 4, "outcome", 7);
  wh_memo_db_foreach(u, copy_entry, all);
  g_array_sort(all, copy_cmp);
  ck_assert_uint_eq(all->len, wh_memo_db_len(u));
  uint64_t total = 0;
  for (guint i = 0; i < all->len; i++)
    total += copy_bytes(&g_array_index(all, Copy, i));
  ck_assert_uint_eq(total, wh_memo_db_bytes(u));
  guint cut = all->len;
  uint64_t before = 0;
  for (guint i = all->len / 3; i + 1 < all->len && cut == all->len; i++)
    if (copy_bytes(&g_array_index(all, Copy, i)) > copy_bytes(&g_array_index(all, Copy, i + 1)))
      cut = i;
  ck_assert_uint_lt(cut, all->len);
  for (guint i = 0; i < cut; i++)
    before += copy_bytes(&g_array_index(all, Copy, i));
  uint64_t cap = before + copy_bytes(&g_array_index(all, Copy, cut + 1));
  ck_assert_uint_lt(cap, total);
  g_autoptr(WhMemoDb) kept = wh_memo_db_new(0x1234);
  uint64_t running = 0;
  guint n_kept = 0;
  for (guint i = 0; i < all->len; i++) {
    const Copy *c = &g_array_index(all, Copy, i);
    running += copy_bytes(c);
    if (running > cap)
      break;
    gsize kn, vn;
    const void *k = g_bytes_get_data(c->key, &kn), *v = g_bytes_get_data(c->value, &vn);
    wh_memo_db_insert(kept, c->sig, c->kind, k, (uint32_t)kn, v, (uint32_t)vn);
    n_kept++;
  }
  ck_assert_uint_eq(n_kept, cut);

  g_autofree char *dir = tmp_dir();
  g_autofree char *xy = g_build_filename(dir, "xy.memo", NULL);
  g_autofree char *yx = g_build_filename(dir, "yx.memo", NULL);
  g_autofree char *expected = g_build_filename(dir, "expected.memo", NULL);
  g_autoptr(GError) err = NULL;
  WhMemoSave save = {.max_bytes = cap};
  ck_assert_msg(wh_memo_db_save_bounded(x, xy, &save, &err), "%s", err ? err->message : "");
  ck_assert_msg(wh_memo_db_save_bounded(y, xy, &save, &err), "%s", err ? err->message : "");
  ck_assert_uint_gt(save.entries, save.written); /* the file's (capped) and y's */
  ck_assert_uint_eq(save.written, cut);
  ck_assert(wh_memo_db_save_bounded(y, yx, &save, NULL));
  ck_assert(wh_memo_db_save_bounded(x, yx, &save, NULL));
  ck_assert_uint_eq(save.written, cut);
  ck_assert(wh_memo_db_save(kept, expected, NULL));
  g_autoptr(GBytes) bxy = file_bytes(xy);
  g_autoptr(GBytes) byx = file_bytes(yx);
  g_autoptr(GBytes) bexp = file_bytes(expected);
  ck_assert_msg(g_bytes_equal(bxy, bexp), "the capped file holds %zu bytes, the prefix %zu",
                g_bytes_get_size(bxy), g_bytes_get_size(bexp));
  ck_assert(g_bytes_equal(bxy, byx));

  /* a load bounded by the same cap takes the file whole */
  g_autoptr(WhMemoDb) back = wh_memo_db_new(0x1234);
  WhMemoLoad load = {.max_bytes = cap};
  ck_assert_msg(wh_memo_db_load_bounded(back, xy, &load, &err), "%s", err ? err->message : "");
  ck_assert_uint_eq(load.entries, cut);
  ck_assert_uint_eq(load.loaded, cut);
  ck_assert_uint_le(wh_memo_db_bytes(back), cap);

  /* saved again under the cap, with nothing new: the same bytes; without a cap, the
   * union whole */
  ck_assert(wh_memo_db_save_bounded(back, xy, &save, NULL));
  g_autoptr(GBytes) again = file_bytes(xy);
  ck_assert(g_bytes_equal(again, bexp));
  ck_assert(wh_memo_db_save(x, expected, NULL));
  ck_assert(wh_memo_db_save(y, expected, NULL));
  g_autoptr(WhMemoDb) whole = wh_memo_db_new(0x1234);
  ck_assert(wh_memo_db_load(whole, expected, NULL));
  ck_assert_uint_eq(wh_memo_db_len(whole), all->len);
  wh_test_remove_tree(dir);
}
END_TEST

START_TEST(test_config_digest)
{
  static const char *const kinds[] = {"network",  "transport", "queue-disc", "congestion-control",
                                      "topology", NULL};
  g_autoptr(WhConfig) a = wh_config_new();
  g_autoptr(WhConfig) b = wh_config_new();
  uint64_t plain = wh_config_digest(a, kinds);
  ck_assert_uint_eq(plain, wh_config_digest(b, kinds));
  /* the same values set in another order, or a default set explicitly: the same */
  ck_assert(wh_config_set(a, "wh::Link::Rate", "400Gbps", NULL, NULL));
  ck_assert(wh_config_set(a, "wh::DcqcnCc::Kmin", "400KB", NULL, NULL));
  ck_assert(wh_config_set(b, "wh::DcqcnCc::Kmin", "400000B", NULL, NULL));
  ck_assert(wh_config_set(b, "wh::Link::Rate", "400000000000bps", NULL, NULL));
  ck_assert_uint_eq(wh_config_digest(a, kinds), wh_config_digest(b, kinds));
  ck_assert_uint_ne(wh_config_digest(a, kinds), plain);
  /* a parameter of a kind left out does not count; one of a kind in does */
  uint64_t before = wh_config_digest(a, kinds);
  ck_assert(wh_config_set(a, "wh::Wormhole::Theta", "0.07", NULL, NULL));
  ck_assert_uint_eq(wh_config_digest(a, kinds), before);
  ck_assert(wh_config_set(a, "wh::RdmaFlow::Mtu", "4096B", NULL, NULL));
  ck_assert_uint_ne(wh_config_digest(a, kinds), before);
}
END_TEST

/* Two runs wrote the same outputs (wh_test_fingerprint). */
static void assert_same_outputs(const WhRun *a, const WhRun *b)
{
  g_autofree char *fa = wh_test_fingerprint(a);
  g_autofree char *fb = wh_test_fingerprint(b);
  ck_assert_str_eq(fa, fb);
}

/* `run` of `sc` with `opts` comes out the same when run again. */
static void assert_deterministic(const WhRun *run, WhScenario *sc, const WhRunOptions *opts)
{
  g_autoptr(WhRun) again = wh_test_run(sc, opts);
  assert_same_outputs(run, again);
}

/* ---- contention patterns counted in a run ---- */

/* Rounds 5 ms apart on a 3-pair dumbbell, each of 2 flows (0->3, 1->4) of 2 MB; the
 * round numbered `wide` (none: 99) has a third flow, 2->5. */
static WhScenario *rounds(unsigned n, unsigned wide)
{
  WhScenario *sc = wh_scenario_new("rounds", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "3");
  for (unsigned r = 0; r < n; r++) {
    for (unsigned i = 0; i < (r == wide ? 3u : 2u); i++)
      wh_scenario_add_flow(sc, i, 3 + i, 2000000, r * 5 * WH_MS);
  }
  return sc;
}

/* Rounds 5 ms apart on a 3-pair dumbbell: a flow of 2 MB and one of 4 MB + 1 MB per
 * round, so the phase's pattern repeats while the second flow's bytes do not. */
static WhScenario *rounds_growing(unsigned n)
{
  WhScenario *sc = wh_scenario_new("rounds-growing", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "3");
  for (unsigned r = 0; r < n; r++) {
    wh_scenario_add_flow(sc, 0, 3, 2000000, r * 5 * WH_MS);
    wh_scenario_add_flow(sc, 1, 4, 4000000 + r * 1000000, r * 5 * WH_MS);
  }
  return sc;
}

/* Replays started, of every kind. */
static uint64_t replays_of(const WhPatternStats *ps)
{
  uint64_t n = 0;
  for (unsigned k = 0; k < WH_MEMO_N_KINDS; k++)
    n += ps->replays[k];
  return n;
}

typedef struct {
  uint32_t outcomes, seen;
  uint64_t max_bytes;
} OutcomeCheck;

/* Every stored outcome decodes: its graph's vertex count, a positive duration, bytes a
 * flow could have received, a completed phase's vertex in range. */
static void check_outcome(const WhMemoEntry *e, void *data)
{
  OutcomeCheck *c = data;
  if (e->kind == WH_MEMO_SEEN) {
    c->seen++;
    return;
  }
  c->outcomes++;
  g_autoptr(WhFcg) g = wh_fcg_deserialize(e->key, e->key_len);
  ck_assert_ptr_nonnull(g);
  WhOutcomeHead head;
  g_autoptr(GArray) bytes = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  g_autoptr(GByteArray) snaps = g_byte_array_new();
  g_autoptr(GArray) steady = g_array_new(FALSE, FALSE, sizeof(WhOutcomeSteady));
  uint32_t n = wh_fcg_n_vertices(g);
  ck_assert(wh_outcome_decode(e->value, e->value_len, n, &head, bytes, snaps, steady));
  ck_assert_uint_eq(head.n, n);
  /* another vertex count, or a byte less, is refused */
  ck_assert(!wh_outcome_decode(e->value, e->value_len, n + 1, &head, NULL, NULL, NULL));
  ck_assert(!wh_outcome_decode(e->value, e->value_len - 1, n, &head, NULL, NULL, NULL));
  /* a damaged value: refused or decoded, never read past its end */
  g_autofree uint8_t *bad = g_memdup2(e->value, e->value_len);
  for (uint32_t i = 0; i < e->value_len; i++) {
    bad[i] ^= 0x81;
    wh_outcome_decode(bad, e->value_len, n, &head, bytes, snaps, steady);
    bad[i] ^= 0x81;
  }
  ck_assert(wh_outcome_decode(e->value, e->value_len, n, &head, bytes, snaps, steady));
  /* compact: the same again from its decoded form, in far less than a snapshot each */
  g_autoptr(GByteArray) again = g_byte_array_new();
  wh_outcome_encode(&head, (const uint64_t *)bytes->data, snaps->data,
                    (const WhOutcomeSteady *)steady->data, again);
  ck_assert(again->len == e->value_len && memcmp(again->data, e->value, again->len) == 0);
  ck_assert_uint_lt(e->value_len, (uint64_t)n * WH_CC_SNAPSHOT_BYTES / 2);
  ck_assert_uint_gt(head.duration, 0);
  if (e->kind == WH_MEMO_COMPLETED)
    ck_assert_uint_lt(head.ended, head.n);
  else
    ck_assert_uint_eq(head.ended, UINT32_MAX);
  for (uint32_t v = 0; v < head.n; v++) {
    ck_assert_uint_le(g_array_index(bytes, uint64_t, v), c->max_bytes);
    WhCcSnapshot snap;
    ck_assert(wh_cc_snapshot_deserialize(snaps->data + (gsize)v * WH_CC_SNAPSHOT_BYTES,
                                         WH_CC_SNAPSHOT_BYTES, &snap, NULL));
    ck_assert_str_eq(snap.cc, "hpcc");
  }
}

static WhPatternStats count_patterns(WhScenario *sc, WhRun **out)
{
  char *sets[] = {"wh::Wormhole::Mode=observe", "wh::Wormhole::Patterns=true", NULL};
  WhRunOptions opts = {.cc = "hpcc", .sets = sets};
  WhRun *run = wh_test_run(sc, &opts);
  wh_test_assert_clean_end(run);
  ck_assert_ptr_nonnull(run->wormhole);
  WhPatternStats ps = run->wormhole->ps;
  fprintf(stderr,
          "patterns: %" G_GUINT64_FORMAT " phases, %" G_GUINT64_FORMAT
          " repeated, %" G_GUINT64_FORMAT " distinct, %" G_GUINT64_FORMAT
          " collisions, largest %" G_GUINT64_FORMAT " flows\n",
          ps.phases, ps.repeated, ps.distinct, ps.collisions, ps.flows_max);
  ck_assert_uint_eq(ps.phases, ps.repeated + ps.distinct);
  /* every pattern's outcome was seen and stored (each phase ends, by convergence or by a
   * flow leaving, before the run does) */
  OutcomeCheck c = {.max_bytes = 2000000};
  wh_memo_db_foreach(run->wormhole->memo, check_outcome, &c);
  ck_assert_uint_eq(c.outcomes, ps.distinct);
  ck_assert_uint_eq(c.seen, 0);
  ck_assert_uint_ge(ps.converged + ps.completed, ps.distinct);
  *out = run;
  return ps;
}

START_TEST(test_patterns_repeat)
{
  /* HPCC draws no random number: three equal rounds are the same simulation shifted by
   * 5 ms, so the second and third repeat every phase of the first */
  g_autoptr(WhScenario) a = rounds(3, 99);
  WhRun *ra = NULL;
  WhPatternStats pa = count_patterns(a, &ra);
  ck_assert_uint_gt(pa.phases, 0);
  ck_assert_uint_eq(pa.phases % 3, 0);
  ck_assert_uint_eq(pa.distinct, pa.phases / 3);
  ck_assert_uint_eq(pa.repeated, 2 * pa.phases / 3);
  ck_assert_uint_eq(pa.flows_max, 2);
  /* the later rounds build their graphs in the first round's vertex order: each repeat
   * is matched through the remembered graph, without the hash and the exact check */
  ck_assert_uint_eq(pa.recalled, pa.repeated);
  ck_assert_uint_eq(pa.backed_off, 0); /* every class repeats */
  /* a wider middle round: its phases are new, the third round still repeats the first */
  g_autoptr(WhScenario) b = rounds(3, 1);
  WhRun *rb = NULL;
  WhPatternStats pb = count_patterns(b, &rb);
  ck_assert_uint_eq(pb.flows_max, 3);
  ck_assert_uint_ge(pb.repeated, pa.phases / 3);
  ck_assert_uint_lt(pb.repeated, pa.repeated);
  ck_assert_uint_gt(pb.distinct, pa.distinct);
  /* counting changes nothing in the simulation */
  WhRunOptions eo = {.cc = "hpcc"};
  g_autoptr(WhRun) exact = wh_test_run(a, &eo);
  assert_same_outputs(exact, ra);
  /* and is deterministic */
  WhRun *ra2 = NULL;
  WhPatternStats pa2 = count_patterns(a, &ra2);
  ck_assert(memcmp(&pa, &pa2, sizeof pa) == 0);
  wh_run_free(ra);
  wh_run_free(ra2);
  wh_run_free(rb);
}
END_TEST

START_TEST(test_hits_by_kind)
{
  /* two rounds, 5 ms apart, of two flows that share no link (0->1 and 2->3 on one side
   * of a 4-pair dumbbell): two partitions of one pattern at once, so in the first round
   * the second finds the first's entry while it is only seen; in the second round both
   * find its outcome */
  g_autoptr(WhScenario) sc = wh_scenario_new("twins", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "4");
  for (unsigned r = 0; r < 2; r++) {
    wh_scenario_add_flow(sc, 0, 1, 2000000, r * 5 * WH_MS);
    wh_scenario_add_flow(sc, 2, 3, 2000000, r * 5 * WH_MS);
  }
  WhRun *run = NULL;
  WhPatternStats ps = count_patterns(sc, &run);
  ck_assert_uint_eq(ps.hits[WH_MEMO_SEEN] + ps.hits[WH_MEMO_CONVERGED] + ps.hits[WH_MEMO_COMPLETED],
                    ps.repeated);
  ck_assert_uint_ge(ps.hits[WH_MEMO_SEEN], 1);
  ck_assert_uint_ge(ps.hits[WH_MEMO_CONVERGED] + ps.hits[WH_MEMO_COMPLETED], 2);
  /* the twins' graphs are equal as built: every repeat is recalled, and a recalled
   * match reads its entry again, so the second round finds the outcome stored since */
  ck_assert_uint_eq(ps.recalled, ps.repeated);
  /* observe mode replays nothing */
  for (unsigned k = 0; k < WH_MEMO_N_KINDS; k++)
    ck_assert_uint_eq(ps.replays[k], 0);
  /* the summary says the same */
  WhWormholeMemoSummary m;
  wh_wormhole_memo_summary(run->wormhole, &m);
  ck_assert_uint_eq(m.hits_seen, ps.hits[WH_MEMO_SEEN]);
  ck_assert_uint_eq(m.hits_converged, ps.hits[WH_MEMO_CONVERGED]);
  ck_assert_uint_eq(m.hits_completed, ps.hits[WH_MEMO_COMPLETED]);
  ck_assert_uint_eq(m.hits_seen + m.hits_converged + m.hits_completed, m.hits);
  wh_run_free(run);
}
END_TEST

/* The vertex count of every stored graph, at most *data. */
static void check_small(const WhMemoEntry *e, void *data)
{
  g_autoptr(WhFcg) g = wh_fcg_deserialize(e->key, e->key_len);
  ck_assert_ptr_nonnull(g);
  ck_assert_uint_le(wh_fcg_n_vertices(g), *(const uint32_t *)data);
}

START_TEST(test_too_large_not_stored)
{
  /* 300 flows of 200 KB at once over one bottleneck: a phase of more flows than the
   * exact check takes is new and not stored; the phases left as they end are */
  g_autoptr(WhScenario) sc = wh_scenario_new("crowd", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "300");
  for (unsigned i = 0; i < 300; i++)
    wh_scenario_add_flow(sc, i, 300 + i, 200000, 0);
  char *sets[] = {"wh::Wormhole::Mode=observe", "wh::Wormhole::Patterns=true", NULL};
  WhRunOptions opts = {.cc = "hpcc", .sets = sets};
  g_autoptr(WhRun) run = wh_test_run(sc, &opts);
  wh_test_assert_clean_end(run);
  const WhPatternStats *ps = &run->wormhole->ps;
  ck_assert_uint_eq(ps->flows_max, 300);
  ck_assert_uint_ge(ps->too_large, 1);
  ck_assert_uint_eq(ps->phases, ps->repeated + ps->distinct);
  ck_assert_uint_gt(wh_memo_db_len(run->wormhole->memo), 0);
  uint32_t limit = WH_FCG_ISO_MAX_VERTICES;
  wh_memo_db_foreach(run->wormhole->memo, check_small, &limit);
}
END_TEST

/* Two rounds, 10 ms apart, of a ring of 300 flows of 4 MB on a star (host i sends to
 * host i + 1): one partition, joined through the hosts' ports, quiet, each flow at its
 * line rate. With LargePhases=in-place the second round repeats the first round's
 * phase of more flows than the exact check takes (the same labels on the same ports in
 * the same order) and replays its stored outcome in memo mode, every byte still
 * delivered exactly once; with the default the phase is new and not stored. */
static WhScenario *ring_rounds(void)
{
  WhScenario *sc = wh_scenario_new("ring-rounds", "wh::Star");
  wh_scenario_add_set(sc, "wh::Star::Hosts", "300");
  for (unsigned r = 0; r < 2; r++)
    for (unsigned i = 0; i < 300; i++)
      wh_scenario_add_flow(sc, i, (i + 1) % 300, 4000000, r * 10 * WH_MS);
  return sc;
}

START_TEST(test_large_in_place)
{
  g_autoptr(WhScenario) sc = ring_rounds();
  char *plain[] = {"wh::Wormhole::Mode=memo", NULL};
  char *in_place[] = {"wh::Wormhole::Mode=memo", "wh::Wormhole::LargePhases=in-place", NULL};
  WhRunOptions eo = {.cc = "hpcc"}, no = {.cc = "hpcc", .sets = plain},
               io = {.cc = "hpcc", .sets = in_place};
  g_autoptr(WhRun) exact = wh_test_run(sc, &eo);
  g_autoptr(WhRun) off = wh_test_run(sc, &no);
  g_autoptr(WhRun) on = wh_test_run(sc, &io);
  wh_test_assert_clean_end(off);
  wh_test_assert_clean_end(on); /* every flow's bytes too */
  const WhPatternStats *po = &off->wormhole->ps, *pi = &on->wormhole->ps;
  fprintf(stderr,
          "large phases: %" G_GUINT64_FORMAT " (new: %" G_GUINT64_FORMAT
          " too large), in place %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT
          " repeated, %" G_GUINT64_FORMAT " replays; events exact %" G_GUINT64_FORMAT
          ", new %" G_GUINT64_FORMAT ", in place %" G_GUINT64_FORMAT "\n",
          po->large, po->too_large, pi->large_repeated, pi->large, replays_of(pi),
          exact->sim->events_executed, off->sim->events_executed, on->sim->events_executed);
  ck_assert_uint_ge(po->large, 2);
  ck_assert_uint_eq(po->large_repeated, 0);
  ck_assert_uint_ge(po->too_large, po->large);
  ck_assert_uint_eq(pi->large, po->large);
  ck_assert_uint_ge(pi->large_repeated, 1);
  ck_assert_uint_lt(pi->large_repeated, pi->large);
  ck_assert_uint_eq(pi->phases, pi->repeated + pi->distinct);
  ck_assert_uint_gt(replays_of(pi), replays_of(po));
  ck_assert_uint_lt(on->sim->events_executed, off->sim->events_executed);
  ck_assert(wh_wormhole_check_bytes(on->wormhole, NULL));
  /* each flow's FCT within 1% of the exact engine's (the bound of a cross-flow
   * restore; without the replay the fast-forward skips nothing in this ring, 16.7 M
   * events as the exact engine, and with it half of them are left) */
  double worst_on = 0, worst_off = 0;
  for (uint32_t i = 0; i < on->tp->n_flows; i++) {
    const WhFlow *e = wh_transport_flow(exact->tp, i);
    double fe = (double)(e->finish - e->start);
    const WhFlow *m = wh_transport_flow(on->tp, i), *o = wh_transport_flow(off->tp, i);
    worst_on = MAX(worst_on, fabs((double)(m->finish - m->start) - fe) / fe);
    worst_off = MAX(worst_off, fabs((double)(o->finish - o->start) - fe) / fe);
  }
  fprintf(stderr, "large phases: worst FCT error %.3f%% in place, %.3f%% without\n", worst_on * 100,
          worst_off * 100);
  ck_assert_double_le(worst_off, 0.01);
  ck_assert_double_le(worst_on, 0.01);
  /* deterministic */
  assert_deterministic(on, sc, &io);
}
END_TEST

START_TEST(test_rate_tolerance_refused)
{
  static const char *const bad[] = {"0", "-0.1", "nan"};
  g_autofree char *file = wh_test_source_path("scenarios/quickstart.xml");
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autofree char *set = g_strdup_printf("wh::Wormhole::RateTolerance=%s", bad[i]);
    g_autofree char *out = NULL, *err = NULL;
    int status = wh_test_whsim((const char *[]){"run", file, "--scheduler", "wormhole", "--set",
                                                set, "--out", "/nonexistent/never", NULL},
                               &out, &err);
    ck_assert_int_eq(status, 2);
    ck_assert_msg(strstr(err, "RateTolerance") != NULL, "%s", err);
  }
}
END_TEST

START_TEST(test_memo_replays)
{
  /* three HPCC rounds of one pattern: the second and third replay the first's phases
   * from the memo database, every byte still delivered exactly once; the second flow
   * grows each round, so the first phase's drained outcome does not fit (refused) and
   * its completed outcome (the first flow's completion) is replayed */
  g_autoptr(WhScenario) sc = rounds_growing(3);
  char *sets[] = {"wh::Wormhole::Mode=memo", NULL};
  WhRunOptions eo = {.cc = "hpcc"}, mo = {.cc = "hpcc", .sets = sets};
  g_autoptr(WhRun) exact = wh_test_run(sc, &eo);
  g_autoptr(WhRun) memo = wh_test_run(sc, &mo);
  wh_test_assert_clean_end(exact);
  wh_test_assert_clean_end(memo); /* with memo on, this checks every flow's bytes too */
  const WhSkipStats *ss = &memo->wormhole->ss;
  fprintf(stderr,
          "memo: %" G_GUINT64_FORMAT " replays (%" G_GUINT64_FORMAT " whole, %" G_GUINT64_FORMAT
          " cut, %" G_GUINT64_FORMAT " refused), %" G_GUINT64_FORMAT
          " completions; events %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT "\n",
          ss->replays, ss->replays_whole, ss->replays_cut, ss->replays_refused,
          ss->replay_completions, exact->sim->events_executed, memo->sim->events_executed);
  ck_assert_uint_ge(ss->replays_whole, 2);
  ck_assert_uint_ge(ss->replay_completions, 1);
  ck_assert_uint_ge(ss->drains_refused, 2);
  ck_assert_uint_eq(ss->drains, 0);
  /* hits by the kind of the entry found add up; the replays are of completed phases */
  const WhPatternStats *ps = &memo->wormhole->ps;
  ck_assert_uint_eq(ps->hits[WH_MEMO_SEEN] + ps->hits[WH_MEMO_CONVERGED] +
                        ps->hits[WH_MEMO_COMPLETED],
                    ps->repeated);
  ck_assert_uint_eq(ps->hits[WH_MEMO_DRAINED], 0); /* drained outcomes are not entries hit */
  ck_assert_uint_gt(ps->replays[WH_MEMO_COMPLETED], 0);
  ck_assert_uint_eq(ps->replays[WH_MEMO_COMPLETED] + ps->replays[WH_MEMO_CONVERGED], ss->replays);
  ck_assert_uint_eq(ps->replays[WH_MEMO_SEEN], 0);
  ck_assert_uint_le(ps->replays[WH_MEMO_COMPLETED], ps->hits[WH_MEMO_COMPLETED]);
  ck_assert_uint_lt(memo->sim->events_executed, exact->sim->events_executed);
  ck_assert(wh_wormhole_check_bytes(memo->wormhole, NULL));
  /* deterministic: a second memo run is the same simulation */
  assert_deterministic(memo, sc, &mo);
  /* the first round's shared phase is simulated packet by packet; the replayed ones close */
  for (uint32_t i = 0; i < memo->tp->n_flows; i++) {
    const WhFlow *e = wh_transport_flow(exact->tp, i), *m = wh_transport_flow(memo->tp, i);
    double err = ((double)(m->finish - m->start) - (double)(e->finish - e->start)) /
                 (double)(e->finish - e->start);
    fprintf(stderr, "memo: flow %u FCT %.1f us exact, %+.3f%% with replays\n", i,
            wh_time_to_s(e->finish - e->start) * 1e6, err * 100);
    if (i == 0) /* the first round's first flow: packet by packet */
      ck_assert_int_eq(m->finish, e->finish);
    else /* the rest (the second flow skipped once alone, the replayed rounds): within 1%
          * of the exact engine's FCT */
      ck_assert_double_le(fabs(err), 0.01);
  }
}
END_TEST

/* Every converged outcome stored in memo mode carries its flows' steady states. */
static void check_steady(const WhMemoEntry *e, void *data)
{
  if (e->kind != WH_MEMO_CONVERGED)
    return;
  g_autoptr(WhFcg) g = wh_fcg_deserialize(e->key, e->key_len);
  g_autoptr(GArray) steady = g_array_new(FALSE, FALSE, sizeof(WhOutcomeSteady));
  WhOutcomeHead head;
  uint32_t n = wh_fcg_n_vertices(g);
  ck_assert(wh_outcome_decode(e->value, e->value_len, n, &head, NULL, NULL, steady));
  for (uint32_t v = 0; v < n; v++) {
    const WhOutcomeSteady *st = &g_array_index(steady, WhOutcomeSteady, v);
    ck_assert_uint_gt(st->rate, 0);
  }
  (*(uint32_t *)data)++;
}

/* Rounds 5 ms apart of `flows` flows of 20 MB (+ 4 MB a round: a drained outcome of
 * one round does not fit the next) on a dumbbell of as many pairs. */
static WhScenario *long_rounds(unsigned flows)
{
  WhScenario *sc = wh_scenario_new("long-rounds", "wh::Dumbbell");
  g_autofree char *pairs = g_strdup_printf("%u", flows);
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", pairs);
  for (unsigned r = 0; r < 3; r++)
    for (unsigned i = 0; i < flows; i++)
      wh_scenario_add_flow(sc, i, flows + i, 20000000 + r * 4000000, r * 5 * WH_MS);
  return sc;
}

START_TEST(test_memo_converged_skip)
{
  /* three equal HPCC rounds of one 20 MB flow: each round's phase converges and is
   * parked by the idle rule; the later rounds replay it and go straight on into a skip
   * at the stored rate, with no window to measure it again */
  g_autoptr(WhScenario) sc = long_rounds(1);
  char *skip[] = {"wh::Wormhole::Mode=skip", NULL};
  char *memo[] = {"wh::Wormhole::Mode=memo", NULL};
  WhRunOptions eo = {.cc = "hpcc"}, so = {.cc = "hpcc", .sets = skip},
               mo = {.cc = "hpcc", .sets = memo};
  g_autoptr(WhRun) exact = wh_test_run(sc, &eo);
  g_autoptr(WhRun) sk = wh_test_run(sc, &so);
  g_autoptr(WhRun) mm = wh_test_run(sc, &mo);
  wh_test_assert_clean_end(mm); /* every flow's bytes exact */
  const WhSkipStats *ss = &mm->wormhole->ss;
  fprintf(stderr,
          "converged replays: %" G_GUINT64_FORMAT " started, %" G_GUINT64_FORMAT
          " going on as a skip; events exact %" G_GUINT64_FORMAT ", skip %" G_GUINT64_FORMAT
          ", memo %" G_GUINT64_FORMAT "\n",
          mm->wormhole->ps.replays[WH_MEMO_CONVERGED], ss->replays_skipping,
          exact->sim->events_executed, sk->sim->events_executed, mm->sim->events_executed);
  ck_assert_uint_ge(ss->replays_skipping, 2);
  ck_assert_uint_lt(mm->sim->events_executed, sk->sim->events_executed);
  uint32_t converged = 0;
  wh_memo_db_foreach(mm->wormhole->memo, check_steady, &converged);
  ck_assert_uint_ge(converged, 1);
  for (uint32_t i = 0; i < mm->tp->n_flows; i++) {
    const WhFlow *e = wh_transport_flow(exact->tp, i), *m = wh_transport_flow(mm->tp, i);
    const WhFlow *k = wh_transport_flow(sk->tp, i);
    double err = ((double)(m->finish - m->start) - (double)(e->finish - e->start)) /
                 (double)(e->finish - e->start);
    double kerr = ((double)(k->finish - k->start) - (double)(e->finish - e->start)) /
                  (double)(e->finish - e->start);
    fprintf(stderr, "converged replays: flow %u FCT %.1f us exact, %+.3f%% (skip alone %+.3f%%)\n",
            i, wh_time_to_s(e->finish - e->start) * 1e6, err * 100, kerr * 100);
    /* a replay adds at most a point to the fast-forward's own error (a lone HPCC flow:
     * +1.6%, its rate still rising slowly when the fast-forward measures it) */
    ck_assert_msg(fabs(err) <= fabs(kerr) + 0.01, "flow %u: FCT error %.3f%%, skip alone %.3f%%", i,
                  err * 100, kerr * 100);
  }
  /* two flows on one bottleneck are steady by the rate rule: their converged phases keep
   * no steady state and are left to the fast-forward */
  g_autoptr(WhScenario) shared = long_rounds(2);
  g_autoptr(WhRun) m2 = wh_test_run(shared, &mo);
  wh_test_assert_clean_end(m2);
  ck_assert_uint_gt(
      m2->wormhole->ps.hits[WH_MEMO_CONVERGED] + m2->wormhole->ps.hits[WH_MEMO_DRAINED], 0);
  ck_assert_uint_eq(m2->wormhole->ps.replays[WH_MEMO_CONVERGED], 0);
  ck_assert_uint_eq(m2->wormhole->ss.replays_skipping, 0);
}
END_TEST

START_TEST(test_memo_drains)
{
  /* three equal HPCC rounds of two flows: the first round's phase is followed until
   * both flows completed (its drained outcome: when each did), and the later rounds
   * replay it whole, each flow parked until its stored completion from its first
   * packet on */
  g_autoptr(WhScenario) sc = rounds(3, 99);
  char *sets[] = {"wh::Wormhole::Mode=memo", NULL};
  WhRunOptions eo = {.cc = "hpcc"}, mo = {.cc = "hpcc", .sets = sets};
  g_autoptr(WhRun) exact = wh_test_run(sc, &eo);
  g_autoptr(WhRun) memo = wh_test_run(sc, &mo);
  wh_test_assert_clean_end(memo); /* every flow's bytes exact */
  const WhSkipStats *ss = &memo->wormhole->ss;
  const WhPatternStats *ps = &memo->wormhole->ps;
  fprintf(stderr,
          "drains: %" G_GUINT64_FORMAT " started, %" G_GUINT64_FORMAT " whole, %" G_GUINT64_FORMAT
          " completions; events %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT "\n",
          ss->drains, ss->drains_whole, ss->drain_completions, exact->sim->events_executed,
          memo->sim->events_executed);
  ck_assert_uint_ge(ps->drained, 1);
  ck_assert_uint_ge(ss->drains_whole, 2);
  ck_assert_uint_eq(ss->drains_cut, 0);
  ck_assert_uint_ge(ss->drain_completions, 4);
  ck_assert_uint_eq(ps->replays[WH_MEMO_DRAINED], ss->drains);
  ck_assert_uint_lt(memo->sim->events_executed, exact->sim->events_executed);
  ck_assert(wh_wormhole_check_bytes(memo->wormhole, NULL));
  for (uint32_t i = 0; i < memo->tp->n_flows; i++) {
    const WhFlow *e = wh_transport_flow(exact->tp, i), *m = wh_transport_flow(memo->tp, i);
    double err = ((double)(m->finish - m->start) - (double)(e->finish - e->start)) /
                 (double)(e->finish - e->start);
    fprintf(stderr, "drains: flow %u FCT %.1f us exact, %+.3f%% drained\n", i,
            wh_time_to_s(e->finish - e->start) * 1e6, err * 100);
    if (i < 2)
      ck_assert_int_eq(m->finish, e->finish); /* the first round: packet by packet */
    else /* each drained flow completes where its counterpart did, from its own tick */
      ck_assert_double_le(fabs(err), 0.01);
    if (i < 2)
      continue;
    /* the drained rounds send nothing but their first packets: the phase is looked up
     * as soon as both flows have sent one, not at the next tick */
    uint64_t sent = m->size - wh_wormhole_glue(memo->wormhole, i)->advanced;
    fprintf(stderr, "drains: flow %u sent %" G_GUINT64_FORMAT " B as packets\n", i, sent);
    ck_assert_uint_le(sent, memo->tp->p.mtu);
  }
  assert_deterministic(memo, sc, &mo);
}
END_TEST

START_TEST(test_lookups_back_off)
{
  /* 48 incast rounds, 1 ms apart, of 64, 65, ..., 111 flows of 10 kB to one host: each
   * round's phases are new (no two rounds have as many flows), and most are in the size
   * class of 64 to 127 flows, so once 32 lookups there found nothing the class backs off
   * to one lookup in 16 */
  g_autoptr(WhScenario) sc = wh_scenario_new("incast-rounds", "wh::Dumbbell");
  wh_scenario_add_set(sc, "wh::Dumbbell::Pairs", "128");
  for (unsigned r = 0; r < 48; r++) {
    for (unsigned i = 0; i < 64 + r; i++)
      wh_scenario_add_flow(sc, i, 128, 10000, r * WH_MS);
  }
  char *sets[] = {"wh::Wormhole::Mode=observe", "wh::Wormhole::Patterns=true", NULL};
  WhRunOptions opts = {.cc = "hpcc", .sets = sets};
  g_autoptr(WhRun) run = wh_test_run(sc, &opts);
  wh_test_assert_clean_end(run);
  const WhPatternStats *ps = &run->wormhole->ps;
  fprintf(stderr,
          "back-off: %" G_GUINT64_FORMAT " phases looked up, %" G_GUINT64_FORMAT
          " repeated, %" G_GUINT64_FORMAT " backed off; class 64-127: %u looked up, %u found\n",
          ps->phases, ps->repeated, ps->backed_off, ps->class_lookups[6], ps->class_hits[6]);
  ck_assert_uint_eq(ps->class_hits[6], 0);
  /* the class's first 32 phases (rounds, and what is left of them as flows finish), then
   * one in 16 of the rest */
  ck_assert_uint_gt(ps->class_seen[6], 16);
  ck_assert_uint_eq(ps->class_lookups[6], 32 + (ps->class_seen[6] + 15) / 16);
  ck_assert_uint_ge(ps->backed_off, ps->class_seen[6] - (ps->class_seen[6] + 15) / 16);
  /* observing changes nothing in the simulation */
  WhRunOptions eo = {.cc = "hpcc"};
  g_autoptr(WhRun) exact = wh_test_run(sc, &eo);
  assert_same_outputs(exact, run);
}
END_TEST

START_TEST(test_memo_max_bytes)
{
  /* a full store keeps counting patterns but stores no new one */
  g_autoptr(WhScenario) sc = rounds(3, 1);
  char *sets[] = {"wh::Wormhole::Mode=observe", "wh::Wormhole::Patterns=true",
                  "wh::Wormhole::MemoMaxBytes=1B", NULL};
  WhRunOptions opts = {.cc = "hpcc", .sets = sets};
  g_autoptr(WhRun) run = wh_test_run(sc, &opts);
  const WhPatternStats *ps = &run->wormhole->ps;
  ck_assert_uint_gt(ps->distinct, 1);
  ck_assert_uint_eq(wh_memo_db_len(run->wormhole->memo), 1);
  ck_assert_uint_eq(ps->not_stored, ps->distinct - 1);
}
END_TEST

Suite *wh_memo_db_suite(void)
{
  Suite *s = suite_create("memo-db");
  TCase *tc = tcase_create("memo-db");
  tcase_add_test(tc, test_order_independent);
  tcase_add_test(tc, test_round_trip);
  tcase_add_test(tc, test_bad_files);
  tcase_add_test(tc, test_atomic_save);
  tcase_add_test(tc, test_merge_and_bounds);
  tcase_add_test(tc, test_save_capped);
  tcase_add_test(tc, test_config_digest);
  suite_add_tcase(s, tc);
  TCase *tp = tcase_create("patterns");
  tcase_set_timeout(tp, 120);
  tcase_add_test(tp, test_patterns_repeat);
  tcase_add_test(tp, test_hits_by_kind);
  tcase_add_test(tp, test_too_large_not_stored);
  tcase_add_test(tp, test_large_in_place);
  tcase_add_test(tp, test_rate_tolerance_refused);
  tcase_add_test(tp, test_memo_replays);
  tcase_add_test(tp, test_memo_converged_skip);
  tcase_add_test(tp, test_memo_drains);
  tcase_add_test(tp, test_memo_max_bytes);
  tcase_add_test(tp, test_lookups_back_off);
  suite_add_tcase(s, tp);
  return s;
}
