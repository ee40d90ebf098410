#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver_internal.h"
#include "wall_clock.h"

int64_t pn_solver_bytes(const pn_problem *prob)
{
    const int64_t m = prob->num_rows, K = prob->num_rules, G = prob->num_groups;
    int64_t bytes = pn_bytes_add(pn_bytes_mul(m, 13 * 8), pn_bytes_mul(G, 8));
    bytes = pn_bytes_add(bytes, pn_bytes_mul(K, 2 * PN_POOL_SIZE + 16));
    bytes = pn_bytes_add(bytes, 100 * 4096); /* the allocator's rounding of ~100 arrays */
    return pn_bytes_add(
        bytes, pn_pstep_bytes(prob->num_rows, prob->num_rules, G, prob->row_sums.run != NULL));
}

/* The p-step asks this once per Newton iteration. */
static int poll_progress(void *user)
{
    pn_solver *s = user;
    s->progress.newton_iterations = s->last_newton + s->pstep->newton_iterations;
    if (!s->interrupted && s->settings.progress(s->settings.progress_user, &s->progress))
        s->interrupted = 1;
    return s->interrupted;
}

static void attach_progress(pn_solver *s)
{
    s->pstep->poll = s->settings.progress ? poll_progress : NULL;
    s->pstep->poll_user = s;
}

pn_error pn_solver_failure(const pn_solver *s, pn_error_info *info)
{
    return pn_fail(info, s->failure.code, "%s", s->failure.message);
}

pn_error pn_solver_create(const pn_problem *prob, const pn_settings *settings, pn_solver **out,
                          pn_error_info *info)
{
    const double started = pn_clock_seconds();
    *out = NULL;
    pn_error err = pn_settings_validate(settings, info);
    if (err != PN_OK)
        return err;
    err = pn_problem_validate(prob, info);
    if (err != PN_OK)
        return err;
    err = pn_memory_check(pn_solver_bytes(prob), settings->max_memory, info, "the solver");
    if (err != PN_OK)
        return err;
    pn_solver *s = calloc(1, sizeof *s);
    if (!s)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory");
    const size_t m = (size_t)prob->num_rows, G = (size_t)prob->num_groups;
    s->prob = *prob;
    s->settings = *settings;
    s->b = malloc(m * sizeof(double));
    s->q = calloc(G, sizeof(double));
    s->w = calloc(m, sizeof(double));
    s->y = calloc(m, sizeof(double));
    s->w_run = calloc(m, sizeof(double));
    s->y_run = calloc(m, sizeof(double));
    s->w_next = calloc(m, sizeof(double));
    s->e = calloc(m, sizeof(double));
    s->admm_z = calloc(m, sizeof(double));
    s->admm_u = calloc(m, sizeof(double));
    s->admm_scratch = calloc(3 * m, sizeof(double));
    s->pool = calloc(PN_POOL_SIZE * (size_t)prob->num_rules, 1);
    s->found = calloc(PN_POOL_SIZE * (size_t)prob->num_rules, 1);
    s->found_scratch = calloc((size_t)prob->num_rules, 1);
    s->w_start = calloc(m, sizeof(double));
    s->mask_cur = calloc((size_t)prob->num_rules, 1);
    s->mask_trial = calloc((size_t)prob->num_rules, 1);
    s->tried = calloc((size_t)prob->num_rules, 1);
    s->rule_err = calloc((size_t)prob->num_rules, sizeof(double));
    s->order = calloc((size_t)prob->num_rules, sizeof(int32_t));
    if (!s->b || !s->q || !s->w || !s->y || !s->w_run || !s->y_run || !s->w_next || !s->e ||
        !s->admm_z || !s->admm_u || !s->admm_scratch || !s->pool || !s->found ||
        !s->found_scratch || !s->w_start || !s->mask_cur || !s->mask_trial || !s->tried ||
        !s->rule_err || !s->order) {
        pn_solver_free(s);
        return pn_fail(info, PN_ERR_NOMEM, "out of memory for the solver");
    }
    memcpy(s->b, prob->target, m * sizeof(double));
    s->prob.target = s->b;
    err = pn_pstep_create(&s->prob, settings->threads, &s->pstep, info);
    if (err != PN_OK) {
        pn_solver_free(s);
        return err;
    }
    attach_progress(s);
    pn_rng_seed(&s->rng, settings->seed);
    s->setup_time = pn_clock_seconds() - started;
    *out = s;
    return PN_OK;
}

