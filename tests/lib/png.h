/*
 * png.h - decoding the PNG screenshots a browser takes, to look at them.
 *
 * Contract: png_decode() reads LEN bytes of a PNG file (8-bit greyscale,
 * grey+alpha, RGB, RGBA or palette; not interlaced: what Chromium writes)
 * into IMG as 8-bit RGBA rows, inflating the IDAT stream with zlib and
 * undoing the five row filters.  It returns true, or false with a reason
 * in ERR (a damaged or unsupported file); it never reads past DATA + LEN.
 * png_stats() describes what is drawn: the most common colour is taken as
 * the background; NONBG is the fraction of pixels that differ from it and
 * COLOURS the number of distinct colours.
 */
#ifndef PTPROF_TESTS_PNG_H
#define PTPROF_TESTS_PNG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct png_image {
    uint32_t width, height;
    uint8_t *rgba; /* width * height * 4 bytes, row by row */
};

struct png_stats {
    uint32_t background; /* 0xRRGGBBAA */
    double nonbg;        /* fraction of pixels that are not the background */
    size_t colours;      /* distinct colours */
};

bool png_decode(const void *data, size_t len, struct png_image *img, char *err, size_t errlen);
void png_stats(const struct png_image *img, struct png_stats *st);
void png_free(struct png_image *img);

#endif
