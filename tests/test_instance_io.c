/* Tests of the instance readers and writer (docs/instance-format.md). */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parnassus/deoverlap.h"
#include "parnassus/file.h"
#include "parnassus/instance_io.h"

static const char FULL_EXAMPLE[] = "parnassus-instance 1\n"
                                   "n 4\n"
                                   "rules 2\n"
                                   "rule parity 2\n"
                                   "assign 0 1 0 1\n"
                                   "target 0.5 0.5\n"
                                   "rule low-high 2\n"
                                   "assign 0 0 1 1\n"
                                   "target 0.9 0.1\n";

static const char GROUPED_EXAMPLE[] = "parnassus-grouped 1\n"
                                      "n 4\n"
                                      "rules 2\n"
                                      "rule parity 2\n"
                                      "target 0.5 0.5\n"
                                      "rule low-high 2\n"
                                      "target 0.9 0.1\n"
                                      "groups 4\n"
                                      "1 0 0\n"
                                      "1 1 0\n"
                                      "1 0 1\n"
                                      "1 1 1\n";

/* ------------------------------------------------------------------------ */
/* Helpers */

/* Parses `size` bytes of `text` from an exactly sized heap copy, so that the
 * address sanitizer catches any read past the end. */
static pn_error parse_bytes(const char *name, const char *text, size_t size, pn_problem **out,
                            pn_instance_form *form, pn_error_info *info)
{
    char *copy = malloc(size ? size : 1);
    assert_non_null(copy);
    memcpy(copy, text, size);
    pn_error err = pn_instance_parse(name, copy, size, out, form, info);
    free(copy);
    return err;
}

static pn_problem *parse_ok(const char *text, pn_instance_form expected_form)
{
    pn_problem *prob = NULL;
    pn_instance_form form = (pn_instance_form)-1;
    pn_error_info info = {PN_OK, ""};
    pn_error err = parse_bytes("ok.txt", text, strlen(text), &prob, &form, &info);
    if (err != PN_OK)
        fail_msg("unexpected error: %s", info.message);
    assert_non_null(prob);
    assert_int_equal(form, expected_form);
    return prob;
}

/* Asserts a parse error whose message is "bad.txt:LINE: ..." and contains
 * `phrase`. */
static void expect_error(const char *text, int line, const char *phrase)
{
    pn_problem *prob = (pn_problem *)&prob; /* must be reset to NULL */
    pn_error_info info = {PN_OK, ""};
    pn_error err = parse_bytes("bad.txt", text, strlen(text), &prob, NULL, &info);
    if (err != PN_ERR_PARSE)
        fail_msg("expected a parse error, got %d: %s", (int)err, info.message);
    assert_null(prob);
    assert_int_equal(info.code, PN_ERR_PARSE);
    char prefix[64];
    snprintf(prefix, sizeof prefix, "bad.txt:%d: ", line);
    if (strncmp(info.message, prefix, strlen(prefix)) != 0)
        fail_msg("expected prefix \"%s\" in: %s", prefix, info.message);
    if (!strstr(info.message, phrase))
        fail_msg("expected \"%s\" in: %s", phrase, info.message);
}

static int64_t find_group(const pn_problem *prob, const int32_t *rows)
{
    const size_t K = (size_t)prob->num_rules;
    for (int64_t k = 0; k < prob->num_groups; ++k)
        if (memcmp(prob->group_rows + (size_t)k * K, rows, K * sizeof *rows) == 0)
            return k;
    return -1;
}

/* Same rules and targets (bit for bit) and the same set of groups. */
static void assert_same_problem(const pn_problem *a, const pn_problem *b, int same_group_order)
{
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->num_rules, b->num_rules);
    assert_int_equal(a->num_rows, b->num_rows);
    for (int32_t r = 0; r < a->num_rules; ++r) {
        assert_string_equal(a->rule_name[r], b->rule_name[r]);
        assert_int_equal(a->rule_start[r + 1], b->rule_start[r + 1]);
    }
    assert_memory_equal(a->target, b->target, (size_t)a->num_rows * sizeof *a->target);
    assert_int_equal(a->num_groups, b->num_groups);
    for (int64_t k = 0; k < a->num_groups; ++k) {
        const int32_t *rows = a->group_rows + (size_t)k * (size_t)a->num_rules;
        int64_t other = find_group(b, rows);
        assert_true(other >= 0);
        if (same_group_order)
            assert_int_equal(other, k);
        assert_int_equal(a->group_size[k], b->group_size[other]);
    }
}

static char *write_to_string(const pn_problem *prob)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    assert_non_null(f);
    pn_error_info info = {PN_OK, ""};
    pn_error err = pn_instance_write_grouped(f, prob, &info);
    if (err != PN_OK)
        fail_msg("write failed: %s", info.message);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(strlen(text), size);
    return text;
}

static void data_path(char *buf, size_t size, const char *file)
{
    const char *dir = getenv("PN_TEST_DATA");
    if (dir) {
        snprintf(buf, size, "%s/instances/%s", dir, file);
        return;
    }
    /* Run by hand: the data sit next to this source file. */
    const char *src = __FILE__;
    const char *slash = strrchr(src, '/');
    int dir_len = slash ? (int)(slash - src) : 1;
    snprintf(buf, size, "%.*s/data/instances/%s", dir_len, slash ? src : ".", file);
}

/* ------------------------------------------------------------------------ */
/* Valid input */

static void assert_example(const pn_problem *prob)
{
    assert_int_equal(prob->n, 4);
    assert_int_equal(prob->num_rules, 2);
    assert_int_equal(prob->num_rows, 4);
    assert_string_equal(prob->rule_name[0], "parity");
    assert_string_equal(prob->rule_name[1], "low-high");
    assert_int_equal(prob->rule_start[1], 2);
    const double targets[4] = {0.5, 0.5, 0.9, 0.1};
    assert_memory_equal(prob->target, targets, sizeof targets);
}

