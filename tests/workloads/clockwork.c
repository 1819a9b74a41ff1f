/*
 * clockwork.c - ground truth for where samples land around system calls:
 * four functions (work_alpha, _beta, _gamma, _delta: 40/30/20/10 percent of the CPU
 * time) that read their thread's CPU clock every few microseconds, through
 * libc and the vDSO, which for a CPU-time clock makes the system call from
 * the vDSO's clock_gettime.  A sampler that charges a sample where the
 * thread next enters the kernel rather than where it was shows the vDSO's
 * share too wide and the functions' own code too narrow.
 *
 * usage: clockwork THREADS MS [together]
 *   THREADS worker threads run one after another (each created after the
 *   previous one was joined), each burning MS milliseconds of its own CPU
 *   time: "clockwork 200 10" is many short threads, "clockwork 1 3000" one
 *   long-running thread.  With "together" they all run at once (at most
 *   1024): "clockwork 64 150 together" is 64 busy threads.
 *
 * Each function spins for its slice of the thread's CPU time (its weight
 * times 25 us, 50%..150% at random so that no sampler locks onto the
 * loop; a thread starts at a random point of the cycle), measured by the
 * clock reads it makes anyway: its truth is the sum of (clock at its end -
 * clock at its start), the clock reads included.  At the end it prints on
 * stdout:
 *   work_alpha NS      each function's CPU time (and the three others)
 *   cpu_total NS       the workers' CPU time, all of it
 *   clock_reads N      clock reads made, with those of the calibration
 *   call_ns NS         what one read costs, from reads back to back at the end
 *   user_ns, sys_ns NS the process's user and kernel time (getrusage)
 *   clockwork: checksum X
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* Iterations of the body between two clock reads: a few microseconds. */
#define CHUNK_ITERS 1500u
/* A function's slice at weight 1, in nanoseconds of CPU time. */
#define SLICE_UNIT_NS 25000u
#define MAX_TOGETHER 1024
/* Clock reads back to back at the end, to measure what one costs. */
#define CALIBRATION_READS 4000u

static inline __attribute__((always_inline)) uint64_t thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Keeps the compiler from moving register-only work across the clock reads. */
#define PIN(v) __asm__ volatile("" : "+r"(v))

/* Expanded into each function so that its PCs are its own; the multiplier
 * differs so that no two bodies are identical (no identical-code folding). */
#define SPIN(slice_ns, mul)                                                                        \
    do {                                                                                           \
        uint64_t start_ = thread_cpu_ns(), now_ = start_, x_ = seed;                               \
        while (now_ - start_ < (slice_ns)) {                                                       \
            PIN(x_);                                                                               \
            for (unsigned i_ = 0; i_ < CHUNK_ITERS; i_++) {                                        \
                x_ = x_ * (mul) + 1442695040888963407ull;                                          \
                x_ ^= x_ >> 29;                                                                    \
                PIN(x_);                                                                           \
            }                                                                                      \
            now_ = thread_cpu_ns();                                                                \
            (*reads)++;                                                                            \
        }                                                                                          \
        *cpu_ns += now_ - start_;                                                                  \
        return x_;                                                                                 \
    } while (0)

/* noipa: no inlining, cloning or renaming, so the symbol names stay exact. */
__attribute__((noipa)) uint64_t work_alpha(uint64_t seed, uint64_t slice, uint64_t *cpu_ns,
                                           uint64_t *reads);
__attribute__((noipa)) uint64_t work_beta(uint64_t seed, uint64_t slice, uint64_t *cpu_ns,
                                          uint64_t *reads);
__attribute__((noipa)) uint64_t work_gamma(uint64_t seed, uint64_t slice, uint64_t *cpu_ns,
                                           uint64_t *reads);
__attribute__((noipa)) uint64_t work_delta(uint64_t seed, uint64_t slice, uint64_t *cpu_ns,
                                           uint64_t *reads);

uint64_t work_alpha(uint64_t seed, uint64_t slice, uint64_t *cpu_ns, uint64_t *reads)
{
    SPIN(slice, 6364136223846793005ull);
}

uint64_t work_beta(uint64_t seed, uint64_t slice, uint64_t *cpu_ns, uint64_t *reads)
{
    SPIN(slice, 2862933555777941757ull);
}

uint64_t work_gamma(uint64_t seed, uint64_t slice, uint64_t *cpu_ns, uint64_t *reads)
{
    SPIN(slice, 3202034522624059733ull);
}

uint64_t work_delta(uint64_t seed, uint64_t slice, uint64_t *cpu_ns, uint64_t *reads)
{
    SPIN(slice, 3935559000370003845ull);
}

typedef uint64_t (*work_fn)(uint64_t, uint64_t, uint64_t *, uint64_t *);

static const struct {
    const char *name;
    work_fn fn;
    unsigned weight;
} functions[] = {
    {"work_alpha", work_alpha, 4},
    {"work_beta", work_beta, 3},
    {"work_gamma", work_gamma, 2},
    {"work_delta", work_delta, 1},
};
#define NFUNCS (sizeof(functions) / sizeof(functions[0]))

