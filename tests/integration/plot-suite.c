/* The plot suite: `whsim plot` on real runs' outputs (the quickstart workload, a
 * fat-tree permutation, a dumbbell sampled with --sample-period, a `whsim compare`
 * directory, two runs overlaid), each picture checked as a file: a PNG with its
 * signature and more, an SVG that libxml2 parses with an <svg> root, and one value
 * per plot test read back from the script gnuplot draws: the largest FCT of a run's
 * flows.csv as the top of its FCT CDF. And the refusals:
 * no gnuplot on the PATH, a malformed CSV, a directory without outputs (exit 2,
 * nothing written). */
#include <check.h>
#include <glib/gstdio.h>
#include <libxml/parser.h>
#include <string.h>

#include "csv.h"
#include "plot.h"
#include "test-util.h"

/* A temporary directory holding the outputs of `whsim ARGS... --out DIR/name`. */
static char *run_into(const char *tmp, const char *name, const char *const *args)
{
  char *out = g_build_filename(tmp, name, NULL);
  const char *argv[16];
  guint n = 0;
  for (const char *const *a = args; *a; a++)
    argv[n++] = *a;
  argv[n++] = "--out";
  argv[n++] = out;
  argv[n++] = "-q";
  argv[n] = NULL;
  g_autofree char *err = NULL;
  ck_assert_msg(wh_test_whsim(argv, NULL, &err) == 0, "%s", err);
  return out;
}

/* Asserts that DIR/plots holds exactly `files` (NULL-terminated base names), each as
 * a non-empty PNG and an SVG document that parses. */
static void assert_plots(const char *dir, const char *const *files)
{
  g_autofree char *plots = g_build_filename(dir, "plots", NULL);
  guint expected = 0;
  for (const char *const *f = files; *f; f++, expected += 2) {
    g_autofree char *png_name = g_strdup_printf("%s.png", *f);
    g_autofree char *svg_name = g_strdup_printf("%s.svg", *f);
    g_autofree char *png = g_build_filename(plots, png_name, NULL);
    g_autofree char *svg = g_build_filename(plots, svg_name, NULL);
    g_autofree char *data = NULL;
    gsize len = 0;
    ck_assert_msg(g_file_get_contents(png, &data, &len, NULL), "missing %s", png);
    ck_assert_msg(len > 1000 && memcmp(data, "\x89PNG\r\n\x1a\n", 8) == 0, "%s: not a PNG", png);
    xmlDocPtr doc = xmlReadFile(svg, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR);
    ck_assert_msg(doc != NULL, "%s does not parse as XML", svg);
    xmlNodePtr root = xmlDocGetRootElement(doc);
    ck_assert_msg(root && strcmp((const char *)root->name, "svg") == 0, "%s: root not <svg>", svg);
    xmlFreeDoc(doc);
  }
  g_autoptr(GDir) d = g_dir_open(plots, 0, NULL);
  ck_assert_ptr_nonnull(d);
  guint n = 0;
  while (g_dir_read_name(d))
    n++;
  ck_assert_uint_eq(n, expected);
}

static int plot(const char *const *args, char **out, char **err)
{
  const char *argv[8] = {"plot"};
  guint n = 1;
  for (const char *const *a = args; *a && n < 7; a++)
    argv[n++] = *a;
  argv[n] = NULL;
  g_autofree char *ignored = NULL;
  return wh_test_whsim(argv, out ? out : &ignored, err);
}

/* Plots with `args` and asserts that DIR/plots holds `files` (see assert_plots). */
static void plot_ok(const char *const *args, const char *dir, const char *const *files)
{
  g_autofree char *err = NULL;
  ck_assert_msg(plot(args, NULL, &err) == 0, "%s", err);
  assert_plots(dir, files);
}

/* Asserts that DIR/plots/file contains `text`. */
static void assert_plot_has(const char *dir, const char *file, const char *text)
{
  g_autofree char *plots = g_build_filename(dir, "plots", NULL);
  g_autofree char *content = wh_test_read_in(plots, file);
  ck_assert_msg(strstr(content, text), "%s/%s: no \"%s\"", plots, file, text);
}

/* The largest fct_ps of DIR/flows.csv (the completed flows). */
static double largest_fct_ps(const char *dir)
{
  g_autofree char *path = g_build_filename(dir, "flows.csv", NULL);
  g_autoptr(GError) err = NULL;
  g_autoptr(WhCsvReader) r = wh_csv_reader_new_file(path, (gsize)1 << 30, 1 << 16, &err);
  ck_assert_msg(r != NULL, "%s", err ? err->message : path);
  WhCsvRecord rec;
  double max = -1;
  gboolean header = TRUE;
  while (wh_csv_reader_next(r, &rec, &err)) {
    if (!header && rec.n_fields >= 7 && rec.fields[6][0])
      max = MAX(max, g_ascii_strtod(rec.fields[6], NULL));
    header = FALSE;
  }
  ck_assert_msg(err == NULL, "%s", err ? err->message : "");
  ck_assert(max > 0);
  return max;
}

