/* The files of a run, written through one output set (outputs.h): summary.json,
 * flows.csv, links.csv, with a sampler rates.csv and queues.csv (streamed), with
 * Wormhole wormhole.json and wormhole-flows.csv (streamed), with a workload ops.csv and trace.json;
 * the CSV files through csv.h, so a flow id that holds a comma, a quote or a line break is quoted.
 * A signal that comes while they are written stops the writing and nothing is put in place. Cost:
 * one pass over the flows, the ports and the samples held. */
#include "run-files.h"

#include <stdio.h>

#include "csv.h"
#include "outputs.h"
#include "report.h"
#include "run-private.h"
#include "units.h"

/* TRUE when a signal (SIGINT, SIGTERM) came after the run ended, while its outputs are
 * being written: the writing stops, and nothing is put in place. (A run stopped by a
 * signal writes its partial outputs whole; a second signal ends the process.) */
static gboolean signalled_while_writing(const WhRun *run, GError **error)
{
  if (run->sim->interrupt == NULL || !*run->sim->interrupt || run->sim->interrupted)
    return FALSE;
  g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_INTERRUPTED,
              "interrupted while the outputs were written; no output was replaced");
  return TRUE;
}

/* Keeps, in order, the indices of `live` for which `alive(s, index, k)` holds. */
static void keep_alive(GArray *live, const WhRateSampler *s, uint32_t k,
                       gboolean (*alive)(const WhRateSampler *s, uint32_t i, uint32_t k))
{
  guint m = 0;
  for (guint j = 0; j < live->len; j++) {
    uint32_t i = g_array_index(live, uint32_t, j);
    if (alive(s, i, k))
      g_array_index(live, uint32_t, m++) = i;
  }
  g_array_set_size(live, m);
}

static gboolean flow_alive(const WhRateSampler *s, uint32_t flow, uint32_t k)
{
  return k < wh_rate_sampler_flow_periods(s, flow);
}

static gboolean port_alive(const WhRateSampler *s, uint32_t port, uint32_t k)
{
  return k < wh_rate_sampler_port_periods(s, port) || wh_rate_sampler_queue(s, port, k) != 0;
}

/* The samples as CSV, straight to the file: with `ports`, queues.csv (a line per port
 * and period with a queue), else rates.csv (a line per flow and period with traffic).
 * Only the flows and ports with a record left are visited, so the cost follows the
 * samples held and the lines written, not the periods times the flows. */
static gboolean write_sample_lines(FILE *f, const WhRun *run, gboolean ports, GError **error)
{
  char label[16];
  const WhRateSampler *s = run->sampler;
  uint32_t periods = wh_rate_sampler_periods(s);
  WhTime period = wh_rate_sampler_period(s);
  uint32_t n = ports ? run->net->n_ports : run->tp->n_flows;
  g_autoptr(GArray) live = g_array_sized_new(FALSE, FALSE, sizeof(uint32_t), n);
  for (uint32_t i = 0; i < n; i++)
    g_array_append_val(live, i);
  fputs(ports ? "period_end_ps,port,node,queue_bytes\n"
              : "period_start_ps,flow_id,sent_bps,delivered_bps\n",
        f);
  for (uint32_t k = 0; k < periods && live->len; k++) {
    if (k % 4096 == 0 && (ferror(f) || signalled_while_writing(run, error)))
      return !ferror(f);
    keep_alive(live, s, k, ports ? port_alive : flow_alive);
    for (guint j = 0; j < live->len; j++) {
      uint32_t i = g_array_index(live, uint32_t, j);
      if (ports) {
        uint32_t q = wh_rate_sampler_queue(s, i, k);
        if (q)
          fprintf(f, "%" G_GUINT64_FORMAT ",%u,%u,%u\n", (guint64)(k + 1) * period, i,
                  run->net->port[i].node, q);
        continue;
      }
      uint64_t sent = wh_rate_sampler_sent(s, i, k), del = wh_rate_sampler_delivered(s, i, k);
      if (sent || del) {
        fprintf(f, "%" G_GUINT64_FORMAT ",", (guint64)k * period);
        wh_csv_field_file(f, wh_run_flow_label(run, i, label));
        fprintf(f, ",%.0f,%.0f\n", (double)sent * 8 / wh_time_to_s(period),
                (double)del * 8 / wh_time_to_s(period));
      }
    }
  }
  return TRUE;
}

