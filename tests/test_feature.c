/* Tests of the sonority space and the feature language: hand-checked
 * values of every descriptor, parse errors, canonical text, value
 * enumeration against brute force, the cell source against cell_of, value
 * lookup by text, and a de-overlap over a small space. Setting
 * PN_FEATURE_BENCH=1 also times the de-overlap of 16 features over the
 * default space. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "parnassus/deoverlap.h"
#include "parnassus/feature.h"
#include "parnassus/space.h"

#define REST PN_FEATURE_REST

/* splitmix64, fixed seeds */
static uint64_t rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static int64_t rng_below(uint64_t *state, int64_t bound)
{
    return (int64_t)(rng_next(state) % (uint64_t)bound);
}

static pn_feature *parse_ok(const char *text, int k)
{
    pn_feature *f = NULL;
    pn_error_info info;
    if (pn_feature_parse(text, k, &f, &info) != PN_OK)
        fail_msg("pn_feature_parse(%s): %s", text, info.message);
    return f;
}

static pn_feature_table *table_ok(const pn_feature *f, const pn_space *s)
{
    pn_feature_table *t = NULL;
    pn_error_info info;
    if (pn_feature_values(f, s, &t, &info) != PN_OK)
        fail_msg("pn_feature_values: %s", info.message);
    return t;
}

/* The value of `text` on a 4-voice sonority, formatted. */
static void check_eval(const char *text, int s, int a, int t, int b, const char *expected)
{
    const int pitches[4] = {s, a, t, b};
    pn_feature *f = parse_ok(text, 4);
    int value[PN_FEATURE_MAX_LENGTH];
    const int len = pn_feature_eval(f, pitches, value);
    assert_int_equal(len, pn_feature_length(f));
    char buf[PN_FEATURE_VALUE_TEXT_MAX];
    pn_feature_format_value(value, len, buf, sizeof buf);
    if (strcmp(buf, expected) != 0)
        fail_msg("%s on (%d,%d,%d,%d): got %s, expected %s", text, s, a, t, b, buf, expected);
    pn_feature_free(f);
}

enum { C4 = 60, C5 = 72, E4 = 64, G4 = 67, C3 = 48, G3 = 55, R_ = -1 };

/* ---- space ---- */

static void test_space_default(void **state)
{
    (void)state;
    pn_space s;
    pn_space_default(&s);
    assert_int_equal(s.num_voices, 4);
    assert_int_equal(pn_space_radix(&s, 0), 55);
    assert_true(pn_space_size(&s) == 9150625);
    int p[4];
    pn_error_info info;
    assert_int_equal(pn_space_decode(&s, 0, p, &info), PN_OK);
    for (int v = 0; v < 4; ++v)
        assert_int_equal(p[v], PN_REST);
    /* x = 1: only the bass (least significant) moves, to its lowest pitch */
    assert_int_equal(pn_space_decode(&s, 1, p, &info), PN_OK);
    assert_int_equal(p[0], PN_REST);
    assert_int_equal(p[3], 31);
    /* x = 55^3: the soprano's lowest pitch, the rest silent */
    assert_int_equal(pn_space_decode(&s, 166375, p, &info), PN_OK);
    assert_int_equal(p[0], 31);
    assert_int_equal(p[1], PN_REST);
    assert_int_equal(pn_space_decode(&s, 9150624, p, &info), PN_OK);
    for (int v = 0; v < 4; ++v)
        assert_int_equal(p[v], 84);
    assert_int_equal(pn_space_decode(&s, 9150625, p, &info), PN_ERR_INVALID);
    assert_int_equal(pn_space_decode(&s, -1, p, &info), PN_ERR_INVALID);

    /* (C5, rest, G3, C3) by hand: indices (42, 0, 25, 18) */
    const int q[4] = {C5, R_, G3, C3};
    int64_t x;
    assert_int_equal(pn_space_encode(&s, q, &x, &info), PN_OK);
    assert_true(x == ((42 * 55 + 0) * 55 + 25) * 55 + 18);
    assert_int_equal(pn_space_decode(&s, x, p, &info), PN_OK);
    assert_memory_equal(p, q, sizeof q);

    const int bad[4] = {C5, 85, G3, C3};
    assert_int_equal(pn_space_encode(&s, bad, &x, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "voice 2"));
    assert_non_null(strstr(info.message, "85"));
}

static void test_space_custom(void **state)
{
    (void)state;
    pn_space s;
    pn_error_info info;
    const int low[3] = {60, 48, 36}, high[3] = {81, 67, 60};
    assert_int_equal(pn_space_init(&s, 3, low, high, &info), PN_OK);
    assert_true(pn_space_size(&s) == 23 * 21 * 26);
    uint64_t rng = 7;
    for (int i = 0; i < 1000; ++i) {
        const int64_t x = rng_below(&rng, pn_space_size(&s));
        int p[3];
        int64_t y;
        assert_int_equal(pn_space_decode(&s, x, p, &info), PN_OK);
        for (int v = 0; v < 3; ++v)
            assert_true(p[v] == PN_REST || (p[v] >= low[v] && p[v] <= high[v]));
        assert_int_equal(pn_space_encode(&s, p, &y, &info), PN_OK);
        assert_true(x == y);
    }
    const int p[3] = {59, 50, 40};
    int64_t x;
    assert_int_equal(pn_space_encode(&s, p, &x, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "voice 1"));

    const int low_bad[2] = {60, 70}, high_bad[2] = {70, 69};
    assert_int_equal(pn_space_init(&s, 2, low_bad, high_bad, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "voice 2"));
    assert_int_equal(pn_space_init(&s, 9, low, high, &info), PN_ERR_INVALID);
    assert_int_equal(pn_space_init(&s, 0, low, high, &info), PN_ERR_INVALID);
}

/* ---- descriptors ---- */

static void test_windows(void **state)
{
    (void)state;
    check_eval("w(1)", C5, E4, G3, C3, "72");
    check_eval("w(3)", C5, E4, G3, C3, "55");
    check_eval("w(2)", C5, R_, G3, C3, "R");
    check_eval("w(2,4)", C5, E4, G3, C3, "(64,48)");
    check_eval("w(4,1)", C5, E4, G3, C3, "(48,72)");
    check_eval("w(3,1,4)", C5, E4, G3, R_, "(55,72,R)");
    check_eval("w(1,2,3,4)", C5, E4, G3, C3, "(72,64,55,48)");
    check_eval("w(4,3,2,1)", R_, E4, G3, C3, "(48,55,64,R)");
}

static void test_mod12(void **state)
{
    (void)state;
    /* octave equivalence: C4 and C5 are both class 0 */
    check_eval("mod12(w(1))", C4, E4, G3, C3, "0");
    check_eval("mod12(w(1))", C5, E4, G3, C3, "0");
    check_eval("mod12(w(2))", C5, E4, G3, C3, "4");
    check_eval("mod12(w(1))", R_, E4, G3, C3, "R");
    check_eval("mod12(w(1,2,3,4))", C5, R_, G3, 31, "(0,R,7,7)");
    /* negative intervals wrap into 0..11: soprano C4 below bass G4 */
    check_eval("mod12(diff(w(4,1)))", C4, E4, G3, G4, "5");
    check_eval("mod12(diff(w(4,1)))", G4, E4, G3, C3, "7");
    check_eval("mod12(diff(w(4,1)))", G4, E4, G3, R_, "R");
}

static void test_diff(void **state)
{
    (void)state;
    /* bass -> soprano: soprano minus bass */
    check_eval("diff(w(4,1))", G4, E4, G3, C3, "19");
    check_eval("diff(w(1,4))", G4, E4, G3, C3, "-19");
    check_eval("diff(w(4,1))", R_, E4, G3, C3, "R");
    check_eval("diff(w(4,1))", G4, E4, G3, R_, "R");
    check_eval("diff(w(4,3,2,1))", G4, E4, G3, C3, "(7,9,3)");
    /* a rest spoils both differences it takes part in */
    check_eval("diff(w(4,3,2,1))", G4, E4, R_, C3, "(R,R,3)");
    check_eval("diff(w(1,2,3,4))", C4, C4, C4, C4, "(0,0,0)");
    check_eval("diff(diff(w(4,3,2,1)))", G4, E4, G3, C3, "(2,-6)");
}

