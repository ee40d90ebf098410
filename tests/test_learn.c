/* Tests of the rule set writer (pn_rule_set_write) and of learning
 * (pn_learn, docs/learning.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/learn.h"
#include "parnassus/rules.h"
#include "parnassus/sampler.h"
#include "parnassus/solver.h"

/* ------------------------------------------------------------------------ */
/* Helpers */

static pn_rule_set *parse_ok(const char *text, unsigned flags)
{
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_parse_ex("rules.json", text, strlen(text), flags, &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_non_null(rs);
    return rs;
}

/* Writes rs to memory: a malloc'ed, terminated text. */
static char *write_text(const pn_rule_set *rs, size_t *len)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_write(rs, f, "out.json", &info) != PN_OK)
        fail_msg("%s", info.message);
    long size = ftell(f);
    assert_true(size > 0);
    rewind(f);
    char *text = malloc((size_t)size + 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    text[size] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)size;
    return text;
}

/* Writes and parses back. */
static pn_rule_set *round_trip(const pn_rule_set *rs)
{
    size_t len = 0;
    char *text = write_text(rs, &len);
    pn_rule_set *back = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_parse("out.json", text, len, &back, &info) != PN_OK)
        fail_msg("%s\n%s", info.message, text);
    free(text);
    return back;
}

static void assert_same_text(const char *a, const char *b)
{
    if (!a || !b) {
        assert_true(a == b);
        return;
    }
    assert_string_equal(a, b);
}

static void assert_same_feature(const pn_feature *a, const pn_feature *b)
{
    char x[PN_FEATURE_TEXT_MAX], y[PN_FEATURE_TEXT_MAX];
    pn_feature_to_string(a, x, sizeof x);
    pn_feature_to_string(b, y, sizeof y);
    assert_string_equal(x, y);
}

/* Every field of two sets equal; numbers bit for bit. */
static void assert_same_set(const pn_rule_set *a, const pn_rule_set *b)
{
    assert_string_equal(a->name, b->name);
    assert_same_text(a->description, b->description);
    assert_int_equal(a->space.num_voices, b->space.num_voices);
    for (int v = 0; v < a->space.num_voices; ++v) {
        assert_int_equal(a->space.low[v], b->space.low[v]);
        assert_int_equal(a->space.high[v], b->space.high[v]);
    }
    assert_true(a->lambda_p == b->lambda_p);
    assert_int_equal(a->num_constraints, b->num_constraints);
    for (int32_t i = 0; i < a->num_constraints; ++i) {
        assert_string_equal(a->constraints[i].name, b->constraints[i].name);
        assert_int_equal(a->constraints[i].kind, b->constraints[i].kind);
        assert_int_equal(a->constraints[i].intervals, b->constraints[i].intervals);
    }
    assert_int_equal(a->num_rules, b->num_rules);
    for (int32_t r = 0; r < a->num_rules; ++r) {
        const pn_rule *x = &a->rules[r], *y = &b->rules[r];
        assert_string_equal(x->name, y->name);
        assert_same_text(x->description, y->description);
        assert_same_feature(x->feature, y->feature);
        const int32_t m = pn_feature_table_size(x->table);
        assert_int_equal(m, pn_feature_table_size(y->table));
        assert_memory_equal(x->target, y->target, (size_t)m * sizeof *x->target);
        assert_true((x->context == NULL) == (y->context == NULL));
        if (!x->context)
            continue;
        assert_int_equal(x->num_refinements, y->num_refinements);
        for (int32_t k = 0; k <= x->num_refinements; ++k) {
            const pn_rule_context *c = k == 0 ? x->context : &x->refinements[k - 1];
            const pn_rule_context *d = k == 0 ? y->context : &y->refinements[k - 1];
            assert_same_feature(c->feature, d->feature);
            assert_memory_equal(&c->smoothing, &d->smoothing, sizeof c->smoothing);
            assert_int_equal(c->num_rows, d->num_rows);
            if (c->num_rows == 0)
                continue;
            assert_memory_equal(c->cell, d->cell, (size_t)c->num_rows * sizeof *c->cell);
            for (int32_t j = 0; j < c->num_rows; ++j)
                assert_true(c->count[j] == d->count[j] ||
                            (isinf(c->count[j]) && isinf(d->count[j])));
            assert_memory_equal(c->row, d->row, (size_t)c->num_rows * (size_t)m * sizeof *c->row);
        }
    }
}

