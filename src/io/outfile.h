/* outfile.h -- every file adia writes goes through here, so that a failed
 * or interrupted write never damages what was there before.
 *
 * A regular (or not yet existing) target is written to a temporary file in
 * its own folder (".NAME.XXXXXX", same file system, so the final rename is
 * atomic) and renamed over the target only after every write, the flush,
 * fsync and close have succeeded.  Any failure removes the temporary and
 * leaves the target as it was.  A target that exists and is not a regular
 * file (a device such as /dev/null, a pipe) is written in place: renaming
 * over it would replace the device node.  A symbolic link is followed, so
 * the file it names is replaced and the link stays. */
#ifndef ADIA_IO_OUTFILE_H
#define ADIA_IO_OUTFILE_H

#include "internal.h"

typedef struct adia_outfile {
    const char *path;       /* the caller's name, for messages */
    char *target;           /* what is renamed over: path, symlinks resolved */
    int fd;
    int slot;               /* the temporary's place in the live list; -1 in place */
    void *z;                /* z_stream when compressing, else NULL */
    unsigned char *buf;     /* bytes not yet written to fd */
    size_t used;
    adia_status status;     /* first failure; later writes do nothing */
} adia_outfile;

/* Start writing path; gzip compresses (gzip format, level 6).  On failure
 * nothing is left behind and the error names path. */
adia_status adia__outfile_open(adia_outfile *o, const char *path, bool gzip);
/* Append n bytes.  Errors (disk full: "writing F: No space left on
 * device") stick: later writes and the commit return the same status. */
adia_status adia__outfile_write(adia_outfile *o, const void *data, size_t n);
adia_status adia__outfile_printf(adia_outfile *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Finish: flush, fsync, close and rename over the target.  On any failure
 * the temporary is removed and the target is untouched.  Releases o. */
adia_status adia__outfile_commit(adia_outfile *o);
/* Give up: close and remove the temporary.  Releases o. */
void adia__outfile_abort(adia_outfile *o);
/* Commit if so_far is ADIA_OK, else abort and return so_far: the usual
 * last line of a writer. */
adia_status adia__outfile_finish(adia_outfile *o, adia_status so_far);

#endif
