/*
 * slurp.c - see slurp.h.
 *
 * One decoding path serves files, stdin and memory: a "source" hands out
 * compressed bytes in 64 kB pieces (read from a FILE, or pointing into
 * memory) and a "sink" is the growing output buffer that refuses to grow
 * past the caller's limit.  Each format's loop feeds the first into the
 * second and tells a clean end from a stream that stops mid-way: at the end
 * of input a stream that is still open and makes no more progress was cut
 * short.
 */
#include "util/slurp.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <bzlib.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>
#include <zstd.h>

#define CHUNK (64 * 1024)
/* Bytes per library call: zlib and libbz2 count in unsigned int. */
#define CALL_MAX ((size_t)1 << 30)
/* Bytes that tell libzstd how large a frame header is: magic and
 * descriptor (ZSTD_FRAMEHEADERSIZE_PREFIX, which is not public API). */
#define ZSTD_FRAME_START 5

struct source {
    const char *name;
    FILE *f; /* NULL: the input is MEM */
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    unsigned char *chunk;
    const unsigned char *next; /* unconsumed input */
    size_t avail;
    size_t offset; /* input bytes consumed so far */
    bool eof;      /* nothing more will come after NEXT/AVAIL */
};

struct sink {
    unsigned char *buf;
    size_t len;
    size_t cap; /* allocated; one byte is always kept for the final NUL */
    size_t max;
};

/* Make AVAIL non-zero unless the input is exhausted.  -1 after reporting. */
static int refill(struct source *s)
{
    if (s->avail || s->eof)
        return 0;
    if (!s->f) {
        /* The same pieces a file would give, so both take the same path. */
        size_t n = s->mem_len - s->mem_pos < CHUNK ? s->mem_len - s->mem_pos : CHUNK;
        s->next = n ? s->mem + s->mem_pos : s->mem;
        s->avail = n;
        s->mem_pos += n;
        s->eof = s->mem_pos == s->mem_len;
        return 0;
    }
    size_t got = fread(s->chunk, 1, CHUNK, s->f);
    if (got < CHUNK) {
        if (ferror(s->f)) {
            pt_err("%s: cannot read: %s", s->name, strerror(errno));
            return -1;
        }
        s->eof = true;
    }
    s->next = s->chunk;
    s->avail = got;
    return 0;
}

static void consume(struct source *s, size_t n)
{
    if (!n)
        return; /* NEXT may be a null pointer for empty input */
    s->next += n;
    s->avail -= n;
    s->offset += n;
}

/* Room for at least one more byte of content, or false once the content
 * already exceeds the limit.  Content may reach MAX + 1 bytes so that
 * exceeding the limit is seen without decoding further. */
static bool sink_room(struct sink *k)
{
    if (k->len > k->max)
        return false;
    if (k->cap - 1 > k->len)
        return true;
    size_t hard = k->max + 2;
    size_t want = k->cap < CHUNK ? CHUNK : k->cap;
    want = want > hard / 2 ? hard : want * 2;
    k->buf = xrealloc(k->buf, want);
    k->cap = want;
    return true;
}

static size_t sink_space(const struct sink *k)
{
    size_t n = k->cap - 1 - k->len;
    return n < CALL_MAX ? n : CALL_MAX;
}

static int too_large(const struct source *s, const struct sink *k, enum compression c)
{
    if (c == COMPRESSION_NONE)
        pt_err("%s: larger than the limit of %zu bytes", s->name, k->max);
    else
        pt_err("%s: offset %zu: %s data decompresses to more than the limit of %zu bytes", s->name,
               s->offset, compression_name(c), k->max);
    return -1;
}

/* The input is damaged at the current offset.  With something decoded this
 * is a truncated result; with nothing it is an error. */
static int damaged(struct slurp *out, const struct source *s, const struct sink *k, const char *fmt,
                   ...) __attribute__((format(printf, 4, 5)));

static int damaged(struct slurp *out, const struct source *s, const struct sink *k, const char *fmt,
                   ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = NULL;
    if (vasprintf(&what, fmt, ap) < 0)
        what = NULL;
    va_end(ap);
    char *msg = xasprintf("%s: offset %zu: %s", s->name, s->offset, what ? what : "damaged");
    free(what);
    if (k->len == 0) {
        pt_err("%s", msg);
        free(msg);
        return -1;
    }
    out->truncated = true;
    out->error = msg;
    return 0;
}

/* A decoder call that consumed and produced nothing: at the end of input
 * the stream was cut short; with input left the decoder is stuck, which
 * no valid stream does (and looping on it would never end). */
