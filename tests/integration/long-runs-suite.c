/* The long-runs suite: the status line of `whsim run` and `whsim compare`, and a clean
 * stop on SIGINT. The whsim binary runs under a pseudo-terminal (Ctrl-C typed into it)
 * or on pipes (the signal sent with kill); a run long enough to be interrupted is the
 * hand-written training step of scenarios/workload-dp-pp.xml repeated 1000 times, and
 * it is stopped as soon as its first status line appears. Nothing here measures wall
 * time: the deadlines only keep a broken binary from hanging the suite. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "progress.h"
#include "test-util.h"

#define DEADLINE_US (120 * G_USEC_PER_SEC)

/* ---- the status line's text ---- */

START_TEST(test_progress_format)
{
  WhRunProgress s = {.wall_s = 10,
                     .now = 12500 * WH_US,
                     .events = 30000000,
                     .done = 3,
                     .total = 12,
                     .unit = "ops",
                     .fraction = 0.25};
  g_autofree char *line = wh_progress_format(&s, "exact");
  ck_assert_str_eq(line, "exact: sim time 12.500 ms, 3 of 12 ops, 3.00 M events/s, 10s elapsed, "
                         "25.0% done, about 30s left");
  s.fraction = -1;
  s.total = 0;
  s.now = 2500 * WH_MS;
  s.wall_s = 3725;
  g_autofree char *plain = wh_progress_format(&s, NULL);
  ck_assert_str_eq(plain, "sim time 2.500 s, 0.01 M events/s, 1h02m elapsed");
  WhProgressMode m;
  ck_assert(wh_progress_mode_parse("never", &m) && m == WH_PROGRESS_NEVER);
  ck_assert(wh_progress_mode_parse("always", &m) && m == WH_PROGRESS_ALWAYS);
  ck_assert(!wh_progress_mode_parse("sometimes", &m));
}
END_TEST

/* ---- running whsim under a pseudo-terminal ---- */

typedef struct {
  pid_t pid;
  int master; /* the terminal's master side; -1 once closed */
  GString *out;
} Pty;

/* Starts whsim with `args` (NULL-terminated, without the program name) as the leader
 * of a new process group (setsid) whose controlling terminal is a fresh
 * pseudo-terminal. */
static Pty pty_spawn(const char *const *args)
{
  Pty p = {.out = g_string_new(NULL)};
  p.master = posix_openpt(O_RDWR | O_NOCTTY);
  ck_assert_int_ge(p.master, 0);
  ck_assert(grantpt(p.master) == 0 && unlockpt(p.master) == 0);
  g_autofree char *slave = g_strdup(ptsname(p.master));
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (gpointer)WH_WHSIM_PATH);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add(argv, (gpointer)*a);
  g_ptr_array_add(argv, NULL);
  p.pid = fork();
  ck_assert_int_ge(p.pid, 0);
  if (p.pid == 0) {
    setsid();
    int fd = open(slave, O_RDWR); /* becomes the controlling terminal */
    if (fd < 0)
      _exit(127);
    dup2(fd, 0);
    dup2(fd, 1);
    dup2(fd, 2);
    close(p.master);
    execv(WH_WHSIM_PATH, (char **)argv->pdata);
    _exit(127);
  }
  g_ptr_array_free(argv, TRUE);
  return p;
}

/* Reads what the terminal shows until `want` appears `times` times (want NULL: until
 * the child closes it). FALSE when it did not (the child ended, or the deadline). */
static gboolean pty_read_until(Pty *p, const char *want, int times)
{
  gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
  while (p->master >= 0 && g_get_monotonic_time() < deadline) {
    int seen = 0;
    for (const char *q = want ? strstr(p->out->str, want) : NULL; q; q = strstr(q + 1, want))
      seen++;
    if (want && seen >= times)
      return TRUE;
    struct pollfd pfd = {.fd = p->master, .events = POLLIN};
    if (poll(&pfd, 1, 200) <= 0)
      continue;
    char buf[4096];
    ssize_t n = read(p->master, buf, sizeof buf);
    if (n > 0) {
      g_string_append_len(p->out, buf, n);
    } else if (n == 0 || errno != EINTR) { /* EIO: every slave descriptor is closed */
      close(p->master);
      p->master = -1;
    }
  }
  return want == NULL && p->master < 0;
}

