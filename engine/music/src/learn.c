/* Learning a rule set's targets from a corpus (docs/learning.md). */
#include "parnassus/learn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void pn_learn_settings_default(pn_learn_settings *s)
{
    s->by_duration = 0;
    s->contexts = 1;
    s->min_context_count = 1.0;
}

pn_error pn_learn_settings_validate(const pn_learn_settings *s, pn_error_info *info)
{
    if (!s)
        return pn_fail(info, PN_ERR_INVALID, "learn settings: NULL");
    if (s->by_duration != 0 && s->by_duration != 1)
        return pn_fail(info, PN_ERR_INVALID, "learn settings: by_duration must be 0 or 1, got %d",
                       s->by_duration);
    if (s->contexts != 0 && s->contexts != 1)
        return pn_fail(info, PN_ERR_INVALID, "learn settings: contexts must be 0 or 1, got %d",
                       s->contexts);
    if (!isfinite(s->min_context_count) || s->min_context_count < 0.0)
        return pn_fail(info, PN_ERR_INVALID,
                       "learn settings: min_context_count must be a finite number >= 0, got %g",
                       s->min_context_count);
    return PN_OK;
}

/* One observed transition of a context rule: psi(x_{t-1}) -> phi(x_t). */
typedef struct transition {
    int32_t context; /* cell of the context table */
    int32_t cell;    /* cell of the rule's table */
    double weight;
} transition;

static int compare_transitions(const void *a, const void *b)
{
    const transition *x = a, *y = b;
    if (x->context != y->context)
        return (x->context > y->context) - (x->context < y->context);
    return (x->cell > y->cell) - (x->cell < y->cell);
}

/* What learning builds for one context level of a rule. */
typedef struct learned_level {
    transition *trans; /* the observed transitions; NULL: not learned */
    int64_t num_trans;
    int32_t num_rows; /* listed contexts */
    int32_t *cell;
    double *row_count;
    double *row;
} learned_level;

enum { MAX_LEVELS = 1 + PN_RULES_MAX_REFINEMENTS };

/* What learning builds for one rule before it replaces the rule's arrays. */
typedef struct learned {
    double *count;      /* m: weight per cell (becomes the targets) */
    int32_t num_levels; /* the context and its refinements, 0 without a context */
    learned_level level[MAX_LEVELS];
    int32_t prev_context[MAX_LEVELS]; /* psi cells of the previous sonority */
    int32_t context_now[MAX_LEVELS];  /* ... and of this one */
} learned;

static void free_learned(learned *l, int32_t num_rules)
{
    if (!l)
        return;
    for (int32_t r = 0; r < num_rules; ++r) {
        free(l[r].count);
        for (int32_t k = 0; k < MAX_LEVELS; ++k) {
            free(l[r].level[k].trans);
            free(l[r].level[k].cell);
            free(l[r].level[k].row_count);
            free(l[r].level[k].row);
        }
    }
    free(l);
}

/* Context level k of a rule: its context, then its refinements. */
static pn_rule_context *rule_level(const pn_rule *rule, int32_t k)
{
    return k == 0 ? rule->context : &rule->refinements[k - 1];
}

/* The voice (0-based) of the first pitch outside the space, or -1. */
static int outside_voice(const pn_space *sp, const int *pitch)
{
    for (int v = 0; v < sp->num_voices; ++v)
        if (pitch[v] >= 0 && (pitch[v] < sp->low[v] || pitch[v] > sp->high[v]))
            return v;
    return -1;
}

/* Turns the transitions of one context level into listed rows. */
static pn_error build_rows(learned_level *l, int32_t m, const pn_learn_settings *s,
                           pn_learn_report *rep, pn_error_info *info)
{
    transition *t = l->trans;
    const int64_t n = l->num_trans;
    qsort(t, (size_t)n, sizeof *t, compare_transitions);
    int64_t distinct = 0;
    for (int64_t i = 0; i < n; ++i)
        if (i == 0 || t[i].context != t[i - 1].context)
            ++distinct;
    if (distinct == 0)
        return PN_OK;
    l->cell = malloc((size_t)distinct * sizeof *l->cell);
    l->row_count = malloc((size_t)distinct * sizeof *l->row_count);
    l->row = calloc((size_t)distinct * (size_t)m, sizeof *l->row);
    if (!l->cell || !l->row_count || !l->row)
        return pn_fail(info, PN_ERR_NOMEM, "learn: out of memory for the context rows");
    int32_t rows = 0;
    for (int64_t i = 0; i < n;) {
        int64_t end = i;
        double weight = 0.0;
        while (end < n && t[end].context == t[i].context)
            weight += t[end++].weight;
        /* the count: observations, or their total duration */
        const double count = s->by_duration ? weight : (double)(end - i);
        if (count >= s->min_context_count && weight > 0.0) {
            double *row = l->row + (size_t)rows * (size_t)m;
            for (int64_t j = i; j < end; ++j)
                row[t[j].cell] += t[j].weight;
            for (int32_t c = 0; c < m; ++c)
                row[c] /= weight;
            l->cell[rows] = t[i].context;
            l->row_count[rows] = count;
            ++rows;
        } else {
            ++rep->contexts_dropped;
        }
        i = end;
    }
    l->num_rows = rows;
    rep->contexts_listed += rows;
    return PN_OK;
}

