#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solver_internal.h"

void pn_settings_default(pn_settings *s)
{
    memset(s, 0, sizeof *s);
    s->log2_lambda_w = 0.0;
    s->alpha = 0.8;
    s->lambda_p = 1e-4;
    s->seed = 1;
    s->restarts = 8;
    s->grow_seeds = 8;
    s->grow_tries = 2;
    s->warm_pool = 2;
    s->max_alternations = 300;
    s->obj_tol = 1e-9;
    s->kkt_tol = 1e-6;
    s->p_tol = 1e-11;
    s->p_max_newton = 100;
    s->w_method = PN_WSTEP_AUTO;
    s->admm_rho = 0.0;
    s->admm_max_iter = 20000;
    s->admm_tol = 1e-12;
    s->max_memory = PN_DEFAULT_MAX_MEMORY;
}

pn_error pn_settings_validate(const pn_settings *s, pn_error_info *info)
{
    if (!isfinite(s->log2_lambda_w) || fabs(s->log2_lambda_w) > 60.0)
        return pn_fail(info, PN_ERR_INVALID, "log2_lambda_w must be finite and within [-60, 60]");
    if (!(s->alpha >= 0.0 && s->alpha <= 1.0))
        return pn_fail(info, PN_ERR_INVALID, "alpha must be within [0, 1]");
    if (!(s->lambda_p >= 0.0 && s->lambda_p <= 1.0))
        return pn_fail(info, PN_ERR_INVALID, "lambda_p must be within [0, 1] (got %g)",
                       s->lambda_p);
    const struct {
        const char *name;
        int value, min;
    } counts[] = {{"restarts", s->restarts, 0},
                  {"grow_seeds", s->grow_seeds, 0},
                  {"grow_tries", s->grow_tries, 1},
                  {"warm_pool", s->warm_pool, 0},
                  {"max_alternations", s->max_alternations, 1},
                  {"p_max_newton", s->p_max_newton, 1},
                  {"admm_max_iter", s->admm_max_iter, 1}};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; ++k)
        if (counts[k].value < counts[k].min)
            return pn_fail(info, PN_ERR_INVALID, "%s must be >= %d (got %d)", counts[k].name,
                           counts[k].min, counts[k].value);
    const struct {
        const char *name;
        double value;
    } tols[] = {{"obj_tol", s->obj_tol},
                {"kkt_tol", s->kkt_tol},
                {"p_tol", s->p_tol},
                {"admm_tol", s->admm_tol}};
    for (size_t k = 0; k < sizeof tols / sizeof tols[0]; ++k)
        if (!(tols[k].value > 0.0) || !isfinite(tols[k].value))
            return pn_fail(info, PN_ERR_INVALID, "%s must be finite and > 0", tols[k].name);
    if (s->w_method != PN_WSTEP_AUTO && s->w_method != PN_WSTEP_EXACT &&
        s->w_method != PN_WSTEP_ADMM)
        return pn_fail(info, PN_ERR_INVALID, "w_method must be auto, exact or admm");
    if (s->w_method == PN_WSTEP_EXACT && !(s->alpha < 1.0))
        return pn_fail(info, PN_ERR_INVALID, "w_method exact needs alpha < 1 (use admm)");
    if (!(s->admm_rho >= 0.0) || !isfinite(s->admm_rho))
        return pn_fail(info, PN_ERR_INVALID, "admm_rho must be finite and >= 0 (0 = automatic)");
    if (s->max_memory < 1 || s->max_memory > PN_MAX_MEMORY_LIMIT)
        return pn_fail(info, PN_ERR_INVALID, "max_memory must be within [1, %lld] bytes (got %lld)",
                       (long long)PN_MAX_MEMORY_LIMIT, (long long)s->max_memory);
    return PN_OK;
}

