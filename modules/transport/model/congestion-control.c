/* The table of built-in congestion-control classes. */
#include "congestion-control.h"

static const WhCcClass *const builtin[] = {
    &wh_dcqcn_cc_class,
    NULL,
};

const WhCcClass *const *wh_cc_classes(void)
{
  return builtin;
}

const WhCcClass *wh_cc_class_lookup(const char *name)
{
  for (size_t i = 0; builtin[i]; i++) {
    if (g_strcmp0(name, builtin[i]->name) == 0 || g_strcmp0(name, builtin[i]->type->name) == 0)
      return builtin[i];
  }
  return NULL;
}
