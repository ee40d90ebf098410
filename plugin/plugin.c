/* parnassus.lv2: rule-realized four-voice sonorities, in time with the
 * host (docs/plugin.md). This file is the plugin's life: instantiate (the
 * first realization), the ports, activate, cleanup, the extension data and
 * the descriptor. run() is in run.c and the steps it plays in steps.c; the
 * solver runs in the LV2 Worker (worker.c); state is in state.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <lv2/midi/midi.h>
#include <lv2/patch/patch.h>
#include <lv2/state/state.h>
#include <lv2/time/time.h>

#include "default_rules.h"
#include "parnassus/solver.h"
#include "plugin.h"
#include "uris.h"

/* ---- set-up (main thread) ---- */

static void map_urids(LV2_URID_Map *map, pnp_urids *u)
{
    u->atom_Blank = map->map(map->handle, LV2_ATOM__Blank);
    u->atom_Object = map->map(map->handle, LV2_ATOM__Object);
    u->atom_Sequence = map->map(map->handle, LV2_ATOM__Sequence);
    u->atom_Path = map->map(map->handle, LV2_ATOM__Path);
    u->atom_String = map->map(map->handle, LV2_ATOM__String);
    u->atom_Float = map->map(map->handle, LV2_ATOM__Float);
    u->atom_Double = map->map(map->handle, LV2_ATOM__Double);
    u->atom_Int = map->map(map->handle, LV2_ATOM__Int);
    u->atom_Long = map->map(map->handle, LV2_ATOM__Long);
    u->atom_Bool = map->map(map->handle, LV2_ATOM__Bool);
    u->atom_URID = map->map(map->handle, LV2_ATOM__URID);
    u->midi_MidiEvent = map->map(map->handle, LV2_MIDI__MidiEvent);
    u->time_Position = map->map(map->handle, LV2_TIME__Position);
    u->time_bar = map->map(map->handle, LV2_TIME__bar);
    u->time_barBeat = map->map(map->handle, LV2_TIME__barBeat);
    u->time_beatUnit = map->map(map->handle, LV2_TIME__beatUnit);
    u->time_beatsPerBar = map->map(map->handle, LV2_TIME__beatsPerBar);
    u->time_beatsPerMinute = map->map(map->handle, LV2_TIME__beatsPerMinute);
    u->time_frame = map->map(map->handle, LV2_TIME__frame);
    u->time_speed = map->map(map->handle, LV2_TIME__speed);
    u->patch_Set = map->map(map->handle, LV2_PATCH__Set);
    u->patch_Get = map->map(map->handle, LV2_PATCH__Get);
    u->patch_property = map->map(map->handle, LV2_PATCH__property);
    u->patch_value = map->map(map->handle, LV2_PATCH__value);
    u->pn_ruleSet = map->map(map->handle, PNP__ruleSet);
    u->pn_ruleSetText = map->map(map->handle, PNP__ruleSetText);
    u->pn_seedUsed = map->map(map->handle, PNP__seedUsed);
    u->pn_selectedRules = map->map(map->handle, PNP__selectedRules);
}

static void cleanup(LV2_Handle instance);

static LV2_Handle instantiate(const LV2_Descriptor *descriptor, double rate,
                              const char *bundle_path, const LV2_Feature *const *features)
{
    (void)descriptor;
    (void)bundle_path;
    pnp_plugin *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    LV2_Log_Log *log = NULL;
    for (int i = 0; features && features[i]; ++i) {
        if (!strcmp(features[i]->URI, LV2_URID__map))
            self->map = features[i]->data;
        else if (!strcmp(features[i]->URI, LV2_WORKER__schedule))
            self->schedule = features[i]->data;
        else if (!strcmp(features[i]->URI, LV2_LOG__log))
            log = features[i]->data;
    }
    lv2_log_logger_init(&self->logger, self->map, log);
    if (!self->map || !self->schedule) {
        lv2_log_error(&self->logger, "parnassus: the host lacks %s\n",
                      !self->map ? LV2_URID__map : LV2_WORKER__schedule);
        free(self);
        return NULL;
    }
    /* every re-realization's speed depends on it, so the host's log says it */
    pn_blas_info blas;
    pn_blas_describe(&blas);
    if (blas.underused)
        lv2_log_warning(&self->logger,
                        "parnassus: OpenBLAS runs its %s kernels, which leave this CPU's AVX2 "
                        "and FMA unused, so each re-realization takes longer; "
                        "OPENBLAS_CORETYPE=%s in the host's environment selects faster "
                        "ones\n",
                        blas.core, blas.suggested_core);
    map_urids(self->map, &self->uris);
    lv2_atom_forge_init(&self->forge, self->map);
    lv2_atom_forge_init(&self->notify, self->map);
    self->rate = rate;
    pnp_clock_init(&self->clock, rate);
    pnp_notes_init(&self->notes);
    atomic_init(&self->restored, NULL);
    for (int p = 0; p < PNP_NUM_PORTS; ++p)
        self->last_port[p] = NAN;
    self->seed_used = 1;
    pn_rng_seed(&self->rng, self->seed_used);
    self->enabled = 1;

    /* the first realization exists before the first run(); its knobs are
     * the ports' defaults read as run() reads them (no port is connected
     * yet), so that a host's default values need no second solve */
    const pnp_knobs knobs = pnp_port_knobs(self);
    pn_error_info info = {0};
    pnp_model *model = NULL;
    if (pnp_model_create("built-in rule set (chorale-major)", pnp_default_rules,
                         (size_t)pnp_default_rules_size, NULL, &knobs, &model, &info) != PN_OK) {
        lv2_log_error(&self->logger, "parnassus: %s\n", info.message);
        cleanup(self);
        return NULL;
    }
    self->worker_model = model;
    self->live = pnp_model_current(model);
    return self;
}

