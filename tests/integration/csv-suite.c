/* The csv suite: the CSV writer and reader of csv.h (round trips of hostile fields
 * through a string and a file, with records across the reader's 64 KiB blocks; CRLF,
 * a field of one quote, empty and quoted empty fields; refusals of an unterminated
 * quote, stray quotes, a bare carriage return, a NUL byte, a record over its cap, a
 * file over its cap and a FIFO, each naming the file and line), then flow ids that
 * need quoting (a comma, a quote, a line feed, a carriage return, non-ASCII letters, a
 * backslash) through `whsim run`, `whsim plot`, `whsim compare --exact` and
 * `whsim compare`, read back with their exact ids. Cost: about a second. */
#include <check.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/stat.h>

#include "csv.h"
#include "test-util.h"

/* Fields that must survive a round trip: every special character of RFC 4180 alone,
 * doubled and mixed, empty fields, spaces, non-ASCII text and a backslash. */
static const char *const hostile[] = {
    "",
    "\"",
    "\"\"",
    ",",
    ",,",
    "\n",
    "\r",
    "\r\n",
    "\n\r",
    "a,x",
    "q\"uote",
    "new\nline",
    "cr\rlf",
    "café",
    "back\\slash",
    " spaced ",
    "\"quoted\"",
    "x\"",
    "\"x",
    "end,",
    "tab\there",
    "日本語,\"混ぜ\"\r\n",
    "plain",
};

/* The hostile fields as records of `width` fields each, `n` records, written with
 * wh_csv_field. (transfer full) */
static GString *hostile_text(guint n, guint width)
{
  GString *s = g_string_new(NULL);
  for (guint r = 0, k = 0; r < n; r++) {
    for (guint f = 0; f < width; f++, k++) {
      if (f)
        g_string_append_c(s, ',');
      wh_csv_field(s, hostile[k % G_N_ELEMENTS(hostile)]);
    }
    g_string_append(s, r % 3 == 2 ? "\r\n" : "\n");
  }
  return s;
}

/* Reads the records of hostile_text(n, width) from `r`: each field and each record's
 * first line as written. */
static void assert_hostile_records(WhCsvReader *r, guint n, guint width)
{
  WhCsvRecord rec;
  g_autoptr(GError) err = NULL;
  guint line = 1, k = 0, records = 0;
  while (wh_csv_reader_next(r, &rec, &err)) {
    ck_assert_uint_eq(rec.n_fields, width);
    ck_assert_uint_eq(rec.line, line);
    for (guint f = 0; f < width; f++, k++) {
      const char *want = hostile[k % G_N_ELEMENTS(hostile)];
      ck_assert_msg(strcmp(rec.fields[f], want) == 0, "record %u field %u: \"%s\", wrote \"%s\"",
                    records, f, g_strescape(rec.fields[f], NULL), g_strescape(want, NULL));
      for (const char *p = want; *p; p++)
        line += *p == '\n';
    }
    line++;
    records++;
  }
  ck_assert_msg(err == NULL, "%s", err ? err->message : "");
  ck_assert_uint_eq(records, n);
}

/* Writing: a field is quoted only when it must be, its quotes doubled; the stream
 * writer writes the same bytes. */
START_TEST(test_csv_writer)
{
  static const struct {
    const char *in, *out;
  } cases[] = {{"plain", "plain"},       {"", ""},
               {"café", "café"},         {"back\\slash", "back\\slash"},
               {"a,x", "\"a,x\""},       {"q\"uote", "\"q\"\"uote\""},
               {"\"", "\"\"\"\""},       {"new\nline", "\"new\nline\""},
               {"cr\rlf", "\"cr\rlf\""}, {" spaced ", " spaced "}};
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autoptr(GString) s = g_string_new(NULL);
    wh_csv_field(s, cases[i].in);
    ck_assert_str_eq(s->str, cases[i].out);
    ck_assert(wh_csv_needs_quotes(cases[i].in) == (strcmp(cases[i].in, cases[i].out) != 0));
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    wh_csv_field_file(f, cases[i].in);
    fclose(f);
    ck_assert_str_eq(buf, cases[i].out);
    free(buf);
  }
}
END_TEST

/* Hostile fields written and read back from a string, then from a file large enough
 * that records (quoted line breaks among them) cross the reader's blocks. */
