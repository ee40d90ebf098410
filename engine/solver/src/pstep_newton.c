/* The p-step's restricted solve: semismooth Newton on the dual of (8) over
 * the working set (see pstep.h for the method). */
#include "pstep_internal.h"

#include <math.h>
#include <string.h>

/* F over the working set at (nu, mu); fills t, qt and, if grad != NULL, the
 * gradient (zero on passive rows). */
static double dual_eval(pn_pstep *ps, const double *b, const double *w, double lambda,
                        const double *nu, double mu, double *grad)
{
    const int32_t ka = ps->k_act, ma = ps->m_act;
    double F = -mu, mass = 0.0;
    for (int32_t a = 0; a < ma; ++a) {
        if (ps->passive[a])
            continue;
        const int32_t i = ps->act_row[a];
        F += nu[a] * b[i] + lambda * nu[a] * nu[a] / (2.0 * w[i]);
    }
    if (grad)
        memset(grad, 0, (size_t)(ma + 1) * sizeof *grad);
    for (int64_t p = 0; p < ps->ws_count; ++p) {
        const int32_t *col = ws_col(ps, p);
        const double c = ws_weight(ps, p), r = ws_center(ps, p);
        double sum = 0.0;
        for (int32_t a = 0; a < ka; ++a)
            sum += nu[col[a]]; /* passive rows hold nu = 0 */
        const double t = r + c * (mu - sum);
        const double q = t > 0.0 ? t : 0.0;
        ps->t[p] = t;
        ps->qt[p] = q;
        F += (q * q - r * r) / (2.0 * c);
        mass += q;
        if (grad && q > 0.0)
            for (int32_t a = 0; a < ka; ++a)
                grad[col[a]] -= q;
    }
    if (grad) {
        for (int32_t a = 0; a < ma; ++a) {
            if (ps->passive[a]) {
                grad[a] = 0.0;
                continue;
            }
            const int32_t i = ps->act_row[a];
            grad[a] += b[i] + lambda * nu[a] / w[i];
        }
        grad[ma] = mass - 1.0;
    }
    return F;
}

/* Mass of the working set at mu, minus one, and its slope (sum of c_j
 * over the support). */
static double mass_excess(const pn_pstep *ps, const double *s_of, double mu, double *slope)
{
    double f = -1.0, d = 0.0;
    for (int64_t p = 0; p < ps->ws_count; ++p) {
        const double c = ws_weight(ps, p);
        const double v = ws_center(ps, p) + c * (mu - s_of[p]);
        if (v > 0.0) {
            f += v;
            d += c;
        }
    }
    *slope = d;
    return f;
}

/* The same over the working-set positions in list (all of them when
 * *count < 0), keeping in list those that hold mass at mu, in order: the
 * sums are those of mass_excess, and while mu only decreases a position
 * dropped would hold no mass later either. */
static double mass_excess_kept(const pn_pstep *ps, const double *s_of, double mu, double *slope,
                               int32_t *list, int64_t *count)
{
    const int all = *count < 0;
    const int64_t n = all ? ps->ws_count : *count;
    double f = -1.0, d = 0.0;
    int64_t kept = 0;
    for (int64_t k = 0; k < n; ++k) {
        const int32_t p = all ? (int32_t)k : list[k];
        const double c = ws_weight(ps, p);
        const double v = ws_center(ps, p) + c * (mu - s_of[p]);
        if (v > 0.0) {
            f += v;
            d += c;
            list[kept++] = p;
        }
    }
    *count = kept;
    *slope = d;
    return f;
}

