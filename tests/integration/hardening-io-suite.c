/* The hardening suite, input and output cases: what a reader accepts (regular files of a
 * bounded size), what a writer may replace (a regular file, never a device, FIFO or
 * link), output directories checked before the run, the rate sampler held to the memory
 * budget, file-size limits, staging directories left by killed runs, and `whsim plan`
 * refusing to emit what its own loader refuses. Every case runs the whsim binary, some
 * under resource limits (setrlimit in the child). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "hardening-util.h"
#include "test-util.h"

/* ---- running whsim under limits ---- */

typedef struct {
  rlim_t as;    /* address space, bytes (0: unlimited) */
  rlim_t fsize; /* largest file, bytes (0: unlimited) */
} Limits;

static void set_limits(gpointer data)
{
  const Limits *l = data;
  if (l->as) {
    struct rlimit r = {l->as, l->as};
    setrlimit(RLIMIT_AS, &r);
  }
  if (l->fsize) {
    struct rlimit r = {l->fsize, l->fsize};
    setrlimit(RLIMIT_FSIZE, &r);
  }
}

/* 1 GiB of address space, enough for every case here and far below what an unbounded
 * reader or sampler takes before it fails; none under the sanitizers, whose shadow
 * memory needs more. */
#ifdef WH_SANITIZED
static const Limits no_sanitizer_limits = {0};
#else
static const Limits no_sanitizer_limits = {.as = (rlim_t)1 << 30};
#endif

/* Runs whsim with `args` (NULL-terminated) under `limits`; the wait status. */
static int whsim_limited(const char *const *args, Limits limits, char **out, char **err)
{
  return wh_test_whsim_setup(args, set_limits, &limits, out, err);
}

/* Asserts a wait status is a normal exit with `code`. */
static void assert_exit(int status, int code, const char *err)
{
  ck_assert_msg(WIFEXITED(status), "whsim did not exit normally (wait status %d): %s", status,
                err ? err : "");
  ck_assert_msg(WEXITSTATUS(status) == code, "whsim exited %d, expected %d: %s",
                WEXITSTATUS(status), code, err ? err : "");
}

static char *path_in(const WhCase *c, const char *name)
{
  return g_build_filename(c->dir, name, NULL);
}

static gboolean is_fifo(const char *path)
{
  GStatBuf st;
  return g_lstat(path, &st) == 0 && S_ISFIFO(st.st_mode);
}

/* Names in `dir` that start with `prefix`. */
static guint count_prefixed(const char *dir, const char *prefix)
{
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  guint n = 0;
  for (const char *name; d && (name = g_dir_read_name(d)) != NULL;)
    n += g_str_has_prefix(name, prefix);
  return n;
}

/* Four flows into one receiver on a dumbbell: the bottleneck makes the run four times
 * longer than its flows alone would take on the fastest link. */
static const char incast_xml[] =
    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    "<scenario name=\"incast\">\n"
    "  <topology type=\"wh::Dumbbell\"><param name=\"Pairs\" value=\"4\"/></topology>\n"
    "  <flows>\n"
    "    <flow src=\"0\" dst=\"4\" size=\"1MB\"/><flow src=\"1\" dst=\"4\" size=\"1MB\"/>\n"
    "    <flow src=\"2\" dst=\"4\" size=\"1MB\"/><flow src=\"3\" dst=\"4\" size=\"1MB\"/>\n"
    "  </flows>\n"
    "</scenario>\n";

/* ---- writers: what is in an output's place ---- */

/* A FIFO or a symbolic link where an output goes is refused before the run and left as
 * it was; so is an output directory where no file can be created. */
