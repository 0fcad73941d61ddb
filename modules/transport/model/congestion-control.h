/* The congestion-control class interface. A CC class reads its parameters once per
 * run (configure), tells switches how to mark ECN (ecn), and keeps each flow's state
 * in the flow's fixed-size state block, a plain value (no pointers) so it can be
 * copied, compared and serialized. The transport calls init when a flow starts and
 * on_ack / on_cnp / on_timer as feedback arrives; the class sets the flow's sending
 * rate with wh_flow_set_rate and arms timers with wh_flow_timer_at. */
#ifndef WH_CONGESTION_CONTROL_H
#define WH_CONGESTION_CONTROL_H

#include <glib.h>
#include "packet.h"
#include "registry.h"

typedef struct WhFlow WhFlow;

typedef struct {
  gboolean ecn;
  uint64_t kmin, kmax; /* bytes at ref_rate */
  double pmax;
  gboolean scale;
  uint64_t ref_rate;
} WhEcnConfig;

typedef struct {
  const char *name;       /* short name for --cc */
  const WhTypeInfo *type; /* registered parameters */
  /* (transfer full) class parameters for this run, freed with g_free. */
  void *(*configure)(const WhConfig *cfg, GError **error);
  void (*ecn)(const void *params, WhEcnConfig *out);
  void (*init)(WhFlow *flow, const void *params);
  void (*on_ack)(WhFlow *flow, const WhPacket *ack, const void *params);
  void (*on_cnp)(WhFlow *flow, const void *params);
  void (*on_timer)(WhFlow *flow, unsigned timer, const void *params);
} WhCcClass;

extern const WhCcClass wh_dcqcn_cc_class;

/* Looks a class up by short name ("dcqcn") or type name ("wh::DcqcnCc"). */
const WhCcClass *wh_cc_class_lookup(const char *name);
/* NULL-terminated list of the classes known now. (transfer none) */
const WhCcClass *const *wh_cc_classes(void);

/* Adds a class (and its parameter type) at run time, typically from a plugin's
 * wh_plugin_init. (transfer none): `klass` must stay valid for the process. */
gboolean wh_cc_register(const WhCcClass *klass, GError **error);

#endif
