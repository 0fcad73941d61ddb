/* The ns-3 engine of whsim; see ns3-engine.h. Mapping: every node (host or switch)
 * becomes an ns-3 node; every link a point-to-point link with its rate and its own
 * propagation delay, and a RED queue disc in ECN mode marking as a step at K (DCTCP's
 * Kmin, in packets of one full segment; Gentle off) holding up to the switch buffer
 * in packets (per port on ns-3, shared per switch natively); every flow a TCP DCTCP bulk
 * transfer. Every port's queue disc is strict priority: TCP segments without payload
 * (ACKs) first, as the native engine serves control packets, data second. TCP knobs
 * follow the native run: segment size = wh::RdmaFlow::Mtu,
 * delayed-ACK count = AckEvery, minimum RTO = Rto, SACK and timestamps off, 16 MiB
 * socket buffers. Routing: per-flow ECMP over shortest paths (bindings-c/src/
 * wh-ns3-ecmp.cc), with every flow pinned to the path the native engine's ECMP chose
 * for it, so both engines put the same flows on the same links. */
#include "ns3-engine.h"

#include <stdio.h>
#include <string.h>

#include "csv.h"
#include "json-text.h"
#include "outputs.h"
#include "report.h"
#include "run-private.h"
#include "units.h"
#include "wh-ns3-scheduler.h"
#include "wh-ns3-wormhole.h"
#include "wh-ns3.h"
#include "wh-error.h"

/* The message of a setting the ns-3 mapping has no equivalent for (`what`: a literal). */
#define CANNOT_EXPRESS(what)                                                                       \
  "the ns-3 engine cannot express " what " (it runs DCTCP flows over ECN-marking, lossy queues; "  \
  "see docs/ns3.md)"

/* Checks the --ns3-* options and the Wormhole mode against each other. */
static gboolean check_options(const WhRun *run, const WhNs3EngineOptions *opts, GError **error)
{
  if (opts->scheduler && wh_scheduler_class_lookup(opts->scheduler) == NULL)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "--ns3-scheduler %s: unknown scheduler (known: heap, calendar)",
                        opts->scheduler);
  if (opts->marking && strcmp(opts->marking, "red") != 0 && strcmp(opts->marking, "dequeue") != 0)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "--ns3-marking %s: expected red or dequeue", opts->marking);
  if (opts->marking && strcmp(opts->marking, "dequeue") == 0 && !run->net->p.ecn)
    return wh_error_set(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
        "--ns3-marking dequeue: the scenario marks no ECN (wh::Switch::EcnEnabled is "
        "false)");
  if (opts->wormhole && strcmp(opts->wormhole, "observe") != 0) {
    g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                "--ns3-wormhole %s: expected observe (ns-3 is observed, never fast-forwarded; "
                "see docs/ns3.md)",
                opts->wormhole);
    return FALSE;
  }
  if (opts->wormhole && opts->scheduler && strcmp(opts->scheduler, "heap") != 0)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "--ns3-scheduler %s: --ns3-wormhole observe runs on the heap",
                        opts->scheduler);
  if (opts->wormhole) {
    WhWormholeParams wp;
    if (!wh_wormhole_params_from_config(&wp, run->cfg, "dctcp", FALSE, error))
      return FALSE;
    if (wp.quantity != WH_QUANTITY_CWND_RTT && wp.quantity != WH_QUANTITY_DELIVERED)
      return wh_error_set(
          error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
          "%s: wh::WormholeStudy::Quantity=%s: on ns-3 the monitor samples cwnd-rtt or "
          "delivered",
          run->sc->path, wh_quantity_name(wp.quantity));
  }
  if (run->wormhole &&
      !(opts->wormhole && wh_wormhole_params(run->wormhole)->mode == WH_WORMHOLE_OBSERVE)) {
    const char *origin = wh_config_origin(run->cfg, "wh::Wormhole", "Mode");
    g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                "%s: wh::Wormhole::Mode=%s (set %s%s): Wormhole runs on the native engine only; "
                "use wh::Wormhole::Mode=off or observe with --engine ns3 --ns3-wormhole observe",
                run->sc->path, wh_wormhole_mode_name(wh_wormhole_params(run->wormhole)->mode),
                origin ? "at " : "by --scheduler wormhole", origin ? origin : "");
    return FALSE;
  }
  return TRUE;
}

