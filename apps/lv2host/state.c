/* State: the path features of a session (makePath, mapPath, freePath),
 * saving and restoring state with lilv, and presets. */
#include "host_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lv2/presets/presets.h>

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* The scratch directory, made on first use when none was given. */
static const char *scratch(pnh_host *h)
{
    if (h->scratch_dir) {
        mkdir(h->scratch_dir, 0755);
        return h->scratch_dir;
    }
    const char *tmp = getenv("TMPDIR");
    char templ[4096];
    snprintf(templ, sizeof templ, "%s/pnh-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(templ))
        return NULL;
    h->scratch_dir = dup_str(templ);
    h->scratch_made = h->scratch_dir != NULL;
    return h->scratch_dir;
}

static char *make_path(LV2_State_Make_Path_Handle handle, const char *path)
{
    pnh_host *h = handle;
    const char *dir = scratch(h);
    if (!dir || !path)
        return NULL;
    size_t n = strlen(dir) + strlen(path) + 2;
    char *full = malloc(n);
    if (!full)
        return NULL;
    snprintf(full, n, "%s/%s", dir, path);
    /* create the directories the relative path names */
    for (char *p = full + strlen(dir) + 1; (p = strchr(p, '/')) != NULL; ++p) {
        *p = '\0';
        mkdir(full, 0755);
        *p = '/';
    }
    return full;
}

/* Outside a save or restore, paths map to themselves. */
static char *identity_path(LV2_State_Map_Path_Handle handle, const char *path)
{
    (void)handle;
    return path ? dup_str(path) : NULL;
}

static void free_path(LV2_State_Free_Path_Handle handle, char *path)
{
    (void)handle;
    free(path);
}

void pnh_state_init_features(pnh_host *h)
{
    h->make_path.handle = h;
    h->make_path.path = make_path;
    h->map_path.handle = h;
    h->map_path.abstract_path = identity_path;
    h->map_path.absolute_path = identity_path;
    h->free_path.handle = h;
    h->free_path.free_path = free_path;
}

void pnh_state_cleanup(pnh_host *h)
{
    if (h->scratch_made && h->scratch_dir)
        rmdir(h->scratch_dir); /* only if the plugin left nothing there */
}

/* Features for lilv's state calls: lilv adds its own path features, which
 * must not be shadowed by the session's identity ones. */
static void state_features(const pnh_host *h, const LV2_Feature **out)
{
    int n = 0;
    out[n++] = &h->f_map;
    out[n++] = &h->f_unmap;
    out[n++] = &h->f_log;
    out[n++] = &h->f_schedule;
    out[n++] = &h->f_options;
    out[n] = NULL;
}

static const void *get_port_value(const char *symbol, void *user, uint32_t *size, uint32_t *type)
{
    pnh_host *h = user;
    int i = pnh_port_index(h, symbol);
    if (i < 0 || h->ports[i].type != PNH_PORT_CONTROL || !h->ports[i].is_input) {
        *size = *type = 0;
        return NULL;
    }
    *size = sizeof(float);
    *type = h->u.atom_Float;
    return &h->ports[i].value;
}

static void set_port_value(const char *symbol, void *user, const void *value, uint32_t size,
                           uint32_t type)
{
    pnh_host *h = user;
    int i = pnh_port_index(h, symbol);
    if (i < 0 || h->ports[i].type != PNH_PORT_CONTROL || !h->ports[i].is_input)
        return;
    float v;
    if (type == h->u.atom_Float && size == sizeof(float))
        memcpy(&v, value, sizeof v);
    else if (type == h->u.atom_Double && size == sizeof(double)) {
        double d;
        memcpy(&d, value, sizeof d);
        v = (float)d;
    } else if ((type == h->u.atom_Int || type == h->u.atom_Bool) && size == sizeof(int32_t)) {
        int32_t k;
        memcpy(&k, value, sizeof k);
        v = (float)k;
    } else if (type == h->u.atom_Long && size == sizeof(int64_t)) {
        int64_t k;
        memcpy(&k, value, sizeof k);
        v = (float)k;
    } else {
        return;
    }
    h->ports[i].value = v;
}

pn_error pnh_state_save(pnh_host *h, const char *dir, char **out_file, pn_error_info *info)
{
    if (out_file)
        *out_file = NULL;
    if (!h || !dir)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: state save needs a directory");
    pnh_wait_worker_idle(h, 10.0);
    const LV2_Feature *features[8];
    state_features(h, features);
    LilvState *st = lilv_state_new_from_instance(
        h->plugin, h->instance, &h->map, h->scratch_dir, dir, dir, dir, get_port_value, h,
        LV2_STATE_IS_POD | LV2_STATE_IS_PORTABLE, features);
    if (!st)
        return pn_fail(info, PN_ERR_IO, "lv2 host: could not take the plugin's state");
    int rc = lilv_state_save(h->world, &h->map, &h->unmap, st, NULL, dir, "state.ttl");
    lilv_state_free(st);
    if (rc != 0)
        return pn_fail(info, PN_ERR_IO, "lv2 host: could not save the state to %s", dir);
    if (out_file) {
        size_t n = strlen(dir) + sizeof "/state.ttl";
        *out_file = malloc(n);
        if (!*out_file)
            return pn_fail(info, PN_ERR_NOMEM, "lv2 host: out of memory");
        snprintf(*out_file, n, "%s/state.ttl", dir);
    }
    return PN_OK;
}

/* Restores st; work() must not run concurrently with restore(). */
static void restore(pnh_host *h, LilvState *st)
{
    pnh_wait_worker_idle(h, 10.0);
    const LV2_Feature *features[8];
    state_features(h, features);
    lilv_state_restore(st, h->instance, set_port_value, h, 0, features);
}

pn_error pnh_state_restore(pnh_host *h, const char *file, pn_error_info *info)
{
    if (!h || !file)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: state restore needs a file");
    FILE *fp = fopen(file, "r");
    if (!fp)
        return pn_fail(info, PN_ERR_IO, "lv2 host: %s: %s", file, strerror(errno));
    fclose(fp);
    LilvState *st = lilv_state_new_from_file(h->world, &h->map, NULL, file);
    if (!st)
        return pn_fail(info, PN_ERR_PARSE, "lv2 host: %s: not a state file lilv can read", file);
    restore(h, st);
    lilv_state_free(st);
    return PN_OK;
}

/* Calls fn for each preset; stops and returns its node when match
 * (label or URI) is found. */
static int each_preset(pnh_host *h, const char *match,
                       void (*fn)(void *user, const char *uri, const char *label), void *user,
                       LilvNode **found)
{
    LilvNode *pset = lilv_new_uri(h->world, LV2_PRESETS__Preset);
    LilvNode *rdfs_label = lilv_new_uri(h->world, LILV_NS_RDFS "label");
    LilvNodes *presets = lilv_plugin_get_related(h->plugin, pset);
    int count = 0;
    LILV_FOREACH(nodes, i, presets)
    {
        const LilvNode *p = lilv_nodes_get(presets, i);
        lilv_world_load_resource(h->world, p);
        LilvNodes *labels = lilv_world_find_nodes(h->world, p, rdfs_label, NULL);
        const char *label = labels && lilv_nodes_size(labels)
                                ? lilv_node_as_string(lilv_nodes_get_first(labels))
                                : "";
        const char *uri = lilv_node_as_uri(p);
        ++count;
        if (fn)
            fn(user, uri, label);
        int hit = match && (strcmp(match, label) == 0 || strcmp(match, uri) == 0);
        lilv_nodes_free(labels);
        if (hit) {
            *found = lilv_node_duplicate(p);
            break;
        }
    }
    lilv_nodes_free(presets);
    lilv_node_free(rdfs_label);
    lilv_node_free(pset);
    return count;
}

int pnh_preset_list(pnh_host *h, void (*fn)(void *user, const char *uri, const char *label),
                    void *user)
{
    if (!h)
        return 0;
    return each_preset(h, NULL, fn, user, NULL);
}

/* A preset's state, found by label or URI; NULL with info set. */
static LilvState *preset_state(pnh_host *h, const char *label_or_uri, pn_error_info *info)
{
    if (!h || !label_or_uri) {
        pn_fail(info, PN_ERR_INVALID, "lv2 host: no preset named");
        return NULL;
    }
    LilvNode *preset = NULL;
    each_preset(h, label_or_uri, NULL, NULL, &preset);
    if (!preset) {
        pn_fail(info, PN_ERR_INVALID, "lv2 host: plugin <%s> has no preset '%s'", h->plugin_uri,
                label_or_uri);
        return NULL;
    }
    LilvState *st = lilv_state_new_from_world(h->world, &h->map, preset);
    lilv_node_free(preset);
    if (!st)
        pn_fail(info, PN_ERR_PARSE, "lv2 host: preset '%s' could not be read", label_or_uri);
    return st;
}

pn_error pnh_preset_apply(pnh_host *h, const char *label_or_uri, pn_error_info *info)
{
    LilvState *st = preset_state(h, label_or_uri, info);
    if (!st)
        return info ? info->code : PN_ERR_INVALID;
    restore(h, st);
    lilv_state_free(st);
    return PN_OK;
}

typedef struct port_values {
    void (*fn)(void *user, const char *symbol, float value);
    void *user;
} port_values;

static void emit_port_value(const char *symbol, void *user, const void *value, uint32_t size,
                            uint32_t type)
{
    const port_values *pv = user;
    (void)type;
    if (size == sizeof(float))
        pv->fn(pv->user, symbol, *(const float *)value);
}

pn_error pnh_preset_port_values(pnh_host *h, const char *label_or_uri,
                                void (*fn)(void *user, const char *symbol, float value), void *user,
                                pn_error_info *info)
{
    if (!fn)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: no callback for the port values");
    LilvState *st = preset_state(h, label_or_uri, info);
    if (!st)
        return info ? info->code : PN_ERR_INVALID;
    port_values pv = {fn, user};
    lilv_state_emit_port_values(st, emit_port_value, &pv);
    lilv_state_free(st);
    return PN_OK;
}

int pnh_bundle_dir(const pnh_host *h, char *buf, size_t size)
{
    const LilvNode *bundle = lilv_plugin_get_bundle_uri(h->plugin);
    char *path = bundle ? lilv_file_uri_parse(lilv_node_as_uri(bundle), NULL) : NULL;
    if (!path)
        return 0;
    size_t len = strlen(path);
    while (len > 1 && path[len - 1] == '/') /* the bundle URI ends in a slash */
        path[--len] = '\0';
    const int fits = (size_t)snprintf(buf, size, "%s", path) < size;
    lilv_free(path);
    return fits;
}
