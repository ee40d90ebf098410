/* The live engine's control and MIDI threads: knobs, transport and rule
 * sets sent to the audio thread through the control ring, presets, the
 * capture, the status; MIDI in and out through their rings. */
#include "live_engine_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
    double since = pnl_engine_now() - atomic_load_explicit(&e->stream_mono, memory_order_relaxed);
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
