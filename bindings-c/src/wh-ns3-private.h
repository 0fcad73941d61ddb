/* What the files of the ns-3 shim share beyond the public API (wh-ns3.h): whether ns-3
 * was already used in this process before the current simulation, read from
 * process-wide state of ns-3 that Simulator::Destroy leaves as it is. Costs a few
 * loads; touches nothing of ns-3. */
#ifndef WH_NS3_PRIVATE_H
#define WH_NS3_PRIVATE_H

#include <string>

/* True, with the reason in `why` (nullable), when this process already ran ns-3: a
 * simulation of this API was freed; or a packet was created (ns3::Packet's uid counter
 * is past 0: call it before the current simulation creates one, e.g. while ns-3
 * builds the simulator and its scheduler, which every Packet constructor does before it
 * takes a uid); or, with `resolution`, Simulator::Run or Time::SetResolution was called
 * (ns-3's registry of the Time objects to convert is gone, so the resolution can no
 * longer be switched). A run that created no packet goes unseen without `resolution`. */
bool wh_ns3_prior_use(bool resolution, std::string *why);

#endif
