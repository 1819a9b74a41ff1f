/*
 * dlopener.c - a target that loads a library mid-run, for map tracking.
 *
 * usage: dlopener LIBRARY BEFORE_S AFTER_S
 *   Works in before_load() for BEFORE_S seconds, then dlopen()s LIBRARY
 *   (build/workloads/libplugin.so) and calls its plugin_hot() in a loop for
 *   AFTER_S seconds.  Prints "dlopener: loaded at NS" (CLOCK_REALTIME
 *   nanoseconds, the clock profiles use, read just before dlopen) and
 *   "dlopener: done"; exits 1 when the library or its symbol is missing.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define KEEP __attribute__((noinline, noclone))

static volatile uint64_t sink;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

KEEP void before_load(double seconds)
{
    double end = now_s() + seconds;
    uint64_t x = 7;
    while (now_s() < end) {
        for (int i = 0; i < 20000; i++) {
            x ^= x >> 29;
            x *= 0xbf58476d1ce4e5b9ULL;
            __asm__ volatile("" : "+r"(x));
        }
    }
    sink += x;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: dlopener LIBRARY BEFORE_S AFTER_S\n");
        return 2;
    }
    before_load(atof(argv[2]));

    struct timespec loaded;
    clock_gettime(CLOCK_REALTIME, &loaded);
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopener: %s\n", dlerror());
        return 1;
    }
    uint64_t (*hot)(uint64_t) = (uint64_t(*)(uint64_t))dlsym(lib, "plugin_hot");
    if (!hot) {
        fprintf(stderr, "dlopener: %s\n", dlerror());
        return 1;
    }
    printf("dlopener: loaded at %lld\n",
           (long long)loaded.tv_sec * 1000000000LL + (long long)loaded.tv_nsec);
    fflush(stdout);

    double end = now_s() + atof(argv[3]);
    uint64_t acc = 0;
    for (uint64_t i = 0; now_s() < end; i++)
        acc += hot(i);
    sink += acc;
    printf("dlopener: done\n");
    return 0;
}
