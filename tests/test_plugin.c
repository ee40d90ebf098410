/* The plugin in a host (apps/lv2host on lilv), as a DAW runs it: exact
 * note frames for every block size, tempo changes and seeks inside a
 * block, note-offs on transport stop, no stuck note under random port
 * changes, state round trip, byte-identical renders per seed,
 * harmonization, a worker behind the music, how far ahead the music is
 * drawn, odd atoms, and a guard proving run() and work_response() never
 * allocate or lock. The bundle comes from PNP_BUNDLE_DIR. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lv2/atom/forge.h>
#include <lv2/midi/midi.h>
#include <lv2/time/time.h>

#include "lv2host.h"
#include "parnassus/rng.h"
#include "parnassus/solver.h"
#include "rt_guard.h"
#include "uris.h"

enum { MAX_EVENTS = 1 << 16, RATE = 48000 };

/* Steps activate() draws and realizes before the first block, when the
 * plugin is enabled and not harmonizing (PNP_PRIME_STEPS, plugin.h). */
enum { PRIMED = 3 };

typedef struct midi_ev {
    int64_t frame; /* from the start of the capture */
    uint8_t msg[3];
} midi_ev;

typedef struct capture {
    LV2_URID midi;
    int64_t base;
    midi_ev ev[MAX_EVENTS];
    int count;
} capture;

static capture cap; /* large: not on the stack */

static void on_event(void *user, const pnh_event *ev)
{
    capture *c = user;
    if (ev->type != c->midi || ev->size < 3 || c->count >= MAX_EVENTS)
        return;
    midi_ev *e = &c->ev[c->count++];
    e->frame = ev->abs_frame - c->base;
    memcpy(e->msg, ev->body, 3);
}

static void capture_start(capture *c, pnh_host *h)
{
    c->midi = pnh_map(h, LV2_MIDI__MidiEvent);
    c->base = pnh_frames(h);
    c->count = 0;
}

static int is_on(const midi_ev *e)
{
    return (e->msg[0] & 0xF0) == 0x90 && e->msg[2] > 0;
}

static int is_off(const midi_ev *e)
{
    return (e->msg[0] & 0xF0) == 0x80 || ((e->msg[0] & 0xF0) == 0x90 && e->msg[2] == 0);
}

/* A host with the plugin instantiated, its ports not yet set and the
 * plugin not yet activated. */
static pnh_host *new_host_inactive(pnh_worker_mode mode, uint32_t max_block, const pnh_hooks *hooks)
{
    pnh_settings s;
    pnh_settings_default(&s);
    s.plugin_uri = PNP_URI;
    s.bundle_dir = getenv("PNP_BUNDLE_DIR");
    s.max_block = max_block;
    s.worker_mode = mode;
    if (hooks)
        s.hooks = *hooks;
    pnh_host *h = NULL;
    pn_error_info info = {0};
    if (pnh_create(&s, &h, &info) != PN_OK)
        fail_msg("host: %s", info.message);
    return h;
}

static void activate(pnh_host *h)
{
    pn_error_info info = {0};
    assert_int_equal(pnh_activate(h, &info), PN_OK);
}

/* The same, activated: controls set later reach the plugin after
 * activate(), as a host changes them while it runs. */
static pnh_host *new_host(pnh_worker_mode mode, uint32_t max_block, const pnh_hooks *hooks)
{
    pnh_host *h = new_host_inactive(mode, max_block, hooks);
    activate(h);
    return h;
}

static void set(pnh_host *h, const char *symbol, float value)
{
    pn_error_info info = {0};
    if (pnh_set_control(h, symbol, value, &info) != PN_OK)
        fail_msg("%s", info.message);
}

/* Runs `frames` frames in blocks of `block`, capturing. */
static void run_frames(pnh_host *h, int64_t frames, uint32_t block)
{
    pn_error_info info = {0};
    while (frames > 0) {
        const uint32_t n = frames < block ? (uint32_t)frames : block;
        assert_true(pnh_run(h, n, on_event, &cap, &info) >= 0);
        frames -= n;
    }
}

static pnh_position position(float bpm, float speed, int64_t bar, float bar_beat)
{
    pnh_position p = {0};
    p.fields = PNH_POS_SPEED | PNH_POS_BPM | PNH_POS_BAR | PNH_POS_BAR_BEAT | PNH_POS_BEAT_UNIT |
               PNH_POS_BEATS_PER_BAR;
    p.speed = speed;
    p.bpm = bpm;
    p.bar = bar;
    p.bar_beat = bar_beat;
    p.beat_unit = 4;
    p.beats_per_bar = 4;
    return p;
}

static void queue_position(pnh_host *h, int64_t frame, pnh_position p)
{
    pn_error_info info = {0};
    assert_int_equal(pnh_queue_position(h, frame, &p, &info), PN_OK);
}

/* Every note-on has its note-off later (per channel and key), nothing is
 * switched on twice, nothing sounds at the end. */
static void assert_balanced(const capture *c)
{
    static int sounding[16][128];
    memset(sounding, 0, sizeof sounding);
    for (int i = 0; i < c->count; ++i) {
        const midi_ev *e = &c->ev[i];
        const int ch = e->msg[0] & 15, key = e->msg[1];
        if (i > 0)
            assert_true(e->frame >= c->ev[i - 1].frame); /* in time order */
        if (is_on(e)) {
            assert_int_equal(sounding[ch][key], 0);
            sounding[ch][key] = 1;
        } else if (is_off(e)) {
            sounding[ch][key] = 0;
        }
    }
    for (int ch = 0; ch < 16; ++ch)
        for (int key = 0; key < 128; ++key)
            if (sounding[ch][key])
                fail_msg("channel %d key %d still sounds", ch + 1, key);
}

/* Holds key 72 from the next block's first frame. With input_mode 1 the
 * soprano follows it, so every step sounds: a drawn sonority may be a full
 * rest, which would leave its step without a trace. */
static void hold_key(pnh_host *h)
{
    static const uint8_t key_down[3] = {0x90, 72, 100};
    pn_error_info info = {0};
    assert_int_equal(pnh_queue_midi(h, 0, key_down, 3, &info), PN_OK);
}

static void stop_transport(pnh_host *h)
{
    queue_position(h, 0, position(120, 0, 0, 0));
    run_frames(h, 64, 64);
}

/* ---- the first realization ---- */

/* The realization made in instantiate() is the one the ports' Turtle
 * defaults ask for: a host that leaves every knob alone sends no job
 * until the music moves, and a knob moved does send one. (Disabled, so
 * that nothing is drawn ahead: a stopped transport draws too.) */
