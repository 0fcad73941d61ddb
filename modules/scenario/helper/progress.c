/* The status line of a long run; see progress.h. */
#include "progress.h"

#include <string.h>
#include <unistd.h>

#define FIRST_AFTER_S 1.0 /* nothing before a second of work */
#define TTY_EVERY_S 0.25  /* a terminal line is rewritten at most this often */
#define PLAIN_EVERY_S 5.0 /* a line per update elsewhere (--progress=always) */

struct WhProgress {
  FILE *out;
  const char *label;
  gboolean tty;
  gboolean shown; /* a line is on the terminal */
  double last_s;  /* wall time of the last line; < 0: none yet */
};

gboolean wh_progress_mode_parse(const char *text, WhProgressMode *out)
{
  static const char *const names[] = {"auto", "always", "never"};
  for (int i = 0; i < 3; i++)
    if (g_strcmp0(text, names[i]) == 0) {
      *out = (WhProgressMode)i;
      return TRUE;
    }
  return FALSE;
}

/* A wall-clock duration, rounded to seconds: "42s", "3m05s", "2h07m". */
static void format_duration(GString *s, double secs)
{
  uint64_t t = (uint64_t)(secs + 0.5);
  if (t < 60)
    g_string_append_printf(s, "%" G_GUINT64_FORMAT "s", t);
  else if (t < 3600)
    g_string_append_printf(s, "%" G_GUINT64_FORMAT "m%02" G_GUINT64_FORMAT "s", t / 60, t % 60);
  else
    g_string_append_printf(s, "%" G_GUINT64_FORMAT "h%02" G_GUINT64_FORMAT "m", t / 3600,
                           t / 60 % 60);
}

char *wh_progress_format(const WhProgressSample *s, const char *label)
{
  GString *line = g_string_new(NULL);
  if (label)
    g_string_append_printf(line, "%s: ", label);
  double sim_s = wh_time_to_s(s->now);
  if (sim_s < 1)
    g_string_append_printf(line, "sim time %.3f ms", sim_s * 1e3);
  else
    g_string_append_printf(line, "sim time %.3f s", sim_s);
  if (s->total)
    g_string_append_printf(line, ", %" G_GUINT64_FORMAT " of %" G_GUINT64_FORMAT " %s", s->done,
                           s->total, s->unit);
  g_string_append_printf(line, ", %.2f M events/s, ",
                         s->wall_s > 0 ? (double)s->events / s->wall_s * 1e-6 : 0.0);
  format_duration(line, s->wall_s);
  g_string_append(line, " elapsed");
  if (s->fraction > 0 && s->fraction <= 1) {
    g_string_append_printf(line, ", %.1f%% done, about ", s->fraction * 100);
    format_duration(line, s->wall_s * (1 - s->fraction) / s->fraction);
    g_string_append(line, " left");
  }
  return g_string_free(line, FALSE);
}

WhProgress *wh_progress_new(WhProgressMode mode, FILE *out, const char *label)
{
  g_return_val_if_fail(out != NULL, NULL);
  gboolean tty = isatty(fileno(out));
  if (mode == WH_PROGRESS_NEVER || (mode == WH_PROGRESS_AUTO && !tty))
    return NULL;
  WhProgress *p = g_new0(WhProgress, 1);
  p->out = out;
  p->label = label;
  p->tty = tty;
  p->last_s = -1;
  return p;
}

gboolean wh_progress_due(const WhProgress *p, double wall_s)
{
  if (p->last_s < 0)
    return wall_s >= FIRST_AFTER_S;
  return wall_s - p->last_s >= (p->tty ? TTY_EVERY_S : PLAIN_EVERY_S);
}

void wh_progress_show(WhProgress *p, const WhProgressSample *s)
{
  g_autofree char *line = wh_progress_format(s, p->label);
  if (p->tty)
    fprintf(p->out, "\r%s\033[K", line); /* the rest of the old line is cleared */
  else
    fprintf(p->out, "%s\n", line);
  fflush(p->out);
  p->last_s = s->wall_s;
  p->shown = p->tty;
}

void wh_progress_free(WhProgress *p)
{
  if (p == NULL)
    return;
  if (p->shown) {
    fputs("\r\033[K", p->out);
    fflush(p->out);
  }
  g_free(p);
}
