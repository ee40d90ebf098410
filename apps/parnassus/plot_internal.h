/* Drawing helpers shared by the plots of the command line (plot_path.c,
 * plot_rule_errors.c, plot_style.c, plot_sweep.c): canvases of any size
 * (plot_canvas.c), colours, dashes and markers (plot_palette.c), text
 * (plot_text.c), axes and panels (plot_axes.c). Internal to the command
 * line. */
#ifndef PARNASSUS_CLI_PLOT_INTERNAL_H
#define PARNASSUS_CLI_PLOT_INTERNAL_H

#include <stddef.h>

#include <cairo.h>

#include "parnassus/error.h"

enum { PN_PLOT_TEXT_MAX = 512 }; /* room for a label, cleaned */

typedef struct pn_plot_rgb {
    double r, g, b;
} pn_plot_rgb;

typedef struct pn_plot_axis {
    double lo, hi; /* drawn range */
    double step;   /* tick spacing: 1, 2 or 5 times a power of ten */
    int sci;       /* tick labels in scientific notation */
} pn_plot_axis;

typedef struct pn_plot_panel {
    double x, y, w, h; /* plotting area in pixels */
    pn_plot_axis xa, ya;
} pn_plot_panel;

typedef struct pn_plot_canvas {
    cairo_surface_t *surface;
    cairo_t *cr;
    int png;
    const char *path;
} pn_plot_canvas;

typedef enum pn_plot_align {
    PN_PLOT_ALIGN_START,
    PN_PLOT_ALIGN_CENTER,
    PN_PLOT_ALIGN_END
} pn_plot_align;

typedef enum pn_plot_marker {
    PN_PLOT_MARK_CIRCLE,
    PN_PLOT_MARK_SQUARE,
    PN_PLOT_MARK_TRIANGLE,
    PN_PLOT_MARK_DIAMOND
} pn_plot_marker;

/* Colour i of the categorical palette (i mod 10); the colours of text,
 * of axes and of grid lines. */
pn_plot_rgb pn_plot_color(int i);
pn_plot_rgb pn_plot_ink(void);
pn_plot_rgb pn_plot_axis_ink(void);
pn_plot_rgb pn_plot_grid_ink(void);
void pn_plot_set_source(cairo_t *cr, pn_plot_rgb c);

/* Sets the colour and dash of series i (colour i mod 10, dash and marker
 * (i / 10) mod 4; a negative i is the dark solid line of a single series)
 * and gives its marker; draws a marker of radius r at (x, y). */
void pn_plot_series_style(cairo_t *cr, int i, pn_plot_marker *mark);
void pn_plot_draw_marker(cairo_t *cr, pn_plot_marker mark, double x, double y, double r);

/* A white canvas of width x height pixels for path (.png or .svg); PN_OK,
 * or an error with a reason naming path in info (PN_ERR_INVALID: not .png
 * or .svg; PN_ERR_IO or PN_ERR_NOMEM: cairo failed). Close it to write the
 * file (removed when it could not be completed, with PN_ERR_IO or
 * PN_ERR_NOMEM). info may be NULL. */
pn_error pn_plot_canvas_open(pn_plot_canvas *c, const char *path, int width, int height,
                             pn_error_info *info);
pn_error pn_plot_canvas_close(pn_plot_canvas *c, pn_error_info *info);

/* Text: the font (sans-serif), widths, cleaning (invalid UTF-8 and control
 * characters become '?'), shortening with an ellipsis, and drawing
 * (already clean text) anchored at (x, y). */
void pn_plot_set_font(cairo_t *cr, double size, int bold);
double pn_plot_text_width(cairo_t *cr, const char *s);
void pn_plot_clean_text(const char *in, char *out, size_t size);
void pn_plot_fit_text(cairo_t *cr, char *s, double max_width);
void pn_plot_draw_text(cairo_t *cr, const char *s, double x, double y, pn_plot_align h,
                       pn_plot_align v);
/* The plot's title, centred on the canvas width at height y. */
void pn_plot_draw_title(cairo_t *cr, const char *title, double y);

/* Axes and panels: fit an axis to [lo, hi] (snap: whole ticks from 0),
 * the pixel column and row of a value, the grid lines, the frame with tick
 * labels and a vertical axis title at x. */
void pn_plot_axis_fit(pn_plot_axis *a, double lo, double hi, int target_ticks, int snap);
double pn_plot_px(const pn_plot_panel *p, double v);
double pn_plot_py(const pn_plot_panel *p, double v);
/* A pixel centre, so that 1-pixel lines stay crisp in the PNG. */
double pn_plot_crisp(double v);
void pn_plot_draw_grid(cairo_t *cr, const pn_plot_panel *p, int vertical);
void pn_plot_draw_frame(cairo_t *cr, const pn_plot_panel *p, int x_ticks, int x_labels);
void pn_plot_draw_y_title(cairo_t *cr, const pn_plot_panel *p, const char *title, double x);

#endif
