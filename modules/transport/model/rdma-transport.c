/* RDMA-style reliable transport; see rdma-transport.h.
 *
 * Sender: a flow is in its host's send heap while it has bytes it may send (below
 * the window, if any). The NIC pops the earliest-ready flow, emits one packet of at
 * most MTU payload and re-inserts the flow at its next pacing time
 * (now + wire bytes / rate). A NACK or RTO rewinds snd_nxt to the receiver's next
 * expected byte (go-back-N). The RTO is lazy: one event per flow re-arms itself at
 * the latest deadline instead of being cancelled on every ACK.
 * Receiver: in-order data advances rcv_nxt and is ACKed; a gap triggers a NACK (once
 * per expected byte per NACK interval); a duplicate is ACKed again; a CE-marked
 * packet triggers a CNP unless one went out less than the CNP interval ago. */
#include "rdma-transport.h"
#include "rdma-transport-private.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define MAX_HOPS 64
#define TIMER_RTO 0u

GQuark wh_transport_error_quark(void)
{
  return g_quark_from_static_string("wh-transport-error");
}

void wh_transport_params_from_config(WhTransportParams *p, const WhConfig *cfg)
{
  const char *t = "wh::RdmaFlow";
  p->mtu = (uint32_t)wh_config_bytes(cfg, t, "Mtu");
  p->header_bytes = (uint32_t)wh_config_bytes(cfg, t, "HeaderBytes");
  p->ctrl_bytes = (uint32_t)wh_config_bytes(cfg, t, "ControlBytes");
  p->prio = (uint8_t)wh_config_int(cfg, t, "Priority");
  p->cnp_interval = wh_config_time(cfg, t, "CnpInterval");
  p->nack_interval = wh_config_time(cfg, t, "NackInterval");
  p->rto = wh_config_time(cfg, t, "Rto");
  p->window = wh_config_bytes(cfg, t, "Window");
  p->ack_every = (uint32_t)wh_config_int(cfg, t, "AckEvery");
  p->delayed_ack_timeout = wh_config_time(cfg, t, "DelayedAckTimeout");
  p->max_retries = (uint32_t)wh_config_int(cfg, t, "MaxRetries");
}

/* ---- per-host send heap, keyed (next_avail, order of entry) ----
 * Each entry carries its flow's key, so that a sift compares without reading the flows
 * (a host may hold hundreds of sending flows, and each flow read is a cache miss).
 * Whoever changes a queued flow's next_avail calls hs_update, which reloads the key. */

static inline int entry_before(const WhHostEntry *a, const WhHostEntry *b)
{
  return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

static inline void hs_set(WhHostSched *h, uint32_t i, WhHostEntry e)
{
  h->heap[i] = e;
  e.flow->heap_pos = i;
}

static void hs_up(WhHostSched *h, uint32_t i)
{
  WhHostEntry e = h->heap[i];
  while (i > 0) {
    uint32_t parent = (i - 1) / 2;
    if (!entry_before(&e, &h->heap[parent]))
      break;
    hs_set(h, i, h->heap[parent]);
    i = parent;
  }
  hs_set(h, i, e);
}

static void hs_down(WhHostSched *h, uint32_t i)
{
  WhHostEntry e = h->heap[i];
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= h->n)
      break;
    if (c + 1 < h->n && entry_before(&h->heap[c + 1], &h->heap[c]))
      c++;
    if (!entry_before(&h->heap[c], &e))
      break;
    hs_set(h, i, h->heap[c]);
    i = c;
  }
  hs_set(h, i, e);
}

static void hs_push(WhTransport *tp, WhHostSched *h, WhFlow *f)
{
  if (h->n == h->cap) {
    h->cap = h->cap ? h->cap * 2 : 4;
    h->heap = g_renew(WhHostEntry, h->heap, h->cap);
  }
  h->heap[h->n] = (WhHostEntry){.at = f->next_avail, .seq = tp->heap_seq++, .flow = f};
  f->heap_pos = h->n++;
  hs_up(h, h->n - 1);
}

