/* Input events: the queue the caller fills between blocks, the host's
 * transport, and the forging of both into the control input sequence at
 * the start of each block. Queued events are forged as atoms into
 * queue_buf when queued, so the audio thread only copies bytes. */
#include "host_internal.h"

#include <math.h>
#include <string.h>

#include <lv2/midi/midi.h>

static pn_error no_input(const pnh_host *h, pn_error_info *info)
{
    return pn_fail(info, PN_ERR_INVALID, "lv2 host: plugin <%s> has no atom input port",
                   h->plugin_uri);
}

/* Starts forging one queued event; returns 0 if there is no room. */
static int begin(pnh_host *h, int64_t frame, pn_error_info *info)
{
    if (h->control_in < 0) {
        no_input(h, info);
        return 0;
    }
    if (frame < 0) {
        pn_fail(info, PN_ERR_INVALID, "lv2 host: event frame %lld is negative", (long long)frame);
        return 0;
    }
    if (h->num_queued == PNH_MAX_QUEUED) {
        pn_fail(info, PN_ERR_INVALID, "lv2 host: more than %d events queued", PNH_MAX_QUEUED);
        return 0;
    }
    lv2_atom_forge_set_buffer(&h->queue_forge, h->queue_buf + h->queue_used,
                              h->s.atom_capacity - h->queue_used);
    return 1;
}

/* Finishes it: ok is 0 if any forge call ran out of room. */
static pn_error commit(pnh_host *h, int64_t frame, int ok, pn_error_info *info)
{
    if (!ok)
        return pn_fail(info, PN_ERR_INVALID,
                       "lv2 host: the event queue is full (%zu bytes); run a block first",
                       h->s.atom_capacity);
    pnh_queued *q = &h->queued[h->num_queued++];
    q->frame = frame;
    q->offset = h->queue_used;
    q->seq = h->queue_seq++;
    h->queue_used += h->queue_forge.offset;
    return PN_OK;
}

pn_error pnh_queue_midi(pnh_host *h, int64_t frame, const uint8_t *bytes, uint32_t size,
                        pn_error_info *info)
{
    if (!bytes || size == 0)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: empty MIDI event");
    if (!begin(h, frame, info))
        return info ? info->code : PN_ERR_INVALID;
    LV2_Atom_Forge *f = &h->queue_forge;
    int ok = lv2_atom_forge_atom(f, size, h->u.midi_MidiEvent) != 0;
    ok = ok && lv2_atom_forge_write(f, bytes, size) != 0;
    return commit(h, frame, ok, info);
}

/* Writes the fields of pos as a time:Position object. */
static int forge_position(pnh_host *h, LV2_Atom_Forge *f, const pnh_position *pos)
{
    LV2_Atom_Forge_Frame fr;
    unsigned m = pos->fields;
    int ok = lv2_atom_forge_object(f, &fr, 0, h->u.time_Position) != 0;
    if (ok && (m & PNH_POS_FRAME))
        ok = lv2_atom_forge_key(f, h->u.time_frame) && lv2_atom_forge_long(f, pos->frame);
    if (ok && (m & PNH_POS_SPEED))
        ok = lv2_atom_forge_key(f, h->u.time_speed) && lv2_atom_forge_float(f, pos->speed);
    if (ok && (m & PNH_POS_BAR))
        ok = lv2_atom_forge_key(f, h->u.time_bar) && lv2_atom_forge_long(f, pos->bar);
    if (ok && (m & PNH_POS_BAR_BEAT))
        ok = lv2_atom_forge_key(f, h->u.time_barBeat) && lv2_atom_forge_float(f, pos->bar_beat);
    if (ok && (m & PNH_POS_BEAT))
        ok = lv2_atom_forge_key(f, h->u.time_beat) && lv2_atom_forge_double(f, pos->beat);
    if (ok && (m & PNH_POS_BEAT_UNIT))
        ok = lv2_atom_forge_key(f, h->u.time_beatUnit) && lv2_atom_forge_int(f, pos->beat_unit);
    if (ok && (m & PNH_POS_BEATS_PER_BAR))
        ok = lv2_atom_forge_key(f, h->u.time_beatsPerBar) &&
             lv2_atom_forge_float(f, pos->beats_per_bar);
    if (ok && (m & PNH_POS_BPM))
        ok = lv2_atom_forge_key(f, h->u.time_beatsPerMinute) && lv2_atom_forge_float(f, pos->bpm);
    lv2_atom_forge_pop(f, &fr);
    return ok;
}

