/* cmd_info.c -- `adia info`: a matrix's features (the paper's Table 1 and
 * row statistics), its type and chosen format, and what each format would
 * cost (padded zeros, storage bytes, bytes per SpMV: the paper's Table 6). */
#include "cli.h"

#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: adia info FILE|--gen SPEC [--json] [--formats] [--params k=v,...]\n"
    "                 [--Z x] [--alpha x] [--B n]\n"
    "Print features, type (I/II/III) and chosen format of a matrix, then the\n"
    "padded zeros, storage bytes and SpMV bytes of the diagonal formats (every\n"
    "registered format with --formats).";

/* One described feature: both outputs walk the same list. */
typedef struct feature {
    const char *key;     /* JSON key (the header's field name) */
    const char *label;   /* text output */
    char kind;           /* 'i' int64, 'd' int32, 'f' double, 'b' int flag */
    const void *value;
} feature;

static double feature_number(const feature *f)
{
    switch (f->kind) {
    case 'i': return (double)*(const int64_t *)f->value;
    case 'd': return *(const int32_t *)f->value;
    case 'b': return *(const int *)f->value;
    default: return *(const double *)f->value;
    }
}

static int describe(const adia_features *f, feature *out)
{
    const feature list[] = {
        {"rows", "rows", 'd', &f->rows},
        {"cols", "columns", 'd', &f->cols},
        {"nnz", "nonzeros", 'i', &f->nnz},
        {"n_diag", "distinct diagonals", 'i', &f->n_diag},
        {"dia_fill", "DIA fill (nnz / in-matrix diagonal length)", 'f', &f->dia_fill},
        {"delta", "delta = rows / Z", 'f', &f->delta},
        {"n_offset", "diagonals with |offset| > delta", 'i', &f->n_offset},
        {"p_offset", "n_offset / n_diag", 'f', &f->p_offset},
        {"n_elem", "DIA elements n_diag * rows", 'i', &f->n_elem},
        {"n_zero", "DIA zeros n_elem - nnz", 'i', &f->n_zero},
        {"p_zero", "n_zero / n_elem", 'f', &f->p_zero},
        {"alpha", "p_zero threshold alpha", 'f', &f->alpha},
        {"label_lz", "has a long zero section", 'b', &f->label_lz},
        {"label_s", "has a scatter point", 'b', &f->label_s},
        {"n_long_zero", "long zero sections", 'i', &f->n_long_zero},
        {"n_scatter", "scatter points", 'i', &f->n_scatter},
        {"dense_diag_share", "share of nnz on >= 50% full diagonals", 'f', &f->dense_diag_share},
        {"row_min", "row length min", 'd', &f->row_min},
        {"row_mean", "row length mean", 'f', &f->row_mean},
        {"row_max", "row length max", 'd', &f->row_max},
        {"row_var", "row length variance", 'f', &f->row_var},
        {"empty_rows", "empty rows", 'd', &f->empty_rows},
        {"lower_bandwidth", "lower bandwidth", 'd', &f->lower_bandwidth},
        {"upper_bandwidth", "upper bandwidth", 'd', &f->upper_bandwidth},
        {"nan_count", "NaN values", 'i', &f->nan_count},
        {"inf_count", "Inf values", 'i', &f->inf_count},
    };
    enum { N = sizeof list / sizeof *list };
    memcpy(out, list, sizeof list);
    return N;
}
enum { MAX_FEATURES = 32 };

/* What one format costs for this matrix, or why it could not be built. */
typedef struct format_cost {
    const char *name;
    bool ok;
    int64_t padded_zeros, storage_bytes, spmv_bytes;
    char error[256];
} format_cost;

static void measure(const adia_matrix *A, const char *name, const adia_format_params *p,
                    format_cost *c)
{
    memset(c, 0, sizeof *c);
    c->name = name;
    adia_format *F = NULL;
    adia_status s = adia_format_exists(name)
                        ? adia_format_build(A, name, p, ADIA_DOUBLE, &F)
                        : ADIA_ERR_UNSUPPORTED;
    if (s != ADIA_OK) {
        snprintf(c->error, sizeof c->error, "%s",
                 adia_format_exists(name) ? adia_last_error() : "format not registered");
        return;
    }
    c->ok = true;
    c->padded_zeros = adia_format_padded_zeros(F);
    c->storage_bytes = adia_format_storage_bytes(F);
    c->spmv_bytes = adia_format_bytes(F);
    adia_format_destroy(F);
}

static void print_json(const char *name, const adia_features *f, const format_cost *c, int nc)
{
    feature list[MAX_FEATURES];
    int n = describe(f, list);
    cli_json j;
    json_begin(&j, stdout);
    json_str(&j, "name", name);
    for (int i = 0; i < n; i++) {
        if (list[i].kind == 'f') json_num(&j, list[i].key, feature_number(&list[i]));
        else json_int(&j, list[i].key, (long long)feature_number(&list[i]));
    }
    json_str(&j, "type", adia_matrix_type_name(f->type));
    json_str(&j, "format", f->format);
    json_array_begin(&j, "formats");
    for (int i = 0; i < nc; i++) {
        json_object_begin(&j, NULL);
        json_str(&j, "name", c[i].name);
        if (c[i].ok) {
            json_int(&j, "padded_zeros", c[i].padded_zeros);
            json_int(&j, "storage_bytes", c[i].storage_bytes);
            json_int(&j, "spmv_bytes", c[i].spmv_bytes);
        } else {
            json_str(&j, "error", c[i].error);
        }
        json_object_end(&j);
    }
    json_array_end(&j);
    json_end(&j);
}

