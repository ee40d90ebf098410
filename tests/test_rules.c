/* Tests of the rule set reader and the problem builder
 * (docs/rule-format.md). */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fdopen */

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

/* ------------------------------------------------------------------------ */
/* Helpers */

static void data_path(char *buf, size_t size, const char *file)
{
    const char *dir = getenv("PN_TEST_DATA");
    int n;
    if (dir) {
        n = snprintf(buf, size, "%s/rules/%s", dir, file);
    } else {
        /* run by hand: the data next to this source file */
        const char *src = __FILE__, *slash = strrchr(src, '/');
        int dlen = slash ? (int)(slash - src) : 1;
        n = snprintf(buf, size, "%.*s/data/rules/%s", dlen, slash ? src : ".", file);
    }
    assert_true(n > 0 && (size_t)n < size);
}

static pn_rule_set *read_ok(const char *file)
{
    char path[1024];
    data_path(path, sizeof path, file);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_read(path, &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_non_null(rs);
    return rs;
}

/* Parses text as "rules.json"; expects the error code and a message
 * starting with "rules.json: " and containing each fragment. */
static void parse_bad(const char *text, pn_error expected, ...)
{
    pn_rule_set *rs = (pn_rule_set *)&rs; /* must be reset to NULL */
    pn_error_info info = {PN_OK, ""};
    pn_error err = pn_rule_set_parse("rules.json", text, strlen(text), &rs, &info);
    if (err != expected)
        fail_msg("error %d, expected %d: %s", (int)err, (int)expected, info.message);
    assert_int_equal(info.code, expected);
    assert_null(rs);
    assert_true(strncmp(info.message, "rules.json: ", 12) == 0);
    va_list ap;
    va_start(ap, expected);
    for (const char *frag = va_arg(ap, const char *); frag; frag = va_arg(ap, const char *)) {
        if (!strstr(info.message, frag))
            fail_msg("message \"%s\" lacks \"%s\"", info.message, frag);
    }
    va_end(ap);
}

/* A rule set text on the 2-voice space [60,64] x [48,52] with the given
 * rules (a JSON array body). */
static void with_rules(char *buf, size_t size, const char *rules)
{
    int n = snprintf(buf, size,
                     "{\"format\":\"parnassus-rules/1\",\"name\":\"t\","
                     "\"space\":{\"ranges\":[[60,64],[48,52]]},\"rules\":[%s]}",
                     rules);
    assert_true(n > 0 && (size_t)n < size);
}

static void rules_bad(const char *rules, pn_error expected, const char *frag1, const char *frag2)
{
    char text[2048];
    with_rules(text, sizeof text, rules);
    parse_bad(text, expected, frag1, frag2, (const char *)NULL);
}

/* The target of the cell with value text `value` in rule r. */
static double target_of(const pn_rule_set *rs, const pn_problem *prob, int32_t r, const char *value)
{
    int32_t cell = -1;
    pn_error_info info;
    if (pn_feature_find_value(rs->rules[r].table, value, &cell, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_in_range(cell, 0, pn_rule_size(prob, r) - 1);
    assert_true(rs->rules[r].target[cell] == prob->target[prob->rule_start[r] + cell]);
    return prob->target[prob->rule_start[r] + cell];
}

/* ------------------------------------------------------------------------ */
/* A valid file */

static void test_small_file(void **state)
{
    (void)state;
    pn_rule_set *rs = read_ok("small.json");
    assert_string_equal(rs->name, "small");
    assert_int_equal(rs->space.num_voices, 2);
    assert_int_equal(rs->space.low[0], 60);
    assert_int_equal(rs->space.high[1], 52);
    assert_int_equal(rs->num_rules, 4);
    assert_string_equal(rs->rules[0].name, "soprano-pc");
    assert_string_equal(rs->rules[3].name, "span");
    /* soprano 60..64 and R: pitch classes 0..4 and R */
    assert_int_equal(pn_feature_table_size(rs->rules[0].table), 6);

    pn_problem *prob = NULL;
    pn_error_info info = {PN_OK, ""};
    int32_t group_of[36];
    if (pn_rule_set_build_problem(rs, &prob, group_of, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_int_equal(prob->n, 36);
    assert_int_equal(prob->num_rules, 4);
    if (pn_problem_validate(prob, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_string_equal(prob->rule_name[1], "interval");

    assert_true(target_of(rs, prob, 0, "0") == 0.5);
    assert_true(target_of(rs, prob, 0, "4") == 0.3);
    assert_true(target_of(rs, prob, 0, "R") == 0.2);
    assert_true(target_of(rs, prob, 0, "2") == 0.0);
    assert_true(target_of(rs, prob, 1, "0") == 0.4);
    assert_true(target_of(rs, prob, 1, "8") == 0.0);
    assert_true(target_of(rs, prob, 2, "48") == 0.5);
    assert_true(target_of(rs, prob, 2, "(52)") == 0.25);
    assert_true(target_of(rs, prob, 3, "12") == 0.7);
    assert_true(target_of(rs, prob, 3, "16") == 0.3);
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        double sum = 0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            sum += prob->target[i];
        assert_true(fabs(sum - 1) < 1e-12);
    }

    /* every sonority's group has, in each rule, the row of its own cell */
    int64_t total = 0;
    for (int64_t k = 0; k < prob->num_groups; ++k)
        total += prob->group_size[k];
    assert_int_equal(total, 36);
    for (int64_t x = 0; x < 36; ++x) {
        int pitches[2];
        assert_int_equal(pn_space_decode(&rs->space, x, pitches, &info), PN_OK);
        int32_t k = group_of[x];
        assert_in_range(k, 0, prob->num_groups - 1);
        for (int32_t r = 0; r < prob->num_rules; ++r) {
            int32_t cell;
            assert_int_equal(pn_feature_cell_of(rs->rules[r].table, pitches, &cell, &info), PN_OK);
            assert_int_equal(prob->group_rows[k * prob->num_rules + r], prob->rule_start[r] + cell);
        }
    }
    pn_problem_free(prob);

    /* without a map */
    assert_int_equal(pn_rule_set_build_problem(rs, &prob, NULL, &info), PN_OK);
    assert_int_equal(pn_problem_validate(prob, &info), PN_OK);
    pn_problem_free(prob);
    pn_rule_set_free(rs);
}

static void test_space_forms(void **state)
{
    (void)state;
    const char *text = "{\"format\":\"parnassus-rules/1\",\"name\":\"d\",\"rules\":["
                       "{\"name\":\"s\",\"feature\":\"mod12(w(1))\",\"targets\":{\"7\":1}}]}";
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_parse("d.json", text, strlen(text), &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    /* no space: the default 4 voices, 31..84 */
    assert_int_equal(rs->space.num_voices, 4);
    assert_int_equal(rs->space.low[3], 31);
    assert_int_equal(rs->space.high[0], 84);
    pn_rule_set_free(rs);

    text = "{\"format\":\"parnassus-rules/1\",\"name\":\"d\","
           "\"space\":{\"voices\":3,\"low\":40,\"high\":50},\"rules\":["
           "{\"name\":\"s\",\"feature\":\"w(3)\",\"targets\":{\"R\":0.5,\"40\":0.5}}]}";
    assert_int_equal(pn_rule_set_parse("d.json", text, strlen(text), &rs, &info), PN_OK);
    assert_int_equal(rs->space.num_voices, 3);
    assert_int_equal(rs->space.low[2], 40);
    assert_int_equal(rs->space.high[2], 50);
    pn_problem *prob = NULL;
    assert_int_equal(pn_rule_set_build_problem(rs, &prob, NULL, &info), PN_OK);
    assert_int_equal(prob->n, 12 * 12 * 12);
    pn_problem_free(prob);
    pn_rule_set_free(rs);
}

static void test_space_too_large_to_build(void **state)
{
    (void)state;
    const char *text = "{\"format\":\"parnassus-rules/1\",\"name\":\"big\","
                       "\"space\":{\"voices\":8,\"low\":0,\"high\":127},\"rules\":["
                       "{\"name\":\"s\",\"feature\":\"mod12(w(1))\",\"targets\":{\"0\":1}}]}";
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_parse("big.json", text, strlen(text), &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    pn_problem *prob = (pn_problem *)&prob;
    assert_int_equal(pn_rule_set_build_problem(rs, &prob, NULL, &info), PN_ERR_INVALID);
    assert_null(prob);
    assert_non_null(strstr(info.message, "sonorities"));
    pn_rule_set_free(rs);
}

/* ------------------------------------------------------------------------ */
/* Errors */

static void test_errors_top_level(void **state)
{
    (void)state;
    parse_bad("{\"format\": \"x\"}", PN_ERR_PARSE,
              "format: expected \"parnassus-rules/1\", got \"x\"", (const char *)NULL);
    parse_bad("{\"name\": \"x\"}", PN_ERR_PARSE, "format: missing field", (const char *)NULL);
    parse_bad("{\"format\": 1}", PN_ERR_PARSE, "format: expected", "got 1", (const char *)NULL);
    parse_bad("{\"format\":\"parnassus-rules/1\",\"rules\":[]}", PN_ERR_PARSE,
              "name: missing field", (const char *)NULL);
    parse_bad("{\"format\":\"parnassus-rules/1\",\"name\":\"\",\"rules\":[]}", PN_ERR_PARSE,
              "name: must not be empty", (const char *)NULL);
    parse_bad("{\"format\":\"parnassus-rules/1\",\"name\":\"a\"}", PN_ERR_PARSE,
              "rules: missing field", (const char *)NULL);
    parse_bad("{\"format\":\"parnassus-rules/1\",\"name\":\"a\",\"rules\":[]}", PN_ERR_PARSE,
              "rules: empty list", (const char *)NULL);
    parse_bad("{\"format\":\"parnassus-rules/1\",\"name\":\"a\",\"rules\":{}}", PN_ERR_PARSE,
              "rules: expected an array", "got an object", (const char *)NULL);
    parse_bad("{\"format\":\"parnassus-rules/1\",\"name\":\"a\",\"rulez\":[]}", PN_ERR_PARSE,
              "unknown field \"rulez\"", (const char *)NULL);
    parse_bad("[1, 2]", PN_ERR_PARSE, "expected a JSON object, got an array", (const char *)NULL);
    /* syntax errors carry jansson's line and column */
    parse_bad("{\n  \"format\": \"parnassus-rules/1\",\n  \"name\": }", PN_ERR_PARSE, "line 3",
              "column", (const char *)NULL);
    parse_bad("{\"format\":\"parnassus-rules/1\",\"format\":\"parnassus-rules/1\"}", PN_ERR_PARSE,
              "duplicate", (const char *)NULL);
    parse_bad("", PN_ERR_PARSE, (const char *)NULL);
}

static void test_errors_space(void **state)
{
    (void)state;
    const char *head = "{\"format\":\"parnassus-rules/1\",\"name\":\"a\",\"space\":";
    const char *tail = ",\"rules\":[{\"name\":\"s\",\"feature\":\"w(1)\",\"targets\":{\"R\":1}}]}";
    static const struct {
        const char *space, *frag1, *frag2;
    } cases[] = {
        {"{\"voices\":9}", "space.voices: must be 1..8", "got 9"},
        {"{\"voices\":0}", "space.voices: must be 1..8", "got 0"},
        {"{\"voices\":\"4\"}", "space.voices: expected an integer", "a string"},
        {"{\"voices\":2.5}", "space.voices: expected an integer", "2.5"},
        {"{\"low\":-1}", "space.low: must be 0..127", "-1"},
        {"{\"high\":128}", "space.high: must be 0..127", "128"},
        {"{\"low\":70,\"high\":60}", "space: low 70 is above high 60", ""},
        {"{\"ranges\":[[60,64]],\"low\":50}", "space: give either", "not both"},
        {"{\"ranges\":[]}", "space.ranges: must have 1..8 entries", "got 0"},
        {"{\"ranges\":[[60,64],[50]]}", "space.ranges[1]: expected a [low, high] pair", ""},
        {"{\"ranges\":[[60,64],[50,\"x\"]]}", "space.ranges[1][1]: expected an integer", ""},
        {"{\"ranges\":[[64,60]]}", "space.ranges[0]: low 64 is above high 60", ""},
        {"{\"ranges\":[[60,64]],\"voices\":2}", "space.ranges: has 1 entries", "voices is 2"},
        {"{\"range\":[[60,64]]}", "space: unknown field \"range\"", ""},
        {"[4]", "space: expected an object", "an array"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s%s", head, cases[i].space, tail);
        parse_bad(text, PN_ERR_PARSE, cases[i].frag1, cases[i].frag2, (const char *)NULL);
    }
}

static void test_errors_rules(void **state)
{
    (void)state;
    const char *ok = "{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"60\":1}}";
    char two[512];

    rules_bad("{\"name\":\"a\",\"feature\":\"mod13(w(1))\",\"targets\":{\"0\":1}}", PN_ERR_PARSE,
              "rules[0].feature: ", "unknown descriptor 'mod13' at position 1");
    snprintf(two, sizeof two, "%s,%s", ok,
             "{\"name\":\"b\",\"feature\":\"w(3)\",\"targets\":{\"0\":1}}");
    rules_bad(two, PN_ERR_PARSE, "rules[1].feature: ", "out of range 1..2");
    rules_bad("{\"name\":\"a\",\"feature\":\"mod12(w(1))\",\"targets\":{\"13\":1}}", PN_ERR_PARSE,
              "rules[0].targets[\"13\"]: ", "mod12(w(1)) never takes the value '13'");
    rules_bad("{\"name\":\"a\",\"feature\":\"mod12(w(1))\",\"targets\":{\"7\":1}}", PN_ERR_PARSE,
              "rules[0].targets[\"7\"]: ", "never takes the value '7'");
    rules_bad("{\"name\":\"a\",\"feature\":\"mod12(w(1))\",\"targets\":{\"x\":1}}", PN_ERR_PARSE,
              "rules[0].targets[\"x\"]: ", "expected an integer or R");
    rules_bad("{\"name\":\"a\",\"feature\":\"mod12(w(1))\",\"targets\":{\"(0,1)\":1}}",
              PN_ERR_PARSE, "rules[0].targets[\"(0,1)\"]: ", "length 2");
    rules_bad("{\"name\":\"a\",\"feature\":\"mod12(w(1))\",\"targets\":{\"0\":1.1,\"4\":-0.1}}",
              PN_ERR_PARSE, "rules[0].targets[\"0\"]: ", "probability 1.1 is above 1");
    rules_bad("{\"name\":\"a\",\"feature\":\"mod12(w(1))\",\"targets\":{\"4\":-0.1,\"0\":1.1}}",
              PN_ERR_PARSE, "rules[0].targets[\"4\"]: ", "negative probability -0.1");
    rules_bad("{\"name\":\"a\",\"feature\":\"mod12(w(1))\",\"targets\":{\"4\":\"0.5\"}}",
              PN_ERR_PARSE, "rules[0].targets[\"4\"]: ", "expected a probability");
    snprintf(two, sizeof two, "%s,%s", ok,
             "{\"name\":\"b\",\"feature\":\"mod12(w(2))\",\"targets\":{\"0\":0.3,\"4\":0.4}}");
    rules_bad(two, PN_ERR_PARSE,
              "rules[1].targets: ", "probabilities sum to 0.7, not 1 (tolerance 1e-6)");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{}}", PN_ERR_PARSE,
              "rules[0].targets: ", "sum to 0, not 1");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"60\":0.5,\"(60)\":0.5}}",
              PN_ERR_PARSE, "rules[0].targets[\"(60)\"]: ", "same value as targets[\"60\"]");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":[1]}", PN_ERR_PARSE,
              "rules[0].targets: ", "expected an object");
    snprintf(two, sizeof two, "%s,%s", ok, ok);
    rules_bad(two, PN_ERR_PARSE, "rules[1].name: ", "duplicate rule name \"a\" (also rules[0])");
    rules_bad("{\"feature\":\"w(1)\",\"targets\":{\"60\":1}}", PN_ERR_PARSE,
              "rules[0]: ", "missing field \"name\"");
    rules_bad("{\"name\":\"a\",\"targets\":{\"60\":1}}", PN_ERR_PARSE,
              "rules[0]: ", "missing field \"feature\"");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\"}", PN_ERR_PARSE,
              "rules[0]: ", "missing field \"targets\"");
    rules_bad("{\"name\":3,\"feature\":\"w(1)\",\"targets\":{\"60\":1}}", PN_ERR_PARSE,
              "rules[0].name: ", "expected a string, got 3");
    rules_bad("{\"name\":\"a\",\"feature\":[],\"targets\":{\"60\":1}}", PN_ERR_PARSE,
              "rules[0].feature: ", "expected a feature text, got an array");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"60\":1},\"weight\":2}",
              PN_ERR_PARSE, "rules[0]: ", "unknown field \"weight\"");
    rules_bad("\"a\"", PN_ERR_PARSE, "rules[0]: ", "expected a rule object, got a string");
    /* key texts in messages are escaped */
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"\\\"q\\n\":1}}", PN_ERR_PARSE,
              "rules[0].targets[\"\\\"q?\"]: ", NULL);
}

static void test_error_from_file(void **state)
{
    (void)state;
    char path[1024];
    data_path(path, sizeof path, "bad-sum.json");
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_rule_set_read(path, &rs, &info), PN_ERR_PARSE);
    assert_null(rs);
    char expect[1200];
    snprintf(expect, sizeof expect,
             "%s: rules[1].targets: probabilities sum to 0.7, not 1 (tolerance 1e-6)", path);
    assert_string_equal(info.message, expect);

    data_path(path, sizeof path, "no-such-file.json");
    assert_int_equal(pn_rule_set_read(path, &rs, &info), PN_ERR_IO);
    assert_null(rs);
    assert_true(strncmp(info.message, path, strlen(path)) == 0);

    assert_int_equal(pn_rule_set_read(NULL, &rs, &info), PN_ERR_INVALID);
    assert_int_equal(pn_rule_set_parse("x", "{}", 2, NULL, &info), PN_ERR_INVALID);
    pn_rule_set_free(NULL);
}

/* Every prefix of a valid file fails cleanly (or parses, when only
 * trailing white space is cut). */
static void test_truncated(void **state)
{
    (void)state;
    char path[1024];
    data_path(path, sizeof path, "small.json");
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char text[8192];
    size_t len = fread(text, 1, sizeof text, f);
    fclose(f);
    assert_true(len > 100 && len < sizeof text);
    size_t ok = 0;
    for (size_t cut = 0; cut <= len; ++cut) {
        char *copy = malloc(cut ? cut : 1); /* exactly cut bytes, no terminator */
        assert_non_null(copy);
        memcpy(copy, text, cut);
        pn_rule_set *rs = NULL;
        pn_error_info info = {PN_OK, ""};
        pn_error err = pn_rule_set_parse("cut.json", copy, cut, &rs, &info);
        if (err == PN_OK) {
            assert_non_null(rs);
            ok++;
        } else {
            assert_int_equal(err, PN_ERR_PARSE);
            assert_null(rs);
            assert_true(strncmp(info.message, "cut.json: ", 10) == 0);
        }
        pn_rule_set_free(rs);
        free(copy);
    }
    assert_true(ok >= 1 && ok <= 2); /* with and without the final newline */
}

/* ------------------------------------------------------------------------ */
/* Rules with a context */

/* The rule's targets for a previous sonority, through pn_rule_set_targets. */
static void targets_after(const pn_rule_set *rs, const int *previous, double *b)
{
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_targets(rs, previous, b, &info) != PN_OK)
        fail_msg("%s", info.message);
}

