/*
 * ptrace_stop_site.c - where and when does a PTRACE_INTERRUPT stop take
 * effect for a thread running in user mode?  (docs/recording.md, "Where
 * an interrupt stops a thread".)
 *
 * usage: ptrace_stop_site [-n SAMPLES] [-p PERIOD_US] [-c CHUNK_ITERS] [-s]
 *                         [-b BUSY] [-t TRACER_CPU] [-T TRACEE_CPU]
 *
 * A child (the tracee) runs a loop of CHUNK_ITERS iterations of arithmetic
 * (about 1 ns each) between two system calls (clock_gettime of its thread
 * CPU clock, made with the `syscall` instruction inline; -s: none at all),
 * and every 64 iterations stores the monotonic clock (the vDSO's, no
 * kernel entry) into memory it shares with the tracer.  Every PERIOD_US
 * the tracer reads that clock, interrupts the child, waits for its stop,
 * reads its registers and the child's last stored time, and resumes it.
 *
 * Per stop it learns: whether the child stopped on its way out of a
 * system call (orig_rax >= 0: the stop was taken at the call's exit) or
 * from an interrupt (orig_rax = -1); how long the child went on running
 * its own instructions after the interrupt was sent (its last stored time
 * minus the time of the interrupt; negative when it was not running); and
 * the time from the interrupt to the stop seen by the tracer.  BUSY
 * processes spinning meanwhile take the free CPUs away (with 2 CPUs and
 * -b 1: none is free).  -t/-T pin the tracer and the child to CPUs.
 *
 * Printed: the share of stops at a system call's exit, against the share
 * of its CPU time the child spends in the kernel (its getrusage), and the
 * median and 90th percentile of the run-on and of the stop latency.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if !defined(__x86_64__)
int main(void)
{
    fprintf(stderr, "ptrace_stop_site: x86-64 only (reads orig_rax)\n");
    return 2;
}
#else

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct shared {
    volatile uint64_t last_ns; /* the child's clock after its latest iteration */
    volatile uint64_t calls;
};

static void pin(int cpu)
{
    if (cpu < 0)
        return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        perror("sched_setaffinity");
}

static void tracee(struct shared *sh, unsigned chunk, int no_syscalls)
{
    uint64_t x = 12345;
    for (;;) {
        for (unsigned i = 0; i < chunk; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            x ^= x >> 29;
            __asm__ volatile("" : "+r"(x));
            if ((i & 63) == 63)
                sh->last_ns = now_ns();
        }
        sh->last_ns = now_ns();
        if (!no_syscalls) {
            struct timespec ts;
            long ret;
            __asm__ volatile("syscall"
                             : "=a"(ret)
                             : "0"((long)SYS_clock_gettime), "D"((long)CLOCK_THREAD_CPUTIME_ID),
                               "S"(&ts)
                             : "rcx", "r11", "memory");
            (void)ret;
            sh->calls++;
        }
    }
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t pct(int64_t *v, size_t n, double p)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), cmp_i64);
    size_t k = (size_t)(p * (double)(n - 1));
    return v[k];
}

