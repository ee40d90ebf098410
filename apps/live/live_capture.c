/* Capture history and its Standard MIDI File writer (see live_capture.h). */
#include "live_capture.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <smf.h>

enum {
    DIVISION = 960, /* ticks per quarter note in the file */
    MIN_BARS = 1,
    MAX_BARS = 1024,
    MIN_CAPACITY = 16,
    CHANNELS = 16,
    KEYS = 128,
    NOTE_SLOTS = CHANNELS * KEYS, /* per track */
};

/* 2^24 events of 16 bytes: 256 MiB, far beyond any session. */
static const size_t MAX_CAPACITY = (size_t)1 << 24;

/* A bar from a 64th note to 64 quarter notes: every time signature the
 * writer picks then has a numerator in 1..255. The longest window,
 * 1024 x 64 quarter notes, is 62914560 ticks, within the file format's
 * 0x0FFFFFFF. */
static const double MIN_BEATS_PER_BAR = 1.0 / 16.0;
static const double MAX_BEATS_PER_BAR = 64.0;

/* About 15 years at 120 bpm; keeps beat arithmetic well within double
 * precision at the tick. */
static const double MAX_BEAT = 1e9;

static const double MIN_BPM = 4.0, MAX_BPM = 1000.0;

struct pnl_capture {
    pnl_capture_settings s; /* s.track_names is NULL: names[] holds them */
    char names[PNL_CAPTURE_MAX_TRACKS][PNL_CAPTURE_MAX_NAME];
    pnl_capture_event *ring; /* s.capacity events, the oldest at head */
    size_t head, count;
    double last_beat;
    /* Velocity (0: silent) of every (track, channel, key) note left
     * sounding by the events dropped from the ring, so that a note held
     * across the window's start survives its note-on being dropped. */
    uint8_t *forgotten; /* num_tracks x NOTE_SLOTS */
};

void pnl_capture_settings_default(pnl_capture_settings *s)
{
    s->bars = 16;
    s->beats_per_bar = 4.0;
    s->capacity = 65536;
    s->num_tracks = 5;
    s->track_names = NULL;
}

/* ------------------------------------------------------------- settings */

static pn_error check_names(const pnl_capture_settings *s, pn_error_info *info)
{
    if (!s->track_names)
        return PN_OK;
    for (int i = 0; i < s->num_tracks; ++i) {
        const char *name = s->track_names[i];
        if (!name)
            return pn_fail(info, PN_ERR_INVALID, "capture: track_names[%d] is NULL", i);
        if (strlen(name) >= PNL_CAPTURE_MAX_NAME)
            return pn_fail(info, PN_ERR_INVALID, "capture: track_names[%d] is longer than %d bytes",
                           i, PNL_CAPTURE_MAX_NAME - 1);
    }
    return PN_OK;
}

static pn_error check_settings(const pnl_capture_settings *s, pn_error_info *info)
{
    if (s->bars < MIN_BARS || s->bars > MAX_BARS)
        return pn_fail(info, PN_ERR_INVALID, "capture: bars %d not in %d..%d", s->bars, MIN_BARS,
                       MAX_BARS);
    /* Written so that NaN fails too. */
    if (!(s->beats_per_bar >= MIN_BEATS_PER_BAR && s->beats_per_bar <= MAX_BEATS_PER_BAR))
        return pn_fail(info, PN_ERR_INVALID, "capture: beats_per_bar %g not in %g..%g",
                       s->beats_per_bar, MIN_BEATS_PER_BAR, MAX_BEATS_PER_BAR);
    if (s->capacity < MIN_CAPACITY || s->capacity > MAX_CAPACITY)
        return pn_fail(info, PN_ERR_INVALID, "capture: capacity %zu not in %d..%zu", s->capacity,
                       MIN_CAPACITY, MAX_CAPACITY);
    if (s->num_tracks < 1 || s->num_tracks > PNL_CAPTURE_MAX_TRACKS)
        return pn_fail(info, PN_ERR_INVALID, "capture: num_tracks %d not in 1..%d", s->num_tracks,
                       PNL_CAPTURE_MAX_TRACKS);
    return check_names(s, info);
}

