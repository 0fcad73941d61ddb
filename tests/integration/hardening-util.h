/* One hardening case: a temporary directory holding a scenario file and an output
 * directory, and the whsim binary run on it as a subprocess. Shared by the hardening
 * suites (hardening-suite.c and the hardening-*-suite.c files). */
#ifndef WH_HARDENING_UTIL_H
#define WH_HARDENING_UTIL_H

#include <glib.h>

typedef struct {
  char *dir;      /* temporary directory, removed by wh_case_free */
  char *scenario; /* dir/scenario.xml */
  char *out_dir;  /* dir/out */
  char *out, *err;
  int status;
} WhCase;

/* A new case in a new temporary directory; `xml` (nullable) is written as its
 * scenario. (transfer full) */
WhCase *wh_case_new(const char *xml);
void wh_case_free(WhCase *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhCase, wh_case_free)

/* Runs `whsim CMD SCENARIO ARGS...` (--out DIR is added for "run" unless ARGS has
 * one); NULL-terminated varargs. Returns the exit status; stdout and stderr are kept
 * in c->out and c->err. */
int wh_case_whsim(WhCase *c, const char *cmd, ...) G_GNUC_NULL_TERMINATED;

/* Asserts stderr contains `what`. */
void wh_case_assert_err_has(const WhCase *c, const char *what);

/* Asserts the run's summary.json contains `what`. */
void wh_case_assert_summary_has(const WhCase *c, const char *what);

/* A dumbbell with one flow; `sets` are extra <set> lines, `flow_attrs` the flow's
 * attributes. (transfer full) */
char *wh_case_dumbbell_xml(const char *sets, const char *flow_attrs);

#endif