int main(int argc, char **argv)
{
    int samples = 2000, period_us = 1000, no_syscalls = 0, busy = 0, tracer_cpu = -1,
        tracee_cpu = -1;
    unsigned chunk = 50;
    int opt;
    while ((opt = getopt(argc, argv, "n:p:c:sb:t:T:")) != -1) {
        switch (opt) {
        case 'n':
            samples = atoi(optarg);
            break;
        case 'p':
            period_us = atoi(optarg);
            break;
        case 'c':
            chunk = (unsigned)atoi(optarg);
            break;
        case 's':
            no_syscalls = 1;
            break;
        case 'b':
            busy = atoi(optarg);
            break;
        case 't':
            tracer_cpu = atoi(optarg);
            break;
        case 'T':
            tracee_cpu = atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: ptrace_stop_site [-n SAMPLES] [-p PERIOD_US] "
                            "[-c CHUNK_ITERS] [-s] [-b BUSY] [-t CPU] [-T CPU]\n");
            return 2;
        }
    }
    struct shared *sh =
        mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED)
        return 1;
    pid_t busy_pids[64];
    for (int i = 0; i < busy && i < 64; i++) {
        busy_pids[i] = fork();
        if (busy_pids[i] == 0)
            for (volatile uint64_t x = 0;; x++)
                ;
    }
    pid_t child = fork();
    if (child == 0) {
        pin(tracee_cpu);
        tracee(sh, chunk, no_syscalls);
        _exit(0);
    }
    pin(tracer_cpu);
    if (ptrace(PTRACE_SEIZE, child, 0, 0) != 0) {
        perror("PTRACE_SEIZE");
        return 1;
    }
    usleep(100000); /* let it get going */

    int64_t *run_on = calloc((size_t)samples, sizeof(int64_t));
    int64_t *latency = calloc((size_t)samples, sizeof(int64_t));
    size_t at_syscall = 0, not_running = 0, running_at_syscall = 0, nrunning = 0;
    int64_t *running_run_on = calloc((size_t)samples, sizeof(int64_t));
    uint64_t calls0 = sh->calls;
    struct rusage ru0, ru1;
    getrusage(RUSAGE_CHILDREN, &ru0); /* nothing yet: the child is alive */
    char stat_path[64];
    snprintf(stat_path, sizeof(stat_path), "/proc/%d/stat", (int)child);
    unsigned long long ut0 = 0, st0 = 0, ut1 = 0, st1 = 0;
    FILE *f = fopen(stat_path, "r");
    if (f) {
        if (fscanf(f, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut0,
                   &st0) != 2)
            ut0 = st0 = 0;
        fclose(f);
    }
    uint64_t t_start = now_ns();
    for (int i = 0; i < samples; i++) {
        struct timespec gap = {0, period_us * 1000L};
        nanosleep(&gap, NULL);
        uint64_t sent = now_ns();
        if (ptrace(PTRACE_INTERRUPT, child, 0, 0) != 0) {
            perror("PTRACE_INTERRUPT");
            return 1;
        }
        int status;
        if (waitpid(child, &status, __WALL) != child)
            return 1;
        uint64_t seen = now_ns();
        struct user_regs_struct regs;
        ptrace(PTRACE_GETREGS, child, 0, &regs);
        int64_t ran = (int64_t)(sh->last_ns - sent);
        run_on[i] = ran;
        latency[i] = (int64_t)(seen - sent);
        if ((long long)regs.orig_rax >= 0)
            at_syscall++;
        if (ran < 0) {
            not_running++;
        } else {
            running_run_on[nrunning++] = ran;
            running_at_syscall += (long long)regs.orig_rax >= 0;
        }
        ptrace(PTRACE_CONT, child, 0, 0);
    }
    uint64_t wall = now_ns() - t_start;
    f = fopen(stat_path, "r");
    if (f) {
        if (fscanf(f, "%*d %*s %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut1,
                   &st1) != 2)
            ut1 = st1 = 0;
        fclose(f);
    }
    (void)ru1;
    uint64_t calls = sh->calls - calls0;
    kill(child, SIGKILL);
    waitpid(child, NULL, __WALL);
    for (int i = 0; i < busy && i < 64; i++) {
        kill(busy_pids[i], SIGKILL);
        waitpid(busy_pids[i], NULL, 0);
    }
    double kernel_share =
        (ut1 + st1 > ut0 + st0) ? 100.0 * (double)(st1 - st0) / (double)(ut1 + st1 - ut0 - st0) : 0;
    printf("chunk %u iters, %s, %d busy, tracer cpu %d, tracee cpu %d, period %d us\n", chunk,
           no_syscalls ? "no system calls" : "a system call per chunk", busy, tracer_cpu,
           tracee_cpu, period_us);
    printf("  system calls: one per %.2f us of wall time; kernel share of the child's CPU "
           "time %.1f%% (stat, ticks)\n",
           calls ? (double)wall / 1e3 / (double)calls : 0.0, kernel_share);
    printf("  stops at a system call's exit: %.1f%% of %d\n", 100.0 * (double)at_syscall / samples,
           samples);
    printf("  not running when interrupted: %.1f%%\n", 100.0 * (double)not_running / samples);
    printf("  of the %zu stops of a running child: %.1f%% at a system call's exit; it ran on "
           "for a median %.1f us, p90 %.1f us, max %.1f us\n",
           nrunning, nrunning ? 100.0 * (double)running_at_syscall / (double)nrunning : 0.0,
           (double)pct(running_run_on, nrunning, 0.5) / 1e3,
           (double)pct(running_run_on, nrunning, 0.9) / 1e3,
           (double)pct(running_run_on, nrunning, 1.0) / 1e3);
    free(running_run_on);
    int64_t r50 = pct(run_on, (size_t)samples, 0.5), r90 = pct(run_on, (size_t)samples, 0.9);
    int64_t l50 = pct(latency, (size_t)samples, 0.5), l90 = pct(latency, (size_t)samples, 0.9);
    printf("  ran on after the interrupt: median %.1f us, p90 %.1f us\n", (double)r50 / 1e3,
           (double)r90 / 1e3);
    printf("  interrupt to stop seen: median %.1f us, p90 %.1f us\n", (double)l50 / 1e3,
           (double)l90 / 1e3);
    free(run_on);
    free(latency);
    return 0;
}
#endif
