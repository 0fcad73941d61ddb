/* DCTCP (Alizadeh et al., "Data Center TCP", SIGCOMM 2010; RFC 8257) as a window-based,
 * ACK-clocked sender on the RDMA-style transport: pacing is off (the flow's rate stays
 * at line rate) and the congestion window, in bytes, alone decides when the flow may
 * send. Per flow the cost is O(1) work per ACK and no events or timers.
 *
 * Window: slow start from InitialWindow segments (cwnd += acked) up to ssthresh, then
 * congestion avoidance (cwnd += MSS * acked / cwnd). It grows only while the window limits
 * the flow (RFC 7661's concern; Linux's tcp_is_cwnd_limited): in slow start while cwnd is
 * under twice the flight, in congestion avoidance while the flight fills the window to
 * within a segment; so a NIC-limited lone flow stops at about twice its bandwidth-delay
 * product. MSS = wh::RdmaFlow::Mtu; the window handed to the transport is cwnd rounded
 * down to whole segments (at least one), capped by MaxWindow.
 * Alpha (RFC 8257 sec. 3.3): bytes acked and bytes acked with ECN-echo are counted; when
 * snd_una passes the end of the observation window (snd_nxt at the previous update),
 * alpha = (1 - G) alpha + G * marked / acked. On an ACK with ECN-echo, at most once per
 * window of data: cwnd = ssthresh = max(cwnd (1 - alpha/2), MinWindow); no growth until
 * the data sent before the cut is acknowledged (TCP's CWR state). Losses (RFC 8257 sec.
 * 3.4, as Linux dctcp_react_to_loss): a NACK (the receiver saw a gap; go-back-N follows,
 * this transport's fast retransmit) halves cwnd once per window like fast recovery; a
 * timeout sets ssthresh = max(flight/2, MinWindow) and cwnd = LossWindow, then slow start.
 *
 * Switch marking: DCTCP's step marking, Kmin = Kmax = K, Pmax = 1. K defaults to the HPCC
 * project's DCTCP setting (alibaba-edu/High-Precision-Congestion-Control, simulation/
 * run.py: 30 KB per 10 Gb/s, i.e. 300 KB at 100 Gb/s), scaled with the port rate when
 * ScaleWithRate is on; that is about 4 bandwidth-delay products of the default dumbbell,
 * well above the DCTCP paper's K > C x RTT / 7 guideline. G = 1/16 and AlphaOnInit = 1
 * follow the paper, RFC 8257, Linux and ns-3's TcpDctcp.
 *
 * Mapping to ns-3's TcpDctcp (3.37 defaults): TcpSocket::SegmentSize ~
 * wh::RdmaFlow::Mtu (ns-3's default is 536 B; set Mtu=536B and HeaderBytes to the
 * Ethernet/IP/TCP framing, e.g. 66B with timestamps, to match it);
 * TcpSocket::InitialCwnd (10) ~ InitialWindow; TcpSocket::DelAckCount (2) ~
 * wh::RdmaFlow::AckEvery=2 and DelAckTimeout (200 ms) ~ wh::RdmaFlow::DelayedAckTimeout;
 * TcpSocketBase::MinRto (1 s) ~ wh::RdmaFlow::Rto (fixed here, no RTT estimator);
 * SndBufSize/RcvBufSize (128 KiB) ~ MaxWindow=128KiB; TcpDctcp::DctcpShiftG (1/16) ~ G;
 * DctcpAlphaOnInit (1) ~ AlphaOnInit. Not modeled: SACK and timestamps (go-back-N
 * retransmits from the first hole instead), the RFC 8257 receiver state machine for
 * delayed ACKs (the receiver here echoes CE if any packet an ACK covers carried it, so
 * with AckEvery > 1 the marked fraction is overestimated), PRR and limited transmit. */
#include <math.h>
#include <stddef.h>
#include <string.h>
#include "congestion-control.h"
#include "rdma-transport.h"

typedef struct {
  double g;
  double alpha_on_init;
  uint32_t initial_window, min_window, loss_window; /* segments */
  uint64_t max_window;                              /* bytes, 0 = none */
  WhEcnConfig ecn;
} DctcpParams;

typedef struct {
  double cwnd;     /* bytes */
  double ssthresh; /* bytes */
  double alpha;
  uint64_t obs_acked, obs_marked; /* bytes acked / acked with ECN-echo this window */
  uint64_t obs_end;               /* alpha is updated once snd_una passes this */
  uint64_t hold_end;              /* no further cut until snd_una reaches this */
  uint64_t window;                /* last window handed to the transport */
  uint32_t mss;
  uint8_t holding; /* a cut happened in the current window of data */
  uint8_t frozen;  /* CWR / fast recovery: no growth while holding */
} DctcpState;

G_STATIC_ASSERT(sizeof(DctcpState) <= WH_CC_STATE_BYTES);

