/* `whsim sweep`: the command line of sweeps (sweep-spec.h, sweep.h). It loads and
 * checks the specification, lists the cells (--list), or takes the output folder's
 * lock, finds the cells still to run and hands them to a backend: child processes
 * here (local, -j N, through the runner), GNU parallel with a job file (parallel,
 * --sshlogin spreading cells over hosts that share the folder), or a Slurm job array
 * (slurm: the script written, and with --submit submitted, polled with squeue and
 * cancelled with scancel on an interrupt). Every backend runs each cell as
 * `whsim sweep SPEC --out DIR --cell ID` (or `--task K`, a line of the task file),
 * the worker that records the cell. The merge writes sweep.csv and sweep.json.
 * Exit status: 0 every cell ok, 1 a cell failed or is missing, 2 bad input or usage, or
 * the folder in use by another sweep (nothing run). */
#include "sweep-cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interrupt.h"
#include "runner.h"
#include "sweep.h"
#include "units.h"

#define EXIT_BAD_INPUT 2
#define JOBS_FILE "sweep-jobs.txt"
#define TASKS_FILE "sweep-tasks.txt"
#define SCRIPT_FILE "sweep.sbatch"

typedef struct {
  char *out, *backend, *jobs, *cell, *task, *chunk, *sbatch_args;
  char **sshlogins, **plugins;
  gboolean list, retry_failed, merge, submit;
  guint n_jobs, n_chunk;
  char *spec;       /* absolute */
  char *whsim;      /* this program, absolute */
  GPtrArray *extra; /* --plugin=... for every cell, NULL-terminated */
} SweepArgs;

static void sweep_args_clear(SweepArgs *a)
{
  g_free(a->out);
  g_free(a->backend);
  g_free(a->jobs);
  g_free(a->cell);
  g_free(a->task);
  g_free(a->chunk);
  g_free(a->sbatch_args);
  g_strfreev(a->sshlogins);
  g_strfreev(a->plugins);
  g_free(a->spec);
  g_free(a->whsim);
  if (a->extra)
    g_ptr_array_unref(a->extra);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(SweepArgs, sweep_args_clear)

static const char sweep_description[] =
    "Runs every cell of the sweep specification SPEC (docs/user-guide.md, \"Sweeps\"):\n"
    "each cell is one `whsim run` (mode run), `whsim run --scheduler wormhole` (mode\n"
    "wormhole) or `whsim compare` (mode compare) into DIR/cells/ID/, ID a hash of the\n"
    "scenario and the files it references, the overrides, the seed, the mode and this\n"
    "build (whsim --version). A cell whose directory is complete is not run again (a\n"
    "failed one only with --retry-failed). Then DIR/sweep.csv and DIR/sweep.json hold\n"
    "one row per cell: its id, scenario, every varied parameter, seed, mode, status,\n"
    "exit status and last error line, and iteration_time_ps, makespan_ps, fct_p50_ps,\n"
    "fct_p99_ps, fct_max_ps, events, wall_s, and for compare cells\n"
    "wormhole_wall_speedup, wormhole_event_speedup, wormhole_time_error and\n"
    "wormhole_fct_error_p99. `whsim plot DIR` draws them against each parameter.\n"
    "A second sweep on the same DIR while one runs is refused (DIR/.sweep.lock).\n"
    "Exit status: 0 every cell ok, 1 a cell failed or is missing, 2 bad input or usage\n"
    "or DIR in use (nothing run).\n";

static GOptionContext *sweep_context(SweepArgs *a)
{
  GOptionEntry entries[] = {
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &a->out,
       "the sweep's folder (default: out/<file name without .xml>-sweep)", "DIR"},
      {"list", 0, 0, G_OPTION_ARG_NONE, &a->list, "print the cells and run nothing", NULL},
      {"backend", 0, 0, G_OPTION_ARG_STRING, &a->backend,
       "local (default: child processes here), parallel (GNU parallel) or slurm (an sbatch "
       "job array)",
       "NAME"},
      {"jobs", 'j', 0, G_OPTION_ARG_STRING, &a->jobs,
       "local and parallel: cells at once (default: the CPUs)", "N"},
      {"retry-failed", 0, 0, G_OPTION_ARG_NONE, &a->retry_failed, "run failed cells again", NULL},
      {"merge", 0, 0, G_OPTION_ARG_NONE, &a->merge,
       "run nothing: write sweep.csv and sweep.json from the cells there are", NULL},
      {"sshlogin", 'S', 0, G_OPTION_ARG_STRING_ARRAY, &a->sshlogins,
       "parallel: run cells on this host too (GNU parallel's --sshlogin, repeatable; ':' is "
       "this machine); DIR and whsim must be at the same paths there",
       "LOGIN"},
      {"chunk", 0, 0, G_OPTION_ARG_STRING, &a->chunk, "slurm: cells per array task (default 1)",
       "N"},
      {"sbatch-args", 0, 0, G_OPTION_ARG_STRING, &a->sbatch_args,
       "slurm: sbatch options for the script, e.g. \"--partition=batch --time=01:00:00\"", "ARGS"},
      {"submit", 0, 0, G_OPTION_ARG_NONE, &a->submit,
       "slurm: submit the script with sbatch and wait for the array (else only write it)", NULL},
      {"plugin", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->plugins,
       "load a plugin in every cell (repeatable)", "LIB.so"},
      {"cell", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &a->cell, "run one cell (a worker)",
       "ID"},
      {"task", 0, G_OPTION_FLAG_HIDDEN, G_OPTION_ARG_STRING, &a->task,
       "run the cells of line K+1 of DIR/sweep-tasks.txt (a Slurm task)", "K"},
      {NULL},
  };
  GOptionContext *ctx = g_option_context_new("SPEC - run the cells of a sweep");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(ctx, sweep_description);
  return ctx;
}

