/* Which of OpenBLAS's kernel sets the solver's dense linear algebra runs.
 *
 * Debian's OpenBLAS picks its kernels at start-up from the CPU's model
 * number. A CPU newer than the library gets its oldest x86-64 kernels
 * (Prescott: SSE3, no AVX) even when it has AVX2 and FMA: dgemm and dtrsm
 * then took 28 % of a run's time instead of 10 %, the run about 15 % longer
 * (docs/benchmarks.md). This
 * file only reports it; OPENBLAS_CORETYPE in the environment of the process
 * chooses the kernels (the programs' blas_kernels.c sets it for their own
 * process). */
#include "parnassus/solver.h"

#include <strings.h>

#include <cblas.h>

/* OpenBLAS's kernel sets that use AVX2 and FMA (0.3.x names). */
static const char *const avx2_cores[] = {"Haswell",        "SkylakeX", "Cooperlake",
                                         "SapphireRapids", "Zen",      "Excavator"};

void pn_blas_describe(pn_blas_info *out)
{
    const char *core = openblas_get_corename();
    out->core = core ? core : "unknown";
    out->core_uses_avx2 = 0;
    for (size_t i = 0; i < sizeof avx2_cores / sizeof *avx2_cores; ++i)
        if (strcasecmp(out->core, avx2_cores[i]) == 0)
            out->core_uses_avx2 = 1;
#if defined(__x86_64__) || defined(__i386__)
    out->cpu_has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
    out->cpu_has_avx2 = 0;
#endif
    out->underused = out->cpu_has_avx2 && !out->core_uses_avx2;
    /* Haswell's kernels need only AVX2 and FMA, and every OpenBLAS of the
     * 0.3 series has them: the safe choice, and the measured one (a CPU
     * with AVX-512 might gain a little more from SkylakeX's). */
    out->suggested_core = out->underused ? "Haswell" : NULL;
}
