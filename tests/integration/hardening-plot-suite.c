/* The hardening suite, plot cases: every name of the hostile-name corpus
 * (tests/hostile-names/names.txt) through every path by which text reaches gnuplot
 * (a scenario's name in `whsim compare`'s plots and a flow id there; a directory's
 * name, flow ids and keys, tiers, op names in `whsim plot`, alone, overlaid and on a
 * compare directory), checking that nothing ran (no CANARY file), no file was read
 * into a picture (no secret in any output) and every picture was still drawn (a PNG,
 * an SVG that libxml2 parses). Then the inputs `whsim plot` refuses (a FIFO, a link to
 * /dev/zero, a file over the cap, a plots/ that is a link or a file), the files of
 * plots/ it keeps, and an interrupted plot. Cost: a few seconds (about 60 gnuplot
 * runs). */
#include <check.h>
#include <errno.h>
#include <glib/gstdio.h>
#include <libxml/parser.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "csv.h"
#include "hardening-util.h"
#include "plot.h"
#include "test-util.h"

#define SECRET "SECRET-b41c9e-do-not-show"
#define PASSWD "root:x:0:0"

/* The corpus: the names of tests/hostile-names/names.txt. (transfer full) */
static GPtrArray *hostile_names(void)
{
  g_autofree char *path = wh_test_source_path("tests/hostile-names/names.txt");
  g_autofree char *text = NULL;
  ck_assert_msg(g_file_get_contents(path, &text, NULL, NULL), "cannot read %s", path);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++)
    if (**l && **l != '#')
      g_ptr_array_add(names, g_strcompress(*l));
  ck_assert_uint_gt(names->len, 20);
  return names;
}

/* TRUE when `name` can be an XML attribute (valid UTF-8, no control characters but
 * tab, newline and carriage return). */
static gboolean xml_safe(const char *name)
{
  if (!g_utf8_validate(name, -1, NULL))
    return FALSE;
  for (const char *p = name; *p; p++)
    if ((unsigned char)*p < 0x20 && !strchr("\t\n\r", *p))
      return FALSE;
  return TRUE;
}

/* `name` as a directory name below `parent`: '/' made '_', "." and ".." prefixed, an
 * empty name "_", and a number in front so that names stay distinct. (transfer full) */
static char *dir_for(const char *parent, guint i, const char *name)
{
  g_autofree char *base = g_strdup_printf("%02u%s", i, name);
  g_strdelimit(base, "/", '_');
  return g_build_filename(parent, base, NULL);
}

/* `name` escaped for an XML attribute, newlines, tabs and returns as references.
 * (transfer full) */
static char *xml_attr(const char *name)
{
  g_autofree char *escaped = g_markup_escape_text(name, -1);
  GString *s = g_string_new(NULL);
  for (const char *p = escaped; *p; p++) {
    if (*p == '\n' || *p == '\r' || *p == '\t')
      g_string_append_printf(s, "&#%d;", *p);
    else
      g_string_append_c(s, *p);
  }
  return g_string_free(s, FALSE);
}

/* A hostile case's temporary directory: TMPDIR points into it (where `whsim compare`'s
 * gnuplot runs), SECRET files lie where `cat ../SECRET` would find them. */
static char *hostile_tmp(void)
{
  char *tmp = g_dir_make_tmp("wh-hostile-XXXXXX", NULL);
  ck_assert_ptr_nonnull(tmp);
  g_autofree char *tmpdir = g_build_filename(tmp, "tmp", NULL);
  ck_assert_int_eq(g_mkdir(tmpdir, 0755), 0);
  g_setenv("TMPDIR", tmpdir, TRUE);
  g_autofree char *secret = g_build_filename(tmp, "SECRET", NULL);
  ck_assert(g_file_set_contents(secret, SECRET "\n", -1, NULL));
  return tmp;
}

/* Asserts no file below `dir` is named CANARY and none but a SECRET holds the secret
 * or the password file's first line; also no CANARY in the current directory. */
static void assert_clean(const char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  for (const char *name; (name = g_dir_read_name(d)) != NULL;) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    ck_assert_msg(strcmp(name, "CANARY") != 0, "a command ran: %s exists", path);
    if (g_file_test(path, G_FILE_TEST_IS_SYMLINK))
      continue;
    if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
      assert_clean(path);
      continue;
    }
    g_autofree char *text = NULL;
    gsize len = 0;
    if (strcmp(name, "SECRET") == 0 || !g_file_get_contents(path, &text, &len, NULL))
      continue;
    ck_assert_msg(g_strstr_len(text, (gssize)len, SECRET) == NULL, "%s shows the secret", path);
    ck_assert_msg(g_strstr_len(text, (gssize)len, PASSWD) == NULL, "%s shows /etc/passwd", path);
  }
  ck_assert_msg(!g_file_test("CANARY", G_FILE_TEST_EXISTS), "a command ran: ./CANARY exists");
}