static gboolean parse_count(const char *opt, const char *text, guint max, guint *out)
{
  int64_t v;
  if (!wh_units_parse_int(text, &v, NULL) || v < 1 || v > max) {
    fprintf(stderr, "whsim sweep: --%s %s: expected an integer in 1..%u\n", opt, text, max);
    return FALSE;
  }
  *out = (guint)v;
  return TRUE;
}

/* Checks the options that need no file; FALSE after a message. */
static gboolean check_options(SweepArgs *a)
{
  const char *b = a->backend ? a->backend : "local";
  if (strcmp(b, "local") != 0 && strcmp(b, "parallel") != 0 && strcmp(b, "slurm") != 0) {
    fprintf(stderr,
            "whsim sweep: --backend %s: unknown backend (expected local, parallel or "
            "slurm)\n",
            b);
    return FALSE;
  }
  a->n_jobs = g_get_num_processors();
  a->n_chunk = 1;
  if ((a->jobs && !parse_count("jobs", a->jobs, 1024, &a->n_jobs)) ||
      (a->chunk && !parse_count("chunk", a->chunk, WH_SWEEP_MAX_CELLS, &a->n_chunk)))
    return FALSE;
  gboolean slurm = strcmp(b, "slurm") == 0;
  if (!slurm && (a->chunk || a->sbatch_args || a->submit)) {
    fprintf(stderr, "whsim sweep: --chunk, --sbatch-args and --submit apply only with "
                    "--backend slurm\n");
    return FALSE;
  }
  if (a->sshlogins && strcmp(b, "parallel") != 0) {
    fprintf(stderr, "whsim sweep: --sshlogin applies only with --backend parallel\n");
    return FALSE;
  }
  const char *need = a->submit ? "sbatch" : strcmp(b, "parallel") == 0 ? "parallel" : NULL;
  g_autofree char *found =
      need && !a->list && !a->merge && !a->cell && !a->task ? g_find_program_in_path(need) : NULL;
  if (need && !found && !a->list && !a->merge && !a->cell && !a->task) {
    fprintf(stderr, "whsim sweep: --backend %s%s: no %s on the PATH\n", b,
            a->submit ? " --submit" : "", need);
    return FALSE;
  }
  return TRUE;
}

