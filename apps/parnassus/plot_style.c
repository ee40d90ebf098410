/* The figure of `parnassus evaluate --plot` (see plot_style.h), drawn with
 * the helpers of plot_internal.h. */
#include "plot_style.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plot_internal.h"

enum {
    COLUMNS = 4,
    ROWS = 5,
    TOP = 84, /* title and legend above the panels */
    CELL_LEFT = 54,
    CELL_RIGHT = 14,
    CELL_TOP = 34,
    CELL_BOTTOM = 50,
    CHORDS_SHOWN = 20,
    KEY_AREAS_SHOWN = 7,
    MAX_BARS = 32,
    LABEL_SIZE = 24,
};

static const char *const INTERVALS[12] = {"P1", "m2", "M2", "m3", "M3", "P4",
                                          "TT", "P5", "m6", "M6", "m7", "M7"};
static const char *const DEGREES[12] = {"1",  "b2", "2",  "b3", "3",  "4",
                                        "#4", "5",  "b6", "6",  "b7", "7"};

/* One panel of bars: the input (a) and the reference (b) side by side. */
typedef struct bar_panel {
    char title[160];
    int n;
    char label[MAX_BARS][LABEL_SIZE];
    double a[MAX_BARS], b[MAX_BARS]; /* in percent; NAN: nothing to draw */
    int has_b;
    int rotate; /* slanted tick labels */
    int values; /* print each value above its bar */
} bar_panel;

static void set_rgb(cairo_t *cr, pn_plot_rgb c)
{
    cairo_set_source_rgb(cr, c.r, c.g, c.b);
}

/* The cell (col, row) spanning `span` columns, as a plotting area. */
static pn_plot_panel cell(int col, int row, int span)
{
    const double cw = (double)PN_STYLE_PLOT_WIDTH / COLUMNS;
    const double ch = (double)(PN_STYLE_PLOT_HEIGHT - TOP) / ROWS;
    pn_plot_panel p;
    memset(&p, 0, sizeof p);
    p.x = col * cw + CELL_LEFT;
    p.y = TOP + row * ch + CELL_TOP;
    p.w = span * cw - CELL_LEFT - CELL_RIGHT;
    p.h = ch - CELL_TOP - CELL_BOTTOM;
    return p;
}

