/*
 * slurp.c - see slurp.h.
 *
 * The decoding is instream.h's; slurp only collects what it delivers into
 * one buffer that grows as needed and refuses to grow past the caller's
 * limit.
 */
#include "util/slurp.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK (64 * 1024)

static int too_large(struct instream *in, size_t max)
{
    enum compression c = instream_compression(in);
    if (c == COMPRESSION_NONE)
        pt_err("%s: larger than the limit of %zu bytes", instream_name(in), max);
    else
        pt_err("%s: offset %llu: %s data decompresses to more than the limit of %zu bytes",
               instream_name(in), (unsigned long long)instream_input_offset(in),
               compression_name(c), max);
    return -1;
}

int slurp_stream(struct instream *in, size_t max_len, struct slurp *out)
{
    memset(out, 0, sizeof(*out));
    if (max_len > SIZE_MAX - 2)
        max_len = SIZE_MAX - 2;
    out->compression = instream_compression(in);
    /* A regular file's size is a good first guess when it is not compressed. */
    size_t cap = instream_size_hint(in) + 1;
    cap = cap < CHUNK ? CHUNK : cap;
    cap = cap > max_len + 2 ? max_len + 2 : cap;
    unsigned char *buf = xmalloc(cap);
    size_t len = 0;
    int rc = 0;
    for (;;) {
        /* Content may reach MAX + 1 bytes so that exceeding the limit is
         * seen without decoding further; one byte stays for the NUL. */
        if (len + 1 == cap) {
            if (len > max_len) {
                rc = too_large(in, max_len);
                break;
            }
            cap = cap > (max_len + 2) / 2 ? max_len + 2 : 2 * cap;
            buf = xrealloc(buf, cap);
        }
        size_t got = instream_read(in, buf + len, cap - 1 - len);
        len += got;
        if (!got)
            break;
    }
    if (rc == 0 && len > max_len)
        rc = too_large(in, max_len);
    if (rc == 0) {
        switch (instream_end(in)) {
        case INSTREAM_DAMAGED:
            if (len) {
                out->truncated = true;
                out->error = xstrdup(instream_error(in));
                break;
            }
            /* Damage before any byte was decoded: nothing to keep. */
            /* fall through */
        case INSTREAM_FAILED:
            pt_err("%s", instream_error(in));
            rc = -1;
            break;
        default:
            break;
        }
    }
    if (rc != 0) {
        free(buf);
        free(out->error);
        memset(out, 0, sizeof(*out));
        return -1;
    }
    buf[len] = '\0';
    out->data = buf;
    out->len = len;
    return 0;
}

int slurp_path(const char *path, size_t max_len, struct slurp *out)
{
    struct instream *in = instream_open(path);
    if (!in) {
        memset(out, 0, sizeof(*out));
        return -1;
    }
    int rc = slurp_stream(in, max_len, out);
    if (rc == 0 && out->compression != COMPRESSION_NONE)
        pt_debug("%s: %s-compressed, %zu bytes decompressed", instream_name(in),
                 compression_name(out->compression), out->len);
    instream_close(in);
    return rc;
}

int slurp_buffer_decompress(const char *name, const void *data, size_t len, size_t max_len,
                            struct slurp *out)
{
    struct instream *in = instream_open_memory(name, data, len);
    int rc = slurp_stream(in, max_len, out);
    instream_close(in);
    return rc;
}

void slurp_free(struct slurp *s)
{
    if (!s)
        return;
    free(s->data);
    free(s->error);
    memset(s, 0, sizeof(*s));
}