static void test_rel(void **state)
{
    (void)state;
    /* every entry minus the first: the intervals above the bass */
    check_eval("rel(w(4,3,2,1))", G4, E4, G3, C3, "(7,16,19)");
    check_eval("rel(w(4,1))", G4, E4, G3, C3, "19");
    check_eval("rel(w(1,4))", G4, E4, G3, C3, "-19");
    /* a rest in the first entry spoils every entry, elsewhere only its own */
    check_eval("rel(w(4,3,2,1))", G4, E4, G3, R_, "(R,R,R)");
    check_eval("rel(w(4,3,2,1))", G4, E4, R_, C3, "(R,16,19)");
    /* the chord above the bass: C major in first inversion with a doubled root */
    check_eval("sort(mod12(rel(w(4,3,2,1))))", C5, C4, G3, E4 - 12, "(3,8,8)");
    check_eval("sort(mod12(rel(w(4,3,2,1))))", G4, E4, C4, C3, "(0,4,7)");
    check_eval("rel(rel(w(4,3,2,1)))", G4, E4, G3, C3, "(9,12)");
}

static void test_sort(void **state)
{
    (void)state;
    check_eval("sort(w(1,2,3,4))", G4, C5, G3, C3, "(48,55,67,72)");
    /* pitch-class set as a sorted multiset; rests go last */
    check_eval("sort(mod12(w(1,2,3,4)))", G4, E4, C4, C3, "(0,0,4,7)");
    check_eval("sort(mod12(w(1,2,3,4)))", G4, E4, R_, C3, "(0,4,7,R)");
    check_eval("sort(mod12(w(1,2,3,4)))", R_, R_, R_, R_, "(R,R,R,R)");
    check_eval("sort(w(2))", G4, R_, R_, R_, "R");
}

static void test_order(void **state)
{
    (void)state;
    /* ranks, 0 = lowest; no crossing, soprano highest */
    check_eval("order(w(1,2,3,4))", C5, G4, E4, C3, "(3,2,1,0)");
    /* alto above soprano */
    check_eval("order(w(1,2,3,4))", G4, C5, E4, C3, "(2,3,1,0)");
    /* tenor below bass */
    check_eval("order(w(1,2,3,4))", C5, G4, G3 - 12, C3, "(3,2,0,1)");
    /* rests stay R; the others are ranked among themselves */
    check_eval("order(w(1,2,3,4))", C5, R_, E4, C3, "(2,R,1,0)");
    check_eval("order(w(1,2,3,4))", R_, R_, R_, C3, "(R,R,R,0)");
    /* ties by position: the earlier-written voice ranks lower */
    check_eval("order(w(1,2,3,4))", C4, C4, G3, C3, "(2,3,1,0)");
    check_eval("order(w(4,3,2,1))", C4, C4, G3, C3, "(0,1,2,3)");
    /* ranks of pitch classes */
    check_eval("order(mod12(w(1,4)))", G4, E4, G3, C3, "(1,0)");
}

static void test_abs(void **state)
{
    (void)state;
    check_eval("abs(diff(w(2,3)))", C5, C4, G4, C3, "7");
    check_eval("abs(diff(w(2,3)))", C5, G4, C4, C3, "7");
    check_eval("abs(diff(w(2,3)))", C5, R_, C4, C3, "R");
    check_eval("abs(w(1))", C5, G4, C4, C3, "72");
    check_eval("abs(diff(w(4,3,2,1)))", C3, G4, C4, C5, "(12,7,19)");
}

static void test_clamp(void **state)
{
    (void)state;
    /* soprano - alto: every spacing over an octave reads 13 */
    check_eval("clamp(-2,13,diff(w(2,1)))", C5, E4, G3, C3, "8");
    check_eval("clamp(-2,13,diff(w(2,1)))", C5, C4, G3, C3, "12");
    check_eval("clamp(-2,13,diff(w(2,1)))", C5 + 1, C4, G3, C3, "13");
    check_eval("clamp(-2,13,diff(w(2,1)))", C5 + 12, C4, G3, C3, "13");
    check_eval("clamp(-2,13,diff(w(2,1)))", C4, E4, G3, C3, "-2");
    check_eval("clamp(-2,13,diff(w(2,1)))", C4, C4 + 1, G3, C3, "-1");
    /* R stays R */
    check_eval("clamp(-2,13,diff(w(2,1)))", C5, R_, G3, C3, "R");
    check_eval("clamp(0,0,w(1))", R_, E4, G3, C3, "R");
    /* entry by entry, on vectors */
    check_eval("clamp(50,60,w(1,2,3,4))", C5, E4, R_, C3, "(60,60,R,50)");
    check_eval("clamp(0,12,diff(w(4,3,2,1)))", G4 + 12, E4, G3, C3, "(7,9,12)");
    check_eval("clamp(-2,13,rel(w(4,3,2,1)))", G4, E4, G3, C3, "(7,13,13)");
    /* a bound outside the values changes nothing; equal bounds make one value */
    check_eval("clamp(-100000,100000,diff(w(4,1)))", G4, E4, G3, C3, "19");
    check_eval("clamp(5,5,w(1,4))", G4, E4, G3, R_, "(5,R)");
    /* with other descriptors, inside and outside */
    check_eval("mod12(clamp(0,14,diff(w(4,1))))", G4, E4, G3, C3, "2");
    check_eval("clamp(0,5,mod12(diff(w(4,1))))", G4, E4, G3, C3, "5");
    check_eval("sort(clamp(55,65,w(1,2,3,4)))", C5, E4, G3, C3, "(55,55,64,65)");
    check_eval("clamp(0,3,abs(diff(w(1,2))))", E4, G4, G3, C3, "3");
    check_eval("clamp(60,62,clamp(50,61,w(1)))", C5, E4, G3, C3, "61");
}

/* ---- parsing ---- */

static void check_parse_error(const char *text, int k, pn_error code, const char *phrase,
                              const char *position)
{
    pn_feature *f = (pn_feature *)1;
    pn_error_info info;
    memset(&info, 0, sizeof info);
    const pn_error err = pn_feature_parse(text, k, &f, &info);
    if (err != code)
        fail_msg("parse(%s): error %d, expected %d (%s)", text, (int)err, (int)code, info.message);
    assert_null(f);
    if (!strstr(info.message, phrase))
        fail_msg("parse(%s): message \"%s\" lacks \"%s\"", text, info.message, phrase);
    if (position && !strstr(info.message, position))
        fail_msg("parse(%s): message \"%s\" lacks \"%s\"", text, info.message, position);
}

