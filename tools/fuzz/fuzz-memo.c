/* fuzz-memo: a seeded mutation fuzzer for memo files (`--memo FILE`). Its seeds are
 * valid memo files made in-process: databases of a few entries (signatures that
 * collide, keys and values of 0 B to 600 B, every kind) saved with wh_memo_db_save.
 * Each case mutates a copy with a deterministic RNG (bytes replaced, ranges deleted,
 * duplicated or inserted, varint bytes made long or overlong, the entry count or a
 * header field changed, truncated, extended), in half the cases makes the checksum
 * right again so that the entry parser is reached, and writes it to a file. The file is
 * then loaded (unbounded, or bounded to a few entries), and a database is saved over
 * it (merged with it when it loads; in a third of the cases capped at a few entries'
 * bytes). A case passes when the loader accepts the file or refuses it with a clear
 * message: one printable line of valid UTF-8 starting with the file's name; a save must
 * succeed, or refuse only a file that is not a memo file, and what it writes must load
 * again with every entry of both (capped: the entries it says it wrote, all of them
 * loaded by a load under the same cap). A crash, a sanitizer report or a GLib
 * critical ends the process; a failed case fails the run (exit 1).
 * `--case N` replays one case. Cost: well under a millisecond a case. */
#include <glib.h>
#include <glib/gstdio.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "memo-db.h"
#include "rng.h"

#define CONFIG 0x5eed5eedull

static gsize pick(WhRng *r, gsize n)
{
  return n ? (gsize)(wh_rng_next(r) % n) : 0;
}

/* A valid memo file of a database of `n` entries drawn from `r`. (transfer full) */
static GBytes *make_seed(const char *dir, guint n, WhRng *r)
{
  g_autoptr(WhMemoDb) db = wh_memo_db_new(CONFIG);
  uint8_t blob[600];
  for (guint i = 0; i < sizeof blob; i++)
    blob[i] = (uint8_t)wh_rng_next(r);
  for (guint i = 0; i < n; i++) {
    uint64_t sig = pick(r, 4) == 0 ? 7 : wh_rng_next(r); /* some collide on 7 */
    uint32_t key_len = (uint32_t)pick(r, 4) == 0 ? 300 : (uint32_t)pick(r, 12);
    uint32_t value_len = (uint32_t)pick(r, 3) == 0 ? 0 : (uint32_t)pick(r, 200);
    WhMemoKind kind = (WhMemoKind)pick(r, WH_MEMO_N_KINDS);
    wh_memo_db_insert(db, sig, kind, blob + pick(r, 200), key_len, blob + pick(r, 300), value_len);
  }
  g_autofree char *path = g_build_filename(dir, "seed.memo", NULL);
  g_autoptr(GError) err = NULL;
  if (!wh_memo_db_save(db, path, &err))
    g_error("fuzz-memo: %s", err->message);
  char *bytes = NULL;
  gsize len = 0;
  g_file_get_contents(path, &bytes, &len, NULL);
  g_unlink(path);
  return g_bytes_new_take(bytes, len);
}

static const uint8_t varint_bytes[] = {0x80, 0xff, 0x7f, 0x00, 0x01, 0x81};

