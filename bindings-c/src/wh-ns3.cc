/* The C API over ns-3 3.37; see wh-ns3.h. Each link gets a fresh TrafficControlHelper
 * (a queue disc installed before addresses are assigned, so ns-3 does not add
 * FqCoDel) and its point-to-point devices keep a 1-packet device queue, so queueing
 * happens in the queue disc as in the native engine. Flows use one PacketSink per
 * flow on its own port (10000 + flow id: at most 39152 flows, below ns-3's ephemeral
 * ports); a flow ends when its sink has received every byte. A process that already
 * ran ns-3 (wh-ns3-private.h) gets WH_NS3_EUNUSED before anything is changed. */
#include "wh-ns3.h"
#include "wh-ns3-ecmp.h"
#include "wh-ns3-private.h"

#include <ns3/applications-module.h>
#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>
#include <ns3/traffic-control-module.h>

#include <set>
#include <unordered_map>
#include <vector>

using namespace ns3;

struct WhNs3Flow {
  uint64_t bytes;
  uint64_t start_ps;
  uint16_t port;
  uint64_t received = 0;
  uint64_t finish_ps = 0;
};

struct WhNs3Sim {
  NodeContainer nodes;
  Ipv4AddressHelper addr;
  uint32_t links = 0;
  bool finalized = false;
  bool ran = false;
  std::vector<WhNs3Flow> flows;
  std::unordered_map<uint16_t, uint32_t> port_flow; /* flow port -> flow id */
  uint64_t traversals = 0;
  uint32_t flows_done = 0;
  uint16_t next_port = 10000;
};

namespace ns3
{

/* Sends TCP segments without payload (ACKs, SYN, FIN) to band 0 of a PrioQueueDisc
 * and everything else to band 1, so control packets go strictly before data at every
 * port, as in the native engine. */
class WhControlFilter : public PacketFilter
{
public:
  static TypeId GetTypeId()
  {
    static TypeId tid = TypeId("ns3::WhControlFilter")
                            .SetParent<PacketFilter>()
                            .SetGroupName("TrafficControl")
                            .AddConstructor<WhControlFilter>();
    return tid;
  }

private:
  bool CheckProtocol(Ptr<QueueDiscItem> item) const override
  {
    return DynamicCast<Ipv4QueueDiscItem>(item) != nullptr;
  }
  int32_t DoClassify(Ptr<QueueDiscItem> item) const override
  {
    Ptr<Ipv4QueueDiscItem> ip = DynamicCast<Ipv4QueueDiscItem>(item);
    if (ip->GetHeader().GetProtocol() == 6) {
      TcpHeader h;
      Ptr<Packet> p = ip->GetPacket();
      if (p->PeekHeader(h) && p->GetSize() == h.GetSerializedSize())
        return 0;
    }
    return 1;
  }
};

NS_OBJECT_ENSURE_REGISTERED(WhControlFilter);

/* A FIFO queue disc that calls the C functions of a WhNs3Hooks on enqueue, dequeue and
 * drop (wh-ns3.h): the seam through which C code observes, marks or drops packets
 * inside an ns-3 simulation. Bound to its hooks, link, node and band after install. */
class WhHookQueueDisc : public QueueDisc
{
public:
  static constexpr const char *LIMIT_DROP = "Queue disc limit exceeded";
  static constexpr const char *HOOK_DROP = "Dropped by a C hook";
  static constexpr const char *HOOK_MARK = "Marked by a C hook";

  static TypeId GetTypeId()
  {
    static TypeId tid =
        TypeId("ns3::WhHookQueueDisc")
            .SetParent<QueueDisc>()
            .SetGroupName("TrafficControl")
            .AddConstructor<WhHookQueueDisc>()
            .AddAttribute("MaxSize", "The maximum number of packets accepted by this queue disc",
                          QueueSizeValue(QueueSize("1000p")),
                          MakeQueueSizeAccessor(&QueueDisc::SetMaxSize, &QueueDisc::GetMaxSize),
                          MakeQueueSizeChecker());
    return tid;
  }

