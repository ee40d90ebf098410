/* Fig. 2 of the paper: the lambda_w solution path, group norms on top and
 * the weighted error below, over a shared log2(lambda_w) axis. */
#include "plot.h"
#include "plot_internal.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>

enum {
    PATH_LEFT = 88,
    PATH_RIGHT = 168, /* room for the legend */
    PATH_TOP = 50,
    PATH_GAP = 14,
    PATH_BOTTOM = 66,
};

typedef struct path_data {
    int num_rules, num_points;
    const char *const *names;
    const double *x, *norm, *error;
} path_data;

/* Markers on every point while they are at least 12 pixels apart, else on
 * every stride-th point. */
static int marker_stride(const pn_plot_panel *p, int num_points)
{
    if (num_points < 2)
        return 1;
    double spacing = p->w * (p->xa.hi - p->xa.lo > 0.0 ? 1.0 : 0.0) / (num_points - 1);
    int stride = spacing > 0.0 ? (int)ceil(12.0 / spacing) : 1;
    return stride < 1 ? 1 : stride;
}

/* One polyline through the finite points of values[j * step] (gaps break
 * it), then its markers; offset staggers markers of overlapping lines. */
static void draw_series(cairo_t *cr, const pn_plot_panel *p, const path_data *d,
                        const double *values, int step, int series, int offset)
{
    pn_plot_marker mark;
    pn_plot_series_style(cr, series, &mark);
    cairo_set_line_width(cr, 1.8);
    int pen_down = 0;
    for (int j = 0; j < d->num_points; ++j) {
        double v = values[(size_t)j * (size_t)step];
        if (!isfinite(v) || !isfinite(d->x[j])) {
            pen_down = 0;
            continue;
        }
        if (pen_down)
            cairo_line_to(cr, pn_plot_px(p, d->x[j]), pn_plot_py(p, v));
        else
            cairo_move_to(cr, pn_plot_px(p, d->x[j]), pn_plot_py(p, v));
        pen_down = 1;
    }
    cairo_stroke(cr);
    int stride = marker_stride(p, d->num_points);
    for (int j = offset % stride; j < d->num_points; j += stride) {
        double v = values[(size_t)j * (size_t)step];
        if (isfinite(v) && isfinite(d->x[j]))
            pn_plot_draw_marker(cr, mark, pn_plot_px(p, d->x[j]), pn_plot_py(p, v), 2.6);
    }
}

static void clip_to(cairo_t *cr, const pn_plot_panel *p)
{
    cairo_rectangle(cr, p->x - 4.0, p->y - 4.0, p->w + 8.0, p->h + 8.0);
    cairo_clip(cr);
}

/* The legend in the right margin, next to both panels: a line sample with
 * its marker and the name. Rows shrink a little for many rules; names that
 * do not fit are shortened, rules that do not fit are counted in a last
 * line. */
static void draw_path_legend(cairo_t *cr, const pn_plot_panel *top, const pn_plot_panel *bottom,
                             const path_data *d)
{
    const double x0 = top->x + top->w + 16.0, height = bottom->y + bottom->h - top->y;
    const double text_x = x0 + 34.0, text_w = PN_PLOT_WIDTH - text_x - 6.0;
    double row = fmax(13.0, fmin(18.0, (height - 8.0) / d->num_rules));
    int fits = (int)((height - 8.0) / row);
    int shown = d->num_rules <= fits ? d->num_rules : fits - 1;
    pn_plot_set_font(cr, row < 16.0 ? 11.0 : 12.0, 0);
    for (int r = 0; r < shown; ++r) {
        double y = top->y + 10.0 + r * row;
        pn_plot_marker mark;
        pn_plot_series_style(cr, r, &mark);
        cairo_set_line_width(cr, 1.8);
        cairo_move_to(cr, x0, y);
        cairo_line_to(cr, x0 + 26.0, y);
        cairo_stroke(cr);
        pn_plot_draw_marker(cr, mark, x0 + 13.0, y, 2.6);
        char name[PN_PLOT_TEXT_MAX];
        pn_plot_clean_text(d->names && d->names[r] ? d->names[r] : "", name, sizeof name);
        if (name[0] == '\0')
            snprintf(name, sizeof name, "rule %d", r + 1);
        pn_plot_fit_text(cr, name, text_w);
        pn_plot_set_source(cr, pn_plot_ink());
        pn_plot_draw_text(cr, name, text_x, y, PN_PLOT_ALIGN_START, PN_PLOT_ALIGN_CENTER);
    }
    if (shown < d->num_rules) {
        char more[64];
        snprintf(more, sizeof more, "+ %d more", d->num_rules - shown);
        pn_plot_set_source(cr, pn_plot_axis_ink());
        pn_plot_draw_text(cr, more, text_x, top->y + 10.0 + shown * row, PN_PLOT_ALIGN_START,
                          PN_PLOT_ALIGN_CENTER);
    }
}

