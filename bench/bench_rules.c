/* parnassus-bench: rule-set files (--rules FILE, or by default
 * presets/chorale-major.json and then presets/chorale-minor.json, each
 * in its own rows named by the set; docs/benchmarks.md): reading each, the
 * de-overlap of its full sonority space, the plugin's setup and cold
 * realization, warm re-realizations after a context change (a drawn
 * sonority becomes the previous one) and after a knob change, and sampling
 * throughput. */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_solve.h"
#include "parnassus/generate.h"
#include "parnassus/problem.h"
#include "parnassus/rng.h"
#include "parnassus/rules.h"
#include "parnassus/sampler.h"
#include "parnassus/solver.h"
#include "parnassus/space.h"

/* The cold solve: a probe run in a child process, stopped after
 * COLD_LIMIT seconds; repeated in-process (--runs times, once with
 * --quick) only when the probe took less than COLD_REPEAT seconds. */
static const double COLD_LIMIT = 300.0;
static const double COLD_REPEAT = 20.0;
/* A warm series stops early once its runs have taken this long. */
static const double WARM_BUDGET = 120.0;

enum {
    MIN_CONTEXT_STEPS = 3,
    DRAWS = 10000000,  /* per sampling run */
    DRAW_BATCH = 4096, /* sonorities per pn_sampler_draw_many call */
};

/* Everything the rows after the de-overlap share. */
typedef struct rules_bench {
    const options *o;
    const char *path; /* the rule-set file */
    char label[32];
    pn_rule_set *rs;
    pn_problem *prob;
    int32_t *group_of;
    pn_group_index *index;
    pn_sampler *sampler;
    pn_solver *solver; /* converged at log2 lambda_w = 0, or NULL */
    pn_settings plug;  /* log2 lambda_w = 0, restarts 0, grow 0 */
    int K;
    int32_t m;
    int64_t n;
} rules_bench;

/* Returns 0 when a default set cannot be read (a skipped row says so);
 * a set named with --rules that cannot be read is an error. */
static int read_rows(table *t, rules_bench *rb)
{
    const options *o = rb->o;
    samples sm = {0};
    pn_error_info info = {0};
    for (int i = 0; i < o->runs; ++i) {
        pn_rule_set *rs = NULL;
        stopwatch sw = start_timer();
        pn_error err = pn_rule_set_read(rb->path, &rs, &info);
        if (err != PN_OK && i == 0 && !o->rules_given) {
            progress("rules: cannot read %s (%s); its rows are skipped", rb->path, info.message);
            row *r = add_row(t, "rules", "read + feature tables (pn_rule_set_read)", UNIT_TIME,
                             NULL, GOAL_NONE, 0.0);
            snprintf(r->details, sizeof r->details, "skipped: %.200s", info.message);
            return 0;
        }
        check(err, &info, "pn_rule_set_read");
        stop_timer(&sw, &sm);
        if (i == 0)
            rb->rs = rs;
        else
            pn_rule_set_free(rs);
    }
    const pn_rule_set *rs = rb->rs;
    if (rs->lambda_p > 0.0)
        rb->plug.lambda_p = rs->lambda_p; /* as the plugin realizes the set */
    snprintf(rb->label, sizeof rb->label, "%s", rs->name);
    rb->K = rs->num_rules;
    rb->m = pn_rule_set_num_rows(rs);
    rb->n = pn_space_size(&rs->space);
    int contexts = 0;
    for (int32_t r = 0; r < rs->num_rules; ++r)
        contexts += rs->rules[r].context != NULL;
    progress("rules: %s read in %.3f s: K = %d (%d with a context), m = %d, n = %lld", rb->path,
             sm.v[0], rb->K, contexts, (int)rb->m, (long long)rb->n);
    row *r = add_row(t, rb->label, "read + feature tables (pn_rule_set_read)", UNIT_TIME, &sm,
                     GOAL_NONE, 0.0);
    snprintf(r->details, sizeof r->details, "K = %d rules (%d with a context), m = %d", rb->K,
             contexts, (int)rb->m);
    return 1;
}

