/* DCQCN (Zhu et al., SIGCOMM 2015) as the HPCC project's ns-3 simulator models the
 * Mellanox NIC (alibaba-edu/High-Precision-Congestion-Control, rdma-hw.cc, "mlx"
 * mode), with its run.py parameters scaled by link rate. Deliberate differences from
 * run.py's "dcqcn" variant, for CNPs paced at one per 50 us (wh::RdmaFlow::CnpInterval):
 * RpTimer 55 us (its "dcqcn_paper" variant, the DCQCN paper's T) instead of 300 us, and
 * ClampTargetRate on (the paper sets RT = RC on every cut); see docs/modules/transport.md.
 *
 * On the first CNP: alpha = 1, target = rate (x RateOnFirstCnp), alpha ticks start
 * every AlphaInterval and decrease ticks every DecreaseInterval (offset 1 ns so a
 * decrease sees the alpha update of the same instant). Alpha tick:
 * alpha = (1-g) alpha + g*[CNP since last tick]. Decrease tick with a CNP since the
 * last one: target = rate (unless ClampTargetRate is off and no increase happened
 * yet), rate = max(MinRate, rate (1 - alpha/2)), stage = 0, rate-increase timer
 * restarted. Increase timer (every RpTimer): stage < FastRecoveryTimes: fast
 * recovery; == : additive (target += Rai); > : hyper (target += Rhai); then
 * rate = (rate + target) / 2.
 *
 * Cost: no tick is an event unless it has work. Alpha ticks are applied when a CNP
 * or a decrease needs alpha; the k ticks without a CNP since the last one multiply
 * alpha by (1-g)^k, a product of precomputed powers (1-g)^(2^i) over the bits of k
 * (log k multiplications; one after another, a flow that waited milliseconds cost
 * thousands). Decrease ticks become events only when a CNP is pending. Increase ticks
 * are applied lazily (sync: before the transport reads the rate, and before a
 * decrease), each as at its own instant, and next_send paces a waiting flow with the
 * ticks due before its next packet: a tick re-paces a flow inside its pacing gap to
 * max(tick, last send + packet time at the new rate), and leaves a flow that may
 * already send in its place. With millions of flows recovering at once, the ticks
 * were more than half of all events. wh::DcqcnCc::IncreaseEvents schedules every
 * increase tick as an event that syncs and re-paces, as a check: the results are
 * the same. An increase tick due at the same instant as a decrease applies first. */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "congestion-control.h"
#include "rdma-transport.h"

enum { TIMER_DECREASE = 1, TIMER_INCREASE = 2 };

typedef struct {
  double rai, rhai; /* b/s at ref rate */
  double min_rate;
  double g;
  double rate_on_first_cnp;
  WhTime alpha_interval, decrease_interval, rp_timer;
  uint32_t fast_recovery_times;
  gboolean clamp_target;
  gboolean scale;
  uint64_t ref_rate;
  gboolean increase_events;
  WhEcnConfig ecn;
  double decay[64]; /* (1 - g)^(2^i) */
} DcqcnParams;

typedef struct {
  double target;
  double alpha;
  WhTime alpha_next;    /* next alpha tick */
  WhTime decrease_base; /* decrease ticks at decrease_base + k * interval */
  WhTime rp_deadline;   /* next rate-increase tick */
  uint32_t stage;
  uint8_t started; /* first CNP seen */
  uint8_t alpha_cnp, decrease_cnp;
  uint8_t decrease_armed, rp_armed;
  double rai, rhai; /* scaled to this flow's line rate */
} DcqcnState;

G_STATIC_ASSERT(sizeof(DcqcnState) <= WH_CC_STATE_BYTES);