void pn_pstep_fit_mu(pn_pstep *ps, const double *nu)
{
    double *s_of = ps->kappa;
    double right = -INFINITY, csum = 0.0;
    pn_pstep_sync_ws(ps);
    for (int64_t p = 0; p < ps->ws_count; ++p) {
        const double c = ws_weight(ps, p);
        s_of[p] = ws_sum(ps, p, nu);
        right = fmax(right, s_of[p] - ws_center(ps, p) / c);
        csum += c;
    }
    double slope, mu = isfinite(ps->mu) ? ps->mu : right;
    double f = mass_excess(ps, s_of, mu, &slope);
    if (f < 0.0 && slope > 0.0) {
        mu -= f / slope;
        f = mass_excess(ps, s_of, mu, &slope);
    }
    if (f < 0.0) {
        /* nothing supported, or rounding: from `right` on every group is
         * supported and the mass grows linearly with slope csum */
        const double mass = mass_excess(ps, s_of, right, &slope) + 1.0;
        mu = right + (1.0 - mass) / csum;
        f = mass_excess(ps, s_of, mu, &slope);
    }
    /* Newton from the right of the root; once rounding stalls it (mu no
     * longer moves) the remaining iterations would change nothing. mu
     * decreases, so each pass sums only the groups the last one found with
     * mass (at a cold start a small part of the K' groups) */
    int32_t *list = ps->cand; /* free outside pricing's scan */
    int64_t count = -1;
    for (int it = 0; it < 500 && f > 1e-15 && slope > 0.0; ++it) {
        const double next = mu - f / slope;
        if (next == mu)
            break;
        if (count < 0) /* the groups with mass at the start */
            (void)mass_excess_kept(ps, s_of, mu, &slope, list, &count);
        mu = next;
        f = mass_excess_kept(ps, s_of, mu, &slope, list, &count);
    }
    ps->mu = mu;
}

/* The dual has one flat direction per rule r whose rows all have w > 0:
 * adding theta to nu on r's rows and to mu changes no mass (each group has
 * exactly one cell in r), only the lambda nu^2 / (2 w) term, whose minimum
 * along it is where sum_{a in r} nu_a / w_a = 0. That holds at the optimum;
 * moving there is exact and free. */
static void gauge_fix(const pn_pstep *ps, const double *w, double *nu, double *mu)
{
    for (int32_t k = 0; k < ps->k_act; ++k) {
        if (!ps->act_full[k])
            continue;
        const int32_t r = ps->act_rule[k], first = ps->act_first[k];
        const int32_t len = ps->rule_start[r + 1] - ps->rule_start[r];
        double num = 0.0, den = 0.0;
        for (int32_t a = first; a < first + len; ++a) {
            const double inv = 1.0 / w[ps->act_row[a]];
            num += nu[a] * inv;
            den += inv;
        }
        const double theta = -num / den;
        for (int32_t a = first; a < first + len; ++a)
            nu[a] += theta;
        *mu += theta;
    }
}

/* The support: the working-set positions with t > 0. */
static void find_support(pn_pstep *ps)
{
    ps->support_count = 0;
    for (int64_t p = 0; p < ps->ws_count; ++p)
        if (ps->t[p] > 0.0)
            ps->support[ps->support_count++] = p;
}

/* The Newton system's matrix over the working set as it is at the start
 * of a Newton run (its support is filled in per iteration). */
static pn_linsys_matrix newton_matrix(pn_pstep *ps, const double *w, double lambda)
{
    pn_linsys_matrix A = {
        .rows = ps->m_act,
        .k = ps->k_act,
        .block_first = ps->act_first,
        .passive = ps->passive,
        .w = w,
        .global_row = ps->act_row,
        .lambda = lambda,
        .count = 0,
        .position = ps->support,
        .copied = ps->ws_synced,
        .copy_rows = ps->ws_cols,
        .copy_weight = ps->ws_c,
        .group_of = ps->ws,
        .group_rows = ps->cols,
        .group_weight = ps->merged_weight,
        .positions = ps->ws_count,
        .t = ps->t,
        .scratch = ps->cand, /* free outside pricing's scan */
        .poll = ps->poll,
        .poll_user = ps->poll_user,
    };
    return A;
}

/* Exact line search: F(x + t d) is convex and piecewise quadratic in t, so
 * its derivative is nondecreasing and piecewise linear; a safeguarded
 * Newton iteration on it finds the minimiser in a few passes. */
