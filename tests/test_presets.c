/* The shipped rule sets (docs/presets.md) read, have the rules and the
 * spaces the doc promises, and say musically sensible things: the major
 * set favours the major third, the minor set the minor third. */
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

#ifndef PN_PRESETS_DIR
#error "PN_PRESETS_DIR must be defined by the build"
#endif

static pn_rule_set *read_preset(const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", PN_PRESETS_DIR, file);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rules_read(path, &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    return rs;
}

static const pn_rule *rule_named(const pn_rule_set *rs, const char *name)
{
    for (int32_t r = 0; r < rs->num_rules; ++r)
        if (strcmp(rs->rules[r].name, name) == 0)
            return &rs->rules[r];
    fail_msg("%s has no rule %s", rs->name, name);
    return NULL;
}

static double target_of(const pn_rule *rule, const char *value)
{
    int32_t cell = -1;
    pn_error_info info;
    if (pn_feature_find_value(rule->table, value, &cell, &info) != PN_OK)
        fail_msg("%s", info.message);
    return rule->target[cell];
}

static int count_contexts(const pn_rule_set *rs)
{
    int n = 0;
    for (int32_t r = 0; r < rs->num_rules; ++r)
        if (rs->rules[r].context) {
            const pn_rule_context *c = rs->rules[r].context;
            assert_true(c->num_rows > 0);
            for (int32_t i = 0; i < c->num_rows; ++i)
                assert_true(isfinite(c->count[i]) && c->count[i] >= 1.0); /* learned */
            n++;
        }
    return n;
}

/* The targets after a C major chord are valid and differ from the first
 * step's for every context rule whose context was seen. */
static void check_after_c_major(const pn_rule_set *rs)
{
    const int32_t m = pn_rule_set_num_rows(rs);
    double *first = malloc((size_t)m * sizeof *first), *after = malloc((size_t)m * sizeof *after);
    assert_non_null(first);
    assert_non_null(after);
    pn_error_info info = {PN_OK, ""};
    const int chord[4] = {72, 67, 64, 48};
    assert_int_equal(pn_rules_targets(rs, NULL, first, &info), PN_OK);
    assert_int_equal(pn_rules_targets(rs, chord, after, &info), PN_OK);
    int32_t start = 0;
    for (int32_t r = 0; r < rs->num_rules; ++r) {
        const int32_t size = pn_feature_table_size(rs->rules[r].table);
        double sum = 0.0, moved = 0.0;
        for (int32_t i = start; i < start + size; ++i) {
            sum += after[i];
            moved += fabs(after[i] - first[i]);
        }
        assert_true(fabs(sum - 1.0) < 1e-9);
        if (rs->rules[r].context)
            assert_true(moved > 1e-3);
        else
            assert_true(moved == 0.0);
        start += size;
    }
    free(first);
    free(after);
}

/* The chorale registers in C of the learned sets (docs/presets.md):
 * soprano 57-83, alto 50-78, tenor 45-72, bass 33-67. */
static void check_chorale_registers(const pn_rule_set *rs)
{
    static const int low[4] = {57, 50, 45, 33}, high[4] = {83, 78, 72, 67};
    assert_int_equal(rs->space.num_voices, 4);
    for (int v = 0; v < 4; ++v) {
        assert_int_equal(rs->space.low[v], low[v]);
        assert_int_equal(rs->space.high[v], high[v]);
    }
    assert_int_equal(pn_space_size(&rs->space), 28 * 30 * 29 * 36);
    assert_int_equal(pn_space_size(&rs->space), 876960);
}

/* The learned major set: 16 rules, nine with a context; in C major the
 * soprano sings E far more than E-flat, and C more than C-sharp. */
static void check_chorale_major(const pn_rule_set *rs)
{
    assert_int_equal(rs->num_rules, 16);
    assert_int_equal(count_contexts(rs), 9);
    const pn_rule *sop = rule_named(rs, "soprano-pc");
    assert_true(target_of(sop, "4") > 5.0 * target_of(sop, "3"));
    assert_true(target_of(sop, "0") > target_of(sop, "1"));
    check_after_c_major(rs);
}