  WhHookQueueDisc() : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE) {}

  void Bind(const WhNs3Sim *sim, const WhNs3Hooks *hooks, uint32_t link, uint32_t node,
            uint32_t band)
  {
    m_sim = sim;
    m_hooks = hooks;
    m_link = link;
    m_node = node;
    m_band = band;
  }

private:
  /* the flow of a packet: data goes to the flow's port, ACKs come from it */
  uint32_t FlowOf(Ptr<const Ipv4QueueDiscItem> ip) const
  {
    uint16_t sport = 0, dport = 0;
    Ptr<const Packet> p = ip->GetPacket();
    uint8_t proto = ip->GetHeader().GetProtocol();
    if (proto == 6) {
      TcpHeader h;
      if (p->PeekHeader(h)) {
        sport = h.GetSourcePort();
        dport = h.GetDestinationPort();
      }
    } else if (proto == 17) {
      UdpHeader h;
      if (p->PeekHeader(h)) {
        sport = h.GetSourcePort();
        dport = h.GetDestinationPort();
      }
    }
    auto it = m_sim->port_flow.find(dport);
    if (it == m_sim->port_flow.end())
      it = m_sim->port_flow.find(sport);
    return it == m_sim->port_flow.end() ? WH_NS3_NO_FLOW : it->second;
  }

  void Describe(Ptr<const QueueDiscItem> item, WhNs3HookPacket &p)
  {
    p.link = m_link;
    p.node = m_node;
    p.band = m_band;
    p.flow = WH_NS3_NO_FLOW;
    p.ecn_capable = 0;
    Ptr<const Ipv4QueueDiscItem> ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    if (ip) {
      p.flow = FlowOf(ip);
      p.ecn_capable = ip->GetHeader().GetEcn() != Ipv4Header::ECN_NotECT;
    }
    p.bytes = item->GetSize();
    p.queue_packets = GetInternalQueue(0)->GetNPackets();
    p.queue_bytes = GetInternalQueue(0)->GetNBytes();
    p.now_ps = (uint64_t)Simulator::Now().GetPicoSeconds();
  }

  void Dropped(Ptr<const QueueDiscItem> item, const WhNs3HookPacket *seen)
  {
    if (m_hooks == nullptr || m_hooks->on_drop == nullptr)
      return;
    WhNs3HookPacket p;
    if (seen)
      p = *seen;
    else
      Describe(item, p);
    m_hooks->on_drop(m_hooks->ctx, &p);
  }

  /* Asks a hook about a packet and applies its verdict; false if it dropped it. */
  bool Ask(WhNs3HookVerdict (*hook)(void *, const WhNs3HookPacket *), Ptr<QueueDiscItem> item,
           bool enqueue)
  {
    if (hook == nullptr)
      return true;
    WhNs3HookPacket p;
    Describe(item, p);
    WhNs3HookVerdict v = hook(m_hooks->ctx, &p);
    if (v == WH_NS3_HOOK_DROP) {
      Dropped(item, &p);
      if (enqueue)
        DropBeforeEnqueue(item, HOOK_DROP);
      else
        DropAfterDequeue(item, HOOK_DROP);
      return false;
    }
    if (v == WH_NS3_HOOK_MARK)
      Mark(item, HOOK_MARK);
    return true;
  }

  bool DoEnqueue(Ptr<QueueDiscItem> item) override
  {
    if (GetCurrentSize() + item > GetMaxSize()) {
      Dropped(item, nullptr);
      DropBeforeEnqueue(item, LIMIT_DROP);
      return false;
    }
    if (m_hooks && !Ask(m_hooks->on_enqueue, item, true))
      return false;
    return GetInternalQueue(0)->Enqueue(item);
  }

  Ptr<QueueDiscItem> DoDequeue() override
  {
    for (;;) {
      Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
      if (!item || m_hooks == nullptr || Ask(m_hooks->on_dequeue, item, false))
        return item;
    }
  }