static void copy_track_names(pnl_capture *c, const char *const *given)
{
    static const char *const satb_input[5] = {"soprano", "alto", "tenor", "bass", "input"};
    for (int i = 0; i < c->s.num_tracks; ++i) {
        if (given)
            snprintf(c->names[i], sizeof c->names[i], "%s", given[i]);
        else if (c->s.num_tracks == 5)
            snprintf(c->names[i], sizeof c->names[i], "%s", satb_input[i]);
        else
            snprintf(c->names[i], sizeof c->names[i], "track %d", i + 1);
    }
}

pn_error pnl_capture_create(const pnl_capture_settings *s, pnl_capture **out, pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "capture: out is NULL");
    *out = NULL;
    pnl_capture_settings def;
    if (!s) {
        pnl_capture_settings_default(&def);
        s = &def;
    }
    pn_error err = check_settings(s, info);
    if (err != PN_OK)
        return err;
    pnl_capture *c = calloc(1, sizeof *c);
    if (!c)
        return pn_fail(info, PN_ERR_NOMEM, "capture: out of memory");
    c->s = *s;
    c->s.track_names = NULL;
    copy_track_names(c, s->track_names);
    c->ring = malloc(s->capacity * sizeof *c->ring);
    c->forgotten = calloc((size_t)s->num_tracks * NOTE_SLOTS, 1);
    if (!c->ring || !c->forgotten) {
        pnl_capture_free(c);
        return pn_fail(info, PN_ERR_NOMEM, "capture: out of memory for %zu events", s->capacity);
    }
    *out = c;
    return PN_OK;
}

void pnl_capture_free(pnl_capture *c)
{
    if (!c)
        return;
    free(c->ring);
    free(c->forgotten);
    free(c);
}

/* ---------------------------------------------------------------- notes */

typedef enum note_change {
    NOT_A_NOTE,
    NOTE_STRUCK,
    NOTE_RELEASED,
} note_change;

static note_change note_change_of(const pnl_capture_event *ev)
{
    unsigned kind = ev->bytes[0] >> 4;
    if (kind == 0x9)
        return ev->bytes[2] > 0 ? NOTE_STRUCK : NOTE_RELEASED;
    return kind == 0x8 ? NOTE_RELEASED : NOT_A_NOTE;
}

/* Where a note event's (track, channel, key) lives in a sounding table. */
static size_t note_slot(const pnl_capture_event *ev)
{
    return (size_t)ev->track * NOTE_SLOTS + (size_t)(ev->bytes[0] & 0x0F) * KEYS + ev->bytes[1];
}

/* Updates a table of sounding notes (velocities) with a note event. */
static void apply_note(uint8_t *sounding, const pnl_capture_event *ev)
{
    switch (note_change_of(ev)) {
    case NOTE_STRUCK:
        sounding[note_slot(ev)] = ev->bytes[2];
        break;
    case NOTE_RELEASED:
        sounding[note_slot(ev)] = 0;
        break;
    case NOT_A_NOTE:
        break;
    }
}

/* A channel message of its kind's length with data bytes below 0x80. */
static int is_channel_message(const pnl_capture_event *ev)
{
    if (ev->size < 1 || ev->size > 3 || ev->bytes[0] < 0x80 || ev->bytes[0] >= 0xF0)
        return 0;
    unsigned kind = ev->bytes[0] >> 4;
    int len = kind == 0xC || kind == 0xD ? 2 : 3; /* program change, channel pressure: 2 */
    if (ev->size != len)
        return 0;
    for (int i = 1; i < len; ++i)
        if (ev->bytes[i] & 0x80)
            return 0;
    return 1;
}

/* ----------------------------------------------------------------- bars */

/* The first bar line at or after beat, a beat within half a tick of a bar
 * line counting as on it (the transport's beats carry rounding errors). */
static double window_end(const pnl_capture_settings *s, double beat)
{
    double bars = beat / s->beats_per_bar;
    double nearest = round(bars);
    if (fabs(beat - nearest * s->beats_per_bar) * DIVISION < 0.5)
        return nearest * s->beats_per_bar;
    return ceil(bars) * s->beats_per_bar;
}

