/* Chrome trace-event output of a workload's ops (the JSON object format of the
 * Trace Event Format, read by Perfetto and chrome://tracing): process = rank, thread
 * 0 = compute, thread 1 = communication, "X" complete events in microseconds, "s"/"f"
 * flow events for sends. Cold: written once after a run. */
#include "workload.h"

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

static void span(GString *s, const WhOpInfo *op, uint32_t rank, gboolean compute)
{
  g_string_append(s, ",\n{\"name\":");
  json_string(s, op->name);
  g_string_append_printf(
      s,
      ",\"cat\":\"%s\",\"ph\":\"X\",\"ts\":%.6f,\"dur\":%.6f,\"pid\":%u,"
      "\"tid\":%d,\"args\":{\"op\":%u,\"kind\":\"%s\",\"bytes\":%" G_GUINT64_FORMAT "}}",
      compute ? "compute" : "comm", (double)op->start * 1e-6, (double)(op->end - op->start) * 1e-6,
      rank, compute ? 0 : 1, op->id, wh_op_kind_name(op->kind, op->coll), (guint64)op->bytes);
}

char *wh_workload_trace_json(const WhWorkload *w)
{
  GString *s = g_string_new("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
  g_string_append(s, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":0,\"args\":{\"name\":"
                     "\"rank 0\"}}");
  for (uint32_t r = 0; r < wh_workload_n_ranks(w); r++) {
    if (r)
      g_string_append_printf(s,
                             ",\n{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%u,\"args\":{"
                             "\"name\":\"rank %u\"}}",
                             r, r);
    g_string_append_printf(s,
                           ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":0,"
                           "\"args\":{\"name\":\"compute\"}}"
                           ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%u,\"tid\":1,"
                           "\"args\":{\"name\":\"communication\"}}",
                           r, r);
  }
  for (uint32_t i = 0; i < wh_workload_n_ops(w); i++) {
    WhOpInfo op;
    wh_workload_op_info(w, i, &op);
    if (op.end < op.start || (op.end == 0 && op.start == 0 && i > 0 && op.n_deps > 0))
      continue; /* never ran */
    switch (op.kind) {
    case WH_OP_COMPUTE:
      span(s, &op, op.rank, TRUE);
      break;
    case WH_OP_SEND:
      span(s, &op, op.rank, FALSE);
      span(s, &op, op.dst, FALSE);
      g_string_append_printf(s,
                             ",\n{\"name\":\"send\",\"cat\":\"p2p\",\"ph\":\"s\",\"id\":%u,"
                             "\"ts\":%.6f,\"pid\":%u,\"tid\":1}"
                             ",\n{\"name\":\"send\",\"cat\":\"p2p\",\"ph\":\"f\",\"bp\":\"e\","
                             "\"id\":%u,\"ts\":%.6f,\"pid\":%u,\"tid\":1}",
                             i, (double)op.start * 1e-6, op.rank, i, (double)op.end * 1e-6, op.dst);
      break;
    case WH_OP_COLLECTIVE:
      for (uint32_t k = 0; k < op.group_n; k++)
        span(s, &op, op.group[k], FALSE);
      break;
    }
  }
  g_string_append(s, "\n]}\n");
  return g_string_free(s, FALSE);
}
