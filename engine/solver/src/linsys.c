/* The p-step's Newton system (linsys.h): setup, the coupled structure, the
 * factorisation after block elimination, and the choice between it and
 * preconditioned conjugate gradients (linsys_pcg.c). */
#include <stdlib.h>
#include <string.h>

#include "linsys_internal.h"

/* Conjugate-gradient iterations before a fresh factorisation, and the
 * factor order (after the block elimination) below which factorising is
 * cheap enough to do every time: each preconditioned iteration streams the
 * dense factor twice through memory-bound triangular solves, so around ten
 * of them (a typical solve) cost as much as a factorisation of a few
 * hundred rows, which also gives the exact Newton direction. */
enum { PCG_BUDGET = 20, PCG_MIN_ORDER = 600 };

/* Support changes since the factorisation below which the old factor is
 * tried as a preconditioner at any order (see pn_linsys_solve). */
enum { SMALL_CHANGE = 8 };

/* Coupled rows a rule needs before its block is eliminated. */
enum { ELIM_MIN_ROWS = 16 };

/* Fresh factorisations tried, each with a larger diagonal shift. */
enum { MAX_SHIFTS = 12 };

/* Rows of the supported groups' contiguous copy: 64 per active row, which
 * holds music's supports. */
static int64_t support_copy_cap(int64_t m, int32_t K, int64_t G)
{
    const int64_t gk = pn_bytes_mul(G, K);
    return 64 * m < gk ? 64 * m : gk;
}

/* What pn_linsys_create() below allocates, counted the same way (keep the
 * two together): per row, the dense matrix, the support's copy and a flag
 * per working-set position. */
int64_t pn_linsys_bytes(int32_t m, int32_t K, int64_t G)
{
    const int64_t mm = m;
    /* coupled_of, compact, cmap, pc_list, factor_of, elim_start, elim_idx,
     * pre_r, the six CG vectors */
    const int64_t per_row = 4 + 8 + 4 + 12 + 4 + 4 + 4 + 8 + 48;
    int64_t bytes = pn_bytes_mul(mm, per_row);
    bytes = pn_bytes_add(bytes, pn_linsys_matrix_bytes(mm));
    bytes = pn_bytes_add(bytes, pn_bytes_mul(support_copy_cap(mm, K, G), 4 + 8));
    return pn_bytes_add(bytes, G); /* in_factor */
}

pn_linsys *pn_linsys_create(int32_t m, int32_t K, int64_t G)
{
    pn_linsys *ls = calloc(1, sizeof *ls);
    if (!ls)
        return NULL;
    const size_t mm = (size_t)m;
    ls->m = m;
    ls->factor_ws = -1;
    ls->coupled_of = malloc(mm * sizeof(int32_t));
    ls->compact = malloc((mm + 2) * sizeof(double));
    ls->cmap = malloc(mm * sizeof(int32_t));
    ls->sup_cap = support_copy_cap(m, K, G);
    ls->sup_cols = malloc((size_t)ls->sup_cap * sizeof(int32_t) + 1);
    ls->sup_c = malloc((size_t)ls->sup_cap * sizeof(double) + 1);
    ls->pc_list = malloc(3 * mm * sizeof(int32_t));
    ls->hess = malloc((mm + 1) * (mm + 1) * sizeof(double));
    ls->factor_of = malloc(mm * sizeof(int32_t));
    ls->elim_start = malloc((mm + 2) * sizeof(int32_t));
    ls->elim_idx = malloc((mm + 2) * sizeof(int32_t));
    ls->pre_r = malloc((mm + 2) * sizeof(double));
    ls->in_factor = malloc((size_t)G);
    /* m + 2 each: the coupled rows, mu and a zero slot for passive rows */
    ls->cg_r = malloc(6 * (mm + 2) * sizeof(double));
    if (!ls->coupled_of || !ls->compact || !ls->cmap || !ls->sup_cols || !ls->sup_c ||
        !ls->pc_list || !ls->hess || !ls->factor_of || !ls->elim_start || !ls->elim_idx ||
        !ls->pre_r || !ls->in_factor || !ls->cg_r) {
        pn_linsys_free(ls);
        return NULL;
    }
    ls->cg_z = ls->cg_r + (mm + 2);
    ls->cg_p = ls->cg_z + (mm + 2);
    ls->cg_hp = ls->cg_p + (mm + 2);
    ls->cg_diag = ls->cg_hp + (mm + 2);
    ls->cg_t = ls->cg_diag + (mm + 2);
    return ls;
}