  bool CheckConfig() override
  {
    if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0)
      return false;
    if (GetNInternalQueues() == 0)
      AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
          "MaxSize", QueueSizeValue(GetMaxSize())));
    return GetNInternalQueues() == 1;
  }

  void InitializeParams() override {}

  const WhNs3Sim *m_sim = nullptr;
  const WhNs3Hooks *m_hooks = nullptr;
  uint32_t m_link = 0, m_node = 0, m_band = 0;
};

NS_OBJECT_ENSURE_REGISTERED(WhHookQueueDisc);

} // namespace ns3

static WhNs3Sim *the_sim;
static bool ns3_used;

/* The addresses of two private statics of ns-3 that Simulator::Destroy does not reset:
 * Packet::m_globalUid (exported by libns3-network) and Time::g_markingTimes (by
 * libns3-core). An explicit instantiation may name private members ([temp.spec]), and
 * the friend function it defines hands the address out. */
template <typename Tag, typename Tag::type member> struct WhPrivateStatic {
  friend typename Tag::type wh_private_static(Tag)
  {
    return member;
  }
};
struct WhPacketUid {
  using type = uint32_t *;
  friend type wh_private_static(WhPacketUid);
};
struct WhMarkedTimes {
  using type = std::set<Time *> **;
  friend type wh_private_static(WhMarkedTimes);
};
template struct WhPrivateStatic<WhPacketUid, &Packet::m_globalUid>;
template struct WhPrivateStatic<WhMarkedTimes, &Time::g_markingTimes>;

bool wh_ns3_prior_use(bool resolution, std::string *why)
{
  std::string text;
  uint32_t packets = *wh_private_static(WhPacketUid());
  if (ns3_used && the_sim == nullptr)
    text = "an earlier simulation of this process was freed";
  else if (packets != 0)
    text = std::to_string(packets) + " packets were created before this simulation (ns3::Packet's "
                                     "uid counter, which Simulator::Destroy does not reset)";
  else if (resolution && *wh_private_static(WhMarkedTimes()) == nullptr)
    text = "Simulator::Run or Time::SetResolution was already called, so the time resolution "
           "can no longer be switched to picoseconds";
  if (why)
    *why = text;
  return !text.empty();
}

extern "C" const char *wh_ns3_strerror(int code)
{
  switch (code) {
  case WH_NS3_OK:
    return "success";
  case WH_NS3_EINVAL:
    return "invalid argument";
  case WH_NS3_ESTATE:
    return "operation not allowed at this stage of the simulation";
  case WH_NS3_EBUSY:
    return "an ns-3 simulation already exists in this process";
  case WH_NS3_EUNUSED:
    return "ns-3 was already used in this process; run one simulation per process";
  case WH_NS3_ENOTDONE:
    return "the flow did not complete";
  }
  return "unknown error";
}

extern "C" int wh_ns3_sim_new(const WhNs3TcpConfig *tcp, WhNs3Sim **out)
{
  if (out == nullptr)
    return WH_NS3_EINVAL;
  if (the_sim)
    return WH_NS3_EBUSY;
  if (wh_ns3_prior_use(true, nullptr))
    return WH_NS3_EUNUSED;
  ns3_used = true;
  Time::SetResolution(Time::PS);
  if (tcp) {
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(tcp->segment_size));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(tcp->initial_cwnd));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(tcp->socket_buffer));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(tcp->socket_buffer));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(tcp->delack_count));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(PicoSeconds(tcp->min_rto_ps)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(tcp->sack != 0));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(tcp->timestamps != 0));
  }
  the_sim = new WhNs3Sim();
  the_sim->addr.SetBase("10.0.0.0", "255.255.255.252");
  *out = the_sim;
  return WH_NS3_OK;
}

extern "C" int wh_ns3_sim_phase(void)
{
  if (the_sim)
    return the_sim->ran ? WH_NS3_PHASE_RAN : WH_NS3_PHASE_BUILT;
  return ns3_used ? WH_NS3_PHASE_FREED : WH_NS3_PHASE_NONE;
}

extern "C" void wh_ns3_sim_free(WhNs3Sim *sim)
{
  if (sim == nullptr || sim != the_sim)
    return;
  Simulator::Destroy();
  delete sim;
  the_sim = nullptr;
}

