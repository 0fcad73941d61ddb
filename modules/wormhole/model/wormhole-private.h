/* Between the Wormhole scheduler and the Wormhole observer (not for other callers). */
#ifndef WH_WORMHOLE_PRIVATE_H
#define WH_WORMHOLE_PRIVATE_H

#include "steady-detector.h"
#include "wormhole.h"

/* The scheduler's event counters, sized for `n_ports` ports and at least `flows`
 * flows (grown as needed; the struct stays where it is). (transfer none) */
WhEventCounts *wh_wormhole_scheduler_counts(WhScheduler *self, uint32_t n_ports, uint32_t flows);

#endif
