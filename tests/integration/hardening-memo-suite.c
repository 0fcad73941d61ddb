/* The hardening suite, memo cases: `--memo FILE` as the whsim binary meets it. A file
 * that is not a memo file (even one larger than any memo file) is refused before the
 * run and left byte for byte; a read-only file is loaded and never written, as root and
 * as an unprivileged user; a symbolic link is followed and its target replaced; two
 * runs started together on one file keep the union of their patterns, the file a run
 * after the other writes; a large valid file is loaded only as far as --max-memory
 * allows, under an address-space limit; and summary.json's bytes add up (sent =
 * delivered + dropped + reclaimed) on runs that replay from a loaded file. Runs of a
 * few milliseconds each, one of them on a 20 MB file. */
#include <check.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hardening-util.h"
#include "rng.h"
#include "test-util.h"

#define MODE_MEMO "wh::Wormhole::Mode=memo"

/* `rounds` rounds, 4 ms apart, of two 1 MB flows on a 3-pair dumbbell (HPCC): across
 * the bottleneck (3 hops each), or, with `local`, two flows into one host of the left
 * side (2 hops each: no pattern of one kind is a pattern of the other, as the graphs'
 * labels hold the hop counts). (transfer full) */
static char *rounds_xml(int rounds, gboolean local)
{
  GString *x = g_string_new("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                            "<scenario name=\"rounds\" seed=\"1\" cc=\"hpcc\">\n"
                            "  <topology type=\"wh::Dumbbell\"><param name=\"Pairs\" "
                            "value=\"3\"/></topology>\n  <flows>\n");
  for (int r = 0; r < rounds; r++)
    g_string_append_printf(x,
                           "    <flow src=\"0\" dst=\"%d\" size=\"1MB\" start=\"%dms\"/>\n"
                           "    <flow src=\"1\" dst=\"%d\" size=\"1MB\" start=\"%dms\"/>\n",
                           local ? 2 : 3, 4 * r, local ? 2 : 4, 4 * r);
  g_string_append(x, "  </flows>\n</scenario>\n");
  return g_string_free(x, FALSE);
}

static char *in_case(const WhCase *c, const char *name)
{
  return g_build_filename(c->dir, name, NULL);
}

/* whsim run in memo mode with --memo `memo`, outputs in the case's `out`. */
static int run_memo(WhCase *c, const char *out, const char *memo)
{
  g_autofree char *out_dir = in_case(c, out);
  return wh_case_whsim(c, "run", "--quiet", "--out", out_dir, "--set", MODE_MEMO, "--memo", memo,
                       NULL);
}

static void run_memo_ok(WhCase *c, const char *out, const char *memo)
{
  int status = run_memo(c, out, memo);
  ck_assert_msg(status == 0, "whsim run --memo %s: exit %d: %s", memo, status, c->err);
}

/* The text after "key": in a run's summary.json, up to the end of its line. (transfer full) */
static char *summary_field(const WhCase *c, const char *out, const char *key)
{
  g_autofree char *dir = in_case(c, out);
  g_autofree char *json = wh_test_read_in(dir, "summary.json");
  g_autofree char *needle = g_strdup_printf("\"%s\" : ", key);
  const char *p = strstr(json, needle);
  ck_assert_msg(p != NULL, "summary.json of %s has no %s: %s", out, key, json);
  p += strlen(needle);
  return g_strndup(p, strcspn(p, ",\n"));
}

static uint64_t summary_u64(const WhCase *c, const char *out, const char *key)
{
  g_autofree char *v = summary_field(c, out, key);
  return g_ascii_strtoull(v, NULL, 10);
}

/* A file's identity and bytes, to tell whether it was replaced or changed. */
typedef struct {
  GStatBuf st;
  char *bytes;
  gsize len;
} Snapshot;

static Snapshot snapshot(const char *path, gboolean with_bytes)
{
  Snapshot s = {0};
  ck_assert_int_eq(g_lstat(path, &s.st), 0);
  if (with_bytes)
    ck_assert(g_file_get_contents(path, &s.bytes, &s.len, NULL));
  return s;
}