START_TEST(test_csv_round_trip)
{
  g_autoptr(GString) small = hostile_text(7, G_N_ELEMENTS(hostile));
  g_autoptr(WhCsvReader) r = wh_csv_reader_new_data("small", small->str, small->len, 4096);
  assert_hostile_records(r, 7, G_N_ELEMENTS(hostile));
  g_autofree char *tmp = g_dir_make_tmp("wh-csv-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(tmp, "big.csv", NULL);
  g_autoptr(GString) big = hostile_text(20000, 5);
  ck_assert_uint_gt(big->len, 4 * 65536);
  ck_assert(g_file_set_contents(path, big->str, (gssize)big->len, NULL));
  g_autoptr(GError) err = NULL;
  g_autoptr(WhCsvReader) f = wh_csv_reader_new_file(path, big->len, 4096, &err);
  ck_assert_msg(f != NULL, "%s", err ? err->message : "");
  assert_hostile_records(f, 20000, 5);
  /* the last record without its line end */
  const char *last = "a,\"b\nc\"";
  g_autoptr(WhCsvReader) l = wh_csv_reader_new_data("last", last, strlen(last), 64);
  WhCsvRecord rec;
  ck_assert(wh_csv_reader_next(l, &rec, &err));
  ck_assert_uint_eq(rec.n_fields, 2);
  ck_assert_str_eq(rec.fields[1], "b\nc");
  ck_assert(!wh_csv_reader_next(l, &rec, &err));
  ck_assert_ptr_null(err);
  g_remove(path);
  g_rmdir(tmp);
}
END_TEST

/* The fields of each record of `text`, joined with '|' and records with ';' (fields
 * holding neither), or the error message. (transfer full) */
static char *parsed(const char *text, gsize max_record)
{
  g_autoptr(WhCsvReader) r = wh_csv_reader_new_data("t.csv", text, strlen(text), max_record);
  GString *s = g_string_new(NULL);
  WhCsvRecord rec;
  g_autoptr(GError) err = NULL;
  while (wh_csv_reader_next(r, &rec, &err)) {
    g_string_append_printf(s, "%u:", rec.line);
    for (guint i = 0; i < rec.n_fields; i++)
      g_string_append_printf(s, "%s%s", i ? "|" : "", rec.fields[i]);
    g_string_append_c(s, ';');
  }
  if (err) {
    g_string_assign(s, err->message);
    ck_assert_uint_ne(err->code, WH_CSV_ERROR_READ);
  }
  return g_string_free(s, FALSE);
}

/* Line ends, empty and quoted fields, and the malformed records the reader refuses,
 * each named by the file and the line of the fault. */
START_TEST(test_csv_reader_cases)
{
  static const struct {
    const char *in, *out;
  } cases[] = {
      {"a,b\r\nc,d\r\n", "1:a|b;2:c|d;"},
      {"\"x\r\ny\",z\r\n", "1:x\r\ny|z;"},
      {"\"\"\"\"\n", "1:\";"},
      {",,\n", "1:||;"},
      {"\"\",a\n", "1:|a;"},
      {"a\n\nb\n", "1:a;2:;3:b;"},
      {"", ""},
      {"a", "1:a;"},
      {"x\n\"a\nb\nc\",d\ne\n", "1:x;2:a\nb\nc|d;5:e;"},
      {"a,b\nc,\"d\ne\n", "t.csv:2: a quoted field is not closed (its quote opens on this line)"},
      {"a\nb\"c\n", "t.csv:2: a quote inside an unquoted field (a field holding one must be "
                    "quoted, its quotes doubled)"},
      {"\"a\nb\"c\n", "t.csv:2: text after the closing quote of a field (a field holding a "
                      "quote must be quoted whole, its quotes doubled)"},
      {"a\rb\n", "t.csv:1: a carriage return outside quotes and not before a line feed"},
      {"a\n\"b\nc\"\n0123456789abcdef0123,x\n", "t.csv:4: a record longer than 16 bytes"},
  };
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *got = parsed(cases[i].in, 16);
    ck_assert_msg(strcmp(got, cases[i].out) == 0, "case %u: \"%s\", expected \"%s\"", i,
                  g_strescape(got, NULL), g_strescape(cases[i].out, NULL));
  }
  static const char nul[] = "a,b\nc\0d\n";
  g_autoptr(WhCsvReader) r = wh_csv_reader_new_data("nul.csv", nul, sizeof nul - 1, 64);
  WhCsvRecord rec;
  g_autoptr(GError) err = NULL;
  ck_assert(wh_csv_reader_next(r, &rec, &err));
  ck_assert(!wh_csv_reader_next(r, &rec, &err));
  ck_assert_str_eq(err->message, "nul.csv:2: a NUL byte: not a text file");
  /* the header */
  const char *text = "x,y\n1,2\n";
  g_autoptr(WhCsvReader) h = wh_csv_reader_new_data("h.csv", text, strlen(text), 64);
  g_clear_error(&err);
  ck_assert(!wh_csv_reader_header(h, "x,z", &err));
  ck_assert_str_eq(err->message, "h.csv:1: expected the header \"x,z\" (a whsim output file)");
  g_autoptr(WhCsvReader) h2 = wh_csv_reader_new_data("h.csv", text, strlen(text), 64);
  ck_assert(wh_csv_reader_header(h2, "x,y", NULL));
  ck_assert(wh_csv_reader_next(h2, &rec, NULL));
  ck_assert_uint_eq(rec.line, 2);
  g_autoptr(WhCsvReader) e = wh_csv_reader_new_data("e.csv", "", 0, 64);
  g_clear_error(&err);
  ck_assert(!wh_csv_reader_header(e, "x,y", &err));
  ck_assert_str_eq(err->message, "e.csv: empty: expected the header \"x,y\"");
}
END_TEST

