/* Tests of the capture history of parnassus-live and its Standard MIDI File
 * writer (apps/live/live_capture.c). Files are read back through libsmf;
 * with PN_LIVE_CAPTURE_OUT set to a directory, test_export also leaves two
 * files there for the independent check in test_live_capture_mido.py. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <smf.h>

#include "live_capture.h"

enum { TPQ = 960 }; /* ticks per quarter note of the files */

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    const char *base = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/pn-test-capture.XXXXXX", base && *base ? base : "/tmp");
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

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* ------------------------------------------------------------- building */

static pnl_capture *make_capture(int bars, double beats_per_bar, size_t capacity, int num_tracks)
{
    pnl_capture_settings s;
    pnl_capture_settings_default(&s);
    s.bars = bars;
    s.beats_per_bar = beats_per_bar;
    s.capacity = capacity;
    s.num_tracks = num_tracks;
    pnl_capture *c = NULL;
    pn_error_info info;
    assert_int_equal(pnl_capture_create(&s, &c, &info), PN_OK);
    assert_non_null(c);
    return c;
}

/* Adds a channel message of its kind's length (program change and channel
 * pressure: 2 bytes, the rest 3). */
static void add(pnl_capture *c, double beat, int track, int b0, int b1, int b2)
{
    int kind = b0 >> 4;
    pnl_capture_event ev = {.beat = beat,
                            .track = (uint8_t)track,
                            .size = kind == 0xC || kind == 0xD ? 2 : 3,
                            .bytes = {(uint8_t)b0, (uint8_t)b1, (uint8_t)b2}};
    pnl_capture_add(c, &ev);
}

static void note_on(pnl_capture *c, double beat, int track, int channel, int key, int velocity)
{
    add(c, beat, track, 0x90 | channel, key, velocity);
}

static void note_off(pnl_capture *c, double beat, int track, int channel, int key)
{
    add(c, beat, track, 0x80 | channel, key, 0);
}

static void write_ok(const pnl_capture *c, const char *path, double now_beat, double bpm)
{
    pn_error_info info = {0};
    pn_error err = pnl_capture_write(c, path, now_beat, bpm, &info);
    if (err != PN_OK)
        fail_msg("write failed: %s", info.message);
}

/* -------------------------------------------------------------- reading */

typedef struct heard {
    int tick;
    int len;
    unsigned char bytes[3];
} heard;

enum { MAX_HEARD = 64 };

static smf_t *load(const char *path)
{
    smf_t *smf = smf_load(path);
    assert_non_null(smf);
    assert_int_equal(smf->format, 1);
    assert_int_equal(smf->ppqn, TPQ);
    return smf;
}

/* libsmf numbers tracks from 1: track 1 is the tempo and meter track, track
 * 2 + t holds capture track t. */
static smf_track_t *track_of(smf_t *smf, int number)
{
    smf_track_t *track = smf_get_track_by_number(smf, number);
    assert_non_null(track);
    return track;
}

static smf_event_t *event_of(smf_track_t *track, int j)
{
    smf_event_t *ev = smf_track_get_event_by_number(track, j);
    assert_non_null(ev);
    return ev;
}

/* The channel messages of a track, in file order. */
static int read_messages(smf_t *smf, int number, heard *out)
{
    smf_track_t *track = track_of(smf, number);
    int n = 0;
    for (int j = 1; j <= track->number_of_events; ++j) {
        smf_event_t *ev = event_of(track, j);
        if (smf_event_is_metadata(ev))
            continue;
        assert_true(n < MAX_HEARD);
        assert_in_range(ev->midi_buffer_length, 2, 3);
        out[n].tick = ev->time_pulses;
        out[n].len = ev->midi_buffer_length;
        memset(out[n].bytes, 0, sizeof out[n].bytes);
        memcpy(out[n].bytes, ev->midi_buffer, (size_t)ev->midi_buffer_length);
        n++;
    }
    return n;
}

static void assert_messages(smf_t *smf, int number, const heard *expected, int count)
{
    heard got[MAX_HEARD];
    int n = read_messages(smf, number, got);
    if (n != count)
        fail_msg("track %d: %d channel messages, expected %d", number, n, count);
    for (int i = 0; i < n; ++i) {
        if (got[i].tick != expected[i].tick || got[i].len != expected[i].len ||
            memcmp(got[i].bytes, expected[i].bytes, (size_t)got[i].len) != 0)
            fail_msg("track %d, message %d: tick %d %02X %02X %02X, expected tick %d %02X %02X "
                     "%02X",
                     number, i, got[i].tick, got[i].bytes[0], got[i].bytes[1], got[i].bytes[2],
                     expected[i].tick, expected[i].bytes[0], expected[i].bytes[1],
                     expected[i].bytes[2]);
    }
}

