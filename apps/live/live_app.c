/* parnassus-live's run (live_app.h): setting up the synth, the engine,
 * capture, bindings, MIDI and audio; the main loop with its terminal
 * interface; tearing down with every note released. */
#define _GNU_SOURCE
#include "live_app_internal.h"

#include <errno.h>
#include <float.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lv2host.h"

void pnl_app_options_default(pnl_app_options *o)
{
    memset(o, 0, sizeof *o);
    o->bpm = 120.0;
    o->sync = PNL_SYNC_INTERNAL;
    o->capture_bars = 16;
    o->rate = 48000.0;
    o->buffer = 256;
    o->midi_latency = 0.010;
    o->program = PNL_PROGRAM_CHOIR_AAHS;
}

void pnl_app_say(pnl_app *a, int error, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (a->tui)
        vsnprintf(a->message, sizeof a->message, fmt, ap);
    else {
        FILE *f = error ? stderr : stdout;
        if (error)
            fputs("parnassus-live: ", f);
        vfprintf(f, fmt, ap);
        fputc('\n', f);
        fflush(f);
    }
    va_end(ap);
}

/* ---- the terminal interface ---- */

/* The knobs the interface shows, Style and Selection first, with what one
 * key press moves each by. */
static const struct {
    const char *symbol, *label;
    float step;
} tui_knobs[] = {
    {"log2_lambda_w", "Style (log2 λw)", 0.5f},
    {"alpha", "Selection (α)", 0.05f},
    {"division", "Division", 1.0f},
    {"gate", "Gate (%)", 5.0f},
    {"velocity", "Velocity", 4.0f},
    {"humanize", "Humanize", 4.0f},
    {"input_mode", "Input mode", 1.0f},
    {"key", "Key", 1.0f},
    {"octave", "Octave", 1.0f},
    {"channel", "Channel", 1.0f},
    {"channel_per_voice", "Channel per voice", 1.0f},
};

static void fill_view(pnl_app *a, pnl_tui_view *v)
{
    memset(v, 0, sizeof *v);
    pnl_engine_status(a->engine, &v->status);
    for (size_t i = 0; i < sizeof tui_knobs / sizeof tui_knobs[0]; ++i) {
        pnl_tui_knob *k = &v->knobs[v->num_knobs];
        if (!pnl_engine_control_range(a->engine, tui_knobs[i].symbol, NULL, &k->min, &k->max))
            continue;
        k->symbol = tui_knobs[i].symbol;
        k->label = tui_knobs[i].label;
        k->step = tui_knobs[i].step;
        k->value = pnl_engine_control(a->engine, k->symbol);
        ++v->num_knobs;
    }
    v->rules_kept = pnl_engine_rules_kept(a->engine);
    v->midi_inputs = a->midi_in_names[0] ? a->midi_in_names : "none";
    v->midi_outputs = a->midi_out_names[0] ? a->midi_out_names : "none";
    v->audio = a->audio_name;
    v->bindings = &a->bindings;
    v->message = a->message;
}

static void poll_tui(pnl_app *a, double *last_draw)
{
    pnl_tui_view v;
    fill_view(a, &v);
    char cmd[256];
    while (pnl_tui_poll(a->tui, &v, cmd, sizeof cmd))
        pnl_app_run_command(a, cmd);
    if (pnl_app_now() - *last_draw >= 0.1) {
        fill_view(a, &v);
        pnl_tui_draw(a->tui, &v);
        *last_draw = pnl_app_now();
    }
}

static void main_loop(pnl_app *a)
{
    int stdin_open = 1;
    double last_status = pnl_app_now(), last_draw = 0;
    while (!a->quit) {
        if (a->tui)
            poll_tui(a, &last_draw);
        else
            pnl_app_poll_stdin(a, &stdin_open);
        pnl_app_handle_bindings(a);
        pnl_engine_drain_capture(a->engine, a->capture);
        pnl_status st;
        pnl_engine_status(a->engine, &st);
        if (a->o->seconds > 0 && st.stream_time >= a->o->seconds)
            break;
        if (!a->o->headless && !a->tui && pnl_app_now() - last_status >= 1.0) {
            pnl_app_print_status(a);
            last_status = pnl_app_now();
        }
        if (!Pa_IsStreamActive(a->stream)) {
            pnl_app_say(a, 1, "the audio stream stopped (device gone?)");
            a->stream_died = 1;
            break;
        }
        pnl_app_sleep(0.005);
    }
}

/* ---- setting up and tearing down ---- */

/* --set SYMBOL=VALUE, read before the plugin loads: the engine sets them
 * before the plugin activates, so that --set seed=N makes its very first
 * draw repeatable. */
