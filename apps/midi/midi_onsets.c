/* The onsets reader (see midi_onsets.h), on libsmf like midi_read.c. */
#include "midi_onsets.h"

#include <stdlib.h>
#include <string.h>

#include <smf.h>

#include "midi_check.h"
#include "parnassus/file.h"

typedef struct note_event {
    int time;
    int seq;          /* order in the file, for events at the same tick */
    int32_t identity; /* which sounding note it starts or ends */
    int32_t voice;
    unsigned char key;
    unsigned char on;
} note_event;

static int cmp_note_event(const void *pa, const void *pb)
{
    const note_event *a = pa, *b = pb;
    if (a->time != b->time)
        return a->time < b->time ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

void pn_midi_onsets_free(pn_midi_onsets *o)
{
    if (!o)
        return;
    free(o->segments);
    free(o->notes);
    free(o);
}

/* The sweep over the sorted events. */
typedef struct sweep {
    const char *name;
    pn_error_info *info;
    pn_midi_onsets *o;
    unsigned char *on;    /* per identity: sounding (one bit each) */
    unsigned char *count; /* per (voice, key): sounding identities */
    pn_midi_note *cur;    /* sounding (voice, key), sorted */
    int num_cur;
    int64_t notes_capacity;
    int32_t segments_capacity;
} sweep;

static int cmp_note(const pn_midi_note *a, const pn_midi_note *b)
{
    if (a->voice != b->voice)
        return a->voice < b->voice ? -1 : 1;
    return (a->key > b->key) - (a->key < b->key);
}

/* Adds (+1) or removes (-1) one sounding identity of (voice, key); returns
 * 1 when the set of sounding (voice, key) changed, -1 when too many sound. */
static int change(sweep *w, int32_t voice, int key, int delta)
{
    unsigned char *c = &w->count[(size_t)voice * 128 + (size_t)key];
    const pn_midi_note n = {voice, key};
    int i = 0;
    while (i < w->num_cur && cmp_note(&w->cur[i], &n) < 0)
        ++i;
    if (delta > 0) {
        if ((*c)++ > 0)
            return 0;
        if (w->num_cur == PN_MIDI_MAX_SOUNDING)
            return -1;
        memmove(w->cur + i + 1, w->cur + i, (size_t)(w->num_cur - i) * sizeof *w->cur);
        w->cur[i] = n;
        w->num_cur++;
        return 1;
    }
    if (--(*c) > 0)
        return 0;
    memmove(w->cur + i, w->cur + i + 1, (size_t)(w->num_cur - i - 1) * sizeof *w->cur);
    w->num_cur--;
    return 1;
}

static pn_error emit(sweep *w, int tick, int onset)
{
    pn_midi_onsets *o = w->o;
    if (o->num_segments == PN_MIDI_MAX_SEGMENTS)
        return pn_fail(w->info, PN_ERR_PARSE, "%s: more than %d changes of the sounding notes",
                       w->name, PN_MIDI_MAX_SEGMENTS);
    if (o->num_notes + w->num_cur > PN_MIDI_MAX_SEGMENT_NOTES)
        return pn_fail(w->info, PN_ERR_PARSE, "%s: more than %d notes over all changes", w->name,
                       PN_MIDI_MAX_SEGMENT_NOTES);
    if (o->num_segments == w->segments_capacity) {
        const int32_t cap = w->segments_capacity ? 2 * w->segments_capacity : 256;
        pn_midi_segment *s = realloc(o->segments, (size_t)cap * sizeof *s);
        if (!s)
            return pn_fail(w->info, PN_ERR_NOMEM, "%s: out of memory", w->name);
        o->segments = s;
        w->segments_capacity = cap;
    }
    if (o->num_notes + w->num_cur > w->notes_capacity) {
        int64_t cap = w->notes_capacity ? 2 * w->notes_capacity : 1024;
        while (cap < o->num_notes + w->num_cur)
            cap *= 2;
        pn_midi_note *n = realloc(o->notes, (size_t)cap * sizeof *n);
        if (!n)
            return pn_fail(w->info, PN_ERR_NOMEM, "%s: out of memory", w->name);
        o->notes = n;
        w->notes_capacity = cap;
    }
    if (o->num_segments > 0) {
        pn_midi_segment *prev = &o->segments[o->num_segments - 1];
        prev->length = tick - prev->tick;
    }
    if (w->num_cur > 0)
        memcpy(o->notes + o->num_notes, w->cur, (size_t)w->num_cur * sizeof *w->cur);
    o->segments[o->num_segments++] =
        (pn_midi_segment){tick, 0, onset, (int32_t)o->num_notes, w->num_cur};
    o->num_notes += w->num_cur;
    o->num_onsets += onset;
    return PN_OK;
}

static pn_error run_sweep(sweep *w, const note_event *ev, int n, int length)
{
    for (int e = 0; e < n;) {
        const int tick = ev[e].time;
        int onset = 0, changed = 0;
        for (; e < n && ev[e].time == tick; ++e) {
            const note_event *x = &ev[e];
            unsigned char *byte = &w->on[x->identity >> 3];
            const unsigned char bit = (unsigned char)(1u << (x->identity & 7));
            int c = 0;
            if (x->on) {
                onset = 1;
                if (!(*byte & bit))
                    c = change(w, x->voice, x->key, +1);
                *byte |= bit;
            } else if (*byte & bit) {
                c = change(w, x->voice, x->key, -1);
                *byte &= (unsigned char)~bit;
            }
            if (c < 0)
                return pn_fail(w->info, PN_ERR_PARSE, "%s: more than %d notes sound at tick %d",
                               w->name, PN_MIDI_MAX_SOUNDING, tick);
            changed |= c;
        }
        if (onset || changed) {
            pn_error err = emit(w, tick, onset);
            if (err != PN_OK)
                return err;
        }
    }
    if (w->o->num_segments > 0) {
        pn_midi_segment *last = &w->o->segments[w->o->num_segments - 1];
        last->length = length > last->tick ? length - last->tick : 0;
    }
    return PN_OK;
}

static pn_error read_smf(const char *name, smf_t *smf, pn_midi_onsets *o, pn_error_info *info)
{
    if (smf->ppqn <= 0)
        return pn_fail(info, PN_ERR_PARSE,
                       "%s: SMPTE time division is not supported (only ticks per quarter)", name);
    const int ntracks = smf->number_of_tracks;
    int *track_rank = malloc(((size_t)ntracks + 1) * sizeof *track_rank);
    if (!track_rank)
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);

    /* Pass 1: the tracks and channels that hold notes. */
    int tracks_with_notes = 0, channel_has[16] = {0};
    long total_events = 0;
    for (int i = 1; i <= ntracks; ++i) {
        smf_track_t *track = smf_get_track_by_number(smf, i);
        int has = 0;
        for (int j = 1; track && j <= track->number_of_events; ++j) {
            int ch, key;
            const int kind = pn_midi_note_kind(smf_track_get_event_by_number(track, j), &ch, &key);
            total_events += kind >= 0;
            if (kind == 1)
                has = channel_has[ch] = 1;
        }
        track_rank[i] = has ? tracks_with_notes++ : -1;
    }
    int channels_with_notes = 0, channel_rank[16];
    for (int c = 0; c < 16; ++c)
        channel_rank[c] = channel_has[c] ? channels_with_notes++ : -1;

    pn_error err = PN_OK;
    note_event *ev = NULL;
    sweep w = {name, info, o, NULL, NULL, NULL, 0, 0, 0};
    if (tracks_with_notes == 0) {
        err = pn_fail(info, PN_ERR_PARSE, "%s: the file holds no notes", name);
        goto done;
    }
    o->labels = tracks_with_notes >= 2     ? PN_MIDI_LABELS_FROM_TRACKS
                : channels_with_notes >= 2 ? PN_MIDI_LABELS_FROM_CHANNELS
                                           : PN_MIDI_UNLABELLED;
    o->num_voices = o->labels == PN_MIDI_LABELS_FROM_TRACKS     ? tracks_with_notes
                    : o->labels == PN_MIDI_LABELS_FROM_CHANNELS ? channels_with_notes
                                                                : 1;
    o->division = smf->ppqn;

    /* Pass 2: the note events, with what they start or end. A sounding
     * note is a (track, channel, key) when voices come from tracks, else a
     * (channel, key). */
    const int by_track = o->labels == PN_MIDI_LABELS_FROM_TRACKS;
    const size_t identities = (size_t)(by_track ? tracks_with_notes : 1) * 16 * 128;
    ev = malloc(((size_t)total_events + 1) * sizeof *ev);
    w.on = calloc(identities / 8, 1);
    w.count = calloc((size_t)o->num_voices * 128, 1);
    w.cur = malloc(PN_MIDI_MAX_SOUNDING * sizeof *w.cur);
    if (!ev || !w.on || !w.count || !w.cur) {
        err = pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
        goto done;
    }
    int n = 0, last_time = 0;
    for (int i = 1; i <= ntracks; ++i) {
        smf_track_t *track = smf_get_track_by_number(smf, i);
        if (by_track && track_rank[i] < 0)
            continue;
        for (int j = 1; track && j <= track->number_of_events; ++j) {
            const smf_event_t *e = smf_track_get_event_by_number(track, j);
            int ch, key;
            const int kind = pn_midi_note_kind(e, &ch, &key);
            if (kind < 0)
                continue;
            if (e->time_pulses < 0) {
                err = pn_fail(info, PN_ERR_PARSE, "%s: track %d: event time out of range", name, i);
                goto done;
            }
            const int32_t voice = by_track                                    ? track_rank[i]
                                  : o->labels == PN_MIDI_LABELS_FROM_CHANNELS ? channel_rank[ch]
                                                                              : 0;
            /* a note-off on a channel that never sounds a note ends nothing */
            if (voice < 0)
                continue;
            const int32_t identity = ((by_track ? track_rank[i] : 0) * 16 + ch) * 128 + key;
            ev[n] = (note_event){e->time_pulses,     n, identity, voice, (unsigned char)key,
                                 (unsigned char)kind};
            if (e->time_pulses > last_time)
                last_time = e->time_pulses;
            n++;
        }
    }
    qsort(ev, (size_t)n, sizeof *ev, cmp_note_event);
    int length = smf_get_length_pulses(smf);
    o->length_ticks = length > last_time ? length : last_time;
    err = run_sweep(&w, ev, n, o->length_ticks);
done:
    free(w.on);
    free(w.count);
    free(w.cur);
    free(ev);
    free(track_rank);
    return err;
}

