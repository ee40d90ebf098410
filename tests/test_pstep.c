/* Tests of the p-step (8): the dual semismooth Newton solver with its
 * working set, certified by the primal KKT residual and compared with an
 * independent accelerated projected-gradient reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "pstep.h"
#include "pstep_internal.h"
#include "test_support.h"

static const double P_TOL = 1e-11; /* the solver's default p_tol */
static const int P_MAX_NEWTON = 100;

static int descending(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x < y) - (x > y);
}

/* Projection onto the simplex (the test's own: sort, then the largest
 * prefix whose shifted values stay positive). */
static void project_simplex_ref(double *v, double *sorted, int64_t n)
{
    memcpy(sorted, v, (size_t)n * sizeof *v);
    qsort(sorted, (size_t)n, sizeof *sorted, descending);
    double prefix = 0.0, theta = sorted[0] - 1.0;
    for (int64_t j = 0; j < n; ++j) {
        prefix += sorted[j];
        const double t = (prefix - 1.0) / (double)(j + 1);
        if (sorted[j] > t)
            theta = t;
    }
    for (int64_t k = 0; k < n; ++k)
        v[k] = fmax(v[k] - theta, 0.0);
}

/* Gradient of (8) at q: 2 A'^T W (A'q - b) + 2 lambda q. */
static void pstep_gradient(const pn_problem *prob, const double *w, double lambda, const double *q,
                           double *y, double *g)
{
    const int32_t K = prob->num_rules;
    ts_apply(prob, q, y);
    for (int32_t i = 0; i < prob->num_rows; ++i)
        y[i] = 2.0 * w[i] * (y[i] - prob->target[i]);
    for (int64_t k = 0; k < prob->num_groups; ++k) {
        double v = 2.0 * lambda * q[k];
        for (int32_t r = 0; r < K; ++r)
            v += y[prob->group_rows[k * K + r]];
        g[k] = v;
    }
}

/* Solves the dense system a x = b (order n, row-major, overwritten) by
 * Gaussian elimination with partial pivoting. Returns 0 if singular. */
static int dense_solve(double *a, double *b, int64_t n)
{
    double amax = 0.0;
    for (int64_t i = 0; i < n * n; ++i)
        amax = fmax(amax, fabs(a[i]));
    for (int64_t c = 0; c < n; ++c) {
        int64_t piv = c;
        for (int64_t r = c + 1; r < n; ++r)
            if (fabs(a[r * n + c]) > fabs(a[piv * n + c]))
                piv = r;
        if (!(fabs(a[piv * n + c]) > 1e-13 * amax))
            return 0;
        if (piv != c) {
            for (int64_t j = 0; j < n; ++j) {
                double t = a[c * n + j];
                a[c * n + j] = a[piv * n + j];
                a[piv * n + j] = t;
            }
            double t = b[c];
            b[c] = b[piv];
            b[piv] = t;
        }
        for (int64_t r = c + 1; r < n; ++r) {
            const double f = a[r * n + c] / a[c * n + c];
            if (f == 0.0)
                continue;
            for (int64_t j = c; j < n; ++j)
                a[r * n + j] -= f * a[c * n + j];
            b[r] -= f * b[c];
        }
    }
    for (int64_t r = n - 1; r >= 0; --r) {
        double v = b[r];
        for (int64_t j = r + 1; j < n; ++j)
            v -= a[r * n + j] * b[j];
        b[r] = v / a[r * n + r];
    }
    return 1;
}

/* Exact polish of an approximate minimiser x of (8): a primal active-set
 * loop that solves the equality-constrained problem on the support S
 * (H_SS q_S + c_S = mu 1, 1'q_S = 1), drops groups that come out negative
 * and adds groups whose gradient is below mu. Returns 1 and the exact
 * minimiser in x on success, 0 if it gave up (x unchanged). */
