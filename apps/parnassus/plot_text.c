/* Text in the plots: cleaning for cairo (valid UTF-8, no control
 * characters), the font, widths, shortening with an ellipsis, drawing
 * anchored text, and the plot title. */
#include "plot.h"
#include "plot_internal.h"

#include <cairo.h>
#include <string.h>

static const char font_family[] = "sans-serif";

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
void pn_plot_clean_text(const char *in, char *out, size_t size)
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

void pn_plot_set_font(cairo_t *cr, double size, int bold)
{
    cairo_select_font_face(cr, font_family, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
}

double pn_plot_text_width(cairo_t *cr, const char *s)
{
    cairo_text_extents_t te;
    cairo_text_extents(cr, s, &te);
    return te.x_advance;
}

/* Draws s (already clean) with its box anchored at (x, y): horizontally by
 * its advance, vertically by the font's ascent and descent. */
void pn_plot_draw_text(cairo_t *cr, const char *s, double x, double y, pn_plot_align h,
                       pn_plot_align v)
{
    cairo_font_extents_t fe;
    cairo_font_extents(cr, &fe);
    double w = pn_plot_text_width(cr, s);
    double dx = h == PN_PLOT_ALIGN_START ? 0.0 : h == PN_PLOT_ALIGN_CENTER ? -0.5 * w : -w;
    double dy = v == PN_PLOT_ALIGN_START    ? fe.ascent
                : v == PN_PLOT_ALIGN_CENTER ? 0.5 * (fe.ascent - fe.descent)
                                            : -fe.descent;
    cairo_move_to(cr, x + dx, y + dy);
    cairo_show_text(cr, s);
}

/* Shortens s in place with a trailing ellipsis until it fits max_width. */
void pn_plot_fit_text(cairo_t *cr, char *s, double max_width)
{
    static const char ellipsis[] = "\xE2\x80\xA6";
    if (pn_plot_text_width(cr, s) <= max_width)
        return;
    size_t len = strlen(s);
    char buf[PN_PLOT_TEXT_MAX + 4];
    while (len > 0) {
        do
            --len;
        while (len > 0 && ((unsigned char)s[len] & 0xC0) == 0x80);
        memcpy(buf, s, len);
        memcpy(buf + len, ellipsis, sizeof ellipsis);
        if (pn_plot_text_width(cr, buf) <= max_width)
            break;
    }
    if (len == 0)
        memcpy(buf, ellipsis, sizeof ellipsis);
    memcpy(s, buf, strlen(buf) + 1);
}

void pn_plot_draw_title(cairo_t *cr, const char *title, double y)
{
    char clean[PN_PLOT_TEXT_MAX];
    pn_plot_clean_text(title ? title : "", clean, sizeof clean);
    pn_plot_set_font(cr, 15.0, 1);
    pn_plot_fit_text(cr, clean, PN_PLOT_WIDTH - 40.0);
    pn_plot_set_source(cr, pn_plot_ink());
    pn_plot_draw_text(cr, clean, 0.5 * PN_PLOT_WIDTH, y, PN_PLOT_ALIGN_CENTER,
                      PN_PLOT_ALIGN_CENTER);
}
