/* Placeholder until this module's tests land. */
#include <check.h>

Suite *wh_transport_suite(void)
{
  return suite_create("transport");
}
