/* The plugin under a host that sends anything (apps/lv2host on lilv):
 * every input control port NaN, +-inf and +-1e30, time:Position fields
 * likewise. The plugin holds every value to the port's Turtle range (NaN
 * and infinities to the default; the Turtle's ranges are written from the
 * plugin's own table, checked here through lilv), so the music stays
 * bounded: no more steps than the fastest tempo of the Turtle and the
 * finest division allow, a bounded number of worker jobs, in-range
 * outputs, every note ended, and run() still never allocates or locks.
 * And the ends of a take in every sync mode: the host's last block
 * (pnh_run_last) and a deactivation end every sounding note. All cases
 * share one instance (each is a fresh activation) playing the pedagogical
 * rule set: instantiating realizes the built-in set, which takes long
 * under the sanitizers. The bundle comes from PNP_BUNDLE_DIR. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lv2/atom/forge.h>
#include <lv2/midi/midi.h>
#include <lv2/time/time.h>

#include "clock.h"
#include "lv2host.h"
#include "ports.h"
#include "rt_guard.h"
#include "uris.h"

enum { RATE = 48000, BLOCK = 128, MAX_EVENTS = 1 << 16 };

static const float hostile[] = {NAN, INFINITY, -INFINITY, 1e30f, -1e30f};
enum { NUM_HOSTILE = sizeof hostile / sizeof hostile[0] };

/* ---- capture ---- */

typedef struct midi_ev {
    int64_t frame; /* from the start of the capture */
    uint8_t msg[3];
} midi_ev;

typedef struct capture {
    LV2_URID midi;
    int64_t base;
    midi_ev ev[MAX_EVENTS];
    int count;
} capture;

static capture cap; /* large: not on the stack */

static void on_event(void *user, const pnh_event *ev)
{
    capture *c = user;
    if (ev->type != c->midi || ev->size < 3 || c->count >= MAX_EVENTS)
        return;
    midi_ev *e = &c->ev[c->count++];
    e->frame = ev->abs_frame - c->base;
    memcpy(e->msg, ev->body, 3);
}

static int is_on(const midi_ev *e)
{
    return (e->msg[0] & 0xF0) == 0x90 && e->msg[2] > 0;
}

static int is_off(const midi_ev *e)
{
    return (e->msg[0] & 0xF0) == 0x80 || ((e->msg[0] & 0xF0) == 0x90 && e->msg[2] == 0);
}

/* Notes sounding after the first n events. */
static int sounding_after(const capture *c, int n)
{
    int s = 0;
    for (int i = 0; i < n; ++i)
        s += is_on(&c->ev[i]) - is_off(&c->ev[i]);
    return s;
}

/* Steps that sounded: the distinct frames of note-ons. */
static int count_steps(const capture *c)
{
    int steps = 0;
    int64_t last = -1;
    for (int i = 0; i < c->count; ++i)
        if (is_on(&c->ev[i]) && c->ev[i].frame != last) {
            ++steps;
            last = c->ev[i].frame;
        }
    return steps;
}

/* Every note-on has its note-off later (per channel and key), nothing is
 * switched on twice, nothing sounds at the end, events in time order. */
static void assert_balanced(const capture *c)
{
    static int sounding[16][128];
    memset(sounding, 0, sizeof sounding);
    assert_true(c->count < MAX_EVENTS);
    for (int i = 0; i < c->count; ++i) {
        const midi_ev *e = &c->ev[i];
        const int ch = e->msg[0] & 15, key = e->msg[1];
        if (i > 0)
            assert_true(e->frame >= c->ev[i - 1].frame);
        if (is_on(e)) {
            if (sounding[ch][key])
                fail_msg("channel %d key %d on twice (frame %lld)", ch + 1, key,
                         (long long)e->frame);
            sounding[ch][key] = 1;
        } else if (is_off(e)) {
            sounding[ch][key] = 0;
        }
    }
    for (int ch = 0; ch < 16; ++ch)
        for (int key = 0; key < 128; ++key)
            if (sounding[ch][key])
                fail_msg("channel %d key %d still sounds", ch + 1, key);
}

