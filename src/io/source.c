#define _POSIX_C_SOURCE 200809L   /* O_CLOEXEC, fstat */
/* source.c -- bytes from a file descriptor or memory, inflated and
 * verified when they are gzip (RFC 1952): every member's CRC and length
 * are checked by zlib, concatenated members are read as one stream, and a
 * stream that ends early or is followed by anything but another member is
 * an error that says so. */
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#define RAW_BYTES (1 << 18)

static bool gz_magic(const unsigned char *p) { return p[0] == 0x1f && p[1] == 0x8b; }

/* Read more raw bytes (one read that returns data, or the end). */
static adia_status fill_raw(adia_source *s)
{
    if (s->fd < 0 || s->raw_eof) {
        s->raw_eof = true;
        return ADIA_OK;
    }
    memmove(s->buf, s->buf + s->raw_pos, s->raw_len - s->raw_pos);
    s->raw_len -= s->raw_pos;
    s->raw_pos = 0;
    for (;;) {
        ssize_t got = read(s->fd, s->buf + s->raw_len, RAW_BYTES - s->raw_len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0)
            return adia__error(ADIA_ERR_IO, "%s: read error: %s", s->name, strerror(errno));
        if (got == 0) s->raw_eof = true;
        s->raw_len += (size_t)got;
        s->raw_total += got;
        return ADIA_OK;
    }
}

/* Plain data: the raw bytes left over from detection, then straight from
 * the file into dst (no second copy). */
static adia_status read_plain(adia_source *s, unsigned char *dst, size_t cap, size_t *got)
{
    size_t n = s->raw_len - s->raw_pos < cap ? s->raw_len - s->raw_pos : cap;
    memcpy(dst, s->raw + s->raw_pos, n);
    s->raw_pos += n;
    while (n < cap && s->fd >= 0 && !s->raw_eof) {
        ssize_t r = read(s->fd, dst + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0)
            return adia__error(ADIA_ERR_IO, "%s: read error: %s", s->name, strerror(errno));
        if (r == 0) s->raw_eof = true;
        n += (size_t)r;
        s->raw_total += r;
    }
    *got = n;
    return ADIA_OK;
}

static adia_status gz_error(adia_source *s, int r)
{
    const char *why = s->z.msg ? s->z.msg : "unknown";
    if (r == Z_MEM_ERROR)
        return adia__error(ADIA_ERR_NO_MEMORY, "%s: out of memory inflating gzip data", s->name);
    if (!strcmp(why, "incorrect data check"))
        return adia__error(ADIA_ERR_PARSE, "%s: gzip CRC mismatch (the data is corrupt)", s->name);
    if (!strcmp(why, "incorrect length check"))
        return adia__error(ADIA_ERR_PARSE, "%s: gzip length mismatch (the data is corrupt)",
                          s->name);
    return adia__error(ADIA_ERR_IO, "%s: gzip data is corrupt (zlib: %s)", s->name, why);
}

/* After a member: the end of the data, another member, or garbage. */
static adia_status gz_next_member(adia_source *s, bool *end)
{
    while (s->raw_len - s->raw_pos < 2 && !s->raw_eof) ADIA_TRY(fill_raw(s));
    size_t left = s->raw_len - s->raw_pos;
    *end = left == 0;
    if (left == 0) return ADIA_OK;
    if (left < 2 || !gz_magic(s->raw + s->raw_pos))
        return adia__error(ADIA_ERR_PARSE, "%s: trailing garbage after gzip data (at byte %"
                          PRId64 ")", s->name, s->raw_total - (int64_t)left);
    s->member_end = false;
    return inflateReset(&s->z) == Z_OK ? ADIA_OK : gz_error(s, Z_STREAM_ERROR);
}

