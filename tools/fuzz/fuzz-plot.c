/* fuzz-plot: a seeded mutation fuzzer for `whsim plot`'s inputs. Each case writes a
 * run directory (or a `whsim compare` directory with its exact/ and wormhole/ runs)
 * from small hand-written seeds of flows.csv, links.csv, ops.csv, rates.csv,
 * queues.csv and compare-flows.csv, mutates them with a deterministic
 * RNG, each with odds of one in three (names of the hostile-name corpus, numbers, huge numbers,
 * fields added or removed, fields quoted as RFC 4180 asks or as it refuses, CRLF, NUL
 * bytes, lines dropped or repeated), sometimes names the
 * directory after a hostile name, and feeds it to the plot code in-process: wh_plot_script for
 * every case, whose script is checked line by line (only plot's own command shapes,
 * datablocks of finite numbers, no input byte outside a quoted literal: no backtick,
 * double quote, `@`, `!`, backslash or non-ASCII byte there), and wh_plot_runs with
 * gnuplot for every Nth case (--gnuplot-every), whose pictures must all be written (an
 * SVG that libxml2 parses). A case passes when plot accepts its input or refuses it
 * with a clear message: one printable line of valid UTF-8 naming the directory or
 * file. No file named CANARY may appear. A crash or a sanitizer report ends the
 * process; a failed case fails the run (exit 1). `--case N` replays one case and
 * prints the script. Cost: about a millisecond a case, a quarter of a second a
 * gnuplot run. */
#include <glib.h>
#include <glib/gstdio.h>
#include <libxml/parser.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "csv.h"
#include "plot.h"
#include "rng.h"

typedef struct {
  const char *file;
  const char *header;
  const char *rows;
} SeedFile;

static const SeedFile seeds[] = {
    {"flows.csv", "flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key",
     "0,0,4,1000,0,2000000,2000000,0\n1,1,5,4000,100,9000100,9000000,op1.0\n"
     "2,2,6,16000,0,,,2\n3,3,7,1000,500,1500500,1500000,f3\n"},
    {"links.csv",
     "port,node,peer_node,tier,rate_bps,frames,bytes,busy_ps,busy_fraction,pause_ps,"
     "max_queue_bytes",
     "0,0,8,edge,100000000000,10,10000,5000,0.25,0,0\n1,1,8,edge,100000000000,4,4000,2000,0.1,0,"
     "0\n2,8,9,core,400000000000,14,14000,7000,0.5,10,4096\n"},
    {"ops.csv", "op_id,rank,kind,name,start_ps,end_ps,deps",
     "0,0,compute,fwd,0,1000000,\n1,0,send,act,1000000,3000000,0\n"
     "2,1,all-reduce,dp,3000000,9000000,0;1\n3,1,compute,late,,,2\n"},
    {"rates.csv", "period_start_ps,flow_id,sent_bps,delivered_bps",
     "0,0,1000000000,900000000\n0,1,2000000000,1800000000\n10000000,0,1000000000,950000000\n"
     "10000000,1,500000000,400000000\n"},
    {"queues.csv", "period_end_ps,port,node,queue_bytes",
     "10000000,0,8,1500\n10000000,1,8,3000\n20000000,0,8,0\n"},
    {"compare-flows.csv",
     "key,src,dst,bytes,flow_id_exact,flow_id_wormhole,fct_exact_ps,fct_wormhole_ps,rel_error",
     "0,0,4,1000,0,0,2000000,2100000,0.05\n1,1,5,4000,1,1,9000000,8000000,-0.111\n"
     "2,2,6,16000,2,,,,\n"},
};

