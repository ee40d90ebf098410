/* Creating the host: world, plugin, features, instance, ports; controls;
 * running a block (see lv2host.h). */
#include "host_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lv2/buf-size/buf-size.h>
#include <lv2/core/lv2.h>
#include <lv2/midi/midi.h>
#include <lv2/parameters/parameters.h>
#include <lv2/patch/patch.h>
#include <lv2/time/time.h>

void pnh_settings_default(pnh_settings *s)
{
    memset(s, 0, sizeof *s);
    s->sample_rate = 48000.0;
    s->max_block = 4096;
    s->atom_capacity = 64 * 1024;
    s->worker_ring_size = 64 * 1024;
    s->worker_mode = PNH_WORKER_IMMEDIATE;
}

static char *dup_str(const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

LV2_URID pnh_map(pnh_host *h, const char *uri)
{
    return pnh_urid_map(&h->urids, uri);
}

const char *pnh_unmap(pnh_host *h, LV2_URID urid)
{
    return pnh_urid_unmap(&h->urids, urid);
}

static void map_uris(pnh_host *h)
{
#define M(field, uri) h->u.field = pnh_map(h, uri)
    M(atom_Chunk, LV2_ATOM__Chunk);
    M(atom_Sequence, LV2_ATOM__Sequence);
    M(atom_Path, LV2_ATOM__Path);
    M(atom_URID, LV2_ATOM__URID);
    M(atom_Float, LV2_ATOM__Float);
    M(atom_Int, LV2_ATOM__Int);
    M(atom_Double, LV2_ATOM__Double);
    M(atom_Long, LV2_ATOM__Long);
    M(atom_Bool, LV2_ATOM__Bool);
    M(midi_MidiEvent, LV2_MIDI__MidiEvent);
    M(time_Position, LV2_TIME__Position);
    M(time_frame, LV2_TIME__frame);
    M(time_speed, LV2_TIME__speed);
    M(time_bar, LV2_TIME__bar);
    M(time_barBeat, LV2_TIME__barBeat);
    M(time_beat, LV2_TIME__beat);
    M(time_beatUnit, LV2_TIME__beatUnit);
    M(time_beatsPerBar, LV2_TIME__beatsPerBar);
    M(time_beatsPerMinute, LV2_TIME__beatsPerMinute);
    M(patch_Set, LV2_PATCH__Set);
    M(patch_Get, LV2_PATCH__Get);
    M(patch_property, LV2_PATCH__property);
    M(patch_value, LV2_PATCH__value);
    M(param_sampleRate, LV2_PARAMETERS__sampleRate);
    M(bufsz_minBlockLength, LV2_BUF_SIZE__minBlockLength);
    M(bufsz_maxBlockLength, LV2_BUF_SIZE__maxBlockLength);
    M(bufsz_sequenceSize, LV2_BUF_SIZE__sequenceSize);
#undef M
}

/* The features given to instantiate (and to state calls). */
static void make_features(pnh_host *h)
{
    h->map.handle = &h->urids;
    h->map.map = pnh_urid_map;
    h->unmap.handle = &h->urids;
    h->unmap.unmap = pnh_urid_unmap;
    h->log_feature.handle = &h->log;
    h->log_feature.printf = pnh_log_printf;
    h->log_feature.vprintf = pnh_log_vprintf;
    h->schedule.handle = h;
    h->schedule.schedule_work = pnh_worker_schedule;
    pnh_state_init_features(h);

    h->opt_min_block = 1;
    h->opt_max_block = (int32_t)h->s.max_block;
    h->opt_seq_size = (int32_t)h->s.atom_capacity;
    h->opt_rate = (float)h->s.sample_rate;
    const LV2_URID i32 = h->u.atom_Int;
    LV2_Options_Option *o = h->options;
    o[0] = (LV2_Options_Option){LV2_OPTIONS_INSTANCE,  0,
                                h->u.param_sampleRate, sizeof(float),
                                h->u.atom_Float,       &h->opt_rate};
    o[1] = (LV2_Options_Option){LV2_OPTIONS_INSTANCE, 0,   h->u.bufsz_minBlockLength,
                                sizeof(int32_t),      i32, &h->opt_min_block};
    o[2] = (LV2_Options_Option){LV2_OPTIONS_INSTANCE, 0,   h->u.bufsz_maxBlockLength,
                                sizeof(int32_t),      i32, &h->opt_max_block};
    o[3] = (LV2_Options_Option){LV2_OPTIONS_INSTANCE, 0,   h->u.bufsz_sequenceSize,
                                sizeof(int32_t),      i32, &h->opt_seq_size};
    o[4] = (LV2_Options_Option){LV2_OPTIONS_INSTANCE, 0, 0, 0, 0, NULL};

    h->f_map = (LV2_Feature){LV2_URID__map, &h->map};
    h->f_unmap = (LV2_Feature){LV2_URID__unmap, &h->unmap};
    h->f_log = (LV2_Feature){LV2_LOG__log, &h->log_feature};
    h->f_schedule = (LV2_Feature){LV2_WORKER__schedule, &h->schedule};
    h->f_make_path = (LV2_Feature){LV2_STATE__makePath, &h->make_path};
    h->f_map_path = (LV2_Feature){LV2_STATE__mapPath, &h->map_path};
    h->f_free_path = (LV2_Feature){LV2_STATE__freePath, &h->free_path};
    h->f_options = (LV2_Feature){LV2_OPTIONS__options, h->options};
    h->f_bounded = (LV2_Feature){LV2_BUF_SIZE__boundedBlockLength, NULL};
    const LV2_Feature *all[] = {
        &h->f_map,      &h->f_unmap,     &h->f_log,     &h->f_schedule, &h->f_make_path,
        &h->f_map_path, &h->f_free_path, &h->f_options, &h->f_bounded,  NULL};
    memcpy(h->features, all, sizeof all);
}

static pn_error check_features(pnh_host *h, pn_error_info *info)
{
    LilvNodes *req = lilv_plugin_get_required_features(h->plugin);
    pn_error err = PN_OK;
    LILV_FOREACH(nodes, i, req)
    {
        const char *uri = lilv_node_as_uri(lilv_nodes_get(req, i));
        int found = 0;
        for (int k = 0; h->features[k]; ++k)
            found |= strcmp(h->features[k]->URI, uri) == 0;
        if (!found) {
            err = pn_fail(info, PN_ERR_INVALID,
                          "lv2 host: plugin <%s> requires feature <%s>, which the host lacks",
                          h->plugin_uri, uri);
            break;
        }
    }
    lilv_nodes_free(req);
    return err;
}

static pn_error load_world(pnh_host *h, pn_error_info *info)
{
    h->world = lilv_world_new();
    if (!h->world)
        return pn_fail(info, PN_ERR_NOMEM, "lv2 host: cannot create the lilv world");
    if (!h->bundle_dir) {
        lilv_world_load_all(h->world);
        return PN_OK;
    }
    /* lilv wants a bundle URI ending with a slash */
    size_t n = strlen(h->bundle_dir);
    char *dir = malloc(n + 2);
    if (!dir)
        return pn_fail(info, PN_ERR_NOMEM, "lv2 host: out of memory");
    memcpy(dir, h->bundle_dir, n + 1);
    if (n == 0 || dir[n - 1] != '/')
        memcpy(dir + n, "/", 2);
    char manifest[4096];
    snprintf(manifest, sizeof manifest, "%smanifest.ttl", dir);
    FILE *fp = fopen(manifest, "r");
    if (!fp) {
        pn_fail(info, PN_ERR_IO, "lv2 host: %s is not an LV2 bundle (no manifest.ttl)",
                h->bundle_dir);
        free(dir);
        return PN_ERR_IO;
    }
    fclose(fp);
    LilvNode *bundle = lilv_new_file_uri(h->world, NULL, dir);
    free(dir);
    if (!bundle)
        return pn_fail(info, PN_ERR_NOMEM, "lv2 host: out of memory");
    /* Only this bundle: no duplicate of the plugin from LV2_PATH, and the
     * host needs no specification data (port classes are plain rdf:type). */
    lilv_world_load_bundle(h->world, bundle);
    lilv_node_free(bundle);
    return PN_OK;
}

static int port_is_a(const pnh_host *h, const LilvPort *p, const char *class_uri)
{
    LilvNode *n = lilv_new_uri(h->world, class_uri);
    int r = lilv_port_is_a(h->plugin, p, n);
    lilv_node_free(n);
    return r;
}

static int port_has(const pnh_host *h, const LilvPort *p, const char *pred_uri, const char *obj_uri)
{
    LilvNode *n = lilv_new_uri(h->world, obj_uri);
    int r = 0;
    if (strcmp(pred_uri, LV2_CORE__portProperty) == 0) {
        r = lilv_port_has_property(h->plugin, p, n);
    } else {
        LilvNode *pred = lilv_new_uri(h->world, pred_uri);
        LilvNodes *vals = lilv_port_get_value(h->plugin, p, pred);
        r = vals && lilv_nodes_contains(vals, n);
        lilv_nodes_free(vals);
        lilv_node_free(pred);
    }
    lilv_node_free(n);
    return r;
}

static pn_error setup_ports(pnh_host *h, pn_error_info *info)
{
    h->num_ports = lilv_plugin_get_num_ports(h->plugin);
    h->ports = calloc(h->num_ports ? h->num_ports : 1, sizeof *h->ports);
    float *mins = malloc((h->num_ports + 1) * sizeof *mins);
    float *maxs = malloc((h->num_ports + 1) * sizeof *maxs);
    float *defs = malloc((h->num_ports + 1) * sizeof *defs);
    pn_error err = PN_OK;
    if (!h->ports || !mins || !maxs || !defs) {
        err = pn_fail(info, PN_ERR_NOMEM, "lv2 host: out of memory");
        goto done;
    }
    lilv_plugin_get_port_ranges_float(h->plugin, mins, maxs, defs);
    h->control_in = -1;
    h->enabled_in = -1;
    int first_atom_in = -1;
    for (uint32_t i = 0; i < h->num_ports; ++i) {
        pnh_port *p = &h->ports[i];
        p->lport = lilv_plugin_get_port_by_index(h->plugin, i);
        p->symbol = dup_str(lilv_node_as_string(lilv_port_get_symbol(h->plugin, p->lport)));
        if (!p->symbol) {
            err = pn_fail(info, PN_ERR_NOMEM, "lv2 host: out of memory");
            goto done;
        }
        p->is_input = port_is_a(h, p->lport, LV2_CORE__InputPort);
        p->def = defs[i];
        p->min = mins[i];
        p->max = maxs[i];
        if (port_is_a(h, p->lport, LV2_CORE__ControlPort)) {
            p->type = PNH_PORT_CONTROL;
            p->value = !isnan(defs[i]) ? defs[i] : !isnan(mins[i]) ? mins[i] : 0.0f;
            lilv_instance_connect_port(h->instance, i, &p->value);
            if (p->is_input && port_has(h, p->lport, LV2_CORE__designation, LV2_CORE__enabled))
                h->enabled_in = (int)i;
        } else if (port_is_a(h, p->lport, LV2_ATOM__AtomPort)) {
            p->type = PNH_PORT_ATOM;
            p->buf = calloc(1, h->s.atom_capacity);
            if (!p->buf) {
                err = pn_fail(info, PN_ERR_NOMEM, "lv2 host: out of memory (atom buffers)");
                goto done;
            }
            LV2_Atom_Sequence *seq = p->buf;
            seq->atom.size = sizeof(LV2_Atom_Sequence_Body);
            seq->atom.type = h->u.atom_Sequence;
            p->is_midi =
                !p->is_input && port_has(h, p->lport, LV2_ATOM__supports, LV2_MIDI__MidiEvent);
            if (p->is_input) {
                if (first_atom_in < 0)
                    first_atom_in = (int)i;
                if (port_has(h, p->lport, LV2_CORE__designation, LV2_CORE__control))
                    h->control_in = (int)i;
            }
            lilv_instance_connect_port(h->instance, i, p->buf);
        } else if (port_is_a(h, p->lport, LV2_CORE__AudioPort) ||
                   port_is_a(h, p->lport, LV2_CORE__CVPort)) {
            p->type = PNH_PORT_AUDIO;
            p->buf = calloc(h->s.max_block, sizeof(float));
            if (!p->buf) {
                err = pn_fail(info, PN_ERR_NOMEM, "lv2 host: out of memory (audio buffers)");
                goto done;
            }
            lilv_instance_connect_port(h->instance, i, p->buf);
        } else if (!port_has(h, p->lport, LV2_CORE__portProperty, LV2_CORE__connectionOptional)) {
            err = pn_fail(info, PN_ERR_INVALID, "lv2 host: port '%s' has a type the host lacks",
                          p->symbol);
            goto done;
        } else {
            lilv_instance_connect_port(h->instance, i, NULL);
        }
    }
    if (h->control_in < 0)
        h->control_in = first_atom_in;
    /* no output declares MIDI: the first atom output is taken for it */
    int any_midi = 0;
    for (uint32_t i = 0; i < h->num_ports; ++i)
        any_midi |= h->ports[i].is_midi;
    for (uint32_t i = 0; !any_midi && i < h->num_ports; ++i)
        if (h->ports[i].type == PNH_PORT_ATOM && !h->ports[i].is_input)
            any_midi = h->ports[i].is_midi = 1;
done:
    free(mins);
    free(maxs);
    free(defs);
    return err;
}

static pn_error check_settings(const pnh_settings *s, pn_error_info *info)
{
    if (!s->plugin_uri || !s->plugin_uri[0])
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: no plugin URI given");
    if (!(s->sample_rate >= 1.0 && s->sample_rate <= 1e7))
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: sample rate %g out of range",
                       s->sample_rate);
    if (s->max_block < 1 || s->max_block > 1048576)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: max_block %u not in 1..1048576",
                       (unsigned)s->max_block);
    if (s->atom_capacity < 1024 || s->atom_capacity > (1u << 30))
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: atom_capacity %zu not in 1024..2^30",
                       s->atom_capacity);
    if (s->worker_ring_size < 1024 || s->worker_ring_size > (1u << 30))
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: worker_ring_size %zu not in 1024..2^30",
                       s->worker_ring_size);
    if (s->worker_mode != PNH_WORKER_IMMEDIATE && s->worker_mode != PNH_WORKER_END_OF_RUN &&
        s->worker_mode != PNH_WORKER_THREADED)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: unknown worker mode %d",
                       (int)s->worker_mode);
    return PN_OK;
}

