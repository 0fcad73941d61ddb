/* whsim: the command-line front end. `whsim run` loads a scenario, applies command-
 * line overrides, checks the output directory, simulates, checks conservation and
 * writes the outputs (see outputs.h); `whsim compare` runs a scenario on the exact
 * engine (or reads a stored exact run, --exact) and under Wormhole and reports
 * Wormhole's speedup and errors (compare.h);
 * `whsim list` prints every registered type and parameter; `whsim validate` only loads
 * and checks a scenario and reports its size; `whsim plot` draws a run's outputs
 * (plot.h); `whsim sweep` runs the cells of a sweep specification (sweep-cli.h);
 * `whsim export-hpcc` writes a scenario's inputs for the HPCC project's ns-3 simulator
 * (hpcc-export.h); `whsim --version` prints the version and the source commit.
 * Exit status: 0 success, 1 the outputs could not be written or the simulation ended
 * early or inconsistent (deadlock, retry limit, time horizon; outputs are still
 * written, for diagnosis), 2 bad input or usage (nothing written). A run interrupted by
 * SIGINT or SIGTERM writes its partial outputs, then ends by that signal (interrupt.h). */
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "hpcc-export.h"
#include "interrupt.h"
#include "outputs.h"
#include "plan-cli.h"
#include "plot.h"
#include "plugin.h"
#include "progress.h"
#include "registry.h"
#include "report.h"
#include "run-files.h"
#include "run.h"
#include "sweep-cli.h"
#include "sweep-spec.h"
#include "units.h"
#ifdef WH_HAVE_NS3
#include "ns3-engine.h"
#endif

#define EXIT_BAD_INPUT 2

static void usage(FILE *out)
{
  fprintf(out, "usage: whsim compare FILE.xml [--out DIR] [--exact DIR] [OPTION...]   the exact "
               "engine against Wormhole\n"
               "       whsim run FILE.xml [OPTION...]   (options below)\n"
               "       whsim validate FILE.xml [--plugin LIB.so]... [--data-dir DIR]\n"
               "       whsim plot DIR [DIR...] [--out DIR]   pictures of runs' outputs\n"
               "       whsim sweep SPEC.xml [--out DIR] [--list] [--backend local|parallel|slurm]\n"
               "       whsim --version\n"
               "       whsim list [--plugin LIB.so]...\n"
               "       whsim export-hpcc FILE.xml --out DIR [--set T::P=V]...   inputs for "
               "the HPCC project's ns-3\n"
               "Run `whsim run --help`, `whsim compare --help` or `whsim sweep --help` for the "
               "options.\n");
}

/* Warnings about what a scenario left to a default that may not be meant. */
static void print_warnings(const WhRun *run)
{
  g_auto(GStrv) warnings = wh_run_warnings(run);
  for (char **w = warnings; *w; w++)
    fprintf(stderr, "whsim: warning: %s\n", *w);
}

/* Loads every --plugin; reports and returns FALSE on the first failure. */
static gboolean load_plugins(char **plugins)
{
  for (char **p = plugins; p && *p; p++) {
    g_autoptr(GError) err = NULL;
    if (!wh_plugin_load(*p, &err)) {
      fprintf(stderr, "whsim: %s\n", err->message);
      return FALSE;
    }
  }
  return TRUE;
}

/* Parses the options of `validate` and `list`: --plugin, and --data-dir where
 * `data_dir` is not NULL. */
static gboolean parse_common(int *argc, char ***argv, const char *what, char ***plugins,
                             char **data_dir)
{
  GOptionEntry entries[] = {
      {"plugin", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, plugins, "load a plugin (repeatable)",
       "LIB.so"},
      {"data-dir", 0, 0, G_OPTION_ARG_FILENAME, data_dir, "referenced files may also lie below DIR",
       "DIR"},
      {NULL},
  };
  if (data_dir == NULL)
    entries[1] = entries[2];
  g_autoptr(GOptionContext) ctx = g_option_context_new(what);
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, argc, argv, &err)) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return FALSE;
  }
  return load_plugins(*plugins);
}

/* A memo file that could not be loaded (nullable: none): the run goes on without it. */
static void print_memo_warning(const char *warning)
{
  if (warning)
    fprintf(stderr, "whsim: warning: %s\n", warning);
}

/* The options of `whsim run`, as given. */
typedef struct {
  char *out_dir, *seed, *scheduler, *cc, *sample, *engine, *ns3_scheduler, *ns3_marking,
      *ns3_wormhole;
  char *iterations, *wall_limit, *data_dir, *max_memory, *progress, *memo;
  char *exact;    /* compare: the stored exact run's directory */
  char *ensemble; /* compare: runs in the perturbation ensemble */
  char *jobs;     /* compare: ensemble members run at once */
  char *seeds;    /* compare: ensemble members that differ only by the seed */
  char *ens_from; /* compare: read the members from an earlier comparison's ensemble/ */
  char **sets, **plugins;
  gboolean quiet;
  WhProgressRun status; /* the status line (--progress) */
} RunArgs;

