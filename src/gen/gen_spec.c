/* gen_spec.c -- the generator spec language ("kind:args[,seed=S]"), the
 * table of kinds and the public entry points. */
#include "gen.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>

typedef struct gen_kind {
    const char *name;
    int sizes;        /* >0: one token of 1 or `sizes` numbers joined by 'x' */
    int args;         /* else: this many comma-separated numbers ... */
    int opt_args;     /* ... and up to this many more (0 where absent) */
    int real_arg;     /* index of the argument that is a real (FILL), or -1 */
    int sym;          /* takes ",sym" (the others are symmetric already, or not diagonal) */
    adia_status (*build)(const gen_args *a, adia_matrix **out);
    const char *help;
} gen_kind;

static const gen_kind kinds[] = {
    {"lap2d5", 2, 0, 0, -1, 0, adia__gen_lap2d5,
     "lap2d5:NX[xNY]       2D 5-point Laplacian (4 / -1), natural ordering"},
    {"lap2d9", 2, 0, 0, -1, 0, adia__gen_lap2d9,
     "lap2d9:NX[xNY]       2D 9-point Laplacian (8 / -1)"},
    {"lap3d7", 3, 0, 0, -1, 0, adia__gen_lap3d7,
     "lap3d7:N[xNYxNZ]     3D 7-point Laplacian (6 / -1)"},
    {"lap3d27", 3, 0, 0, -1, 0, adia__gen_lap3d27,
     "lap3d27:N[xNYxNZ]    3D 27-point Laplacian (26 / -1)"},
    {"band", 0, 2, 0, -1, 1, adia__gen_band,
     "band:N,BW            offsets -BW..BW, random values, diagonal = sum|offdiag| + 1"},
    {"type2", 0, 1, 0, -1, 0, adia__gen_type2,
     "type2:N              type II: s x 2s grid 5-point (two s x s fields) + coupling\n"
     "                     at offsets +-s*s; rows 2*s*s, the largest <= N"},
    {"type3", 0, 3, 1, 2, 1, adia__gen_type3,
     "type3:N,K,FILL[,ZRUN] type III: full main diagonal + K-1 diagonals (half near,\n"
     "                     half far) broken by zero runs of ZRUN rows (default 1024)\n"
     "                     so that the DIA fill is about FILL (0 < FILL <= 1), + 3\n"
     "                     scatter points; N >= 8 ZRUN, K >= 3.  A large ZRUN gives\n"
     "                     diagonals present in long segments (HDI's type III)"},
    {"bandh", 0, 4, 0, -1, 1, adia__gen_bandh,
     "bandh:N,BW,HOLE,SCAT band -BW..BW whose off-diagonals have holes: runs of HOLE\n"
     "                     rows present, HOLE absent (random phase), + SCAT scatter\n"
     "                     points far from the band (N/4 <= |offset| <= N/2)"},
    {"bandr", 0, 3, 0, 2, 1, adia__gen_bandr,
     "bandr:N,K,FILL       band -K..K whose off-diagonals each keep a fraction FILL\n"
     "                     (0 < FILL <= 1) of their entries: 1-8 holes per diagonal of\n"
     "                     random lengths at random positions; diagonal = sum|offdiag| + 1"},
    {"aniso3d", 0, 1, 1, 1, 0, adia__gen_aniso3d,
     "aniso3d:N[,EPS]      3D 7-point anisotropic Laplacian on N^3: couplings 1 in x\n"
     "                     and y, EPS in z (default 1e-3), diagonal their sum (SPD)"},
    {"jump3d", 0, 1, 2, 2, 0, adia__gen_jump3d,
     "jump3d:N[,BLOCK[,C]] 3D 7-point -div(k grad u) on N^3, k = 1 and C (default 1e4)\n"
     "                     in a checkerboard of BLOCK^3 blocks (default BLOCK = N/4,\n"
     "                     at least 1), harmonic means on the faces (SPD)"},
    {"vardiff2d", 0, 1, 0, -1, 0, adia__gen_vardiff2d,
     "vardiff2d:N          2D 5-point -div(k grad u) on N^2, k = 1 + 0.9 sin(2 pi x)\n"
     "                     sin(2 pi y) at the face midpoints of the unit square (SPD)"},
    {"vardiff3d", 0, 1, 0, -1, 0, adia__gen_vardiff3d,
     "vardiff3d:N          3D 7-point, k = 1 + 0.9 sin(2 pi x) sin(2 pi y) sin(2 pi z) (SPD)"},
    {"biharm1d", 0, 1, 0, -1, 0, adia__gen_biharm1d,
     "biharm1d:N           1D fourth difference (1 -4 6 -4 1), clamped ends (7 on the\n"
     "                     first and last rows): SPD, condition about N^4 / 16, offsets\n"
     "                     -2..2 (a grid only as 2 x N/2 with diagonal neighbours)"},
    {"randdiag", 0, 3, 0, -1, 1, adia__gen_randdiag,
     "randdiag:N,K,SPREAD  K full diagonals, main + K-1 random offsets |o| <= SPREAD"},
    {"random", 0, 2, 0, -1, 0, adia__gen_random,
     "random:N,AVG         unstructured: row lengths uniform in 1..2*AVG-1, columns\n"
     "                     spread over the row (one per stratum), diagonal included"},
    {"powerlaw", 0, 3, 0, -1, 0, adia__gen_powerlaw,
     "powerlaw:N,MIN,MAX   unstructured, heavy-tailed rows: length ceil(MIN/u), u\n"
     "                     uniform in (0,1], capped at MAX (P(len > L) = MIN/L)"},
};
#define NKINDS ((int)(sizeof kinds / sizeof kinds[0]))

