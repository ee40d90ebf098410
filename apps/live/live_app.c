#define _GNU_SOURCE
#include "live_app.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <portaudio.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#include "live_bindings.h"
#include "live_capture.h"
#include "live_quiet.h"
#include "live_synth.h"
#include "live_tui.h"
#include "lv2host.h"
#include "ring.h"

enum { MAIN_RING_BYTES = 1 << 15, MIDI_BATCH = 256 };

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

typedef struct app {
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
} app;

/* What the app has to say while it plays: a line on stdout (errors on
 * stderr), or the interface's message line when it owns the terminal. */
static void say(app *a, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void say(app *a, int error, const char *fmt, ...)
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

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sleep_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    nanosleep(&ts, NULL);
}

/* ---- audio ---- */

static int audio_callback(const void *input, void *output, unsigned long frames,
                          const PaStreamCallbackTimeInfo *time, PaStreamCallbackFlags flags,
                          void *user)
{
    (void)input;
    (void)time;
    (void)flags;
    app *a = user;
    float **out = output;
    unsigned long done = 0;
    while (done < frames) {
        const uint32_t n = (uint32_t)(frames - done < a->max_block ? frames - done : a->max_block);
        pnl_engine_process(a->engine, out[0] + done, out[1] + done, n);
        done += n;
    }
    return paContinue;
}

static PaError quiet_pa_initialize(void)
{
    const int saved = pnl_stderr_mute();
    const PaError err = Pa_Initialize();
    pnl_stderr_restore(saved);
    return err;
}

static void list_audio(FILE *f)
{
    const int n = Pa_GetDeviceCount();
    fprintf(f, "audio outputs (PortAudio):%s\n", n > 0 ? "" : " none");
    for (int i = 0; i < n; ++i) {
        const PaDeviceInfo *d = Pa_GetDeviceInfo(i);
        if (d && d->maxOutputChannels > 0)
            fprintf(f, "  %d: %s (%s, %d channels, %.0f Hz)%s\n", i, d->name,
                    Pa_GetHostApiInfo(d->hostApi)->name, d->maxOutputChannels, d->defaultSampleRate,
                    i == Pa_GetDefaultOutputDevice() ? " [default]" : "");
    }
}

static int contains_nocase(const char *hay, const char *needle)
{
    const size_t n = strlen(needle);
    for (; *hay; ++hay)
        if (strncasecmp(hay, needle, n) == 0)
            return 1;
    return 0;
}

static PaDeviceIndex find_audio_device(const char *spec)
{
    const int n = Pa_GetDeviceCount();
    if (!spec)
        return Pa_GetDefaultOutputDevice();
    char *end;
    const long i = strtol(spec, &end, 10);
    if (*spec && !*end)
        return i >= 0 && i < n && Pa_GetDeviceInfo((int)i)->maxOutputChannels > 0 ? (int)i
                                                                                  : paNoDevice;
    for (int d = 0; d < n; ++d)
        if (Pa_GetDeviceInfo(d)->maxOutputChannels > 0 &&
            contains_nocase(Pa_GetDeviceInfo(d)->name, spec))
            return d;
    return paNoDevice;
}

static int open_audio(app *a)
{
    const PaDeviceIndex dev = find_audio_device(a->o->audio_device);
    if (dev == paNoDevice) {
        if (a->o->audio_device)
            fprintf(stderr, "parnassus-live: no audio output matches '%s'\n", a->o->audio_device);
        else
            fprintf(stderr, "parnassus-live: no audio output device: PortAudio found none (connect "
                            "a sound card, or start a JACK server)\n");
        list_audio(stderr);
        return -1;
    }
    const PaDeviceInfo *info = Pa_GetDeviceInfo(dev);
    snprintf(a->audio_name, sizeof a->audio_name, "%s, %.0f Hz, %d frames", info->name, a->o->rate,
             a->o->buffer);
    PaStreamParameters out = {
        .device = dev,
        .channelCount = 2,
        .sampleFormat = paFloat32 | paNonInterleaved,
        .suggestedLatency = info->defaultLowOutputLatency,
        .hostApiSpecificStreamInfo = NULL,
    };
    PaError err = Pa_OpenStream(&a->stream, NULL, &out, a->o->rate, (unsigned long)a->o->buffer,
                                paNoFlag, audio_callback, a);
    if (err != paNoError) {
        fprintf(stderr, "parnassus-live: cannot open audio output '%s' at %.0f Hz, %d frames: %s\n",
                info->name, a->o->rate, a->o->buffer, Pa_GetErrorText(err));
        a->stream = NULL;
        return -1;
    }
    return 0;
}