static const char *const builtin_tokens[] = {
    "`touch CANARY`",
    "$(touch CANARY)",
    "\n!touch CANARY\n",
    "'",
    "\"",
    "@m",
    "%s",
    "\\",
    ",",
    "\n",
    "\r\n",
    "\t",
    "",
    "-1",
    "0",
    "1e308",
    "-1e308",
    "1e-308",
    "nan",
    "inf",
    "0x10",
    "18446744073709551616",
    "4294967296",
    "99999999999999999999999",
    "EOD",
    "\nEOD\n",
    " ",
    "\xff\xfe",
    "\xc3\xa9",
    "\x01",
    "edge",
    "compute",
    "op1.0",
};

static GPtrArray *tokens; /* the built-in tokens and the corpus's names (transfer none) */
static guint accepted;    /* cases whose input plot accepted */

static void load_tokens(const char *names_path)
{
  tokens = g_ptr_array_new_with_free_func(g_free);
  for (guint i = 0; i < G_N_ELEMENTS(builtin_tokens); i++)
    g_ptr_array_add(tokens, g_strdup(builtin_tokens[i]));
  g_autofree char *text = NULL;
  if (names_path == NULL || !g_file_get_contents(names_path, &text, NULL, NULL))
    return;
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  for (char **l = lines; *l; l++)
    if (**l && **l != '#')
      g_ptr_array_add(tokens, g_strcompress(*l));
}

static gsize pick(WhRng *r, gsize n)
{
  return n ? (gsize)(wh_rng_next(r) % n) : 0;
}

static const char *token(WhRng *r)
{
  return tokens->pdata[pick(r, tokens->len)];
}

/* Turns every line end of `s` into CRLF. */
static void to_crlf(GString *s)
{
  GString *t = g_string_new(NULL);
  for (gsize i = 0; i < s->len; i++) {
    if (s->str[i] == '\n')
      g_string_append_c(t, '\r');
    g_string_append_c(t, s->str[i]);
  }
  g_string_assign(s, t->str);
  g_string_free(t, TRUE);
}

/* Rewrites the field of `s` from `at`: replaced by a token as whsim writes it (quoted
 * when it must be), or quoted with its quotes doubled (one time in four left single). */
static void quote_field(GString *s, gsize at, WhRng *r, gboolean replace)
{
  gsize end = at;
  while (end < s->len && s->str[end] != ',' && s->str[end] != '\n')
    end++;
  g_autoptr(GString) field = g_string_new(NULL);
  if (replace) {
    wh_csv_field(field, token(r));
  } else {
    g_string_append_c(field, '"');
    for (gsize i = at; i < end; i++) {
      if (s->str[i] == '"' && pick(r, 4) != 0)
        g_string_append_c(field, '"');
      g_string_append_c(field, s->str[i]);
    }
    g_string_append_c(field, '"');
  }
  g_string_erase(s, (gssize)at, (gssize)(end - at));
  g_string_insert(s, (gssize)at, field->str);
}

/* One or two mutations of `s` (a CSV file's text). */
static void mutate(GString *s, WhRng *r)
{
  int n = 1 + (int)pick(r, 2);
  for (int k = 0; k < n; k++) {
    gsize at = pick(r, s->len + 1);
    gsize what = pick(r, 11);
    switch (what) {
    case 0: /* a token */
      g_string_insert(s, (gssize)at, token(r));
      break;
    case 1: { /* a field replaced by a token */
      gsize end = at;
      while (end < s->len && s->str[end] != ',' && s->str[end] != '\n')
        end++;
      g_string_erase(s, (gssize)at, (gssize)(end - at));
      g_string_insert(s, (gssize)at, token(r));
      break;
    }
    case 2: { /* a byte range dropped */
      gsize len = pick(r, 40);
      g_string_erase(s, (gssize)at, (gssize)MIN(len, s->len - at));
      break;
    }
    case 3: /* a comma more */
      g_string_insert_c(s, (gssize)at, ',');
      break;
    case 4: { /* a line repeated many times */
      const char *nl = strchr(s->str + at, '\n');
      if (nl) {
        g_autofree char *line = g_strndup(s->str + at, (gsize)(nl - s->str - at) + 1);
        for (gsize i = pick(r, 3000); i > 0; i--)
          g_string_append(s, line);
      }
      break;
    }
    case 5: /* CRLF line ends */
      to_crlf(s);
      break;
    case 6: /* a NUL byte */
      g_string_insert_len(s, (gssize)at, "\0", 1);
      break;
    case 7: /* a huge or odd number */
      g_string_insert(
          s, (gssize)at,
          (const char *[]){"1e300", "-5", "0", "4e9", "1e-300", "123456789012345678"}[pick(r, 6)]);
      break;
    case 8: /* a field replaced by a token as whsim writes it (quoted when it must be) */
    case 9: /* a field quoted, its quotes doubled, or (one time in four) left single */
      quote_field(s, at, r, what == 8);
      break;
    default: /* truncated */
      g_string_truncate(s, at);
      break;
    }
  }
}

