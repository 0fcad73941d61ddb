/* Registered parameters of the RDMA transport (wh::RdmaFlow). Header and control
 * frame sizes follow RoCEv2 framing: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4
 * + FCS 4 = 62 bytes per data packet; preamble and inter-frame gap are not modeled. */
#include "registry.h"

static const WhParamSpec rdma_flow_params[] = {
    {"Mtu", WH_PARAM_BYTES, "1000B", "payload bytes per data packet", WH_CHECK_POSITIVE},
    {"HeaderBytes", WH_PARAM_BYTES, "62B", "header bytes on the wire per data packet"},
    {"ControlBytes", WH_PARAM_BYTES, "64B", "size of an ACK, NACK or CNP frame", WH_CHECK_POSITIVE},
    {"Priority", WH_PARAM_INT, "3", "priority class of data packets (1-7; 0 is control)",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 7},
    {"CnpInterval", WH_PARAM_TIME, "50us", "minimum gap between CNPs of one flow"},
    {"NackInterval", WH_PARAM_TIME, "100us", "minimum gap between NACKs for the same byte"},
    {"Rto", WH_PARAM_TIME, "2ms", "retransmission timeout without progress", WH_CHECK_POSITIVE},
    {"Window", WH_PARAM_BYTES, "0B",
     "max bytes in flight per flow; 0 = unlimited (a window-based CC sets its own)"},
    {"AckEvery", WH_PARAM_INT, "1",
     "acknowledge every N in-order data packets (delayed ACKs when > 1)",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 64},
    {"DelayedAckTimeout", WH_PARAM_TIME, "200us",
     "with AckEvery > 1: acknowledge a partial batch after this", WH_CHECK_POSITIVE},
    {"MaxRetries", WH_PARAM_INT, "1000",
     "go-back-N rewinds (NACK or RTO) in a row without progress before the run stops with an "
     "error naming the flow",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 1000000000},
    {NULL},
};

const WhTypeInfo wh_rdma_flow_type = {
    .name = "wh::RdmaFlow",
    .kind = "transport",
    .help = "RDMA-style reliable flow: per-packet ACK, go-back-N on NACK/RTO, CNP on ECN",
    .params = rdma_flow_params,
};
