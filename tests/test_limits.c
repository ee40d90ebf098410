/* Tests of the memory limit (parnassus/memory.h), of rule sets larger than
 * the old 256-rule merge, and of stopping a solve from its progress
 * callback: the reproductions of an outside attack on the engine. */
#define _GNU_SOURCE /* mallinfo2; fork, pipe */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "interpose.h"
#include "parnassus/deoverlap.h"
#include "parnassus/rules.h"
#include "parnassus/solver.h"

/* ------------------------------------------------------------------------ */
/* Helpers */

/* A rule set of `count` rules named r0, r1, ... with the features taken in
 * turn from `features` (NULL-terminated), uniform targets (the "feature
 * file" form), over `space` (a JSON fragment such as
 * "\"space\":{...},", or "" for the default space). */
static char *rule_set_text(const char *space, const char *const *features, int count)
{
    size_t cap = 256 + (size_t)count * 96, len = 0;
    char *text = malloc(cap);
    assert_non_null(text);
    len +=
        (size_t)snprintf(text + len, cap - len,
                         "{\"format\":\"parnassus-rules/1\",\"name\":\"t\",%s\"rules\":[", space);
    int nf = 0;
    while (features[nf])
        nf++;
    for (int i = 0; i < count; ++i)
        len += (size_t)snprintf(text + len, cap - len, "%s{\"name\":\"r%d\",\"feature\":\"%s\"}",
                                i ? "," : "", i, features[i % nf]);
    len += (size_t)snprintf(text + len, cap - len, "]}");
    assert_true(len < cap);
    return text;
}

static pn_error parse_limited(const char *text, int64_t max_memory, pn_rule_set **rs,
                              pn_error_info *info)
{
    pn_rule_set_options opts;
    pn_rule_set_options_default(&opts);
    opts.flags = PN_RULES_TARGETS_OPTIONAL;
    opts.max_memory = max_memory;
    return pn_rule_set_parse_opt("w.json", text, strlen(text), &opts, rs, info);
}

static int64_t heap_in_use(void)
{
    const struct mallinfo2 mi = mallinfo2();
    return (int64_t)(mi.uordblks + mi.hblkhd);
}

/* ------------------------------------------------------------------------ */
/* Refusals before allocating */

/* A rule over every sonority of the default space, alone or repeated up to
 * the format's 4096 rules, is refused at its feature before its value table
 * is built, naming the file, the field and the limit. */
static void test_full_space_rules_refused(void **state)
{
    (void)state;
    static const char *const full[] = {"w(1,2,3,4)", NULL};
    const int counts[] = {1, 8, 300, PN_RULES_MAX_RULES};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; ++c) {
        char *text = rule_set_text("", full, counts[c]);
        pn_rule_set *rs = NULL;
        pn_error_info info = {PN_OK, ""};
        const int64_t before = INTERPOSE_WORKS ? heap_in_use() : 0;
        assert_int_equal(parse_limited(text, PN_DEFAULT_MAX_MEMORY, &rs, &info), PN_ERR_LIMIT);
        if (INTERPOSE_WORKS)
            assert_true(heap_in_use() - before < ((int64_t)1 << 20)); /* nothing kept */
        assert_null(rs);
        assert_int_equal(info.code, PN_ERR_LIMIT);
        assert_non_null(strstr(info.message, "w.json: rules[0].feature: w(1,2,3,4)"));
        assert_non_null(strstr(info.message, "9150625 values"));
        assert_non_null(strstr(info.message, "over the memory limit of 1 GiB"));
        free(text);
    }
}

/* The limit is the caller's: a rule of 3025 cells (a 70 MiB Hessian) reads
 * under the default and is refused under 16 MiB. */
static void test_limit_is_the_callers(void **state)
{
    (void)state;
    static const char *const pair[] = {"w(1,2)", NULL};
    char *text = rule_set_text("", pair, 1);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(parse_limited(text, (int64_t)16 << 20, &rs, &info), PN_ERR_LIMIT);
    assert_non_null(strstr(info.message, "w.json: rules[0].feature: w(1,2) has up to 3025 values"));
    assert_non_null(strstr(info.message, "over the memory limit of 16 MiB"));
    assert_int_equal(parse_limited(text, PN_DEFAULT_MAX_MEMORY, &rs, &info), PN_OK);
    assert_int_equal(pn_feature_table_size(rs->rules[0].table), 55 * 55);
    assert_true(rs->table_bytes >= pn_feature_table_bytes(rs->rules[0].table));
    pn_rule_set_free(rs);
    /* a limit outside its range is an error of its own */
    assert_int_equal(parse_limited(text, 0, &rs, &info), PN_ERR_INVALID);
    assert_non_null(strstr(info.message, "memory limit"));
    free(text);
}

