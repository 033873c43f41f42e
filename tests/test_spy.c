/* test_spy.c -- sparsity pictures and bar charts: PNG files decode to the
 * requested size, pixels land where the matrix and the overlay say, the
 * binning grid stays bounded for 1e7 nonzeros, bad paths fail clearly. */
#include "testutil.h"
#include "picture/picture.h"

#include <math.h>
#include <png.h>
#include <string.h>
#include <unistd.h>

typedef struct image { int w, h; uint8_t *px; } image;

/* Decode an RGB PNG with libpng's simplified reader; px NULL on failure. */
static image read_png(const char *path)
{
    image im = {0, 0, NULL};
    png_image p;
    memset(&p, 0, sizeof p);
    p.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_file(&p, path)) return im;
    p.format = PNG_FORMAT_RGB;
    im.px = malloc(PNG_IMAGE_SIZE(p));
    if (im.px && png_image_finish_read(&p, NULL, im.px, 0, NULL)) {
        im.w = (int)p.width;
        im.h = (int)p.height;
    } else {
        free(im.px);
        im.px = NULL;
        png_image_free(&p);
    }
    return im;
}

static adia_rgb at(const image *im, int x, int y)
{
    const uint8_t *q = im->px + 3 * ((size_t)y * (size_t)im->w + (size_t)x);
    return (adia_rgb){q[0], q[1], q[2]};
}
static int same(adia_rgb a, adia_rgb b) { return a.r == b.r && a.g == b.g && a.b == b.b; }
static int is_white(adia_rgb a) { return a.r == 255 && a.g == 255 && a.b == 255; }
static int is_dark(adia_rgb a) { return a.r + a.g + a.b < 300; }
static int is_red(adia_rgb a) { return a.r > 150 && a.g < 110 && a.b < 110; }

/* n x n banded matrix with offsets -bw..bw, built directly as CSR. */
static adia_matrix *banded(int32_t n, int32_t bw)
{
    adia_csr c;
    int64_t nnz = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t lo = i - bw < 0 ? 0 : i - bw, hi = i + bw >= n ? n - 1 : i + bw;
        nnz += hi - lo + 1;
    }
    if (adia__csr_alloc(&c, n, n, nnz, ADIA_DOUBLE) != ADIA_OK) return NULL;
    double *v = c.values;
    int64_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t lo = i - bw < 0 ? 0 : i - bw, hi = i + bw >= n ? n - 1 : i + bw;
        for (int32_t j = lo; j <= hi; j++) {
            c.colind[k] = j;
            v[k++] = 1.0;
        }
        c.rowptr[i + 1] = k;
    }
    adia_matrix *A = NULL;
    if (adia__matrix_wrap(&c, &A) != ADIA_OK) return NULL;
    return A;
}

static const char *tmp_path(const char *name)
{
    static char buf[4][256];
    static int next;
    char *b = buf[next++ % 4];
    snprintf(b, sizeof buf[0], "/tmp/adia_test_spy_%d_%s", (int)getpid(), name);
    return b;
}