/* Writes the seeds of a run into `dir` (a subset when `some`), mutating each with
 * probability one in `odds`. */
static void write_run(const char *dir, WhRng *r, gboolean compare, guint odds)
{
  g_mkdir_with_parents(dir, 0755);
  gboolean any = FALSE;
  for (guint i = 0; i < G_N_ELEMENTS(seeds); i++) {
    gboolean is_compare = strcmp(seeds[i].file, "compare-flows.csv") == 0;
    if (is_compare != compare || (any && pick(r, 3) == 0))
      continue;
    any = TRUE;
    GString *s = g_string_new(seeds[i].header);
    g_string_append_c(s, '\n');
    g_string_append(s, seeds[i].rows);
    if (pick(r, odds) == 0)
      mutate(s, r);
    g_autofree char *path = g_build_filename(dir, seeds[i].file, NULL);
    g_file_set_contents(path, s->str, (gssize)s->len, NULL);
    g_string_free(s, TRUE);
  }
}

/* A printable line of valid UTF-8 that starts with `root` (the file it names lies
 * below it). */
static gboolean clear_message(const char *m, const char *root)
{
  if (!g_utf8_validate(m, -1, NULL) || !g_str_has_prefix(m, root))
    return FALSE;
  for (const char *p = m; *p; p = g_utf8_next_char(p))
    if (g_unichar_iscntrl(g_utf8_get_char(p)))
      return FALSE;
  return TRUE;
}

/* TRUE when the text of a datablock line is numbers (finite) separated by spaces. */
static gboolean number_line(const char *line)
{
  g_auto(GStrv) f = g_strsplit(line, " ", -1);
  for (char **p = f; *p; p++) {
    char *end = NULL;
    double v = g_ascii_strtod(*p, &end);
    if (**p == '\0' || *end != '\0' || !isfinite(v))
      return FALSE;
  }
  return TRUE;
}

/* Checks a command line: quoted literals hold valid UTF-8 without control characters,
 * and outside them only plot's own characters appear. NULL or what is wrong. */
static const char *check_command(const char *line)
{
  static const char *const shapes[] = {"set ", "unset ", "reset", "plot ", "replot"};
  gboolean known = FALSE;
  for (guint i = 0; i < G_N_ELEMENTS(shapes); i++)
    known = known || g_str_has_prefix(line, shapes[i]);
  if (!known)
    return "not one of plot's commands";
  for (const char *p = line; *p; p++) {
    if (*p == '\'') {
      const char *start = ++p;
      while (*p && !(*p == '\'' && p[1] != '\''))
        p += *p == '\'' ? 2 : 1;
      if (*p != '\'')
        return "an unterminated literal";
      g_autofree char *lit = g_strndup(start, (gsize)(p - start));
      if (!g_utf8_validate(lit, -1, NULL))
        return "invalid UTF-8 in a literal";
      for (const char *q = lit; *q; q = g_utf8_next_char(q))
        if (g_unichar_iscntrl(g_utf8_get_char(q)))
          return "a control character in a literal";
      if (g_utf8_strlen(lit, -1) > 2 * 150)
        return "a literal too long";
      continue;
    }
    if ((unsigned char)*p >= 0x80 || (unsigned char)*p < 0x20 || strchr("`\"@!\\;#{}", *p))
      return "an input byte outside a literal";
  }
  return NULL;
}