static void draw_bar_panel(cairo_t *cr, pn_plot_panel p, const bar_panel *bp)
{
    double vmax = 0.0;
    for (int i = 0; i < bp->n; ++i) {
        if (isfinite(bp->a[i]))
            vmax = fmax(vmax, bp->a[i]);
        if (bp->has_b && isfinite(bp->b[i]))
            vmax = fmax(vmax, bp->b[i]);
    }
    p.xa = (pn_plot_axis){0.0, (double)bp->n, 1.0, 0};
    /* shares never pass 100 %: no axis beyond it */
    pn_plot_axis_fit(&p.ya, 0.0, fmin(vmax * (bp->values ? 1.2 : 1.08), fmax(vmax, 100.0)), 4, 1);

    char title[200];
    pn_plot_clean_text(bp->title, title, sizeof title);
    pn_plot_set_font(cr, 13.0, 1);
    pn_plot_fit_text(cr, title, p.w);
    set_rgb(cr, pn_plot_ink());
    pn_plot_draw_text(cr, title, p.x + 0.5 * p.w, p.y - 12.0, PN_PLOT_ALIGN_CENTER,
                      PN_PLOT_ALIGN_CENTER);

    pn_plot_draw_grid(cr, &p, 0);
    const double slot = p.w / bp->n;
    const int series = bp->has_b ? 2 : 1;
    const double group = fmin(0.8 * slot, 60.0), bar = group / series;
    for (int s = 0; s < series; ++s) {
        const double *v = s == 0 ? bp->a : bp->b;
        const pn_plot_rgb c = pn_plot_color(s);
        for (int i = 0; i < bp->n; ++i) {
            if (!isfinite(v[i]) || v[i] <= 0.0)
                continue;
            const double x = p.x + (i + 0.5) * slot - 0.5 * group + s * bar;
            const double y = pn_plot_py(&p, fmin(v[i], p.ya.hi));
            cairo_rectangle(cr, x + 0.25, y, bar - 0.5, pn_plot_py(&p, 0.0) - y);
            set_rgb(cr, c);
            cairo_fill(cr);
        }
    }
    if (bp->values) {
        pn_plot_set_font(cr, 10.5, 0);
        for (int s = 0; s < series; ++s) {
            const double *v = s == 0 ? bp->a : bp->b;
            for (int i = 0; i < bp->n; ++i) {
                char text[32];
                if (isfinite(v[i]))
                    snprintf(text, sizeof text, v[i] < 10.0 ? "%.2f" : "%.1f", v[i]);
                else
                    snprintf(text, sizeof text, "n/a");
                const double x = p.x + (i + 0.5) * slot - 0.5 * group + (s + 0.5) * bar;
                const double y = pn_plot_py(&p, isfinite(v[i]) ? fmin(v[i], p.ya.hi) : 0.0);
                set_rgb(cr, pn_plot_ink());
                pn_plot_draw_text(cr, text, x, y - 3.0, PN_PLOT_ALIGN_CENTER, PN_PLOT_ALIGN_END);
            }
        }
    }
    pn_plot_draw_frame(cr, &p, 0, 0);

    /* tick labels: every k-th so that they do not overlap */
    pn_plot_set_font(cr, 11.0, 0);
    double widest = 0.0;
    for (int i = 0; i < bp->n; ++i)
        widest = fmax(widest, pn_plot_text_width(cr, bp->label[i]));
    const int every = bp->rotate ? 1 : (int)ceil((widest + 4.0) / slot);
    set_rgb(cr, pn_plot_ink());
    for (int i = 0; i<bp->n; i += every> 0 ? every : 1) {
        const double x = p.x + (i + 0.5) * slot, y = p.y + p.h + 6.0;
        if (bp->rotate) {
            cairo_save(cr);
            cairo_translate(cr, x + 3.0, y);
            cairo_rotate(cr, -0.6);
            pn_plot_draw_text(cr, bp->label[i], 0.0, 0.0, PN_PLOT_ALIGN_END, PN_PLOT_ALIGN_START);
            cairo_restore(cr);
        } else {
            pn_plot_draw_text(cr, bp->label[i], x, y, PN_PLOT_ALIGN_CENTER, PN_PLOT_ALIGN_START);
        }
    }
}

/* "TITLE, TV 0.123" (or "TV n/a"). */
static void panel_title(bar_panel *bp, const char *title, const pn_style_stats *in,
                        const pn_style_stats *ref, pn_style_dist d)
{
    if (!ref) {
        snprintf(bp->title, sizeof bp->title, "%s (%%)", title);
        return;
    }
    const double tv = pn_style_tv(in, ref, d);
    if (isnan(tv))
        snprintf(bp->title, sizeof bp->title, "%s (%%), TV n/a", title);
    else
        snprintf(bp->title, sizeof bp->title, "%s (%%), TV %.3f", title, tv);
}

/* A distribution over bins [from, to) with the given labels (NULL: the
 * bins' own labels). */
static void fill_dist(bar_panel *bp, const pn_style_stats *in, const pn_style_stats *ref,
                      pn_style_dist d, int from, int to, const char *const *labels,
                      const char *title)
{
    memset(bp, 0, sizeof *bp);
    panel_title(bp, title ? title : pn_style_dist_get(d)->title, in, ref, d);
    bp->has_b = ref != NULL;
    for (int i = from; i < to && bp->n < MAX_BARS; ++i, ++bp->n) {
        if (labels)
            snprintf(bp->label[bp->n], LABEL_SIZE, "%s", labels[i]);
        else
            pn_style_bin_label(d, i, bp->label[bp->n], LABEL_SIZE);
        bp->a[bp->n] = 100.0 * pn_style_share(in, d, i);
        bp->b[bp->n] = ref ? 100.0 * pn_style_share(ref, d, i) : NAN;
    }
}

/* The `shown_max` bins of d with the most reference mass (input mass
 * without a reference), then everything else as "other": chord types and
 * key areas have more values than a panel can show. */
