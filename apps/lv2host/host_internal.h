/* The host's insides, shared by the files of apps/lv2host. */
#ifndef PARNASSUS_LV2HOST_INTERNAL_H
#define PARNASSUS_LV2HOST_INTERNAL_H

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>

#include <lilv/lilv.h>
#include <lv2/atom/forge.h>
#include <lv2/log/log.h>
#include <lv2/options/options.h>
#include <lv2/state/state.h>
#include <lv2/worker/worker.h>

#include "lv2host.h"
#include "ring.h"

/* ---- URID table (urid.c) ---- */
typedef struct pnh_urid_table {
    pthread_mutex_t lock; /* map may be called from the worker thread */
    char **uris;          /* uris[id - 1] */
    size_t count, capacity;
} pnh_urid_table;

int pnh_urid_init(pnh_urid_table *t);
void pnh_urid_free(pnh_urid_table *t);
LV2_URID pnh_urid_map(LV2_URID_Map_Handle handle, const char *uri);
const char *pnh_urid_unmap(LV2_URID_Unmap_Handle handle, LV2_URID urid);

/* ---- Log (log.c) ---- */
enum { PNH_LOG_SIZE = 64 * 1024 };
typedef struct pnh_log {
    pthread_mutex_t lock;
    char text[PNH_LOG_SIZE];
    size_t used;
    int errors;
    int to_stderr;
    LV2_URID error, warning, note, trace;
} pnh_log;

void pnh_log_init(pnh_log *log, LV2_URID_Map *map, int to_stderr);
void pnh_log_free(pnh_log *log);
int pnh_log_vprintf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, va_list ap)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 0)))
#endif
    ;
int pnh_log_printf(LV2_Log_Handle handle, LV2_URID type, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- Ports ---- */
typedef enum pnh_port_type {
    PNH_PORT_OTHER = 0, /* left unconnected (lv2:connectionOptional) */
    PNH_PORT_CONTROL,
    PNH_PORT_ATOM,
    PNH_PORT_AUDIO, /* audio and CV: a zeroed buffer of max_block floats */
} pnh_port_type;

typedef struct pnh_port {
    const LilvPort *lport;
    char *symbol;
    pnh_port_type type;
    int is_input;
    int is_midi; /* atom output that supports midi:MidiEvent */
    float value; /* control ports */
    float def, min, max;
    void *buf; /* atom and audio ports */
} pnh_port;

/* ---- Input queue (queue.c) ---- */
enum { PNH_MAX_QUEUED = 1024 };
typedef struct pnh_queued {
    int64_t frame;
    size_t offset; /* of the atom in queue_buf */
    uint32_t seq;  /* queue order, for a stable sort */
} pnh_queued;

/* ---- Worker (worker.c) ---- */
typedef struct pnh_worker {
    pnh_worker_mode mode;
    const LV2_Worker_Interface *iface;
    pnh_ring requests, responses;
    void *scratch;      /* a message being handled by the worker thread */
    void *resp_scratch; /* a response being delivered on the audio thread */
    uint32_t scratch_size;
    pthread_t thread;
    int thread_started;
    sem_t wake;
    int sem_ready;
    atomic_int quit;
    atomic_uint_fast64_t scheduled, completed, responses_done, refused;
} pnh_worker;

struct pnh_host {
    pnh_settings s;
    char *plugin_uri;
    char *bundle_dir;
    char *scratch_dir; /* owned; created lazily for makePath */
    int scratch_made;

    LilvWorld *world;
    const LilvPlugin *plugin;
    LilvInstance *instance;
    int active;

    pnh_urid_table urids;
    LV2_URID_Map map;
    LV2_URID_Unmap unmap;
    pnh_log log;
    LV2_Log_Log log_feature;
    LV2_Worker_Schedule schedule;
    LV2_State_Make_Path make_path;
    LV2_State_Map_Path map_path;
    LV2_State_Free_Path free_path;
    LV2_Options_Option options[6];
    int32_t opt_min_block, opt_max_block, opt_seq_size;
    float opt_rate;
    LV2_Feature f_map, f_unmap, f_log, f_schedule, f_make_path, f_map_path, f_free_path, f_options,
        f_bounded;
    const LV2_Feature *features[10];

    pnh_port *ports;
    uint32_t num_ports;
    int control_in; /* index of the main atom input (lv2:designation
                       lv2:control, else the first atom input), or -1 */
    int enabled_in; /* index of the input control port designated
                       lv2:enabled, or -1 */

    struct {
        LV2_URID atom_Chunk, atom_Sequence, atom_Path, atom_URID, atom_Float, atom_Int, atom_Double,
            atom_Long, atom_Bool, midi_MidiEvent, time_Position, time_frame, time_speed, time_bar,
            time_barBeat, time_beat, time_beatUnit, time_beatsPerBar, time_beatsPerMinute,
            patch_Set, patch_Get, patch_property, patch_value, param_sampleRate,
            bufsz_minBlockLength, bufsz_maxBlockLength, bufsz_sequenceSize;
    } u;

    LV2_Atom_Forge forge;       /* forges the input sequence in pnh_run */
    LV2_Atom_Forge queue_forge; /* forges queued events into queue_buf */
    unsigned char *queue_buf;
    size_t queue_used;
    pnh_queued queued[PNH_MAX_QUEUED];
    int num_queued;
    uint32_t queue_seq;

    int transport_on;
    pnh_transport transport;
    int transport_dirty;
    int64_t transport_frame;
    double transport_beats;

    int64_t frames;
    pnh_worker worker;
};

/* queue.c: forges the events of the next nframes into the control input,
 * and keeps the later ones. */
void pnh_forge_input(pnh_host *h, uint32_t nframes);
void pnh_transport_advance(pnh_host *h, uint32_t nframes);

/* worker.c */
pn_error pnh_worker_init(pnh_host *h, pn_error_info *info);
pn_error pnh_worker_start(pnh_host *h, pn_error_info *info); /* after instantiate */
void pnh_worker_stop(pnh_host *h);
/* Delivers the responses still queued (after pnh_worker_stop), so that
 * whatever they carry reaches the plugin before cleanup. */
void pnh_worker_drain(pnh_host *h);
void pnh_worker_free(pnh_host *h);
LV2_Worker_Status pnh_worker_schedule(LV2_Worker_Schedule_Handle handle, uint32_t size,
                                      const void *data);
/* Delivers the queued responses, then calls end_run (audio thread). */
void pnh_worker_after_run(pnh_host *h);

/* state.c: the path features given at instantiate. */
void pnh_state_init_features(pnh_host *h);
void pnh_state_cleanup(pnh_host *h);

/* hooks */
void pnh_audio_enter(const pnh_host *h);
void pnh_audio_leave(const pnh_host *h);

#endif