static int polish(const pn_problem *prob, const double *w, double lambda, double *x)
{
    const int64_t G = prob->num_groups;
    const int32_t K = prob->num_rules;
    /* f(q) = q'Hq/2 + c'q + const, H = 2 (A'^T W A' + lambda I), c = -2 A'^T W b */
    double *H = malloc((size_t)(G * G) * sizeof *H), *c = malloc((size_t)G * sizeof *c);
    double *sys = malloc((size_t)((G + 1) * (G + 1)) * sizeof *sys);
    double *rhs = malloc((size_t)(G + 1) * sizeof *rhs), *q = malloc((size_t)G * sizeof *q);
    unsigned char *in = malloc((size_t)G);
    int64_t *idx = malloc((size_t)G * sizeof *idx);
    assert_true(H && c && sys && rhs && q && in && idx);
    double hmax = 0.0;
    for (int64_t k = 0; k < G; ++k) {
        const int32_t *rk = prob->group_rows + k * K;
        c[k] = 0.0;
        for (int32_t r = 0; r < K; ++r)
            c[k] -= 2.0 * w[rk[r]] * prob->target[rk[r]];
        for (int64_t l = 0; l < G; ++l) {
            const int32_t *rl = prob->group_rows + l * K;
            double h = k == l ? 2.0 * lambda : 0.0;
            for (int32_t r = 0; r < K; ++r)
                if (rk[r] == rl[r])
                    h += 2.0 * w[rk[r]];
            H[k * G + l] = h;
            hmax = fmax(hmax, fabs(h));
        }
    }
    for (int64_t k = 0; k < G; ++k)
        in[k] = x[k] > 0.0;
    int ok = 0;
    for (int iter = 0; iter < 200 && !ok; ++iter) {
        int64_t s = 0;
        for (int64_t k = 0; k < G; ++k)
            if (in[k])
                idx[s++] = k;
        const int64_t n = s + 1;
        for (int64_t i = 0; i < s; ++i) {
            for (int64_t j = 0; j < s; ++j)
                sys[i * n + j] = H[idx[i] * G + idx[j]];
            sys[i * n + s] = -1.0;
            sys[s * n + i] = 1.0;
            rhs[i] = -c[idx[i]];
        }
        sys[s * n + s] = 0.0;
        rhs[s] = 1.0;
        if (!dense_solve(sys, rhs, n))
            break;
        const double mu = rhs[s];
        int64_t worst = -1;
        for (int64_t i = 0; i < s; ++i)
            if (rhs[i] < 0.0 && (worst < 0 || rhs[i] < rhs[worst]))
                worst = i;
        if (worst >= 0) {
            in[idx[worst]] = 0;
            continue;
        }
        for (int64_t k = 0; k < G; ++k)
            q[k] = 0.0;
        for (int64_t i = 0; i < s; ++i)
            q[idx[i]] = rhs[i];
        int64_t add = -1;
        double add_g = mu - 1e-13 * fmax(hmax, fabs(mu));
        for (int64_t k = 0; k < G; ++k) {
            if (in[k])
                continue;
            double g = c[k];
            for (int64_t i = 0; i < s; ++i)
                g += H[k * G + idx[i]] * rhs[i];
            if (g < add_g) {
                add_g = g;
                add = k;
            }
        }
        if (add >= 0) {
            in[add] = 1;
            continue;
        }
        memcpy(x, q, (size_t)G * sizeof *x);
        ok = 1;
    }
    free(H);
    free(c);
    free(sys);
    free(rhs);
    free(q);
    free(in);
    free(idx);
    return ok;
}

/* The reference minimiser of (8): FISTA with backtracking and restarts on
 * the K' masses, then the exact active-set polish when it applies (it does
 * not when the reduced system is singular, e.g. lambda_p = 0 with
 * repeated columns). Returns the objective and the Frank-Wolfe gap (an
 * upper bound on the suboptimality) of the reference point. */
static double reference_pstep(const pn_problem *prob, const double *w, double lambda, int max_iter,
                              double *q, double *gap_out, int *polished)
{
    const int64_t G = prob->num_groups;
    double *x = malloc((size_t)G * sizeof *x), *yk = malloc((size_t)G * sizeof *yk);
    double *g = malloc((size_t)G * sizeof *g), *trial = malloc((size_t)G * sizeof *trial);
    double *rows = malloc((size_t)prob->num_rows * sizeof *rows);
    double *sorted = malloc((size_t)G * sizeof *sorted);
    assert_true(x && yk && g && trial && rows && sorted);
    for (int64_t k = 0; k < G; ++k)
        x[k] = yk[k] = 1.0 / (double)G;
    double fx = ts_pstep_objective(prob, w, lambda, x), L = 1.0, t = 1.0, gap = INFINITY;
    for (int it = 0; it < max_iter; ++it) {
        pstep_gradient(prob, w, lambda, yk, rows, g);
        const double fy = ts_pstep_objective(prob, w, lambda, yk);
        double f_trial = INFINITY;
        for (int bt = 0; bt < 60; ++bt) {
            for (int64_t k = 0; k < G; ++k)
                trial[k] = yk[k] - g[k] / L;
            project_simplex_ref(trial, sorted, G);
            double lin = 0.0, quad = 0.0;
            for (int64_t k = 0; k < G; ++k) {
                const double d = trial[k] - yk[k];
                lin += g[k] * d;
                quad += d * d;
            }
            f_trial = ts_pstep_objective(prob, w, lambda, trial);
            if (f_trial <= fy + lin + 0.5 * L * quad)
                break;
            L *= 2.0;
        }
        const double t_next = 0.5 * (1.0 + sqrt(1.0 + 4.0 * t * t));
        if (f_trial > fx) {
            /* restart the momentum from the last iterate */
            memcpy(yk, x, (size_t)G * sizeof *yk);
            t = 1.0;
            continue;
        }
        for (int64_t k = 0; k < G; ++k) {
            const double nx = trial[k];
            yk[k] = nx + (t - 1.0) / t_next * (nx - x[k]);
            x[k] = nx;
        }
        t = t_next;
        fx = f_trial;
        L *= 0.9;
        if (it % 100 == 0) {
            double kkt;
            ts_pstep_kkt(prob, w, lambda, x, &kkt, &gap);
            if (gap <= 1e-9 * fx || gap <= 1e-24)
                break;
        }
    }
    memcpy(q, x, (size_t)G * sizeof *q);
    *polished = G <= 1000 && polish(prob, w, lambda, q); /* dense: small K' only */
    if (*polished && ts_pstep_objective(prob, w, lambda, q) > fx) {
        memcpy(q, x, (size_t)G * sizeof *q); /* keep the better point */
        *polished = 0;
    }
    double kkt;
    ts_pstep_kkt(prob, w, lambda, q, &kkt, &gap);
    free(x);
    free(yk);
    free(g);
    free(trial);
    free(rows);
    free(sorted);
    *gap_out = gap;
    return ts_pstep_objective(prob, w, lambda, q);
}

