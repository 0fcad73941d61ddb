/* Registered parameters of links and switches (wh::Link, wh::Switch). Defaults follow
 * the HPCC project's ns-3 setup at 100 Gb/s: 32 MB shared buffer per switch
 * (16 MB per 50 Gb/s of link rate in its run.py), PFC and ECN on. PFC thresholds are
 * static per ingress port and priority by default; PfcThreshold=dynamic gives
 * thresholds that shrink as the shared buffer fills, after that setup's switch MMU. */
#include "registry.h"

static const char *const pfc_threshold_choices[] = {"static", "dynamic", NULL};

static const WhParamSpec link_params[] = {
    {"Rate", WH_PARAM_RATE, "100Gbps", "link rate, both directions", WH_CHECK_POSITIVE},
    {"Delay", WH_PARAM_TIME, "1us", "propagation delay"},
    {"DelayJitter", WH_PARAM_INT, "0",
     "perturbation ensemble member: 0 off; i > 0 adds 0 or 1 ps to every directed port's "
     "delay, drawn uniformly per port from a random stream seeded by i alone (the run's "
     "seed is unchanged); whsim compare --ensemble runs members 1..N-1",
     WH_CHECK_MIN, 0, 0, NULL, WH_PARAM_DIGEST_OMITS_DEFAULT},
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
    {"PfcThreshold", WH_PARAM_CHOICE, "static",
     "static: PAUSE above PfcXoff, RESUME at PfcXon; dynamic: PAUSE when an ingress port and "
     "priority holds PfcAlpha x the switch's free shared buffer, each port keeping headroom "
     "for what its link still brings after a PAUSE (2 x rate x delay + 3 frames + the PAUSE "
     "frame; docs/user-guide.md), as in the HPCC simulator's switch MMU",
     0, 0, 0, pfc_threshold_choices, WH_PARAM_DIGEST_OMITS_DEFAULT},
    {"PfcAlpha", WH_PARAM_DOUBLE, "0.125",
     "PfcThreshold=dynamic: the share of the free shared buffer one ingress port and priority "
     "may hold before PAUSE, in (0, 1] (HPCC simulator: 1/8; kept in steps of 1/65536)",
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1, NULL, WH_PARAM_DIGEST_OMITS_DEFAULT},
    {"PfcResumeOffset", WH_PARAM_BYTES, "3KB",
     "PfcThreshold=dynamic: RESUME once the port and priority's shared bytes are this far "
     "below the threshold, or none are left (HPCC simulator: 3 KB)",
     0, 0, 0, NULL, WH_PARAM_DIGEST_OMITS_DEFAULT},
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
