/* Chrome trace-event output of a workload's ops (the JSON object format of the
 * Trace Event Format, read by Perfetto and chrome://tracing): process = rank, "X"
 * complete events in microseconds, "s"/"f" flow events for sends. The format needs
 * the spans of one thread to nest, so each rank's compute spans and communication
 * spans are dealt to lanes (threads) greedily by start time: a span takes the first
 * lane free by then. Thread 2k is compute lane k, 2k + 1 communication lane k. Each
 * event is one line of json-glib's compact output (names and values escaped by its
 * generator), so a trace of millions of events stays one event per line and is never
 * held as one tree. Cold: written once after a run; O(spans x lanes) plus a sort. */
#include "workload.h"

#include <string.h>

#include <json-glib/json-glib.h>

#include "units.h"

typedef struct {
  uint32_t rank, op;
  uint32_t comm; /* 0 compute, 1 communication */
  uint32_t tid;
  WhTime start, end;
  gboolean unfinished;
} Span;

static gint span_cmp(gconstpointer pa, gconstpointer pb)
{
  const Span *a = pa, *b = pb;
  if (a->rank != b->rank)
    return a->rank < b->rank ? -1 : 1;
  if (a->comm != b->comm)
    return a->comm < b->comm ? -1 : 1;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->op < b->op ? -1 : a->op > b->op;
}

static void add_span(GArray *spans, const WhOpInfo *op, uint32_t rank, uint32_t comm, WhTime now)
{
  Span sp = {.rank = rank,
             .op = op->id,
             .comm = comm,
             .start = op->start,
             .end = op->ended ? op->end : now,
             .unfinished = !op->ended};
  g_array_append_val(spans, sp);
}

/* Deals the sorted spans to lanes. */
static void assign_lanes(GArray *spans)
{
  g_autoptr(GArray) lane_end = g_array_new(FALSE, FALSE, sizeof(WhTime));
  for (guint i = 0; i < spans->len; i++) {
    Span *sp = &g_array_index(spans, Span, i);
    if (i == 0 || sp->rank != sp[-1].rank || sp->comm != sp[-1].comm)
      g_array_set_size(lane_end, 0);
    guint lane = 0;
    while (lane < lane_end->len && g_array_index(lane_end, WhTime, lane) > sp->start)
      lane++;
    if (lane == lane_end->len)
      g_array_append_val(lane_end, sp->end);
    else
      g_array_index(lane_end, WhTime, lane) = sp->end;
    sp->tid = 2 * lane + sp->comm;
  }
}

/* The trace's events, one per line, each through json-glib's generator. */
typedef struct {
  GString *text;
  JsonGenerator *gen;
} Events;

/* Appends `ev` (transfer full) as the next line of the trace. */
static void add_event(Events *t, JsonObject *ev)
{
  g_autoptr(JsonNode) node = json_node_init_object(json_node_alloc(), ev);
  json_object_unref(ev);
  json_generator_set_root(t->gen, node);
  if (t->text->str[t->text->len - 1] != '\n')
    g_string_append(t->text, ",\n");
  json_generator_to_gstring(t->gen, t->text);
}

/* A metadata event ("M"): the name of process `pid` or of its thread `tid` (< 0: none). */
static void add_name(Events *t, const char *what, uint32_t pid, int64_t tid, const char *name)
{
  JsonObject *ev = json_object_new(), *args = json_object_new();
  json_object_set_string_member(ev, "name", what);
  json_object_set_string_member(ev, "ph", "M");
  json_object_set_int_member(ev, "pid", pid);
  if (tid >= 0)
    json_object_set_int_member(ev, "tid", tid);
  json_object_set_string_member(args, "name", name);
  json_object_set_object_member(ev, "args", args);
  add_event(t, ev);
}

/* A time in ps as the trace's microseconds, to the picosecond. */
static double trace_us(WhTime ps)
{
  return wh_units_round((double)ps * 1e-6, "%.6f");
}

static void thread_names(Events *t, const GArray *spans, uint32_t n_ranks)
{
  g_autofree uint32_t *lanes = g_new0(uint32_t, (gsize)n_ranks * 2); /* per rank and kind */
  for (guint i = 0; i < spans->len; i++) {
    const Span *sp = &g_array_index(spans, Span, i);
    uint32_t *l = &lanes[(gsize)sp->rank * 2 + sp->comm];
    *l = MAX(*l, sp->tid / 2 + 1);
  }
  for (uint32_t r = 0; r < n_ranks; r++) {
    g_autofree char *rank = g_strdup_printf("rank %u", r);
    add_name(t, "process_name", r, -1, rank);
    for (uint32_t comm = 0; comm < 2; comm++) {
      uint32_t n = MAX(lanes[(gsize)r * 2 + comm], 1);
      for (uint32_t k = 0; k < n; k++) {
        const char *kind = comm ? "communication" : "compute";
        g_autofree char *name = k ? g_strdup_printf("%s %u", kind, k + 1) : g_strdup(kind);
        add_name(t, "thread_name", r, 2 * k + comm, name);
      }
    }
  }
}

