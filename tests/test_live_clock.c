/* Tests of the MIDI clock follower of parnassus-live: the tempo estimate
 * under jitter, outliers and tempo changes; Start, Stop, Continue and Song
 * Position Pointer; the position between pulses; malformed input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "live_clock.h"

enum { BAR = 4 * PNL_CLOCK_PPQN, SEEDS = 32 };

/* ------------------------------------------------------------- helpers */

static unsigned feed1(pnl_clock *c, uint8_t status, double t)
{
    return pnl_clock_feed(c, &status, 1, t);
}

static unsigned feed_spp(pnl_clock *c, unsigned sixteenths, double t)
{
    uint8_t msg[3] = {PNL_MIDI_SONG_POSITION, (uint8_t)(sixteenths & 0x7F),
                      (uint8_t)(sixteenths >> 7 & 0x7F)};
    return pnl_clock_feed(c, msg, 3, t);
}

/* A clock source: pulses at a steady tempo, each displaced by a uniform
 * random jitter in [-jitter, +jitter] (a small deterministic generator, so
 * every run sees the same times). */
typedef struct source {
    double ideal;  /* time of the next pulse without jitter */
    double period; /* seconds per pulse */
    double jitter; /* seconds */
    uint32_t rng;
    double last; /* time of the last pulse sent */
} source;

static source make_source(double bpm, double jitter, uint32_t seed)
{
    source s = {1000.0, 60.0 / (bpm * PNL_CLOCK_PPQN), jitter, seed * 2654435761u + 1u, 0.0};
    return s;
}

static double uniform(source *s) /* in [-1, 1) */
{
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 17;
    s->rng ^= s->rng << 5;
    return (double)s->rng / 2147483648.0 - 1.0;
}

static double next_pulse_time(source *s)
{
    double t = s->ideal + s->jitter * uniform(s);
    if (t < s->last)
        t = s->last; /* arrival times never go back */
    s->ideal += s->period;
    s->last = t;
    return t;
}

static void set_bpm(source *s, double bpm)
{
    s->period = 60.0 / (bpm * PNL_CLOCK_PPQN);
}

/* Sends n pulses; returns the changes reported, or-ed. */
static unsigned send_pulses(pnl_clock *c, source *s, int n)
{
    unsigned changed = 0;
    for (int i = 0; i < n; ++i)
        changed |= feed1(c, PNL_MIDI_CLOCK, next_pulse_time(s));
    return changed;
}

static double relative_error(double estimate, double truth)
{
    return fabs(estimate - truth) / truth;
}

/* ----------------------------------------------------------- the tempo */

static void check_steady(double bpm)
{
    for (uint32_t seed = 1; seed <= SEEDS; ++seed) {
        pnl_clock c;
        pnl_clock_init(&c, 120.0);
        source s = make_source(bpm, 0.001, seed);
        unsigned changed = send_pulses(&c, &s, 2 * BAR);
        assert_true(c.locked);
        assert_true(relative_error(c.bpm, bpm) < 0.005);
        assert_true(changed & PNL_CLOCK_CHANGED_TEMPO);
        assert_false(c.rolling); /* no Start: the tempo is followed all the same */
    }
}

static void test_steady_100(void **state)
{
    (void)state;
    check_steady(100.0);
}

static void test_steady_140(void **state)
{
    (void)state;
    check_steady(140.0);
}

static void test_extreme_tempos(void **state)
{
    (void)state;
    const double tempos[] = {20.5, 45.0, 240.0, 399.0};
    for (size_t i = 0; i < sizeof tempos / sizeof tempos[0]; ++i) {
        pnl_clock c;
        pnl_clock_init(&c, 120.0);
        source s = make_source(tempos[i], 0.001, 7);
        send_pulses(&c, &s, 2 * BAR);
        assert_true(c.locked);
        assert_true(relative_error(c.bpm, tempos[i]) < 0.005);
    }
}

/* Once converged, a steady jittery clock keeps the estimate within 0.1 %
 * and reports a tempo change at most once in 8 bars (when the estimate has
 * drifted 0.1 % from the one reported while it was settling). */