/* Asserts `path` is a non-empty SVG document that libxml2 parses. */
static void assert_svg(const char *path)
{
  xmlDocPtr doc = xmlReadFile(
      path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_HUGE);
  ck_assert_msg(doc != NULL, "%s does not parse as XML", path);
  xmlNodePtr root = xmlDocGetRootElement(doc);
  ck_assert_msg(root && strcmp((const char *)root->name, "svg") == 0, "%s: root not <svg>", path);
  xmlFreeDoc(doc);
}

/* Asserts DIR/plots holds every file of `written` (whsim plot's report line), at
 * least `min_files` of them, the PNGs non-empty, the SVGs parsing. */
static void assert_plots_written(const char *dir, const char *report, guint min_files)
{
  const char *list = strstr(report, "plots/: ");
  ck_assert_msg(list != NULL, "no plots reported: %s", report);
  g_autofree char *names = g_strstrip(g_strdup(list + strlen("plots/: ")));
  g_auto(GStrv) files = g_strsplit(names, ", ", -1);
  ck_assert_uint_ge(g_strv_length(files), min_files);
  for (char **f = files; *f; f++) {
    g_autofree char *path = g_build_filename(dir, "plots", *f, NULL);
    GStatBuf st;
    ck_assert_msg(g_stat(path, &st) == 0 && st.st_size > 0, "%s: missing or empty", path);
    if (g_str_has_suffix(*f, ".svg"))
      assert_svg(path);
  }
}

typedef enum {
  WH_EXPECT_PLOTS,   /* exit 0, the pictures drawn */
  WH_EXPECT_REFUSAL, /* exit 2, the message naming the file */
} WhExpect;

/* Runs `whsim plot ARGS...` (NULL-terminated) in case `c`; expects exit 0 with at
 * least `min_files` pictures in OUT/plots, or exit 2 naming `file`. */
static void plot_expect(WhCase *c, WhExpect expect, const char *out, guint min_files,
                        const char *file, const char *const *args)
{
  const char *argv[64] = {"plot"};
  guint n = 1;
  for (const char *const *a = args; *a && n < 63; a++)
    argv[n++] = *a;
  argv[n] = NULL;
  g_clear_pointer(&c->out, g_free);
  g_clear_pointer(&c->err, g_free);
  c->status = wh_test_whsim(argv, &c->out, &c->err);
  if (expect == WH_EXPECT_PLOTS) {
    ck_assert_msg(c->status == 0, "whsim plot %s: exit %d: %s", args[0], c->status, c->err);
    assert_plots_written(out, c->out, min_files);
  } else {
    ck_assert_msg(c->status == 2, "whsim plot %s: exit %d, expected 2: %s", args[0], c->status,
                  c->err);
    wh_case_assert_err_has(c, file);
  }
}

/* A dumbbell whose scenario name and first flow's id are `name` (two flow sizes, so
 * that the slowdown is drawn too). (transfer full) */
static char *named_scenario(const char *name)
{
  g_autofree char *attr = xml_attr(name);
  return g_strdup_printf(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<scenario name=\"%s\">\n"
      "  <topology type=\"wh::Dumbbell\"><param name=\"Pairs\" value=\"2\"/></topology>\n"
      "  <flows><flow id=\"%s\" src=\"0\" dst=\"2\" size=\"20KB\"/>"
      "<flow id=\"b\" src=\"1\" dst=\"3\" size=\"50KB\"/></flows>\n"
      "</scenario>\n",
      attr, attr);
}

/* Each name as a scenario's name and flow id through `whsim compare` (its two SVGs),
 * then its output directory, renamed to the name, through `whsim plot` (the FCT
 * error, its exact/ and wormhole/ runs overlaid and labelled). */