/* ---- MIDI ---- */

static double engine_clock(void *user)
{
    return pnl_engine_clock(user);
}

static void *midi_main(void *user)
{
    app *a = user;
    /* the notes it hands over are due within the MIDI latency: real-time
     * priority under the audio thread's where the system allows it */
    struct sched_param p = {0};
    p.sched_priority = 45;
    pthread_setschedparam(pthread_self(), SCHED_FIFO, &p);
    pnl_midi_msg batch[MIDI_BATCH];
    while (atomic_load(&a->midi_running)) {
        const double now = pnl_engine_clock(a->engine);
        const size_t got = a->midi->ops->poll(a->midi, now, batch, MIDI_BATCH);
        for (size_t i = 0; i < got; ++i) {
            pnl_engine_midi_in(a->engine, &batch[i]);
            pnh_ring_write(&a->to_main, &batch[i], sizeof batch[i]);
        }
        size_t n;
        while ((n = pnl_engine_drain_midi_out(a->engine, batch, MIDI_BATCH)) > 0)
            for (size_t i = 0; i < n; ++i)
                a->midi->ops->send(a->midi, &batch[i]);
        sleep_seconds(0.001);
    }
    return NULL;
}

static void add_name(char *list, size_t size, const char *name)
{
    const size_t used = strlen(list);
    snprintf(list + used, size - used, "%s%s", used ? ", " : "", name);
}

static int open_midi(app *a)
{
    pn_error_info info = {PN_OK, ""};
    const pnl_app_options *o = a->o;
    if (o->midi_in_file || o->midi_out_file) {
        pnl_midi_msg *msgs = NULL;
        size_t count = 0;
        if (o->midi_in_file && pnl_midi_read_file(o->midi_in_file, &msgs, &count, &info) != PN_OK) {
            fprintf(stderr, "parnassus-live: %s\n", info.message);
            return -1;
        }
        const pn_error rc = pnl_midi_memory_create(o->midi_in_file ? o->midi_in_file : "no input",
                                                   msgs, count, "file", &a->midi, &info);
        free(msgs);
        if (rc != PN_OK) {
            fprintf(stderr, "parnassus-live: %s\n", info.message);
            return -1;
        }
        if (o->midi_in_file) {
            a->midi->ops->open(a->midi, 0, 0, NULL);
            add_name(a->midi_in_names, sizeof a->midi_in_names, o->midi_in_file);
        }
        if (o->midi_out_file) {
            a->midi->ops->open(a->midi, 1, 0, NULL);
            add_name(a->midi_out_names, sizeof a->midi_out_names, o->midi_out_file);
        }
        return 0;
    }
    if (pnl_midi_portmidi_create(engine_clock, a->engine, o->midi_latency, &a->midi, &info) !=
        PN_OK) {
        fprintf(stderr, "parnassus-live: %s; playing without MIDI devices\n", info.message);
        return 0;
    }
    for (int i = 0; i < o->num_midi_in; ++i) {
        const int port = pnl_midi_find(a->midi, 0, o->midi_in[i], &info);
        if (port < 0 || a->midi->ops->open(a->midi, 0, port, &info) != PN_OK)
            fprintf(stderr, "parnassus-live: %s; playing on without it\n", info.message);
        else
            add_name(a->midi_in_names, sizeof a->midi_in_names,
                     a->midi->ops->port_name(a->midi, 0, port));
    }
    if (o->midi_out) {
        const int port = pnl_midi_find(a->midi, 1, o->midi_out, &info);
        if (port < 0 || a->midi->ops->open(a->midi, 1, port, &info) != PN_OK)
            fprintf(stderr, "parnassus-live: %s; playing on without it\n", info.message);
        else
            add_name(a->midi_out_names, sizeof a->midi_out_names,
                     a->midi->ops->port_name(a->midi, 1, port));
    }
    return 0;
}

