/* parnassus.lv2: rule-realized four-voice sonorities, in time with the
 * host (docs/plugin.md). This file is the audio side: instantiate, the
 * ports, run() with its event loop, and the descriptor. The solver runs in
 * the LV2 Worker (worker.c); state is in state.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lv2/atom/util.h>
#include <lv2/midi/midi.h>
#include <lv2/patch/patch.h>
#include <lv2/state/state.h>
#include <lv2/time/time.h>

#include "default_rules.h"
#include "plugin.h"
#include "uris.h"

/* ---- set-up (main thread) ---- */

static void map_urids(LV2_URID_Map *map, pnp_urids *u)
{
    u->atom_Blank = map->map(map->handle, LV2_ATOM__Blank);
    u->atom_Object = map->map(map->handle, LV2_ATOM__Object);
    u->atom_Sequence = map->map(map->handle, LV2_ATOM__Sequence);
    u->atom_Path = map->map(map->handle, LV2_ATOM__Path);
    u->atom_String = map->map(map->handle, LV2_ATOM__String);
    u->atom_Float = map->map(map->handle, LV2_ATOM__Float);
    u->atom_Double = map->map(map->handle, LV2_ATOM__Double);
    u->atom_Int = map->map(map->handle, LV2_ATOM__Int);
    u->atom_Long = map->map(map->handle, LV2_ATOM__Long);
    u->atom_Bool = map->map(map->handle, LV2_ATOM__Bool);
    u->atom_URID = map->map(map->handle, LV2_ATOM__URID);
    u->midi_MidiEvent = map->map(map->handle, LV2_MIDI__MidiEvent);
    u->time_Position = map->map(map->handle, LV2_TIME__Position);
    u->time_bar = map->map(map->handle, LV2_TIME__bar);
    u->time_barBeat = map->map(map->handle, LV2_TIME__barBeat);
    u->time_beatUnit = map->map(map->handle, LV2_TIME__beatUnit);
    u->time_beatsPerBar = map->map(map->handle, LV2_TIME__beatsPerBar);
    u->time_beatsPerMinute = map->map(map->handle, LV2_TIME__beatsPerMinute);
    u->time_frame = map->map(map->handle, LV2_TIME__frame);
    u->time_speed = map->map(map->handle, LV2_TIME__speed);
    u->patch_Set = map->map(map->handle, LV2_PATCH__Set);
    u->patch_Get = map->map(map->handle, LV2_PATCH__Get);
    u->patch_property = map->map(map->handle, LV2_PATCH__property);
    u->patch_value = map->map(map->handle, LV2_PATCH__value);
    u->pn_ruleSet = map->map(map->handle, PNP__ruleSet);
    u->pn_ruleSetText = map->map(map->handle, PNP__ruleSetText);
    u->pn_seedUsed = map->map(map->handle, PNP__seedUsed);
    u->pn_selectedRules = map->map(map->handle, PNP__selectedRules);
}

static void cleanup(LV2_Handle instance);

static LV2_Handle instantiate(const LV2_Descriptor *descriptor, double rate, const char *bundle_path,
                              const LV2_Feature *const *features)
{
    (void)descriptor;
    (void)bundle_path;
    pnp_plugin *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    LV2_Log_Log *log = NULL;
    for (int i = 0; features && features[i]; ++i) {
        if (!strcmp(features[i]->URI, LV2_URID__map))
            self->map = features[i]->data;
        else if (!strcmp(features[i]->URI, LV2_WORKER__schedule))
            self->schedule = features[i]->data;
        else if (!strcmp(features[i]->URI, LV2_LOG__log))
            log = features[i]->data;
    }
    lv2_log_logger_init(&self->logger, self->map, log);
    if (!self->map || !self->schedule) {
        lv2_log_error(&self->logger, "parnassus: the host lacks %s\n",
                      !self->map ? LV2_URID__map : LV2_WORKER__schedule);
        free(self);
        return NULL;
    }
    map_urids(self->map, &self->uris);
    lv2_atom_forge_init(&self->forge, self->map);
    lv2_atom_forge_init(&self->notify, self->map);
    self->rate = rate;
    pnp_clock_init(&self->clock, rate);
    pnp_notes_init(&self->notes);
    atomic_init(&self->restored, NULL);
    for (int p = 0; p < PNP_NUM_PORTS; ++p)
        self->last_port[p] = NAN;
    self->seed_used = 1;
    pn_rng_seed(&self->rng, self->seed_used);
    self->enabled = 1;

    /* the first realization exists before the first run(); its knobs are
     * the ports' defaults read as run() reads them (no port is connected
     * yet), so that a host's default values need no second solve */
    const pnp_knobs knobs = pnp_port_knobs(self);
    pn_error_info info = {0};
    pnp_model *model = NULL;
    if (pnp_model_create("built-in rule set (chorale-major)", pnp_default_rules,
                         (size_t)pnp_default_rules_size, NULL, &knobs, &model, &info) != PN_OK) {
        lv2_log_error(&self->logger, "parnassus: %s\n", info.message);
        cleanup(self);
        return NULL;
    }
    self->worker_model = model;
    self->live = pnp_model_current(model);
    return self;
}

