/* parnassus-bench-plugin: the plugin as a host runs it (docs/benchmarks.md).
 *
 *   parnassus-bench-plugin [--markdown] [--blocks N] [--speed X] [--late-seconds S]
 *                          [--bundle DIR]
 *
 * Hosts parnassus.lv2 through lilv (apps/lv2host) with the built-in rule
 * set and measures:
 * - the audio thread's time per 256-frame block (run() plus the
 *   work_response() calls of that block), over N blocks (default 100,000)
 *   with the transport rolling at 120 bpm in 1/8 and the worker on its own
 *   thread: median, 99.9th percentile and max, with the machine's own
 *   noise floor beside them;
 * - run()'s own cost per block: the N blocks replayed three times with one
 *   seed and a synchronous worker, each block's least time (target max
 *   < 20 us);
 * - knob change to new realization: from setting log2_lambda_w to the
 *   block where the new realization is installed (worker thread);
 * - the context step: every step's work() job (re-solve and alias table),
 *   twelve seeds of 100 steps (target: 99th percentile < 100 ms; the
 *   twelfth-slowest of 1200 steps moves less between runs than the
 *   fourth-slowest of 300);
 * - late steps: S seconds (default 60) of music in real time with the
 *   worker thread, in 8ths and in 16ths at 120 bpm from instantiation, and
 *   in 16ths after the transport stood for 2 s (a DAW's play), three runs
 *   each (target: 0 in every run);
 * - instantiation (the first realization exists before the first run()).
 * A measurement, not a test: the exit status is 0 whether targets are met
 * or not; 1 when the host or the plugin fails. */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lv2/midi/midi.h>

#include "bench_support.h"
#include "lv2host.h"
#include "uris.h"

#ifndef PN_BENCH_BUNDLE
#define PN_BENCH_BUNDLE "lv2/parnassus.lv2"
#endif

enum { BLOCK = 256 };

typedef struct audio_clock {
    int depth;
    int in_worker;
    double entered, worker_entered, nested_entered;
    double nested;      /* audio-side time inside the current work() */
    double block_total; /* seconds on the audio side in this block (wall) */
} audio_clock;

static void audio_enter(void *user)
{
    audio_clock *c = user;
    if (c->depth++ == 0)
        c->entered = now();
    else if (c->in_worker)
        c->nested_entered = now();
}

static void audio_leave(void *user)
{
    audio_clock *c = user;
    if (--c->depth == 0)
        c->block_total += now() - c->entered;
    else if (c->in_worker)
        c->nested += now() - c->nested_entered;
}

/* With a synchronous worker, work() runs inside run(): its time is not
 * run()'s own, but the work_response() it calls back (nested in it) is. */
static void worker_enter(void *user)
{
    audio_clock *c = user;
    c->in_worker = 1;
    c->nested = 0;
    c->worker_entered = now();
}

static void worker_leave(void *user)
{
    audio_clock *c = user;
    c->block_total -= now() - c->worker_entered - c->nested;
    c->in_worker = 0;
}

/* work() calls timed one by one, on the (synchronous) worker. */
typedef struct job_clock {
    double entered;
    double *times;
    long count, capacity;
} job_clock;

static void job_enter(void *user)
{
    job_clock *c = user;
    c->entered = now();
}

static void job_leave(void *user)
{
    job_clock *c = user;
    if (c->count < c->capacity)
        c->times[c->count++] = now() - c->entered;
}

/* The plugin set up as a host restoring a session does: the seed (when
 * not 0) set before activation. Without draw_at_activation it is
 * activated disabled and enabled after, so that activate() draws nothing
 * ahead and every step's re-solve is a work() job the hooks can time. */
static pnh_host *host_with(const char *bundle, pnh_worker_mode mode, const pnh_hooks *hooks,
                           float seed, int draw_at_activation)
{
    pnh_settings s;
    pnh_settings_default(&s);
    s.plugin_uri = PNP_URI;
    s.bundle_dir = bundle;
    s.max_block = BLOCK;
    s.worker_mode = mode;
    if (hooks)
        s.hooks = *hooks;
    pnh_host *h = NULL;
    pn_error_info info = {0};
    check(pnh_create(&s, &h, &info), &info, "pnh_create");
    if (seed != 0.0f)
        check(pnh_set_control(h, "seed", seed, &info), &info, "set seed");
    if (!draw_at_activation)
        check(pnh_set_control(h, "enable", 0.0f, &info), &info, "disable");
    check(pnh_activate(h, &info), &info, "pnh_activate");
    if (!draw_at_activation)
        check(pnh_set_control(h, "enable", 1.0f, &info), &info, "enable");
    pnh_transport t;
    pnh_transport_default(&t);
    check(pnh_set_transport(h, &t, &info), &info, "pnh_set_transport");
    return h;
}