static void hs_remove(WhHostSched *h, WhFlow *f)
{
  uint32_t i = f->heap_pos;
  f->heap_pos = WH_NO_HEAP;
  WhHostEntry last = h->heap[--h->n];
  if (i == h->n)
    return;
  hs_set(h, i, last);
  if (i > 0 && entry_before(&last, &h->heap[(i - 1) / 2]))
    hs_up(h, i);
  else
    hs_down(h, i);
}

static void hs_update(WhHostSched *h, WhFlow *f)
{
  h->heap[f->heap_pos].at = f->next_avail;
  if (f->heap_pos > 0) /* the root, the NIC's flow after a packet, has nowhere up to go */
    hs_up(h, f->heap_pos);
  hs_down(h, f->heap_pos);
}

/* ---- sender ---- */

static inline gboolean can_send(const WhTransport *tp, const WhFlow *f)
{
  uint64_t win = f->cwnd ? f->cwnd : tp->p.window;
  return f->state == WH_FLOW_ACTIVE && !f->held && f->snd_nxt < f->size &&
         (win == 0 || f->snd_nxt - f->snd_una < win) &&
         (f->next_path == NULL || f->snd_una >= f->snd_max_sent || f->snd_nxt < f->snd_max_sent);
}

WhTime wh_flow_pace(const WhFlow *f, double rate_bps, uint32_t wire_bytes)
{
  if (rate_bps >= (double)f->line_rate)
    return wh_time_tx(wire_bytes, f->line_rate);
  return (WhTime)ceil((double)wire_bytes * 8e12 / rate_bps);
}

/* When the flow may send after the packet of `wire_bytes` it sent at `last_tx`: at its
 * rate, or with the changes a CC with lazy changes has scheduled before then. */
static inline WhTime next_send(const WhTransport *tp, const WhFlow *f, WhTime last_tx,
                               uint32_t wire_bytes)
{
  if (tp->cc->next_send)
    return tp->cc->next_send(f, last_tx, wire_bytes, tp->cc_params);
  return last_tx + wh_flow_pace(f, f->rate, wire_bytes);
}

/* The index of callback `cb` among WhTransportObserver's members. */
#define CB_INDEX(cb) (offsetof(WhTransportObserver, cb) / sizeof(void (*)(void)))

/* Calls callback `cb` of every observer that has one. */
#define NOTIFY(tp, cb, ...)                                                                        \
  do {                                                                                             \
    const size_t k_ = CB_INDEX(cb);                                                                \
    for (uint32_t i_ = 0; G_UNLIKELY(i_ < (tp)->n_with_cb[k_]); i_++) {                            \
      const WhTransportObserverSlot *s_ = &(tp)->with_cb[k_][i_];                                  \
      s_->obs->cb(s_->data, __VA_ARGS__);                                                          \
    }                                                                                              \
  } while (0)

/* Lists, per callback, the observers that have it, in the order they were added. */
static void index_observers(WhTransport *tp)
{
  for (size_t k = 0; k < WH_TRANSPORT_CALLBACKS; k++) {
    tp->with_cb[k] = g_renew(WhTransportObserverSlot, tp->with_cb[k], MAX(tp->n_observers, 1));
    tp->n_with_cb[k] = 0;
    for (uint32_t i = 0; i < tp->n_observers; i++) {
      void (*fn)(void);
      memcpy(&fn, (const char *)tp->observers[i].obs + k * sizeof fn, sizeof fn);
      if (fn)
        tp->with_cb[k][tp->n_with_cb[k]++] = tp->observers[i];
    }
  }
}

void wh_transport_add_observer(WhTransport *tp, const WhTransportObserver *obs, void *data)
{
  g_return_if_fail(obs != NULL);
  tp->observers = g_renew(WhTransportObserverSlot, tp->observers, tp->n_observers + 1);
  tp->observers[tp->n_observers++] = (WhTransportObserverSlot){obs, data};
  index_observers(tp);
}

void wh_transport_remove_observer(WhTransport *tp, const WhTransportObserver *obs, void *data)
{
  uint32_t k = 0;
  for (uint32_t i = 0; i < tp->n_observers; i++)
    if (tp->observers[i].obs != obs || tp->observers[i].data != data)
      tp->observers[k++] = tp->observers[i];
  tp->n_observers = k;
  index_observers(tp);
}

