/* The table of congestion-control classes: the built-in ones, then any a plugin
 * registers (up to WH_CC_MAX in all). Cold path: looked up once per run. */
#include "congestion-control.h"

#define WH_CC_MAX 32

static const WhCcClass *classes[WH_CC_MAX + 1] = {
    &wh_dcqcn_cc_class, &wh_hpcc_cc_class, &wh_dctcp_cc_class, &wh_timely_cc_class, NULL,
};

const WhCcClass *const *wh_cc_classes(void)
{
  return classes;
}

const WhCcClass *wh_cc_class_lookup(const char *name)
{
  for (size_t i = 0; classes[i]; i++) {
    if (g_strcmp0(name, classes[i]->name) == 0 || g_strcmp0(name, classes[i]->type->name) == 0)
      return classes[i];
  }
  return NULL;
}

gboolean wh_cc_register(const WhCcClass *klass, GError **error)
{
  g_return_val_if_fail(klass && klass->name && klass->type && klass->configure && klass->ecn &&
                           klass->init && klass->on_ack && klass->on_cnp && klass->on_timer,
                       FALSE);
  size_t n = 0;
  while (classes[n])
    n++;
  if (wh_cc_class_lookup(klass->name) || wh_registry_lookup(klass->type->name)) {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                "congestion control \"%s\" (%s) is already registered", klass->name,
                klass->type->name);
    return FALSE;
  }
  if (n == WH_CC_MAX) {
    g_set_error(error, WH_CONFIG_ERROR, WH_CONFIG_ERROR_BAD_VALUE,
                "too many congestion-control classes (at most %d)", WH_CC_MAX);
    return FALSE;
  }
  if (!wh_registry_register(klass->type, error))
    return FALSE;
  classes[n] = klass;
  return TRUE;
}
