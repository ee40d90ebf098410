/* The solver's search over starting selections (solver.h): known
 * selections, greedy growth from single rules, seeded random subsets, and
 * the pool of selections that later solves start from. */
#include <string.h>

#include "solver_internal.h"
#include "wall_clock.h"

/* Which rules w keeps. */
static void selection_of(const pn_problem *prob, const double *w, unsigned char *mask)
{
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        mask[r] = 0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            mask[r] |= w[i] > 0.0;
    }
}

/* Keeps the run's selection among the best distinct ones of this solve. */
void pn_solver_note_found(pn_solver *s, const double *w, double objective)
{
    const int32_t K = s->prob.num_rules;
    unsigned char *sel = s->found_scratch;
    selection_of(&s->prob, w, sel);
    int at = -1;
    for (int k = 0; k < s->found_count && at < 0; ++k)
        if (memcmp(s->found + (size_t)k * K, sel, (size_t)K) == 0)
            at = k;
    if (at >= 0) {
        if (objective >= s->found_objective[at])
            return;
        /* better objective for a known selection: drop the old entry */
        memmove(s->found + (size_t)at * K, s->found + (size_t)(at + 1) * K,
                (size_t)(s->found_count - at - 1) * (size_t)K);
        memmove(s->found_objective + at, s->found_objective + at + 1,
                (size_t)(s->found_count - at - 1) * sizeof *s->found_objective);
        s->found_count--;
    }
    int pos = s->found_count;
    while (pos > 0 && s->found_objective[pos - 1] > objective)
        --pos;
    if (pos >= PN_POOL_SIZE)
        return;
    const int keep = s->found_count < PN_POOL_SIZE ? s->found_count : PN_POOL_SIZE - 1;
    memmove(s->found + (size_t)(pos + 1) * K, s->found + (size_t)pos * K,
            (size_t)(keep - pos) * (size_t)K);
    memmove(s->found_objective + pos + 1, s->found_objective + pos,
            (size_t)(keep - pos) * sizeof *s->found_objective);
    memcpy(s->found + (size_t)pos * K, sel, (size_t)K);
    s->found_objective[pos] = objective;
    s->found_count = keep + 1;
}

/* Moves `sel` to the front of the pool (most recent first), dropping the
 * oldest entry when the pool is full. */
static void pool_push(pn_solver *s, const unsigned char *sel)
{
    const int32_t K = s->prob.num_rules;
    int found = -1;
    for (int p = 0; p < s->pool_count && found < 0; ++p)
        if (memcmp(s->pool + (size_t)p * K, sel, (size_t)K) == 0)
            found = p;
    if (found == 0)
        return;
    int last =
        found > 0 ? found : (s->pool_count < PN_POOL_SIZE ? s->pool_count++ : PN_POOL_SIZE - 1);
    memmove(s->pool + K, s->pool, (size_t)last * (size_t)K);
    memcpy(s->pool, sel, (size_t)K);
}

void pn_solver_remember_selection(pn_solver *s)
{
    /* the runners-up of this solve first (worst first), so that the best
     * ends at the front */
    const int32_t K = s->prob.num_rules;
    for (int k = s->found_count - 1; k >= 0; --k)
        pool_push(s, s->found + (size_t)k * K);
    s->found_count = 0;
    if (!s->have_solution)
        return;
    selection_of(&s->prob, s->w, s->mask_cur);
    pool_push(s, s->mask_cur);
}

void pn_solver_forget_best(pn_solver *s)
{
    s->have_solution = 0;
}

/* Per-rule squared errors |A_r p - b_r|^2 of the last run. */
static void run_rule_errors(const pn_solver *s, double *err)
{
    const pn_problem *prob = &s->prob;
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        double e = 0.0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i) {
            double d = s->y_run[i] - prob->target[i];
            e += d * d;
        }
        err[r] = e;
    }
}

