/*
 * metered.c - a program that is its own power meter, for the tests and the
 * benchmark of energy per function (docs/pmu.md, "The join").
 *
 * usage: metered POWERFILE SECONDS [TRUTHFILE]
 *   One thread, never sleeping, runs three functions in turn for SECONDS of
 *   wall time: phase_9w, phase_3w and phase_1w, each for a phase of 8 to
 *   12 ms of its own CPU time (drawn at random: on a busy machine a phase
 *   lasts longer, and a thread that waited for a CPU goes on in the phase
 *   it was in, as a program's power follows what it runs).  Entering a phase it writes that phase's
 * power in milliwatts (9000, 3000, 1000) into POWERFILE, which a profiler reads with -p
 * file:POWERFILE,mW.  The file is rewritten in place with one pwrite() of the same length, never
 * truncated, so no read sees an empty file; the numbers differ in one digit, so even a read torn by
 * a write holds one of them. The truth: every phase's wall time (CLOCK_MONOTONIC, from its write to
 *   the next) is added to its function.  At the end it prints, and writes to
 *   TRUTHFILE when given, one line per function "FUNCTION WATTS SECONDS
 *   JOULES CPU_SECONDS" (CPU_SECONDS: its own CPU time in those phases, the
 *   time the energy measured can be the thread's: JOULES less what was
 *   measured while it waited for a CPU), then "cpu SECONDS" (its whole CPU
 *   time) and "wall SECONDS";
 *   TRUTHFILE then lists every phase as "at REALTIME_NS WATTS": the power
 *   the file held from that instant on (the first 100000 phases).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KEEP __attribute__((noinline, noclone, used))

static int power_fd;
static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static volatile uint64_t sink;

#define MAX_LOGGED 100000
static struct {
    uint64_t at;
    unsigned mw;
} logged[MAX_LOGGED];
static size_t nlogged;

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static void write_power(unsigned mw)
{
    char text[16];
    int n = snprintf(text, sizeof(text), "%6u\n", mw);
    if (pwrite(power_fd, text, (size_t)n, 0) != n) {
        perror("metered: pwrite");
        exit(2);
    }
}

/* Arithmetic between clock reads, so samples land in the phase's own code. */
static inline __attribute__((always_inline)) uint64_t churn(uint64_t x)
{
    for (int i = 0; i < 200; i++)
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x;
}

/* Each runs until the thread's CPU time reaches CPU_UNTIL or the wall
 * clock WALL_END. */
KEEP static void phase_9w(uint64_t cpu_until, uint64_t wall_end)
{
    uint64_t x = cpu_until;
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < cpu_until && clock_ns(CLOCK_MONOTONIC) < wall_end)
        x = churn(x);
    sink = x;
}

KEEP static void phase_3w(uint64_t cpu_until, uint64_t wall_end)
{
    uint64_t x = cpu_until;
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < cpu_until && clock_ns(CLOCK_MONOTONIC) < wall_end)
        x = churn(x);
    sink = x;
}

KEEP static void phase_1w(uint64_t cpu_until, uint64_t wall_end)
{
    uint64_t x = cpu_until;
    while (clock_ns(CLOCK_THREAD_CPUTIME_ID) < cpu_until && clock_ns(CLOCK_MONOTONIC) < wall_end)
        x = churn(x);
    sink = x;
}

struct phase {
    const char *name;
    unsigned mw;
    void (*run)(uint64_t cpu_until, uint64_t wall_end);
    uint64_t ns, cpu_ns;
};

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: metered POWERFILE SECONDS [TRUTHFILE]\n");
        return 2;
    }
    power_fd = open(argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (power_fd < 0) {
        perror(argv[1]);
        return 2;
    }
    double seconds = atof(argv[2]);
    struct phase phases[] = {
        {"phase_9w", 9000, phase_9w, 0, 0},
        {"phase_3w", 3000, phase_3w, 0, 0},
        {"phase_1w", 1000, phase_1w, 0, 0},
    };
    rng ^= (uint64_t)getpid();
    uint64_t start = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
    uint64_t end = start + (uint64_t)(seconds * 1e9), now = start;
    for (size_t i = 0; now < end; i = (i + 1) % 3) {
        struct phase *p = &phases[i];
        uint64_t began = now; /* the write lands within microseconds */
        write_power(p->mw);
        if (nlogged < MAX_LOGGED)
            logged[nlogged++] = (typeof(logged[0])){clock_ns(CLOCK_REALTIME), p->mw};
        uint64_t cpu_began = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        p->run(cpu_began + 8000000ULL + next_random() % 4000001ULL, end);
        p->cpu_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_began;
        now = clock_ns(CLOCK_MONOTONIC);
        p->ns += now - began;
    }
    double cpu = (double)(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu0) / 1e9;
    double wall = (double)(now - start) / 1e9;

    FILE *truth = argc == 4 ? fopen(argv[3], "w") : NULL;
    if (argc == 4 && !truth) {
        perror(argv[3]);
        return 2;
    }
    for (int pass = 0; pass < 2; pass++) {
        FILE *out = pass == 0 ? stdout : truth;
        if (!out)
            continue;
        for (size_t i = 0; i < 3; i++)
            fprintf(out, "%s %.3f %.6f %.6f %.6f\n", phases[i].name, phases[i].mw / 1e3,
                    (double)phases[i].ns / 1e9, phases[i].mw / 1e3 * (double)phases[i].ns / 1e9,
                    (double)phases[i].cpu_ns / 1e9);
        fprintf(out, "cpu %.6f\nwall %.6f\n", cpu, wall);
    }
    for (size_t i = 0; truth && i < nlogged; i++)
        fprintf(truth, "at %llu %.3f\n", (unsigned long long)logged[i].at, logged[i].mw / 1e3);
    if (truth && fclose(truth) != 0) {
        perror(argv[3]);
        return 2;
    }
    close(power_fd);
    return 0;
}