/* A diagonal matrix: dark on the plot's diagonal, white elsewhere. */
static void test_diagonal(int32_t n, int size)
{
    adia_matrix *A = banded(n, 0);
    CHECK(A != NULL, "banded(%d, 0)", (int)n);
    if (!A) return;
    const char *path = tmp_path("diag.png");
    adia_spy_options o = {.size = size};
    CHECK_OK(adia_matrix_spy_png(A, path, &o));
    adia_canvas c;
    adia_spy_info info;
    CHECK_OK(adia__spy_render(A, &o, NULL, &c, &info));
    image im = read_png(path);
    CHECK(im.px != NULL, "decode %s", path);
    if (im.px) {
        CHECK((im.w > im.h ? im.w : im.h) == size, "n=%d: image %dx%d, longest side should be %d",
              (int)n, im.w, im.h, size);
        CHECK(im.w == c.width && im.h == c.height, "PNG %dx%d vs canvas %dx%d", im.w, im.h,
              (int)c.width, (int)c.height);
        adia_rect p = info.plot;
        /* Expected: entry (i, i) covers pixel rows and columns
         * [i*h/n, (i+1)*h/n), at least one pixel each way. */
        char *want = calloc((size_t)p.w * (size_t)p.h, 1);
        for (int32_t i = 0; want && i < n; i++) {
            int32_t y0 = (int32_t)((int64_t)i * p.h / n), y1 = (int32_t)((int64_t)(i + 1) * p.h / n);
            int32_t x0 = (int32_t)((int64_t)i * p.w / n), x1 = (int32_t)((int64_t)(i + 1) * p.w / n);
            if (y1 == y0) y1++;
            if (x1 == x0) x1++;
            for (int32_t y = y0; y < y1; y++)
                for (int32_t x = x0; x < x1; x++) want[(size_t)y * (size_t)p.w + (size_t)x] = 1;
        }
        int bad_dark = 0, bad_white = 0;
        for (int32_t y = 0; want && y < p.h; y++)
            for (int32_t x = 0; x < p.w; x++) {
                adia_rgb px = at(&im, p.x + x, p.y + y);
                if (want[(size_t)y * (size_t)p.w + (size_t)x]) bad_dark += !is_dark(px);
                else bad_white += !is_white(px);
            }
        free(want);
        CHECK(bad_dark == 0, "n=%d: %d pixels on the diagonal are not dark", (int)n, bad_dark);
        CHECK(bad_white == 0, "n=%d: %d pixels off the diagonal are not background", (int)n, bad_white);
        /* the frame is drawn around the plot */
        CHECK(!is_white(at(&im, p.x - 1, p.y + p.h / 2)) && !is_white(at(&im, p.x + p.w, p.y)),
              "frame missing around plot");
        free(im.px);
    }
    /* whole pixels per row when the rows fit, one bin per pixel otherwise */
    if (info.gh == n)
        CHECK(info.plot.h % n == 0 && info.plot.h >= n, "plot height %d for %d rows",
              (int)info.plot.h, (int)n);
    else
        CHECK(info.gh == info.plot.h && n > info.plot.h, "grid %d rows, plot %d, matrix %d",
              (int)info.gh, (int)info.plot.h, (int)n);
    adia__canvas_free(&c);
    remove(path);
    adia_matrix_destroy(A);
}

/* Overlay from a hand-built adia_diag: rows 0..99 in pieces starting at
 * 0, 20, 50, 70 with groups 0, 0, 1, 1: a group change at row 50, plain
 * piece boundaries at 20 and 70. */
