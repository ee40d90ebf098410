/* Tests of the sampler: alias tables (exact reconstruction, edge cases),
 * group member lists, the group map from a cell source, unconditional and
 * conditional draws (chi-square goodness of fit at fixed seeds, so the
 * outcome never changes), concurrent readers and allocation-free draws. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>
#include <pthread.h>

#include "alloc_count.h"
#include "parnassus/deoverlap.h"
#include "parnassus/sampler.h"
#include "test_support.h"

/* ---- helpers ---- */

/* 99.9% quantile of chi-square with df degrees of freedom (Wilson and
 * Hilferty; within 0.5% of the exact value for df >= 10). */
static double chi2_q999(int64_t df)
{
    const double z = 3.090232306167813, d = (double)df;
    const double h = 2.0 / (9.0 * d);
    const double t = 1.0 - h + z * sqrt(h);
    return d * t * t * t;
}

/* Pearson's statistic of counts[0..m-1] (N draws) against probabilities
 * prob[0..m-1] (sum 1). Bins expected below 5 are pooled into one; bins of
 * probability 0 must be empty. Returns the statistic, *df its degrees of
 * freedom. */
static double chi2_stat(const int64_t *counts, const double *prob, int64_t m, int64_t N,
                        int64_t *df)
{
    double stat = 0.0, pool_e = 0.0;
    int64_t pool_c = 0, bins = 0;
    for (int64_t i = 0; i < m; ++i) {
        const double e = prob[i] * (double)N;
        if (prob[i] == 0.0) {
            assert_int_equal(counts[i], 0);
            continue;
        }
        if (e < 5.0) {
            pool_e += e;
            pool_c += counts[i];
            continue;
        }
        const double d = (double)counts[i] - e;
        stat += d * d / e;
        ++bins;
    }
    if (pool_e > 0.0) {
        const double d = (double)pool_c - pool_e;
        stat += d * d / pool_e;
        ++bins;
    }
    *df = bins - 1;
    return stat;
}

static void assert_fits(const int64_t *counts, const double *prob, int64_t m, int64_t N,
                        const char *what)
{
    int64_t df;
    const double stat = chi2_stat(counts, prob, m, N, &df);
    assert_true(df >= 10);
    const double q = chi2_q999(df);
    if (!(stat < q))
        fail_msg("%s: chi-square %.2f with %lld df, 99.9%% quantile %.2f", what, stat,
                 (long long)df, q);
}

/* Masses of the entries reconstructed from the columns, normalised. */
static void reconstruct(const pn_alias *a, double *mass)
{
    const int64_t n = pn_alias_size(a);
    for (int64_t i = 0; i < n; ++i)
        mass[i] = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        double keep;
        int64_t other;
        pn_alias_column(a, i, &keep, &other);
        assert_true(keep >= 0.0 && keep <= 1.0);
        assert_true(other >= 0 && other < n);
        mass[i] += keep;
        mass[other] += 1.0 - keep;
    }
    for (int64_t i = 0; i < n; ++i)
        mass[i] /= (double)n;
}

static void assert_exact(const pn_alias *a, const double *w, int64_t n)
{
    double total = 0.0;
    for (int64_t i = 0; i < n; ++i)
        total += w[i];
    double *mass = malloc((size_t)n * sizeof *mass);
    assert_non_null(mass);
    reconstruct(a, mass);
    for (int64_t i = 0; i < n; ++i)
        if (fabs(mass[i] - w[i] / total) > 1e-12)
            fail_msg("entry %lld: table %.17g, weight %.17g", (long long)i, mass[i], w[i] / total);
    free(mass);
}

static pn_alias *new_alias(int64_t capacity)
{
    pn_alias *a = NULL;
    pn_error_info info;
    if (pn_alias_create(capacity, &a, &info) != PN_OK)
        fail_msg("pn_alias_create: %s", info.message);
    return a;
}

static void build_ok(pn_alias *a, const double *w, int64_t n)
{
    pn_error_info info;
    if (pn_alias_build(a, w, n, &info) != PN_OK)
        fail_msg("pn_alias_build: %s", info.message);
}

/* ---- alias tables ---- */

static void test_alias_exact_random(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 11);
    enum { CAP = 5000 };
    pn_alias *a = new_alias(CAP);
    double *w = malloc(CAP * sizeof *w);
    assert_non_null(w);
    const int64_t sizes[] = {1, 2, 3, 17, 1000, 4999, 5000, 250};
    for (size_t t = 0; t < sizeof sizes / sizeof *sizes; ++t) {
        const int64_t n = sizes[t];
        for (int64_t i = 0; i < n; ++i) {
            const double u = ts_uniform(&rng);
            /* about one weight in four zero, the rest spread over 6 decades */
            w[i] = ts_below(&rng, 4) == 0 ? 0.0 : pow(10.0, 6.0 * u - 3.0);
        }
        w[ts_below(&rng, (uint64_t)n)] = 1.0; /* never all zero */
        build_ok(a, w, n);
        assert_int_equal(pn_alias_size(a), n);
        assert_exact(a, w, n);
    }
    free(w);
    pn_alias_free(a);
}