/* Puts the flow into its host's heap if it may send, and wakes the NIC. */
static void sender_ready(WhTransport *tp, WhFlow *f)
{
  if (f->heap_pos != WH_NO_HEAP || !can_send(tp, f))
    return;
  WhTime now = tp->sim->now;
  if (f->next_avail < now)
    f->next_avail = now;
  hs_push(tp, &tp->hosts[f->src], f);
  wh_net_host_kick(tp->net, f->src, f->next_avail);
}

/* Applies the changes a CC with lazy changes has due (they happened at their instants;
 * observers hear of them now). */
static inline void flow_sync(WhTransport *tp, WhFlow *f)
{
  if (tp->cc->sync == NULL)
    return;
  double before = f->rate;
  tp->cc->sync(f, tp->sim->now, tp->cc_params);
  if (G_UNLIKELY(tp->n_observers) && f->rate != before)
    NOTIFY(tp, on_rate, f);
}

double wh_flow_rate(WhFlow *f)
{
  flow_sync(f->tp, f);
  return f->rate;
}

void wh_flow_set_rate(WhFlow *f, double rate_bps)
{
  if (rate_bps > (double)f->line_rate)
    rate_bps = (double)f->line_rate;
  if (rate_bps == f->rate)
    return;
  f->rate = rate_bps;
  NOTIFY(f->tp, on_rate, f);
  if (f->last_tx_size == 0)
    return;
  /* Re-pace the next packet from the last send at the new rate. */
  WhTime now = f->tp->sim->now;
  WhTime next = next_send(f->tp, f, f->last_tx, f->last_tx_size);
  f->next_avail = next > now ? next : now;
  if (f->heap_pos != WH_NO_HEAP) {
    hs_update(&f->tp->hosts[f->src], f);
    wh_net_host_kick(f->tp->net, f->src, f->tp->hosts[f->src].heap[0].at);
  }
}

void wh_flow_repace(WhFlow *f)
{
  WhTime now = f->tp->sim->now;
  if (f->tp->cc->next_send == NULL || f->last_tx_size == 0 || f->next_avail <= now)
    return;
  WhTime next = next_send(f->tp, f, f->last_tx, f->last_tx_size);
  if (next < now)
    next = now;
  if (next == f->next_avail)
    return;
  gboolean earlier = next < f->next_avail;
  f->next_avail = next;
  if (f->heap_pos != WH_NO_HEAP) {
    hs_update(&f->tp->hosts[f->src], f);
    /* later: the NIC, woken for the old time, finds the flow not ready yet */
    if (earlier)
      wh_net_host_kick(f->tp->net, f->src, f->tp->hosts[f->src].heap[0].at);
  }
}

void wh_flow_set_window(WhFlow *f, uint64_t bytes)
{
  WhTransport *tp = f->tp;
  gboolean changed = f->cwnd != bytes;
  f->cwnd = bytes;
  if (G_UNLIKELY(tp->n_observers) && changed)
    NOTIFY(tp, on_rate, f);
  if (f->heap_pos != WH_NO_HEAP && !can_send(tp, f))
    hs_remove(&tp->hosts[f->src], f);
  else
    sender_ready(tp, f);
}

/* Adaptive routing. The router picks a flow's path when it first sends, and again
 * (at most once per flowlet gap) on its ACKs. A different path is taken only once no
 * data of the flow is in the network: everything it ever sent is acknowledged. Until
 * then the flow holds new data (it still retransmits, on the old path). Its packets on
 * the old path have all arrived by then (a path is FIFO), so the change never
 * reorders them; the hold is the flowlet gap, at least one round trip. A flow that is
 * idle with everything acknowledged may switch when it next sends. */
static inline gboolean drained(const WhFlow *f)
{
  return f->snd_una >= f->snd_max_sent;
}

static void switch_path(WhTransport *tp, WhFlow *f, const uint32_t *path, uint16_t hops)
{
  const uint32_t *old = f->fwd;
  uint16_t old_hops = f->fwd_hops;
  f->fwd = path;
  f->fwd_hops = hops;
  f->reroutes++;
  tp->c.reroutes++;
  NOTIFY(tp, on_reroute, f, old, old_hops);
}

