#include "plot.h"
#include "plot_internal.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Styles                                                              */

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

typedef enum marker { MARK_CIRCLE, MARK_SQUARE, MARK_TRIANGLE, MARK_DIAMOND } marker;

static const double dash_long[] = {7.0, 3.5};
static const double dash_dot[] = {1.5, 3.0};
static const double dash_mixed[] = {7.0, 3.0, 1.5, 3.0};

static const char font_family[] = "sans-serif";
static const double pi = 3.14159265358979323846;

enum { TEXT_MAX = 512 };

static void set_source(cairo_t *cr, rgb c)
{
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
}

/* Series i: colour i mod 10, dash and marker (i / 10) mod 4; a negative i
 * is the dark solid line of a single series. */
static void series_style(cairo_t *cr, int i, marker *mark)
{
    int variant = i < 0 ? 0 : (i / 10) % 4;
    set_source(cr, i < 0 ? ink : palette[i % 10]);
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
    *mark = (marker)variant;
}

static void draw_marker(cairo_t *cr, marker mark, double x, double y, double r)
{
    cairo_new_sub_path(cr);
    switch (mark) {
    case MARK_SQUARE:
        cairo_rectangle(cr, x - r * 0.9, y - r * 0.9, 1.8 * r, 1.8 * r);
        break;
    case MARK_TRIANGLE:
        cairo_move_to(cr, x, y - 1.2 * r);
        cairo_line_to(cr, x + 1.1 * r, y + 0.8 * r);
        cairo_line_to(cr, x - 1.1 * r, y + 0.8 * r);
        cairo_close_path(cr);
        break;
    case MARK_DIAMOND:
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

/* ------------------------------------------------------------------ */
/* Text                                                                */

/* Length of the valid UTF-8 sequence at s, or 0 if there is none. */
static size_t utf8_sequence(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned long cp, min;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2, cp = c & 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3, cp = c & 0x0F, min = 0x800;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4, cp = c & 0x07, min = 0x10000;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; ++i) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* Copies text for cairo, which refuses invalid UTF-8: invalid bytes and
 * control characters become '?'. Cut on a character boundary. */
static void clean_text(const char *in, char *out, size_t size)
{
    const unsigned char *s = (const unsigned char *)in;
    size_t o = 0;
    while (*s) {
        size_t n = utf8_sequence(s);
        if (n == 0 || (n == 1 && (*s < 0x20 || *s == 0x7F))) {
            if (o + 1 >= size)
                break;
            out[o++] = '?';
            s += n ? n : 1;
            continue;
        }
        if (o + n >= size)
            break;
        memcpy(out + o, s, n);
        o += n;
        s += n;
    }
    out[o] = '\0';
}

static void set_font(cairo_t *cr, double size, int bold)
{
    cairo_select_font_face(cr, font_family, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

static double text_width(cairo_t *cr, const char *s)
{
    cairo_text_extents_t te;
    cairo_text_extents(cr, s, &te);
    return te.x_advance;
}

typedef pn_plot_align align;
#define ALIGN_START  PN_PLOT_ALIGN_START
#define ALIGN_CENTER PN_PLOT_ALIGN_CENTER
#define ALIGN_END    PN_PLOT_ALIGN_END

/* Draws s (already clean) with its box anchored at (x, y): horizontally by
 * its advance, vertically by the font's ascent and descent. */
static void draw_text(cairo_t *cr, const char *s, double x, double y, align h, align v)
{
    cairo_font_extents_t fe;
    cairo_font_extents(cr, &fe);
    double w = text_width(cr, s);
    double dx = h == ALIGN_START ? 0.0 : h == ALIGN_CENTER ? -0.5 * w : -w;
    double dy = v == ALIGN_START    ? fe.ascent
                : v == ALIGN_CENTER ? 0.5 * (fe.ascent - fe.descent)
                                    : -fe.descent;
    cairo_move_to(cr, x + dx, y + dy);
    cairo_show_text(cr, s);
}

/* Shortens s in place with a trailing ellipsis until it fits max_width. */
static void fit_text(cairo_t *cr, char *s, double max_width)
{
    static const char ellipsis[] = "\xE2\x80\xA6";
    if (text_width(cr, s) <= max_width)
        return;
    size_t len = strlen(s);
    char buf[TEXT_MAX + 4];
    while (len > 0) {
        do
            --len;
        while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80);
        memcpy(buf, s, len);
        memcpy(buf + len, ellipsis, sizeof ellipsis);
        if (text_width(cr, buf) <= max_width)
            break;
    }
    if (len == 0)
        memcpy(buf, ellipsis, sizeof ellipsis);
    memcpy(s, buf, strlen(buf) + 1);
}

/* ------------------------------------------------------------------ */
/* Axes                                                                */

typedef pn_plot_axis axis;

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
static void axis_fit(axis *a, double lo, double hi, int target_ticks, int snap)
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

static int tick_count(const axis *a, double *first)
{
    double k0 = ceil(a->lo / a->step - 1e-9);
    double k1 = floor(a->hi / a->step + 1e-9);
    *first = k0;
    return k1 >= k0 ? (int)(k1 - k0) + 1 : 0;
}

static double tick_value(const axis *a, double first, int j)
{
    double v = (first + j) * a->step;
    return fabs(v) < 1e-9 * a->step ? 0.0 : v;
}

/* "0", "0.25", "−5", "2.0e-4": decimals follow the tick step, negative
 * numbers get a real minus sign, exponents lose their leading zeros. */
static void tick_label(const axis *a, double v, char *buf, size_t size)
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

typedef pn_plot_panel panel;

static double px(const panel *p, double v)
{
    return p->x + (v - p->xa.lo) / (p->xa.hi - p->xa.lo) * p->w;
}

static double py(const panel *p, double v)
{
    return p->y + p->h - (v - p->ya.lo) / (p->ya.hi - p->ya.lo) * p->h;
}

/* Pixel centre, so that 1-pixel lines stay crisp in the PNG. */
static double crisp(double v)
{
    return floor(v) + 0.5;
}

static void draw_grid(cairo_t *cr, const panel *p, int vertical)
{
    double first;
    cairo_set_line_width(cr, 1.0);
    cairo_set_dash(cr, NULL, 0, 0.0);
    set_source(cr, grid_ink);
    int n = tick_count(&p->ya, &first);
    for (int j = 0; j < n; ++j) {
        double y = crisp(py(p, tick_value(&p->ya, first, j)));
        cairo_move_to(cr, p->x, y);
        cairo_line_to(cr, p->x + p->w, y);
    }
    n = vertical ? tick_count(&p->xa, &first) : 0;
    for (int j = 0; j < n; ++j) {
        double x = crisp(px(p, tick_value(&p->xa, first, j)));
        cairo_move_to(cr, x, p->y);
        cairo_line_to(cr, x, p->y + p->h);
    }
    cairo_stroke(cr);
}

/* The frame, the y ticks with labels and the x ticks (labels optional). */
static void draw_frame(cairo_t *cr, const panel *p, int x_ticks, int x_labels)
{
    char label[64];
    double first;
    cairo_set_line_width(cr, 1.0);
    cairo_set_dash(cr, NULL, 0, 0.0);
    set_source(cr, axis_ink);
    cairo_rectangle(cr, crisp(p->x), crisp(p->y), floor(p->w), floor(p->h));
    int n = tick_count(&p->ya, &first);
    for (int j = 0; j < n; ++j) {
        double y = crisp(py(p, tick_value(&p->ya, first, j)));
        cairo_move_to(cr, crisp(p->x) - 5.0, y);
        cairo_line_to(cr, crisp(p->x), y);
    }
    int nx = x_ticks ? tick_count(&p->xa, &first) : 0;
    double xfirst = first;
    for (int j = 0; j < nx; ++j) {
        double x = crisp(px(p, tick_value(&p->xa, xfirst, j)));
        cairo_move_to(cr, x, crisp(p->y + p->h));
        cairo_line_to(cr, x, crisp(p->y + p->h) + 5.0);
    }
    cairo_stroke(cr);
    set_font(cr, 11.5, 0);
    set_source(cr, ink);
    n = tick_count(&p->ya, &first);
    for (int j = 0; j < n; ++j) {
        double v = tick_value(&p->ya, first, j);
        tick_label(&p->ya, v, label, sizeof label);
        draw_text(cr, label, p->x - 8.0, py(p, v), ALIGN_END, ALIGN_CENTER);
    }
    for (int j = 0; x_labels && j < nx; ++j) {
        double v = tick_value(&p->xa, xfirst, j);
        tick_label(&p->xa, v, label, sizeof label);
        draw_text(cr, label, px(p, v), p->y + p->h + 8.0, ALIGN_CENTER, ALIGN_START);
    }
}

/* An axis title turned by 90 degrees, centred on the panel's height. */
static void draw_y_title(cairo_t *cr, const panel *p, const char *title, double x)
{
    cairo_save(cr);
    set_font(cr, 13.0, 0);
    set_source(cr, ink);
    cairo_translate(cr, x, p->y + 0.5 * p->h);
    cairo_rotate(cr, -0.5 * pi);
    draw_text(cr, title, 0.0, 0.0, ALIGN_CENTER, ALIGN_CENTER);
    cairo_restore(cr);
}

static void draw_title(cairo_t *cr, const char *title, double y)
{
    char clean[TEXT_MAX];
    clean_text(title ? title : "", clean, sizeof clean);
    set_font(cr, 15.0, 1);
    fit_text(cr, clean, PN_PLOT_WIDTH - 40.0);
    set_source(cr, ink);
    draw_text(cr, clean, 0.5 * PN_PLOT_WIDTH, y, ALIGN_CENTER, ALIGN_CENTER);
}

/* ------------------------------------------------------------------ */
/* Surfaces                                                            */

typedef pn_plot_canvas canvas;

static int fail(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen > 0) {
        va_list args;
        va_start(args, fmt);
        vsnprintf(err, errlen, fmt, args);
        va_end(args);
    }
    return -1;
}

/* 1 for ".png", 0 for ".svg" (any case), -1 otherwise. */
static int png_by_extension(const char *path)
{
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (!dot || (slash && slash > dot) || strlen(dot) != 4)
        return -1;
    char ext[4];
    for (int i = 0; i < 3; ++i)
        ext[i] =
            (char)(dot[i + 1] >= 'A' && dot[i + 1] <= 'Z' ? dot[i + 1] - 'A' + 'a' : dot[i + 1]);
    ext[3] = '\0';
    return strcmp(ext, "png") == 0 ? 1 : strcmp(ext, "svg") == 0 ? 0 : -1;
}

void pn_plot_shutdown(void)
{
    cairo_debug_reset_static_data();
    FcFini();
}

int pn_plot_format_known(const char *out_path)
{
    return png_by_extension(out_path) >= 0;
}

static int canvas_open_size(canvas *c, const char *path, int width, int height, char *err,
                            size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->path = path;
    c->png = png_by_extension(path);
    if (c->png < 0)
        return fail(err, errlen, "%s: the plot file name must end in .png or .svg", path);
    if (c->png) {
        c->surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, width, height);
    } else {
        c->surface = cairo_svg_surface_create(path, width, height);
        cairo_svg_surface_set_document_unit(c->surface, CAIRO_SVG_UNIT_PX);
    }
    cairo_status_t st = cairo_surface_status(c->surface);
    if (st == CAIRO_STATUS_SUCCESS) {
        c->cr = cairo_create(c->surface);
        st = cairo_status(c->cr);
    }
    if (st != CAIRO_STATUS_SUCCESS) {
        if (c->cr)
            cairo_destroy(c->cr);
        cairo_surface_destroy(c->surface);
        return fail(err, errlen, "%s: cannot create the plot: %s", path,
                    cairo_status_to_string(st));
    }
    cairo_set_source_rgb(c->cr, 1.0, 1.0, 1.0);
    cairo_paint(c->cr);
    cairo_set_line_join(c->cr, CAIRO_LINE_JOIN_ROUND);
    return 0;
}

static int canvas_open(canvas *c, const char *path, char *err, size_t errlen)
{
    return canvas_open_size(c, path, PN_PLOT_WIDTH, PN_PLOT_HEIGHT, err, errlen);
}

/* Writes the file (PNG) or finishes it (SVG) and frees everything. A file
 * that could not be completed is removed. */
static int canvas_close(canvas *c, char *err, size_t errlen)
{
    cairo_status_t st = cairo_status(c->cr);
    cairo_destroy(c->cr);
    if (c->png && st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_write_to_png(c->surface, c->path);
    if (!c->png) {
        cairo_surface_finish(c->surface);
        if (st == CAIRO_STATUS_SUCCESS)
            st = cairo_surface_status(c->surface);
    }
    cairo_surface_destroy(c->surface);
    if (st != CAIRO_STATUS_SUCCESS) {
        remove(c->path);
        return fail(err, errlen, "%s: cannot write the plot: %s", c->path,
                    cairo_status_to_string(st));
    }
    return 0;
}

/* ------------------------------------------------------------------ */
/* Fig. 2: the lambda_w path                                           */

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
static int marker_stride(const panel *p, int num_points)
{
    if (num_points < 2)
        return 1;
    double spacing = p->w * (p->xa.hi - p->xa.lo > 0.0 ? 1.0 : 0.0) / (num_points - 1);
    int stride = spacing > 0.0 ? (int)ceil(12.0 / spacing) : 1;
    return stride < 1 ? 1 : stride;
}

/* One polyline through the finite points of values[j * step] (gaps break
 * it), then its markers; offset staggers markers of overlapping lines. */
static void draw_series(cairo_t *cr, const panel *p, const path_data *d, const double *values,
                        int step, int series, int offset)
{
    marker mark;
    series_style(cr, series, &mark);
    cairo_set_line_width(cr, 1.8);
    int pen_down = 0;
    for (int j = 0; j < d->num_points; ++j) {
        double v = values[(size_t)j * (size_t)step];
        if (!isfinite(v) || !isfinite(d->x[j])) {
            pen_down = 0;
            continue;
        }
        if (pen_down)
            cairo_line_to(cr, px(p, d->x[j]), py(p, v));
        else
            cairo_move_to(cr, px(p, d->x[j]), py(p, v));
        pen_down = 1;
    }
    cairo_stroke(cr);
    int stride = marker_stride(p, d->num_points);
    for (int j = offset % stride; j < d->num_points; j += stride) {
        double v = values[(size_t)j * (size_t)step];
        if (isfinite(v) && isfinite(d->x[j]))
            draw_marker(cr, mark, px(p, d->x[j]), py(p, v), 2.6);
    }
}

static void clip_to(cairo_t *cr, const panel *p)
{
    cairo_rectangle(cr, p->x - 4.0, p->y - 4.0, p->w + 8.0, p->h + 8.0);
    cairo_clip(cr);
}

/* The legend in the right margin, next to both panels: a line sample with
 * its marker and the name. Rows shrink a little for many rules; names that
 * do not fit are shortened, rules that do not fit are counted in a last
 * line. */
static void draw_path_legend(cairo_t *cr, const panel *top, const panel *bottom, const path_data *d)
{
    const double x0 = top->x + top->w + 16.0, height = bottom->y + bottom->h - top->y;
    const double text_x = x0 + 34.0, text_w = PN_PLOT_WIDTH - text_x - 6.0;
    double row = fmax(13.0, fmin(18.0, (height - 8.0) / d->num_rules));
    int fits = (int)((height - 8.0) / row);
    int shown = d->num_rules <= fits ? d->num_rules : fits - 1;
    set_font(cr, row < 16.0 ? 11.0 : 12.0, 0);
    for (int r = 0; r < shown; ++r) {
        double y = top->y + 10.0 + r * row;
        marker mark;
        series_style(cr, r, &mark);
        cairo_set_line_width(cr, 1.8);
        cairo_move_to(cr, x0, y);
        cairo_line_to(cr, x0 + 26.0, y);
        cairo_stroke(cr);
        draw_marker(cr, mark, x0 + 13.0, y, 2.6);
        char name[TEXT_MAX];
        clean_text(d->names && d->names[r] ? d->names[r] : "", name, sizeof name);
        if (name[0] == '\0')
            snprintf(name, sizeof name, "rule %d", r + 1);
        fit_text(cr, name, text_w);
        set_source(cr, ink);
        draw_text(cr, name, text_x, y, ALIGN_START, ALIGN_CENTER);
    }
    if (shown < d->num_rules) {
        char more[64];
        snprintf(more, sizeof more, "+ %d more", d->num_rules - shown);
        set_source(cr, axis_ink);
        draw_text(cr, more, text_x, top->y + 10.0 + shown * row, ALIGN_START, ALIGN_CENTER);
    }
}

/* A light fill between the x axis and each unbroken run of finite points. */
static void fill_under(cairo_t *cr, const panel *p, const double *x, const double *y, int n)
{
    int start = -1;
    for (int j = 0; j <= n; ++j) {
        int ok = j < n && isfinite(x[j]) && isfinite(y[j]);
        if (ok && start < 0) {
            start = j;
            cairo_move_to(cr, px(p, x[j]), py(p, 0.0));
        }
        if (ok)
            cairo_line_to(cr, px(p, x[j]), py(p, y[j]));
        if (!ok && start >= 0) {
            cairo_line_to(cr, px(p, x[j - 1]), py(p, 0.0));
            cairo_close_path(cr);
            start = -1;
        }
    }
    cairo_set_source_rgba(cr, 0.12, 0.47, 0.71, 0.12);
    cairo_fill(cr);
}

static void fit_path_axes(const path_data *d, panel *top, panel *bottom)
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
    axis_fit(&top->xa, xlo, xhi, 10, 0);
    bottom->xa = top->xa;
    axis_fit(&top->ya, 0.0, nmax, 5, 1);
    axis_fit(&bottom->ya, 0.0, emax, 3, 1);
}

static void draw_path_plot(cairo_t *cr, const char *title, const path_data *d)
{
    const double plot_h = PN_PLOT_HEIGHT - PATH_TOP - PATH_GAP - PATH_BOTTOM;
    panel top = {.x = PATH_LEFT, .y = PATH_TOP, .w = PN_PLOT_WIDTH - PATH_LEFT - PATH_RIGHT};
    top.h = floor(0.62 * plot_h);
    panel bottom = top;
    bottom.y = top.y + top.h + PATH_GAP;
    bottom.h = plot_h - top.h;
    fit_path_axes(d, &top, &bottom);

    draw_title(cr, title, 0.5 * PATH_TOP - 2.0);
    draw_grid(cr, &top, 1);
    draw_grid(cr, &bottom, 1);

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

    draw_frame(cr, &top, 1, 0);
    draw_frame(cr, &bottom, 1, 1);
    draw_y_title(cr, &top, "group norm \xE2\x80\x96w\xE1\xB5\xA3\xE2\x80\x96\xE2\x82\x82", 20.0);
    draw_y_title(cr, &bottom, "weighted error", 20.0);
    set_font(cr, 13.0, 0);
    set_source(cr, ink);
    draw_text(cr, "log\xE2\x82\x82(\xCE\xBBw)", bottom.x + 0.5 * bottom.w, PN_PLOT_HEIGHT - 18.0,
              ALIGN_CENTER, ALIGN_END);
    draw_path_legend(cr, &top, &bottom, d);
}

int pn_plot_path(const char *out_path, const char *title, int num_rules, const char *const *names,
                 int num_points, const double *log2_lambda_w, const double *group_norm,
                 const double *weighted_error, char *err, size_t errlen)
{
    if (num_rules < 1 || num_points < 1 || !log2_lambda_w || !group_norm || !weighted_error)
        return fail(err, errlen, "%s: nothing to plot", out_path);
    canvas c;
    if (canvas_open(&c, out_path, err, errlen) < 0)
        return -1;
    path_data d = {num_rules, num_points, names, log2_lambda_w, group_norm, weighted_error};
    draw_path_plot(c.cr, title, &d);
    return canvas_close(&c, err, errlen);
}

/* ------------------------------------------------------------------ */
/* Fig. 4: per-rule errors of two realizations                         */

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
    set_font(cr, 11.5, 1);
    for (int r = 0; r < d->num_rules; ++r) {
        char name[TEXT_MAX];
        clean_text(d->names[r] ? d->names[r] : "", name, sizeof name);
        if (name[0] == '\0' || text_width(cr, name) > slot - 6.0)
            return 0;
    }
    return 1;
}

