/* `whsim sweep`: the specification's bad inputs (status 2, one line naming the file and
 * line, nothing created), the cells' ids (stable, and changed by the scenario's bytes),
 * the 32-cell sweep of scenarios/sweeps/incast-delay.xml (4 link delays x 8 seeds) on
 * the local backend, on GNU parallel and on a real single-node Slurm cluster giving the
 * same sweep.csv apart from wall-clock fields, a sweep killed midway and run again
 * (only the missing cells run), two sweeps on one folder (the second refused by the
 * lock), one cell run twice at once, and a failed cell kept, then retried. The
 * parallel and Slurm cases print SKIPPED when their programs (or root, for the Slurm
 * daemons) are missing. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <glib/gstdio.h>

#include "test-util.h"

#define SPEC "scenarios/sweeps/incast-delay.xml"

static char *temp_dir(void)
{
  char *d = g_dir_make_tmp("wh-sweep-XXXXXX", NULL);
  ck_assert(d != NULL);
  return d;
}

/* Writes a specification into `dir` with `body` inside <sweep> (scenario paths
 * absolute through %s: the incast scenario). (transfer full) */
static char *write_spec(const char *dir, const char *name, const char *body)
{
  g_autofree char *scenario = wh_test_source_path("scenarios/incast-16to1.xml");
  g_autofree char *inner = g_strdup_printf(body, scenario);
  g_autofree char *text =
      g_strdup_printf("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sweep>\n%s</sweep>\n", inner);
  char *path = g_build_filename(dir, name, NULL);
  ck_assert(g_file_set_contents(path, text, -1, NULL));
  return path;
}

/* The rows of DIR/sweep.csv without the wall-clock columns, as one text. */
static char *csv_without_wall(const char *dir)
{
  g_autofree char *text = wh_test_read_in(dir, "sweep.csv");
  g_autoptr(GPtrArray) rows = wh_test_csv_rows(text, NULL);
  char *nl = strchr(text, '\n');
  ck_assert(nl != NULL);
  *nl = '\0';
  g_auto(GStrv) head = g_strsplit(text, ",", -1);
  GString *out = g_string_new(NULL);
  for (guint r = 0; r < rows->len; r++) {
    char **f = rows->pdata[r];
    for (guint c = 0; f[c]; c++)
      if (strcmp(head[c], "wall_s") != 0 && strcmp(head[c], "wormhole_wall_speedup") != 0)
        g_string_append_printf(out, "%s|", f[c]);
    g_string_append_c(out, '\n');
  }
  return g_string_free(out, FALSE);
}

static guint count_rows_with(const char *dir, const char *what)
{
  g_autofree char *text = wh_test_read_in(dir, "sweep.csv");
  guint n = 0;
  for (const char *p = text; (p = strstr(p, what)); p++)
    n++;
  return n;
}

/* Runs a sweep of the 32-cell specification into `out` with `extra` options. */
static int sweep(const char *out, const char *const *extra, char **so, char **se)
{
  g_autofree char *spec = wh_test_source_path(SPEC);
  const char *args[16] = {"sweep", spec, "--out", out};
  guint n = 4;
  for (; extra && *extra; extra++)
    args[n++] = *extra;
  args[n] = NULL;
  return wh_test_whsim(args, so, se);
}

/* Each bad input: status 2, one line naming the specification (and the line where
 * there is one), and no output folder. */
