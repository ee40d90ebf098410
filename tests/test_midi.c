/* Tests of the Standard MIDI File writer and reader (apps/midi, pnmidi). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <smf.h>

#include "midi_file.h"
#include "midi_notes.h"

enum { K = 4, STEPS = 16, DIVISION = 480, GRID = DIVISION / 4 };

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/pn-test-midi.XXXXXX", base && *base ? base : "/tmp");
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
    static char path[2][400];
    static int which;
    which ^= 1;
    snprintf(path[which], sizeof path[which], "%s/%s", tmpdir, name);
    return path[which];
}

/* The test sequence: step s of voice v, with rests (the alto every fourth
 * step, everyone at the last step), repeated pitches (the bass in pairs,
 * the soprano at steps 5..7) and steps of one or two grid cells. */
static int pitch_at(int s, int v)
{
    static const int soprano[STEPS] = {72, 74, 76, 77, 79, 79, 79, 79,
                                       77, 76, 74, 72, 71, 72, 72, -1};
    if (s == STEPS - 1)
        return PN_MIDI_REST;
    switch (v) {
    case 0:
        return soprano[s];
    case 1:
        return s % 4 == 3 ? PN_MIDI_REST : 64 + (s % 5);
    case 2:
        return 55 + (s * 7) % 12;
    default:
        return 36 + s / 2;
    }
}

static int duration_at(int s)
{
    return s % 3 == 1 ? 2 * GRID : GRID;
}

/* Note-ons the writer must emit for voice v. */
static int expected_note_ons(int v, int tie)
{
    int count = 0, prev = PN_MIDI_REST;
    for (int s = 0; s < STEPS; ++s) {
        int p = pitch_at(s, v);
        if (p != PN_MIDI_REST && !(tie && p == prev))
            count++;
        prev = p;
    }
    return count;
}

static void write_sequence(const char *path, int tie, pn_midi_channel_mode mode, double bpm)
{
    pn_midi_writer_settings s;
    pn_midi_writer_settings_default(&s);
    s.num_voices = K;
    s.division = DIVISION;
    s.tempo_bpm = bpm;
    s.channel_mode = mode;
    s.base_channel = 2;
    s.tie_repeats = tie;
    pn_midi_writer *w = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_midi_writer_create(&s, &w, &info) != PN_OK)
        fail_msg("writer_new: %s", info.message);
    for (int st = 0; st < STEPS; ++st) {
        int p[K];
        for (int v = 0; v < K; ++v)
            p[v] = pitch_at(st, v);
        if (pn_midi_add_sonority(w, p, duration_at(st), 90, &info) != PN_OK)
            fail_msg("add_sonority: %s", info.message);
    }
    assert_int_equal(pn_midi_writer_num_steps(w), STEPS);
    if (pn_midi_write(w, path, &info) != PN_OK)
        fail_msg("write: %s", info.message);
    pn_midi_writer_free(w);
}

static void check_read_back(const char *path, int grid)
{
    int *steps = NULL, n = 0;
    pn_midi_read_meta meta;
    pn_error_info info = {PN_OK, ""};
    if (pn_midi_read_voices(path, K, grid, &steps, &n, &meta, &info) != PN_OK)
        fail_msg("read: %s", info.message);
    assert_int_equal(meta.division, DIVISION);
    assert_int_equal(meta.grid_ticks, GRID);
    assert_int_equal(meta.source, PN_MIDI_VOICES_FROM_TRACKS);
    for (int v = 0; v < K; ++v)
        assert_int_equal(meta.voice_index[v], v + 2); /* track 1 is the tempo track */
    int cells = 0;
    for (int s = 0; s < STEPS; ++s)
        cells += duration_at(s) / GRID;
    assert_int_equal(n, cells);
    for (int v = 0; v < K; ++v) {
        int c = 0;
        for (int s = 0; s < STEPS; ++s)
            for (int r = 0; r < duration_at(s) / GRID; ++r, ++c)
                if (steps[v * n + c] != pitch_at(s, v))
                    fail_msg("voice %d cell %d (step %d): read %d, wrote %d", v, c, s,
                             steps[v * n + c], pitch_at(s, v));
    }
    free(steps);
}