typedef struct pstats {
    int solves, compared, polished;
    double worst_kkt, worst_ref_below, worst_ref_above, worst_abs_below, worst_cert_diff;
} pstats;

static void print_stats(const char *name, const pstats *st)
{
    print_message("%s: %d solves, max KKT %.3g; %d reference comparisons (%d polished exactly): "
                  "reference lower by at most %.3g and higher by at most %.3g (relative); at "
                  "zero objective lower by at most %.3g (absolute)\n",
                  name, st->solves, st->worst_kkt, st->compared, st->polished, st->worst_ref_below,
                  st->worst_ref_above, st->worst_abs_below);
}

/* Solves (8) with the engine, checks the result and returns the objective. */
static double solve_and_certify(pn_pstep *ps, const pn_problem *prob, const double *w,
                                double lambda, double *q, pstats *st, const char *what)
{
    const int64_t G = prob->num_groups;
    const int32_t m = prob->num_rows;
    double *y = malloc((size_t)m * sizeof *y), *y_own = malloc((size_t)m * sizeof *y_own);
    double *g = malloc((size_t)G * sizeof *g), *ys = malloc((size_t)m * sizeof *ys);
    assert_true(y && y_own && g && ys);
    int rc = pn_pstep_solve(ps, prob, w, lambda, P_TOL, P_MAX_NEWTON, y);
    pn_pstep_expand(ps, q);
    if (rc != 0)
        fail_msg("%s: pn_pstep_solve returned %d (lambda_p %g)", what, rc, lambda);
    /* q on the simplex, y = A'q */
    double sum = 0.0;
    for (int64_t k = 0; k < G; ++k) {
        assert_true(q[k] >= 0.0);
        sum += q[k];
    }
    assert_true(fabs(sum - 1.0) <= 1e-12);
    ts_apply(prob, q, y_own);
    assert_true(ts_max_abs_diff(y, y_own, m) <= 1e-13);
    /* the engine's certificate and an own computation of the same residual */
    double kkt, gap, kkt_own, gap_own;
    pn_pstep_certificate(prob, w, lambda, q, g, ys, &kkt, &gap);
    ts_pstep_kkt(prob, w, lambda, q, &kkt_own, &gap_own);
    st->worst_cert_diff = fmax(st->worst_cert_diff, fabs(kkt - kkt_own));
    assert_true(fabs(kkt - kkt_own) <= 1e-14 && fabs(gap - gap_own) <= 1e-14);
    st->worst_kkt = fmax(st->worst_kkt, kkt);
    if (!(kkt <= 1e-8 && gap <= 1e-8))
        fail_msg("%s: lambda_p %g: KKT residual %.3g, gap %.3g", what, lambda, kkt, gap);
    st->solves++;
    free(y);
    free(y_own);
    free(g);
    free(ys);
    return ts_pstep_objective(prob, w, lambda, q);
}

/* The reference must not beat the engine by more than 1e-10 (relative),
 * and the engine must not be below the reference's lower bound f - gap. */