void pn_linsys_free(pn_linsys *ls)
{
    if (!ls)
        return;
    void *owned[] = {ls->coupled_of, ls->compact,   ls->cmap,      ls->sup_cols,   ls->sup_c,
                     ls->pc_list,    ls->hess,      ls->factor_of, ls->elim_start, ls->elim_idx,
                     ls->pre_r,      ls->in_factor, ls->cg_r};
    for (size_t i = 0; i < sizeof owned / sizeof owned[0]; ++i)
        free(owned[i]);
    free(ls);
}

void pn_linsys_forget_factor(pn_linsys *ls)
{
    ls->factor_n = 0;
}

void pn_linsys_forget_support(pn_linsys *ls)
{
    ls->factor_ws = -1;
}

void pn_linsys_trust_factor(pn_linsys *ls)
{
    ls->pcg_skip = 0;
}

const char *pn_linsys_failure(const pn_linsys *ls)
{
    return ls->failure;
}

int pn_linsys_factorisations(const pn_linsys *ls)
{
    return ls->factorisations;
}

void pn_linsys_update(pn_linsys *ls, const pn_linsys_matrix *A)
{
    const int32_t ka = A->k, ma = A->rows;
    for (int32_t a = 0; a < ma; ++a)
        ls->coupled_of[a] = -1;
    for (int64_t idx = 0; idx < A->count; ++idx) {
        double c;
        const int32_t *col = pn_linsys_group(A, A->position[idx], &c);
        for (int32_t a = 0; a < ka; ++a)
            if (!A->passive[col[a]])
                ls->coupled_of[col[a]] = 0;
    }
    ls->n_coupled = 0;
    for (int32_t a = 0; a < ma; ++a)
        if (ls->coupled_of[a] == 0)
            ls->coupled_of[a] = ls->n_coupled++;
    /* the same with uncoupled rows sent to a slot after mu that holds 0 in
     * the vectors the support loops read (no branch per row) */
    const int32_t zero_slot = ls->n_coupled + 1;
    for (int32_t a = 0; a < ma; ++a)
        ls->cmap[a] = ls->coupled_of[a] >= 0 ? ls->coupled_of[a] : zero_slot;
    ls->pc_valid = 0;
    /* a contiguous copy of the support's rows for the CG loops */
    ls->sup_ok = A->count * ka <= ls->sup_cap;
    if (ls->sup_ok)
        for (int64_t idx = 0; idx < A->count; ++idx) {
            const int32_t *col = pn_linsys_group(A, A->position[idx], &ls->sup_c[idx]);
            int32_t *out = ls->sup_cols + idx * ka;
            for (int32_t a = 0; a < ka; ++a)
                out[a] = ls->cmap[col[a]];
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

/* Chooses the eliminated rule (the one with the most coupled rows, if it
 * has enough to be worth it) and numbers the remaining coupled rows and mu
 * for the factor (factor_of; mu last). Returns the order of the factor. */
static int32_t plan_factor(pn_linsys *ls, const pn_linsys_matrix *A)
{
    const int32_t ma = A->rows;
    int32_t best = -1, best_count = 0;
    for (int32_t k = 0; k < A->k; ++k) {
        const int32_t end = pn_linsys_block_end(A, k);
        int32_t count = 0;
        for (int32_t a = A->block_first[k]; a < end; ++a)
            count += ls->coupled_of[a] >= 0;
        if (count > best_count) {
            best_count = count;
            best = k;
        }
    }
    ls->elim_k = best_count >= ELIM_MIN_ROWS ? best : -1;
    ls->pc_valid = 0;
    int32_t lo = 0, hi = 0;
    if (ls->elim_k >= 0) {
        lo = A->block_first[ls->elim_k];
        hi = pn_linsys_block_end(A, ls->elim_k);
    }
    int32_t n = 0;
    for (int32_t a = 0; a < ma; ++a)
        ls->factor_of[a] = ls->coupled_of[a] >= 0 && !(a >= lo && a < hi) ? n++ : -1;
    return n + 1;
}

/* H on the rows of factor_of and mu (lower triangle, column-major, order
 * n), before the Schur term. */
static void build_block(pn_linsys *ls, const pn_linsys_matrix *A, int32_t n)
{
    const int32_t ka = A->k, ma = A->rows;
    const int32_t *map = ls->factor_of;
    const int32_t mu = n - 1;
    double *H = ls->hess;
    memset(H, 0, (size_t)n * (size_t)n * sizeof *H);
    for (int32_t a = 0; a < ma; ++a)
        if (map[a] >= 0)
            H[map[a] + (size_t)map[a] * n] = A->lambda / A->w[A->global_row[a]];
    for (int64_t idx = 0; idx < A->count; ++idx) {
        double c;
        const int32_t *col = pn_linsys_group(A, A->position[idx], &c);
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
}

/* The supported groups bucketed by their coupled row in the eliminated
 * rule (counting sort): bucket e holds A->scratch[start[e] .. start[e + 1]),
 * indices into the support. */
static void bucket_by_eliminated_row(pn_linsys *ls, const pn_linsys_matrix *A, int32_t first,
                                     int32_t len)
{
    int32_t *start = ls->elim_start;
    memset(start, 0, (size_t)(len + 1) * sizeof *start);
    for (int64_t idx = 0; idx < A->count; ++idx) {
        double c;
        const int32_t e = pn_linsys_elim_row(ls, pn_linsys_group(A, A->position[idx], &c));
        if (e >= 0)
            start[e - first + 1]++;
    }
    for (int32_t e = 0; e < len; ++e)
        start[e + 1] += start[e];
    int32_t *fill = ls->elim_idx; /* len entries: next free slot per bucket */
    memcpy(fill, start, (size_t)len * sizeof *fill);
    for (int64_t idx = 0; idx < A->count; ++idx) {
        double c;
        const int32_t e = pn_linsys_elim_row(ls, pn_linsys_group(A, A->position[idx], &c));
        if (e >= 0)
            A->scratch[fill[e - first]++] = (int32_t)idx;
    }
}

/* Sorts the nt indices ascending (insertion sort: nt is small). */
static void sort_small(int32_t *touched, int32_t nt)
{
    for (int32_t p = 1; p < nt; ++p) {
        const int32_t x = touched[p];
        int32_t q = p - 1;
        while (q >= 0 && touched[q] > x) {
            touched[q + 1] = touched[q];
            --q;
        }
        touched[q + 1] = x;
    }
}

/* Schur term of the eliminated rule (its diagonal D in cg_diag): for
 * every eliminated row e, v_e = sum_{j in e} c_j u_j (u_j: +1 on j's R
 * rows, -1 on mu) and S -= v_e v_e' / D_e. */
static void subtract_schur_term(pn_linsys *ls, const pn_linsys_matrix *A, int32_t n)
{
    const int32_t ka = A->k;
    const int32_t *map = ls->factor_of;
    const int32_t mu = n - 1;
    double *H = ls->hess;
    const int32_t first = A->block_first[ls->elim_k];
    const int32_t len = pn_linsys_block_end(A, ls->elim_k) - first;
    bucket_by_eliminated_row(ls, A, first, len);
    const int32_t *start = ls->elim_start;
    double *v = ls->pre_r; /* dense accumulator over the factor's rows */
    int32_t *touched = ls->elim_idx;
    memset(v, 0, (size_t)n * sizeof *v);
    for (int32_t e = 0; e < len; ++e) {
        if (start[e] == start[e + 1])
            continue;
        int32_t nt = 0;
        for (int32_t b = start[e]; b < start[e + 1]; ++b) {
            double c;
            const int32_t *col = pn_linsys_group(A, A->position[A->scratch[b]], &c);
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
        sort_small(touched, nt);
        const double inv = 1.0 / ls->cg_diag[ls->coupled_of[first + e]];
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

/* Groups that entered or left the support since the last factorisation,
 * counted up to limit + 1 (limit + 1 when the working set was reordered or
 * w changed since: factor_ws < 0). */
static int64_t support_changes(const pn_linsys *ls, const pn_linsys_matrix *A, int64_t limit)
{
    if (ls->factor_ws < 0)
        return limit + 1;
    int64_t changes = 0;
    for (int64_t p = 0; p < A->positions && changes <= limit; ++p)
        changes += (A->t[p] > 0.0) != (p < ls->factor_ws && ls->in_factor[p]);
    return changes;
}

/* Records the support the new factorisation was built on. */
static void remember_support(pn_linsys *ls, const pn_linsys_matrix *A)
{
    for (int64_t p = 0; p < A->positions; ++p)
        ls->in_factor[p] = A->t[p] > 0.0;
    ls->factor_ws = A->positions;
}

/* CG when the factor is large (the last factor's order stands in for the
 * next one's), or when the Hessian, which depends only on w and the
 * support, differs from the factorised one by the few groups that entered
 * or left the support: then the old factor is exact up to a low-rank
 * change and CG needs about one iteration per group. Returns 1 when CG
 * solved the coupled block into ls->compact. */
static int try_pcg(pn_linsys *ls, const pn_linsys_matrix *A, const double *g, double forcing)
{
    if (ls->factor_n <= 0 || ls->pcg_skip)
        return 0;
    const int64_t changes = support_changes(ls, A, SMALL_CHANGE);
    const int large = ls->factor_n >= PCG_MIN_ORDER;
    if (!large && changes > SMALL_CHANGE)
        return 0;
    const int budget = large ? PCG_BUDGET : (int)changes + 2;
    const int solved = pn_linsys_pcg(ls, A, g, forcing, budget) == 0;
    /* while the support moves a lot (damped steps) the old factor
     * preconditions poorly: factorise until a full step is taken */
    ls->pcg_skip = !solved;
    return solved;
}

/* A fresh Cholesky factorisation of the coupled block after the block
 * elimination, shifting the diagonal if it is not numerically positive
 * definite; it solves the coupled block into ls->compact and becomes the
 * next preconditioner. */
static pn_outcome factorise_and_solve(pn_linsys *ls, const pn_linsys_matrix *A, const double *g)
{
    const int32_t ma = A->rows, nc = ls->n_coupled;
    pn_linsys_coupled_diagonal(ls, A);
    const int nf = (int)plan_factor(ls, A);
    double shift = 0.0;
    for (int attempt = 0; attempt < MAX_SHIFTS; ++attempt) {
        build_block(ls, A, nf);
        if (ls->elim_k >= 0)
            subtract_schur_term(ls, A, nf);
        if (shift > 0.0)
            for (int32_t a = 0; a < nf; ++a)
                ls->hess[a + (size_t)a * nf] += shift;
        const int info = pn_cholesky_factor(ls->hess, nf, A->poll, A->poll_user);
        if (info < 0) {
            ls->failure = "interrupted";
            return PN_OUTCOME_INTERRUPTED;
        }
        if (info != 0) {
            shift = shift > 0.0 ? 10.0 * shift : 1e-12;
            continue;
        }
        ls->factorisations++;
        ls->factor_n = nf;
        remember_support(ls, A);
        for (int32_t a = 0; a < ma; ++a)
            if (ls->coupled_of[a] >= 0)
                ls->cg_r[ls->coupled_of[a]] = -g[a];
        ls->cg_r[nc] = -g[ma];
        pn_linsys_precondition(ls, A, ls->cg_r, ls->compact);
        return PN_OUTCOME_OK;
    }
    ls->factor_n = 0;
    ls->failure = "the Newton system could not be factorised (not positive definite after "
                  "12 diagonal shifts)";
    return PN_OUTCOME_P_LINSYS;
}

/* Passive rows stay, decoupled rows are solved on their own, the coupled
 * block by try_pcg or else factorise_and_solve. */
pn_outcome pn_linsys_solve(pn_linsys *ls, const pn_linsys_matrix *A, const double *g,
                           double forcing, double *d)
{
    const int32_t ma = A->rows, nc = ls->n_coupled;
    for (int32_t a = 0; a < ma; ++a)
        if (ls->coupled_of[a] < 0)
            d[a] = A->passive[a] ? 0.0 : -g[a] * A->w[A->global_row[a]] / A->lambda;
    if (!try_pcg(ls, A, g, forcing)) {
        const pn_outcome rc = factorise_and_solve(ls, A, g);
        if (rc != PN_OUTCOME_OK)
            return rc;
    }
    const double *x = ls->compact;
    for (int32_t a = 0; a < ma; ++a)
        if (ls->coupled_of[a] >= 0)
            d[a] = x[ls->coupled_of[a]];
    d[ma] = x[nc];
    return PN_OUTCOME_OK;
}
