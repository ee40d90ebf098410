/* The heart of parnassus-live: the plugin, hosted through apps/lv2host with
 * a threaded worker, run once per audio buffer by pnl_engine_process() —
 * the PortAudio callback's whole job (docs/live.md).
 *
 * Threads and what each may call:
 * - the audio thread: pnl_engine_process() only; it allocates nothing,
 *   takes no lock, prints nothing and touches no file;
 * - the control thread (the app's main loop, one thread): the pnl_engine_
 *   set/command/rules calls, pnl_engine_drain_capture(), pnl_engine_status();
 * - the MIDI thread (one thread): pnl_engine_midi_in() and
 *   pnl_engine_drain_midi_out().
 * Each direction is a single-producer/single-consumer lock-free ring, so a
 * knob moved at every buffer never stalls the audio and its last value
 * wins. */
#ifndef PARNASSUS_LIVE_ENGINE_H
#define PARNASSUS_LIVE_ENGINE_H

#include <stdint.h>

#include "live_capture.h"
#include "live_synth.h"
#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { PNL_VOICES = 4, PNL_RULES_KEPT_MAX = 1024 };

/* A timed MIDI message: time in seconds on the stream clock (frames
 * rendered / sample rate since the stream started). */
typedef struct pnl_midi_msg {
    double time;
    uint8_t size; /* 1..3 */
    uint8_t bytes[3];
} pnl_midi_msg;

typedef enum pnl_sync {
    PNL_SYNC_INTERNAL = 0,   /* the app's own transport */
    PNL_SYNC_MIDI_CLOCK = 1, /* follow incoming MIDI clock, Start/Stop/Continue, SPP */
} pnl_sync;

/* A knob's value set before the plugin activates. */
typedef struct pnl_control_setting {
    const char *symbol; /* an input control port's symbol */
    float value;        /* held to the port's range */
} pnl_control_setting;

typedef struct pnl_engine_settings {
    const char *bundle_dir; /* parnassus.lv2; NULL: discover it on LV2_PATH */
    double sample_rate;     /* > 0 (48000) */
    uint32_t max_block;     /* largest buffer, 16..8192 (4096) */
    double bpm;             /* the internal transport's tempo, 20..400 (120) */
    double beats_per_bar;   /* quarter notes per bar, 1..32 (4) */
    int rolling;            /* start playing at once (1) */
    pnl_sync sync;          /* (PNL_SYNC_INTERNAL) */
    pnl_synth *synth;       /* borrowed, NULL: silence; driven by the audio thread */
    double midi_latency;    /* seconds added to MIDI output times, 0..1 (0.01) */
    int capture_input;      /* nonzero: the musician's notes go to the capture (1) */
    int send_clock;         /* internal sync: MIDI clock, Start and Stop to MIDI out (0) */
    int log_to_stderr;      /* the plugin's log messages on stderr (0) */
    /* Knobs set before the plugin activates, in order (NULL, 0). The
     * plugin draws its first sonorities when it activates, so a knob that
     * shapes them (the seed: a repeatable take) must be set here; one
     * sent with pnl_engine_set_control() later changes the music from
     * then on. */
    const pnl_control_setting *controls;
    int num_controls;
    /* The rule set to play from the first step (NULL: the built-in one).
     * The plugin loads it before the transport rolls, which about doubles
     * the time creation takes; one loaded with pnl_engine_load_rules()
     * later comes in while the old one plays. */
    const char *rules;
} pnl_engine_settings;

void pnl_engine_settings_default(pnl_engine_settings *s);

typedef struct pnl_engine pnl_engine;

/* Loads the plugin, sets s->controls, activates it and has it load
 * s->rules (its first realization is made here: about a second and a half
 * with the built-in set). An unknown knob, a value that is not a number
 * or a rule set the plugin does not take is an error naming it. */
pn_error pnl_engine_create(const pnl_engine_settings *s, pnl_engine **out, pn_error_info *info);
/* Call after the audio stream has stopped. */
void pnl_engine_free(pnl_engine *e);

