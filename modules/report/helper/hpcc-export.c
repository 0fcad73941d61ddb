/* The translator of a run to the HPCC project's ns-3 simulator's inputs; see
 * hpcc-export.h and docs/hpcc-ns3.md (the mapping, key by key). Node ids are the run's
 * node ids, so its host IPs (0x0b000001 + id/256 << 16 + id%256 << 8) and pfc.txt name
 * the same nodes; flows are written in start order (the simulator reads them in file
 * order and needs non-decreasing start times), and flow-map.csv gives each line's flow
 * id and the UDP source port the simulator will give it (10000 upwards per host pair, in
 * file order), by which fct.txt names it. Cost: O(nodes + ports + flows log flows). */
#include "hpcc-export.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "csv.h"
#include "outputs.h"
#include "run-private.h"
#include "wh-error.h"

const char *const wh_hpcc_export_files[] = {"topology.txt", "flow.txt",  "trace.txt", "config.txt",
                                            "flow-map.csv", "notes.txt", NULL};

/* The HPCC simulator's fixed values (rdma-hw.cc attributes third.cc does not set). */
#define HPCC_NACK_INTERVAL_PS 500000000ULL /* "NACK Generation Interval", 500 us */
#define HPCC_DPORT 100
#define HPCC_FIRST_SPORT 10000
#define HPCC_DEFAULT_STOP_S 10.0 /* no events after the last flow: the run ends there */

/* The message of a setting the HPCC simulator has no equivalent for (`what`: a format). */
#define CANNOT_EXPRESS(what) "the HPCC simulator cannot express " what " (see docs/hpcc-ns3.md)"

static void frame_sizes(int mode, uint32_t *data_hdr, uint32_t *ack);

/* CC_MODE of the run's CC, 0 if the HPCC simulator has none. */
static int cc_mode(const WhRun *run)
{
  static const struct {
    const char *name;
    int mode;
  } modes[] = {{"dcqcn", 1}, {"hpcc", 3}, {"timely", 7}, {"dctcp", 8}};
  for (size_t i = 0; i < G_N_ELEMENTS(modes); i++)
    if (strcmp(run->cc->name, modes[i].name) == 0)
      return modes[i].mode;
  return 0;
}

/* The line rate of the hosts' NICs, FALSE if they differ (the simulator's one
 * nic_rate scales PFC's alpha and every rate parameter below). */
static gboolean nic_rate(const WhNet *net, uint64_t *rate)
{
  *rate = 0;
  for (uint32_t h = 0; h < net->n_hosts; h++) {
    const WhNode *n = &net->node[net->host_node[h]];
    uint64_t r = net->port[n->ports[0]].rate_bps;
    if (*rate && r != *rate)
      return FALSE;
    *rate = r;
  }
  return TRUE;
}

static gboolean check_network(const WhRun *run, GError **error)
{
  const WhNet *net = run->net;
  static const uint64_t int_rates[] = {25000000000ULL, 50000000000ULL, 100000000000ULL,
                                       200000000000ULL, 400000000000ULL};
  for (uint32_t i = 0; i < net->n_nodes; i++) {
    const WhNode *n = &net->node[i];
    if (!n->is_switch && n->nports != 1)
      return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                             CANNOT_EXPRESS("host node %u with %u links (one NIC per host)"), i,
                             n->nports);
    if (wh_net_switch_delay(net, i))
      return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                             CANNOT_EXPRESS("a switch forwarding delay (wh::Switch::Delay)"));
  }
  for (uint32_t i = 0; i < net->n_ports; i++) {
    const WhPort *p = &net->port[i];
    if (p->delay % 1000)
      return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                             CANNOT_EXPRESS("the link delay of %" PRIu64
                                            " ps between nodes %u and %u (whole "
                                            "nanoseconds only: its time resolution)"),
                             (uint64_t)p->delay, p->node, p->peer_node);
    gboolean ok = strcmp(run->cc->name, "hpcc") != 0;
    for (size_t k = 0; k < G_N_ELEMENTS(int_rates) && !ok; k++)
      ok = p->rate_bps == int_rates[k];
    if (!ok)
      return wh_error_set_at(
          error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
          CANNOT_EXPRESS("a %" PRIu64 " b/s link with cc=\"hpcc\" (its INT records encode 25, "
                         "50, 100, 200 or 400 Gb/s only)"),
          p->rate_bps);
  }
  uint64_t r;
  if (!nic_rate(net, &r))
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("hosts with NICs of different rates"));
  return TRUE;
}

