/* parnassus-live: plays the Parnassus plugin from a laptop with a MIDI
 * keyboard, a controller and a synth, no DAW (docs/live.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "blas_kernels.h"
#include "live_app.h"

static const char usage[] =
    "usage: parnassus-live [options]\n"
    "\n"
    "Plays the Parnassus plugin live: the generated voices sound through a built-in\n"
    "synth (fluidsynth) and go to MIDI outputs; a keyboard can lead the soprano and a\n"
    "controller can move the knobs (MIDI learn).\n"
    "\n"
    "options:\n"
    "  --headless            no terminal interface: commands come on stdin\n"
    "                        (set SYMBOL VALUE, play, stop, tempo BPM, panic, rules FILE,\n"
    "                        learn TARGET, capture FILE, status, quit)\n"
    "  --seconds S           stop after S seconds of playing\n"
    "  --set SYMBOL=VALUE    set a plugin knob before playing (repeatable), e.g.\n"
    "                        --set log2_lambda_w=-4; --set seed=N plays seed N's\n"
    "                        music from the first step\n"
    "  --rules FILE          play this rule set instead of the built-in one, from\n"
    "                        the first step\n"
    "  --bundle DIR          the parnassus.lv2 bundle (default: LV2_PATH, or the build tree's)\n"
    "  --bpm B               tempo, 20..400 (120)\n"
    "  --sync MODE           internal (default) or midi-clock: follow MIDI clock in\n"
    "  --clock-out           with internal sync, send MIDI clock, Start and Stop to MIDI out\n"
    "  --capture FILE        when stopping, write the last bars played to FILE (.mid)\n"
    "  --capture-bars N      how many bars capture keeps, 1..1024 (16)\n"
    "  --audio-device D      audio output by index or part of its name (default: the\n"
    "                        default device)\n"
    "  --rate R              sample rate (48000)\n"
    "  --buffer N            frames per buffer, 16..8192 (256)\n"
    "  --list-devices        list audio and MIDI devices and exit\n"
    "  --midi-in D           a MIDI input by index or part of its name (repeatable)\n"
    "  --midi-out D          a MIDI output by index or part of its name\n"
    "  --midi-latency MS     how far ahead MIDI output is scheduled, 0..1000 ms (10)\n"
    "  --midi-in-file FILE   play a .mid file as the MIDI keyboard (no device needed)\n"
    "  --midi-out-file FILE  write what would go to MIDI out to FILE (one message a line)\n"
    "  --map FILE            MIDI-learn bindings (default\n"
    "                        $XDG_CONFIG_HOME/parnassus/live-map.json)\n"
    "  --no-synth            no built-in synth (MIDI out only)\n"
    "  --soundfont FILE      the synth's soundfont (default: Debian's General MIDI one)\n"
    "  --program N           the synth's General MIDI program, 1..128 (53, choir aahs)\n"
    "  -h, --help            this help\n"
    "  --version             the version and the BLAS kernels that run\n"
    "\n"
    "Exit status: 0 success, 1 failure (no audio device, the plugin did not load),\n"
    "2 bad usage.\n";

enum {
    OPT_HEADLESS = 256,
    OPT_SECONDS,
    OPT_SET,
    OPT_RULES,
    OPT_BUNDLE,
    OPT_BPM,
    OPT_SYNC,
    OPT_CAPTURE,
    OPT_CAPTURE_BARS,
    OPT_AUDIO_DEVICE,
    OPT_RATE,
    OPT_BUFFER,
    OPT_LIST,
    OPT_MIDI_IN,
    OPT_MIDI_OUT,
    OPT_MIDI_LATENCY,
    OPT_MIDI_IN_FILE,
    OPT_MIDI_OUT_FILE,
    OPT_MAP,
    OPT_NO_SYNTH,
    OPT_CLOCK_OUT,
    OPT_SOUNDFONT,
    OPT_PROGRAM,
    OPT_VERSION,
};

static const struct option long_options[] = {
    {"headless", no_argument, NULL, OPT_HEADLESS},
    {"seconds", required_argument, NULL, OPT_SECONDS},
    {"set", required_argument, NULL, OPT_SET},
    {"rules", required_argument, NULL, OPT_RULES},
    {"bundle", required_argument, NULL, OPT_BUNDLE},
    {"bpm", required_argument, NULL, OPT_BPM},
    {"sync", required_argument, NULL, OPT_SYNC},
    {"clock-out", no_argument, NULL, OPT_CLOCK_OUT},
    {"capture", required_argument, NULL, OPT_CAPTURE},
    {"capture-bars", required_argument, NULL, OPT_CAPTURE_BARS},
    {"audio-device", required_argument, NULL, OPT_AUDIO_DEVICE},
    {"rate", required_argument, NULL, OPT_RATE},
    {"buffer", required_argument, NULL, OPT_BUFFER},
    {"list-devices", no_argument, NULL, OPT_LIST},
    {"midi-in", required_argument, NULL, OPT_MIDI_IN},
    {"midi-out", required_argument, NULL, OPT_MIDI_OUT},
    {"midi-latency", required_argument, NULL, OPT_MIDI_LATENCY},
    {"midi-in-file", required_argument, NULL, OPT_MIDI_IN_FILE},
    {"midi-out-file", required_argument, NULL, OPT_MIDI_OUT_FILE},
    {"map", required_argument, NULL, OPT_MAP},
    {"no-synth", no_argument, NULL, OPT_NO_SYNTH},
    {"soundfont", required_argument, NULL, OPT_SOUNDFONT},
    {"program", required_argument, NULL, OPT_PROGRAM},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "parnassus-live: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nRun 'parnassus-live --help' for the options.\n");
    va_end(ap);
    return PNL_EXIT_USAGE;
}

static int parse_number(const char *option, const char *text, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    const double x = strtod(text, &end);
    if (errno || end == text || *end || !(x >= lo && x <= hi)) {
        char range[64];
        snprintf(range, sizeof range, "a number in [%g, %g]", lo, hi);
        usage_error("--%s: expected %s", option, range);
        return -1;
    }
    *out = x;
    return 0;
}

static int parse_args(int argc, char **argv, pnl_app_options *o)
{
    int c;
    double x;
    while ((c = getopt_long(argc, argv, "h", long_options, NULL)) != -1) {
        const char *v = optarg;
        switch (c) {
        case 'h':
            fputs(usage, stdout);
            return -1;
        case OPT_VERSION:
            printf("parnassus-live %s\n", PN_VERSION);
            pn_app_print_blas(stdout);
            return -1;
        case OPT_HEADLESS:
            o->headless = 1;
            break;
        case OPT_SECONDS:
            if (parse_number("seconds", v, 0, 1e7, &o->seconds))
                return PNL_EXIT_USAGE;
            break;
        case OPT_SET:
            if (o->num_sets == PNL_APP_MAX_SETS)
                return usage_error("--set: at most %d of them", PNL_APP_MAX_SETS);
            o->sets[o->num_sets++] = v;
            break;
        case OPT_RULES:
            o->rules = v;
            break;
        case OPT_BUNDLE:
            o->bundle = v;
            break;
        case OPT_BPM:
            if (parse_number("bpm", v, 20, 400, &o->bpm))
                return PNL_EXIT_USAGE;
            break;
        case OPT_SYNC:
            if (strcmp(v, "internal") == 0)
                o->sync = PNL_SYNC_INTERNAL;
            else if (strcmp(v, "midi-clock") == 0)
                o->sync = PNL_SYNC_MIDI_CLOCK;
            else
                return usage_error("--sync: expected internal or midi-clock, got '%s'", v);
            break;
        case OPT_CLOCK_OUT:
            o->clock_out = 1;
            break;
        case OPT_CAPTURE:
            o->capture = v;
            break;
        case OPT_CAPTURE_BARS:
            if (parse_number("capture-bars", v, 1, 1024, &x) || x != floor(x))
                return PNL_EXIT_USAGE;
            o->capture_bars = (int)x;
            break;
        case OPT_AUDIO_DEVICE:
            o->audio_device = v;
            break;
        case OPT_RATE:
            if (parse_number("rate", v, 8000, 384000, &o->rate))
                return PNL_EXIT_USAGE;
            break;
        case OPT_BUFFER:
            if (parse_number("buffer", v, 16, 8192, &x) || x != floor(x))
                return PNL_EXIT_USAGE;
            o->buffer = (int)x;
            break;
        case OPT_LIST:
            o->list_devices = 1;
            break;
        case OPT_MIDI_IN:
            if (o->num_midi_in == PNL_MIDI_MAX_PORTS)
                return usage_error("--midi-in: at most %d inputs", PNL_MIDI_MAX_PORTS);
            o->midi_in[o->num_midi_in++] = v;
            break;
        case OPT_MIDI_OUT:
            o->midi_out = v;
            break;
        case OPT_MIDI_LATENCY:
            if (parse_number("midi-latency", v, 0, 1000, &x))
                return PNL_EXIT_USAGE;
            o->midi_latency = x / 1000.0;
            break;
        case OPT_MIDI_IN_FILE:
            o->midi_in_file = v;
            break;
        case OPT_MIDI_OUT_FILE:
            o->midi_out_file = v;
            break;
        case OPT_MAP:
            o->map = v;
            break;
        case OPT_NO_SYNTH:
            o->no_synth = 1;
            break;
        case OPT_SOUNDFONT:
            o->soundfont = v;
            break;
        case OPT_PROGRAM:
            if (parse_number("program", v, 1, 128, &x) || x != floor(x))
                return PNL_EXIT_USAGE;
            o->program = (int)x - 1;
            break;
        default:
            fprintf(stderr, "Run 'parnassus-live --help' for the options.\n");
            return PNL_EXIT_USAGE;
        }
    }
    if (o->clock_out && o->sync != PNL_SYNC_INTERNAL)
        return usage_error("--clock-out: only the internal clock can be sent (not with --sync %s)",
                           "midi-clock");
    if (optind < argc)
        return usage_error("unexpected argument '%s'", argv[optind]);
    return PNL_EXIT_OK;
}

int main(int argc, char **argv)
{
    pn_app_use_full_blas_kernels(argv);
    pnl_app_options o;
    pnl_app_options_default(&o);
    const int rc = parse_args(argc, argv, &o);
    if (rc != PNL_EXIT_OK)
        return rc < 0 ? PNL_EXIT_OK : rc;
    return pnl_app_run(&o);
}
