/* pnh: a small LV2 host on lilv, for rendering and for tests.
 *
 * It loads a plugin the way a DAW does (discovery from the Turtle through
 * lilv, URID map, worker, log, state), connects every port, forges the
 * input atom sequence each block from queued events and an optional
 * transport, and hands the output events to a callback.
 *
 * Threads: every call is made from one "main" thread, which is also the
 * audio thread (pnh_run). Only in PNH_WORKER_THREADED mode does the host
 * start a thread of its own, for the plugin's work(). Nothing is printed
 * unless log_to_stderr is set. Errors come back as pn_error codes with a
 * message in a pn_error_info (which may be NULL). */
#ifndef PARNASSUS_LV2HOST_H
#define PARNASSUS_LV2HOST_H

#include <stddef.h>
#include <stdint.h>

#include <lv2/atom/atom.h>
#include <lv2/urid/urid.h>

#include "parnassus/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pnh_host pnh_host;

typedef enum pnh_worker_mode {
    /* schedule_work() calls work() at once and respond() calls
     * work_response() at once, nested inside run(): a freewheeling host. */
    PNH_WORKER_IMMEDIATE = 0,
    /* work() at once; responses are queued and delivered after run(), then
     * end_run() if the plugin has it. */
    PNH_WORKER_END_OF_RUN = 1,
    /* work() on a worker thread fed through a lock-free ring; responses
     * come back through another ring and are delivered after the next
     * run(). */
    PNH_WORKER_THREADED = 2,
} pnh_worker_mode;

/* Optional callbacks for tests, e.g. to count allocations made on the
 * audio thread. audio_enter/audio_leave bracket run(), every
 * work_response() and end_run(); worker_enter/worker_leave bracket work().
 * In PNH_WORKER_IMMEDIATE mode they nest: audio_enter (run), worker_enter
 * (work), audio_enter (work_response), audio_leave, worker_leave,
 * audio_leave. In PNH_WORKER_THREADED mode the worker hooks are called on
 * the worker thread. */
typedef struct pnh_hooks {
    void (*audio_enter)(void *user);
    void (*audio_leave)(void *user);
    void (*worker_enter)(void *user);
    void (*worker_leave)(void *user);
    void *user;
} pnh_hooks;

typedef struct pnh_settings {
    const char *plugin_uri; /* required */
    /* A bundle directory to load (lilv_world_load_bundle); NULL: discover
     * every bundle on LV2_PATH (or lilv's default path). */
    const char *bundle_dir;
    double sample_rate;          /* > 0 (48000) */
    uint32_t max_block;          /* largest nframes of pnh_run, 1..1048576 (4096) */
    size_t atom_capacity;        /* bytes of each atom port buffer, >= 1024 (65536) */
    size_t worker_ring_size;     /* bytes of each worker ring, >= 1024 (65536) */
    pnh_worker_mode worker_mode; /* (PNH_WORKER_IMMEDIATE) */
    int log_to_stderr;           /* nonzero: also print the plugin's log messages (0) */
    int notify_events;           /* nonzero: pnh_run reports the events of every
                                    atom output, not only the MIDI ones (0) */
    /* Directory for state:makePath during a session (plugin-created
     * files); NULL: a fresh directory under $TMPDIR made on first use. */
    const char *scratch_dir;
    pnh_hooks hooks;
} pnh_settings;

void pnh_settings_default(pnh_settings *s);

/* Loads the world, finds the plugin, checks its required features,
 * instantiates it and connects every port. */
pn_error pnh_create(const pnh_settings *s, pnh_host **out, pn_error_info *info);

/* Stops the worker thread, deactivates if needed and frees everything. */
void pnh_free(pnh_host *h);

pn_error pnh_activate(pnh_host *h, pn_error_info *info);
void pnh_deactivate(pnh_host *h);

/* ---- URIDs ---- */
LV2_URID pnh_map(pnh_host *h, const char *uri);
const char *pnh_unmap(pnh_host *h, LV2_URID urid);

/* ---- Ports and controls ---- */

/* Index of the port with that symbol, or -1. */
int pnh_port_index(const pnh_host *h, const char *symbol);
uint32_t pnh_num_ports(const pnh_host *h);
const char *pnh_port_symbol(const pnh_host *h, uint32_t index);

/* Sets an input control port (the value is used from the next block on). */
pn_error pnh_set_control(pnh_host *h, const char *symbol, float value, pn_error_info *info);