static void connect_port(LV2_Handle instance, uint32_t port, void *data)
{
    pnp_plugin *self = (pnp_plugin *)instance;
    if (port < PNP_NUM_PORTS)
        self->port[port] = data;
}

/* Seeds the generator from the seed port's value (held to 0 .. 2^24 - 1,
 * so the conversion is exact), or from the clock for 0. */
static void reseed(pnp_plugin *self, float seed_port, int may_read_clock)
{
    uint64_t seed = seed_port >= 1.0f ? (uint64_t)seed_port : 0;
    if (!seed) {
        if (may_read_clock) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            seed = (uint64_t)ts.tv_sec * 1000000007ull ^ (uint64_t)ts.tv_nsec;
        } else {
            seed = pn_rng_next(&self->rng);
        }
    }
    self->seed_used = seed;
    pn_rng_seed(&self->rng, seed);
    pn_rng_seed(&self->humanize_rng, seed ^ 0x9e3779b97f4a7c15ull);
    pnp_drop_ahead(self); /* drawn with the old seed */
}

static void activate(LV2_Handle instance)
{
    pnp_plugin *self = (pnp_plugin *)instance;
    /* notes of an earlier activation end at the first block */
    self->panic_pending = self->notes.count > 0;
    self->block_start = 0;
    pnp_clock_reset(&self->clock, 0);
    self->last_port[PNP_SEED] = pnp_port_value(self, PNP_SEED);
    reseed(self, self->last_port[PNP_SEED], 1);
    self->has_context = 0;
    self->context_serial = 0;
    self->num_ahead = 0;
    self->has_sounded = 0;
    self->step_frames = 0.0;
    self->num_held = 0;
}

static void deactivate(LV2_Handle instance)
{
    (void)instance;
}

static void cleanup(LV2_Handle instance)
{
    pnp_plugin *self = (pnp_plugin *)instance;
    /* every model the instance still knows, each freed once */
    pnp_model *all[8];
    int n = 0;
    pnp_model *candidates[8] = {self->worker_model,
                                self->live ? self->live->model : NULL,
                                atomic_exchange(&self->restored, NULL)};
    int c = 3;
    for (int i = 0; i < self->num_retired && c < 8; ++i)
        candidates[c++] = self->retired[i];
    for (int i = 0; i < c; ++i) {
        int seen = !candidates[i];
        for (int j = 0; j < n && !seen; ++j)
            seen = all[j] == candidates[i];
        if (!seen)
            all[n++] = candidates[i];
    }
    for (int i = 0; i < n; ++i)
        pnp_model_free(all[i]);
    free(self);
}

/* ---- the audio thread ---- */

/* pnp_midi_sink: one MIDI event into midi_out at an absolute frame. Events
 * never go back in time and stay inside the block; 0 when full. */
static int write_midi(void *ctx, int64_t frame, const uint8_t *msg, uint32_t size)
{
    pnp_plugin *self = ctx;
    if (!self->port[PNP_MIDI_OUT])
        return 1; /* nowhere to go: count it as sent */
    int64_t offset = frame - self->block_start;
    if (offset < self->last_event)
        offset = self->last_event;
    if (offset >= (int64_t)self->block_frames)
        offset = self->block_frames ? (int64_t)self->block_frames - 1 : 0;
    LV2_Atom_Forge *forge = &self->forge;
    const uint32_t need = (uint32_t)(sizeof(LV2_Atom_Event) + lv2_atom_pad_size(size));
    if (forge->offset + need > forge->size)
        return 0;
    if (!lv2_atom_forge_frame_time(forge, offset) ||
        !lv2_atom_forge_atom(forge, size, self->uris.midi_MidiEvent) ||
        !lv2_atom_forge_write(forge, msg, size))
        return 0;
    self->last_event = offset;
    return 1;
}