static void test_full_example(void **state)
{
    (void)state;
    pn_problem *prob = parse_ok(FULL_EXAMPLE, PN_FORM_FULL);
    assert_example(prob);
    /* Columns in order of first appearance: x0..x3 are all distinct. */
    const int32_t rows[4][2] = {{0, 2}, {1, 2}, {0, 3}, {1, 3}};
    assert_int_equal(prob->num_groups, 4);
    for (int k = 0; k < 4; ++k) {
        assert_memory_equal(prob->group_rows + 2 * k, rows[k], sizeof rows[k]);
        assert_int_equal(prob->group_size[k], 1);
    }
    pn_problem_free(prob);
}

static void test_grouped_example(void **state)
{
    (void)state;
    pn_problem *prob = parse_ok(GROUPED_EXAMPLE, PN_FORM_GROUPED);
    assert_example(prob);
    /* File order, global rows. */
    const int32_t rows[4][2] = {{0, 2}, {1, 2}, {0, 3}, {1, 3}};
    assert_int_equal(prob->num_groups, 4);
    for (int k = 0; k < 4; ++k) {
        assert_memory_equal(prob->group_rows + 2 * k, rows[k], sizeof rows[k]);
        assert_int_equal(prob->group_size[k], 1);
    }
    pn_problem_free(prob);
}

static void test_both_forms_agree(void **state)
{
    (void)state;
    pn_problem *full = parse_ok(FULL_EXAMPLE, PN_FORM_FULL);
    pn_problem *grouped = parse_ok(GROUPED_EXAMPLE, PN_FORM_GROUPED);
    assert_same_problem(full, grouped, 0);
    assert_same_problem(grouped, full, 0);
    pn_problem_free(full);
    pn_problem_free(grouped);
}

static void test_grouped_file_order_kept(void **state)
{
    (void)state;
    pn_problem *prob = parse_ok("parnassus-grouped 1\nn 5\nrules 2\n"
                                "rule a 2\ntarget 1 0\nrule b 3\ntarget 0 0 1\n"
                                "groups 3\n2 1 2\n1 0 0\n2 0 2\n",
                                PN_FORM_GROUPED);
    const int32_t rows[3][2] = {{1, 4}, {0, 2}, {0, 4}};
    const int64_t sizes[3] = {2, 1, 2};
    assert_int_equal(prob->num_groups, 3);
    for (int k = 0; k < 3; ++k) {
        assert_memory_equal(prob->group_rows + 2 * k, rows[k], sizeof rows[k]);
        assert_int_equal(prob->group_size[k], sizes[k]);
    }
    pn_problem_free(prob);
}

static void test_full_merges_columns_and_allows_unused_cells(void **state)
{
    (void)state;
    /* Raw inputs 0 and 3 share a column, so do 1, 4 and 5; cell 2 of rule
     * "b" is used by no input. */
    pn_problem *prob = parse_ok("parnassus-instance 1\nn 6\nrules 2\n"
                                "rule a 2\nassign 1 0 0 1 0 0\ntarget 0.25 0.75\n"
                                "rule b 3\nassign 1 0 1 1 0 0\ntarget 0.5 0.5 0\n",
                                PN_FORM_FULL);
    assert_int_equal(prob->num_groups, 3);
    const int32_t rows[3][2] = {{1, 3}, {0, 2}, {0, 3}};
    const int64_t sizes[3] = {2, 3, 1};
    for (int k = 0; k < 3; ++k) {
        assert_memory_equal(prob->group_rows + 2 * k, rows[k], sizeof rows[k]);
        assert_int_equal(prob->group_size[k], sizes[k]);
    }
    pn_problem_free(prob);
}

static void test_comments_tabs_crlf(void **state)
{
    (void)state;
    pn_problem *prob = parse_ok("# a comment before the header\r\n"
                                "parnassus-instance\t1 # trailing comment\r\n"
                                "n\t4\r\n"
                                "rules 2#comment right after a token\r\n"
                                "\r\n"
                                "rule parity 2\r\n"
                                "assign 0 1\r\n 0 1 # split over lines\r\n"
                                "target 0.5\t\t0.5\r\n"
                                "rule low-high 2 assign 0 0 1 1 target 0.9 0.1", /* no newline */
                                PN_FORM_FULL);
    pn_problem *plain = parse_ok(FULL_EXAMPLE, PN_FORM_FULL);
    assert_same_problem(prob, plain, 1);
    pn_problem_free(prob);
    pn_problem_free(plain);
}

static void test_number_forms(void **state)
{
    (void)state;
    /* Reals as strtod reads them; integers with a sign and leading zeros. */
    pn_problem *prob = parse_ok("parnassus-grouped 1\nn +0003\nrules 1\n"
                                "rule r 3\ntarget 2.5e-1 0x1p-1 .25\n"
                                "groups 2\n2 002\n1 +0\n",
                                PN_FORM_GROUPED);
    const double targets[3] = {0.25, 0.5, 0.25};
    assert_memory_equal(prob->target, targets, sizeof targets);
    assert_int_equal(prob->n, 3);
    assert_int_equal(prob->group_rows[0], 2);
    assert_int_equal(prob->group_size[0], 2);
    pn_problem_free(prob);
}

static void test_target_sum_tolerance(void **state)
{
    (void)state;
    pn_problem *prob = parse_ok("parnassus-grouped 1\nn 1\nrules 1\n"
                                "rule r 2\ntarget 0.5 0.5000009\ngroups 1\n1 0\n",
                                PN_FORM_GROUPED);
    pn_problem_free(prob);
    expect_error("parnassus-grouped 1\nn 1\nrules 1\n"
                 "rule r 2\ntarget 0.5 0.5000011\ngroups 1\n1 0\n",
                 5, "sum to 1.0000011, not 1");
}

static void test_large_n_grouped(void **state)
{
    (void)state;
    /* n beyond int32 is fine for the grouped form. */
    pn_problem *prob = parse_ok("parnassus-grouped 1\nn 9000000000000000000\nrules 1\n"
                                "rule r 2\ntarget 0.5 0.5\n"
                                "groups 2\n4500000000000000000 0\n4500000000000000000 1\n",
                                PN_FORM_GROUPED);
    assert_int_equal(prob->n, INT64_C(9000000000000000000));
    assert_int_equal(prob->group_size[1], INT64_C(4500000000000000000));
    pn_problem_free(prob);
}