static const uint32_t *ask_router(WhTransport *tp, WhFlow *f, uint16_t *hops)
{
  const WhNetRouter *r = &tp->net->router;
  f->last_choice = tp->sim->now;
  const uint32_t *cur = f->flowlets ? f->fwd : NULL;
  return r->choose(tp->net, r->data, f->src, f->dst, f->tuple_hash, f->flowlets++, cur, hops);
}

/* Before a data packet: the first choice, a held change once the flow has drained, or
 * a new choice after an idle gap. */
static void next_flowlet(WhTransport *tp, WhFlow *f, WhTime now)
{
  const WhNetRouter *r = &tp->net->router;
  if (f->flowlets == 0) {
    uint16_t n = 0;
    f->fwd = ask_router(tp, f, &n); /* replaces the flow's own copy of the same path */
    f->fwd_hops = n;
  } else if (!drained(f)) {
    return; /* a retransmission while data is in flight: the old path */
  } else if (f->next_path != NULL) {
    switch_path(tp, f, f->next_path, f->next_hops);
    f->next_path = NULL;
  } else if (now - f->last_tx >= r->flowlet_gap && now - f->last_choice >= r->flowlet_gap) {
    uint16_t n = 0;
    const uint32_t *path = ask_router(tp, f, &n);
    if (path != f->fwd)
      switch_path(tp, f, path, n);
  }
}

/* On an ACK: ask again (at most once per flowlet gap) and hold the flow's new data
 * for a change. Returns whether the flow may send now (a held change whose flight
 * has drained: the next packet takes the new path). */
static gboolean adapt_on_ack(WhTransport *tp, WhFlow *f)
{
  const WhNetRouter *r = &tp->net->router;
  if (f->next_path == NULL && tp->sim->now - f->last_choice >= r->flowlet_gap) {
    uint16_t n = 0;
    const uint32_t *path = ask_router(tp, f, &n);
    if (path != f->fwd) {
      f->next_path = path;
      f->next_hops = n;
      if (f->heap_pos != WH_NO_HEAP && !can_send(tp, f))
        hs_remove(&tp->hosts[f->src], f);
    }
  }
  return f->next_path != NULL && drained(f);
}

static WhPacket *tp_pull(void *ctx, uint32_t host, uint8_t paused, WhTime *next_ready)
{
  WhTransport *tp = ctx;
  WhHostSched *h = &tp->hosts[host];
  if (h->n == 0 || (paused & (1u << tp->p.prio))) {
    *next_ready = WH_TIME_MAX;
    return NULL;
  }
  WhFlow *f = h->heap[0].flow;
  WhTime now = tp->sim->now;
  if (h->heap[0].at > now) {
    *next_ready = h->heap[0].at;
    return NULL;
  }
  uint64_t left = f->size - f->snd_nxt;
  uint32_t payload = left < tp->p.mtu ? (uint32_t)left : tp->p.mtu;
  if (G_UNLIKELY(tp->net->router.choose != NULL))
    next_flowlet(tp, f, now);
  if (G_UNLIKELY(f->snd_max_sent == 0))
    NOTIFY(tp, on_start, f);
  WhPacket *pkt = wh_net_packet_new(tp->net);
  pkt->flow = f;
  pkt->route = f->fwd;
  pkt->nhops = f->fwd_hops;
  pkt->hop = 0;
  pkt->type = WH_PKT_DATA;
  pkt->prio = f->prio;
  pkt->ecn = 0;
  pkt->seq = f->snd_nxt;
  pkt->payload = (uint16_t)payload;
  pkt->size = (uint16_t)(payload + tp->p.header_bytes);
  pkt->sent = now;
  pkt->n_int = 0;
  if (f->snd_nxt < f->snd_max_sent) {
    f->retx_bytes += payload;
    tp->c.retx_bytes += payload;
  }
  f->snd_nxt += payload;
  if (f->snd_nxt > f->snd_max_sent)
    f->snd_max_sent = f->snd_nxt;
  f->bytes_sent += payload;
  tp->c.data_packets_sent++;
  tp->c.data_bytes_sent += payload;
  f->last_tx = now;
  f->last_tx_size = pkt->size;
  flow_sync(tp, f);
  f->next_avail = next_send(tp, f, now, pkt->size);
  if (can_send(tp, f))
    hs_update(h, f);
  else
    hs_remove(h, f);
  return pkt;
}

