/* test_outfile.c -- safe output files (src/io/outfile.c) and the writers
 * that use them: commit replaces the target only when complete, abort and
 * every failure leave it as it was, no temporary is ever left behind,
 * permissions are kept; adia_remove_temporary_files; adia_vector_write_mtx. */
#define _XOPEN_SOURCE 700   /* mkdtemp, symlink, setrlimit */
#include "testutil.h"
#include "io/outfile.h"

#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

static char dir[64];

static const char *in_dir(const char *name)
{
    static char path[8][128];
    static int next;
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s/%s", dir, name);
    return p;
}

/* Files in dir whose name starts with '.' (the temporaries' names). */
static int temporaries(void)
{
    DIR *d = opendir(dir);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    if (d) closedir(d);
    return n;
}

static void put_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text, f) >= 0 && fclose(f) == 0, "writing %s", path);
}

/* Whole content of path (gunzipped if compressed), or "" if unreadable. */
static const char *text_of(const char *path)
{
    static char buf[1 << 12];
    gzFile gz = gzopen(path, "rb");
    int n = gz ? gzread(gz, buf, sizeof buf - 1) : 0;
    if (gz) gzclose(gz);
    buf[n > 0 ? n : 0] = '\0';
    return buf;
}

static int mode_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
}

static void test_commit(void)
{
    const char *path = in_dir("a.txt");
    adia_outfile o;
    CHECK_OK(adia__outfile_open(&o, path, false));
    CHECK_OK(adia__outfile_write(&o, "hello ", 6));
    CHECK_OK(adia__outfile_printf(&o, "%d\n", 42));
    CHECK(access(path, F_OK) != 0, "the target appears only at the commit");
    CHECK(temporaries() == 1, "one temporary while writing, found %d", temporaries());
    CHECK_OK(adia__outfile_commit(&o));
    CHECK(!strcmp(text_of(path), "hello 42\n"), "committed text: '%s'", text_of(path));
    CHECK(temporaries() == 0, "no temporary after the commit");

    /* replacing: the old content stays visible until the commit */
    CHECK_OK(adia__outfile_open(&o, path, false));
    CHECK_OK(adia__outfile_write(&o, "new\n", 4));
    CHECK(!strcmp(text_of(path), "hello 42\n"), "old text before the commit");
    CHECK_OK(adia__outfile_commit(&o));
    CHECK(!strcmp(text_of(path), "new\n"), "replaced text: '%s'", text_of(path));
    remove(path);
}

static void test_abort(void)
{
    const char *path = in_dir("b.txt");
    adia_outfile o;
    CHECK_OK(adia__outfile_open(&o, path, false));
    adia__outfile_abort(&o);
    CHECK(access(path, F_OK) != 0 && temporaries() == 0, "abort of a new file leaves nothing");
    put_text(path, "old\n");
    CHECK_OK(adia__outfile_open(&o, path, true));
    CHECK_OK(adia__outfile_write(&o, "new\n", 4));
    adia__outfile_abort(&o);
    CHECK(!strcmp(text_of(path), "old\n") && temporaries() == 0, "abort keeps the old file");
    remove(path);
}

static void test_permissions(void)
{
    const char *path = in_dir("c.txt");
    put_text(path, "old\n");
    chmod(path, 0604);
    adia_outfile o;
    CHECK_OK(adia__outfile_open(&o, path, false));
    CHECK_OK(adia__outfile_commit(&o));
    CHECK(mode_of(path) == 0604, "replaced file has mode %o, expected 604", mode_of(path));
    remove(path);
    mode_t old = umask(027);   /* a new file: 0666 less the umask (mkstemp gives 0600) */
    CHECK_OK(adia__outfile_open(&o, path, false));
    CHECK_OK(adia__outfile_commit(&o));
    umask(old);
    CHECK(mode_of(path) == 0640, "new file has mode %o, expected 640", mode_of(path));
    remove(path);
}

/* Large and small writes mixed, plain and gzip: the bytes come back in order. */
static void test_large(void)
{
    size_t n = 3u << 20;
    unsigned char *data = malloc(n), *back = malloc(n + 1);
    if (!data || !back) { CHECK(0, "no memory"); free(data); free(back); return; }
    for (size_t i = 0; i < n; i++) data[i] = (unsigned char)(i * 2654435761u >> 13);
    const size_t cut[] = {0, 7, 100, 300000, 1u << 20, n};   /* small, under and over the buffer */
    for (int gzip = 0; gzip < 2; gzip++) {
        const char *path = in_dir(gzip ? "d.gz" : "d.bin");
        adia_outfile o;
        CHECK_OK(adia__outfile_open(&o, path, gzip));
        for (int k = 0; k + 1 < 6; k++) CHECK_OK(adia__outfile_write(&o, data + cut[k], cut[k + 1] - cut[k]));
        CHECK_OK(adia__outfile_commit(&o));
        gzFile gz = gzopen(path, "rb");
        int got = gz ? gzread(gz, back, (unsigned)n + 1) : -1;
        CHECK(gz && gzdirect(gz) == !gzip, "%s: gzip %d", path, gzip);
        if (gz) gzclose(gz);
        CHECK(got == (int)n && !memcmp(back, data, n), "%s: %d bytes back of %zu", path, got, n);
        remove(path);
    }
    free(data);
    free(back);
}

