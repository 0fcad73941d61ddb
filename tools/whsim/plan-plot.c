/* `whsim plan --plot DIR`: SVG pictures of a plan drawn by gnuplot: memory per stage of
 * the chosen mesh with the HBM line (plan-memory.svg), TFLOPS per GCD of every feasible
 * mesh (plan-tflops.svg) and, with --verify, plan against simulation per term
 * (plan-verify.svg). The model's name and title come from a user's model file, so they
 * enter the script only through wh_gnuplot_quote; the data are numbers this file
 * formats, in files of the directory. Cost: one gnuplot process. */
#include "plan-plot.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

#include "gnuplot.h"

gboolean wh_plan_plot_check_dir(const char *dir, GError **error)
{
  if (g_mkdir_with_parents(dir, 0755) != 0) {
    int e = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "--plot %s: cannot create: %s",
                dir, g_strerror(e));
    return FALSE;
  }
  g_autofree char *tmpl = g_build_filename(dir, ".plan-plot-XXXXXX", NULL);
  int fd = g_mkstemp(tmpl);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "--plot %s: cannot write: %s", dir,
                g_strerror(e));
    return FALSE;
  }
  close(fd);
  g_unlink(tmpl);
  return TRUE;
}

static gboolean write_data(const char *dir, const char *name, const GString *text, GError **error)
{
  g_autofree char *path = g_build_filename(dir, name, NULL);
  return g_file_set_contents(path, text->str, (gssize)text->len, error);
}

/* The SVG terminal and a picture's head: `title` already quoted. */
static void head(GString *s, const char *file, const char *title)
{
  g_string_append_printf(s,
                         "set terminal svg noenhanced size 900,560 font 'sans,11'\n"
                         "set output '%s'\nset title %s\nset key top left\nset grid ytics\n",
                         file, title);
}

gboolean wh_plan_plot(const char *dir, const WhPiperModel *m, const WhPiperPlanOpts *o,
                      const WhPiperPlan *p, const WhPiperCandidate *k, const double *verify_terms,
                      GError **error)
{
  g_autofree char *gnuplot = wh_gnuplot_find();
  if (!gnuplot) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOENT,
                "--plot %s: gnuplot is not on the PATH (Debian: gnuplot-nox); no plots drawn", dir);
    return FALSE;
  }
  g_autofree char *name = g_strdup_printf("%s%s%s%s", m->name, m->title ? " (" : "",
                                          m->title ? m->title : "", m->title ? ")" : "");
  g_autoptr(GString) script = g_string_new(NULL);
  g_autoptr(GString) mem = g_string_new("# stage GB\n");
  g_autoptr(GString) tf = g_string_new("# index TFLOPS/GCD mesh\n");
  if (k) {
    for (uint32_t s = 0; s < k->pp; s++)
      g_string_append_printf(mem, "%u %.4f\n", s, k->mem[s] * 1e-9);
    g_autofree char *t =
        g_strdup_printf("%s: memory per stage, PP%u x EP%u, %u GCDs", name, k->pp, k->ep, o->gcds);
    g_autofree char *q = wh_gnuplot_quote(t);
    head(script, "plan-memory.svg", q);
    g_string_append_printf(script,
                           "set xlabel 'stage'\nset ylabel 'GB per GCD'\nset yrange [0:*]\n"
                           "set xrange [-0.5:%u.5]\nset boxwidth 0.8\n"
                           "plot 'plan-memory.dat' using 1:2 with boxes fill solid 0.5 "
                           "title 'per-GCD form', %.4f with lines lw 2 title 'HBM x usable "
                           "fraction'\n",
                           k->pp - 1, o->hbm * o->usable * 1e-9);
  }
  uint32_t n = 0;
  for (uint32_t i = 0; i < p->n; i++) {
    if (p->c[i].feasible)
      g_string_append_printf(tf, "%u %.4f PP%uxEP%u\n", n++, p->c[i].tflops, p->c[i].pp,
                             p->c[i].ep);
  }
  if (n) {
    g_autofree char *t =
        g_strdup_printf("%s: TFLOPS per GCD of every feasible mesh, %u GCDs", name, o->gcds);
    g_autofree char *q = wh_gnuplot_quote(t);
    head(script, "plan-tflops.svg", q);
    g_string_append(script, "unset xlabel\nset ylabel 'TFLOPS per GCD (predicted)'\n"
                            "set yrange [0:*]\nset style fill solid 0.5\nset boxwidth 0.6\n"
                            "plot 'plan-tflops.dat' using 1:2:xtic(3) with boxes notitle\n");
  }
  g_autoptr(GString) ver = g_string_new("# term plan_ms sim_ms\n");
  if (verify_terms) {
    for (int i = 0; i < WH_PIPER_VERIFY_TERMS; i++)
      g_string_append_printf(ver, "%d %.6f %.6f\n", i, verify_terms[2 * i] * 1e3,
                             verify_terms[2 * i + 1] * 1e3);
    g_autofree char *t = g_strdup_printf("%s: plan against simulation, PP%u x EP%u", name,
                                         k ? k->pp : 0, k ? k->ep : 0);
    g_autofree char *q = wh_gnuplot_quote(t);
    head(script, "plan-verify.svg", q);
    g_string_append(script, "set ylabel 'ms'\nset yrange [0:*]\nset style data histograms\n"
                            "set style histogram clustered gap 1\nset style fill solid 0.5\n"
                            "set xtics (");
    for (int i = 0; i < WH_PIPER_VERIFY_TERMS; i++) {
      g_autofree char *l = wh_gnuplot_quote(wh_piper_verify_term_names[i]);
      g_string_append_printf(script, "%s%s %d", i ? ", " : "", l, i);
    }
    g_string_append(script, ") font ',9'\nset logscale y\nset yrange [*:*]\n"
                            "plot 'plan-verify.dat' using 2 title 'plan', '' using 3 "
                            "title 'simulation'\n");
  }
  if (!write_data(dir, "plan-memory.dat", mem, error) ||
      !write_data(dir, "plan-tflops.dat", tf, error) ||
      (verify_terms && !write_data(dir, "plan-verify.dat", ver, error)))
    return FALSE;
  if (!wh_gnuplot_run(gnuplot, script->str, dir, NULL)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "--plot %s: gnuplot failed", dir);
    return FALSE;
  }
  return TRUE;
}