/* Counts note-ons (velocity > 0) and note-offs (0x80 or velocity 0) of a
 * track through libsmf, checking the note-offs are all 0x80 and every
 * note-off ends a sounding note. */
static void count_notes(smf_track_t *track, int *ons, int *offs, int *channel)
{
    int sounding[128] = {0};
    *ons = *offs = 0;
    *channel = -1;
    for (int j = 1; j <= track->number_of_events; ++j) {
        smf_event_t *ev = smf_track_get_event_by_number(track, j);
        assert_non_null(ev);
        if (smf_event_is_metadata(ev))
            continue;
        int status = ev->midi_buffer[0] & 0xF0;
        int key = ev->midi_buffer[1];
        *channel = ev->midi_buffer[0] & 0x0F;
        if (status == 0x90 && ev->midi_buffer[2] > 0) {
            assert_int_equal(sounding[key], 0);
            sounding[key] = 1;
            ++*ons;
        } else {
            assert_int_equal(status, 0x80); /* the writer uses 0x80 only */
            assert_int_equal(sounding[key], 1);
            sounding[key] = 0;
            ++*offs;
        }
    }
}

static void check_structure(const char *path, int tie, pn_midi_channel_mode mode, int tempo_us)
{
    smf_t *smf = smf_load(path);
    assert_non_null(smf);
    assert_int_equal(smf->format, 1);
    assert_int_equal(smf->ppqn, DIVISION);
    assert_int_equal(smf->number_of_tracks, K + 1);

    /* The tempo meta event, in track 1, at tick 0. */
    smf_track_t *t0 = smf_get_track_by_number(smf, 1);
    int found = 0;
    for (int j = 1; j <= t0->number_of_events; ++j) {
        smf_event_t *ev = smf_track_get_event_by_number(t0, j);
        const unsigned char *b = ev->midi_buffer;
        if (ev->midi_buffer_length == 6 && b[0] == 0xFF && b[1] == 0x51 && b[2] == 3) {
            assert_int_equal(ev->time_pulses, 0);
            assert_int_equal(b[3] << 16 | b[4] << 8 | b[5], tempo_us);
            found++;
        }
        assert_false(ev->midi_buffer[0] != 0xFF); /* only meta events */
    }
    assert_int_equal(found, 1);
    assert_int_equal(smf_get_tempo_by_pulses(smf, 0)->microseconds_per_quarter_note, tempo_us);

    static const char *const names[K] = {"Soprano", "Alto", "Tenor", "Bass"};
    int total_ticks = 0;
    for (int s = 0; s < STEPS; ++s)
        total_ticks += duration_at(s);
    for (int v = 0; v < K; ++v) {
        smf_track_t *track = smf_get_track_by_number(smf, v + 2);
        smf_event_t *first = smf_track_get_event_by_number(track, 1);
        char *name = smf_event_extract_text(first);
        assert_non_null(name);
        assert_string_equal(name, names[v]);
        g_free(name);
        int ons, offs, channel;
        count_notes(track, &ons, &offs, &channel);
        assert_int_equal(ons, offs);
        assert_int_equal(ons, expected_note_ons(v, tie));
        assert_int_equal(channel, mode == PN_MIDI_ONE_CHANNEL ? 2 : 2 + v);
        smf_event_t *last = smf_track_get_last_event(track);
        assert_true(smf_event_is_eot(last));
        assert_int_equal(last->time_pulses, total_ticks);
    }
    smf_delete(smf);
}

static void test_round_trip(void **state)
{
    (void)state;
    for (int tie = 0; tie <= 1; ++tie) {
        for (int mode = 0; mode <= 1; ++mode) {
            const char *path = tmp_path("round.mid");
            write_sequence(path, tie, (pn_midi_channel_mode)mode, 120.0);
            check_structure(path, tie, (pn_midi_channel_mode)mode, 500000);
            check_read_back(path, 0);
            check_read_back(path, GRID);
        }
    }
}

