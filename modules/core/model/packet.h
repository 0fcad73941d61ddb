/* The packet: one frame in flight, pooled by the network (no malloc per packet).
 * A packet carries its flow, a pointer to its route (the egress ports it crosses,
 * the sender's NIC first) and its hop index, so forwarding is an array load, not a
 * table lookup. `arrive` is the time it reaches the far end of the link it is on. A
 * packet is one cache line; its INT records lie beside its slab. */
#ifndef WH_PACKET_H
#define WH_PACKET_H

#include <stdint.h>
#include "wh-time.h"

#define WH_NPRIO 8
#define WH_PRIO_CONTROL 0 /* ACK, NACK, CNP: strict highest priority, never paused */
#define WH_NO_PORT 0xffffffffu
#define WH_PFC_FRAME_BYTES 64u

typedef enum {
  WH_PKT_DATA,
  WH_PKT_ACK,
  WH_PKT_NACK,
  WH_PKT_CNP,
  WH_PKT_PFC,
} WhPacketType;

struct WhFlow;

/* One in-band network telemetry record, appended by a switch egress port to a data
 * packet at dequeue (HPCC): when, the port's cumulative transmitted bytes, its queue
 * length, and the port (whose rate the reader looks up). */
typedef struct {
  WhTime ts;
  uint64_t tx_bytes;
  uint32_t qlen;
  uint32_t port;
} WhIntHop;

#define WH_MAX_INT_HOPS 8
#define WH_MAX_FRAME_BYTES 65535u /* size and payload are 16-bit */

/* 64 bytes, one cache line: the pool aligns every packet to one. */
typedef struct WhPacket {
  struct WhPacket *next;
  struct WhFlow *flow;
  const uint32_t *route; /* egress port ids; route[0] is the sender's NIC */
  WhTime arrive;
  WhTime sent;      /* set by the sender; echoed by ACKs */
  uint64_t seq;     /* data: first byte; ACK/NACK: next expected byte */
  uint16_t size;    /* bytes on the wire */
  uint16_t payload; /* data bytes carried */
  uint16_t hop;     /* at a switch, route[hop - 1] is the port of the link it came over */
  uint16_t nhops;
  uint8_t type;
  uint8_t prio;      /* priority (virtual channel) of the next egress queue and link */
  uint8_t in_prio;   /* at a switch: the priority it arrived with (ingress accounting) */
  uint8_t ecn;       /* 1: congestion experienced */
  uint8_t pfc_pause; /* PFC frames: 1 pause, 0 resume (priority in prio) */
  uint8_t n_int;     /* INT records (wh_packet_ints) */
} WhPacket;

/* With INT on, the network's packets live in blocks of WH_PKT_INT_BLOCK bytes aligned
 * to their size: WH_PKT_INT_SLAB packets, then WH_MAX_INT_HOPS records for each, so a
 * packet's records follow from its address and cost the packet no pointer. */
#define WH_PKT_INT_SLAB 8192u
#define WH_PKT_INT_BLOCK (2u << 20)

/* The INT records of a packet of a network with INT on. (transfer none) */
static inline WhIntHop *wh_packet_ints(const WhPacket *pkt)
{
  uintptr_t a = (uintptr_t)pkt, base = a & ~(uintptr_t)(WH_PKT_INT_BLOCK - 1);
  WhIntHop *ints = (WhIntHop *)(base + WH_PKT_INT_SLAB * sizeof(WhPacket));
  return ints + (a - base) / sizeof(WhPacket) * WH_MAX_INT_HOPS;
}

#endif
