/* chart.c -- adia_bar_chart_png: horizontal bars for benchmark results,
 * with reference values (cuSPARSE time, the bandwidth floor) as dashed
 * vertical lines. */
#include "picture.h"

#include <math.h>
#include <stdio.h>

enum { MAX_BARS = 250, MAX_REFS = 16, SCALE = 2, WIDTH = 1000, BAR_H = 22, GAP = 8,
       MARGIN = 12, MAX_LABEL_CHARS = 24 };

static const adia_rgb WHITE = {255, 255, 255}, INK = {20, 20, 20}, GRID = {225, 225, 225},
                      BAR = {49, 130, 189}, FRAME = {96, 96, 96};
static const adia_rgb ref_palette[] = {{210, 30, 30}, {49, 163, 84}, {117, 107, 177},
                                       {230, 85, 13}, {23, 190, 207}, {140, 86, 75}};
enum { N_REF_COLOURS = sizeof ref_palette / sizeof *ref_palette };

static adia_status check_args(const char *path, int n, const char *const *labels,
                              const double *values, int n_refs,
                              const char *const *ref_labels, const double *ref_values)
{
    if (!path) return adia__error(ADIA_ERR_INVALID_ARG, "adia_bar_chart_png: path is NULL");
    if (n < 0 || n > MAX_BARS || n_refs < 0 || n_refs > MAX_REFS)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "adia_bar_chart_png: %d bars and %d reference lines (allowed 0..%d, 0..%d)",
                          n, n_refs, MAX_BARS, MAX_REFS);
    if ((n > 0 && (!labels || !values)) || (n_refs > 0 && (!ref_labels || !ref_values)))
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_bar_chart_png: NULL labels or values");
    for (int i = 0; i < n; i++) {
        if (!labels[i]) return adia__error(ADIA_ERR_INVALID_ARG, "adia_bar_chart_png: label %d is NULL", i);
        if (values[i] < 0)
            return adia__error(ADIA_ERR_INVALID_ARG, "adia_bar_chart_png: value %d ('%s') is negative: %g",
                              i, labels[i], values[i]);
    }
    for (int i = 0; i < n_refs; i++)
        if (!ref_labels[i] || !isfinite(ref_values[i]) || ref_values[i] < 0)
            return adia__error(ADIA_ERR_INVALID_ARG,
                              "adia_bar_chart_png: reference %d needs a label and a finite value >= 0", i);
    return ADIA_OK;
}

/* Tick step 1, 2 or 5 times a power of ten giving about 5 ticks up to vmax. */
static double tick_step(double vmax)
{
    double raw = vmax / 5.0, p = pow(10.0, floor(log10(raw))), f = raw / p;
    return (f < 1.5 ? 1.0 : f < 3.5 ? 2.0 : f < 7.5 ? 5.0 : 10.0) * p;
}

typedef struct chart {
    adia_rect plot;          /* bar area */
    double vmax;
    int32_t cell, line_h;
} chart;

static int32_t value_x(const chart *ch, double v)
{
    return ch->plot.x + (int32_t)(v / ch->vmax * ch->plot.w + 0.5);
}

static void draw_axis(adia_canvas *c, const chart *ch, const char *unit)
{
    double step = tick_step(ch->vmax);
    int32_t y = ch->plot.y + ch->plot.h + 4;
    int last = (int)(ch->vmax * (1 + 1e-9) / step);
    for (int k = 0; k <= last && k <= 20; k++) {
        int32_t x = value_x(ch, k * step);
        adia__canvas_vline(c, x, ch->plot.y, ch->plot.y + ch->plot.h - 1, GRID, 1.0, 0);
        char t[48];
        /* the unit once, after the last tick label */
        snprintf(t, sizeof t, "%g%s%s", k * step, k == last && unit ? " " : "",
                 k == last && unit ? unit : "");
        char num[32];
        snprintf(num, sizeof num, "%g", k * step);
        adia__draw_text(c, x - adia__text_width(num, SCALE) / 2, y, t, SCALE, INK, 0);
    }
}

