/*
 * compress.h - gzip, bzip2 and zstd for every ptprof reader and writer.
 *
 * Contract: inputs are recognised by their magic bytes, never by their name
 * (compression_detect); outputs are compressed when their name ends in .gz,
 * .bz2 or .zst (compression_for_path).  "-" (stdin/stdout) is never
 * compressed by name.
 *
 * compress_open() wraps a FILE opened for writing into a new write-only
 * FILE whose bytes reach RAW compressed, so any fwrite-based writer
 * compresses without knowing it.  The returned stream cannot seek.
 *   - fflush() on it makes everything written so far decodable from the
 *     bytes already handed to RAW (and RAW is flushed too): gzip ends with a
 *     sync flush, zstd with a flushed block, and bzip2 ends its stream, since
 *     a flushed bzip2 block keeps its last bits back until the next block;
 *     the next write starts a new bzip2 stream and readers decode
 *     concatenated streams.  A writer that flushes every 250 ms thus leaves
 *     a readable prefix if it is killed.
 *   - fclose() on it finishes the compressed stream and closes RAW: from a
 *     successful compress_open() on, RAW belongs to the returned stream and
 *     the caller must not use or close it.  fclose() returns EOF when any
 *     write to RAW failed or the close of RAW failed.
 *   - After a failed write the stream stays in error: fwrite/fflush fail and
 *     errno tells why.
 * compress_open(RAW, COMPRESSION_NONE) returns RAW itself.  On failure it
 * returns NULL with errno set, and RAW still belongs to the caller.
 * Levels: gzip 6, bzip2 9 (900 kB blocks), zstd 3 with a content checksum.
 */
#ifndef PTPROF_UTIL_COMPRESS_H
#define PTPROF_UTIL_COMPRESS_H

#include <stddef.h>
#include <stdio.h>

enum compression {
    COMPRESSION_NONE,
    COMPRESSION_GZIP,
    COMPRESSION_BZIP2,
    COMPRESSION_ZSTD,
};

/* The longest prefix compression_detect() ever looks at. */
#define COMPRESSION_MAGIC_MAX 4

/* By suffix: ".gz", ".bz2", ".zst" (case-sensitive); anything else, and
 * "-", is COMPRESSION_NONE. */
enum compression compression_for_path(const char *path);
/* The length of NAME without such a suffix (all of it when it has none, or
 * when it is nothing but the suffix), so a name's own ending can be read
 * whether or not the output is compressed. */
size_t compression_stripped_length(const char *name);
/* By magic bytes in the first N bytes of HEAD: 1f 8b (gzip), "BZh" and a
 * block size digit 1-9 (bzip2), 28 b5 2f fd (a zstd frame) or a zstd
 * skippable frame 5? 2a 4d 18 (pzstd starts with one).  Too few bytes, or
 * none of these, is COMPRESSION_NONE. */
enum compression compression_detect(const void *head, size_t n);
/* "none", "gzip", "bzip2", "zstd". */
const char *compression_name(enum compression c);

FILE *compress_open(FILE *raw, enum compression c);

#endif
