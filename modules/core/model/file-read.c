/* Bounded reads of input files; see file-read.h. */
#include "file-read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static gboolean io_error(GError **error, int e, const char *what)
{
  g_set_error(error, G_FILE_ERROR, g_file_error_from_errno(e), "%s: %s", what, g_strerror(e));
  return FALSE;
}

gboolean wh_file_read(const char *path, gsize max_bytes, char **data, gsize *len, GError **error)
{
  /* O_NONBLOCK: opening a FIFO must not wait for a writer. */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return io_error(error, errno, "cannot read");
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return io_error(error, e, "cannot read");
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_INVAL,
                "not a regular file (a device, FIFO or directory cannot be an input)");
    return FALSE;
  }
  if ((guint64)st.st_size > max_bytes) {
    close(fd);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED,
                "%.1f MiB: larger than the %" G_GSIZE_FORMAT " MiB an input file may have",
                (double)st.st_size / (1 << 20), max_bytes >> 20);
    return FALSE;
  }
  gsize cap = (gsize)st.st_size + 1, n = 0;
  char *buf = g_malloc(cap + 1);
  for (;;) {
    ssize_t r = read(fd, buf + n, cap - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      int e = errno;
      g_free(buf);
      close(fd);
      return io_error(error, e, "cannot read");
    }
    n += (gsize)r;
    if (r == 0 || n == cap)
      break;
  }
  close(fd);
  if (n == cap) { /* it grew while we read */
    g_free(buf);
    g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_FAILED, "the file grew while it was read");
    return FALSE;
  }
  buf[n] = '\0';
  *data = buf;
  *len = n;
  return TRUE;
}

/* TRUE when `path` is `root` or lies below it (both canonical). */
static gboolean is_below(const char *path, const char *root)
{
  gsize n = strlen(root);
  if (n > 0 && root[n - 1] == '/')
    n--;
  return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

gboolean wh_file_check_inside(const char *path, const char *const *roots, GError **error)
{
  g_autofree char *real = realpath(path, NULL);
  if (real == NULL)
    return io_error(error, errno, "cannot read");
  g_autoptr(GString) names = g_string_new(NULL);
  for (const char *const *r = roots; *r; r++) {
    g_autofree char *root = realpath(*r, NULL);
    if (root && is_below(real, root))
      return TRUE;
    g_string_append_printf(names, "%s%s", names->len ? ", " : "", root ? root : *r);
  }
  g_set_error(error, G_FILE_ERROR, G_FILE_ERROR_PERM,
              "lies outside %s; a referenced file must be in the scenario's directory tree or "
              "below a --data-dir",
              names->str);
  return FALSE;
}
