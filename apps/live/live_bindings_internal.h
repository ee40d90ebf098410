/* Inside the MIDI-learn bindings of parnassus-live: what the table
 * (live_bindings.c), the map file reader (live_bindings_read.c) and its
 * writer (live_bindings_write.c) share. Internal to the live app. */
#ifndef PARNASSUS_LIVE_BINDINGS_INTERNAL_H
#define PARNASSUS_LIVE_BINDINGS_INTERNAL_H

#include "live_bindings.h"

#define PNL_MAP_FORMAT "parnassus-live-map/1"

enum {
    MIDI_CHANNELS = 16,
    CC_BINDABLE_MAX = 119, /* 120..127 are channel mode messages */
    NOTE_MAX = 127,
    BEND_MAX = 16383,
    MAP_FILE_MAX_BYTES = 1024 * 1024,
    SHOWN_MAX = 40, /* bytes of a file's string quoted in a message */
};

/* The name of a source kind in the map file ("cc", "note", ...), and the
 * kind of a name (0 when it names none). */
const char *pnl_source_name(pnl_source_kind kind);
int pnl_source_kind_of(const char *name, pnl_source_kind *kind);

/* Only CCs and notes tell their sources apart by a number, 0..the max. */
int pnl_source_has_number(pnl_source_kind kind);
int pnl_source_number_max(pnl_source_kind kind);

/* A source the table can hold: channel -1 (any) or 0..15, a number in
 * range where the kind has one. */
int pnl_source_valid(pnl_source_kind kind, int channel, int number);

/* A port symbol or action name: [A-Za-z_][A-Za-z0-9_]*, shorter than
 * PNL_TARGET_MAX. Reads at most PNL_TARGET_MAX bytes. */
int pnl_target_valid(const char *t);

/* The index of the binding of exactly this source, or -1. */
int pnl_bindings_find_exact(const pnl_bindings *b, pnl_source_kind kind, int channel, int number);

#endif
