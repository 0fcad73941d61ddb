/* Running gnuplot; see gnuplot.h. */
#include "gnuplot.h"

#include <glib/gstdio.h>
#include <sys/wait.h>
#include <unistd.h>

char *wh_gnuplot_find(void)
{
  return g_find_program_in_path("gnuplot");
}

gboolean wh_gnuplot_run(const char *gnuplot, const char *script, const char *workdir, char **out)
{
  g_autofree char *path = NULL;
  int fd = g_file_open_tmp("whsim-plot-XXXXXX.gp", &path, NULL);
  if (fd < 0)
    return FALSE;
  close(fd);
  char *text = NULL;
  int status = 1;
  gboolean ok = FALSE;
  if (g_file_set_contents(path, script, -1, NULL)) {
    const char *argv[] = {gnuplot, path, NULL};
    ok = g_spawn_sync(workdir, (char **)argv, NULL, G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &text,
                      NULL, &status, NULL) &&
         WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  g_remove(path);
  if (ok && out)
    *out = g_steal_pointer(&text);
  g_free(text);
  return ok;
}
