/* The Standard MIDI File voice reader on libsmf (pn_midi_read_voices,
 * see midi_file.h): k voices from the tracks or channels that hold
 * notes, sampled on a grid of steps. */
#include "midi_file.h"

#include <stdlib.h>
#include <string.h>

#include <smf.h>

#include "midi_check.h"
#include "parnassus/file.h"

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
            int kind = pn_midi_note_kind(smf_track_get_event_by_number(track, j), &ch, &key);
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
            int kind = pn_midi_note_kind(ev, &ch, &key);
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
    smf_t *smf = NULL;
    pn_error err = pn_midi_load_smf(name, data, size, &smf, info);
    if (err != PN_OK)
        return err;
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
