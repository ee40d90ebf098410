/* Sums over the rows of every sonority, walking the space in order
 * (feature.h, "sums over the rows"): the rules whose window leaves out the
 * last voice are summed once per run of that voice, the others read their
 * table at consecutive entries. */
#include <stdlib.h>
#include <string.h>

#include "feature_internal.h"
#include "parnassus/feature.h"
#include <stdint.h>

/* What one call of pn_feature_sums_run works in: a lane's own, so that
 * lanes can sum different parts of the space at the same time. */
typedef struct lane_scratch {
    int32_t *inner; /* the kept rules whose window has the last voice ... */
    int32_t num_inner;
    int32_t *outer; /* ... and the others */
    int32_t num_outer;
    int64_t *base; /* per rule, the lookup offset of the upper voices */
    /* one run of the last voice, per inner rule: its lookup at the run's
     * start, the lookup's step, and its values (v at its first row) */
    const int32_t **run_lut;
    int64_t *run_stride;
    const double **run_row;
} lane_scratch;

struct pn_feature_sums {
    pn_space space;
    int32_t num_rules;
    int32_t *inner_all, *outer_all; /* as in lane_scratch, every rule */
    int32_t num_inner_all, num_outer_all;
    const int32_t *const *lut; /* per rule: its table's lookup */
    int64_t (*vstride)[PN_SPACE_MAX_VOICES];
    int32_t *first_row; /* per rule: its first row */
    lane_scratch lane[PN_ROW_SUMS_LANES];
};

/* One run of the last voice, one value per row: out[j] = up + the inner
 * rules' values at step j. */
static void sums1(const lane_scratch *s, int32_t ni, double up, int64_t run, double *out)
{
    const int32_t *const *lut = s->run_lut;
    const int64_t *st = s->run_stride;
    const double *const *row = s->run_row;
    if (ni == 3) { /* the common case: chord, bass and tenor-bass style rules */
        for (int64_t j = 0; j < run; ++j)
            out[j] = up + row[0][lut[0][j * st[0]]] + row[1][lut[1][j * st[1]]] +
                     row[2][lut[2][j * st[2]]];
        return;
    }
    for (int64_t j = 0; j < run; ++j) {
        double sum = up;
        for (int32_t q = 0; q < ni; ++q)
            sum += row[q][lut[q][j * st[q]]];
        out[j] = sum;
    }
}

/* The same with two values per row, interleaved. */
static void sums2(const lane_scratch *s, int32_t ni, double up0, double up1, int64_t run,
                  double *out)
{
    const int32_t *const *lut = s->run_lut;
    const int64_t *st = s->run_stride;
    const double *const *row = s->run_row;
    if (ni == 3) {
        for (int64_t j = 0; j < run; ++j) {
            const double *p0 = row[0] + 2 * (int64_t)lut[0][j * st[0]];
            const double *p1 = row[1] + 2 * (int64_t)lut[1][j * st[1]];
            const double *p2 = row[2] + 2 * (int64_t)lut[2][j * st[2]];
            out[2 * j] = up0 + p0[0] + p1[0] + p2[0];
            out[2 * j + 1] = up1 + p0[1] + p1[1] + p2[1];
        }
        return;
    }
    for (int64_t j = 0; j < run; ++j) {
        double s0 = up0, s1 = up1;
        for (int32_t q = 0; q < ni; ++q) {
            const double *p = row[q] + 2 * (int64_t)lut[q][j * st[q]];
            s0 += p[0];
            s1 += p[1];
        }
        out[2 * j] = s0;
        out[2 * j + 1] = s1;
    }
}

/* The run just summed at out[done * nv ...]: keeps the sonorities with a
 * sum below its cut, in order, numbered i + j in at (a pass with a bound
 * wants a few hundred of the space's sonorities, and of those summed in a
 * chorale step about 0.4 % get under the cut, so the caller need not read
 * the rest); returns the new count. */
