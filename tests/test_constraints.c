/* Tests of rule-set constraints (docs/rule-format.md, "Constraints"):
 * reading them and their errors, the moves each kind forbids and allows
 * (checked by hand), the values "known" keeps to, the writer's round trip,
 * and draws conditioned on them (a generator's draws never break a
 * constraint its realization could keep). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/generate.h"
#include "parnassus/rules.h"

/* A 4-voice set on a small space with the given constraints (a JSON array
 * body, or NULL for none). */
static char *set_text(const char *constraints)
{
    static const char head[] = "{\"format\":\"parnassus-rules/1\",\"name\":\"t\","
                               "\"space\":{\"ranges\":[[67,72],[60,67],[55,62],[48,55]]},"
                               "\"rules\":[{\"name\":\"bass\",\"feature\":\"mod12(w(4))\","
                               "\"targets\":{\"0\":0.5,\"7\":0.5}}]";
    const size_t size = sizeof head + (constraints ? strlen(constraints) : 0) + 64;
    char *text = malloc(size);
    assert_non_null(text);
    if (constraints)
        snprintf(text, size, "%s,\"constraints\":[%s]}", head, constraints);
    else
        snprintf(text, size, "%s}", head);
    return text;
}

static pn_rule_set *parse_ok(const char *constraints)
{
    char *text = set_text(constraints);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_parse("rules.json", text, strlen(text), &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    free(text);
    return rs;
}

/* Expects PN_ERR_PARSE with a message holding both fragments. */
static void parse_bad(const char *constraints, const char *frag1, const char *frag2)
{
    char *text = set_text(constraints);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    const pn_error err = pn_rule_set_parse("rules.json", text, strlen(text), &rs, &info);
    free(text);
    if (err != PN_ERR_PARSE)
        fail_msg("error %d for %s: %s", (int)err, constraints, info.message);
    assert_null(rs);
    if (!strstr(info.message, frag1) || (frag2 && !strstr(info.message, frag2)))
        fail_msg("message \"%s\" lacks \"%s\" / \"%s\"", info.message, frag1, frag2 ? frag2 : "");
}

/* Soprano, alto, tenor, bass. */
static int allows(const pn_rule_set *rs, int s0, int a0, int t0, int b0, int s1, int a1, int t1,
                  int b1)
{
    const int before[4] = {s0, a0, t0, b0}, after[4] = {s1, a1, t1, b1};
    return pn_rule_set_allows(rs, before, after);
}

static void test_parallel_moves(void **state)
{
    (void)state;
    pn_rule_set *rs = parse_ok("{\"name\":\"p\",\"kind\":\"parallel\"}");
    assert_int_equal(rs->num_constraints, 1);
    const pn_constraint *c = &rs->constraints[0];
    assert_string_equal(c->name, "p");
    assert_int_equal(c->kind, PN_CONSTRAINT_PARALLEL);
    assert_int_equal(c->intervals,
                     (1u << 0) | (1u << 7)); /* the default: unisons/octaves, fifths */
    assert_int_equal(c->num_pairs, 6);       /* every pair */
    assert_int_equal(c->pairs_given, 0);

    /* C major to D minor with soprano and bass a twelfth apart both times
     * and moving up: parallel fifths (compound) between the outer voices */
    assert_false(allows(rs, 67, 64, 60, 48, 69, 65, 62, 50));
    /* the same chords with the soprano moving down: contrary motion */
    assert_true(allows(rs, 67, 64, 60, 48, 65, 62, 57, 50));
    /* octaves between alto and bass, both moving up a step */
    assert_false(allows(rs, 72, 60, 55, 48, 71, 62, 55, 50));
    /* the same chord again: the upper voice does not move */
    assert_true(allows(rs, 67, 64, 60, 48, 67, 64, 60, 48));
    /* a fifth becoming a twelfth is not the same exact interval */
    assert_true(allows(rs, 67, 64, 64, 60, 69, 65, 62, 50));
    /* the lower voice moves, the upper stays: the interval changes */
    assert_true(allows(rs, 67, 64, 60, 48, 67, 64, 60, 50));
    /* octaves between the outer voices only; a rest on either side leaves
     * no motion to judge */
    assert_false(allows(rs, 72, 67, 64, 48, 74, 65, 64, 50));
    assert_true(allows(rs, 72, 67, 64, -1, 74, 65, 64, 50));
    assert_true(allows(rs, 72, 67, 64, 48, 74, 65, 64, -1));
    /* the first step, and thirds in parallel */
    const int x[4] = {69, 65, 62, 50};
    assert_true(pn_rule_set_allows(rs, NULL, x));
    assert_true(allows(rs, 67, 64, 60, 48, 69, 65, 60, 52)); /* s-b: 19 -> 17 */
    assert_true(
        allows(rs, 64, 60, 57, 48, 65, 62, 59, 48)); /* upper voices in thirds over a held bass */
    pn_rule_set_free(rs);

    /* only fifths, only the outer pair */
    rs = parse_ok("{\"name\":\"p\",\"kind\":\"parallel\",\"intervals\":[7],\"voices\":[[1,4]]}");
    assert_int_equal(rs->constraints[0].num_pairs, 1);
    assert_false(allows(rs, 67, 64, 60, 48, 69, 65, 62, 50));
    assert_true(allows(rs, 72, 60, 55, 48, 71, 62, 55, 50)); /* alto-bass octaves now pass */
    pn_rule_set_free(rs);
}

static void test_hidden_moves(void **state)
{
    (void)state;
    pn_rule_set *rs = parse_ok("{\"name\":\"h\",\"kind\":\"hidden\"}");
    const pn_constraint *c = &rs->constraints[0];
    assert_int_equal(c->num_pairs, 1); /* the outer voices by default */
    assert_int_equal(c->pair[0][0], 0);
    assert_int_equal(c->pair[0][1], 3);
    assert_int_equal(c->leap, 2);
    /* soprano leaps up a fourth to an octave over a bass rising a step: hidden octaves */
    assert_false(allows(rs, 67, 64, 60, 57, 72, 64, 60, 60));
    /* the soprano moves by step into the octave: allowed */
    assert_true(allows(rs, 71, 64, 60, 55, 72, 64, 60, 60));
    /* contrary motion into the octave */
    assert_true(allows(rs, 67, 64, 60, 62, 72, 64, 60, 60));
    /* similar motion into a third */
    assert_true(allows(rs, 67, 64, 60, 57, 72, 64, 60, 58));
    pn_rule_set_free(rs);

    rs = parse_ok("{\"name\":\"h\",\"kind\":\"hidden\",\"leap\":5}");
    assert_true(allows(rs, 67, 64, 60, 57, 72, 64, 60, 60)); /* a fourth is not above 5 */
    pn_rule_set_free(rs);
}

/* "known": the next sonority's value of the named rule is one its targets
 * give mass, at the first step as after one. */
static void test_known_values(void **state)
{
    (void)state;
    pn_rule_set *rs = parse_ok("{\"name\":\"k\",\"kind\":\"known\",\"rule\":\"bass\"}");
    const pn_constraint *c = &rs->constraints[0];
    assert_int_equal(c->kind, PN_CONSTRAINT_KNOWN);
    assert_int_equal(c->rule, 0);
    assert_int_equal(c->num_pairs, 0);
    assert_string_equal(pn_constraint_kind_name(c->kind), "known");
    const int on_c[4] = {67, 64, 60, 48}, on_g[4] = {67, 62, 59, 55}, on_d[4] = {69, 65, 62, 50};
    const int rest[4] = {67, 64, 60, -1};
    assert_true(pn_rule_set_allows(rs, NULL, on_c)); /* the bass rule's targets: C and G */
    assert_true(pn_rule_set_allows(rs, NULL, on_g));
    assert_false(pn_rule_set_allows(rs, NULL, on_d)); /* D: target 0, at the first step too */
    assert_false(pn_rule_set_allows(rs, on_c, on_d));
    assert_false(pn_rule_set_allows(rs, NULL, rest)); /* a rest is a value with target 0 */
    assert_true(pn_constraint_holds(rs, c, on_g, on_c));
    /* after the targets change, the constraint follows them (learning
     * replaces a rule's targets) */
    int32_t cell_c, cell_d;
    assert_int_equal(pn_feature_cell_of(rs->rules[0].table, on_c, &cell_c, NULL), PN_OK);
    assert_int_equal(pn_feature_cell_of(rs->rules[0].table, on_d, &cell_d, NULL), PN_OK);
    rs->rules[0].target[cell_c] = 0.0;
    rs->rules[0].target[cell_d] = 0.5;
    assert_true(pn_rule_set_allows(rs, NULL, on_d));
    assert_false(pn_rule_set_allows(rs, NULL, on_c));
    pn_rule_set_free(rs);

    /* beside constraints on the move, each is checked */
    rs = parse_ok("{\"name\":\"p\",\"kind\":\"parallel\"},"
                  "{\"name\":\"k\",\"kind\":\"known\",\"rule\":\"bass\"}");
    assert_int_equal(rs->constraints[0].rule, -1);
    assert_true(allows(rs, 67, 64, 60, 48, 67, 62, 59, 55));  /* C to G, no parallels */
    assert_false(allows(rs, 67, 64, 60, 48, 69, 65, 62, 50)); /* both broken */
    assert_false(allows(rs, 67, 64, 60, 48, 65, 62, 57, 50)); /* the bass on D */
    assert_false(allows(rs, 67, 64, 55, 48, 67, 65, 62, 55)); /* fifths, tenor and bass */
    pn_rule_set_free(rs);
}

static void test_errors(void **state)
{
    (void)state;
    parse_bad("{\"kind\":\"parallel\"}", "constraints[0]: missing field \"name\"", NULL);
    parse_bad("{\"name\":\"p\"}", "constraints[0]: missing field \"kind\"", NULL);
    parse_bad("{\"name\":\"p\",\"kind\":\"oblique\"}", "constraints[0].kind",
              "unknown kind \"oblique\"");
    parse_bad("{\"name\":\"p\",\"kind\":3}", "constraints[0].kind", "expected a constraint kind");
    parse_bad("{\"name\":\"p\",\"kind\":\"parallel\",\"weight\":1}", "constraints[0]",
              "unknown field \"weight\"");
    parse_bad("{\"name\":\"p\",\"kind\":\"parallel\",\"intervals\":[]}", "constraints[0].intervals",
              "non-empty array");
    parse_bad("{\"name\":\"p\",\"kind\":\"parallel\",\"intervals\":[12]}",
              "constraints[0].intervals[0]", "must be 0..11, got 12");
    parse_bad("{\"name\":\"p\",\"kind\":\"parallel\",\"intervals\":[7,7]}",
              "constraints[0].intervals[1]", "listed twice");
    parse_bad("{\"name\":\"p\",\"kind\":\"parallel\",\"voices\":[[1,5]]}",
              "constraints[0].voices[0][1]", "must be 1..4, got 5");
    parse_bad("{\"name\":\"p\",\"kind\":\"parallel\",\"voices\":[[2,2]]}",
              "constraints[0].voices[0]", "paired with itself");
    parse_bad("{\"name\":\"p\",\"kind\":\"parallel\",\"voices\":[[1,2],[2,1]]}",
              "constraints[0].voices[1]", "listed twice");
    parse_bad("{\"name\":\"p\",\"kind\":\"parallel\",\"voices\":[1]}", "constraints[0].voices[0]",
              "[upper, lower] pair");
    parse_bad("{\"name\":\"p\",\"kind\":\"parallel\",\"leap\":3}", "constraints[0].leap",
              "only a \"hidden\" constraint");
    parse_bad("{\"name\":\"p\",\"kind\":\"hidden\",\"leap\":-1}", "constraints[0].leap",
              "must be 0..127");
    parse_bad("{\"name\":\"p\",\"kind\":\"parallel\"},{\"name\":\"p\",\"kind\":\"hidden\"}",
              "constraints[1].name", "duplicate constraint name \"p\"");
    parse_bad("{\"name\":\"p\",\"kind\":\"parallel\",\"description\":1}",
              "constraints[0].description", "expected a string");
    parse_bad("7", "constraints[0]", "expected a constraint object");
    parse_bad("{\"name\":\"k\",\"kind\":\"known\"}", "constraints[0]", "missing field \"rule\"");
    parse_bad("{\"name\":\"k\",\"kind\":\"known\",\"rule\":\"tenor\"}", "constraints[0].rule",
              "no rule of the set is named \"tenor\"");
    parse_bad("{\"name\":\"k\",\"kind\":\"known\",\"rule\":1}", "constraints[0].rule",
              "expected the name of a rule");
    parse_bad("{\"name\":\"k\",\"kind\":\"known\",\"rule\":\"bass\",\"intervals\":[7]}",
              "constraints[0].intervals", "a \"known\" constraint does not take");
    parse_bad("{\"name\":\"k\",\"kind\":\"known\",\"rule\":\"bass\",\"voices\":[[1,4]]}",
              "constraints[0].voices", "a \"known\" constraint does not take");
    parse_bad("{\"name\":\"p\",\"kind\":\"parallel\",\"rule\":\"bass\"}", "constraints[0].rule",
              "only a \"known\" constraint");

    /* "constraints" that is not an array */
    const char *bad = "{\"format\":\"parnassus-rules/1\",\"name\":\"t\",\"rules\":[{\"name\":\"a\","
                      "\"feature\":\"mod12(w(1))\",\"targets\":{\"0\":1}}],\"constraints\":{}}";
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_rule_set_parse("rules.json", bad, strlen(bad), &rs, &info), PN_ERR_PARSE);
    assert_non_null(strstr(info.message, "rules.json: constraints: expected an array"));
}

