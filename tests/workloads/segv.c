/*
 * segv.c - works for a while, then dies of a real SIGSEGV (a write through a
 * null pointer, not raise()), so tests see how the profiler reports a
 * target killed by a fault.
 *
 * usage: segv [WORK_MS]   (default 100)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

int main(int argc, char **argv)
{
    unsigned ms = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
    uint64_t end = now_ms() + ms, x = 1;
    while (now_ms() < end) {
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    }
    volatile int *volatile null = NULL;
    *null = (int)x;
    puts("segv: still alive after writing through NULL");
    return 0;
}