static void run_args_clear(RunArgs *a)
{
  g_free(a->out_dir);
  g_free(a->seed);
  g_free(a->scheduler);
  g_free(a->cc);
  g_free(a->sample);
  g_free(a->engine);
  g_free(a->ns3_scheduler);
  g_free(a->ns3_marking);
  g_free(a->ns3_wormhole);
  g_free(a->iterations);
  g_free(a->wall_limit);
  g_free(a->data_dir);
  g_free(a->max_memory);
  g_free(a->progress);
  g_free(a->memo);
  g_free(a->exact);
  g_free(a->ensemble);
  g_free(a->ens_from);
  g_free(a->jobs);
  g_free(a->seeds);
  g_strfreev(a->sets);
  g_strfreev(a->plugins);
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(RunArgs, run_args_clear)

/* What `whsim compare --help` says of the command and its outputs. */
static const char compare_description[] =
    "Runs the scenario twice in one process, one run after the other: first on the exact\n"
    "engine (wh::Wormhole::Mode=off, on the stock scheduler: --scheduler, else the\n"
    "scenario's, else heap), then under Wormhole (--scheduler wormhole: Mode=skip, the\n"
    "fast-forward of steady partitions, unless --set or the scenario chooses another mode,\n"
    "e.g. --set wh::Wormhole::Mode=observe, which skips nothing). Both runs take the same\n"
    "options. Flows are matched by their key (flows.csv's last column: a workload flow's\n"
    "op and transfer index, else the scenario flow's id), ops by their id.\n"
    "With --exact DIR the exact side is read from a stored exact run instead (DIR's\n"
    "summary.json, flows.csv and, with a workload, ops.csv; plain files, not compressed)\n"
    "and only Wormhole runs: a large scenario's exact run is made once and every Wormhole\n"
    "setting compared against it. The stored run must have the same scenario name, seed,\n"
    "cc, config_digest (the parameters in force, --set included), network, iterations,\n"
    "flows and ops, and must have finished (or stopped at the scenario's stop time); else\n"
    "the comparison is refused, naming the file and field. Its wall_s is the stored one,\n"
    "measured at another time. DIR is only read; --out may not lie inside it.\n"
    "With --ensemble N (2..64), N-1 exact runs perturbed by wh::Link::DelayJitter=1..N-1\n"
    "run first as `whsim run` child processes (-j JOBS at a time, default: the CPUs) into\n"
    "DIR/ensemble/member-i/; compare.json's ensemble object gives, per metric (iteration\n"
    "time or makespan, op end times per kind, FCT quantiles per flow class, per-flow\n"
    "spread), each member's and Wormhole's deviation from the reference and a verdict:\n"
    "inside when Wormhole deviates no more than the farthest member. A failing member\n"
    "fails the comparison. --ensemble-seeds K (0..64) adds K exact runs that differ only\n"
    "by the seed (--seed S+1..S+K, S the reference's), run in the same batch into\n"
    "DIR/ensemble/seed-k/ and judged apart in the ensemble's seeds object (the same\n"
    "metrics, size, member_dirs); they do not widen the jitter members' verdicts.\n"
    "--ensemble-from EDIR reads the members from EDIR (the ensemble/ directory of an earlier\n"
    "comparison of the same scenario and options: EDIR/member-i/, EDIR/seed-k/) instead of\n"
    "running them, checked as --exact checks a stored run: with --exact DIR/exact of that\n"
    "comparison, a Wormhole setting is judged against the ensemble and only Wormhole runs.\n"
    "Outputs in DIR (default: out/<file name without .xml>-compare):\n"
    "  exact/, wormhole/        each run's own outputs (summary.json, flows.csv, ...);\n"
    "                           with --exact, wormhole/ only\n"
    "  compare.json             exact_from (the --exact DIR, or null), wall_s and events\n"
    "                           of each run, wall_speedup (exact wall / Wormhole wall),\n"
    "                           event_speedup, events_skipped (1 - Wormhole events /\n"
    "                           exact events), iteration_time_error (signed,\n"
    "                           relative; per iteration too) or makespan_error,\n"
    "                           op_end_time_error (mean, max), fct_error (mean, p99, max of\n"
    "                           |FCT_wormhole - FCT_exact| / FCT_exact, signed_mean),\n"
    "                           bytes_skipped, the Wormhole fields of its summary, plots\n"
    "  compare-flows.csv        key,src,dst,bytes,flow_id_exact,flow_id_wormhole,\n"
    "                           fct_exact_ps,fct_wormhole_ps,rel_error\n"
    "  compare-ops.csv          with a workload: op_id,rank,kind,name,end_exact_ps,\n"
    "                           end_wormhole_ps,end_time_rel_error\n"
    "  compare-fct.svg, compare-fct-error-cdf.svg   when gnuplot is on the PATH\n"
    "Exit status: 0 success, 1 an output could not be written or a run ended early or\n"
    "inconsistent (outputs are still written), 2 bad input or usage, e.g. a scenario with\n"
    "neither flows nor a workload, --out naming a file, or a stored exact run that does\n"
    "not match (no comparison written).\n";

static const char memo_help[] =
    "keep Wormhole's memo database in FILE: loaded at the start when it exists, as far "
    "as MemoMaxBytes and --max-memory allow (a damaged or stale memo file is ignored with "
    "a warning, then replaced), written at the end of a run that did not fail, merged "
    "under a lock with what FILE holds then (at most MemoMaxBytes); a link is followed, a "
    "read-only FILE is never "
    "written, a FILE that is not a memo file is refused and left as it is; needs "
    "wh::Wormhole::Mode=memo, or Patterns=true with observe or skip";

static const char run_description[] =
    "Parameters and their units: `whsim list`. Outputs: summary.json (counters) and\n"
    "flows.csv (flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key) in the output\n"
    "directory (key: a workload flow's op and transfer index, else the flow's label); rates.csv\n"
    "and queues.csv with a sample period; ops.csv and trace.json with a workload.\n"
    "Exit status: 0 success, 1 the run failed or ended inconsistent, 2 bad input or usage.\n";

/* The options `whsim compare` adds to those of `whsim run`: the exact engine's
 * perturbation ensemble. */
static void add_ensemble_entries(GOptionContext *ctx, RunArgs *a)
{
  GOptionEntry ensemble[] = {
      {"ensemble", 0, 0, G_OPTION_ARG_STRING, &a->ensemble,
       "also judge Wormhole against the exact engine's perturbation ensemble of N runs, "
       "2..64: the reference and N-1 members, the exact run with wh::Link::DelayJitter=1.."
       "N-1, run as `whsim run` child processes into DIR/ensemble/member-i/",
       "N"},
      {"ensemble-seeds", 0, 0, G_OPTION_ARG_STRING, &a->seeds,
       "with --ensemble: also run K members (0..64, default 0) that differ from the reference "
       "only by the seed (S+1..S+K), into DIR/ensemble/seed-k/, judged apart",
       "K"},
      {"ensemble-from", 0, 0, G_OPTION_ARG_FILENAME, &a->ens_from,
       "with --ensemble: read the members from EDIR (an earlier comparison's ensemble/ "
       "directory, only read) instead of running them",
       "EDIR"},
      {"jobs", 'j', 0, G_OPTION_ARG_STRING, &a->jobs,
       "with --ensemble: run at most JOBS members at once (default: the number of CPUs)", "JOBS"},
      {NULL},
  };
  g_option_context_add_main_entries(ctx, ensemble, NULL);
}

/* `whsim run`'s `n` entries as `whsim compare` shows them: its own wording of --out,
 * --scheduler and --memo, and no ns-3 engine. */
static void adapt_entries_for_compare(GOptionEntry *entries, gsize n)
{
  entries[0].description = "write the comparison and both runs' outputs to DIR (default: "
                           "out/<file name without .xml>-compare)";
  entries[2].description = "the exact run's scheduler: calendar (default), heap or a "
                           "plugin's; the Wormhole run always uses wormhole";
  entries[n - 3].description =
      "keep the Wormhole run's memo database in FILE (see whsim run --help)";
  for (GOptionEntry *e = entries; e->long_name; e++)
    if (g_str_has_prefix(e->long_name, "engine") || g_str_has_prefix(e->long_name, "ns3-"))
      e->flags |= G_OPTION_FLAG_HIDDEN;
}

/* The option parser of `whsim run` (or, with `compare`, of `whsim compare`: the same
 * options without the ns-3 engine), storing into `a`; also the source of the option
 * lists that `whsim --help` prints. (transfer full) */
static GOptionContext *run_context(RunArgs *a, gboolean compare)
{
  GOptionEntry entries[] = {
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &a->out_dir,
       "write the outputs to DIR (default: out/<file name without .xml>)", "DIR"},
      {"seed", 0, 0, G_OPTION_ARG_STRING, &a->seed, "random seed (overrides the scenario's)", "N"},
      {"scheduler", 0, 0, G_OPTION_ARG_STRING, &a->scheduler,
       "event scheduler: calendar (default), heap, a plugin's, or wormhole (Wormhole around the "
       "calendar, in mode skip, the fast-forward of steady partitions, unless wh::Wormhole::Mode "
       "says otherwise)",
       "NAME"},
      {"cc", 0, 0, G_OPTION_ARG_STRING, &a->cc,
       "congestion control (default: the scenario's, else dcqcn)", "NAME"},
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->sets,
       "override a parameter, e.g. wh::DcqcnCc::Kmin=400KB (repeatable)", "Type::Param=VALUE"},
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &a->quiet, "print nothing on success", NULL},
      {"engine", 0, 0, G_OPTION_ARG_STRING, &a->engine,
       "native (default) or ns3: run the scenario on stock ns-3 3.37 (DCTCP scenarios without PFC)",
       "NAME"},
      {"ns3-scheduler", 0, 0, G_OPTION_ARG_STRING, &a->ns3_scheduler,
       "with --engine ns3: run ns-3's event list on this project scheduler (heap or calendar) "
       "instead of ns-3's MapScheduler",
       "NAME"},
      {"ns3-marking", 0, 0, G_OPTION_ARG_STRING, &a->ns3_marking,
       "with --engine ns3: red (default: ns-3's RED marks as a step at enqueue) or dequeue "
       "(a C hook queue disc marks at dequeue, as the native engine does)",
       "HOW"},
      {"ns3-wormhole", 0, 0, G_OPTION_ARG_STRING, &a->ns3_wormhole,
       "with --engine ns3: observe (the only mode): Wormhole's steady-state monitor watches the "
       "ns-3 run through its trace sources, skipping nothing, and writes wormhole-ns3.json",
       "MODE"},
      {"wall-limit", 0, 0, G_OPTION_ARG_STRING, &a->wall_limit,
       "stop after SECONDS (> 0) of wall time and report how far the run got", "SECONDS"},
      {"progress", 0, 0, G_OPTION_ARG_STRING, &a->progress,
       "a status line on stderr during the run: auto (default: when stderr is a terminal), "
       "always or never",
       "WHEN"},
      {"iterations", 0, 0, G_OPTION_ARG_STRING, &a->iterations,
       "run the workload N times, 1..100000 (overrides the scenario's iterations)", "N"},
      {"sample-period", 0, 0, G_OPTION_ARG_STRING, &a->sample,
       "sample flow rates and queues every TIME; writes rates.csv and queues.csv", "TIME"},
      {"plugin", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &a->plugins,
       "load a plugin before the scenario (repeatable)", "LIB.so"},
      {"data-dir", 0, 0, G_OPTION_ARG_FILENAME, &a->data_dir,
       "files the scenario references (SimAI workloads) may also lie below DIR; by default "
       "only the scenario's own directory tree is allowed",
       "DIR"},
      {"max-memory", 0, 0, G_OPTION_ARG_STRING, &a->max_memory,
       "memory budget: refuse networks and workloads estimated larger than SIZE (default: 3/4 "
       "of the physical memory)",
       "SIZE"},
      {"memo", 0, 0, G_OPTION_ARG_FILENAME, &a->memo, memo_help, "FILE"},
      {"exact", 0, 0, G_OPTION_ARG_FILENAME, &a->exact,
       "compare against the exact run stored in DIR (the exact/ directory of an earlier "
       "`whsim compare --out`, or the output directory of `whsim run` on the exact engine) "
       "instead of running the exact engine again; it must be of the same configuration and "
       "is only read",
       "DIR"},
      {NULL},
  };
  if (!compare)
    entries[G_N_ELEMENTS(entries) - 2] = entries[G_N_ELEMENTS(entries) - 1]; /* no --exact */
  if (compare)
    adapt_entries_for_compare(entries, G_N_ELEMENTS(entries));
  GOptionContext *ctx = g_option_context_new(
      compare ? "compare FILE.xml - the exact engine against Wormhole on one scenario"
              : "run FILE.xml - simulate a scenario");
  g_option_context_add_main_entries(ctx, entries, NULL);
  if (compare) {
    add_ensemble_entries(ctx, a);
    g_option_context_set_description(ctx, compare_description);
    return ctx;
  }
  g_option_context_set_description(ctx, run_description);
  return ctx;
}

