/* parnassus-bench-live: parnassus-live's audio callback and MIDI output
 * timing (docs/benchmarks.md).
 *
 *   parnassus-bench-live [--markdown] [--buffers N] [--speed X] [--timing-seconds S]
 *                        [--bundle DIR]
 *
 * Runs the live engine (apps/live/live_engine.h: the plugin with its worker
 * thread, the built-in synth on its thread when a General MIDI soundfont
 * is installed) the way the PortAudio callback does, without an audio
 * device, and measures:
 * - the callback's own cost per 256-frame buffer at 48 kHz
 *   (pnl_engine_process), over N buffers (default 40,000) paced at X times
 *   real time (default 4) on a SCHED_FIFO thread when allowed: median,
 *   99.9th percentile and max (target: max < 50 us);
 * - MIDI output timing: S seconds (default 10) in real time with a MIDI
 *   thread handing the notes to the in-memory MIDI device every
 *   millisecond, as the app's does; for every message, how late it was
 *   handed over after its intended time on the stream clock (target:
 *   every message within 1 ms), and whether the intended times lie
 *   exactly on the step grid.
 * A measurement, not a test: the exit status is 0 whether targets are met
 * or not; 1 when the engine cannot start. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_support.h"
#include "live_engine.h"
#include "live_midi.h"
#include "live_synth.h"

#ifndef PN_BENCH_BUNDLE
#define PN_BENCH_BUNDLE "lv2/parnassus.lv2"
#endif

enum { BLOCK = 256, RATE = 48000 };

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static pnl_engine *engine(const char *bundle, pnl_synth *synth, double latency)
{
    pnl_engine_settings s;
    pnl_engine_settings_default(&s);
    s.bundle_dir = bundle;
    s.sample_rate = RATE;
    s.max_block = BLOCK;
    s.synth = synth;
    s.midi_latency = latency;
    pn_error_info info = {PN_OK, ""};
    pnl_engine *e = NULL;
    check(pnl_engine_create(&s, &e, &info), &info, "pnl_engine_create");
    return e;
}

static pnl_synth *synth_or_null(char *what, size_t n)
{
    if (!pnl_synth_find_soundfont()) {
        snprintf(what, n, "no synth (no General MIDI soundfont installed)");
        return NULL;
    }
    pnl_synth_settings ss;
    pnl_synth_settings_default(&ss);
    pn_error_info info = {PN_OK, ""};
    pnl_synth *synth = NULL;
    check(pnl_synth_create(&ss, &synth, &info), &info, "pnl_synth_create");
    snprintf(what, n, "synth on its own thread (%s)", pnl_synth_find_soundfont());
    return synth;
}

static void one_value_row(table *t, const char *what, double value, goal g, double target,
                          const char *details)
{
    samples s = {0};
    samples_add(&s, value);
    row *r = add_row(t, "live", what, UNIT_TIME, &s, g, target);
    snprintf(r->details, sizeof r->details, "%s", details);
}

/* The callback's own cost, buffer by buffer. */
static void callback_cost(table *t, const char *bundle, long buffers, double speed)
{
    char synth_what[128];
    pnl_synth *synth = synth_or_null(synth_what, sizeof synth_what);
    pnl_engine *e = engine(bundle, synth, 0.01);
    float left[BLOCK], right[BLOCK];
    double *cost = xmalloc((size_t)buffers * sizeof *cost);
    pnl_midi_msg drained[256];
    const int rt = make_realtime();
    const double period = BLOCK / (double)RATE / speed, started = now();
    double floor_gap = 0;
    for (long b = 0; b < buffers; ++b) {
        const double t0 = now();
        pnl_engine_process(e, left, right, BLOCK);
        cost[b] = now() - t0;
        while (pnl_engine_drain_midi_out(e, drained, 256) > 0) {
        }
        const double gap = largest_gap(5e-6);
        floor_gap = gap > floor_gap ? gap : floor_gap;
        sleep_until(started + (double)(b + 1) * period);
    }
    leave_realtime(rt);
    pnl_status st;
    pnl_engine_status(e, &st);
    const unsigned long long underruns = synth ? (unsigned long long)pnl_synth_underruns(synth) : 0;
    qsort(cost, (size_t)buffers, sizeof *cost, cmp_double);
    char details[512];
    snprintf(details, sizeof details,
             "%ld buffers (%.0f s of music) at %g x real time, 120 bpm 1/8, %llu notes, %s, "
             "%llu synth underruns; %s",
             buffers, (double)buffers * BLOCK / RATE, speed, (unsigned long long)st.notes_out,
             synth_what, underruns, rt ? "SCHED_FIFO 50" : "normal priority");
    one_value_row(t, "callback per 256-frame buffer, median", cost[buffers / 2], GOAL_NONE, 0,
                  details);
    one_value_row(t, "callback per 256-frame buffer, 99.9th pct",
                  cost[(long)(0.999 * (double)(buffers - 1))], GOAL_NONE, 0, details);
    one_value_row(t, "callback per 256-frame buffer, max", cost[buffers - 1], GOAL_BELOW, 50e-6,
                  details);
    one_value_row(t, "noise floor beside the buffers, max", floor_gap, GOAL_NONE, 0,
                  "largest gap between two back-to-back clock reads in a 5 us window after each "
                  "buffer of the same pass: what the machine alone adds to a max");
    free(cost);
    pnl_engine_free(e);
    pnl_synth_free(synth);
}

