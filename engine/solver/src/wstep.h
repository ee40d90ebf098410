/* The w-step (13): rule selection for fixed errors e = (A'q - b)^2,
 *
 *   minimise e'w + lambda_w [alpha sum_r sqrt(m_r) |w_r|_2 + (1 - alpha) |w|^2]
 *   subject to w in the m-simplex.
 *
 * Two solvers:
 *  - exact (alpha < 1): for a multiplier tau of 1'w = 1 every group has the
 *    closed form w_r = (|v_r| - lambda_w alpha sqrt(m_r))_+ / (2 lambda_w
 *    (1 - alpha)) * v_r / |v_r| with v_r = (tau - e_r)_+, and sum(w) is
 *    continuous and nondecreasing in tau, so a bracketed root-find on tau
 *    gives the optimum to machine precision in O(m) per evaluation;
 *  - ADMM (14)-(18) for any alpha, with the group soft-threshold (17) and the
 *    sort-based simplex projection (18).
 * Internal to the engine; the tests call it directly. */
#ifndef PN_WSTEP_H
#define PN_WSTEP_H

#include <stdint.h>

typedef struct pn_wstep_problem {
    int32_t num_rules;
    const int32_t *rule_start; /* K + 1 */
    const double *e;           /* m squared errors (>= 0) */
    double lambda_w;           /* > 0 */
    double alpha;              /* [0, 1] */
} pn_wstep_problem;

static inline int32_t pn_wstep_rows(const pn_wstep_problem *p)
{
    return p->rule_start[p->num_rules];
}

/* Objective of (13) at w. */
double pn_wstep_objective(const pn_wstep_problem *p, const double *w);

/* KKT residual (inf-norm) of w for (13): stationarity on the support with
 * the best multiplier, sign conditions off it, the dual-norm bound for the
 * dropped rules, and |1'w - 1|. Zero exactly at the optimum. */
double pn_wstep_kkt(const pn_wstep_problem *p, const double *w);

/* Group soft-threshold (17): the minimiser over w_g of
 *   (c/2) |w_g - x|^2 + t |w_g|_2  is  (1 - t / (c |x|))_+ x. */
void pn_group_soft_threshold(const double *x, double *out, int32_t len, double c, double t);

/* Exact solver (alpha < 1). Returns 0, or -1 if alpha >= 1. */
int pn_wstep_exact(const pn_wstep_problem *p, double *w);

typedef struct pn_admm_state {
    double *z, *u;                         /* m each: warm-startable */
    double *scratch;                       /* 3m */
    double rho;                            /* in: 0 = automatic; out: the final rho */
    int iterations;                        /* out */
    double primal_residual, dual_residual; /* out */
} pn_admm_state;

/* The automatic rho: 2 lambda_w (1 - alpha) + lambda_w alpha m. The first
 * term is the curvature of the ridge part; the second is the curvature of
 * the group-lasso term lambda_w alpha sqrt(m_r) |w_r| at the uniform
 * weight w = 1/m (where sqrt(m_r) / |w_r| = m). Matching rho to the
 * curvature is the classical choice for a fast linear rate; residual
 * balancing then adapts it. */
double pn_admm_default_rho(const pn_wstep_problem *p);

/* ADMM solver. z/u in st are used as the warm start (z = 1/m, u = 0 for a
 * cold start). Returns 0 if it met tol, 1 if it hit max_iter. */
int pn_wstep_admm(const pn_wstep_problem *p, pn_admm_state *st, int max_iter, double tol,
                  double *w);

#endif