/* ---- the host ---- */

static pnh_host *host;
static int64_t capture_frames; /* frames run since capture_start */

static void capture_start(pnh_host *h)
{
    cap.midi = pnh_map(h, LV2_MIDI__MidiEvent);
    cap.base = pnh_frames(h);
    cap.count = 0;
    capture_frames = 0;
}

static void run_frames(pnh_host *h, int64_t frames)
{
    pn_error_info info = {0};
    capture_frames += frames;
    while (frames > 0) {
        const uint32_t n = frames < BLOCK ? (uint32_t)frames : BLOCK;
        assert_true(pnh_run(h, n, on_event, &cap, &info) >= 0);
        frames -= n;
    }
}

static void run_last(pnh_host *h)
{
    pn_error_info info = {0};
    capture_frames += BLOCK;
    assert_true(pnh_run_last(h, BLOCK, on_event, &cap, &info) >= 0);
}

static void set_at(pnh_host *h, int port, float value)
{
    pn_error_info info = {0};
    if (pnh_set_control_at(h, port, value, &info) != PN_OK)
        fail_msg("%s", info.message);
}

static void set(pnh_host *h, const char *symbol, float value)
{
    set_at(h, pnh_port_index(h, symbol), value);
}

static uint64_t jobs(const pnh_host *h)
{
    pnh_worker_stats ws;
    pnh_worker_stats_get(h, &ws);
    return ws.scheduled;
}

/* Holds key 72 from the next block: with input_mode 1 every step sounds. */
static void hold_key(pnh_host *h)
{
    static const uint8_t key_down[3] = {0x90, 72, 100};
    pn_error_info info = {0};
    assert_int_equal(pnh_queue_midi(h, 0, key_down, 3, &info), PN_OK);
}

static void roll_transport(pnh_host *h, int every_block)
{
    pnh_transport t;
    pnh_transport_default(&t);
    t.every_block = every_block;
    pn_error_info info = {0};
    assert_int_equal(pnh_set_transport(h, &t, &info), PN_OK);
}

/* A fresh activation with every control at its Turtle default, no
 * transport, nothing queued. A first block, not captured, ends the notes
 * of the case before and starts none (pnh_run_last). */
static void fresh(pnh_host *h)
{
    pnh_deactivate(h);
    pnh_clear_queue(h);
    assert_int_equal(pnh_set_transport(h, NULL, NULL), PN_OK);
    pnh_transport_locate(h, 0);
    for (uint32_t p = 0; p < pnh_num_ports(h); ++p) {
        float def;
        if (pnp_port_range((pnp_port)p) &&
            pnh_control_range(h, pnh_port_symbol(h, p), &def, NULL, NULL))
            set_at(h, (int)p, def);
    }
    /* the tests read the steps from the note-ons: at the default gate
     * (100 %) a voice that keeps its pitch is tied, and a step that
     * repeats every voice would strike nothing */
    set(h, "gate", 90);
    pn_error_info info = {0};
    assert_int_equal(pnh_activate(h, &info), PN_OK);
    assert_true(pnh_run_last(h, BLOCK, NULL, NULL, &info) >= 0);
    capture_start(h);
    rt_guard_reset();
}

static void assert_no_audio_calls(void)
{
    if (RT_GUARD_WORKS && rt_guard_count() != 0)
        fail_msg("%ld calls on the audio thread, the first %s", rt_guard_count(), rt_guard_first());
}

/* The shortest step there can be, in frames: the finest division of the
 * Turtle's range at the Turtle's fastest tempo (quarter notes a minute). */
static double min_step_frames(const pnh_host *h)
{
    float def, lo, hi, dlo, dhi;
    assert_true(pnh_control_range(h, "bpm", &def, &lo, &hi));
    assert_true(pnh_control_range(h, "division", &def, &dlo, &dhi));
    double finest = INFINITY;
    for (int d = (int)dlo; d <= (int)dhi; ++d)
        finest = fmin(finest, pnp_division_whole_notes(d));
    const double quarters = 4.0 * finest;
    return quarters * 60.0 / hi * RATE;
}

