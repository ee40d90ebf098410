/* run(): one block. The ports' changes, the events of the control port
 * (the host's time:Position, patch messages, MIDI to harmonize) in time
 * order with the steps due between them (steps.c), the output ports, and
 * the notify port's patch:Set replies. Audio thread. */
#include <math.h>
#include <string.h>

#include <lv2/atom/util.h>

#include "plugin.h"

/* A number of any atom type hosts use for time:Position fields. */
static int atom_number(const pnp_urids *u, const LV2_Atom *a, double *out)
{
    if (!a)
        return 0;
    if (a->type == u->atom_Float && a->size >= sizeof(float))
        *out = ((const LV2_Atom_Float *)a)->body;
    else if (a->type == u->atom_Double && a->size >= sizeof(double))
        *out = ((const LV2_Atom_Double *)a)->body;
    else if (a->type == u->atom_Int && a->size >= sizeof(int32_t))
        *out = ((const LV2_Atom_Int *)a)->body;
    else if (a->type == u->atom_Long && a->size >= sizeof(int64_t))
        *out = (double)((const LV2_Atom_Long *)a)->body;
    else
        return 0;
    return isfinite(*out);
}

static void on_position(pnp_plugin *self, int64_t frame, const LV2_Atom_Object *obj)
{
    const pnp_urids *u = &self->uris;
    const LV2_Atom *bar = NULL, *bar_beat = NULL, *unit = NULL, *bpb = NULL, *bpm = NULL,
                   *host_frame = NULL, *speed = NULL;
    lv2_atom_object_get(obj, u->time_bar, &bar, u->time_barBeat, &bar_beat, u->time_beatUnit, &unit,
                        u->time_beatsPerBar, &bpb, u->time_beatsPerMinute, &bpm, u->time_frame,
                        &host_frame, u->time_speed, &speed, 0);
    pnp_position pos = {0};
    double v;
    if (atom_number(u, speed, &v)) {
        pos.speed = v;
        pos.has |= PNP_POS_SPEED;
    }
    if (atom_number(u, bpm, &v)) {
        pos.bpm = v;
        pos.has |= PNP_POS_BPM;
    }
    if (atom_number(u, bar, &v) && fabs(v) < 1e15) {
        pos.bar = (int64_t)floor(v);
        pos.has |= PNP_POS_BAR;
    }
    if (atom_number(u, bar_beat, &v)) {
        pos.bar_beat = v;
        pos.has |= PNP_POS_BAR_BEAT;
    }
    if (atom_number(u, bpb, &v)) {
        pos.beats_per_bar = v;
        pos.has |= PNP_POS_BEATS_PER_BAR;
    }
    if (atom_number(u, unit, &v) && v >= 1 && v <= 256) {
        pos.beat_unit = (int)v;
        pos.has |= PNP_POS_BEAT_UNIT;
    }
    if (atom_number(u, host_frame, &v) && fabs(v) < 9e15) {
        pos.frame = (int64_t)v;
        pos.has |= PNP_POS_FRAME;
    }
    const unsigned flags = pnp_clock_position(&self->clock, frame, &pos);
    if (flags & (PNP_CLOCK_STOPPED | PNP_CLOCK_JUMPED))
        pnp_panic(self, frame);
}

static void on_patch(pnp_plugin *self, const LV2_Atom_Object *obj)
{
    const pnp_urids *u = &self->uris;
    if (obj->body.otype == u->patch_Get) {
        self->want_notify = 1;
        return;
    }
    const LV2_Atom *property = NULL, *value = NULL;
    lv2_atom_object_get(obj, u->patch_property, &property, u->patch_value, &value, 0);
    if (!property || property->type != u->atom_URID ||
        ((const LV2_Atom_URID *)property)->body != u->pn_ruleSet || !value)
        return;
    if ((value->type != u->atom_Path && value->type != u->atom_String) || value->size < 2 ||
        value->size > PNP_MAX_PATH)
        return;
    const char *path = LV2_ATOM_BODY_CONST(value);
    if (path[value->size - 1] != '\0')
        return;
    memcpy(self->load_path, path, value->size);
    self->load_pending = 1;
}

