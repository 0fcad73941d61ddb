/* ns-3 used directly from C++, as a program would before it calls the C API (test
 * helper for the suites, which are C). */
#ifndef WH_NS3_DIRECT_H
#define WH_NS3_DIRECT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
  WH_NS3_DIRECT_NONE,      /* ns-3 untouched */
  WH_NS3_DIRECT_DESTROYED, /* a packet over a link, Simulator::Run, Simulator::Destroy */
  WH_NS3_DIRECT_KEPT,      /* the same without Simulator::Destroy */
  WH_NS3_DIRECT_TIMER,     /* one timer event, Run and Destroy: no packet */
  WH_NS3_DIRECT_RESOLUTION /* Time::SetResolution(NS) only */
} WhNs3Direct;

/* Uses ns-3 as `use` says; returns the events ns-3 executed. */
uint64_t wh_ns3_direct_use(WhNs3Direct use);

#ifdef __cplusplus
}
#endif

#endif
