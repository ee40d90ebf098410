/* Tests of the plugin's musical clock (plugin/clock.c) and note tracking
 * (plugin/notes.c): step frames for every sync mode, tempo changes, seeks,
 * stops, sparse and partial time:Position, a host's absurd numbers, and
 * notes that always end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include "clock.h"
#include "notes.h"
#include "ports.h"

/* The frames of the next `count` steps from `from`. */
static void steps(pnp_clock *c, int64_t from, int count, int64_t *out)
{
    for (int i = 0; i < count; ++i) {
        out[i] = pnp_clock_next_step_frame(c, from);
        from = out[i];
        (void)pnp_clock_take_step(c);
    }
}

static pnp_position full_position(double bpm, double speed, int64_t bar, double bar_beat)
{
    pnp_position p = {0};
    p.has = PNP_POS_SPEED | PNP_POS_BPM | PNP_POS_BAR | PNP_POS_BAR_BEAT | PNP_POS_BEATS_PER_BAR |
            PNP_POS_BEAT_UNIT;
    p.speed = speed;
    p.bpm = bpm;
    p.bar = bar;
    p.bar_beat = bar_beat;
    p.beats_per_bar = 4;
    p.beat_unit = 4;
    return p;
}

static void test_free_run_eighths(void **state)
{
    (void)state;
    pnp_clock c;
    pnp_clock_init(&c, 48000);
    (void)pnp_clock_configure(&c, 0, PNP_SYNC_FREE, 120, 3);
    int64_t f[5];
    steps(&c, 0, 5, f);
    for (int i = 0; i < 5; ++i)
        assert_int_equal(f[i], 12000 * i); /* 1/8 at 120 bpm, 48 kHz */
}

static void test_divisions(void **state)
{
    (void)state;
    assert_true(pnp_division_whole_notes(0) == 1.0);
    assert_true(pnp_division_whole_notes(4) == 1.0 / 16);
    assert_true(pnp_division_whole_notes(7) == 3.0 / 16);    /* dotted 1/8 */
    assert_true(pnp_division_whole_notes(10) == 1.0 / 12.0); /* 1/8 triplet */
    pnp_clock c;
    pnp_clock_init(&c, 48000);
    (void)pnp_clock_configure(&c, 0, PNP_SYNC_FREE, 120, 10); /* 1/8 triplets: 8000 frames */
    int64_t f[4];
    steps(&c, 0, 4, f);
    assert_int_equal(f[1], 8000);
    assert_int_equal(f[3], 24000);
}

static void test_host_transport_and_tempo_change(void **state)
{
    (void)state;
    pnp_clock c;
    pnp_clock_init(&c, 48000);
    (void)pnp_clock_configure(&c, 0, PNP_SYNC_HOST, 90, 3);
    pnp_position p = full_position(120, 1, 0, 0);
    /* free running until the host speaks: its position is a jump */
    assert_int_equal(pnp_clock_position(&c, 100, &p), PNP_CLOCK_JUMPED);
    int64_t f[3];
    steps(&c, 100, 3, f);
    assert_int_equal(f[0], 100);
    assert_int_equal(f[2], 100 + 24000);
    /* at frame 30100 (beat 1.25) the tempo halves: no jump; a beat is now
     * 48000 frames, an eighth 24000 */
    p = full_position(60, 1, 0, 1.25);
    assert_int_equal(pnp_clock_position(&c, 30100, &p), 0);
    steps(&c, 30100, 2, f);
    assert_int_equal(f[0], 30100 + 12000); /* beat 1.5 is a quarter beat away */
    assert_int_equal(f[1], f[0] + 24000);
}

static void test_seek_and_stop(void **state)
{
    (void)state;
    pnp_clock c;
    pnp_clock_init(&c, 48000);
    pnp_position p = full_position(120, 1, 0, 0);
    (void)pnp_clock_position(&c, 0, &p);
    int64_t f[2];
    steps(&c, 0, 2, f);
    /* at frame 20000 the host says bar 8 beat 1.25: a seek */
    p = full_position(120, 1, 8, 1.25);
    assert_true(pnp_clock_position(&c, 20000, &p) & PNP_CLOCK_JUMPED);
    steps(&c, 20000, 1, f);
    assert_int_equal(f[0], 20000 + 6000); /* beat 33.5 is a quarter beat away */
    /* the position as extrapolated is not a jump */
    p = full_position(120, 1, 8, 1.75);
    assert_int_equal(pnp_clock_position(&c, 32000, &p), 0);
    /* stop: no more steps */
    pnp_position stop = {0};
    stop.has = PNP_POS_SPEED;
    stop.speed = 0;
    assert_true(pnp_clock_position(&c, 40000, &stop) & PNP_CLOCK_STOPPED);
    assert_false(pnp_clock_rolling(&c));
    assert_true(pnp_clock_next_step_frame(&c, 40000) == INT64_MAX);
}

/* A step's length: at the speed the transport rolls at, at speed 1 while
 * it stands (what it will play once started). */