static void panic(pnp_plugin *self, int64_t frame)
{
    pnp_notes_panic(&self->notes, write_midi, self, frame);
}

/* The transposition from the rule set's key (C) to the output. */
static int transpose(const pnp_plugin *self)
{
    const int key = pnp_port_int(self, PNP_KEY);
    const int octave = pnp_port_int(self, PNP_OCTAVE);
    return (key <= 6 ? key : key - 12) + 12 * octave;
}

/* The toggles soprano .. bass, in voice order (voice 0 = soprano). */
static int voice_sounds(const pnp_plugin *self, int voice)
{
    return pnp_port_value(self, (pnp_port)(PNP_SOPRANO + voice)) > 0.5f;
}

/* The played note, moved by octaves into the voice's range of the rule
 * set (in the rule set's key); -1 without one. */
static int played_pitch(const pnp_plugin *self, const pn_space *space, int voice)
{
    if (self->num_held == 0)
        return -1;
    int p = self->held[self->num_held - 1] - transpose(self);
    while (p > space->high[voice] && p - 12 >= 0)
        p -= 12;
    while (p < space->low[voice] && p + 12 <= 127)
        p += 12;
    return p;
}

static int velocity(pnp_plugin *self)
{
    const int base = pnp_port_int(self, PNP_VELOCITY);
    const int spread = pnp_port_int(self, PNP_HUMANIZE);
    int v = base;
    if (spread > 0)
        v += (int)(pn_rng_next(&self->humanize_rng) % (uint64_t)(2 * spread + 1)) - spread;
    return v < 1 ? 1 : v > 127 ? 127 : v;
}

/* Makes a drawn sonority the context the worker realizes next. Pitches
 * outside a voice's range (a played note that would not fit) count as
 * rests. */
static void set_context(pnp_plugin *self, const pn_space *space, const int *pitch)
{
    for (int v = 0; v < space->num_voices; ++v)
        self->context[v] =
            pitch[v] >= space->low[v] && pitch[v] <= space->high[v] ? pitch[v] : PN_REST;
    self->has_context = 1;
    self->context_serial = ++self->serial_counter;
}

void pnp_drop_ahead(pnp_plugin *self)
{
    if (self->num_ahead == 0)
        return;
    self->num_ahead = 0;
    if (self->has_sounded && self->live) {
        set_context(self, &self->live->model->rules->space, self->sounded);
    } else {
        self->has_context = 0;
        self->context_serial = ++self->serial_counter;
    }
}

/* How many sonorities may be drawn ahead at the current step length. */
static int ahead_depth(const pnp_plugin *self)
{
    if (!(self->step_frames > 0.0))
        return 1;
    const double steps = ceil(PNP_AHEAD_SECONDS * self->rate / self->step_frames);
    return steps < 1.0 ? 1 : steps > PNP_AHEAD_MAX ? PNP_AHEAD_MAX : (int)steps;
}

int pnp_draw_ahead(pnp_plugin *self)
{
    const pnp_realization *r = self->live;
    if (self->num_ahead >= ahead_depth(self) || !r || !self->enabled ||
        !pnp_clock_rolling(&self->clock) || pnp_port_int(self, PNP_INPUT_MODE) != PNP_INPUT_OFF ||
        r->context_serial != self->context_serial)
        return 0; /* harmonizing waits for the key held when the step comes */
    int pitch[PNP_MAX_VOICES];
    if (!pnp_realization_draw(r, &self->rng, -1, -1, pitch))
        return 0;
    set_context(self, &r->model->rules->space, pitch);
    memcpy(self->ahead[self->num_ahead++], self->context, sizeof self->ahead[0]);
    return 1;
}

/* 1 when r is a realization of the current context (the knobs it was
 * solved for may be older): what the next sonority may be drawn from. */
static int realizes_context(const pnp_plugin *self, const pnp_realization *r, int k)
{
    if (r->context_serial == self->context_serial)
        return 1;
    if (!r->has_context || !self->has_context)
        return r->has_context == self->has_context;
    return memcmp(r->context, self->context, (size_t)k * sizeof *r->context) == 0;
}

/* The sonority of the step when nothing was drawn ahead: drawn now from
 * the live realization when it realizes the current context (or, while
 * harmonizing, given the key held); otherwise the worker is late and the
 * last sonority sounds again, so that the music never continues from a
 * sonority it did not play. Returns 0 for silence. */
