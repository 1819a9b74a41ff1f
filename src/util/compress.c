/*
 * compress.c - see compress.h.
 *
 * The compressing stream is a fopencookie() stream with a large stdio
 * buffer of our own.  stdio hands us data in only two situations: its
 * buffer is full (or an fwrite is larger than the buffer), or the writer
 * called fflush/fclose.  We cannot tell the two apart, so every hand-over
 * ends with a compressor flush.  That keeps fflush's promise exactly, and
 * the buffer sizes below make the flushes that stdio causes on its own rare
 * enough to cost almost nothing: a sync flush every 64 kB of gzip input
 * (the deflate window carries over), one per 128 kB zstd block, one bzip2
 * stream per 900 kB block.
 */
#include "util/compress.h"

#include <bzlib.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#define GZIP_LEVEL 6
#define BZIP2_LEVEL 9
#define ZSTD_LEVEL 3

/* Input handed to a compressor in one call: zlib and libbz2 count in
 * unsigned int. */
#define CALL_MAX ((size_t)1 << 30)

struct zcookie {
    FILE *raw;
    enum compression kind;
    bool failed;
    int error; /* errno of the first failure */
    z_stream gz;
    bz_stream bz;
    bool bz_open; /* a bzip2 stream has been started and not yet ended */
    ZSTD_CCtx *zstd;
    char *stdio_buf;
    unsigned char out[65536];
};

static const struct {
    const char *suffix;
    enum compression c;
} compression_suffixes[] = {
    {".gz", COMPRESSION_GZIP},
    {".bz2", COMPRESSION_BZIP2},
    {".zst", COMPRESSION_ZSTD},
};
#define NSUFFIXES (sizeof(compression_suffixes) / sizeof(compression_suffixes[0]))

enum compression compression_for_path(const char *path)
{
    size_t len = strlen(path);
    for (size_t i = 0; i < NSUFFIXES; i++) {
        size_t n = strlen(compression_suffixes[i].suffix);
        if (len >= n && strcmp(path + len - n, compression_suffixes[i].suffix) == 0)
            return compression_suffixes[i].c;
    }
    return COMPRESSION_NONE;
}

size_t compression_stripped_length(const char *name)
{
    size_t len = strlen(name);
    for (size_t i = 0; i < NSUFFIXES; i++) {
        size_t n = strlen(compression_suffixes[i].suffix);
        if (len > n && strcmp(name + len - n, compression_suffixes[i].suffix) == 0)
            return len - n;
    }
    return len;
}

enum compression compression_detect(const void *head, size_t n)
{
    const unsigned char *p = head;
    if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
        return COMPRESSION_GZIP;
    if (n >= 4 && p[0] == 'B' && p[1] == 'Z' && p[2] == 'h' && p[3] >= '1' && p[3] <= '9')
        return COMPRESSION_BZIP2;
    if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
        return COMPRESSION_ZSTD;
    if (n >= 4 && (p[0] & 0xf0) == 0x50 && p[1] == 0x2a && p[2] == 0x4d && p[3] == 0x18)
        return COMPRESSION_ZSTD;
    return COMPRESSION_NONE;
}

const char *compression_name(enum compression c)
{
    switch (c) {
    case COMPRESSION_NONE:
        return "none";
    case COMPRESSION_GZIP:
        return "gzip";
    case COMPRESSION_BZIP2:
        return "bzip2";
    case COMPRESSION_ZSTD:
        return "zstd";
    }
    return "unknown";
}

static int fail(struct zcookie *c, int err)
{
    if (!c->failed) {
        c->failed = true;
        c->error = err ? err : EIO;
    }
    errno = c->error;
    return -1;
}

/* Hand the first N bytes of c->out to the raw stream. */
static int emit(struct zcookie *c, size_t n)
{
    if (n == 0)
        return 0;
    errno = 0;
    if (fwrite(c->out, 1, n, c->raw) != n)
        return fail(c, errno);
    return 0;
}

