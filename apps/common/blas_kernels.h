/* The programs' own processes run the BLAS kernels their CPU can run.
 *
 * An OpenBLAS older than the CPU picks its generic SSE3 kernels even where
 * the CPU has AVX2 and FMA, and a library reads OPENBLAS_CORETYPE only
 * when it starts (pn_blas_describe, solver.h). A program can still choose
 * for itself: it starts again with the variable set. A plugin cannot (the
 * host owns the process) and only says so in the host's log. */
#ifndef PN_APP_BLAS_KERNELS_H
#define PN_APP_BLAS_KERNELS_H

#include <stdio.h>

/* Call first in main(), before any thread, open file or output. When the
 * BLAS leaves the CPU's AVX2 and FMA unused and OPENBLAS_CORETYPE is not
 * set, runs the program again (/proc/self/exe, the same argv and
 * environment) with OPENBLAS_CORETYPE naming kernels the CPU runs, and
 * does not return. Returns when nothing is to be done, when the variable
 * is already set (the user's choice, kept, or this program started again),
 * or when the program cannot start again (it then runs on as it is). */
void pn_app_use_full_blas_kernels(char **argv);

/* One line naming the kernels that run, for --version:
 * "BLAS: OpenBLAS, Haswell kernels", with a note when they leave the CPU's
 * AVX2 and FMA unused. */
void pn_app_print_blas(FILE *out);

#endif