static void test_parse_errors(void **state)
{
    (void)state;
    check_parse_error("mod13(w(1))", 4, PN_ERR_PARSE, "unknown descriptor 'mod13'",
                      "at position 1");
    check_parse_error("mod13(w(1))", 4, PN_ERR_PARSE, "mod13(w(1)): ", NULL);
    check_parse_error("w(1,5)", 4, PN_ERR_PARSE, "voice 5 out of range 1..4", "at position 5");
    check_parse_error("w(0)", 4, PN_ERR_PARSE, "voice 0 out of range 1..4", "at position 3");
    check_parse_error("w(3)", 2, PN_ERR_PARSE, "voice 3 out of range 1..2", NULL);
    check_parse_error("w(123456789012345678901)", 4, PN_ERR_PARSE, "out of range 1..4", NULL);
    check_parse_error("diff(w(1))", 4, PN_ERR_PARSE, "diff needs at least 2 voices",
                      "at position 1");
    check_parse_error("mod12(diff(diff(w(1,2))))", 4, PN_ERR_PARSE, "diff needs at least 2 voices",
                      "at position 7");
    check_parse_error("rel(w(3))", 4, PN_ERR_PARSE, "rel needs at least 2 voices", "at position 1");
    check_parse_error("w(1))", 4, PN_ERR_PARSE, "unexpected ')' after the end", "at position 5");
    check_parse_error("mod12(w(1)) x", 4, PN_ERR_PARSE, "unexpected 'x' after the end",
                      "at position 13");
    check_parse_error("w()", 4, PN_ERR_PARSE, "empty window", "at position 3");
    check_parse_error("w( )", 4, PN_ERR_PARSE, "empty window", "at position 4");
    check_parse_error("w(1,1)", 4, PN_ERR_PARSE, "voice 1 repeated", "at position 5");
    check_parse_error("w(2,3,2)", 4, PN_ERR_PARSE, "voice 2 repeated", "at position 7");
    check_parse_error("", 4, PN_ERR_PARSE, "empty feature", "at position 1");
    check_parse_error("   ", 4, PN_ERR_PARSE, "empty feature", NULL);
    check_parse_error("mod12(w(1)", 4, PN_ERR_PARSE, "expected ')' closing 'mod12'",
                      "at position 11");
    check_parse_error("mod12 w(1)", 4, PN_ERR_PARSE, "expected '(' after 'mod12'", "at position 7");
    check_parse_error("w(1 2)", 4, PN_ERR_PARSE, "expected ',' or ')'", "at position 5");
    check_parse_error("w(1,)", 4, PN_ERR_PARSE, "expected a voice number", "at position 5");
    check_parse_error("w(1", 4, PN_ERR_PARSE, "found end of text", "at position 4");
    check_parse_error("(w(1))", 4, PN_ERR_PARSE, "expected a descriptor or a window",
                      "at position 1");
    check_parse_error("mod12()", 4, PN_ERR_PARSE, "expected a descriptor or a window",
                      "at position 7");
    check_parse_error("W(1)", 4, PN_ERR_PARSE, "unknown descriptor 'W'", NULL);
    check_parse_error("mod12(mod12(mod12(mod12(mod12(mod12(mod12(mod12(mod12(mod12(mod12(mod12("
                      "mod12(mod12(mod12(mod12(mod12(w(1))))))))))))))))))",
                      4, PN_ERR_PARSE, "more than 16 nested descriptors", NULL);
    /* clamp(LO,HI,...) */
    check_parse_error("clamp(w(1))", 4, PN_ERR_PARSE,
                      "expected the lower bound of clamp (an integer), found 'w'", "at position 7");
    check_parse_error("clamp(1,w(1))", 4, PN_ERR_PARSE,
                      "expected the upper bound of clamp (an integer), found 'w'", "at position 9");
    check_parse_error("clamp(1 2,3,w(1))", 4, PN_ERR_PARSE,
                      "expected ',' after the lower bound of clamp, found '2'", "at position 9");
    check_parse_error("clamp(1,2 w(1))", 4, PN_ERR_PARSE,
                      "expected ',' after the upper bound of clamp, found 'w'", "at position 11");
    check_parse_error("clamp(1,2)", 4, PN_ERR_PARSE,
                      "expected ',' after the upper bound of clamp, found ')'", "at position 10");
    check_parse_error("clamp(1,2,)", 4, PN_ERR_PARSE, "expected a descriptor or a window",
                      "at position 11");
    check_parse_error("clamp(1.5,2,w(1))", 4, PN_ERR_PARSE, "found '.'", "at position 8");
    check_parse_error("clamp(-,2,w(1))", 4, PN_ERR_PARSE, "expected the lower bound",
                      "at position 7");
    check_parse_error("clamp( 13 ,12,w(1))", 4, PN_ERR_PARSE,
                      "clamp's lower bound 13 is above its upper bound 12", "at position 8");
    check_parse_error("clamp(0,100001,w(1))", 4, PN_ERR_PARSE,
                      "upper bound 100001 of clamp out of range -100000..100000", "at position 9");
    check_parse_error("clamp(-99999999999999999999,0,w(1))", 4, PN_ERR_PARSE,
                      "lower bound -99999999999... of clamp out of range", "at position 7");
    check_parse_error("clamp (0,1,diff(w(1)))", 4, PN_ERR_PARSE, "diff needs at least 2 voices",
                      "at position 12");
    check_parse_error("clamp(0,1,w(1)", 4, PN_ERR_PARSE, "expected ')' closing 'clamp'",
                      "at position 15");
    check_parse_error("clamp[0,1,w(1))", 4, PN_ERR_PARSE, "expected '(' after 'clamp'",
                      "at position 6");
    check_parse_error("clip(0,1,w(1))", 4, PN_ERR_PARSE, "clamp(LO,HI,...)", NULL);
    check_parse_error("w(1)", 0, PN_ERR_INVALID, "0 voices", NULL);
    check_parse_error("w(1)", 9, PN_ERR_INVALID, "9 voices", NULL);
}

static void check_canonical(const char *text, int k, const char *canonical)
{
    pn_feature *f = parse_ok(text, k);
    char buf[PN_FEATURE_TEXT_MAX];
    const size_t len = pn_feature_to_string(f, buf, sizeof buf);
    assert_string_equal(buf, canonical);
    assert_int_equal(len, strlen(canonical));
    /* the canonical text parses back to the same feature */
    pn_feature *g = parse_ok(buf, k);
    char again[PN_FEATURE_TEXT_MAX];
    pn_feature_to_string(g, again, sizeof again);
    assert_string_equal(again, canonical);
    assert_int_equal(pn_feature_length(g), pn_feature_length(f));
    assert_int_equal(pn_feature_num_voices(g), k);
    pn_feature_free(g);
    pn_feature_free(f);
}

static void test_to_string(void **state)
{
    (void)state;
    check_canonical("w(1)", 4, "w(1)");
    check_canonical(" mod12 ( diff( w( 4 , 1 ) ) ) ", 4, "mod12(diff(w(4,1)))");
    check_canonical("sort(mod12(w(1,2,3,4)))", 4, "sort(mod12(w(1,2,3,4)))");
    check_canonical("order(\tw(4,3,2,1))", 4, "order(w(4,3,2,1))");
    check_canonical("abs(diff(w(2,3)))", 4, "abs(diff(w(2,3)))");
    check_canonical("w(8,1,7)", 8, "w(8,1,7)");
    check_canonical("w(01)", 4, "w(1)");
    check_canonical(" clamp ( -2 , +13 , diff( w(2,1) ) ) ", 4, "clamp(-2,13,diff(w(2,1)))");
    check_canonical("clamp(-0,013,w(1))", 4, "clamp(0,13,w(1))");
    check_canonical("mod12(clamp(-100000,100000,clamp(\t5,5,rel(w(4,3,2,1)))))", 4,
                    "mod12(clamp(-100000,100000,clamp(5,5,rel(w(4,3,2,1)))))");

    /* lengths */
    pn_feature *f = parse_ok("diff(diff(w(4,3,2,1)))", 4);
    assert_int_equal(pn_feature_length(f), 2);
    /* snprintf-style truncation */
    char small[6];
    const size_t full = pn_feature_to_string(f, small, sizeof small);
    assert_int_equal(full, strlen("diff(diff(w(4,3,2,1)))"));
    assert_string_equal(small, "diff(");
    assert_int_equal(pn_feature_to_string(f, NULL, 0), full);
    pn_feature_free(f);
}

/* ---- value enumeration ---- */

static int32_t count_values(const char *text, const pn_space *s)
{
    pn_feature *f = parse_ok(text, s->num_voices);
    pn_feature_table *t = table_ok(f, s);
    const int32_t m = pn_feature_table_size(t);
    pn_feature_table_free(t);
    pn_feature_free(f);
    return m;
}

