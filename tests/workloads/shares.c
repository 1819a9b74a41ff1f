/*
 * shares.c - ground truth for attribution tests: four functions with known
 * CPU weights (about 50/30/15/5 percent), each call timed with the thread's
 * own CPU clock, so a profile's per-function shares can be checked against
 * what the program itself measured.
 *
 * usage: shares THREADS SECONDS [clock]
 *   THREADS workers (the main thread is one of them, so its PCs stay inside
 *   this executable) loop over the four functions for SECONDS of wall time.
 *   With "clock", every function also reads CLOCK_MONOTONIC through libc
 *   every 16 iterations, so about half of its time is spent in libc's
 *   clock_gettime and the vDSO's, which have no frame pointer between them
 *   and the function (the frame-pointer walk's blind spot).
 *   With $SHARES_OUT set, the measured CPU time per function (nanoseconds,
 *   summed over threads) is written there as "function nanoseconds" lines,
 *   then "cpu_total nanoseconds": the workers' whole CPU time, so shares
 *   can be checked unnormalised.
 *
 * Calls are long (5 to 50 ms of CPU) compared with a sampling interval.  On
 * a machine with fewer CPUs than busy threads a thread is often preempted at
 * its next kernel entry after its time slice ends, which here is the clock
 * read at the end of a call; it then waits there, and the CPU time it ran
 * since the previous sample is attributed to that call.  A call shorter than
 * a sampling interval would also be credited with the end of the call
 * before it; long calls keep that error small.  Call lengths vary
 * pseudo-randomly around their mean so that a sampler's period cannot lock
 * onto the loop's period either.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Iterations per call at weight 1 (about 1 ms); work_heavy is 50 units. */
#define UNIT_ITERS 800000u
#define MAX_THREADS 64

/*
 * The thread's CPU clock, read with the system call instruction inlined into
 * the caller.  On a busy machine a thread is often preempted on its way back
 * from a system call; with the call made from inside the work function the
 * PC it waits at is still inside that function, so the CPU time it ran up to
 * there is attributed to the function that used it.  (Through libc and the
 * vDSO it would wait at a PC in the vDSO, taking that time with it.)
 */
static inline __attribute__((always_inline)) uint64_t thread_cpu_ns(void)
{
    struct timespec ts = {0, 0};
#if defined(__x86_64__)
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "0"((long)SYS_clock_gettime), "D"((long)CLOCK_THREAD_CPUTIME_ID), "S"(&ts)
                     : "rcx", "r11", "memory");
    (void)ret;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = SYS_clock_gettime;
    register long x0 __asm__("x0") = CLOCK_THREAD_CPUTIME_ID;
    register long x1 __asm__("x1") = (long)&ts;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1) : "memory");
#else
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
#endif
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Keeps the compiler from moving register-only work across the clock reads. */
#define PIN(v) __asm__ volatile("" : "+r"(v))

/* "clock": read CLOCK_MONOTONIC (libc, then the vDSO) inside the work. */
static int read_clock;

static inline __attribute__((always_inline)) uint64_t monotonic_read(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_nsec;
}

/* The body every function runs, expanded into each so that its PCs are the
 * function's own; the multiplier differs so that no two bodies are
 * identical (no identical-code folding).  *CPU_NS gets the call's CPU time. */
#define BURN(iters, mul)                                                                           \
    do {                                                                                           \
        uint64_t t0_ = thread_cpu_ns(), x_ = seed;                                                 \
        PIN(x_);                                                                                   \
        for (uint64_t i_ = 0; i_ < (iters); i_++) {                                                \
            x_ = x_ * (mul) + 1442695040888963407ull;                                              \
            x_ ^= x_ >> 29;                                                                        \
            if (read_clock && (i_ & 15) == 0)                                                      \
                x_ += monotonic_read();                                                            \
        }                                                                                          \
        PIN(x_);                                                                                   \
        *cpu_ns += thread_cpu_ns() - t0_;                                                          \
        return x_;                                                                                 \
    } while (0)

/* noipa: no inlining, cloning or renaming, so the symbol names stay exact. */
__attribute__((noipa)) uint64_t work_heavy(uint64_t seed, uint64_t iters, uint64_t *cpu_ns);
__attribute__((noipa)) uint64_t work_medium(uint64_t seed, uint64_t iters, uint64_t *cpu_ns);
__attribute__((noipa)) uint64_t work_light(uint64_t seed, uint64_t iters, uint64_t *cpu_ns);
__attribute__((noipa)) uint64_t work_tiny(uint64_t seed, uint64_t iters, uint64_t *cpu_ns);