static void deoverlap_row(table *t, rules_bench *rb)
{
    const options *o = rb->o;
    samples sm = {0};
    pn_error_info info = {0};
    rb->group_of = xmalloc((size_t)rb->n * sizeof *rb->group_of);
    for (int i = 0; i < o->runs; ++i) {
        if (rb->prob)
            pn_problem_free(rb->prob);
        rb->prob = NULL;
        stopwatch sw = start_timer();
        check(pn_rule_set_build_problem(rb->rs, &rb->prob, rb->group_of, &info), &info,
              "pn_rule_set_build_problem");
        stop_timer(&sw, &sm);
        progress("rules: de-overlap run %d: %.3f s (%lld groups)", i + 1, sm.v[i],
                 (long long)rb->prob->num_groups);
    }
    row *r = add_row(t, rb->label, "de-overlap (pn_rule_set_build_problem, with group_of)",
                     UNIT_TIME, &sm, GOAL_BELOW, 1.5);
    snprintf(r->details, sizeof r->details, "n = %lld, K' = %lld groups, m = %d", (long long)rb->n,
             (long long)rb->prob->num_groups, (int)rb->m);

    check(pn_group_index_create(rb->group_of, rb->n, rb->prob->num_groups, &rb->index, &info),
          &info, "pn_group_index_create");
    check(pn_sampler_create(rb->prob, rb->index, &rb->sampler, &info), &info, "pn_sampler_create");
}

/* The plugin's cold realization, timed on the solver alone: guarded probe
 * in a child process, then in-process runs on a fresh solver each. Leaves
 * rb->solver converged (or NULL when the probe was stopped). Returns the
 * probe's seconds, or a negative value when it was stopped. */
static double cold_row(table *t, rules_bench *rb)
{
    const options *o = rb->o;
    pn_error_info info = {0};
    const char *what = "cold, single start (restarts 0, grow 0), log2 lambda_w = 0";
    guarded_result probe;
    memset(&probe, 0, sizeof probe);
    progress("rules: cold single start, probe run in a child process (stopped after %.0f s)",
             COLD_LIMIT);
    double probe_wall = now(), probe_cpu = children_cpu();
    int rc = guarded_cold_solve(rb->prob, &rb->plug, COLD_LIMIT, &probe);
    probe_wall = now() - probe_wall;
    probe_cpu = children_cpu() - probe_cpu;
    if (rc < 0) {
        fprintf(stderr, "parnassus-bench: the guarded cold solve failed\n");
        exit(1);
    }
    row *r;
    if (rc == 1) {
        r = add_row(t, rb->label, what, UNIT_TIME, NULL, GOAL_BELOW, 1.0);
        snprintf(r->details, sizeof r->details,
                 "skipped: the first run was stopped after %.0f s (%.0f s CPU); not repeated",
                 probe_wall, probe_cpu);
        progress("rules: the cold solve was stopped after %.0f s", probe_wall);
        return -1.0;
    }
    progress("rules: probe took %.2f s (%d alternations, %d Newton, %s)", probe.seconds,
             probe.info.alternations, probe.info.newton_iterations,
             pn_status_name(probe.info.status));

    /* in-process: the runs (once when slow or with --quick); the last
     * solver stays for the warm rows */
    int slow = probe.seconds >= COLD_REPEAT;
    int runs = slow || o->quick ? 1 : o->runs;
    samples sm = {0};
    solve_stats st = {0};
    pn_info out;
    for (int i = 0; i < runs; ++i) {
        if (rb->solver)
            pn_solver_free(rb->solver);
        rb->solver = NULL;
        check(pn_solver_create(rb->prob, &rb->plug, &rb->solver, &info), &info, "pn_solver_create");
        stopwatch sw = start_timer();
        check(pn_solver_solve(rb->solver, PN_START_COLD, &out, &info), &info, "pn_solver_solve");
        stop_timer_at(&sw, &sm, out.solve_time);
        stats_add(&st, &out, rb->K);
        progress("rules: cold single start run %d: %.3f s (%d alternations, %d Newton, %s)", i + 1,
                 sm.v[i], out.alternations, out.newton_iterations, pn_status_name(out.status));
    }
    r = add_row(t, rb->label, what, UNIT_TIME, &sm, GOAL_BELOW, 1.0);
    stats_format(&st, r->details, sizeof r->details);
    size_t len = strlen(r->details);
    append(r->details, sizeof r->details, &len,
           "; fresh solver each run, pn_solver_create not timed; probe in a child %.2f s",
           probe.seconds);
    if (slow)
        append(r->details, sizeof r->details, &len, " (>= %.0f s: one run)", COLD_REPEAT);
    return probe.seconds;
}