static void test_alias_edge_cases(void **state)
{
    (void)state;
    pn_alias *a = new_alias(8);
    const uint64_t bits[] = {
        0, 1, UINT64_MAX, UINT64_MAX / 2, 0x8000000000000000ull, 0x123456789abcdef0ull};
    enum { NB = sizeof bits / sizeof *bits };

    /* a single weight: always entry 0, whatever the bits */
    const double one[] = {3.5};
    build_ok(a, one, 1);
    assert_exact(a, one, 1);
    for (int i = 0; i < NB; ++i)
        assert_int_equal(pn_alias_draw(a, bits[i]), 0);

    /* zeros are never drawn */
    const double zeros[] = {0.0, 0.0, 2.0, 0.0, 0.0};
    build_ok(a, zeros, 5);
    assert_exact(a, zeros, 5);
    ts_rng rng;
    ts_seed(&rng, 5);
    for (int i = 0; i < NB; ++i)
        assert_int_equal(pn_alias_draw(a, bits[i]), 2);
    for (int i = 0; i < 100000; ++i)
        assert_int_equal(pn_alias_draw(a, ts_next(&rng)), 2);

    /* huge ratios */
    const double huge[] = {1.0, 1e15, 1e-300, 0.0, 1e-15, 7.0};
    build_ok(a, huge, 6);
    assert_exact(a, huge, 6);
    const double tiny_big[] = {1e-300, 1e300};
    build_ok(a, tiny_big, 2);
    assert_exact(a, tiny_big, 2);
    for (int i = 0; i < 100000; ++i)
        assert_int_equal(pn_alias_draw(a, ts_next(&rng)), 1);

    /* equal weights: every column keeps itself */
    const double flat[] = {2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0};
    build_ok(a, flat, 8);
    assert_exact(a, flat, 8);
    for (int64_t i = 0; i < 8; ++i) {
        double keep;
        int64_t other;
        pn_alias_column(a, i, &keep, &other);
        assert_true(keep == 1.0 && other == i);
    }

    /* determinism: the same bits, the same entry */
    const double w[] = {0.1, 0.2, 0.3, 0.4};
    build_ok(a, w, 4);
    pn_alias *b = new_alias(4);
    build_ok(b, w, 4);
    for (int i = 0; i < 10000; ++i) {
        const uint64_t u = ts_next(&rng);
        const int64_t x = pn_alias_draw(a, u);
        assert_true(x >= 0 && x < 4);
        assert_int_equal(x, pn_alias_draw(a, u));
        assert_int_equal(x, pn_alias_draw(b, u));
    }
    pn_alias_free(b);

    /* bad input: an error, and the table is left empty */
    pn_error_info info;
    const double neg[] = {1.0, -1e-300};
    const double nan_w[] = {1.0, NAN};
    const double inf_w[] = {1.0, INFINITY};
    const double all0[] = {0.0, 0.0};
    const double overflow[] = {1e308, 1e308};
    assert_int_equal(pn_alias_build(a, neg, 2, &info), PN_ERR_INVALID);
    assert_int_equal(pn_alias_size(a), 0);
    assert_int_equal(pn_alias_draw(a, 42), -1);
    assert_int_equal(pn_alias_build(a, nan_w, 2, &info), PN_ERR_INVALID);
    assert_int_equal(pn_alias_build(a, inf_w, 2, &info), PN_ERR_INVALID);
    assert_int_equal(pn_alias_build(a, all0, 2, &info), PN_ERR_INVALID);
    assert_int_equal(pn_alias_build(a, overflow, 2, &info), PN_ERR_INVALID);
    assert_int_equal(pn_alias_build(a, flat, 0, &info), PN_ERR_INVALID);
    assert_int_equal(pn_alias_build(a, flat, 9, &info), PN_ERR_INVALID);
    pn_alias *c = NULL;
    assert_int_equal(pn_alias_create(0, &c, &info), PN_ERR_INVALID);
    assert_null(c);
    pn_alias_free(a);
}