pn_error pnh_create(const pnh_settings *s, pnh_host **out, pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: out is NULL");
    *out = NULL;
    pnh_settings def;
    if (!s) {
        pnh_settings_default(&def);
        s = &def;
    }
    pn_error err = check_settings(s, info);
    if (err != PN_OK)
        return err;
    pnh_host *h = calloc(1, sizeof *h);
    if (!h)
        return pn_fail(info, PN_ERR_NOMEM, "lv2 host: out of memory");
    h->s = *s;
    h->control_in = -1;
    h->enabled_in = -1;
    pnh_transport_default(&h->transport);
    if (!pnh_urid_init(&h->urids)) {
        free(h);
        return pn_fail(info, PN_ERR_NOMEM, "lv2 host: cannot create a mutex");
    }
    h->plugin_uri = dup_str(s->plugin_uri);
    h->bundle_dir = dup_str(s->bundle_dir);
    h->scratch_dir = dup_str(s->scratch_dir);
    h->s.plugin_uri = h->plugin_uri;
    h->s.bundle_dir = h->bundle_dir;
    h->s.scratch_dir = h->scratch_dir;
    h->queue_buf = malloc(s->atom_capacity);
    map_uris(h);
    make_features(h);
    pnh_log_init(&h->log, &h->map, s->log_to_stderr);
    if (!h->plugin_uri || (s->bundle_dir && !h->bundle_dir) ||
        (s->scratch_dir && !h->scratch_dir) || !h->queue_buf) {
        err = pn_fail(info, PN_ERR_NOMEM, "lv2 host: out of memory");
        goto fail;
    }
    lv2_atom_forge_init(&h->forge, &h->map);
    lv2_atom_forge_init(&h->queue_forge, &h->map);
    if ((err = pnh_worker_init(h, info)) != PN_OK || (err = load_world(h, info)) != PN_OK)
        goto fail;

    LilvNode *uri = lilv_new_uri(h->world, h->plugin_uri);
    const LilvPlugins *all = lilv_world_get_all_plugins(h->world);
    h->plugin = uri ? lilv_plugins_get_by_uri(all, uri) : NULL;
    lilv_node_free(uri);
    if (!h->plugin) {
        err = pn_fail(info, PN_ERR_INVALID, "lv2 host: plugin <%s> not found in %s", h->plugin_uri,
                      h->bundle_dir ? h->bundle_dir : "LV2_PATH");
        goto fail;
    }
    if ((err = check_features(h, info)) != PN_OK)
        goto fail;
    h->instance = lilv_plugin_instantiate(h->plugin, s->sample_rate, h->features);
    if (!h->instance) {
        const LilvNode *lib = lilv_plugin_get_library_uri(h->plugin);
        err = pn_fail(info, PN_ERR_INVALID, "lv2 host: plugin <%s> failed to instantiate (%s)",
                      h->plugin_uri, lib ? lilv_node_as_uri(lib) : "no library");
        goto fail;
    }
    if ((err = setup_ports(h, info)) != PN_OK || (err = pnh_worker_start(h, info)) != PN_OK)
        goto fail;
    *out = h;
    return PN_OK;
fail:
    pnh_free(h);
    return err;
}

