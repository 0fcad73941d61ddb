/* Registers the types of every module linked into the engine library, once: the
 * scenario layer assembles the modules, so registration lives here, above core/ and
 * the models, which depend on nothing above them. Types a plugin adds register
 * themselves when the plugin is loaded (before or after this). */
#include "scenario.h"

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
                                     "4-ary min-heap event scheduler", NULL};
static const WhTypeInfo calendar_type = {"wh::CalendarScheduler", "scheduler",
                                         "calendar-queue event scheduler (Brown 1988; default)",
                                         NULL};

void wh_registry_init(void)
{
  static gsize done = 0;
  if (!g_once_init_enter(&done))
    return;
  const WhTypeInfo *const own[] = {&heap_type,
                                   &calendar_type,
                                   &wh_link_type,
                                   &wh_switch_type,
                                   &wh_rdma_flow_type,
                                   &wh_fifo_queue_disc_type,
                                   &wh_red_queue_disc_type,
                                   &wh_model_preset_type,
                                   &wh_workload_type,
                                   &wh_piper_type,
                                   &wh_wormhole_type,
                                   &wh_wormhole_study_type};
  GPtrArray *all = g_ptr_array_new();
  for (size_t i = 0; i < G_N_ELEMENTS(own); i++)
    g_ptr_array_add(all, (gpointer)own[i]);
  for (const WhCcClass *const *c = wh_cc_classes(); *c; c++) {
    if (wh_registry_lookup((*c)->type->name) != (*c)->type) /* a plugin's registered already */
      g_ptr_array_add(all, (gpointer)(*c)->type);
  }
  for (const WhTopologyClass *const *t = wh_topology_classes(); *t; t++)
    g_ptr_array_add(all, (gpointer)(*t)->type);
  for (guint i = 0; i < all->len; i++) {
    g_autoptr(GError) err = NULL;
    if (!wh_registry_register(all->pdata[i], &err))
      g_error("built-in types: %s", err->message); /* a programming error */
  }
  g_ptr_array_free(all, TRUE);
  g_once_init_leave(&done, 1);
}
