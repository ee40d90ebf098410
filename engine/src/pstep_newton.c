/* The p-step's restricted solve: semismooth Newton on the dual of (8) over
 * the working set (see pstep.h for the method). */
#include "pstep_newton.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

/* LAPACK's Cholesky factorisation from OpenBLAS (32-bit integers). */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);

/* Solves L L' x = x for the lower Cholesky factor L (order n, column-major)
 * with two BLAS-2 triangular solves: for one right-hand side they avoid the
 * packing of the blocked (BLAS-3) path. */
static void cholesky_solve(const double *L, int n, double *x)
{
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, L, n, x, 1);
    cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, n, L, n, x, 1);
}

/* The Cholesky factorisation from PN_PSTEP_POLLED_FACTOR on is done in
 * block columns (left-looking), asking ps->poll between blocks of rows: one
 * dpotrf of order 10^4 takes several seconds and cannot be stopped. Below
 * it, one dpotrf call (music's factors are far smaller). */
enum { FACTOR_BLOCK = 256, FACTOR_ROWS = 2048 };

int pn_pstep_factorise(pn_pstep *ps, double *a, int n)
{
    int info = 0;
    if (n < PN_PSTEP_POLLED_FACTOR || !ps->poll) {
        dpotrf_("L", &n, a, &n, &info);
        return info;
    }
    const size_t ld = (size_t)n;
    for (int k = 0; k < n; k += FACTOR_BLOCK) {
        const int kb = n - k < FACTOR_BLOCK ? n - k : FACTOR_BLOCK;
        double *diag = a + k + k * ld;
        /* the diagonal block, less the columns already factorised */
        cblas_dsyrk(CblasColMajor, CblasLower, CblasNoTrans, kb, k, -1.0, a + k, n, 1.0, diag, n);
        int block = kb;
        dpotrf_("L", &block, diag, &n, &info);
        if (info != 0)
            return info + k;
        /* the rows below it, in chunks between which a stop is heard */
        for (int r = k + kb; r < n; r += FACTOR_ROWS) {
            const int rb = n - r < FACTOR_ROWS ? n - r : FACTOR_ROWS;
            cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, rb, kb, k, -1.0, a + r, n, a + k,
                        n, 1.0, a + r + k * ld, n);
            if (ps->poll(ps->poll_user))
                return -1;
        }
        if (k + kb < n)
            cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, n - k - kb,
                        kb, 1.0, diag, n, a + k + kb + k * ld, n);
    }
    return 0;
}

/* Conjugate-gradient iterations before a fresh factorisation, and the
 * factor order (after the block elimination) below which factorising is
 * cheap enough to do every time: each preconditioned iteration streams the
 * dense factor twice through memory-bound triangular solves, so around ten
 * of them (a typical solve) cost as much as a factorisation of a few
 * hundred rows, which also gives the exact Newton direction. */
enum { PCG_BUDGET = 20, PCG_MIN_ORDER = 600 };

/* Support changes since the factorisation below which the old factor is
 * tried as a preconditioner at any order (see newton_direction). */
enum { SMALL_CHANGE = 8 };

/* Coupled rows a rule needs before its block is eliminated. */
enum { ELIM_MIN_ROWS = 16 };

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

/* The support (positions with t > 0) and the coupled rows it touches. */
static void prepare_newton(pn_pstep *ps)
{
    const int32_t ka = ps->k_act, ma = ps->m_act;
    ps->support_count = 0;
    for (int32_t a = 0; a < ma; ++a)
        ps->coupled_of[a] = -1;
    for (int64_t p = 0; p < ps->ws_count; ++p) {
        if (!(ps->t[p] > 0.0))
            continue;
        ps->support[ps->support_count++] = p;
        const int32_t *col = ws_col(ps, p);
        for (int32_t a = 0; a < ka; ++a)
            if (!ps->passive[col[a]])
                ps->coupled_of[col[a]] = 0;
    }
    ps->n_coupled = 0;
    for (int32_t a = 0; a < ma; ++a)
        if (ps->coupled_of[a] == 0)
            ps->coupled_of[a] = ps->n_coupled++;
    /* the same with uncoupled rows sent to a slot after mu that holds 0 in
     * the vectors the support loops read (no branch per row) */
    const int32_t zero_slot = ps->n_coupled + 1;
    for (int32_t a = 0; a < ma; ++a)
        ps->cmap[a] = ps->coupled_of[a] >= 0 ? ps->coupled_of[a] : zero_slot;
    ps->pc_valid = 0;
    /* a contiguous copy of the support's rows for the CG loops */
    ps->sup_ok = ps->support_count * ka <= ps->sup_cap;
    if (ps->sup_ok)
        for (int64_t idx = 0; idx < ps->support_count; ++idx) {
            const int32_t *col = ws_col(ps, ps->support[idx]);
            int32_t *out = ps->sup_cols + idx * ka;
            for (int32_t a = 0; a < ka; ++a)
                out[a] = ps->cmap[col[a]];
            ps->sup_c[idx] = ws_weight(ps, ps->support[idx]);
        }
}

