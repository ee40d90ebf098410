/* Axes and panels of the plots: fitting an axis to a range, ticks and
 * their labels, the pixel position of a value, the grid, the frame and
 * the axis titles. */
#include "plot_internal.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const double pi = 3.14159265358979323846;

static double nice_step(double range, int target_ticks)
{
    double raw = range / target_ticks;
    double mag = pow(10.0, floor(log10(raw)));
    double f = raw / mag;
    double nice = f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0;
    return nice * mag;
}

/* Fits an axis to [lo, hi]. With snap the range grows to whole ticks (value
 * axes from 0), otherwise it gets a 3% margin (the x axis). */
void pn_plot_axis_fit(pn_plot_axis *a, double lo, double hi, int target_ticks, int snap)
{
    if (!(hi > lo)) {
        double d = fabs(lo) > 0.0 ? 0.1 * fabs(lo) : 1.0;
        if (snap && lo == 0.0)
            hi = 1.0;
        else
            lo -= d, hi += d;
    }
    a->step = nice_step(hi - lo, target_ticks);
    if (snap) {
        a->lo = floor(lo / a->step + 1e-9) * a->step;
        a->hi = ceil(hi / a->step - 1e-9) * a->step;
    } else {
        double margin = 0.03 * (hi - lo);
        a->lo = lo - margin;
        a->hi = hi + margin;
    }
    double big = fmax(fabs(a->lo), fabs(a->hi));
    a->sci = a->step < 1e-3 || big >= 1e5;
}

static int tick_count(const pn_plot_axis *a, double *first)
{
    double k0 = ceil(a->lo / a->step - 1e-9);
    double k1 = floor(a->hi / a->step + 1e-9);
    *first = k0;
    return k1 >= k0 ? (int)(k1 - k0) + 1 : 0;
}

static double tick_value(const pn_plot_axis *a, double first, int j)
{
    double v = (first + j) * a->step;
    return fabs(v) < 1e-9 * a->step ? 0.0 : v;
}

/* "0", "0.25", "−5", "2.0e-4": decimals follow the tick step, negative
 * numbers get a real minus sign, exponents lose their leading zeros. */
static void tick_label(const pn_plot_axis *a, double v, char *buf, size_t size)
{
    char tmp[48];
    int step_exp = (int)floor(log10(a->step) + 1e-9);
    if (v == 0.0) {
        snprintf(tmp, sizeof tmp, "0");
    } else if (a->sci) {
        int digits = (int)floor(log10(fabs(v)) + 1e-9) - step_exp;
        snprintf(tmp, sizeof tmp, "%.*e", digits < 1 ? 1 : digits, v);
        char *e = strchr(tmp, 'e');
        if (e) {
            char *d = e + 1 + (e[1] == '-' || e[1] == '+');
            if (e[1] == '+')
                memmove(e + 1, e + 2, strlen(e + 2) + 1), --d;
            while (d[0] == '0' && d[1] != '\0')
                memmove(d, d + 1, strlen(d));
        }
    } else {
        snprintf(tmp, sizeof tmp, "%.*f", step_exp < 0 ? -step_exp : 0, v);
    }
    if (tmp[0] == '-')
        snprintf(buf, size, "\xE2\x88\x92%s", tmp + 1);
    else
        snprintf(buf, size, "%s", tmp);
}

double pn_plot_px(const pn_plot_panel *p, double v)
{
    return p->x + (v - p->xa.lo) / (p->xa.hi - p->xa.lo) * p->w;
}

double pn_plot_py(const pn_plot_panel *p, double v)
{
    return p->y + p->h - (v - p->ya.lo) / (p->ya.hi - p->ya.lo) * p->h;
}

/* Pixel centre, so that 1-pixel lines stay crisp in the PNG. */
double pn_plot_crisp(double v)
{
    return floor(v) + 0.5;
}

