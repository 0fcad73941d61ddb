/* Queue discs: the egress queue of every switch port and host NIC, with a hook API.
 * A queue disc holds one FIFO per priority (strict priority, priority 0 first) and
 * a class that decides what happens at enqueue and dequeue (FIFO, or RED-style ECN
 * marking on the egress queue length: Kmin/Kmax/Pmax). The base functions keep the
 * byte counts and call the hooks; observers (rate monitors, samplers, traces) attach
 * hooks without the queue disc knowing who listens, and several may listen at once
 * (a fan-out table then calls each in the order they were added). With no hook
 * attached a hook costs one NULL check. Hooks receive const packets and must not
 * change the model. */
#ifndef WH_QUEUE_DISC_H
#define WH_QUEUE_DISC_H

#include <stddef.h>
#include <stdint.h>
#include "packet.h"
#include "rng.h"

typedef struct WhQueueDisc WhQueueDisc;

typedef struct {
  void (*on_enqueue)(void *data, const WhQueueDisc *qd, const WhPacket *pkt);
  void (*on_dequeue)(void *data, const WhQueueDisc *qd, const WhPacket *pkt);
  void (*on_drop)(void *data, const WhQueueDisc *qd, const WhPacket *pkt);
  void (*on_mark)(void *data, const WhQueueDisc *qd, const WhPacket *pkt);
  /* The port sends a PFC frame asking its peer to pause (pause TRUE) or resume
   * priority `prio` (called by the network, which owns PFC). */
  void (*on_pfc)(void *data, const WhQueueDisc *qd, unsigned prio, int pause);
} WhQueueHooks;

typedef struct WhQueueObservers WhQueueObservers;

typedef struct {
  const char *type_name;
  /* Called after a packet left the queue (bytes already updated); may mark it. */
  void (*do_dequeue)(WhQueueDisc *qd, WhPacket *pkt);
} WhQueueDiscClass;

/* One priority's FIFO and its bytes, side by side: an enqueue or a dequeue touches one
 * band and the queue's first cache line, not three arrays a cache line apart. */
typedef struct {
  WhPacket *head, *tail;
  uint64_t bytes;
} WhQueueBand;

/* The first 64 bytes hold what every enqueue and dequeue reads (the network places the
 * queue disc on a cache line of its port), the band of the priority most packets take
 * (`hot`: the data priority) and RED's threshold among them, so that a data packet's
 * enqueue and dequeue touch that one line; then the other bands, what RED reads only
 * above its threshold, and the observers. */
struct WhQueueDisc {
  const WhQueueDiscClass *klass;
  /* Observers: the hook table called, NULL when nobody listens; with several
   * observers it is the fan-out table and hook_data is `observers`. */
  const WhQueueHooks *hooks;
  uint64_t total_bytes;
  uint64_t max_bytes; /* the largest total_bytes so far */
  uint8_t nonempty;   /* bit p: priority p has packets */
  uint8_t hot;        /* the priority whose band is hot_band (the others in band[]) */
  uint8_t spare[2];
  uint32_t kmin_low; /* MIN(kmin, UINT32_MAX): below it RED reads no further */
  WhQueueBand hot_band;
  /* second line on */
  uint64_t kmin, kmax;            /* RED/ECN marking (used by wh_red_queue_disc_class) */
  uint32_t port;                  /* owning directed port id */
  WhQueueBand band[WH_NPRIO - 1]; /* priority p's at p, or p - 1 above hot */
  void *hook_data;
  double pmax;
  WhRng rng;
  uint64_t marks;
  WhQueueObservers *observers; /* nullable: the list when more than one listens */
};

/* The priority whose band a queue disc keeps on its first line unless told otherwise:
 * the transport's default data priority. */
#define WH_QUEUE_HOT_PRIO 3u

/* Priority p's band. */
static inline WhQueueBand *wh_queue_disc_band(WhQueueDisc *qd, unsigned p)
{
  return p == qd->hot ? &qd->hot_band : &qd->band[p - (p > qd->hot)];
}

static inline const WhQueueBand *wh_queue_disc_band_const(const WhQueueDisc *qd, unsigned p)
{
  return p == qd->hot ? &qd->hot_band : &qd->band[p - (p > qd->hot)];
}

/* Packets queued (a walk of the bands: for checks, not the hot path). */
uint32_t wh_queue_disc_packets(const WhQueueDisc *qd);

/* Keeps priority p's band on the first line from now on; the queue must be empty. */
void wh_queue_disc_set_hot(WhQueueDisc *qd, unsigned p);

/* Sets RED's thresholds (kmin, kmax), keeping the first line's copy of kmin. */
void wh_queue_disc_set_red(WhQueueDisc *qd, uint64_t kmin, uint64_t kmax, double pmax);

