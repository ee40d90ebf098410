/* The lambda_w solution path (paper section 5.1, Fig. 2-3).
 *
 * Grown both ways from log2 lambda_w = 0 on a fixed grid. Downwards it stops
 * when w* stops being group selective, at a floor, or once selection and
 * error have been stable for a while (at alpha = 0.8 selectivity may never
 * be lost). Upwards it stops when every group norm has converged to
 * sqrt(m_r)/m (Theorem 1). Each point is warm-started from its neighbour,
 * and the path is swept back and forth so that a better selection found at
 * one point is tried at its neighbours too. */
#ifndef PARNASSUS_PATH_H
#define PARNASSUS_PATH_H

#include "parnassus/solver.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct pn_path_settings {
    pn_settings solver; /* alpha, lambda_p, seed, ...; log2_lambda_w is ignored;
                           restarts defaults to 2 here */
    double step;        /* grid step in log2 lambda_w                (0.25) */
    double floor;       /* lowest log2 lambda_w                      (-14) */
    double ceiling;     /* highest log2 lambda_w                     (24) */
    double norm_tol;    /* relative distance to sqrt(m_r)/m to stop  (1e-3) */
    int stable_points;  /* stop downwards after so many unchanged    (12) */
    int sweeps;         /* at most so many back-and-forth sweeps     (4) */
} pn_path_settings;

void pn_path_settings_default(pn_path_settings *settings);

typedef struct pn_path_point {
    double log2_lambda_w;
    double objective;
    double weighted_error;
    int num_selected;
    int group_selective;
    double *group_norm;      /* K */
    double *rule_error;      /* K: |A_r p - b_r|_2 */
    unsigned char *selected; /* K */
} pn_path_point;

typedef struct pn_path {
    int num_rules;
    int num_points; /* sorted by increasing log2_lambda_w */
    pn_path_point *points;
    double alpha;
    double lambda_p;
    int total_alternations;
} pn_path;

pn_error pn_path_compute(const pn_problem *prob, const pn_path_settings *settings, pn_path **out,
                         pn_error_info *info);
void pn_path_free(pn_path *path);

#ifdef __cplusplus
}
#endif

#endif
