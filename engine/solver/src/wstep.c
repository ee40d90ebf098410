#include "wstep.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "simplex.h"

double pn_wstep_objective(const pn_wstep_problem *p, const double *w)
{
    double lin = 0.0, lasso = 0.0, ridge = 0.0;
    for (int32_t r = 0; r < p->num_rules; ++r) {
        double sq = 0.0;
        for (int32_t i = p->rule_start[r]; i < p->rule_start[r + 1]; ++i) {
            lin += p->e[i] * w[i];
            sq += w[i] * w[i];
        }
        lasso += sqrt((double)(p->rule_start[r + 1] - p->rule_start[r])) * sqrt(sq);
        ridge += sq;
    }
    return lin + p->lambda_w * (p->alpha * lasso + (1.0 - p->alpha) * ridge);
}

void pn_group_soft_threshold(const double *x, double *out, int32_t len, double c, double t)
{
    double norm = 0.0;
    for (int32_t i = 0; i < len; ++i)
        norm += x[i] * x[i];
    norm = sqrt(norm);
    double scale = norm > 0.0 ? 1.0 - t / (c * norm) : 0.0;
    if (scale < 0.0)
        scale = 0.0;
    for (int32_t i = 0; i < len; ++i)
        out[i] = scale * x[i];
}

/* Fills w for a given tau (exact solver) and returns sum(w). */
static double weights_at(const pn_wstep_problem *p, double tau, double *w)
{
    const double c = 2.0 * p->lambda_w * (1.0 - p->alpha);
    double total = 0.0;
    for (int32_t r = 0; r < p->num_rules; ++r) {
        const int32_t lo = p->rule_start[r], hi = p->rule_start[r + 1];
        double sq = 0.0;
        for (int32_t i = lo; i < hi; ++i) {
            double v = tau - p->e[i];
            if (v > 0.0)
                sq += v * v;
        }
        double norm = sqrt(sq);
        double t = p->lambda_w * p->alpha * sqrt((double)(hi - lo));
        double scale = norm > t ? (1.0 - t / norm) / c : 0.0;
        for (int32_t i = lo; i < hi; ++i) {
            double v = tau - p->e[i];
            w[i] = v > 0.0 ? scale * v : 0.0;
            total += w[i];
        }
    }
    return total;
}

int pn_wstep_exact(const pn_wstep_problem *p, double *w)
{
    if (!(p->alpha < 1.0))
        return -1;
    const int32_t m = pn_wstep_rows(p);
    double emin = p->e[0], emax = p->e[0];
    for (int32_t i = 1; i < m; ++i) {
        emin = fmin(emin, p->e[i]);
        emax = fmax(emax, p->e[i]);
    }
    /* sum(w) = 0 at tau = emin; grow an upper bracket until sum(w) >= 1 */
    double lo = emin, hi = emax, step = emax - emin;
    if (!(step > 0.0))
        step = 1e-300;
    step = fmax(step, 2.0 * p->lambda_w * (1.0 - p->alpha) / (double)m);
    double f_hi = weights_at(p, hi, w);
    while (f_hi < 1.0) {
        lo = hi;
        hi += step;
        step *= 2.0;
        f_hi = weights_at(p, hi, w);
    }
    double f_lo = weights_at(p, lo, w);
    /* Illinois-modified regula falsi: superlinear on this monotone,
     * piecewise-smooth function, with the bracket as a safeguard. */
    int side = 0;
    double g_lo = f_lo - 1.0, g_hi = f_hi - 1.0;
    for (int it = 0; it < 200 && hi - lo > 4.0 * DBL_EPSILON * fmax(fabs(hi), 1e-300); ++it) {
        double tau = (g_hi - g_lo) > 0.0 ? hi - g_hi * (hi - lo) / (g_hi - g_lo) : 0.5 * (lo + hi);
        if (!(tau > lo && tau < hi))
            tau = 0.5 * (lo + hi);
        double g = weights_at(p, tau, w) - 1.0;
        if (g == 0.0) {
            lo = hi = tau;
            break;
        }
        if (g < 0.0) {
            lo = tau;
            g_lo = g;
            if (side == -1)
                g_hi *= 0.5;
            side = -1;
        } else {
            hi = tau;
            g_hi = g;
            if (side == 1)
                g_lo *= 0.5;
            side = 1;
        }
    }
    double total = weights_at(p, hi, w);
    if (!(total > 0.0))
        return -1;
    for (int32_t i = 0; i < m; ++i)
        w[i] /= total;
    return 0;
}

