/* Long solves on the command line: Ctrl-C and progress.
 *
 * Between begin and end, the first Ctrl-C (SIGINT) only raises a flag; the
 * solver's progress callback returns it, so the solve running then (or the
 * next one to start) stops at its next Newton iteration with
 * PN_ERR_INTERRUPTED and the command exits 130 after saying so, its output
 * files left unwritten. A second Ctrl-C ends the program at once. When stderr is a terminal, a line
 * of progress (alternations, Newton iterations, seconds) is kept up to date there once a second
 * after the first two seconds. */
#ifndef PARNASSUS_CLI_PROGRESS_H
#define PARNASSUS_CLI_PROGRESS_H

#include <signal.h>

#include "parnassus/solver.h"

typedef struct pn_cli_progress {
    const char *command;
    double start, shown; /* pn_timer_now() at begin and at the last line */
    int on_terminal;
    int line_open; /* a progress line is on the terminal */
    struct sigaction previous;
} pn_cli_progress;

/* Installs the SIGINT handler and points s->progress at p. */
void pn_cli_progress_begin(pn_cli_progress *p, const char *command, pn_settings *s);

/* Clears the progress line and restores the previous SIGINT handler. */
void pn_cli_progress_end(pn_cli_progress *p);

#endif