static void test_value_counts(void **state)
{
    (void)state;
    pn_space s;
    pn_space_default(&s);
    assert_int_equal(count_values("w(1)", &s), 55);
    assert_int_equal(count_values("mod12(w(1))", &s), 13);
    assert_int_equal(count_values("mod12(diff(w(4,1)))", &s), 13);

    /* diff(w(1,2)) by brute force over the two voices */
    int seen[256] = {0}, rest_seen = 0, expected = 0;
    for (int a = -1; a <= 84; ++a)
        for (int b = -1; b <= 84; ++b) {
            if ((a >= 0 && a < 31) || (b >= 0 && b < 31))
                continue;
            if (a < 0 || b < 0)
                rest_seen = 1;
            else
                seen[b - a + 128] = 1;
        }
    for (int i = 0; i < 256; ++i)
        expected += seen[i];
    expected += rest_seen;
    assert_int_equal(expected, 108); /* -53..53 and R */
    assert_int_equal(count_values("diff(w(1,2))", &s), expected);
    assert_int_equal(count_values("abs(diff(w(1,2)))", &s), 55);

    /* multisets of 4 from 13 symbols (12 classes and R): C(16,4) */
    assert_int_equal(count_values("sort(mod12(w(1,2,3,4)))", &s), 1820);
    /* rankings with rests: sum over j sounding voices of C(4,j) j! */
    assert_int_equal(count_values("order(w(1,2,3,4))", &s), 1 + 4 + 12 + 24 + 24);

    /* per-voice ranges */
    pn_space c;
    pn_error_info info;
    const int low[2] = {60, 40}, high[2] = {62, 41};
    assert_int_equal(pn_space_init(&c, 2, low, high, &info), PN_OK);
    assert_int_equal(count_values("w(1)", &c), 4);
    /* 60..62 minus 40..41: 19..22, and R */
    assert_int_equal(count_values("diff(w(2,1))", &c), 5);

    /* clamp: the chorale registers' soprano - alto (-21..33) with every
     * spacing over an octave as one value, 13: -21..13 and R */
    pn_space chorale;
    const int clow[4] = {57, 50, 45, 33}, chigh[4] = {83, 78, 72, 67};
    assert_int_equal(pn_space_init(&chorale, 4, clow, chigh, &info), PN_OK);
    assert_int_equal(count_values("diff(w(2,1))", &chorale), 55 + 1);
    assert_int_equal(count_values("clamp(-21,13,diff(w(2,1)))", &chorale), 35 + 1);
    assert_int_equal(count_values("clamp(-2,13,diff(w(2,1)))", &chorale), 16 + 1);
    assert_int_equal(count_values("clamp(-100,100,diff(w(2,1)))", &chorale), 55 + 1);
    assert_int_equal(count_values("clamp(12,13,diff(w(2,1)))", &chorale), 2 + 1);
    assert_int_equal(count_values("clamp(60,70,w(1))", &s), 11 + 1);
    assert_int_equal(count_values("clamp(0,0,w(1,2))", &s), 4); /* (0,0) (0,R) (R,0) (R,R) */
    /* a clamp beyond every value leaves one value */
    assert_int_equal(count_values("clamp(200,300,w(1))", &s), 1 + 1);
    /* the cost's bound of the cells follows the clamp: exactly the values here */
    {
        const char *const clamped[] = {"clamp(-21,13,diff(w(2,1)))", "clamp(-2,13,diff(w(2,1)))",
                                       "clamp(12,13,diff(w(2,1)))", "clamp(60,70,w(1))",
                                       "sort(clamp(55,65,w(1,2,3,4)))"};
        const int64_t expected_cells[] = {36, 17, 3, 12, -1};
        for (size_t i = 0; i < sizeof clamped / sizeof clamped[0]; ++i) {
            pn_feature *g = parse_ok(clamped[i], 4);
            pn_feature_table *u = table_ok(g, &chorale);
            int64_t bytes, cells;
            pn_feature_cost(g, &chorale, &bytes, &cells);
            assert_true(cells >= pn_feature_table_size(u));
            assert_true(bytes >= pn_feature_table_bytes(u));
            if (expected_cells[i] >= 0)
                assert_int_equal(cells, expected_cells[i]);
            pn_feature_table_free(u);
            pn_feature_free(g);
        }
    }

    /* canonical order: lexicographic, R last */
    pn_feature *f = parse_ok("mod12(w(1))", 4);
    pn_feature_table *t = table_ok(f, &s);
    char buf[PN_FEATURE_VALUE_TEXT_MAX];
    pn_feature_value_text(t, 0, buf, sizeof buf);
    assert_string_equal(buf, "0");
    pn_feature_value_text(t, 11, buf, sizeof buf);
    assert_string_equal(buf, "11");
    pn_feature_value_text(t, 12, buf, sizeof buf);
    assert_string_equal(buf, "R");
    assert_int_equal(pn_feature_value_text(t, 13, buf, sizeof buf), 0);
    assert_string_equal(buf, "");
    assert_null(pn_feature_table_value(t, -1));
    pn_feature_table_free(t);
    pn_feature_free(f);

    f = parse_ok("diff(w(4,3))", 4);
    t = table_ok(f, &s);
    pn_feature_value_text(t, 0, buf, sizeof buf);
    assert_string_equal(buf, "-53");
    pn_feature_table_free(t);
    pn_feature_free(f);

    f = parse_ok("diff(w(4,3,1))", 4);
    t = table_ok(f, &s);
    const int32_t m = pn_feature_table_size(t);
    pn_feature_value_text(t, m - 1, buf, sizeof buf);
    assert_string_equal(buf, "(R,R)");
    pn_feature_value_text(t, 0, buf, sizeof buf);
    assert_string_equal(buf, "(-53,0)"); /* tenor - bass = -53 forces tenor 31 */
    pn_feature_value_text(t, m - 2, buf, sizeof buf);
    assert_string_equal(buf, "(R,53)");
    pn_feature_table_free(t);
    pn_feature_free(f);

    /* a feature parsed for another number of voices */
    f = parse_ok("w(1)", 3);
    assert_int_equal(pn_feature_values(f, &s, &t, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "3 voices"));
    pn_feature_free(f);
}

/* Every sonority of the window (other voices fixed at random) has a cell
 * whose value is its evaluated value; cells are strictly increasing in
 * value; and every cell is hit. */
static void check_against_brute_force(const char *text, const pn_space *s, uint64_t seed)
{
    pn_feature *f = parse_ok(text, s->num_voices);
    pn_feature_table *t = table_ok(f, s);
    const int32_t m = pn_feature_table_size(t);
    const int L = pn_feature_length(f);
    for (int32_t c = 1; c < m; ++c)
        assert_true(pn_feature_value_compare(pn_feature_table_value(t, c - 1),
                                             pn_feature_table_value(t, c), L) < 0);
    char *hit = calloc((size_t)m, 1);
    assert_non_null(hit);
    const int64_t n = pn_space_size(s);
    pn_error_info info;
    int pitches[PN_SPACE_MAX_VOICES], value[PN_FEATURE_MAX_LENGTH];
    uint64_t rng = seed;
    /* all sonorities when small, else a random sample large enough to hit
     * every value of the small features used here */
    const int64_t samples = n <= 400000 ? n : 400000;
    for (int64_t i = 0; i < samples; ++i) {
        const int64_t x = n <= 400000 ? i : rng_below(&rng, n);
        assert_int_equal(pn_space_decode(s, x, pitches, &info), PN_OK);
        int32_t cell = -1;
        assert_int_equal(pn_feature_cell_of(t, pitches, &cell, &info), PN_OK);
        assert_true(cell >= 0 && cell < m);
        assert_int_equal(pn_feature_eval(f, pitches, value), L);
        assert_memory_equal(pn_feature_table_value(t, cell), value, (size_t)L * sizeof *value);
        hit[cell] = 1;
    }
    if (samples == n)
        for (int32_t c = 0; c < m; ++c)
            assert_true(hit[c]);
    free(hit);
    pn_feature_table_free(t);
    pn_feature_free(f);
}

static void test_cell_of_brute_force(void **state)
{
    (void)state;
    pn_space small;
    pn_error_info info;
    const int low[4] = {62, 57, 50, 40}, high[4] = {70, 65, 60, 52};
    assert_int_equal(pn_space_init(&small, 4, low, high, &info), PN_OK);
    const char *texts[] = {
        "w(1)",
        "mod12(w(3))",
        "diff(w(4,1))",
        "mod12(diff(w(4,1)))",
        "sort(mod12(w(1,2,3,4)))",
        "order(w(1,2,3,4))",
        "order(w(3,1))",
        "abs(diff(w(2,3)))",
        "diff(w(4,3,2,1))",
        "sort(diff(w(1,3,4)))",
        "order(diff(w(4,2,1,3)))",
        "abs(mod12(diff(diff(w(2,4,1)))))",
        "rel(w(4,3,2,1))",
        "sort(mod12(rel(w(4,3,2,1))))",
        "mod12(rel(w(2,4,1)))",
        "abs(rel(diff(w(4,2,1))))",
        "clamp(-2,5,diff(w(2,1)))",
        "clamp(63,66,w(1))",
        "sort(clamp(50,60,w(1,2,3,4)))",
        "diff(clamp(55,62,w(3,1,2)))",
        "clamp(0,3,order(w(1,2,3,4)))",
        "clamp(-5,5,rel(w(4,3,2,1)))",
        "abs(clamp(-3,2,diff(w(3,2))))",
        "clamp(12,13,diff(w(2,1)))",
    };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; ++i)
        check_against_brute_force(texts[i], &small, 11 + i);
    /* ranges wider than an octave, all sonorities: leading mod12/abs
     * reduce each voice to pitch-class symbols before the rest is applied */
    pn_space wide;
    const int low3[3] = {52, 45, 33}, high3[3] = {79, 70, 60};
    assert_int_equal(pn_space_init(&wide, 3, low3, high3, &info), PN_OK);
    const char *wide_texts[] = {
        "mod12(w(2))",
        "sort(mod12(w(1,2,3)))",
        "order(mod12(w(3,1,2)))",
        "abs(mod12(diff(w(1,3))))",
        "mod12(abs(w(2,3)))",
        "diff(mod12(w(3,2)))",
        "mod12(mod12(w(3,1)))",
        "sort(diff(mod12(w(1,2,3))))",
        "mod12(diff(w(3,1)))",
        "sort(mod12(diff(w(3,2,1))))",
        "mod12(diff(diff(w(1,2,3))))",
        "abs(mod12(diff(w(2,1))))",
        "order(mod12(diff(w(3,2,1))))",
        "diff(mod12(diff(w(3,2,1))))",
        "sort(mod12(rel(w(3,2,1))))",
        "mod12(rel(diff(w(3,1,2))))",
        "rel(mod12(w(3,1)))",
        "clamp(48,60,w(1))",
        "mod12(clamp(48,60,w(2,1)))",
        "clamp(2,9,mod12(diff(w(3,1))))",
        "mod12(clamp(0,30,diff(w(3,1))))",
        "clamp(50,55,mod12(w(1,2)))",
        "sort(mod12(clamp(-2,13,rel(w(3,2,1)))))",
    };
    for (size_t i = 0; i < sizeof wide_texts / sizeof wide_texts[0]; ++i)
        check_against_brute_force(wide_texts[i], &wide, 31 + i);
    assert_int_equal(count_values("sort(mod12(w(1,2,3)))", &wide), 455); /* C(15,3) */
    /* multisets of 2 from the 12 classes and R (a resting bass gives (R,R)): C(14,2) */
    assert_int_equal(count_values("sort(mod12(rel(w(3,2,1))))", &wide), 91);

    /* 8 voices in separate narrow registers: sorting spreads every entry
     * over the union of the ranges, so these values are hashed, not keyed */
    pn_space eight;
    int low8[8], high8[8];
    for (int v = 0; v < 8; ++v) {
        low8[v] = 80 - 9 * v;
        high8[v] = low8[v] + 1;
    }
    assert_int_equal(pn_space_init(&eight, 8, low8, high8, &info), PN_OK);
    check_against_brute_force("sort(w(1,2,3,4,5,6,7,8))", &eight, 5);
    check_against_brute_force("abs(diff(sort(w(8,6,4,2,1,3,5,7))))", &eight, 6);
    check_against_brute_force("order(w(8,7,6,5,4,3,2,1))", &eight, 7);
    check_against_brute_force("mod12(diff(w(2,7)))", &eight, 8);
    check_against_brute_force("clamp(30,60,sort(w(1,2,3,4,5,6,7,8)))", &eight, 9);
    assert_int_equal(count_values("sort(w(1,2,3,4,5,6,7,8))", &eight), 6561);

    pn_space def;
    pn_space_default(&def);
    check_against_brute_force("mod12(diff(w(4,1)))", &def, 3);
    check_against_brute_force("sort(mod12(w(1,2,4)))", &def, 4);

    /* cell_of rejects a pitch outside a window voice's range only */
    pn_feature *f = parse_ok("w(2)", 4);
    pn_feature_table *t = table_ok(f, &small);
    int32_t cell;
    const int in[4] = {0, 60, 127, -1}, out[4] = {62, 66, 50, 40};
    assert_int_equal(pn_feature_cell_of(t, in, &cell, &info), PN_OK);
    assert_int_equal(pn_feature_cell_of(t, out, &cell, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "voice 2"));
    pn_feature_table_free(t);
    pn_feature_free(f);
}