START_TEST(test_hostile_compare)
{
  g_autoptr(GPtrArray) names = hostile_names();
  g_autofree char *tmp = hostile_tmp();
  g_autoptr(WhCase) c = wh_case_new(NULL);
  for (guint i = 0; i < names->len; i++) {
    const char *name = names->pdata[i];
    g_autofree char *xml = named_scenario(name);
    ck_assert(g_file_set_contents(c->scenario, xml, -1, NULL));
    g_autofree char *cmp = g_build_filename(tmp, "cmp", NULL);
    int status = wh_case_whsim(c, "compare", "--out", cmp, "-q", NULL);
    if (!xml_safe(name)) {
      ck_assert_msg(status == 2, "name %u: exit %d: %s", i, status, c->err);
      continue;
    }
    ck_assert_msg(status == 0, "name %u: exit %d: %s", i, status, c->err);
    g_autofree char *svg1 = g_build_filename(cmp, "compare-fct.svg", NULL);
    g_autofree char *svg2 = g_build_filename(cmp, "compare-fct-error-cdf.svg", NULL);
    assert_svg(svg1);
    assert_svg(svg2);
    g_autofree char *dir = dir_for(tmp, i, name);
    ck_assert_int_eq(g_rename(cmp, dir), 0);
    g_autofree char *secret = g_build_filename(dir, "SECRET", NULL);
    ck_assert(g_file_set_contents(secret, SECRET "\n", -1, NULL));
    const char *args[] = {dir, NULL};
    plot_expect(c, WH_EXPECT_PLOTS, dir, 8, NULL, args);
    assert_clean(tmp);
    wh_test_remove_tree(dir);
  }
  assert_clean(tmp);
  wh_test_remove_tree(tmp);
}
END_TEST

/* Writes DIR/name with `text`. */
static void put(const char *dir, const char *name, const char *text)
{
  g_autofree char *path = g_build_filename(dir, name, NULL);
  ck_assert(g_file_set_contents(path, text, -1, NULL));
}

/* A run directory `dir` whose text fields (flow ids and keys, tiers, op names, rate
 * samples' flow ids) are names[first, first + 8), as whsim writes them (csv.h: quoted
 * when they hold a comma, a quote or a line break). */
static void fake_run(const char *dir, GPtrArray *names, guint first)
{
  ck_assert_int_eq(g_mkdir_with_parents(dir, 0755), 0);
  GString *flows = g_string_new("flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key\n");
  GString *links = g_string_new("port,node,peer_node,tier,rate_bps,frames,bytes,busy_ps,"
                                "busy_fraction,pause_ps,max_queue_bytes\n");
  GString *ops = g_string_new("op_id,rank,kind,name,start_ps,end_ps,deps\n");
  GString *rates = g_string_new("period_start_ps,flow_id,sent_bps,delivered_bps\n");
  GString *queues = g_string_new("period_end_ps,port,node,queue_bytes\n");
  for (guint k = 0; k < 8; k++) {
    const char *name = names->pdata[(first + k) % names->len];
    wh_csv_field(flows, name);
    g_string_append_printf(flows, ",%u,%u,%u,0,%u,%u,", k, k + 8, 1000 * (k + 1), 2000000 * (k + 1),
                           2000000 * (k + 1));
    wh_csv_field(flows, name);
    g_string_append_c(flows, '\n');
    g_string_append_printf(links, "%u,%u,%u,", k, k, k + 8);
    wh_csv_field(links, name);
    g_string_append_printf(links, ",100000000000,10,%u,5000,0.%u,0,%u\n", 1000 * (k + 1), k + 1,
                           100 * k);
    g_string_append_printf(ops, "%u,%u,%s,", k, k % 4, k % 2 ? "send" : "compute");
    wh_csv_field(ops, name);
    g_string_append_printf(ops, ",%u,%u,\n", 1000000 * k, 1000000 * (k + 1));
    for (guint t = 0; t < 3; t++) {
      g_string_append_printf(rates, "%u,", 10000000 * t);
      wh_csv_field(rates, name);
      g_string_append_printf(rates, ",%u,%u\n", 1000000000 * (k + 1), 900000000 * (k + 1));
    }
    g_string_append_printf(queues, "%u,%u,%u,%u\n", 10000000 * (k + 1), k, k, 1500 * k);
  }
  const char *files[] = {"flows.csv", "links.csv", "ops.csv", "rates.csv", "queues.csv"};
  GString *texts[] = {flows, links, ops, rates, queues};
  for (guint f = 0; f < G_N_ELEMENTS(files); f++) {
    put(dir, files[f], texts[f]->str);
    g_string_free(texts[f], TRUE);
  }
  put(dir, "SECRET", SECRET "\n");
}

