/* Interrupting a long run cleanly: wh_interrupt_install catches SIGINT (Ctrl-C) and
 * SIGTERM once, and only sets a flag that a simulator polls on its cold path (every
 * 2^20 events, WhSim.interrupt); the run then stops between two events and its outputs
 * are written as after a wall-clock limit, marked "interrupted". A second signal ends
 * the process at once (the default action). wh_interrupt_reraise, called once the
 * outputs are written, ends the process by the signal it caught, so a shell or make
 * sees an interrupted command (status 130 for SIGINT, 143 for SIGTERM). No cost while
 * no signal comes. */
#ifndef WH_INTERRUPT_H
#define WH_INTERRUPT_H

#include <glib.h>
#include <signal.h>

/* Installs the handler; returns the flag (transfer none; static storage). */
const volatile sig_atomic_t *wh_interrupt_install(void);

/* The signal caught so far, or 0. */
int wh_interrupt_caught(void);

/* Restores the default actions; if a signal was caught, raises it again (the process
 * ends). */
void wh_interrupt_reraise(void);

#endif
