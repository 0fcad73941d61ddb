/* What `whsim sweep` does with the cells of a specification (sweep-spec.h) in an output
 * folder DIR, whatever runs them (child processes here, GNU parallel, a Slurm job
 * array): each cell runs as one `whsim run` or `whsim compare` child process into a
 * staging directory DIR/cells/.stage-ID-HOST-PID/, records cell.json there (its status,
 * exit status and last error line, wall time, host), and the staging directory is then
 * renamed to DIR/cells/ID/ in one step. A cell whose directory exists is complete (ok
 * or failed, as its cell.json says); the same cell run twice at once leaves one
 * complete directory, the other run's is discarded, and a failed cell retried replaces
 * its directory by an atomic exchange (renameat2 RENAME_EXCHANGE). A driver holds an
 * exclusive lock (flock) on DIR/.sweep.lock while it runs, so a second driver on the
 * same folder is refused. The merge reads every cell's record and outputs into
 * DIR/sweep.csv and DIR/sweep.json (staged, then renamed together). Cost: one process
 * per cell (two renames, one small JSON file) and, at the merge, one read of each
 * cell's summary.json and flows.csv. */
#ifndef WH_SWEEP_H
#define WH_SWEEP_H

#include <glib.h>
#include <signal.h>

#include "sweep-spec.h"

typedef enum {
  WH_SWEEP_CELL_MISSING, /* no complete directory */
  WH_SWEEP_CELL_OK,      /* ran and exited 0 */
  WH_SWEEP_CELL_FAILED,  /* ran and failed: its exit status and last error line kept */
} WhSweepCellState;

/* The state of the cell in out_dir: DIR/cells/ID/cell.json (a regular file of at most
 * 1 MiB) names the cell and says ok or failed; anything else is missing. */
WhSweepCellState wh_sweep_cell_state(const WhSweep *sw, guint cell, const char *out_dir);

typedef struct {
  const char *whsim;     /* the whsim program that runs each cell (transfer none) */
  char **extra_args;     /* nullable, NULL-terminated: options for every cell (--plugin=...) */
  gboolean retry_failed; /* run a failed cell again */
  const volatile sig_atomic_t *interrupt; /* nullable: stops the cell's process */
} WhSweepCellRun;

/* Runs cell `cell` into out_dir unless it is complete (ok, or failed without
 * retry_failed): *ran says whether it ran, *state (nullable) its state after. FALSE
 * with WH_SWEEP_ERROR_INTERRUPTED (nothing left behind) or _RUN (the process could not
 * start, the record could not be written). */
gboolean wh_sweep_run_cell(const WhSweep *sw, guint cell, const char *out_dir,
                           const WhSweepCellRun *o, gboolean *ran, WhSweepCellState *state,
                           GError **error);

/* Creates out_dir and out_dir/cells and takes the folder's lock: the lock's file
 * descriptor (close it to release), or -1 with WH_SWEEP_ERROR_BUSY when another
 * sweep holds it, _RUN when the folder cannot be made. Removes the staging
 * directories of this host's cells whose process is gone. */
int wh_sweep_lock(const char *out_dir, GError **error);

/* Writes out_dir/NAME, one line per task holding the ids of up to `chunk` cells of
 * `cells` (n of them, indices into sw), separated by a space. */
gboolean wh_sweep_write_tasks(const WhSweep *sw, const guint *cells, guint n, guint chunk,
                              const char *out_dir, const char *name, GError **error);

/* The cells of task `task` (from 0) of out_dir/NAME (wh_sweep_write_tasks), appended
 * to `cells` (guint indices into sw); an id not of this specification is an error. */
gboolean wh_sweep_read_task(const WhSweep *sw, const char *out_dir, const char *name, guint task,
                            GArray *cells, GError **error);

/* The text of an sbatch script that runs `tasks` tasks of out_dir/sweep-tasks.txt as a
 * job array: `sbatch_args` (nullable) as #SBATCH lines, the tasks' logs in
 * out_dir/slurm/, each task `whsim sweep SPEC --out DIR --task $SLURM_ARRAY_TASK_ID`
 * with `extra_args`, every path shell-quoted. Refused (WH_SWEEP_ERROR_INPUT): an
 * sbatch argument holding a line break or not starting with '-', an out_dir holding
 * a character #SBATCH --output cannot take (blanks, quotes, '%', '\\'). (transfer full) */
char *wh_sweep_sbatch_script(const char *whsim, const char *spec, const char *out_dir, guint tasks,
                             char **sbatch_args, char **extra_args, GError **error);

typedef struct {
  guint ok, failed, missing;
} WhSweepCounts;

/* The columns of sweep.csv after the cell's coordinates and status. */
extern const char *const wh_sweep_result_columns[];

/* Writes out_dir/sweep.csv and out_dir/sweep.json from the cells' records and outputs,
 * in cell order; `counts` (nullable) receives how many cells are in each state. */
gboolean wh_sweep_merge(const WhSweep *sw, const char *out_dir, WhSweepCounts *counts,
                        GError **error);

#endif