START_TEST(test_output_targets_refused_before_run)
{
  g_autofree char *xml = wh_case_dumbbell_xml("", "size=\"100KB\"");
  g_autoptr(WhCase) c = wh_case_new(xml);
  ck_assert_int_eq(g_mkdir(c->out_dir, 0755), 0);
  g_autofree char *fifo = g_build_filename(c->out_dir, "flows.csv", NULL);
  ck_assert_int_eq(mkfifo(fifo, 0644), 0);
  ck_assert_int_eq(wh_case_whsim(c, "run", NULL), 2);
  wh_case_assert_err_has(c, "flows.csv: exists and is not a regular file (a FIFO)");
  ck_assert_ptr_null(strstr(c->out, "engine")); /* refused before the run */
  ck_assert(is_fifo(fifo));
  g_unlink(fifo);

  g_autofree char *target = path_in(c, "elsewhere.json");
  ck_assert(g_file_set_contents(target, "mine", -1, NULL));
  g_autofree char *link = g_build_filename(c->out_dir, "summary.json", NULL);
  ck_assert_int_eq(symlink(target, link), 0);
  ck_assert_int_eq(wh_case_whsim(c, "run", NULL), 2);
  wh_case_assert_err_has(c, "summary.json: exists and is not a regular file (a symbolic link)");
  g_autofree char *kept = NULL;
  ck_assert(g_file_get_contents(target, &kept, NULL, NULL));
  ck_assert_str_eq(kept, "mine");
  ck_assert(g_file_test(link, G_FILE_TEST_IS_SYMLINK));
  g_unlink(link);

  /* nothing can be created in /proc, even by root, for whom access(W_OK) says yes */
  ck_assert_int_eq(wh_case_whsim(c, "run", "--out", "/proc", NULL), 2);
  wh_case_assert_err_has(c, "/proc: cannot create files there");
  ck_assert_ptr_null(strstr(c->out, "engine"));
  ck_assert_int_eq(wh_case_whsim(c, "compare", "--out", "/proc/whsim-compare", NULL), 2);
}
END_TEST

/* `whsim plan --emit-scenario` never replaces a FIFO or a device node (one made in the
 * case's directory, never a real device), and checks it before planning. */
START_TEST(test_plan_emit_target_refused)
{
  g_autoptr(WhCase) c = wh_case_new(NULL);
  g_autofree char *fifo = path_in(c, "out.xml");
  ck_assert_int_eq(mkfifo(fifo, 0644), 0);
  const char *args[] = {"plan",    "--model",         "mixtral-8x7b", "--gcds", "64",
                        "--flash", "--emit-scenario", fifo,           NULL};
  g_autofree char *out = NULL, *err = NULL;
  ck_assert_int_eq(wh_test_whsim(args, &out, &err), 2);
  ck_assert_msg(strstr(err, "exists and is not a regular file (a FIFO): not replaced"), "%s", err);
  ck_assert_str_eq(out, ""); /* refused before the table */
  ck_assert(is_fifo(fifo));
  g_autofree char *dev = path_in(c, "full");
  if (mknod(dev, S_IFCHR | 0666, makedev(1, 7)) != 0) {
    fprintf(stderr, "SKIPPED: plan --emit-scenario on a device node: mknod: %s\n",
            g_strerror(errno));
    return;
  }
  args[7] = dev;
  g_clear_pointer(&out, g_free);
  g_clear_pointer(&err, g_free);
  ck_assert_int_eq(wh_test_whsim(args, &out, &err), 2);
  ck_assert_msg(strstr(err, "(a device): not replaced"), "%s", err);
  GStatBuf st;
  ck_assert(g_lstat(dev, &st) == 0 && S_ISCHR(st.st_mode));
}
END_TEST

/* ---- readers ---- */

/* `whsim plan --model FILE` reads regular files of at most 1 MiB: a FIFO does not hang
 * it, /dev/zero does not grow it, a huge file is refused without being read. */
START_TEST(test_plan_model_reader_bounded)
{
  g_autoptr(WhCase) c = wh_case_new(NULL);
  g_autofree char *fifo = path_in(c, "fifo.ini");
  ck_assert_int_eq(mkfifo(fifo, 0644), 0);
  g_autofree char *zero = path_in(c, "zero.ini");
  ck_assert_int_eq(symlink("/dev/zero", zero), 0);
  g_autofree char *big = path_in(c, "big.ini");
  FILE *f = fopen(big, "w");
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(fseek(f, (2 << 20) - 1, SEEK_SET), 0); /* 2 MiB, sparse */
  fputc('\n', f);
  ck_assert_int_eq(fclose(f), 0);
  const char *files[] = {fifo, zero, big};
  const char *why[] = {"not a regular file", "not a regular file", "larger than the 1 MiB"};
  for (int i = 0; i < 3; i++) {
    const char *args[] = {"plan", "--model", files[i], "--gcds", "64", NULL};
    g_autofree char *out = NULL, *err = NULL;
    int status = whsim_limited(args, no_sanitizer_limits, &out, &err);
    assert_exit(status, 2, err);
    ck_assert_msg(strstr(err, files[i]) && strstr(err, why[i]), "%s", err);
  }
}
END_TEST