/* Block elimination. Each group has exactly one row in every kept rule,
 * so the Hessian's block of one rule with itself is diagonal. The rule with
 * the most coupled rows (E) is eliminated: with D its diagonal,
 *   S = H_RR - H_RE D^-1 H_ER
 * on the other coupled rows and mu (R) is factorised instead of H, and
 *   x_R = S^-1 (r_R - H_RE D^-1 r_E),  x_E = D^-1 (r_E - H_ER x_R).
 * H_RE is applied group by group: a supported group j with coupled row e in
 * E couples e to its R rows with weight c_j and to mu with -c_j. */

/* Active index of group j's row in the eliminated rule if that row is
 * coupled, else -1. */
static inline int32_t elim_row(const pn_pstep *ps, const int32_t *col)
{
    if (ps->elim_k < 0)
        return -1;
    const int32_t e = col[ps->elim_k];
    return ps->coupled_of[e] >= 0 ? e : -1;
}

/* Exact diagonal of the coupled block into cg_diag (coupled index space). */
static void coupled_diagonal(pn_pstep *ps, const double *w, double lambda)
{
    const int32_t ka = ps->k_act, ma = ps->m_act, nc = ps->n_coupled;
    double *diag = ps->cg_diag;
    for (int32_t a = 0; a < ma; ++a)
        if (ps->coupled_of[a] >= 0)
            diag[ps->coupled_of[a]] = lambda / w[ps->act_row[a]];
    diag[nc] = 0.0;
    for (int64_t idx = 0; idx < ps->support_count; ++idx) {
        const double c = ws_weight(ps, ps->support[idx]);
        const int32_t *col = ws_col(ps, ps->support[idx]);
        for (int32_t k = 0; k < ka; ++k)
            if (ps->coupled_of[col[k]] >= 0)
                diag[ps->coupled_of[col[k]]] += c;
        diag[nc] += c;
    }
}

/* Chooses the eliminated rule (the one with the most coupled rows, if it
 * has enough to be worth it) and numbers the remaining coupled rows and mu
 * for the factor (factor_of; mu last). Returns the order of the factor. */
static int32_t plan_factor(pn_pstep *ps)
{
    const int32_t ma = ps->m_act;
    int32_t best = -1, best_count = 0;
    for (int32_t k = 0; k < ps->k_act; ++k) {
        const int32_t r = ps->act_rule[k], first = ps->act_first[k];
        const int32_t len = ps->rule_start[r + 1] - ps->rule_start[r];
        int32_t count = 0;
        for (int32_t a = first; a < first + len; ++a)
            count += ps->coupled_of[a] >= 0;
        if (count > best_count) {
            best_count = count;
            best = k;
        }
    }
    ps->elim_k = best_count >= ELIM_MIN_ROWS ? best : -1;
    ps->pc_valid = 0;
    int32_t lo = 0, hi = 0;
    if (ps->elim_k >= 0) {
        lo = ps->act_first[ps->elim_k];
        const int32_t r = ps->act_rule[ps->elim_k];
        hi = lo + ps->rule_start[r + 1] - ps->rule_start[r];
    }
    int32_t n = 0;
    for (int32_t a = 0; a < ma; ++a)
        ps->factor_of[a] = ps->coupled_of[a] >= 0 && !(a >= lo && a < hi) ? n++ : -1;
    return n + 1;
}

/* The matrix to factorise (lower triangle, column-major, order n): H on the
 * rows of factor_of and mu, minus the Schur term of the eliminated rule
 * (its diagonal D in cg_diag). */
