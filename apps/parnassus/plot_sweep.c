/* The figure of `parnassus sweep --plot` (see plot_sweep.h), drawn with the
 * helpers of plot_internal.h. */
#include "plot_sweep.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot_internal.h"

enum {
    LEFT = 88,
    RIGHT = 200, /* room for the legends */
    TOP = 78,
    GAP = 30,
    BOTTOM = 60,
    LEGEND_ROW = 19,
};

static const double pi = 3.14159265358979323846;

static void set_rgb(cairo_t *cr, pn_plot_rgb c)
{
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
}

static void clip_to(cairo_t *cr, const pn_plot_panel *p)
{
    cairo_rectangle(cr, p->x - 6.0, p->y - 6.0, p->w + 12.0, p->h + 12.0);
    cairo_clip(cr);
}

static void dot(cairo_t *cr, double x, double y, double r)
{
    cairo_new_sub_path(cr);
    cairo_arc(cr, x, y, r, 0.0, 2.0 * pi);
    cairo_fill(cr);
}

/* A line through the finite points (gaps break it) with a dot on each. */
static void draw_series(cairo_t *cr, const pn_plot_panel *p, const double *x, const double *v,
                        int n, double scale, pn_plot_rgb c)
{
    set_rgb(cr, c);
    cairo_set_dash(cr, NULL, 0, 0.0);
    cairo_set_line_width(cr, 2.0);
    int pen_down = 0;
    for (int j = 0; j < n; ++j) {
        if (!isfinite(v[j])) {
            pen_down = 0;
            continue;
        }
        const double px = pn_plot_px(p, x[j]), py = pn_plot_py(p, scale * v[j]);
        if (pen_down)
            cairo_line_to(cr, px, py);
        else
            cairo_move_to(cr, px, py);
        pen_down = 1;
    }
    cairo_stroke(cr);
    for (int j = 0; j < n; ++j)
        if (isfinite(v[j]))
            dot(cr, pn_plot_px(p, x[j]), pn_plot_py(p, scale * v[j]), 3.4);
}

/* A dashed horizontal line at v across the panel. */
static void draw_level(cairo_t *cr, const pn_plot_panel *p, double v, pn_plot_rgb c)
{
    static const double dash[] = {6.0, 4.0};
    if (!isfinite(v))
        return;
    set_rgb(cr, c);
    cairo_set_dash(cr, dash, 2, 0.0);
    cairo_set_line_width(cr, 1.4);
    cairo_move_to(cr, p->x, pn_plot_py(p, v));
    cairo_line_to(cr, p->x + p->w, pn_plot_py(p, v));
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0.0);
}

/* One legend row in the right margin: a sample (line with a dot, a dashed
 * line, or an error bar) and the label. */
typedef enum sample_kind { SAMPLE_LINE, SAMPLE_DASHED, SAMPLE_BAR } sample_kind;

static void legend_row(cairo_t *cr, const pn_plot_panel *p, int row, const char *label,
                       pn_plot_rgb c, sample_kind kind)
{
    const double x0 = p->x + p->w + 16.0, y = p->y + 10.0 + row * LEGEND_ROW;
    const double text_x = x0 + 34.0, text_w = PN_SWEEP_PLOT_WIDTH - text_x - 6.0;
    set_rgb(cr, c);
    cairo_set_line_width(cr, 2.0);
    if (kind == SAMPLE_BAR) {
        cairo_move_to(cr, x0 + 13.0, y - 7.0);
        cairo_line_to(cr, x0 + 13.0, y + 7.0);
        cairo_move_to(cr, x0 + 8.0, y - 7.0);
        cairo_line_to(cr, x0 + 18.0, y - 7.0);
        cairo_move_to(cr, x0 + 8.0, y + 7.0);
        cairo_line_to(cr, x0 + 18.0, y + 7.0);
        cairo_stroke(cr);
    } else {
        static const double dash[] = {6.0, 4.0};
        cairo_set_dash(cr, kind == SAMPLE_DASHED ? dash : NULL, kind == SAMPLE_DASHED ? 2 : 0, 0.0);
        cairo_move_to(cr, x0, y);
        cairo_line_to(cr, x0 + 26.0, y);
        cairo_stroke(cr);
        cairo_set_dash(cr, NULL, 0, 0.0);
        if (kind == SAMPLE_LINE)
            dot(cr, x0 + 13.0, y, 3.4);
    }
    char text[256];
    pn_plot_clean_text(label ? label : "", text, sizeof text);
    pn_plot_set_font(cr, 12.0, 0);
    pn_plot_fit_text(cr, text, text_w);
    set_rgb(cr, pn_plot_ink());
    pn_plot_draw_text(cr, text, text_x, y, PN_PLOT_ALIGN_START, PN_PLOT_ALIGN_CENTER);
}