static void test_default_knobs_need_no_second_solve(void **state)
{
    (void)state;
    pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, 256, NULL);
    set(h, "enable", 0);
    capture_start(&cap, h);
    stop_transport(h);
    run_frames(h, 256 * 20, 256);
    pnh_worker_stats ws;
    pnh_worker_stats_get(h, &ws);
    assert_int_equal(ws.scheduled, 0);
    set(h, "alpha", 0.5f);
    run_frames(h, 256, 256);
    pnh_worker_stats_get(h, &ws);
    assert_int_equal(ws.scheduled, 1);
    pnh_free(h);
}

/* The host's log says when the BLAS leaves the CPU's AVX2 and FMA unused,
 * and says nothing of it otherwise. The plugin's OpenBLAS and this test's
 * see the same CPU and the same environment, so they choose alike. */
static void test_unused_cpu_features_are_logged(void **state)
{
    (void)state;
    pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, 256, NULL);
    pn_blas_info blas;
    pn_blas_describe(&blas);
    const char *said = strstr(pnh_log_text(h), "OpenBLAS runs its");
    if (blas.underused) {
        assert_non_null(said);
        assert_non_null(strstr(said, blas.core));
        assert_non_null(strstr(said, "OPENBLAS_CORETYPE"));
    } else {
        assert_null(said);
    }
    pnh_free(h);
}

/* ---- exact frames ---- */

static void test_exact_frames_every_block_size(void **state)
{
    (void)state;
    pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, 4096, NULL);
    set(h, "gate", 50);
    set(h, "input_mode", 1);
    const uint32_t sizes[] = {1, 2, 3, 17, 64, 256, 1000, 4096};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; ++s) {
        pnh_deactivate(h);
        pn_error_info info = {0};
        assert_int_equal(pnh_activate(h, &info), PN_OK);
        capture_start(&cap, h);
        hold_key(h);
        queue_position(h, 0, position(120, 1, 0, 0));
        run_frames(h, 8 * 12000, sizes[s]);
        int steps_with_notes[8] = {0};
        for (int i = 0; i < cap.count; ++i) {
            const midi_ev *e = &cap.ev[i];
            if (is_on(e)) {
                if (e->frame % 12000 != 0)
                    fail_msg("block %u: note-on at frame %lld", sizes[s], (long long)e->frame);
                steps_with_notes[e->frame / 12000] = 1;
            } else if (is_off(e) && e->frame % 12000 != 6000) {
                fail_msg("block %u: note-off at frame %lld", sizes[s], (long long)e->frame);
            }
        }
        int sounding_steps = 0;
        for (int k = 0; k < 8; ++k)
            sounding_steps += steps_with_notes[k];
        assert_int_equal(sounding_steps, 8);
        stop_transport(h);
        assert_balanced(&cap);
    }
    pnh_free(h);
}

static void test_tempo_change_and_seek_inside_a_block(void **state)
{
    (void)state;
    pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, 256, NULL);
    set(h, "gate", 90);
    set(h, "input_mode", 1);
    hold_key(h);
    /* tempo halves at frame 30100 (inside a 256-frame block), beat 1.25 */
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    run_frames(h, 29952, 256);
    queue_position(h, 30100 - 29952, position(60, 1, 0, 1.25f));
    run_frames(h, 70000 - 29952, 256);
    int64_t ons[16];
    int n = 0;
    for (int i = 0; i < cap.count && n < 16; ++i)
        if (is_on(&cap.ev[i]) && (n == 0 || ons[n - 1] != cap.ev[i].frame))
            ons[n++] = cap.ev[i].frame;
    assert_true(n >= 5);
    assert_int_equal(ons[0], 0);
    assert_int_equal(ons[1], 12000);
    assert_int_equal(ons[2], 24000);
    assert_int_equal(ons[3], 30100 + 12000); /* beat 1.5 a quarter beat later at 60 bpm */
    assert_int_equal(ons[4], 30100 + 12000 + 24000);
    stop_transport(h);
    assert_balanced(&cap);

    /* a seek at frame 30100: every sounding note ends there */
    pnh_deactivate(h);
    pn_error_info info = {0};
    assert_int_equal(pnh_activate(h, &info), PN_OK);
    capture_start(&cap, h);
    hold_key(h); /* activation let go of it */
    queue_position(h, 0, position(120, 1, 0, 0));
    run_frames(h, 29952, 256);
    queue_position(h, 30100 - 29952, position(120, 1, 8, 1.25f));
    run_frames(h, 256, 256);
    int offs_at_seek = 0, sounding_before = 0;
    for (int i = 0; i < cap.count; ++i) {
        if (cap.ev[i].frame == 24000 && is_on(&cap.ev[i]))
            ++sounding_before; /* the step at 24000 sounds until 34800 */
        if (cap.ev[i].frame == 30100 && is_off(&cap.ev[i]))
            ++offs_at_seek;
    }
    assert_true(sounding_before > 0);
    assert_int_equal(offs_at_seek, sounding_before);
    run_frames(h, 12000, 256);
    int next_on = -1;
    for (int i = 0; i < cap.count; ++i)
        if (is_on(&cap.ev[i]) && cap.ev[i].frame > 30100) {
            next_on = (int)cap.ev[i].frame;
            break;
        }
    assert_int_equal(next_on, 30100 + 6000); /* beat 33.5 is a quarter beat on */
    stop_transport(h);
    assert_balanced(&cap);
    pnh_free(h);
}

static void test_transport_stop_ends_every_note(void **state)
{
    (void)state;
    pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, 512, NULL);
    set(h, "gate", 100); /* notes sound until the next step */
    set(h, "input_mode", 1);
    hold_key(h); /* something sounds at the stop */
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    run_frames(h, 30208, 512);
    queue_position(h, 100, position(120, 0, 0, 1.26f));
    run_frames(h, 48000, 512);
    int sounding = 0;
    for (int i = 0; i < cap.count; ++i) {
        if (cap.ev[i].frame > 30308)
            fail_msg("event after the stop at %lld", (long long)cap.ev[i].frame);
        if (is_on(&cap.ev[i]))
            ++sounding;
        if (is_off(&cap.ev[i]))
            --sounding;
    }
    assert_int_equal(sounding, 0);
    assert_int_equal(cap.ev[cap.count - 1].frame, 30308);
    assert_balanced(&cap);
    pnh_free(h);
}

/* ---- a worker behind the music ---- */

/* A worker thread that waits while the test keeps its gate closed. */
typedef struct worker_gate {
    pthread_mutex_t lock;
    pthread_cond_t opened;
    int closed;
} worker_gate;

static void gate_wait(void *user)
{
    worker_gate *g = user;
    pthread_mutex_lock(&g->lock);
    while (g->closed)
        pthread_cond_wait(&g->opened, &g->lock);
    pthread_mutex_unlock(&g->lock);
}

