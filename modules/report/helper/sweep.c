/* Running, recording and merging the cells of a sweep; see sweep.h. */
#include "sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "file-read.h"
#include "json-text.h"
#include "outputs.h"
#include "runner.h"

#define CELL_RECORD "cell.json"
#define CELL_RECORD_MAX ((gsize)1 << 20)
#define STAGE_PREFIX ".stage-"
#define LOCK_NAME ".sweep.lock"

static gboolean fail_errno(GError **error, int code, const char *path, const char *what)
{
  int e = errno;
  g_set_error(error, WH_SWEEP_ERROR, code, "%s: %s: %s", path, what, g_strerror(e));
  return FALSE;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
  (void)st;
  (void)flag;
  (void)ftw;
  remove(path);
  return 0;
}

/* Removes `dir` and everything below it, following no link. */
static void rm_tree(const char *dir)
{
  nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static char *cell_dir(const WhSweep *sw, guint cell, const char *out_dir)
{
  return g_build_filename(out_dir, "cells", sw->cells[cell].id, NULL);
}

/* Parses the JSON object of a regular file of at most `max` bytes (transfer full). */
static JsonObject *read_object(const char *path, gsize max)
{
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!wh_file_read(path, max, &text, &len, NULL))
    return NULL;
  g_autoptr(JsonParser) parser = json_parser_new();
  if (!json_parser_load_from_data(parser, text, (gssize)len, NULL))
    return NULL;
  JsonNode *root = json_parser_get_root(parser);
  return root && JSON_NODE_HOLDS_OBJECT(root) ? json_object_ref(json_node_get_object(root)) : NULL;
}

/* The cell's record, when it is one of this cell (transfer full, nullable). */
static JsonObject *read_record(const WhSweep *sw, guint cell, const char *out_dir)
{
  g_autofree char *dir = cell_dir(sw, cell, out_dir);
  g_autofree char *path = g_build_filename(dir, CELL_RECORD, NULL);
  JsonObject *o = read_object(path, CELL_RECORD_MAX);
  if (o &&
      g_strcmp0(json_object_get_string_member_with_default(o, "cell", ""), sw->cells[cell].id) != 0)
    g_clear_pointer(&o, json_object_unref);
  return o;
}

static WhSweepCellState record_state(JsonObject *o)
{
  const char *s = o ? json_object_get_string_member_with_default(o, "status", "") : "";
  return strcmp(s, "ok") == 0       ? WH_SWEEP_CELL_OK
         : strcmp(s, "failed") == 0 ? WH_SWEEP_CELL_FAILED
                                    : WH_SWEEP_CELL_MISSING;
}

WhSweepCellState wh_sweep_cell_state(const WhSweep *sw, guint cell, const char *out_dir)
{
  g_autoptr(JsonObject) o = read_record(sw, cell, out_dir);
  return record_state(o);
}

/* The command that runs the cell into `dir`. (transfer full) */
static char **cell_argv(const WhSweep *sw, guint cell, const char *dir, const WhSweepCellRun *o)
{
  const WhSweepCell *c = &sw->cells[cell];
  const WhSweepScenario *s = sw->scenarios->pdata[c->scenario];
  GPtrArray *v = g_ptr_array_new();
  g_ptr_array_add(v, g_strdup(o->whsim));
  g_ptr_array_add(v, g_strdup(c->mode == WH_SWEEP_MODE_COMPARE ? "compare" : "run"));
  g_ptr_array_add(v, g_canonicalize_filename(s->path, NULL));
  g_ptr_array_add(v, g_strconcat("--out=", dir, NULL));
  g_ptr_array_add(v, g_strdup("--quiet"));
  g_ptr_array_add(v, g_strdup("--progress=never"));
  if (c->mode == WH_SWEEP_MODE_WORMHOLE)
    g_ptr_array_add(v, g_strdup("--scheduler=wormhole"));
  g_auto(GStrv) opts = wh_sweep_cell_options(sw, cell);
  for (char **p = opts; *p; p++)
    g_ptr_array_add(v, g_strdup(*p));
  for (char **p = o->extra_args; p && *p; p++)
    g_ptr_array_add(v, g_strdup(*p));
  g_ptr_array_add(v, NULL);
  return (char **)g_ptr_array_free(v, FALSE);
}