static int write_midi_out_file(app *a)
{
    if (!a->o->midi_out_file || !a->midi)
        return 0;
    const pnl_midi_msg *msgs;
    const double *at;
    const size_t n = pnl_midi_memory_sent(a->midi, &msgs, &at);
    FILE *f = fopen(a->o->midi_out_file, "w");
    if (!f) {
        fprintf(stderr, "parnassus-live: %s: %s\n", a->o->midi_out_file, strerror(errno));
        return -1;
    }
    fprintf(f, "# time_s sent_at_s bytes (hex), stream clock\n");
    for (size_t i = 0; i < n; ++i) {
        fprintf(f, "%.6f %.6f", msgs[i].time, at[i]);
        for (int b = 0; b < msgs[i].size; ++b)
            fprintf(f, " %02x", msgs[i].bytes[b]);
        fputc('\n', f);
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* ---- commands, bindings, capture (the main thread) ---- */

static int write_capture(app *a, const char *path)
{
    pnl_engine_drain_capture(a->engine, a->capture);
    pnl_status st;
    pnl_engine_status(a->engine, &st);
    pn_error_info info = {PN_OK, ""};
    if (pnl_capture_write(a->capture, path, st.beat, st.bpm, &info) != PN_OK) {
        say(a, 1, "%s", info.message);
        return -1;
    }
    say(a, 0, "captured the last %d bars to %s", a->o->capture_bars, path);
    return 0;
}

static void print_status(app *a)
{
    pnl_status st;
    pnl_engine_status(a->engine, &st);
    static const char *const names[12] = {"C",  "C#", "D",  "D#", "E",  "F",
                                          "F#", "G",  "G#", "A",  "A#", "B"};
    printf("%s %.1f bpm, beat %.2f, %.1f s | sonority", st.rolling ? "playing" : "stopped", st.bpm,
           st.beat, st.stream_time);
    for (int v = 0; v < PNL_VOICES; ++v)
        if (st.sonority[v] >= 0)
            printf(" %s%d", names[st.sonority[v] % 12], st.sonority[v] / 12 - 1);
        else
            printf(" -");
    printf(" | rules kept %.0f (%s), solve %.0f ms, late steps %.0f | log2_lambda_w %g alpha %g | "
           "load %.0f %% (max %.0f %%) | level %.0f dBFS | notes %llu\n",
           (double)st.rules_selected, pnl_engine_rules_kept(a->engine), (double)st.solve_ms,
           (double)st.late_steps, (double)pnl_engine_control(a->engine, "log2_lambda_w"),
           (double)pnl_engine_control(a->engine, "alpha"), 100 * st.load, 100 * st.load_max,
           st.level > 1e-6 ? 20 * log10(st.level) : -120.0, (unsigned long long)st.notes_out);
    fflush(stdout);
}

static int set_knob(app *a, const char *symbol, const char *value)
{
    char *end;
    const double v = strtod(value, &end);
    if (end == value || *end || pnl_engine_set_control(a->engine, symbol, (float)v) != 0) {
        say(a, 1, "set %s %s: no such knob or not a number", symbol, value);
        return -1;
    }
    return 0;
}

static void apply_preset(app *a, int index)
{
    const int n = pnl_engine_preset_count(a->engine);
    if (n == 0) {
        say(a, 1, "the plugin has no presets");
        return;
    }
    index = ((index % n) + n) % n;
    pn_error_info info = {PN_OK, ""};
    if (pnl_engine_apply_preset(a->engine, index, &info) != 0) {
        say(a, 1, "%s", info.message);
        return;
    }
    a->preset = index;
    say(a, 0, "preset %d: %s", index + 1, pnl_engine_preset_label(a->engine, index));
}

/* "preset 3" (1-based) or "preset Chorale minor" (a label, any case) */
static void preset_command(app *a, const char *arg)
{
    char *end;
    const long number = strtol(arg, &end, 10);
    if (*arg && !*end) {
        if (number < 1 || number > pnl_engine_preset_count(a->engine))
            say(a, 1, "preset %s: expected 1..%d", arg, pnl_engine_preset_count(a->engine));
        else
            apply_preset(a, (int)number - 1);
        return;
    }
    for (int i = 0; i < pnl_engine_preset_count(a->engine); ++i)
        if (strcasecmp(pnl_engine_preset_label(a->engine, i), arg) == 0) {
            apply_preset(a, i);
            return;
        }
    say(a, 1, "preset '%s': no such preset (presets lists them)", arg);
}

static void list_presets(app *a)
{
    for (int i = 0; i < pnl_engine_preset_count(a->engine); ++i)
        say(a, 0, "%2d  %s%s", i + 1, pnl_engine_preset_label(a->engine, i),
            i == a->preset ? "  (current)" : "");
}

static void do_action(app *a, const char *target, double value)
{
    if (strcmp(target, "panic") == 0)
        pnl_engine_panic(a->engine);
    else if (strcmp(target, "preset_next") == 0)
        apply_preset(a, a->preset + 1);
    else if (strcmp(target, "preset_previous") == 0)
        apply_preset(a, a->preset < 0 ? -1 : a->preset - 1);
    else if (strcmp(target, "play_stop") == 0) {
        pnl_status st;
        pnl_engine_status(a->engine, &st);
        st.rolling ? pnl_engine_stop(a->engine) : pnl_engine_play(a->engine);
    } else if (strcmp(target, "capture") == 0) {
        char path[64];
        snprintf(path, sizeof path, "parnassus-capture-%ld.mid", (long)time(NULL));
        write_capture(a, path);
    } else {
        float lo, hi;
        if (pnl_engine_control_range(a->engine, target, NULL, &lo, &hi))
            pnl_engine_set_control(a->engine, target, (float)(lo + value * (hi - lo)));
    }
}

static void handle_midi_for_bindings(app *a)
{
    pnl_midi_msg m;
    uint32_t size;
    while (pnh_ring_read(&a->to_main, &m, sizeof m, &size)) {
        pnl_binding_hit hit;
        int learned = -1;
        const int was_learning = a->bindings.learning;
        if (!pnl_bindings_handle(&a->bindings, m.bytes, m.size, &hit, &learned)) {
            if (was_learning && !a->bindings.learning)
                say(a, 1, "learn: the map is full");
            continue;
        }
        if (was_learning) {
            if (learned < 0)
                continue;
            say(a, 0, "learned: %s", a->bindings.binding[learned].target);
            pn_error_info info = {PN_OK, ""};
            if (a->map_path[0] && pnl_bindings_save(&a->bindings, a->map_path, &info) != PN_OK)
                say(a, 1, "%s", info.message);
            continue;
        }
        if (hit.is_program) /* Program Change selects the preset of that number */
            apply_preset(a, (int)hit.value);
        else
            do_action(a, hit.target, hit.value);
    }
}

static void run_command(app *a, char *line)
{
    char *argv[8] = {0};
    int argc = 0;
    for (char *tok = strtok(line, " \t\r\n"); tok && argc < 8; tok = strtok(NULL, " \t\r\n"))
        argv[argc++] = tok;
    if (argc == 0)
        return;
    const char *cmd = argv[0];
    if (strcmp(cmd, "quit") == 0 || strcmp(cmd, "q") == 0)
        a->quit = 1;
    else if (strcmp(cmd, "set") == 0 && argc == 3)
        set_knob(a, argv[1], argv[2]);
    else if (strcmp(cmd, "play") == 0)
        pnl_engine_play(a->engine);
    else if (strcmp(cmd, "stop") == 0)
        pnl_engine_stop(a->engine);
    else if (strcmp(cmd, "panic") == 0)
        pnl_engine_panic(a->engine);
    else if (strcmp(cmd, "tempo") == 0 && argc == 2) {
        if (pnl_engine_set_tempo(a->engine, atof(argv[1])) != 0)
            say(a, 1, "tempo %s: expected 20..400 bpm", argv[1]);
    } else if (strcmp(cmd, "rules") == 0 && argc == 2) {
        if (access(argv[1], R_OK) != 0 || pnl_engine_load_rules(a->engine, argv[1]) != 0)
            say(a, 1, "rules %s: cannot read it", argv[1]);
    } else if (strcmp(cmd, "capture") == 0 && argc == 2)
        write_capture(a, argv[1]);
    else if (strcmp(cmd, "learn") == 0 && argc == 2) {
        if (pnl_bindings_learn(&a->bindings, argv[1]) == 0)
            say(a, 0, "learn: move a control for %s", argv[1]);
        else
            say(a, 1, "learn %s: not a target", argv[1]);
    } else if (strcmp(cmd, "preset") == 0 && argc >= 2) {
        /* a label may have spaces: the rest of the line */
        char label[256] = "";
        for (int i = 1; i < argc; ++i)
            snprintf(label + strlen(label), sizeof label - strlen(label), "%s%s", i > 1 ? " " : "",
                     argv[i]);
        preset_command(a, label);
    } else if (strcmp(cmd, "presets") == 0)
        list_presets(a);
    else if (strcmp(cmd, "next") == 0)
        apply_preset(a, a->preset + 1);
    else if (strcmp(cmd, "previous") == 0)
        apply_preset(a, a->preset < 0 ? -1 : a->preset - 1);
    else if (strcmp(cmd, "status") == 0) {
        if (!a->tui)
            print_status(a);
    } else
        say(a, 1,
            "unknown command '%s' (set SYMBOL VALUE, play, stop, tempo BPM, panic, rules FILE, "
            "preset N|LABEL, presets, next, previous, learn TARGET, capture FILE, status, quit)",
            cmd);
}

/* stdin, a line at a time, without blocking the loop */
static void poll_stdin(app *a, int *stdin_open)
{
    static char line[1024];
    static size_t used;
    fd_set fds;
    FD_ZERO(&fds);
    FD_SET(STDIN_FILENO, &fds);
    struct timeval tv = {0, 0};
    if (!*stdin_open || select(STDIN_FILENO + 1, &fds, NULL, NULL, &tv) <= 0)
        return;
    const ssize_t n = read(STDIN_FILENO, line + used, sizeof line - 1 - used);
    if (n <= 0) {
        *stdin_open = 0;
        return;
    }
    used += (size_t)n;
    line[used] = '\0';
    char *nl;
    while ((nl = strchr(line, '\n')) != NULL) {
        *nl = '\0';
        run_command(a, line);
        memmove(line, nl + 1, used - (size_t)(nl + 1 - line) + 1);
        used -= (size_t)(nl + 1 - line);
    }
    if (used == sizeof line - 1)
        used = 0; /* an overlong line is dropped */
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

static void fill_view(app *a, pnl_tui_view *v)
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

static void poll_tui(app *a, double *last_draw)
{
    pnl_tui_view v;
    fill_view(a, &v);
    char cmd[256];
    while (pnl_tui_poll(a->tui, &v, cmd, sizeof cmd))
        run_command(a, cmd);
    if (mono_now() - *last_draw >= 0.1) {
        fill_view(a, &v);
        pnl_tui_draw(a->tui, &v);
        *last_draw = mono_now();
    }
}

static void main_loop(app *a)
{
    int stdin_open = 1;
    double last_status = mono_now(), last_draw = 0;
    while (!a->quit) {
        if (a->tui)
            poll_tui(a, &last_draw);
        else
            poll_stdin(a, &stdin_open);
        handle_midi_for_bindings(a);
        pnl_engine_drain_capture(a->engine, a->capture);
        pnl_status st;
        pnl_engine_status(a->engine, &st);
        if (a->o->seconds > 0 && st.stream_time >= a->o->seconds)
            break;
        if (!a->o->headless && !a->tui && mono_now() - last_status >= 1.0) {
            print_status(a);
            last_status = mono_now();
        }
        if (!Pa_IsStreamActive(a->stream)) {
            say(a, 1, "the audio stream stopped (device gone?)");
            a->stream_died = 1;
            break;
        }
        sleep_seconds(0.005);
    }
}

/* ---- setting up and tearing down ---- */

static int apply_sets(app *a)
{
    for (int i = 0; i < a->o->num_sets; ++i) {
        char symbol[64];
        const char *eq = strchr(a->o->sets[i], '=');
        const size_t len = eq ? (size_t)(eq - a->o->sets[i]) : 0;
        if (!eq || len == 0 || len >= sizeof symbol) {
            fprintf(stderr, "parnassus-live: --set %s: expected SYMBOL=VALUE\n", a->o->sets[i]);
            return -1;
        }
        memcpy(symbol, a->o->sets[i], len);
        symbol[len] = '\0';
        if (set_knob(a, symbol, eq + 1) != 0)
            return -1;
    }
    if (a->o->rules &&
        (access(a->o->rules, R_OK) != 0 || pnl_engine_load_rules(a->engine, a->o->rules) != 0)) {
        fprintf(stderr, "parnassus-live: --rules %s: cannot read it\n", a->o->rules);
        return -1;
    }
    return 0;
}

static int load_bindings(app *a)
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
static int check_files(app *a)
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

static int setup(app *a, char *bundle_buf, size_t bundle_size)
{
    const pnl_app_options *o = a->o;
    pn_error_info info = {PN_OK, ""};
    if (check_files(a) != 0)
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
    if (pnl_engine_create(&es, &a->engine, &info) != PN_OK) {
        fprintf(stderr, "parnassus-live: the plugin did not load: %s\n", info.message);
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
    if (apply_sets(a) != 0 || open_midi(a) != 0)
        return -1;
    return 0;
}

static void stop_playing(app *a)
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
        sleep_seconds(0.005);
    }
}

/* Once the stream has stopped (or died: a device unplugged), no callback
 * runs: this thread runs a few buffers itself, so that every note still
 * sounding gets its note-off on the synth and the MIDI outputs. */
static void flush_notes(app *a)
{
    float left[4096], right[4096];
    pnl_engine_stop(a->engine);
    for (int i = 0; i < 4; ++i)
        pnl_engine_process(a->engine, left, right, a->max_block);
}

int pnl_app_run(const pnl_app_options *o)
{
    app a;
    memset(&a, 0, sizeof a);
    a.o = o;
    a.preset = -1;
    if (quiet_pa_initialize() != paNoError) {
        fprintf(stderr, "parnassus-live: PortAudio could not start\n");
        return PNL_EXIT_FAILURE;
    }
    int rc = PNL_EXIT_FAILURE;
    if (o->list_devices) {
        list_audio(stdout);
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
    if (setup(&a, bundle, sizeof bundle) != 0 || open_audio(&a) != 0)
        goto done;
    atomic_init(&a.midi_running, 1);
    if (a.midi && pthread_create(&a.midi_thread, NULL, midi_main, &a) == 0)
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
    if (o->capture && write_capture(&a, o->capture) != 0)
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
    if (a.engine && write_midi_out_file(&a) != 0) /* what was sent, even after a failure */
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
    pnh_ring_destroy(&a.to_main);
    return rc;
}
