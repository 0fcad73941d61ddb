/* Placeholder until this module's tests land. */
#include <check.h>

Suite *wh_network_suite(void)
{
  return suite_create("network");
}