/* A file-size limit (RLIMIT_FSIZE; SIGXFSZ ignored): a write past it fails
 * with EFBIG, like a full disk.  Every writer must keep the old file and
 * leave no temporary. */
static void limit_file_size(rlim_t bytes)
{
    struct rlimit r;
    getrlimit(RLIMIT_FSIZE, &r);
    r.rlim_cur = bytes;
    CHECK(setrlimit(RLIMIT_FSIZE, &r) == 0, "setrlimit");
}

static void check_kept(const char *path, const char *old, adia_status s)
{
    CHECK(s == ADIA_ERR_IO && test_contains(adia_last_error(), path) &&
          test_contains(adia_last_error(), "File too large"),
          "%s: %s (%s)", path, adia_status_string(s), adia_last_error());
    CHECK(!strcmp(text_of(path), old), "%s: old file replaced by '%.40s'", path, text_of(path));
    CHECK(temporaries() == 0, "%s: %d temporaries left", path, temporaries());
}
static void check_survives(const char *path, adia_status s) { check_kept(path, "old\n", s); }

static void test_full(void)
{
    signal(SIGXFSZ, SIG_IGN);
    adia_matrix *A = test_generate("lap2d5:100");
    adia_plan *P = NULL;
    CHECK_OK(adia_plan_create(A, NULL, &P));
    const char *lab[] = {"a"};
    const double val[] = {1}, x[] = {1, 2};
    const char *names[] = {"m.mtx", "m.mtx.gz", "m.bin", "v.mtx", "s.png", "c.png", "p.plan"};
    for (int k = 0; k < 7; k++) put_text(in_dir(names[k]), "old\n");
    put_text(in_dir(names[6]), "adia-plan 1\nold\n");   /* a plan replaces only a plan */
    limit_file_size(0);   /* nothing fits: small outputs fail at the commit's flush */
    check_survives(in_dir(names[0]), adia_matrix_write_mtx(A, in_dir(names[0])));
    check_survives(in_dir(names[1]), adia_matrix_write_mtx(A, in_dir(names[1])));
    check_survives(in_dir(names[2]), adia_matrix_write_bin(A, in_dir(names[2])));
    check_survives(in_dir(names[3]), adia_vector_write_mtx(in_dir(names[3]), 2, x));
    check_survives(in_dir(names[4]), adia_matrix_spy_png(A, in_dir(names[4]), NULL));
    check_survives(in_dir(names[5]), adia_bar_chart_png(in_dir(names[5]), "t", 1, lab, val,
                                                       "ms", 0, NULL, NULL));
    check_kept(in_dir(names[6]), "adia-plan 1\nold\n", adia_plan_save(P, in_dir(names[6])));
    limit_file_size(RLIM_INFINITY);
    /* a limit inside a large write: the error comes from the middle */
    limit_file_size(1 << 16);
    check_survives(in_dir(names[0]), adia_matrix_write_mtx(A, in_dir(names[0])));
    limit_file_size(RLIM_INFINITY);
    for (int k = 0; k < 7; k++) remove(in_dir(names[k]));
    adia_plan_destroy(P);
    adia_matrix_destroy(A);
}

/* A device is written in place (renaming over it would replace the node). */
static void test_device(void)
{
    if (access("/dev/full", W_OK) != 0) return;
    static char zeros[1 << 20];
    adia_outfile o;
    CHECK_OK(adia__outfile_open(&o, "/dev/full", false));
    CHECK_ERR(adia__outfile_write(&o, zeros, sizeof zeros), ADIA_ERR_IO,
              "writing /dev/full: No space left on device");
    CHECK_ERR(adia__outfile_commit(&o), ADIA_ERR_IO, "writing /dev/full: No space left on device");
    struct stat st;
    CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode), "/dev/full is still a device");
    CHECK_OK(adia_vector_write_mtx("/dev/null", 1, (const double[]){1}));
}

/* What a SIGTERM handler does: the temporary goes, the target stays, and
 * the interrupted write cannot be committed. */
static void test_remove_temporaries(void)
{
    const char *path = in_dir("e.txt");
    put_text(path, "old\n");
    adia_outfile o;
    CHECK_OK(adia__outfile_open(&o, path, false));
    CHECK_OK(adia__outfile_write(&o, "new\n", 4));
    CHECK(temporaries() == 1, "a temporary while writing");
    adia_remove_temporary_files();
    CHECK(temporaries() == 0, "adia_remove_temporary_files removed it");
    CHECK_ERR(adia__outfile_commit(&o), ADIA_ERR_IO, path);
    CHECK(!strcmp(text_of(path), "old\n"), "the old file stays");
    adia_remove_temporary_files();   /* nothing live: does nothing */
    CHECK(!strcmp(text_of(path), "old\n") && temporaries() == 0, "a second call is harmless");
    remove(path);
}