/* Every note-on (velocity > 0) is ended by a later 0x8n note-off of the
 * same channel and key, and every note-off ends a sounding note. */
static void assert_notes_paired(smf_t *smf, int number)
{
    heard got[MAX_HEARD];
    int n = read_messages(smf, number, got);
    int sounding[16][128] = {{0}};
    for (int i = 0; i < n; ++i) {
        int kind = got[i].bytes[0] >> 4, channel = got[i].bytes[0] & 0x0F, key = got[i].bytes[1];
        if (kind == 0x9) {
            assert_true(got[i].bytes[2] > 0); /* the writer uses 0x8n note-offs only */
            assert_int_equal(sounding[channel][key], 0);
            sounding[channel][key] = 1;
        } else if (kind == 0x8) {
            assert_int_equal(sounding[channel][key], 1);
            sounding[channel][key] = 0;
        }
    }
    for (int ch = 0; ch < 16; ++ch)
        for (int key = 0; key < 128; ++key)
            assert_int_equal(sounding[ch][key], 0);
}

static void assert_track_name(smf_t *smf, int number, const char *name)
{
    smf_event_t *first = event_of(track_of(smf, number), 1);
    assert_int_equal(first->midi_buffer[0], 0xFF);
    assert_int_equal(first->midi_buffer[1], 0x03);
    char *text = smf_event_extract_text(first);
    assert_non_null(text);
    assert_string_equal(text, name);
    g_free(text);
}

static void assert_tracks_end_at(smf_t *smf, int tick)
{
    for (int number = 1; number <= smf->number_of_tracks; ++number) {
        smf_event_t *last = smf_track_get_last_event(track_of(smf, number));
        assert_non_null(last);
        assert_true(smf_event_is_eot(last));
        assert_int_equal(last->time_pulses, tick);
    }
}

/* The 6-byte tempo and 7-byte time-signature metas of track 1, at tick 0. */
static void assert_meter(smf_t *smf, int tempo_us, int numerator, int log2_denominator)
{
    smf_track_t *track = track_of(smf, 1);
    int tempos = 0, meters = 0;
    for (int j = 1; j <= track->number_of_events; ++j) {
        smf_event_t *ev = event_of(track, j);
        const unsigned char *b = ev->midi_buffer;
        assert_int_equal(b[0], 0xFF); /* meta events only */
        if (b[1] == 0x51) {
            assert_int_equal(ev->midi_buffer_length, 6);
            assert_int_equal(ev->time_pulses, 0);
            assert_int_equal(b[3] << 16 | b[4] << 8 | b[5], tempo_us);
            tempos++;
        } else if (b[1] == 0x58) {
            assert_int_equal(ev->midi_buffer_length, 7);
            assert_int_equal(ev->time_pulses, 0);
            assert_int_equal(b[3], numerator);
            assert_int_equal(b[4], log2_denominator);
            meters++;
        }
    }
    assert_int_equal(tempos, 1);
    assert_int_equal(meters, 1);
}

/* ------------------------------------------------------------ scenarios */

/* Two bars of 4/4 on the default five tracks, written at beat 13.5 at
 * 100 bpm: the window is bars 2..3, beats 8..16, and the file ends at
 * (13.5 - 8) x 960 = 5280 ticks. */
enum { MAIN_END = 5280 };
static const double MAIN_NOW = 13.5, MAIN_BPM = 100.0;

