/* The output files of a run; see outputs.h. */
#include "outputs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>
#include <string.h>

#include "file-write.h"

const char *const wh_output_files[] = {
    "summary.json",              /* counters of the run */
    "flows.csv",                 /* one line per flow */
    "rates.csv",                 /* with a sample period */
    "queues.csv",                /* with a sample period */
    "ops.csv",                   /* with a workload */
    "trace.json",                /* with a workload: Chrome trace */
    "links.csv",                 /* per-link counters */
    "wormhole.json",             /* with Wormhole */
    "wormhole-flows.csv",        /* with Wormhole: one line per flow */
    "wormhole-ns3.json",         /* with --engine ns3 --ns3-wormhole observe */
    "compare.json",              /* whsim compare: the comparison */
    "compare-flows.csv",         /* whsim compare: per-flow FCT errors */
    "compare-ops.csv",           /* whsim compare with a workload: per-op end-time errors */
    "compare-fct.svg",           /* whsim compare with gnuplot: FCT scatter */
    "compare-fct-error-cdf.svg", /* whsim compare with gnuplot: CDF of the FCT errors */
    "sweep.csv",                 /* whsim sweep: one row per cell */
    "sweep.json",                /* whsim sweep: the cells and the specification */
    NULL,
};

struct WhOutputSet {
  char *dir;
  char *staging;
  int lock_fd;              /* the staging directory, open and locked (flock) while the set lives */
  GPtrArray *staged;        /* names, in the order added */
  const char *const *files; /* the set's list: wh_output_files, or another tool's */
};

#define STAGING_PREFIX ".whsim-"
#define STAGING_TEMPLATE STAGING_PREFIX "XXXXXX"

static gboolean is_listed(const char *const *files, const char *name)
{
  for (const char *const *f = files; *f; f++)
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
  return wh_output_dir_prepare_for(dir, wh_output_files, error);
}

gboolean wh_output_dir_prepare_for(const char *dir, const char *const *files, GError **error)
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
  if (!wh_file_check_writable_dir(dir, error))
    return FALSE;
  for (const char *const *f = files; *f; f++) {
    g_autofree char *path = g_build_filename(dir, *f, NULL);
    if (!wh_file_check_replaceable(path, error))
      return FALSE;
  }
  return TRUE;
}

/* Removes the staging directories in `dir` that earlier runs left behind when they were
 * killed: a live set holds a lock on its own, so one that can be locked has no writer
 * any more. Another run's live staging directory is left alone. */
static void remove_abandoned(const char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  for (const char *name; d && (name = g_dir_read_name(d)) != NULL;) {
    if (!g_str_has_prefix(name, STAGING_PREFIX) || strlen(name) != strlen(STAGING_TEMPLATE))
      continue;
    g_autofree char *path = g_build_filename(dir, name, NULL);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
      continue;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0)
      wh_file_remove_flat_dir(path);
    close(fd);
  }
}

/* Creates and locks a staging directory in `dir`; the lock's descriptor goes to *fd. A
 * directory removed between its creation and its lock (taken for abandoned by another
 * run) is made again. (transfer full) */
static char *make_staging(const char *dir, int *fd, GError **error)
{
  for (int attempt = 0; attempt < 8; attempt++) {
    g_autofree char *staging = g_build_filename(dir, STAGING_TEMPLATE, NULL);
    if (g_mkdtemp(staging) == NULL) {
      set_errno_error(error, dir, "cannot create a staging directory");
      return NULL;
    }
    *fd = open(staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat a, b;
    if (*fd >= 0 && flock(*fd, LOCK_EX) == 0 && fstat(*fd, &a) == 0 && stat(staging, &b) == 0 &&
        a.st_ino == b.st_ino && a.st_dev == b.st_dev)
      return g_steal_pointer(&staging);
    if (*fd >= 0)
      close(*fd);
  }
  g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "%s: cannot keep a staging directory", dir);
  return NULL;
}

WhOutputSet *wh_output_set_new(const char *dir, GError **error)
{
  return wh_output_set_new_for(dir, wh_output_files, error);
}

WhOutputSet *wh_output_set_new_for(const char *dir, const char *const *files, GError **error)
{
  if (!wh_output_dir_prepare_for(dir, files, error))
    return NULL;
  remove_abandoned(dir);
  int fd = -1;
  char *staging = make_staging(dir, &fd, error);
  if (staging == NULL)
    return NULL;
  WhOutputSet *set = g_new0(WhOutputSet, 1);
  set->dir = g_strdup(dir);
  set->staging = staging;
  set->lock_fd = fd;
  set->staged = g_ptr_array_new_with_free_func(g_free);
  set->files = files;
  return set;
}

/* The error of a failed write: EFBIG (a file-size limit) says so. */
static gboolean write_error(GError **error, const char *path, int e)
{
  g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s: cannot write: %s%s", path,
              g_strerror(e),
              e == EFBIG ? " (the file-size limit, ulimit -f, is smaller than the output)" : "");
  return FALSE;
}

gboolean wh_output_set_add_stream(WhOutputSet *set, const char *name, WhOutputWriter write,
                                  const void *data, GError **error)
{
  g_return_val_if_fail(is_listed(set->files, name), FALSE);
  g_autofree char *path = g_build_filename(set->staging, name, NULL);
  g_autofree char *shown = g_build_filename(set->dir, name, NULL); /* named in errors */
  FILE *f = fopen(path, "we");
  if (f == NULL)
    return write_error(error, shown, errno);
  GError *inner = NULL;
  gboolean ok = write(f, data, &inner);
  int e = 0;
  if (fflush(f) != 0 || ferror(f))
    e = errno ? errno : EIO;
  if (fclose(f) != 0 && e == 0)
    e = errno;
  if (inner) {
    g_propagate_error(error, inner);
    ok = FALSE;
  } else if (e || !ok) {
    ok = write_error(error, shown, e ? e : EIO);
  }
  if (!ok) {
    g_unlink(path);
    return FALSE;
  }
  g_ptr_array_add(set->staged, g_strdup(name));
  return TRUE;
}

static gboolean write_text(FILE *f, const void *text, GError **error)
{
  (void)error;
  fputs(text, f);
  return TRUE;
}

gboolean wh_output_set_add(WhOutputSet *set, const char *name, const char *text, GError **error)
{
  return wh_output_set_add_stream(set, name, write_text, text, error);
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
  for (const char *const *f = set->files; *f; f++) {
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
  wh_file_remove_flat_dir(set->staging);
  if (set->lock_fd >= 0)
    close(set->lock_fd);
  g_ptr_array_free(set->staged, TRUE);
  g_free(set->staging);
  g_free(set->dir);
  g_free(set);
}
