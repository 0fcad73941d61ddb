/* ns-3 used directly from C++ (see ns3-direct.h): a point-to-point link carrying one
 * broadcast frame at 1 us, or a timer event alone, run on ns-3's own simulator with
 * its default nanosecond resolution; or only the resolution fixed. Milliseconds. */
#include "ns3-direct.h"

#include <ns3/core-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>

using namespace ns3;

static void send_frame(Ptr<NetDevice> dev)
{
  dev->Send(Create<Packet>(100), dev->GetBroadcast(), 0x0800);
}

static void nothing() {}

extern "C" uint64_t wh_ns3_direct_use(WhNs3Direct use)
{
  switch (use) {
  case WH_NS3_DIRECT_NONE:
    return 0;
  case WH_NS3_DIRECT_RESOLUTION:
    Time::SetResolution(Time::NS);
    return 0;
  case WH_NS3_DIRECT_TIMER:
    Simulator::Schedule(MicroSeconds(1), &nothing);
    break;
  case WH_NS3_DIRECT_DESTROYED:
  case WH_NS3_DIRECT_KEPT: {
    NodeContainer nodes;
    nodes.Create(2);
    PointToPointHelper p2p;
    NetDeviceContainer devs = p2p.Install(nodes);
    Simulator::Schedule(MicroSeconds(1), &send_frame, devs.Get(0));
    break;
  }
  }
  Simulator::Run();
  uint64_t events = Simulator::GetEventCount();
  if (use != WH_NS3_DIRECT_KEPT)
    Simulator::Destroy();
  return events;
}