static int32_t cell_of(const pn_feature_table *t, const char *value)
{
    int32_t cell = -1;
    pn_error_info info;
    if (pn_feature_find_value(t, value, &cell, &info) != PN_OK)
        fail_msg("%s", info.message);
    return cell;
}

/* A corpus of malloc'ed pieces (pn_corpus_free frees it): `steps` holds
 * num_steps[i] * k pitches per piece, one piece after the other. */
static pn_corpus *make_corpus(int k, int num_pieces, const int *num_steps, const int *steps)
{
    pn_corpus *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->num_voices = k;
    c->num_pieces = num_pieces;
    c->pieces = calloc((size_t)num_pieces, sizeof *c->pieces);
    assert_non_null(c->pieces);
    const int *from = steps;
    for (int i = 0; i < num_pieces; ++i) {
        pn_piece *p = &c->pieces[i];
        p->name = malloc(32);
        assert_non_null(p->name);
        snprintf(p->name, 32, "piece[%d]", i);
        p->num_voices = k;
        p->num_steps = num_steps[i];
        p->pitch = malloc((size_t)num_steps[i] * (size_t)k + 1);
        assert_non_null(p->pitch);
        for (int j = 0; j < num_steps[i] * k; ++j)
            p->pitch[j] = (int8_t)from[j];
        from += num_steps[i] * k;
    }
    return c;
}

/* ------------------------------------------------------------------------ */
/* Writer */

static const char context_set[] =
    "{\"format\":\"parnassus-rules/1\",\"name\":\"ctx \\\"quoted\\\" \\\\ set\","
    "\"description\":\"Line one\\nline\\ttwo, \\\"quotes\\\", back\\\\slash, \\u00e9t\\u00e9 "
    "\\u266b \\u0001\","
    "\"space\":{\"ranges\":[[60,64],[48,52]]},\"rules\":["
    "{\"name\":\"upper\",\"feature\":\"w(1)\",\"context\":\"w(1)\",\"smoothing\":2.5,"
    "\"description\":\"a \\\"rule\\\" with \\\\ in it\","
    "\"targets\":{\"60\":0.4,\"62\":0.3,\"64\":0.3},"
    "\"contexts\":{\"64\":{\"count\":6,\"targets\":{\"62\":1}},"
    "\"60\":{\"count\":2,\"targets\":{\"62\":0.5,\"64\":0.5}},"
    "\"R\":{\"targets\":{\"60\":0.1,\"61\":0.2,\"R\":0.7}}}},"
    "{\"name\":\"interval\",\"feature\":\"mod12(diff(w(2,1)))\","
    "\"targets\":{\"0\":0.4,\"4\":0.3,\"R\":0.3}},"
    "{\"name\":\"pair\",\"feature\":\"sort(w(2,1))\",\"context\":\"mod12(w(2))\",\"smoothing\":0,"
    "\"targets\":{\"(48,60)\":1},"
    "\"contexts\":{\"0\":{\"count\":0,\"targets\":{\"(50,62)\":1}}}},"
    "{\"name\":\"no rows\",\"feature\":\"order(w(2,1))\",\"context\":\"w(2,1)\","
    "\"targets\":{\"(0,1)\":1}}]}";