/* ---- plan: what it emits must load ---- */

/* A model whose times overflow (before: AttnTime=9223372036854775808ps, exit 0) is
 * refused with exit 2, naming the field; the file at the path is left as it was. */
START_TEST(test_plan_emits_only_loadable_scenarios)
{
  g_autoptr(WhCase) c = wh_case_new(NULL);
  g_autofree char *model = path_in(c, "absurd.ini");
  ck_assert(g_file_set_contents(model,
                                "[absurd]\nHidden=16777216\nLayers=64\nExperts=8\nTopK=2\n"
                                "FfnSize=16777216\nHeads=1\nKvHeads=1\nSeqLength=16777216\n"
                                "Vocab=16777216\nFfnMatrices=3\n",
                                -1, NULL));
  g_autofree char *xml = path_in(c, "emitted.xml");
  ck_assert(g_file_set_contents(xml, "earlier", -1, NULL));
  const char *args[] = {"plan", "--model",         model, "--gcds", "64", "--mesh",
                        "8x8",  "--emit-scenario", xml,   NULL};
  g_autofree char *out = NULL, *err = NULL;
  ck_assert_int_eq(wh_test_whsim(args, &out, &err), 2);
  ck_assert_msg(strstr(err, "wh::ModelPreset::AttnTime") && strstr(err, "not written"), "%s", err);
  g_autofree char *kept = NULL;
  ck_assert(g_file_get_contents(xml, &kept, NULL, NULL));
  ck_assert_str_eq(kept, "earlier");
}
END_TEST

/* ---- the rate sampler and the memory budget ---- */

/* A period that the flows alone would make exceed the budget is refused before the
 * run, naming the option and a period that fits. */
START_TEST(test_sample_period_refused_before_run)
{
  g_autoptr(WhCase) c = wh_case_new(incast_xml);
  ck_assert_int_eq(wh_case_whsim(c, "run", "--sample-period", "1ps", "--max-memory", "100MB", NULL),
                   2);
  wh_case_assert_err_has(c, "--sample-period 1ps: the flows run for at least");
  wh_case_assert_err_has(c, "use a period of at least");
  ck_assert(!g_file_test(c->out_dir, G_FILE_TEST_EXISTS));
}
END_TEST

/* A period the flows alone allow, but the run's own length does not: the samples stop
 * the run at the budget (exit 1, "stopped_early": "sample memory") and what was
 * sampled is written. Under an address-space limit well above the budget (none under
 * the sanitizers, whose shadow memory needs more), so that a sampler that ignored the
 * budget would die instead of finishing. */
START_TEST(test_sample_memory_stops_run)
{
  g_autoptr(WhCase) c = wh_case_new(incast_xml);
  const char *args[] = {"run", c->scenario,    "--out", c->out_dir, "--sample-period",
                        "1ns", "--max-memory", "40MB",  NULL};
  Limits limits = no_sanitizer_limits;
  g_autofree char *out = NULL, *err = NULL;
  assert_exit(whsim_limited(args, limits, &out, &err), 1, err);
  ck_assert_msg(strstr(err, "the rate samples reached the memory budget"), "%s", err);
  wh_case_assert_summary_has(c, "\"stopped_early\" : \"sample memory\"");
  g_autofree char *rates = wh_test_read_in(c->out_dir, "rates.csv");
  ck_assert_uint_gt(strlen(rates), 1000);
  /* a workload's flows are not known before the run: the budget alone stops it */
  g_autofree char *quick = wh_test_source_path("scenarios/quickstart.xml");
  const char *wl[] = {"run", quick,          "--out", c->out_dir, "--sample-period",
                      "1ps", "--max-memory", "200MB", NULL};
  g_clear_pointer(&out, g_free);
  g_clear_pointer(&err, g_free);
  assert_exit(whsim_limited(wl, limits, &out, &err), 1, err);
  wh_case_assert_summary_has(c, "\"stopped_early\" : \"sample memory\"");
}
END_TEST

