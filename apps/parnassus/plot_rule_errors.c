/* Fig. 4 of the paper: the per-rule errors of two realizations as
 * grouped bars, the rules selected in the first in bold. */
#include "plot.h"
#include "plot_internal.h"

#include <cairo.h>
#include <math.h>
#include <stdio.h>

enum {
    BARS_LEFT = 88,
    BARS_RIGHT = 24,
    BARS_TOP = 50,
    BARS_BOTTOM = 72,
};

typedef struct bar_data {
    int num_rules;
    const char *const *names;
    const double *values[2];
    const char *labels[2];
    int num_series;
    const unsigned char *selected;
} bar_data;

/* Rule names as tick labels when every one fits its slot, else numbers. */
static int names_fit(cairo_t *cr, const bar_data *d, double slot)
{
    if (!d->names)
        return 0;
    pn_plot_set_font(cr, 11.5, 1);
    for (int r = 0; r < d->num_rules; ++r) {
        char name[PN_PLOT_TEXT_MAX];
        pn_plot_clean_text(d->names[r] ? d->names[r] : "", name, sizeof name);
        if (name[0] == '\0' || pn_plot_text_width(cr, name) > slot - 6.0)
            return 0;
    }
    return 1;
}

static void draw_bar_ticks(cairo_t *cr, const pn_plot_panel *p, const bar_data *d)
{
    double slot = p->w / d->num_rules;
    int use_names = names_fit(cr, d, slot);
    pn_plot_set_font(cr, 11.5, 0);
    int every = (int)ceil(pn_plot_text_width(cr, "000") / (slot - 4.0 > 1.0 ? slot - 4.0 : 1.0));
    every = use_names || every < 1 ? 1 : every;
    for (int r = 0; r < d->num_rules; ++r) {
        double x = p->x + (r + 0.5) * slot;
        pn_plot_set_source(cr, pn_plot_axis_ink());
        cairo_set_line_width(cr, 1.0);
        cairo_move_to(cr, pn_plot_crisp(x), pn_plot_crisp(p->y + p->h));
        cairo_line_to(cr, pn_plot_crisp(x), pn_plot_crisp(p->y + p->h) + 4.0);
        cairo_stroke(cr);
        int bold = d->selected && d->selected[r];
        if ((r + 1) % every != 0 && r != 0 && !bold)
            continue;
        char label[PN_PLOT_TEXT_MAX];
        if (use_names)
            pn_plot_clean_text(d->names[r], label, sizeof label);
        else
            snprintf(label, sizeof label, "%d", r + 1);
        pn_plot_set_font(cr, 11.5, bold);
        pn_plot_set_source(cr, bold ? pn_plot_ink() : pn_plot_axis_ink());
        pn_plot_draw_text(cr, label, x, p->y + p->h + 8.0, PN_PLOT_ALIGN_CENTER,
                          PN_PLOT_ALIGN_START);
    }
}

static void draw_bars(cairo_t *cr, const pn_plot_panel *p, const bar_data *d)
{
    double slot = p->w / d->num_rules;
    double group_w = fmin(0.76 * slot, 80.0);
    double bar_w = group_w / d->num_series;
    for (int s = 0; s < d->num_series; ++s) {
        const pn_plot_rgb c = pn_plot_color(s);
        for (int r = 0; r < d->num_rules; ++r) {
            double v = d->values[s][r];
            if (!isfinite(v) || v <= 0.0)
                continue;
            double x = p->x + (r + 0.5) * slot - 0.5 * group_w + s * bar_w;
            double y = pn_plot_py(p, fmin(v, p->ya.hi));
            cairo_rectangle(cr, x + 0.5, y, bar_w - 1.0, pn_plot_py(p, 0.0) - y);
            cairo_set_source_rgb(cr, c.r, c.g, c.b);
            cairo_fill_preserve(cr);
            cairo_set_source_rgb(cr, 0.6 * c.r, 0.6 * c.g, 0.6 * c.b);
            cairo_set_line_width(cr, 0.8);
            cairo_stroke(cr);
        }
    }
}

