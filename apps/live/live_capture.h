/* Capture for parnassus-live: the app always remembers the last N bars of
 * what it played and of what the musician played, and writes them to a
 * Standard MIDI File on request, so a good improvisation is never lost
 * (docs/live.md).
 *
 * Events carry their position in quarter notes on the app's transport and
 * a track: 0..k-1 the generated voices (soprano first), k the musician's
 * input. The history is a fixed-capacity circular buffer owned by the main
 * thread (the audio thread hands events over through a ring): adding
 * allocates nothing; writing a file allocates.
 *
 * Bars: bar b spans [b * beats_per_bar, (b + 1) * beats_per_bar) quarter
 * notes from the transport's 0. The window of a position p is the `bars`
 * whole bars that end with the bar in progress at p: it ends at the first
 * bar line at or after p (a p within half a tick, 1/1920 of a quarter, of
 * a bar line counts as on it, so a capture asked for on a downbeat gets
 * the bars just completed) and starts `bars` bars earlier, or at 0.
 *
 * Notes are tracked per (track, channel, key); a note-on with velocity 0
 * is a note-off. A note that began before the history's oldest event is
 * not lost: the history remembers which notes the dropped events left
 * sounding (a fixed table, no allocation). */
#ifndef PARNASSUS_LIVE_CAPTURE_H
#define PARNASSUS_LIVE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PNL_CAPTURE_MAX_TRACKS = 16,
    PNL_CAPTURE_MAX_NAME = 64, /* longest track name, terminator included */
};

typedef struct pnl_capture_event {
    double beat;   /* quarter notes since the transport's 0, >= 0 */
    uint8_t track; /* 0 .. num_tracks - 1 */
    uint8_t size;  /* 1..3: a channel message of its kind's length */
    uint8_t bytes[3];
} pnl_capture_event;

typedef struct pnl_capture_settings {
    int bars;                       /* how many bars to remember, 1..1024 (16) */
    double beats_per_bar;           /* quarter notes per bar, 1/16..64 (4) */
    size_t capacity;                /* events kept at most, 16..2^24 (65536) */
    int num_tracks;                 /* tracks in the file, 1..PNL_CAPTURE_MAX_TRACKS (5) */
    const char *const *track_names; /* num_tracks names (copied, each shorter than
                                       PNL_CAPTURE_MAX_NAME bytes), or NULL: "soprano", "alto",
                                       "tenor", "bass", "input" for 5, else "track 1".."track N" */
} pnl_capture_settings;

void pnl_capture_settings_default(pnl_capture_settings *s);

typedef struct pnl_capture pnl_capture;

/* Creates an empty history; s may be NULL for the defaults. Settings out
 * of range give PN_ERR_INVALID with a message naming the field. On error
 * *out is NULL. */
pn_error pnl_capture_create(const pnl_capture_settings *s, pnl_capture **out, pn_error_info *info);
void pnl_capture_free(pnl_capture *c);

/* Adds an event (beats non-decreasing from call to call; an earlier one is
 * clamped to the last, a negative or non-finite one too). Events that are
 * not channel messages of their kind's length, or name a track beyond
 * num_tracks, are ignored. When the history is full the oldest event is
 * dropped; then events before the window of the newest event are dropped
 * (see above). Never allocates. */
void pnl_capture_add(pnl_capture *c, const pnl_capture_event *ev);

/* Forgets everything, notes still sounding included, so beats may start
 * again from 0 (a rule-set switch does not clear; a transport relocation to
 * an earlier position does). */
void pnl_capture_clear(pnl_capture *c);

/* Events currently held: at most `capacity`, none before the window of the
 * newest event. */
size_t pnl_capture_count(const pnl_capture *c);

/* Writes the window of now_beat (0..1e9; normally at or after the newest
 * event) to a format-1 SMF of 960 ticks per quarter note at the given
 * tempo (4..1000 bpm), the file ending at now_beat:
 * - track 0: the tempo and the time signature n/d of a bar: d the smallest
 *   of 4, 8, 16, 32, 64 that makes n whole (3.5 quarter notes: 7/8), or,
 *   for a bar no such n/d fits, the closest one (the notes keep their
 *   exact times; only the meter shown is approximate);
 * - tracks 1..num_tracks: capture track 0..num_tracks-1, named, with its
 *   events at their times from the window's start rounded to the tick.
 * A note sounding at the window's start begins at 0 (with its velocity),
 * as does one whose note-on was dropped for capacity; a note struck or
 * released right at the start is written as it comes (no note of length
 * 0 at the start); a note still sounding at now_beat ends there; a note struck again while
 * sounding ends where it is struck again; note-offs of notes not sounding
 * are dropped; events at or after now_beat are left out; other channel
 * messages before the window are dropped. Every note-on thus has its
 * note-off, written as 0x8n (release velocity 0 for a velocity-0 note-on
 * and for the note-offs added here).
 * Returns PN_ERR_INVALID for a bad argument (the file untouched), PN_ERR_IO
 * with the file named when it cannot be written, PN_ERR_NOMEM. */
pn_error pnl_capture_write(const pnl_capture *c, const char *path, double now_beat, double bpm,
                           pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
