/* Starting again with OPENBLAS_CORETYPE set (blas_kernels.h). */
#include "blas_kernels.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <unistd.h>

const char *pn_app_blas_core_to_set(const char *env_value, const pn_blas_info *blas)
{
    /* set: the user chose, or this is the second start; never a loop */
    if (env_value && env_value[0])
        return NULL;
    return blas->suggested_core; /* set exactly when the CPU's AVX2 goes unused */
}

void pn_app_use_full_blas_kernels(char **argv)
{
    pn_blas_info blas;
    pn_blas_describe(&blas);
    const char *core = pn_app_blas_core_to_set(getenv("OPENBLAS_CORETYPE"), &blas);
    if (!core)
        return;
    /* Started as "ld.so PROGRAM ...", /proc/self/exe is the loader, which
     * would take argv[0] for its program and argv[1] for ours: run on. */
    if (getauxval(AT_BASE) == 0)
        return;
    if (setenv("OPENBLAS_CORETYPE", core, 1) != 0)
        return;
    /* The program's own path, not /proc/self/exe itself: the kernel names
     * the process after the file it executes, and ps, pgrep and core
     * files should still say parnassus. */
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = '\0';
        execv(exe, argv);
    }
    execv("/proc/self/exe", argv); /* the file was replaced or removed */
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
