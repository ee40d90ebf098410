/* Following an external MIDI clock (24 pulses per quarter note, Start,
 * Stop, Continue, Song Position Pointer) with a smoothed tempo estimate,
 * so that parnassus-live locks to a drum machine or a DAW (docs/live.md).
 *
 * The follower is fed the raw real-time and system-common messages with
 * their arrival times (seconds on any monotonic clock, e.g. the audio
 * stream's) and answers where the music is: rolling or not, the tempo,
 * and the position in quarter notes at a given time. It is plain data,
 * allocates nothing, locks nothing and never blocks, so the audio thread
 * may own it.
 *
 * The tempo is estimated from the pulse times (a least-squares fit over
 * the last pulses, see live_clock.c), also while stopped, as most senders
 * keep the clock running: a pulse interval that is implausible (outside
 * 20..400 bpm, or a pause, a lost or doubled pulse) does not disturb the
 * estimate; jitter is smoothed so that a steady clock with a millisecond of
 * jitter gives the tempo within 0.5 % after two bars; a new tempo is
 * followed within a few pulses. */
#ifndef PARNASSUS_LIVE_CLOCK_H
#define PARNASSUS_LIVE_CLOCK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    PNL_CLOCK_PPQN = 24,
    PNL_MIDI_CLOCK = 0xF8,
    PNL_MIDI_START = 0xFA,
    PNL_MIDI_CONTINUE = 0xFB,
    PNL_MIDI_STOP = 0xFC,
    PNL_MIDI_SONG_POSITION = 0xF2, /* two data bytes, LSB first: MIDI beats (16ths) */
};

/* What changed with a message (bits), so the caller can tell the plugin. */
enum {
    PNL_CLOCK_CHANGED_ROLLING = 1u << 0,  /* Start, Stop or Continue took effect */
    PNL_CLOCK_CHANGED_POSITION = 1u << 1, /* Start (back to 0) or a Song Position Pointer */
    PNL_CLOCK_CHANGED_TEMPO = 1u << 2,    /* the tempo estimate moved by more than 0.1 % */
};

/* Sizes of the fixed arrays (private). The tempo fit spans
 * PNL_CLOCK_WINDOW pulses: long enough to average jitter away, short
 * enough to follow a tempo ramp with a lag of half of it. PNL_CLOCK_CONFIRM
 * pulses in a row that agree with each other but not with the fit confirm
 * a new tempo or a jump in time. */
enum { PNL_CLOCK_WINDOW = 64, PNL_CLOCK_CONFIRM = 8 };

/* Sums over points (x, y) relative to an origin: enough for their
 * least-squares line (private). */
typedef struct pnl_clock_sums {
    double n, x, y, xx, xy;
} pnl_clock_sums;

typedef struct pnl_clock {
    /* public, read-only */
    int rolling; /* between Start/Continue and Stop */
    double bpm;  /* current estimate (quarter notes per minute) */
    int locked;  /* the estimate comes from at least PNL_CLOCK_CONFIRM consistent pulses */
    /* private */
    int pending;            /* Start or Continue waiting for the next pulse (0: none) */
    int64_t next_pulse;     /* position of the next pulse when rolling (quarter = 24) */
    double last_pulse_time; /* arrival of the last pulse */
    double reported_bpm;    /* the tempo last reported with PNL_CLOCK_CHANGED_TEMPO */
    /* The tempo fit: a least-squares line through (index, time) of the
     * last pulses that agreed with it. Every pulse received takes the next
     * index, whether it enters the fit or not. Times are shifted by
     * `offset` so that a pause or a lost pulse at the same tempo continues
     * the line instead of breaking it. */
    int64_t window_index[PNL_CLOCK_WINDOW]; /* circular */
    double window_time[PNL_CLOCK_WINDOW];   /* shifted times */
    int window_first, window_count;
    int64_t next_index;         /* of the next pulse */
    int64_t origin_index;       /* x = index - origin_index */
    double origin_time;         /* y = shifted time - origin_time */
    pnl_clock_sums window_sums; /* running sums over the window */
    double offset;              /* subtracted from arrival times */
    /* The transport's jitter (its variance, seconds squared), from the
     * second differences of consecutive pulses in the fit: unlike the
     * fit's residuals, they do not grow when the tempo changes. */
    double jitter_variance;
    int jitter_samples;
    /* Pulses that missed the fit's prediction, in a row: an outlier, or
     * the start of a pause, a lost pulse or a new tempo. */
    double suspect[PNL_CLOCK_CONFIRM];
    int suspect_count;
} pnl_clock;

/* Starts stopped at position 0 with the tempo `bpm` until pulses tell
 * otherwise (20..400; other values give 120). */
void pnl_clock_init(pnl_clock *c, double bpm);

/* Feeds one message (status byte plus data bytes, size 1..3) that arrived
 * at time t (seconds, non-decreasing between calls). Messages that are
 * not clock, Start, Stop, Continue or Song Position are ignored, and so
 * are malformed ones (size outside 1..3, a Song Position Pointer without
 * its two 7-bit data bytes, a time that is not finite). Returns the
 * PNL_CLOCK_CHANGED_* bits. Per the MIDI spec, Start and Continue take
 * effect with the next clock pulse (a Start before it wins over a
 * Continue, a Stop cancels both), Stop at once; a Song Position Pointer is
 * only obeyed while stopped. */
unsigned pnl_clock_feed(pnl_clock *c, const uint8_t *msg, int size, double t);

/* The position in quarter notes at time t >= the last message's time: the
 * pulses counted, plus the part of a pulse elapsed since the last one at
 * the current tempo (never past the next pulse, so a late pulse cannot make
 * the position jump back). The first pulse after Start is at 0, the first
 * after Continue where it stopped. Not rolling: the position where it
 * stopped, which is that of the next pulse after a Continue (the pulses
 * counted since Start, or the Song Position Pointer).
 * A t before the last pulse (pulses fed ahead of their time) gives the
 * position extrapolated back from it, down to the pulse before, and never
 * before 0. */
double pnl_clock_beat_at(const pnl_clock *c, double t);

#ifdef __cplusplus
}
#endif

#endif