/* Counts every piece into l; fills the step and transition totals of rep. */
static pn_error count_corpus(const pn_rule_set *rs, const pn_corpus *corpus,
                             const pn_learn_settings *s, learned *l, pn_learn_report *rep,
                             pn_error_info *info)
{
    const pn_space *sp = &rs->space;
    const int k = sp->num_voices;
    const int32_t K = rs->num_rules;
    int pitch[PN_SPACE_MAX_VOICES];
    for (int32_t p = 0; p < corpus->num_pieces; ++p) {
        const pn_piece *piece = &corpus->pieces[p];
        if (piece->num_voices != k)
            return pn_fail(info, PN_ERR_INVALID, "learn: piece %.100s has %d voices, the space %d",
                           piece->name ? piece->name : "?", (int)piece->num_voices, k);
        int previous_inside = 0, used = 0;
        for (int32_t t = 0; t < piece->num_steps; ++t) {
            for (int v = 0; v < k; ++v)
                pitch[v] = piece->pitch[(size_t)t * (size_t)k + (size_t)v];
            const int bad = outside_voice(sp, pitch);
            if (bad >= 0) {
                if (rep->skip_piece < 0) {
                    rep->skip_piece = p;
                    rep->skip_step = t;
                    rep->skip_voice = bad;
                    rep->skip_pitch = pitch[bad];
                }
                ++rep->steps_skipped;
                if (t > 0)
                    ++rep->transitions_skipped;
                previous_inside = 0;
                continue;
            }
            const double weight = s->by_duration ? (double)pn_piece_duration(piece, t) : 1.0;
            ++rep->steps_used;
            rep->total_weight += weight;
            used = 1;
            if (t > 0) {
                if (previous_inside)
                    ++rep->transitions_used;
                else
                    ++rep->transitions_skipped;
            }
            for (int32_t r = 0; r < K; ++r) {
                const pn_rule *rule = &rs->rules[r];
                if (!l[r].count)
                    continue; /* a rule learning leaves alone */
                int32_t cell = -1;
                pn_error err = pn_feature_cell_of(rule->table, pitch, &cell, info);
                if (err != PN_OK)
                    return err;
                l[r].count[cell] += weight;
                for (int32_t lev = 0; lev < l[r].num_levels; ++lev) {
                    learned_level *lv = &l[r].level[lev];
                    if (previous_inside) {
                        transition *tr = &lv->trans[lv->num_trans++];
                        tr->context = l[r].prev_context[lev];
                        tr->cell = cell;
                        tr->weight = weight;
                    }
                    if ((err = pn_feature_cell_of(rule_level(rule, lev)->table, pitch,
                                                  &l[r].context_now[lev], info)) != PN_OK)
                        return err;
                }
                memcpy(l[r].prev_context, l[r].context_now, sizeof l[r].prev_context);
            }
            previous_inside = 1;
        }
        rep->pieces_used += used;
    }
    return PN_OK;
}

/* Replaces rule r's targets and listed contexts by what was learned. */
/* Without s->contexts, l has no rows and the rule is left with none. */
static void commit_rule(pn_rule *rule, learned *l, double total)
{
    const int32_t m = pn_feature_table_size(rule->table);
    for (int32_t c = 0; c < m; ++c)
        l->count[c] /= total;
    free(rule->target);
    rule->target = l->count;
    l->count = NULL;
    if (!rule->context)
        return;
    for (int32_t k = 0; k <= rule->num_refinements; ++k) {
        pn_rule_context *ctx = rule_level(rule, k);
        learned_level *lv = &l->level[k];
        free(ctx->cell);
        free(ctx->count);
        free(ctx->row);
        ctx->num_rows = lv->num_rows;
        ctx->cell = lv->cell;
        ctx->count = lv->row_count;
        ctx->row = lv->row;
        lv->num_rows = 0;
        lv->cell = NULL;
        lv->row_count = NULL;
        lv->row = NULL;
    }
}