static void compare_with_reference(const pn_problem *prob, const double *w, double lambda,
                                   double f_engine, pstats *st, const char *what, int max_iter)
{
    double *q_ref = malloc((size_t)prob->num_groups * sizeof *q_ref);
    assert_non_null(q_ref);
    double gap;
    int polished;
    const double f_ref = reference_pstep(prob, w, lambda, max_iter, q_ref, &gap, &polished);
    st->polished += polished;
    const double scale = fmax(fabs(f_engine), 1e-300);
    const double below = (f_engine - f_ref) / scale; /* > 0: the reference is lower */
    if (f_engine > 1e-20) {
        st->worst_ref_below = fmax(st->worst_ref_below, below);
        st->worst_ref_above = fmax(st->worst_ref_above, -below);
    } else {
        st->worst_abs_below = fmax(st->worst_abs_below, f_engine - f_ref);
    }
    /* 1e-20 absolute: below that the objective is zero to the p-step's
     * tolerance (realization errors of 1e-10), where a relative
     * comparison means nothing (consistent targets at lambda_p = 0) */
    if (!(f_engine - f_ref <= 1e-10 * scale + 1e-20))
        fail_msg("%s: lambda_p %g: engine %.17g, reference %.17g (lower by %.3g relative)", what,
                 lambda, f_engine, f_ref, below);
    if (!(f_engine >= f_ref - gap - 1e-15))
        fail_msg("%s: lambda_p %g: engine %.17g below the lower bound %.17g", what, lambda,
                 f_engine, f_ref - gap);
    st->compared++;
    free(q_ref);
}

static void random_weights(ts_rng *rng, const pn_problem *prob, double *w)
{
    double sum = 0.0;
    for (int32_t i = 0; i < prob->num_rows; ++i) {
        w[i] = ts_range(rng, 0.02, 1.0);
        sum += w[i];
    }
    for (int32_t i = 0; i < prob->num_rows; ++i)
        w[i] /= sum;
}

/* Zero weights: whole rules dropped (never all) and single rows zero. */
static void weights_with_zeros(ts_rng *rng, const pn_problem *prob, double *w)
{
    const int32_t K = prob->num_rules;
    random_weights(rng, prob, w);
    const int32_t keep = (int32_t)ts_below(rng, (uint64_t)K);
    for (int32_t r = 0; r < K; ++r) {
        const int drop = r != keep && ts_below(rng, 3) == 0;
        for (int32_t i = prob->rule_start[r]; i < prob->rule_start[r + 1]; ++i)
            if (drop || (ts_below(rng, 4) == 0 && i != prob->rule_start[keep]))
                w[i] = 0.0;
    }
    double sum = 0.0;
    for (int32_t i = 0; i < prob->num_rows; ++i)
        sum += w[i];
    for (int32_t i = 0; i < prob->num_rows; ++i)
        w[i] /= sum;
}

static pn_problem *random_small_problem(ts_rng *rng, int rep)
{
    int32_t sizes[5];
    const int32_t K = ts_between(rng, 2, 5);
    for (int32_t r = 0; r < K; ++r)
        sizes[r] = ts_between(rng, 2, 8);
    const int64_t n = ts_between(rng, 20, 240);
    return ts_random_problem(rng, n, K, sizes, (ts_targets)(rep % 3), NULL);
}

static const double lambdas[] = {1e-2, 1e-4, 1e-6};

/* Random positive weights, each penalty, solved in sequence by one p-step
 * (so warm starts are exercised) and by a fresh one (cold). */
static void test_pstep_positive_weights(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 31);
    pstats st = {0};
    for (int rep = 0; rep < 12; ++rep) {
        pn_problem *prob = random_small_problem(&rng, rep);
        const int64_t G = prob->num_groups;
        pn_pstep *warm = NULL;
        pn_error_info info;
        assert_int_equal(pn_pstep_create(prob, 1, &warm, &info), PN_OK);
        double *w = malloc((size_t)prob->num_rows * sizeof *w);
        double *q = malloc((size_t)G * sizeof *q), *q_cold = malloc((size_t)G * sizeof *q_cold);
        assert_true(w && q && q_cold);
        for (int k = 0; k < 2; ++k) {
            random_weights(&rng, prob, w);
            for (size_t l = 0; l < sizeof lambdas / sizeof lambdas[0]; ++l) {
                char what[64];
                snprintf(what, sizeof what, "problem %d (K' = %lld), weights %d", rep, (long long)G,
                         k);
                const double f = solve_and_certify(warm, prob, w, lambdas[l], q, &st, what);
                compare_with_reference(prob, w, lambdas[l], f, &st, what, 3000);
                pn_pstep *cold = NULL;
                assert_int_equal(pn_pstep_create(prob, 1, &cold, &info), PN_OK);
                const double f_cold =
                    solve_and_certify(cold, prob, w, lambdas[l], q_cold, &st, what);
                pn_pstep_free(cold);
                assert_true(fabs(f - f_cold) <= 1e-10 * f);
            }
        }
        free(w);
        free(q);
        free(q_cold);
        pn_pstep_free(warm);
        pn_problem_free(prob);
    }
    print_stats("p-step, positive w", &st);
}

/* Weights with zero rows and dropped rules: the reduced problem merges the
 * groups that agree on the kept rules; the certificate over all K' groups
 * still has to hold. */
