/* spy.c -- adia_matrix_spy_png: the sparsity picture.  Nonzeros are counted
 * into a grid of at most size x size bins (memory independent of nnz),
 * painted with a log colour scale, framed, captioned, and optionally
 * overlaid with the row pieces of a diagonal format (overlay.c). */
#define _POSIX_C_SOURCE 200809L
#include "picture.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>

static const adia_rgb WHITE = {255, 255, 255}, INK = {20, 20, 20},
                      FRAME = {96, 96, 96};

/* --------------------------------------------------------------- binning */

/* First row of bin row b: smallest i with i*gh/rows >= b. */
static int32_t bin_first_row(int64_t b, int32_t rows, int32_t gh)
{
    return (int32_t)((b * rows + gh - 1) / gh);
}

adia_status adia__spy_grid_build(const adia_csr *A, int32_t gw, int32_t gh,
                                adia_progress_fn progress, void *user,
                                adia_spy_grid *g)
{
    memset(g, 0, sizeof *g);
    if (gw < 1 || gh < 1 || gw > ADIA_PICTURE_MAX_SIDE || gh > ADIA_PICTURE_MAX_SIDE ||
        (A->cols > 0 && gw > A->cols) || (A->rows > 0 && gh > A->rows))
        return adia__error(ADIA_ERR_INVALID_ARG, "spy grid %dx%d does not fit a %dx%d matrix",
                          (int)gw, (int)gh, (int)A->rows, (int)A->cols);
    g->count = adia__calloc((size_t)gw * (size_t)gh, sizeof *g->count, "spy grid");
    if (!g->count) return ADIA_ERR_NO_MEMORY;
    g->gw = gw;
    g->gh = gh;
    if (A->rows == 0 || A->cols == 0) return ADIA_OK;
    /* Bin rows are handed out whole to threads, so no two threads touch the
     * same counter; chunks between progress calls keep the callback serial. */
    int32_t chunk = gh / 64 > 0 ? gh / 64 : 1;
    for (int32_t c0 = 0; c0 < gh; c0 += chunk) {
        int32_t c1 = c0 + chunk < gh ? c0 + chunk : gh;
#pragma omp parallel for schedule(dynamic, 1) num_threads(adia__threads())
        for (int32_t b = c0; b < c1; b++) {
            uint32_t *line = g->count + (size_t)b * (size_t)gw;
            int32_t r1 = bin_first_row((int64_t)b + 1, A->rows, gh);
            for (int32_t i = bin_first_row(b, A->rows, gh); i < r1; i++)
                for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
                    uint32_t *n = line + (int64_t)A->colind[k] * gw / A->cols;
                    if (*n < UINT32_MAX) (*n)++;
                }
        }
        if (progress) progress((double)c1 / gh, user);
    }
    for (size_t i = 0; i < (size_t)gw * (size_t)gh; i++) {
        uint32_t n = g->count[i];
        if (n > g->max) g->max = n;
        if (n && (g->min == 0 || n < g->min)) g->min = n;
    }
    return ADIA_OK;
}

void adia__spy_grid_free(adia_spy_grid *g)
{
    free(g->count);
    memset(g, 0, sizeof *g);
}

/* Light blue at the smallest count to dark blue at the largest, on a log
 * scale so a few dense bins do not wash out the rest. */
static adia_rgb ramp(double t)
{
    static const adia_rgb stop[3] = {{158, 202, 235}, {49, 130, 189}, {8, 38, 96}};
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    int k = t < 0.5 ? 0 : 1;
    double u = (t - 0.5 * k) * 2.0;
    adia_rgb a = stop[k], b = stop[k + 1];
    return (adia_rgb){(uint8_t)(a.r + (b.r - a.r) * u + 0.5), (uint8_t)(a.g + (b.g - a.g) * u + 0.5),
                      (uint8_t)(a.b + (b.b - a.b) * u + 0.5)};
}

adia_rgb adia__spy_color(uint32_t n, uint32_t max)
{
    if (n == 0) return WHITE;
    if (max <= 1) return ramp(1.0);
    return ramp(log((double)n) / log((double)max));
}

/* ---------------------------------------------------------------- layout */

