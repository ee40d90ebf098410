/* The live engine's setup (live_engine.h): settings, the rings, the
 * plugin in its host, the values the audio thread publishes, the presets.
 * The audio thread's work is in live_engine_audio.c, the other threads'
 * calls in live_engine_control.c. */
#include "live_engine_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lv2/atom/atom.h>
#include <lv2/atom/util.h>
#include <lv2/patch/patch.h>

static const char *const output_symbols[NUM_OUTPUTS] = {
    "rules_selected", "weighted_error", "solve_ms", "late_steps", "solver_busy",
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
    if (s->num_controls < 0 || (s->num_controls > 0 && !s->controls))
        return pn_fail(info, PN_ERR_INVALID, "%d knobs given without their values",
                       s->num_controls);
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

static pn_error set_initial_controls(pnl_engine *e, pn_error_info *info)
{
    for (int i = 0; i < e->s.num_controls; ++i) {
        const pnl_control_setting *c = &e->s.controls[i];
        float lo, hi;
        if (!c->symbol || !pnl_engine_control_range(e, c->symbol, NULL, &lo, &hi))
            return pn_fail(info, PN_ERR_INVALID, "knob '%s': the plugin has no such control",
                           c->symbol ? c->symbol : "(null)");
        if (c->value != c->value)
            return pn_fail(info, PN_ERR_INVALID, "knob '%s': the value is not a number", c->symbol);
        const float v = c->value < lo ? lo : c->value > hi ? hi : c->value;
        pn_error rc = pnh_set_control(e->host, c->symbol, v, info);
        if (rc != PN_OK)
            return rc;
    }
    return PN_OK;
}

/* The transport rolls from the start in the app's own sync, if asked. */
static int rolls_from_start(const pnl_engine *e)
{
    return e->s.sync == PNL_SYNC_INTERNAL && e->s.rolling;
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
    e->rule_set = pnh_map(e->host, PNP__ruleSet);
    e->path = pnh_map(e->host, LV2_ATOM__Path);
    pnh_transport_default(&e->transport);
    e->transport.bpm = e->s.bpm;
    e->transport.beats_per_bar = e->s.beats_per_bar;
    /* with a rule set to load first, the transport rolls once it is in */
    e->transport.rolling = rolls_from_start(e) && !e->s.rules;
    for (int i = 0; i < NUM_OUTPUTS; ++i) /* no knobs: pnl_engine_control_range() */
        e->output_port[i] = pnh_port_index(e->host, output_symbols[i]);
    /* the plugin follows the host's transport ("sync" 0), which the app
     * drives from its own clock or from MIDI clock */
    if ((rc = pnh_set_control(e->host, "sync", 0.0f, info)) != PN_OK ||
        (rc = set_initial_controls(e, info)) != PN_OK ||
        (rc = pnh_set_transport(e->host, &e->transport, info)) != PN_OK)
        return rc;
    return pnh_activate(e->host, info);
}

/* While the rule set loads: the plugin's report that s.rules is in place,
 * and the rules it keeps. */
static void on_loading_event(void *user, const pnh_event *ev)
{
    pnl_engine *e = user;
    if (ev->type != e->object || ev->size < sizeof(LV2_Atom_Object_Body))
        return;
    pnl_engine_take_selection(e, ev);
    const LV2_Atom_Object_Body *body = ev->body;
    const LV2_Atom *property = NULL, *value = NULL;
    if (body->otype != e->patch_set)
        return;
    lv2_atom_object_body_get(ev->size, body, e->patch_property, &property, e->patch_value, &value,
                             0);
    if (property && property->type == e->urid &&
        ((const LV2_Atom_URID *)property)->body == e->rule_set && value && value->type == e->path &&
        value->size > 1 && strncmp(LV2_ATOM_BODY_CONST(value), e->s.rules, value->size) == 0)
        e->rules_in_place = 1;
}

/* The plugin's log line that says it did not load a rule set, or NULL. */
static const char *not_loaded_line(pnl_engine *e)
{
    return strstr(pnh_log_text(e->host), "rule set not loaded");
}

/* Why: the loader's own message from that line, after the plugin's words
 * for a running host ("... the previous one keeps playing: "). It names
 * the file (and the line, for a syntax error); the path is added when it
 * does not. */
static const char *load_failure(pnl_engine *e)
{
    const char *line = not_loaded_line(e);
    const size_t len = strcspn(line, "\n");
    const char *sep = strstr(line, "playing: ");
    const char *why = sep && (size_t)(sep - line) < len ? sep + strlen("playing: ") : line;
    const int why_len = (int)(len - (size_t)(why - line));
    const size_t path_len = strlen(e->s.rules);
    if ((size_t)why_len >= path_len && strncmp(why, e->s.rules, path_len) == 0)
        snprintf(e->load_error, sizeof e->load_error, "rule set not loaded: %.*s", why_len, why);
    else
        snprintf(e->load_error, sizeof e->load_error, "rule set %s not loaded: %.*s", e->s.rules,
                 why_len, why);
    return e->load_error;
}

/* The plugin loads s.rules on its worker with the transport stopped: the
 * first block sends the request; once the worker has loaded and readied
 * the set, the next block hands it to the plugin, which installs it, and
 * the one after reports it on notify (a block or two more when a
 * realization was still under way). Each round waits for the worker, so
 * the rounds do not depend on the machine's speed. Then the transport
 * rolls and the first step is the set's (the seed's music from its
 * start). activate() has already readied the built-in set, so starting
 * this way takes about twice as long. */
enum { LOADING_BLOCKS = 16 };

static pn_error load_rules_first(pnl_engine *e, pn_error_info *info)
{
    const char *path = e->s.rules;
    pnh_log_clear(e->host);
    pn_error rc = pnh_queue_patch_set_path(e->host, 0, PNP__ruleSet, path, info);
    if (rc != PN_OK)
        return rc;
    for (int block = 0; block < LOADING_BLOCKS && !e->rules_in_place; ++block) {
        if (pnh_run(e->host, e->s.max_block, on_loading_event, e, info) < 0)
            return info ? info->code : PN_ERR_INVALID;
        /* a load cannot be cut short (freeing the host joins the worker),
         * so this only bounds a worker that hangs */
        if (!pnh_wait_worker_idle(e->host, 300.0))
            return pn_fail(info, PN_ERR_INVALID, "rule set %s: the plugin is still loading it",
                           path);
        if (not_loaded_line(e))
            return pn_fail(info, PN_ERR_INVALID, "%s", load_failure(e));
    }
    if (!e->rules_in_place)
        return pn_fail(info, PN_ERR_INVALID, "rule set %s: the plugin did not take it", path);
    e->transport.rolling = rolls_from_start(e);
    return pnh_set_transport(e->host, &e->transport, info);
}

static pn_error init_published(pnl_engine *e, pn_error_info *info)
{
    const uint32_t n = pnh_num_ports(e->host);
    e->control_value = calloc(n ? n : 1, sizeof *e->control_value);
    if (!e->control_value)
        return pn_fail(info, PN_ERR_NOMEM, "live engine: out of memory");
    for (uint32_t i = 0; i < n; ++i)
        atomic_init(&e->control_value[i], pnh_get_control(e->host, pnh_port_symbol(e->host, i)));
    for (int i = 0; i < NUM_OUTPUTS; ++i)
        atomic_init(&e->output[i], 0.0f);
    for (int v = 0; v < PNL_VOICES; ++v)
        atomic_init(&e->sonority[v], -1);
    atomic_init(&e->stream_time, 0.0);
    atomic_init(&e->stream_mono, pnl_engine_now());
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
        (e->s.rules && (rc = load_rules_first(e, info)) != PN_OK) ||
        (rc = init_published(e, info)) != PN_OK) {
        pnl_engine_free(e);
        return rc;
    }
    e->s.controls = NULL; /* the caller's, read while creating only */
    e->s.num_controls = 0;
    e->s.rules = NULL;
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
    pnh_ring_free(&e->control);
    pnh_ring_free(&e->midi_in);
    pnh_ring_free(&e->midi_out);
    pnh_ring_free(&e->capture);
    pnh_ring_free(&e->selection);
    free(e->control_value);
    free(e);
}
