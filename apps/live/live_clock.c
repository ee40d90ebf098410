/* MIDI clock follower (see live_clock.h).
 *
 * Tempo: a least-squares line through (index, arrival time) of the last
 * PNL_CLOCK_WINDOW pulses; its slope is the pulse period. Over n pulses
 * with independent jitter of deviation s, the slope's deviation is
 * s * sqrt(12 / (n (n^2 - 1))): with 1 ms of jitter, 64 pulses give the
 * period within 4 microseconds (0.02 % at 100 bpm), and the fit has no
 * filter state to settle, so it is as good as its pulses from the first
 * ones on. The window's sums are kept up to date as pulses come and go,
 * so a pulse costs O(1); against a smoothing filter (a PLL), the fit
 * trades a tempo ramp's lag of half a window for that precision.
 *
 * Robustness: a pulse that lands too far from where the line expects it
 * (the tolerance grows with the jitter seen) is held as a suspect instead
 * of entering the fit; one stray pulse is forgotten when the next lands on
 * the line again. PNL_CLOCK_CONFIRM suspects in a row that agree among
 * themselves are either
 * - a jump in time at the same tempo (a pause, a lost or doubled pulse):
 *   the fit is kept, its times shifted so that the suspects continue it;
 * - or a new tempo: the fit restarts from the suspects.
 * The first pulses ever are suspects too, which is how the follower locks.
 * Every pulse received takes the next index, so a new tempo cannot pass
 * for the old one with a pulse skipped now and then. */
#include "live_clock.h"

#include <math.h>
#include <string.h>

static const double MIN_BPM = 20.0, MAX_BPM = 400.0, DEFAULT_BPM = 120.0;

/* The estimate moves by more than this (relative) before it is reported. */
static const double TEMPO_REPORT_STEP = 0.001;

/* Song Position Pointer counts MIDI beats: sixteenth notes. */
static const int PULSES_PER_MIDI_BEAT = PNL_CLOCK_PPQN / 4;

enum { PENDING_NONE, PENDING_START, PENDING_CONTINUE };

/* ------------------------------------------------------------ periods */

static double period_of_bpm(double bpm)
{
    return 60.0 / (bpm * PNL_CLOCK_PPQN);
}

static double bpm_of_period(double period)
{
    return 60.0 / (period * PNL_CLOCK_PPQN);
}

static int plausible_period(double period)
{
    return period >= period_of_bpm(MAX_BPM) && period <= period_of_bpm(MIN_BPM);
}

/* --------------------------------------------------------------- lines */

/* Time = origin_time + intercept + slope * (index - origin_index). */
typedef struct line {
    int64_t origin_index;
    double origin_time, intercept, slope;
} line;

static double line_at(line l, int64_t index)
{
    return l.origin_time + l.intercept + l.slope * (double)(index - l.origin_index);
}

typedef pnl_clock_sums sums;

static void sums_add(sums *s, double x, double y)
{
    s->n += 1.0;
    s->x += x;
    s->y += y;
    s->xx += x * x;
    s->xy += x * y;
}

/* Moves the origin by (dx, dy) without visiting the points. */
static void sums_shift(sums *s, double dx, double dy)
{
    s->xy -= dx * s->y + dy * s->x - s->n * dx * dy;
    s->xx -= 2 * dx * s->x - s->n * dx * dx;
    s->x -= s->n * dx;
    s->y -= s->n * dy;
}

/* At least two points with different x. */
static line fit_line(const sums *s, int64_t origin_index, double origin_time)
{
    double mean_x = s->x / s->n, mean_y = s->y / s->n;
    double sxx = s->xx - s->n * mean_x * mean_x;
    double sxy = s->xy - s->n * mean_x * mean_y;
    line l = {origin_index, origin_time, 0.0, sxy / sxx};
    l.intercept = mean_y - l.slope * mean_x;
    return l;
}

/* ---------------------------------------------------------- the window */

static int window_slot(const pnl_clock *c, int i)
{
    return (c->window_first + i) % PNL_CLOCK_WINDOW;
}

