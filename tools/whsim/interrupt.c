/* Interrupting a long run cleanly; see interrupt.h. */
#include "interrupt.h"

#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t caught;

static void on_signal(int sig)
{
  caught = sig;
}

const volatile sig_atomic_t *wh_interrupt_install(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sa.sa_flags = SA_RESETHAND; /* a second signal takes the default action */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  return &caught;
}

int wh_interrupt_caught(void)
{
  return caught;
}

void wh_interrupt_reraise(void)
{
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  if (caught) {
    fflush(NULL); /* the report, when stdout is a pipe or a file */
    raise(caught);
  }
}