void pnh_free(pnh_host *h)
{
    if (!h)
        return;
    pnh_worker_stop(h); /* before the instance goes */
    if (h->instance) {
        pnh_worker_drain(h);
        if (h->active)
            lilv_instance_deactivate(h->instance);
        lilv_instance_free(h->instance);
    }
    pnh_worker_free(h);
    for (uint32_t i = 0; h->ports && i < h->num_ports; ++i) {
        free(h->ports[i].symbol);
        free(h->ports[i].buf);
    }
    free(h->ports);
    if (h->world)
        lilv_world_free(h->world);
    pnh_state_cleanup(h);
    pnh_log_free(&h->log);
    pnh_urid_free(&h->urids);
    free(h->queue_buf);
    free(h->plugin_uri);
    free(h->bundle_dir);
    free(h->scratch_dir);
    free(h);
}

pn_error pnh_activate(pnh_host *h, pn_error_info *info)
{
    if (!h)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: NULL host");
    if (!h->active) {
        lilv_instance_activate(h->instance);
        h->active = 1;
    }
    return PN_OK;
}

void pnh_deactivate(pnh_host *h)
{
    if (h && h->active) {
        lilv_instance_deactivate(h->instance);
        h->active = 0;
    }
}

/* ---- ports and controls ---- */

