/* Acceptance tests of rule selection on the artificial cases (paper section
 * 5.1): the lambda_w path finds the largest consistent subset in its
 * zero-error zone, and the analysis direction recognises which rules a
 * witness distribution follows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "parnassus/path.h"
#include "parnassus/solver.h"
#include "test_support.h"
#include "wstep.h"

enum { K = PN_GEN_ARTIFICIAL_RULES, N = PN_GEN_ARTIFICIAL_N, SEEDS = 10 };

static const unsigned char expected[2][K] = {{1, 1, 0, 0, 0}, {0, 0, 1, 1, 0}};

/* The alpha = 0.8 path of each seed: the points whose weighted error is at
 * most 1e-3 of the largest on the path form the zero-error zone; all of
 * them must select the same rules, and that selection must be the largest
 * consistent subset in at least 9 of 10 seeds. */
static void path_acceptance(pn_gen_case which)
{
    const int c = which == PN_GEN_A1 ? 0 : 1;
    int correct = 0;
    for (uint64_t seed = 1; seed <= SEEDS; ++seed) {
        pn_problem *prob = ts_artificial(which, seed);
        pn_path_settings ps;
        pn_path_settings_default(&ps);
        assert_true(ps.solver.alpha == 0.8);
        pn_path *path = NULL;
        pn_error_info info;
        if (pn_path_compute(prob, &ps, &path, &info) != PN_OK)
            fail_msg("pn_path_compute: %s", info.message);
        assert_int_equal(path->num_rules, K);
        assert_true(path->num_points >= 2);
        double emax = 0.0;
        for (int i = 0; i < path->num_points; ++i) {
            emax = fmax(emax, path->points[i].weighted_error);
            if (i > 0)
                assert_true(path->points[i].log2_lambda_w > path->points[i - 1].log2_lambda_w);
        }
        const unsigned char *zone_sel = NULL;
        int zone = 0, agree = 1;
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < path->num_points; ++i) {
            const pn_path_point *pt = &path->points[i];
            if (!(pt->weighted_error <= 1e-3 * emax))
                continue;
            if (!zone_sel)
                zone_sel = pt->selected;
            else if (memcmp(zone_sel, pt->selected, K) != 0)
                agree = 0;
            lo = fmin(lo, pt->log2_lambda_w);
            hi = fmax(hi, pt->log2_lambda_w);
            zone++;
        }
        char buf[32] = "{}";
        if (zone_sel)
            ts_format_selection(zone_sel, K, buf, sizeof buf);
        const int ok = zone > 0 && agree && memcmp(zone_sel, expected[c], K) == 0;
        correct += ok;
        print_message("A%d seed %2d: %d points, zero-error zone %d points (log2 lambda_w %g .. "
                      "%g), selection %s%s -> %s\n",
                      c + 1, (int)seed, path->num_points, zone, lo, hi, buf,
                      agree ? "" : " (zone points disagree)", ok ? "correct" : "WRONG");
        if (!agree)
            fail_msg("A%d seed %d: the points of the zero-error zone select different rules", c + 1,
                     (int)seed);
        pn_path_free(path);
        pn_problem_free(prob);
    }
    print_message("A%d: largest consistent subset selected in %d of %d seeds\n", c + 1, correct,
                  SEEDS);
    assert_true(correct >= SEEDS - 1);
}

static void test_path_selects_rules_1_2_in_a1(void **state)
{
    (void)state;
    path_acceptance(PN_GEN_A1);
}

static void test_path_selects_rules_3_4_in_a2(void **state)
{
    (void)state;
    path_acceptance(PN_GEN_A2);
}

/* Analysis: the w-step for the group masses of a witness. The witness p1
 * realises rules 1 and 2 exactly, so at a small lambda_w the weights go to
 * those rules and nowhere else; p2 likewise for rules 3 and 4. */