static void test_alias_chi_square(void **state)
{
    (void)state;
    enum { N = 60, DRAWS = 200000 };
    double w[N], p[N];
    int64_t counts[N] = {0};
    double total = 0.0;
    for (int i = 0; i < N; ++i) {
        w[i] = i % 13 == 4 ? 0.0 : (double)((i * 37) % 17 + 1) * (i < 10 ? 20.0 : 1.0);
        total += w[i];
    }
    for (int i = 0; i < N; ++i)
        p[i] = w[i] / total;
    pn_alias *a = new_alias(N);
    build_ok(a, w, N);
    pn_rng rng;
    pn_rng_seed(&rng, 2024);
    for (int i = 0; i < DRAWS; ++i)
        counts[pn_alias_draw(a, pn_rng_next(&rng))]++;
    assert_fits(counts, p, N, DRAWS, "alias");
    pn_alias_free(a);
}

/* ---- a hand-made problem: 50 groups of sizes 1..23, inputs shuffled ---- */

enum { HG = 50 };

typedef struct hand_problem {
    pn_problem *prob;
    ts_assign assign;
    int32_t *group_of; /* from pn_group_of_compute */
    pn_group_index *index;
} hand_problem;

static void hand_problem_make(hand_problem *h)
{
    int64_t n = 0;
    for (int g = 0; g < HG; ++g)
        n += 1 + (g * 13) % 23;
    int32_t *tag = malloc((size_t)n * sizeof *tag);
    assert_non_null(tag);
    int64_t x = 0;
    for (int g = 0; g < HG; ++g)
        for (int j = 0; j < 1 + (g * 13) % 23; ++j)
            tag[x++] = g;
    ts_rng rng;
    ts_seed(&rng, 77);
    for (int64_t i = n - 1; i > 0; --i) { /* Fisher-Yates */
        const int64_t j = (int64_t)ts_below(&rng, (uint64_t)i + 1);
        const int32_t t = tag[i];
        tag[i] = tag[j];
        tag[j] = t;
    }
    const int32_t sizes[] = {10, 5};
    pn_error_info info;
    h->prob = NULL;
    if (pn_problem_create(n, 2, sizes, NULL, &h->prob, &info) != PN_OK)
        fail_msg("pn_problem_create: %s", info.message);
    for (int32_t r = 0; r < 2; ++r)
        for (int32_t i = h->prob->rule_start[r]; i < h->prob->rule_start[r + 1]; ++i)
            h->prob->target[i] = 1.0 / sizes[r];
    h->assign.n = n;
    h->assign.num_rules = 2;
    h->assign.cells = malloc(2 * (size_t)n * sizeof *h->assign.cells);
    assert_non_null(h->assign.cells);
    for (int64_t i = 0; i < n; ++i) {
        h->assign.cells[i] = tag[i] / 5;
        h->assign.cells[n + i] = tag[i] % 5;
    }
    free(tag);
    if (pn_deoverlap(h->prob, ts_cell_source, &h->assign, &info) != PN_OK)
        fail_msg("pn_deoverlap: %s", info.message);
    assert_int_equal(h->prob->num_groups, HG);
    h->group_of = malloc((size_t)n * sizeof *h->group_of);
    assert_non_null(h->group_of);
    if (pn_group_of_compute(h->prob, ts_cell_source, &h->assign, h->group_of, &info) != PN_OK)
        fail_msg("pn_group_of_compute: %s", info.message);
    if (pn_group_index_create(h->group_of, n, HG, &h->index, &info) != PN_OK)
        fail_msg("pn_group_index_create: %s", info.message);
}

static void hand_problem_free(hand_problem *h)
{
    pn_group_index_free(h->index);
    free(h->group_of);
    free(h->assign.cells);
    pn_problem_free(h->prob);
}

/* Varied masses, a few groups at zero. */
static void hand_masses(const pn_problem *prob, double *q)
{
    for (int64_t k = 0; k < prob->num_groups; ++k)
        q[k] = k % 11 == 3 ? 0.0 : (double)((k * 7) % 9 + 1) * (double)((k * 7) % 9 + 1);
}

/* p over the raw inputs from q and group_of. */
static void raw_distribution(const pn_problem *prob, const int32_t *group_of, const double *q,
                             double *p)
{
    double total = 0.0;
    for (int64_t k = 0; k < prob->num_groups; ++k)
        total += q[k];
    for (int64_t x = 0; x < prob->n; ++x)
        p[x] = q[group_of[x]] / total / (double)prob->group_size[group_of[x]];
}

/* ---- group members and the group map ---- */

