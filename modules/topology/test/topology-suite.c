/* Placeholder until this module's tests land. */
#include <check.h>

Suite *wh_topology_suite(void)
{
  return suite_create("topology");
}
