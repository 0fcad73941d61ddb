/* whsim: the command-line front end. `whsim run` loads a scenario, applies command-
 * line overrides, simulates, checks conservation and writes summary.json and
 * flows.csv; `whsim list` prints every registered type and parameter; `whsim
 * validate` only loads and checks a scenario. Exit status: 0 success, 1 the outputs
 * could not be written or the simulation ended in an inconsistent state (outputs are
 * still written, for diagnosis), 2 bad input or usage. */
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "piper.h"
#include "plugin.h"
#include "registry.h"
#include "run.h"
#include "units.h"
#ifdef WH_HAVE_NS3
#include "ns3-engine.h"
#endif

#define EXIT_BAD_INPUT 2

static void usage(FILE *out)
{
  fprintf(out, "usage: whsim run FILE.xml [--out DIR] [--seed N] [--scheduler heap|calendar]\n"
               "                         [--cc NAME] [--set Type::Param=VALUE]... [--quiet]\n"
               "                         [--plugin LIB.so]...\n"
               "       whsim validate FILE.xml [--plugin LIB.so]...\n"
               "       whsim list [--plugin LIB.so]...\n"
               "Run `whsim run --help` for the options.\n");
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

/* Parses the options shared by every command (just --plugin) for `validate` and
 * `list`. */
static gboolean parse_common(int *argc, char ***argv, const char *what, char ***plugins)
{
  GOptionEntry entries[] = {
      {"plugin", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, plugins, "load a plugin (repeatable)",
       "LIB.so"},
      {NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new(what);
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, argc, argv, &err)) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return FALSE;
  }
  return load_plugins(*plugins);
}

