/* Registered parameters of links and switches (wh::Link, wh::Switch). Defaults follow
 * the HPCC project's ns-3 setup at 100 Gb/s: 32 MB shared buffer per switch
 * (16 MB per 50 Gb/s of link rate in its run.py), PFC and ECN on. PFC thresholds are
 * static per ingress port and priority here, where that setup uses dynamic ones. */
#include "registry.h"

static const WhParamSpec link_params[] = {
    {"Rate", WH_PARAM_RATE, "100Gbps", "link rate, both directions", WH_CHECK_POSITIVE},
    {"Delay", WH_PARAM_TIME, "1us", "propagation delay"},
    {NULL},
};

const WhTypeInfo wh_link_type = {
    .name = "wh::Link",
    .kind = "network",
    .help = "full-duplex point-to-point link (defaults for every generated link)",
    .params = link_params,
};

static const WhParamSpec switch_params[] = {
    {"BufferSize", WH_PARAM_BYTES, "32MB", "shared packet buffer per switch", WH_CHECK_POSITIVE},
    {"Delay", WH_PARAM_TIME, "0ns", "forwarding latency added at every switch"},
    {"PfcEnabled", WH_PARAM_BOOL, "true", "priority flow control on data priorities"},
    {"PfcXoff", WH_PARAM_BYTES, "1MB", "ingress bytes (per port and priority) that trigger PAUSE",
     WH_CHECK_POSITIVE},
    {"PfcXon", WH_PARAM_BYTES, "980KB", "ingress bytes at or below which RESUME is sent"},
    {"EcnEnabled", WH_PARAM_BOOL, "true",
     "ECN marking on switch egress queues (thresholds from the CC)"},
    {"DeadlockTimeout", WH_PARAM_TIME, "10ms",
     "stop the run when no packet crosses a link for this long while switches hold packets "
     "(a PFC deadlock); 0 turns the watchdog off"},
    {NULL},
};

const WhTypeInfo wh_switch_type = {
    .name = "wh::Switch",
    .kind = "network",
    .help = "output-queued switch over a shared buffer with ECN marking and PFC",
    .params = switch_params,
};