static int64_t keep_below(double *out, int nv, const double *cut, int64_t done, int64_t run,
                          int64_t i, int32_t *at)
{
    int64_t kept = done;
    for (int64_t j = 0; j < run; ++j) {
        const double *o = out + (done + j) * nv;
        if (!(o[0] < cut[0] || (nv == 2 && o[1] < cut[1])))
            continue;
        if (nv == 2)
            out[2 * kept + 1] = o[1];
        out[kept * nv] = o[0];
        at[kept++] = (int32_t)(i + j);
    }
    return kept;
}

/* Without a bound every sonority of the run is summed: numbers them. */
static int64_t number_all(int32_t *at, int64_t done, int64_t run, int64_t i)
{
    for (int64_t j = 0; at && j < run; ++j)
        at[done + j] = (int32_t)(i + j);
    return done + run;
}

pn_error pn_feature_sums_create(const pn_feature_set *set, const int32_t *rule_start,
                                pn_feature_sums **out, pn_error_info *info)
{
    *out = NULL;
    pn_error err = pn_feature_set_check(set, info);
    if (err != PN_OK)
        return err;
    const int32_t K = set->num_tables;
    pn_feature_sums *s = calloc(1, sizeof *s);
    if (!s)
        return pn_fail(info, PN_ERR_NOMEM, "feature sums: out of memory");
    s->space = set->space;
    s->num_rules = K;
    const int32_t **lut = malloc((size_t)K * sizeof *lut);
    s->vstride = malloc((size_t)K * sizeof *s->vstride);
    s->first_row = malloc((size_t)K * sizeof *s->first_row);
    s->inner_all = malloc((size_t)K * sizeof *s->inner_all);
    s->outer_all = malloc((size_t)K * sizeof *s->outer_all);
    int lanes_ok = 1;
    for (int l = 0; l < PN_ROW_SUMS_LANES; ++l) {
        lane_scratch *ls = &s->lane[l];
        ls->inner = malloc((size_t)K * sizeof *ls->inner);
        ls->outer = malloc((size_t)K * sizeof *ls->outer);
        ls->base = malloc((size_t)K * sizeof *ls->base);
        ls->run_lut = malloc((size_t)K * sizeof *ls->run_lut);
        ls->run_stride = malloc((size_t)K * sizeof *ls->run_stride);
        ls->run_row = malloc((size_t)K * sizeof *ls->run_row);
        lanes_ok &=
            ls->inner && ls->outer && ls->base && ls->run_lut && ls->run_stride && ls->run_row;
    }
    s->lut = lut;
    if (!lut || !s->vstride || !s->first_row || !lanes_ok || !s->inner_all || !s->outer_all) {
        pn_feature_sums_free(s);
        return pn_fail(info, PN_ERR_NOMEM, "feature sums: out of memory");
    }
    const int last = set->space.num_voices - 1;
    for (int32_t r = 0; r < K; ++r) {
        const pn_feature_table *t = set->tables[r];
        lut[r] = pn_feature_table_lut(t);
        for (int v = 0; v < PN_SPACE_MAX_VOICES; ++v)
            s->vstride[r][v] = v < set->space.num_voices ? pn_feature_table_vstride(t, v) : 0;
        s->first_row[r] = rule_start[r];
        if (s->vstride[r][last] != 0)
            s->inner_all[s->num_inner_all++] = r;
        else
            s->outer_all[s->num_outer_all++] = r;
    }
    *out = s;
    return PN_OK;
}

void pn_feature_sums_free(pn_feature_sums *s)
{
    if (!s)
        return;
    free((void *)(uintptr_t)s->lut);
    free(s->vstride);
    free(s->first_row);
    free(s->inner_all);
    free(s->outer_all);
    for (int l = 0; l < PN_ROW_SUMS_LANES; ++l) {
        lane_scratch *ls = &s->lane[l];
        free(ls->inner);
        free(ls->outer);
        free(ls->base);
        free((void *)(uintptr_t)ls->run_lut);
        free(ls->run_stride);
        free((void *)(uintptr_t)ls->run_row);
    }
    free(s);
}