static void test_write_round_trip(void **state)
{
    (void)state;
    pn_rule_set *rs = parse_ok(context_set, 0);
    /* numbers that need all 17 digits, tiny and huge ones */
    pn_rule *up = &rs->rules[0];
    const int32_t m = pn_feature_table_size(up->table);
    memset(up->target, 0, (size_t)m * sizeof *up->target);
    up->target[cell_of(up->table, "60")] = 1.0 / 3.0;
    up->target[cell_of(up->table, "61")] = 1e-300;
    up->target[cell_of(up->table, "63")] = 2.0 / 3.0 - 1e-300;
    up->target[cell_of(up->table, "R")] = 4.9406564584124654e-324; /* the least subnormal */
    /* the row of "64": 17 digits, within the format's bound 1e12 */
    up->context->count[1] = 1e11 / 7.0;

    pn_rule_set *back = round_trip(rs);
    assert_same_set(rs, back);
    assert_true(isinf(back->rules[0].context->count[2]));
    /* writing is deterministic and the text is a fixed point */
    char *t1 = write_text(rs, NULL), *t2 = write_text(back, NULL);
    assert_string_equal(t1, t2);
    /* ranges form for different ranges; only nonzero targets */
    assert_non_null(strstr(t1, "\"ranges\": [[60, 64], [48, 52]]"));
    assert_null(strstr(t1, "\"62\": 0,"));
    assert_null(strstr(t1, "\"voices\""));
    /* one listed context per line */
    assert_non_null(strstr(t1, "\n        \"60\": { \"count\": 2, \"targets\": { \"62\": 0.5, "
                               "\"64\": 0.5 } },\n"));
    /* a control byte is written as \u0001 */
    assert_non_null(strstr(t1, "\\u0001"));
    free(t1);
    free(t2);
    pn_rule_set_free(back);
    pn_rule_set_free(rs);
}

/* A space whose voices share one range is written as voices/low/high; a
 * set without descriptions has none after the round trip. */
static void test_write_shared_range(void **state)
{
    (void)state;
    pn_rule_set *rs = parse_ok("{\"format\":\"parnassus-rules/1\",\"name\":\"s\","
                               "\"space\":{\"voices\":3,\"low\":40,\"high\":45},\"rules\":["
                               "{\"name\":\"a\",\"feature\":\"sort(mod12(w(1,2,3)))\","
                               "\"targets\":{\"(4,4,5)\":0.25,\"(4,5,R)\":0.75}}]}",
                               0);
    char *text = write_text(rs, NULL);
    assert_non_null(strstr(text, "\"space\": { \"voices\": 3, \"low\": 40, \"high\": 45 }"));
    pn_rule_set *back = round_trip(rs);
    assert_same_set(rs, back);
    assert_null(back->description);
    assert_null(back->rules[0].description);
    free(text);
    pn_rule_set_free(back);
    pn_rule_set_free(rs);
}

/* What the format cannot carry is refused before anything is written. */
static void test_write_errors(void **state)
{
    (void)state;
    pn_rule_set *rs = parse_ok(context_set, 0);
    FILE *f = tmpfile();
    assert_non_null(f);
    pn_error_info info = {PN_OK, ""};

    char *saved = rs->rules[1].name;
    char bad_utf8[] = "ab\xff";
    rs->rules[1].name = bad_utf8;
    assert_int_equal(pn_rule_set_write(rs, f, "out.json", &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "out.json: rules[1].name is not valid UTF-8"));
    rs->rules[1].name = saved;

    const double t = rs->rules[1].target[0];
    rs->rules[1].target[0] = NAN;
    assert_int_equal(pn_rule_set_write(rs, f, "out.json", &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "rules[1]: a target is not a finite number"));
    rs->rules[1].target[0] = t;

    rs->rules[0].context->count[0] = NAN;
    assert_int_equal(pn_rule_set_write(rs, f, "out.json", &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "rules[0]: a context count"));
    /* what the reader would refuse is not written: counts and smoothing
     * above 1e12 */
    rs->rules[0].context->count[0] = 1e300 / 7.0;
    assert_int_equal(pn_rule_set_write(rs, f, "out.json", &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "rules[0]: a context count is not a number in [0, 1e12]"));
    rs->rules[0].context->count[0] = 1.0;
    rs->rules[0].context->smoothing = 2e12;
    assert_int_equal(pn_rule_set_write(rs, f, "out.json", &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "rules[0]: the smoothing is not a number in [0, 1e12]"));
    assert_int_equal(ftell(f), 0);
    fclose(f);
    pn_rule_set_free(rs);
}

