/* Timed raw MIDI events to a Standard MIDI File (see midi_events.h). */
#include "midi_events.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <smf.h>

/* Longest file: every delta fits the 4-byte variable-length quantity. */
enum { MAX_TICKS = 0x0FFFFFFF };

void pn_midi_events_settings_default(pn_midi_events_settings *s)
{
    s->sample_rate = 48000.0;
    s->tempo_bpm = 120.0;
    s->division = 960;
    s->format = 0;
    s->beats_per_bar = 4;
    s->beat_unit = 4;
    s->end_frame = 0;
    s->name = NULL;
}

int64_t pn_midi_frame_to_tick(const pn_midi_events_settings *s, int64_t frame)
{
    const double bpm = s->tempo_bpm, rate = s->sample_rate;
    /* Whole tempo and rate (the usual case): exact integer rounding, half
     * up, while frame * division * bpm stays far below 2^63. */
    if (bpm == floor(bpm) && rate == floor(rate) && frame >= 0 && frame < ((int64_t)1 << 40)) {
        int64_t num = frame * (int64_t)s->division * (int64_t)bpm;
        int64_t den = 60 * (int64_t)rate;
        return (2 * num + den) / (2 * den);
    }
    return (int64_t)llroundl((long double)frame * s->division * bpm / (60.0L * rate));
}

static pn_error check_settings(const pn_midi_events_settings *s, pn_error_info *info)
{
    if (!(s->sample_rate >= 1.0 && s->sample_rate <= 1e7))
        return pn_fail(info, PN_ERR_INVALID, "midi events: sample rate %g not in 1..1e7",
                       s->sample_rate);
    if (!(s->tempo_bpm >= 4.0 && s->tempo_bpm <= 1000.0))
        return pn_fail(info, PN_ERR_INVALID, "midi events: tempo %g bpm not in 4..1000",
                       s->tempo_bpm);
    if (s->division < 1 || s->division > 32767)
        return pn_fail(info, PN_ERR_INVALID, "midi events: division %d not in 1..32767",
                       s->division);
    if (s->format != 0 && s->format != 1)
        return pn_fail(info, PN_ERR_INVALID, "midi events: format %d is neither 0 nor 1",
                       s->format);
    if (s->beats_per_bar < 1 || s->beats_per_bar > 32)
        return pn_fail(info, PN_ERR_INVALID, "midi events: %d beats per bar not in 1..32",
                       s->beats_per_bar);
    int u = s->beat_unit;
    if (u < 1 || u > 32 || (u & (u - 1)) != 0)
        return pn_fail(info, PN_ERR_INVALID, "midi events: beat unit %d not 1, 2, 4, ..., 32", u);
    return PN_OK;
}

/* A channel message of the right length with data bytes below 0x80. */
static int is_channel_message(const pn_midi_event *e)
{
    if (e->size < 1 || e->size > 3 || e->bytes[0] < 0x80 || e->bytes[0] >= 0xF0)
        return 0;
    unsigned kind = e->bytes[0] >> 4;
    int len = kind == 0xC || kind == 0xD ? 2 : 3;
    if (e->size != len)
        return 0;
    for (int i = 1; i < len; ++i)
        if (e->bytes[i] & 0x80)
            return 0;
    return 1;
}

static int is_note_off(const pn_midi_event *e)
{
    unsigned kind = e->bytes[0] >> 4;
    return kind == 0x8 || (kind == 0x9 && e->bytes[2] == 0);
}

typedef struct placed {
    int64_t tick;
    int rank; /* 0 note-off, 1 anything else */
    int64_t frame;
    size_t index;
} placed;

