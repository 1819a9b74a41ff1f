/*
 * mutual.c - two functions that call each other, for gprof's cycles.
 *
 * usage: mutual [SECONDS]
 *   Runs for SECONDS (default 1), then exits 0.  main() calls ping(),
 *   which works and calls pong(), which works, calls outside() (a callee
 *   outside the loop) and calls ping() again, DEPTH calls deep: ping() and
 *   pong() form a cycle of the call graph (gprof's <cycle 1>).  main() also
 *   calls pong() directly (a second way into the cycle) and alone() (a
 *   function outside it), so the cycle has two callers from outside, a
 *   child outside it and a sibling to compare with.
 *
 * Every function is noinline and noclone and does something after its
 * call (no tail calls), so gcc -pg counts every call.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define KEEP __attribute__((noinline, noclone))
#define BARRIER() __asm__ volatile("" ::: "memory")

enum { DEPTH = 6, ROUNDS = 20000 };

static volatile uint64_t sink;

/* A macro, not a function: an inlined helper would be a frame of its own
 * in the debug information, and gprof knows only the ELF symbols. */
#define MIX(x, rounds)                                                                             \
    do {                                                                                           \
        for (int i_ = 0; i_ < (rounds); i_++) {                                                    \
            (x) ^= (x) >> 31;                                                                      \
            (x) *= 0x9e3779b97f4a7c15ULL;                                                          \
            BARRIER();                                                                             \
        }                                                                                          \
    } while (0)

KEEP static uint64_t outside(uint64_t x)
{
    MIX(x, ROUNDS);
    return x;
}

KEEP static uint64_t pong(int depth, uint64_t x);

KEEP static uint64_t ping(int depth, uint64_t x)
{
    MIX(x, 2 * ROUNDS);
    if (depth > 0)
        x ^= pong(depth - 1, x + 1);
    return x + 1;
}

KEEP static uint64_t pong(int depth, uint64_t x)
{
    MIX(x, ROUNDS);
    x ^= outside(x);
    if (depth > 0)
        x ^= ping(depth - 1, x + 3);
    return x + 3;
}

KEEP static uint64_t alone(uint64_t x)
{
    MIX(x, 3 * ROUNDS);
    return x + 5;
}

KEEP static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    double end = now() + seconds;
    uint64_t x = 1;
    for (unsigned round = 0; now() < end; round++) {
        x ^= ping(DEPTH, x);
        if (round % 3 == 0)
            x ^= pong(DEPTH / 2, x);
        x ^= alone(x);
    }
    sink = x;
    return 0;
}
