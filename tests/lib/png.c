/* png.c - see png.h: a small PNG decoder for screenshots. */
#include "png.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Past this a screenshot is not what we took (keeps allocations sane). */
#define MAX_SIDE 16384

static bool fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static bool fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return false;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int paeth(int a, int b, int c)
{
    int p = a + b - c;
    int pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
    if (pa <= pb && pa <= pc)
        return a;
    return pb <= pc ? b : c;
}

/* Undo the filters of RAW (height rows of 1 + stride bytes) in place. */
static bool unfilter(uint8_t *raw, uint32_t height, size_t stride, size_t bpp, char *err,
                     size_t errlen)
{
    uint8_t *prev = NULL;
    for (uint32_t y = 0; y < height; y++) {
        uint8_t *row = raw + (size_t)y * (stride + 1);
        uint8_t type = row[0];
        uint8_t *px = row + 1;
        for (size_t i = 0; i < stride; i++) {
            int a = i >= bpp ? px[i - bpp] : 0;
            int b = prev ? prev[i] : 0;
            int c = prev && i >= bpp ? prev[i - bpp] : 0;
            int add;
            switch (type) {
            case 0:
                add = 0;
                break;
            case 1:
                add = a;
                break;
            case 2:
                add = b;
                break;
            case 3:
                add = (a + b) / 2;
                break;
            case 4:
                add = paeth(a, b, c);
                break;
            default:
                return fail(err, errlen, "row %u: unknown filter %u", y, type);
            }
            px[i] = (uint8_t)(px[i] + add);
        }
        prev = px;
    }
    return true;
}

bool png_decode(const void *data, size_t len, struct png_image *img, char *err, size_t errlen)
{
    static const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    const uint8_t *p = data;
    memset(img, 0, sizeof(*img));
    if (len < 8 || memcmp(p, sig, 8) != 0)
        return fail(err, errlen, "not a PNG file");
    uint32_t w = 0, h = 0;
    int depth = 0, ctype = -1, interlace = 0;
    uint8_t palette[256 * 3] = {0}, trns[256];
    memset(trns, 255, sizeof(trns));
    size_t npalette = 0;
    uint8_t *idat = NULL;
    size_t idat_len = 0;
    size_t off = 8;
    bool ended = false, ok = false;
    while (!ended) {
        if (len - off < 12) {
            fail(err, errlen, "offset %zu: chunk cut short", off);
            goto out;
        }
        uint32_t clen = be32(p + off);
        const uint8_t *type = p + off + 4, *body = p + off + 8;
        if (clen > len - off - 12) {
            fail(err, errlen, "offset %zu: chunk of %u bytes past the end", off, clen);
            goto out;
        }
        if (memcmp(type, "IHDR", 4) == 0) {
            if (clen != 13) {
                fail(err, errlen, "IHDR of %u bytes", clen);
                goto out;
            }
            w = be32(body);
            h = be32(body + 4);
            depth = body[8];
            ctype = body[9];
            interlace = body[12];
        } else if (memcmp(type, "PLTE", 4) == 0) {
            npalette = clen / 3 > 256 ? 256 : clen / 3;
            memcpy(palette, body, npalette * 3);
        } else if (memcmp(type, "tRNS", 4) == 0 && ctype == 3) {
            memcpy(trns, body, clen > 256 ? 256 : clen);
        } else if (memcmp(type, "IDAT", 4) == 0) {
            uint8_t *grown = realloc(idat, idat_len + clen + 1);
            if (!grown) {
                fail(err, errlen, "out of memory");
                goto out;
            }
            idat = grown;
            memcpy(idat + idat_len, body, clen);
            idat_len += clen;
        } else if (memcmp(type, "IEND", 4) == 0) {
            ended = true;
        }
        off += 12 + (size_t)clen;
    }
    if (w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE) {
        fail(err, errlen, "unusable size %ux%u", w, h);
        goto out;
    }
    size_t channels;
    switch (ctype) {
    case 0:
    case 3:
        channels = 1;
        break;
    case 2:
        channels = 3;
        break;
    case 4:
        channels = 2;
        break;
    case 6:
        channels = 4;
        break;
    default:
        fail(err, errlen, "unknown colour type %d", ctype);
        goto out;
    }
    if (depth != 8 || interlace != 0) {
        fail(err, errlen, "unsupported: bit depth %d, interlace %d", depth, interlace);
        goto out;
    }
    size_t stride = (size_t)w * channels, rawlen = (stride + 1) * h;
    uint8_t *raw = malloc(rawlen);
    if (!raw) {
        fail(err, errlen, "out of memory");
        goto out;
    }
    uLongf got = rawlen;
    int zrc = uncompress(raw, &got, idat ? idat : (const uint8_t *)"", idat_len);
    if (zrc != Z_OK || got != rawlen) {
        free(raw);
        fail(err, errlen, "image data does not inflate to %zu bytes (zlib %d, %lu)", rawlen, zrc,
             (unsigned long)got);
        goto out;
    }
    if (!unfilter(raw, h, stride, channels, err, errlen)) {
        free(raw);
        goto out;
    }
    img->width = w;
    img->height = h;
    img->rgba = malloc((size_t)w * h * 4);
    if (!img->rgba) {
        free(raw);
        fail(err, errlen, "out of memory");
        goto out;
    }
    for (uint32_t y = 0; y < h; y++) {
        const uint8_t *src = raw + (size_t)y * (stride + 1) + 1;
        uint8_t *dst = img->rgba + (size_t)y * w * 4;
        for (uint32_t x = 0; x < w; x++, src += channels, dst += 4) {
            switch (ctype) {
            case 0:
                dst[0] = dst[1] = dst[2] = src[0];
                dst[3] = 255;
                break;
            case 4:
                dst[0] = dst[1] = dst[2] = src[0];
                dst[3] = src[1];
                break;
            case 3:
                memcpy(dst, palette + 3 * (size_t)src[0], 3);
                dst[3] = trns[src[0]];
                break;
            case 2:
                memcpy(dst, src, 3);
                dst[3] = 255;
                break;
            default:
                memcpy(dst, src, 4);
            }
        }
    }
    free(raw);
    ok = true;
out:
    free(idat);
    return ok;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

void png_stats(const struct png_image *img, struct png_stats *st)
{
    memset(st, 0, sizeof(*st));
    size_t n = (size_t)img->width * img->height;
    if (n == 0)
        return;
    uint32_t *px = malloc(n * sizeof(*px));
    if (!px)
        return;
    for (size_t i = 0; i < n; i++) {
        const uint8_t *c = img->rgba + 4 * i;
        px[i] = (uint32_t)c[0] << 24 | (uint32_t)c[1] << 16 | (uint32_t)c[2] << 8 | c[3];
    }
    qsort(px, n, sizeof(*px), cmp_u32);
    size_t best = 0, run = 0;
    for (size_t i = 0; i < n; i++) {
        run = i > 0 && px[i] == px[i - 1] ? run + 1 : 1;
        if (run == 1)
            st->colours++;
        if (run > best) {
            best = run;
            st->background = px[i];
        }
    }
    st->nonbg = (double)(n - best) / (double)n;
    free(px);
}

void png_free(struct png_image *img)
{
    free(img->rgba);
    img->rgba = NULL;
}
