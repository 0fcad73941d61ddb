/* A run: one scenario built into a simulator, network and transport, executed, and
 * reported. Precedence of settings: command line (options) over scenario file over
 * registered defaults. Outputs are written to temporary files and renamed into
 * place, so an interrupted or failed run never leaves a half-written result. */
#ifndef WH_RUN_H
#define WH_RUN_H

#include <glib.h>
#include <signal.h>
#include "scenario.h"
#include "workload.h"

/* One reading of a run's progress, for a status line. */
typedef struct {
  const char *label; /* the options' progress_label (nullable) */
  double wall_s;     /* since the run started */
  WhTime now;        /* simulated time */
  uint64_t events;   /* executed in this run */
  uint64_t done;     /* ops (with a workload) or flows completed */
  uint64_t total;    /* of `done`'s kind; 0: not shown */
  const char *unit;  /* "ops" or "flows" */
  double fraction;   /* of the work done, 0..1; < 0 or 0: no estimate of the time left */
} WhRunProgress;

typedef enum {
  WH_RUN_PROGRESS_START,  /* the run starts: only `label` is set */
  WH_RUN_PROGRESS_UPDATE, /* from the simulator's cold path, every 2^20 events */
  WH_RUN_PROGRESS_END,    /* the run's loop ended */
} WhRunProgressEvent;

/* Told of a run's progress (the options' progress); it adds no event and must not
 * change the run. */
typedef void (*WhRunProgressFn)(WhRunProgressEvent ev, const WhRunProgress *p, void *data);

typedef struct {
  gboolean has_seed;
  uint64_t seed;
  const char *scheduler;      /* nullable */
  const char *cc;             /* nullable */
  char **sets;                /* nullable, NULL-terminated "Type::Param=value" */
  WhTime sample_period;       /* > 0: attach a rate sampler (overrides the scenario's) */
  uint32_t iterations;        /* > 0: workload iterations (overrides the scenario's) */
  double wall_limit_s;        /* > 0: stop the simulation after this much wall time */
  const char *data_dir;       /* nullable: files a scenario references may also lie below it */
  uint64_t max_memory;        /* > 0: the memory budget in bytes (else wh_run_default_memory()) */
  WhRunProgressFn progress;   /* nullable: told of the run's progress (a status line) */
  void *progress_data;        /* given to `progress` */
  const char *progress_label; /* nullable: passed to `progress` (e.g. "exact") */
  const volatile sig_atomic_t *interrupt; /* nullable: stops the run when set (interrupt.h) */
  const char *memo_file; /* nullable: Wormhole's memo database persists in this file */
} WhRunOptions;

/* The default memory budget: three quarters of the physical memory. */
uint64_t wh_run_default_memory(void);

/* A run; its layout is in run-private.h, for the scenario module's own code. */
typedef struct WhRun WhRun;

/* Builds everything; errors name the scenario file and line where they apply. With a
 * memo file (options' memo_file) the run needs contention patterns (Mode=memo, or
 * Patterns=true with observe or skip) and a path whose directory exists and is
 * writable (unless the file is read-only), else it is refused, as is an existing file
 * that is not a memo file; an existing file is loaded into Wormhole's memo database
 * (as much of it as MemoMaxBytes and the memory budget allow), and one that cannot be
 * loaded is ignored (memo_status, memo_warning). */
WhRun *wh_run_new(WhScenario *sc, const WhRunOptions *opts, GError **error);
void wh_run_free(WhRun *run);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhRun, wh_run_free)

/* Hands the scenario to the run, which frees it with itself. */
void wh_run_take_scenario(WhRun *run, WhScenario *sc);

/* Stops the run's simulation when `*flag` is set (nullable: never), as the options'
 * interrupt does; for a flag installed after the run was built. */
void wh_run_set_interrupt(WhRun *run, const volatile sig_atomic_t *flag);

void wh_run_execute(WhRun *run);

/* What a run built and how far it went: the numbers summary.json and the printed report
 * share. */
typedef struct {
  uint32_t hosts, switches, ports; /* ports: directed ports */
  uint32_t flows, flows_completed;
  uint32_t iterations; /* workload iterations; 0 without a workload */
  WhTime sim_end;      /* the simulated time reached */
  uint64_t events;     /* events executed */
  uint64_t link_traversals;
  uint64_t ecn_marks, cnps, pfc_pauses, drops;
} WhRunTotals;
void wh_run_totals(const WhRun *run, WhRunTotals *out);

