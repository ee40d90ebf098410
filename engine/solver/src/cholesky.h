/* Dense Cholesky factorisation and solve for the p-step's Newton system
 * (LAPACK and BLAS from the serial OpenBLAS). Internal to the engine. */
#ifndef PN_CHOLESKY_H
#define PN_CHOLESKY_H

/* Asked between blocks of a long factorisation; nonzero stops it. */
typedef int (*pn_poll_fn)(void *user);

/* From this order on, with a poll given, the factorisation runs in block
 * columns that ask the poll between blocks of rows: one dpotrf of order
 * 10^4 takes several seconds and cannot be stopped. */
enum { PN_CHOLESKY_POLLED_ORDER = 4096 };

/* The lower Cholesky factor of the order-n matrix a (column-major, lower
 * triangle read) in place, as LAPACK's dpotrf. Returns 0, the LAPACK info
 * (> 0: not positive definite), or -1 when poll asked to stop. poll may be
 * NULL. */
int pn_cholesky_factor(double *a, int n, pn_poll_fn poll, void *poll_user);

/* Solves L L' x = x in place for the lower factor L of order n. */
void pn_cholesky_solve(const double *L, int n, double *x);

#endif