/* Prints the cells, one line each. */
static void list_cells(const WhSweep *sw)
{
  printf("sweep %s: %u cells (build %s)\n", sw->name, sw->n_cells, sw->build_id);
  for (guint i = 0; i < sw->n_cells; i++) {
    const WhSweepCell *c = &sw->cells[i];
    g_autoptr(GString) line = g_string_new(NULL);
    g_string_append_printf(line, "%s  %s", c->id,
                           ((WhSweepScenario *)sw->scenarios->pdata[c->scenario])->name);
    for (guint p = 0; p < sw->params->len; p++)
      g_string_append_printf(line, "  %s=%s", ((WhSweepParam *)sw->params->pdata[p])->name,
                             c->values[p]);
    g_string_append_printf(line, "  seed=%" G_GUINT64_FORMAT "  %s", c->seed,
                           wh_sweep_mode_name(c->mode));
    puts(line->str);
  }
}

static gboolean parse_task(const char *text, guint *out)
{
  int64_t v;
  if (!wh_units_parse_int(text, &v, NULL) || v < 0 || v >= WH_SWEEP_MAX_CELLS) {
    fprintf(stderr, "whsim sweep: --task %s: expected an integer in 0..%d\n", text,
            WH_SWEEP_MAX_CELLS - 1);
    return FALSE;
  }
  *out = (guint)v;
  return TRUE;
}