static void fill_top(bar_panel *bp, const pn_style_stats *in, const pn_style_stats *ref,
                     pn_style_dist d, int shown_max, const char *title)
{
    memset(bp, 0, sizeof *bp);
    panel_title(bp, title, in, ref, d);
    bp->has_b = ref != NULL;
    const pn_style_stats *by = ref ? ref : in;
    const int size = pn_style_dist_get(d)->size;
    const int64_t *c = pn_style_counts(by, d);
    int top[MAX_BARS], shown = 0;
    unsigned char taken[PN_STYLE_CHORD_BINS] = {0};
    for (; shown < shown_max && shown < MAX_BARS - 1; ++shown) {
        int best = -1;
        for (int i = 0; i < size; ++i)
            if (!taken[i] && c[i] > 0 && (best < 0 || c[i] > c[best]))
                best = i;
        if (best < 0)
            break;
        taken[best] = 1;
        top[shown] = best;
    }
    double rest_a = 100.0, rest_b = 100.0;
    for (int j = 0; j < shown; ++j, ++bp->n) {
        pn_style_bin_label(d, top[j], bp->label[bp->n], LABEL_SIZE);
        bp->a[bp->n] = 100.0 * pn_style_share(in, d, top[j]);
        bp->b[bp->n] = ref ? 100.0 * pn_style_share(ref, d, top[j]) : NAN;
        rest_a -= bp->a[bp->n];
        rest_b -= ref ? bp->b[bp->n] : 0.0;
    }
    snprintf(bp->label[bp->n], LABEL_SIZE, "other");
    bp->a[bp->n] = pn_style_dist_total(in, d) > 0 ? fmax(rest_a, 0.0) : NAN;
    bp->b[bp->n] = ref && pn_style_dist_total(ref, d) > 0 ? fmax(rest_b, 0.0) : NAN;
    bp->n++;
}

static void fill_rates(bar_panel *bp, const pn_style_stats *in, const pn_style_stats *ref)
{
    static const pn_style_rate shown[] = {PN_STYLE_PARALLELS, PN_STYLE_HIDDEN, PN_STYLE_WIDE,
                                          PN_STYLE_CROSSING, PN_STYLE_COPY4};
    static const char *const labels[] = {"parallels", "hidden", "wide", "crossing", "copy4"};
    memset(bp, 0, sizeof *bp);
    snprintf(bp->title, sizeof bp->title, "rates (%%)");
    bp->has_b = ref != NULL;
    bp->values = 1;
    for (size_t i = 0; i < sizeof shown / sizeof shown[0]; ++i, ++bp->n) {
        snprintf(bp->label[bp->n], LABEL_SIZE, "%s", labels[i]);
        bp->a[bp->n] = 100.0 * pn_style_rate_value(in, shown[i]);
        bp->b[bp->n] = ref ? 100.0 * pn_style_rate_value(ref, shown[i]) : NAN;
    }
}

static void draw_legend(cairo_t *cr, const char *input_label, const char *reference_label)
{
    const char *labels[2] = {input_label ? input_label : "input", reference_label};
    const int n = reference_label ? 2 : 1;
    char text[2][256];
    pn_plot_set_font(cr, 13.0, 0);
    double total = 0.0;
    for (int s = 0; s < n; ++s) {
        pn_plot_clean_text(labels[s], text[s], sizeof text[s]);
        pn_plot_fit_text(cr, text[s], 0.4 * PN_STYLE_PLOT_WIDTH);
        total += 26.0 + pn_plot_text_width(cr, text[s]) + (s + 1 < n ? 40.0 : 0.0);
    }
    double x = 0.5 * (PN_STYLE_PLOT_WIDTH - total);
    const double y = 62.0;
    for (int s = 0; s < n; ++s) {
        set_rgb(cr, pn_plot_color(s));
        cairo_rectangle(cr, x, y - 7.0, 18.0, 14.0);
        cairo_fill(cr);
        set_rgb(cr, pn_plot_ink());
        pn_plot_draw_text(cr, text[s], x + 26.0, y, PN_PLOT_ALIGN_START, PN_PLOT_ALIGN_CENTER);
        x += 26.0 + pn_plot_text_width(cr, text[s]) + 40.0;
    }
}

