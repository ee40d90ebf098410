/* Tests of the p-step's linear-system module (linsys.h): its Newton
 * direction against a dense solve of the same generalised Hessian, by a
 * fresh factorisation (with the block elimination) and by preconditioned
 * CG from that factor; and the outcome names (outcome.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "linsys.h"
#include "test_support.h"

/* Three kept rules; the first has enough coupled rows to be eliminated. */
enum { RULES = 3, ROWS = 20 + 6 + 9, GROUPS = 80 };
static const int32_t block_first[RULES] = {0, 20, 26};
static const int32_t block_len[RULES] = {20, 6, 9};

typedef struct system {
    int32_t rows[GROUPS * RULES];
    int32_t weight[GROUPS];
    int32_t position_group[GROUPS]; /* position -> group (reversed order) */
    double copy_weight[GROUPS];
    int32_t copy_rows[GROUPS * RULES];
    int64_t support[GROUPS];
    double t[GROUPS];
    double w[ROWS];
    int32_t global_row[ROWS];
    unsigned char passive[ROWS];
    int32_t scratch[GROUPS];
    pn_linsys_matrix A;
} system_t;

/* Random groups (one row per rule), weights, w with a few passive rows and
 * every third position unsupported; positions copy the first half. */
static void make_system(system_t *s, uint64_t seed)
{
    ts_rng rng;
    ts_seed(&rng, seed);
    memset(s, 0, sizeof *s);
    for (int32_t j = 0; j < GROUPS; ++j) {
        for (int32_t k = 0; k < RULES; ++k)
            s->rows[j * RULES + k] = block_first[k] + ts_between(&rng, 0, block_len[k] - 1);
        s->weight[j] = ts_between(&rng, 1, 3);
    }
    for (int32_t a = 0; a < ROWS; ++a) {
        s->global_row[a] = a;
        s->passive[a] = a % 11 == 5;
        s->w[a] = s->passive[a] ? 0.0 : ts_range(&rng, 0.01, 0.2);
    }
    int64_t count = 0;
    for (int32_t p = 0; p < GROUPS; ++p) {
        const int32_t j = GROUPS - 1 - p;
        s->position_group[p] = j;
        s->copy_weight[p] = (double)s->weight[j];
        memcpy(s->copy_rows + p * RULES, s->rows + j * RULES, RULES * sizeof(int32_t));
        s->t[p] = p % 3 == 2 ? -1.0 : 1.0;
        if (s->t[p] > 0.0)
            s->support[count++] = p;
    }
    pn_linsys_matrix A = {
        .rows = ROWS,
        .k = RULES,
        .block_first = block_first,
        .passive = s->passive,
        .w = s->w,
        .global_row = s->global_row,
        .lambda = 1e-2,
        .count = count,
        .position = s->support,
        .copied = GROUPS / 2,
        .copy_rows = s->copy_rows,
        .copy_weight = s->copy_weight,
        .group_of = s->position_group,
        .group_rows = s->rows,
        .group_weight = s->weight,
        .positions = GROUPS,
        .t = s->t,
        .scratch = s->scratch,
    };
    s->A = A;
}

/* The direction by a dense solve: H over the rows that are not passive and
 * mu (passive rows hold 0), by Gaussian elimination with pivoting. */
static void dense_direction(const system_t *s, const double *g, double *d)
{
    enum { N = ROWS + 1 };
    static double H[N][N + 1];
    memset(H, 0, sizeof H);
    for (int32_t a = 0; a < ROWS; ++a)
        H[a][a] = s->passive[a] ? 1.0 : s->A.lambda / s->w[a];
    for (int64_t i = 0; i < s->A.count; ++i) {
        const int32_t j = s->position_group[s->support[i]];
        const double c = s->weight[j];
        int32_t idx[RULES + 1];
        double sign[RULES + 1];
        int n = 0;
        for (int32_t k = 0; k < RULES; ++k)
            if (!s->passive[s->rows[j * RULES + k]]) {
                idx[n] = s->rows[j * RULES + k];
                sign[n++] = 1.0;
            }
        idx[n] = ROWS;
        sign[n++] = -1.0;
        for (int x = 0; x < n; ++x)
            for (int z = 0; z < n; ++z)
                H[idx[x]][idx[z]] += c * sign[x] * sign[z];
    }
    for (int32_t a = 0; a < N; ++a)
        H[a][N] = a < ROWS && s->passive[a] ? 0.0 : -g[a];
    for (int col = 0; col < N; ++col) {
        int piv = col;
        for (int r = col + 1; r < N; ++r)
            if (fabs(H[r][col]) > fabs(H[piv][col]))
                piv = r;
        for (int c = 0; c <= N; ++c) {
            const double tmp = H[col][c];
            H[col][c] = H[piv][c];
            H[piv][c] = tmp;
        }
        for (int r = col + 1; r < N; ++r) {
            const double f = H[r][col] / H[col][col];
            for (int c = col; c <= N; ++c)
                H[r][c] -= f * H[col][c];
        }
    }
    for (int r = N - 1; r >= 0; --r) {
        double v = H[r][N];
        for (int c = r + 1; c < N; ++c)
            v -= H[r][c] * d[c];
        d[r] = v / H[r][r];
    }
}

