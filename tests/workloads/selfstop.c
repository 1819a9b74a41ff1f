/*
 * selfstop.c - job control from inside: the program stops itself with
 * SIGSTOP and a helper child continues it with SIGCONT.
 *
 * usage: selfstop [WORK_MS]
 *   Works for WORK_MS (default 300) of wall time, raise(SIGSTOP), then
 *   works as long again.  A forked helper waits until the parent announces
 *   the stop, sleeps 200 ms and sends SIGCONT, repeating every 50 ms until
 *   the parent says it runs again (so an early SIGCONT cannot leave it
 *   stopped for good).  The parent checks that raise() really stopped it for
 *   a plausible time (at least 100 ms, at most 20 s) and prints
 *   "stopped_us A B" with the realtime clock (us since the epoch) before and
 *   after the stop, so a test can look for samples on both sides.
 *   Exit 0 when all holds.
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
    atomic_int stopping; /* parent is about to raise(SIGSTOP) */
    atomic_int resumed;  /* parent runs again */
};

static uint64_t clock_us(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t work_for(unsigned ms, uint64_t x)
{
    uint64_t end = clock_us(CLOCK_MONOTONIC) + ms * 1000ull;
    while (clock_us(CLOCK_MONOTONIC) < end) {
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    }
    return x;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static void helper(struct shared *sh, pid_t parent)
{
    while (!atomic_load(&sh->stopping))
        sleep_ms(5);
    sleep_ms(200);
    /* Bounded: a parent that never stops must not keep us alive forever. */
    for (int i = 0; i < 600 && !atomic_load(&sh->resumed); i++) {
        kill(parent, SIGCONT);
        sleep_ms(50);
    }
    _exit(0);
}

int main(int argc, char **argv)
{
    unsigned work_ms = argc > 1 ? (unsigned)atoi(argv[1]) : 300;
    struct shared *sh =
        mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        perror("selfstop: mmap");
        return 1;
    }
    atomic_init(&sh->stopping, 0);
    atomic_init(&sh->resumed, 0);

    pid_t parent = getpid();
    pid_t child = fork();
    if (child < 0) {
        perror("selfstop: fork");
        return 1;
    }
    if (child == 0)
        helper(sh, parent);

    uint64_t x = work_for(work_ms, 1);

    atomic_store(&sh->stopping, 1);
    uint64_t before_mono = clock_us(CLOCK_MONOTONIC), before = clock_us(CLOCK_REALTIME);
    raise(SIGSTOP);
    uint64_t after_mono = clock_us(CLOCK_MONOTONIC), after = clock_us(CLOCK_REALTIME);
    atomic_store(&sh->resumed, 1);

    x = work_for(work_ms, x);

    int status;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        printf("selfstop: FAIL: helper child did not exit cleanly\n");
        return 1;
    }
    uint64_t stopped_ms = (after_mono - before_mono) / 1000;
    printf("stopped_us %llu %llu\n", (unsigned long long)before, (unsigned long long)after);
    if (stopped_ms < 100 || stopped_ms > 20000) {
        printf("selfstop: FAIL: stopped for %llu ms, expected 200 ms or a little more\n",
               (unsigned long long)stopped_ms);
        return 1;
    }
    printf("selfstop: ok, stopped for %llu ms (%llx)\n", (unsigned long long)stopped_ms,
           (unsigned long long)(x & 0xff));
    return 0;
}