static const WhParamSpec dcqcn_params[] = {
    {"Kmin", WH_PARAM_BYTES, "400KB",
     "ECN marking starts above this egress queue length (at RefRate)"},
    {"Kmax", WH_PARAM_BYTES, "1600KB",
     "ECN marks every packet above this queue length (at RefRate)"},
    {"Pmax", WH_PARAM_DOUBLE, "0.2", "marking probability at Kmax", WH_CHECK_MIN | WH_CHECK_MAX, 0,
     1},
    {"Rai", WH_PARAM_RATE, "20Mbps", "additive increase step (at RefRate)", WH_CHECK_POSITIVE},
    {"Rhai", WH_PARAM_RATE, "200Mbps", "hyper increase step (at RefRate)", WH_CHECK_POSITIVE},
    {"MinRate", WH_PARAM_RATE, "1000Mbps", "lowest sending rate", WH_CHECK_POSITIVE},
    {"G", WH_PARAM_DOUBLE, "0.00390625", "alpha EWMA gain g (1/256)",
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1},
    {"AlphaInterval", WH_PARAM_TIME, "1us", "alpha update period", WH_CHECK_POSITIVE},
    {"DecreaseInterval", WH_PARAM_TIME, "4us", "rate decrease check period", WH_CHECK_POSITIVE},
    {"RpTimer", WH_PARAM_TIME, "55us", "rate increase timer period", WH_CHECK_POSITIVE},
    {"FastRecoveryTimes", WH_PARAM_INT, "1", "increase ticks spent in fast recovery", WH_CHECK_MIN,
     0, 0},
    {"RateOnFirstCnp", WH_PARAM_DOUBLE, "1.0", "rate factor applied on the first CNP",
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1},
    {"ClampTargetRate", WH_PARAM_BOOL, "true", "always set target = rate on a decrease"},
    {"ScaleWithRate", WH_PARAM_BOOL, "true", "scale Kmin, Kmax, Rai, Rhai by link rate / RefRate"},
    {"RefRate", WH_PARAM_RATE, "100Gbps", "link rate at which Kmin, Kmax, Rai, Rhai apply",
     WH_CHECK_POSITIVE},
    {"IncreaseEvents", WH_PARAM_BOOL, "false",
     "schedule every rate-increase tick as an event (a check: the results are the same as "
     "with the ticks applied lazily, only slower)"},
    /* DCQCN at line rate is flat from the start: a short rate window */
    {"LineFraction", WH_PARAM_DOUBLE, "0.999", WH_CC_LINE_FRACTION_HELP,
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1, NULL, WH_PARAM_DIGEST_OMITS_DEFAULT},
    {"RateWindow", WH_PARAM_TIME, "10us", WH_CC_RATE_WINDOW_HELP, WH_CHECK_POSITIVE, 0, 0, NULL,
     WH_PARAM_DIGEST_OMITS_DEFAULT},
    {NULL},
};

const WhTypeInfo wh_dcqcn_cc_type = {
    .name = "wh::DcqcnCc",
    .kind = "congestion-control",
    .help = "DCQCN, Mellanox NIC model of the HPCC project's ns-3 simulator (default CC)",
    .params = dcqcn_params,
};

static void *dcqcn_configure(const WhConfig *cfg, GError **error)
{
  const char *t = wh_dcqcn_cc_type.name;
  DcqcnParams *p = g_new0(DcqcnParams, 1);
  p->rai = (double)wh_config_rate(cfg, t, "Rai");
  p->rhai = (double)wh_config_rate(cfg, t, "Rhai");
  p->min_rate = (double)wh_config_rate(cfg, t, "MinRate");
  p->g = wh_config_double(cfg, t, "G");
  p->rate_on_first_cnp = wh_config_double(cfg, t, "RateOnFirstCnp");
  p->alpha_interval = wh_config_time(cfg, t, "AlphaInterval");
  p->decrease_interval = wh_config_time(cfg, t, "DecreaseInterval");
  p->rp_timer = wh_config_time(cfg, t, "RpTimer");
  p->fast_recovery_times = (uint32_t)wh_config_int(cfg, t, "FastRecoveryTimes");
  p->clamp_target = wh_config_bool(cfg, t, "ClampTargetRate");
  p->scale = wh_config_bool(cfg, t, "ScaleWithRate");
  p->ref_rate = wh_config_rate(cfg, t, "RefRate");
  p->increase_events = wh_config_bool(cfg, t, "IncreaseEvents");
  p->decay[0] = 1.0 - p->g;
  for (unsigned i = 1; i < G_N_ELEMENTS(p->decay); i++)
    p->decay[i] = p->decay[i - 1] * p->decay[i - 1];
  p->ecn.ecn = TRUE;
  p->ecn.kmin = wh_config_bytes(cfg, t, "Kmin");
  p->ecn.kmax = wh_config_bytes(cfg, t, "Kmax");
  p->ecn.pmax = wh_config_double(cfg, t, "Pmax");
  p->ecn.scale = p->scale;
  p->ecn.ref_rate = p->ref_rate;
  if (p->ecn.kmin > p->ecn.kmax) {
    const char *o = wh_config_origin(cfg, t, "Kmin");
    if (o == NULL)
      o = wh_config_origin(cfg, t, "Kmax");
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                "%s%swh::DcqcnCc::Kmin (%" G_GUINT64_FORMAT
                " B) exceeds wh::DcqcnCc::Kmax (%" G_GUINT64_FORMAT " B)",
                o ? o : "", o ? ": " : "", p->ecn.kmin, p->ecn.kmax);
    g_free(p);
    return NULL;
  }
  return p;
}

