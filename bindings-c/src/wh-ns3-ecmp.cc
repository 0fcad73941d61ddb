/* Per-flow ECMP for ns-3: an Ipv4RoutingProtocol that, at every node, picks among the
 * interfaces on a shortest path to the destination by a hash of the packet's 5-tuple
 * salted per node, so every packet of a flow takes one path and different flows
 * spread, as in the native engine. (ns-3 3.37's global routing offers a single path,
 * or random per-packet ECMP, which reorders TCP.) It is added to each node's
 * Ipv4ListRouting at a higher priority than global routing; local delivery stays with
 * the list. Cost: shortest-path distances between all nodes, computed once (N^2
 * entries: for validation-sized topologies), and per packet a hash and a scan of the
 * node's interfaces. */
#include "wh-ns3-ecmp.h"

#include <ns3/internet-module.h>
#include <ns3/network-module.h>

#include <deque>
#include <map>
#include <memory>
#include <vector>

namespace ns3
{

namespace
{

/* Pinned paths: flow port -> node sequences (forward, for data to the port; reverse,
 * for packets from the port). One simulation per process, so one table. */
struct PinnedPath {
  std::vector<uint32_t> fwd, rev;
};
std::map<uint16_t, PinnedPath> pinned;

/* The next node after `node` on `path`, or UINT32_MAX. */
uint32_t next_on(const std::vector<uint32_t> &path, uint32_t node)
{
  for (size_t i = 0; i + 1 < path.size(); i++) {
    if (path[i] == node)
      return path[i + 1];
  }
  return UINT32_MAX;
}

struct Topology {
  uint32_t n = 0;
  std::vector<std::vector<uint16_t>> dist;                     /* hops between nodes */
  std::map<uint32_t, uint32_t> addr_node;                      /* interface address -> node */
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> nbr; /* node -> (if, neighbor) */
  std::vector<std::vector<Ipv4Address>> nbr_addr;              /* gateway address per (node, k) */
  uint64_t seed = 0;
};

uint64_t mix64(uint64_t z)
{
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Ports of the TCP or UDP header at the front of `p` (0 if none). */
void l4_ports(Ptr<const Packet> p, uint8_t proto, uint16_t &sport, uint16_t &dport)
{
  sport = dport = 0;
  if (p == nullptr)
    return;
  if (proto == 6 && p->GetSize() >= 20) {
    TcpHeader h;
    p->PeekHeader(h);
    sport = h.GetSourcePort();
    dport = h.GetDestinationPort();
  } else if (proto == 17 && p->GetSize() >= 8) {
    UdpHeader h;
    p->PeekHeader(h);
    sport = h.GetSourcePort();
    dport = h.GetDestinationPort();
  }
}

} // namespace

class WhEcmpRouting : public Ipv4RoutingProtocol
{
public:
  static TypeId GetTypeId()
  {
    static TypeId tid = TypeId("ns3::WhEcmpRouting")
                            .SetParent<Ipv4RoutingProtocol>()
                            .SetGroupName("Internet")
                            .AddConstructor<WhEcmpRouting>();
    return tid;
  }

  void Setup(std::shared_ptr<Topology> topo, uint32_t node)
  {
    m_topo = topo;
    m_node = node;
  }

  Ptr<Ipv4Route> RouteOutput(Ptr<Packet> p, const Ipv4Header &header, Ptr<NetDevice> oif,
                             Socket::SocketErrno &sockerr) override
  {
    Ptr<Ipv4Route> r = Pick(p, header);
    sockerr = r ? Socket::ERROR_NOTERROR : Socket::ERROR_NOROUTETOHOST;
    return r;
  }

  bool RouteInput(Ptr<const Packet> p, const Ipv4Header &header, Ptr<const NetDevice> idev,
                  UnicastForwardCallback ucb, MulticastForwardCallback mcb,
                  LocalDeliverCallback lcb, ErrorCallback ecb) override
  {
    if (m_ipv4->IsDestinationAddress(header.GetDestination(), m_ipv4->GetInterfaceForDevice(idev)))
      return false; /* local delivery: the list routing does it */
    Ptr<Ipv4Route> r = Pick(p, header);
    if (r == nullptr)
      return false;
    ucb(r, p, header);
    return true;
  }