static int draw_now(pnp_plugin *self, const pnp_realization *r, int mode, int *pitch)
{
    const pn_space *space = &r->model->rules->space;
    const int k = space->num_voices;
    int fixed_voice = -1, fixed_pitch = -1;
    if (mode != PNP_INPUT_OFF) {
        if (self->num_held == 0)
            return 0; /* harmonizing: silent while no key is held */
        fixed_voice = mode == PNP_INPUT_SOPRANO ? 0 : k - 1;
        fixed_pitch = played_pitch(self, space, fixed_voice);
        if (r->context_serial != self->context_serial)
            ++self->late_steps; /* the key decides now: the newest realization we have */
    } else if (!realizes_context(self, r, k)) {
        ++self->late_steps;
        if (self->has_sounded) {
            memcpy(pitch, self->sounded, (size_t)k * sizeof *pitch);
            return 1; /* held: the worker finishes its context meanwhile */
        }
    }
    if (!pnp_realization_draw(r, &self->rng, fixed_voice, fixed_pitch, pitch))
        return 0;
    set_context(self, space, pitch);
    memcpy(self->sounded, self->context, sizeof self->sounded);
    self->has_sounded = 1;
    return 1;
}

/* One step at absolute frame t: sound the sonority drawn ahead (or draw
 * one now), then draw the next ones ahead as their contexts are realized;
 * the worker is asked to realize each new context. */
static void step(pnp_plugin *self, int64_t t)
{
    const double step_frames = pnp_clock_take_step(&self->clock);
    self->step_frames = step_frames;
    const pnp_realization *r = self->live;
    if (!r || !self->enabled)
        return;
    const pn_space *space = &r->model->rules->space;
    const int k = space->num_voices;
    const int mode = pnp_port_int(self, PNP_INPUT_MODE);
    int pitch[PNP_MAX_VOICES];
    if (mode == PNP_INPUT_OFF && self->num_ahead > 0) {
        for (int v = 0; v < k; ++v)
            pitch[v] = self->ahead[0][v];
        memcpy(self->sounded, self->ahead[0], sizeof self->sounded);
        self->has_sounded = 1;
        --self->num_ahead;
        memmove(self->ahead[0], self->ahead[1], (size_t)self->num_ahead * sizeof self->ahead[0]);
    } else {
        pnp_drop_ahead(self); /* harmonizing: the key held decides, after what sounded */
        if (!draw_now(self, r, mode, pitch))
            return;
    }

    const int shift = transpose(self);
    const int channel = pnp_port_int(self, PNP_CHANNEL) - 1;
    const int per_voice = pnp_port_value(self, PNP_CHANNEL_PER_VOICE) > 0.5f;
    const double gate = pnp_port_int(self, PNP_GATE) / 100.0;
    int64_t length = (int64_t)llround(step_frames * gate);
    if (length < 1)
        length = 1;
    int started[PNP_MAX_VOICES], num_started = 0; /* (channel << 7 | key) this step */
    for (int v = 0; v < k; ++v) {
        if (pitch[v] < 0 || !voice_sounds(self, v))
            continue;
        const int note = pitch[v] + shift;
        if (note < 0 || note > 127)
            continue;
        const int ch = per_voice ? (channel + v) % 16 : channel;
        int unison = 0; /* two voices on one key of one channel sound as one note */
        for (int i = 0; i < num_started; ++i)
            unison |= started[i] == (ch << 7 | note);
        if (unison)
            continue;
        started[num_started++] = ch << 7 | note;
        const int sounding = pnp_notes_find(&self->notes, ch, note);
        if (gate >= 1.0 && sounding >= 0) /* legato: a repeated note is tied */
            pnp_notes_extend(&self->notes, sounding, t + length);
        else
            pnp_notes_on(&self->notes, write_midi, self, t, ch, note, velocity(self), t + length);
    }
    pnp_advance(self);
}

void pnp_advance(pnp_plugin *self)
{
    /* with a synchronous worker a job completes inside the scheduling, so
     * a draw ahead can follow at once (bounded: PNP_AHEAD_MAX at most) */
    for (int pass = 0; pass <= PNP_AHEAD_MAX; ++pass) {
        pnp_schedule_pending(self);
        if (!pnp_draw_ahead(self))
            break;
    }
    pnp_schedule_pending(self);
}

/* Plays everything due before absolute frame `end`: note-offs and steps,
 * in time order. */
