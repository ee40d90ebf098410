/* The linear system's state, shared by its two files: linsys.c (setup,
 * structure, factorisation with block elimination, the choice of method)
 * and linsys_pcg.c (the matrix-free product, the preconditioner and
 * conjugate gradients). */
#ifndef PN_LINSYS_INTERNAL_H
#define PN_LINSYS_INTERNAL_H

#include "linsys.h"

struct pn_linsys {
    int32_t m; /* capacity: active rows */
    /* the coupled rows of the current matrix */
    int32_t *coupled_of; /* m: coupled index, or -1 */
    int32_t n_coupled;
    int32_t *cmap; /* m: coupled index, or n_coupled + 1 (a zero slot) */
    /* the supported groups' rows as cmap indices (count x k, contiguous)
     * and weights c_j, when they fit (sup_ok) */
    int32_t *sup_cols;
    double *sup_c;
    int64_t sup_cap;
    int sup_ok;
    /* the factor */
    double *hess;        /* (m + 1)^2, column-major; after a factorisation, the Cholesky factor */
    int32_t factor_n;    /* order of that factor, 0 = none */
    int32_t elim_k;      /* kept rule eliminated in that factor, -1 = none */
    int32_t *factor_of;  /* m: active row -> factor index or -1 */
    int32_t *elim_start; /* m + 1: Schur build buckets */
    int32_t *elim_idx;   /* m + 1: scratch */
    double *pre_r;       /* m + 1: scratch */
    int pcg_skip;        /* the last PCG attempt failed: factorise until a full step */
    unsigned char *in_factor; /* G: working-set position supported in the factor */
    int64_t factor_ws;        /* positions in_factor covers; -1: reordered or w changed since */
    /* conjugate gradients: m + 2 each (the coupled rows, mu, a zero slot) */
    double *compact; /* the coupled block's solution */
    double *cg_r, *cg_z, *cg_p, *cg_hp, *cg_diag, *cg_t;
    int32_t *pc_list; /* 3 m: the preconditioner's row lists (see build_pc_lists) */
    int32_t pc_fa, pc_da, pc_ea;
    int pc_valid;
    int factorisations;
    const char *failure;
};

/* The last row (exclusive) of kept rule k's block. */
static inline int32_t pn_linsys_block_end(const pn_linsys_matrix *A, int32_t k)
{
    return k + 1 < A->k ? A->block_first[k + 1] : A->rows;
}

/* Active index of a group's row in the eliminated rule if that row is
 * coupled, else -1. */
static inline int32_t pn_linsys_elim_row(const pn_linsys *ls, const int32_t *col)
{
    if (ls->elim_k < 0)
        return -1;
    const int32_t e = col[ls->elim_k];
    return ls->coupled_of[e] >= 0 ? e : -1;
}

/* Exact diagonal of the coupled block into cg_diag (coupled index space). */
void pn_linsys_coupled_diagonal(pn_linsys *ls, const pn_linsys_matrix *A);

/* The preconditioner: z = M^-1 r over the coupled block (n_coupled + 1
 * entries; z also gets the zero slot). */
void pn_linsys_precondition(pn_linsys *ls, const pn_linsys_matrix *A, const double *r, double *z);

/* Conjugate gradients on the coupled block, preconditioned by the last
 * factor; writes the solution into ls->compact. Returns 0 when the
 * residual fell below `forcing` (relative) within the budget, -1
 * otherwise. */
int pn_linsys_pcg(pn_linsys *ls, const pn_linsys_matrix *A, const double *g, double forcing,
                  int budget);

#endif