static void test_null_info_and_form(void **state)
{
    (void)state;
    pn_problem *prob = NULL;
    assert_int_equal(pn_instance_parse("x", FULL_EXAMPLE, strlen(FULL_EXAMPLE), &prob, NULL, NULL),
                     PN_OK);
    assert_non_null(prob);
    pn_problem_free(prob);
    prob = NULL;
    assert_int_equal(pn_instance_parse("x", "nonsense", 8, &prob, NULL, NULL), PN_ERR_PARSE);
    assert_null(prob);
    assert_int_equal(pn_instance_parse("x", NULL, 0, &prob, NULL, NULL), PN_ERR_PARSE);
    assert_null(prob);
}

/* ------------------------------------------------------------------------ */
/* Malformed input: one test per kind of error in the format's list */

static void test_wrong_header(void **state)
{
    (void)state;
    expect_error("parnassus-instanse 1\nn 4\n", 1,
                 "expected header \"parnassus-instance 1\" or \"parnassus-grouped 1\", found "
                 "\"parnassus-instanse\"");
    expect_error("# only a comment\n\nrules 2\n", 3, "expected header");
}

static void test_empty_file(void **state)
{
    (void)state;
    expect_error("", 1, "expected header");
    expect_error("", 1, "found end of file");
    expect_error("  \n# nothing\n", 2, "found end of file");
}

static void test_wrong_version(void **state)
{
    (void)state;
    expect_error("parnassus-instance 2\n", 1,
                 "unsupported version \"2\" of \"parnassus-instance\"");
    expect_error("parnassus-grouped 1.0\n", 1,
                 "unsupported version \"1.0\" of \"parnassus-grouped\"");
    expect_error("parnassus-grouped\n", 1, "expected a version after \"parnassus-grouped\"");
}

static void test_missing_keyword(void **state)
{
    (void)state;
    expect_error("parnassus-instance 1\nn 4\nrule parity 2\n", 3,
                 "expected keyword \"rules\", found \"rule\"");
    expect_error("parnassus-instance 1\nrules 2\n", 2, "expected keyword \"n\", found \"rules\"");
    expect_error("parnassus-instance 1\nn 4\nrules 1\nrule parity 2\ntarget 0.5 0.5\n", 5,
                 "expected keyword \"assign\", found \"target\"");
    expect_error("parnassus-grouped 1\nn 4\nrules 1\nrule parity 2\nassign 0 1 0 1\n", 5,
                 "expected keyword \"target\", found \"assign\"");
    expect_error("parnassus-grouped 1\nn 4\nrules 1\nrule parity 2\ntarget 0.5 0.5\n"
                 "1 0\n",
                 6, "expected keyword \"groups\", found \"1\"");
}

static void test_missing_value(void **state)
{
    (void)state;
    expect_error("parnassus-instance 1\nn 4\nrules 1\nrule parity 2\n"
                 "assign 0 1 0\ntarget 0.5 0.5\n",
                 6, "rule \"parity\": expected 4 assign values, found \"target\"");
    expect_error("parnassus-instance 1\nn 4\nrules 2\nrule parity 2\n"
                 "assign 0 1 0 1\ntarget 0.5\nrule low-high 2\n",
                 7, "rule \"parity\": expected 2 target values, found \"rule\"");
    expect_error("parnassus-grouped 1\nn 2\nrules 2\nrule a 1\ntarget 1\nrule b 1\ntarget 1\n"
                 "groups 1\n2 0\n",
                 9, "group record 1: expected 2 cell indices, found end of file");
    expect_error("parnassus-instance 1\nn 4\nrules 1\nrule\n", 4,
                 "expected a rule name, found end of file");
    expect_error("parnassus-instance 1\nn 4\nrules 1\nrule parity assign\n", 4,
                 "rule \"parity\": expected the number of cells, found \"assign\"");
}

static void test_ends_early(void **state)
{
    (void)state;
    expect_error("parnassus-instance 1\nn 4\nrules 2\nrule parity 2\nassign 0 1\n", 5,
                 "rule \"parity\": expected 4 assign values, found end of file");
    expect_error("parnassus-instance 1\nn 4\nrules 2\nrule parity 2\nassign 0 1 0 1\n"
                 "target 0.5 0.5\n# the second rule is missing\n",
                 7, "expected keyword \"rule\", found end of file");
    expect_error("parnassus-grouped 1\nn 4\nrules 1\nrule r 2\ntarget 0.5 0.5\n"
                 "groups 3\n1 0\n1 1\n",
                 8, "expected 3 group records, found end of file");
    expect_error("parnassus-instance 1\nn", 2,
                 "expected an integer after \"n\", found end of file");
}

static void test_extra_token_after_last_rule(void **state)
{
    (void)state;
    char text[512];
    snprintf(text, sizeof text, "%sx\n", FULL_EXAMPLE);
    expect_error(text, 10, "unexpected token \"x\" after the last rule");
    /* One rule more than declared. */
    expect_error("parnassus-instance 1\nn 1\nrules 1\nrule a 1\nassign 0\ntarget 1\n"
                 "rule b 1\nassign 0\ntarget 1\n",
                 7, "unexpected token \"rule\" after the last rule");
    /* A trailing comment is not a token. */
    snprintf(text, sizeof text, "%s# done\n", FULL_EXAMPLE);
    pn_problem_free(parse_ok(text, PN_FORM_FULL));
}

static void test_extra_token_after_last_group(void **state)
{
    (void)state;
    char text[512];
    snprintf(text, sizeof text, "%s1 0 0\n", GROUPED_EXAMPLE);
    expect_error(text, 13, "unexpected token \"1\" after the last group");
    snprintf(text, sizeof text, "%s  end", GROUPED_EXAMPLE);
    expect_error(text, 13, "unexpected token \"end\" after the last group");
}