/* Checks that the scenario maps onto ns-3: DCTCP flows over ECN-marking, lossy queues. */
static gboolean check_mapping(const WhRun *run, GError **error)
{
  if (run->net->router.choose)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("adaptive routing (paths are pinned before the run; use "
                                          "wh::Dragonfly::Routing=minimal or valiant)"));
  if (run->tp->n_flows > WH_NS3_MAX_FLOWS)
    return wh_error_set(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE,
                        "%s: %u flows: the ns-3 engine takes at most %u (one TCP port each)",
                        run->sc->path, run->tp->n_flows, WH_NS3_MAX_FLOWS);
  if (strcmp(run->cc->name, "dctcp") != 0)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
        CANNOT_EXPRESS("this congestion control (RDMA CCs have no ns-3 model): use "
                       "cc=\"dctcp\""));
  if (run->net->p.pfc)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("PFC: set wh::Switch::PfcEnabled=false"));
  if (run->workload)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("a training workload"));
  if (run->tp->p.window)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("wh::RdmaFlow::Window"));
  /* DCTCP and switch settings the mapping has no equivalent for */
  const WhConfig *c = run->cfg;
  if (wh_config_bytes(c, "wh::DctcpCc", "MaxWindow"))
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("wh::DctcpCc::MaxWindow (no window cap on ns-3's side)"));
  if (wh_config_bytes(c, "wh::DctcpCc", "Kmax") != wh_config_bytes(c, "wh::DctcpCc", "Kmin") ||
      wh_config_double(c, "wh::DctcpCc", "Pmax") != 1.0)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
        CANNOT_EXPRESS("a marking ramp (ns-3 marks as a step: Kmax = Kmin, Pmax = 1)"));
  for (uint32_t i = 0; i < run->net->n_nodes; i++)
    if (wh_net_switch_delay(run->net, i))
      return wh_error_set_at(
          error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
          CANNOT_EXPRESS("a switch forwarding delay (wh::Switch::Delay; no forwarding "
                         "delay on ns-3)"));
  return TRUE;
}

gboolean wh_ns3_engine_check(const WhRun *run, const WhNs3EngineOptions *opts, GError **error)
{
  return check_options(run, opts, error) && check_mapping(run, error);
}

static gboolean fail_ns3(GError **error, const char *what, int rc)
{
  g_set_error(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, "ns-3: %s: %s", what,
              wh_ns3_strerror(rc));
  return FALSE;
}

static gboolean write_outputs(const WhRun *run, WhNs3Sim *sim, const char *dir, gboolean quiet,
                              const char *marking, uint64_t hook_marks, const char *wormhole,
                              double wall, GError **error)
{
  const WhNet *net = run->net;
  const WhTransport *tp = run->tp;
  gboolean ok;
  WhNs3Stats st;
  wh_ns3_stats(sim, &st);
  GString *csv = g_string_new("flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key\n");
  uint32_t done = 0;
  char label[16], key[WH_RUN_KEY_LEN];
  for (uint32_t i = 0; i < tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow((WhTransport *)tp, i);
    uint64_t start = 0, finish = 0;
    int rc = wh_ns3_flow_times(sim, i, &start, &finish);
    wh_csv_field(csv, wh_run_flow_label(run, i, label));
    g_string_append_printf(csv, ",%u,%u,%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",", f->src,
                           f->dst, f->size, start);
    if (rc == 0) {
      done++;
      g_string_append_printf(csv, "%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT, finish,
                             finish - start);
    } else {
      g_string_append_c(csv, ',');
    }
    g_string_append_c(csv, ',');
    wh_csv_field(csv, wh_run_flow_key(run, i, key));
    g_string_append_c(csv, '\n');
  }
  g_autoptr(JsonObject) o = json_object_new();
  json_object_set_string_member(o, "scenario", run->sc->name ? run->sc->name : "");
  json_object_set_string_member(o, "engine", "ns3");
  json_object_set_int_member(o, "seed", (gint64)run->seed);
  json_object_set_string_member(o, "cc", "dctcp");
  json_object_set_string_member(o, "ns3_marking", marking);
  json_object_set_int_member(o, "ns3_hook_marks", (gint64)hook_marks);
  json_object_set_int_member(o, "hosts", net->n_hosts);
  json_object_set_int_member(o, "switches", net->n_switches);
  json_object_set_int_member(o, "sim_end_ps", (gint64)st.end_ps);
  json_object_set_int_member(o, "events_executed", (gint64)st.events);
  json_object_set_int_member(o, "link_traversals", (gint64)st.link_traversals);
  json_object_set_int_member(o, "flows_completed", done);
  json_object_set_double_member(o, "wall_s", wh_units_round(wall, "%.6f"));
  json_object_set_int_member(o, "flows", tp->n_flows);
  g_autofree char *summary = wh_json_text(o);
  g_autoptr(WhOutputSet) set = wh_output_set_new(dir, error);
  ok = set && wh_output_set_add(set, "flows.csv", csv->str, error) &&
       wh_output_set_add(set, "summary.json", summary, error) &&
       (!wormhole || wh_output_set_add(set, "wormhole-ns3.json", wormhole, error)) &&
       wh_output_set_commit(set, error);
  g_string_free(csv, TRUE);
  if (ok && !quiet)
    printf("engine     ns-3 3.37: %u of %u flows completed, %.3f us simulated, %" G_GUINT64_FORMAT
           " events and %" G_GUINT64_FORMAT " link traversals in %.3f s\n"
           "outputs    %s/summary.json, %s/flows.csv\n",
           done, tp->n_flows, (double)st.end_ps * 1e-6, (guint64)st.events,
           (guint64)st.link_traversals, wall, dir, dir);
  return ok;
}