/* The file is the same file (not replaced), with the same mode, size, time and bytes. */
static void assert_unchanged(const char *path, Snapshot *before)
{
  Snapshot after = snapshot(path, before->bytes != NULL);
  ck_assert_msg(after.st.st_ino == before->st.st_ino, "%s was replaced", path);
  ck_assert_uint_eq(after.st.st_mode, before->st.st_mode);
  ck_assert_uint_eq(after.st.st_size, before->st.st_size);
  ck_assert_int_eq(after.st.st_mtime, before->st.st_mtime);
  if (before->bytes)
    ck_assert_msg(after.len == before->len && memcmp(after.bytes, before->bytes, after.len) == 0,
                  "%s changed", path);
  g_free(after.bytes);
  g_free(before->bytes);
}

START_TEST(test_not_a_memo_file_refused)
{
  g_autofree char *xml = rounds_xml(2, FALSE);
  g_autoptr(WhCase) c = wh_case_new(xml);
  /* a mistyped path: another program's file, and one larger than any memo file (sparse:
   * a size check before the magic once took it for a damaged memo file and replaced it) */
  g_autofree char *notes = in_case(c, "notes.csv");
  ck_assert(g_file_set_contents(notes, "flow,bytes\n1,2\n", -1, NULL));
  g_autofree char *large = in_case(c, "large.bin");
  FILE *f = fopen(large, "wb");
  ck_assert_ptr_nonnull(f);
  fputs("not a memo file", f);
  ck_assert_int_eq(ftruncate(fileno(f), 300 * 1000 * 1000), 0);
  fclose(f);
  const char *paths[] = {notes, large};
  for (guint i = 0; i < G_N_ELEMENTS(paths); i++) {
    Snapshot before = snapshot(paths[i], i == 0);
    ck_assert_int_eq(run_memo(c, "out", paths[i]), 2);
    wh_case_assert_err_has(c, paths[i]);
    wh_case_assert_err_has(c, "not a Wormhole memo file");
    ck_assert_msg(strchr(c->err, '\n') == c->err + strlen(c->err) - 1, "one line: %s", c->err);
    g_autofree char *out = in_case(c, "out");
    ck_assert_msg(!g_file_test(out, G_FILE_TEST_EXISTS), "the run ran: %s", out);
    assert_unchanged(paths[i], &before);
  }
}
END_TEST

/* Runs whsim as user and group 65534 (nobody), dropping root: the exit status. */
static int whsim_as_nobody(WhCase *c, const char *out, const char *memo)
{
  g_autofree char *out_dir = in_case(c, out);
  const char *argv[] = {"setpriv",
                        "--reuid=65534",
                        "--regid=65534",
                        "--clear-groups",
                        WH_WHSIM_PATH,
                        "run",
                        c->scenario,
                        "--quiet",
                        "--out",
                        out_dir,
                        "--set",
                        MODE_MEMO,
                        "--memo",
                        memo,
                        NULL};
  int status = -1;
  g_autoptr(GError) error = NULL;
  g_clear_pointer(&c->err, g_free);
  ck_assert_msg(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL,
                             &c->err, &status, &error),
                "setpriv: %s", error ? error->message : "");
  ck_assert(WIFEXITED(status));
  return WEXITSTATUS(status);
}

START_TEST(test_read_only_not_written)
{
  g_autofree char *xml = rounds_xml(3, FALSE);
  g_autoptr(WhCase) c = wh_case_new(xml);
  g_autofree char *memo = in_case(c, "ro.db");
  run_memo_ok(c, "first", memo);
  ck_assert_int_eq(g_chmod(memo, 0444), 0);
  /* as whoever runs the tests (root in CI: access() would say writable) */
  Snapshot before = snapshot(memo, TRUE);
  run_memo_ok(c, "second", memo);
  wh_case_assert_err_has(c, "read-only");
  g_autofree char *status = summary_field(c, "second", "memo_file_status");
  ck_assert_str_eq(status, "\"loaded\"");
  ck_assert_uint_gt(summary_u64(c, "second", "memo_hits_from_file"), 0);
  assert_unchanged(memo, &before);

  /* as an unprivileged user in a directory open to all: a rename there could replace
   * the file, so only the mode bits keep it */
  g_autofree char *setpriv = g_find_program_in_path("setpriv");
  if (geteuid() != 0 || setpriv == NULL) {
    printf("SKIPPED: hardening read-only memo file as an unprivileged user: %s\n",
           setpriv ? "not root" : "setpriv not installed");
    return;
  }
  ck_assert_int_eq(g_chmod(c->dir, 0777), 0);
  before = snapshot(memo, TRUE);
  int st = whsim_as_nobody(c, "nobody", memo);
  ck_assert_msg(st == 0, "exit %d: %s", st, c->err);
  wh_case_assert_err_has(c, "read-only");
  assert_unchanged(memo, &before);
}
END_TEST