static void test_pstep_zero_weights(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 32);
    pstats st = {0};
    for (int rep = 0; rep < 12; ++rep) {
        pn_problem *prob = random_small_problem(&rng, rep);
        pn_pstep *ps = NULL;
        pn_error_info info;
        assert_int_equal(pn_pstep_create(prob, 1, &ps, &info), PN_OK);
        double *w = malloc((size_t)prob->num_rows * sizeof *w);
        double *q = malloc((size_t)prob->num_groups * sizeof *q);
        assert_true(w && q);
        for (int k = 0; k < 4; ++k) {
            /* alternate between zero patterns and full weights, as the
             * alternation does when the selection changes */
            if (k % 2 == 0)
                weights_with_zeros(&rng, prob, w);
            else
                random_weights(&rng, prob, w);
            const double lambda = lambdas[(size_t)(rep + k) % 3];
            char what[64];
            snprintf(what, sizeof what, "problem %d, pattern %d", rep, k);
            const double f = solve_and_certify(ps, prob, w, lambda, q, &st, what);
            compare_with_reference(prob, w, lambda, f, &st, what, 3000);
        }
        free(w);
        free(q);
        pn_pstep_free(ps);
        pn_problem_free(prob);
    }
    print_stats("p-step, zero weights", &st);
}

/* lambda_p = 0: the proximal path. */
static void test_pstep_lambda_zero(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 33);
    pstats st = {0};
    for (int rep = 0; rep < 12; ++rep) {
        pn_problem *prob = random_small_problem(&rng, rep);
        pn_pstep *ps = NULL;
        pn_error_info info;
        assert_int_equal(pn_pstep_create(prob, 1, &ps, &info), PN_OK);
        double *w = malloc((size_t)prob->num_rows * sizeof *w);
        double *q = malloc((size_t)prob->num_groups * sizeof *q);
        assert_true(w && q);
        for (int k = 0; k < 3; ++k) {
            if (k == 1)
                weights_with_zeros(&rng, prob, w);
            else
                random_weights(&rng, prob, w);
            char what[64];
            snprintf(what, sizeof what, "problem %d, weights %d", rep, k);
            const double f = solve_and_certify(ps, prob, w, 0.0, q, &st, what);
            compare_with_reference(prob, w, 0.0, f, &st, what, 3000);
            /* a positive penalty right after the proximal path */
            solve_and_certify(ps, prob, w, 1e-4, q, &st, what);
        }
        free(w);
        free(q);
        pn_pstep_free(ps);
        pn_problem_free(prob);
    }
    print_stats("p-step, lambda_p = 0", &st);
}

/* The artificial case: with weights only on rules 1 and 2 the realization
 * is exact up to the spread penalty (the witness p1 has zero error). */
static void test_pstep_artificial_consistent_rules(void **state)
{
    (void)state;
    pstats st = {0};
    for (uint64_t seed = 1; seed <= 3; ++seed) {
        pn_problem *prob = ts_artificial(PN_GEN_A1, seed);
        pn_pstep *ps = NULL;
        pn_error_info info;
        assert_int_equal(pn_pstep_create(prob, 1, &ps, &info), PN_OK);
        double *w = malloc((size_t)prob->num_rows * sizeof *w);
        double *q = malloc((size_t)prob->num_groups * sizeof *q);
        double *y = malloc((size_t)prob->num_rows * sizeof *y);
        assert_true(w && q && y);
        const int32_t m12 = pn_rule_size(prob, 0) + pn_rule_size(prob, 1);
        for (int32_t i = 0; i < prob->num_rows; ++i)
            w[i] = i < m12 ? 1.0 / m12 : 0.0;
        const double f = solve_and_certify(ps, prob, w, 0.0, q, &st, "A1, rules 1-2");
        double E;
        ts_objective(prob, 0.0, 0.0, 0.0, q, w, &E);
        assert_true(f <= 1e-20 && E <= 1e-20);
        /* with the penalty, the error stays tiny and the objective is the
         * penalty of a spread-out q */
        const double f_p = solve_and_certify(ps, prob, w, 1e-4, q, &st, "A1, rules 1-2");
        compare_with_reference(prob, w, 1e-4, f_p, &st, "A1, rules 1-2", 3000);
        free(w);
        free(q);
        free(y);
        pn_pstep_free(ps);
        pn_problem_free(prob);
    }
    print_stats("p-step on A1, rules 1-2", &st);
}

/* A problem of 60,000 raw inputs over four rules, far more groups than
 * the working set holds at once, with its p-step and room for w and q. */
typedef struct pricing_case {
    pn_problem *prob;
    pn_pstep *ps;
    double *w, *q;
} pricing_case;