static void check_partition(const pn_group_index *index, const int32_t *group_of, int64_t n)
{
    unsigned char *seen = calloc((size_t)n, 1);
    assert_non_null(seen);
    int64_t total = 0;
    const int64_t G = pn_group_index_num_groups(index);
    assert_int_equal(pn_group_index_num_inputs(index), n);
    for (int64_t k = 0; k < G; ++k) {
        const int64_t s = pn_group_index_size(index, k);
        const int32_t *m = pn_group_index_members(index, k);
        for (int64_t i = 0; i < s; ++i) {
            assert_true(m[i] >= 0 && m[i] < n);
            assert_int_equal(group_of[m[i]], k);
            assert_false(seen[m[i]]);
            seen[m[i]] = 1;
            if (i > 0)
                assert_true(m[i - 1] < m[i]);
        }
        total += s;
    }
    assert_int_equal(total, n);
    free(seen);
}

static void test_group_index(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 3);
    enum { N = 3000, G = 400 };
    int32_t *group_of = malloc(N * sizeof *group_of);
    assert_non_null(group_of);
    for (int64_t x = 0; x < N; ++x) /* skewed; odd groups stay empty */
        group_of[x] = 2 * (int32_t)(G / 2 * pow(ts_uniform(&rng), 2.0));
    pn_group_index *index = NULL;
    pn_error_info info;
    assert_int_equal(pn_group_index_create(group_of, N, G, &index, &info), PN_OK);
    check_partition(index, group_of, N);
    int empty = 0;
    for (int64_t k = 0; k < G; ++k) {
        if (pn_group_index_size(index, k) == 0) {
            ++empty;
            assert_int_equal(pn_group_index_draw(index, k, ts_next(&rng)), -1);
            continue;
        }
        for (int i = 0; i < 20; ++i) {
            const int64_t x = pn_group_index_draw(index, k, ts_next(&rng));
            assert_int_equal(group_of[x], k);
        }
        /* the extreme bits reach the first and the last member */
        const int32_t *m = pn_group_index_members(index, k);
        assert_int_equal(pn_group_index_draw(index, k, 0), m[0]);
        assert_int_equal(pn_group_index_draw(index, k, UINT64_MAX),
                         m[pn_group_index_size(index, k) - 1]);
    }
    assert_true(empty > 0);
    assert_int_equal(pn_group_index_draw(index, -1, 0), -1);
    assert_int_equal(pn_group_index_draw(index, G, 0), -1);
    pn_group_index_free(index);

    group_of[17] = G;
    pn_group_index *bad = NULL;
    assert_int_equal(pn_group_index_create(group_of, N, G, &bad, &info), PN_ERR_INVALID);
    assert_null(bad);
    free(group_of);
}

/* The map agrees with the cells: input x's tuple is its group's column. */
static void check_group_map(const pn_problem *prob, const ts_assign *a, const int32_t *group_of)
{
    const int32_t K = prob->num_rules;
    for (int64_t x = 0; x < prob->n; ++x) {
        const int32_t k = group_of[x];
        assert_true(k >= 0 && k < prob->num_groups);
        for (int32_t r = 0; r < K; ++r)
            assert_int_equal(prob->group_rows[(int64_t)k * K + r],
                             prob->rule_start[r] + a->cells[(int64_t)r * a->n + x]);
    }
}

static void test_group_map_random(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 19);
    const int32_t sizes[] = {6, 4, 9, 3};
    for (int t = 0; t < 4; ++t) {
        ts_assign a;
        const int64_t n = 500 + 3000 * t;
        pn_problem *prob = ts_random_problem(&rng, n, 4, sizes, TS_TARGETS_RANDOM, &a);
        int32_t *group_of = malloc((size_t)n * sizeof *group_of);
        assert_non_null(group_of);
        pn_error_info info;
        if (pn_group_of_compute(prob, ts_cell_source, &a, group_of, &info) != PN_OK)
            fail_msg("pn_group_of_compute: %s", info.message);
        check_group_map(prob, &a, group_of);
        pn_group_index *index = NULL;
        assert_int_equal(pn_group_index_create(group_of, n, prob->num_groups, &index, &info),
                         PN_OK);
        check_partition(index, group_of, n);
        for (int64_t k = 0; k < prob->num_groups; ++k)
            assert_int_equal(pn_group_index_size(index, k), prob->group_size[k]);
        pn_group_index_free(index);

        /* a problem that does not match the cells is refused */
        prob->group_size[0]++;
        prob->group_size[prob->num_groups - 1]--;
        assert_int_equal(pn_group_of_compute(prob, ts_cell_source, &a, group_of, &info),
                         PN_ERR_INVALID);
        prob->group_size[0]--;
        prob->group_size[prob->num_groups - 1]++;
        if (prob->num_groups >= 2) {
            const int32_t K = prob->num_rules;
            int32_t saved[4];
            memcpy(saved, prob->group_rows + K, (size_t)K * sizeof *saved);
            memcpy(prob->group_rows + K, prob->group_rows, (size_t)K * sizeof *saved);
            assert_int_equal(pn_group_of_compute(prob, ts_cell_source, &a, group_of, &info),
                             PN_ERR_INVALID);
            memcpy(prob->group_rows + K, saved, (size_t)K * sizeof *saved);
        }
        assert_int_equal(pn_group_of_compute(prob, ts_cell_source, &a, group_of, &info), PN_OK);
        free(group_of);
        free(a.cells);
        pn_problem_free(prob);
    }
}

