/* Wormhole's observer on the native engine and its parameters; see wormhole.h. */
#include "wormhole.h"

#include <math.h>
#include <string.h>
#include "congestion-control.h"
#include "csv.h"
#include "detector-report.h"
#include "steady-window.h"
#include "units.h"
#include "wh-error.h"
#include "wormhole-private.h"

static const char *const mode_choices[] = {"off", "observe", "skip", "memo", NULL};
static const char *const large_choices[] = {"new", "in-place", NULL};
static const char *const steadiness_choices[] = {"spread", "mean", NULL};
static const char *const tails_choices[] = {"packets", "rate", NULL};
/* WhQuantity's names, in its order */
static const char *const quantity_names[] = {"cc-rate", "delivered", "delivered-avg", "cwnd-rtt",
                                             NULL};
/* wh::WormholeStudy::Quantity: "cc", then WhQuantity's names (index - 1) */
static const char *const quantity_choices[] = {"cc",       "cc-rate", "delivered", "delivered-avg",
                                               "cwnd-rtt", NULL};

static const WhParamSpec wormhole_params[] = {
    {"Mode", WH_PARAM_CHOICE, "off",
     "off: the exact engine alone; observe: partitions and steady-state detection, reported "
     "in wormhole.json, nothing skipped (outputs unchanged); skip: steady partitions are "
     "fast-forwarded (the default of --scheduler wormhole); memo: skip, and phases whose "
     "contention pattern was seen before are replayed from its stored outcome",
     0, 0, 0, mode_choices},
    {"Theta", WH_PARAM_DOUBLE, "0.05",
     "steady when (max - min) / mean of a flow's last Window samples is below this, in [0, 1) "
     "(0: never steady; paper: 5%, prototype 3%)",
     WH_CHECK_MIN, 0, 1, NULL},
    {"Steadiness", WH_PARAM_CHOICE, "spread",
     "the rate rule's measure: spread: (max - min) / mean of the window's samples (the paper's "
     "dR); mean: the same of the means of its blocks of Window / 25 or so samples, so a rate "
     "that oscillates around a mean that does not drift is steady",
     0, 0, 0, steadiness_choices},
    {"Window", WH_PARAM_INT, "2000",
     "samples per steady-state window, l >= 2 (paper: 2000, prototype 1000)",
     WH_CHECK_MIN | WH_CHECK_MAX, 2, 1000000, NULL},
    {"SamplePeriod", WH_PARAM_TIME, "1us", "rate sampling period tau (paper: 1 us)",
     WH_CHECK_POSITIVE, 0, 0, NULL},
    {"IdleRule", WH_PARAM_BOOL, "true",
     "also count as steady a partition with no ECN mark, CNP, PFC frame or queue above two "
     "frames at its ports for 10 us, unchanged for 10 us, every flow at line rate (the CC's "
     "LineFraction of its NIC's rate)",
     0, 0, 0, NULL},
    {"TailMargin", WH_PARAM_TIME, "2us",
     "skip: a fast-forward leaves every flow at least its bytes in flight, one round trip of "
     "data and this much more sending time unsent, so its tail runs packet by packet",
     WH_CHECK_MIN, 0, 0, NULL},
    {"Tails", WH_PARAM_CHOICE, "packets",
     "skip: packets: every flow's tail runs packet by packet (see TailMargin); rate: a skip "
     "at measured rates (not a quiet partition's exact one) goes on until its first flow "
     "would deliver its last byte at its rate, and that flow completes there without its "
     "tail's packets",
     0, 0, 0, tails_choices},
    {"FluidWindow", WH_PARAM_TIME, "0us",
     "skip, memo: 0 (off), or a flow whose delivery rate over each quarter of its last "
     "FluidWindow lies within Theta of the others, with no trend, is carried as a fluid at "
     "that rate, reserved on its data path's ports, while the flows beside it run packet "
     "by packet, until its tail, a flow starting or ending on its path, or its share of a "
     "full port is due back (docs/modules/wormhole.md, \"Fluid flows\")",
     WH_CHECK_MIN, 0, 0, NULL},
    {"Patterns", WH_PARAM_BOOL, "false",
     "observe, skip: at the start of every contention phase (a partition's membership "
     "changed), build its flow conflict graph and count it as a new or a repeated pattern "
     "(\"patterns\" in wormhole.json): the redundancy memoization would exploit",
     0, 0, 0, NULL},
    {"RateTolerance", WH_PARAM_DOUBLE, "0.05",
     "patterns: sending rates in a flow conflict graph's labels are quantized on a "
     "logarithmic scale of ratio 1 + this (rates in one bucket differ by less than that "
     "factor); above 0",
     WH_CHECK_POSITIVE, 0, 0, NULL},
    {"MemoMaxBytes", WH_PARAM_BYTES, "64MB",
     "patterns: the pattern store's size at which new patterns are no longer stored (they "
     "are still counted, as not_stored in wormhole.json); also the most a --memo file "
     "loads and holds after a save",
     WH_CHECK_POSITIVE, 0, 0, NULL},
    {"LargePhases", WH_PARAM_CHOICE, "new",
     "patterns: a phase with more flows than the exact isomorphism check takes (256): new: "
     "counted as new, not stored; in-place: stored, and repeated where the same flow labels "
     "cross the same ports in the same order (a collective repeated on the same ranks), "
     "confirmed byte for byte, with no graph built (docs/modules/wormhole.md)",
     0, 0, 0, large_choices},
    {NULL},
};

