/* The queue-disc base and its two classes: plain priority FIFO, and RED-style ECN
 * marking at dequeue on the length of the packet's own priority queue (as the HPCC
 * project's ns-3 switch does): below Kmin never, above Kmax always, in between with
 * probability Pmax * (q - Kmin) / (Kmax - Kmin), drawn from the port's own stream. */
#include "queue-disc.h"

#include <string.h>

void wh_queue_disc_init(WhQueueDisc *qd, const WhQueueDiscClass *klass, uint32_t port)
{
  memset(qd, 0, sizeof *qd);
  qd->klass = klass;
  qd->port = port;
}

void wh_queue_disc_set_hooks(WhQueueDisc *qd, const WhQueueHooks *hooks, void *data)
{
  qd->hooks = hooks;
  qd->hook_data = hooks ? data : NULL;
}

static void red_do_dequeue(WhQueueDisc *qd, WhPacket *pkt)
{
  if (pkt->type != WH_PKT_DATA)
    return;
  uint64_t q = qd->bytes[pkt->prio];
  if (q <= qd->kmin)
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
