/* The layout of a run (run.h): the simulator, network, transport, workload and Wormhole
 * it built, and what the run keeps for its outputs. Only the scenario module's own code
 * (run, report, compare), the ns-3 engine and the test suites include it; tools and the
 * library go through run.h's functions. Costs nothing: a struct definition. */
#ifndef WH_RUN_PRIVATE_H
#define WH_RUN_PRIVATE_H

#include "rate-sampler.h"
#include "rdma-transport.h"
#include "run.h"
#include "simai-import.h"
#include "workload.h"
#include "wormhole.h"

struct WhRun {
  WhScenario *sc;       /* (transfer none) */
  WhScenario *owned_sc; /* nullable: freed with the run (wh_run_take_scenario) */
  WhConfig *cfg;
  uint64_t seed;
  const WhSchedulerClass *sched; /* the stock scheduler (inside Wormhole's, when on) */
  const WhCcClass *cc;
  WhWormholeParams wormhole_params;
  WhWormhole *wormhole; /* nullable: wh::Wormhole::Mode is not off */
  WhSim *sim;
  WhNet *net;
  WhRateSampler *sampler; /* nullable */
  WhWorkload *workload;   /* nullable: the scenario's <workload>, `iterations` times */
  uint32_t iterations;
  uint32_t ops_per_iteration;
  uint32_t simai_dropped_tp; /* TP collectives of a SimAI file left out */
  uint64_t simai_dropped_tp_bytes;
  gboolean simai_gpus_from_hosts; /* the SimAI file gave no GPU count: one per host */
  WhSimaiStats simai_stats;       /* the SimAI plan's counts, per iteration */
  uint64_t tp_bytes_not_modelled; /* TP traffic per run that stays inside servers */
  char *preset_facts;             /* nullable: a model preset's summary text */
  GArray *migration_checks;       /* nullable: WhMigrationCheck of a preset with Migration */
  WhTransport *tp;
  char **flow_ids;     /* display id per scenario flow */
  uint32_t n_flow_ids; /* scenario flows; later flows (a workload's) have none */
  double wall_s;
  WhTime stop;
  uint64_t memory_budget;   /* bytes; networks and workloads estimated larger are refused */
  uint64_t memory_network;  /* the network's estimate */
  WhRunProgressFn progress; /* nullable: the options' */
  void *progress_data;
  const char *progress_label; /* nullable */
  uint64_t progress_bytes;    /* the flows' bytes when the run started (the estimate's base) */
  uint64_t progress_events0;  /* events executed before the run started */
  char *memo_file;            /* nullable: the memo database's file (options' memo_file) */
  char *memo_status;          /* with memo_file: "loaded", "loaded in part: ...", "new" or
                                 "ignored: <reason>" */
  char *memo_warning;         /* nullable: the file was ignored ("FILE: why: ignored"), loaded
                                 in part, or is read-only */
  gboolean memo_keep_file;    /* the file is read-only, or not a memo file: never written */
};

#endif