static void test_overlay(void)
{
    adia_matrix *A = banded(100, 1);
    if (!A) { CHECK(0, "banded(100, 1)"); return; }
    int32_t start[] = {0, 20, 50, 70, 100}, group[] = {0, 0, 1, 1}, gstart[] = {0, 3, 5};
    int32_t offs[] = {-1, 0, 1, 0, 1};
    int64_t pdata[] = {0, 60, 150, 190, 250};
    adia_diag D = {.rows = 100, .cols = 100, .vtype = ADIA_DOUBLE, .n_pieces = 4,
                   .piece_start = start, .piece_group = group, .piece_data = pdata,
                   .n_groups = 2, .group_start = gstart, .offsets = offs, .nnz = 298};
    adia_spy_options o = {.size = 500, .overlay = "brcsd2"};
    adia_canvas c;
    adia_spy_info info;
    CHECK_OK(adia__spy_render(A, &o, &D, &c, &info));
    adia_rect p = info.plot;
    CHECK(info.band.w > 0 && info.band.x + info.band.w < p.x, "band %d+%d left of plot at %d",
          (int)info.band.x, (int)info.band.w, (int)p.x);
    int32_t x = p.x + p.w / 5;                  /* column 20: far from rows 50, 70 */
    for (int k = 1; k < 4; k++) {
        int32_t y = p.y + (int32_t)((int64_t)start[k] * p.h / 100);
        int strong = group[k] != group[k - 1];
        int xs = strong ? x : p.x + p.w - p.w / 10;   /* right end: away from data */
        int hits = 0;
        for (int32_t dx = 0; dx < 8; dx++) {
            adia_rgb px = adia__canvas_get(&c, xs + dx, y);
            hits += strong ? is_red(px) : (px.r > 200 && px.g > 120 && px.g < 200 && px.b < 120);
        }
        CHECK(strong ? hits == 8 : hits >= 3, "row %d (pixel row %d): %d of 8 pixels show the %s line",
              (int)start[k], (int)y, hits, strong ? "group" : "piece");
        adia_rgb above = adia__canvas_get(&c, p.x + p.w - 3, y - 2);
        CHECK(is_white(above), "row %d: pixel row %d above the boundary is not background",
              (int)start[k], (int)y - 2);
    }
    /* the band: the same colour within a group, another after the change */
    int32_t bx = info.band.x + info.band.w / 2;
    adia_rgb g0 = adia__canvas_get(&c, bx, p.y + p.h / 10), g0b = adia__canvas_get(&c, bx, p.y + p.h * 4 / 10);
    adia_rgb g1 = adia__canvas_get(&c, bx, p.y + p.h * 6 / 10), g1b = adia__canvas_get(&c, bx, p.y + p.h * 9 / 10);
    CHECK(same(g0, g0b) && same(g1, g1b) && !same(g0, g1) && !is_white(g0) && !is_white(g1),
          "band colours %d,%d,%d / %d,%d,%d / %d,%d,%d / %d,%d,%d", g0.r, g0.g, g0.b, g0b.r,
          g0b.g, g0b.b, g1.r, g1.g, g1.b, g1b.r, g1b.g, g1b.b);
    adia__canvas_free(&c);
    /* 100 one-row pieces, each its own group, in a plot of fewer than 300
     * pixel rows: no lines (they would paint the plot red), but the band */
    int32_t s100[101], g100[100];
    for (int i = 0; i <= 100; i++) s100[i] = i;
    for (int i = 0; i < 100; i++) g100[i] = i;
    adia_diag E = D;
    E.n_pieces = 100;
    E.piece_start = s100;
    E.piece_group = g100;
    o.size = 200;
    CHECK_OK(adia__spy_render(A, &o, &E, &c, &info));
    int reds = 0;
    for (int32_t y = info.plot.y; y < info.plot.y + info.plot.h; y++)
        reds += is_red(adia__canvas_get(&c, info.plot.x + info.plot.w - 2, y));
    CHECK(info.plot.h < 300 && reds == 0, "dense groups: %d red pixels in a plot %d high", reds,
          (int)info.plot.h);
    CHECK(!is_white(adia__canvas_get(&c, info.band.x, info.plot.y + info.plot.h / 2)), "band drawn");
    adia__canvas_free(&c);
    o.size = 500;
    /* the public path refuses a non-diagonal overlay */
    o.overlay = "csr";
    CHECK_ERR(adia_matrix_spy_png(A, tmp_path("ov.png"), &o), ADIA_ERR_INVALID_ARG, "not a diagonal format");
    o.overlay = "nosuchformat";
    CHECK_ERR(adia_matrix_spy_png(A, tmp_path("ov.png"), &o), ADIA_ERR_INVALID_ARG, "nosuchformat");
    CHECK(access(tmp_path("ov.png"), F_OK) != 0, "a failed call leaves no file behind");
    adia_matrix_destroy(A);
}

