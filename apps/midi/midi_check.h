/* The structural check every MIDI reader of pnmidi runs before libsmf sees
 * a file (docs/midi.md, "Checking before libsmf"), and the note kind of a
 * libsmf event both readers ask. Internal to pnmidi. */
#ifndef PARNASSUS_MIDI_CHECK_H
#define PARNASSUS_MIDI_CHECK_H

#include <stddef.h>

#include <smf.h>

#include "parnassus/error.h"

/* Checks the header chunk, the chunk framing and the events of every track
 * of the size bytes at d; PN_ERR_PARSE with a message starting with `name`
 * for anything libsmf could trip over. */
pn_error pn_midi_check_file(const char *name, const unsigned char *d, size_t size,
                            pn_error_info *info);

/* The file of `size` bytes at `data` (a reader's input) checked and handed
 * to libsmf: PN_ERR_PARSE, with a message starting with `name`, for a file
 * over PN_FILE_MAX_BYTES (which also keeps it within libsmf's int length),
 * one pn_midi_check_file() refuses, or one libsmf cannot parse. On success
 * *smf is the caller's to smf_delete(). */
pn_error pn_midi_load_smf(const char *name, const void *data, size_t size, smf_t **smf,
                          pn_error_info *info);

/* A libsmf event's kind: 1 note-on, 0 note-off (0x80, or 0x90 with
 * velocity 0), -1 anything else; a note sets *channel and *key. */
int pn_midi_note_kind(const smf_event_t *ev, int *channel, int *key);

#endif
