/* Sums over the rows of every sonority, walking the space in order
 * (feature.h, "sums over the rows"): the rules whose window leaves out the
 * last voice are summed once per run of that voice, the others read their
 * table at consecutive entries. With a bound, a run is skipped when the
 * rules with the last voice cannot bring it under the cut: from each
 * one's least over all its rows, then, in a prepared pass, over the run
 * (feature_run_low.c). */
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
    /* ... and the others: first the num_top whose window leaves out the
     * voice above the last too ("top" rules, whose sum holds over a run of
     * that voice), then the "mid" ones */
    int32_t *outer;
    int32_t num_outer, num_top;
    int64_t *base; /* per kept rule: the lookup offset of the top voices */
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
    int32_t *first_row;  /* per rule: its first row */
    int32_t *num_rows;   /* per rule: its cells */
    pn_run_low *run_low; /* per rule with the last voice: its per-run bounds */
    lane_scratch lane[PN_ROW_SUMS_LANES];
};

/* One run of the last voice, one value per row: out[j] = up + the inner
 * rules' values at step j, added rule by rule (each inner loop one lookup
 * at one stride: 3 to 7 rules are summed, and a loop over them per step
 * cost more than the loads) in the order of a sum per step. */
static void sums1(const lane_scratch *s, int32_t ni, double up, int64_t run, double *out)
{
    for (int64_t j = 0; j < run; ++j)
        out[j] = up;
    for (int32_t q = 0; q < ni; ++q) {
        const int32_t *lut = s->run_lut[q];
        const int64_t st = s->run_stride[q];
        const double *row = s->run_row[q];
        for (int64_t j = 0; j < run; ++j)
            out[j] += row[lut[j * st]];
    }
}

