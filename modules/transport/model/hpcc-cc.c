/* HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019) as the
 * HPCC project's ns-3 simulator runs it (alibaba-edu/High-Precision-Congestion-Control,
 * rdma-hw.cc HandleAckHp / UpdateRateHp / FastReactHp, "hp" in run.py: one aggregate
 * rate, MULTI_RATE 0; window and rate, HAS_WIN 1, VAR_WIN 1; FAST_REACT 1), with the
 * paper's MaxStage 5 where run.py defaults MI_THRESH to 0. Switches append an INT
 * record per hop to data packets and the ACK echoes them. Per ACK and hop j, from the
 * previous record of that hop: txRate_j = (tx_bytes - prev tx_bytes) / (ts - prev ts),
 * u_j = txRate_j / B_j + min(qlen, prev qlen) / (B_j T); U = max_j u_j with tau the
 * record gap of that hop; u = (u (T - tau') + U tau') / T with tau' = min(tau, T).
 * With c = u / Eta: if c >= 1 or stage >= MaxStage, R = Rc / c + Wai (stage = 0), else
 * R = Rc + Wai (stage + 1); R is clamped to [MinRate, line rate]; the sending rate is
 * R and the window R x T. The reference Rc = Wc / T and the stage are committed once
 * per RTT, on the first ACK past the snd_nxt of the previous commit; the ACKs in
 * between only react (FastReact). T is the flow's base RTT, from its route unless
 * BaseRtt is set: the sum over forward ports of delay + one MTU data frame's
 * serialization and over reverse ports of delay + one ACK's (the project takes the
 * propagation delay twice plus forward MTU payload serialization, and with GLOBAL_T 1
 * the maximum over host pairs).
 *
 * Cost: per ACK, O(hops) arithmetic over the echoed INT records, no event, no timer;
 * per flow, the 128-byte CC block (prev records kept as 32-bit ages/counters, see
 * HpccHop). The ECN marking and CNPs are off. */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "congestion-control.h"
#include "rdma-transport.h"

#define AGE_NONE UINT32_MAX

typedef struct {
  double eta;
  double wai; /* b/s at ref rate */
  double min_rate;
  uint32_t max_stage;
  gboolean fast_react;
  gboolean use_window;
  WhTime base_rtt; /* 0: per flow from its route */
  gboolean scale;
  uint64_t ref_rate;
} HpccParams;

/* The previous INT record of one hop, compressed to fit 8 hops into the CC block.
 * `age`: how long before the state's t_ref the record was taken (ps; AGE_NONE: no
 * usable record); stored relative so a shift or a snapshot moves it with t_ref.
 * `tx`: low 32 bits of the port's cumulative tx_bytes; differences are taken modulo
 * 2^32, exact while a port sends under 4 GB between two records of the flow, which
 * the 4.29 ms bound on `age` ensures below 8 Tb/s. */
typedef struct {
  uint32_t age;
  uint32_t tx;
  uint32_t qlen;
} HpccHop;

typedef struct {
  WhTime t_ref;     /* when the hop records were stored (ACK arrival); 0: none yet */
  double rc;        /* reference rate Rc = Wc / T, b/s */
  float u;          /* EWMA of the normalized inflight of the most loaded hop */
  float base_rtt;   /* T, ps */
  uint32_t upd_gap; /* next full update once an ACK passes snd_una + upd_gap */
  uint8_t stage;    /* incStage: additive steps since the last multiplicative one */
  uint8_t n_hops;   /* hop records held */
  uint8_t started;  /* the first ACK with INT has been seen */
  uint8_t pad;
  HpccHop hop[WH_MAX_INT_HOPS];
} HpccState;

G_STATIC_ASSERT(sizeof(HpccState) <= WH_CC_STATE_BYTES);

static const WhParamSpec hpcc_params[] = {
    {"Eta", WH_PARAM_DOUBLE, "0.95", "target utilization eta of the most loaded hop",
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1},
    {"MaxStage", WH_PARAM_INT, "5",
     "additive-increase steps before a multiplicative update is forced (paper: 5; run.py: 0)",
     WH_CHECK_MIN | WH_CHECK_MAX, 0, 255},
    {"Wai", WH_PARAM_RATE, "40Mbps",
     "additive increase W_AI as a rate, per RTT (at RefRate; run.py: 10 x bw / 25 Mb/s; the "
     "paper sizes W_AI = W_init (1 - eta) / N for N flows on a link)",
     WH_CHECK_MIN, 0, 0},
    {"MinRate", WH_PARAM_RATE, "1000Mbps", "lowest sending rate (run.py MIN_RATE)",
     WH_CHECK_POSITIVE},
    {"FastReact", WH_PARAM_BOOL, "true",
     "react to every ACK between the once-per-RTT reference updates"},
    {"UseWindow", WH_PARAM_BOOL, "true", "also limit bytes in flight to rate x base RTT"},
    {"BaseRtt", WH_PARAM_TIME, "0ns",
     "base RTT T for every flow; 0 = per flow from its route (delays + one data frame "
     "forward and one ACK back)"},
    {"ScaleWithRate", WH_PARAM_BOOL, "true", "scale Wai by the flow's line rate / RefRate"},
    {"RefRate", WH_PARAM_RATE, "100Gbps", "line rate at which Wai applies", WH_CHECK_POSITIVE},
    /* HPCC holds a lone flow at its target utilization Eta, not at line rate: its
     * free-running rate is 0.9 of line and above, reached over tens of microseconds */
    {"LineFraction", WH_PARAM_DOUBLE, "0.9", WH_CC_LINE_FRACTION_HELP,
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1, NULL, WH_PARAM_DIGEST_OMITS_DEFAULT},
    {"RateWindow", WH_PARAM_TIME, "40us", WH_CC_RATE_WINDOW_HELP, WH_CHECK_POSITIVE, 0, 0, NULL,
     WH_PARAM_DIGEST_OMITS_DEFAULT},
    {NULL},
};