/* Writes a set and reads it back. */
static pn_rule_set *round_trip(const pn_rule_set *rs, char **out_text)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_write(rs, f, "out.json", &info) != PN_OK)
        fail_msg("%s", info.message);
    const long size = ftell(f);
    rewind(f);
    char *text = calloc((size_t)size + 1, 1);
    assert_non_null(text);
    assert_int_equal(fread(text, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    pn_rule_set *back = NULL;
    if (pn_rule_set_parse("out.json", text, (size_t)size, &back, &info) != PN_OK)
        fail_msg("%s\n%s", info.message, text);
    *out_text = text;
    return back;
}

static void test_write_round_trip(void **state)
{
    (void)state;
    pn_rule_set *rs =
        parse_ok("{\"name\":\"no-parallels\",\"kind\":\"parallel\",\"intervals\":[0,7],"
                 "\"description\":\"No \\\"parallel\\\" fifths.\"},"
                 "{\"name\":\"outer\",\"kind\":\"hidden\",\"leap\":4,\"voices\":[[1,4],[2,4]]},"
                 "{\"name\":\"known-bass\",\"kind\":\"known\",\"rule\":\"bass\"}");
    char *text = NULL;
    pn_rule_set *back = round_trip(rs, &text);
    assert_int_equal(back->num_constraints, 3);
    assert_int_equal(back->constraints[2].kind, PN_CONSTRAINT_KNOWN);
    assert_non_null(strstr(text, "\"kind\": \"known\", \"rule\": \"bass\""));
    for (int i = 0; i < 3; ++i) {
        assert_int_equal(rs->constraints[i].rule, back->constraints[i].rule);
        const pn_constraint *a = &rs->constraints[i], *b = &back->constraints[i];
        assert_string_equal(a->name, b->name);
        assert_int_equal(a->kind, b->kind);
        assert_int_equal(a->intervals, b->intervals);
        assert_int_equal(a->leap, b->leap);
        assert_int_equal(a->num_pairs, b->num_pairs);
        assert_int_equal(a->pairs_given, b->pairs_given);
        assert_memory_equal(a->pair, b->pair, sizeof a->pair);
        if (a->description)
            assert_string_equal(a->description, b->description);
        else
            assert_null(b->description);
    }
    /* the written text is a fixed point */
    char *again = NULL;
    pn_rule_set *third = round_trip(back, &again);
    assert_string_equal(text, again);
    free(text);
    free(again);
    pn_rule_set_free(third);
    pn_rule_set_free(back);
    pn_rule_set_free(rs);

    /* a set without constraints writes no "constraints" field */
    rs = parse_ok(NULL);
    back = round_trip(rs, &text);
    assert_null(strstr(text, "constraints"));
    assert_int_equal(back->num_constraints, 0);
    free(text);
    pn_rule_set_free(back);
    pn_rule_set_free(rs);
}

/* A generator on the set `text`, which *rs receives. */
static pn_generator *generator_of(const char *text, pn_rule_set **rs)
{
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_parse("rules.json", text, strlen(text), rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    pn_generator *gen = NULL;
    if (pn_generator_create(*rs, NULL, &gen, &info) != PN_OK)
        fail_msg("%s", info.message);
    return gen;
}

/* A generator on a set whose only rule spreads mass over everything: its
 * draws, conditioned on "no parallels", never make parallel fifths or
 * octaves from the context, while the unconditioned realization does. */
static void test_generator_draws_keep_constraints(void **state)
{
    (void)state;
    static const char text[] = "{\"format\":\"parnassus-rules/1\",\"name\":\"t\","
                               "\"space\":{\"ranges\":[[64,72],[57,65],[52,60],[45,53]]},"
                               "\"rules\":[{\"name\":\"bass\",\"feature\":\"mod12(w(4))\","
                               "\"targets\":{\"9\":0.25,\"10\":0.25,\"11\":0.25,\"0\":0.25}}],"
                               "\"constraints\":[{\"name\":\"p\",\"kind\":\"parallel\"}]}";
    pn_rule_set *rs = NULL;
    pn_generator *gen = generator_of(text, &rs);
    /* D minor, the soprano a twelfth above the bass, the tenor a fifth */
    const int previous[4] = {69, 62, 57, 50};
    pn_error_info info = {PN_OK, ""};
    if (pn_generator_advance(gen, previous, &info) != PN_OK)
        fail_msg("%s", info.message);
    pn_rng rng;
    pn_rng_seed(&rng, 7);
    int pitches[4];
    int broke = 0;
    for (int i = 0; i < 4000; ++i) {
        assert_true(pn_generator_draw(gen, &rng, pitches) >= 0);
        broke += !pn_rule_set_allows(rs, previous, pitches);
    }
    assert_int_equal(broke, 0);
    assert_int_equal(pn_generator_constraint_misses(gen), 0);
    /* without the constraint, the same realization moves in parallel often */
    rs->num_constraints = 0;
    pn_rule_set check = *rs;
    pn_constraint p = {0};
    p.kind = PN_CONSTRAINT_PARALLEL;
    p.intervals = (1u << 0) | (1u << 7);
    p.num_pairs = 0;
    for (int u = 0; u < 4; ++u)
        for (int l = u + 1; l < 4; ++l) {
            p.pair[p.num_pairs][0] = (unsigned char)u;
            p.pair[p.num_pairs][1] = (unsigned char)l;
            p.num_pairs++;
        }
    check.num_constraints = 1;
    check.constraints = &p;
    int would_break = 0;
    for (int i = 0; i < 4000; ++i) {
        assert_true(pn_generator_draw(gen, &rng, pitches) >= 0);
        would_break += !pn_rule_set_allows(&check, previous, pitches);
    }
    assert_true(would_break > 40); /* more than 1 %: the conditioning above did something */
    rs->num_constraints = 1;
    pn_generator_free(gen);
    pn_rule_set_free(rs);
}

/* The draws keep to "known" where the realization does not: a rule over the
 * bass's pitch class, realized with mass on each of the nine, then told
 * that B flat is never seen (as learning would, the targets changing under
 * the realization). No draw puts the bass on B flat; without the
 * constraint about one in nine does. */
static void test_generator_draws_keep_known(void **state)
{
    (void)state;
    static const char text[] =
        "{\"format\":\"parnassus-rules/1\",\"name\":\"t\","
        "\"space\":{\"ranges\":[[64,72],[57,65],[52,60],[45,53]]},"
        "\"rules\":[{\"name\":\"bass\",\"feature\":\"mod12(w(4))\",\"targets\":{"
        "\"9\":0.125,\"10\":0.125,\"11\":0.125,\"0\":0.125,\"1\":0.125,\"2\":0.125,"
        "\"3\":0.125,\"4\":0.0625,\"5\":0.0625}}],"
        "\"constraints\":[{\"name\":\"k\",\"kind\":\"known\",\"rule\":\"bass\"}]}";
    pn_rule_set *rs = NULL;
    pn_generator *gen = generator_of(text, &rs);
    const int b_flat[4] = {65, 62, 58, 46};
    int32_t cell, cell_a;
    const int a[4] = {64, 60, 57, 45};
    assert_int_equal(pn_feature_cell_of(rs->rules[0].table, b_flat, &cell, NULL), PN_OK);
    assert_int_equal(pn_feature_cell_of(rs->rules[0].table, a, &cell_a, NULL), PN_OK);
    rs->rules[0].target[cell_a] += rs->rules[0].target[cell];
    rs->rules[0].target[cell] = 0.0;
    pn_rng rng;
    pn_rng_seed(&rng, 11);
    int pitches[4];
    int on_b_flat = 0;
    for (int i = 0; i < 4000; ++i) {
        assert_true(pn_generator_draw(gen, &rng, pitches) >= 0);
        on_b_flat += pitches[3] == 46;
    }
    assert_int_equal(on_b_flat, 0);
    assert_int_equal(pn_generator_constraint_misses(gen), 0);
    rs->num_constraints = 0; /* the same realization, unconditioned */
    for (int i = 0; i < 4000; ++i) {
        assert_true(pn_generator_draw(gen, &rng, pitches) >= 0);
        on_b_flat += pitches[3] == 46;
    }
    assert_true(on_b_flat > 300 && on_b_flat < 700); /* 500 expected */
    rs->num_constraints = 1;
    pn_generator_free(gen);
    pn_rule_set_free(rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parallel_moves),
        cmocka_unit_test(test_hidden_moves),
        cmocka_unit_test(test_known_values),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_write_round_trip),
        cmocka_unit_test(test_generator_draws_keep_constraints),
        cmocka_unit_test(test_generator_draws_keep_known),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