void pn_solver_free(pn_solver *s)
{
    if (!s)
        return;
    pn_pstep_free(s->pstep);
    free(s->b);
    free(s->q);
    free(s->w);
    free(s->y);
    free(s->w_run);
    free(s->y_run);
    free(s->w_next);
    free(s->e);
    free(s->admm_z);
    free(s->admm_u);
    free(s->admm_scratch);
    free(s->pool);
    free(s->found);
    free(s->found_scratch);
    free(s->w_start);
    free(s->mask_cur);
    free(s->mask_trial);
    free(s->tried);
    free(s->rule_err);
    free(s->order);
    free(s);
}

pn_error pn_solver_update_settings(pn_solver *s, const pn_settings *settings, pn_error_info *info)
{
    const double started = pn_clock_seconds();
    pn_error err = pn_settings_validate(settings, info);
    if (err != PN_OK)
        return err;
    if (settings->threads != s->settings.threads)
        return pn_fail(info, PN_ERR_INVALID,
                       "threads is fixed when the solver is created (%d, asked for %d)",
                       s->settings.threads, settings->threads);
    if (settings->seed != s->settings.seed)
        pn_rng_seed(&s->rng, settings->seed);
    s->settings = *settings;
    attach_progress(s);
    s->update_time += pn_clock_seconds() - started;
    return PN_OK;
}

pn_error pn_solver_update_targets(pn_solver *s, const double *target, pn_error_info *info)
{
    const double started = pn_clock_seconds();
    pn_error err = pn_targets_validate(&s->prob, target, info);
    if (err != PN_OK)
        return err;
    memcpy(s->b, target, (size_t)s->prob.num_rows * sizeof *s->b);
    s->update_time += pn_clock_seconds() - started;
    return PN_OK;
}

const pn_settings *pn_solver_settings(const pn_solver *s)
{
    return &s->settings;
}
const double *pn_solver_q(const pn_solver *s)
{
    return s->q;
}
const double *pn_solver_w(const pn_solver *s)
{
    return s->w;
}
const double *pn_solver_y(const pn_solver *s)
{
    return s->y;
}

static double lambda_w_of(const pn_settings *st)
{
    return exp2(st->log2_lambda_w);
}

/* lambda_p |q|^2 (given qq = |q|^2) and lambda_w Pw(w). */
static void penalties(const pn_problem *prob, const pn_settings *st, double qq, const double *w,
                      double *penalty_p, double *penalty_w)
{
    double lasso = 0.0, ridge = 0.0;
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        double sq = 0.0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            sq += w[i] * w[i];
        lasso += sqrt((double)pn_rule_size(prob, r) * sq);
        ridge += sq;
    }
    *penalty_w = lambda_w_of(st) * (st->alpha * lasso + (1.0 - st->alpha) * ridge);
    *penalty_p = st->lambda_p * qq;
}

/* E(p, w) from y = A'q. */
static double weighted_error_of(const pn_problem *prob, const double *w, const double *y)
{
    double E = 0.0;
    for (int32_t i = 0; i < prob->num_rows; ++i) {
        double d = y[i] - prob->target[i];
        E += w[i] * d * d;
    }
    return E;
}

double pn_objective(const pn_problem *prob, const pn_settings *st, const double *q, const double *w,
                    double *weighted_error, double *penalty_p, double *penalty_w)
{
    double *y = malloc((size_t)prob->num_rows * sizeof *y);
    if (!y)
        return NAN;
    pn_apply_groups(prob, q, y);
    double E = weighted_error_of(prob, w, y), pp, pw, qq = 0.0;
    free(y);
    for (int64_t k = 0; k < prob->num_groups; ++k)
        qq += q[k] * q[k];
    penalties(prob, st, qq, w, &pp, &pw);
    if (weighted_error)
        *weighted_error = E;
    if (penalty_p)
        *penalty_p = pp;
    if (penalty_w)
        *penalty_w = pw;
    return E + pp + pw;
}