pn_error pnh_queue_position(pnh_host *h, int64_t frame, const pnh_position *pos,
                            pn_error_info *info)
{
    if (!pos)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: position is NULL");
    if (!begin(h, frame, info))
        return info ? info->code : PN_ERR_INVALID;
    return commit(h, frame, forge_position(h, &h->queue_forge, pos), info);
}

pn_error pnh_queue_patch_set_path(pnh_host *h, int64_t frame, const char *property_uri,
                                  const char *path, pn_error_info *info)
{
    if (!property_uri || !path)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: patch:Set needs a property and a path");
    LV2_URID prop = pnh_map(h, property_uri);
    if (!begin(h, frame, info))
        return info ? info->code : PN_ERR_INVALID;
    LV2_Atom_Forge *f = &h->queue_forge;
    LV2_Atom_Forge_Frame fr;
    int ok = lv2_atom_forge_object(f, &fr, 0, h->u.patch_Set) != 0;
    ok = ok && lv2_atom_forge_key(f, h->u.patch_property) && lv2_atom_forge_urid(f, prop);
    ok = ok && lv2_atom_forge_key(f, h->u.patch_value) &&
         lv2_atom_forge_path(f, path, (uint32_t)strlen(path));
    lv2_atom_forge_pop(f, &fr);
    return commit(h, frame, ok, info);
}

pn_error pnh_queue_patch_get(pnh_host *h, int64_t frame, const char *property_uri,
                             pn_error_info *info)
{
    LV2_URID prop = property_uri ? pnh_map(h, property_uri) : 0;
    if (!begin(h, frame, info))
        return info ? info->code : PN_ERR_INVALID;
    LV2_Atom_Forge *f = &h->queue_forge;
    LV2_Atom_Forge_Frame fr;
    int ok = lv2_atom_forge_object(f, &fr, 0, h->u.patch_Get) != 0;
    if (ok && prop)
        ok = lv2_atom_forge_key(f, h->u.patch_property) && lv2_atom_forge_urid(f, prop);
    lv2_atom_forge_pop(f, &fr);
    return commit(h, frame, ok, info);
}

pn_error pnh_queue_atom(pnh_host *h, int64_t frame, const LV2_Atom *atom, pn_error_info *info)
{
    if (!atom)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: atom is NULL");
    if (!begin(h, frame, info))
        return info ? info->code : PN_ERR_INVALID;
    int ok = lv2_atom_forge_write(&h->queue_forge, atom, (uint32_t)sizeof *atom + atom->size) != 0;
    return commit(h, frame, ok, info);
}

void pnh_clear_queue(pnh_host *h)
{
    h->num_queued = 0;
    h->queue_used = 0;
}

/* ---- transport ---- */

void pnh_transport_default(pnh_transport *t)
{
    t->bpm = 120.0;
    t->beats_per_bar = 4.0;
    t->beat_unit = 4;
    t->rolling = 1;
    t->every_block = 0;
}

pn_error pnh_set_transport(pnh_host *h, const pnh_transport *t, pn_error_info *info)
{
    if (!t) {
        h->transport_on = 0;
        return PN_OK;
    }
    if (!(t->bpm > 0.0 && t->bpm < 10000.0) ||
        !(t->beats_per_bar > 0.0 && t->beats_per_bar < 1000.0) || t->beat_unit < 1 ||
        t->beat_unit > 256)
        return pn_fail(info, PN_ERR_INVALID,
                       "lv2 host: transport %g bpm, %g beats per bar, beat unit %d out of range",
                       t->bpm, t->beats_per_bar, t->beat_unit);
    if (h->control_in < 0)
        return no_input(h, info);
    if (!h->transport_on || t->bpm != h->transport.bpm ||
        t->beats_per_bar != h->transport.beats_per_bar || t->beat_unit != h->transport.beat_unit ||
        !t->rolling != !h->transport.rolling)
        h->transport_dirty = 1;
    h->transport = *t;
    h->transport_on = 1;
    return PN_OK;
}