/* What a scenario written for an earlier version may still set. */
static const WhParamGone wormhole_gone[] = {
    {"ExactOnly",
     "was removed: its byte-exact runs skipped almost nothing on contended fabrics; drop "
     "the setting (judge a contended run against the exact engine's own spread: whsim "
     "compare --ensemble N)"},
    {"Study", "moved to wh::WormholeStudy::Study: set that instead"},
    {"StatsFrom", "moved to wh::WormholeStudy::StatsFrom: set that instead"},
    {"Quantity", "moved to wh::WormholeStudy::Quantity: set that instead"},
    {"AvgPeriods", "moved to wh::WormholeStudy::AvgPeriods: set that instead"},
    {"LineFraction",
     "moved to the congestion control classes: set wh::DcqcnCc::LineFraction, "
     "wh::HpccCc::LineFraction, wh::TimelyCc::LineFraction or wh::DctcpCc::LineFraction"},
    {"RateWindow", "moved to the congestion control classes: set wh::DcqcnCc::RateWindow, "
                   "wh::HpccCc::RateWindow, wh::TimelyCc::RateWindow or wh::DctcpCc::RateWindow"},
    {"IdleWindow", "was removed: the idle rule's window is 10 us; drop the setting"},
    {"MinSkip", "was removed: a fast-forward is taken when it skips 5 us or more; drop the "
                "setting"},
    {"ReplayConverged", "was removed: memo mode always replays converged phases; drop the "
                        "setting"},
    {NULL},
};

const WhTypeInfo wh_wormhole_type = {
    "wh::Wormhole", "accelerator",
    "Wormhole (NSDI '26): network partitions, steady-state detection (observe), fast-forward "
    "and memoization of steady flow rates",
    wormhole_params, wormhole_gone};

static const WhParamSpec study_params[] = {
    {"Quantity", WH_PARAM_CHOICE, "cc",
     "what the steady-state detector samples per flow: cc: what the congestion control "
     "defines (cwnd-rtt with DCTCP, cc-rate with every other CC); cc-rate (the CC's rate "
     "variable), delivered (payload per period), delivered-avg (payload over AvgPeriods "
     "periods), cwnd-rtt (window / smoothed RTT, for window CCs); in every mode",
     0, 0, 0, quantity_choices},
    {"AvgPeriods", WH_PARAM_INT, "8", "periods averaged by Quantity=delivered-avg",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 1024, NULL},
    {"Study", WH_PARAM_BOOL, "false",
     "also measure dR for every Quantity at windows of 100, 500 and 2000 samples in the same "
     "run (\"study\" in wormhole.json; about 10 KB more per active flow); changes no output "
     "but wormhole.json",
     0, 0, 0, NULL},
    {"StatsFrom", WH_PARAM_TIME, "0us",
     "the dR statistics in wormhole.json count windows evaluated from this time on (to leave "
     "out a warm-up); detection itself is unaffected",
     0, 0, 0, NULL},
    {NULL},
};

const WhTypeInfo wh_wormhole_study_type = {
    "wh::WormholeStudy", "accelerator",
    "studies of Wormhole's steady-state detector (validation/wormhole): what it samples and "
    "the dR statistics wormhole.json reports; the defaults are the recommended setting",
    study_params};

/* The idle rule's window, and the shortest fast-forward taken (docs/modules/wormhole.md). */
#define IDLE_WINDOW (10 * WH_US)
#define MIN_SKIP (5 * WH_US)
/* The idle rule's line fraction and a quiet partition's rate window for a congestion
 * control class that does not define them (a plugin's): DCQCN's. */
#define LINE_FRACTION_FALLBACK 0.999
#define RATE_WINDOW_FALLBACK (10 * WH_US)

const char *wh_wormhole_mode_name(WhWormholeMode mode)
{
  return mode_choices[mode];
}

const char *wh_quantity_name(WhQuantity q)
{
  return quantity_names[q];
}

static int choice_index(const char *const *choices, const char *v)
{
  for (int i = 0; choices[i]; i++)
    if (strcmp(choices[i], v) == 0)
      return i;
  return -1;
}

