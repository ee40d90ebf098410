/* Tests of the w-step (13): the group soft-threshold (17), the exact
 * multiplier root-find, ADMM (14)-(18), and an independent brute force. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "test_support.h"
#include "wstep.h"

enum { MAX_RULES = 8, MAX_ROWS = 64 };

/* ---- group soft-threshold (17) ---- */

/* (c/2)|w - x|^2 + t|w|_2 */
static double prox_objective(const double *w, const double *x, int32_t len, double c, double t)
{
    double d2 = 0.0, n2 = 0.0;
    for (int32_t i = 0; i < len; ++i) {
        d2 += (w[i] - x[i]) * (w[i] - x[i]);
        n2 += w[i] * w[i];
    }
    return 0.5 * c * d2 + t * sqrt(n2);
}

/* Minimiser along the ray w = s x / |x|, s >= 0: the objective there is
 * (c/2)(s - |x|)^2 + t s (plus a constant), convex in s; bisection on the
 * sign of its derivative c (s - |x|) + t over [0, |x|] to full precision. */
static void ray_minimiser(const double *x, int32_t len, double c, double t, double *w)
{
    double nx = 0.0;
    for (int32_t i = 0; i < len; ++i)
        nx += x[i] * x[i];
    nx = sqrt(nx);
    double lo = 0.0, hi = nx;
    if (c * (0.0 - nx) + t >= 0.0) {
        hi = 0.0; /* the derivative is non-negative at 0: s = 0 */
    } else {
        for (int it = 0; it < 2000 && hi - lo > 0.0; ++it) {
            double mid = 0.5 * (lo + hi);
            if (mid <= lo || mid >= hi)
                break;
            if (c * (mid - nx) + t < 0.0)
                lo = mid;
            else
                hi = mid;
        }
    }
    for (int32_t i = 0; i < len; ++i)
        w[i] = nx > 0.0 ? hi * x[i] / nx : 0.0;
}

/* Nelder-Mead in up to 4 dimensions with restarts: a generic minimiser
 * that knows nothing about the structure of the problem. */
static void nelder_mead(const double *x, int32_t len, double c, double t, const double *start,
                        double *best)
{
    enum { D = 4 };
    double simplex[D + 1][D], f[D + 1];
    double cur[D];
    memcpy(cur, start, (size_t)len * sizeof *cur);
    double size = 0.0;
    for (int32_t i = 0; i < len; ++i)
        size = fmax(size, fabs(x[i]));
    size = fmax(size, 1e-3);
    for (int restart = 0; restart < 8; ++restart) {
        for (int32_t v = 0; v <= len; ++v) {
            memcpy(simplex[v], cur, (size_t)len * sizeof *cur);
            if (v > 0)
                simplex[v][v - 1] += size;
            f[v] = prox_objective(simplex[v], x, len, c, t);
        }
        for (int it = 0; it < 4000; ++it) {
            /* order: best first */
            for (int32_t a = 1; a <= len; ++a)
                for (int32_t b = a; b > 0 && f[b] < f[b - 1]; --b) {
                    double tf = f[b];
                    f[b] = f[b - 1];
                    f[b - 1] = tf;
                    double tv[D];
                    memcpy(tv, simplex[b], sizeof tv);
                    memcpy(simplex[b], simplex[b - 1], sizeof tv);
                    memcpy(simplex[b - 1], tv, sizeof tv);
                }
            double centroid[D] = {0}, refl[D], trial[D];
            for (int32_t v = 0; v < len; ++v)
                for (int32_t i = 0; i < len; ++i)
                    centroid[i] += simplex[v][i] / len;
            for (int32_t i = 0; i < len; ++i)
                refl[i] = centroid[i] + (centroid[i] - simplex[len][i]);
            double fr = prox_objective(refl, x, len, c, t);
            if (fr < f[0]) {
                for (int32_t i = 0; i < len; ++i)
                    trial[i] = centroid[i] + 2.0 * (centroid[i] - simplex[len][i]);
                double fe = prox_objective(trial, x, len, c, t);
                if (fe < fr) {
                    memcpy(simplex[len], trial, sizeof trial);
                    f[len] = fe;
                } else {
                    memcpy(simplex[len], refl, sizeof refl);
                    f[len] = fr;
                }
            } else if (fr < f[len - 1]) {
                memcpy(simplex[len], refl, sizeof refl);
                f[len] = fr;
            } else {
                for (int32_t i = 0; i < len; ++i)
                    trial[i] = centroid[i] + 0.5 * (simplex[len][i] - centroid[i]);
                double fc = prox_objective(trial, x, len, c, t);
                if (fc < f[len]) {
                    memcpy(simplex[len], trial, sizeof trial);
                    f[len] = fc;
                } else {
                    for (int32_t v = 1; v <= len; ++v) {
                        for (int32_t i = 0; i < len; ++i)
                            simplex[v][i] = simplex[0][i] + 0.5 * (simplex[v][i] - simplex[0][i]);
                        f[v] = prox_objective(simplex[v], x, len, c, t);
                    }
                }
            }
        }
        int32_t arg = 0;
        for (int32_t v = 1; v <= len; ++v)
            if (f[v] < f[arg])
                arg = v;
        memcpy(cur, simplex[arg], (size_t)len * sizeof *cur);
        size *= 0.1;
    }
    memcpy(best, cur, (size_t)len * sizeof *cur);
}