START_TEST(test_symlink_followed)
{
  g_autofree char *xml = rounds_xml(3, FALSE);
  g_autoptr(WhCase) c = wh_case_new(xml);
  g_autofree char *store = in_case(c, "store");
  ck_assert_int_eq(g_mkdir(store, 0755), 0);
  g_autofree char *target = g_build_filename(store, "real.db", NULL);
  g_autofree char *link = in_case(c, "link.db");
  ck_assert_int_eq(symlink(target, link), 0);
  /* a link to nothing: refused, and left a link */
  ck_assert_int_eq(run_memo(c, "dangling", link), 2);
  wh_case_assert_err_has(c, "symbolic link to a missing file");
  ck_assert(g_file_test(link, G_FILE_TEST_IS_SYMLINK));
  /* a link to a memo file: loaded, and the file it points to replaced */
  run_memo_ok(c, "first", target);
  Snapshot before = snapshot(target, FALSE);
  run_memo_ok(c, "second", link);
  g_autofree char *status = summary_field(c, "second", "memo_file_status");
  ck_assert_str_eq(status, "\"loaded\"");
  ck_assert_uint_gt(summary_u64(c, "second", "memo_hits_from_file"), 0);
  ck_assert_msg(g_file_test(link, G_FILE_TEST_IS_SYMLINK), "%s is no longer a link", link);
  g_autofree char *points = g_file_read_link(link, NULL);
  ck_assert_str_eq(points, target);
  Snapshot after = snapshot(target, FALSE);
  ck_assert_msg(after.st.st_ino != before.st.st_ino, "%s was not written", target);
  /* no temporary file left beside the link; the lock file is beside the target */
  g_autofree char *lock = g_strconcat(target, ".lock", NULL);
  ck_assert(g_file_test(lock, G_FILE_TEST_EXISTS));
  g_autoptr(GDir) d = g_dir_open(c->dir, 0, NULL);
  for (const char *n; (n = g_dir_read_name(d)) != NULL;)
    ck_assert_msg(!g_str_has_prefix(n, "link.db."), "%s left in %s", n, c->dir);
}
END_TEST

/* Starts whsim run on each scenario at once, all with --memo `memo`, and waits for
 * them; asserts each exits 0. */
static void run_together(WhCase *c, char **xmls, guint n, const char *memo)
{
  GPid pids[4];
  ck_assert_uint_le(n, G_N_ELEMENTS(pids));
  for (guint i = 0; i < n; i++) {
    g_autofree char *out = g_strdup_printf("%s/together-%u", c->dir, i);
    const char *argv[] = {WH_WHSIM_PATH, "run",     xmls[i],  "--quiet", "--out", out,
                          "--set",       MODE_MEMO, "--memo", memo,      NULL};
    g_autoptr(GError) error = NULL;
    ck_assert_msg(g_spawn_async(NULL, (char **)argv, NULL,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                                &pids[i], &error),
                  "%s", error ? error->message : "");
  }
  for (guint i = 0; i < n; i++) {
    int status = 0;
    while (waitpid(pids[i], &status, 0) < 0 && errno == EINTR)
      ;
    g_spawn_close_pid(pids[i]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "run %u: status %d", i, status);
  }
}

static char *file_text(const char *path, gsize *len)
{
  char *bytes = NULL;
  ck_assert_msg(g_file_get_contents(path, &bytes, len, NULL), "%s", path);
  return bytes;
}