static pn_outcome run_mask(pn_solver *s, const unsigned char *mask, pn_run *run, pn_info *sum)
{
    pn_weights_from_mask(&s->prob, mask, s->w_start);
    const pn_outcome rc = pn_solver_run_from(s, s->w_start, run);
    if (rc < 0)
        return rc;
    sum->alternations += run->alternations;
    sum->starts++;
    return PN_OUTCOME_OK;
}

/* Greedy growth over rule subsets from a single rule: add the candidates
 * that the current realization already fits best, keeping an addition when
 * the objective (3) improves. At small lambda_w this searches for the
 * largest consistent subset (Theorem 2); elsewhere it is one more start. */
static pn_outcome grow_from(pn_solver *s, int32_t seed, pn_info *sum)
{
    const pn_problem *prob = &s->prob;
    const int32_t K = prob->num_rules;
    unsigned char *cur = s->mask_cur, *trial = s->mask_trial;
    double *err = s->rule_err;
    memset(cur, 0, (size_t)K);
    cur[seed] = 1;
    pn_run run;
    pn_outcome rc = run_mask(s, cur, &run, sum);
    if (rc < 0)
        return rc;
    double F = run.objective;
    selection_of(prob, s->w_run, cur);
    run_rule_errors(s, err);
    for (int32_t depth = 0; depth < K; ++depth) {
        int accepted = 0;
        for (int t = 0; t < s->settings.grow_tries && !accepted; ++t) {
            /* the t-th best fitted rule outside the selection */
            int32_t pick = -1;
            for (int32_t r = 0; r < K; ++r) {
                if (cur[r] || s->tried[r] || (pick >= 0 && err[r] >= err[pick]))
                    continue;
                pick = r;
            }
            if (pick < 0)
                break;
            s->tried[pick] = 1;
            memcpy(trial, cur, (size_t)K);
            trial[pick] = 1;
            if ((rc = run_mask(s, trial, &run, sum)) < 0)
                return rc;
            if (run.objective < F * (1.0 - 1e-12)) {
                F = run.objective;
                selection_of(prob, s->w_run, cur);
                run_rule_errors(s, err);
                accepted = 1;
            }
        }
        memset(s->tried, 0, (size_t)K);
        if (!accepted)
            break;
    }
    return PN_OUTCOME_OK;
}

/* Rules by decreasing size (ties by number): the seeds of the growth. */
static void seed_order(const pn_problem *prob, int32_t *order)
{
    const int32_t K = prob->num_rules;
    for (int32_t r = 0; r < K; ++r)
        order[r] = r;
    for (int32_t i = 1; i < K; ++i) { /* insertion sort: K is small */
        int32_t v = order[i], j = i - 1;
        while (j >= 0 && pn_rule_size(prob, order[j]) < pn_rule_size(prob, v)) {
            order[j + 1] = order[j];
            --j;
        }
        order[j + 1] = v;
    }
}

void pn_solver_best_info(pn_solver *s, pn_info *out)
{
    const pn_problem *prob = &s->prob;
    int selected = 0, selective = 1;
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        int pos = 0, zero = 0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i) {
            pos += s->w[i] > 0.0;
            zero += !(s->w[i] > 0.0);
        }
        selected += pos > 0;
        selective &= pos == 0 || zero == 0;
    }
    s->best.num_selected = selected;
    s->best.group_selective = selective;
    if (out)
        *out = s->best;
}

/* pn_solver_solve(), and with `also` (K entries, or NULL) a warm solve that
 * starts from that selection too. */