static int exact_wstep(const pn_settings *st)
{
    return st->w_method == PN_WSTEP_EXACT || (st->w_method == PN_WSTEP_AUTO && st->alpha < 1.0);
}

/* New weights for the errors e into w_out (which holds the current ones,
 * ADMM's warm start) and their KKT residual. */
static pn_outcome wstep(pn_solver *s, const double *e, double *w_out, double *kkt)
{
    const pn_settings *st = &s->settings;
    pn_wstep_problem wp = {s->prob.num_rules, s->prob.rule_start, e, lambda_w_of(st), st->alpha};
    const int use_exact = exact_wstep(st);
    int rc;
    if (use_exact) {
        rc = pn_wstep_exact(&wp, w_out);
    } else {
        const int32_t m = s->prob.num_rows;
        pn_admm_state as = {s->admm_z, s->admm_u, s->admm_scratch, st->admm_rho, 0, 0.0, 0.0};
        /* warm start from the incoming weights */
        memcpy(s->admm_z, w_out, (size_t)m * sizeof *w_out);
        memset(s->admm_u, 0, (size_t)m * sizeof *s->admm_u);
        rc = pn_wstep_admm(&wp, &as, st->admm_max_iter, st->admm_tol, w_out);
        rc = rc < 0 ? -1 : 0;
    }
    *kkt = pn_wstep_kkt(&wp, w_out);
    return rc < 0 ? PN_OUTCOME_W_STEP : PN_OUTCOME_OK;
}

static uint64_t selection_hash(const double *w, int32_t m)
{
    uint64_t h = 1469598103934665603ull;
    for (int32_t i = 0; i < m; ++i) {
        h ^= (uint64_t)(w[i] > 0.0);
        h *= 1099511628211ull;
    }
    return h;
}

/* KKT residual of the w-step at the current errors s->e and weights w. */
static double wstep_kkt_at(const pn_solver *s, const double *w)
{
    const pn_settings *st = &s->settings;
    pn_wstep_problem wp = {s->prob.num_rules, s->prob.rule_start, s->e, lambda_w_of(st), st->alpha};
    return pn_wstep_kkt(&wp, w);
}

/* Records why the run failed, naming the part that did (outcome.h), and
 * returns the outcome. */
static pn_outcome run_failed(pn_solver *s, pn_outcome why, const char *reason)
{
    s->failed = why;
    if (why == PN_OUTCOME_INTERRUPTED)
        pn_fail(&s->failure, PN_ERR_INTERRUPTED, "interrupted after %d alternations",
                s->progress.alternations);
    else
        pn_fail(&s->failure, pn_outcome_error(why), "%s broke down: %s", pn_outcome_part(why),
                reason ? reason : "no reason given");
    return why;
}

/* The p-step half of an alternation: q optimal for w (certified by its
 * KKT residual), the objective *F, the errors s->e and both KKT
 * residuals. */
static pn_outcome p_half(pn_solver *s, const double *w, double *F)
{
    const pn_problem *prob = &s->prob;
    const pn_settings *st = &s->settings;
    const pn_outcome rc =
        pn_pstep_solve(s->pstep, prob, w, st->lambda_p, st->p_tol, st->p_max_newton, s->y_run);
    if (rc < 0)
        return run_failed(s, s->interrupted ? PN_OUTCOME_INTERRUPTED : rc, s->pstep->failure);
    s->last_newton += s->pstep->newton_iterations;
    s->last_p_kkt = s->pstep->kkt;
    double pp, pw;
    penalties(prob, st, s->pstep->qq, w, &pp, &pw);
    *F = weighted_error_of(prob, w, s->y_run) + pp + pw;
    if (s->trace && s->trace_count < s->trace_capacity)
        s->trace[s->trace_count++] = *F;
    for (int32_t i = 0; i < prob->num_rows; ++i) {
        double d = s->y_run[i] - prob->target[i];
        s->e[i] = d * d;
    }
    s->last_w_kkt = wstep_kkt_at(s, w);
    if (!isfinite(*F) || !isfinite(s->last_p_kkt) || !isfinite(s->last_w_kkt)) {
        s->failed = PN_OUTCOME_NOT_FINITE;
        pn_fail(&s->failure, PN_ERR_NUMERIC,
                "the realization is not finite (objective %g, KKT residuals p %g, w %g)", *F,
                s->last_p_kkt, s->last_w_kkt);
        return PN_OUTCOME_NOT_FINITE;
    }
    return PN_OUTCOME_OK;
}

