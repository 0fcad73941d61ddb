/* RFC 4180 CSV writing and bounded streaming reading; see csv.h. */
#include "csv.h"
#include "wh-error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

G_DEFINE_QUARK(wh - csv - error - quark, wh_csv_error)

#define BLOCK ((gsize)64 << 10) /* bytes read from a file at a time */

/* ---- writing ---- */

gboolean wh_csv_needs_quotes(const char *text)
{
  return text[strcspn(text, ",\"\r\n")] != '\0';
}

void wh_csv_field(GString *out, const char *text)
{
  if (!wh_csv_needs_quotes(text)) {
    g_string_append(out, text);
    return;
  }
  g_string_append_c(out, '"');
  for (const char *p = text; *p; p++) {
    if (*p == '"')
      g_string_append_c(out, '"');
    g_string_append_c(out, *p);
  }
  g_string_append_c(out, '"');
}

void wh_csv_field_file(FILE *out, const char *text)
{
  if (!wh_csv_needs_quotes(text)) {
    fputs(text, out);
    return;
  }
  putc('"', out);
  for (const char *p = text; *p; p++) {
    if (*p == '"')
      putc('"', out);
    putc(*p, out);
  }
  putc('"', out);
}

/* ---- reading ---- */

struct WhCsvReader {
  char *name;       /* as messages show it */
  int fd;           /* -1: reading from the caller's data */
  const char *data; /* the bytes at hand: the caller's data or `buf` */
  char *buf;        /* a file's block buffer, `cap` bytes */
  gsize cap;
  gsize pos, end; /* the unread bytes are data[pos, end) */
  gboolean eof;   /* nothing beyond `end` */
  gboolean failed;
  gsize max_bytes, total, max_record;
  guint line;     /* the line of data[pos] */
  guint rec_line; /* the line the record read last starts on */
  char *rec;      /* the record's fields, unquoted, each followed by a NUL */
  gsize rec_len, rec_cap;
  guint *at; /* field starts in `rec` */
  const char **fields;
  guint n_at, at_cap;
};

/* `text` as a message may show it: as it is when it is printable UTF-8, else with C
 * escapes. (transfer full) */
static char *shown(const char *text)
{
  gboolean plain = g_utf8_validate(text, -1, NULL);
  for (const char *p = text; plain && *p; p = g_utf8_next_char(p))
    plain = !g_unichar_iscntrl(g_utf8_get_char(p));
  return plain ? g_strdup(text) : g_strescape(text, NULL);
}

static WhCsvReader *reader_new(const char *name, gsize max_record)
{
  WhCsvReader *r = g_new0(WhCsvReader, 1);
  r->name = shown(name);
  r->fd = -1;
  r->line = 1;
  r->max_record = max_record;
  return r;
}

WhCsvReader *wh_csv_reader_new_file(const char *path, gsize max_bytes, gsize max_record,
                                    GError **error)
{
  g_autoptr(WhCsvReader) r = reader_new(path, max_record);
  /* O_NONBLOCK: opening a FIFO must not wait for a writer */
  r->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (r->fd < 0 || fstat(r->fd, &st) != 0) {
    g_set_error(error, WH_CSV_ERROR, WH_CSV_ERROR_READ, "%s: cannot read: %s", r->name,
                g_strerror(errno));
    return NULL;
  }
  if (!S_ISREG(st.st_mode)) {
    g_set_error(error, WH_CSV_ERROR, WH_CSV_ERROR_READ,
                "%s: not a regular file (a device, FIFO or directory cannot be an input)", r->name);
    return NULL;
  }
  r->max_bytes = max_bytes;
  if ((guint64)st.st_size > max_bytes) {
    g_autofree char *cap = g_format_size_full(max_bytes, G_FORMAT_SIZE_IEC_UNITS);
    g_set_error(error, WH_CSV_ERROR, WH_CSV_ERROR_SIZE, "%s: larger than the %s allowed", r->name,
                cap);
    return NULL;
  }
  r->cap = BLOCK;
  r->buf = g_malloc(r->cap);
  r->data = r->buf;
  return g_steal_pointer(&r);
}

WhCsvReader *wh_csv_reader_new_data(const char *name, const char *data, gsize len, gsize max_record)
{
  WhCsvReader *r = reader_new(name, max_record);
  r->data = data;
  r->end = len;
  r->eof = TRUE;
  return r;
}

