/* Registers the types of every module linked into the engine library, once. Types a
 * plugin adds register themselves when the plugin is loaded. */
#include "registry.h"

#include "congestion-control.h"
#include "scheduler.h"
#include "topology.h"
#include "wormhole.h"

extern const WhTypeInfo wh_link_type;
extern const WhTypeInfo wh_switch_type;
extern const WhTypeInfo wh_rdma_flow_type;
extern const WhTypeInfo wh_fifo_queue_disc_type;
extern const WhTypeInfo wh_red_queue_disc_type;
extern const WhTypeInfo wh_model_preset_type;
extern const WhTypeInfo wh_workload_type;
extern const WhTypeInfo wh_piper_type;

static const WhTypeInfo heap_type = {"wh::HeapScheduler", "scheduler",
                                     "4-ary min-heap event scheduler (default)", NULL};
static const WhTypeInfo calendar_type = {"wh::CalendarScheduler", "scheduler",
                                         "calendar-queue event scheduler (Brown 1988)", NULL};

void wh_registry_init(void)
{
  static gsize done = 0;
  if (!g_once_init_enter(&done))
    return;
  wh_registry_register(&heap_type);
  wh_registry_register(&calendar_type);
  wh_registry_register(&wh_link_type);
  wh_registry_register(&wh_switch_type);
  wh_registry_register(&wh_rdma_flow_type);
  wh_registry_register(&wh_fifo_queue_disc_type);
  wh_registry_register(&wh_red_queue_disc_type);
  wh_registry_register(&wh_model_preset_type);
  wh_registry_register(&wh_workload_type);
  wh_registry_register(&wh_piper_type);
  wh_registry_register(&wh_wormhole_type);
  for (const WhCcClass *const *c = wh_cc_classes(); *c; c++)
    wh_registry_register((*c)->type);
  for (const WhTopologyClass *const *t = wh_topology_classes(); *t; t++)
    wh_registry_register((*t)->type);
  g_once_init_leave(&done, 1);
}
