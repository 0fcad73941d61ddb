/* A sweep specification (`whsim sweep SPEC`): an XML file, validated against
 * scenarios/schema/sweep.rng (compiled in), that names one or more scenarios, the
 * parameters to vary (registry parameters as --set names them, each with a list or a
 * range of values; a <grid> block combines its parameters in full, a <zip> block takes
 * its lists element by element, and blocks multiply), the seeds and the modes (run,
 * wormhole, compare). Loading checks every value against the registry and every
 * scenario with its loader, then expands the cells: scenarios outermost, then the
 * blocks in file order (the last varying fastest), the seeds, the modes. Each cell has
 * a stable id: the first 16 hex digits of a SHA-256 over the build id, the bytes of the
 * scenario file and of every file it references (SimAI workload, routing and matrix
 * files), the overrides, the seed and the mode. Errors name the specification and the
 * line. Cost: one load of each scenario and one hash per cell; cold path. */
#ifndef WH_SWEEP_SPEC_H
#define WH_SWEEP_SPEC_H

#include <glib.h>
#include <stdint.h>

#define WH_SWEEP_ERROR (wh_sweep_error_quark())
GQuark wh_sweep_error_quark(void);

typedef enum {
  WH_SWEEP_ERROR_INPUT, /* the specification or a scenario it names is refused */
  WH_SWEEP_ERROR_RUN,   /* a cell could not be run or recorded, an output not written */
  WH_SWEEP_ERROR_BUSY,  /* another sweep holds the output folder's lock */
  WH_SWEEP_ERROR_INTERRUPTED,
} WhSweepError;

/* The largest number of cells a specification may expand to. */
#define WH_SWEEP_MAX_CELLS 10000
/* The cap on a specification file, in bytes. */
#define WH_SWEEP_MAX_SPEC_BYTES ((gsize)1 << 20)

typedef enum {
  WH_SWEEP_MODE_RUN,      /* whsim run on the exact engine (the scenario's scheduler) */
  WH_SWEEP_MODE_WORMHOLE, /* whsim run --scheduler wormhole */
  WH_SWEEP_MODE_COMPARE,  /* whsim compare */
} WhSweepMode;

/* The mode's name in specifications and outputs. (transfer none) */
const char *wh_sweep_mode_name(WhSweepMode mode);

typedef struct {
  char *file;      /* the path as the specification gives it */
  char *path;      /* resolved against the specification's directory */
  char *name;      /* the scenario's name */
  uint64_t seed;   /* the scenario's seed (1 when it sets none) */
  char digest[65]; /* SHA-256 of the file and of every file it references */
  int line;
} WhSweepScenario;

typedef struct {
  char *name;        /* Type::Param */
  GPtrArray *values; /* char*, as --set takes them */
  int line;
} WhSweepParam;

/* A <grid> or <zip> block: params[first .. first + n) of the sweep. */
typedef struct {
  gboolean zip;
  guint first, n;
  int line;
} WhSweepBlock;

typedef struct {
  char id[17];         /* 16 hex digits */
  guint scenario;      /* index into scenarios */
  const char **values; /* one per varied parameter (transfer none) */
  gboolean seed_set;   /* the specification has <seeds>: --seed is passed */
  uint64_t seed;       /* the seed in force */
  WhSweepMode mode;
} WhSweepCell;

typedef struct {
  char *path;           /* the specification as given */
  char *name;           /* <sweep name>, else the file name without .xml */
  char *build_id;       /* what the ids were computed with */
  GPtrArray *scenarios; /* WhSweepScenario* */
  GPtrArray *params;    /* WhSweepParam*: every varied parameter, in file order */
  GArray *blocks;       /* WhSweepBlock, in file order */
  GArray *seeds;        /* uint64_t; empty: each scenario's own seed */
  GArray *modes;        /* WhSweepMode */
  WhSweepCell *cells;
  guint n_cells;
} WhSweep;

/* What wh_sweep_load checks beyond the specification itself. */
typedef enum {
  WH_SWEEP_LOAD_CHECK_RUNS = 1 << 0, /* build each scenario's run once, as whsim validate
                                        does (the driver; a cell's worker skips it) */
} WhSweepLoadFlags;

/* Loads and expands the specification at `path`; `build_id` (transfer none) enters
 * every cell id. NULL with an error WH_SWEEP_ERROR_INPUT "PATH:LINE: ..." when the
 * file, a value, a scenario or the size of the grid is refused. (transfer full) */
WhSweep *wh_sweep_load(const char *path, const char *build_id, unsigned flags, GError **error);
void wh_sweep_free(WhSweep *sw);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhSweep, wh_sweep_free)

/* The index of the cell with id `id`, or -1. */
gint wh_sweep_find(const WhSweep *sw, const char *id);

/* The cell's overrides as `whsim run` options ("--set=Type::Param=value" each, then
 * "--seed=N" when the specification sets seeds), NULL-terminated. (transfer full) */
char **wh_sweep_cell_options(const WhSweep *sw, guint cell);

/* The version and the source commit of this build ("0.1.0+<commit>"), what
 * `whsim --version` prints and what cell ids are computed with. (transfer none) */
const char *wh_build_id(void);

#endif
