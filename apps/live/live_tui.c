/* The terminal interface of parnassus-live (live_tui.h): taking over the
 * terminal with ncursesw, polling its keys, giving it back. The keys
 * become the app's stdin commands in live_tui_keys.c (no terminal
 * needed); the view is drawn in live_tui_draw.c. */
#include "live_tui_internal.h"

#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <term.h> /* setupterm: after curses.h, and it names a macro "columns" */
#include <unistd.h>

enum {
    ESCAPE_DELAY_MS = 25, /* how long a lone Escape waits for the rest of a key sequence */
};

/* ------------------------------------------------------------------------ */
/* Opening and closing the terminal */

/* Whether curses has a description of $TERM. Looking it up alone leaves
 * nothing behind, where a newterm that fails keeps some memory. */
static int terminal_is_known(void)
{
    int status = 0;
    if (setupterm(NULL, STDOUT_FILENO, &status) != OK)
        return 0;
    del_curterm(cur_term);
    return 1;
}

pn_error pnl_tui_open(pnl_tui **out, pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "the terminal interface: no place for it");
    *out = NULL;
    if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO))
        return pn_fail(info, PN_ERR_INVALID,
                       "the terminal interface needs a terminal; run with --headless");
    pnl_tui *t = calloc(1, sizeof *t);
    const char *ctype = setlocale(LC_CTYPE, NULL);
    if (!t || !(t->saved_ctype = strdup(ctype ? ctype : "C"))) {
        free(t);
        return pn_fail(info, PN_ERR_NOMEM, "the terminal interface: out of memory");
    }
    /* Only the character set: numbers keep their '.' for the commands and
     * for every file the app and the plugin read. */
    setlocale(LC_CTYPE, "");
    t->utf8 = MB_CUR_MAX > 1;
    /* newterm, unlike initscr, returns instead of exiting on a bad TERM */
    t->screen = terminal_is_known() ? newterm(NULL, stdout, stdin) : NULL;
    if (!t->screen) {
        const char *term = getenv("TERM");
        setlocale(LC_CTYPE, t->saved_ctype);
        free(t->saved_ctype);
        free(t);
        return pn_fail(info, PN_ERR_INVALID,
                       "the terminal interface cannot drive the terminal \"%s\" (TERM); run "
                       "with --headless",
                       term ? term : "");
    }
    set_term(t->screen);
    cbreak();
    noecho();
    keypad(stdscr, TRUE);
    nodelay(stdscr, TRUE);
    curs_set(0);
    set_escdelay(ESCAPE_DELAY_MS);
    *out = t;
    return PN_OK;
}

void pnl_tui_close(pnl_tui *t)
{
    if (!t)
        return;
    set_term(t->screen);
    endwin();
    delscreen(t->screen);
    setlocale(LC_CTYPE, t->saved_ctype);
    free(t->saved_ctype);
    free(t);
}

int pnl_tui_poll(pnl_tui *t, const pnl_tui_view *v, char *cmd, size_t cap)
{
    if (cmd && cap > 0)
        cmd[0] = '\0';
    if (!t || !v)
        return 0;
    set_term(t->screen);
    /* One command a poll: the keys after it wait in curses' queue. */
    for (int key = getch(); key != ERR; key = getch())
        if (pnl_tui_key(&t->state, key, v, cmd, cap))
            return 1;
    return 0;
}
