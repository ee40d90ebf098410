/* Shared helpers of the engine tests: a seeded PRNG, small random rule
 * systems, a cell source over an explicit assignment, and independent
 * reference computations (objective pieces, p-step certificate). */
#ifndef PN_TEST_SUPPORT_H
#define PN_TEST_SUPPORT_H

#include <stdint.h>

#include "parnassus/gen.h"
#include "parnassus/problem.h"

/* Runs only the tests whose names match the pattern in the environment
 * variable PN_TEST_FILTER (cmocka wildcards), if it is set. */
void ts_test_filter(void);

/* splitmix64: the tests' own generator, fixed seeds only. */
typedef struct ts_rng {
    uint64_t state;
} ts_rng;

void ts_seed(ts_rng *rng, uint64_t seed);
uint64_t ts_next(ts_rng *rng);
/* Uniform on [0, 1). */
double ts_uniform(ts_rng *rng);
/* Uniform on [lo, hi). */
double ts_range(ts_rng *rng, double lo, double hi);
/* Uniform integer in [0, bound), bound >= 1. */
uint64_t ts_below(ts_rng *rng, uint64_t bound);
/* Uniform integer in [lo, hi]. */
int32_t ts_between(ts_rng *rng, int32_t lo, int32_t hi);

/* An explicit partition: cells[r * n + x] is the local cell of raw input x
 * in rule r. A pn_cell_source over it is ts_cell_source. */
typedef struct ts_assign {
    int64_t n;
    int32_t num_rules;
    int32_t *cells;
} ts_assign;

int ts_cell_source(void *ctx, int32_t rule, int64_t first, int64_t count, int32_t *cells);

/* How ts_random_problem draws the targets. */
typedef enum ts_targets {
    TS_TARGETS_RANDOM = 0,     /* every rule its own random distribution */
    TS_TARGETS_CONSISTENT = 1, /* all rules from one random p over the raw space */
    TS_TARGETS_MIXED = 2,      /* the first half of the rules from one p, the rest random */
} ts_targets;

/* A random rule system: n raw inputs, K rules of the given sizes, random
 * (uneven, possibly with empty cells) partitions, targets as asked, groups
 * by pn_deoverlap. If assign is not NULL it receives the partition (free
 * cells with free()). Fails the test on error. */
pn_problem *ts_random_problem(ts_rng *rng, int64_t n, int32_t num_rules, const int32_t *sizes,
                              ts_targets targets, ts_assign *assign);

/* A1 or A2 for a seed; fails the test on error. */
pn_problem *ts_artificial(pn_gen_case which, uint64_t seed);

/* Group masses q (K' entries) of a raw distribution p over the artificial
 * case's raw inputs: q_k = sum of p over the inputs whose cell tuple is
 * group k's column. */
void ts_artificial_group_masses(pn_gen_case which, uint64_t seed, const pn_problem *prob,
                                const double *p, double *q);

/* Weights that keep the rules named by mask (bit r) and drop the others,
 * differing row by row and summing to 1. */
void ts_weights_keeping(const pn_problem *prob, unsigned mask, double *w);

/* y = A'q, computed here (not by the engine). */
void ts_apply(const pn_problem *prob, const double *q, double *y);

/* Pieces of (3) at (q, w), computed here: weighted error E, lambda_p |q|^2
 * and lambda_w Pw(w). Returns their sum. */
double ts_objective(const pn_problem *prob, double lambda_p, double lambda_w, double alpha,
                    const double *q, const double *w, double *weighted_error);

/* The p-step objective (8): sum_i w_i ((A'q)_i - b_i)^2 + lambda_p |q|^2. */
double ts_pstep_objective(const pn_problem *prob, const double *w, double lambda_p,
                          const double *q);

/* Primal KKT residual of q for (8): max over q_k > 0 of g_k minus min g,
 * g the gradient; and the Frank-Wolfe gap q'g - min g. */
void ts_pstep_kkt(const pn_problem *prob, const double *w, double lambda_p, const double *q,
                  double *kkt, double *gap);

/* Rule masks: 1 where |w_r| > 0. */
void ts_selection(const pn_problem *prob, const double *w, unsigned char *mask);

/* Max |a - b| over n entries. */
double ts_max_abs_diff(const double *a, const double *b, int64_t n);

/* Print a selection like "{1,2}" (1-based) into buf (at least 4 K bytes). */
const char *ts_format_selection(const unsigned char *mask, int32_t num_rules, char *buf,
                                unsigned long size);

#endif