/* The most steps `frames` may hold: one every min_step_frames, and one
 * more for each time the grid was moved (a new tempo, division or
 * position starts a new grid whose first step may follow the last step
 * of the old one closely). */
static int max_steps(const pnh_host *h, int64_t frames, int regrids)
{
    return (int)floor((double)frames / min_step_frames(h)) + 1 + regrids;
}

/* The value a port must take for `v`: NaN and infinities its default,
 * the rest clamped to its range. */
static float expected_value(const pnh_host *h, int port, float v)
{
    float def, lo, hi;
    assert_true(pnh_control_range(h, pnh_port_symbol(h, (uint32_t)port), &def, &lo, &hi));
    if (!isfinite(v))
        return def;
    return v < lo ? lo : v > hi ? hi : v;
}

/* The output ports show numbers of their range (a NaN knob that reached
 * the solver would show here). */
static void assert_outputs_in_range(const pnh_host *h)
{
    static const char *const outputs[] = {"rules_selected", "weighted_error", "solver_busy",
                                          "late_steps"};
    for (size_t i = 0; i < sizeof outputs / sizeof outputs[0]; ++i) {
        float def, lo, hi;
        assert_true(pnh_control_range(h, outputs[i], &def, &lo, &hi));
        const float v = pnh_get_control(h, outputs[i]);
        if (!(v >= lo && v <= hi))
            fail_msg("output %s = %g, outside %g .. %g", outputs[i], (double)v, (double)lo,
                     (double)hi);
    }
}

/* ---- the ranges ---- */

/* The plugin's table of ranges is what hosts read from the Turtle (the
 * build writes the Turtle's ranges from it): every input control port has
 * its entry, with the same minimum, maximum and default, and no other
 * port has one. */
static void test_ranges_are_the_turtles(void **state)
{
    (void)state;
    pnh_host *h = host;
    assert_int_equal(pnh_num_ports(h), PNP_NUM_PORTS);
    int controls_in = 0;
    for (uint32_t p = 0; p < PNP_NUM_PORTS; ++p) {
        const char *symbol = pnh_port_symbol(h, p);
        const pnp_range *r = pnp_port_range((pnp_port)p);
        float def, lo, hi;
        const int is_control = pnh_control_range(h, symbol, &def, &lo, &hi);
        pn_error_info info = {0};
        /* an input control port accepts a value; outputs and atom ports do not */
        const int is_input = is_control && pnh_set_control_at(h, (int)p, def, &info) == PN_OK;
        if (is_input != (r != NULL))
            fail_msg("port %u (%s): %s the Turtle, %s the plugin's table", p, symbol,
                     is_input ? "an input control in" : "not an input control in",
                     r ? "in" : "not in");
        if (!r)
            continue;
        ++controls_in;
        if (r->minimum != lo || r->maximum != hi || r->def != def)
            fail_msg("%s: table %g .. %g (%g), Turtle %g .. %g (%g)", symbol, (double)r->minimum,
                     (double)r->maximum, (double)r->def, (double)lo, (double)hi, (double)def);
        /* and the plugin holds values to it */
        assert_true(pnp_port_sanitize((pnp_port)p, NAN) == def);
        assert_true(pnp_port_sanitize((pnp_port)p, -INFINITY) == def);
        assert_true(pnp_port_sanitize((pnp_port)p, 1e30f) == hi);
        assert_true(pnp_port_sanitize((pnp_port)p, -1e30f) == lo);
        assert_true(pnp_port_sanitize((pnp_port)p, def) == def);
    }
    assert_true(controls_in > 0);
    /* other ports' values pass through */
    assert_true(pnp_port_sanitize(PNP_LATE_STEPS, 1e30f) == 1e30f);
}

/* ---- the fastest tempo ---- */

/* Note-on frames of the capture, one per step, from the second step on
 * exactly `len` apart (the first may fall anywhere: the grid was just
 * moved). */
