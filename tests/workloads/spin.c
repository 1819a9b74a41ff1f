/*
 * spin.c - a CPU-bound target for the interruption (Ctrl-C, kill) tests.
 *
 * usage: spin [--handler [--signals N]] [--exit CODE] [SECONDS]
 *   Burns CPU for SECONDS (default 30) and exits 0, unless a signal ends it
 *   first.  It prints "spin: ready, pid N" once its signal setup is done, so
 *   a test knows when and where to send a signal.
 *   --handler   catch SIGINT and SIGTERM: each delivery prints "got SIGINT
 *               from PID" or "got SIGTERM from PID" (the sender, so a test
 *               can tell who sent it); 300 ms after the first one, exit with
 *               CODE (default 7).  The grace period lets a duplicated
 *               delivery show up as a second line.
 *   --signals N with --handler: wait for N deliveries before those 300 ms.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t caught;
static int wanted = 1; /* deliveries before exiting */

static void say(const char *text)
{
    ssize_t rc = write(STDOUT_FILENO, text, strlen(text));
    (void)rc;
}

/* Async-signal-safe: no stdio in a handler. */
static void on_signal(int sig, siginfo_t *info, void *ctx)
{
    (void)ctx;
    char line[64], digits[16];
    int n = 0;
    for (unsigned v = (unsigned)info->si_pid; v || n == 0; v /= 10)
        digits[n++] = (char)('0' + v % 10);
    strcpy(line, sig == SIGINT ? "got SIGINT from " : "got SIGTERM from ");
    size_t len = strlen(line);
    while (n > 0)
        line[len++] = digits[--n];
    line[len++] = '\n';
    line[len] = '\0';
    say(line);
    caught++;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int handler = 0, code = 7;
    double seconds = 30;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--handler") == 0) {
            handler = 1;
        } else if (strcmp(argv[i], "--signals") == 0 && i + 1 < argc) {
            wanted = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc) {
            code = atoi(argv[++i]);
        } else if (argv[i][0] != '-') {
            seconds = atof(argv[i]);
        } else {
            fprintf(stderr, "usage: spin [--handler [--signals N]] [--exit CODE] [SECONDS]\n");
            return 2;
        }
    }

    if (handler) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    char ready[64];
    snprintf(ready, sizeof(ready), "spin: ready, pid %d\n", (int)getpid());
    say(ready);

    double end = now_s() + seconds, caught_at = 0;
    uint64_t x = 1;
    while (now_s() < end) {
        for (int i = 0; i < 10000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
        if (caught >= wanted && caught_at == 0)
            caught_at = now_s();
        if (caught_at != 0 && now_s() - caught_at > 0.3)
            return code;
    }
    return x == 42; /* keeps the work observable; practically always 0 */
}
