/* test_diag_exact.c -- the diagonal formats' arrays on hand-made matrices,
 * worked out by hand (offsets, piece boundaries, groups, data with padding,
 * scatter points), and the padded-zero ordering on a type-III matrix. */
#include "testutil.h"
#include "formats/diag_core.h"

#include <string.h>

/*  8 x 9, offsets -5, -1, 0, 2; (6,8) and the column-9 slot of row 7 on
 *  diagonal 2 show a diagonal leaving the matrix:
 *      r0: 1 . 2            r4: . . . . 10
 *      r1: 3 4 . 5          r5: 12 . . . . 11
 *      r2: . . 6 . 7        r6: . . . . . . 13 . 14
 *      r3: . . . 8 . 9      r7: . . . . . . . 15            */
static adia_matrix *example(void)
{
    double a[8 * 9] = {0};
    const int r[] = {0, 0, 1, 1, 1, 2, 2, 3, 3, 4, 5, 5, 6, 6, 7};
    const int c[] = {0, 2, 0, 1, 3, 2, 4, 3, 5, 4, 0, 5, 6, 8, 7};
    const double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 11, 13, 14, 15};
    for (int i = 0; i < 15; i++) a[r[i] * 9 + c[i]] = v[i];
    return test_dense_matrix(8, 9, a);
}

typedef struct expect {
    const char *format, *params;
    int32_t n_pieces, n_groups;
    const int32_t *piece_start, *piece_group, *group_start, *offsets;
    const int64_t *piece_data;
    const double *data;
    int64_t n_scatter;
    const int32_t *srow, *scol;
    const double *sval;
    int64_t padded;
} expect;

static void check_expect(const adia_matrix *A, const expect *e)
{
    adia_format_params p;
    adia_format_params_default(&p);
    CHECK_OK(adia_format_params_parse(&p, e->params));
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, e->format, &p, ADIA_DOUBLE, &F));
    const adia_diag *D = adia__format_diag(F);
    CHECK(D != NULL, "%s: diag", e->format);
    if (!D) return;
    CHECK(D->n_pieces == e->n_pieces, "%s: %d pieces, want %d", e->format, D->n_pieces, e->n_pieces);
    CHECK(D->n_groups == e->n_groups, "%s: %d groups, want %d", e->format, D->n_groups, e->n_groups);
    if (D->n_pieces == e->n_pieces && D->n_groups == e->n_groups) {
        int np = e->n_pieces, ng = e->n_groups;
        CHECK(!memcmp(D->piece_start, e->piece_start, (np + 1) * sizeof(int32_t)), "%s: piece_start", e->format);
        CHECK(!memcmp(D->piece_group, e->piece_group, np * sizeof(int32_t)), "%s: piece_group", e->format);
        CHECK(!memcmp(D->group_start, e->group_start, (ng + 1) * sizeof(int32_t)), "%s: group_start", e->format);
        CHECK(!memcmp(D->offsets, e->offsets, e->group_start[ng] * sizeof(int32_t)), "%s: offsets", e->format);
        CHECK(!memcmp(D->piece_data, e->piece_data, (np + 1) * sizeof(int64_t)), "%s: piece_data", e->format);
        if (!memcmp(D->piece_data, e->piece_data, (np + 1) * sizeof(int64_t)))
            for (int64_t i = 0; i < e->piece_data[np]; i++)
                CHECK(((double *)D->data)[i] == e->data[i], "%s: data[%lld] = %g, want %g", e->format,
                      (long long)i, ((double *)D->data)[i], e->data[i]);
    }
    CHECK(D->n_scatter == e->n_scatter, "%s: %lld scatter points, want %lld", e->format,
          (long long)D->n_scatter, (long long)e->n_scatter);
    for (int64_t s = 0; s < e->n_scatter && s < D->n_scatter; s++)
        CHECK(D->scatter_row[s] == e->srow[s] && D->scatter_col[s] == e->scol[s] &&
                  ((double *)D->scatter_val)[s] == e->sval[s],
              "%s: scatter %lld", e->format, (long long)s);
    CHECK(adia_format_padded_zeros(F) == e->padded, "%s: padded %lld, want %lld", e->format,
          (long long)adia_format_padded_zeros(F), (long long)e->padded);
    adia_format_destroy(F);
}