/* ------------------------------------------------------------------------ */
/* Learning by hand */

/* Two voices, [60,64] x [48,52]. Already has targets and contexts, which
 * learning replaces. */
static const char hand_set[] =
    "{\"format\":\"parnassus-rules/1\",\"name\":\"hand\","
    "\"space\":{\"ranges\":[[60,64],[48,52]]},\"rules\":["
    "{\"name\":\"upper\",\"feature\":\"w(1)\",\"context\":\"w(1)\",\"smoothing\":2,"
    "\"targets\":{\"61\":1},\"contexts\":{\"61\":{\"count\":9,\"targets\":{\"63\":1}},"
    "\"63\":{\"targets\":{\"61\":1}}}},"
    "{\"name\":\"interval\",\"feature\":\"mod12(diff(w(2,1)))\",\"targets\":{\"4\":1}},"
    "{\"name\":\"bass-pc\",\"feature\":\"mod12(w(2))\",\"context\":\"mod12(w(2))\"}]}";

/* piece 0: (60,48) (62,50) (64,52) (62,50)
 * piece 1: (60,48) (70,48) (60,48) (62,R)   -- 70 is outside the space */
static const int hand_steps[] = {60, 48, 62, 50, 64, 52, 62, 50, 60, 48, 70, 48, 60, 48, 62, -1};
static const int hand_lengths[] = {4, 4};

static double target_at(const pn_rule *r, const char *value)
{
    return r->target[cell_of(r->table, value)];
}

static double row_at(const pn_rule *r, int32_t row, const char *value)
{
    const int32_t m = pn_feature_table_size(r->table);
    return r->context->row[(size_t)row * (size_t)m + (size_t)cell_of(r->table, value)];
}

