/* Inside parnassus-live's run: the app's state and what its parts share,
 * the audio stream (live_app_audio.c), the MIDI devices and thread
 * (live_app_midi.c), the commands and bindings (live_app_commands.c) and
 * the run itself (live_app.c). Internal to the live app. */
#ifndef PARNASSUS_LIVE_APP_INTERNAL_H
#define PARNASSUS_LIVE_APP_INTERNAL_H

#include <limits.h>
#include <math.h>
#include <portaudio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>

#include "live_app.h"
#include "live_bindings.h"
#include "live_capture.h"
#include "live_synth.h"
#include "live_tui.h"
#include "ring.h"

enum { MAIN_RING_BYTES = 1 << 15, MIDI_BATCH = 256 };

typedef struct pnl_app {
    const pnl_app_options *o;
    pnl_synth *synth;
    pnl_engine *engine;
    pnl_capture *capture;
    pnl_bindings bindings;
    char map_path[PATH_MAX];
    pnl_midi_backend *midi;
    pnh_ring to_main; /* MIDI input for learn and bindings: MIDI thread -> main */
    PaStream *stream;
    pthread_t midi_thread;
    int midi_thread_started;
    atomic_int midi_running;
    int quit;
    uint32_t max_block;
    pnl_tui *tui;      /* the terminal interface, or NULL (headless) */
    int preset;        /* the preset last applied, -1: none yet */
    int stream_died;   /* the device went away under the stream */
    char message[256]; /* what the interface shows on its message line */
    char midi_in_names[256], midi_out_names[256], audio_name[160];
} pnl_app;

/* What the app has to say while it plays: a line on stdout (errors on
 * stderr), or the interface's message line when it owns the terminal. */
void pnl_app_say(pnl_app *a, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline double pnl_app_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void pnl_app_sleep(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&ts, NULL);
}

/* ---- the audio stream (live_app_audio.c) ---- */

/* Pa_Initialize with its chatter on stderr muted. */
PaError pnl_app_pa_initialize(void);
void pnl_app_list_audio(FILE *f);
/* Opens the stream on the device the options name; -1 after a message. */
int pnl_app_open_audio(pnl_app *a);

/* ---- MIDI (live_app_midi.c) ---- */

/* The MIDI thread: devices to the engine and to the main thread, the
 * engine's output to the devices. */
void *pnl_app_midi_main(void *user);
/* Opens the MIDI files or devices the options name; -1 after a message. */
int pnl_app_open_midi(pnl_app *a);
/* Writes what was sent to --midi-out-file, if given. */
int pnl_app_write_midi_out_file(pnl_app *a);

/* ---- commands and bindings, on the main thread (live_app_commands.c) ---- */

int pnl_app_write_capture(pnl_app *a, const char *path);
void pnl_app_print_status(pnl_app *a);
int pnl_app_set_knob(pnl_app *a, const char *symbol, const char *value);
/* The MIDI the main thread was handed: learning, or the bound actions. */
void pnl_app_handle_bindings(pnl_app *a);
/* One command line ("set SYMBOL VALUE", "play", ...); line is cut up. */
void pnl_app_run_command(pnl_app *a, char *line);
/* stdin, a line at a time, without blocking the loop. */
void pnl_app_poll_stdin(pnl_app *a, int *stdin_open);

#endif