double pn_wstep_kkt(const pn_wstep_problem *p, const double *w)
{
    const double lw = p->lambda_w, a = p->alpha;
    /* gradient of the smooth parts plus the lasso gradient on selected rules */
    double tau_sum = 0.0, sum_w = 0.0;
    int32_t support = 0;
    for (int32_t r = 0; r < p->num_rules; ++r) {
        const int32_t lo = p->rule_start[r], hi = p->rule_start[r + 1];
        double norm = 0.0;
        for (int32_t i = lo; i < hi; ++i)
            norm += w[i] * w[i];
        norm = sqrt(norm);
        for (int32_t i = lo; i < hi; ++i) {
            sum_w += w[i];
            if (w[i] > 0.0) {
                double g = p->e[i] + lw * a * sqrt((double)(hi - lo)) * w[i] / norm +
                           2.0 * lw * (1.0 - a) * w[i];
                tau_sum += g;
                support++;
            }
        }
    }
    if (support == 0)
        return INFINITY;
    const double tau = tau_sum / support;
    double res = fabs(sum_w - 1.0);
    for (int32_t r = 0; r < p->num_rules; ++r) {
        const int32_t lo = p->rule_start[r], hi = p->rule_start[r + 1];
        const double sqrt_m = sqrt((double)(hi - lo));
        double norm = 0.0;
        for (int32_t i = lo; i < hi; ++i)
            norm += w[i] * w[i];
        norm = sqrt(norm);
        if (norm > 0.0) {
            for (int32_t i = lo; i < hi; ++i) {
                double r_i;
                if (w[i] > 0.0)
                    r_i = fabs(p->e[i] + lw * a * sqrt_m * w[i] / norm +
                               2.0 * lw * (1.0 - a) * w[i] - tau);
                else
                    r_i = fmax(tau - p->e[i], 0.0); /* need e_i >= tau */
                res = fmax(res, r_i);
            }
        } else {
            /* dropped: the subgradient bound |(tau - e_r)_+| <= lw a sqrt(m_r) */
            double sq = 0.0;
            for (int32_t i = lo; i < hi; ++i) {
                double v = tau - p->e[i];
                if (v > 0.0)
                    sq += v * v;
            }
            res = fmax(res, fmax(sqrt(sq) - lw * a * sqrt_m, 0.0));
        }
    }
    return res;
}

double pn_admm_default_rho(const pn_wstep_problem *p)
{
    const double m = (double)pn_wstep_rows(p);
    return 2.0 * p->lambda_w * (1.0 - p->alpha) + p->lambda_w * p->alpha * m;
}

int pn_wstep_admm(const pn_wstep_problem *p, pn_admm_state *st, int max_iter, double tol, double *w)
{
    const int32_t m = pn_wstep_rows(p);
    double *z = st->z, *u = st->u;
    double *x = st->scratch, *z_old = st->scratch + m, *sort = st->scratch + 2 * m;
    double rho = st->rho > 0.0 ? st->rho : pn_admm_default_rho(p);
    const double ridge = 2.0 * p->lambda_w * (1.0 - p->alpha);
    double e_max = 0.0;
    for (int32_t i = 0; i < m; ++i)
        e_max = fmax(e_max, p->e[i]);
    int status = 1, it = 0;
    while (it < max_iter) {
        ++it;
        const double c = rho + ridge;
        /* (17): per rule, the group soft-threshold of e~ = (rho (z - u) - e) / c */
        for (int32_t i = 0; i < m; ++i)
            x[i] = (rho * (z[i] - u[i]) - p->e[i]) / c;
        for (int32_t r = 0; r < p->num_rules; ++r) {
            const int32_t lo = p->rule_start[r], len = p->rule_start[r + 1] - lo;
            pn_group_soft_threshold(x + lo, w + lo, len, c,
                                    p->lambda_w * p->alpha * sqrt((double)len));
        }
        /* (18): z = projection of w + u; (16): u += w - z */
        memcpy(z_old, z, (size_t)m * sizeof *z);
        for (int32_t i = 0; i < m; ++i)
            x[i] = w[i] + u[i];
        pn_project_simplex(x, z, (size_t)m, 1.0, sort);
        double primal = 0.0, dz = 0.0, wz = 0.0, un = 0.0;
        for (int32_t i = 0; i < m; ++i) {
            u[i] += w[i] - z[i];
            primal = fmax(primal, fabs(w[i] - z[i]));
            dz = fmax(dz, fabs(z[i] - z_old[i]));
            wz = fmax(wz, fmax(fabs(w[i]), fabs(z[i])));
            un = fmax(un, fabs(u[i]));
        }
        const double dual = rho * dz;
        const double rel_primal = primal / fmax(wz, 1e-300);
        const double rel_dual = dual / fmax(fmax(rho * un, e_max), 1e-300);
        st->primal_residual = primal;
        st->dual_residual = dual;
        if (rel_primal <= tol && rel_dual <= tol) {
            status = 0;
            break;
        }
        /* residual balancing (Boyd et al. 2011, section 3.4.1); the scaled
         * dual u = y / rho is rescaled with rho */
        if (rel_primal > 10.0 * rel_dual) {
            rho *= 2.0;
            for (int32_t i = 0; i < m; ++i)
                u[i] *= 0.5;
        } else if (rel_dual > 10.0 * rel_primal) {
            rho *= 0.5;
            for (int32_t i = 0; i < m; ++i)
                u[i] *= 2.0;
        }
    }
    /* the simplex-feasible iterate is z */
    memcpy(w, z, (size_t)m * sizeof *w);
    st->iterations = it;
    st->rho = rho;
    return status;
}
