/* Runs every module's Check suite. */
#include <check.h>
#include <stdlib.h>

Suite *wh_core_suite(void);

int main(void)
{
  SRunner *sr = srunner_create(wh_core_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