static const WhParamSpec dctcp_params[] = {
    {"Kmin", WH_PARAM_BYTES, "300KB",
     "ECN marking threshold K (at RefRate); DCTCP marks every packet above it"},
    {"Kmax", WH_PARAM_BYTES, "300KB",
     "queue length of full marking (at RefRate); equal to Kmin for DCTCP's step marking"},
    {"Pmax", WH_PARAM_DOUBLE, "1.0", "marking probability at Kmax", WH_CHECK_MIN | WH_CHECK_MAX, 0,
     1},
    {"G", WH_PARAM_DOUBLE, "0.0625", "alpha EWMA gain g (1/16)", WH_CHECK_POSITIVE | WH_CHECK_MAX,
     0, 1},
    {"AlphaOnInit", WH_PARAM_DOUBLE, "1.0", "alpha of a new flow", WH_CHECK_MIN | WH_CHECK_MAX, 0,
     1},
    {"InitialWindow", WH_PARAM_INT, "10", "initial congestion window, segments",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 1e6},
    {"MinWindow", WH_PARAM_INT, "2", "smallest window after an ECN or NACK cut, segments",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 1e6},
    {"LossWindow", WH_PARAM_INT, "1", "window after a retransmission timeout, segments",
     WH_CHECK_MIN | WH_CHECK_MAX, 1, 1e6},
    {"MaxWindow", WH_PARAM_BYTES, "0B",
     "cap on the window (a socket buffer; ns-3's default is 128KiB); 0 = none"},
    {"ScaleWithRate", WH_PARAM_BOOL, "true", "scale Kmin and Kmax by port rate / RefRate"},
    {"RefRate", WH_PARAM_RATE, "100Gbps", "link rate at which Kmin and Kmax apply",
     WH_CHECK_POSITIVE},
    /* DCTCP has no rate: its line rate is judged on window / smoothed RTT */
    {"LineFraction", WH_PARAM_DOUBLE, "0.99", WH_CC_LINE_FRACTION_HELP,
     WH_CHECK_POSITIVE | WH_CHECK_MAX, 0, 1, NULL, WH_PARAM_DIGEST_OMITS_DEFAULT},
    {"RateWindow", WH_PARAM_TIME, "40us", WH_CC_RATE_WINDOW_HELP, WH_CHECK_POSITIVE, 0, 0, NULL,
     WH_PARAM_DIGEST_OMITS_DEFAULT},
    {NULL},
};

const WhTypeInfo wh_dctcp_cc_type = {
    .name = "wh::DctcpCc",
    .kind = "congestion-control",
    .help = "DCTCP (RFC 8257): window-based, ECN-fraction alpha, step marking at K",
    .params = dctcp_params,
};

static void *dctcp_configure(const WhConfig *cfg, GError **error)
{
  const char *t = wh_dctcp_cc_type.name;
  DctcpParams *p = g_new0(DctcpParams, 1);
  p->g = wh_config_double(cfg, t, "G");
  p->alpha_on_init = wh_config_double(cfg, t, "AlphaOnInit");
  p->initial_window = (uint32_t)wh_config_int(cfg, t, "InitialWindow");
  p->min_window = (uint32_t)wh_config_int(cfg, t, "MinWindow");
  p->loss_window = (uint32_t)wh_config_int(cfg, t, "LossWindow");
  p->max_window = wh_config_bytes(cfg, t, "MaxWindow");
  p->ecn.ecn = TRUE;
  p->ecn.kmin = wh_config_bytes(cfg, t, "Kmin");
  p->ecn.kmax = wh_config_bytes(cfg, t, "Kmax");
  p->ecn.pmax = wh_config_double(cfg, t, "Pmax");
  p->ecn.scale = wh_config_bool(cfg, t, "ScaleWithRate");
  p->ecn.ref_rate = wh_config_rate(cfg, t, "RefRate");
  if (p->ecn.kmin > p->ecn.kmax) {
    const char *o = wh_config_origin(cfg, t, "Kmin");
    if (o == NULL)
      o = wh_config_origin(cfg, t, "Kmax");
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                "%s%swh::DctcpCc::Kmin (%" G_GUINT64_FORMAT
                " B) exceeds wh::DctcpCc::Kmax (%" G_GUINT64_FORMAT " B)",
                o ? o : "", o ? ": " : "", p->ecn.kmin, p->ecn.kmax);
    g_free(p);
    return NULL;
  }
  return p;
}

static void dctcp_ecn(const void *params, WhEcnConfig *out)
{
  *out = ((const DctcpParams *)params)->ecn;
}

static inline DctcpState *state(WhFlow *f)
{
  return (DctcpState *)f->cc.bytes;
}

