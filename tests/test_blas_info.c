/* Tests of pn_blas_describe: the kernel set OpenBLAS chose is named, and
 * whether it leaves the CPU's AVX2 and FMA unused follows from the name and
 * the CPU. CTest runs it three times: as the machine is, and with
 * OPENBLAS_CORETYPE forcing the generic SSE3 kernels (Prescott) and the
 * AVX2 ones (Haswell). Also the programs' decision to start again with
 * OPENBLAS_CORETYPE set (apps/common/blas_kernels.h), on made-up BLAS
 * descriptions, so that it is tested on every CPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <cmocka.h>

#include "blas_kernels.h"
#include "parnassus/solver.h"

static void test_the_core_is_named_and_consistent(void **state)
{
    (void)state;
    pn_blas_info blas;
    pn_blas_describe(&blas);
    assert_non_null(blas.core);
    assert_true(strlen(blas.core) > 0);
    assert_int_equal(blas.underused, blas.cpu_has_avx2 && !blas.core_uses_avx2);
    /* kernels to name exactly when the CPU's AVX2 goes unused */
    if (blas.underused)
        assert_string_equal(blas.suggested_core, "Haswell");
    else
        assert_null(blas.suggested_core);
}

static void test_a_forced_core_is_reported(void **state)
{
    (void)state;
    const char *forced = getenv("OPENBLAS_CORETYPE");
    if (!forced || !*forced)
        skip();
    pn_blas_info blas;
    pn_blas_describe(&blas);
    if (!strcasecmp(forced, "Prescott")) {
        assert_string_equal(blas.core, "Prescott");
        assert_int_equal(blas.core_uses_avx2, 0);
        assert_int_equal(blas.underused, blas.cpu_has_avx2);
        if (blas.cpu_has_avx2)
            assert_string_equal(blas.suggested_core, "Haswell");
    } else if (!strcasecmp(forced, "Haswell")) {
        if (!blas.cpu_has_avx2)
            skip(); /* an OpenBLAS may refuse kernels the CPU cannot run */
        assert_string_equal(blas.core, "Haswell");
        assert_int_equal(blas.core_uses_avx2, 1);
        assert_int_equal(blas.underused, 0);
        assert_null(blas.suggested_core);
    } else {
        fail_msg("OPENBLAS_CORETYPE=%s: this test knows Prescott and Haswell", forced);
    }
}

static void test_programs_restart_only_for_unused_avx2(void **state)
{
    (void)state;
    const pn_blas_info generic = {
        .core = "Prescott", .cpu_has_avx2 = 1, .underused = 1, .suggested_core = "Haswell"};
    const pn_blas_info fitting = {.core = "SkylakeX", .core_uses_avx2 = 1, .cpu_has_avx2 = 1};
    const pn_blas_info old_cpu = {.core = "Prescott"};
    assert_string_equal(pn_app_blas_core_to_set(NULL, &generic), "Haswell");
    /* an empty value names no kernels: as if unset */
    assert_string_equal(pn_app_blas_core_to_set("", &generic), "Haswell");
    /* the user's choice is kept, and the second start does not start again */
    assert_null(pn_app_blas_core_to_set("Prescott", &generic));
    assert_null(pn_app_blas_core_to_set("Haswell", &generic));
    assert_null(pn_app_blas_core_to_set(NULL, &fitting));
    assert_null(pn_app_blas_core_to_set(NULL, &old_cpu));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_programs_restart_only_for_unused_avx2),
        cmocka_unit_test(test_the_core_is_named_and_consistent),
        cmocka_unit_test(test_a_forced_core_is_reported),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
