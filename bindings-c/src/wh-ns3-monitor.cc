/* The steady-state monitor for ns-3 and the C API over it; see wh-ns3-monitor.h and
 * wh-ns3-wormhole.h. Ports are the point-to-point devices in NodeList order; a flow
 * is keyed by the 5-tuple of its first packet (its forward direction), and a packet
 * the other way finds it by the reversed tuple. Headers are read from the packet's
 * serialized bytes (PPP, IPv4, TCP or UDP) copied to the stack, so nothing is
 * allocated per packet once a flow is known. */
#include "wh-ns3-monitor.h"
#include "wh-ns3-private.h"
#include "wh-ns3-wormhole.h"

#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>

#include <cmath>
#include <cstdio>
#include <unordered_map>
#include <vector>

extern "C" {
#include "detector-report.h"
#include "steady-detector.h"
}

using namespace ns3;

namespace
{

struct Tuple {
  uint32_t src, dst;
  uint16_t sport, dport;
  uint8_t proto;
  bool operator==(const Tuple &o) const
  {
    return src == o.src && dst == o.dst && sport == o.sport && dport == o.dport && proto == o.proto;
  }
};

struct TupleHash {
  size_t operator()(const Tuple &t) const
  {
    uint64_t h = ((uint64_t)t.src << 32 | t.dst) * 0x9e3779b97f4a7c15ull;
    h ^= ((uint64_t)t.sport << 24 | (uint64_t)t.dport << 8 | t.proto) * 0xbf58476d1ce4e5b9ull;
    return (size_t)(h ^ (h >> 31));
  }
};

/* What the monitor reads of a packet. */
struct Seen {
  Tuple t;
  uint32_t seq;
  uint32_t payload;
  uint8_t flags; /* TCP flags */
  bool ce;       /* ECN Congestion Experienced */
};

enum { TCP_FIN = 1, TCP_SYN = 2 };

struct MFlow {
  Tuple t;
  std::string label;
  uint32_t dst_node;
  uint32_t line_port; /* the port of its first packet: the sender's NIC */
  std::vector<uint32_t> ports;
  uint32_t isn = 0;
  bool have_isn = false, fin = false, ended = false;
  uint32_t fin_off = 0;
  uint64_t delivered = 0, last_sample = 0;
  /* cwnd-rtt: the sending socket's window and smoothed RTT (RFC 6298's 1/8 gain) */
  bool socket = false;
  uint32_t cwnd = 0;
  double srtt_ps = 0;
};

struct MPort {
  uint32_t node;
  double rate_bps;
  uint64_t tx_bytes = 0, last_tx = 0;
  double events = 0;
};

struct MNode {
  uint32_t first_port = 0, n_ports = 0;
  bool rx_watched = false; /* a flow ends here: its devices' PhyRxEnd is connected */
  uint64_t events = 0, last_events = 0;
  uint64_t tx_bytes = 0, last_tx = 0;
};

WhNs3Monitor *g_current;

} // namespace

const char *const wh_ns3_monitor_quantities[] = {"cwnd-rtt", "delivered", nullptr};

struct WhNs3Monitor {
  WhNs3MonitorParams p;
  std::string report;
  bool attached = false, finished = false, taken = false;
  uint64_t ps_per_step = 1;
  uint64_t period_ps = 0, next_tick = 0, last_ps = 0;
  std::vector<MPort> ports;
  std::vector<MNode> nodes;
  std::unordered_map<uint32_t, uint32_t> ip_node;
  std::unordered_map<Tuple, uint32_t, TupleHash> by_tuple;
  std::vector<MFlow> flows;
  std::vector<uint64_t> port_events;   /* counts.port */
  std::vector<Ptr<NetDevice>> devices; /* by port */
  WhEventCounts counts = {};
  WhDetector *det = nullptr;
};

/* ---- packets ---- */