static int32_t cell_of(const pn_feature_table *t, const char *value)
{
    int32_t cell = -1;
    pn_error_info info;
    if (pn_feature_find_value(t, value, &cell, &info) != PN_OK)
        fail_msg("%s", info.message);
    return cell;
}

static void test_context_file(void **state)
{
    (void)state;
    pn_rule_set *rs = read_ok("context.json");
    assert_int_equal(rs->num_rules, 2);
    assert_true(pn_rule_set_has_context(rs));
    assert_string_equal(rs->description,
                        "Two voices with five pitches each; the upper voice's motion depends on "
                        "its previous pitch.");
    const pn_rule *up = &rs->rules[0];
    assert_non_null(up->context);
    assert_null(rs->rules[1].context);
    const pn_rule_context *c = up->context;
    assert_true(c->smoothing == 2.0);
    assert_int_equal(c->num_rows, 3);
    /* listed cells come sorted whatever the file's order: 60 < 64 < R */
    assert_int_equal(c->cell[0], cell_of(c->table, "60"));
    assert_int_equal(c->cell[1], cell_of(c->table, "64"));
    assert_int_equal(c->cell[2], cell_of(c->table, "R"));
    assert_true(c->count[0] == 2.0 && c->count[1] == 6.0 && isinf(c->count[2]));

    const int32_t m = pn_rule_set_num_rows(rs);
    /* w(1): 5 pitches + R; the interval 8..16 semitones: 9 classes + R */
    assert_int_equal(m, 6 + 10);
    double b[32], back[32];
    const int32_t c60 = cell_of(up->table, "60"), c62 = cell_of(up->table, "62"),
                  c64 = cell_of(up->table, "64");

    /* first step: the back-off targets of every rule */
    targets_after(rs, NULL, back);
    assert_true(back[c60] == 0.4 && back[c62] == 0.3 && back[c64] == 0.3);

    /* after 64, seen 6 times, smoothing 2: (6 * row + 2 * back-off) / 8 */
    const int after64[2] = {64, 50};
    targets_after(rs, after64, b);
    assert_true(fabs(b[c62] - (6.0 * 1.0 + 2.0 * 0.3) / 8.0) < 1e-15);
    assert_true(fabs(b[c60] - 2.0 * 0.4 / 8.0) < 1e-15);
    assert_true(fabs(b[c64] - 2.0 * 0.3 / 8.0) < 1e-15);
    double sum = 0.0;
    for (int32_t i = 0; i < 6; ++i)
        sum += b[i];
    assert_true(fabs(sum - 1.0) < 1e-12);
    /* the unconditional rule keeps its targets whatever the context */
    for (int32_t i = 6; i < m; ++i)
        assert_true(b[i] == back[i]);

    /* after 60, seen twice: half the row, half the back-off */
    const int after60[2] = {60, PN_REST};
    targets_after(rs, after60, b);
    assert_true(fabs(b[c62] - (0.5 + 0.3) / 2.0) < 1e-15);
    assert_true(fabs(b[c60] - 0.4 / 2.0) < 1e-15);

    /* a context without a count is used as written */
    const int after_rest[2] = {PN_REST, 48};
    targets_after(rs, after_rest, b);
    assert_true(b[c60] == 1.0 && b[c62] == 0.0);

    /* a context that is not listed backs off */
    const int after62[2] = {62, 48};
    targets_after(rs, after62, b);
    for (int32_t i = 0; i < m; ++i)
        assert_true(b[i] == back[i]);

    /* a previous sonority outside the space is an error, not a guess */
    const int outside[2] = {70, 48};
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_rule_set_targets(rs, outside, b, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "outside its range"));

    /* every step's targets are valid targets of the built problem */
    pn_problem *prob = NULL;
    if (pn_rule_set_build_problem(rs, &prob, NULL, &info) != PN_OK)
        fail_msg("%s", info.message);
    targets_after(rs, after64, b);
    assert_int_equal(pn_targets_validate(prob, b, &info), PN_OK);
    pn_problem_free(prob);
    pn_rule_set_free(rs);
}

