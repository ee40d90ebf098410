/* parnassus render: hosts the LV2 plugin as a DAW would (lilv discovery,
 * URID map, a synchronous worker, a rolling transport) and writes what it
 * played to a Standard MIDI File (docs/cli.md). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "cmd_render.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lv2/atom/util.h>
#include <lv2/patch/patch.h>

#include "lv2host.h"
#include "midi_events.h"
#include "midi_notes.h"
#include "options.h"
#include "uris.h"

static const char command[] = "render";

enum {
    OPT_BARS,
    OPT_BPM,
    OPT_BEATS_PER_BAR,
    OPT_RATE,
    OPT_BLOCK,
    OPT_PRESET,
    OPT_RULES,
    OPT_SEED,
    OPT_BUNDLE,
    OPT_OUTPUT,
    OPT_MIDI_IN_FILE,
    NUM_OPTIONS
};

static const pn_cli_option render_options[NUM_OPTIONS] = {
    [OPT_BARS] = {"bars", 1},
    [OPT_BPM] = {"bpm", 1},
    [OPT_BEATS_PER_BAR] = {"beats-per-bar", 1},
    [OPT_RATE] = {"rate", 1},
    [OPT_BLOCK] = {"block", 1},
    [OPT_PRESET] = {"preset", 1},
    [OPT_RULES] = {"rules", 1},
    [OPT_SEED] = {"seed", 1},
    [OPT_BUNDLE] = {"bundle", 1},
    [OPT_OUTPUT] = {"output", 1},
    [OPT_MIDI_IN_FILE] = {"midi-in-file", 1},
};

enum {
    MAX_SETS = 64,
    MAX_ARGS = 256,
    TICKS_PER_QUARTER = 960,
    MAX_SEED = 16777215, /* the seed port is a float: integers exact up to 2^24 */
};

typedef struct render_request {
    int bars;
    double bpm;
    int beats_per_bar;
    double rate;
    int block;
    int bars_given; /* --bars given: else a --midi-in-file sets the length */
    const char *preset, *rules, *seed, *bundle, *output, *midi_in;
    const char *sets[MAX_SETS]; /* "SYMBOL=VALUE" */
    int num_sets;
} render_request;

static void print_help(void)
{
    printf("usage: parnassus render -o OUT.mid [options]\n"
           "\n"
           "Runs the Parnassus LV2 plugin the way a DAW does (discovered through its\n"
           "Turtle by lilv, a synchronous worker, the transport rolling from bar 1)\n"
           "and writes the MIDI it played to OUT.mid (format 1, %d ticks per quarter).\n"
           "\n"
           "options:\n"
           "  -o, --output OUT     the MIDI file to write (required)\n"
           "  --bars N             bars to play, 1..10000 (default 16, or as many as the\n"
           "                       --midi-in-file lasts)\n"
           "  --bpm B              tempo in quarter notes per minute, 20..400 (default 120)\n"
           "  --beats-per-bar N    1..32 (default 4)\n"
           "  --rate R             sample rate, 8000..384000 (default 48000)\n"
           "  --block N            frames per run() call, 1..8192 (default 256)\n"
           "  --set SYMBOL=VALUE   set a control port before playing (repeatable), e.g.\n"
           "                       --set division=3 --set log2_lambda_w=-4\n"
           "  --preset NAME        apply a preset first, by label or URI (e.g. Strict)\n"
           "  --rules FILE         play this rule set (sent as patch:Set)\n"
           "  --seed S             the plugin's seed, 1..%d (0: from the clock)\n"
           "  --midi-in-file FILE  play the notes of FILE (.mid) into the plugin's control\n"
           "                       port as a keyboard would, on their beats at --bpm from\n"
           "                       bar 1; with --set input_mode=1 (2) the key held\n"
           "                       becomes the soprano (bass) of each step\n"
           "  --bundle DIR         the parnassus.lv2 bundle to load (default: LV2_PATH,\n"
           "                       else the build tree's, else the standard LV2 path)\n"
           "  -h, --help           show this help\n"
           "\n"
           "Options take their value as '--opt VALUE' or '--opt=VALUE'.\n"
           "Exit status: 0 success, 1 failure, 2 bad usage or bad input file.\n",
           TICKS_PER_QUARTER, MAX_SEED);
}

/* The shared parser keeps the last value of a repeated option, so the
 * repeatable --set is taken out of argv first. */