/* The registered type of congestion control `cc` when it has parameter `param`
 * (wh::HpccCc::LineFraction), else NULL (a plugin's class). (transfer none) */
static const char *cc_type_with(const char *cc, const char *param)
{
  const WhCcClass *k = wh_cc_class_lookup(cc);
  if (k == NULL || k->type == NULL || wh_registry_lookup(k->type->name) != k->type ||
      wh_type_find_param(k->type, param) == NULL)
    return NULL;
  return k->type->name;
}

/* What the detector samples: wh::WormholeStudy::Quantity, where "cc" is the window over
 * the RTT for DCTCP (its rate variable is the line rate: it paces nothing) and the CC's
 * rate for the others. */
static WhQuantity quantity_of(const WhConfig *cfg, const char *cc)
{
  int q = choice_index(quantity_choices, wh_config_choice(cfg, "wh::WormholeStudy", "Quantity"));
  if (q > 0)
    return (WhQuantity)(q - 1);
  return strcmp(cc, "dctcp") == 0 ? WH_QUANTITY_CWND_RTT : WH_QUANTITY_CC_RATE;
}

gboolean wh_wormhole_params_from_config(WhWormholeParams *p, const WhConfig *cfg, const char *cc,
                                        gboolean scheduler_wormhole, GError **error)
{
  const char *T = "wh::Wormhole", *S = "wh::WormholeStudy";
  memset(p, 0, sizeof *p);
  gboolean mode_set = wh_config_origin(cfg, T, "Mode") != NULL;
  p->mode = (WhWormholeMode)choice_index(mode_choices, wh_config_choice(cfg, T, "Mode"));
  if (scheduler_wormhole && !mode_set)
    p->mode = WH_WORMHOLE_SKIP;
  if (scheduler_wormhole && p->mode == WH_WORMHOLE_OFF)
    return wh_error_set_at(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                           wh_config_origin(cfg, "wh::Wormhole", "Mode"), 0,
                           "wh::Wormhole::Mode: off contradicts --scheduler wormhole");
  p->det.theta = wh_config_double(cfg, T, "Theta");
  p->det.window = (uint32_t)wh_config_int(cfg, T, "Window");
  p->det.period = wh_config_time(cfg, T, "SamplePeriod");
  p->det.idle_window = IDLE_WINDOW;
  const char *lf = cc_type_with(cc, "LineFraction"), *rw = cc_type_with(cc, "RateWindow");
  p->line_fraction = lf ? wh_config_double(cfg, lf, "LineFraction") : LINE_FRACTION_FALLBACK;
  p->rate_window = rw ? wh_config_time(cfg, rw, "RateWindow") : RATE_WINDOW_FALLBACK;
  p->det.idle_rule = wh_config_bool(cfg, T, "IdleRule");
  p->det.stats_from = wh_config_time(cfg, S, "StatsFrom");
  p->det.mean_rule = strcmp(wh_config_choice(cfg, T, "Steadiness"), "mean") == 0;
  p->tail_margin = wh_config_time(cfg, T, "TailMargin");
  p->min_skip = MIN_SKIP;
  p->study = wh_config_bool(cfg, S, "Study");
  p->quantity = quantity_of(cfg, cc);
  p->avg_periods = (uint32_t)wh_config_int(cfg, S, "AvgPeriods");
  p->patterns = wh_config_bool(cfg, T, "Patterns") || p->mode == WH_WORMHOLE_MEMO;
  p->rate_tolerance = wh_config_double(cfg, T, "RateTolerance");
  p->memo_max_bytes = wh_config_bytes(cfg, T, "MemoMaxBytes");
  p->large_in_place = strcmp(wh_config_choice(cfg, T, "LargePhases"), "in-place") == 0;
  p->complete_tails = strcmp(wh_config_choice(cfg, T, "Tails"), "rate") == 0;
  p->fluid_window = wh_config_time(cfg, T, "FluidWindow");
  p->fluid = p->fluid_window > 0 && wh_wormhole_mode_skips(p->mode);
  if (!(p->rate_tolerance > 0) || !isfinite(p->rate_tolerance))
    return wh_error_set_at(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                           wh_config_origin(cfg, "wh::Wormhole", "RateTolerance"), 0,
                           "wh::Wormhole::RateTolerance: %g: must be above 0", p->rate_tolerance);
  static const char *const kinds[] = {"network",  "transport", "queue-disc", "congestion-control",
                                      "topology", NULL};
  p->config_hash = wh_config_digest(cfg, kinds) ^ g_str_hash(cc) * 0x9e3779b97f4a7c15ULL;
  if (!(p->det.theta >= 0 && p->det.theta < 1))
    return wh_error_set_at(
        error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
        wh_config_origin(cfg, "wh::Wormhole", "Theta"), 0,
        "wh::Wormhole::Theta: %g: must be at least 0 and below 1 (0: never steady)", p->det.theta);
  return TRUE;
}

