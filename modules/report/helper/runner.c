/* Child processes run side by side; see runner.h. */
#include "runner.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

G_DEFINE_QUARK(wh - runner - error - quark, wh_runner_error)

typedef struct {
  WhRunnerJob *job;
  GPid pid;
  int err_fd; /* -1 once at end of file */
  GString *log;
} Child;

void wh_runner_job_clear(WhRunnerJob *job)
{
  g_clear_pointer(&job->log, g_free);
}

char *wh_runner_job_status_text(const WhRunnerJob *job)
{
  if (job->term_signal)
    return g_strdup_printf("killed by signal %d", job->term_signal);
  return g_strdup_printf("exit status %d", job->exit_status);
}

/* Appends what the child wrote to its standard error, keeping the last
 * WH_RUNNER_LOG_TAIL bytes; closes the pipe at end of file. */
static void child_drain(Child *c)
{
  char buf[4096];
  ssize_t n = read(c->err_fd, buf, sizeof buf);
  if (n < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (n <= 0) {
    close(c->err_fd);
    c->err_fd = -1;
    return;
  }
  g_string_append_len(c->log, buf, n);
  if (c->log->len > WH_RUNNER_LOG_TAIL)
    g_string_erase(c->log, 0, (gssize)(c->log->len - WH_RUNNER_LOG_TAIL));
}

/* Records the wait status of a child that has ended. */
static void child_finish(Child *c, int wstatus)
{
  while (c->err_fd >= 0)
    child_drain(c);
  WhRunnerJob *j = c->job;
  j->done = TRUE;
  j->exit_status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
  j->term_signal = WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0;
  g_free(j->log);
  j->log = g_string_free(c->log, FALSE);
  c->log = NULL;
  g_spawn_close_pid(c->pid);
}

/* Whether the child has ended (then finished); blocks when `wait`. */
static gboolean child_reap(Child *c, gboolean wait)
{
  int wstatus;
  pid_t r;
  do
    r = waitpid(c->pid, &wstatus, wait ? 0 : WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r != c->pid)
    return FALSE;
  child_finish(c, wstatus);
  return TRUE;
}

static gboolean child_start(Child *c, WhRunnerJob *job, GError **error)
{
  g_autoptr(GError) err = NULL;
  memset(c, 0, sizeof *c);
  c->job = job;
  job->done = FALSE;
  if (!g_spawn_async_with_pipes(NULL, job->argv, NULL,
                                G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_SEARCH_PATH |
                                    G_SPAWN_STDOUT_TO_DEV_NULL,
                                NULL, NULL, &c->pid, NULL, NULL, &c->err_fd, &err)) {
    g_set_error(error, WH_RUNNER_ERROR, WH_RUNNER_ERROR_SPAWN, "%s: %s", job->argv[0],
                err->message);
    return FALSE;
  }
  c->log = g_string_new(NULL);
  return TRUE;
}

gboolean wh_runner_run(WhRunnerJob *jobs, guint n, guint parallel,
                       const volatile sig_atomic_t *interrupt, guint *peak, GError **error)
{
  g_return_val_if_fail(parallel >= 1, FALSE);
  g_autofree Child *alive = g_new0(Child, MIN(parallel, MAX(n, 1)));
  g_autofree struct pollfd *fds = g_new0(struct pollfd, MIN(parallel, MAX(n, 1)));
  guint running = 0, next = 0, most = 0;
  GError *stop = NULL;
  for (guint i = 0; i < n; i++)
    jobs[i].done = FALSE;
  while (next < n || running > 0) {
    if (stop == NULL && interrupt && *interrupt)
      g_set_error_literal(&stop, WH_RUNNER_ERROR, WH_RUNNER_ERROR_INTERRUPTED, "interrupted");
    while (stop == NULL && next < n && running < parallel) {
      if (!child_start(&alive[running], &jobs[next], &stop))
        break;
      running++;
      next++;
    }
    most = MAX(most, running);
    if (stop) {
      for (guint i = 0; i < running; i++)
        kill(alive[i].pid, SIGTERM);
      for (guint i = 0; i < running; i++)
        child_reap(&alive[i], TRUE);
      running = 0;
      break;
    }
    guint nfds = 0;
    for (guint i = 0; i < running; i++)
      if (alive[i].err_fd >= 0)
        fds[nfds++] = (struct pollfd){.fd = alive[i].err_fd, .events = POLLIN};
    poll(fds, nfds, 50);
    for (guint i = 0; i < running; i++)
      for (guint k = 0; k < nfds; k++)
        if (fds[k].fd == alive[i].err_fd && fds[k].revents)
          child_drain(&alive[i]);
    for (guint i = 0; i < running;) {
      if (child_reap(&alive[i], FALSE))
        alive[i] = alive[--running];
      else
        i++;
    }
  }
  if (peak)
    *peak = most;
  if (stop) {
    g_propagate_error(error, stop);
    return FALSE;
  }
  return TRUE;
}
