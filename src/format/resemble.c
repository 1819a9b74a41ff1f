/*
 * resemble.c - see resemble.h.
 */
#include "format/resemble.h"
#include "interop/gperftools.h"
#include "interop/pperf.h"
#include "interop/pprof_wire.h"

#include <stdint.h>
#include <string.h>

/* Lines of text judged for folded stacks against perf script. */
#define TEXT_LINES 64
/* pperf's magic numbers: the PMU kinds the original documents. */
#define PPERF_MAGIC_DOCUMENTED 3u

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static bool is_perf_data(const unsigned char *d, size_t len)
{
    return len >= 8 && (memcmp(d, "PERFILE2", 8) == 0 || memcmp(d, "PERFFILE", 8) == 0);
}

/* A pperf header (pperf.h) whose counts the file can hold: at least the
 * fixed part of every sample and every map.  Without the whole file only
 * the PMU sample size can be judged. */
static bool pperf_header_fits(const unsigned char *d, size_t len, bool whole)
{
    if (len < PPERF_HEADER_SIZE)
        return whole && len >= 4;
    uint32_t pmu_size = get_u32(d + 28);
    if (pmu_size > PPERF_PMU_SIZE_MAX)
        return false;
    if (!whole)
        return true;
    uint64_t room = len - PPERF_HEADER_SIZE, nsamples = get_u64(d + 20);
    uint64_t sample = 8 + (uint64_t)pmu_size + 4, maps = (uint64_t)get_u32(d + 32) * PPERF_MAP_SIZE;
    return maps <= room && nsamples <= (room - maps) / sample;
}

static bool header_words(uint64_t w)
{
    return w >= 3 && w <= GPERFTOOLS_MAX_HEADER_WORDS;
}

/* The first bytes of a gperftools header, in 4- or 8-byte slots of either
 * byte order: slot 0 is 0, slot 1 the header's size in words. */
static bool gperftools_header_start(const unsigned char *d, size_t len)
{
    if (len < 8 || get_u32(d) != 0)
        return false;
    uint32_t w = get_u32(d + 4);
    if (w != 0)
        return header_words(w) || header_words(__builtin_bswap32(w));
    if (len < 16) /* a 64-bit slot 1 not all there: what is must fit */
        return len < 12 || header_words(get_u32(d + 8)) || get_u32(d + 8) == 0;
    uint64_t w64 = get_u64(d + 8);
    return header_words(w64) || header_words(__builtin_bswap64(w64));
}

/* A pperf header present whole, but the counts run past the end: a file
 * cut short. */
static bool pperf_header_cut(const unsigned char *d, size_t len)
{
    return len >= PPERF_HEADER_SIZE && get_u32(d + 28) <= PPERF_PMU_SIZE_MAX;
}

static bool text_byte(unsigned char c)
{
    return c >= 0x20 ? c != 0x7f : (c >= '\t' && c <= '\r');
}

static bool looks_like_text(const unsigned char *d, size_t n)
{
    if (n == 0)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!text_byte(d[i]))
            return false;
    return true;
}

static bool is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* perf script's call-chain frame: indented, then a hexadecimal address. */
static bool perf_frame_line(const unsigned char *s, size_t n)
{
    if (n == 0 || (s[0] != ' ' && s[0] != '\t'))
        return false;
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t'))
        i++;
    size_t digits = 0;
    while (i < n && is_hex(s[i])) {
        i++;
        digits++;
    }
    return digits > 0 && (i == n || s[i] == ' ');
}

/* A folded stack: not indented, and its last word is a count. */
static bool folded_line(const unsigned char *s, size_t n)
{
    while (n && (s[n - 1] == '\r' || s[n - 1] == ' '))
        n--;
    if (n == 0 || s[0] == ' ' || s[0] == '\t')
        return false;
    size_t i = n;
    while (i > 0 && s[i - 1] != ' ')
        i--;
    if (i == 0 || i == n)
        return false;
    for (size_t k = i; k < n; k++)
        if (!(s[k] >= '0' && s[k] <= '9') && s[k] != '.' && s[k] != 'e' && s[k] != 'E' &&
            s[k] != '+' && s[k] != '-')
            return false;
    return s[i] >= '0' && s[i] <= '9';
}

static enum resemblance which_text(const unsigned char *d, size_t n)
{
    size_t frames = 0, stacks = 0, lines = 0;
    const unsigned char *s = d, *end = d + n;
    while (s < end && lines < TEXT_LINES) {
        const unsigned char *nl = memchr(s, '\n', (size_t)(end - s));
        const unsigned char *e = nl ? nl : end;
        frames += perf_frame_line(s, (size_t)(e - s));
        stacks += folded_line(s, (size_t)(e - s));
        lines++;
        s = e + 1;
    }
    if (!frames && !stacks)
        return RESEMBLES_NOTHING; /* text, but of neither kind */
    return frames > stacks ? RESEMBLES_PERF_SCRIPT : RESEMBLES_FOLDED;
}

/* The tag of a field of pprof's Profile message (profile.proto): fields
 * 1-6 and 11 are messages or strings, the others numbers (13, comment,
 * may also be packed). */
static bool pprof_first_tag(unsigned char tag)
{
    unsigned field = tag >> 3, wire = tag & 7;
    switch (field) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 11:
        return wire == 2;
    case 7:
    case 8:
    case 9:
    case 10:
    case 12:
    case 14:
    case 15:
        return wire == 0;
    case 13:
        return wire == 0 || wire == 2;
    default:
        return false;
    }
}

enum resemblance profile_resemblance(const void *data, size_t len, bool whole)
{
    const unsigned char *d = data;
    if (is_perf_data(d, len))
        return RESEMBLES_PERF_DATA;
    if (gperftools_header_start(d, len) && len < 3 * 8)
        return RESEMBLES_GPERFTOOLS_HEADER;
    if (len >= 4 && get_u32(d) <= PPERF_MAGIC_DOCUMENTED &&
        (pperf_header_fits(d, len, whole) || pperf_header_cut(d, len)))
        return RESEMBLES_PPERF;
    if (len >= 2 && d[0] == 0x80 && d[1] >= 2 && d[1] <= 5)
        return RESEMBLES_PICKLE;
    size_t head = len < PROFILE_HEAD_SIZE ? len : PROFILE_HEAD_SIZE;
    if (looks_like_text(d, head))
        return which_text(d, head);
    /* A whole file that starts with a Profile field; of the first bytes
     * only, a well-formed first sample type, as every pprof writer starts
     * (a lone tag byte is too common in noise to read on for). */
    if (whole ? len >= 2 && pprof_first_tag(d[0]) : pprof_wire_starts_like(d, len))
        return RESEMBLES_PPROF;
    if (len >= 4 && pperf_header_fits(d, len, whole))
        return RESEMBLES_PPERF;
    return RESEMBLES_NOTHING;
}

const char *resemblance_name(enum resemblance r)
{
    switch (r) {
    case RESEMBLES_PERF_DATA:
        return "perf.data";
    case RESEMBLES_PPERF:
        return "pperf";
    case RESEMBLES_PERF_SCRIPT:
        return "perf-script";
    case RESEMBLES_FOLDED:
        return "folded";
    case RESEMBLES_PPROF:
        return "pprof";
    case RESEMBLES_GPERFTOOLS_HEADER:
        return "gperftools";
    case RESEMBLES_PICKLE:
        return "pickle";
    default:
        return "nothing";
    }
}