static void gate_open(worker_gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->closed = 0;
    pthread_cond_broadcast(&g->opened);
    pthread_mutex_unlock(&g->lock);
}

/* The worker's next job waits until gate_open(). */
static void gate_close(worker_gate *g)
{
    pthread_mutex_lock(&g->lock);
    g->closed = 1;
    pthread_mutex_unlock(&g->lock);
}

/* The keys struck at each step of `len` frames (a bit per key, 128 keys
 * in two words), over `steps` steps of the capture. */
static void keys_per_step(const capture *c, int64_t len, int steps, uint64_t (*keys)[2])
{
    memset(keys, 0, (size_t)steps * sizeof *keys);
    for (int i = 0; i < c->count; ++i) {
        const midi_ev *e = &c->ev[i];
        const int64_t k = e->frame / len;
        if (is_on(e) && k < steps)
            keys[k][e->msg[1] >> 6] |= 1ull << (e->msg[1] & 63);
    }
}

/* When the worker has not realized the context of the coming step, the
 * step sounds the last sonority again (counted as late) instead of drawing
 * from a realization of an older context, and the music moves on once the
 * worker catches up: no step follows a sonority that was not played. The
 * worker waits from its first job: the steps activate() drew and realized
 * sound, then the one drawn ahead in the first block from the last of
 * their realizations, then that one is held. */
static void test_late_worker_holds_the_sounding_sonority(void **state)
{
    (void)state;
    worker_gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1};
    const pnh_hooks hooks = {.worker_enter = gate_wait, .user = &g};
    pnh_host *h = new_host_inactive(PNH_WORKER_THREADED, 256, &hooks);
    set(h, "seed", 3);
    set(h, "division", 4); /* 1/16 at 120 bpm: 6000 frames */
    set(h, "gate", 50);
    activate(h);
    enum { LEN = 6000, HELD = 8, STEPS = 40, LAST = PRIMED };
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    run_frames(h, (int64_t)HELD * LEN, 256); /* the worker waits at its first job */
    assert_int_equal((int)pnh_get_control(h, "late_steps"), HELD - 1 - LAST);
    gate_open(&g);
    for (int k = HELD; k < STEPS; ++k) { /* in time with the worker, not the clock */
        run_frames(h, LEN, 256);
        assert_int_equal(pnh_wait_worker_idle(h, 60.0), 1);
    }
    uint64_t keys[STEPS][2];
    keys_per_step(&cap, LEN, STEPS, keys);
    assert_true(keys[LAST][0] | keys[LAST][1]); /* seed 3 sounds notes there */
    int drawn = 0;
    for (int k = 0; k < LAST; ++k)
        drawn += keys[k][0] != keys[k + 1][0] || keys[k][1] != keys[k + 1][1];
    assert_true(drawn > 0); /* the steps before it were drawn, not held */
    for (int k = LAST + 1; k < HELD; ++k)
        if (keys[k][0] != keys[LAST][0] || keys[k][1] != keys[LAST][1])
            fail_msg("step %d sounds another sonority while the worker waits", k);
    int moved = 0;
    for (int k = HELD; k < STEPS; ++k)
        moved += keys[k][0] != keys[LAST][0] || keys[k][1] != keys[LAST][1];
    assert_true(moved > (STEPS - HELD) / 2);
    assert_true(pnh_get_control(h, "late_steps") < HELD + 2); /* caught up */
    stop_transport(h);
    assert_balanced(&cap);
    pnh_free(h);
}

/* Activated again after a knob moved while it was deactivated, the plugin
 * draws its first steps with the knob as it finds it and keeps them: with
 * the worker stuck from then on, the steps drawn at activation and the one
 * drawn from the last of their realizations sound on time. */
static void test_reactivation_draws_with_the_ports_it_finds(void **state)
{
    (void)state;
    worker_gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    const pnh_hooks hooks = {.worker_enter = gate_wait, .user = &g};
    pnh_host *h = new_host_inactive(PNH_WORKER_THREADED, 256, &hooks);
    set(h, "seed", 7);
    activate(h);
    stop_transport(h);
    for (int block = 0; block < 64; ++block) { /* the look-ahead full, every answer in */
        run_frames(h, 256, 256);
        assert_int_equal(pnh_wait_worker_idle(h, 60.0), 1);
    }
    pnh_deactivate(h);
    set(h, "log2_lambda_w", -2);
    gate_close(&g); /* the worker takes no further job */
    activate(h);
    const int late_before = (int)pnh_get_control(h, "late_steps");
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    run_frames(h, (int64_t)(PRIMED + 1) * 12000, 256); /* 1/8 at 120 bpm */
    assert_int_equal((int)pnh_get_control(h, "late_steps") - late_before, 0);
    uint64_t keys[PRIMED + 1][2];
    keys_per_step(&cap, 12000, PRIMED + 1, keys);
    int sounded = 0;
    for (int k = 0; k <= PRIMED; ++k)
        sounded += (keys[k][0] | keys[k][1]) != 0;
    assert_true(sounded > 0);
    gate_open(&g);
    stop_transport(h);
    assert_balanced(&cap);
    pnh_free(h);
}

/* Sonorities are drawn ahead for PNP_AHEAD_SECONDS (1.6 s) of music, a
 * part step counted whole: thirteen sixteenths at 120 bpm, seven eighths,
 * four quarters. */
static void test_draw_ahead_follows_the_step_length(void **state)
{
    (void)state;
    const struct {
        int division, depth;
    } cases[] = {{4, 13}, {2, 4}, {3, 7}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        pnh_host *h = new_host_inactive(PNH_WORKER_IMMEDIATE, 256, NULL);
        set(h, "division", (float)cases[i].division);
        activate(h); /* PRIMED steps drawn and realized, no job for them */
        capture_start(&cap, h);
        queue_position(h, 0, position(120, 1, 0, 0));
        pnh_worker_stats ws;
        pnh_worker_stats_get(h, &ws);
        assert_int_equal((int)ws.scheduled, 0);
        /* the first step, at frame 0, sounds the first of them; then one
         * is drawn ahead a block (a job for its context) until the depth
         * is reached (a step lasts at least 23 blocks here) */
        for (int block = 0; block < cases[i].depth + 2; ++block) {
            run_frames(h, 256, 256);
            pnh_worker_stats_get(h, &ws);
            const int drawn = block + 1 < cases[i].depth - (PRIMED - 1)
                                  ? block + 1
                                  : cases[i].depth - (PRIMED - 1);
            if ((int)ws.scheduled != drawn)
                fail_msg("division %d, block %d: %d jobs, expected %d", cases[i].division, block,
                         (int)ws.scheduled, drawn);
        }
        pnh_free(h);
    }
}

