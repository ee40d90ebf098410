/* The live app's engine (apps/live/live_engine.h) without an audio device:
 * buffers are run by hand, as the PortAudio callback would. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "live_clock.h"
#include "live_engine.h"
#include "live_synth.h"
#include "rt_guard.h"

enum { RATE = 48000, BLOCK = 256, MAX_SENT = 1 << 14 };

typedef struct fixture {
    pnl_engine *e;
    pnl_synth *synth;
    float left[BLOCK], right[BLOCK];
    pnl_midi_msg sent[MAX_SENT];
    size_t num_sent;
} fixture;

static int send_clock_out;              /* the next engine made sends MIDI clock */
static float engine_seed = 1.0f;        /* the seed of the next engine made */
static const char *engine_rules = NULL; /* and its rule set (NULL: the built-in one) */

/* The settings every engine of these tests starts from: the bundle under
 * test, 48 kHz, 256-frame buffers. */
static void test_settings(pnl_engine_settings *s)
{
    const char *bundle = getenv("PNP_BUNDLE_DIR");
    assert_non_null(bundle);
    pnl_engine_settings_default(s);
    s->bundle_dir = bundle;
    s->sample_rate = RATE;
    s->max_block = BLOCK;
}

static pnl_engine *make_engine(fixture *f, pnl_sync sync, double bpm, int with_synth)
{
    if (with_synth && pnl_synth_find_soundfont()) {
        pnl_synth_settings ss;
        pnl_synth_settings_default(&ss);
        pn_error_info info = {PN_OK, ""};
        assert_int_equal(pnl_synth_create(&ss, &f->synth, &info), PN_OK);
    }
    pnl_engine_settings s;
    test_settings(&s);
    s.bpm = bpm;
    s.sync = sync;
    s.synth = f->synth;
    s.midi_latency = 0.0;
    s.send_clock = send_clock_out;
    /* set before the plugin activates: its first draw follows the seed */
    const pnl_control_setting seed = {"seed", engine_seed};
    s.controls = &seed;
    s.num_controls = 1;
    s.rules = engine_rules;
    pn_error_info info = {PN_OK, ""};
    pn_error rc = pnl_engine_create(&s, &f->e, &info);
    if (rc != PN_OK)
        fail_msg("engine: %s", info.message);
    assert_float_equal(pnl_engine_control(f->e, "seed"), engine_seed, 0.0f);
    return f->e;
}

static void drop(fixture *f)
{
    pnl_engine_free(f->e);
    pnl_synth_free(f->synth);
    free(f);
}

/* Runs n buffers, collecting what goes to MIDI out. */
static void run(fixture *f, int n)
{
    for (int i = 0; i < n; ++i) {
        rt_guard_audio_enter(NULL);
        pnl_engine_process(f->e, f->left, f->right, BLOCK);
        rt_guard_audio_leave(NULL);
        f->num_sent +=
            pnl_engine_drain_midi_out(f->e, f->sent + f->num_sent, MAX_SENT - f->num_sent);
    }
}

/* The same, but the worker finishes each buffer's jobs before the next,
 * as in a host that freewheels: the music does not depend on how fast
 * this machine (or a sanitizer) solves. */
static void run_synced(fixture *f, int n)
{
    for (int i = 0; i < n; ++i) {
        run(f, 1);
        assert_true(pnl_engine_wait_worker(f->e, 60.0));
    }
}

static int is_note_on(const pnl_midi_msg *m)
{
    return m->size == 3 && (m->bytes[0] & 0xF0) == 0x90 && m->bytes[2] > 0;
}

static int is_note_off(const pnl_midi_msg *m)
{
    return m->size == 3 &&
           ((m->bytes[0] & 0xF0) == 0x80 || ((m->bytes[0] & 0xF0) == 0x90 && m->bytes[2] == 0));
}

/* distinct onset times of note-ons, in seconds */
static size_t onsets(const fixture *f, double *t, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < f->num_sent && n < max; ++i)
        if (is_note_on(&f->sent[i]) && (n == 0 || f->sent[i].time > t[n - 1] + 1e-9))
            t[n++] = f->sent[i].time;
    return n;
}

