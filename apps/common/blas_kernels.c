/* Starting again with OPENBLAS_CORETYPE set (blas_kernels.h). */
#include "blas_kernels.h"

#include <stdlib.h>
#include <unistd.h>

#include "parnassus/solver.h"

void pn_app_use_full_blas_kernels(char **argv)
{
    /* set: the user chose, or this is the second start; never a loop */
    if (getenv("OPENBLAS_CORETYPE"))
        return;
    pn_blas_info blas;
    pn_blas_describe(&blas);
    if (!blas.underused || !blas.suggested_core)
        return;
    if (setenv("OPENBLAS_CORETYPE", blas.suggested_core, 1) != 0)
        return;
    execv("/proc/self/exe", argv);
    /* no /proc, or exec refused: run on with the kernels already chosen */
    unsetenv("OPENBLAS_CORETYPE");
}

void pn_app_print_blas(FILE *out)
{
    pn_blas_info blas;
    pn_blas_describe(&blas);
    fprintf(out, "BLAS: OpenBLAS, %s kernels%s\n", blas.core,
            blas.underused ? " (this CPU's AVX2 and FMA unused)" : "");
}