static void test_steady_is_quiet(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= SEEDS; ++seed) {
        pnl_clock c;
        pnl_clock_init(&c, 120.0);
        source s = make_source(100.0, 0.001, seed);
        send_pulses(&c, &s, 2 * BAR);
        int reports = 0;
        for (int i = 0; i < 8 * BAR; ++i) {
            unsigned changed = feed1(&c, PNL_MIDI_CLOCK, next_pulse_time(&s));
            reports += (changed & PNL_CLOCK_CHANGED_TEMPO) != 0;
            assert_true(relative_error(c.bpm, 100.0) < 0.001);
        }
        assert_true(reports <= 1);
    }
}

static void test_tempo_change(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= SEEDS; ++seed) {
        pnl_clock c;
        pnl_clock_init(&c, 120.0);
        source s = make_source(100.0, 0.001, seed);
        send_pulses(&c, &s, 2 * BAR);
        assert_true(relative_error(c.bpm, 100.0) < 0.005);
        set_bpm(&s, 140.0);
        assert_true(send_pulses(&c, &s, 2 * BAR) & PNL_CLOCK_CHANGED_TEMPO);
        assert_true(relative_error(c.bpm, 140.0) < 0.005);
        /* And back, faster than two bars: within one. */
        set_bpm(&s, 100.0);
        send_pulses(&c, &s, BAR);
        assert_true(relative_error(c.bpm, 100.0) < 0.005);
    }
}

/* Small changes are followed too, even through 3 ms of jitter. They are
 * too small to tell from jitter over a few pulses, but must not be taken
 * for jumps in time, which would hide them. */
static void test_small_tempo_change(void **state)
{
    (void)state;
    const double changes[][3] = {{120.0, 122.4, 0.001}, {100.0, 105.0, 0.003}};
    for (int k = 0; k < 2; ++k) {
        for (uint32_t seed = 1; seed <= SEEDS; ++seed) {
            pnl_clock c;
            pnl_clock_init(&c, 120.0);
            source s = make_source(changes[k][0], changes[k][2], seed);
            send_pulses(&c, &s, 2 * BAR);
            set_bpm(&s, changes[k][1]);
            send_pulses(&c, &s, BAR);
            assert_true(relative_error(c.bpm, changes[k][1]) < 0.005);
        }
    }
}

/* Sends pulses and returns the largest relative error of the estimate
 * seen after any of them. */
static double worst_error(pnl_clock *c, source *s, int n, double bpm)
{
    double worst = 0.0;
    for (int i = 0; i < n; ++i) {
        feed1(c, PNL_MIDI_CLOCK, next_pulse_time(s));
        worst = fmax(worst, relative_error(c->bpm, bpm));
    }
    return worst;
}

static void test_pause(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= SEEDS; ++seed) {
        pnl_clock c;
        pnl_clock_init(&c, 120.0);
        source s = make_source(100.0, 0.001, seed);
        send_pulses(&c, &s, 2 * BAR);
        double before = c.bpm;
        s.ideal += 2.0; /* the sender stalls for two seconds */
        assert_true(worst_error(&c, &s, BAR, 100.0) < 0.005);
        assert_true(relative_error(c.bpm, before) < 0.001);
        assert_true(c.locked);
    }
}

static void test_lost_and_doubled_pulses(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= SEEDS; ++seed) {
        pnl_clock c;
        pnl_clock_init(&c, 120.0);
        source s = make_source(140.0, 0.001, seed);
        send_pulses(&c, &s, 2 * BAR);
        double before = c.bpm;
        double worst = 0.0;
        for (int k = 0; k < 4; ++k) {
            s.ideal += s.period; /* one pulse lost */
            worst = fmax(worst, worst_error(&c, &s, BAR / 2, 140.0));
            /* One pulse twice, a millisecond apart. */
            feed1(&c, PNL_MIDI_CLOCK, s.last + 0.001);
            worst = fmax(worst, worst_error(&c, &s, BAR / 2, 140.0));
        }
        assert_true(worst < 0.005);
        assert_true(relative_error(c.bpm, before) < 0.002);
    }
}

/* Stop, silence, and a new song at another tempo: followed at once. */
static void test_pause_then_new_tempo(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= SEEDS; ++seed) {
        pnl_clock c;
        pnl_clock_init(&c, 120.0);
        source s = make_source(100.0, 0.001, seed);
        send_pulses(&c, &s, 2 * BAR);
        s.ideal += 5.0;
        set_bpm(&s, 150.0);
        send_pulses(&c, &s, PNL_CLOCK_PPQN / 2);
        assert_true(relative_error(c.bpm, 150.0) < 0.02);
        send_pulses(&c, &s, BAR);
        assert_true(relative_error(c.bpm, 150.0) < 0.005);
    }
}