/* What the plugin does when it loads the set: pn_generator_create (the
 * de-overlap, the group index, the solver, the sampler and a cold solve). */
static void generator_row(table *t, rules_bench *rb)
{
    samples sm = {0};
    pn_error_info info = {0};
    pn_generator *gen = NULL;
    stopwatch sw = start_timer();
    check(pn_generator_create(rb->rs, &rb->plug, &gen, &info), &info, "pn_generator_create");
    stop_timer(&sw, &sm);
    solve_stats st = {0};
    stats_add(&st, pn_generator_last_info(gen), rb->K);
    pn_generator_free(gen);
    progress("rules: generator setup %.3f s", sm.v[0]);
    row *r = add_row(t, rb->label, "generator setup (pn_generator_create), same settings",
                     UNIT_TIME, &sm, GOAL_NONE, 0.0);
    stats_format(&st, r->details, sizeof r->details);
    size_t len = strlen(r->details);
    append(r->details, sizeof r->details, &len,
           "; de-overlap, group index, solver, sampler and the cold solve");
}

/* Says so in the notes when a warm series stopped at its time budget. */
static void note_budget(row *r, int done, int planned)
{
    if (done >= planned)
        return;
    size_t len = strlen(r->details);
    append(r->details, sizeof r->details, &len, "; stopped after %d of %d runs (%.0f s budget)",
           done, planned, WARM_BUDGET);
}

static void knob_rows(table *t, rules_bench *rb)
{
    const options *o = rb->o;
    const int warm_runs = 2 * o->runs > MAX_RUNS ? MAX_RUNS : 2 * o->runs;
    pn_settings moved = rb->plug;
    moved.log2_lambda_w = 0.25;
    samples sm = {0};
    solve_stats st = {0};
    warm_settings_series(rb->solver, &moved, &rb->plug, warm_runs, WARM_BUDGET, rb->K, &sm, &st);
    row *r =
        add_row(t, rb->label, "warm, log2 lambda_w 0 <-> 0.25", UNIT_TIME, &sm, GOAL_BELOW, 0.1);
    stats_format(&st, r->details, sizeof r->details);
    note_budget(r, sm.n, warm_runs);
    progress("rules: warm lambda_w done (median %.3f s)", r->median);

    moved = rb->plug;
    moved.alpha = 0.75;
    samples sa = {0};
    solve_stats sta = {0};
    warm_settings_series(rb->solver, &moved, &rb->plug, warm_runs, WARM_BUDGET, rb->K, &sa, &sta);
    r = add_row(t, rb->label, "warm, alpha 0.8 <-> 0.75", UNIT_TIME, &sa, GOAL_BELOW, 0.1);
    stats_format(&sta, r->details, sizeof r->details);
    note_budget(r, sa.n, warm_runs);
    progress("rules: warm alpha done (median %.3f s)", r->median);
}

/* The generation step: draw a sonority from the current realization, make
 * it the previous one (pn_rule_set_targets), re-realize warm with the settings
 * of pn_generator_advance. Only pn_solver_update_targets + pn_solver_solve
 * are timed. */