static void build_reduced(pn_pstep *ps, const double *w, double lambda, int32_t n)
{
    const int32_t ka = ps->k_act, ma = ps->m_act;
    const int32_t *map = ps->factor_of;
    const int32_t mu = n - 1;
    double *H = ps->hess;
    memset(H, 0, (size_t)n * (size_t)n * sizeof *H);
    for (int32_t a = 0; a < ma; ++a)
        if (map[a] >= 0)
            H[map[a] + (size_t)map[a] * n] = lambda / w[ps->act_row[a]];
    for (int64_t idx = 0; idx < ps->support_count; ++idx) {
        const double c = ws_weight(ps, ps->support[idx]);
        const int32_t *col = ws_col(ps, ps->support[idx]);
        for (int32_t x = 0; x < ka; ++x) {
            const int32_t ax = map[col[x]];
            if (ax < 0)
                continue;
            H[ax + (size_t)ax * n] += c;
            H[mu + (size_t)ax * n] -= c;
            for (int32_t z = x + 1; z < ka; ++z) /* columns ascend with the rule */
                if (map[col[z]] >= 0)
                    H[map[col[z]] + (size_t)ax * n] += c;
        }
        H[mu + (size_t)mu * n] += c;
    }
    if (ps->elim_k < 0)
        return;
    /* Schur term: for every eliminated row e, v_e = sum_{j in e} c_j u_j
     * (u_j: +1 on j's R rows, -1 on mu) and S -= v_e v_e' / D_e. The
     * supported groups are bucketed by e (counting sort into cand). */
    const int32_t first = ps->act_first[ps->elim_k];
    const int32_t r = ps->act_rule[ps->elim_k];
    const int32_t len = ps->rule_start[r + 1] - ps->rule_start[r];
    int32_t *start = ps->elim_start;
    memset(start, 0, (size_t)(len + 1) * sizeof *start);
    for (int64_t idx = 0; idx < ps->support_count; ++idx) {
        const int32_t e = elim_row(ps, ws_col(ps, ps->support[idx]));
        if (e >= 0)
            start[e - first + 1]++;
    }
    for (int32_t e = 0; e < len; ++e)
        start[e + 1] += start[e];
    int32_t *fill = ps->elim_idx; /* len entries: next free slot per bucket */
    memcpy(fill, start, (size_t)len * sizeof *fill);
    for (int64_t idx = 0; idx < ps->support_count; ++idx) {
        const int32_t e = elim_row(ps, ws_col(ps, ps->support[idx]));
        if (e >= 0)
            ps->cand[fill[e - first]++] = (int32_t)idx;
    }
    double *v = ps->pre_r; /* dense accumulator over the factor's rows */
    int32_t *touched = ps->elim_idx;
    memset(v, 0, (size_t)n * sizeof *v);
    for (int32_t e = 0; e < len; ++e) {
        if (start[e] == start[e + 1])
            continue;
        int32_t nt = 0;
        for (int32_t b = start[e]; b < start[e + 1]; ++b) {
            const double c = ws_weight(ps, ps->support[ps->cand[b]]);
            const int32_t *col = ws_col(ps, ps->support[ps->cand[b]]);
            for (int32_t x = 0; x < ka; ++x) {
                const int32_t ax = map[col[x]];
                if (ax < 0)
                    continue;
                if (v[ax] == 0.0)
                    touched[nt++] = ax;
                v[ax] += c;
            }
            if (v[mu] == 0.0)
                touched[nt++] = mu;
            v[mu] -= c;
        }
        /* ascending, so that the lower triangle's entries of column ip are
         * those after it (and lie in order in memory) */
        for (int32_t p = 1; p < nt; ++p) { /* insertion sort: nt is small */
            const int32_t x = touched[p];
            int32_t q = p - 1;
            while (q >= 0 && touched[q] > x) {
                touched[q + 1] = touched[q];
                --q;
            }
            touched[q + 1] = x;
        }
        const double inv = 1.0 / ps->cg_diag[ps->coupled_of[first + e]];
        for (int32_t p = 0; p < nt; ++p) {
            const int32_t ip = touched[p];
            const double vp = v[ip] * inv;
            double *column = H + (size_t)ip * n;
            for (int32_t q = p; q < nt; ++q)
                column[touched[q]] -= vp * v[touched[q]];
        }
        for (int32_t p = 0; p < nt; ++p)
            v[touched[p]] = 0.0;
    }
}