static void test_tempo_rounding(void **state)
{
    (void)state;
    const char *path = tmp_path("tempo.mid");
    write_sequence(path, 1, PN_MIDI_CHANNEL_PER_VOICE, 90.0);
    check_structure(path, 1, PN_MIDI_CHANNEL_PER_VOICE, 666667);
    int *steps = NULL, n = 0;
    pn_midi_read_meta meta;
    pn_error_info info;
    assert_int_equal(pn_midi_read_voices(path, K, 0, &steps, &n, &meta, &info), PN_OK);
    assert_int_equal(meta.tempo_us, 666667);
    free(steps);
}

static void test_ties_strike_fewer_notes(void **state)
{
    (void)state;
    assert_true(expected_note_ons(0, 1) < expected_note_ons(0, 0));
    assert_true(expected_note_ons(3, 1) < expected_note_ons(3, 0));
}

/* Fewer voices: a k = 2 file read as 4 voices, and read as 2 voices. */
static void test_fewer_voices(void **state)
{
    (void)state;
    const char *path = tmp_path("two.mid");
    pn_midi_writer_settings s;
    pn_midi_writer_settings_default(&s);
    s.num_voices = 2;
    pn_midi_writer *w = NULL;
    pn_error_info info;
    assert_int_equal(pn_midi_writer_create(&s, &w, &info), PN_OK);
    int p[2] = {60, 48};
    assert_int_equal(pn_midi_add_sonority(w, p, 480, 64, &info), PN_OK);
    assert_int_equal(pn_midi_write(w, path, &info), PN_OK);
    pn_midi_writer_free(w);

    smf_t *smf = smf_load(path);
    assert_non_null(smf);
    char *name =
        smf_event_extract_text(smf_track_get_event_by_number(smf_get_track_by_number(smf, 3), 1));
    assert_string_equal(name, "Voice 2");
    g_free(name);
    smf_delete(smf);

    int *steps = (int *)&steps, n = -1;
    assert_int_equal(pn_midi_read_voices(path, 4, 0, &steps, &n, NULL, &info), PN_ERR_PARSE);
    assert_null(steps);
    assert_non_null(strstr(info.message, path));
    assert_non_null(strstr(info.message, "fewer voices"));

    assert_int_equal(pn_midi_read_voices(path, 2, 0, &steps, &n, NULL, &info), PN_OK);
    assert_int_equal(n, 4);
    for (int c = 0; c < 4; ++c) {
        assert_int_equal(steps[c], 60);
        assert_int_equal(steps[n + c], 48);
    }
    free(steps);
}

static void test_no_notes(void **state)
{
    (void)state;
    const char *path = tmp_path("rests.mid");
    pn_midi_writer *w = NULL;
    pn_error_info info;
    assert_int_equal(pn_midi_writer_create(NULL, &w, &info), PN_OK);
    int rest[4] = {-1, -1, -1, -1};
    assert_int_equal(pn_midi_add_sonority(w, rest, 480, 64, &info), PN_OK);
    assert_int_equal(pn_midi_write(w, path, &info), PN_OK);
    pn_midi_writer_free(w);
    int *steps = NULL, n = 0;
    assert_int_equal(pn_midi_read_voices(path, 4, 0, &steps, &n, NULL, &info), PN_ERR_PARSE);
    assert_non_null(strstr(info.message, "no notes"));
    assert_null(steps);
}

/* A format-0 file, one track, four channels (listed out of order). */
/* clang-format off */
static const unsigned char format0[] = {
    'M', 'T', 'h', 'd', 0, 0, 0, 6, 0, 0, 0, 1, 0, 96, /* format 0, 1 track, 96 ppqn */
    'M', 'T', 'r', 'k', 0, 0, 0, 44,                   /* 44 bytes of events */
    0x00, 0x95, 60, 64,                                /* ch 5: 60 (voice 3) */
    0x00, 0x90, 72, 64,                                /* ch 0: 72 (voice 0) */
    0x00, 0x91, 67, 64,                                /* ch 1: 67 (voice 1) */
    0x00, 0x93, 64, 64,                                /* ch 3: 64 (voice 2) */
    0x30, 0x80, 72, 0,                                 /* +48: ch 0 off */
    0x00, 0x90, 74, 64,                                /* ch 0: 74 */
    0x18, 0x90, 74, 0,                                 /* +24: off by velocity 0 */
    0x18, 0x85, 60, 0,                                 /* +24: all off */
    0x00, 0x81, 67, 0,
    0x00, 0x83, 64, 0,
    0x00, 0xFF, 0x2F, 0x00,                            /* end of track */
};
/* clang-format on */