static WhTime tp_ready_at(void *ctx, uint32_t host)
{
  WhTransport *tp = ctx;
  WhHostSched *h = &tp->hosts[host];
  return h->n ? h->heap[0].at : WH_TIME_MAX;
}

static inline uint32_t flow_owner(const WhFlow *f)
{
  return f->id | WH_OWNER_FLOW;
}

static void send_ack_now(WhTransport *tp, WhFlow *f, WhPacket *pkt);

static void timer_at(WhFlow *f, WhTime at, unsigned timer)
{
  g_assert(timer < WH_FLOW_TIMERS && f->timers[timer] == NULL);
  f->timers[timer] = wh_sim_schedule_at(f->tp->sim, at, wh_transport_flow_event, f->tp,
                                        ((uint64_t)f->id << 8) | timer, flow_owner(f));
}

void wh_flow_timer_at(WhFlow *f, WhTime at, unsigned timer)
{
  g_return_if_fail(timer > TIMER_RTO && timer < WH_FLOW_TIMER_DELACK);
  timer_at(f, at, timer);
}

static void go_back(WhTransport *tp, WhFlow *f, uint64_t seq)
{
  if (f->snd_una > f->retry_una || f->retries == 0) {
    f->retry_una = f->snd_una;
    f->retries = 0;
  }
  if (++f->retries > tp->p.max_retries && tp->p.max_retries && tp->gave_up < 0) {
    tp->gave_up = f->id;
    wh_sim_stop(tp->sim);
  }
  if (seq > f->snd_una)
    f->snd_una = seq;
  if (f->snd_nxt > seq)
    f->snd_nxt = seq;
  if (f->snd_nxt < f->snd_una)
    f->snd_nxt = f->snd_una;
  sender_ready(tp, f);
}

static void sender_done(WhTransport *tp, WhFlow *f)
{
  const WhNetRouter *r = &tp->net->router;
  if (r->release && f->flowlets > 0)
    r->release(tp->net, r->data, f->src, f->dst, f->next_path ? f->next_path : f->fwd);
  f->state = WH_FLOW_SENT;
  if (f->heap_pos != WH_NO_HEAP)
    hs_remove(&tp->hosts[f->src], f);
  for (unsigned i = 0; i < WH_FLOW_TIMERS; i++) {
    if (f->timers[i]) {
      wh_sim_cancel(tp->sim, f->timers[i]);
      f->timers[i] = NULL;
    }
  }
  tp->c.flows_acked++;
  NOTIFY(tp, on_acked, f);
}

static void flow_start(WhTransport *tp, WhFlow *f)
{
  f->state = WH_FLOW_ACTIVE;
  f->rate = (double)f->line_rate;
  tp->cc->init(f, tp->cc_params);
  f->rto_deadline = tp->sim->now + tp->p.rto;
  timer_at(f, f->rto_deadline, TIMER_RTO);
  NOTIFY(tp, on_activate, f);
  sender_ready(tp, f);
}

static void flow_rto(WhTransport *tp, WhFlow *f)
{
  WhTime now = tp->sim->now;
  if (now < f->rto_deadline) {
    timer_at(f, f->rto_deadline, TIMER_RTO);
    return;
  }
  if (f->snd_una < f->snd_nxt || f->snd_nxt < f->size) {
    if (f->snd_una < f->snd_nxt) {
      tp->c.timeouts++;
      if (tp->cc->on_loss)
        tp->cc->on_loss(f, WH_LOSS_TIMEOUT, tp->cc_params);
      go_back(tp, f, f->snd_una);
    }
    f->rto_deadline = now + tp->p.rto;
    timer_at(f, f->rto_deadline, TIMER_RTO);
  }
}