static void window_clear(pnl_clock *c)
{
    c->window_first = c->window_count = 0;
    c->origin_index = 0;
    c->origin_time = c->offset = 0.0;
    memset(&c->window_sums, 0, sizeof c->window_sums);
}

/* Moves the origin to the oldest point, so that the sums stay as small as
 * a window and keep their precision however long the clock runs. */
static void window_rebase(pnl_clock *c)
{
    int slot = window_slot(c, 0);
    double dx = (double)(c->window_index[slot] - c->origin_index);
    double dy = c->window_time[slot] - c->origin_time;
    sums_shift(&c->window_sums, dx, dy);
    c->origin_index = c->window_index[slot];
    c->origin_time = c->window_time[slot];
}

static void window_drop_oldest(pnl_clock *c)
{
    /* The origin is the oldest point: it adds 0 to every sum but n. */
    c->window_sums.n -= 1.0;
    c->window_first = window_slot(c, 1);
    c->window_count--;
    if (c->window_count > 0)
        window_rebase(c);
}

static void window_push(pnl_clock *c, int64_t index, double shifted_time)
{
    if (c->window_count == PNL_CLOCK_WINDOW)
        window_drop_oldest(c);
    if (c->window_count == 0) {
        c->origin_index = index;
        c->origin_time = shifted_time;
    }
    int slot = window_slot(c, c->window_count++);
    c->window_index[slot] = index;
    c->window_time[slot] = shifted_time;
    sums_add(&c->window_sums, (double)(index - c->origin_index), shifted_time - c->origin_time);
}

static line window_fit(const pnl_clock *c)
{
    return fit_line(&c->window_sums, c->origin_index, c->origin_time);
}

/* ------------------------------------------------------------- jitter */

/* Second differences t[i+1] - 2 t[i] + t[i-1] of independent jitter of
 * variance v have variance 6 v. */
static const double SECOND_DIFFERENCE_VARIANCE = 6.0;

/* The estimate averages about this many second differences. */
static const int JITTER_MEMORY = 256;

/* Below this, 0.1 ms, the jitter is as good as none: it only keeps the
 * tests on a perfect clock from asking for the impossible. */
static const double JITTER_FLOOR = 1e-4;

static double jitter(const pnl_clock *c)
{
    return fmax(sqrt(c->jitter_variance), JITTER_FLOOR);
}

/* Learns from a pulse that entered the fit right after the two before it. */
static void learn_jitter(pnl_clock *c, int64_t index, double shifted_time)
{
    int n = c->window_count;
    if (n < 2)
        return;
    int last = window_slot(c, n - 1), before = window_slot(c, n - 2);
    if (c->window_index[last] != index - 1 || c->window_index[before] != index - 2)
        return;
    double d2 = shifted_time - 2.0 * c->window_time[last] + c->window_time[before];
    if (c->jitter_samples < JITTER_MEMORY)
        c->jitter_samples++;
    c->jitter_variance +=
        (d2 * d2 / SECOND_DIFFERENCE_VARIANCE - c->jitter_variance) / c->jitter_samples;
}

/* How far from the line's prediction a pulse may land and still belong to
 * it: a quarter of a period plus 2 ms, or four deviations of the jitter
 * if more, but never so far that a lost pulse (a whole period late) or a
 * pause could pass. */
static double tolerance(const pnl_clock *c, double period)
{
    return fmin(fmax(0.25 * period + 0.002, 4.0 * jitter(c)), 0.75 * period);
}

/* ------------------------------------------------------------ suspects */

/* How much further than the tolerance (in periods) suspects must be from
 * the fit to count as a jump in time. */
static const double JUMP_MARGIN = 0.2;

/* Index of suspect i (they are the last pulses received). */
static int64_t suspect_index(const pnl_clock *c, int i)
{
    return c->next_index - c->suspect_count + i;
}

static void suspect_drop_oldest(pnl_clock *c)
{
    memmove(c->suspect, c->suspect + 1, (size_t)(c->suspect_count - 1) * sizeof c->suspect[0]);
    c->suspect_count--;
}

