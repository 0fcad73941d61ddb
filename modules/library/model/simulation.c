/* The whsim library's API over a run (run.h); see whsim.h. */
#include "whsim.h"

#include <string.h>

#include "outputs.h"
#include "report.h"
#include "run-files.h"
#include "run.h"
#include "scenario.h"

G_DEFINE_QUARK(wh - simulation - error - quark, wh_simulation_error)

struct WhSimulation {
  WhScenario *sc;
  char **sets;
  WhRunOptions opts;
  WhRun *run; /* built by wh_simulation_new_from_file, rebuilt when the seed changes */
  gboolean ran;
};

const char *wh_simulation_version(void)
{
  return WH_VERSION_STRING;
}

/* Registers the built-in types once per process. */
static void library_init(void)
{
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    wh_registry_init();
    g_once_init_leave(&done, 1);
  }
}

/* Rebuilds the run from the scenario and the options. */
static gboolean build(WhSimulation *sim, GError **error)
{
  g_autoptr(GError) err = NULL;
  WhRun *run = wh_run_new(sim->sc, &sim->opts, &err);
  if (run == NULL) {
    g_set_error(error, WH_SIMULATION_ERROR, WH_SIMULATION_ERROR_INPUT, "%s", err->message);
    return FALSE;
  }
  wh_run_free(sim->run);
  sim->run = run;
  return TRUE;
}

WhSimulation *wh_simulation_new_from_file(const char *path, const char *const *sets, GError **error)
{
  g_return_val_if_fail(path != NULL, NULL);
  library_init();
  g_autoptr(GError) err = NULL;
  WhScenario *sc = wh_scenario_load(path, &err);
  if (sc == NULL) {
    g_set_error(error, WH_SIMULATION_ERROR, WH_SIMULATION_ERROR_INPUT, "%s", err->message);
    return NULL;
  }
  WhSimulation *sim = g_new0(WhSimulation, 1);
  sim->sc = sc;
  sim->sets = g_strdupv((char **)sets);
  sim->opts = (WhRunOptions){.sets = sim->sets};
  if (!build(sim, error)) {
    wh_simulation_free(sim);
    return NULL;
  }
  return sim;
}

void wh_simulation_free(WhSimulation *sim)
{
  if (sim == NULL)
    return;
  wh_run_free(sim->run);
  wh_scenario_free(sim->sc);
  g_strfreev(sim->sets);
  g_free(sim);
}

void wh_simulation_set_seed(WhSimulation *sim, uint64_t seed)
{
  g_return_if_fail(sim != NULL && !sim->ran);
  sim->opts.has_seed = TRUE;
  sim->opts.seed = seed;
  if (!build(sim, NULL))
    g_warning("%s: the scenario does not build with seed %" G_GUINT64_FORMAT, sim->sc->path, seed);
}

gboolean wh_simulation_run(WhSimulation *sim, GError **error)
{
  g_return_val_if_fail(sim != NULL, FALSE);
  if (sim->ran || sim->run == NULL) {
    g_set_error(error, WH_SIMULATION_ERROR, WH_SIMULATION_ERROR_STATE,
                "%s: the simulation already ran", sim->sc->path);
    return FALSE;
  }
  sim->ran = TRUE;
  wh_run_execute(sim->run);
  g_autoptr(GError) err = NULL;
  if (wh_run_stopped_early(sim->run)) {
    const char *why = wh_run_stop_reason(sim->run);
    if (strcmp(why, "stop time") == 0)
      return TRUE; /* asked for by the scenario */
    g_set_error(error, WH_SIMULATION_ERROR, WH_SIMULATION_ERROR_STOPPED,
                "%s: the run stopped early (%s)", sim->sc->path, why);
    return FALSE;
  }
  if (!wh_run_check(sim->run, &err)) {
    g_set_error(error, WH_SIMULATION_ERROR, WH_SIMULATION_ERROR_STOPPED,
                "%s: inconsistent end state: %s", sim->sc->path, err->message);
    return FALSE;
  }
  return TRUE;
}

/* FALSE (with an error) before wh_simulation_run. */
static gboolean check_ran(const WhSimulation *sim, GError **error)
{
  if (sim->ran)
    return TRUE;
  g_set_error(error, WH_SIMULATION_ERROR, WH_SIMULATION_ERROR_STATE,
              "%s: the simulation has not run yet", sim->sc->path);
  return FALSE;
}

gboolean wh_simulation_write(const WhSimulation *sim, const char *dir, GError **error)
{
  g_return_val_if_fail(sim != NULL && dir != NULL, FALSE);
  if (!check_ran(sim, error))
    return FALSE;
  g_autoptr(GError) err = NULL;
  if (!wh_output_dir_prepare(dir, &err) || !wh_run_write(sim->run, dir, &err)) {
    g_set_error(error, WH_SIMULATION_ERROR, WH_SIMULATION_ERROR_OUTPUT, "%s", err->message);
    return FALSE;
  }
  return TRUE;
}

char *wh_simulation_summary_json(const WhSimulation *sim)
{
  g_return_val_if_fail(sim != NULL, NULL);
  return wh_run_summary_json(sim->run, FALSE);
}

uint64_t wh_simulation_end_time_ps(const WhSimulation *sim)
{
  WhRunTotals t;
  wh_run_totals(sim->run, &t);
  return t.sim_end;
}

uint64_t wh_simulation_events(const WhSimulation *sim)
{
  WhRunTotals t;
  wh_run_totals(sim->run, &t);
  return t.events;
}

uint32_t wh_simulation_n_flows(const WhSimulation *sim)
{
  WhRunTotals t;
  wh_run_totals(sim->run, &t);
  return t.flows;
}

uint32_t wh_simulation_flows_completed(const WhSimulation *sim)
{
  WhRunTotals t;
  wh_run_totals(sim->run, &t);
  return t.flows_completed;
}

const char *wh_simulation_stop_reason(const WhSimulation *sim)
{
  return sim->ran && wh_run_stopped_early(sim->run) ? wh_run_stop_reason(sim->run) : NULL;
}

gboolean wh_simulation_flow(const WhSimulation *sim, uint32_t index, WhSimulationFlow *out)
{
  g_return_val_if_fail(sim != NULL && out != NULL, FALSE);
  WhRunFlow f;
  if (!wh_run_flow(sim->run, index, &f))
    return FALSE;
  *out = (WhSimulationFlow){.index = index,
                            .src = f.src,
                            .dst = f.dst,
                            .bytes = f.bytes,
                            .start_ps = f.start,
                            .finish_ps = f.finish,
                            .fct_ps = f.finish ? f.finish - f.start : 0};
  char key[WH_RUN_KEY_LEN];
  g_strlcpy(out->key, wh_run_flow_key(sim->run, index, key), sizeof out->key);
  return TRUE;
}

uint32_t wh_simulation_n_iterations(const WhSimulation *sim)
{
  WhRunTotals t;
  wh_run_totals(sim->run, &t);
  return t.iterations;
}

uint64_t wh_simulation_iteration_time_ps(const WhSimulation *sim, uint32_t i)
{
  if (!sim->ran || i >= wh_simulation_n_iterations(sim) || wh_run_stopped_early(sim->run))
    return 0;
  WhIterationStats st;
  wh_run_iteration_stats(sim->run, i, &st);
  return st.time;
}
