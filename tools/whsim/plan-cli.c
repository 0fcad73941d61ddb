/* `whsim plan`: the command-line front end of the Piper planner (piper.h): options,
 * the model (a catalogue name or a model file), the plan's report and, with
 * --emit-scenario, the chosen candidate's scenario. Exit status 0, or 2 for bad input
 * (the message names the option or field), 1 if an output file could not be written. */
#include "plan-cli.h"
#include "plan-plot.h"

#include <errno.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dragonfly.h"
#include "file-write.h"
#include "piper.h"
#include "scenario.h"
#include "topology-preset.h"
#include "units.h"
#include "wh-error.h"

#define EXIT_BAD_INPUT 2

/* The candidate to emit: --mesh PPxEP, else the best feasible one. */
static const WhPiperCandidate *pick(const WhPiperPlan *p, const char *mesh, GError **error)
{
  if (!mesh) {
    const WhPiperCandidate *b = wh_piper_plan_best(p);
    if (!b)
      wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                   "--emit-scenario: no candidate fits; choose one with --mesh PPxEP");
    return b;
  }
  unsigned pp = 0, ep = 0;
  char tail = 0;
  if (sscanf(mesh, "%ux%u%c", &pp, &ep, &tail) != 2) {
    wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                 "--mesh %s: expected PPxEP, e.g. 8x8", mesh);
    return NULL;
  }
  for (uint32_t i = 0; i < p->n; i++) {
    if (p->c[i].pp == pp && p->c[i].ep == ep && p->c[i].mem)
      return &p->c[i];
  }
  wh_error_set(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
               "--mesh %s: not a candidate (see the table)", mesh);
  return NULL;
}

/* --model NAME|FILE: a file (a path that exists, or one with a '/' or ending in .ini)
 * holds exactly one model. */
static WhPiperCatalogue *resolve_model(const char *arg, const WhPiperModel **out, GError **error)
{
  *out = NULL;
  if (g_file_test(arg, G_FILE_TEST_EXISTS) || strchr(arg, '/') || g_str_has_suffix(arg, ".ini")) {
    WhPiperCatalogue *c = wh_piper_catalogue_load(arg, error);
    if (!c)
      return NULL;
    if (c->n != 1) {
      g_set_error(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                  "%s: holds %u models; a model file holds one [name] group", arg, c->n);
      wh_piper_catalogue_free(c);
      return NULL;
    }
    *out = &c->models[0];
    return c;
  }
  const WhPiperCatalogue *cat = wh_piper_catalogue();
  *out = wh_piper_find(cat, arg);
  if (!*out) {
    GString *names = g_string_new(NULL);
    for (uint32_t i = 0; i < cat->n; i++)
      g_string_append_printf(names, "%s%s", i ? ", " : "", cat->models[i].name);
    g_set_error(error, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                "--model \"%s\": unknown model (not a file; the catalogue has %s)", arg,
                names->str);
    g_string_free(names, TRUE);
  }
  return NULL;
}

/* A positive integer option given as text; FALSE with a message naming it. */
static gboolean parse_count(const char *opt, const char *v, uint64_t max, uint32_t *out)
{
  char *end = NULL;
  errno = 0;
  long long x = v ? strtoll(v, &end, 10) : 0;
  if (!v || *v == '\0' || *end != '\0' || errno || x <= 0 || (uint64_t)x > max) {
    fprintf(stderr, "whsim plan: %s %s: expected a positive integer (at most %llu)\n", opt,
            v ? v : "", (unsigned long long)max);
    return FALSE;
  }
  *out = (uint32_t)x;
  return TRUE;
}

/* --verify: the candidate simulated beside the plan; its scenario goes to `emit`, or
 * to a temporary directory removed afterwards. Returns the exit status. */
static int verify(const WhPiperModel *m, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                  const WhPiperNet *net, const WhPiperCandidate *k, const char *emit, double *terms)
{
  g_autoptr(GError) err = NULL;
  g_autofree char *dir = NULL, *path = NULL;
  if (!emit) {
    dir = g_dir_make_tmp("whsim-verify-XXXXXX", &err);
    if (!dir) {
      fprintf(stderr, "whsim plan: --verify: %s\n", err->message);
      return 1;
    }
    path = g_build_filename(dir, "verify.xml", NULL);
  }
  g_autoptr(GString) out = g_string_new(NULL);
  gboolean ok = wh_piper_verify(m, o, c, net, k, emit ? emit : path, out, terms, &err);
  fputs(out->str, stdout);
  if (dir) {
    g_unlink(path);
    g_rmdir(dir);
  }
  if (!ok) {
    fprintf(stderr, "whsim plan: %s\n", err->message);
    return err->domain == WH_PIPER_ERROR ? EXIT_BAD_INPUT : 1;
  }
  return 0;
}