static void report_init(pn_learn_report *rep, const pn_corpus *corpus)
{
    memset(rep, 0, sizeof *rep);
    rep->num_pieces = corpus->num_pieces;
    rep->skip_piece = rep->skip_step = rep->skip_voice = rep->skip_pitch = -1;
}

/* The error when nothing could be counted. */
static pn_error nothing_observed(const pn_rule_set *rs, const pn_corpus *corpus,
                                 const pn_learn_report *rep, pn_error_info *info)
{
    if (rep->steps_skipped == 0)
        return pn_fail(info, PN_ERR_INVALID,
                       "learn %.100s: the corpus has no sonorities, so no rule's feature was "
                       "observed",
                       rs->name);
    const pn_piece *piece = &corpus->pieces[rep->skip_piece];
    const int v = rep->skip_voice;
    return pn_fail(info, PN_ERR_INVALID,
                   "learn %.100s: every sonority of the corpus (%lld) has a pitch outside the "
                   "space, so no rule's feature was observed; the first: %.100s step %d voice %d "
                   "pitch %d outside %d..%d",
                   rs->name, (long long)rep->steps_skipped, piece->name ? piece->name : "?",
                   (int)rep->skip_step, v + 1, rep->skip_pitch, rs->space.low[v],
                   rs->space.high[v]);
}

pn_error pn_learn(pn_rule_set *rs, const pn_corpus *corpus, const pn_learn_settings *s,
                  pn_learn_report *report, pn_error_info *info)
{
    if (!rs || !corpus || rs->num_rules < 1 || !rs->rules)
        return pn_fail(info, PN_ERR_INVALID, "pn_learn: NULL or empty argument");
    pn_learn_settings defaults;
    if (!s) {
        pn_learn_settings_default(&defaults);
        s = &defaults;
    }
    pn_error err = pn_learn_settings_validate(s, info);
    if (err != PN_OK)
        return err;
    if (corpus->num_voices != rs->space.num_voices)
        return pn_fail(info, PN_ERR_INVALID,
                       "learn %.100s: the corpus has %d voices but the rule set's space has %d",
                       rs->name, (int)corpus->num_voices, rs->space.num_voices);
    pn_learn_report local;
    pn_learn_report *rep = report ? report : &local;
    report_init(rep, corpus);

    const int32_t K = rs->num_rules;
    int64_t max_trans = 0;
    for (int32_t p = 0; p < corpus->num_pieces; ++p)
        if (corpus->pieces[p].num_steps > 1)
            max_trans += corpus->pieces[p].num_steps - 1;
    learned *l = calloc((size_t)K, sizeof *l);
    if (!l) {
        err = pn_fail(info, PN_ERR_NOMEM, "learn: out of memory");
        goto done;
    }
    for (int32_t r = 0; r < K; ++r) {
        const pn_rule *rule = &rs->rules[r];
        if (rule->fixed)
            continue; /* kept as written */
        l[r].count = calloc((size_t)pn_feature_table_size(rule->table), sizeof *l[r].count);
        if (!l[r].count) {
            err = pn_fail(info, PN_ERR_NOMEM, "learn: out of memory");
            goto done;
        }
        if (!rule->context || !s->contexts || max_trans == 0)
            continue;
        l[r].num_levels = 1 + rule->num_refinements;
        for (int32_t k = 0; k < l[r].num_levels; ++k)
            if (!(l[r].level[k].trans = malloc((size_t)max_trans * sizeof(transition)))) {
                err = pn_fail(info, PN_ERR_NOMEM, "learn: out of memory for the transitions");
                goto done;
            }
    }
    if ((err = count_corpus(rs, corpus, s, l, rep, info)) != PN_OK)
        goto done;
    if (rep->steps_used == 0 || !(rep->total_weight > 0.0)) {
        err = nothing_observed(rs, corpus, rep, info);
        goto done;
    }
    for (int32_t r = 0; r < K; ++r)
        for (int32_t k = 0; k < l[r].num_levels; ++k)
            if ((err = build_rows(&l[r].level[k], pn_feature_table_size(rs->rules[r].table), s, rep,
                                  info)) != PN_OK)
                goto done;
    /* nothing can fail from here on: replace the rules' arrays */
    for (int32_t r = 0; r < K; ++r)
        if (l[r].count)
            commit_rule(&rs->rules[r], &l[r], rep->total_weight);
done:
    free_learned(l, K);
    return err;
}
