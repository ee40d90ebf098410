/* Dense Cholesky factorisation, polled in block columns for large orders
 * (cholesky.h). */
#include "cholesky.h"

#include <cblas.h>
#include <stddef.h>

/* LAPACK's Cholesky factorisation from OpenBLAS (32-bit integers). */
void dpotrf_(const char *uplo, const int *n, double *a, const int *lda, int *info);

/* Two BLAS-2 triangular solves: for one right-hand side they avoid the
 * packing of the blocked (BLAS-3) path. */
void pn_cholesky_solve(const double *L, int n, double *x)
{
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, n, L, n, x, 1);
    cblas_dtrsv(CblasColMajor, CblasLower, CblasTrans, CblasNonUnit, n, L, n, x, 1);
}

/* Left-looking block columns from PN_CHOLESKY_POLLED_ORDER on; below it
 * one dpotrf call (music's factors are far smaller). */
enum { FACTOR_BLOCK = 256, FACTOR_ROWS = 2048 };

int pn_cholesky_factor(double *a, int n, pn_poll_fn poll, void *poll_user)
{
    int info = 0;
    if (n < PN_CHOLESKY_POLLED_ORDER || !poll) {
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
            if (poll(poll_user))
                return -1;
        }
        if (k + kb < n)
            cblas_dtrsm(CblasColMajor, CblasRight, CblasLower, CblasTrans, CblasNonUnit, n - k - kb,
                        kb, 1.0, diag, n, a + k + kb + k * ld, n);
    }
    return 0;
}