static pricing_case pricing_case_open(ts_rng *rng, ts_targets targets)
{
    const int32_t sizes[4] = {24, 18, 14, 9};
    pricing_case c = {ts_random_problem(rng, 60000, 4, sizes, targets, NULL), NULL, NULL, NULL};
    assert_true(c.prob->num_groups > 4 * 4096);
    pn_error_info info;
    assert_int_equal(pn_pstep_create(c.prob, 1, &c.ps, &info), PN_OK);
    c.w = malloc((size_t)c.prob->num_rows * sizeof *c.w);
    c.q = malloc((size_t)c.prob->num_groups * sizeof *c.q);
    assert_true(c.w && c.q);
    return c;
}

static void pricing_case_close(pricing_case *c)
{
    free(c->w);
    free(c->q);
    pn_pstep_free(c->ps);
    pn_problem_free(c->prob);
}

/* More groups than the p-step keeps in its working set at once (K' well
 * above 4096): pricing and working-set growth are exercised. The
 * reference is a short accelerated run here (one-sided check and lower
 * bound), the certificate carries the weight. */
static void test_pstep_working_set_pricing(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 34);
    pstats st = {0};
    for (int rep = 0; rep < 2; ++rep) {
        pricing_case c = pricing_case_open(&rng, rep ? TS_TARGETS_MIXED : TS_TARGETS_RANDOM);
        for (int k = 0; k < 5; ++k) {
            if (k == 3)
                weights_with_zeros(&rng, c.prob, c.w);
            else
                random_weights(&rng, c.prob, c.w);
            const double lambda = k == 4 ? 0.0 : lambdas[k % 3];
            char what[64];
            snprintf(what, sizeof what, "K' = %lld, weights %d", (long long)c.prob->num_groups, k);
            const double f = solve_and_certify(c.ps, c.prob, c.w, lambda, c.q, &st, what);
            compare_with_reference(c.prob, c.w, lambda, f, &st, what, 100);
        }
        pricing_case_close(&c);
    }
    print_stats("p-step, working set and pricing", &st);
}

/* A realization spread over thousands of groups (consistent targets from
 * a distribution over every input, a large lambda_p) is reached in fewer
 * pricing rounds than pn_pstep_max_add groups a round (here the floor of
 * 512) would allow: the rounds then add groups in proportion to the
 * support (pn_pstep_round_add). Cold, so the working set starts empty and
 * only pricing fills it: every supported group was added by a round. */
static void test_pstep_wide_support_rounds(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 36);
    pstats st = {0};
    pricing_case c = pricing_case_open(&rng, TS_TARGETS_CONSISTENT);
    random_weights(&rng, c.prob, c.w);
    solve_and_certify(c.ps, c.prob, c.w, 1e-2, c.q, &st, "wide support");
    const pn_pstep *ps = c.ps;
    int64_t support = 0; /* merged groups with mass: what the rounds added */
    for (int64_t p = 0; p < ps->ws_count; ++p)
        support += ps->qt[p] > 0.0;
    const int64_t per_round = pn_pstep_max_add(ps->m_act);
    print_message("wide support: %lld groups with mass, %d pricing rounds, %lld groups a round "
                  "at first\n",
                  (long long)support, ps->pricing_rounds, (long long)per_round);
    assert_true(ps->J > 4 * PN_PSTEP_WS_MARGIN); /* pricing fills the working set */
    assert_true(support > 4 * per_round);
    assert_true((int64_t)ps->pricing_rounds * per_round < support);
    pricing_case_close(&c);
}

/* The music-sized instance (K' = 1,249,781 groups, m = 2328): a few
 * p-steps at lambda_p > 0, certified over all groups. */
static void test_pstep_music_like(void **state)
{
    (void)state;
    pn_problem *prob = NULL;
    pn_error_info info;
    if (pn_gen_music_like(1, &prob, &info) != PN_OK)
        fail_msg("pn_gen_music_like: %s", info.message);
    ts_rng rng;
    ts_seed(&rng, 35);
    pstats st = {0};
    pn_pstep *ps = NULL;
    /* thread counts outside 1 .. PN_PSTEP_LANES are refused, naming them */
    const int bad_threads[] = {0, -1, PN_PSTEP_LANES + 1};
    for (size_t b = 0; b < sizeof bad_threads / sizeof bad_threads[0]; ++b) {
        assert_int_equal(pn_pstep_create(prob, bad_threads[b], &ps, &info), PN_ERR_INVALID);
        assert_null(ps);
        assert_non_null(strstr(info.message, "threads"));
    }
    assert_int_equal(pn_pstep_create(prob, 1, &ps, &info), PN_OK);
    double *w = malloc((size_t)prob->num_rows * sizeof *w);
    double *q = malloc((size_t)prob->num_groups * sizeof *q);
    assert_true(w && q);
    const double lambda[3] = {1e-2, 1e-4, 1e-4};
    for (int k = 0; k < 3; ++k) {
        if (k == 2)
            weights_with_zeros(&rng, prob, w);
        else
            random_weights(&rng, prob, w);
        char what[64];
        snprintf(what, sizeof what, "music-like, weights %d", k);
        solve_and_certify(ps, prob, w, lambda[k], q, &st, what);
    }
    free(w);
    free(q);
    pn_pstep_free(ps);
    pn_problem_free(prob);
    print_stats("p-step, music-like", &st);
}

