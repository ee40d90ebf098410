/* Plot files: a white canvas for a .png or .svg name, written (or
 * removed) when it is closed, and the reasons of failures. */
#include "plot.h"
#include "plot_internal.h"

#include <cairo-svg.h>
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <stdio.h>
#include <string.h>

/* The error of a cairo failure: an allocation, or else the file. */
static pn_error cairo_error(cairo_status_t st)
{
    return st == CAIRO_STATUS_NO_MEMORY ? PN_ERR_NOMEM : PN_ERR_IO;
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
pn_error pn_plot_canvas_open(pn_plot_canvas *c, const char *path, int width, int height,
                             pn_error_info *info)
{
    memset(c, 0, sizeof *c);
    c->path = path;
    c->png = png_by_extension(path);
    if (c->png < 0)
        return pn_fail(info, PN_ERR_INVALID, "%s: the plot file name must end in .png or .svg",
                       path);
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
        return pn_fail(info, cairo_error(st), "%s: cannot create the plot: %s", path,
                       cairo_status_to_string(st));
    }
    cairo_set_source_rgb(c->cr, 1.0, 1.0, 1.0);
    cairo_paint(c->cr);
    cairo_set_line_join(c->cr, CAIRO_LINE_JOIN_ROUND);
    return PN_OK;
}

/* Writes the file (PNG) or finishes it (SVG) and frees everything. A file
 * that could not be completed is removed. */
pn_error pn_plot_canvas_close(pn_plot_canvas *c, pn_error_info *info)
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
        return pn_fail(info, cairo_error(st), "%s: cannot write the plot: %s", c->path,
                       cairo_status_to_string(st));
    }
    return PN_OK;
}
