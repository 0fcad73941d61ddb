/* A plain ns-3 3.37 program that knows nothing of this project (it includes only ns-3
 * headers): two DCTCP bulk transfers of 2 MB each over a 10 Gb/s dumbbell whose
 * bottleneck is a RED queue disc marking ECN as a step at 20 packets. It prints each
 * flow's completion time and ns-3's event count. Its event list is whatever ns-3's
 * SchedulerType global value names (--SchedulerType=... on the command line), so with
 * the project's libwh-ns3-wormhole.so preloaded it runs on ns3::WhCScheduler unchanged.
 * --runs=N runs the dumbbell N times in the process, destroying the simulator after
 * each; --plugin=LIB loads LIB (dlopen) before the last run, as a program that loads a
 * plug-in part-way through. About 0.5 s a run. */
#include <ns3/applications-module.h>
#include <ns3/core-module.h>
#include <ns3/internet-module.h>
#include <ns3/network-module.h>
#include <ns3/point-to-point-module.h>
#include <ns3/traffic-control-module.h>

#include <dlfcn.h>

#include <cinttypes>
#include <cstdio>

using namespace ns3;

static const uint64_t kBytes = 2000000;
static Time g_finish[2];
static uint64_t g_received[2];

static void Received(uint32_t flow, Ptr<const Packet> p, const Address &)
{
  g_received[flow] += p->GetSize();
  if (g_received[flow] >= kBytes && g_finish[flow].IsZero())
    g_finish[flow] = Simulator::Now();
  if (!g_finish[0].IsZero() && !g_finish[1].IsZero())
    Simulator::Stop();
}

/* One simulation of the dumbbell, printed and destroyed. */
static void RunDumbbell()
{
  g_finish[0] = g_finish[1] = Time(0);
  g_received[0] = g_received[1] = 0;
  /* senders 0, 1 - left router 2 - right router 3 - receivers 4, 5 */
  NodeContainer nodes;
  nodes.Create(6);
  InternetStackHelper stack;
  stack.Install(nodes);
  PointToPointHelper p2p;
  p2p.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
  p2p.SetChannelAttribute("Delay", StringValue("1us"));
  p2p.SetQueue("ns3::DropTailQueue", "MaxSize", StringValue("1p"));
  TrafficControlHelper red;
  red.SetRootQueueDisc("ns3::RedQueueDisc", "UseEcn", BooleanValue(true), "UseHardDrop",
                       BooleanValue(false), "Gentle", BooleanValue(false), "MinTh", DoubleValue(20),
                       "MaxTh", DoubleValue(20), "QW", DoubleValue(1.0), "MaxSize",
                       StringValue("1000p"));
  Ipv4AddressHelper addr("10.1.0.0", "255.255.255.0");
  const uint32_t ends[5][2] = {{0, 2}, {1, 2}, {2, 3}, {3, 4}, {3, 5}};
  Ipv4Address receiver[2];
  for (uint32_t l = 0; l < 5; l++) {
    NetDeviceContainer devs = p2p.Install(nodes.Get(ends[l][0]), nodes.Get(ends[l][1]));
    red.Install(devs);
    Ipv4InterfaceContainer ifs = addr.Assign(devs);
    addr.NewNetwork();
    if (l >= 3)
      receiver[l - 3] = ifs.GetAddress(1);
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();

  for (uint32_t f = 0; f < 2; f++) {
    uint16_t port = 5000 + f;
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer rx = sink.Install(nodes.Get(4 + f));
    rx.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&Received, f));
    BulkSendHelper send("ns3::TcpSocketFactory", InetSocketAddress(receiver[f], port));
    send.SetAttribute("MaxBytes", UintegerValue(kBytes));
    ApplicationContainer tx = send.Install(nodes.Get(f));
    tx.Start(MicroSeconds(20 * f));
  }
  Simulator::Run();
  for (uint32_t f = 0; f < 2; f++)
    std::printf("flow %u fct_ns %" PRId64 "\n", f,
                (g_finish[f] - MicroSeconds(20 * f)).GetNanoSeconds());
  std::printf("events %" PRIu64 "\n", Simulator::GetEventCount());
  Simulator::Destroy();
}

int main(int argc, char **argv)
{
  uint32_t runs = 1;
  std::string plugin;
  CommandLine cmd(__FILE__);
  cmd.AddValue("runs", "simulations to run one after the other", runs);
  cmd.AddValue("plugin", "a library to load (dlopen) before the last run", plugin);
  cmd.Parse(argc, argv);
  Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(TcpDctcp::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(1 << 20));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(1 << 20));
  Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(MilliSeconds(1)));

  for (uint32_t r = 1; r <= runs; r++) {
    if (r == runs && !plugin.empty() && dlopen(plugin.c_str(), RTLD_NOW | RTLD_GLOBAL) == nullptr) {
      std::fprintf(stderr, "%s\n", dlerror());
      return 1;
    }
    if (runs > 1)
      std::printf("run %u\n", r);
    RunDumbbell();
  }
  return 0;
}