/* ---- sums over the rows ---- */

/* The space of the row sums' tests: a bass of 33 digits under 4,704
 * upper voicings, so that the chord's per-run bounds come from its lists,
 * two-voice rules' from tables, and diff(w(4,3,2,1)) has only its least
 * over all rows. */
static void row_sums_space(pn_space *s)
{
    pn_error_info info;
    const int low[4] = {60, 55, 48, 36}, high[4] = {79, 67, 62, 67};
    assert_int_equal(pn_space_init(s, 4, low, high, &info), PN_OK);
}

/* The row sums of a few rules over a space, with their tables. */
enum { FIXTURE_RULES = 10 };
typedef struct sums_fixture {
    int num_rules;
    pn_feature *f[FIXTURE_RULES];
    pn_feature_table *t[FIXTURE_RULES];
    int32_t start[FIXTURE_RULES + 1]; /* rule r's rows start[r] .. start[r + 1] - 1 */
    pn_feature_sums *sums;
} sums_fixture;

static void fixture_init(sums_fixture *fx, const pn_space *s, const char *const *texts, int n)
{
    pn_error_info info;
    assert_true(n <= FIXTURE_RULES);
    fx->num_rules = n;
    fx->start[0] = 0;
    for (int i = 0; i < n; ++i) {
        fx->f[i] = parse_ok(texts[i], s->num_voices);
        fx->t[i] = table_ok(fx->f[i], s);
        fx->start[i + 1] = fx->start[i] + pn_feature_table_size(fx->t[i]);
    }
    pn_feature_set set = {*s, n, (const pn_feature_table *const *)fx->t};
    fx->sums = NULL;
    assert_int_equal(pn_feature_sums_create(&set, fx->start, &fx->sums, &info), PN_OK);
}

static void fixture_free(sums_fixture *fx)
{
    pn_feature_sums_free(fx->sums);
    for (int i = 0; i < fx->num_rules; ++i) {
        pn_feature_table_free(fx->t[i]);
        pn_feature_free(fx->f[i]);
    }
}

/* pn_feature_sums_run against the cells of every rule, one and two values
 * per row, over ranges that start and end anywhere in a run of the bass;
 * every third range with a bound, which must leave out exactly the
 * sonorities whose sums are all >= the cut and give the others exact;
 * half of those with the per-run bounds of a prepared pass. The kept
 * rules vary: 3 to 7 rules with the bass are summed per run, and the ones
 * without it are left out too (a dropped rule adds nothing). */