/* Checks the numeric options and fills `opts`; FALSE after reporting the first bad one. */
static gboolean run_options_from_args(RunArgs *a, const char *cmd, WhRunOptions *opts)
{
  g_autoptr(GError) err = NULL;
  *opts = (WhRunOptions){.scheduler = a->scheduler,
                         .cc = a->cc,
                         .sets = a->sets,
                         .data_dir = a->data_dir,
                         .memo_file = a->memo};
  if (a->iterations) {
    int64_t v;
    if (!wh_units_parse_int(a->iterations, &v, NULL) || v < 1 || v > 100000) {
      fprintf(stderr, "whsim %s: --iterations %s: expected an integer in 1..100000\n", cmd,
              a->iterations);
      return FALSE;
    }
    opts->iterations = (uint32_t)v;
  }
  if (a->wall_limit) {
    char *end = NULL;
    double v = g_ascii_strtod(a->wall_limit, &end);
    if (end == a->wall_limit || *end != '\0' || !isfinite(v) || v <= 0) {
      fprintf(stderr, "whsim %s: --wall-limit %s: expected a finite number of seconds > 0\n", cmd,
              a->wall_limit);
      return FALSE;
    }
    opts->wall_limit_s = v;
  }
  opts->progress = wh_progress_run_callback;
  opts->progress_data = &a->status;
  if (a->progress && !wh_progress_mode_parse(a->progress, &a->status.mode)) {
    fprintf(stderr, "whsim %s: --progress %s: expected auto, always or never\n", cmd, a->progress);
    return FALSE;
  }
  if (a->max_memory &&
      (!wh_units_parse_bytes(a->max_memory, &opts->max_memory, &err) || !opts->max_memory)) {
    fprintf(stderr, "whsim %s: --max-memory %s: %s\n", cmd, a->max_memory,
            err ? err->message : "must be greater than zero");
    return FALSE;
  }
  if (a->sample &&
      (!wh_units_parse_time(a->sample, &opts->sample_period, &err) || !opts->sample_period)) {
    fprintf(stderr, "whsim %s: --sample-period %s: %s\n", cmd, a->sample,
            err ? err->message : "must be greater than zero");
    return FALSE;
  }
  if (a->seed) {
    int64_t v;
    if (!wh_units_parse_int(a->seed, &v, NULL) || v < 0) {
      fprintf(stderr, "whsim %s: --seed %s: not a non-negative integer\n", cmd, a->seed);
      return FALSE;
    }
    opts->has_seed = TRUE;
    opts->seed = (uint64_t)v;
  }
  gboolean ns3 = g_strcmp0(a->engine, "ns3") == 0;
  if (a->engine && !ns3 && strcmp(a->engine, "native") != 0) {
    fprintf(stderr, "whsim %s: --engine %s: expected native or ns3\n", cmd, a->engine);
    return FALSE;
  }
  if (ns3 && a->memo) {
    fprintf(stderr, "whsim %s: --memo applies to the native engine only\n", cmd);
    return FALSE;
  }
  if (!ns3 && (a->ns3_scheduler || a->ns3_marking || a->ns3_wormhole)) {
    fprintf(stderr, "whsim %s: --%s applies only with --engine ns3\n", cmd,
            a->ns3_scheduler ? "ns3-scheduler"
            : a->ns3_marking ? "ns3-marking"
                             : "ns3-wormhole");
    return FALSE;
  }
  return TRUE;
}