static int gzip_feed(struct zcookie *c, const char *buf, size_t size, int flush)
{
    do {
        size_t n = size < CALL_MAX ? size : CALL_MAX;
        c->gz.next_in = (Bytef *)buf;
        c->gz.avail_in = (uInt)n;
        buf += n;
        size -= n;
        int mode = size ? Z_NO_FLUSH : flush;
        do {
            c->gz.next_out = c->out;
            c->gz.avail_out = sizeof(c->out);
            int rc = deflate(&c->gz, mode);
            /* Z_BUF_ERROR only says that there was nothing left to do. */
            if (rc != Z_OK && rc != Z_STREAM_END && rc != Z_BUF_ERROR)
                return fail(c, rc == Z_MEM_ERROR ? ENOMEM : EIO);
            if (emit(c, sizeof(c->out) - c->gz.avail_out) != 0)
                return -1;
        } while (c->gz.avail_out == 0);
    } while (size);
    return 0;
}

static int bzip2_start(struct zcookie *c)
{
    memset(&c->bz, 0, sizeof(c->bz));
    int rc = BZ2_bzCompressInit(&c->bz, BZIP2_LEVEL, 0, 0);
    if (rc != BZ_OK)
        return fail(c, rc == BZ_MEM_ERROR ? ENOMEM : EIO);
    c->bz_open = true;
    return 0;
}

/* End the current bzip2 stream: the only way to get all its bits out. */
static int bzip2_end(struct zcookie *c)
{
    int rc;
    do {
        c->bz.next_out = (char *)c->out;
        c->bz.avail_out = sizeof(c->out);
        rc = BZ2_bzCompress(&c->bz, BZ_FINISH);
        if (rc != BZ_FINISH_OK && rc != BZ_STREAM_END) {
            fail(c, EIO);
            break;
        }
        if (emit(c, sizeof(c->out) - c->bz.avail_out) != 0)
            break;
    } while (rc != BZ_STREAM_END);
    BZ2_bzCompressEnd(&c->bz);
    c->bz_open = false;
    return c->failed ? -1 : 0;
}

static int bzip2_feed(struct zcookie *c, const char *buf, size_t size)
{
    if (!c->bz_open && bzip2_start(c) != 0)
        return -1;
    while (size) {
        size_t n = size < CALL_MAX ? size : CALL_MAX;
        c->bz.next_in = (char *)buf;
        c->bz.avail_in = (unsigned)n;
        buf += n;
        size -= n;
        while (c->bz.avail_in) {
            c->bz.next_out = (char *)c->out;
            c->bz.avail_out = sizeof(c->out);
            if (BZ2_bzCompress(&c->bz, BZ_RUN) != BZ_RUN_OK)
                return fail(c, EIO);
            if (emit(c, sizeof(c->out) - c->bz.avail_out) != 0)
                return -1;
        }
    }
    return bzip2_end(c);
}

static int zstd_feed(struct zcookie *c, const char *buf, size_t size, ZSTD_EndDirective mode)
{
    ZSTD_inBuffer in = {buf, size, 0};
    size_t left;
    do {
        ZSTD_outBuffer o = {c->out, sizeof(c->out), 0};
        left = ZSTD_compressStream2(c->zstd, &o, &in, mode);
        if (ZSTD_isError(left))
            return fail(c, ZSTD_getErrorCode(left) == ZSTD_error_memory_allocation ? ENOMEM : EIO);
        if (emit(c, o.pos) != 0)
            return -1;
    } while (left != 0 || in.pos < in.size);
    return 0;
}

static ssize_t cookie_write(void *cookie, const char *buf, size_t size)
{
    struct zcookie *c = cookie;
    if (c->failed) {
        errno = c->error;
        return 0;
    }
    if (size == 0)
        return 0;
    int rc = -1;
    switch (c->kind) {
    case COMPRESSION_GZIP:
        rc = gzip_feed(c, buf, size, Z_SYNC_FLUSH);
        break;
    case COMPRESSION_BZIP2:
        rc = bzip2_feed(c, buf, size);
        break;
    case COMPRESSION_ZSTD:
        rc = zstd_feed(c, buf, size, ZSTD_e_flush);
        break;
    case COMPRESSION_NONE:
        break;
    }
    errno = 0;
    if (rc == 0 && fflush(c->raw) != 0)
        rc = fail(c, errno);
    if (rc != 0) {
        errno = c->error;
        return 0; /* what stdio takes for "error" */
    }
    return (ssize_t)size;
}

