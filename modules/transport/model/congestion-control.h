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

typedef enum {
  WH_LOSS_NACK,    /* the receiver reported a gap: go-back-N follows */
  WH_LOSS_TIMEOUT, /* no progress for an RTO */
} WhLossKind;

typedef struct {
  const char *name;       /* short name for --cc */
  const WhTypeInfo *type; /* registered parameters */
  gboolean uses_cnp;      /* receivers send CNPs for CE-marked packets */
  gboolean uses_int;      /* switches append INT records to data packets */
  /* Offsets of the WhTime fields in the state block (absolute times; 0 = unset), so
   * a snapshot can store them relative to now and a shift can move them. */
  const uint16_t *time_fields;
  uint32_t n_time_fields;
  /* Offsets of the uint64_t byte positions in the flow's stream kept in the state
   * block, so an advance can move them and a snapshot can store them relative to
   * snd_una. */
  const uint16_t *seq_fields;
  uint32_t n_seq_fields;
  /* (transfer full) class parameters for this run, freed with g_free. */
  void *(*configure)(const WhConfig *cfg, GError **error);
  void (*ecn)(const void *params, WhEcnConfig *out);
  void (*init)(WhFlow *flow, const void *params);
  /* `acked`: bytes newly acknowledged by this ACK (0 for a duplicate). */
  void (*on_ack)(WhFlow *flow, const WhPacket *ack, uint64_t acked, const void *params);
  void (*on_cnp)(WhFlow *flow, const void *params);
  void (*on_timer)(WhFlow *flow, unsigned timer, const void *params);
  /* nullable: a loss was detected (before the transport goes back N) */
  void (*on_loss)(WhFlow *flow, WhLossKind kind, const void *params);
  /* nullable: the class changes the rate by itself at instants it knows in advance
   * (DCQCN's rate-increase ticks) and applies those changes lazily instead of as
   * events. sync applies every change due at or before `now`, each as at its own
   * instant; the transport calls it before it reads the rate (wh_flow_rate). Calling it
   * more often changes nothing. */
  void (*sync)(WhFlow *flow, WhTime now, const void *params);
  /* with sync: when a flow that sent `wire_bytes` at `last_tx` may send again, with
   * the changes sync would apply before then (each change at instant T re-paces the
   * flow to max(T, last_tx + the packet's time at the new rate)). The flow is synced
   * to the present, which is at or after last_tx. */
  WhTime (*next_send)(const WhFlow *flow, WhTime last_tx, uint32_t wire_bytes, const void *params);
  /* nullable: the part of the state bound to the flow's path and its ports' counters
   * (HPCC's per-hop INT records) no longer holds: the state was restored from another
   * flow or another timeline. The class drops that part and rebuilds it from the next
   * feedback. */
  void (*forget_path)(WhFlow *flow);
} WhCcClass;

/* The help of two parameters each built-in class registers for Wormhole
 * (docs/modules/wormhole.md), with the class's own default and WH_PARAM_DIGEST_OMITS_DEFAULT
 * (they held these defaults as wh::Wormhole parameters before, so digests stay as they
 * were): LineFraction, the idle rule's line rate as a fraction of the NIC's, and
 * RateWindow, how long a quiet partition's rates are measured before it is skipped.
 * The transport never reads them. */
#define WH_CC_LINE_FRACTION_HELP                                                                   \
  "Wormhole's idle rule: a flow counts as at line rate when its rate (window CCs: window / "       \
  "smoothed RTT) is at least this fraction of its NIC's rate, in (0, 1]"
#define WH_CC_RATE_WINDOW_HELP                                                                     \
  "Wormhole's skip: a quiet partition (the idle rule) is parked once every flow's delivery rate "  \
  "has been measured over this long, from one idle window (or RTT) after its last change on "      \
  "(the rate rule's partitions use their own window, l x tau)"

extern const WhCcClass wh_dcqcn_cc_class;
extern const WhCcClass wh_hpcc_cc_class;
extern const WhCcClass wh_dctcp_cc_class;
extern const WhCcClass wh_timely_cc_class;

/* Looks a class up by short name ("dcqcn") or type name ("wh::DcqcnCc"). */
const WhCcClass *wh_cc_class_lookup(const char *name);
/* NULL-terminated list of the classes known now. (transfer none) */
const WhCcClass *const *wh_cc_classes(void);

/* Adds a class (and its parameter type) at run time, typically from a plugin's
 * wh_plugin_init. (transfer none): `klass` must stay valid for the process. */
gboolean wh_cc_register(const WhCcClass *klass, GError **error);

#endif
