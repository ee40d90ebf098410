/* Sequential generation from a rule set (parnassus/generate.h). */
#include "parnassus/generate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/space.h"

struct pn_generator {
    const pn_rule_set *rules;
    pn_problem *prob;
    int32_t *group_of; /* n entries: each sonority's group */
    pn_group_index *index;
    pn_solver *solver;
    pn_sampler *sampler;
    double *target;         /* m entries: b of the current step */
    pn_settings knobs;      /* the caller's settings: cold solves and knob changes */
    pn_settings stepping;   /* the same with warm_pool 0: context steps */
    int stepping_installed; /* which of the two the solver has */
    pn_info last;
    int previous[PN_SPACE_MAX_VOICES]; /* the context of the current realization */
    int has_previous;
    uint64_t constraint_misses; /* draws that found no move keeping the constraints */
    /* per voice, set up on demand: draws with that voice fixed */
    pn_conditional *given[PN_SPACE_MAX_VOICES];
    int given_stale[PN_SPACE_MAX_VOICES]; /* its masses predate the last realization */
    pn_error_info given_error; /* why the last pn_generator_draw_given failed to set up */
    int64_t held_bytes;        /* the estimate check_memory passed, plus conditionals */
    /* the selection trap (steady_selection): the last steady selection,
     * the rules and rule components it kept, and how many steps may still
     * start from it */
    unsigned char *steady;   /* one entry per rule */
    unsigned char *selected; /* scratch: the current selection */
    int32_t steady_rules;
    int64_t steady_rows;
    int have_steady;
    int recovery_tries;
    uint64_t recoveries;
};

/* How many context steps in a row may start again from the last steady
 * selection: the step that lost the rules often has targets that nothing
 * fits, and the next ones do. */
enum { RECOVERY_TRIES = 3 };

void pn_generator_free(pn_generator *gen)
{
    if (!gen)
        return;
    for (int v = 0; v < PN_SPACE_MAX_VOICES; ++v)
        pn_conditional_free(gen->given[v]);
    pn_sampler_free(gen->sampler);
    pn_solver_free(gen->solver);
    free(gen->steady);
    free(gen->selected);
    pn_group_index_free(gen->index);
    pn_problem_free(gen->prob);
    free(gen->group_of);
    free(gen->target);
    free(gen);
}

/* Installs the step settings (stepping = 1) or the caller's (0). */
static pn_error use_settings(pn_generator *gen, int stepping, pn_error_info *info)
{
    if (gen->stepping_installed == stepping)
        return PN_OK;
    pn_error err =
        pn_solver_update_settings(gen->solver, stepping ? &gen->stepping : &gen->knobs, info);
    if (err == PN_OK)
        gen->stepping_installed = stepping;
    return err;
}

/* The current solution's selection into gen->selected; returns how many
 * rules it keeps and, in *rows, how many rule components. */
static int32_t current_selection(pn_generator *gen, int64_t *rows)
{
    const pn_problem *prob = gen->prob;
    pn_solver_rule_stats(gen->solver, NULL, NULL, gen->selected);
    int32_t kept = 0;
    *rows = 0;
    for (int32_t r = 0; r < prob->num_rules; ++r)
        if (gen->selected[r]) {
            kept++;
            *rows += prob->rule_start[r + 1] - prob->rule_start[r];
        }
    return kept;
}

/* Lost: at least LOST_RULES fewer rules than the steady selection, and
 * fewer than 7/8 as many components. One rule coming or going is not lost,
 * however large it is (a small set's rules are each an eighth of it). */
enum { LOST_RULES = 3 };

static int lost(const pn_generator *gen, int32_t kept, int64_t rows)
{
    return gen->have_steady && kept + LOST_RULES <= gen->steady_rules &&
           8 * rows < 7 * gen->steady_rows;
}

/* The selection trap. The alternation only descends: when new targets
 * leave w on a few rules that p fits exactly, the rules it dropped stay
 * out at the next contexts too (their errors under that p keep them out)
 * and the music stops following its context. A realization that has not
 * lost the rule system (lost()) is steady and becomes the reference; one
 * that has starts again from the last steady selection and keeps whichever
 * solution is better, for at most RECOVERY_TRIES steps in a row: after
 * them the reference stays until a step is steady again on its own, so a
 * set whose contexts really want fewer rules pays for three tries only.
 * The first realization at new knobs is steady by definition: at a
 * conservative Style few rules are what the knob asks for. */