/* Write the end of the compressed stream (trailer, checksum). */
static void finish(struct zcookie *c)
{
    switch (c->kind) {
    case COMPRESSION_GZIP:
        if (!c->failed)
            gzip_feed(c, "", 0, Z_FINISH);
        break;
    case COMPRESSION_BZIP2:
        /* Still open only when nothing at all was written: an empty file
         * must still be a valid bzip2 stream. */
        if (c->bz_open && !c->failed)
            bzip2_end(c);
        break;
    case COMPRESSION_ZSTD:
        if (!c->failed)
            zstd_feed(c, "", 0, ZSTD_e_end);
        break;
    case COMPRESSION_NONE:
        break;
    }
}

static void release(struct zcookie *c)
{
    switch (c->kind) {
    case COMPRESSION_GZIP:
        deflateEnd(&c->gz);
        break;
    case COMPRESSION_BZIP2:
        if (c->bz_open)
            BZ2_bzCompressEnd(&c->bz);
        break;
    case COMPRESSION_ZSTD:
        ZSTD_freeCCtx(c->zstd);
        break;
    case COMPRESSION_NONE:
        break;
    }
    free(c->stdio_buf);
    free(c);
}

static int cookie_close(void *cookie)
{
    struct zcookie *c = cookie;
    finish(c);
    errno = 0;
    if (fclose(c->raw) != 0)
        fail(c, errno);
    bool failed = c->failed;
    int err = c->error;
    /* stdio does not touch a buffer it did not allocate after this. */
    release(c);
    if (failed) {
        errno = err;
        return -1;
    }
    return 0;
}

static int init_compressor(struct zcookie *c)
{
    switch (c->kind) {
    case COMPRESSION_GZIP:
        /* windowBits 15 + 16: a gzip header and trailer, not zlib's. */
        if (deflateInit2(&c->gz, GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
            return -1;
        return 0;
    case COMPRESSION_BZIP2:
        return bzip2_start(c);
    case COMPRESSION_ZSTD:
        c->zstd = ZSTD_createCCtx();
        if (!c->zstd)
            return -1;
        if (ZSTD_isError(ZSTD_CCtx_setParameter(c->zstd, ZSTD_c_compressionLevel, ZSTD_LEVEL)) ||
            ZSTD_isError(ZSTD_CCtx_setParameter(c->zstd, ZSTD_c_checksumFlag, 1))) {
            ZSTD_freeCCtx(c->zstd);
            c->zstd = NULL;
            return -1;
        }
        return 0;
    case COMPRESSION_NONE:
        break;
    }
    return -1;
}

static size_t stdio_buffer_size(enum compression c)
{
    switch (c) {
    case COMPRESSION_BZIP2:
        /* A little under one 900 kB block, so a full buffer is one block. */
        return 896 * 1024;
    case COMPRESSION_ZSTD:
        return ZSTD_CStreamInSize();
    default:
        return 64 * 1024;
    }
}

FILE *compress_open(FILE *raw, enum compression kind)
{
    if (kind == COMPRESSION_NONE)
        return raw;
    if (kind != COMPRESSION_GZIP && kind != COMPRESSION_BZIP2 && kind != COMPRESSION_ZSTD) {
        errno = EINVAL;
        return NULL;
    }
    struct zcookie *c = calloc(1, sizeof(*c));
    if (!c) {
        errno = ENOMEM;
        return NULL;
    }
    c->raw = raw;
    c->kind = kind;
    size_t bufsize = stdio_buffer_size(kind);
    c->stdio_buf = malloc(bufsize);
    if (!c->stdio_buf || init_compressor(c) != 0) {
        free(c->stdio_buf);
        free(c);
        errno = ENOMEM;
        return NULL;
    }
    cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
    FILE *f = fopencookie(c, "w", io);
    if (!f) {
        release(c);
        errno = ENOMEM;
        return NULL;
    }
    /* Cannot fail for a fresh stream; if it did, stdio's own smaller buffer
     * would only mean more frequent flushes, never wrong output. */
    setvbuf(f, c->stdio_buf, _IOFBF, bufsize);
    return f;
}