void pn_plot_draw_grid(cairo_t *cr, const pn_plot_panel *p, int vertical)
{
    double first;
    cairo_set_line_width(cr, 1.0);
    cairo_set_dash(cr, NULL, 0, 0.0);
    pn_plot_set_source(cr, pn_plot_grid_ink());
    int n = tick_count(&p->ya, &first);
    for (int j = 0; j < n; ++j) {
        double y = pn_plot_crisp(pn_plot_py(p, tick_value(&p->ya, first, j)));
        cairo_move_to(cr, p->x, y);
        cairo_line_to(cr, p->x + p->w, y);
    }
    n = vertical ? tick_count(&p->xa, &first) : 0;
    for (int j = 0; j < n; ++j) {
        double x = pn_plot_crisp(pn_plot_px(p, tick_value(&p->xa, first, j)));
        cairo_move_to(cr, x, p->y);
        cairo_line_to(cr, x, p->y + p->h);
    }
    cairo_stroke(cr);
}

/* The frame, the y ticks with labels and the x ticks (labels optional). */
void pn_plot_draw_frame(cairo_t *cr, const pn_plot_panel *p, int x_ticks, int x_labels)
{
    char label[64];
    double first;
    cairo_set_line_width(cr, 1.0);
    cairo_set_dash(cr, NULL, 0, 0.0);
    pn_plot_set_source(cr, pn_plot_axis_ink());
    cairo_rectangle(cr, pn_plot_crisp(p->x), pn_plot_crisp(p->y), floor(p->w), floor(p->h));
    int n = tick_count(&p->ya, &first);
    for (int j = 0; j < n; ++j) {
        double y = pn_plot_crisp(pn_plot_py(p, tick_value(&p->ya, first, j)));
        cairo_move_to(cr, pn_plot_crisp(p->x) - 5.0, y);
        cairo_line_to(cr, pn_plot_crisp(p->x), y);
    }
    int nx = x_ticks ? tick_count(&p->xa, &first) : 0;
    double xfirst = first;
    for (int j = 0; j < nx; ++j) {
        double x = pn_plot_crisp(pn_plot_px(p, tick_value(&p->xa, xfirst, j)));
        cairo_move_to(cr, x, pn_plot_crisp(p->y + p->h));
        cairo_line_to(cr, x, pn_plot_crisp(p->y + p->h) + 5.0);
    }
    cairo_stroke(cr);
    pn_plot_set_font(cr, 11.5, 0);
    pn_plot_set_source(cr, pn_plot_ink());
    n = tick_count(&p->ya, &first);
    for (int j = 0; j < n; ++j) {
        double v = tick_value(&p->ya, first, j);
        tick_label(&p->ya, v, label, sizeof label);
        pn_plot_draw_text(cr, label, p->x - 8.0, pn_plot_py(p, v), PN_PLOT_ALIGN_END,
                          PN_PLOT_ALIGN_CENTER);
    }
    for (int j = 0; x_labels && j < nx; ++j) {
        double v = tick_value(&p->xa, xfirst, j);
        tick_label(&p->xa, v, label, sizeof label);
        pn_plot_draw_text(cr, label, pn_plot_px(p, v), p->y + p->h + 8.0, PN_PLOT_ALIGN_CENTER,
                          PN_PLOT_ALIGN_START);
    }
}

/* An axis title turned by 90 degrees, centred on the pn_plot_panel's height. */
void pn_plot_draw_y_title(cairo_t *cr, const pn_plot_panel *p, const char *title, double x)
{
    cairo_save(cr);
    pn_plot_set_font(cr, 13.0, 0);
    pn_plot_set_source(cr, pn_plot_ink());
    cairo_translate(cr, x, p->y + 0.5 * p->h);
    cairo_rotate(cr, -0.5 * pi);
    pn_plot_draw_text(cr, title, 0.0, 0.0, PN_PLOT_ALIGN_CENTER, PN_PLOT_ALIGN_CENTER);
    cairo_restore(cr);
}