/* A stopped transport draws ahead too, silently: when play is pressed
 * the first steps' sonorities are ready, so they sound in time even with
 * the worker stuck from then on, and they are the notes of a transport
 * rolling from the start (one random stream, drawn in the same order). */
static void test_stopped_transport_draws_ahead(void **state)
{
    (void)state;
    enum { LEN = 12000, DEPTH = 7 }; /* 1/8 at 120 bpm: seven steps in 1.6 s */
    uint64_t rolling[DEPTH][2], preroll[DEPTH][2];
    pnh_host *ref = new_host_inactive(PNH_WORKER_IMMEDIATE, 256, NULL);
    set(ref, "seed", 3);
    activate(ref);
    capture_start(&cap, ref);
    queue_position(ref, 0, position(120, 1, 0, 0));
    run_frames(ref, (int64_t)DEPTH * LEN, 256);
    keys_per_step(&cap, LEN, DEPTH, rolling);
    pnh_free(ref);

    worker_gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    const pnh_hooks hooks = {.worker_enter = gate_wait, .user = &g};
    pnh_host *h = new_host_inactive(PNH_WORKER_THREADED, 256, &hooks);
    set(h, "seed", 3);
    activate(h);
    capture_start(&cap, h);
    stop_transport(h);
    pnh_worker_stats ws = {0};
    for (int block = 0; block < 64; ++block) { /* a job a block at most */
        run_frames(h, 256, 256);
        assert_int_equal(pnh_wait_worker_idle(h, 60.0), 1);
    }
    pnh_worker_stats_get(h, &ws);
    /* each sonority drawn after activate()'s PRIMED: its context */
    assert_int_equal((int)ws.scheduled, DEPTH - PRIMED);
    assert_int_equal(cap.count, 0); /* and nothing sounded */

    gate_close(&g); /* the worker takes no further job */
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    run_frames(h, (int64_t)DEPTH * LEN, 256);
    assert_int_equal((int)pnh_get_control(h, "late_steps"), 0);
    keys_per_step(&cap, LEN, DEPTH, preroll);
    for (int k = 0; k < DEPTH; ++k)
        if (rolling[k][0] != preroll[k][0] || rolling[k][1] != preroll[k][1])
            fail_msg("step %d differs from the transport rolling from the start", k);
    gate_open(&g);
    stop_transport(h);
    assert_balanced(&cap);
    pnh_free(h);
}

/* The keys of the first `steps` sixteenths (gate 50 %) from a host that
 * activates the plugin enabled, or disabled and enables it before the
 * first block (nothing is drawn at activation then); with `rules` (a
 * file of the bundle's rules/, or NULL) loaded by a patch:Set at the
 * first frame. *early: note-offs before the gate of the first step. */
static void first_sixteenths(int enabled_at_activation, float seed, const char *rules, int steps,
                             uint64_t (*keys)[2], int *early)
{
    pnh_host *h = new_host_inactive(PNH_WORKER_IMMEDIATE, 256, NULL);
    set(h, "seed", seed);
    set(h, "division", 4);
    set(h, "gate", 50);
    set(h, "enable", enabled_at_activation ? 1.0f : 0.0f);
    activate(h);
    set(h, "enable", 1);
    capture_start(&cap, h);
    if (rules) {
        char path[4096];
        snprintf(path, sizeof path, "%s/rules/%s", getenv("PNP_BUNDLE_DIR"), rules);
        pn_error_info info = {0};
        assert_int_equal(pnh_queue_patch_set_path(h, 0, PNP__ruleSet, path, &info), PN_OK);
    }
    queue_position(h, 0, position(120, 1, 0, 0));
    run_frames(h, (int64_t)steps * 6000, 256);
    assert_int_equal(pnh_log_errors(h), 0);
    keys_per_step(&cap, 6000, steps, keys);
    *early = 0;
    for (int i = 0; i < cap.count; ++i)
        *early += is_off(&cap.ev[i]) && cap.ev[i].frame < 3000;
    pnh_free(h);
}

/* The steps activate() draws and realizes are the music the first blocks
 * would have drawn and realized: the same notes, step for step. */
static void test_steps_drawn_at_activation_change_no_note(void **state)
{
    (void)state;
    enum { STEPS = 24 };
    uint64_t primed[STEPS][2], unprimed[STEPS][2];
    int early = 0;
    first_sixteenths(1, 7, NULL, STEPS, primed, &early);
    first_sixteenths(0, 7, NULL, STEPS, unprimed, &early);
    int sounded = 0;
    for (int k = 0; k < STEPS; ++k) {
        if (primed[k][0] != unprimed[k][0] || primed[k][1] != unprimed[k][1])
            fail_msg("step %d differs when the first steps are drawn at activation", k);
        sounded += (primed[k][0] | primed[k][1]) != 0;
    }
    assert_true(sounded > STEPS / 2);
}

/* A rule set loaded at the first frame plays from the first step, its
 * notes held for their whole length, and the seed's music is the set's
 * own from its start, whatever activate() drew of the built-in set. */
static void test_rule_set_loaded_at_the_start_plays_from_the_first_step(void **state)
{
    (void)state;
    enum { STEPS = 12 };
    uint64_t primed[STEPS][2], unprimed[STEPS][2];
    int early_primed = 0, early_unprimed = 0;
    first_sixteenths(1, 3, "chorale-minor.json", STEPS, primed, &early_primed);
    first_sixteenths(0, 3, "chorale-minor.json", STEPS, unprimed, &early_unprimed);
    assert_int_equal(early_primed, 0);
    assert_int_equal(early_unprimed, 0);
    assert_true(primed[0][0] | primed[0][1]);
    for (int k = 0; k < STEPS; ++k)
        if (primed[k][0] != unprimed[k][0] || primed[k][1] != unprimed[k][1])
            fail_msg("step %d depends on what was drawn of the built-in set", k);
}

/* A rule set loaded while the last one's notes sound (legato, so they
 * always do) ends them at once, and the new set's notes, struck in the
 * same block, are held to their step's end: the old notes' panic must
 * not wait for the next block and cut the new ones there. Loaded 200
 * frames before a step, in the block that strikes it. */