static int cmp_u64(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static void print_report(const WhRun *run, const char *out_dir)
{
  const WhTransport *tp = run->tp;
  uint64_t bytes = 0;
  uint64_t *fct = g_new(uint64_t, tp->n_flows ? tp->n_flows : 1);
  uint32_t n = 0;
  for (uint32_t i = 0; i < tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow((WhTransport *)tp, i);
    bytes += f->size;
    if (f->finish)
      fct[n++] = f->finish - f->start;
  }
  qsort(fct, n, sizeof *fct, cmp_u64);
  double ev = (double)run->sim->events_executed;
  double w = run->wall_s > 0 ? run->wall_s : 1e-9;
  printf("scenario   %s (seed %" G_GUINT64_FORMAT ", %s scheduler, %s)\n",
         run->sc->name ? run->sc->name : "", run->seed, run->sched->name, run->cc->name);
  printf("network    %u hosts, %u switches, %u directed ports\n", run->net->n_hosts,
         run->net->n_switches, run->net->n_ports);
  if (run->sc->topology_preset)
    printf("note       Frontier-like network (preset \"%s\"): Slingshot's congestion control is "
           "not public; %s stands in for it\n",
           run->sc->topology_preset, run->cc->name);
  printf("simulated  %u flows, %.3f MB, %.3f us of network time\n", tp->n_flows,
         (double)bytes / 1e6, wh_time_to_s(run->sim->now) * 1e6);
  if (n)
    printf("FCT        min %.3f us, median %.3f us, max %.3f us (%u of %u flows completed)\n",
           (double)fct[0] * 1e-6, (double)fct[n / 2] * 1e-6, (double)fct[n - 1] * 1e-6, n,
           tp->n_flows);
  if (run->preset_facts) {
    size_t len = strlen(run->preset_facts);
    printf("%s%s", run->preset_facts, len && run->preset_facts[len - 1] != '\n' ? "\n" : "");
  }
  if (run->simai_dropped_tp)
    printf("TP         %u tensor-parallel collectives (%.1f MB) stay inside servers and are "
           "not put on the network\n",
           run->simai_dropped_tp, (double)run->simai_dropped_tp_bytes / 1e6);
  const WhNetDeadlock *dl = &run->net->deadlock;
  if (dl->detected) {
    printf("stopped    DEADLOCK detected at %.3f us: no packet crossed a link since %.3f us "
           "while %u switches hold %.3f MB; %u ports paused by PFC",
           wh_time_to_s(dl->at) * 1e6, wh_time_to_s(dl->still_since) * 1e6, dl->switches,
           (double)dl->buffered_bytes / 1e6, dl->paused_ports);
    if (run->workload)
      printf(": %u of %u ops done", wh_run_ops_done(run), wh_workload_n_ops(run->workload));
    printf("\n");
  } else if (wh_run_stopped_early(run)) {
    printf("stopped    at the %s after %.1f s of wall time, %.3f ms of network time",
           wh_run_stop_reason(run), run->wall_s, wh_time_to_s(run->sim->now) * 1e3);
    if (run->workload)
      printf(": %u of %u ops done", wh_run_ops_done(run), wh_workload_n_ops(run->workload));
    printf("\n");
  }
  if (run->workload && !wh_run_stopped_early(run)) {
    double sum = 0, comp = 0, exp = 0;
    for (uint32_t i = 0; i < run->iterations; i++) {
      WhIterationStats st;
      wh_run_iteration_stats(run, i, &st);
      sum += (double)st.time;
      comp += (double)st.compute;
      exp += (double)st.exposed_comm;
    }
    double n = run->iterations;
    printf("workload   %u ranks, %u ops, %u iteration%s: iteration time %.3f us (compute %.3f us, "
           "exposed communication %.3f us)\n",
           wh_workload_n_ranks(run->workload), wh_workload_n_ops(run->workload), run->iterations,
           run->iterations == 1 ? "" : "s", sum / n * 1e-6, comp / n * 1e-6, exp / n * 1e-6);
  }
  printf("congestion %" G_GUINT64_FORMAT " ECN marks, %" G_GUINT64_FORMAT
         " CNPs, %" G_GUINT64_FORMAT " PFC pauses, %" G_GUINT64_FORMAT " drops\n",
         wh_net_ecn_marks(run->net), tp->c.cnps, run->net->c.pfc_pauses, run->net->c.drops);
  printf("engine     %.0f events in %.3f s (%.2f M events/s, %.2f M link traversals/s)\n", ev,
         run->wall_s, ev / w * 1e-6, (double)run->net->c.link_traversals / w * 1e-6);
  if (out_dir)
    printf("outputs    %s/summary.json, %s/flows.csv, links.csv%s%s\n", out_dir, out_dir,
           run->workload ? ", ops.csv, trace.json" : "",
           run->sampler ? ", rates.csv, queues.csv" : "");
  g_free(fct);
}

static int cmd_run(int argc, char **argv)
{
  g_autofree char *out_dir = NULL;
  g_autofree char *seed = NULL;
  g_autofree char *scheduler = NULL;
  g_autofree char *cc = NULL;
  g_auto(GStrv) sets = NULL;
  g_auto(GStrv) plugins = NULL;
  g_autofree char *sample = NULL;
  g_autofree char *engine = NULL;
  g_autofree char *ns3_scheduler = NULL;
  g_autofree char *ns3_marking = NULL;
  gint iterations = 0;
  gdouble wall_limit = 0;
  gboolean quiet = FALSE;
  GOptionEntry entries[] = {
      {"out", 'o', 0, G_OPTION_ARG_FILENAME, &out_dir,
       "write summary.json and flows.csv to DIR (default: out/<file name without .xml>)", "DIR"},
      {"seed", 0, 0, G_OPTION_ARG_STRING, &seed, "random seed (overrides the scenario's)", "N"},
      {"scheduler", 0, 0, G_OPTION_ARG_STRING, &scheduler,
       "event scheduler: heap (default) or calendar", "NAME"},
      {"cc", 0, 0, G_OPTION_ARG_STRING, &cc,
       "congestion control (default: the scenario's, else dcqcn)", "NAME"},
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets,
       "override a parameter, e.g. wh::DcqcnCc::Kmin=400KB (repeatable)", "Type::Param=VALUE"},
      {"quiet", 'q', 0, G_OPTION_ARG_NONE, &quiet, "print nothing on success", NULL},
      {"engine", 0, 0, G_OPTION_ARG_STRING, &engine,
       "native (default) or ns3: run the scenario on stock ns-3 3.37 (DCTCP scenarios without PFC)",
       "NAME"},
      {"ns3-scheduler", 0, 0, G_OPTION_ARG_STRING, &ns3_scheduler,
       "with --engine ns3: run ns-3's event list on this project scheduler (heap or calendar) "
       "instead of ns-3's MapScheduler",
       "NAME"},
      {"ns3-marking", 0, 0, G_OPTION_ARG_STRING, &ns3_marking,
       "with --engine ns3: red (default: ns-3's RED marks as a step at enqueue) or dequeue "
       "(a C hook queue disc marks at dequeue, as the native engine does)",
       "HOW"},
      {"wall-limit", 0, 0, G_OPTION_ARG_DOUBLE, &wall_limit,
       "stop after SECONDS of wall time and report how far the run got", "SECONDS"},
      {"iterations", 0, 0, G_OPTION_ARG_INT, &iterations,
       "run the workload N times (overrides the scenario's iterations)", "N"},
      {"sample-period", 0, 0, G_OPTION_ARG_STRING, &sample,
       "sample flow rates and queues every TIME; writes rates.csv and queues.csv", "TIME"},
      {"plugin", 0, 0, G_OPTION_ARG_FILENAME_ARRAY, &plugins,
       "load a plugin before the scenario (repeatable)", "LIB.so"},
      {NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("FILE.xml - simulate a scenario");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_option_context_set_description(
      ctx,
      "Parameters and their units: `whsim list`. Outputs: summary.json (counters) and\n"
      "flows.csv (flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps) in the output directory.\n");
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "whsim run: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  if (argc != 2) {
    fprintf(stderr, "whsim run: expected exactly one scenario file\n");
    usage(stderr);
    return EXIT_BAD_INPUT;
  }
  if (!load_plugins(plugins))
    return EXIT_BAD_INPUT;
  if (iterations < 0 || iterations > 100000) {
    fprintf(stderr, "whsim run: --iterations %d: expected 1..100000\n", iterations);
    return EXIT_BAD_INPUT;
  }
  if (wall_limit < 0) {
    fprintf(stderr, "whsim run: --wall-limit %g: must not be negative\n", wall_limit);
    return EXIT_BAD_INPUT;
  }
  WhRunOptions opts = {.scheduler = scheduler,
                       .cc = cc,
                       .sets = sets,
                       .iterations = (uint32_t)iterations,
                       .wall_limit_s = wall_limit};
  if (sample && (!wh_units_parse_time(sample, &opts.sample_period, &err) || !opts.sample_period)) {
    fprintf(stderr, "whsim run: --sample-period %s: %s\n", sample,
            err ? err->message : "must be greater than zero");
    return EXIT_BAD_INPUT;
  }
  if (seed) {
    int64_t v;
    if (!wh_units_parse_int(seed, &v, &err) || v < 0) {
      fprintf(stderr, "whsim run: --seed %s: not a non-negative integer\n", seed);
      return EXIT_BAD_INPUT;
    }
    opts.has_seed = TRUE;
    opts.seed = (uint64_t)v;
  }
  g_autoptr(WhScenario) sc = wh_scenario_load(argv[1], &err);
  if (sc == NULL) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  g_autoptr(WhRun) run = wh_run_new(sc, &opts, &err);
  if (run == NULL) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  gboolean use_ns3 = engine && strcmp(engine, "ns3") == 0;
  if (engine && !use_ns3 && strcmp(engine, "native") != 0) {
    fprintf(stderr, "whsim run: --engine %s: expected native or ns3\n", engine);
    return EXIT_BAD_INPUT;
  }
  if (!use_ns3 && (ns3_scheduler || ns3_marking)) {
    fprintf(stderr, "whsim run: --%s applies only with --engine ns3\n",
            ns3_scheduler ? "ns3-scheduler" : "ns3-marking");
    return EXIT_BAD_INPUT;
  }
  if (out_dir == NULL) {
    g_autofree char *base = g_path_get_basename(argv[1]);
    char *dot = strrchr(base, '.');
    if (dot)
      *dot = '\0';
    out_dir = g_build_filename("out", base, NULL);
  }
  if (use_ns3) {
#ifdef WH_HAVE_NS3
    WhNs3EngineOptions nopts = {ns3_scheduler, ns3_marking, quiet};
    if (!wh_ns3_engine_check(run, &nopts, &err)) {
      fprintf(stderr, "whsim: %s\n", err->message);
      return EXIT_BAD_INPUT;
    }
    if (!wh_ns3_engine_run(run, out_dir, &nopts, &err)) {
      fprintf(stderr, "whsim: %s\n", err->message);
      return 1;
    }
    return 0;
#else
    fprintf(stderr, "whsim run: --engine ns3: this whsim was built without ns-3\n");
    return EXIT_BAD_INPUT;
#endif
  }
  wh_run_execute(run);
  if (out_dir == NULL) {
    g_autofree char *base = g_path_get_basename(argv[1]);
    char *dot = strrchr(base, '.');
    if (dot)
      *dot = '\0';
    out_dir = g_build_filename("out", base, NULL);
  }
  if (!wh_run_write(run, out_dir, &err)) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return 1;
  }
  int status = 0;
  if (run->net->deadlock.detected) {
    fprintf(stderr, "whsim: %s: the network deadlocked (PFC); see summary.json \"deadlock\"\n",
            argv[1]);
    status = 1;
  } else if (!wh_run_stopped_early(run) && !wh_run_check(run, &err)) {
    fprintf(stderr, "whsim: %s: inconsistent end state: %s\n", argv[1], err->message);
    status = 1;
  }
  if (!quiet)
    print_report(run, out_dir);
  return status;
}

