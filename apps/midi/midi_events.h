/* Timed raw MIDI events (as a plugin or a sequencer produced them) to a
 * Standard MIDI File (docs/midi.md).
 *
 * Each event has an absolute time in audio frames; the writer turns frames
 * into ticks at a fixed sample rate and tempo, rounding to the nearest
 * tick. At the same tick, note-offs (0x8n, or 0x9n with velocity 0) come
 * before note-ons, so a repeated note is never cut by its own release;
 * other events keep their order. Only channel messages are written. */
#ifndef PARNASSUS_MIDI_EVENTS_H
#define PARNASSUS_MIDI_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pn_midi_event {
    int64_t frame; /* absolute, >= 0 */
    uint8_t size;  /* 1..3 */
    uint8_t bytes[3];
} pn_midi_event;

typedef struct pn_midi_events_settings {
    double sample_rate; /* frames per second, > 0 (48000) */
    double tempo_bpm;   /* quarter notes per minute, 4..1000 (120) */
    int division;       /* ticks per quarter note, 1..32767 (960) */
    int format;         /* 0: one track; 1: a tempo track, then the events (0) */
    int beats_per_bar;  /* time signature numerator, 1..32 (4) */
    int beat_unit;      /* denominator, 1, 2, 4, ..., 32 (4) */
    int64_t end_frame;  /* end of track at least here; 0: the last event */
    const char *name;   /* track name, or NULL */
} pn_midi_events_settings;

void pn_midi_events_settings_default(pn_midi_events_settings *s);

/* The tick of a frame: round(frame * division * bpm / (60 * rate)). */
int64_t pn_midi_frame_to_tick(const pn_midi_events_settings *s, int64_t frame);

/* Writes the events (in any order of frames) to path; *written (may be
 * NULL) gets the number of events written, those that are not channel
 * messages of the right length being skipped. */
pn_error pn_midi_events_write(const char *path, const pn_midi_event *events, size_t count,
                              const pn_midi_events_settings *s, size_t *written,
                              pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
