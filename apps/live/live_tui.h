/* The terminal interface of parnassus-live (ncurses): tempo and transport,
 * the two style knobs and the others with their values, the rules kept
 * right now, the sounding sonority as note names, late steps, audio load,
 * MIDI devices and bindings; keys move the knobs, start and stop, panic,
 * capture, learn and quit (docs/live.md).
 *
 * The app owns the loop: every few milliseconds it fills a view, lets the
 * interface read the keys (pnl_tui_poll, never waits) and turns each key
 * into one of the app's stdin commands ("set log2_lambda_w -3.5", "play",
 * "learn alpha", "quit", ...), which it runs as if typed; it redraws about
 * ten times a second. Everything here runs on the app's main thread. While
 * the interface is open it owns stdin and stdout: what the app has to say
 * goes in the view's message, not on stdout or stderr.
 *
 * Keys:
 *   space        "stop" when the transport rolls, else "play"
 *   Up/Down j/k  select a knob (no command)
 *   Left/Right < >  the selected knob down/up by its step, kept in
 *                min..max: "set SYMBOL VALUE" (the value as %g)
 *   s S          Style (knobs[0]) down/up by its step
 *   a A          Selection (knobs[1]) down/up by its step
 *   - + =        "tempo BPM", one bpm down/up from status.bpm, in 20..400
 *   p            "panic"
 *   c            "capture parnassus-capture.mid"
 *   L m          opens the learn menu: the knobs' symbols, then the
 *                actions panic, play_stop, capture; in it Up/Down (j/k)
 *                choose, Enter makes "learn TARGET" and closes it, Escape
 *                closes it; the other keys keep their meaning
 *   q            "quit"
 * Any other key makes no command.
 *
 * The screen, from the top: the transport (playing or stopped, bpm,
 * bar:beat at four beats a bar); the sonority as note names (soprano
 * first, '-' for a silent voice) with the solve time and late steps; the
 * rules kept; audio load, notes played and dropped MIDI; the knobs with a
 * value bar, the selected one highlighted (in two columns when they do not
 * fit in one on a wide enough window); the MIDI inputs and outputs and the
 * audio device; the bindings and whether one is being learned; the
 * message; the key help. Every line is cut to the window (an ellipsis
 * shows a cut); a short window drops the bindings, then the devices, then
 * knobs, keeping the selected one in sight. */
#ifndef PARNASSUS_LIVE_TUI_H
#define PARNASSUS_LIVE_TUI_H

#include <stddef.h>

#include "live_bindings.h"
#include "live_engine.h"
#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { PNL_TUI_MAX_KNOBS = 32 };

typedef struct pnl_tui_knob {
    const char *symbol;          /* the plugin port symbol, e.g. "log2_lambda_w" */
    const char *label;           /* e.g. "Style (log2 λw)" */
    float value, min, max, step; /* step: what one key press moves it by */
} pnl_tui_knob;

/* What the interface shows; filled by the app before each poll and draw. */
typedef struct pnl_tui_view {
    pnl_status status; /* transport, sonority, rules kept, late steps, load */
    pnl_tui_knob knobs[PNL_TUI_MAX_KNOBS];
    int num_knobs;            /* knobs[0] is Style, knobs[1] Selection */
    const char *rules_kept;   /* names of the rules kept now, comma-separated, or "" */
    const char *midi_inputs;  /* the open MIDI inputs, or "none" */
    const char *midi_outputs; /* the open MIDI outputs, or "none" */
    const char *audio;        /* the audio device, rate and buffer */
    const pnl_bindings *bindings;
    const char *message; /* the last line the app has to say, or "" */
} pnl_tui_view;

typedef struct pnl_tui pnl_tui;

/* Takes over the terminal. Fails (PN_ERR_INVALID, with a message naming
 * --headless) when stdin or stdout is not a terminal or when $TERM names
 * a terminal curses does not know; it never exits the process. Sets the
 * character locale (LC_CTYPE, only: numbers keep their '.') from the
 * environment, so UTF-8 labels draw. */
pn_error pnl_tui_open(pnl_tui **out, pn_error_info *info);
/* Gives the terminal (and the character locale) back as they were; NULL
 * is fine. */
void pnl_tui_close(pnl_tui *t);

/* Reads pending keys without waiting. Returns 1 and writes one command
 * (as typed on stdin, no newline) into cmd when a key asks for one, 0
 * otherwise (no key, or a key that only moves the selection on screen).
 * One command a call: the keys typed after it are read by the next call.
 * A command longer than cap - 1 bytes is dropped, not cut (0, cmd
 * empty): 128 bytes hold every command for symbols of up to 100 bytes. */
int pnl_tui_poll(pnl_tui *t, const pnl_tui_view *v, char *cmd, size_t cap);

/* Draws the view (NULL t or v: nothing). */
void pnl_tui_draw(pnl_tui *t, const pnl_tui_view *v);

/* The command a key makes in the interface's current state (selected
 * knob, learn menu open or not), as pnl_tui_poll does, without a
 * terminal: for tests. `state` is NULL for the initial state; keys are
 * curses' codes (KEY_UP, ...) or characters. Returns 1 when a command was
 * written; otherwise cmd is left empty (when cap > 0), a command that
 * does not fit included. */
typedef struct pnl_tui_state {
    int selected;   /* the knob the arrow keys move */
    int learn_menu; /* choosing what to learn */
    int learn_item; /* knobs first, then the actions */
} pnl_tui_state;
int pnl_tui_key(pnl_tui_state *state, int key, const pnl_tui_view *v, char *cmd, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