static void on_midi(pnp_plugin *self, const uint8_t *msg, uint32_t size)
{
    if (size < 2)
        return;
    const uint8_t kind = msg[0] & 0xF0;
    if (kind == 0xB0 && (msg[1] == 123 || msg[1] == 120)) { /* all notes / sound off */
        self->num_held = 0;
        return;
    }
    if (size < 3 || (kind != 0x90 && kind != 0x80))
        return;
    const int pitch = msg[1] & 0x7F;
    for (int i = 0; i < self->num_held; ++i)
        if (self->held[i] == pitch) {
            memmove(&self->held[i], &self->held[i + 1],
                    (size_t)(self->num_held - i - 1) * sizeof self->held[0]);
            --self->num_held;
            break;
        }
    if (kind == 0x90 && msg[2] > 0) {
        const int cap = (int)(sizeof self->held / sizeof self->held[0]);
        if (self->num_held == cap) {
            memmove(&self->held[0], &self->held[1], (size_t)(cap - 1) * sizeof self->held[0]);
            --self->num_held;
        }
        self->held[self->num_held++] = pitch;
    }
}

/* Port changes at the start of a block. */
static void read_ports(pnp_plugin *self)
{
    float now[PNP_NUM_PORTS] = {0};
    for (int p = 0; p < PNP_NUM_PORTS; ++p)
        if (pnp_port_range((pnp_port)p))
            now[p] = pnp_port_value(self, (pnp_port)p);
#define CHANGED(p) (!(now[p] == self->last_port[p]) && !isnan(self->last_port[p]))
    int stop_notes = CHANGED(PNP_CHANNEL) || CHANGED(PNP_CHANNEL_PER_VOICE) ||
                     CHANGED(PNP_SOPRANO) || CHANGED(PNP_ALTO) || CHANGED(PNP_TENOR) ||
                     CHANGED(PNP_BASS) || CHANGED(PNP_INPUT_MODE);
    if (now[PNP_PANIC] > 0.5f && !(self->last_port[PNP_PANIC] > 0.5f))
        stop_notes = 1;
    if (CHANGED(PNP_SEED))
        pnp_reseed(self, now[PNP_SEED], 0);
    /* a key to harmonize decides the next step itself; new knobs are heard
     * after what was drawn ahead, trimmed to PNP_KNOB_AHEAD_SECONDS */
    if (CHANGED(PNP_INPUT_MODE))
        pnp_drop_ahead(self);
    else if (CHANGED(PNP_LOG2_LAMBDA_W) || CHANGED(PNP_ALPHA))
        pnp_trim_ahead(self); /* heard within PNP_KNOB_AHEAD_SECONDS */
    self->enabled = pnp_port_value(self, PNP_ENABLE) > 0.5f;
    if (!self->enabled)
        stop_notes = 1;
    const unsigned flags =
        pnp_clock_configure(&self->clock, self->block_start, pnp_port_int(self, PNP_SYNC),
                            pnp_port_value(self, PNP_BPM), pnp_port_int(self, PNP_DIVISION));
    if (flags & PNP_CLOCK_STOPPED)
        stop_notes = 1;
    if (stop_notes || self->panic_pending)
        pnp_panic(self, self->block_start);
#undef CHANGED
    memcpy(self->last_port, now, sizeof now);
}

static void write_outputs(pnp_plugin *self)
{
    const pnp_realization *r = self->live;
    float *out;
    if ((out = self->port[PNP_RULES_SELECTED]))
        *out = r ? (float)r->rules_selected : 0.0f;
    if ((out = self->port[PNP_WEIGHTED_ERROR]))
        *out = r ? (float)r->weighted_error : 0.0f;
    if ((out = self->port[PNP_SOLVE_MS]))
        *out = r ? (float)r->solve_ms : 0.0f;
    if ((out = self->port[PNP_SOLVER_BUSY]))
        *out = self->in_flight ? 1.0f : 0.0f;
    if ((out = self->port[PNP_LATE_STEPS]))
        *out = (float)self->late_steps;
}

/* patch:Set ruleSet <path> on the notify port (the built-in set: no path). */
static void notify_rule_set(pnp_plugin *self)
{
    self->want_notify = 0;
    if (!self->port[PNP_NOTIFY] || !self->live)
        return;
    const char *path = self->live->model->path;
    if (!path)
        path = "";
    const pnp_urids *u = &self->uris;
    LV2_Atom_Forge *f = &self->notify;
    LV2_Atom_Forge_Frame frame;
    if (!lv2_atom_forge_frame_time(f, 0) || !lv2_atom_forge_object(f, &frame, 0, u->patch_Set))
        return;
    lv2_atom_forge_key(f, u->patch_property);
    lv2_atom_forge_urid(f, u->pn_ruleSet);
    lv2_atom_forge_key(f, u->patch_value);
    lv2_atom_forge_path(f, path, (uint32_t)strlen(path));
    lv2_atom_forge_pop(f, &frame);
}