extern "C" int wh_ns3_add_nodes(WhNs3Sim *sim, uint32_t n, uint32_t *first)
{
  if (sim == nullptr || n == 0)
    return WH_NS3_EINVAL;
  if (sim->finalized)
    return WH_NS3_ESTATE;
  if (first)
    *first = sim->nodes.GetN();
  NodeContainer fresh;
  fresh.Create(n);
  InternetStackHelper stack;
  stack.Install(fresh);
  sim->nodes.Add(fresh);
  return WH_NS3_OK;
}

static void count_tx(WhNs3Sim *sim, Ptr<const Packet>)
{
  sim->traversals++;
}

extern "C" int wh_ns3_add_link(WhNs3Sim *sim, uint32_t a, uint32_t b, uint64_t rate_bps,
                               uint64_t delay_ps, const WhNs3QueueConfig *queue)
{
  if (sim == nullptr || queue == nullptr || a == b || a >= sim->nodes.GetN() ||
      b >= sim->nodes.GetN() || rate_bps == 0 || queue->limit_packets == 0 ||
      (queue->kind == WH_NS3_QUEUE_HOOK && queue->hooks == nullptr) ||
      (queue->kind == WH_NS3_QUEUE_RED_ECN && queue->ecn_threshold_pkts == 0) ||
      queue->kind > WH_NS3_QUEUE_HOOK)
    return WH_NS3_EINVAL;
  if (sim->finalized)
    return WH_NS3_ESTATE;
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(rate_bps)));
  p2p.SetChannelAttribute("Delay", TimeValue(PicoSeconds(delay_ps)));
  p2p.SetQueue("ns3::DropTailQueue", "MaxSize", QueueSizeValue(QueueSize("1p")));
  NetDeviceContainer devs = p2p.Install(sim->nodes.Get(a), sim->nodes.Get(b));
  /* a fresh helper per link: strict priority, control packets (band 0, FIFO) before
   * data (band 1: RED with ECN as a step at K (Gentle off), or FIFO); with hooks, both
   * bands are hook queue discs */
  TrafficControlHelper tch;
  std::string limit = std::to_string(queue->limit_packets) + "p";
  uint16_t root = tch.SetRootQueueDisc("ns3::PrioQueueDisc", "Priomap",
                                       StringValue("1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1"));
  TrafficControlHelper::ClassIdList bands = tch.AddQueueDiscClasses(root, 2, "ns3::QueueDiscClass");
  bool hook = queue->kind == WH_NS3_QUEUE_HOOK;
  tch.AddChildQueueDisc(root, bands[0], hook ? "ns3::WhHookQueueDisc" : "ns3::FifoQueueDisc",
                        "MaxSize", QueueSizeValue(QueueSize(limit)));
  if (hook) {
    tch.AddChildQueueDisc(root, bands[1], "ns3::WhHookQueueDisc", "MaxSize",
                          QueueSizeValue(QueueSize(limit)));
  } else if (queue->kind == WH_NS3_QUEUE_RED_ECN) {
    double k = queue->ecn_threshold_pkts;
    tch.AddChildQueueDisc(root, bands[1], "ns3::RedQueueDisc", "UseEcn", BooleanValue(true),
                          "UseHardDrop", BooleanValue(false), "Gentle", BooleanValue(false),
                          "MinTh", DoubleValue(k), "MaxTh", DoubleValue(k), "QW", DoubleValue(1.0),
                          "MaxSize", QueueSizeValue(QueueSize(limit)));
  } else {
    tch.AddChildQueueDisc(root, bands[1], "ns3::FifoQueueDisc", "MaxSize",
                          QueueSizeValue(QueueSize(limit)));
  }
  tch.AddPacketFilter(root, "ns3::WhControlFilter");
  QueueDiscContainer discs = tch.Install(devs);
  if (hook) {
    for (uint32_t d = 0; d < discs.GetN(); d++) {
      uint32_t node = d == 0 ? a : b;
      for (uint32_t band = 0; band < 2; band++) {
        Ptr<WhHookQueueDisc> q =
            DynamicCast<WhHookQueueDisc>(discs.Get(d)->GetQueueDiscClass(band)->GetQueueDisc());
        q->Bind(sim, queue->hooks, sim->links, node, band);
      }
    }
  }
  sim->addr.Assign(devs);
  sim->addr.NewNetwork();
  for (uint32_t i = 0; i < devs.GetN(); i++)
    devs.Get(i)->TraceConnectWithoutContext("PhyTxBegin", MakeBoundCallback(&count_tx, sim));
  sim->links++;
  return WH_NS3_OK;
}

