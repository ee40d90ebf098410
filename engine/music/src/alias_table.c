/* Alias tables: Vose's construction over weights, and pn_alias, a table
 * of entries drawn in proportion to their weights (see
 * sampler_internal.h for the column and the draw). */
#include "sampler_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* keep probability in [0, 1] as a fraction of 2^64, saturating at 1. */
static inline uint64_t keep_bits(double keep)
{
    if (!(keep > 0.0))
        return 0;
    if (keep >= 1.0)
        return UINT64_MAX;
    return (uint64_t)(keep * 0x1.0p64);
}

/* Sum with Neumaier's compensation; returns -1 if a weight is negative or
 * not finite. */
double pn_alias_checked_sum(const double *w, int64_t n)
{
    double sum = 0.0, comp = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        const double v = w[i];
        if (!(v >= 0.0) || !isfinite(v))
            return -1.0;
        const double t = sum + v;
        comp += fabs(sum) >= v ? (sum - t) + v : (v - t) + sum;
        sum = t;
    }
    return sum + comp;
}

/* Vose's construction over scaled[0..n-1], which holds the weights on entry
 * (scratch afterwards); total is their positive sum. work holds n indices:
 * the "small" stack grows from the front, the "large" one from the back, and
 * an index is on at most one of them, so they never meet. */
void pn_alias_fill(alias_column *col, double *scaled, int64_t n, double total, int32_t *work)
{
    const double scale = (double)n / total;
    int64_t ns = 0, nl = 0;
    for (int32_t i = 0; i < (int32_t)n; ++i) {
        scaled[i] *= scale;
        if (scaled[i] < 1.0)
            work[ns++] = i;
        else
            work[n - 1 - nl++] = i;
    }
    while (ns > 0 && nl > 0) {
        const int32_t s = work[--ns];
        const int32_t l = work[n - nl];
        col[s].keep = keep_bits(scaled[s]);
        col[s].first[0] = (uint32_t)s;
        col[s].first[1] = (uint32_t)l;
        /* the large entry gives away 1 - scaled[s] */
        scaled[l] = (scaled[l] + scaled[s]) - 1.0;
        if (scaled[l] < 1.0) {
            --nl;
            work[ns++] = l;
        }
    }
    /* what is left is 1 up to rounding */
    while (ns > 0) {
        const int32_t s = work[--ns];
        col[s].keep = UINT64_MAX;
        col[s].first[0] = col[s].first[1] = (uint32_t)s;
    }
    while (nl > 0) {
        const int32_t l = work[n - nl--];
        col[l].keep = UINT64_MAX;
        col[l].first[0] = col[l].first[1] = (uint32_t)l;
    }
}

struct pn_alias {
    int64_t capacity;
    int64_t n; /* 0: empty */
    alias_column *col;
    double *scaled;
    int32_t *work;
};

pn_error pn_alias_create(int64_t capacity, pn_alias **out, pn_error_info *info)
{
    *out = NULL;
    if (capacity < 1 || capacity > PN_SAMPLER_MAX_SIZE)
        return pn_fail(info, PN_ERR_INVALID, "alias table capacity %" PRId64 " out of range",
                       capacity);
    pn_alias *a = calloc(1, sizeof *a);
    if (!a)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for an alias table");
    a->capacity = capacity;
    a->col = malloc((size_t)capacity * sizeof *a->col);
    a->scaled = malloc((size_t)capacity * sizeof *a->scaled);
    a->work = malloc((size_t)capacity * sizeof *a->work);
    if (!a->col || !a->scaled || !a->work) {
        pn_alias_free(a);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for an alias table of %" PRId64,
                       capacity);
    }
    *out = a;
    return PN_OK;
}

void pn_alias_free(pn_alias *alias)
{
    if (!alias)
        return;
    free(alias->col);
    free(alias->scaled);
    free(alias->work);
    free(alias);
}

pn_error pn_alias_build(pn_alias *alias, const double *weights, int64_t n, pn_error_info *info)
{
    alias->n = 0;
    if (n < 1 || n > alias->capacity)
        return pn_fail(info, PN_ERR_INVALID,
                       "alias table: %" PRId64 " weights for a capacity of %" PRId64, n,
                       alias->capacity);
    const double total = pn_alias_checked_sum(weights, n);
    if (total < 0.0)
        return pn_fail(info, PN_ERR_INVALID, "alias table: a weight is negative or not finite");
    if (!(total > 0.0) || !isfinite(total))
        return pn_fail(info, PN_ERR_INVALID, "alias table: weights sum to %g", total);
    memcpy(alias->scaled, weights, (size_t)n * sizeof *weights);
    pn_alias_fill(alias->col, alias->scaled, n, total, alias->work);
    alias->n = n;
    return PN_OK;
}

int64_t pn_alias_size(const pn_alias *alias)
{
    return alias->n;
}

int64_t pn_alias_draw(const pn_alias *alias, uint64_t random_bits)
{
    if (alias->n == 0)
        return -1;
    int outcome;
    const alias_column *c = column_pick(alias->col, alias->n, random_bits, &outcome);
    return c->first[outcome];
}

void pn_alias_column(const pn_alias *alias, int64_t i, double *keep, int64_t *other)
{
    const alias_column c = alias->col[i];
    *keep = c.keep == UINT64_MAX ? 1.0 : (double)c.keep * 0x1.0p-64;
    *other = c.first[1];
}