/* A host whose audio side (and, with a synchronous worker, work()) is
 * timed by clock; NULL: untimed. */
static pnh_host *host(const char *bundle, pnh_worker_mode mode, audio_clock *clock, float seed)
{
    pnh_hooks hooks = {0};
    if (clock) {
        hooks.audio_enter = audio_enter;
        hooks.audio_leave = audio_leave;
        if (mode == PNH_WORKER_IMMEDIATE) {
            hooks.worker_enter = worker_enter;
            hooks.worker_leave = worker_leave;
        }
        hooks.user = clock;
    }
    return host_with(bundle, mode, clock ? &hooks : NULL, seed, 1);
}

/* Every step's re-solve a timed work() job: nothing drawn at activation. */
static pnh_host *job_host(const char *bundle, job_clock *jc, float seed)
{
    const pnh_hooks hooks = {.worker_enter = job_enter, .worker_leave = job_leave, .user = jc};
    return host_with(bundle, PNH_WORKER_IMMEDIATE, &hooks, seed, 0);
}

static void run_block(pnh_host *h)
{
    pn_error_info info = {0};
    if (pnh_run(h, BLOCK, NULL, NULL, &info) < 0)
        check(PN_ERR_INVALID, &info, "pnh_run");
}

/* FNV-1a over every event a block played: replays compare by it. */
static void hash_event(void *user, const pnh_event *ev)
{
    uint64_t *hash = user;
    const unsigned char *bytes = ev->body;
    const int64_t head[2] = {ev->abs_frame, (int64_t)ev->size};
    const unsigned char *h = (const unsigned char *)head;
    for (size_t i = 0; i < sizeof head; ++i)
        *hash = (*hash ^ h[i]) * 1099511628211ull;
    for (uint32_t i = 0; i < ev->size; ++i)
        *hash = (*hash ^ bytes[i]) * 1099511628211ull;
}

/* One replay of n blocks with a fixed seed: each block's own cost (work()
 * subtracted) sets least[b] on the first replay and lowers it after;
 * signature is the hash of everything played. */
static void replay(const char *bundle, long n, double *least, int first, uint64_t *signature)
{
    audio_clock c = {0};
    pnh_host *h = host(bundle, PNH_WORKER_IMMEDIATE, &c, 4242.0f);
    pn_error_info info = {0};
    uint64_t hash = 1469598103934665603ull;
    const int rt = make_realtime();
    for (long b = 0; b < n; ++b) {
        c.block_total = 0;
        if (pnh_run(h, BLOCK, hash_event, &hash, &info) < 0)
            check(PN_ERR_INVALID, &info, "pnh_run");
        if (first || c.block_total < least[b])
            least[b] = c.block_total;
    }
    leave_realtime(rt);
    *signature = hash;
    pnh_free(h);
}

/* The transport at bar 1, rolling at 120 bpm or standing. */
static void queue_transport(pnh_host *h, int rolling)
{
    pnh_position p = {0};
    p.fields = PNH_POS_SPEED | PNH_POS_BPM | PNH_POS_BAR | PNH_POS_BAR_BEAT | PNH_POS_BEAT_UNIT |
               PNH_POS_BEATS_PER_BAR;
    p.speed = rolling ? 1.0f : 0.0f;
    p.bpm = 120.0f;
    p.beat_unit = 4;
    p.beats_per_bar = 4;
    pn_error_info info = {0};
    check(pnh_queue_position(h, 0, &p, &info), &info, "pnh_queue_position");
}

/* Plays `seconds` of music in real time with the worker on its own thread
 * at 120 bpm, `per_beat` steps a beat: from instantiation, or (stopped > 0)
 * after `stopped` seconds with the transport standing, as a DAW plays
 * when play is pressed. Returns the late steps; *steps is how many steps
 * were due (one at the first frame, then every step's frames) and
 * *late_first those late among the first eight. */
