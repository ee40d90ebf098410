/* The plugin's ports. Indices and symbols are part of the plugin's public
 * face: hosts save sessions and automation by symbol, so a symbol never
 * changes once released and new ports are only ever appended. The Turtle
 * description (ttl/parnassus.ttl.in) lists the same ports in this order. */
#ifndef PARNASSUS_PLUGIN_PORTS_H
#define PARNASSUS_PLUGIN_PORTS_H

typedef enum pnp_port {
    PNP_CONTROL = 0,       /* "control": atom in: MIDI, time:Position, patch messages */
    PNP_MIDI_OUT,          /* "midi_out": atom out: the generated MIDI */
    PNP_NOTIFY,            /* "notify": atom out: patch:Set replies (rule-set path) */
    PNP_LOG2_LAMBDA_W,     /* "log2_lambda_w": style, -12 (conservative) .. 6 (liberal) */
    PNP_ALPHA,             /* "alpha": 0 (elimination) .. 1 (selection), 0.8 */
    PNP_SYNC,              /* "sync": 0 host transport, 1 host tempo only, 2 free run */
    PNP_BPM,               /* "bpm": tempo when not taken from the host, 20 .. 400 */
    PNP_DIVISION,          /* "division": note value of a step, see pnp_division */
    PNP_GATE,              /* "gate": % of the step a note sounds, 5 .. 100 */
    PNP_VELOCITY,          /* "velocity": 1 .. 127 */
    PNP_HUMANIZE,          /* "humanize": random velocity spread, 0 .. 64 */
    PNP_CHANNEL,           /* "channel": MIDI channel 1 .. 16 */
    PNP_CHANNEL_PER_VOICE, /* "channel_per_voice": voice v on channel + v */
    PNP_SOPRANO,           /* "soprano": the voice sounds (toggle) */
    PNP_ALTO,              /* "alto" */
    PNP_TENOR,             /* "tenor" */
    PNP_BASS,              /* "bass" */
    PNP_KEY,               /* "key": tonic 0 (C) .. 11 (B); rule sets are learned in C */
    PNP_OCTAVE,            /* "octave": -3 .. 3 */
    PNP_INPUT_MODE,        /* "input_mode": 0 off, 1 soprano follows, 2 bass follows */
    PNP_SEED,              /* "seed": 0 = from the clock */
    PNP_PANIC,             /* "panic": trigger, note-offs for every sounding note */
    PNP_ENABLE,            /* "enable": lv2:enabled */
    PNP_RULES_SELECTED,    /* "rules_selected": out, rules the realization keeps */
    PNP_WEIGHTED_ERROR,    /* "weighted_error": out, E(p, w) of the realization */
    PNP_SOLVE_MS,          /* "solve_ms": out, wall time of the last solve */
    PNP_SOLVER_BUSY,       /* "solver_busy": out, 1 while a solve is in flight */
    PNP_LATE_STEPS,        /* "late_steps": out, steps drawn before their context was realized */
    PNP_NUM_PORTS
} pnp_port;

/* "sync" values */
enum { PNP_SYNC_HOST = 0, PNP_SYNC_HOST_TEMPO = 1, PNP_SYNC_FREE = 2 };

/* "input_mode" values */
enum { PNP_INPUT_OFF = 0, PNP_INPUT_SOPRANO = 1, PNP_INPUT_BASS = 2 };

/* "division" values: 0 1/1, 1 1/2, 2 1/4, 3 1/8, 4 1/16, 5 dotted 1/2,
 * 6 dotted 1/4, 7 dotted 1/8, 8 triplet 1/2, 9 triplet 1/4, 10 triplet 1/8,
 * 11 triplet 1/16. */
#define PNP_NUM_DIVISIONS 12

/* The input control ports' ranges: X(port, minimum, maximum, default).
 * They are written here only: the plugin holds every value it reads to
 * them (pnp_port_sanitize), and CMake writes them into the Turtle as
 * lv2:minimum, lv2:maximum and lv2:default (ttl/CMakeLists.txt reads the
 * X(...) entries as text, so write the numbers as Turtle literals: with a
 * decimal point for a float port, without for an integer one). */
/* clang-format off */
#define PNP_CONTROL_RANGES(X)                         \
    X(PNP_LOG2_LAMBDA_W,     -12.0,  6.0,      0.0)   \
    X(PNP_ALPHA,             0.0,    1.0,      0.8)   \
    X(PNP_SYNC,              0,      2,        0)     \
    X(PNP_BPM,               20.0,   400.0,    120.0) \
    X(PNP_DIVISION,          0,      11,       3)     \
    X(PNP_GATE,              5.0,    100.0,    90.0)  \
    X(PNP_VELOCITY,          1,      127,      90)    \
    X(PNP_HUMANIZE,          0,      64,       0)     \
    X(PNP_CHANNEL,           1,      16,       1)     \
    X(PNP_CHANNEL_PER_VOICE, 0,      1,        0)     \
    X(PNP_SOPRANO,           0,      1,        1)     \
    X(PNP_ALTO,              0,      1,        1)     \
    X(PNP_TENOR,             0,      1,        1)     \
    X(PNP_BASS,              0,      1,        1)     \
    X(PNP_KEY,               0,      11,       0)     \
    X(PNP_OCTAVE,            -3,     3,        0)     \
    X(PNP_INPUT_MODE,        0,      2,        0)     \
    X(PNP_SEED,              0,      16777215, 0)     \
    X(PNP_PANIC,             0,      1,        0)     \
    X(PNP_ENABLE,            0,      1,        1)
/* clang-format on */

typedef struct pnp_range {
    float minimum, maximum, def;
} pnp_range;

/* The range of an input control port (PNP_CONTROL_RANGES); NULL for the
 * other ports. */
const pnp_range *pnp_port_range(pnp_port port);

/* A value of an input control port held to its range: NaN and infinities
 * become the default, the rest is clamped to minimum .. maximum. Other
 * ports' values come back as they are. */
float pnp_port_sanitize(pnp_port port, float value);

#endif
