#include <check.h>
#include "units.h"
START_TEST(test_dummy)
{
  ck_assert_int_eq(1, 1);
}
END_TEST
Suite *wh_core_suite(void)
{
  Suite *s = suite_create("core");
  TCase *tc = tcase_create("units");
  tcase_add_test(tc, test_dummy);
  suite_add_tcase(s, tc);
  return s;
}