static int stalled(struct slurp *out, const struct source *s, const struct sink *k)
{
    if (s->avail)
        return damaged(out, s, k, "%s decoder makes no progress",
                       compression_name(out->compression));
    return damaged(out, s, k, "%s data ends before the end of its stream",
                   compression_name(out->compression));
}

static int copy_plain(struct source *s, struct sink *k)
{
    for (;;) {
        if (refill(s) != 0)
            return -1;
        if (!s->avail)
            return 0;
        if (!sink_room(k))
            return too_large(s, k, COMPRESSION_NONE);
        size_t n = sink_space(k);
        if (n > s->avail)
            n = s->avail;
        memcpy(k->buf + k->len, s->next, n);
        k->len += n;
        consume(s, n);
    }
}

static int inflate_gzip(struct source *s, struct sink *k, struct slurp *out)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    /* 15 + 16: gzip framing only, with its CRC and length checked. */
    if (inflateInit2(&z, 15 + 16) != Z_OK) {
        pt_err("%s: cannot start gzip decompression: out of memory", s->name);
        return -1;
    }
    bool in_member = false;
    int rc = 0;
    for (;;) {
        if ((rc = refill(s)) != 0)
            break;
        if (!s->avail && !in_member)
            break; /* a clean end after the last member */
        if (!sink_room(k)) {
            rc = too_large(s, k, COMPRESSION_GZIP);
            break;
        }
        size_t in = s->avail < CALL_MAX ? s->avail : CALL_MAX;
        size_t room = sink_space(k);
        z.next_in = (Bytef *)s->next;
        z.avail_in = (uInt)in;
        z.next_out = k->buf + k->len;
        z.avail_out = (uInt)room;
        int zr = inflate(&z, Z_NO_FLUSH);
        size_t used = in - z.avail_in, made = room - z.avail_out;
        consume(s, used);
        k->len += made;
        in_member = in_member || used > 0;
        if (zr == Z_STREAM_END) {
            /* Another member may follow, as gzip -d reads them. */
            in_member = false;
            inflateReset(&z);
        } else if (zr == Z_OK || zr == Z_BUF_ERROR) {
            if (used || made)
                continue;
            rc = stalled(out, s, k);
            break;
        } else {
            rc = damaged(out, s, k, "corrupt gzip data (%s)", z.msg ? z.msg : "zlib error");
            break;
        }
    }
    inflateEnd(&z);
    return rc;
}

static const char *bzip2_error(int rc)
{
    switch (rc) {
    case BZ_DATA_ERROR_MAGIC:
        return "not a bzip2 stream";
    case BZ_DATA_ERROR:
        return "checksum or structure error";
    case BZ_MEM_ERROR:
        return "out of memory";
    default:
        return "libbz2 error";
    }
}

static int decompress_bzip2(struct source *s, struct sink *k, struct slurp *out)
{
    bz_stream bz;
    memset(&bz, 0, sizeof(bz));
    if (BZ2_bzDecompressInit(&bz, 0, 0) != BZ_OK) {
        pt_err("%s: cannot start bzip2 decompression: out of memory", s->name);
        return -1;
    }
    bool in_stream = false;
    int rc = 0;
    for (;;) {
        if ((rc = refill(s)) != 0)
            break;
        if (!s->avail && !in_stream)
            break;
        if (!sink_room(k)) {
            rc = too_large(s, k, COMPRESSION_BZIP2);
            break;
        }
        size_t in = s->avail < CALL_MAX ? s->avail : CALL_MAX;
        size_t room = sink_space(k);
        bz.next_in = (char *)s->next;
        bz.avail_in = (unsigned)in;
        bz.next_out = (char *)k->buf + k->len;
        bz.avail_out = (unsigned)room;
        int br = BZ2_bzDecompress(&bz);
        size_t used = in - bz.avail_in, made = room - bz.avail_out;
        consume(s, used);
        k->len += made;
        in_stream = in_stream || used > 0;
        if (br == BZ_STREAM_END) {
            /* bzip2 -d reads concatenated streams, each with its own state. */
            in_stream = false;
            BZ2_bzDecompressEnd(&bz);
            memset(&bz, 0, sizeof(bz));
            if (BZ2_bzDecompressInit(&bz, 0, 0) != BZ_OK) {
                pt_err("%s: cannot start bzip2 decompression: out of memory", s->name);
                return -1;
            }
        } else if (br == BZ_OK) {
            /* libbz2 reports no error for a stream that just stops. */
            if (used || made)
                continue;
            rc = stalled(out, s, k);
            break;
        } else {
            rc = damaged(out, s, k, "corrupt bzip2 data (%s)", bzip2_error(br));
            break;
        }
    }
    BZ2_bzDecompressEnd(&bz);
    return rc;
}

