/* Placeholder until the malformed-input corpus tests land. */
#include <check.h>

Suite *wh_bad_inputs_suite(void)
{
  return suite_create("bad-inputs");
}