const char *adia_generator_help(void)
{
    static char text[8192];
    if (!text[0]) {
        size_t used = 0;
        for (int i = 0; i < NKINDS; i++)
            used += (size_t)snprintf(text + used, sizeof text - used, "%s\n", kinds[i].help);
        snprintf(text + used, sizeof text - used,
                 "Append \",sym\" to band, bandh, bandr, randdiag or type3 for the symmetric positive definite\n"
                 "variant (every offset o mirrored at -o with the same zero sections, A(i,j) =\n"
                 "A(j,i), diagonal = sum|offdiag| + 1), and \",seed=S\" to any spec, last\n"
                 "(default 1; same seed, same matrix).\n");
    }
    return text;
}

/* One number of the spec: an integer in 1..INT32_MAX, or a real. */
static adia_status parse_number(const char *spec, const char *tok, size_t len,
                                int real, int64_t *iv, double *rv)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf)
        return adia__error(ADIA_ERR_INVALID_ARG, "generator spec \"%s\": %s number \"%.*s\"",
                          spec, len ? "overlong" : "missing", (int)len, tok);
    memcpy(buf, tok, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    if (real) {
        *rv = strtod(buf, &end);
        if (end == buf || *end != 0 || errno == ERANGE || !isfinite(*rv))
            return adia__error(ADIA_ERR_INVALID_ARG, "generator spec \"%s\": \"%s\" is not a number",
                              spec, buf);
        return ADIA_OK;
    }
    /* plain digits only: strtoull would accept signs and spaces */
    unsigned long long v = buf[0] >= '0' && buf[0] <= '9' ? strtoull(buf, &end, 10) : 0;
    if (!(buf[0] >= '0' && buf[0] <= '9') || *end != 0)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": \"%s\" is not a positive integer", spec, buf);
    if (errno == ERANGE || v > INT32_MAX)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": number %s is larger than %d", spec, buf, INT32_MAX);
    if (v == 0)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": number %s must be positive", spec, buf);
    *iv = (int64_t)v;
    return ADIA_OK;
}

/* Split s (length len) at sep into numbers; *count = how many. */
static adia_status parse_list(const char *spec, const char *s, size_t len, char sep,
                              int max, int real_at, gen_args *a)
{
    a->count = 0;
    for (size_t pos = 0;;) {
        const char *tok = s + pos, *stop = memchr(tok, sep, len - pos);
        size_t tlen = stop ? (size_t)(stop - tok) : len - pos;
        if (a->count == max)
            return adia__error(ADIA_ERR_INVALID_ARG,
                              "generator spec \"%s\": too many numbers (at most %d)", spec, max);
        ADIA_TRY(parse_number(spec, tok, tlen, a->count == real_at, &a->num[a->count], &a->real));
        a->count++;
        if (!stop) return ADIA_OK;
        pos += tlen + 1;
    }
}

/* Strip a trailing ",sym" from [args, *len) (before any seed): the
 * symmetric positive definite variant, for the kinds that have one. */