/* A DAW's tempo ramp, 120 to 140 bpm over four bars: followed within 2 %
 * all along, within 0.5 % a bar after its end. */
static void test_tempo_ramp(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= SEEDS; ++seed) {
        pnl_clock c;
        pnl_clock_init(&c, 120.0);
        source s = make_source(120.0, 0.001, seed);
        send_pulses(&c, &s, 2 * BAR);
        for (int i = 1; i <= 4 * BAR; ++i) {
            double bpm = 120.0 + 20.0 * i / (4 * BAR);
            set_bpm(&s, bpm);
            send_pulses(&c, &s, 1);
            assert_true(relative_error(c.bpm, bpm) < 0.02);
        }
        send_pulses(&c, &s, BAR);
        assert_true(relative_error(c.bpm, 140.0) < 0.005);
    }
}

/* A clock with three times the jitter: still within 0.5 % after two bars,
 * and a lost pulse or a pause does not throw it off. */
static void test_heavy_jitter(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= SEEDS; ++seed) {
        pnl_clock c;
        pnl_clock_init(&c, 120.0);
        source s = make_source(120.0, 0.003, seed);
        send_pulses(&c, &s, 2 * BAR);
        assert_true(relative_error(c.bpm, 120.0) < 0.005);
        s.ideal += s.period;
        assert_true(worst_error(&c, &s, BAR, 120.0) < 0.005);
        s.ideal += 1.0;
        assert_true(worst_error(&c, &s, BAR, 120.0) < 0.005);
    }
}

/* Jitter of almost half a period: the tolerance widens with the jitter
 * seen, instead of taking many pulses for outliers. */
static void test_jitter_widens_tolerance(void **state)
{
    (void)state;
    for (uint32_t seed = 1; seed <= SEEDS; ++seed) {
        pnl_clock c;
        pnl_clock_init(&c, 120.0);
        source s = make_source(140.0, 0.008, seed);
        send_pulses(&c, &s, 2 * BAR);
        assert_true(worst_error(&c, &s, 2 * BAR, 140.0) < 0.01);
    }
}

/* A single pulse far off (here: half a period late) is dropped. */
static void test_single_outlier(void **state)
{
    (void)state;
    pnl_clock c;
    pnl_clock_init(&c, 120.0);
    source s = make_source(100.0, 0.0, 1);
    send_pulses(&c, &s, 2 * BAR);
    assert_true(relative_error(c.bpm, 100.0) < 1e-9);
    feed1(&c, PNL_MIDI_CLOCK, s.ideal + 0.5 * s.period);
    s.ideal += s.period;
    send_pulses(&c, &s, 1);
    assert_true(relative_error(c.bpm, 100.0) < 1e-9);
}

/* A clock outside 20..400 bpm never gives a tempo. */
static void test_implausible_clock(void **state)
{
    (void)state;
    const double tempos[] = {10.0, 1000.0};
    for (size_t i = 0; i < 2; ++i) {
        pnl_clock c;
        pnl_clock_init(&c, 90.0);
        source s = make_source(tempos[i], 0.0, 1);
        assert_int_equal(send_pulses(&c, &s, 2 * BAR) & PNL_CLOCK_CHANGED_TEMPO, 0);
        assert_false(c.locked);
        assert_true(c.bpm == 90.0);
    }
    /* Random intervals of 0..2 s: no consistent clock either. */
    pnl_clock c;
    pnl_clock_init(&c, 90.0);
    source s = make_source(100.0, 0.0, 5);
    double t = 0.0;
    for (int i = 0; i < 4 * BAR; ++i) {
        t += 1.0 + uniform(&s);
        feed1(&c, PNL_MIDI_CLOCK, t);
    }
    assert_false(c.locked);
    assert_true(c.bpm == 90.0);
}

/* Hours of clock keep the running sums exact enough. */
static void test_long_run(void **state)
{
    (void)state;
    pnl_clock c;
    pnl_clock_init(&c, 120.0);
    source s = make_source(137.0, 0.001, 11);
    s.ideal = 1e6;
    send_pulses(&c, &s, 137 * PNL_CLOCK_PPQN * 60 * 3); /* three hours */
    assert_true(relative_error(c.bpm, 137.0) < 0.001);
}