struct worker {
    unsigned index;
    uint64_t budget_ns;
    uint64_t cpu_ns[NFUNCS];
    uint64_t cpu_total;
    uint64_t reads;
    uint64_t sink;
};

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    uint64_t rng = 0x9e3779b97f4a7c15ull * (w->index + 1);
    uint64_t start = thread_cpu_ns();
    /* Each thread starts at a random point of the cycle, a function as
     * likely as its share of the time: a sampler that samples every thread
     * at the same CPU-time offsets from its start (the kernel's task-clock
     * periods) would otherwise find short threads at the same places every
     * time. */
    rng = rng * 6364136223846793005ull + 1;
    unsigned f = 0, pick = (unsigned)(rng >> 33) % 10; /* a function by its weight */
    while (pick >= functions[f].weight)
        pick -= functions[f++].weight;
    uint64_t first = 1 + (rng >> 40) % 100;
    for (; thread_cpu_ns() - start < w->budget_ns; f = (f + 1) % NFUNCS) {
        /* 50%..150% of the mean slice: the mean keeps the weights. */
        rng = rng * 6364136223846793005ull + 1;
        uint64_t jitter = 50 + (rng >> 33) % 101;
        uint64_t slice = functions[f].weight * SLICE_UNIT_NS * jitter / 100;
        if (first) {
            slice = slice * first / 100;
            first = 0;
        }
        w->sink += functions[f].fn(w->sink + rng, slice, &w->cpu_ns[f], &w->reads);
    }
    w->cpu_total = thread_cpu_ns() - start;
    return NULL;
}

static uint64_t timeval_ns(struct timeval tv)
{
    return (uint64_t)tv.tv_sec * 1000000000ull + (uint64_t)tv.tv_usec * 1000ull;
}

int main(int argc, char **argv)
{
    bool together = argc == 4 && strcmp(argv[3], "together") == 0;
    if (argc < 3 || argc > 4 || (argc == 4 && !together)) {
        fprintf(stderr, "usage: clockwork THREADS MS [together]\n");
        return 2;
    }
    int nthreads = atoi(argv[1]);
    double ms = atof(argv[2]);
    if (nthreads < 1 || nthreads > (together ? MAX_TOGETHER : 100000) || !(ms > 0)) {
        fprintf(stderr, "clockwork: THREADS must be 1..%d (%s) and MS positive\n",
                together ? MAX_TOGETHER : 100000, together ? "together" : "one after another");
        return 2;
    }
    static struct worker workers[MAX_TOGETHER];
    static pthread_t threads[MAX_TOGETHER];
    struct worker total = {0};
    for (int t = 0; t < nthreads;) {
        /* One at a time, or all of them at once. */
        int batch = together ? nthreads : 1;
        for (int k = 0; k < batch; k++) {
            workers[k] =
                (struct worker){.index = (unsigned)(t + k), .budget_ns = (uint64_t)(ms * 1e6)};
            int rc = pthread_create(&threads[k], NULL, run_worker, &workers[k]);
            if (rc != 0) {
                fprintf(stderr, "clockwork: pthread_create: %s\n", strerror(rc));
                return 1;
            }
        }
        for (int k = 0; k < batch; k++) {
            pthread_join(threads[k], NULL);
            for (unsigned f = 0; f < NFUNCS; f++)
                total.cpu_ns[f] += workers[k].cpu_ns[f];
            total.cpu_total += workers[k].cpu_total;
            total.reads += workers[k].reads;
            total.sink ^= workers[k].sink;
        }
        t += batch;
    }
    /* What a clock read costs, all of it: the vDSO's code, the way into
     * the kernel and back, the kernel's part.  The kernel's own user and
     * system split leaves the way in and out to user time where a
     * hypervisor takes it (a PVM guest: a third of the call), so the call's
     * cost is measured here, by reads back to back. */
    uint64_t calibration_start = thread_cpu_ns(), calibration_end = calibration_start;
    for (unsigned i = 0; i < CALIBRATION_READS; i++)
        calibration_end = thread_cpu_ns();
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    for (unsigned f = 0; f < NFUNCS; f++)
        printf("%s %llu\n", functions[f].name, (unsigned long long)total.cpu_ns[f]);
    printf("cpu_total %llu\n", (unsigned long long)total.cpu_total);
    printf("clock_reads %llu\n", (unsigned long long)(total.reads + CALIBRATION_READS + 1));
    printf("call_ns %llu\n",
           (unsigned long long)((calibration_end - calibration_start) / CALIBRATION_READS));
    printf("user_ns %llu\n", (unsigned long long)timeval_ns(ru.ru_utime));
    printf("sys_ns %llu\n", (unsigned long long)timeval_ns(ru.ru_stime));
    printf("clockwork: checksum %llx\n", (unsigned long long)total.sink);
    return 0;
}