static void context_row(table *t, rules_bench *rb)
{
    const options *o = rb->o;
    int steps = 2 * o->runs > MAX_RUNS ? MAX_RUNS : 2 * o->runs;
    if (steps < MIN_CONTEXT_STEPS)
        steps = MIN_CONTEXT_STEPS;
    pn_error_info info = {0};
    double *b = xmalloc((size_t)rb->m * sizeof *b);
    int pitches[PN_SPACE_MAX_VOICES];
    pn_rng rng;
    pn_rng_seed(&rng, 1);
    samples sm = {0};
    solve_stats st = {0};
    pn_info out;
    /* as pn_generator_advance: a step starts from the current solution
     * alone (warm_pool 0); installed once, not timed */
    pn_settings stepping = rb->plug;
    stepping.warm_pool = 0;
    check(pn_solver_update_settings(rb->solver, &stepping, &info), &info,
          "pn_solver_update_settings");
    double spent = 0.0;
    int changed = 0;
    for (int i = 0; i < steps; ++i) {
        if (i > 0 && spent > WARM_BUDGET)
            break;
        check(pn_sampler_set_q(rb->sampler, pn_solver_q(rb->solver), &info), &info,
              "pn_sampler_set_q");
        int64_t x = pn_sampler_draw(rb->sampler, &rng);
        check(pn_space_decode(&rb->rs->space, x, pitches, &info), &info, "pn_space_decode");
        check(pn_rule_set_targets(rb->rs, pitches, b, &info), &info, "pn_rule_set_targets");
        stopwatch sw = start_timer();
        check(pn_solver_update_targets(rb->solver, b, &info), &info, "pn_solver_update_targets");
        check(pn_solver_solve(rb->solver, PN_START_WARM, &out, &info), &info, "pn_solver_solve");
        stop_timer_at(&sw, &sm, out.update_time + out.solve_time);
        spent += sm.v[sm.n - 1];
        stats_add(&st, &out, rb->K);
        ++changed;
        progress("rules: context step %d: %.3f s (%d alternations, %d Newton, %s)", i + 1,
                 sm.v[sm.n - 1], out.alternations, out.newton_iterations,
                 pn_status_name(out.status));
    }
    row *r = add_row(t, rb->label, "warm, context change (drawn sonority -> pn_rule_set_targets)",
                     UNIT_TIME, &sm, GOAL_BELOW, 0.1);
    stats_format(&st, r->details, sizeof r->details);
    size_t len = strlen(r->details);
    append(r->details, sizeof r->details, &len,
           "; %d generation steps, warm_pool 0; includes pn_solver_update_targets", changed);
    note_budget(r, changed, steps);
    if (!pn_rule_set_has_context(rb->rs))
        append(r->details, sizeof r->details, &len, "; no context rules: targets unchanged");
    free(b);
}

static void sampling_rows(table *t, rules_bench *rb)
{
    const options *o = rb->o;
    pn_error_info info = {0};
    double *uniform = NULL;
    const double *q;
    if (rb->solver) {
        q = pn_solver_q(rb->solver);
    } else { /* no realization: every sonority equally likely */
        uniform = xmalloc((size_t)rb->prob->num_groups * sizeof *uniform);
        for (int64_t k = 0; k < rb->prob->num_groups; ++k)
            uniform[k] = (double)rb->prob->group_size[k];
        q = uniform;
    }
    const char *from = rb->solver ? "the realization" : "uniform masses (no realization)";
    samples set = {0};
    for (int i = 0; i < o->runs; ++i) {
        stopwatch sw = start_timer();
        check(pn_sampler_set_q(rb->sampler, q, &info), &info, "pn_sampler_set_q");
        stop_timer(&sw, &set);
    }
    row *r = add_row(t, rb->label, "sampler rebuild (pn_sampler_set_q)", UNIT_TIME, &set, GOAL_NONE,
                     0.0);
    snprintf(r->details, sizeof r->details, "alias table over K' = %lld groups, from %s",
             (long long)rb->prob->num_groups, from);

    /* throughput: a sum of the draws keeps the loop from being dropped;
     * the rate is a per-run value, the wall/CPU sums are kept aside */
    pn_rng rng;
    pn_rng_seed(&rng, 2);
    samples single = {0}, many = {0};
    double wall = 0.0, cpu = 0.0;
    uint64_t sink = 0;
    for (int i = 0; i < o->runs; ++i) {
        stopwatch sw = start_timer();
        for (int64_t k = 0; k < DRAWS; ++k)
            sink += (uint64_t)pn_sampler_draw(rb->sampler, &rng);
        double s = now() - sw.wall;
        wall += s;
        cpu += cpu_now() - sw.cpu;
        samples_add(&single, (double)DRAWS / s * 1e-6);
    }
    single.wall = wall;
    single.cpu = cpu;
    r = add_row(t, rb->label, "sampling, single draws (pn_sampler_draw)", UNIT_RATE, &single,
                GOAL_AT_LEAST, 10.0);
    snprintf(r->details, sizeof r->details,
             "M sonorities/s; %d draws per run, one pn_sampler_draw call each; from %s", DRAWS,
             from);
    progress("rules: single draws done (median %.1f M/s)", r->median);

    int64_t *buf = xmalloc(DRAW_BATCH * sizeof *buf);
    wall = cpu = 0.0;
    for (int i = 0; i < o->runs; ++i) {
        stopwatch sw = start_timer();
        for (int64_t k = 0; k < DRAWS; k += DRAW_BATCH) {
            int64_t count = DRAWS - k < DRAW_BATCH ? DRAWS - k : DRAW_BATCH;
            pn_sampler_draw_many(rb->sampler, &rng, buf, count);
            sink += (uint64_t)buf[count - 1];
        }
        double s = now() - sw.wall;
        wall += s;
        cpu += cpu_now() - sw.cpu;
        samples_add(&many, (double)DRAWS / s * 1e-6);
    }
    many.wall = wall;
    many.cpu = cpu;
    r = add_row(t, rb->label, "sampling, batched (pn_sampler_draw_many)", UNIT_RATE, &many,
                GOAL_AT_LEAST, 10.0);
    snprintf(r->details, sizeof r->details,
             "M sonorities/s; %d draws per run, batches of %d; from %s", DRAWS, DRAW_BATCH, from);
    progress("rules: batched draws done (median %.1f M/s; checksum %llu)", r->median,
             (unsigned long long)sink);
    free(buf);
    free(uniform);
}