static void test_init(void **state)
{
    (void)state;
    pnl_clock c;
    pnl_clock_init(&c, 90.0);
    assert_true(c.bpm == 90.0);
    assert_false(c.rolling);
    assert_false(c.locked);
    assert_true(pnl_clock_beat_at(&c, 5.0) == 0.0);
    const double bad[] = {0.0, -100.0, 19.9, 400.1, 1e9, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        pnl_clock_init(&c, bad[i]);
        assert_true(c.bpm == 120.0);
    }
    pnl_clock_init(&c, 20.0);
    assert_true(c.bpm == 20.0);
    pnl_clock_init(&c, 400.0);
    assert_true(c.bpm == 400.0);
}

/* ------------------------------------------------------- the transport */

/* Sends one pulse; *changed gets the transport's changes (the tempo's are
 * tested above). Returns the pulse's time. */
static double feed_pulse(pnl_clock *c, source *s, unsigned *changed)
{
    double t = next_pulse_time(s);
    *changed = feed1(c, PNL_MIDI_CLOCK, t) & ~(unsigned)PNL_CLOCK_CHANGED_TEMPO;
    return t;
}

static void test_start_counts_from_zero(void **state)
{
    (void)state;
    pnl_clock c;
    pnl_clock_init(&c, 120.0);
    source s = make_source(120.0, 0.0, 1);
    send_pulses(&c, &s, BAR);
    assert_true(pnl_clock_beat_at(&c, s.last) == 0.0); /* stopped: no counting */

    assert_int_equal(feed1(&c, PNL_MIDI_START, s.last + 0.001), 0);
    assert_false(c.rolling); /* until the next pulse */
    unsigned changed;
    double t = feed_pulse(&c, &s, &changed);
    assert_int_equal(changed, PNL_CLOCK_CHANGED_ROLLING | PNL_CLOCK_CHANGED_POSITION);
    assert_true(c.rolling);
    assert_true(pnl_clock_beat_at(&c, t) == 0.0);
    for (int i = 1; i <= 2 * BAR; ++i) {
        t = feed_pulse(&c, &s, &changed);
        assert_int_equal(changed, 0);
        assert_true(pnl_clock_beat_at(&c, t) == (double)i / PNL_CLOCK_PPQN);
    }
    assert_true(pnl_clock_beat_at(&c, t) == 8.0);
    /* Half a pulse later, half a pulse further. */
    assert_true(fabs(pnl_clock_beat_at(&c, t + s.period / 2) - (8.0 + 0.5 / PNL_CLOCK_PPQN)) <
                1e-9);

    /* Start while rolling: back to 0 at the next pulse, still rolling. */
    assert_int_equal(feed1(&c, PNL_MIDI_START, t + 0.001), 0);
    assert_true(pnl_clock_beat_at(&c, t + 0.001) > 8.0);
    t = feed_pulse(&c, &s, &changed);
    assert_int_equal(changed, PNL_CLOCK_CHANGED_POSITION);
    assert_true(c.rolling);
    assert_true(pnl_clock_beat_at(&c, t) == 0.0);
}

/* Starts and runs `pulses` pulses: the position is then pulses / 24 at
 * the time of the next pulse. Returns the time of the last pulse. */
static double start_and_run(pnl_clock *c, source *s, int pulses)
{
    feed1(c, PNL_MIDI_START, s->last);
    send_pulses(c, s, pulses);
    assert_true(c->rolling);
    return s->last;
}

