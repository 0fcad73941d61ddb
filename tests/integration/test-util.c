/* Shared test helpers; see test-util.h. */
#include "test-util.h"

#include <check.h>

char *wh_test_source_path(const char *relative)
{
  const char *root = g_getenv("WH_SOURCE_ROOT");
  g_autofree char *base = root ? g_strdup(root) : g_build_filename(g_get_current_dir(), "..", NULL);
  return g_build_filename(base, relative, NULL);
}

int wh_test_whsim(const char *const *args, char **out, char **err)
{
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (gpointer)WH_WHSIM_PATH);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add(argv, (gpointer)*a);
  g_ptr_array_add(argv, NULL);
  int status = -1;
  g_autoptr(GError) error = NULL;
  gboolean ok = g_spawn_sync(NULL, (char **)argv->pdata, NULL, G_SPAWN_DEFAULT, NULL, NULL, out,
                             err, &status, &error);
  g_ptr_array_free(argv, TRUE);
  ck_assert_msg(ok, "cannot run whsim: %s", error ? error->message : "?");
  ck_assert_msg(WIFEXITED(status), "whsim did not exit normally (status %d)", status);
  return WEXITSTATUS(status);
}

WhRun *wh_test_run(WhScenario *sc, const WhRunOptions *opts)
{
  g_autoptr(GError) error = NULL;
  WhRun *run = wh_run_new(sc, opts, &error);
  ck_assert_msg(run != NULL, "scenario %s does not build: %s", sc->path,
                error ? error->message : "?");
  wh_run_execute(run);
  return run;
}

WhRun *wh_test_run_file(const char *relative, const WhRunOptions *opts)
{
  g_autofree char *path = wh_test_source_path(relative);
  g_autoptr(GError) error = NULL;
  WhScenario *sc = wh_scenario_load(path, &error);
  ck_assert_msg(sc != NULL, "cannot load %s: %s", path, error ? error->message : "?");
  WhRun *run = wh_test_run(sc, opts);
  wh_run_take_scenario(run, sc);
  return run;
}
