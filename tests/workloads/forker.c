/*
 * forker.c - a target that makes processes, for the process-tree tests.
 *
 * usage: forker spin SECONDS CODE
 *          Prints "forker: pid N", works in spin_work() for SECONDS and
 *          exits with CODE.
 *        forker tree SECONDS PROGRAM [ARGS...]
 *          Prints "forker: pid N", then makes three children, one after the
 *          other, waiting for each before the next (so that only one
 *          process works at a time):
 *            - vfork() + execv(PROGRAM, ARGS): whatever PROGRAM does;
 *            - fork(): works in fork_child_work() for SECONDS, exits 11;
 *            - a raw clone system call without CLONE_THREAD and with no
 *              exit signal: a process of its own that a tracer learns
 *              about as a clone event, not a fork; works in
 *              clone_child_work() for SECONDS, exits 13.
 *          Between the first and the second it works in parent_work() for
 *          SECONDS itself.  Prints "forker: fork|vfork|clone PID exit CODE"
 *          (or "signal N") per child, and exits 0 when the fork and clone
 *          children exited 11 and 13 and PROGRAM could be executed.
 *        forker vfork CPU_MS PROGRAM [ARGS...]
 *          vfork()s a child that uses CPU_MS milliseconds of CPU time in
 *          vfork_child_work() (reading its CPU clock, a system call, as it
 *          goes: a posix_spawn child makes system calls before its exec
 *          too) and then execs PROGRAM.  The parent measures how long it
 *          stayed suspended in vfork(): normally CPU_MS and the exec, a
 *          little more on a busy machine.  Prints "forker: pid N", then
 *          "forker: vfork PID blocked MS ms exit CODE"; exits 0 when
 *          PROGRAM could be executed.
 *        forker late SECONDS CODE
 *          fork()s a child that exits CODE at once, works in parent_work()
 *          for SECONDS, and only then waits for it: the child stays a
 *          zombie meanwhile.  Prints "forker: pid N", then "forker: late
 *          PID exit CODE"; exits 0.
 *
 * Work is timed by the wall clock, read through the vDSO: no system call in
 * the loops, so a sampled PC is in the work function, not at a system
 * call's return where a preempted thread tends to wait.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEEP __attribute__((noinline, noclone))

static volatile uint64_t sink;

static double clock_s(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Each kind of process works in a function of its own, so a test can tell
 * whose samples it sees. */
#define BURN(clock, seconds, rounds)                                                               \
    do {                                                                                           \
        double end_ = clock_s(clock) + (seconds);                                                  \
        uint64_t x_ = 1;                                                                           \
        while (clock_s(clock) < end_) {                                                            \
            for (int i_ = 0; i_ < (rounds); i_++) {                                                \
                x_ ^= x_ >> 29;                                                                    \
                x_ *= 0xbf58476d1ce4e5b9ULL;                                                       \
                __asm__ volatile("" : "+r"(x_));                                                   \
            }                                                                                      \
        }                                                                                          \
        sink += x_;                                                                                \
    } while (0)

KEEP void spin_work(double seconds)
{
    BURN(CLOCK_MONOTONIC, seconds, 20000);
}

KEEP void parent_work(double seconds)
{
    BURN(CLOCK_MONOTONIC, seconds, 20000);
}

KEEP void fork_child_work(double seconds)
{
    BURN(CLOCK_MONOTONIC, seconds, 20000);
}

KEEP void clone_child_work(double seconds)
{
    BURN(CLOCK_MONOTONIC, seconds, 20000);
}

/* CPU time, not wall time: a child kept stopped takes longer to finish. */
KEEP void vfork_child_work(double cpu_ms)
{
    BURN(CLOCK_PROCESS_CPUTIME_ID, cpu_ms / 1e3, 2000);
}