static void test_stop_and_continue(void **state)
{
    (void)state;
    pnl_clock c;
    pnl_clock_init(&c, 120.0);
    source s = make_source(120.0, 0.001, 9);
    double t = start_and_run(&c, &s, 2 * BAR + 12); /* 8.5 quarters */
    assert_int_equal(feed1(&c, PNL_MIDI_STOP, t + 0.002), PNL_CLOCK_CHANGED_ROLLING);
    assert_false(c.rolling);
    assert_true(pnl_clock_beat_at(&c, t + 0.002) == 8.5);
    assert_true(pnl_clock_beat_at(&c, t + 100.0) == 8.5);
    /* Pulses while stopped keep the tempo but not the position. */
    assert_int_equal(send_pulses(&c, &s, BAR) & PNL_CLOCK_CHANGED_ROLLING, 0);
    assert_true(pnl_clock_beat_at(&c, s.last) == 8.5);
    assert_int_equal(feed1(&c, PNL_MIDI_STOP, s.last), 0); /* stopped already */

    assert_int_equal(feed1(&c, PNL_MIDI_CONTINUE, s.last + 0.001), 0);
    assert_false(c.rolling);
    unsigned changed;
    t = feed_pulse(&c, &s, &changed);
    assert_int_equal(changed, PNL_CLOCK_CHANGED_ROLLING);
    assert_true(c.rolling);
    assert_true(pnl_clock_beat_at(&c, t) == 8.5);
    send_pulses(&c, &s, 6);
    assert_true(pnl_clock_beat_at(&c, s.last) == 8.75);
    /* Continue while rolling changes nothing. */
    assert_int_equal(feed1(&c, PNL_MIDI_CONTINUE, s.last), 0);
    t = feed_pulse(&c, &s, &changed);
    assert_int_equal(changed, 0);
    assert_true(pnl_clock_beat_at(&c, t) == 8.75 + 1.0 / PNL_CLOCK_PPQN);
}

/* Stop cancels a Start or Continue that waits for its pulse. */
static void test_stop_cancels_pending(void **state)
{
    (void)state;
    const uint8_t pending[] = {PNL_MIDI_START, PNL_MIDI_CONTINUE};
    for (int i = 0; i < 2; ++i) {
        pnl_clock c;
        pnl_clock_init(&c, 120.0);
        source s = make_source(120.0, 0.0, 1);
        assert_int_equal(feed_spp(&c, 4, 0.0), PNL_CLOCK_CHANGED_POSITION);
        feed1(&c, pending[i], 0.0);
        feed1(&c, PNL_MIDI_STOP, 0.0);
        assert_int_equal(send_pulses(&c, &s, BAR) & PNL_CLOCK_CHANGED_ROLLING, 0);
        assert_false(c.rolling);
        assert_true(pnl_clock_beat_at(&c, s.last) == 1.0);
    }
}

/* Start then Continue before the pulse: the Start still resets. */
static void test_start_then_continue(void **state)
{
    (void)state;
    pnl_clock c;
    pnl_clock_init(&c, 120.0);
    source s = make_source(120.0, 0.0, 1);
    feed_spp(&c, 8, 0.0);
    feed1(&c, PNL_MIDI_START, 0.0);
    feed1(&c, PNL_MIDI_CONTINUE, 0.0);
    unsigned changed;
    double t = feed_pulse(&c, &s, &changed);
    assert_int_equal(changed, PNL_CLOCK_CHANGED_ROLLING | PNL_CLOCK_CHANGED_POSITION);
    assert_true(pnl_clock_beat_at(&c, t) == 0.0);
}

static void test_song_position(void **state)
{
    (void)state;
    pnl_clock c;
    pnl_clock_init(&c, 120.0);
    source s = make_source(120.0, 0.001, 4);
    send_pulses(&c, &s, BAR);
    assert_int_equal(feed_spp(&c, 16, s.last), PNL_CLOCK_CHANGED_POSITION);
    assert_true(pnl_clock_beat_at(&c, s.last + 1.0) == 4.0);
    /* Both data bytes count: 16383 sixteenths. */
    assert_int_equal(feed_spp(&c, 0x3FFF, s.last), PNL_CLOCK_CHANGED_POSITION);
    assert_true(pnl_clock_beat_at(&c, s.last) == 0x3FFF / 4.0);
    feed_spp(&c, 16, s.last);

    /* Continue from there. */
    feed1(&c, PNL_MIDI_CONTINUE, s.last);
    unsigned changed;
    double t = feed_pulse(&c, &s, &changed);
    assert_int_equal(changed, PNL_CLOCK_CHANGED_ROLLING);
    assert_true(pnl_clock_beat_at(&c, t) == 4.0);
    send_pulses(&c, &s, 6);
    assert_true(pnl_clock_beat_at(&c, s.last) == 4.25);

    /* While rolling it is ignored. */
    assert_int_equal(feed_spp(&c, 64, s.last), 0);
    assert_true(pnl_clock_beat_at(&c, s.last) == 4.25);
    send_pulses(&c, &s, 6);
    assert_true(pnl_clock_beat_at(&c, s.last) == 4.5);
}