/* 1e7 nonzeros: the grid is bounded by the picture, not by nnz. */
static void test_large(void)
{
    int32_t n = 1000000;
    adia_matrix *A = banded(n, 5);
    if (!A) { CHECK(0, "banded(1e6, 5)"); return; }
    CHECK(adia_matrix_nnz(A) > 10000000, "nnz %lld", (long long)adia_matrix_nnz(A));
    adia_spy_options o = {.size = 300};
    adia_canvas c;
    adia_spy_info info;
    CHECK_OK(adia__spy_render(A, &o, NULL, &c, &info));
    CHECK(info.gw <= 300 && info.gh <= 300 && info.gw == info.plot.w && info.gh == info.plot.h,
          "grid %dx%d for plot %dx%d", (int)info.gw, (int)info.gh, (int)info.plot.w, (int)info.plot.h);
    /* 11 per row, n/gh rows per bin row: a diagonal bin holds most of them */
    CHECK(info.max > 11u * (uint32_t)(n / info.gh) / 2, "largest bin %u", (unsigned)info.max);
    adia__canvas_free(&c);
    const char *path = tmp_path("large.png");
    CHECK_OK(adia_matrix_spy_png(A, path, &o));
    image im = read_png(path);
    CHECK(im.px && (im.w > im.h ? im.w : im.h) == 300, "large: decoded %dx%d", im.w, im.h);
    free(im.px);
    remove(path);
    adia_matrix_destroy(A);
}

#define FULL_MSG "writing /dev/full: No space left on device"

static void test_errors(void)
{
    adia_matrix *A = banded(10, 1);
    if (!A) { CHECK(0, "banded(10, 1)"); return; }
    CHECK_ERR(adia_matrix_spy_png(A, "/nonexistent-adia-dir/x.png", NULL), ADIA_ERR_IO,
              "/nonexistent-adia-dir/x.png");
    /* a regular file as the folder: fails for root too */
    const char *file = tmp_path("plain");
    FILE *f = fopen(file, "w");
    CHECK(f != NULL, "create %s", file);
    if (f) fclose(f);
    char bad[300];
    snprintf(bad, sizeof bad, "%s/x.png", file);
    CHECK_ERR(adia_matrix_spy_png(A, bad, NULL), ADIA_ERR_IO, bad);
    adia_canvas c;
    CHECK_OK(adia__canvas_init(&c, 4, 4, (adia_rgb){0, 0, 0}));
    CHECK_ERR(adia__canvas_write_png(&c, bad), ADIA_ERR_IO, bad);
    adia__canvas_free(&c);
    /* a full disk: a device is written in place, and the write error comes
     * back as ADIA_ERR_IO (noise so the data outgrows the output buffer and
     * fails inside libpng), and the device stays */
    if (access("/dev/full", W_OK) == 0) {
        CHECK_OK(adia__canvas_init(&c, 512, 512, (adia_rgb){0, 0, 0}));
        uint64_t st = 1;
        for (size_t i = 0; c.pix && i < 3u * 512 * 512; i++) c.pix[i] = (uint8_t)(test_rand(&st) * 127 + 128);
        CHECK_ERR(adia__canvas_write_png(&c, "/dev/full"), ADIA_ERR_IO, FULL_MSG);
        CHECK(access("/dev/full", F_OK) == 0, "/dev/full removed");
        c.width = 2;   /* small: the error shows only at the commit */
        c.height = 2;
        CHECK_ERR(adia__canvas_write_png(&c, "/dev/full"), ADIA_ERR_IO, FULL_MSG);
        adia__canvas_free(&c);
    }
    const char *lab[] = {"a"};
    double val[] = {1};
    CHECK_ERR(adia_bar_chart_png(bad, "t", 1, lab, val, "ms", 0, NULL, NULL), ADIA_ERR_IO, bad);
    remove(file);
    adia_spy_options o = {.size = 7};
    CHECK_ERR(adia_matrix_spy_png(A, tmp_path("s.png"), &o), ADIA_ERR_INVALID_ARG, "out of range");
    o.size = 8193;
    CHECK_ERR(adia_matrix_spy_png(A, tmp_path("s.png"), &o), ADIA_ERR_INVALID_ARG, "8..8192");
    CHECK_ERR(adia_matrix_spy_png(NULL, tmp_path("s.png"), NULL), ADIA_ERR_INVALID_HANDLE, "NULL");
    adia_matrix_destroy(A);
}

