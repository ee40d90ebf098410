/* The solver's passes over all groups through a problem's row sums
 * (problem.h): a rule set whose every sonority is a group of its own gets
 * them from pn_rule_set_build_problem, and realizing it with them gives the
 * realization the group columns give, for several targets in a row (the
 * warm context steps of generation) and as the selection moves: rules
 * dropped (the groups merge, and the passes meet each merged group at its
 * first sonority) and kept again (no merge: the kept rules include a set
 * already seen to leave every sonority on its own). Split between threads
 * (settings.threads), the passes give the same realization bit for bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/rules.h"
#include "parnassus/solver.h"
#include "pstep.h"
#include "pstep_internal.h"
#include "test_support.h"

/* Every voice's pitch and the intervals between neighbours: every
 * sonority is a group of its own. Targets learned-like: peaked but
 * nowhere zero on the listed values. The voices' ranges are filled in. */
static const char set_format[] =
    "{\"format\":\"parnassus-rules/1\",\"name\":\"t\","
    "\"space\":{\"ranges\":%s},"
    "\"rules\":["
    "{\"name\":\"s\",\"feature\":\"w(1)\",\"targets\":{\"64\":0.3,\"67\":0.4,\"69\":0.2,\"71\":0.1}"
    "},"
    "{\"name\":\"a\",\"feature\":\"w(2)\",\"targets\":{\"59\":0.2,\"60\":0.5,\"62\":0.3}},"
    "{\"name\":\"t\",\"feature\":\"w(3)\",\"targets\":{\"52\":0.3,\"55\":0.7}},"
    "{\"name\":\"b\",\"feature\":\"w(4)\",\"targets\":{\"43\":0.4,\"48\":0.6}},"
    "{\"name\":\"chord\",\"feature\":\"sort(mod12(rel(w(4,3,2,1))))\","
    "\"targets\":{\"(0,4,7)\":0.6,\"(3,8,8)\":0.2,\"(0,4,9)\":0.2}},"
    "{\"name\":\"sa\",\"feature\":\"diff(w(2,1))\",\"targets\":{\"5\":0.3,\"7\":0.4,\"8\":0.3}}"
    "]}";