static void test_soft_threshold_minimises_subproblem(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 11);
    int zeros = 0, nonzeros = 0;
    double worst_ray = 0.0, worst_nm = 0.0, worst_stat = 0.0;
    for (int rep = 0; rep < 400; ++rep) {
        const int32_t len = 1 + (int32_t)ts_below(&rng, 4);
        double x[4], out[4], ray[4], nm[4];
        const double mag = pow(10.0, ts_range(&rng, -3.0, 2.0));
        for (int32_t i = 0; i < len; ++i)
            x[i] = mag * ts_range(&rng, -1.0, 1.0);
        const double c = pow(10.0, ts_range(&rng, -2.0, 2.0));
        double nx = 0.0;
        for (int32_t i = 0; i < len; ++i)
            nx += x[i] * x[i];
        nx = sqrt(nx);
        /* t around c |x|, so both sides of the threshold occur */
        const double t = c * nx * ts_range(&rng, 0.0, 2.0);
        pn_group_soft_threshold(x, out, len, c, t);
        ray_minimiser(x, len, c, t, ray);
        const double scale = fmax(nx, 1e-300);
        for (int32_t i = 0; i < len; ++i) {
            const double d = fabs(out[i] - ray[i]) / scale;
            worst_ray = fmax(worst_ray, d);
            assert_true(d <= 1e-13);
        }
        double no = 0.0;
        for (int32_t i = 0; i < len; ++i)
            no += out[i] * out[i];
        no = sqrt(no);
        if (c * nx <= t) {
            /* the zero case: exactly zero, and 0 is optimal because the
             * subgradient condition |c x| <= t holds */
            zeros++;
            for (int32_t i = 0; i < len; ++i)
                assert_true(out[i] == 0.0);
        } else {
            /* stationarity: c (w - x) + t w / |w| = 0 */
            nonzeros++;
            assert_true(no > 0.0);
            for (int32_t i = 0; i < len; ++i) {
                const double r = fabs(c * (out[i] - x[i]) + t * out[i] / no) / (c * scale);
                worst_stat = fmax(worst_stat, r);
                assert_true(r <= 1e-13);
            }
        }
        /* a structure-free minimiser: no better point, and close to it */
        nelder_mead(x, len, c, t, x, nm);
        const double f_out = prox_objective(out, x, len, c, t);
        const double f_nm = prox_objective(nm, x, len, c, t);
        assert_true(f_out <= f_nm + 1e-13 * fmax(c * nx * nx, 1e-300));
        for (int32_t i = 0; i < len; ++i) {
            const double d = fabs(out[i] - nm[i]) / scale;
            worst_nm = fmax(worst_nm, d);
            assert_true(d <= 1e-6);
        }
        /* random perturbations never improve */
        for (int k = 0; k < 20; ++k) {
            double p[4];
            for (int32_t i = 0; i < len; ++i)
                p[i] = out[i] + scale * 1e-3 * ts_range(&rng, -1.0, 1.0);
            assert_true(f_out <= prox_objective(p, x, len, c, t) + 1e-15 * c * nx * nx);
        }
    }
    print_message("soft-threshold: %d zero and %d non-zero cases; max rel. diff vs 1-D "
                  "bisection %.3g, vs Nelder-Mead %.3g, stationarity %.3g\n",
                  zeros, nonzeros, worst_ray, worst_nm, worst_stat);
    assert_true(zeros > 50 && nonzeros > 50);
}