static adia_status parse_sym(const char *spec, const gen_kind *k, const char *args, size_t *len,
                             int *sym)
{
    *sym = *len >= 4 && !strncmp(args + *len - 4, ",sym", 4);
    if (!*sym) return ADIA_OK;
    if (!k->sym)
        return adia__error(ADIA_ERR_INVALID_ARG, "generator spec \"%s\": %s has no ,sym variant "
                          "(band, bandh, bandr, randdiag and type3 do; the grid kinds and type2 are symmetric)",
                          spec, k->name);
    *len -= 4;
    return ADIA_OK;
}

/* Strip a trailing ",seed=S" from [args, *len), storing S. */
static adia_status parse_seed(const char *spec, const char *args, size_t *len, uint64_t *seed)
{
    *seed = 1;
    const char *key = ",seed=", *at = NULL;
    for (const char *p = args; (p = strstr(p, key)) && p < args + *len; p++) at = p;
    if (!at) {
        if (strstr(spec, "seed="))
            return adia__error(ADIA_ERR_INVALID_ARG,
                              "generator spec \"%s\": seed must come last, as \",seed=S\"", spec);
        return ADIA_OK;
    }
    const char *num = at + strlen(key);
    char *end;
    errno = 0;
    unsigned long long v = *num >= '0' && *num <= '9' ? strtoull(num, &end, 10) : 0;
    if (!(*num >= '0' && *num <= '9') || *end != 0 || errno == ERANGE)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": seed \"%s\" is not an unsigned integer", spec, num);
    *seed = v;
    *len = (size_t)(at - args);
    return ADIA_OK;
}

/* Parse spec into a (its row range and outputs untouched) and find its kind. */
static adia_status parse_spec(const char *spec, const gen_kind **kind, gen_args *a)
{
    const char *colon = strchr(spec, ':');
    size_t nlen = colon ? (size_t)(colon - spec) : strlen(spec);
    const gen_kind *k = NULL;
    for (int i = 0; i < NKINDS; i++)
        if (strlen(kinds[i].name) == nlen && !strncmp(kinds[i].name, spec, nlen)) k = &kinds[i];
    if (!k)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": unknown kind \"%.*s\" (known: lap2d5 lap2d9"
                          " lap3d7 lap3d27 aniso3d jump3d vardiff2d vardiff3d band bandh bandr type2 type3"
                          " randdiag random powerlaw)", spec, (int)nlen, spec);
    if (!colon)
        return adia__error(ADIA_ERR_INVALID_ARG, "generator spec \"%s\": missing ':' and sizes (%s)",
                          spec, k->help);
    a->spec = spec;
    a->seed = 1;
    const char *args = colon + 1;
    size_t alen = strlen(args);
    ADIA_TRY(parse_seed(spec, args, &alen, &a->seed));
    ADIA_TRY(parse_sym(spec, k, args, &alen, &a->sym));
    *kind = k;
    if (k->sizes) {
        if (memchr(args, ',', alen))
            return adia__error(ADIA_ERR_INVALID_ARG,
                              "generator spec \"%s\": sizes are joined by 'x', not ','", spec);
        return parse_list(spec, args, alen, 'x', k->sizes, -1, a);
    }
    ADIA_TRY(parse_list(spec, args, alen, ',', k->args + k->opt_args, k->real_arg, a));
    if (a->count < k->args)
        return adia__error(ADIA_ERR_INVALID_ARG,
                          "generator spec \"%s\": %s takes %d numbers%s, got %d", spec, k->name,
                          k->args, k->opt_args ? " (and optional ones)" : "", a->count);
    return ADIA_OK;
}

adia_status adia_matrix_generate(const char *spec, adia_matrix **out)
{
    if (!out) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_generate: out is NULL");
    *out = NULL;
    if (!spec) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_generate: spec is NULL");
    const gen_kind *k;
    gen_args a = {.row_count = -1};
    ADIA_TRY(parse_spec(spec, &k, &a));
    return k->build(&a, out);
}

adia_status adia_matrix_generate_rows(const char *spec, int64_t first, int64_t count,
                                      int64_t *rows, int64_t *cols, adia_matrix **out)
{
    if (out) *out = NULL;
    if (!spec) return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_generate_rows: spec is NULL");
    if (count < 0 || first < 0)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_generate_rows: first %" PRId64
                          " and count %" PRId64 " must not be negative", first, count);
    const gen_kind *k;
    gen_args a = {.row_first = first, .row_count = count, .rows_out = rows, .cols_out = cols};
    ADIA_TRY(parse_spec(spec, &k, &a));
    return k->build(&a, out);
}