static void test_not_a_number(void **state)
{
    (void)state;
    expect_error("parnassus-instance 1\nn four\n", 2,
                 "expected an integer after \"n\", found \"four\"");
    expect_error("parnassus-grouped 1\nn 4\nrules 1\nrule r 2\ntarget 0.5 abc\n", 5,
                 "rule \"r\": expected 2 target values, found \"abc\"");
    expect_error("parnassus-grouped 1\nn 4\nrules 1\nrule r 2\ntarget 0.5 0.5x\n", 5,
                 "found \"0.5x\"");
    expect_error("parnassus-instance 1\nn 2\nrules 1\nrule r 2\nassign 0 one\n", 5,
                 "expected 2 assign values, found \"one\"");
    expect_error("parnassus-grouped 1\nn 2\nrules 1\nrule r 2\ntarget 0.5 0.5\ngroups 1\nx 0\n", 7,
                 "expected 1 group records, found \"x\"");
}

static void test_not_an_integer(void **state)
{
    (void)state;
    expect_error("parnassus-instance 1\nn 3.5\n", 2, "n \"3.5\" is not an integer");
    expect_error("parnassus-instance 1\nn 1e3\n", 2, "n \"1e3\" is not an integer");
    expect_error("parnassus-instance 1\nn 4\nrules 2.0\n", 3,
                 "the number of rules \"2.0\" is not an integer");
    expect_error("parnassus-instance 1\nn 2\nrules 1\nrule r 2\nassign 0 1.0\n", 5,
                 "rule \"r\": assign value \"1.0\" is not an integer");
    expect_error("parnassus-grouped 1\nn 2\nrules 1\nrule r 2\ntarget 0.5 0.5\ngroups 1\n2 0.\n", 7,
                 "group record 1: cell index \"0.\" is not an integer");
}

static void test_integer_overflow(void **state)
{
    (void)state;
    expect_error("parnassus-grouped 1\nn 9223372036854775808\n", 2,
                 "n \"9223372036854775808\" is out of range "
                 "[-9223372036854775808, 9223372036854775807]");
    expect_error("parnassus-grouped 1\nn -99999999999999999999\n", 2, "is out of range");
    expect_error("parnassus-grouped 1\nn 9223372036854775807\nrules 4294967297\n", 3,
                 "too many rules: 4294967297");
    expect_error("parnassus-instance 1\nn 1\nrules 1\nrule r 4294967297\n", 4,
                 "rule \"r\": size 4294967297 brings the total number of cells above 1073741823");
}

static void test_number_too_long(void **state)
{
    (void)state;
    char text[512];
    char digits[80];
    memset(digits, '0', 70);
    digits[70] = '\0';
    digits[1] = '.';
    snprintf(text, sizeof text, "parnassus-grouped 1\nn 1\nrules 1\nrule r 2\ntarget 1\n%s\n",
             digits);
    expect_error(text, 6, "number too long");
    /* 64 characters are still fine. */
    digits[64] = '\0';
    snprintf(text, sizeof text,
             "parnassus-grouped 1\nn 1\nrules 1\nrule r 2\ntarget 1\n%s\ngroups 1\n1 0\n", digits);
    pn_problem_free(parse_ok(text, PN_FORM_GROUPED));
}

static void test_cell_index_out_of_range_full(void **state)
{
    (void)state;
    expect_error("parnassus-instance 1\nn 4\nrules 2\nrule parity 2\nassign 0 1 0 1\n"
                 "target 0.5 0.5\nrule low-high 2\n"
                 "assign 0 0 1\n5\ntarget 0.9 0.1\n",
                 9, "cell index 5 out of range [0, 2) for rule \"low-high\"");
    expect_error("parnassus-instance 1\nn 4\nrules 1\nrule parity 2\nassign 0 -1 0 1\n", 5,
                 "cell index -1 out of range [0, 2) for rule \"parity\"");
}

static void test_cell_index_out_of_range_grouped(void **state)
{
    (void)state;
    expect_error("parnassus-grouped 1\nn 4\nrules 2\nrule parity 2\ntarget 0.5 0.5\n"
                 "rule low-high 2\ntarget 0.9 0.1\ngroups 4\n1 0 0\n1 0 2\n",
                 10, "cell index 2 out of range [0, 2) for rule \"low-high\"");
    expect_error("parnassus-grouped 1\nn 4\nrules 2\nrule parity 2\ntarget 0.5 0.5\n"
                 "rule low-high 2\ntarget 0.9 0.1\ngroups 4\n1 -3 0\n",
                 9, "cell index -3 out of range [0, 2) for rule \"parity\"");
}

static void test_target_out_of_range(void **state)
{
    (void)state;
    expect_error("parnassus-grouped 1\nn 1\nrules 1\nrule r 2\ntarget -0.5 1.5\n", 5,
                 "rule \"r\": target b_0 \"-0.5\" is out of range [0, 1]");
    expect_error("parnassus-grouped 1\nn 1\nrules 1\nrule r 2\ntarget 0 1e308\n", 5,
                 "rule \"r\": target b_1 \"1e308\" is out of range [0, 1]");
    /* above 1 within the sum's tolerance is rounding, and accepted */
    pn_problem_free(parse_ok("parnassus-grouped 1\nn 1\nrules 1\nrule r 1\ntarget 1.0000005\n"
                             "groups 1\n1 0\n",
                             PN_FORM_GROUPED));
}

/* A UTF-8 byte order mark is skipped; line numbers stay those of the file. */
static void test_byte_order_mark(void **state)
{
    (void)state;
    char text[512];
    snprintf(text, sizeof text, "\xEF\xBB\xBF%s", GROUPED_EXAMPLE);
    pn_problem *marked = parse_ok(text, PN_FORM_GROUPED);
    pn_problem *plain = parse_ok(GROUPED_EXAMPLE, PN_FORM_GROUPED);
    assert_same_problem(marked, plain, 1);
    pn_problem_free(marked);
    pn_problem_free(plain);
    expect_error("\xEF\xBB\xBFparnassus-grouped 1\nn 0\n", 2, "n must be >= 1 (got 0)");
    /* a mark anywhere else is not white space */
    expect_error("\xEF\xBB\xBF\xEF\xBB\xBFparnassus-grouped 1\n", 1,
                 "expected header \"parnassus-instance 1\" or \"parnassus-grouped 1\", found "
                 "\"\\xef\\xbb\\xbfparnassus-grouped\"");
}