static gboolean check_switch(const WhRun *run, GError **error)
{
  const WhNetParams *p = &run->net->p;
  if (!p->pfc)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
        CANNOT_EXPRESS("PFC off (wh::Switch::PfcEnabled=false): its switches always run PFC"));
  if (!p->pfc_dynamic)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
        CANNOT_EXPRESS("static PFC thresholds (wh::Switch::PfcThreshold=static): its switch MMU "
                       "has dynamic thresholds only"));
  double shift = -log2(p->pfc_alpha);
  if (fabs(shift - round(shift)) > 1e-9 || shift < 0 || shift > 16)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
        CANNOT_EXPRESS("wh::Switch::PfcAlpha=%g (its MMU divides by a power of two: 1/2^k)"),
        p->pfc_alpha);
  if (p->buffer_bytes % (1024 * 1024))
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("wh::Switch::BufferSize=%" PRIu64
                                          " B (BUFFER_SIZE is whole MiB: use "
                                          "e.g. 32MiB)"),
                           p->buffer_bytes);
  if (p->delay_jitter)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("link delay jitter (wh::Link::DelayJitter)"));
  return TRUE;
}

static gboolean check_transport(const WhRun *run, GError **error)
{
  const WhTransportParams *t = &run->tp->p;
  if (t->ack_every != 1)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
        CANNOT_EXPRESS("delayed ACKs (wh::RdmaFlow::AckEvery=%u; it acknowledges every packet "
                       "here)"),
        t->ack_every);
  if (t->nack_interval != HPCC_NACK_INTERVAL_PS)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
        CANNOT_EXPRESS("wh::RdmaFlow::NackInterval other than 500us (its NACK interval is fixed)"));
  if (t->window && strcmp(run->cc->name, "hpcc") != 0)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
        CANNOT_EXPRESS(
            "wh::RdmaFlow::Window (its only windows are HPCC's and DCTCP's BDP windows)"));
  if (t->prio < 1 || t->prio > 7)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("wh::RdmaFlow::Priority=%u"), t->prio);
  for (uint32_t i = 0; i < run->tp->n_flows; i++)
    if (wh_transport_flow(run->tp, i)->size > UINT32_MAX)
      return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                             CANNOT_EXPRESS("flow %u of %" PRIu64 " bytes (at most 4 GiB - 1)"), i,
                             wh_transport_flow(run->tp, i)->size);
  return TRUE;
}