static void test_soft_threshold_hand_checked(void **state)
{
    (void)state;
    const double x[2] = {3.0, 4.0}; /* |x| = 5 */
    double out[2];
    pn_group_soft_threshold(x, out, 2, 2.0, 5.0); /* scale 1 - 5/10 = 0.5 */
    assert_float_equal(out[0], 1.5, 1e-15);
    assert_float_equal(out[1], 2.0, 1e-15);
    pn_group_soft_threshold(x, out, 2, 2.0, 10.0); /* exactly at the threshold */
    assert_true(out[0] == 0.0 && out[1] == 0.0);
    pn_group_soft_threshold(x, out, 2, 2.0, 11.0);
    assert_true(out[0] == 0.0 && out[1] == 0.0);
    pn_group_soft_threshold(x, out, 2, 2.0, 0.0); /* no threshold: x itself */
    assert_true(out[0] == 3.0 && out[1] == 4.0);
    const double zero[3] = {0.0, 0.0, 0.0};
    double out3[3] = {1.0, 1.0, 1.0};
    pn_group_soft_threshold(zero, out3, 3, 1.0, 0.5);
    assert_true(out3[0] == 0.0 && out3[1] == 0.0 && out3[2] == 0.0);
}

/* ---- random w-step problems ---- */

typedef struct wcase {
    int32_t num_rules;
    int32_t rule_start[MAX_RULES + 1];
    double e[MAX_ROWS];
} wcase;

static void random_wcase(ts_rng *rng, wcase *c, int32_t max_rules, int32_t max_size)
{
    c->num_rules = ts_between(rng, 2, max_rules);
    c->rule_start[0] = 0;
    for (int32_t r = 0; r < c->num_rules; ++r)
        c->rule_start[r + 1] = c->rule_start[r] + ts_between(rng, 1, max_size);
    const int32_t m = c->rule_start[c->num_rules];
    assert_true(m <= MAX_ROWS);
    /* errors: some exactly zero, some rules uniformly small, a spread of
     * magnitudes (squared errors of a realization are in [0, 1]) */
    for (int32_t r = 0; r < c->num_rules; ++r) {
        const double level = pow(10.0, ts_range(rng, -5.0, 0.0));
        const int zero_rule = ts_below(rng, 5) == 0;
        for (int32_t i = c->rule_start[r]; i < c->rule_start[r + 1]; ++i)
            c->e[i] = zero_rule || ts_below(rng, 6) == 0 ? 0.0 : level * ts_uniform(rng);
    }
}

static pn_wstep_problem wproblem(const wcase *c, double lambda_w, double alpha)
{
    pn_wstep_problem p = {c->num_rules, c->rule_start, c->e, lambda_w, alpha};
    return p;
}

static int run_admm(const pn_wstep_problem *p, int max_iter, double tol, double *w, int *iters)
{
    const int32_t m = pn_wstep_rows(p);
    double z[MAX_ROWS], u[MAX_ROWS], scratch[3 * MAX_ROWS];
    for (int32_t i = 0; i < m; ++i) {
        z[i] = 1.0 / m;
        u[i] = 0.0;
    }
    pn_admm_state st = {z, u, scratch, 0.0, 0, 0.0, 0.0};
    int rc = pn_wstep_admm(p, &st, max_iter, tol, w);
    *iters = st.iterations;
    return rc;
}