static void draw_bars(adia_canvas *c, const chart *ch, int n, const char *const *labels,
                      const double *values, const char *unit)
{
    for (int i = 0; i < n; i++) {
        int32_t y = ch->plot.y + GAP / 2 + i * (BAR_H + GAP);
        int32_t ty = y + (BAR_H - ch->line_h) / 2;
        adia__draw_text(c, MARGIN, ty, labels[i], SCALE, INK, ch->plot.x - MARGIN - 8);
        char t[48];
        int32_t end = ch->plot.x + 4;
        if (isfinite(values[i])) {
            end = value_x(ch, values[i]);
            adia__canvas_fill(c, (adia_rect){ch->plot.x, y, end - ch->plot.x, BAR_H}, BAR);
            snprintf(t, sizeof t, "%.3g %s", values[i], unit ? unit : "");
        } else {
            snprintf(t, sizeof t, "n/a");
        }
        adia__draw_text(c, end + 4, ty, t, SCALE, INK, 0);
    }
}

static void draw_refs(adia_canvas *c, const chart *ch, int n_refs, const char *const *ref_labels,
                      const double *ref_values, const char *unit, int32_t legend_y)
{
    for (int i = 0; i < n_refs; i++) {
        adia_rgb col = ref_palette[i % N_REF_COLOURS];
        int32_t x = value_x(ch, ref_values[i]);
        adia__canvas_vline(c, x, ch->plot.y, ch->plot.y + ch->plot.h - 1, col, 1.0, 6);
        adia__canvas_vline(c, x + 1, ch->plot.y, ch->plot.y + ch->plot.h - 1, col, 1.0, 6);
        int32_t y = legend_y + i * (ch->line_h + 4);
        adia__canvas_hline(c, MARGIN, MARGIN + 40, y + ch->line_h / 2, col, 1.0, 6);
        adia__canvas_hline(c, MARGIN, MARGIN + 40, y + ch->line_h / 2 + 1, col, 1.0, 6);
        char t[160];
        snprintf(t, sizeof t, "%s: %.3g %s", ref_labels[i], ref_values[i], unit ? unit : "");
        adia__draw_text(c, MARGIN + 48, y, t, SCALE, col, WIDTH - MARGIN - 48);
    }
}

adia_status adia_bar_chart_png(const char *path, const char *title, int n,
                               const char *const *labels, const double *values,
                               const char *unit, int n_refs,
                               const char *const *ref_labels,
                               const double *ref_values)
{
    ADIA_TRY(check_args(path, n, labels, values, n_refs, ref_labels, ref_values));
    chart ch = {.cell = ADIA_FONT_CELL_W * SCALE, .line_h = ADIA_FONT_CELL_H * SCALE};
    int32_t label_w = 0;
    ch.vmax = 0;
    for (int i = 0; i < n; i++) {
        int32_t w = adia__text_width(labels[i], SCALE);
        if (w > label_w) label_w = w;
        if (isfinite(values[i]) && values[i] > ch.vmax) ch.vmax = values[i];
    }
    for (int i = 0; i < n_refs; i++)
        if (ref_values[i] > ch.vmax) ch.vmax = ref_values[i];
    if (!(ch.vmax > 0)) ch.vmax = 1;
    if (label_w > MAX_LABEL_CHARS * ch.cell) label_w = MAX_LABEL_CHARS * ch.cell;
    int32_t top = MARGIN + ch.line_h + MARGIN;
    /* Room right of the longest bar for its value text. */
    ch.plot = (adia_rect){MARGIN + label_w + 8, top, 0, n * (BAR_H + GAP)};
    ch.plot.w = WIDTH - ch.plot.x - MARGIN - 12 * ch.cell;
    if (ch.plot.h < BAR_H) ch.plot.h = BAR_H;
    int32_t legend_y = ch.plot.y + ch.plot.h + 4 + ch.line_h + MARGIN;
    int32_t height = legend_y + n_refs * (ch.line_h + 4) + MARGIN;
    adia_canvas c;
    ADIA_TRY(adia__canvas_init(&c, WIDTH, height, WHITE));
    adia__draw_text(&c, MARGIN, MARGIN, title ? title : "", SCALE, INK, WIDTH - 2 * MARGIN);
    draw_axis(&c, &ch, unit);
    draw_bars(&c, &ch, n, labels, values, unit);
    draw_refs(&c, &ch, n_refs, ref_labels, ref_values, unit, legend_y);
    adia__canvas_vline(&c, ch.plot.x, ch.plot.y, ch.plot.y + ch.plot.h - 1, FRAME, 1.0, 0);
    adia_status s = adia__canvas_write_png(&c, path);
    adia__canvas_free(&c);
    return s;
}