/* ---- re-merging for a new selection ---- */

/* Sixteen inputs, each its own group, and four rules: A = x mod 4,
 * B = x div 4, C = x mod 8, D = x mod 2. {A, B} and {B, C} each tell
 * every input apart and neither contains the other; {A, C} merges x with
 * x + 8 and {B} leaves four groups. */
static pn_problem *sixteen_inputs(void)
{
    enum { N = 16, K = 4 };
    const int32_t sizes[K] = {4, 4, 8, 2};
    pn_problem *prob = NULL;
    pn_error_info info;
    assert_int_equal(pn_problem_create(N, K, sizes, NULL, &prob, &info), PN_OK);
    assert_int_equal(pn_problem_set_groups(prob, N, &info), PN_OK);
    for (int32_t x = 0; x < N; ++x) {
        const int32_t feature[K] = {x % 4, x / 4, x % 8, x % 2};
        for (int32_t r = 0; r < K; ++r)
            prob->group_rows[x * K + r] = prob->rule_start[r] + feature[r];
        prob->group_size[x] = 1;
    }
    /* targets: the rows of a distribution uneven over the inputs */
    double q[N], total = 0.0;
    for (int32_t x = 0; x < N; ++x)
        total += q[x] = 1.0 + (double)(x % 3) + 0.5 * (double)(x / 8);
    for (int32_t x = 0; x < N; ++x)
        q[x] /= total;
    ts_apply(prob, q, prob->target);
    return prob;
}

static void test_pstep_known_separating_sets(void **state)
{
    (void)state;
    enum { N = 16, A = 1, B = 2, C = 4, D = 8 };
    pn_problem *prob = sixteen_inputs();
    const int32_t K = prob->num_rules;
    pn_error_info info;
    pn_pstep *ps = NULL;
    assert_int_equal(pn_pstep_create(prob, 1, &ps, &info), PN_OK);
    double w[18];
    assert_true(prob->num_rows <= (int32_t)(sizeof w / sizeof w[0]));
    /* the selection moves as a music set's does: a rule outside the
     * structure, or more than PN_PSTEP_STRUCTURE_SLACK dropped, re-merge;
     * only a set neither known to separate nor containing one that is
     * needs hashing */
    const struct {
        unsigned kept, structure;
        int64_t groups, hashed;
    } steps[] = {
        {A | B, A | B, N, 1},
        {B | C, B | C, N, 2},
        {A | B, A | B, N, 2},
        {B | C, B | C, N, 2},
        {A | C, A | C, N / 2, 3},
        {A, A | C, N / 2, 3},
        {A | B | C, A | B | C, N, 3},
        {A | B, A | B | C, N, 3},
        {B, A | B | C, N, 3},
        {A | B | C | D, A | B | C | D, N, 3},
        {B, B, N / 4, 4},
    };
    assert_int_equal(PN_PSTEP_STRUCTURE_SLACK, 2); /* the steps assume it */
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; ++s) {
        const int restructure = s == 0 || steps[s].structure != steps[s - 1].structure;
        ts_weights_keeping(prob, steps[s].kept, w);
        pn_pstep_update_structure(ps, prob, w);
        assert_int_equal(ps->restructured, restructure);
        for (int32_t r = 0; r < K; ++r)
            assert_int_equal(ps->rule_kept[r], steps[s].structure >> r & 1u);
        assert_int_equal(ps->J, steps[s].groups);
        assert_int_equal(ps->merges_hashed, steps[s].hashed);
        /* merged groups: the inputs the structure's rules cannot tell apart */
        for (int32_t x = 0; x < N; ++x)
            for (int32_t y = 0; y < N; ++y) {
                int same = 1;
                for (int32_t r = 0; r < K; ++r)
                    if (steps[s].structure >> r & 1u)
                        same &= prob->group_rows[x * K + r] == prob->group_rows[y * K + r];
                assert_int_equal(ps->merged_of[x] == ps->merged_of[y], same);
            }
        /* the rows of the rules dropped within the structure are passive */
        for (int32_t a = 0; a < ps->m_act; ++a)
            assert_int_equal(ps->passive[a], !(w[ps->act_row[a]] > 0.0));
    }
    pn_pstep_free(ps);
    pn_problem_free(prob);
}

/* A p-step that keeps its structure when rules are dropped reaches the
 * optimum a p-step built for the kept rules alone reaches, with the KKT
 * residual certified over all groups (every group is in the working set
 * here; test_row_sums takes the priced path). */