int pnh_port_index(const pnh_host *h, const char *symbol)
{
    for (uint32_t i = 0; h && symbol && i < h->num_ports; ++i)
        if (strcmp(h->ports[i].symbol, symbol) == 0)
            return (int)i;
    return -1;
}

uint32_t pnh_num_ports(const pnh_host *h)
{
    return h ? h->num_ports : 0;
}

const char *pnh_port_symbol(const pnh_host *h, uint32_t index)
{
    return h && index < h->num_ports ? h->ports[index].symbol : NULL;
}

pn_error pnh_set_control_at(pnh_host *h, int index, float value, pn_error_info *info)
{
    if (index < 0 || (uint32_t)index >= h->num_ports || h->ports[index].type != PNH_PORT_CONTROL ||
        !h->ports[index].is_input)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: port %d is not an input control", index);
    h->ports[index].value = value;
    return PN_OK;
}

pn_error pnh_set_control(pnh_host *h, const char *symbol, float value, pn_error_info *info)
{
    int i = pnh_port_index(h, symbol);
    if (i < 0 || h->ports[i].type != PNH_PORT_CONTROL || !h->ports[i].is_input)
        return pn_fail(info, PN_ERR_INVALID, "lv2 host: no input control port '%s'",
                       symbol ? symbol : "(null)");
    return pnh_set_control_at(h, i, value, info);
}

