/* Rule sets made ready to play, and their realizations (model.h). */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/file.h"

static void free_slot(pnp_realization *r)
{
    pn_sampler_free(r->sampler);
    pn_conditional_free(r->given);
    r->sampler = NULL;
    r->given = NULL;
}

void pnp_model_free(pnp_model *model)
{
    if (!model)
        return;
    for (int s = 0; s < 2; ++s)
        free_slot(&model->slot[s]);
    pn_generator_free(model->gen);
    pn_rule_set_free(model->rules);
    free(model->text);
    free(model->path);
    free(model);
}

int pnp_model_voices(const pnp_model *model)
{
    return model->rules->space.num_voices;
}

pnp_realization *pnp_model_current(pnp_model *model)
{
    return &model->slot[model->live];
}

static char *copy_text(const char *text, size_t len)
{
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, text, len);
        c[len] = '\0';
    }
    return c;
}

/* Which rules the realization keeps, by name (run() reports them on the
 * notify port). */
static void note_selection(pnp_realization *r, const pnp_model *m)
{
    const pn_rule_set *rs = m->rules;
    const int K = rs->num_rules;
    unsigned char selected[64 * 8];
    r->selected_mask = 0;
    r->selected_names[0] = '\0';
    if (K > (int)sizeof selected)
        return;
    pn_solver_rule_stats(pn_generator_solver(m->gen), NULL, NULL, selected);
    size_t len = 0;
    for (int k = 0; k < K; ++k) {
        if (!selected[k])
            continue;
        if (k < 64)
            r->selected_mask |= (uint64_t)1 << k;
        const int n = snprintf(r->selected_names + len, sizeof r->selected_names - len, "%s%s",
                               len ? ", " : "", rs->rules[k].name);
        if (n < 0 || (size_t)n >= sizeof r->selected_names - len)
            break; /* the list is cut short, never overflows */
        len += (size_t)n;
    }
}

/* The statistics run() shows on its output ports; the solve's time is the
 * solver's own (its updates and the solve, from pn_info). */
static void note_stats(pnp_realization *r, const pnp_model *m)
{
    const pn_info *info = pn_generator_last_info(m->gen);
    r->rules_selected = info->num_selected;
    r->weighted_error = info->weighted_error;
    note_selection(r, m);
    r->solve_ms = 1e3 * (info->update_time + info->solve_time);
}

/* The first steps' re-solves would start from the solution without a
 * context, whose selection the music's contexts soon leave (a set whose
 * hand-written rules agree with the corpus's averages keeps them there,
 * and drops them after any sonority): each change of selection costs
 * several steps' time, and the first steps would sound late. So the solver
 * is moved through a few sonorities drawn with a fixed seed, each from the
 * realization after the one before (in the slot run() does not read yet),
 * until the selection holds; the slot already built keeps the realization
 * without a context for the first draw. */
enum { WARM_STEPS = 6 };

static void warm_for_first_step(pnp_model *m, const pnp_knobs *knobs)
{
    const pn_space *space = &m->rules->space;
    pn_sampler *scratch = m->slot[1].sampler;
    const pn_sampler *from = m->slot[0].sampler;
    pn_rng rng;
    pn_rng_seed(&rng, 1);
    int pitch[PN_SPACE_MAX_VOICES];
    int last = -1, same = 0;
    for (int step = 0; step < WARM_STEPS && same < 2; ++step) {
        const int64_t x = pn_sampler_draw(from, &rng);
        if (x < 0 || pn_space_decode(space, x, pitch, NULL) != PN_OK)
            return;
        pn_error_info info = {0};
        if (pn_generator_update(m->gen, knobs->log2_lambda_w, knobs->alpha, pitch, &info) !=
                PN_OK ||
            pn_sampler_set_q(scratch, pn_solver_q(pn_generator_solver(m->gen)), &info) != PN_OK)
            return;
        const int selected = pn_generator_last_info(m->gen)->num_selected;
        same = selected == last ? same + 1 : 0;
        last = selected;
        from = scratch;
    }
}

