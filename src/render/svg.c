/* svg.c - see svg.h: escaping profile strings for SVG/HTML, shared pieces. */
#include "render/svg.h"
#include "util/utf8.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define REPLACEMENT 0xfffd

/* The code point at S (LEN > 0 bytes left) into *CP; returns the bytes it
 * used.  An invalid sequence uses one byte and gives U+FFFD with *VALID
 * false, so a damaged byte never swallows the good ones after it. */
static size_t utf8_next(const unsigned char *s, size_t len, uint32_t *cp, bool *valid)
{
    size_t n = utf8_decode(s, len, cp);
    *valid = n > 0;
    if (n)
        return n;
    *cp = REPLACEMENT;
    return 1;
}

/* Control characters (other than tab, LF, CR) and what XML 1.0 forbids. */
static bool unwanted(uint32_t cp)
{
    if (cp == '\t' || cp == '\n' || cp == '\r')
        return false;
    return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) || cp == 0xfffe || cp == 0xffff;
}

static void put_replacement(FILE *out)
{
    fputs("\xef\xbf\xbd", out);
}

/* One code point of svg_text(); RAW/N are its original bytes.  LINE: one
 * line of text, where tab, LF and CR are unwanted too. */
static void put_xml(FILE *out, uint32_t cp, bool valid, const unsigned char *raw, size_t n,
                    bool line)
{
    if (!valid || unwanted(cp) || (line && cp < 0x20)) {
        put_replacement(out);
        return;
    }
    switch (cp) {
    case '&':
        fputs("&amp;", out);
        break;
    case '<':
        fputs("&lt;", out);
        break;
    case '>':
        fputs("&gt;", out);
        break;
    case '"':
        fputs("&quot;", out);
        break;
    case '\'':
        fputs("&#39;", out);
        break;
    case '\t':
        fputs("&#9;", out);
        break;
    case '\n':
        fputs("&#10;", out);
        break;
    case '\r':
        fputs("&#13;", out);
        break;
    default:
        fwrite(raw, 1, n, out);
    }
}

static void text_n(FILE *out, const char *str, size_t len, bool line)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t i = 0;
    while (i < len) {
        uint32_t cp;
        bool valid;
        size_t n = utf8_next(s + i, len - i, &cp, &valid);
        put_xml(out, cp, valid, s + i, n, line);
        i += n;
    }
}

void svg_text_n(FILE *out, const char *s, size_t len)
{
    text_n(out, s, len, false);
}

void svg_text(FILE *out, const char *s)
{
    text_n(out, s, strlen(s), false);
}

void svg_text_line(FILE *out, const char *s)
{
    text_n(out, s, strlen(s), true);
}

size_t svg_utf8_chars(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t len = strlen(str), i = 0, chars = 0;
    while (i < len) {
        uint32_t cp;
        bool valid;
        i += utf8_next(s + i, len - i, &cp, &valid);
        chars++;
    }
    return chars;
}

size_t svg_text_max(FILE *out, const char *str, size_t max_chars)
{
    size_t total = svg_utf8_chars(str);
    if (total <= max_chars) {
        svg_text_line(out, str);
        return total;
    }
    if (max_chars < 3)
        return 0;
    const unsigned char *s = (const unsigned char *)str;
    size_t len = strlen(str), i = 0, keep = max_chars - 3;
    for (size_t k = 0; k < keep; k++) {
        uint32_t cp;
        bool valid;
        size_t n = utf8_next(s + i, len - i, &cp, &valid);
        put_xml(out, cp, valid, s + i, n, true);
        i += n;
    }
    fputs("...", out);
    return keep;
}

void svg_js_string(FILE *out, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t len = strlen(str), i = 0;
    fputc('"', out);
    while (i < len) {
        uint32_t cp;
        bool valid;
        size_t n = utf8_next(s + i, len - i, &cp, &valid);
        if (!valid)
            fputs("\\ufffd", out);
        else if (cp == '"')
            fputs("\\\"", out);
        else if (cp == '\\')
            fputs("\\\\", out);
        else if (cp == '\n')
            fputs("\\n", out);
        else if (cp == '\t')
            fputs("\\t", out);
        else if (cp < 0x20 || unwanted(cp) || cp == '<' || cp == '>' || cp == '&' || cp == '\'' ||
                 cp == 0x2028 || cp == 0x2029)
            fprintf(out, "\\u%04x", (unsigned)cp);
        else
            fwrite(s + i, 1, n, out);
        i += n;
    }
    fputc('"', out);
}

void svg_script(FILE *out, const char *code)
{
    if (strstr(code, "]]>"))
        abort(); /* our own script would end the CDATA section: a bug, not input */
    fputs("<script type=\"text/ecmascript\"><![CDATA[\n", out);
    fputs(code, out);
    fputs("\n]]></script>\n", out);
}

void svg_open(FILE *out, double w, double h, const char *extra_attrs)
{
    fprintf(out,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" "
            "xmlns:xlink=\"http://www.w3.org/1999/xlink\" version=\"1.1\" "
            "width=\"%.6g\" height=\"%.6g\" viewBox=\"0 0 %.6g %.6g\"%s%s>\n",
            w, h, w, h, extra_attrs ? " " : "", extra_attrs ? extra_attrs : "");
}

void svg_close(FILE *out)
{
    fputs("</svg>\n", out);
}

uint32_t svg_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        h ^= *p;
        h *= 16777619u;
    }
    return h;
}