extern const WhQueueDiscClass wh_fifo_queue_disc_class;
extern const WhQueueDiscClass wh_red_queue_disc_class;

void wh_queue_disc_init(WhQueueDisc *qd, const WhQueueDiscClass *klass, uint32_t port);

/* Replaces every observer with `hooks` (or with hooks == NULL detaches them all).
 * (transfer none) */
void wh_queue_disc_set_hooks(WhQueueDisc *qd, const WhQueueHooks *hooks, void *data);
/* Adds an observer after those already attached. (transfer none) */
void wh_queue_disc_add_hooks(WhQueueDisc *qd, const WhQueueHooks *hooks, void *data);
/* Removes the observer added with this (hooks, data) pair; no-op if absent. */
void wh_queue_disc_remove_hooks(WhQueueDisc *qd, const WhQueueHooks *hooks, void *data);
/* Frees what the queue disc allocated (the observer list); its packets are not its. */
void wh_queue_disc_clear(WhQueueDisc *qd);

static inline void wh_queue_disc_report_pfc(WhQueueDisc *qd, unsigned prio, int pause)
{
  if (qd->hooks && qd->hooks->on_pfc)
    qd->hooks->on_pfc(qd->hook_data, qd, prio, pause);
}

static inline void wh_queue_disc_enqueue(WhQueueDisc *qd, WhPacket *pkt)
{
  unsigned p = pkt->prio;
  pkt->next = NULL;
  WhQueueBand *b = wh_queue_disc_band(qd, p);
  if (b->tail)
    b->tail->next = pkt;
  else
    b->head = pkt;
  b->tail = pkt;
  b->bytes += pkt->size;
  qd->total_bytes += pkt->size;
  if (qd->total_bytes > qd->max_bytes)
    qd->max_bytes = qd->total_bytes;
  qd->nonempty |= (uint8_t)(1u << p);
  if (qd->hooks && qd->hooks->on_enqueue)
    qd->hooks->on_enqueue(qd->hook_data, qd, pkt);
}

/* Reports a packet refused before it entered the queue (buffer full). */
static inline void wh_queue_disc_report_drop(WhQueueDisc *qd, const WhPacket *pkt)
{
  if (qd->hooks && qd->hooks->on_drop)
    qd->hooks->on_drop(qd->hook_data, qd, pkt);
}

/* Reports a packet that passes through without queueing (a NIC's data packet,
 * pulled from its flow at the moment the transmitter frees up). */
static inline void wh_queue_disc_report_passthrough(WhQueueDisc *qd, const WhPacket *pkt)
{
  if (qd->hooks) {
    if (qd->hooks->on_enqueue)
      qd->hooks->on_enqueue(qd->hook_data, qd, pkt);
    if (qd->hooks->on_dequeue)
      qd->hooks->on_dequeue(qd->hook_data, qd, pkt);
  }
}

/* Takes out of the list from *head to *tail (linked by `next`) every packet for which
 * match(pkt, data) is true, keeping the order of the rest; returns them chained by
 * `next`, in list order. O(packets in the list). */
WhPacket *wh_packet_list_take_if(WhPacket **head, WhPacket **tail,
                                 int (*match)(const WhPacket *pkt, const void *data),
                                 const void *data);

/* Takes out of the queue every packet for which match(pkt, data) is true, wherever it
 * stands, keeping the byte counts and the order of the rest, then reports each one to
 * on_drop (the counts already without them all). Returns them chained by `next`
 * (transfer full: the caller frees them). Cold path: O(packets queued). */
WhPacket *wh_queue_disc_remove_if(WhQueueDisc *qd,
                                  int (*match)(const WhPacket *pkt, const void *data),
                                  const void *data);

/* Dequeues the head of the highest non-empty priority not in `blocked`. */
static inline WhPacket *wh_queue_disc_dequeue(WhQueueDisc *qd, uint8_t blocked)
{
  unsigned ready = qd->nonempty & (uint8_t)~blocked;
  if (ready == 0)
    return NULL;
  unsigned p = (unsigned)__builtin_ctz(ready);
  WhQueueBand *b = wh_queue_disc_band(qd, p);
  WhPacket *pkt = b->head;
  b->head = pkt->next;
  if (b->head == NULL) {
    b->tail = NULL;
    qd->nonempty &= (uint8_t) ~(1u << p);
  }
  pkt->next = NULL;
  b->bytes -= pkt->size;
  qd->total_bytes -= pkt->size;
  if (qd->klass->do_dequeue)
    qd->klass->do_dequeue(qd, pkt);
  if (qd->hooks && qd->hooks->on_dequeue)
    qd->hooks->on_dequeue(qd->hook_data, qd, pkt);
  return pkt;
}

#endif