static double window_start(const pnl_capture_settings *s, double beat)
{
    double start = window_end(s, beat) - s->bars * s->beats_per_bar;
    return start > 0.0 ? start : 0.0;
}

/* ------------------------------------------------------------- history */

static const pnl_capture_event *event_at(const pnl_capture *c, size_t i)
{
    return &c->ring[(c->head + i) % c->s.capacity];
}

/* Drops the oldest event, remembering the notes it leaves sounding. */
static void forget_oldest(pnl_capture *c)
{
    apply_note(c->forgotten, &c->ring[c->head]);
    c->head = (c->head + 1) % c->s.capacity;
    c->count--;
}

static void prune_before_window(pnl_capture *c)
{
    double start = window_start(&c->s, c->last_beat);
    while (c->count > 0 && c->ring[c->head].beat < start)
        forget_oldest(c);
}

void pnl_capture_add(pnl_capture *c, const pnl_capture_event *ev)
{
    if (!c || !ev || ev->track >= c->s.num_tracks || !is_channel_message(ev))
        return;
    pnl_capture_event e = *ev;
    /* Written so that NaN is clamped too. */
    if (!(e.beat >= c->last_beat))
        e.beat = c->last_beat;
    if (e.beat > MAX_BEAT)
        e.beat = MAX_BEAT;
    if (c->count == c->s.capacity)
        forget_oldest(c);
    c->ring[(c->head + c->count) % c->s.capacity] = e;
    c->count++;
    c->last_beat = e.beat;
    prune_before_window(c);
}

void pnl_capture_clear(pnl_capture *c)
{
    if (!c)
        return;
    c->head = 0;
    c->count = 0;
    c->last_beat = 0.0;
    memset(c->forgotten, 0, (size_t)c->s.num_tracks * NOTE_SLOTS);
}

size_t pnl_capture_count(const pnl_capture *c)
{
    return c ? c->count : 0;
}

/* -------------------------------------------------------------- writing */

/* The time signature of a bar: numerator n over 2^log2_denominator, the
 * smallest denominator from 4 to 64 that fits exactly, else the closest
 * fit. The range of beats_per_bar guarantees some n in 1..255. */
static void time_signature(double beats_per_bar, int *numerator, int *log2_denominator)
{
    double best_error = INFINITY;
    for (int p = 2; p <= 6; ++p) {
        double unit = 4.0 / (1 << p); /* quarter notes per 1/2^p note */
        double n = round(beats_per_bar / unit);
        double error = fabs(n * unit - beats_per_bar);
        if (n < 1 || n > 255 || !(error < best_error - 1e-9))
            continue;
        best_error = error;
        *numerator = (int)n;
        *log2_denominator = p;
    }
}

/* Everything one write needs. */
typedef struct file_builder {
    const pnl_capture *c;
    smf_t *smf;
    /* [0]: tempo and meter; [1 + t]: capture track t. Owned by smf. */
    smf_track_t *tracks[1 + PNL_CAPTURE_MAX_TRACKS];
    uint8_t *sounding; /* as c->forgotten, at the tick being written */
    double start;      /* the window's start, beats */
    double end_tick;   /* now_beat, ticks from the start */
} file_builder;

/* The tick of a beat from the window's start (negative before it). */
static double tick_of(const file_builder *b, double beat)
{
    return round((beat - b->start) * DIVISION);
}

/* Adds an event made by libsmf (NULL when it refused or ran out of
 * memory). Events go in in time order, so libsmf appends them. */
static int add_at(smf_track_t *track, smf_event_t *ev, double tick)
{
    if (!ev)
        return 0;
    smf_track_add_event_pulses(track, ev, (int)tick);
    return 1;
}

static int add_meta(smf_track_t *track, unsigned char *bytes, int len)
{
    return add_at(track, smf_event_new_from_pointer(bytes, len), 0);
}

static int add_note_on(smf_track_t *track, int channel, int key, int velocity, double tick)
{
    return add_at(track, smf_event_new_from_bytes(0x90 | channel, key, velocity), tick);
}