/* ---- the observer ---- */

static const uint32_t study_windows[WH_STUDY_WINDOWS] = {100, 500, 2000};

static uint32_t flow_ports(const WhFlow *f, uint32_t *out)
{
  memcpy(out, f->fwd, f->fwd_hops * sizeof(uint32_t));
  memcpy(out + f->fwd_hops, f->rev, f->rev_hops * sizeof(uint32_t));
  return (uint32_t)f->fwd_hops + f->rev_hops;
}

/* Every quantity of one flow at a tick (v[WhQuantity]); moves the flow's baselines. */
static void sample_values(WhWormhole *wh, WhFlow *f, WhGlueFlow *g, double v[4], gboolean *at_line)
{
  double period_s = wh_time_to_s(wh->p.det.period);
  double line = (double)f->line_rate;
  double window_rate = f->cwnd && g->srtt_ps > 0 ? (double)f->cwnd * 8 / (g->srtt_ps * 1e-12) : 0;
  double at = wh->p.line_fraction * line;
  double rate = wh_flow_rate(f);
  *at_line = f->cwnd ? window_rate >= at : rate >= at;
  uint64_t rcv = f->rcv_nxt;
  v[WH_QUANTITY_CC_RATE] = rate;
  v[WH_QUANTITY_DELIVERED] = (double)(rcv - g->last_rcv) * 8 / period_s;
  v[WH_QUANTITY_CWND_RTT] = f->cwnd ? window_rate : rate;
  v[WH_QUANTITY_DELIVERED_AVG] = 0;
  if (g->ring) {
    uint32_t cap = wh->p.avg_periods + 1;
    uint32_t oldest = g->ring_n < cap ? 0 : g->ring_head;
    uint32_t span = g->ring_n < cap ? g->ring_n : wh->p.avg_periods;
    uint64_t base = g->ring_n ? g->ring[oldest] : g->last_rcv;
    v[WH_QUANTITY_DELIVERED_AVG] = span ? (double)(rcv - base) * 8 / (period_s * span) : 0;
    g->ring[g->ring_head] = rcv;
    g->ring_head = (g->ring_head + 1) % cap;
    g->ring_n = MIN(g->ring_n + 1, cap);
  }
  g->last_rcv = rcv;
}

/* The study: every quantity at every studied window length, in the same run. */
static void study_push(WhWormhole *wh, WhGlueFlow *g, const double v[4], WhTime t)
{
  for (uint32_t q = 0; q < 4; q++) {
    for (uint32_t k = 0; k < WH_STUDY_WINDOWS; k++) {
      double dr, mean;
      if (wh_steady_window_push(&g->study[q * WH_STUDY_WINDOWS + k], v[q], &dr, &mean) &&
          t >= wh->p.det.stats_from)
        wh_dr_stats_add(&wh->study[q * WH_STUDY_WINDOWS + k], dr);
    }
  }
}

static WhTime tick(WhSim *sim, void *ctx)
{
  WhWormhole *wh = ctx;
  while (wh->next_tick <= sim->now && wh_detector_n_active(wh->det) > 0) {
    uint32_t n = wh_detector_n_active(wh->det);
    for (uint32_t i = 0; i < n; i++) {
      uint32_t id = wh_detector_active(wh->det, i);
      gboolean at_line;
      double v[4];
      WhGlueFlow *g = wh_wormhole_glue(wh, id);
      gboolean baseline = g->samples++ == 0;
      sample_values(wh, wh_transport_flow(wh->tp, id), g, v, &at_line);
      if (!at_line)
        g->line_since = 0;
      else if (g->line_since == 0)
        g->line_since = wh->next_tick;
      wh_detector_sample(wh->det, id, wh->next_tick, v[wh->p.quantity], at_line);
      if (g->study && !baseline)
        study_push(wh, g, v, wh->next_tick);
      if (g->ff)
        wh_ff_sample(wh, g);
    }
    wh_detector_tick(wh->det, wh->next_tick);
    if (wh->memo)
      wh_patterns_after_tick(wh, wh->next_tick);
    if (wh_wormhole_mode_skips(wh->p.mode))
      wh_ff_after_tick(wh, wh->next_tick);
    if (wh->p.fluid)
      wh_fluid_after_tick(wh);
    wh->next_tick += wh->p.det.period;
  }
  wh->ticking = wh_detector_n_active(wh->det) > 0;
  return wh->ticking ? wh->next_tick : WH_TIME_MAX;
}

void wh_wormhole_arm_ticks(WhWormhole *wh)
{
  if (wh->ticking)
    return;
  wh->ticking = TRUE;
  wh->next_tick = (wh->sim->now / wh->p.det.period + 1) * wh->p.det.period;
  wh_sim_monitor_arm(wh->sim, wh->monitor, wh->next_tick);
}