static void draw_bar_ticks(cairo_t *cr, const panel *p, const bar_data *d)
{
    double slot = p->w / d->num_rules;
    int use_names = names_fit(cr, d, slot);
    set_font(cr, 11.5, 0);
    int every = (int)ceil(text_width(cr, "000") / (slot - 4.0 > 1.0 ? slot - 4.0 : 1.0));
    every = use_names || every < 1 ? 1 : every;
    for (int r = 0; r < d->num_rules; ++r) {
        double x = p->x + (r + 0.5) * slot;
        set_source(cr, axis_ink);
        cairo_set_line_width(cr, 1.0);
        cairo_move_to(cr, crisp(x), crisp(p->y + p->h));
        cairo_line_to(cr, crisp(x), crisp(p->y + p->h) + 4.0);
        cairo_stroke(cr);
        int bold = d->selected && d->selected[r];
        if ((r + 1) % every != 0 && r != 0 && !bold)
            continue;
        char label[TEXT_MAX];
        if (use_names)
            clean_text(d->names[r], label, sizeof label);
        else
            snprintf(label, sizeof label, "%d", r + 1);
        set_font(cr, 11.5, bold);
        set_source(cr, bold ? ink : axis_ink);
        draw_text(cr, label, x, p->y + p->h + 8.0, ALIGN_CENTER, ALIGN_START);
    }
}