START_TEST(test_concurrent_runs_keep_union)
{
  g_autoptr(WhCase) c = wh_case_new(NULL);
  char *xmls[2] = {in_case(c, "across.xml"), in_case(c, "local.xml")};
  g_autofree char *across = rounds_xml(12, FALSE), *local = rounds_xml(12, TRUE);
  ck_assert(g_file_set_contents(xmls[0], across, -1, NULL));
  ck_assert(g_file_set_contents(xmls[1], local, -1, NULL));
  /* one run after the other: the reference */
  g_autofree char *seq = in_case(c, "seq.db");
  for (guint i = 0; i < 2; i++)
    run_together(c, &xmls[i], 1, seq);
  /* each alone, to see both hold patterns the other has not */
  g_autofree char *alone0 = in_case(c, "alone0.db"), *alone1 = in_case(c, "alone1.db");
  run_together(c, &xmls[0], 1, alone0);
  run_together(c, &xmls[1], 1, alone1);
  gsize n_seq = 0, n0 = 0, n1 = 0;
  g_autofree char *b_seq = file_text(seq, &n_seq);
  g_autofree char *b0 = file_text(alone0, &n0), *b1 = file_text(alone1, &n1);
  ck_assert_uint_gt(n_seq, MAX(n0, n1));
  /* together, three times: whatever the interleaving, the file is the sequential one */
  for (int k = 0; k < 3; k++) {
    g_autofree char *shared = g_strdup_printf("%s/shared-%d.db", c->dir, k);
    run_together(c, xmls, 2, shared);
    gsize n = 0;
    g_autofree char *b = file_text(shared, &n);
    ck_assert_msg(n == n_seq && memcmp(b, b_seq, n) == 0,
                  "two runs together kept %" G_GSIZE_FORMAT
                  " bytes, one after the other %" G_GSIZE_FORMAT " (alone: %" G_GSIZE_FORMAT
                  " and %" G_GSIZE_FORMAT ")",
                  n, n_seq, n0, n1);
  }
  g_free(xmls[0]);
  g_free(xmls[1]);
}
END_TEST

/* Writes a valid memo file of `n` small entries (a 4-byte key each, no value) with the
 * header (configuration included) of the memo file at `like`. */
static void write_large_memo(const char *like, const char *path, uint64_t n)
{
  gsize len = 0;
  g_autofree char *head = file_text(like, &len);
  ck_assert_uint_ge(len, 72);
  memcpy(head + 56, &n, 8); /* the entry count */
  FILE *f = fopen(path, "wb");
  ck_assert_ptr_nonnull(f);
  uint64_t sum = wh_fnv1a(WH_FNV1A_INIT, head, 64);
  fwrite(head, 1, 64, f);
  for (uint64_t i = 0; i < n; i++) {
    uint8_t e[15];
    uint64_t sig = i * 1000003u + 11;
    uint32_t key = (uint32_t)i;
    memcpy(e, &sig, 8);
    e[8] = 2; /* seen */
    e[9] = 4; /* key bytes */
    e[10] = 0;
    memcpy(e + 11, &key, 4);
    sum = wh_fnv1a(sum, e, sizeof e);
    fwrite(e, 1, sizeof e, f);
  }
  fwrite(&sum, 1, 8, f);
  ck_assert_int_eq(fclose(f), 0);
}

static rlim_t as_limit;

static void limit_address_space(gpointer data)
{
  (void)data;
  struct rlimit r = {as_limit, as_limit};
  setrlimit(RLIMIT_AS, &r);
}

START_TEST(test_max_memory_bounds_load)
{
  g_autofree char *xml = rounds_xml(2, FALSE);
  g_autoptr(WhCase) c = wh_case_new(xml);
  g_autofree char *small = in_case(c, "small.db"), *big = in_case(c, "big.db");
  run_memo_ok(c, "first", small);
  const uint64_t n = 1400 * 1000; /* 21 MB; about 330 MB of heap loaded whole */
  write_large_memo(small, big, n);
  g_autofree char *out = in_case(c, "bounded");
  const char *argv[] = {WH_WHSIM_PATH, "run",    c->scenario, "--quiet",      "--out", out, "--set",
                        MODE_MEMO,     "--memo", big,         "--max-memory", "100MB", NULL};
  /* the address space: the 100 MB promised and 160 MB for the program, its libraries
   * and the file's reading (a sanitizer's shadow memory cannot live under a limit) */
#ifdef WH_SANITIZED
  GSpawnChildSetupFunc setup = NULL;
#else
  GSpawnChildSetupFunc setup = limit_address_space;
  as_limit = (rlim_t)260 << 20;
#endif
  int status = -1;
  g_autofree char *err = NULL;
  g_autoptr(GError) error = NULL;
  ck_assert(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_STDOUT_TO_DEV_NULL, setup, NULL, NULL,
                         &err, &status, &error));
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d: %s", status, err);
  ck_assert_msg(strstr(err, big) && strstr(err, "entries loaded") && strstr(err, "--max-memory"),
                "%s", err);
  g_autofree char *st = summary_field(c, "bounded", "memo_file_status");
  ck_assert_msg(g_str_has_prefix(st, "\"loaded in part: "), "%s", st);
  uint64_t bytes = summary_u64(c, "bounded", "memo_db_bytes");
  ck_assert_uint_gt(bytes, 0);
  ck_assert_uint_lt(bytes, 100u << 20);
  /* nothing of the file is lost: the entries not loaded are still in it */
  FILE *f = fopen(big, "rb");
  ck_assert_ptr_nonnull(f);
  uint8_t head[64];
  ck_assert_uint_eq(fread(head, 1, 64, f), 64);
  fclose(f);
  uint64_t kept;
  memcpy(&kept, head + 56, 8);
  ck_assert_uint_ge(kept, n);
}
END_TEST

