/* The live engine's audio thread (pnl_engine_process): the control and
 * MIDI rings drained, the transport driven or following MIDI clock, the
 * plugin run, its notes heard, sent and captured, the meters published.
 * It allocates nothing, takes no lock and touches no file. */
#include "live_engine_internal.h"

#include <math.h>
#include <string.h>

#include <lv2/atom/util.h>

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
void pnl_engine_take_selection(pnl_engine *e, const pnh_event *ev)
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
        pnl_engine_take_selection(e, ev);
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
    const double load = (pnl_engine_now() - started) * e->s.sample_rate / (double)nframes;
    atomic_store_explicit(&e->load, load, memory_order_relaxed);
    if (load > atomic_load_explicit(&e->load_max, memory_order_relaxed))
        atomic_store_explicit(&e->load_max, load, memory_order_relaxed);
    atomic_store_explicit(&e->stream_mono, pnl_engine_now(), memory_order_relaxed);
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
    const double started = pnl_engine_now();
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
