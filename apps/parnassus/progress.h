/* Long solves on the command line: Ctrl-C and progress.
 *
 * Between begin and end, the first Ctrl-C (SIGINT) only raises a flag; the
 * solver's progress callback returns it, so the solve running then (or the
 * next one to start) stops at its next Newton iteration with
 * PN_ERR_INTERRUPTED and the command exits 130 after saying so, its output
 * files left unwritten; main() then ends the program by SIGINT itself, so
 * that a calling shell script stops too. A second Ctrl-C ends the program
 * at once. When stderr is a terminal, a line of progress (alternations,
 * Newton iterations, seconds) is kept up to date there once a second after
 * the first two seconds. */
#ifndef PARNASSUS_CLI_PROGRESS_H
#define PARNASSUS_CLI_PROGRESS_H

#include <signal.h>

#include "options.h"
#include "parnassus/solver.h"

typedef struct pn_cli_progress {
    const char *command;
    double start, shown; /* pn_timer_now() at begin and at the last line */
    int on_terminal;
    int line_open; /* a progress line is on the terminal */
    int installed; /* the handler is ours (not when SIGINT was ignored) */
    struct sigaction previous;
} pn_cli_progress;

/* Installs the SIGINT handler and points s->progress at p. */
void pn_cli_progress_begin(pn_cli_progress *p, const char *command, pn_settings *s);

/* Clears the progress line and restores the previous SIGINT handler (the
 * work after it, writing the results, is not interrupted half-way).
 * Returns 1 when a Ctrl-C came since begin: the caller then writes nothing
 * and returns pn_cli_interrupted(). Can be called again. */
int pn_cli_progress_end(pn_cli_progress *p);

/* Says "parnassus COMMAND: interrupted"; returns PN_EXIT_INTERRUPTED. */
int pn_cli_interrupted(const char *command);

#endif