/* Checks every line of `script`; NULL or a description of the first bad line
 * (transfer full). */
static char *check_script(const char *script)
{
  g_auto(GStrv) lines = g_strsplit(script, "\n", -1);
  gboolean data = FALSE;
  for (guint i = 0; lines[i]; i++) {
    const char *l = lines[i], *why = NULL;
    if (data)
      data = strcmp(l, "EOD") != 0, why = !data || number_line(l) ? NULL : "not numbers";
    else if (l[0] == '$')
      data = TRUE, why = g_regex_match_simple("^\\$d[0-9]+ << EOD$", l, 0, 0) ? NULL : "a block";
    else if (l[0] != '\0' || lines[i + 1] != NULL)
      why = check_command(l);
    if (why)
      return g_strdup_printf("script line %u: %s: %s", i + 1, why, l);
  }
  return data ? g_strdup("a datablock without its end") : NULL;
}

/* Asserts the pictures plot reported are in dir/plots: non-empty, the SVGs parse. */
static char *check_pictures(const char *dir, GPtrArray *written)
{
  for (guint i = 0; i < written->len; i++) {
    g_autofree char *path = g_build_filename(dir, "plots", written->pdata[i], NULL);
    GStatBuf st;
    if (g_stat(path, &st) != 0 || st.st_size == 0)
      return g_strdup_printf("%s: missing or empty", path);
    if (!g_str_has_suffix(path, ".svg"))
      continue;
    xmlDocPtr doc = xmlReadFile(
        path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_HUGE);
    if (doc == NULL)
      return g_strdup_printf("%s: not XML", path);
    xmlFreeDoc(doc);
  }
  return NULL;
}

/* TRUE when a file named CANARY lies below `dir`. */
static gboolean canary_below(const char *dir)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  for (const char *n; d && (n = g_dir_read_name(d)) != NULL;) {
    g_autofree char *path = g_build_filename(dir, n, NULL);
    if (strcmp(n, "CANARY") == 0 || (!g_file_test(path, G_FILE_TEST_IS_SYMLINK) &&
                                     g_file_test(path, G_FILE_TEST_IS_DIR) && canary_below(path)))
      return TRUE;
  }
  return FALSE;
}

static void remove_tree(const char *path)
{
  if (!g_file_test(path, G_FILE_TEST_IS_SYMLINK) && g_file_test(path, G_FILE_TEST_IS_DIR)) {
    g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
    for (const char *n; d && (n = g_dir_read_name(d)) != NULL;) {
      g_autofree char *child = g_build_filename(path, n, NULL);
      remove_tree(child);
    }
    g_rmdir(path);
  } else {
    g_remove(path);
  }
}

