/*
 * callers.c - a target with known call stacks, for the stack unwinders.
 *
 * usage: callers [SECONDS]
 *   Runs for SECONDS (default 10), then exits 0.  Two threads (main and
 *   worker_main) spend most of their time in hot(), reached through
 *   via_a() on 7 calls out of 10 and through via_b() on the other 3, with
 *   equal work per call, so 70 % of the time in hot() has via_a() as its
 *   caller.  main() also sorts with qsort() and a comparator that calls
 *   weigh() (a callback from libc), and a SIGALRM timer (setitimer) runs
 *   alarm_work() from a signal handler, on top of whatever it interrupted.
 *
 * Every function a test looks for is noinline and noclone and does
 * something after its call (no tail calls), so each keeps its own frame in
 * both builds (with and without frame pointers).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#define KEEP __attribute__((noinline, noclone))
#define BARRIER() __asm__ volatile("" ::: "memory")

enum {
    HOT_ROUNDS = 20000, /* work per hot() call */
    WEIGH_ROUNDS = 300, /* work per comparator call */
    ALARM_ROUNDS = 200000,
    SORT_LEN = 128, /* small enough that glibc sorts on the stack */
    CALLS_PER_SORT = 100,
};

static volatile uint64_t sink;
static volatile int stop;

/* Inline in every worker function so that the sampled PC names it. */
#define MIX(x, rounds)                                                                             \
    for (int r_ = 0; r_ < (rounds); r_++) {                                                        \
        (x) ^= (x) >> 29;                                                                          \
        (x) *= 0xbf58476d1ce4e5b9ULL;                                                              \
        BARRIER();                                                                                 \
    }

/* The volatile local gives hot a stack frame: GCC sets up no frame pointer
 * in a leaf that never touches the stack, even with -fno-omit-frame-pointer,
 * and the frame-pointer walk would then miss its caller (docs/stacks.md). */
KEEP uint64_t hot(uint64_t seed)
{
    volatile uint64_t start = seed;
    uint64_t x = start;
    MIX(x, HOT_ROUNDS);
    return x + start;
}

/* Different constants keep the two callers from being merged (ICF). */
KEEP uint64_t via_a(uint64_t seed)
{
    uint64_t x = hot(seed ^ 0xa);
    BARRIER();
    return x + 0xa;
}

KEEP uint64_t via_b(uint64_t seed)
{
    uint64_t x = hot(seed ^ 0xb);
    BARRIER();
    return x * 0xb;
}

KEEP uint64_t weigh(int v)
{
    uint64_t x = (uint64_t)v;
    MIX(x, WEIGH_ROUNDS);
    return x;
}

static int compare_weighted(const void *a, const void *b)
{
    uint64_t wa = weigh(*(const int *)a), wb = weigh(*(const int *)b);
    BARRIER();
    return (wa > wb) - (wa < wb);
}

KEEP void sort_pass(unsigned seed)
{
    int values[SORT_LEN];
    for (int i = 0; i < SORT_LEN; i++)
        values[i] = (int)(seed * 2654435761u + (unsigned)i * 40503u);
    qsort(values, SORT_LEN, sizeof(values[0]), compare_weighted);
    sink += (uint64_t)values[0];
}

KEEP void alarm_work(void)
{
    uint64_t x = sink;
    MIX(x, ALARM_ROUNDS);
    sink += x;
}

static void on_alarm(int sig)
{
    (void)sig;
    alarm_work();
    BARRIER();
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void *worker_main(void *arg)
{
    (void)arg;
    uint64_t acc = 0;
    for (uint64_t i = 0; !stop; i++) {
        /* 7 of every 10 calls go through via_a. */
        acc += i % 10 < 7 ? via_a(i) : via_b(i);
        BARRIER();
    }
    sink += acc;
    return NULL;
}

int main(int argc, char **argv)
{
    double seconds = argc > 1 ? atof(argv[1]) : 10.0;
    double end = now() + seconds;

    /* Only the main thread takes the alarm, so its handler interrupts a
     * known mix of hot(), sorting and libc. */
    sigset_t alarm_set;
    sigemptyset(&alarm_set);
    sigaddset(&alarm_set, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &alarm_set, NULL);
    pthread_t worker;
    if (pthread_create(&worker, NULL, worker_main, NULL) != 0)
        return 1;
    pthread_sigmask(SIG_UNBLOCK, &alarm_set, NULL);

    struct sigaction sa = {.sa_handler = on_alarm};
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval every_5ms = {{0, 5000}, {0, 5000}};
    setitimer(ITIMER_REAL, &every_5ms, NULL);

    uint64_t acc = 0;
    for (uint64_t i = 0; now() < end; i++) {
        for (int j = 0; j < CALLS_PER_SORT; j++) {
            uint64_t k = i * CALLS_PER_SORT + (uint64_t)j;
            acc += k % 10 < 7 ? via_a(k) : via_b(k);
            BARRIER();
        }
        sort_pass((unsigned)i);
    }
    sink += acc;

    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    stop = 1;
    pthread_join(worker, NULL);
    return 0;
}