/* Refinements: a finer context moves the coarser levels' targets toward
 * its row, weighted by its count; unlisted finer contexts leave them; the
 * first step is the back-off; tables of one context feature are shared. */
static void test_refinements(void **state)
{
    (void)state;
    char text[4096];
    with_rules(text, sizeof text,
               "{\"name\":\"up\",\"feature\":\"w(1)\",\"context\":\"w(2)\",\"smoothing\":2,"
               "\"targets\":{\"60\":0.5,\"62\":0.5},"
               "\"contexts\":{\"48\":{\"count\":2,\"targets\":{\"64\":1}}},"
               "\"refinements\":[{\"context\":\"w(1,2)\",\"smoothing\":1,"
               "\"contexts\":{\"(60,48)\":{\"count\":3,\"targets\":{\"61\":1}},"
               "\"(62,48)\":{\"targets\":{\"63\":1}}}}]},"
               "{\"name\":\"low\",\"feature\":\"w(2)\",\"context\":\"w(2)\","
               "\"targets\":{\"48\":1},"
               "\"refinements\":[{\"context\":\" w( 1 , 2 ) \"}]}");
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_parse("rules.json", text, strlen(text), &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    const pn_rule *up = &rs->rules[0], *low = &rs->rules[1];
    assert_int_equal(up->num_refinements, 1);
    assert_true(up->refinements[0].smoothing == 1.0);
    assert_int_equal(up->refinements[0].num_rows, 2);
    /* the same context feature, the same table (written differently) */
    assert_true(low->context->table == up->context->table);
    assert_int_equal(low->context->table_borrowed, 1);
    assert_true(low->refinements[0].table == up->refinements[0].table);
    assert_true(low->refinements[0].smoothing == PN_RULES_DEFAULT_SMOOTHING);

    double b[32];
    const int32_t c60 = cell_of(up->table, "60"), c61 = cell_of(up->table, "61"),
                  c62 = cell_of(up->table, "62"), c63 = cell_of(up->table, "63"),
                  c64 = cell_of(up->table, "64");
    /* first step: the back-off */
    targets_after(rs, NULL, b);
    assert_true(b[c60] == 0.5 && b[c62] == 0.5);
    /* after (60, 48): level 1 gives (2 row + 2 back-off) / 4, the refinement
     * (3 row + 1 level 1) / 4 */
    const int after[2] = {60, 48};
    targets_after(rs, after, b);
    const double l60 = 0.25, l62 = 0.25, l64 = 0.5;
    assert_true(fabs(b[c61] - 0.75) < 1e-15);
    assert_true(fabs(b[c60] - 0.25 * l60) < 1e-15);
    assert_true(fabs(b[c62] - 0.25 * l62) < 1e-15);
    assert_true(fabs(b[c64] - 0.25 * l64) < 1e-15);
    /* after (62, 48): a row without count replaces the coarser targets */
    const int after2[2] = {62, 48};
    targets_after(rs, after2, b);
    assert_true(b[c63] == 1.0 && b[c60] == 0.0);
    /* after (64, 48): not listed in the refinement, level 1 stands */
    const int after3[2] = {64, 48};
    targets_after(rs, after3, b);
    assert_true(fabs(b[c64] - l64) < 1e-15 && fabs(b[c60] - l60) < 1e-15);
    /* after (60, 50): neither level listed, the back-off */
    const int after4[2] = {60, 50};
    targets_after(rs, after4, b);
    assert_true(b[c60] == 0.5 && b[c62] == 0.5);
    pn_rule_set_free(rs);

    /* errors */
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"60\":1},"
              "\"refinements\":[{\"context\":\"w(1,2)\"}]}",
              PN_ERR_PARSE, "rules[0].refinements", "only a rule with a \"context\"");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"60\":1},\"context\":\"w(2)\","
              "\"refinements\":[{\"smoothing\":1}]}",
              PN_ERR_PARSE, "rules[0].refinements[0]", "missing field \"context\"");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"60\":1},\"context\":\"w(2)\","
              "\"refinements\":[{\"context\":\"w(1,2)\",\"weight\":1}]}",
              PN_ERR_PARSE, "rules[0].refinements[0]", "unknown field \"weight\"");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"60\":1},\"context\":\"w(2)\","
              "\"refinements\":{}}",
              PN_ERR_PARSE, "rules[0].refinements", "expected an array");
    rules_bad(
        "{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"60\":1},\"context\":\"w(2)\","
        "\"refinements\":[{\"context\":\"w(1)\"},{\"context\":\"w(1)\"},{\"context\":\"w(1)\"},"
        "{\"context\":\"w(1)\"},{\"context\":\"w(1)\"}]}",
        PN_ERR_PARSE, "rules[0].refinements", "5 levels, at most 4");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"60\":1},\"context\":\"w(2)\","
              "\"refinements\":[{\"context\":\"w(1,2)\",\"contexts\":{\"(70,48)\":{\"targets\":{"
              "\"60\":1}}}}]}",
              PN_ERR_PARSE, "rules[0].refinements[0].contexts[\"(70,48)\"]",
              "never takes the value");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"60\":1},\"context\":\"w(2)\","
              "\"refinements\":[{\"context\":\"w(1,2)\",\"smoothing\":-1}]}",
              PN_ERR_PARSE, "rules[0].refinements[0].smoothing",
              "must be a number in [0, 1e+12], got -1");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"60\":1},\"context\":\"w(2)\","
              "\"refinements\":[{\"context\":\"w(1,2)\",\"smoothing\":1e308}]}",
              PN_ERR_PARSE, "rules[0].refinements[0].smoothing",
              "must be a number in [0, 1e+12], got 1e+308");
}