static bool parse(Ptr<const Packet> pkt, Seen *s)
{
  uint8_t b[64];
  uint32_t n = pkt->CopyData(b, sizeof b);
  if (n < 22 || b[0] != 0x00 || b[1] != 0x21 || (b[2] >> 4) != 4) /* PPP: IPv4 */
    return false;
  const uint8_t *ip = b + 2;
  uint32_t ihl = (ip[0] & 15u) * 4, total = (uint32_t)ip[2] << 8 | ip[3];
  const uint8_t *l4 = ip + ihl;
  s->t.proto = ip[9];
  s->t.src = (uint32_t)ip[12] << 24 | (uint32_t)ip[13] << 16 | (uint32_t)ip[14] << 8 | ip[15];
  s->t.dst = (uint32_t)ip[16] << 24 | (uint32_t)ip[17] << 16 | (uint32_t)ip[18] << 8 | ip[19];
  s->ce = (ip[1] & 3u) == 3u;
  s->seq = 0;
  s->flags = 0;
  if (s->t.proto == 6 && n >= 2 + ihl + 20) {
    uint32_t doff = (uint32_t)(l4[12] >> 4) * 4;
    s->seq = (uint32_t)l4[4] << 24 | (uint32_t)l4[5] << 16 | (uint32_t)l4[6] << 8 | l4[7];
    s->flags = l4[13];
    s->payload = total > ihl + doff ? total - ihl - doff : 0;
  } else if (s->t.proto == 17 && n >= 2 + ihl + 8) {
    s->payload = total > ihl + 8 ? total - ihl - 8 : 0;
  } else {
    return false;
  }
  s->t.sport = (uint16_t)(l4[0] << 8 | l4[1]);
  s->t.dport = (uint16_t)(l4[2] << 8 | l4[3]);
  return true;
}