static double late_steps(const char *bundle, int division, int per_beat, double stopped,
                         double seconds, long *steps, double *late_first)
{
    pnh_host *h = host(bundle, PNH_WORKER_THREADED, NULL, 0.0f);
    pn_error_info info = {0};
    check(pnh_set_control(h, "division", (float)division, &info), &info, "set division");
    const long step_frames = 48000L * 60 / 120 / per_beat;
    const long blocks = (long)(seconds * 48000.0 / BLOCK);
    const long standing = (long)(stopped * 48000.0 / BLOCK);
    *late_first = -1;
    const int rt = make_realtime();
    const double period = BLOCK / 48000.0, started = now();
    if (standing > 0)
        queue_transport(h, 0);
    for (long b = 0; b < standing; ++b) {
        run_block(h);
        sleep_until(started + (double)(b + 1) * period);
    }
    if (standing > 0)
        queue_transport(h, 1);
    for (long b = 0; b < blocks; ++b) {
        run_block(h);
        if (*late_first < 0 && (b + 1) * BLOCK > 7 * step_frames)
            *late_first = pnh_get_control(h, "late_steps");
        sleep_until(started + (double)(standing + b + 1) * period);
    }
    leave_realtime(rt);
    const double late = pnh_get_control(h, "late_steps");
    if (*late_first < 0) /* a run shorter than eight steps */
        *late_first = late;
    pnh_free(h);
    *steps = (blocks * BLOCK + step_frames - 1) / step_frames;
    return late;
}

/* A thread that sleeps on a semaphore, as a host's worker does. */
typedef struct sleeper {
    sem_t wake, done;
    int stop;
} sleeper;

static void *sleeper_main(void *arg)
{
    sleeper *s = arg;
    for (;;) {
        while (sem_wait(&s->wake) != 0) {
        }
        if (s->stop)
            return NULL;
        sem_post(&s->done);
    }
}

/* Times `count` sem_post() calls that each wake a sleeping thread: what a
 * host's schedule_work() adds to run() on this machine, with no plugin.
 * Fills times[] (seconds); returns 0 when no thread could be started. */
