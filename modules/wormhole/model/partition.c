/* Incremental partitions over union-find; see partition.h. */
#include "partition.h"

#include <string.h>
#include "bulk.h"

#define NONE WH_PARTITION_NONE

typedef struct {
  uint32_t *ports; /* from port_lists */
  uint32_t n_ports;
  uint32_t part; /* slot of its partition, NONE when not active */
  uint32_t next, prev;
  uint8_t flags;
  uint16_t cap; /* room at `ports` */
} PFlow;

struct WhPartitions {
  uint32_t n_ports;
  uint32_t *parent, *size;
  uint32_t *refc;      /* active flows using the port (with multiplicity) */
  uint32_t *root_slot; /* at a root: its partition's slot */
  uint8_t *in_tree;    /* the port is in some partition's union-find tree */
  WhTime *signal;      /* latest congestion signal per port */
  WhTable flows;       /* PFlow by flow id */
  GArray *parts;       /* WhPartition by slot */
  GArray *free_slots;  /* uint32 */
  GArray *live;        /* uint32 slots */
  GArray *records;     /* WhPartitionRecord by id */
  WhPartitionFn before_change;
  void *data;
  uint64_t merges, splits, rebuilds;
  GArray *scratch; /* uint32 */
  uint32_t *stamp; /* per port: the rebuild that last reset it */
  uint32_t stamp_gen;
  WhWordStore port_lists; /* the flows' port lists: each kept for the run (a rebuild
                             reads its flows' lists), reused by a reroute that fits */
};

static inline PFlow *flow_at(const WhPartitions *pm, uint32_t f)
{
  return wh_table_at(&pm->flows, f);
}

WhPartitions *wh_partitions_new(uint32_t n_ports, WhPartitionFn before_change, void *data)
{
  WhPartitions *pm = g_new0(WhPartitions, 1);
  pm->n_ports = n_ports;
  pm->parent = g_new(uint32_t, n_ports);
  pm->size = g_new(uint32_t, n_ports);
  pm->refc = g_new0(uint32_t, n_ports);
  pm->root_slot = g_new(uint32_t, n_ports);
  pm->in_tree = g_new0(uint8_t, n_ports);
  pm->signal = g_new0(WhTime, n_ports);
  pm->stamp = g_new0(uint32_t, n_ports);
  for (uint32_t p = 0; p < n_ports; p++)
    pm->root_slot[p] = NONE;
  wh_table_init(&pm->flows, sizeof(PFlow));
  pm->parts = g_array_new(FALSE, TRUE, sizeof(WhPartition));
  pm->free_slots = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  pm->live = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  pm->records = g_array_new(FALSE, TRUE, sizeof(WhPartitionRecord));
  pm->scratch = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  pm->port_lists = (WhWordStore){wh_bulk_new(), NULL, NULL};
  pm->before_change = before_change;
  pm->data = data;
  return pm;
}

void wh_partitions_free(WhPartitions *pm)
{
  if (pm == NULL)
    return;
  wh_bulk_free(pm->port_lists.bulk);
  for (guint i = 0; i < pm->parts->len; i++) {
    WhPartition *p = &g_array_index(pm->parts, WhPartition, i);
    if (p->departed)
      g_array_unref(p->departed);
  }
  wh_table_clear(&pm->flows);
  g_array_unref(pm->parts);
  g_array_unref(pm->free_slots);
  g_array_unref(pm->live);
  g_array_unref(pm->records);
  g_array_unref(pm->scratch);
  g_free(pm->parent);
  g_free(pm->size);
  g_free(pm->refc);
  g_free(pm->root_slot);
  g_free(pm->in_tree);
  g_free(pm->signal);
  g_free(pm->stamp);
  g_free(pm);
}

static inline WhPartition *slot_at(const WhPartitions *pm, uint32_t s)
{
  return &g_array_index(pm->parts, WhPartition, s);
}

static uint32_t find(WhPartitions *pm, uint32_t p)
{
  while (pm->parent[p] != p) {
    pm->parent[p] = pm->parent[pm->parent[p]];
    p = pm->parent[p];
  }
  return p;
}

static uint32_t unite(WhPartitions *pm, uint32_t a, uint32_t b)
{
  a = find(pm, a);
  b = find(pm, b);
  if (a == b)
    return a;
  if (pm->size[a] < pm->size[b] || (pm->size[a] == pm->size[b] && a > b)) {
    uint32_t t = a;
    a = b;
    b = t;
  }
  pm->parent[b] = a;
  pm->size[a] += pm->size[b];
  return a;
}

