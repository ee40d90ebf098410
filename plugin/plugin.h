/* The plugin instance, shared by plugin.c, run.c and steps.c (the audio
 * side), worker.c (the LV2 Worker) and state.c (save/restore). Threads:
 * run(), work_response() and end_run() on the audio thread; work() on the
 * host's worker thread; instantiate, activate, save and restore on the
 * host's main thread (never at the same time as run(), per the LV2
 * threading classes, but possibly while work() runs). What each field
 * belongs to is said next to it. */
#ifndef PARNASSUS_PLUGIN_PLUGIN_H
#define PARNASSUS_PLUGIN_PLUGIN_H

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>

#include <lv2/atom/atom.h>
#include <lv2/atom/forge.h>
#include <lv2/core/lv2.h>
#include <lv2/log/logger.h>
#include <lv2/urid/urid.h>
#include <lv2/worker/worker.h>

#include "clock.h"
#include "model.h"
#include "notes.h"
#include "parnassus/rng.h"
#include "ports.h"

/* Every URID the plugin uses, mapped once in instantiate(). */
typedef struct pnp_urids {
    LV2_URID atom_Blank, atom_Object, atom_Sequence, atom_Path, atom_String;
    LV2_URID atom_Float, atom_Double, atom_Int, atom_Long, atom_Bool, atom_URID;
    LV2_URID midi_MidiEvent;
    LV2_URID time_Position, time_bar, time_barBeat, time_beatUnit, time_beatsPerBar;
    LV2_URID time_beatsPerMinute, time_frame, time_speed;
    LV2_URID patch_Set, patch_Get, patch_property, patch_value;
    LV2_URID pn_ruleSet, pn_ruleSetText, pn_seedUsed, pn_selectedRules;
} pnp_urids;

/* Worker messages: run() -> work() ... */
typedef enum pnp_job_type {
    PNP_JOB_REALIZE = 1, /* new knobs / context / input voice */
    PNP_JOB_LOAD,        /* read a rule-set file (path follows the header) */
    PNP_JOB_ADOPT,       /* make a model built by restore() the worker's */
    PNP_JOB_FREE,        /* free a model run() no longer reads */
} pnp_job_type;

enum { PNP_MAX_PATH = 4096 };

/* Sonorities drawn ahead at most, and how much music that may be: as many
 * steps as fit in PNP_AHEAD_SECONDS, at least one. While the worker is
 * that far ahead of the music, re-solves slower than a step (the selection
 * changing, or a slower machine) are absorbed instead of making steps
 * late. A Style or Selection knob turned trims what was drawn ahead to the
 * steps of PNP_KNOB_AHEAD_SECONDS, so that it is heard within that time
 * however deep the look-ahead. */
enum { PNP_AHEAD_MAX = 16 };
#define PNP_AHEAD_SECONDS      1.6
#define PNP_KNOB_AHEAD_SECONDS 0.4

/* Steps drawn and realized in activate(), before the first block: the
 * first re-solves after instantiation (or a rule set's first contexts) are
 * the slowest, and with the music rolling from the first block nothing
 * would be drawn ahead for them yet. Each costs one re-solve of
 * activation time. */
enum { PNP_PRIME_STEPS = 3 }; /* no more than the look-ahead's depth */

typedef struct pnp_job {
    uint32_t type;
    uint32_t size; /* of the path, NUL included (LOAD) */
    pnp_knobs knobs;
    int32_t given_voice;
    int32_t has_context;
    int32_t context[PNP_MAX_VOICES];
    uint64_t context_serial;
    pnp_model *model; /* ADOPT, FREE */
} pnp_job;

/* ... and back. */
typedef enum pnp_reply_type {
    PNP_REPLY_REALIZED = 1, /* realization of the current model */
    PNP_REPLY_SWITCHED,     /* a new model and its first realization */
    PNP_REPLY_FAILED,       /* nothing new (the worker logged why) */
} pnp_reply_type;