static void assert_steps_every(const capture *c, double len, int at_least)
{
    int64_t frames[256];
    int n = 0;
    for (int i = 0; i < c->count && n < 256; ++i)
        if (is_on(&c->ev[i]) && (n == 0 || frames[n - 1] != c->ev[i].frame))
            frames[n++] = c->ev[i].frame;
    if (n < at_least)
        fail_msg("%d steps, expected at least %d", n, at_least);
    for (int k = 2; k < n; ++k)
        if (frames[k] - frames[k - 1] != (int64_t)len)
            fail_msg("steps %d and %d are %lld frames apart, expected %g", k - 1, k,
                     (long long)(frames[k] - frames[k - 1]), len);
}

/* A queued time:Position of Float/Long/Int fields (pnh_position). */
static void queue_position(pnh_host *h, int64_t frame, float bpm, float speed, int beat_unit)
{
    pnh_position p = {0};
    p.fields = PNH_POS_SPEED | PNH_POS_BPM | PNH_POS_BAR | PNH_POS_BAR_BEAT | PNH_POS_BEAT_UNIT |
               PNH_POS_BEATS_PER_BAR;
    p.speed = speed;
    p.bpm = bpm;
    p.beat_unit = beat_unit;
    p.beats_per_bar = 4;
    pn_error_info info = {0};
    assert_int_equal(pnh_queue_position(h, frame, &p, &info), PN_OK);
}

/* Whatever tempo the bpm port or the host asks for, and whatever speed
 * and beat unit, steps come at most as fast as the Turtle's fastest tempo
 * in the finest division: at 400 quarter notes a minute, 1/16 triplets
 * are 1200 frames at 48 kHz, and that is what 1e30 plays. */
static void test_tempo_is_held_to_the_maximum(void **state)
{
    (void)state;
    pnh_host *h = host;
    const double len = min_step_frames(h);
    assert_true(len == 1200.0);
    enum { SPAN = 6 * 1200 };
    /* the bpm port, free running */
    fresh(h);
    set(h, "sync", PNP_SYNC_FREE);
    set(h, "input_mode", 1);
    set(h, "bpm", 1e30f);
    set(h, "division", 1e30f);
    hold_key(h);
    run_frames(h, SPAN);
    assert_steps_every(&cap, len, 5);
    /* the host's tempo and speed, in each mode that takes them; then a
     * host that counts whole notes (beat unit 1) */
    const struct {
        int sync, beat_unit;
        float bpm, speed;
    } cases[] = {
        {PNP_SYNC_HOST, 4, 1e30f, 1.0f},
        {PNP_SYNC_HOST, 4, 120.0f, 1e30f},
        {PNP_SYNC_HOST_TEMPO, 4, 1e30f, 1.0f},
        {PNP_SYNC_HOST, 1, 1e30f, 1.0f},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        fresh(h);
        set(h, "sync", (float)cases[i].sync);
        set(h, "input_mode", 1);
        set(h, "division", 1e30f);
        hold_key(h);
        queue_position(h, 0, cases[i].bpm, cases[i].speed, cases[i].beat_unit);
        run_frames(h, SPAN);
        assert_steps_every(&cap, len, 5);
    }
    run_last(h);
    assert_balanced(&cap);
    assert_no_audio_calls();
}

/* ---- hostile control values ---- */

/* Out-of-range values are played as the nearest end of the range and NaN
 * as the default: seen in the notes' channel and velocity. */
static void test_values_are_held_to_the_range(void **state)
{
    (void)state;
    pnh_host *h = host;
    const struct {
        const char *symbol;
        float value;
        int channel, velocity; /* of every note-on (1-based channel) */
    } cases[] = {
        {"channel", 1e30f, 16, 90},  {"channel", -1e30f, 1, 90}, {"channel", NAN, 1, 90},
        {"velocity", 1e30f, 1, 127}, {"velocity", -1e30f, 1, 1}, {"velocity", -INFINITY, 1, 90},
        {"humanize", NAN, 1, 90},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        fresh(h);
        set(h, "sync", PNP_SYNC_FREE);
        set(h, "bpm", 400);
        set(h, "division", 11); /* a step every 1200 frames */
        set(h, cases[i].symbol, cases[i].value);
        run_frames(h, 2 * 1200);
        int ons = 0;
        for (int e = 0; e < cap.count; ++e) {
            if (!is_on(&cap.ev[e]))
                continue;
            ++ons;
            if ((cap.ev[e].msg[0] & 15) + 1 != cases[i].channel ||
                cap.ev[e].msg[2] != cases[i].velocity)
                fail_msg("%s = %g: a note on channel %d at velocity %d, expected %d and %d",
                         cases[i].symbol, (double)cases[i].value, (cap.ev[e].msg[0] & 15) + 1,
                         cap.ev[e].msg[2], cases[i].channel, cases[i].velocity);
        }
        assert_true(ons > 0);
        run_last(h);
        assert_balanced(&cap);
    }
    assert_no_audio_calls();
}