static pn_error solve(pn_solver *s, pn_start start, const unsigned char *also, pn_info *out,
                      pn_error_info *info)
{
    const double started = pn_clock_seconds();
    const pn_problem *prob = &s->prob;
    const int32_t K = prob->num_rules, m = prob->num_rows;
    pn_info sum = {0};
    pn_run run;
    s->last_newton = 0;
    memset(&s->progress, 0, sizeof s->progress);
    s->interrupted = 0;
    const int warm = start == PN_START_WARM && s->have_solution;
    double *w0 = s->w_start;
    if (warm) {
        /* follow the current solution under the new knobs or targets */
        memcpy(w0, s->w, (size_t)m * sizeof *w0);
    } else {
        pn_pstep_reset(s->pstep);
        for (int32_t i = 0; i < m; ++i)
            w0[i] = 1.0 / m;
    }
    s->have_solution = 0;
    if (pn_solver_run_from(s, w0, &run) < 0)
        return pn_solver_failure(s, info);
    sum.alternations += run.alternations;
    sum.starts++;
    if (warm) {
        /* a warm solve follows the current solution, then tries the most
         * recent known selections that differ from it: after a knob crossed
         * a selection boundary the better basin is usually one seen before */
        int tried = 0;
        selection_of(prob, s->w, s->mask_cur);
        if (also && memcmp(also, s->mask_cur, (size_t)K) != 0) {
            if (run_mask(s, also, &run, &sum) < 0)
                return pn_solver_failure(s, info);
            selection_of(prob, s->w, s->mask_cur);
        }
        for (int p = 0; p < s->pool_count && tried < s->settings.warm_pool; ++p) {
            const unsigned char *sel = s->pool + (size_t)p * K;
            if (memcmp(sel, s->mask_cur, (size_t)K) == 0)
                continue;
            if (run_mask(s, sel, &run, &sum) < 0)
                return pn_solver_failure(s, info);
            tried++;
        }
    } else {
        /* a cold solve searches: known selections, greedy growth from
         * single rules, random subsets of rules (seeded) */
        for (int p = 0; p < s->pool_count; ++p)
            if (run_mask(s, s->pool + (size_t)p * K, &run, &sum) < 0)
                return pn_solver_failure(s, info);
        seed_order(prob, s->order);
        const int32_t seeds = s->settings.grow_seeds < K ? s->settings.grow_seeds : K;
        for (int32_t k = 0; k < seeds; ++k)
            if (grow_from(s, s->order[k], &sum) < 0)
                return pn_solver_failure(s, info);
        for (int t = 0; t < s->settings.restarts; ++t) {
            int any = 0;
            for (int32_t r = 0; r < K; ++r) {
                s->mask_trial[r] = (unsigned char)(pn_rng_next(&s->rng) >> 63);
                any |= s->mask_trial[r];
            }
            if (!any)
                s->mask_trial[pn_rng_next(&s->rng) % (uint64_t)K] = 1;
            if (run_mask(s, s->mask_trial, &run, &sum) < 0)
                return pn_solver_failure(s, info);
        }
    }
    pn_solver_remember_selection(s);
    s->best.alternations = sum.alternations;
    s->best.starts = sum.starts;
    s->best.newton_iterations = s->last_newton;
    s->best.setup_time = s->setup_time;
    s->best.update_time = s->update_time;
    s->update_time = 0.0;
    s->best.solve_time = pn_clock_seconds() - started;
    pn_solver_best_info(s, out);
    return PN_OK;
}

pn_error pn_solver_solve(pn_solver *s, pn_start start, pn_info *out, pn_error_info *info)
{
    return solve(s, start, NULL, out, info);
}

pn_error pn_solver_solve_also(pn_solver *s, const unsigned char *selection, pn_info *out,
                              pn_error_info *info)
{
    if (!selection)
        return pn_fail(info, PN_ERR_INVALID, "pn_solver_solve_also: no selection given");
    int any = 0;
    for (int32_t r = 0; r < s->prob.num_rules; ++r) {
        if (selection[r] > 1)
            return pn_fail(info, PN_ERR_INVALID,
                           "pn_solver_solve_also: selection[%d] is %d, not 0 or 1", (int)r,
                           (int)selection[r]);
        any |= selection[r];
    }
    if (!any)
        return pn_fail(info, PN_ERR_INVALID, "pn_solver_solve_also: the selection keeps no rule");
    return solve(s, PN_START_WARM, selection, out, info);
}