static pnl_capture *main_scenario(void)
{
    pnl_capture *c = make_capture(2, 4.0, 1024, 5);
    note_on(c, 2.0, 0, 0, 62, 80);   /* soprano: over before the window */
    note_off(c, 4.0, 0, 0, 62);      /*   (absent) */
    note_on(c, 5.0, 1, 1, 65, 81);   /* alto: ends right at the window's start */
    note_on(c, 6.0, 0, 0, 60, 90);   /* soprano: held across the start */
    note_off(c, 8.0, 1, 1, 65);      /*   the alto note: absent */
    note_on(c, 8.0, 3, 3, 48, 70);   /* bass: struck right at the start */
    note_off(c, 9.0, 0, 0, 60);      /*   the held soprano ends at 960 */
    add(c, 9.0, 4, 0xB0, 64, 127);   /* input: pedal down */
    note_off(c, 9.5, 2, 2, 67);      /* tenor: stray note-off (dropped) */
    note_on(c, 10.25, 1, 1, 64, 90); /* alto: still sounding at now */
    add(c, 11.0, 3, 0x93, 48, 0);    /* bass: velocity-0 note-on ends it */
    note_on(c, 12.0, 4, 0, 72, 100); /* input */
    add(c, 12.5, 4, 0x80, 72, 40);   /*   release velocity 40 */
    add(c, 13.0, 2, 0xC2, 5, 0);     /* tenor: program change */
    return c;
}

static void check_main_file(const char *path)
{
    smf_t *smf = load(path);
    assert_int_equal(smf->number_of_tracks, 6);
    assert_meter(smf, 600000, 4, 2);
    static const char *const names[5] = {"soprano", "alto", "tenor", "bass", "input"};
    for (int t = 0; t < 5; ++t)
        assert_track_name(smf, 2 + t, names[t]);

    static const heard soprano[] = {{0, 3, {0x90, 60, 90}}, {960, 3, {0x80, 60, 0}}};
    static const heard alto[] = {{2160, 3, {0x91, 64, 90}}, {MAIN_END, 3, {0x81, 64, 0}}};
    static const heard tenor[] = {{4800, 2, {0xC2, 5}}};
    static const heard bass[] = {{0, 3, {0x93, 48, 70}}, {2880, 3, {0x83, 48, 0}}};
    static const heard input[] = {
        {960, 3, {0xB0, 64, 127}}, {3840, 3, {0x90, 72, 100}}, {4320, 3, {0x80, 72, 40}}};
    assert_messages(smf, 2, soprano, 2);
    assert_messages(smf, 3, alto, 2);
    assert_messages(smf, 4, tenor, 1);
    assert_messages(smf, 5, bass, 2);
    assert_messages(smf, 6, input, 3);
    for (int number = 2; number <= 6; ++number)
        assert_notes_paired(smf, number);
    assert_tracks_end_at(smf, MAIN_END);
    smf_delete(smf);
}

/* Two bars of 7/8 (3.5 quarter notes) on two named tracks, written at
 * beat 8 at 90 bpm: the bar in progress is bar 2 (7..10.5), so the window
 * starts at 3.5 and the file ends at (8 - 3.5) x 960 = 4320 ticks. */
enum { SEVEN_END = 4320 };
static const double SEVEN_NOW = 8.0, SEVEN_BPM = 90.0;

static pnl_capture *seven_eight_scenario(void)
{
    static const char *const names[2] = {"left hand", "right hand"};
    pnl_capture_settings s;
    pnl_capture_settings_default(&s);
    s.bars = 2;
    s.beats_per_bar = 3.5;
    s.num_tracks = 2;
    s.track_names = names;
    pnl_capture *c = NULL;
    assert_int_equal(pnl_capture_create(&s, &c, NULL), PN_OK);
    note_on(c, 2.0, 0, 0, 60, 64);  /* held across the start: 0..480 */
    note_off(c, 4.0, 0, 0, 60);     /*   ends at (4 - 3.5) x 960 */
    note_on(c, 5.25, 1, 1, 67, 70); /* 1680, still sounding at now */
    note_on(c, 7.0, 0, 0, 62, 72);  /* on the bar line: 3360 */
    return c;
}

static void check_seven_eight_file(const char *path)
{
    smf_t *smf = load(path);
    assert_int_equal(smf->number_of_tracks, 3);
    assert_meter(smf, 666667, 7, 3);
    assert_track_name(smf, 2, "left hand");
    assert_track_name(smf, 3, "right hand");
    static const heard left[] = {{0, 3, {0x90, 60, 64}},
                                 {480, 3, {0x80, 60, 0}},
                                 {3360, 3, {0x90, 62, 72}},
                                 {SEVEN_END, 3, {0x80, 62, 0}}};
    static const heard right[] = {{1680, 3, {0x91, 67, 70}}, {SEVEN_END, 3, {0x81, 67, 0}}};
    assert_messages(smf, 2, left, 4);
    assert_messages(smf, 3, right, 2);
    assert_tracks_end_at(smf, SEVEN_END);
    smf_delete(smf);
}