/* ------------------------------------------------ position between pulses */

static void test_beat_at_monotonic(void **state)
{
    (void)state;
    pnl_clock c;
    pnl_clock_init(&c, 120.0);
    source s = make_source(120.0, 0.002, 13);
    start_and_run(&c, &s, 1);
    double previous = pnl_clock_beat_at(&c, s.last);
    for (int i = 1; i < 4 * BAR; ++i) {
        if (i % 37 == 0)
            s.ideal += 0.03 * (i % 3);    /* now and then a late pulse */
        double next = s.ideal + s.jitter; /* the latest the pulse can come */
        double limit = (double)i / PNL_CLOCK_PPQN;
        for (int k = 0; k <= 16; ++k) {
            double t = s.last + (next - s.last) * k / 16.0;
            double beat = pnl_clock_beat_at(&c, t);
            assert_true(beat >= previous);
            assert_true(beat <= limit);
            previous = beat;
        }
        assert_true(pnl_clock_beat_at(&c, s.last + 10.0) == limit);
        send_pulses(&c, &s, 1);
        double at_pulse = pnl_clock_beat_at(&c, s.last);
        assert_true(at_pulse == limit);
        assert_true(at_pulse >= previous);
        previous = at_pulse;
    }
}

/* Pulses fed ahead of their time: a t before the last pulse gives the
 * position extrapolated back, down to the pulse before, never below 0. */
static void test_beat_at_before_last_pulse(void **state)
{
    (void)state;
    pnl_clock c;
    pnl_clock_init(&c, 120.0);
    source s = make_source(120.0, 0.0, 1);
    send_pulses(&c, &s, BAR); /* the tempo first */
    feed1(&c, PNL_MIDI_START, s.last);
    send_pulses(&c, &s, 1);
    assert_true(pnl_clock_beat_at(&c, s.last) == 0.0);
    assert_true(pnl_clock_beat_at(&c, s.last - s.period / 2) == 0.0);
    send_pulses(&c, &s, 24);
    const double pulse = 1.0 / PNL_CLOCK_PPQN;
    assert_true(pnl_clock_beat_at(&c, s.last) == 1.0);
    assert_true(fabs(pnl_clock_beat_at(&c, s.last - s.period / 4) - (1.0 - pulse / 4)) < 1e-9);
    assert_true(pnl_clock_beat_at(&c, s.last - 10.0) == 1.0 - pulse);
    assert_true(pnl_clock_beat_at(&c, NAN) == 1.0 - pulse);
}

/* ---------------------------------------------------- malformed input */

/* The public state and the position are as they were. */
static void assert_untouched(const pnl_clock *c, const pnl_clock *before)
{
    assert_int_equal(c->rolling, before->rolling);
    assert_int_equal(c->locked, before->locked);
    assert_true(c->bpm == before->bpm);
    assert_true(pnl_clock_beat_at(c, 2000.0) == pnl_clock_beat_at(before, 2000.0));
}

static void test_other_messages_ignored(void **state)
{
    (void)state;
    pnl_clock c;
    pnl_clock_init(&c, 120.0);
    source s = make_source(120.0, 0.0, 1);
    start_and_run(&c, &s, 2 * BAR);
    const pnl_clock before = c;
    const uint8_t messages[][3] = {
        {0x90, 60, 100}, {0x80, 60, 0},   {0xB0, 7, 100}, {0xE0, 0, 64}, {0xC0, 5, 0},
        {0xF0, 0x7E, 0}, {0xF1, 0x10, 0}, {0xF3, 1, 0},   {0xF6, 0, 0},  {0xF7, 0, 0},
        {0xF9, 0, 0},    {0xFD, 0, 0},    {0xFE, 0, 0},   {0xFF, 0, 0},  {0x78, 0, 0},
        {0x7A, 0, 0},    {0x7C, 0, 0},    {0x00, 0, 0},
    };
    for (size_t i = 0; i < sizeof messages / sizeof messages[0]; ++i)
        for (int size = 1; size <= 3; ++size)
            assert_int_equal(pnl_clock_feed(&c, messages[i], size, s.last + 0.001), 0);
    assert_untouched(&c, &before);
}