/* The current value of a control port, input or output; NaN if there is
 * no control port with that symbol. */
float pnh_get_control(const pnh_host *h, const char *symbol);

/* The same by port index (pnh_port_index), without the search by symbol:
 * for a host's audio thread. */
pn_error pnh_set_control_at(pnh_host *h, int index, float value, pn_error_info *info);
float pnh_control_at(const pnh_host *h, int index);

/* Range of a control port from the Turtle (NaN where not given); returns
 * 0 if there is no such control port. */
int pnh_control_range(const pnh_host *h, const char *symbol, float *def, float *min, float *max);

/* ---- Input events for the next block ----
 *
 * frame counts from the start of the next pnh_run block. An event beyond
 * that block stays queued for a later one (its frame is then taken from
 * the start of that block). Events are forged in frame order; events at the
 * same frame keep the order they were queued in, after the transport's
 * position. The queue holds atom_capacity bytes and 1024 events. */

pn_error pnh_queue_midi(pnh_host *h, int64_t frame, const uint8_t *bytes, uint32_t size,
                        pn_error_info *info);

enum {
    PNH_POS_FRAME = 1u << 0,         /* time:frame, Long */
    PNH_POS_SPEED = 1u << 1,         /* time:speed, Float */
    PNH_POS_BAR = 1u << 2,           /* time:bar, Long */
    PNH_POS_BAR_BEAT = 1u << 3,      /* time:barBeat, Float */
    PNH_POS_BEAT_UNIT = 1u << 4,     /* time:beatUnit, Int */
    PNH_POS_BEATS_PER_BAR = 1u << 5, /* time:beatsPerBar, Float */
    PNH_POS_BPM = 1u << 6,           /* time:beatsPerMinute, Float */
    PNH_POS_BEAT = 1u << 7,          /* time:beat, Double */
    PNH_POS_ALL = (1u << 8) - 1,
};

/* A time:Position; only the fields whose flag is in `fields` are sent. */
typedef struct pnh_position {
    unsigned fields;
    int64_t frame;
    float speed;
    int64_t bar;
    float bar_beat;
    int32_t beat_unit;
    float beats_per_bar;
    float bpm;
    double beat;
} pnh_position;

pn_error pnh_queue_position(pnh_host *h, int64_t frame, const pnh_position *pos,
                            pn_error_info *info);

/* patch:Set of property_uri to an atom:Path value. */
pn_error pnh_queue_patch_set_path(pnh_host *h, int64_t frame, const char *property_uri,
                                  const char *path, pn_error_info *info);

/* patch:Get, of one property or (property_uri NULL) of all. */
pn_error pnh_queue_patch_get(pnh_host *h, int64_t frame, const char *property_uri,
                             pn_error_info *info);

/* Any atom (header and body are copied). */
pn_error pnh_queue_atom(pnh_host *h, int64_t frame, const LV2_Atom *atom, pn_error_info *info);

/* Drops every queued event. */
void pnh_clear_queue(pnh_host *h);

/* ---- Transport ----
 *
 * When enabled, the host keeps a transport position and sends a full
 * time:Position (frame, speed, bar, barBeat, beat, beatUnit, beatsPerBar,
 * beatsPerMinute) at the start of a block where something changed: the
 * first block, a tempo or meter change, start/stop, a locate. With
 * every_block set it sends one at every block, as Ardour does. The
 * position advances only while rolling. Tests that send their own
 * positions leave it disabled (the default). */
typedef struct pnh_transport {
    double bpm;           /* beat units per minute, > 0 (120) */
    double beats_per_bar; /* > 0 (4) */
    int beat_unit;        /* 1, 2, 4, 8, ... (4) */
    int rolling;          /* (1) */
    int every_block;      /* (0) */
} pnh_transport;

void pnh_transport_default(pnh_transport *t);

/* Enables the transport with t, or changes it; NULL disables it. */
pn_error pnh_set_transport(pnh_host *h, const pnh_transport *t, pn_error_info *info);

/* Moves the transport to a frame (beats follow at the current tempo). */
void pnh_transport_locate(pnh_host *h, int64_t frame);

/* The transport's position in beats at the start of the next block. */
double pnh_transport_beat(const pnh_host *h);

/* ---- Running ---- */

