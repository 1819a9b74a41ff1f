/*
 * instream.c - see instream.h.
 *
 * Two buffers.  The "source" hands out compressed bytes in 64 kB pieces,
 * read from a FILE or pointing into memory.  The "window" holds decoded
 * bytes not yet consumed: [start, ready) may be delivered, [ready, end) is
 * a run of zero bytes held back until something else follows it (or the
 * input ends cleanly), so that a run longer than the limit is refused
 * before anyone sees it.  Each format's step feeds the first into the
 * second, one decoder call at a time, and tells a clean end from a stream
 * that stops mid-way: at the end of input a stream that is still open and
 * makes no more progress was cut short.
 */
#include "util/instream.h"
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
/* Compressed input that decodes to more than RATIO_MAX times its size, past
 * RATIO_FLOOR bytes, is a decompression bomb: profiles compress 5 to 50
 * times (a 30 KB bomb decoded to 6.3 GB, 200,000 times). */
#define RATIO_MAX 256u
#define RATIO_FLOOR ((uint64_t)64 << 20)

struct instream {
    char *name;
    /* The source: a FILE, or MEM. */
    FILE *f;
    bool own_f;
    const unsigned char *mem;
    size_t mem_len, mem_pos;
    unsigned char *chunk;
    const unsigned char *next; /* unconsumed input */
    size_t avail;
    uint64_t in_offset; /* input bytes consumed so far */
    bool eof;           /* nothing more will come after NEXT/AVAIL */
    size_t file_size;

    /* The decoder. */
    bool started;
    enum compression c;
    z_stream z;
    bool z_open;
    bz_stream bz;
    bool bz_open;
    ZSTD_DCtx *zs;
    bool in_member;      /* gzip/bzip2: inside a member or stream */
    size_t zstd_pending; /* zstd: the input size libzstd wants next, 0 between frames */

    /* The window. */
    unsigned char *buf;
    size_t cap, start, ready, end;
    uint64_t out_offset; /* decompressed offset of buf[start] */
    size_t zero_max;     /* 0: no limit */
    unsigned ratio_max;  /* decoded bytes per compressed byte past RATIO_FLOOR; 0: no limit */

    enum instream_end finish; /* how the decoded data ends, once known */
    char *error;
};

/* --- the source ----------------------------------------------------------- */

/* Make AVAIL non-zero unless the input is exhausted.  -1 on a read error. */
static int refill(struct instream *s)
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
        if (ferror(s->f))
            return -1;
        s->eof = true;
    }
    s->next = s->chunk;
    s->avail = got;
    return 0;
}

static void take_input(struct instream *s, size_t n)
{
    if (!n)
        return; /* NEXT may be a null pointer for empty input */
    s->next += n;
    s->avail -= n;
    s->in_offset += n;
}

/* --- how the data ends ---------------------------------------------------- */

static void finish(struct instream *s, enum instream_end how, char *error)
{
    if (s->finish != INSTREAM_MORE) {
        free(error);
        return;
    }
    s->finish = how;
    s->error = error;
}

static void read_failed(struct instream *s)
{
    finish(s, INSTREAM_FAILED, xasprintf("%s: cannot read: %s", s->name, strerror(errno)));
}