static int parse_sets(const pnl_app_options *o, pnl_control_setting *out,
                      char (*symbols)[PNL_APP_SYMBOL_MAX])
{
    for (int i = 0; i < o->num_sets; ++i) {
        const char *eq = strchr(o->sets[i], '=');
        const size_t len = eq ? (size_t)(eq - o->sets[i]) : 0;
        if (!eq || len == 0 || len >= PNL_APP_SYMBOL_MAX) {
            fprintf(stderr, "parnassus-live: --set %s: expected SYMBOL=VALUE\n", o->sets[i]);
            return -1;
        }
        char *end;
        const double v = strtod(eq + 1, &end);
        if (end == eq + 1 || *end || v != v) {
            fprintf(stderr, "parnassus-live: --set %s: the value is not a number\n", o->sets[i]);
            return -1;
        }
        memcpy(symbols[i], o->sets[i], len);
        symbols[i][len] = '\0';
        out[i].symbol = symbols[i];
        out[i].value = v > FLT_MAX ? FLT_MAX : v < -FLT_MAX ? -FLT_MAX : (float)v;
    }
    return 0;
}

static int load_bindings(pnl_app *a)
{
    pnl_bindings_init(&a->bindings);
    if (a->o->map)
        snprintf(a->map_path, sizeof a->map_path, "%s", a->o->map);
    else if (!pnl_bindings_default_path(a->map_path, sizeof a->map_path))
        a->map_path[0] = '\0';
    if (!a->map_path[0])
        return 0;
    if (access(a->map_path, F_OK) != 0) { /* no map yet: learning makes one */
        if (a->o->map)
            fprintf(stderr, "parnassus-live: %s does not exist yet; MIDI learn will write it\n",
                    a->map_path);
        return 0;
    }
    pn_error_info info = {PN_OK, ""};
    if (pnl_bindings_load(&a->bindings, a->map_path, &info) != PN_OK) {
        fprintf(stderr, "parnassus-live: %s; playing without bindings\n", info.message);
        pnl_bindings_init(&a->bindings);
    }
    return 0;
}

/* What can be checked before the plugin loads (which takes a second or
 * two) is checked first. */
static int check_files(pnl_app *a)
{
    const pnl_app_options *o = a->o;
    if (o->rules && access(o->rules, R_OK) != 0) {
        fprintf(stderr, "parnassus-live: --rules %s: %s\n", o->rules, strerror(errno));
        return -1;
    }
    if (o->midi_in_file && access(o->midi_in_file, R_OK) != 0) {
        fprintf(stderr, "parnassus-live: --midi-in-file %s: %s\n", o->midi_in_file,
                strerror(errno));
        return -1;
    }
    return load_bindings(a);
}

static int setup(pnl_app *a, char *bundle_buf, size_t bundle_size)
{
    const pnl_app_options *o = a->o;
    pn_error_info info = {PN_OK, ""};
    pnl_control_setting sets[PNL_APP_MAX_SETS];
    char symbols[PNL_APP_MAX_SETS][PNL_APP_SYMBOL_MAX];
    if (parse_sets(o, sets, symbols) != 0 || check_files(a) != 0)
        return -1;
    if (!o->no_synth) {
        pnl_synth_settings ss;
        pnl_synth_settings_default(&ss);
        ss.soundfont = o->soundfont;
        ss.sample_rate = o->rate;
        ss.program = o->program;
        if (pnl_synth_create(&ss, &a->synth, &info) != PN_OK) {
            fprintf(stderr, "parnassus-live: %s\n", info.message);
            return -1;
        }
    }
    pnl_engine_settings es;
    pnl_engine_settings_default(&es);
    es.bundle_dir = pnh_find_bundle(o->bundle, "parnassus.lv2", bundle_buf, bundle_size);
    es.sample_rate = o->rate;
    es.max_block = a->max_block = (uint32_t)(o->buffer > 4096 ? 4096 : o->buffer);
    es.bpm = o->bpm;
    es.sync = o->sync;
    es.send_clock = o->clock_out;
    es.synth = a->synth;
    es.midi_latency = o->midi_latency;
    es.controls = sets;
    es.num_controls = o->num_sets;
    es.rules = o->rules;
    if (pnl_engine_create(&es, &a->engine, &info) != PN_OK) {
        fprintf(stderr, "parnassus-live: cannot start the plugin: %s\n", info.message);
        return -1;
    }
    pnl_capture_settings cs;
    pnl_capture_settings_default(&cs);
    cs.bars = o->capture_bars;
    cs.num_tracks = PNL_VOICES + 1;
    if (pnl_capture_create(&cs, &a->capture, &info) != PN_OK) {
        fprintf(stderr, "parnassus-live: %s\n", info.message);
        return -1;
    }
    if (!pnh_ring_init(&a->to_main, MAIN_RING_BYTES)) {
        fprintf(stderr, "parnassus-live: out of memory\n");
        return -1;
    }
    if (pnl_app_open_midi(a) != 0)
        return -1;
    return 0;
}