/* The set's lambda_p: read, checked, absent as 0. */
static void test_lambda_p(void **state)
{
    (void)state;
    static const char good[] = "{\"format\":\"parnassus-rules/1\",\"name\":\"t\",\"lambda_p\":3e-5,"
                               "\"rules\":[{\"name\":\"a\",\"feature\":\"mod12(w(1))\","
                               "\"targets\":{\"0\":1}}]}";
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_rule_set_parse("rules.json", good, strlen(good), &rs, &info), PN_OK);
    assert_true(rs->lambda_p == 3e-5);
    pn_rule_set_free(rs);
    rs = read_ok("small.json");
    assert_true(rs->lambda_p == 0.0);
    pn_rule_set_free(rs);
    parse_bad("{\"format\":\"parnassus-rules/1\",\"name\":\"t\",\"lambda_p\":0,"
              "\"rules\":[{\"name\":\"a\",\"feature\":\"mod12(w(1))\",\"targets\":{\"0\":1}}]}",
              PN_ERR_PARSE, "lambda_p", "must be a number in (0, 1], got 0", (const char *)NULL);
    parse_bad("{\"format\":\"parnassus-rules/1\",\"name\":\"t\",\"lambda_p\":\"small\","
              "\"rules\":[{\"name\":\"a\",\"feature\":\"mod12(w(1))\",\"targets\":{\"0\":1}}]}",
              PN_ERR_PARSE, "lambda_p", "expected a number", (const char *)NULL);
    parse_bad("{\"format\":\"parnassus-rules/1\",\"name\":\"t\",\"lambda_p\":1e308,"
              "\"rules\":[{\"name\":\"a\",\"feature\":\"mod12(w(1))\",\"targets\":{\"0\":1}}]}",
              PN_ERR_PARSE, "lambda_p: must be a number in (0, 1], got 1e+308", (const char *)NULL);
    /* a real is shown as the file writes it, not as an integer */
    parse_bad("{\"format\":\"parnassus-rules/1\",\"name\":\"t\",\"lambda_p\":2.0,"
              "\"rules\":[{\"name\":\"a\",\"feature\":\"mod12(w(1))\",\"targets\":{\"0\":1}}]}",
              PN_ERR_PARSE, "lambda_p: must be a number in (0, 1], got 2.0", (const char *)NULL);
    parse_bad("{\"format\":\"parnassus-rules/1\",\"name\":\"t\",\"space\":{\"voices\":4.0},"
              "\"rules\":[{\"name\":\"a\",\"feature\":\"mod12(w(1))\",\"targets\":{\"0\":1}}]}",
              PN_ERR_PARSE, "space.voices: expected an integer, got 4.0", (const char *)NULL);
}