void wh_csv_reader_free(WhCsvReader *r)
{
  if (r == NULL)
    return;
  if (r->fd >= 0)
    close(r->fd);
  g_free(r->name);
  g_free(r->buf);
  g_free(r->rec);
  g_free(r->at);
  g_free(r->fields);
  g_free(r);
}

const char *wh_csv_reader_name(const WhCsvReader *r)
{
  return r->name;
}

/* Marks the reader failed (it then stays so) and sets the error; FALSE. */
static gboolean fault(WhCsvReader *r, GError **error, WhCsvError code, guint line, const char *what)
{
  r->failed = TRUE;
  return wh_error_set_at(error, WH_CSV_ERROR, code, r->name, (int)line, "%s", what);
}

static gboolean record_too_long(WhCsvReader *r, GError **error)
{
  g_autofree char *what =
      g_strdup_printf("a record longer than %" G_GSIZE_FORMAT " bytes", r->max_record);
  return fault(r, error, WH_CSV_ERROR_SIZE, r->line, what);
}

/* Moves the unread bytes to the front of the buffer and reads a block after them
 * (growing the buffer up to a record's cap); at the end of the file sets `eof`. */
static gboolean refill(WhCsvReader *r, GError **error)
{
  gsize left = r->end - r->pos;
  if (left > r->max_record)
    return record_too_long(r, error);
  memmove(r->buf, r->buf + r->pos, left);
  r->pos = 0;
  r->end = left;
  if (r->cap - left < BLOCK / 2) {
    r->cap = left + BLOCK;
    r->buf = g_realloc(r->buf, r->cap);
    r->data = r->buf;
  }
  ssize_t n;
  do
    n = read(r->fd, r->buf + r->end, r->cap - r->end);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    g_autofree char *what = g_strdup_printf("cannot read: %s", g_strerror(errno));
    return fault(r, error, WH_CSV_ERROR_READ, 0, what);
  }
  r->end += (gsize)n;
  r->total += (gsize)n;
  r->eof = n == 0;
  if (r->total > r->max_bytes) {
    g_autofree char *cap = g_format_size_full(r->max_bytes, G_FORMAT_SIZE_IEC_UNITS);
    g_autofree char *what = g_strdup_printf("larger than the %s allowed", cap);
    return fault(r, error, WH_CSV_ERROR_SIZE, 0, what);
  }
  return TRUE;
}

static void put(WhCsvReader *r, const char *src, gsize n)
{
  if (r->rec_len + n + 1 > r->rec_cap) {
    r->rec_cap = MAX(r->rec_cap * 2, r->rec_len + n + 1024);
    r->rec = g_realloc(r->rec, r->rec_cap);
  }
  memcpy(r->rec + r->rec_len, src, n);
  r->rec_len += n;
}

static void field_start(WhCsvReader *r)
{
  if (r->n_at == r->at_cap) {
    r->at_cap = MAX(16, r->at_cap * 2);
    r->at = g_renew(guint, r->at, r->at_cap);
    r->fields = g_renew(const char *, r->fields, r->at_cap);
  }
  r->at[r->n_at++] = (guint)r->rec_len;
}

/* Bytes that end an unquoted field's run of plain text. */
static const guchar special[256] = {[0] = 1, [','] = 1, ['"'] = 1, ['\r'] = 1, ['\n'] = 1};

enum { PARSED, MORE, FAULT };

/* Parses a quoted field from *sp (at its opening quote) to past its closing quote,
 * counting the line feeds it holds in *line: PARSED, MORE or FAULT as parse(). */
static int parse_quoted(WhCsvReader *r, const guchar **sp, const guchar *e, guint *line,
                        GError **error)
{
  const guchar *s = *sp + 1;
  guint opened = *line;
  for (;;) {
    const guchar *q = s;
    while (q < e && *q != '"' && *q != '\n' && *q != '\0')
      q++;
    put(r, (const char *)s, (gsize)(q - s));
    s = q;
    if (s == e) {
      if (!r->eof)
        return MORE;
      fault(r, error, WH_CSV_ERROR_FORMAT, opened,
            "a quoted field is not closed (its quote opens on this line)");
      return FAULT;
    }
    if (*s == '\0') {
      fault(r, error, WH_CSV_ERROR_FORMAT, *line, "a NUL byte: not a text file");
      return FAULT;
    }
    if (*s == '\n') {
      put(r, "\n", 1);
      (*line)++;
      s++;
      continue;
    }
    if (s + 1 == e && !r->eof)
      return MORE;
    if (s + 1 < e && s[1] == '"') {
      put(r, "\"", 1);
      s += 2;
      continue;
    }
    *sp = s + 1;
    return PARSED;
  }
}