/* Sizes the event counters for `n_ports` ports and at least `flows` flows (the
 * struct stays where it is, the simulator holding it). */
static void counts_fit(WhEventCounts *c, uint32_t n_ports, uint32_t flows)
{
  if (c->n_ports != n_ports) {
    g_free(c->port);
    c->port = g_new0(uint64_t, n_ports);
    c->n_ports = n_ports;
  }
  if (flows > c->flow_cap) {
    uint32_t cap = MAX(1024u, c->flow_cap);
    while (cap < flows)
      cap *= 2;
    c->flow = g_renew(uint64_t, c->flow, cap);
    memset(c->flow + c->flow_cap, 0, (cap - c->flow_cap) * sizeof(uint64_t));
    c->flow_cap = cap;
  }
}

static void on_start(void *data, WhFlow *f)
{
  WhWormhole *wh = data;
  WhTime now = wh->sim->now;
  counts_fit(&wh->counts, wh->net->n_ports, wh->tp->n_flows);
  WhGlueFlow *g = wh_wormhole_glue(wh, f->id);
  uint8_t unstarted = g->unstarted; /* memo mode: counted at its activation */
  memset(g, 0, sizeof *g);
  g->unstarted = unstarted;
  g->last_rcv = f->rcv_nxt;
  if (wh->p.quantity == WH_QUANTITY_DELIVERED_AVG || wh->study)
    g->ring = g_new0(uint64_t, wh->p.avg_periods + 1);
  if (wh->study) {
    g->study = g_new(WhSteadyWindow, 4 * WH_STUDY_WINDOWS);
    for (uint32_t k = 0; k < 4 * WH_STUDY_WINDOWS; k++)
      wh_steady_window_init(&g->study[k], study_windows[k % WH_STUDY_WINDOWS]);
  }
  uint32_t ports[2 * 256];
  uint32_t n = flow_ports(f, ports);
  if (wh_wormhole_mode_skips(wh->p.mode))
    wh_ff_on_start(wh, f);
  if (wh->p.fluid) {
    wh_fluid_count_path(wh, f->fwd, f->fwd_hops, 1);
    wh_fluid_interrupt(wh, f);
  }
  wh_detector_flow_start(wh->det, f->id, ports, n, now);
  wh_wormhole_arm_ticks(wh);
  if (wh->memo)
    wh_patterns_flow_activated(wh, f, TRUE);
}

static void on_activate(void *data, WhFlow *f)
{
  WhWormhole *wh = data;
  if (wh->memo)
    wh_patterns_flow_activated(wh, f, FALSE);
  if (wh_wormhole_mode_skips(wh->p.mode))
    wh_ff_on_activate(wh, f);
}

static void on_acked(void *data, WhFlow *f)
{
  WhWormhole *wh = data;
  if (wh->memo)
    wh_patterns_flow_ends(wh, f);
  wh_detector_flow_end(wh->det, f->id, wh->sim->now);
  WhGlueFlow *g = wh_wormhole_glue(wh, f->id);
  if (wh->p.fluid && g->ff) {
    wh_fluid_count_path(wh, f->fwd, f->fwd_hops, -1);
    wh_fluid_interrupt(wh, f);
  }
  if (g->ff)
    wh_ff_on_acked(wh, f, g);
  g_free(g->ring);
  g->ring = NULL;
  g_free(g->study);
  g->study = NULL;
}

static void on_done(void *data, WhFlow *f)
{
  WhWormhole *wh = data;
  if (wh->memo)
    wh_patterns_flow_ends(wh, f);
}

static void on_ack(void *data, WhFlow *f, const WhPacket *ack)
{
  WhWormhole *wh = data;
  /* without a fast-forward only a window CC's flows need their round-trip time (their
   * rate is window / RTT: cwnd-rtt, the idle rule's line rate, the patterns' labels) */
  if (!f->cwnd && !wh_wormhole_mode_skips(wh->p.mode))
    return;
  WhGlueFlow *g = wh_wormhole_glue(wh, f->id);
  if (g->ff)
    wh_ff_on_ack(wh, f, g);
  if (G_UNLIKELY(g->fluid))
    wh_fluid_on_ack(wh, f, g);
  if (ack->sent == 0)
    return;
  double rtt = (double)(wh->sim->now - ack->sent);
  g->srtt_ps = g->srtt_ps > 0 ? g->srtt_ps + (rtt - g->srtt_ps) / 8 : rtt;
}

static void on_reroute(void *data, WhFlow *f, const uint32_t *old, uint16_t old_hops)
{
  WhWormhole *wh = data;
  uint32_t ports[2 * 256];
  uint32_t n = flow_ports(f, ports);
  wh_detector_flow_reroute(wh->det, f->id, ports, n, wh->sim->now);
  if (wh->p.fluid && wh_wormhole_glue(wh, f->id)->ff) {
    wh_fluid_count_path(wh, old, old_hops, -1);
    wh_fluid_count_path(wh, f->fwd, f->fwd_hops, 1);
  }
}