START_TEST(test_bad_inputs)
{
  static const struct {
    const char *body, *line, *needle;
  } cases[] = {
      {"<scenario file=\"%s\"/>\n<grid><param name=\"wh::Link::Nope\" values=\"1\"/></grid>\n",
       ":4:", "Nope"},
      {"<scenario file=\"%s\"/>\n<grid><param name=\"wh::DcqcnCc::Pmax\" values=\"0.5 "
       "7\"/></grid>\n",
       ":4:", "at most 1"},
      {"<scenario file=\"%s\"/>\n<grid>\n</grid>\n", ":4:", "empty"},
      {"<scenario file=\"%s\"/>\n<grid><param name=\"wh::Link::Delay\" values=\" \"/></grid>\n",
       ":4:", "empty"},
      {"<scenario file=\"%s\"/>\n<grid>\n<param name=\"wh::DcqcnCc::Pmax\" from=\"0\" to=\"1\" "
       "step=\"0.01\"/>\n<param name=\"wh::Link::Delay\" from=\"1\" to=\"200\" step=\"1\" "
       "unit=\"us\"/>\n</grid>\n",
       ":4:", "cell limit"},
      {"<scenario file=\"%s\"/>\n<seeds first=\"0\" count=\"20000\"/>\n", ":4:", "cell limit"},
      {"<scenario file=\"%s\"/>\n<scenario file=\"bad-scenario.xml\"/>\n",
       ":4:", "bad-scenario.xml"},
      {"<scenario file=\"%s\"/>\n<grid><colour/></grid>\n", ":4:", "sweep schema"},
  };
  g_autofree char *dir = temp_dir();
  g_autofree char *bad = g_build_filename(dir, "bad-scenario.xml", NULL);
  ck_assert(g_file_set_contents(bad,
                                "<scenario name=\"x\"><topology type=\"wh::Star\"/><nope/>"
                                "</scenario>\n",
                                -1, NULL));
  for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
    g_autofree char *spec = write_spec(dir, "bad.xml", cases[i].body);
    g_autofree char *out = g_build_filename(dir, "out", NULL);
    g_autofree char *so = NULL, *se = NULL;
    const char *args[] = {"sweep", spec, "--out", out, NULL};
    int st = wh_test_whsim(args, &so, &se);
    ck_assert_msg(st == 2, "case %u: status %d: %s", i, st, se);
    g_autofree char *want = g_strconcat(spec, cases[i].line, NULL);
    ck_assert_msg(strstr(se, want) && strstr(se, cases[i].needle), "case %u: %s", i, se);
    ck_assert_msg(strchr(se, '\n') == se + strlen(se) - 1, "case %u: not one line: %s", i, se);
    ck_assert_msg(!g_file_test(out, G_FILE_TEST_EXISTS), "case %u: %s was created", i, out);
  }
  /* options: an unknown backend; --submit without sbatch on the PATH */
  g_autofree char *spec = wh_test_source_path(SPEC);
  g_autofree char *out = g_build_filename(dir, "out", NULL);
  g_autofree char *spaced = g_build_filename(dir, "o p", NULL);
  const char *const bad_args[][8] = {
      {"sweep", spec, "--out", out, "--backend", "condor", NULL},
      {"sweep", spec, "--out", out, "--backend", "slurm", "--submit", NULL},
      {"sweep", spec, "--out", spaced, "--backend", "slurm", NULL},
      {"sweep", spec, "--out", out, "--backend", "slurm", "--sbatch-args=time=1", NULL},
  };
  const char *needles[] = {"--backend condor: unknown backend", "no sbatch on the PATH",
                           "output folder's path may hold only", "--sbatch-args: \"time=1\""};
  const char *path = g_getenv("PATH");
  g_autofree char *saved = g_strdup(path);
  for (guint i = 0; i < G_N_ELEMENTS(bad_args); i++) {
    g_autofree char *so = NULL, *se = NULL;
    if (i == 1)
      g_setenv("PATH", dir, TRUE);
    int st = wh_test_whsim(bad_args[i], &so, &se);
    g_setenv("PATH", saved, TRUE);
    ck_assert_msg(st == 2 && strstr(se, needles[i]), "option case %u: %d %s", i, st, se);
    ck_assert(!g_file_test(out, G_FILE_TEST_EXISTS) && !g_file_test(spaced, G_FILE_TEST_EXISTS));
  }
  wh_test_remove_tree(dir);
}
END_TEST

/* The ids: --list prints every cell once; the same specification gives the same ids,
 * a scenario that differs by one byte other ids. */