/* A light fill between the x axis and each unbroken run of finite points. */
static void fill_under(cairo_t *cr, const pn_plot_panel *p, const double *x, const double *y, int n)
{
    int start = -1;
    for (int j = 0; j <= n; ++j) {
        int ok = j < n && isfinite(x[j]) && isfinite(y[j]);
        if (ok && start < 0) {
            start = j;
            cairo_move_to(cr, pn_plot_px(p, x[j]), pn_plot_py(p, 0.0));
        }
        if (ok)
            cairo_line_to(cr, pn_plot_px(p, x[j]), pn_plot_py(p, y[j]));
        if (!ok && start >= 0) {
            cairo_line_to(cr, pn_plot_px(p, x[j - 1]), pn_plot_py(p, 0.0));
            cairo_close_path(cr);
            start = -1;
        }
    }
    cairo_set_source_rgba(cr, 0.12, 0.47, 0.71, 0.12);
    cairo_fill(cr);
}

static void fit_path_axes(const path_data *d, pn_plot_panel *top, pn_plot_panel *bottom)
{
    double xlo = INFINITY, xhi = -INFINITY, nmax = 0.0, emax = 0.0;
    for (int j = 0; j < d->num_points; ++j) {
        if (isfinite(d->x[j]))
            xlo = fmin(xlo, d->x[j]), xhi = fmax(xhi, d->x[j]);
        if (isfinite(d->error[j]))
            emax = fmax(emax, d->error[j]);
        for (int r = 0; r < d->num_rules; ++r) {
            double v = d->norm[(size_t)j * (size_t)d->num_rules + (size_t)r];
            if (isfinite(v))
                nmax = fmax(nmax, v);
        }
    }
    if (!(xhi >= xlo))
        xlo = xhi = 0.0;
    pn_plot_axis_fit(&top->xa, xlo, xhi, 10, 0);
    bottom->xa = top->xa;
    pn_plot_axis_fit(&top->ya, 0.0, nmax, 5, 1);
    pn_plot_axis_fit(&bottom->ya, 0.0, emax, 3, 1);
}

static void draw_path_plot(cairo_t *cr, const char *title, const path_data *d)
{
    const double plot_h = PN_PLOT_HEIGHT - PATH_TOP - PATH_GAP - PATH_BOTTOM;
    pn_plot_panel top = {
        .x = PATH_LEFT, .y = PATH_TOP, .w = PN_PLOT_WIDTH - PATH_LEFT - PATH_RIGHT};
    top.h = floor(0.62 * plot_h);
    pn_plot_panel bottom = top;
    bottom.y = top.y + top.h + PATH_GAP;
    bottom.h = plot_h - top.h;
    fit_path_axes(d, &top, &bottom);

    pn_plot_draw_title(cr, title, 0.5 * PATH_TOP - 2.0);
    pn_plot_draw_grid(cr, &top, 1);
    pn_plot_draw_grid(cr, &bottom, 1);

    cairo_save(cr);
    clip_to(cr, &top);
    for (int r = 0; r < d->num_rules; ++r)
        draw_series(cr, &top, d, d->norm + r, d->num_rules, r, r);
    cairo_restore(cr);

    cairo_save(cr);
    clip_to(cr, &bottom);
    fill_under(cr, &bottom, d->x, d->error, d->num_points);
    draw_series(cr, &bottom, d, d->error, 1, -1, 0);
    cairo_restore(cr);

    pn_plot_draw_frame(cr, &top, 1, 0);
    pn_plot_draw_frame(cr, &bottom, 1, 1);
    pn_plot_draw_y_title(cr, &top, "group norm \xE2\x80\x96w\xE1\xB5\xA3\xE2\x80\x96\xE2\x82\x82",
                         20.0);
    pn_plot_draw_y_title(cr, &bottom, "weighted error", 20.0);
    pn_plot_set_font(cr, 13.0, 0);
    pn_plot_set_source(cr, pn_plot_ink());
    pn_plot_draw_text(cr, "log\xE2\x82\x82(\xCE\xBBw)", bottom.x + 0.5 * bottom.w,
                      PN_PLOT_HEIGHT - 18.0, PN_PLOT_ALIGN_CENTER, PN_PLOT_ALIGN_END);
    draw_path_legend(cr, &top, &bottom, d);
}

pn_error pn_plot_path(const char *out_path, const char *title, int num_rules,
                      const char *const *names, int num_points, const double *log2_lambda_w,
                      const double *group_norm, const double *weighted_error, pn_error_info *info)
{
    if (num_rules < 1 || num_points < 1 || !log2_lambda_w || !group_norm || !weighted_error)
        return pn_fail(info, PN_ERR_INVALID, "%s: nothing to plot", out_path);
    pn_plot_canvas c;
    pn_error code = pn_plot_canvas_open(&c, out_path, PN_PLOT_WIDTH, PN_PLOT_HEIGHT, info);
    if (code != PN_OK)
        return code;
    path_data d = {num_rules, num_points, names, log2_lambda_w, group_norm, weighted_error};
    draw_path_plot(c.cr, title, &d);
    return pn_plot_canvas_close(&c, info);
}