static void test_channels_format0(void **state)
{
    (void)state;
    int *steps = NULL, n = 0;
    pn_midi_read_meta meta;
    pn_error_info info;
    pn_error err =
        pn_midi_read_voices_mem("f0.mid", format0, sizeof format0, 4, 0, &steps, &n, &meta, &info);
    if (err != PN_OK)
        fail_msg("%s", info.message);
    assert_int_equal(meta.source, PN_MIDI_VOICES_FROM_CHANNELS);
    assert_int_equal(meta.grid_ticks, 24);
    assert_int_equal(meta.voice_index[0], 0);
    assert_int_equal(meta.voice_index[1], 1);
    assert_int_equal(meta.voice_index[2], 3);
    assert_int_equal(meta.voice_index[3], 5);
    assert_int_equal(n, 4);
    static const int expect[4][4] = {
        {72, 72, 74, -1}, {67, 67, 67, 67}, {64, 64, 64, 64}, {60, 60, 60, 60}};
    for (int v = 0; v < 4; ++v)
        for (int c = 0; c < 4; ++c)
            assert_int_equal(steps[v * n + c], expect[v][c]);
    free(steps);
}

/* The same file as note events: in time order, file order at a tick, a
 * note-on of velocity 0 read as a note-off; a file without a note-on and
 * one in SMPTE time are refused, named. */
