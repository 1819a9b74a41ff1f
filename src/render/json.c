/* json.c - see json.h */
#include "render/json.h"
#include "util/utf8.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>

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
                /* A NUL ends the string: it is no continuation byte, so
                 * nothing past it is read. */
                uint32_t cp;
                size_t n = utf8_decode(s, 4, &cp);
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