/* sent = delivered + dropped + reclaimed in a run's summary; the bytes reclaimed. */
static uint64_t check_identity(const WhCase *c, const char *out)
{
  uint64_t sent = summary_u64(c, out, "data_bytes_sent");
  uint64_t delivered = summary_u64(c, out, "data_bytes_delivered");
  uint64_t dropped = summary_u64(c, out, "data_bytes_dropped");
  uint64_t reclaimed = summary_u64(c, out, "data_bytes_reclaimed");
  ck_assert_msg(sent == delivered + dropped + reclaimed,
                "%s: sent %" G_GUINT64_FORMAT " != delivered %" G_GUINT64_FORMAT
                " + dropped %" G_GUINT64_FORMAT " + reclaimed %" G_GUINT64_FORMAT,
                out, sent, delivered, dropped, reclaimed);
  return reclaimed;
}

START_TEST(test_summary_identity_with_memo)
{
  g_autofree char *xml = rounds_xml(3, FALSE);
  g_autoptr(WhCase) c = wh_case_new(xml);
  g_autofree char *dumbbell = wh_test_source_path("scenarios/dumbbell-dcqcn.xml");
  const char *scenarios[] = {c->scenario, dumbbell};
  uint64_t reclaimed = 0;
  for (guint i = 0; i < G_N_ELEMENTS(scenarios); i++) {
    g_autofree char *memo = g_strdup_printf("%s/identity-%u.db", c->dir, i);
    for (int k = 0; k < 2; k++) {
      g_autofree char *out = g_strdup_printf("identity-%u-%d", i, k);
      g_autofree char *out_dir = in_case(c, out);
      const char *argv[] = {"run",   scenarios[i], "--quiet", "--out", out_dir,
                            "--set", MODE_MEMO,    "--memo",  memo,    NULL};
      int status = wh_test_whsim(argv, NULL, NULL);
      ck_assert_int_eq(status, 0);
      reclaimed += check_identity(c, out);
    }
    g_autofree char *loaded = g_strdup_printf("identity-%u-1", i);
    g_autofree char *st = summary_field(c, loaded, "memo_file_status");
    ck_assert_str_eq(st, "\"loaded\"");
  }
  /* a replay that completes flows reclaims the packets they still had in flight */
  ck_assert_uint_gt(reclaimed, 0);
}
END_TEST

Suite *wh_hardening_memo_suite(void)
{
  Suite *s = suite_create("hardening");
  TCase *tc = tcase_create("memo-file-paths");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_not_a_memo_file_refused);
  tcase_add_test(tc, test_read_only_not_written);
  tcase_add_test(tc, test_symlink_followed);
  suite_add_tcase(s, tc);
  TCase *tw = tcase_create("memo-concurrent-runs");
  tcase_set_timeout(tw, 60);
  tcase_add_test(tw, test_concurrent_runs_keep_union);
  suite_add_tcase(s, tw);
  TCase *tm = tcase_create("memo-max-memory");
  tcase_set_timeout(tm, 60);
  tcase_add_test(tm, test_max_memory_bounds_load);
  suite_add_tcase(s, tm);
  TCase *ti = tcase_create("memo-summary-identity");
  tcase_set_timeout(ti, 60);
  tcase_add_test(ti, test_summary_identity_with_memo);
  suite_add_tcase(s, ti);
  return s;
}