/* --ns3-marking dequeue: the data band of every port marks a data packet as it leaves
 * when more than K full frames remain behind it, as the native wh::RedQueueDisc does
 * with Kmin = Kmax = K (there on bytes; here on packets of one full frame). */
typedef struct {
  uint32_t *k_pkts; /* per link */
  uint64_t marks;
} DequeueMarking;

static WhNs3HookVerdict dequeue_mark(void *ctx, const WhNs3HookPacket *p)
{
  DequeueMarking *m = ctx;
  if (p->band != 1 || p->queue_packets <= m->k_pkts[p->link] || !p->ecn_capable)
    return WH_NS3_HOOK_PASS;
  m->marks++;
  return WH_NS3_HOOK_MARK;
}

/* Plugs the C scheduler in and sets Wormhole's observer up, as `opts` ask. */
static gboolean set_up_engine(const WhRun *run, const WhNs3EngineOptions *opts, GError **error)
{
  const WhSchedulerClass *klass =
      opts->scheduler ? wh_scheduler_class_lookup(opts->scheduler) : NULL;
  int rc;
  if (klass && !opts->wormhole && (rc = wh_ns3_use_c_scheduler(klass)) != 0)
    return fail_ns3(error, "scheduler", rc);
  if (!opts->wormhole)
    return TRUE;
  WhWormholeParams wp;
  if (!wh_wormhole_params_from_config(&wp, run->cfg, "dctcp", FALSE, error))
    return FALSE;
  WhNs3WormholeParams np = {.theta = wp.det.theta,
                            .cwnd_rtt = wp.quantity == WH_QUANTITY_CWND_RTT,
                            .window = wp.det.window,
                            .period_ps = wp.det.period,
                            .idle_window_ps = wp.det.idle_rule ? wp.det.idle_window : 0};
  if ((rc = wh_ns3_wormhole_observe(&np)) != 0)
    return fail_ns3(error, "wormhole", rc);
  return TRUE;
}

/* Adds one ns-3 link per pair of ports, with its queue (RED with ECN, a FIFO, or the
 * dequeue-marking hook when `hooks` is non-NULL, whose thresholds go to `marking`). */
static gboolean add_links(const WhRun *run, WhNs3Sim *sim, uint32_t first, WhNs3Hooks *hooks,
                          DequeueMarking *marking, GError **error)
{
  const WhNet *net = run->net;
  uint32_t frame = run->tp->p.mtu + run->tp->p.header_bytes;
  uint64_t k = wh_config_bytes(run->cfg, "wh::DctcpCc", "Kmin");
  marking->k_pkts = g_new0(uint32_t, net->n_ports / 2 + 1);
  uint32_t link = 0;
  for (uint32_t i = 0; i < net->n_ports; i++) {
    const WhPort *p = &net->port[i];
    if (p->peer < p->id)
      continue;
    WhTime delay = p->delay - wh_net_switch_delay(net, p->peer_node);
    double scale = net->p.ecn_scale ? (double)p->rate_bps / (double)net->p.ecn_ref_rate : 1.0;
    WhNs3QueueConfig q = {
        .kind = net->p.ecn ? WH_NS3_QUEUE_RED_ECN : WH_NS3_QUEUE_FIFO,
        .limit_packets = (uint32_t)MAX(net->p.buffer_bytes / frame, 2),
        .ecn_threshold_pkts = (uint32_t)MAX((double)k * scale / frame, 1),
    };
    if (net->p.ecn && hooks) {
      q.kind = WH_NS3_QUEUE_HOOK;
      q.hooks = hooks;
      marking->k_pkts[link] = q.ecn_threshold_pkts;
    }
    link++;
    int rc = wh_ns3_add_link(sim, first + p->node, first + p->peer_node, p->rate_bps, delay, &q);
    if (rc != 0)
      return fail_ns3(error, "link", rc);
  }
  return TRUE;
}

