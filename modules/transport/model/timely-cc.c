/* TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter",
 * SIGCOMM 2015, Algorithm 1) as the HPCC project's ns-3 simulator runs it
 * (alibaba-edu/High-Precision-Congestion-Control, rdma-hw.cc UpdateRateTimely, CC mode 7,
 * no fast react), optionally with the patch of Zhu et al., "ECN or Delay: Lessons Learnt
 * from Analysis of DCQCN and TIMELY", CoNEXT 2016. Rate-based: the flow is paced at its
 * rate and has no window. Per flow the cost is O(1) work per ACK and no events.
 *
 * Each ACK carrying a send timestamp gives an RTT sample, now - ack->sent (ACKs from the
 * delayed-ACK timer carry none and are skipped). As in the HPCC simulator, the rate is
 * updated once per round trip, on the first ACK beyond snd_nxt at the previous update;
 * TIMELY's completion events (one per 16-64 KB segment) play that role in the paper.
 * An update: rtt_diff = (1 - Alpha) rtt_diff + Alpha (rtt - prev_rtt),
 * g = rtt_diff / MinRtt; then
 *   rtt < TLow:             rate += Rai
 *   rtt > THigh:            rate *= 1 - Beta (1 - THigh / rtt)
 *   g <= 0:                 rate += Rai, or Rhai after HaiThreshold increases in a row
 *   otherwise:              rate *= max(0, 1 - Beta g)
 * clamped to [MinRate, line rate]. The hyper-increase count grows on every increase and
 * restarts on every decrease (the HPCC simulator's incStage); the hyper step applies in the
 * gradient branch only, after HaiThreshold (5) increases in a row of any kind.
 * Patched (Zhu et al., sec. 5): between TLow and THigh the update becomes
 *   rate = Rai (1 - w) + rate (1 - PatchedBeta w (rtt - RttRef) / RttRef),
 *   w = min(1, max(0, 2 g + 1/2)),
 * which ties the fixed point to the absolute RTT and so makes it unique and fair (the
 * original only looks at the gradient and has a continuum of fixed points).
 *
 * Defaults: the HPCC simulator's TIMELY parameters (Alpha 0.875, Beta 0.8, TLow 50 us,
 * THigh 500 us, MinRtt 20 us; run.py: Rai = 10 Mb/s and Rhai = 50 Mb/s per 10 Gb/s of
 * link rate, i.e. 100 and 500 Mb/s at 100 Gb/s, scaled with the flow's line rate when
 * ScaleWithRate is on; MinRate 1000 Mb/s). PatchedBeta 0.008 and RttRef = TLow are
 * assumed: they are the values of a public implementation of the patch (eRPC), not
 * taken from the paper's text; with them the patched update moves the rate by well
 * under 1% per round trip. */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "congestion-control.h"
#include "rdma-transport.h"

typedef struct {
  double alpha, beta;
  WhTime t_low, t_high, min_rtt;
  double rai, rhai; /* b/s at ref rate */
  double min_rate;
  uint32_t hai_threshold;
  gboolean patched;
  double patched_beta;
  WhTime rtt_ref;
  gboolean scale;
  uint64_t ref_rate;
} TimelyParams;

typedef struct {
  double rate;        /* b/s */
  double rtt_diff;    /* EWMA of RTT differences, ps */
  double rai, rhai;   /* scaled to this flow's line rate */
  WhTime prev_rtt;    /* a duration, not a time: not in time_fields */
  uint64_t update_at; /* the next update comes with an ACK beyond this byte */
  uint32_t increases; /* rate increases in a row */
  uint8_t started;    /* a first RTT sample was taken */
} TimelyState;

G_STATIC_ASSERT(sizeof(TimelyState) <= WH_CC_STATE_BYTES);