static void stop_playing(pnl_app *a)
{
    pnl_engine_stop(a->engine);
    /* let a few buffers carry the note-offs to the synth and MIDI out */
    pnl_status st;
    pnl_engine_status(a->engine, &st);
    const uint64_t until = st.buffers + 4;
    for (int i = 0; i < 200 && Pa_IsStreamActive(a->stream); ++i) {
        pnl_engine_status(a->engine, &st);
        if (st.buffers >= until)
            break;
        pnl_app_sleep(0.005);
    }
}

/* Once the stream has stopped (or died: a device unplugged), no callback
 * runs: this thread runs a few buffers itself, so that every note still
 * sounding gets its note-off on the synth and the MIDI outputs. */
static void flush_notes(pnl_app *a)
{
    float left[4096], right[4096];
    pnl_engine_stop(a->engine);
    for (int i = 0; i < 4; ++i)
        pnl_engine_process(a->engine, left, right, a->max_block);
}

int pnl_app_run(const pnl_app_options *o)
{
    pnl_app a;
    memset(&a, 0, sizeof a);
    a.o = o;
    a.preset = -1;
    if (pnl_app_pa_initialize() != paNoError) {
        fprintf(stderr, "parnassus-live: PortAudio could not start\n");
        return PNL_EXIT_FAILURE;
    }
    int rc = PNL_EXIT_FAILURE;
    if (o->list_devices) {
        pnl_app_list_audio(stdout);
        pnl_midi_backend *m = NULL;
        pn_error_info info = {PN_OK, ""};
        if (pnl_midi_portmidi_create(NULL, NULL, 0, &m, &info) == PN_OK) {
            pnl_midi_list(m, stdout);
            m->ops->destroy(m);
        } else
            printf("MIDI: %s\n", info.message);
        Pa_Terminate();
        return PNL_EXIT_OK;
    }
    char bundle[PATH_MAX];
    if (setup(&a, bundle, sizeof bundle) != 0 || pnl_app_open_audio(&a) != 0)
        goto done;
    atomic_init(&a.midi_running, 1);
    if (a.midi && pthread_create(&a.midi_thread, NULL, pnl_app_midi_main, &a) == 0)
        a.midi_thread_started = 1;
    PaError err = Pa_StartStream(a.stream);
    if (err != paNoError) {
        fprintf(stderr, "parnassus-live: cannot start the audio stream: %s\n",
                Pa_GetErrorText(err));
        goto done;
    }
    if (!o->headless) {
        pn_error_info tinfo = {PN_OK, ""};
        if (pnl_tui_open(&a.tui, &tinfo) != PN_OK)
            fprintf(stderr, "parnassus-live: %s; reading commands on stdin instead\n",
                    tinfo.message);
    }
    if (!a.tui) {
        printf("parnassus-live: playing at %.0f bpm%s; %s\n", o->bpm,
               o->sync == PNL_SYNC_MIDI_CLOCK ? " (waiting for MIDI clock)" : "",
               o->headless ? "commands on stdin (quit to stop)" : "type quit to stop");
        fflush(stdout);
    } else
        snprintf(a.message, sizeof a.message, "playing at %.0f bpm%s", o->bpm,
                 o->sync == PNL_SYNC_MIDI_CLOCK ? " (waiting for MIDI clock)" : "");
    main_loop(&a);
    pnl_tui_close(a.tui);
    a.tui = NULL;
    stop_playing(&a);
    /* a stream whose device went away cannot be stopped or closed (the
     * call waits for a server that is gone): it is left to the exit */
    if (!a.stream_died)
        Pa_StopStream(a.stream);
    flush_notes(&a);
    rc = a.stream_died ? PNL_EXIT_FAILURE : PNL_EXIT_OK;
    if (o->capture && pnl_app_write_capture(&a, o->capture) != 0)
        rc = PNL_EXIT_FAILURE;
done:
    if (a.midi_thread_started) {
        atomic_store(&a.midi_running, 0);
        pthread_join(a.midi_thread, NULL);
    }
    if (a.midi && a.engine) { /* what the last buffers sent */
        pnl_midi_msg batch[MIDI_BATCH];
        size_t n;
        while ((n = pnl_engine_drain_midi_out(a.engine, batch, MIDI_BATCH)) > 0)
            for (size_t i = 0; i < n; ++i)
                a.midi->ops->send(a.midi, &batch[i]);
    }
    if (a.engine && pnl_app_write_midi_out_file(&a) != 0) /* what was sent, even after a failure */
        rc = PNL_EXIT_FAILURE;
    if (a.stream && !a.stream_died)
        Pa_CloseStream(a.stream);
    if (!a.stream_died)
        Pa_Terminate();
    if (a.midi)
        a.midi->ops->destroy(a.midi);
    pnl_engine_free(a.engine);
    pnl_synth_free(a.synth);
    pnl_capture_free(a.capture);
    pnh_ring_free(&a.to_main);
    return rc;
}
