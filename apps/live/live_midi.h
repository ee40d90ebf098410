/* MIDI devices for parnassus-live behind one small interface, with two
 * implementations: PortMidi (hardware and ALSA sequencer ports) and an
 * in-memory one that tests use (a .mid file or a list of messages as the
 * keyboard, and a record of what would have been sent).
 *
 * Times are seconds on the audio stream's clock (pnl_midi_msg.time). A
 * backend is used from one thread at a time: the app opens ports on its
 * main thread before the MIDI thread starts, then only the MIDI thread
 * polls and sends. */
#ifndef PARNASSUS_LIVE_MIDI_H
#define PARNASSUS_LIVE_MIDI_H

#include <stddef.h>

#include "live_engine.h"
#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { PNL_MIDI_MAX_PORTS = 16 };

typedef struct pnl_midi_backend pnl_midi_backend;

typedef struct pnl_midi_ops {
    const char *name;
    /* Ports of one direction (output nonzero: outputs). */
    int (*count)(pnl_midi_backend *b, int output);
    const char *(*port_name)(pnl_midi_backend *b, int output, int index);
    pn_error (*open)(pnl_midi_backend *b, int output, int index, pn_error_info *info);
    /* Messages that arrived on any open input by stream time `now`; never
     * blocks. Returns how many were written to out (at most max). */
    size_t (*poll)(pnl_midi_backend *b, double now, pnl_midi_msg *out, size_t max);
    /* Sends to every open output, to leave at msg->time. */
    void (*send)(pnl_midi_backend *b, const pnl_midi_msg *msg);
    void (*destroy)(pnl_midi_backend *b);
} pnl_midi_ops;

struct pnl_midi_backend {
    const pnl_midi_ops *ops;
};

/* Finds a port by its index ("2") or a case-insensitive part of its name
 * ("keystation"). Returns the index, or -1 with a message that names what
 * was looked for and lists what there is. */
int pnl_midi_find(pnl_midi_backend *b, int output, const char *spec, pn_error_info *info);

/* Lists the ports of both directions, one per line, into f. */
void pnl_midi_list(pnl_midi_backend *b, void *file);

/* ---- PortMidi ----
 * clock: the stream clock for timestamps (seconds), called from any
 * thread; latency: how far ahead output is scheduled (seconds). Fails with
 * a clear message when PortMidi cannot start. */
typedef double (*pnl_clock_fn)(void *user);
pn_error pnl_midi_portmidi_create(pnl_clock_fn clock, void *clock_user, double latency,
                                  pnl_midi_backend **out, pn_error_info *info);

/* ---- in memory (tests, and --midi-in-file) ---- */

/* A backend with one input port named `input_name` that plays `msgs`
 * (sorted by time; copied) and one output port named `output_name` that
 * records what it is sent. */
pn_error pnl_midi_memory_create(const char *input_name, const pnl_midi_msg *msgs, size_t count,
                                const char *output_name, pnl_midi_backend **out,
                                pn_error_info *info);

/* What the memory output was sent, in order, with the stream time at
 * which each was handed over (sent_at) beside the time it asked for. */
size_t pnl_midi_memory_sent(pnl_midi_backend *b, const pnl_midi_msg **msgs, const double **sent_at);

/* Reads the channel messages of a Standard MIDI File as timed messages
 * (seconds from the file's start, its tempo map applied), for the memory
 * backend's input. *msgs is malloc'ed. */
pn_error pnl_midi_read_file(const char *path, pnl_midi_msg **msgs, size_t *count,
                            pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