/* ---- the audio thread ---- */

/* Runs one buffer: applies what the other threads sent, runs the plugin,
 * plays its notes on the synth and hands them to the MIDI and capture
 * rings, renders the synth into left/right (silence without one). */
void pnl_engine_process(pnl_engine *e, float *left, float *right, uint32_t nframes);

/* Waits until the plugin's worker has finished every job scheduled so far
 * (offline runs and tests: call it between buffers, on the thread that
 * runs pnl_engine_process). Returns 1 when idle, 0 on timeout. */
int pnl_engine_wait_worker(pnl_engine *e, double timeout_seconds);

/* ---- the control thread ---- */

/* A plugin knob by port symbol (the value is clamped to the port's range).
 * Returns 0, or -1 for an unknown symbol or a full ring. */
int pnl_engine_set_control(pnl_engine *e, const char *symbol, float value);
/* The port's range; 0 when there is no such input control. */
int pnl_engine_control_range(const pnl_engine *e, const char *symbol, float *def, float *min,
                             float *max);
/* The knob's value as last applied by the audio thread. */
float pnl_engine_control(const pnl_engine *e, const char *symbol);

int pnl_engine_play(pnl_engine *e);
/* Stops the transport and releases every sounding note (plugin, synth and
 * MIDI out). */
int pnl_engine_stop(pnl_engine *e);
int pnl_engine_set_tempo(pnl_engine *e, double bpm);
/* Releases every sounding note, keeps playing. */
int pnl_engine_panic(pnl_engine *e);
/* Loads another rule set (the plugin's worker reads it; the old set plays
 * meanwhile), releasing the sounding notes. */
int pnl_engine_load_rules(pnl_engine *e, const char *path);

/* The plugin's presets (style presets, and one per shipped rule set), in
 * the order the bundle lists them. */
int pnl_engine_preset_count(const pnl_engine *e);
const char *pnl_engine_preset_label(const pnl_engine *e, int index);
/* Applies preset `index`: its knobs, and its rule set when it is one of
 * the bundle's (rules/<name>.json). Returns 0, or -1 with info set. */
int pnl_engine_apply_preset(pnl_engine *e, int index, pn_error_info *info);

/* Moves the capture ring's events into the history; returns how many. */
size_t pnl_engine_drain_capture(pnl_engine *e, pnl_capture *into);

typedef struct pnl_status {
    int rolling;
    double bpm;
    double beat;              /* quarter notes on the transport */
    double stream_time;       /* seconds rendered */
    int sonority[PNL_VOICES]; /* the sounding generated notes, highest first; -1: none */
    float rules_selected, weighted_error, solve_ms, late_steps, solver_busy;
    double load;     /* the last buffer's time over its duration */
    double load_max; /* the largest since the start */
    double level;    /* the output's peak, falling by half every 0.3 s (1.0: full scale) */
    uint64_t buffers;
    uint64_t notes_out;    /* note-ons played */
    uint64_t midi_dropped; /* messages lost to a full ring */
} pnl_status;

void pnl_engine_status(const pnl_engine *e, pnl_status *out);

/* The names of the rules the realization keeps now, comma-separated, as
 * the plugin last reported them ("" before its first report). The string
 * stays valid until the next call. */
const char *pnl_engine_rules_kept(pnl_engine *e);

/* The stream clock now (seconds), from any thread: the time rendered at
 * the last buffer plus the time since, never more than a buffer ahead. */
double pnl_engine_clock(const pnl_engine *e);

/* ---- the MIDI thread ---- */

/* A message from a MIDI input (keyboard, controller, clock). Returns 0, or
 * -1 when the ring is full (it is counted as dropped). */
int pnl_engine_midi_in(pnl_engine *e, const pnl_midi_msg *msg);
/* Takes up to max messages for the MIDI outputs, in time order. */
size_t pnl_engine_drain_midi_out(pnl_engine *e, pnl_midi_msg *out, size_t max);

#ifdef __cplusplus
}
#endif

#endif