/* Every input control port gets NaN, +inf, -inf, +1e30 and -1e30 in turn
 * (ten blocks each, then back), 1000 blocks with the plugin free running
 * and harmonizing a held key while the host's transport rolls (Ardour's
 * way: a position every block). */
static void test_hostile_control_values(void **state)
{
    (void)state;
    pnh_host *h = host;
    enum { BLOCKS_EACH = 10 };
    fresh(h);
    float base[PNP_NUM_PORTS] = {0};
    set(h, "sync", PNP_SYNC_FREE);
    set(h, "input_mode", 1);
    for (int p = 0; p < PNP_NUM_PORTS; ++p)
        base[p] = pnh_control_at(h, p);
    roll_transport(h, 1);
    hold_key(h);
    const uint64_t jobs_before = jobs(h);
    int blocks = 0, changes = 0;
    for (int p = 0; p < PNP_NUM_PORTS; ++p) {
        if (!pnp_port_range((pnp_port)p))
            continue;
        for (int v = 0; v < NUM_HOSTILE; ++v) {
            set_at(h, p, hostile[v]);
            run_frames(h, (int64_t)BLOCKS_EACH * BLOCK);
            set_at(h, p, base[p]);
            assert_outputs_in_range(h);
            blocks += BLOCKS_EACH;
            /* a value the plugin takes as another than the base: changed and back */
            changes += 2 * (expected_value(h, p, hostile[v]) != base[p]);
        }
    }
    assert_int_equal(blocks, 1000);
    run_last(h);
    assert_balanced(&cap);
    const int steps = count_steps(&cap);
    print_message("%d steps, %d changes of a value, %llu worker jobs\n", steps, changes,
                  (unsigned long long)(jobs(h) - jobs_before));
    assert_true(steps > 0);
    const int most = max_steps(h, capture_frames, changes);
    assert_true(steps <= most);
    /* at most a job per step there can be (its sonority's context; a step
     * of rests sounds nothing), and per change a few more (new knobs, or a
     * new seed or input mode that redraws the sonorities drawn ahead, at
     * most three): not a job per block */
    assert_true(jobs(h) - jobs_before <= (uint64_t)(1 + most + 4 * (changes + 1)));
    assert_int_equal(pnh_log_errors(h), 0);
    assert_no_audio_calls();
}

/* ---- hostile positions ---- */

static LV2_URID map_uri(LV2_URID_Map_Handle handle, const char *uri)
{
    return pnh_map(handle, uri);
}

/* A time:Position at bar 0, beat 0, 120 bpm, speed 1 in 4/4, with `field`
 * (a time: URI) set to `value`; every number a Double, so that anything
 * can be sent. */
static void queue_position_with(pnh_host *h, int64_t frame, const char *field, double value)
{
    static const char *const fields[] = {
        LV2_TIME__speed,       LV2_TIME__beatsPerMinute, LV2_TIME__bar,  LV2_TIME__barBeat,
        LV2_TIME__beatsPerBar, LV2_TIME__beatUnit,       LV2_TIME__frame};
    static const double sane[] = {1.0, 120.0, 0.0, 0.0, 4.0, 4.0, 0.0};
    uint8_t buf[512];
    LV2_Atom_Forge forge;
    LV2_URID_Map map = {h, map_uri};
    lv2_atom_forge_init(&forge, &map);
    lv2_atom_forge_set_buffer(&forge, buf, sizeof buf);
    LV2_Atom_Forge_Frame obj;
    assert_true(lv2_atom_forge_object(&forge, &obj, 0, pnh_map(h, LV2_TIME__Position)) != 0);
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; ++i) {
        lv2_atom_forge_key(&forge, pnh_map(h, fields[i]));
        lv2_atom_forge_double(&forge, strcmp(fields[i], field) ? sane[i] : value);
    }
    lv2_atom_forge_pop(&forge, &obj);
    pn_error_info info = {0};
    assert_int_equal(pnh_queue_atom(h, frame, (const LV2_Atom *)buf, &info), PN_OK);
}