static void test_example(void)
{
    adia_matrix *A = example();
    /* DIA: one piece, 4 diagonals x 8 rows = 32 slots, 17 padded */
    static const int32_t dia_ps[] = {0, 8}, dia_pg[] = {0}, dia_gs[] = {0, 4}, dia_off[] = {-5, -1, 0, 2};
    static const int64_t dia_pd[] = {0, 32};
    static const double dia_data[] = {0, 0, 0, 0, 0, 12, 0, 0,  0, 3, 0, 0, 0, 0, 0, 0,
                                      1, 4, 6, 8, 10, 11, 13, 15, 2, 5, 7, 9, 0, 0, 14, 0};
    expect dia = {"dia", "B=2", 1, 1, dia_ps, dia_pg, dia_gs, dia_off, dia_pd, dia_data, 0, 0, 0, 0, 17};
    check_expect(A, &dia);
    /* HDI with one hack of 32 rows: the present diagonals, as DIA here */
    expect hdi = dia;
    hdi.format = "hdi";
    hdi.params = "hack=32";
    check_expect(A, &hdi);
    /* BRCSD-II, B=2: pieces {-1,0,2} {0,2} {-5,0} {0,2}; pieces 1 and 3 share */
    static const int32_t b2_ps[] = {0, 2, 4, 6, 8}, b2_pg[] = {0, 1, 2, 1}, b2_gs[] = {0, 3, 5, 7},
                         b2_off[] = {-1, 0, 2, 0, 2, -5, 0};
    static const int64_t b2_pd[] = {0, 6, 10, 14, 18};
    static const double b2_data[] = {0, 3, 1, 4, 2, 5, 6, 8, 7, 9, 0, 12, 10, 11, 13, 15, 14, 0};
    expect b2 = {"brcsd2", "B=2", 4, 3, b2_ps, b2_pg, b2_gs, b2_off, b2_pd, b2_data, 0, 0, 0, 0, 3};
    check_expect(A, &b2);
    /* BRCSD-I, B=eta=2: points {0,1,5,7,8} -> trimmed {0,5,8} -> rounded {0,6,8}
     * -> 2-row blocks; each keeps the diagonals crossing it:
     * -5 rows 5..7, -1 rows 1..7, 0 rows 0..7, 2 rows 0..6 */
    static const int32_t b1_ps[] = {0, 2, 4, 6, 8}, b1_pg[] = {0, 0, 1, 1}, b1_gs[] = {0, 3, 7},
                         b1_off[] = {-1, 0, 2, -5, -1, 0, 2};
    static const int64_t b1_pd[] = {0, 6, 12, 20, 28};
    static const double b1_data[] = {0, 3, 1, 4, 2, 5,  0, 0, 6, 8, 7, 9,
                                     0, 12, 0, 0, 10, 11, 0, 0,  0, 0, 0, 0, 13, 15, 14, 0};
    expect b1 = {"brcsd1", "B=2,eta=2", 4, 2, b1_ps, b1_pg, b1_gs, b1_off, b1_pd, b1_data, 0, 0, 0, 0, 13};
    check_expect(A, &b1);
    /* CRSD, seg=2: single-nonzero diagonals of a segment become scatter points:
     * (1,0) on -1, (5,0) on -5, (6,8) on 2 */
    static const int32_t cr_ps[] = {0, 2, 4, 6, 8}, cr_pg[] = {0, 0, 1, 1}, cr_gs[] = {0, 2, 3},
                         cr_off[] = {0, 2, 0};
    static const int64_t cr_pd[] = {0, 4, 8, 10, 12};
    static const double cr_data[] = {1, 4, 2, 5, 6, 8, 7, 9, 10, 11, 13, 15};
    static const int32_t cr_sr[] = {1, 5, 6}, cr_sc[] = {0, 0, 8};
    static const double cr_sv[] = {3, 12, 14};
    expect cr = {"crsd", "seg=2", 4, 2, cr_ps, cr_pg, cr_gs, cr_off, cr_pd, cr_data, 3, cr_sr, cr_sc, cr_sv, 0};
    check_expect(A, &cr);
    adia_matrix_destroy(A);
}

