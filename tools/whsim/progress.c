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
  /* a ticker's thread and its stop signal */
  GThread *thread;
  GMutex lock;
  GCond cond;
  gboolean stop;
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

char *wh_progress_format(const WhRunProgress *s, const char *label)
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

/* Writes `line`, in place on a terminal, taken `wall_s` into the work. */
static void put_line(WhProgress *p, const char *line, double wall_s)
{
  if (p->tty)
    fprintf(p->out, "\r%s\033[K", line); /* the rest of the old line is cleared */
  else
    fprintf(p->out, "%s\n", line);
  fflush(p->out);
  p->last_s = wall_s;
  p->shown = p->tty;
}

void wh_progress_show(WhProgress *p, const WhRunProgress *s)
{
  g_autofree char *line = wh_progress_format(s, p->label);
  put_line(p, line, s->wall_s);
}

/* A ticker's thread: a line per due time until told to stop. */
static gpointer tick(gpointer data)
{
  WhProgress *p = data;
  gint64 t0 = g_get_monotonic_time();
  g_mutex_lock(&p->lock);
  while (!p->stop) {
    double wall_s = (double)(g_get_monotonic_time() - t0) * 1e-6;
    if (wh_progress_due(p, wall_s)) {
      g_autofree char *line =
          g_strdup_printf("%s: %.0fs elapsed", p->label ? p->label : "loading", wall_s);
      put_line(p, line, wall_s);
    }
    g_cond_wait_until(&p->cond, &p->lock, g_get_monotonic_time() + G_TIME_SPAN_SECOND / 4);
  }
  g_mutex_unlock(&p->lock);
  return NULL;
}

WhProgress *wh_progress_new_ticker(WhProgressMode mode, FILE *out, const char *label)
{
  WhProgress *p = wh_progress_new(mode, out, label);
  if (p == NULL)
    return NULL;
  g_mutex_init(&p->lock);
  g_cond_init(&p->cond);
  p->thread = g_thread_new("wh-progress", tick, p);
  return p;
}

void wh_progress_free(WhProgress *p)
{
  if (p == NULL)
    return;
  if (p->thread) {
    g_mutex_lock(&p->lock);
    p->stop = TRUE;
    g_cond_signal(&p->cond);
    g_mutex_unlock(&p->lock);
    g_thread_join(p->thread);
    g_mutex_clear(&p->lock);
    g_cond_clear(&p->cond);
  }
  if (p->shown) {
    fputs("\r\033[K", p->out);
    fflush(p->out);
  }
  g_free(p);
}

void wh_progress_run_callback(WhRunProgressEvent ev, const WhRunProgress *p, void *data)
{
  WhProgressRun *r = data;
  if (ev == WH_RUN_PROGRESS_START)
    r->line = wh_progress_new(r->mode, stderr, p->label);
  else if (ev == WH_RUN_PROGRESS_END)
    g_clear_pointer(&r->line, wh_progress_free);
  else if (r->line && wh_progress_due(r->line, p->wall_s))
    wh_progress_show(r->line, p);
}