/* A cell source over the artificial case A1's assignment. */
typedef struct artificial_cells {
    int32_t cells[PN_GEN_ARTIFICIAL_RULES][PN_GEN_ARTIFICIAL_N];
} artificial_cells;

static int artificial_source(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells)
{
    const artificial_cells *c = ctx;
    if (rule < 0 || rule >= PN_GEN_ARTIFICIAL_RULES || first < 0 ||
        first + count > PN_GEN_ARTIFICIAL_N)
        return -1;
    memcpy(cells, c->cells[rule] + first, (size_t)count * sizeof *cells);
    return 0;
}

static void test_group_map_artificial(void **state)
{
    (void)state;
    pn_problem *prob = ts_artificial(PN_GEN_A1, 5);
    artificial_cells *c = malloc(sizeof *c);
    assert_non_null(c);
    for (int32_t r = 0; r < PN_GEN_ARTIFICIAL_RULES; ++r)
        assert_int_equal(pn_gen_artificial_assign(PN_GEN_A1, 5, r, c->cells[r]), PN_OK);
    int32_t group_of[PN_GEN_ARTIFICIAL_N];
    pn_error_info info;
    if (pn_group_of_compute(prob, artificial_source, c, group_of, &info) != PN_OK)
        fail_msg("pn_group_of_compute: %s", info.message);
    const int32_t K = prob->num_rules;
    for (int64_t x = 0; x < PN_GEN_ARTIFICIAL_N; ++x)
        for (int32_t r = 0; r < K; ++r)
            assert_int_equal(prob->group_rows[(int64_t)group_of[x] * K + r],
                             prob->rule_start[r] + c->cells[r][x]);
    pn_group_index *index = NULL;
    assert_int_equal(
        pn_group_index_create(group_of, PN_GEN_ARTIFICIAL_N, prob->num_groups, &index, &info),
        PN_OK);
    check_partition(index, group_of, PN_GEN_ARTIFICIAL_N);

    /* the witness p of rules {1,2}, aggregated to q, drawn back per input */
    double p[PN_GEN_ARTIFICIAL_N];
    assert_int_equal(pn_gen_artificial_witness(PN_GEN_A1, 5, PN_GEN_WITNESS_RULES_1_2, p), PN_OK);
    double *q = calloc((size_t)prob->num_groups, sizeof *q);
    assert_non_null(q);
    for (int64_t x = 0; x < PN_GEN_ARTIFICIAL_N; ++x)
        q[group_of[x]] += p[x];
    pn_sampler *s = NULL;
    assert_int_equal(pn_sampler_create(prob, index, &s, &info), PN_OK);
    assert_int_equal(pn_sampler_set_q(s, q, &info), PN_OK);
    double pr[PN_GEN_ARTIFICIAL_N];
    raw_distribution(prob, group_of, q, pr);
    enum { DRAWS = 200000 };
    int64_t counts[PN_GEN_ARTIFICIAL_N] = {0};
    pn_rng rng;
    pn_rng_seed(&rng, 99);
    for (int i = 0; i < DRAWS; ++i) {
        const int64_t x = pn_sampler_draw(s, &rng);
        assert_true(x >= 0 && x < PN_GEN_ARTIFICIAL_N);
        counts[x]++;
    }
    assert_fits(counts, pr, PN_GEN_ARTIFICIAL_N, DRAWS, "artificial A1, per input");
    pn_sampler_free(s);
    free(q);
    pn_group_index_free(index);
    free(c);
    pn_problem_free(prob);
}

/* ---- sampler ---- */