/* 120 bpm in 1/8: a sonority every 0.25 s = 12000 frames, on the frame.
 * A drawn sonority may be a rest (the chorales rest a quarter, now and
 * then a half note: two or four steps), so onsets are whole steps apart
 * rather than always one, and a few of the 16 steps may be silent. */
static void test_steps_on_the_stream_clock(void **state)
{
    (void)state;
    fixture *f = calloc(1, sizeof *f);
    make_engine(f, PNL_SYNC_INTERNAL, 120.0, 1);
    rt_guard_reset();
    run_synced(f, 4 * RATE / BLOCK);
    double t[64];
    const size_t n = onsets(f, t, 64);
    assert_true(n >= 12);
    for (size_t i = 0; i < n; ++i) {
        const double frames = t[i] * RATE;
        assert_true(fabs(frames - 12000.0 * (double)llround(frames / 12000.0)) < 0.5);
    }
    for (size_t i = 1; i < n; ++i) {
        const double steps = (t[i] - t[i - 1]) / 0.25;
        assert_true(steps > 0.5 && fabs(steps - round(steps)) < 1e-6);
    }
    if (RT_GUARD_WORKS && rt_guard_count() != 0)
        fail_msg("the audio side allocated or locked %ld times (first: %s)", rt_guard_count(),
                 rt_guard_first());
    if (f->synth) { /* the synth sounds (its thread renders a little behind) */
        float peak = 0;
        for (int b = 0; b < 16; ++b) {
            const struct timespec pause = {0, 5000000};
            nanosleep(&pause, NULL);
            run(f, 1);
            for (int i = 0; i < BLOCK; ++i)
                peak = fmaxf(peak, fabsf(f->left[i]));
        }
        assert_true(peak > 1e-4f);
    }
    drop(f);
}

/* The seed given at creation shapes the music from its first step: two
 * engines on the same seed play the same notes at the same times, another
 * seed plays other music. */
static void play_seed(float seed, fixture **out)
{
    fixture *f = calloc(1, sizeof *f);
    engine_seed = seed;
    make_engine(f, PNL_SYNC_INTERNAL, 120.0, 0);
    engine_seed = 1.0f;
    run_synced(f, 4 * RATE / BLOCK);
    *out = f;
}

static int same_music(const fixture *a, const fixture *b)
{
    if (a->num_sent != b->num_sent)
        return 0;
    for (size_t i = 0; i < a->num_sent; ++i)
        if (a->sent[i].time != b->sent[i].time || a->sent[i].size != b->sent[i].size ||
            memcmp(a->sent[i].bytes, b->sent[i].bytes, a->sent[i].size) != 0)
            return 0;
    return 1;
}

static void test_seed_makes_a_take_repeatable(void **state)
{
    (void)state;
    fixture *a, *b, *c;
    play_seed(7.0f, &a);
    play_seed(7.0f, &b);
    play_seed(8.0f, &c);
    double t[64];
    assert_true(onsets(a, t, 64) >= 12);
    assert_true(same_music(a, b));
    assert_false(same_music(a, c));
    drop(a);
    drop(b);
    drop(c);
}

/* Knobs given at creation are checked: an unknown one, an output port or
 * a value that is not a number is an error naming the knob; a value out
 * of the port's range is held to it. */
static pn_error create_with(const pnl_control_setting *c, pnl_engine **e, pn_error_info *info)
{
    pnl_engine_settings s;
    test_settings(&s);
    s.controls = c;
    s.num_controls = 1;
    return pnl_engine_create(&s, e, info);
}

static void test_creation_knobs_are_checked(void **state)
{
    (void)state;
    const pnl_control_setting bad[] = {
        {"no_such_knob", 1.0f}, {"rules_selected", 1.0f}, {"seed", NAN}, {NULL, 1.0f}};
    const char *named[] = {"no_such_knob", "rules_selected", "seed", "(null)"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        pnl_engine *e = NULL;
        pn_error_info info = {PN_OK, ""};
        assert_int_not_equal(create_with(&bad[i], &e, &info), PN_OK);
        assert_null(e);
        if (!strstr(info.message, named[i]))
            fail_msg("'%s' not named: %s", named[i], info.message);
    }
    const pnl_control_setting huge = {"seed", 1e12f};
    pnl_engine *e = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(create_with(&huge, &e, &info), PN_OK);
    float hi;
    assert_true(pnl_engine_control_range(e, "seed", NULL, NULL, &hi));
    assert_float_equal(pnl_engine_control(e, "seed"), hi, 0.0f);
    pnl_engine_free(e);
}

