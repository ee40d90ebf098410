/* Plots of the command-line tool, drawn with cairo at 900 x 600 pixels.
 * The file format follows the output name: ".png" (image surface) or ".svg"
 * (SVG surface, pixel units). Every function returns PN_OK, or an error
 * (PN_ERR_INVALID: nothing to plot or an unknown extension; PN_ERR_IO: the
 * file could not be written; PN_ERR_NOMEM) with a reason naming the file in
 * info (which may be NULL). */
#ifndef PARNASSUS_CLI_PLOT_H
#define PARNASSUS_CLI_PLOT_H

#include "parnassus/error.h"

enum { PN_PLOT_WIDTH = 900, PN_PLOT_HEIGHT = 600 };

/* Frees the font caches that cairo and fontconfig keep for the life of the
 * process, so that leak checkers see a clean exit. Call once, just before
 * the program ends, when no plot is being drawn. */
void pn_plot_shutdown(void);

/* 1 if out_path ends in ".png" or ".svg" (any case), else 0. */
int pn_plot_format_known(const char *out_path);

/* The lambda_w solution path, as in Fig. 2 of the paper: on top the group
 * norm |w_r|_2 of every rule (one line per rule, legend with the names),
 * below the weighted error, both over a shared log2(lambda_w) axis.
 * log2_lambda_w and weighted_error hold num_points values (increasing x);
 * group_norm holds num_points x num_rules values, point by point. */
pn_error pn_plot_path(const char *out_path, const char *title, int num_rules,
                      const char *const *names, int num_points, const double *log2_lambda_w,
                      const double *group_norm, const double *weighted_error, pn_error_info *info);

/* Per-rule errors |A_r p - b_r|_2 of two realizations side by side, as in
 * Fig. 4 of the paper: grouped bars per rule, a selective realization (a)
 * against a non-selective one (b). The tick labels of the rules selected in
 * (a) are bold. errors_b/label_b may be NULL for a single series,
 * selected_a may be NULL (nothing bold). */
pn_error pn_plot_rule_errors(const char *out_path, const char *title, int num_rules,
                             const char *const *names, const double *errors_a, const char *label_a,
                             const double *errors_b, const char *label_b,
                             const unsigned char *selected_a, pn_error_info *info);

#endif