static gboolean check_cc(const WhRun *run, GError **error)
{
  const WhConfig *c = run->cfg;
  if (strcmp(run->cc->name, "dcqcn") == 0 &&
      wh_config_double(c, "wh::DcqcnCc", "RateOnFirstCnp") != 1.0)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
        CANNOT_EXPRESS("wh::DcqcnCc::RateOnFirstCnp other than 1 (not in config.txt)"));
  if (strcmp(run->cc->name, "hpcc") == 0 && wh_config_time(c, "wh::HpccCc", "BaseRtt"))
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("wh::HpccCc::BaseRtt (T comes from its topology)"));
  if (strcmp(run->cc->name, "timely") != 0)
    return TRUE;
  /* TIMELY's parameters are attributes third.cc leaves at their defaults */
  static const struct {
    const char *param;
    double value;
  } fixed[] = {{"Alpha", 0.875}, {"Beta", 0.8}, {"HaiThreshold", 5}};
  static const struct {
    const char *param;
    WhTime value;
  } times[] = {{"TLow", 50000000}, {"THigh", 500000000}, {"MinRtt", 20000000}};
  for (size_t i = 0; i < G_N_ELEMENTS(fixed); i++) {
    double v = strcmp(fixed[i].param, "HaiThreshold") == 0
                   ? (double)wh_config_int(c, "wh::TimelyCc", fixed[i].param)
                   : wh_config_double(c, "wh::TimelyCc", fixed[i].param);
    if (v != fixed[i].value)
      return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                             CANNOT_EXPRESS("wh::TimelyCc::%s other than %g (fixed there)"),
                             fixed[i].param, fixed[i].value);
  }
  for (size_t i = 0; i < G_N_ELEMENTS(times); i++)
    if (wh_config_time(c, "wh::TimelyCc", times[i].param) != times[i].value)
      return wh_error_set_at(
          error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
          CANNOT_EXPRESS("wh::TimelyCc::%s other than %" PRIu64 " us (fixed there)"),
          times[i].param, (uint64_t)(times[i].value / 1000000));
  if (wh_config_bool(c, "wh::TimelyCc", "Patched"))
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("the patched TIMELY (wh::TimelyCc::Patched=true)"));
  return TRUE;
}

gboolean wh_hpcc_export_check(const WhRun *run, GError **error)
{
  if (run->workload)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("a training workload (flows start when ops end)"));
  if (run->net->router.choose)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
        CANNOT_EXPRESS("adaptive routing (its switches hash flows over equal paths)"));
  if (cc_mode(run) == 0)
    return wh_error_set_at(
        error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
        CANNOT_EXPRESS("the congestion control \"%s\" (it runs dcqcn, hpcc, timely, dctcp)"),
        run->cc->name);
  if (run->tp->n_flows == 0)
    return wh_error_set_at(error, WH_SCENARIO_ERROR, WH_SCENARIO_ERROR_VALUE, run->sc->path, 0,
                           CANNOT_EXPRESS("a scenario without flows"));
  return check_network(run, error) && check_switch(run, error) && check_transport(run, error) &&
         check_cc(run, error);
}

/* "100Gbps"-style rate and "1000ns"-style delay, as its DataRate and Time parse them. */
static void append_rate(GString *s, uint64_t bps)
{
  g_string_append_printf(s, "%" PRIu64 "bps", bps);
}

static char *topology_text(const WhNet *net)
{
  GString *s = g_string_new(NULL);
  uint32_t links = 0;
  for (uint32_t i = 0; i < net->n_ports; i++)
    links += net->port[i].id < net->port[i].peer;
  g_string_append_printf(s, "%u %u %u\n", net->n_nodes, net->n_switches, links);
  const char *sep = "";
  for (uint32_t i = 0; i < net->n_nodes; i++)
    if (net->node[i].is_switch) {
      g_string_append_printf(s, "%s%u", sep, i);
      sep = " ";
    }
  g_string_append_c(s, '\n');
  for (uint32_t i = 0; i < net->n_ports; i++) {
    const WhPort *p = &net->port[i];
    if (p->id > p->peer)
      continue;
    g_string_append_printf(s, "%u %u ", p->node, p->peer_node);
    append_rate(s, p->rate_bps);
    g_string_append_printf(s, " %" PRIu64 "ns 0\n", (uint64_t)(p->delay / 1000));
  }
  return g_string_free(s, FALSE);
}

static int compare_start(gconstpointer a, gconstpointer b, gpointer data)
{
  WhTransport *tp = data;
  const WhFlow *fa = wh_transport_flow(tp, *(const uint32_t *)a);
  const WhFlow *fb = wh_transport_flow(tp, *(const uint32_t *)b);
  if (fa->start != fb->start)
    return fa->start < fb->start ? -1 : 1;
  return fa->id < fb->id ? -1 : fa->id > fb->id;
}

/* The unloaded latency of an ACK from the flow's receiver back to its sender (its
 * reverse path's delays and serializations): its fct.txt times a flow to the last ACK,
 * the native engine to the last byte's delivery, so this is what separates them. */
