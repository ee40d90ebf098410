/* Conditional draws: a raw input given its label (the members of each
 * label, by group), drawn by the masses of the groups, with one alias
 * table per label over its (label, group) pairs. */
#include "sampler_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

struct pn_conditional {
    int64_t n;
    int64_t num_groups;
    int32_t num_labels;
    int64_t num_pairs;
    int32_t *members;     /* n: raw inputs by (label, group), increasing within */
    int32_t *group_size;  /* K' */
    int64_t *label_pairs; /* L + 1: pairs of label l are [label_pairs[l], [l+1]) */
    int32_t *pair_group;  /* P */
    int32_t *pair_first;  /* P + 1: pair j's members are [pair_first[j], [j+1]) */
    alias_column *col;    /* P: label l's table is col + label_pairs[l] */
    double *scaled;       /* P: scratch of the rebuild */
    int32_t *work;        /* P: scratch of the rebuild */
    double *label_mass;   /* L: P(l); 0 = nothing to draw */
    int ready;
};

void pn_conditional_free(pn_conditional *cond)
{
    if (!cond)
        return;
    free(cond->members);
    free(cond->group_size);
    free(cond->label_pairs);
    free(cond->pair_group);
    free(cond->pair_first);
    free(cond->col);
    free(cond->scaled);
    free(cond->work);
    free(cond->label_mass);
    free(cond);
}

pn_error pn_conditional_create(const pn_group_index *index, const int32_t *label_of,
                               int32_t num_labels, pn_conditional **out, pn_error_info *info)
{
    *out = NULL;
    const int64_t n = index->n, G = index->num_groups;
    const int32_t L = num_labels;
    if (L < 1)
        return pn_fail(info, PN_ERR_INVALID, "conditional: %d labels", (int)L);
    for (int64_t x = 0; x < n; ++x)
        if (label_of[x] < 0 || label_of[x] >= L)
            return pn_fail(info, PN_ERR_INVALID,
                           "conditional: raw input %" PRId64 " has label %d, outside [0, %d)", x,
                           (int)label_of[x], (int)L);
    int32_t *group_at = malloc((size_t)n * sizeof *group_at); /* setup scratch */
    pn_conditional *c = calloc(1, sizeof *c);
    if (!c || !group_at)
        goto nomem;
    c->n = n;
    c->num_groups = G;
    c->num_labels = L;
    c->members = malloc((size_t)n * sizeof *c->members);
    c->group_size = malloc((size_t)G * sizeof *c->group_size);
    c->label_pairs = calloc((size_t)L + 1, sizeof *c->label_pairs);
    c->label_mass = calloc((size_t)L, sizeof *c->label_mass);
    if (!c->members || !c->group_size || !c->label_pairs || !c->label_mass)
        goto nomem;
    for (int64_t k = 0; k < G; ++k)
        c->group_size[k] = (int32_t)(index->start[k + 1] - index->start[k]);

    /* counting sort by label, visiting the inputs group by group: within a
     * label the members come out sorted by group (stable) */
    int64_t *cursor = c->label_pairs; /* borrowed: label ends, then pair starts */
    for (int64_t x = 0; x < n; ++x)
        cursor[label_of[x] + 1]++;
    for (int32_t l = 0; l < L; ++l)
        cursor[l + 1] += cursor[l];
    for (int64_t k = 0; k < G; ++k)
        for (int64_t i = index->start[k]; i < index->start[k + 1]; ++i) {
            const int32_t x = index->members[i];
            const int64_t pos = cursor[label_of[x]]++;
            c->members[pos] = x;
            group_at[pos] = (int32_t)k;
        }
    /* a pair is a run of one group within one label */
    int64_t P = 0;
    for (int64_t pos = 0; pos < n; ++pos)
        if (pos == 0 || group_at[pos] != group_at[pos - 1] ||
            label_of[c->members[pos]] != label_of[c->members[pos - 1]])
            ++P;
    c->num_pairs = P;
    c->pair_group = malloc((size_t)P * sizeof *c->pair_group);
    c->pair_first = malloc(((size_t)P + 1) * sizeof *c->pair_first);
    c->col = malloc((size_t)P * sizeof *c->col);
    c->scaled = malloc((size_t)P * sizeof *c->scaled);
    c->work = malloc((size_t)P * sizeof *c->work);
    if (!c->pair_group || !c->pair_first || !c->col || !c->scaled || !c->work)
        goto nomem;
    /* now cursor[l] is the end of label l's members; fill the pairs label by
     * label and turn label_pairs into pair starts */
    int64_t p = 0, label_begin = 0;
    for (int32_t l = 0; l < L; ++l) {
        const int64_t end = cursor[l];
        cursor[l] = p;
        for (int64_t pos = label_begin; pos < end; ++pos)
            if (pos == label_begin || group_at[pos] != group_at[pos - 1]) {
                c->pair_group[p] = group_at[pos];
                c->pair_first[p] = (int32_t)pos;
                ++p;
            }
        label_begin = end;
    }
    cursor[L] = P;
    c->pair_first[P] = (int32_t)n;
    free(group_at);
    *out = c;
    return PN_OK;
nomem:
    free(group_at);
    pn_conditional_free(c);
    return pn_fail(info, PN_ERR_NOMEM,
                   "out of memory for a conditional sampler over %" PRId64 " inputs", n);
}