/* ---------------------------------------------------------------- tests */

static void test_defaults(void **state)
{
    (void)state;
    pnl_capture_settings s;
    memset(&s, 0xAB, sizeof s);
    pnl_capture_settings_default(&s);
    assert_int_equal(s.bars, 16);
    assert_true(s.beats_per_bar == 4.0);
    assert_int_equal(s.capacity, 65536);
    assert_int_equal(s.num_tracks, 5);
    assert_null(s.track_names);
    pnl_capture *c = NULL;
    assert_int_equal(pnl_capture_create(NULL, &c, NULL), PN_OK);
    assert_int_equal(pnl_capture_count(c), 0);
    pnl_capture_free(c);
    pnl_capture_free(NULL);
}

static void test_add_and_count(void **state)
{
    (void)state;
    pnl_capture *c = make_capture(16, 4.0, 64, 5);
    note_on(c, 0.0, 0, 0, 60, 100);
    add(c, 0.5, 4, 0xE0, 0, 64); /* pitch bend */
    add(c, 1.0, 2, 0xD2, 40, 0); /* channel pressure */
    note_off(c, 1.5, 0, 0, 60);
    assert_int_equal(pnl_capture_count(c), 4);

    /* Not kept: a track beyond num_tracks, a system message, a note-on
     * of two bytes, a data byte of 0x80 or more, a bare data byte. */
    note_on(c, 2.0, 5, 0, 60, 100);
    pnl_capture_event sysex = {.beat = 2.0, .track = 0, .size = 1, .bytes = {0xF8}};
    pnl_capture_add(c, &sysex);
    pnl_capture_event short_note = {.beat = 2.0, .track = 0, .size = 2, .bytes = {0x90, 60}};
    pnl_capture_add(c, &short_note);
    add(c, 2.0, 0, 0x90, 0x80, 1);
    pnl_capture_event data = {.beat = 2.0, .track = 0, .size = 1, .bytes = {0x40}};
    pnl_capture_add(c, &data);
    pnl_capture_add(c, NULL);
    pnl_capture_add(NULL, &data);
    assert_int_equal(pnl_capture_count(c), 4);
    assert_int_equal(pnl_capture_count(NULL), 0);
    pnl_capture_free(c);
}

/* Two bars of 4/4: events are kept from the start of the window of the
 * newest event (the bar in progress and the one before). */
static void test_prune_to_bars(void **state)
{
    (void)state;
    pnl_capture *c = make_capture(2, 4.0, 64, 1);
    for (int beat = 0; beat < 12; ++beat)
        add(c, beat, 0, 0xB0, 1, beat);
    assert_int_equal(pnl_capture_count(c), 8); /* beats 4..11 */
    add(c, 12.0, 0, 0xB0, 1, 12);              /* on the bar line: bars 1..2 still */
    assert_int_equal(pnl_capture_count(c), 9);
    add(c, 12.5, 0, 0xB0, 1, 13); /* bar 3 begun: beats 8.. */
    assert_int_equal(pnl_capture_count(c), 6);
    add(c, 16.0 - 1e-7, 0, 0xB0, 1, 14); /* within half a tick of a bar line */
    add(c, 16.0 + 1e-7, 0, 0xB0, 1, 15);
    assert_int_equal(pnl_capture_count(c), 8);
    add(c, 16.01, 0, 0xB0, 1, 16); /* bar 4 begun: beats 12.. */
    assert_int_equal(pnl_capture_count(c), 5);
    add(c, 100.0, 0, 0xB0, 1, 17); /* a jump: only the newest is left */
    assert_int_equal(pnl_capture_count(c), 1);
    pnl_capture_free(c);
}

/* Past the capacity the oldest events go; a note whose note-on went with
 * them still sounds, from the start of the file. */
