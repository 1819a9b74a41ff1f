/*
 * recurse.c - a recursion thousands of frames deep, for the stack tests.
 *
 * usage: recurse [DEPTH] [SECONDS]
 *   Calls descend() DEPTH times into itself (default 2000), each frame
 *   holding about 220 bytes of stack (some 450 KB in all, as a recursive
 *   parser or a tree walk may), burns CPU in the innermost call, returns
 *   all the way to main() and starts again, for SECONDS (default 2).  Every
 *   sample's stack therefore runs from leaf() through DEPTH frames of
 *   descend() to main(): a profiler that keeps the whole stack shows main()
 *   on every one.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define KEEP __attribute__((noinline, noclone))
#define BARRIER() __asm__ volatile("" ::: "memory")

static volatile uint64_t sink;

/* About 20 us of work per call. */
KEEP static uint64_t leaf(uint64_t x)
{
    for (int i = 0; i < 20000; i++) {
        x ^= x >> 29;
        x *= 0xbf58476d1ce4e5b9ULL;
        BARRIER();
    }
    return x;
}

/* The buffer gives each frame its size; using it after the call keeps the
 * call from becoming a jump. */
KEEP static uint64_t descend(int depth, uint64_t seed)
{
    volatile unsigned char frame[200];
    frame[0] = (unsigned char)seed;
    frame[199] = (unsigned char)(seed >> 8);
    uint64_t r = depth > 0 ? descend(depth - 1, seed * 3 + 1) : leaf(seed);
    return r + frame[0] + frame[199];
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 2000;
    double seconds = argc > 2 ? atof(argv[2]) : 2.0;
    double end = now() + seconds;
    uint64_t seed = 1;
    while (now() < end)
        for (int i = 0; i < 50; i++)
            sink += descend(depth, seed++);
    return 0;
}