void pnh_transport_locate(pnh_host *h, int64_t frame)
{
    h->transport_frame = frame;
    h->transport_beats = (double)frame * h->transport.bpm / (60.0 * h->s.sample_rate);
    h->transport_dirty = 1;
}

double pnh_transport_beat(const pnh_host *h)
{
    return h->transport_beats;
}

void pnh_transport_advance(pnh_host *h, uint32_t nframes)
{
    h->transport_dirty = 0;
    if (!h->transport_on || !h->transport.rolling)
        return;
    h->transport_frame += nframes;
    h->transport_beats += (double)nframes * h->transport.bpm / (60.0 * h->s.sample_rate);
}

static void transport_position(const pnh_host *h, pnh_position *p)
{
    const pnh_transport *t = &h->transport;
    double bar = floor(h->transport_beats / t->beats_per_bar);
    p->fields = PNH_POS_ALL;
    p->frame = h->transport_frame;
    p->speed = t->rolling ? 1.0f : 0.0f;
    p->bar = (int64_t)bar;
    p->bar_beat = (float)(h->transport_beats - bar * t->beats_per_bar);
    p->beat = h->transport_beats;
    p->beat_unit = t->beat_unit;
    p->beats_per_bar = (float)t->beats_per_bar;
    p->bpm = (float)t->bpm;
}

/* ---- forging a block's input (audio thread: no allocation) ---- */

void pnh_forge_input(pnh_host *h, uint32_t nframes)
{
    if (h->control_in < 0)
        return;
    LV2_Atom_Forge *f = &h->forge;
    lv2_atom_forge_set_buffer(f, h->ports[h->control_in].buf, h->s.atom_capacity);
    LV2_Atom_Forge_Frame seq;
    lv2_atom_forge_sequence_head(f, &seq, 0);
    if (h->transport_on && (h->transport_dirty || h->transport.every_block)) {
        pnh_position p;
        transport_position(h, &p);
        if (lv2_atom_forge_frame_time(f, 0))
            forge_position(h, f, &p);
    }
    /* Insertion sort of the due events by (frame, queue order): a handful
     * per block. */
    int due[PNH_MAX_QUEUED];
    int nd = 0;
    for (int i = 0; i < h->num_queued; ++i) {
        if (h->queued[i].frame >= (int64_t)nframes)
            continue;
        int j = nd++;
        while (j > 0) {
            const pnh_queued *a = &h->queued[due[j - 1]], *b = &h->queued[i];
            if (a->frame < b->frame || (a->frame == b->frame && a->seq < b->seq))
                break;
            due[j] = due[j - 1];
            --j;
        }
        due[j] = i;
    }
    for (int k = 0; k < nd; ++k) {
        const pnh_queued *q = &h->queued[due[k]];
        const LV2_Atom *atom = (const LV2_Atom *)(h->queue_buf + q->offset);
        if (!lv2_atom_forge_frame_time(f, q->frame) ||
            !lv2_atom_forge_write(f, atom, (uint32_t)sizeof *atom + atom->size))
            break; /* the port buffer is full: the rest is dropped */
    }
    lv2_atom_forge_pop(f, &seq);

    /* Keep the later events, moved to the front, their frames now counted
     * from the next block. Offsets grow with the queue order, so memmove
     * towards the front never overwrites an atom still to be moved. */
    int kept = 0;
    size_t used = 0;
    for (int i = 0; i < h->num_queued; ++i) {
        pnh_queued q = h->queued[i];
        if (q.frame < (int64_t)nframes)
            continue;
        const LV2_Atom *atom = (const LV2_Atom *)(h->queue_buf + q.offset);
        size_t len = lv2_atom_pad_size((uint32_t)sizeof *atom + atom->size);
        memmove(h->queue_buf + used, h->queue_buf + q.offset, len);
        q.offset = used;
        q.frame -= nframes;
        used += len;
        h->queued[kept++] = q;
    }
    h->num_queued = kept;
    h->queue_used = used;
}