/* Asserts that plotting `dirs` puts the largest FCT of run directory `run` at the top
 * of its FCT CDF: the line "FCT_US 1.000000" in the script's datablocks. */
static void assert_fct_plotted(char **dirs, const char *run)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *script = wh_plot_script(dirs, WH_PLOT_MAX_INPUT_BYTES, NULL, NULL, &err);
  ck_assert_msg(script != NULL, "%s", err ? err->message : "");
  g_autofree char *value = g_strdup_printf("%.9g 1.000000", largest_fct_ps(run) * 1e-6);
  g_autofree char *line = g_strdup_printf("\n%s\n", value);
  ck_assert_msg(strstr(script, line) != NULL, "%s: the FCT CDF does not end at \"%s\"", run, value);
}

/* Runs `whsim CMD SCENARIO [OPTION VALUE]` (SCENARIO a path below the source root;
 * `option` nullable) into TMP/name, plots it and asserts that `files` were drawn; the
 * run's directory. (transfer full) */
static char *run_and_plot(const char *tmp, const char *name, const char *cmd, const char *scenario,
                          const char *option, const char *value, const char *const *files)
{
  g_autofree char *sc = wh_test_source_path(scenario);
  const char *args[] = {cmd, sc, option, value, NULL};
  char *dir = run_into(tmp, name, args);
  const char *pargs[] = {dir, NULL};
  plot_ok(pargs, dir, files);
  char *dirs[] = {dir, NULL};
  g_autofree char *exact = g_build_filename(dir, "exact", NULL);
  assert_fct_plotted(dirs, strcmp(cmd, "compare") == 0 ? exact : dir);
  return dir;
}

/* The quickstart (a workload, flows of several sizes): FCTs, slowdown, the op
 * timeline and link utilization; a second plot replaces the first. */
START_TEST(test_plot_quickstart)
{
  g_autofree char *tmp = g_dir_make_tmp("wh-plot-XXXXXX", NULL);
  const char *files[] = {"fct-cdf", "slowdown-vs-size", "op-timeline", "link-utilization", NULL};
  g_autofree char *dir =
      run_and_plot(tmp, "quickstart", "run", "scenarios/quickstart.xml", NULL, NULL, files);
  assert_plot_has(dir, "op-timeline.svg", "rank");
  const char *pargs[] = {dir, NULL};
  g_autofree char *out = NULL;
  ck_assert_int_eq(plot(pargs, &out, NULL), 0); /* replaces the first plots/ */
  ck_assert_ptr_nonnull(strstr(out, "fct-cdf.png"));
  assert_plots(dir, files);
  wh_test_remove_tree(tmp);
}
END_TEST

/* A fat-tree permutation: FCTs and link utilization of its three tiers. */
START_TEST(test_plot_fattree_permutation)
{
  g_autofree char *tmp = g_dir_make_tmp("wh-plot-XXXXXX", NULL);
  const char *files[] = {"fct-cdf", "link-utilization", NULL};
  g_autofree char *dir =
      run_and_plot(tmp, "fattree", "run", "scenarios/bench-fattree-k8.xml", NULL, NULL, files);
  assert_plot_has(dir, "link-utilization.svg", "edge links");
  assert_plot_has(dir, "link-utilization.svg", "aggregation links");
  assert_plot_has(dir, "link-utilization.svg", "core links");
  assert_plot_has(dir, "link-utilization.svg", "busy time (% of the simulated time)");
  assert_plot_has(dir, "fct-cdf.svg", "flow completion time (us)");
  wh_test_remove_tree(tmp);
}
END_TEST

/* A dumbbell sampled every 10 us: rates and queues over time; overlaid with a DCTCP
 * dumbbell, both runs' series in one picture each. */
START_TEST(test_plot_sampled_dumbbell_and_overlay)
{
  g_autofree char *tmp = g_dir_make_tmp("wh-plot-XXXXXX", NULL);
  const char *files[] = {"fct-cdf", "rates", "queues", "link-utilization", NULL};
  g_autofree char *dir = run_and_plot(tmp, "dumbbell", "run", "scenarios/dumbbell-dcqcn.xml",
                                      "--sample-period", "10us", files);
  assert_plot_has(dir, "rates.svg", "delivered rate (Gb/s)");
  assert_plot_has(dir, "rates.svg", "all flows");
  assert_plot_has(dir, "queues.svg", "queue (KB)");
  g_autofree char *qs = wh_test_source_path("tests/scenarios/dctcp-dumbbell.xml");
  const char *args2[] = {"run", qs, NULL};
  g_autofree char *dir2 = run_into(tmp, "dctcp", args2);
  g_autofree char *both = g_build_filename(tmp, "both", NULL);
  ck_assert_int_eq(g_mkdir(both, 0755), 0);
  const char *oargs[] = {dir, dir2, "--out", both, NULL};
  const char *ofiles[] = {"fct-cdf", "link-utilization", "rates", "queues", NULL};
  plot_ok(oargs, both, ofiles);
  char *odirs[] = {dir, dir2, NULL};
  assert_fct_plotted(odirs, dir2);
  assert_plot_has(both, "fct-cdf.svg", ">dumbbell<");
  assert_plot_has(both, "fct-cdf.svg", ">dctcp<");
  wh_test_remove_tree(tmp);
}
END_TEST

