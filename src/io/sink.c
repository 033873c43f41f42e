/* sink.c -- output files, plain or gzip-compressed, with every write
 * checked (a full disk is an error, not a silently short file). */
#include "io.h"

#include <errno.h>
#include <zlib.h>

adia_status adia_sink_open(adia_sink *s, const char *path)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    if (adia_io_has_suffix(path, ".gz")) {
        s->gz = gzopen(path, "wb6");
        if (!s->gz) return adia_error(ADIA_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
        gzbuffer(s->gz, 1 << 18);
    } else {
        s->f = fopen(path, "wb");
        if (!s->f) return adia_error(ADIA_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    }
    return ADIA_OK;
}

adia_status adia_sink_write(adia_sink *s, const void *data, size_t n)
{
    const char *p = data;
    while (n > 0) {
        size_t part = n > (1u << 30) ? 1u << 30 : n;
        size_t done = s->gz ? (size_t)(gzwrite(s->gz, p, (unsigned)part) > 0 ? part : 0)
                            : fwrite(p, 1, part, s->f);
        if (done != part)
            return adia_error(ADIA_ERR_IO, "%s: write failed: %s", s->path, strerror(errno));
        p += part;
        n -= part;
    }
    return ADIA_OK;
}

adia_status adia_sink_close(adia_sink *s, adia_status so_far)
{
    int bad = s->gz ? gzclose(s->gz) != Z_OK : fclose(s->f) != 0;
    if (so_far == ADIA_OK && bad)
        so_far = adia_error(ADIA_ERR_IO, "%s: closing failed: %s", s->path, strerror(errno));
    if (so_far != ADIA_OK) remove(s->path);
    s->f = NULL;
    s->gz = NULL;
    return so_far;
}