static void test_row_sums(void **state)
{
    (void)state;
    pn_space s;
    pn_error_info info;
    row_sums_space(&s);
    const char *texts[] = {
        "w(1)",
        "sort(mod12(rel(w(4,3,2,1))))",
        "w(4)",
        "diff(w(2,1))",
        "diff(w(4,3))",
        "mod12(w(2,3))",
        "order(w(1,4))",
        "mod12(rel(w(4,1)))",
        "mod12(rel(w(4,2)))",
        "diff(w(4,3,2,1))",
    };
    enum { NT = sizeof texts / sizeof texts[0] };
    /* the kept rules, by trial: all seven with the bass, six, five, three,
     * and five with two rules without the bass left out */
    const unsigned char keep[5][NT] = {{1, 1, 1, 1, 1, 1, 1, 1, 1, 1},
                                       {1, 1, 1, 1, 1, 1, 1, 1, 0, 1},
                                       {1, 1, 1, 1, 1, 1, 1, 0, 0, 1},
                                       {1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
                                       {0, 1, 0, 0, 1, 1, 1, 1, 1, 0}};
    sums_fixture fx;
    fixture_init(&fx, &s, texts, NT);
    const int32_t m = fx.start[NT];
    double *v = malloc(2 * (size_t)m * sizeof *v);
    double *out = malloc(2 * 5000 * sizeof *out);
    int32_t *at = malloc(5000 * sizeof *at);
    assert_non_null(at);
    assert_non_null(v);
    assert_non_null(out);
    uint64_t rng = 5;
    for (int32_t i = 0; i < 2 * m; ++i)
        v[i] = (double)rng_below(&rng, 1000) / 7.0 - 50.0;
    const int64_t n = pn_space_size(&s);
    long skipped = 0, exact_in_bounded = 0;
    for (int trial = 0; trial < 300; ++trial) {
        const int nv = 1 + trial % 2;
        int64_t count = 1 + rng_below(&rng, trial % 4 == 0 ? 5000 : 40);
        int64_t first = trial % 9 == 0 ? n - count : rng_below(&rng, n);
        if (first < 0)
            first = 0;
        if (first + count > n)
            count = n - first;
        const int bounded = trial % 3 == 2;
        double lower[2 * NT], cut[2];
        for (int r = 0; r < NT; ++r)
            for (int c = 0; c < nv; ++c) {
                lower[r * nv + c] = INFINITY;
                for (int32_t i = fx.start[r]; i < fx.start[r + 1]; ++i)
                    lower[r * nv + c] =
                        fmin(lower[r * nv + c], v[(size_t)i * (size_t)nv + (size_t)c]);
            }
        /* around the middle of the sums: about half the runs can be told */
        for (int c = 0; c < nv; ++c)
            cut[c] = -60.0 + (double)rng_below(&rng, 120);
        const unsigned char *kept = keep[trial % 5]; /* all of them when NULL */
        const unsigned char *kept_arg = trial % 10 == 0 ? NULL : kept;
        /* every other bounded trial with the per-run bounds of a prepared
         * pass, and without lower: prepared runs must not read it */
        const int prepared = bounded && (trial / 6) % 2 == 1;
        if (prepared)
            pn_feature_sums_prepare(fx.sums, kept_arg, v, nv);
        const int64_t got = pn_feature_sums_run(fx.sums, trial % PN_ROW_SUMS_LANES, kept_arg, v, nv,
                                                first, count, bounded && !prepared ? lower : NULL,
                                                bounded ? cut : NULL, prepared, at, out);
        assert_true(got >= 0 && got <= count);
        if (!bounded)
            assert_int_equal(got, count);
        int64_t i = 0; /* the next summed input */
        for (int64_t j = 0; j < count; ++j) {
            int p[4];
            assert_int_equal(pn_space_decode(&s, first + j, p, &info), PN_OK);
            int all_at_cut = 1, below_cut = 0;
            double expect[2];
            for (int c = 0; c < nv; ++c) {
                expect[c] = 0.0;
                for (int r = 0; r < NT; ++r) {
                    if (!kept[r])
                        continue;
                    int32_t cell;
                    assert_int_equal(pn_feature_cell_of(fx.t[r], p, &cell, &info), PN_OK);
                    expect[c] += v[(size_t)(fx.start[r] + cell) * (size_t)nv + (size_t)c];
                }
                /* within rounding: the kernel sums in another order */
                const double eps = 1e-9 * (1.0 + fabs(cut[c]));
                all_at_cut &= expect[c] >= cut[c] - eps;
                below_cut |= expect[c] < cut[c] + eps;
            }
            if (i == got || at[i] != j) { /* left out: only with a bound, at or above the cut */
                if (!bounded || !all_at_cut)
                    fail_msg("x = %lld left out (bounded %d), its sums below the cut",
                             (long long)(first + j), bounded);
                skipped++;
                continue;
            }
            /* with a bound, only the sonorities a pass looks for */
            if (bounded && !below_cut)
                fail_msg("x = %lld summed with a bound, its sums all at or above the cut",
                         (long long)(first + j));
            exact_in_bounded += bounded;
            for (int c = 0; c < nv; ++c)
                if (fabs(out[i * nv + c] - expect[c]) > 1e-9 * (1.0 + fabs(expect[c])))
                    fail_msg("x = %lld, value %d of %d: %g, expected %g", (long long)(first + j), c,
                             nv, out[i * nv + c], expect[c]);
            ++i;
        }
        assert_int_equal(i, got); /* in order, none twice */
    }
    /* the bound both skipped runs and left others to be summed */
    assert_true(skipped > 0);
    assert_true(exact_in_bounded > 0);
    fixture_free(&fx);
    free(v);
    free(out);
    free(at);
}

/* The per-run bounds of a prepared pass are as tight as they may be and
 * no tighter: with one rule with the bass kept (a chord over the bass,
 * bounded from its lists; a tenor-bass interval and the bass, from
 * tables; a four-voice rule, from its least over all rows), the bound of
 * a run is its least sum, so a cut just above that sum must give the
 * sonority that has it, and a cut at it none. */
static void test_row_sums_per_run_bounds(void **state)
{
    (void)state;
    pn_space s;
    pn_error_info info;
    row_sums_space(&s);
    const char *texts[] = {"w(1)", "sort(mod12(rel(w(4,3,2,1))))", "diff(w(4,3))", "w(4)",
                           "diff(w(4,3,2,1))"};
    enum { NT = sizeof texts / sizeof texts[0] };
    sums_fixture fx;
    fixture_init(&fx, &s, texts, NT);
    const int32_t m = fx.start[NT];
    double *v = malloc(2 * (size_t)m * sizeof *v);
    assert_non_null(v);
    const int run = pn_space_radix(&s, 3);
    const int64_t runs = pn_space_size(&s) / run;
    double out[2 * 64];
    int32_t at[64];
    uint64_t rng = 11;
    for (int trial = 0; trial < 400; ++trial) {
        const int inner = 1 + trial % (NT - 1), nv = 1 + (trial / (NT - 1)) % 2;
        const unsigned char kept[NT] = {1, inner == 1, inner == 2, inner == 3, inner == 4};
        for (int32_t i = 0; i < nv * m; ++i)
            v[i] = (double)rng_below(&rng, 1000) / 7.0 - 50.0;
        const int64_t first = rng_below(&rng, runs) * run;
        /* the least sum of each value over the run, and who has it */
        double least[2] = {INFINITY, INFINITY};
        int64_t where[2] = {-1, -1};
        for (int j = 0; j < run; ++j) {
            int p[4];
            assert_int_equal(pn_space_decode(&s, first + j, p, &info), PN_OK);
            for (int c = 0; c < nv; ++c) {
                double sum = 0.0;
                for (int r = 0; r < NT; ++r) {
                    int32_t cell;
                    assert_int_equal(pn_feature_cell_of(fx.t[r], p, &cell, &info), PN_OK);
                    sum += kept[r] ? v[(size_t)(fx.start[r] + cell) * (size_t)nv + (size_t)c] : 0.0;
                }
                if (sum < least[c]) {
                    least[c] = sum;
                    where[c] = j;
                }
            }
        }
        pn_feature_sums_prepare(fx.sums, kept, v, nv);
        for (int c = 0; c < nv; ++c) {
            /* only value c can get under the cut */
            double cut[2] = {INFINITY, INFINITY};
            cut[c] = least[c] + 1e-6;
            for (int c2 = 0; c2 < nv; ++c2)
                cut[c2] = c2 == c ? cut[c2] : -INFINITY;
            int64_t got =
                pn_feature_sums_run(fx.sums, 0, kept, v, nv, first, run, NULL, cut, 1, at, out);
            int found = 0;
            for (int64_t i = 0; i < got; ++i)
                found |= at[i] == where[c];
            if (!found)
                fail_msg("%s, value %d of %d: the run from %lld gave %lld sonorities, "
                         "not the one with the least sum",
                         texts[inner], c, nv, (long long)first, (long long)got);
            cut[c] = least[c] - 1e-6;
            got = pn_feature_sums_run(fx.sums, 0, kept, v, nv, first, run, NULL, cut, 1, at, out);
            assert_int_equal(got, 0);
        }
    }
    fixture_free(&fx);
    free(v);
}

/* Spaces of one to three voices: the row sums walk runs of the last
 * voice with no voice, one or two above it, over the whole space, with
 * and without a bound, one and two values per row, against the cells. */
static void test_row_sums_few_voices(void **state)
{
    (void)state;
    const int low[3] = {60, 48, 36}, high[3] = {72, 62, 55};
    const char *texts[3][4] = {
        {"w(1)", "mod12(w(1))", "w(1)", "mod12(w(1))"},
        {"w(1)", "diff(w(2,1))", "w(2)", "mod12(w(2))"},
        {"w(1)", "diff(w(2,1))", "mod12(rel(w(3,2,1)))", "diff(w(3,2))"},
    };
    for (int k = 1; k <= 3; ++k) {
        pn_space s;
        pn_error_info info;
        assert_int_equal(pn_space_init(&s, k, low, high, &info), PN_OK);
        sums_fixture fx;
        fixture_init(&fx, &s, texts[k - 1], 4);
        const int64_t n = pn_space_size(&s);
        double *v = malloc(2 * (size_t)fx.start[4] * sizeof *v);
        double *out = malloc(2 * (size_t)n * sizeof *out);
        int32_t *at = malloc((size_t)n * sizeof *at);
        assert_non_null(v);
        assert_non_null(out);
        assert_non_null(at);
        uint64_t rng = 3 + (uint64_t)k;
        for (int trial = 0; trial < 6; ++trial) {
            const int nv = 1 + trial % 2, mode = trial / 2; /* none, lower, prepared */
            for (int32_t i = 0; i < nv * fx.start[4]; ++i)
                v[i] = (double)rng_below(&rng, 1000) / 7.0 - 50.0;
            double lower[2 * 4], cut[2] = {30.05, 20.05}; /* no sum is on a cut */
            for (int r = 0; r < 4; ++r)
                for (int c = 0; c < nv; ++c) {
                    lower[r * nv + c] = INFINITY;
                    for (int32_t i = fx.start[r]; i < fx.start[r + 1]; ++i)
                        lower[r * nv + c] = fmin(lower[r * nv + c], v[i * nv + c]);
                }
            if (mode == 2)
                pn_feature_sums_prepare(fx.sums, NULL, v, nv);
            const int64_t got =
                pn_feature_sums_run(fx.sums, 0, NULL, v, nv, 0, n, mode == 1 ? lower : NULL,
                                    mode ? cut : NULL, mode == 2, at, out);
            int64_t i = 0, below = 0;
            for (int64_t x = 0; x < n; ++x) {
                int p[3];
                assert_int_equal(pn_space_decode(&s, x, p, &info), PN_OK);
                double expect[2] = {0.0, 0.0};
                for (int r = 0; r < 4; ++r) {
                    int32_t cell;
                    assert_int_equal(pn_feature_cell_of(fx.t[r], p, &cell, &info), PN_OK);
                    for (int c = 0; c < nv; ++c)
                        expect[c] += v[(size_t)(fx.start[r] + cell) * (size_t)nv + (size_t)c];
                }
                const int wanted = !mode || expect[0] < cut[0] || (nv == 2 && expect[1] < cut[1]);
                below += mode && wanted;
                if (!wanted)
                    continue;
                if (i == got || at[i] != x)
                    fail_msg("%d voices, mode %d, nv %d: x = %lld not summed", k, mode, nv,
                             (long long)x);
                for (int c = 0; c < nv; ++c)
                    assert_true(fabs(out[i * nv + c] - expect[c]) <=
                                1e-9 * (1.0 + fabs(expect[c])));
                ++i;
            }
            assert_int_equal(i, got);
            if (mode)
                assert_true(below > 0 && below < n); /* the cut splits the space */
        }
        fixture_free(&fx);
        free(v);
        free(out);
        free(at);
    }
}

/* ---- cell source ---- */

static void test_cell_source(void **state)
{
    (void)state;
    pn_space s;
    pn_space_default(&s);
    const char *texts[] = {
        "mod12(w(1))",
        "w(4)",
        "mod12(diff(w(4,1)))",
        "diff(w(1,2))",
        "w(2,3)",
        "abs(diff(w(3,4)))",
        "order(w(1,2,3,4))",
        "sort(mod12(w(2,3,4)))",
    };
    enum { NT = sizeof texts / sizeof texts[0] };
    pn_feature *f[NT];
    pn_feature_table *t[NT];
    for (int i = 0; i < NT; ++i) {
        f[i] = parse_ok(texts[i], 4);
        t[i] = table_ok(f[i], &s);
    }
    pn_feature_set set = {s, NT, (const pn_feature_table *const *)t};
    pn_error_info info;
    assert_int_equal(pn_feature_set_check(&set, &info), PN_OK);

    const int64_t n = pn_space_size(&s);
    int32_t *cells = malloc(20000 * sizeof *cells);
    assert_non_null(cells);
    uint64_t rng = 99;
    for (int trial = 0; trial < 400; ++trial) {
        const int32_t rule = (int32_t)(trial % NT);
        int64_t count = 1 + rng_below(&rng, trial % 3 == 0 ? 20000 : 300);
        int64_t first = rng_below(&rng, n);
        if (trial % 7 == 0)
            first = n - count; /* the very end */
        if (first + count > n)
            count = n - first;
        assert_int_equal(pn_feature_cells(&set, rule, first, count, cells), 0);
        for (int64_t j = 0; j < count; ++j) {
            int p[4];
            int32_t expect;
            assert_int_equal(pn_space_decode(&s, first + j, p, &info), PN_OK);
            assert_int_equal(pn_feature_cell_of(t[rule], p, &expect, &info), PN_OK);
            if (cells[j] != expect)
                fail_msg("%s at x = %lld: source %d, cell_of %d", texts[rule],
                         (long long)(first + j), (int)cells[j], (int)expect);
        }
    }
    /* bounds */
    assert_int_equal(pn_feature_cells(&set, 0, 0, 0, cells), 0);
    assert_int_not_equal(pn_feature_cells(&set, NT, 0, 1, cells), 0);
    assert_int_not_equal(pn_feature_cells(&set, -1, 0, 1, cells), 0);
    assert_int_not_equal(pn_feature_cells(&set, 0, n - 1, 2, cells), 0);
    assert_int_not_equal(pn_feature_cells(&set, 0, -1, 1, cells), 0);

    /* a table from another space is refused */
    pn_space other;
    const int low[4] = {40, 40, 40, 40}, high[4] = {50, 50, 50, 50};
    assert_int_equal(pn_space_init(&other, 4, low, high, &info), PN_OK);
    pn_feature_table *foreign = table_ok(f[0], &other);
    const pn_feature_table *mixed[2] = {t[0], foreign};
    pn_feature_set bad = {s, 2, mixed};
    assert_int_equal(pn_feature_set_check(&bad, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "another space"));
    assert_int_not_equal(pn_feature_cells(&bad, 1, 0, 1, cells), 0);
    pn_feature_table_free(foreign);

    free(cells);
    for (int i = 0; i < NT; ++i) {
        pn_feature_table_free(t[i]);
        pn_feature_free(f[i]);
    }
}

/* ---- value lookup by text ---- */

static void test_find_value(void **state)
{
    (void)state;
    pn_space s;
    pn_space_default(&s);
    pn_error_info info;
    const char *texts[] = {"mod12(w(1))", "diff(w(4,2,1))", "sort(mod12(w(1,2,3,4)))", "w(3)",
                           "clamp(-2,13,diff(w(4,2,1)))"};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; ++i) {
        pn_feature *f = parse_ok(texts[i], 4);
        pn_feature_table *t = table_ok(f, &s);
        for (int32_t c = 0; c < pn_feature_table_size(t); ++c) {
            char buf[PN_FEATURE_VALUE_TEXT_MAX];
            pn_feature_value_text(t, c, buf, sizeof buf);
            int32_t found = -1;
            if (pn_feature_find_value(t, buf, &found, &info) != PN_OK)
                fail_msg("%s: find_value(%s): %s", texts[i], buf, info.message);
            assert_int_equal(found, c);
        }
        pn_feature_table_free(t);
        pn_feature_free(f);
    }

    pn_feature *f = parse_ok("diff(w(4,2,1))", 4);
    pn_feature_table *t = table_ok(f, &s);
    int32_t a = -1, b = -2;
    assert_int_equal(pn_feature_find_value(t, "(-7,R)", &a, &info), PN_OK);
    assert_int_equal(pn_feature_find_value(t, " ( -7 , R ) ", &b, &info), PN_OK);
    assert_int_equal(a, b);
    assert_int_equal(pn_feature_find_value(t, "(+5,7)", &a, &info), PN_OK);
    assert_int_equal(pn_feature_find_value(t, "(5,7)", &b, &info), PN_OK);
    assert_int_equal(a, b);
    /* no step inside 31..84 is larger than 53 */
    assert_int_equal(pn_feature_find_value(t, "(54,0)", &a, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "never takes the value '(54,0)'"));
    assert_non_null(strstr(info.message, "diff(w(4,2,1))"));
    assert_int_equal(pn_feature_find_value(t, "(1,2,3)", &a, &info), PN_ERR_PARSE);
    assert_non_null(strstr(info.message, "length 3"));
    assert_int_equal(pn_feature_find_value(t, "4", &a, &info), PN_ERR_PARSE);
    assert_non_null(strstr(info.message, "length 1"));
    assert_int_equal(pn_feature_find_value(t, "(1,x)", &a, &info), PN_ERR_PARSE);
    assert_non_null(strstr(info.message, "expected an integer or R at position 4"));
    assert_int_equal(pn_feature_find_value(t, "(1,2", &a, &info), PN_ERR_PARSE);
    assert_int_equal(pn_feature_find_value(t, "1,2", &a, &info), PN_ERR_PARSE);
    assert_int_equal(pn_feature_find_value(t, "(1,2) z", &a, &info), PN_ERR_PARSE);
    assert_int_equal(pn_feature_find_value(t, "", &a, &info), PN_ERR_PARSE);
    assert_int_equal(pn_feature_find_value(t, "(1,2,3,4,5,6,7,8,9,10)", &a, &info), PN_ERR_PARSE);
    pn_feature_table_free(t);
    pn_feature_free(f);

    f = parse_ok("mod12(w(1))", 4);
    t = table_ok(f, &s);
    assert_int_equal(pn_feature_find_value(t, "R", &a, &info), PN_OK);
    assert_int_equal(a, 12);
    assert_int_equal(pn_feature_find_value(t, "(7)", &a, &info), PN_OK);
    assert_int_equal(a, 7);
    assert_int_equal(pn_feature_find_value(t, "13", &a, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "never takes the value '13'"));
    assert_int_equal(pn_feature_find_value(t, "-1", &a, &info), PN_ERR_INVALID);
    assert_int_equal(pn_feature_find_value(t, "99999999999999", &a, &info), PN_ERR_INVALID);
    pn_feature_table_free(t);
    pn_feature_free(f);

    /* a clamped feature takes its bounds, nothing beyond them */
    f = parse_ok("clamp(-2,13,diff(w(2,1)))", 4);
    t = table_ok(f, &s);
    assert_int_equal(pn_feature_table_size(t), 17);
    assert_int_equal(pn_feature_find_value(t, "13", &a, &info), PN_OK);
    assert_int_equal(a, 15);
    assert_int_equal(pn_feature_find_value(t, "-2", &a, &info), PN_OK);
    assert_int_equal(a, 0);
    assert_int_equal(pn_feature_find_value(t, "14", &a, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "clamp(-2,13,diff(w(2,1))) never takes the value '14'"));
    assert_int_equal(pn_feature_find_value(t, "-3", &a, &info), PN_ERR_INVALID);
    pn_feature_table_free(t);
    pn_feature_free(f);
}