pn_error pnp_model_create(const char *name, const char *text, size_t len, const char *path,
                          const pnp_knobs *knobs, pnp_model **out, pn_error_info *info)
{
    *out = NULL;
    pnp_model *m = calloc(1, sizeof *m);
    if (!m)
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
    m->slot[0].given_voice = m->slot[1].given_voice = -1;
    pn_error err = pn_rule_set_parse(name, text, len, &m->rules, info);
    if (err != PN_OK)
        goto fail;
    const int k = m->rules->space.num_voices;
    if (k > PNP_MAX_VOICES) {
        err = pn_fail(info, PN_ERR_INVALID,
                      "%s: the plugin plays up to %d voices, the rule set has %d", name,
                      PNP_MAX_VOICES, k);
        goto fail;
    }
    m->text = copy_text(text, len);
    m->text_len = len;
    if (!m->text || (path && !(m->path = copy_text(path, strlen(path))))) {
        err = pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", name);
        goto fail;
    }
    pn_settings settings;
    pn_settings_default(&settings);
    settings.log2_lambda_w = knobs->log2_lambda_w;
    settings.alpha = knobs->alpha;
    if (m->rules->lambda_p > 0.0)
        settings.lambda_p = m->rules->lambda_p; /* how closely the set asks to be followed */
    /* one cold start: the first-step targets of a learned set agree (they
     * are marginals of one corpus), so searching other selections finds
     * nothing better and would cost seconds per instance (as `parnassus
     * sample` without --search) */
    settings.restarts = 0;
    settings.grow_seeds = 0;
    /* a knob move re-solves from the current solution only: trying the
     * other selections seen so far would cost a full solve each, and a
     * knob is turned to be heard now */
    settings.warm_pool = 0;
    if ((err = pn_generator_create(m->rules, &settings, &m->gen, info)) != PN_OK)
        goto fail;
    pn_generator_release_sampler(m->gen); /* the two slots below are the samplers */
    for (int s = 0; s < 2; ++s) {
        err = pn_sampler_create(pn_generator_problem(m->gen), pn_generator_group_index(m->gen),
                                &m->slot[s].sampler, info);
        if (err != PN_OK)
            goto fail;
        m->slot[s].model = m;
    }
    pnp_realization *r = &m->slot[0];
    if ((err = pn_sampler_set_q(r->sampler, pn_solver_q(pn_generator_solver(m->gen)), info)) !=
        PN_OK)
        goto fail;
    r->knobs = *knobs;
    r->context_serial = 0;
    note_stats(r, m);
    m->live = 0;
    warm_for_first_step(m, knobs);
    *out = m;
    return PN_OK;
fail:
    pnp_model_free(m);
    return err;
}

pn_error pnp_model_load(const char *path, const pnp_knobs *knobs, pnp_model **out,
                        pn_error_info *info)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    pn_error err = pn_file_read(path, (size_t)64 << 20, &text, &len, info);
    if (err == PN_OK)
        err = pnp_model_create(path, text, len, path, knobs, out, info);
    free(text);
    return err;
}

/* A harmonized key is the melody (voice 0) or the bass (the last voice):
 * the sonorities where another voice crosses it get a label of their own,
 * one past the voice's values, that no draw asks for. */
static void label_crossings(const pn_space *space, int voice, int32_t *label)
{
    const int k = space->num_voices;
    if (voice != 0 && voice != k - 1)
        return;
    const int32_t crossed = (int32_t)pn_space_radix(space, voice);
    const int64_t n = pn_space_size(space);
    int pitch[PNP_MAX_VOICES];
    for (int64_t x = 0; x < n; ++x) {
        if (label[x] == 0 || pn_space_decode(space, x, pitch, NULL) != PN_OK)
            continue; /* a rest crosses nothing */
        for (int v = 0; v < k; ++v)
            if (v != voice && pitch[v] != PN_REST &&
                (voice == 0 ? pitch[v] > pitch[voice] : pitch[v] < pitch[voice])) {
                label[x] = crossed;
                break;
            }
    }
}