static int cmd_validate(int argc, char **argv)
{
  g_auto(GStrv) plugins = NULL;
  if (!parse_common(&argc, &argv, "FILE.xml - check a scenario without running it", &plugins))
    return EXIT_BAD_INPUT;
  if (argc != 2) {
    usage(stderr);
    return EXIT_BAD_INPUT;
  }
  g_autoptr(GError) err = NULL;
  g_autoptr(WhScenario) sc = wh_scenario_load(argv[1], &err);
  g_autoptr(WhRun) run = sc ? wh_run_new(sc, NULL, &err) : NULL;
  if (run == NULL) {
    fprintf(stderr, "whsim: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  printf("%s: valid (%u hosts, %u switches, %u flows)\n", argv[1], run->net->n_hosts,
         run->net->n_switches, run->tp->n_flows);
  return 0;
}

int main(int argc, char **argv)
{
  setlocale(LC_ALL, "C");
  wh_registry_init();
  if (argc < 2) {
    usage(stderr);
    return EXIT_BAD_INPUT;
  }
  if (strcmp(argv[1], "run") == 0)
    return cmd_run(argc - 1, argv + 1);
  if (strcmp(argv[1], "validate") == 0)
    return cmd_validate(argc - 1, argv + 1);
  if (strcmp(argv[1], "plan") == 0)
    return wh_piper_plan_main(argc - 1, argv + 1);
  if (strcmp(argv[1], "list") == 0) {
    g_auto(GStrv) plugins = NULL;
    int n = argc - 1;
    char **v = argv + 1;
    if (!parse_common(&n, &v, "- print every type and parameter", &plugins))
      return EXIT_BAD_INPUT;
    wh_registry_print(stdout);
    return 0;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
      strcmp(argv[1], "help") == 0) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "whsim: unknown command \"%s\"\n", argv[1]);
  usage(stderr);
  return EXIT_BAD_INPUT;
}