/* A `whsim compare` directory: the FCT error CDF, and its two runs overlaid (with
 * the slowdown against size: the flows have several sizes). */
START_TEST(test_plot_compare_dir)
{
  g_autofree char *tmp = g_dir_make_tmp("wh-plot-XXXXXX", NULL);
  const char *files[] = {"fct-error-cdf", "fct-cdf", "slowdown-vs-size", "link-utilization",
                         NULL}; /* the scenario's flows have four sizes */
  g_free(run_and_plot(tmp, "cmp", "compare", "tests/scenarios/fattree-k4-mixed.xml", NULL, NULL,
                      files));
  wh_test_remove_tree(tmp);
}
END_TEST

/* Runs `whsim ARGS` with PATH set to `path`; its exit status and stderr. */
static int whsim_with_path(const char *const *args, const char *path, char **err)
{
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (gpointer)WH_WHSIM_PATH);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add(argv, (gpointer)*a);
  g_ptr_array_add(argv, NULL);
  g_autofree char *env_path = g_strdup_printf("PATH=%s", path);
  char *envp[] = {env_path, NULL};
  int status = -1;
  ck_assert(g_spawn_sync(NULL, (char **)argv->pdata, envp, G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                         NULL, err, &status, NULL));
  g_ptr_array_free(argv, TRUE);
  ck_assert(WIFEXITED(status));
  return WEXITSTATUS(status);
}

/* Only the run's own files are in `dir`: no plots/ and no staging directory. */
static void assert_no_plots(const char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  for (const char *name; (name = g_dir_read_name(d)) != NULL;)
    ck_assert_msg(strcmp(name, "plots") != 0 && name[0] != '.', "left in %s: %s", dir, name);
}

/* No gnuplot on the PATH, a malformed CSV, a directory without outputs: exit 2, a
 * message naming the cause, nothing written. */
START_TEST(test_plot_refusals)
{
  g_autofree char *tmp = g_dir_make_tmp("wh-plot-XXXXXX", NULL);
  g_autofree char *sc = wh_test_source_path("scenarios/dumbbell-dcqcn.xml");
  const char *args[] = {"run", sc, NULL};
  g_autofree char *dir = run_into(tmp, "dumbbell", args);
  const char *pargs[] = {"plot", dir, NULL};
  g_autofree char *err = NULL;
  ck_assert_int_eq(whsim_with_path(pargs, tmp, &err), 2);
  ck_assert_msg(strstr(err, "gnuplot is not on the PATH"), "%s", err);
  assert_no_plots(dir);

  g_autofree char *flows = g_build_filename(dir, "flows.csv", NULL);
  g_autofree char *text = wh_test_read_in(dir, "flows.csv");
  g_autofree char *bad = g_strconcat(text, "x,0,4,100,0,10,ten,x\n", NULL);
  ck_assert(g_file_set_contents(flows, bad, -1, NULL));
  g_autofree char *err2 = NULL;
  ck_assert_int_eq(plot(pargs + 1, NULL, &err2), 2);
  g_autofree char *where = g_strdup_printf("%s:6: field fct_ps: not a number", flows);
  ck_assert_msg(strstr(err2, where), "%s", err2);
  assert_no_plots(dir);

  g_autofree char *empty = g_build_filename(tmp, "empty", NULL);
  ck_assert_int_eq(g_mkdir(empty, 0755), 0);
  const char *eargs[] = {empty, NULL};
  g_autofree char *err3 = NULL;
  ck_assert_int_eq(plot(eargs, NULL, &err3), 2);
  ck_assert_ptr_nonnull(strstr(err3, "no whsim outputs to plot"));
  assert_no_plots(empty);
  wh_test_remove_tree(tmp);
}
END_TEST

Suite *wh_plot_suite(void)
{
  Suite *s = suite_create("plot");
  TCase *tc = tcase_create("plot");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_plot_quickstart);
  tcase_add_test(tc, test_plot_fattree_permutation);
  tcase_add_test(tc, test_plot_sampled_dumbbell_and_overlay);
  tcase_add_test(tc, test_plot_compare_dir);
  tcase_add_test(tc, test_plot_refusals);
  suite_add_tcase(s, tc);
  return s;
}
