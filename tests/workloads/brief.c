/*
 * brief.c - short-lived processes and threads that know their own truth,
 * for the tests of what a profiler makes of a process's (or thread's)
 * first and last milliseconds.
 *
 * usage: brief run MS
 *        brief processes N MS
 *        brief threads N MS
 *   run: one process spends MS ms of its CPU time in four functions one
 *   after the other, brief_first, brief_second, brief_third and brief_last,
 *   for 40, 30, 20 and 10% of it, each measured with the thread's own CPU
 *   clock, and prints "brief: first NS second NS third NS last NS" (the
 *   CPU time each function measured).
 *   processes: runs "brief run MS" N times, one after the other (fork,
 *   exec of this program, wait: a shell loop), and prints the sums of what
 *   the runs printed in the same line, then "brief: children cpu NS" (the
 *   CPU time of the N processes, start and exit included, by getrusage).
 *   threads: the same in N threads of this process, each created when the
 *   previous one has been joined (a pool that spawns a thread per task).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NFUNCS 4

/* The thread's CPU clock, read with the system call instruction inlined
 * into the function (as shares.c): a thread preempted on its way back from
 * the call waits at a PC of the function that used the time. */
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
#else
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
#endif
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spins until the thread has used NS more of CPU time; returns what its
 * clock measured from the first read to the last. */
#define SPIN_FOR(ns, mult)                                                                         \
    do {                                                                                           \
        uint64_t start_ = thread_cpu_ns(), now_ = start_, x_ = start_;                             \
        while (now_ - start_ < (ns)) {                                                             \
            for (int i_ = 0; i_ < 2000; i_++)                                                      \
                x_ = x_ * (mult) + 1442695040888963407ull;                                         \
            __asm__ volatile("" : "+r"(x_));                                                       \
            now_ = thread_cpu_ns();                                                                \
        }                                                                                          \
        sink += x_ & 1;                                                                            \
        return now_ - start_;                                                                      \
    } while (0)

static volatile uint64_t sink;

/* noipa: no inlining, cloning or renaming, so the symbol names stay exact. */
__attribute__((noipa)) uint64_t brief_first(uint64_t ns);
__attribute__((noipa)) uint64_t brief_second(uint64_t ns);
__attribute__((noipa)) uint64_t brief_third(uint64_t ns);
__attribute__((noipa)) uint64_t brief_last(uint64_t ns);

uint64_t brief_first(uint64_t ns)
{
    SPIN_FOR(ns, 6364136223846793005ull);
}

uint64_t brief_second(uint64_t ns)
{
    SPIN_FOR(ns, 2862933555777941757ull);
}

uint64_t brief_third(uint64_t ns)
{
    SPIN_FOR(ns, 3202034522624059733ull);
}

uint64_t brief_last(uint64_t ns)
{
    SPIN_FOR(ns, 3935559000370003845ull);
}

/* One task: the four functions for 40/30/20/10% of MS of CPU time. */
static void task(double ms, uint64_t measured[NFUNCS])
{
    uint64_t total = (uint64_t)(ms * 1e6);
    measured[0] = brief_first(total * 4 / 10);
    measured[1] = brief_second(total * 3 / 10);
    measured[2] = brief_third(total * 2 / 10);
    measured[3] = brief_last(total / 10);
}

static void print_line(const uint64_t ns[NFUNCS])
{
    printf("brief: first %llu second %llu third %llu last %llu\n", (unsigned long long)ns[0],
           (unsigned long long)ns[1], (unsigned long long)ns[2], (unsigned long long)ns[3]);
    fflush(stdout);
}

static int parse_line(const char *line, uint64_t ns[NFUNCS])
{
    unsigned long long v[NFUNCS];
    if (sscanf(line, "brief: first %llu second %llu third %llu last %llu", &v[0], &v[1], &v[2],
               &v[3]) != NFUNCS)
        return -1;
    for (int f = 0; f < NFUNCS; f++)
        ns[f] = v[f];
    return 0;
}

/* Runs "SELF run MS" with its output into a pipe, waits for it, and adds
 * what it printed to SUM. */
static int run_process(const char *self, const char *ms, uint64_t sum[NFUNCS])
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        close(fds[0]);
        close(fds[1]);
        execl(self, self, "run", ms, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char buf[256];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof(buf) - 1 &&
           ((n = read(fds[0], buf + got, sizeof(buf) - 1 - got)) > 0 || (n < 0 && errno == EINTR)))
        got += n > 0 ? (size_t)n : 0;
    buf[got] = '\0';
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    uint64_t ns[NFUNCS];
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || parse_line(buf, ns) != 0)
        return -1;
    for (int f = 0; f < NFUNCS; f++)
        sum[f] += ns[f];
    return 0;
}

struct thread_task {
    double ms;
    uint64_t ns[NFUNCS];
};

static void *run_thread(void *arg)
{
    struct thread_task *t = arg;
    task(t->ms, t->ns);
    return NULL;
}

int main(int argc, char **argv)
{
    uint64_t sum[NFUNCS] = {0};
    if (argc == 3 && strcmp(argv[1], "run") == 0) {
        task(atof(argv[2]), sum);
        print_line(sum);
        return 0;
    }
    if (argc != 4 || (strcmp(argv[1], "processes") != 0 && strcmp(argv[1], "threads") != 0)) {
        fprintf(stderr, "usage: brief run MS | brief processes N MS | brief threads N MS\n");
        return 2;
    }
    int n = atoi(argv[2]);
    double ms = atof(argv[3]);
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0) {
        perror("brief: /proc/self/exe");
        return 1;
    }
    self[len] = '\0';
    for (int i = 0; i < n; i++) {
        if (argv[1][0] == 'p') {
            if (run_process(self, argv[3], sum) != 0) {
                fprintf(stderr, "brief: run %d failed\n", i);
                return 1;
            }
            continue;
        }
        struct thread_task t = {.ms = ms};
        pthread_t th;
        if (pthread_create(&th, NULL, run_thread, &t) != 0 || pthread_join(th, NULL) != 0) {
            fprintf(stderr, "brief: thread %d failed\n", i);
            return 1;
        }
        for (int f = 0; f < NFUNCS; f++)
            sum[f] += t.ns[f];
    }
    print_line(sum);
    if (argv[1][0] == 'p') {
        struct rusage ru;
        getrusage(RUSAGE_CHILDREN, &ru);
        uint64_t us = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000u +
                      (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
        printf("brief: children cpu %llu\n", (unsigned long long)us * 1000u);
    }
    return 0;
}
