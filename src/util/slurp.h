/*
 * slurp.h - read a whole input file into memory, decompressing it, for the
 * formats that can only be parsed whole (readers that can go record by
 * record read an instream.h stream instead).
 *
 * Contract: slurp_path() reads PATH, or standard input for "-" (named
 * "<stdin>" in messages), recognises gzip, bzip2 and zstd by their magic
 * bytes (compress.h) whatever the name, and decompresses while reading into
 * a buffer that grows as needed but never beyond MAX_LEN bytes of content:
 * more is an error naming the file, so a small compressed file cannot make
 * us allocate without bound.  Concatenated gzip members, bzip2 streams and
 * zstd frames (including skippable frames) are all read, as the command-line
 * tools do.
 *
 * Damage: when a compressed input ends early or is corrupt after some data
 * was decoded, the call succeeds with the data decoded so far, sets
 * TRUNCATED and puts in ERROR a complete message "NAME: offset N: what"
 * where N is the offset in the compressed input.  Whether that is fatal is
 * the reader's decision (the native reader is crash-tolerant; the pperf
 * reader is not); slurp prints nothing for it.  Damage before any byte was
 * decoded, trouble opening or reading, and exceeding MAX_LEN are errors:
 * one "NAME: ..." line through pt_err() and -1.
 *
 * On success DATA holds LEN bytes followed by a NUL byte that LEN does not
 * count (text readers may use string functions); DATA is never NULL.  On
 * failure OUT is zeroed.  Either way slurp_free() releases it.
 */
#ifndef PTPROF_UTIL_SLURP_H
#define PTPROF_UTIL_SLURP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/compress.h"
#include "util/instream.h"

/* A limit for readers that have no better one: larger inputs are refused. */
#if SIZE_MAX > 0xffffffffu
#define SLURP_DEFAULT_MAX ((size_t)4 << 30)
#else
#define SLURP_DEFAULT_MAX ((size_t)1 << 30)
#endif

struct slurp {
    unsigned char *data;
    size_t len;
    bool truncated;
    char *error; /* NULL unless TRUNCATED */
    enum compression compression;
};

int slurp_path(const char *path, size_t max_len, struct slurp *out);
/* The same for the rest of an open stream (its zero-run limit applies);
 * the stream stays open, at its end or where the limit stopped it. */
int slurp_stream(struct instream *in, size_t max_len, struct slurp *out);
/* The same for an input already in memory: DATA/LEN as read from a file
 * named NAME.  The result is always a copy (the input is not kept). */
int slurp_buffer_decompress(const char *name, const void *data, size_t len, size_t max_len,
                            struct slurp *out);
void slurp_free(struct slurp *s);

#endif
