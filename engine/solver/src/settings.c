/* The solver's settings: defaults, validation, status names (solver.h). */
#include <math.h>
#include <string.h>

#include "parnassus/solver.h"

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
    s->threads = 1;
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
    if (s->threads < 1 || s->threads > PN_MAX_THREADS)
        return pn_fail(info, PN_ERR_INVALID, "threads must be within [1, %d] (got %d)",
                       (int)PN_MAX_THREADS, s->threads);
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