/* One flow of the run (flows.csv's numbers): host indices, size, start and finish
 * (0: not completed). */
typedef struct {
  uint32_t src, dst;
  uint64_t bytes;
  WhTime start, finish;
} WhRunFlow;
/* FALSE when `flow` is not a flow of the run. */
gboolean wh_run_flow(const WhRun *run, uint32_t flow, WhRunFlow *out);

/* How a run ended, as a command line reports it (wh_run_status). */
typedef struct {
  gboolean stopped_early; /* wh_run_stopped_early */
  gboolean interrupted;   /* stopped by the interrupt flag */
  gboolean failed;        /* deadlock, retry limit, time horizon or sample memory */
  char *message;          /* with failed: one sentence on what happened and where the run stopped
                             (transfer full) */
} WhRunStatus;
/* Fills `out` after wh_run_execute; free its message with wh_run_status_clear. */
void wh_run_status(const WhRun *run, WhRunStatus *out);
void wh_run_status_clear(WhRunStatus *status);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(WhRunStatus, wh_run_status_clear)

/* Why the memo file was not used as it is (ignored: "FILE: why: ignored", loaded in
 * part, or read-only), NULL when it was or there is none. (transfer none) */
const char *wh_run_memo_warning(const WhRun *run);

/* Writes Wormhole's memo database to the run's memo file, merged with what the file
 * holds then and capped at wh::Wormhole::MemoMaxBytes (wh_memo_db_save_bounded), unless the file is
 * read-only or not a memo file at all (it is left as it is); TRUE with no memo file. */
gboolean wh_run_memo_save(const WhRun *run, GError **error);

/* A flow's name in outputs: its scenario id, else its index (written to `buf`).
 * (transfer none) */
const char *wh_run_flow_label(const WhRun *run, uint32_t flow, char buf[16]);

/* A flow's key, the same in every run of the scenario whatever the order in which
 * flows start: a workload flow's op and transfer index inside it ("op12.3", see
 * wh_workload_flow_origin), else the flow's label. The last column of flows.csv, and
 * what `whsim compare` matches flows by. (transfer none) */
#define WH_RUN_KEY_LEN 32
const char *wh_run_flow_key(const WhRun *run, uint32_t flow, char buf[WH_RUN_KEY_LEN]);

/* TRUE when the run ended before its natural end (scenario stop time, wall limit,
 * interrupt, or a failure). */
gboolean wh_run_stopped_early(const WhRun *run);
/* Why it stopped early: "deadlock", "retry limit", "time horizon", "sample memory",
 * "interrupted", "wall-clock limit" or "stop time". */
const char *wh_run_stop_reason(const WhRun *run);
/* TRUE when the rate sampler's samples reached the memory budget and stopped the run. */
gboolean wh_run_sampler_full(const WhRun *run);
uint32_t wh_run_ops_done(const WhRun *run);

/* Checks the end state: every flow complete, bytes sent = delivered + dropped +
 * reclaimed (data_bytes_reclaimed), no
 * packet left in the pool, no event left pending. */
gboolean wh_run_check(const WhRun *run, GError **error);

/* Per workload iteration: its time (from the previous iteration's end), the largest
 * compute time of any rank in it, and the rest (exposed communication). */
typedef struct {
  WhTime time, compute, exposed_comm;
} WhIterationStats;
void wh_run_iteration_stats(const WhRun *run, uint32_t iteration, WhIterationStats *out);

/* A 64-bit digest of the parameters in force (set or default) of the kinds that shape
 * what is simulated: network, transport, queue-disc, congestion-control, topology and
 * workload (wh_config_digest; not the scheduler's or Wormhole's, which change how fast,
 * not what). The summary writes it as "config_digest", 16 hex digits, so that a stored
 * run can be matched to the configuration of another. */
uint64_t wh_run_config_digest(const WhRun *run);
/* The run's workload (its ops' times after wh_run_execute), NULL without one. */
const WhWorkload *wh_run_workload(const WhRun *run);
/* The digest the run's configuration would have with one more `assignment`
 * ("Type::Param=value", as --set takes it); FALSE if it does not parse. */
gboolean wh_run_config_digest_with(const WhRun *run, const char *assignment, uint64_t *digest,
                                   GError **error);

#endif
