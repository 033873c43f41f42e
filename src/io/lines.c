/* lines.c -- a source cut into chunks of whole lines, through two bounded
 * buffers used in turn: each chunk ends at the last LF read so far and the
 * partial line after it is carried to the front of the other buffer, where
 * the next chunk is read while this one is parsed.  Text already in memory
 * is not copied: its chunks point into it. */
#include "source.h"

#include <inttypes.h>

/* Chunks (the parsers split each among the threads) start at CHUNK_MIN
 * and double up to 4 MB per thread when there are several, within
 * CHUNK_MAX; a single line may make a buffer grow to LINE_MAX beyond the
 * chunk, no further.  Each chunk costs the threads a wait for each other,
 * and on a machine another program keeps busy an OpenMP thread that waits
 * spins away the CPU the others need: with two waits a chunk, 8 MB per
 * thread made a 2-thread read of 272 MB 2.4x faster there than 2 MB did
 * (1.25 -> 0.52 s, one of two cores busy); with one wait a chunk, 4 MB
 * per thread waits as seldom.  Larger chunks cost the page faults of
 * their buffers and parse blocks (a 49 MB read at 2 threads: 0.050 s with
 * 4 MB per thread, 0.067 s with 8), and starting small keeps a small
 * file's buffers small (a 25 MB read was 18% slower with 8 MB chunks from
 * the start).  One thread waits for no one: 4 MB, which stay in cache. */
#define CHUNK_PER_THREAD (4u << 20)
#define CHUNK_MIN (4u << 20)
#define CHUNK_MAX (64u << 20)
#define LINE_MAX_BYTES (64u << 20)

static size_t chunk_set;   /* tests: adia__lines_set_chunk */

void adia__lines_set_chunk(size_t bytes) { chunk_set = bytes; }

/* The size the chunks grow to. */
static size_t chunk_max(void)
{
    if (chunk_set) return chunk_set;
    int threads = adia__threads();
    size_t c = threads == 1 ? CHUNK_MIN : (size_t)threads * CHUNK_PER_THREAD;
    return c > CHUNK_MAX ? CHUNK_MAX : c;
}

/* After each chunk handed out, the next one may be twice as large. */
static void grow_chunk(adia_lines *l)
{
    l->chunk = 2 * l->chunk < l->chunk_max ? 2 * l->chunk : l->chunk_max;
}

adia_status adia__lines_init(adia_lines *l, adia_source *src)
{
    memset(l, 0, sizeof *l);
    l->src = src;
    l->chunk_max = chunk_max();
    l->chunk = l->chunk_max < CHUNK_MIN ? l->chunk_max : CHUNK_MIN;
    l->zero_copy = src->fd < 0 && !src->gz;
    return ADIA_OK;
}

void adia__lines_free(adia_lines *l)
{
    free(l->buf[0]);
    free(l->buf[1]);
    l->buf[0] = l->buf[1] = NULL;
}

int64_t adia__lines_buffer_bytes(const adia_lines *l)
{
    return l->zero_copy ? 0 : 2 * (int64_t)l->chunk;
}

void adia__lines_fit(adia_lines *l, int64_t room)
{
    if (room / 2 < (int64_t)l->chunk_max)
        l->chunk_max = room / 2 > (int64_t)l->chunk ? (size_t)(room / 2) : l->chunk;
}

/* One past the last LF in [b, e), or NULL. */
static const char *after_last_lf(const char *b, const char *e)
{
    while (e > b)
        if (*--e == '\n') return e + 1;
    return NULL;
}

/* Text in memory: about a chunk, extended to the end of its last line. */
static void next_in_memory(adia_lines *l, const char **b, const char **e)
{
    adia_source *s = l->src;
    const char *p = (const char *)s->raw + s->raw_pos, *end = (const char *)s->raw + s->raw_len;
    const char *stop = end;
    if ((size_t)(end - p) > l->chunk) {
        stop = after_last_lf(p, p + l->chunk);
        if (!stop) {
            const char *nl = memchr(p + l->chunk, '\n', (size_t)(end - p - l->chunk));
            stop = nl ? nl + 1 : end;
        }
    }
    l->offset = (int64_t)s->raw_pos;
    s->raw_pos += (size_t)(stop - p);
    *b = p;
    *e = stop;
}

/* Buffer i with room for at least cap bytes. */
static adia_status reserve(adia_lines *l, int i, size_t cap)
{
    if (cap <= l->cap[i]) return ADIA_OK;
    char *nb = realloc(l->buf[i], cap);
    if (!nb) return adia__error(ADIA_ERR_NO_MEMORY, "%s: %zu bytes for the line buffer failed",
                               l->src->name, cap);
    l->buf[i] = nb;
    l->cap[i] = cap;
    return ADIA_OK;
}

/* The current buffer holds no LF: grow it (a line that does not fit a
 * chunk), up to a bound. */
static adia_status grow_for_line(adia_lines *l)
{
    size_t cap = l->cap[l->cur], most = l->chunk_max + LINE_MAX_BYTES;
    if (cap >= most) {
        bool cr = memchr(l->buf[l->cur], '\r', l->len) != NULL;
        return adia__error(ADIA_ERR_PARSE, "%s: a line longer than %u MB (at byte %" PRId64 ")%s",
                          l->src->name, LINE_MAX_BYTES >> 20, l->offset,
                          cr ? ": " ADIA_IO_CR_ONLY "?" : "");
    }
    return reserve(l, l->cur, 2 * cap < most ? 2 * cap : most);
}

/* Into the other buffer (as large as this one: the carry may be a long
 * line): the carry, then as much as it holds. */
static adia_status switch_buffer(adia_lines *l)
{
    int from = l->cur, to = !from;
    size_t carry = l->len - l->used;
    ADIA_TRY(reserve(l, to, l->cap[from] > l->chunk ? l->cap[from] : l->chunk));
    if (carry) memcpy(l->buf[to], l->buf[from] + l->used, carry);
    l->cur = to;
    l->offset += (int64_t)l->used;
    l->len = carry;
    l->used = 0;
    return ADIA_OK;
}

adia_status adia__lines_next(adia_lines *l, const char **b, const char **e)
{
    if (l->zero_copy) {
        next_in_memory(l, b, e);
        grow_chunk(l);
        return ADIA_OK;
    }
    ADIA_TRY(switch_buffer(l));
    char *buf = l->buf[l->cur];
    for (;;) {
        size_t cap = l->cap[l->cur];
        if (!l->eof && l->len < cap) {
            size_t want = cap - l->len, got;
            ADIA_TRY(adia__source_read(l->src, buf + l->len, want, &got));
            l->len += got;
            l->eof = got < want;
        }
        const char *stop = after_last_lf(buf, buf + l->len);
        if (stop || l->eof) {
            l->used = stop && !l->eof ? (size_t)(stop - buf) : l->len;
            break;
        }
        ADIA_TRY(grow_for_line(l));
        buf = l->buf[l->cur];
    }
    *b = buf;
    *e = buf + l->used;
    grow_chunk(l);
    return ADIA_OK;
}