/* Lookup offsets of the upper voices' digits, per rule. */
static void upper_bases(const pn_feature_sums *s, const int *digit, int64_t *base)
{
    const int last = s->space.num_voices - 1;
    for (int32_t r = 0; r < s->num_rules; ++r) {
        int64_t b = 0;
        for (int v = 0; v < last; ++v)
            b += digit[v] * s->vstride[r][v];
        base[r] = b;
    }
}

int64_t pn_feature_sums_run(pn_feature_sums *fs, int lane, const unsigned char *kept,
                            const double *v, int nv, int64_t first, int64_t count,
                            const double *lower, const double *cut, int32_t *at, double *out)
{
    const pn_feature_sums *s = fs;
    lane_scratch *ls = &fs->lane[lane];
    /* the kept rules only: a dropped rule adds nothing */
    ls->num_inner = ls->num_outer = 0;
    for (int32_t q = 0; q < s->num_inner_all; ++q)
        if (!kept || kept[s->inner_all[q]])
            ls->inner[ls->num_inner++] = s->inner_all[q];
    for (int32_t q = 0; q < s->num_outer_all; ++q)
        if (!kept || kept[s->outer_all[q]])
            ls->outer[ls->num_outer++] = s->outer_all[q];
    const int k = s->space.num_voices, last = k - 1;
    int digit[PN_SPACE_MAX_VOICES], radix[PN_SPACE_MAX_VOICES];
    for (int i = 0; i < k; ++i)
        radix[i] = s->space.high[i] - s->space.low[i] + 2;
    int64_t x = first;
    for (int i = k - 1; i >= 0; --i) {
        digit[i] = (int)(x % radix[i]);
        x /= radix[i];
    }
    int64_t *base = ls->base;
    upper_bases(s, digit, base);
    /* the bound: what the rules with the last voice add at least */
    const int skip = lower && cut;
    double inner_low[2] = {0.0, 0.0};
    for (int32_t q = 0; skip && q < ls->num_inner; ++q)
        for (int c = 0; c < nv; ++c)
            inner_low[c] += lower[(int64_t)ls->inner[q] * nv + c];
    int64_t i = 0, done = 0;
    while (i < count) {
        /* the rules without the last voice, once for this run of it */
        double up0 = 0.0, up1 = 0.0;
        for (int32_t o = 0; o < ls->num_outer; ++o) {
            const int32_t r = ls->outer[o];
            const int64_t row = s->first_row[r] + s->lut[r][base[r]];
            up0 += v[row * nv];
            if (nv == 2)
                up1 += v[row * nv + 1];
        }
        const int64_t run =
            radix[last] - digit[last] < count - i ? radix[last] - digit[last] : count - i;
        if (!(skip && up0 + inner_low[0] >= cut[0] && (nv == 1 || up1 + inner_low[1] >= cut[1]))) {
            /* the inner rules' entries for this run: consecutive steps of
             * the last voice move each lookup by its stride */
            const int32_t ni = ls->num_inner;
            for (int32_t q = 0; q < ni; ++q) {
                const int32_t r = ls->inner[q];
                ls->run_lut[q] = s->lut[r] + base[r] + (int64_t)digit[last] * s->vstride[r][last];
                ls->run_stride[q] = s->vstride[r][last];
                ls->run_row[q] = v + (int64_t)s->first_row[r] * nv;
            }
            if (nv == 1)
                sums1(ls, ni, up0, run, out + done);
            else
                sums2(ls, ni, up0, up1, run, out + 2 * done);
            done = skip ? keep_below(out, nv, cut, done, run, i, at) : number_all(at, done, run, i);
        } /* else: every sum of the run is >= cut */
        i += run;
        /* carry into the upper voices */
        digit[last] = 0;
        for (int u = last - 1; u >= 0; --u) {
            if (++digit[u] < radix[u])
                break;
            digit[u] = 0;
        }
        if (i < count)
            upper_bases(s, digit, base);
    }
    return done;
}