/* Flow events: arg = id << 8 | timer slot. Slot 0 starts a pending flow and is its
 * RTO afterwards; the other slots belong to the CC. */
void wh_transport_flow_event(WhSim *sim, void *ctx, uint64_t arg)
{
  (void)sim;
  WhTransport *tp = ctx;
  WhFlow *f = wh_transport_flow(tp, (uint32_t)(arg >> 8));
  unsigned timer = (unsigned)(arg & 0xff);
  f->timers[timer] = NULL;
  if (f->state == WH_FLOW_PENDING) {
    flow_start(tp, f);
    return;
  }
  if (timer == WH_FLOW_TIMER_DELACK) {
    if (f->ack_pending)
      send_ack_now(tp, f, NULL);
    return;
  }
  if (f->state != WH_FLOW_ACTIVE)
    return;
  if (timer == TIMER_RTO)
    flow_rto(tp, f);
  else
    tp->cc->on_timer(f, timer, tp->cc_params);
}

static void on_ack(WhTransport *tp, WhFlow *f, WhPacket *pkt)
{
  if (f->state != WH_FLOW_ACTIVE)
    return;
  uint64_t acked = 0;
  if (pkt->seq > f->snd_una) {
    acked = pkt->seq - f->snd_una;
    f->snd_una = pkt->seq;
    if (f->snd_nxt < f->snd_una)
      f->snd_nxt = f->snd_una;
    f->rto_deadline = tp->sim->now + tp->p.rto;
  }
  NOTIFY(tp, on_ack, f, pkt);
  tp->cc->on_ack(f, pkt, acked, tp->cc_params);
  if (f->snd_una >= f->size) {
    sender_done(tp, f);
    return;
  }
  gboolean released = G_UNLIKELY(tp->net->router.choose != NULL) && adapt_on_ack(tp, f);
  if (tp->p.window || f->cwnd || released)
    sender_ready(tp, f);
}

static void on_nack(WhTransport *tp, WhFlow *f, WhPacket *pkt)
{
  if (f->state != WH_FLOW_ACTIVE || pkt->seq < f->snd_una)
    return;
  f->rto_deadline = tp->sim->now + tp->p.rto;
  if (tp->cc->on_loss)
    tp->cc->on_loss(f, WH_LOSS_NACK, tp->cc_params);
  go_back(tp, f, pkt->seq);
}

/* ---- receiver ---- */

static void send_control(WhTransport *tp, WhFlow *f, WhPacket *pkt, WhPacketType type, uint64_t seq,
                         uint8_t ece)
{
  pkt->type = (uint8_t)type;
  pkt->route = f->rev;
  pkt->nhops = f->rev_hops;
  pkt->hop = 0;
  pkt->prio = WH_PRIO_CONTROL;
  pkt->ecn = ece;
  pkt->seq = seq;
  pkt->payload = 0;
  pkt->size = (uint16_t)tp->p.ctrl_bytes;
  wh_net_host_send(tp->net, f->dst, pkt);
}

/* Sends the cumulative ACK for everything received so far, echoing CE if any of the
 * packets it covers carried it. `pkt` (nullable) is recycled into the ACK; the INT
 * records of that data packet, if any, stay in place and are echoed to the sender. */
static void send_ack_now(WhTransport *tp, WhFlow *f, WhPacket *pkt)
{
  if (pkt == NULL) {
    pkt = wh_net_packet_new(tp->net);
    pkt->flow = f;
    pkt->sent = 0;
    pkt->n_int = 0;
  }
  uint8_t ece = f->ece_pending;
  f->ack_pending = 0;
  f->ece_pending = 0;
  if (f->timers[WH_FLOW_TIMER_DELACK]) {
    wh_sim_cancel(tp->sim, f->timers[WH_FLOW_TIMER_DELACK]);
    f->timers[WH_FLOW_TIMER_DELACK] = NULL;
  }
  tp->c.acks++;
  pkt->flow = f;
  send_control(tp, f, pkt, WH_PKT_ACK, f->rcv_nxt, ece);
}

