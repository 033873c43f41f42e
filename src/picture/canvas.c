/* canvas.c -- the RGB canvas: clipped drawing primitives and the PNG
 * encoder (libpng, with setjmp error handling that turns every libpng
 * failure into ADIA_ERR_IO instead of an abort). */
#define _POSIX_C_SOURCE 200809L
#include "picture.h"

#include <png.h>
#include <setjmp.h>
#include <stdio.h>

adia_status adia__canvas_init(adia_canvas *c, int32_t width, int32_t height, adia_rgb bg)
{
    c->pix = NULL;
    c->width = c->height = 0;
    if (width < 1 || height < 1 || width > ADIA_PICTURE_MAX_SIDE || height > ADIA_PICTURE_MAX_SIDE)
        return adia__error(ADIA_ERR_INVALID_ARG, "picture size %dx%d out of range 1..%d",
                          (int)width, (int)height, ADIA_PICTURE_MAX_SIDE);
    size_t n;
    if (!adia_mul_size((size_t)width * 3, (size_t)height, &n))
        return adia__error(ADIA_ERR_OVERFLOW, "picture size %dx%d", (int)width, (int)height);
    c->pix = adia__alloc(n, 1, "picture pixels");
    if (!c->pix) return ADIA_ERR_NO_MEMORY;
    c->width = width;
    c->height = height;
    for (size_t i = 0; i < n; i += 3) {
        c->pix[i] = bg.r;
        c->pix[i + 1] = bg.g;
        c->pix[i + 2] = bg.b;
    }
    return ADIA_OK;
}

void adia__canvas_free(adia_canvas *c)
{
    free(c->pix);
    c->pix = NULL;
    c->width = c->height = 0;
}

static uint8_t *pixel(const adia_canvas *c, int32_t x, int32_t y)
{
    if (x < 0 || y < 0 || x >= c->width || y >= c->height) return NULL;
    return c->pix + 3 * ((size_t)y * (size_t)c->width + (size_t)x);
}

adia_rgb adia__canvas_get(const adia_canvas *c, int32_t x, int32_t y)
{
    const uint8_t *p = pixel(c, x, y);
    adia_rgb col = {0, 0, 0};
    if (p) col = (adia_rgb){p[0], p[1], p[2]};
    return col;
}

void adia__canvas_put(adia_canvas *c, int32_t x, int32_t y, adia_rgb col)
{
    uint8_t *p = pixel(c, x, y);
    if (!p) return;
    p[0] = col.r;
    p[1] = col.g;
    p[2] = col.b;
}

static uint8_t mix(uint8_t under, uint8_t over, double a)
{
    return (uint8_t)((double)under * (1.0 - a) + (double)over * a + 0.5);
}

void adia__canvas_blend(adia_canvas *c, int32_t x, int32_t y, adia_rgb col, double a)
{
    uint8_t *p = pixel(c, x, y);
    if (!p) return;
    p[0] = mix(p[0], col.r, a);
    p[1] = mix(p[1], col.g, a);
    p[2] = mix(p[2], col.b, a);
}

void adia__canvas_fill(adia_canvas *c, adia_rect r, adia_rgb col)
{
    int32_t x0 = r.x < 0 ? 0 : r.x, y0 = r.y < 0 ? 0 : r.y;
    int32_t x1 = r.x + r.w > c->width ? c->width : r.x + r.w;
    int32_t y1 = r.y + r.h > c->height ? c->height : r.y + r.h;
    for (int32_t y = y0; y < y1; y++)
        for (int32_t x = x0; x < x1; x++) adia__canvas_put(c, x, y, col);
}

void adia__canvas_hline(adia_canvas *c, int32_t x0, int32_t x1, int32_t y,
                       adia_rgb col, double a, int dash)
{
    for (int32_t x = x0; x <= x1; x++)
        if (dash <= 0 || ((x - x0) / dash) % 2 == 0) adia__canvas_blend(c, x, y, col, a);
}

void adia__canvas_vline(adia_canvas *c, int32_t x, int32_t y0, int32_t y1,
                       adia_rgb col, double a, int dash)
{
    for (int32_t y = y0; y <= y1; y++)
        if (dash <= 0 || ((y - y0) / dash) % 2 == 0) adia__canvas_blend(c, x, y, col, a);
}

void adia__canvas_frame(adia_canvas *c, adia_rect r, adia_rgb col)
{
    adia__canvas_hline(c, r.x - 1, r.x + r.w, r.y - 1, col, 1.0, 0);
    adia__canvas_hline(c, r.x - 1, r.x + r.w, r.y + r.h, col, 1.0, 0);
    adia__canvas_vline(c, r.x - 1, r.y, r.y + r.h - 1, col, 1.0, 0);
    adia__canvas_vline(c, r.x + r.w, r.y, r.y + r.h - 1, col, 1.0, 0);
}

/* ------------------------------------------------------------------ PNG */

/* libpng reports errors through these; the message is kept for adia__error
 * and control returns to the setjmp point in write_rows. */
typedef struct png_failure { char msg[256]; } png_failure;

static void on_png_error(png_structp png, png_const_charp msg)
{
    png_failure *f = png_get_error_ptr(png);
    snprintf(f->msg, sizeof f->msg, "%s", msg ? msg : "unknown libpng error");
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;   /* warnings do not stop the write and are not errors */
}

/* libpng's output goes through the safe output file; a failed write stops
 * libpng here (the outfile keeps the reason: "writing F: ..."). */
static void on_png_write(png_structp png, png_bytep data, size_t len)
{
    if (adia__outfile_write(png_get_io_ptr(png), data, len) != ADIA_OK)
        png_error(png, "write failed");
}

static void on_png_flush(png_structp png)
{
    (void)png;   /* the outfile's commit flushes */
}

/* Everything between png_create_write_struct and png_write_end; returns 0
 * or -1 with f->msg set.  Kept apart so no local of the caller lives across
 * the setjmp. */
static int write_rows(adia_outfile *out, const adia_canvas *c, png_failure *f)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, f, on_png_error,
                                              on_png_warning);
    if (!png) {
        snprintf(f->msg, sizeof f->msg, "libpng could not create a write structure");
        return -1;
    }
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        snprintf(f->msg, sizeof f->msg, "libpng could not create an info structure");
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    png_set_write_fn(png, out, on_png_write, on_png_flush);
    png_set_IHDR(png, info, (png_uint_32)c->width, (png_uint_32)c->height, 8,
                 PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int32_t y = 0; y < c->height; y++)
        png_write_row(png, c->pix + 3 * (size_t)y * (size_t)c->width);
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return 0;
}

adia_status adia__canvas_encode_png(const adia_canvas *c, adia_outfile *out)
{
    png_failure f = {{0}};
    if (write_rows(out, c, &f) == 0 || out->status != ADIA_OK)
        return adia__outfile_commit(out);   /* a write error: the outfile's message */
    adia__outfile_abort(out);
    return adia__error(ADIA_ERR_IO, "cannot write PNG '%s': %s", out->path, f.msg);
}

adia_status adia__canvas_write_png(const adia_canvas *c, const char *path)
{
    if (!c || !c->pix || !path)
        return adia__error(ADIA_ERR_INVALID_ARG, "PNG writer: NULL argument");
    adia_outfile out;
    ADIA_TRY(adia__outfile_open(&out, path, false));
    return adia__canvas_encode_png(c, &out);
}
