/* Helpers shared by the test suites: locating the source tree, running the whsim
 * binary as a subprocess and capturing its exit status and output, and building
 * and running scenarios in-process. */
#ifndef WH_TEST_UTIL_H
#define WH_TEST_UTIL_H

#include <glib.h>
#include "run.h"

/* The source root (WH_SOURCE_ROOT, else the current directory's parent). (transfer full) */
char *wh_test_source_path(const char *relative);

/* Runs whsim with argv (NULL-terminated, without the program name); returns the exit
 * status and stores stdout/stderr (transfer full, nullable out-params). */
int wh_test_whsim(const char *const *args, char **out, char **err);

/* Loads a scenario from the source tree and runs it with `opts` (nullable);
 * asserts it builds. (transfer full) */
WhRun *wh_test_run_file(const char *relative, const WhRunOptions *opts);

/* Runs an in-memory scenario to completion; asserts it builds. (transfer full) */
WhRun *wh_test_run(WhScenario *sc, const WhRunOptions *opts);

#endif
