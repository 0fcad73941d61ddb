/* Scenario files: the XML description of one simulation (topology, parameter
 * overrides, flows), parsed with libxml2 in its safe configuration and validated
 * against the RELAX NG schema in scenarios/schema/ (compiled into the library).
 * Refused outright: DTDs and entity declarations, wherever "<!DOCTYPE" or "<!ENTITY"
 * appears in the file (so no external entities and no entity-expansion bombs), XInclude, network
 * access, non-UTF-8 input, empty files, nesting deeper than libxml2's limit. Every error names the
 * file and, where it applies, the line and the element/attribute. Cold path. */
#ifndef WH_SCENARIO_H
#define WH_SCENARIO_H

#include <glib.h>
#include "registry.h"

#define WH_SCENARIO_ERROR (wh_scenario_error_quark())
GQuark wh_scenario_error_quark(void);

typedef enum {
  WH_SCENARIO_ERROR_IO,
  WH_SCENARIO_ERROR_XML,
  WH_SCENARIO_ERROR_SCHEMA,
  WH_SCENARIO_ERROR_REFUSED, /* DTD, entity, XInclude, encoding */
  WH_SCENARIO_ERROR_VALUE,
  WH_SCENARIO_ERROR_INTERRUPTED, /* a signal stopped the writing of the outputs */
} WhScenarioError;

typedef struct {
  char *id; /* nullable: defaults to the flow's index */
  char *src, *dst;
  uint64_t size;
  WhTime start;
  int line;
} WhScenarioFlow;

typedef struct {
  char *a, *b;
  uint64_t rate; /* 0: wh::Link::Rate */
  WhTime delay;
  gboolean has_delay;
  int line;
} WhScenarioLink;

typedef struct {
  char *id;
  gboolean is_switch;
  int line;
} WhScenarioNode;

typedef struct {
  char *key, *value, *origin;
} WhScenarioSet;

/* One operation of the <workload> element, resolved to numbers at load time except
 * the ranks (checked against the topology when the run is built). */
typedef struct {
  char *id;
  int kind; /* WhOpKind */
  int coll; /* WhCollKind */
  int algo; /* WhCollAlgo; -1: an all-to-all(v) naming none (wh::Workload::AllToAll) */
  uint32_t rank, dst;
  uint32_t *ranks;
  uint32_t n_ranks;
  WhTime duration;
  uint64_t bytes;
  uint64_t *matrix;  /* all-to-allv: n_ranks x n_ranks sizes, row-major (nullable: from a file) */
  char *matrix_path; /* all-to-allv matrix="...": resolved against the scenario file */
  uint32_t *deps;    /* indices of earlier ops */
  uint32_t n_deps;
  int line;
} WhScenarioOp;

/* Rank placement (<placement policy=...>): contiguous (nodes 0, 1, 2, ...: the
 * default), per-switch (one node per switch: the first node of switch 0, 1, 2, ...),
 * random (nodes drawn without repetition, seeded), nodes (an explicit list). */
typedef enum {
  WH_PLACEMENT_CONTIGUOUS,
  WH_PLACEMENT_PER_SWITCH,
  WH_PLACEMENT_RANDOM,
  WH_PLACEMENT_NODES,
} WhPlacement;