/* Waits for the child (killing it after the deadline); its wait status. */
static int pty_wait(Pty *p)
{
  pty_read_until(p, NULL, 0);
  if (p->master >= 0) {
    kill(p->pid, SIGKILL);
    close(p->master);
  }
  int status = 0;
  ck_assert_int_eq(waitpid(p->pid, &status, 0), p->pid);
  return status;
}

/* `text` with "\r\n" (a terminal's line ending) as "\n" and without the engine line,
 * whose wall-clock numbers differ from run to run. (transfer full) */
static char *report_without_wall(const char *text)
{
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  GString *s = g_string_new(NULL);
  for (char **l = lines; *l; l++) {
    size_t n = strlen(*l);
    if (n && (*l)[n - 1] == '\r')
      (*l)[n - 1] = '\0';
    if (!g_str_has_prefix(*l, "engine "))
      g_string_append_printf(s, "%s\n", *l);
  }
  return g_string_free(s, FALSE);
}

/* Asserts the outputs in `dir` are complete and marked interrupted: the summary
 * closes, says so and names the ops done; every line of flows.csv has its 8 fields
 * and ops.csv a line per op of the workload (15000: 15 ops x 1000 iterations); no
 * staging directory is left. */
static void assert_interrupted_outputs(const char *dir)
{
  g_autofree char *summary = wh_test_read_in(dir, "summary.json");
  ck_assert_msg(strstr(summary, "\"stopped_early\" : \"interrupted\""), "%s", summary);
  ck_assert_ptr_nonnull(strstr(summary, "\"ops_done\" : "));
  ck_assert(g_str_has_suffix(summary, "}\n"));
  g_autofree char *flows = wh_test_read_in(dir, "flows.csv");
  ck_assert(g_str_has_suffix(flows, "\n"));
  g_autoptr(GPtrArray) rows =
      wh_test_csv_rows(flows, "flow_id,src,dst,bytes,start_ps,finish_ps,fct_ps,key");
  ck_assert_uint_gt(rows->len, 1);
  for (guint i = 0; i < rows->len; i++)
    ck_assert_msg(g_strv_length(rows->pdata[i]) == 8, "flows.csv record %u", i + 2);
  g_autofree char *ops = wh_test_read_in(dir, "ops.csv");
  g_autoptr(GPtrArray) op_rows = wh_test_csv_rows(ops, "op_id,rank,kind,name,start_ps,end_ps,deps");
  ck_assert_uint_eq(op_rows->len, 15000);
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  ck_assert_ptr_nonnull(d);
  for (const char *name; (name = g_dir_read_name(d)) != NULL;)
    ck_assert_msg(name[0] != '.', "left behind in the output directory: %s", name);
}

/* A temporary directory, the output directory `out` inside it, and the scenario. */
typedef struct {
  char *tmp, *out, *scenario;
} LongRun;

static LongRun long_run_new(void)
{
  LongRun r = {g_dir_make_tmp("wh-long-runs-XXXXXX", NULL), NULL,
               wh_test_source_path("scenarios/workload-dp-pp.xml")};
  ck_assert_ptr_nonnull(r.tmp);
  r.out = g_build_filename(r.tmp, "out", NULL);
  return r;
}

/* Removes the temporary directory and frees. */
static void long_run_clear(LongRun *r)
{
  wh_test_remove_tree(r->tmp);
  g_free(r->tmp);
  g_free(r->out);
  g_free(r->scenario);
}

/* On a terminal the status line appears and is rewritten in place; Ctrl-C stops the
 * run at an event boundary, the report and the partial outputs are written, and the
 * process ends by SIGINT. */
