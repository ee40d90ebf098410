/* Tests of the group de-overlap (distinct columns of A) and of the merge of
 * groups that agree on a subset of the rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "parnassus/deoverlap.h"
#include "test_support.h"

static pn_problem *new_problem(int64_t n, int32_t num_rules, const int32_t *sizes)
{
    pn_problem *prob = NULL;
    pn_error_info info;
    if (pn_problem_create(n, num_rules, sizes, NULL, &prob, &info) != PN_OK)
        fail_msg("pn_problem_create: %s", info.message);
    /* uniform targets, so the problem validates */
    for (int32_t r = 0; r < num_rules; ++r)
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            prob->target[i] = 1.0 / sizes[r];
    return prob;
}

static void deoverlap_ok(pn_problem *prob, ts_assign *a)
{
    pn_error_info info;
    if (pn_deoverlap(prob, ts_cell_source, a, &info) != PN_OK)
        fail_msg("pn_deoverlap: %s", info.message);
    if (pn_problem_validate(prob, &info) != PN_OK)
        fail_msg("after de-overlap: %s", info.message);
}

/* ---- brute force: sort the raw inputs by their cell tuple ---- */

static const ts_assign *sort_assign; /* qsort has no context argument */

static int by_tuple(const void *pa, const void *pb)
{
    const int64_t x = *(const int64_t *)pa, y = *(const int64_t *)pb;
    const int64_t n = sort_assign->n;
    for (int32_t r = 0; r < sort_assign->num_rules; ++r) {
        const int32_t cx = sort_assign->cells[r * n + x], cy = sort_assign->cells[r * n + y];
        if (cx != cy)
            return (cx > cy) - (cx < cy);
    }
    return (x > y) - (x < y); /* within a tuple, by input */
}

typedef struct ref_group {
    int64_t first, count;
} ref_group;

static int by_first(const void *pa, const void *pb)
{
    const int64_t x = ((const ref_group *)pa)->first, y = ((const ref_group *)pb)->first;
    return (x > y) - (x < y);
}

/* The de-overlap computed by sorting: groups of equal tuples, ordered by
 * their first raw input, compared with the engine's entry by entry. */
static void check_against_sort(const pn_problem *prob, const ts_assign *a)
{
    const int64_t n = a->n;
    const int32_t K = a->num_rules;
    int64_t *order = malloc((size_t)n * sizeof *order);
    ref_group *groups = malloc((size_t)n * sizeof *groups);
    assert_true(order && groups);
    for (int64_t x = 0; x < n; ++x)
        order[x] = x;
    sort_assign = a;
    qsort(order, (size_t)n, sizeof *order, by_tuple);
    int64_t G = 0;
    for (int64_t i = 0; i < n; ++i) {
        /* a new tuple starts unless the previous input has the same one */
        int same = i > 0;
        for (int32_t r = 0; r < K && same; ++r)
            same = a->cells[r * n + order[i - 1]] == a->cells[r * n + order[i]];
        if (!same) {
            groups[G].first = order[i]; /* sorted by input within a tuple */
            groups[G].count = 0;
            G++;
        }
        groups[G - 1].count++;
    }
    qsort(groups, (size_t)G, sizeof *groups, by_first);
    assert_int_equal(prob->num_groups, G);
    int64_t total = 0;
    for (int64_t k = 0; k < G; ++k) {
        assert_int_equal(prob->group_size[k], groups[k].count);
        total += prob->group_size[k];
        for (int32_t r = 0; r < K; ++r)
            assert_int_equal(prob->group_rows[k * K + r],
                             prob->rule_start[r] + a->cells[r * n + groups[k].first]);
    }
    assert_int_equal(total, n);
    free(order);
    free(groups);
}

/* ---- hand-checked examples ---- */

/* The example of the instance format: 4 inputs, rules "parity" and
 * "low-high", tuples (0,0) (1,0) (0,1) (1,1): four groups of one. */