typedef struct pnp_reply {
    uint32_t type;
    pnp_realization *realization;
} pnp_reply;

/* What run() wants realized. */
typedef struct pnp_request {
    pnp_knobs knobs;
    int given_voice;
    uint64_t context_serial;
} pnp_request;

typedef struct pnp_plugin {
    /* host features and ports (set up before run) */
    LV2_URID_Map *map;
    LV2_Worker_Schedule *schedule;
    LV2_Log_Logger logger;
    pnp_urids uris;
    void *port[PNP_NUM_PORTS];
    double rate;

    /* audio thread */
    LV2_Atom_Forge forge;  /* midi_out */
    LV2_Atom_Forge notify; /* notify */
    int64_t block_start;   /* absolute frame of the current block */
    uint32_t block_frames;
    int64_t last_event; /* frame of the last event written this block */
    pnp_clock clock;
    pnp_notes notes;
    pn_rng rng;          /* the sonorities' draws */
    pn_rng humanize_rng; /* velocities: a stream of its own, so a draw ahead changes no note */
    float last_seed;
    uint64_t seed_used;
    pnp_realization *live;      /* what steps draw from */
    int in_flight;              /* a REALIZE / LOAD / ADOPT job is out */
    int want_notify;            /* tell the notify port the rule-set path */
    const void *reported_model; /* whose selection the notify port told last (compared only) */
    uint64_t reported_mask;
    int panic_pending;
    pnp_request last_sent; /* what the job in flight (or the last one) asked */
    int last_failed;       /* the last job failed: do not resend it */
    pnp_model *retired[4]; /* models to hand back to the worker for freeing */
    int num_retired;
    char load_path[PNP_MAX_PATH]; /* a rule-set file waiting to be loaded */
    int load_pending;
    /* the music */
    int has_context;
    int context[PNP_MAX_VOICES]; /* the last sonority drawn (rule-set pitches) */
    /* Drawn ahead: the next steps' sonorities, oldest first, each drawn
     * once the realization of its context is installed (not when its step
     * comes; one draw a block), so that the
     * worker runs up to PNP_AHEAD_MAX steps ahead of the music. The newest
     * is `context`. Rule-set pitches. */
    int ahead[PNP_AHEAD_MAX][PNP_MAX_VOICES];
    int num_ahead;
    int drew_ahead;              /* this block drew (ahead, or a step's sonority now) */
    int sounded[PNP_MAX_VOICES]; /* the last sonority sounded */
    int has_sounded;             /* to go back to when the drawn ones are dropped */
    uint64_t context_serial;     /* which context: 0 the start, else a step's serial */
    uint64_t serial_counter;     /* serials of steps, never reused */
    int held[16];                /* input notes held, the latest last */
    int num_held;
    float last_port[PNP_NUM_PORTS]; /* port values at the last block, for change detection */
    uint32_t late_steps;
    int enabled;
    int ran;    /* run() has been called since instantiate */
    int active; /* between activate() and deactivate() (main thread) */

    /* worker thread (and instantiate, activate and restore, when no job
     * is in flight) */
    pnp_model *worker_model;

    /* main thread -> audio thread: a model restore() built while running */
    _Atomic(pnp_model *) restored;
} pnp_plugin;

/* ---- reading the control ports (any thread that may read them) ---- */

/* An input control port's value held to its Turtle range (ports.h): the
 * default when unconnected, NaN or infinite. A host may send anything;
 * nothing after this sees a value outside the range. */
static inline float pnp_port_value(const pnp_plugin *self, pnp_port port)
{
    const float *p = self->port[port];
    return pnp_port_sanitize(port, p ? *p : NAN);
}

/* The same rounded to an integer (integer, toggle and enumeration ports). */
static inline int pnp_port_int(const pnp_plugin *self, pnp_port port)
{
    return (int)lrintf(pnp_port_value(self, port));
}

