/* Inside the live engine: its state, shared by the setup
 * (live_engine.c), the audio thread (live_engine_audio.c) and the control
 * and MIDI threads (live_engine_control.c). Internal to the live app. */
#ifndef PARNASSUS_LIVE_ENGINE_INTERNAL_H
#define PARNASSUS_LIVE_ENGINE_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "live_clock.h"
#include "live_engine.h"
#include "lv2host.h"
#include "ring.h"
#include "uris.h"

enum {
    MAX_PRESETS = 64,
    PRESET_NAME_MAX = 160,
    RING_BYTES = 1 << 16,
    MAX_PATH_BYTES = 4096,
    NUM_OUTPUTS = 5,
};

typedef enum control_kind {
    CONTROL_PORT = 1,
    CONTROL_PLAY,
    CONTROL_STOP,
    CONTROL_TEMPO,
    CONTROL_PANIC,
    CONTROL_RULES,
} control_kind;

/* One message of the control ring; CONTROL_RULES is followed by the path
 * and its terminator. */
typedef struct control_msg {
    uint32_t kind;
    int32_t port;
    double value;
} control_msg;

struct pnl_engine {
    pnl_engine_settings s;
    pnh_host *host;
    pnh_ring control, midi_in, midi_out, capture, selection;
    LV2_URID midi_event, object, patch_set, patch_property, patch_value, selected_rules, string,
        urid, rule_set, path;
    int rules_in_place;                  /* creation: the plugin reported s.rules installed */
    char load_error[512];                /* creation: why the plugin did not take s.rules */
    char rules_kept[PNL_RULES_KEPT_MAX]; /* control thread: the latest selection */
    char preset_uri[MAX_PRESETS][PRESET_NAME_MAX], preset_label[MAX_PRESETS][PRESET_NAME_MAX];
    int num_presets;
    char bundle[4096]; /* where the plugin was loaded from, or "" */

    /* audio thread only */
    int64_t frames; /* rendered since the start: the stream clock */
    pnh_transport transport;
    pnl_clock clock;
    double block_beat; /* the transport's beat at the block's start */
    double block_bpm;
    int channel_per_voice, base_channel;
    uint8_t sounding[16][128]; /* the plugin's notes now sounding, per channel and key */
    uint8_t track_of[16][128]; /* the capture track each started on */
    int panic_value;
    int panic_port, channel_port, channel_per_voice_port; /* port indices, -1: none */
    int notes_changed;      /* a generated note started or ended in this buffer */
    int clock_sent_rolling; /* as the clock master: Start sent, Stop not yet */
    int output_port[NUM_OUTPUTS];
    int sync_port;

    /* published by the audio thread, read by the others */
    _Atomic double stream_time, stream_mono, beat, bpm, load, load_max, level;
    atomic_int rolling;
    atomic_int sonority[PNL_VOICES];
    _Atomic float output[NUM_OUTPUTS];
    _Atomic float *control_value; /* per port: the last value applied */
    atomic_uint_fast64_t buffers, notes_out, midi_dropped;
};

/* The rules kept, from a patch:Set of selectedRules the plugin sent on
 * notify, to the selection ring (the audio thread, and creation). */
void pnl_engine_take_selection(pnl_engine *e, const pnh_event *ev);

/* Seconds on the monotonic clock. */
static inline double pnl_engine_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
