/* Internals of the p-step shared by its files: pstep.c (setup, the
 * working-set loop, certificate), pstep_structure.c (merged groups and
 * active rows), pstep_pricing.c (pricing) and pstep_newton.c (the
 * restricted semismooth Newton solve; its linear system is linsys.h). */
#ifndef PN_PSTEP_INTERNAL_H
#define PN_PSTEP_INTERNAL_H

#include "pstep.h"

/* The groups a pricing round adds at most while the support is small: one
 * per active row (the music sets' supports hold a few hundred groups over
 * 700-800 rows), and no fewer than PN_PSTEP_ADD_FLOOR. More per round made
 * each following Newton solve dearer than the rounds it spared
 * (docs/benchmarks.md); pn_pstep_round_add raises it for large supports. */
static inline int64_t pn_pstep_max_add(int32_t m_act)
{
    return m_act > PN_PSTEP_ADD_FLOOR ? (int64_t)m_act : PN_PSTEP_ADD_FLOOR;
}

/* The most groups the next pricing round adds, `support` being the
 * support of the last Newton step. A realization whose support outgrows
 * what one round adds (a context whose targets spread over thousands of
 * sonorities) would otherwise take a round, and a pass over all groups,
 * for every few hundred of them; sized by the support, such a round takes
 * the groups the support is likely to grow by. Rounds that start from a
 * support under a quarter of pn_pstep_max_add add as many as before. */
static inline int64_t pn_pstep_round_add(int32_t m_act, int64_t support)
{
    const int64_t base = pn_pstep_max_add(m_act);
    int64_t add = PN_PSTEP_ADD_PER_SUPPORTED * support;
    if (add < base)
        add = base;
    return add < PN_PSTEP_ADD_GROWTH * base ? add : PN_PSTEP_ADD_GROWTH * base;
}

/* Candidates a lane of a pass over all groups may hold at once (at most
 * PN_PSTEP_CAND_SLACK of the largest rounds' worth, and never more than
 * G). */
static inline int64_t pn_pstep_lane_capacity(int32_t m, int64_t G)
{
    const int64_t cap = PN_PSTEP_CAND_SLACK * PN_PSTEP_ADD_GROWTH * pn_pstep_max_add(m);
    return cap < G ? cap : G;
}

/* Sum of the row multipliers over group j's rows (passive rows hold 0). */
static inline double group_sum(const pn_pstep *ps, int64_t j, const double *nu)
{
    const int32_t *col = ps->cols + j * ps->k_act;
    double s = 0.0;
    for (int32_t a = 0; a < ps->k_act; ++a)
        s += nu[col[a]]; /* passive rows hold nu = 0 */
    return s;
}

/* The working set's groups by position p (group ws[p]): its active rows
 * and size, from the working set's own copy when it holds p
 * (pn_pstep_sync_ws), so that the Newton loops, which pass over the
 * working set many times, read memory in order instead of a scattered
 * line per group; and its proximal centre. */
static inline const int32_t *ws_col(const pn_pstep *ps, int64_t p)
{
    return p < ps->ws_synced ? ps->ws_cols + p * ps->k_act
                             : ps->cols + (int64_t)ps->ws[p] * ps->k_act;
}

static inline double ws_weight(const pn_pstep *ps, int64_t p)
{
    return p < ps->ws_synced ? ps->ws_c[p] : (double)ps->merged_weight[ps->ws[p]];
}

static inline double ws_center(const pn_pstep *ps, int64_t p)
{
    return ps->center_zero ? 0.0 : ps->center[ps->ws[p]];
}

static inline double ws_sum(const pn_pstep *ps, int64_t p, const double *nu)
{
    const int32_t *col = ws_col(ps, p);
    double s = 0.0;
    for (int32_t a = 0; a < ps->k_act; ++a)
        s += nu[col[a]];
    return s;
}

/* Extends the working set's copy to its new entries (as far as its
 * capacity goes). Positions already copied must not have moved: whatever
 * reorders the working set sets ps->ws_synced = 0. */
void pn_pstep_sync_ws(pn_pstep *ps);

/* Sets ps->mu so that the working set's masses sum to one for nu. The mass
 * is convex, piecewise linear and increasing in mu, so Newton started to
 * the right of the root falls onto it monotonically; from the current mu
 * (usually close) one Newton step gets to the right side. */
void pn_pstep_fit_mu(pn_pstep *ps, const double *nu);

/* Semismooth Newton on the working set's dual from ps->nu_act and ps->mu,
 * to gradient tolerance tol within max_newton steps. Returns
 * PN_OUTCOME_OK when tol was met, PN_OUTCOME_LIMIT at the step
 * limit, otherwise what failed (ps->failure says why). */
pn_outcome pn_pstep_newton(pn_pstep *ps, const double *b, const double *w, double lambda,
                           double tol, int max_newton);

/* Empties the working set (positions and the factor's record of them). */
void pn_pstep_clear_working_set(pn_pstep *ps);

/* Empties the pool of earlier supports (its ids are merged groups of the
 * current structure). */
void pn_pstep_clear_pool(pn_pstep *ps);

/* Re-merges the groups when w keeps a rule the structure was not built
 * for, or drops more than PN_PSTEP_STRUCTURE_SLACK of those it was;
 * refreshes the passive rows from w every time. */
void pn_pstep_update_structure(pn_pstep *ps, const pn_problem *prob, const double *w);

/* Prices every group outside the working set at (nu, mu) and adds the
 * largest violators (t_j > threshold), at most max_add. With an empty
 * working set, mu is first fitted over all groups. Returns the number
 * added. */
int64_t pn_pstep_price(pn_pstep *ps, const double *nu, double threshold, int64_t max_add);

/* pn_pstep_price() over the pool of earlier supports only. */
int64_t pn_pstep_price_pool(pn_pstep *ps, const double *nu, double threshold, int64_t max_add);

/* The last pricing pass of a solve fused with its certificate: prices as
 * pn_pstep_price() does and, in the same pass over the K' groups, computes
 * the primal KKT residual and the Frank-Wolfe gap of the working set's
 * current (normalised) masses. The certificate is valid when nothing is
 * added. */
int64_t pn_pstep_price_certify(pn_pstep *ps, const double *nu, double threshold, int64_t max_add,
                               const double *b, const double *w, double lambda, double *kkt,
                               double *gap);

/* y_act = A'q over the working set's current masses (not normalised);
 * returns their total. */
double pn_pstep_working_set_rows(pn_pstep *ps);

#endif