static void test_capacity_drops_oldest(void **state)
{
    (void)state;
    pnl_capture *c = make_capture(1024, 4.0, 16, 1);
    note_on(c, 0.5, 0, 0, 60, 99);
    for (int i = 1; i <= 20; ++i)
        add(c, i, 0, 0xB0, 7, i); /* volume i at beat i */
    assert_int_equal(pnl_capture_count(c), 16);

    const char *path = tmp_path("capacity.mid");
    write_ok(c, path, 21.0, 120.0); /* window from 0: ticks are beats x 960 */
    smf_t *smf = load(path);
    heard got[MAX_HEARD];
    int n = read_messages(smf, 2, got);
    assert_int_equal(n, 18); /* the note-on, volumes 5..20, the note-off */
    assert_int_equal(got[0].tick, 0);
    assert_int_equal(got[0].bytes[0], 0x90);
    assert_int_equal(got[0].bytes[2], 99);
    for (int i = 5; i <= 20; ++i) {
        assert_int_equal(got[i - 4].tick, i * TPQ);
        assert_int_equal(got[i - 4].bytes[2], i);
    }
    assert_int_equal(got[17].tick, 21 * TPQ);
    assert_int_equal(got[17].bytes[0], 0x80);
    smf_delete(smf);
    pnl_capture_free(c);
}

static void test_write_read_back(void **state)
{
    (void)state;
    pnl_capture *c = main_scenario();
    assert_int_equal(pnl_capture_count(c), 10); /* the four events before beat 8 are gone */
    const char *path = tmp_path("main.mid");
    write_ok(c, path, MAIN_NOW, MAIN_BPM);
    check_main_file(path);
    pnl_capture_free(c);
}

/* Written later, at beat 17.5: the window is beats 12..20, and the alto
 * note struck at 10.25, still held in the history, begins at 0. */
static void test_held_note_still_in_history(void **state)
{
    (void)state;
    pnl_capture *c = main_scenario();
    const char *path = tmp_path("later.mid");
    write_ok(c, path, 17.5, MAIN_BPM);
    smf_t *smf = load(path);
    enum { END = 5280 };
    static const heard alto[] = {{0, 3, {0x91, 64, 90}}, {END, 3, {0x81, 64, 0}}};
    static const heard tenor[] = {{960, 2, {0xC2, 5}}};
    static const heard input[] = {{0, 3, {0x90, 72, 100}}, {480, 3, {0x80, 72, 40}}};
    assert_messages(smf, 2, NULL, 0);
    assert_messages(smf, 3, alto, 2);
    assert_messages(smf, 4, tenor, 1);
    assert_messages(smf, 5, NULL, 0);
    assert_messages(smf, 6, input, 2);
    assert_tracks_end_at(smf, END);
    smf_delete(smf);
    pnl_capture_free(c);
}

static void test_seven_eight(void **state)
{
    (void)state;
    pnl_capture *c = seven_eight_scenario();
    const char *path = tmp_path("seven.mid");
    write_ok(c, path, SEVEN_NOW, SEVEN_BPM);
    check_seven_eight_file(path);
    pnl_capture_free(c);
}

/* The meter of other bar lengths: exact with the smallest denominator, or
 * the closest fit. */
