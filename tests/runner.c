/* The Check runner: every module's suite plus the integration suites. Set
 * WH_SOURCE_ROOT to the source tree (the Makefile does) so suites find scenarios/
 * and tests/bad-inputs/. CK_RUN_SUITE / CK_RUN_CASE select a subset. Without ns-3
 * the ns-3 suites are not compiled: then a sentinel suite fails, unless ns-3 was
 * disabled explicitly (-Dns3=disabled), in which case a SKIPPED line says so. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "scenario.h"

Suite *wh_core_suite(void);
Suite *wh_traffic_control_suite(void);
Suite *wh_network_suite(void);
Suite *wh_transport_suite(void);
Suite *wh_flow_state_suite(void);
Suite *wh_hpcc_suite(void);
Suite *wh_dctcp_suite(void);
Suite *wh_timely_suite(void);
Suite *wh_topology_suite(void);
Suite *wh_dragonfly_suite(void);
Suite *wh_dragonfly_traffic_suite(void);
Suite *wh_scenario_suite(void);
Suite *wh_compare_suite(void);
Suite *wh_hpcc_export_suite(void);
Suite *wh_workload_suite(void);
Suite *wh_all_to_allv_suite(void);
Suite *wh_presets_suite(void);
Suite *wh_routing_skew_suite(void);
Suite *wh_simai_suite(void);
Suite *wh_bad_inputs_suite(void);
Suite *wh_csv_suite(void);
Suite *wh_hardening_suite(void);
Suite *wh_hardening_plot_suite(void);
Suite *wh_hardening_memo_suite(void);
Suite *wh_hardening_io_suite(void);
Suite *wh_long_runs_suite(void);
Suite *wh_plot_suite(void);
Suite *wh_library_suite(void);
Suite *wh_sweep_suite(void);
Suite *wh_wormhole_suite(void);
Suite *wh_skip_suite(void);
Suite *wh_fluid_suite(void);
Suite *wh_fcg_suite(void);
Suite *wh_memo_db_suite(void);
Suite *wh_memo_file_suite(void);
Suite *wh_piper_suite(void);
#ifdef WH_HAVE_NS3
Suite *wh_ns3_suite(void);
Suite *wh_ns3_scheduler_suite(void);
Suite *wh_ns3_wormhole_suite(void);
#elif !defined(WH_NS3_DISABLED)
START_TEST(test_ns3_suites_built)
{
  ck_abort_msg(
      "the ns-3 suites (ns3, ns3-scheduler, ns3-wormhole) are not built: ns-3 was not found when "
      "the build was configured; install libns3-dev and reconfigure "
      "(-Dns3=enabled, as make build does), or configure with -Dns3=disabled "
      "to skip them explicitly");
}
END_TEST

static Suite *ns3_sentinel_suite(void)
{
  Suite *s = suite_create("ns3"); /* so that CK_RUN_SUITE=ns3 sees it too */
  TCase *tc = tcase_create("ns3-built");
  tcase_add_test(tc, test_ns3_suites_built);
  suite_add_tcase(s, tc);
  return s;
}
#endif

int main(void)
{
  wh_registry_init(); /* the runner assembles the modules, as whsim does */
  SRunner *sr = srunner_create(wh_core_suite());
  srunner_add_suite(sr, wh_traffic_control_suite());
  srunner_add_suite(sr, wh_network_suite());
  srunner_add_suite(sr, wh_transport_suite());
  srunner_add_suite(sr, wh_flow_state_suite());
  srunner_add_suite(sr, wh_hpcc_suite());
  srunner_add_suite(sr, wh_dctcp_suite());
  srunner_add_suite(sr, wh_timely_suite());
  srunner_add_suite(sr, wh_topology_suite());
  srunner_add_suite(sr, wh_dragonfly_suite());
  srunner_add_suite(sr, wh_dragonfly_traffic_suite());
  srunner_add_suite(sr, wh_scenario_suite());
  srunner_add_suite(sr, wh_compare_suite());
  srunner_add_suite(sr, wh_hpcc_export_suite());
  srunner_add_suite(sr, wh_workload_suite());
  srunner_add_suite(sr, wh_all_to_allv_suite());
  srunner_add_suite(sr, wh_presets_suite());
  srunner_add_suite(sr, wh_routing_skew_suite());
  srunner_add_suite(sr, wh_simai_suite());
  srunner_add_suite(sr, wh_bad_inputs_suite());
  srunner_add_suite(sr, wh_csv_suite());
  srunner_add_suite(sr, wh_hardening_suite());
  srunner_add_suite(sr, wh_hardening_plot_suite());
  srunner_add_suite(sr, wh_hardening_memo_suite());
  srunner_add_suite(sr, wh_hardening_io_suite());
  srunner_add_suite(sr, wh_long_runs_suite());
  srunner_add_suite(sr, wh_plot_suite());
  srunner_add_suite(sr, wh_library_suite());
  srunner_add_suite(sr, wh_sweep_suite());
  srunner_add_suite(sr, wh_wormhole_suite());
  srunner_add_suite(sr, wh_skip_suite());
  srunner_add_suite(sr, wh_fluid_suite());
  srunner_add_suite(sr, wh_fcg_suite());
  srunner_add_suite(sr, wh_memo_db_suite());
  srunner_add_suite(sr, wh_memo_file_suite());
  srunner_add_suite(sr, wh_piper_suite());
#ifdef WH_HAVE_NS3
  srunner_add_suite(sr, wh_ns3_suite());
  srunner_add_suite(sr, wh_ns3_scheduler_suite());
  srunner_add_suite(sr, wh_ns3_wormhole_suite());
#elif defined(WH_NS3_DISABLED)
  printf("SKIPPED: the ns-3 suites (ns3, ns3-scheduler, ns3-wormhole): configured with "
         "-Dns3=disabled\n");
  fflush(stdout);
#else
  srunner_add_suite(sr, ns3_sentinel_suite());
#endif
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