static void record_new(WhPartitions *pm, WhPartitionCause cause, const uint32_t *parents,
                       uint32_t n_parents, WhTime now);

/* A fresh partition with no members. */
static uint32_t part_new(WhPartitions *pm, WhPartitionCause cause, const uint32_t *parents,
                         uint32_t n_parents, WhTime now)
{
  uint32_t slot;
  if (pm->free_slots->len) {
    slot = g_array_index(pm->free_slots, uint32_t, pm->free_slots->len - 1);
    g_array_set_size(pm->free_slots, pm->free_slots->len - 1);
  } else {
    slot = pm->parts->len;
    g_array_set_size(pm->parts, slot + 1);
  }
  WhPartition *p = slot_at(pm, slot);
  memset(p, 0, sizeof *p);
  p->id = pm->records->len;
  p->root = NONE;
  p->head = NONE;
  p->since = now;
  p->pattern_seen = 0;
  p->kind_since = now;
  p->live_slot = pm->live->len;
  g_array_append_val(pm->live, slot);
  record_new(pm, cause, parents, n_parents, now);
  return slot;
}

static void record_new(WhPartitions *pm, WhPartitionCause cause, const uint32_t *parents,
                       uint32_t n_parents, WhTime now)
{
  WhPartitionRecord r = {.id = pm->records->len, .cause = cause, .created = now};
  r.ended = WH_TIME_MAX;
  r.n_parents = n_parents;
  r.parents[0] = r.parents[1] = NONE;
  for (uint32_t i = 0; i < MIN(n_parents, 2u); i++)
    r.parents[i] = parents[i];
  g_array_append_val(pm->records, r);
}

/* The partition in `slot` goes on under a new id (after a merge). */
static void part_renumber(WhPartitions *pm, uint32_t slot, WhPartitionCause cause,
                          const uint32_t *parents, uint32_t n_parents, WhTime now)
{
  WhPartition *p = slot_at(pm, slot);
  g_array_index(pm->records, WhPartitionRecord, p->id).ended = now;
  p->id = pm->records->len;
  record_new(pm, cause, parents, n_parents, now);
  g_array_index(pm->records, WhPartitionRecord, p->id).max_flows = p->n_flows;
}

static void part_end(WhPartitions *pm, uint32_t slot, WhTime now)
{
  WhPartition *p = slot_at(pm, slot);
  g_array_index(pm->records, WhPartitionRecord, p->id).ended = now;
  uint32_t last = g_array_index(pm->live, uint32_t, pm->live->len - 1);
  g_array_index(pm->live, uint32_t, p->live_slot) = last;
  slot_at(pm, last)->live_slot = p->live_slot;
  g_array_set_size(pm->live, pm->live->len - 1);
  if (p->root != NONE && pm->root_slot[p->root] == slot)
    pm->root_slot[p->root] = NONE;
  if (p->departed)
    g_array_unref(p->departed);
  p->departed = NULL;
  p->head = NONE;
  g_array_append_val(pm->free_slots, slot);
}

static void list_insert(WhPartitions *pm, WhPartition *p, uint32_t f)
{
  PFlow *x = flow_at(pm, f);
  if (p->head == NONE) {
    x->next = x->prev = f;
    p->head = f;
  } else {
    PFlow *h = flow_at(pm, p->head);
    x->next = p->head;
    x->prev = h->prev;
    flow_at(pm, h->prev)->next = f;
    h->prev = f;
  }
}

static void list_remove(WhPartitions *pm, WhPartition *p, uint32_t f)
{
  PFlow *x = flow_at(pm, f);
  if (x->next == f) {
    p->head = NONE;
  } else {
    flow_at(pm, x->prev)->next = x->next;
    flow_at(pm, x->next)->prev = x->prev;
    if (p->head == f)
      p->head = x->next;
  }
  x->next = x->prev = NONE;
}

/* Adds member f to partition slot: list, counts. */
static void member_add(WhPartitions *pm, uint32_t slot, uint32_t f)
{
  WhPartition *p = slot_at(pm, slot);
  PFlow *x = flow_at(pm, f);
  list_insert(pm, p, f);
  x->part = slot;
  p->n_flows++;
  p->member_ports += x->n_ports;
  for (unsigned b = 0; b < 2; b++)
    p->n_flag[b] += (x->flags >> b) & 1u;
  for (uint32_t i = 0; i < x->n_ports; i++)
    p->last_signal = MAX(p->last_signal, pm->signal[x->ports[i]]);
  WhPartitionRecord *r = &g_array_index(pm->records, WhPartitionRecord, p->id);
  r->max_flows = MAX(r->max_flows, p->n_flows);
}

