#include "live_engine.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <lv2/atom/util.h>
#include <lv2/patch/patch.h>

#include "live_clock.h"
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

static const char *const output_symbols[NUM_OUTPUTS] = {
    "rules_selected", "weighted_error", "solve_ms", "late_steps", "solver_busy",
};

struct pnl_engine {
    pnl_engine_settings s;
    pnh_host *host;
    pnh_ring control, midi_in, midi_out, capture, selection;
    LV2_URID midi_event, object, patch_set, patch_property, patch_value, selected_rules, string,
        urid;
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

void pnl_engine_settings_default(pnl_engine_settings *s)
{
    memset(s, 0, sizeof *s);
    s->sample_rate = 48000.0;
    s->max_block = 4096;
    s->bpm = 120.0;
    s->beats_per_bar = 4.0;
    s->rolling = 1;
    s->sync = PNL_SYNC_INTERNAL;
    s->midi_latency = 0.01;
    s->capture_input = 1;
}

static pn_error check_settings(const pnl_engine_settings *s, pn_error_info *info)
{
    if (!(s->sample_rate >= 8000 && s->sample_rate <= 384000))
        return pn_fail(info, PN_ERR_INVALID, "sample rate %g: expected 8000..384000",
                       s->sample_rate);
    if (s->max_block < 16 || s->max_block > 8192)
        return pn_fail(info, PN_ERR_INVALID, "buffer size %u: expected 16..8192",
                       (unsigned)s->max_block);
    if (!(s->bpm >= 20 && s->bpm <= 400))
        return pn_fail(info, PN_ERR_INVALID, "tempo %g: expected 20..400 bpm", s->bpm);
    if (!(s->beats_per_bar >= 1 && s->beats_per_bar <= 32))
        return pn_fail(info, PN_ERR_INVALID, "beats per bar %g: expected 1..32", s->beats_per_bar);
    if (!(s->midi_latency >= 0 && s->midi_latency <= 1))
        return pn_fail(info, PN_ERR_INVALID, "MIDI latency %g s: expected 0..1", s->midi_latency);
    return PN_OK;
}

static pn_error init_rings(pnl_engine *e, pn_error_info *info)
{
    if (!pnh_ring_init(&e->control, RING_BYTES) || !pnh_ring_init(&e->midi_in, RING_BYTES) ||
        !pnh_ring_init(&e->midi_out, RING_BYTES) || !pnh_ring_init(&e->capture, 4 * RING_BYTES) ||
        !pnh_ring_init(&e->selection, RING_BYTES))
        return pn_fail(info, PN_ERR_NOMEM, "live engine: out of memory");
    return PN_OK;
}

static pn_error start_host(pnl_engine *e, pn_error_info *info)
{
    pnh_settings hs;
    pnh_settings_default(&hs);
    hs.plugin_uri = PNP_URI;
    hs.bundle_dir = e->s.bundle_dir;
    hs.sample_rate = e->s.sample_rate;
    hs.max_block = e->s.max_block;
    hs.worker_mode = PNH_WORKER_THREADED;
    hs.log_to_stderr = e->s.log_to_stderr;
    hs.notify_events = 1; /* the rules kept come on the notify port */
    pn_error rc = pnh_create(&hs, &e->host, info);
    if (rc != PN_OK)
        return rc;
    e->midi_event = pnh_map(e->host, "http://lv2plug.in/ns/ext/midi#MidiEvent");
    e->object = pnh_map(e->host, LV2_ATOM__Object);
    e->patch_set = pnh_map(e->host, LV2_PATCH__Set);
    e->patch_property = pnh_map(e->host, LV2_PATCH__property);
    e->patch_value = pnh_map(e->host, LV2_PATCH__value);
    e->selected_rules = pnh_map(e->host, PNP__selectedRules);
    e->string = pnh_map(e->host, LV2_ATOM__String);
    e->urid = pnh_map(e->host, LV2_ATOM__URID);
    pnh_transport_default(&e->transport);
    e->transport.bpm = e->s.bpm;
    e->transport.beats_per_bar = e->s.beats_per_bar;
    e->transport.rolling = e->s.sync == PNL_SYNC_INTERNAL && e->s.rolling;
    /* the plugin follows the host's transport ("sync" 0), which the app
     * drives from its own clock or from MIDI clock */
    if ((rc = pnh_set_control(e->host, "sync", 0.0f, info)) != PN_OK ||
        (rc = pnh_set_transport(e->host, &e->transport, info)) != PN_OK)
        return rc;
    return pnh_activate(e->host, info);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static pn_error init_published(pnl_engine *e, pn_error_info *info)
{
    const uint32_t n = pnh_num_ports(e->host);
    e->control_value = calloc(n ? n : 1, sizeof *e->control_value);
    if (!e->control_value)
        return pn_fail(info, PN_ERR_NOMEM, "live engine: out of memory");
    for (uint32_t i = 0; i < n; ++i)
        atomic_init(&e->control_value[i], pnh_get_control(e->host, pnh_port_symbol(e->host, i)));
    for (int i = 0; i < NUM_OUTPUTS; ++i) {
        e->output_port[i] = pnh_port_index(e->host, output_symbols[i]);
        atomic_init(&e->output[i], 0.0f);
    }
    for (int v = 0; v < PNL_VOICES; ++v)
        atomic_init(&e->sonority[v], -1);
    atomic_init(&e->stream_time, 0.0);
    atomic_init(&e->stream_mono, now_seconds());
    atomic_init(&e->beat, 0.0);
    atomic_init(&e->bpm, e->s.bpm);
    atomic_init(&e->load, 0.0);
    atomic_init(&e->load_max, 0.0);
    atomic_init(&e->level, 0.0);
    atomic_init(&e->rolling, e->transport.rolling);
    atomic_init(&e->buffers, 0);
    atomic_init(&e->notes_out, 0);
    atomic_init(&e->midi_dropped, 0);
    e->panic_port = pnh_port_index(e->host, "panic");
    e->channel_port = pnh_port_index(e->host, "channel");
    e->channel_per_voice_port = pnh_port_index(e->host, "channel_per_voice");
    e->panic_value = pnh_get_control(e->host, "panic") > 0.5f;
    e->channel_per_voice = pnh_get_control(e->host, "channel_per_voice") > 0.5f;
    e->base_channel = (int)pnh_get_control(e->host, "channel") - 1;
    e->block_bpm = e->s.bpm;
    return PN_OK;
}

static void add_preset(void *user, const char *uri, const char *label)
{
    pnl_engine *e = user;
    if (e->num_presets == MAX_PRESETS)
        return;
    snprintf(e->preset_uri[e->num_presets], PRESET_NAME_MAX, "%s", uri);
    snprintf(e->preset_label[e->num_presets], PRESET_NAME_MAX, "%s", label);
    ++e->num_presets;
}

pn_error pnl_engine_create(const pnl_engine_settings *s, pnl_engine **out, pn_error_info *info)
{
    *out = NULL;
    pn_error rc = check_settings(s, info);
    if (rc != PN_OK)
        return rc;
    pnl_engine *e = calloc(1, sizeof *e);
    if (!e)
        return pn_fail(info, PN_ERR_NOMEM, "live engine: out of memory");
    e->s = *s;
    pnl_clock_init(&e->clock, s->bpm);
    if ((rc = init_rings(e, info)) != PN_OK || (rc = start_host(e, info)) != PN_OK ||
        (rc = init_published(e, info)) != PN_OK) {
        pnl_engine_free(e);
        return rc;
    }
    pnh_preset_list(e->host, add_preset, e);
    if (!pnh_bundle_dir(e->host, e->bundle, sizeof e->bundle))
        e->bundle[0] = '\0';
    *out = e;
    return PN_OK;
}

void pnl_engine_free(pnl_engine *e)
{
    if (!e)
        return;
    if (e->host) {
        pnh_deactivate(e->host);
        pnh_free(e->host);
    }
    pnh_ring_destroy(&e->control);
    pnh_ring_destroy(&e->midi_in);
    pnh_ring_destroy(&e->midi_out);
    pnh_ring_destroy(&e->capture);
    pnh_ring_destroy(&e->selection);
    free(e->control_value);
    free(e);
}

/* ---- the audio thread ---- */

static void send_out(pnl_engine *e, double time, const uint8_t *bytes, uint8_t size)
{
    pnl_midi_msg m = {.time = time, .size = size};
    memcpy(m.bytes, bytes, size);
    if (!pnh_ring_write(&e->midi_out, &m, sizeof m))
        atomic_fetch_add_explicit(&e->midi_dropped, 1, memory_order_relaxed);
}

static void capture_event(pnl_engine *e, double beat, int track, const uint8_t *bytes, uint8_t size)
{
    pnl_capture_event c = {.beat = beat < 0 ? 0 : beat, .track = (uint8_t)track, .size = size};
    memcpy(c.bytes, bytes, size);
    if (!pnh_ring_write(&e->capture, &c, sizeof c))
        atomic_fetch_add_explicit(&e->midi_dropped, 1, memory_order_relaxed);
}

/* The voice of a generated note: its channel when each voice has one,
 * else its rank from the top among the notes sounding with it. */
static int voice_track(const pnl_engine *e, int channel, int key)
{
    if (e->channel_per_voice) {
        int v = channel - e->base_channel;
        return v < 0 ? 0 : v >= PNL_VOICES ? PNL_VOICES - 1 : v;
    }
    int above = 0;
    for (int ch = 0; ch < 16; ++ch)
        for (int k = key + 1; k < 128; ++k)
            above += e->sounding[ch][k] > 0;
    return above >= PNL_VOICES ? PNL_VOICES - 1 : above;
}

static void publish_sonority(pnl_engine *e)
{
    int v = 0;
    for (int k = 127; k >= 0 && v < PNL_VOICES; --k)
        for (int ch = 0; ch < 16 && v < PNL_VOICES; ++ch)
            if (e->sounding[ch][k]) {
                atomic_store_explicit(&e->sonority[v++], k, memory_order_relaxed);
                break;
            }
    for (; v < PNL_VOICES; ++v)
        atomic_store_explicit(&e->sonority[v], -1, memory_order_relaxed);
}

/* A note of the plugin's: heard, sent, remembered, tracked for panic. */
static void play_generated(pnl_engine *e, uint32_t frame, const uint8_t *m, uint8_t size)
{
    const double time = (double)(e->frames + frame) / e->s.sample_rate;
    const double beat =
        e->block_beat +
        (e->transport.rolling ? (double)frame * e->block_bpm / (60.0 * e->s.sample_rate) : 0.0);
    const int status = m[0] & 0xF0, ch = m[0] & 0x0F;
    int track = PNL_VOICES - 1;
    if (size == 3 && status == 0x90 && m[2] > 0) {
        e->sounding[ch][m[1] & 0x7F]++;
        track = voice_track(e, ch, m[1] & 0x7F);
        e->track_of[ch][m[1] & 0x7F] = (uint8_t)track;
        atomic_fetch_add_explicit(&e->notes_out, 1, memory_order_relaxed);
    } else if (size == 3 && (status == 0x80 || status == 0x90)) {
        if (e->sounding[ch][m[1] & 0x7F])
            e->sounding[ch][m[1] & 0x7F]--;
        track = e->track_of[ch][m[1] & 0x7F];
    }
    if (e->s.synth)
        pnl_synth_midi(e->s.synth, e->frames + frame, m, size);
    send_out(e, time + e->s.midi_latency, m, size);
    if (status == 0x80 || status == 0x90) {
        capture_event(e, beat, track, m, size);
        e->notes_changed = 1;
    }
}

/* The plugin's patch:Set of selectedRules: the names of the rules kept,
 * handed to the control thread. */
static void on_selection(pnl_engine *e, const pnh_event *ev)
{
    if (ev->size < sizeof(LV2_Atom_Object_Body))
        return;
    const LV2_Atom_Object_Body *body = ev->body;
    if (body->otype != e->patch_set)
        return;
    const LV2_Atom *property = NULL, *value = NULL;
    lv2_atom_object_body_get(ev->size, body, e->patch_property, &property, e->patch_value, &value,
                             0);
    if (!property || property->type != e->urid ||
        ((const LV2_Atom_URID *)property)->body != e->selected_rules || !value ||
        value->type != e->string || value->size < 1)
        return;
    const char *names = LV2_ATOM_BODY_CONST(value);
    size_t len = strnlen(names, value->size);
    len = len < PNL_RULES_KEPT_MAX - 1 ? len : PNL_RULES_KEPT_MAX - 1;
    pnh_ring_write(&e->selection, names, (uint32_t)len);
}

static void on_plugin_event(void *user, const pnh_event *ev)
{
    pnl_engine *e = user;
    if (ev->type == e->object) {
        on_selection(e, ev);
        return;
    }
    if (ev->type != e->midi_event || ev->size < 1 || ev->size > 3)
        return;
    const uint8_t *m = ev->body;
    if (m[0] < 0x80 || m[0] >= 0xF0)
        return;
    play_generated(e, ev->frame, m, (uint8_t)ev->size);
}

/* Note-offs for whatever the plugin left sounding (a stop, a panic, a new
 * rule set): to the synth and the MIDI outputs. */
static void release_all(pnl_engine *e)
{
    const double time = (double)e->frames / e->s.sample_rate + e->s.midi_latency;
    for (int ch = 0; ch < 16; ++ch)
        for (int k = 0; k < 128; ++k)
            while (e->sounding[ch][k]) {
                const uint8_t off[3] = {(uint8_t)(0x80 | ch), (uint8_t)k, 0};
                e->sounding[ch][k]--;
                send_out(e, time, off, 3);
                capture_event(e, e->block_beat, e->track_of[ch][k], off, 3);
            }
    if (e->s.synth)
        pnl_synth_all_notes_off(e->s.synth, e->frames);
    e->notes_changed = 1;
}

static void set_port(pnl_engine *e, int32_t port, float value)
{
    if (pnh_set_control_at(e->host, port, value, NULL) != PN_OK)
        return;
    atomic_store_explicit(&e->control_value[port], value, memory_order_relaxed);
    if (port == e->channel_per_voice_port)
        e->channel_per_voice = value > 0.5f;
    else if (port == e->channel_port)
        e->base_channel = (int)value - 1;
}

static void toggle_panic(pnl_engine *e)
{
    e->panic_value = !e->panic_value;
    if (e->panic_port >= 0)
        set_port(e, e->panic_port, (float)e->panic_value);
}

static void apply_control(pnl_engine *e, const control_msg *c, const char *path)
{
    switch ((control_kind)c->kind) {
    case CONTROL_PORT:
        set_port(e, c->port, (float)c->value);
        break;
    case CONTROL_PLAY:
        if (e->s.sync == PNL_SYNC_INTERNAL)
            e->transport.rolling = 1;
        break;
    case CONTROL_STOP:
        e->transport.rolling = 0;
        break;
    case CONTROL_TEMPO:
        if (e->s.sync == PNL_SYNC_INTERNAL)
            e->transport.bpm = c->value;
        break;
    case CONTROL_PANIC:
        toggle_panic(e);
        break;
    case CONTROL_RULES:
        toggle_panic(e);
        pnh_queue_patch_set_path(e->host, 0, PNP__ruleSet, path, NULL);
        break;
    }
}

static void drain_control(pnl_engine *e)
{
    unsigned char buf[sizeof(control_msg) + MAX_PATH_BYTES];
    uint32_t size;
    while (pnh_ring_read(&e->control, buf, sizeof buf, &size)) {
        if (size < sizeof(control_msg))
            continue;
        control_msg c;
        memcpy(&c, buf, sizeof c);
        buf[size < sizeof buf ? size : sizeof buf - 1] = '\0';
        apply_control(e, &c, (const char *)buf + sizeof c);
    }
}

static int is_clock_message(uint8_t status)
{
    return status == PNL_MIDI_CLOCK || status == PNL_MIDI_START || status == PNL_MIDI_CONTINUE ||
           status == PNL_MIDI_STOP || status == PNL_MIDI_SONG_POSITION;
}

static void drain_midi_in(pnl_engine *e, unsigned *clock_changes)
{
    pnl_midi_msg m;
    uint32_t size;
    while (pnh_ring_read(&e->midi_in, &m, sizeof m, &size)) {
        if (size != sizeof m || m.size < 1 || m.size > 3)
            continue;
        if (is_clock_message(m.bytes[0])) {
            if (e->s.sync == PNL_SYNC_MIDI_CLOCK)
                *clock_changes |= pnl_clock_feed(&e->clock, m.bytes, m.size, m.time);
            continue;
        }
        if (m.bytes[0] < 0x80 || m.bytes[0] >= 0xF0)
            continue;
        pnh_queue_midi(e->host, 0, m.bytes, m.size, NULL);
        const int status = m.bytes[0] & 0xF0;
        if (e->s.capture_input && (status == 0x80 || status == 0x90))
            capture_event(e, e->block_beat, PNL_VOICES, m.bytes, m.size);
    }
}

/* Under MIDI clock the transport takes the clock's state, tempo and
 * position; small phase errors are taken up by the tempo, large ones (a
 * Start, a Song Position Pointer) by a jump. */
static void follow_clock(pnl_engine *e, unsigned changes, double block_time)
{
    const int was_rolling = e->transport.rolling;
    e->transport.rolling = e->clock.rolling;
    if (!e->clock.rolling) {
        if (was_rolling)
            release_all(e);
        return;
    }
    const double target = pnl_clock_beat_at(&e->clock, block_time);
    const double here = pnh_transport_beat(e->host);
    double bpm = e->clock.bpm;
    if ((changes & PNL_CLOCK_CHANGED_POSITION) || fabs(target - here) > 0.25) {
        pnh_transport_locate(e->host, (int64_t)llround(target * 60.0 * e->s.sample_rate / bpm));
    } else {
        double pull = 0.5 * (target - here); /* beats to gain over the next beat */
        pull = pull > 0.05 ? 0.05 : pull < -0.05 ? -0.05 : pull;
        bpm *= 1.0 + pull;
    }
    e->transport.bpm = bpm < 20 ? 20 : bpm > 400 ? 400 : bpm;
}

/* As the clock master: Start or Stop when the transport changes, and 24
 * pulses a quarter note on the frames where they fall. */
static void send_clock(pnl_engine *e, uint32_t nframes)
{
    const double rate = e->s.sample_rate, block_time = (double)e->frames / rate;
    if (e->transport.rolling != e->clock_sent_rolling) {
        const uint8_t msg = e->transport.rolling ? PNL_MIDI_START : PNL_MIDI_STOP;
        send_out(e, block_time + e->s.midi_latency, &msg, 1);
        e->clock_sent_rolling = e->transport.rolling;
    }
    if (!e->transport.rolling)
        return;
    const double beats_per_frame = e->block_bpm / (60.0 * rate);
    const double end = e->block_beat + (double)nframes * beats_per_frame;
    for (double k = ceil(e->block_beat * PNL_CLOCK_PPQN); k / PNL_CLOCK_PPQN < end; k += 1.0) {
        const double frame = (k / PNL_CLOCK_PPQN - e->block_beat) / beats_per_frame;
        const uint8_t pulse = PNL_MIDI_CLOCK;
        send_out(e, block_time + frame / rate + e->s.midi_latency, &pulse, 1);
    }
}

static void publish_outputs(pnl_engine *e, double started, uint32_t nframes)
{
    for (int i = 0; i < NUM_OUTPUTS; ++i)
        if (e->output_port[i] >= 0)
            atomic_store_explicit(&e->output[i], pnh_control_at(e->host, e->output_port[i]),
                                  memory_order_relaxed);
    const double load = (now_seconds() - started) * e->s.sample_rate / (double)nframes;
    atomic_store_explicit(&e->load, load, memory_order_relaxed);
    if (load > atomic_load_explicit(&e->load_max, memory_order_relaxed))
        atomic_store_explicit(&e->load_max, load, memory_order_relaxed);
    atomic_store_explicit(&e->stream_mono, now_seconds(), memory_order_relaxed);
    atomic_store_explicit(&e->stream_time, (double)e->frames / e->s.sample_rate,
                          memory_order_relaxed);
    atomic_store_explicit(&e->beat, pnh_transport_beat(e->host), memory_order_relaxed);
    /* under MIDI clock the tempo heard is the clock's; the transport's
     * carries the phase correction besides */
    atomic_store_explicit(&e->bpm,
                          e->s.sync == PNL_SYNC_MIDI_CLOCK ? e->clock.bpm : e->transport.bpm,
                          memory_order_relaxed);
    atomic_store_explicit(&e->rolling, e->transport.rolling, memory_order_relaxed);
    atomic_fetch_add_explicit(&e->buffers, 1, memory_order_relaxed);
}

/* A peak meter: the buffer's peak, or the last one falling by half every
 * 0.3 s, whichever is larger. */
static void meter(pnl_engine *e, const float *left, const float *right, uint32_t nframes)
{
    float peak = 0.0f;
    for (uint32_t i = 0; i < nframes; ++i) {
        const float l = fabsf(left[i]), r = fabsf(right[i]);
        peak = l > peak ? l : peak;
        peak = r > peak ? r : peak;
    }
    const double fall = exp2(-(double)nframes / (0.3 * e->s.sample_rate));
    const double held = atomic_load_explicit(&e->level, memory_order_relaxed) * fall;
    atomic_store_explicit(&e->level, peak > held ? peak : held, memory_order_relaxed);
}

void pnl_engine_process(pnl_engine *e, float *left, float *right, uint32_t nframes)
{
    const double started = now_seconds();
    if (nframes > e->s.max_block)
        nframes = e->s.max_block;
    const int was_rolling = e->transport.rolling;
    drain_control(e);
    unsigned clock_changes = 0;
    drain_midi_in(e, &clock_changes);
    if (e->s.sync == PNL_SYNC_MIDI_CLOCK)
        follow_clock(e, clock_changes, (double)e->frames / e->s.sample_rate);
    pnh_set_transport(e->host, &e->transport, NULL);
    e->block_beat = pnh_transport_beat(e->host);
    e->block_bpm = e->transport.bpm;
    pnh_run(e->host, nframes, on_plugin_event, e, NULL);
    if (e->s.send_clock && e->s.sync == PNL_SYNC_INTERNAL)
        send_clock(e, nframes);
    if (was_rolling && !e->transport.rolling)
        release_all(e);
    if (e->notes_changed) {
        publish_sonority(e);
        e->notes_changed = 0;
    }
    if (e->s.synth)
        pnl_synth_render(e->s.synth, left, right, nframes);
    else {
        memset(left, 0, nframes * sizeof *left);
        memset(right, 0, nframes * sizeof *right);
    }
    meter(e, left, right, nframes);
    e->frames += nframes;
    publish_outputs(e, started, nframes);
}

int pnl_engine_wait_worker(pnl_engine *e, double timeout_seconds)
{
    return pnh_wait_worker_idle(e->host, timeout_seconds);
}

/* ---- the control thread ---- */

static int send_control(pnl_engine *e, control_kind kind, int32_t port, double value)
{
    const control_msg c = {.kind = kind, .port = port, .value = value};
    return pnh_ring_write(&e->control, &c, sizeof c) ? 0 : -1;
}

int pnl_engine_control_range(const pnl_engine *e, const char *symbol, float *def, float *min,
                             float *max)
{
    const int port = pnh_port_index(e->host, symbol);
    if (port < 0 || !pnh_control_range(e->host, symbol, def, min, max))
        return 0;
    /* outputs have ranges too; only inputs are knobs */
    for (int i = 0; i < NUM_OUTPUTS; ++i)
        if (port == e->output_port[i])
            return 0;
    return 1;
}

int pnl_engine_set_control(pnl_engine *e, const char *symbol, float value)
{
    float lo, hi;
    if (!pnl_engine_control_range(e, symbol, NULL, &lo, &hi) || value != value)
        return -1;
    value = value < lo ? lo : value > hi ? hi : value;
    return send_control(e, CONTROL_PORT, pnh_port_index(e->host, symbol), value);
}

float pnl_engine_control(const pnl_engine *e, const char *symbol)
{
    const int port = pnh_port_index(e->host, symbol);
    return port < 0 ? NAN : atomic_load_explicit(&e->control_value[port], memory_order_relaxed);
}

int pnl_engine_play(pnl_engine *e)
{
    return send_control(e, CONTROL_PLAY, 0, 0);
}

int pnl_engine_stop(pnl_engine *e)
{
    return send_control(e, CONTROL_STOP, 0, 0);
}

int pnl_engine_set_tempo(pnl_engine *e, double bpm)
{
    if (!(bpm >= 20 && bpm <= 400))
        return -1;
    return send_control(e, CONTROL_TEMPO, 0, bpm);
}

int pnl_engine_panic(pnl_engine *e)
{
    return send_control(e, CONTROL_PANIC, 0, 0);
}

int pnl_engine_load_rules(pnl_engine *e, const char *path)
{
    const size_t len = path ? strlen(path) : 0;
    if (len == 0 || len >= MAX_PATH_BYTES)
        return -1;
    unsigned char buf[sizeof(control_msg) + MAX_PATH_BYTES];
    const control_msg c = {.kind = CONTROL_RULES};
    memcpy(buf, &c, sizeof c);
    memcpy(buf + sizeof c, path, len + 1);
    return pnh_ring_write(&e->control, buf, (uint32_t)(sizeof c + len + 1)) ? 0 : -1;
}

int pnl_engine_preset_count(const pnl_engine *e)
{
    return e->num_presets;
}

const char *pnl_engine_preset_label(const pnl_engine *e, int index)
{
    return index >= 0 && index < e->num_presets ? e->preset_label[index] : NULL;
}

static void set_preset_port(void *user, const char *symbol, float value)
{
    pnl_engine_set_control(user, symbol, value);
}

int pnl_engine_apply_preset(pnl_engine *e, int index, pn_error_info *info)
{
    if (index < 0 || index >= e->num_presets) {
        pn_fail(info, PN_ERR_INVALID, "no preset %d (there are %d)", index + 1, e->num_presets);
        return -1;
    }
    if (pnh_preset_port_values(e->host, e->preset_uri[index], set_preset_port, e, info) != PN_OK)
        return -1;
    /* a rule-set preset names a set of the bundle's rules/ directory */
    static const char prefix[] = PNP_PRESET_PREFIX;
    const char *uri = e->preset_uri[index];
    if (e->bundle[0] && strncmp(uri, prefix, sizeof prefix - 1) == 0) {
        char path[sizeof e->bundle + PRESET_NAME_MAX + 16];
        snprintf(path, sizeof path, "%s/rules/%s.json", e->bundle, uri + sizeof prefix - 1);
        if (access(path, R_OK) == 0 && pnl_engine_load_rules(e, path) != 0) {
            pn_fail(info, PN_ERR_INVALID, "preset %s: the control ring is full", uri);
            return -1;
        }
    }
    return 0;
}

size_t pnl_engine_drain_capture(pnl_engine *e, pnl_capture *into)
{
    size_t n = 0;
    pnl_capture_event c;
    uint32_t size;
    while (pnh_ring_read(&e->capture, &c, sizeof c, &size))
        if (size == sizeof c) {
            pnl_capture_add(into, &c);
            ++n;
        }
    return n;
}

const char *pnl_engine_rules_kept(pnl_engine *e)
{
    char buf[PNL_RULES_KEPT_MAX];
    uint32_t size;
    while (pnh_ring_read(&e->selection, buf, sizeof buf - 1, &size)) {
        memcpy(e->rules_kept, buf, size);
        e->rules_kept[size] = '\0';
    }
    return e->rules_kept;
}

void pnl_engine_status(const pnl_engine *e, pnl_status *out)
{
    out->rolling = atomic_load_explicit(&e->rolling, memory_order_relaxed);
    out->bpm = atomic_load_explicit(&e->bpm, memory_order_relaxed);
    out->beat = atomic_load_explicit(&e->beat, memory_order_relaxed);
    out->stream_time = atomic_load_explicit(&e->stream_time, memory_order_relaxed);
    for (int v = 0; v < PNL_VOICES; ++v)
        out->sonority[v] = atomic_load_explicit(&e->sonority[v], memory_order_relaxed);
    out->rules_selected = atomic_load_explicit(&e->output[0], memory_order_relaxed);
    out->weighted_error = atomic_load_explicit(&e->output[1], memory_order_relaxed);
    out->solve_ms = atomic_load_explicit(&e->output[2], memory_order_relaxed);
    out->late_steps = atomic_load_explicit(&e->output[3], memory_order_relaxed);
    out->solver_busy = atomic_load_explicit(&e->output[4], memory_order_relaxed);
    out->load = atomic_load_explicit(&e->load, memory_order_relaxed);
    out->load_max = atomic_load_explicit(&e->load_max, memory_order_relaxed);
    out->level = atomic_load_explicit(&e->level, memory_order_relaxed);
    out->buffers = atomic_load_explicit(&e->buffers, memory_order_relaxed);
    out->notes_out = atomic_load_explicit(&e->notes_out, memory_order_relaxed);
    out->midi_dropped = atomic_load_explicit(&e->midi_dropped, memory_order_relaxed);
}

double pnl_engine_clock(const pnl_engine *e)
{
    const double t = atomic_load_explicit(&e->stream_time, memory_order_relaxed);
    double since = now_seconds() - atomic_load_explicit(&e->stream_mono, memory_order_relaxed);
    const double block = (double)e->s.max_block / e->s.sample_rate;
    since = since < 0 ? 0 : since > block ? block : since;
    return t + since;
}

/* ---- the MIDI thread ---- */

int pnl_engine_midi_in(pnl_engine *e, const pnl_midi_msg *msg)
{
    if (msg->size < 1 || msg->size > 3)
        return -1;
    if (pnh_ring_write(&e->midi_in, msg, sizeof *msg))
        return 0;
    atomic_fetch_add_explicit(&e->midi_dropped, 1, memory_order_relaxed);
    return -1;
}

size_t pnl_engine_drain_midi_out(pnl_engine *e, pnl_midi_msg *out, size_t max)
{
    size_t n = 0;
    uint32_t size;
    while (n < max && pnh_ring_read(&e->midi_out, &out[n], sizeof *out, &size))
        if (size == sizeof *out)
            ++n;
    return n;
}
