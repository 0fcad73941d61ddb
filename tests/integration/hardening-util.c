/* One hardening case; see hardening-util.h. */
#include "hardening-util.h"

#include <check.h>
#include <string.h>

#include "test-util.h"

WhCase *wh_case_new(const char *xml)
{
  WhCase *c = g_new0(WhCase, 1);
  c->dir = g_dir_make_tmp("wh-hardening-XXXXXX", NULL);
  ck_assert_ptr_nonnull(c->dir);
  c->scenario = g_build_filename(c->dir, "scenario.xml", NULL);
  c->out_dir = g_build_filename(c->dir, "out", NULL);
  if (xml)
    ck_assert(g_file_set_contents(c->scenario, xml, -1, NULL));
  return c;
}

void wh_case_free(WhCase *c)
{
  wh_test_remove_tree(c->dir);
  g_free(c->dir);
  g_free(c->scenario);
  g_free(c->out_dir);
  g_free(c->out);
  g_free(c->err);
  g_free(c);
}

/* Runs `whsim CMD SCENARIO ARGS...` (--out DIR is added for "run" unless ARGS has
 * one); NULL-terminated varargs. */
int wh_case_whsim(WhCase *c, const char *cmd, ...)
{
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (gpointer)cmd);
  g_ptr_array_add(argv, c->scenario);
  gboolean has_out = FALSE;
  va_list ap;
  va_start(ap, cmd);
  for (const char *a; (a = va_arg(ap, const char *)) != NULL;) {
    has_out |= strcmp(a, "--out") == 0;
    g_ptr_array_add(argv, (gpointer)a);
  }
  va_end(ap);
  if (strcmp(cmd, "run") == 0 && !has_out) {
    g_ptr_array_add(argv, (gpointer) "--out");
    g_ptr_array_add(argv, c->out_dir);
  }
  g_ptr_array_add(argv, NULL);
  g_clear_pointer(&c->out, g_free);
  g_clear_pointer(&c->err, g_free);
  c->status = wh_test_whsim((const char *const *)argv->pdata, &c->out, &c->err);
  g_ptr_array_free(argv, TRUE);
  return c->status;
}

void wh_case_assert_err_has(const WhCase *c, const char *what)
{
  ck_assert_msg(strstr(c->err, what) != NULL, "stderr lacks \"%s\" (exit %d): %s", what, c->status,
                c->err);
}

void wh_case_assert_summary_has(const WhCase *c, const char *what)
{
  g_autofree char *path = g_build_filename(c->out_dir, "summary.json", NULL);
  g_autofree char *json = NULL;
  ck_assert(g_file_get_contents(path, &json, NULL, NULL));
  ck_assert_msg(strstr(json, what) != NULL, "summary.json lacks %s: %s", what, json);
}

/* A dumbbell with one flow; `sets` are extra <set> lines. */
char *wh_case_dumbbell_xml(const char *sets, const char *flow_attrs)
{
  return g_strdup_printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                         "<scenario name=\"hardening\">\n%s"
                         "  <topology type=\"wh::Dumbbell\"><param name=\"Pairs\" value=\"1\"/>"
                         "</topology>\n"
                         "  <flows><flow src=\"0\" dst=\"1\" %s/></flows>\n"
                         "</scenario>\n",
                         sets, flow_attrs);
}