static void test_sampler_chi_square(void **state)
{
    (void)state;
    hand_problem h;
    hand_problem_make(&h);
    check_partition(h.index, h.group_of, h.prob->n);
    const int64_t n = h.prob->n;
    double q[HG], pq[HG];
    hand_masses(h.prob, q);
    double total = 0.0;
    for (int k = 0; k < HG; ++k)
        total += q[k];
    for (int k = 0; k < HG; ++k)
        pq[k] = q[k] / total;
    double *p = malloc((size_t)n * sizeof *p);
    int64_t *cx = calloc((size_t)n, sizeof *cx);
    assert_true(p && cx);
    raw_distribution(h.prob, h.group_of, q, p);

    pn_sampler *s = NULL;
    pn_error_info info;
    assert_int_equal(pn_sampler_create(h.prob, h.index, &s, &info), PN_OK);
    pn_rng rng;
    pn_rng_seed(&rng, 123);
    assert_int_equal(pn_sampler_draw(s, &rng), -1); /* no masses yet */
    assert_int_equal(pn_sampler_set_q(s, q, &info), PN_OK);

    enum { DRAWS = 200000 };
    int64_t cg[HG] = {0};
    for (int i = 0; i < DRAWS; ++i) {
        const int64_t x = pn_sampler_draw(s, &rng);
        assert_true(x >= 0 && x < n);
        cx[x]++;
        cg[h.group_of[x]]++;
    }
    assert_fits(cg, pq, HG, DRAWS, "sampler, per group");
    assert_fits(cx, p, n, DRAWS, "sampler, per input");
    /* the test has power: the same counts reject the uniform law on groups */
    double flat[HG];
    for (int k = 0; k < HG; ++k)
        flat[k] = 1.0 / HG;
    int64_t df;
    assert_true(chi2_stat(cg, flat, HG, DRAWS, &df) > 10.0 * chi2_q999(df));

    /* draw_many is the same stream */
    int64_t many[64];
    pn_rng r1, r2;
    pn_rng_seed(&r1, 7);
    pn_rng_seed(&r2, 7);
    pn_sampler_draw_many(s, &r1, many, 64);
    for (int i = 0; i < 64; ++i)
        assert_int_equal(many[i], pn_sampler_draw(s, &r2));

    /* new masses: all on one group */
    double q1[HG] = {0};
    q1[17] = 0.25;
    assert_int_equal(pn_sampler_set_q(s, q1, &info), PN_OK);
    for (int i = 0; i < 1000; ++i)
        assert_int_equal(h.group_of[pn_sampler_draw(s, &rng)], 17);

    /* bad masses: refused, then nothing is drawn */
    q1[3] = -1.0;
    assert_int_equal(pn_sampler_set_q(s, q1, &info), PN_ERR_INVALID);
    assert_int_equal(pn_sampler_draw(s, &rng), -1);

    /* an index that does not match the problem */
    h.prob->group_size[0]++;
    pn_sampler *bad = NULL;
    assert_int_equal(pn_sampler_create(h.prob, h.index, &bad, &info), PN_ERR_INVALID);
    assert_null(bad);
    h.prob->group_size[0]--;

    pn_sampler_free(s);
    free(p);
    free(cx);
    hand_problem_free(&h);
}

/* ---- conditional draws ---- */