/* One to four mutations of `s`, then, when `fix`, the checksum made right again. */
static void mutate(GByteArray *s, WhRng *r, gboolean fix)
{
  int n = 1 + (int)pick(r, 4);
  for (int k = 0; k < n; k++) {
    gsize at = pick(r, s->len + 1);
    switch (pick(r, 9)) {
    case 0: /* replace a byte */
      if (s->len)
        s->data[pick(r, s->len)] = (uint8_t)wh_rng_next(r);
      break;
    case 1: /* a varint byte: long, overlong, cut */
      if (at < s->len)
        s->data[at] = varint_bytes[pick(r, sizeof varint_bytes)];
      break;
    case 2: { /* delete a range */
      gsize len = 1 + pick(r, 24);
      g_byte_array_remove_range(s, (guint)at, (guint)MIN(s->len - at, len));
      break;
    }
    case 3: { /* duplicate a range elsewhere (an entry repeated, out of order) */
      gsize want = 1 + pick(r, 80), len = MIN(s->len - at, want);
      if (len == 0)
        break;
      g_autofree uint8_t *piece = g_memdup2(s->data + at, len);
      guint to = (guint)pick(r, s->len + 1);
      g_byte_array_set_size(s, s->len + (guint)len);
      memmove(s->data + to + len, s->data + to, s->len - len - to);
      memcpy(s->data + to, piece, len);
      break;
    }
    case 4: { /* the entry count, or another header word */
      static const gsize words[] = {8, 12, 16, 48, 56};
      gsize w = words[pick(r, G_N_ELEMENTS(words))];
      uint64_t v = pick(r, 2) ? wh_rng_next(r) : pick(r, 64);
      if (w + 8 <= s->len)
        memcpy(s->data + w, &v, w < 48 ? 4 : 8);
      break;
    }
    case 5: /* truncate */
      g_byte_array_set_size(s, (guint)at);
      break;
    case 6: { /* extend */
      gsize len = 1 + pick(r, 40);
      for (gsize i = 0; i < len; i++) {
        uint8_t b = (uint8_t)wh_rng_next(r);
        g_byte_array_append(s, &b, 1);
      }
      break;
    }
    case 7: /* a kind byte or a length near the first entry */
      if (64 + 10 < s->len)
        s->data[64 + 8 + pick(r, 3)] = (uint8_t)pick(r, 5);
      break;
    default: /* swap two bytes */
      if (s->len > 1) {
        gsize i = pick(r, s->len), j = pick(r, s->len);
        uint8_t t = s->data[i];
        s->data[i] = s->data[j];
        s->data[j] = t;
      }
      break;
    }
  }
  if (fix && s->len >= 8) {
    uint64_t sum = wh_fnv1a(WH_FNV1A_INIT, s->data, s->len - 8);
    memcpy(s->data + s->len - 8, &sum, 8);
  }
}

/* NULL when `msg` is a clear refusal of `name`, else why not. */
static const char *unclear(const char *msg, const char *name)
{
  if (msg == NULL || msg[0] == '\0')
    return "empty message";
  if (!g_utf8_validate(msg, -1, NULL))
    return "not UTF-8";
  for (const char *p = msg; *p; p++)
    if ((unsigned char)*p < 0x20)
      return "control character";
  if (!g_str_has_prefix(msg, name))
    return "does not start with the file name";
  if (strstr(msg, "(null)"))
    return "says (null)";
  return NULL;
}

static void count_entry(const WhMemoEntry *e, void *data)
{
  (void)e;
  (*(uint32_t *)data)++;
}

/* Runs one case on the file at `path`; NULL when it passes, else why (and *msg_out the
 * message). */
static const char *run_case(const char *path, WhRng *r, char **msg_out)
{
  g_autoptr(WhMemoDb) db = wh_memo_db_new(CONFIG);
  g_autoptr(GError) err = NULL;
  WhMemoLoad load = {.max_bytes = pick(r, 3) == 0 ? 1 + pick(r, 2000) : 0};
  gboolean loaded = wh_memo_db_load_bounded(db, path, &load, &err);
  if (!loaded) {
    *msg_out = g_strdup(err ? err->message : NULL);
    const char *why = unclear(err ? err->message : NULL, path);
    if (why || wh_memo_db_len(db) != 0)
      return why ? why : "a refused file left entries behind";
  } else if (wh_memo_db_len(db) > load.loaded || load.loaded > load.entries) {
    return "loaded more entries than it says";
  }
  /* a save over the file: merged when it loads, else replaced, never refused but for a
   * file that is not a memo file */
  wh_memo_db_insert(db, 42, WH_MEMO_COMPLETED, "own", 3, "v", 1);
  g_autoptr(GError) serr = NULL;
  WhMemoSave save = {.max_bytes = pick(r, 3) == 0 ? 1 + pick(r, 2000) : 0};
  if (!wh_memo_db_save_bounded(db, path, &save, &serr)) {
    g_free(*msg_out);
    *msg_out = g_strdup(serr->message);
    if (!g_error_matches(serr, WH_MEMO_ERROR, WH_MEMO_ERROR_MAGIC))
      return "a save over a memo file failed";
    return unclear(serr->message, path);
  }
  g_autoptr(WhMemoDb) back = wh_memo_db_new(CONFIG);
  g_autoptr(GError) lerr = NULL;
  WhMemoLoad again = {.max_bytes = save.max_bytes};
  if (!wh_memo_db_load_bounded(back, path, &again, &lerr)) {
    g_free(*msg_out);
    *msg_out = g_strdup(lerr->message);
    return "the saved file does not load";
  }
  if (save.written > save.entries || again.entries != save.written ||
      again.loaded != again.entries || (save.max_bytes && wh_memo_db_bytes(back) > save.max_bytes))
    return "the capped file is not what the save says, or does not load whole under its cap";
  if (save.max_bytes)
    return NULL;
  /* the union: every entry of the database, and those of the file it did not load */
  uint32_t n = 0, c = 0;
  wh_memo_db_foreach(back, count_entry, &n);
  gboolean whole = !loaded || load.loaded == load.entries;
  if (wh_memo_db_candidates(back, 42, &c) == NULL || n < wh_memo_db_len(db) ||
      (whole && n != wh_memo_db_len(db)))
    return "the saved file is not the union";
  return NULL;
}