static void test_pstep_structure_kept_for_dropped_rules(void **state)
{
    (void)state;
    enum { A = 1, B = 2, C = 4, D = 8 };
    pn_problem *prob = sixteen_inputs();
    const int64_t G = prob->num_groups;
    pn_error_info info;
    pn_pstep *kept = NULL, *fresh = NULL;
    assert_int_equal(pn_pstep_create(prob, 1, &kept, &info), PN_OK);
    double w[18], q_kept[16], q_fresh[16];
    pstats st = {0};
    /* the structure is built for A | B | C | D and kept while two of its
     * rules at most are dropped; C alone drops three */
    const struct {
        unsigned selection;
        int restructured;
    } steps[] = {{A | B | C | D, 1}, {A | C, 0}, {A | B | C, 0}, {B | C | D, 0}, {C, 1}};
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; ++s) {
        ts_weights_keeping(prob, steps[s].selection, w);
        char what[64];
        snprintf(what, sizeof what, "selection %zu, structure kept", s);
        solve_and_certify(kept, prob, w, 1e-3, q_kept, &st, what);
        assert_int_equal(kept->restructured, steps[s].restructured);
        assert_int_equal(pn_pstep_create(prob, 1, &fresh, &info), PN_OK);
        snprintf(what, sizeof what, "selection %zu, built for it", s);
        solve_and_certify(fresh, prob, w, 1e-3, q_fresh, &st, what);
        assert_true(ts_max_abs_diff(q_kept, q_fresh, G) <= 1e-12);
        pn_pstep_free(fresh);
    }
    pn_pstep_free(kept);
    pn_problem_free(prob);
}

/* ---- the factorisation that can be stopped ---- */

/* LAPACK's, for the reference. */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);

typedef struct poll_count {
    int calls, stop_at;
} poll_count;

static int count_polls(void *user)
{
    poll_count *pc = user;
    return ++pc->calls >= pc->stop_at;
}

/* From PN_PSTEP_POLLED_FACTOR on, with a poll, the factor is built in
 * block columns: the same factor as dpotrf (to rounding), a poll every
 * block of rows, and a stop when the poll asks. The matrix is
 * 0.5^|i - j| (positive definite), plus a rank-one bump so that no
 * block is trivial. */
static void test_pstep_polled_factorisation(void **state)
{
    (void)state;
    const int n = PN_PSTEP_POLLED_FACTOR + 300;
    const size_t nn = (size_t)n * (size_t)n;
    double *a = malloc(nn * sizeof *a), *ref = malloc(nn * sizeof *ref);
    assert_true(a && ref);
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < n; ++i)
            a[i + (size_t)j * n] =
                pow(0.5, fabs((double)(i - j))) + 1e-3 * sin(0.01 * i) * sin(0.01 * j);
    memcpy(ref, a, nn * sizeof *a);
    int info = 0;
    dpotrf_("L", &n, ref, &n, &info);
    assert_int_equal(info, 0);
    pn_pstep ps;
    memset(&ps, 0, sizeof ps);
    poll_count pc = {0, 1 << 30};
    ps.poll = count_polls;
    ps.poll_user = &pc;
    double *work = malloc(nn * sizeof *work);
    assert_non_null(work);
    memcpy(work, a, nn * sizeof *a);
    assert_int_equal(pn_pstep_factorise(&ps, work, n), 0);
    double worst = 0.0;
    for (int j = 0; j < n; ++j)
        for (int i = j; i < n; ++i)
            worst = fmax(worst, fabs(work[i + (size_t)j * n] - ref[i + (size_t)j * n]));
    assert_true(worst < 1e-12);
    assert_true(pc.calls >= n / 256); /* at least one poll per block column */
    /* asked to stop: stops at that poll */
    memcpy(work, a, nn * sizeof *a);
    pc.calls = 0;
    pc.stop_at = 3;
    assert_int_equal(pn_pstep_factorise(&ps, work, n), -1);
    assert_int_equal(pc.calls, 3);
    /* not positive definite: the info of the first bad column */
    memcpy(work, a, nn * sizeof *a);
    work[(size_t)(n - 10) * (n + 1)] = -1.0;
    pc.stop_at = 1 << 30;
    assert_int_equal(pn_pstep_factorise(&ps, work, n), n - 9);
    free(a);
    free(ref);
    free(work);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pstep_positive_weights),
        cmocka_unit_test(test_pstep_zero_weights),
        cmocka_unit_test(test_pstep_lambda_zero),
        cmocka_unit_test(test_pstep_artificial_consistent_rules),
        cmocka_unit_test(test_pstep_working_set_pricing),
        cmocka_unit_test(test_pstep_wide_support_rounds),
        cmocka_unit_test(test_pstep_music_like),
        cmocka_unit_test(test_pstep_known_separating_sets),
        cmocka_unit_test(test_pstep_structure_kept_for_dropped_rules),
        cmocka_unit_test(test_pstep_polled_factorisation),
    };
    ts_test_filter();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