static void test_note_events(void **state)
{
    (void)state;
    pn_midi_notes *notes = NULL;
    pn_error_info info;
    if (pn_midi_read_notes_mem("f0.mid", format0, sizeof format0, &notes, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_int_equal(notes->division, 96);
    assert_int_equal(notes->length_ticks, 96);
    static const pn_midi_note_event expect[] = {
        {0, 5, 60, 1, 64}, {0, 0, 72, 1, 64},  {0, 1, 67, 1, 64}, {0, 3, 64, 1, 64},
        {48, 0, 72, 0, 0}, {48, 0, 74, 1, 64}, {72, 0, 74, 0, 0}, {96, 5, 60, 0, 0},
        {96, 1, 67, 0, 0}, {96, 3, 64, 0, 0},
    };
    assert_int_equal(notes->count, sizeof expect / sizeof expect[0]);
    for (int i = 0; i < notes->count; ++i) {
        const pn_midi_note_event *e = &notes->events[i], *x = &expect[i];
        if (e->tick != x->tick || e->channel != x->channel || e->key != x->key || e->on != x->on ||
            e->velocity != x->velocity)
            fail_msg("event %d: tick %d channel %d key %d on %d velocity %d", i, e->tick,
                     e->channel, e->key, e->on, e->velocity);
    }
    pn_midi_notes_free(notes);

    unsigned char copy[sizeof format0];
    memcpy(copy, format0, sizeof copy);
    copy[12] = 0xE7; /* division: -25 frames a second, 40 ticks a frame */
    copy[13] = 40;
    assert_int_equal(pn_midi_read_notes_mem("smpte.mid", copy, sizeof copy, &notes, &info),
                     PN_ERR_PARSE);
    assert_null(notes);
    assert_non_null(strstr(info.message, "smpte.mid: SMPTE time division"));
    memcpy(copy, format0, sizeof copy);
    for (size_t i = 22; i + 4 <= sizeof copy - 4; i += 4)
        if ((copy[i + 1] & 0xF0) == 0x90)
            copy[i + 3] = 0; /* every note-on now ends a note */
    assert_int_equal(pn_midi_read_notes_mem("silent.mid", copy, sizeof copy, &notes, &info),
                     PN_ERR_PARSE);
    assert_null(notes);
    assert_non_null(strstr(info.message, "silent.mid: the file holds no notes"));
    assert_int_equal(pn_midi_read_notes(tmp_path("none.mid"), &notes, &info), PN_ERR_IO);
    assert_null(notes);
}

static void expect_read_error(const char *name, const unsigned char *data, size_t size,
                              const char *phrase)
{
    unsigned char *copy = malloc(size ? size : 1);
    assert_non_null(copy);
    memcpy(copy, data, size);
    int *steps = (int *)&steps, n = 0;
    pn_error_info info = {PN_OK, ""};
    pn_error err = pn_midi_read_voices_mem(name, copy, size, 4, 0, &steps, &n, NULL, &info);
    free(copy);
    if (err != PN_ERR_PARSE)
        fail_msg("%s: expected a parse error, got %d: %s", name, (int)err, info.message);
    assert_null(steps);
    assert_int_equal(strncmp(info.message, name, strlen(name)), 0);
    if (!strstr(info.message, phrase))
        fail_msg("message \"%s\" lacks \"%s\"", info.message, phrase);
}

static void test_malformed(void **state)
{
    (void)state;
    unsigned char buf[sizeof format0];
    expect_read_error("empty.mid", format0, 0, "no MThd");
    expect_read_error("short.mid", format0, 10, "no MThd");
    expect_read_error("riff.mid", (const unsigned char *)"RIFF....WAVEfmt ", 16, "no MThd");
    memcpy(buf, format0, sizeof buf);
    buf[12] = 0xE7; /* -25 fps */
    buf[13] = 40;
    expect_read_error("smpte.mid", buf, sizeof buf, "SMPTE");
    memcpy(buf, format0, sizeof buf);
    buf[9] = 2;
    expect_read_error("format2.mid", buf, sizeof buf, "format 2");
    memcpy(buf, format0, sizeof buf);
    buf[11] = 2;
    expect_read_error("twotracks.mid", buf, sizeof buf, "format 0 with 2 tracks");
    buf[9] = 1;
    expect_read_error("twotracks.mid", buf, sizeof buf, "1 of 2 tracks");
    memcpy(buf, format0, sizeof buf);
    buf[7] = 8;
    expect_read_error("header8.mid", buf, sizeof buf, "header chunk length 8");
    for (size_t cut = 14; cut < sizeof format0; cut += 3)
        expect_read_error("cut.mid", format0, cut, "truncated");

    /* Event streams libsmf 1.3 would assert on; the reader checks them first. */
    enum { EV = 22 }; /* first event byte */
    memcpy(buf, format0, sizeof buf);
    buf[sizeof buf - 2] = 0x2E; /* the end-of-track becomes an unknown meta */
    expect_read_error("noeot.mid", buf, sizeof buf, "no end-of-track");
    memcpy(buf, format0, sizeof buf);
    buf[EV + 1] = 0x45; /* a data byte with no running status */
    expect_read_error("norunning.mid", buf, sizeof buf, "malformed event at byte 22");
    memcpy(buf, format0, sizeof buf);
    buf[EV + 3] = 0x80; /* a data byte with the top bit set */
    expect_read_error("databyte.mid", buf, sizeof buf, "malformed event");
    memcpy(buf, format0, sizeof buf);
    buf[EV + 1] = 0xF7; /* an escape */
    expect_read_error("escape.mid", buf, sizeof buf, "0xF7");
    memcpy(buf, format0, sizeof buf);
    buf[EV + 1] = 0xF8; /* a real-time byte */
    expect_read_error("realtime.mid", buf, sizeof buf, "not supported");
    memcpy(buf, format0, sizeof buf);
    memcpy(buf + EV, (const unsigned char[]){0x00, 0xFF, 0x51, 0x02}, 4); /* short tempo */
    expect_read_error("tempo.mid", buf, sizeof buf, "malformed event");
    memcpy(buf, format0, sizeof buf);
    memcpy(buf + EV, (const unsigned char[]){0xFF, 0xFF, 0xFF, 0xFF}, 4); /* 5-byte delta */
    expect_read_error("vlq.mid", buf, sizeof buf, "malformed event");
    memcpy(buf, format0, sizeof buf);
    memcpy(buf + 14, "MTrx", 4);
    expect_read_error("chunk.mid", buf, sizeof buf, "not MTrk");
}

static void test_read_file_errors(void **state)
{
    (void)state;
    int *steps = (int *)&steps, n = 0;
    pn_error_info info;
    const char *missing = tmp_path("missing.mid");
    assert_int_equal(pn_midi_read_voices(missing, 4, 0, &steps, &n, NULL, &info), PN_ERR_IO);
    assert_null(steps);
    assert_non_null(strstr(info.message, missing));

    /* A written file cut in the middle of a track. */
    const char *path = tmp_path("cut.mid");
    write_sequence(path, 0, PN_MIDI_CHANNEL_PER_VOICE, 120.0);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char buf[4096];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    assert_true(len > 100 && len < sizeof buf);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len / 2, f), len / 2);
    fclose(f);
    assert_int_equal(pn_midi_read_voices(path, 4, 0, &steps, &n, NULL, &info), PN_ERR_PARSE);
    assert_null(steps);
    assert_non_null(strstr(info.message, path));
    assert_non_null(strstr(info.message, "truncated"));
}

