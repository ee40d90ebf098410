/* Tests of the onsets reader (apps/midi/midi_onsets.c): files written by
 * the pnmidi writers read back as segments of sounding notes, with voices
 * labelled by track, by channel or not at all, and its errors. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "midi_events.h"
#include "midi_file.h"
#include "midi_onsets.h"

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/pn-test-onsets.XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *tmp_path(const char *name)
{
    static char path[400];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

/* Writes steps of k voices (k x n, step-major), each `ticks` long. */
static void write_steps(const char *path, int k, const int *steps, int n, int ticks, int ties)
{
    pn_midi_writer_settings s;
    pn_midi_writer_settings_default(&s);
    s.num_voices = k;
    s.tie_repeats = ties;
    pn_midi_writer *w = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_midi_writer_create(&s, &w, &info), PN_OK);
    for (int i = 0; i < n; ++i)
        assert_int_equal(pn_midi_add_sonority(w, steps + i * k, ticks, 80, &info), PN_OK);
    if (pn_midi_write(w, path, &info) != PN_OK)
        fail_msg("%s", info.message);
    pn_midi_writer_free(w);
}

static pn_midi_onsets *read_ok(const char *path)
{
    pn_midi_onsets *o = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_midi_read_onsets(path, &o, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_non_null(o);
    return o;
}

/* Segment i starts at tick, is an onset or not, and sounds the given
 * (voice, key) pairs. */
static void expect_segment(const pn_midi_onsets *o, int i, int tick, int length, int onset,
                           int count, ...)
{
    assert_true(i < o->num_segments);
    const pn_midi_segment *s = &o->segments[i];
    assert_int_equal(s->tick, tick);
    assert_int_equal(s->length, length);
    assert_int_equal(s->onset, onset);
    assert_int_equal(s->count, count);
    va_list ap;
    va_start(ap, count);
    for (int j = 0; j < count; ++j) {
        const int voice = va_arg(ap, int), key = va_arg(ap, int);
        assert_int_equal(o->notes[s->first + j].voice, voice);
        assert_int_equal(o->notes[s->first + j].key, key);
    }
    va_end(ap);
}

static void test_tracks(void **state)
{
    (void)state;
    const int steps[] = {72, 67, 64, 48, /* */
                         72, 69, 65, 53, /* the soprano held */
                         -1, 69, 65, 53, /* the soprano stops: no onset */
                         74, 67, 62, 55};
    const char *path = tmp_path("tracks.mid");
    write_steps(path, 4, steps, 4, 240, 1);
    pn_midi_onsets *o = read_ok(path);
    assert_int_equal(o->labels, PN_MIDI_LABELS_FROM_TRACKS);
    assert_int_equal(o->num_voices, 4);
    assert_int_equal(o->division, 480);
    assert_int_equal(o->length_ticks, 960);
    assert_int_equal(o->num_segments, 5);
    assert_int_equal(o->num_onsets, 3);
    expect_segment(o, 0, 0, 240, 1, 4, 0, 72, 1, 67, 2, 64, 3, 48);
    expect_segment(o, 1, 240, 240, 1, 4, 0, 72, 1, 69, 2, 65, 3, 53);
    expect_segment(o, 2, 480, 240, 0, 3, 1, 69, 2, 65, 3, 53);
    expect_segment(o, 3, 720, 240, 1, 4, 0, 74, 1, 67, 2, 62, 3, 55);
    expect_segment(o, 4, 960, 0, 0, 0);
    assert_int_equal(o->num_notes, 15);
    pn_midi_onsets_free(o);

    /* without ties a repeated sonority is struck again: an onset with the
     * same notes; two voices in unison keep their own labels */
    const int again[] = {60, 60, 60, 60, 60, 55};
    path = tmp_path("again.mid");
    write_steps(path, 2, again, 3, 100, 0);
    o = read_ok(path);
    assert_int_equal(o->num_onsets, 3);
    expect_segment(o, 0, 0, 100, 1, 2, 0, 60, 1, 60);
    expect_segment(o, 1, 100, 100, 1, 2, 0, 60, 1, 60);
    expect_segment(o, 2, 200, 100, 1, 2, 0, 60, 1, 55);
    pn_midi_onsets_free(o);
}

static void test_channels_and_unlabelled(void **state)
{
    (void)state;
    /* format 0 at 120 bpm, 960 ticks per quarter, 48 kHz: 25 frames a tick */
    pn_midi_events_settings s;
    pn_midi_events_settings_default(&s);
    const pn_midi_event two[] = {
        {0, 3, {0x90, 60, 90}},    {0, 3, {0x91, 48, 90}},    {6000, 3, {0x80, 60, 0}},
        {6000, 3, {0x90, 62, 90}}, {12000, 3, {0x80, 62, 0}}, {12000, 3, {0x91, 48, 0}},
    };
    const char *path = tmp_path("channels.mid");
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_midi_events_write(path, two, 6, &s, NULL, &info), PN_OK);
    pn_midi_onsets *o = read_ok(path);
    assert_int_equal(o->labels, PN_MIDI_LABELS_FROM_CHANNELS);
    assert_int_equal(o->num_voices, 2);
    assert_int_equal(o->num_segments, 3);
    expect_segment(o, 0, 0, 240, 1, 2, 0, 60, 1, 48);
    expect_segment(o, 1, 240, 240, 1, 2, 0, 62, 1, 48);
    expect_segment(o, 2, 480, 0, 0, 0);
    pn_midi_onsets_free(o);

    /* one channel: a chord, then a note released before the other */
    const pn_midi_event one[] = {
        {0, 3, {0x90, 60, 90}},
        {0, 3, {0x90, 48, 90}},
        {6000, 3, {0x90, 60, 0}}, /* note-on with velocity 0: a note-off */
        {12000, 3, {0x80, 48, 0}},
    };
    path = tmp_path("one.mid");
    assert_int_equal(pn_midi_events_write(path, one, 4, &s, NULL, &info), PN_OK);
    o = read_ok(path);
    assert_int_equal(o->labels, PN_MIDI_UNLABELLED);
    assert_int_equal(o->num_voices, 1);
    assert_int_equal(o->num_onsets, 1);
    expect_segment(o, 0, 0, 240, 1, 2, 0, 48, 0, 60);
    expect_segment(o, 1, 240, 240, 0, 1, 0, 48);
    expect_segment(o, 2, 480, 0, 0, 0);
    pn_midi_onsets_free(o);
}