/* Every name as flow id and key (rates.csv, flows.csv), tier (links.csv), op name
 * (ops.csv) and directory name, a name with a comma, a quote or a line break quoted
 * as whsim writes it: each run plotted alone (each flow's rate drawn with its id),
 * then all overlaid into another directory. */
START_TEST(test_hostile_csv_fields)
{
  g_autoptr(GPtrArray) names = hostile_names();
  g_autofree char *tmp = hostile_tmp();
  g_autoptr(WhCase) c = wh_case_new(NULL);
  g_autoptr(GPtrArray) dirs = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < names->len; i += 8) {
    char *dir = dir_for(tmp, i, names->pdata[i]);
    fake_run(dir, names, i);
    const char *args[] = {dir, NULL};
    plot_expect(c, WH_EXPECT_PLOTS, dir, 12, NULL, args);
    g_autofree char *rates = g_build_filename(dir, "plots", "rates.svg", NULL);
    g_autofree char *svg = NULL;
    ck_assert(g_file_get_contents(rates, &svg, NULL, NULL));
    ck_assert_msg(strstr(svg, ">flow "), "%s: no series per flow", rates);
    g_ptr_array_add(dirs, dir);
  }
  /* every name as a directory name, overlaid */
  g_autofree char *both = g_build_filename(tmp, "both", NULL);
  ck_assert_int_eq(g_mkdir(both, 0755), 0);
  put(both, "SECRET", SECRET "\n");
  const char *args[64] = {NULL};
  guint n = 0;
  for (guint i = 0; i < names->len && n < 50; i++) {
    char *dir = dir_for(tmp, 100 + i, names->pdata[i]);
    ck_assert_int_eq(g_mkdir(dir, 0755), 0);
    put(dir, "flows.csv",
        "flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key\n0,0,1,100,0,10,10,0\n"
        "1,0,1,100,0,20,20,1\n");
    g_ptr_array_add(dirs, dir);
    args[n++] = dir;
  }
  args[n++] = "--out";
  args[n++] = both;
  args[n] = NULL;
  plot_expect(c, WH_EXPECT_PLOTS, both, 2, NULL, args);
  assert_clean(tmp);
  wh_test_remove_tree(tmp);
}
END_TEST

/* A run directory in `tmp` from real outputs (a dumbbell). (transfer full) */
static char *real_run(WhCase *c)
{
  g_autofree char *xml = wh_case_dumbbell_xml("", "size=\"20KB\"");
  ck_assert(g_file_set_contents(c->scenario, xml, -1, NULL));
  ck_assert_msg(wh_case_whsim(c, "run", "-q", NULL) == 0, "%s", c->err);
  return g_strdup(c->out_dir);
}

/* A FIFO and a link to /dev/zero as inputs, a file over the cap (in-process, with a
 * small cap), a plots/ that is a symbolic link or a file: refused (exit 2, the file
 * named), nothing written. */
START_TEST(test_plot_refuses_special_inputs)
{
  g_autoptr(WhCase) c = wh_case_new(NULL);
  g_autofree char *dir = real_run(c);
  g_autofree char *flows = g_build_filename(dir, "flows.csv", NULL);
  g_autofree char *links = g_build_filename(dir, "links.csv", NULL);
  g_autofree char *saved = g_build_filename(c->dir, "flows.csv", NULL);
  g_autofree char *plots = g_build_filename(dir, "plots", NULL);
  const char *args[] = {dir, NULL};

  ck_assert_int_eq(g_rename(flows, saved), 0);
  ck_assert_int_eq(mkfifo(flows, 0600), 0);
  plot_expect(c, WH_EXPECT_REFUSAL, dir, 0, "flows.csv: not a regular file", args);
  ck_assert(!g_file_test(plots, G_FILE_TEST_EXISTS));
  g_remove(flows);
  ck_assert_int_eq(g_rename(saved, flows), 0);

  ck_assert_int_eq(g_rename(links, saved), 0);
  ck_assert_int_eq(symlink("/dev/zero", links), 0);
  plot_expect(c, WH_EXPECT_REFUSAL, dir, 0, "links.csv: not a regular file", args);
  ck_assert(!g_file_test(plots, G_FILE_TEST_EXISTS));
  g_remove(links);
  ck_assert_int_eq(g_rename(saved, links), 0);

  char *dirs[] = {dir, NULL};
  g_autoptr(GError) err = NULL;
  g_autofree char *script = wh_plot_script(dirs, 64, NULL, NULL, &err);
  ck_assert_ptr_null(script);
  ck_assert_int_eq(err->code, WH_PLOT_ERROR_INPUT);
  ck_assert_msg(strstr(err->message, "flows.csv: ") && strstr(err->message, "larger than"), "%s",
                err->message);
  g_autofree char *fine = wh_plot_script(dirs, WH_PLOT_MAX_INPUT_BYTES, NULL, NULL, NULL);
  ck_assert_ptr_nonnull(fine);

  ck_assert_int_eq(symlink(c->dir, plots), 0);
  plot_expect(c, WH_EXPECT_REFUSAL, dir, 0, "plots exists and is not a directory", args);
  g_remove(plots);
  ck_assert(g_file_set_contents(plots, "mine", -1, NULL));
  plot_expect(c, WH_EXPECT_REFUSAL, dir, 0, "plots exists and is not a directory", args);
  g_autofree char *kept = wh_test_read_in(dir, "plots");
  ck_assert_str_eq(kept, "mine");
}
END_TEST

