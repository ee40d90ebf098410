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

#include "parnassus/solver.h"

/* Call first in main(), before any thread, open file or output. When the
 * BLAS leaves the CPU's AVX2 and FMA unused and OPENBLAS_CORETYPE is not
 * set (or empty), runs the program again (its own file, the same argv,
 * the environment with OPENBLAS_CORETYPE added) and does not return.
 * Returns when nothing is to be done, when the variable is already set
 * (the user's choice, kept, or this program started again), when it was
 * started through the dynamic loader, or when it cannot start again (it
 * then runs on as it is). */
void pn_app_use_full_blas_kernels(char **argv);

/* The decision alone: the kernel set to name in OPENBLAS_CORETYPE, given
 * the variable's current value (NULL when unset) and the BLAS as it runs;
 * NULL for none. */
const char *pn_app_blas_core_to_set(const char *env_value, const pn_blas_info *blas);

/* One line naming the kernels that run, for --version:
 * "BLAS: OpenBLAS, Haswell kernels", with a note when they leave the CPU's
 * AVX2 and FMA unused. */
void pn_app_print_blas(FILE *out);

#endif