START_TEST(test_list_ids)
{
  g_autofree char *dir = temp_dir();
  g_autofree char *src = wh_test_source_path("scenarios/incast-16to1.xml");
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(src, &text, NULL, NULL));
  g_autofree char *copy = g_build_filename(dir, "incast.xml", NULL);
  ck_assert(g_file_set_contents(copy, text, -1, NULL));
  g_autofree char *spec = g_build_filename(dir, "spec.xml", NULL);
  const char *body = "<?xml version=\"1.0\"?>\n<sweep modes=\"run compare\">\n"
                     "<scenario file=\"incast.xml\"/>\n"
                     "<zip><param name=\"wh::Link::Delay\" values=\"1us 2us\"/>"
                     "<param name=\"wh::DcqcnCc::Kmin\" values=\"100KB 200KB\"/></zip>\n"
                     "<seeds values=\"5 6 7\"/>\n</sweep>\n";
  ck_assert(g_file_set_contents(spec, body, -1, NULL));
  const char *args[] = {"sweep", "--list", spec, NULL};
  g_autofree char *a = NULL, *b = NULL, *c = NULL;
  ck_assert_int_eq(wh_test_whsim(args, &a, NULL), 0);
  ck_assert_int_eq(wh_test_whsim(args, &b, NULL), 0);
  ck_assert_str_eq(a, b);
  g_auto(GStrv) lines = g_strsplit(a, "\n", -1);
  ck_assert_int_eq(g_strv_length(lines), 2 * 3 * 2 + 2); /* header, 12 cells, "" */
  ck_assert(strstr(a, "wh::Link::Delay=2us  wh::DcqcnCc::Kmin=200KB  seed=7  compare"));
  ck_assert(!strstr(a, "wh::Link::Delay=1us  wh::DcqcnCc::Kmin=200KB"));
  GHashTable *ids = g_hash_table_new(g_str_hash, g_str_equal);
  for (guint i = 1; lines[i + 1]; i++) {
    lines[i][16] = '\0';
    g_hash_table_add(ids, lines[i]);
  }
  ck_assert_int_eq(g_hash_table_size(ids), 12);
  /* one byte more in the scenario: every id changes */
  g_autofree char *changed = g_strconcat(text, " ", NULL);
  ck_assert(g_file_set_contents(copy, changed, -1, NULL));
  ck_assert_int_eq(wh_test_whsim(args, &c, NULL), 0);
  g_auto(GStrv) after = g_strsplit(c, "\n", -1);
  for (guint i = 1; after[i + 1]; i++) {
    after[i][16] = '\0';
    ck_assert_msg(!g_hash_table_contains(ids, after[i]), "id %s unchanged", after[i]);
  }
  g_hash_table_unref(ids);
  wh_test_remove_tree(dir);
}
END_TEST

/* The 32 cells on the local backend, and on GNU parallel: the same sweep.csv apart from
 * the wall-clock fields. */
START_TEST(test_local_and_parallel)
{
  g_autofree char *dir = temp_dir();
  g_autofree char *local = g_build_filename(dir, "local", NULL);
  g_autofree char *so = NULL, *se = NULL;
  const char *j2[] = {"-j", "2", NULL};
  ck_assert_msg(sweep(local, j2, &so, &se) == 0, "%s%s", so, se);
  ck_assert_uint_eq(count_rows_with(local, ",run,ok,0,"), 32);
  ck_assert(strstr(so, "32 cells: 0 ok, 0 failed, 32 to run"));
  g_autofree char *json = wh_test_read_in(local, "sweep.json");
  g_autofree char *ok = wh_test_json_at(json, "$.counts.ok");
  ck_assert_str_eq(ok, "32");
  g_autofree char *want = csv_without_wall(local);
  g_autofree char *parallel = g_find_program_in_path("parallel");
  if (parallel == NULL) {
    printf("SKIPPED: sweep --backend parallel: no GNU parallel on the PATH (make deps-cluster)\n");
    fflush(stdout);
    wh_test_remove_tree(dir);
    return;
  }
  g_autofree char *par = g_build_filename(dir, "parallel", NULL);
  g_autofree char *po = NULL, *pe = NULL;
  const char *args[] = {"--backend", "parallel", "-j", "2", NULL};
  ck_assert_msg(sweep(par, args, &po, &pe) == 0, "%s%s", po, pe);
  g_autofree char *got = csv_without_wall(par);
  ck_assert_str_eq(got, want);
  wh_test_remove_tree(dir);
}
END_TEST

