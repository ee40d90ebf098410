/* Tests of sequential generation (parnassus/generate.h): targets follow
 * the previous sonority, draws come from the realization, conditional
 * draws keep the fixed voice, a step allocates nothing, and the shipped
 * set's context steps take no more Newton steps than pricing needs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_count.h"
#include "parnassus/generate.h"

static pn_rule_set *read_rules(const char *file)
{
    char path[1024];
    const char *dir = getenv("PN_TEST_DATA");
    snprintf(path, sizeof path, "%s/generate/%s", dir ? dir : "tests/data", file);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_read(path, &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    return rs;
}

static pn_generator *new_generator_at(const pn_rule_set *rs, double log2_lambda_w, double alpha)
{
    pn_settings s;
    pn_settings_default(&s);
    s.log2_lambda_w = log2_lambda_w;
    s.alpha = alpha;
    pn_generator *gen = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_generator_create(rs, &s, &gen, &info) != PN_OK)
        fail_msg("%s", info.message);
    return gen;
}

static pn_generator *new_generator(const pn_rule_set *rs)
{
    return new_generator_at(rs, 0.0, 0.8);
}

/* p* of sonority x: its group's mass over the group's size. */
static double mass_of(const pn_generator *gen, const int *pitches)
{
    const pn_problem *prob = pn_generator_problem(gen);
    int64_t x = -1;
    pn_error_info info;
    assert_int_equal(pn_space_encode(&pn_generator_rules(gen)->space, pitches, &x, &info), PN_OK);
    /* find x's group through the rules' cells: the group whose rows match */
    int32_t rows[16];
    const pn_rule_set *rs = pn_generator_rules(gen);
    for (int32_t r = 0; r < rs->num_rules; ++r) {
        int32_t cell = -1;
        assert_int_equal(pn_feature_cell_of(rs->rules[r].table, pitches, &cell, &info), PN_OK);
        rows[r] = prob->rule_start[r] + cell;
    }
    const double *q = pn_solver_q(pn_generator_solver(gen));
    for (int64_t k = 0; k < prob->num_groups; ++k)
        if (memcmp(prob->group_rows + k * prob->num_rules, rows,
                   (size_t)prob->num_rules * sizeof *rows) == 0)
            return q[k] / (double)prob->group_size[k];
    fail_msg("sonority %lld in no group", (long long)x);
    return 0.0;
}

/* Each step's targets are the rules' targets for the previous sonority,
 * and every drawn sonority has mass under the realization it came from. */