static int add_note_off(smf_track_t *track, int channel, int key, int velocity, double tick)
{
    return add_at(track, smf_event_new_from_bytes(0x80 | channel, key, velocity), tick);
}

static int add_meter_track(const file_builder *b, double bpm)
{
    long us = lround(60e6 / bpm); /* 60000..15000000 < 2^24 */
    unsigned char tempo[6] = {
        0xFF, 0x51, 0x03, (unsigned char)(us >> 16), (unsigned char)(us >> 8), (unsigned char)us};
    int numerator = 4, log2_denominator = 2;
    time_signature(b->c->s.beats_per_bar, &numerator, &log2_denominator);
    /* a click every quarter note (24 MIDI clocks), 8 32nds per quarter */
    unsigned char meter[7] = {
        0xFF, 0x58, 0x04, (unsigned char)numerator, (unsigned char)log2_denominator, 24, 8};
    return add_meta(b->tracks[0], tempo, 6) && add_meta(b->tracks[0], meter, 7);
}

static int add_track_name(smf_track_t *track, const char *name)
{
    unsigned char bytes[3 + PNL_CAPTURE_MAX_NAME];
    size_t len = strlen(name); /* < 64: its length is one VLQ byte */
    if (len == 0)
        return 1;
    bytes[0] = 0xFF;
    bytes[1] = 0x03;
    bytes[2] = (unsigned char)len;
    memcpy(bytes + 3, name, len);
    return add_meta(track, bytes, 3 + (int)len);
}

static int add_tracks(file_builder *b)
{
    for (int t = 0; t <= b->c->s.num_tracks; ++t) {
        if (!(b->tracks[t] = smf_track_new()))
            return 0;
        smf_add_track(b->smf, b->tracks[t]); /* owned by smf from here on */
        if (t > 0 && !add_track_name(b->tracks[t], b->c->names[t - 1]))
            return 0;
    }
    return 1;
}

/* The notes sounding at the window's start: those the dropped events
 * left sounding, updated with the history's events before the start. A
 * note struck or released right at the start (to the tick) does not count
 * as sounding: it is written as it comes (a note-off then being stray), so
 * no note of length 0 appears at the start. */
static void notes_at_start(file_builder *b)
{
    const pnl_capture *c = b->c;
    size_t slots = (size_t)c->s.num_tracks * NOTE_SLOTS;
    if (b->end_tick <= 0) { /* an empty window: nothing sounds in it */
        memset(b->sounding, 0, slots);
        return;
    }
    memcpy(b->sounding, c->forgotten, slots);
    for (size_t i = 0; i < c->count; ++i) {
        const pnl_capture_event *ev = event_at(c, i);
        double tick = tick_of(b, ev->beat);
        if (tick > 0)
            break;
        if (tick < 0)
            apply_note(b->sounding, ev);
        else if (note_change_of(ev) != NOT_A_NOTE)
            b->sounding[note_slot(ev)] = 0;
    }
}

static int start_sounding_notes(const file_builder *b)
{
    for (int t = 0; t < b->c->s.num_tracks; ++t) {
        const uint8_t *velocity = b->sounding + (size_t)t * NOTE_SLOTS;
        for (int slot = 0; slot < NOTE_SLOTS; ++slot)
            if (velocity[slot] > 0 &&
                !add_note_on(b->tracks[1 + t], slot / KEYS, slot % KEYS, velocity[slot], 0))
                return 0;
    }
    return 1;
}