static void test_analyze_recognises_witness(void **state)
{
    (void)state;
    static const int subsets[2] = {PN_GEN_WITNESS_RULES_1_2, PN_GEN_WITNESS_RULES_3_4};
    const double xs[] = {-8.0, -6.0, -5.0};
    const double alphas[] = {0.5, 0.8};
    int checked = 0;
    for (int c = 1; c <= 2; ++c)
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            pn_problem *prob = ts_artificial((pn_gen_case)c, seed);
            double p[N];
            double *q = malloc((size_t)prob->num_groups * sizeof *q);
            double *w = malloc((size_t)prob->num_rows * sizeof *w);
            double *y = malloc((size_t)prob->num_rows * sizeof *y);
            double *e = malloc((size_t)prob->num_rows * sizeof *e);
            assert_true(q && w && y && e);
            for (int sub = 0; sub < 2; ++sub) {
                assert_int_equal(pn_gen_artificial_witness((pn_gen_case)c, seed, subsets[sub], p),
                                 PN_OK);
                ts_artificial_group_masses((pn_gen_case)c, seed, prob, p, q);
                /* the grouping is right: q sums to 1 and realises the two rules */
                double total = 0.0;
                for (int64_t k = 0; k < prob->num_groups; ++k)
                    total += q[k];
                assert_true(fabs(total - 1.0) <= 1e-12);
                ts_apply(prob, q, y);
                for (int32_t i = 0; i < prob->num_rows; ++i) {
                    e[i] = (y[i] - prob->target[i]) * (y[i] - prob->target[i]);
                    const int32_t r = i < prob->rule_start[1]   ? 0
                                      : i < prob->rule_start[2] ? 1
                                      : i < prob->rule_start[3] ? 2
                                      : i < prob->rule_start[4] ? 3
                                                                : 4;
                    if (expected[sub][r])
                        assert_true(e[i] <= 1e-24);
                }
                for (size_t a = 0; a < sizeof alphas / sizeof alphas[0]; ++a)
                    for (size_t j = 0; j < sizeof xs / sizeof xs[0]; ++j) {
                        pn_settings st;
                        pn_settings_default(&st);
                        st.alpha = alphas[a];
                        st.log2_lambda_w = xs[j];
                        pn_error_info info;
                        if (pn_analyze(prob, &st, q, w, &info) != PN_OK)
                            fail_msg("pn_analyze: %s", info.message);
                        pn_wstep_problem wp = {K, prob->rule_start, e, exp2(xs[j]), alphas[a]};
                        assert_true(pn_wstep_kkt(&wp, w) <= 1e-8);
                        unsigned char sel[K];
                        ts_selection(prob, w, sel);
                        char buf[32];
                        if (memcmp(sel, expected[sub], K) != 0)
                            fail_msg("A%d seed %d witness of %s, alpha %g, log2 lambda_w %g: "
                                     "analysis selects %s",
                                     c, (int)seed, sub ? "{3,4}" : "{1,2}", alphas[a], xs[j],
                                     ts_format_selection(sel, K, buf, sizeof buf));
                        /* every row of the followed rules has weight */
                        for (int32_t r = 0; r < K; ++r)
                            for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
                                assert_true(expected[sub][r] ? w[i] > 0.0 : w[i] == 0.0);
                        checked++;
                    }
            }
            free(q);
            free(w);
            free(y);
            free(e);
            pn_problem_free(prob);
        }
    print_message("analysis: %d witness analyses, each selecting exactly the followed rules\n",
                  checked);
}

/* A witness followed by both halves equally (p1/2 + p2/2) follows no rule
 * exactly; at a large lambda_w the analysis keeps every rule (Theorem 1). */
static void test_analyze_large_lambda_keeps_all(void **state)
{
    (void)state;
    pn_problem *prob = ts_artificial(PN_GEN_A1, 2);
    double p1[N], p2[N], p[N];
    assert_int_equal(pn_gen_artificial_witness(PN_GEN_A1, 2, PN_GEN_WITNESS_RULES_1_2, p1), PN_OK);
    assert_int_equal(pn_gen_artificial_witness(PN_GEN_A1, 2, PN_GEN_WITNESS_RULES_3_4, p2), PN_OK);
    for (int x = 0; x < N; ++x)
        p[x] = 0.5 * (p1[x] + p2[x]);
    double *q = malloc((size_t)prob->num_groups * sizeof *q);
    double *w = malloc((size_t)prob->num_rows * sizeof *w);
    assert_true(q && w);
    ts_artificial_group_masses(PN_GEN_A1, 2, prob, p, q);
    pn_settings st;
    pn_settings_default(&st);
    st.log2_lambda_w = 12.0;
    pn_error_info info;
    assert_int_equal(pn_analyze(prob, &st, q, w, &info), PN_OK);
    unsigned char sel[K];
    ts_selection(prob, w, sel);
    for (int32_t r = 0; r < K; ++r) {
        assert_true(sel[r]);
        double sq = 0.0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            sq += w[i] * w[i];
        const double limit = sqrt((double)pn_rule_size(prob, r)) / prob->num_rows;
        assert_true(fabs(sqrt(sq) - limit) <= 1e-3 * limit);
    }
    free(q);
    free(w);
    pn_problem_free(prob);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_analyze_recognises_witness),
        cmocka_unit_test(test_analyze_large_lambda_keeps_all),
        cmocka_unit_test(test_path_selects_rules_1_2_in_a1),
        cmocka_unit_test(test_path_selects_rules_3_4_in_a2),
    };
    ts_test_filter();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
