/* Setting a GError: the one helper every module formats its errors with. A message
 * may be prefixed by where the problem is, a file and a line ("FILE:LINE: " or
 * "FILE: "), and each helper returns FALSE so that a failing check can end with
 * `return wh_error_set(...)`. */
#ifndef WH_ERROR_H
#define WH_ERROR_H

#include <glib.h>

/* Sets `error` (nullable) in `domain` with `code` to the formatted message, prefixed by
 * "FILE:LINE: " when `line` > 0, else by "FILE: " when `file` is non-NULL. FALSE. */
gboolean wh_error_set_at(GError **error, GQuark domain, int code, const char *file, int line,
                         const char *fmt, ...) G_GNUC_PRINTF(6, 7);

/* wh_error_set_at without a location: the formatted message alone. FALSE. */
gboolean wh_error_set(GError **error, GQuark domain, int code, const char *fmt, ...)
    G_GNUC_PRINTF(4, 5);

#endif