/* The largest finite value of n points of each of `count` series. */
static double series_max(const double *const *v, int count, int n)
{
    double m = 0.0;
    for (int s = 0; s < count; ++s)
        for (int j = 0; v[s] && j < n; ++j)
            if (isfinite(v[s][j]))
                m = fmax(m, v[s][j]);
    return m;
}

static void draw_kept(cairo_t *cr, pn_plot_panel p, const pn_sweep_plot *d)
{
    /* from 0 to every rule: whole ticks, the top of the panel is "all kept" */
    const double all = d->num_rules > 0 ? d->num_rules : 1.0;
    pn_plot_axis_fit(&p.ya, 0.0, all, 5, 1);
    p.ya.step = fmax(p.ya.step, 1.0);
    p.ya.hi = all;
    pn_plot_draw_grid(cr, &p, 1);
    cairo_save(cr);
    clip_to(cr, &p);
    const pn_plot_rgb bar = pn_plot_color(0);
    set_rgb(cr, bar);
    cairo_set_line_width(cr, 1.6);
    for (int j = 0; j < d->num_points; ++j) {
        const double x = pn_plot_px(&p, d->x[j]);
        const double lo = pn_plot_py(&p, d->kept_min[j]), hi = pn_plot_py(&p, d->kept_max[j]);
        cairo_move_to(cr, x, lo);
        cairo_line_to(cr, x, hi);
        cairo_move_to(cr, x - 6.0, lo);
        cairo_line_to(cr, x + 6.0, lo);
        cairo_move_to(cr, x - 6.0, hi);
        cairo_line_to(cr, x + 6.0, hi);
    }
    cairo_stroke(cr);
    set_rgb(cr, pn_plot_ink());
    cairo_set_line_width(cr, 2.0);
    for (int j = 0; j < d->num_points; ++j) {
        const double x = pn_plot_px(&p, d->x[j]), y = pn_plot_py(&p, d->kept_median[j]);
        if (j == 0)
            cairo_move_to(cr, x, y);
        else
            cairo_line_to(cr, x, y);
    }
    cairo_stroke(cr);
    for (int j = 0; j < d->num_points; ++j)
        dot(cr, pn_plot_px(&p, d->x[j]), pn_plot_py(&p, d->kept_median[j]), 3.4);
    cairo_restore(cr);
    pn_plot_draw_frame(cr, &p, 1, 0);
    pn_plot_draw_y_title(cr, &p, "rules kept", 22.0);
    legend_row(cr, &p, 0, "median over the steps", pn_plot_ink(), SAMPLE_LINE);
    legend_row(cr, &p, 1, "min \xE2\x80\x93 max", bar, SAMPLE_BAR);
}

static void draw_tv(cairo_t *cr, pn_plot_panel p, const pn_sweep_plot *d)
{
    const double top = series_max(d->tv, PN_SWEEP_PLOT_TV, d->num_points);
    pn_plot_axis_fit(&p.ya, 0.0, fmin(fmax(top * 1.05, 0.05), 1.0), 5, 1);
    pn_plot_draw_grid(cr, &p, 1);
    cairo_save(cr);
    clip_to(cr, &p);
    for (int s = 0; s < PN_SWEEP_PLOT_TV; ++s)
        if (d->tv[s])
            draw_series(cr, &p, d->x, d->tv[s], d->num_points, 1.0, pn_plot_color(s));
    cairo_restore(cr);
    pn_plot_draw_frame(cr, &p, 1, 0);
    pn_plot_draw_y_title(cr, &p, "TV distance to the reference", 22.0);
    for (int s = 0; s < PN_SWEEP_PLOT_TV; ++s)
        legend_row(cr, &p, s, d->tv_label[s], pn_plot_color(s), SAMPLE_LINE);
}