static void test_instance_format_example(void **state)
{
    (void)state;
    const int32_t sizes[2] = {2, 2};
    int32_t cells[8] = {0, 1, 0, 1, /* parity */ 0, 0, 1, 1 /* low-high */};
    ts_assign a = {4, 2, cells};
    pn_problem *prob = new_problem(4, 2, sizes);
    deoverlap_ok(prob, &a);
    assert_int_equal(prob->num_groups, 4);
    const int32_t rows[4][2] = {{0, 2}, {1, 2}, {0, 3}, {1, 3}};
    for (int k = 0; k < 4; ++k) {
        assert_int_equal(prob->group_size[k], 1);
        assert_int_equal(prob->group_rows[2 * k], rows[k][0]);
        assert_int_equal(prob->group_rows[2 * k + 1], rows[k][1]);
    }
    pn_problem_free(prob);
}

/* pn_deoverlap_map: every raw input's group has exactly its cells. */
static void test_map_gives_each_input_its_group(void **state)
{
    (void)state;
    const int32_t sizes[3] = {3, 2, 4};
    const int64_t n = 200;
    int32_t *cells = malloc(sizeof(int32_t) * (size_t)n * 3);
    int32_t *group_of = malloc(sizeof(int32_t) * (size_t)n);
    assert_true(cells && group_of);
    for (int64_t x = 0; x < n; ++x) {
        cells[x] = (int32_t)((x * 7) % 3);
        cells[n + x] = (int32_t)((x / 5) % 2);
        cells[2 * n + x] = (int32_t)((x * x) % 4);
    }
    ts_assign a = {n, 3, cells};
    pn_problem *prob = new_problem(n, 3, sizes);
    pn_error_info info;
    assert_int_equal(pn_deoverlap_map(prob, ts_cell_source, &a, group_of, &info), PN_OK);
    int64_t *count = calloc((size_t)prob->num_groups, sizeof *count);
    assert_non_null(count);
    for (int64_t x = 0; x < n; ++x) {
        const int32_t k = group_of[x];
        assert_true(k >= 0 && k < prob->num_groups);
        for (int32_t r = 0; r < 3; ++r)
            assert_int_equal(prob->group_rows[k * 3 + r] - prob->rule_start[r], cells[r * n + x]);
        count[k]++;
    }
    for (int64_t k = 0; k < prob->num_groups; ++k)
        assert_int_equal(count[k], prob->group_size[k]);
    free(count);
    pn_problem_free(prob);
    free(group_of);
    free(cells);
}

/* Identical columns share a group, counted; order of first appearance. */
static void test_identical_columns_merge(void **state)
{
    (void)state;
    const int32_t sizes[3] = {2, 3, 2};
    /* x:          0  1  2  3  4  5  6  7 */
    int32_t cells[24] = {1, 0, 1, 0, 1, 1, 0, 0,  /* rule 1 */
                         2, 0, 2, 1, 2, 0, 0, 1,  /* rule 2 */
                         0, 1, 0, 1, 0, 0, 1, 1}; /* rule 3 */
    /* tuples: (1,2,0) (0,0,1) (1,2,0) (0,1,1) (1,2,0) (1,0,0) (0,0,1) (0,1,1)
     * groups by first appearance: (1,2,0) x3, (0,0,1) x2, (0,1,1) x2, (1,0,0) x1 */
    ts_assign a = {8, 3, cells};
    pn_problem *prob = new_problem(8, 3, sizes);
    deoverlap_ok(prob, &a);
    assert_int_equal(prob->num_groups, 4);
    const int32_t rows[4][3] = {{1, 4, 5}, {0, 2, 6}, {0, 3, 6}, {1, 2, 5}};
    const int64_t counts[4] = {3, 2, 2, 1};
    for (int k = 0; k < 4; ++k) {
        assert_int_equal(prob->group_size[k], counts[k]);
        for (int r = 0; r < 3; ++r)
            assert_int_equal(prob->group_rows[3 * k + r], rows[k][r]);
    }
    /* every input the same: one group of n */
    int32_t same[16] = {0};
    ts_assign b = {8, 2, same};
    const int32_t sizes2[2] = {3, 1};
    pn_problem *one = new_problem(8, 2, sizes2);
    deoverlap_ok(one, &b);
    assert_int_equal(one->num_groups, 1);
    assert_int_equal(one->group_size[0], 8);
    assert_int_equal(one->group_rows[0], 0);
    assert_int_equal(one->group_rows[1], 3);
    /* one raw input, one rule */
    int32_t single[1] = {2};
    ts_assign c = {1, 1, single};
    const int32_t sizes3[1] = {4};
    pn_problem *tiny = new_problem(1, 1, sizes3);
    deoverlap_ok(tiny, &c);
    assert_int_equal(tiny->num_groups, 1);
    assert_int_equal(tiny->group_rows[0], 2);
    assert_int_equal(tiny->group_size[0], 1);
    pn_problem_free(prob);
    pn_problem_free(one);
    pn_problem_free(tiny);
}