static void test_time_signatures(void **state)
{
    (void)state;
    static const struct {
        double beats_per_bar;
        int numerator, log2_denominator;
    } cases[] = {
        {3.0, 3, 2},    {6.0, 6, 2},  {64.0, 64, 2},  {2.5, 5, 3},     {1.5, 3, 3},
        {1.25, 5, 4},   {0.75, 3, 4}, {0.0625, 1, 6}, {1.0 / 3, 5, 6}, /* no exact fit: 5/64 is the
                                                                          closest */
        {17.1, 137, 5}, /* no exact fit with a numerator below 256: 137/32 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        pnl_capture *c = make_capture(1, cases[i].beats_per_bar, 16, 1);
        const char *path = tmp_path("meter.mid");
        write_ok(c, path, 1.0, 120.0);
        smf_t *smf = load(path);
        assert_meter(smf, 500000, cases[i].numerator, cases[i].log2_denominator);
        smf_delete(smf);
        pnl_capture_free(c);
    }
}

/* The window ends at the first bar line at or after now: on a downbeat (or
 * within half a tick of it) the bars just completed are written. */
static void test_window_on_downbeat(void **state)
{
    (void)state;
    static const struct {
        double now;
        int note_on_tick, end_tick;
    } cases[] = {
        {8.0, 1 * TPQ, 8 * TPQ}, /* window 0..8 */
        {8.0 + 1e-7, 1 * TPQ, 8 * TPQ},
        {8.0 - 1e-7, 1 * TPQ, 8 * TPQ},
        {8.25, 0, (int)(4.25 * TPQ)}, /* window 4..12: the note is held across 4 */
        {0.5, -1, TPQ / 2},           /* window from 0, the note not yet struck */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        pnl_capture *c = make_capture(2, 4.0, 16, 1);
        note_on(c, 1.0, 0, 0, 60, 100);
        const char *path = tmp_path("downbeat.mid");
        write_ok(c, path, cases[i].now, 120.0);
        smf_t *smf = load(path);
        heard got[MAX_HEARD];
        int n = read_messages(smf, 2, got);
        if (cases[i].note_on_tick < 0) {
            assert_int_equal(n, 0);
        } else {
            assert_int_equal(n, 2);
            assert_int_equal(got[0].tick, cases[i].note_on_tick);
            assert_int_equal(got[1].tick, cases[i].end_tick);
        }
        assert_tracks_end_at(smf, cases[i].end_tick);
        smf_delete(smf);
        pnl_capture_free(c);
    }
}

/* A key struck again while sounding: the first note ends there; a
 * velocity-0 note-on and a note-off both end notes. */
static void test_restrike_and_note_offs(void **state)
{
    (void)state;
    pnl_capture *c = make_capture(4, 4.0, 64, 1);
    note_on(c, 1.0, 0, 5, 60, 80);
    note_on(c, 2.0, 0, 5, 60, 90);
    add(c, 3.0, 0, 0x95, 60, 0);
    add(c, 3.5, 0, 0x95, 60, 0); /* stray: dropped */
    note_on(c, 4.0, 0, 5, 62, 50);
    add(c, 5.0, 0, 0x85, 62, 127);
    const char *path = tmp_path("restrike.mid");
    write_ok(c, path, 6.0, 120.0);
    smf_t *smf = load(path);
    static const heard expected[] = {
        {960, 3, {0x95, 60, 80}}, {1920, 3, {0x85, 60, 0}},  {1920, 3, {0x95, 60, 90}},
        {2880, 3, {0x85, 60, 0}}, {3840, 3, {0x95, 62, 50}}, {4800, 3, {0x85, 62, 127}},
    };
    assert_messages(smf, 2, expected, 6);
    assert_notes_paired(smf, 2);
    smf_delete(smf);
    pnl_capture_free(c);
}

/* An earlier beat is clamped to the last; events at or after now are
 * left out. */
static void test_clamp_and_now(void **state)
{
    (void)state;
    pnl_capture *c = make_capture(16, 4.0, 64, 1);
    note_on(c, 2.0, 0, 0, 60, 100);
    note_off(c, 1.0, 0, 0, 60);     /* clamped to 2 */
    note_on(c, NAN, 0, 0, 61, 100); /* clamped to 2 */
    note_off(c, 3.0, 0, 0, 61);
    note_on(c, 4.0, 0, 0, 62, 100); /* at now: left out */
    add(c, 5.0, 0, 0xB0, 1, 1);     /* after now: left out */
    const char *path = tmp_path("clamp.mid");
    write_ok(c, path, 4.0, 120.0);
    smf_t *smf = load(path);
    static const heard expected[] = {{1920, 3, {0x90, 60, 100}},
                                     {1920, 3, {0x80, 60, 0}},
                                     {1920, 3, {0x90, 61, 100}},
                                     {2880, 3, {0x80, 61, 0}}};
    assert_messages(smf, 2, expected, 4);
    assert_tracks_end_at(smf, 4 * TPQ);
    smf_delete(smf);
    pnl_capture_free(c);
}

/* Written at beat 0 while a note dropped from the history is sounding
 * (now before the newest event): the window is empty, so is the file. */
static void test_empty_window(void **state)
{
    (void)state;
    pnl_capture *c = make_capture(1, 4.0, 16, 1);
    note_on(c, 0.5, 0, 0, 60, 100);
    add(c, 10.0, 0, 0xB0, 7, 100); /* drops the note-on, its note held */
    assert_int_equal(pnl_capture_count(c), 1);
    const char *path = tmp_path("empty.mid");
    write_ok(c, path, 0.0, 120.0);
    smf_t *smf = load(path);
    assert_messages(smf, 2, NULL, 0);
    assert_tracks_end_at(smf, 0);
    smf_delete(smf);
    pnl_capture_free(c);
}

static void test_track_names(void **state)
{
    (void)state;
    pnl_capture *c = make_capture(1, 4.0, 16, 3);
    const char *path = tmp_path("names.mid");
    write_ok(c, path, 0.0, 120.0);
    smf_t *smf = load(path);
    assert_int_equal(smf->number_of_tracks, 4);
    assert_track_name(smf, 2, "track 1");
    assert_track_name(smf, 3, "track 2");
    assert_track_name(smf, 4, "track 3");
    assert_tracks_end_at(smf, 0);
    smf_delete(smf);
    pnl_capture_free(c);

    /* The names are copied: the caller's array may go. */
    char first[PNL_CAPTURE_MAX_NAME] = "melody";
    const char *names[1] = {first};
    pnl_capture_settings s;
    pnl_capture_settings_default(&s);
    s.num_tracks = 1;
    s.track_names = names;
    assert_int_equal(pnl_capture_create(&s, &c, NULL), PN_OK);
    strcpy(first, "changed");
    write_ok(c, path, 1.0, 120.0);
    smf = load(path);
    assert_track_name(smf, 2, "melody");
    smf_delete(smf);
    pnl_capture_free(c);
}

static void test_unwritable_path(void **state)
{
    (void)state;
    pnl_capture *c = main_scenario();
    pn_error_info info = {0};
    const char *missing = tmp_path("no-such-dir/out.mid");
    assert_int_equal(pnl_capture_write(c, missing, MAIN_NOW, MAIN_BPM, &info), PN_ERR_IO);
    assert_int_equal(info.code, PN_ERR_IO);
    assert_non_null(strstr(info.message, missing));

    memset(&info, 0, sizeof info);
    assert_int_equal(pnl_capture_write(c, tmpdir, MAIN_NOW, MAIN_BPM, &info), PN_ERR_IO);
    assert_non_null(strstr(info.message, tmpdir));
    assert_int_equal(pnl_capture_write(c, missing, MAIN_NOW, MAIN_BPM, NULL), PN_ERR_IO);
    pnl_capture_free(c);
}

static void test_write_rejects_arguments(void **state)
{
    (void)state;
    pnl_capture *c = main_scenario();
    pn_error_info info = {0};
    const char *path = tmp_path("rejected.mid");
    static const struct {
        double now, bpm;
        const char *word;
    } cases[] = {
        {-1.0, 120.0, "now_beat"}, {NAN, 120.0, "now_beat"}, {2e9, 120.0, "now_beat"},
        {8.0, 0.0, "bpm"},         {8.0, NAN, "bpm"},        {8.0, 1001.0, "bpm"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        info.message[0] = '\0';
        assert_int_equal(pnl_capture_write(c, path, cases[i].now, cases[i].bpm, &info),
                         PN_ERR_INVALID);
        assert_non_null(strstr(info.message, cases[i].word));
        assert_false(file_exists(path));
    }
    assert_int_equal(pnl_capture_write(NULL, path, 8.0, 120.0, &info), PN_ERR_INVALID);
    assert_int_equal(pnl_capture_write(c, NULL, 8.0, 120.0, &info), PN_ERR_INVALID);
    pnl_capture_free(c);
}

static void expect_invalid(const pnl_capture_settings *s, const char *field)
{
    pnl_capture *c = (pnl_capture *)&c; /* must come back NULL */
    pn_error_info info = {0};
    assert_int_equal(pnl_capture_create(s, &c, &info), PN_ERR_INVALID);
    assert_null(c);
    assert_int_equal(info.code, PN_ERR_INVALID);
    if (!strstr(info.message, field))
        fail_msg("message \"%s\" does not name %s", info.message, field);
}

static void test_invalid_settings(void **state)
{
    (void)state;
    pnl_capture_settings s;
    static const int bad_bars[] = {0, -1, 1025};
    for (size_t i = 0; i < sizeof bad_bars / sizeof bad_bars[0]; ++i) {
        pnl_capture_settings_default(&s);
        s.bars = bad_bars[i];
        expect_invalid(&s, "bars");
    }
    const double bad_beats[] = {0.0, -4.0, 0.05, 64.5, NAN, INFINITY};
    for (size_t i = 0; i < sizeof bad_beats / sizeof bad_beats[0]; ++i) {
        pnl_capture_settings_default(&s);
        s.beats_per_bar = bad_beats[i];
        expect_invalid(&s, "beats_per_bar");
    }
    static const size_t bad_capacity[] = {0, 15, ((size_t)1 << 24) + 1};
    for (size_t i = 0; i < sizeof bad_capacity / sizeof bad_capacity[0]; ++i) {
        pnl_capture_settings_default(&s);
        s.capacity = bad_capacity[i];
        expect_invalid(&s, "capacity");
    }
    static const int bad_tracks[] = {0, -1, PNL_CAPTURE_MAX_TRACKS + 1};
    for (size_t i = 0; i < sizeof bad_tracks / sizeof bad_tracks[0]; ++i) {
        pnl_capture_settings_default(&s);
        s.num_tracks = bad_tracks[i];
        expect_invalid(&s, "num_tracks");
    }
    char long_name[PNL_CAPTURE_MAX_NAME + 1];
    memset(long_name, 'x', PNL_CAPTURE_MAX_NAME);
    long_name[PNL_CAPTURE_MAX_NAME] = '\0';
    const char *names[2] = {"fine", long_name};
    pnl_capture_settings_default(&s);
    s.num_tracks = 2;
    s.track_names = names;
    expect_invalid(&s, "track_names[1]");
    names[1] = NULL;
    expect_invalid(&s, "track_names[1]");

    /* The limits themselves are fine. */
    pnl_capture_settings_default(&s);
    s.bars = 1024;
    s.beats_per_bar = 64.0;
    s.capacity = 16;
    s.num_tracks = PNL_CAPTURE_MAX_TRACKS;
    pnl_capture *c = NULL;
    assert_int_equal(pnl_capture_create(&s, &c, NULL), PN_OK);
    pnl_capture_free(c);
    assert_int_equal(pnl_capture_create(&s, NULL, NULL), PN_ERR_INVALID);
}

/* Clearing forgets the events and the notes left sounding, and lets beats
 * start again from 0. */
static void test_clear(void **state)
{
    (void)state;
    pnl_capture *c = make_capture(1, 4.0, 16, 1);
    note_on(c, 1.0, 0, 0, 60, 100);
    for (int i = 2; i < 40; ++i)
        add(c, i, 0, 0xB0, 7, i); /* the note-on is dropped, its note held */
    assert_true(pnl_capture_count(c) > 0);
    pnl_capture_clear(c);
    assert_int_equal(pnl_capture_count(c), 0);

    const char *path = tmp_path("cleared.mid");
    write_ok(c, path, 39.0, 120.0);
    smf_t *smf = load(path);
    assert_messages(smf, 2, NULL, 0);
    smf_delete(smf);

    note_on(c, 0.5, 0, 0, 64, 100); /* not clamped to 39 */
    assert_int_equal(pnl_capture_count(c), 1);
    write_ok(c, path, 1.0, 120.0);
    smf = load(path);
    static const heard expected[] = {{480, 3, {0x90, 64, 100}}, {960, 3, {0x80, 64, 0}}};
    assert_messages(smf, 2, expected, 2);
    smf_delete(smf);
    pnl_capture_clear(NULL);
    pnl_capture_free(c);
}

/* With PN_LIVE_CAPTURE_OUT set to a directory, leave the main and the 7/8
 * files there (capture.mid, capture-7-8.mid) for the mido check. */
static void test_export(void **state)
{
    (void)state;
    const char *dir = getenv("PN_LIVE_CAPTURE_OUT");
    if (!dir || !*dir)
        skip();
    char path[1024];
    pnl_capture *c = main_scenario();
    snprintf(path, sizeof path, "%s/capture.mid", dir);
    write_ok(c, path, MAIN_NOW, MAIN_BPM);
    check_main_file(path);
    pnl_capture_free(c);

    c = seven_eight_scenario();
    snprintf(path, sizeof path, "%s/capture-7-8.mid", dir);
    write_ok(c, path, SEVEN_NOW, SEVEN_BPM);
    check_seven_eight_file(path);
    pnl_capture_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_add_and_count),
        cmocka_unit_test(test_prune_to_bars),
        cmocka_unit_test(test_capacity_drops_oldest),
        cmocka_unit_test(test_write_read_back),
        cmocka_unit_test(test_held_note_still_in_history),
        cmocka_unit_test(test_seven_eight),
        cmocka_unit_test(test_time_signatures),
        cmocka_unit_test(test_window_on_downbeat),
        cmocka_unit_test(test_restrike_and_note_offs),
        cmocka_unit_test(test_clamp_and_now),
        cmocka_unit_test(test_empty_window),
        cmocka_unit_test(test_track_names),
        cmocka_unit_test(test_unwritable_path),
        cmocka_unit_test(test_write_rejects_arguments),
        cmocka_unit_test(test_invalid_settings),
        cmocka_unit_test(test_clear),
        cmocka_unit_test(test_export),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