static void test_conditional(void **state)
{
    (void)state;
    ts_rng trng;
    ts_seed(&trng, 41);
    const int32_t sizes[] = {8, 5, 7};
    ts_assign a;
    const int64_t n = 4000;
    pn_problem *prob = ts_random_problem(&trng, n, 3, sizes, TS_TARGETS_RANDOM, &a);
    const int64_t G = prob->num_groups;
    int32_t *group_of = malloc((size_t)n * sizeof *group_of);
    assert_non_null(group_of);
    pn_error_info info;
    assert_int_equal(pn_group_of_compute(prob, ts_cell_source, &a, group_of, &info), PN_OK);
    pn_group_index *index = NULL;
    assert_int_equal(pn_group_index_create(group_of, n, G, &index, &info), PN_OK);

    /* label = the cell of rule 0 (like the soprano); one extra label unused */
    const int32_t L = sizes[0] + 1;
    const int32_t *label_of = a.cells;
    int64_t per_label[9] = {0};
    for (int64_t x = 0; x < n; ++x)
        per_label[label_of[x]]++;
    /* the label with most members loses all its mass */
    int32_t dead = 0;
    for (int32_t l = 1; l < L; ++l)
        if (per_label[l] > per_label[dead])
            dead = l;
    double *q = malloc((size_t)G * sizeof *q);
    double *p = malloc((size_t)n * sizeof *p);
    assert_true(q && p);
    for (int64_t k = 0; k < G; ++k) {
        const int32_t l = prob->group_rows[k * prob->num_rules] - prob->rule_start[0];
        q[k] = l == dead || k % 9 == 5 ? 0.0 : 0.1 + ts_uniform(&trng);
    }
    raw_distribution(prob, group_of, q, p);

    pn_conditional *c = NULL;
    assert_int_equal(pn_conditional_create(index, label_of, L, &c, &info), PN_OK);
    int64_t pairs = 0; /* nonempty (group, label) pairs, counted here */
    for (int64_t k = 0; k < G; ++k) {
        unsigned char seen[9] = {0};
        for (int64_t i = 0; i < pn_group_index_size(index, k); ++i) {
            const int32_t l = label_of[pn_group_index_members(index, k)[i]];
            pairs += !seen[l];
            seen[l] = 1;
        }
    }
    assert_int_equal(pn_conditional_num_pairs(c), pairs);
    pn_rng rng;
    pn_rng_seed(&rng, 555);
    assert_int_equal(pn_conditional_draw(c, 0, &rng), -1); /* no masses yet */
    assert_int_equal(pn_conditional_set_q(c, q, &info), PN_OK);

    double mass[9] = {0}, sum = 0.0;
    for (int64_t x = 0; x < n; ++x)
        mass[label_of[x]] += p[x];
    for (int32_t l = 0; l < L; ++l) {
        assert_true(fabs(pn_conditional_label_mass(c, l) - mass[l]) < 1e-12);
        sum += pn_conditional_label_mass(c, l);
    }
    assert_true(fabs(sum - 1.0) < 1e-12);
    assert_true(pn_conditional_label_mass(c, dead) == 0.0);
    assert_true(pn_conditional_label_mass(c, L - 1) == 0.0);
    assert_int_equal(pn_conditional_draw(c, dead, &rng), -1);
    assert_int_equal(pn_conditional_draw(c, L - 1, &rng), -1);
    assert_int_equal(pn_conditional_draw(c, L, &rng), -1);
    assert_int_equal(pn_conditional_draw(c, -1, &rng), -1);

    /* every label with mass: draws carry the label and fit p(x | l) */
    enum { DRAWS = 100000 };
    int64_t *counts = malloc((size_t)n * sizeof *counts);
    double *pc = malloc((size_t)n * sizeof *pc);
    assert_true(counts && pc);
    int tested = 0;
    for (int32_t l = 0; l < L; ++l) {
        if (mass[l] == 0.0)
            continue;
        memset(counts, 0, (size_t)n * sizeof *counts);
        for (int64_t x = 0; x < n; ++x)
            pc[x] = label_of[x] == l ? p[x] / mass[l] : 0.0;
        for (int i = 0; i < DRAWS; ++i) {
            const int64_t x = pn_conditional_draw(c, l, &rng);
            assert_true(x >= 0 && x < n);
            assert_int_equal(label_of[x], l);
            counts[x]++;
        }
        int64_t df;
        const double stat = chi2_stat(counts, pc, n, DRAWS, &df);
        if (df >= 10) {
            if (!(stat < chi2_q999(df)))
                fail_msg("label %d: chi-square %.2f with %lld df", (int)l, stat, (long long)df);
            ++tested;
        }
    }
    assert_true(tested >= 3);

    /* a rebuild with other masses: the dead label comes back */
    for (int64_t k = 0; k < G; ++k)
        q[k] = 1.0;
    assert_int_equal(pn_conditional_set_q(c, q, &info), PN_OK);
    assert_true(pn_conditional_label_mass(c, dead) > 0.0);
    assert_int_equal(label_of[pn_conditional_draw(c, dead, &rng)], dead);
    /* bad masses */
    q[0] = NAN;
    assert_int_equal(pn_conditional_set_q(c, q, &info), PN_ERR_INVALID);
    assert_int_equal(pn_conditional_draw(c, dead, &rng), -1);
    int32_t *bad_labels = malloc((size_t)n * sizeof *bad_labels);
    assert_non_null(bad_labels);
    memcpy(bad_labels, label_of, (size_t)n * sizeof *bad_labels);
    bad_labels[n / 2] = L;
    pn_conditional *bad = NULL;
    assert_int_equal(pn_conditional_create(index, bad_labels, L, &bad, &info), PN_ERR_INVALID);
    assert_null(bad);

    free(bad_labels);
    free(counts);
    free(pc);
    pn_conditional_free(c);
    free(q);
    free(p);
    pn_group_index_free(index);
    free(group_of);
    free(a.cells);
    pn_problem_free(prob);
}

/* ---- concurrent readers (meaningful under the thread sanitizer) ---- */

typedef struct reader {
    const pn_sampler *sampler;
    const pn_conditional *cond;
    const int32_t *group_of;
    const int32_t *label_of;
    uint64_t seed;
    int64_t n;
    int ok;
} reader;