/* A boxed legend inside the pn_plot_panel's upper right corner. */
static void draw_bar_legend(cairo_t *cr, const pn_plot_panel *p, const bar_data *d)
{
    char label[2][PN_PLOT_TEXT_MAX];
    double width = 0.0;
    pn_plot_set_font(cr, 12.0, 0);
    for (int s = 0; s < d->num_series; ++s) {
        pn_plot_clean_text(d->labels[s] ? d->labels[s] : (s ? "b" : "a"), label[s],
                           sizeof label[s]);
        pn_plot_fit_text(cr, label[s], 0.4 * p->w);
        width = fmax(width, pn_plot_text_width(cr, label[s]));
    }
    double box_w = width + 44.0, box_h = 10.0 + 20.0 * d->num_series;
    double bx = p->x + p->w - box_w - 10.0, by = p->y + 10.0;
    cairo_rectangle(cr, pn_plot_crisp(bx), pn_plot_crisp(by), floor(box_w), floor(box_h));
    cairo_set_source_rgba(cr, 1.0, 1.0, 1.0, 0.92);
    cairo_fill_preserve(cr);
    pn_plot_set_source(cr, pn_plot_grid_ink());
    cairo_set_line_width(cr, 1.0);
    cairo_stroke(cr);
    for (int s = 0; s < d->num_series; ++s) {
        double y = by + 15.0 + 20.0 * s;
        pn_plot_set_source(cr, pn_plot_color(s));
        cairo_rectangle(cr, bx + 10.0, y - 6.0, 18.0, 12.0);
        cairo_fill(cr);
        pn_plot_set_source(cr, pn_plot_ink());
        pn_plot_draw_text(cr, label[s], bx + 36.0, y, PN_PLOT_ALIGN_START, PN_PLOT_ALIGN_CENTER);
    }
}

static void draw_bar_plot(cairo_t *cr, const char *title, const bar_data *d)
{
    pn_plot_panel p = {.x = BARS_LEFT, .y = BARS_TOP};
    p.w = PN_PLOT_WIDTH - BARS_LEFT - BARS_RIGHT;
    p.h = PN_PLOT_HEIGHT - BARS_TOP - BARS_BOTTOM;
    double vmax = 0.0;
    for (int s = 0; s < d->num_series; ++s)
        for (int r = 0; r < d->num_rules; ++r)
            if (isfinite(d->values[s][r]))
                vmax = fmax(vmax, d->values[s][r]);
    p.xa = (pn_plot_axis){.lo = 0.0, .hi = d->num_rules, .step = 1.0};
    pn_plot_axis_fit(&p.ya, 0.0, vmax * 1.08, 5, 1);

    pn_plot_draw_title(cr, title, 0.5 * BARS_TOP - 2.0);
    pn_plot_draw_grid(cr, &p, 0);
    draw_bars(cr, &p, d);
    pn_plot_draw_frame(cr, &p, 0, 0);
    draw_bar_ticks(cr, &p, d);
    pn_plot_draw_y_title(cr, &p,
                         "error \xE2\x80\x96"
                         "A\xE1\xB5\xA3p \xE2\x88\x92 b\xE1\xB5\xA3\xE2\x80\x96\xE2\x82\x82",
                         20.0);
    pn_plot_set_font(cr, 13.0, 0);
    pn_plot_set_source(cr, pn_plot_ink());
    pn_plot_draw_text(cr, d->selected ? "rule (bold: selected)" : "rule", p.x + 0.5 * p.w,
                      PN_PLOT_HEIGHT - 14.0, PN_PLOT_ALIGN_CENTER, PN_PLOT_ALIGN_END);
    draw_bar_legend(cr, &p, d);
}

pn_error pn_plot_rule_errors(const char *out_path, const char *title, int num_rules,
                             const char *const *names, const double *errors_a, const char *label_a,
                             const double *errors_b, const char *label_b,
                             const unsigned char *selected_a, pn_error_info *info)
{
    if (num_rules < 1 || !errors_a)
        return pn_fail(info, PN_ERR_INVALID, "%s: nothing to plot", out_path);
    pn_plot_canvas c;
    pn_error code = pn_plot_canvas_open(&c, out_path, PN_PLOT_WIDTH, PN_PLOT_HEIGHT, info);
    if (code != PN_OK)
        return code;
    bar_data d = {num_rules,        names,     {errors_a, errors_b}, {label_a, label_b},
                  errors_b ? 2 : 1, selected_a};
    draw_bar_plot(c.cr, title, &d);
    return pn_plot_canvas_close(&c, info);
}