static const WhParamSpec timely_params[] = {
    {"Alpha", WH_PARAM_DOUBLE, "0.875", "EWMA weight of a new RTT difference",
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1},
    {"Beta", WH_PARAM_DOUBLE, "0.8", "multiplicative decrease factor",
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1},
    {"TLow", WH_PARAM_TIME, "50us", "below this RTT the rate always increases", WH_CHECK_POSITIVE},
    {"THigh", WH_PARAM_TIME, "500us", "above this RTT the rate always decreases",
     WH_CHECK_POSITIVE},
    {"MinRtt", WH_PARAM_TIME, "20us", "normalizes the RTT gradient", WH_CHECK_POSITIVE},
    {"Rai", WH_PARAM_RATE, "100Mbps", "additive increase step delta (at RefRate)",
     WH_CHECK_POSITIVE},
    {"Rhai", WH_PARAM_RATE, "500Mbps", "hyper additive increase step (at RefRate)",
     WH_CHECK_POSITIVE},
    {"HaiThreshold", WH_PARAM_INT, "5", "increases in a row before the hyper step",
     WH_CHECK_MIN | WH_CHECK_MAX, 0, 1e9},
    {"MinRate", WH_PARAM_RATE, "1000Mbps", "lowest sending rate", WH_CHECK_POSITIVE},
    {"Patched", WH_PARAM_BOOL, "false", "use the patched TIMELY of Zhu et al. (CoNEXT 2016)"},
    {"PatchedBeta", WH_PARAM_DOUBLE, "0.008", "decrease factor of the patched update",
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1},
    {"RttRef", WH_PARAM_TIME, "50us", "reference RTT of the patched update", WH_CHECK_POSITIVE},
    {"ScaleWithRate", WH_PARAM_BOOL, "true", "scale Rai and Rhai by line rate / RefRate"},
    {"RefRate", WH_PARAM_RATE, "100Gbps", "link rate at which Rai and Rhai apply",
     WH_CHECK_POSITIVE},
    {"LineFraction", WH_PARAM_DOUBLE, "0.999", WH_CC_LINE_FRACTION_HELP,
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1, NULL, WH_PARAM_DIGEST_OMITS_DEFAULT},
    {"RateWindow", WH_PARAM_TIME, "40us", WH_CC_RATE_WINDOW_HELP, WH_CHECK_POSITIVE, 0, 0, NULL,
     WH_PARAM_DIGEST_OMITS_DEFAULT},
    {NULL},
};

const WhTypeInfo wh_timely_cc_type = {
    .name = "wh::TimelyCc",
    .kind = "congestion-control",
    .help = "TIMELY: RTT-gradient rate control (HPCC simulator's model), optionally patched",
    .params = timely_params,
};

static void *timely_configure(const WhConfig *cfg, GError **error)
{
  const char *t = wh_timely_cc_type.name;
  TimelyParams *p = g_new0(TimelyParams, 1);
  p->alpha = wh_config_double(cfg, t, "Alpha");
  p->beta = wh_config_double(cfg, t, "Beta");
  p->t_low = wh_config_time(cfg, t, "TLow");
  p->t_high = wh_config_time(cfg, t, "THigh");
  p->min_rtt = wh_config_time(cfg, t, "MinRtt");
  p->rai = (double)wh_config_rate(cfg, t, "Rai");
  p->rhai = (double)wh_config_rate(cfg, t, "Rhai");
  p->hai_threshold = (uint32_t)wh_config_int(cfg, t, "HaiThreshold");
  p->min_rate = (double)wh_config_rate(cfg, t, "MinRate");
  p->patched = wh_config_bool(cfg, t, "Patched");
  p->patched_beta = wh_config_double(cfg, t, "PatchedBeta");
  p->rtt_ref = wh_config_time(cfg, t, "RttRef");
  p->scale = wh_config_bool(cfg, t, "ScaleWithRate");
  p->ref_rate = wh_config_rate(cfg, t, "RefRate");
  if (p->t_low > p->t_high) {
    const char *o = wh_config_origin(cfg, t, "TLow");
    if (o == NULL)
      o = wh_config_origin(cfg, t, "THigh");
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                "%s%swh::TimelyCc::TLow (%" G_GUINT64_FORMAT
                " ps) exceeds wh::TimelyCc::THigh (%" G_GUINT64_FORMAT " ps)",
                o ? o : "", o ? ": " : "", p->t_low, p->t_high);
    g_free(p);
    return NULL;
  }
  return p;
}

