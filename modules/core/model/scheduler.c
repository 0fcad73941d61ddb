/* The table of scheduler classes: the stock ones, then any a plugin registers (up to
 * WH_SCHEDULER_MAX in all), looked up by short or type name. Cold path: looked up once
 * per run. */
#include "scheduler.h"

#include "registry.h"

#define WH_SCHEDULER_MAX 16

static const WhSchedulerClass *classes[WH_SCHEDULER_MAX + 1] = {
    &wh_heap_scheduler_class,
    &wh_calendar_scheduler_class,
    NULL,
};

const WhSchedulerClass *const *wh_scheduler_classes(void)
{
  return classes;
}

const WhSchedulerClass *wh_scheduler_class_lookup(const char *name)
{
  for (size_t i = 0; classes[i]; i++) {
    if (g_strcmp0(name, classes[i]->name) == 0 || g_strcmp0(name, classes[i]->type_name) == 0)
      return classes[i];
  }
  return NULL;
}

gboolean wh_scheduler_register(const WhSchedulerClass *klass, GError **error)
{
  g_return_val_if_fail(klass && klass->name && klass->type_name && klass->create &&
                           klass->destroy && klass->insert && klass->peek && klass->pop &&
                           klass->remove && klass->size,
                       FALSE);
  size_t n = 0;
  while (classes[n])
    n++;
  if (wh_scheduler_class_lookup(klass->name) || wh_scheduler_class_lookup(klass->type_name) ||
      g_strcmp0(klass->name, "wormhole") == 0) {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                "scheduler \"%s\" (%s) is already registered", klass->name, klass->type_name);
    return FALSE;
  }
  if (n == WH_SCHEDULER_MAX) {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                "too many scheduler classes (at most %d)", WH_SCHEDULER_MAX);
    return FALSE;
  }
  classes[n] = klass;
  return TRUE;
}