/* Exact Hessian times v on the coupled block (matrix-free, O(support)). */
static void coupled_apply(const pn_pstep *ps, const double *w, double lambda, const double *v,
                          double *out)
{
    const int32_t ka = ps->k_act, ma = ps->m_act, nc = ps->n_coupled;
    const int32_t *map = ps->coupled_of, *cmap = ps->cmap;
    for (int32_t a = 0; a < ma; ++a)
        if (map[a] >= 0)
            out[map[a]] = lambda / w[ps->act_row[a]] * v[map[a]];
    out[nc] = 0.0;
    out[nc + 1] = 0.0; /* the zero slot collects the uncoupled rows' terms; v[nc + 1] = 0 */
    if (ps->sup_ok) {
        for (int64_t idx = 0; idx < ps->support_count; ++idx) {
            const int32_t *cc = ps->sup_cols + idx * ka;
            double dot = -v[nc];
            for (int32_t x = 0; x < ka; ++x)
                dot += v[cc[x]];
            dot *= ps->sup_c[idx];
            for (int32_t x = 0; x < ka; ++x)
                out[cc[x]] += dot;
            out[nc] -= dot;
        }
        return;
    }
    for (int64_t idx = 0; idx < ps->support_count; ++idx) {
        const int32_t j = ps->ws[ps->support[idx]];
        const int32_t *col = ps->cols + (int64_t)j * ka;
        double dot = -v[nc];
        for (int32_t x = 0; x < ka; ++x)
            dot += v[cmap[col[x]]];
        dot *= (double)ps->merged_weight[j];
        for (int32_t x = 0; x < ka; ++x)
            out[cmap[col[x]]] += dot;
        out[nc] -= dot;
    }
}

/* Preconditioner: the last Cholesky factor, scattered onto the current
 * coupled rows (rows it does not cover use the exact diagonal), with the
 * eliminated rule's rows (if any) solved exactly by the block formula
 * above from the current diagonal (cg_diag) and coupling. A principal part
 * of an SPD inverse is SPD and the block formula is a congruence of SPD
 * blocks, so this is a valid preconditioner however the support or w moved
 * since the factorisation; right after a factorisation it is the exact
 * inverse. */
/* The rows precondition() visits, from coupled_of, factor_of and elim_k:
 * coupled rows with a factor index (pairs in the first two thirds), then
 * in the last third the coupled rows without one (from the front) and the
 * eliminated rule's coupled rows (from the back). */
static void build_pc_lists(pn_pstep *ps)
{
    const int32_t ma = ps->m_act, m = ps->m;
    int32_t *fi = ps->pc_list, *ff = ps->pc_list + m, *misc = ps->pc_list + 2 * (int64_t)m;
    int32_t lo = 0, hi = 0;
    if (ps->elim_k >= 0) {
        lo = ps->act_first[ps->elim_k];
        const int32_t rule = ps->act_rule[ps->elim_k];
        hi = lo + ps->rule_start[rule + 1] - ps->rule_start[rule];
    }
    int32_t nfa = 0, nda = 0, nea = 0;
    for (int32_t a = 0; a < ma; ++a) {
        const int32_t i = ps->coupled_of[a];
        if (i < 0)
            continue;
        if (a >= lo && a < hi) {
            misc[m - 1 - nea++] = i;
            continue;
        }
        const int32_t f = ps->factor_of[a];
        if (f >= 0) {
            fi[nfa] = i;
            ff[nfa++] = f;
        } else {
            misc[nda++] = i;
        }
    }
    ps->pc_fa = nfa;
    ps->pc_da = nda;
    ps->pc_ea = nea;
    ps->pc_valid = 1;
}