static pn_error prepare_given(pnp_model *m, pnp_realization *r, int voice, pn_error_info *info)
{
    if (r->given && r->given_voice == voice)
        return PN_OK;
    pn_conditional_free(r->given);
    r->given = NULL;
    r->given_voice = -1;
    const pn_space *space = &m->rules->space;
    int32_t *label = malloc((size_t)pn_space_size(space) * sizeof *label);
    if (!label)
        return pn_fail(info, PN_ERR_NOMEM, "conditional tables: out of memory");
    pn_space_voice_labels(space, voice, label);
    label_crossings(space, voice, label);
    pn_error err =
        pn_conditional_create(pn_generator_group_index(m->gen), label,
                              (int32_t)pn_space_radix(space, voice) + 1, &r->given, info);
    free(label);
    if (err == PN_OK)
        r->given_voice = voice;
    return err;
}

pnp_realization *pnp_model_realize(pnp_model *model, const pnp_knobs *knobs, const int *context,
                                   uint64_t context_serial, int given_voice, pn_error_info *info)
{
    pnp_realization *r = &model->slot[1 - model->live];
    if (pn_generator_update(model->gen, knobs->log2_lambda_w, knobs->alpha, context, info) != PN_OK)
        return NULL;
    const double *q = pn_solver_q(pn_generator_solver(model->gen));
    if (pn_sampler_set_q(r->sampler, q, info) != PN_OK)
        return NULL;
    if (given_voice >= pnp_model_voices(model))
        given_voice = -1;
    if (given_voice >= 0) {
        if (prepare_given(model, r, given_voice, info) != PN_OK ||
            pn_conditional_set_q(r->given, q, info) != PN_OK) {
            pn_conditional_free(r->given);
            r->given = NULL;
            r->given_voice = -1;
        }
    }
    r->knobs = *knobs;
    r->context_serial = context_serial;
    r->has_context = context != NULL;
    if (context)
        memcpy(r->context, context, (size_t)pnp_model_voices(model) * sizeof *r->context);
    note_stats(r, model);
    model->live = 1 - model->live;
    return r;
}

/* When no sonority of the realization has `voice` at `pitch` with the
 * other voices inside it (see label_crossings), an unconditional draw is
 * revoiced: the voice takes the key, and every other voice that crosses
 * it moves by octaves to its side, keeping its pitch class, or rests when
 * its range leaves no room. */
static void voice_under_key(const pn_space *space, int voice, int pitch, int *pitches)
{
    const int k = space->num_voices;
    pitches[voice] = pitch;
    if (voice != 0 && voice != k - 1)
        return;
    const int step = voice == 0 ? -12 : 12;
    for (int v = 0; v < k; ++v) {
        if (v == voice || pitches[v] == PN_REST)
            continue;
        int p = pitches[v];
        while (voice == 0 ? p > pitch : p < pitch)
            p += step;
        pitches[v] = p >= space->low[v] && p <= space->high[v] ? p : PN_REST;
    }
}

/* One draw, with `voice` at `pitch` when voice >= 0 (see
 * pnp_realization_draw); 0 when nothing could be drawn. */
static int draw_once(const pnp_realization *r, pn_rng *rng, int voice, int pitch, int *pitches)
{
    const pn_space *space = &r->model->rules->space;
    int64_t x = -1;
    if (voice >= 0 && r->given && r->given_voice == voice && pitch >= space->low[voice] &&
        pitch <= space->high[voice])
        x = pn_conditional_draw(r->given, (int32_t)(1 + pitch - space->low[voice]), rng);
    const int forced = x < 0 && voice >= 0;
    if (x < 0)
        x = pn_sampler_draw(r->sampler, rng);
    if (x < 0 || pn_space_decode(space, x, pitches, NULL) != PN_OK)
        return 0;
    if (forced)
        voice_under_key(space, voice, pitch, pitches);
    return 1;
}

int pnp_realization_draw(const pnp_realization *r, pn_rng *rng, int voice, int pitch, int *pitches)
{
    const pn_rule_set *rules = r->model->rules;
    const int *previous = r->has_context ? r->context : NULL;
    for (int attempt = 0; attempt < PN_CONSTRAINT_TRIES; ++attempt) {
        if (!draw_once(r, rng, voice, pitch, pitches))
            return 0;
        if (pn_rule_set_allows(rules, previous, pitches))
            return 1;
    }
    return 1; /* the realization leaves almost no move that keeps them: keep the last */
}
