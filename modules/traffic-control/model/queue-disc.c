/* The queue-disc base and its two classes: plain priority FIFO, and RED-style ECN
 * marking at dequeue on the length of the packet's own priority queue (as the HPCC
 * project's ns-3 switch does): below Kmin never, above Kmax always, in between with
 * probability Pmax * (q - Kmin) / (Kmax - Kmin), drawn from the port's own stream. */
#include "queue-disc.h"

#include <glib.h>
#include <string.h>

void wh_queue_disc_init(WhQueueDisc *qd, const WhQueueDiscClass *klass, uint32_t port)
{
  memset(qd, 0, sizeof *qd);
  qd->klass = klass;
  qd->port = port;
  qd->hot = WH_QUEUE_HOT_PRIO;
}

void wh_queue_disc_set_hot(WhQueueDisc *qd, unsigned p)
{
  g_return_if_fail(p < WH_NPRIO && qd->nonempty == 0);
  qd->hot = (uint8_t)p;
}

void wh_queue_disc_set_red(WhQueueDisc *qd, uint64_t kmin, uint64_t kmax, double pmax)
{
  qd->kmin = kmin;
  qd->kmax = kmax;
  qd->pmax = pmax;
  qd->kmin_low = kmin < UINT32_MAX ? (uint32_t)kmin : UINT32_MAX;
}

uint32_t wh_queue_disc_packets(const WhQueueDisc *qd)
{
  uint32_t n = 0;
  for (unsigned p = 0; p < WH_NPRIO; p++)
    for (const WhPacket *pkt = wh_queue_disc_band_const(qd, p)->head; pkt; pkt = pkt->next)
      n++;
  return n;
}

/* Several observers: a list, called in order through the fan-out table. */
typedef struct {
  const WhQueueHooks *hooks;
  void *data;
} Observer;

struct WhQueueObservers {
  uint32_t n;
  Observer o[];
};

#define FAN_OUT(cb, ...)                                                                           \
  do {                                                                                             \
    const WhQueueObservers *list = data;                                                           \
    for (uint32_t i = 0; i < list->n; i++)                                                         \
      if (list->o[i].hooks->cb)                                                                    \
        list->o[i].hooks->cb(list->o[i].data, __VA_ARGS__);                                        \
  } while (0)

static void fan_enqueue(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  FAN_OUT(on_enqueue, qd, pkt);
}

static void fan_dequeue(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  FAN_OUT(on_dequeue, qd, pkt);
}

static void fan_drop(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  FAN_OUT(on_drop, qd, pkt);
}

static void fan_mark(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  FAN_OUT(on_mark, qd, pkt);
}

static void fan_pfc(void *data, const WhQueueDisc *qd, unsigned prio, int pause)
{
  FAN_OUT(on_pfc, qd, prio, pause);
}

static const WhQueueHooks fan_out_hooks = {
    .on_enqueue = fan_enqueue,
    .on_dequeue = fan_dequeue,
    .on_drop = fan_drop,
    .on_mark = fan_mark,
    .on_pfc = fan_pfc,
};

void wh_queue_disc_clear(WhQueueDisc *qd)
{
  g_free(qd->observers);
  qd->observers = NULL;
  qd->hooks = NULL;
  qd->hook_data = NULL;
}

WhPacket *wh_packet_list_take_if(WhPacket **head, WhPacket **tail,
                                 int (*match)(const WhPacket *pkt, const void *data),
                                 const void *data)
{
  WhPacket *out = NULL, **out_tail = &out, *prev = NULL, *next;
  for (WhPacket *pkt = *head; pkt; pkt = next) {
    next = pkt->next;
    if (!match(pkt, data)) {
      prev = pkt;
      continue;
    }
    if (prev)
      prev->next = next;
    else
      *head = next;
    if (*tail == pkt)
      *tail = prev;
    pkt->next = NULL;
    *out_tail = pkt;
    out_tail = &pkt->next;
  }
  return out;
}