typedef struct layout {
    int scale;               /* font scale */
    int deco;                /* caption and legend drawn */
    int32_t margin, line_h;
    int32_t width, height;
    adia_rect plot, band;    /* band.w == 0: no overlay */
    int32_t gw, gh;          /* binning grid */
    int32_t legend_y;
} layout;

static int32_t clamp32(double v, int32_t lo, int32_t hi)
{
    return v < lo ? lo : v > hi ? hi : (int32_t)v;
}

/* Place everything so the longest image side is size: the plot keeps the
 * matrix's aspect ratio, small matrices get k x k pixels per entry. */
static void compute_layout(int32_t rows, int32_t cols, int size, int overlay,
                           int32_t text_w, layout *L)
{
    memset(L, 0, sizeof *L);
    L->deco = size >= 160;
    L->scale = size >= 640 ? 2 : 1;
    L->line_h = ADIA_FONT_CELL_H * L->scale;
    L->margin = L->deco ? (size / 100 > 4 ? size / 100 : 4) : 2;
    int32_t band_w = overlay ? (L->deco ? (size / 60 > 4 ? size / 60 : 4) : 2) : 0;
    int32_t left = L->margin + (overlay ? band_w + 3 : 0), right = L->margin;
    int32_t top = L->deco ? 2 * L->margin + L->line_h : L->margin;
    int32_t bottom = L->deco ? 2 * L->margin + 2 * L->line_h + 4 + (overlay ? L->line_h + 4 : 0)
                             : L->margin;
    int32_t avail_w = size - left - right > 1 ? size - left - right : 1;
    int32_t avail_h = size - top - bottom > 1 ? size - top - bottom : 1;
    double r = rows > 0 ? rows : 1, c = cols > 0 ? cols : 1;
    double s = fmin(avail_w / c, avail_h / r);
    int32_t box_w = clamp32(floor(c * s + 0.5), 1, avail_w);
    int32_t box_h = clamp32(floor(r * s + 0.5), 1, avail_h);
    int32_t pw = box_w, ph = box_h;
    if (s >= 1.0) {                 /* whole pixels per entry */
        pw = (int32_t)c * (int32_t)floor(s);
        ph = (int32_t)r * (int32_t)floor(s);
    }
    L->plot = (adia_rect){left + (box_w - pw) / 2, top + (box_h - ph) / 2, pw, ph};
    L->band = (adia_rect){L->plot.x - 3 - band_w, L->plot.y, band_w, ph};
    L->gw = cols < pw ? (cols > 0 ? cols : 1) : pw;
    L->gh = rows < ph ? (rows > 0 ? rows : 1) : ph;
    L->width = left + box_w + right;
    if (L->deco && L->width < text_w + 2 * L->margin)
        L->width = text_w + 2 * L->margin < size ? text_w + 2 * L->margin : size;
    L->height = top + box_h + bottom;
    L->legend_y = top + box_h + L->margin;
}

/* ------------------------------------------------------------ decoration */

static void caption_text(const adia_matrix *A, char *buf, size_t len)
{
    const adia_csr *M = &A->csr;
    const char *name = A->name[0] ? A->name : "matrix";
    /* A long name is cut so the numbers still fit a narrow picture. */
    int cut = strlen(name) > 32;
    int n = snprintf(buf, len, "%.*s%s  %" PRId32 " x %" PRId32 "  nnz %" PRId64,
                     cut ? 29 : 32, name, cut ? "..." : "", M->rows, M->cols, M->nnz);
    adia_features f;
    /* The type is a bonus: a caption without it beats no picture. */
    if (adia_matrix_analyze(A, NULL, &f) == ADIA_OK && n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "  type %s", adia_matrix_type_name(f.type));
    else
        adia_clear_error();
}