/* The w-step half: new weights for the errors of the last p-step, exact
 * for alpha < 1; an inexact (ADMM) result is kept only if it does not
 * raise the objective *F. Updates w and *F; the progress callback may stop
 * the run here. */
static pn_outcome w_half(pn_solver *s, double *w, double *F)
{
    const pn_problem *prob = &s->prob;
    const pn_settings *st = &s->settings;
    const int32_t m = prob->num_rows;
    memcpy(s->w_next, w, (size_t)m * sizeof *w);
    double wkkt;
    if (wstep(s, s->e, s->w_next, &wkkt) < 0)
        return run_failed(s, PN_OUTCOME_W_STEP,
                          exact_wstep(st) ? "no multiplier balances the weights"
                                          : "ADMM did not converge");
    s->progress.alternations++;
    if (st->progress && !s->interrupted && st->progress(st->progress_user, &s->progress))
        s->interrupted = 1;
    if (s->interrupted)
        return run_failed(s, PN_OUTCOME_INTERRUPTED, NULL);
    double pp, pw;
    penalties(prob, st, s->pstep->qq, s->w_next, &pp, &pw);
    const double F_w = weighted_error_of(prob, s->w_next, s->y_run) + pp + pw;
    if (exact_wstep(st) || F_w <= *F * (1.0 + 4.0 * DBL_EPSILON)) {
        memcpy(w, s->w_next, (size_t)m * sizeof *w);
        *F = F_w;
    }
    if (s->trace && s->trace_count < s->trace_capacity)
        s->trace[s->trace_count++] = *F;
    return PN_OUTCOME_OK;
}

/* Stuck without converging: a cycle if the selection pattern of w came
 * back after changing within the history, otherwise just slow. */
static int cycled(const uint64_t *history, int it, const double *w, int32_t m)
{
    const uint64_t h = selection_hash(w, m);
    int seen = 0, changed = 0;
    for (int k = 1; k < PN_HISTORY; ++k) {
        seen |= history[(it - 1 - k + 2 * PN_HISTORY) % PN_HISTORY] == h && changed;
        changed |= history[(it - 1 - k + 2 * PN_HISTORY) % PN_HISTORY] != h;
    }
    return seen;
}

/* Makes the run's end point the solution if its objective F beats the
 * best so far. */
static void keep_if_best(pn_solver *s, const double *w, double F, pn_status status)
{
    const pn_problem *prob = &s->prob;
    const int32_t m = prob->num_rows;
    if (s->have_solution && !(F < s->best.objective))
        return;
    pn_pstep_expand(s->pstep, s->q);
    memcpy(s->w, w, (size_t)m * sizeof *s->w);
    memcpy(s->y, s->y_run, (size_t)m * sizeof *s->y);
    s->best.objective = F;
    s->best.status = status;
    s->best.weighted_error = weighted_error_of(prob, w, s->y_run);
    penalties(prob, &s->settings, s->pstep->qq, w, &s->best.penalty_p, &s->best.penalty_w);
    s->best.p_kkt = s->last_p_kkt;
    s->best.w_kkt = s->last_w_kkt;
    s->have_solution = 1;
}