static void assert_on_simplex(const double *w, int32_t m, double tol)
{
    double sum = 0.0;
    for (int32_t i = 0; i < m; ++i) {
        assert_true(w[i] >= 0.0);
        sum += w[i];
    }
    assert_true(fabs(sum - 1.0) <= tol);
}

static const double alphas[] = {0.0, 0.3, 0.8, 0.95};
enum { NUM_ALPHAS = sizeof alphas / sizeof alphas[0] };

/* The exact solver meets the KKT conditions to rounding level. */
static void test_wstep_exact_kkt(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 21);
    double worst = 0.0;
    int count = 0;
    for (int rep = 0; rep < 60; ++rep) {
        wcase c;
        random_wcase(&rng, &c, MAX_RULES, 8);
        for (int a = 0; a < NUM_ALPHAS; ++a)
            for (int l = -8; l <= 6; ++l) {
                pn_wstep_problem p = wproblem(&c, ldexp(1.0, l), alphas[a]);
                double w[MAX_ROWS];
                assert_int_equal(pn_wstep_exact(&p, w), 0);
                assert_on_simplex(w, pn_wstep_rows(&p), 1e-14);
                const double kkt = pn_wstep_kkt(&p, w);
                worst = fmax(worst, kkt);
                if (!(kkt <= 1e-8))
                    fail_msg("rep %d alpha %g lambda_w 2^%d: KKT %.3g", rep, alphas[a], l, kkt);
                count++;
            }
    }
    print_message("exact w-step: %d problems, max KKT residual %.3g\n", count, worst);
    /* and alpha = 1 is refused */
    wcase c;
    random_wcase(&rng, &c, 4, 4);
    pn_wstep_problem p = wproblem(&c, 1.0, 1.0);
    double w[MAX_ROWS];
    assert_int_equal(pn_wstep_exact(&p, w), -1);
}

/* ADMM and the exact solver agree for alpha < 1. */
static void test_wstep_admm_matches_exact(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 22);
    double worst_w = 0.0, worst_f = 0.0, worst_kkt = 0.0;
    int max_iters = 0, count = 0;
    for (int rep = 0; rep < 25; ++rep) {
        wcase c;
        random_wcase(&rng, &c, 6, 8);
        for (int a = 0; a < NUM_ALPHAS; ++a)
            for (int l = -8; l <= 6; l += 2) {
                pn_wstep_problem p = wproblem(&c, ldexp(1.0, l), alphas[a]);
                const int32_t m = pn_wstep_rows(&p);
                double w_exact[MAX_ROWS], w_admm[MAX_ROWS];
                assert_int_equal(pn_wstep_exact(&p, w_exact), 0);
                int iters;
                int rc = run_admm(&p, 200000, 1e-13, w_admm, &iters);
                if (rc != 0)
                    fail_msg("rep %d alpha %g lambda_w 2^%d: ADMM did not converge in %d "
                             "iterations",
                             rep, alphas[a], l, iters);
                max_iters = iters > max_iters ? iters : max_iters;
                assert_on_simplex(w_admm, m, 1e-12);
                const double f_exact = pn_wstep_objective(&p, w_exact);
                const double f_admm = pn_wstep_objective(&p, w_admm);
                const double dw = ts_max_abs_diff(w_admm, w_exact, m);
                const double df = fabs(f_admm - f_exact) / fabs(f_exact);
                const double kkt = pn_wstep_kkt(&p, w_admm);
                worst_w = fmax(worst_w, dw);
                worst_f = fmax(worst_f, df);
                worst_kkt = fmax(worst_kkt, kkt);
                if (!(dw <= 1e-7 && df <= 1e-10))
                    fail_msg("rep %d alpha %g lambda_w 2^%d: |w_admm - w_exact| = %.3g, "
                             "objective rel. diff %.3g",
                             rep, alphas[a], l, dw, df);
                /* the exact solver is never beaten */
                assert_true(f_exact <= f_admm * (1.0 + 1e-13));
                count++;
            }
    }
    print_message("ADMM vs exact: %d problems, max |dw| %.3g, max rel. objective diff %.3g, "
                  "max ADMM KKT %.3g, max iterations %d\n",
                  count, worst_w, worst_f, worst_kkt, max_iters);
}