static void draw_bars(cairo_t *cr, const panel *p, const bar_data *d)
{
    double slot = p->w / d->num_rules;
    double group_w = fmin(0.76 * slot, 80.0);
    double bar_w = group_w / d->num_series;
    for (int s = 0; s < d->num_series; ++s) {
        const rgb c = palette[s];
        for (int r = 0; r < d->num_rules; ++r) {
            double v = d->values[s][r];
            if (!isfinite(v) || v <= 0.0)
                continue;
            double x = p->x + (r + 0.5) * slot - 0.5 * group_w + s * bar_w;
            double y = py(p, fmin(v, p->ya.hi));
            cairo_rectangle(cr, x + 0.5, y, bar_w - 1.0, py(p, 0.0) - y);
            cairo_set_source_rgb(cr, c.r, c.g, c.b);
            cairo_fill_preserve(cr);
            cairo_set_source_rgb(cr, 0.6 * c.r, 0.6 * c.g, 0.6 * c.b);
            cairo_set_line_width(cr, 0.8);
            cairo_stroke(cr);
        }
    }
}

/* A boxed legend inside the panel's upper right corner. */
static void draw_bar_legend(cairo_t *cr, const panel *p, const bar_data *d)
{
    char label[2][TEXT_MAX];
    double width = 0.0;
    set_font(cr, 12.0, 0);
    for (int s = 0; s < d->num_series; ++s) {
        clean_text(d->labels[s] ? d->labels[s] : (s ? "b" : "a"), label[s], sizeof label[s]);
        fit_text(cr, label[s], 0.4 * p->w);
        width = fmax(width, text_width(cr, label[s]));
    }
    double box_w = width + 44.0, box_h = 10.0 + 20.0 * d->num_series;
    double bx = p->x + p->w - box_w - 10.0, by = p->y + 10.0;
    cairo_rectangle(cr, crisp(bx), crisp(by), floor(box_w), floor(box_h));
    cairo_set_source_rgba(cr, 1.0, 1.0, 1.0, 0.92);
    cairo_fill_preserve(cr);
    set_source(cr, grid_ink);
    cairo_set_line_width(cr, 1.0);
    cairo_stroke(cr);
    for (int s = 0; s < d->num_series; ++s) {
        double y = by + 15.0 + 20.0 * s;
        set_source(cr, palette[s]);
        cairo_rectangle(cr, bx + 10.0, y - 6.0, 18.0, 12.0);
        cairo_fill(cr);
        set_source(cr, ink);
        draw_text(cr, label[s], bx + 36.0, y, ALIGN_START, ALIGN_CENTER);
    }
}

