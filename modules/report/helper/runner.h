/* Child processes run side by side: a list of command lines (argv vectors, run without a
 * shell), at most `parallel` alive at a time, each one's exit status and the tail of its
 * standard error collected; their standard output is discarded. An interrupt flag stops
 * the lot: the running children get SIGTERM and are waited for, the rest never start.
 * Used by `whsim compare --ensemble` for its ensemble members, and meant for any command
 * that runs many whsim processes. Cost: one fork and exec per command; the parent polls
 * the children's pipes, wakes at least every 50 ms, and keeps WH_RUNNER_LOG_TAIL bytes of
 * each child's standard error. */
#ifndef WH_RUNNER_H
#define WH_RUNNER_H

#include <glib.h>
#include <signal.h>

#define WH_RUNNER_ERROR (wh_runner_error_quark())
GQuark wh_runner_error_quark(void);

typedef enum {
  WH_RUNNER_ERROR_SPAWN,       /* a command could not be started */
  WH_RUNNER_ERROR_INTERRUPTED, /* the interrupt flag was set */
} WhRunnerError;

/* The bytes kept of the end of a child's standard error. */
#define WH_RUNNER_LOG_TAIL 4096

typedef struct {
  char **argv; /* the command: argv[0] is the program (a path, or a name looked up on
                  the PATH); (transfer none) */
  /* filled by wh_runner_run */
  gboolean done;   /* it ran and was waited for */
  int exit_status; /* its exit status, or -1 when a signal ended it */
  int term_signal; /* the signal that ended it, else 0 */
  char *log;       /* the tail of its standard error (owned; free with wh_runner_job_clear) */
} WhRunnerJob;

void wh_runner_job_clear(WhRunnerJob *job);

/* Runs the n commands of `jobs`, at most `parallel` (>= 1) at a time, in order of start,
 * and waits for all. `interrupt` (nullable) is polled: once set, the running children
 * are sent SIGTERM and waited for, no other starts, and the result is
 * WH_RUNNER_ERROR_INTERRUPTED. A command that cannot be started stops the others the
 * same way (WH_RUNNER_ERROR_SPAWN, naming the program). TRUE when every command ran,
 * whatever its status: see each job's fields. `peak` (nullable) receives the largest
 * number of children alive at once. */
gboolean wh_runner_run(WhRunnerJob *jobs, guint n, guint parallel,
                       const volatile sig_atomic_t *interrupt, guint *peak, GError **error);

/* "exit status N" or "killed by signal N" for a job that is done. (transfer full) */
char *wh_runner_job_status_text(const WhRunnerJob *job);

#endif