static std::string ip_text(uint32_t a)
{
  char buf[16];
  snprintf(buf, sizeof buf, "%u.%u.%u.%u", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
  return buf;
}

/* The flow of a packet and whether it goes the flow's forward way; -1 if unknown. */
static int64_t find_flow(WhNs3Monitor *m, const Tuple &t, bool *forward)
{
  auto it = m->by_tuple.find(t);
  if (it != m->by_tuple.end()) {
    *forward = true;
    return it->second;
  }
  Tuple r = {t.dst, t.src, t.dport, t.sport, t.proto};
  it = m->by_tuple.find(r);
  if (it == m->by_tuple.end())
    return -1;
  *forward = false;
  return it->second;
}

static WhTime now_ps(const WhNs3Monitor *m)
{
  return (WhTime)Simulator::Now().GetTimeStep() * m->ps_per_step;
}

/* Shares each node's events since the last call among its devices by the bytes they
 * transmitted meanwhile (events of a node that sent nothing wait for its next bytes). */
static void refresh_events(WhNs3Monitor *m)
{
  for (MNode &n : m->nodes) {
    uint64_t dev = n.events - n.last_events, db = n.tx_bytes - n.last_tx;
    if (dev == 0 || db == 0)
      continue;
    for (uint32_t i = 0; i < n.n_ports; i++) {
      uint32_t p = n.first_port + i;
      MPort &port = m->ports[p];
      port.events += (double)dev * (double)(port.tx_bytes - port.last_tx) / (double)db;
      port.last_tx = port.tx_bytes;
      m->port_events[p] = (uint64_t)std::llround(port.events);
    }
    n.last_events = n.events;
    n.last_tx = n.tx_bytes;
  }
}

static void on_cwnd(WhNs3Monitor *m, uint32_t flow, uint32_t, uint32_t cwnd)
{
  m->flows[flow].cwnd = cwnd;
}

static void on_rtt(WhNs3Monitor *m, uint32_t flow, Time, Time rtt)
{
  MFlow &f = m->flows[flow];
  double sample = (double)rtt.GetPicoSeconds();
  f.srtt_ps = f.srtt_ps > 0 ? f.srtt_ps + (sample - f.srtt_ps) / 8 : sample;
}

/* The TCP socket on `node` bound to local port `sport`, to read its window and RTT
 * through trace sources; its window starts at InitialCwnd segments. */
static void watch_socket(WhNs3Monitor *m, uint32_t id, uint32_t node, uint16_t sport)
{
  Ptr<TcpL4Protocol> tcp = NodeList::GetNode(node)->GetObject<TcpL4Protocol>();
  if (!tcp)
    return;
  ObjectVectorValue sockets;
  tcp->GetAttribute("SocketList", sockets);
  for (auto it = sockets.Begin(); it != sockets.End(); ++it) {
    Ptr<TcpSocketBase> sock = DynamicCast<TcpSocketBase>(it->second);
    Address a;
    if (!sock || sock->GetSockName(a) != 0 || !InetSocketAddress::IsMatchingType(a) ||
        InetSocketAddress::ConvertFrom(a).GetPort() != sport)
      continue;
    UintegerValue segment, initial;
    sock->GetAttribute("SegmentSize", segment);
    sock->GetAttribute("InitialCwnd", initial);
    MFlow &f = m->flows[id];
    f.cwnd = (uint32_t)(segment.Get() * initial.Get());
    f.socket =
        sock->TraceConnectWithoutContext("CongestionWindow", MakeBoundCallback(&on_cwnd, m, id)) &&
        sock->TraceConnectWithoutContext("RTT", MakeBoundCallback(&on_rtt, m, id));
    return;
  }
}

static void on_rx(WhNs3Monitor *m, uint32_t port, Ptr<const Packet> pkt);

/* Connects PhyRxEnd of a flow's receiving node (only there: no cost at switches). */
static void watch_receiver(WhNs3Monitor *m, uint32_t node)
{
  if (node >= m->nodes.size() || m->nodes[node].rx_watched)
    return;
  MNode &n = m->nodes[node];
  n.rx_watched = true;
  for (uint32_t p = n.first_port; p < n.first_port + n.n_ports; p++)
    m->devices[p]->TraceConnectWithoutContext("PhyRxEnd", MakeBoundCallback(&on_rx, m, p));
}

static uint32_t new_flow(WhNs3Monitor *m, const Seen &s, uint32_t port)
{
  uint32_t id = (uint32_t)m->flows.size();
  MFlow f;
  f.t = s.t;
  f.label = ip_text(s.t.src) + ":" + std::to_string(s.t.sport) + ">" + ip_text(s.t.dst) + ":" +
            std::to_string(s.t.dport) + (s.t.proto == 6 ? "/tcp" : "/udp");
  auto it = m->ip_node.find(s.t.dst);
  f.dst_node = it == m->ip_node.end() ? UINT32_MAX : it->second;
  f.line_port = port;
  f.ports.push_back(port);
  if (s.t.proto == 6 && (s.flags & TCP_SYN)) {
    f.isn = s.seq;
    f.have_isn = true;
  }
  m->flows.push_back(std::move(f));
  m->by_tuple.emplace(s.t, id);
  watch_receiver(m, m->flows[id].dst_node);
  if (m->p.cwnd_rtt && s.t.proto == 6)
    watch_socket(m, id, m->ports[port].node, s.t.sport);
  refresh_events(m);
  wh_detector_flow_start(m->det, id, &port, 1, now_ps(m));
  return id;
}

static void on_tx(WhNs3Monitor *m, uint32_t port, Ptr<const Packet> pkt)
{
  if (m->finished)
    return;
  MPort &p = m->ports[port];
  p.tx_bytes += pkt->GetSize();
  m->nodes[p.node].tx_bytes += pkt->GetSize();
  Seen s;
  if (!parse(pkt, &s))
    return;
  bool fwd;
  int64_t id = find_flow(m, s.t, &fwd);
  if (id < 0) {
    new_flow(m, s, port);
    return;
  }
  MFlow &f = m->flows[id];
  if (s.ce)
    wh_detector_port_signal(m->det, port, now_ps(m));
  if (f.ended)
    return;
  for (uint32_t q : f.ports) {
    if (q == port)
      return;
  }
  f.ports.push_back(port);
  refresh_events(m);
  wh_detector_flow_reroute(m->det, (uint32_t)id, f.ports.data(), (uint32_t)f.ports.size(),
                           now_ps(m));
}

static void on_rx(WhNs3Monitor *m, uint32_t port, Ptr<const Packet> pkt)
{
  if (m->finished)
    return;
  Seen s;
  if (!parse(pkt, &s))
    return;
  bool fwd;
  int64_t id = find_flow(m, s.t, &fwd);
  if (id < 0 || !fwd)
    return;
  MFlow &f = m->flows[id];
  if (f.ended || m->ports[port].node != f.dst_node)
    return;
  if (s.t.proto == 17) {
    f.delivered += s.payload;
    return;
  }
  if (s.flags & TCP_SYN) {
    f.isn = s.seq;
    f.have_isn = true;
    return;
  }
  if (!f.have_isn) { /* attached after the handshake: count from the first segment seen */
    f.isn = s.seq - 1;
    f.have_isn = true;
  }
  /* offset of the segment's end from the first data byte, wrap-safe below 2 GB jumps */
  uint32_t end = s.seq - f.isn - 1 + s.payload;
  int32_t ahead = (int32_t)(end - (uint32_t)f.delivered);
  if (ahead > 0)
    f.delivered += (uint64_t)ahead;
  if (s.flags & TCP_FIN) {
    f.fin = true;
    f.fin_off = end;
  }
  if (f.fin && (uint32_t)f.delivered == f.fin_off) {
    f.ended = true;
    refresh_events(m);
    wh_detector_flow_end(m->det, (uint32_t)id, now_ps(m));
  }
}

/* ---- detector glue ---- */

static uint64_t delivered(void *ctx, uint32_t flow)
{
  return static_cast<WhNs3Monitor *>(ctx)->flows[flow].delivered;
}

static const char *label(void *ctx, uint32_t flow, char buf[24])
{
  (void)buf;
  return static_cast<WhNs3Monitor *>(ctx)->flows[flow].label.c_str();
}

/* Finds every point-to-point device through a Config path and connects to it. */
static void attach(WhNs3Monitor *m)
{
  m->attached = true;
  g_current = m;
  m->ps_per_step = (uint64_t)TimeStep(1).GetPicoSeconds();
  if (m->ps_per_step == 0)
    m->ps_per_step = 1;
  m->period_ps = (uint64_t)m->p.period.GetPicoSeconds();
  m->nodes.resize(NodeList::GetNNodes());
  Config::MatchContainer devs =
      Config::LookupMatches("/NodeList/*/DeviceList/*/$ns3::PointToPointNetDevice");
  for (uint32_t i = 0; i < devs.GetN(); i++) {
    Ptr<NetDevice> dev = DynamicCast<NetDevice>(devs.Get(i));
    uint32_t node = dev->GetNode()->GetId();
    MPort port;
    port.node = node;
    DataRateValue rate;
    dev->GetAttribute("DataRate", rate);
    port.rate_bps = (double)rate.Get().GetBitRate();
    if (m->nodes[node].n_ports == 0)
      m->nodes[node].first_port = (uint32_t)m->ports.size();
    m->nodes[node].n_ports++;
    uint32_t id = (uint32_t)m->ports.size();
    m->ports.push_back(port);
    m->devices.push_back(dev);
    dev->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&on_tx, m, id));
  }
  for (uint32_t n = 0; n < NodeList::GetNNodes(); n++) {
    Ptr<Ipv4> ip = NodeList::GetNode(n)->GetObject<Ipv4>();
    for (uint32_t i = 0; ip && i < ip->GetNInterfaces(); i++) {
      for (uint32_t a = 0; a < ip->GetNAddresses(i); a++)
        m->ip_node.emplace(ip->GetAddress(i, a).GetLocal().Get(), n);
    }
  }
  m->port_events.assign(m->ports.size(), 0);
  m->counts.port = m->port_events.data();
  m->counts.n_ports = (uint32_t)m->ports.size();
  WhDetectorParams dp = {};
  dp.theta = m->p.theta;
  dp.window = m->p.window;
  dp.period = m->period_ps;
  dp.idle_rule = m->p.idle_window.IsStrictlyPositive();
  dp.idle_window = (WhTime)m->p.idle_window.GetPicoSeconds();
  WhDetectorSource src = {delivered, label, m};
  m->det = wh_detector_new(&dp, (uint32_t)m->ports.size(), &src, &m->counts);
}

