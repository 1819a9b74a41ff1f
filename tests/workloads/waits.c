/*
 * waits.c - short waits between short computations, timed by the program
 * itself, for the tests of the wall-clock view of a thread that waits often.
 *
 * usage: waits SECONDS SLEEP_MS READ_MS COMPUTE_MS [THREADS]
 *   THREADS workers (default 1) each repeat, for SECONDS of wall time, a
 *   round of three phases:
 *     wait_sleep()    nanosleep for SLEEP_MS;
 *     wait_read()     read() on a pipe until READ_MS have passed; a feeder
 *                     thread writes one byte into the pipe every
 *                     millisecond while the worker is in this phase, so
 *                     the worker blocks in read() up to a millisecond at a
 *                     time;
 *     wait_compute()  spins for COMPUTE_MS of wall time.
 *   Each phase is timed with CLOCK_MONOTONIC from its start to its end, and
 *   at the end the program prints, summed over the workers,
 *     "waits: sleep NS read NS compute NS wall NS"
 *   where wall is the workers' whole running time, so a test can compare
 *   each phase's share of a worker's wall time with a profile's.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct worker {
    pthread_t thread;
    int pipe[2];
    atomic_int reading; /* the feeder writes only while this is set */
    uint64_t sleep_ns, read_ns, compute_ns;
    uint64_t in_sleep, in_read, in_compute, wall;
};

static uint64_t end_time;
static atomic_int workers_done;
static struct worker workers[MAX_THREADS];
static int nworkers;
static volatile uint64_t sink;

/* noipa: no inlining, cloning or renaming, so the symbol names stay exact. */

__attribute__((noipa)) uint64_t wait_sleep(uint64_t ns)
{
    uint64_t start = now_ns();
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u),
                          .tv_nsec = (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
    return now_ns() - start;
}

__attribute__((noipa)) uint64_t wait_read(struct worker *w)
{
    uint64_t start = now_ns(), end = start + w->read_ns, now = start;
    char buf[64];
    atomic_store(&w->reading, 1);
    while (now < end) {
        if (read(w->pipe[0], buf, sizeof(buf)) < 0 && errno != EINTR)
            break;
        now = now_ns();
    }
    atomic_store(&w->reading, 0);
    return now - start;
}

__attribute__((noipa)) uint64_t wait_compute(uint64_t ns)
{
    uint64_t start = now_ns(), end = start + ns, now = start, x = sink;
    while (now < end) {
        for (int i = 0; i < 200; i++)
            x = x * 6364136223846793005u + 1442695040888963407u;
        now = now_ns();
    }
    sink = x;
    return now - start;
}

/* WAITS_LOG=FILE: the first worker's phases, one line each ("PHASE
 * START END", CLOCK_REALTIME ns, the profile's clock), to compare a
 * profile's entries with, interval by interval. */
static FILE *phase_log;

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void log_phase(const struct worker *w, char phase, uint64_t start)
{
    if (phase_log && w == &workers[0])
        fprintf(phase_log, "%c %llu %llu\n", phase, (unsigned long long)start,
                (unsigned long long)realtime_ns());
}

static void *run_worker(void *arg)
{
    struct worker *w = arg;
    uint64_t start = now_ns();
    while (now_ns() < end_time) {
        uint64_t t = realtime_ns();
        w->in_sleep += wait_sleep(w->sleep_ns);
        log_phase(w, 's', t);
        t = realtime_ns();
        w->in_read += wait_read(w);
        log_phase(w, 'r', t);
        t = realtime_ns();
        w->in_compute += wait_compute(w->compute_ns);
        log_phase(w, 'c', t);
    }
    w->wall = now_ns() - start;
    atomic_fetch_add(&workers_done, 1);
    return NULL;
}

/* One byte every millisecond into the pipe of each worker that reads. */
static void *run_feeder(void *arg)
{
    (void)arg;
    struct timespec next;
    clock_gettime(CLOCK_MONOTONIC, &next);
    while (atomic_load(&workers_done) < nworkers) {
        next.tv_nsec += 1000000;
        if (next.tv_nsec >= 1000000000) {
            next.tv_nsec -= 1000000000;
            next.tv_sec++;
        }
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
            ;
        for (int i = 0; i < nworkers; i++)
            if (atomic_load(&workers[i].reading) && write(workers[i].pipe[1], "x", 1) < 0)
                perror("waits: write");
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: waits SECONDS SLEEP_MS READ_MS COMPUTE_MS [THREADS]\n");
        return 2;
    }
    nworkers = argc == 6 ? atoi(argv[5]) : 1;
    if (nworkers < 1 || nworkers > MAX_THREADS) {
        fprintf(stderr, "waits: THREADS is 1 to %d\n", MAX_THREADS);
        return 2;
    }
    const char *log = getenv("WAITS_LOG");
    if (log && *log && !(phase_log = fopen(log, "w"))) {
        perror(log);
        return 1;
    }
    end_time = now_ns() + (uint64_t)(atof(argv[1]) * 1e9);
    for (int i = 0; i < nworkers; i++) {
        struct worker *w = &workers[i];
        w->sleep_ns = (uint64_t)(atof(argv[2]) * 1e6);
        w->read_ns = (uint64_t)(atof(argv[3]) * 1e6);
        w->compute_ns = (uint64_t)(atof(argv[4]) * 1e6);
        if (pipe(w->pipe) != 0) {
            perror("waits: pipe");
            return 1;
        }
    }
    pthread_t feeder;
    if (pthread_create(&feeder, NULL, run_feeder, NULL) != 0)
        return 1;
    for (int i = 0; i < nworkers; i++)
        if (pthread_create(&workers[i].thread, NULL, run_worker, &workers[i]) != 0)
            return 1;
    uint64_t sleep = 0, rd = 0, compute = 0, wall = 0;
    for (int i = 0; i < nworkers; i++) {
        pthread_join(workers[i].thread, NULL);
        sleep += workers[i].in_sleep;
        rd += workers[i].in_read;
        compute += workers[i].in_compute;
        wall += workers[i].wall;
    }
    pthread_join(feeder, NULL);
    if (phase_log)
        fclose(phase_log);
    printf("waits: sleep %llu read %llu compute %llu wall %llu\n", (unsigned long long)sleep,
           (unsigned long long)rd, (unsigned long long)compute, (unsigned long long)wall);
    return 0;
}