static void draw_bar_plot(cairo_t *cr, const char *title, const bar_data *d)
{
    panel p = {.x = BARS_LEFT, .y = BARS_TOP};
    p.w = PN_PLOT_WIDTH - BARS_LEFT - BARS_RIGHT;
    p.h = PN_PLOT_HEIGHT - BARS_TOP - BARS_BOTTOM;
    double vmax = 0.0;
    for (int s = 0; s < d->num_series; ++s)
        for (int r = 0; r < d->num_rules; ++r)
            if (isfinite(d->values[s][r]))
                vmax = fmax(vmax, d->values[s][r]);
    p.xa = (axis){.lo = 0.0, .hi = d->num_rules, .step = 1.0};
    axis_fit(&p.ya, 0.0, vmax * 1.08, 5, 1);

    draw_title(cr, title, 0.5 * BARS_TOP - 2.0);
    draw_grid(cr, &p, 0);
    draw_bars(cr, &p, d);
    draw_frame(cr, &p, 0, 0);
    draw_bar_ticks(cr, &p, d);
    draw_y_title(cr, &p,
                 "error \xE2\x80\x96"
                 "A\xE1\xB5\xA3p \xE2\x88\x92 b\xE1\xB5\xA3\xE2\x80\x96\xE2\x82\x82",
                 20.0);
    set_font(cr, 13.0, 0);
    set_source(cr, ink);
    draw_text(cr, d->selected ? "rule (bold: selected)" : "rule", p.x + 0.5 * p.w,
              PN_PLOT_HEIGHT - 14.0, ALIGN_CENTER, ALIGN_END);
    draw_bar_legend(cr, &p, d);
}

