/* The musical clock of the plugin: where the beat is at every frame, when
 * the next step falls, and what the host's transport did.
 *
 * Time is a line beat(f) = anchor_beat + (f - anchor_frame) * beats per
 * frame, re-anchored whenever the tempo, the speed or the position changes,
 * so step boundaries are computed from the anchor (exact for whole tempos)
 * instead of accumulated frame by frame. Frames are the plugin's own
 * count since activation; beats are the host's (beat unit from the host,
 * quarter notes otherwise). The host's time:Position may come sparse (only
 * when something changes) and partial (any field missing): the clock keeps
 * the last value of every field and extrapolates. No allocation, no
 * system calls: safe in run(). */
#ifndef PARNASSUS_PLUGIN_CLOCK_H
#define PARNASSUS_PLUGIN_CLOCK_H

#include <stdint.h>

/* Which fields of a time:Position were present. */
enum {
    PNP_POS_SPEED = 1u << 0,
    PNP_POS_BPM = 1u << 1,
    PNP_POS_BAR = 1u << 2,
    PNP_POS_BAR_BEAT = 1u << 3,
    PNP_POS_BEATS_PER_BAR = 1u << 4,
    PNP_POS_BEAT_UNIT = 1u << 5,
    PNP_POS_FRAME = 1u << 6,
};

typedef struct pnp_position {
    unsigned has; /* PNP_POS_* bits */
    double speed;
    double bpm;
    int64_t bar;
    double bar_beat;
    double beats_per_bar;
    int beat_unit;
    int64_t frame; /* the host's transport frame */
} pnp_position;

/* What a position update (or a settings change) did to the music. */
enum {
    PNP_CLOCK_JUMPED = 1u << 0,  /* the position moved: sounding notes must stop */
    PNP_CLOCK_STOPPED = 1u << 1, /* the transport stopped */
    PNP_CLOCK_STARTED = 1u << 2, /* the transport started */
};

typedef struct pnp_clock {
    double rate;
    int mode;        /* PNP_SYNC_* (ports.h) */
    double own_bpm;  /* the bpm port */
    double division; /* step length in whole notes */
    /* the host's transport, as last told */
    int host_seen; /* any time:Position arrived */
    int host_has_bpm;
    int host_has_bbt; /* bar or barBeat ever given */
    double host_bpm;
    double host_speed;
    double beats_per_bar;
    int beat_unit;
    /* the line */
    int64_t anchor_frame;
    double anchor_beat;
    int64_t next_step; /* index of the next step: it falls at beat next_step * step length */
} pnp_clock;

/* What the clock takes from a host, beyond finite numbers: the beat within
 * +-2^30 (the position of bar 268 million in 4/4; the step index stays
 * exact), bars of 1/64 .. 1024 beats (other values are ignored), and a
 * tempo times speed of at most the bpm port's maximum in quarter notes
 * per minute (faster is played at that tempo). */
#define PNP_CLOCK_MAX_BEAT          1073741824.0
#define PNP_CLOCK_MIN_BEATS_PER_BAR (1.0 / 64.0)
#define PNP_CLOCK_MAX_BEATS_PER_BAR 1024.0

/* Whole notes of each division value (ports.h): 1/1 .. 1/16, dotted, triplets. */
double pnp_division_whole_notes(int division);

/* A clock at beat 0 at frame 0, free running at 120 bpm in 1/8. */
void pnp_clock_init(pnp_clock *c, double rate);

/* Back to beat 0 at `frame` (activation); the host's transport is
 * forgotten until it speaks again. */
void pnp_clock_reset(pnp_clock *c, int64_t frame);

/* New settings at `frame` (mode, own tempo, step length); the beat stays
 * continuous. Returns PNP_CLOCK_* flags (STOPPED/STARTED when the mode
 * change starts or stops the music). */
unsigned pnp_clock_configure(pnp_clock *c, int64_t frame, int mode, double own_bpm, int division);

/* A time:Position from the host at `frame`. Returns PNP_CLOCK_* flags. */
unsigned pnp_clock_position(pnp_clock *c, int64_t frame, const pnp_position *pos);

/* 1 while steps are being played. */
int pnp_clock_rolling(const pnp_clock *c);

/* The tempo in use (host or own), in beats per minute, at most the bpm
 * port's maximum (in quarter notes). */
double pnp_clock_bpm(const pnp_clock *c);

/* The beat at `frame` on the current line. */
double pnp_clock_beat(const pnp_clock *c, int64_t frame);

/* The frame of the next step, >= `from`; INT64_MAX when not rolling. */
int64_t pnp_clock_next_step_frame(const pnp_clock *c, int64_t from);

/* The length of a step in frames at the tempo in use: at the speed the
 * transport rolls at (backwards too), or at speed 1 while it stands (the
 * steps it will play once started). */
double pnp_clock_step_frames(const pnp_clock *c);

/* Consumes the next step; returns its length (pnp_clock_step_frames),
 * for the gate. */
double pnp_clock_take_step(pnp_clock *c);

#endif