static void precondition(pn_pstep *ps, const double *r, double *z)
{
    const int32_t ka = ps->k_act, nc = ps->n_coupled, mcap = ps->m;
    const int nf = ps->factor_n;
    const int32_t *cmap = ps->cmap;
    double *t = ps->cg_t;
    const double *rr = r;
    if (!ps->pc_valid)
        build_pc_lists(ps);
    const int32_t *fi = ps->pc_list, *ff = ps->pc_list + mcap;
    const int32_t *misc = ps->pc_list + 2 * (int64_t)mcap;
    const int32_t ek = ps->elim_k;
    if (ps->elim_k >= 0) {
        /* r_R - H_RE D^-1 r_E */
        double *m = ps->pre_r;
        memcpy(m, r, (size_t)(nc + 1) * sizeof *m);
        const int32_t zero_slot = nc + 1;
        for (int64_t idx = 0; ps->sup_ok && idx < ps->support_count; ++idx) {
            const int32_t *cc = ps->sup_cols + idx * ka;
            const int32_t ie = cc[ek];
            if (ie == zero_slot)
                continue;
            const double coef = ps->sup_c[idx] * r[ie] / ps->cg_diag[ie];
            for (int32_t x = 0; x < ek; ++x)
                m[cc[x]] -= coef;
            for (int32_t x = ek + 1; x < ka; ++x)
                m[cc[x]] -= coef;
            m[nc] += coef;
        }
        for (int64_t idx = 0; !ps->sup_ok && idx < ps->support_count; ++idx) {
            const int32_t j = ps->ws[ps->support[idx]];
            const int32_t *col = ps->cols + (int64_t)j * ka;
            const int32_t e = elim_row(ps, col);
            if (e < 0)
                continue;
            const int32_t ie = ps->coupled_of[e];
            const double coef = (double)ps->merged_weight[j] * r[ie] / ps->cg_diag[ie];
            /* uncoupled rows land in the zero slot nc + 1 (unused here) */
            for (int32_t x = 0; x < ek; ++x)
                m[cmap[col[x]]] -= coef;
            for (int32_t x = ek + 1; x < ka; ++x)
                m[cmap[col[x]]] -= coef;
            m[nc] += coef;
        }
        rr = m;
    }
    memset(t, 0, (size_t)nf * sizeof *t);
    for (int32_t k = 0; k < ps->pc_fa; ++k)
        t[ff[k]] = rr[fi[k]];
    for (int32_t k = 0; k < ps->pc_da; ++k) {
        const int32_t i = misc[k];
        z[i] = rr[i] / ps->cg_diag[i];
    }
    t[nf - 1] = rr[nc];
    cholesky_solve(ps->hess, nf, t);
    for (int32_t k = 0; k < ps->pc_fa; ++k)
        z[fi[k]] = t[ff[k]];
    z[nc] = t[nf - 1];
    if (ps->elim_k < 0)
        return;
    /* x_E = D^-1 (r_E - H_ER x_R) */
    for (int32_t k = 0; k < ps->pc_ea; ++k) {
        const int32_t i = misc[mcap - 1 - k];
        z[i] = r[i];
    }
    z[nc + 1] = 0.0; /* the zero slot */
    for (int64_t idx = 0; ps->sup_ok && idx < ps->support_count; ++idx) {
        const int32_t *cc = ps->sup_cols + idx * ka;
        const int32_t ie = cc[ek];
        if (ie == nc + 1)
            continue;
        double dot = -z[nc];
        for (int32_t x = 0; x < ek; ++x)
            dot += z[cc[x]];
        for (int32_t x = ek + 1; x < ka; ++x)
            dot += z[cc[x]];
        z[ie] -= ps->sup_c[idx] * dot;
    }
    for (int64_t idx = 0; !ps->sup_ok && idx < ps->support_count; ++idx) {
        const int32_t j = ps->ws[ps->support[idx]];
        const int32_t *col = ps->cols + (int64_t)j * ka;
        const int32_t e = elim_row(ps, col);
        if (e < 0)
            continue;
        double dot = -z[nc];
        for (int32_t x = 0; x < ek; ++x)
            dot += z[cmap[col[x]]];
        for (int32_t x = ek + 1; x < ka; ++x)
            dot += z[cmap[col[x]]];
        z[ps->coupled_of[e]] -= (double)ps->merged_weight[j] * dot;
    }
    for (int32_t k = 0; k < ps->pc_ea; ++k) {
        const int32_t i = misc[mcap - 1 - k];
        z[i] /= ps->cg_diag[i];
    }
}