static void test_errors(void **state)
{
    (void)state;
    pn_midi_onsets *o = (pn_midi_onsets *)&o;
    pn_error_info info = {PN_OK, ""};
    const char *missing = tmp_path("missing.mid");
    assert_int_equal(pn_midi_read_onsets(missing, &o, &info), PN_ERR_IO);
    assert_null(o);
    assert_non_null(strstr(info.message, missing));

    const char junk[] = "this is not a MIDI file";
    o = (pn_midi_onsets *)&o;
    assert_int_equal(pn_midi_read_onsets_mem("junk.mid", junk, sizeof junk, &o, &info),
                     PN_ERR_PARSE);
    assert_null(o);
    assert_non_null(strstr(info.message, "junk.mid: not a Standard MIDI File"));

    const int rests[] = {-1, -1, -1, -1};
    const char *path = tmp_path("silent.mid");
    write_steps(path, 2, rests, 2, 100, 1);
    assert_int_equal(pn_midi_read_onsets(path, &o, &info), PN_ERR_PARSE);
    assert_non_null(strstr(info.message, "holds no notes"));

    /* a truncated file */
    const int steps[] = {60, 64};
    path = tmp_path("cut.mid");
    write_steps(path, 1, steps, 2, 100, 1);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char buf[4096];
    size_t n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(n > 30);
    assert_int_equal(pn_midi_read_onsets_mem("cut.mid", buf, n - 5, &o, &info), PN_ERR_PARSE);
    assert_non_null(strstr(info.message, "cut.mid: "));
    assert_int_equal(pn_midi_read_onsets_mem("cut.mid", buf, n, &o, &info), PN_OK);
    pn_midi_onsets_free(o);
    assert_int_equal(pn_midi_read_onsets_mem("x", NULL, 3, &o, &info), PN_ERR_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tracks),
        cmocka_unit_test(test_channels_and_unlabelled),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