/* The rules over the given ranges (a JSON array of four [low, high]). */
static pn_rule_set *parse_set(const char *ranges)
{
    char text[sizeof set_format + 64];
    snprintf(text, sizeof text, set_format, ranges);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_parse("t.json", text, strlen(text), &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    return rs;
}

/* 9^4 sonorities. */
static pn_rule_set *read_set(void)
{
    return parse_set("[[64,71],[57,64],[50,57],[43,50]]");
}

/* 17^4 sonorities: cold passes there find more violators than a lane
 * holds before it prunes them. */
static pn_rule_set *read_wide_set(void)
{
    return parse_set("[[60,75],[53,68],[46,61],[39,54]]");
}

/* The rule set's problem, with row sums: every sonority a group. */
static pn_problem *build_problem(const pn_rule_set *rs)
{
    pn_problem *prob = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_build_problem(rs, &prob, NULL, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_non_null(prob->row_sums.run);
    return prob;
}

/* Solves both problems from the same start and compares the results;
 * returns the number of rules kept. */
static int solve_both(pn_solver *with, pn_solver *without, pn_start start, int64_t K)
{
    pn_info a, b;
    pn_error_info info = {PN_OK, ""};
    if (pn_solver_solve(with, start, &a, &info) != PN_OK ||
        pn_solver_solve(without, start, &b, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_true(a.p_kkt <= 1e-9 && b.p_kkt <= 1e-9);
    assert_int_equal(a.num_selected, b.num_selected);
    assert_true(fabs(a.objective - b.objective) <= 1e-12 * (1.0 + fabs(b.objective)));
    const double *qa = pn_solver_q(with), *qb = pn_solver_q(without);
    double diff = 0.0;
    for (int64_t k = 0; k < K; ++k)
        diff = fmax(diff, fabs(qa[k] - qb[k]));
    if (diff > 1e-9)
        fail_msg("masses differ by %g", diff);
    return a.num_selected;
}

static void test_row_sums_give_the_same_realization(void **state)
{
    (void)state;
    pn_rule_set *rs = read_set();
    pn_problem *prob = build_problem(rs);
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(prob->num_groups, prob->n); /* every sonority its own group */
    assert_non_null(prob->row_sums.run);
    pn_problem plain = *prob; /* the same problem read through its columns */
    memset(&plain.row_sums, 0, sizeof plain.row_sums);

    pn_settings s;
    pn_settings_default(&s);
    s.restarts = 0;
    s.grow_seeds = 0;
    s.lambda_p = 3e-5;
    pn_solver *with = NULL, *without = NULL;
    assert_int_equal(pn_solver_create(prob, &s, &with, &info), PN_OK);
    assert_int_equal(pn_solver_create(&plain, &s, &without, &info), PN_OK);
    solve_both(with, without, PN_START_COLD, prob->num_groups);

    /* new targets, warm: each rule's mass moved to another value */
    double *b = malloc((size_t)prob->num_rows * sizeof *b);
    assert_non_null(b);
    for (int step = 0; step < 6; ++step) {
        for (int32_t r = 0; r < prob->num_rules; ++r) {
            const int32_t first = prob->rule_start[r], size = pn_rule_size(prob, r);
            for (int32_t i = 0; i < size; ++i)
                b[first + i] = prob->target[first + (i + step + r) % size];
        }
        assert_int_equal(pn_solver_update_targets(with, b, &info), PN_OK);
        assert_int_equal(pn_solver_update_targets(without, b, &info), PN_OK);
        solve_both(with, without, PN_START_WARM, prob->num_groups);
    }
    /* conservative settings drop rules (merged groups), the default keeps
     * them all again, back and forth */
    const double knob[] = {-12.0, 0.0, -4.0, -12.0, 3.0};
    int fewer = 0;
    for (size_t k = 0; k < sizeof knob / sizeof knob[0]; ++k) {
        s.log2_lambda_w = knob[k];
        assert_int_equal(pn_solver_update_settings(with, &s, &info), PN_OK);
        assert_int_equal(pn_solver_update_settings(without, &s, &info), PN_OK);
        fewer += solve_both(with, without, PN_START_WARM, prob->num_groups) < prob->num_rules;
    }
    assert_true(fewer > 0); /* some setting merged groups */
    free(b);
    pn_solver_free(with);
    pn_solver_free(without);
    pn_problem_free(prob);
    pn_rule_set_free(rs);
}

/* Solves both and asserts the same solution, bit for bit, and the same
 * path to it. */
static void solve_identically(pn_solver *one, pn_solver *many, pn_start start, int64_t K, int32_t m)
{
    pn_info a, b;
    pn_error_info info = {PN_OK, ""};
    if (pn_solver_solve(one, start, &a, &info) != PN_OK ||
        pn_solver_solve(many, start, &b, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_int_equal(a.alternations, b.alternations);
    assert_int_equal(a.newton_iterations, b.newton_iterations);
    assert_int_equal(a.num_selected, b.num_selected);
    assert_memory_equal(pn_solver_q(one), pn_solver_q(many), (size_t)K * sizeof(double));
    assert_memory_equal(pn_solver_w(one), pn_solver_w(many), (size_t)m * sizeof(double));
}

/* One thread and two, three or four sharing the passes: the same
 * realizations through a cold start, context steps and knob moves that
 * drop rules (merged groups) and keep them again. */
static void test_threads_give_the_same_realization(void **state)
{
    (void)state;
    pn_rule_set *rs = read_wide_set();
    pn_problem *prob = build_problem(rs);
    pn_error_info info = {PN_OK, ""};
    assert_non_null(prob->row_sums.run);
    assert_true(prob->num_groups > 4 * 4 * 2048); /* every lane has blocks to pass over */
    double *b = malloc((size_t)prob->num_rows * sizeof *b);
    assert_non_null(b);
    for (int threads = 2; threads <= PN_MAX_THREADS; ++threads) {
        pn_settings s;
        pn_settings_default(&s);
        s.restarts = 1;
        s.grow_seeds = 1;
        s.lambda_p = 3e-5;
        s.threads = 1;
        pn_solver *one = NULL, *many = NULL;
        assert_int_equal(pn_solver_create(prob, &s, &one, &info), PN_OK);
        s.threads = threads;
        assert_int_equal(pn_solver_create(prob, &s, &many, &info), PN_OK);
        solve_identically(one, many, PN_START_COLD, prob->num_groups, prob->num_rows);
        for (int step = 0; step < 4; ++step) {
            for (int32_t r = 0; r < prob->num_rules; ++r) {
                const int32_t first = prob->rule_start[r], size = pn_rule_size(prob, r);
                for (int32_t i = 0; i < size; ++i)
                    b[first + i] = prob->target[first + (i + step + r) % size];
            }
            assert_int_equal(pn_solver_update_targets(one, b, &info), PN_OK);
            assert_int_equal(pn_solver_update_targets(many, b, &info), PN_OK);
            solve_identically(one, many, PN_START_WARM, prob->num_groups, prob->num_rows);
        }
        const double knob[] = {-12.0, 0.0, 3.0};
        for (size_t k = 0; k < sizeof knob / sizeof knob[0]; ++k) {
            s.log2_lambda_w = knob[k];
            s.threads = 1;
            assert_int_equal(pn_solver_update_settings(one, &s, &info), PN_OK);
            s.threads = threads;
            assert_int_equal(pn_solver_update_settings(many, &s, &info), PN_OK);
            solve_identically(one, many, PN_START_WARM, prob->num_groups, prob->num_rows);
        }
        /* a realization spread over thousands of sonorities (a large
         * lambda_p): its pricing rounds grow with the support
         * (pn_pstep_round_add), so the lanes gather and prune several
         * times the candidates of a small support's rounds */
        s.log2_lambda_w = 0.0;
        s.lambda_p = 1e-2;
        s.threads = 1;
        assert_int_equal(pn_solver_update_settings(one, &s, &info), PN_OK);
        s.threads = threads;
        assert_int_equal(pn_solver_update_settings(many, &s, &info), PN_OK);
        solve_identically(one, many, PN_START_WARM, prob->num_groups, prob->num_rows);
        int64_t support = 0;
        for (int64_t k = 0; k < prob->num_groups; ++k)
            support += pn_solver_q(one)[k] > 0.0;
        assert_true(support > PN_PSTEP_ADD_PER_SUPPORTED * pn_pstep_max_add(prob->num_rows));
        /* the thread count is fixed at creation */
        s.threads = 1;
        assert_int_equal(pn_solver_update_settings(many, &s, &info), PN_ERR_INVALID);
        assert_non_null(strstr(info.message, "threads"));
        pn_solver_free(one);
        pn_solver_free(many);
    }
    free(b);
    pn_problem_free(prob);
    pn_rule_set_free(rs);
}

/* A p-step keeps its structure while the selection drops two of its
 * rules and takes one back: its passes over all groups carry the dropped
 * rules in the row sums' mask (their rows hold 0), and it reaches the
 * optimum a p-step built for the selection alone reaches. */
static void test_structure_kept_when_rules_drop(void **state)
{
    (void)state;
    pn_rule_set *rs = read_set();
    pn_problem *prob = build_problem(rs);
    pn_error_info info = {PN_OK, ""};
    const int64_t G = prob->num_groups;
    const int32_t m = prob->num_rows;
    assert_non_null(prob->row_sums.run);
    assert_true(G > 4 * PN_PSTEP_WS_MARGIN); /* priced, not every group at once */
    double *w = malloc((size_t)m * sizeof *w), *y = malloc((size_t)m * sizeof *y);
    double *q_kept = malloc((size_t)G * sizeof *q_kept);
    double *q_fresh = malloc((size_t)G * sizeof *q_fresh);
    assert_true(w && y && q_kept && q_fresh);
    pn_pstep *kept = NULL, *fresh = NULL;
    assert_int_equal(pn_pstep_create(prob, 1, &kept, &info), PN_OK);
    /* rules s a t b chord sa: all six, then t and b dropped, b back, all */
    const unsigned all = 0x3f, t = 1u << 2, b = 1u << 3;
    const unsigned steps[] = {all, all & ~t & ~b, all & ~t, all};
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; ++s) {
        ts_weights_keeping(prob, steps[s], w);
        assert_int_equal(pn_pstep_solve(kept, prob, w, 1e-3, 1e-11, 100, y), PN_OUTCOME_OK);
        assert_int_equal(kept->restructured, s == 0);
        assert_true(kept->pricing_rounds > 0);
        pn_pstep_expand(kept, q_kept);
        assert_int_equal(pn_pstep_create(prob, 1, &fresh, &info), PN_OK);
        assert_int_equal(pn_pstep_solve(fresh, prob, w, 1e-3, 1e-11, 100, y), PN_OUTCOME_OK);
        assert_true(fresh->J < G || steps[s] == all); /* built for fewer rules: merged */
        pn_pstep_expand(fresh, q_fresh);
        pn_pstep_free(fresh);
        const double diff = ts_max_abs_diff(q_kept, q_fresh, G);
        if (diff > 1e-8)
            fail_msg("selection %zu: masses differ by %g", s, diff);
    }
    pn_pstep_free(kept);
    free(w);
    free(y);
    free(q_kept);
    free(q_fresh);
    pn_problem_free(prob);
    pn_rule_set_free(rs);
}

/* A set whose groups hold several sonorities has no row sums. */
static void test_no_row_sums_when_groups_merge(void **state)
{
    (void)state;
    static const char text[] =
        "{\"format\":\"parnassus-rules/1\",\"name\":\"t\","
        "\"space\":{\"ranges\":[[64,71],[57,64]]},"
        "\"rules\":[{\"name\":\"s\",\"feature\":\"mod12(w(1))\",\"targets\":{\"4\":1}}]}";
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_rule_set_parse("t.json", text, strlen(text), &rs, &info), PN_OK);
    pn_problem *prob = NULL;
    assert_int_equal(pn_rule_set_build_problem(rs, &prob, NULL, &info), PN_OK);
    assert_true(prob->num_groups < prob->n);
    assert_null(prob->row_sums.run);
    pn_problem_free(prob);
    pn_rule_set_free(rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_row_sums_give_the_same_realization),
        cmocka_unit_test(test_structure_kept_when_rules_drop),
        cmocka_unit_test(test_no_row_sums_when_groups_merge),
        cmocka_unit_test(test_threads_give_the_same_realization),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