int pn_plot_rule_errors(const char *out_path, const char *title, int num_rules,
                        const char *const *names, const double *errors_a, const char *label_a,
                        const double *errors_b, const char *label_b,
                        const unsigned char *selected_a, char *err, size_t errlen)
{
    if (num_rules < 1 || !errors_a)
        return fail(err, errlen, "%s: nothing to plot", out_path);
    canvas c;
    if (canvas_open(&c, out_path, err, errlen) < 0)
        return -1;
    bar_data d = {num_rules,        names,     {errors_a, errors_b}, {label_a, label_b},
                  errors_b ? 2 : 1, selected_a};
    draw_bar_plot(c.cr, title, &d);
    return canvas_close(&c, err, errlen);
}

/* ------------------------------------------------------------------ */
/* Helpers shared with the other plots (plot_internal.h)               */

pn_plot_rgb pn_plot_color(int i)
{
    return palette[((i % 10) + 10) % 10];
}

pn_plot_rgb pn_plot_ink(void)
{
    return ink;
}

int pn_plot_canvas_open(pn_plot_canvas *c, const char *path, int width, int height, char *err,
                        size_t errlen)
{
    return canvas_open_size(c, path, width, height, err, errlen);
}

int pn_plot_canvas_close(pn_plot_canvas *c, char *err, size_t errlen)
{
    return canvas_close(c, err, errlen);
}