/* Running the de-overlap again replaces the groups. */
static void test_deoverlap_replaces_groups(void **state)
{
    (void)state;
    const int32_t sizes[2] = {2, 2};
    int32_t cells[8] = {0, 1, 0, 1, 0, 0, 1, 1};
    int32_t coarse[8] = {0, 0, 0, 0, 1, 1, 1, 1};
    ts_assign a = {4, 2, cells}, b = {4, 2, coarse};
    pn_problem *prob = new_problem(4, 2, sizes);
    deoverlap_ok(prob, &a);
    assert_int_equal(prob->num_groups, 4);
    deoverlap_ok(prob, &b);
    assert_int_equal(prob->num_groups, 1);
    assert_int_equal(prob->group_size[0], 4);
    assert_int_equal(prob->group_rows[0], 0);
    assert_int_equal(prob->group_rows[1], 3);
    pn_problem_free(prob);
}

/* ---- bad cell sources ---- */

typedef struct bad_source {
    ts_assign a;
    int fail_rule; /* the source reports failure for this rule (-1: never) */
} bad_source;

static int failing_source(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells)
{
    bad_source *b = ctx;
    if (rule == b->fail_rule)
        return 1;
    return ts_cell_source(&b->a, rule, first, count, cells);
}

static void test_bad_cells_rejected(void **state)
{
    (void)state;
    enum { NB = 40000 }; /* more than one chunk of the source */
    const int32_t sizes[3] = {5, 7, 3};
    int32_t *cells = malloc(3 * NB * sizeof *cells);
    assert_non_null(cells);
    const int64_t where[] = {0, 17, NB - 1, 20000};
    const int32_t bad_values[] = {7, -1, 1000, INT32_MIN};
    for (size_t t = 0; t < sizeof where / sizeof where[0]; ++t) {
        for (int32_t r = 0; r < 3; ++r)
            for (int64_t x = 0; x < NB; ++x)
                cells[r * NB + x] = (int32_t)((x * (r + 3)) % sizes[r]);
        cells[1 * NB + where[t]] = bad_values[t]; /* rule 2 out of range */
        ts_assign a = {NB, 3, cells};
        pn_problem *prob = new_problem(NB, 3, sizes);
        pn_error_info info;
        memset(&info, 0, sizeof info);
        assert_int_equal(pn_deoverlap(prob, ts_cell_source, &a, &info), PN_ERR_INVALID);
        assert_non_null(strstr(info.message, prob->rule_name[1]));
        pn_problem_free(prob);
    }
    /* the source itself fails */
    for (int32_t r = 0; r < 3; ++r)
        for (int64_t x = 0; x < NB; ++x)
            cells[r * NB + x] = (int32_t)(x % sizes[r]);
    for (int fail_rule = 0; fail_rule < 3; ++fail_rule) {
        bad_source b = {{NB, 3, cells}, fail_rule};
        pn_problem *prob = new_problem(NB, 3, sizes);
        pn_error_info info;
        assert_int_equal(pn_deoverlap(prob, failing_source, &b, &info), PN_ERR_INVALID);
        pn_problem_free(prob);
    }
    free(cells);
}

/* ---- random partitions against the sort ---- */

