/*
 * instream.h - an input file as a stream of decompressed bytes, read a
 * piece at a time, so that a reader's memory follows what it keeps of the
 * content rather than the size of the file.
 *
 * Contract: instream_open() reads PATH, or standard input for "-" (named
 * "<stdin>" in messages); instream_open_memory() reads bytes already in
 * memory (the caller keeps them alive until instream_close), cut into the
 * same 64 kB pieces a file gives, so both take one path.  gzip, bzip2 and
 * zstd are recognised by their magic bytes (compress.h) whatever the name,
 * and concatenated members, streams and frames are all decoded, as the
 * command-line tools do.  Decoding happens on demand: nothing is read
 * beyond what the caller asked to see, so a reader that stops early stops
 * the decompression (and the read of an endless pipe or device) there.
 *
 * instream_peek() makes up to N bytes visible without consuming them;
 * instream_consume() moves past bytes seen; instream_read() copies.  The
 * buffer behind a peek grows with the bytes that actually arrived, never
 * with N: a length field claiming 64 MiB in front of 10 bytes costs 10.
 * Fewer bytes than asked for means the end of the data (bytes that were
 * delivered but not consumed stay available); instream_end() then tells
 * how it ended:
 *   - INSTREAM_CLEAN: the input ended where a stream may end;
 *   - INSTREAM_DAMAGED: a compressed stream was cut short or corrupt, or
 *     more zero bytes in a row than the zero-run limit arrived (the run
 *     itself is not delivered): everything before the damage was
 *     delivered, and instream_error() is one complete line
 *     "NAME: offset N: what", N the offset in the compressed input (or
 *     "NAME: decompressed offset N: ..." for a zero run in compressed
 *     data).  Whether that is fatal is the reader's decision; nothing is
 *     printed;
 *   - INSTREAM_FAILED: the input could not be read (an I/O error),
 *     instream_error() says why.
 * Until the decoder has seen the end, instream_end() is INSTREAM_MORE.
 *
 * Decompression bombs: compressed input that decodes to more than 256
 * times its size (instream_limit_ratio()), past 64 MiB, is
 * INSTREAM_FAILED ("NAME: offset N: zstd data decompresses to more than
 * 256 times its size (...): a decompression bomb, not a profile"); what
 * was decoded before is not delivered.  Profiles compress 5 to 50 times.
 * A reader whose memory follows the distinct content whatever the length
 * (text read a line at a time) lifts the limit.
 *
 * The zero-run limit (instream_limit_zero_run, off by default) is for
 * formats that are held whole: no profile holds a megabyte of zero bytes
 * in a row, but /dev/zero and a decompression bomb are nothing else.
 *
 * instream_open() reports "NAME: cannot open: ..." through pt_err() and
 * returns NULL; nothing else prints.
 */
#ifndef PTPROF_UTIL_INSTREAM_H
#define PTPROF_UTIL_INSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/compress.h"

enum instream_end {
    INSTREAM_MORE,    /* not at the end yet */
    INSTREAM_CLEAN,   /* all data delivered, the input ended properly */
    INSTREAM_DAMAGED, /* the data stops at damage: instream_error() */
    INSTREAM_FAILED,  /* the input could not be read: instream_error() */
};

struct instream;

struct instream *instream_open(const char *path);
struct instream *instream_open_memory(const char *name, const void *data, size_t len);
/* Bytes in memory that are the content itself, never decompressed (a
 * reader's interface for a buffer, which another layer decompressed). */
struct instream *instream_open_memory_plain(const char *name, const void *data, size_t len);
void instream_close(struct instream *s);

/* Refuse compressed input that decodes to more than MAX times its size
 * (256 unless told; 0 lifts the limit). */
void instream_limit_ratio(struct instream *s, unsigned max);
/* Refuse a run of more than MAX zero bytes as damage; 0 lifts the limit.
 * Zero bytes held back waiting for the run to end count towards it, and
 * so do those decoded but not yet consumed when the limit is set (so a
 * reader may peek at a magic number first, and choose the limit by it). */
void instream_limit_zero_run(struct instream *s, size_t max);

/* Up to N bytes from the current position, not consumed: *DATA points at
 * them until the next call on S.  Returns how many (fewer only at the end
 * of the data). */
size_t instream_peek(struct instream *s, size_t n, const unsigned char **data);
/* Move past N bytes that a peek returned. */
void instream_consume(struct instream *s, size_t n);
/* Copy up to N bytes into BUF; returns how many (fewer only at the end). */
size_t instream_read(struct instream *s, void *buf, size_t n);
/* Consume up to N bytes without keeping them; returns how many. */
uint64_t instream_skip(struct instream *s, uint64_t n);

/* Decompressed bytes consumed so far: the offset of the next byte. */
uint64_t instream_offset(const struct instream *s);
/* Compressed bytes read so far. */
uint64_t instream_input_offset(const struct instream *s);
enum instream_end instream_end(const struct instream *s);
/* The message for DAMAGED or FAILED, else NULL. */
const char *instream_error(const struct instream *s);
/* The path, or "<stdin>". */
const char *instream_name(const struct instream *s);
/* The input's compression (reads its first bytes if nothing was yet). */
enum compression instream_compression(struct instream *s);
/* The size of a regular, uncompressed input file, else 0: a hint only. */
size_t instream_size_hint(const struct instream *s);

#endif