static void on_data(WhTransport *tp, WhFlow *f, WhPacket *pkt)
{
  WhTime now = tp->sim->now;
  tp->c.data_bytes_arrived += pkt->payload;
  if (pkt->ecn && tp->cc->uses_cnp && (!f->cnp_sent || now - f->last_cnp >= tp->p.cnp_interval)) {
    f->cnp_sent = TRUE;
    f->last_cnp = now;
    tp->c.cnps++;
    WhPacket *cnp = wh_net_packet_new(tp->net);
    cnp->flow = f;
    cnp->sent = pkt->sent;
    cnp->n_int = 0;
    send_control(tp, f, cnp, WH_PKT_CNP, f->rcv_nxt, 0);
  }
  if (pkt->seq == f->rcv_nxt) {
    f->rcv_nxt += pkt->payload;
    f->ece_pending |= pkt->ecn;
    gboolean last = f->rcv_nxt == f->size;
    if (last) {
      f->finish = now;
      tp->c.flows_finished++;
      NOTIFY(tp, on_done, f);
    }
    if (++f->ack_pending >= tp->p.ack_every || last) {
      send_ack_now(tp, f, pkt);
    } else {
      if (f->timers[WH_FLOW_TIMER_DELACK] == NULL)
        timer_at(f, now + tp->p.delayed_ack_timeout, WH_FLOW_TIMER_DELACK);
      wh_net_packet_free(tp->net, pkt);
    }
  } else if (pkt->seq > f->rcv_nxt) {
    tp->c.out_of_order++;
    if (!f->nack_sent || f->nack_for != f->rcv_nxt || now - f->nack_time >= tp->p.nack_interval) {
      f->nack_sent = TRUE;
      f->nack_for = f->rcv_nxt;
      f->nack_time = now;
      tp->c.nacks++;
      send_control(tp, f, pkt, WH_PKT_NACK, f->rcv_nxt, 0);
    } else {
      wh_net_packet_free(tp->net, pkt);
    }
  } else {
    /* a duplicate: acknowledge at once, with whatever is pending */
    send_ack_now(tp, f, pkt);
  }
}

static void tp_deliver(void *ctx, WhPacket *pkt)
{
  WhTransport *tp = ctx;
  WhFlow *f = pkt->flow;
  switch ((WhPacketType)pkt->type) {
  case WH_PKT_DATA:
    on_data(tp, f, pkt);
    return;
  case WH_PKT_ACK:
    on_ack(tp, f, pkt);
    break;
  case WH_PKT_NACK:
    on_nack(tp, f, pkt);
    break;
  case WH_PKT_CNP:
    if (f->state == WH_FLOW_ACTIVE)
      tp->cc->on_cnp(f, tp->cc_params);
    break;
  case WH_PKT_PFC:
    g_assert_not_reached();
  }
  wh_net_packet_free(tp->net, pkt);
}

/* ---- construction ---- */

WhTransport *wh_transport_new(WhSim *sim, WhNet *net, const WhTransportParams *params,
                              const WhCcClass *cc, void *cc_params)
{
  g_return_val_if_fail(params->mtu + (uint64_t)params->header_bytes <= WH_MAX_FRAME_BYTES &&
                           params->ctrl_bytes <= WH_MAX_FRAME_BYTES,
                       NULL);
  WhTransport *tp = g_new0(WhTransport, 1);
  tp->sim = sim;
  tp->net = net;
  tp->p = *params;
  tp->gave_up = -1;
  tp->cc = cc;
  tp->cc_params = cc_params;
  tp->hosts = g_new0(WhHostSched, net->n_hosts);
  tp->chunk_mem = wh_bulk_new();
  tp->routes = (WhWordStore){tp->chunk_mem, NULL, NULL};
  WhNetTransport ops = {.deliver = tp_deliver, .pull = tp_pull, .ready_at = tp_ready_at};
  wh_net_set_transport(net, &ops, tp);
  wh_net_set_data_priority(net, params->prio);
  return tp;
}

