/* Tests of key finding (Krumhansl-Schmuckler) and mode filtering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/corpus.h"
#include "parnassus/key.h"

enum { MAX_STEPS = 64 };

/* A piece over a caller-owned pitch buffer. */
static pn_piece make_piece(int8_t *pitch, const int8_t *steps, int32_t num_steps, int shift)
{
    for (int32_t j = 0; j < num_steps * PN_CHORALE_VOICES; ++j)
        pitch[j] = steps[j] < 0 ? steps[j] : (int8_t)(steps[j] + shift);
    pn_piece p = {NULL, PN_CHORALE_VOICES, num_steps, pitch, NULL};
    return p;
}

/* An ascending C major scale in the soprano, then I IV V I. */
static const int8_t C_MAJOR[] = {
    60, -1, -1, -1, 62, -1, -1, -1, 64, -1, -1, -1, 65, -1, -1, -1, /* */
    67, -1, -1, -1, 69, -1, -1, -1, 71, -1, -1, -1, 72, -1, -1, -1, /* */
    72, 67, 64, 48, 72, 69, 65, 53, 71, 67, 62, 55, 72, 67, 64, 48,
};
/* An A harmonic minor scale in the soprano, then i iv V i. */
static const int8_t A_MINOR[] = {
    69, -1, -1, -1, 71, -1, -1, -1, 72, -1, -1, -1, 74, -1, -1, -1, /* */
    76, -1, -1, -1, 77, -1, -1, -1, 80, -1, -1, -1, 81, -1, -1, -1, /* */
    76, 72, 69, 45, 77, 74, 69, 50, 76, 71, 68, 52, 76, 72, 69, 45,
};
/* A diminished seventh chord C Eb F# A: symmetric under minor thirds. */
static const int8_t DIM7[] = {69, 66, 63, 60, 69, 66, 63, 60};

#define NSTEPS(a) ((int32_t)(sizeof(a) / sizeof(a)[0] / PN_CHORALE_VOICES))

static void test_c_major(void **state)
{
    (void)state;
    int8_t buf[MAX_STEPS * 4];
    pn_piece p = make_piece(buf, C_MAJOR, NSTEPS(C_MAJOR), 0);
    pn_key k = pn_key_find(&p);
    assert_int_equal(k.tonic, 0);
    assert_int_equal(k.mode, PN_MAJOR);
    assert_true(k.score > 0.5 && k.score <= 1.0);
    assert_string_equal(pn_key_name(k), "C major");
}

static void test_a_minor(void **state)
{
    (void)state;
    int8_t buf[MAX_STEPS * 4];
    pn_piece p = make_piece(buf, A_MINOR, NSTEPS(A_MINOR), 0);
    pn_key k = pn_key_find(&p);
    assert_int_equal(k.tonic, 9);
    assert_int_equal(k.mode, PN_MINOR);
    assert_string_equal(pn_key_name(k), "A minor");
}

/* All 12 transpositions move the tonic along, keep the mode, and give
 * bit-identical scores. */
static void check_transpositions(const int8_t *steps, int32_t n, int tonic, pn_mode mode)
{
    int8_t buf[MAX_STEPS * 4];
    pn_piece base = make_piece(buf, steps, n, 0);
    double base_scores[PN_NUM_KEYS];
    pn_key_scores(&base, base_scores);
    for (int s = -6; s <= 12; ++s) {
        pn_piece p = make_piece(buf, steps, n, s);
        pn_key k = pn_key_find(&p);
        int expected = ((tonic + s) % 12 + 12) % 12;
        assert_int_equal(k.tonic, expected);
        assert_int_equal(k.mode, mode);
        double scores[PN_NUM_KEYS];
        pn_key_scores(&p, scores);
        for (int m = 0; m < 2; ++m)
            for (int t = 0; t < 12; ++t)
                assert_true(scores[m * 12 + ((t + s) % 12 + 12) % 12] == base_scores[m * 12 + t]);
    }
}