extern "C" int wh_ns3_finalize(WhNs3Sim *sim)
{
  return wh_ns3_finalize_routing(sim, WH_NS3_ROUTING_GLOBAL, 0);
}

extern "C" int wh_ns3_finalize_routing(WhNs3Sim *sim, WhNs3Routing routing, uint64_t seed)
{
  if (sim == nullptr || (routing != WH_NS3_ROUTING_GLOBAL && routing != WH_NS3_ROUTING_ECMP))
    return WH_NS3_EINVAL;
  if (sim->finalized)
    return WH_NS3_ESTATE;
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  if (routing == WH_NS3_ROUTING_ECMP)
    wh_ns3_install_ecmp(sim->nodes, seed);
  sim->finalized = true;
  return WH_NS3_OK;
}

static void sink_rx(WhNs3Sim *sim, uint32_t flow, Ptr<const Packet> p, const Address &)
{
  WhNs3Flow &f = sim->flows[flow];
  f.received += p->GetSize();
  if (f.finish_ps == 0 && f.received >= f.bytes) {
    f.finish_ps = (uint64_t)Simulator::Now().GetPicoSeconds();
    /* the run ends with the last flow: TCP's closing timers (TIME_WAIT) would run on */
    if (++sim->flows_done == sim->flows.size())
      Simulator::Stop();
  }
}

/* The address of node `dst` on its first interface. */
static Ipv4Address node_address(WhNs3Sim *sim, uint32_t dst)
{
  return sim->nodes.Get(dst)->GetObject<Ipv4>()->GetAddress(1, 0).GetLocal();
}

static int add_sink(WhNs3Sim *sim, const char *factory, uint32_t dst, uint16_t port, uint32_t flow)
{
  PacketSinkHelper sink(factory, InetSocketAddress(Ipv4Address::GetAny(), port));
  ApplicationContainer app = sink.Install(sim->nodes.Get(dst));
  app.Start(Seconds(0));
  app.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&sink_rx, sim, flow));
  return WH_NS3_OK;
}

static int check_flow(WhNs3Sim *sim, uint32_t src, uint32_t dst, uint64_t bytes)
{
  if (sim == nullptr || src == dst || src >= sim->nodes.GetN() || dst >= sim->nodes.GetN() ||
      bytes == 0)
    return WH_NS3_EINVAL;
  if (!sim->finalized || sim->ran)
    return WH_NS3_ESTATE;
  /* one port per flow, below ns-3's ephemeral ports (from 49152) */
  if (sim->next_port >= 49152)
    return WH_NS3_EINVAL;
  return WH_NS3_OK;
}

extern "C" int wh_ns3_add_tcp_flow(WhNs3Sim *sim, uint32_t src, uint32_t dst, uint64_t bytes,
                                   uint64_t start_ps, WhNs3TcpVariant variant, uint32_t *flow)
{
  int rc = check_flow(sim, src, dst, bytes);
  if (rc)
    return rc;
  /* the congestion control is the socket type of the node's TCP: sender and receiver
   * (DCTCP's ECN echo lives in the receiver's socket too); one variant per node */
  TypeIdValue type(variant == WH_NS3_TCP_DCTCP ? TcpDctcp::GetTypeId() : TcpNewReno::GetTypeId());
  sim->nodes.Get(src)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", type);
  sim->nodes.Get(dst)->GetObject<TcpL4Protocol>()->SetAttribute("SocketType", type);
  uint32_t id = (uint32_t)sim->flows.size();
  uint16_t port = sim->next_port++;
  sim->flows.push_back({bytes, start_ps, port});
  sim->port_flow[port] = id;
  add_sink(sim, "ns3::TcpSocketFactory", dst, port, id);
  BulkSendHelper send("ns3::TcpSocketFactory", InetSocketAddress(node_address(sim, dst), port));
  send.SetAttribute("MaxBytes", UintegerValue(bytes));
  ApplicationContainer app = send.Install(sim->nodes.Get(src));
  app.Start(PicoSeconds(start_ps));
  if (flow)
    *flow = id;
  return WH_NS3_OK;
}