const WhTypeInfo wh_hpcc_cc_type = {
    .name = "wh::HpccCc",
    .kind = "congestion-control",
    .help = "HPCC: INT-based window and rate control, as in the HPCC project's ns-3 simulator",
    .params = hpcc_params,
};

static void *hpcc_configure(const WhConfig *cfg, GError **error)
{
  (void)error;
  const char *t = wh_hpcc_cc_type.name;
  HpccParams *p = g_new0(HpccParams, 1);
  p->eta = wh_config_double(cfg, t, "Eta");
  p->max_stage = (uint32_t)wh_config_int(cfg, t, "MaxStage");
  p->wai = (double)wh_config_rate(cfg, t, "Wai");
  p->min_rate = (double)wh_config_rate(cfg, t, "MinRate");
  p->fast_react = wh_config_bool(cfg, t, "FastReact");
  p->use_window = wh_config_bool(cfg, t, "UseWindow");
  p->base_rtt = wh_config_time(cfg, t, "BaseRtt");
  p->scale = wh_config_bool(cfg, t, "ScaleWithRate");
  p->ref_rate = wh_config_rate(cfg, t, "RefRate");
  return p;
}

static void hpcc_ecn(const void *params, WhEcnConfig *out)
{
  (void)params;
  *out = (WhEcnConfig){.ecn = FALSE, .ref_rate = 1};
}

static inline HpccState *state(WhFlow *f)
{
  return (HpccState *)f->cc.bytes;
}

/* The unloaded RTT of a full-size data packet and its ACK over the flow's routes. */
static WhTime route_rtt(const WhFlow *f)
{
  const WhNet *net = f->tp->net;
  const WhTransportParams *tp = &f->tp->p;
  WhTime t = 0;
  for (unsigned i = 0; i < f->fwd_hops; i++) {
    const WhPort *port = &net->port[f->fwd[i]];
    t += port->delay + wh_time_tx(tp->mtu + tp->header_bytes, port->line_bps);
  }
  for (unsigned i = 0; i < f->rev_hops; i++) {
    const WhPort *port = &net->port[f->rev[i]];
    t += port->delay + wh_time_tx(tp->ctrl_bytes, port->line_bps);
  }
  return t;
}

static void apply(WhFlow *f, const HpccState *s, const HpccParams *p, double rate)
{
  wh_flow_set_rate(f, rate);
  if (p->use_window) {
    double w = floor(rate * (double)s->base_rtt * 1e-12 / 8.0);
    wh_flow_set_window(f, w < 1.0 ? 1 : (uint64_t)w);
  }
}

static void hpcc_init(WhFlow *f, const void *params)
{
  const HpccParams *p = params;
  HpccState *s = state(f);
  memset(s, 0, sizeof *s);
  s->base_rtt = (float)(p->base_rtt ? p->base_rtt : route_rtt(f));
  s->rc = (double)f->line_rate;
  s->u = 1.0f;
  apply(f, s, p, (double)f->line_rate);
}

/* Stores the ACK's INT records as the hops' previous records, as of `now`. */
static void store_hops(HpccState *s, const WhPacket *ack, WhTime now)
{
  s->t_ref = now;
  s->n_hops = ack->n_int;
  const WhIntHop *ints = ack->n_int ? wh_packet_ints(ack) : NULL;
  for (unsigned i = 0; i < ack->n_int; i++) {
    const WhIntHop *h = &ints[i];
    WhTime age = now >= h->ts ? now - h->ts : AGE_NONE;
    s->hop[i] =
        (HpccHop){age < AGE_NONE ? (uint32_t)age : AGE_NONE, (uint32_t)h->tx_bytes, h->qlen};
  }
}

