/* parnassus-live as a whole: its options and the run that ties the synth,
 * the engine, the MIDI devices, MIDI learn, capture and the audio stream
 * together (docs/live.md). */
#ifndef PARNASSUS_LIVE_APP_H
#define PARNASSUS_LIVE_APP_H

#include "live_engine.h"
#include "live_midi.h"

enum {
    PNL_EXIT_OK = 0,
    PNL_EXIT_FAILURE = 1,
    PNL_EXIT_USAGE = 2,
    PNL_APP_MAX_SETS = 64,
    PNL_APP_SYMBOL_MAX = 64, /* a knob's symbol, with its terminating zero */
};

typedef struct pnl_app_options {
    int headless;
    double seconds; /* 0: until quit */
    const char *sets[PNL_APP_MAX_SETS];
    int num_sets;
    const char *rules, *bundle;
    double bpm;
    pnl_sync sync;
    int clock_out; /* send MIDI clock as the master */
    const char *capture;
    int capture_bars;
    const char *audio_device;
    double rate;
    int buffer;
    int list_devices;
    const char *midi_in[PNL_MIDI_MAX_PORTS];
    int num_midi_in;
    const char *midi_out;
    double midi_latency; /* seconds */
    const char *midi_in_file, *midi_out_file;
    const char *map;
    int no_synth;
    const char *soundfont;
    int program; /* 0-based */
} pnl_app_options;

void pnl_app_options_default(pnl_app_options *o);

/* Runs the app; returns its exit status. */
int pnl_app_run(const pnl_app_options *o);

#endif