/* Moves every member and departed port of `from` into `to`; `from` ends. */
static void part_absorb(WhPartitions *pm, uint32_t to, uint32_t from, WhTime now)
{
  WhPartition *src = slot_at(pm, from);
  uint32_t f = src->head;
  while (src->head != NONE) {
    f = src->head;
    list_remove(pm, src, f);
    member_add(pm, to, f);
  }
  WhPartition *dst = slot_at(pm, to);
  dst->last_signal = MAX(dst->last_signal, src->last_signal);
  dst->hold |= src->hold;
  if (src->departed) {
    if (dst->departed == NULL)
      dst->departed = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    g_array_append_vals(dst->departed, src->departed->data, src->departed->len);
  }
  part_end(pm, from, now);
}

/* Room for `n` ports of flow x, kept from its last list when that is large enough. */
static uint32_t *flow_ports_room(WhPartitions *pm, PFlow *x, uint32_t n)
{
  if (x->ports != NULL && x->cap >= n)
    return x->ports;
  x->ports = wh_words_room(&pm->port_lists, n);
  wh_words_commit(&pm->port_lists, n);
  x->cap = (uint16_t)n;
  return x->ports;
}

static void ensure_flow(WhPartitions *pm, uint32_t f)
{
  if (f >= pm->flows.len) {
    uint32_t old = pm->flows.len;
    wh_table_grow(&pm->flows, f + 1);
    for (guint i = old; i <= f; i++)
      flow_at(pm, i)->part = NONE;
  }
}

void wh_partitions_add_flow(WhPartitions *pm, uint32_t flow, const uint32_t *ports, uint32_t n,
                            uint8_t flags, WhTime now)
{
  g_return_if_fail(n > 0);
  ensure_flow(pm, flow);
  PFlow *x = flow_at(pm, flow);
  g_return_if_fail(x->part == NONE);
  g_return_if_fail(n <= G_MAXUINT16);
  memcpy(flow_ports_room(pm, x, n), ports, n * sizeof(uint32_t));
  x->n_ports = n;
  x->flags = flags;
  /* the distinct partitions it touches */
  GArray *touched = pm->scratch;
  g_array_set_size(touched, 0);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t p = ports[i];
    g_return_if_fail(p < pm->n_ports);
    if (!pm->in_tree[p]) {
      pm->parent[p] = p;
      pm->size[p] = 1;
      pm->in_tree[p] = 1;
      pm->root_slot[p] = NONE;
    }
    pm->refc[p]++;
    uint32_t s = pm->root_slot[find(pm, p)];
    gboolean seen = s == NONE;
    for (guint k = 0; k < touched->len && !seen; k++)
      seen = g_array_index(touched, uint32_t, k) == s;
    if (!seen)
      g_array_append_val(touched, s);
  }
  for (guint k = 0; k < touched->len; k++) {
    WhPartition *p = slot_at(pm, g_array_index(touched, uint32_t, k));
    if (pm->before_change)
      pm->before_change(pm->data, p);
    pm->root_slot[p->root] = NONE;
  }
  uint32_t root = find(pm, ports[0]);
  for (uint32_t i = 1; i < n; i++)
    root = unite(pm, root, ports[i]);
  uint32_t slot;
  if (touched->len == 0) {
    slot = part_new(pm, WH_PART_NEW, NULL, 0, now);
  } else if (touched->len == 1) {
    slot = g_array_index(touched, uint32_t, 0);
    g_array_index(pm->records, WhPartitionRecord, slot_at(pm, slot)->id).joins++;
  } else {
    /* a merge: the largest partition absorbs the others (only their members move)
     * and takes a new id */
    guint n_from = touched->len;
    g_autofree uint32_t *from = g_memdup2(touched->data, n_from * sizeof(uint32_t));
    guint big = 0;
    for (guint k = 1; k < n_from; k++)
      if (slot_at(pm, from[k])->n_flows > slot_at(pm, from[big])->n_flows)
        big = k;
    slot = from[big];
    uint32_t ids[2] = {slot_at(pm, from[0])->id, slot_at(pm, from[1])->id};
    part_renumber(pm, slot, WH_PART_MERGE, ids, n_from, now);
    for (guint k = 0; k < n_from; k++)
      if (k != big)
        part_absorb(pm, slot, from[k], now);
    pm->merges++;
  }
  WhPartition *p = slot_at(pm, slot);
  p->root = root;
  pm->root_slot[root] = slot;
  member_add(pm, slot, flow);
  p->since = now;
  p->joined = now;
  p->pattern_seen = 0;
}

