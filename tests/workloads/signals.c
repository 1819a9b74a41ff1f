/*
 * signals.c - a program whose own signal handling must survive profiling.
 *
 * usage: signals [COUNT]
 *   Blocks SIGUSR2 and SIGALRM for the whole run, installs a SIGUSR1
 *   handler, and sends itself SIGUSR1 COUNT times (default 200; kill() and
 *   raise() alternately) between slices of CPU work.  It also sends itself
 *   SIGUSR2 and SIGALRM, which must stay pending because they are blocked.
 *   Exit status 0 only if every SIGUSR1 reached the handler exactly once, as
 *   sent by this process, and both blocked signals are still blocked and
 *   pending at the end; otherwise every failed check is printed and the
 *   status is 1.  A profiler that injected, dropped or unblocked signals
 *   fails it.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static volatile sig_atomic_t foreign; /* SIGUSR1 not sent by this process */

static void on_usr1(int sig, siginfo_t *info, void *ctx)
{
    (void)sig;
    (void)ctx;
    if (info->si_pid != getpid() || (info->si_code != SI_USER && info->si_code != SI_TKILL))
        foreign++;
    handled++;
}

static uint64_t burn(uint64_t x, unsigned iters)
{
    for (unsigned i = 0; i < iters; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

int main(int argc, char **argv)
{
    int count = argc > 1 ? atoi(argv[1]) : 200;
    if (count < 1) {
        fprintf(stderr, "usage: signals [COUNT]\n");
        return 2;
    }

    sigset_t blocked;
    sigemptyset(&blocked);
    sigaddset(&blocked, SIGUSR2);
    sigaddset(&blocked, SIGALRM);
    if (sigprocmask(SIG_BLOCK, &blocked, NULL) != 0) {
        perror("signals: sigprocmask");
        return 1;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_usr1;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGUSR1, &sa, NULL) != 0) {
        perror("signals: sigaction");
        return 1;
    }

    uint64_t x = 1;
    for (int i = 0; i < count; i++) {
        /* ~2 ms of work between signals, so samples fall in between. */
        x = burn(x, 1000000);
        if (i % 2)
            raise(SIGUSR1);
        else
            kill(getpid(), SIGUSR1);
        if (i == count / 3)
            kill(getpid(), SIGUSR2);
        if (i == count / 2)
            raise(SIGALRM);
    }

    int failed = 0;
    if (handled != count) {
        printf("signals: FAIL: %d SIGUSR1 sent, handler ran %d times\n", count, (int)handled);
        failed = 1;
    }
    if (foreign) {
        printf("signals: FAIL: %d SIGUSR1 not sent by this process\n", (int)foreign);
        failed = 1;
    }
    sigset_t now, pending;
    sigprocmask(SIG_BLOCK, NULL, &now);
    sigpending(&pending);
    const int watched[] = {SIGUSR2, SIGALRM};
    for (unsigned i = 0; i < sizeof(watched) / sizeof(watched[0]); i++) {
        if (!sigismember(&now, watched[i])) {
            printf("signals: FAIL: %s is no longer blocked\n", strsignal(watched[i]));
            failed = 1;
        }
        if (!sigismember(&pending, watched[i])) {
            printf("signals: FAIL: %s is not pending\n", strsignal(watched[i]));
            failed = 1;
        }
    }
    if (!failed)
        printf("signals: ok, %d handled (%llx)\n", count, (unsigned long long)(x & 0xff));
    return failed;
}