/* The picture's memory is known from the matrix's shape and the size: it
 * is checked against the budget before anything is drawn or written (a
 * 16 x 16 matrix at size 8192 needs a 201 MB canvas; --memory 100K let it
 * through).  Within the budget the same call succeeds. */
static void test_budget(void)
{
    adia_matrix *A = banded(16, 1);
    if (!A) { CHECK(0, "banded(16, 1)"); return; }
    const char *out = tmp_path("budget.png");
    remove(out);
    adia_spy_options o = {.size = 8192};
    adia_set_memory_budget(100000);
    double t0 = test_seconds();
    CHECK_ERR(adia_matrix_spy_png(A, out, &o), ADIA_ERR_NO_MEMORY,
              "drawing a 8192 x 8192 picture (16 x 16 bins) of a 16 x 16 matrix needs 201.5 MB");
    CHECK(test_seconds() - t0 < 0.5, "refused after %.2f s: not up front", test_seconds() - t0);
    CHECK(access(out, F_OK) != 0, "a refused picture left %s", out);
    o.overlay = "dia";
    CHECK_ERR(adia_matrix_spy_png(A, out, &o), ADIA_ERR_NO_MEMORY, "budget 100.0 kB");
    adia_canvas c = {0};
    CHECK_ERR(adia__spy_render(A, &o, NULL, &c, NULL), ADIA_ERR_NO_MEMORY, "picture");
    CHECK(c.pix == NULL, "no canvas after a refusal");
    adia_set_memory_budget(300000000);
    o.overlay = NULL;
    o.size = 1000;
    CHECK_OK(adia_matrix_spy_png(A, out, &o));
    adia_set_memory_budget(0);   /* the default again */
    remove(out);
    adia_matrix_destroy(A);
}

/* Runs of image rows holding bar-coloured pixels: one per drawn bar, with
 * the bar's length in pixels. */
static int bar_lengths(const image *im, int *len, int max)
{
    const adia_rgb bar = {49, 130, 189};
    int n = 0, in_bar = 0;
    for (int y = 0; y < im->h; y++) {
        int first = -1, last = -1;    /* extent: reference lines may cross a bar */
        for (int x = 0; x < im->w; x++)
            if (same(at(im, x, y), bar)) {
                if (first < 0) first = x;
                last = x;
            }
        int count = first < 0 ? 0 : last - first + 1;
        if (count && !in_bar && n < max) len[n++] = count;
        in_bar = count > 0;
    }
    return n;
}

static void test_bar_chart(void)
{
    const char *labels[] = {"csr", "dia", "brcsd2", "failed"};
    double values[] = {1.0, 2.0, 4.0, NAN};
    const char *refs[] = {"cuSPARSE", "floor"};
    double refv[] = {3.0, 0.5};
    const char *path = tmp_path("bars.png");
    CHECK_OK(adia_bar_chart_png(path, "SpMV time", 4, labels, values, "ms", 2, refs, refv));
    image im = read_png(path);
    CHECK(im.px && im.w == 1000 && im.h > 4 * 22, "bar chart decoded %dx%d", im.w, im.h);
    if (im.px) {
        int len[8];
        int nb = bar_lengths(&im, len, 8);
        CHECK(nb == 3, "%d bars drawn (NaN draws none)", nb);
        if (nb == 3)
            CHECK(abs(2 * len[0] - len[1]) <= 2 && abs(2 * len[1] - len[2]) <= 2,
                  "bar lengths %d %d %d not 1:2:4", len[0], len[1], len[2]);
        /* the cuSPARSE line: the column with most red pixels, at 3/4 of the longest bar */
        int best_x = -1, best = 0, bar_x = -1;
        for (int x = 0; x < im.w; x++) {
            int reds = 0;
            for (int y = 0; y < im.h; y++) {
                adia_rgb q = at(&im, x, y);
                reds += same(q, (adia_rgb){210, 30, 30});
                if (bar_x < 0 && same(q, (adia_rgb){49, 130, 189})) bar_x = x;
            }
            if (reds > best) { best = reds; best_x = x; }
        }
        if (nb == 3)
            CHECK(abs(best_x - (bar_x + len[2] * 3 / 4)) <= 2, "cuSPARSE line at x=%d, expected %d",
                  best_x, bar_x + len[2] * 3 / 4);
        free(im.px);
    }
    const char *path2 = tmp_path("bars2.png");
    CHECK_OK(adia_bar_chart_png(path2, "t", 2, labels, values, "ms", 0, NULL, NULL));
    image im2 = read_png(path2);
    CHECK(im2.px && im2.w == 1000 && im2.h < im.h, "fewer bars, smaller chart: %d vs %d", im2.h, im.h);
    free(im2.px);
    double neg[] = {1.0, -1.0};
    CHECK_ERR(adia_bar_chart_png(path2, "t", 2, labels, neg, "ms", 0, NULL, NULL),
              ADIA_ERR_INVALID_ARG, "negative");
    remove(path);
    remove(path2);
}