static void *reader_run(void *arg)
{
    reader *r = arg;
    pn_rng rng;
    pn_rng_seed(&rng, r->seed);
    r->ok = 1;
    for (int i = 0; i < 50000; ++i) {
        const int64_t x = pn_sampler_draw(r->sampler, &rng);
        if (x < 0 || x >= r->n)
            r->ok = 0;
        const int32_t l = (int32_t)(i % 10);
        const int64_t y = pn_conditional_draw(r->cond, l, &rng);
        if (y >= 0 && r->label_of[y] != l)
            r->ok = 0;
    }
    return NULL;
}

static void test_concurrent_draws(void **state)
{
    (void)state;
    hand_problem h;
    hand_problem_make(&h);
    const int64_t n = h.prob->n;
    double q[HG];
    hand_masses(h.prob, q);
    int32_t *label_of = malloc((size_t)n * sizeof *label_of);
    assert_non_null(label_of);
    for (int64_t x = 0; x < n; ++x)
        label_of[x] = (int32_t)(x % 10);
    pn_sampler *s = NULL;
    pn_conditional *c = NULL;
    pn_error_info info;
    assert_int_equal(pn_sampler_create(h.prob, h.index, &s, &info), PN_OK);
    assert_int_equal(pn_sampler_set_q(s, q, &info), PN_OK);
    assert_int_equal(pn_conditional_create(h.index, label_of, 10, &c, &info), PN_OK);
    assert_int_equal(pn_conditional_set_q(c, q, &info), PN_OK);
    enum { T = 4 };
    pthread_t th[T];
    reader rd[T];
    for (int t = 0; t < T; ++t) {
        rd[t] = (reader){s, c, h.group_of, label_of, 1000 + (uint64_t)t, n, 0};
        assert_int_equal(pthread_create(&th[t], NULL, reader_run, &rd[t]), 0);
    }
    for (int t = 0; t < T; ++t) {
        assert_int_equal(pthread_join(th[t], NULL), 0);
        assert_true(rd[t].ok);
    }
    pn_conditional_free(c);
    pn_sampler_free(s);
    free(label_of);
    hand_problem_free(&h);
}

/* ---- draws and rebuilds allocate nothing ---- */

static void test_no_allocation(void **state)
{
    (void)state;
    hand_problem h;
    hand_problem_make(&h);
    const int64_t n = h.prob->n;
    double q[HG];
    hand_masses(h.prob, q);
    int32_t *label_of = malloc((size_t)n * sizeof *label_of);
    assert_non_null(label_of);
    for (int64_t x = 0; x < n; ++x)
        label_of[x] = (int32_t)(x % 7);
    pn_sampler *s = NULL;
    pn_conditional *c = NULL;
    pn_alias *a = new_alias(HG);
    pn_error_info info;
    assert_int_equal(pn_sampler_create(h.prob, h.index, &s, &info), PN_OK);
    assert_int_equal(pn_conditional_create(h.index, label_of, 7, &c, &info), PN_OK);
    pn_rng rng;
    pn_rng_seed(&rng, 1);
    int64_t sink = 0, many[32];
#if ALLOC_COUNT_WORKS
    assert_true(alloc_count_self_check());
#endif
    alloc_count_begin();
    /* everything between here and the check must not allocate */
    for (int round = 0; round < 3; ++round) {
        q[round] += 1.0;
        if (pn_alias_build(a, q, HG, &info) != PN_OK || pn_sampler_set_q(s, q, &info) != PN_OK ||
            pn_conditional_set_q(c, q, &info) != PN_OK)
            sink -= 1000000;
        for (int i = 0; i < 10000; ++i) {
            sink += pn_alias_draw(a, pn_rng_next(&rng));
            sink += pn_sampler_draw(s, &rng);
            sink += pn_conditional_draw(c, (int32_t)(i % 7), &rng);
            sink += pn_group_index_draw(h.index, i % HG, pn_rng_next(&rng));
        }
        pn_sampler_draw_many(s, &rng, many, 32);
        sink += many[31];
    }
    assert_int_equal(alloc_count_end(), 0);
    assert_true(sink > 0);
    pn_alias_free(a);
    pn_conditional_free(c);
    pn_sampler_free(s);
    free(label_of);
    hand_problem_free(&h);
#if !ALLOC_COUNT_WORKS
    skip(); /* ran, but the allocator is the sanitizer's: nothing counted */
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_alias_exact_random), cmocka_unit_test(test_alias_edge_cases),
        cmocka_unit_test(test_alias_chi_square),   cmocka_unit_test(test_group_index),
        cmocka_unit_test(test_group_map_random),   cmocka_unit_test(test_group_map_artificial),
        cmocka_unit_test(test_sampler_chi_square), cmocka_unit_test(test_conditional),
        cmocka_unit_test(test_concurrent_draws),   cmocka_unit_test(test_no_allocation),
    };
    ts_test_filter();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
