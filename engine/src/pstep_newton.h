/* Internals of the p-step shared by its two files: pstep.c (structure,
 * working set, pricing, certificate) and pstep_newton.c (the restricted
 * semismooth Newton solve). */
#ifndef PN_PSTEP_NEWTON_H
#define PN_PSTEP_NEWTON_H

#include "pstep.h"

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
 * to gradient tolerance tol within max_newton steps. Returns 0 when tol was
 * met, 1 at the step limit, -1 on a numerical breakdown. */
int pn_pstep_newton(pn_pstep *ps, const double *b, const double *w, double lambda, double tol,
                    int max_newton);

#endif