typedef struct {
  char *path;
  char *name;
  uint64_t seed;
  gboolean has_seed;
  char *cc;                     /* nullable */
  char *scheduler;              /* nullable */
  WhTime stop;                  /* 0: run to completion */
  WhTime sample_period;         /* 0: no rate sampler */
  char *topology;               /* type name, or "wh::Custom" */
  char *topology_preset;        /* nullable: <topology preset=...> ("frontier") */
  int root_line, topology_line; /* for messages; 0 when built in code */
  GPtrArray *sets;              /* WhScenarioSet*, in file order, topology params included */
  GPtrArray *nodes;             /* WhScenarioNode* (custom topology) */
  GPtrArray *links;             /* WhScenarioLink* (custom topology) */
  GPtrArray *flows;             /* WhScenarioFlow* */
  GPtrArray *ops;               /* WhScenarioOp*, the workload's DAG (one iteration) */
  uint32_t iterations;          /* of the workload; 1 unless set */
  char *simai_path;             /* nullable: <workload simai=...>, resolved against the file */
  gboolean simai_keep_tp;       /* keep tensor-parallel collectives of the SimAI file */
  uint32_t simai_gpus;          /* <workload gpus=...>: the SimAI job's GPU count, 0: not given */
  gboolean model_preset;        /* <workload model=...>: ops from wh::ModelPreset */
  char *routing_path; /* nullable: <workload model=... routing=...>, resolved against the file */
  int workload_line;
  gboolean permutation;
  uint64_t perm_size;
  WhTime perm_start;
  int perm_line;
  GPtrArray *patterns; /* WhScenarioPattern*: <shift>, <uniform> */
  /* <placement>: where a workload's ranks run on a machine of Frontier nodes (G =
   * WH_DRAGONFLY_NODE_GCDS hosts each), rank r on GCD r mod G of the (r / G)-th node of
   * the placement */
  WhPlacement placement;
  uint32_t *placement_nodes; /* WH_PLACEMENT_NODES: the node list */
  uint32_t n_placement_nodes;
  uint64_t placement_seed; /* WH_PLACEMENT_RANDOM; the scenario's seed unless set */
  gboolean has_placement_seed;
  int placement_line;
} WhScenario;

/* A traffic pattern over a range of hosts [first, first + count) (count 0: every
 * host from first on): <shift> sends host h to first + (h - first + offset) mod count;
 * <uniform> sends `flows` flows from every host to uniformly random other hosts. */
typedef enum { WH_PATTERN_SHIFT, WH_PATTERN_UNIFORM } WhPatternKind;
typedef struct {
  WhPatternKind kind;
  uint64_t size;
  WhTime start;
  uint32_t first, count;
  uint32_t offset; /* shift */
  uint32_t flows;  /* uniform: flows per host */
  int line;
} WhScenarioPattern;

#define WH_CUSTOM_TOPOLOGY "wh::Custom"

/* (transfer full) */
/* Registers the types of every module the engine links (idempotent). The loader, the
 * run and the CLI call it: registration belongs to whoever assembles the modules. */
void wh_registry_init(void);

WhScenario *wh_scenario_load(const char *path, GError **error);
/* Reads `data` (len bytes; messages name it `name`) as one of the project's XML files
 * (scenarios, sweep specifications) the way scenarios are read: the raw checks (not
 * empty, at most 256 MiB, UTF-8, no DTD or entity declaration), libxml2 without network
 * access or entity substitution, no XInclude, then RELAX NG validation against `rng`
 * (rng_len bytes), which messages call `what` ("the sweep schema"). The xmlDoc (transfer
 * full: free with xmlFreeDoc), or NULL with an error (WH_SCENARIO_ERROR) "NAME:LINE: ...". */
gpointer wh_xml_read_validated(const char *data, gsize len, const char *name, const char *rng,
                               gsize rng_len, const char *what, GError **error);
WhScenario *wh_scenario_load_memory(const char *data, gsize len, const char *name, GError **error);
/* An empty scenario for programs and tests that build one in code. */
WhScenario *wh_scenario_new(const char *name, const char *topology);
void wh_scenario_free(WhScenario *sc);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhScenario, wh_scenario_free)

void wh_scenario_add_set(WhScenario *sc, const char *key, const char *value);

/* The most ranks an all-to-allv's size matrix may cover (8 bytes per pair). */
#define WH_SCENARIO_MAX_MATRIX_RANKS 8192u

/* Parses an all-to-allv size matrix for a group of `n` ranks into `*out` (transfer
 * full): n rows of n sizes ("4KB", "0", "1.5MB"), a row per line (or separated by ';'),
 * entries separated by blanks or commas, '#' starting a comment. `file` and `line` (of
 * the text's first character) name where it came from in errors: a row of the wrong
 * length, a wrong number of rows, a negative or unreadable entry. */
gboolean wh_scenario_parse_matrix(const char *text, uint32_t n, const char *file, int line,
                                  uint64_t **out, GError **error);

void wh_scenario_add_flow(WhScenario *sc, uint32_t src, uint32_t dst, uint64_t size, WhTime start);

#endif