static void test_transposed_copies(void **state)
{
    (void)state;
    check_transpositions(C_MAJOR, NSTEPS(C_MAJOR), 0, PN_MAJOR);
    check_transpositions(A_MINOR, NSTEPS(A_MINOR), 9, PN_MINOR);
}

/* A diminished seventh chord ties four keys of each mode exactly; the first
 * in (mode, tonic) order wins, whatever the transposition. */
static void test_ties(void **state)
{
    (void)state;
    int8_t buf[MAX_STEPS * 4];
    for (int s = 0; s < 12; ++s) {
        pn_piece p = make_piece(buf, DIM7, NSTEPS(DIM7), s);
        double scores[PN_NUM_KEYS];
        pn_key_scores(&p, scores);
        pn_key k = pn_key_find(&p);
        assert_int_equal(k.tonic, s % 3);
        for (int t = k.tonic; t < 12; t += 3)
            assert_true(scores[k.mode * 12 + t] == k.score);
        for (int i = 0; i < PN_NUM_KEYS; ++i) {
            assert_true(scores[i] <= k.score);
            if (scores[i] == k.score)
                assert_true(i >= (int)k.mode * 12 + k.tonic);
        }
        /* Deterministic: the same answer twice. */
        pn_key again = pn_key_find(&p);
        assert_int_equal(again.tonic, k.tonic);
        assert_int_equal(again.mode, k.mode);
    }
}

