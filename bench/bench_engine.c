/* parnassus-bench: the generated instances (docs/benchmarks.md): cases A1
 * and A2 (cold solve, lambda_w path) and the music-sized instance
 * (de-overlap of the full sonority space, solver setup, cold and warm
 * realizations, the guarded default-search solve). */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_solve.h"
#include "parnassus/deoverlap.h"
#include "parnassus/gen.h"
#include "parnassus/path.h"
#include "parnassus/problem.h"
#include "parnassus/solver.h"

enum {
    CONTEXTS = 4, /* other seeds whose targets make the context changes */
};

/* The default-search cold solve of the music instance: one probe run in a
 * child process, killed after GUARD_LIMIT seconds; repeated only when the
 * probe took less than GUARD_REPEAT seconds. */
static const double GUARD_LIMIT = 60.0;
static const double GUARD_REPEAT = 20.0;

/* ---- A1 and A2 ---- */

static void append_seeds(char *buf, size_t n, size_t *len, int runs)
{
    if (runs == 1)
        append(buf, n, len, "; seed 1, one run");
    else
        append(buf, n, len, "; seeds 1-%d, one run each", runs);
}

static void bench_artificial(table *t, pn_gen_case which, const options *o)
{
    const char *label = which == PN_GEN_A1 ? "A1" : "A2";
    samples cold = {0}, path_time = {0}, points = {0};
    solve_stats st = {0};
    int path_alt[2] = {0, 0};
    pn_error_info info = {0};
    for (int i = 0; i < o->runs; ++i) {
        uint64_t seed = (uint64_t)i + 1;
        pn_problem *prob = NULL;
        check(pn_gen_artificial(which, seed, &prob, &info), &info, "pn_gen_artificial");

        pn_settings s;
        pn_settings_default(&s);
        s.log2_lambda_w = 0.0;
        pn_solver *solver = NULL;
        check(pn_solver_create(prob, &s, &solver, &info), &info, "pn_solver_create");
        pn_info out;
        stopwatch sw = start_timer();
        check(pn_solver_solve(solver, PN_START_COLD, &out, &info), &info, "pn_solver_solve");
        stop_timer_at(&sw, &cold, out.solve_time);
        stats_add(&st, &out, prob->num_rules);
        pn_solver_free(solver);

        pn_path_settings ps;
        pn_path_settings_default(&ps);
        pn_path *path = NULL;
        sw = start_timer();
        check(pn_path_compute(prob, &ps, &path, &info), &info, "pn_path_compute");
        stop_timer(&sw, &path_time);
        samples_add(&points, path->num_points);
        range_update(path_alt, path->total_alternations, i == 0);
        progress("%s seed %d: cold %.1f ms, path %.1f ms (%d points)", label, (int)seed,
                 (cold.v[i]) * 1e3, path_time.v[i] * 1e3, path->num_points);
        pn_path_free(path);
        pn_problem_free(prob);
    }
    char what[112];
    row *r = add_row(t, label, "cold solve, log2 lambda_w = 0, default search", UNIT_TIME, &cold,
                     GOAL_NONE, 0.0);
    stats_format(&st, r->details, sizeof r->details);
    size_t len = strlen(r->details);
    append_seeds(r->details, sizeof r->details, &len, o->runs);

    snprintf(what, sizeof what, "lambda_w path, defaults");
    r = add_row(t, label, what, UNIT_TIME, &path_time, GOAL_BELOW, 0.5);
    len = 0;
    append_range(r->details, sizeof r->details, &len, "alt (all points)", path_alt);
    append_seeds(r->details, sizeof r->details, &len, o->runs);

    r = add_row(t, label, "lambda_w path: number of points", UNIT_COUNT, &points, GOAL_AT_LEAST,
                40.0);
    snprintf(r->details, sizeof r->details, "grid step 0.25 in log2 lambda_w");
}

/* ---- the music-sized instance ---- */

/* Per rule, out = (1 - share) a + share b, renormalised to sum 1. */
static void mix_targets(const pn_problem *prob, const double *a, const double *b, double share,
                        double *out)
{
    for (int32_t rule = 0; rule < prob->num_rules; ++rule) {
        double sum = 0.0;
        for (int32_t i = prob->rule_start[rule]; i < prob->rule_start[rule + 1]; ++i) {
            out[i] = (1.0 - share) * a[i] + share * b[i];
            sum += out[i];
        }
        for (int32_t i = prob->rule_start[rule]; i < prob->rule_start[rule + 1]; ++i)
            out[i] /= sum;
    }
}