/* A rule set given at creation plays from the first step: a set whose
 * space holds only C5, G4, E4 and C3 (or rests) sounds nothing else from
 * the first onset on, which is on the stream's first frame; a set the
 * plugin cannot read stops the creation with the loader's message. */
static const char tiny_rules[] =
    "{ \"format\": \"parnassus-rules/1\", \"name\": \"tiny\",\n"
    "  \"space\": { \"ranges\": [[72, 72], [67, 67], [64, 64], [48, 48]] },\n"
    "  \"rules\": [ { \"name\": \"soprano\", \"feature\": \"w(1)\",\n"
    "                \"targets\": { \"72\": 0.9, \"R\": 0.1 } } ] }\n";

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void test_rules_play_from_the_first_step(void **state)
{
    (void)state;
    char path[] = "/tmp/pn-live-rules-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, tiny_rules);
    fixture *f = calloc(1, sizeof *f);
    engine_rules = path;
    make_engine(f, PNL_SYNC_INTERNAL, 120.0, 0);
    engine_rules = NULL;
    unlink(path); /* the plugin has it */
    run_synced(f, 2 * RATE / BLOCK);
    double t[16];
    assert_true(onsets(f, t, 16) >= 4);
    assert_true(t[0] < 1e-9); /* the first step, on the first frame */
    for (size_t i = 0; i < f->num_sent; ++i)
        if (is_note_on(&f->sent[i])) {
            const int pitch = f->sent[i].bytes[1];
            if (pitch != 72 && pitch != 67 && pitch != 64 && pitch != 48)
                fail_msg("note %d at %.3f s is not the set's", pitch, f->sent[i].time);
        }
    drop(f);

    write_file(path, "{ \"format\": \"parnassus-rules/1\", \"rules\": [ oops ] }\n");
    pnl_engine_settings s;
    test_settings(&s);
    s.rules = path;
    pnl_engine *e = NULL;
    pn_error_info info = {PN_OK, ""};
    const pn_error rc = pnl_engine_create(&s, &e, &info);
    unlink(path);
    assert_int_not_equal(rc, PN_OK);
    assert_null(e);
    if (!strstr(info.message, path) || !strstr(info.message, "line 1"))
        fail_msg("the file and its line not named: %s", info.message);
}

/* stop: every note that was turned on is turned off */
static void test_stop_releases_every_note(void **state)
{
    (void)state;
    fixture *f = calloc(1, sizeof *f);
    make_engine(f, PNL_SYNC_INTERNAL, 120.0, 0);
    run(f, RATE / BLOCK);
    assert_int_equal(pnl_engine_stop(f->e), 0);
    run(f, 8);
    int sounding[16][128] = {{0}};
    for (size_t i = 0; i < f->num_sent; ++i) {
        const pnl_midi_msg *m = &f->sent[i];
        if (is_note_on(m))
            sounding[m->bytes[0] & 15][m->bytes[1]]++;
        else if (is_note_off(m) && sounding[m->bytes[0] & 15][m->bytes[1]] > 0)
            sounding[m->bytes[0] & 15][m->bytes[1]]--;
    }
    for (int ch = 0; ch < 16; ++ch)
        for (int k = 0; k < 128; ++k)
            assert_int_equal(sounding[ch][k], 0);
    pnl_status st;
    pnl_engine_status(f->e, &st);
    assert_int_equal(st.rolling, 0);
    const size_t before = f->num_sent;
    run(f, RATE / BLOCK); /* stopped: nothing more */
    for (size_t i = before; i < f->num_sent; ++i)
        assert_false(is_note_on(&f->sent[i]));
    drop(f);
}