START_TEST(test_pty_status_line_and_ctrl_c)
{
  LongRun r = long_run_new();
  const char *out = r.out, *scenario = r.scenario;
  const char *args[] = {"run", scenario, "--out", out, "--iterations", "1000", NULL};
  Pty p = pty_spawn(args);
  ck_assert_msg(pty_read_until(&p, " ops, ", 2), "no status line seen: %s", p.out->str);
  ck_assert_ptr_nonnull(strstr(p.out->str, "\rsim time "));
  ck_assert_ptr_nonnull(strstr(p.out->str, " of 15000 ops, "));
  ck_assert_ptr_nonnull(strstr(p.out->str, " M events/s, "));
  ck_assert_ptr_nonnull(strstr(p.out->str, "left\033[K"));
  ck_assert_int_eq(write(p.master, "\003", 1), 1); /* Ctrl-C */
  int status = pty_wait(&p);
  ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT, "status %d: %s", status,
                p.out->str);
  ck_assert_msg(strstr(p.out->str, "\r\033[Kscenario   workload-dp-pp"), "%s", p.out->str);
  ck_assert_ptr_nonnull(strstr(p.out->str, "stopped    interrupted after "));
  ck_assert_ptr_nonnull(strstr(p.out->str, "interrupted; the partial outputs are in "));
  assert_interrupted_outputs(out);
  g_string_free(p.out, TRUE);
  long_run_clear(&r);
}
END_TEST

/* --progress=never on a terminal, and the default when stdout and stderr are pipes:
 * no status line, and the same report as before the status line existed (nothing on
 * stderr, the report on stdout). */
START_TEST(test_never_and_pipes_unchanged)
{
  LongRun r = long_run_new();
  const char *out = r.out, *scenario = r.scenario;
  const char *never[] = {"run", scenario, "--out", out, "--progress=never", NULL};
  Pty p = pty_spawn(never);
  int status = pty_wait(&p);
  ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);
  ck_assert_ptr_null(strstr(p.out->str, "sim time "));
  ck_assert_ptr_null(strstr(p.out->str, "\033["));
  const char *piped[] = {"run", scenario, "--out", out, NULL};
  g_autofree char *sout = NULL, *serr = NULL;
  ck_assert_int_eq(wh_test_whsim(piped, &sout, &serr), 0);
  ck_assert_str_eq(serr, "");
  g_autofree char *a = report_without_wall(p.out->str);
  g_autofree char *b = report_without_wall(sout);
  ck_assert_str_eq(a, b);
  g_string_free(p.out, TRUE);
  long_run_clear(&r);
}
END_TEST

/* Spawns whsim on pipes; waits for `want` on its stderr, sends `sig`, and returns its
 * wait status with its stdout and stderr (transfer full). */
static int signal_when_seen(const char *const *args, const char *want, int sig, char **out,
                            char **err)
{
  GPtrArray *argv = g_ptr_array_new();
  g_ptr_array_add(argv, (gpointer)WH_WHSIM_PATH);
  for (const char *const *a = args; *a; a++)
    g_ptr_array_add(argv, (gpointer)*a);
  g_ptr_array_add(argv, NULL);
  GPid pid;
  int fds[2];
  g_autoptr(GError) error = NULL;
  ck_assert_msg(g_spawn_async_with_pipes(NULL, (char **)argv->pdata, NULL,
                                         G_SPAWN_DO_NOT_REAP_CHILD, NULL, NULL, &pid, NULL, &fds[0],
                                         &fds[1], &error),
                "%s", error ? error->message : "");
  g_ptr_array_free(argv, TRUE);
  GString *text[2] = {g_string_new(NULL), g_string_new(NULL)};
  gboolean sent = FALSE;
  gint64 deadline = g_get_monotonic_time() + DEADLINE_US;
  for (int open_fds = 2; open_fds > 0;) {
    if (g_get_monotonic_time() > deadline)
      kill(pid, SIGKILL);
    struct pollfd pfd[2] = {{.fd = fds[0], .events = POLLIN}, {.fd = fds[1], .events = POLLIN}};
    if (poll(pfd, 2, 200) <= 0)
      continue;
    for (int k = 0; k < 2; k++) {
      if (fds[k] < 0 || !(pfd[k].revents & (POLLIN | POLLHUP)))
        continue;
      char buf[4096];
      ssize_t n = read(fds[k], buf, sizeof buf);
      if (n > 0) {
        g_string_append_len(text[k], buf, n);
      } else {
        close(fds[k]);
        fds[k] = -1;
        open_fds--;
      }
    }
    if (!sent && strstr(text[1]->str, want)) {
      kill(pid, sig);
      sent = TRUE;
    }
  }
  int status = 0;
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  g_spawn_close_pid(pid);
  ck_assert_msg(sent, "never saw \"%s\" on stderr: %s", want, text[1]->str);
  *out = g_string_free(text[0], FALSE);
  *err = g_string_free(text[1], FALSE);
  return status;
}