static int time_wakes(double *times, long count)
{
    sleeper s = {0};
    pthread_t thread;
    if (sem_init(&s.wake, 0, 0) != 0 || sem_init(&s.done, 0, 0) != 0 ||
        pthread_create(&thread, NULL, sleeper_main, &s) != 0)
        return 0;
    const int rt = make_realtime();
    for (long i = 0; i < count; ++i) {
        const struct timespec pause = {0, 1000000}; /* let it fall asleep */
        nanosleep(&pause, NULL);
        const double t0 = now();
        sem_post(&s.wake);
        times[i] = now() - t0;
        while (sem_wait(&s.done) != 0) {
        }
    }
    leave_realtime(rt);
    s.stop = 1;
    sem_post(&s.wake);
    pthread_join(thread, NULL);
    sem_destroy(&s.wake);
    sem_destroy(&s.done);
    return 1;
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

typedef struct bench_options {
    const char *bundle;
    long blocks;
    double speed; /* blocks run this many times faster than real time */
    double late_seconds;
    int markdown;
} bench_options;

/* 0, or 2 after the usage line. */
static int parse_args(int argc, char **argv, bench_options *o)
{
    o->bundle = PN_BENCH_BUNDLE;
    o->blocks = 100000;
    o->speed = 4.0;
    o->late_seconds = 60.0;
    o->markdown = 0;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--markdown"))
            o->markdown = 1;
        else if (!strcmp(argv[i], "--blocks") && i + 1 < argc)
            o->blocks = strtol(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--bundle") && i + 1 < argc)
            o->bundle = argv[++i];
        else if (!strcmp(argv[i], "--speed") && i + 1 < argc)
            o->speed = strtod(argv[++i], NULL);
        else if (!strcmp(argv[i], "--late-seconds") && i + 1 < argc)
            o->late_seconds = strtod(argv[++i], NULL);
        else {
            fprintf(stderr, "usage: parnassus-bench-plugin [--markdown] [--blocks N] [--speed X] "
                            "[--late-seconds S] [--bundle DIR]\n");
            return 2;
        }
    }
    if (o->blocks < 100)
        o->blocks = 100;
    return 0;
}

/* instantiation: the built-in set's first realization */
static void bench_instantiate(table *t, const char *bundle)
{
    samples inst = {0};
    for (int r = 0; r < 3; ++r) {
        const stopwatch sw = start_timer();
        pnh_host *h = host(bundle, PNH_WORKER_IMMEDIATE, NULL, 0.0f);
        stop_timer(&sw, &inst);
        pnh_free(h);
    }
    row *ri = add_row(t, "plugin", "instantiate + activate (first realization, built-in set)",
                      UNIT_TIME, &inst, GOAL_NONE, 0);
    snprintf(ri->details, sizeof ri->details,
             "lilv load, de-overlap, cold solve, samplers, warm-up re-solves over up to six "
             "sonorities until the selection holds; activate() draws and realizes the first "
             "three steps");
}

/* the audio thread, block by block, on h (its audio side timed by clock) */
static void bench_blocks(table *t, pnh_host *h, audio_clock *clock, long blocks, double speed)
{
    char details[256];
    const int realtime = make_realtime();
    double *cost = xmalloc((size_t)blocks * sizeof *cost);
    double *waking = xmalloc((size_t)blocks * sizeof *waking);
    long wakes = 0;
    double floor_gap = 0;
    progress("plugin: %ld blocks of %d frames at %g x real time", blocks, BLOCK, speed);
    const double period = BLOCK / 48000.0 / (speed > 0 ? speed : 1.0);
    const double started = now();
    long worst = 0;
    for (long b = 0; b < blocks; ++b) {
        pnh_worker_stats before, after;
        pnh_worker_stats_get(h, &before);
        clock->block_total = 0;
        run_block(h);
        cost[b] = clock->block_total;
        const double gap = largest_gap(5e-6);
        if (gap > floor_gap)
            floor_gap = gap;
        pnh_worker_stats_get(h, &after);
        if (after.scheduled > before.scheduled)
            waking[wakes++] = cost[b];
        if (cost[b] > cost[worst])
            worst = b;
        /* pace the blocks, so the worker's realizations arrive as in a host */
        sleep_until(started + (double)(b + 1) * period);
    }
    pnh_worker_stats ws;
    pnh_worker_stats_get(h, &ws);
    leave_realtime(realtime);
    qsort(cost, (size_t)blocks, sizeof *cost, cmp_double);
    qsort(waking, (size_t)(wakes ? wakes : 1), sizeof *waking, cmp_double);
    snprintf(
        details, sizeof details,
        "%ld blocks (%.0f s of music at 48 kHz) at %g x real time, 120 bpm 1/8, %llu jobs done "
        "by the worker thread, %.0f late steps; the worst was block %ld; audio thread %s",
        blocks, (double)blocks * BLOCK / 48000.0, speed, (unsigned long long)ws.completed,
        pnh_get_control(h, "late_steps"), worst,
        realtime ? "SCHED_FIFO 50" : "not real-time (SCHED_FIFO refused)");
    one_value_row(t, "run() + work_response() per 256-frame block, median", cost[blocks / 2],
                  GOAL_NONE, 0, details);
    one_value_row(t, "run() + work_response() per 256-frame block, 99.9th pct",
                  cost[(long)(0.999 * (double)(blocks - 1))], GOAL_NONE, 0, details);
    one_value_row(t, "run() + work_response() per 256-frame block, max", cost[blocks - 1],
                  GOAL_BELOW, 20e-6, details);
    if (wakes > 0) {
        char wake_details[256];
        snprintf(wake_details, sizeof wake_details,
                 "the %ld blocks whose run() scheduled a job: the host's schedule_work() wakes "
                 "its worker thread there (max %.0f us)",
                 wakes, waking[wakes - 1] * 1e6);
        one_value_row(t, "the same, blocks that wake the worker, median", waking[wakes / 2],
                      GOAL_NONE, 0, wake_details);
    }
    /* the machine's own floor, measured beside the blocks: after every
     * block the same thread reads the clock back to back for 5 us (longer
     * than a block's median) and keeps the largest gap, so it is exposed
     * to stalls of the virtual CPU as often as run() is, with the worker
     * solving on the other core just the same */
    one_value_row(t, "noise floor beside the blocks, max", floor_gap, GOAL_NONE, 0,
                  "largest gap between two back-to-back clock reads in a 5 us window after "
                  "each of the blocks above: what the machine alone adds to a max");
    free(cost);
    free(waking);
}

/* waking a sleeping thread alone: the host's part of the blocks above
 * that schedule a job */
static void bench_wakes(table *t)
{
    enum { WAKES = 2000 };
    double *wake = xmalloc(WAKES * sizeof *wake);
    if (time_wakes(wake, WAKES)) {
        qsort(wake, WAKES, sizeof *wake, cmp_double);
        char wake_details[256];
        snprintf(wake_details, sizeof wake_details,
                 "%d sem_post() calls from this (real-time) thread, each waking a thread "
                 "asleep on the semaphore, no plugin: the host's part of those blocks; "
                 "max %.0f us",
                 WAKES, wake[WAKES - 1] * 1e6);
        one_value_row(t, "waking a sleeping thread alone (sem_post), median", wake[WAKES / 2],
                      GOAL_NONE, 0, wake_details);
    }
    free(wake);
}

/* run()'s own cost: the same blocks replayed with one seed and a
 * synchronous worker (work() subtracted). A block's cost is its least
 * over the replays: what the plugin does is the same every time, what
 * the machine adds (a stalled virtual CPU, an interrupt) is not. */
static void bench_own_cost(table *t, const char *bundle, long blocks)
{
    char details[256];
    const long n = blocks;
    const int replays = 3;
    double *own = xmalloc((size_t)n * sizeof *own);
    uint64_t first_signature = 0;
    int same = 1;
    for (int r = 0; r < replays; ++r) {
        uint64_t signature = 0;
        replay(bundle, n, own, r == 0, &signature);
        if (r == 0)
            first_signature = signature;
        else if (signature != first_signature)
            same = 0;
    }
    if (!same)
        progress("plugin: the replays played different notes; their least costs do not "
                 "compare block by block");
    long worst_own = 0;
    for (long b = 0; b < n; ++b)
        if (own[b] > own[worst_own])
            worst_own = b;
    qsort(own, (size_t)n, sizeof *own, cmp_double);
    snprintf(details, sizeof details,
             "%ld blocks, least of %d replays with one seed (%s), synchronous worker with "
             "work() subtracted; 99.9th pct %.1f us; the worst was block %ld",
             n, replays, same ? "identical notes" : "NOT identical notes",
             own[(long)(0.999 * (double)(n - 1))] * 1e6, worst_own);
    one_value_row(t, "run() own cost per block, median", own[n / 2], GOAL_NONE, 0, details);
    one_value_row(t, "run() own cost per block, max", own[n - 1], same ? GOAL_BELOW : GOAL_NONE,
                  20e-6, details);
    free(own);
}

/* knob change to new realization on h (worker thread, blocks back to
 * back, the transport stopped so no context step shares the worker) */
static void bench_knob_change(table *t, pnh_host *h)
{
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
    row *rk = add_row(t, "plugin", "knob change to new realization (log2_lambda_w +-1)", UNIT_TIME,
                      &knob, GOAL_BELOW, 0.1);
    snprintf(rk->details, sizeof rk->details,
             "from the port change to the block that installs the realization (transport stopped)");
}

/* The rows of the context steps: job[0..jobs-1] sorted, first[] each
 * seed's first step. */
static void context_step_rows(table *t, const double *job, long jobs, const double *first,
                              int seeds, int steps_per_seed)
{
    const char *what = "context step re-realization (built-in set)";
    if (jobs == 0) {
        row *none = add_row(t, "plugin", what, UNIT_TIME, NULL, GOAL_BELOW, 0.1);
        snprintf(none->details, sizeof none->details, "no step was played");
        return;
    }
    samples steps = {0};
    samples_add(&steps, job[0]);
    row *rs = add_row(t, "plugin", what, UNIT_TIME, &steps, GOAL_NONE, 0);
    rs->runs = (int)jobs;
    rs->median = jobs % 2 ? job[jobs / 2] : 0.5 * (job[jobs / 2 - 1] + job[jobs / 2]);
    rs->max = job[jobs - 1];
    double first_max = 0.0;
    for (int i = 0; i < seeds; ++i)
        first_max = first[i] > first_max ? first[i] : first_max;
    snprintf(rs->details, sizeof rs->details,
             "work() per step: warm re-solve for the drawn sonority, then its alias "
             "table; %d seeds x %d steps from instantiation, synchronous worker; 90th pct "
             "%.0f ms; each seed's first step at most %.0f ms",
             seeds, steps_per_seed, job[(long)(0.9 * (double)(jobs - 1))] * 1e3, first_max * 1e3);
    /* what keeps 16ths at 120 bpm (125 ms a step) in time: the tail */
    const double p99 = job[(long)(0.99 * (double)(jobs - 1))];
    samples tail = {0};
    samples_add(&tail, p99);
    row *rp = add_row(t, "plugin", "context step re-realization, 99th pct", UNIT_TIME, &tail,
                      GOAL_BELOW, 0.1);
    rp->runs = (int)jobs;
    snprintf(rp->details, sizeof rp->details,
             "the same %ld steps; a step at 1/16 and 120 bpm lasts 125 ms, and with up "
             "to 1.6 s of music drawn ahead slower steps are absorbed by the steps "
             "before it",
             jobs);
}

/* context steps: every work() job of a rolling transport with the knobs
 * left alone is one step's re-realization, timed whole (solve, alias
 * table, statistics); over twelve seeds */
static void bench_context_steps(table *t, const char *bundle)
{
    enum { SEEDS = 12, STEPS_PER_SEED = 100 };
    double *job = xmalloc(SEEDS * STEPS_PER_SEED * sizeof *job);
    double first[SEEDS] = {0}; /* each seed's first step after instantiation */
    long jobs = 0;
    for (int seed = 1; seed <= SEEDS; ++seed) {
        job_clock jc = {0};
        jc.times = job + jobs;
        jc.capacity = STEPS_PER_SEED;
        pnh_host *s = job_host(bundle, &jc, (float)seed);
        for (long b = 0; b < 48000L * 60 / BLOCK && jc.count < STEPS_PER_SEED; ++b)
            run_block(s);
        if (jc.count > 0)
            first[seed - 1] = job[jobs];
        jobs += jc.count;
        pnh_free(s);
    }
    if (jobs > 0)
        qsort(job, (size_t)jobs, sizeof *job, cmp_double);
    context_step_rows(t, job, jobs, first, SEEDS, STEPS_PER_SEED);
    free(job);
}

/* late steps in real time: what a musician hears, from instantiation and
 * after the transport stood for 2 s */
static void bench_late_steps(table *t, const char *bundle, double late_seconds)
{
    const struct {
        int division, per_beat;
        double stopped;
        const char *name;
    } pace[] = {{3, 2, 0.0, "1/8"}, {4, 4, 0.0, "1/16"}, {4, 4, 2.0, "1/16"}};
    enum { LATE_RUNS = 3 };
    for (size_t i = 0; i < sizeof pace / sizeof pace[0]; ++i) {
        samples ls = {0};
        long due = 0;
        double late_sum = 0, first_sum = 0;
        for (int run = 0; run < LATE_RUNS; ++run) {
            double first = 0;
            progress("plugin: %g s in real time in %s (%d of %d)", late_seconds, pace[i].name,
                     run + 1, LATE_RUNS);
            const double late = late_steps(bundle, pace[i].division, pace[i].per_beat,
                                           pace[i].stopped, late_seconds, &due, &first);
            samples_add(&ls, late);
            late_sum += late;
            first_sum += first;
        }
        char what[112];
        snprintf(what, sizeof what, "late steps in %g s of real time, %s at 120 bpm%s",
                 late_seconds, pace[i].name,
                 pace[i].stopped > 0 ? ", play pressed after 2 s stopped" : "");
        row *rl = add_row(t, "plugin", what, UNIT_COUNT, &ls, GOAL_NONE_OVER, 0.0);
        snprintf(rl->details, sizeof rl->details,
                 "of %ld steps each run; a late step comes before its context is realized "
                 "and sounds the last sonority again; %.0f late in all %d runs, %.0f of them "
                 "among each run's first 8; %s; worker thread, real-time blocks",
                 due, late_sum, LATE_RUNS, first_sum,
                 pace[i].stopped > 0 ? "transport stopped 2 s, then rolling from bar 1"
                                     : "from instantiation");
    }
}

int main(int argc, char **argv)
{
    bench_options o;
    if (parse_args(argc, argv, &o) != 0)
        return 2;
    table t = {0};
    bench_instantiate(&t, o.bundle);

    /* one host with its worker on a thread for the blocks and the knob
     * changes; the other parts run beside it */
    audio_clock clock = {0};
    pnh_host *h = host(o.bundle, PNH_WORKER_THREADED, &clock, 0.0f);
    bench_blocks(&t, h, &clock, o.blocks, o.speed);
    bench_wakes(&t);
    bench_own_cost(&t, o.bundle, o.blocks);
    bench_knob_change(&t, h);
    pnh_free(h);

    bench_context_steps(&t, o.bundle);
    bench_late_steps(&t, o.bundle, o.late_seconds);

    if (o.markdown)
        print_markdown(&t);
    else
        print_text(&t);
    print_blas();
    return 0;
}
