/* Unit parsing for rates, sizes and times; see units.h. Numbers may carry a decimal
 * fraction ("2.5us"); the result is rounded to the nearest base unit and must be
 * exactly representable in 64 bits. */
#include "units.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

GQuark wh_units_error_quark(void)
{
  return g_quark_from_static_string("wh-units-error");
}

typedef struct {
  const char *suffix;
  double scale;
} UnitSuffix;

static const UnitSuffix rate_units[] = {
    {"bps", 1.0}, {"kbps", 1e3}, {"Kbps", 1e3}, {"Mbps", 1e6}, {"Gbps", 1e9}, {"Tbps", 1e12},
    {"b/s", 1.0}, {"kb/s", 1e3}, {"Kb/s", 1e3}, {"Mb/s", 1e6}, {"Gb/s", 1e9}, {"Tb/s", 1e12},
};

static const UnitSuffix byte_units[] = {
    {"B", 1.0},
    {"KB", 1e3},
    {"kB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"KiB", 1024.0},
    {"MiB", 1048576.0},
    {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
};

static const UnitSuffix time_units[] = {
    {"ps", 1.0}, {"ns", 1e3}, {"us", 1e6}, {"ms", 1e9}, {"s", 1e12},
};

char *wh_units_quote(const char *text)
{
  if (text == NULL)
    return g_strdup("\"\"");
  gsize len = strlen(text), cut = MIN(len, (gsize)WH_UNITS_QUOTE_MAX);
  while (cut > 0 && cut < len && ((unsigned char)text[cut] & 0xc0) == 0x80)
    cut--; /* not inside a UTF-8 sequence */
  GString *s = g_string_new("\"");
  for (gsize i = 0; i < cut; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c < 0x20 || c == 0x7f)
      g_string_append_printf(s, "\\x%02x", c);
    else
      g_string_append_c(s, (char)c);
  }
  g_string_append_c(s, '"');
  if (cut < len)
    g_string_append(s, "...");
  return g_string_free(s, FALSE);
}

/* Split "12.5Gbps" into a non-negative number and a suffix looked up in `units`. */
static gboolean parse_quantity(const char *text, const UnitSuffix *units, size_t n_units,
                               const char *what, const char *example, uint64_t *out, GError **error)
{
  if (text == NULL || *text == '\0') {
    g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_SYNTAX, "empty %s (expected e.g. \"%s\")",
                what, example);
    return FALSE;
  }
  g_autofree char *q = wh_units_quote(text);
  const char *p = text;
  while (*p == ' ')
    p++;
  if (*p == '-') {
    g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_RANGE, "%s %s is negative", what, q);
    return FALSE;
  }
  if (!g_ascii_isdigit(*p) && *p != '.') {
    g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_SYNTAX,
                "%s %s does not start with a number (expected e.g. \"%s\")", what, q, example);
    return FALSE;
  }
  char *end = NULL;
  errno = 0;
  double v = g_ascii_strtod(p, &end);
  if (errno != 0 || end == p || !isfinite(v)) {
    g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_SYNTAX, "%s %s is not a number", what, q);
    return FALSE;
  }
  while (*end == ' ')
    end++;
  const UnitSuffix *u = NULL;
  for (size_t i = 0; i < n_units; i++) {
    if (strcmp(end, units[i].suffix) == 0) {
      u = &units[i];
      break;
    }
  }
  if (u == NULL) {
    g_autofree char *qend = wh_units_quote(end);
    GString *list = g_string_new(NULL);
    for (size_t i = 0; i < n_units; i++)
      g_string_append_printf(list, "%s%s", i ? ", " : "", units[i].suffix);
    if (*end)
      g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_UNIT,
                  "%s %s has unknown unit %s (expected one of: %s)", what, q, qend, list->str);
    else
      g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_UNIT,
                  "%s %s has no unit (expected one of: %s)", what, q, list->str);
    g_string_free(list, TRUE);
    return FALSE;
  }
  double scaled = round(v * u->scale);
  if (scaled >= 18446744073709551615.0) {
    g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_RANGE, "%s %s is too large", what, q);
    return FALSE;
  }
  *out = (uint64_t)scaled;
  return TRUE;
}