static int take_sets(int argc, char **argv, render_request *req, char **rest, int *num_rest)
{
    int n = 0, done = 0;
    for (int i = 0; i < argc; ++i) {
        const char *w = argv[i];
        if (!done && strcmp(w, "--") == 0)
            done = 1;
        const char *value = NULL;
        if (!done && strcmp(w, "--set") == 0) {
            if (i + 1 >= argc)
                return pn_cli_usage_error(command, "missing value for option '--set'");
            value = argv[++i];
        } else if (!done && strncmp(w, "--set=", 6) == 0) {
            value = w + 6;
        }
        if (value) {
            if (req->num_sets == MAX_SETS)
                return pn_cli_usage_error(command, "more than %d --set options", MAX_SETS);
            req->sets[req->num_sets++] = value;
            continue;
        }
        if (n == MAX_ARGS)
            return pn_cli_usage_error(command, "too many arguments");
        rest[n++] = argv[i];
    }
    *num_rest = n;
    return PN_EXIT_OK;
}

/* Returns PN_EXIT_OK, PN_EXIT_USAGE, or -1 when help was printed. */
static int parse_request(int argc, char **argv, render_request *req)
{
    memset(req, 0, sizeof *req);
    req->bars = 16;
    req->bpm = 120.0;
    req->beats_per_bar = 4;
    req->rate = 48000.0;
    req->block = 256;
    char *rest[MAX_ARGS];
    int num_rest = 0;
    int rc = take_sets(argc, argv, req, rest, &num_rest);
    if (rc != PN_EXIT_OK)
        return rc;
    pn_cli_args a;
    rc = pn_cli_parse(command, render_options, NUM_OPTIONS, 0, num_rest, rest, &a);
    if (rc != PN_EXIT_OK)
        return rc;
    if (a.help) {
        print_help();
        return -1;
    }
    req->output = a.value[OPT_OUTPUT];
    if (!req->output || req->output[0] == '\0')
        return pn_cli_usage_error(command, "missing -o OUT.mid");
    const char *v;
    if ((v = a.value[OPT_BARS]) &&
        pn_cli_int(command, "bars", v, 1, 10000, &req->bars) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    req->bars_given = v != NULL;
    if ((v = a.value[OPT_BPM]) && pn_cli_real(command, "bpm", v, 20.0, 400.0, &req->bpm) != 0)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_BEATS_PER_BAR]) &&
        pn_cli_int(command, "beats-per-bar", v, 1, 32, &req->beats_per_bar) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_RATE]) &&
        pn_cli_real(command, "rate", v, 8000.0, 384000.0, &req->rate) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_BLOCK]) &&
        pn_cli_int(command, "block", v, 1, 8192, &req->block) != PN_EXIT_OK)
        return PN_EXIT_USAGE;
    if ((v = a.value[OPT_SEED])) {
        int seed;
        if (pn_cli_int(command, "seed", v, 0, MAX_SEED, &seed) != PN_EXIT_OK)
            return PN_EXIT_USAGE;
        req->seed = v;
    }
    req->preset = a.value[OPT_PRESET];
    req->rules = a.value[OPT_RULES];
    req->bundle = a.value[OPT_BUNDLE];
    req->midi_in = a.value[OPT_MIDI_IN_FILE];
    return pn_cli_check_output(command, "output", req->output);
}

/* ---- collecting what the plugin plays ---- */

typedef struct capture {
    pn_midi_event *events;
    size_t count, capacity;
    int64_t clamp; /* events at or after this frame are put at it (-1: none) */
    LV2_URID midi_type;
    int failed;
    /* the plugin's reports of the rules its realization keeps */
    LV2_URID object, patch_set, patch_property, patch_value, selected_rules, string, urid;
    char selection[1024]; /* the last one */
    long selections;      /* how many times the selection changed */
} capture;

/* patch:Set selectedRules "<names>" from the notify port. */
static void on_selection(capture *c, const pnh_event *ev)
{
    if (ev->size < sizeof(LV2_Atom_Object_Body))
        return;
    const LV2_Atom_Object_Body *body = ev->body;
    if (body->otype != c->patch_set)
        return;
    const LV2_Atom *property = NULL, *value = NULL;
    lv2_atom_object_body_get(ev->size, body, c->patch_property, &property, c->patch_value, &value,
                             0);
    if (!property || property->type != c->urid ||
        ((const LV2_Atom_URID *)property)->body != c->selected_rules || !value ||
        value->type != c->string || value->size < 1)
        return;
    const char *names = LV2_ATOM_BODY_CONST(value);
    const size_t len = strnlen(names, value->size);
    const size_t n = len < sizeof c->selection - 1 ? len : sizeof c->selection - 1;
    memcpy(c->selection, names, n);
    c->selection[n] = '\0';
    ++c->selections;
}

