/* Drawing helpers of plot.c shared with the other plots of the command
 * line (plot_style.c): canvases of any size, text, axes and panels, the
 * colours. Internal to the command line. */
#ifndef PARNASSUS_CLI_PLOT_INTERNAL_H
#define PARNASSUS_CLI_PLOT_INTERNAL_H

#include <stddef.h>

#include <cairo.h>

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

/* Colour i of the categorical palette (i mod 10); the text colour. */
pn_plot_rgb pn_plot_color(int i);
pn_plot_rgb pn_plot_ink(void);

/* A white canvas of width x height pixels for path (.png or .svg); 0, or
 * -1 with a reason in err. Close it to write the file (removed when it
 * could not be completed). */
int pn_plot_canvas_open(pn_plot_canvas *c, const char *path, int width, int height, char *err,
                        size_t errlen);
int pn_plot_canvas_close(pn_plot_canvas *c, char *err, size_t errlen);

/* Text: the font (sans-serif), widths, cleaning (invalid UTF-8 and control
 * characters become '?'), shortening with an ellipsis, and drawing
 * (already clean text) anchored at (x, y). */
void pn_plot_set_font(cairo_t *cr, double size, int bold);
double pn_plot_text_width(cairo_t *cr, const char *s);
void pn_plot_clean_text(const char *in, char *out, size_t size);
void pn_plot_fit_text(cairo_t *cr, char *s, double max_width);
void pn_plot_draw_text(cairo_t *cr, const char *s, double x, double y, pn_plot_align h,
                       pn_plot_align v);

/* Axes and panels: fit an axis to [lo, hi] (snap: whole ticks from 0),
 * the pixel column and row of a value, the grid lines, the frame with tick
 * labels and a vertical axis title at x. */
void pn_plot_axis_fit(pn_plot_axis *a, double lo, double hi, int target_ticks, int snap);
double pn_plot_px(const pn_plot_panel *p, double v);
double pn_plot_py(const pn_plot_panel *p, double v);
void pn_plot_draw_grid(cairo_t *cr, const pn_plot_panel *p, int vertical);
void pn_plot_draw_frame(cairo_t *cr, const pn_plot_panel *p, int x_ticks, int x_labels);
void pn_plot_draw_y_title(cairo_t *cr, const pn_plot_panel *p, const char *title, double x);

#endif