/* Runs case `k`; NULL when it passes, else what went wrong (transfer full). */
static char *run_case(const char *root, guint64 seed, guint64 k, gboolean with_gnuplot,
                      gboolean show)
{
  WhRng r;
  wh_rng_init(&r, seed, k);
  g_autofree char *label = NULL;
  if (pick(&r, 4) == 0) {
    label = g_strdup_printf("r%" G_GUINT64_FORMAT "-%s", k, token(&r));
    g_strdelimit(label, "/", '_');
  } else {
    label = g_strdup_printf("r%" G_GUINT64_FORMAT, k);
  }
  g_autofree char *dir = g_build_filename(root, label, NULL);
  gboolean compare = pick(&r, 5) == 0;
  write_run(dir, &r, compare, 3);
  for (int s = 0; compare && s < 2; s++) {
    g_autofree char *sub = g_build_filename(dir, s ? "wormhole" : "exact", NULL);
    write_run(sub, &r, FALSE, 6);
  }
  char *dirs[] = {dir, NULL};
  g_autoptr(GError) err = NULL;
  g_autoptr(GPtrArray) files = g_ptr_array_new_with_free_func(g_free);
  g_autofree char *script = wh_plot_script(dirs, 1 << 20, files, NULL, &err);
  char *bad = NULL;
  if (script == NULL) {
    if (err->code != WH_PLOT_ERROR_INPUT || !clear_message(err->message, root))
      bad = g_strdup_printf("unclear refusal: %s", err->message);
  } else {
    accepted++;
    if (show)
      fputs(script, stdout);
    bad = check_script(script);
  }
  if (bad == NULL && script && with_gnuplot) {
    g_clear_error(&err);
    g_autoptr(GPtrArray) written = g_ptr_array_new_with_free_func(g_free);
    if (!wh_plot_runs(dirs, dir, written, NULL, &err))
      bad = g_strdup_printf("gnuplot run: %s", err->message);
    else
      bad = check_pictures(dir, written);
  }
  if (bad == NULL && (canary_below(root) || g_file_test("CANARY", G_FILE_TEST_EXISTS)))
    bad = g_strdup("a command ran: a CANARY file exists");
  if (bad == NULL && !show)
    remove_tree(dir);
  return bad;
}

int main(int argc, char **argv)
{
  gint64 cases = 1000, seed = 1, one = -1, every = 50;
  g_autofree char *names = g_strdup("tests/hostile-names/names.txt");
  GOptionEntry entries[] = {
      {"cases", 0, 0, G_OPTION_ARG_INT64, &cases, "cases to run (1000)", "N"},
      {"seed", 0, 0, G_OPTION_ARG_INT64, &seed, "the RNG seed (1)", "S"},
      {"case", 0, 0, G_OPTION_ARG_INT64, &one, "replay case N, print its script", "N"},
      {"gnuplot-every", 0, 0, G_OPTION_ARG_INT64, &every,
       "run gnuplot on every Nth case (50; 0: never)", "N"},
      {"names", 0, 0, G_OPTION_ARG_FILENAME, &names,
       "the hostile-name corpus (tests/hostile-names/names.txt)", "FILE"},
      {NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- fuzz whsim plot's inputs");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "fuzz-plot: %s\n", err->message);
    return 2;
  }
  g_log_set_always_fatal(G_LOG_LEVEL_CRITICAL | G_LOG_LEVEL_WARNING);
  load_tokens(names);
  g_autofree char *root = g_dir_make_tmp("fuzz-plot-XXXXXX", NULL);
  if (root == NULL) {
    fprintf(stderr, "fuzz-plot: cannot make a temporary directory\n");
    return 2;
  }
  guint failed = 0, gnuplot_runs = 0;
  gint64 first = one >= 0 ? one : 0, last = one >= 0 ? one + 1 : cases;
  for (gint64 k = first; k < last; k++) {
    gboolean with_gnuplot = one >= 0 || (every > 0 && k % every == 0);
    gnuplot_runs += with_gnuplot;
    g_autofree char *bad = run_case(root, (guint64)seed, (guint64)k, with_gnuplot, one >= 0);
    if (bad) {
      g_autofree char *shown = g_strescape(bad, NULL);
      fprintf(stderr, "fuzz-plot: case %" G_GINT64_FORMAT " (seed %" G_GINT64_FORMAT "): %s\n", k,
              seed, shown);
      failed++;
    }
  }
  if (one < 0)
    remove_tree(root);
  g_ptr_array_free(tokens, TRUE);
  printf("fuzz-plot: %" G_GINT64_FORMAT
         " cases (%u accepted, %u with gnuplot), seed %" G_GINT64_FORMAT ", %u failed\n",
         last - first, accepted, gnuplot_runs, seed, failed);
  return failed ? 1 : 0;
}
