/* Conjugate gradients on the Newton system's coupled block, preconditioned
 * by the last Cholesky factor (linsys.h). */
#include <string.h>

#include "linsys_internal.h"

void pn_linsys_coupled_diagonal(pn_linsys *ls, const pn_linsys_matrix *A)
{
    const int32_t ka = A->k, ma = A->rows, nc = ls->n_coupled;
    double *diag = ls->cg_diag;
    for (int32_t a = 0; a < ma; ++a)
        if (ls->coupled_of[a] >= 0)
            diag[ls->coupled_of[a]] = A->lambda / A->w[A->global_row[a]];
    diag[nc] = 0.0;
    for (int64_t idx = 0; idx < A->count; ++idx) {
        double c;
        const int32_t *col = pn_linsys_group(A, A->position[idx], &c);
        for (int32_t k = 0; k < ka; ++k)
            if (ls->coupled_of[col[k]] >= 0)
                diag[ls->coupled_of[col[k]]] += c;
        diag[nc] += c;
    }
}

/* Exact Hessian times v on the coupled block (matrix-free, O(support)). */
static void coupled_apply(const pn_linsys *ls, const pn_linsys_matrix *A, const double *v,
                          double *out)
{
    const int32_t ka = A->k, ma = A->rows, nc = ls->n_coupled;
    const int32_t *map = ls->coupled_of, *cmap = ls->cmap;
    for (int32_t a = 0; a < ma; ++a)
        if (map[a] >= 0)
            out[map[a]] = A->lambda / A->w[A->global_row[a]] * v[map[a]];
    out[nc] = 0.0;
    out[nc + 1] = 0.0; /* the zero slot collects the uncoupled rows' terms; v[nc + 1] = 0 */
    if (ls->sup_ok) {
        for (int64_t idx = 0; idx < A->count; ++idx) {
            const int32_t *cc = ls->sup_cols + idx * ka;
            double dot = -v[nc];
            for (int32_t x = 0; x < ka; ++x)
                dot += v[cc[x]];
            dot *= ls->sup_c[idx];
            for (int32_t x = 0; x < ka; ++x)
                out[cc[x]] += dot;
            out[nc] -= dot;
        }
        return;
    }
    for (int64_t idx = 0; idx < A->count; ++idx) {
        double c;
        const int32_t *col = pn_linsys_group(A, A->position[idx], &c);
        double dot = -v[nc];
        for (int32_t x = 0; x < ka; ++x)
            dot += v[cmap[col[x]]];
        dot *= c;
        for (int32_t x = 0; x < ka; ++x)
            out[cmap[col[x]]] += dot;
        out[nc] -= dot;
    }
}

/* Preconditioner: the last Cholesky factor, scattered onto the current
 * coupled rows (rows it does not cover use the exact diagonal), with the
 * eliminated rule's rows (if any) solved exactly by the block formula
 * (linsys.c) from the current diagonal (cg_diag) and coupling. A principal
 * part of an SPD inverse is SPD and the block formula is a congruence of
 * SPD blocks, so this is a valid preconditioner however the support or w
 * moved since the factorisation; right after a factorisation it is the
 * exact inverse. */

/* The rows pn_linsys_precondition() visits, from coupled_of, factor_of and
 * elim_k: coupled rows with a factor index (pairs in the first two
 * thirds), then in the last third the coupled rows without one (from the
 * front) and the eliminated rule's coupled rows (from the back). */