float pnh_control_at(const pnh_host *h, int index)
{
    if (index < 0 || (uint32_t)index >= h->num_ports || h->ports[index].type != PNH_PORT_CONTROL)
        return NAN;
    return h->ports[index].value;
}

float pnh_get_control(const pnh_host *h, const char *symbol)
{
    return pnh_control_at(h, pnh_port_index(h, symbol));
}

int pnh_control_range(const pnh_host *h, const char *symbol, float *def, float *min, float *max)
{
    int i = pnh_port_index(h, symbol);
    if (i < 0 || h->ports[i].type != PNH_PORT_CONTROL)
        return 0;
    if (def)
        *def = h->ports[i].def;
    if (min)
        *min = h->ports[i].min;
    if (max)
        *max = h->ports[i].max;
    return 1;
}

int64_t pnh_frames(const pnh_host *h)
{
    return h ? h->frames : 0;
}

/* ---- running ---- */

static long report_outputs(pnh_host *h, pnh_event_fn cb, void *user)
{
    long count = 0;
    for (uint32_t i = 0; i < h->num_ports; ++i) {
        const pnh_port *p = &h->ports[i];
        if (p->type != PNH_PORT_ATOM || p->is_input || (!p->is_midi && !h->s.notify_events))
            continue;
        const LV2_Atom_Sequence *seq = p->buf;
        /* a plugin that wrote nothing may have left the Chunk as it was */
        if (seq->atom.type != h->u.atom_Sequence ||
            seq->atom.size + sizeof(LV2_Atom) > h->s.atom_capacity)
            continue;
        LV2_ATOM_SEQUENCE_FOREACH(seq, ev)
        {
            pnh_event e;
            e.port = i;
            e.frame = (uint32_t)ev->time.frames;
            e.abs_frame = h->frames + ev->time.frames;
            e.type = ev->body.type;
            e.size = ev->body.size;
            e.body = LV2_ATOM_BODY_CONST(&ev->body);
            ++count;
            if (cb)
                cb(user, &e);
        }
    }
    return count;
}