static void test_non_finite_target(void **state)
{
    (void)state;
    expect_error("parnassus-grouped 1\nn 1\nrules 1\nrule r 2\ntarget 0.5 nan\n", 5,
                 "rule \"r\": target b_1 is not a finite number (\"nan\")");
    expect_error("parnassus-grouped 1\nn 1\nrules 1\nrule r 2\ntarget inf 0\n", 5,
                 "target b_0 is not a finite number");
    expect_error("parnassus-grouped 1\nn 1\nrules 1\nrule r 2\ntarget 1e999 0\n", 5,
                 "target b_0 is not a finite number");
}

static void test_targets_do_not_sum_to_one(void **state)
{
    (void)state;
    expect_error("parnassus-instance 1\nn 2\nrules 1\nrule x 2\nassign 0 1\ntarget 0.5\n0.2\n", 7,
                 "targets of rule \"x\" sum to 0.7, not 1 (tolerance 1e-6)");
}

static void test_n_not_positive(void **state)
{
    (void)state;
    expect_error("parnassus-instance 1\nn 0\n", 2, "n must be >= 1 (got 0)");
    expect_error("parnassus-grouped 1\nn -4\n", 2, "n must be >= 1 (got -4)");
}

static void test_rules_not_positive(void **state)
{
    (void)state;
    expect_error("parnassus-instance 1\nn 4\nrules 0\n", 3,
                 "the number of rules must be >= 1 (got 0)");
}

static void test_rule_size_not_positive(void **state)
{
    (void)state;
    expect_error("parnassus-instance 1\nn 4\nrules 1\nrule parity 0\n", 4,
                 "rule \"parity\": size must be >= 1 (got 0)");
    expect_error("parnassus-instance 1\nn 4\nrules 1\nrule parity -2\n", 4,
                 "rule \"parity\": size must be >= 1 (got -2)");
}

static void test_groups_not_positive(void **state)
{
    (void)state;
    expect_error("parnassus-grouped 1\nn 4\nrules 1\nrule r 1\ntarget 1\ngroups 0\n", 6,
                 "the number of groups must be >= 1 (got 0)");
    expect_error("parnassus-grouped 1\nn 4\nrules 1\nrule r 1\ntarget 1\ngroups 5\n", 6,
                 "5 groups, but n is only 4");
}

static void test_count_not_positive(void **state)
{
    (void)state;
    expect_error("parnassus-grouped 1\nn 4\nrules 1\nrule r 2\ntarget 0.5 0.5\ngroups 2\n"
                 "4 0\n0 1\n",
                 8, "group record 2: count must be >= 1 (got 0)");
}

static void test_counts_do_not_sum_to_n(void **state)
{
    (void)state;
    expect_error("parnassus-grouped 1\nn 4\nrules 1\nrule r 2\ntarget 0.5 0.5\ngroups 2\n"
                 "2 0\n1 1\n",
                 8, "group counts sum to 3, but n is 4");
    expect_error("parnassus-grouped 1\nn 4\nrules 2\nrule parity 2\ntarget 0.5 0.5\n"
                 "rule low-high 2\ntarget 0.9 0.1\ngroups 3\n"
                 "1 0 0\n2 1 0\n2 0 1\n",
                 11, "group counts sum to at least 5, but n is 4");
    /* Huge counts must not overflow the sum. */
    expect_error("parnassus-grouped 1\nn 9223372036854775807\nrules 1\nrule r 2\n"
                 "target 0.5 0.5\ngroups 2\n9223372036854775807 0\n9223372036854775807 1\n",
                 8, "group counts sum to at least 18446744073709551614, but n is");
}

static void test_repeated_group_record(void **state)
{
    (void)state;
    expect_error("parnassus-grouped 1\nn 4\nrules 2\nrule parity 2\ntarget 0.5 0.5\n"
                 "rule low-high 2\ntarget 0.9 0.1\ngroups 4\n"
                 "1 0 0\n1 1 0\n1 0 0\n1 1 1\n",
                 11, "group record repeats record on line 9");
}

static void test_repeated_group_record_among_many(void **state)
{
    (void)state;
    /* Enough records to make the record table grow several times. */
    enum { RECORDS = 3000 };
    size_t cap = 64 * RECORDS + 256;
    char *text = malloc(cap);
    assert_non_null(text);
    char targets[512] = "target 1";
    for (int i = 1; i < 100; ++i)
        strcat(targets, " 0");
    int len =
        snprintf(text, cap,
                 "parnassus-grouped 1\nn %d\nrules 2\nrule a 100\n%s\nrule b 100\n%s\ngroups %d\n",
                 RECORDS + 1, targets, targets, RECORDS + 1);
    for (int k = 0; k < RECORDS; ++k)
        len += snprintf(text + len, cap - (size_t)len, "1 %d %d\n", k % 100, k / 100);
    /* Line 9 holds record 0 = (0, 0); repeat record 1234 = (34, 12). */
    len += snprintf(text + len, cap - (size_t)len, "1 34 12\n");
    expect_error(text, 9 + RECORDS, "group record repeats record on line 1243");
    free(text);
}

static void test_nul_bytes(void **state)
{
    (void)state;
    static const char name_with_nul[] = "parnassus-grouped 1\nn 1\nrules 1\nrule a\0b 1\n";
    pn_problem *prob = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(
        parse_bytes("bad.txt", name_with_nul, sizeof name_with_nul - 1, &prob, NULL, &info),
        PN_ERR_PARSE);
    assert_null(prob);
    assert_non_null(strstr(info.message, "bad.txt:4: rule name \"a\\x00b\" contains a NUL byte"));

    static const char number_with_nul[] = "parnassus-grouped 1\nn 1\0\n";
    assert_int_equal(
        parse_bytes("bad.txt", number_with_nul, sizeof number_with_nul - 1, &prob, NULL, &info),
        PN_ERR_PARSE);
    assert_non_null(strstr(info.message, "bad.txt:2: expected an integer after \"n\""));
}