/* The paper's Fig. 9 (image lost): a 6 x 6 matrix, nrows = 2, whose first
 * piece has toffsets[0] = {-1, 0, 2}, data[0] = {0,3,1,4,2,5}, whose last two
 * pieces share one offset list, with one scatter point and two long zero
 * sections, and padded zeros DIA 13, BRCSD-I 11, BRCSD-II 3.  This matrix
 * is a reconstruction that satisfies every one of those statements:
 *      r0: 1 . 2 . . .      r3: 7 . . 8 . .
 *      r1: 3 4 . 5 . .      r4: . 10 . . 9 .
 *      r2: . . 6 . . .      r5: . . . . . 11
 * (3 is the scatter point: alone on diagonal -1; diagonals -1 and 2 have
 * zero sections below row 1).  BRCSD-I here: points {0,1,3,4,6}, eta = 2
 * trims to {0,3,6}, B = 4 rounds to {0,4,6}, as the paper's count needs. */
static void test_fig9(void)
{
    double a[36] = {0};
    const int r[] = {0, 0, 1, 1, 1, 2, 3, 3, 4, 4, 5}, c[] = {0, 2, 0, 1, 3, 2, 0, 3, 4, 1, 5};
    for (int i = 0; i < 11; i++) a[r[i] * 6 + c[i]] = i + 1;
    adia_matrix *A = test_dense_matrix(6, 6, a);
    static const int32_t ps[] = {0, 2, 4, 6}, pg[] = {0, 1, 1}, gs[] = {0, 3, 5}, off[] = {-1, 0, 2, -3, 0};
    static const int64_t pd[] = {0, 6, 10, 14};
    static const double data[] = {0, 3, 1, 4, 2, 5, 0, 7, 6, 8, 10, 0, 9, 11};
    expect b2 = {"brcsd2", "B=2", 3, 2, ps, pg, gs, off, pd, data, 0, 0, 0, 0, 3};
    check_expect(A, &b2);
    const char *names[] = {"dia", "brcsd1"};
    const int64_t want[] = {13, 11};
    for (int f = 0; f < 2; f++) {
        adia_format *F = NULL;
        CHECK_OK(adia_format_build(A, names[f], &(adia_format_params){.block_rows = 4, .eta = 2},
                                   ADIA_DOUBLE, &F));
        CHECK(adia_format_padded_zeros(F) == want[f], "Fig. 9 %s: padded %lld, paper %lld", names[f],
              (long long)adia_format_padded_zeros(F), (long long)want[f]);
        if (f == 1) {
            const adia_diag *D = adia__format_diag(F);
            CHECK(D->n_pieces == 2 && D->piece_start[1] == 4, "Fig. 9 brcsd1: pieces {0,4,6}");
        }
        adia_format_destroy(F);
    }
    adia_matrix_destroy(A);
}

/* HDI on 64 rows, hack 32: the second hack lacks diagonal 5, so the two
 * hacks get their own lists; storage counts each hack's offsets. */
static void test_hdi_hacks(void)
{
    double a[64 * 64] = {0};
    for (int r = 0; r < 64; r++) a[r * 64 + r] = 1 + r;
    for (int r = 0; r < 4; r++) a[r * 64 + r + 5] = 100 + r;
    adia_matrix *A = test_dense_matrix(64, 64, a);
    adia_format_params p;
    adia_format_params_default(&p);
    p.hack = 32;
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, "hdi", &p, ADIA_DOUBLE, &F));
    const adia_diag *D = adia__format_diag(F);
    CHECK(D->n_pieces == 2 && D->n_groups == 2, "hdi: %d pieces %d groups", D->n_pieces, D->n_groups);
    CHECK(D->piece_data[1] == 64 && D->piece_data[2] == 96, "hdi piece_data %lld %lld",
          (long long)D->piece_data[1], (long long)D->piece_data[2]);
    CHECK(adia_format_padded_zeros(F) == 96 - 68, "hdi padded %lld", (long long)adia_format_padded_zeros(F));
    CHECK(adia__diag_offsets_stored(D) == 3, "hdi offsets stored %lld", (long long)adia__diag_offsets_stored(D));
    /* data 96*8 + offsets 3*4 + piece starts 3*4 + piece_data 3*8 + hack offset starts 3*4 */
    CHECK(adia_format_storage_bytes(F) == 96 * 8 + 12 + 12 + 24 + 12, "hdi storage %lld",
          (long long)adia_format_storage_bytes(F));
    adia_format_destroy(F);
    /* identical hacks still count their offsets each time */
    for (int r = 32; r < 36; r++) a[r * 64 + r + 5] = 100 + r;
    adia_matrix_destroy(A);
    A = test_dense_matrix(64, 64, a);
    CHECK_OK(adia_format_build(A, "hdi", &p, ADIA_DOUBLE, &F));
    D = adia__format_diag(F);
    CHECK(D->n_groups == 1 && adia__diag_offsets_stored(D) == 4, "hdi shared list: %d groups, %lld offsets",
          D->n_groups, (long long)adia__diag_offsets_stored(D));
    adia_format_destroy(F);
    CHECK_OK(adia_format_build(A, "brcsd2", &(adia_format_params){.block_rows = 32}, ADIA_DOUBLE, &F));
    CHECK(adia__diag_offsets_stored(adia__format_diag(F)) == 2, "brcsd2 stores a shared list once");
    adia_format_destroy(F);
    adia_matrix_destroy(A);
}