/* Each field of time:Position NaN, +inf, -inf, +1e30 and -1e30 in turn,
 * after a sane position: the clock follows the host (sync 0) through
 * about 1000 blocks. */
static void test_hostile_positions(void **state)
{
    (void)state;
    pnh_host *h = host;
    static const char *const fields[] = {
        LV2_TIME__beatsPerMinute, LV2_TIME__speed,    LV2_TIME__bar,  LV2_TIME__barBeat,
        LV2_TIME__beatsPerBar,    LV2_TIME__beatUnit, LV2_TIME__frame};
    enum { NUM_FIELDS = sizeof fields / sizeof fields[0], BLOCKS_EACH = 28 };
    fresh(h);
    set(h, "input_mode", 1); /* every step sounds the key held */
    hold_key(h);
    const uint64_t jobs_before = jobs(h);
    int positions = 0;
    for (int f = 0; f < NUM_FIELDS; ++f)
        for (int v = 0; v < NUM_HOSTILE; ++v) {
            queue_position_with(h, 0, LV2_TIME__bar, 0.0);
            queue_position_with(h, 1, fields[f], hostile[v]);
            positions += 2;
            run_frames(h, (int64_t)BLOCKS_EACH * BLOCK);
            assert_outputs_in_range(h);
        }
    run_last(h);
    assert_balanced(&cap);
    const int steps = count_steps(&cap);
    print_message("%d steps over %lld frames, %d positions, %llu worker jobs\n", steps,
                  (long long)capture_frames, positions,
                  (unsigned long long)(jobs(h) - jobs_before));
    assert_true(steps > 0);
    assert_true(steps <= max_steps(h, capture_frames, positions));
    /* harmonizing draws nothing ahead: a job per step's context */
    assert_true(jobs(h) - jobs_before <= (uint64_t)(steps + 1));
    assert_int_equal(pnh_log_errors(h), 0);
    assert_no_audio_calls();
}

/* ---- the ends of a take ---- */

/* Plays with the transport rolling and notes tied from step to step (gate
 * 100 %), so that notes sound whenever the take ends; returns how many. */
static int play_legato(pnh_host *h, int sync)
{
    fresh(h);
    set(h, "sync", (float)sync);
    set(h, "gate", 100);
    set(h, "division", 11); /* 1/16 triplets: 4000 frames */
    roll_transport(h, 0);
    run_frames(h, 6000); /* inside the second step */
    const int sounding = sounding_after(&cap, cap.count);
    assert_true(sounding > 0);
    return sounding;
}

/* The host's last block (transport stopped, lv2:enabled off) ends every
 * note in every sync mode, starts none, and leaves the enable port as it
 * was. Without it, a plugin following only the host's tempo or its own
 * clock plays on through the stop. */
static void test_last_block_ends_every_note(void **state)
{
    (void)state;
    pnh_host *h = host;
    for (int sync = PNP_SYNC_HOST; sync <= PNP_SYNC_FREE; ++sync) {
        const int sounding = play_legato(h, sync);
        const int before = cap.count;
        const int64_t end = capture_frames;
        run_last(h);
        int offs = 0;
        for (int i = before; i < cap.count; ++i) {
            if (is_on(&cap.ev[i]))
                fail_msg("sync %d: a note starts in the last block", sync);
            offs += is_off(&cap.ev[i]);
            assert_int_equal(cap.ev[i].frame, end); /* at once */
        }
        assert_int_equal(offs, sounding);
        assert_balanced(&cap);
        assert_true(pnh_get_control(h, "enable") == 1.0f);
    }
    assert_no_audio_calls();
}

