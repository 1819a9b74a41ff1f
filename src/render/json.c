/* json.c - see json.h */
#include "render/json.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at S, or 0. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    size_t n;
    uint32_t cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    /* Overlong forms, surrogates and values past U+10FFFF are invalid. */
    if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

void json_string(FILE *out, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', out);
    while (*s) {
        unsigned char c = *s;
        switch (c) {
        case '"':
            fputs("\\\"", out);
            break;
        case '\\':
            fputs("\\\\", out);
            break;
        case '\b':
            fputs("\\b", out);
            break;
        case '\f':
            fputs("\\f", out);
            break;
        case '\n':
            fputs("\\n", out);
            break;
        case '\r':
            fputs("\\r", out);
            break;
        case '\t':
            fputs("\\t", out);
            break;
        default:
            if (c < 0x20 || c == 0x7f) {
                fprintf(out, "\\u%04x", c);
            } else {
                size_t n = utf8_len(s);
                if (n == 0) {
                    fputs("\\ufffd", out);
                } else {
                    fwrite(s, 1, n, out);
                    s += n;
                    continue;
                }
            }
        }
        s++;
    }
    fputc('"', out);
}

void json_number(FILE *out, double v)
{
    if (!isfinite(v))
        fputs("null", out);
    else
        fprintf(out, "%.9g", v == 0 ? 0.0 : v);
}

void json_bool(FILE *out, bool v)
{
    fputs(v ? "true" : "false", out);
}
