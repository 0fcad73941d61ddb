/* Snapshot, restore, shift, advance and completion of flows; see flow-state.h. */
#include "flow-state.h"
#include "rdma-transport-private.h"

#include <string.h>

#define SNAPSHOT_MAGIC 0x31434357u /* "WCC1" */

static inline WhTime get_time(const uint8_t *block, uint16_t off)
{
  WhTime t;
  memcpy(&t, block + off, sizeof t);
  return t;
}

static inline void put_time(uint8_t *block, uint16_t off, WhTime t)
{
  memcpy(block + off, &t, sizeof t);
}

/* Adds `bytes` to every byte position the CC keeps (modulo 2^64). */
static void move_seq_fields(WhFlow *f, uint64_t bytes)
{
  const WhCcClass *cc = f->tp->cc;
  for (uint32_t i = 0; i < cc->n_seq_fields; i++) {
    uint64_t v;
    memcpy(&v, f->cc.bytes + cc->seq_fields[i], sizeof v);
    v += bytes;
    memcpy(f->cc.bytes + cc->seq_fields[i], &v, sizeof v);
  }
}

void wh_flow_cc_snapshot(WhFlow *f, WhCcSnapshot *out)
{
  const WhCcClass *cc = f->tp->cc;
  WhTime now = f->tp->sim->now;
  memset(out, 0, sizeof *out);
  g_strlcpy(out->cc, cc->name, sizeof out->cc);
  out->rate = wh_flow_rate(f);
  out->cwnd = f->cwnd;
  out->taken_at = now;
  memcpy(out->state, f->cc.bytes, WH_CC_STATE_BYTES);
  for (uint32_t i = 0; i < cc->n_time_fields; i++) {
    WhTime t = get_time(out->state, cc->time_fields[i]);
    if (t == 0)
      continue;
    out->time_set |= 1u << i;
    put_time(out->state, cc->time_fields[i], (WhTime)((int64_t)(t - now)));
  }
  for (uint32_t i = 0; i < cc->n_seq_fields; i++) {
    uint64_t v;
    memcpy(&v, out->state + cc->seq_fields[i], sizeof v);
    v -= f->snd_una; /* relative, two's complement */
    memcpy(out->state + cc->seq_fields[i], &v, sizeof v);
  }
  for (unsigned k = 0; k < WH_CC_SNAPSHOT_TIMERS; k++) {
    const WhEvent *ev = f->timers[k + 1];
    if (ev == NULL)
      continue;
    out->timer_armed[k] = 1;
    out->timer_rel[k] = (int64_t)(ev->time - now);
    out->timer_seq[k] = ev->seq;
  }
}

gboolean wh_flow_cc_restore(WhFlow *f, const WhCcSnapshot *snap, GError **error)
{
  WhTransport *tp = f->tp;
  const WhCcClass *cc = tp->cc;
  WhTime now = tp->sim->now;
  if (strncmp(snap->cc, cc->name, sizeof snap->cc) != 0) {
    g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                "flow %u: snapshot of CC \"%.16s\" cannot be restored into CC \"%s\"", f->id,
                snap->cc, cc->name);
    return FALSE;
  }
  if (f->state != WH_FLOW_ACTIVE) {
    g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                "flow %u: only an active flow takes a CC snapshot", f->id);
    return FALSE;
  }
  memcpy(f->cc.bytes, snap->state, WH_CC_STATE_BYTES);
  for (uint32_t i = 0; i < cc->n_time_fields; i++) {
    WhTime rel = get_time(f->cc.bytes, cc->time_fields[i]);
    put_time(f->cc.bytes, cc->time_fields[i],
             (snap->time_set >> i) & 1u ? (WhTime)((int64_t)now + (int64_t)rel) : 0);
  }
  move_seq_fields(f, f->snd_una);
  for (unsigned k = 0; k < WH_CC_SNAPSHOT_TIMERS; k++) {
    unsigned slot = k + 1;
    if (f->timers[slot]) {
      wh_sim_cancel(tp->sim, f->timers[slot]);
      f->timers[slot] = NULL;
    }
    if (!snap->timer_armed[k])
      continue;
    WhTime at = (WhTime)((int64_t)now + snap->timer_rel[k]);
    uint64_t arg = ((uint64_t)f->id << 8) | slot;
    uint32_t owner = f->id | WH_OWNER_FLOW;
    if (snap->taken_at == now && snap->timer_seq[k] < tp->sim->next_seq)
      f->timers[slot] = wh_sim_schedule_at_seq(tp->sim, at, snap->timer_seq[k],
                                               wh_transport_flow_event, tp, arg, owner);
    else
      f->timers[slot] = wh_sim_schedule_at(tp->sim, at, wh_transport_flow_event, tp, arg, owner);
  }
  f->cwnd = 0;
  /* With the rate unchanged the flow keeps its pacing gap, also under a CC with lazy
   * changes whose restored schedule would have ended it at another time: its next
   * packet is paced with the restored state. */
  wh_flow_set_rate(f, snap->rate);
  wh_flow_set_window(f, snap->cwnd);
  return TRUE;
}

void wh_cc_snapshot_serialize(const WhCcSnapshot *snap, uint8_t out[WH_CC_SNAPSHOT_BYTES])
{
  G_STATIC_ASSERT(sizeof(WhCcSnapshot) + 8 <= WH_CC_SNAPSHOT_BYTES);
  memset(out, 0, WH_CC_SNAPSHOT_BYTES);
  uint32_t magic = SNAPSHOT_MAGIC, size = sizeof *snap;
  memcpy(out, &magic, 4);
  memcpy(out + 4, &size, 4);
  memcpy(out + 8, snap, sizeof *snap);
}