/* Padded zeros of format `name` (params p) on A; -1 after a failed build. */
static int64_t padded(const adia_matrix *A, const char *name, const adia_format_params *p)
{
    adia_format *F = NULL;
    CHECK_OK(adia_format_build(A, name, p, ADIA_DOUBLE, &F));
    if (!F) return -1;
    int64_t pz = adia_format_padded_zeros(F);
    printf("type III padded zeros: %-6s hack %3d  %lld\n", name, p->hack, (long long)pz);
    adia_format_destroy(F);
    return pz;
}

/* Type III: diagonals broken by long zero sections plus scatter points.
 * A piece keeping a subset of its parent's diagonals never pads more, so
 * every diagonal format the registry has pads at most DIA's zeros, and
 * DIA > BRCSD-I (crossing diagonals) > BRCSD-II (present ones, B=256)
 * = HDI with hack = B >= HDI hack 128 > CRSD (4-row segments). */
static void test_padding_order(void)
{
    int32_t n = 4096;
    int32_t *r = malloc(8 * (size_t)n * sizeof *r), *c = malloc(8 * (size_t)n * sizeof *c);
    double *v = malloc(8 * (size_t)n * sizeof *v);
    int64_t k = 0;
    const int32_t offs[] = {-1500, -64, -1, 0, 1, 64, 1500};
    for (int d = 0; d < 7; d++)
        for (int32_t i = 0; i < n; i++) {
            int32_t j = i + offs[d];
            int gap = offs[d] != 0 && (i / 512) % 2 == 1;   /* long zero sections */
            if (j < 0 || j >= n || gap) continue;
            r[k] = i; c[k] = j; v[k++] = 1.0 + d;
        }
    for (int32_t i = 100; i < n; i += 997) { r[k] = i; c[k] = (i * 7 + 11) % n; v[k++] = 9.0; }
    adia_matrix *A = NULL;
    CHECK_OK(adia_matrix_create_coo(n, n, k, r, c, v, ADIA_DOUBLE, &A));
    free(r); free(c); free(v);
    const adia_format_params none = {0};
    const int64_t dia = padded(A, "dia", &none);
    for (int f = 0; f < adia_format_count(); f++) {
        const char *name = adia_format_name_at(f);
        if (!adia_format_is_diagonal(name)) continue;
        int64_t pz = padded(A, name, &none);
        CHECK(pz >= 0 && pz <= dia, "%s pads %lld zeros, DIA %lld", name, (long long)pz,
              (long long)dia);
    }
    const char *names[] = {"dia", "brcsd1", "brcsd2", "hdi", "hdi", "crsd"};
    const int32_t hack[] = {0, 0, 0, 256, 128, 0};
    int64_t pz[6];
    for (int f = 0; f < 6; f++) pz[f] = padded(A, names[f], &(adia_format_params){.hack = hack[f]});
    CHECK(pz[0] > pz[1] && pz[1] > pz[2], "DIA %lld > BRCSD-I %lld > BRCSD-II %lld",
          (long long)pz[0], (long long)pz[1], (long long)pz[2]);
    CHECK(pz[3] == pz[2], "HDI hack=B %lld == BRCSD-II %lld", (long long)pz[3], (long long)pz[2]);
    CHECK(pz[4] <= pz[3] && pz[5] < pz[4], "HDI 128 %lld <= HDI 256 %lld, CRSD %lld smaller",
          (long long)pz[4], (long long)pz[3], (long long)pz[5]);
    adia_matrix_destroy(A);
}

int main(void)
{
    TEST_BEGIN();
    test_example();
    test_fig9();
    test_hdi_hacks();
    test_padding_order();
    return TEST_END();
}