/* alpha = 1 has no exact solver: ADMM alone must reach KKT <= 1e-8. */
static void test_wstep_admm_alpha_one(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 23);
    double worst = 0.0, worst_sum = 0.0;
    int max_iters = 0, count = 0, not_converged = 0;
    for (int rep = 0; rep < 25; ++rep) {
        wcase c;
        random_wcase(&rng, &c, 6, 8);
        for (int l = -8; l <= 6; l += 2) {
            pn_wstep_problem p = wproblem(&c, ldexp(1.0, l), 1.0);
            double w[MAX_ROWS];
            int iters;
            int rc = run_admm(&p, 1000000, 1e-14, w, &iters);
            max_iters = iters > max_iters ? iters : max_iters;
            /* |1'w - 1| is part of the KKT residual: the same bound */
            double sum = 0.0;
            for (int32_t i = 0; i < pn_wstep_rows(&p); ++i) {
                assert_true(w[i] >= 0.0);
                sum += w[i];
            }
            worst_sum = fmax(worst_sum, fabs(sum - 1.0));
            assert_true(fabs(sum - 1.0) <= 1e-8);
            if (rc != 0)
                not_converged++;
            const double kkt = pn_wstep_kkt(&p, w);
            worst = fmax(worst, kkt);
            if (!(kkt <= 1e-8))
                fail_msg("rep %d lambda_w 2^%d: ADMM KKT %.3g after %d iterations", rep, l, kkt,
                         iters);
            count++;
        }
    }
    print_message("ADMM at alpha = 1: %d problems, max KKT %.3g, max |1'w - 1| %.3g, "
                  "max iterations %d, %d stopped at the iteration limit\n",
                  count, worst, worst_sum, max_iters, not_converged);
}

/* ---- brute force: projected gradient on every face ---- */

/* Projection onto {x >= 0 on idx, sum = 1} by bisection on the threshold
 * (independent of the sort-based projection under test). */
static void project_bisect(double *v, const int32_t *idx, int32_t count)
{
    double lo = -INFINITY, hi = -INFINITY;
    for (int32_t j = 0; j < count; ++j)
        hi = fmax(hi, v[idx[j]]);
    lo = hi - 1.0;
    hi = hi + 0.0;
    for (int it = 0; it < 3000; ++it) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi)
            break;
        double s = 0.0;
        for (int32_t j = 0; j < count; ++j)
            s += fmax(v[idx[j]] - mid, 0.0);
        if (s > 1.0)
            lo = mid;
        else
            hi = mid;
    }
    double s = 0.0;
    for (int32_t j = 0; j < count; ++j) {
        v[idx[j]] = fmax(v[idx[j]] - hi, 0.0);
        s += v[idx[j]];
    }
    for (int32_t j = 0; j < count; ++j)
        v[idx[j]] /= s;
}

/* Minimises (13) over the face where only the rules in `mask` may carry
 * weight, by projected gradient with backtracking. On that face the lasso
 * term is differentiable wherever the selected groups are non-zero. */