void wh_transport_free(WhTransport *tp)
{
  if (tp == NULL)
    return;
  wh_bulk_free(tp->chunk_mem);
  g_free(tp->chunks);
  for (uint32_t h = 0; h < tp->net->n_hosts; h++)
    g_free(tp->hosts[h].heap);
  g_free(tp->hosts);
  g_free(tp->cc_params);
  g_free(tp->observers);
  for (size_t k = 0; k < WH_TRANSPORT_CALLBACKS; k++)
    g_free(tp->with_cb[k]);
  g_free(tp);
}

static inline uint64_t tuple_hash(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport)
{
  return wh_mix64(((uint64_t)src << 32 | dst) ^
                  wh_mix64((uint64_t)sport << 16 | dport | 17u << 24));
}

int64_t wh_transport_add_flow(WhTransport *tp, uint32_t src, uint32_t dst, uint64_t size,
                              WhTime start, GError **error)
{
  WhNet *net = tp->net;
  if (src >= net->n_hosts || dst >= net->n_hosts) {
    g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                "flow %u->%u: no such host (the topology has hosts 0..%u)", src, dst,
                net->n_hosts - 1);
    return -1;
  }
  if (src == dst) {
    g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                "flow %u->%u: source and destination are the same host", src, dst);
    return -1;
  }
  if (size == 0) {
    g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                "flow %u->%u: size must be greater than zero", src, dst);
    return -1;
  }
  if (start < tp->sim->now) {
    g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                "flow %u->%u: start time lies in the past", src, dst);
    return -1;
  }
  uint32_t id = tp->n_flows;
  if (id % WH_FLOW_CHUNK == 0) {
    tp->chunks = g_renew(WhFlow *, tp->chunks, tp->n_chunks + 1);
    tp->chunks[tp->n_chunks++] = wh_bulk_alloc0(tp->chunk_mem, WH_FLOW_CHUNK * sizeof(WhFlow));
  }
  WhFlow *f = wh_transport_flow(tp, id); /* zero: chunks come from wh_bulk_alloc0 */
  f->tp = tp;
  f->id = id;
  f->src = src;
  f->dst = dst;
  f->size = size;
  f->start = start;
  f->prio = tp->p.prio;
  f->heap_pos = WH_NO_HEAP;
  uint32_t *fwd = wh_words_room(&tp->routes, 2 * MAX_HOPS);
  uint16_t sport = (uint16_t)(49152u + id % 16384u), dport = 4791;
  uint32_t nf = wh_net_route(net, src, dst, tuple_hash(src, dst, sport, dport), fwd, MAX_HOPS);
  uint32_t *rev = fwd + nf;
  uint32_t nr = wh_net_route(net, dst, src, tuple_hash(dst, src, dport, sport), rev, MAX_HOPS);
  if (nf == 0 || nr == 0) {
    g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                "flow %u->%u: route longer than %d hops", src, dst, MAX_HOPS);
    return -1;
  }
  wh_words_commit(&tp->routes, nf + nr);
  f->fwd = fwd;
  f->rev = rev;
  f->tuple_hash = tuple_hash(src, dst, sport, dport);
  f->fwd_hops = (uint16_t)nf;
  f->rev_hops = (uint16_t)nr;
  f->line_rate = net->router.line_rate ? net->router.line_rate(net, net->router.data, fwd, nf)
                                       : net->port[fwd[0]].line_bps;
  tp->n_flows++;
  timer_at(f, start, TIMER_RTO);
  return id;
}

void wh_transport_reschedule_flow(WhTransport *tp, WhFlow *f)
{
  WhHostSched *h = &tp->hosts[f->src];
  hs_update(h, f);
  wh_net_host_kick(tp->net, f->src, h->heap[0].at);
}

void wh_transport_flow_progressed(WhTransport *tp, WhFlow *f)
{
  if (f->rcv_nxt >= f->size && f->finish == 0) {
    f->finish = tp->sim->now;
    tp->c.flows_finished++;
    NOTIFY(tp, on_done, f);
  }
  if (f->snd_una >= f->size) {
    sender_done(tp, f);
    return;
  }
  if (f->heap_pos != WH_NO_HEAP && !can_send(tp, f))
    hs_remove(&tp->hosts[f->src], f);
  else
    sender_ready(tp, f);
}