pn_error pn_midi_read_onsets_mem(const char *name, const void *data, size_t size,
                                 pn_midi_onsets **out, pn_error_info *info)
{
    if (!name)
        name = "(memory)";
    if (!out || (!data && size))
        return pn_fail(info, PN_ERR_INVALID, "%s: NULL argument", name);
    *out = NULL;
    smf_t *smf = NULL;
    pn_error err = pn_midi_load_smf(name, data, size, &smf, info);
    if (err != PN_OK)
        return err;
    pn_midi_onsets *o = calloc(1, sizeof *o);
    err = o ? read_smf(name, smf, o, info) : pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
    smf_delete(smf);
    if (err != PN_OK) {
        pn_midi_onsets_free(o);
        return err;
    }
    *out = o;
    return PN_OK;
}

pn_error pn_midi_read_onsets(const char *path, pn_midi_onsets **out, pn_error_info *info)
{
    if (!path || !out)
        return pn_fail(info, PN_ERR_INVALID, "midi reader: NULL argument");
    *out = NULL;
    char *buf = NULL;
    size_t len = 0;
    pn_error err = pn_file_read(path, PN_FILE_MAX_BYTES, &buf, &len, info);
    if (err != PN_OK)
        return err;
    err = pn_midi_read_onsets_mem(path, buf, len, out, info);
    free(buf);
    return err;
}
