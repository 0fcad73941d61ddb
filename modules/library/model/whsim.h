/* The whsim library: the simulator as a C library for programs outside this source
 * tree (installed as <whsim/whsim.h>, linked with `pkg-config --cflags --libs whsim`).
 * A WhSimulation is one scenario file loaded and built, run once, and then read: its
 * summary and its flows, as `whsim run` reports and writes them. The types are opaque;
 * errors are GErrors (domain WH_SIMULATION_ERROR) whose messages name the file and, where
 * it applies, the line and field. Loading and building cost what `whsim run` spends
 * before simulating; the accessors are O(1). A simulation is not thread-safe; separate
 * simulations may run in separate threads only when no plugin is loaded meanwhile. */
#ifndef WH_WHSIM_H
#define WH_WHSIM_H

#include <glib.h>
#include <stdint.h>
#include "whsim-version.h"

G_BEGIN_DECLS

#define WH_SIMULATION_ERROR (wh_simulation_error_quark())
GQuark wh_simulation_error_quark(void);

typedef enum {
  WH_SIMULATION_ERROR_INPUT,   /* the scenario or an override is bad (whsim exits 2) */
  WH_SIMULATION_ERROR_STATE,   /* a call in the wrong order (run twice, read before run) */
  WH_SIMULATION_ERROR_OUTPUT,  /* an output file could not be written */
  WH_SIMULATION_ERROR_STOPPED, /* the run ended early or inconsistent (whsim exits 1) */
} WhSimulationError;

/* The library's version at run time, e.g. "0.1.0" (WH_VERSION_STRING at build time).
 * (transfer none) */
const char *wh_simulation_version(void);

typedef struct WhSimulation WhSimulation;

/* Loads the scenario file `path` and builds it. `sets` (nullable, NULL-terminated)
 * overrides parameters as `whsim run --set` does ("wh::DcqcnCc::Kmin=400KB"). Bad
 * input gives NULL and WH_SIMULATION_ERROR_INPUT. (transfer full) */
WhSimulation *wh_simulation_new_from_file(const char *path, const char *const *sets,
                                          GError **error);
void wh_simulation_free(WhSimulation *sim);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhSimulation, wh_simulation_free)

/* Sets the random seed (before wh_simulation_run; default: the scenario's). */
void wh_simulation_set_seed(WhSimulation *sim, uint64_t seed);

/* Runs the simulation to its end (no status line, no signal handling). FALSE with
 * WH_SIMULATION_ERROR_STOPPED when it ended early or in an inconsistent state (the
 * results stay readable: they describe how far it got), or with
 * WH_SIMULATION_ERROR_STATE when it already ran. */
gboolean wh_simulation_run(WhSimulation *sim, GError **error);

/* Writes the outputs `whsim run --out DIR` writes (summary.json, flows.csv, ...). */
gboolean wh_simulation_write(const WhSimulation *sim, const char *dir, GError **error);

/* The summary as `whsim run` writes it to summary.json, without its wall-clock field.
 * (transfer full) */
char *wh_simulation_summary_json(const WhSimulation *sim);

/* After wh_simulation_run: the simulated time at the end (ps), events executed, flows
 * and completed flows, and why the run stopped early (NULL: it did not; else e.g.
 * "deadlock", "stop time"; transfer none). */
uint64_t wh_simulation_end_time_ps(const WhSimulation *sim);
uint64_t wh_simulation_events(const WhSimulation *sim);
uint32_t wh_simulation_n_flows(const WhSimulation *sim);
uint32_t wh_simulation_flows_completed(const WhSimulation *sim);
const char *wh_simulation_stop_reason(const WhSimulation *sim);

/* One flow as flows.csv lists it. */
typedef struct {
  uint32_t index;    /* 0 .. wh_simulation_n_flows() - 1 */
  uint32_t src, dst; /* host indices */
  uint64_t bytes;
  uint64_t start_ps;
  uint64_t finish_ps; /* 0: did not complete */
  uint64_t fct_ps;    /* finish - start; 0: did not complete */
  char key[32];       /* flows.csv's key: a workload flow's "op<N>.<M>", else its id */
} WhSimulationFlow;

/* Fills `out` with flow `index`; FALSE when there is no such flow. */
gboolean wh_simulation_flow(const WhSimulation *sim, uint32_t index, WhSimulationFlow *out);

/* With a workload: its iterations, and the time of iteration `i` in ps (from the end of
 * the previous one; 0 when the run stopped early or `i` is out of range). */
uint32_t wh_simulation_n_iterations(const WhSimulation *sim);
uint64_t wh_simulation_iteration_time_ps(const WhSimulation *sim, uint32_t i);

G_END_DECLS

#endif
