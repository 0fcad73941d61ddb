/* The shared error helper: formats a message once, prefixes its location and sets
 * the GError. See wh-error.h. */
#include "wh-error.h"

#include <stdarg.h>

static gboolean set_atv(GError **error, GQuark domain, int code, const char *file, int line,
                        const char *fmt, va_list ap) G_GNUC_PRINTF(6, 0);

static gboolean set_atv(GError **error, GQuark domain, int code, const char *file, int line,
                        const char *fmt, va_list ap)
{
  if (error == NULL)
    return FALSE;
  g_autofree char *msg = g_strdup_vprintf(fmt, ap);
  if (file != NULL && line > 0)
    g_set_error(error, domain, code, "%s:%d: %s", file, line, msg);
  else if (file != NULL)
    g_set_error(error, domain, code, "%s: %s", file, msg);
  else
    g_set_error_literal(error, domain, code, msg);
  return FALSE;
}

gboolean wh_error_set_at(GError **error, GQuark domain, int code, const char *file, int line,
                         const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  set_atv(error, domain, code, file, line, fmt, ap);
  va_end(ap);
  return FALSE;
}

gboolean wh_error_set(GError **error, GQuark domain, int code, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  set_atv(error, domain, code, NULL, 0, fmt, ap);
  va_end(ap);
  return FALSE;
}