static double face_minimum(const pn_wstep_problem *p, unsigned mask, double *w)
{
    const int32_t K = p->num_rules, m = pn_wstep_rows(p);
    int32_t idx[MAX_ROWS], count = 0;
    for (int32_t r = 0; r < K; ++r)
        if (mask & (1u << r))
            for (int32_t i = p->rule_start[r]; i < p->rule_start[r + 1]; ++i)
                idx[count++] = i;
    for (int32_t i = 0; i < m; ++i)
        w[i] = 0.0;
    for (int32_t j = 0; j < count; ++j)
        w[idx[j]] = 1.0 / count;
    double f = pn_wstep_objective(p, w);
    double step = 1.0;
    int stalled = 0;
    const double lw = p->lambda_w, a = p->alpha;
    for (int it = 0; it < 8000; ++it) {
        double g[MAX_ROWS], trial[MAX_ROWS];
        for (int32_t r = 0; r < K; ++r) {
            if (!(mask & (1u << r)))
                continue;
            const int32_t lo = p->rule_start[r], hi = p->rule_start[r + 1];
            double nrm = 0.0;
            for (int32_t i = lo; i < hi; ++i)
                nrm += w[i] * w[i];
            nrm = sqrt(nrm);
            const double sm = sqrt((double)(hi - lo));
            for (int32_t i = lo; i < hi; ++i)
                g[i] = p->e[i] + 2.0 * lw * (1.0 - a) * w[i] +
                       lw * a * sm * (nrm > 0.0 ? w[i] / nrm : 1.0 / sm);
        }
        double f_trial = INFINITY;
        for (int bt = 0; bt < 80; ++bt) {
            memcpy(trial, w, (size_t)m * sizeof *w);
            for (int32_t j = 0; j < count; ++j)
                trial[idx[j]] -= step * g[idx[j]];
            project_bisect(trial, idx, count);
            double lin = 0.0, quad = 0.0;
            for (int32_t j = 0; j < count; ++j) {
                const double d = trial[idx[j]] - w[idx[j]];
                lin += g[idx[j]] * d;
                quad += d * d;
            }
            f_trial = pn_wstep_objective(p, trial);
            if (f_trial <= f + lin + quad / (2.0 * step))
                break;
            step *= 0.5;
        }
        if (!(f_trial <= f)) /* no progress left at rounding level */
            break;
        /* stop after a run of steps that gain nothing measurable */
        stalled = f - f_trial <= 1e-16 * fabs(f) ? stalled + 1 : 0;
        memcpy(w, trial, (size_t)m * sizeof *w);
        f = f_trial;
        step *= 1.5;
        if (stalled >= 50)
            break;
    }
    return f;
}

static void test_wstep_exact_matches_brute_force(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 24);
    double worst_gap = 0.0, worst_w = 0.0;
    int count = 0;
    for (int rep = 0; rep < 20; ++rep) {
        wcase c;
        random_wcase(&rng, &c, 3, 3);
        for (int a = 0; a < NUM_ALPHAS; ++a)
            for (int l = -6; l <= 4; l += 5) {
                pn_wstep_problem p = wproblem(&c, ldexp(1.0, l), alphas[a]);
                const int32_t m = pn_wstep_rows(&p);
                double w_exact[MAX_ROWS], w_best[MAX_ROWS], w_face[MAX_ROWS];
                assert_int_equal(pn_wstep_exact(&p, w_exact), 0);
                double f_best = INFINITY;
                for (unsigned mask = 1; mask < (1u << c.num_rules); ++mask) {
                    double f = face_minimum(&p, mask, w_face);
                    if (f < f_best) {
                        f_best = f;
                        memcpy(w_best, w_face, sizeof w_best);
                    }
                }
                const double f_exact = pn_wstep_objective(&p, w_exact);
                /* the exact solver is never worse than the brute force and
                 * the brute force gets close to it */
                const double gap = (f_best - f_exact) / fabs(f_exact);
                const double dw = ts_max_abs_diff(w_best, w_exact, m);
                worst_gap = fmax(worst_gap, fabs(gap));
                worst_w = fmax(worst_w, dw);
                if (!(gap >= -1e-13 && gap <= 1e-9 && dw <= 1e-5))
                    fail_msg("rep %d alpha %g lambda_w 2^%d: exact %.17g, brute force %.17g "
                             "(rel. %.3g), |dw| %.3g",
                             rep, alphas[a], l, f_exact, f_best, gap, dw);
                count++;
            }
    }
    print_message("exact vs brute force: %d problems, max rel. objective diff %.3g, "
                  "max |dw| %.3g\n",
                  count, worst_gap, worst_w);
}

