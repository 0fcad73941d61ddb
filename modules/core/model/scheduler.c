/* The registry of stock scheduler classes, looked up by short or type name. */
#include "scheduler.h"

static const WhSchedulerClass *const stock_classes[] = {
    &wh_heap_scheduler_class,
    &wh_calendar_scheduler_class,
    NULL,
};

const WhSchedulerClass *const *wh_scheduler_classes(void)
{
  return stock_classes;
}

const WhSchedulerClass *wh_scheduler_class_lookup(const char *name)
{
  for (size_t i = 0; stock_classes[i]; i++) {
    if (g_strcmp0(name, stock_classes[i]->name) == 0 ||
        g_strcmp0(name, stock_classes[i]->type_name) == 0)
      return stock_classes[i];
  }
  return NULL;
}
