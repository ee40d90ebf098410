/* Tests of the sort-based Euclidean projection onto the simplex
 * (simplex.h) against an independent brute force over supports. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "simplex.h"
#include "test_support.h"

enum { MAX_N = 8 };

/* Brute force: for every non-empty support S the projection onto the
 * affine set {x_j = 0 off S, sum x = z} is x_i = v_i - theta_S with
 * theta_S = (sum_S v - z) / |S|. Every such point that is non-negative
 * lies on the simplex, and the true projection is one of them (its own
 * support), so the nearest feasible candidate is the projection. Long
 * double keeps the reference more accurate than the code under test. */
static void brute_projection(const double *v, size_t n, double z, double *x)
{
    long double best = INFINITY;
    long double cand[MAX_N];
    for (unsigned mask = 1; mask < (1u << n); ++mask) {
        long double sum = 0.0L;
        int count = 0;
        for (size_t i = 0; i < n; ++i)
            if (mask & (1u << i)) {
                sum += v[i];
                count++;
            }
        const long double theta = (sum - z) / count;
        int feasible = 1;
        long double dist = 0.0L;
        for (size_t i = 0; i < n; ++i) {
            cand[i] = (mask & (1u << i)) ? (long double)v[i] - theta : 0.0L;
            if (cand[i] < 0.0L)
                feasible = 0;
            long double d = cand[i] - v[i];
            dist += d * d;
        }
        if (feasible && dist < best) {
            best = dist;
            for (size_t i = 0; i < n; ++i)
                x[i] = (double)cand[i];
        }
    }
    assert_true(best < INFINITY);
}

typedef enum draw_kind {
    DRAW_UNIFORM,  /* uniform in [-1, 1] */
    DRAW_TIES,     /* a few distinct half-integers, many ties */
    DRAW_NEGATIVE, /* all negative */
    DRAW_HUGE,     /* magnitude around 1e6, some spread */
    DRAW_SMALL,    /* magnitude around 1e-9 */
    DRAW_MIXED,    /* mixed magnitudes 1e-6 .. 1e3 */
    DRAW_KINDS
} draw_kind;

static const char *const kind_name[DRAW_KINDS] = {"uniform", "ties",  "negative",
                                                  "huge",    "small", "mixed"};

static void draw(ts_rng *rng, draw_kind kind, double *v, size_t n)
{
    for (size_t i = 0; i < n; ++i) {
        switch (kind) {
        case DRAW_UNIFORM:
            v[i] = ts_range(rng, -1.0, 1.0);
            break;
        case DRAW_TIES:
            v[i] = 0.5 * (double)ts_between(rng, -2, 2);
            break;
        case DRAW_NEGATIVE:
            v[i] = -ts_range(rng, 0.0, 3.0);
            break;
        case DRAW_HUGE:
            v[i] = 1e6 * ts_range(rng, 0.5, 1.0) * (ts_below(rng, 2) ? 1.0 : -1.0);
            break;
        case DRAW_SMALL:
            v[i] = 1e-9 * ts_range(rng, -1.0, 1.0);
            break;
        case DRAW_MIXED:
            v[i] = pow(10.0, ts_range(rng, -6.0, 3.0)) * (ts_below(rng, 3) ? 1.0 : -1.0);
            break;
        default:
            fail();
        }
    }
}

static double max_abs(const double *v, size_t n)
{
    double a = 0.0;
    for (size_t i = 0; i < n; ++i)
        a = fmax(a, fabs(v[i]));
    return a;
}

/* The projection agrees with the brute force to 1e-12, measured in the
 * natural scale of the input (max(z, |v|_inf)): x = v - theta cancels, so
 * no algorithm can do better than a few ulps of |v|. */
static void test_projection_matches_brute_force(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 101);
    double worst[DRAW_KINDS] = {0};
    int cases = 0;
    for (int kind = 0; kind < DRAW_KINDS; ++kind)
        for (size_t n = 1; n <= MAX_N; ++n)
            for (int rep = 0; rep < 300; ++rep) {
                double v[MAX_N], x[MAX_N], ref[MAX_N], scratch[MAX_N];
                draw(&rng, (draw_kind)kind, v, n);
                const double z = rep % 3 == 0 ? 1.0 : rep % 3 == 1 ? 0.25 : 7.5;
                pn_project_simplex(v, x, n, z, scratch);
                brute_projection(v, n, z, ref);
                const double scale = fmax(z, max_abs(v, n));
                for (size_t i = 0; i < n; ++i) {
                    const double err = fabs(x[i] - ref[i]) / scale;
                    worst[kind] = fmax(worst[kind], err);
                    if (!(err <= 1e-12))
                        fail_msg("%s n=%zu rep=%d: x[%zu] = %.17g, brute force %.17g",
                                 kind_name[kind], n, rep, i, x[i], ref[i]);
                }
                cases++;
            }
    for (int kind = 0; kind < DRAW_KINDS; ++kind)
        print_message("simplex vs brute force, %-8s: max relative error %.3g\n", kind_name[kind],
                      worst[kind]);
    assert_int_equal(cases, DRAW_KINDS * MAX_N * 300);
}

/* x is on the simplex, no random simplex point is nearer to v, and the
 * variational inequality (v - x)'(e_j z - x) <= 0 holds at every vertex. */