WhPacket *wh_queue_disc_remove_if(WhQueueDisc *qd,
                                  int (*match)(const WhPacket *pkt, const void *data),
                                  const void *data)
{
  WhPacket *out = NULL, **out_tail = &out;
  for (unsigned p = 0; p < WH_NPRIO; p++) {
    WhQueueBand *b = wh_queue_disc_band(qd, p);
    WhPacket *taken = wh_packet_list_take_if(&b->head, &b->tail, match, data);
    if (b->head == NULL)
      qd->nonempty &= (uint8_t) ~(1u << p);
    *out_tail = taken;
    for (; *out_tail; out_tail = &(*out_tail)->next) {
      b->bytes -= (*out_tail)->size;
      qd->total_bytes -= (*out_tail)->size;
    }
  }
  for (const WhPacket *pkt = out; pkt; pkt = pkt->next)
    wh_queue_disc_report_drop(qd, pkt);
  return out;
}

void wh_queue_disc_set_hooks(WhQueueDisc *qd, const WhQueueHooks *hooks, void *data)
{
  wh_queue_disc_clear(qd);
  qd->hooks = hooks;
  qd->hook_data = hooks ? data : NULL;
}

/* Points the dispatch slot at the only observer, or at the fan-out table. */
static void dispatch(WhQueueDisc *qd, Observer *list, uint32_t n)
{
  WhQueueObservers *obs = NULL;
  if (n > 1) {
    obs = g_malloc(sizeof *obs + n * sizeof(Observer));
    obs->n = n;
    memcpy(obs->o, list, n * sizeof(Observer));
  }
  g_free(qd->observers);
  qd->observers = obs;
  qd->hooks = n == 0 ? NULL : n == 1 ? list[0].hooks : &fan_out_hooks;
  qd->hook_data = n == 0 ? NULL : n == 1 ? list[0].data : obs;
}

/* The observers attached now, into `out` (which has room for one more). */
static uint32_t current(const WhQueueDisc *qd, Observer *out)
{
  if (qd->observers) {
    memcpy(out, qd->observers->o, qd->observers->n * sizeof(Observer));
    return qd->observers->n;
  }
  if (qd->hooks == NULL)
    return 0;
  out[0] = (Observer){qd->hooks, qd->hook_data};
  return 1;
}

void wh_queue_disc_add_hooks(WhQueueDisc *qd, const WhQueueHooks *hooks, void *data)
{
  g_return_if_fail(hooks != NULL);
  uint32_t have = qd->observers ? qd->observers->n : 1;
  g_autofree Observer *list = g_new(Observer, have + 1);
  uint32_t n = current(qd, list);
  list[n++] = (Observer){hooks, data};
  dispatch(qd, list, n);
}

void wh_queue_disc_remove_hooks(WhQueueDisc *qd, const WhQueueHooks *hooks, void *data)
{
  uint32_t have = qd->observers ? qd->observers->n : 1;
  g_autofree Observer *list = g_new(Observer, have + 1);
  uint32_t n = current(qd, list), k = 0;
  for (uint32_t i = 0; i < n; i++)
    if (list[i].hooks != hooks || list[i].data != data)
      list[k++] = list[i];
  if (k != n)
    dispatch(qd, list, k);
}

static void red_do_dequeue(WhQueueDisc *qd, WhPacket *pkt)
{
  if (pkt->type != WH_PKT_DATA)
    return;
  uint64_t q = wh_queue_disc_band(qd, pkt->prio)->bytes;
  if (q <= qd->kmin_low || q <= qd->kmin)
    return;
  int mark;
  if (q >= qd->kmax)
    mark = 1;
  else
    mark = wh_rng_uniform(&qd->rng) <
           qd->pmax * (double)(q - qd->kmin) / (double)(qd->kmax - qd->kmin);
  if (mark && !pkt->ecn) {
    pkt->ecn = 1;
    qd->marks++;
    if (qd->hooks && qd->hooks->on_mark)
      qd->hooks->on_mark(qd->hook_data, qd, pkt);
  }
}

const WhQueueDiscClass wh_fifo_queue_disc_class = {
    .type_name = "wh::FifoQueueDisc",
    .do_dequeue = NULL,
};

const WhQueueDiscClass wh_red_queue_disc_class = {
    .type_name = "wh::RedQueueDisc",
    .do_dequeue = red_do_dequeue,
};
