/* CSV as RFC 4180 writes it, for every CSV file the project writes and reads: a field
 * holding a comma, a double quote, a carriage return or a line feed is quoted, its
 * quotes doubled; any other field is written as it is, so ordinary names and numbers
 * come out unchanged. The reader streams records from a regular file (read in 64 KiB
 * blocks) or from a buffer, takes quoted fields across lines, accepts LF or CRLF line
 * ends, refuses a malformed record (an unterminated quote, a quote inside an unquoted
 * field, text after a closing quote, a bare carriage return, a NUL byte) with
 * "FILE:LINE: ..." and bounds memory: a record may hold at most `max_record` bytes,
 * a file at most `max_bytes`. Cost: one pass over the bytes; memory is the largest
 * record plus one block. */
#ifndef WH_CSV_H
#define WH_CSV_H

#include <stdio.h>
#include <glib.h>

#define WH_CSV_ERROR (wh_csv_error_quark())
GQuark wh_csv_error_quark(void);

typedef enum {
  WH_CSV_ERROR_READ,   /* the file cannot be opened or read, or is not a regular file */
  WH_CSV_ERROR_SIZE,   /* the file or a record is over its cap */
  WH_CSV_ERROR_FORMAT, /* malformed CSV, a NUL byte, or not the expected header */
} WhCsvError;

/* ---- writing ---- */

/* TRUE when `text` must be quoted: it holds ',', '"', '\r' or '\n'. */
gboolean wh_csv_needs_quotes(const char *text);

/* Appends `text` (transfer none) to `out` as one field, quoted when it must be; no
 * separator is written. */
void wh_csv_field(GString *out, const char *text);

/* The same to a stream. */
void wh_csv_field_file(FILE *out, const char *text);

/* ---- reading ---- */

typedef struct WhCsvReader WhCsvReader;

/* A record as read; everything it points to belongs to the reader and stays valid
 * until the next call on it. */
typedef struct {
  const char *const *fields; /* n_fields fields, unquoted, each NUL-terminated */
  guint n_fields;
  guint line;       /* the line the record starts on (the first line is 1) */
  const char *text; /* the fields back to back, each followed by its NUL */
  gsize text_len;   /* bytes of `text`, the NULs included */
} WhCsvRecord;

/* Opens `path` (a regular file of at most `max_bytes`: a device, a FIFO or a directory
 * is refused without blocking) for reading records of at most `max_record` bytes each.
 * Messages name the file as `path`, escaped if it is not printable UTF-8. NULL with
 * an error (WH_CSV_ERROR_READ or _SIZE) "PATH: ...". (transfer full) */
WhCsvReader *wh_csv_reader_new_file(const char *path, gsize max_bytes, gsize max_record,
                                    GError **error);

/* Reads records from `data` (len bytes, transfer none: it must outlive the reader);
 * messages name it `name`. (transfer full) */
WhCsvReader *wh_csv_reader_new_data(const char *name, const char *data, gsize len,
                                    gsize max_record);

void wh_csv_reader_free(WhCsvReader *r);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhCsvReader, wh_csv_reader_free)

/* The next record into *record: TRUE; FALSE at the end of the input (no error set) or
 * on a fault (an error "NAME:LINE: ..." or "NAME: ..."; the reader then stays failed).
 * Blank lines are records of one empty field; a last line without its line end is a
 * record. */
gboolean wh_csv_reader_next(WhCsvReader *r, WhCsvRecord *record, GError **error);

/* Reads the first record and checks that it is `header` (column names joined by
 * commas, none needing quotes); else an error "NAME:1: expected the header "..." (a
 * whsim output file)", or "NAME: empty: expected the header ...". */
gboolean wh_csv_reader_header(WhCsvReader *r, const char *header, GError **error);

/* The input's name as messages show it. (transfer none) */
const char *wh_csv_reader_name(const WhCsvReader *r);

#endif