static void test_rule_set_loaded_while_notes_sound_keeps_its_first_notes(void **state)
{
    (void)state;
    enum { STEP = 6000, SWITCH = 9 * STEP - 200, BLOCK = 256 };
    char rules[4096];
    snprintf(rules, sizeof rules, "%s/rules/chorale-minor.json", getenv("PNP_BUNDLE_DIR"));
    pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, BLOCK, NULL);
    set(h, "division", 4);
    set(h, "gate", 100);
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    run_frames(h, SWITCH / BLOCK * BLOCK, BLOCK);
    pn_error_info info = {0};
    assert_int_equal(pnh_queue_patch_set_path(h, SWITCH % BLOCK, PNP__ruleSet, rules, &info),
                     PN_OK);
    run_frames(h, 4 * STEP, BLOCK);
    assert_int_equal(pnh_log_errors(h), 0);
    int sounding_at_switch = 0, new_notes = 0;
    for (int i = 0; i < cap.count; ++i) {
        const midi_ev *on = &cap.ev[i];
        if (!is_on(on))
            continue;
        int j = i + 1; /* its note-off */
        while (j < cap.count && !(is_off(&cap.ev[j]) && cap.ev[j].msg[1] == on->msg[1] &&
                                  (cap.ev[j].msg[0] & 15) == (on->msg[0] & 15)))
            ++j;
        const int64_t off = j < cap.count ? cap.ev[j].frame : INT64_MAX;
        if (on->frame < SWITCH) {
            if (off >= SWITCH) { /* sounding then: the old set's notes end there */
                ++sounding_at_switch;
                assert_int_equal(off, SWITCH);
            }
        } else {
            ++new_notes;
            if (j < cap.count && off % STEP != 0) /* (or still sounding) */
                fail_msg("a note struck at frame %lld ends at %lld, inside a step",
                         (long long)on->frame, (long long)off);
        }
    }
    assert_true(sounding_at_switch > 0);
    assert_true(new_notes > 0);
    stop_transport(h);
    assert_balanced(&cap);
    pnh_free(h);
}

/* The keys struck at each of `steps` steps (as keys_per_step) at 1/16 and 120 bpm
 * with seed 5, the Style knob set to `style` at the block that starts
 * `at_frame` (never when at_frame < 0). */
static void sixteenths_with_style_change(int64_t at_frame, float style, int steps,
                                         uint64_t (*keys)[2])
{
    pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, 256, NULL);
    set(h, "seed", 5);
    set(h, "division", 4); /* 6000 frames a step */
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    const int64_t end = (int64_t)steps * 6000;
    for (int64_t t = 0; t < end; t += 256) {
        if (at_frame >= 0 && t <= at_frame && at_frame < t + 256)
            set(h, "log2_lambda_w", style);
        run_frames(h, 256, 256);
    }
    keys_per_step(&cap, 6000, steps, keys);
    pnh_free(h);
}

/* A Style knob turned trims the look-ahead to the steps that fit whole in
 * PNP_KNOB_AHEAD_SECONDS (0.4 s: three sixteenths): those sound as drawn,
 * the later ones are drawn again after the knob. Without the trim all
 * thirteen drawn ahead would sound as drawn. The knob goes to its
 * conservative end, where the music is nearly uniform, so every step drawn
 * again differs from the one drawn before (at log2 lambda_w -6 the default
 * set keeps seven of its nine learned rules, and a redrawn step can be the
 * same chord). */
static void test_knob_trims_what_was_drawn_ahead(void **state)
{
    (void)state;
    enum { STEPS = 28, TURN = 12, KEPT = 3, AHEAD = 13 };
    static uint64_t still[STEPS][2], turned[STEPS][2];
    sixteenths_with_style_change(-1, 0.0f, STEPS, still);
    /* the knob moves just after step TURN starts: steps TURN + 1 .. TURN +
     * AHEAD were drawn ahead by then */
    sixteenths_with_style_change((int64_t)TURN * 6000 + 512, -12.0f, STEPS, turned);
    for (int k = 0; k <= TURN + KEPT; ++k)
        if (still[k][0] != turned[k][0] || still[k][1] != turned[k][1])
            fail_msg("step %d changed, but it was drawn before the knob moved", k);
    int redrawn = 0;
    for (int k = TURN + KEPT + 1; k <= TURN + AHEAD; ++k)
        redrawn += still[k][0] != turned[k][0] || still[k][1] != turned[k][1];
    assert_int_equal(redrawn, AHEAD - KEPT);
}

/* ---- robustness ---- */

static void test_random_port_changes_leave_no_stuck_note(void **state)
{
    (void)state;
    pnh_host *h = new_host(PNH_WORKER_THREADED, 512, NULL);
    static const char *const symbols[] = {
        "sync",     "bpm",      "division",      "gate",
        "velocity", "humanize", "channel",       "channel_per_voice",
        "soprano",  "alto",     "tenor",         "bass",
        "key",      "octave",   "input_mode",    "seed",
        "panic",    "enable",   "log2_lambda_w", "alpha"};
    const int num_symbols = (int)(sizeof symbols / sizeof symbols[0]);
    pn_rng rng;
    pn_rng_seed(&rng, 7);
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    for (int change = 0; change < 10000; ++change) {
        /* the style knobs re-solve: change them rarely */
        int s = (int)(pn_rng_next(&rng) % (uint64_t)num_symbols);
        if (s >= num_symbols - 2 && pn_rng_next(&rng) % 50 != 0)
            s = (int)(pn_rng_next(&rng) % (uint64_t)(num_symbols - 2));
        float def, lo, hi;
        assert_true(pnh_control_range(h, symbols[s], &def, &lo, &hi));
        const float u = (float)(pn_rng_next(&rng) >> 11) * (1.0f / 9007199254740992.0f);
        set(h, symbols[s], lo + u * (hi - lo));
        if (pn_rng_next(&rng) % 97 == 0) /* now and then the host seeks or stops */
            queue_position(h, 3,
                           position(60 + (float)(pn_rng_next(&rng) % 120),
                                    (float)(pn_rng_next(&rng) % 2),
                                    (int64_t)(pn_rng_next(&rng) % 64), 0.5f));
        if (pn_rng_next(&rng) % 13 == 0) { /* and a played note */
            const uint8_t on[3] = {0x90, (uint8_t)(48 + pn_rng_next(&rng) % 36), 100};
            pn_error_info info = {0};
            assert_int_equal(pnh_queue_midi(h, 1, on, 3, &info), PN_OK);
        }
        run_frames(h, 1 + (int64_t)(pn_rng_next(&rng) % 512), 512);
    }
    assert_true(cap.count > 0);
    set(h, "enable", 1);
    stop_transport(h);
    assert_int_equal(pnh_wait_worker_idle(h, 60.0), 1);
    run_frames(h, 64, 64);
    assert_balanced(&cap);
    pnh_free(h);
}

static LV2_URID map_uri(LV2_URID_Map_Handle handle, const char *uri)
{
    return pnh_map(handle, uri);
}

