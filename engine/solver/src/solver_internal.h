/* The solver's innards, shared with path.c and the tests. */
#ifndef PN_SOLVER_INTERNAL_H
#define PN_SOLVER_INTERNAL_H

#include "outcome.h"
#include "parnassus/rng.h"
#include "parnassus/solver.h"
#include "pstep.h"
#include "wstep.h"

enum { PN_POOL_SIZE = 16, PN_HISTORY = 8 };

/* One alternation run's outcome. */
typedef struct pn_run {
    double objective;
    pn_status status;
    int alternations;
} pn_run;

struct pn_solver {
    pn_problem prob; /* shallow copy; target points at b below */
    pn_settings settings;
    double *b; /* m: own targets */
    pn_pstep *pstep;
    /* best solution so far */
    double *q, *w, *y; /* K', m, m */
    pn_info best;
    int have_solution;
    /* current run */
    double *w_run, *y_run, *w_next, *e; /* m each; the run's q stays in the p-step */
    /* ADMM state */
    double *admm_z, *admm_u, *admm_scratch;
    double admm_rho;
    /* known selections (rule masks), most recent first */
    unsigned char *pool; /* PN_POOL_SIZE x K */
    /* the distinct selections the runs of the current solve ended in, best
     * first; they join the pool when the solve ends */
    unsigned char *found; /* PN_POOL_SIZE x K */
    double found_objective[PN_POOL_SIZE];
    int found_count;
    unsigned char *found_scratch;                 /* K */
    double *w_start;                              /* m: a starting point being run */
    unsigned char *mask_cur, *mask_trial, *tried; /* K each */
    double *rule_err;                             /* K */
    int32_t *order;                               /* K */
    int pool_count;
    pn_rng rng; /* the random restarts' own stream (seeded) */
    int last_newton;
    /* optional trace of the objective after every half-step (tests) */
    double *trace;
    int trace_capacity, trace_count;
    double last_p_kkt, last_w_kkt;
    /* why the last run failed: the part (p-step linear system, w-step,
     * interruption by the progress callback, ...) and its message */
    pn_outcome failed;
    pn_error_info failure;
    pn_progress progress;
    int interrupted;
    /* seconds of pn_solver_create, and of the updates since the last solve
     * (pn_info) */
    double setup_time, update_time;
};

/* Copies the reason the last pn_solver_run_from failed into info. */
pn_error pn_solver_failure(const pn_solver *s, pn_error_info *info);

/* Records the objective after every p-step and every w-step of later runs
 * into buf (up to capacity values); pass NULL to stop. */
void pn_solver_set_trace(pn_solver *s, double *buf, int capacity);
int pn_solver_trace_count(const pn_solver *s);

/* Runs the alternation from the weights w_start (m entries on the simplex)
 * and, if its objective beats the best so far, makes it the solution.
 * Returns PN_OUTCOME_OK (run->status says how the run ended) or what
 * failed (pn_solver_failure gives the message). */
pn_outcome pn_solver_run_from(pn_solver *s, const double *w_start, pn_run *run);

/* Notes the selection of a finished run (weights w, objective) among the
 * best distinct ones of this solve. */
void pn_solver_note_found(pn_solver *s, const double *w, double objective);

/* Uniform weights over the rules selected in mask (K entries). */
void pn_weights_from_mask(const pn_problem *prob, const unsigned char *mask, double *w);

/* Adds the current best selection to the pool of known selections. */
void pn_solver_remember_selection(pn_solver *s);

/* Completes the selection statistics of the best solution and copies it. */
void pn_solver_best_info(pn_solver *s, pn_info *out);

/* Forgets the best solution (keeps the pool and the p-step's dual). */
void pn_solver_forget_best(pn_solver *s);

#endif
