/*
 * naps.c - long busy spells broken by naps, for the test that a profiler
 * which looks less often at a busy program still sees it start to wait.
 *
 * usage: naps SECONDS BUSY_MS NAP_MS
 *   One thread, for SECONDS of wall time: spins for BUSY_MS in busy_spell(),
 *   then sleeps NAP_MS in nap() (clock_nanosleep), over and over.  At the end
 *   prints "naps: napped N of M ms": the time it measured in nap() and the
 *   whole run's, so a test can check the wall share a profile gives nap().
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static volatile uint64_t sink;

__attribute__((noinline)) static void busy_spell(uint64_t ns)
{
    uint64_t end = now_ns() + ns, x = sink;
    while (now_ns() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 6364136223846793005u + 1442695040888963407u;
    sink = x;
}

__attribute__((noinline)) static uint64_t nap(uint64_t ns)
{
    uint64_t start = now_ns();
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                          .tv_nsec = (long)(ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &ts) != 0)
        ; /* interrupted: sleep the rest */
    return now_ns() - start;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: naps SECONDS BUSY_MS NAP_MS\n");
        return 2;
    }
    uint64_t start = now_ns(), end = start + (uint64_t)(atof(argv[1]) * 1e9);
    uint64_t busy = (uint64_t)(atof(argv[2]) * 1e6), sleep = (uint64_t)(atof(argv[3]) * 1e6);
    uint64_t napped = 0;
    while (now_ns() < end) {
        busy_spell(busy);
        napped += nap(sleep);
    }
    printf("naps: napped %.0f of %.0f ms\n", (double)napped / 1e6,
           (double)(now_ns() - start) / 1e6);
    return 0;
}