static void suspect_push(pnl_clock *c, double t)
{
    if (c->suspect_count == PNL_CLOCK_CONFIRM)
        suspect_drop_oldest(c);
    c->suspect[c->suspect_count++] = t;
}

static line suspects_fit(const pnl_clock *c)
{
    sums s = {0};
    for (int i = 0; i < c->suspect_count; ++i)
        sums_add(&s, i, c->suspect[i] - c->suspect[0]);
    return fit_line(&s, suspect_index(c, 0), c->suspect[0]);
}

/* The suspects are a clock of their own: a plausible tempo, and every one
 * of them close to their line. */
static int suspects_agree(const pnl_clock *c, line l)
{
    if (!plausible_period(l.slope))
        return 0;
    for (int i = 0; i < c->suspect_count; ++i)
        if (fabs(c->suspect[i] - line_at(l, suspect_index(c, i))) > tolerance(c, l.slope))
            return 0;
    return 1;
}

/* The suspects' tempo is the fit's if their periods differ by no more than
 * the jitter can explain: four standard errors of the suspects' slope (the
 * fit's, over many more pulses, is far more precise). */
static int same_tempo(const pnl_clock *c, line fit, line suspects)
{
    double k = c->suspect_count;
    double standard_error = jitter(c) * sqrt(12.0 / (k * (k * k - 1)));
    return fabs(suspects.slope - fit.slope) <= 4.0 * standard_error;
}

/* How far the suspects are from the line, on average. */
static double suspects_distance(const pnl_clock *c, line fit)
{
    double distance = 0.0;
    for (int i = 0; i < c->suspect_count; ++i)
        distance += c->suspect[i] - c->offset - line_at(fit, suspect_index(c, i));
    return distance / c->suspect_count;
}

/* A jump in time: the suspects are the fit's tempo, and they left the
 * line all at once (a pause, a lost or doubled pulse: a period or more)
 * rather than drifted just past the tolerance, as a new tempo too close to
 * the old one to tell apart over a few pulses does. Shifting the fit onto
 * such a drift would hide it, and the fit would lag behind. */
static int is_jump(const pnl_clock *c, line fit, line suspects, double distance)
{
    return same_tempo(c, fit, suspects) &&
           fabs(distance) > tolerance(c, fit.slope) + JUMP_MARGIN * fit.slope;
}

/* Keeps the fit across a jump: shifts the times so that the suspects
 * continue the line. Otherwise starts a new fit from the suspects. */
static void follow_suspects(pnl_clock *c, line suspects)
{
    if (c->window_count > 0) {
        line fit = window_fit(c);
        double distance = suspects_distance(c, fit);
        if (is_jump(c, fit, suspects, distance)) {
            c->offset += distance;
            for (int i = 0; i < c->suspect_count; ++i)
                window_push(c, suspect_index(c, i), c->suspect[i] - c->offset);
            return;
        }
    }
    window_clear(c);
    for (int i = 0; i < c->suspect_count; ++i)
        window_push(c, suspect_index(c, i), c->suspect[i]);
}

/* Called with PNL_CLOCK_CONFIRM suspects in a row. */
static void resolve_suspects(pnl_clock *c)
{
    line suspects = suspects_fit(c);
    if (!suspects_agree(c, suspects)) {
        suspect_drop_oldest(c); /* maybe the next ones will */
        return;
    }
    follow_suspects(c, suspects);
    c->suspect_count = 0;
}

/* ------------------------------------------------------------ the tempo */

static unsigned update_bpm(pnl_clock *c)
{
    if (c->window_count < 2)
        return 0;
    double period = window_fit(c).slope;
    if (!plausible_period(period))
        return 0; /* cannot happen with agreeing pulses; keep the last estimate */
    c->locked = 1;
    c->bpm = bpm_of_period(period);
    if (fabs(c->bpm - c->reported_bpm) <= TEMPO_REPORT_STEP * c->reported_bpm)
        return 0;
    c->reported_bpm = c->bpm;
    return PNL_CLOCK_CHANGED_TEMPO;
}

