/* The p-step's Newton system: the generalised Hessian of its dual F
 * (pstep.h) over the active rows a = 0 .. rows - 1 and the multiplier mu
 * (index rows),
 *
 *   H = diag(lambda / w_a) + sum over the supported groups j of c_j u_j u_j',
 *
 * u_j = +1 on group j's rows (one in every kept rule) and -1 on mu.
 * Passive rows (w = 0) stay fixed; rows that no supported group touches
 * decouple and are solved on their own; the coupled block is factorised
 * by Cholesky after eliminating the diagonal block of the rule with the
 * most coupled rows (only its Schur complement is factorised), or solved
 * by conjugate gradients preconditioned with the last factor.
 *
 * In the manner of OSQP's and SCS's linear-system interfaces:
 * pn_linsys_create() allocates everything once for a problem's sizes,
 * pn_linsys_update() takes the matrix of one Newton iteration,
 * pn_linsys_solve() solves with it (factorising or running preconditioned
 * CG) and allocates nothing, pn_linsys_free() releases it. The factor
 * outlives a solve: it preconditions the next ones. Internal to the
 * engine. */
#ifndef PN_LINSYS_H
#define PN_LINSYS_H

#include <stdint.h>

#include "cholesky.h"
#include "outcome.h"
#include "parnassus/memory.h"

/* The matrix H of one Newton iteration, as views of the p-step's arrays
 * (nothing is copied until pn_linsys_update). */
typedef struct pn_linsys_matrix {
    int32_t rows;                 /* active rows; mu is index `rows` */
    int32_t k;                    /* rows per group: one per kept rule */
    const int32_t *block_first;   /* k: first row of each kept rule; a rule's rows
                                     run to the next rule's first (the last to rows) */
    const unsigned char *passive; /* rows: w = 0, the solution holds 0 there */
    const double *w;              /* weights by global row */
    const int32_t *global_row;    /* rows: the global row of each active row */
    double lambda;
    /* The supported groups, by working-set position: the rows and weight
     * c_j of position p come from the copy when p < copied, otherwise
     * from the group table through group_of (the same values). */
    int64_t count;
    const int64_t *position; /* count */
    int64_t copied;
    const int32_t *copy_rows;    /* copied x k */
    const double *copy_weight;   /* copied */
    const int32_t *group_of;     /* position -> group */
    const int32_t *group_rows;   /* group -> its k rows */
    const int32_t *group_weight; /* group -> c_j */
    /* every working-set position's t (t > 0: supported), to tell how far
     * the support moved since the last factorisation */
    int64_t positions;
    const double *t;
    int32_t *scratch; /* count entries the factorisation may overwrite */
    pn_poll_fn poll;  /* asked between blocks of a large factorisation; NULL: never */
    void *poll_user;
} pn_linsys_matrix;

/* Rows and weight of the supported group at working-set position p. */
static inline const int32_t *pn_linsys_group(const pn_linsys_matrix *A, int64_t p, double *c)
{
    if (p < A->copied) {
        *c = A->copy_weight[p];
        return A->copy_rows + p * A->k;
    }
    const int32_t j = A->group_of[p];
    *c = (double)A->group_weight[j];
    return A->group_rows + (int64_t)j * A->k;
}

typedef struct pn_linsys pn_linsys;

/* Bytes pn_linsys_create() allocates for m rows, K rules and G groups, the
 * dense matrix (pn_linsys_matrix_bytes) included, counted the same way. */
int64_t pn_linsys_bytes(int32_t m, int32_t K, int64_t G);

/* The dense matrix of order m + 1 that holds the factor: what makes rules
 * with many cells expensive. */
static inline int64_t pn_linsys_matrix_bytes(int64_t m)
{
    return pn_bytes_mul(pn_bytes_mul(m + 1, m + 1), (int64_t)sizeof(double));
}

/* Allocates for at most m active rows, K kept rules and G groups (also
 * the largest working set). NULL when out of memory. */
pn_linsys *pn_linsys_create(int32_t m, int32_t K, int64_t G);
void pn_linsys_free(pn_linsys *ls);

/* Forgets the factor (the active rows were renumbered). */
void pn_linsys_forget_factor(pn_linsys *ls);

/* The working set was reordered or w changed since the factorisation: the
 * factor may still precondition, but no longer counts as nearly exact. */
void pn_linsys_forget_support(pn_linsys *ls);

/* The support has settled (a new Newton run, or a full step): after a
 * failed CG attempt the factor may precondition again. */
void pn_linsys_trust_factor(pn_linsys *ls);

/* Takes the matrix of a Newton iteration: finds its coupled rows and copies
 * the supported groups' rows for the CG loops. A must stay unchanged until
 * the solves with it are done. */
void pn_linsys_update(pn_linsys *ls, const pn_linsys_matrix *A);

/* The Newton direction d with H d = -g (rows + 1 entries each). The
 * coupled block by CG preconditioned with the last factor, to relative
 * residual `forcing`, when that factor is large or the support moved by
 * a few groups since it was computed; otherwise (or when CG does not
 * converge) by a fresh factorisation, shifting the diagonal if it is not
 * numerically positive definite. Returns PN_OUTCOME_OK,
 * PN_OUTCOME_P_LINSYS (see pn_linsys_failure) or PN_OUTCOME_INTERRUPTED
 * (A->poll asked to stop). */
pn_outcome pn_linsys_solve(pn_linsys *ls, const pn_linsys_matrix *A, const double *g,
                           double forcing, double *d);

/* Why the last solve failed (a static text). */
const char *pn_linsys_failure(const pn_linsys *ls);

/* Factorisations since creation (for tests and benches). */
int pn_linsys_factorisations(const pn_linsys *ls);

#endif
