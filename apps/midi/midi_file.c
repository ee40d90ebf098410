/* Standard MIDI File writer and reader on libsmf (see midi_file.h). */
#include "midi_file.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <smf.h>

#include "midi_check.h"
#include "parnassus/file.h"

/* Longest sequence the writer accepts: every delta time then fits the
 * 4-byte variable-length quantity of the file format. */
enum { MAX_TICKS = 0x0FFFFFFF };

struct pn_midi_writer {
    pn_midi_writer_settings s;
    int num_steps;
    int capacity;
    int *pitch;    /* num_steps x k, step-major */
    int *duration; /* num_steps */
    int *velocity; /* num_steps */
    long total_ticks;
    char error[PN_MESSAGE_SIZE];
};

void pn_midi_writer_settings_default(pn_midi_writer_settings *s)
{
    s->num_voices = 4;
    s->division = 480;
    s->tempo_bpm = 120.0;
    s->channel_mode = PN_MIDI_CHANNEL_PER_VOICE;
    s->base_channel = 0;
    s->tie_repeats = 0;
}

pn_error pn_midi_writer_new(const pn_midi_writer_settings *s, pn_midi_writer **out,
                            pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "midi writer: out is NULL");
    *out = NULL;
    pn_midi_writer_settings def;
    if (!s) {
        pn_midi_writer_settings_default(&def);
        s = &def;
    }
    if (s->num_voices < 1 || s->num_voices > PN_MIDI_MAX_VOICES)
        return pn_fail(info, PN_ERR_INVALID, "midi writer: num_voices %d not in 1..%d",
                       s->num_voices, PN_MIDI_MAX_VOICES);
    if (s->division < 1 || s->division > 32767)
        return pn_fail(info, PN_ERR_INVALID, "midi writer: division %d not in 1..32767",
                       s->division);
    if (!(s->tempo_bpm >= 4.0 && s->tempo_bpm <= 1000.0))
        return pn_fail(info, PN_ERR_INVALID, "midi writer: tempo %g bpm not in 4..1000",
                       s->tempo_bpm);
    if (s->channel_mode != PN_MIDI_CHANNEL_PER_VOICE && s->channel_mode != PN_MIDI_ONE_CHANNEL)
        return pn_fail(info, PN_ERR_INVALID, "midi writer: unknown channel mode %d",
                       (int)s->channel_mode);
    int last =
        s->base_channel + (s->channel_mode == PN_MIDI_CHANNEL_PER_VOICE ? s->num_voices - 1 : 0);
    if (s->base_channel < 0 || last > 15)
        return pn_fail(info, PN_ERR_INVALID, "midi writer: channels %d..%d (0-based) not in 0..15",
                       s->base_channel, last);
    pn_midi_writer *w = calloc(1, sizeof *w);
    if (!w)
        return pn_fail(info, PN_ERR_NOMEM, "midi writer: out of memory");
    w->s = *s;
    *out = w;
    return PN_OK;
}

void pn_midi_writer_free(pn_midi_writer *w)
{
    if (!w)
        return;
    free(w->pitch);
    free(w->duration);
    free(w->velocity);
    free(w);
}

static pn_error writer_fail(pn_midi_writer *w, pn_error code, const char *msg, int value)
{
    snprintf(w->error, sizeof w->error, "midi writer: step %d: %s (%d)", w->num_steps + 1, msg,
             value);
    return code;
}

static int grow(void *pp, size_t count, size_t elem)
{
    void *p = realloc(*(void **)pp, count * elem);
    if (!p)
        return 0;
    *(void **)pp = p;
    return 1;
}

