/* Note tracking: every note-on the plugin sends is remembered with the
 * frame its note-off is due, so no note is ever left hanging: note-offs go
 * out when due, on panic (transport stop, seek, voice or channel change,
 * rule-set switch, the panic button) and after an output buffer overflow
 * (a note stays tracked until its note-off was actually written).
 * Fixed capacity, no allocation: safe in run(). */
#ifndef PARNASSUS_PLUGIN_NOTES_H
#define PARNASSUS_PLUGIN_NOTES_H

#include <stdint.h>

enum { PNP_MAX_NOTES = 64 };

/* Writes one MIDI message at an absolute frame; returns 0 when there is no
 * room (the caller's buffer is full). */
typedef int (*pnp_midi_sink)(void *ctx, int64_t frame, const uint8_t *msg, uint32_t size);

typedef struct pnp_note {
    uint8_t channel; /* 0..15 */
    uint8_t pitch;
    int64_t off_frame;
} pnp_note;

typedef struct pnp_notes {
    pnp_note note[PNP_MAX_NOTES];
    int count;
} pnp_notes;

void pnp_notes_init(pnp_notes *n);

/* Is (channel, pitch) sounding? Index or -1. */
int pnp_notes_find(const pnp_notes *n, int channel, int pitch);

/* Starts a note at `frame` that ends at `off_frame`. A note already
 * sounding on the same key is ended first (note-off, then note-on). Returns
 * 0 when the sink is full or PNP_MAX_NOTES notes sound (nothing sent). */
int pnp_notes_on(pnp_notes *n, pnp_midi_sink sink, void *ctx, int64_t frame, int channel, int pitch,
                 int velocity, int64_t off_frame);

/* Moves the end of a sounding note (a tie). */
void pnp_notes_extend(pnp_notes *n, int index, int64_t off_frame);

/* Sends the note-offs due at or before `frame` (at their due frame, or at
 * `not_before` if that is later: events never go back in time). */
void pnp_notes_due(pnp_notes *n, pnp_midi_sink sink, void *ctx, int64_t frame, int64_t not_before);

/* The earliest due frame; INT64_MAX when nothing sounds. */
int64_t pnp_notes_next_off(const pnp_notes *n);

/* Note-offs for every sounding note at `frame`. */
void pnp_notes_panic(pnp_notes *n, pnp_midi_sink sink, void *ctx, int64_t frame);

/* Forgets every note without sending anything (the host was reset). */
void pnp_notes_clear(pnp_notes *n);

#endif
