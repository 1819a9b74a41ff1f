/*
 * demo.c - the program "make demo" profiles: a first thing to look at
 * with ptprof.
 *
 * Three worker threads repeat the same three steps on a buffer of numbers
 * until the time is up, while the main thread waits for them:
 *
 *   fill_buffer()  cheap:     pseudo-random input            (under 10% of the CPU time)
 *   hot_spot()     expensive: many rounds of mixing per item (about 85%)
 *   checksum()     cheap:     fold the result into one value (under 10%)
 *
 * A profile of it should show hot_spot on top with most of the CPU time,
 * the two helpers far below, and the main thread with many samples but
 * almost no CPU time (it waits).
 *
 * usage: demo [SECONDS]   (default 2)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WORKERS 3
#define ITEMS 4096
/* Rounds of mixing per item in hot_spot(): the knob that makes it hot. */
#define HOT_ROUNDS 16

/* Keep each step a function of its own, under its own name, even at -O2:
 * no inlining, and (GCC) no specialized clones such as
 * "hot_spot.constprop.0". */
#if defined(__GNUC__) && !defined(__clang__)
#define STEP __attribute__((noinline, noclone))
#else
#define STEP __attribute__((noinline))
#endif

struct worker {
    pthread_t thread;
    unsigned id;
    double deadline; /* CLOCK_MONOTONIC seconds */
    uint64_t buffer[ITEMS];
    uint64_t batches;
    uint64_t result;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Pseudo-random input (xorshift64): about as cheap as work can be. */
STEP static void fill_buffer(uint64_t *buf, size_t n, uint64_t seed)
{
    uint64_t x = seed | 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        buf[i] = x;
    }
}

/* The hot spot: every item goes through many rounds of multiply, rotate
 * and xor, a dependency chain the CPU cannot shortcut. */
STEP static void hot_spot(uint64_t *buf, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t v = buf[i];
        for (int r = 0; r < HOT_ROUNDS; r++) {
            v *= 0x9e3779b97f4a7c15ULL;
            v = (v << 31) | (v >> 33);
            v ^= (uint64_t)r;
        }
        buf[i] = v;
    }
}

/* Fold the buffer into one value so the compiler cannot drop the work. */
STEP static uint64_t checksum(const uint64_t *buf, size_t n)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum = (sum ^ buf[i]) * 31 + (buf[i] >> 3);
    return sum;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    while (now() < w->deadline) {
        fill_buffer(w->buffer, ITEMS, w->result + w->id + w->batches);
        hot_spot(w->buffer, ITEMS);
        w->result ^= checksum(w->buffer, ITEMS);
        w->batches++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = 2.0;
    if (argc > 1) {
        char *end;
        seconds = strtod(argv[1], &end);
        if (*end || !(seconds > 0 && seconds <= 3600)) {
            fprintf(stderr, "usage: %s [SECONDS]   (0 < SECONDS <= 3600, default 2)\n", argv[0]);
            return 1;
        }
    }

    static struct worker workers[WORKERS];
    double deadline = now() + seconds;
    for (unsigned i = 0; i < WORKERS; i++) {
        workers[i].id = i;
        workers[i].deadline = deadline;
        if (pthread_create(&workers[i].thread, NULL, worker_main, &workers[i]) != 0) {
            fprintf(stderr, "demo: cannot start worker thread %u\n", i);
            return 1;
        }
    }

    /* The main thread only waits: it shows up in every sample, but with
     * almost no CPU time of its own. */
    uint64_t batches = 0, result = 0;
    for (unsigned i = 0; i < WORKERS; i++) {
        pthread_join(workers[i].thread, NULL);
        batches += workers[i].batches;
        result ^= workers[i].result;
    }
    printf("demo: %d worker threads, %.1f s, %llu batches, checksum %016llx\n", WORKERS, seconds,
           (unsigned long long)batches, (unsigned long long)result);
    return 0;
}
