/* The figure of `parnassus evaluate --plot` (docs/evaluate.md): the main
 * style distributions of the input and of the reference side by side, one
 * panel each with its TV distance in the title, and a panel of the rates.
 * PNG or SVG by the extension, PN_STYLE_PLOT_WIDTH x PN_STYLE_PLOT_HEIGHT
 * pixels. */
#ifndef PARNASSUS_CLI_PLOT_STYLE_H
#define PARNASSUS_CLI_PLOT_STYLE_H

#include "parnassus/error.h"
#include "parnassus/style.h"

enum { PN_STYLE_PLOT_WIDTH = 1600, PN_STYLE_PLOT_HEIGHT = 1730 };

/* reference may be NULL (only the input is drawn). Returns PN_OK, or an
 * error (PN_ERR_INVALID: nothing to plot or an unknown extension;
 * PN_ERR_IO: the file could not be written; PN_ERR_NOMEM) with a reason
 * naming the file in info (may be NULL). */
pn_error pn_plot_style(const char *out_path, const char *title, const pn_style_stats *input,
                       const char *input_label, const pn_style_stats *reference,
                       const char *reference_label, pn_error_info *info);

#endif
