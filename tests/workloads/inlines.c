/*
 * inlines.c - a target whose hot code is inlined, for the symbolizer's
 * inline frames.
 *
 * usage: inlines [SECONDS]
 *   Runs for SECONDS (default 2), then exits 0.  mix() is a static inline
 *   function with a loop of its own, forced inline (always_inline) into
 *   two noinline callers, caller_a() and caller_b(), which split the time
 *   about evenly.  mix() therefore has no symbol and no code of its own:
 *   its instructions appear inside both callers, where only the DWARF
 *   inline records (DW_TAG_inlined_subroutine) say that they are mix()'s,
 *   at its own source lines, called from a line of each caller.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define KEEP __attribute__((noinline, noclone))

static volatile uint64_t sink;

static inline __attribute__((always_inline)) uint64_t mix(uint64_t x, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        x ^= x >> 31;
        x *= 0x7fb5d329728ea185ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

KEEP uint64_t caller_a(uint64_t seed)
{
    uint64_t x = mix(seed ^ 0xa, 20000);
    __asm__ volatile("" ::: "memory");
    return x + 0xa;
}

KEEP uint64_t caller_b(uint64_t seed)
{
    uint64_t x = mix(seed ^ 0xb, 20000);
    __asm__ volatile("" ::: "memory");
    return x * 0xb;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 2.0;
    double end = now() + seconds;
    uint64_t acc = 0;
    for (uint64_t i = 0; now() < end; i++) {
        acc += caller_a(i);
        acc += caller_b(i);
    }
    sink = acc;
    return 0;
}