pn_error pn_plot_style(const char *out_path, const char *title, const pn_style_stats *input,
                       const char *input_label, const pn_style_stats *reference,
                       const char *reference_label, pn_error_info *info)
{
    if (!input)
        return pn_fail(info, PN_ERR_INVALID, "%s: nothing to plot", out_path);
    pn_plot_canvas c;
    pn_error code =
        pn_plot_canvas_open(&c, out_path, PN_STYLE_PLOT_WIDTH, PN_STYLE_PLOT_HEIGHT, info);
    if (code != PN_OK)
        return code;
    cairo_t *cr = c.cr;
    const pn_style_stats *in = input, *ref = reference;

    char heading[512];
    pn_plot_clean_text(title ? title : "", heading, sizeof heading);
    pn_plot_set_font(cr, 18.0, 1);
    pn_plot_fit_text(cr, heading, PN_STYLE_PLOT_WIDTH - 40.0);
    set_rgb(cr, pn_plot_ink());
    pn_plot_draw_text(cr, heading, 0.5 * PN_STYLE_PLOT_WIDTH, 26.0, PN_PLOT_ALIGN_CENTER,
                      PN_PLOT_ALIGN_CENTER);
    draw_legend(cr, input_label, ref ? reference_label : NULL);

    bar_panel *bp = malloc(sizeof *bp);
    if (!bp) {
        pn_plot_canvas_close(&c, NULL);
        remove(out_path);
        return pn_fail(info, PN_ERR_NOMEM, "%s: out of memory", out_path);
    }
    char chords[64];
    snprintf(chords, sizeof chords, "chord types, top %d%s", CHORDS_SHOWN,
             ref ? " of the reference" : "");
    fill_top(bp, in, ref, PN_STYLE_CHORD, CHORDS_SHOWN, chords);
    bp->rotate = 1;
    draw_bar_panel(cr, cell(0, 0, 3), bp);
    fill_rates(bp, in, ref);
    draw_bar_panel(cr, cell(3, 0, 1), bp);

    static const pn_style_dist motions[4] = {PN_STYLE_SOPRANO_MOTION, PN_STYLE_ALTO_MOTION,
                                             PN_STYLE_TENOR_MOTION, PN_STYLE_BASS_MOTION};
    for (int v = 0; v < 4; ++v) {
        fill_dist(bp, in, ref, motions[v], 0, PN_STYLE_MOTION_BINS, NULL, NULL);
        draw_bar_panel(cr, cell(v, 1, 1), bp);
    }
    static const pn_style_dist spacings[3] = {PN_STYLE_SPACING_SA, PN_STYLE_SPACING_AT,
                                              PN_STYLE_SPACING_TB};
    for (int v = 0; v < 3; ++v) {
        fill_dist(bp, in, ref, spacings[v], 0, PN_STYLE_SPACING_BINS, NULL, NULL);
        draw_bar_panel(cr, cell(v, 2, 1), bp);
    }
    fill_dist(bp, in, ref, PN_STYLE_DOUBLING, 0, 12, INTERVALS, "doubled above the bass");
    draw_bar_panel(cr, cell(3, 2, 1), bp);
    fill_dist(bp, in, ref, PN_STYLE_ROOT_MOTION, 1, 12, INTERVALS, "root motion up");
    draw_bar_panel(cr, cell(0, 3, 1), bp);
    fill_dist(bp, in, ref, PN_STYLE_TONAL, 0, 12, DEGREES, "scale degrees");
    draw_bar_panel(cr, cell(1, 3, 1), bp);
    fill_top(bp, in, ref, PN_STYLE_KEY_AREA, KEY_AREAS_SHOWN, "key areas");
    draw_bar_panel(cr, cell(2, 3, 1), bp);
    fill_dist(bp, in, ref, PN_STYLE_VOICES, 0, PN_STYLE_VOICES_MAX, NULL, "pitches per sonority");
    snprintf(bp->label[PN_STYLE_VOICES_MAX - 1], LABEL_SIZE, "%d+", PN_STYLE_VOICES_MAX);
    draw_bar_panel(cr, cell(3, 3, 1), bp);
    static const pn_style_dist spans[4] = {PN_STYLE_SPAN_SOPRANO, PN_STYLE_SPAN_ALTO,
                                           PN_STYLE_SPAN_TENOR, PN_STYLE_SPAN_BASS};
    for (int v = 0; v < 4; ++v) {
        fill_dist(bp, in, ref, spans[v], 0, PN_STYLE_SPAN_BINS, NULL, NULL);
        draw_bar_panel(cr, cell(v, 4, 1), bp);
    }
    free(bp);
    return pn_plot_canvas_close(&c, info);
}