/* --plot DIR: the plan's pictures (and the verification's); returns the exit status. */
static int plot(const char *dir, const WhPiperModel *m, const WhPiperPlanOpts *o,
                const WhPiperPlan *p, const WhPiperCandidate *k, const double *terms)
{
  g_autoptr(GError) err = NULL;
  if (!wh_plan_plot(dir, m, o, p, k ? k : wh_piper_plan_best(p), terms, &err)) {
    fprintf(stderr, "whsim plan: %s\n", err->message);
    return 1;
  }
  printf("plots: %s\n", dir);
  return 0;
}

/* Plans `m`, prints the candidates and, with `emit`, writes the chosen one's scenario.
 * Returns the exit status. */
static int plan_and_emit(const WhPiperModel *m, const WhPiperPlanOpts *o, const WhPiperCompute *c,
                         const WhPiperNet *net, const char *emit, const char *mesh,
                         gboolean verify_it, const char *plot_dir)
{
  double terms[2 * WH_PIPER_VERIFY_TERMS];
  g_autoptr(GError) err = NULL;
  WhPiperPlan p;
  if (!wh_piper_plan(m, o, c, net, &p, &err)) {
    fprintf(stderr, "whsim plan: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  int status = 0;
  g_autofree char *text = wh_piper_plan_text(m, o, c, &p);
  fputs(text, stdout);
  const WhPiperCandidate *k = NULL;
  if ((emit || verify_it) && m->experts < 2)
    wh_error_set(&err, WH_PIPER_ERROR, WH_PIPER_ERROR_INVALID,
                 "model %s: --emit-scenario and --verify need an MoE model (Experts >= 2)",
                 m->name);
  else if (emit || verify_it)
    k = pick(&p, mesh, &err);
  if ((emit || verify_it) && !k) {
    fprintf(stderr, "whsim plan: %s\n", err->message);
    status = EXIT_BAD_INPUT;
  } else if (verify_it) {
    status = verify(m, o, c, net, k, emit, terms);
  } else if (emit && !wh_piper_emit_scenario(m, o, c, k, emit, NULL, &err)) {
    fprintf(stderr, "whsim plan: %s\n", err->message);
    /* a value out of range is bad input; a file that could not be written is not */
    status = err->domain == WH_PIPER_ERROR ? EXIT_BAD_INPUT : 1;
  } else if (emit) {
    printf("scenario: %s (PP%uxEP%u)\n", emit, k->pp, k->ep);
  }
  if (plot_dir && status == 0)
    status = plot(plot_dir, m, o, &p, k, verify_it ? terms : NULL);
  wh_piper_plan_clear(&p);
  return status;
}

/* Applies the --set assignments to `cfg`, collecting the machine's (those not of
 * wh::Piper, NULL-terminated) in `machine`; FALSE after reporting a bad one. */
static gboolean apply_sets(char **sets, WhConfig *cfg, GPtrArray *machine)
{
  g_autoptr(GError) err = NULL;
  for (char **a = sets; a && *a; a++) {
    gboolean piper = g_str_has_prefix(*a, "wh::Piper::");
    if (!piper && !g_str_has_prefix(*a, "wh::Dragonfly::") &&
        !g_str_has_prefix(*a, "wh::Workload::MessageAlpha=") &&
        !g_str_has_prefix(*a, "wh::Workload::RcclWindow=") &&
        !g_str_has_prefix(*a, "wh::Workload::RcclSchedule=") &&
        !g_str_has_prefix(*a, "wh::ModelPreset::AllToAll=")) {
      fprintf(stderr,
              "whsim plan: --set %s: only wh::Piper::*, wh::Dragonfly::*, "
              "wh::Workload::MessageAlpha, RcclWindow, RcclSchedule and "
              "wh::ModelPreset::AllToAll apply here\n",
              *a);
      return FALSE;
    }
    if (!wh_config_set_assignment(cfg, *a, "command line", &err)) {
      fprintf(stderr, "whsim plan: --set %s: %s\n", *a, err->message);
      return FALSE;
    }
    if (!piper)
      g_ptr_array_add(machine, *a);
  }
  g_ptr_array_add(machine, NULL);
  return TRUE;
}

/* Parses --gcds, --tokens and --micro-batches (the last two nullable) into `o`; FALSE
 * after reporting a bad one. */
static gboolean parse_counts(const char *gcds, const char *tokens, const char *mb,
                             WhPiperPlanOpts *o)
{
  if (!parse_count("--gcds", gcds, UINT32_MAX, &o->gcds))
    return FALSE;
  if (tokens) {
    uint32_t t;
    if (!parse_count("--tokens", tokens, 1u << 24, &t))
      return FALSE;
    o->tokens = t;
  }
  return mb == NULL || parse_count("--micro-batches", mb, 1u << 16, &o->micro_batches);
}

/* The options of `whsim plan`, as given (strings parsed later, NULL when absent). */
typedef struct {
  char *model, *gcds, *tokens, *mb, *emit, *mesh, *groups, *skew, *plot_dir;
  gboolean flash, recompute, calibration, verify;
  char **sets;
} PlanArgs;

static void plan_args_clear(PlanArgs *a)
{
  g_free(a->model);
  g_free(a->gcds);
  g_free(a->tokens);
  g_free(a->mb);
  g_free(a->emit);
  g_free(a->mesh);
  g_free(a->groups);
  g_free(a->skew);
  g_free(a->plot_dir);
  g_strfreev(a->sets);
}

G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(PlanArgs, plan_args_clear)

/* Parses the command line into `a`; FALSE after reporting a bad option or argument. */
static gboolean parse_args(int argc, char **argv, PlanArgs *a)
{
  GOptionEntry entries[] = {
      {"model", 0, 0, G_OPTION_ARG_STRING, &a->model, "a catalogue model or a model file",
       "NAME|FILE"},
      {"gcds", 0, 0, G_OPTION_ARG_STRING, &a->gcds,
       "GCDs (a multiple of " G_STRINGIFY(WH_DRAGONFLY_NODE_GCDS) ")", "N"},
      {"tokens", 0, 0, G_OPTION_ARG_STRING, &a->tokens,
       "tokens per GCD per micro-batch (default: the sequence length)", "T"},
      {"micro-batches", 0, 0, G_OPTION_ARG_STRING, &a->mb, "micro-batches per step (default 4 PP)",
       "M"},
      {"flash", 0, 0, G_OPTION_ARG_NONE, &a->flash, "FlashAttention (no s^2 activations)", NULL},
      {"recompute", 0, 0, G_OPTION_ARG_NONE, &a->recompute, "activation checkpointing", NULL},
      {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &a->sets,
       "a wh::Piper parameter (e.g. wh::Piper::UsableFraction=0.9), or a machine parameter "
       "of the Frontier preset: wh::Dragonfly::*, wh::Workload::MessageAlpha, RcclWindow, "
       "RcclSchedule or wh::ModelPreset::AllToAll (e.g. halo in an emitted scenario) "
       "(repeatable; whsim list)",
       "Type::Param=VALUE"},
      {"emit-scenario", 0, 0, G_OPTION_ARG_FILENAME, &a->emit,
       "write a Frontier scenario of the best candidate (or of --mesh)", "FILE"},
      {"mesh", 0, 0, G_OPTION_ARG_STRING, &a->mesh, "the candidate to emit", "PPxEP"},
      {"groups", 0, 0, G_OPTION_ARG_STRING, &a->groups,
       "Frontier groups of the emitted machine (default: enough for the job, at least 4 for "
       "256 nodes or more)",
       "G"},
      {"skew", 0, 0, G_OPTION_ARG_STRING, &a->skew,
       "routing skew: Zipf(S) expert loads, the step they make and migration's cost and gain",
       "zipf:S"},
      {"plot", 0, 0, G_OPTION_ARG_FILENAME, &a->plot_dir,
       "SVG pictures of the plan (memory per stage, TFLOPS per mesh; with --verify, plan "
       "against simulation) in this directory",
       "DIR"},
      {"verify", 0, 0, G_OPTION_ARG_NONE, &a->verify,
       "simulate the best candidate (or --mesh) with Wormhole and print plan and simulation "
       "side by side (the scenario goes to --emit-scenario when given)",
       NULL},
      {"calibration", 0, 0, G_OPTION_ARG_NONE, &a->calibration,
       "print the compute model's fit and held-out predictions", NULL},
      {NULL},
  };
  g_autoptr(GOptionContext) ctx = g_option_context_new("- plan PP x EP for an MoE model (Piper)");
  g_option_context_add_main_entries(ctx, entries, NULL);
  g_autoptr(GError) err = NULL;
  if (!g_option_context_parse(ctx, &argc, &argv, &err)) {
    fprintf(stderr, "whsim plan: %s\n", err->message);
    return FALSE;
  }
  if (argc != 1) {
    fprintf(stderr, "whsim plan: unexpected argument \"%s\"\n", argv[1]);
    return FALSE;
  }
  return TRUE;
}

/* Checks --groups (into `o`), --plot's directory and --emit-scenario's file before
 * anything is planned; FALSE after reporting a bad one. */
static gboolean check_outputs(const PlanArgs *a, WhPiperPlanOpts *o)
{
  g_autoptr(GError) err = NULL;
  uint32_t g_out;
  if (a->groups && (!parse_count("--groups", a->groups, UINT32_MAX, &o->groups) ||
                    !wh_piper_groups(o->gcds, o->groups, &g_out, &err))) {
    if (err)
      fprintf(stderr, "whsim plan: %s\n", err->message);
    return FALSE;
  }
  if (a->plot_dir && !wh_plan_plot_check_dir(a->plot_dir, &err)) {
    fprintf(stderr, "whsim plan: %s\n", err->message);
    return FALSE;
  }
  if (a->emit && !wh_file_check_output(a->emit, &err)) {
    fprintf(stderr, "whsim plan: --emit-scenario %s\n", err->message);
    return FALSE;
  }
  return TRUE;
}

int wh_piper_plan_main(int argc, char **argv)
{
  g_auto(PlanArgs) a = {0};
  if (!parse_args(argc, argv, &a))
    return EXIT_BAD_INPUT;
  g_autoptr(GError) err = NULL;
  const WhPiperCompute *c = wh_piper_compute_default();
  if (a.calibration) {
    g_autofree char *text = wh_piper_calibration_text(wh_piper_catalogue(), c);
    g_autofree char *mig = wh_piper_migration_table_text(wh_piper_catalogue());
    fputs(text, stdout);
    fputs(mig, stdout);
    if (!a.model)
      return 0;
  }
  if (!a.model || !a.gcds) {
    fprintf(stderr, "whsim plan: --model and --gcds are required\n");
    return EXIT_BAD_INPUT;
  }
  WhPiperPlanOpts o = {.flash = a.flash, .recompute = a.recompute, .skew = a.skew != NULL};
  if (a.skew && !wh_piper_skew_parse(a.skew, &o.skew_s, &err)) {
    fprintf(stderr, "whsim plan: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  WhPiperNet net;
  wh_piper_net_default(&net);
  g_autoptr(WhConfig) cfg = wh_config_new();
  if (!wh_topology_preset_apply(cfg, "frontier", &err)) {
    fprintf(stderr, "whsim plan: %s\n", err->message);
    return 1;
  }
  g_autoptr(GPtrArray) machine = g_ptr_array_new();
  if (!apply_sets(a.sets, cfg, machine))
    return EXIT_BAD_INPUT;
  o.machine_sets = (const char *const *)machine->pdata;
  wh_piper_settings(cfg, &o, &net);
  if (!parse_counts(a.gcds, a.tokens, a.mb, &o) || !check_outputs(&a, &o))
    return EXIT_BAD_INPUT;
  const WhPiperModel *m = NULL;
  WhPiperCatalogue *own = resolve_model(a.model, &m, &err);
  if (!m) {
    fprintf(stderr, "whsim plan: %s\n", err->message);
    return EXIT_BAD_INPUT;
  }
  int status = plan_and_emit(m, &o, c, &net, a.emit, a.mesh, a.verify, a.plot_dir);
  wh_piper_catalogue_free(own);
  return status;
}