static pn_error steady_selection(pn_generator *gen, pn_error_info *info)
{
    int64_t rows;
    int32_t kept = current_selection(gen, &rows);
    if (lost(gen, kept, rows) && gen->recovery_tries > 0) {
        gen->recovery_tries--;
        gen->recoveries++;
        const pn_info first = gen->last;
        pn_error err = pn_solver_solve_also(gen->solver, gen->steady, &gen->last, info);
        if (err != PN_OK)
            return err;
        /* the step's figures are both solves' */
        gen->last.update_time = first.update_time;
        gen->last.solve_time += first.solve_time;
        gen->last.alternations += first.alternations;
        gen->last.starts += first.starts;
        gen->last.newton_iterations += first.newton_iterations;
        kept = current_selection(gen, &rows);
    }
    if (!lost(gen, kept, rows)) {
        memcpy(gen->steady, gen->selected, (size_t)gen->prob->num_rules);
        gen->steady_rules = kept;
        gen->steady_rows = rows;
        gen->have_steady = 1;
        gen->recovery_tries = RECOVERY_TRIES;
    }
    return PN_OK;
}

/* Realizes the current targets, out of the selection trap, and hands the
 * masses to the sampler. */
static pn_error realize(pn_generator *gen, pn_start start, pn_error_info *info)
{
    pn_error err = pn_solver_solve(gen->solver, start, &gen->last, info);
    if (err == PN_OK)
        err = steady_selection(gen, info);
    if (err != PN_OK)
        return err;
    if (gen->sampler &&
        (err = pn_sampler_set_q(gen->sampler, pn_solver_q(gen->solver), info)) != PN_OK)
        return err;
    for (int v = 0; v < PN_SPACE_MAX_VOICES; ++v)
        gen->given_stale[v] = 1;
    return PN_OK;
}

/* Everything a generator holds at once, once its problem is known: the
 * value tables, the problem, each sonority's group and the index of the
 * groups' members, the solver and the sampler's alias table. */
static pn_error check_memory(pn_generator *gen, const pn_rule_set *rs, const pn_settings *s,
                             pn_error_info *info)
{
    const pn_problem *prob = gen->prob;
    int64_t need = pn_bytes_add(rs->table_bytes, pn_problem_bytes(prob));
    need = pn_bytes_add(need, pn_bytes_mul(prob->n, 2 * 4));
    need = pn_bytes_add(need, pn_bytes_mul(prob->num_groups, 8 + 40));
    need = pn_bytes_add(need, pn_solver_bytes(prob));
    char what[PN_MESSAGE_SIZE];
    snprintf(what, sizeof what,
             "rule set %.100s: realizing %d rules over %lld groups of %lld sonorities", rs->name,
             (int)prob->num_rules, (long long)prob->num_groups, (long long)prob->n);
    gen->held_bytes = need;
    return pn_memory_check(need, s->max_memory, info, what);
}

pn_error pn_generator_create(const pn_rule_set *rs, const pn_settings *settings, pn_generator **out,
                             pn_error_info *info)
{
    if (!out)
        return pn_fail(info, PN_ERR_INVALID, "pn_generator_create: out is NULL");
    *out = NULL;
    if (!rs)
        return pn_fail(info, PN_ERR_INVALID, "pn_generator_create: no rule set given");
    const int64_t n = pn_space_size(&rs->space);
    if (n < 1 || n > PN_RULES_MAX_SPACE)
        return pn_fail(info, PN_ERR_INVALID,
                       "rule set %.100s: a space of %lld sonorities is too large", rs->name,
                       (long long)n);
    pn_generator *gen = calloc(1, sizeof *gen);
    if (!gen)
        return pn_fail(info, PN_ERR_NOMEM, "pn_generator_create: out of memory");
    gen->rules = rs;
    pn_settings s;
    if (settings)
        s = *settings;
    else
        pn_settings_default(&s);
    gen->knobs = s;
    gen->stepping = s;
    /* A context step starts from the current solution only: the pool of
     * other known selections would cost a full solve each, every step. */
    gen->stepping.warm_pool = 0;
    pn_error err = pn_rule_set_check_build(rs, 1, info);
    if (err != PN_OK)
        goto fail;
    gen->steady = calloc((size_t)rs->num_rules, 1);
    gen->selected = calloc((size_t)rs->num_rules, 1);
    gen->group_of = malloc((size_t)n * sizeof *gen->group_of);
    gen->target = malloc((size_t)pn_rule_set_num_rows(rs) * sizeof *gen->target);
    if (!gen->group_of || !gen->target || !gen->steady || !gen->selected) {
        err = pn_fail(info, PN_ERR_NOMEM, "pn_generator_create: out of memory");
        goto fail;
    }
    if ((err = pn_rule_set_build_problem(rs, &gen->prob, gen->group_of, info)) != PN_OK)
        goto fail;
    if ((err = check_memory(gen, rs, &s, info)) != PN_OK)
        goto fail;
    if ((err = pn_group_index_create(gen->group_of, n, gen->prob->num_groups, &gen->index, info)) !=
        PN_OK)
        goto fail;
    if ((err = pn_solver_create(gen->prob, &s, &gen->solver, info)) != PN_OK)
        goto fail;
    if ((err = pn_sampler_create(gen->prob, gen->index, &gen->sampler, info)) != PN_OK)
        goto fail;
    if ((err = pn_rule_set_targets(rs, NULL, gen->target, info)) != PN_OK)
        goto fail;
    if ((err = pn_solver_update_targets(gen->solver, gen->target, info)) != PN_OK)
        goto fail;
    if ((err = realize(gen, PN_START_COLD, info)) != PN_OK)
        goto fail;
    *out = gen;
    return PN_OK;
fail:
    pn_generator_free(gen);
    return err;
}

