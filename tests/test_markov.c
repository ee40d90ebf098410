/* Tests of the Markov-chain baseline (engine/music/src/markov.c): counts and
 * smoothing worked out by hand on a small corpus, transitions that stay
 * inside pieces, determinism per seed, sampled transition frequencies
 * that follow the formula, and draws given one voice's pitch. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/corpus.h"
#include "parnassus/markov.h"
#include "parnassus/rng.h"

/* Three sonorities and a lone one. */
#define A_ 72, 67, 64, 48
#define B_ 71, 67, 62, 55
#define C_ 69, 64, 60, 45
#define D_ 72, PN_REST, PN_REST, 48

/* piece 1: A A B A C (steps; A A merge into one event), piece 2: B C B,
 * piece 3: D. Events A B A C | B C B | D: unigram A 2, B 3, C 2, D 1 of 8.
 * Transitions A->B, B->A, A->C; B->C, C->B; never C->B across the end of
 * piece 1, never B->D. */
static int8_t p1[5 * 4] = {A_, A_, B_, A_, C_};
static int8_t p2[3 * 4] = {B_, C_, B_};
static int8_t p3[1 * 4] = {D_};
static const int8_t A[4] = {A_}, B[4] = {B_}, C[4] = {C_}, D[4] = {D_};

static pn_markov *learn(double kappa)
{
    pn_piece pieces[3] = {{NULL, 4, 5, p1, NULL}, {NULL, 4, 3, p2, NULL}, {NULL, 4, 1, p3, NULL}};
    pn_corpus corpus = {4, 3, pieces};
    pn_markov *m = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_markov_learn(&corpus, kappa, &m, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_non_null(m);
    return m;
}

static void assert_near(double x, double want, double tol)
{
    if (!(fabs(x - want) <= tol))
        fail_msg("got %.17g, expected %.17g (tolerance %g)", x, want, tol);
}

static void test_counts(void **state)
{
    (void)state;
    pn_markov *m = learn(1.0);
    assert_int_equal(pn_markov_num_voices(m), 4);
    assert_int_equal(pn_markov_num_states(m), 4);
    assert_int_equal(pn_markov_num_events(m), 8);
    assert_int_equal(pn_markov_num_transitions(m), 5);
    /* states in order of first appearance */
    const int32_t a = pn_markov_find(m, A), b = pn_markov_find(m, B), c = pn_markov_find(m, C),
                  d = pn_markov_find(m, D);
    assert_int_equal(a, 0);
    assert_int_equal(b, 1);
    assert_int_equal(c, 2);
    assert_int_equal(d, 3);
    assert_memory_equal(pn_markov_state(m, d), D, 4);
    const int8_t e[4] = {60, 60, 60, 60};
    assert_int_equal(pn_markov_find(m, e), -1);
    assert_null(pn_markov_state(m, 4));

    assert_int_equal(pn_markov_unigram_count(m, a), 2);
    assert_int_equal(pn_markov_unigram_count(m, b), 3);
    assert_int_equal(pn_markov_unigram_count(m, c), 2);
    assert_int_equal(pn_markov_unigram_count(m, d), 1);
    assert_int_equal(pn_markov_count(m, a, b), 1);
    assert_int_equal(pn_markov_count(m, a, c), 1);
    assert_int_equal(pn_markov_count(m, a, a), 0); /* A A merged into one event */
    assert_int_equal(pn_markov_count(m, b, a), 1);
    assert_int_equal(pn_markov_count(m, b, c), 1);
    assert_int_equal(pn_markov_count(m, c, b), 1); /* piece 2 only: not across pieces */
    assert_int_equal(pn_markov_count(m, b, d), 0);
    assert_int_equal(pn_markov_source_count(m, a), 2);
    assert_int_equal(pn_markov_source_count(m, b), 2);
    assert_int_equal(pn_markov_source_count(m, c), 1);
    assert_int_equal(pn_markov_source_count(m, d), 0);
    pn_markov_free(m);
}

static void test_smoothing(void **state)
{
    (void)state;
    pn_markov *m = learn(1.0);
    const int32_t a = 0, b = 1, c = 2, d = 3;
    /* P(y|A) = (c(A,y) + P(y)) / (2 + 1) */
    assert_near(pn_markov_prob(m, a, b), 11.0 / 24.0, 1e-15);
    assert_near(pn_markov_prob(m, a, a), 1.0 / 12.0, 1e-15);
    assert_near(pn_markov_prob(m, a, c), 10.0 / 24.0, 1e-15);
    assert_near(pn_markov_prob(m, a, d), 1.0 / 24.0, 1e-15);
    /* P(y|C) = (c(C,y) + P(y)) / (1 + 1) */
    assert_near(pn_markov_prob(m, c, b), (1.0 + 3.0 / 8.0) / 2.0, 1e-15);
    assert_near(pn_markov_prob(m, c, c), (2.0 / 8.0) / 2.0, 1e-15);
    /* D was never a source: the unigram */
    for (int32_t y = 0; y < 4; ++y) {
        assert_near(pn_markov_prob(m, d, y), (double)pn_markov_unigram_count(m, y) / 8.0, 1e-15);
        assert_near(pn_markov_prob(m, -1, y), (double)pn_markov_unigram_count(m, y) / 8.0, 1e-15);
    }
    /* every row sums to 1 */
    for (int32_t x = -1; x < 4; ++x) {
        double sum = 0;
        for (int32_t y = 0; y < 4; ++y)
            sum += pn_markov_prob(m, x, y);
        assert_near(sum, 1.0, 1e-12);
    }
    pn_markov_free(m);

    /* kappa = 0: the counts alone; kappa large: close to the unigram */
    m = learn(0.0);
    assert_near(pn_markov_prob(m, a, b), 0.5, 0);
    assert_near(pn_markov_prob(m, a, a), 0.0, 0);
    assert_near(pn_markov_prob(m, c, b), 1.0, 0);
    assert_near(pn_markov_prob(m, d, b), 3.0 / 8.0, 0);
    pn_markov_free(m);
    m = learn(1e9);
    assert_near(pn_markov_prob(m, c, b), 3.0 / 8.0, 1e-8);
    pn_markov_free(m);
}

static void draw_run(const pn_markov *m, uint64_t seed, int32_t *out, int n)
{
    pn_rng rng;
    pn_rng_seed(&rng, seed);
    int32_t x = -1;
    for (int i = 0; i < n; ++i) {
        x = pn_markov_draw(m, x, &rng);
        assert_true(x >= 0 && x < pn_markov_num_states(m));
        out[i] = x;
    }
}

static void test_determinism(void **state)
{
    (void)state;
    pn_markov *m = learn(1.0);
    enum { N = 200 };
    int32_t r1[N], r2[N], r3[N];
    draw_run(m, 7, r1, N);
    draw_run(m, 7, r2, N);
    draw_run(m, 8, r3, N);
    assert_memory_equal(r1, r2, sizeof r1);
    assert_memory_not_equal(r1, r3, sizeof r1);
    pn_markov_free(m);

    /* kappa = 0 follows the corpus only: never A after A, only B after C */
    m = learn(0.0);
    draw_run(m, 3, r1, N);
    for (int i = 1; i < N; ++i) {
        assert_false(r1[i - 1] == 0 && r1[i] == 0);
        if (r1[i - 1] == 2)
            assert_int_equal(r1[i], 1);
    }
    pn_markov_free(m);
}

/* Draws n successors of x and compares their frequencies with P(y|x). */
static void check_frequencies(const pn_markov *m, int32_t x, uint64_t seed)
{
    enum { N = 200000 };
    int64_t seen[4] = {0};
    pn_rng rng;
    pn_rng_seed(&rng, seed);
    for (int i = 0; i < N; ++i)
        seen[pn_markov_draw(m, x, &rng)]++;
    for (int32_t y = 0; y < 4; ++y) {
        const double p = pn_markov_prob(m, x, y);
        /* five standard deviations of a binomial share */
        const double tol = 5.0 * sqrt(p * (1.0 - p) / N) + 1e-9;
        assert_near((double)seen[y] / N, p, tol);
    }
}

static void test_sampled_frequencies(void **state)
{
    (void)state;
    pn_markov *m = learn(1.0);
    for (int32_t x = -1; x < 4; ++x)
        check_frequencies(m, x, 100 + (uint64_t)(x + 1));
    pn_markov_free(m);
    m = learn(2.5);
    check_frequencies(m, 0, 11);
    check_frequencies(m, 2, 12);
    pn_markov_free(m);
}

/* Draws given one voice's pitch follow P(y | x) restricted to the states
 * with that pitch: from B (row: A 1, C 1; kappa 1) given the soprano 72,
 * A takes (1 + 2/8) and D takes 1/8 of 1 + 3/8, so 10/11 and 1/11; from
 * no context the unigram's 2 : 1. */
static void test_draw_given(void **state)
{
    (void)state;
    pn_markov *m = learn(1.0);
    const int32_t a = pn_markov_find(m, A), c = pn_markov_find(m, C), d = pn_markov_find(m, D),
                  b = pn_markov_find(m, B);
    pn_rng rng;
    pn_rng_seed(&rng, 7);
    enum { N = 110000 };
    int from_b[2] = {0, 0}, from_none[2] = {0, 0};
    for (int i = 0; i < N; ++i) {
        const int32_t y = pn_markov_draw_given(m, b, 0, 72, &rng);
        if (y != a && y != d)
            fail_msg("draw %d given soprano 72 gave state %d", i, y);
        from_b[y == d]++;
        const int32_t z = pn_markov_draw_given(m, -1, 0, 72, &rng);
        if (z != a && z != d)
            fail_msg("draw %d without a context gave state %d", i, z);
        from_none[z == d]++;
    }
    assert_near((double)from_b[1] / N, 1.0 / 11.0, 0.004);
    assert_near((double)from_none[1] / N, 1.0 / 3.0, 0.006);
    /* one state fits: always it; a rest is a pitch too */
    for (int i = 0; i < 100; ++i) {
        assert_int_equal(pn_markov_draw_given(m, a, 0, 69, &rng), c);
        assert_int_equal(pn_markov_draw_given(m, a, 1, PN_REST, &rng), d);
    }
    /* nothing fits */
    assert_int_equal(pn_markov_draw_given(m, a, 0, 60, &rng), -1);
    assert_int_equal(pn_markov_draw_given(m, a, 4, 72, &rng), -1);
    assert_int_equal(pn_markov_draw_given(m, a, -1, 72, &rng), -1);
    assert_int_equal(pn_markov_draw_given(m, a, 0, 128, &rng), -1);
    int low = 0, high = 0;
    assert_true(pn_markov_voice_range(m, 0, &low, &high));
    assert_int_equal(low, 69);
    assert_int_equal(high, 72);
    assert_true(pn_markov_voice_range(m, 1, &low, &high)); /* D's rest left out */
    assert_int_equal(low, 64);
    assert_int_equal(high, 67);
    assert_false(pn_markov_voice_range(m, 4, &low, &high));
    pn_markov_free(m);
}

static void test_errors(void **state)
{
    (void)state;
    pn_piece pieces[1] = {{NULL, 4, 5, p1, NULL}};
    pn_corpus corpus = {4, 1, pieces};
    pn_markov *m = (pn_markov *)&m;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_markov_learn(&corpus, -1.0, &m, &info), PN_ERR_INVALID);
    assert_null(m);
    assert_non_null(strstr(info.message, "kappa"));
    assert_int_equal(pn_markov_learn(&corpus, NAN, &m, &info), PN_ERR_INVALID);
    assert_int_equal(pn_markov_learn(&corpus, INFINITY, &m, &info), PN_ERR_INVALID);
    assert_int_equal(pn_markov_learn(NULL, 1.0, &m, &info), PN_ERR_INVALID);
    assert_int_equal(pn_markov_learn(&corpus, 1.0, NULL, &info), PN_ERR_INVALID);
    pn_piece empty_pieces[2] = {{NULL, 4, 0, p1, NULL}, {NULL, 4, 0, p2, NULL}};
    pn_corpus empty = {4, 2, empty_pieces};
    assert_int_equal(pn_markov_learn(&empty, 1.0, &m, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "no sonorities"));
    pn_piece mixed[2] = {{NULL, 4, 5, p1, NULL}, {NULL, 3, 1, p3, NULL}};
    pn_corpus bad = {4, 2, mixed};
    assert_int_equal(pn_markov_learn(&bad, 1.0, &m, &info), PN_ERR_INVALID);
    assert_null(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),      cmocka_unit_test(test_smoothing),
        cmocka_unit_test(test_determinism), cmocka_unit_test(test_sampled_frequencies),
        cmocka_unit_test(test_draw_given),  cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
