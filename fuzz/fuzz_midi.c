/* libFuzzer target for the MIDI file readers (apps/midi).
 *
 * Any input must either fail with a parse error whose message names the
 * input, or give k voices of steps that are rests or MIDI keys. Each input
 * is read twice: as 4 voices on the default grid and as 1 voice on a grid of
 * 1..8 ticks (picked by the input size). It is also read by the onsets
 * reader, whose segments must be ordered in time, cover the song, and list
 * sorted, distinct notes with labels below the number of voices, and by the
 * note-event reader, whose events must be in time order within the song,
 * with at least one note-on. Anything else aborts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "midi_file.h"
#include "midi_notes.h"
#include "midi_onsets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void require(int condition)
{
    if (!condition)
        abort();
}

static void read_once(const uint8_t *data, size_t size, int k, int grid)
{
    int *steps = NULL, n = 0;
    pn_midi_read_meta meta;
    pn_error_info info;
    pn_error err = pn_midi_read_voices_mem("input", data, size, k, grid, &steps, &n, &meta, &info);
    if (err != PN_OK) {
        require(steps == NULL);
        require(err == PN_ERR_PARSE || err == PN_ERR_NOMEM);
        require(strncmp(info.message, "input:", 6) == 0);
        return;
    }
    require(steps != NULL);
    require(n >= 1 && n <= PN_MIDI_MAX_STEPS);
    require(meta.grid_ticks >= 1 && meta.division >= 1);
    require(grid == 0 || meta.grid_ticks == grid);
    for (size_t i = 0; i < (size_t)k * (size_t)n; ++i)
        require(steps[i] == PN_MIDI_REST || (steps[i] >= 0 && steps[i] <= 127));
    free(steps);
}

static void read_onsets(const uint8_t *data, size_t size)
{
    pn_midi_onsets *o = NULL;
    pn_error_info info;
    pn_error err = pn_midi_read_onsets_mem("input", data, size, &o, &info);
    if (err != PN_OK) {
        require(o == NULL);
        require(err == PN_ERR_PARSE || err == PN_ERR_NOMEM);
        require(strncmp(info.message, "input:", 6) == 0);
        return;
    }
    require(o != NULL && o->num_segments >= 1 && o->num_voices >= 1);
    require((o->labels == PN_MIDI_UNLABELLED) == (o->num_voices == 1));
    int onsets = 0;
    int64_t notes = 0;
    for (int32_t i = 0; i < o->num_segments; ++i) {
        const pn_midi_segment *s = &o->segments[i];
        require(s->length >= 0 && s->tick >= 0 && s->count >= 0);
        require(s->count <= PN_MIDI_MAX_SOUNDING && s->first == notes);
        if (i + 1 < o->num_segments)
            require(s->tick < o->segments[i + 1].tick &&
                    s->tick + s->length == o->segments[i + 1].tick);
        else
            require(s->tick + s->length == (s->tick > o->length_ticks ? s->tick : o->length_ticks));
        for (int32_t j = 0; j < s->count; ++j) {
            const pn_midi_note *n = &o->notes[s->first + j];
            require(n->key >= 0 && n->key <= 127 && n->voice >= 0 && n->voice < o->num_voices);
            if (j > 0) {
                const pn_midi_note *m = &o->notes[s->first + j - 1];
                require(m->voice < n->voice || (m->voice == n->voice && m->key < n->key));
            }
        }
        onsets += s->onset != 0;
        notes += s->count;
    }
    require(onsets == o->num_onsets && onsets >= 1 && o->segments[0].onset);
    require(notes == o->num_notes);
    pn_midi_onsets_free(o);
}

static void read_notes(const uint8_t *data, size_t size)
{
    pn_midi_notes *notes = NULL;
    pn_error_info info;
    pn_error err = pn_midi_read_notes_mem("input", data, size, &notes, &info);
    if (err != PN_OK) {
        require(notes == NULL);
        require(err == PN_ERR_PARSE || err == PN_ERR_NOMEM);
        require(strncmp(info.message, "input:", 6) == 0);
        return;
    }
    require(notes != NULL && notes->division >= 1);
    require(notes->count >= 1 && notes->count <= PN_MIDI_MAX_NOTE_EVENTS);
    int ons = 0;
    for (int32_t i = 0; i < notes->count; ++i) {
        const pn_midi_note_event *e = &notes->events[i];
        require(e->tick >= 0 && e->tick <= notes->length_ticks);
        require(i == 0 || notes->events[i - 1].tick <= e->tick);
        require(e->channel < 16 && e->key < 128 && e->on <= 1);
        require(e->on ? e->velocity >= 1 && e->velocity <= 127 : e->velocity == 0);
        ons += e->on;
    }
    require(ons >= 1);
    pn_midi_notes_free(notes);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    read_notes(data, size);
    read_onsets(data, size);
    read_once(data, size, 4, 0);
    read_once(data, size, 1, 1 + (int)(size % 8));
    return 0;
}