static void test_long_token_is_shortened_in_message(void **state)
{
    (void)state;
    char text[600] = "parnassus-instance 1\nn ";
    size_t len = strlen(text);
    memset(text + len, 'z', 400);
    text[len + 400] = '\0';
    pn_problem *prob = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(parse_bytes("bad.txt", text, strlen(text), &prob, NULL, &info), PN_ERR_PARSE);
    assert_non_null(strstr(info.message, "number too long"));
    assert_non_null(strstr(info.message, "zzz\"..."));
    assert_true(strlen(info.message) < 200);
}

/* ------------------------------------------------------------------------ */
/* Huge numbers in the header, short files: fail where the file ends */

static void test_huge_n_full_form(void **state)
{
    (void)state;
    expect_error("parnassus-instance 1\nn 2000000000\nrules 2\nrule parity 2\nassign 0 1 0 1\n", 5,
                 "rule \"parity\": expected 2000000000 assign values, found end of file");
    expect_error("parnassus-instance 1\nn 999999999999\nrules 2\n", 2,
                 "n = 999999999999 is too large for the full form (at most 2147483647)");
}

static void test_huge_counts_grouped_form(void **state)
{
    (void)state;
    expect_error("parnassus-grouped 1\nn 999999999999\nrules 1\nrule r 2\ntarget 0.5 0.5\n"
                 "groups 999999999\n1 0\n1 1\n1 2\n",
                 9, "cell index 2 out of range");
    expect_error("parnassus-grouped 1\nn 999999999999\nrules 1\nrule r 2\ntarget 0.5 0.5\n"
                 "groups 999999999\n1 0\n1 1\n",
                 8, "expected 999999999 group records, found end of file");
}

static void test_huge_rule_count(void **state)
{
    (void)state;
    expect_error("parnassus-grouped 1\nn 4\nrules 2147483647\nrule r 1\ntarget 1\n", 5,
                 "expected keyword \"rule\", found end of file");
}

static void test_huge_rule_size(void **state)
{
    (void)state;
    expect_error("parnassus-grouped 1\nn 4\nrules 1\nrule r 1000000000\ntarget 0.5 0.5\n", 5,
                 "rule \"r\": expected 1000000000 target values, found end of file");
    expect_error("parnassus-grouped 1\nn 4\nrules 2\nrule r 1\ntarget 1\n"
                 "rule s 1073741823\n",
                 6, "rule \"s\": size 1073741823 brings the total number of cells above");
    expect_error("parnassus-grouped 1\nn 4\nrules 2\nrule r 1073741823\ntarget 1\n", 5,
                 "expected 1073741823 target values, found end of file");
    expect_error("parnassus-grouped 1\nn 4\nrules 2\nrule r 1073741824\n", 4,
                 "rule \"r\": size 1073741824 brings the total number of cells above 1073741823");
}

/* ------------------------------------------------------------------------ */
/* Truncation: every prefix of a valid file either is the whole content or
 * fails cleanly with a line inside the prefix */

static int64_t lines_in(const char *text, size_t size)
{
    int64_t lines = 1;
    for (size_t i = 0; i + 1 < size; ++i)
        lines += text[i] == '\n';
    return lines;
}

static void check_every_prefix(const char *text)
{
    size_t size = strlen(text);
    size_t complete = size; /* prefixes at least this long hold every token */
    while (complete > 0 && strchr(" \t\r\n", text[complete - 1]))
        complete--;
    for (size_t len = 0; len <= size; ++len) {
        pn_problem *prob = NULL;
        pn_error_info info = {PN_OK, ""};
        pn_error err = parse_bytes("cut.txt", text, len, &prob, NULL, &info);
        if (len >= complete) {
            if (err != PN_OK)
                fail_msg("prefix of %zu bytes: %s", len, info.message);
            assert_non_null(prob);
            pn_problem_free(prob);
            continue;
        }
        if (err != PN_ERR_PARSE)
            fail_msg("prefix of %zu bytes: expected a parse error, got %d", len, (int)err);
        assert_null(prob);
        long line = 0;
        if (sscanf(info.message, "cut.txt:%ld:", &line) != 1)
            fail_msg("prefix of %zu bytes: bad message %s", len, info.message);
        assert_true(line >= 1 && line <= lines_in(text, len));
    }
}

static void test_truncated_full(void **state)
{
    (void)state;
    check_every_prefix(FULL_EXAMPLE);
    check_every_prefix("# comment\r\nparnassus-instance 1 n 3 rules 2 # c\n"
                       "rule a 3 assign 2 1 0 target 0.25 0.25 0.5\n"
                       "rule b 1 assign 0 0 0 target 1\n\n");
}

static void test_truncated_grouped(void **state)
{
    (void)state;
    check_every_prefix(GROUPED_EXAMPLE);
    check_every_prefix("parnassus-grouped 1\nn 10\nrules 2\nrule a 2 target 0.5 0.5\n"
                       "rule b 3 target 0 0.5 0.5\ngroups 3\n5 0 2\n3 1 1\n2 1 2\n");
}

/* ------------------------------------------------------------------------ */
/* Writing */

static uint64_t rng_state;

static uint32_t rng_next(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}

typedef struct random_cells {
    int64_t n;
    int32_t *cells; /* rule-major */
} random_cells;

static int random_cell_source(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells)
{
    const random_cells *rc = ctx;
    memcpy(cells, rc->cells + rule * rc->n + first, (size_t)count * sizeof *cells);
    return 0;
}