/* The worker: runs the cells of --cell or --task; the exit status. */
static int run_worker(const WhSweep *sw, SweepArgs *a)
{
  g_autoptr(GArray) cells = g_array_new(FALSE, FALSE, sizeof(guint));
  g_autoptr(GError) err = NULL;
  guint task = 0;
  if (a->cell) {
    gint k = wh_sweep_find(sw, a->cell);
    if (k < 0) {
      fprintf(stderr, "whsim sweep: --cell %s: not a cell of %s\n", a->cell, sw->path);
      return EXIT_BAD_INPUT;
    }
    guint u = (guint)k;
    g_array_append_val(cells, u);
  } else if (!parse_task(a->task, &task)) {
    return EXIT_BAD_INPUT;
  } else if (!wh_sweep_read_task(sw, a->out, TASKS_FILE, task, cells, &err)) {
    fprintf(stderr, "whsim sweep: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  WhSweepCellRun o = {a->whsim, (char **)a->extra->pdata, a->retry_failed, wh_interrupt_install()};
  int status = 0;
  for (guint i = 0; i < cells->len; i++) {
    guint k = g_array_index(cells, guint, i);
    gboolean ran;
    WhSweepCellState st;
    if (!wh_sweep_run_cell(sw, k, a->out, &o, &ran, &st, &err)) {
      fprintf(stderr, "whsim sweep: cell %s: %s\n", sw->cells[k].id, err->message);
      return 1;
    }
    printf("cell %s: %s%s\n", sw->cells[k].id, st == WH_SWEEP_CELL_OK ? "ok" : "failed",
           ran ? "" : " (complete before; not run)");
    status |= st != WH_SWEEP_CELL_OK;
  }
  return status;
}

/* The worker command of one cell (transfer full). */
static char **worker_argv(const SweepArgs *a, const char *cell)
{
  GPtrArray *v = g_ptr_array_new();
  const char *head[] = {a->whsim, "sweep", a->spec, "--out", a->out, "--cell", cell};
  for (guint i = 0; i < G_N_ELEMENTS(head); i++)
    g_ptr_array_add(v, g_strdup(head[i]));
  if (a->retry_failed)
    g_ptr_array_add(v, g_strdup("--retry-failed"));
  for (char **p = (char **)a->extra->pdata; *p; p++)
    g_ptr_array_add(v, g_strdup(*p));
  g_ptr_array_add(v, NULL);
  return (char **)g_ptr_array_free(v, FALSE);
}

/* Runs `n` commands through the runner, reporting a failure to start or an
 * interrupt; FALSE then. */
static gboolean run_commands(WhRunnerJob *jobs, guint n, guint parallel)
{
  g_autoptr(GError) err = NULL;
  gboolean ok = wh_runner_run(jobs, n, parallel, wh_interrupt_install(), NULL, &err);
  if (!ok)
    fprintf(stderr, "whsim sweep: %s\n", err->message);
  return ok;
}

static gboolean backend_local(const SweepArgs *a, const WhSweep *sw, const guint *todo, guint n)
{
  g_autofree WhRunnerJob *jobs = g_new0(WhRunnerJob, MAX(n, 1));
  for (guint i = 0; i < n; i++)
    jobs[i].argv = worker_argv(a, sw->cells[todo[i]].id);
  gboolean ok = run_commands(jobs, n, a->n_jobs);
  for (guint i = 0; i < n; i++) {
    g_strfreev(jobs[i].argv);
    wh_runner_job_clear(&jobs[i]);
  }
  return ok;
}

static gboolean backend_parallel(const SweepArgs *a, const WhSweep *sw, const guint *todo, guint n)
{
  g_autoptr(GError) err = NULL;
  if (!wh_sweep_write_tasks(sw, todo, n, 1, a->out, JOBS_FILE, &err)) {
    fprintf(stderr, "whsim sweep: %s\n", err->message);
    return FALSE;
  }
  g_autofree char *jobs_path = g_build_filename(a->out, JOBS_FILE, NULL);
  g_autofree char *log = g_build_filename(a->out, "parallel-joblog.txt", NULL);
  g_autofree char *j = g_strdup_printf("%u", a->n_jobs);
  GPtrArray *v = g_ptr_array_new_with_free_func(g_free);
  const char *head[] = {"parallel", "--will-cite", "--quote",    "--jobs", j,
                        "--joblog", log,           "--arg-file", jobs_path};
  for (guint i = 0; i < G_N_ELEMENTS(head); i++)
    g_ptr_array_add(v, g_strdup(head[i]));
  for (char **s = a->sshlogins; s && *s; s++) {
    g_ptr_array_add(v, g_strdup("--sshlogin"));
    g_ptr_array_add(v, g_strdup(*s));
  }
  g_auto(GStrv) worker = worker_argv(a, "{}");
  for (char **p = worker; *p; p++)
    g_ptr_array_add(v, g_strdup(*p));
  g_ptr_array_add(v, NULL);
  WhRunnerJob job = {.argv = (char **)v->pdata};
  gboolean ok = run_commands(&job, 1, 1);
  wh_runner_job_clear(&job);
  g_ptr_array_unref(v);
  return ok;
}

/* Runs a Slurm client command, its standard output into *out (nullable). */
static gboolean slurm_command(const char *const *argv, char **out)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *err_text = NULL;
  int wstatus;
  if (!g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, out, &err_text,
                    &wstatus, &err) ||
      !g_spawn_check_wait_status(wstatus, &err)) {
    fprintf(stderr, "whsim sweep: %s: %s%s%s\n", argv[0], err->message, err_text ? ": " : "",
            err_text ? g_strstrip(err_text) : "");
    return FALSE;
  }
  return TRUE;
}

/* Submits the script and waits for the array to leave the queue; on an interrupt the
 * job is cancelled. */
static gboolean slurm_submit(const char *script)
{
  g_autofree char *out = NULL;
  const char *sbatch[] = {"sbatch", "--parsable", script, NULL};
  if (!slurm_command(sbatch, &out))
    return FALSE;
  g_autofree char *job = g_strdup(g_strstrip(out));
  char *semi = strchr(job, ';'); /* "jobid;cluster" */
  if (semi)
    *semi = '\0';
  printf("submitted  Slurm job %s; waiting for its tasks\n", job);
  fflush(stdout);
  const volatile sig_atomic_t *stop = wh_interrupt_install();
  for (;;) {
    g_autofree char *q = NULL;
    const char *squeue[] = {"squeue", "--noheader", "--jobs", job, "--format=%i", NULL};
    if (!slurm_command(squeue, &q))
      return FALSE;
    if (!*g_strstrip(q))
      return TRUE;
    for (int i = 0; i < 10 && !*stop; i++)
      g_usleep(100000);
    if (*stop) {
      const char *scancel[] = {"scancel", job, NULL};
      slurm_command(scancel, NULL);
      fprintf(stderr, "whsim sweep: interrupted; Slurm job %s cancelled\n", job);
      return FALSE;
    }
  }
}