/* Runs on ns-3 and writes its outputs. */
static int run_ns3(WhRun *run, const RunArgs *a)
{
#ifdef WH_HAVE_NS3
  g_autoptr(GError) err = NULL;
  WhNs3EngineOptions nopts = {a->ns3_scheduler, a->ns3_marking, a->ns3_wormhole, a->quiet};
  if (!wh_ns3_engine_check(run, &nopts, &err)) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  if (!wh_output_dir_prepare(a->out_dir, &err)) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  if (!wh_ns3_engine_run(run, a->out_dir, &nopts, &err)) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return 1;
  }
  return 0;
#else
  (void)run;
  (void)a;
  fprintf(stderr, "whsim run: --engine ns3: this whsim was built without ns-3\n");
  return EXIT_BAD_INPUT;
#endif
}

/* Runs the native engine, writes the outputs and reports; the exit status. */
static int run_native(WhRun *run, const char *path, const RunArgs *a)
{
  g_autoptr(GError) err = NULL;
  wh_run_set_interrupt(run, wh_interrupt_install());
  wh_run_execute(run);
  if (!wh_run_write(run, a->out_dir, &err)) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return 1;
  }
  int status = 0;
  g_auto(WhRunStatus) st = {0};
  wh_run_status(run, &st);
  if (st.failed) {
    fprintf(stderr, "whsim: %s: %s\n", path, st.message);
    status = 1;
  } else if (!st.stopped_early && !wh_run_check(run, &err)) {
    fprintf(stderr, "whsim: %s: inconsistent end state: %s\n", path, err->message);
    status = 1;
  } else if (!wh_run_memo_save(run, &err)) {
    fprintf(stderr, "whsim: --memo %s\n", err->message);
    status = 1;
  }
  if (!a->quiet) {
    g_autofree char *report = wh_run_report_text(run, a->out_dir);
    fputs(report, stdout);
  }
  if (st.interrupted)
    fprintf(stderr, "whsim: %s: interrupted; the partial outputs are in %s\n", path, a->out_dir);
  return status;
}