static gboolean write_rates(FILE *f, const void *data, GError **error)
{
  return write_sample_lines(f, data, FALSE, error);
}

static gboolean write_queues(FILE *f, const void *data, GError **error)
{
  return write_sample_lines(f, data, TRUE, error);
}

static gboolean write_wormhole_flows(FILE *f, const void *data, GError **error)
{
  const WhRun *run = data;
  wh_wormhole_flows_csv_header(f);
  for (uint32_t i = 0; i < run->tp->n_flows; i++) {
    if (i % 4096 == 0 && (ferror(f) || signalled_while_writing(run, error)))
      return !ferror(f);
    wh_wormhole_flows_csv_line(run->wormhole, i, f);
  }
  return TRUE;
}

char *wh_run_links_csv(const WhRun *run)
{
  const WhNet *net = run->net;
  double end = run->sim->now ? (double)run->sim->now : 1.0;
  GString *csv =
      g_string_new("port,node,peer_node,tier,rate_bps,frames,bytes,busy_ps,busy_fraction,pause_ps,"
                   "max_queue_bytes\n");
  for (uint32_t i = 0; i < net->n_ports; i++) {
    const WhPort *p = &net->port[i];
    WhTime paused = wh_net_port_paused_time(net, p);
    if (p->frames == 0 && p->st.busy == 0 && paused == 0)
      continue;
    g_string_append_printf(
        csv,
        "%u,%u,%u,%s,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT
        ",%" G_GUINT64_FORMAT ",%.6f,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "\n",
        i, p->node, p->peer_node, wh_net_tier_name((WhLinkTier)p->tier), p->line_bps, p->frames,
        p->bytes, (guint64)p->st.busy, (double)p->st.busy / end, (guint64)paused, p->qd.max_bytes);
  }
  return g_string_free(csv, FALSE);
}

gboolean wh_run_write(const WhRun *run, const char *dir, GError **error)
{
  g_autoptr(WhOutputSet) set = wh_output_set_new(dir, error);
  if (set == NULL)
    return FALSE;
  g_autofree char *summary = wh_run_summary_json(run, TRUE);
  GString *csv = g_string_new("flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key\n");
  char label[16], key[WH_RUN_KEY_LEN];
  for (uint32_t i = 0; i < run->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(run->tp, i);
    wh_csv_field(csv, wh_run_flow_label(run, i, label));
    g_string_append_printf(csv, ",%u,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",", f->src,
                           f->dst, f->size, f->start);
    if (f->finish)
      g_string_append_printf(csv, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT, f->finish,
                             f->finish - f->start);
    else
      g_string_append_c(csv, ',');
    g_string_append_c(csv, ',');
    wh_csv_field(csv, wh_run_flow_key(run, i, key));
    g_string_append_c(csv, '\n');
  }
  g_autofree char *links = wh_run_links_csv(run);
  gboolean ok = wh_output_set_add(set, "flows.csv", csv->str, error) &&
                wh_output_set_add(set, "links.csv", links, error) &&
                wh_output_set_add(set, "summary.json", summary, error);
  g_string_free(csv, TRUE);
  if (ok && run->sampler)
    ok = wh_output_set_add_stream(set, "rates.csv", write_rates, run, error) &&
         wh_output_set_add_stream(set, "queues.csv", write_queues, run, error);
  if (ok && run->wormhole) {
    g_autofree char *wj = wh_wormhole_json(run->wormhole);
    ok = wh_output_set_add(set, "wormhole.json", wj, error) &&
         wh_output_set_add_stream(set, "wormhole-flows.csv", write_wormhole_flows, run, error);
  }
  if (ok && run->workload) {
    g_autofree char *ops = wh_workload_ops_csv(run->workload);
    g_autofree char *trace = wh_workload_trace_json(run->workload);
    ok = wh_output_set_add(set, "ops.csv", ops, error) &&
         wh_output_set_add(set, "trace.json", trace, error);
  }
  return ok && !signalled_while_writing(run, error) && wh_output_set_commit(set, error);
}