static void test_step_length_rolling_and_stopped(void **state)
{
    (void)state;
    pnp_clock c;
    pnp_clock_init(&c, 48000);
    (void)pnp_clock_configure(&c, 0, PNP_SYNC_HOST, 120, 4);
    assert_true(pnp_clock_step_frames(&c) == 6000.0); /* free running, 1/16 at 120 bpm */
    pnp_position p = full_position(90, 2, 0, 0);
    (void)pnp_clock_position(&c, 0, &p);
    assert_true(pnp_clock_step_frames(&c) == 4000.0); /* 8000 at 90 bpm, rolling twice as fast */
    p = full_position(90, 0, 0, 0);
    (void)pnp_clock_position(&c, 100, &p);
    assert_false(pnp_clock_rolling(&c));
    assert_true(pnp_clock_step_frames(&c) == 8000.0);
    (void)pnp_clock_configure(&c, 200, PNP_SYNC_HOST, 120, 3);
    assert_true(pnp_clock_step_frames(&c) == 16000.0); /* the division changed while stopped */
    p = full_position(90, -1, 0, 0);
    (void)pnp_clock_position(&c, 300, &p);
    assert_true(pnp_clock_step_frames(&c) == 16000.0); /* backwards: the length of a step */
}

static void test_sparse_partial_positions(void **state)
{
    (void)state;
    pnp_clock c;
    pnp_clock_init(&c, 48000);
    /* speed only: the host rolls but says nothing of tempo or bars */
    pnp_position p = {0};
    p.has = PNP_POS_SPEED;
    p.speed = 1;
    (void)pnp_clock_position(&c, 0, &p);
    assert_true(pnp_clock_rolling(&c));
    assert_true(pnp_clock_bpm(&c) == 120.0); /* the own tempo */
    /* tempo only: position continuous */
    pnp_position t = {0};
    t.has = PNP_POS_BPM;
    t.bpm = 150;
    assert_int_equal(pnp_clock_position(&c, 24000, &t), 0);
    assert_true(pnp_clock_bpm(&c) == 150.0);
    /* barBeat without bar: the bar comes from the line (beat 2 + 0.75) */
    pnp_position b = {0};
    b.has = PNP_POS_BAR_BEAT;
    b.bar_beat = 2.75;
    const double expected = pnp_clock_beat(&c, 28000);
    assert_int_equal(pnp_clock_position(&c, 28000, &b) & PNP_CLOCK_JUMPED,
                     PNP_CLOCK_JUMPED * (expected < 2.7 || expected > 2.8));
    assert_true(pnp_clock_beat(&c, 28000) == 2.75);
    /* garbage values are ignored */
    pnp_position g = {0};
    g.has = PNP_POS_BPM | PNP_POS_BEAT_UNIT;
    g.bpm = -3;
    g.beat_unit = 0;
    (void)pnp_clock_position(&c, 30000, &g);
    assert_true(pnp_clock_bpm(&c) == 150.0);
}

static void test_host_tempo_only_mode(void **state)
{
    (void)state;
    pnp_clock c;
    pnp_clock_init(&c, 48000);
    (void)pnp_clock_configure(&c, 0, PNP_SYNC_HOST_TEMPO, 120, 2);
    pnp_position p = full_position(60, 0, 5, 0); /* stopped, somewhere else */
    (void)pnp_clock_position(&c, 0, &p);
    assert_true(pnp_clock_rolling(&c)); /* the transport does not matter */
    int64_t f[2];
    steps(&c, 0, 2, f);
    assert_int_equal(f[1] - f[0], 48000); /* a quarter at the host's 60 bpm */
}

/* The step frames of a clock from frame 0 are k * len. */
static void assert_steps_every(pnp_clock *c, int64_t len)
{
    int64_t f[4];
    steps(c, 0, 4, f);
    for (int i = 0; i < 4; ++i)
        assert_int_equal(f[i], len * i);
}

/* A host's absurd numbers: a tempo or a speed of 1e300 plays at the bpm
 * port's maximum, 400 quarter notes a minute (1/16 triplets every 1200
 * frames at 48 kHz), also when the beat is a whole note; a position of
 * +-1e300 beats, sent every block, is not heard (no jump, the line goes
 * on); bars of 1e-300 or 1e300 beats are ignored. */