/* Notes sounding when the host deactivates end in the first block after
 * it activates the plugin again, before anything else, in every sync
 * mode (the plugin cannot send anything in deactivate()). */
static void test_reactivation_ends_every_note(void **state)
{
    (void)state;
    pnh_host *h = host;
    for (int sync = PNP_SYNC_HOST; sync <= PNP_SYNC_FREE; ++sync) {
        const int sounding = play_legato(h, sync);
        const int before = cap.count;
        pnh_deactivate(h);
        set(h, "seed", 26); /* the same draws every run (activate() reseeds) */
        pn_error_info info = {0};
        assert_int_equal(pnh_activate(h, &info), PN_OK);
        const int64_t start = capture_frames;
        run_frames(h, BLOCK);
        assert_true(cap.count - before >= sounding);
        for (int i = before; i < before + sounding; ++i) {
            assert_true(is_off(&cap.ev[i]));
            assert_int_equal(cap.ev[i].frame, start);
        }
        assert_int_equal(sounding_after(&cap, before + sounding), 0);
        const int after = cap.count;
        /* and it plays on: within three steps, as one step may strike no
         * new key (every voice tied, or moved onto a key another voice
         * holds, as with this seed right after reactivation in host sync) */
        run_frames(h, 3 * 4000);
        int ons = 0;
        for (int i = after; i < cap.count; ++i)
            ons += is_on(&cap.ev[i]);
        assert_true(ons > 0);
        run_last(h);
        assert_balanced(&cap);
    }
    assert_no_audio_calls();
}

/* ---- the shared instance ---- */

static int make_host(void **state)
{
    (void)state;
    pnh_settings s;
    pnh_settings_default(&s);
    s.plugin_uri = PNP_URI;
    s.bundle_dir = getenv("PNP_BUNDLE_DIR");
    s.max_block = BLOCK;
    s.worker_mode = PNH_WORKER_IMMEDIATE;
    s.hooks = (pnh_hooks){rt_guard_audio_enter, rt_guard_audio_leave, rt_guard_worker_enter,
                          rt_guard_worker_leave, NULL};
    pn_error_info info = {0};
    if (pnh_create(&s, &host, &info) != PN_OK) {
        fprintf(stderr, "test_plugin_hostile: %s\n", info.message);
        return -1;
    }
    if (RT_GUARD_WORKS && !rt_guard_self_check()) {
        fprintf(stderr, "test_plugin_hostile: the real-time guard does not work\n");
        return -1;
    }
    /* the small pedagogical set: every step re-solves, and its re-solves
     * are quick */
    char rules[4096];
    snprintf(rules, sizeof rules, "%s/rules/pedagogical.json", s.bundle_dir);
    if (pnh_activate(host, &info) != PN_OK ||
        pnh_queue_patch_set_path(host, 0, PNP__ruleSet, rules, &info) != PN_OK ||
        pnh_run(host, BLOCK, NULL, NULL, &info) < 0 || pnh_log_errors(host) != 0) {
        fprintf(stderr, "test_plugin_hostile: %s%s\n", info.message, pnh_log_text(host));
        return -1;
    }
    return 0;
}

static int free_host(void **state)
{
    (void)state;
    pnh_free(host);
    return 0;
}

int main(void)
{
    if (!getenv("PNP_BUNDLE_DIR")) {
        fprintf(stderr, "test_plugin_hostile: set PNP_BUNDLE_DIR to the built parnassus.lv2\n");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges_are_the_turtles),
        cmocka_unit_test(test_tempo_is_held_to_the_maximum),
        cmocka_unit_test(test_values_are_held_to_the_range),
        cmocka_unit_test(test_hostile_control_values),
        cmocka_unit_test(test_hostile_positions),
        cmocka_unit_test(test_last_block_ends_every_note),
        cmocka_unit_test(test_reactivation_ends_every_note),
    };
    return cmocka_run_group_tests(tests, make_host, free_host);
}