/* The same with two values per row, interleaved. */
static void sums2(const lane_scratch *s, int32_t ni, double up0, double up1, int64_t run,
                  double *out)
{
    for (int64_t j = 0; j < run; ++j) {
        out[2 * j] = up0;
        out[2 * j + 1] = up1;
    }
    for (int32_t q = 0; q < ni; ++q) {
        const int32_t *lut = s->run_lut[q];
        const int64_t st = s->run_stride[q];
        const double *row = s->run_row[q];
        for (int64_t j = 0; j < run; ++j) {
            const double *p = row + 2 * (int64_t)lut[j * st];
            out[2 * j] += p[0];
            out[2 * j + 1] += p[1];
        }
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

/* With the pass prepared, whether a run whose sums are at least lo (from
 * each inner rule's least over all its rows) certainly has them >= the
 * cut once each inner rule's least over this run, given the upper voices'
 * digits, replaces its least: the tables first (one read a rule), then
 * the lists (a dozen reads), stopping as soon as it is told. */
static int run_above_cut(const pn_feature_sums *s, const lane_scratch *ls, const int *digit,
                         const double *v, int nv, double lo0, double lo1, const double *cut)
{
    const int upper = s->space.num_voices - 1;
    for (int kind = PN_RUN_LOW_TABLE; kind <= PN_RUN_LOW_LIST; ++kind)
        for (int32_t q = 0; q < ls->num_inner; ++q) {
            const int32_t r = ls->inner[q];
            const pn_run_low *rl = &s->run_low[r];
            if ((int)rl->kind != kind)
                continue;
            double least[2];
            pn_run_low_at(rl, digit, upper, v + (int64_t)s->first_row[r] * nv, nv, least);
            lo0 += least[0] - rl->low[0];
            if (nv == 2)
                lo1 += least[1] - rl->low[1];
            if (lo0 >= cut[0] && (nv == 1 || lo1 >= cut[1]))
                return 1;
        }
    return 0;
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
    s->num_rows = malloc((size_t)K * sizeof *s->num_rows);
    s->run_low = calloc((size_t)K, sizeof *s->run_low);
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
    if (!lut || !s->vstride || !s->first_row || !s->num_rows || !s->run_low || !lanes_ok ||
        !s->inner_all || !s->outer_all) {
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
        s->num_rows[r] = pn_feature_table_size(t);
        if (s->vstride[r][last] != 0) {
            s->inner_all[s->num_inner_all++] = r;
            pn_run_low_init(&s->run_low[r], t, &set->space);
        } else
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
    free(s->num_rows);
    for (int32_t r = 0; s->run_low && r < s->num_rules; ++r)
        pn_run_low_free(&s->run_low[r]);
    free(s->run_low);
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

/* Lookup offsets of the digits of the voices above the one above the last
 * ("top" voices), per kept rule: they hold for a run of that voice's
 * digits, which each run adds itself. */
static void top_bases(const pn_feature_sums *s, const lane_scratch *ls, const int *digit,
                      int64_t *base)
{
    const int last = s->space.num_voices - 1;
    for (int32_t q = 0; q < ls->num_inner + ls->num_outer; ++q) {
        const int32_t r = q < ls->num_inner ? ls->inner[q] : ls->outer[q - ls->num_inner];
        int64_t b = 0;
        for (int v = 0; v < last - 1; ++v)
            b += digit[v] * s->vstride[r][v];
        base[r] = b;
    }
}

/* The lookup offset of rule r's upper voices: its top base and the digit
 * of the voice above the last. */
static inline int64_t upper_base(const pn_feature_sums *s, int32_t r, const int64_t *base,
                                 const int *digit)
{
    const int mid = s->space.num_voices - 2;
    return mid >= 0 ? base[r] + digit[mid] * s->vstride[r][mid] : base[r];
}

/* The next run of the last voice: carries into the upper voices' digits.
 * Returns the highest voice that changed (-1 past the space's end). */
static int next_run(const pn_feature_sums *s, const int *radix, int *digit)
{
    const int last = s->space.num_voices - 1;
    digit[last] = 0;
    int u = last - 1;
    for (; u >= 0; --u) {
        if (++digit[u] < radix[u])
            break;
        digit[u] = 0;
    }
    return u;
}

/* The sum of the kept rules without the last voice, outer[from .. to). */
static void outer_sum(const pn_feature_sums *s, const lane_scratch *ls, const int64_t *base,
                      const int *digit, const double *v, int nv, int32_t from, int32_t to,
                      double *sum)
{
    sum[0] = sum[1] = 0.0;
    for (int32_t o = from; o < to; ++o) {
        const int32_t r = ls->outer[o];
        const int64_t row = s->first_row[r] + s->lut[r][upper_base(s, r, base, digit)];
        sum[0] += v[row * nv];
        if (nv == 2)
            sum[1] += v[row * nv + 1];
    }
}

void pn_feature_sums_prepare(pn_feature_sums *s, const unsigned char *kept, const double *v, int nv)
{
    for (int32_t q = 0; q < s->num_inner_all; ++q) {
        const int32_t r = s->inner_all[q];
        if (!kept || kept[r])
            pn_run_low_prepare(&s->run_low[r], v + (int64_t)s->first_row[r] * nv, s->num_rows[r],
                               nv);
    }
}

int64_t pn_feature_sums_run(pn_feature_sums *fs, int lane, const unsigned char *kept,
                            const double *v, int nv, int64_t first, int64_t count,
                            const double *lower, const double *cut, int prepared, int32_t *at,
                            double *out)
{
    const pn_feature_sums *s = fs;
    lane_scratch *ls = &fs->lane[lane];
    const int k = s->space.num_voices, last = k - 1;
    /* the kept rules only: a dropped rule adds nothing; the rules without
     * the last voice, those without the voice above it first (their sum
     * holds while only that voice moves) */
    ls->num_inner = ls->num_outer = 0;
    for (int32_t q = 0; q < s->num_inner_all; ++q)
        if (!kept || kept[s->inner_all[q]])
            ls->inner[ls->num_inner++] = s->inner_all[q];
    for (int mid = 0; mid <= 1; ++mid) {
        for (int32_t q = 0; q < s->num_outer_all; ++q) {
            const int32_t r = s->outer_all[q];
            if ((!kept || kept[r]) && (last >= 1 && s->vstride[r][last - 1] != 0) == mid)
                ls->outer[ls->num_outer++] = r;
        }
        if (!mid)
            ls->num_top = ls->num_outer;
    }
    int digit[PN_SPACE_MAX_VOICES], radix[PN_SPACE_MAX_VOICES];
    for (int i = 0; i < k; ++i)
        radix[i] = s->space.high[i] - s->space.low[i] + 2;
    int64_t x = first;
    for (int i = k - 1; i >= 0; --i) {
        digit[i] = (int)(x % radix[i]);
        x /= radix[i];
    }
    int64_t *base = ls->base;
    /* the bound: what the rules with the last voice add at least */
    const int skip = cut && (lower || prepared);
    double inner_low[2] = {0.0, 0.0};
    for (int32_t q = 0; skip && q < ls->num_inner; ++q)
        for (int c = 0; c < nv; ++c)
            inner_low[c] +=
                prepared ? s->run_low[ls->inner[q]].low[c] : lower[(int64_t)ls->inner[q] * nv + c];
    int64_t i = 0, done = 0;
    int moved = 0; /* the highest voice moved since the last run */
    double top[2] = {0.0, 0.0};
    while (i < count) {
        /* the rules without the last voice, once for this run of it; the
         * top voices' part only when they moved */
        if (i == 0 || moved < last - 1) {
            top_bases(s, ls, digit, base);
            outer_sum(s, ls, base, digit, v, nv, 0, ls->num_top, top);
        }
        double mid[2];
        outer_sum(s, ls, base, digit, v, nv, ls->num_top, ls->num_outer, mid);
        const double up0 = top[0] + mid[0], up1 = top[1] + mid[1];
        const int64_t run =
            radix[last] - digit[last] < count - i ? radix[last] - digit[last] : count - i;
        const double lo0 = up0 + inner_low[0], lo1 = up1 + inner_low[1];
        const int above = skip && ((lo0 >= cut[0] && (nv == 1 || lo1 >= cut[1])) ||
                                   (prepared && run_above_cut(s, ls, digit, v, nv, lo0, lo1, cut)));
        if (!above) {
            /* the inner rules' entries for this run: consecutive steps of
             * the last voice move each lookup by its stride */
            const int32_t ni = ls->num_inner;
            for (int32_t q = 0; q < ni; ++q) {
                const int32_t r = ls->inner[q];
                ls->run_lut[q] = s->lut[r] + upper_base(s, r, base, digit) +
                                 (int64_t)digit[last] * s->vstride[r][last];
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
        moved = next_run(s, radix, digit);
    }
    return done;
}