static void test_learn_by_hand(void **state)
{
    (void)state;
    pn_rule_set *rs = parse_ok(hand_set, PN_RULES_TARGETS_OPTIONAL);
    pn_corpus *corpus = make_corpus(2, 2, hand_lengths, hand_steps);
    pn_learn_report rep;
    pn_error_info info = {PN_OK, ""};
    if (pn_learn(rs, corpus, NULL, &rep, &info) != PN_OK)
        fail_msg("%s", info.message);

    assert_int_equal(rep.num_pieces, 2);
    assert_int_equal(rep.pieces_used, 2);
    assert_int_equal(rep.steps_used, 7);
    assert_int_equal(rep.steps_skipped, 1);
    assert_int_equal(rep.transitions_used, 4); /* 3 in piece 0, (60,48) -> (62,R) in piece 1 */
    assert_int_equal(rep.transitions_skipped, 2);
    assert_true(rep.total_weight == 7.0);
    assert_int_equal(rep.skip_piece, 1);
    assert_int_equal(rep.skip_step, 1);
    assert_int_equal(rep.skip_voice, 0);
    assert_int_equal(rep.skip_pitch, 70);
    assert_int_equal(rep.contexts_listed, 3 + 3);
    assert_int_equal(rep.contexts_dropped, 0);

    /* upper: 60 three times, 62 three times, 64 once; nothing else */
    const pn_rule *up = &rs->rules[0];
    assert_true(target_at(up, "60") == 3.0 / 7.0);
    assert_true(target_at(up, "62") == 3.0 / 7.0);
    assert_true(target_at(up, "64") == 1.0 / 7.0);
    assert_true(target_at(up, "61") == 0.0 && target_at(up, "R") == 0.0);
    /* its contexts: after 60 -> 62 twice (once per piece, never across
     * them); after 62 -> 64; after 64 -> 62. The old rows are gone. */
    const pn_rule_context *c = up->context;
    assert_true(c->smoothing == 2.0);
    assert_int_equal(c->num_rows, 3);
    assert_int_equal(c->cell[0], cell_of(c->table, "60"));
    assert_int_equal(c->cell[1], cell_of(c->table, "62"));
    assert_int_equal(c->cell[2], cell_of(c->table, "64"));
    assert_true(c->count[0] == 2.0 && c->count[1] == 1.0 && c->count[2] == 1.0);
    assert_true(row_at(up, 0, "62") == 1.0);
    assert_true(row_at(up, 1, "64") == 1.0);
    assert_true(row_at(up, 2, "62") == 1.0);

    /* interval soprano - bass mod 12: 0 six times, R once */
    const pn_rule *iv = &rs->rules[1];
    assert_true(target_at(iv, "0") == 6.0 / 7.0);
    assert_true(target_at(iv, "R") == 1.0 / 7.0);
    assert_true(target_at(iv, "4") == 0.0);

    /* bass pc (uniform before: a feature file) given the previous bass pc:
     * 0 -> 2, 2 -> 4, 4 -> 2 in piece 0; 0 -> R in piece 1 */
    const pn_rule *bp = &rs->rules[2];
    assert_true(target_at(bp, "0") == 3.0 / 7.0);
    assert_true(target_at(bp, "2") == 2.0 / 7.0);
    assert_true(target_at(bp, "4") == 1.0 / 7.0);
    assert_true(target_at(bp, "R") == 1.0 / 7.0);
    assert_true(target_at(bp, "1") == 0.0);
    c = bp->context;
    assert_true(c->smoothing == PN_RULES_DEFAULT_SMOOTHING);
    assert_int_equal(c->num_rows, 3);
    assert_int_equal(c->cell[0], cell_of(c->table, "0"));
    assert_true(c->count[0] == 2.0);
    assert_true(row_at(bp, 0, "2") == 0.5 && row_at(bp, 0, "R") == 0.5);
    assert_int_equal(c->cell[1], cell_of(c->table, "2"));
    assert_true(c->count[1] == 1.0 && row_at(bp, 1, "4") == 1.0);
    assert_int_equal(c->cell[2], cell_of(c->table, "4"));
    assert_true(c->count[2] == 1.0 && row_at(bp, 2, "2") == 1.0);

    /* the targets of the next step: after (60, 48), the upper voice gets
     * (2 * row + 2 * back-off) / 4 */
    double b[64];
    const int previous[2] = {60, 48};
    assert_int_equal(pn_rule_set_targets(rs, previous, b, &info), PN_OK);
    assert_true(fabs(b[cell_of(up->table, "62")] - (2.0 * 1.0 + 2.0 * 3.0 / 7.0) / 4.0) < 1e-15);

    /* the learned set survives writing */
    pn_rule_set *back = round_trip(rs);
    assert_same_set(rs, back);
    pn_rule_set_free(back);
    pn_corpus_free(corpus);
    pn_rule_set_free(rs);
}

/* A rule with a refinement: each level counts the same transitions by its
 * own context feature; the learned set, its constraints and lambda_p
 * survive writing. */
