/* parnassus-bench-plugin: the plugin as a host runs it (docs/benchmarks.md).
 *
 *   parnassus-bench-plugin [--markdown] [--blocks N] [--bundle DIR]
 *
 * Hosts parnassus.lv2 through lilv (apps/lv2host) with the built-in rule
 * set and measures:
 * - the audio thread's time per 256-frame block (run() plus the
 *   work_response() calls of that block), over N blocks (default 100,000)
 *   with the transport rolling at 120 bpm in 1/8 and the worker on its own
 *   thread: median, 99.9th percentile and max (target max < 20 us);
 * - knob change to new realization: from setting log2_lambda_w to the
 *   block where the new realization is installed (worker thread);
 * - the context step: the solve time the plugin reports (solve_ms) for
 *   each step's re-realization, with a synchronous worker;
 * - instantiation (the first realization exists before the first run()).
 * A measurement, not a test: the exit status is 0 whether targets are met
 * or not; 1 when the host or the plugin fails. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_support.h"
#include "lv2host.h"

#ifndef PN_BENCH_BUNDLE
#define PN_BENCH_BUNDLE "lv2/parnassus.lv2"
#endif

#define PLUGIN_URI "urn:parnassus:lv2"
enum { BLOCK = 256 };

typedef struct audio_clock {
    int depth;
    double worker_entered;
    double entered, entered_cpu;
    double block_total; /* seconds on the audio side in this block (wall) */
    double block_cpu;   /* ... and this thread's CPU time there */
} audio_clock;

/* CPU time of the calling thread: what run() itself costs, without the
 * time the scheduler gave to other threads meanwhile. */
static double thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void audio_enter(void *user)
{
    audio_clock *c = user;
    if (c->depth++ == 0) {
        c->entered_cpu = thread_cpu();
        c->entered = now();
    }
}

static void audio_leave(void *user)
{
    audio_clock *c = user;
    if (--c->depth == 0) {
        c->block_total += now() - c->entered;
        c->block_cpu += thread_cpu() - c->entered_cpu;
    }
}

/* With a synchronous worker, work() runs inside run(): its time is not
 * run()'s own. */
static void worker_enter(void *user)
{
    audio_clock *c = user;
    c->worker_entered = now();
}

static void worker_leave(void *user)
{
    audio_clock *c = user;
    c->block_total -= now() - c->worker_entered;
}

/* Real-time priority for this (the audio) thread, as hosts give theirs;
 * the worker thread, started before, keeps the normal policy. */
static int make_realtime(void)
{
    struct sched_param p = {0};
    p.sched_priority = 50;
    return pthread_setschedparam(pthread_self(), SCHED_FIFO, &p) == 0;
}

static pnh_host *host(const char *bundle, pnh_worker_mode mode, audio_clock *clock)
{
    pnh_settings s;
    pnh_settings_default(&s);
    s.plugin_uri = PLUGIN_URI;
    s.bundle_dir = bundle;
    s.max_block = BLOCK;
    s.worker_mode = mode;
    if (clock) {
        s.hooks.audio_enter = audio_enter;
        s.hooks.audio_leave = audio_leave;
        if (mode == PNH_WORKER_IMMEDIATE) {
            s.hooks.worker_enter = worker_enter;
            s.hooks.worker_leave = worker_leave;
        }
        s.hooks.user = clock;
    }
    pnh_host *h = NULL;
    pn_error_info info = {0};
    check(pnh_create(&s, &h, &info), &info, "pnh_create");
    check(pnh_activate(h, &info), &info, "pnh_activate");
    pnh_transport t;
    pnh_transport_default(&t);
    check(pnh_set_transport(h, &t, &info), &info, "pnh_set_transport");
    return h;
}