/* Parses one record from data[pos, end) into `rec`: PARSED (pos and line moved past
 * it), MORE (the bytes at hand end inside it and the input goes on) or FAULT. */
static int parse(WhCsvReader *r, GError **error)
{
  const guchar *start = (const guchar *)r->data + r->pos, *s = start;
  const guchar *e = (const guchar *)r->data + r->end;
  guint line = r->line;
  r->rec_len = 0;
  r->n_at = 0;
  for (;;) {
    field_start(r);
    if (s < e && *s == '"') {
      int got = parse_quoted(r, &s, e, &line, error);
      if (got != PARSED)
        return got;
    } else {
      const guchar *q = s;
      while (q < e && !special[*q])
        q++;
      put(r, (const char *)s, (gsize)(q - s));
      s = q;
      if (s < e && *s == '"') {
        fault(r, error, WH_CSV_ERROR_FORMAT, line,
              "a quote inside an unquoted field (a field holding one must be quoted, its "
              "quotes doubled)");
        return FAULT;
      }
    }
    put(r, "", 1);
    if (s == e) {
      if (!r->eof)
        return MORE;
      break;
    }
    if (*s == ',') {
      s++;
      continue;
    }
    if (*s == '\n') {
      s++;
      line++;
      break;
    }
    if (*s == '\r') {
      if (s + 1 == e && !r->eof)
        return MORE;
      if (s + 1 < e && s[1] == '\n') {
        s += 2;
        line++;
        break;
      }
      fault(r, error, WH_CSV_ERROR_FORMAT, line,
            "a carriage return outside quotes and not before a line feed");
      return FAULT;
    }
    if (*s == '\0') {
      fault(r, error, WH_CSV_ERROR_FORMAT, line, "a NUL byte: not a text file");
      return FAULT;
    }
    fault(r, error, WH_CSV_ERROR_FORMAT, line,
          "text after the closing quote of a field (a field holding a quote must be "
          "quoted whole, its quotes doubled)");
    return FAULT;
  }
  if ((gsize)(s - start) > r->max_record) {
    record_too_long(r, error);
    return FAULT;
  }
  r->pos += (gsize)(s - start);
  r->rec_line = r->line;
  r->line = line;
  return PARSED;
}

gboolean wh_csv_reader_next(WhCsvReader *r, WhCsvRecord *record, GError **error)
{
  if (r->failed) {
    g_set_error(error, WH_CSV_ERROR, WH_CSV_ERROR_READ, "%s: read after a fault", r->name);
    return FALSE;
  }
  for (;;) {
    if (r->pos == r->end && !r->eof && !refill(r, error))
      return FALSE;
    if (r->pos == r->end && r->eof)
      return FALSE;
    int got = parse(r, error);
    if (got == FAULT)
      return FALSE;
    if (got == PARSED)
      break;
    if (r->fd < 0 || !refill(r, error)) /* MORE: only a file reads on */
      return FALSE;
  }
  for (guint i = 0; i < r->n_at; i++)
    r->fields[i] = r->rec + r->at[i];
  record->fields = r->fields;
  record->n_fields = r->n_at;
  record->text = r->rec;
  record->text_len = r->rec_len;
  record->line = r->rec_line;
  return TRUE;
}

gboolean wh_csv_reader_header(WhCsvReader *r, const char *header, GError **error)
{
  WhCsvRecord rec;
  g_autoptr(GError) err = NULL;
  if (!wh_csv_reader_next(r, &rec, &err)) {
    if (err) {
      g_propagate_error(error, g_steal_pointer(&err));
      return FALSE;
    }
    g_set_error(error, WH_CSV_ERROR, WH_CSV_ERROR_FORMAT, "%s: empty: expected the header \"%s\"",
                r->name, header);
    return FALSE;
  }
  const char *h = header;
  gboolean same = TRUE;
  for (guint i = 0; same && i < rec.n_fields; i++) {
    gsize n = strlen(rec.fields[i]);
    same = strncmp(h, rec.fields[i], n) == 0 && h[n] == (i + 1 < rec.n_fields ? ',' : '\0');
    h += n + 1;
  }
  if (!same) {
    r->failed = TRUE;
    g_set_error(error, WH_CSV_ERROR, WH_CSV_ERROR_FORMAT,
                "%s:1: expected the header \"%s\" (a whsim output file)", r->name, header);
  }
  return same;
}