pn_error pn_generator_set_knobs(pn_generator *gen, double log2_lambda_w, double alpha,
                                pn_error_info *info)
{
    pn_settings s = gen->knobs;
    s.log2_lambda_w = log2_lambda_w;
    s.alpha = alpha;
    pn_error err = pn_solver_update_settings(gen->solver, &s, info);
    if (err != PN_OK)
        return err;
    gen->knobs = s;
    gen->stepping.log2_lambda_w = log2_lambda_w;
    gen->stepping.alpha = alpha;
    gen->stepping_installed = 0;
    gen->have_steady = 0;
    return realize(gen, PN_START_WARM, info);
}

/* Remembers the context the constraints of the next draws refer to. */
static void set_previous(pn_generator *gen, const int *previous)
{
    gen->has_previous = previous != NULL;
    if (previous)
        memcpy(gen->previous, previous,
               (size_t)gen->rules->space.num_voices * sizeof *gen->previous);
}

pn_error pn_generator_advance(pn_generator *gen, const int *previous, pn_error_info *info)
{
    pn_error err = pn_rule_set_targets(gen->rules, previous, gen->target, info);
    if (err != PN_OK)
        return err;
    set_previous(gen, previous);
    if ((err = pn_solver_update_targets(gen->solver, gen->target, info)) != PN_OK)
        return err;
    if ((err = use_settings(gen, 1, info)) != PN_OK)
        return err;
    return realize(gen, PN_START_WARM, info);
}

pn_error pn_generator_update(pn_generator *gen, double log2_lambda_w, double alpha,
                             const int *previous, pn_error_info *info)
{
    pn_error err;
    if (log2_lambda_w != gen->knobs.log2_lambda_w || alpha != gen->knobs.alpha) {
        pn_settings s = gen->knobs;
        s.log2_lambda_w = log2_lambda_w;
        s.alpha = alpha;
        if ((err = pn_solver_update_settings(gen->solver, &s, info)) != PN_OK)
            return err;
        gen->knobs = s;
        gen->stepping.log2_lambda_w = log2_lambda_w;
        gen->stepping.alpha = alpha;
        gen->stepping_installed = 0;
        gen->have_steady = 0;
    } else if ((err = use_settings(gen, 1, info)) != PN_OK) {
        return err;
    }
    if ((err = pn_rule_set_targets(gen->rules, previous, gen->target, info)) != PN_OK)
        return err;
    set_previous(gen, previous);
    if ((err = pn_solver_update_targets(gen->solver, gen->target, info)) != PN_OK)
        return err;
    return realize(gen, PN_START_WARM, info);
}

/* 1 when the move from the current context to `pitches` keeps the set's
 * constraints. */
static int allowed(const pn_generator *gen, const int *pitches)
{
    return pn_rule_set_allows(gen->rules, gen->has_previous ? gen->previous : NULL, pitches);
}

int64_t pn_generator_draw(pn_generator *gen, pn_rng *rng, int *pitches)
{
    if (!gen->sampler)
        return -1;
    int64_t x = -1;
    for (int attempt = 0; attempt < PN_CONSTRAINT_TRIES; ++attempt) {
        x = pn_sampler_draw(gen->sampler, rng);
        if (x < 0)
            return -1;
        (void)pn_space_decode(&gen->rules->space, x, pitches, NULL);
        if (allowed(gen, pitches))
            return x;
    }
    gen->constraint_misses++;
    return x;
}

const pn_error_info *pn_generator_given_error(const pn_generator *gen)
{
    return &gen->given_error;
}

uint64_t pn_generator_constraint_misses(const pn_generator *gen)
{
    return gen->constraint_misses;
}

