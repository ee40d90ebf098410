/* Colours, dashes and markers of the plots: the categorical palette, the
 * inks of text, axes and grid, and the style of series i. */
#include "plot_internal.h"

#include <cairo.h>

typedef pn_plot_rgb rgb;

/* Ten distinct colours (the usual categorical palette of plotting tools);
 * beyond ten rules the colours repeat with another dash and marker. */
static const rgb palette[10] = {
    {0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173}, {0.839, 0.153, 0.157},
    {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294}, {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498},
    {0.737, 0.741, 0.133}, {0.090, 0.745, 0.812},
};

static const rgb ink = {0.15, 0.15, 0.15};
static const rgb axis_ink = {0.35, 0.35, 0.35};
static const rgb grid_ink = {0.89, 0.89, 0.89};

static const double dash_long[] = {7.0, 3.5};
static const double dash_dot[] = {1.5, 3.0};
static const double dash_mixed[] = {7.0, 3.0, 1.5, 3.0};

static const double pi = 3.14159265358979323846;

void pn_plot_set_source(cairo_t *cr, rgb c)
{
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
}

/* Series i: colour i mod 10, dash and marker (i / 10) mod 4; a negative i
 * is the dark solid line of a single series. */
void pn_plot_series_style(cairo_t *cr, int i, pn_plot_marker *mark)
{
    int variant = i < 0 ? 0 : (i / 10) % 4;
    pn_plot_set_source(cr, i < 0 ? ink : palette[i % 10]);
    switch (variant) {
    case 1:
        cairo_set_dash(cr, dash_long, 2, 0.0);
        break;
    case 2:
        cairo_set_dash(cr, dash_dot, 2, 0.0);
        break;
    case 3:
        cairo_set_dash(cr, dash_mixed, 4, 0.0);
        break;
    default:
        cairo_set_dash(cr, NULL, 0, 0.0);
        break;
    }
    *mark = (pn_plot_marker)variant;
}

void pn_plot_draw_marker(cairo_t *cr, pn_plot_marker mark, double x, double y, double r)
{
    cairo_new_sub_path(cr);
    switch (mark) {
    case PN_PLOT_MARK_SQUARE:
        cairo_rectangle(cr, x - r * 0.9, y - r * 0.9, 1.8 * r, 1.8 * r);
        break;
    case PN_PLOT_MARK_TRIANGLE:
        cairo_move_to(cr, x, y - 1.2 * r);
        cairo_line_to(cr, x + 1.1 * r, y + 0.8 * r);
        cairo_line_to(cr, x - 1.1 * r, y + 0.8 * r);
        cairo_close_path(cr);
        break;
    case PN_PLOT_MARK_DIAMOND:
        cairo_move_to(cr, x, y - 1.3 * r);
        cairo_line_to(cr, x + 1.1 * r, y);
        cairo_line_to(cr, x, y + 1.3 * r);
        cairo_line_to(cr, x - 1.1 * r, y);
        cairo_close_path(cr);
        break;
    default:
        cairo_arc(cr, x, y, r, 0.0, 2.0 * pi);
        break;
    }
    cairo_fill(cr);
}

pn_plot_rgb pn_plot_color(int i)
{
    return palette[((i % 10) + 10) % 10];
}

pn_plot_rgb pn_plot_ink(void)
{
    return ink;
}

pn_plot_rgb pn_plot_axis_ink(void)
{
    return axis_ink;
}

pn_plot_rgb pn_plot_grid_ink(void)
{
    return grid_ink;
}