typedef struct pnh_event {
    uint32_t port;     /* index of the atom output port */
    uint32_t frame;    /* offset within the block */
    int64_t abs_frame; /* frames since the host's first block */
    LV2_URID type;     /* e.g. midi:MidiEvent */
    uint32_t size;     /* of body */
    const void *body;  /* valid during the callback only */
} pnh_event;

typedef void (*pnh_event_fn)(void *user, const pnh_event *ev);

/* Runs one block of nframes (1..max_block): forges the input sequence,
 * runs the plugin, delivers worker responses (per the worker mode), calls
 * end_run, then calls cb (if not NULL) for every output event in order.
 * Returns the number of output events, or -1 with info set (not activated,
 * nframes out of range). */
long pnh_run(pnh_host *h, uint32_t nframes, pnh_event_fn cb, void *user, pn_error_info *info);

/* Runs the last block of a take, so that nothing is left sounding: the
 * transport (when enabled) stops, and the plugin's input control port
 * designated lv2:enabled (when it has one) is off for this block and gets
 * its value back after it. A plugin that ends its notes when stopped or
 * disabled sends every note-off in this block, whatever its clock follows
 * (one that follows only the host's tempo, or its own, plays on through a
 * stop). The transport stays stopped. Returns what pnh_run returns. */
long pnh_run_last(pnh_host *h, uint32_t nframes, pnh_event_fn cb, void *user, pn_error_info *info);

/* The bundle a program of this build should load: `given` when not NULL;
 * else NULL when LV2_PATH is set (lilv discovers it there); else
 * <build>/lv2/<name> of the build tree the program runs from
 * (<build>/apps/<program dir>/<program>) when it has a manifest, written
 * to buf; else NULL (lilv's default path). */
const char *pnh_find_bundle(const char *given, const char *name, char *buf, size_t size);

/* Frames run so far. */
int64_t pnh_frames(const pnh_host *h);

/* ---- Worker ---- */
typedef struct pnh_worker_stats {
    uint64_t scheduled; /* schedule_work() calls accepted */
    uint64_t completed; /* work() calls that returned */
    uint64_t responses; /* work_response() calls made */
    uint64_t refused;   /* schedule_work() calls refused (ring full) */
} pnh_worker_stats;

void pnh_worker_stats_get(const pnh_host *h, pnh_worker_stats *out);

/* Waits until every scheduled job has completed (its responses may still
 * wait for the next pnh_run). Returns 1 when idle, 0 on timeout. */
int pnh_wait_worker_idle(pnh_host *h, double timeout_seconds);

/* ---- Log ---- */

/* Every message the plugin logged so far, each line prefixed with its
 * type ("error: ", "warning: ", "note: ", "trace: "); at most 64 KiB are
 * kept. Call it while the worker is idle. */
const char *pnh_log_text(const pnh_host *h);
/* Number of log:Error messages so far. */
int pnh_log_errors(const pnh_host *h);
void pnh_log_clear(pnh_host *h);

/* ---- State and presets ---- */

/* Saves the plugin's state (and its input control values) to dir/state.ttl
 * with lilv; *out_file (if not NULL) gets a malloc'ed path of the file. */
pn_error pnh_state_save(pnh_host *h, const char *dir, char **out_file, pn_error_info *info);

/* Restores a state file written by pnh_state_save (or any lilv state). */
pn_error pnh_state_restore(pnh_host *h, const char *file, pn_error_info *info);

/* Calls fn for every preset of the plugin; returns how many. */
int pnh_preset_list(pnh_host *h, void (*fn)(void *user, const char *uri, const char *label),
                    void *user);

/* Finds a preset by rdfs:label or URI and restores it. PN_ERR_INVALID with
 * a message naming it if there is no such preset. */
pn_error pnh_preset_apply(pnh_host *h, const char *label_or_uri, pn_error_info *info);

/* The directory of the plugin's bundle (as loaded), into buf; 0 when it
 * is not a local directory or does not fit. */
int pnh_bundle_dir(const pnh_host *h, char *buf, size_t size);

/* The control port values a preset sets, without applying them: fn is
 * called for each (symbol, value). It reads only the host's world, so a
 * live host may call it on its control thread while another thread runs
 * the plugin (state properties such as a rule set are not reported). */
pn_error pnh_preset_port_values(pnh_host *h, const char *label_or_uri,
                                void (*fn)(void *user, const char *symbol, float value), void *user,
                                pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