/* patch:Set selectedRules "<names>" on the notify port when the rules the
 * realization keeps change (and after patch:Get). */
static void notify_selection(pnp_plugin *self, int force)
{
    const pnp_realization *r = self->live;
    if (!self->port[PNP_NOTIFY] || !r)
        return;
    if (!force && self->reported_model == r->model && self->reported_mask == r->selected_mask)
        return;
    const pnp_urids *u = &self->uris;
    LV2_Atom_Forge *f = &self->notify;
    LV2_Atom_Forge_Frame frame;
    const uint32_t len = (uint32_t)strnlen(r->selected_names, sizeof r->selected_names);
    if (f->offset + 64 + len > f->size) /* no room this block: try again next one */
        return;
    if (!lv2_atom_forge_frame_time(f, 0) || !lv2_atom_forge_object(f, &frame, 0, u->patch_Set))
        return;
    lv2_atom_forge_key(f, u->patch_property);
    lv2_atom_forge_urid(f, u->pn_selectedRules);
    lv2_atom_forge_key(f, u->patch_value);
    lv2_atom_forge_string(f, r->selected_names, len);
    lv2_atom_forge_pop(f, &frame);
    self->reported_model = r->model;
    self->reported_mask = r->selected_mask;
}

static void start_sequence(LV2_Atom_Forge *forge, LV2_Atom_Forge_Frame *frame, void *port)
{
    LV2_Atom_Sequence *seq = port;
    const uint32_t capacity = seq->atom.size; /* the host tells the buffer size here */
    lv2_atom_forge_set_buffer(forge, (uint8_t *)seq, capacity);
    lv2_atom_forge_sequence_head(forge, frame, 0);
}

void pnp_run(LV2_Handle instance, uint32_t n_frames)
{
    pnp_plugin *self = (pnp_plugin *)instance;
    self->ran = 1;
    self->block_frames = n_frames;
    self->last_event = 0;
    self->drew_ahead = 0;
    LV2_Atom_Forge_Frame midi_frame, notify_frame;
    if (self->port[PNP_MIDI_OUT])
        start_sequence(&self->forge, &midi_frame, self->port[PNP_MIDI_OUT]);
    if (self->port[PNP_NOTIFY])
        start_sequence(&self->notify, &notify_frame, self->port[PNP_NOTIFY]);

    read_ports(self);
    /* answers that came between blocks, and new knobs: after the ports,
     * so that a knob's job asks for the context it trimmed back to */
    pnp_schedule_pending(self, self->block_start);
    const int asked = self->want_notify;
    if (self->want_notify)
        notify_rule_set(self);
    notify_selection(self, asked);

    const LV2_Atom_Sequence *in = self->port[PNP_CONTROL];
    if (in && in->atom.type == self->uris.atom_Sequence) {
        LV2_ATOM_SEQUENCE_FOREACH(in, ev)
        {
            int64_t at = ev->time.frames;
            if (at < 0)
                at = 0;
            if (at > (int64_t)n_frames)
                at = n_frames;
            pnp_play_until(self, self->block_start + at);
            const LV2_Atom *a = &ev->body;
            if (a->type == self->uris.midi_MidiEvent) {
                on_midi(self, LV2_ATOM_BODY_CONST(a), a->size);
            } else if (a->type == self->uris.atom_Object || a->type == self->uris.atom_Blank) {
                const LV2_Atom_Object *obj = (const LV2_Atom_Object *)a;
                if (a->size < sizeof(LV2_Atom_Object_Body))
                    continue;
                if (obj->body.otype == self->uris.time_Position)
                    on_position(self, self->block_start + at, obj);
                else if (obj->body.otype == self->uris.patch_Set ||
                         obj->body.otype == self->uris.patch_Get) {
                    on_patch(self, obj);
                    /* a rule set to load goes out now: a synchronous
                     * worker has it in place for a step at this frame */
                    pnp_schedule_pending(self, self->block_start + at);
                }
            }
        }
    }
    pnp_play_until(self, self->block_start + n_frames);
    /* the next sonority drawn ahead once the transport is known */
    pnp_advance(self, self->block_start + n_frames);
    if (self->want_notify)
        notify_rule_set(self);
    notify_selection(self, 0);
    write_outputs(self);
    if (self->port[PNP_MIDI_OUT])
        lv2_atom_forge_pop(&self->forge, &midi_frame);
    if (self->port[PNP_NOTIFY])
        lv2_atom_forge_pop(&self->notify, &notify_frame);
    self->block_start += n_frames;
}
