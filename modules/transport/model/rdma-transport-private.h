/* What the transport shares with flow-state.c (snapshot, restore, shift and advance of
 * flows) and nothing else: the handler of flow events and the two re-evaluations a
 * flow needs after its pacing time or sequence numbers were moved from outside the
 * packet path. Cold path only. */
#ifndef WH_RDMA_TRANSPORT_PRIVATE_H
#define WH_RDMA_TRANSPORT_PRIVATE_H

#include "rdma-transport.h"

/* The handler of flow events (arg = id << 8 | timer slot), for re-armed timers. */
void wh_transport_flow_event(WhSim *sim, void *ctx, uint64_t arg);
/* Re-sorts a flow in its host's send heap after its pacing time moved. */
void wh_transport_reschedule_flow(WhTransport *tp, WhFlow *f);
/* Re-evaluates a flow whose sequence numbers moved (finish, completion, sendability). */
void wh_transport_flow_progressed(WhTransport *tp, WhFlow *f);

#endif
