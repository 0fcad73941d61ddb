/* The rate sampler: an observer that attaches to the queue-disc hooks of every switch
 * port and host NIC and records, per period of `period` picoseconds, the bytes each
 * flow sent (payload leaving its sender's NIC) and delivered (payload leaving the
 * last switch toward its receiver, one serialization and one propagation before
 * arrival), and every port's queue length at the end of each period. It adds no
 * event and draws no random number: periods are closed lazily when a hook reports a
 * later time, since a queue changes only at the hooked moments; a run with the
 * sampler attached is identical to a run without. Cost per hooked packet: O(1) plus
 * one array slot per period crossed. Memory: 16 bytes per flow per period up to its
 * last period with traffic, 4 bytes per port per period. With a budget
 * (wh_rate_sampler_set_budget) the arrays are counted at twice their length (they grow
 * by doubling); the first sample that would pass it stops the run (wh_sim_stop) and
 * nothing more is recorded, so a period too short for the run fails fast instead of
 * growing without bound. */
#ifndef WH_RATE_SAMPLER_H
#define WH_RATE_SAMPLER_H

#include <glib.h>
#include "rdma-transport.h"

typedef struct WhRateSampler WhRateSampler;

/* Attaches to every port of the transport's network (replacing any other observer).
 * (transfer full); `tp` (transfer none) must outlive the sampler. */
WhRateSampler *wh_rate_sampler_new(WhTransport *tp, WhTime period);
/* Detaches and frees. */
void wh_rate_sampler_free(WhRateSampler *s);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(WhRateSampler, wh_rate_sampler_free)

/* Closes every period that ended at or before `t` (call at the end of a run); after
 * the budget was reached, the periods that ended before it was, and no more than the
 * longest port record. */
void wh_rate_sampler_close(WhRateSampler *s, WhTime t);

/* Bounds the bytes the samples may hold (0: no bound). */
void wh_rate_sampler_set_budget(WhRateSampler *s, uint64_t max_bytes);
/* TRUE once the budget stopped the sampler; `at` (nullable) receives when. */
gboolean wh_rate_sampler_full(const WhRateSampler *s, WhTime *at);
/* The bytes counted against the budget so far. */
uint64_t wh_rate_sampler_bytes(const WhRateSampler *s);

WhTime wh_rate_sampler_period(const WhRateSampler *s);
/* Number of closed periods. */
uint32_t wh_rate_sampler_periods(const WhRateSampler *s);
/* Bytes flow `flow` sent / delivered in period k. */
uint64_t wh_rate_sampler_sent(const WhRateSampler *s, uint32_t flow, uint32_t k);
uint64_t wh_rate_sampler_delivered(const WhRateSampler *s, uint32_t flow, uint32_t k);
/* Delivery rate in b/s over periods [k0, k1). */
double wh_rate_sampler_delivery_rate(const WhRateSampler *s, uint32_t flow, uint32_t k0,
                                     uint32_t k1);
/* Queue length (bytes, all priorities) of `port` at the end of period k. */
uint32_t wh_rate_sampler_queue(const WhRateSampler *s, uint32_t port, uint32_t k);
/* The periods recorded for a flow (every later one is zero) and for a port (every later
 * one holds the queue the port has now): what a writer visits. */
uint32_t wh_rate_sampler_flow_periods(const WhRateSampler *s, uint32_t flow);
uint32_t wh_rate_sampler_port_periods(const WhRateSampler *s, uint32_t port);

#endif