static void print_text(const char *name, const adia_features *f, const format_cost *c, int nc)
{
    feature list[MAX_FEATURES];
    int n = describe(f, list);
    printf("matrix %s\n", name);
    for (int i = 0; i < n; i++) {
        if (list[i].kind == 'f') printf("  %-42s %.6g\n", list[i].label, feature_number(&list[i]));
        else printf("  %-42s %.0f\n", list[i].label, feature_number(&list[i]));
    }
    printf("  %-42s %s\n  %-42s %s\n\n", "type", adia_matrix_type_name(f->type),
           "chosen format", f->format);
    printf("%-8s %14s %16s %16s\n", "format", "padded zeros", "storage bytes", "SpMV bytes");
    for (int i = 0; i < nc; i++) {
        if (!c[i].ok) {
            printf("%-8s error: %s\n", c[i].name, c[i].error);
            continue;
        }
        char b1[32], b2[32], b3[32];
        printf("%-8s %14s %16s %16s\n", c[i].name,
               cli_bytes_text(c[i].padded_zeros, b1, sizeof b1),
               cli_bytes_text(c[i].storage_bytes, b2, sizeof b2),
               cli_bytes_text(c[i].spmv_bytes, b3, sizeof b3));
    }
}

int cmd_info(int argc, char **argv)
{
    const char *gen = NULL, *params = NULL;
    bool json = false, all = false, done;
    /* not given: NaN, LONG_MIN (the library's 0, its defaults); a given 0
     * is refused, never turned into the default */
    double Z = NAN, alpha = NAN;
    long B = LONG_MIN;
    const cli_option opts[] = {
        {"gen", CLI_STRING, &gen, "generate the matrix from a spec instead of reading FILE"},
        {"json", CLI_FLAG, &json, "print one JSON object (features, type, format, formats[])"},
        {"formats", CLI_FLAG, &all, "cost table for every registered format"},
        {"params", CLI_STRING, &params, "format parameters key=value,... (B eta hack seg width C ...)"},
        {"Z", CLI_DOUBLE, &Z, "search engine: delta = rows / Z, > 0 (default 100)"},
        {"alpha", CLI_DOUBLE, &alpha, "search engine: p_zero threshold in (0, 1] (default "
                                      "(1 - 1/K) / Z)"},
        {"B", CLI_INT, &B, "search engine: row block of a long zero section, >= 1 (default 256)"},
        {0},
    };
    const char *pos[1] = {NULL};
    int npos, rc = cli_parse(argc, argv, usage, opts, pos, 1, &npos, &done);
    if (rc || done) return rc;
    adia_format_params p;
    if ((rc = cli_parse_params(argv[0], params, &p))) return rc;
    if ((B != LONG_MIN && (rc = cli_check_range(argv[0], "B", (double)B, 1, INT32_MAX))) ||
        (!isnan(Z) && (rc = cli_check_range_above(argv[0], "Z", Z, 0, 1e9))) ||
        (!isnan(alpha) && (rc = cli_check_range_above(argv[0], "alpha", alpha, 0, 1))))
        return rc;

    adia_matrix *A;
    if ((rc = cli_open_matrix(argv[0], pos[0], gen, &A))) return rc;
    if ((rc = cli_check_params(argv[0], &p, A))) {
        adia_matrix_destroy(A);
        return rc;
    }
    adia_search_params sp = {.Z = isnan(Z) ? 0 : Z, .alpha = isnan(alpha) ? 0 : alpha,
                             .B = B == LONG_MIN ? 0 : (int32_t)B};   /* 0: the defaults */
    adia_features f;
    adia_status s = adia_matrix_analyze(A, &sp, &f);
    if (s != ADIA_OK) {
        adia_matrix_destroy(A);
        return cli_fail(argv[0], s);
    }
    /* the diagonal formats (the paper's Table 6, in the registry's order,
     * which is the table's), or every format */
    int nc = 0;
    format_cost *c = calloc((size_t)adia_format_count() + 1, sizeof *c);
    if (!c) {
        adia_matrix_destroy(A);
        fprintf(stderr, "adia %s: out of memory\n", argv[0]);
        return 1;
    }
    for (int i = 0; i < adia_format_count(); i++)
        if (all || adia_format_is_diagonal(adia_format_name_at(i)))
            measure(A, adia_format_name_at(i), &p, &c[nc++]);
    const char *name = adia_matrix_name(A)[0] ? adia_matrix_name(A) : (gen ? gen : pos[0]);
    if (json) print_json(name, &f, c, nc);
    else print_text(name, &f, c, nc);
    free(c);
    adia_matrix_destroy(A);
    return 0;
}