static void on_event(void *user, const pnh_event *ev)
{
    capture *c = user;
    if (ev->type == c->object) {
        on_selection(c, ev);
        return;
    }
    if (ev->type != c->midi_type || ev->size < 1 || ev->size > 3)
        return;
    if (c->count == c->capacity) {
        size_t cap = c->capacity ? 2 * c->capacity : 1024;
        pn_midi_event *p = realloc(c->events, cap * sizeof *p);
        if (!p) {
            c->failed = 1;
            return;
        }
        c->events = p;
        c->capacity = cap;
    }
    pn_midi_event *e = &c->events[c->count++];
    e->frame = c->clamp >= 0 && ev->abs_frame > c->clamp ? c->clamp : ev->abs_frame;
    e->size = (uint8_t)ev->size;
    memset(e->bytes, 0, sizeof e->bytes);
    memcpy(e->bytes, ev->body, ev->size);
}

/* ---- setting up the plugin ---- */

static int apply_sets(pnh_host *h, const render_request *req)
{
    for (int i = 0; i < req->num_sets; ++i) {
        const char *s = req->sets[i];
        const char *eq = strchr(s, '=');
        if (!eq || eq == s || eq[1] == '\0')
            return pn_cli_usage_error(command, "--set: expected SYMBOL=VALUE, got '%s'", s);
        char symbol[128];
        size_t len = (size_t)(eq - s);
        if (len >= sizeof symbol)
            return pn_cli_usage_error(command, "--set: symbol too long in '%s'", s);
        memcpy(symbol, s, len);
        symbol[len] = '\0';
        float def, lo, hi;
        int index = pnh_port_index(h, symbol);
        if (!pnh_control_range(h, symbol, &def, &lo, &hi) || index < 0)
            return pn_cli_usage_error(command, "--set: the plugin has no control port '%s'",
                                      symbol);
        double value;
        double min = isnan(lo) ? -INFINITY : lo, max = isnan(hi) ? INFINITY : hi;
        char option[160];
        snprintf(option, sizeof option, "set %s", symbol);
        if (pn_cli_real(command, option, eq + 1, min, max, &value) != PN_EXIT_OK)
            return PN_EXIT_USAGE;
        pn_error_info info = {PN_OK, ""};
        if (pnh_set_control(h, symbol, (float)value, &info) != PN_OK)
            return pn_cli_usage_error(command, "--set: '%s' is not an input control port", symbol);
    }
    return PN_EXIT_OK;
}

static int setup(pnh_host *h, const render_request *req)
{
    pn_error_info info = {PN_OK, ""};
    if (req->preset && pnh_preset_apply(h, req->preset, &info) != PN_OK) {
        fprintf(stderr, "parnassus render: --preset: %s\n", info.message);
        return info.code == PN_ERR_INVALID ? PN_EXIT_USAGE : PN_EXIT_FAILURE;
    }
    int rc = apply_sets(h, req);
    if (rc != PN_EXIT_OK)
        return rc;
    if (req->seed && pnh_set_control(h, "seed", (float)atof(req->seed), &info) != PN_OK) {
        fprintf(stderr, "parnassus render: --seed: %s\n", info.message);
        return PN_EXIT_FAILURE;
    }
    if (req->rules) {
        char path[PATH_MAX];
        if (!realpath(req->rules, path)) {
            fprintf(stderr, "parnassus render: --rules: %s: %s\n", req->rules, strerror(errno));
            return PN_EXIT_USAGE;
        }
        if (pnh_queue_patch_set_path(h, 0, PNP__ruleSet, path, &info) != PN_OK) {
            fprintf(stderr, "parnassus render: --rules: %s\n", info.message);
            return PN_EXIT_FAILURE;
        }
    }
    pnh_transport t;
    pnh_transport_default(&t);
    t.bpm = req->bpm;
    t.beats_per_bar = req->beats_per_bar;
    if (pnh_set_transport(h, &t, &info) != PN_OK || pnh_activate(h, &info) != PN_OK) {
        fprintf(stderr, "parnassus render: %s\n", info.message);
        return PN_EXIT_FAILURE;
    }
    return PN_EXIT_OK;
}

/* ---- a MIDI file played into the control port ---- */