static void build_pc_lists(pn_linsys *ls, const pn_linsys_matrix *A)
{
    const int32_t ma = A->rows, m = ls->m;
    int32_t *fi = ls->pc_list, *ff = ls->pc_list + m, *misc = ls->pc_list + 2 * (int64_t)m;
    int32_t lo = 0, hi = 0;
    if (ls->elim_k >= 0) {
        lo = A->block_first[ls->elim_k];
        hi = pn_linsys_block_end(A, ls->elim_k);
    }
    int32_t nfa = 0, nda = 0, nea = 0;
    for (int32_t a = 0; a < ma; ++a) {
        const int32_t i = ls->coupled_of[a];
        if (i < 0)
            continue;
        if (a >= lo && a < hi) {
            misc[m - 1 - nea++] = i;
            continue;
        }
        const int32_t f = ls->factor_of[a];
        if (f >= 0) {
            fi[nfa] = i;
            ff[nfa++] = f;
        } else {
            misc[nda++] = i;
        }
    }
    ls->pc_fa = nfa;
    ls->pc_da = nda;
    ls->pc_ea = nea;
    ls->pc_valid = 1;
}

/* m = r_R - H_RE D^-1 r_E: the right-hand side of the Schur system. */
static void eliminated_rhs(const pn_linsys *ls, const pn_linsys_matrix *A, const double *r,
                           double *m)
{
    const int32_t ka = A->k, nc = ls->n_coupled, ek = ls->elim_k;
    const int32_t *cmap = ls->cmap;
    memcpy(m, r, (size_t)(nc + 1) * sizeof *m);
    const int32_t zero_slot = nc + 1;
    for (int64_t idx = 0; ls->sup_ok && idx < A->count; ++idx) {
        const int32_t *cc = ls->sup_cols + idx * ka;
        const int32_t ie = cc[ek];
        if (ie == zero_slot)
            continue;
        const double coef = ls->sup_c[idx] * r[ie] / ls->cg_diag[ie];
        for (int32_t x = 0; x < ek; ++x)
            m[cc[x]] -= coef;
        for (int32_t x = ek + 1; x < ka; ++x)
            m[cc[x]] -= coef;
        m[nc] += coef;
    }
    for (int64_t idx = 0; !ls->sup_ok && idx < A->count; ++idx) {
        double c;
        const int32_t *col = pn_linsys_group(A, A->position[idx], &c);
        const int32_t e = pn_linsys_elim_row(ls, col);
        if (e < 0)
            continue;
        const int32_t ie = ls->coupled_of[e];
        const double coef = c * r[ie] / ls->cg_diag[ie];
        /* uncoupled rows land in the zero slot nc + 1 (unused here) */
        for (int32_t x = 0; x < ek; ++x)
            m[cmap[col[x]]] -= coef;
        for (int32_t x = ek + 1; x < ka; ++x)
            m[cmap[col[x]]] -= coef;
        m[nc] += coef;
    }
}

/* x_E = D^-1 (r_E - H_ER x_R): the eliminated rows from the others (z). */
static void eliminated_rows(const pn_linsys *ls, const pn_linsys_matrix *A, const double *r,
                            double *z)
{
    const int32_t ka = A->k, nc = ls->n_coupled, ek = ls->elim_k, mcap = ls->m;
    const int32_t *cmap = ls->cmap, *misc = ls->pc_list + 2 * (int64_t)mcap;
    for (int32_t k = 0; k < ls->pc_ea; ++k) {
        const int32_t i = misc[mcap - 1 - k];
        z[i] = r[i];
    }
    z[nc + 1] = 0.0; /* the zero slot */
    for (int64_t idx = 0; ls->sup_ok && idx < A->count; ++idx) {
        const int32_t *cc = ls->sup_cols + idx * ka;
        const int32_t ie = cc[ek];
        if (ie == nc + 1)
            continue;
        double dot = -z[nc];
        for (int32_t x = 0; x < ek; ++x)
            dot += z[cc[x]];
        for (int32_t x = ek + 1; x < ka; ++x)
            dot += z[cc[x]];
        z[ie] -= ls->sup_c[idx] * dot;
    }
    for (int64_t idx = 0; !ls->sup_ok && idx < A->count; ++idx) {
        double c;
        const int32_t *col = pn_linsys_group(A, A->position[idx], &c);
        const int32_t e = pn_linsys_elim_row(ls, col);
        if (e < 0)
            continue;
        double dot = -z[nc];
        for (int32_t x = 0; x < ek; ++x)
            dot += z[cmap[col[x]]];
        for (int32_t x = ek + 1; x < ka; ++x)
            dot += z[cmap[col[x]]];
        z[ls->coupled_of[e]] -= c * dot;
    }
    for (int32_t k = 0; k < ls->pc_ea; ++k) {
        const int32_t i = misc[mcap - 1 - k];
        z[i] /= ls->cg_diag[i];
    }
}

