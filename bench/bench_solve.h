/* parnassus-bench: running solves for the table (docs/benchmarks.md): a
 * cold solve in a child process that can be stopped after a time limit,
 * and series of warm solves alternating between two settings or two target
 * vectors. */
#ifndef PARNASSUS_BENCH_SOLVE_H
#define PARNASSUS_BENCH_SOLVE_H

#include "bench_support.h"
#include "parnassus/problem.h"
#include "parnassus/solver.h"

/* Cold solve in a child process, so that a run that takes too long can be
 * stopped. Returns 0 when it finished (seconds and info set), 1 when it was
 * stopped after `limit` seconds, -1 on failure. */
typedef struct guarded_result {
    int error;
    double seconds;
    pn_info info;
} guarded_result;

int guarded_cold_solve(const pn_problem *prob, const pn_settings *s, double limit,
                       guarded_result *res);

/* Runs `runs` warm solves alternating between two settings (or targets):
 * run i uses the first when i is even, so each starts from the converged
 * solution of the other. Leaves the solver at `back`. Each run times the
 * update and the solve. With budget > 0 the settings series stops early,
 * after at least one run, once its runs have taken more than `budget`
 * seconds (sm->n tells how many ran). */
void warm_settings_series(pn_solver *solver, const pn_settings *there, const pn_settings *back,
                          int runs, double budget, int num_rules, samples *sm, solve_stats *st);
void warm_targets_series(pn_solver *solver, const double *there, const double *back, int runs,
                         int num_rules, samples *sm, solve_stats *st);

#endif