static const WhTransportObserver observer = {
    .on_activate = on_activate,
    .on_start = on_start,
    .on_ack = on_ack,
    .on_done = on_done,
    .on_acked = on_acked,
    .on_reroute = on_reroute,
};

/* The idle rule's congestion signals. */
static void hook_enqueue(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  WhWormhole *wh = data;
  if (qd->total_bytes > 2 * wh->frame_bytes || pkt->type == WH_PKT_CNP)
    wh_detector_port_signal(wh->det, qd->port, wh->sim->now);
}

static void hook_mark(void *data, const WhQueueDisc *qd, const WhPacket *pkt)
{
  (void)pkt;
  WhWormhole *wh = data;
  wh_detector_port_signal(wh->det, qd->port, wh->sim->now);
}

static void hook_pfc(void *data, const WhQueueDisc *qd, unsigned prio, int pause)
{
  (void)prio;
  (void)pause;
  WhWormhole *wh = data;
  wh_detector_port_signal(wh->det, qd->port, wh->sim->now);
  wh_detector_port_signal(wh->det, wh->net->port[qd->port].peer, wh->sim->now);
}

static const WhQueueHooks signal_hooks = {
    .on_enqueue = hook_enqueue,
    .on_mark = hook_mark,
    .on_pfc = hook_pfc,
};

static uint64_t delivered(void *ctx, uint32_t flow)
{
  WhWormhole *wh = ctx;
  return wh_transport_flow(wh->tp, flow)->rcv_nxt;
}

static const char *label(void *ctx, uint32_t flow, char buf[24])
{
  WhWormhole *wh = ctx;
  return wh->label(wh->label_ctx, flow, buf);
}

WhWormhole *wh_wormhole_new(WhSim *sim, WhNet *net, WhTransport *tp, const WhWormholeParams *p,
                            const char *(*label_fn)(void *ctx, uint32_t flow, char buf[24]),
                            void *label_ctx)
{
  g_return_val_if_fail(
      !wh_wormhole_mode_skips(p->mode) || sim->sched->klass == &wh_wormhole_scheduler_class, NULL);
  WhWormhole *wh = g_new0(WhWormhole, 1);
  wh->sim = sim;
  wh->net = net;
  wh->tp = tp;
  wh->p = *p;
  wh->label = label_fn;
  wh->label_ctx = label_ctx;
  wh_table_init(&wh->flows, sizeof(WhGlueFlow));
  wh->ff_rings = (WhRecycler){wh_bulk_new(), NULL,
                              sizeof(WhFfRing) + (p->fluid ? WH_FF_COARSE * sizeof(WhAckMark) : 0)};
  wh->frame_bytes = (uint64_t)tp->p.mtu + tp->p.header_bytes;
  if (p->study)
    wh->study = g_new0(WhDrStats, 4 * WH_STUDY_WINDOWS);
  counts_fit(&wh->counts, net->n_ports, tp->n_flows);
  wh_sim_count_events(sim, &wh->counts);
  WhDetectorSource src = {.delivered = delivered, .label = label, .ctx = wh};
  wh->det = wh_detector_new(&p->det, net->n_ports, &src, &wh->counts);
  wh->monitor = wh_sim_add_monitor(sim, tick, wh, WH_TIME_MAX);
  wh_transport_add_observer(tp, &observer, wh);
  if (p->det.idle_rule)
    wh_net_add_hooks(net, &signal_hooks, wh);
  if (wh_wormhole_mode_skips(p->mode))
    wh_park_init(wh);
  if (p->fluid)
    wh_fluid_init(wh);
  if (p->patterns)
    wh_patterns_init(wh);
  return wh;
}

void wh_wormhole_free(WhWormhole *wh)
{
  if (wh == NULL)
    return;
  wh_transport_remove_observer(wh->tp, &observer, wh);
  if (wh->sim->counts == &wh->counts)
    wh_sim_count_events(wh->sim, NULL);
  g_free(wh->counts.port);
  g_free(wh->counts.flow);
  if (wh->p.det.idle_rule)
    wh_net_remove_hooks(wh->net, &signal_hooks, wh);
  wh_park_free(wh);
  wh_fluid_free(wh);
  wh_patterns_free(wh);
  for (uint32_t i = 0; i < wh->flows.len; i++) {
    WhGlueFlow *g = wh_table_at(&wh->flows, i);
    g_free(g->ring);
    g_free(g->study);
  }
  wh_bulk_free(wh->ff_rings.bulk);
  g_free(wh->study);
  wh_table_clear(&wh->flows);
  wh_detector_free(wh->det);
  g_free(wh);
}

