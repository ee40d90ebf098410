#include "test_support.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "parnassus/deoverlap.h"

void ts_test_filter(void)
{
    const char *pattern = getenv("PN_TEST_FILTER");
    if (pattern && *pattern)
        cmocka_set_test_filter(pattern);
}

void ts_seed(ts_rng *rng, uint64_t seed)
{
    rng->state = seed * 0x2545F4914F6CDD1Dull + 0x632BE59BD9B4E019ull;
}

uint64_t ts_next(ts_rng *rng)
{
    uint64_t z = (rng->state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double ts_uniform(ts_rng *rng)
{
    return (double)(ts_next(rng) >> 11) * 0x1.0p-53;
}

double ts_range(ts_rng *rng, double lo, double hi)
{
    return lo + (hi - lo) * ts_uniform(rng);
}

uint64_t ts_below(ts_rng *rng, uint64_t bound)
{
    const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    uint64_t x;
    do
        x = ts_next(rng);
    while (x >= limit);
    return x % bound;
}

int32_t ts_between(ts_rng *rng, int32_t lo, int32_t hi)
{
    return lo + (int32_t)ts_below(rng, (uint64_t)(hi - lo) + 1);
}

int ts_cell_source(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells)
{
    const ts_assign *a = ctx;
    if (rule < 0 || rule >= a->num_rules || first < 0 || first + count > a->n)
        return -1;
    memcpy(cells, a->cells + (size_t)rule * (size_t)a->n + first, (size_t)count * sizeof *cells);
    return 0;
}

/* Random sparse weights (u^3, about one in five zero, never all zero)
 * normalised to sum 1. */
static void random_distribution(ts_rng *rng, double *p, int64_t count)
{
    double sum = 0.0;
    for (int64_t i = 0; i < count; ++i) {
        double u = ts_uniform(rng);
        p[i] = ts_below(rng, 5) == 0 ? 0.0 : u * u * u;
        sum += p[i];
    }
    if (!(sum > 0.0)) {
        p[ts_below(rng, (uint64_t)count)] = 1.0;
        sum = 1.0;
    }
    for (int64_t i = 0; i < count; ++i)
        p[i] /= sum;
}

pn_problem *ts_random_problem(ts_rng *rng, int64_t n, int32_t num_rules, const int32_t *sizes,
                              ts_targets targets, ts_assign *assign)
{
    pn_problem *prob = NULL;
    pn_error_info info;
    if (pn_problem_create(n, num_rules, sizes, NULL, &prob, &info) != PN_OK)
        fail_msg("pn_problem_create: %s", info.message);
    int32_t *cells = malloc((size_t)n * (size_t)num_rules * sizeof *cells);
    int32_t *latent = malloc((size_t)n * sizeof *latent);
    double *p = malloc((size_t)n * sizeof *p);
    assert_non_null(cells);
    assert_non_null(latent);
    assert_non_null(p);
    /* inputs share a latent value now and then, so some columns repeat */
    const int64_t num_latent = n > 3 ? n - (int64_t)ts_below(rng, (uint64_t)(n / 3)) : n;
    for (int64_t x = 0; x < n; ++x)
        latent[x] = (int32_t)ts_below(rng, (uint64_t)num_latent);
    for (int32_t r = 0; r < num_rules; ++r) {
        const int32_t m = sizes[r];
        /* a skewed random map latent -> cell: uneven cells, some empty */
        const double skew = ts_range(rng, 1.0, 2.5);
        int32_t *map = malloc((size_t)num_latent * sizeof *map);
        assert_non_null(map);
        for (int64_t l = 0; l < num_latent; ++l) {
            int32_t c = (int32_t)((double)m * pow(ts_uniform(rng), skew));
            map[l] = c < m ? c : m - 1;
        }
        for (int64_t x = 0; x < n; ++x)
            cells[(size_t)r * (size_t)n + (size_t)x] = map[latent[x]];
        free(map);
    }
    random_distribution(rng, p, n);
    for (int32_t r = 0; r < num_rules; ++r) {
        double *b = prob->target + prob->rule_start[r];
        const int from_p = targets == TS_TARGETS_CONSISTENT ||
                           (targets == TS_TARGETS_MIXED && r < (num_rules + 1) / 2);
        if (from_p) {
            for (int64_t x = 0; x < n; ++x)
                b[cells[(size_t)r * (size_t)n + (size_t)x]] += p[x];
        } else {
            random_distribution(rng, b, sizes[r]);
        }
    }
    ts_assign a = {n, num_rules, cells};
    if (pn_deoverlap(prob, ts_cell_source, &a, &info) != PN_OK)
        fail_msg("pn_deoverlap: %s", info.message);
    if (pn_problem_validate(prob, &info) != PN_OK)
        fail_msg("random problem invalid: %s", info.message);
    free(latent);
    free(p);
    if (assign)
        *assign = a;
    else
        free(cells);
    return prob;
}

pn_problem *ts_artificial(pn_gen_case which, uint64_t seed)
{
    pn_problem *prob = NULL;
    pn_error_info info;
    if (pn_gen_artificial(which, seed, &prob, &info) != PN_OK)
        fail_msg("pn_gen_artificial: %s", info.message);
    return prob;
}

void ts_artificial_group_masses(pn_gen_case which, uint64_t seed, const pn_problem *prob,
                                const double *p, double *q)
{
    enum { N = PN_GEN_ARTIFICIAL_N, K = PN_GEN_ARTIFICIAL_RULES };
    static int32_t cell[K][N];
    assert_int_equal(prob->num_rules, K);
    for (int32_t r = 0; r < K; ++r)
        assert_int_equal(pn_gen_artificial_assign(which, seed, r, cell[r]), PN_OK);
    memset(q, 0, (size_t)prob->num_groups * sizeof *q);
    for (int32_t x = 0; x < N; ++x) {
        int32_t rows[K];
        for (int32_t r = 0; r < K; ++r)
            rows[r] = prob->rule_start[r] + cell[r][x];
        int64_t found = -1;
        for (int64_t k = 0; k < prob->num_groups && found < 0; ++k)
            if (memcmp(prob->group_rows + k * K, rows, sizeof rows) == 0)
                found = k;
        if (found < 0)
            fail_msg("raw input %d matches no group", (int)x);
        q[found] += p[x];
    }
}

void ts_weights_keeping(const pn_problem *prob, unsigned mask, double *w)
{
    double sum = 0.0;
    for (int32_t r = 0; r < prob->num_rules; ++r)
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            sum += w[i] = mask >> r & 1u ? 1.0 + 0.1 * (double)(i % 5) : 0.0;
    for (int32_t i = 0; i < prob->num_rows; ++i)
        w[i] /= sum;
}

void ts_apply(const pn_problem *prob, const double *q, double *y)
{
    const int32_t K = prob->num_rules;
    for (int32_t i = 0; i < prob->num_rows; ++i)
        y[i] = 0.0;
    for (int64_t k = 0; k < prob->num_groups; ++k)
        for (int32_t r = 0; r < K; ++r)
            y[prob->group_rows[k * K + r]] += q[k];
}

double ts_objective(const pn_problem *prob, double lambda_p, double lambda_w, double alpha,
                    const double *q, const double *w, double *weighted_error)
{
    double *y = malloc((size_t)prob->num_rows * sizeof *y);
    assert_non_null(y);
    ts_apply(prob, q, y);
    double E = 0.0, qq = 0.0, lasso = 0.0, ridge = 0.0;
    for (int32_t i = 0; i < prob->num_rows; ++i) {
        double d = y[i] - prob->target[i];
        E += w[i] * d * d;
    }
    for (int64_t k = 0; k < prob->num_groups; ++k)
        qq += q[k] * q[k];
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        double sq = 0.0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            sq += w[i] * w[i];
        lasso += sqrt((double)pn_rule_size(prob, r)) * sqrt(sq);
        ridge += sq;
    }
    free(y);
    if (weighted_error)
        *weighted_error = E;
    return E + lambda_p * qq + lambda_w * (alpha * lasso + (1.0 - alpha) * ridge);
}

double ts_pstep_objective(const pn_problem *prob, const double *w, double lambda_p, const double *q)
{
    double E;
    double F = ts_objective(prob, lambda_p, 0.0, 0.0, q, w, &E);
    return F;
}

void ts_pstep_kkt(const pn_problem *prob, const double *w, double lambda_p, const double *q,
                  double *kkt, double *gap)
{
    const int32_t K = prob->num_rules, m = prob->num_rows;
    double *y = malloc((size_t)m * sizeof *y);
    assert_non_null(y);
    ts_apply(prob, q, y);
    for (int32_t i = 0; i < m; ++i)
        y[i] = 2.0 * w[i] * (y[i] - prob->target[i]);
    double gmin = INFINITY, gsup = -INFINITY, dot = 0.0;
    for (int64_t k = 0; k < prob->num_groups; ++k) {
        double g = 2.0 * lambda_p * q[k];
        for (int32_t r = 0; r < K; ++r)
            g += y[prob->group_rows[k * K + r]];
        if (g < gmin)
            gmin = g;
        if (q[k] > 0.0 && g > gsup)
            gsup = g;
        dot += q[k] * g;
    }
    free(y);
    *kkt = gsup - gmin;
    *gap = dot - gmin;
}

void ts_selection(const pn_problem *prob, const double *w, unsigned char *mask)
{
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        mask[r] = 0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            if (w[i] != 0.0)
                mask[r] = 1;
    }
}

double ts_max_abs_diff(const double *a, const double *b, int64_t n)
{
    double d = 0.0;
    for (int64_t i = 0; i < n; ++i)
        d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

const char *ts_format_selection(const unsigned char *mask, int32_t num_rules, char *buf,
                                unsigned long size)
{
    size_t used = 0;
    buf[0] = '\0';
    used += (size_t)snprintf(buf + used, size - used, "{");
    int first = 1;
    for (int32_t r = 0; r < num_rules && used < size; ++r)
        if (mask[r]) {
            used += (size_t)snprintf(buf + used, size - used, "%s%d", first ? "" : ",", (int)r + 1);
            first = 0;
        }
    if (used < size)
        snprintf(buf + used, size - used, "}");
    return buf;
}
