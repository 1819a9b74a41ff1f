/*
 * placed.c - a target whose time is split between its own code, libc and a
 * library it loads with dlopen(), and which leaves its memory map behind:
 * the ground truth for where the raw format's map table puts each sampled
 * PC (tests/e2e/test_pperf_maps.c).
 *
 * usage: placed LIBRARY SECONDS MAPS_OUT
 *   dlopen()s LIBRARY (build/workloads/libplugin.so), then for SECONDS of
 *   wall time rotates between own_work() (arithmetic in this executable),
 *   libc_work() (getppid() in a loop: the time goes to libc's system call
 *   wrapper and the kernel behind it) and the library's plugin_hot(), about
 *   a third each.  Before it exits it copies /proc/self/maps to MAPS_OUT.
 *   Exits 1 when the library, its symbol or a file fails.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define KEEP __attribute__((noinline, noclone))

static volatile uint64_t sink;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

KEEP void own_work(double seconds)
{
    double end = now_s() + seconds;
    uint64_t x = 11;
    while (now_s() < end) {
        for (int i = 0; i < 20000; i++) {
            x ^= x >> 31;
            x *= 0xd6e8feb86659fd93ULL;
            __asm__ volatile("" : "+r"(x));
        }
    }
    sink += x;
}

KEEP void libc_work(double seconds)
{
    double end = now_s() + seconds;
    uint64_t sum = 0;
    while (now_s() < end)
        for (int i = 0; i < 200; i++)
            sum += (uint64_t)getppid();
    sink += sum;
}

KEEP void plugin_work(uint64_t (*hot)(uint64_t), double seconds)
{
    double end = now_s() + seconds;
    uint64_t acc = 0;
    for (uint64_t i = 0; now_s() < end; i++)
        acc += hot(i);
    sink += acc;
}

static int copy_maps(const char *to)
{
    FILE *in = fopen("/proc/self/maps", "r");
    FILE *out = fopen(to, "w");
    char buf[4096];
    size_t n;
    int rc = in && out ? 0 : -1;
    while (rc == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0)
        rc = fwrite(buf, 1, n, out) == n ? 0 : -1;
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: placed LIBRARY SECONDS MAPS_OUT\n");
        return 2;
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    uint64_t (*hot)(uint64_t) = lib ? (uint64_t(*)(uint64_t))dlsym(lib, "plugin_hot") : NULL;
    if (!hot) {
        fprintf(stderr, "placed: %s\n", dlerror());
        return 1;
    }
    /* Slices of 30 ms: many rotations, none shorter than a few samples. */
    double end = now_s() + atof(argv[2]);
    while (now_s() < end) {
        own_work(0.03);
        libc_work(0.03);
        plugin_work(hot, 0.03);
    }
    if (copy_maps(argv[3]) != 0) {
        fprintf(stderr, "placed: cannot copy /proc/self/maps to %s\n", argv[3]);
        return 1;
    }
    return 0;
}