/* The last non-empty line of a log (transfer full, nullable). */
static char *last_line(const char *log)
{
  if (log == NULL)
    return NULL;
  g_auto(GStrv) lines = g_strsplit(log, "\n", -1);
  for (guint i = g_strv_length(lines); i-- > 0;)
    if (*g_strstrip(lines[i]))
      return g_strdup(lines[i]);
  return NULL;
}

/* Writes the cell's record into its staging directory. */
static gboolean write_record(const WhSweep *sw, guint cell, const char *stage,
                             const WhRunnerJob *job, double wall, GError **error)
{
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "cell");
  json_builder_add_string_value(b, sw->cells[cell].id);
  json_builder_set_member_name(b, "status");
  gboolean ok = job->exit_status == 0 && job->term_signal == 0;
  json_builder_add_string_value(b, ok ? "ok" : "failed");
  json_builder_set_member_name(b, "exit_status");
  json_builder_add_int_value(b, job->exit_status);
  json_builder_set_member_name(b, "signal");
  json_builder_add_int_value(b, job->term_signal);
  g_autofree char *err = ok ? NULL : last_line(job->log);
  json_builder_set_member_name(b, "error");
  if (err)
    json_builder_add_string_value(b, err);
  else
    json_builder_add_null_value(b);
  json_builder_set_member_name(b, "wall_s");
  json_builder_add_double_value(b, wall);
  json_builder_set_member_name(b, "host");
  json_builder_add_string_value(b, g_get_host_name());
  json_builder_set_member_name(b, "command");
  json_builder_begin_array(b);
  for (char **a = job->argv; *a; a++)
    json_builder_add_string_value(b, *a);
  json_builder_end_array(b);
  json_builder_end_object(b);
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  g_autofree char *text = wh_json_text(json_node_get_object(root));
  g_autofree char *path = g_build_filename(stage, CELL_RECORD, NULL);
  GError *e = NULL;
  if (!g_file_set_contents(path, text, -1, &e)) {
    g_set_error(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_RUN, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  return TRUE;
}

/* Puts the staging directory in place as the cell's directory: a rename when there is
 * none; over a failed one (when this run is a retry or succeeded) an exchange, then
 * the old one removed; beside a complete one that is not replaced, this run's
 * directory is dropped. The state of the cell's directory after. */
static WhSweepCellState commit_stage(const char *stage, const char *final, WhSweepCellState mine,
                                     gboolean retry)
{
  for (int attempt = 0; attempt < 4; attempt++) {
    if (rename(stage, final) == 0)
      return mine;
    g_autofree char *rec = g_build_filename(final, CELL_RECORD, NULL);
    g_autoptr(JsonObject) o = read_object(rec, CELL_RECORD_MAX);
    WhSweepCellState there = record_state(o);
    if (there == WH_SWEEP_CELL_OK ||
        (there == WH_SWEEP_CELL_FAILED && !retry && mine != WH_SWEEP_CELL_OK)) {
      rm_tree(stage);
      return there;
    }
    if (renameat2(AT_FDCWD, stage, AT_FDCWD, final, RENAME_EXCHANGE) == 0) {
      rm_tree(stage); /* now the replaced directory */
      return mine;
    }
  }
  rm_tree(stage);
  return WH_SWEEP_CELL_MISSING;
}

gboolean wh_sweep_run_cell(const WhSweep *sw, guint cell, const char *out_dir,
                           const WhSweepCellRun *o, gboolean *ran, WhSweepCellState *state,
                           GError **error)
{
  WhSweepCellState now = wh_sweep_cell_state(sw, cell, out_dir);
  *ran = FALSE;
  if (state)
    *state = now;
  if (now == WH_SWEEP_CELL_OK || (now == WH_SWEEP_CELL_FAILED && !o->retry_failed))
    return TRUE;
  g_autofree char *cells = g_build_filename(out_dir, "cells", NULL);
  g_autofree char *name = g_strdup_printf(STAGE_PREFIX "%s-%s-%ld", sw->cells[cell].id,
                                          g_get_host_name(), (long)getpid());
  g_autofree char *stage = g_build_filename(cells, name, NULL);
  rm_tree(stage);
  if (g_mkdir_with_parents(cells, 0777) != 0 || g_mkdir(stage, 0777) != 0)
    return fail_errno(error, WH_SWEEP_ERROR_RUN, stage, "cannot create");
  g_auto(GStrv) argv = cell_argv(sw, cell, stage, o);
  WhRunnerJob job = {.argv = argv};
  gint64 t0 = g_get_monotonic_time();
  gboolean ok = wh_runner_run(&job, 1, 1, o->interrupt, NULL, error) &&
                write_record(sw, cell, stage, &job, (g_get_monotonic_time() - t0) / 1e6, error);
  WhSweepCellState mine =
      job.exit_status == 0 && job.term_signal == 0 ? WH_SWEEP_CELL_OK : WH_SWEEP_CELL_FAILED;
  wh_runner_job_clear(&job);
  if (!ok) {
    rm_tree(stage);
    if (error && *error && (*error)->domain == WH_RUNNER_ERROR) {
      int code = (*error)->code == WH_RUNNER_ERROR_INTERRUPTED ? WH_SWEEP_ERROR_INTERRUPTED
                                                               : WH_SWEEP_ERROR_RUN;
      (*error)->domain = WH_SWEEP_ERROR;
      (*error)->code = code;
    }
    return FALSE;
  }
  g_autofree char *final = cell_dir(sw, cell, out_dir);
  now = commit_stage(stage, final, mine, o->retry_failed);
  *ran = TRUE;
  if (state)
    *state = now;
  return TRUE;
}

/* Removes the staging directories in `cells` left by this host's processes that are
 * gone (a killed cell); others are left alone. */
static void remove_stale_stages(const char *cells)
{
  g_autoptr(GDir) d = g_dir_open(cells, 0, NULL);
  const char *host = g_get_host_name(), *e;
  while (d && (e = g_dir_read_name(d))) {
    if (!g_str_has_prefix(e, STAGE_PREFIX) || strlen(e) < strlen(STAGE_PREFIX) + 17)
      continue;
    const char *h = e + strlen(STAGE_PREFIX) + 17, *dash = strrchr(e, '-');
    if (dash <= h || strncmp(h, host, (size_t)(dash - h)) != 0 ||
        strlen(host) != (size_t)(dash - h))
      continue;
    long pid = strtol(dash + 1, NULL, 10);
    if (pid > 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
      g_autofree char *p = g_build_filename(cells, e, NULL);
      rm_tree(p);
    }
  }
}

int wh_sweep_lock(const char *out_dir, GError **error)
{
  g_autofree char *cells = g_build_filename(out_dir, "cells", NULL);
  if (g_mkdir_with_parents(cells, 0777) != 0) {
    fail_errno(error, WH_SWEEP_ERROR_RUN, cells, "cannot create");
    return -1;
  }
  g_autofree char *path = g_build_filename(out_dir, LOCK_NAME, NULL);
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) {
    fail_errno(error, WH_SWEEP_ERROR_RUN, path, "cannot open");
    return -1;
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char who[128] = "";
    ssize_t n = pread(fd, who, sizeof who - 1, 0);
    who[n > 0 ? n : 0] = '\0';
    g_strchomp(who);
    g_set_error(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_BUSY,
                "%s: another sweep is running in this folder (it holds %s%s%s); nothing was run",
                out_dir, path, *who ? ": " : "", who);
    close(fd);
    return -1;
  }
  g_autofree char *who = g_strdup_printf("pid %ld on %s\n", (long)getpid(), g_get_host_name());
  if (ftruncate(fd, 0) != 0 || pwrite(fd, who, strlen(who), 0) < 0) {
    /* the note is only for the message of a refused sweep */
  }
  remove_stale_stages(cells);
  return fd;
}