static double line_search(pn_pstep *ps, const double *b, const double *w, double lambda,
                          const double *nu, const double *dir)
{
    const int32_t ma = ps->m_act;
    double *kappa = ps->kappa;
    double lin0 = -dir[ma], lin1 = 0.0;
    for (int32_t a = 0; a < ma; ++a) {
        if (ps->passive[a])
            continue;
        const int32_t i = ps->act_row[a];
        lin0 += dir[a] * b[i] + lambda * dir[a] * nu[a] / w[i];
        lin1 += lambda * dir[a] * dir[a] / w[i];
    }
    for (int64_t p = 0; p < ps->ws_count; ++p)
        kappa[p] = ws_weight(ps, p) * (dir[ma] - ws_sum(ps, p, dir));
    double lo = 0.0, hi = INFINITY, t = 1.0;
    for (int it = 0; it < 100; ++it) {
        double d1 = lin0 + lin1 * t, d2 = lin1;
        for (int64_t p = 0; p < ps->ws_count; ++p) {
            const double v = ps->t[p] + kappa[p] * t;
            if (v > 0.0) {
                const double c = ws_weight(ps, p);
                d1 += v * kappa[p] / c;
                d2 += kappa[p] * kappa[p] / c;
            }
        }
        if (d1 < 0.0)
            lo = t;
        else
            hi = t;
        if (fabs(d1) <= 1e-15 * (fabs(lin0) + 1e-300) || hi - lo <= 1e-12 * hi)
            break;
        double next = d2 > 0.0 ? t - d1 / d2 : 2.0 * t;
        if (!(next > lo && next < hi))
            next = isinf(hi) ? 2.0 * (lo > 0.0 ? lo : t) : 0.5 * (lo + hi);
        t = next;
    }
    return t;
}

void pn_pstep_sync_ws(pn_pstep *ps)
{
    const int32_t ka = ps->k_act;
    const int64_t end = ps->ws_count < ps->ws_cap ? ps->ws_count : ps->ws_cap;
    for (int64_t p = ps->ws_synced; p < end; ++p) {
        const int32_t j = ps->ws[p];
        memcpy(ps->ws_cols + p * ka, ps->cols + (int64_t)j * ka, (size_t)ka * sizeof *ps->ws_cols);
        ps->ws_c[p] = (double)ps->merged_weight[j];
    }
    if (end > ps->ws_synced)
        ps->ws_synced = end;
}

/* Newton steps before the current one whose F a full step may still
 * stay under (a nonmonotone acceptance in the manner of Grippo, Lampariello
 * and Lucidi): after new targets or a round of new groups the support has
 * to move by hundreds of groups, and a full step that jumps most of the
 * way is often a little above the F it starts from. Taking only steps
 * that lower F, the solve went there in a run of line-searched steps of
 * 0.3-0.5 each, one factorisation apiece; with a window of three, a
 * context step takes about 7 % fewer Newton steps and 10 % less time
 * (docs/benchmarks.md). Unlike Grippo, Lampariello and Lucidi's rule no
 * sufficient decrease is asked for: the strict test is enough here, since
 * the largest F over the window never rises and every step not taken
 * whole is the exact minimiser along the line. The stopping test and the
 * certificate are unchanged, so the result meets the same tolerance. A
 * run stopped by its step limit (a loose round) may end above the least F
 * it passed; the next round continues from there. */
enum { NONMONOTONE_WINDOW = 3 };

/* The largest of F and the last NONMONOTONE_WINDOW values before it. */
typedef struct recent_f {
    double value[NONMONOTONE_WINDOW];
    int count, next;
} recent_f;

static double recent_max(const recent_f *recent, double F)
{
    for (int h = 0; h < recent->count; ++h)
        F = fmax(F, recent->value[h]);
    return F;
}

static void recent_push(recent_f *recent, double F)
{
    recent->value[recent->next] = F;
    recent->next = (recent->next + 1) % NONMONOTONE_WINDOW;
    if (recent->count < NONMONOTONE_WINDOW)
        recent->count++;
}