/* One tick at time t: a delivered-rate sample of every active flow. */
static void tick(WhNs3Monitor *m, WhTime t)
{
  double period_s = (double)m->period_ps * 1e-12;
  uint32_t n = wh_detector_n_active(m->det);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t id = wh_detector_active(m->det, i);
    MFlow &f = m->flows[id];
    double rate = (double)(f.delivered - f.last_sample) * 8 / period_s;
    f.last_sample = f.delivered;
    if (f.socket) /* as the native engine: no RTT yet, no rate */
      rate = f.srtt_ps > 0 ? (double)f.cwnd * 8 / (f.srtt_ps * 1e-12) : 0;
    wh_detector_sample(m->det, id, t, rate, rate >= 0.99 * m->ports[f.line_port].rate_bps);
  }
  refresh_events(m);
  wh_detector_tick(m->det, t);
}

void wh_ns3_monitor_before_pop(WhNs3Monitor *m, const WhEvent *next)
{
  /* ns-3 pops the leftover events when the simulation is destroyed after a Stop: they
   * never run, so only pops while it runs count */
  if (next == nullptr || m->finished || Simulator::IsFinished())
    return;
  if (!m->attached)
    attach(m);
  uint32_t ctx = (uint32_t)next->arg;
  if (ctx < m->nodes.size())
    m->nodes[ctx].events++;
  else
    m->counts.other++;
  m->counts.total++;
  WhTime t = (WhTime)next->time * m->ps_per_step;
  m->last_ps = t;
  if (t < m->next_tick)
    return;
  if (wh_detector_n_active(m->det) == 0) {
    m->next_tick = (t / m->period_ps + 1) * m->period_ps;
    return;
  }
  for (; m->next_tick <= t; m->next_tick += m->period_ps)
    tick(m, m->next_tick);
}