/* Parses the options of `whsim run` or `whsim compare` (`cmd`) into `a` and `opts`,
 * loads the plugins and fills in the default output directory, out/<file name without
 * .xml> followed by `out_suffix`; on success argv[1] is the scenario file. FALSE after
 * reporting a bad option or argument. */
static gboolean parse_run_args(int argc, char **argv, const char *cmd, const char *out_suffix,
                               RunArgs *a, WhRunOptions *opts)
{
  g_autoptr(GOptionContext) ctx = run_context(a, strcmp(cmd, "compare") == 0);
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "whsim %s: %s\n", cmd, err->message);
    return FALSE;
  }
  if (argc != 2) {
    fprintf(stderr, "whsim %s: expected exactly one scenario file\n", cmd);
    usage(stderr);
    return FALSE;
  }
  if (!load_plugins(a->plugins) || !run_options_from_args(a, cmd, opts))
    return FALSE;
  if (a->out_dir == NULL) {
    g_autofree char *base = g_path_get_basename(argv[1]);
    char *dot = strrchr(base, '.');
    if (dot)
      *dot = '\0';
    g_autofree char *name = g_strconcat(base, out_suffix, NULL);
    a->out_dir = g_build_filename("out", name, NULL);
  }
  return TRUE;
}

static int cmd_run(int argc, char **argv)
{
  g_auto(RunArgs) a = {0};
  WhRunOptions opts;
  if (!parse_run_args(argc, argv, "run", "", &a, &opts))
    return EXIT_BAD_INPUT;
  g_autoptr(GError) err = NULL;
  g_autofree char *loading = g_strdup_printf("loading %s", argv[1]);
  WhProgress *ticker = wh_progress_new_ticker(a.status.mode, stderr, loading);
  g_autoptr(WhScenario) sc = wh_scenario_load(argv[1], &err);
  g_autoptr(WhRun) run = sc ? wh_run_new(sc, &opts, &err) : NULL;
  wh_progress_free(ticker);
  if (run == NULL) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  print_warnings(run);
  print_memo_warning(wh_run_memo_warning(run));
  if (g_strcmp0(a.engine, "ns3") == 0)
    return run_ns3(run, &a);
  if (!wh_output_dir_prepare(a.out_dir, &err)) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  int status = run_native(run, argv[1], &a);
  wh_interrupt_reraise();
  return status;
}

