/*
 * cpuburn.c - CPU-bound benchmark workload: a fixed amount of work split
 * over N threads, so a profiler's slowdown is time(profiled) / time(bare) - 1.
 *
 *   cpuburn THREADS UNITS      do UNITS units of work over THREADS threads
 *   cpuburn --calibrate SECS   print how many units one thread does in SECS
 *
 * The work is fixed (not a time budget) because a profiler that steals time
 * must make the run longer, not the work smaller.  The last line on stdout is
 *   cpuburn: threads=T units=U wall=S cpu=S checksum=X
 * where wall covers the work only (from the main thread's start of work, just
 * before the barrier releases every thread, to the last join) and cpu is the
 * process CPU time over the same span; bench/run parses it.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* One unit is this many inner iterations; about a millisecond on a 2020s core. */
#define ITERS_PER_UNIT 400000u

struct worker {
    pthread_t thread;
    uint64_t units;
    uint64_t seed;
    uint64_t result;
};

static pthread_barrier_t start_line;
/* Where calibration leaves its result, so the compiler must compute it. */
static volatile uint64_t calibration_sink;

static double now_s(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Two separate non-inlined kernels, so profiles of the workload show more
 * than one function and the dependency chains keep the compiler from
 * collapsing the loops.
 */
__attribute__((noinline)) static uint64_t mix_int(uint64_t x, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x = x * 0x9E3779B97F4A7C15ull + i;
    }
    return x;
}

__attribute__((noinline)) static double mix_fp(double y, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        y = y * 0.999999 + 1.0 / (y + (double)(i & 7) + 1.0);
    return y;
}

__attribute__((noinline)) static uint64_t one_unit(uint64_t x)
{
    /* Integer and floating-point halves of equal length. */
    double y = (double)(x & 0xffff) + 1.0;
    x = mix_int(x, ITERS_PER_UNIT / 2);
    y = mix_fp(y, ITERS_PER_UNIT / 16);
    return x ^ (uint64_t)y;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    uint64_t x = w->seed;

    pthread_barrier_wait(&start_line);
    for (uint64_t u = 0; u < w->units; u++)
        x = one_unit(x);
    w->result = x;
    return NULL;
}

static int calibrate(double secs)
{
    uint64_t x = 88172645463325252ull;
    uint64_t units = 0;
    double t0 = now_s(CLOCK_MONOTONIC), t = t0;

    while (t - t0 < secs) {
        for (int i = 0; i < 16; i++)
            x = one_unit(x);
        units += 16;
        t = now_s(CLOCK_MONOTONIC);
    }
    /* Scale to the exact duration asked for; the loop overshoots a little. */
    calibration_sink = x;
    printf("%" PRIu64 "\n", (uint64_t)((double)units * secs / (t - t0) + 0.5));
    return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);

    if (*s == '\0' || *s == '-' || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t nthreads, units;

    if (argc == 3 && strcmp(argv[1], "--calibrate") == 0) {
        double secs = strtod(argv[2], NULL);
        if (!(secs > 0.0 && secs < 3600.0)) {
            fprintf(stderr, "cpuburn: bad duration '%s'\n", argv[2]);
            return 1;
        }
        return calibrate(secs);
    }
    if (argc != 3 || parse_u64(argv[1], &nthreads) != 0 || parse_u64(argv[2], &units) != 0 ||
        nthreads < 1 || nthreads > 1024) {
        fprintf(stderr, "usage: cpuburn THREADS UNITS | cpuburn --calibrate SECONDS\n");
        return 1;
    }

    struct worker *w = calloc(nthreads, sizeof(*w));
    if (!w) {
        perror("cpuburn: calloc");
        return 1;
    }
    /* The main thread is worker 0, so the process has exactly THREADS
     * threads and all of them burn: the floor with -t THREADS is its twin. */
    pthread_barrier_init(&start_line, NULL, (unsigned)nthreads);
    for (uint64_t i = 0; i < nthreads; i++) {
        /* Spread the remainder so the total is exactly UNITS. */
        w[i].units = units / nthreads + (i < units % nthreads ? 1 : 0);
        w[i].seed = 0x243F6A8885A308D3ull + i;
    }
    for (uint64_t i = 1; i < nthreads; i++) {
        int err = pthread_create(&w[i].thread, NULL, worker_main, &w[i]);
        if (err != 0) {
            fprintf(stderr, "cpuburn: pthread_create: %s\n", strerror(err));
            return 1;
        }
    }

    double wall0 = now_s(CLOCK_MONOTONIC);
    double cpu0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
    worker_main(&w[0]);
    uint64_t checksum = w[0].result;
    for (uint64_t i = 1; i < nthreads; i++) {
        pthread_join(w[i].thread, NULL);
        checksum ^= w[i].result;
    }
    double wall = now_s(CLOCK_MONOTONIC) - wall0;
    double cpu = now_s(CLOCK_PROCESS_CPUTIME_ID) - cpu0;

    printf("cpuburn: threads=%" PRIu64 " units=%" PRIu64 " wall=%.6f cpu=%.6f checksum=%016" PRIx64
           "\n",
           nthreads, units, wall, cpu, checksum);
    free(w);
    return 0;
}