/* Rebuilds the union-find of partition `slot` from its members, splitting it if they
 * no longer form one component. One pass over the members: a port is reset when first
 * met (its stamp), before any union touches it, and the components are counted as
 * ports are reset and unions join them, so the unions run in the same order as a reset
 * of every port followed by the unions would run them (the same trees, the same roots). */
static void rebuild(WhPartitions *pm, uint32_t slot, WhTime now)
{
  pm->rebuilds++;
  WhPartition *p = slot_at(pm, slot);
  if (++pm->stamp_gen == 0) {
    memset(pm->stamp, 0, pm->n_ports * sizeof *pm->stamp);
    pm->stamp_gen = 1;
  }
  uint32_t gen = pm->stamp_gen;
  /* departed flows' ports leave the tree unless a member still uses them */
  for (guint i = 0; p->departed && i < p->departed->len; i++) {
    uint32_t q = g_array_index(p->departed, uint32_t, i);
    pm->parent[q] = q;
    pm->size[q] = 1;
    pm->root_slot[q] = NONE;
    pm->in_tree[q] = pm->refc[q] > 0;
  }
  if (p->departed)
    g_array_set_size(p->departed, 0);
  uint32_t components = 0;
  for (uint32_t f = p->head; f != NONE; f = wh_partitions_next_flow(pm, p, f)) {
    PFlow *x = flow_at(pm, f);
    for (uint32_t i = 0; i < x->n_ports; i++) {
      uint32_t q = x->ports[i];
      if (pm->stamp[q] != gen) {
        pm->stamp[q] = gen;
        pm->parent[q] = q;
        pm->size[q] = 1;
        pm->root_slot[q] = NONE;
        components++;
      }
    }
    /* each port joins the first port's set, whose root is kept rather than found again
     * (the same unions in the same order, so the same roots) */
    uint32_t root = find(pm, x->ports[0]);
    for (uint32_t i = 1; i < x->n_ports; i++) {
      uint32_t r = find(pm, x->ports[i]);
      if (r != root) {
        root = unite(pm, root, r);
        components--;
      }
    }
  }
  /* one component: the partition goes on */
  if (components == 1) {
    uint32_t root = find(pm, flow_at(pm, p->head)->ports[0]);
    p->root = root;
    pm->root_slot[root] = slot;
    return;
  }
  /* a split: each component becomes a new partition, joined when its parent was */
  pm->splits++;
  uint32_t parent_id = p->id;
  WhTime joined = p->joined;
  GArray *members = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  while (p->head != NONE) {
    uint32_t f = p->head;
    list_remove(pm, p, f);
    g_array_append_val(members, f);
  }
  part_end(pm, slot, now);
  for (guint i = 0; i < members->len; i++) {
    uint32_t f = g_array_index(members, uint32_t, i);
    uint32_t r = find(pm, flow_at(pm, f)->ports[0]);
    uint32_t s = pm->root_slot[r];
    if (s == NONE) {
      s = part_new(pm, WH_PART_SPLIT, &parent_id, 1, now);
      slot_at(pm, s)->root = r;
      slot_at(pm, s)->joined = joined;
      pm->root_slot[r] = s;
    }
    member_add(pm, s, f);
  }
  g_array_unref(members);
}

static gboolean rebuild_due(const WhPartition *p)
{
  guint departed = p->departed ? p->departed->len : 0;
  return departed > 0 && !p->hold &&
         (p->member_ports <= WH_PARTITION_EAGER_PORTS || (uint64_t)departed * 8 >= p->member_ports);
}

void wh_partitions_remove_flow(WhPartitions *pm, uint32_t flow, WhTime now)
{
  g_return_if_fail(flow < pm->flows.len && flow_at(pm, flow)->part != NONE);
  PFlow *x = flow_at(pm, flow);
  uint32_t slot = x->part;
  WhPartition *p = slot_at(pm, slot);
  if (pm->before_change)
    pm->before_change(pm->data, p);
  list_remove(pm, p, flow);
  x->part = NONE;
  p->n_flows--;
  p->member_ports -= x->n_ports;
  for (unsigned b = 0; b < 2; b++)
    p->n_flag[b] -= (x->flags >> b) & 1u;
  if (p->departed == NULL)
    p->departed = g_array_new(FALSE, FALSE, sizeof(uint32_t));
  for (uint32_t i = 0; i < x->n_ports; i++)
    pm->refc[x->ports[i]]--;
  g_array_append_vals(p->departed, x->ports, x->n_ports);
  p->since = now;
  p->pattern_seen = 0;
  if (p->n_flows == 0) {
    for (guint i = 0; i < p->departed->len; i++) {
      uint32_t q = g_array_index(p->departed, uint32_t, i);
      pm->in_tree[q] = pm->refc[q] > 0;
      pm->root_slot[q] = NONE;
    }
    part_end(pm, slot, now);
  } else if (rebuild_due(p)) {
    rebuild(pm, slot, now);
  }
}