/* ---- report ---- */

static void finish(WhNs3Monitor *m)
{
  if (m->finished || !m->attached)
    return;
  m->finished = true;
  refresh_events(m);
  wh_detector_finish(m->det, m->last_ps);
}

static char *report_json(WhNs3Monitor *m)
{
  WhDetectorStats st;
  wh_detector_stats(m->det, &st);
  uint64_t skip = st.events[WH_STEADY_RATE] + st.events[WH_STEADY_IDLE];
  double frac = m->counts.total ? (double)skip / (double)m->counts.total : 0;
  GString *h = g_string_new(NULL);
  g_string_append_printf(
      h,
      "  \"engine\": \"ns-3 3.37\",\n  \"mode\": \"observe\",\n  \"status\": \"ok\",\n"
      "  \"quantity\": \"%s\",\n"
      "  \"theta\": %.6g,\n  \"window\": %u,\n  \"sample_period_ps\": %" G_GUINT64_FORMAT
      ",\n  \"idle_window_ps\": %" G_GUINT64_FORMAT ",\n  \"ports\": %zu,\n  \"nodes\": %zu,\n"
      "  \"events_observed\": %" G_GUINT64_FORMAT ",\n  \"events_estimated_from\": \"events per "
      "node, shared among its devices by bytes transmitted\",\n  \"skippable_event_fraction\": "
      "%.6f,\n  \"estimated_speedup\": %.6f,\n",
      m->p.cwnd_rtt ? "cwnd-rtt" : "delivered", m->p.theta, m->p.window, (guint64)m->period_ps,
      (guint64)m->p.idle_window.GetPicoSeconds(), m->ports.size(), m->nodes.size(), m->counts.total,
      frac, 1.0 / (1.0 - MIN(frac, 0.999999)));
  g_string_append(h, "  \"ns3_flows\": {\"columns\": [\"flow\", \"src\", \"sport\", \"dst\", "
                     "\"dport\", \"proto\", \"delivered_bytes\", \"ports\", \"ended\"], "
                     "\"rows\": [\n");
  for (size_t i = 0; i < m->flows.size(); i++) {
    const MFlow &f = m->flows[i];
    g_string_append_printf(
        h, "    [\"%s\", \"%s\", %u, \"%s\", %u, \"%s\", %" G_GUINT64_FORMAT ", %zu, %s]%s\n",
        f.label.c_str(), ip_text(f.t.src).c_str(), f.t.sport, ip_text(f.t.dst).c_str(), f.t.dport,
        f.t.proto == 6 ? "tcp" : "udp", (guint64)f.delivered, f.ports.size(),
        f.ended ? "true" : "false", i + 1 < m->flows.size() ? "," : "");
  }
  g_string_append(h, "  ]},\n");
  char *json = wh_detector_json(m->det, h->str);
  g_string_free(h, TRUE);
  return json;
}