static void timely_ecn(const void *params, WhEcnConfig *out)
{
  (void)params;
  *out = (WhEcnConfig){.ecn = FALSE, .ref_rate = 1};
}

static inline TimelyState *state(WhFlow *f)
{
  return (TimelyState *)f->cc.bytes;
}

static void timely_init(WhFlow *f, const void *params)
{
  const TimelyParams *p = params;
  TimelyState *s = state(f);
  memset(s, 0, sizeof *s);
  double scale = p->scale ? (double)f->line_rate / (double)p->ref_rate : 1.0;
  s->rai = p->rai * scale;
  s->rhai = p->rhai * scale;
  s->rate = (double)f->line_rate;
  wh_flow_set_rate(f, s->rate);
}

/* One TIMELY rate computation for RTT sample `rtt` (ps). */
static void timely_update(WhFlow *f, TimelyState *s, const TimelyParams *p, WhTime rtt)
{
  double r = (double)rtt;
  s->rtt_diff = (1.0 - p->alpha) * s->rtt_diff + p->alpha * (r - (double)s->prev_rtt);
  s->prev_rtt = rtt;
  double g = s->rtt_diff / (double)p->min_rtt;
  double rate = s->rate;
  gboolean inc;
  if (rtt < p->t_low) {
    rate += s->rai;
    inc = TRUE;
  } else if (rtt > p->t_high) {
    rate *= 1.0 - p->beta * (1.0 - (double)p->t_high / r);
    inc = FALSE;
  } else if (p->patched) {
    double w = MIN(1.0, MAX(0.0, 2.0 * g + 0.5));
    double err = (r - (double)p->rtt_ref) / (double)p->rtt_ref;
    double next = s->rai * (1.0 - w) + rate * (1.0 - p->patched_beta * w * err);
    inc = next >= rate;
    rate = next;
  } else if (g <= 0) {
    rate += s->increases >= p->hai_threshold ? s->rhai : s->rai;
    inc = TRUE;
  } else {
    rate *= MAX(0.0, 1.0 - p->beta * g);
    inc = FALSE;
  }
  s->increases = inc ? s->increases + 1 : 0;
  s->rate = MIN((double)f->line_rate, MAX(p->min_rate, rate));
  wh_flow_set_rate(f, s->rate);
}

static void timely_on_ack(WhFlow *f, const WhPacket *ack, uint64_t acked, const void *params)
{
  (void)acked;
  const TimelyParams *p = params;
  TimelyState *s = state(f);
  if (ack->sent == 0)
    return; /* from the delayed-ACK timer: no RTT sample */
  WhTime rtt = wh_flow_now(f) - ack->sent;
  if (!s->started) {
    s->started = 1;
    s->prev_rtt = rtt;
    s->update_at = f->snd_nxt;
    return;
  }
  if (ack->seq <= s->update_at)
    return;
  timely_update(f, s, p, rtt);
  s->update_at = f->snd_nxt;
}

static void timely_on_cnp(WhFlow *f, const void *params)
{
  (void)f;
  (void)params;
}

static void timely_on_timer(WhFlow *f, unsigned timer, const void *params)
{
  (void)f;
  (void)timer;
  (void)params;
}

static const uint16_t timely_seq_fields[] = {
    offsetof(TimelyState, update_at),
};

const WhCcClass wh_timely_cc_class = {
    .name = "timely",
    .type = &wh_timely_cc_type,
    .uses_cnp = FALSE,
    .time_fields = NULL, /* prev_rtt is a duration; no absolute times in the state */
    .n_time_fields = 0,
    .seq_fields = timely_seq_fields,
    .n_seq_fields = G_N_ELEMENTS(timely_seq_fields),
    .configure = timely_configure,
    .ecn = timely_ecn,
    .init = timely_init,
    .on_ack = timely_on_ack,
    .on_cnp = timely_on_cnp,
    .on_timer = timely_on_timer,
};
