/* overlay.c -- the row pieces of a diagonal format drawn over a spy
 * picture: boundary lines and a band that changes colour with the offset
 * group.  Takes the adia_diag itself so it can be tested without a format. */
#include "picture.h"

const adia_rgb adia__overlay_group_line = {210, 30, 30};
const adia_rgb adia__overlay_piece_line = {235, 140, 20};

/* Band colours: distinct hues, light enough to keep the plot readable. */
static const adia_rgb band_palette[] = {
    {230, 85, 13}, {49, 163, 84}, {117, 107, 177}, {214, 39, 40},
    {23, 190, 207}, {188, 189, 34}, {140, 86, 75}, {227, 119, 194},
};
enum { N_BAND = sizeof band_palette / sizeof *band_palette };

int32_t adia__plot_row_y(adia_rect plot, int32_t rows, int32_t r)
{
    if (rows <= 0) return plot.y;
    return plot.y + (int32_t)((int64_t)r * plot.h / rows);
}

int adia__overlay_draw(adia_canvas *c, adia_rect plot, adia_rect band, const adia_diag *D)
{
    if (!D || D->n_pieces <= 0 || D->rows <= 0) return 0;
    /* Lines only while they stay apart (3 pixels on average): denser ones
     * would paint the plot over; the band still shows every change. */
    int64_t changes = 0;
    for (int32_t p = 1; p < D->n_pieces; p++) changes += D->piece_group[p] != D->piece_group[p - 1];
    int drawn = (changes * 3 <= plot.h ? ADIA_OVERLAY_GROUP_LINES : 0) |
                ((int64_t)D->n_pieces * 3 <= plot.h ? ADIA_OVERLAY_PIECE_LINES : 0);
    int colour = 0;
    for (int32_t p = 0; p < D->n_pieces; p++) {
        int32_t y0 = adia__plot_row_y(plot, D->rows, D->piece_start[p]);
        int32_t y1 = adia__plot_row_y(plot, D->rows, D->piece_start[p + 1]);
        int group_change = p > 0 && D->piece_group[p] != D->piece_group[p - 1];
        if (group_change) {
            /* By group id, but never the same colour as the group above. */
            int want = (int)(D->piece_group[p] % N_BAND);
            colour = want == colour ? (colour + 1) % N_BAND : want;
        } else if (p == 0) {
            colour = (int)(D->piece_group[0] % N_BAND);
        }
        if (band.w > 0)
            adia__canvas_fill(c, (adia_rect){band.x, y0, band.w, y1 > y0 ? y1 - y0 : 1},
                             band_palette[colour]);
        if (p == 0) continue;
        if (group_change && (drawn & ADIA_OVERLAY_GROUP_LINES))
            adia__canvas_hline(c, plot.x, plot.x + plot.w - 1, y0, adia__overlay_group_line, 0.85, 0);
        else if (!group_change && (drawn & ADIA_OVERLAY_PIECE_LINES))
            adia__canvas_hline(c, plot.x, plot.x + plot.w - 1, y0, adia__overlay_piece_line, 0.7, 4);
    }
    return drawn;
}