int main(int argc, char **argv)
{
  gint cases = 2000, replay = -1;
  gboolean verbose = FALSE;
  gint64 seed_arg = 1;
  GOptionEntry entries[] = {
      {"cases", 0, 0, G_OPTION_ARG_INT, &cases, "number of cases (default 2000)", "N"},
      {"seed", 0, 0, G_OPTION_ARG_INT64, &seed_arg, "RNG seed (default 1)", "S"},
      {"case", 0, 0, G_OPTION_ARG_INT, &replay, "replay case N only", "N"},
      {"verbose", 'v', 0, G_OPTION_ARG_NONE, &verbose, "print each case's outcome", NULL},
      {NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- fuzz the memo file loader and saver");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err) || argc != 1 || cases < 1) {
    fprintf(stderr, "fuzz-memo: %s\n", err ? err->message : "bad arguments");
    return 2;
  }
  g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING); /* a failed check: a bug */
  /* in memory when the system has a tmpfs there: every save flushes its file */
  const char *shm = "/dev/shm";
  g_autofree char *tmpl = g_build_filename(
      g_file_test(shm, G_FILE_TEST_IS_DIR) && access(shm, W_OK) == 0 ? shm : g_get_tmp_dir(),
      "fuzz-memo-XXXXXX", NULL);
  const char *dir = g_mkdtemp(tmpl);
  if (dir == NULL)
    g_set_error(&err, G_FILE_ERROR, g_file_error_from_errno(errno), "cannot make a directory: %s",
                g_strerror(errno));
  if (dir == NULL) {
    fprintf(stderr, "fuzz-memo: %s\n", err->message);
    return 2;
  }
  WhRng seed_rng;
  wh_rng_init(&seed_rng, (uint64_t)seed_arg, G_MAXUINT64);
  static const guint sizes[] = {0, 1, 3, 12, 40};
  GBytes *seeds[G_N_ELEMENTS(sizes)];
  for (guint i = 0; i < G_N_ELEMENTS(sizes); i++)
    seeds[i] = make_seed(dir, sizes[i], &seed_rng);
  g_autofree char *path = g_build_filename(dir, "case.memo", NULL);
  g_autofree char *lock = g_strconcat(path, ".lock", NULL);
  guint failed = 0, accepted = 0;
  gint first = replay >= 0 ? replay : 0, last = replay >= 0 ? replay + 1 : cases;
  for (gint c = first; c < last; c++) {
    WhRng rng;
    wh_rng_init(&rng, (uint64_t)seed_arg, (uint64_t)c);
    guint s = (guint)c % G_N_ELEMENTS(seeds);
    gsize len = 0;
    const uint8_t *data = g_bytes_get_data(seeds[s], &len);
    g_autoptr(GByteArray) input = g_byte_array_sized_new((guint)len);
    g_byte_array_append(input, data, (guint)len);
    mutate(input, &rng, pick(&rng, 2) == 0);
    if (!g_file_set_contents(path, (const char *)input->data, input->len, &err)) {
      fprintf(stderr, "fuzz-memo: %s\n", err->message);
      return 2;
    }
    g_autofree char *msg = NULL;
    const char *why = run_case(path, &rng, &msg);
    accepted += msg == NULL;
    if (verbose || replay >= 0)
      printf("case %d (seed file %u, %u bytes): %s\n", c, s, input->len, msg ? msg : "accepted");
    if (why) {
      failed++;
      fprintf(stderr, "case %d (seed %" G_GINT64_FORMAT "): %s: %s\n", c, seed_arg, why,
              msg ? msg : "");
    }
  }
  g_unlink(path);
  g_unlink(lock);
  g_rmdir(dir);
  for (guint i = 0; i < G_N_ELEMENTS(seeds); i++)
    g_bytes_unref(seeds[i]);
  printf("fuzz-memo: %d cases, seed %" G_GINT64_FORMAT ": %u accepted, %d refused, %u failed\n",
         last - first, seed_arg, accepted, last - first - (gint)accepted, failed);
  return failed ? 1 : 0;
}