/* Executes a comparison (cmd_compare) and reports; the exit status. */
static int compare_execute(WhCompare *c, const char *path, const char *out_dir, gboolean quiet)
{
  g_autoptr(GError) err = NULL;
  if (!wh_compare_execute(c, &err)) {
    fprintf(stderr, "whsim: %s: %s\n", path, err->message);
    /* a stored exact run found to be of another scenario is bad input */
    return g_error_matches(err, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE) ? EXIT_BAD_INPUT : 1;
  }
  if (!quiet)
    wh_compare_print(c, stdout);
  if (wh_interrupt_caught())
    fprintf(stderr,
            "whsim: %s: interrupted; outputs in %s (\"stopped_early\": \"interrupted\" marks "
            "a run cut short)\n",
            path, out_dir);
  if (wh_compare_problem(c)) {
    fprintf(stderr, "whsim: %s: %s\n", path, wh_compare_problem(c));
    return 1;
  }
  return 0;
}

/* The sizes of --ensemble, --jobs and --ensemble-seeds, checked, into `ens`; FALSE
 * after reporting a bad one. */
static gboolean parse_ensemble(const RunArgs *a, WhCompareEnsemble *ens)
{
  int64_t v;
  if (!wh_units_parse_int(a->ensemble, &v, NULL) || v < 2 || v > WH_COMPARE_ENSEMBLE_MAX) {
    fprintf(stderr,
            "whsim compare: --ensemble %s: expected an integer in 2..%d (the reference run "
            "and 1..%d perturbed members)\n",
            a->ensemble, WH_COMPARE_ENSEMBLE_MAX, WH_COMPARE_ENSEMBLE_MAX - 1);
    return FALSE;
  }
  ens->size = (uint32_t)v;
  ens->jobs = g_get_num_processors();
  if (a->jobs && (!wh_units_parse_int(a->jobs, &v, NULL) || v < 1 || v > 1024)) {
    fprintf(stderr, "whsim compare: --jobs %s: expected an integer in 1..1024\n", a->jobs);
    return FALSE;
  }
  if (a->jobs)
    ens->jobs = (guint)v;
  if (a->seeds &&
      (!wh_units_parse_int(a->seeds, &v, NULL) || v < 0 || v > WH_COMPARE_ENSEMBLE_SEEDS_MAX)) {
    fprintf(stderr,
            "whsim compare: --ensemble-seeds %s: expected an integer in 0..%d (the members "
            "that differ from the reference only by the seed)\n",
            a->seeds, WH_COMPARE_ENSEMBLE_SEEDS_MAX);
    return FALSE;
  }
  if (a->seeds)
    ens->seeds = (uint32_t)v;
  return TRUE;
}

