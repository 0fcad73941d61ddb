/* Reading an input file whole, with a size cap, and confining referenced files to
 * directories: the file must be a regular file
 * (not a device, FIFO or directory, so /dev/zero or a pipe cannot feed an endless
 * read), no larger than the cap, and at most cap + 1 bytes are ever read even if it
 * grows meanwhile. Cost: one open, one fstat and the reads. */
#ifndef WH_FILE_READ_H
#define WH_FILE_READ_H

#include <glib.h>

/* The cap on a scenario or workload file, in bytes (256 MiB). */
#define WH_MAX_INPUT_BYTES ((gsize)256 << 20)

/* Reads `path` into *data (NUL-terminated, transfer full) and *len; errors (domain
 * G_FILE_ERROR) start with "cannot read:" or say what the file is. */
gboolean wh_file_read(const char *path, gsize max_bytes, char **data, gsize *len, GError **error);

/* Checks that `path` (symbolic links resolved) is one of `roots` (NULL-terminated) or
 * lies below one; errors name the roots. */
gboolean wh_file_check_inside(const char *path, const char *const *roots, GError **error);

#endif
