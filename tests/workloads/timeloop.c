/*
 * timeloop.c - a long-running target that checks it was not disturbed, for
 * the attach, crash and blocked-syscall tests.
 *
 * usage: timeloop SECONDS [SUMMARY_FILE]
 *   Prints "timeloop: pid N", then "tick K" every 100 ms (absolute
 *   deadlines, clock_nanosleep) for SECONDS, doing a little work per tick
 *   (tick_work, about 1 ms) whose checksum must never change.  A second
 *   thread (waiter_main) sits blocked in read() on a pipe the whole time; the
 *   main thread writes one byte into it at the end.  SIGTERM ends the loop
 *   early.
 *
 *   At the end it prints one summary line (and writes it to SUMMARY_FILE):
 *     "timeloop: ok ticks=K elapsed=S max_late_ms=L[ terminated]"  exit 0
 *     "timeloop: FAILED <what>"                                   exit 1
 *   It fails when a sleep or the blocked read was interrupted (nothing here
 *   installs a handler that could explain EINTR, so a tracer that injected
 *   a signal or broke a restart would show), when a tick's work gave another
 *   checksum, when the waiter got something else than the byte sent, when a
 *   tick was more than a second late (left stopped), or when ticks are
 *   missing.  Stdout may go away (the reader was killed): SIGPIPE is ignored
 *   and the summary file still says how the run ended.
 *
 *   The process allows any process of its user to trace it (PR_SET_PTRACER),
 *   so attaching works under Yama's ptrace_scope=1 too.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define KEEP __attribute__((noinline, noclone))
#define PERIOD_NS 100000000LL
#define MAX_LATE_NS 1000000000LL
#define WORK_ROUNDS 300000

static volatile sig_atomic_t terminated;
static int wake_pipe[2];
static ssize_t waiter_result;
static int waiter_errno;
static char waiter_byte;

static void on_term(int sig)
{
    (void)sig;
    terminated = 1;
}

static int64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

KEEP uint64_t tick_work(uint64_t seed)
{
    uint64_t x = seed;
    for (int i = 0; i < WORK_ROUNDS; i++) {
        x ^= x >> 31;
        x *= 0x9e3779b97f4a7c15ULL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

void *waiter_main(void *arg)
{
    (void)arg;
    waiter_result = read(wake_pipe[0], &waiter_byte, 1);
    waiter_errno = errno;
    return NULL;
}

static void finish(const char *summary_path, const char *text, int failed)
{
    signal(SIGPIPE, SIG_IGN);
    printf("%s\n", text);
    fflush(stdout);
    if (summary_path) {
        FILE *f = fopen(summary_path, "w");
        if (f) {
            fprintf(f, "%s\n", text);
            fclose(f);
        }
    }
    exit(failed ? 1 : 0);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: timeloop SECONDS [SUMMARY_FILE]\n");
        return 2;
    }
    double seconds = atof(argv[1]);
    const char *summary_path = argc > 2 ? argv[2] : NULL;
    long nticks = (long)(seconds * 1e9 / (double)PERIOD_NS + 0.5);

    signal(SIGPIPE, SIG_IGN);
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0); /* EINVAL without Yama */
    if (pipe(wake_pipe) != 0) {
        perror("pipe");
        return 1;
    }

    /* SIGTERM must interrupt the main thread's sleep, never the waiter. */
    sigset_t term;
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &term, NULL);
    pthread_t waiter;
    if (pthread_create(&waiter, NULL, waiter_main, NULL) != 0) {
        fprintf(stderr, "timeloop: pthread_create failed\n");
        return 1;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    pthread_sigmask(SIG_UNBLOCK, &term, NULL);

    uint64_t reference = tick_work(42);
    printf("timeloop: pid %d\n", (int)getpid());
    fflush(stdout);

    char failure[256] = "";
    int64_t start = now_ns(), max_late = 0;
    long ticks = 0;
    while (ticks < nticks && !terminated) {
        struct timespec deadline;
        int64_t due = start + (ticks + 1) * PERIOD_NS;
        deadline.tv_sec = (time_t)(due / 1000000000LL);
        deadline.tv_nsec = (long)(due % 1000000000LL);
        int rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL);
        if (rc == EINTR && terminated)
            break;
        if (rc != 0) {
            snprintf(failure, sizeof(failure), "clock_nanosleep at tick %ld: %s", ticks + 1,
                     strerror(rc));
            break;
        }
        int64_t late = now_ns() - due;
        if (late > max_late)
            max_late = late;
        ticks++;
        if (tick_work(42) != reference) {
            snprintf(failure, sizeof(failure), "checksum changed at tick %ld", ticks);
            break;
        }
        printf("tick %ld\n", ticks);
        fflush(stdout);
    }
    double elapsed = (double)(now_ns() - start) / 1e9;

    if (write(wake_pipe[1], "x", 1) != 1 && !failure[0])
        snprintf(failure, sizeof(failure), "write to the waiter: %s", strerror(errno));
    pthread_join(waiter, NULL);
    if (!failure[0] && (waiter_result != 1 || waiter_byte != 'x'))
        snprintf(failure, sizeof(failure), "waiter's read returned %zd (%s), byte %d",
                 waiter_result, waiter_result < 0 ? strerror(waiter_errno) : "no error",
                 waiter_byte);
    if (!failure[0] && max_late > MAX_LATE_NS)
        snprintf(failure, sizeof(failure), "a tick was %.1f ms late", (double)max_late / 1e6);
    if (!failure[0] && !terminated && ticks != nticks)
        snprintf(failure, sizeof(failure), "%ld ticks of %ld", ticks, nticks);

    char text[400];
    if (failure[0])
        snprintf(text, sizeof(text), "timeloop: FAILED %s", failure);
    else
        snprintf(text, sizeof(text), "timeloop: ok ticks=%ld elapsed=%.3f max_late_ms=%.1f%s",
                 ticks, elapsed, (double)max_late / 1e6, terminated ? " terminated" : "");
    finish(summary_path, text, failure[0] != '\0');
    return 0;
}
