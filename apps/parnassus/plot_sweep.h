/* The figure of `parnassus sweep --plot` (docs/evaluate.md): over the swept
 * knob, the number of rules kept (median, min-max bars), the TV distances
 * to the reference and the musical shares, in three panels. PNG or SVG by
 * the extension, PN_SWEEP_PLOT_WIDTH x PN_SWEEP_PLOT_HEIGHT pixels. */
#ifndef PARNASSUS_CLI_PLOT_SWEEP_H
#define PARNASSUS_CLI_PLOT_SWEEP_H

#include "parnassus/error.h"

enum { PN_SWEEP_PLOT_WIDTH = 900, PN_SWEEP_PLOT_HEIGHT = 1000 };

enum { PN_SWEEP_PLOT_TV = 5, PN_SWEEP_PLOT_SHARES = 7 };

typedef struct pn_sweep_plot {
    const char *title, *subtitle;
    const char *x_title; /* the knob: log2(lambda_w) or alpha */
    int num_points;
    const double *x;                              /* num_points, increasing */
    const int *kept_min, *kept_median, *kept_max; /* num_points each */
    int num_rules;                                /* top of the first panel's axis */
    const char *tv_label[PN_SWEEP_PLOT_TV];
    const double *tv[PN_SWEEP_PLOT_TV]; /* num_points each, in [0, 1]; NAN: none */
    const char *share_label[PN_SWEEP_PLOT_SHARES];
    const double *share[PN_SWEEP_PLOT_SHARES];    /* num_points each, in [0, 1]; NAN: none */
    double share_reference[PN_SWEEP_PLOT_SHARES]; /* drawn dashed; NAN: none */
    const char *reference_label;                  /* for the dashed lines, or NULL */
} pn_sweep_plot;

/* Returns PN_OK, or an error (PN_ERR_INVALID: nothing to plot or an
 * unknown extension; PN_ERR_IO: the file could not be written;
 * PN_ERR_NOMEM) with a reason naming the file in info (may be NULL). */
pn_error pn_plot_sweep(const char *out_path, const pn_sweep_plot *d, pn_error_info *info);

#endif