static double relative_difference(const double *x, const double *y, int n)
{
    double diff = 0.0, norm = 0.0;
    for (int i = 0; i < n; ++i) {
        diff = fmax(diff, fabs(x[i] - y[i]));
        norm = fmax(norm, fabs(y[i]));
    }
    return diff / norm;
}

static void random_gradient(ts_rng *rng, const system_t *s, double *g)
{
    for (int32_t a = 0; a <= ROWS; ++a)
        g[a] = a < ROWS && s->passive[a] ? 0.0 : ts_range(rng, -1.0, 1.0);
}

static void test_linsys_direction(void **state)
{
    (void)state;
    static system_t s;
    make_system(&s, 7);
    pn_linsys *ls = pn_linsys_create(ROWS, RULES, GROUPS);
    assert_non_null(ls);
    ts_rng rng;
    ts_seed(&rng, 11);
    double g[ROWS + 1], d[ROWS + 1], ref[ROWS + 1];
    /* a fresh factorisation (the first rule's block eliminated) */
    random_gradient(&rng, &s, g);
    pn_linsys_update(ls, &s.A);
    assert_int_equal(pn_linsys_solve(ls, &s.A, g, 1e-12, d), PN_OUTCOME_OK);
    assert_int_equal(pn_linsys_factorisations(ls), 1);
    dense_direction(&s, g, ref);
    assert_true(relative_difference(d, ref, ROWS + 1) < 1e-10);
    for (int32_t a = 0; a < ROWS; ++a)
        if (s.passive[a])
            assert_true(d[a] == 0.0);
    /* the same matrix, another right-hand side: CG from the factor, which
     * is exact, without a new factorisation */
    random_gradient(&rng, &s, g);
    pn_linsys_update(ls, &s.A);
    assert_int_equal(pn_linsys_solve(ls, &s.A, g, 1e-12, d), PN_OUTCOME_OK);
    assert_int_equal(pn_linsys_factorisations(ls), 1);
    dense_direction(&s, g, ref);
    assert_true(relative_difference(d, ref, ROWS + 1) < 1e-9);
    /* one group leaves the support: the old factor preconditions CG, or a
     * new factorisation follows; either way the exact direction */
    s.t[s.support[0]] = -1.0;
    memmove(s.support, s.support + 1, (size_t)(s.A.count - 1) * sizeof *s.support);
    s.A.count--;
    pn_linsys_update(ls, &s.A);
    assert_int_equal(pn_linsys_solve(ls, &s.A, g, 1e-12, d), PN_OUTCOME_OK);
    dense_direction(&s, g, ref);
    assert_true(relative_difference(d, ref, ROWS + 1) < 1e-9);
    /* the factor forgotten: a factorisation again */
    const int before = pn_linsys_factorisations(ls);
    pn_linsys_forget_factor(ls);
    pn_linsys_update(ls, &s.A);
    assert_int_equal(pn_linsys_solve(ls, &s.A, g, 1e-12, d), PN_OUTCOME_OK);
    assert_int_equal(pn_linsys_factorisations(ls), before + 1);
    assert_true(relative_difference(d, ref, ROWS + 1) < 1e-10);
    pn_linsys_free(ls);
}

static void test_outcome_names(void **state)
{
    (void)state;
    assert_int_equal(pn_outcome_error(PN_OUTCOME_OK), PN_OK);
    assert_int_equal(pn_outcome_error(PN_OUTCOME_LIMIT), PN_OK);
    assert_int_equal(pn_outcome_error(PN_OUTCOME_INTERRUPTED), PN_ERR_INTERRUPTED);
    const pn_outcome failures[] = {PN_OUTCOME_P_LINSYS, PN_OUTCOME_P_SEARCH, PN_OUTCOME_P_PRICING,
                                   PN_OUTCOME_W_STEP, PN_OUTCOME_NOT_FINITE};
    for (size_t i = 0; i < sizeof failures / sizeof failures[0]; ++i) {
        assert_true(failures[i] < 0);
        assert_int_equal(pn_outcome_error(failures[i]), PN_ERR_NUMERIC);
        assert_true(strlen(pn_outcome_part(failures[i])) > 0);
    }
    assert_string_equal(pn_outcome_part(PN_OUTCOME_P_LINSYS), "the p-step's linear system");
    assert_string_equal(pn_outcome_part(PN_OUTCOME_W_STEP), "the w-step");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linsys_direction),
        cmocka_unit_test(test_outcome_names),
    };
    ts_test_filter();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