static void test_odd_atoms(void **state)
{
    (void)state;
    pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, 256, NULL);
    capture_start(&cap, h);
    pn_error_info info = {0};
    /* a position with nothing but garbage types, an empty object, a
     * truncated MIDI event, a patch:Set without a value, and a path to a
     * file that is not a rule set */
    uint8_t buf[256];
    LV2_Atom_Forge forge;
    LV2_URID_Map map = {h, map_uri};
    lv2_atom_forge_init(&forge, &map);
    lv2_atom_forge_set_buffer(&forge, buf, sizeof buf);
    LV2_Atom_Forge_Frame frame;
    lv2_atom_forge_object(&forge, &frame, 0, pnh_map(h, LV2_TIME__Position));
    lv2_atom_forge_key(&forge, pnh_map(h, LV2_TIME__beatsPerMinute));
    lv2_atom_forge_string(&forge, "fast", 4);
    lv2_atom_forge_key(&forge, pnh_map(h, LV2_TIME__speed));
    lv2_atom_forge_bool(&forge, 1);
    lv2_atom_forge_pop(&forge, &frame);
    assert_int_equal(pnh_queue_atom(h, 0, (const LV2_Atom *)buf, &info), PN_OK);
    const uint8_t short_midi[1] = {0x90};
    assert_int_equal(pnh_queue_midi(h, 1, short_midi, 1, &info), PN_OK);
    assert_int_equal(pnh_queue_patch_set_path(h, 2, PNP__ruleSet, "/nonexistent/rules.json", &info),
                     PN_OK);
    run_frames(h, 48000, 256);
    assert_true(pnh_log_errors(h) >= 1); /* the bad file is logged */
    assert_non_null(strstr(pnh_log_text(h), "/nonexistent/rules.json"));
    /* and the built-in set still plays */
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    run_frames(h, 48000, 256);
    int ons = 0;
    for (int i = 0; i < cap.count; ++i)
        ons += is_on(&cap.ev[i]);
    assert_true(ons > 0);
    stop_transport(h);
    assert_balanced(&cap);
    pnh_free(h);
}

/* Rule sets that cannot be realized (over the memory limit: rules over
 * every sonority; numbers past their bounds: a smoothing of 1e308) are
 * refused in the worker with the reason logged, and the playing set goes
 * on: no step is late, no re-solve fails. */
static void test_unrealizable_rule_sets_keep_the_previous(void **state)
{
    (void)state;
    static const char *const text[] = {
        "{\"format\":\"parnassus-rules/1\",\"name\":\"full\",\"rules\":["
        "{\"name\":\"r0\",\"feature\":\"w(1,2,3,4)\",\"targets\":{\"(31,31,31,31)\":1}},"
        "{\"name\":\"r1\",\"feature\":\"w(1,2,3,4)\",\"targets\":{\"(31,31,31,31)\":1}}]}",
        "{\"format\":\"parnassus-rules/1\",\"name\":\"smooth\",\"rules\":["
        "{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"60\":1},\"context\":\"w(1)\","
        "\"smoothing\":1e308,\"contexts\":{\"60\":{\"count\":3,\"targets\":{\"62\":1}}}}]}",
    };
    static const char *const reason[] = {"over the memory limit of 1 GiB", "rules[0].smoothing"};
    char dir[] = "/tmp/pnp-unrealizable-XXXXXX";
    assert_non_null(mkdtemp(dir));
    for (size_t k = 0; k < sizeof text / sizeof *text; ++k) {
        char path[128];
        snprintf(path, sizeof path, "%s/set%zu.json", dir, k);
        FILE *f = fopen(path, "w");
        assert_non_null(f);
        fputs(text[k], f);
        fclose(f);
        pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, 256, NULL);
        pn_error_info info = {0};
        assert_int_equal(pnh_queue_patch_set_path(h, 0, PNP__ruleSet, path, &info), PN_OK);
        run_frames(h, 256, 256);
        assert_int_equal(pnh_log_errors(h), 1);
        assert_non_null(strstr(pnh_log_text(h), "the previous one keeps playing"));
        assert_non_null(strstr(pnh_log_text(h), path));
        assert_non_null(strstr(pnh_log_text(h), reason[k]));
        capture_start(&cap, h);
        queue_position(h, 0, position(120, 1, 0, 0));
        run_frames(h, 2 * RATE, 256);
        int ons = 0;
        for (int i = 0; i < cap.count; ++i)
            ons += is_on(&cap.ev[i]);
        assert_true(ons > 0);                   /* the built-in set plays on */
        assert_int_equal(pnh_log_errors(h), 1); /* and nothing failed since */
        assert_true(pnh_get_control(h, "late_steps") == 0.0f);
        stop_transport(h);
        assert_balanced(&cap);
        pnh_free(h);
        remove(path);
    }
    rmdir(dir);
}

/* ---- the real-time guard ---- */

static int count_threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_run_never_allocates_or_locks(void **state)
{
    (void)state;
    const int threads_before = count_threads();
    const pnh_hooks hooks = {rt_guard_audio_enter, rt_guard_audio_leave, rt_guard_worker_enter,
                             rt_guard_worker_leave, NULL};
    pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, 256, &hooks);
    if (RT_GUARD_WORKS)
        assert_true(rt_guard_self_check());
    rt_guard_reset();
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    set(h, "input_mode", 1);
    for (int block = 0; block < 2000; ++block) {
        if (block % 100 == 0)
            set(h, "log2_lambda_w", (float)(block / 100 % 5) - 2.0f);
        if (block % 37 == 0) {
            const uint8_t on[3] = {0x90, (uint8_t)(60 + block % 12), 100};
            pn_error_info info = {0};
            assert_int_equal(pnh_queue_midi(h, 5, on, 3, &info), PN_OK);
        }
        if (block == 1500) {
            pn_error_info info = {0};
            char path[4096];
            snprintf(path, sizeof path, "%s/rules/pedagogical.json", getenv("PNP_BUNDLE_DIR"));
            assert_int_equal(pnh_queue_patch_set_path(h, 0, PNP__ruleSet, path, &info), PN_OK);
        }
        run_frames(h, 256, 256);
    }
    stop_transport(h);
    if (RT_GUARD_WORKS && rt_guard_count() != 0)
        fail_msg("%ld calls on the audio thread, the first %s", rt_guard_count(), rt_guard_first());
    assert_balanced(&cap);
    /* the synchronous host runs work() on this thread: the plugin started none */
    assert_int_equal(count_threads(), threads_before);
    pnh_free(h);
}

/* ---- determinism, state, harmonization ---- */

/* Renders `seconds` with seed 1234 from a fresh host into cap. */
static void render(pnh_host *h, int seconds)
{
    set(h, "seed", 1234);
    run_frames(h, 64, 64); /* the seed takes effect */
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    run_frames(h, (int64_t)seconds * RATE, 256);
}

static midi_ev first_render[MAX_EVENTS];

