/* Inside the terminal interface of parnassus-live: the state of an open
 * interface, and what the keys (live_tui_keys.c) and the drawing
 * (live_tui_draw.c) share. Internal to the live app. */
#ifndef PARNASSUS_LIVE_TUI_INTERNAL_H
#define PARNASSUS_LIVE_TUI_INTERNAL_H

#include <curses.h>

#include "live_tui.h"

#if defined(__GNUC__)
#define PNL_PRINTF(fmt, args) __attribute__((format(printf, fmt, args)))
#else
#define PNL_PRINTF(fmt, args)
#endif

struct pnl_tui {
    SCREEN *screen;
    pnl_tui_state state;
    char *saved_ctype; /* the character locale before open, given back at close */
    int utf8;          /* the locale can draw arrows and ellipses */
};

static inline int pnl_tui_clamp(int x, int lo, int hi)
{
    return x < lo ? lo : x > hi ? hi : x;
}

static inline int pnl_tui_knob_count(const pnl_tui_view *v)
{
    return pnl_tui_clamp(v->num_knobs, 0, PNL_TUI_MAX_KNOBS);
}

/* The learn menu: the knobs' symbols, then the actions. */
int pnl_tui_learn_item_count(const pnl_tui_view *v);
const char *pnl_tui_learn_item_name(const pnl_tui_view *v, int item);

/* Keeps the selections within the view, which may have lost knobs since
 * the last key. */
void pnl_tui_keep_in_range(pnl_tui_state *s, const pnl_tui_view *v);

#endif