static void run_block(pnh_host *h)
{
    pn_error_info info = {0};
    if (pnh_run(h, BLOCK, NULL, NULL, &info) < 0)
        check(PN_ERR_INVALID, &info, "pnh_run");
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void one_value_row(table *t, const char *what, double value, goal g, double target,
                          const char *details)
{
    samples s = {0};
    samples_add(&s, value);
    row *r = add_row(t, "plugin", what, UNIT_TIME, &s, g, target);
    snprintf(r->details, sizeof r->details, "%s", details);
}

int main(int argc, char **argv)
{
    const char *bundle = PN_BENCH_BUNDLE;
    long blocks = 100000;
    double speed = 4.0; /* blocks run this many times faster than real time */
    int markdown = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--markdown"))
            markdown = 1;
        else if (!strcmp(argv[i], "--blocks") && i + 1 < argc)
            blocks = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--bundle") && i + 1 < argc)
            bundle = argv[++i];
        else if (!strcmp(argv[i], "--speed") && i + 1 < argc)
            speed = strtod(argv[++i], NULL);
        else {
            fprintf(stderr, "usage: parnassus-bench-plugin [--markdown] [--blocks N] [--speed X] [--bundle DIR]\n");
            return 2;
        }
    }
    if (blocks < 100)
        blocks = 100;
    table t = {0};
    char details[256];

    /* instantiation: the built-in set's first realization */
    samples inst = {0};
    for (int r = 0; r < 3; ++r) {
        const stopwatch sw = start_timer();
        pnh_host *h = host(bundle, PNH_WORKER_IMMEDIATE, NULL);
        stop_timer(&sw, &inst);
        pnh_free(h);
    }
    row *ri = add_row(&t, "plugin", "instantiate + activate (first realization, built-in set)",
                      UNIT_TIME, &inst, GOAL_NONE, 0);
    snprintf(ri->details, sizeof ri->details, "lilv load, de-overlap, cold solve, samplers");

    /* the audio thread, block by block */
    audio_clock clock = {0};
    pnh_host *h = host(bundle, PNH_WORKER_THREADED, &clock);
    const int realtime = make_realtime();
    double *cost = xmalloc((size_t)blocks * sizeof *cost);
    double *cpu = xmalloc((size_t)blocks * sizeof *cpu);
    progress("plugin: %ld blocks of %d frames at %g x real time", blocks, BLOCK, speed);
    const double period = BLOCK / 48000.0 / (speed > 0 ? speed : 1.0);
    const double started = now();
    long worst = 0;
    for (long b = 0; b < blocks; ++b) {
        clock.block_total = clock.block_cpu = 0;
        run_block(h);
        cost[b] = clock.block_total;
        cpu[b] = clock.block_cpu;
        if (cost[b] > cost[worst])
            worst = b;
        /* pace the blocks, so the worker's realizations arrive as in a host */
        const double due = started + (double)(b + 1) * period;
        const double wait = due - now();
        if (wait > 0) {
            struct timespec ts = {(time_t)wait, (long)((wait - floor(wait)) * 1e9)};
            nanosleep(&ts, NULL);
        }
    }
    pnh_worker_stats ws;
    pnh_worker_stats_get(h, &ws);
    if (realtime) {
        struct sched_param p = {0};
        pthread_setschedparam(pthread_self(), SCHED_OTHER, &p);
    }
    qsort(cost, (size_t)blocks, sizeof *cost, cmp_double);
    qsort(cpu, (size_t)blocks, sizeof *cpu, cmp_double);
    snprintf(details, sizeof details,
             "%ld blocks (%.0f s of music at 48 kHz) at %g x real time, 120 bpm 1/8, %llu jobs done "
             "by the worker thread, %.0f late steps; the worst was block %ld; audio thread %s",
             blocks, (double)blocks * BLOCK / 48000.0, speed, (unsigned long long)ws.completed,
             pnh_get_control(h, "late_steps"), worst,
             realtime ? "SCHED_FIFO 50" : "not real-time (SCHED_FIFO refused)");
    one_value_row(&t, "run() + work_response() per 256-frame block, median", cost[blocks / 2],
                  GOAL_NONE, 0, details);
    one_value_row(&t, "run() + work_response() per 256-frame block, 99.9th pct",
                  cost[(long)(0.999 * (double)(blocks - 1))], GOAL_NONE, 0, details);
    one_value_row(&t, "run() + work_response() per 256-frame block, max", cost[blocks - 1],
                  GOAL_BELOW, 20e-6, details);
    /* the machine's own floor: the largest gap between two consecutive
     * clock reads of this (real-time) thread over as many samples, while
     * the worker thread solves on the other core */
    {
        if (realtime)
            (void)make_realtime();
        double worst_gap = 0, worst_gap_cpu = 0;
        for (long b = 0; b < blocks; ++b) {
            const double c0 = thread_cpu(), t0 = now();
            const double t1 = now(), c1 = thread_cpu();
            if (t1 - t0 > worst_gap)
                worst_gap = t1 - t0;
            if (c1 - c0 > worst_gap_cpu)
                worst_gap_cpu = c1 - c0;
        }
        if (realtime) {
            struct sched_param p = {0};
            pthread_setschedparam(pthread_self(), SCHED_OTHER, &p);
        }
        char floor_details[256];
        snprintf(floor_details, sizeof floor_details,
                 "largest gap between two back-to-back clock reads in %ld tries (CPU clock: %.0f us): "
                 "what the machine alone adds to a max",
                 blocks, worst_gap_cpu * 1e6);
        one_value_row(&t, "noise floor of this machine, max", worst_gap, GOAL_NONE, 0,
                      floor_details);
    }
    one_value_row(&t, "the same, audio thread CPU time, median", cpu[blocks / 2], GOAL_NONE, 0,
                  "CLOCK_THREAD_CPUTIME_ID: the work run() does, whatever the scheduler did");
    one_value_row(&t, "the same, audio thread CPU time, max", cpu[blocks - 1], GOAL_BELOW, 20e-6,
                  "CLOCK_THREAD_CPUTIME_ID: the work run() does, whatever the scheduler did");
    free(cost);
    free(cpu);

    /* run()'s own cost with a synchronous worker: no thread to wake, the
     * nested work() subtracted; every step realized in time */
    {
        audio_clock sync_clock = {0};
        pnh_host *hs = host(bundle, PNH_WORKER_IMMEDIATE, &sync_clock);
        const long n = blocks / 4;
        double *own = xmalloc((size_t)n * sizeof *own);
        const int rt = make_realtime();
        for (long b = 0; b < n; ++b) {
            sync_clock.block_total = sync_clock.block_cpu = 0;
            run_block(hs);
            own[b] = sync_clock.block_total;
            if (own[b] > 30e-6)
                progress("plugin: synchronous block %ld took %.0f us", b, own[b] * 1e6);
        }
        if (rt) {
            struct sched_param p = {0};
            pthread_setschedparam(pthread_self(), SCHED_OTHER, &p);
        }
        qsort(own, (size_t)n, sizeof *own, cmp_double);
        snprintf(details, sizeof details,
                 "%ld blocks with a synchronous worker (work() time subtracted): the plugin's own "
                 "work per block, no thread wake-up; 99.9th pct %.0f us",
                 n, own[(long)(0.999 * (double)(n - 1))] * 1e6);
        one_value_row(&t, "run() own cost per block, synchronous worker, median", own[n / 2],
                      GOAL_NONE, 0, details);
        one_value_row(&t, "run() own cost per block, synchronous worker, max", own[n - 1],
                      GOAL_BELOW, 20e-6, details);
        free(own);
        pnh_free(hs);
    }

    /* knob change to new realization (worker thread, blocks back to back,
     * the transport stopped so no context step shares the worker) */
    samples knob = {0};
    {
        pn_error_info info = {0};
        pnh_transport stopped;
        pnh_transport_default(&stopped);
        stopped.rolling = 0;
        check(pnh_set_transport(h, &stopped, &info), &info, "pnh_set_transport");
    }
    for (int r = 0; r < 10; ++r) {
        pn_error_info info = {0};
        pnh_worker_stats before;
        check(pnh_wait_worker_idle(h, 60.0) ? PN_OK : PN_ERR_INVALID, &info, "worker idle");
        run_block(h);
        pnh_worker_stats_get(h, &before);
        const stopwatch sw = start_timer();
        check(pnh_set_control(h, "log2_lambda_w", r % 2 ? -1.0f : 1.0f, &info), &info, "set");
        for (;;) {
            run_block(h);
            pnh_worker_stats ws2;
            pnh_worker_stats_get(h, &ws2);
            if (ws2.responses > before.responses)
                break;
        }
        stop_timer(&sw, &knob);
    }
    row *rk = add_row(&t, "plugin", "knob change to new realization (log2_lambda_w +-1)",
                      UNIT_TIME, &knob, GOAL_BELOW, 0.1);
    snprintf(rk->details, sizeof rk->details,
             "from the port change to the block that installs the realization (transport stopped)");
    pnh_free(h);

    /* context steps: solve_ms as the plugin reports it */
    pnh_host *s = host(bundle, PNH_WORKER_IMMEDIATE, NULL);
    samples steps = {0};
    float last = pnh_get_control(s, "solve_ms");
    for (int b = 0; b < 48000 * 20 / BLOCK && steps.n < 40; ++b) {
        run_block(s);
        const float ms = pnh_get_control(s, "solve_ms");
        if (ms != last && b > 0)
            samples_add(&steps, ms / 1000.0);
        last = ms;
    }
    row *rs = add_row(&t, "plugin", "context step re-realization (solve_ms, built-in set)",
                      UNIT_TIME, &steps, GOAL_BELOW, 0.1);
    snprintf(rs->details, sizeof rs->details,
             "each step's warm re-solve for the drawn sonority, as reported on the solve_ms port");
    pnh_free(s);

    if (markdown)
        print_markdown(&t);
    else
        print_text(&t);
    return 0;
}