static void play_until(pnp_plugin *self, int64_t end)
{
    int64_t cursor = self->block_start + self->last_event;
    for (int guard = 0; guard < 100000; ++guard) {
        const int64_t next_step =
            self->enabled ? pnp_clock_next_step_frame(&self->clock, cursor) : INT64_MAX;
        const int64_t next_off = pnp_notes_next_off(&self->notes);
        const int64_t t = next_step < next_off ? next_step : next_off;
        if (t >= end)
            return;
        const int before = self->notes.count;
        /* a step first, so a tie can extend a note due at the same frame */
        if (next_step == t)
            step(self, t);
        pnp_notes_due(&self->notes, write_midi, self, t, t);
        if (next_step != t && self->notes.count == before)
            return; /* the output is full: the rest goes out next block */
        cursor = t;
    }
}

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
    lv2_atom_object_get(obj, u->time_bar, &bar, u->time_barBeat, &bar_beat, u->time_beatUnit,
                        &unit, u->time_beatsPerBar, &bpb, u->time_beatsPerMinute, &bpm,
                        u->time_frame, &host_frame, u->time_speed, &speed, 0);
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
        panic(self, frame);
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
        reseed(self, now[PNP_SEED], 0);
    /* a key to harmonize decides the next step itself (new knobs are heard
     * after what was drawn ahead: at most PNP_AHEAD_SECONDS) */
    if (CHANGED(PNP_INPUT_MODE))
        pnp_drop_ahead(self);
    self->enabled = pnp_port_value(self, PNP_ENABLE) > 0.5f;
    if (!self->enabled)
        stop_notes = 1;
    const unsigned flags =
        pnp_clock_configure(&self->clock, self->block_start, pnp_port_int(self, PNP_SYNC),
                            pnp_port_value(self, PNP_BPM), pnp_port_int(self, PNP_DIVISION));
    if (flags & PNP_CLOCK_STOPPED)
        stop_notes = 1;
    if (stop_notes || self->panic_pending) {
        panic(self, self->block_start);
        self->panic_pending = self->notes.count > 0; /* what did not fit goes next block */
    }
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

static void run(LV2_Handle instance, uint32_t n_frames)
{
    pnp_plugin *self = (pnp_plugin *)instance;
    self->ran = 1;
    self->block_frames = n_frames;
    self->last_event = 0;
    LV2_Atom_Forge_Frame midi_frame, notify_frame;
    if (self->port[PNP_MIDI_OUT])
        start_sequence(&self->forge, &midi_frame, self->port[PNP_MIDI_OUT]);
    if (self->port[PNP_NOTIFY])
        start_sequence(&self->notify, &notify_frame, self->port[PNP_NOTIFY]);

    pnp_schedule_pending(self); /* answers that came between blocks */
    read_ports(self);
    pnp_schedule_pending(self); /* new knobs */
    const int asked = self->want_notify;
    if (self->want_notify)
        notify_rule_set(self);
    notify_selection(self, asked);

    const LV2_Atom_Sequence *in = self->port[PNP_CONTROL];
    if (in && in->atom.type == self->uris.atom_Sequence) {
        LV2_ATOM_SEQUENCE_FOREACH (in, ev) {
            int64_t at = ev->time.frames;
            if (at < 0)
                at = 0;
            if (at > (int64_t)n_frames)
                at = n_frames;
            play_until(self, self->block_start + at);
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
                         obj->body.otype == self->uris.patch_Get)
                    on_patch(self, obj);
            }
        }
    }
    play_until(self, self->block_start + n_frames);
    pnp_advance(self); /* the next sonority drawn ahead once the transport is known */
    if (self->want_notify)
        notify_rule_set(self);
    notify_selection(self, 0);
    if (self->panic_pending && self->notes.count == 0)
        self->panic_pending = 0;
    write_outputs(self);
    if (self->port[PNP_MIDI_OUT])
        lv2_atom_forge_pop(&self->forge, &midi_frame);
    if (self->port[PNP_NOTIFY])
        lv2_atom_forge_pop(&self->notify, &notify_frame);
    self->block_start += n_frames;
}

static const void *extension_data(const char *uri)
{
    static const LV2_Worker_Interface worker = {pnp_work, pnp_work_response, NULL};
    if (!strcmp(uri, LV2_WORKER__interface))
        return &worker;
    if (!strcmp(uri, LV2_STATE__interface))
        return pnp_state_interface();
    return NULL;
}

static const LV2_Descriptor descriptor = {
    PNP_URI, instantiate, connect_port, activate, run, deactivate, cleanup, extension_data,
};

LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index)
{
    return index == 0 ? &descriptor : NULL;
}
