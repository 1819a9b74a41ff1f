/*
 * forker.c - a target that makes processes, for the process-tree tests.
 *
 * usage: forker spin SECONDS CODE
 *          Prints "forker: pid N", works in spin_work() for SECONDS and
 *          exits with CODE.
 *        forker tree SECONDS PROGRAM [ARGS...]
 *          Makes three children and works in parent_work() for SECONDS
 *          itself, then waits for them:
 *            - vfork() + execv(PROGRAM, ARGS): whatever PROGRAM does;
 *            - fork(): works in fork_child_work() for SECONDS, exits 11;
 *            - a raw clone system call without CLONE_THREAD and with no
 *              exit signal: a process of its own that a tracer learns
 *              about as a clone event, not a fork; works in
 *              clone_child_work() for SECONDS, exits 13.
 *          Prints "forker: pid N", then one line per child,
 *          "forker: fork|vfork|clone PID exit CODE" (or "signal N"), and
 *          exits 0 when the fork and clone children exited 11 and 13 and
 *          PROGRAM could be executed, 1 otherwise.
 *        forker vfork CPU_MS PROGRAM [ARGS...]
 *          vfork()s a child that uses CPU_MS milliseconds of CPU time in
 *          vfork_child_work() before it execs PROGRAM, and measures how
 *          long the parent stayed suspended in vfork() (normally CPU_MS and
 *          the exec, a little more on a busy machine).  Prints
 *          "forker: pid N", then "forker: vfork PID blocked MS ms exit
 *          CODE"; exits 0 when PROGRAM could be executed.
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

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Each kind of process works in a function of its own, so a test can tell
 * whose samples it sees. */
#define BURN(seconds)                                                                              \
    do {                                                                                           \
        double end_ = now_s() + (seconds);                                                         \
        uint64_t x_ = 1;                                                                           \
        while (now_s() < end_) {                                                                   \
            for (int i_ = 0; i_ < 20000; i_++) {                                                   \
                x_ ^= x_ >> 29;                                                                    \
                x_ *= 0xbf58476d1ce4e5b9ULL;                                                       \
                __asm__ volatile("" : "+r"(x_));                                                   \
            }                                                                                      \
        }                                                                                          \
        sink += x_;                                                                                \
    } while (0)

KEEP void spin_work(double seconds)
{
    BURN(seconds);
}

KEEP void parent_work(double seconds)
{
    BURN(seconds);
}

KEEP void fork_child_work(double seconds)
{
    BURN(seconds);
}

KEEP void clone_child_work(double seconds)
{
    BURN(seconds);
}

/* CPU time, not wall time: a child kept stopped takes longer to finish. */
KEEP void vfork_child_work(double cpu_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    double end = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6 + cpu_ms;
    uint64_t x = 1;
    do {
        for (int i = 0; i < 2000; i++) {
            x ^= x >> 29;
            x *= 0xbf58476d1ce4e5b9ULL;
            __asm__ volatile("" : "+r"(x));
        }
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    } while ((double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6 < end);
    sink += x;
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

static int tree(double seconds, char **program)
{
    printf("forker: pid %d\n", (int)getpid());
    fflush(stdout);

    /* vfork first: the parent waits for the exec before making the others. */
    pid_t vforked = vfork();
    if (vforked == 0) {
        execv(program[0], program);
        _exit(127);
    }
    pid_t forked = fork();
    if (forked == 0) {
        fork_child_work(seconds);
        _exit(11);
    }
    /* No new stack: like fork, the child goes on with a copy of ours. */
    pid_t cloned = (pid_t)syscall(SYS_clone, 0UL, NULL, NULL, NULL, 0UL);
    if (cloned == 0) {
        clone_child_work(seconds);
        _exit(13);
    }
    if (forked < 0 || vforked < 0 || cloned < 0) {
        perror("forker: fork/vfork/clone");
        return 1;
    }

    parent_work(seconds);

    struct {
        const char *kind;
        pid_t pid;
        int status;
    } kids[3] = {{"fork", forked, 0}, {"vfork", vforked, 0}, {"clone", cloned, 0}};
    for (int i = 0; i < 3; i++) {
        /* __WALL: the clone child sends no SIGCHLD when it exits. */
        while (waitpid(kids[i].pid, &kids[i].status, __WALL) < 0) {
            if (errno != EINTR) {
                perror("forker: waitpid");
                return 1;
            }
        }
        char text[64];
        describe(text, sizeof(text), kids[i].status);
        printf("forker: %s %d %s\n", kids[i].kind, (int)kids[i].pid, text);
    }
    int ok = WIFEXITED(kids[0].status) && WEXITSTATUS(kids[0].status) == 11 &&
             !(WIFEXITED(kids[1].status) && WEXITSTATUS(kids[1].status) == 127) &&
             WIFEXITED(kids[2].status) && WEXITSTATUS(kids[2].status) == 13;
    return ok ? 0 : 1;
}

static int timed_vfork(double cpu_ms, char **program)
{
    printf("forker: pid %d\n", (int)getpid());
    fflush(stdout);
    double start = now_s();
    pid_t child = vfork();
    if (child == 0) {
        vfork_child_work(cpu_ms);
        execv(program[0], program);
        _exit(127);
    }
    double blocked_ms = (now_s() - start) * 1e3;
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
    fprintf(stderr, "usage: forker spin SECONDS CODE\n"
                    "       forker tree SECONDS PROGRAM [ARGS...]\n"
                    "       forker vfork CPU_MS PROGRAM [ARGS...]\n");
    return 2;
}