/* The complete event ("X") of a span. */
static void add_span_event(Events *t, const Span *sp, const WhOpInfo *op)
{
  JsonObject *ev = json_object_new(), *args = json_object_new();
  json_object_set_string_member(ev, "name", op->name);
  json_object_set_string_member(ev, "cat", sp->comm ? "comm" : "compute");
  json_object_set_string_member(ev, "ph", "X");
  json_object_set_double_member(ev, "ts", trace_us(sp->start));
  json_object_set_double_member(ev, "dur", trace_us(sp->end - sp->start));
  json_object_set_int_member(ev, "pid", sp->rank);
  json_object_set_int_member(ev, "tid", sp->tid);
  json_object_set_int_member(args, "op", op->id);
  json_object_set_string_member(args, "kind", wh_op_kind_name(op->kind, op->coll));
  json_object_set_int_member(args, "bytes", (gint64)op->bytes);
  if (sp->unfinished)
    json_object_set_boolean_member(args, "unfinished", TRUE);
  json_object_set_object_member(ev, "args", args);
  add_event(t, ev);
}

/* One end of a send's flow arrow: "s" at the sender, "f" at the receiver. */
static void add_flow_event(Events *t, const char *ph, uint32_t id, WhTime at, uint32_t pid,
                           uint32_t tid)
{
  JsonObject *ev = json_object_new();
  json_object_set_string_member(ev, "name", "send");
  json_object_set_string_member(ev, "cat", "p2p");
  json_object_set_string_member(ev, "ph", ph);
  if (strcmp(ph, "f") == 0)
    json_object_set_string_member(ev, "bp", "e");
  json_object_set_int_member(ev, "id", id);
  json_object_set_double_member(ev, "ts", trace_us(at));
  json_object_set_int_member(ev, "pid", pid);
  json_object_set_int_member(ev, "tid", tid);
  add_event(t, ev);
}

char *wh_workload_trace_json(const WhWorkload *w)
{
  uint32_t n_ops = wh_workload_n_ops(w), n_ranks = wh_workload_n_ranks(w);
  WhTime now = wh_workload_now(w);
  g_autoptr(GArray) spans = g_array_new(FALSE, FALSE, sizeof(Span));
  for (uint32_t i = 0; i < n_ops; i++) {
    WhOpInfo op;
    wh_workload_op_info(w, i, &op);
    if (!op.started)
      continue;
    if (op.kind == WH_OP_COMPUTE) {
      add_span(spans, &op, op.rank, 0, now);
    } else if (op.kind == WH_OP_SEND) {
      add_span(spans, &op, op.rank, 1, now);
      add_span(spans, &op, op.dst, 1, now);
    } else {
      for (uint32_t k = 0; k < op.group_n; k++)
        add_span(spans, &op, op.group[k], 1, now);
    }
  }
  g_array_sort(spans, span_cmp);
  assign_lanes(spans);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  Events t = {g_string_new("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"), gen};
  thread_names(&t, spans, n_ranks);
  /* the thread of each send's two spans, for its flow arrow */
  g_autofree uint32_t *send_tid = g_new0(uint32_t, (gsize)n_ops * 2);
  for (guint i = 0; i < spans->len; i++) {
    const Span *sp = &g_array_index(spans, Span, i);
    WhOpInfo op;
    wh_workload_op_info(w, sp->op, &op);
    if (op.kind == WH_OP_SEND)
      send_tid[(gsize)sp->op * 2 + (sp->rank == op.dst)] = sp->tid;
    add_span_event(&t, sp, &op);
  }
  for (uint32_t i = 0; i < n_ops; i++) {
    WhOpInfo op;
    wh_workload_op_info(w, i, &op);
    if (op.kind != WH_OP_SEND || !op.ended)
      continue;
    add_flow_event(&t, "s", i, op.start, op.rank, send_tid[(gsize)i * 2]);
    add_flow_event(&t, "f", i, op.end, op.dst, send_tid[(gsize)i * 2 + 1]);
  }
  g_string_append(t.text, "\n]}\n");
  return g_string_free(t.text, FALSE);
}