adia_status adia__gen_parse_stencil(const char *spec, adia_stencil *s)
{
    if (!spec) return adia__error(ADIA_ERR_INVALID_ARG, "generator spec is NULL");
    const gen_kind *k;
    gen_args a = {.row_count = -1};
    ADIA_TRY(parse_spec(spec, &k, &a));
    return adia__gen_stencil(k->name, &a, s);
}

adia_status adia__stencil_fill_args(const char *func, const char *spec, int64_t first,
                                    int64_t count, const void *values, adia_stencil *s,
                                    int64_t off[STENCIL_MAX_POINTS],
                                    uint32_t points[STENCIL_MAX_POINTS], int *ndiag)
{
    ADIA_TRY(adia__gen_parse_stencil(spec, s));
    const int64_t n = s->n[0] * s->n[1] * s->n[2];
    if (first < 0 || count < 0 || count > n || first > n - count)
        return adia__error(ADIA_ERR_DIMENSION, "%s: rows %" PRId64 " + %" PRId64 " of \"%s\", "
                          "which has rows 0..%" PRId64, func, first, count, spec, n - 1);
    if (count > 0 && !values) return adia__error(ADIA_ERR_INVALID_ARG, "%s: values is NULL", func);
    *ndiag = adia__stencil_diagonals(s, off, points);
    return ADIA_OK;
}

adia_status adia_stencil_fill(const char *spec, int64_t first, int64_t count, double *values)
{
    adia_stencil s;
    int64_t off[STENCIL_MAX_POINTS];
    uint32_t points[STENCIL_MAX_POINTS];
    int nd = 0;
    ADIA_TRY(adia__stencil_fill_args("adia_stencil_fill", spec, first, count, values, &s, off,
                                     points, &nd));
    for (int k = 0; k < nd; k++) {
        double *v = values + (size_t)k * (size_t)count;
#pragma omp parallel for schedule(static) if (count > 100000) num_threads(adia__threads())
        for (int64_t i = 0; i < count; i++) v[i] = adia__stencil_entry(&s, points[k], first + i);
    }
    return ADIA_OK;
}

adia_status adia_matrix_generate_plane(const char *spec, int64_t *rows_per_plane)
{
    if (!spec || !rows_per_plane)
        return adia__error(ADIA_ERR_INVALID_ARG, "adia_matrix_generate_plane: NULL argument");
    const gen_kind *k;
    gen_args a = {.row_count = -1};
    ADIA_TRY(parse_spec(spec, &k, &a));
    adia_stencil st;
    int64_t plane = 0;
    if (adia__gen_stencil(k->name, &a, &st) == ADIA_OK)   /* the Laplacians */
        plane = st.n[2] > 1 ? st.n[0] * st.n[1] : st.n[1] > 1 ? st.n[0] : 0;
    else if (!strcmp(k->name, "aniso3d") || !strcmp(k->name, "jump3d") ||
             !strcmp(k->name, "vardiff3d"))
        plane = a.num[0] > 1 ? a.num[0] * a.num[0] : 0;
    else if (!strcmp(k->name, "vardiff2d"))
        plane = a.num[0] > 1 ? a.num[0] : 0;
    adia_clear_error();
    if (plane <= 0)
        return adia__error(ADIA_ERR_UNSUPPORTED, "adia_matrix_generate_plane: \"%s\" is not a "
                          "grid of several planes", spec);
    *rows_per_plane = plane;
    return ADIA_OK;
}

adia_status adia_stencil_diagonals(const char *spec, int64_t *n, int *ndiag, int64_t *offsets)
{
    adia_stencil s;
    ADIA_TRY(adia__gen_parse_stencil(spec, &s));
    int64_t off[STENCIL_MAX_POINTS];
    uint32_t points[STENCIL_MAX_POINTS];
    int nd = adia__stencil_diagonals(&s, off, points);
    if (n) *n = s.n[0] * s.n[1] * s.n[2];
    if (ndiag) *ndiag = nd;
    if (offsets) memcpy(offsets, off, (size_t)nd * sizeof *off);
    return ADIA_OK;
}
