/*
 * utf8.h - decoding UTF-8, for the writers that must pass text through
 * safely (JSON strings, SVG and HTML text).
 *
 * Contract: utf8_decode() looks at the sequence at S (LEN > 0 bytes left;
 * it never reads past them, nor past a byte that is not a continuation)
 * and returns its length with the code point in *CP, or 0 when it is not
 * valid UTF-8: a stray continuation byte, a sequence cut short, an overlong
 * form, a surrogate or a value past U+10FFFF.
 */
#ifndef PTPROF_UTIL_UTF8_H
#define PTPROF_UTIL_UTF8_H

#include <stddef.h>
#include <stdint.h>

size_t utf8_decode(const unsigned char *s, size_t len, uint32_t *cp);

#endif