pn_error pn_conditional_set_q(pn_conditional *cond, const double *q, pn_error_info *info)
{
    cond->ready = 0;
    const double total = pn_alias_checked_sum(q, cond->num_groups);
    if (total < 0.0)
        return pn_fail(info, PN_ERR_INVALID, "conditional: a mass is negative or not finite");
    if (!(total > 0.0) || !isfinite(total))
        return pn_fail(info, PN_ERR_INVALID, "conditional: masses sum to %g", total);
    double grand = 0.0;
    for (int32_t l = 0; l < cond->num_labels; ++l) {
        const int64_t first = cond->label_pairs[l], m = cond->label_pairs[l + 1] - first;
        double *w = cond->scaled + first;
        for (int64_t j = 0; j < m; ++j) {
            const int64_t pj = first + j;
            const int32_t k = cond->pair_group[pj];
            const int32_t c_kl = cond->pair_first[pj + 1] - cond->pair_first[pj];
            w[j] = q[k] * ((double)c_kl / (double)cond->group_size[k]);
        }
        const double t = m > 0 ? pn_alias_checked_sum(w, m) : 0.0;
        cond->label_mass[l] = t > 0.0 ? t : 0.0;
        grand += cond->label_mass[l];
        if (!(t > 0.0))
            continue;
        alias_column *col = cond->col + first;
        pn_alias_fill(col, w, m, t, cond->work + first);
        /* outcome -> pair (local to the label) -> its members */
        for (int64_t j = 0; j < m; ++j)
            for (int o = 0; o < 2; ++o) {
                const int64_t pj = first + col[j].first[o];
                col[j].first[o] = (uint32_t)cond->pair_first[pj];
                col[j].count[o] = (uint32_t)(cond->pair_first[pj + 1] - cond->pair_first[pj]);
            }
    }
    if (!(grand > 0.0))
        return pn_fail(info, PN_ERR_INVALID, "conditional: no mass on any member");
    for (int32_t l = 0; l < cond->num_labels; ++l)
        cond->label_mass[l] /= grand;
    cond->ready = 1;
    return PN_OK;
}

int64_t pn_conditional_num_pairs(const pn_conditional *cond)
{
    return cond->num_pairs;
}

double pn_conditional_label_mass(const pn_conditional *cond, int32_t label)
{
    if (!cond->ready || label < 0 || label >= cond->num_labels)
        return 0.0;
    return cond->label_mass[label];
}

int64_t pn_conditional_draw(const pn_conditional *cond, int32_t label, pn_rng *rng)
{
    if (!cond->ready || label < 0 || label >= cond->num_labels || !(cond->label_mass[label] > 0.0))
        return -1;
    const int64_t first = cond->label_pairs[label];
    int o;
    const alias_column *c =
        column_pick(cond->col + first, cond->label_pairs[label + 1] - first, pn_rng_next(rng), &o);
    return member_pick(c, o, cond->members, pn_rng_next(rng));
}