const char *pn_status_name(pn_status status)
{
    switch (status) {
    case PN_STATUS_UNSOLVED:
        return "unsolved";
    case PN_STATUS_SOLVED:
        return "solved";
    case PN_STATUS_LIMIT_CYCLE:
        return "limit_cycle";
    case PN_STATUS_MAX_ITER:
        return "max_iterations";
    }
    return "unknown";
}

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
    err = pn_pstep_create(&s->prob, &s->pstep, info);
    if (err != PN_OK) {
        pn_solver_free(s);
        return err;
    }
    attach_progress(s);
    pn_rng_seed(&s->rng, settings->seed);
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
    pn_error err = pn_settings_validate(settings, info);
    if (err != PN_OK)
        return err;
    if (settings->seed != s->settings.seed)
        pn_rng_seed(&s->rng, settings->seed);
    s->settings = *settings;
    attach_progress(s);
    return PN_OK;
}

pn_error pn_solver_update_targets(pn_solver *s, const double *target, pn_error_info *info)
{
    pn_error err = pn_targets_validate(&s->prob, target, info);
    if (err != PN_OK)
        return err;
    memcpy(s->b, target, (size_t)s->prob.num_rows * sizeof *s->b);
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

static int wstep(pn_solver *s, const double *e, double *w_out, double *kkt)
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
    return rc;
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

static void selection_of(const pn_problem *prob, const double *w, unsigned char *mask);

/* Keeps the run's selection among the best distinct ones of this solve. */
static void note_found(pn_solver *s, const double *w, double objective)
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

/* KKT residual of the w-step at the current errors s->e and weights w. */
static double wstep_kkt_at(const pn_solver *s, const double *w)
{
    const pn_settings *st = &s->settings;
    pn_wstep_problem wp = {s->prob.num_rules, s->prob.rule_start, s->e, lambda_w_of(st), st->alpha};
    return pn_wstep_kkt(&wp, w);
}

static int interrupted(pn_solver *s)
{
    pn_fail(&s->failure, PN_ERR_INTERRUPTED, "interrupted after %d alternations",
            s->progress.alternations);
    return -1;
}

int pn_solver_run_from(pn_solver *s, const double *w_start, pn_run *run)
{
    s->progress.starts++;
    const pn_problem *prob = &s->prob;
    const pn_settings *st = &s->settings;
    const int32_t m = prob->num_rows;
    double *w = s->w_run;
    memcpy(w, w_start, (size_t)m * sizeof *w);
    uint64_t history[PN_HISTORY] = {0};
    double F_prev = INFINITY, F = INFINITY;
    int stagnant = 0, it = 0;
    pn_status status = PN_STATUS_MAX_ITER;
    for (;;) {
        /* p-step: q optimal for the current w (certified by its KKT residual) */
        if (pn_pstep_solve(s->pstep, prob, w, st->lambda_p, st->p_tol, st->p_max_newton, s->y_run) <
            0) {
            if (s->interrupted)
                return interrupted(s);
            pn_fail(&s->failure, PN_ERR_NUMERIC, "the p-step broke down: %s",
                    s->pstep->failure ? s->pstep->failure : "no reason given");
            return -1;
        }
        s->last_newton += s->pstep->newton_iterations;
        s->last_p_kkt = s->pstep->kkt;
        double pp, pw;
        penalties(prob, st, s->pstep->qq, w, &pp, &pw);
        F = weighted_error_of(prob, w, s->y_run) + pp + pw;
        if (s->trace && s->trace_count < s->trace_capacity)
            s->trace[s->trace_count++] = F;
        for (int32_t i = 0; i < m; ++i) {
            double d = s->y_run[i] - prob->target[i];
            s->e[i] = d * d;
        }
        /* converged when the objective has stopped falling and w is also
         * optimal for this q: the returned pair satisfies both KKT systems */
        s->last_w_kkt = wstep_kkt_at(s, w);
        if (!isfinite(F) || !isfinite(s->last_p_kkt) || !isfinite(s->last_w_kkt)) {
            pn_fail(&s->failure, PN_ERR_NUMERIC,
                    "the realization is not finite (objective %g, KKT residuals p %g, w %g)", F,
                    s->last_p_kkt, s->last_w_kkt);
            return -1;
        }
        if (stagnant && s->last_w_kkt <= st->kkt_tol) {
            status = PN_STATUS_SOLVED;
            break;
        }
        if (stagnant >= PN_HISTORY) {
            /* stuck without converging: a cycle if a selection pattern came
             * back after changing, otherwise just slow */
            const uint64_t h = selection_hash(w, m);
            int seen = 0, changed = 0;
            for (int k = 1; k < PN_HISTORY; ++k) {
                seen |= history[(it - 1 - k + 2 * PN_HISTORY) % PN_HISTORY] == h && changed;
                changed |= history[(it - 1 - k + 2 * PN_HISTORY) % PN_HISTORY] != h;
            }
            if (seen) {
                status = PN_STATUS_LIMIT_CYCLE;
                break;
            }
        }
        if (it >= st->max_alternations)
            break;
        ++it;
        /* w-step: exact for alpha < 1; an inexact (ADMM) result is kept only
         * if it does not raise the objective */
        memcpy(s->w_next, w, (size_t)m * sizeof *w);
        double wkkt;
        if (wstep(s, s->e, s->w_next, &wkkt) < 0) {
            pn_fail(&s->failure, PN_ERR_NUMERIC, "the w-step broke down: %s",
                    exact_wstep(st) ? "no multiplier balances the weights"
                                    : "ADMM did not converge");
            return -1;
        }
        s->progress.alternations++;
        if (st->progress && !s->interrupted && st->progress(st->progress_user, &s->progress))
            s->interrupted = 1;
        if (s->interrupted)
            return interrupted(s);
        penalties(prob, st, s->pstep->qq, s->w_next, &pp, &pw);
        const double F_w = weighted_error_of(prob, s->w_next, s->y_run) + pp + pw;
        if (exact_wstep(st) || F_w <= F * (1.0 + 4.0 * DBL_EPSILON)) {
            memcpy(w, s->w_next, (size_t)m * sizeof *w);
            F = F_w;
        }
        if (s->trace && s->trace_count < s->trace_capacity)
            s->trace[s->trace_count++] = F;
        stagnant = F_prev - F <= st->obj_tol * fabs(F) ? stagnant + 1 : 0;
        history[(it - 1) % PN_HISTORY] = selection_hash(w, m);
        F_prev = F;
    }
    run->objective = F;
    run->status = status;
    run->alternations = it;
    note_found(s, w, F);
    if (!s->have_solution || F < s->best.objective) {
        pn_pstep_expand(s->pstep, s->q);
        memcpy(s->w, w, (size_t)m * sizeof *s->w);
        memcpy(s->y, s->y_run, (size_t)m * sizeof *s->y);
        s->best.objective = F;
        s->best.status = status;
        s->best.weighted_error = weighted_error_of(prob, w, s->y_run);
        penalties(prob, st, s->pstep->qq, w, &s->best.penalty_p, &s->best.penalty_w);
        s->best.p_kkt = s->last_p_kkt;
        s->best.w_kkt = s->last_w_kkt;
        s->have_solution = 1;
    }
    return 0;
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

static void selection_of(const pn_problem *prob, const double *w, unsigned char *mask)
{
    for (int32_t r = 0; r < prob->num_rules; ++r) {
        mask[r] = 0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            mask[r] |= w[i] > 0.0;
    }
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

static int run_mask(pn_solver *s, const unsigned char *mask, pn_run *run, pn_info *sum)
{
    pn_weights_from_mask(&s->prob, mask, s->w_start);
    if (pn_solver_run_from(s, s->w_start, run) < 0)
        return -1;
    sum->alternations += run->alternations;
    sum->starts++;
    return 0;
}

/* Greedy growth over rule subsets from a single rule: add the candidates
 * that the current realization already fits best, keeping an addition when
 * the objective (3) improves. At small lambda_w this searches for the
 * largest consistent subset (Theorem 2); elsewhere it is one more start. */
static int grow_from(pn_solver *s, int32_t seed, pn_info *sum)
{
    const pn_problem *prob = &s->prob;
    const int32_t K = prob->num_rules;
    unsigned char *cur = s->mask_cur, *trial = s->mask_trial;
    double *err = s->rule_err;
    memset(cur, 0, (size_t)K);
    cur[seed] = 1;
    pn_run run;
    if (run_mask(s, cur, &run, sum) < 0)
        return -1;
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
            if (run_mask(s, trial, &run, sum) < 0)
                return -1;
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
    return 0;
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

pn_error pn_solver_solve(pn_solver *s, pn_start start, pn_info *out, pn_error_info *info)
{
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
    pn_solver_best_info(s, out);
    return PN_OK;
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
