/* The library suite: libwhsim as a program outside the tree uses it. The build is
 * installed with `meson install --destdir` into a temporary directory, its whsim.pc is
 * relocated there (its prefix line set to where the files now are, as a package
 * relocation does), examples/run-scenario.c is compiled with
 * `cc ... $(pkg-config --cflags --libs whsim)` and run on the quickstart; it must
 * print the same FCTs as the flows.csv of `whsim run` and the version of whsim.pc.
 * Sanitizer builds skip it (a plain program cannot load a sanitized library). */
#include <check.h>
#include <string.h>

#include "test-util.h"

/* Runs `/bin/sh -c cmd` with `env` (NULL-terminated "NAME=value" pairs added to the
 * environment); its exit status, stdout and stderr (transfer full). */
static int sh(const char *cmd, const char *const *env, char **out, char **err)
{
  char **envp = g_get_environ();
  for (const char *const *e = env; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    g_autofree char *name = g_strndup(*e, (gsize)(eq - *e));
    envp = g_environ_setenv(envp, name, eq + 1, TRUE);
  }
  const char *argv[] = {"/bin/sh", "-c", cmd, NULL};
  int status = -1;
  g_autoptr(GError) error = NULL;
  gboolean ok = g_spawn_sync(NULL, (char **)argv, envp, G_SPAWN_DEFAULT, NULL, NULL, out, err,
                             &status, &error);
  g_strfreev(envp);
  ck_assert_msg(ok, "cannot run %s: %s", cmd, error ? error->message : "");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The "key,fct_ps" lines of a flows.csv text, in its order. (transfer full) */
static char *fcts_of_flows_csv(const char *csv)
{
  g_autoptr(GPtrArray) rows = wh_test_csv_rows(csv, NULL);
  GString *s = g_string_new("key,fct_ps\n");
  for (guint i = 0; i < rows->len; i++) {
    char **f = rows->pdata[i];
    ck_assert_uint_eq(g_strv_length(f), 8);
    g_string_append_printf(s, "%s,%s\n", f[7], f[6]);
  }
  return g_string_free(s, FALSE);
}

START_TEST(test_installed_library_example)
{
#ifdef WH_SANITIZED
  return;
#endif
  g_autofree char *tmp = g_dir_make_tmp("wh-library-XXXXXX", NULL);
  g_autofree char *dest = g_build_filename(tmp, "dest", NULL);
  g_autofree char *out = NULL, *err = NULL;
  g_autofree char *install = g_strdup_printf(
      "meson install -C '%s' --no-rebuild --quiet --destdir '%s'", WH_BUILD_ROOT, dest);
  ck_assert_msg(sh(install, NULL, &out, &err) == 0, "%s\n%s", out, err);
  g_autofree char *prefix = g_strconcat(dest, WH_INSTALL_PREFIX, NULL);
  g_autofree char *libdir = g_build_filename(prefix, WH_INSTALL_LIBDIR, NULL);
  g_autofree char *pcdir = g_build_filename(libdir, "pkgconfig", NULL);
  g_autofree char *pc = g_build_filename(pcdir, "whsim.pc", NULL);
  const char *installed[] = {"include/whsim/whsim.h", "include/whsim/whsim-version.h", "bin/whsim",
                             NULL};
  for (const char *const *f = installed; *f; f++) {
    g_autofree char *path = g_build_filename(prefix, *f, NULL);
    ck_assert_msg(g_file_test(path, G_FILE_TEST_EXISTS), "not installed: %s", path);
  }
  g_autofree char *plugins = g_build_filename(libdir, "whsim", "plugins", NULL);
  ck_assert_msg(g_file_test(plugins, G_FILE_TEST_IS_DIR), "no plugin directory %s", plugins);
  /* relocate the .pc file: its prefix becomes the staging prefix */
  g_autofree char *pc_text = wh_test_read_in(pcdir, "whsim.pc");
  g_autofree char *expect_prefix = g_strdup_printf("prefix=%s\n", WH_INSTALL_PREFIX);
  ck_assert_msg(g_str_has_prefix(pc_text, expect_prefix), "%s", pc_text);
  g_autofree char *moved =
      g_strdup_printf("prefix=%s\n%s", prefix, pc_text + strlen(expect_prefix));
  ck_assert(g_file_set_contents(pc, moved, -1, NULL));

  g_autofree char *example = wh_test_source_path("examples/run-scenario.c");
  g_autofree char *prog = g_build_filename(tmp, "run-scenario", NULL);
  g_autofree char *env_pc = g_strdup_printf("PKG_CONFIG_PATH=%s", pcdir);
  g_autofree char *env_ld = g_strdup_printf("LD_LIBRARY_PATH=%s", libdir);
  const char *env[] = {env_pc, env_ld, NULL};
  g_autofree char *compile = g_strdup_printf(
      "cd '%s' && cc -Wall -Wextra -Werror '%s' -o '%s' $(pkg-config --cflags --libs whsim)", tmp,
      example, prog);
  g_free(out);
  g_free(err);
  ck_assert_msg(sh(compile, env, &out, &err) == 0, "%s\n%s", out, err);
  g_free(out);
  g_free(err);
  ck_assert_int_eq(sh("pkg-config --modversion whsim", env, &out, &err), 0);
  g_autofree char *version = g_strdup_printf("whsim %s: ", g_strstrip(out));

  g_autofree char *scenario = wh_test_source_path("scenarios/quickstart.xml");
  g_autofree char *run = g_strdup_printf("'%s' '%s'", prog, scenario);
  g_autofree char *lib_out = NULL, *lib_err = NULL;
  ck_assert_msg(sh(run, env, &lib_out, &lib_err) == 0, "%s", lib_err);
  ck_assert_msg(g_str_has_prefix(lib_out, version), "%s", lib_out);

  g_autofree char *whsim_out = g_build_filename(tmp, "whsim-out", NULL);
  const char *args[] = {"run", scenario, "--out", whsim_out, "-q", NULL};
  ck_assert_int_eq(wh_test_whsim(args, NULL, NULL), 0);
  g_autofree char *flows = wh_test_read_in(whsim_out, "flows.csv");
  g_autofree char *want = fcts_of_flows_csv(flows);
  const char *got = strstr(lib_out, "key,fct_ps\n");
  ck_assert_ptr_nonnull(got);
  ck_assert_str_eq(got, want);

  g_autofree char *bad = g_strdup_printf("'%s' '%s/missing.xml'", prog, tmp);
  g_autofree char *bad_out = NULL, *bad_err = NULL;
  ck_assert_int_eq(sh(bad, env, &bad_out, &bad_err), 2);
  ck_assert_msg(strstr(bad_err, "missing.xml"), "%s", bad_err);
  wh_test_remove_tree(tmp);
}
END_TEST

Suite *wh_library_suite(void)
{
  Suite *s = suite_create("library");
  TCase *tc = tcase_create("installed");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, test_installed_library_example);
  suite_add_tcase(s, tc);
  return s;
}