static void test_chorale_major(void **state)
{
    (void)state;
    pn_rule_set *rs = read_preset("chorale-major.json");
    assert_string_equal(rs->name, "chorale-major");
    check_chorale_registers(rs);
    assert_int_equal(pn_rule_set_num_rows(rs), 2849);
    check_chorale_major(rs);
    /* the soprano rule's table was built for the register (target_of
     * fails on a value it does not have) */
    const pn_rule *sop = rule_named(rs, "soprano");
    assert_true(target_of(sop, "57") >= 0.0);
    assert_true(target_of(sop, "83") >= 0.0);
    int32_t cell = -1;
    pn_error_info info = {PN_OK, ""};
    assert_int_not_equal(pn_feature_find_value(sop->table, "56", &cell, &info), PN_OK);
    assert_int_not_equal(pn_feature_find_value(sop->table, "84", &cell, &info), PN_OK);
    pn_rule_set_free(rs);
}

/* The same features learned over the paper's full space. */
static void test_chorale_major_wide(void **state)
{
    (void)state;
    pn_rule_set *rs = read_preset("chorale-major-wide.json");
    assert_string_equal(rs->name, "chorale-major-wide");
    for (int v = 0; v < 4; ++v) {
        assert_int_equal(rs->space.low[v], 31);
        assert_int_equal(rs->space.high[v], 84);
    }
    assert_int_equal(pn_space_size(&rs->space), 55 * 55 * 55 * 55);
    assert_int_equal(pn_rule_set_num_rows(rs), 2898);
    check_chorale_major(rs);
    /* the same rules, in the same order, as chorale-major */
    pn_rule_set *narrow = read_preset("chorale-major.json");
    assert_int_equal(narrow->num_rules, rs->num_rules);
    char a[PN_FEATURE_TEXT_MAX], b[PN_FEATURE_TEXT_MAX];
    for (int32_t r = 0; r < rs->num_rules; ++r) {
        assert_string_equal(rs->rules[r].name, narrow->rules[r].name);
        pn_feature_to_string(rs->rules[r].feature, a, sizeof a);
        pn_feature_to_string(narrow->rules[r].feature, b, sizeof b);
        assert_string_equal(a, b);
        assert_int_equal(rs->rules[r].context != NULL, narrow->rules[r].context != NULL);
    }
    pn_rule_set_free(narrow);
    pn_rule_set_free(rs);
}

static void test_chorale_minor(void **state)
{
    (void)state;
    pn_rule_set *rs = read_preset("chorale-minor.json");
    assert_string_equal(rs->name, "chorale-minor");
    check_chorale_registers(rs);
    assert_int_equal(rs->num_rules, 16);
    assert_int_equal(count_contexts(rs), 9);
    const pn_rule *sop = rule_named(rs, "soprano-pc");
    assert_true(target_of(sop, "3") > 2.0 * target_of(sop, "4"));
    check_after_c_major(rs);
    pn_rule_set_free(rs);
}

static void test_mixed(void **state)
{
    (void)state;
    pn_rule_set *rs = read_preset("mixed.json");
    check_chorale_registers(rs);
    assert_int_equal(rs->num_rules, 12);
    int major = 0, minor = 0;
    for (int32_t r = 0; r < rs->num_rules; ++r) {
        major += strncmp(rs->rules[r].name, "major-", 6) == 0;
        minor += strncmp(rs->rules[r].name, "minor-", 6) == 0;
    }
    assert_int_equal(major, 6);
    assert_int_equal(minor, 6);
    /* the halves disagree on the third */
    const pn_rule *a = rule_named(rs, "major-bass-pc"), *b = rule_named(rs, "minor-bass-pc");
    assert_true(target_of(a, "4") > target_of(b, "4"));
    assert_true(target_of(b, "3") > target_of(a, "3"));
    pn_rule_set_free(rs);
}

static void test_pedagogical(void **state)
{
    (void)state;
    pn_rule_set *rs = read_preset("pedagogical.json");
    assert_int_equal(rs->num_rules, 8);
    for (int32_t r = 0; r < rs->num_rules; ++r)
        assert_non_null(rs->rules[r].description); /* hand-written: every rule says why */
    pn_problem *prob = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rules_build_problem(rs, &prob, NULL, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_int_equal(prob->n, 23 * 24 * 25 * 32);
    assert_int_equal(pn_problem_validate(prob, &info), PN_OK);
    pn_problem_free(prob);
    pn_rule_set_free(rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chorale_major),
        cmocka_unit_test(test_chorale_major_wide),
        cmocka_unit_test(test_chorale_minor),
        cmocka_unit_test(test_mixed),
        cmocka_unit_test(test_pedagogical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