static void bench_deoverlap(table *t, const options *o)
{
    samples sm = {0};
    int64_t groups = 0;
    pn_error_info info = {0};
    for (int i = 0; i < o->runs; ++i) {
        pn_problem *prob = NULL;
        check(pn_gen_music_rules(&prob, &info), &info, "pn_gen_music_rules");
        stopwatch sw = start_timer();
        check(pn_deoverlap(prob, pn_gen_music_cells, NULL, &info), &info, "pn_deoverlap");
        stop_timer(&sw, &sm);
        groups = prob->num_groups;
        progress("music: de-overlap run %d: %.3f s (%lld groups)", i + 1, sm.v[i],
                 (long long)groups);
        pn_problem_free(prob);
    }
    row *r = add_row(t, "music", "de-overlap, n = 55^4 (pn_gen_music_cells)", UNIT_TIME, &sm,
                     GOAL_BELOW, 1.5);
    snprintf(r->details, sizeof r->details, "K' = %lld groups%s", (long long)groups,
             groups == PN_GEN_MUSIC_GROUPS ? "" : " (UNEXPECTED)");
}

/* Targets of other seeds (the same partition A, other sparse
 * distributions), for the context changes: CONTEXTS x PN_GEN_MUSIC_ROWS.
 * Each instance is freed before the next one and before the instance
 * under test is built. */
static double *other_targets(void)
{
    pn_error_info info = {0};
    double *other = xmalloc((size_t)CONTEXTS * PN_GEN_MUSIC_ROWS * sizeof *other);
    for (int c = 0; c < CONTEXTS; ++c) {
        pn_problem *p2 = NULL;
        check(pn_gen_music_like((uint64_t)c + 2, &p2, &info), &info, "pn_gen_music_like");
        memcpy(other + (size_t)c * PN_GEN_MUSIC_ROWS, p2->target,
               (size_t)p2->num_rows * sizeof *other);
        pn_problem_free(p2);
    }
    return other;
}

/* The instance under test, its build timed. */
static pn_problem *build_music(table *t)
{
    pn_error_info info = {0};
    samples build = {0};
    pn_problem *prob = NULL;
    stopwatch sw = start_timer();
    check(pn_gen_music_like(1, &prob, &info), &info, "pn_gen_music_like");
    stop_timer(&sw, &build);
    row *r = add_row(t, "music", "build instance (pn_gen_music_like seed 1)", UNIT_TIME, &build,
                     GOAL_NONE, 0.0);
    snprintf(r->details, sizeof r->details, "K = %d, m = %d, K' = %lld; includes a de-overlap",
             prob->num_rules, prob->num_rows, (long long)prob->num_groups);
    progress("music: instance built in %.3f s", build.v[0]);
    return prob;
}

/* Setup and the plugin's cold realization (settings plug): a fresh solver
 * each run; returns the last one. */
static pn_solver *bench_cold(table *t, const options *o, const pn_problem *prob,
                             const pn_settings *plug)
{
    pn_error_info info = {0};
    const int K = prob->num_rules;
    samples create = {0}, cold = {0};
    solve_stats cold_st = {0};
    double rss_before = resident_mib(), rss_created = -1.0;
    pn_solver *solver = NULL;
    pn_info out;
    for (int i = 0; i < o->runs; ++i) {
        if (solver)
            pn_solver_free(solver);
        solver = NULL;
        stopwatch sw = start_timer();
        check(pn_solver_create(prob, plug, &solver, &info), &info, "pn_solver_create");
        const double create_cpu = cpu_now() - sw.cpu;
        if (i == 0)
            rss_created = resident_mib();
        sw = start_timer();
        check(pn_solver_solve(solver, PN_START_COLD, &out, &info), &info, "pn_solver_solve");
        stop_timer_at(&sw, &cold, out.solve_time);
        /* pn_solver_create as the solver timed it */
        record_run(&create, out.setup_time, create_cpu);
        stats_add(&cold_st, &out, K);
        progress("music: create %.3f s, cold single start %.3f s (%d alternations, %s)",
                 create.v[i], cold.v[i], out.alternations, pn_status_name(out.status));
    }
    row *r =
        add_row(t, "music", "solver setup (pn_solver_create)", UNIT_TIME, &create, GOAL_NONE, 0.0);
    snprintf(r->details, sizeof r->details, "fresh solver each run");
    if (rss_created >= 0.0) {
        samples rss = {0};
        samples_add(&rss, rss_created);
        r = add_row(t, "music", "resident size after pn_solver_create", UNIT_MIB, &rss, GOAL_NONE,
                    0.0);
        snprintf(r->details, sizeof r->details,
                 "/proc/self/statm; %.0f MiB before (instance and generator)", rss_before);
    }
    r = add_row(t, "music", "cold, single start (restarts 0, grow 0), log2 lambda_w = 0", UNIT_TIME,
                &cold, GOAL_BELOW, 1.0);
    stats_format(&cold_st, r->details, sizeof r->details);
    return solver;
}

