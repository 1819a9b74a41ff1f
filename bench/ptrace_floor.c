/*
 * ptrace_floor.c - the cheapest possible ptrace sample on this machine, the
 * floor a ptrace sampler's per-sample latency is measured against.
 *
 *   ptrace_floor [-t THREADS] [-r HZ] [-n CYCLES] [-s SECONDS]
 *
 * Forks a child whose THREADS threads spin, PTRACE_SEIZEs every thread,
 * then runs CYCLES cycles of: PTRACE_INTERRUPT all threads, waitpid each
 * until it is in its event stop, PTRACE_GETREGSET (NT_PRSTATUS) each,
 * PTRACE_CONT each.  A cycle's time runs from the first interrupt to the
 * return of the last PTRACE_CONT, the window in which the target is held.
 * It stops early after SECONDS of measuring, so a machine where cycles
 * crawl still finishes in time.
 *
 * With -r HZ, deadlines stay on the grid start + k / HZ (no drift); a cycle
 * that ends after the next deadline is followed at once by one more, and
 * deadlines wholly missed are dropped, as a periodic timerfd read once per
 * wake-up would do.  The achieved rate is thus the best a ptrace sampler
 * that schedules this way can reach here.  -r 0 runs cycles back to back.
 *
 * Prints one line:
 *   ptrace_floor: threads=T rate=HZ cycles=K achieved_hz=A mean_us=M
 *     median_us=D p90_us=P min_us=N stop_us=S regs_us=R cont_us=C
 *     preempted=X dropped=D
 * (stop/regs/cont: mean time of the three phases; preempted: involuntary
 * context switches of the tracer per cycle, how often it lost its CPU;
 * dropped: the fraction of deadlines skipped.)
 */
#include <elf.h>
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 64
/* Cycles run before measuring, so page faults and first-time paths are out. */
#define WARMUP_CYCLES 20

static atomic_int spinners_ready;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void *spin(void *arg)
{
    volatile uint64_t n = 0;

    (void)arg;
    atomic_fetch_add(&spinners_ready, 1);
    for (;;)
        n++;
    return NULL;
}

/* The child: THREADS spinning threads; tells the parent over FD once all run. */
static void child_main(int nthreads, int fd)
{
    pthread_t t;

    for (int i = 1; i < nthreads; i++)
        if (pthread_create(&t, NULL, spin, NULL) != 0)
            _exit(2);
    while (atomic_load(&spinners_ready) < nthreads - 1)
        ;
    if (write(fd, "r", 1) != 1)
        _exit(2);
    close(fd);
    spin(NULL);
}