/* Smoothing and counts: 1e308 was read, and smoothing toward the back-off
 * then gave NaN targets (inf / inf). Both are bounded by 1e12; at the
 * bounds every smoothed target is still a distribution. */
static void test_smoothing_bounds(void **state)
{
    (void)state;
    rules_bad("{\"name\":\"a\",\"feature\":\"w(2)\",\"context\":\"w(2)\",\"smoothing\":1e308,"
              "\"targets\":{\"48\":1}}",
              PN_ERR_PARSE, "rules[0].smoothing: ", "must be a number in [0, 1e+12], got 1e+308");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(2)\",\"context\":\"w(2)\",\"targets\":{\"48\":1},"
              "\"contexts\":{\"48\":{\"count\":1e308,\"targets\":{\"50\":1}}}}",
              PN_ERR_PARSE,
              "rules[0].contexts[\"48\"].count: ", "must be a number in [0, 1e+12], got 1e+308");
    rules_bad("{\"name\":\"a\",\"feature\":\"w(2)\",\"context\":\"w(2)\",\"targets\":{\"48\":1},"
              "\"contexts\":{\"48\":{\"count\":1000000000001,\"targets\":{\"50\":1}}}}",
              PN_ERR_PARSE, "rules[0].contexts[\"48\"].count: ",
              "must be a number in [0, 1e+12], got 1000000000001");
    char text[2048];
    with_rules(text, sizeof text,
               "{\"name\":\"a\",\"feature\":\"w(2)\",\"context\":\"w(2)\",\"smoothing\":1e12,"
               "\"targets\":{\"48\":1},"
               "\"contexts\":{\"48\":{\"count\":1e12,\"targets\":{\"50\":1}}},"
               "\"refinements\":[{\"context\":\"w(1,2)\",\"smoothing\":1e12,"
               "\"contexts\":{\"(60,48)\":{\"count\":1e12,\"targets\":{\"52\":1}}}}]}");
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_parse("rules.json", text, strlen(text), &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    const pn_rule *r = &rs->rules[0];
    double b[8];
    const int previous[2] = {60, 48};
    targets_after(rs, previous, b);
    /* level 1: half the back-off, half the row; the refinement halves that */
    assert_true(fabs(b[cell_of(r->table, "48")] - 0.25) < 1e-15);
    assert_true(fabs(b[cell_of(r->table, "50")] - 0.25) < 1e-15);
    assert_true(fabs(b[cell_of(r->table, "52")] - 0.5) < 1e-15);
    double sum = 0.0;
    for (int32_t c = 0; c < pn_feature_table_size(r->table); ++c) {
        assert_true(isfinite(b[c]));
        sum += b[c];
    }
    assert_true(fabs(sum - 1.0) < 1e-12);
    pn_rule_set_free(rs);
}

