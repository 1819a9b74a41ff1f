/*
 * manyshares.c - ground truth for significance tests: 64 functions with
 * known CPU weights (0.35 % to 2.8 % each), each call timed with the
 * thread's own CPU clock, so that many keys' shares can be compared
 * between runs: two runs of the same program should differ only by
 * sampling noise, and a share moved on purpose should be found.
 *
 * usage: manyshares SECONDS [INDEX POINTS]
 *   One thread loops over the functions many_00 ... many_77 (the second
 *   digit octal) until it has used SECONDS of CPU time (not wall time: a
 *   profile of it has as many samples on a busy machine as on an idle
 *   one), the I-th getting 1 + I % 8 units of work per round (a
 *   unit is about 0.25 ms of CPU, the length of each call varied
 *   pseudo-randomly by +-30 % around its mean).  With INDEX and POINTS,
 *   many_INDEX gets the extra work that raises its share of the whole by
 *   POINTS percentage points.  With $SHARES_OUT set, the measured CPU time
 *   per function is written there as "many_NN nanoseconds" lines, then
 *   "cpu_total nanoseconds".
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NFUNCS 64
#define UNIT_ITERS 200000u /* about 0.25 ms */

static uint64_t clock_ns(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Keeps the compiler from moving register-only work across the clock reads. */
#define PIN(v) __asm__ volatile("" : "+r"(v))

/* Each function's own loop (its PCs are its own), with its own multiplier
 * so that no two bodies are identical (no identical-code folding). */
#define MANY(n)                                                                                    \
    __attribute__((noipa)) uint64_t many_##n(uint64_t seed, uint64_t iters, uint64_t *cpu_ns);     \
    uint64_t many_##n(uint64_t seed, uint64_t iters, uint64_t *cpu_ns)                             \
    {                                                                                              \
        uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), x = seed;                                 \
        PIN(x);                                                                                    \
        for (uint64_t i = 0; i < iters; i++) {                                                     \
            x = x * (6364136223846793005ull + 2 * (n##u)) + 1442695040888963407ull;                \
            x ^= x >> 29;                                                                          \
        }                                                                                          \
        PIN(x);                                                                                    \
        *cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;                                         \
        return x;                                                                                  \
    }

#define MANY8(a)                                                                                   \
    MANY(a##0) MANY(a##1) MANY(a##2) MANY(a##3) MANY(a##4) MANY(a##5) MANY(a##6) MANY(a##7)
MANY8(0)
MANY8(1)
MANY8(2)
MANY8(3)
MANY8(4)
MANY8(5)
MANY8(6)
MANY8(7)

typedef uint64_t (*work_fn)(uint64_t, uint64_t, uint64_t *);

#define REF(n) many_##n
#define REF8(a)                                                                                    \
    REF(a##0), REF(a##1), REF(a##2), REF(a##3), REF(a##4), REF(a##5), REF(a##6), REF(a##7)
/* Octal-looking names: many_00 ... many_77 (the second digit 0-7). */
static const work_fn functions[NFUNCS] = {REF8(0), REF8(1), REF8(2), REF8(3),
                                          REF8(4), REF8(5), REF8(6), REF8(7)};

int main(int argc, char **argv)
{
    if (argc != 2 && argc != 4) {
        fprintf(stderr, "usage: manyshares SECONDS [INDEX POINTS]\n");
        return 2;
    }
    double seconds = atof(argv[1]);
    double units[NFUNCS], total = 0;
    for (int i = 0; i < NFUNCS; i++) {
        units[i] = 1 + i % 8;
        total += units[i];
    }
    if (argc == 4) {
        int k = atoi(argv[2]);
        double points = atof(argv[3]) / 100;
        if (k < 0 || k >= NFUNCS || points <= 0 || points >= 0.5) {
            fprintf(stderr, "manyshares: INDEX 0-63, POINTS between 0 and 50\n");
            return 2;
        }
        /* (u + d) / (total + d) = u / total + points */
        double want = units[k] / total + points;
        double d = (want * total - units[k]) / (1 - want);
        units[k] += d;
    }
    uint64_t cpu_ns[NFUNCS] = {0}, sink = 0, rng = 0x9e3779b97f4a7c15ull;
    uint64_t cpu_start = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t end = cpu_start + (uint64_t)(seconds * 1e9);
    for (int f = 0; clock_ns(CLOCK_THREAD_CPUTIME_ID) < end; f = (f + 1) % NFUNCS) {
        rng = rng * 6364136223846793005ull + 1;
        uint64_t jitter = 70 + (rng >> 33) % 61; /* 70 %..130 %: the mean keeps the weights */
        uint64_t iters = (uint64_t)(units[f] * UNIT_ITERS) * jitter / 100;
        sink += functions[f](sink + rng, iters, &cpu_ns[f]);
    }
    uint64_t cpu_total = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start;
    const char *out = getenv("SHARES_OUT");
    if (out) {
        FILE *fp = fopen(out, "w");
        if (!fp) {
            fprintf(stderr, "manyshares: %s: %s\n", out, strerror(errno));
            return 1;
        }
        for (int i = 0; i < NFUNCS; i++)
            fprintf(fp, "many_%o%o %llu\n", i / 8, i % 8, (unsigned long long)cpu_ns[i]);
        fprintf(fp, "cpu_total %llu\n", (unsigned long long)cpu_total);
        if (fclose(fp) != 0) {
            fprintf(stderr, "manyshares: %s: %s\n", out, strerror(errno));
            return 1;
        }
    }
    return sink == 42; /* use the result; never 42 in practice */
}
