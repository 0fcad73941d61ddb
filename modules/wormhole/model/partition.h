/* Network partitions (the Wormhole paper's): the connected components of the graph
 * that joins each active flow to the directed ports it uses - its data path, its
 * ACK/NACK/CNP path and so both NICs. Flows that share a port are in one partition;
 * a partition can be frozen, shifted or skipped without touching any other.
 *
 * Kept incrementally with union-find over ports: a new flow that touches no partition
 * starts one, one that touches one joins it, one that touches several merges them
 * (O(path length x alpha)). When a flow leaves, only its own partition is re-checked
 * for a split, by rebuilding that partition's union-find from its remaining flows.
 * A large partition (more than WH_PARTITION_EAGER_PORTS port uses) defers the rebuild
 * until the ports of the flows that left since its last rebuild reach an eighth of
 * its own, so a departure costs O(1) amortized; until then it is conservatively
 * larger (never smaller) than its true component. A reroute is a leave plus a join.
 * Engine-neutral: flow ids and port ids in, partition ids and membership out.
 * Memory: 25 B per port, 40 B plus 4 B per port use per active flow, 80 B per live
 * partition, and 48 B per partition ever created (the history). */
#ifndef WH_PARTITION_H
#define WH_PARTITION_H

#include <glib.h>
#include <stdint.h>
#include "wh-time.h"

#define WH_PARTITION_NONE 0xffffffffu
#define WH_PARTITION_EAGER_PORTS 4096u

/* Per-flow flag bits the partition counts (a partition knows how many of its flows
 * have each bit set). */
#define WH_PFLAG_UNSTEADY 1u
#define WH_PFLAG_BELOW_LINE 2u

typedef enum {
  WH_PART_NEW,   /* a flow that touched no partition */
  WH_PART_MERGE, /* a flow joined several partitions */
  WH_PART_SPLIT, /* a departure left several components */
} WhPartitionCause;

/* A live partition. Fields are read-only outside partition.c. */
typedef struct {
  uint32_t id;   /* serial number, never reused */
  uint32_t root; /* its root port */
  uint32_t head; /* a member flow (circular list), WH_PARTITION_NONE when empty */
  uint32_t n_flows;
  uint32_t n_flag[2];    /* members with WH_PFLAG_UNSTEADY, WH_PFLAG_BELOW_LINE */
  uint32_t member_ports; /* port uses of its members */
  uint32_t live_slot;
  WhTime since;       /* last change of membership */
  WhTime joined;      /* last time a flow joined it (or a partition it came from) */
  WhTime last_signal; /* latest congestion signal at one of its ports */
  GArray *departed;   /* ports of flows that left since the last rebuild (nullable) */
  /* for the observer above (the steady-state detector) */
  uint8_t kind;
  WhTime kind_since;
  uint64_t mark_events, mark_bytes;
  WhTime skip_retry;    /* skip mode: not worth trying again before this */
  uint8_t pattern_seen; /* patterns: this membership's pattern was counted */
  uint8_t hold;         /* its rebuilds are held (wh_partitions_hold) */
} WhPartition;

/* The history of one partition id. */
typedef struct {
  uint32_t id;
  WhPartitionCause cause;
  WhTime created, ended; /* ended WH_TIME_MAX: still live */
  uint32_t parents[2];   /* merged or split from (WH_PARTITION_NONE: none) */
  uint32_t n_parents;
  uint32_t max_flows; /* most members at once */
  uint32_t joins;     /* flows that joined after it was created */
} WhPartitionRecord;

typedef struct WhPartitions WhPartitions;

/* Called before a live partition changes membership or ends (so an observer can close
 * what it measured over the old membership). */
typedef void (*WhPartitionFn)(void *data, WhPartition *part);

/* (transfer full) `n_ports`: port ids are 0..n_ports-1. */
WhPartitions *wh_partitions_new(uint32_t n_ports, WhPartitionFn before_change, void *data);
void wh_partitions_free(WhPartitions *pm);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhPartitions, wh_partitions_free)

/* Flow `flow` starts using `ports` (duplicates allowed) with `flags`. */
void wh_partitions_add_flow(WhPartitions *pm, uint32_t flow, const uint32_t *ports, uint32_t n,
                            uint8_t flags, WhTime now);
/* The flow stops using its ports. */
void wh_partitions_remove_flow(WhPartitions *pm, uint32_t flow, WhTime now);
/* The flow's ports changed (a reroute): a leave and a join, keeping its flags. */
void wh_partitions_reroute_flow(WhPartitions *pm, uint32_t flow, const uint32_t *ports, uint32_t n,
                                WhTime now);
/* Sets the flow's flags, updating its partition's counts. */
void wh_partitions_set_flags(WhPartitions *pm, uint32_t flow, uint8_t flags);
uint8_t wh_partitions_flags(const WhPartitions *pm, uint32_t flow);
/* A congestion signal (ECN mark, CNP, PFC frame, queue) at `port`. */
void wh_partitions_port_signal(WhPartitions *pm, uint32_t port, WhTime now);
/* Holds `part`'s rebuilds after departures (TRUE: while its flows are parked and
 * leave one by one, so the departures cost O(1) each and it stays, conservatively,
 * one partition), or releases them (FALSE: rebuilt now if departures are pending).
 * A merge holds what either side held. */
void wh_partitions_hold(WhPartitions *pm, WhPartition *part, gboolean hold, WhTime now);
/* Rebuilds every partition with departures pending (e.g. before a report). */
void wh_partitions_settle(WhPartitions *pm, WhTime now);

/* The live partition of an active flow, or NULL. (transfer none) */
WhPartition *wh_partitions_of_flow(const WhPartitions *pm, uint32_t flow);
/* Live partitions: index 0..n-1, in no meaningful order. (transfer none) */
uint32_t wh_partitions_n_live(const WhPartitions *pm);
WhPartition *wh_partitions_live(const WhPartitions *pm, uint32_t i);
/* Member flows: the first, then the next (WH_PARTITION_NONE after the last). */
uint32_t wh_partitions_first_flow(const WhPartition *part);
uint32_t wh_partitions_next_flow(const WhPartitions *pm, const WhPartition *part, uint32_t flow);
/* The ports a flow uses (transfer none), n in *n. */
const uint32_t *wh_partitions_flow_ports(const WhPartitions *pm, uint32_t flow, uint32_t *n);

/* History: every partition id ever created, in id order. */
uint32_t wh_partitions_n_records(const WhPartitions *pm);
const WhPartitionRecord *wh_partitions_record(const WhPartitions *pm, uint32_t id);
/* Counters: merges, splits, rebuilds done. */
void wh_partitions_counts(const WhPartitions *pm, uint64_t *merges, uint64_t *splits,
                          uint64_t *rebuilds);

#endif