gboolean wh_cc_snapshot_deserialize(const uint8_t *bytes, gsize len, WhCcSnapshot *out,
                                    GError **error)
{
  uint32_t magic = 0, size = 0;
  if (len >= 8) {
    memcpy(&magic, bytes, 4);
    memcpy(&size, bytes + 4, 4);
  }
  if (len != WH_CC_SNAPSHOT_BYTES || magic != SNAPSHOT_MAGIC || size != sizeof *out) {
    g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                "not a CC snapshot of this build (%" G_GSIZE_FORMAT " bytes)", len);
    return FALSE;
  }
  memcpy(out, bytes + 8, sizeof *out);
  return TRUE;
}

static inline void shift_if_set(WhTime *t, WhTime shift)
{
  if (*t)
    *t += shift;
}

void wh_transport_shift_flow(WhTransport *tp, WhFlow *f, WhTime shift)
{
  const WhCcClass *cc = tp->cc;
  shift_if_set(&f->next_avail, shift);
  shift_if_set(&f->last_tx, shift);
  shift_if_set(&f->last_choice, shift);
  shift_if_set(&f->rto_deadline, shift);
  if (f->cnp_sent)
    f->last_cnp += shift;
  if (f->nack_sent)
    f->nack_time += shift;
  for (uint32_t i = 0; i < cc->n_time_fields; i++) {
    WhTime t = get_time(f->cc.bytes, cc->time_fields[i]);
    if (t)
      put_time(f->cc.bytes, cc->time_fields[i], t + shift);
  }
  if (f->heap_pos != WH_NO_HEAP)
    wh_transport_reschedule_flow(tp, f);
}

typedef struct {
  const WhFlow *flow;
  uint64_t bytes;
} Renumber;

static void renumber(WhPacket *pkt, void *data)
{
  const Renumber *r = data;
  if (pkt->flow == r->flow && pkt->type != WH_PKT_PFC)
    pkt->seq += r->bytes;
}

/* An advance may move an active flow only within the bytes it has not sent yet. */
static gboolean may_advance(const WhFlow *f, uint64_t bytes, GError **error)
{
  if (f->state == WH_FLOW_ACTIVE && f->snd_max_sent + bytes <= f->size)
    return TRUE;
  g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
              "flow %u: cannot advance by %" G_GUINT64_FORMAT " bytes (%s)", f->id, bytes,
              f->state != WH_FLOW_ACTIVE ? "not active" : "past the bytes not yet sent");
  return FALSE;
}

void wh_transport_hold(WhTransport *tp, WhFlow *f, gboolean held)
{
  f->held = held != FALSE;
  if (f->state == WH_FLOW_ACTIVE)
    wh_transport_flow_progressed(tp, f);
}

gboolean wh_transport_advance(WhTransport *tp, WhFlow *f, uint64_t bytes, GError **error)
{
  if (!may_advance(f, bytes, error))
    return FALSE;
  if (bytes == 0)
    return TRUE;
  Renumber r = {f, bytes};
  wh_net_foreach_packet(tp->net, renumber, &r);
  return wh_transport_advance_ends(tp, f, bytes, error);
}

gboolean wh_transport_advance_ends(WhTransport *tp, WhFlow *f, uint64_t bytes, GError **error)
{
  if (!may_advance(f, bytes, error))
    return FALSE;
  if (bytes == 0)
    return TRUE;
  f->snd_nxt += bytes;
  f->snd_una += bytes;
  f->snd_max_sent += bytes;
  f->rcv_nxt += bytes;
  if (f->nack_sent)
    f->nack_for += bytes;
  move_seq_fields(f, bytes);
  tp->c.advanced_bytes += bytes;
  wh_transport_flow_progressed(tp, f);
  return TRUE;
}

static void reclaim_flow(WhTransport *tp, const WhFlow *f)
{
  for (uint16_t h = 0; h < f->fwd_hops; h++)
    wh_net_reclaim_flow_at(tp->net, f->fwd[h], f);
  for (uint16_t h = 0; h < f->rev_hops; h++)
    wh_net_reclaim_flow_at(tp->net, f->rev[h], f);
}

gboolean wh_transport_complete_in_place(WhTransport *tp, WhFlow *f, GError **error)
{
  if (f->state != WH_FLOW_ACTIVE) {
    g_set_error(error, WH_TRANSPORT_ERROR, WH_TRANSPORT_ERROR_FLOW,
                "flow %u: cannot complete a flow that %s", f->id,
                f->state == WH_FLOW_PENDING ? "has not started" : "is already complete");
    return FALSE;
  }
  tp->c.advanced_bytes += f->size - f->rcv_nxt;
  f->rcv_nxt = f->size;
  f->snd_una = f->snd_nxt = f->snd_max_sent = f->size;
  f->ack_pending = 0;
  f->ece_pending = 0;
  wh_transport_flow_progressed(tp, f);
  return TRUE;
}

gboolean wh_transport_complete(WhTransport *tp, WhFlow *f, GError **error)
{
  if (f->state == WH_FLOW_ACTIVE) /* else refused below, with nothing reclaimed */
    reclaim_flow(tp, f);
  return wh_transport_complete_in_place(tp, f, error);
}