static void damaged(struct instream *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The compressed input is damaged at the current offset. */
static void damaged(struct instream *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *what = NULL;
    if (vasprintf(&what, fmt, ap) < 0)
        what = NULL;
    va_end(ap);
    char *msg = xasprintf("%s: offset %llu: %s", s->name, (unsigned long long)s->in_offset,
                          what ? what : "damaged");
    free(what);
    finish(s, INSTREAM_DAMAGED, msg);
}

/* A decoder call that consumed and produced nothing: at the end of input
 * the stream was cut short; with input left the decoder is stuck, which
 * no valid stream does (and looping on it would never end). */
static void stalled(struct instream *s)
{
    if (s->avail)
        damaged(s, "%s decoder makes no progress", compression_name(s->c));
    else
        damaged(s, "%s data ends before the end of its stream", compression_name(s->c));
}

/* --- one step per format: decode into OUT, at most ROOM bytes ------------- */

static size_t step_plain(struct instream *s, unsigned char *out, size_t room)
{
    if (s->avail) {
        size_t n = s->avail < room ? s->avail : room;
        memcpy(out, s->next, n);
        take_input(s, n);
        return n;
    }
    if (s->f && !s->eof) {
        /* Straight into the window: a plain file is copied once. */
        size_t got = fread(out, 1, room, s->f);
        s->in_offset += got;
        if (got < room) {
            if (ferror(s->f)) {
                read_failed(s);
                return got;
            }
            s->eof = true;
        }
        if (got)
            return got;
    }
    if (refill(s) != 0) {
        read_failed(s);
        return 0;
    }
    if (!s->avail)
        finish(s, INSTREAM_CLEAN, NULL);
    return 0;
}

static size_t step_gzip(struct instream *s, unsigned char *out, size_t room)
{
    for (;;) {
        if (refill(s) != 0) {
            read_failed(s);
            return 0;
        }
        if (!s->avail && !s->in_member) {
            finish(s, INSTREAM_CLEAN, NULL); /* a clean end after the last member */
            return 0;
        }
        size_t in = s->avail < CALL_MAX ? s->avail : CALL_MAX;
        s->z.next_in = (Bytef *)s->next;
        s->z.avail_in = (uInt)in;
        s->z.next_out = out;
        s->z.avail_out = (uInt)room;
        int zr = inflate(&s->z, Z_NO_FLUSH);
        size_t used = in - s->z.avail_in, made = room - s->z.avail_out;
        take_input(s, used);
        s->in_member = s->in_member || used > 0;
        if (zr == Z_STREAM_END) {
            /* Another member may follow, as gzip -d reads them. */
            s->in_member = false;
            inflateReset(&s->z);
        } else if (zr == Z_OK || zr == Z_BUF_ERROR) {
            if (!used && !made)
                stalled(s);
        } else {
            damaged(s, "corrupt gzip data (%s)", s->z.msg ? s->z.msg : "zlib error");
        }
        if (made || s->finish != INSTREAM_MORE)
            return made;
    }
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

static size_t step_bzip2(struct instream *s, unsigned char *out, size_t room)
{
    for (;;) {
        if (refill(s) != 0) {
            read_failed(s);
            return 0;
        }
        if (!s->avail && !s->in_member) {
            finish(s, INSTREAM_CLEAN, NULL);
            return 0;
        }
        size_t in = s->avail < CALL_MAX ? s->avail : CALL_MAX;
        s->bz.next_in = (char *)s->next;
        s->bz.avail_in = (unsigned)in;
        s->bz.next_out = (char *)out;
        s->bz.avail_out = (unsigned)room;
        int br = BZ2_bzDecompress(&s->bz);
        size_t used = in - s->bz.avail_in, made = room - s->bz.avail_out;
        take_input(s, used);
        s->in_member = s->in_member || used > 0;
        if (br == BZ_STREAM_END) {
            /* bzip2 -d reads concatenated streams, each with its own state. */
            s->in_member = false;
            BZ2_bzDecompressEnd(&s->bz);
            memset(&s->bz, 0, sizeof(s->bz));
            s->bz_open = BZ2_bzDecompressInit(&s->bz, 0, 0) == BZ_OK;
            if (!s->bz_open)
                damaged(s, "cannot start bzip2 decompression: out of memory");
        } else if (br == BZ_OK) {
            /* libbz2 reports no error for a stream that just stops. */
            if (!used && !made)
                stalled(s);
        } else {
            damaged(s, "corrupt bzip2 data (%s)", bzip2_error(br));
        }
        if (made || s->finish != INSTREAM_MORE)
            return made;
    }
}

static size_t step_zstd(struct instream *s, unsigned char *out, size_t room)
{
    /* zstd_pending is non-zero while a frame is incomplete: then it is the
     * input size libzstd wants next (a block header and block, or the
     * checksum).  Feeding it exactly that much locates damage: on an error
     * libzstd does not advance in.pos, so the offset is the start of what
     * we fed.  Between frames (0), a frame header's first bytes.  libzstd
     * moves on to the next frame, or skips a skippable one, by itself. */
    for (;;) {
        if (refill(s) != 0) {
            read_failed(s);
            return 0;
        }
        if (!s->avail && !s->zstd_pending) {
            finish(s, INSTREAM_CLEAN, NULL);
            return 0;
        }
        size_t want = s->zstd_pending ? s->zstd_pending : ZSTD_FRAME_START;
        ZSTD_inBuffer in = {s->next, s->avail < want ? s->avail : want, 0};
        ZSTD_outBuffer o = {out, room, 0};
        size_t zr = ZSTD_decompressStream(s->zs, &o, &in);
        take_input(s, in.pos);
        if (ZSTD_isError(zr)) {
            damaged(s, "corrupt zstd data (%s)", ZSTD_getErrorName(zr));
            return o.pos;
        }
        s->zstd_pending = zr;
        if (zr && !in.pos && !o.pos)
            stalled(s);
        if (o.pos || s->finish != INSTREAM_MORE)
            return o.pos;
    }
}

/* Recognise the compression from the first piece and set up its decoder. */
static void start(struct instream *s)
{
    s->started = true;
    if (refill(s) != 0) {
        read_failed(s);
        return;
    }
    s->c = compression_detect(s->next, s->avail);
    switch (s->c) {
    case COMPRESSION_NONE:
        break;
    case COMPRESSION_GZIP:
        /* 15 + 16: gzip framing only, with its CRC and length checked. */
        s->z_open = inflateInit2(&s->z, 15 + 16) == Z_OK;
        if (!s->z_open)
            damaged(s, "cannot start gzip decompression: out of memory");
        break;
    case COMPRESSION_BZIP2:
        s->bz_open = BZ2_bzDecompressInit(&s->bz, 0, 0) == BZ_OK;
        if (!s->bz_open)
            damaged(s, "cannot start bzip2 decompression: out of memory");
        break;
    case COMPRESSION_ZSTD:
        s->zs = ZSTD_createDCtx();
        if (!s->zs)
            damaged(s, "cannot start zstd decompression: out of memory");
        break;
    }
}

/* --- the window ----------------------------------------------------------- */

static void describe_size(size_t n, char *buf, size_t len)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", n >> 20);
    else
        snprintf(buf, len, "%zu bytes", n);
}

/* Account for the bytes just decoded into [FROM, end): everything up to
 * the last non-zero byte may be delivered; a trailing run of zeros waits,
 * and is damage once it is longer than the limit. */
static void hold_zero_run(struct instream *s, size_t from)
{
    if (!s->zero_max) {
        s->ready = s->end;
        return;
    }
    size_t i = s->end;
    while (i > from && s->buf[i - 1] == 0)
        i--;
    if (i > from)
        s->ready = i;
    if (s->end - s->ready <= s->zero_max)
        return;
    if (s->finish == INSTREAM_DAMAGED || s->finish == INSTREAM_FAILED)
        return;                /* the decoder's own damage came first */
    s->finish = INSTREAM_MORE; /* a clean end does not excuse the run */
    char size[32];
    describe_size(s->zero_max, size, sizeof(size));
    uint64_t at = s->out_offset + (s->ready - s->start);
    char *msg = xasprintf(
        "%s: %soffset %llu: more than %s of zero bytes in a row, which no profile "
        "holds (an endless device, or a decompression bomb?)",
        s->name, s->c == COMPRESSION_NONE ? "" : "decompressed ", (unsigned long long)at, size);
    finish(s, INSTREAM_DAMAGED, msg);
    s->end = s->ready;
}

/* Memory must follow what a file holds, not what a decompressor makes of
 * it: an input that decodes out of all proportion is refused as failed
 * (no reader keeps a prefix of it). */
static void refuse_bomb(struct instream *s)
{
    uint64_t decoded = s->out_offset + (s->end - s->start);
    if (s->c == COMPRESSION_NONE || !s->ratio_max || decoded <= RATIO_FLOOR ||
        decoded / s->ratio_max <= s->in_offset || s->finish == INSTREAM_FAILED)
        return;
    s->finish = INSTREAM_MORE; /* the decoder's own verdict does not stand */
    free(s->error);
    s->error = NULL;
    finish(s, INSTREAM_FAILED,
           xasprintf("%s: offset %llu: %s data decompresses to more than %u times its size "
                     "(%llu bytes from %llu): a decompression bomb, not a profile",
                     s->name, (unsigned long long)s->in_offset, compression_name(s->c),
                     s->ratio_max, (unsigned long long)decoded, (unsigned long long)s->in_offset));
    s->ready = s->end = s->start;
}

/* Decode some more into the window, or learn that nothing more comes. */
static void produce(struct instream *s)
{
    if (!s->started)
        start(s);
    if (s->finish != INSTREAM_MORE)
        return;
    if (s->cap - s->end < CHUNK && s->start) {
        memmove(s->buf, s->buf + s->start, s->end - s->start);
        s->ready -= s->start;
        s->end -= s->start;
        s->start = 0;
    }
    if (s->cap - s->end < CHUNK) {
        size_t want = s->cap ? 2 * s->cap : CHUNK;
        if (want < s->end + CHUNK)
            want = s->end + CHUNK;
        s->buf = xrealloc(s->buf, want);
        s->cap = want;
    }
    size_t room = s->cap - s->end < CALL_MAX ? s->cap - s->end : CALL_MAX;
    size_t from = s->end, made = 0;
    switch (s->c) {
    case COMPRESSION_NONE:
        made = step_plain(s, s->buf + s->end, room);
        break;
    case COMPRESSION_GZIP:
        made = step_gzip(s, s->buf + s->end, room);
        break;
    case COMPRESSION_BZIP2:
        made = step_bzip2(s, s->buf + s->end, room);
        break;
    case COMPRESSION_ZSTD:
        made = step_zstd(s, s->buf + s->end, room);
        break;
    }
    s->end += made;
    hold_zero_run(s, from);
    refuse_bomb(s);
    /* At the end, zeros that were waiting are data after all. */
    if (s->finish != INSTREAM_MORE)
        s->ready = s->end;
}

/* --- the interface -------------------------------------------------------- */

static struct instream *new_stream(const char *name)
{
    struct instream *s = xcalloc(1, sizeof(*s));
    s->name = xstrdup(name);
    s->ratio_max = RATIO_MAX;
    return s;
}

struct instream *instream_open(const char *path)
{
    bool is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rbe");
    if (!f) {
        pt_err("%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    struct instream *s = new_stream(is_stdin ? "<stdin>" : path);
    s->f = f;
    s->own_f = !is_stdin;
    s->chunk = xmalloc(CHUNK);
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        (unsigned long long)st.st_size < SIZE_MAX - 1)
        s->file_size = (size_t)st.st_size;
    return s;
}

struct instream *instream_open_memory(const char *name, const void *data, size_t len)
{
    struct instream *s = new_stream(name);
    s->mem = data;
    s->mem_len = len;
    s->file_size = len;
    return s;
}

struct instream *instream_open_memory_plain(const char *name, const void *data, size_t len)
{
    struct instream *s = instream_open_memory(name, data, len);
    s->started = true; /* COMPRESSION_NONE, whatever the first bytes */
    return s;
}

void instream_close(struct instream *s)
{
    if (!s)
        return;
    if (s->z_open)
        inflateEnd(&s->z);
    if (s->bz_open)
        BZ2_bzDecompressEnd(&s->bz);
    ZSTD_freeDCtx(s->zs);
    if (s->own_f)
        fclose(s->f);
    free(s->chunk);
    free(s->buf);
    free(s->error);
    free(s->name);
    free(s);
}

void instream_limit_ratio(struct instream *s, unsigned max)
{
    s->ratio_max = max;
}

void instream_limit_zero_run(struct instream *s, size_t max)
{
    s->zero_max = max;
    if (!max || s->finish != INSTREAM_MORE) {
        s->ready = s->end;
        return;
    }
    /* Zeros decoded but not consumed are held back again. */
    s->ready = s->start;
    hold_zero_run(s, s->start);
}

size_t instream_peek(struct instream *s, size_t n, const unsigned char **data)
{
    while (s->ready - s->start < n && s->finish == INSTREAM_MORE)
        produce(s);
    size_t have = s->ready - s->start;
    *data = s->buf ? s->buf + s->start : (const unsigned char *)"";
    return have < n ? have : n;
}

void instream_consume(struct instream *s, size_t n)
{
    if (n > s->ready - s->start)
        n = s->ready - s->start;
    s->start += n;
    s->out_offset += n;
}

size_t instream_read(struct instream *s, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        if (s->ready == s->start) {
            if (s->finish != INSTREAM_MORE)
                break;
            produce(s);
            continue;
        }
        size_t k = s->ready - s->start < n - got ? s->ready - s->start : n - got;
        memcpy((unsigned char *)buf + got, s->buf + s->start, k);
        instream_consume(s, k);
        got += k;
    }
    return got;
}

uint64_t instream_skip(struct instream *s, uint64_t n)
{
    uint64_t done = 0;
    while (done < n) {
        if (s->ready == s->start) {
            if (s->finish != INSTREAM_MORE)
                break;
            produce(s);
            continue;
        }
        size_t k = s->ready - s->start < n - done ? s->ready - s->start : (size_t)(n - done);
        instream_consume(s, k);
        done += k;
    }
    return done;
}

uint64_t instream_offset(const struct instream *s)
{
    return s->out_offset;
}

uint64_t instream_input_offset(const struct instream *s)
{
    return s->in_offset;
}

enum instream_end instream_end(const struct instream *s)
{
    return s->finish;
}

const char *instream_error(const struct instream *s)
{
    return s->error;
}

const char *instream_name(const struct instream *s)
{
    return s->name;
}

enum compression instream_compression(struct instream *s)
{
    if (!s->started)
        start(s);
    return s->c;
}

size_t instream_size_hint(const struct instream *s)
{
    return s->started && s->c == COMPRESSION_NONE ? s->file_size : 0;
}
