/* Running gnuplot; see gnuplot.h. */
#include "gnuplot.h"

#include <glib/gstdio.h>
#include <sys/wait.h>
#include <unistd.h>

char *wh_gnuplot_find(void)
{
  return g_find_program_in_path("gnuplot");
}

/* Characters a label shows as a space: C0 and C1 controls (a newline would end the
 * script line), and U+FFFE and U+FFFF, which XML does not allow. */
static gboolean blanked(gunichar c)
{
  return c < 0x20 || (c >= 0x7f && c < 0xa0) || c == 0xfffe || c == 0xffff;
}

char *wh_gnuplot_quote(const char *text)
{
  g_autofree char *valid = g_utf8_make_valid(text ? text : "", -1);
  GString *q = g_string_new("'");
  const char *p = valid;
  gunichar last = 0;
  for (guint n = 0; *p && n < WH_GNUPLOT_MAX_LABEL; p = g_utf8_next_char(p), n++) {
    gunichar c = g_utf8_get_char(p);
    /* gnuplot 5.4 reads a doubled quote as one only after another character */
    if (c == '\'' && (last == 0 || last == '\''))
      g_string_append_unichar(q, c = 0x2019);
    else if (c == '\'')
      g_string_append(q, "''");
    else if (blanked(c))
      g_string_append_c(q, ' ');
    else
      g_string_append_unichar(q, c);
    last = c;
  }
  g_string_append(q, *p ? "...'" : "'");
  return g_string_free(q, FALSE);
}

gboolean wh_gnuplot_run(const char *gnuplot, const char *script, const char *workdir, char **out)
{
  g_autofree char *tmpdir = workdir ? NULL : g_dir_make_tmp("whsim-gnuplot-XXXXXX", NULL);
  g_autofree char *path = NULL;
  int fd = workdir || tmpdir ? g_file_open_tmp("whsim-plot-XXXXXX.gp", &path, NULL) : -1;
  char *text = NULL;
  int status = 1;
  gboolean ok = FALSE;
  if (fd >= 0) {
    close(fd);
    if (g_file_set_contents(path, script, -1, NULL)) {
      const char *argv[] = {gnuplot, path, NULL};
      ok = g_spawn_sync(workdir ? workdir : tmpdir, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL,
                        NULL, NULL, &text, NULL, &status, NULL) &&
           WIFEXITED(status) && WEXITSTATUS(status) == 0;
    }
    g_remove(path);
  }
  if (tmpdir)
    g_rmdir(tmpdir);
  if (ok && out)
    *out = g_steal_pointer(&text);
  g_free(text);
  return ok;
}
