/* Placeholder until this module's tests land. */
#include <check.h>

Suite *wh_scenario_suite(void)
{
  return suite_create("scenario");
}