static adia_status read_gzip(adia_source *s, unsigned char *dst, size_t cap, size_t *got)
{
    size_t n = 0;
    while (n < cap) {
        if (s->member_end) {
            bool end;
            ADIA_TRY(gz_next_member(s, &end));
            if (end) break;
        }
        if (s->raw_pos == s->raw_len) {
            ADIA_TRY(fill_raw(s));
            if (s->raw_pos == s->raw_len)
                return adia__error(ADIA_ERR_PARSE, "%s: truncated gzip data (after %" PRId64
                                  " bytes): the file ends inside a gzip member or its "
                                  "CRC/length trailer", s->name, s->raw_total);
        }
        size_t in = s->raw_len - s->raw_pos, out = cap - n;
        s->z.next_in = (unsigned char *)s->raw + s->raw_pos;
        s->z.avail_in = (uInt)in;
        s->z.next_out = dst + n;
        s->z.avail_out = out > (1u << 30) ? 1u << 30 : (uInt)out;
        uInt avail_out = s->z.avail_out;
        int r = inflate(&s->z, Z_NO_FLUSH);
        s->raw_pos += in - s->z.avail_in;
        n += avail_out - s->z.avail_out;
        if (r == Z_STREAM_END) s->member_end = true;
        else if (r != Z_OK && r != Z_BUF_ERROR) return gz_error(s, r);
    }
    *got = n;
    return ADIA_OK;
}

static adia_status decode(adia_source *s, unsigned char *dst, size_t cap, size_t *got)
{
    return s->gz ? read_gzip(s, dst, cap, got) : read_plain(s, dst, cap, got);
}

/* Look at the first raw bytes: gzip magic means inflate from here on. */
static adia_status detect(adia_source *s)
{
    while (s->raw_len < 2 && !s->raw_eof) ADIA_TRY(fill_raw(s));
    if (s->raw_len < 2 || !gz_magic(s->raw)) return ADIA_OK;
    if (inflateInit2(&s->z, 15 + 16) != Z_OK)   /* 16: gzip wrapper only */
        return adia__error(ADIA_ERR_NO_MEMORY, "%s: cannot start inflating", s->name);
    s->gz = true;
    s->size = -1;
    return ADIA_OK;
}

adia_status adia__source_open(adia_source *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->size = -1;
    s->fd = -1;
    bool in = !strcmp(path, "-");
    s->name = in ? "<stdin>" : path;
    int fd = in ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return adia__error(ADIA_ERR_IO, "%s: %s", path, strerror(errno));
    s->fd = fd;
    s->close_fd = !in;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        adia__source_close(s);
        return adia__error(ADIA_ERR_IO, "%s: is a directory", path);
    }
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) s->size = (int64_t)st.st_size;
    s->buf = adia__alloc(RAW_BYTES, 1, "read buffer");
    if (!s->buf) {
        adia__source_close(s);
        return ADIA_ERR_NO_MEMORY;
    }
    s->raw = s->buf;
    adia_status r = detect(s);
    if (r != ADIA_OK) adia__source_close(s);
    return r;
}

adia_status adia__source_memory(adia_source *s, const char *name, const void *text, size_t len)
{
    memset(s, 0, sizeof *s);
    s->name = name;
    s->fd = -1;
    s->raw = text;
    s->raw_len = len;
    s->raw_eof = true;
    s->size = (int64_t)len;
    return detect(s);
}

adia_status adia__source_read(adia_source *s, void *dst, size_t cap, size_t *got)
{
    size_t n = s->ahead_len - s->ahead_pos < cap ? s->ahead_len - s->ahead_pos : cap;
    memcpy(dst, s->ahead + s->ahead_pos, n);
    s->ahead_pos += n;
    size_t more = 0;
    adia_status r = n < cap ? decode(s, (unsigned char *)dst + n, cap - n, &more) : ADIA_OK;
    *got = n + more;
    return r;
}

adia_status adia__source_peek(adia_source *s, void *dst, size_t n, size_t *got)
{
    if (n > sizeof s->ahead) n = sizeof s->ahead;
    if (s->ahead_len < n) {   /* only before the first read: ahead_pos is 0 */
        size_t more;
        ADIA_TRY(decode(s, s->ahead + s->ahead_len, n - s->ahead_len, &more));
        s->ahead_len += more;
    }
    *got = s->ahead_len < n ? s->ahead_len : n;
    memcpy(dst, s->ahead, *got);
    return ADIA_OK;
}

void adia__source_close(adia_source *s)
{
    if (s->gz) inflateEnd(&s->z);
    if (s->close_fd) close(s->fd);
    free(s->buf);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}
