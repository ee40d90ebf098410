/* Rule realization and selection: problem (3) of Yu, Li & Varshney (2017).
 *
 *   minimise   (A'q - b)' diag(w) (A'q - b) + lambda_p |q|^2 + lambda_w Pw(w)
 *   subject to q in the K'-simplex, w in the m-simplex,
 *   Pw(w) = alpha sum_r sqrt(m_r) |w_r|_2 + (1 - alpha) |w|_2^2
 *
 * by alternating an exact p-step (8) and an exact w-step (13), with
 * restarts from several starting selections so that the selection found is
 * the globally better one, not the first local optimum.
 *
 * Usage follows OSQP/SCS: fill pn_settings (pn_settings_default first),
 * pn_solver_create() allocates everything once for a problem,
 * pn_solver_solve() allocates nothing and can be called again after
 * pn_solver_update_settings() / pn_solver_update_targets() (warm start).
 * Errors (pn_error) and how a solve ended (pn_status) are separate. */
#ifndef PARNASSUS_SOLVER_H
#define PARNASSUS_SOLVER_H

#include <stdint.h>

#include "parnassus/memory.h"
#include "parnassus/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum pn_wstep_method {
    PN_WSTEP_AUTO = 0,  /* exact root-find when alpha < 1, ADMM when alpha = 1 */
    PN_WSTEP_EXACT = 1, /* monotone root-find on the multiplier of 1'w = 1 (alpha < 1) */
    PN_WSTEP_ADMM = 2,  /* ADMM (14)-(18) */
} pn_wstep_method;

/* What a solve has done so far, for a progress callback. */
typedef struct pn_progress {
    int starts;            /* starting points begun */
    int alternations;      /* p/w alternations, all starts together */
    int newton_iterations; /* p-step Newton iterations, all together */
} pn_progress;

/* Called from inside pn_solver_solve (once per alternation and once per
 * p-step Newton iteration, so a few times a second at least on large
 * problems); a nonzero return stops the solve with PN_ERR_INTERRUPTED.
 * It must not call the solver. */
typedef int (*pn_progress_fn)(void *user, const pn_progress *progress);

/* settings.threads: how many threads share the p-step's passes over all
 * groups, 1 .. PN_MAX_THREADS (problems with row sums only): the caller's
 * and threads - 1 helpers that pn_solver_create starts and pn_solver_free
 * joins. Fixed when the solver is created (pn_solver_update_settings
 * refuses another value). The solution does not depend on it (see
 * docs/engine.md for the one rounding case where it could). */
enum { PN_MAX_THREADS = PN_ROW_SUMS_LANES };

typedef struct pn_settings {
    double log2_lambda_w; /* style: lambda_w = 2^x                         (0) */
    double alpha;         /* group lasso share of the elastic net, [0, 1]  (0.8) */
    double lambda_p;      /* spread penalty on q, [0, 1]                   (1e-4) */
    uint64_t seed;        /* seeds the random restarts                     (1) */
    int restarts;         /* extra random starts in a cold solve           (8) */
    int grow_seeds;       /* greedy growth from this many single rules    (8) */
    int grow_tries;       /* candidates tried per growth step              (2) */
    int warm_pool;        /* known other selections a warm solve tries     (2) */
    int max_alternations; /* per start                                     (300) */
    double obj_tol;       /* the objective has stopped falling (relative)  (1e-9) */
    double kkt_tol;       /* ... and the w-step KKT residual at the final
                             q is below this: converged                   (1e-6) */
    double p_tol;         /* KKT tolerance of the p-step                   (1e-11) */
    int p_max_newton;     /* Newton iterations per p-step                  (100) */
    pn_wstep_method w_method;
    double admm_rho;         /* ADMM penalty; 0 = automatic (see wstep.h)     (0) */
    int admm_max_iter;       /*                                               (20000) */
    double admm_tol;         /* ADMM primal/dual residual tolerance           (1e-12) */
    int64_t max_memory;      /* bytes pn_solver_create may allocate (PN_DEFAULT_MAX_MEMORY) */
    int threads;             /* sharing the passes over all groups, fixed at create (1) */
    pn_progress_fn progress; /* NULL: none                                 (NULL) */
    void *progress_user;
} pn_settings;

void pn_settings_default(pn_settings *settings);

/* Checks ranges; PN_ERR_INVALID names the bad field. */
pn_error pn_settings_validate(const pn_settings *settings, pn_error_info *info);

typedef enum pn_status {
    PN_STATUS_UNSOLVED = 0, /* no solve yet */
    PN_STATUS_SOLVED,       /* the alternation converged */
    PN_STATUS_LIMIT_CYCLE,  /* it cycled; the best point of the cycle is kept */
    PN_STATUS_MAX_ITER,     /* stopped at max_alternations; best point kept */
} pn_status;

const char *pn_status_name(pn_status status);

typedef enum pn_start {
    PN_START_COLD = 0, /* uniform w, known selections, greedy growth, seeded random subsets */
    PN_START_WARM = 1, /* the current solution, plus up to warm_pool other known selections */
} pn_start;