static void test_random_against_sort(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 71);
    for (int rep = 0; rep < 200; ++rep) {
        int32_t sizes[6];
        const int32_t K = ts_between(&rng, 1, 6);
        for (int32_t r = 0; r < K; ++r)
            sizes[r] = ts_between(&rng, 1, 9);
        const int64_t n = ts_between(&rng, 1, 500);
        ts_assign a;
        pn_problem *prob = ts_random_problem(&rng, n, K, sizes, TS_TARGETS_RANDOM, &a);
        check_against_sort(prob, &a);
        free(a.cells);
        pn_problem_free(prob);
    }
}

/* Large-ish: several source chunks, many groups. */
static void test_large_random_against_sort(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 72);
    const int32_t configs[3][6] = {
        {12, 9, 30, 5, 7, 11}, {200, 150, 3, 2, 2, 2}, {2, 2, 2, 2, 2, 2}};
    const int64_t sizes_n[3] = {200000, 150001, 65536};
    for (int t = 0; t < 3; ++t) {
        ts_assign a;
        pn_problem *prob =
            ts_random_problem(&rng, sizes_n[t], 6, configs[t], TS_TARGETS_RANDOM, &a);
        check_against_sort(prob, &a);
        print_message("n = %lld, sizes %d %d %d %d %d %d: K' = %lld\n", (long long)sizes_n[t],
                      configs[t][0], configs[t][1], configs[t][2], configs[t][3], configs[t][4],
                      configs[t][5], (long long)prob->num_groups);
        free(a.cells);
        pn_problem_free(prob);
    }
}

/* ---- merging groups that agree on the kept rows ---- */

/* Brute force: a group's key is, per rule, its row if kept and -1 if not;
 * equal keys merge; merged groups numbered by first appearance. */
static void check_merge(const pn_problem *prob, const unsigned char *keep, pn_merge_workspace *ws)
{
    const int64_t G = prob->num_groups;
    const int32_t K = prob->num_rules;
    int32_t *merged_of = malloc((size_t)G * sizeof *merged_of);
    int32_t *weight = malloc((size_t)G * sizeof *weight);
    int32_t *ref_of = malloc((size_t)G * sizeof *ref_of);
    int32_t *ref_weight = calloc((size_t)G, sizeof *ref_weight);
    int64_t *rep = malloc((size_t)G * sizeof *rep); /* a representative per merged group */
    assert_true(merged_of && weight && ref_of && ref_weight && rep);
    int64_t J = -1;
    pn_merge_groups(prob, keep, ws, &J, merged_of, weight);
    int64_t ref_J = 0;
    for (int64_t k = 0; k < G; ++k) {
        int64_t found = -1;
        for (int64_t j = 0; j < ref_J && found < 0; ++j) {
            int same = 1;
            for (int32_t r = 0; r < K && same; ++r) {
                const int32_t a = prob->group_rows[k * K + r];
                const int32_t b = prob->group_rows[rep[j] * K + r];
                same = (keep[a] ? a : -1) == (keep[b] ? b : -1);
            }
            if (same)
                found = j;
        }
        if (found < 0) {
            found = ref_J;
            rep[ref_J++] = k;
        }
        ref_of[k] = (int32_t)found;
        ref_weight[found]++;
    }
    assert_int_equal(J, ref_J);
    int64_t total = 0;
    for (int64_t k = 0; k < G; ++k)
        assert_int_equal(merged_of[k], ref_of[k]);
    for (int64_t j = 0; j < J; ++j) {
        assert_int_equal(weight[j], ref_weight[j]);
        total += weight[j];
    }
    assert_int_equal(total, G);
    free(merged_of);
    free(weight);
    free(ref_of);
    free(ref_weight);
    free(rep);
}