WhNs3Monitor *wh_ns3_monitor_new(const WhNs3MonitorParams *p, const std::string &report)
{
  WhNs3Monitor *m = new WhNs3Monitor();
  m->p = *p;
  m->report = report;
  return m;
}

static void write_report(const std::string &path, const char *json)
{
  GError *err = nullptr;
  if (!g_file_set_contents(path.c_str(), json, -1, &err)) {
    std::fprintf(stderr, "ns3::WhCScheduler: %s\n", err->message);
    g_error_free(err);
  }
}

void wh_ns3_monitor_refused(const std::string &report, const std::string &why)
{
  std::fprintf(stderr,
               "ns3::WhCScheduler: ns-3 was already used in this process (WH_NS3_EUNUSED): %s; "
               "Class=wormhole runs this simulation without the monitor\n",
               why.c_str());
  if (report.empty())
    return;
  char *json = g_strdup_printf("{\n  \"engine\": \"ns-3 3.37\",\n  \"mode\": \"observe\",\n"
                               "  \"status\": \"WH_NS3_EUNUSED\",\n  \"error\": \"ns-3 was "
                               "already used in this process: %s\"\n}\n",
                               why.c_str());
  write_report(report, json);
  g_free(json);
}

void wh_ns3_monitor_free(WhNs3Monitor *m)
{
  if (g_current == m)
    g_current = nullptr;
  finish(m);
  if (m->attached && !m->taken && !m->report.empty()) {
    char *json = report_json(m);
    write_report(m->report, json);
    g_free(json);
  }
  wh_detector_free(m->det);
  delete m;
}

/* ---- C API ---- */

extern "C" int wh_ns3_wormhole_observe(const WhNs3WormholeParams *p)
{
  if (p == nullptr || !(p->theta >= 0 && p->theta < 1) || p->window < 2 || p->period_ps == 0 ||
      (p->cwnd_rtt != 0 && p->cwnd_rtt != 1))
    return WH_NS3_EINVAL;
  int phase = wh_ns3_sim_phase();
  if (phase != WH_NS3_PHASE_BUILT && phase != WH_NS3_PHASE_RAN && wh_ns3_prior_use(true, nullptr))
    return WH_NS3_EUNUSED;
  if (phase != WH_NS3_PHASE_BUILT || Simulator::GetEventCount() != 0)
    return WH_NS3_ESTATE;
  ObjectFactory f;
  f.SetTypeId("ns3::WhCScheduler");
  f.Set("Class", StringValue("wormhole"));
  f.Set("Report", StringValue(""));
  f.Set("Theta", DoubleValue(p->theta));
  f.Set("Window", UintegerValue(p->window));
  f.Set("SamplePeriod", TimeValue(PicoSeconds(p->period_ps)));
  f.Set("IdleWindow", TimeValue(PicoSeconds(p->idle_window_ps)));
  f.Set("Quantity", StringValue(p->cwnd_rtt ? "cwnd-rtt" : "delivered"));
  Simulator::SetScheduler(f);
  return WH_NS3_OK;
}

extern "C" int wh_ns3_wormhole_report(char **json)
{
  WhNs3Monitor *m = g_current;
  if (json == nullptr)
    return WH_NS3_EINVAL;
  if (m == nullptr || !m->attached || wh_ns3_sim_phase() != WH_NS3_PHASE_RAN)
    return WH_NS3_ESTATE;
  finish(m);
  m->taken = true;
  *json = report_json(m);
  return WH_NS3_OK;
}

extern "C" uint32_t wh_ns3_wormhole_n_flows(void)
{
  return g_current ? (uint32_t)g_current->flows.size() : 0;
}

extern "C" int wh_ns3_wormhole_flow(uint32_t i, WhNs3WormholeFlow *out)
{
  if (out == nullptr || g_current == nullptr || i >= g_current->flows.size())
    return WH_NS3_EINVAL;
  const MFlow &f = g_current->flows[i];
  *out = WhNs3WormholeFlow{f.t.src,
                           f.t.dst,
                           f.t.sport,
                           f.t.dport,
                           f.t.proto,
                           f.delivered,
                           (uint32_t)f.ports.size(),
                           f.ended ? 1 : 0};
  return WH_NS3_OK;
}