static int cmd_compare(int argc, char **argv)
{
  g_auto(RunArgs) a = {0};
  WhRunOptions opts;
  if (!parse_run_args(argc, argv, "compare", "-compare", &a, &opts))
    return EXIT_BAD_INPUT;
  if (a.engine || a.ns3_scheduler || a.ns3_marking || a.ns3_wormhole) {
    fprintf(stderr, "whsim compare: --engine and --ns3-*: compare runs the native engine only\n");
    return EXIT_BAD_INPUT;
  }
  WhCompareEnsemble ens = {0};
  g_autofree char *self = NULL;
  g_autoptr(GPtrArray) extra = g_ptr_array_new_with_free_func(g_free);
  if (a.jobs && !a.ensemble) {
    fprintf(stderr, "whsim compare: --jobs applies only with --ensemble\n");
    return EXIT_BAD_INPUT;
  }
  if (a.seeds && !a.ensemble) {
    fprintf(stderr, "whsim compare: --ensemble-seeds applies only with --ensemble\n");
    return EXIT_BAD_INPUT;
  }
  if (a.ens_from && !a.ensemble) {
    fprintf(stderr, "whsim compare: --ensemble-from applies only with --ensemble\n");
    return EXIT_BAD_INPUT;
  }
  if (a.ensemble) {
    if (!parse_ensemble(&a, &ens))
      return EXIT_BAD_INPUT;
    self = g_file_read_link("/proc/self/exe", NULL);
    if (self == NULL)
      self = g_canonicalize_filename(argv[0], NULL);
    ens.whsim = self;
    ens.from_dir = a.ens_from;
    for (char **p = a.plugins; p && *p; p++)
      g_ptr_array_add(extra, g_strconcat("--plugin=", *p, NULL));
    g_ptr_array_add(extra, NULL);
    ens.extra_args = (char **)extra->pdata;
  }
  g_autoptr(GError) err = NULL;
  g_autofree char *loading = g_strdup_printf("loading %s", argv[1]);
  WhProgress *ticker = wh_progress_new_ticker(a.status.mode, stderr, loading);
  g_autoptr(WhScenario) sc = wh_scenario_load(argv[1], &err);
  /* caught from here: the runs stop at once when a signal came while they were built */
  opts.interrupt = wh_interrupt_install();
  g_autoptr(WhCompare) c = sc ? wh_compare_new(sc, &opts, a.out_dir, a.exact, &err) : NULL;
  if (c && ens.size && !wh_compare_set_ensemble(c, &ens, &err))
    g_clear_pointer(&c, wh_compare_free);
  wh_progress_free(ticker);
  if (c == NULL) {
    fprintf(stderr, "whsim: %s\n", err->message);
    wh_interrupt_reraise();
    return EXIT_BAD_INPUT;
  }
  print_warnings(wh_compare_built_run(c));
  print_memo_warning(wh_compare_memo_warning(c));
  int status = compare_execute(c, argv[1], a.out_dir, a.quiet);
  wh_interrupt_reraise();
  return status;
}

static int cmd_validate(int argc, char **argv)
{
  g_auto(GStrv) plugins = NULL;
  g_autofree char *data_dir = NULL;
  if (!parse_common(&argc, &argv, "validate FILE.xml - check a scenario without running it",
                    &plugins, &data_dir))
    return EXIT_BAD_INPUT;
  if (argc != 2) {
    usage(stderr);
    return EXIT_BAD_INPUT;
  }
  g_autoptr(GError) err = NULL;
  g_autoptr(WhScenario) sc = wh_scenario_load(argv[1], &err);
  WhRunOptions opts = {.data_dir = data_dir};
  g_autoptr(WhRun) run = sc ? wh_run_new(sc, &opts, &err) : NULL;
  if (run == NULL) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  print_warnings(run);
  g_autofree char *text = wh_run_validate_text(run, argv[1]);
  fputs(text, stdout);
  return 0;
}

static int cmd_plot(int argc, char **argv)
{
  g_autofree char *out = NULL;
  GOptionEntry entries[] = {
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out,
       "an existing directory to write plots/ into (default: the first run's directory)", "DIR"},
      {NULL},
  };
  g_autoptr(GOptionContext) ctx =
      g_option_context_new("DIR [DIR...] - draw the outputs of runs (several: overlaid)");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(
      ctx, "Draws with gnuplot, as PNG and SVG into DIR/plots/ (created when missing):\n"
           "  fct-cdf            flows.csv: CDF of the flow completion times\n"
           "  slowdown-vs-size   flows.csv and links.csv, when flow sizes vary\n"
           "  op-timeline        ops.csv: every op at its rank over time\n"
           "  rates, queues      rates.csv, queues.csv (runs with --sample-period)\n"
           "  link-utilization   links.csv: CDF of the ports' busy time per tier\n"
           "  fct-error-cdf      compare-flows.csv (a `whsim compare` directory)\n"
           "A file of these names replaces one of an earlier plot (and those this plot does\n"
           "not draw are removed); other files in plots/ are kept. Each CSV file must be a\n"
           "regular file of at most 256 MiB.\n"
           "Exit status: 0 success, 1 gnuplot failed or plots/ could not be written, 2 bad\n"
           "input or usage, or no gnuplot on the PATH (nothing written); SIGINT or SIGTERM\n"
           "stops it with nothing written.\n");
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "whsim plot: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  if (argc < 2) {
    fprintf(stderr, "whsim plot: expected one run directory or more\n");
    usage(stderr);
    return EXIT_BAD_INPUT;
  }
  if (out && !g_file_test(out, G_FILE_TEST_IS_DIR)) {
    fprintf(stderr, "whsim plot: --out %s: not a directory\n", out);
    return EXIT_BAD_INPUT;
  }
  const char *dir = out ? out : argv[1];
  g_autoptr(GPtrArray) written = g_ptr_array_new_with_free_func(g_free);
  g_autofree char **dirs = g_new0(char *, argc);
  memcpy(dirs, argv + 1, sizeof(char *) * (size_t)(argc - 1));
  if (!wh_plot_runs(dirs, dir, written, wh_interrupt_install(), &err)) {
    fprintf(stderr, "whsim plot: %s\n", err->message);
    wh_interrupt_reraise();
    return err->code == WH_PLOT_ERROR_INPUT ? EXIT_BAD_INPUT : 1;
  }
  wh_interrupt_reraise();
  g_ptr_array_add(written, NULL);
  g_autofree char *list = g_strjoinv(", ", (char **)written->pdata);
  printf("plots      %s/plots/: %s\n", dir, list);
  return 0;
}