static WhTime ack_return(const WhRun *run, const WhFlow *f)
{
  uint32_t hdr, ack;
  frame_sizes(cc_mode(run), &hdr, &ack);
  WhTime t = 0;
  for (uint16_t h = 0; h < f->rev_hops; h++) {
    const WhPort *p = &run->net->port[f->rev[h]];
    t += p->delay + (WhTime)((double)ack * 8e12 / (double)p->rate_bps);
  }
  return t;
}

/* flow.txt and flow-map.csv: the flows in start order (ties in id order). */
static void flow_texts(const WhRun *run, char **flow_txt, char **map_csv)
{
  WhTransport *tp = run->tp;
  const WhNet *net = run->net;
  g_autofree uint32_t *order = g_new(uint32_t, tp->n_flows);
  for (uint32_t i = 0; i < tp->n_flows; i++)
    order[i] = i;
  g_qsort_with_data(order, (gint)tp->n_flows, sizeof(uint32_t), compare_start, tp);
  g_autoptr(GHashTable) ports = g_hash_table_new(g_int64_hash, g_int64_equal);
  g_autoptr(GArray) keys = g_array_sized_new(FALSE, FALSE, sizeof(gint64), tp->n_flows);
  GString *flows = g_string_new(NULL), *map = g_string_new(NULL);
  g_string_append_printf(flows, "%u\n", tp->n_flows);
  g_string_append(map, "line,flow_id,src_node,dst_node,sport,bytes,start_ps,ack_return_ps\n");
  for (uint32_t k = 0; k < tp->n_flows; k++) {
    const WhFlow *f = wh_transport_flow(tp, order[k]);
    uint32_t src = net->host_node[f->src], dst = net->host_node[f->dst];
    gint64 key = ((gint64)src << 32) | dst;
    g_array_append_val(keys, key);
    gint64 *kp = &g_array_index(keys, gint64, keys->len - 1);
    uint32_t sport = HPCC_FIRST_SPORT + GPOINTER_TO_UINT(g_hash_table_lookup(ports, kp));
    /* the array does not move: it was sized for every flow */
    g_hash_table_insert(ports, kp, GUINT_TO_POINTER(sport - HPCC_FIRST_SPORT + 1));
    g_string_append_printf(flows, "%u %u %u %u %" PRIu64 " %.12f\n", src, dst, f->prio, HPCC_DPORT,
                           f->size, (double)f->start * 1e-12);
    const char *id = order[k] < run->n_flow_ids ? run->flow_ids[order[k]] : NULL;
    g_autofree char *fallback = g_strdup_printf("%u", order[k]);
    g_string_append_printf(map, "%u,", k);
    wh_csv_field(map, id ? id : fallback);
    g_string_append_printf(map, ",%u,%u,%u,%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", src, dst, sport,
                           f->size, (uint64_t)f->start, (uint64_t)ack_return(run, f));
  }
  *flow_txt = g_string_free(flows, FALSE);
  *map_csv = g_string_free(map, FALSE);
}

/* The largest base RTT over the flows as the simulator computes it (propagation both
 * ways plus one MTU payload's serialization per forward hop), in ps. */
static WhTime max_base_rtt(const WhRun *run)
{
  WhTime best = 0;
  for (uint32_t i = 0; i < run->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(run->tp, i);
    WhTime t = 0;
    for (uint16_t h = 0; h < f->fwd_hops; h++) {
      const WhPort *p = &run->net->port[f->fwd[h]];
      t += 2 * p->delay + (WhTime)((double)run->tp->p.mtu * 8e12 / (double)p->rate_bps);
    }
    best = MAX(best, t);
  }
  return best;
}

/* Bytes the simulator puts around a data payload (PPP 2, IPv4 20, UDP 8, SeqTs 6, INT:
 * 5 hops x 8 + 2 with HPCC, a timestamp of 8 with TIMELY) and in an ACK (padded to 26
 * bytes above IPv4, which its 12-byte qbb header and INT overrun with HPCC). */
