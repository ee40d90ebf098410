/* Reading a Standard MIDI File as the notes sounding between its changes,
 * for style statistics (docs/midi.md, docs/evaluate.md).
 *
 * The file is cut at every tick where the set of sounding notes changes or
 * a note is struck: a segment starts there and lasts until the next one.
 * Each segment lists the notes sounding after all events of its tick (a
 * key and a voice label) and says whether a note-on happened at that tick
 * (an onset). Voices are labelled when the file has one voice per track or
 * per channel: if at least two tracks hold notes, a note's label is the
 * rank of its track among them (0 = the first, in file order); otherwise,
 * if at least two channels hold notes, the rank of its channel among them
 * (ascending); otherwise the notes are unlabelled (label 0). */
#ifndef PARNASSUS_MIDI_ONSETS_H
#define PARNASSUS_MIDI_ONSETS_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PN_MIDI_MAX_SOUNDING = 1024,         /* notes sounding at once */
    PN_MIDI_MAX_SEGMENTS = 1 << 22,      /* changes in one file */
    PN_MIDI_MAX_SEGMENT_NOTES = 1 << 24, /* notes over all segments */
};

typedef enum pn_midi_labels {
    PN_MIDI_UNLABELLED = 0,           /* one track and one channel hold notes */
    PN_MIDI_LABELS_FROM_TRACKS = 1,   /* two or more tracks hold notes */
    PN_MIDI_LABELS_FROM_CHANNELS = 2, /* one track, two or more channels */
} pn_midi_labels;

typedef struct pn_midi_note {
    int32_t voice; /* label, 0-based (0 when unlabelled) */
    int32_t key;   /* MIDI key 0..127 */
} pn_midi_note;

typedef struct pn_midi_segment {
    int32_t tick;   /* where it starts */
    int32_t length; /* ticks until the next segment (the last: until the end of the song) */
    int32_t onset;  /* 1 when a note-on happens at this tick */
    int32_t first;  /* its notes are notes[first .. first + count), by voice, then key */
    int32_t count;
} pn_midi_segment;

typedef struct pn_midi_onsets {
    pn_midi_labels labels;
    int32_t num_voices;   /* labels in use (1 when unlabelled) */
    int32_t division;     /* ticks per quarter note */
    int32_t length_ticks; /* the song's length (last event, end-of-track included) */
    int32_t num_onsets;   /* segments with onset = 1 */
    int32_t num_segments;
    pn_midi_segment *segments;
    int64_t num_notes;
    pn_midi_note *notes;
} pn_midi_onsets;

/* Reads the file at path (at most 64 MiB). Errors (PN_ERR_PARSE unless
 * noted) start with the file name: cannot open (PN_ERR_IO), malformed
 * file (as pn_midi_read_voices), no notes, more than PN_MIDI_MAX_SOUNDING
 * notes at once, more than PN_MIDI_MAX_SEGMENTS changes or
 * PN_MIDI_MAX_SEGMENT_NOTES notes in all. On failure *out is NULL. */
pn_error pn_midi_read_onsets(const char *path, pn_midi_onsets **out, pn_error_info *info);

/* The same from a buffer holding a whole file; name is used in messages. */
pn_error pn_midi_read_onsets_mem(const char *name, const void *data, size_t size,
                                 pn_midi_onsets **out, pn_error_info *info);

void pn_midi_onsets_free(pn_midi_onsets *o);

#ifdef __cplusplus
}
#endif

#endif
