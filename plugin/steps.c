/* The steps: the sonorities drawn ahead or now, sounded at their frames
 * as notes on midi_out, and the seeds of their draws. Audio thread, except
 * pnp_reseed, which activate() calls too. */
#include <math.h>
#include <string.h>
#include <time.h>

#include <lv2/atom/util.h>

#include "plugin.h"

/* Seeds the generator from the seed port's value (held to 0 .. 2^24 - 1,
 * so the conversion is exact), or from the clock for 0. */
void pnp_reseed(pnp_plugin *self, float seed_port, int may_read_clock)
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
    pnp_restart_streams(self);
    pnp_drop_ahead(self); /* drawn with the old seed */
}

void pnp_restart_streams(pnp_plugin *self)
{
    pn_rng_seed(&self->rng, self->seed_used);
    pn_rng_seed(&self->humanize_rng, self->seed_used ^ 0x9e3779b97f4a7c15ull);
}

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

void pnp_panic(pnp_plugin *self, int64_t frame)
{
    pnp_notes_panic(&self->notes, write_midi, self, frame);
    self->panic_pending = self->notes.count > 0;
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

/* Steps of the clock's current length in `seconds` (a part step counts
 * as one when round_up): at least one, at most PNP_AHEAD_MAX. */
static int steps_within(const pnp_plugin *self, double seconds, int round_up)
{
    const double step_frames = pnp_clock_step_frames(&self->clock);
    if (!(step_frames > 0.0))
        return 1;
    const double x = seconds * self->rate / step_frames;
    const double steps = round_up ? ceil(x) : floor(x);
    return steps < 1.0 ? 1 : steps > PNP_AHEAD_MAX ? PNP_AHEAD_MAX : (int)steps;
}

/* How many sonorities may be drawn ahead at the current step length. */
static int ahead_depth(const pnp_plugin *self)
{
    return steps_within(self, PNP_AHEAD_SECONDS, 1);
}

void pnp_trim_ahead(pnp_plugin *self)
{
    const int keep = steps_within(self, PNP_KNOB_AHEAD_SECONDS, 0);
    if (self->num_ahead <= keep || !self->live)
        return;
    self->num_ahead = keep;
    set_context(self, &self->live->model->rules->space, self->ahead[keep - 1]);
}

int pnp_draw_ahead(pnp_plugin *self)
{
    const pnp_realization *r = self->live;
    /* a stopped transport draws ahead too: the steps after play are ready
     * before it is pressed. Harmonizing waits for the key held when the
     * step comes. */
    if (self->num_ahead >= ahead_depth(self) || !r || !self->enabled ||
        pnp_port_int(self, PNP_INPUT_MODE) != PNP_INPUT_OFF ||
        r->context_serial != self->context_serial)
        return 0;
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
        self->drew_ahead = 1; /* a draw now is the block's one draw */
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
    pnp_advance(self, t);
}

void pnp_advance(pnp_plugin *self, int64_t frame)
{
    /* One draw a block: one ahead, unless a step of the block drew its
     * own sonority now (nothing was drawn ahead for it). With a worker
     * thread the drawn context's realization comes in a later block
     * anyway; with a synchronous worker it is there at once, and one draw
     * a block keeps a block to one job's answer and one draw: the
     * look-ahead fills over the next blocks instead of in the first. */
    pnp_schedule_pending(self, frame);
    if (!self->drew_ahead && pnp_draw_ahead(self)) {
        self->drew_ahead = 1;
        pnp_schedule_pending(self, frame);
    }
}

/* Plays everything due before absolute frame `end`: note-offs and steps,
 * in time order. */
void pnp_play_until(pnp_plugin *self, int64_t end)
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