gboolean wh_units_parse_rate(const char *text, uint64_t *out_bps, GError **error)
{
  return parse_quantity(text, rate_units, G_N_ELEMENTS(rate_units), "rate", "100Gbps", out_bps,
                        error);
}

gboolean wh_units_parse_bytes(const char *text, uint64_t *out_bytes, GError **error)
{
  return parse_quantity(text, byte_units, G_N_ELEMENTS(byte_units), "size", "400KB", out_bytes,
                        error);
}

gboolean wh_units_parse_time(const char *text, WhTime *out_ps, GError **error)
{
  if (!parse_quantity(text, time_units, G_N_ELEMENTS(time_units), "time", "1us", out_ps, error))
    return FALSE;
  if (*out_ps > WH_TIME_HORIZON) {
    g_autofree char *q = wh_units_quote(text);
    g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_RANGE,
                "time %s lies beyond the time horizon of %.0f s", q, wh_time_to_s(WH_TIME_HORIZON));
    return FALSE;
  }
  return TRUE;
}

gboolean wh_units_parse_int(const char *text, int64_t *out, GError **error)
{
  char *end = NULL;
  if (text == NULL || *text == '\0') {
    g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_SYNTAX, "empty integer");
    return FALSE;
  }
  errno = 0;
  gint64 v = g_ascii_strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0') {
    g_autofree char *q = wh_units_quote(text);
    g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_SYNTAX, "%s is not an integer", q);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

gboolean wh_units_parse_double(const char *text, double *out, GError **error)
{
  char *end = NULL;
  if (text == NULL || *text == '\0') {
    g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_SYNTAX, "empty number");
    return FALSE;
  }
  errno = 0;
  double v = g_ascii_strtod(text, &end);
  if (errno != 0 || end == text || *end != '\0' || !isfinite(v)) {
    g_autofree char *q = wh_units_quote(text);
    g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_SYNTAX, "%s is not a number", q);
    return FALSE;
  }
  *out = v;
  return TRUE;
}

gboolean wh_units_parse_bool(const char *text, gboolean *out, GError **error)
{
  static const char *yes[] = {"true", "on", "yes", "1"};
  static const char *no[] = {"false", "off", "no", "0"};
  for (size_t i = 0; i < G_N_ELEMENTS(yes); i++) {
    if (text && g_ascii_strcasecmp(text, yes[i]) == 0) {
      *out = TRUE;
      return TRUE;
    }
    if (text && g_ascii_strcasecmp(text, no[i]) == 0) {
      *out = FALSE;
      return TRUE;
    }
  }
  g_autofree char *q = wh_units_quote(text);
  g_set_error(error, WH_UNITS_ERROR, WH_UNITS_ERROR_SYNTAX,
              "%s is not a boolean (expected true/false, on/off, yes/no, 1/0)", q);
  return FALSE;
}

char *wh_units_format_bytes(uint64_t bytes)
{
  static const char *const names[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  double v = (double)bytes;
  size_t i = 0;
  while (v >= 1000 && i + 1 < G_N_ELEMENTS(names)) {
    v /= 1000;
    i++;
  }
  return i == 0 ? g_strdup_printf("%" G_GUINT64_FORMAT " B", (guint64)bytes)
                : g_strdup_printf("%.1f %s", v, names[i]);
}

char *wh_units_format_time(WhTime ps)
{
  static const struct {
    const char *name;
    double ps;
  } units[] = {{"s", 1e12}, {"ms", 1e9}, {"us", 1e6}, {"ns", 1e3}};
  for (size_t i = 0; i < G_N_ELEMENTS(units); i++)
    if ((double)ps >= units[i].ps)
      return g_strdup_printf("%.6g%s", (double)ps / units[i].ps, units[i].name);
  return g_strdup_printf("%" G_GUINT64_FORMAT "ps", (guint64)ps);
}

double wh_units_round(double v, const char *format)
{
  if (!isfinite(v))
    return v;
  char buf[64]; /* a %.6f of up to 1e56 */
  return g_ascii_strtod(g_ascii_formatd(buf, sizeof buf, format, v), NULL);
}
