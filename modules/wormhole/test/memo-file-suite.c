/* `--memo FILE`: the memo database kept across runs of the whsim binary. A scenario
 * of three equal HPCC rounds on a dumbbell (the memo-db suite's) is run with
 * Mode=memo: a first run writes the file, a second loads it and replays already in its
 * first round; each kind of damaged or stale memo file is ignored with a warning,
 * leaves the run the one a fresh database gives and is replaced; a file that is not a
 * memo file, a path that cannot hold the file, or a mode without patterns, is refused
 * before anything runs. About 20 runs of a few milliseconds. */
#include <check.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "test-util.h"

/* The file header's layout (memo-db.h): magic, version, byte-order mark, build id,
 * configuration hash, entry count. */
#define VERSION_AT 8
#define BOM_AT 12
#define HEADER_BYTES 64

static const char scenario_xml[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<scenario name=\"rounds\" seed=\"1\" cc=\"hpcc\">\n"
    "  <topology type=\"wh::Dumbbell\"><param name=\"Pairs\" value=\"3\"/></topology>\n"
    "  <flows>\n"
    "    <flow id=\"a0\" src=\"0\" dst=\"3\" size=\"2MB\" start=\"0ms\"/>\n"
    "    <flow id=\"b0\" src=\"1\" dst=\"4\" size=\"2MB\" start=\"0ms\"/>\n"
    "    <flow id=\"a1\" src=\"0\" dst=\"3\" size=\"2MB\" start=\"5ms\"/>\n"
    "    <flow id=\"b1\" src=\"1\" dst=\"4\" size=\"2MB\" start=\"5ms\"/>\n"
    "    <flow id=\"a2\" src=\"0\" dst=\"3\" size=\"2MB\" start=\"10ms\"/>\n"
    "    <flow id=\"b2\" src=\"1\" dst=\"4\" size=\"2MB\" start=\"10ms\"/>\n"
    "  </flows>\n"
    "</scenario>\n";

static char *tmp;      /* the test's directory */
static char *xml;      /* the scenario in it */
static char *baseline; /* flows.csv of a run without --memo */

static char *in_tmp(const char *name)
{
  return g_build_filename(tmp, name, NULL);
}

/* whsim `cmd` on the scenario, outputs in tmp/`out`, Mode `mode` and one more --set
 * (nullable), --memo `memo` (nullable); the exit status, stderr in *err. */
static int whsim(const char *cmd, const char *out, const char *mode, const char *set,
                 const char *memo, char **err)
{
  g_autofree char *out_dir = in_tmp(out);
  g_autofree char *mode_set = g_strdup_printf("wh::Wormhole::Mode=%s", mode);
  const char *args[16] = {cmd, xml, "--quiet", "--out", out_dir, "--set", mode_set};
  int n = 7;
  if (set) {
    args[n++] = "--set";
    args[n++] = set;
  }
  if (memo) {
    args[n++] = "--memo";
    args[n++] = memo;
  }
  return wh_test_whsim(args, NULL, err);
}

/* A run in memo mode that must end clean (exit 0). (transfer full: stderr) */
static char *run_ok(const char *out, const char *set, const char *memo)
{
  char *err = NULL;
  int status = whsim("run", out, "memo", set, memo, &err);
  ck_assert_msg(status == 0, "whsim run --out %s: exit %d: %s", out, status, err);
  return err;
}

/* A top-level number of a run's summary.json. */
static uint64_t summary_u64(const char *out, const char *key)
{
  g_autofree char *dir = in_tmp(out);
  g_autofree char *json = wh_test_read_in(dir, "summary.json");
  g_autofree char *needle = g_strdup_printf("\"%s\" : ", key);
  const char *p = strstr(json, needle);
  ck_assert_msg(p != NULL, "summary.json of %s has no %s", out, key);
  return g_ascii_strtoull(p + strlen(needle), NULL, 10);
}

/* A run's memo_file_status (transfer full). */
static char *summary_status(const char *out)
{
  g_autofree char *dir = in_tmp(out);
  g_autofree char *json = wh_test_read_in(dir, "summary.json");
  const char *p = strstr(json, "\"memo_file_status\" : \"");
  ck_assert_msg(p != NULL, "summary.json of %s has no memo_file_status", out);
  p += strlen("\"memo_file_status\" : \"");
  return g_strndup(p, strcspn(p, "\""));
}

/* Every finished flow's bytes are exact flow by flow: wormhole-flows.csv's bytes sent
 * as packets and bytes advanced add up to the flow's size in flows.csv. */
static void check_flow_bytes(const char *out)
{
  g_autofree char *dir = in_tmp(out);
  g_autofree char *flows = g_build_filename(dir, "flows.csv", NULL);
  g_autofree char *wflows = g_build_filename(dir, "wormhole-flows.csv", NULL);
  g_autoptr(WhCsvReader) a = wh_csv_reader_new_file(flows, 64 << 20, 4096, NULL);
  g_autoptr(WhCsvReader) b = wh_csv_reader_new_file(wflows, 64 << 20, 4096, NULL);
  ck_assert(a && b);
  ck_assert(wh_csv_reader_header(a, "flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key", NULL));
  ck_assert(wh_csv_reader_header(
      b,
      "flow_id,start_ps,end_ps,samples,steady_fraction,partition_steady_fraction,evaluations,"
      "dr_min,dr_mean,dr_max,skipped_ps,advanced_bytes,packet_bytes",
      NULL));
  WhCsvRecord f, w;
  guint n = 0, advanced = 0;
  while (wh_csv_reader_next(a, &f, NULL)) {
    ck_assert_msg(wh_csv_reader_next(b, &w, NULL), "wormhole-flows.csv ends before flows.csv");
    ck_assert(f.n_fields == 8 && w.n_fields == 13);
    ck_assert_str_eq(f.fields[0], w.fields[0]);
    uint64_t size = g_ascii_strtoull(f.fields[3], NULL, 10);
    uint64_t adv = g_ascii_strtoull(w.fields[11], NULL, 10);
    uint64_t sent = g_ascii_strtoull(w.fields[12], NULL, 10);
    if (*f.fields[5]) /* finished */
      ck_assert_msg(adv + sent == size,
                    "%s: flow %s: %" G_GUINT64_FORMAT " advanced + %" G_GUINT64_FORMAT
                    " sent as packets, of %" G_GUINT64_FORMAT " bytes",
                    out, f.fields[0], adv, sent, size);
    advanced += adv > 0;
    n++;
  }
  ck_assert_msg(!wh_csv_reader_next(b, &w, NULL),
                "wormhole-flows.csv has more lines than flows.csv");
  ck_assert_msg(n > 0 && advanced > 0, "%s: %u flows, %u with bytes advanced", out, n, advanced);
}

/* The hits of a run by the kind of the entry found add up to its hits, its replays by
 * kind are of hits of that kind, and wormhole.json says the same. */
static void check_kinds(const char *out)
{
  check_flow_bytes(out);
  uint64_t seen = summary_u64(out, "memo_hits_seen");
  uint64_t converged = summary_u64(out, "memo_hits_converged");
  uint64_t completed = summary_u64(out, "memo_hits_completed");
  ck_assert_uint_eq(seen + converged + completed, summary_u64(out, "memo_hits"));
  ck_assert_uint_le(summary_u64(out, "memo_replays_converged"), converged);
  ck_assert_uint_le(summary_u64(out, "memo_replays_completed"), completed);
  ck_assert_uint_le(summary_u64(out, "memo_replays_drained"), summary_u64(out, "memo_hits"));
  g_autofree char *dir = in_tmp(out);
  g_autofree char *wj = wh_test_read_in(dir, "wormhole.json");
  g_autofree char *hits =
      g_strdup_printf("{\"seen\":%" G_GUINT64_FORMAT ",\"converged\":%" G_GUINT64_FORMAT
                      ",\"completed\":%" G_GUINT64_FORMAT "}",
                      seen, converged, completed);
  g_autofree char *found = wh_test_json_at(wj, "$.patterns.hits");
  ck_assert_msg(g_strcmp0(found, hits) == 0, "wormhole.json: hits %s, not %s", found, hits);
}

static char *flows_of(const char *out)
{
  g_autofree char *dir = in_tmp(out);
  return wh_test_read_in(dir, "flows.csv");
}

/* Flow `flow`'s advanced_bytes in run `out`'s wormhole-flows.csv. */
static uint64_t advanced_of(const char *out, uint32_t flow)
{
  g_autofree char *dir = in_tmp(out);
  g_autofree char *csv = wh_test_read_in(dir, "wormhole-flows.csv");
  g_auto(GStrv) lines = g_strsplit(csv, "\n", -1);
  g_auto(GStrv) head = g_strsplit(lines[0], ",", -1);
  guint col = 0;
  while (head[col] && strcmp(head[col], "advanced_bytes") != 0)
    col++;
  ck_assert_ptr_nonnull(head[col]);
  g_auto(GStrv) row = g_strsplit(lines[1 + flow], ",", -1);
  ck_assert_uint_eq(g_ascii_strtoull(row[0], NULL, 10), flow);
  return g_ascii_strtoull(row[col], NULL, 10);
}

/* The file a first run writes (tmp/`name`), with `set` (nullable). (transfer full) */
static char *memo_file(const char *name, const char *set)
{
  char *path = in_tmp(name);
  g_autofree char *err = run_ok("first", set, path);
  ck_assert(g_file_test(path, G_FILE_TEST_IS_REGULAR));
  g_autofree char *status = summary_status("first");
  ck_assert_str_eq(status, "new");
  return path;
}

static void setup(void)
{
  tmp = g_dir_make_tmp("wh-memo-file-XXXXXX", NULL);
  ck_assert_ptr_nonnull(tmp);
  xml = in_tmp("rounds.xml");
  ck_assert(g_file_set_contents(xml, scenario_xml, -1, NULL));
  g_autofree char *err = run_ok("fresh", NULL, NULL);
  baseline = flows_of("fresh");
}

static void teardown(void)
{
  wh_test_remove_tree(tmp);
  g_clear_pointer(&tmp, g_free);
  g_clear_pointer(&xml, g_free);
  g_clear_pointer(&baseline, g_free);
}

START_TEST(test_second_run_replays_from_file)
{
  g_autofree char *path = memo_file("m.db", NULL);
  /* the first run, with a new database, is the run without --memo */
  g_autofree char *first = flows_of("first");
  ck_assert_str_eq(first, baseline);
  ck_assert_uint_eq(summary_u64("first", "memo_hits_from_file"), 0);
  uint64_t distinct = summary_u64("first", "memo_distinct");
  ck_assert_uint_gt(distinct, 0);
  check_kinds("first");

  g_autofree char *err = run_ok("second", NULL, path);
  ck_assert_msg(strstr(err, "warning") == NULL, "%s", err);
  g_autofree char *status = summary_status("second");
  ck_assert_str_eq(status, "loaded");
  uint64_t from_file = summary_u64("second", "memo_hits_from_file");
  ck_assert_uint_gt(from_file, 0);
  ck_assert_uint_le(from_file, summary_u64("second", "memo_hits"));
  /* at most as many lookups: a drained phase replayed has no phases of its own after it */
  ck_assert_uint_le(summary_u64("second", "memo_lookups"), summary_u64("first", "memo_lookups"));
  /* every phase of the second run was known: nothing new, and every pattern the first
   * stored is counted in wormhole.json too */
  ck_assert_uint_eq(summary_u64("second", "memo_distinct"), 0);
  /* it replays: the first run's phases found (they had completed), and replayed, as
   * drains where their drained outcomes fit */
  check_kinds("second");
  ck_assert_uint_gt(summary_u64("second", "memo_hits_completed"), 0);
  ck_assert_uint_gt(summary_u64("second", "memo_replays_completed") +
                        summary_u64("second", "memo_replays_drained"),
                    0);
  g_autofree char *dir = in_tmp("second");
  g_autofree char *wj = wh_test_read_in(dir, "wormhole.json");
  g_autofree char *field =
      g_strdup_printf("\"repeated_from_file\" : %" G_GUINT64_FORMAT, from_file);
  ck_assert_msg(strstr(wj, field) != NULL, "wormhole.json lacks %s", field);

  /* it replays already in the first round: fewer events run, and that round's first
   * flow has more of its bytes advanced than in the first run, where its phase was
   * simulated packet by packet (a drained replay ends it where the first run did) */
  uint64_t ev1 = summary_u64("first", "events_executed");
  uint64_t ev2 = summary_u64("second", "events_executed");
  fprintf(stderr,
          "memo-file: events %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT
          " hits from the file\n",
          ev1, ev2, from_file);
  ck_assert_uint_lt(ev2, ev1);
  g_autofree char *second = flows_of("second");
  g_auto(GStrv) l1 = g_strsplit(first, "\n", -1);
  g_auto(GStrv) l2 = g_strsplit(second, "\n", -1);
  ck_assert(g_str_has_prefix(l1[1], "a0,") && g_str_has_prefix(l2[1], "a0,"));
  ck_assert_uint_gt(advanced_of("second", 0), advanced_of("first", 0));
  ck_assert_uint_eq(summary_u64("second", "memo_db_bytes"), summary_u64("first", "memo_db_bytes"));
}
END_TEST

START_TEST(test_compare_memo)
{
  /* compare: the file is the Wormhole run's; the exact run stays exact */
  g_autofree char *path = in_tmp("c.db");
  g_autofree char *out = in_tmp("cmp");
  const char *args[] = {
      "compare", xml,  "--quiet", "--out", out, "--set", "wh::Wormhole::Mode=memo",
      "--memo",  path, NULL};
  g_autofree char *err1 = NULL, *err2 = NULL;
  ck_assert_int_eq(wh_test_whsim(args, NULL, &err1), 0);
  ck_assert(g_file_test(path, G_FILE_TEST_IS_REGULAR));
  ck_assert_int_eq(wh_test_whsim(args, NULL, &err2), 0);
  g_autofree char *cj = wh_test_read_in(out, "compare.json");
  ck_assert_msg(strstr(cj, "\"memo_file_status\" : \"loaded\"") != NULL, "%s", cj);
  g_autofree char *exact = g_build_filename(out, "exact", NULL);
  g_autofree char *ej = wh_test_read_in(exact, "summary.json");
  ck_assert(strstr(ej, "memo_") == NULL);
}
END_TEST

/* A copy of a good memo file with `len` bytes (0: all) and the 4 bytes at `at`
 * replaced by `word` (at < 0: none) or, with `flip`, the byte at `at` inverted. */
static char *bad_copy(const char *good, const char *name, gsize len, gssize at, uint32_t word,
                      gboolean flip)
{
  g_autofree char *bytes = NULL;
  gsize n = 0;
  ck_assert(g_file_get_contents(good, &bytes, &n, NULL));
  ck_assert_uint_gt(n, HEADER_BYTES + 16);
  if (at >= 0 && flip)
    bytes[at] = (char)~bytes[at];
  else if (at >= 0)
    memcpy(bytes + at, &word, 4);
  char *path = in_tmp(name);
  ck_assert(g_file_set_contents(path, bytes, len ? (gssize)len : (gssize)n, NULL));
  return path;
}

/* A run with a bad memo file: a warning naming it and `reason`, exit 0, and the run is
 * the one of a fresh database. */
static void check_ignored(const char *path, const char *reason, const char *out)
{
  g_autofree char *err = run_ok(out, NULL, path);
  g_autofree char *warning = g_strdup_printf("whsim: warning: %s: ", path);
  ck_assert_msg(strstr(err, warning) != NULL, "no warning naming %s: %s", path, err);
  ck_assert_msg(strstr(err, reason) != NULL, "the warning lacks \"%s\": %s", reason, err);
  ck_assert_msg(strstr(err, ": ignored") != NULL, "%s", err);
  g_autofree char *flows = flows_of(out);
  ck_assert_str_eq(flows, baseline);
  g_autofree char *status = summary_status(out);
  ck_assert_msg(g_str_has_prefix(status, "ignored: ") && strstr(status, reason), "%s", status);
  ck_assert_uint_eq(summary_u64(out, "memo_hits_from_file"), 0);
}

START_TEST(test_bad_files_ignored)
{
  g_autofree char *good = memo_file("good.db", NULL);
  gsize n = 0;
  g_autofree char *bytes = NULL;
  ck_assert(g_file_get_contents(good, &bytes, &n, NULL));
  struct {
    const char *name, *reason;
    gsize len;
    gssize at;
    uint32_t word;
    gboolean flip;
  } bad[] = {
      {"truncated.db", "truncated", HEADER_BYTES / 2, -1, 0, FALSE},
      {"truncated-entry.db", "checksum", n - 20, -1, 0, FALSE},
      {"version.db", "format version 99", 0, VERSION_AT, 99, FALSE},
      {"byte-order.db", "other byte order", 0, BOM_AT, 0x04030201u, FALSE},
      {"damaged.db", "checksum", 0, (gssize)n - 16, 0, TRUE},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
    g_autofree char *path =
        bad_copy(good, bad[i].name, bad[i].len, bad[i].at, bad[i].word, bad[i].flip);
    g_autofree char *before = NULL, *after = NULL;
    gsize before_n = 0, after_n = 0;
    ck_assert(g_file_get_contents(path, &before, &before_n, NULL));
    check_ignored(path, bad[i].reason, "bad");
    ck_assert(g_file_get_contents(path, &after, &after_n, NULL));
    /* a stale memo file: replaced by the run's database (a fresh one's, the good file) */
    ck_assert_uint_eq(after_n, n);
    ck_assert_int_eq(memcmp(after, bytes, after_n), 0);
  }
}
END_TEST

START_TEST(test_other_configuration_ignored)
{
  g_autofree char *delay = memo_file("delay.db", "wh::Link::Delay=2us");
  check_ignored(delay, "another configuration", "other-delay");
  /* another CC: same scenario, DCTCP's file */
  g_autofree char *cc = in_tmp("cc.db");
  g_autofree char *out = in_tmp("dctcp");
  g_autofree char *err = NULL;
  const char *args[] = {
      "run",    xml, "--quiet", "--out", out, "--cc", "dctcp", "--set", "wh::Wormhole::Mode=memo",
      "--memo", cc,  NULL};
  ck_assert_int_eq(wh_test_whsim(args, NULL, &err), 0);
  check_ignored(cc, "another configuration", "other-cc");
}
END_TEST

/* A refused --memo: exit 2 naming `memo` (and `what`), nothing written; by `whsim
 * compare` too when `compare`. */
static void check_refused(const char *mode, const char *set, const char *memo, const char *what,
                          gboolean compare)
{
  g_autofree char *err = NULL;
  g_autofree char *out = in_tmp("refused");
  ck_assert_int_eq(whsim("run", "refused", mode, set, memo, &err), 2);
  ck_assert_msg(strstr(err, memo) != NULL && strstr(err, what) != NULL, "%s", err);
  ck_assert_msg(!g_file_test(out, G_FILE_TEST_EXISTS), "%s was written", out);
  if (!compare)
    return;
  g_autofree char *err2 = NULL;
  g_autofree char *out2 = in_tmp("refused-compare");
  ck_assert_int_eq(whsim("compare", "refused-compare", mode, set, memo, &err2), 2);
  ck_assert_msg(strstr(err2, memo) != NULL && strstr(err2, what) != NULL, "%s", err2);
  ck_assert_msg(!g_file_test(out2, G_FILE_TEST_EXISTS), "%s was written", out2);
}

START_TEST(test_refused_paths)
{
  check_refused("memo", NULL, tmp, "is a directory", TRUE);
  /* not a memo file at all (another magic): refused before the run, left as it is */
  g_autofree char *good = memo_file("good.db", NULL);
  g_autofree char *magic = bad_copy(good, "magic.db", 0, 0, 0x4c4d5831u, FALSE);
  g_autofree char *before = NULL, *after = NULL;
  gsize before_n = 0, after_n = 0;
  ck_assert(g_file_get_contents(magic, &before, &before_n, NULL));
  check_refused("memo", NULL, magic, "not a Wormhole memo file", TRUE);
  ck_assert(g_file_get_contents(magic, &after, &after_n, NULL));
  ck_assert(before_n == after_n && memcmp(before, after, after_n) == 0);
  g_autofree char *missing = g_build_filename(tmp, "no-such-dir", "m.db", NULL);
  check_refused("memo", NULL, missing, "does not exist", TRUE);
  ck_assert(!g_file_test(missing, G_FILE_TEST_EXISTS));
}
END_TEST

START_TEST(test_refused_without_patterns)
{
  g_autofree char *path = in_tmp("skip.db");
  check_refused("skip", NULL, path, "Patterns=true", TRUE);
  check_refused("off", NULL, path, "Mode=memo", FALSE);
  ck_assert(!g_file_test(path, G_FILE_TEST_EXISTS));
  /* skip with patterns counts them: the file is kept */
  g_autofree char *err = NULL;
  ck_assert_int_eq(whsim("run", "skip", "skip", "wh::Wormhole::Patterns=true", path, &err), 0);
  ck_assert(g_file_test(path, G_FILE_TEST_IS_REGULAR));
}
END_TEST

Suite *wh_memo_file_suite(void)
{
  Suite *s = suite_create("memo-file");
  TCase *tc = tcase_create("memo-file");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_second_run_replays_from_file);
  tcase_add_test(tc, test_compare_memo);
  tcase_add_test(tc, test_bad_files_ignored);
  tcase_add_test(tc, test_other_configuration_ignored);
  tcase_add_test(tc, test_refused_paths);
  tcase_add_test(tc, test_refused_without_patterns);
  suite_add_tcase(s, tc);
  return s;
}