static void test_learn_refinements(void **state)
{
    (void)state;
    static const char set[] =
        "{\"format\":\"parnassus-rules/1\",\"name\":\"hand\",\"lambda_p\":2e-5,"
        "\"space\":{\"ranges\":[[60,64],[48,52]]},\"rules\":["
        "{\"name\":\"upper\",\"feature\":\"w(1)\",\"context\":\"w(2)\",\"smoothing\":2,"
        "\"refinements\":[{\"context\":\"w(1,2)\",\"smoothing\":1}]}],"
        "\"constraints\":[{\"name\":\"p\",\"kind\":\"parallel\"}]}";
    pn_rule_set *rs = parse_ok(set, PN_RULES_TARGETS_OPTIONAL);
    pn_corpus *corpus = make_corpus(2, 2, hand_lengths, hand_steps);
    pn_learn_report rep;
    pn_error_info info = {PN_OK, ""};
    if (pn_learn(rs, corpus, NULL, &rep, &info) != PN_OK)
        fail_msg("%s", info.message);
    const pn_rule *up = &rs->rules[0];
    /* transitions: (60,48)->62, (62,50)->64, (64,52)->62 in piece 0;
     * (60,48)->62 in piece 1. Bass contexts 48 (twice), 50, 52. */
    const pn_rule_context *c = up->context, *f = &up->refinements[0];
    assert_int_equal(c->num_rows, 3);
    assert_true(c->count[0] == 2.0 && c->count[1] == 1.0 && c->count[2] == 1.0);
    assert_true(row_at(up, 0, "62") == 1.0);
    /* the whole previous sonority: (60,48) twice, (62,50), (64,52) */
    assert_int_equal(f->num_rows, 3);
    assert_int_equal(f->cell[0], cell_of(f->table, "(60,48)"));
    assert_true(f->count[0] == 2.0 && f->count[1] == 1.0 && f->count[2] == 1.0);
    const int32_t m = pn_feature_table_size(up->table);
    assert_true(f->row[1 * (size_t)m + (size_t)cell_of(up->table, "64")] == 1.0);
    assert_int_equal(rep.contexts_listed, 6);
    pn_rule_set *back = round_trip(rs);
    assert_same_set(rs, back);
    assert_true(back->lambda_p == 2e-5);
    pn_rule_set_free(back);
    pn_corpus_free(corpus);
    pn_rule_set_free(rs);
}

static void test_learn_settings(void **state)
{
    (void)state;
    pn_corpus *corpus = make_corpus(2, 2, hand_lengths, hand_steps);
    pn_learn_settings s;
    pn_learn_report rep;
    pn_error_info info = {PN_OK, ""};

    /* contexts seen fewer than twice are not listed */
    pn_rule_set *rs = parse_ok(hand_set, PN_RULES_TARGETS_OPTIONAL);
    pn_learn_settings_default(&s);
    assert_true(s.min_context_count == 1.0 && s.contexts == 1 && s.by_duration == 0);
    s.min_context_count = 2.0;
    assert_int_equal(pn_learn(rs, corpus, &s, &rep, &info), PN_OK);
    assert_int_equal(rs->rules[0].context->num_rows, 1);
    assert_int_equal(rs->rules[0].context->cell[0], cell_of(rs->rules[0].context->table, "60"));
    assert_int_equal(rep.contexts_listed, 2);
    assert_int_equal(rep.contexts_dropped, 4);

    /* no contexts at all: the old rows are dropped too */
    s.min_context_count = 1.0;
    s.contexts = 0;
    assert_int_equal(pn_learn(rs, corpus, &s, &rep, &info), PN_OK);
    assert_int_equal(rs->rules[0].context->num_rows, 0);
    assert_int_equal(rs->rules[2].context->num_rows, 0);
    assert_true(target_at(&rs->rules[0], "60") == 3.0 / 7.0);

    /* by duration: (60,48) lasts 5 in piece 0 */
    int32_t duration[4] = {5, 1, 1, 1};
    corpus->pieces[0].duration = malloc(sizeof duration);
    assert_non_null(corpus->pieces[0].duration);
    memcpy(corpus->pieces[0].duration, duration, sizeof duration);
    s.contexts = 1;
    s.by_duration = 1;
    assert_int_equal(pn_learn(rs, corpus, &s, &rep, &info), PN_OK);
    assert_true(rep.total_weight == 11.0);
    assert_true(target_at(&rs->rules[0], "60") == 7.0 / 11.0);

    /* bad settings */
    s.min_context_count = -1.0;
    assert_int_equal(pn_learn(rs, corpus, &s, &rep, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "min_context_count"));
    pn_rule_set_free(rs);
    pn_corpus_free(corpus);
}