void pn_plot_set_font(cairo_t *cr, double size, int bold)
{
    set_font(cr, size, bold);
}

double pn_plot_text_width(cairo_t *cr, const char *s)
{
    return text_width(cr, s);
}

void pn_plot_clean_text(const char *in, char *out, size_t size)
{
    clean_text(in, out, size);
}

void pn_plot_fit_text(cairo_t *cr, char *s, double max_width)
{
    fit_text(cr, s, max_width);
}

void pn_plot_draw_text(cairo_t *cr, const char *s, double x, double y, pn_plot_align h,
                       pn_plot_align v)
{
    draw_text(cr, s, x, y, h, v);
}

void pn_plot_axis_fit(pn_plot_axis *a, double lo, double hi, int target_ticks, int snap)
{
    axis_fit(a, lo, hi, target_ticks, snap);
}

double pn_plot_px(const pn_plot_panel *p, double v)
{
    return px(p, v);
}

double pn_plot_py(const pn_plot_panel *p, double v)
{
    return py(p, v);
}

void pn_plot_draw_grid(cairo_t *cr, const pn_plot_panel *p, int vertical)
{
    draw_grid(cr, p, vertical);
}

void pn_plot_draw_frame(cairo_t *cr, const pn_plot_panel *p, int x_ticks, int x_labels)
{
    draw_frame(cr, p, x_ticks, x_labels);
}

void pn_plot_draw_y_title(cairo_t *cr, const pn_plot_panel *p, const char *title, double x)
{
    draw_y_title(cr, p, title, x);
}