uint64_t work_heavy(uint64_t seed, uint64_t iters, uint64_t *cpu_ns)
{
    BURN(iters, 6364136223846793005ull);
}

uint64_t work_medium(uint64_t seed, uint64_t iters, uint64_t *cpu_ns)
{
    BURN(iters, 2862933555777941757ull);
}

uint64_t work_light(uint64_t seed, uint64_t iters, uint64_t *cpu_ns)
{
    BURN(iters, 3202034522624059733ull);
}

uint64_t work_tiny(uint64_t seed, uint64_t iters, uint64_t *cpu_ns)
{
    BURN(iters, 3935559000370003845ull);
}

typedef uint64_t (*work_fn)(uint64_t, uint64_t, uint64_t *);

static const struct {
    const char *name;
    work_fn fn;
    unsigned weight;
} functions[] = {
    {"work_heavy", work_heavy, 50},
    {"work_medium", work_medium, 30},
    {"work_light", work_light, 15},
    {"work_tiny", work_tiny, 5},
};
#define NFUNCS (sizeof(functions) / sizeof(functions[0]))

struct worker {
    pthread_t thread;
    unsigned index;
    double seconds;
    uint64_t cpu_ns[NFUNCS];
    uint64_t cpu_total; /* the worker's CPU time, all of it */
    uint64_t sink;
};

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (w->index + 1);
    uint64_t end = clock_ns(CLOCK_MONOTONIC) + (uint64_t)(w->seconds * 1e9);
    uint64_t cpu_start = thread_cpu_ns();

    for (unsigned f = 0; clock_ns(CLOCK_MONOTONIC) < end; f = (f + 1) % NFUNCS) {
        /* 70%..130% of the mean length: the mean keeps the weights. */
        rng = rng * 6364136223846793005ull + 1;
        uint64_t jitter = 70 + (rng >> 33) % 61;
        uint64_t iters = functions[f].weight * UNIT_ITERS * jitter / 100;

        w->sink += functions[f].fn(w->sink + rng, iters, &w->cpu_ns[f]);
    }
    w->cpu_total = thread_cpu_ns() - cpu_start;
    return NULL;
}

static int write_truth(const char *path, struct worker *workers, unsigned n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "shares: %s: %s\n", path, strerror(errno));
        return -1;
    }
    for (unsigned fi = 0; fi < NFUNCS; fi++) {
        uint64_t total = 0;
        for (unsigned t = 0; t < n; t++)
            total += workers[t].cpu_ns[fi];
        fprintf(f, "%s %llu\n", functions[fi].name, (unsigned long long)total);
    }
    uint64_t all = 0;
    for (unsigned t = 0; t < n; t++)
        all += workers[t].cpu_total;
    fprintf(f, "cpu_total %llu\n", (unsigned long long)all);
    if (fclose(f) != 0) {
        fprintf(stderr, "shares: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "clock") != 0)) {
        fprintf(stderr, "usage: shares THREADS SECONDS [clock]\n");
        return 2;
    }
    read_clock = argc == 4;
    int nthreads = atoi(argv[1]);
    double seconds = atof(argv[2]);
    if (nthreads < 1 || nthreads > MAX_THREADS || !(seconds > 0)) {
        fprintf(stderr, "shares: THREADS must be 1..%d and SECONDS positive\n", MAX_THREADS);
        return 2;
    }

    static struct worker workers[MAX_THREADS];
    for (int t = 0; t < nthreads; t++) {
        workers[t].index = (unsigned)t;
        workers[t].seconds = seconds;
    }
    for (int t = 1; t < nthreads; t++) {
        int rc = pthread_create(&workers[t].thread, NULL, run_worker, &workers[t]);
        if (rc != 0) {
            fprintf(stderr, "shares: pthread_create: %s\n", strerror(rc));
            return 1;
        }
    }
    run_worker(&workers[0]);
    uint64_t sink = workers[0].sink;
    for (int t = 1; t < nthreads; t++) {
        pthread_join(workers[t].thread, NULL);
        sink ^= workers[t].sink;
    }

    const char *out = getenv("SHARES_OUT");
    if (out && write_truth(out, workers, (unsigned)nthreads) != 0)
        return 1;
    /* The pid is the main thread's tid: tests look for its samples. */
    printf("shares: pid %d, %d threads, checksum %llx\n", (int)getpid(), nthreads,
           (unsigned long long)sink);
    return 0;
}