static void dcqcn_ecn(const void *params, WhEcnConfig *out)
{
  *out = ((const DcqcnParams *)params)->ecn;
}

static inline DcqcnState *state(WhFlow *f)
{
  return (DcqcnState *)f->cc.bytes;
}

static void dcqcn_init(WhFlow *f, const void *params)
{
  const DcqcnParams *p = params;
  DcqcnState *s = state(f);
  memset(s, 0, sizeof *s);
  double scale = p->scale ? (double)f->line_rate / (double)p->ref_rate : 1.0;
  s->rai = p->rai * scale;
  s->rhai = p->rhai * scale;
  s->target = (double)f->line_rate;
  s->alpha = 1.0;
}

/* Applies every alpha tick at or before `t`: alpha = (1 - g) alpha + g [CNP seen].
 * Only the first tick can see a CNP; the later ones multiply by 1 - g, all together by
 * the powers (1 - g)^(2^i) of the bits of their count. */
static void alpha_catch_up(DcqcnState *s, const DcqcnParams *p, WhTime t)
{
  if (s->alpha_next > t)
    return;
  uint64_t later = (t - s->alpha_next) / p->alpha_interval;
  double a = p->decay[0] * s->alpha + (s->alpha_cnp ? p->g : 0.0);
  s->alpha_cnp = 0;
  s->alpha_next += (later + 1) * p->alpha_interval;
  for (unsigned i = 0; later != 0 && a != 0.0; i++, later >>= 1) {
    if (later & 1)
      a *= p->decay[i];
  }
  s->alpha = a;
}

static void arm_decrease(WhFlow *f, DcqcnState *s, const DcqcnParams *p)
{
  if (s->decrease_armed)
    return;
  WhTime now = wh_flow_now(f);
  WhTime k = now > s->decrease_base
                 ? (now - s->decrease_base + p->decrease_interval - 1) / p->decrease_interval
                 : 0;
  s->decrease_armed = 1;
  wh_flow_timer_at(f, s->decrease_base + k * p->decrease_interval, TIMER_DECREASE);
}

static void dcqcn_on_cnp(WhFlow *f, const void *params)
{
  const DcqcnParams *p = params;
  DcqcnState *s = state(f);
  WhTime now = wh_flow_now(f);
  if (!s->started) {
    s->started = 1;
    s->alpha = 1.0;
    s->alpha_cnp = 0;
    s->alpha_next = now + p->alpha_interval;
    s->decrease_base = now + p->decrease_interval + WH_NS;
    s->decrease_cnp = 1;
    s->target = f->rate * p->rate_on_first_cnp;
    wh_flow_set_rate(f, s->target);
    arm_decrease(f, s, p);
    return;
  }
  alpha_catch_up(s, p, now);
  s->alpha_cnp = 1;
  s->decrease_cnp = 1;
  arm_decrease(f, s, p);
}

/* The increase ramp between ticks: the rate, the target and the stage. */
typedef struct {
  double rate, target;
  uint32_t stage;
} Ramp;

/* One increase tick. Returns whether the ramp is back at line rate (rate and target),
 * which ends the ticks. */
static inline gboolean increase_tick(const DcqcnState *s, const DcqcnParams *p, double line,
                                     Ramp *r)
{
  if (r->stage < p->fast_recovery_times) {
    /* fast recovery: target unchanged */
  } else if (r->stage == p->fast_recovery_times) {
    r->target = MIN(r->target + s->rai, line);
  } else {
    r->target = MIN(r->target + s->rhai, line);
  }
  r->rate = MIN((r->rate + r->target) / 2.0, line);
  r->stage++;
  return r->rate >= line && r->target >= line;
}