/* Warm re-realizations from the converged neighbour: lambda_w and alpha
 * moved back and forth. */
static void bench_warm_settings(table *t, pn_solver *solver, const pn_settings *plug, int warm_runs,
                                int K)
{
    pn_settings moved = *plug;
    moved.log2_lambda_w = 0.25;
    samples warm_l = {0};
    solve_stats warm_l_st = {0};
    warm_settings_series(solver, &moved, plug, warm_runs, 0.0, K, &warm_l, &warm_l_st);
    row *r =
        add_row(t, "music", "warm, log2 lambda_w 0 <-> 0.25", UNIT_TIME, &warm_l, GOAL_BELOW, 0.1);
    stats_format(&warm_l_st, r->details, sizeof r->details);
    progress("music: warm lambda_w done");

    moved = *plug;
    moved.alpha = 0.75;
    samples warm_a = {0};
    solve_stats warm_a_st = {0};
    warm_settings_series(solver, &moved, plug, warm_runs, 0.0, K, &warm_a, &warm_a_st);
    r = add_row(t, "music", "warm, alpha 0.8 <-> 0.75", UNIT_TIME, &warm_a, GOAL_BELOW, 0.1);
    stats_format(&warm_a_st, r->details, sizeof r->details);
    progress("music: warm alpha done");
}

/* A context change: 95% of the targets orig, 5% of another seed's, per
 * rule. */
static void bench_warm_small_change(table *t, pn_solver *solver, const pn_problem *prob,
                                    const double *orig, const double *other, int warm_runs)
{
    const int K = prob->num_rules, m = prob->num_rows;
    double *mixed = xmalloc((size_t)m * sizeof *mixed);
    mix_targets(prob, orig, other, 0.05, mixed);
    samples warm_b = {0};
    solve_stats warm_b_st = {0};
    warm_targets_series(solver, mixed, orig, warm_runs, K, &warm_b, &warm_b_st);
    row *r = add_row(t, "music", "warm, targets b <-> 0.95 b + 0.05 b(seed 2)", UNIT_TIME, &warm_b,
                     GOAL_BELOW, 0.1);
    stats_format(&warm_b_st, r->details, sizeof r->details);
    size_t len = strlen(r->details);
    append(r->details, sizeof r->details, &len, "; includes pn_solver_update_targets");
    progress("music: warm targets (small change) done");
    free(mixed);
}

/* The music model's context changes: every rule's target becomes an even
 * mix of orig and the targets of another seed (a clearly different
 * distribution on the same cells: a new support, weights moved by about
 * half), a different context at every step. */
static void bench_context_sequence(table *t, pn_solver *solver, const pn_problem *prob,
                                   const double *orig, const double *other, int warm_runs)
{
    pn_error_info info = {0};
    const int K = prob->num_rules, m = prob->num_rows;
    double *ctx = xmalloc((size_t)CONTEXTS * (size_t)m * sizeof *ctx);
    for (int c = 0; c < CONTEXTS; ++c)
        mix_targets(prob, orig, other + (size_t)c * PN_GEN_MUSIC_ROWS, 0.5, ctx + (size_t)c * m);
    samples warm_c = {0};
    solve_stats warm_c_st = {0};
    pn_info out;
    for (int i = 0; i < warm_runs; ++i) {
        stopwatch csw = start_timer();
        check(pn_solver_update_targets(solver, ctx + (size_t)(i % CONTEXTS) * m, &info), &info,
              "pn_solver_update_targets");
        check(pn_solver_solve(solver, PN_START_WARM, &out, &info), &info, "pn_solver_solve");
        stop_timer_at(&csw, &warm_c, out.update_time + out.solve_time);
        stats_add(&warm_c_st, &out, K);
        progress("music: context change %d: %.3f s (%d Newton)", i + 1, warm_c.v[i],
                 out.newton_iterations);
    }
    row *r = add_row(t, "music", "warm, targets: context sequence 0.5 b + 0.5 b(seed 2..5)",
                     UNIT_TIME, &warm_c, GOAL_BELOW, 0.1);
    stats_format(&warm_c_st, r->details, sizeof r->details);
    size_t len = strlen(r->details);
    append(r->details, sizeof r->details, &len,
           "; a different context each run; includes pn_solver_update_targets");
    progress("music: warm targets (context sequence) done");
    free(ctx);
}