static void test_steps_follow_context(void **state)
{
    (void)state;
    pn_rule_set *rs = read_rules("three-voices.json");
    /* no selection and a liberal style: every rule keeps some weight, so
     * each context visibly moves the realization */
    pn_generator *gen = new_generator_at(rs, 6.0, 0.0);
    const int32_t m = pn_rule_set_num_rows(rs);
    double *b = malloc((size_t)m * sizeof *b);
    assert_non_null(b);
    pn_error_info info = {PN_OK, ""};
    /* the first step backs off */
    assert_int_equal(pn_rule_set_targets(rs, NULL, b, &info), PN_OK);
    assert_memory_equal(b, pn_generator_targets(gen), (size_t)m * sizeof *b);

    pn_rng rng;
    pn_rng_seed(&rng, 7);
    int pitches[3], prev[3] = {0, 0, 0};
    int moved_as_told = 0, after67 = 0;
    for (int t = 0; t < 200; ++t) {
        const pn_info *last = pn_generator_last_info(gen);
        assert_true(last->status == PN_STATUS_SOLVED || last->status == PN_STATUS_LIMIT_CYCLE ||
                    last->status == PN_STATUS_MAX_ITER);
        assert_true(pn_generator_draw(gen, &rng, pitches) >= 0);
        assert_true(mass_of(gen, pitches) > 0.0);
        if (t > 0 && prev[0] == 67) {
            after67++;
            moved_as_told += pitches[0] == 69;
        }
        if (pn_generator_advance(gen, pitches, &info) != PN_OK)
            fail_msg("%s", info.message);
        assert_int_equal(pn_rule_set_targets(rs, pitches, b, &info), PN_OK);
        assert_memory_equal(b, pn_generator_targets(gen), (size_t)m * sizeof *b);
        memcpy(prev, pitches, sizeof prev);
    }
    /* top-motion says 67 -> 69 without smoothing; the realization follows
     * it when the rule is kept, which it is at this lambda_w most of the time */
    /* the realization leans toward 69 after 67, as the context row says */
    int32_t c69 = -1;
    assert_int_equal(pn_feature_find_value(rs->rules[0].table, "69", &c69, &info), PN_OK);
    const int from67[3] = {67, 60, 48}, from71[3] = {71, 60, 48};
    assert_int_equal(pn_generator_advance(gen, from67, &info), PN_OK);
    const double y67 = pn_solver_y(pn_generator_solver(gen))[c69];
    assert_int_equal(pn_generator_advance(gen, from71, &info), PN_OK);
    const double y71 = pn_solver_y(pn_generator_solver(gen))[c69];
    assert_true(y67 > y71 + 0.2);
    /* and the draws after 67 went to 69 about as often as p* said */
    assert_true(after67 > 20);
    assert_true(fabs((double)moved_as_told / after67 - y67) < 0.25);

    /* knobs move the realization, warm */
    if (pn_generator_set_knobs(gen, 3.0, 0.5, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_true(pn_solver_settings(pn_generator_solver(gen))->alpha == 0.5);
    assert_true(pn_generator_draw(gen, &rng, pitches) >= 0);

    /* a previous sonority outside the space is refused */
    const int outside[3] = {80, 60, 48};
    assert_int_equal(pn_generator_advance(gen, outside, &info), PN_ERR_INVALID);
    free(b);
    pn_generator_free(gen);
    pn_rule_set_free(rs);
}

/* Same seed, same music. */
static void test_deterministic(void **state)
{
    (void)state;
    pn_rule_set *rs = read_rules("three-voices.json");
    int seq[2][40][3];
    for (int run = 0; run < 2; ++run) {
        pn_generator *gen = new_generator(rs);
        pn_rng rng;
        pn_rng_seed(&rng, 11);
        pn_error_info info = {PN_OK, ""};
        for (int t = 0; t < 40; ++t)
            if (pn_generator_step(gen, &rng, seq[run][t], &info) != PN_OK)
                fail_msg("%s", info.message);
        pn_generator_free(gen);
    }
    assert_memory_equal(seq[0], seq[1], sizeof seq[0]);
    pn_rule_set_free(rs);
}

/* Without its own sampler a generator still realizes (the same q as one
 * with it) and updates; its own draws say there is nothing to draw, and
 * conditional draws still work. */
static void test_released_sampler(void **state)
{
    (void)state;
    pn_rule_set *rs = read_rules("three-voices.json");
    pn_generator *a = new_generator(rs), *b = new_generator(rs);
    pn_generator_release_sampler(b);
    pn_rng rng;
    pn_rng_seed(&rng, 5);
    int pitches[3];
    assert_true(pn_generator_draw(b, &rng, pitches) < 0);
    pn_error_info info = {PN_OK, ""};
    const int previous[3] = {72, 64, 48};
    assert_int_equal(pn_generator_update(a, -1.0, 0.7, previous, &info), PN_OK);
    assert_int_equal(pn_generator_update(b, -1.0, 0.7, previous, &info), PN_OK);
    const int64_t groups = pn_generator_problem(a)->num_groups;
    assert_memory_equal(pn_solver_q(pn_generator_solver(a)), pn_solver_q(pn_generator_solver(b)),
                        (size_t)groups * sizeof(double));
    int hits = 0;
    for (int top = 67; top <= 72; ++top)
        if (pn_generator_draw_given(b, 0, top, &rng, pitches) >= 0) {
            assert_int_equal(pitches[0], top);
            ++hits;
        }
    assert_true(hits > 0);
    pn_generator_free(a);
    pn_generator_free(b);
    pn_rule_set_free(rs);
}

/* Draws with one voice fixed keep that voice, and only give sonorities the
 * realization gives mass to. */
static void test_conditional(void **state)
{
    (void)state;
    pn_rule_set *rs = read_rules("three-voices.json");
    pn_generator *gen = new_generator(rs);
    pn_rng rng;
    pn_rng_seed(&rng, 3);
    int pitches[3];
    int hits = 0;
    for (int top = 67; top <= 72; ++top)
        for (int i = 0; i < 200; ++i) {
            const int64_t x = pn_generator_draw_given(gen, 0, top, &rng, pitches);
            if (x < 0)
                break; /* no mass with this top pitch */
            assert_int_equal(pitches[0], top);
            assert_true(mass_of(gen, pitches) > 0.0);
            hits++;
        }
    assert_true(hits >= 200);
    for (int bass = 48; bass <= 53; ++bass)
        for (int i = 0; i < 50; ++i) {
            if (pn_generator_draw_given(gen, 2, bass, &rng, pitches) < 0)
                break;
            assert_int_equal(pitches[2], bass);
        }
    /* outside the voice's range, or no such voice: nothing */
    assert_int_equal(pn_generator_draw_given(gen, 0, 60, &rng, pitches), -1);
    assert_int_equal(pn_generator_draw_given(gen, 3, 60, &rng, pitches), -1);
    pn_error_info info;
    assert_int_equal(pn_generator_prepare_conditional(gen, 5, &info), PN_ERR_INVALID);
    pn_generator_free(gen);
    pn_rule_set_free(rs);
}

/* After setup a step (targets, warm re-realization, sampler) and the draws
 * allocate nothing. */
static void test_step_allocates_nothing(void **state)
{
    (void)state;
    pn_rule_set *rs = read_rules("three-voices.json");
    pn_generator *gen = new_generator(rs);
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_generator_prepare_conditional(gen, 0, &info), PN_OK);
    pn_rng rng;
    pn_rng_seed(&rng, 5);
    int pitches[3];
#if ALLOC_COUNT_WORKS
    assert_true(alloc_count_self_check());
#endif
    alloc_count_begin();
    int failures = 0;
    for (int t = 0; t < 30; ++t) {
        failures += pn_generator_step(gen, &rng, pitches, &info) != PN_OK;
        failures += pn_generator_draw_given(gen, 0, 69, &rng, pitches) < -1;
        if (t == 10)
            failures += pn_generator_set_knobs(gen, 1.0, 0.7, &info) != PN_OK;
    }
    assert_int_equal(alloc_count_end(), 0);
    assert_int_equal(failures, 0);
    pn_generator_free(gen);
    pn_rule_set_free(rs);
#if !ALLOC_COUNT_WORKS
    skip(); /* ran, but the allocator is the sanitizer's: nothing counted */
#endif
}

/* The shipped chorale-major (from PN_PRESETS); the test is skipped
 * without it. */
static pn_rule_set *read_chorale_major(void)
{
    const char *dir = getenv("PN_PRESETS");
    if (!dir)
        skip();
    char path[1024];
    snprintf(path, sizeof path, "%s/chorale-major.json", dir);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_read(path, &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    return rs;
}

/* As the plugin and `sample` realize a set: its own lambda_p, one cold
 * start. */
static pn_settings single_start_settings(const pn_rule_set *rs, uint64_t seed)
{
    pn_settings st;
    pn_settings_default(&st);
    st.seed = seed;
    st.lambda_p = rs->lambda_p;
    st.restarts = 0;
    st.grow_seeds = 0;
    return st;
}

/* The selection trap on the default set. At seeds 15 and 18 an early
 * context step keeps 4 or 5 of the nine learned rules; left to the warm
 * start, the music stops following its context for many steps (with the
 * contexts before the own-line levels 8 and 87 steps, with them seed 15
 * for all 2000). With the recoveries seed 18 keeps at least eight again
 * after one step and seed 15 after four (three of them realized again):
 * the test allows four, the three tries and the step after them, so seed
 * 15 sits on the bound by design. Those steps allocate nothing. */
static void test_selection_trap_left(void **state)
{
    (void)state;
    pn_rule_set *rs = read_chorale_major();
    pn_error_info info = {PN_OK, ""};
    int learned = 0; /* the style core; the textbook rules are written by hand */
    for (int32_t r = 0; r < rs->num_rules; ++r)
        learned += !rs->rules[r].fixed;
    assert_int_equal(learned, 9);
    const uint64_t seeds[] = {15, 18};
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; ++k) {
        const pn_settings st = single_start_settings(rs, seeds[k]);
        pn_generator *gen = NULL;
        if (pn_generator_create(rs, &st, &gen, &info) != PN_OK)
            fail_msg("%s", info.message);
        pn_rng rng;
        pn_rng_seed(&rng, seeds[k]);
        int pitches[4], failures = 0, run = 0, longest = 0, fewest = learned;
        unsigned char sel[16];
        assert_true(rs->num_rules <= (int32_t)sizeof sel);
#if ALLOC_COUNT_WORKS
        assert_true(alloc_count_self_check());
#endif
        alloc_count_begin();
        for (int t = 0; t < 12; ++t) {
            failures += pn_generator_step(gen, &rng, pitches, &info) != PN_OK;
            pn_solver_rule_stats(pn_generator_solver(gen), NULL, NULL, sel);
            int kept = 0;
            for (int32_t r = 0; r < rs->num_rules; ++r)
                kept += sel[r] && !rs->rules[r].fixed;
            fewest = kept < fewest ? kept : fewest;
            run = kept < learned - 1 ? run + 1 : 0;
            longest = run > longest ? run : longest;
        }
        assert_int_equal(alloc_count_end(), 0);
        assert_int_equal(failures, 0);
        print_message("seed %d: %d recoveries; fewest learned rules kept %d, longest run of "
                      "steps with fewer than %d: %d\n",
                      (int)seeds[k], (int)pn_generator_recoveries(gen), fewest, learned - 1,
                      longest);
        assert_true(pn_generator_recoveries(gen) >= 1); /* the trap was there */
        assert_true(longest <= 4);                      /* and left within the tries */
        pn_generator_free(gen);
    }
    pn_rule_set_free(rs);
}

/* Context steps of chorale-major as the plugin realizes them: after a
 * loose pricing round (the first after new targets, or one that added as
 * many groups as a round may) the next round scans all groups instead of
 * the pool of earlier supports first. Pricing the pool first there gave
 * its few violators an exact solve that the next pass, finding a full
 * round more, made moot. These 40 steps took 2,534 Newton steps with the
 * pool priced first and take 2,375 now (every step meets the same
 * tolerance, and the music is the same); the bound lies between. */
static void test_context_steps_newton(void **state)
{
    (void)state;
    pn_rule_set *rs = read_chorale_major();
    pn_error_info info = {PN_OK, ""};
    pn_settings st = single_start_settings(rs, 3);
    st.warm_pool = 0; /* the plugin's context steps */
    pn_generator *gen = NULL;
    if (pn_generator_create(rs, &st, &gen, &info) != PN_OK)
        fail_msg("%s", info.message);
    pn_rng rng;
    pn_rng_seed(&rng, 3);
    int pitches[4];
    long newton = 0;
    for (int t = 0; t < 40; ++t) {
        if (pn_generator_step(gen, &rng, pitches, &info) != PN_OK)
            fail_msg("step %d: %s", t, info.message);
        const pn_info *last = pn_generator_last_info(gen);
        assert_int_equal(last->status, PN_STATUS_SOLVED);
        newton += last->newton_iterations;
    }
    print_message("40 context steps of chorale-major (seed 3): %ld Newton steps\n", newton);
    assert_true(newton < 2455);
    pn_generator_free(gen);
    pn_rule_set_free(rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_steps_follow_context),   cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_released_sampler),       cmocka_unit_test(test_conditional),
        cmocka_unit_test(test_step_allocates_nothing), cmocka_unit_test(test_selection_trap_left),
        cmocka_unit_test(test_context_steps_newton),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