/* Binning against a direct count, with bins that do not divide the sizes. */
static void test_grid(void)
{
    adia_matrix *A = test_random_matrix(7, 97, 61, 0.2);
    const adia_csr *M = &A->csr;
    adia_spy_grid g;
    CHECK_OK(adia__spy_grid_build(M, 13, 29, NULL, NULL, &g));
    uint32_t want[29][13] = {{0}};
    for (int32_t i = 0; i < M->rows; i++)
        for (int64_t k = M->rowptr[i]; k < M->rowptr[i + 1]; k++)
            want[(int64_t)i * 29 / M->rows][(int64_t)M->colind[k] * 13 / M->cols]++;
    int bad = 0;
    uint32_t max = 0;
    for (int y = 0; y < 29; y++)
        for (int x = 0; x < 13; x++) {
            bad += g.count[y * 13 + x] != want[y][x];
            if (want[y][x] > max) max = want[y][x];
        }
    CHECK(bad == 0 && g.max == max, "%d bins differ from a direct count, max %u vs %u", bad,
          (unsigned)g.max, (unsigned)max);
    adia__spy_grid_free(&g);
    CHECK_ERR(adia__spy_grid_build(M, 62, 10, NULL, NULL, &g), ADIA_ERR_INVALID_ARG, "does not fit");
    adia_rgb c1 = adia__spy_color(1, 1000), cm = adia__spy_color(1000, 1000), c0 = adia__spy_color(0, 1000);
    CHECK(is_white(c0) && c1.r + c1.g + c1.b > cm.r + cm.g + cm.b + 200 && !is_white(c1),
          "colour scale: 0 white, 1 light, max dark");
    adia_matrix_destroy(A);
}

/* Rectangular matrices keep their aspect; the longest side is the size. */
static void test_aspect(void)
{
    adia_matrix *T = test_random_matrix(3, 5000, 100, 0.01), *W = test_random_matrix(3, 100, 5000, 0.01);
    adia_spy_options o = {.size = 400};
    adia_canvas c;
    adia_spy_info info;
    CHECK_OK(adia__spy_render(T, &o, NULL, &c, &info));
    CHECK(c.height == 400 && info.plot.h > 40 * info.plot.w && info.plot.w >= 1,
          "tall: image %dx%d plot %dx%d", (int)c.width, (int)c.height, (int)info.plot.w, (int)info.plot.h);
    adia__canvas_free(&c);
    CHECK_OK(adia__spy_render(W, &o, NULL, &c, &info));
    CHECK(c.width == 400 && info.plot.w > 40 * info.plot.h && info.plot.h >= 1,
          "wide: image %dx%d plot %dx%d", (int)c.width, (int)c.height, (int)info.plot.w, (int)info.plot.h);
    adia__canvas_free(&c);
    adia_matrix_destroy(T);
    adia_matrix_destroy(W);
}

