/* Hook-driven sampling of flow rates and queue lengths; see rate-sampler.h. */
#include "rate-sampler.h"

typedef struct {
  uint64_t sent, delivered;
} FlowSample;

typedef struct {
  GArray *samples; /* uint32_t per closed period */
  uint32_t q;      /* queue length now */
} PortTrack;

struct WhRateSampler {
  WhTransport *tp;
  WhTime period;
  uint32_t closed;  /* periods [0, closed) are final */
  GPtrArray *flows; /* GArray<FlowSample> per flow id, grown on demand */
  PortTrack *ports;
  uint32_t n_ports;
  uint64_t max_bytes; /* the budget (0: none) */
  uint64_t bytes;     /* what the sample arrays may hold, counted at twice their length */
  gboolean full;      /* the budget was reached: nothing more is recorded */
  WhTime full_at;     /* when */
};

/* Counts `add` more bytes of samples; FALSE (and the run is stopped) when they would
 * pass the budget or the periods would overflow the 32-bit period index. */
static gboolean reserve(WhRateSampler *s, uint64_t add, WhTime now)
{
  if (wh_sim_poll_interrupt(s->tp->sim)) /* a signal: stop now, not 2^20 slow events later */
    return FALSE;
  if (!s->full && (now / s->period < UINT32_MAX - 1) &&
      (s->max_bytes == 0 || s->bytes + 2 * add <= s->max_bytes)) {
    s->bytes += 2 * add; /* GArray grows by doubling: at most twice the length */
    return TRUE;
  }
  if (!s->full) {
    s->full = TRUE;
    s->full_at = now;
    wh_sim_stop(s->tp->sim);
  }
  return FALSE;
}

static GArray *flow_samples(WhRateSampler *s, uint32_t id, uint32_t k)
{
  uint64_t add = 0;
  if (s->flows->len <= id)
    add += (uint64_t)(id + 1 - s->flows->len) * (sizeof(GArray) + 32);
  GArray *a = id < s->flows->len ? s->flows->pdata[id] : NULL;
  if (a == NULL || a->len <= k)
    add += (uint64_t)(k + 1 - (a ? a->len : 0)) * sizeof(FlowSample);
  if (add && !reserve(s, add, s->tp->sim->now))
    return NULL;
  while (s->flows->len <= id)
    g_ptr_array_add(s->flows, g_array_new(FALSE, TRUE, sizeof(FlowSample)));
  a = s->flows->pdata[id];
  if (a->len <= k)
    g_array_set_size(a, k + 1);
  return a;
}

/* Records the queue length of `port` for every period that ended before now. */
static void track_port(WhRateSampler *s, uint32_t port, WhTime now)
{
  PortTrack *pt = &s->ports[port];
  WhTime k = now / s->period;
  if (pt->samples->len >= k)
    return;
  if (!reserve(s, (k - pt->samples->len) * sizeof(uint32_t), now))
    return;
  while (pt->samples->len < k)
    g_array_append_val(pt->samples, pt->q);
}

static void on_enqueue(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  WhRateSampler *s = data;
  (void)pkt;
  if (G_UNLIKELY(s->full))
    return;
  track_port(s, qd->port, s->tp->sim->now);
  s->ports[qd->port].q = (uint32_t)qd->total_bytes;
}

static void on_dequeue(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  WhRateSampler *s = data;
  WhTime now = s->tp->sim->now;
  if (G_UNLIKELY(s->full))
    return;
  track_port(s, qd->port, now);
  s->ports[qd->port].q = (uint32_t)qd->total_bytes;
  if (pkt->type != WH_PKT_DATA || s->full)
    return;
  uint32_t k = (uint32_t)(now / s->period);
  if (pkt->hop == 0) {
    GArray *a = flow_samples(s, pkt->flow->id, k);
    if (a)
      g_array_index(a, FlowSample, k).sent += pkt->payload;
  }
  if (pkt->hop + 1u == pkt->nhops && pkt->hop > 0) { /* egress toward the receiver */
    GArray *a = flow_samples(s, pkt->flow->id, k);
    if (a)
      g_array_index(a, FlowSample, k).delivered += pkt->payload;
  }
}

static void on_drop(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  WhRateSampler *s = data;
  (void)pkt;
  if (G_UNLIKELY(s->full))
    return;
  track_port(s, qd->port, s->tp->sim->now);
  s->ports[qd->port].q = (uint32_t)qd->total_bytes; /* less, if the packet was taken out */
}

static const WhQueueHooks sampler_hooks = {
    .on_enqueue = on_enqueue,
    .on_dequeue = on_dequeue,
    .on_drop = on_drop,
    .on_mark = NULL,
};