static unsigned estimate_pulse(pnl_clock *c, double t)
{
    int64_t index = c->next_index++;
    if (c->window_count > 0) {
        line fit = window_fit(c);
        double shifted = t - c->offset;
        if (fabs(shifted - line_at(fit, index)) <= tolerance(c, fit.slope)) {
            c->suspect_count = 0;
            learn_jitter(c, index, shifted);
            window_push(c, index, shifted);
            return update_bpm(c);
        }
    }
    suspect_push(c, t);
    if (c->suspect_count < PNL_CLOCK_CONFIRM)
        return 0;
    resolve_suspects(c);
    return update_bpm(c);
}

/* ------------------------------------------------------- the transport */

static unsigned on_clock(pnl_clock *c, double t)
{
    unsigned changed = estimate_pulse(c, t);
    c->last_pulse_time = t;
    if (c->pending == PENDING_START) {
        c->next_pulse = 0;
        changed |= PNL_CLOCK_CHANGED_POSITION;
    }
    if (c->pending != PENDING_NONE && !c->rolling) {
        c->rolling = 1;
        changed |= PNL_CLOCK_CHANGED_ROLLING;
    }
    c->pending = PENDING_NONE;
    if (c->rolling)
        c->next_pulse++; /* this pulse is at next_pulse - 1 */
    return changed;
}

static unsigned on_continue(pnl_clock *c)
{
    /* A Start waiting for its pulse wins: it would be applied first. */
    if (c->pending != PENDING_START)
        c->pending = PENDING_CONTINUE;
    return 0;
}

static unsigned on_stop(pnl_clock *c)
{
    c->pending = PENDING_NONE;
    if (!c->rolling)
        return 0;
    c->rolling = 0;
    return PNL_CLOCK_CHANGED_ROLLING;
}

static unsigned on_song_position(pnl_clock *c, const uint8_t *msg, int size)
{
    if (size != 3 || msg[1] > 0x7F || msg[2] > 0x7F || c->rolling)
        return 0;
    int32_t midi_beats = (int32_t)msg[1] | (int32_t)msg[2] << 7;
    c->next_pulse = (int64_t)midi_beats * PULSES_PER_MIDI_BEAT;
    return PNL_CLOCK_CHANGED_POSITION;
}

/* ------------------------------------------------------------------ API */

void pnl_clock_init(pnl_clock *c, double bpm)
{
    memset(c, 0, sizeof *c); /* stopped, at 0, no pulse, empty fit */
    if (!(bpm >= MIN_BPM && bpm <= MAX_BPM))
        bpm = DEFAULT_BPM;
    c->bpm = c->reported_bpm = bpm;
}

unsigned pnl_clock_feed(pnl_clock *c, const uint8_t *msg, int size, double t)
{
    if (!c || !msg || size < 1 || size > 3 || !isfinite(t))
        return 0;
    switch (msg[0]) {
    case PNL_MIDI_CLOCK:
        return on_clock(c, t);
    case PNL_MIDI_START:
        c->pending = PENDING_START;
        return 0;
    case PNL_MIDI_CONTINUE:
        return on_continue(c);
    case PNL_MIDI_STOP:
        return on_stop(c);
    case PNL_MIDI_SONG_POSITION:
        return on_song_position(c, msg, size);
    default:
        return 0;
    }
}

double pnl_clock_beat_at(const pnl_clock *c, double t)
{
    if (!c->rolling)
        return (double)c->next_pulse / PNL_CLOCK_PPQN;
    /* In pulses since the last one: up to the next pulse, and back to the
     * one before for a time just before the last pulse (pulses handed over
     * ahead of their time), but never before the start. */
    double elapsed = (t - c->last_pulse_time) / period_of_bpm(c->bpm);
    if (elapsed > 1.0)
        elapsed = 1.0;
    else if (!(elapsed > -1.0)) /* also a NaN */
        elapsed = -1.0;
    double pulses = (double)(c->next_pulse - 1) + elapsed;
    return (pulses > 0.0 ? pulses : 0.0) / PNL_CLOCK_PPQN;
}