static void draw_count_legend(adia_canvas *c, const layout *L, uint32_t min, uint32_t max)
{
    int32_t x = L->margin, y = L->legend_y;
    int32_t bw = 96 * L->scale;
    for (int32_t i = 0; i < bw; i++) {
        double t = bw > 1 ? (double)i / (bw - 1) : 1.0;
        adia_rgb col = max > 0 ? ramp(t) : WHITE;
        adia__canvas_vline(c, x + i, y, y + L->line_h - 1, col, 1.0, 0);
    }
    adia__canvas_frame(c, (adia_rect){x, y, bw, L->line_h}, FRAME);
    char text[96];
    if (max == 0) snprintf(text, sizeof text, "no nonzeros");
    else snprintf(text, sizeof text, "1 .. %" PRIu32 " nonzeros per pixel (log), min %" PRIu32,
                  max, min);
    adia__draw_text(c, x + bw + 2 * L->scale, y, text, L->scale, INK,
                   c->width - x - bw - L->margin);
}

static void draw_overlay_legend(adia_canvas *c, const layout *L, const char *fmt,
                                const adia_diag *D, int drawn)
{
    char text[160];
    int32_t y = L->legend_y + 2 * L->line_h + 4, x = L->margin, lim = c->width - L->margin;
    snprintf(text, sizeof text, "%s: pieces %" PRId32 ", groups %" PRId32 "  ", fmt,
             D->n_pieces, D->n_groups);
    if (D->n_scatter > 0)
        snprintf(text + strlen(text), sizeof text - strlen(text), "scatter %" PRId64 "  ",
                 D->n_scatter);
    x = adia__draw_text(c, x, y, text, L->scale, INK, lim - x);
    if (drawn & ADIA_OVERLAY_GROUP_LINES)
        x = adia__draw_text(c, x, y, "group change  ", L->scale, adia__overlay_group_line, lim - x);
    if (drawn & ADIA_OVERLAY_PIECE_LINES)
        x = adia__draw_text(c, x, y, "piece", L->scale, adia__overlay_piece_line, lim - x);
    if (drawn != (ADIA_OVERLAY_GROUP_LINES | ADIA_OVERLAY_PIECE_LINES) && D->n_pieces > 1)
        adia__draw_text(c, x, y, "(denser lines left out)", L->scale, INK, lim - x);
}

/* -------------------------------------------------------------- drawing */

static void draw_grid(adia_canvas *c, const layout *L, const adia_spy_grid *g)
{
    for (int32_t by = 0; by < g->gh; by++) {
        int32_t y0 = adia__plot_row_y(L->plot, g->gh, by), y1 = adia__plot_row_y(L->plot, g->gh, by + 1);
        for (int32_t bx = 0; bx < g->gw; bx++) {
            uint32_t n = g->count[(size_t)by * (size_t)g->gw + (size_t)bx];
            if (!n) continue;
            int32_t x0 = L->plot.x + (int32_t)((int64_t)bx * L->plot.w / g->gw);
            int32_t x1 = L->plot.x + (int32_t)((int64_t)(bx + 1) * L->plot.w / g->gw);
            adia__canvas_fill(c, (adia_rect){x0, y0, x1 - x0, y1 - y0}, adia__spy_color(n, g->max));
        }
    }
}

/* The overlay's storage: the diagonal formats keep an adia_diag as impl. */
static adia_status build_overlay(const adia_matrix *A, const adia_spy_options *o,
                                 adia_format **F)
{
    const adia_format_ops *ops = adia__format_ops_find(o->overlay);
    if (!ops) return adia__error(ADIA_ERR_INVALID_ARG, "spy overlay: unknown format '%s'", o->overlay);
    if (!ops->diag.policy)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "spy overlay: '%s' is not a diagonal format (%s)",
                          o->overlay, adia__format_list(1));
    /* Only the structure is drawn: float halves the values' memory. */
    return adia_format_build(A, o->overlay, o->params, ADIA_FLOAT, F);
}

/* The picture's peak beside the matrix, known from the shape and the size
 * before anything is drawn: the bin counts (4 bytes each), the RGB canvas
 * (3 bytes a pixel; its width taken as the widest a caption can make it,
 * size) and libpng's row buffers (a few rows, filters included).  Checked
 * against the memory budget before the output is opened, the overlay
 * built, the caption's analysis or the binning run. */