/* A random problem: random rules, targets (some zero) and raw assignment. */
static pn_problem *random_problem(void)
{
    int32_t K = 1 + (int32_t)(rng_next() % 5);
    int64_t n = 1 + (int64_t)(rng_next() % 300);
    int32_t sizes[5];
    char names[5][16];
    const char *name_ptrs[5];
    for (int32_t r = 0; r < K; ++r) {
        sizes[r] = 1 + (int32_t)(rng_next() % 7);
        snprintf(names[r], sizeof names[r], "rule-%d", (int)r);
        name_ptrs[r] = names[r];
    }
    pn_problem *prob = NULL;
    assert_int_equal(pn_problem_create(n, K, sizes, name_ptrs, &prob, NULL), PN_OK);
    for (int32_t r = 0; r < K; ++r) {
        double sum = 0.0;
        double *b = prob->target + prob->rule_start[r];
        for (int32_t i = 0; i < sizes[r]; ++i) {
            b[i] = rng_next() % 4 == 0 ? 0.0 : (double)rng_next() / 4294967296.0;
            sum += b[i];
        }
        if (sum == 0.0) {
            b[0] = 1.0;
            sum = 1.0;
        }
        for (int32_t i = 0; i < sizes[r]; ++i)
            b[i] /= sum;
    }
    random_cells rc = {n, malloc((size_t)(n * K) * sizeof(int32_t))};
    assert_non_null(rc.cells);
    for (int32_t r = 0; r < K; ++r)
        for (int64_t j = 0; j < n; ++j)
            rc.cells[r * n + j] = (int32_t)(rng_next() % (uint32_t)sizes[r]);
    assert_int_equal(pn_deoverlap(prob, random_cell_source, &rc, NULL), PN_OK);
    free(rc.cells);
    assert_int_equal(pn_problem_validate(prob, NULL), PN_OK);
    return prob;
}

static void test_write_parse_round_trip(void **state)
{
    (void)state;
    rng_state = 12345;
    for (int trial = 0; trial < 200; ++trial) {
        pn_problem *prob = random_problem();
        char *text = write_to_string(prob);
        pn_problem *back = parse_ok(text, PN_FORM_GROUPED);
        assert_same_problem(prob, back, 1);
        /* Writing again gives the very same text. */
        char *again = write_to_string(back);
        assert_string_equal(text, again);
        free(again);
        free(text);
        pn_problem_free(back);
        pn_problem_free(prob);
    }
}

static void test_write_example(void **state)
{
    (void)state;
    pn_problem *prob = parse_ok(FULL_EXAMPLE, PN_FORM_FULL);
    char *text = write_to_string(prob);
    assert_string_equal(text, "parnassus-grouped 1\n"
                              "n 4\n"
                              "rules 2\n"
                              "rule parity 2\n"
                              "target 0.5 0.5\n"
                              "rule low-high 2\n"
                              "target 0.90000000000000002 0.10000000000000001\n"
                              "groups 4\n"
                              "1 0 0\n"
                              "1 1 0\n"
                              "1 0 1\n"
                              "1 1 1\n");
    free(text);
    pn_problem_free(prob);
}

static void test_write_rejects_unwritable_name(void **state)
{
    (void)state;
    const char *bad_names[] = {"two words", "hash#tag", "", "tab\there"};
    for (size_t i = 0; i < sizeof bad_names / sizeof *bad_names; ++i) {
        pn_problem *prob = parse_ok(GROUPED_EXAMPLE, PN_FORM_GROUPED);
        free(prob->rule_name[1]);
        prob->rule_name[1] = malloc(strlen(bad_names[i]) + 1);
        assert_non_null(prob->rule_name[1]);
        strcpy(prob->rule_name[1], bad_names[i]);
        FILE *f = fopen("/dev/null", "w");
        assert_non_null(f);
        pn_error_info info = {PN_OK, ""};
        assert_int_equal(pn_instance_write_grouped(f, prob, &info), PN_ERR_INVALID);
        assert_non_null(strstr(info.message, "rule 2: name"));
        fclose(f);
        pn_problem_free(prob);
    }
}

static void test_write_rejects_invalid_problem(void **state)
{
    (void)state;
    pn_problem *prob = parse_ok(GROUPED_EXAMPLE, PN_FORM_GROUPED);
    prob->group_size[0] = 2; /* counts now sum to 5 */
    FILE *f = fopen("/dev/null", "w");
    assert_non_null(f);
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_instance_write_grouped(f, prob, &info), PN_ERR_INVALID);
    fclose(f);
    pn_problem_free(prob);
}

/* ------------------------------------------------------------------------ */
/* Files */

static void test_read_example_files(void **state)
{
    (void)state;
    char path[1024];
    pn_problem *full = NULL, *grouped = NULL;
    pn_instance_form form;
    pn_error_info info = {PN_OK, ""};
    data_path(path, sizeof path, "example-full.txt");
    if (pn_instance_read(path, &full, &form, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_int_equal(form, PN_FORM_FULL);
    data_path(path, sizeof path, "example-grouped.txt");
    if (pn_instance_read(path, &grouped, &form, &info) != PN_OK)
        fail_msg("%s", info.message);
    assert_int_equal(form, PN_FORM_GROUPED);
    assert_same_problem(full, grouped, 1);
    pn_problem_free(full);
    pn_problem_free(grouped);
}

static void test_read_reports_path_and_line(void **state)
{
    (void)state;
    char path[1024];
    char expected[1100];
    pn_problem *prob = NULL;
    pn_error_info info = {PN_OK, ""};
    data_path(path, sizeof path, "bad-counts.txt");
    assert_int_equal(pn_instance_read(path, &prob, NULL, &info), PN_ERR_PARSE);
    assert_null(prob);
    snprintf(expected, sizeof expected, "%s:8: group counts sum to 3, but n is 4", path);
    assert_string_equal(info.message, expected);
}

static void test_read_missing_file(void **state)
{
    (void)state;
    pn_problem *prob = (pn_problem *)&prob;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_instance_read("no/such/instance.txt", &prob, NULL, &info), PN_ERR_IO);
    assert_null(prob);
    assert_int_equal(info.code, PN_ERR_IO);
    assert_non_null(strstr(info.message, "no/such/instance.txt"));
    assert_non_null(strstr(info.message, "No such file or directory"));
}

static void test_read_directory(void **state)
{
    (void)state;
    pn_problem *prob = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_instance_read(".", &prob, NULL, &info), PN_ERR_IO);
    assert_null(prob);
    assert_string_equal(info.message, ".: is a directory");
}

