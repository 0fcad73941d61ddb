/* The output files of a run; see outputs.h. */
#include "outputs.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <string.h>

const char *const wh_output_files[] = {
    "summary.json",              /* counters of the run */
    "flows.csv",                 /* one line per flow */
    "rates.csv",                 /* with a sample period */
    "queues.csv",                /* with a sample period */
    "ops.csv",                   /* with a workload */
    "trace.json",                /* with a workload: Chrome trace */
    "links.csv",                 /* per-link counters */
    "wormhole.json",             /* with Wormhole */
    "wormhole-ns3.json",         /* with --engine ns3 --ns3-wormhole observe */
    "compare.json",              /* whsim compare: the comparison */
    "compare-flows.csv",         /* whsim compare: per-flow FCT errors */
    "compare-ops.csv",           /* whsim compare with a workload: per-op end-time errors */
    "compare-fct.svg",           /* whsim compare with gnuplot: FCT scatter */
    "compare-fct-error-cdf.svg", /* whsim compare with gnuplot: CDF of the FCT errors */
    NULL,
};

struct WhOutputSet {
  char *dir;
  char *staging;
  GPtrArray *staged; /* names, in the order added */
};

static gboolean is_listed(const char *name)
{
  for (const char *const *f = wh_output_files; *f; f++)
    if (strcmp(*f, name) == 0)
      return TRUE;
  return FALSE;
}

static gboolean set_errno_error(GError **error, const char *path, const char *what)
{
  int e = errno;
  g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s: %s", path, what,
              g_strerror(e));
  return FALSE;
}

gboolean wh_output_dir_prepare(const char *dir, GError **error)
{
  if (dir == NULL || dir[0] == '\0') {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL, "--out: the output directory is empty");
    return FALSE;
  }
  if (g_file_test(dir, G_FILE_TEST_EXISTS) && !g_file_test(dir, G_FILE_TEST_IS_DIR)) {
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_NOTDIR,
                "%s: the output directory exists and is not a directory", dir);
    return FALSE;
  }
  if (g_mkdir_with_parents(dir, 0755) != 0)
    return set_errno_error(error, dir, "cannot create the output directory");
  if (g_access(dir, W_OK | X_OK) != 0)
    return set_errno_error(error, dir, "cannot write to the output directory");
  return TRUE;
}

WhOutputSet *wh_output_set_new(const char *dir, GError **error)
{
  if (!wh_output_dir_prepare(dir, error))
    return NULL;
  g_autofree char *staging = g_build_filename(dir, ".whsim-XXXXXX", NULL);
  if (g_mkdtemp(staging) == NULL) {
    set_errno_error(error, dir, "cannot create a staging directory");
    return NULL;
  }
  WhOutputSet *set = g_new0(WhOutputSet, 1);
  set->dir = g_strdup(dir);
  set->staging = g_steal_pointer(&staging);
  set->staged = g_ptr_array_new_with_free_func(g_free);
  return set;
}

gboolean wh_output_set_add(WhOutputSet *set, const char *name, const char *text, GError **error)
{
  g_return_val_if_fail(is_listed(name), FALSE);
  g_autofree char *path = g_build_filename(set->staging, name, NULL);
  if (!g_file_set_contents(path, text, -1, error))
    return FALSE;
  g_ptr_array_add(set->staged, g_strdup(name));
  return TRUE;
}

static gboolean was_staged(const WhOutputSet *set, const char *name)
{
  for (guint i = 0; i < set->staged->len; i++)
    if (strcmp(set->staged->pdata[i], name) == 0)
      return TRUE;
  return FALSE;
}

gboolean wh_output_set_commit(WhOutputSet *set, GError **error)
{
  for (guint i = 0; i < set->staged->len; i++) {
    g_autofree char *from = g_build_filename(set->staging, set->staged->pdata[i], NULL);
    g_autofree char *to = g_build_filename(set->dir, set->staged->pdata[i], NULL);
    if (g_rename(from, to) != 0)
      return set_errno_error(error, to, "cannot write");
  }
  for (const char *const *f = wh_output_files; *f; f++) {
    g_autofree char *path = g_build_filename(set->dir, *f, NULL);
    if (!was_staged(set, *f) && g_file_test(path, G_FILE_TEST_IS_REGULAR) &&
        !g_file_test(path, G_FILE_TEST_IS_SYMLINK) && g_remove(path) != 0)
      return set_errno_error(error, path, "cannot remove the stale output");
  }
  return TRUE;
}

void wh_output_set_free(WhOutputSet *set)
{
  if (set == NULL)
    return;
  for (guint i = 0; i < set->staged->len; i++) {
    g_autofree char *path = g_build_filename(set->staging, set->staged->pdata[i], NULL);
    g_remove(path);
  }
  g_rmdir(set->staging);
  g_ptr_array_free(set->staged, TRUE);
  g_free(set->staging);
  g_free(set->dir);
  g_free(set);
}