/* Caps cwnd and hands the transport whole segments of it (at least one). */
static void apply_window(WhFlow *f, DctcpState *s, const DctcpParams *p)
{
  double mss = (double)s->mss;
  if (p->max_window && s->cwnd > (double)p->max_window)
    s->cwnd = MAX((double)p->max_window, mss);
  uint64_t segs = (uint64_t)floor(s->cwnd / mss);
  uint64_t w = MAX(segs, 1) * s->mss;
  if (w != s->window) {
    s->window = w;
    wh_flow_set_window(f, w);
  }
}

static void dctcp_init(WhFlow *f, const void *params)
{
  const DctcpParams *p = params;
  DctcpState *s = state(f);
  memset(s, 0, sizeof *s);
  s->mss = f->tp->p.mtu;
  s->cwnd = (double)p->initial_window * s->mss;
  s->ssthresh = INFINITY;
  s->alpha = p->alpha_on_init;
  s->obs_end = f->snd_nxt;
  wh_flow_set_rate(f, (double)f->line_rate); /* no pacing: the window clocks the flow */
  apply_window(f, s, p);
}

/* Starts a window of data in which no further cut happens. */
static void hold(WhFlow *f, DctcpState *s, gboolean freeze)
{
  s->holding = 1;
  s->frozen = (uint8_t)freeze;
  s->hold_end = f->snd_max_sent;
}

static void dctcp_on_ack(WhFlow *f, const WhPacket *ack, uint64_t acked, const void *params)
{
  const DctcpParams *p = params;
  DctcpState *s = state(f);
  double mss = (double)s->mss;
  /* alpha: fraction of marked bytes per window of data */
  s->obs_acked += acked;
  if (ack->ecn)
    s->obs_marked += acked;
  if (f->snd_una > s->obs_end) {
    double frac = s->obs_acked ? (double)s->obs_marked / (double)s->obs_acked : 0.0;
    s->alpha = (1.0 - p->g) * s->alpha + p->g * frac;
    s->obs_acked = s->obs_marked = 0;
    s->obs_end = f->snd_nxt;
  }
  if (s->holding && f->snd_una >= s->hold_end)
    s->holding = s->frozen = 0;
  if (ack->ecn && !s->holding) {
    s->cwnd = MAX(s->cwnd * (1.0 - s->alpha / 2.0), (double)p->min_window * mss);
    s->ssthresh = s->cwnd;
    hold(f, s, TRUE);
  } else if (acked && !s->frozen) {
    /* grow only while the window, not the NIC or the data, limits the flow; in slow
     * start while the window is under twice the flight (Linux tcp_is_cwnd_limited) */
    uint64_t flight = f->snd_nxt + acked - f->snd_una;
    gboolean limited = s->cwnd < s->ssthresh ? 2 * flight > s->window : flight + s->mss > s->window;
    if (limited) {
      double a = (double)acked;
      if (s->cwnd < s->ssthresh) {
        double ss = MIN(a, s->ssthresh - s->cwnd);
        s->cwnd += ss;
        a -= ss;
      }
      if (a > 0)
        s->cwnd += mss * a / s->cwnd;
    }
  }
  apply_window(f, s, p);
}

static void dctcp_on_loss(WhFlow *f, WhLossKind kind, const void *params)
{
  const DctcpParams *p = params;
  DctcpState *s = state(f);
  double mss = (double)s->mss;
  double floor_w = (double)p->min_window * mss;
  if (kind == WH_LOSS_TIMEOUT) {
    double flight = (double)(f->snd_nxt - f->snd_una);
    s->ssthresh = MAX(flight / 2.0, floor_w);
    s->cwnd = (double)p->loss_window * mss;
    hold(f, s, FALSE); /* slow start from here; no further cut for this window */
  } else if (!s->holding) {
    s->cwnd = MAX(s->cwnd / 2.0, floor_w);
    s->ssthresh = s->cwnd;
    hold(f, s, TRUE);
  }
  apply_window(f, s, p);
}

static void dctcp_on_cnp(WhFlow *f, const void *params)
{
  (void)f;
  (void)params;
}

static void dctcp_on_timer(WhFlow *f, unsigned timer, const void *params)
{
  (void)f;
  (void)timer;
  (void)params;
}

static const uint16_t dctcp_seq_fields[] = {
    offsetof(DctcpState, obs_end),
    offsetof(DctcpState, hold_end),
};

const WhCcClass wh_dctcp_cc_class = {
    .name = "dctcp",
    .type = &wh_dctcp_cc_type,
    .uses_cnp = FALSE,
    .time_fields = NULL, /* no absolute times in the state */
    .n_time_fields = 0,
    .seq_fields = dctcp_seq_fields,
    .n_seq_fields = G_N_ELEMENTS(dctcp_seq_fields),
    .configure = dctcp_configure,
    .ecn = dctcp_ecn,
    .init = dctcp_init,
    .on_ack = dctcp_on_ack,
    .on_cnp = dctcp_on_cnp,
    .on_timer = dctcp_on_timer,
    .on_loss = dctcp_on_loss,
};
