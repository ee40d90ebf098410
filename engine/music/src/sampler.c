/* The sampler over groups: an alias table over the groups with mass,
 * each outcome pointing at its group's members, so a draw is a group by
 * its mass and a uniform member of it. */
#include "sampler_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

enum { BLOCK = 32 }; /* draws in flight in pn_sampler_draw_many */

#if defined(__GNUC__)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)(p))
#endif

struct pn_sampler {
    const pn_group_index *index;
    int64_t n;         /* columns: the groups with mass; 0 until masses are set */
    alias_column *col; /* K' */
    double *scaled;    /* K': scratch of the rebuild */
    int32_t *work;     /* K': scratch of the rebuild */
    int32_t *support;  /* K': the groups with mass, in order (column i is support[i]) */
};

pn_error pn_sampler_create(const pn_problem *prob, const pn_group_index *index, pn_sampler **out,
                           pn_error_info *info)
{
    *out = NULL;
    if (index->num_groups != prob->num_groups || index->n != prob->n)
        return pn_fail(info, PN_ERR_INVALID,
                       "sampler: index has %" PRId64 " groups over %" PRId64
                       " inputs, problem %" PRId64 " over %" PRId64,
                       index->num_groups, index->n, prob->num_groups, prob->n);
    for (int64_t k = 0; k < prob->num_groups; ++k)
        if (pn_group_index_size(index, k) != prob->group_size[k])
            return pn_fail(info, PN_ERR_INVALID,
                           "sampler: group %" PRId64 " has %" PRId64
                           " members in the index, %" PRId64 " in the problem",
                           k, pn_group_index_size(index, k), prob->group_size[k]);
    const size_t G = (size_t)index->num_groups;
    pn_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for a sampler");
    s->index = index;
    s->col = malloc(G * sizeof *s->col);
    s->scaled = malloc(G * sizeof *s->scaled);
    s->work = malloc(G * sizeof *s->work);
    s->support = malloc(G * sizeof *s->support);
    if (!s->col || !s->scaled || !s->work || !s->support) {
        pn_sampler_free(s);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for a sampler over %zu groups", G);
    }
    *out = s;
    return PN_OK;
}

void pn_sampler_free(pn_sampler *sampler)
{
    if (!sampler)
        return;
    free(sampler->col);
    free(sampler->scaled);
    free(sampler->work);
    free(sampler->support);
    free(sampler);
}

pn_error pn_sampler_set_q(pn_sampler *sampler, const double *q, pn_error_info *info)
{
    const pn_group_index *index = sampler->index;
    const int64_t G = index->num_groups;
    sampler->n = 0;
    const double total = pn_alias_checked_sum(q, G);
    if (total < 0.0)
        return pn_fail(info, PN_ERR_INVALID, "sampler: a mass is negative or not finite");
    if (!(total > 0.0) || !isfinite(total))
        return pn_fail(info, PN_ERR_INVALID, "sampler: masses sum to %g", total);
    /* the table covers the groups with mass only: a realization's support
     * is a small part of the groups, and so is the rebuild */
    int64_t S = 0;
    for (int64_t k = 0; k < G; ++k) {
        if (!(q[k] > 0.0))
            continue;
        if (index->start[k + 1] == index->start[k])
            return pn_fail(info, PN_ERR_INVALID,
                           "sampler: mass %g on group %" PRId64 ", which is empty", q[k], k);
        sampler->support[S] = (int32_t)k;
        sampler->scaled[S++] = q[k];
    }
    pn_alias_fill(sampler->col, sampler->scaled, S, total, sampler->work);
    /* outcome -> group -> its members */
    for (int64_t i = 0; i < S; ++i) {
        alias_column *c = sampler->col + i;
        for (int o = 0; o < 2; ++o) {
            const int32_t k = sampler->support[c->first[o]];
            c->first[o] = (uint32_t)index->start[k];
            c->count[o] = (uint32_t)(index->start[k + 1] - index->start[k]);
        }
    }
    sampler->n = S;
    return PN_OK;
}

int64_t pn_sampler_draw(const pn_sampler *sampler, pn_rng *rng)
{
    if (sampler->n == 0)
        return -1;
    int o;
    const alias_column *c = column_pick(sampler->col, sampler->n, pn_rng_next(rng), &o);
    return member_pick(c, o, sampler->index->members, pn_rng_next(rng));
}

/* Same stream as repeated pn_sampler_draw, in blocks: all columns of a block
 * are requested before any is read, then all members, so the cache misses
 * of a large table overlap instead of queueing. */
void pn_sampler_draw_many(const pn_sampler *sampler, pn_rng *rng, int64_t *out, int64_t count)
{
    if (sampler->n == 0) {
        for (int64_t i = 0; i < count; ++i)
            out[i] = -1;
        return;
    }
    const int32_t *members = sampler->index->members;
    const int64_t n = sampler->n;
    const alias_column *cols[BLOCK];
    uint64_t coin[BLOCK], pick[BLOCK], pos[BLOCK];
    for (int64_t done = 0; done < count; done += BLOCK) {
        const int64_t m = count - done < BLOCK ? count - done : BLOCK;
        for (int64_t i = 0; i < m; ++i) {
            cols[i] = sampler->col + mul_hi_lo(pn_rng_next(rng), (uint64_t)n, &coin[i]);
            pick[i] = pn_rng_next(rng);
            PREFETCH(cols[i]);
        }
        for (int64_t i = 0; i < m; ++i) {
            const alias_column *c = cols[i];
            const int o = coin[i] >= c->keep;
            pos[i] = c->first[o] + below(pick[i], c->count[o]);
            PREFETCH(members + pos[i]);
        }
        for (int64_t i = 0; i < m; ++i)
            out[done + i] = members[pos[i]];
    }
}