static int list_tasks(pid_t pid, pid_t *tids, int max)
{
    char path[64];
    int n = 0;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        if (n == max) {
            closedir(d);
            return -1;
        }
        tids[n++] = (pid_t)atoi(e->d_name);
    }
    closedir(d);
    return n;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void die(const char *what)
{
    fprintf(stderr, "ptrace_floor: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void usage(void)
{
    fprintf(stderr, "usage: ptrace_floor [-t THREADS] [-r HZ (0: back to back)] [-n CYCLES] "
                    "[-s SECONDS]\n");
    exit(1);
}

int main(int argc, char **argv)
{
    int nthreads = 1, cycles = 2000;
    double rate = 1000.0, max_seconds = 60.0;

    for (int opt; (opt = getopt(argc, argv, "t:r:n:s:")) != -1;) {
        switch (opt) {
        case 't':
            nthreads = atoi(optarg);
            break;
        case 'r':
            rate = strtod(optarg, NULL);
            break;
        case 'n':
            cycles = atoi(optarg);
            break;
        case 's':
            max_seconds = strtod(optarg, NULL);
            break;
        default:
            usage();
        }
    }
    /* Wake on the deadline itself, as a timerfd does, not up to 50 us later. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
    if (optind != argc || nthreads < 1 || nthreads > MAX_THREADS || cycles < 1 || rate < 0.0 ||
        rate > 1e6 || !(max_seconds > 0.0))
        usage();

    int pfd[2];
    if (pipe(pfd) != 0)
        die("pipe");
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        close(pfd[0]);
        child_main(nthreads, pfd[1]);
    }
    close(pfd[1]);
    char c;
    if (read(pfd[0], &c, 1) != 1) {
        fprintf(stderr, "ptrace_floor: child did not start\n");
        return 1;
    }
    close(pfd[0]);

    pid_t tids[MAX_THREADS];
    int n = list_tasks(pid, tids, MAX_THREADS);
    if (n != nthreads) {
        fprintf(stderr, "ptrace_floor: child has %d threads, expected %d\n", n, nthreads);
        kill(pid, SIGKILL);
        return 1;
    }
    for (int i = 0; i < n; i++)
        if (ptrace(PTRACE_SEIZE, tids[i], NULL, NULL) != 0)
            die("PTRACE_SEIZE");

    uint64_t *total = calloc((size_t)cycles, sizeof(*total));
    uint64_t stop_sum = 0, regs_sum = 0, cont_sum = 0, dropped = 0, dropped0 = 0;
    if (!total)
        die("calloc");
    uint64_t period = rate > 0.0 ? (uint64_t)(1e9 / rate) : 0;
    uint64_t deadline = now_ns(), first = 0;
    int done = 0;
    struct rusage ru0, ru1;

    for (int k = -WARMUP_CYCLES; k < cycles; k++) {
        if (period) {
            deadline += period;
            uint64_t now = now_ns();
            if (now >= deadline + period) {
                uint64_t skip = (now - deadline) / period;
                dropped += skip;
                deadline += skip * period;
            }
            struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000ull),
                                  .tv_nsec = (long)(deadline % 1000000000ull)};
            while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
                ;
        }
        uint64_t t0 = now_ns();
        if (k == 0) {
            first = t0;
            dropped0 = dropped;
            getrusage(RUSAGE_SELF, &ru0);
        }
        for (int i = 0; i < n; i++)
            if (ptrace(PTRACE_INTERRUPT, tids[i], NULL, NULL) != 0)
                die("PTRACE_INTERRUPT");
        for (int i = 0; i < n; i++) {
            int st;
            if (waitpid(tids[i], &st, __WALL) != tids[i])
                die("waitpid");
            if (!WIFSTOPPED(st) || (st >> 16) != PTRACE_EVENT_STOP) {
                fprintf(stderr, "ptrace_floor: unexpected wait status 0x%x\n", st);
                kill(pid, SIGKILL);
                return 1;
            }
        }
        uint64_t t1 = now_ns();
        for (int i = 0; i < n; i++) {
            struct user_regs_struct regs;
            struct iovec iov = {.iov_base = &regs, .iov_len = sizeof(regs)};
            if (ptrace(PTRACE_GETREGSET, tids[i], (void *)NT_PRSTATUS, &iov) != 0)
                die("PTRACE_GETREGSET");
        }
        uint64_t t2 = now_ns();
        for (int i = 0; i < n; i++)
            if (ptrace(PTRACE_CONT, tids[i], NULL, NULL) != 0)
                die("PTRACE_CONT");
        uint64_t t3 = now_ns();
        if (k >= 0) {
            total[k] = t3 - t0;
            stop_sum += t1 - t0;
            regs_sum += t2 - t1;
            cont_sum += t3 - t2;
            done = k + 1;
            if ((double)(t3 - first) > max_seconds * 1e9)
                break;
        }
    }
    double span = (double)(now_ns() - first) / 1e9;
    getrusage(RUSAGE_SELF, &ru1);

    kill(pid, SIGKILL);
    while (waitpid(-1, NULL, __WALL) > 0)
        ;

    uint64_t sum = 0;
    for (int k = 0; k < done; k++)
        sum += total[k];
    qsort(total, (size_t)done, sizeof(*total), cmp_u64);
    double per = 1e3 * (double)done;
    printf("ptrace_floor: threads=%d rate=%g cycles=%d achieved_hz=%.1f mean_us=%.2f "
           "median_us=%.2f p90_us=%.2f min_us=%.2f stop_us=%.2f regs_us=%.2f cont_us=%.2f "
           "preempted=%.3f dropped=%.4f\n",
           nthreads, rate, done, (double)done / span, (double)sum / per,
           (double)total[done / 2] / 1e3, (double)total[(size_t)done * 9 / 10] / 1e3,
           (double)total[0] / 1e3, (double)stop_sum / per, (double)regs_sum / per,
           (double)cont_sum / per, (double)(ru1.ru_nivcsw - ru0.ru_nivcsw) / done,
           (double)(dropped - dropped0) / (double)(dropped - dropped0 + (uint64_t)done));
    free(total);
    return 0;
}