static void skipped_row(table *t, const char *label, const char *what, goal g, double target,
                        const char *why)
{
    row *r = add_row(t, label, what, UNIT_TIME, NULL, g, target);
    snprintf(r->details, sizeof r->details, "%s", why);
}

static void bench_rule_set(table *t, const options *o, const char *path)
{
    rules_bench rb;
    memset(&rb, 0, sizeof rb);
    rb.o = o;
    rb.path = path;
    pn_settings_default(&rb.plug);
    rb.plug.log2_lambda_w = 0.0;
    rb.plug.restarts = 0;
    rb.plug.grow_seeds = 0;

    if (!read_rows(t, &rb))
        return;
    deoverlap_row(t, &rb);
    double probe = cold_row(t, &rb);
    if (probe < 0.0) {
        const char *why = "skipped: no converged realization (the cold solve was stopped)";
        skipped_row(t, rb.label, "warm, log2 lambda_w 0 <-> 0.25", GOAL_BELOW, 0.1, why);
        skipped_row(t, rb.label, "warm, alpha 0.8 <-> 0.75", GOAL_BELOW, 0.1, why);
        skipped_row(t, rb.label, "warm, context change (drawn sonority -> pn_rule_set_targets)",
                    GOAL_BELOW, 0.1, why);
    } else {
        samples rss = {0};
        samples_add(&rss, resident_mib());
        row *r = add_row(t, rb.label, "resident size after the cold solve", UNIT_MIB, &rss,
                         GOAL_NONE, 0.0);
        snprintf(r->details, sizeof r->details,
                 "/proc/self/statm: rule set, problem, group_of, group index, sampler, solver");
        knob_rows(t, &rb);
        context_row(t, &rb);
    }
    sampling_rows(t, &rb);
    pn_solver_free(rb.solver);
    pn_sampler_free(rb.sampler);
    pn_group_index_free(rb.index);
    free(rb.group_of);
    pn_problem_free(rb.prob);

    /* last, with the rest freed, so that the peak is the larger of the two */
    const char *gen_what = "generator setup (pn_generator_create), same settings";
    if (probe < 0.0)
        skipped_row(t, rb.label, gen_what, GOAL_NONE, 0.0,
                    "skipped: its cold solve would be stopped too");
    else if (probe >= COLD_REPEAT && o->quick)
        skipped_row(t, rb.label, gen_what, GOAL_NONE, 0.0,
                    "skipped (--quick and a cold solve of more than 20 s)");
    else
        generator_row(t, &rb);
    pn_rule_set_free(rb.rs);
}

void bench_rules(table *t, const options *o)
{
    for (int i = 0; i < o->num_rule_sets; ++i)
        bench_rule_set(t, o, o->rules[i]);
}
