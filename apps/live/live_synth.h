/* The built-in software synth of parnassus-live: libfluidsynth with a
 * General MIDI soundfont, so the generated notes are heard out of the box
 * (docs/live.md).
 *
 * fluidsynth allocates while it renders (its OpenMP regions), so it never
 * runs on the audio thread: a synth thread of its own renders ahead into a
 * lock-free ring, `delay` frames behind the stream, looking for new work
 * every millisecond. The audio thread only queues timed messages and
 * copies rendered frames out (lock-free, allocation-free, no system call);
 * when the synth thread falls behind, the audio thread plays silence and
 * counts an underrun instead of waiting.
 *
 * Created and freed on the main thread (it loads the soundfont); every
 * other call is the audio thread's. */
#ifndef PARNASSUS_LIVE_SYNTH_H
#define PARNASSUS_LIVE_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    /* General MIDI programs, 0-based */
    PNL_PROGRAM_CHOIR_AAHS = 52,
    PNL_PROGRAM_CHURCH_ORGAN = 19,
    PNL_PROGRAM_STRING_ENSEMBLE = 48,
};

typedef struct pnl_synth_settings {
    const char *soundfont; /* a .sf2 file; NULL: the first of pnl_synth_soundfont_candidates() */
    double sample_rate;    /* > 0 (48000) */
    int program;           /* GM program 0..127 for every melodic channel (choir aahs) */
    double gain;           /* master gain, 0..10 (0.5) */
    int polyphony;         /* voices, 16..4096 (64) */
    int delay;             /* frames the synth renders ahead of being heard, 64..16384 (512) */
} pnl_synth_settings;

void pnl_synth_settings_default(pnl_synth_settings *s);

/* The soundfonts looked for when none is given, NULL-terminated:
 * $PARNASSUS_SOUNDFONT when set, then Debian's General MIDI soundfonts. */
const char *const *pnl_synth_soundfont_candidates(void);

/* The first candidate that exists, or NULL. */
const char *pnl_synth_find_soundfont(void);

typedef struct pnl_synth pnl_synth;

/* Loads the soundfont; an error names the file, or every place looked in
 * when there was none. */
pn_error pnl_synth_create(const pnl_synth_settings *s, pnl_synth **out, pn_error_info *info);
void pnl_synth_free(pnl_synth *synth);

/* A channel message (note on/off, control change, program change, pitch
 * bend) at the stream's frame `frame` (frames since the stream started,
 * not before the current buffer's first); others are ignored. Returns 0,
 * or -1 when the queue is full. */
int pnl_synth_midi(pnl_synth *synth, int64_t frame, const uint8_t *msg, uint32_t size);

/* Every sounding note of every channel released, at `frame`. */
int pnl_synth_all_notes_off(pnl_synth *synth, int64_t frame);

/* The audio of the next nframes of the stream (the synth's output of
 * `delay` frames earlier) into two channels, replacing their contents;
 * the messages queued for these frames are handed to the synth thread. */
void pnl_synth_render(pnl_synth *synth, float *left, float *right, uint32_t nframes);

/* Buffers that found the synth thread behind (played as silence). */
uint64_t pnl_synth_underruns(const pnl_synth *synth);

#ifdef __cplusplus
}
#endif

#endif
