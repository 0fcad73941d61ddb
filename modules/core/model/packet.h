/* The packet: one frame in flight, pooled by the network (no malloc per packet).
 * A packet carries its flow, a pointer to its route (the egress ports it crosses,
 * the sender's NIC first) and its hop index, so forwarding is an array load, not a
 * table lookup. `arrive` is the time it reaches the far end of the link it is on. */
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

typedef struct WhPacket {
  struct WhPacket *next;
  struct WhFlow *flow;
  const uint32_t *route; /* egress port ids; route[0] is the sender's NIC */
  WhTime arrive;
  WhTime sent;      /* set by the sender; echoed by ACKs */
  uint64_t seq;     /* data: first byte; ACK/NACK: next expected byte */
  uint32_t size;    /* bytes on the wire */
  uint32_t payload; /* data bytes carried */
  uint32_t in_port; /* at a switch: the port of the link it came over, whose ingress
                       counts hold it (PFC accounting) */
  uint16_t hop;
  uint16_t nhops;
  uint8_t type;
  uint8_t prio;      /* priority (virtual channel) of the next egress queue and link */
  uint8_t in_prio;   /* at a switch: the priority it arrived with (ingress accounting) */
  uint8_t ecn;       /* 1: congestion experienced */
  uint8_t pfc_pause; /* PFC frames: 1 pause, 0 resume (priority in prio) */
  uint8_t n_int;     /* INT records in ints[] */
  WhIntHop *ints;    /* WH_MAX_INT_HOPS records when INT is on, else NULL; fixed per packet */
} WhPacket;

#endif