/* Not on a terminal, --progress=always writes whole lines; SIGINT sent with kill stops
 * the run as Ctrl-C does. */
START_TEST(test_sigint_on_pipes)
{
  LongRun r = long_run_new();
  const char *out = r.out, *scenario = r.scenario;
  const char *args[] = {"run", scenario, "--out", out, "--iterations", "1000", "--progress=always",
                        NULL};
  g_autofree char *sout = NULL, *serr = NULL;
  int status = signal_when_seen(args, " ops, ", SIGINT, &sout, &serr);
  ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT, "status %d: %s", status, serr);
  ck_assert_msg(g_str_has_prefix(serr, "sim time "), "%s", serr);
  ck_assert_ptr_null(strchr(serr, '\r'));
  ck_assert_ptr_nonnull(strstr(sout, "stopped    interrupted after "));
  assert_interrupted_outputs(out);
  long_run_clear(&r);
}
END_TEST

/* `whsim compare` interrupted during its exact run: that run's outputs are marked
 * interrupted, the Wormhole run does not start its loop, and the comparison files are
 * written all the same. */
START_TEST(test_sigint_compare)
{
  LongRun r = long_run_new();
  const char *out = r.out, *scenario = r.scenario;
  const char *args[] = {"compare",           scenario, "--out", out, "--iterations", "1000",
                        "--progress=always", NULL};
  g_autofree char *sout = NULL, *serr = NULL;
  int status = signal_when_seen(args, "exact: sim time ", SIGINT, &sout, &serr);
  ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT, "status %d: %s", status, serr);
  g_autofree char *exact = g_build_filename(out, "exact", NULL);
  assert_interrupted_outputs(exact);
  g_autofree char *wormhole = g_build_filename(out, "wormhole", NULL);
  g_autofree char *ws = wh_test_read_in(wormhole, "summary.json");
  ck_assert_ptr_nonnull(strstr(ws, "\"events_executed\" : 0,"));
  ck_assert_ptr_nonnull(strstr(ws, "\"stopped_early\" : \"interrupted\""));
  g_autofree char *cj = wh_test_read_in(out, "compare.json");
  ck_assert_ptr_nonnull(strstr(cj, "\"stopped_early\" : \"interrupted\""));
  g_free(wh_test_read_in(out, "compare-flows.csv"));
  long_run_clear(&r);
}
END_TEST

Suite *wh_long_runs_suite(void)
{
  Suite *s = suite_create("long-runs");
  TCase *tc = tcase_create("progress-format");
  tcase_add_test(tc, test_progress_format);
  suite_add_tcase(s, tc);
  tc = tcase_create("interrupt");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, test_pty_status_line_and_ctrl_c);
  tcase_add_test(tc, test_never_and_pipes_unchanged);
  tcase_add_test(tc, test_sigint_on_pipes);
  tcase_add_test(tc, test_sigint_compare);
  suite_add_tcase(s, tc);
  return s;
}