/* One Newton step from (nu, mu) along dir: the full step when it brings F
 * under F_ref (it moves the support in one jump; evaluated with the
 * gradient at the gauge-fixed point, which is then the next iterate as it
 * is), otherwise the exact minimiser along the line. Refreshes t and grad;
 * returns F at the new point. */
static double newton_step(pn_pstep *ps, const double *b, const double *w, double lambda,
                          double F_ref)
{
    const int32_t ma = ps->m_act;
    double *nu = ps->nu_act, *grad = ps->grad, *dir = ps->dir;
    double *nu_try = ps->nu_try, mu_try = ps->mu + dir[ma];
    for (int32_t a = 0; a < ma; ++a)
        nu_try[a] = nu[a] + dir[a];
    gauge_fix(ps, w, nu_try, &mu_try);
    const double F_full = dual_eval(ps, b, w, lambda, nu_try, mu_try, grad);
    if (F_full < F_ref) {
        pn_linsys_trust_factor(ps->linsys);
        memcpy(nu, nu_try, (size_t)ma * sizeof *nu);
        ps->mu = mu_try;
        return F_full;
    }
    dual_eval(ps, b, w, lambda, nu, ps->mu, NULL); /* restore t */
    const double step = line_search(ps, b, w, lambda, nu, dir);
    for (int32_t a = 0; a < ma; ++a)
        nu[a] += step * dir[a];
    ps->mu += step * dir[ma];
    gauge_fix(ps, w, nu, &ps->mu);
    return dual_eval(ps, b, w, lambda, nu, ps->mu, grad);
}

pn_outcome pn_pstep_newton(pn_pstep *ps, const double *b, const double *w, double lambda,
                           double tol, int max_newton)
{
    pn_pstep_sync_ws(ps);
    const int32_t ma = ps->m_act;
    double *nu = ps->nu_act, *grad = ps->grad, *dir = ps->dir;
    gauge_fix(ps, w, nu, &ps->mu);
    if (!ps->keep_mu)
        pn_pstep_fit_mu(ps, nu);
    ps->keep_mu = 0;
    pn_linsys_trust_factor(ps->linsys);
    pn_linsys_matrix hessian = newton_matrix(ps, w, lambda);
    double F = dual_eval(ps, b, w, lambda, nu, ps->mu, grad);
    recent_f recent = {.count = 0};
    for (int it = 0; it < max_newton; ++it) {
        double gmax = 0.0;
        for (int32_t a = 0; a <= ma; ++a)
            gmax = fmax(gmax, fabs(grad[a]));
        if (gmax <= tol)
            return PN_OUTCOME_OK;
        if (ps->poll && ps->poll(ps->poll_user)) {
            ps->failure = "interrupted";
            return PN_OUTCOME_INTERRUPTED;
        }
        find_support(ps);
        if (ps->support_count == 0) {
            ps->failure = "the support of q became empty";
            return PN_OUTCOME_P_SEARCH;
        }
        hessian.count = ps->support_count;
        pn_linsys_update(ps->linsys, &hessian);
        const pn_outcome solved =
            pn_linsys_solve(ps->linsys, &hessian, grad, fmin(1e-2, gmax), dir);
        if (solved != PN_OUTCOME_OK) {
            ps->failure = pn_linsys_failure(ps->linsys);
            return solved;
        }
        ps->newton_iterations++;
        double slope = 0.0;
        for (int32_t a = 0; a <= ma; ++a)
            slope += grad[a] * dir[a];
        if (!(slope < 0.0)) { /* no descent left: rounding level, or worse */
            if (gmax <= 1e3 * tol)
                return PN_OUTCOME_OK;
            ps->failure = "Newton found no descent direction";
            return PN_OUTCOME_P_SEARCH;
        }
        const double F_ref = recent_max(&recent, F);
        recent_push(&recent, F);
        F = newton_step(ps, b, w, lambda, F_ref);
    }
    return PN_OUTCOME_LIMIT;
}
