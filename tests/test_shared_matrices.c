/* test_shared_matrices.c -- every Matrix Market file in ../shared/matrices
 * loads, and its size and nnz (expanded symmetric storage, explicit zeros
 * kept, duplicates summed) agree with the table in SOURCES.md; the complex
 * ones are refused with the "complex" error.  Skipped without the folder. */
#define _POSIX_C_SOURCE 200809L  /* opendir */
#include "testutil.h"

#include <dirent.h>
#include <string.h>

typedef struct row {
    char name[64];
    long long rows, nnz;
    int complex_;
} row;

/* The markdown table of SOURCES.md: | name | rows | nnz | ... | type | ... */
static int read_table(const char *dir, row *t, int max)
{
    char path[1024], line[4096];
    snprintf(path, sizeof path, "%s/SOURCES.md", dir);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    int n = 0;
    while (n < max && fgets(line, sizeof line, f)) {
        row r;
        memset(&r, 0, sizeof r);
        if (sscanf(line, "| %63[^ |] | %lld | %lld |", r.name, &r.rows, &r.nnz) != 3) continue;
        r.complex_ = strstr(line, "| complex ") != NULL;
        t[n++] = r;
    }
    fclose(f);
    return n;
}

static const row *find(const row *t, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(t[i].name, name)) return &t[i];
    return NULL;
}

int main(void)
{
    TEST_BEGIN();
    const char *dir = test_shared_dir();
    if (!dir) TEST_SKIP("../shared/matrices is absent");
    row table[64];
    int n = read_table(dir, table, 64);
    CHECK(n >= 30, "SOURCES.md table has %d rows", n);
    DIR *d = opendir(dir);
    CHECK(d != NULL, "opendir %s", dir);
    int files = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".mtx") != 0) continue;
        files++;
        char path[1024], name[256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(name, sizeof name, "%.*s", (int)(len - 4), e->d_name);
        const row *r = find(table, n, name);
        CHECK(r != NULL, "%s is not in SOURCES.md", name);
        if (!r) continue;
        adia_matrix *A = NULL;
        if (r->complex_) {
            CHECK_ERR(adia_matrix_load(path, &A), ADIA_ERR_UNSUPPORTED,
                      "complex matrices are not supported");
            continue;
        }
        CHECK_OK(adia_matrix_load(path, &A));
        CHECK(adia_matrix_rows(A) == r->rows && adia_matrix_cols(A) == r->rows &&
                  adia_matrix_nnz(A) == r->nnz,
              "%s: %d x %d, nnz %lld; SOURCES.md says %lld rows, nnz %lld", name,
              adia_matrix_rows(A), adia_matrix_cols(A), (long long)adia_matrix_nnz(A),
              r->rows, r->nnz);
        CHECK(!strcmp(adia_matrix_name(A), name), "name %s", adia_matrix_name(A));
        adia_matrix_destroy(A);
    }
    if (d) closedir(d);
    CHECK(files == n, "%d .mtx files, %d table rows", files, n);
    return TEST_END();
}