/* Adds every flow as a DCTCP flow pinned to the native engine's ECMP path, node by
 * node, in both directions. */
static gboolean add_flows(const WhRun *run, WhNs3Sim *sim, uint32_t first, GError **error)
{
  const WhNet *net = run->net;
  for (uint32_t i = 0; i < run->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow((WhTransport *)run->tp, i);
    uint32_t id;
    int rc =
        wh_ns3_add_tcp_flow(sim, first + net->host_node[f->src], first + net->host_node[f->dst],
                            f->size, f->start, WH_NS3_TCP_DCTCP, &id);
    if (rc != 0)
      return fail_ns3(error, "flow", rc);
    uint32_t fwd[65], rev[65];
    for (uint32_t h = 0; h < f->fwd_hops; h++)
      fwd[h] = first + net->port[f->fwd[h]].node;
    fwd[f->fwd_hops] = first + net->port[f->fwd[f->fwd_hops - 1]].peer_node;
    for (uint32_t h = 0; h < f->rev_hops; h++)
      rev[h] = first + net->port[f->rev[h]].node;
    rev[f->rev_hops] = first + net->port[f->rev[f->rev_hops - 1]].peer_node;
    if ((rc = wh_ns3_pin_flow_path(sim, id, fwd, f->fwd_hops + 1u, rev, f->rev_hops + 1u)) != 0)
      return fail_ns3(error, "path", rc);
  }
  return TRUE;
}

gboolean wh_ns3_engine_run(WhRun *run, const char *dir, const WhNs3EngineOptions *opts,
                           GError **error)
{
  if (!wh_ns3_engine_check(run, opts, error))
    return FALSE;
  gboolean hook_marking = opts->marking && strcmp(opts->marking, "dequeue") == 0;
  DequeueMarking marking = {0};
  WhNs3Hooks hooks = {.on_dequeue = dequeue_mark, .ctx = &marking};
  const WhTransport *tp = run->tp;
  WhNs3TcpConfig tcp = {
      .segment_size = tp->p.mtu,
      .initial_cwnd = (uint32_t)wh_config_int(run->cfg, "wh::DctcpCc", "InitialWindow"),
      .socket_buffer = 16u << 20,
      .delack_count = tp->p.ack_every,
      .min_rto_ps = tp->p.rto,
      .sack = 0,
      .timestamps = 0,
  };
  WhNs3Sim *sim = NULL;
  char *report = NULL;
  int rc = wh_ns3_sim_new(&tcp, &sim);
  if (rc)
    return fail_ns3(error, "create", rc);
  gboolean ok = FALSE;
  uint32_t first = 0;
  if (!set_up_engine(run, opts, error))
    goto out;
  if ((rc = wh_ns3_add_nodes(sim, run->net->n_nodes, &first)) != 0) {
    fail_ns3(error, "nodes", rc);
    goto out;
  }
  if (!add_links(run, sim, first, hook_marking ? &hooks : NULL, &marking, error))
    goto out;
  if ((rc = wh_ns3_finalize_routing(sim, WH_NS3_ROUTING_ECMP, run->seed)) != 0) {
    fail_ns3(error, "routing", rc);
    goto out;
  }
  if (!add_flows(run, sim, first, error))
    goto out;
  gint64 t0 = g_get_monotonic_time();
  if ((rc = wh_ns3_run(sim, run->stop)) != 0) {
    fail_ns3(error, "run", rc);
    goto out;
  }
  double wall = (double)(g_get_monotonic_time() - t0) * 1e-6;
  if (opts->wormhole && (rc = wh_ns3_wormhole_report(&report)) != 0) {
    fail_ns3(error, "wormhole report", rc);
    goto out;
  }
  ok = write_outputs(run, sim, dir, opts->quiet, hook_marking ? "dequeue" : "red", marking.marks,
                     report, wall, error);
out:
  g_free(report);
  wh_ns3_sim_free(sim);
  g_free(marking.k_pkts);
  return ok;
}