/* The default search, cold: a guarded probe in a child process, repeated
 * in-process only when it was quick. */
static void bench_default_search(table *t, const options *o, const pn_problem *prob)
{
    row *r;
    if (o->quick) {
        r = add_row(t, "music", "cold, default search (restarts 8, grow 8), log2 lambda_w = 0",
                    UNIT_TIME, NULL, GOAL_NONE, 0.0);
        snprintf(r->details, sizeof r->details, "skipped (--quick)");
        return;
    }
    pn_error_info info = {0};
    const int K = prob->num_rules;
    pn_settings full;
    pn_settings_default(&full);
    full.log2_lambda_w = 0.0;
    char what[112];
    snprintf(what, sizeof what, "cold, default search (restarts %d, grow %d), log2 lambda_w = 0",
             full.restarts, full.grow_seeds);
    guarded_result probe;
    memset(&probe, 0, sizeof probe);
    progress("music: cold default search, probe run (stopped after %.0f s)", GUARD_LIMIT);
    double probe_wall = now(), probe_cpu = children_cpu();
    int rc = guarded_cold_solve(prob, &full, GUARD_LIMIT, &probe);
    probe_wall = now() - probe_wall;
    probe_cpu = children_cpu() - probe_cpu;
    samples sm = {0};
    solve_stats sst = {0};
    size_t len;
    if (rc < 0) {
        fprintf(stderr, "parnassus-bench: the guarded default-search solve failed\n");
        exit(1);
    }
    if (rc == 1) {
        r = add_row(t, "music", what, UNIT_TIME, NULL, GOAL_NONE, 0.0);
        snprintf(r->details, sizeof r->details,
                 "skipped: the first run was stopped after %.0f s (%.0f s CPU); not repeated",
                 probe_wall, probe_cpu);
    } else if (probe.seconds >= GUARD_REPEAT) {
        samples_add(&sm, probe.seconds);
        stats_add(&sst, &probe.info, K);
        r = add_row(t, "music", what, UNIT_TIME, &sm, GOAL_NONE, 0.0);
        stats_format(&sst, r->details, sizeof r->details);
        len = strlen(r->details);
        append(r->details, sizeof r->details, &len,
               "; one run only (>= %.0f s), in a child process; CPU/wall %.2f", GUARD_REPEAT,
               probe_cpu / probe_wall);
    } else {
        progress("music: probe took %.2f s; repeating in-process", probe.seconds);
        for (int i = 0; i < o->runs; ++i) {
            pn_solver *solver = NULL;
            pn_info out;
            check(pn_solver_create(prob, &full, &solver, &info), &info, "pn_solver_create");
            stopwatch sw = start_timer();
            check(pn_solver_solve(solver, PN_START_COLD, &out, &info), &info, "pn_solver_solve");
            stop_timer_at(&sw, &sm, out.solve_time);
            stats_add(&sst, &out, K);
            pn_solver_free(solver);
            progress("music: cold default search run %d: %.3f s", i + 1, sm.v[i]);
        }
        r = add_row(t, "music", what, UNIT_TIME, &sm, GOAL_NONE, 0.0);
        stats_format(&sst, r->details, sizeof r->details);
        len = strlen(r->details);
        append(r->details, sizeof r->details, &len, "; fresh solver each run");
    }
}

void bench_music(table *t, const options *o)
{
    bench_deoverlap(t, o);
    double *other = other_targets();
    pn_problem *prob = build_music(t);
    const int K = prob->num_rules, m = prob->num_rows;

    /* the plugin's settings: one start, no grown seeds */
    pn_settings plug;
    pn_settings_default(&plug);
    plug.log2_lambda_w = 0.0;
    plug.restarts = 0;
    plug.grow_seeds = 0;
    pn_solver *solver = bench_cold(t, o, prob, &plug);

    const int warm_runs = 2 * o->runs > MAX_RUNS ? MAX_RUNS : 2 * o->runs;
    bench_warm_settings(t, solver, &plug, warm_runs, K);
    double *orig = xmalloc((size_t)m * sizeof *orig);
    memcpy(orig, prob->target, (size_t)m * sizeof *orig);
    bench_warm_small_change(t, solver, prob, orig, other, warm_runs);
    bench_context_sequence(t, solver, prob, orig, other, warm_runs);
    pn_solver_free(solver);
    free(orig);
    free(other);

    bench_default_search(t, o, prob);
    pn_problem_free(prob);
}

void bench_artificial_cases(table *t, const options *o)
{
    bench_artificial(t, PN_GEN_A1, o);
    bench_artificial(t, PN_GEN_A2, o);
}
