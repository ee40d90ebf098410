/* The musical clock (clock.h). */
#include "clock.h"

#include <math.h>

#include "ports.h"

double pnp_division_whole_notes(int division)
{
    static const double whole[PNP_NUM_DIVISIONS] = {
        1.0,       0.5,       0.25,       0.125,      0.0625, /* plain */
        0.75,      0.375,     0.1875,                         /* dotted */
        1.0 / 3.0, 1.0 / 6.0, 1.0 / 12.0, 1.0 / 24.0,         /* triplets */
    };
    if (division < 0 || division >= PNP_NUM_DIVISIONS)
        division = 3;
    return whole[division];
}

static int host_drives_tempo(const pnp_clock *c)
{
    return c->mode != PNP_SYNC_FREE && c->host_has_bpm;
}

/* The host's position and transport drive the line. */
static int host_drives_position(const pnp_clock *c)
{
    return c->mode == PNP_SYNC_HOST && c->host_seen;
}

static int beat_unit(const pnp_clock *c)
{
    return c->mode != PNP_SYNC_FREE && c->beat_unit > 0 ? c->beat_unit : 4;
}

/* The tempo given (host or own), in beats per minute, before the limit. */
static double given_bpm(const pnp_clock *c)
{
    return host_drives_tempo(c) ? c->host_bpm : c->own_bpm;
}

int pnp_clock_rolling(const pnp_clock *c)
{
    return host_drives_position(c) ? c->host_speed != 0.0 : 1;
}

static double step_beats(const pnp_clock *c)
{
    return c->division * beat_unit(c);
}

/* The fastest the beat may go, in beats per minute: the bpm port's
 * maximum in quarter notes, so that whatever tempo, speed and beat unit a
 * host sends, steps never come faster than the knob could make them. */
static double max_bpm(const pnp_clock *c)
{
    return (double)pnp_port_range(PNP_BPM)->maximum * beat_unit(c) / 4.0;
}

double pnp_clock_bpm(const pnp_clock *c)
{
    const double bpm = given_bpm(c), max = max_bpm(c);
    return bpm < max ? bpm : max;
}

static double beats_per_frame(const pnp_clock *c)
{
    const double speed = host_drives_position(c) ? c->host_speed : 1.0;
    const double bpm = given_bpm(c) * speed, max = max_bpm(c);
    return (bpm < -max ? -max : bpm > max ? max : bpm) / 60.0 / c->rate;
}

double pnp_clock_beat(const pnp_clock *c, int64_t frame)
{
    return c->anchor_beat + (double)(frame - c->anchor_frame) * beats_per_frame(c);
}

/* Starts the line anew at (frame, beat): the next step is the first
 * boundary at or after the beat, within half a frame (boundaries fall on
 * the nearest frame). The beat is held to +-PNP_CLOCK_MAX_BEAT, so that
 * the step index stays far inside int64_t whatever position a host sends. */
static void anchor(pnp_clock *c, int64_t frame, double beat)
{
    if (!(beat >= -PNP_CLOCK_MAX_BEAT))
        beat = isnan(beat) ? 0.0 : -PNP_CLOCK_MAX_BEAT;
    else if (beat > PNP_CLOCK_MAX_BEAT)
        beat = PNP_CLOCK_MAX_BEAT;
    c->anchor_frame = frame;
    c->anchor_beat = beat;
    const double half_frame = 0.5 * fabs(beats_per_frame(c));
    const double L = step_beats(c);
    c->next_step = (int64_t)ceil((beat - half_frame) / L - 1e-12);
}

void pnp_clock_init(pnp_clock *c, double rate)
{
    c->rate = rate > 0 ? rate : 48000.0;
    c->mode = PNP_SYNC_HOST;
    c->own_bpm = 120.0;
    c->division = pnp_division_whole_notes(3);
    pnp_clock_reset(c, 0);
}

void pnp_clock_reset(pnp_clock *c, int64_t frame)
{
    c->host_seen = 0;
    c->host_has_bpm = 0;
    c->host_has_bbt = 0;
    c->host_bpm = 120.0;
    c->host_speed = 0.0;
    c->beats_per_bar = 4.0;
    c->beat_unit = 4;
    anchor(c, frame, 0.0);
}

unsigned pnp_clock_configure(pnp_clock *c, int64_t frame, int mode, double own_bpm, int division)
{
    if (!(own_bpm >= 1.0)) /* NaN too */
        own_bpm = 1.0;
    if (mode < PNP_SYNC_HOST || mode > PNP_SYNC_FREE)
        mode = PNP_SYNC_HOST;
    const double whole = pnp_division_whole_notes(division);
    if (mode == c->mode && own_bpm == c->own_bpm && whole == c->division)
        return 0;
    const int was_rolling = pnp_clock_rolling(c);
    const double beat = pnp_clock_beat(c, frame);
    c->mode = mode;
    c->own_bpm = own_bpm;
    c->division = whole;
    anchor(c, frame, beat);
    const int rolling = pnp_clock_rolling(c);
    return (was_rolling && !rolling ? PNP_CLOCK_STOPPED : 0) |
           (!was_rolling && rolling ? PNP_CLOCK_STARTED : 0);
}

