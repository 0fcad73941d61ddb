/* An example program of the whsim library, built outside the source tree against the
 * installed library:
 *
 *   cc run-scenario.c -o run-scenario $(pkg-config --cflags --libs whsim)
 *   ./run-scenario scenarios/quickstart.xml [Type::Param=VALUE...]
 *
 * It loads a scenario file, applies the overrides, runs it, and prints a summary line,
 * the time of each workload iteration, then every flow's key and flow completion time
 * (the key and fct_ps columns of the flows.csv `whsim run` writes; empty: not
 * completed). Exit status: 0 success, 1 the run ended early or inconsistent, 2 bad
 * input. */
#include <stdio.h>
#include <whsim/whsim.h>

int main(int argc, char **argv)
{
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE.xml [Type::Param=VALUE...]\n", argv[0]);
    return 2;
  }
  g_autoptr(GError) error = NULL;
  g_autoptr(WhSimulation) sim =
      wh_simulation_new_from_file(argv[1], (const char *const *)argv + 2, &error);
  if (sim == NULL) {
    fprintf(stderr, "run-scenario: %s\n", error->message);
    return 2;
  }
  int status = 0;
  if (!wh_simulation_run(sim, &error)) {
    fprintf(stderr, "run-scenario: %s\n", error->message);
    status = 1;
  }
  printf("whsim %s: %u flows, %u completed, %.3f us simulated, %" G_GUINT64_FORMAT " events\n",
         wh_simulation_version(), wh_simulation_n_flows(sim), wh_simulation_flows_completed(sim),
         (double)wh_simulation_end_time_ps(sim) * 1e-6, (guint64)wh_simulation_events(sim));
  for (uint32_t i = 0; i < wh_simulation_n_iterations(sim); i++)
    printf("iteration %u: %.3f us\n", i, (double)wh_simulation_iteration_time_ps(sim, i) * 1e-6);
  printf("key,fct_ps\n");
  WhSimulationFlow f;
  for (uint32_t i = 0; wh_simulation_flow(sim, i, &f); i++) {
    if (f.finish_ps)
      printf("%s,%" G_GUINT64_FORMAT "\n", f.key, (guint64)f.fct_ps);
    else
      printf("%s,\n", f.key);
  }
  return status;
}
