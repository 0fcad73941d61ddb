/* Checks of output targets; see file-write.h. */
#include "file-write.h"

#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *kind_of(mode_t mode)
{
  if (S_ISDIR(mode))
    return "directory";
  if (S_ISLNK(mode))
    return "symbolic link";
  if (S_ISFIFO(mode))
    return "FIFO";
  if (S_ISSOCK(mode))
    return "socket";
  if (S_ISCHR(mode) || S_ISBLK(mode))
    return "device";
  return "special file";
}

gboolean wh_file_check_replaceable(const char *path, GError **error)
{
  GStatBuf st;
  if (g_lstat(path, &st) != 0) {
    if (errno == ENOENT)
      return TRUE;
    int e = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s", path, g_strerror(e));
    return FALSE;
  }
  if (S_ISREG(st.st_mode))
    return TRUE;
  g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_EXIST,
              "%s: exists and is not a regular file (a %s): not replaced", path,
              kind_of(st.st_mode));
  return FALSE;
}

gboolean wh_file_check_writable_dir(const char *dir, GError **error)
{
  g_autofree char *tmpl = g_build_filename(dir, ".whsim-probe-XXXXXX", NULL);
  int fd = g_mkstemp_full(tmpl, O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0) {
    int e = errno;
    g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e),
                "%s: cannot create files there: %s", dir, g_strerror(e));
    return FALSE;
  }
  close(fd);
  g_unlink(tmpl);
  return TRUE;
}

gboolean wh_file_check_output(const char *path, GError **error)
{
  g_autofree char *dir = g_path_get_dirname(path);
  return wh_file_check_replaceable(path, error) && wh_file_check_writable_dir(dir, error);
}

void wh_file_remove_flat_dir(const char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  for (const char *name; d && (name = g_dir_read_name(d)) != NULL;) {
    g_autofree char *file = g_build_filename(dir, name, NULL);
    g_unlink(file);
  }
  g_rmdir(dir);
}
