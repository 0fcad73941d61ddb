/* The compact store of a workload's op descriptions: what each op is (kind, rank,
 * peer or group, size or duration, name, dependencies), without its run state. It is
 * a struct of arrays, 28 bytes per op plus 4 per dependency edge: names, collective
 * groups and all-to-allv size matrices are interned (an op holds a 32-bit id; SimAI and
 * preset DAGs repeat a few names and groups over millions of ops), and the dependencies
 * of every op lie in one shared pool, op i's after op i - 1's. A table is
 * reference-counted and read-only while shared, so a SimAI plan and the workload it
 * becomes hold one copy. Cost: O(1) amortized per op and per edge to add (a hash look-up
 * for its name and group; O(n^2) for an n-rank matrix); a view is O(1). */
#ifndef WH_OP_TABLE_H
#define WH_OP_TABLE_H

#include <glib.h>
#include <stdint.h>

#include "wh-time.h"

/* The kinds of op and collective (see workload.h for their meaning). */
typedef enum {
  WH_OP_COMPUTE,
  WH_OP_SEND,
  WH_OP_COLLECTIVE,
} WhOpKind;

typedef enum {
  WH_COLL_ALL_REDUCE,     /* size: each rank's buffer */
  WH_COLL_REDUCE_SCATTER, /* size: each rank's full input; it keeps size / n */
  WH_COLL_ALL_GATHER,     /* size: the full output; each rank contributes size / n */
  WH_COLL_ALL_TO_ALL,     /* size: each rank's send buffer, size / n per peer */
  WH_COLL_BROADCAST,      /* size: the buffer of the root, the group's first rank */
  WH_COLL_ALL_TO_ALLV,    /* per-pair sizes: an n x n matrix, entry [i][j] from member i to j */
} WhCollKind;

typedef enum {
  WH_ALGO_RING,     /* all-reduce, reduce-scatter, all-gather; broadcast: pipelined chain */
  WH_ALGO_PAIRWISE, /* all-to-all: n - 1 rounds, rank r sends to (r + i) mod n in round i */
  WH_ALGO_DIRECT,   /* all-to-all: every pair at once */
  WH_ALGO_RCCL,     /* all-to-all: pairwise order, at most W sends of a rank in flight */
  WH_ALGO_HALO,     /* all-to-all on Frontier nodes: intra-node, packed per node, forwarded */
} WhCollAlgo;

/* Bytes of the per-op arrays (kinds and tag, name id, rank, peer or group id, size,
 * end of its dependencies in the pool) and of one dependency edge. */
#define WH_OP_TABLE_BYTES_PER_OP 28u
#define WH_OP_TABLE_BYTES_PER_DEP 4u
/* An interned name, group or all-to-allv matrix (an all-to-allv's size field holds its
 * id): its entry in the hash table and the pointer array, and the allocator's header;
 * the string, the ranks or the sizes come on top. */
#define WH_OP_TABLE_BYTES_PER_ENTRY 96u

/* One op, as given to wh_op_table_add and as a view returned by wh_op_table_get (its
 * pointers then point into the table: valid while it lives and no op is added). */
typedef struct {
  WhOpKind kind;
  WhCollKind coll;
  WhCollAlgo algo;
  uint8_t tag;            /* the builder's own byte (the SimAI importer: the group kind) */
  const char *name;       /* (transfer none) */
  uint32_t rank;          /* compute: its rank; send: the source; collective: group[0] */
  uint32_t dst;           /* send: the receiving rank */
  const uint32_t *group;  /* collective: its ranks */
  uint32_t group_n;       /* collective: how many */
  uint64_t bytes;         /* send, collective (all-to-allv: the matrix's sum, on a view) */
  const uint64_t *matrix; /* all-to-allv: group_n x group_n bytes, row-major (diagonal unused) */
  WhTime duration;        /* compute */
  const uint32_t *deps;   /* earlier ops that must end first */
  uint32_t n_deps;
} WhOpSpec;

typedef struct WhOpTable WhOpTable;

WhOpTable *wh_op_table_new(void);         /* (transfer full) */
WhOpTable *wh_op_table_ref(WhOpTable *t); /* (transfer full) */
void wh_op_table_unref(WhOpTable *t);     /* nullable */
gboolean wh_op_table_is_shared(const WhOpTable *t);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhOpTable, wh_op_table_unref)

/* Room for `ops` more ops and `deps` more edges, allocated at once. */
void wh_op_table_reserve(WhOpTable *t, uint64_t ops, uint64_t deps);

/* Gives back the room reserved beyond the ops and edges the table has (a view taken
 * before may no longer be valid). */
void wh_op_table_trim(WhOpTable *t);

/* Appends `op` (its name, group and deps are copied; deps must name earlier ops,
 * checked by the caller) and returns its id; -1 with an error past 2^32 - 2 ops or
 * 2^32 - 1 edges. The table must not be shared. */
int64_t wh_op_table_add(WhOpTable *t, const WhOpSpec *op, GError **error);

uint32_t wh_op_table_len(const WhOpTable *t);
void wh_op_table_get(const WhOpTable *t, uint32_t id, WhOpSpec *out);
/* Op id's dependencies (transfer none) and their count. */
const uint32_t *wh_op_table_deps(const WhOpTable *t, uint32_t id, uint32_t *n);
WhOpKind wh_op_table_kind(const WhOpTable *t, uint32_t id);
uint64_t wh_op_table_n_deps_total(const WhOpTable *t);

/* A private copy (not shared) with every op of `t`. (transfer full) */
WhOpTable *wh_op_table_copy(const WhOpTable *t, GError **error);

/* The bytes the table holds: its arrays at their allocated size, and every interned
 * name and group with its entry. */
uint64_t wh_op_table_bytes(const WhOpTable *t);

#endif