static void frame_sizes(int mode, uint32_t *data_hdr, uint32_t *ack)
{
  uint32_t int_bytes = mode == 3 ? 42 : mode == 7 ? 8 : 0;
  *data_hdr = 36 + int_bytes;
  *ack = MAX(26u, 12 + int_bytes) + 22;
}

static double scaled(const WhConfig *c, const char *type, const char *param, uint64_t nic)
{
  double v = (double)wh_config_rate(c, type, param);
  if (wh_config_bool(c, type, "ScaleWithRate"))
    v *= (double)nic / (double)wh_config_rate(c, type, "RefRate");
  return v;
}

/* KMAX_MAP, KMIN_MAP, PMAX_MAP over the switch port rates, in its units (1000 B). */
static void ecn_maps(const WhRun *run, GString *s, GString *notes)
{
  const WhNetParams *p = &run->net->p;
  g_autoptr(GArray) rates = g_array_new(FALSE, FALSE, sizeof(uint64_t));
  for (uint32_t i = 0; i < run->net->n_ports; i++) {
    const WhPort *port = &run->net->port[i];
    gboolean seen = !run->net->node[port->node].is_switch;
    for (guint k = 0; k < rates->len && !seen; k++)
      seen = g_array_index(rates, uint64_t, k) == port->rate_bps;
    if (!seen)
      g_array_append_val(rates, port->rate_bps);
  }
  static const char *const keys[] = {"KMAX_MAP", "KMIN_MAP", "PMAX_MAP"};
  for (int k = 0; k < 3; k++) {
    g_string_append_printf(s, "%s %u", keys[k], rates->len);
    for (guint i = 0; i < rates->len; i++) {
      uint64_t r = g_array_index(rates, uint64_t, i);
      double scale = p->ecn_scale ? (double)r / (double)p->ecn_ref_rate : 1.0;
      uint64_t bytes = (uint64_t)((double)(k == 0 ? p->kmax : p->kmin) * scale);
      if (k == 2)
        g_string_append_printf(s, " %" PRIu64 " %g", r, p->pmax);
      else
        g_string_append_printf(s, " %" PRIu64 " %" PRIu64, r, (bytes + 500) / 1000);
      if (k < 2 && bytes % 1000)
        g_string_append_printf(notes,
                               "%s at %" PRIu64 " b/s: %" PRIu64 " B rounded to %" PRIu64
                               " KB (its unit is 1000 B)\n",
                               keys[k], r, bytes, (bytes + 500) / 1000);
    }
    g_string_append_c(s, '\n');
  }
}