typedef struct keyboard {
    const pn_midi_notes *notes; /* NULL: none */
    double frames_per_tick;     /* at the render's tempo and rate */
    int32_t next;               /* the first event not queued yet */
    long played;                /* note-ons queued */
} keyboard;

static int64_t key_frame(const keyboard *kb, int32_t i)
{
    return llround((double)kb->notes->events[i].tick * kb->frames_per_tick);
}

/* Queues the events due before frame `end` for the block that starts at
 * `start`; one the host's queue has no room for goes into the next block. */
static void queue_keys(pnh_host *h, keyboard *kb, int64_t start, int64_t end)
{
    for (; kb->notes && kb->next < kb->notes->count; kb->next++) {
        const int64_t frame = key_frame(kb, kb->next);
        if (frame >= end)
            return;
        const pn_midi_note_event *e = &kb->notes->events[kb->next];
        const uint8_t bytes[3] = {(uint8_t)((e->on ? 0x90 : 0x80) | e->channel), e->key,
                                  e->on ? e->velocity : 64};
        pn_error_info info;
        if (pnh_queue_midi(h, frame > start ? frame - start : 0, bytes, 3, &info) != PN_OK)
            return;
        kb->played += e->on;
    }
}

/* Plays `total` frames with the transport rolling, then a last block with
 * the transport stopped and the plugin disabled, whose note-offs are put
 * at the end. The plugin plays on through a stop when it follows only the
 * host's tempo or its own (sync 1 and 2): disabling it is what ends its
 * notes there, and keeps it from starting a step after the end. */
static int play(pnh_host *h, const render_request *req, int64_t total, capture *cap, keyboard *kb)
{
    pn_error_info info = {PN_OK, ""};
    cap->clamp = -1;
    for (int64_t done = 0; done < total;) {
        uint32_t n = (uint32_t)(total - done < req->block ? total - done : req->block);
        queue_keys(h, kb, done, done + n);
        if (pnh_run(h, n, on_event, cap, &info) < 0) {
            fprintf(stderr, "parnassus render: %s\n", info.message);
            return PN_EXIT_FAILURE;
        }
        done += n;
    }
    cap->clamp = total;
    if (pnh_run_last(h, (uint32_t)req->block, on_event, cap, &info) < 0) {
        fprintf(stderr, "parnassus render: %s\n", info.message);
        return PN_EXIT_FAILURE;
    }
    if (cap->failed) {
        fprintf(stderr, "parnassus render: out of memory\n");
        return PN_EXIT_FAILURE;
    }
    return PN_EXIT_OK;
}

static int write_midi(const render_request *req, int64_t total, const capture *cap)
{
    pn_midi_events_settings ms;
    pn_midi_events_settings_default(&ms);
    ms.sample_rate = req->rate;
    ms.tempo_bpm = req->bpm;
    ms.division = TICKS_PER_QUARTER;
    ms.format = 1;
    ms.beats_per_bar = req->beats_per_bar;
    ms.end_frame = total;
    ms.name = "Parnassus";
    pn_error_info info = {PN_OK, ""};
    if (pn_midi_events_write(req->output, cap->events, cap->count, &ms, NULL, &info) != PN_OK) {
        fprintf(stderr, "parnassus render: %s\n", info.message);
        return info.code == PN_ERR_IO ? PN_EXIT_USAGE : PN_EXIT_FAILURE;
    }
    return PN_EXIT_OK;
}

static void print_summary(const pnh_host *h, const render_request *req, int64_t total,
                          const capture *cap)
{
    long ons = 0, offs = 0;
    for (size_t i = 0; i < cap->count; ++i) {
        const pn_midi_event *e = &cap->events[i];
        unsigned kind = e->bytes[0] >> 4;
        if (kind == 0x9 && e->size == 3 && e->bytes[2] > 0)
            ++ons;
        else if (kind == 0x8 || (kind == 0x9 && e->size == 3))
            ++offs;
    }
    printf("rendered %d bars of %d beats at %g bpm: %lld frames at %g Hz in blocks of %d\n",
           req->bars, req->beats_per_bar, req->bpm, (long long)total, req->rate, req->block);
    printf("notes played: %ld (%ld note-offs, %zu MIDI events)\n", ons, offs, cap->count);
    static const char *const outputs[] = {"rules_selected", "weighted_error", "solve_ms",
                                          "late_steps"};
    for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; ++i)
        printf("%s: %g\n", outputs[i], (double)pnh_get_control(h, outputs[i]));
    if (cap->selections > 0)
        printf("rules kept at the end: %s (the selection changed %ld times)\n", cap->selection,
               cap->selections - 1);
    printf("wrote %s\n", req->output);
}