/* The style knobs. */
static inline pnp_knobs pnp_port_knobs(const pnp_plugin *self)
{
    pnp_knobs k;
    k.log2_lambda_w = pnp_port_value(self, PNP_LOG2_LAMBDA_W);
    k.alpha = pnp_port_value(self, PNP_ALPHA);
    return k;
}

/* worker.c */
LV2_Worker_Status pnp_work(LV2_Handle instance, LV2_Worker_Respond_Function respond,
                           LV2_Worker_Respond_Handle handle, uint32_t size, const void *data);
LV2_Worker_Status pnp_work_response(LV2_Handle instance, uint32_t size, const void *body);
/* Realizes and draws the first `steps` steps ahead on the calling thread,
 * as a synchronous worker would in the first blocks: the same draws from
 * the same realizations, so the same notes, with those steps' re-solves
 * done before the music starts. Only while no job is in flight (the worker
 * touches the model then); otherwise run() asks the worker as usual.
 * activate(). */
void pnp_prime(pnp_plugin *self, int steps);
/* Sends what is waiting (retired models, a restored model, a file to load,
 * a new realization) when no job is in flight; the notes of a rule set a
 * synchronous worker replaced meanwhile end at absolute frame `frame`.
 * Audio thread. */
void pnp_schedule_pending(pnp_plugin *self, int64_t frame);
/* Installs a realization (run(), or activate() drawing ahead): a new
 * model also retires the old one. */
void pnp_install(pnp_plugin *self, pnp_realization *r);
/* The music starts afresh from the live realization of a new model:
 * nothing drawn ahead or sounded, the seed's streams restarted when
 * nothing of the old model sounded since activation. */
void pnp_start_model(pnp_plugin *self);
/* run.c */
void pnp_run(LV2_Handle instance, uint32_t n_frames);

/* steps.c (audio thread; activate() also reseeds, restarts the streams and
 * draws ahead, restore() restarts the streams) */
/* Seeds the draws from the seed port's value (held to 0 .. 2^24 - 1, so
 * the conversion is exact), or for 0 from the clock when may_read_clock
 * (activate), else from the generator itself (run). Drops what was drawn
 * ahead with the old seed. */
void pnp_reseed(pnp_plugin *self, float seed_port, int may_read_clock);
/* Starts the draws' and the velocities' random streams again from the
 * seed in use. */
void pnp_restart_streams(pnp_plugin *self);
/* Plays everything due before absolute frame `end`: note-offs and steps,
 * in time order. */
void pnp_play_until(pnp_plugin *self, int64_t end);
/* Note-offs for every sounding note at absolute frame `frame`; what does
 * not fit in the block's buffer is left for the next block's panic. */
void pnp_panic(pnp_plugin *self, int64_t frame);
/* Draws a coming step's sonority ahead from the live realization when it
 * is the realization of the newest context and fewer than the steps of
 * PNP_AHEAD_SECONDS are drawn ahead, whether the transport rolls or
 * stands (not while harmonizing or disabled); the sonority becomes the
 * new context. Returns 1 when it drew. */
int pnp_draw_ahead(pnp_plugin *self);
/* Forgets the sonorities drawn ahead (a new seed, harmonizing switched):
 * the context goes back to the last sonority sounded, under a new serial,
 * so the worker realizes it again. */
void pnp_drop_ahead(pnp_plugin *self);
/* A knob moved: keeps the sonorities drawn ahead whose steps fit whole in
 * PNP_KNOB_AHEAD_SECONDS (at least one) and forgets the later ones; the
 * newest kept one becomes the context again, under a new serial, so the
 * worker realizes it with the new knobs. */
void pnp_trim_ahead(pnp_plugin *self);
/* Schedules what is pending and draws ahead when it can, after the ports
 * of the block are read; `frame` is where the music is (absolute). */
void pnp_advance(pnp_plugin *self, int64_t frame);

/* state.c */
extern const void *pnp_state_interface(void);

#endif