gboolean wh_sweep_write_tasks(const WhSweep *sw, const guint *cells, guint n, guint chunk,
                              const char *out_dir, const char *name, GError **error)
{
  g_autoptr(GString) t = g_string_new(NULL);
  for (guint i = 0; i < n; i++)
    g_string_append_printf(t, "%s%s", sw->cells[cells[i]].id,
                           (i + 1) % chunk == 0 || i + 1 == n ? "\n" : " ");
  g_autofree char *path = g_build_filename(out_dir, name, NULL);
  GError *e = NULL;
  if (!g_file_set_contents(path, t->str, (gssize)t->len, &e)) {
    g_set_error(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_RUN, "%s", e->message);
    g_error_free(e);
    return FALSE;
  }
  return TRUE;
}

gboolean wh_sweep_read_task(const WhSweep *sw, const char *out_dir, const char *name, guint task,
                            GArray *cells, GError **error)
{
  g_autofree char *path = g_build_filename(out_dir, name, NULL);
  g_autofree char *text = NULL;
  gsize len = 0;
  g_autoptr(GError) err = NULL;
  if (!wh_file_read(path, (gsize)WH_SWEEP_MAX_CELLS * 20, &text, &len, &err)) {
    g_set_error(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, "%s", err->message);
    return FALSE;
  }
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  if (task >= g_strv_length(lines) || !*g_strstrip(lines[task])) {
    g_set_error(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT, "%s: no task %u", path, task);
    return FALSE;
  }
  g_auto(GStrv) ids = g_strsplit(lines[task], " ", -1);
  for (char **id = ids; *id; id++) {
    gint k = wh_sweep_find(sw, *id);
    if (k < 0) {
      g_set_error(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT,
                  "%s:%u: cell %s is not a cell of %s (was the specification or whsim changed?)",
                  path, task + 1, *id, sw->path);
      return FALSE;
    }
    guint u = (guint)k;
    g_array_append_val(cells, u);
  }
  return TRUE;
}

