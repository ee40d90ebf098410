/* Standard MIDI File writer on libsmf (see midi_file.h). The reader is
 * midi_read.c, the check it runs first midi_check.c. */
#include "midi_file.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <smf.h>

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

pn_error pn_midi_writer_create(const pn_midi_writer_settings *s, pn_midi_writer **out,
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

static pn_error writer_fail(const pn_midi_writer *w, pn_error_info *info, pn_error code,
                            const char *msg, int value)
{
    return pn_fail(info, code, "midi writer: step %d: %s (%d)", w->num_steps + 1, msg, value);
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
                              int velocity, pn_error_info *info)
{
    if (!w)
        return pn_fail(info, PN_ERR_INVALID, "midi writer: NULL writer");
    int k = w->s.num_voices;
    if (!pitches)
        return writer_fail(w, info, PN_ERR_INVALID, "pitches is NULL", 0);
    for (int v = 0; v < k; ++v)
        if (pitches[v] != PN_MIDI_REST && (pitches[v] < 0 || pitches[v] > 127))
            return writer_fail(w, info, PN_ERR_INVALID, "pitch not in 0..127 nor a rest",
                               pitches[v]);
    if (duration_ticks < 1)
        return writer_fail(w, info, PN_ERR_INVALID, "duration must be at least one tick",
                           duration_ticks);
    if (velocity < 1 || velocity > 127)
        return writer_fail(w, info, PN_ERR_INVALID, "velocity not in 1..127", velocity);
    if (w->total_ticks + duration_ticks > MAX_TICKS)
        return writer_fail(w, info, PN_ERR_INVALID, "sequence longer than 0x0FFFFFFF ticks",
                           duration_ticks);
    if (w->num_steps == w->capacity) {
        if (w->capacity > INT_MAX / 2 / k)
            return writer_fail(w, info, PN_ERR_NOMEM, "too many steps", w->num_steps);
        int cap = w->capacity ? 2 * w->capacity : 64;
        if (!grow(&w->pitch, (size_t)cap * (size_t)k, sizeof *w->pitch) ||
            !grow(&w->duration, (size_t)cap, sizeof *w->duration) ||
            !grow(&w->velocity, (size_t)cap, sizeof *w->velocity))
            return writer_fail(w, info, PN_ERR_NOMEM, "out of memory", w->num_steps);
        w->capacity = cap;
    }
    memcpy(w->pitch + (size_t)w->num_steps * (size_t)k, pitches, (size_t)k * sizeof *pitches);
    w->duration[w->num_steps] = duration_ticks;
    w->velocity[w->num_steps] = velocity;
    w->num_steps++;
    w->total_ticks += duration_ticks;
    return PN_OK;
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