WhRateSampler *wh_rate_sampler_new(WhTransport *tp, WhTime period)
{
  g_return_val_if_fail(period > 0, NULL);
  WhRateSampler *s = g_new0(WhRateSampler, 1);
  s->tp = tp;
  s->period = period;
  s->flows = g_ptr_array_new_with_free_func((GDestroyNotify)g_array_unref);
  s->n_ports = tp->net->n_ports;
  s->ports = g_new0(PortTrack, s->n_ports);
  for (uint32_t i = 0; i < s->n_ports; i++) {
    s->ports[i].samples = g_array_new(FALSE, FALSE, sizeof(uint32_t));
    s->ports[i].q = (uint32_t)tp->net->port[i].qd.total_bytes;
  }
  s->closed = (uint32_t)(tp->sim->now / period);
  for (uint32_t i = 0; i < s->n_ports; i++)
    g_array_set_size(s->ports[i].samples, s->closed);
  wh_net_add_hooks(tp->net, &sampler_hooks, s);
  return s;
}

void wh_rate_sampler_free(WhRateSampler *s)
{
  if (s == NULL)
    return;
  wh_net_remove_hooks(s->tp->net, &sampler_hooks, s);
  for (uint32_t i = 0; i < s->n_ports; i++)
    g_array_unref(s->ports[i].samples);
  g_free(s->ports);
  g_ptr_array_unref(s->flows);
  g_free(s);
}

void wh_rate_sampler_close(WhRateSampler *s, WhTime t)
{
  for (uint32_t i = 0; i < s->n_ports && !s->full; i++)
    track_port(s, i, t);
  /* once full, the periods before the one it filled in are whole: a port not tracked
   * since kept the queue of its last hook (wh_rate_sampler_queue) */
  WhTime k = (s->full ? s->full_at : t) / s->period;
  if (s->full) { /* no further than some port recorded: the writers' cost stays bounded */
    WhTime longest = 0;
    for (uint32_t i = 0; i < s->n_ports; i++)
      longest = MAX(longest, s->ports[i].samples->len);
    k = MIN(k, longest);
  }
  s->closed = (uint32_t)k;
}

uint32_t wh_rate_sampler_flow_periods(const WhRateSampler *s, uint32_t flow)
{
  return flow < s->flows->len ? ((const GArray *)s->flows->pdata[flow])->len : 0;
}

uint32_t wh_rate_sampler_port_periods(const WhRateSampler *s, uint32_t port)
{
  return s->ports[port].samples->len;
}

void wh_rate_sampler_set_budget(WhRateSampler *s, uint64_t max_bytes)
{
  s->max_bytes = max_bytes;
}

gboolean wh_rate_sampler_full(const WhRateSampler *s, WhTime *at)
{
  if (s->full && at)
    *at = s->full_at;
  return s->full;
}

uint64_t wh_rate_sampler_bytes(const WhRateSampler *s)
{
  return s->bytes;
}

WhTime wh_rate_sampler_period(const WhRateSampler *s)
{
  return s->period;
}

uint32_t wh_rate_sampler_periods(const WhRateSampler *s)
{
  return s->closed;
}

static const FlowSample *sample_at(const WhRateSampler *s, uint32_t flow, uint32_t k)
{
  if (flow >= s->flows->len)
    return NULL;
  const GArray *a = s->flows->pdata[flow];
  return k < a->len ? &g_array_index(a, FlowSample, k) : NULL;
}

uint64_t wh_rate_sampler_sent(const WhRateSampler *s, uint32_t flow, uint32_t k)
{
  const FlowSample *x = sample_at(s, flow, k);
  return x ? x->sent : 0;
}

uint64_t wh_rate_sampler_delivered(const WhRateSampler *s, uint32_t flow, uint32_t k)
{
  const FlowSample *x = sample_at(s, flow, k);
  return x ? x->delivered : 0;
}

double wh_rate_sampler_delivery_rate(const WhRateSampler *s, uint32_t flow, uint32_t k0,
                                     uint32_t k1)
{
  uint64_t b = 0;
  for (uint32_t k = k0; k < k1; k++)
    b += wh_rate_sampler_delivered(s, flow, k);
  return k1 > k0 ? (double)b * 8 / wh_time_to_s((k1 - k0) * s->period) : 0;
}

uint32_t wh_rate_sampler_queue(const WhRateSampler *s, uint32_t port, uint32_t k)
{
  const GArray *a = s->ports[port].samples;
  return k < a->len ? g_array_index(a, uint32_t, k) : s->ports[port].q;
}