static void test_learn_errors(void **state)
{
    (void)state;
    pn_rule_set *rs = parse_ok(hand_set, PN_RULES_TARGETS_OPTIONAL);
    const double *target = rs->rules[0].target;
    const double before = target[cell_of(rs->rules[0].table, "61")];
    pn_error_info info = {PN_OK, ""};

    /* voices differ */
    const int three[] = {60, 55, 48};
    const int one_step[] = {1};
    pn_corpus *corpus = make_corpus(3, 1, one_step, three);
    assert_int_equal(pn_learn(rs, corpus, NULL, NULL, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "the corpus has 3 voices but the rule set's space has 2"));
    pn_corpus_free(corpus);

    /* nothing inside the space: no feature observed; rs is unchanged */
    const int outside[] = {60, 48, 60, 47, 70, 50};
    const int lengths[] = {1, 2};
    corpus = make_corpus(2, 2, lengths, outside);
    corpus->pieces[0].num_steps = 0; /* an empty piece */
    pn_learn_report rep;
    assert_int_equal(pn_learn(rs, corpus, NULL, &rep, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "no rule's feature was observed"));
    assert_non_null(strstr(info.message, "piece[1] step 0 voice 2 pitch 47 outside 48..52"));
    assert_int_equal(rep.steps_skipped, 2);
    assert_int_equal(rep.transitions_skipped, 1);
    assert_true(rs->rules[0].target == target);
    assert_true(target[cell_of(rs->rules[0].table, "61")] == before);
    assert_int_equal(rs->rules[0].context->num_rows, 2);

    /* an empty corpus */
    corpus->num_pieces = 1;
    assert_int_equal(pn_learn(rs, corpus, NULL, NULL, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "the corpus has no sonorities"));
    corpus->num_pieces = 2;
    pn_corpus_free(corpus);
    pn_rule_set_free(rs);
}

/* ------------------------------------------------------------------------ */
/* The learning round trip: realize a rule set, draw from the realization,
 * learn from the draws, and find the realization's A q again. */

static const char small_set[] =
    "{\"format\":\"parnassus-rules/1\",\"name\":\"small\","
    "\"space\":{\"voices\":3,\"low\":60,\"high\":65},\"rules\":["
    "{\"name\":\"top\",\"feature\":\"w(1)\",\"context\":\"w(1)\","
    "\"targets\":{\"60\":0.1,\"62\":0.3,\"64\":0.4,\"65\":0.2}},"
    "{\"name\":\"pcs\",\"feature\":\"sort(mod12(w(1,2,3)))\","
    "\"targets\":{\"(0,4,5)\":0.5,\"(0,2,4)\":0.25,\"(1,3,5)\":0.25}},"
    "{\"name\":\"outer\",\"feature\":\"mod12(diff(w(3,1)))\","
    "\"targets\":{\"4\":0.5,\"5\":0.3,\"0\":0.2}},"
    "{\"name\":\"order\",\"feature\":\"order(w(3,2,1))\",\"context\":\"w(3)\","
    "\"targets\":{\"(0,1,2)\":0.9,\"(0,2,1)\":0.1}}]}";

