#include "progress.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "timer.h"

static volatile sig_atomic_t interrupt_requested;

static void on_sigint(int sig)
{
    (void)sig;
    interrupt_requested = 1; /* SA_RESETHAND: the next Ctrl-C is the default one */
}

/* Ends the progress line, so that what follows starts a line of its own. */
static void close_line(pn_cli_progress *p)
{
    if (p->line_open)
        fputs("\r\033[K", stderr);
    p->line_open = 0;
}

static int report(void *user, const pn_progress *progress)
{
    pn_cli_progress *p = user;
    if (p->on_terminal) {
        const double now = pn_timer_now();
        if (now - p->start >= 2.0 && now - p->shown >= 1.0) {
            fprintf(stderr,
                    "\rparnassus %s: solving: %d starts, %d alternations, %d Newton "
                    "iterations, %.0f s (Ctrl-C stops)  ",
                    p->command, progress->starts, progress->alternations,
                    progress->newton_iterations, now - p->start);
            fflush(stderr);
            p->shown = now;
            p->line_open = 1;
        }
    }
    return interrupt_requested != 0;
}

void pn_cli_progress_begin(pn_cli_progress *p, const char *command, pn_settings *s)
{
    memset(p, 0, sizeof *p);
    p->command = command;
    p->start = p->shown = pn_timer_now();
    p->on_terminal = isatty(STDERR_FILENO);
    interrupt_requested = 0;
    s->progress = report;
    s->progress_user = p;
    /* a program started with Ctrl-C ignored (in the background of a
     * script) keeps ignoring it */
    if (sigaction(SIGINT, NULL, &p->previous) != 0 || p->previous.sa_handler == SIG_IGN)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESETHAND | SA_RESTART; /* reads and writes go on */
    sigemptyset(&sa.sa_mask);
    p->installed = sigaction(SIGINT, &sa, NULL) == 0;
}

int pn_cli_progress_end(pn_cli_progress *p)
{
    close_line(p);
    if (p->installed) {
        sigaction(SIGINT, &p->previous, NULL);
        p->installed = 0;
    }
    return interrupt_requested != 0;
}

int pn_cli_interrupted(const char *command)
{
    fprintf(stderr, "parnassus %s: interrupted\n", command);
    return PN_EXIT_INTERRUPTED;
}