/* The keys of the CCs' own parameters (written for every CC: unused ones too). */
static void cc_keys(const WhRun *run, GString *s, uint64_t nic)
{
  const WhConfig *c = run->cfg;
  const char *cc = run->cc->name;
  gboolean hp = strcmp(cc, "hpcc") == 0, tm = strcmp(cc, "timely") == 0,
           dt = strcmp(cc, "dctcp") == 0;
  g_string_append_printf(s, "ALPHA_RESUME_INTERVAL %.6f\n",
                         wh_config_time(c, "wh::DcqcnCc", "AlphaInterval") * 1e-6);
  g_string_append_printf(s, "RATE_DECREASE_INTERVAL %.6f\n",
                         wh_config_time(c, "wh::DcqcnCc", "DecreaseInterval") * 1e-6);
  g_string_append_printf(s, "CLAMP_TARGET_RATE %d\n",
                         wh_config_bool(c, "wh::DcqcnCc", "ClampTargetRate"));
  g_string_append_printf(s, "RP_TIMER %.6f\n", wh_config_time(c, "wh::DcqcnCc", "RpTimer") * 1e-6);
  g_string_append_printf(s, "EWMA_GAIN %.10g\n",
                         wh_config_double(c, dt ? "wh::DctcpCc" : "wh::DcqcnCc", "G"));
  g_string_append_printf(s, "FAST_RECOVERY_TIMES %" PRId64 "\n",
                         wh_config_int(c, "wh::DcqcnCc", "FastRecoveryTimes"));
  const char *type = hp ? "wh::HpccCc" : tm ? "wh::TimelyCc" : "wh::DcqcnCc";
  double ai = scaled(c, type, hp ? "Wai" : "Rai", nic);
  double hai = hp ? ai : scaled(c, type, "Rhai", nic);
  g_string_append_printf(s, "RATE_AI %.0fbps\nRATE_HAI %.0fbps\n", ai, hai);
  g_string_append_printf(s, "MIN_RATE %" PRIu64 "bps\n",
                         wh_config_rate(c, dt ? "wh::DcqcnCc" : type, "MinRate"));
  /* DCTCP adds one MSS per RTT: as a rate, MSS over the largest base RTT */
  g_string_append_printf(s, "DCTCP_RATE_AI %.0fbps\n",
                         (double)run->tp->p.mtu * 8e12 / (double)MAX(max_base_rtt(run), 1));
  g_string_append_printf(s, "HAS_WIN %d\nGLOBAL_T 0\nVAR_WIN %d\nFAST_REACT %d\n",
                         hp ? wh_config_bool(c, "wh::HpccCc", "UseWindow") : dt, hp || dt,
                         hp && wh_config_bool(c, "wh::HpccCc", "FastReact"));
  g_string_append_printf(s, "U_TARGET %.10g\nMI_THRESH %" PRId64 "\n",
                         wh_config_double(c, "wh::HpccCc", "Eta"),
                         wh_config_int(c, "wh::HpccCc", "MaxStage"));
}

static char *config_text(const WhRun *run, GString *notes)
{
  const WhNetParams *np = &run->net->p;
  uint64_t nic;
  nic_rate(run->net, &nic);
  double stop_s = run->stop ? (double)run->stop * 1e-12 : HPCC_DEFAULT_STOP_S;
  uint64_t after_ns = (uint64_t)(stop_s * 1e9) + 1; /* the queue monitor never runs */
  GString *s = g_string_new(NULL);
  g_string_append_printf(s, "ENABLE_QCN %d\nUSE_DYNAMIC_PFC_THRESHOLD 1\n", np->ecn);
  g_string_append_printf(s, "PACKET_PAYLOAD_SIZE %u\n", run->tp->p.mtu);
  g_string_append(s, "TOPOLOGY_FILE topology.txt\nFLOW_FILE flow.txt\nTRACE_FILE trace.txt\n"
                     "TRACE_OUTPUT_FILE mix.tr\nFCT_OUTPUT_FILE fct.txt\n"
                     "PFC_OUTPUT_FILE pfc.txt\n");
  g_string_append_printf(s, "SIMULATOR_STOP_TIME %.12f\n", stop_s);
  g_string_append_printf(s, "CC_MODE %d\n", cc_mode(run));
  cc_keys(run, s, nic);
  /* INT's queue field counts 17 bits of 80 B x INT_MULTI: the finest unit that holds a
   * full switch buffer (the byte counter's wrap is handled there) */
  uint64_t unit = 80ULL << 17;
  g_string_append_printf(s, "INT_MULTI %" PRIu64 "\n",
                         MAX((uint64_t)1, (np->buffer_bytes + unit - 1) / unit));
  g_string_append(s, "MULTI_RATE 0\nSAMPLE_FEEDBACK 0\nPINT_LOG_BASE 1.05\nPINT_PROB 1.0\n"
                     "ERROR_RATE_PER_LINK 0.0000\nL2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\n"
                     "L2_BACK_TO_ZERO 0\nRATE_BOUND 1\nACK_HIGH_PRIO 1\nLINK_DOWN 0 0 0\n"
                     "ENABLE_TRACE 0\nPAUSE_TIME 5\n");
  ecn_maps(run, s, notes);
  g_string_append_printf(s, "BUFFER_SIZE %" PRIu64 "\n", np->buffer_bytes / (1024 * 1024));
  g_string_append_printf(
      s, "QLEN_MON_FILE qlen.txt\nQLEN_MON_START %" PRIu64 "\nQLEN_MON_END %" PRIu64 "\n", after_ns,
      after_ns);
  return g_string_free(s, FALSE);
}