static gboolean backend_slurm(const SweepArgs *a, const WhSweep *sw, const guint *todo, guint n)
{
  g_autoptr(GError) err = NULL;
  guint tasks = (n + a->n_chunk - 1) / a->n_chunk;
  g_auto(GStrv) sbatch_args = NULL;
  if (a->sbatch_args && !g_shell_parse_argv(a->sbatch_args, NULL, &sbatch_args, &err)) {
    fprintf(stderr, "whsim sweep: --sbatch-args: %s\n", err->message);
    return FALSE;
  }
  g_autofree char *script = wh_sweep_sbatch_script(a->whsim, a->spec, a->out, tasks, sbatch_args,
                                                   (char **)a->extra->pdata, &err);
  g_autofree char *path = g_build_filename(a->out, SCRIPT_FILE, NULL);
  g_autofree char *logs = g_build_filename(a->out, "slurm", NULL);
  if (script == NULL || !wh_sweep_write_tasks(sw, todo, n, a->n_chunk, a->out, TASKS_FILE, &err) ||
      g_mkdir_with_parents(logs, 0777) != 0 || !g_file_set_contents(path, script, -1, &err)) {
    fprintf(stderr, "whsim sweep: %s\n", err ? err->message : logs);
    return FALSE;
  }
  if (!a->submit) {
    printf("wrote      %s: %u task(s); submit it with `sbatch %s`, then merge with "
           "`whsim sweep %s --out %s --merge`\n",
           path, tasks, path, a->spec, a->out);
    return TRUE;
  }
  return n == 0 || slurm_submit(path);
}

/* Fills in the defaults and the absolute paths the workers need. */
static void resolve_paths(SweepArgs *a, const char *spec, const char *argv0, const char *name)
{
  if (a->out == NULL) {
    g_autofree char *dir = g_strconcat(name, "-sweep", NULL);
    a->out = g_build_filename("out", dir, NULL);
  }
  char *out = g_canonicalize_filename(a->out, NULL);
  g_free(a->out);
  a->out = out;
  a->spec = g_canonicalize_filename(spec, NULL);
  a->whsim = g_file_read_link("/proc/self/exe", NULL);
  if (a->whsim == NULL)
    a->whsim = g_canonicalize_filename(argv0, NULL);
  a->extra = g_ptr_array_new_with_free_func(g_free);
  for (char **p = a->plugins; p && *p; p++) {
    g_autofree char *abs = g_canonicalize_filename(*p, NULL);
    g_ptr_array_add(a->extra, g_strconcat("--plugin=", abs, NULL));
  }
  g_ptr_array_add(a->extra, NULL);
}

/* Writes sweep.csv and sweep.json and says how the cells stand; the exit status. */
static int merge(const WhSweep *sw, const SweepArgs *a)
{
  g_autoptr(GError) err = NULL;
  WhSweepCounts n;
  if (!wh_sweep_merge(sw, a->out, &n, &err)) {
    fprintf(stderr, "whsim sweep: %s\n", err->message);
    return 1;
  }
  printf("cells      %u: %u ok, %u failed, %u missing\n", sw->n_cells, n.ok, n.failed, n.missing);
  printf("merged     %s/sweep.csv, %s/sweep.json\n", a->out, a->out);
  return n.failed || n.missing ? 1 : 0;
}

/* Checks, before anything is written, that the Slurm script can be made: the
 * --sbatch-args and the folder's path. */