/* Writes one event of the window, keeping every note-on paired. */
static int write_event(file_builder *b, const pnl_capture_event *ev, double tick)
{
    smf_track_t *track = b->tracks[1 + ev->track];
    note_change change = note_change_of(ev);
    if (change == NOT_A_NOTE) {
        int second = ev->bytes[1], third = ev->size > 2 ? ev->bytes[2] : -1;
        return add_at(track, smf_event_new_from_bytes(ev->bytes[0], second, third), tick);
    }
    uint8_t *velocity = &b->sounding[note_slot(ev)];
    int channel = ev->bytes[0] & 0x0F, key = ev->bytes[1];
    if (change == NOTE_RELEASED) {
        if (*velocity == 0)
            return 1; /* the note did not start in the window */
        *velocity = 0;
        int release = ev->bytes[0] >> 4 == 0x8 ? ev->bytes[2] : 0;
        return add_note_off(track, channel, key, release, tick);
    }
    if (*velocity > 0 && !add_note_off(track, channel, key, 0, tick))
        return 0; /* struck again while sounding: the first one ends here */
    *velocity = ev->bytes[2];
    return add_note_on(track, channel, key, *velocity, tick);
}

static int write_window(file_builder *b)
{
    const pnl_capture *c = b->c;
    for (size_t i = 0; i < c->count; ++i) {
        const pnl_capture_event *ev = event_at(c, i);
        double tick = tick_of(b, ev->beat);
        if (tick >= b->end_tick)
            break;
        if (tick >= 0 && !write_event(b, ev, tick))
            return 0;
    }
    return 1;
}

/* Ends the notes still sounding, then every track, at now_beat. */
static int end_tracks(const file_builder *b)
{
    for (int t = 0; t < b->c->s.num_tracks; ++t) {
        const uint8_t *velocity = b->sounding + (size_t)t * NOTE_SLOTS;
        for (int slot = 0; slot < NOTE_SLOTS; ++slot)
            if (velocity[slot] > 0 &&
                !add_note_off(b->tracks[1 + t], slot / KEYS, slot % KEYS, 0, b->end_tick))
                return 0;
    }
    for (int t = 0; t <= b->c->s.num_tracks; ++t)
        if (smf_track_add_eot_pulses(b->tracks[t], (int)b->end_tick) != 0)
            return 0;
    return 1;
}

static int build_file(file_builder *b, double bpm)
{
    if (smf_set_format(b->smf, 1) != 0 || smf_set_ppqn(b->smf, DIVISION) != 0)
        return 0;
    if (!add_tracks(b) || !add_meter_track(b, bpm))
        return 0;
    notes_at_start(b);
    return start_sounding_notes(b) && write_window(b) && end_tracks(b);
}

static pn_error check_write_arguments(const pnl_capture *c, const char *path, double now_beat,
                                      double bpm, pn_error_info *info)
{
    if (!c || !path)
        return pn_fail(info, PN_ERR_INVALID, "capture: NULL history or path");
    if (!(now_beat >= 0.0 && now_beat <= MAX_BEAT))
        return pn_fail(info, PN_ERR_INVALID, "%s: now_beat %g not in 0..%g", path, now_beat,
                       MAX_BEAT);
    if (!(bpm >= MIN_BPM && bpm <= MAX_BPM))
        return pn_fail(info, PN_ERR_INVALID, "%s: tempo %g bpm not in %g..%g", path, bpm, MIN_BPM,
                       MAX_BPM);
    return PN_OK;
}

pn_error pnl_capture_write(const pnl_capture *c, const char *path, double now_beat, double bpm,
                           pn_error_info *info)
{
    pn_error err = check_write_arguments(c, path, now_beat, bpm, info);
    if (err != PN_OK)
        return err;
    /* Open it ourselves first for a clear message; libsmf only logs. */
    FILE *probe = fopen(path, "wb");
    if (!probe)
        return pn_fail(info, PN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    fclose(probe);

    file_builder b = {.c = c, .start = window_start(&c->s, now_beat)};
    b.end_tick = tick_of(&b, now_beat);
    b.smf = smf_new();
    b.sounding = malloc((size_t)c->s.num_tracks * NOTE_SLOTS);
    if (!b.smf || !b.sounding)
        err = pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", path);
    else if (!build_file(&b, bpm))
        err = pn_fail(info, PN_ERR_NOMEM, "%s: could not build the file (out of memory?)", path);
    else if (smf_save(b.smf, path) != 0)
        err = pn_fail(info, PN_ERR_IO, "%s: could not write the file", path);
    if (b.smf)
        smf_delete(b.smf);
    free(b.sounding);
    return err;
}
