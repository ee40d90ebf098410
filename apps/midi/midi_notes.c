/* The note events of a Standard MIDI File in time order (midi_notes.h). */
#include "midi_notes.h"

#include <stdlib.h>

#include <smf.h>

#include "midi_check.h"
#include "parnassus/file.h"

/* Orders by tick, then by position in the file (seq). */
typedef struct ordered {
    pn_midi_note_event event;
    int32_t seq;
} ordered;

static int cmp_ordered(const void *pa, const void *pb)
{
    const ordered *a = pa, *b = pb;
    if (a->event.tick != b->event.tick)
        return a->event.tick < b->event.tick ? -1 : 1;
    return (a->seq > b->seq) - (a->seq < b->seq);
}

void pn_midi_notes_free(pn_midi_notes *notes)
{
    if (!notes)
        return;
    free(notes->events);
    free(notes);
}

static pn_error read_smf(const char *name, smf_t *smf, pn_midi_notes *out, pn_error_info *info)
{
    if (smf->ppqn <= 0)
        return pn_fail(info, PN_ERR_PARSE,
                       "%s: SMPTE time division is not supported (only ticks per quarter)", name);
    long total = 0, ons = 0;
    for (int i = 1; i <= smf->number_of_tracks; ++i) {
        smf_track_t *track = smf_get_track_by_number(smf, i);
        for (int j = 1; track && j <= track->number_of_events; ++j) {
            int ch, key;
            const int kind = pn_midi_note_kind(smf_track_get_event_by_number(track, j), &ch, &key);
            total += kind >= 0;
            ons += kind == 1;
        }
    }
    if (ons == 0)
        return pn_fail(info, PN_ERR_PARSE, "%s: the file holds no notes", name);
    if (total > PN_MIDI_MAX_NOTE_EVENTS)
        return pn_fail(info, PN_ERR_PARSE, "%s: more than %d note events", name,
                       PN_MIDI_MAX_NOTE_EVENTS);
    ordered *ev = malloc((size_t)total * sizeof *ev);
    if (!ev)
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
    int32_t n = 0, last = 0;
    for (int i = 1; i <= smf->number_of_tracks; ++i) {
        smf_track_t *track = smf_get_track_by_number(smf, i);
        for (int j = 1; track && j <= track->number_of_events; ++j) {
            const smf_event_t *e = smf_track_get_event_by_number(track, j);
            int ch, key;
            const int kind = pn_midi_note_kind(e, &ch, &key);
            if (kind < 0)
                continue;
            if (e->time_pulses < 0) {
                free(ev);
                return pn_fail(info, PN_ERR_PARSE, "%s: track %d: event time out of range", name,
                               i);
            }
            const uint8_t velocity = kind == 1 ? (uint8_t)(e->midi_buffer[2] & 0x7F) : 0;
            ev[n].event = (pn_midi_note_event){e->time_pulses, (uint8_t)ch, (uint8_t)key,
                                               (uint8_t)kind, velocity};
            ev[n].seq = n;
            if (e->time_pulses > last)
                last = e->time_pulses;
            n++;
        }
    }
    qsort(ev, (size_t)n, sizeof *ev, cmp_ordered);
    out->events = malloc((size_t)n * sizeof *out->events);
    if (!out->events) {
        free(ev);
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
    }
    for (int32_t i = 0; i < n; ++i)
        out->events[i] = ev[i].event;
    free(ev);
    out->count = n;
    out->division = smf->ppqn;
    const int length = smf_get_length_pulses(smf);
    out->length_ticks = length > last ? length : last;
    return PN_OK;
}

pn_error pn_midi_read_notes_mem(const char *name, const void *data, size_t size,
                                pn_midi_notes **out, pn_error_info *info)
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
    pn_midi_notes *notes = calloc(1, sizeof *notes);
    err = notes ? read_smf(name, smf, notes, info)
                : pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
    smf_delete(smf);
    if (err != PN_OK) {
        pn_midi_notes_free(notes);
        return err;
    }
    *out = notes;
    return PN_OK;
}

pn_error pn_midi_read_notes(const char *path, pn_midi_notes **out, pn_error_info *info)
{
    if (!path || !out)
        return pn_fail(info, PN_ERR_INVALID, "midi reader: NULL argument");
    *out = NULL;
    char *buf = NULL;
    size_t len = 0;
    pn_error err = pn_file_read(path, PN_FILE_MAX_BYTES, &buf, &len, info);
    if (err != PN_OK)
        return err;
    err = pn_midi_read_notes_mem(path, buf, len, out, info);
    free(buf);
    return err;
}
