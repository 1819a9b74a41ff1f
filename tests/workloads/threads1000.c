/*
 * threads1000.c - thread churn: 1000 short-lived threads created and joined
 * in batches, so a profiler sees threads appear and vanish between (and
 * during) its samples while several are alive at once.
 *
 * usage: threads1000 [BATCH]
 *   BATCH threads (default 8) are alive together.  Every other thread does
 *   a little CPU work; each stores a result derived from its index.  The
 *   program checks that every thread ran exactly once and prints
 *   "checksum N", which does not depend on timing, so a run under the
 *   profiler must print the same line as a run without it.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NTHREADS 1000
#define MAX_BATCH 64

struct slot {
    unsigned index;
    unsigned runs;
    uint64_t result;
};

static struct slot slots[NTHREADS];

/* Deterministic per-index value; the odd threads take ~100k steps for it. */
static uint64_t compute(unsigned index)
{
    uint64_t x = index + 1;
    unsigned steps = (index % 2) ? 100000 : 10;
    for (unsigned i = 0; i < steps; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

static void *thread_main(void *arg)
{
    struct slot *s = arg;
    s->result = compute(s->index);
    s->runs++;
    return NULL;
}

int main(int argc, char **argv)
{
    int batch = argc > 1 ? atoi(argv[1]) : 8;
    if (batch < 1 || batch > MAX_BATCH) {
        fprintf(stderr, "usage: threads1000 [BATCH 1..%d]\n", MAX_BATCH);
        return 2;
    }

    pthread_t threads[MAX_BATCH];
    for (unsigned base = 0; base < NTHREADS; base += (unsigned)batch) {
        unsigned n = NTHREADS - base < (unsigned)batch ? NTHREADS - base : (unsigned)batch;
        for (unsigned i = 0; i < n; i++) {
            slots[base + i].index = base + i;
            int rc = pthread_create(&threads[i], NULL, thread_main, &slots[base + i]);
            if (rc != 0) {
                fprintf(stderr, "threads1000: pthread_create %u: %s\n", base + i, strerror(rc));
                return 1;
            }
        }
        for (unsigned i = 0; i < n; i++) {
            int rc = pthread_join(threads[i], NULL);
            if (rc != 0) {
                fprintf(stderr, "threads1000: pthread_join %u: %s\n", base + i, strerror(rc));
                return 1;
            }
        }
    }

    /* The checksum mixes every result with its position, so a missing,
     * repeated or misplaced result changes it. */
    uint64_t checksum = 0;
    for (unsigned i = 0; i < NTHREADS; i++) {
        if (slots[i].runs != 1 || slots[i].result != compute(i)) {
            fprintf(stderr, "threads1000: thread %u ran %u times, result %llx\n", i, slots[i].runs,
                    (unsigned long long)slots[i].result);
            return 1;
        }
        checksum = (checksum ^ slots[i].result) * 1099511628211ull + i;
    }
    printf("threads %d checksum %llu\n", NTHREADS, (unsigned long long)checksum);
    return 0;
}