unsigned pnp_clock_position(pnp_clock *c, int64_t frame, const pnp_position *pos)
{
    const int was_rolling = pnp_clock_rolling(c);
    const double expected = pnp_clock_beat(c, frame);
    const double old_bpf = beats_per_frame(c);

    if (pos->has & PNP_POS_SPEED)
        c->host_speed = isfinite(pos->speed) ? pos->speed : 0.0;
    if ((pos->has & PNP_POS_BPM) && isfinite(pos->bpm) && pos->bpm > 0.0) {
        c->host_bpm = pos->bpm;
        c->host_has_bpm = 1;
    }
    if ((pos->has & PNP_POS_BEATS_PER_BAR) && pos->beats_per_bar >= PNP_CLOCK_MIN_BEATS_PER_BAR &&
        pos->beats_per_bar <= PNP_CLOCK_MAX_BEATS_PER_BAR)
        c->beats_per_bar = pos->beats_per_bar;
    if ((pos->has & PNP_POS_BEAT_UNIT) && pos->beat_unit > 0 && pos->beat_unit <= 256)
        c->beat_unit = pos->beat_unit;
    c->host_seen = 1;

    if (c->mode != PNP_SYNC_HOST) {
        /* only the tempo is taken: the own line goes on from where it is */
        anchor(c, frame, expected);
        return 0;
    }

    /* where the host says we are; missing fields come from the line */
    double beat = expected;
    int told = 0;
    const int has_bar = (pos->has & PNP_POS_BAR) != 0;
    const int has_bar_beat = (pos->has & PNP_POS_BAR_BEAT) && isfinite(pos->bar_beat);
    if (has_bar || has_bar_beat) {
        double bar;
        if (has_bar)
            bar = (double)pos->bar;
        else /* the bar the line is in, given the beat within it */
            bar = floor((expected - pos->bar_beat) / c->beats_per_bar + 0.5);
        beat = bar * c->beats_per_bar + (has_bar_beat ? pos->bar_beat : 0.0);
        c->host_has_bbt = 1;
        told = 1;
    } else if ((pos->has & PNP_POS_FRAME) && !c->host_has_bbt) {
        /* a transport without bars and beats: count beats from its frame */
        beat = (double)pos->frame / c->rate * pnp_clock_bpm(c) / 60.0;
        told = 1;
    }

    /* a position past +-PNP_CLOCK_MAX_BEAT is not heard: re-anchoring at
     * the limit every block would jump (and panic) every block */
    if (told && !(fabs(beat) <= PNP_CLOCK_MAX_BEAT)) {
        beat = expected;
        told = 0;
    }

    unsigned flags = 0;
    const int rolling = pnp_clock_rolling(c);
    if (was_rolling && !rolling)
        flags |= PNP_CLOCK_STOPPED;
    if (!was_rolling && rolling)
        flags |= PNP_CLOCK_STARTED;
    /* a jump: the host's position disagrees with the line by more than a
     * few frames' worth (hosts round positions; tempo changes reported a
     * block late drift a little) */
    const double tolerance = 8.0 * fabs(old_bpf) + 1e-6;
    if (told && was_rolling && rolling && fabs(beat - expected) > tolerance)
        flags |= PNP_CLOCK_JUMPED; /* also the first word of a host after free running */
    anchor(c, frame, beat);
    return flags;
}

int64_t pnp_clock_next_step_frame(const pnp_clock *c, int64_t from)
{
    if (!pnp_clock_rolling(c))
        return INT64_MAX;
    const double bpf = beats_per_frame(c);
    if (!(bpf > 0.0))
        return INT64_MAX; /* rolling backwards or at speed 0: no steps */
    const double target = (double)c->next_step * step_beats(c);
    const double t = (target - c->anchor_beat) / bpf;
    if (t > 9e15)
        return INT64_MAX;
    int64_t f = c->anchor_frame + (int64_t)floor(t + 0.5);
    return f < from ? from : f;
}

double pnp_clock_step_frames(const pnp_clock *c)
{
    const double bpf =
        pnp_clock_rolling(c) ? fabs(beats_per_frame(c)) : pnp_clock_bpm(c) / 60.0 / c->rate;
    return bpf > 0.0 ? step_beats(c) / bpf : 0.0;
}

double pnp_clock_take_step(pnp_clock *c)
{
    ++c->next_step;
    return pnp_clock_step_frames(c);
}