pn_outcome pn_solver_run_from(pn_solver *s, const double *w_start, pn_run *run)
{
    s->progress.starts++;
    const pn_settings *st = &s->settings;
    const int32_t m = s->prob.num_rows;
    double *w = s->w_run;
    memcpy(w, w_start, (size_t)m * sizeof *w);
    uint64_t history[PN_HISTORY] = {0};
    double F_prev = INFINITY, F = INFINITY;
    int stagnant = 0, it = 0;
    pn_status status = PN_STATUS_MAX_ITER;
    for (;;) {
        pn_outcome rc = p_half(s, w, &F);
        if (rc < 0)
            return rc;
        /* converged when the objective has stopped falling and w is also
         * optimal for this q: the returned pair satisfies both KKT systems */
        if (stagnant && s->last_w_kkt <= st->kkt_tol) {
            status = PN_STATUS_SOLVED;
            break;
        }
        if (stagnant >= PN_HISTORY && cycled(history, it, w, m)) {
            status = PN_STATUS_LIMIT_CYCLE;
            break;
        }
        if (it >= st->max_alternations)
            break;
        ++it;
        rc = w_half(s, w, &F);
        if (rc < 0)
            return rc;
        stagnant = F_prev - F <= st->obj_tol * fabs(F) ? stagnant + 1 : 0;
        history[(it - 1) % PN_HISTORY] = selection_hash(w, m);
        F_prev = F;
    }
    run->objective = F;
    run->status = status;
    run->alternations = it;
    pn_solver_note_found(s, w, F);
    keep_if_best(s, w, F, status);
    return PN_OUTCOME_OK;
}

void pn_solver_set_trace(pn_solver *s, double *buf, int capacity)
{
    s->trace = buf;
    s->trace_capacity = buf ? capacity : 0;
    s->trace_count = 0;
}

int pn_solver_trace_count(const pn_solver *s)
{
    return s->trace_count;
}

void pn_weights_from_mask(const pn_problem *prob, const unsigned char *mask, double *w)
{
    int32_t total = 0;
    for (int32_t r = 0; r < prob->num_rules; ++r)
        if (mask[r])
            total += pn_rule_size(prob, r);
    for (int32_t r = 0; r < prob->num_rules; ++r)
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            w[i] = total == 0 ? 1.0 / prob->num_rows : (mask[r] ? 1.0 / total : 0.0);
}

void pn_solver_rule_stats(const pn_solver *s, double *group_norm, double *rule_error,
                          unsigned char *selected)
{
    const pn_problem *prob = &s->prob;
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        double wn = 0.0, err = 0.0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i) {
            wn += s->w[i] * s->w[i];
            double d = s->y[i] - prob->target[i];
            err += d * d;
        }
        if (group_norm)
            group_norm[r] = sqrt(wn);
        if (rule_error)
            rule_error[r] = sqrt(err);
        if (selected)
            selected[r] = wn > 0.0;
    }
}

pn_error pn_analyze(const pn_problem *prob, const pn_settings *st, const double *q, double *w_out,
                    pn_error_info *info)
{
    pn_error err = pn_settings_validate(st, info);
    if (err != PN_OK)
        return err;
    const size_t m = (size_t)prob->num_rows;
    double *buf = malloc(6 * m * sizeof *buf); /* y/e, z, u, 3m ADMM scratch */
    if (!buf)
        return pn_fail(info, PN_ERR_NOMEM, "out of memory");
    double *e = buf, *z = buf + m, *u = buf + 2 * m, *scratch = buf + 3 * m;
    pn_apply_groups(prob, q, e);
    for (size_t i = 0; i < m; ++i) {
        double d = e[i] - prob->target[i];
        e[i] = d * d;
    }
    pn_wstep_problem wp = {prob->num_rules, prob->rule_start, e, lambda_w_of(st), st->alpha};
    int rc;
    if (st->alpha < 1.0 && st->w_method != PN_WSTEP_ADMM) {
        rc = pn_wstep_exact(&wp, w_out);
    } else {
        for (size_t i = 0; i < m; ++i) {
            z[i] = 1.0 / (double)m;
            u[i] = 0.0;
        }
        pn_admm_state as = {z, u, scratch, st->admm_rho, 0, 0.0, 0.0};
        rc = pn_wstep_admm(&wp, &as, st->admm_max_iter, st->admm_tol, w_out) < 0 ? -1 : 0;
    }
    free(buf);
    if (rc < 0)
        return pn_fail(info, PN_ERR_NUMERIC, "the w-step failed");
    return PN_OK;
}
