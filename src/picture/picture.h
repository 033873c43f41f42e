/*
 * picture.h -- internal drawing layer behind the PNG writers: an RGB canvas
 * with clipped primitives, a 5x7 bitmap font, the PNG encoder, the density
 * grid of the spy picture and the diagonal-format overlay.  Kept internal so
 * tests can draw on a canvas and inspect pixels without going through files.
 */
#ifndef ADIA_PICTURE_H
#define ADIA_PICTURE_H

#include "../core/internal.h"
#include "../formats/diag_core.h"
#include "../io/outfile.h"

typedef struct adia_rgb { uint8_t r, g, b; } adia_rgb;

/* An RGB 8-bit image, row-major, 3 bytes per pixel. */
typedef struct adia_canvas {
    int32_t width, height;
    uint8_t *pix;
} adia_canvas;

/* A rectangle of pixels: [x, x+w) x [y, y+h). */
typedef struct adia_rect { int32_t x, y, w, h; } adia_rect;

/* Largest image side any writer accepts (memory: 3 * side^2 bytes). */
#define ADIA_PICTURE_MAX_SIDE 8192

/* ----------------------------------------------------------- canvas.c */

/* Allocate a width x height canvas filled with bg. */
adia_status adia__canvas_init(adia_canvas *c, int32_t width, int32_t height, adia_rgb bg);
void adia__canvas_free(adia_canvas *c);
adia_rgb adia__canvas_get(const adia_canvas *c, int32_t x, int32_t y);
/* All drawing is clipped to the canvas. */
void adia__canvas_put(adia_canvas *c, int32_t x, int32_t y, adia_rgb col);
/* Mix col into the pixel with weight a in [0, 1]. */
void adia__canvas_blend(adia_canvas *c, int32_t x, int32_t y, adia_rgb col, double a);
void adia__canvas_fill(adia_canvas *c, adia_rect r, adia_rgb col);
/* One-pixel outline just outside r (the frame of a plot area). */
void adia__canvas_frame(adia_canvas *c, adia_rect r, adia_rgb col);
/* Horizontal line at y from x0 to x1 (inclusive), blended with weight a;
 * dash > 0 draws dash pixels on, dash off. */
void adia__canvas_hline(adia_canvas *c, int32_t x0, int32_t x1, int32_t y,
                       adia_rgb col, double a, int dash);
void adia__canvas_vline(adia_canvas *c, int32_t x, int32_t y0, int32_t y1,
                       adia_rgb col, double a, int dash);
/* Encode as an RGB 8-bit PNG through libpng, via a safe output file.
 * Errors (cannot create, libpng failure, short write) are ADIA_ERR_IO with
 * the path and the reason; the old file at path is then untouched. */
adia_status adia__canvas_write_png(const adia_canvas *c, const char *path);
/* The same into an open output file, which is committed (or, on failure,
 * aborted): lets a caller open it before long work, to fail early. */
adia_status adia__canvas_encode_png(const adia_canvas *c, adia_outfile *out);

/* ------------------------------------------------------------- font.c */

/* Glyph cell: 5x7 glyph (plus a descender row) and one pixel of spacing. */
#define ADIA_FONT_CELL_W 6
#define ADIA_FONT_CELL_H 9
/* The 8 row bitmaps (bit 4 = leftmost pixel) of a printable ASCII char;
 * anything else is drawn as '?'. */
const uint8_t *adia__font_glyph(char ch);
/* Pixel width of text at integer scale (cells of 6*scale). */
int32_t adia__text_width(const char *text, int scale);
/* Draw text with its top-left cell corner at (x, y); returns the x after
 * the last character.  Clipped to the canvas; max_w > 0 cuts the text at
 * that many pixels (whole characters). */
int32_t adia__draw_text(adia_canvas *c, int32_t x, int32_t y, const char *text,
                       int scale, adia_rgb col, int32_t max_w);

/* -------------------------------------------------------------- spy.c */

/* Nonzero counts binned into a gw x gh grid (gw <= cols, gh <= rows, both
 * at most ADIA_PICTURE_MAX_SIDE): row i falls in bin i*gh/rows, column j in
 * j*gw/cols.  Counts saturate at UINT32_MAX. */
typedef struct adia_spy_grid {
    int32_t gw, gh;
    uint32_t *count;          /* gh * gw, row-major */
    uint32_t min, max;        /* smallest nonzero and largest count */
} adia_spy_grid;

/* Progress callback used while binning (fraction in [0, 1]). */
typedef void (*adia_progress_fn)(double fraction, void *user);

adia_status adia__spy_grid_build(const adia_csr *A, int32_t gw, int32_t gh,
                                adia_progress_fn progress, void *user,
                                adia_spy_grid *g);
void adia__spy_grid_free(adia_spy_grid *g);
/* Colour of a bin with count n (0 = background) when the largest is max:
 * log scale from light blue at 1 to dark blue at max, so an even density
 * looks evenly dark. */
adia_rgb adia__spy_color(uint32_t n, uint32_t max);

/* Where things landed in a rendered spy picture. */
typedef struct adia_spy_info {
    adia_rect plot;           /* the plot area (inside the frame) */
    adia_rect band;           /* the overlay band (w == 0: none) */
    int32_t gw, gh;           /* binning grid */
    uint32_t max;             /* largest count in a bin */
} adia_spy_info;

/* Draw the spy picture of A into c (initialised here; free it after), with
 * D's pieces over it when D is not NULL; info (may be NULL) gets the layout.
 * opt as for adia_matrix_spy_png, whose overlay name only labels D here. */
adia_status adia__spy_render(const adia_matrix *A, const adia_spy_options *opt,
                            const adia_diag *D, adia_canvas *c, adia_spy_info *info);

/* ---------------------------------------------------------- overlay.c */

/* Pixel row in plot where matrix row r starts (r in [0, rows]). */
int32_t adia__plot_row_y(adia_rect plot, int32_t rows, int32_t r);

/* Draw the row pieces of D over plot (which shows D->rows rows): a line at
 * every piece boundary, strong (red) where the offset group changes, light
 * (dashed orange) where only the piece changes -- each kind only when its
 * lines are at least 3 pixels apart on average; and in band (a strip left
 * of the plot) one colour per offset group, changing at every group change.
 * Returns which lines were drawn (ADIA_OVERLAY_* flags). */
enum { ADIA_OVERLAY_GROUP_LINES = 1, ADIA_OVERLAY_PIECE_LINES = 2 };
int adia__overlay_draw(adia_canvas *c, adia_rect plot, adia_rect band,
                      const adia_diag *D);
/* Colours used, so tests and the legend agree with the drawing. */
extern const adia_rgb adia__overlay_group_line, adia__overlay_piece_line;

#endif /* ADIA_PICTURE_H */