/* ---- MIDI output timing ---- */

typedef struct midi_run {
    pnl_engine *e;
    pnl_midi_backend *device;
    atomic_int running;
} midi_run;

/* the app's MIDI thread, with the in-memory device */
static void *midi_main(void *arg)
{
    midi_run *m = arg;
    pnl_midi_msg batch[256], in[16];
    while (atomic_load(&m->running)) {
        m->device->ops->poll(m->device, pnl_engine_clock(m->e), in, 16);
        size_t n;
        while ((n = pnl_engine_drain_midi_out(m->e, batch, 256)) > 0)
            for (size_t i = 0; i < n; ++i)
                m->device->ops->send(m->device, &batch[i]);
        const struct timespec pause = {0, 1000000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void midi_timing(table *t, const char *bundle, double seconds)
{
    const double latency = 0.010, step = 0.25; /* 1/8 at 120 bpm */
    midi_run m = {.e = engine(bundle, NULL, latency)};
    pn_error_info info = {PN_OK, ""};
    check(pnl_midi_memory_create("none", NULL, 0, "memory out", &m.device, &info), &info,
          "pnl_midi_memory_create");
    m.device->ops->open(m.device, 1, 0, NULL);
    atomic_init(&m.running, 1);
    pthread_t thread;
    if (pthread_create(&thread, NULL, midi_main, &m) != 0) {
        fprintf(stderr, "parnassus-bench-live: no MIDI thread\n");
        exit(1);
    }
    float left[BLOCK], right[BLOCK];
    const long buffers = (long)(seconds * RATE / BLOCK);
    const int rt = make_realtime();
    const double period = BLOCK / (double)RATE, started = now();
    for (long b = 0; b < buffers; ++b) {
        pnl_engine_process(m.e, left, right, BLOCK);
        sleep_until(started + (double)(b + 1) * period);
    }
    leave_realtime(rt);
    sleep_until(now() + 0.02); /* the last hand-overs */
    atomic_store(&m.running, 0);
    pthread_join(thread, NULL);

    const pnl_midi_msg *sent;
    const double *at;
    const size_t n = pnl_midi_memory_sent(m.device, &sent, &at);
    double late_max = 0, off_grid = 0;
    double *ahead = xmalloc((n ? n : 1) * sizeof *ahead);
    long on_count = 0;
    for (size_t i = 0; i < n; ++i) {
        const double late = at[i] - sent[i].time;
        late_max = late > late_max ? late : late_max;
        ahead[i] = sent[i].time - at[i];
        if (sent[i].size == 3 && (sent[i].bytes[0] & 0xF0) == 0x90 && sent[i].bytes[2] > 0) {
            const double k = round((sent[i].time - latency) / step);
            const double off = fabs(sent[i].time - latency - k * step);
            off_grid = off > off_grid ? off : off_grid;
            ++on_count;
        }
    }
    qsort(ahead, n ? n : 1, sizeof *ahead, cmp_double);
    char details[256];
    snprintf(details, sizeof details,
             "%zu messages (%ld note-ons) in %g s in real time, MIDI latency %.0f ms, the MIDI "
             "thread polling every 1 ms; handed over a median %.1f ms before due; note-ons off "
             "the step grid by at most %.3g us",
             n, on_count, seconds, latency * 1e3, n ? ahead[n / 2] * 1e3 : 0.0, off_grid * 1e6);
    one_value_row(t, "MIDI out: latest hand-over after the intended time", late_max, GOAL_BELOW,
                  1e-3, details);
    free(ahead);
    m.device->ops->destroy(m.device);
    pnl_engine_free(m.e);
}

int main(int argc, char **argv)
{
    const char *bundle = PN_BENCH_BUNDLE;
    long buffers = 40000;
    double speed = 4.0, timing_seconds = 10.0;
    int markdown = 0;
    for (int i = 1; i < argc; ++i) {
        if (strcmp(argv[i], "--markdown") == 0)
            markdown = 1;
        else if (strcmp(argv[i], "--buffers") == 0 && i + 1 < argc)
            buffers = atol(argv[++i]);
        else if (strcmp(argv[i], "--speed") == 0 && i + 1 < argc)
            speed = atof(argv[++i]);
        else if (strcmp(argv[i], "--timing-seconds") == 0 && i + 1 < argc)
            timing_seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--bundle") == 0 && i + 1 < argc)
            bundle = argv[++i];
        else {
            fprintf(stderr, "usage: parnassus-bench-live [--markdown] [--buffers N] [--speed X] "
                            "[--timing-seconds S] [--bundle DIR]\n");
            return 2;
        }
    }
    if (buffers < 100 || !(speed > 0) || !(timing_seconds > 0)) {
        fprintf(stderr,
                "parnassus-bench-live: --buffers >= 100, --speed and --timing-seconds > 0\n");
        return 2;
    }
    table t = {0};
    progress("live: %ld buffers at %g x real time", buffers, speed);
    callback_cost(&t, bundle, buffers, speed);
    progress("live: MIDI output timing, %g s in real time", timing_seconds);
    midi_timing(&t, bundle, timing_seconds);
    if (markdown)
        print_markdown(&t);
    else
        print_text(&t);
    return 0;
}
