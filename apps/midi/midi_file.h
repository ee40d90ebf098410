/* Standard MIDI File writer and reader for sonority sequences (docs/midi.md).
 *
 * The writer turns a sequence of k-voice sonorities into a format-1 SMF:
 * track 0 carries the tempo, a 4/4 time signature and the sequence name,
 * tracks 1..k carry one voice each. The reader does the reverse for any SMF
 * with one voice per track or per channel: it samples the sounding pitch of
 * each voice on a regular grid of ticks.
 *
 * Pitches are MIDI key numbers 0..127; PN_MIDI_REST (-1) is a rest. Errors
 * come back as pn_error codes with a message naming the file. */
#ifndef PARNASSUS_MIDI_FILE_H
#define PARNASSUS_MIDI_FILE_H

#include <stddef.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PN_MIDI_REST = -1,
    PN_MIDI_MAX_VOICES = 16,
    /* Longest sequence the reader returns (grid steps per voice). */
    PN_MIDI_MAX_STEPS = 1 << 20,
};

typedef enum pn_midi_channel_mode {
    PN_MIDI_CHANNEL_PER_VOICE = 0, /* voice v plays on channel base + v */
    PN_MIDI_ONE_CHANNEL = 1,       /* every voice plays on channel base */
} pn_midi_channel_mode;

typedef struct pn_midi_writer_settings {
    int num_voices;                    /* k, 1..PN_MIDI_MAX_VOICES (default 4) */
    int division;                      /* ticks per quarter note, 1..32767 (480) */
    double tempo_bpm;                  /* quarter notes per minute, 4..1000 (120) */
    pn_midi_channel_mode channel_mode; /* default PN_MIDI_CHANNEL_PER_VOICE */
    int base_channel;                  /* 0..15, 0-based (0); base + k - 1 <= 15 */
    int tie_repeats;                   /* nonzero: a voice repeating its pitch holds the note (0) */
} pn_midi_writer_settings;

typedef struct pn_midi_writer pn_midi_writer;

void pn_midi_writer_settings_default(pn_midi_writer_settings *s);

/* Creates a writer; s may be NULL for the defaults. */
pn_error pn_midi_writer_create(const pn_midi_writer_settings *s, pn_midi_writer **out,
                               pn_error_info *info);
void pn_midi_writer_free(pn_midi_writer *w);

/* Appends one step: pitches[v] for each of the k voices (0..127 or
 * PN_MIDI_REST), held for duration_ticks >= 1 at velocity 1..127. On error
 * nothing is appended and info (may be NULL) tells why. */
pn_error pn_midi_add_sonority(pn_midi_writer *w, const int *pitches, int duration_ticks,
                              int velocity, pn_error_info *info);

/* Number of steps appended so far and their total length in ticks. */
int pn_midi_writer_num_steps(const pn_midi_writer *w);
long pn_midi_writer_total_ticks(const pn_midi_writer *w);

/* Writes the sequence to path (the writer stays usable). */
pn_error pn_midi_write(const pn_midi_writer *w, const char *path, pn_error_info *info);

typedef enum pn_midi_voice_source {
    PN_MIDI_VOICES_FROM_TRACKS = 0,   /* the first k tracks that hold notes */
    PN_MIDI_VOICES_FROM_CHANNELS = 1, /* the k lowest channels that hold notes */
} pn_midi_voice_source;

/* What the reader found besides the steps (all optional to look at). */
typedef struct pn_midi_read_meta {
    int division;     /* ticks per quarter note of the file */
    int grid_ticks;   /* grid actually used */
    int tempo_us;     /* microseconds per quarter at tick 0 (500000 if none) */
    int length_ticks; /* length of the song (last event, end-of-track included) */
    pn_midi_voice_source source;
    int voice_index[PN_MIDI_MAX_VOICES]; /* 1-based track number or 0-based channel */
} pn_midi_read_meta;

/* Reads k voices from an SMF and samples them every grid_ticks ticks
 * (grid_ticks <= 0: a sixteenth note, division / 4, at least 1 tick).
 *
 * Voices: if at least k tracks hold notes, the first k such tracks in file
 * order are voices 0..k-1; otherwise the k lowest channels holding notes (in
 * ascending order) across all tracks. The pitch of a voice at grid tick t is
 * the key sounding at t (note-ons at t count, note-offs at t have ended the
 * note); if several sound, the one struck last (then the highest).
 *
 * On success *steps is a malloc'ed k x *num_steps array, voice-major:
 * (*steps)[v * *num_steps + s] is voice v at step s (PN_MIDI_REST when
 * silent); free() it. num_steps = ceil(length_ticks / grid). meta may be
 * NULL. On error *steps is NULL. */
pn_error pn_midi_read_voices(const char *path, int k, int grid_ticks, int **steps, int *num_steps,
                             pn_midi_read_meta *meta, pn_error_info *info);

/* Same from a buffer holding a whole file; name is used in messages. */
pn_error pn_midi_read_voices_mem(const char *name, const void *data, size_t size, int k,
                                 int grid_ticks, int **steps, int *num_steps,
                                 pn_midi_read_meta *meta, pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