/* An endless stream stops at the 64 MiB limit instead of being read whole. */
static void test_read_endless(void **state)
{
    (void)state;
    pn_problem *prob = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_instance_read("/dev/zero", &prob, NULL, &info), PN_ERR_PARSE);
    assert_null(prob);
    assert_string_equal(info.message, "/dev/zero: larger than the limit of 64 MiB");
}

/* pn_file_read: the whole file, NUL-terminated; errors name the file. */
static void test_file_read(void **state)
{
    (void)state;
    char path[] = "/tmp/pn-file-read-XXXXXX";
    FILE *f = fdopen(mkstemp(path), "wb");
    assert_non_null(f);
    static char big[200000];
    for (size_t i = 0; i < sizeof big; ++i)
        big[i] = (char)('a' + i % 26);
    assert_int_equal(fwrite(big, 1, sizeof big, f), sizeof big);
    fclose(f);
    char *data = NULL;
    size_t size = 0;
    pn_error_info info = {0};
    assert_int_equal(pn_file_read(path, 0, &data, &size, &info), PN_OK);
    assert_int_equal(size, sizeof big);
    assert_memory_equal(data, big, sizeof big);
    assert_int_equal(data[size], '\0');
    free(data);
    /* too large for the limit */
    assert_int_equal(pn_file_read(path, 1000, &data, &size, &info), PN_ERR_PARSE);
    assert_null(data);
    char expected[128];
    snprintf(expected, sizeof expected, "%s: larger than the limit of 1000 bytes", path);
    assert_string_equal(info.message, expected);
    /* exactly at the limit, and one byte under it */
    assert_int_equal(pn_file_read(path, sizeof big, &data, &size, &info), PN_OK);
    assert_int_equal(size, sizeof big);
    free(data);
    assert_int_equal(pn_file_read(path, sizeof big - 1, &data, &size, &info), PN_ERR_PARSE);
    assert_null(data);
    /* a stream with no size: read up to the limit only */
    assert_int_equal(pn_file_read("/dev/zero", 3 << 20, &data, &size, &info), PN_ERR_PARSE);
    assert_null(data);
    assert_string_equal(info.message, "/dev/zero: larger than the limit of 3 MiB");
    /* the byte order mark */
    assert_int_equal(pn_file_bom_length("\xEF\xBB\xBF{}", 5), 3);
    assert_int_equal(pn_file_bom_length("\xEF\xBB\xBF", 2), 0);
    assert_int_equal(pn_file_bom_length("{}", 2), 0);
    assert_int_equal(pn_file_bom_length(NULL, 0), 0);
    remove(path);
    /* missing */
    assert_int_equal(pn_file_read(path, 0, &data, &size, &info), PN_ERR_IO);
    assert_non_null(strstr(info.message, path));
    assert_non_null(strstr(info.message, "cannot open"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_read),
        cmocka_unit_test(test_full_example),
        cmocka_unit_test(test_grouped_example),
        cmocka_unit_test(test_both_forms_agree),
        cmocka_unit_test(test_grouped_file_order_kept),
        cmocka_unit_test(test_full_merges_columns_and_allows_unused_cells),
        cmocka_unit_test(test_comments_tabs_crlf),
        cmocka_unit_test(test_number_forms),
        cmocka_unit_test(test_target_sum_tolerance),
        cmocka_unit_test(test_large_n_grouped),
        cmocka_unit_test(test_null_info_and_form),
        cmocka_unit_test(test_wrong_header),
        cmocka_unit_test(test_empty_file),
        cmocka_unit_test(test_wrong_version),
        cmocka_unit_test(test_missing_keyword),
        cmocka_unit_test(test_missing_value),
        cmocka_unit_test(test_ends_early),
        cmocka_unit_test(test_extra_token_after_last_rule),
        cmocka_unit_test(test_extra_token_after_last_group),
        cmocka_unit_test(test_not_a_number),
        cmocka_unit_test(test_not_an_integer),
        cmocka_unit_test(test_integer_overflow),
        cmocka_unit_test(test_number_too_long),
        cmocka_unit_test(test_cell_index_out_of_range_full),
        cmocka_unit_test(test_cell_index_out_of_range_grouped),
        cmocka_unit_test(test_target_out_of_range),
        cmocka_unit_test(test_byte_order_mark),
        cmocka_unit_test(test_non_finite_target),
        cmocka_unit_test(test_targets_do_not_sum_to_one),
        cmocka_unit_test(test_n_not_positive),
        cmocka_unit_test(test_rules_not_positive),
        cmocka_unit_test(test_rule_size_not_positive),
        cmocka_unit_test(test_groups_not_positive),
        cmocka_unit_test(test_count_not_positive),
        cmocka_unit_test(test_counts_do_not_sum_to_n),
        cmocka_unit_test(test_repeated_group_record),
        cmocka_unit_test(test_repeated_group_record_among_many),
        cmocka_unit_test(test_nul_bytes),
        cmocka_unit_test(test_long_token_is_shortened_in_message),
        cmocka_unit_test(test_huge_n_full_form),
        cmocka_unit_test(test_huge_counts_grouped_form),
        cmocka_unit_test(test_huge_rule_count),
        cmocka_unit_test(test_huge_rule_size),
        cmocka_unit_test(test_truncated_full),
        cmocka_unit_test(test_truncated_grouped),
        cmocka_unit_test(test_write_parse_round_trip),
        cmocka_unit_test(test_write_example),
        cmocka_unit_test(test_write_rejects_unwritable_name),
        cmocka_unit_test(test_write_rejects_invalid_problem),
        cmocka_unit_test(test_read_example_files),
        cmocka_unit_test(test_read_reports_path_and_line),
        cmocka_unit_test(test_read_missing_file),
        cmocka_unit_test(test_read_directory),
        cmocka_unit_test(test_read_endless),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