/* Why the Slurm case cannot run here, or NULL. (transfer full) */
static char *slurm_missing(void)
{
  if (geteuid() != 0)
    return g_strdup("not root (the Slurm and munge daemons run as root)");
  const char *progs[] = {"munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo"};
  for (guint i = 0; i < G_N_ELEMENTS(progs); i++) {
    g_autofree char *p = g_find_program_in_path(progs[i]);
    g_autofree char *sbin = g_strconcat("/usr/sbin/", progs[i], NULL);
    if (p == NULL && !g_file_test(sbin, G_FILE_TEST_IS_EXECUTABLE))
      return g_strdup_printf("no %s (make deps-cluster installs slurm-wlm and munge)", progs[i]);
  }
  return NULL;
}

/* Starts or stops the cluster of tests/integration/slurm-cluster.sh in `dir`. */
static gboolean cluster(const char *cmd, const char *dir, char **out)
{
  g_autofree char *script = wh_test_source_path("tests/integration/slurm-cluster.sh");
  char pid[16]; /* the daemons are stopped once this process is gone (a timeout) */
  g_snprintf(pid, sizeof pid, "%d", (int)getpid());
  const char *argv[] = {"/bin/sh", script, cmd, dir, pid, NULL};
  int status = -1;
  g_autofree char *err = NULL;
  gboolean ok = g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, out, &err,
                             &status, NULL) &&
                g_spawn_check_wait_status(status, NULL);
  if (!ok)
    fprintf(stderr, "slurm-cluster.sh %s: %s\n", cmd, err ? err : "");
  return ok;
}

