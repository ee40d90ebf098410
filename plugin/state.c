/* State: the rule set (its path, mapped for the session, and its JSON
 * text, so a session stays self-contained) and the seed in use.
 *
 * restore() builds the new model right there (it may take a second or two;
 * hosts call restore off the audio thread). Before the first run() nothing
 * else runs, so it is installed at once; later it goes to run() through an
 * atomic pointer and to the worker as an ADOPT job, and the old model is
 * freed by the worker. */
#include <stdlib.h>
#include <string.h>

#include <lv2/state/state.h>

#include "default_rules.h"
#include "plugin.h"

static const LV2_State_Map_Path *find_map_path(const LV2_Feature *const *features)
{
    for (int i = 0; features && features[i]; ++i)
        if (!strcmp(features[i]->URI, LV2_STATE__mapPath))
            return features[i]->data;
    return NULL;
}

/* The model whose rule set the session holds: the one playing. */
static const pnp_model *playing(const pnp_plugin *self)
{
    return self->live ? self->live->model : self->worker_model;
}

static LV2_State_Status save(LV2_Handle instance, LV2_State_Store_Function store,
                             LV2_State_Handle handle, uint32_t flags,
                             const LV2_Feature *const *features)
{
    (void)flags;
    pnp_plugin *self = (pnp_plugin *)instance;
    const pnp_urids *u = &self->uris;
    const int64_t seed = (int64_t)self->seed_used;
    LV2_State_Status status = store(handle, u->pn_seedUsed, &seed, sizeof seed, u->atom_Long,
                                    LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE);
    const pnp_model *m = playing(self);
    if (!m || !m->path)
        return status; /* the built-in set: nothing to keep */
    const LV2_State_Map_Path *map_path = find_map_path(features);
    char *abstract = map_path ? map_path->abstract_path(map_path->handle, m->path) : NULL;
    const char *path = abstract ? abstract : m->path;
    store(handle, u->pn_ruleSet, path, strlen(path) + 1, u->atom_Path,
          LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE);
    free(abstract);
    return store(handle, u->pn_ruleSetText, m->text, m->text_len + 1, u->atom_String,
                 LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE);
}

/* A NUL-terminated string value of `type` (or atom:String), else NULL. */
static const char *string_value(LV2_State_Retrieve_Function retrieve, LV2_State_Handle handle,
                                LV2_URID key, LV2_URID type, const pnp_urids *u, size_t *len)
{
    size_t size = 0;
    uint32_t got_type = 0, got_flags = 0;
    const char *value = retrieve(handle, key, &size, &got_type, &got_flags);
    if (!value || size < 1 || (got_type != type && got_type != u->atom_String) ||
        value[size - 1] != '\0')
        return NULL;
    *len = size - 1;
    return value;
}

static void install(pnp_plugin *self, pnp_model *m)
{
    if (!self->ran) {
        /* nothing runs yet: no job can be in flight */
        pnp_model *old = self->worker_model;
        self->worker_model = m;
        self->live = pnp_model_current(m);
        pnp_model_free(old);
        /* activate() may have drawn ahead from the old set: start as if
         * this one had been there when it ran */
        pnp_start_model(self);
        if (self->active)
            pnp_prime(self, PNP_PRIME_STEPS);
        return;
    }
    pnp_model *unseen = atomic_exchange(&self->restored, m);
    pnp_model_free(unseen); /* run() never saw it */
}

static LV2_State_Status restore(LV2_Handle instance, LV2_State_Retrieve_Function retrieve,
                                LV2_State_Handle handle, uint32_t flags,
                                const LV2_Feature *const *features)
{
    (void)flags;
    pnp_plugin *self = (pnp_plugin *)instance;
    const pnp_urids *u = &self->uris;

    size_t size = 0;
    uint32_t type = 0, vflags = 0;
    const void *seed = retrieve(handle, u->pn_seedUsed, &size, &type, &vflags);
    if (seed && type == u->atom_Long && size == sizeof(int64_t)) {
        int64_t s;
        memcpy(&s, seed, sizeof s);
        self->seed_used = (uint64_t)s;
        pn_rng_seed(&self->rng, self->seed_used);
    }

    size_t path_len = 0, text_len = 0;
    const char *stored_path =
        string_value(retrieve, handle, u->pn_ruleSet, u->atom_Path, u, &path_len);
    const char *text =
        string_value(retrieve, handle, u->pn_ruleSetText, u->atom_String, u, &text_len);
    const LV2_State_Map_Path *map_path = find_map_path(features);
    char *path = NULL;
    if (stored_path && path_len > 0)
        path =
            map_path ? map_path->absolute_path(map_path->handle, stored_path) : strdup(stored_path);

    const pnp_model *now = playing(self);
    const pnp_knobs knobs = pnp_port_knobs(self);
    pnp_model *m = NULL;
    pn_error_info info = {0};
    pn_error err = PN_OK;
    if (text) {
        if (now && now->path && path && !strcmp(now->path, path) && now->text_len == text_len &&
            !memcmp(now->text, text, text_len)) {
            free(path);
            return LV2_STATE_SUCCESS; /* already playing */
        }
        err = pnp_model_create(path ? path : "saved rule set", text, text_len, path, &knobs, &m,
                               &info);
    } else if (path) {
        err = pnp_model_load(path, &knobs, &m, &info);
    } else if (now && now->path) {
        /* a state without a rule set: back to the built-in one */
        err = pnp_model_create("built-in rule set (chorale-major)", pnp_default_rules,
                               (size_t)pnp_default_rules_size, NULL, &knobs, &m, &info);
    }
    free(path);
    if (err != PN_OK) {
        lv2_log_error(
            &self->logger,
            "parnassus: state: rule set not restored, the previous one keeps playing: %s\n",
            info.message);
        return LV2_STATE_ERR_UNKNOWN;
    }
    if (m)
        install(self, m);
    return LV2_STATE_SUCCESS;
}

const void *pnp_state_interface(void)
{
    static const LV2_State_Interface state = {save, restore};
    return &state;
}