static void draw_shares(cairo_t *cr, pn_plot_panel p, const pn_sweep_plot *d)
{
    double top = series_max(d->share, PN_SWEEP_PLOT_SHARES, d->num_points);
    for (int s = 0; s < PN_SWEEP_PLOT_SHARES; ++s)
        if (isfinite(d->share_reference[s]))
            top = fmax(top, d->share_reference[s]);
    pn_plot_axis_fit(&p.ya, 0.0, fmin(fmax(100.0 * top * 1.05, 1.0), 100.0), 5, 1);
    pn_plot_draw_grid(cr, &p, 1);
    cairo_save(cr);
    clip_to(cr, &p);
    for (int s = 0; s < PN_SWEEP_PLOT_SHARES; ++s)
        draw_level(cr, &p, 100.0 * d->share_reference[s], pn_plot_color(5 + s));
    for (int s = 0; s < PN_SWEEP_PLOT_SHARES; ++s)
        if (d->share[s])
            draw_series(cr, &p, d->x, d->share[s], d->num_points, 100.0, pn_plot_color(5 + s));
    cairo_restore(cr);
    pn_plot_draw_frame(cr, &p, 1, 1);
    pn_plot_draw_y_title(cr, &p, "share (%)", 22.0);
    for (int s = 0; s < PN_SWEEP_PLOT_SHARES; ++s)
        legend_row(cr, &p, s, d->share_label[s], pn_plot_color(5 + s), SAMPLE_LINE);
    if (d->reference_label) {
        char label[200];
        snprintf(label, sizeof label, "dashed: %s", d->reference_label);
        legend_row(cr, &p, PN_SWEEP_PLOT_SHARES, label, pn_plot_ink(), SAMPLE_DASHED);
    }
}

static void draw_heading(cairo_t *cr, const char *text, double size, int bold, double y)
{
    char clean[512];
    pn_plot_clean_text(text ? text : "", clean, sizeof clean);
    pn_plot_set_font(cr, size, bold);
    pn_plot_fit_text(cr, clean, PN_SWEEP_PLOT_WIDTH - 40.0);
    set_rgb(cr, pn_plot_ink());
    pn_plot_draw_text(cr, clean, 0.5 * PN_SWEEP_PLOT_WIDTH, y, PN_PLOT_ALIGN_CENTER,
                      PN_PLOT_ALIGN_CENTER);
}

pn_error pn_plot_sweep(const char *out_path, const pn_sweep_plot *d, pn_error_info *info)
{
    if (!d || d->num_points < 1 || !d->x || !d->kept_min || !d->kept_median || !d->kept_max)
        return pn_fail(info, PN_ERR_INVALID, "%s: nothing to plot", out_path);
    pn_plot_canvas c;
    pn_error code =
        pn_plot_canvas_open(&c, out_path, PN_SWEEP_PLOT_WIDTH, PN_SWEEP_PLOT_HEIGHT, info);
    if (code != PN_OK)
        return code;
    cairo_t *cr = c.cr;
    draw_heading(cr, d->title, 16.0, 1, 24.0);
    draw_heading(cr, d->subtitle, 12.5, 0, 48.0);

    pn_plot_panel p;
    memset(&p, 0, sizeof p);
    p.x = LEFT;
    p.w = PN_SWEEP_PLOT_WIDTH - LEFT - RIGHT;
    p.h = floor((PN_SWEEP_PLOT_HEIGHT - TOP - BOTTOM - 2.0 * GAP) / 3.0);
    double lo = d->x[0], hi = d->x[d->num_points - 1];
    pn_plot_axis_fit(&p.xa, lo, hi, 8, 0);
    if (d->num_points > 1) {
        /* room for the end caps of the bars */
        const double margin = 0.04 * (hi - lo);
        p.xa.lo = lo - margin;
        p.xa.hi = hi + margin;
    }
    p.y = TOP;
    draw_kept(cr, p, d);
    p.y += p.h + GAP;
    draw_tv(cr, p, d);
    p.y += p.h + GAP;
    draw_shares(cr, p, d);

    char x_title[128];
    pn_plot_clean_text(d->x_title ? d->x_title : "", x_title, sizeof x_title);
    pn_plot_set_font(cr, 13.5, 0);
    set_rgb(cr, pn_plot_ink());
    pn_plot_draw_text(cr, x_title, p.x + 0.5 * p.w, PN_SWEEP_PLOT_HEIGHT - 14.0,
                      PN_PLOT_ALIGN_CENTER, PN_PLOT_ALIGN_END);
    return pn_plot_canvas_close(&c, info);
}