extern "C" int wh_ns3_add_udp_flow(WhNs3Sim *sim, uint32_t src, uint32_t dst, uint64_t bytes,
                                   uint64_t start_ps, uint64_t rate_bps, uint32_t packet_bytes,
                                   uint32_t *flow)
{
  int rc = check_flow(sim, src, dst, bytes);
  if (rc)
    return rc;
  if (rate_bps == 0 || packet_bytes == 0)
    return WH_NS3_EINVAL;
  uint32_t id = (uint32_t)sim->flows.size();
  uint16_t port = sim->next_port++;
  sim->flows.push_back({bytes, start_ps, port});
  sim->port_flow[port] = id;
  add_sink(sim, "ns3::UdpSocketFactory", dst, port, id);
  OnOffHelper send("ns3::UdpSocketFactory", InetSocketAddress(node_address(sim, dst), port));
  send.SetConstantRate(DataRate(rate_bps), packet_bytes);
  send.SetAttribute("MaxBytes", UintegerValue(bytes));
  ApplicationContainer app = send.Install(sim->nodes.Get(src));
  app.Start(PicoSeconds(start_ps));
  if (flow)
    *flow = id;
  return WH_NS3_OK;
}

extern "C" int wh_ns3_pin_flow_path(WhNs3Sim *sim, uint32_t flow, const uint32_t *fwd, uint32_t nf,
                                    const uint32_t *rev, uint32_t nr)
{
  if (sim == nullptr || flow >= sim->flows.size() || fwd == nullptr || rev == nullptr || nf < 2 ||
      nr < 2)
    return WH_NS3_EINVAL;
  for (uint32_t i = 0; i < nf; i++)
    if (fwd[i] >= sim->nodes.GetN())
      return WH_NS3_EINVAL;
  for (uint32_t i = 0; i < nr; i++)
    if (rev[i] >= sim->nodes.GetN())
      return WH_NS3_EINVAL;
  wh_ns3_ecmp_pin(sim->flows[flow].port, fwd, nf, rev, nr);
  return WH_NS3_OK;
}

extern "C" int wh_ns3_run(WhNs3Sim *sim, uint64_t stop_ps)
{
  if (sim == nullptr)
    return WH_NS3_EINVAL;
  if (!sim->finalized || sim->ran)
    return WH_NS3_ESTATE;
  if (stop_ps)
    Simulator::Stop(PicoSeconds(stop_ps));
  Simulator::Run();
  sim->ran = true;
  return WH_NS3_OK;
}

extern "C" int wh_ns3_flow_times(const WhNs3Sim *sim, uint32_t flow, uint64_t *start_ps,
                                 uint64_t *finish_ps)
{
  if (sim == nullptr || flow >= sim->flows.size())
    return WH_NS3_EINVAL;
  const WhNs3Flow &f = sim->flows[flow];
  if (start_ps)
    *start_ps = f.start_ps;
  if (finish_ps)
    *finish_ps = f.finish_ps;
  return f.finish_ps ? WH_NS3_OK : WH_NS3_ENOTDONE;
}

extern "C" int wh_ns3_stats(const WhNs3Sim *sim, WhNs3Stats *out)
{
  if (sim == nullptr || out == nullptr)
    return WH_NS3_EINVAL;
  out->events = Simulator::GetEventCount();
  out->link_traversals = sim->traversals;
  out->end_ps = (uint64_t)Simulator::Now().GetPicoSeconds();
  return WH_NS3_OK;
}