static void test_empty_and_uniform(void **state)
{
    (void)state;
    int8_t rests[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    pn_piece p = {NULL, 4, 2, rests, NULL};
    pn_key k = pn_key_find(&p);
    assert_int_equal(k.tonic, 0);
    assert_int_equal(k.mode, PN_MAJOR);
    assert_true(k.score == 0.0);
    pn_piece none = {NULL, 4, 0, rests, NULL};
    k = pn_key_find(&none);
    assert_true(k.score == 0.0);

    /* All twelve pitch classes equally long: no defined correlation. */
    int8_t chromatic[12 * 4];
    for (int j = 0; j < 12; ++j) {
        chromatic[4 * j] = (int8_t)(60 + j);
        chromatic[4 * j + 1] = chromatic[4 * j + 2] = chromatic[4 * j + 3] = -1;
    }
    pn_piece c = {NULL, 4, 12, chromatic, NULL};
    k = pn_key_find(&c);
    assert_int_equal(k.tonic, 0);
    assert_int_equal(k.mode, PN_MAJOR);
    assert_true(k.score == 0.0);
}

/* Durations weight the pitch classes: merged sonorities with durations
 * give the same scores as the steps they came from. */
static void test_durations(void **state)
{
    (void)state;
    int8_t steps[] = {60, 64, 67, 48, 60, 64, 67, 48, 60, 64, 67, 48, 62, 65, 69, 50};
    pn_piece p = {NULL, 4, 4, steps, NULL};
    int8_t merged[] = {60, 64, 67, 48, 62, 65, 69, 50};
    int32_t dur[] = {3, 1};
    pn_piece q = {NULL, 4, 2, merged, dur};
    double a[PN_NUM_KEYS], b[PN_NUM_KEYS];
    pn_key_scores(&p, a);
    pn_key_scores(&q, b);
    for (int i = 0; i < PN_NUM_KEYS; ++i)
        assert_true(a[i] == b[i]);
    /* With the second chord long instead, the answer changes to D minor. */
    dur[0] = 1;
    dur[1] = 5;
    pn_key k = pn_key_find(&q);
    assert_string_equal(pn_key_name(k), "D minor");
}

/* Counts per pitch class give what a piece with those durations gives. */
static void test_counts(void **state)
{
    (void)state;
    int8_t buf[MAX_STEPS * 4];
    pn_piece p = make_piece(buf, A_MINOR, NSTEPS(A_MINOR), 0);
    int64_t count[12] = {0};
    for (int32_t j = 0; j < NSTEPS(A_MINOR) * PN_CHORALE_VOICES; ++j)
        if (buf[j] >= 0)
            count[buf[j] % 12]++;
    double a[PN_NUM_KEYS], b[PN_NUM_KEYS];
    pn_key_scores(&p, a);
    pn_key_scores_of_counts(count, b);
    for (int i = 0; i < PN_NUM_KEYS; ++i)
        assert_true(a[i] == b[i]);
    pn_key k = pn_key_of_counts(count);
    assert_string_equal(pn_key_name(k), "A minor");
    assert_true(k.score == pn_key_find(&p).score);
    /* counts shaped like the profiles themselves find their key exactly */
    static const int64_t major_shape[12] = {635, 223, 348, 233, 438, 409,
                                            252, 519, 239, 366, 229, 288};
    int64_t rotated[12];
    for (int c = 0; c < 12; ++c)
        rotated[(c + 7) % 12] = major_shape[c];
    k = pn_key_of_counts(rotated);
    assert_string_equal(pn_key_name(k), "G major");
    assert_true(fabs(k.score - 1.0) < 1e-12);
    const int64_t none[12] = {0};
    k = pn_key_of_counts(none);
    assert_int_equal(k.tonic, 0);
    assert_true(k.score == 0.0);
}

static void test_names(void **state)
{
    (void)state;
    pn_key k = {6, PN_MINOR, 0.0};
    assert_string_equal(pn_key_name(k), "F# minor");
    k.mode = PN_MAJOR;
    assert_string_equal(pn_key_name(k), "F# major");
    k.tonic = 1;
    assert_string_equal(pn_key_name(k), "Db major");
    k.mode = PN_MINOR;
    assert_string_equal(pn_key_name(k), "C# minor");
    k.tonic = 10;
    assert_string_equal(pn_key_name(k), "Bb minor");
    k.tonic = 12;
    assert_string_equal(pn_key_name(k), "unknown key");
}

static void test_filter_mode(void **state)
{
    (void)state;
    int8_t a[MAX_STEPS * 4], b[MAX_STEPS * 4], c[MAX_STEPS * 4];
    pn_piece pieces[3] = {make_piece(a, C_MAJOR, NSTEPS(C_MAJOR), 0),
                          make_piece(b, A_MINOR, NSTEPS(A_MINOR), 0),
                          make_piece(c, C_MAJOR, NSTEPS(C_MAJOR), 5)};
    char n0[] = "p0", n1[] = "p1", n2[] = "p2";
    pieces[0].name = n0;
    pieces[1].name = n1;
    pieces[2].name = n2;
    pn_corpus in = {4, 3, pieces};
    pn_corpus *major = NULL, *minor = NULL;
    pn_error_info info;
    assert_int_equal(pn_corpus_filter_mode(&in, PN_MAJOR, &major, &info), PN_OK);
    assert_int_equal(pn_corpus_filter_mode(&in, PN_MINOR, &minor, &info), PN_OK);
    assert_int_equal(major->num_pieces, 2);
    assert_string_equal(major->pieces[0].name, "p0");
    assert_string_equal(major->pieces[1].name, "p2");
    assert_int_equal(minor->num_pieces, 1);
    assert_string_equal(minor->pieces[0].name, "p1");
    assert_memory_equal(minor->pieces[0].pitch, b, (size_t)NSTEPS(A_MINOR) * 4);
    pn_corpus_free(major);
    pn_corpus_free(minor);
    assert_int_equal(pn_corpus_filter_mode(&in, (pn_mode)7, &major, &info), PN_ERR_INVALID);
    assert_null(major);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_c_major),
        cmocka_unit_test(test_a_minor),
        cmocka_unit_test(test_transposed_copies),
        cmocka_unit_test(test_ties),
        cmocka_unit_test(test_empty_and_uniform),
        cmocka_unit_test(test_durations),
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_filter_mode),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