static int run(const render_request *req, const pn_midi_notes *notes)
{
    char bundle_buf[PATH_MAX];
    const char *bundle =
        pnh_find_bundle(req->bundle, "parnassus.lv2", bundle_buf, sizeof bundle_buf);
    pnh_settings s;
    pnh_settings_default(&s);
    s.plugin_uri = PNP_URI;
    s.bundle_dir = bundle;
    s.sample_rate = req->rate;
    s.max_block = (uint32_t)req->block;
    s.worker_mode = PNH_WORKER_IMMEDIATE;
    s.notify_events = 1;
    pn_error_info info = {PN_OK, ""};
    pnh_host *h = NULL;
    if (pnh_create(&s, &h, &info) != PN_OK) {
        fprintf(stderr, "parnassus render: %s\n", info.message);
        return req->bundle ? PN_EXIT_USAGE : PN_EXIT_FAILURE;
    }
    capture cap = {0};
    cap.midi_type = pnh_map(h, "http://lv2plug.in/ns/ext/midi#MidiEvent");
    cap.object = pnh_map(h, LV2_ATOM__Object);
    cap.patch_set = pnh_map(h, LV2_PATCH__Set);
    cap.patch_property = pnh_map(h, LV2_PATCH__property);
    cap.patch_value = pnh_map(h, LV2_PATCH__value);
    cap.selected_rules = pnh_map(h, PNP__selectedRules);
    cap.string = pnh_map(h, LV2_ATOM__String);
    cap.urid = pnh_map(h, LV2_ATOM__URID);
    const int64_t total =
        llround((double)req->bars * req->beats_per_bar * req->rate * 60.0 / req->bpm);
    keyboard kb = {notes, 0.0, 0, 0};
    if (notes)
        kb.frames_per_tick = 60.0 / req->bpm * req->rate / notes->division;
    int rc = setup(h, req);
    if (rc == PN_EXIT_OK && notes && pnh_get_control(h, "input_mode") < 0.5f)
        fprintf(stderr, "parnassus render: note: input_mode is off, so the plugin plays on "
                        "without harmonizing the keys of --midi-in-file (--set input_mode=1: "
                        "the key held is the soprano, 2: the bass)\n");
    if (rc == PN_EXIT_OK)
        rc = play(h, req, total, &cap, &kb);
    /* A render is clean or it is not written: with --rules, an error is
     * most likely that file (the plugin names it). */
    if (rc == PN_EXIT_OK && pnh_log_errors(h) > 0) {
        fprintf(stderr, "parnassus render: the plugin logged errors:\n%s", pnh_log_text(h));
        rc = req->rules ? PN_EXIT_USAGE : PN_EXIT_FAILURE;
    }
    if (rc == PN_EXIT_OK)
        rc = write_midi(req, total, &cap);
    if (rc == PN_EXIT_OK) {
        print_summary(h, req, total, &cap);
        if (notes) {
            long ons = 0;
            for (int32_t i = 0; i < notes->count; ++i)
                ons += notes->events[i].on;
            printf("played %ld of the %ld notes of %s into the control port", kb.played, ons,
                   req->midi_in);
            fputs(kb.played < ons ? " (the others start after the last bar)\n" : "\n", stdout);
        }
    }
    pnh_free(h);
    free(cap.events);
    return rc;
}

int pn_cmd_render(int argc, char **argv)
{
    render_request req;
    int rc = parse_request(argc, argv, &req);
    if (rc != PN_EXIT_OK)
        return rc < 0 ? PN_EXIT_OK : rc;
    pn_midi_notes *notes = NULL;
    if (req.midi_in) {
        pn_error_info info = {PN_OK, ""};
        if (pn_midi_read_notes(req.midi_in, &notes, &info) != PN_OK) {
            fprintf(stderr, "parnassus render: --midi-in-file: %s\n", info.message);
            return info.code == PN_ERR_NOMEM ? PN_EXIT_FAILURE : PN_EXIT_USAGE;
        }
        if (!req.bars_given) { /* as many bars as the file lasts */
            const double beats = (double)notes->length_ticks / notes->division;
            const double bars = ceil(beats / req.beats_per_bar);
            req.bars = bars < 1.0 ? 1 : bars > 10000.0 ? 10000 : (int)bars;
        }
    }
    rc = run(&req, notes);
    pn_midi_notes_free(notes);
    return rc;
}