pn_error pn_midi_add_sonority(pn_midi_writer *w, const int *pitches, int duration_ticks,
                              int velocity)
{
    if (!w)
        return PN_ERR_INVALID;
    int k = w->s.num_voices;
    if (!pitches)
        return writer_fail(w, PN_ERR_INVALID, "pitches is NULL", 0);
    for (int v = 0; v < k; ++v)
        if (pitches[v] != PN_MIDI_REST && (pitches[v] < 0 || pitches[v] > 127))
            return writer_fail(w, PN_ERR_INVALID, "pitch not in 0..127 nor a rest", pitches[v]);
    if (duration_ticks < 1)
        return writer_fail(w, PN_ERR_INVALID, "duration must be at least one tick", duration_ticks);
    if (velocity < 1 || velocity > 127)
        return writer_fail(w, PN_ERR_INVALID, "velocity not in 1..127", velocity);
    if (w->total_ticks + duration_ticks > MAX_TICKS)
        return writer_fail(w, PN_ERR_INVALID, "sequence longer than 0x0FFFFFFF ticks",
                           duration_ticks);
    if (w->num_steps == w->capacity) {
        if (w->capacity > INT_MAX / 2 / k)
            return writer_fail(w, PN_ERR_NOMEM, "too many steps", w->num_steps);
        int cap = w->capacity ? 2 * w->capacity : 64;
        if (!grow(&w->pitch, (size_t)cap * (size_t)k, sizeof *w->pitch) ||
            !grow(&w->duration, (size_t)cap, sizeof *w->duration) ||
            !grow(&w->velocity, (size_t)cap, sizeof *w->velocity))
            return writer_fail(w, PN_ERR_NOMEM, "out of memory", w->num_steps);
        w->capacity = cap;
    }
    memcpy(w->pitch + (size_t)w->num_steps * (size_t)k, pitches, (size_t)k * sizeof *pitches);
    w->duration[w->num_steps] = duration_ticks;
    w->velocity[w->num_steps] = velocity;
    w->num_steps++;
    w->total_ticks += duration_ticks;
    w->error[0] = '\0';
    return PN_OK;
}

const char *pn_midi_writer_error(const pn_midi_writer *w)
{
    return w ? w->error : "midi writer: NULL writer";
}

int pn_midi_writer_num_steps(const pn_midi_writer *w)
{
    return w ? w->num_steps : 0;
}

long pn_midi_writer_total_ticks(const pn_midi_writer *w)
{
    return w ? w->total_ticks : 0;
}

/* Adds an event made by libsmf (NULL when libsmf refused or ran out of
 * memory) at an absolute time. */
static int add_at(smf_track_t *track, smf_event_t *ev, int pulses)
{
    if (!ev)
        return 0;
    smf_track_add_event_pulses(track, ev, pulses);
    return 1;
}

static int add_meta(smf_track_t *track, unsigned char *bytes, int len, int pulses)
{
    return add_at(track, smf_event_new_from_pointer(bytes, len), pulses);
}

static int add_track_name(smf_track_t *track, const char *name)
{
    unsigned char bytes[3 + 32];
    size_t len = strlen(name);
    if (len > 32)
        len = 32;
    bytes[0] = 0xFF;
    bytes[1] = 0x03;
    bytes[2] = (unsigned char)len;
    memcpy(bytes + 3, name, len);
    return add_meta(track, bytes, 3 + (int)len, 0);
}

static int build_voice_track(const pn_midi_writer *w, smf_track_t *track, int v)
{
    static const char *const satb[4] = {"Soprano", "Alto", "Tenor", "Bass"};
    char name[32];
    if (w->s.num_voices == 4)
        snprintf(name, sizeof name, "%s", satb[v]);
    else
        snprintf(name, sizeof name, "Voice %d", v + 1);
    if (!add_track_name(track, name))
        return 0;

    int k = w->s.num_voices;
    int channel = w->s.base_channel + (w->s.channel_mode == PN_MIDI_CHANNEL_PER_VOICE ? v : 0);
    int t = 0;
    int sounding = PN_MIDI_REST;
    for (int s = 0; s < w->num_steps; ++s) {
        int p = w->pitch[(size_t)s * (size_t)k + (size_t)v];
        int hold = w->s.tie_repeats && p == sounding;
        if (sounding != PN_MIDI_REST && !hold) {
            if (!add_at(track, smf_event_new_from_bytes(0x80 | channel, sounding, 0), t))
                return 0;
            sounding = PN_MIDI_REST;
        }
        if (p != PN_MIDI_REST && !hold) {
            if (!add_at(track, smf_event_new_from_bytes(0x90 | channel, p, w->velocity[s]), t))
                return 0;
            sounding = p;
        }
        t += w->duration[s];
    }
    if (sounding != PN_MIDI_REST &&
        !add_at(track, smf_event_new_from_bytes(0x80 | channel, sounding, 0), t))
        return 0;
    return smf_track_add_eot_pulses(track, t) == 0;
}