static adia_status check_picture_budget(const adia_matrix *A, int size, int overlay)
{
    layout L;
    compute_layout(A->csr.rows, A->csr.cols, size, overlay, size, &L);
    int64_t grid = (int64_t)L.gw * L.gh * (int64_t)sizeof(uint32_t);
    int64_t canvas = 3 * (int64_t)L.width * L.height, png = 6 * (3 * (int64_t)L.width + 1);
    char what[200];
    snprintf(what, sizeof what, "drawing a %" PRId32 " x %" PRId32 " picture (%" PRId32 " x %"
             PRId32 " bins) of a %" PRId32 " x %" PRId32 " matrix", L.width, L.height, L.gw,
             L.gh, A->csr.rows, A->csr.cols);
    return adia__budget_check(grid + canvas + png, what);
}

/* Size <= 0 means the default; anything else must be in range. */
static adia_status spy_size(const adia_spy_options *opt, int *size)
{
    *size = opt && opt->size > 0 ? opt->size : 800;
    if (*size < 8 || *size > ADIA_PICTURE_MAX_SIDE)
        return adia__error(ADIA_ERR_INVALID_ARG, "spy picture size %d out of range 8..%d",
                          *size, ADIA_PICTURE_MAX_SIDE);
    return ADIA_OK;
}

adia_status adia__spy_render(const adia_matrix *A, const adia_spy_options *opt,
                            const adia_diag *D, adia_canvas *c, adia_spy_info *info)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia__spy_render"));
    adia_spy_options o = {0};
    if (opt) o = *opt;
    ADIA_TRY(spy_size(opt, &o.size));
    ADIA_TRY(check_picture_budget(A, o.size, D != NULL));
    char caption[256];
    if (o.caption) snprintf(caption, sizeof caption, "%s", o.caption);
    else caption_text(A, caption, sizeof caption);
    int scale = o.size >= 640 ? 2 : 1;
    int32_t text_w = adia__text_width(caption, scale);
    if (text_w < 64 * ADIA_FONT_CELL_W * scale) text_w = 64 * ADIA_FONT_CELL_W * scale;
    layout L;
    compute_layout(A->csr.rows, A->csr.cols, o.size, D != NULL, text_w, &L);
    adia_spy_grid g;
    ADIA_TRY(adia__spy_grid_build(&A->csr, L.gw, L.gh, o.progress, o.progress_user, &g));
    adia_status s = adia__canvas_init(c, L.width, L.height, WHITE);
    if (s == ADIA_OK) {
        draw_grid(c, &L, &g);
        adia__canvas_frame(c, L.plot, FRAME);
        int drawn = D ? adia__overlay_draw(c, L.plot, L.band, D) : 0;
        if (L.deco) {
            adia__draw_text(c, L.margin, L.margin, caption, L.scale, INK, L.width - 2 * L.margin);
            draw_count_legend(c, &L, g.min, g.max);
            if (D) draw_overlay_legend(c, &L, o.overlay ? o.overlay : "overlay", D, drawn);
        }
        if (info) *info = (adia_spy_info){L.plot, L.band, g.gw, g.gh, g.max};
    }
    adia__spy_grid_free(&g);
    return s;
}

adia_status adia_matrix_spy_png(const adia_matrix *A, const char *path,
                                const adia_spy_options *opt)
{
    ADIA_TRY(adia__matrix_check_handle(A, "adia_matrix_spy_png"));
    if (!path) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_spy_png: path is NULL");
    int size;
    ADIA_TRY(spy_size(opt, &size));
    ADIA_TRY(check_picture_budget(A, size, opt && opt->overlay));
    /* Opened first: an unwritable output fails before minutes of work. */
    adia_outfile out;
    ADIA_TRY(adia__outfile_open(&out, path, false));
    adia_format *F = NULL;
    adia_status s = opt && opt->overlay ? build_overlay(A, opt, &F) : ADIA_OK;
    adia_canvas c = {0};
    if (s == ADIA_OK)
        s = adia__spy_render(A, opt, F ? adia__format_diag(F) : NULL, &c, NULL);
    adia_format_destroy(F);
    s = s == ADIA_OK ? adia__canvas_encode_png(&c, &out) : adia__outfile_finish(&out, s);
    adia__canvas_free(&c);
    return s;
}