static void test_same_seed_same_notes(void **state)
{
    (void)state;
    pnh_host *a = new_host(PNH_WORKER_IMMEDIATE, 256, NULL);
    render(a, 4);
    const int n = cap.count;
    memcpy(first_render, cap.ev, (size_t)n * sizeof cap.ev[0]);
    pnh_free(a);
    pnh_host *b = new_host(PNH_WORKER_IMMEDIATE, 256, NULL);
    render(b, 4);
    assert_int_equal(cap.count, n);
    assert_memory_equal(cap.ev, first_render, (size_t)n * sizeof cap.ev[0]);
    /* another seed, other music */
    set(b, "seed", 99);
    run_frames(b, 64, 64);
    pnh_deactivate(b);
    pn_error_info info = {0};
    assert_int_equal(pnh_activate(b, &info), PN_OK);
    capture_start(&cap, b);
    queue_position(b, 0, position(120, 1, 0, 0));
    run_frames(b, 4 * RATE, 256);
    assert_true(cap.count != n || memcmp(cap.ev, first_render, (size_t)n * sizeof cap.ev[0]) != 0);
    pnh_free(b);
}

/* The state file of a host, with its directory written as DIR. */
static char *state_text(const char *file, const char *dir)
{
    FILE *f = fopen(file, "rb");
    assert_non_null(f);
    static char raw[1 << 20];
    const size_t n = fread(raw, 1, sizeof raw - 1, f);
    fclose(f);
    raw[n] = '\0';
    char *out = calloc(1, n + 1);
    assert_non_null(out);
    const size_t dl = strlen(dir);
    size_t o = 0;
    for (size_t i = 0; i < n;) {
        if (!strncmp(raw + i, dir, dl)) {
            memcpy(out + o, "DIR", 3);
            o += 3;
            i += dl;
        } else {
            out[o++] = raw[i++];
        }
    }
    return out;
}

/* Removes a state directory lilv wrote (files only, no subdirectories). */
static void remove_state_dir(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        assert_int_equal(remove(path), 0);
    }
    closedir(d);
    assert_int_equal(rmdir(dir), 0);
}

/* A host asked to load the bundle's pedagogical set at its first block,
 * with log2 λw −3 and seed 4321: a session worth saving. */
static pnh_host *pedagogical_host(void)
{
    char rules[4096];
    snprintf(rules, sizeof rules, "%s/rules/pedagogical.json", getenv("PNP_BUNDLE_DIR"));
    pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, 256, NULL);
    pn_error_info info = {0};
    assert_int_equal(pnh_queue_patch_set_path(h, 0, PNP__ruleSet, rules, &info), PN_OK);
    set(h, "log2_lambda_w", -3);
    set(h, "seed", 4321);
    return h;
}