static void test_writer_rejects(void **state)
{
    (void)state;
    pn_midi_writer_settings s;
    pn_midi_writer_settings_default(&s);
    pn_midi_writer *w = NULL;
    pn_error_info info;
    s.base_channel = 13; /* 13..16 */
    assert_int_equal(pn_midi_writer_create(&s, &w, &info), PN_ERR_INVALID);
    assert_null(w);
    s.channel_mode = PN_MIDI_ONE_CHANNEL;
    assert_int_equal(pn_midi_writer_create(&s, &w, &info), PN_OK);
    pn_midi_writer_free(w);
    pn_midi_writer_settings_default(&s);
    s.tempo_bpm = 0.0;
    assert_int_equal(pn_midi_writer_create(&s, &w, &info), PN_ERR_INVALID);
    pn_midi_writer_settings_default(&s);
    s.num_voices = 0;
    assert_int_equal(pn_midi_writer_create(&s, &w, &info), PN_ERR_INVALID);

    assert_int_equal(pn_midi_writer_create(NULL, &w, &info), PN_OK);
    int bad_pitch[4] = {60, 128, 50, 40};
    int good[4] = {60, 55, 50, 40};
    assert_int_equal(pn_midi_add_sonority(w, bad_pitch, 10, 64, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "pitch"));
    assert_int_equal(pn_midi_add_sonority(w, good, 0, 64, &info), PN_ERR_INVALID);
    assert_int_equal(pn_midi_add_sonority(w, good, 10, 0, &info), PN_ERR_INVALID);
    assert_int_equal(pn_midi_add_sonority(w, good, 10, 128, &info), PN_ERR_INVALID);
    assert_int_equal(pn_midi_writer_num_steps(w), 0);
    assert_int_equal(pn_midi_add_sonority(w, good, 10, 127, &info), PN_OK);
    assert_int_equal(pn_midi_writer_total_ticks(w), 10);
    const char *bad_path = tmp_path("no-such-dir/out.mid");
    assert_int_equal(pn_midi_write(w, bad_path, &info), PN_ERR_IO);
    assert_non_null(strstr(info.message, bad_path));
    pn_midi_writer_free(w);
}

/* With PN_MIDI_DEMO_OUT set, also leave the test sequence there (handy for
 * listening and for seeding the fuzz corpus). */
static void test_export(void **state)
{
    (void)state;
    const char *out = getenv("PN_MIDI_DEMO_OUT");
    if (!out || !*out)
        skip();
    write_sequence(out, 1, PN_MIDI_CHANNEL_PER_VOICE, 100.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_tempo_rounding),
        cmocka_unit_test(test_ties_strike_fewer_notes),
        cmocka_unit_test(test_fewer_voices),
        cmocka_unit_test(test_no_notes),
        cmocka_unit_test(test_channels_format0),
        cmocka_unit_test(test_note_events),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_read_file_errors),
        cmocka_unit_test(test_writer_rejects),
        cmocka_unit_test(test_export),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