typedef struct pn_info {
    pn_status status;
    double objective;      /* value of (3) */
    double weighted_error; /* E(p, w) */
    double penalty_p;      /* lambda_p |q|^2 */
    double penalty_w;      /* lambda_w Pw(w) */
    int alternations;      /* p/w alternations, all starts together */
    int starts;            /* how many starting points were run */
    int newton_iterations; /* p-step Newton iterations, all together */
    double p_kkt;          /* KKT residual of the last p-step (inf-norm) */
    double w_kkt;          /* KKT residual of the last w-step (inf-norm) */
    int num_selected;      /* rules with |w_r| > 0 */
    int group_selective;   /* every rule fully kept or fully dropped */
    /* wall-clock seconds (monotonic clock), as OSQP and SCS report them */
    double setup_time;  /* pn_solver_create */
    double solve_time;  /* this pn_solver_solve */
    double update_time; /* the pn_solver_update_* calls since the solve before */
} pn_info;

/* The BLAS under the p-step's Newton systems (OpenBLAS) and the kernel set
 * it chose for this CPU. An OpenBLAS older than the CPU falls back to its
 * generic SSE3 kernels ("Prescott") even on a CPU with AVX2 and FMA:
 * `underused` then, and OPENBLAS_CORETYPE=<suggested_core> in the process's
 * environment (set before it starts) selects the faster kernels. */
typedef struct pn_blas_info {
    const char *core;           /* OpenBLAS's name of its kernel set, e.g. "Haswell" */
    int core_uses_avx2;         /* that kernel set uses AVX2 and FMA */
    int cpu_has_avx2;           /* this CPU has AVX2 and FMA */
    int underused;              /* the CPU has them and the kernels do not use them */
    const char *suggested_core; /* when underused, kernels it runs ("Haswell", static); else NULL */
} pn_blas_info;

void pn_blas_describe(pn_blas_info *out);

typedef struct pn_solver pn_solver;

/* Bytes pn_solver_create() would allocate for prob (an upper bound); it
 * refuses with PN_ERR_LIMIT when that is over settings->max_memory. The
 * dense p-step Hessian, 8 (m + 1)^2 bytes over the m cells of all rules,
 * and the K' x K group table are what grow. */
int64_t pn_solver_bytes(const pn_problem *prob);

/* Allocates all memory the solver will ever need for this problem. The
 * problem must outlive the solver and stay unchanged (targets may change
 * through pn_solver_update_targets). */
pn_error pn_solver_create(const pn_problem *prob, const pn_settings *settings, pn_solver **out,
                          pn_error_info *info);
void pn_solver_free(pn_solver *solver);

/* New knobs; the current solution stays as the warm start. */
pn_error pn_solver_update_settings(pn_solver *solver, const pn_settings *settings,
                                   pn_error_info *info);

/* New targets b (m entries, e.g. a new musical context); copied. */
pn_error pn_solver_update_targets(pn_solver *solver, const double *target, pn_error_info *info);

/* Realizes the rule system. Allocates nothing. */
pn_error pn_solver_solve(pn_solver *solver, pn_start start, pn_info *out_info, pn_error_info *info);

/* A warm solve that also starts from a selection the caller knows
 * (`selection`: one entry per rule, 1 = kept, 0 = dropped; w uniform over
 * the kept rules' components) and keeps whichever solution is better. The
 * alternation only descends, so once a sudden change of targets has left w
 * on a few rules that p fits exactly, the warm start cannot bring the
 * others back (their errors under that p keep them out): starting from a
 * selection known to be good can. That start is not run when the warm
 * start already ends in the selection. Without a current solution this is
 * a cold solve (PN_START_COLD). Allocates nothing. */
pn_error pn_solver_solve_also(pn_solver *solver, const unsigned char *selection, pn_info *out_info,
                              pn_error_info *info);

const pn_settings *pn_solver_settings(const pn_solver *solver);
const double *pn_solver_q(const pn_solver *solver); /* K' group masses */
const double *pn_solver_w(const pn_solver *solver); /* m weights */
const double *pn_solver_y(const pn_solver *solver); /* A'q, m entries */

/* Per rule: |w_r|_2, the error |A_r p - b_r|_2, and whether it is selected. */
void pn_solver_rule_stats(const pn_solver *solver, double *group_norm, double *rule_error,
                          unsigned char *selected);

/* Objective pieces of (3) at a given (q, w). */
double pn_objective(const pn_problem *prob, const pn_settings *settings, const double *q,
                    const double *w, double *weighted_error, double *penalty_p, double *penalty_w);

/* The analysis direction: the optimal weights w for given group masses q
 * (K' entries, summing to 1), i.e. the w-step (13) alone. */
pn_error pn_analyze(const pn_problem *prob, const pn_settings *settings, const double *q,
                    double *w_out, pn_error_info *info);

#ifdef __cplusplus
}
#endif

#endif