static int build_tempo_track(const pn_midi_writer *w, smf_track_t *track)
{
    long us = lround(60e6 / w->s.tempo_bpm); /* 60000..15000000 < 2^24 */
    unsigned char tempo[6] = {
        0xFF, 0x51, 0x03, (unsigned char)(us >> 16), (unsigned char)(us >> 8), (unsigned char)us};
    /* 4/4, a click every quarter (24 MIDI clocks), 8 32nds per quarter. */
    unsigned char timesig[7] = {0xFF, 0x58, 0x04, 4, 2, 24, 8};
    return add_track_name(track, "Parnassus") && add_meta(track, tempo, 6, 0) &&
           add_meta(track, timesig, 7, 0) &&
           smf_track_add_eot_pulses(track, (int)w->total_ticks) == 0;
}

pn_error pn_midi_write(const pn_midi_writer *w, const char *path, pn_error_info *info)
{
    if (!w || !path)
        return pn_fail(info, PN_ERR_INVALID, "midi writer: NULL writer or path");
    /* Open it ourselves first for a clear message; libsmf only logs. */
    FILE *probe = fopen(path, "wb");
    if (!probe)
        return pn_fail(info, PN_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    fclose(probe);

    pn_error err = PN_OK;
    smf_t *smf = smf_new();
    if (!smf)
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", path);
    if (smf_set_format(smf, 1) != 0 || smf_set_ppqn(smf, w->s.division) != 0) {
        err = pn_fail(info, PN_ERR_INVALID, "%s: libsmf refused format 1, division %d", path,
                      w->s.division);
        goto done;
    }
    for (int i = 0; i <= w->s.num_voices; ++i) {
        smf_track_t *track = smf_track_new();
        if (!track) {
            err = pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", path);
            goto done;
        }
        smf_add_track(smf, track); /* owned by smf from here on */
        int ok = i == 0 ? build_tempo_track(w, track) : build_voice_track(w, track, i - 1);
        if (!ok) {
            err = pn_fail(info, PN_ERR_NOMEM, "%s: could not build track %d (out of memory?)", path,
                          i);
            goto done;
        }
    }
    if (smf_save(smf, path) != 0)
        err = pn_fail(info, PN_ERR_IO, "%s: libsmf could not write the file", path);
done:
    smf_delete(smf);
    return err;
}

/* ---------------------------------------------------------------- reader */

static unsigned be16(const unsigned char *p)
{
    return (unsigned)p[0] << 8 | p[1];
}

static unsigned long be32(const unsigned char *p)
{
    return (unsigned long)p[0] << 24 | (unsigned long)p[1] << 16 | (unsigned long)p[2] << 8 | p[3];
}

/* Reads a variable-length quantity of at most 4 bytes from d[*pos..end). */
static int read_vlq(const unsigned char *d, size_t end, size_t *pos, unsigned long *value)
{
    unsigned long v = 0;
    for (int i = 0; i < 4; ++i) {
        if (*pos >= end)
            return 0;
        unsigned char b = d[(*pos)++];
        v = v << 7 | (b & 0x7Fu);
        if (!(b & 0x80)) {
            *value = v;
            return 1;
        }
    }
    return 0;
}

/* Walks the events of the track chunk d[start..end) the way the file format
 * defines them. libsmf 1.3 aborts (assert) on several malformed event
 * streams, so it only ever sees tracks that pass this check: every event
 * inside the chunk, data bytes below 0x80, running status only after a
 * channel message, no System Common/Real-Time bytes or 0xF7 escapes, tempo,
 * time signature and end-of-track metas of their fixed lengths, an
 * end-of-track event, and a track no longer than 0x0FFFFFFF ticks. */
static pn_error check_track(const char *name, unsigned track, const unsigned char *d, size_t start,
                            size_t end, pn_error_info *info)
{
    size_t pos = start;
    unsigned running = 0;
    unsigned long ticks = 0;
    while (pos < end) {
        size_t at = pos;
        unsigned long delta;
        if (!read_vlq(d, end, &pos, &delta))
            goto bad;
        ticks += delta;
        if (ticks > MAX_TICKS)
            return pn_fail(info, PN_ERR_PARSE,
                           "%s: track %u is longer than 0x0FFFFFFF ticks (not supported)", name,
                           track);
        if (pos >= end)
            goto bad;
        unsigned status = d[pos];
        if (status & 0x80)
            pos++;
        else if (running)
            status = running;
        else
            goto bad;
        if (status < 0xF0) {
            unsigned data = (status & 0xE0) == 0xC0 ? 1 : 2; /* program, pressure: 1 */
            for (unsigned i = 0; i < data; ++i, ++pos)
                if (pos >= end || (d[pos] & 0x80))
                    goto bad;
            running = status;
        } else if (status == 0xF0) {
            unsigned long len;
            if (!read_vlq(d, end, &pos, &len) || len >= end - pos)
                goto bad;
            pos += len;
            running = 0;
        } else if (status == 0xFF) {
            unsigned long len;
            if (pos >= end)
                goto bad;
            unsigned type = d[pos++];
            if (!read_vlq(d, end, &pos, &len) || len > end - pos)
                goto bad;
            if ((type == 0x2F && len != 0) || (type == 0x51 && len != 3) ||
                (type == 0x58 && len != 4))
                goto bad;
            pos += len;
            running = 0;
            if (type == 0x2F)
                return PN_OK;
        } else {
            return pn_fail(info, PN_ERR_PARSE,
                           "%s: track %u: status byte 0x%02X at byte %zu is not supported", name,
                           track, status, at);
        }
        continue;
    bad:
        return pn_fail(info, PN_ERR_PARSE, "%s: track %u: malformed event at byte %zu", name, track,
                       at);
    }
    return pn_fail(info, PN_ERR_PARSE, "%s: track %u has no end-of-track event", name, track);
}

/* Checks the header chunk, the chunk framing and every track ourselves (see
 * check_track); shared with the onsets reader through midi_check.h. */
pn_error pn_midi_check_file(const char *name, const unsigned char *d, size_t size,
                            pn_error_info *info)
{
    if (size < 14 || memcmp(d, "MThd", 4) != 0)
        return pn_fail(info, PN_ERR_PARSE, "%s: not a Standard MIDI File (no MThd header)", name);
    unsigned long hlen = be32(d + 4);
    /* libsmf 1.3 accepts exactly 6 (and leaks when it refuses the header). */
    if (hlen != 6)
        return pn_fail(info, PN_ERR_PARSE, "%s: header chunk length %lu is not supported (only 6)",
                       name, hlen);
    unsigned format = be16(d + 8), ntracks = be16(d + 10), division = be16(d + 12);
    if (format > 1)
        return pn_fail(info, PN_ERR_PARSE, "%s: SMF format %u is not supported (only 0 and 1)",
                       name, format);
    if (ntracks == 0)
        return pn_fail(info, PN_ERR_PARSE, "%s: the file declares no tracks", name);
    if (format == 0 && ntracks != 1)
        return pn_fail(info, PN_ERR_PARSE, "%s: SMF format 0 with %u tracks (must be 1)", name,
                       ntracks);
    if (division & 0x8000)
        return pn_fail(info, PN_ERR_PARSE,
                       "%s: SMPTE time division is not supported (only ticks per quarter)", name);
    if (division == 0)
        return pn_fail(info, PN_ERR_PARSE, "%s: division of 0 ticks per quarter", name);
    size_t off = 8 + hlen;
    unsigned found = 0;
    while (off < size && found < ntracks) {
        if (size - off < 8)
            return pn_fail(info, PN_ERR_PARSE, "%s: truncated chunk header at byte %zu", name, off);
        unsigned long len = be32(d + off + 4);
        if (len > size - off - 8)
            return pn_fail(info, PN_ERR_PARSE,
                           "%s: truncated file: chunk at byte %zu needs %lu bytes, %zu left", name,
                           off, len, size - off - 8);
        /* libsmf counts every chunk after the header as a track. */
        if (memcmp(d + off, "MTrk", 4) != 0)
            return pn_fail(info, PN_ERR_PARSE, "%s: unexpected chunk at byte %zu (not MTrk)", name,
                           off);
        pn_error err = check_track(name, found + 1, d, off + 8, off + 8 + len, info);
        if (err != PN_OK)
            return err;
        found++;
        off += 8 + len;
    }
    if (found < ntracks)
        return pn_fail(info, PN_ERR_PARSE, "%s: truncated file: %u of %u tracks present", name,
                       found, ntracks);
    return PN_OK;
}

typedef struct note_event {
    int time;
    int seq;
    unsigned char voice;
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

/* Classifies a libsmf event: 1 note-on, 0 note-off, -1 anything else. */
static int note_kind(const smf_event_t *ev, int *channel, int *key)
{
    if (!ev || !ev->midi_buffer || ev->midi_buffer_length < 3)
        return -1;
    int status = ev->midi_buffer[0] & 0xF0;
    if (status != 0x80 && status != 0x90)
        return -1;
    *channel = ev->midi_buffer[0] & 0x0F;
    *key = ev->midi_buffer[1] & 0x7F;
    return status == 0x90 && ev->midi_buffer[2] != 0;
}

/* Which tracks and channels hold notes, and the voice each feeds (-1:
 * none). */
typedef struct voice_map {
    int ntracks;
    int *track_voice; /* 1..ntracks */
    int channel_voice[16];
    int channel_has[16];
    int tracks_with_notes, channels_with_notes;
    long total_events; /* note events of every track and channel */
} voice_map;

/* Pass 1: which tracks and channels hold notes. */
static void count_notes(smf_t *smf, voice_map *vm)
{
    for (int i = 1; i <= vm->ntracks; ++i) {
        smf_track_t *track = smf_get_track_by_number(smf, i);
        int has = 0;
        for (int j = 1; track && j <= track->number_of_events; ++j) {
            int ch, key;
            int kind = note_kind(smf_track_get_event_by_number(track, j), &ch, &key);
            if (kind >= 0)
                vm->total_events++;
            if (kind == 1) {
                has = 1;
                vm->channel_has[ch] = 1;
            }
        }
        vm->track_voice[i] = has ? vm->tracks_with_notes++ : -1;
    }
    for (int c = 0; c < 16; ++c)
        vm->channels_with_notes += vm->channel_has[c];
}

/* The voices: the first k tracks with notes, else the k lowest channels. */
static pn_error choose_voices(const char *name, int k, voice_map *vm, pn_midi_read_meta *m,
                              pn_error_info *info)
{
    if (vm->tracks_with_notes == 0)
        return pn_fail(info, PN_ERR_PARSE, "%s: the file holds no notes", name);
    if (vm->tracks_with_notes >= k) {
        m->source = PN_MIDI_VOICES_FROM_TRACKS;
        for (int i = 1; i <= vm->ntracks; ++i) {
            if (vm->track_voice[i] >= k)
                vm->track_voice[i] = -1;
            if (vm->track_voice[i] >= 0)
                m->voice_index[vm->track_voice[i]] = i;
        }
        return PN_OK;
    }
    if (vm->channels_with_notes >= k) {
        m->source = PN_MIDI_VOICES_FROM_CHANNELS;
        int next = 0;
        for (int c = 0; c < 16; ++c) {
            vm->channel_voice[c] = vm->channel_has[c] && next < k ? next++ : -1;
            if (vm->channel_voice[c] >= 0)
                m->voice_index[vm->channel_voice[c]] = c;
        }
        return PN_OK;
    }
    return pn_fail(info, PN_ERR_PARSE,
                   "%s: fewer voices than %d: %d track(s) and %d channel(s) hold notes", name, k,
                   vm->tracks_with_notes, vm->channels_with_notes);
}

/* Pass 2: the note events of the chosen voices into events (room for
 * every note event), in time order (file order among events at the same
 * tick); *n of them, the last at *last_time. */
static pn_error collect_events(const char *name, smf_t *smf, const voice_map *vm,
                               const pn_midi_read_meta *m, note_event *events, int *n,
                               int *last_time, pn_error_info *info)
{
    *n = 0;
    *last_time = 0;
    for (int i = 1; i <= vm->ntracks; ++i) {
        smf_track_t *track = smf_get_track_by_number(smf, i);
        for (int j = 1; track && j <= track->number_of_events; ++j) {
            const smf_event_t *ev = smf_track_get_event_by_number(track, j);
            int ch, key;
            int kind = note_kind(ev, &ch, &key);
            if (kind < 0)
                continue;
            int v = m->source == PN_MIDI_VOICES_FROM_TRACKS ? vm->track_voice[i]
                                                            : vm->channel_voice[ch];
            if (v < 0)
                continue;
            if (ev->time_pulses < 0)
                return pn_fail(info, PN_ERR_PARSE, "%s: track %d: event time out of range", name,
                               i);
            events[*n] = (note_event){ev->time_pulses, *n, (unsigned char)v, (unsigned char)key,
                                      (unsigned char)kind};
            if (ev->time_pulses > *last_time)
                *last_time = ev->time_pulses;
            ++*n;
        }
    }
    qsort(events, (size_t)*n, sizeof *events, cmp_note_event);
    return PN_OK;
}

/* The grid: division, step length, tempo and length into m; *count steps
 * cover the file (and its last note event). */
static pn_error plan_grid(const char *name, smf_t *smf, int grid_ticks, int last_time,
                          pn_midi_read_meta *m, long *count, pn_error_info *info)
{
    m->division = smf->ppqn;
    m->grid_ticks = grid_ticks > 0 ? grid_ticks : (smf->ppqn / 4 > 0 ? smf->ppqn / 4 : 1);
    smf_tempo_t *tempo = smf_get_tempo_by_pulses(smf, 0);
    m->tempo_us = tempo ? tempo->microseconds_per_quarter_note : 500000;
    int length = smf_get_length_pulses(smf);
    if (length < last_time)
        length = last_time;
    m->length_ticks = length;
    *count = length / m->grid_ticks + (length % m->grid_ticks != 0);
    if (*count < 1)
        *count = 1;
    if (*count > PN_MIDI_MAX_STEPS)
        return pn_fail(info, PN_ERR_PARSE,
                       "%s: too long: %d ticks make %ld steps of %d ticks (at most %d)", name,
                       length, *count, m->grid_ticks, PN_MIDI_MAX_STEPS);
    return PN_OK;
}

/* Sweep: stamp[v][key] = order of the note-on still sounding (0: off);
 * top[v] = the key struck last among those sounding, the pitch of voice v
 * at each step (out: k x count, voice-major). */
static pn_error sweep_steps(const char *name, const note_event *events, int n, int k, long count,
                            int grid_ticks, int *out, pn_error_info *info)
{
    static const int no_key = -1;
    long(*stamp)[128] = calloc((size_t)k, sizeof *stamp);
    int top[PN_MIDI_MAX_VOICES];
    if (!stamp)
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
    for (int v = 0; v < k; ++v)
        top[v] = no_key;
    long clock = 0;
    int e = 0;
    for (long s = 0; s < count; ++s) {
        long t = s * grid_ticks;
        for (; e < n && events[e].time <= t; ++e) {
            const note_event *ne = &events[e];
            long *st = stamp[ne->voice];
            if (ne->on) {
                st[ne->key] = ++clock;
                top[ne->voice] = ne->key;
            } else if (st[ne->key]) {
                st[ne->key] = 0;
                if (top[ne->voice] == ne->key) {
                    int best = no_key;
                    for (int key = 0; key < 128; ++key)
                        if (st[key] && (best == no_key || st[key] > st[best]))
                            best = key;
                    top[ne->voice] = best;
                }
            }
        }
        for (int v = 0; v < k; ++v)
            out[(size_t)v * (size_t)count + (size_t)s] = top[v] == no_key ? PN_MIDI_REST : top[v];
    }
    free(stamp);
    return PN_OK;
}

static pn_error read_smf(const char *name, smf_t *smf, int k, int grid_ticks, int **steps,
                         int *num_steps, pn_midi_read_meta *meta, pn_error_info *info)
{
    if (smf->ppqn <= 0)
        return pn_fail(info, PN_ERR_PARSE,
                       "%s: SMPTE time division is not supported (only ticks per quarter)", name);
    voice_map vm;
    memset(&vm, 0, sizeof vm);
    vm.ntracks = smf->number_of_tracks;
    vm.track_voice = malloc(((size_t)vm.ntracks + 1) * sizeof *vm.track_voice);
    if (!vm.track_voice)
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
    count_notes(smf, &vm);

    pn_midi_read_meta m;
    memset(&m, 0, sizeof m);
    note_event *events = NULL;
    int *out = NULL;
    int n = 0, last_time = 0;
    long count = 0;
    pn_error err = choose_voices(name, k, &vm, &m, info);
    if (err != PN_OK)
        goto done;
    events = malloc(((size_t)vm.total_events + 1) * sizeof *events);
    if (!events) {
        err = pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
        goto done;
    }
    if ((err = collect_events(name, smf, &vm, &m, events, &n, &last_time, info)) != PN_OK ||
        (err = plan_grid(name, smf, grid_ticks, last_time, &m, &count, info)) != PN_OK)
        goto done;
    out = malloc((size_t)k * (size_t)count * sizeof *out);
    if (!out) {
        err = pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
        goto done;
    }
    if ((err = sweep_steps(name, events, n, k, count, m.grid_ticks, out, info)) != PN_OK)
        goto done;
    *steps = out;
    out = NULL;
    *num_steps = (int)count;
    if (meta)
        *meta = m;
done:
    free(out);
    free(events);
    free(vm.track_voice);
    return err;
}

pn_error pn_midi_read_voices_mem(const char *name, const void *data, size_t size, int k,
                                 int grid_ticks, int **steps, int *num_steps,
                                 pn_midi_read_meta *meta, pn_error_info *info)
{
    if (!name)
        name = "(memory)";
    if (!steps || !num_steps || (!data && size))
        return pn_fail(info, PN_ERR_INVALID, "%s: NULL argument", name);
    *steps = NULL;
    *num_steps = 0;
    if (k < 1 || k > PN_MIDI_MAX_VOICES)
        return pn_fail(info, PN_ERR_INVALID, "%s: number of voices %d not in 1..%d", name, k,
                       PN_MIDI_MAX_VOICES);
    if (size > PN_FILE_MAX_BYTES) /* also keeps it within libsmf's int length */
        return pn_fail(info, PN_ERR_PARSE, "%s: larger than the limit of %zu MiB", name,
                       PN_FILE_MAX_BYTES >> 20);
    pn_error err = pn_midi_check_file(name, data, size, info);
    if (err != PN_OK)
        return err;
    /* libsmf reports what it rejects through GLib's log (stderr). */
    smf_t *smf = smf_load_from_memory(data, (int)size);
    if (!smf)
        return pn_fail(info, PN_ERR_PARSE, "%s: malformed MIDI file (libsmf could not parse it)",
                       name);
    err = read_smf(name, smf, k, grid_ticks, steps, num_steps, meta, info);
    smf_delete(smf);
    return err;
}

pn_error pn_midi_read_voices(const char *path, int k, int grid_ticks, int **steps, int *num_steps,
                             pn_midi_read_meta *meta, pn_error_info *info)
{
    if (!path || !steps || !num_steps)
        return pn_fail(info, PN_ERR_INVALID, "midi reader: NULL argument");
    *steps = NULL;
    *num_steps = 0;
    char *buf = NULL;
    size_t len = 0;
    pn_error err = pn_file_read(path, PN_FILE_MAX_BYTES, &buf, &len, info);
    if (err != PN_OK)
        return err;
    err = pn_midi_read_voices_mem(path, buf, len, k, grid_ticks, steps, num_steps, meta, info);
    free(buf);
    return err;
}