/* The mappings that are not exact, for notes.txt (docs/hpcc-ns3.md gives their sizes). */
static void model_notes(const WhRun *run, GString *n)
{
  const WhTransportParams *t = &run->tp->p;
  uint32_t hdr, ack;
  frame_sizes(cc_mode(run), &hdr, &ack);
  if (t->header_bytes != hdr)
    g_string_append_printf(n,
                           "data frames: %u header bytes here, %u there "
                           "(wh::RdmaFlow::HeaderBytes=%uB matches)\n",
                           t->header_bytes, hdr, hdr);
  if (t->ctrl_bytes != ack)
    g_string_append_printf(n,
                           "ACK frames: %u bytes here, %u there (wh::RdmaFlow::ControlBytes=%uB "
                           "matches)\n",
                           t->ctrl_bytes, ack, ack);
  if (strcmp(run->cc->name, "dcqcn") == 0 && t->cnp_interval)
    g_string_append(n, "CNPs: one per CnpInterval here; there every ACK of a marked packet "
                       "carries one (wh::RdmaFlow::CnpInterval=0 is closest)\n");
  if (strcmp(run->cc->name, "dctcp") == 0)
    g_string_append(n, "DCTCP: a window-based sender here, a rate-based one there (window = "
                       "rate x base RTT, additive increase DCTCP_RATE_AI); InitialWindow, "
                       "MinWindow, LossWindow, MaxWindow and AlphaOnInit have no counterpart\n");
  if (strcmp(run->cc->name, "hpcc") == 0)
    g_string_append(n, "HPCC: T per flow from its route here (ACK serialization included); "
                       "there per host pair, propagation twice plus MTU payload per hop\n");
  g_string_append(n, "PFC: headroom 3 x rate x delay per port and 4 KiB reserved per port and "
                     "priority there; PfcAlpha halves for each doubling of a port's rate over "
                     "the NIC rate there\n");
  if (strcmp(run->cc->name, "hpcc") == 0 || strcmp(run->cc->name, "dctcp") == 0)
    g_string_append(
        n, "window: there the BDP of the slowest link on the path times rate / NIC "
           "rate, here rate x T: half as large there where the path's slowest link has half "
           "the NIC rate\n");
  if (strcmp(run->cc->name, "hpcc") == 0)
    g_string_append(n, "INT: queue lengths in units of 80 B x INT_MULTI and byte counters in "
                       "128 B x INT_MULTI there, exact here\n");
  g_string_append(n, "routing: its switches hash (addresses, ports) onto equal-cost paths; "
                     "paths differ from the native ECMP choice where several exist\n");
  g_string_append(n, "retransmission: no timeout there (NACK-driven go-back-N only)\n");
}

gboolean wh_hpcc_export_write(const WhRun *run, const char *dir, char **notes, GError **error)
{
  if (!wh_hpcc_export_check(run, error))
    return FALSE;
  g_autoptr(GString) n = g_string_new(NULL);
  g_autofree char *topo = topology_text(run->net);
  g_autofree char *flows = NULL, *map = NULL;
  flow_texts(run, &flows, &map);
  g_autofree char *config = config_text(run, n);
  model_notes(run, n);
  g_autoptr(WhOutputSet) set = wh_output_set_new_for(dir, wh_hpcc_export_files, error);
  gboolean ok = set && wh_output_set_add(set, "topology.txt", topo, error) &&
                wh_output_set_add(set, "flow.txt", flows, error) &&
                wh_output_set_add(set, "trace.txt", "0\n\n", error) &&
                wh_output_set_add(set, "config.txt", config, error) &&
                wh_output_set_add(set, "flow-map.csv", map, error) &&
                wh_output_set_add(set, "notes.txt", n->str, error) &&
                wh_output_set_commit(set, error);
  if (ok && notes)
    *notes = g_strdup(n->str);
  return ok;
}