void wh_partitions_reroute_flow(WhPartitions *pm, uint32_t flow, const uint32_t *ports, uint32_t n,
                                WhTime now)
{
  uint8_t flags = wh_partitions_flags(pm, flow);
  wh_partitions_remove_flow(pm, flow, now);
  wh_partitions_add_flow(pm, flow, ports, n, flags, now);
}

void wh_partitions_set_flags(WhPartitions *pm, uint32_t flow, uint8_t flags)
{
  PFlow *x = flow_at(pm, flow);
  if (x->flags == flags)
    return;
  if (x->part != NONE) {
    WhPartition *p = slot_at(pm, x->part);
    for (unsigned b = 0; b < 2; b++) {
      p->n_flag[b] -= (x->flags >> b) & 1u;
      p->n_flag[b] += (flags >> b) & 1u;
    }
  }
  x->flags = flags;
}

uint8_t wh_partitions_flags(const WhPartitions *pm, uint32_t flow)
{
  return flow < pm->flows.len ? flow_at(pm, flow)->flags : 0;
}

void wh_partitions_port_signal(WhPartitions *pm, uint32_t port, WhTime now)
{
  pm->signal[port] = now;
  if (!pm->in_tree[port])
    return;
  uint32_t s = pm->root_slot[find(pm, port)];
  if (s != NONE)
    slot_at(pm, s)->last_signal = now;
}

void wh_partitions_hold(WhPartitions *pm, WhPartition *part, gboolean hold, WhTime now)
{
  part->hold = hold != FALSE;
  if (hold || !rebuild_due(part))
    return;
  if (pm->before_change)
    pm->before_change(pm->data, part);
  rebuild(pm, (uint32_t)(part - &g_array_index(pm->parts, WhPartition, 0)), now);
}

void wh_partitions_settle(WhPartitions *pm, WhTime now)
{
  for (guint i = 0; i < pm->live->len; i++) {
    uint32_t slot = g_array_index(pm->live, uint32_t, i);
    WhPartition *p = slot_at(pm, slot);
    if (p->departed && p->departed->len) {
      if (pm->before_change)
        pm->before_change(pm->data, p);
      rebuild(pm, slot, now);
      i = (guint)-1; /* the live list changed: start over (each is settled once) */
    }
  }
}

WhPartition *wh_partitions_of_flow(const WhPartitions *pm, uint32_t flow)
{
  if (flow >= pm->flows.len || flow_at(pm, flow)->part == NONE)
    return NULL;
  return slot_at(pm, flow_at(pm, flow)->part);
}

uint32_t wh_partitions_n_live(const WhPartitions *pm)
{
  return pm->live->len;
}

WhPartition *wh_partitions_live(const WhPartitions *pm, uint32_t i)
{
  return slot_at(pm, g_array_index(pm->live, uint32_t, i));
}

uint32_t wh_partitions_first_flow(const WhPartition *part)
{
  return part->head;
}

uint32_t wh_partitions_next_flow(const WhPartitions *pm, const WhPartition *part, uint32_t flow)
{
  uint32_t n = flow_at(pm, flow)->next;
  return n == part->head ? NONE : n;
}

const uint32_t *wh_partitions_flow_ports(const WhPartitions *pm, uint32_t flow, uint32_t *n)
{
  if (flow >= pm->flows.len) {
    *n = 0;
    return NULL;
  }
  *n = flow_at(pm, flow)->n_ports;
  return flow_at(pm, flow)->ports;
}

uint32_t wh_partitions_n_records(const WhPartitions *pm)
{
  return pm->records->len;
}

const WhPartitionRecord *wh_partitions_record(const WhPartitions *pm, uint32_t id)
{
  g_return_val_if_fail(id < pm->records->len, NULL);
  return &g_array_index(pm->records, WhPartitionRecord, id);
}

void wh_partitions_counts(const WhPartitions *pm, uint64_t *merges, uint64_t *splits,
                          uint64_t *rebuilds)
{
  *merges = pm->merges;
  *splits = pm->splits;
  *rebuilds = pm->rebuilds;
}
