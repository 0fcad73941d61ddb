/* Chrome trace-event output of a workload's ops (the JSON object format of the
 * Trace Event Format, read by Perfetto and chrome://tracing): process = rank, "X"
 * complete events in microseconds, "s"/"f" flow events for sends. The format needs
 * the spans of one thread to nest, so each rank's compute spans and communication
 * spans are dealt to lanes (threads) greedily by start time: a span takes the first
 * lane free by then. Thread 2k is compute lane k, 2k + 1 communication lane k. Cold:
 * written once after a run; O(spans x lanes) plus a sort. */
#include "workload.h"

typedef struct {
  uint32_t rank, op;
  uint32_t comm; /* 0 compute, 1 communication */
  uint32_t tid;
  WhTime start, end;
  gboolean unfinished;
} Span;

static void json_string(GString *s, const char *text)
{
  g_string_append_c(s, '"');
  for (const char *p = text; *p; p++) {
    if (*p == '"' || *p == '\\')
      g_string_append_printf(s, "\\%c", *p);
    else if ((unsigned char)*p < 0x20)
      g_string_append_printf(s, "\\u%04x", *p);
    else
      g_string_append_c(s, *p);
  }
  g_string_append_c(s, '"');
}

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

static void thread_names(GString *s, const GArray *spans, uint32_t n_ranks)
{
  g_autofree uint32_t *lanes = g_new0(uint32_t, (gsize)n_ranks * 2); /* per rank and kind */
  for (guint i = 0; i < spans->len; i++) {
    const Span *sp = &g_array_index(spans, Span, i);
    uint32_t *l = &lanes[(gsize)sp->rank * 2 + sp->comm];
    *l = MAX(*l, sp->tid / 2 + 1);
  }
  for (uint32_t r = 0; r < n_ranks; r++) {
    if (r > 0)
      g_string_append_printf(s,
                             ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{"
                             "\"name\":\"rank %u\"}}",
                             r, r);
    for (uint32_t comm = 0; comm < 2; comm++) {
      uint32_t n = MAX(lanes[(gsize)r * 2 + comm], 1);
      for (uint32_t k = 0; k < n; k++) {
        g_string_append_printf(s,
                               ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":%u,"
                               "\"args\":{\"name\":\"%s",
                               r, 2 * k + comm, comm ? "communication" : "compute");
        if (k > 0)
          g_string_append_printf(s, " %u", k + 1);
        g_string_append(s, "\"}}");
      }
    }
  }
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
  GString *s = g_string_new("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  g_string_append(s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":"
                     "\"rank 0\"}}");
  thread_names(s, spans, n_ranks);
  /* the thread of each send's two spans, for its flow arrow */
  g_autofree uint32_t *send_tid = g_new0(uint32_t, (gsize)n_ops * 2);
  for (guint i = 0; i < spans->len; i++) {
    const Span *sp = &g_array_index(spans, Span, i);
    WhOpInfo op;
    wh_workload_op_info(w, sp->op, &op);
    if (op.kind == WH_OP_SEND)
      send_tid[(gsize)sp->op * 2 + (sp->rank == op.dst)] = sp->tid;
    g_string_append(s, ",\n{\"name\":");
    json_string(s, op.name);
    g_string_append_printf(
        s,
        ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.6f,\"dur\":%.6f,\"pid\":%u,\"tid\":%u,"
        "\"args\":{\"op\":%u,\"kind\":\"%s\",\"bytes\":%" G_GUINT64_FORMAT "%s}}",
        sp->comm ? "comm" : "compute", (double)sp->start * 1e-6,
        (double)(sp->end - sp->start) * 1e-6, sp->rank, sp->tid, op.id,
        wh_op_kind_name(op.kind, op.coll), (guint64)op.bytes,
        sp->unfinished ? ",\"unfinished\":true" : "");
  }
  for (uint32_t i = 0; i < n_ops; i++) {
    WhOpInfo op;
    wh_workload_op_info(w, i, &op);
    if (op.kind != WH_OP_SEND || !op.ended)
      continue;
    g_string_append_printf(s,
                           ",\n{\"name\":\"send\",\"cat\":\"p2p\",\"ph\":\"s\",\"id\":%u,"
                           "\"ts\":%.6f,\"pid\":%u,\"tid\":%u}"
                           ",\n{\"name\":\"send\",\"cat\":\"p2p\",\"ph\":\"f\",\"bp\":\"e\","
                           "\"id\":%u,\"ts\":%.6f,\"pid\":%u,\"tid\":%u}",
                           i, (double)op.start * 1e-6, op.rank, send_tid[(gsize)i * 2], i,
                           (double)op.end * 1e-6, op.dst, send_tid[(gsize)i * 2 + 1]);
  }
  g_string_append(s, "\n]}\n");
  return g_string_free(s, FALSE);
}