/* Conjugate gradients on the coupled block, preconditioned by the last
 * factor; writes the solution into `compact`. Any CG iterate from 0 is a
 * descent direction, so stopping early is safe; returns 0 when the
 * residual fell below `forcing` (relative) within the budget. */
static int pcg_direction(pn_pstep *ps, const double *w, double lambda, double forcing, int budget)
{
    const int32_t ma = ps->m_act, nc = ps->n_coupled, n = nc + 1;
    double *x = ps->compact, *r = ps->cg_r, *z = ps->cg_z, *p = ps->cg_p, *hp = ps->cg_hp;
    coupled_diagonal(ps, w, lambda); /* the preconditioner's diagonal parts */
    double r0 = 0.0;
    for (int32_t a = 0; a < ma; ++a)
        if (ps->coupled_of[a] >= 0)
            r[ps->coupled_of[a]] = -ps->grad[a];
    r[nc] = -ps->grad[ma];
    for (int32_t i = 0; i < n; ++i) {
        x[i] = 0.0;
        r0 += r[i] * r[i];
    }
    precondition(ps, r, z);
    double rz = 0.0;
    for (int32_t i = 0; i < n; ++i) {
        p[i] = z[i];
        rz += r[i] * z[i];
    }
    p[n] = 0.0; /* the zero slot read by coupled_apply */
    const double target = forcing * forcing * r0;
    for (int it = 0; it < budget; ++it) {
        coupled_apply(ps, w, lambda, p, hp);
        double php = 0.0;
        for (int32_t i = 0; i < n; ++i)
            php += p[i] * hp[i];
        if (!(php > 0.0)) {
            ps->failure = "conjugate gradients met a direction of no positive curvature";
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
        precondition(ps, r, z);
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

/* Groups that entered or left the support since the last factorisation,
 * counted up to limit + 1 (limit + 1 when the working set was reordered or
 * w changed since: ps->factor_ws < 0). */
static int64_t support_changes(const pn_pstep *ps, int64_t limit)
{
    if (ps->factor_ws < 0)
        return limit + 1;
    int64_t changes = 0;
    for (int64_t p = 0; p < ps->ws_count && changes <= limit; ++p)
        changes += (ps->t[p] > 0.0) != (p < ps->factor_ws && ps->in_factor[p]);
    return changes;
}

/* Records the support the new factorisation was built on. */
static void remember_support(pn_pstep *ps)
{
    for (int64_t p = 0; p < ps->ws_count; ++p)
        ps->in_factor[p] = ps->t[p] > 0.0;
    ps->factor_ws = ps->ws_count;
}

/* Newton direction: passive rows stay, decoupled rows are solved on their
 * own; the coupled block by conjugate gradients preconditioned with the
 * last factorisation when that factor is large and CG converges quickly,
 * otherwise by a fresh
 * Cholesky factorisation (shifting the diagonal if the block is not
 * numerically positive definite), which becomes the next preconditioner. */
static int newton_direction(pn_pstep *ps, const double *w, double lambda, double forcing)
{
    const int32_t ma = ps->m_act, nc = ps->n_coupled;
    for (int32_t a = 0; a < ma; ++a)
        if (ps->coupled_of[a] < 0)
            ps->dir[a] = ps->passive[a] ? 0.0 : -ps->grad[a] * w[ps->act_row[a]] / lambda;
    double *x = ps->compact;
    /* CG when the factor is large (the last factor's order stands in for
     * the next one's), or when the Hessian, which depends only on w and the
     * support, differs from the factorised one by the few groups that
     * entered or left the support: then the old factor is exact up to a
     * low-rank change and CG needs about one iteration per group */
    int solved = 0;
    if (ps->factor_n > 0 && !ps->pcg_skip) {
        const int64_t changes = support_changes(ps, SMALL_CHANGE);
        const int large = ps->factor_n >= PCG_MIN_ORDER;
        if (large || changes <= SMALL_CHANGE) {
            const int budget = large ? PCG_BUDGET : (int)changes + 2;
            solved = pcg_direction(ps, w, lambda, forcing, budget) == 0;
            /* while the support moves a lot (damped steps) the old factor
             * preconditions poorly: factorise until a full step is taken */
            ps->pcg_skip = !solved;
        }
    }
    double shift = 0.0;
    if (!solved) {
        coupled_diagonal(ps, w, lambda);
        const int nf = (int)plan_factor(ps);
        for (int attempt = 0; !solved && attempt < 12; ++attempt) {
            build_reduced(ps, w, lambda, nf);
            if (shift > 0.0)
                for (int32_t a = 0; a < nf; ++a)
                    ps->hess[a + (size_t)a * nf] += shift;
            const int info = pn_pstep_factorise(ps, ps->hess, nf);
            if (info < 0) {
                ps->failure = "interrupted";
                return -1;
            }
            if (info != 0) {
                shift = shift > 0.0 ? 10.0 * shift : 1e-12;
                continue;
            }
            ps->factorisations++;
            ps->factor_n = nf;
            remember_support(ps);
            for (int32_t a = 0; a < ma; ++a)
                if (ps->coupled_of[a] >= 0)
                    ps->cg_r[ps->coupled_of[a]] = -ps->grad[a];
            ps->cg_r[nc] = -ps->grad[ma];
            precondition(ps, ps->cg_r, x);
            solved = 1;
        }
        if (!solved)
            ps->factor_n = 0;
    }
    if (!solved) {
        ps->failure = "the Newton system could not be factorised (not positive definite after "
                      "12 diagonal shifts)";
        return -1;
    }
    for (int32_t a = 0; a < ma; ++a)
        if (ps->coupled_of[a] >= 0)
            ps->dir[a] = x[ps->coupled_of[a]];
    ps->dir[ma] = x[nc];
    return 0;
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

int pn_pstep_newton(pn_pstep *ps, const double *b, const double *w, double lambda, double tol,
                    int max_newton)
{
    pn_pstep_sync_ws(ps);
    const int32_t ma = ps->m_act;
    double *nu = ps->nu_act, *grad = ps->grad, *dir = ps->dir;
    gauge_fix(ps, w, nu, &ps->mu);
    if (!ps->keep_mu)
        pn_pstep_fit_mu(ps, nu);
    ps->keep_mu = 0;
    ps->pcg_skip = 0;
    double F = dual_eval(ps, b, w, lambda, nu, ps->mu, grad);
    for (int it = 0; it < max_newton; ++it) {
        double gmax = 0.0;
        for (int32_t a = 0; a <= ma; ++a)
            gmax = fmax(gmax, fabs(grad[a]));
        if (gmax <= tol)
            return 0;
        if (ps->poll && ps->poll(ps->poll_user)) {
            ps->failure = "interrupted";
            return -1;
        }
        prepare_newton(ps);
        if (ps->support_count == 0) {
            ps->failure = "the support of q became empty";
            return -1;
        }
        if (newton_direction(ps, w, lambda, fmin(1e-2, gmax)) != 0)
            return -1;
        ps->newton_iterations++;
        double slope = 0.0;
        for (int32_t a = 0; a <= ma; ++a)
            slope += grad[a] * dir[a];
        if (!(slope < 0.0)) { /* no descent left: rounding level, or worse */
            if (gmax <= 1e3 * tol)
                return 0;
            ps->failure = "Newton found no descent direction";
            return -1;
        }
        /* a full step moves the support in one jump: take it whenever it
         * lowers F (evaluated with the gradient at the gauge-fixed point,
         * which is then the next iterate as it is); otherwise minimise
         * along the line exactly */
        double *nu_try = ps->nu_try, mu_try = ps->mu + dir[ma];
        for (int32_t a = 0; a < ma; ++a)
            nu_try[a] = nu[a] + dir[a];
        gauge_fix(ps, w, nu_try, &mu_try);
        const double F_full = dual_eval(ps, b, w, lambda, nu_try, mu_try, grad);
        if (F_full < F) {
            ps->pcg_skip = 0;
            memcpy(nu, nu_try, (size_t)ma * sizeof *nu);
            ps->mu = mu_try;
            F = F_full;
            continue;
        }
        dual_eval(ps, b, w, lambda, nu, ps->mu, NULL); /* restore t */
        const double step = line_search(ps, b, w, lambda, nu, dir);
        for (int32_t a = 0; a < ma; ++a)
            nu[a] += step * dir[a];
        ps->mu += step * dir[ma];
        gauge_fix(ps, w, nu, &ps->mu);
        F = dual_eval(ps, b, w, lambda, nu, ps->mu, grad);
    }
    return 1;
}