static void test_projection_is_nearest_simplex_point(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 202);
    for (int kind = 0; kind < DRAW_KINDS; ++kind)
        for (size_t n = 1; n <= MAX_N; ++n)
            for (int rep = 0; rep < 100; ++rep) {
                double v[MAX_N], x[MAX_N], scratch[MAX_N];
                draw(&rng, (draw_kind)kind, v, n);
                const double z = rep % 2 ? 1.0 : 3.0;
                pn_project_simplex(v, x, n, z, scratch);
                const double scale = fmax(z, max_abs(v, n));
                double sum = 0.0;
                for (size_t i = 0; i < n; ++i) {
                    assert_true(x[i] >= 0.0);
                    sum += x[i];
                }
                assert_true(fabs(sum - z) <= 1e-13 * scale * (double)n);
                double dist = 0.0;
                for (size_t i = 0; i < n; ++i)
                    dist += (x[i] - v[i]) * (x[i] - v[i]);
                /* random simplex points (exponential spacings) */
                for (int t = 0; t < 50; ++t) {
                    double y[MAX_N], total = 0.0, d = 0.0;
                    for (size_t i = 0; i < n; ++i) {
                        y[i] = ts_below(&rng, 4) == 0 ? 0.0 : -log(1.0 - ts_uniform(&rng));
                        total += y[i];
                    }
                    if (!(total > 0.0)) {
                        y[0] = 1.0;
                        total = 1.0;
                    }
                    for (size_t i = 0; i < n; ++i) {
                        y[i] *= z / total;
                        d += (y[i] - v[i]) * (y[i] - v[i]);
                    }
                    assert_true(dist <= d * (1.0 + 1e-12) + 1e-24 * scale * scale);
                }
                for (size_t j = 0; j < n; ++j) {
                    double vi = 0.0;
                    for (size_t i = 0; i < n; ++i)
                        vi += (v[i] - x[i]) * ((i == j ? z : 0.0) - x[i]);
                    assert_true(vi <= 1e-12 * scale * scale);
                }
            }
}

/* Ties, aliasing, the threshold, n = 1 and hand-checked values. */
static void test_projection_hand_checked(void **state)
{
    (void)state;
    double scratch[MAX_N];
    {
        const double v[3] = {0.5, 0.5, 0.5};
        double x[3];
        pn_project_simplex(v, x, 3, 1.0, scratch);
        for (int i = 0; i < 3; ++i)
            assert_float_equal(x[i], 1.0 / 3.0, 1e-15);
    }
    {
        const double v[4] = {2.0, 0.0, -1.0, 2.0}; /* tie at the top */
        double x[4];
        pn_project_simplex(v, x, 4, 1.0, scratch);
        assert_float_equal(x[0], 0.5, 1e-15);
        assert_float_equal(x[3], 0.5, 1e-15);
        assert_true(x[1] == 0.0 && x[2] == 0.0);
        assert_float_equal(pn_simplex_threshold(v, 4, 1.0, scratch), 1.5, 1e-15);
    }
    {
        const double v[3] = {0.2, 0.3, 0.5}; /* already on the simplex */
        double x[3];
        pn_project_simplex(v, x, 3, 1.0, scratch);
        for (int i = 0; i < 3; ++i)
            assert_float_equal(x[i], v[i], 1e-15);
    }
    {
        const double v[1] = {-42.0};
        double x[1];
        pn_project_simplex(v, x, 1, 2.5, scratch);
        assert_true(x[0] == 2.5);
    }
    {
        /* x may alias v */
        ts_rng rng;
        ts_seed(&rng, 303);
        for (int rep = 0; rep < 200; ++rep) {
            double v[MAX_N], x[MAX_N], ref[MAX_N];
            const size_t n = 1 + (size_t)ts_below(&rng, MAX_N);
            draw(&rng, DRAW_UNIFORM, v, n);
            pn_project_simplex(v, ref, n, 1.0, scratch);
            const double theta = pn_simplex_threshold(v, n, 1.0, scratch);
            memcpy(x, v, sizeof x);
            pn_project_simplex(x, x, n, 1.0, scratch);
            for (size_t i = 0; i < n; ++i) {
                assert_true(x[i] == ref[i]);
                assert_true(ref[i] == fmax(v[i] - theta, 0.0));
            }
        }
    }
}

/* Scaling v and z together scales the projection. */
static void test_projection_scale_invariance(void **state)
{
    (void)state;
    ts_rng rng;
    ts_seed(&rng, 404);
    const double scales[] = {1e-8, 1e-3, 1e3, 1e8};
    for (int rep = 0; rep < 500; ++rep) {
        double v[MAX_N], x[MAX_N], vs[MAX_N], xs[MAX_N], scratch[MAX_N];
        const size_t n = 1 + (size_t)ts_below(&rng, MAX_N);
        draw(&rng, DRAW_UNIFORM, v, n);
        pn_project_simplex(v, x, n, 1.0, scratch);
        for (size_t s = 0; s < sizeof scales / sizeof scales[0]; ++s) {
            for (size_t i = 0; i < n; ++i)
                vs[i] = v[i] * scales[s];
            pn_project_simplex(vs, xs, n, scales[s], scratch);
            for (size_t i = 0; i < n; ++i)
                assert_true(fabs(xs[i] / scales[s] - x[i]) <= 1e-12 * fmax(1.0, max_abs(v, n)));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_projection_matches_brute_force),
        cmocka_unit_test(test_projection_is_nearest_simplex_point),
        cmocka_unit_test(test_projection_hand_checked),
        cmocka_unit_test(test_projection_scale_invariance),
    };
    ts_test_filter();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