void wh_wormhole_finish(WhWormhole *wh)
{
  if (wh_wormhole_mode_skips(wh->p.mode))
    wh_ff_finish(wh);
  if (wh->p.fluid)
    wh_fluid_finish(wh);
  wh_detector_finish(wh->det, wh->sim->now);
}

const WhWormholeParams *wh_wormhole_params(const WhWormhole *wh)
{
  return &wh->p;
}

const WhDetector *wh_wormhole_detector(const WhWormhole *wh)
{
  return wh->det;
}

const WhEventCounts *wh_wormhole_event_counts(const WhWormhole *wh)
{
  return &wh->counts;
}

uint64_t wh_wormhole_memory(const WhWormhole *wh)
{
  WhDetectorStats st;
  wh_detector_stats(wh->det, &st);
  return (uint64_t)st.max_active * (sizeof(WhSteadyWindow) + 64) + (uint64_t)st.flows_seen * 120 +
         (uint64_t)wh->net->n_ports * 40;
}

typedef struct {
  const char *key;
  uint64_t v;
} IntField;

/* Sets the `n` integer members `f` of `o`. */
static void set_ints(JsonObject *o, const IntField *f, size_t n)
{
  for (size_t i = 0; i < n; i++)
    json_object_set_int_member(o, f[i].key, (gint64)f[i].v);
}

/* Skip mode's counts: fast-forwards, refusals and replays (per flow in
 * wormhole-flows.csv). */
static void json_skip(const WhWormhole *wh, JsonObject *o)
{
  WhWormholeSkipSummary sk;
  wh_wormhole_skip_summary(wh, &sk);
  const WhSkipStats *ss = &wh->ss;
  JsonObject *skip = json_object_new(), *refused = json_object_new(), *replays = json_object_new(),
             *drains = json_object_new();
  const IntField head[] = {
      {"tail_margin_ps", wh->p.tail_margin}, {"min_skip_ps", wh->p.min_skip},
      {"fast_forwards", sk.fast_forwards},   {"skip_backs", sk.skip_backs},
      {"interrupts", ss->interrupts},        {"advanced_bytes", sk.advanced_bytes},
      {"skipped_time_ps", sk.skipped_time}};
  const IntField tail[] = {{"events_skipped_est", sk.events_skipped_est},
                           {"tries", ss->tries},
                           {"tail_completions", ss->tail_completions}};
  const IntField refusals[] = {{"too_short", ss->refused_short},
                               {"unsettled", ss->refused_unsteady},
                               {"recovery_or_waiting", ss->refused_recovery}};
  const IntField replay[] = {{"started", ss->replays},
                             {"whole", ss->replays_whole},
                             {"cut", ss->replays_cut},
                             {"refused", ss->replays_refused},
                             {"refused_busy", ss->replays_refused_busy},
                             {"refused_instant", ss->replays_refused_instant},
                             {"refused_left", ss->replays_refused_left},
                             {"refused_tail", ss->replays_refused_tail},
                             {"shortened", ss->replays_clipped},
                             {"completions", ss->replay_completions},
                             {"skipping", ss->replays_skipping}};
  const IntField drain[] = {{"started", ss->drains},
                            {"whole", ss->drains_whole},
                            {"cut", ss->drains_cut},
                            {"refused", ss->drains_refused},
                            {"completions", ss->drain_completions}};
  set_ints(skip, head, G_N_ELEMENTS(head));
  json_object_set_double_member(skip, "time_steady_fraction",
                                wh_units_round(sk.time_steady_fraction, "%.6f"));
  set_ints(skip, tail, G_N_ELEMENTS(tail));
  set_ints(refused, refusals, G_N_ELEMENTS(refusals));
  set_ints(replays, replay, G_N_ELEMENTS(replay));
  json_object_set_object_member(skip, "refused", refused);
  json_object_set_object_member(skip, "replays", replays);
  set_ints(drains, drain, G_N_ELEMENTS(drain));
  json_object_set_object_member(skip, "drains", drains);
  json_object_set_object_member(o, "skip", skip);
  if (wh->p.fluid) {
    const WhFluidStats *fs = &wh->fs;
    const IntField fluid[] = {{"holds", fs->holds},
                              {"parks", fs->parks},
                              {"cut", fs->cut},
                              {"drifted", fs->drifted},
                              {"interrupts", fs->interrupts},
                              {"refused_short", fs->refused_short},
                              {"refused_unfair", fs->refused_unfair},
                              {"refused_trend", fs->refused_trend},
                              {"squeezed", fs->squeezed},
                              {"time_ps", fs->time}};
    JsonObject *fo = json_object_new();
    set_ints(fo, fluid, G_N_ELEMENTS(fluid));
    json_object_set_object_member(o, "fluid", fo);
  }
}