static void test_learning_round_trip(void **state)
{
    (void)state;
    pn_rule_set *rs = parse_ok(small_set, 0);
    pn_error_info info = {PN_OK, ""};
    const int64_t n = pn_space_size(&rs->space);
    assert_int_equal(n, 7 * 7 * 7);
    int32_t *group_of = malloc((size_t)n * sizeof *group_of);
    assert_non_null(group_of);
    pn_problem *prob = NULL;
    if (pn_rule_set_build_problem(rs, &prob, group_of, &info) != PN_OK)
        fail_msg("%s", info.message);

    pn_settings settings;
    pn_settings_default(&settings);
    pn_solver *solver = NULL;
    if (pn_solver_create(prob, &settings, &solver, &info) != PN_OK)
        fail_msg("%s", info.message);
    pn_info sinfo;
    if (pn_solver_solve(solver, PN_START_COLD, &sinfo, &info) != PN_OK)
        fail_msg("%s", info.message);
    const double *y = pn_solver_y(solver);

    pn_group_index *index = NULL;
    pn_sampler *sampler = NULL;
    if (pn_group_index_create(group_of, n, prob->num_groups, &index, &info) != PN_OK ||
        pn_sampler_create(prob, index, &sampler, &info) != PN_OK ||
        pn_sampler_set_q(sampler, pn_solver_q(solver), &info) != PN_OK)
        fail_msg("%s", info.message);

    /* N draws as 10 pieces (transitions never cross pieces) */
    enum { PIECES = 10, PER_PIECE = 20000, N = PIECES * PER_PIECE };
    int *steps = malloc((size_t)N * 3 * sizeof *steps);
    assert_non_null(steps);
    pn_rng rng;
    pn_rng_seed(&rng, 2017);
    for (int i = 0; i < N; ++i) {
        const int64_t x = pn_sampler_draw(sampler, &rng);
        assert_true(x >= 0 && x < n);
        assert_int_equal(pn_space_decode(&rs->space, x, steps + 3 * i, &info), PN_OK);
    }
    int lengths[PIECES];
    for (int i = 0; i < PIECES; ++i)
        lengths[i] = PER_PIECE;
    pn_corpus *corpus = make_corpus(3, PIECES, lengths, steps);

    pn_rule_set *learned = parse_ok(small_set, 0);
    pn_learn_report rep;
    if (pn_learn(learned, corpus, NULL, &rep, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_int_equal(rep.steps_used, N);
    assert_int_equal(rep.transitions_used, N - PIECES);

    /* every learned target within 5 standard deviations of A q; the draws
     * are independent, so every context row seen often estimates A q too */
    int32_t row = 0;
    for (int32_t r = 0; r < learned->num_rules; ++r) {
        const pn_rule *rule = &learned->rules[r];
        const int32_t m = pn_feature_table_size(rule->table);
        for (int32_t i = 0; i < m; ++i) {
            const double p = y[row + i];
            const double sd = sqrt(fmax(p * (1.0 - p), 0.0) / (double)N);
            if (!(fabs(rule->target[i] - p) <= 5.0 * sd + 1e-9))
                fail_msg("rule %s cell %d: learned %.6f, realized %.6f (sd %.2g)", rule->name,
                         (int)i, rule->target[i], p, sd);
        }
        const pn_rule_context *c = rule->context;
        if (c) {
            assert_true(c->num_rows > 0);
            for (int32_t j = 0; j < c->num_rows; ++j) {
                const double count = c->count[j];
                if (count < 1000.0) /* too few for the normal approximation */
                    continue;
                for (int32_t i = 0; i < m; ++i) {
                    const double p = y[row + i];
                    const double sd = sqrt(fmax(p * (1.0 - p), 0.0) / count);
                    const double got = c->row[(size_t)j * (size_t)m + (size_t)i];
                    if (!(fabs(got - p) <= 5.0 * sd + 1e-9))
                        fail_msg("rule %s context %d cell %d: learned %.6f, realized %.6f",
                                 rule->name, (int)j, (int)i, got, p);
                }
            }
        }
        row += m;
    }

    free(steps);
    pn_corpus_free(corpus);
    pn_rule_set_free(learned);
    pn_sampler_free(sampler);
    pn_group_index_free(index);
    pn_solver_free(solver);
    pn_problem_free(prob);
    free(group_of);
    pn_rule_set_free(rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_round_trip),  cmocka_unit_test(test_write_shared_range),
        cmocka_unit_test(test_write_errors),      cmocka_unit_test(test_learn_by_hand),
        cmocka_unit_test(test_learn_refinements), cmocka_unit_test(test_learn_settings),
        cmocka_unit_test(test_learn_errors),      cmocka_unit_test(test_learning_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