/* Per-ACK update (UpdateRateHp); `full`: commit Rc and the stage (once per RTT). */
static void update(WhFlow *f, HpccState *s, const HpccParams *p, const WhPacket *ack, gboolean full)
{
  const WhNet *net = f->tp->net;
  const double t_ps = (double)s->base_rtt;
  const double max_frame = (double)(f->tp->p.mtu + f->tp->p.header_bytes);
  gboolean same_route = ack->n_int == s->n_hops;
  double big_u = 0.0;
  WhTime dt = 0;
  gboolean any = FALSE;
  const WhIntHop *ints = ack->n_int ? wh_packet_ints(ack) : NULL;
  for (unsigned i = 0; same_route && i < ack->n_int; i++) {
    const WhIntHop *h = &ints[i];
    const HpccHop *r = &s->hop[i];
    if (r->age == AGE_NONE || s->t_ref < r->age)
      continue;
    WhTime prev_ts = s->t_ref - r->age;
    if (h->ts <= prev_ts)
      continue;
    WhTime tau = h->ts - prev_ts;
    double bw = (double)net->port[h->port].rate_bps;
    double bits = 8.0 * (double)(uint32_t)((uint32_t)h->tx_bytes - r->tx);
    /* A port sends at most B x tau plus the frame it starts at ts: anything more is
     * a record of another port or timeline (a restored snapshot); skip it. */
    if (bits > bw * (double)tau * 1e-12 + 8.0 * max_frame)
      continue;
    double u = bits / (bw * (double)tau * 1e-12) +
               8.0 * (double)MIN(h->qlen, r->qlen) / (bw * t_ps * 1e-12);
    if (u > big_u) {
      big_u = u;
      dt = tau;
    }
    any = TRUE;
  }
  store_hops(s, ack, wh_flow_now(f));
  if (!any)
    return;
  double tau = MIN((double)dt, t_ps);
  double u = ((double)s->u * (t_ps - tau) + big_u * tau) / t_ps;
  s->u = (float)u;
  double c = u / p->eta;
  double line = (double)f->line_rate;
  double ai = p->scale ? p->wai * line / (double)p->ref_rate : p->wai;
  double rate;
  uint32_t stage;
  if (c >= 1.0 || s->stage >= p->max_stage) {
    rate = c > 0.0 ? s->rc / c + ai : line;
    stage = 0;
  } else {
    rate = s->rc + ai;
    stage = s->stage + 1u;
  }
  rate = MIN(MAX(rate, p->min_rate), line);
  apply(f, s, p, rate);
  if (full) {
    s->rc = rate;
    s->stage = (uint8_t)MIN(stage, 255u);
  }
}

static void hpcc_on_ack(WhFlow *f, const WhPacket *ack, uint64_t acked, const void *params)
{
  const HpccParams *p = params;
  HpccState *s = state(f);
  /* the last update's snd_nxt, kept relative to snd_una (snd_una before this ACK) */
  uint64_t last_upd = f->snd_una - acked + s->upd_gap;
  if (ack->n_int > 0) {
    gboolean full = ack->seq > last_upd;
    if (!s->started) {
      s->started = 1;
      store_hops(s, ack, wh_flow_now(f));
    } else if (full || p->fast_react) {
      update(f, s, p, ack, full);
    }
    if (full && f->snd_nxt > last_upd)
      last_upd = f->snd_nxt;
  }
  uint64_t gap = last_upd > f->snd_una ? last_upd - f->snd_una : 0;
  s->upd_gap = gap < UINT32_MAX ? (uint32_t)gap : UINT32_MAX;
}

/* The INT records belong to the ports of the path (and to their counters' timeline) the
 * state came from: dropped; the next ACK stores fresh ones. */
static void hpcc_forget_path(WhFlow *f)
{
  HpccState *s = state(f);
  s->n_hops = 0;
  for (unsigned i = 0; i < WH_MAX_INT_HOPS; i++)
    s->hop[i].age = AGE_NONE;
}

static void hpcc_on_cnp(WhFlow *f, const void *params)
{
  (void)f;
  (void)params;
}

static void hpcc_on_timer(WhFlow *f, unsigned timer, const void *params)
{
  (void)f;
  (void)timer;
  (void)params;
}

static const uint16_t hpcc_time_fields[] = {
    offsetof(HpccState, t_ref),
};

const WhCcClass wh_hpcc_cc_class = {
    .name = "hpcc",
    .type = &wh_hpcc_cc_type,
    .uses_cnp = FALSE,
    .uses_int = TRUE,
    .time_fields = hpcc_time_fields,
    .n_time_fields = G_N_ELEMENTS(hpcc_time_fields),
    .configure = hpcc_configure,
    .ecn = hpcc_ecn,
    .init = hpcc_init,
    .on_ack = hpcc_on_ack,
    .on_cnp = hpcc_on_cnp,
    .on_timer = hpcc_on_timer,
    .forget_path = hpcc_forget_path,
};