void pn_linsys_precondition(pn_linsys *ls, const pn_linsys_matrix *A, const double *r, double *z)
{
    const int32_t nc = ls->n_coupled, mcap = ls->m;
    const int nf = ls->factor_n;
    double *t = ls->cg_t;
    const double *rr = r;
    if (!ls->pc_valid)
        build_pc_lists(ls, A);
    const int32_t *fi = ls->pc_list, *ff = ls->pc_list + mcap;
    const int32_t *misc = ls->pc_list + 2 * (int64_t)mcap;
    if (ls->elim_k >= 0) {
        eliminated_rhs(ls, A, r, ls->pre_r);
        rr = ls->pre_r;
    }
    memset(t, 0, (size_t)nf * sizeof *t);
    for (int32_t k = 0; k < ls->pc_fa; ++k)
        t[ff[k]] = rr[fi[k]];
    for (int32_t k = 0; k < ls->pc_da; ++k) {
        const int32_t i = misc[k];
        z[i] = rr[i] / ls->cg_diag[i];
    }
    t[nf - 1] = rr[nc];
    pn_cholesky_solve(ls->hess, nf, t);
    for (int32_t k = 0; k < ls->pc_fa; ++k)
        z[fi[k]] = t[ff[k]];
    z[nc] = t[nf - 1];
    if (ls->elim_k >= 0)
        eliminated_rows(ls, A, r, z);
}

/* Any CG iterate from 0 is a descent direction, so stopping early is
 * safe. */
int pn_linsys_pcg(pn_linsys *ls, const pn_linsys_matrix *A, const double *g, double forcing,
                  int budget)
{
    const int32_t ma = A->rows, nc = ls->n_coupled, n = nc + 1;
    double *x = ls->compact, *r = ls->cg_r, *z = ls->cg_z, *p = ls->cg_p, *hp = ls->cg_hp;
    pn_linsys_coupled_diagonal(ls, A); /* the preconditioner's diagonal parts */
    double r0 = 0.0;
    for (int32_t a = 0; a < ma; ++a)
        if (ls->coupled_of[a] >= 0)
            r[ls->coupled_of[a]] = -g[a];
    r[nc] = -g[ma];
    for (int32_t i = 0; i < n; ++i) {
        x[i] = 0.0;
        r0 += r[i] * r[i];
    }
    pn_linsys_precondition(ls, A, r, z);
    double rz = 0.0;
    for (int32_t i = 0; i < n; ++i) {
        p[i] = z[i];
        rz += r[i] * z[i];
    }
    p[n] = 0.0; /* the zero slot read by coupled_apply */
    const double target = forcing * forcing * r0;
    for (int it = 0; it < budget; ++it) {
        coupled_apply(ls, A, p, hp);
        double php = 0.0;
        for (int32_t i = 0; i < n; ++i)
            php += p[i] * hp[i];
        if (!(php > 0.0)) {
            ls->failure = "conjugate gradients met a direction of no positive curvature";
            return -1;
        }
        const double alpha = rz / php;
        double rr = 0.0;
        for (int32_t i = 0; i < n; ++i) {
            x[i] += alpha * p[i];
            r[i] -= alpha * hp[i];
            rr += r[i] * r[i];
        }
        if (rr <= target)
            return 0;
        pn_linsys_precondition(ls, A, r, z);
        double rz_new = 0.0;
        for (int32_t i = 0; i < n; ++i)
            rz_new += r[i] * z[i];
        const double beta = rz_new / rz;
        rz = rz_new;
        for (int32_t i = 0; i < n; ++i)
            p[i] = z[i] + beta * p[i];
    }
    return -1;
}