/* What is still simulated as packets: the payload bytes sent the first time, over all
 * flows and as a fraction of their sizes, and the flows none of whose bytes was
 * advanced (per flow in wormhole-flows.csv). */
static void json_packets(const WhWormhole *wh, JsonObject *o)
{
  uint64_t sent = 0, size = 0, whole = 0;
  for (uint32_t i = 0; i < wh->tp->n_flows; i++) {
    const WhFlow *f = wh_transport_flow(wh->tp, i);
    const WhGlueFlow *g = i < wh->flows.len ? wh_table_at(&wh->flows, i) : NULL;
    sent += f->bytes_sent - f->retx_bytes;
    size += f->size;
    whole += g == NULL || g->advanced == 0;
  }
  JsonObject *x = json_object_new();
  json_object_set_int_member(x, "packet_bytes", (gint64)sent);
  json_object_set_double_member(x, "packet_byte_fraction",
                                wh_units_round(size ? (double)sent / (double)size : 0, "%.6f"));
  json_object_set_int_member(x, "flows", wh->tp->n_flows);
  json_object_set_int_member(x, "flows_as_packets", (gint64)whole);
  json_object_set_object_member(o, "packets", x);
}

void wh_wormhole_flows_csv_header(FILE *out)
{
  fputs("flow_id,start_ps,end_ps,samples,steady_fraction,partition_steady_fraction,evaluations,"
        "dr_min,dr_mean,dr_max,skipped_ps,advanced_bytes,packet_bytes\n",
        out);
}

/* A %.6g number, or nothing for NaN (a flow without an evaluation). */
static void csv_g6(FILE *out, double v)
{
  if (isfinite(v))
    fprintf(out, ",%.6g", v);
  else
    fputc(',', out);
}

void wh_wormhole_flows_csv_line(const WhWormhole *wh, uint32_t flow, FILE *out)
{
  char buf[24];
  const WhFlow *f = wh_transport_flow(wh->tp, flow);
  const WhGlueFlow *g = flow < wh->flows.len ? wh_table_at(&wh->flows, flow) : NULL;
  WhDetectorFlow d;
  wh_csv_field_file(out, wh->label(wh->label_ctx, flow, buf));
  if (wh_detector_flow(wh->det, flow, &d)) {
    fprintf(out, ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%u", (guint64)d.start,
            (guint64)d.end, d.samples);
    csv_g6(out, d.steady_fraction);
    csv_g6(out, d.partition_steady_fraction);
    fprintf(out, ",%u", d.evaluations);
    csv_g6(out, d.dr_min);
    csv_g6(out, d.dr_mean);
    csv_g6(out, d.dr_max);
  } else {
    fputs(",,,,,,,,,", out);
  }
  fprintf(out, ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT ",%" G_GUINT64_FORMAT "\n",
          (guint64)(g ? g->skipped : 0), (guint64)(g ? g->advanced : 0),
          (guint64)(f->bytes_sent - f->retx_bytes));
}

char *wh_wormhole_json(const WhWormhole *wh)
{
  g_autoptr(JsonObject) o = json_object_new();
  const WhWormholeParams *p = &wh->p;
  json_object_set_string_member(o, "mode", wh_wormhole_mode_name(p->mode));
  json_object_set_string_member(o, "quantity", wh_quantity_name(p->quantity));
  json_object_set_double_member(o, "theta", wh_units_round(p->det.theta, "%g"));
  json_object_set_int_member(o, "window", p->det.window);
  json_object_set_int_member(o, "sample_period_ps", (gint64)p->det.period);
  if (p->quantity == WH_QUANTITY_DELIVERED_AVG)
    json_object_set_int_member(o, "avg_periods", p->avg_periods);
  json_object_set_boolean_member(o, "idle_rule", p->det.idle_rule);
  json_object_set_int_member(o, "idle_window_ps", (gint64)p->det.idle_window);
  json_object_set_double_member(o, "line_fraction", wh_units_round(p->line_fraction, "%g"));
  json_object_set_int_member(o, "memory_bytes_est", (gint64)wh_wormhole_memory(wh));
  if (wh_wormhole_mode_skips(p->mode))
    json_skip(wh, o);
  if (wh->memo)
    json_object_set_object_member(o, "patterns", wh_patterns_json(wh));
  if (wh->study) {
    JsonObject *study = json_object_new();
    for (uint32_t k = 0; k < 4 * WH_STUDY_WINDOWS; k++) {
      g_autofree char *key = g_strdup_printf("%s/%u", wh_quantity_name(k / WH_STUDY_WINDOWS),
                                             study_windows[k % WH_STUDY_WINDOWS]);
      json_object_set_object_member(study, key, wh_dr_stats_json(&wh->study[k]));
    }
    json_object_set_object_member(o, "study", study);
  }
  json_packets(wh, o);
  return wh_detector_json_object(wh->det, o, FALSE);
}
