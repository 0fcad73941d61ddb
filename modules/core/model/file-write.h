/* Checking where outputs go, before anything is computed: an output file may be a new
 * name in a directory that accepts files, or an existing regular file (replaced
 * atomically, by rename); a device, FIFO, socket, directory or symbolic link in its
 * place is refused, so that no run replaces a device node or a link by mistake. A
 * directory is probed by creating (and removing) a file in it, because access() says
 * yes to root even where nothing can be created (sysfs, a read-only mount). Cost: a few
 * system calls per target. */
#ifndef WH_FILE_WRITE_H
#define WH_FILE_WRITE_H

#include <glib.h>

/* Checks that an existing `path` is a regular file (not a symbolic link): FALSE with
 * an error "PATH: exists and is not a regular file (a KIND): not replaced" otherwise.
 * A missing path passes. */
gboolean wh_file_check_replaceable(const char *path, GError **error);

/* Checks that the directory `dir` accepts new files by creating one there and removing
 * it; errors (domain G_FILE_ERROR) name `dir` and say why. */
gboolean wh_file_check_writable_dir(const char *dir, GError **error);

/* wh_file_check_replaceable(path) and wh_file_check_writable_dir(its directory): what
 * an output file written by replacement needs. */
gboolean wh_file_check_output(const char *path, GError **error);

/* Deletes the entries of `dir`, a directory that holds files only (a staging
 * directory), then `dir` itself. Errors are ignored: what cannot be removed stays. */
void wh_file_remove_flat_dir(const char *dir);

#endif
