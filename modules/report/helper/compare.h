/* `whsim compare`: one scenario run twice in one process, first on the exact engine
 * (wh::Wormhole::Mode=off, the stock scheduler), then under Wormhole (--scheduler
 * wormhole: Mode=skip unless the settings choose another mode), and the second measured
 * against the first. Flows are matched by their key (wh_run_flow_key), ops by their id.
 * Each run writes its own outputs into DIR/exact/ and DIR/wormhole/; the comparison goes
 * to DIR/compare.json, DIR/compare-flows.csv, DIR/compare-ops.csv (with a workload) and,
 * when gnuplot is on the PATH, two SVG plots of the FCT errors. Cost: the two runs, one
 * after the other (only one is alive while it executes), plus O(flows log flows) for
 * the matching and the percentiles.
 * The exact side may instead be read from the outputs an earlier exact run wrote (a
 * stored reference: its summary.json, flows.csv and, with a workload, ops.csv), so that
 * a large scenario's exact run, which may take hours, is made once and every Wormhole
 * setting is compared against it. The stored run must be of the same configuration:
 * scenario name, seed, congestion control, summary "config_digest" (the parameters in
 * force, --set included), network size, workload size and iterations, and its flows
 * and ops as this scenario builds them; it must be an exact run that finished (or
 * stopped at the scenario's stop time). It is only read. Cost: one pass over each file,
 * a record at a time (csv.h, RFC 4180). */
#ifndef WH_COMPARE_H
#define WH_COMPARE_H

#include <stdio.h>
#include "run.h"

/* A flow as the comparison sees it. */
typedef struct {
  char key[WH_RUN_KEY_LEN];
  uint32_t id; /* the flow id in its own run */
  uint32_t src, dst;
  uint64_t bytes;
  WhTime start, finish; /* finish 0: the flow did not complete */
} WhCompareFlow;

/* Relative FCT errors, (FCT_wormhole - FCT_exact) / FCT_exact, over the flows that both
 * runs completed. */
typedef struct {
  uint32_t matched;       /* keys in both runs, completed in both */
  uint32_t unfinished;    /* keys in both runs, not completed in at least one */
  uint32_t only_exact;    /* keys only the exact run has */
  uint32_t only_wormhole; /* keys only the Wormhole run has */
  double mean, p99, max;  /* of the absolute error (p99: nearest rank) */
  double signed_mean;
} WhCompareFctError;

/* Matches the flows of two runs by key. match[i] (n_exact entries) receives the index in
 * `wormhole` of exact flow i, or -1. FALSE when a key appears twice in one run (the error
 * names it and the run). */
gboolean wh_compare_match_flows(const WhCompareFlow *exact, uint32_t n_exact,
                                const WhCompareFlow *wormhole, uint32_t n_wormhole, int64_t *match,
                                WhCompareFctError *out, GError **error);

typedef struct WhCompare WhCompare;

/* Derives both runs' options from `opts` (nullable), builds the exact run and checks
 * that the Wormhole run builds too, refuses a scenario with neither flows nor a
 * workload, and prepares `out_dir` with its subdirectories exact/ and wormhole/. With
 * `exact_dir` (nullable), the directory of a stored exact run, builds only the Wormhole
 * run, reads and checks the stored run against it and prepares `out_dir` and
 * wormhole/ only; `out_dir` may not lie inside `exact_dir`, nor its wormhole/ be it.
 * Errors are bad input (whsim exits 2) and name the scenario file, the directory, or
 * the stored file and its field. `sc` (transfer none) must outlive the comparison.
 * (transfer full) */
WhCompare *wh_compare_new(WhScenario *sc, const WhRunOptions *opts, const char *out_dir,
                          const char *exact_dir, GError **error);
void wh_compare_free(WhCompare *c);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhCompare, wh_compare_free)

/* The perturbation ensemble (whsim compare --ensemble): `size` - 1 members, the exact
 * run with wh::Link::DelayJitter=1..size-1, run as child processes (`whsim run`, at most
 * `jobs` at a time, runner.h) into out_dir/ensemble/member-i/ before the exact and
 * Wormhole runs and read back as stored runs. Each member and the Wormhole run are
 * measured against the reference exact run (time per iteration or makespan, op end
 * times per op kind, FCT quantiles per flow class, the per-flow spread), and Wormhole is
 * "inside" on a metric when it deviates no more than the farthest member. `seeds` more
 * members differ from the reference only by the seed (its seed + 1..seeds, no
 * DelayJitter), run in the same batch into out_dir/ensemble/seed-k/ and judged apart:
 * they do not widen the jitter members' verdicts. */
#define WH_COMPARE_ENSEMBLE_MAX 64       /* runs, the reference included */
#define WH_COMPARE_ENSEMBLE_SEEDS_MAX 64 /* seed members */
#define WH_COMPARE_CHAOTIC_SPREAD 0.05   /* members' mean per-flow |FCT error| above: chaotic */
typedef struct {
  uint32_t size;        /* runs in the ensemble, the reference included: 2..64 */
  uint32_t seeds;       /* seed members: 0..64 */
  guint jobs;           /* members run at once (>= 1) */
  const char *whsim;    /* the whsim program the members run */
  char **extra_args;    /* nullable: more options for every member (--plugin=LIB) */
  const char *from_dir; /* nullable: read the members from here (an earlier comparison's
                           ensemble/: member-i/, seed-k/), checked as stored runs, not run */
} WhCompareEnsemble;

/* After wh_compare_new: asks for the ensemble and creates out_dir/ensemble/. A size
 * outside 2..WH_COMPARE_ENSEMBLE_MAX, or more than WH_COMPARE_ENSEMBLE_SEEDS_MAX seed
 * members, is bad input (WH_SCENARIO_ERROR). A member that
 * fails (WH_RUNNER_ERROR) makes wh_compare_execute fail with its status and the end
 * of its standard error. */
gboolean wh_compare_set_ensemble(WhCompare *c, const WhCompareEnsemble *ens, GError **error);

/* The run built by wh_compare_new and not yet executed, for warnings about the
 * scenario: the exact run, or with a stored exact run the Wormhole run. (transfer none) */
const WhRun *wh_compare_built_run(const WhCompare *c);
/* Nullable: the Wormhole run's memo file (options' memo_file) could not be loaded and
 * is ignored: "FILE: why: ignored" (WhRun's memo_warning) (transfer none). */
const char *wh_compare_memo_warning(const WhCompare *c);

/* Executes both runs (with a stored exact run, the Wormhole run) and writes every
 * output. FALSE when an output could not be written (domain G_FILE_ERROR), or when a
 * flow of the stored exact run has another source, destination or size than the
 * Wormhole run's flow with its key (WH_SCENARIO_ERROR: bad input, naming the stored
 * file and line; no comparison is written); a run that ended early or inconsistent is
 * reported by wh_compare_problem. */
gboolean wh_compare_execute(WhCompare *c, GError **error);

/* After wh_compare_execute: NULL when both runs completed with a clean end state, else
 * what went wrong, naming the run. (transfer none) */
const char *wh_compare_problem(const WhCompare *c);

/* The text of compare.json (transfer full). */
char *wh_compare_json(const WhCompare *c);

/* A few lines for a reader new to Wormhole: time per iteration (or makespan) of both
 * runs and its error, wall and event speedups, FCT errors, bytes skipped, files. */
void wh_compare_print(const WhCompare *c, FILE *out);

#endif
