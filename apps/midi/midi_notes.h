/* Reading a Standard MIDI File as its note events in time order, to play
 * it into a plugin as a keyboard would (parnassus render --midi-in-file,
 * docs/cli.md). */
#ifndef PARNASSUS_MIDI_NOTES_H
#define PARNASSUS_MIDI_NOTES_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { PN_MIDI_MAX_NOTE_EVENTS = 1 << 20 };

typedef struct pn_midi_note_event {
    int32_t tick;    /* from the start of the song */
    uint8_t channel; /* 0..15 */
    uint8_t key;     /* 0..127 */
    uint8_t on;      /* 1 note-on (velocity > 0), 0 note-off */
    uint8_t velocity;
} pn_midi_note_event;

typedef struct pn_midi_notes {
    int32_t division;     /* ticks per quarter note */
    int32_t length_ticks; /* the song's length (last event, end-of-track included) */
    int32_t count;
    pn_midi_note_event *events; /* by tick; file order (track, then event) among equal ticks */
} pn_midi_notes;

/* Reads the note-on and note-off events of every track and channel of the
 * file at path (at most 64 MiB). Errors (PN_ERR_PARSE unless noted) start
 * with the file name: cannot open (PN_ERR_IO), malformed file, SMPTE time
 * division, no note-on, more than PN_MIDI_MAX_NOTE_EVENTS note events.
 * On failure *out is NULL. */
pn_error pn_midi_read_notes(const char *path, pn_midi_notes **out, pn_error_info *info);

/* The same from a buffer holding a whole file; name is used in messages. */
pn_error pn_midi_read_notes_mem(const char *name, const void *data, size_t size,
                                pn_midi_notes **out, pn_error_info *info);

void pn_midi_notes_free(pn_midi_notes *notes);

#ifdef __cplusplus
}
#endif

#endif