/* ---- de-overlap ---- */

typedef struct built_set {
    int count;
    pn_feature *f[16];
    pn_feature_table *t[16];
    pn_feature_set set;
    pn_problem *prob;
} built_set;

static void build_set(built_set *b, const pn_space *s, const char *const *texts, int count)
{
    pn_error_info info;
    int32_t sizes[16];
    char names[16][PN_FEATURE_TEXT_MAX];
    const char *name_ptr[16];
    b->count = count;
    for (int i = 0; i < count; ++i) {
        b->f[i] = parse_ok(texts[i], s->num_voices);
        b->t[i] = table_ok(b->f[i], s);
        sizes[i] = pn_feature_table_size(b->t[i]);
        pn_feature_to_string(b->f[i], names[i], sizeof names[i]);
        name_ptr[i] = names[i];
    }
    b->set.space = *s;
    b->set.num_tables = count;
    b->set.tables = (const pn_feature_table *const *)b->t;
    if (pn_problem_create(pn_space_size(s), count, sizes, name_ptr, &b->prob, &info) != PN_OK)
        fail_msg("pn_problem_create: %s", info.message);
    for (int r = 0; r < count; ++r)
        for (int32_t i = b->prob->rule_start[r]; i < b->prob->rule_start[r + 1]; ++i)
            b->prob->target[i] = 1.0 / sizes[r];
}

