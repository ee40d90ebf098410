/* MIDI learn for parnassus-live: bindings from a controller's messages
 * (a control change, a note, pitch bend, program change) to what they
 * move (a plugin knob by its port symbol, or an app action), kept in a
 * JSON file ("parnassus-live-map/1", docs/live-map.md).
 *
 * The table is plain data with a fixed capacity: matching a message and
 * learning allocate nothing and may run on any one thread (a real-time one
 * included); loading and saving read and write files and belong to the
 * main thread. The table itself has no lock: one thread at a time. */
#ifndef PARNASSUS_LIVE_BINDINGS_H
#define PARNASSUS_LIVE_BINDINGS_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PNL_BINDINGS_MAX = 128,
    PNL_TARGET_MAX = 32, /* longest target name, terminator included */
};

typedef enum pnl_source_kind {
    PNL_SOURCE_CC = 1,         /* control change `number` 0..119 */
    PNL_SOURCE_NOTE = 2,       /* note `number` 0..127: note-on triggers (value = velocity) */
    PNL_SOURCE_PITCH_BEND = 3, /* the 14-bit bend (number unused, 0) */
    PNL_SOURCE_PROGRAM = 4,    /* program change; binds every program number (number unused) */
} pnl_source_kind;

typedef struct pnl_binding {
    pnl_source_kind kind;
    int channel; /* 0..15 (the file counts 1..16), or -1: any channel */
    int number;  /* CC or note number; 0 for pitch bend and program */
    /* What it moves: a plugin port symbol ("log2_lambda_w", "alpha",
     * "division", ...) or an action: "panic", "preset_next",
     * "preset_previous", "play_stop", "capture", "preset" (program change
     * selects the preset of that number). A target is a name of ASCII
     * letters, digits and '_', not starting with a digit, 1..31 bytes. */
    char target[PNL_TARGET_MAX];
} pnl_binding;

typedef struct pnl_bindings {
    int count;
    pnl_binding binding[PNL_BINDINGS_MAX];
    /* learn mode: the next bindable message binds to learn_target */
    int learning;
    char learn_target[PNL_TARGET_MAX];
} pnl_bindings;

/* What a message does, when a binding matches it. */
typedef struct pnl_binding_hit {
    const char *target; /* points into the table */
    /* The control's position in [0, 1]: CC value / 127, note-on velocity /
     * 127 (a note-off gives no hit), bend / 16383; for a program change
     * the program number 0..127 itself. */
    double value;
    int is_program;
} pnl_binding_hit;

void pnl_bindings_init(pnl_bindings *b); /* empty, not learning */

/* Adds or replaces (same kind, channel and number) a binding; a new one
 * goes last. channel: 0..15 or -1 (any); number: 0..119 for a CC (120..127
 * are channel mode messages), 0..127 for a note, ignored (stored as 0) for
 * pitch bend and program change. Returns 0, or -1 when the table is full
 * or an argument is out of range (the table is then unchanged). */
int pnl_bindings_set(pnl_bindings *b, pnl_source_kind kind, int channel, int number,
                     const char *target);

/* Removes every binding to target, keeping the others in order; returns
 * how many. */
int pnl_bindings_remove_target(pnl_bindings *b, const char *target);

/* Enters learn mode for target (a valid target name, see pnl_binding);
 * the next bindable message binds to it. Returns 0, or -1 for a bad
 * target (learn mode is then unchanged). Learning a target keeps its
 * other bindings: call pnl_bindings_remove_target first to move one. */
int pnl_bindings_learn(pnl_bindings *b, const char *target);
void pnl_bindings_cancel_learn(pnl_bindings *b);

/* Handles one MIDI message (1..3 bytes). In learn mode a control change,
 * a note-on (velocity > 0), a pitch bend or a program change becomes a
 * binding for the learn target on the message's channel, learn mode ends
 * and 1 is returned (with *learned, when not NULL, set to the new
 * binding's index, and *hit, when not NULL, holding no match: target
 * NULL); other messages are ignored in learn mode. A learned message
 * replaces the binding of the same source (kind, channel, number); when
 * it is new and the table is full, learn mode ends, nothing is bound and
 * 0 is returned. Otherwise, returns 1 and fills *hit when a binding
 * matches, 0 when none does (*hit untouched); a binding on the message's
 * channel wins over an "any channel" one. *learned, when not NULL, is -1
 * whenever nothing was learned. Note-offs, note-ons of velocity 0, CCs
 * 120..127, system messages, messages shorter than their kind needs and
 * data bytes >= 0x80 never match and are never learned. */
int pnl_bindings_handle(pnl_bindings *b, const uint8_t *msg, int size, pnl_binding_hit *hit,
                        int *learned);

/* Reads a map file, replacing the table's bindings (learn mode is kept).
 * Errors name the file and the JSON path of the bad entry (e.g.
 * "map.json: bindings[2].channel: must be 1..16 or \"any\", got 0"):
 * PN_ERR_IO when it cannot be read, PN_ERR_PARSE when it is not a valid
 * map; the table is left unchanged on error. */
pn_error pnl_bindings_load(pnl_bindings *b, const char *path, pn_error_info *info);

/* The same from len bytes of text; name stands for the file in messages. */
pn_error pnl_bindings_parse(pnl_bindings *b, const char *name, const char *text, size_t len,
                            pn_error_info *info);

/* Writes the table to path (creating its directory and the missing ones
 * above it, mode 0700), atomically (a temporary file in the same
 * directory, renamed over it). A new file gets mode 0600, a replaced one
 * keeps its mode. Errors (PN_ERR_IO) name the file; PN_ERR_INVALID when
 * the table holds a binding pnl_bindings_set would refuse or two of one
 * source. */
pn_error pnl_bindings_save(const pnl_bindings *b, const char *path, pn_error_info *info);

/* The default map file: $XDG_CONFIG_HOME/parnassus/live-map.json, else
 * $HOME/.config/parnassus/live-map.json (XDG_CONFIG_HOME counts only when
 * it is an absolute path). Returns the path's length, or 0 and writes
 * nothing when neither variable is usable or the buffer is too small. */
int pnl_bindings_default_path(char *out, size_t cap);

#ifdef __cplusplus
}
#endif

#endif