/* Text: every glyph is drawn as its bitmap, and no two glyphs are equal
 * (a slip in the table would show up as a duplicate). */
static void test_font(void)
{
    adia_canvas c;
    CHECK_OK(adia__canvas_init(&c, 20, 20, (adia_rgb){255, 255, 255}));
    int bad = 0, dup = 0;
    for (int ch = 32; ch < 127; ch++) {
        adia__canvas_fill(&c, (adia_rect){0, 0, 20, 20}, (adia_rgb){255, 255, 255});
        char s[2] = {(char)ch, 0};
        int32_t end = adia__draw_text(&c, 2, 3, s, 1, (adia_rgb){0, 0, 0}, 0);
        bad += end != 2 + ADIA_FONT_CELL_W;
        const uint8_t *g = adia__font_glyph((char)ch);
        for (int r = 0; r < 8; r++)
            for (int b = 0; b < 5; b++)
                bad += ((g[r] >> (4 - b)) & 1) != is_dark(adia__canvas_get(&c, 3 + b, 4 + r));
        for (int other = 33; other < ch; other++)
            dup += ch != 32 && !memcmp(g, adia__font_glyph((char)other), 8);
    }
    CHECK(bad == 0, "%d glyph pixels drawn wrong", bad);
    CHECK(dup == 0, "%d pairs of identical glyphs", dup);
    CHECK(adia__font_glyph('\n') == adia__font_glyph('?'), "non-printable drawn as '?'");
    CHECK(adia__text_width("abc", 2) == 3 * ADIA_FONT_CELL_W * 2, "text width");
    adia__canvas_free(&c);
}

/* Empty matrices still give a framed picture. */
static void test_empty(void)
{
    int64_t rp[6] = {0};
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_create_csr(5, 5, 0, rp, NULL, NULL, ADIA_DOUBLE, &A));
    const char *path = tmp_path("empty.png");
    CHECK_OK(adia_matrix_spy_png(A, path, NULL));
    image im = read_png(path);
    CHECK(im.px && (im.w == 800 || im.h == 800), "empty 5x5: %dx%d", im.w, im.h);
    free(im.px);
    adia_matrix_destroy(A);
    CHECK_OK(adia_matrix_create_csr(0, 0, 0, rp, NULL, NULL, ADIA_DOUBLE, &A));
    CHECK_OK(adia_matrix_spy_png(A, path, NULL));
    adia_matrix_destroy(A);
    remove(path);
}

/* Every diagonal format the registry has works as overlay; every other
 * format is refused (its storage is not the diagonal core's). */
static void test_real_overlays(void)
{
    adia_matrix *A = banded(300, 2);
    if (!A) { CHECK(0, "banded(300, 2)"); return; }
    const char *path = tmp_path("real_ov.png");
    int tried = 0;
    for (int i = 0; i < adia_format_count(); i++) {
        const char *name = adia_format_name_at(i);
        adia_spy_options o = {.size = 300, .overlay = name};
        if (!adia_format_is_diagonal(name)) {
            CHECK(adia_matrix_spy_png(A, path, &o) != ADIA_OK, "overlay %s accepted", name);
            continue;
        }
        tried++;
        CHECK_OK(adia_matrix_spy_png(A, path, &o));
        image im = read_png(path);
        CHECK(im.px && (im.w == 300 || im.h == 300), "overlay %s: %dx%d", name, im.w, im.h);
        free(im.px);
    }
    CHECK(tried > 0, "no diagonal format registered");
    remove(path);
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    test_diagonal(40, 400);      /* small: whole pixels per entry */
    test_diagonal(5000, 300);    /* large: one bin per pixel */
    test_diagonal(3, 8);         /* smallest picture, no decoration */
    test_font();
    test_empty();
    test_real_overlays();
    test_grid();
    test_aspect();
    test_overlay();
    test_large();
    test_errors();
    test_budget();
    test_bar_chart();
    return TEST_END();
}