/* Many small rules over the whole space: each rule is cheap, but the
 * de-overlap's table of groups (K' x K) is not; pn_rule_set_build_problem
 * refuses before de-overlapping. */
static void test_deoverlap_refused(void **state)
{
    (void)state;
    static const char *const one[] = {"w(1)", "w(2)", "w(3)", "w(4)", NULL};
    char *text = rule_set_text("", one, 60);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(parse_limited(text, PN_DEFAULT_MAX_MEMORY, &rs, &info), PN_OK);
    pn_problem *prob = NULL;
    assert_int_equal(pn_rule_set_build_problem(rs, &prob, NULL, &info), PN_ERR_LIMIT);
    assert_null(prob);
    assert_non_null(strstr(info.message, "de-overlapping 60 rules over 9150625 sonorities"));
    assert_non_null(strstr(info.message, "over the memory limit of 1 GiB"));
    pn_rule_set_free(rs);
    free(text);
}

/* The estimates are upper bounds of what is allocated, and not wildly
 * above it (glibc heap counts; sanitizers keep their own heaps). */
static void test_estimates_bound_the_allocations(void **state)
{
    (void)state;
    static const char *const features[] = {"w(1,2)",
                                           "mod12(diff(w(4,1)))",
                                           "sort(mod12(w(1,2,3,4)))",
                                           "order(w(1,2,3))",
                                           "diff(w(2,3))",
                                           "abs(diff(w(1,4)))",
                                           NULL};
    const char *space = "\"space\":{\"ranges\":[[60,79],[55,72],[48,67],[36,60]]},";
    char *text = rule_set_text(space, features, 6);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    const int64_t before_read = heap_in_use();
    assert_int_equal(parse_limited(text, PN_DEFAULT_MAX_MEMORY, &rs, &info), PN_OK);
    const int64_t read_bytes = heap_in_use() - before_read;
    for (int r = 0; r < rs->num_rules; ++r) {
        int64_t bytes, cells;
        pn_feature_cost(rs->rules[r].feature, &rs->space, &bytes, &cells);
        assert_true(cells >= pn_feature_table_size(rs->rules[r].table));
        assert_true(bytes >= pn_feature_table_bytes(rs->rules[r].table));
    }
    pn_problem *prob = NULL;
    assert_int_equal(pn_rule_set_build_problem(rs, &prob, NULL, &info), PN_OK);
    pn_settings s;
    pn_settings_default(&s);
    pn_solver *solver = NULL;
    const int64_t before = heap_in_use();
    assert_int_equal(pn_solver_create(prob, &s, &solver, &info), PN_OK);
    const int64_t created = heap_in_use() - before, estimate = pn_solver_bytes(prob);
    if (INTERPOSE_WORKS) {
        assert_true(read_bytes <= rs->table_bytes + ((int64_t)1 << 20));
        assert_true(created <= estimate);
        assert_true(estimate <= 2 * created + ((int64_t)1 << 20));
    }
    pn_solver_free(solver);
    /* below its estimate the solver is refused */
    s.max_memory = estimate - 1;
    assert_int_equal(pn_solver_create(prob, &s, &solver, &info), PN_ERR_LIMIT);
    assert_null(solver);
    assert_non_null(strstr(info.message, "the solver needs about"));
    pn_problem_free(prob);
    pn_rule_set_free(rs);
    free(text);
}

/* Peak resident bytes of the process since clear_refs, from /proc. */
static int64_t status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    int64_t kib = -1;
    const size_t len = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, len) == 0)
            kib = strtoll(line + len, NULL, 10);
    if (f)
        fclose(f);
    return kib;
}

/* The de-overlap's estimate bounds its measured peak, also in the regime
 * of a hashed pair map that doubles (17.9 million pairs in the second
 * pass): the peak resident memory of a child process that de-overlaps
 * (the pages are all written) stays under the estimate, which is not
 * wildly above it. Without sanitizers (theirs are resident too). */
