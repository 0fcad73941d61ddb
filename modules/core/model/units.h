/* Parsing of physical quantities written by people: rates ("100Gbps", b/s with
 * decimal k/M/G/T prefixes), sizes ("400KB" = 400e3 bytes, "4KiB" = 4096 bytes, also
 * KB/MB/GB/TB and KiB/MiB/GiB/TiB), and times ("1us"; ps, ns, us, ms, s). Cold path
 * only: configuration and scenario loading. Every parser rejects trailing garbage,
 * missing units, negative values and overflow with a message naming the value. */
#ifndef WH_UNITS_H
#define WH_UNITS_H

#include <glib.h>
#include "wh-time.h"

#define WH_UNITS_ERROR (wh_units_error_quark())
GQuark wh_units_error_quark(void);

typedef enum {
  WH_UNITS_ERROR_SYNTAX,
  WH_UNITS_ERROR_UNIT,
  WH_UNITS_ERROR_RANGE,
} WhUnitsError;

gboolean wh_units_parse_rate(const char *text, uint64_t *out_bps, GError **error);
gboolean wh_units_parse_bytes(const char *text, uint64_t *out_bytes, GError **error);
gboolean wh_units_parse_time(const char *text, WhTime *out_ps, GError **error);
gboolean wh_units_parse_int(const char *text, int64_t *out, GError **error);
gboolean wh_units_parse_double(const char *text, double *out, GError **error);
gboolean wh_units_parse_bool(const char *text, gboolean *out, GError **error);

/* A value as error messages quote it: in double quotes, at most WH_UNITS_QUOTE_MAX
 * bytes of it (then "..."), control characters as \xNN (transfer full). */
#define WH_UNITS_QUOTE_MAX 40
char *wh_units_quote(const char *text);

/* Bytes in decimal units with one decimal for reports: "586.6 GB" (transfer full). */
char *wh_units_format_bytes(uint64_t bytes);

/* A time with the largest unit that keeps it at 1 or more, six significant digits, in
 * the form the parser reads back: "548ps", "1.9ms" (transfer full). */
char *wh_units_format_time(WhTime ps);

/* `v` at the precision a report gives it: the double read back from what the printf
 * conversion `format` ("%.6f", "%.9g": one conversion of a double, nothing else)
 * prints, as any reader of that text gets it. Non-finite values are returned as they
 * are. */
double wh_units_round(double v, const char *format);

#endif
