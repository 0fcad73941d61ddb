/* The hardening suite, plot cases. */
#include <check.h>

#include "hardening-util.h"
#include "test-util.h"

Suite *wh_hardening_plot_suite(void)
{
  Suite *s = suite_create("hardening");
  return s;
}