static int decompress_zstd(struct source *s, struct sink *k, struct slurp *out)
{
    ZSTD_DCtx *z = ZSTD_createDCtx();
    if (!z) {
        pt_err("%s: cannot start zstd decompression: out of memory", s->name);
        return -1;
    }
    /* Non-zero while a frame is incomplete: then it is the input size
     * libzstd wants next (a block header and block, or the checksum).
     * Feeding it exactly that much locates damage: on an error libzstd
     * does not advance in.pos, so the offset is the start of what we fed.
     * Between frames (0), a frame header's first bytes.  libzstd moves on
     * to the next frame, or skips a skippable one, by itself. */
    size_t pending = 0;
    int rc = 0;
    for (;;) {
        if ((rc = refill(s)) != 0)
            break;
        if (!s->avail && !pending)
            break;
        if (!sink_room(k)) {
            rc = too_large(s, k, COMPRESSION_ZSTD);
            break;
        }
        size_t want = pending ? pending : ZSTD_FRAME_START;
        ZSTD_inBuffer in = {s->next, s->avail < want ? s->avail : want, 0};
        ZSTD_outBuffer o = {k->buf + k->len, k->cap - 1 - k->len, 0};
        size_t zr = ZSTD_decompressStream(z, &o, &in);
        consume(s, in.pos);
        k->len += o.pos;
        if (ZSTD_isError(zr)) {
            rc = damaged(out, s, k, "corrupt zstd data (%s)", ZSTD_getErrorName(zr));
            break;
        }
        pending = zr;
        if (zr && !in.pos && !o.pos) {
            rc = stalled(out, s, k);
            break;
        }
    }
    ZSTD_freeDCtx(z);
    return rc;
}

static int slurp_source(struct source *s, size_t max_len, size_t hint, struct slurp *out)
{
    memset(out, 0, sizeof(*out));
    if (max_len > SIZE_MAX - 2)
        max_len = SIZE_MAX - 2;
    struct sink k = {.max = max_len};
    k.cap = hint < CHUNK ? CHUNK : hint;
    if (k.cap > max_len + 2)
        k.cap = max_len + 2;
    k.buf = xmalloc(k.cap);

    int rc = refill(s);
    if (rc == 0) {
        out->compression = compression_detect(s->next, s->avail);
        switch (out->compression) {
        case COMPRESSION_NONE:
            rc = copy_plain(s, &k);
            break;
        case COMPRESSION_GZIP:
            rc = inflate_gzip(s, &k, out);
            break;
        case COMPRESSION_BZIP2:
            rc = decompress_bzip2(s, &k, out);
            break;
        case COMPRESSION_ZSTD:
            rc = decompress_zstd(s, &k, out);
            break;
        }
    }
    if (rc == 0 && k.len > k.max)
        rc = too_large(s, &k, out->compression);
    if (rc != 0) {
        free(k.buf);
        free(out->error);
        memset(out, 0, sizeof(*out));
        return -1;
    }
    k.buf[k.len] = '\0';
    out->data = k.buf;
    out->len = k.len;
    return 0;
}

int slurp_path(const char *path, size_t max_len, struct slurp *out)
{
    bool is_stdin = strcmp(path, "-") == 0;
    struct source s = {.name = is_stdin ? "<stdin>" : path};
    s.f = is_stdin ? stdin : fopen(path, "rbe");
    if (!s.f) {
        memset(out, 0, sizeof(*out));
        pt_err("%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    /* A regular file's size is a good first guess when it is not compressed. */
    size_t hint = 0;
    struct stat st;
    if (fstat(fileno(s.f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (unsigned long long)st.st_size < SIZE_MAX - 1)
        hint = (size_t)st.st_size + 1;
    s.chunk = xmalloc(CHUNK);
    int rc = slurp_source(&s, max_len, hint, out);
    if (rc == 0 && out->compression != COMPRESSION_NONE)
        pt_debug("%s: %s-compressed, %zu bytes decompressed", s.name,
                 compression_name(out->compression), out->len);
    free(s.chunk);
    if (!is_stdin)
        fclose(s.f);
    return rc;
}

int slurp_buffer_decompress(const char *name, const void *data, size_t len, size_t max_len,
                            struct slurp *out)
{
    struct source s = {.name = name, .mem = data, .mem_len = len};
    bool plain = compression_detect(data, len) == COMPRESSION_NONE;
    return slurp_source(&s, max_len, plain ? len + 1 : 0, out);
}

void slurp_free(struct slurp *s)
{
    if (!s)
        return;
    free(s->data);
    free(s->error);
    memset(s, 0, sizeof(*s));
}