/* Every array task of the job completion log completed: the count of tasks. */
static guint completed_tasks(const char *log)
{
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(log, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  guint n = 0;
  for (char **l = lines; *l; l++) {
    if (!strstr(*l, "Name=whsim-sweep"))
      continue;
    ck_assert_msg(strstr(*l, "JobState=COMPLETED") && strstr(*l, "ExitCode=0:0"), "%s", *l);
    n++;
  }
  return n;
}

/* The 32 cells as a Slurm job array of 8 tasks (4 cells each) on a real single-node
 * cluster: every task completed (the job completion log), and the same sweep.csv as
 * the local backend apart from the wall-clock fields. */
START_TEST(test_slurm)
{
  g_autofree char *why = slurm_missing();
  if (why) {
    printf("SKIPPED: sweep --backend slurm on a single-node cluster: %s\n", why);
    fflush(stdout);
    return;
  }
  g_autofree char *dir = temp_dir();
  g_autofree char *local = g_build_filename(dir, "local", NULL);
  const char *j2[] = {"-j", "2", NULL};
  g_autofree char *lo = NULL;
  ck_assert_int_eq(sweep(local, j2, &lo, NULL), 0);
  g_autofree char *want = csv_without_wall(local);
  g_autofree char *cl = g_build_filename(dir, "cluster", NULL);
  ck_assert(g_mkdir(cl, 0700) == 0);
  g_autofree char *conf = NULL;
  ck_assert_msg(cluster("start", cl, &conf), "the cluster did not start");
  g_strstrip(conf);
  g_autofree char *old_conf = g_strdup(g_getenv("SLURM_CONF"));
  g_setenv("SLURM_CONF", conf, TRUE);
  g_autofree char *out = g_build_filename(dir, "slurm", NULL);
  g_autofree char *so = NULL, *se = NULL;
  const char *args[] = {"--backend", "slurm",         "--submit",  "--chunk",
                        "4",         "--sbatch-args", "--time=10", NULL};
  int st = sweep(out, args, &so, &se);
  if (old_conf)
    g_setenv("SLURM_CONF", old_conf, TRUE);
  else
    g_unsetenv("SLURM_CONF");
  g_autofree char *log = g_build_filename(cl, "jobcomp.log", NULL);
  guint tasks = completed_tasks(log);
  ck_assert(cluster("stop", cl, NULL));
  ck_assert_msg(st == 0, "%s%s", so, se);
  ck_assert_uint_eq(tasks, 8);
  g_autofree char *script = wh_test_read_in(out, "sweep.sbatch");
  ck_assert(strstr(script, "#SBATCH --array=0-7\n") && strstr(script, "#SBATCH --time=10\n"));
  g_autofree char *got = csv_without_wall(out);
  ck_assert_str_eq(got, want);
  wh_test_remove_tree(dir);
}
END_TEST

/* The cell directories there are in DIR/cells (complete ones; a staging directory
 * counts in *stages). */
static guint cell_dirs(const char *out, guint *stages)
{
  g_autofree char *cells = g_build_filename(out, "cells", NULL);
  g_autoptr(GDir) d = g_dir_open(cells, 0, NULL);
  guint n = 0;
  const char *e;
  if (stages)
    *stages = 0;
  while (d && (e = g_dir_read_name(d))) {
    if (g_str_has_prefix(e, ".stage-")) {
      if (stages)
        (*stages)++;
    } else {
      n++;
    }
  }
  return n;
}

static GPid start_sweep(const char *out, const char *jobs)
{
  g_autofree char *spec = wh_test_source_path(SPEC);
  const char *argv[] = {WH_WHSIM_PATH, "sweep", spec, "--out", out, "-j", jobs, NULL};
  GPid pid;
  ck_assert(g_spawn_async(NULL, (char **)argv, NULL,
                          G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL |
                              G_SPAWN_STDERR_TO_DEV_NULL,
                          NULL, NULL, &pid, NULL));
  return pid;
}

static int wait_pid(GPid pid)
{
  int status;
  ck_assert(waitpid(pid, &status, 0) == pid);
  return status;
}

/* Killed (SIGTERM) after some cells, then run again: the cells complete before are
 * kept as they were (same inode), only the missing ones run, and none is left half
 * written. */
START_TEST(test_kill_and_resume)
{
  g_autofree char *dir = temp_dir();
  g_autofree char *out = g_build_filename(dir, "out", NULL);
  GPid pid = start_sweep(out, "1");
  for (int i = 0; i < 600 && cell_dirs(out, NULL) < 6; i++)
    g_usleep(20000);
  kill(pid, SIGTERM);
  int status = wait_pid(pid);
  ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %d", status);
  guint stages;
  guint done = cell_dirs(out, &stages);
  ck_assert_uint_eq(stages, 0);
  ck_assert_msg(done >= 6 && done < 32, "%u cells done", done);
  g_autofree char *cells = g_build_filename(out, "cells", NULL);
  g_autoptr(GHashTable) inodes = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  g_autoptr(GDir) d = g_dir_open(cells, 0, NULL);
  for (const char *e; (e = g_dir_read_name(d));) {
    g_autofree char *p = g_build_filename(cells, e, "cell.json", NULL);
    GStatBuf sb;
    ck_assert(g_stat(p, &sb) == 0);
    g_hash_table_insert(inodes, g_strdup(e), GSIZE_TO_POINTER((gsize)sb.st_ino));
  }
  g_autofree char *so = NULL, *se = NULL;
  const char *j2[] = {"-j", "2", NULL};
  ck_assert_msg(sweep(out, j2, &so, &se) == 0, "%s%s", so, se);
  g_autofree char *counts =
      g_strdup_printf("32 cells: %u ok, 0 failed, %u to run", done, 32 - done);
  ck_assert_msg(strstr(so, counts), "expected \"%s\" in: %s", counts, so);
  printf("sweep kill and resume: %u cells complete when killed, %u run again\n", done, 32 - done);
  GHashTableIter it;
  gpointer key, value;
  g_hash_table_iter_init(&it, inodes);
  while (g_hash_table_iter_next(&it, &key, &value)) {
    g_autofree char *p = g_build_filename(cells, key, "cell.json", NULL);
    GStatBuf sb;
    ck_assert(g_stat(p, &sb) == 0);
    ck_assert_msg((gsize)sb.st_ino == GPOINTER_TO_SIZE(value), "cell %s was run again",
                  (char *)key);
  }
  ck_assert_uint_eq(count_rows_with(out, ",run,ok,0,"), 32);
  wh_test_remove_tree(dir);
}
END_TEST

/* A second sweep on a folder where one runs is refused (status 2, nothing run); the
 * first completes every cell. */
START_TEST(test_lock)
{
  g_autofree char *dir = temp_dir();
  g_autofree char *out = g_build_filename(dir, "out", NULL);
  GPid pid = start_sweep(out, "1");
  for (int i = 0; i < 600 && cell_dirs(out, NULL) < 1; i++)
    g_usleep(20000);
  g_autofree char *so = NULL, *se = NULL;
  int st = sweep(out, NULL, &so, &se);
  guint during = cell_dirs(out, NULL);
  ck_assert_msg(st == 2 && strstr(se, "another sweep is running in this folder"), "%d %s", st, se);
  ck_assert_msg(strstr(so, "to run") == NULL, "the second sweep ran: %s", so);
  int status = wait_pid(pid);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
  ck_assert_msg(during < 32, "the first sweep was done before the second started");
  ck_assert_uint_eq(count_rows_with(out, ",run,ok,0,"), 32);
  wh_test_remove_tree(dir);
}
END_TEST

/* The same cell run by two workers at once: one complete directory, nothing staged
 * left, both report ok. */
START_TEST(test_same_cell_twice)
{
  g_autofree char *dir = temp_dir();
  g_autofree char *out = g_build_filename(dir, "out", NULL);
  g_autofree char *spec = wh_test_source_path(SPEC);
  g_autofree char *list = NULL;
  const char *largs[] = {"sweep", "--list", spec, NULL};
  ck_assert_int_eq(wh_test_whsim(largs, &list, NULL), 0);
  char id[17];
  g_strlcpy(id, strchr(list, '\n') + 1, sizeof id);
  const char *argv[] = {WH_WHSIM_PATH, "sweep", spec, "--out", out, "--cell", id, NULL};
  GPid pids[2];
  for (int i = 0; i < 2; i++)
    ck_assert(g_spawn_async(NULL, (char **)argv, NULL,
                            G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDOUT_TO_DEV_NULL, NULL, NULL,
                            &pids[i], NULL));
  for (int i = 0; i < 2; i++) {
    int status = wait_pid(pids[i]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "worker %d: status %d", i, status);
  }
  guint stages;
  ck_assert_uint_eq(cell_dirs(out, &stages), 1);
  ck_assert_uint_eq(stages, 0);
  g_autofree char *cell = g_build_filename(out, "cells", id, NULL);
  g_autofree char *rec = wh_test_read_in(cell, "cell.json");
  g_autofree char *status = wh_test_json_at(rec, "$.status");
  ck_assert_str_eq(status, "\"ok\"");
  g_autofree char *summary = wh_test_read_in(cell, "summary.json");
  ck_assert(strstr(summary, "\"flows_completed\" : 16"));
  wh_test_remove_tree(dir);
}
END_TEST

/* A cell that fails (a star too small for the incast's flows) is recorded with its
 * exit status and last error line, kept by a rerun, and run again with
 * --retry-failed. */
START_TEST(test_failed_and_retry)
{
  g_autofree char *dir = temp_dir();
  g_autofree char *spec = write_spec(
      dir, "hosts.xml",
      "<scenario file=\"%s\"/>\n<grid><param name=\"wh::Star::Hosts\" values=\"17 2\"/></grid>\n");
  g_autofree char *out = g_build_filename(dir, "out", NULL);
  const char *args[] = {"sweep", spec, "--out", out, NULL};
  g_autofree char *o1 = NULL, *o2 = NULL, *o3 = NULL;
  ck_assert_int_eq(wh_test_whsim(args, &o1, NULL), 1);
  ck_assert_msg(strstr(o1, "cells      2: 1 ok, 1 failed, 0 missing"), "%s", o1);
  g_autofree char *csv = wh_test_read_in(out, "sweep.csv");
  ck_assert_msg(strstr(csv, ",2,1,run,failed,2,\"whsim: ") && strstr(csv, "no host \"\"16\"\""),
                "%s", csv);
  ck_assert_int_eq(wh_test_whsim(args, &o2, NULL), 1);
  ck_assert_msg(strstr(o2, "1 ok, 1 failed (kept: --retry-failed runs them), 0 to run"), "%s", o2);
  const char *retry[] = {"sweep", spec, "--out", out, "--retry-failed", NULL};
  ck_assert_int_eq(wh_test_whsim(retry, &o3, NULL), 1);
  ck_assert_msg(strstr(o3, "1 ok, 1 failed, 1 to run"), "%s", o3);
  guint stages;
  ck_assert_uint_eq(cell_dirs(out, &stages), 2);
  ck_assert_uint_eq(stages, 0);
  wh_test_remove_tree(dir);
}
END_TEST

/* `whsim plot` on a sweep folder: each result against the varied parameter, with a
 * scenario whose name would run a shell command in a gnuplot double-quoted string. */
START_TEST(test_plot)
{
  g_autofree char *gnuplot = g_find_program_in_path("gnuplot");
  if (gnuplot == NULL) {
    printf("SKIPPED: sweep plot: no gnuplot on the PATH\n");
    fflush(stdout);
    return;
  }
  g_autofree char *dir = temp_dir();
  g_autofree char *src = wh_test_source_path("scenarios/incast-16to1.xml");
  g_autofree char *text = NULL;
  ck_assert(g_file_get_contents(src, &text, NULL, NULL));
  g_autofree char *pwned = g_build_filename(dir, "PWNED", NULL);
  g_autofree char *name = g_strdup_printf("name=\"x`touch %s`'@y\"", pwned);
  char *at = strstr(text, "name=\"incast-16to1\"");
  ck_assert(at != NULL);
  *at = '\0';
  g_autofree char *hostile = g_strconcat(text, name, at + strlen("name=\"incast-16to1\""), NULL);
  g_autofree char *copy = g_build_filename(dir, "incast.xml", NULL);
  ck_assert(g_file_set_contents(copy, hostile, -1, NULL));
  g_autofree char *spec = g_build_filename(dir, "spec.xml", NULL);
  ck_assert(g_file_set_contents(spec,
                                "<sweep><scenario file=\"incast.xml\"/><grid><param "
                                "name=\"wh::Link::Delay\" values=\"1us 3us\"/></grid>"
                                "<seeds values=\"1 2\"/></sweep>\n",
                                -1, NULL));
  g_autofree char *out = g_build_filename(dir, "out", NULL);
  const char *args[] = {"sweep", spec, "--out", out, NULL};
  g_autofree char *so = NULL, *se = NULL, *po = NULL, *pe = NULL;
  ck_assert_msg(wh_test_whsim(args, &so, &se) == 0, "%s%s", so, se);
  const char *plot[] = {"plot", out, NULL};
  ck_assert_msg(wh_test_whsim(plot, &po, &pe) == 0, "%s%s", po, pe);
  g_autofree char *plots = g_build_filename(out, "plots", NULL);
  g_autofree char *svg = wh_test_read_in(plots, "sweep-fct_p99_ps-vs-p1.svg");
  ck_assert(strstr(svg, "wh::Link::Delay") && strstr(svg, "3us"));
  ck_assert_msg(!g_file_test(pwned, G_FILE_TEST_EXISTS), "gnuplot ran the scenario's name");
  ck_assert_msg(strstr(svg, "touch"), "the series title is missing");
  wh_test_remove_tree(dir);
}
END_TEST

START_TEST(test_version)
{
  const char *args[] = {"--version", NULL};
  g_autofree char *out = NULL;
  ck_assert_int_eq(wh_test_whsim(args, &out, NULL), 0);
  ck_assert_msg(g_str_has_prefix(out, "whsim 0.") && strchr(out, '+'), "%s", out);
  ck_assert_msg(strlen(out) > strlen("whsim 0.1.0+") + 8, "no commit: %s", out);
}
END_TEST

Suite *wh_sweep_suite(void)
{
  Suite *s = suite_create("sweep");
  TCase *spec = tcase_create("spec");
  tcase_add_test(spec, test_bad_inputs);
  tcase_add_test(spec, test_list_ids);
  tcase_add_test(spec, test_version);
  tcase_set_timeout(spec, 60);
  suite_add_tcase(s, spec);
  TCase *run = tcase_create("backends");
  tcase_add_test(run, test_local_and_parallel);
  tcase_add_test(run, test_kill_and_resume);
  tcase_add_test(run, test_lock);
  tcase_add_test(run, test_same_cell_twice);
  tcase_add_test(run, test_failed_and_retry);
  tcase_add_test(run, test_plot);
  tcase_set_timeout(run, 180);
  suite_add_tcase(s, run);
  TCase *slurm = tcase_create("slurm");
  tcase_add_test(slurm, test_slurm);
  tcase_set_timeout(slurm, 240);
  suite_add_tcase(s, slurm);
  return s;
}