/* plots/ with the user's file and subdirectory and an earlier plot's op-timeline-7:
 * plot replaces its own files only (the stale op-timeline-7 of its own names goes),
 * and leaves no staging directory. */
START_TEST(test_plot_keeps_user_files)
{
  g_autoptr(WhCase) c = wh_case_new(NULL);
  g_autofree char *dir = real_run(c);
  g_autofree char *plots = g_build_filename(dir, "plots", NULL);
  g_autofree char *sub = g_build_filename(plots, "sub", NULL);
  ck_assert_int_eq(g_mkdir_with_parents(sub, 0755), 0);
  put(plots, "notes.txt", "my notes");
  put(plots, "fct-cdf.txt", "also mine");
  put(sub, "data.csv", "1,2");
  put(plots, "op-timeline-7.png", "an earlier plot's");
  const char *args[] = {dir, NULL};
  for (int k = 0; k < 2; k++) {
    plot_expect(c, WH_EXPECT_PLOTS, dir, 4, NULL, args);
    g_autofree char *notes = wh_test_read_in(plots, "notes.txt");
    g_autofree char *also = wh_test_read_in(plots, "fct-cdf.txt");
    g_autofree char *data = wh_test_read_in(sub, "data.csv");
    ck_assert_str_eq(notes, "my notes");
    ck_assert_str_eq(also, "also mine");
    ck_assert_str_eq(data, "1,2");
    g_autofree char *stale = g_build_filename(plots, "op-timeline-7.png", NULL);
    ck_assert(!g_file_test(stale, G_FILE_TEST_EXISTS));
    g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
    for (const char *name; (name = g_dir_read_name(d)) != NULL;)
      ck_assert_msg(!g_str_has_prefix(name, ".plots"), "left behind: %s", name);
  }
}
END_TEST

/* A plot after SIGTERM came (the handler installed, the signal raised): it stops,
 * reports the interruption and writes nothing. In a child process, so that the flag
 * does not outlive the case. */
START_TEST(test_plot_interrupted)
{
  g_autoptr(WhCase) c = wh_case_new(NULL);
  g_autofree char *dir = real_run(c);
  fflush(NULL);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    static volatile sig_atomic_t signalled = 1; /* as a SIGTERM handler leaves it */
    char *dirs[] = {dir, NULL};
    GError *err = NULL;
    gboolean ok = wh_plot_runs(dirs, dir, NULL, &signalled, &err);
    _exit(!ok && err->code == WH_PLOT_ERROR_INTERRUPTED && strstr(err->message, "interrupted") ? 0
                                                                                               : 1);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "not stopped (status %d)", status);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  for (const char *name; (name = g_dir_read_name(d)) != NULL;)
    ck_assert_msg(strcmp(name, "plots") != 0 && name[0] != '.', "written: %s", name);
}
END_TEST

Suite *wh_hardening_plot_suite(void)
{
  Suite *s = suite_create("hardening");
  TCase *tc = tcase_create("plot-hostile-names");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_hostile_compare);
  tcase_add_test(tc, test_hostile_csv_fields);
  suite_add_tcase(s, tc);
  tc = tcase_create("plot-inputs");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_plot_refuses_special_inputs);
  tcase_add_test(tc, test_plot_keeps_user_files);
  tcase_add_test(tc, test_plot_interrupted);
  suite_add_tcase(s, tc);
  return s;
}