uint64_t pn_generator_recoveries(const pn_generator *gen)
{
    return gen->recoveries;
}

pn_error pn_generator_step(pn_generator *gen, pn_rng *rng, int *pitches, pn_error_info *info)
{
    if (pn_generator_draw(gen, rng, pitches) < 0)
        return pn_fail(info, PN_ERR_INVALID, "pn_generator_step: the realization has no mass");
    return pn_generator_advance(gen, pitches, info);
}

/* The label of a voice's value: 0 for a rest, 1 + pitch - low otherwise. */
static int32_t voice_label(const pn_space *space, int voice, int pitch)
{
    return pitch < 0 ? 0 : (int32_t)(pitch - space->low[voice] + 1);
}

pn_error pn_generator_prepare_conditional(pn_generator *gen, int voice, pn_error_info *info)
{
    const pn_space *space = &gen->rules->space;
    if (voice < 0 || voice >= space->num_voices)
        return pn_fail(info, PN_ERR_INVALID, "voice %d: the space has voices 1..%d", voice + 1,
                       space->num_voices);
    if (gen->given[voice])
        return PN_OK;
    const int64_t n = gen->prob->n, G = gen->prob->num_groups, L = pn_space_radix(space, voice);
    /* the conditional's tables (sampler.c): members and scratch per
     * sonority, per group, per label, and per (group, label) pair */
    const int64_t pairs = pn_bytes_mul(G, L) < n ? pn_bytes_mul(G, L) : n;
    int64_t bytes = pn_bytes_add(pn_bytes_mul(n, 3 * 4), pn_bytes_mul(G, 8));
    bytes = pn_bytes_add(bytes, pn_bytes_add(pn_bytes_mul(L + 1, 16), pn_bytes_mul(pairs, 24)));
    char what[96];
    snprintf(what, sizeof what, "drawing with voice %d given", voice + 1);
    pn_error check =
        pn_memory_check(pn_bytes_add(gen->held_bytes, bytes), gen->knobs.max_memory, info, what);
    if (check != PN_OK)
        return check;
    int32_t *label_of = malloc((size_t)n * sizeof *label_of);
    if (!label_of)
        return pn_fail(info, PN_ERR_NOMEM, "pn_generator_prepare_conditional: out of memory");
    pn_space_voice_labels(space, voice, label_of);
    pn_error err = pn_conditional_create(
        gen->index, label_of, (int32_t)pn_space_radix(space, voice), &gen->given[voice], info);
    free(label_of);
    if (err != PN_OK)
        return err;
    gen->given_stale[voice] = 1;
    gen->held_bytes = pn_bytes_add(gen->held_bytes, bytes);
    return PN_OK;
}

int64_t pn_generator_draw_given(pn_generator *gen, int voice, int pitch, pn_rng *rng, int *pitches)
{
    const pn_space *space = &gen->rules->space;
    if (voice < 0 || voice >= space->num_voices)
        return -1;
    if (pitch >= 0 && (pitch < space->low[voice] || pitch > space->high[voice]))
        return -1;
    if (!gen->given[voice] &&
        pn_generator_prepare_conditional(gen, voice, &gen->given_error) != PN_OK)
        return -1;
    if (gen->given_stale[voice]) {
        if (pn_conditional_set_q(gen->given[voice], pn_solver_q(gen->solver), &gen->given_error) !=
            PN_OK)
            return -1;
        gen->given_stale[voice] = 0;
    }
    int64_t x = -1;
    for (int attempt = 0; attempt < PN_CONSTRAINT_TRIES; ++attempt) {
        x = pn_conditional_draw(gen->given[voice], voice_label(space, voice, pitch), rng);
        if (x < 0)
            return -1;
        (void)pn_space_decode(space, x, pitches, NULL);
        if (allowed(gen, pitches))
            return x;
    }
    gen->constraint_misses++;
    return x;
}

const pn_rule_set *pn_generator_rules(const pn_generator *gen)
{
    return gen->rules;
}

const pn_problem *pn_generator_problem(const pn_generator *gen)
{
    return gen->prob;
}

const pn_solver *pn_generator_solver(const pn_generator *gen)
{
    return gen->solver;
}

void pn_generator_release_sampler(pn_generator *gen)
{
    pn_sampler_free(gen->sampler);
    gen->sampler = NULL;
}

const pn_group_index *pn_generator_group_index(const pn_generator *gen)
{
    return gen->index;
}

const double *pn_generator_targets(const pn_generator *gen)
{
    return gen->target;
}

const pn_info *pn_generator_last_info(const pn_generator *gen)
{
    return &gen->last;
}