long pnh_run(pnh_host *h, uint32_t nframes, pnh_event_fn cb, void *user, pn_error_info *info)
{
    if (!h || !h->active) {
        pn_fail(info, PN_ERR_INVALID, "lv2 host: run before activate");
        return -1;
    }
    if (nframes < 1 || nframes > h->s.max_block) {
        pn_fail(info, PN_ERR_INVALID, "lv2 host: block of %u frames not in 1..%u",
                (unsigned)nframes, (unsigned)h->s.max_block);
        return -1;
    }
    pnh_forge_input(h, nframes);
    for (uint32_t i = 0; i < h->num_ports; ++i) {
        pnh_port *p = &h->ports[i];
        if (p->type == PNH_PORT_ATOM && !p->is_input) {
            /* an empty Chunk of the whole capacity: room for the plugin */
            LV2_Atom *a = p->buf;
            a->type = h->u.atom_Chunk;
            a->size = (uint32_t)(h->s.atom_capacity - sizeof(LV2_Atom));
        } else if (p->type == PNH_PORT_ATOM && (int)i != h->control_in) {
            LV2_Atom_Sequence *seq = p->buf; /* other inputs: empty */
            seq->atom.size = sizeof(LV2_Atom_Sequence_Body);
            seq->atom.type = h->u.atom_Sequence;
        }
    }
    pnh_audio_enter(h);
    lilv_instance_run(h->instance, nframes);
    pnh_audio_leave(h);
    pnh_worker_after_run(h);
    long count = report_outputs(h, cb, user);
    pnh_transport_advance(h, nframes);
    h->frames += nframes;
    return count;
}

long pnh_run_last(pnh_host *h, uint32_t nframes, pnh_event_fn cb, void *user, pn_error_info *info)
{
    if (h && h->transport_on && h->transport.rolling) {
        pnh_transport stopped = h->transport;
        stopped.rolling = 0;
        (void)pnh_set_transport(h, &stopped, NULL); /* the same values: cannot fail */
    }
    float *enabled = h && h->enabled_in >= 0 ? &h->ports[h->enabled_in].value : NULL;
    const float was = enabled ? *enabled : 0.0f;
    if (enabled)
        *enabled = 0.0f;
    const long n = pnh_run(h, nframes, cb, user, info);
    if (enabled)
        *enabled = was;
    return n;
}
