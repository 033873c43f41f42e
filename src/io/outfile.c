/* outfile.c -- safe output files (see outfile.h): a temporary next to the
 * target, every write checked, fsync, then an atomic rename; plus the list
 * of live temporaries that adia_remove_temporary_files clears when the
 * process is killed. */
#define _XOPEN_SOURCE 700   /* realpath, fchown */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define OUT_BUFFER (1 << 18)   /* bytes gathered before a write(2) */
#define MAX_LIVE 32            /* temporaries open at once, process-wide */
#define MAX_TEMP_BASE 200      /* ".NAME.XXXXXX" must stay within NAME_MAX */

/* ------------------------------------------------- live temporary list */

/* Fixed slots, no malloc: a signal handler walks them.  A slot is FREE,
 * BUSY (claimed; its path is being filled in or no longer names a file of
 * ours) or LIVE (path is a temporary this process created). */
enum { SLOT_FREE, SLOT_BUSY, SLOT_LIVE };
static struct {
    atomic_int state;
    char path[PATH_MAX];
} live[MAX_LIVE];

_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the signal path needs lock-free atomics");

void adia_remove_temporary_files(void)
{
    for (int i = 0; i < MAX_LIVE; i++)
        if (atomic_load(&live[i].state) == SLOT_LIVE) unlink(live[i].path);
}

static int claim_slot(void)
{
    for (int i = 0; i < MAX_LIVE; i++) {
        int expect = SLOT_FREE;
        if (atomic_compare_exchange_strong(&live[i].state, &expect, SLOT_BUSY)) return i;
    }
    return -1;
}

/* --------------------------------------------------------------- open */

/* Six name characters that differ between calls, threads and processes;
 * O_EXCL makes a clash a retry, not a mistake. */
static void random_suffix(char *p)
{
    static atomic_uint counter;
    static const char alphabet[] =
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    uint64_t x = (uint64_t)t.tv_nsec ^ ((uint64_t)getpid() << 32) ^
                 ((uint64_t)atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15u);
    for (int i = 0; i < 6; i++) {
        x ^= x >> 29;
        x *= 0xBF58476D1CE4E5B9u;
        p[i] = alphabet[(x >> 40) % 62];
    }
    p[6] = '\0';
}

/* Create "DIR/.NAME.XXXXXX" next to target in slot's path.  Not mkstemp:
 * open's mode 0666 lets the kernel apply the umask (reading the umask is
 * not thread-safe), as for a file created directly. */