/* A file over its cap, a record over its cap across blocks, a FIFO and a directory:
 * refused, naming the file, without blocking. */
START_TEST(test_csv_reader_files)
{
  g_autofree char *tmp = g_dir_make_tmp("wh-csv-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(tmp, "f.csv", NULL);
  g_autoptr(GString) text = g_string_new("a,b\n\"");
  for (int i = 0; i < 200000; i++)
    g_string_append_c(text, i % 64 ? 'x' : '\n');
  g_string_append(text, "\"\n");
  ck_assert(g_file_set_contents(path, text->str, (gssize)text->len, NULL));
  g_autoptr(GError) err = NULL;
  ck_assert_ptr_null(wh_csv_reader_new_file(path, 1000, 1 << 20, &err));
  ck_assert_int_eq(err->code, WH_CSV_ERROR_SIZE);
  ck_assert_msg(g_str_has_prefix(err->message, path) && strstr(err->message, ": larger than"), "%s",
                err->message);
  g_clear_error(&err);
  g_autoptr(WhCsvReader) r = wh_csv_reader_new_file(path, 1 << 20, 100000, &err);
  ck_assert_ptr_nonnull(r);
  WhCsvRecord rec;
  ck_assert(wh_csv_reader_next(r, &rec, &err));
  ck_assert(!wh_csv_reader_next(r, &rec, &err));
  g_autofree char *want = g_strdup_printf("%s:2: a record longer than 100000 bytes", path);
  ck_assert_str_eq(err->message, want);
  g_clear_error(&err);
  g_autoptr(WhCsvReader) whole = wh_csv_reader_new_file(path, 1 << 20, 1 << 20, &err);
  ck_assert(wh_csv_reader_next(whole, &rec, &err) && wh_csv_reader_next(whole, &rec, &err));
  ck_assert_uint_eq(strlen(rec.fields[0]), 200000);
  g_remove(path);
  ck_assert_int_eq(mkfifo(path, 0600), 0);
  ck_assert_ptr_null(wh_csv_reader_new_file(path, 1 << 20, 64, &err));
  ck_assert_msg(strstr(err->message, "f.csv: not a regular file"), "%s", err->message);
  g_clear_error(&err);
  ck_assert_ptr_null(wh_csv_reader_new_file(tmp, 1 << 20, 64, &err));
  ck_assert_msg(strstr(err->message, ": not a regular file"), "%s", err->message);
  g_remove(path);
  g_rmdir(tmp);
}
END_TEST

/* The ids of the hostile-ids scenario, in its order. */
static const char *const ids[] = {"a,x",         "q\"uote", "new\nline", "café",
                                  "back\\slash", "cr\rlf",  "crlf\r\n2"};

/* A dumbbell whose flows carry the ids (line breaks as character references, which
 * XML keeps in an attribute); flow sizes vary, so that every plot is drawn.
 * (transfer full) */
static char *hostile_ids_xml(void)
{
  GString *s = g_string_new("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                            "<scenario name=\"hostile-ids\">\n"
                            "  <topology type=\"wh::Dumbbell\"><param name=\"Pairs\" "
                            "value=\"4\"/></topology>\n  <flows>\n");
  for (guint i = 0; i < G_N_ELEMENTS(ids); i++) {
    g_autofree char *escaped = g_markup_escape_text(ids[i], -1);
    GString *attr = g_string_new(NULL);
    for (const char *p = escaped; *p; p++) {
      if (*p == '\n' || *p == '\r')
        g_string_append_printf(attr, "&#%d;", *p);
      else
        g_string_append_c(attr, *p);
    }
    g_string_append_printf(s, "    <flow id=\"%s\" src=\"%u\" dst=\"%u\" size=\"%uKB\"/>\n",
                           attr->str, i % 4, 4 + (i + 1) % 4, 10 * (i + 1));
    g_string_free(attr, TRUE);
  }
  g_string_append(s, "  </flows>\n</scenario>\n");
  return g_string_free(s, FALSE);
}

/* Asserts that column `col` of DIR/name, read with the reader, holds the ids: one
 * record per id in their order when `once`, else each id and no other. */
static void assert_ids(const char *dir, const char *name, guint col, gboolean once)
{
  g_autofree char *text = wh_test_read_in(dir, name);
  g_autoptr(GPtrArray) rows = wh_test_csv_rows(text, NULL);
  g_autoptr(GPtrArray) seen = g_ptr_array_new();
  for (guint i = 0; i < rows->len; i++) {
    const char *id = ((char **)rows->pdata[i])[col];
    if (once || !g_ptr_array_find_with_equal_func(seen, id, g_str_equal, NULL))
      g_ptr_array_add(seen, (gpointer)id);
  }
  ck_assert_msg(seen->len == G_N_ELEMENTS(ids), "%s/%s: %u ids", dir, name, seen->len);
  for (guint i = 0; i < G_N_ELEMENTS(ids); i++) {
    gboolean found = once ? strcmp(seen->pdata[i], ids[i]) == 0
                          : g_ptr_array_find_with_equal_func(seen, ids[i], g_str_equal, NULL);
    ck_assert_msg(found, "%s/%s: id %u (\"%s\") not read back", dir, name, i,
                  g_strescape(ids[i], NULL));
  }
}

/* Runs whsim with ARGS (NULL-terminated); asserts exit 0 and returns stdout. */
static char *whsim_ok(const char *const *args)
{
  char *out = NULL;
  g_autofree char *err = NULL;
  int status = wh_test_whsim(args, &out, &err);
  ck_assert_msg(status == 0, "whsim %s: exit %d: %s", args[0], status, err);
  return out;
}

/* Flow ids that need quoting, through every writer and reader of whsim's CSV: run
 * (flows.csv, rates.csv), plot of the run (every plot drawn), compare --exact of the
 * run (flows.csv read back), compare (compare-flows.csv) and plot of it. */
START_TEST(test_csv_hostile_ids)
{
  g_autofree char *tmp = g_dir_make_tmp("wh-csv-ids-XXXXXX", NULL);
  g_autofree char *xml = hostile_ids_xml();
  g_autofree char *scenario = g_build_filename(tmp, "ids.xml", NULL);
  ck_assert(g_file_set_contents(scenario, xml, -1, NULL));
  g_autofree char *run = g_build_filename(tmp, "run", NULL);
  g_autofree char *cmp = g_build_filename(tmp, "cmp", NULL);
  g_autofree char *cmp2 = g_build_filename(tmp, "cmp2", NULL);
  const char *run_args[] = {"run", scenario, "--out", run, "-q", "--sample-period", "1us", NULL};
  g_autofree char *o1 = whsim_ok(run_args);
  assert_ids(run, "flows.csv", 0, TRUE);
  assert_ids(run, "flows.csv", 7, TRUE);
  assert_ids(run, "rates.csv", 1, FALSE);
  const char *plot_args[] = {"plot", run, NULL};
  g_autofree char *o2 = whsim_ok(plot_args);
  static const char *const plots[] = {"fct-cdf", "slowdown-vs-size", "rates", "queues",
                                      "link-utilization"};
  for (guint i = 0; i < G_N_ELEMENTS(plots); i++) {
    g_autofree char *svg = g_strdup_printf("%s.svg", plots[i]);
    ck_assert_msg(strstr(o2, svg), "%s not drawn: %s", svg, o2);
    g_autofree char *path = g_build_filename(run, "plots", svg, NULL);
    ck_assert_msg(g_file_test(path, G_FILE_TEST_IS_REGULAR), "%s missing", path);
  }
  const char *exact_args[] = {"compare", scenario, "--exact", run, "--out", cmp, "-q", NULL};
  g_autofree char *o3 = whsim_ok(exact_args);
  assert_ids(cmp, "compare-flows.csv", 0, TRUE);
  const char *cmp_args[] = {"compare", scenario, "--out", cmp2, "-q", NULL};
  g_autofree char *o4 = whsim_ok(cmp_args);
  assert_ids(cmp2, "compare-flows.csv", 0, TRUE);
  g_autofree char *exact = g_build_filename(cmp2, "exact", NULL);
  assert_ids(exact, "flows.csv", 7, TRUE);
  const char *plot_cmp[] = {"plot", cmp2, NULL};
  g_autofree char *o5 = whsim_ok(plot_cmp);
  ck_assert_msg(strstr(o5, "fct-error-cdf.svg"), "%s", o5);
  wh_test_remove_tree(tmp);
}
END_TEST

Suite *wh_csv_suite(void)
{
  Suite *s = suite_create("csv");
  TCase *tc = tcase_create("reader-writer");
  tcase_add_test(tc, test_csv_writer);
  tcase_add_test(tc, test_csv_round_trip);
  tcase_add_test(tc, test_csv_reader_cases);
  tcase_add_test(tc, test_csv_reader_files);
  suite_add_tcase(s, tc);
  tc = tcase_create("hostile-ids");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_csv_hostile_ids);
  suite_add_tcase(s, tc);
  return s;
}