static void test_hostile_host_values(void **state)
{
    (void)state;
    pnp_clock c;
    pnp_clock_init(&c, 48000);
    (void)pnp_clock_configure(&c, 0, PNP_SYNC_HOST, 120, 11);
    pnp_position p = full_position(1e300, 1, 0, 0);
    (void)pnp_clock_position(&c, 0, &p);
    assert_true(pnp_clock_bpm(&c) == 400.0);
    assert_steps_every(&c, 1200);
    p = full_position(120, 1e300, 0, 0);
    (void)pnp_clock_position(&c, 0, &p);
    assert_steps_every(&c, 1200);
    p = full_position(1e300, 1, 0, 0);
    p.beat_unit = 1; /* 400 quarter notes are 100 whole notes */
    (void)pnp_clock_position(&c, 0, &p);
    assert_true(pnp_clock_bpm(&c) == 100.0);
    assert_steps_every(&c, 1200);
    /* free running at a bpm the port would not allow */
    (void)pnp_clock_configure(&c, 0, PNP_SYNC_FREE, 1e300, 11);
    assert_true(pnp_clock_bpm(&c) == 400.0);

    const double step = 4.0 / 24.0; /* beats of 1/16 triplets */
    (void)pnp_clock_configure(&c, 0, PNP_SYNC_HOST, 120, 11);
    p = full_position(120, 1, 0, 0);
    (void)pnp_clock_position(&c, 0, &p);
    for (int sign = -1; sign <= 1; sign += 2) {
        for (int64_t block = 0; block < 64; ++block) {
            const double before = pnp_clock_beat(&c, block * 256);
            p = full_position(120, 1, 0, sign * 1e300);
            assert_int_equal(pnp_clock_position(&c, block * 256, &p) & PNP_CLOCK_JUMPED, 0);
            assert_true(fabs(pnp_clock_beat(&c, block * 256) - before) < 1e-9);
        }
        /* the next step is the line's, within a step of its beat */
        const double beat = pnp_clock_beat(&c, c.anchor_frame);
        assert_true(beat > 0.0 && beat < 64.0);
        assert_true(fabs((double)c.next_step * step - beat) <= step);
    }
    /* a line that runs past the limit by itself is held there */
    c.anchor_beat = 2.0 * PNP_CLOCK_MAX_BEAT;
    p = full_position(120, 1, 0, 0);
    p.has &= ~(unsigned)(PNP_POS_BAR | PNP_POS_BAR_BEAT);
    (void)pnp_clock_position(&c, 0, &p);
    assert_true(pnp_clock_beat(&c, 0) == PNP_CLOCK_MAX_BEAT);
    assert_true(fabs((double)c.next_step * step - PNP_CLOCK_MAX_BEAT) <= step);
    p = full_position(120, 1, 2, 0);
    p.beats_per_bar = 1e-300;
    (void)pnp_clock_position(&c, 0, &p);
    assert_true(pnp_clock_beat(&c, 0) == 8.0); /* bar 2 of 4 beats */
    p.beats_per_bar = 1e300;
    (void)pnp_clock_position(&c, 0, &p);
    assert_true(pnp_clock_beat(&c, 0) == 8.0);
}

/* ---- notes ---- */

typedef struct sink_log {
    int64_t frame[64];
    uint8_t msg[64][3];
    int count;
    int capacity;
} sink_log;

static int sink(void *ctx, int64_t frame, const uint8_t *msg, uint32_t size)
{
    sink_log *log = ctx;
    if (log->count >= log->capacity || size != 3)
        return 0;
    log->frame[log->count] = frame;
    for (int i = 0; i < 3; ++i)
        log->msg[log->count][i] = msg[i];
    ++log->count;
    return 1;
}

static void test_notes_end(void **state)
{
    (void)state;
    pnp_notes n;
    pnp_notes_init(&n);
    sink_log log = {.capacity = 64};
    assert_true(pnp_notes_on(&n, sink, &log, 10, 0, 60, 90, 100));
    assert_true(pnp_notes_on(&n, sink, &log, 10, 1, 64, 90, 50));
    assert_int_equal(pnp_notes_next_off(&n), 50);
    pnp_notes_due(&n, sink, &log, 120, 0);
    assert_int_equal(n.count, 0);
    assert_int_equal(log.count, 4);
    assert_int_equal(log.frame[2], 50); /* earliest first */
    assert_int_equal(log.msg[2][0], 0x81);
    assert_int_equal(log.frame[3], 100);
    /* the same key again: off, then on */
    log.count = 0;
    assert_true(pnp_notes_on(&n, sink, &log, 200, 0, 60, 90, 300));
    assert_true(pnp_notes_on(&n, sink, &log, 250, 0, 60, 90, 300));
    assert_int_equal(log.count, 3);
    assert_int_equal(log.msg[1][0], 0x80);
    assert_int_equal(n.count, 1);
    /* panic ends everything; a full sink keeps the note tracked */
    sink_log full = {.capacity = 0};
    pnp_notes_panic(&n, sink, &full, 260);
    assert_int_equal(n.count, 1);
    pnp_notes_panic(&n, sink, &log, 260);
    assert_int_equal(n.count, 0);
    assert_int_equal(log.msg[log.count - 1][0], 0x80);
    /* bad channel or pitch is refused */
    assert_false(pnp_notes_on(&n, sink, &log, 0, 16, 60, 90, 1));
    assert_false(pnp_notes_on(&n, sink, &log, 0, 0, 128, 90, 1));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_run_eighths),
        cmocka_unit_test(test_divisions),
        cmocka_unit_test(test_host_transport_and_tempo_change),
        cmocka_unit_test(test_seek_and_stop),
        cmocka_unit_test(test_step_length_rolling_and_stopped),
        cmocka_unit_test(test_sparse_partial_positions),
        cmocka_unit_test(test_host_tempo_only_mode),
        cmocka_unit_test(test_hostile_host_values),
        cmocka_unit_test(test_notes_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