  void NotifyInterfaceUp(uint32_t) override {}
  void NotifyInterfaceDown(uint32_t) override {}
  void NotifyAddAddress(uint32_t, Ipv4InterfaceAddress) override {}
  void NotifyRemoveAddress(uint32_t, Ipv4InterfaceAddress) override {}
  void SetIpv4(Ptr<Ipv4> ipv4) override
  {
    m_ipv4 = ipv4;
  }
  void PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit) const override
  {
    *stream->GetStream() << "per-flow ECMP over shortest paths (node " << m_node << ")\n";
  }

private:
  Ptr<Ipv4Route> Pick(Ptr<const Packet> p, const Ipv4Header &header)
  {
    const Topology &t = *m_topo;
    auto it = t.addr_node.find(header.GetDestination().Get());
    if (it == t.addr_node.end())
      return nullptr;
    uint32_t dst = it->second;
    if (dst == m_node)
      return nullptr;
    uint16_t sport, dport;
    l4_ports(p, header.GetProtocol(), sport, dport);
    /* a pinned flow follows its path */
    uint32_t next = UINT32_MAX;
    auto fwd = pinned.find(dport);
    auto rev = pinned.find(sport);
    if (fwd != pinned.end())
      next = next_on(fwd->second.fwd, m_node);
    else if (rev != pinned.end())
      next = next_on(rev->second.rev, m_node);
    if (next != UINT32_MAX) {
      for (size_t k = 0; k < t.nbr[m_node].size(); k++) {
        if (t.nbr[m_node][k].second == next)
          return MakeRoute(header, k);
      }
    }
    uint16_t d = t.dist[m_node][dst];
    uint32_t count = 0;
    for (const auto &nb : t.nbr[m_node])
      count += t.dist[nb.second][dst] + 1 == d;
    if (count == 0)
      return nullptr;
    uint64_t h = mix64(((uint64_t)header.GetSource().Get() << 32 | header.GetDestination().Get()) ^
                       mix64((uint64_t)sport << 24 | (uint64_t)dport << 8 | header.GetProtocol()) ^
                       mix64(t.seed * 0x9e3779b97f4a7c15ULL + m_node + 1));
    uint32_t pick = (uint32_t)(h % count);
    for (size_t k = 0; k < t.nbr[m_node].size(); k++) {
      const auto &nb = t.nbr[m_node][k];
      if (t.dist[nb.second][dst] + 1 != d || pick-- != 0)
        continue;
      return MakeRoute(header, k);
    }
    return nullptr;
  }

  Ptr<Ipv4Route> MakeRoute(const Ipv4Header &header, size_t k)
  {
    const auto &nb = m_topo->nbr[m_node][k];
    Ptr<Ipv4Route> r = Create<Ipv4Route>();
    r->SetDestination(header.GetDestination());
    r->SetSource(m_ipv4->GetAddress(nb.first, 0).GetLocal());
    r->SetGateway(m_topo->nbr_addr[m_node][k]);
    r->SetOutputDevice(m_ipv4->GetNetDevice(nb.first));
    return r;
  }

  std::shared_ptr<Topology> m_topo;
  uint32_t m_node = 0;
  Ptr<Ipv4> m_ipv4;
};

NS_OBJECT_ENSURE_REGISTERED(WhEcmpRouting);

} // namespace ns3

using namespace ns3;

void wh_ns3_install_ecmp(NodeContainer &nodes, uint64_t seed)
{
  auto topo = std::make_shared<Topology>();
  uint32_t n = nodes.GetN();
  topo->n = n;
  topo->seed = seed;
  topo->nbr.resize(n);
  topo->nbr_addr.resize(n);
  std::map<Ptr<NetDevice>, std::pair<uint32_t, uint32_t>> dev_owner; /* device -> (node, if) */
  for (uint32_t i = 0; i < n; i++) {
    Ptr<Ipv4> ipv4 = nodes.Get(i)->GetObject<Ipv4>();
    for (uint32_t ifc = 1; ifc < ipv4->GetNInterfaces(); ifc++) {
      dev_owner[ipv4->GetNetDevice(ifc)] = {i, ifc};
      topo->addr_node[ipv4->GetAddress(ifc, 0).GetLocal().Get()] = i;
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    Ptr<Ipv4> ipv4 = nodes.Get(i)->GetObject<Ipv4>();
    for (uint32_t ifc = 1; ifc < ipv4->GetNInterfaces(); ifc++) {
      Ptr<Channel> ch = ipv4->GetNetDevice(ifc)->GetChannel();
      for (std::size_t d = 0; ch && d < ch->GetNDevices(); d++) {
        Ptr<NetDevice> other = ch->GetDevice(d);
        if (other == ipv4->GetNetDevice(ifc))
          continue;
        auto owner = dev_owner[other];
        topo->nbr[i].push_back({ifc, owner.first});
        topo->nbr_addr[i].push_back(
            nodes.Get(owner.first)->GetObject<Ipv4>()->GetAddress(owner.second, 0).GetLocal());
      }
    }
  }
  topo->dist.assign(n, std::vector<uint16_t>(n, 0xffff));
  for (uint32_t s = 0; s < n; s++) {
    std::deque<uint32_t> q{s};
    topo->dist[s][s] = 0;
    while (!q.empty()) {
      uint32_t u = q.front();
      q.pop_front();
      for (const auto &nb : topo->nbr[u]) {
        if (topo->dist[s][nb.second] != 0xffff)
          continue;
        topo->dist[s][nb.second] = topo->dist[s][u] + 1;
        q.push_back(nb.second);
      }
    }
  }
  for (uint32_t i = 0; i < n; i++) {
    Ptr<Ipv4> ipv4 = nodes.Get(i)->GetObject<Ipv4>();
    Ptr<Ipv4ListRouting> list = DynamicCast<Ipv4ListRouting>(ipv4->GetRoutingProtocol());
    Ptr<WhEcmpRouting> ecmp = CreateObject<WhEcmpRouting>();
    ecmp->Setup(topo, i);
    list->AddRoutingProtocol(ecmp, 100);
  }
}

void wh_ns3_ecmp_pin(uint16_t port, const uint32_t *fwd, uint32_t nf, const uint32_t *rev,
                     uint32_t nr)
{
  pinned[port] = {std::vector<uint32_t>(fwd, fwd + nf), std::vector<uint32_t>(rev, rev + nr)};
}
