/* Helpers shared by the test suites: locating the source tree, running the whsim
 * binary as a subprocess and capturing its exit status and output, and building
 * and running scenarios in-process. */
#ifndef WH_TEST_UTIL_H
#define WH_TEST_UTIL_H

#include <glib.h>
#include "report.h"
#include "run-files.h"
#include "run-private.h"

/* The source root (WH_SOURCE_ROOT, else the current directory's parent). (transfer full) */
char *wh_test_source_path(const char *relative);

/* The bytes the process holds from malloc (in use plus mapped chunks), or 0 where the
 * allocator does not tell (a sanitizer's). */
uint64_t wh_test_heap_bytes(void);

/* Runs whsim with argv (NULL-terminated, without the program name); returns the exit
 * status and stores stdout/stderr (transfer full, nullable out-params). */
int wh_test_whsim(const char *const *args, char **out, char **err);

/* The same, with `setup` (nullable) run in the child before whsim starts (resource
 * limits, say); returns the wait status, not only an exit status, so that a run killed
 * by a signal shows as such. */
int wh_test_whsim_setup(const char *const *args, GSpawnChildSetupFunc setup, gpointer data,
                        char **out, char **err);

/* The text of file `name` in directory `dir`; asserts it exists. (transfer full) */
char *wh_test_read_in(const char *dir, const char *name);

/* The records of a CSV text as whsim writes it (csv.h's reader), after its first line,
 * which must be `header` when it is not NULL: a GStrv of fields per record; asserts the
 * text parses. (transfer full) */
GPtrArray *wh_test_csv_rows(const char *text, const char *header);

/* Deletes `path` and, if it is a directory (not a symbolic link), everything below it. */
void wh_test_remove_tree(const char *path);

/* A forked child that computes a result of fixed size (for libraries that allow one
 * simulation per process, such as ns-3): wh_test_fork runs fn(arg, out) in the child
 * and sends the `size` bytes of `out` back through a pipe; wh_test_join reads them
 * into `out` and asserts the child exited with status 0 after sending them all
 * (`name` names it in messages). */
typedef struct {
  int pid;
  int fd;
  size_t size;
} WhTestChild;
WhTestChild wh_test_fork(void (*fn)(const void *arg, void *out), const void *arg, size_t size);
void wh_test_join(WhTestChild c, const char *name, void *out);

/* The value at the JSONPath `path` ("$.fct_error.mean") in the JSON text `json`, as
 * json-glib's compact generator writes it ("0.0", "\"off\"", "[1,2]"), or NULL when
 * nothing is there; asserts `json` parses. (transfer full) */
char *wh_test_json_at(const char *json, const char *path);

/* `json` without its "wall_s" line: the fields that must repeat bit for bit.
 * (transfer full) */
char *wh_test_strip_wall(const char *json);

/* Loads a scenario from the source tree and runs it with `opts` (nullable);
 * asserts it builds. (transfer full) */
WhRun *wh_test_run_file(const char *relative, const WhRunOptions *opts);

/* Every scenario file directly under scenarios/ and tests/scenarios/, sorted, as
 * paths relative to the source root. (transfer full) */
GPtrArray *wh_test_scenario_files(void);

/* Runs an in-memory scenario to completion; asserts it builds. (transfer full) */
WhRun *wh_test_run(WhScenario *sc, const WhRunOptions *opts);

/* A run's summary (without the fields that name the scheduler or report Wormhole) and
 * every flow's start and finish, for comparing runs that must be the same simulation.
 * (transfer full) */
char *wh_test_fingerprint(const WhRun *run);

/* Asserts the end state of a finished run is clean (wh_run_check). */
void wh_test_assert_clean_end(const WhRun *run);

/* N flows on a dumbbell (one 100 Gb/s bottleneck), started `gap` apart, all running
 * for `window` after the last start; rates and the bottleneck queue are measured over
 * the second half of the window by stepping the run (no events added). The run is
 * then finished and its end state checked. `sets` (nullable) overrides parameters. */
typedef struct {
  double jain;
  double min_share, max_share;          /* of the bottleneck capacity */
  uint64_t qmax_late;                   /* bottleneck queue peak over the measured window */
  uint64_t q50, q99;                    /* median and 99th percentile of the sampled queue */
  double util;                          /* bottleneck utilization over the measured window */
  uint64_t ecn_marks, cnps, pfc_pauses; /* whole run */
} WhFairResult;

WhFairResult wh_test_shared_bottleneck(const char *cc, unsigned n, WhTime gap, WhTime window,
                                       char **sets);

/* Asserts a fair share of the bottleneck among `n` flows: Jain's index above 0.99 and
 * every flow's share within 5% of 1/n. */
void wh_test_assert_fair(WhFairResult r, unsigned n);

#endif