/* Whether `text` can stand in an #SBATCH line unquoted. */
static gboolean sbatch_safe(const char *text)
{
  for (const char *p = text; *p; p++)
    if (!g_ascii_isalnum(*p) && !strchr("/._-+,=:@~", *p))
      return FALSE;
  return TRUE;
}

char *wh_sweep_sbatch_script(const char *whsim, const char *spec, const char *out_dir, guint tasks,
                             char **sbatch_args, char **extra_args, GError **error)
{
  if (!sbatch_safe(out_dir)) {
    g_set_error(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT,
                "--out %s: with --backend slurm the output folder's path may hold only letters, "
                "digits and / . _ - + , = : @ ~ (it names the tasks' logs in an #SBATCH line)",
                out_dir);
    return NULL;
  }
  g_autoptr(GString) s = g_string_new("#!/bin/sh\n");
  g_string_append_printf(s, "# whsim sweep: %u task(s) of %s/sweep-tasks.txt, one line each\n",
                         tasks, out_dir);
  g_string_append_printf(s, "#SBATCH --job-name=whsim-sweep\n#SBATCH --array=0-%u\n",
                         tasks ? tasks - 1 : 0);
  g_string_append_printf(s, "#SBATCH --output=%s/slurm/task-%%A_%%a.out\n", out_dir);
  for (char **a = sbatch_args; a && *a; a++) {
    if (**a != '-' || strpbrk(*a, "\r\n")) {
      g_set_error(error, WH_SWEEP_ERROR, WH_SWEEP_ERROR_INPUT,
                  "--sbatch-args: \"%s\": each argument must be an sbatch option (starting "
                  "with '-') on one line",
                  *a);
      return NULL;
    }
    g_string_append_printf(s, "#SBATCH %s\n", *a);
  }
  g_autofree char *q_whsim = g_shell_quote(whsim), *q_spec = g_shell_quote(spec);
  g_autofree char *q_out = g_shell_quote(out_dir);
  g_string_append_printf(s, "exec %s sweep %s --out %s --task \"$SLURM_ARRAY_TASK_ID\"", q_whsim,
                         q_spec, q_out);
  for (char **a = extra_args; a && *a; a++) {
    g_autofree char *q = g_shell_quote(*a);
    g_string_append_printf(s, " %s", q);
  }
  g_string_append_c(s, '\n');
  return g_string_free(g_steal_pointer(&s), FALSE);
}