static void test_garbage_sizes(void **state)
{
    (void)state;
    pnl_clock c;
    pnl_clock_init(&c, 120.0);
    source s = make_source(120.0, 0.0, 1);
    start_and_run(&c, &s, 2 * BAR);
    const pnl_clock before = c;
    double t = s.last + 0.001;
    const uint8_t clock = PNL_MIDI_CLOCK, stop = PNL_MIDI_STOP;
    assert_int_equal(pnl_clock_feed(&c, &clock, 0, t), 0);
    assert_int_equal(pnl_clock_feed(&c, &clock, -1, t), 0);
    assert_int_equal(pnl_clock_feed(&c, &stop, 0, t), 0);
    assert_int_equal(pnl_clock_feed(&c, NULL, 1, t), 0);
    assert_int_equal(pnl_clock_feed(NULL, &clock, 1, t), 0);
    uint8_t long_stop[4] = {PNL_MIDI_STOP, 0, 0, 0};
    assert_int_equal(pnl_clock_feed(&c, long_stop, 4, t), 0);
    assert_int_equal(pnl_clock_feed(&c, &clock, 1, NAN), 0);
    assert_int_equal(pnl_clock_feed(&c, &clock, 1, INFINITY), 0);
    assert_untouched(&c, &before);

    /* Song Position Pointers while stopped, too short or with a status
     * byte among the data. */
    feed1(&c, PNL_MIDI_STOP, t);
    double beat = pnl_clock_beat_at(&c, t);
    uint8_t spp[3] = {PNL_MIDI_SONG_POSITION, 16, 0};
    assert_int_equal(pnl_clock_feed(&c, spp, 1, t), 0);
    assert_int_equal(pnl_clock_feed(&c, spp, 2, t), 0);
    assert_int_equal(pnl_clock_feed(&c, spp, 0, t), 0);
    spp[1] = PNL_MIDI_CLOCK;
    assert_int_equal(pnl_clock_feed(&c, spp, 3, t), 0);
    spp[1] = 16;
    spp[2] = 0x80;
    assert_int_equal(pnl_clock_feed(&c, spp, 3, t), 0);
    assert_true(pnl_clock_beat_at(&c, t) == beat);
    spp[2] = 0;
    assert_int_equal(pnl_clock_feed(&c, spp, 3, t), PNL_CLOCK_CHANGED_POSITION);
    assert_true(pnl_clock_beat_at(&c, t) == 4.0);
}

/* Times going back (against the contract) do not crash or wreck the
 * tempo. */
static void test_time_going_back(void **state)
{
    (void)state;
    pnl_clock c;
    pnl_clock_init(&c, 120.0);
    source s = make_source(120.0, 0.0, 1);
    start_and_run(&c, &s, 2 * BAR);
    double before = c.bpm;
    feed1(&c, PNL_MIDI_CLOCK, s.last - 5.0);
    feed1(&c, PNL_MIDI_CLOCK, 0.0);
    assert_true(relative_error(c.bpm, before) < 1e-9);
    assert_true(pnl_clock_beat_at(&c, 0.0) >= 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steady_100),
        cmocka_unit_test(test_steady_140),
        cmocka_unit_test(test_extreme_tempos),
        cmocka_unit_test(test_steady_is_quiet),
        cmocka_unit_test(test_tempo_change),
        cmocka_unit_test(test_small_tempo_change),
        cmocka_unit_test(test_pause),
        cmocka_unit_test(test_lost_and_doubled_pulses),
        cmocka_unit_test(test_pause_then_new_tempo),
        cmocka_unit_test(test_tempo_ramp),
        cmocka_unit_test(test_heavy_jitter),
        cmocka_unit_test(test_jitter_widens_tolerance),
        cmocka_unit_test(test_single_outlier),
        cmocka_unit_test(test_implausible_clock),
        cmocka_unit_test(test_long_run),
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_start_counts_from_zero),
        cmocka_unit_test(test_stop_and_continue),
        cmocka_unit_test(test_stop_cancels_pending),
        cmocka_unit_test(test_start_then_continue),
        cmocka_unit_test(test_song_position),
        cmocka_unit_test(test_beat_at_monotonic),
        cmocka_unit_test(test_beat_at_before_last_pulse),
        cmocka_unit_test(test_other_messages_ignored),
        cmocka_unit_test(test_garbage_sizes),
        cmocka_unit_test(test_time_going_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