/* Applies the increase ticks due at or before `t`. */
static void increase_until(WhFlow *f, DcqcnState *s, const DcqcnParams *p, WhTime t)
{
  if (!s->rp_armed || s->rp_deadline > t)
    return;
  double line = (double)f->line_rate;
  Ramp r = {f->rate, s->target, s->stage};
  while (s->rp_armed && s->rp_deadline <= t) {
    if (increase_tick(s, p, line, &r))
      s->rp_armed = 0; /* back at line rate: nothing left to increase */
    else
      s->rp_deadline += p->rp_timer;
  }
  f->rate = r.rate;
  s->target = r.target;
  s->stage = r.stage;
}

static void dcqcn_sync(WhFlow *f, WhTime now, const void *params)
{
  increase_until(f, state(f), params, now);
}

/* The ticks before the next packet, on a copy of the ramp: each re-paces the packet. */
static WhTime dcqcn_next_send(const WhFlow *f, WhTime last_tx, uint32_t wire_bytes,
                              const void *params)
{
  const DcqcnParams *p = params;
  const DcqcnState *s = (const DcqcnState *)f->cc.bytes;
  WhTime next = last_tx + wh_flow_pace(f, f->rate, wire_bytes);
  if (!s->rp_armed)
    return next;
  double line = (double)f->line_rate;
  Ramp r = {f->rate, s->target, s->stage};
  for (WhTime tick = s->rp_deadline; tick < next; tick += p->rp_timer) {
    gboolean done = increase_tick(s, p, line, &r);
    next = MAX(tick, last_tx + wh_flow_pace(f, r.rate, wire_bytes));
    if (done)
      break;
  }
  return next;
}

static void dcqcn_on_timer(WhFlow *f, unsigned timer, const void *params)
{
  const DcqcnParams *p = params;
  DcqcnState *s = state(f);
  WhTime now = wh_flow_now(f);
  if (timer == TIMER_DECREASE) {
    s->decrease_armed = 0;
    alpha_catch_up(s, p, now);
    if (!s->decrease_cnp)
      return;
    increase_until(f, s, p, now);
    double rate = f->rate;
    if (p->clamp_target || s->stage != 0)
      s->target = rate;
    s->stage = 0;
    s->decrease_cnp = 0;
    s->rp_deadline = now + p->rp_timer;
    s->rp_armed = 1;
    if (p->increase_events && f->timers[TIMER_INCREASE] == NULL)
      wh_flow_timer_at(f, s->rp_deadline, TIMER_INCREASE);
    wh_flow_set_rate(f, MAX(p->min_rate, rate * (1.0 - s->alpha / 2.0)));
    if (f->rate == rate)
      wh_flow_repace(f); /* the same rate, but the ticks moved */
  } else if (timer == TIMER_INCREASE) {
    /* IncreaseEvents only: the tick as an event, which must change nothing the lazy
     * ticks have not already accounted for */
    increase_until(f, s, p, now);
    wh_flow_repace(f);
    if (s->rp_armed)
      wh_flow_timer_at(f, s->rp_deadline, TIMER_INCREASE);
  }
}

static void dcqcn_on_ack(WhFlow *f, const WhPacket *ack, uint64_t acked, const void *params)
{
  (void)f;
  (void)ack;
  (void)acked;
  (void)params;
}

static const uint16_t dcqcn_time_fields[] = {
    offsetof(DcqcnState, alpha_next),
    offsetof(DcqcnState, decrease_base),
    offsetof(DcqcnState, rp_deadline),
};

const WhCcClass wh_dcqcn_cc_class = {
    .name = "dcqcn",
    .type = &wh_dcqcn_cc_type,
    .uses_cnp = TRUE,
    .time_fields = dcqcn_time_fields,
    .n_time_fields = G_N_ELEMENTS(dcqcn_time_fields),
    .configure = dcqcn_configure,
    .ecn = dcqcn_ecn,
    .init = dcqcn_init,
    .on_ack = dcqcn_on_ack,
    .on_cnp = dcqcn_on_cnp,
    .on_timer = dcqcn_on_timer,
    .sync = dcqcn_sync,
    .next_send = dcqcn_next_send,
};