static void free_set(built_set *b)
{
    pn_problem_free(b->prob);
    for (int i = 0; i < b->count; ++i) {
        pn_feature_table_free(b->t[i]);
        pn_feature_free(b->f[i]);
    }
}

/* Two sets of 16 features for the timing: harmonic (pitch classes,
 * intervals mod 12, chord type, voice order) and registral (pitches and
 * spacing too: these pin almost every sonority, so K' is close to n). */
static const char *const harmonic[16] = {
    "mod12(w(1))",
    "mod12(w(2))",
    "mod12(w(3))",
    "mod12(w(4))",
    "mod12(diff(w(4,1)))",
    "mod12(diff(w(4,2)))",
    "mod12(diff(w(4,3)))",
    "mod12(diff(w(3,2)))",
    "mod12(diff(w(3,1)))",
    "mod12(diff(w(2,1)))",
    "sort(mod12(w(1,2,3,4)))",
    "order(w(4,3,2,1))",
    "sort(mod12(diff(w(4,3,2,1))))",
    "mod12(diff(w(4,3,2,1)))",
    "order(mod12(w(1,2,3,4)))",
    "mod12(w(4,1))",
};

static const char *const registral[16] = {
    "w(1)",
    "mod12(w(1))",
    "mod12(w(2))",
    "mod12(w(3))",
    "w(4)",
    "mod12(w(4))",
    "mod12(diff(w(4,1)))",
    "mod12(diff(w(4,2)))",
    "mod12(diff(w(4,3)))",
    "abs(diff(w(1,2)))",
    "abs(diff(w(2,3)))",
    "abs(diff(w(3,4)))",
    "sort(mod12(w(1,2,3,4)))",
    "order(w(4,3,2,1))",
    "diff(w(4,3,2,1))",
    "sort(mod12(diff(w(4,3,2,1))))",
};

static void test_deoverlap_small(void **state)
{
    (void)state;
    pn_space s;
    pn_error_info info;
    const int low[4] = {64, 60, 55, 48}, high[4] = {69, 65, 60, 53};
    assert_int_equal(pn_space_init(&s, 4, low, high, &info), PN_OK);
    const char *texts[] = {"mod12(w(1))", "mod12(diff(w(4,1)))", "order(w(4,3,2,1))",
                           "sort(mod12(w(1,2,3,4)))", "abs(diff(w(2,3)))"};
    built_set b;
    build_set(&b, &s, texts, 5);
    if (pn_deoverlap(b.prob, pn_feature_cells, &b.set, &info) != PN_OK)
        fail_msg("pn_deoverlap: %s", info.message);
    assert_int_equal(pn_problem_validate(b.prob, &info), PN_OK);

    /* brute force: the distinct cell tuples, and each group's column */
    const int64_t n = pn_space_size(&s);
    int32_t *tuples = malloc((size_t)n * 5 * sizeof *tuples);
    assert_non_null(tuples);
    int64_t distinct = 0;
    for (int64_t x = 0; x < n; ++x) {
        int p[4];
        assert_int_equal(pn_space_decode(&s, x, p, &info), PN_OK);
        int32_t *row = tuples + distinct * 5;
        for (int r = 0; r < 5; ++r)
            assert_int_equal(pn_feature_cell_of(b.t[r], p, &row[r], &info), PN_OK);
        int64_t g = 0;
        while (g < distinct && memcmp(tuples + g * 5, row, 5 * sizeof *row) != 0)
            g++;
        if (g == distinct)
            distinct++;
    }
    assert_true(b.prob->num_groups == distinct);
    /* groups follow first appearance, so group g's column is tuple g */
    for (int64_t g = 0; g < distinct; ++g)
        for (int r = 0; r < 5; ++r)
            assert_int_equal(b.prob->group_rows[g * 5 + r],
                             b.prob->rule_start[r] + tuples[g * 5 + r]);
    free(tuples);
    free_set(&b);
}

static double seconds(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void bench_set(const char *label, const char *const *texts)
{
    pn_space s;
    pn_space_default(&s);
    pn_error_info info;
    built_set b;
    const double t0 = seconds();
    build_set(&b, &s, texts, 16);
    const double t1 = seconds();
    const clock_t c1 = clock();
    if (pn_deoverlap(b.prob, pn_feature_cells, &b.set, &info) != PN_OK)
        fail_msg("pn_deoverlap: %s", info.message);
    const clock_t c2 = clock();
    const double t2 = seconds();
    assert_int_equal(pn_problem_validate(b.prob, &info), PN_OK);
    /* the cell source alone */
    int32_t *cells = malloc((1 << 14) * sizeof *cells);
    assert_non_null(cells);
    const int64_t n = pn_space_size(&s);
    int64_t sum = 0;
    for (int r = 0; r < 16; ++r)
        for (int64_t first = 0; first < n; first += 1 << 14) {
            const int64_t count = n - first < (1 << 14) ? n - first : (1 << 14);
            assert_int_equal(pn_feature_cells(&b.set, r, first, count, cells), 0);
            sum += cells[count - 1];
        }
    const double t3 = seconds();
    free(cells);
    printf("[ BENCH    ] %s: 16 features, n = %lld, m = %d: tables %.3f s, de-overlap %.3f s "
           "(cpu %.3f s, K' = %lld groups), cell source alone %.3f s (checksum %lld)\n",
           label, (long long)n, (int)b.prob->num_rows, t1 - t0, t2 - t1,
           (double)(c2 - c1) / CLOCKS_PER_SEC, (long long)b.prob->num_groups, t3 - t2,
           (long long)sum);
    free_set(&b);
}

/* Opt-in timing: PN_FEATURE_BENCH=1. */
static void test_deoverlap_default_space(void **state)
{
    (void)state;
    const char *bench = getenv("PN_FEATURE_BENCH");
    if (!bench || strcmp(bench, "1") != 0)
        skip();
    bench_set("harmonic", harmonic);
    bench_set("registral", registral);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_space_default),
        cmocka_unit_test(test_space_custom),
        cmocka_unit_test(test_windows),
        cmocka_unit_test(test_mod12),
        cmocka_unit_test(test_diff),
        cmocka_unit_test(test_rel),
        cmocka_unit_test(test_sort),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_abs),
        cmocka_unit_test(test_clamp),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_to_string),
        cmocka_unit_test(test_value_counts),
        cmocka_unit_test(test_cell_of_brute_force),
        cmocka_unit_test(test_row_sums),
        cmocka_unit_test(test_row_sums_per_run_bounds),
        cmocka_unit_test(test_row_sums_few_voices),
        cmocka_unit_test(test_cell_source),
        cmocka_unit_test(test_find_value),
        cmocka_unit_test(test_deoverlap_small),
        cmocka_unit_test(test_deoverlap_default_space),
    };
    const char *pattern = getenv("PN_TEST_FILTER");
    if (pattern && *pattern)
        cmocka_set_test_filter(pattern);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