static void test_merge_groups_against_brute_force(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 73);
    for (int rep = 0; rep < 60; ++rep) {
        int32_t sizes[5];
        const int32_t K = ts_between(&rng, 1, 5);
        for (int32_t r = 0; r < K; ++r)
            sizes[r] = ts_between(&rng, 1, 7);
        pn_problem *prob =
            ts_random_problem(&rng, ts_between(&rng, 5, 400), K, sizes, TS_TARGETS_RANDOM, NULL);
        pn_merge_workspace *ws = NULL;
        pn_error_info info;
        assert_int_equal(pn_merge_workspace_create(prob, &ws, &info), PN_OK);
        unsigned char *keep = malloc((size_t)prob->num_rows);
        assert_non_null(keep);
        /* the same workspace serves many masks */
        for (int t = 0; t < 8; ++t) {
            for (int32_t r = 0; r < K; ++r) {
                const int mode = (int)ts_below(&rng, 4); /* 0 dropped, 1 kept, 2-3 partly */
                for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
                    keep[i] = mode == 0 ? 0 : mode == 1 ? 1 : (unsigned char)ts_below(&rng, 2);
            }
            if (t == 0)
                memset(keep, 1, (size_t)prob->num_rows); /* all kept: nothing merges */
            if (t == 1)
                memset(keep, 0, (size_t)prob->num_rows); /* nothing kept: one group */
            check_merge(prob, keep, ws);
        }
        /* the two extremes, explicitly */
        int32_t *of = malloc((size_t)prob->num_groups * sizeof *of);
        int32_t *wt = malloc((size_t)prob->num_groups * sizeof *wt);
        assert_true(of && wt);
        int64_t J;
        memset(keep, 1, (size_t)prob->num_rows);
        pn_merge_groups(prob, keep, ws, &J, of, wt);
        assert_int_equal(J, prob->num_groups);
        for (int64_t k = 0; k < J; ++k)
            assert_true(of[k] == k && wt[k] == 1);
        memset(keep, 0, (size_t)prob->num_rows);
        pn_merge_groups(prob, keep, ws, &J, of, wt);
        assert_int_equal(J, 1);
        assert_int_equal(wt[0], prob->num_groups);
        free(of);
        free(wt);
        free(keep);
        pn_merge_workspace_free(ws);
        pn_problem_free(prob);
    }
}

/* Hand-checked merge on the instance-format example: dropping rule 2
 * merges the groups by parity; keeping only cell 0 of rule 1 separates
 * parity 0 from the rest. */
static void test_merge_hand_checked(void **state)
{
    (void)state;
    const int32_t sizes[2] = {2, 2};
    int32_t cells[8] = {0, 1, 0, 1, 0, 0, 1, 1};
    ts_assign a = {4, 2, cells};
    pn_problem *prob = new_problem(4, 2, sizes);
    deoverlap_ok(prob, &a);
    pn_merge_workspace *ws = NULL;
    pn_error_info info;
    assert_int_equal(pn_merge_workspace_create(prob, &ws, &info), PN_OK);
    int32_t of[4], wt[4];
    int64_t J;
    const unsigned char parity_only[4] = {1, 1, 0, 0};
    pn_merge_groups(prob, parity_only, ws, &J, of, wt);
    assert_int_equal(J, 2);
    const int32_t expect_of[4] = {0, 1, 0, 1};
    for (int k = 0; k < 4; ++k)
        assert_int_equal(of[k], expect_of[k]);
    assert_true(wt[0] == 2 && wt[1] == 2);
    const unsigned char cell0[4] = {1, 0, 0, 0};
    pn_merge_groups(prob, cell0, ws, &J, of, wt);
    assert_int_equal(J, 2);
    for (int k = 0; k < 4; ++k)
        assert_int_equal(of[k], expect_of[k]);
    const unsigned char low_high_cell3[4] = {0, 0, 0, 1};
    pn_merge_groups(prob, low_high_cell3, ws, &J, of, wt);
    assert_int_equal(J, 2);
    const int32_t expect_of2[4] = {0, 0, 1, 1};
    for (int k = 0; k < 4; ++k)
        assert_int_equal(of[k], expect_of2[k]);
    pn_merge_workspace_free(ws);
    pn_problem_free(prob);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_instance_format_example),
        cmocka_unit_test(test_identical_columns_merge),
        cmocka_unit_test(test_map_gives_each_input_its_group),
        cmocka_unit_test(test_deoverlap_replaces_groups),
        cmocka_unit_test(test_bad_cells_rejected),
        cmocka_unit_test(test_random_against_sort),
        cmocka_unit_test(test_large_random_against_sort),
        cmocka_unit_test(test_merge_hand_checked),
        cmocka_unit_test(test_merge_groups_against_brute_force),
    };
    ts_test_filter();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
