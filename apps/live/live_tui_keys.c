/* The keys of the terminal interface (pnl_tui_key): each key becomes one
 * of the app's stdin commands, or moves a selection; no terminal needed. */
#include "live_tui_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

enum {
    ESCAPE = 27,
    TEMPO_MIN = 20,
    TEMPO_MAX = 400,
};

/* What the learn menu offers after the knobs. */
static const char *const learn_actions[] = {"panic", "play_stop", "capture", "preset_next",
                                            "preset_previous"};
enum { NUM_LEARN_ACTIONS = sizeof learn_actions / sizeof learn_actions[0] };

static const char capture_file[] = "parnassus-capture.mid";

int pnl_tui_learn_item_count(const pnl_tui_view *v)
{
    return pnl_tui_knob_count(v) + NUM_LEARN_ACTIONS;
}

const char *pnl_tui_learn_item_name(const pnl_tui_view *v, int item)
{
    const int knobs = pnl_tui_knob_count(v);
    if (item < knobs)
        return v->knobs[item].symbol ? v->knobs[item].symbol : "";
    return learn_actions[item - knobs];
}

/* Writes the command when it fits whole, else leaves cmd empty and returns
 * 0: a cut command could set another value or name another file. */
static int PNL_PRINTF(3, 4) put_command(char *cmd, size_t cap, const char *fmt, ...)
{
    if (!cmd || cap == 0)
        return 0;
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(cmd, cap, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap) {
        cmd[0] = '\0';
        return 0;
    }
    return 1;
}

void pnl_tui_keep_in_range(pnl_tui_state *s, const pnl_tui_view *v)
{
    s->selected =
        pnl_tui_clamp(s->selected, 0, pnl_tui_knob_count(v) > 0 ? pnl_tui_knob_count(v) - 1 : 0);
    s->learn_item = pnl_tui_clamp(s->learn_item, 0, pnl_tui_learn_item_count(v) - 1);
}

static int move_knob(const pnl_tui_view *v, int index, int direction, char *cmd, size_t cap)
{
    if (index < 0 || index >= pnl_tui_knob_count(v))
        return 0;
    const pnl_tui_knob *k = &v->knobs[index];
    if (!k->symbol || !*k->symbol)
        return 0;
    const double step = k->step > 0 ? (double)k->step : ((double)k->max - k->min) / 100;
    const double value = fmin(fmax((double)k->value + direction * step, k->min), k->max);
    return put_command(cmd, cap, "set %s %g", k->symbol, value);
}

static int change_tempo(const pnl_tui_view *v, int delta, char *cmd, size_t cap)
{
    const double bpm = fmin(fmax(v->status.bpm + delta, TEMPO_MIN), TEMPO_MAX);
    return put_command(cmd, cap, "tempo %g", bpm);
}

enum { NOT_A_MENU_KEY = -1 };

/* The learn menu takes only the keys that choose; the others act as usual,
 * so the music stays playable while choosing. */
static int learn_menu_key(pnl_tui_state *s, int key, const pnl_tui_view *v, char *cmd, size_t cap)
{
    const int last = pnl_tui_learn_item_count(v) - 1;
    switch (key) {
    case KEY_UP:
    case 'k':
        s->learn_item = pnl_tui_clamp(s->learn_item - 1, 0, last);
        return 0;
    case KEY_DOWN:
    case 'j':
        s->learn_item = pnl_tui_clamp(s->learn_item + 1, 0, last);
        return 0;
    case '\n':
    case '\r':
    case KEY_ENTER: {
        s->learn_menu = 0;
        const char *target = pnl_tui_learn_item_name(v, s->learn_item);
        return *target ? put_command(cmd, cap, "learn %s", target) : 0;
    }
    case ESCAPE:
        s->learn_menu = 0;
        return 0;
    default:
        return NOT_A_MENU_KEY;
    }
}

static int main_key(pnl_tui_state *s, int key, const pnl_tui_view *v, char *cmd, size_t cap)
{
    const int last_knob = pnl_tui_knob_count(v) > 0 ? pnl_tui_knob_count(v) - 1 : 0;
    switch (key) {
    case ' ':
        return put_command(cmd, cap, "%s", v->status.rolling ? "stop" : "play");
    case KEY_UP:
    case 'k':
        s->selected = pnl_tui_clamp(s->selected - 1, 0, last_knob);
        return 0;
    case KEY_DOWN:
    case 'j':
        s->selected = pnl_tui_clamp(s->selected + 1, 0, last_knob);
        return 0;
    case KEY_LEFT:
    case '<':
        return move_knob(v, s->selected, -1, cmd, cap);
    case KEY_RIGHT:
    case '>':
        return move_knob(v, s->selected, +1, cmd, cap);
    case 's':
    case 'S':
        return move_knob(v, 0, key == 'S' ? +1 : -1, cmd, cap);
    case 'a':
    case 'A':
        return move_knob(v, 1, key == 'A' ? +1 : -1, cmd, cap);
    case '-':
        return change_tempo(v, -1, cmd, cap);
    case '+':
    case '=':
        return change_tempo(v, +1, cmd, cap);
    case 'p':
        return put_command(cmd, cap, "panic");
    case 'c':
        return put_command(cmd, cap, "capture %s", capture_file);
    case 'L':
    case 'm':
        s->learn_menu = 1;
        s->learn_item = 0;
        return 0;
    case ']':
        return put_command(cmd, cap, "next");
    case '[':
        return put_command(cmd, cap, "previous");
    case 'q':
        return put_command(cmd, cap, "quit");
    default:
        return 0;
    }
}

int pnl_tui_key(pnl_tui_state *state, int key, const pnl_tui_view *v, char *cmd, size_t cap)
{
    pnl_tui_state initial = {0, 0, 0};
    pnl_tui_state *s = state ? state : &initial;
    if (cmd && cap > 0)
        cmd[0] = '\0';
    if (!v)
        return 0;
    pnl_tui_keep_in_range(s, v);
    if (s->learn_menu) {
        const int made = learn_menu_key(s, key, v, cmd, cap);
        if (made != NOT_A_MENU_KEY)
            return made;
    }
    return main_key(s, key, v, cmd, cap);
}