static int compare_placed(const void *pa, const void *pb)
{
    const placed *a = pa, *b = pb;
    if (a->tick != b->tick)
        return a->tick < b->tick ? -1 : 1;
    if (a->rank != b->rank)
        return a->rank - b->rank;
    if (a->frame != b->frame)
        return a->frame < b->frame ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static int add_at(smf_track_t *track, smf_event_t *ev, int64_t tick)
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

static int add_header(const pn_midi_events_settings *s, smf_track_t *track)
{
    if (s->name) {
        unsigned char name[3 + 64];
        size_t len = strlen(s->name);
        len = len > 64 ? 64 : len;
        name[0] = 0xFF;
        name[1] = 0x03;
        name[2] = (unsigned char)len;
        memcpy(name + 3, s->name, len);
        if (!add_meta(track, name, 3 + (int)len))
            return 0;
    }
    long us = lround(60e6 / s->tempo_bpm); /* 60000..15000000 < 2^24 */
    unsigned char tempo[6] = {
        0xFF, 0x51, 0x03, (unsigned char)(us >> 16), (unsigned char)(us >> 8), (unsigned char)us};
    int log2_unit = 0;
    while ((1 << log2_unit) < s->beat_unit)
        ++log2_unit;
    /* a click every beat (MIDI clocks: 24 per quarter), 8 32nds per quarter */
    unsigned char timesig[7] = {0xFF,
                                0x58,
                                0x04,
                                (unsigned char)s->beats_per_bar,
                                (unsigned char)log2_unit,
                                (unsigned char)(96 / s->beat_unit),
                                8};
    return add_meta(track, tempo, 6) && add_meta(track, timesig, 7);
}

pn_error pn_midi_events_write(const char *path, const pn_midi_event *events, size_t count,
                              const pn_midi_events_settings *s, size_t *written,
                              pn_error_info *info)
{
    if (written)
        *written = 0;
    pn_midi_events_settings def;
    if (!s) {
        pn_midi_events_settings_default(&def);
        s = &def;
    }
    if (!path || (count && !events))
        return pn_fail(info, PN_ERR_INVALID, "midi events: NULL path or events");
    pn_error err = check_settings(s, info);
    if (err != PN_OK)
        return err;

    placed *order = malloc((count ? count : 1) * sizeof *order);
    if (!order)
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", path);
    size_t n = 0;
    for (size_t i = 0; i < count; ++i) {
        const pn_midi_event *e = &events[i];
        if (e->frame < 0 || !is_channel_message(e))
            continue;
        int64_t tick = pn_midi_frame_to_tick(s, e->frame);
        if (tick > MAX_TICKS) {
            free(order);
            return pn_fail(info, PN_ERR_INVALID,
                           "%s: event at frame %lld is beyond 0x0FFFFFFF ticks", path,
                           (long long)e->frame);
        }
        order[n++] = (placed){tick, is_note_off(e) ? 0 : 1, e->frame, i};
    }
    qsort(order, n, sizeof *order, compare_placed);
    int64_t end = s->end_frame > 0 ? pn_midi_frame_to_tick(s, s->end_frame) : 0;
    if (n && order[n - 1].tick > end)
        end = order[n - 1].tick;
    if (end > MAX_TICKS)
        end = MAX_TICKS;

    /* Open it ourselves first for a clear message; libsmf only logs. */
    FILE *probe = fopen(path, "wb");
    if (!probe) {
        free(order);
        return pn_fail(info, PN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    }
    fclose(probe);

    smf_t *smf = smf_new();
    if (!smf) {
        free(order);
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", path);
    }
    if (smf_set_format(smf, s->format) != 0 || smf_set_ppqn(smf, s->division) != 0) {
        err = pn_fail(info, PN_ERR_INVALID, "%s: libsmf refused format %d, division %d", path,
                      s->format, s->division);
        goto done;
    }
    smf_track_t *tracks[2] = {NULL, NULL};
    int num_tracks = s->format == 0 ? 1 : 2;
    for (int t = 0; t < num_tracks; ++t) {
        if (!(tracks[t] = smf_track_new())) {
            err = pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", path);
            goto done;
        }
        smf_add_track(smf, tracks[t]); /* owned by smf from here on */
    }
    smf_track_t *notes = tracks[num_tracks - 1];
    int ok = add_header(s, tracks[0]);
    for (size_t k = 0; ok && k < n; ++k) {
        const pn_midi_event *e = &events[order[k].index];
        int b1 = e->size > 1 ? e->bytes[1] : -1, b2 = e->size > 2 ? e->bytes[2] : -1;
        ok = add_at(notes, smf_event_new_from_bytes(e->bytes[0], b1, b2), order[k].tick);
    }
    for (int t = 0; ok && t < num_tracks; ++t)
        ok = smf_track_add_eot_pulses(tracks[t], (int)end) == 0;
    if (!ok) {
        err = pn_fail(info, PN_ERR_NOMEM, "%s: could not build the track (out of memory?)", path);
        goto done;
    }
    if (smf_save(smf, path) != 0) {
        err = pn_fail(info, PN_ERR_IO, "%s: libsmf could not write the file", path);
        goto done;
    }
    if (written)
        *written = n;
done:
    smf_delete(smf);
    free(order);
    return err;
}
