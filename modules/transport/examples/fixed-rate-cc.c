/* An example congestion-control plugin: every flow sends at a fixed rate
 * (wh::FixedRateCc::Rate, capped at its NIC's line rate) and ignores all feedback;
 * switches do not mark ECN. It shows the plugin interface end to end:
 *   whsim run scenario.xml --plugin libwh-fixed-rate-cc.so --cc fixed-rate \
 *         --set wh::FixedRateCc::Rate=25Gbps */
#include <gmodule.h>

#include "congestion-control.h"
#include "rdma-transport.h"

static const WhParamSpec fixed_params[] = {
    {"Rate", WH_PARAM_RATE, "10Gbps", "sending rate of every flow", WH_CHECK_POSITIVE},
    {NULL},
};

static const WhTypeInfo fixed_type = {
    .name = "wh::FixedRateCc",
    .kind = "congestion-control",
    .help = "example plugin: constant sending rate, no feedback, no ECN",
    .params = fixed_params,
};

static void *fixed_configure(const WhConfig *cfg, GError **error)
{
  (void)error;
  double *rate = g_new(double, 1);
  *rate = (double)wh_config_rate(cfg, fixed_type.name, "Rate");
  return rate;
}

static void fixed_ecn(const void *params, WhEcnConfig *out)
{
  (void)params;
  *out = (WhEcnConfig){.ecn = FALSE, .ref_rate = 1};
}

static void fixed_init(WhFlow *flow, const void *params)
{
  wh_flow_set_rate(flow, *(const double *)params);
}

static void fixed_on_ack(WhFlow *flow, const WhPacket *ack, uint64_t acked, const void *params)
{
  (void)flow;
  (void)ack;
  (void)acked;
  (void)params;
}

static void fixed_on_cnp(WhFlow *flow, const void *params)
{
  (void)flow;
  (void)params;
}

static void fixed_on_timer(WhFlow *flow, unsigned timer, const void *params)
{
  (void)flow;
  (void)timer;
  (void)params;
}

static const WhCcClass fixed_class = {
    .name = "fixed-rate",
    .type = &fixed_type,
    .configure = fixed_configure,
    .ecn = fixed_ecn,
    .init = fixed_init,
    .on_ack = fixed_on_ack,
    .on_cnp = fixed_on_cnp,
    .on_timer = fixed_on_timer,
};

G_MODULE_EXPORT gboolean wh_plugin_init(GError **error);

G_MODULE_EXPORT gboolean wh_plugin_init(GError **error)
{
  return wh_cc_register(&fixed_class, error);
}