/* Writing through a symbolic link replaces the file it names. */
static void test_symlink(void)
{
    const char *real = in_dir("real.txt"), *link = in_dir("link.txt");
    put_text(real, "old\n");
    CHECK(symlink("real.txt", link) == 0, "symlink");
    adia_outfile o;
    CHECK_OK(adia__outfile_open(&o, link, false));
    CHECK_OK(adia__outfile_write(&o, "new\n", 4));
    CHECK_OK(adia__outfile_commit(&o));
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode), "the link is still a link");
    CHECK(!strcmp(text_of(real), "new\n"), "the linked file has the new text");
    remove(link);
    remove(real);
}

static void test_errors(void)
{
    adia_outfile o;
    CHECK_ERR(adia__outfile_open(&o, "/nonexistent-adia-dir/x.mtx", false), ADIA_ERR_IO,
              "creating /nonexistent-adia-dir/x.mtx");
    CHECK_ERR(adia__outfile_open(&o, dir, false), ADIA_ERR_IO, dir);   /* a folder */
    /* the live list is fixed-size: one too many is an error, not a crash */
    adia_outfile many[33];
    int opened = 0;
    adia_status s = ADIA_OK;
    while (opened < 33 && (s = adia__outfile_open(&many[opened], in_dir("f.txt"), false)) == ADIA_OK)
        opened++;
    CHECK(opened == 32 && s == ADIA_ERR_IO && test_contains(adia_last_error(), "more than 32"),
          "opened %d: %s", opened, adia_last_error());
    while (opened > 0) adia__outfile_abort(&many[--opened]);
    CHECK(temporaries() == 0, "all aborted");
}

static void test_vector(void)
{
    const double x[] = {1, -0.1, 1e-300, 0, NAN, -INFINITY};
    const char *want = "%%MatrixMarket matrix array real general\n"
                       "% written by adia " ADIA_VERSION_STRING "\n6 1\n"
                       "1\n-0.1\n1e-300\n0\nnan\n-inf\n";   /* shortest round trip */
    for (int gzip = 0; gzip < 2; gzip++) {
        const char *path = in_dir(gzip ? "v.mtx.gz" : "v.mtx");
        CHECK_OK(adia_vector_write_mtx(path, 6, x));
        CHECK(!strcmp(text_of(path), want), "%s:\n%s", path, text_of(path));
        gzFile gz = gzopen(path, "rb");
        CHECK(gz && gzdirect(gz) == !gzip, "%s compressed by suffix", path);
        if (gz) gzclose(gz);
        /* the matrix reader takes it back exactly, non-finite values too */
        adia_matrix *V = NULL;
        CHECK_OK(adia_matrix_read_mtx(path, &V));
        adia_csr_view v = {0};
        if (V) CHECK_OK(adia_matrix_csr(V, &v));
        CHECK(v.rows == 6 && v.cols == 1, "read back %d x %d", v.rows, v.cols);
        for (int64_t k = 0; k < v.nnz; k++) {
            int32_t i = 0;
            while (v.rowptr[i + 1] <= k) i++;
            CHECK(v.values[k] == x[i] || (isnan(v.values[k]) && isnan(x[i])),
                  "x[%d] = %.17g read back as %.17g", i, x[i], v.values[k]);
        }
        adia_matrix_destroy(V);
        remove(path);
    }
    CHECK_OK(adia_vector_write_mtx(in_dir("e.mtx"), 0, NULL));
    CHECK(!strcmp(text_of(in_dir("e.mtx")) + strlen(text_of(in_dir("e.mtx"))) - 4, "0 1\n"),
          "empty vector: %s", text_of(in_dir("e.mtx")));
    remove(in_dir("e.mtx"));
    CHECK_ERR(adia_vector_write_mtx(NULL, 1, x), ADIA_ERR_INVALID_ARG, "path is NULL");
    CHECK_ERR(adia_vector_write_mtx(in_dir("v.mtx"), -1, x), ADIA_ERR_INVALID_ARG, "negative");
    CHECK_ERR(adia_vector_write_mtx(in_dir("v.mtx"), 2, NULL), ADIA_ERR_INVALID_ARG, "x is NULL");
    CHECK(temporaries() == 0 && access(in_dir("v.mtx"), F_OK) != 0, "refused: nothing written");
}

int main(void)
{
    TEST_BEGIN();
    snprintf(dir, sizeof dir, "/tmp/adia_outfile_XXXXXX");
    if (!mkdtemp(dir)) TEST_SKIP("cannot make a temporary folder");
    test_commit();
    test_abort();
    test_permissions();
    test_large();
    test_full();
    test_device();
    test_remove_temporaries();
    test_symlink();
    test_errors();
    test_vector();
    rmdir(dir);
    return TEST_END();
}
