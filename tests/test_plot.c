/* Tests of the plots of the command-line tool (apps/parnassus/plot.h): both
 * plots, in both formats, into a temporary directory. With PN_PLOT_KEEP set
 * to a directory, the files are written there and kept for viewing. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plot.h"

enum { NUM_POINTS = 61, MAX_RULES = 40, NUM_NAMES = 16 };

static char dir[512];
static int keep;

static const char *out_path(const char *name)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

/* Checks the file exists, is not trivially small and starts as its format
 * requires; PNGs must also be 900 x 600. Removes it unless kept. */
static void check_file(const char *name)
{
    const char *path = out_path(name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    unsigned char head[24] = {0};
    size_t got = fread(head, 1, sizeof head, f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long size = ftell(f);
    fclose(f);
    assert_int_equal(got, sizeof head);
    assert_true(size > 4000);
    if (strstr(name, ".png") || strstr(name, ".PNG")) {
        static const unsigned char magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
        assert_memory_equal(head, magic, sizeof magic);
        unsigned long w = (unsigned long)head[16] << 24 | (unsigned long)head[17] << 16 |
                          (unsigned long)head[18] << 8 | head[19];
        unsigned long h = (unsigned long)head[20] << 24 | (unsigned long)head[21] << 16 |
                          (unsigned long)head[22] << 8 | head[23];
        assert_int_equal(w, PN_PLOT_WIDTH);
        assert_int_equal(h, PN_PLOT_HEIGHT);
    } else {
        assert_memory_equal(head, "<?xml", 5);
    }
    if (!keep)
        assert_int_equal(remove(path), 0);
}

/* A made-up path: rules drop out one by one as log2 lambda_w falls. */
typedef struct fake_path {
    double x[NUM_POINTS], error[NUM_POINTS], norm[NUM_POINTS * MAX_RULES];
} fake_path;

static void make_path(fake_path *p, int num_rules)
{
    for (int j = 0; j < NUM_POINTS; ++j) {
        p->x[j] = -8.0 + 0.25 * j;
        p->error[j] = p->x[j] < -4.0 ? 0.0 : 2.6e-4 / (1.0 + exp(-1.5 * p->x[j]));
        for (int r = 0; r < num_rules; ++r) {
            double on = p->x[j] > -6.0 + 0.5 * r ? 1.0 : 0.0;
            p->norm[j * num_rules + r] = on * (0.025 + 0.04 / (1.0 + exp(p->x[j] + r)));
        }
    }
}

static const char *const names[NUM_NAMES] = {
    "soprano-pc",
    "bass-pc",
    "interval\xff\xfe-bad-utf8",
    "voicing",
    "a-very-long-rule-name-that-needs-shortening",
    "r6",
    "r7",
    "r8",
    "r9",
    "r10",
    "r11",
    "r12",
    "r13",
    "r14",
    "r15",
    "r16",
};

static void test_path_png_and_svg(void **state)
{
    (void)state;
    fake_path p;
    pn_error_info info = {PN_OK, ""};
    make_path(&p, 5);
    const char *title = "a1.txt \xE2\x80\x94 \xCE\xB1 = 0.8, \xCE\xBBp = 0.0001";
    assert_int_equal(pn_plot_path(out_path("path.png"), title, 5, names, NUM_POINTS, p.x, p.norm,
                                  p.error, &info),
                     PN_OK);
    check_file("path.png");
    assert_int_equal(pn_plot_path(out_path("path.svg"), title, 5, names, NUM_POINTS, p.x, p.norm,
                                  p.error, &info),
                     PN_OK);
    check_file("path.svg");
}

static void test_path_many_rules(void **state)
{
    (void)state;
    fake_path p;
    pn_error_info info = {PN_OK, ""};
    make_path(&p, NUM_NAMES);
    assert_int_equal(pn_plot_path(out_path("path16.png"), "16 rules", NUM_NAMES, names, NUM_POINTS,
                                  p.x, p.norm, p.error, &info),
                     PN_OK);
    check_file("path16.png");
    /* more rules than the legend holds; no names: "rule N" */
    make_path(&p, MAX_RULES);
    assert_int_equal(pn_plot_path(out_path("path40.svg"), "40 rules", MAX_RULES, NULL, NUM_POINTS,
                                  p.x, p.norm, p.error, &info),
                     PN_OK);
    check_file("path40.svg");
}

static void test_path_degenerate(void **state)
{
    (void)state;
    double x = 0.0, norm[2] = {0.0, 0.0}, error = 0.0;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_plot_path(out_path("one.PNG"), NULL, 2, NULL, 1, &x, norm, &error, &info),
                     PN_OK);
    check_file("one.PNG");
    double gap[3] = {-1.0, NAN, 1.0}, gap_norm[3] = {0.1, NAN, 0.2}, gap_err[3] = {1.0, 2.0, NAN};
    assert_int_equal(
        pn_plot_path(out_path("gap.svg"), "gaps", 1, names, 3, gap, gap_norm, gap_err, &info),
        PN_OK);
    check_file("gap.svg");
}

static void test_rule_errors(void **state)
{
    (void)state;
    double a[NUM_NAMES], b[NUM_NAMES];
    unsigned char selected[NUM_NAMES];
    for (int r = 0; r < NUM_NAMES; ++r) {
        selected[r] = (unsigned char)(r % 3 == 0 || r == 9);
        a[r] = selected[r] ? 1e-3 * r : 0.2 + 0.05 * (r % 5);
        b[r] = 0.12 + 0.02 * (r % 4);
    }
    pn_error_info info = {PN_OK, ""};
    const char *title = "selective vs non-selective";
    assert_int_equal(pn_plot_rule_errors(out_path("errors.png"), title, NUM_NAMES, names, a,
                                         "selective (log\xE2\x82\x82 \xCE\xBBw = 1)", b,
                                         "non-selective", selected, &info),
                     PN_OK);
    check_file("errors.png");
    assert_int_equal(pn_plot_rule_errors(out_path("errors.svg"), title, NUM_NAMES, names, a,
                                         "selective", b, "non-selective", selected, &info),
                     PN_OK);
    check_file("errors.svg");
    static const char *const short_names[4] = {"bass", "alto", "tenor", "sop"};
    assert_int_equal(pn_plot_rule_errors(out_path("errors4.png"), "one series", 4, short_names, a,
                                         "selective", NULL, NULL, NULL, &info),
                     PN_OK);
    check_file("errors4.png");
}

static void test_errors_are_reported(void **state)
{
    (void)state;
    double x = 0.0, norm = 0.1, error = 0.0;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(pn_plot_path(out_path("plot.pdf"), "t", 1, names, 1, &x, &norm, &error, &info),
                     PN_ERR_INVALID);
    assert_non_null(strstr(info.message, ".png or .svg"));
    info.message[0] = '\0';
    assert_int_equal(
        pn_plot_path(out_path("no-such-dir/plot.png"), "t", 1, names, 1, &x, &norm, &error, &info),
        PN_ERR_IO);
    assert_non_null(strstr(info.message, "cannot"));
    info.message[0] = '\0';
    assert_int_equal(
        pn_plot_path(out_path("no-such-dir/plot.svg"), "t", 1, names, 1, &x, &norm, &error, &info),
        PN_ERR_IO);
    assert_non_null(strstr(info.message, "cannot"));
    assert_int_equal(pn_plot_path(out_path("empty.png"), "t", 1, names, 0, &x, &norm, &error, NULL),
                     PN_ERR_INVALID);
    assert_int_equal(pn_plot_rule_errors(out_path("empty.png"), "t", 0, names, &error, "a", NULL,
                                         NULL, NULL, &info),
                     PN_ERR_INVALID);
    assert_int_equal(access(out_path("empty.png"), F_OK), -1);
}

/* A plot to a path that cannot be written fails, and the message names the
 * path. */
static void test_unwritable_path_is_named(void **state)
{
    (void)state;
    double a[2] = {0.1, 0.2};
    char path[1100];
    snprintf(path, sizeof path, "%s", out_path("no-such-dir/errors.png"));
    pn_error_info info = {PN_OK, ""};
    assert_int_not_equal(pn_plot_rule_errors(path, "t", 2, names, a, "a", NULL, NULL, NULL, &info),
                         PN_OK);
    assert_int_not_equal(info.code, PN_OK);
    assert_non_null(strstr(info.message, path));
}

static int setup(void **state)
{
    (void)state;
    const char *kept = getenv("PN_PLOT_KEEP");
    if (kept && kept[0]) {
        keep = 1;
        snprintf(dir, sizeof dir, "%s", kept);
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/pn-test-plot-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    pn_plot_shutdown();
    return keep ? 0 : rmdir(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_png_and_svg),    cmocka_unit_test(test_path_many_rules),
        cmocka_unit_test(test_path_degenerate),     cmocka_unit_test(test_rule_errors),
        cmocka_unit_test(test_errors_are_reported), cmocka_unit_test(test_unwritable_path_is_named),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