static void test_deoverlap_estimate_bounds_the_peak(void **state)
{
    (void)state;
    if (!INTERPOSE_WORKS)
        skip();
    static const char *const pair[] = {"w(1,2)", "w(3,4)", NULL};
    char *text = rule_set_text("\"space\":{\"ranges\":[[0,63],[0,63],[0,63],[0,63]]},", pair, 2);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(parse_limited(text, (int64_t)8 << 30, &rs, &info), PN_OK);
    int32_t sizes[2] = {pn_feature_table_size(rs->rules[0].table),
                        pn_feature_table_size(rs->rules[1].table)};
    const int64_t n = pn_space_size(&rs->space);
    const int64_t estimate = pn_deoverlap_bytes(n, 2, sizes);
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    const pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *clear = fopen("/proc/self/clear_refs", "w");
        int64_t peak = -1;
        if (clear && fputs("5", clear) >= 0 && fclose(clear) == 0) {
            const int64_t base = status_kib("VmRSS:");
            pn_problem *prob = NULL;
            if (pn_rule_set_build_problem(rs, &prob, NULL, &info) == PN_OK)
                peak = 1024 * (status_kib("VmHWM:") - base);
            pn_problem_free(prob);
        }
        _exit(write(fds[1], &peak, sizeof peak) == (ssize_t)sizeof peak ? 0 : 1);
    }
    close(fds[1]);
    int64_t peak = -1;
    assert_int_equal(read(fds[0], &peak, sizeof peak), (ssize_t)sizeof peak);
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(peak > 0);
    assert_true(peak <= estimate);
    assert_true(estimate <= 2 * peak);
    pn_rule_set_free(rs);
    free(text);
}

/* ------------------------------------------------------------------------ */
/* More rules than the old merge held */

static void test_hundreds_of_rules_solve(void **state)
{
    (void)state;
    static const char *const one[] = {"w(1)", "w(2)", NULL};
    char *text = rule_set_text("\"space\":{\"ranges\":[[60,64],[48,52]]},", one, 300);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(parse_limited(text, PN_DEFAULT_MAX_MEMORY, &rs, &info), PN_OK);
    pn_problem *prob = NULL;
    assert_int_equal(pn_rule_set_build_problem(rs, &prob, NULL, &info), PN_OK);
    pn_settings s;
    pn_settings_default(&s);
    pn_solver *solver = NULL;
    assert_int_equal(pn_solver_create(prob, &s, &solver, &info), PN_OK);
    pn_info out;
    assert_int_equal(pn_solver_solve(solver, PN_START_COLD, &out, &info), PN_OK);
    assert_int_equal(out.status, PN_STATUS_SOLVED);
    assert_true(isfinite(out.p_kkt) && isfinite(out.objective));
    /* uniform targets over both voices: realizable, every rule kept */
    assert_int_equal(out.num_selected, 300);
    pn_solver_free(solver);
    pn_problem_free(prob);
    pn_rule_set_free(rs);
    free(text);
}

/* ------------------------------------------------------------------------ */
/* Stopping a solve */

typedef struct stopper {
    int calls, stop_at;
    pn_progress last;
} stopper;

static int stop_after(void *user, const pn_progress *progress)
{
    stopper *st = user;
    assert_true(progress->alternations >= st->last.alternations);
    assert_true(progress->starts >= st->last.starts);
    st->last = *progress;
    return ++st->calls >= st->stop_at;
}

static void test_progress_stops_a_solve(void **state)
{
    (void)state;
    static const char *const features[] = {"w(1)", "w(2)", "diff(w(1,2))", NULL};
    char *text = rule_set_text("\"space\":{\"ranges\":[[60,72],[48,60]]},", features, 3);
    pn_rule_set *rs = NULL;
    pn_error_info info = {PN_OK, ""};
    assert_int_equal(parse_limited(text, PN_DEFAULT_MAX_MEMORY, &rs, &info), PN_OK);
    pn_problem *prob = NULL;
    assert_int_equal(pn_rule_set_build_problem(rs, &prob, NULL, &info), PN_OK);
    pn_settings s;
    pn_settings_default(&s);
    stopper st = {0, 3, {0, 0, 0}};
    s.progress = stop_after;
    s.progress_user = &st;
    pn_solver *solver = NULL;
    assert_int_equal(pn_solver_create(prob, &s, &solver, &info), PN_OK);
    pn_info out;
    assert_int_equal(pn_solver_solve(solver, PN_START_COLD, &out, &info), PN_ERR_INTERRUPTED);
    assert_int_equal(st.calls, 3); /* asked no more after it said stop */
    assert_non_null(strstr(info.message, "interrupted"));
    /* the next solve starts afresh and runs to the end */
    st.stop_at = 1 << 30;
    st.calls = 0;
    memset(&st.last, 0, sizeof st.last);
    assert_int_equal(pn_solver_solve(solver, PN_START_COLD, &out, &info), PN_OK);
    assert_true(st.calls > 3);
    assert_true(st.last.alternations > 0 && st.last.starts > 1);
    pn_solver_free(solver);
    pn_problem_free(prob);
    pn_rule_set_free(rs);
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full_space_rules_refused),
        cmocka_unit_test(test_limit_is_the_callers),
        cmocka_unit_test(test_deoverlap_refused),
        cmocka_unit_test(test_estimates_bound_the_allocations),
        cmocka_unit_test(test_deoverlap_estimate_bounds_the_peak),
        cmocka_unit_test(test_hundreds_of_rules_solve),
        cmocka_unit_test(test_progress_stops_a_solve),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