/* ---- file-size limits and killed runs ---- */

/* Past `ulimit -f` a write fails with EFBIG: a clear error and exit 1, not a death by
 * SIGXFSZ; the staging directory is cleaned up and the earlier outputs are kept. */
START_TEST(test_file_size_limit_reported)
{
  g_autoptr(WhCase) c = wh_case_new(incast_xml);
  ck_assert_int_eq(g_mkdir(c->out_dir, 0755), 0);
  g_autofree char *summary = g_build_filename(c->out_dir, "summary.json", NULL);
  ck_assert(g_file_set_contents(summary, "earlier", -1, NULL));
  const char *args[] = {"run", c->scenario, "--out", c->out_dir, "--sample-period", "10ns", NULL};
  g_autofree char *out = NULL, *err = NULL;
  assert_exit(whsim_limited(args, (Limits){.fsize = 64 << 10}, &out, &err), 1, err);
  ck_assert_msg(strstr(err, "File too large") && strstr(err, "ulimit -f"), "%s", err);
  g_autofree char *kept = NULL;
  ck_assert(g_file_get_contents(summary, &kept, NULL, NULL));
  ck_assert_str_eq(kept, "earlier");
  ck_assert_uint_eq(count_prefixed(c->out_dir, ".whsim-"), 0);
}
END_TEST

/* A staging directory left by a killed run (no writer holds its lock) is removed by the
 * next run into the same directory; one whose writer still holds it is left alone. */
START_TEST(test_abandoned_staging_removed)
{
  g_autofree char *xml = wh_case_dumbbell_xml("", "size=\"100KB\"");
  g_autoptr(WhCase) c = wh_case_new(xml);
  ck_assert_int_eq(g_mkdir(c->out_dir, 0755), 0);
  g_autofree char *dead = g_build_filename(c->out_dir, ".whsim-AAAAAA", NULL);
  g_autofree char *live = g_build_filename(c->out_dir, ".whsim-BBBBBB", NULL);
  ck_assert_int_eq(g_mkdir(dead, 0755), 0);
  ck_assert_int_eq(g_mkdir(live, 0755), 0);
  g_autofree char *left = g_build_filename(dead, "flows.csv", NULL);
  ck_assert(g_file_set_contents(left, "partial", -1, NULL));
  int fd = open(live, O_RDONLY | O_DIRECTORY);
  ck_assert_int_ge(fd, 0);
  ck_assert_int_eq(flock(fd, LOCK_EX), 0); /* a writer that is still running */
  ck_assert_int_eq(wh_case_whsim(c, "run", NULL), 0);
  ck_assert(!g_file_test(dead, G_FILE_TEST_EXISTS));
  ck_assert(g_file_test(live, G_FILE_TEST_IS_DIR));
  close(fd);
  ck_assert_int_eq(wh_case_whsim(c, "run", NULL), 0);
  ck_assert(!g_file_test(live, G_FILE_TEST_EXISTS));
  ck_assert_uint_eq(count_prefixed(c->out_dir, ".whsim-"), 0);
}
END_TEST

Suite *wh_hardening_io_suite(void)
{
  Suite *s = suite_create("hardening");
  TCase *writers = tcase_create("io-writers");
  tcase_set_timeout(writers, 60);
  tcase_add_test(writers, test_output_targets_refused_before_run);
  tcase_add_test(writers, test_plan_emit_target_refused);
  tcase_add_test(writers, test_plan_emits_only_loadable_scenarios);
  suite_add_tcase(s, writers);
  TCase *readers = tcase_create("io-readers");
  tcase_set_timeout(readers, 30);
  tcase_add_test(readers, test_plan_model_reader_bounded);
  suite_add_tcase(s, readers);
  TCase *sampling = tcase_create("io-sampling");
  tcase_set_timeout(sampling, 120);
  tcase_add_test(sampling, test_sample_period_refused_before_run);
  tcase_add_test(sampling, test_sample_memory_stops_run);
  suite_add_tcase(s, sampling);
  TCase *files = tcase_create("io-files");
  tcase_set_timeout(files, 60);
  tcase_add_test(files, test_file_size_limit_reported);
  tcase_add_test(files, test_abandoned_staging_removed);
  suite_add_tcase(s, files);
  return s;
}