/* a new rule set: every note sounding before it is released at once */
static void test_rule_switch_releases_notes(void **state)
{
    (void)state;
    fixture *f = calloc(1, sizeof *f);
    make_engine(f, PNL_SYNC_INTERNAL, 120.0, 0);
    /* on until notes sound (a drawn rest may come first), at most 4 s */
    int sounding[16][128] = {{0}}, count = 0;
    size_t seen = 0;
    for (int b = 0; b < 4 * RATE / BLOCK && count == 0; ++b) {
        run_synced(f, 1);
        for (; seen < f->num_sent; ++seen) {
            const pnl_midi_msg *m = &f->sent[seen];
            if (is_note_on(m)) {
                sounding[m->bytes[0] & 15][m->bytes[1]]++;
                ++count;
            } else if (is_note_off(m) && sounding[m->bytes[0] & 15][m->bytes[1]] > 0) {
                sounding[m->bytes[0] & 15][m->bytes[1]]--;
                --count;
            }
        }
    }
    assert_true(count > 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/rules/textbook-major.json", getenv("PNP_BUNDLE_DIR"));
    const size_t before = f->num_sent;
    assert_int_equal(pnl_engine_load_rules(f->e, path), 0);
    run(f, 1);
    for (size_t i = before; i < f->num_sent; ++i) {
        const pnl_midi_msg *m = &f->sent[i];
        if (is_note_off(m) && sounding[m->bytes[0] & 15][m->bytes[1]] > 0) {
            sounding[m->bytes[0] & 15][m->bytes[1]]--;
            --count;
        }
    }
    assert_int_equal(count, 0);
    assert_int_equal(pnl_engine_load_rules(f->e, ""), -1);
    drop(f);
}

/* a knob moved at every buffer: the last value wins */
static void test_knob_last_value_wins(void **state)
{
    (void)state;
    fixture *f = calloc(1, sizeof *f);
    make_engine(f, PNL_SYNC_INTERNAL, 120.0, 0);
    for (int i = 0; i < 200; ++i) {
        assert_int_equal(pnl_engine_set_control(f->e, "log2_lambda_w", (float)(i % 9) - 4.0f), 0);
        run(f, 1);
    }
    for (int i = 0; i < 50; ++i)
        assert_int_equal(pnl_engine_set_control(f->e, "alpha", 0.01f * (float)i), 0);
    assert_int_equal(pnl_engine_set_control(f->e, "log2_lambda_w", 99.0f), 0); /* clamped */
    run(f, 1);
    float lo, hi;
    assert_true(pnl_engine_control_range(f->e, "log2_lambda_w", NULL, &lo, &hi));
    assert_float_equal(pnl_engine_control(f->e, "log2_lambda_w"), hi, 1e-6);
    assert_float_equal(pnl_engine_control(f->e, "alpha"), 0.49f, 1e-6);
    assert_int_equal(pnl_engine_set_control(f->e, "no_such_knob", 1.0f), -1);
    assert_int_equal(pnl_engine_set_control(f->e, "rules_selected", 1.0f), -1); /* an output */
    drop(f);
}

/* The highest key sounding just after time t (every message up to t
 * applied in order), or -1. */
static int highest_sounding(const fixture *f, double t)
{
    int count[128] = {0};
    for (size_t i = 0; i < f->num_sent && f->sent[i].time <= t + 1e-9; ++i) {
        const pnl_midi_msg *m = &f->sent[i];
        if (is_note_on(m))
            ++count[m->bytes[1] & 0x7F];
        else if (is_note_off(m) && count[m->bytes[1] & 0x7F] > 0)
            --count[m->bytes[1] & 0x7F];
    }
    for (int k = 127; k >= 0; --k)
        if (count[k] > 0)
            return k;
    return -1;
}

/* a held key leads: in "harmonize" input mode every step's soprano is it */
static void test_harmonizes_the_held_note(void **state)
{
    (void)state;
    fixture *f = calloc(1, sizeof *f);
    make_engine(f, PNL_SYNC_INTERNAL, 120.0, 0);
    float def, lo, hi;
    assert_true(pnl_engine_control_range(f->e, "input_mode", &def, &lo, &hi));
    assert_int_equal(pnl_engine_set_control(f->e, "input_mode", 1.0f), 0);
    run_synced(f, 4);
    const pnl_midi_msg key = {.time = 0, .size = 3, .bytes = {0x90, 72, 100}};
    assert_int_equal(pnl_engine_midi_in(f->e, &key), 0);
    run_synced(f, 2 * RATE / BLOCK);
    /* from the second onset after the key on, the highest note sounding
     * is the key (struck, or tied over from the step before) */
    double t[64];
    const size_t n = onsets(f, t, 64);
    assert_true(n >= 4);
    int checked = 0;
    for (size_t s = 2; s < n; ++s) {
        const int top = highest_sounding(f, t[s]);
        if (top >= 0) {
            assert_int_equal(top, 72);
            ++checked;
        }
    }
    assert_true(checked >= 2);
    drop(f);
}

/* the plugin's report of the rules kept reaches the control thread */
static void test_rules_kept_are_named(void **state)
{
    (void)state;
    fixture *f = calloc(1, sizeof *f);
    make_engine(f, PNL_SYNC_INTERNAL, 120.0, 0);
    run(f, RATE / BLOCK);
    const char *names = pnl_engine_rules_kept(f->e);
    pnl_status st;
    pnl_engine_status(f->e, &st);
    assert_true(strlen(names) > 0);
    int count = 1;
    for (const char *c = names; *c; ++c)
        count += *c == ',';
    assert_int_equal(count, (int)st.rules_selected);
    assert_non_null(strstr(names, "chord"));
    drop(f);
}

/* Three threads as in the app: a control thread moving a knob, a MIDI
 * thread playing keys in and taking notes out, and the audio thread (run
 * under TSan, this shows the rings and the worker hand-over are clean) */
typedef struct threads {
    fixture *f;
    atomic_int stop;
    atomic_long midi_out, control_sets;
} threads;

static void *control_thread(void *arg)
{
    threads *t = arg;
    for (int i = 0; !atomic_load(&t->stop); ++i) {
        if (pnl_engine_set_control(t->f->e, "alpha", 0.5f + 0.001f * (float)(i % 100)) == 0)
            atomic_fetch_add(&t->control_sets, 1);
        pnl_status st;
        pnl_engine_status(t->f->e, &st);
        (void)pnl_engine_rules_kept(t->f->e);
        const struct timespec pause = {0, 200000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void *midi_thread(void *arg)
{
    threads *t = arg;
    pnl_midi_msg out[64];
    for (int i = 0; !atomic_load(&t->stop); ++i) {
        /* the key struck again (released, then pressed): it is held
         * whenever a step comes, however this thread is scheduled */
        for (int k = 0; k < 2; ++k) {
            const pnl_midi_msg key = {.time = pnl_engine_clock(t->f->e),
                                      .size = 3,
                                      .bytes = {(uint8_t)(k == 0 ? 0x80 : 0x90), 72, 90}};
            pnl_engine_midi_in(t->f->e, &key);
        }
        atomic_fetch_add(&t->midi_out, (long)pnl_engine_drain_midi_out(t->f->e, out, 64));
        const struct timespec pause = {0, 300000};
        nanosleep(&pause, NULL);
    }
    return NULL;
}

static void test_threads_share_the_engine(void **state)
{
    (void)state;
    fixture *f = calloc(1, sizeof *f);
    make_engine(f, PNL_SYNC_INTERNAL, 240.0, 0);
    assert_int_equal(pnl_engine_set_control(f->e, "input_mode", 1.0f), 0);
    threads t = {.f = f};
    atomic_init(&t.stop, 0);
    atomic_init(&t.midi_out, 0);
    atomic_init(&t.control_sets, 0);
    pthread_t control, midi;
    rt_guard_reset();
    assert_int_equal(pthread_create(&control, NULL, control_thread, &t), 0);
    assert_int_equal(pthread_create(&midi, NULL, midi_thread, &t), 0);
    for (int b = 0; b < RATE / BLOCK; ++b) { /* a second of audio, paced at 4 x real time */
        rt_guard_audio_enter(NULL);
        pnl_engine_process(f->e, f->left, f->right, BLOCK);
        rt_guard_audio_leave(NULL);
        const struct timespec pause = {0, 1333333};
        nanosleep(&pause, NULL);
    }
    atomic_store(&t.stop, 1);
    pthread_join(control, NULL);
    pthread_join(midi, NULL);
    assert_true(atomic_load(&t.midi_out) > 0);
    assert_true(atomic_load(&t.control_sets) > 0);
    if (RT_GUARD_WORKS && rt_guard_count() != 0)
        fail_msg("the audio side allocated or locked %ld times (first: %s)", rt_guard_count(),
                 rt_guard_first());
    assert_float_equal(pnl_engine_control(f->e, "input_mode"), 1.0f, 0);
    drop(f);
}

/* a pseudo-random jitter of up to +-1 ms, reproducible */
static double jitter(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return ((double)(*s >> 11) / 9007199254740992.0 - 0.5) * 0.002;
}

/* MIDI clock at `bpm` with jitter: the steps follow its tempo */
static void follow_clock_at(double bpm)
{
    fixture *f = calloc(1, sizeof *f);
    make_engine(f, PNL_SYNC_MIDI_CLOCK, 120.0, 0);
    uint64_t seed = 7;
    const double pulse = 60.0 / bpm / PNL_CLOCK_PPQN;
    const double t0 = 0.1;
    const pnl_midi_msg start = {.time = t0 - 0.001, .size = 1, .bytes = {PNL_MIDI_START}};
    int64_t frames = 0;
    int next_pulse = 0;
    run(f, 2);
    frames += 2 * BLOCK;
    assert_int_equal(pnl_engine_midi_in(f->e, &start), 0);
    const int bars = 6, pulses = bars * 4 * PNL_CLOCK_PPQN;
    while (next_pulse < pulses) {
        const double block_end = (double)(frames + BLOCK) / RATE;
        /* the pulses that arrive during this buffer, handed over before it */
        while (next_pulse < pulses && t0 + next_pulse * pulse < block_end) {
            const pnl_midi_msg m = {.time = t0 + next_pulse * pulse + jitter(&seed),
                                    .size = 1,
                                    .bytes = {PNL_MIDI_CLOCK}};
            assert_int_equal(pnl_engine_midi_in(f->e, &m), 0);
            ++next_pulse;
        }
        run_synced(f, 1);
        frames += BLOCK;
    }
    pnl_status st;
    pnl_engine_status(f->e, &st);
    assert_int_equal(st.rolling, 1);
    if (fabs(st.bpm - bpm) / bpm > 0.005)
        fail_msg("at %g bpm the estimate is %g", bpm, st.bpm);
    /* the step rate after two bars: 1/8 notes at the clock's tempo */
    double t[256];
    const size_t n = onsets(f, t, 256);
    const double after = t0 + 2 * 4 * 60.0 / bpm;
    size_t first = 0;
    while (first < n && t[first] < after)
        ++first;
    assert_true(n - first >= 8);
    /* steps over the span, a silent gap (a drawn rest) counted as the
     * whole steps it covers; the shortest gap is one step, so a tempo
     * off by a whole factor cannot pass as rests */
    const double want = bpm / 60.0 * 2.0;
    double steps = 0, shortest = INFINITY;
    for (size_t i = first + 1; i < n; ++i) {
        steps += round((t[i] - t[i - 1]) * want);
        shortest = fmin(shortest, t[i] - t[i - 1]);
    }
    if (fabs(shortest * want - 1.0) > 0.1)
        fail_msg("at %g bpm: the shortest step is %g s, want %g", bpm, shortest, 1.0 / want);
    const double rate = steps / (t[n - 1] - t[first]);
    if (fabs(rate - want) / want > 0.005)
        fail_msg("at %g bpm: %g steps a second, want %g", bpm, rate, want);
    /* Stop: the notes end and no more steps come */
    const pnl_midi_msg stop = {.time = (double)frames / RATE, .size = 1, .bytes = {PNL_MIDI_STOP}};
    assert_int_equal(pnl_engine_midi_in(f->e, &stop), 0);
    run(f, 4);
    const size_t at_stop = f->num_sent;
    run(f, RATE / BLOCK);
    for (size_t i = at_stop; i < f->num_sent; ++i)
        assert_false(is_note_on(&f->sent[i]));
    pnl_engine_status(f->e, &st);
    assert_int_equal(st.rolling, 0);
    drop(f);
}

static void test_midi_clock_100(void **state)
{
    (void)state;
    follow_clock_at(100.0);
}

static void test_midi_clock_140(void **state)
{
    (void)state;
    follow_clock_at(140.0);
}

/* as the clock master: Start, then 24 pulses a quarter note on their
 * frames, then Stop */
static void test_sends_midi_clock(void **state)
{
    (void)state;
    fixture *f = calloc(1, sizeof *f);
    send_clock_out = 1;
    make_engine(f, PNL_SYNC_INTERNAL, 120.0, 0);
    send_clock_out = 0;
    run(f, 2 * RATE / BLOCK);
    assert_int_equal(pnl_engine_stop(f->e), 0);
    run(f, 2);
    double pulses[256];
    int n = 0, starts = 0, stops = 0;
    for (size_t i = 0; i < f->num_sent; ++i) {
        const pnl_midi_msg *m = &f->sent[i];
        if (m->size != 1)
            continue;
        if (m->bytes[0] == PNL_MIDI_START) {
            assert_int_equal(n, 0); /* before the first pulse */
            ++starts;
        } else if (m->bytes[0] == PNL_MIDI_STOP)
            ++stops;
        else if (m->bytes[0] == PNL_MIDI_CLOCK && n < 256)
            pulses[n++] = m->time;
    }
    assert_int_equal(starts, 1);
    assert_int_equal(stops, 1);
    /* 2 s at 120 bpm: 4 beats, 96 pulses (the one at 2 s may fall in) */
    assert_true(n >= 96 && n <= 98);
    for (int i = 0; i < n; ++i)
        assert_true(fabs(pulses[i] - (double)i / 48.0) < 0.5 / RATE);
    drop(f);
}

/* Song Position Pointer while stopped, then Continue: the transport goes
 * on from there */
static void test_midi_clock_song_position(void **state)
{
    (void)state;
    fixture *f = calloc(1, sizeof *f);
    make_engine(f, PNL_SYNC_MIDI_CLOCK, 120.0, 0);
    const double pulse = 60.0 / 120.0 / PNL_CLOCK_PPQN;
    int64_t frames = 0;
    double t = 0.01;
    /* 32 sixteenths = beat 8 */
    const pnl_midi_msg spp = {.time = t, .size = 3, .bytes = {PNL_MIDI_SONG_POSITION, 32, 0}};
    const pnl_midi_msg cont = {.time = t, .size = 1, .bytes = {PNL_MIDI_CONTINUE}};
    assert_int_equal(pnl_engine_midi_in(f->e, &spp), 0);
    assert_int_equal(pnl_engine_midi_in(f->e, &cont), 0);
    for (int p = 0; p < 2 * PNL_CLOCK_PPQN; ++frames) {
        const double block_end = (double)(frames + 1) * BLOCK / RATE;
        while (t + p * pulse < block_end && p < 2 * PNL_CLOCK_PPQN) {
            const pnl_midi_msg m = {.time = t + p * pulse, .size = 1, .bytes = {PNL_MIDI_CLOCK}};
            assert_int_equal(pnl_engine_midi_in(f->e, &m), 0);
            ++p;
        }
        run(f, 1);
    }
    pnl_status st;
    pnl_engine_status(f->e, &st);
    assert_int_equal(st.rolling, 1);
    /* two beats of pulses after beat 8 */
    if (fabs(st.beat - 10.0) > 0.1)
        fail_msg("the transport is at beat %g, want about 10", st.beat);
    drop(f);
}

/* under MIDI clock nothing plays before Start */
static void test_midi_clock_waits_for_start(void **state)
{
    (void)state;
    fixture *f = calloc(1, sizeof *f);
    make_engine(f, PNL_SYNC_MIDI_CLOCK, 120.0, 0);
    run(f, RATE / BLOCK);
    for (size_t i = 0; i < f->num_sent; ++i)
        assert_false(is_note_on(&f->sent[i]));
    drop(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_on_the_stream_clock),
        cmocka_unit_test(test_seed_makes_a_take_repeatable),
        cmocka_unit_test(test_creation_knobs_are_checked),
        cmocka_unit_test(test_rules_play_from_the_first_step),
        cmocka_unit_test(test_stop_releases_every_note),
        cmocka_unit_test(test_knob_last_value_wins),
        cmocka_unit_test(test_harmonizes_the_held_note),
        cmocka_unit_test(test_rules_kept_are_named),
        cmocka_unit_test(test_threads_share_the_engine),
        cmocka_unit_test(test_midi_clock_100),
        cmocka_unit_test(test_midi_clock_140),
        cmocka_unit_test(test_midi_clock_waits_for_start),
        cmocka_unit_test(test_sends_midi_clock),
        cmocka_unit_test(test_rule_switch_releases_notes),
        cmocka_unit_test(test_midi_clock_song_position),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
