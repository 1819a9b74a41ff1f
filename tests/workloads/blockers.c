/*
 * blockers.c - threads blocked in the calls that restart differently, for
 * the tests of how off-CPU samples name system calls.
 *
 * usage: blockers SECONDS [stop]
 *   Prints "blockers: pid N", then for SECONDS keeps four threads blocked,
 *   each in one call for the whole time:
 *     main        clock_nanosleep (sleep())        restarts as restart_syscall
 *     poller      poll() on a pipe, with a timeout  restarts as restart_syscall
 *     futexer     futex wait with a timeout         restarts as restart_syscall
 *     reader      read() on a pipe                  restarts as read
 *   With "stop", a child process stops and continues this one once
 *   (SIGSTOP, then SIGCONT 100 ms later) a third of the way through, as a
 *   shell's job control would: every call above is then taken out of its
 *   sleep and restarted, whoever traces the process.  At the end main wakes
 *   the others, checks that every call returned as it should (the pipe's
 *   byte, the futex's wake, no EINTR anywhere) and prints "blockers: ok",
 *   or "blockers: FAILED what" with exit 1.
 */
#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int poll_pipe[2], read_pipe[2];
static atomic_int futex_word;
static char failure[256];

static void fail(const char *what, int err)
{
    if (!failure[0])
        snprintf(failure, sizeof(failure), "%s: %s", what, strerror(err));
}

static void *poller(void *arg)
{
    int timeout_ms = (int)(intptr_t)arg;
    struct pollfd p = {.fd = poll_pipe[0], .events = POLLIN};
    int n = poll(&p, 1, timeout_ms);
    if (n != 1)
        fail("poll", n < 0 ? errno : ETIMEDOUT);
    return NULL;
}

static void *futexer(void *arg)
{
    struct timespec timeout = {.tv_sec = (time_t)(intptr_t)arg};
    while (atomic_load(&futex_word) == 0) {
        long rc = syscall(SYS_futex, &futex_word, FUTEX_WAIT_PRIVATE, 0, &timeout, NULL, 0);
        if (rc != 0 && errno != EAGAIN) {
            fail("futex", errno);
            break;
        }
    }
    return NULL;
}

static void *reader(void *arg)
{
    (void)arg;
    char c;
    ssize_t n = read(read_pipe[0], &c, 1);
    if (n != 1)
        fail("read", n < 0 ? errno : EIO);
    return NULL;
}

/* The child: stop and continue the parent once, after DELAY seconds. */
static void stop_and_continue(pid_t parent, double delay)
{
    struct timespec d = {.tv_sec = (time_t)delay, .tv_nsec = (long)((delay - (long)delay) * 1e9)};
    struct timespec pause = {.tv_nsec = 100 * 1000 * 1000};
    nanosleep(&d, NULL);
    kill(parent, SIGSTOP);
    nanosleep(&pause, NULL);
    kill(parent, SIGCONT);
    _exit(0);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "stop") != 0)) {
        fprintf(stderr, "usage: blockers SECONDS [stop]\n");
        return 2;
    }
    double seconds = atof(argv[1]);
    if (!(seconds > 0) || pipe(poll_pipe) != 0 || pipe(read_pipe) != 0)
        return 2;
    printf("blockers: pid %d\n", (int)getpid());
    fflush(stdout);

    /* Timeouts well past the run: the calls only end when woken. */
    intptr_t patience = (intptr_t)seconds + 30;
    pthread_t threads[3];
    if (pthread_create(&threads[0], NULL, poller, (void *)(patience * 1000)) != 0 ||
        pthread_create(&threads[1], NULL, futexer, (void *)patience) != 0 ||
        pthread_create(&threads[2], NULL, reader, NULL) != 0)
        return 1;
    pid_t child = -1;
    if (argc == 3) {
        child = fork();
        if (child == 0)
            stop_and_continue(getppid(), seconds / 3);
    }

    struct timespec rest = {.tv_sec = (time_t)seconds,
                            .tv_nsec = (long)((seconds - (long)seconds) * 1e9)};
    if (clock_nanosleep(CLOCK_MONOTONIC, 0, &rest, NULL) != 0)
        fail("clock_nanosleep", EINTR);

    atomic_store(&futex_word, 1);
    syscall(SYS_futex, &futex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    if (write(poll_pipe[1], "p", 1) != 1 || write(read_pipe[1], "r", 1) != 1)
        fail("write", errno);
    for (int i = 0; i < 3; i++)
        pthread_join(threads[i], NULL);
    if (child > 0)
        waitpid(child, NULL, 0);
    if (failure[0]) {
        printf("blockers: FAILED %s\n", failure);
        return 1;
    }
    printf("blockers: ok\n");
    return 0;
}