static void describe(char *buf, size_t size, int status)
{
    if (WIFEXITED(status))
        snprintf(buf, size, "exit %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, size, "signal %d", WTERMSIG(status));
    else
        snprintf(buf, size, "status 0x%x", (unsigned)status);
}

/* Wait for PID (__WALL: a clone child may send no SIGCHLD) and report it. */
static int reap(const char *kind, pid_t pid)
{
    if (pid < 0) {
        fprintf(stderr, "forker: %s: %s\n", kind, strerror(errno));
        exit(1);
    }
    int status;
    while (waitpid(pid, &status, __WALL) < 0) {
        if (errno != EINTR) {
            perror("forker: waitpid");
            exit(1);
        }
    }
    char text[64];
    describe(text, sizeof(text), status);
    printf("forker: %s %d %s\n", kind, (int)pid, text);
    fflush(stdout);
    return status;
}

static int tree(double seconds, char **program)
{
    printf("forker: pid %d\n", (int)getpid());
    fflush(stdout);

    pid_t vforked = vfork();
    if (vforked == 0) {
        execv(program[0], program);
        _exit(127);
    }
    int vfork_status = reap("vfork", vforked);

    parent_work(seconds);

    pid_t forked = fork();
    if (forked == 0) {
        fork_child_work(seconds);
        _exit(11);
    }
    int fork_status = reap("fork", forked);

    /* No new stack: like fork, the child goes on with a copy of ours. */
    pid_t cloned = (pid_t)syscall(SYS_clone, 0UL, NULL, NULL, NULL, 0UL);
    if (cloned == 0) {
        clone_child_work(seconds);
        _exit(13);
    }
    int clone_status = reap("clone", cloned);

    int ok = WIFEXITED(fork_status) && WEXITSTATUS(fork_status) == 11 &&
             !(WIFEXITED(vfork_status) && WEXITSTATUS(vfork_status) == 127) &&
             WIFEXITED(clone_status) && WEXITSTATUS(clone_status) == 13;
    return ok ? 0 : 1;
}

static int timed_vfork(double cpu_ms, char **program)
{
    printf("forker: pid %d\n", (int)getpid());
    fflush(stdout);
    double start = clock_s(CLOCK_MONOTONIC);
    pid_t child = vfork();
    if (child == 0) {
        vfork_child_work(cpu_ms);
        execv(program[0], program);
        _exit(127);
    }
    double blocked_ms = (clock_s(CLOCK_MONOTONIC) - start) * 1e3;
    if (child < 0) {
        perror("forker: vfork");
        return 1;
    }
    int status;
    while (waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) {
            perror("forker: waitpid");
            return 1;
        }
    }
    char text[64];
    describe(text, sizeof(text), status);
    printf("forker: vfork %d blocked %.1f ms %s\n", (int)child, blocked_ms, text);
    return WIFEXITED(status) && WEXITSTATUS(status) == 127 ? 1 : 0;
}

/* A child that exits CODE at once, reaped only after SECONDS of work. */
static int late_reap(double seconds, int code)
{
    printf("forker: pid %d\n", (int)getpid());
    fflush(stdout);
    pid_t child = fork();
    if (child < 0)
        return 1;
    if (child == 0)
        _exit(code);
    parent_work(seconds);
    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
        return 1;
    printf("forker: late %d exit %d\n", (int)child, WEXITSTATUS(status));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "spin") == 0) {
        printf("forker: pid %d\n", (int)getpid());
        fflush(stdout);
        spin_work(atof(argv[2]));
        return atoi(argv[3]);
    }
    if (argc >= 4 && strcmp(argv[1], "tree") == 0)
        return tree(atof(argv[2]), argv + 3);
    if (argc >= 4 && strcmp(argv[1], "vfork") == 0)
        return timed_vfork(atof(argv[2]), argv + 3);
    if (argc == 4 && strcmp(argv[1], "late") == 0)
        return late_reap(atof(argv[2]), atoi(argv[3]));
    fprintf(stderr, "usage: forker spin SECONDS CODE\n"
                    "       forker tree SECONDS PROGRAM [ARGS...]\n"
                    "       forker vfork CPU_MS PROGRAM [ARGS...]\n"
                    "       forker late SECONDS CODE\n");
    return 2;
}