/* alpha = 1 (ADMM only) against the same brute force. */
static void test_wstep_admm_alpha_one_matches_brute_force(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 25);
    double worst_gap = 0.0;
    int count = 0;
    for (int rep = 0; rep < 25; ++rep) {
        wcase c;
        random_wcase(&rng, &c, 3, 3);
        for (int l = -6; l <= 4; l += 5) {
            pn_wstep_problem p = wproblem(&c, ldexp(1.0, l), 1.0);
            double w_admm[MAX_ROWS], w_face[MAX_ROWS];
            int iters;
            run_admm(&p, 1000000, 1e-14, w_admm, &iters);
            double f_best = INFINITY;
            for (unsigned mask = 1; mask < (1u << c.num_rules); ++mask)
                f_best = fmin(f_best, face_minimum(&p, mask, w_face));
            const double f_admm = pn_wstep_objective(&p, w_admm);
            const double gap = (f_best - f_admm) / fabs(f_admm);
            worst_gap = fmax(worst_gap, fabs(gap));
            if (!(gap >= -1e-10 && gap <= 1e-9))
                fail_msg("rep %d lambda_w 2^%d: ADMM %.17g, brute force %.17g (rel. %.3g)", rep, l,
                         f_admm, f_best, gap);
            count++;
        }
    }
    print_message("ADMM (alpha = 1) vs brute force: %d problems, max rel. objective diff %.3g\n",
                  count, worst_gap);
}

/* Hand-checked: alpha = 0, one rule, e = (0, 1), lambda_w = 1:
 * minimise w2 + w1^2 + w2^2 on the simplex -> w = (3/4, 1/4). */
static void test_wstep_hand_checked(void **state)
{
    (void)state;
    const int32_t start[2] = {0, 2};
    const double e[2] = {0.0, 1.0};
    pn_wstep_problem p = {1, start, e, 1.0, 0.0};
    double w[2];
    assert_int_equal(pn_wstep_exact(&p, w), 0);
    assert_float_equal(w[0], 0.75, 1e-15);
    assert_float_equal(w[1], 0.25, 1e-15);
    assert_float_equal(pn_wstep_objective(&p, w), 0.25 + 0.5625 + 0.0625, 1e-15);
    /* two rules, zero errors in the first: for a small lambda_w everything
     * goes to the first rule (group selective) */
    const int32_t start2[3] = {0, 2, 4};
    const double e2[4] = {0.0, 0.0, 0.5, 0.5};
    pn_wstep_problem p2 = {2, start2, e2, 0.01, 0.8};
    double w2[4];
    assert_int_equal(pn_wstep_exact(&p2, w2), 0);
    assert_float_equal(w2[0], 0.5, 1e-14);
    assert_float_equal(w2[1], 0.5, 1e-14);
    assert_true(w2[2] == 0.0 && w2[3] == 0.0);
    assert_true(pn_wstep_kkt(&p2, w2) <= 1e-14);
    /* a wrong point has a large KKT residual */
    const double bad[4] = {0.25, 0.25, 0.25, 0.25};
    assert_true(pn_wstep_kkt(&p2, bad) > 0.1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_soft_threshold_hand_checked),
        cmocka_unit_test(test_soft_threshold_minimises_subproblem),
        cmocka_unit_test(test_wstep_hand_checked),
        cmocka_unit_test(test_wstep_exact_kkt),
        cmocka_unit_test(test_wstep_admm_matches_exact),
        cmocka_unit_test(test_wstep_admm_alpha_one),
        cmocka_unit_test(test_wstep_exact_matches_brute_force),
        cmocka_unit_test(test_wstep_admm_alpha_one_matches_brute_force),
    };
    ts_test_filter();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
