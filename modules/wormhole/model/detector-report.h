/* The steady-state detector's report (detector-report.c): what the detector measured,
 * as json-glib objects for wormhole.json (and the ns-3 monitor's wormhole-ns3.json).
 * The detector itself knows no output format. */
#ifndef WH_DETECTOR_REPORT_H
#define WH_DETECTOR_REPORT_H

#include <json-glib/json-glib.h>
#include "steady-detector.h"

/* {"evaluations": n, "p10": .., "median": .., "p90": .., "steady_fraction": {..}}
 * (transfer full) */
JsonObject *wh_dr_stats_json(const WhDrStats *s);

/* The report: its members added to `o` (transfer none) after those `o` has, and `o` as
 * the text of a JSON file, pretty-printed by json-glib (transfer full). With
 * `per_flow`, the per-flow records too, as the table "flows"; a caller that writes them
 * elsewhere (Wormhole's wormhole-flows.csv) leaves them out. */
char *wh_detector_json_object(const WhDetector *d, JsonObject *o, gboolean per_flow);

/* The report as the text of a JSON file (transfer full), for a caller that writes its
 * own members (the ns-3 monitor): `header` (nullable) is put first as it is (lines of
 * "  \"key\": value,\n", valid JSON members each followed by a comma). */
char *wh_detector_json(const WhDetector *d, const char *header);

#endif