static gboolean check_slurm(const SweepArgs *a)
{
  g_autoptr(GError) err = NULL;
  g_auto(GStrv) args = NULL;
  if (a->sbatch_args && !g_shell_parse_argv(a->sbatch_args, NULL, &args, &err)) {
    fprintf(stderr, "whsim sweep: --sbatch-args: %s\n", err->message);
    return FALSE;
  }
  g_autofree char *script =
      wh_sweep_sbatch_script(a->whsim, a->spec, a->out, 1, args, (char **)a->extra->pdata, &err);
  if (script == NULL)
    fprintf(stderr, "whsim sweep: %s\n", err->message);
  return script != NULL;
}

/* The driver: the lock, the cells to run, the backend, the merge; the exit status. */
static int run_driver(const WhSweep *sw, const SweepArgs *a)
{
  g_autoptr(GError) err = NULL;
  if (g_strcmp0(a->backend, "slurm") == 0 && !a->merge && !check_slurm(a))
    return EXIT_BAD_INPUT;
  int lock = wh_sweep_lock(a->out, &err);
  if (lock < 0) {
    fprintf(stderr, "whsim sweep: %s\n", err->message);
    return g_error_matches(err, WH_SWEEP_ERROR, WH_SWEEP_ERROR_BUSY) ? EXIT_BAD_INPUT : 1;
  }
  g_autofree guint *todo = g_new0(guint, MAX(sw->n_cells, 1));
  guint n = 0, ok = 0, failed = 0;
  for (guint i = 0; !a->merge && i < sw->n_cells; i++) {
    WhSweepCellState st = wh_sweep_cell_state(sw, i, a->out);
    ok += st == WH_SWEEP_CELL_OK;
    failed += st == WH_SWEEP_CELL_FAILED;
    if (st == WH_SWEEP_CELL_MISSING || (st == WH_SWEEP_CELL_FAILED && a->retry_failed))
      todo[n++] = i;
  }
  const char *backend = a->backend ? a->backend : "local";
  gboolean run_ok = TRUE;
  if (!a->merge) {
    printf("sweep      %s: %u cells: %u ok, %u failed%s, %u to run (backend %s)\n", sw->name,
           sw->n_cells, ok, failed,
           failed && !a->retry_failed ? " (kept: --retry-failed runs them)" : "", n, backend);
    fflush(stdout);
    if (strcmp(backend, "parallel") == 0)
      run_ok = n == 0 || backend_parallel(a, sw, todo, n);
    else if (strcmp(backend, "slurm") == 0)
      run_ok = backend_slurm(a, sw, todo, n);
    else
      run_ok = backend_local(a, sw, todo, n);
    if (run_ok && strcmp(backend, "slurm") == 0 && !a->submit) {
      close(lock);
      return 0;
    }
  }
  int status = merge(sw, a);
  close(lock);
  return run_ok ? status : 1;
}

int wh_sweep_main(int argc, char **argv)
{
  g_auto(SweepArgs) a = {0};
  g_autoptr(GOptionContext) ctx = sweep_context(&a);
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "whsim sweep: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  if (argc != 2) {
    fprintf(stderr, "whsim sweep: expected exactly one sweep specification (SPEC.xml)\n");
    return EXIT_BAD_INPUT;
  }
  if (a.cell && a.task) {
    fprintf(stderr, "whsim sweep: --cell and --task exclude each other\n");
    return EXIT_BAD_INPUT;
  }
  if (!check_options(&a))
    return EXIT_BAD_INPUT;
  gboolean worker = a.cell || a.task;
  unsigned flags = worker || a.merge ? 0 : WH_SWEEP_LOAD_CHECK_RUNS;
  g_autoptr(WhSweep) sw = wh_sweep_load(argv[1], wh_build_id(), flags, &err);
  if (sw == NULL) {
    fprintf(stderr, "whsim sweep: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  if (a.list) {
    list_cells(sw);
    return 0;
  }
  resolve_paths(&a, argv[1], argv[0], sw->name);
  int status = worker ? run_worker(sw, &a) : run_driver(sw, &a);
  wh_interrupt_reraise();
  return status;
}