static int cmd_export_hpcc(int argc, char **argv)
{
  g_autofree char *out = NULL, *seed = NULL, *cc = NULL;
  g_auto(GStrv) sets = NULL;
  GOptionEntry entries[] = {
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out, "the directory to write into (required)", "DIR"},
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets, "override a parameter (repeatable)",
       "TYPE::PARAM=VALUE"},
      {"seed", 0, 0, G_OPTION_ARG_STRING, &seed, "the run's seed (permutations, ECMP)", "N"},
      {"cc", 0, 0, G_OPTION_ARG_STRING, &cc, "the congestion control (overrides the scenario's)",
       "NAME"},
      {NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new(
      "FILE.xml - write the HPCC project's ns-3 simulator's inputs for a scenario");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(
      ctx, "Writes topology.txt, flow.txt, trace.txt, config.txt (run it from DIR: `third\n"
           "config.txt`), flow-map.csv (which fct.txt line is which flow) and notes.txt (the\n"
           "mappings that are not exact) into DIR; see docs/hpcc-ns3.md.\n"
           "Exit status: 0 written, 1 the files could not be written, 2 bad input or a\n"
           "feature the HPCC simulator cannot express (named; nothing written).\n");
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "whsim export-hpcc: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  if (argc != 2 || out == NULL) {
    fprintf(stderr, "whsim export-hpcc: expected one scenario file and --out DIR\n");
    return EXIT_BAD_INPUT;
  }
  WhRunOptions opts = {.sets = sets, .cc = cc};
  int64_t v = 0;
  if (seed && (!wh_units_parse_int(seed, &v, NULL) || v < 0)) {
    fprintf(stderr, "whsim export-hpcc: --seed %s: not a non-negative integer\n", seed);
    return EXIT_BAD_INPUT;
  }
  opts.has_seed = seed != NULL;
  opts.seed = (uint64_t)v;
  g_autoptr(WhScenario) sc = wh_scenario_load(argv[1], &err);
  g_autoptr(WhRun) run = sc ? wh_run_new(sc, &opts, &err) : NULL;
  if (run == NULL || !wh_hpcc_export_check(run, &err)) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  g_autofree char *notes = NULL;
  if (!wh_output_dir_prepare_for(out, wh_hpcc_export_files, &err)) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  if (!wh_hpcc_export_write(run, out, &notes, &err)) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return 1;
  }
  printf("hpcc       %s/config.txt (run `third config.txt` there); notes:\n%s", out, notes);
  return 0;
}

int main(int argc, char **argv)
{
  setlocale(LC_ALL, "C");
  g_set_prgname("whsim");
  /* past a file-size limit (ulimit -f), a write fails with EFBIG, reported as an error
   * with the staged outputs cleaned up, instead of ending the process silently */
  signal(SIGXFSZ, SIG_IGN);
  wh_registry_init();
  if (argc < 2) {
    usage(stderr);
    return EXIT_BAD_INPUT;
  }
  if (strcmp(argv[1], "run") == 0)
    return cmd_run(argc - 1, argv + 1);
  if (strcmp(argv[1], "compare") == 0)
    return cmd_compare(argc - 1, argv + 1);
  if (strcmp(argv[1], "validate") == 0)
    return cmd_validate(argc - 1, argv + 1);
  if (strcmp(argv[1], "plot") == 0)
    return cmd_plot(argc - 1, argv + 1);
  if (strcmp(argv[1], "sweep") == 0)
    return wh_sweep_main(argc - 1, argv + 1);
  if (strcmp(argv[1], "export-hpcc") == 0)
    return cmd_export_hpcc(argc - 1, argv + 1);
  if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
    printf("whsim %s\n", wh_build_id());
    return 0;
  }
  if (strcmp(argv[1], "plan") == 0)
    return wh_piper_plan_main(argc - 1, argv + 1);
  if (strcmp(argv[1], "list") == 0) {
    g_auto(GStrv) plugins = NULL;
    int n = argc - 1;
    char **v = argv + 1;
    if (!parse_common(&n, &v, "list - print every type and parameter", &plugins, NULL))
      return EXIT_BAD_INPUT;
    wh_registry_print(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    usage(stdout);
    g_auto(RunArgs) a = {0};
    for (int compare = 0; compare < 2; compare++) {
      g_autoptr(GOptionContext) ctx = run_context(&a, compare);
      g_autofree char *help = g_option_context_get_help(ctx, TRUE, NULL);
      printf("\n%s", help);
    }
    return 0;
  }
  fprintf(stderr, "whsim: unknown command \"%s\"\n", argv[1]);
  usage(stderr);
  return EXIT_BAD_INPUT;
}