static void connect_port(LV2_Handle instance, uint32_t port, void *data)
{
    pnp_plugin *self = (pnp_plugin *)instance;
    if (port < PNP_NUM_PORTS)
        self->port[port] = data;
}

static void activate(LV2_Handle instance)
{
    pnp_plugin *self = (pnp_plugin *)instance;
    /* notes of an earlier activation end at the first block */
    self->panic_pending = self->notes.count > 0;
    self->block_start = 0;
    pnp_clock_reset(&self->clock, 0);
    /* the ports the steps drawn below depend on, as the first block will
     * compare them (a change made while deactivated is no change then) */
    static const pnp_port drawn_with[] = {PNP_SEED, PNP_LOG2_LAMBDA_W, PNP_ALPHA, PNP_INPUT_MODE};
    for (size_t i = 0; i < sizeof drawn_with / sizeof drawn_with[0]; ++i)
        self->last_port[drawn_with[i]] = pnp_port_value(self, drawn_with[i]);
    pnp_reseed(self, self->last_port[PNP_SEED], 1);
    self->has_context = 0;
    self->context_serial = 0;
    self->num_ahead = 0;
    self->has_sounded = 0;
    self->num_held = 0;
    self->enabled = pnp_port_value(self, PNP_ENABLE) > 0.5f;
    /* the step length in use, so that no more is drawn than it allows */
    pnp_clock_configure(&self->clock, 0, pnp_port_int(self, PNP_SYNC),
                        pnp_port_value(self, PNP_BPM), pnp_port_int(self, PNP_DIVISION));
    self->active = 1;
    pnp_prime(self, PNP_PRIME_STEPS);
}

static void deactivate(LV2_Handle instance)
{
    pnp_plugin *self = (pnp_plugin *)instance;
    self->active = 0;
}

static void cleanup(LV2_Handle instance)
{
    pnp_plugin *self = (pnp_plugin *)instance;
    /* every model the instance still knows, each freed once */
    pnp_model *all[8];
    int n = 0;
    pnp_model *candidates[8] = {self->worker_model, self->live ? self->live->model : NULL,
                                atomic_exchange(&self->restored, NULL)};
    int c = 3;
    for (int i = 0; i < self->num_retired && c < 8; ++i)
        candidates[c++] = self->retired[i];
    for (int i = 0; i < c; ++i) {
        int seen = !candidates[i];
        for (int j = 0; j < n && !seen; ++j)
            seen = all[j] == candidates[i];
        if (!seen)
            all[n++] = candidates[i];
    }
    for (int i = 0; i < n; ++i)
        pnp_model_free(all[i]);
    free(self);
}

static const void *extension_data(const char *uri)
{
    static const LV2_Worker_Interface worker = {pnp_work, pnp_work_response, NULL};
    if (!strcmp(uri, LV2_WORKER__interface))
        return &worker;
    if (!strcmp(uri, LV2_STATE__interface))
        return pnp_state_interface();
    return NULL;
}

static const LV2_Descriptor descriptor = {
    PNP_URI, instantiate, connect_port, activate, pnp_run, deactivate, cleanup, extension_data,
};

LV2_SYMBOL_EXPORT const LV2_Descriptor *lv2_descriptor(uint32_t index)
{
    return index == 0 ? &descriptor : NULL;
}