/* A UTF-8 byte order mark before the JSON is skipped, in memory and in a
 * file; the set is the same as without it. */
static void test_byte_order_mark(void **state)
{
    (void)state;
    char text[2048], marked[2100];
    with_rules(text, sizeof text, "{\"name\":\"a\",\"feature\":\"w(1)\",\"targets\":{\"62\":1}}");
    snprintf(marked, sizeof marked, "\xEF\xBB\xBF%s", text);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_parse("bom.json", marked, strlen(marked), &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_int_equal(rs->num_rules, 1);
    assert_string_equal(rs->rules[0].name, "a");
    pn_rule_set_free(rs);

    char path[] = "/tmp/pn-rules-bom-XXXXXX";
    const int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    fputs(marked, f);
    fclose(f);
    rs = NULL;
    if (pn_rule_set_read(path, &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_int_equal(rs->num_rules, 1);
    pn_rule_set_free(rs);
    remove(path);
    /* only the mark is skipped: the rest must still be JSON */
    parse_bad("\xEF\xBB\xBF\xEF\xBB\xBF{}", PN_ERR_PARSE, "line 1", (const char *)NULL);
}

/* The reader stops at the size limit and names a directory. */
static void test_read_limits(void **state)
{
    (void)state;
    pn_rule_set *rs = (pn_rule_set *)&rs;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_rule_set_read("/dev/zero", &rs, &info), PN_ERR_PARSE);
    assert_null(rs);
    assert_string_equal(info.message, "/dev/zero: larger than the limit of 64 MiB");
    assert_int_equal(pn_rule_set_read(".", &rs, &info), PN_ERR_IO);
    assert_string_equal(info.message, ".: is a directory");
}

/* Smoothing 0 uses a listed row as written; a context seen 0 times with
 * smoothing 0 has nothing but the back-off. */
static void test_context_smoothing_edges(void **state)
{
    (void)state;
    char text[2048];
    with_rules(text, sizeof text,
               "{\"name\":\"a\",\"feature\":\"w(2)\",\"context\":\"mod12(w(2))\",\"smoothing\":0,"
               "\"targets\":{\"48\":1},"
               "\"contexts\":{\"0\":{\"count\":3,\"targets\":{\"52\":1}},"
               "\"1\":{\"count\":0,\"targets\":{\"50\":1}}}}");
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    if (pn_rule_set_parse("rules.json", text, strlen(text), &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    const pn_rule *r = &rs->rules[0];
    double b[8];
    const int after48[2] = {60, 48}, after49[2] = {60, 49};
    targets_after(rs, after48, b);
    assert_true(b[cell_of(r->table, "52")] == 1.0);
    targets_after(rs, after49, b);
    assert_true(b[cell_of(r->table, "48")] == 1.0);
    /* the default smoothing when the file gives none */
    pn_rule_set_free(rs);
    with_rules(text, sizeof text,
               "{\"name\":\"a\",\"feature\":\"w(2)\",\"context\":\"w(2)\",\"targets\":{\"48\":1}}");
    if (pn_rule_set_parse("rules.json", text, strlen(text), &rs, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_true(rs->rules[0].context->smoothing == PN_RULES_DEFAULT_SMOOTHING);
    assert_int_equal(rs->rules[0].context->num_rows, 0);
    pn_rule_set_free(rs);
}

static void test_context_errors(void **state)
{
    (void)state;
    const char *t = "\"targets\":{\"48\":1}";
    char rule[1024];
#define CTX_BAD(fields, frag1, frag2)                                                              \
    do {                                                                                           \
        snprintf(rule, sizeof rule, "{\"name\":\"a\",\"feature\":\"w(2)\",%s,%s}", t, fields);     \
        rules_bad(rule, PN_ERR_PARSE, frag1, frag2);                                               \
    } while (0)
    CTX_BAD("\"smoothing\":1", "rules[0].smoothing: ", "only a rule with a \"context\"");
    CTX_BAD("\"contexts\":{}", "rules[0].contexts: ", "only a rule with a \"context\"");
    CTX_BAD("\"context\":3", "rules[0].context: ", "expected a feature text, got 3");
    CTX_BAD("\"context\":\"w(3)\"", "rules[0].context: ", "w(3)");
    CTX_BAD("\"context\":\"w(2)\",\"smoothing\":-1",
            "rules[0].smoothing: ", "must be a number in [0, 1e+12], got -1");
    CTX_BAD("\"context\":\"w(2)\",\"smoothing\":\"x\"",
            "rules[0].smoothing: ", "expected a number");
    CTX_BAD("\"context\":\"w(2)\",\"contexts\":[]",
            "rules[0].contexts: ", "expected an object mapping context values");
    CTX_BAD("\"context\":\"w(2)\",\"contexts\":{\"47\":{\"targets\":{\"48\":1}}}",
            "rules[0].contexts[\"47\"]: ", "the context w(2) never takes the value '47'");
    CTX_BAD("\"context\":\"w(2)\",\"contexts\":{\"48\":{\"targets\":{\"48\":1}},"
            "\"(48)\":{\"targets\":{\"48\":1}}}",
            "rules[0].contexts[\"(48)\"]: ", "the same context value as contexts[\"48\"]");
    CTX_BAD("\"context\":\"w(2)\",\"contexts\":{\"48\":3}",
            "rules[0].contexts[\"48\"]: ", "expected an object with \"targets\"");
    CTX_BAD("\"context\":\"w(2)\",\"contexts\":{\"48\":{\"count\":1}}",
            "rules[0].contexts[\"48\"]: ", "missing field \"targets\"");
    CTX_BAD("\"context\":\"w(2)\",\"contexts\":{\"48\":{\"targets\":{\"48\":1},\"n\":1}}",
            "rules[0].contexts[\"48\"]: ", "unknown field \"n\"");
    CTX_BAD("\"context\":\"w(2)\",\"contexts\":{\"48\":{\"count\":-2,\"targets\":{\"48\":1}}}",
            "rules[0].contexts[\"48\"].count: ", "must be a number in [0, 1e+12], got -2");
    CTX_BAD("\"context\":\"w(2)\",\"contexts\":{\"48\":{\"targets\":{\"48\":0.5}}}",
            "rules[0].contexts[\"48\"].targets: ", "probabilities sum to 0.5");
    CTX_BAD("\"context\":\"w(2)\",\"contexts\":{\"48\":{\"targets\":{\"61\":1}}}",
            "rules[0].contexts[\"48\"].targets[\"61\"]: ", "w(2) never takes the value '61'");
#undef CTX_BAD
}

/* A feature file: rules without targets, accepted only with the flag. */
static void test_targets_optional(void **state)
{
    (void)state;
    char text[2048];
    with_rules(text, sizeof text,
               "{\"name\":\"a\",\"feature\":\"w(2)\",\"context\":\"w(2)\"},"
               "{\"name\":\"b\",\"feature\":\"mod12(w(1))\",\"targets\":{\"0\":1}}");
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_rule_set_parse("rules.json", text, strlen(text), &rs, &info), PN_ERR_PARSE);
    assert_non_null(strstr(info.message, "rules[0]: missing field \"targets\""));
    if (pn_rule_set_parse_ex("rules.json", text, strlen(text), PN_RULES_TARGETS_OPTIONAL, &rs,
                             &info) != PN_OK)
        fail_msg("%s", info.message);
    const int32_t m = pn_feature_table_size(rs->rules[0].table);
    assert_int_equal(m, 6);
    for (int32_t i = 0; i < m; ++i)
        assert_true(fabs(rs->rules[0].target[i] - 1.0 / 6.0) < 1e-15);
    assert_true(rs->rules[1].target[cell_of(rs->rules[1].table, "0")] == 1.0);
    pn_rule_set_free(rs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_file),
        cmocka_unit_test(test_space_forms),
        cmocka_unit_test(test_space_too_large_to_build),
        cmocka_unit_test(test_errors_top_level),
        cmocka_unit_test(test_errors_space),
        cmocka_unit_test(test_errors_rules),
        cmocka_unit_test(test_error_from_file),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_context_file),
        cmocka_unit_test(test_refinements),
        cmocka_unit_test(test_lambda_p),
        cmocka_unit_test(test_smoothing_bounds),
        cmocka_unit_test(test_byte_order_mark),
        cmocka_unit_test(test_read_limits),
        cmocka_unit_test(test_context_smoothing_edges),
        cmocka_unit_test(test_context_errors),
        cmocka_unit_test(test_targets_optional),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