static int create_temporary(const char *target, char *tmp)
{
    const char *slash = strrchr(target, '/');
    int dir_len = slash ? (int)(slash - target + 1) : 0;
    for (int attempt = 0; attempt < 100; attempt++) {
        int n = snprintf(tmp, PATH_MAX, "%.*s.%.*s.", dir_len, target, MAX_TEMP_BASE,
                         target + dir_len);
        if (n < 0 || n + 7 > PATH_MAX) {
            errno = ENAMETOOLONG;
            return -1;
        }
        random_suffix(tmp + n);
        int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    return -1;
}

/* The file a rename must replace: path, or what its symbolic link names. */
static char *resolve_target(const char *path)
{
    struct stat st;
    char *real = lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? realpath(path, NULL) : NULL;
    if (real) return real;
    size_t n = strlen(path) + 1;
    char *copy = malloc(n);
    if (copy) memcpy(copy, path, n);
    return copy;
}

/* Open the temporary (or, for a device or pipe, the target itself). */
static adia_status open_fd(adia_outfile *o)
{
    struct stat st;
    int exists = stat(o->target, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        o->fd = open(o->target, O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (o->fd < 0) return adia__error(ADIA_ERR_IO, "creating %s: %s", o->path, strerror(errno));
        return ADIA_OK;
    }
    o->slot = claim_slot();
    if (o->slot < 0)
        return adia__error(ADIA_ERR_IO, "creating %s: more than %d output files open at once",
                          o->path, MAX_LIVE);
    o->fd = create_temporary(o->target, live[o->slot].path);
    if (o->fd < 0)
        return adia__error(ADIA_ERR_IO, "creating %s: cannot create a temporary file in its "
                          "folder: %s", o->path, strerror(errno));
    /* A signal between open and here leaves the temporary behind; marking
     * it live before open could make the handler remove a stranger's file. */
    atomic_store(&live[o->slot].state, SLOT_LIVE);
    if (exists) {
        /* The replacement keeps the old file's permissions and, where we
         * may (root), its owner. */
        if (fchmod(o->fd, st.st_mode & 07777) != 0)
            return adia__error(ADIA_ERR_IO, "creating %s: cannot copy its permissions: %s",
                              o->path, strerror(errno));
        if (st.st_uid != geteuid() || st.st_gid != getegid())
            (void)!fchown(o->fd, st.st_uid, st.st_gid);   /* refused: ours, like any new file */
    }
    return ADIA_OK;
}

static adia_status start_gzip(adia_outfile *o)
{
    z_stream *z = calloc(1, sizeof *z);
    o->z = z;
    if (!z) return adia__error(ADIA_ERR_NO_MEMORY, "creating %s: no memory for zlib", o->path);
    /* 15 + 16: gzip wrapper, what gzip(1) and gzopen produce */
    if (deflateInit2(z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(z);
        o->z = NULL;
        return adia__error(ADIA_ERR_NO_MEMORY, "creating %s: zlib could not start", o->path);
    }
    return ADIA_OK;
}

adia_status adia__outfile_open(adia_outfile *o, const char *path, bool gzip)
{
    memset(o, 0, sizeof *o);
    o->path = path;
    o->fd = -1;
    o->slot = -1;
    o->target = resolve_target(path);
    if (!o->target) return adia__error(ADIA_ERR_NO_MEMORY, "creating %s: no memory", path);
    adia_status s = open_fd(o);
    if (s == ADIA_OK) {
        o->buf = malloc(OUT_BUFFER);
        if (!o->buf) s = adia__error(ADIA_ERR_NO_MEMORY, "creating %s: no memory", path);
    }
    if (s == ADIA_OK && gzip) s = start_gzip(o);
    if (s != ADIA_OK) adia__outfile_abort(o);
    return s;
}

/* ------------------------------------------------------------- writing */

/* The first failure is recorded once and then returned by every call. */
static adia_status fail(adia_outfile *o, const char *what, int err)
{
    if (o->status == ADIA_OK)
        o->status = adia__error(ADIA_ERR_IO, "%s %s: %s", what, o->path, strerror(err));
    return o->status;
}

static adia_status write_all(adia_outfile *o, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = write(o->fd, p, n > (1u << 30) ? 1u << 30 : n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return fail(o, "writing", k < 0 ? errno : EIO);
        p += k;
        n -= (size_t)k;
    }
    return ADIA_OK;
}

static adia_status flush_buffer(adia_outfile *o)
{
    adia_status s = write_all(o, o->buf, o->used);
    o->used = 0;
    return s;
}

/* Compress n bytes (flush Z_FINISH ends the stream) into the buffer. */
static adia_status deflate_bytes(adia_outfile *o, const void *data, size_t n, int flush)
{
    z_stream *z = o->z;
    z->next_in = (Bytef *)(uintptr_t)data;   /* zlib's API is not const */
    z->avail_in = (uInt)n;
    for (;;) {
        z->next_out = o->buf + o->used;
        z->avail_out = (uInt)(OUT_BUFFER - o->used);
        int rc = deflate(z, flush);
        o->used = OUT_BUFFER - z->avail_out;
        if (rc == Z_STREAM_ERROR) return fail(o, "compressing", EIO);
        if (z->avail_out == 0) ADIA_TRY(flush_buffer(o));
        else if (z->avail_in == 0 && (flush != Z_FINISH || rc == Z_STREAM_END)) return ADIA_OK;
    }
}

/* Small pieces are gathered in the buffer; large arrays go straight out. */
static adia_status write_plain(adia_outfile *o, const unsigned char *p, size_t n)
{
    if (o->used + n > OUT_BUFFER) ADIA_TRY(flush_buffer(o));
    if (n >= OUT_BUFFER) return write_all(o, p, n);
    memcpy(o->buf + o->used, p, n);
    o->used += n;
    return ADIA_OK;
}

adia_status adia__outfile_write(adia_outfile *o, const void *data, size_t n)
{
    const unsigned char *p = data;
    if (o->status != ADIA_OK) return o->status;
    if (!o->z) return write_plain(o, p, n);
    while (o->status == ADIA_OK && n > 0) {
        size_t part = n > (1u << 30) ? 1u << 30 : n;   /* zlib counts in uInt */
        deflate_bytes(o, p, part, Z_NO_FLUSH);
        p += part;
        n -= part;
    }
    return o->status;
}

adia_status adia__outfile_printf(adia_outfile *o, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if ((n < 0 || (size_t)n >= sizeof line) && o->status == ADIA_OK)
        o->status = adia__error(ADIA_ERR_INTERNAL, "writing %s: a formatted line over %zu "
                               "bytes", o->path, sizeof line);
    return adia__outfile_write(o, line, (size_t)n);
}

/* ------------------------------------------------------ commit / abort */

adia_status adia__outfile_commit(adia_outfile *o)
{
    bool temporary = o->slot >= 0;
    if (o->status == ADIA_OK && o->z) deflate_bytes(o, NULL, 0, Z_FINISH);
    if (o->status == ADIA_OK) flush_buffer(o);
    /* fsync before the rename: after a crash the name must not point at a
     * file whose data never reached the disk.  Devices and pipes need none. */
    if (o->status == ADIA_OK && temporary && fsync(o->fd) != 0) fail(o, "writing", errno);
    if (close(o->fd) != 0) fail(o, "writing", errno);   /* NFS reports late errors here */
    o->fd = -1;
    if (o->status == ADIA_OK && temporary) {
        if (rename(live[o->slot].path, o->target) == 0)
            atomic_store(&live[o->slot].state, SLOT_BUSY);   /* nothing left to remove */
        else
            fail(o, "renaming the temporary file onto", errno);
    }
    adia_status s = o->status;
    adia__outfile_abort(o);
    return s;
}

void adia__outfile_abort(adia_outfile *o)
{
    if (o->fd >= 0) close(o->fd);
    o->fd = -1;
    if (o->slot >= 0) {
        if (atomic_exchange(&live[o->slot].state, SLOT_BUSY) == SLOT_LIVE)
            unlink(live[o->slot].path);
        atomic_store(&live[o->slot].state, SLOT_FREE);
        o->slot = -1;
    }
    if (o->z) deflateEnd(o->z);
    free(o->z);
    free(o->buf);
    free(o->target);
    o->z = NULL;
    o->buf = NULL;
    o->target = NULL;
}

adia_status adia__outfile_finish(adia_outfile *o, adia_status so_far)
{
    if (so_far == ADIA_OK) return adia__outfile_commit(o);
    adia__outfile_abort(o);
    return so_far;
}