static void test_state_round_trip(void **state)
{
    (void)state;
    char dir_a[] = "/tmp/pnp-state-a-XXXXXX", dir_b[] = "/tmp/pnp-state-b-XXXXXX";
    assert_non_null(mkdtemp(dir_a));
    assert_non_null(mkdtemp(dir_b));
    pnh_host *a = pedagogical_host();
    pn_error_info info = {0};
    capture_start(&cap, a);
    queue_position(a, 0, position(120, 1, 0, 0));
    run_frames(a, RATE, 256);
    char *file_a = NULL, *file_b = NULL;
    assert_int_equal(pnh_state_save(a, dir_a, &file_a, &info), PN_OK);
    pnh_free(a);

    pnh_host *b = new_host(PNH_WORKER_IMMEDIATE, 256, NULL);
    if (pnh_state_restore(b, file_a, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_true(pnh_get_control(b, "log2_lambda_w") == -3.0f);
    assert_true(pnh_get_control(b, "seed") == 4321.0f);
    run_frames(b, 256, 256);
    assert_int_equal(pnh_log_errors(b), 0);
    assert_int_equal(pnh_state_save(b, dir_b, &file_b, &info), PN_OK);
    char *text_a = state_text(file_a, dir_a), *text_b = state_text(file_b, dir_b);
    assert_non_null(strstr(text_a, "ruleSetText"));
    assert_non_null(strstr(text_a, "pedagogical"));
    assert_string_equal(text_a, text_b);
    free(text_a);
    free(text_b);
    pnh_free(b);
    free(file_a);
    free(file_b);
    remove_state_dir(dir_a);
    remove_state_dir(dir_b);
}

/* The keys of the first `steps` eighths of a host restoring `file`
 * (pedagogical, seed 4321, log2 λw −3) before or after it activates the
 * plugin, its ports set as the state has them; *late: late steps. */
static void first_eighths_restored(const char *file, int after_activation, int steps,
                                   uint64_t (*keys)[2], int *late)
{
    pn_error_info info = {0};
    pnh_host *h = new_host_inactive(PNH_WORKER_IMMEDIATE, 256, NULL);
    set(h, "seed", 4321);
    set(h, "log2_lambda_w", -3);
    if (after_activation)
        activate(h); /* draws ahead from the built-in set */
    if (pnh_state_restore(h, file, &info) != PN_OK)
        fail_msg("%s", info.message);
    if (!after_activation)
        activate(h);
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    run_frames(h, (int64_t)steps * 12000, 256);
    assert_int_equal(pnh_log_errors(h), 0);
    *late = (int)pnh_get_control(h, "late_steps");
    keys_per_step(&cap, 12000, steps, keys);
    pnh_free(h);
}

/* A session restored between activate() and the first block plays the
 * restored set from its first step, as one restored before activation:
 * nothing drawn ahead from the set it replaced is left. */
static void test_restore_after_activation_plays_the_restored_set(void **state)
{
    (void)state;
    char dir[] = "/tmp/pnp-state-c-XXXXXX";
    assert_non_null(mkdtemp(dir));
    pnh_host *a = pedagogical_host();
    pn_error_info info = {0};
    run_frames(a, 256, 256);
    char *file = NULL;
    assert_int_equal(pnh_state_save(a, dir, &file, &info), PN_OK);
    pnh_free(a);

    enum { STEPS = 16 };
    uint64_t before[STEPS][2], after[STEPS][2];
    int late_before = -1, late_after = -1;
    first_eighths_restored(file, 0, STEPS, before, &late_before);
    first_eighths_restored(file, 1, STEPS, after, &late_after);
    assert_int_equal(late_before, 0);
    assert_int_equal(late_after, 0);
    int sounded = 0;
    for (int k = 0; k < STEPS; ++k) {
        if (before[k][0] != after[k][0] || before[k][1] != after[k][1])
            fail_msg("step %d differs when the state comes after activation", k);
        sounded += (after[k][0] | after[k][1]) != 0;
    }
    assert_true(sounded > STEPS / 2);
    free(file);
    remove_state_dir(dir);
}

static void test_harmonization_keeps_the_played_soprano(void **state)
{
    (void)state;
    pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, 256, NULL);
    set(h, "input_mode", 1);
    set(h, "channel_per_voice", 1); /* the soprano on channel 1 */
    set(h, "gate", 50);
    run_frames(h, 256, 256); /* the conditional tables come from the worker */
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    static const uint8_t melody[] = {72, 71, 69, 67, 65, 64, 62, 60};
    for (int i = 0; i < 8; ++i) {
        pn_error_info info = {0};
        const uint8_t off[3] = {0x80, i ? melody[i - 1] : 0, 0};
        const uint8_t on[3] = {0x90, melody[i], 100};
        if (i)
            assert_int_equal(pnh_queue_midi(h, 0, off, 3, &info), PN_OK);
        assert_int_equal(pnh_queue_midi(h, 0, on, 3, &info), PN_OK);
        /* each note is played right on its step */
        run_frames(h, 12000, 256);
    }
    /* every step's soprano (channel 1) is the played note, with other voices */
    for (int k = 0; k < 8; ++k) {
        int soprano = -1, voices = 0;
        for (int i = 0; i < cap.count; ++i)
            if (is_on(&cap.ev[i]) && cap.ev[i].frame == 12000 * k) {
                ++voices;
                if ((cap.ev[i].msg[0] & 15) == 0)
                    soprano = cap.ev[i].msg[1];
            }
        assert_int_equal(soprano, melody[k]);
        assert_true(voices >= 2);
    }
    stop_transport(h);
    assert_balanced(&cap);
    pnh_free(h);
}

/* The key held is the outer voice: with input mode m (1 soprano, 2 bass)
 * no other voice sounds above (below) it, over many keys and steps. */
static void harmonized_key_is_outer(int mode, int low_key, int high_key)
{
    pnh_host *h = new_host(PNH_WORKER_IMMEDIATE, 256, NULL);
    set(h, "input_mode", (float)mode);
    set(h, "channel_per_voice", 1);
    set(h, "division", 3); /* 1/8: 12000 frames at 120 bpm and 48 kHz */
    set(h, "gate", 50);
    run_frames(h, 256, 256);
    capture_start(&cap, h);
    queue_position(h, 0, position(120, 1, 0, 0));
    const int per_key = 6, key_channel = mode == 1 ? 0 : 3;
    int steps = 0;
    for (int key = low_key; key <= high_key; ++key) {
        pn_error_info info = {0};
        const uint8_t off[3] = {0x80, (uint8_t)(key - 1), 0};
        const uint8_t on[3] = {0x90, (uint8_t)key, 100};
        if (key > low_key)
            assert_int_equal(pnh_queue_midi(h, 0, off, 3, &info), PN_OK);
        assert_int_equal(pnh_queue_midi(h, 0, on, 3, &info), PN_OK);
        for (int s = 0; s < per_key; ++s, ++steps) {
            const int64_t frame = (int64_t)steps * 12000;
            run_frames(h, 12000, 256);
            int keyed = -1, outer = mode == 1 ? -1 : 128, voices = 0;
            for (int i = 0; i < cap.count; ++i) {
                if (!is_on(&cap.ev[i]) || cap.ev[i].frame != frame)
                    continue;
                const int note = cap.ev[i].msg[1];
                ++voices;
                if ((cap.ev[i].msg[0] & 15) == key_channel)
                    keyed = note;
                outer = mode == 1 ? (note > outer ? note : outer) : (note < outer ? note : outer);
            }
            if (voices == 0)
                continue; /* a tied repeat starts nothing */
            assert_true(keyed >= 0);
            assert_int_equal(keyed % 12, key % 12);
            assert_int_equal(outer, keyed);
        }
    }
    stop_transport(h);
    assert_balanced(&cap);
    pnh_free(h);
}

static void test_harmonized_soprano_is_the_top_voice(void **state)
{
    (void)state;
    harmonized_key_is_outer(1, 60, 79);
}

static void test_harmonized_bass_is_the_lowest_voice(void **state)
{
    (void)state;
    harmonized_key_is_outer(2, 40, 59);
}

int main(void)
{
    if (!getenv("PNP_BUNDLE_DIR")) {
        fprintf(stderr, "test_plugin: set PNP_BUNDLE_DIR to the built parnassus.lv2\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_knobs_need_no_second_solve),
        cmocka_unit_test(test_unused_cpu_features_are_logged),
        cmocka_unit_test(test_exact_frames_every_block_size),
        cmocka_unit_test(test_tempo_change_and_seek_inside_a_block),
        cmocka_unit_test(test_transport_stop_ends_every_note),
        cmocka_unit_test(test_run_never_allocates_or_locks),
        cmocka_unit_test(test_odd_atoms),
        cmocka_unit_test(test_unrealizable_rule_sets_keep_the_previous),
        cmocka_unit_test(test_same_seed_same_notes),
        cmocka_unit_test(test_state_round_trip),
        cmocka_unit_test(test_restore_after_activation_plays_the_restored_set),
        cmocka_unit_test(test_harmonization_keeps_the_played_soprano),
        cmocka_unit_test(test_harmonized_soprano_is_the_top_voice),
        cmocka_unit_test(test_harmonized_bass_is_the_lowest_voice),
        cmocka_unit_test(test_late_worker_holds_the_sounding_sonority),
        cmocka_unit_test(test_draw_ahead_follows_the_step_length),
        cmocka_unit_test(test_knob_trims_what_was_drawn_ahead),
        cmocka_unit_test(test_stopped_transport_draws_ahead),
        cmocka_unit_test(test_reactivation_draws_with_the_ports_it_finds),
        cmocka_unit_test(test_steps_drawn_at_activation_change_no_note),
        cmocka_unit_test(test_rule_set_loaded_at_the_start_plays_from_the_first_step),
        cmocka_unit_test(test_rule_set_loaded_while_notes_sound_keeps_its_first_notes),
        cmocka_unit_test(test_random_port_changes_leave_no_stuck_note),
    };
#if defined(__SANITIZE_THREAD__)
    /* Under TSan what matters is the hand-over between run() and the
     * worker thread; the single-threaded cases run in the other builds
     * (they would take many minutes here). */
    const struct CMUnitTest threaded[] = {
        cmocka_unit_test(test_random_port_changes_leave_no_stuck_note),
        cmocka_unit_test(test_late_worker_holds_the_sounding_sonority),
        cmocka_unit_test(test_stopped_transport_draws_ahead),
        cmocka_unit_test(test_reactivation_draws_with_the_ports_it_finds),
        cmocka_unit_test(test_steps_drawn_at_activation_change_no_note),
        cmocka_unit_test(test_rule_set_loaded_at_the_start_plays_from_the_first_step),
    };
    (void)tests;
    return cmocka_run_group_tests(threaded, NULL, NULL);
#else
    return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
