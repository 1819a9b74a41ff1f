/* profiler_signals.c - see profiler_signals.h */
#include "record/profiler_signals.h"
#include "util/log.h"
#include "util/timeutil.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <unistd.h>

/* A job-control stop the program never performs is forgotten after this. */
#define JOB_STOP_PATIENCE_NS (1000 * 1000 * 1000ULL)

static const int handled[] = {SIGCHLD, SIGINT,  SIGTERM, SIGHUP,  SIGQUIT,
                              SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT, SIGPIPE};

int profsig_open(sigset_t *original)
{
    sigset_t set;
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof(handled) / sizeof(handled[0]); i++)
        sigaddset(&set, handled[i]);
    if (sigprocmask(SIG_BLOCK, &set, original) != 0) {
        pt_err("sigprocmask: %s", strerror(errno));
        return -1;
    }
    int fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd < 0) {
        pt_err("signalfd: %s", strerror(errno));
        sigprocmask(SIG_SETMASK, original, NULL);
    }
    return fd;
}

void profsig_close(int fd, const sigset_t *original)
{
    if (fd >= 0)
        close(fd);
    sigprocmask(SIG_SETMASK, original, NULL);
}

bool profsig_pending_in(pid_t pid, int sig)
{
    char path[64], line[256];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    bool pending = false;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "ShdPnd:", 7) == 0) {
            uint64_t mask = strtoull(line + 7, NULL, 16);
            pending = (mask >> (sig - 1)) & 1;
            break;
        }
    }
    fclose(f);
    return pending;
}

void profsig_read(int fd, void (*handle)(void *ctx, const struct signalfd_siginfo *si), void *ctx)
{
    struct signalfd_siginfo si[16];
    for (;;) {
        ssize_t n = read(fd, si, sizeof(si));
        if (n <= 0)
            break;
        for (size_t i = 0; i < (size_t)n / sizeof(si[0]); i++)
            handle(ctx, &si[i]);
    }
}

/*
 * A signal sent to the whole process group (the terminal, killpg) reached
 * the program as well; one sent to the profiler alone must be passed on,
 * as the shell's child would have received it.
 */
static void forward_if_needed(const struct profsig_program *p, int sig, uint64_t received)
{
    if (p->gone(p->ctx) || p->got(p->ctx, sig, received) || p->gone(p->ctx))
        return;
    pt_debug("forwarding signal %d to %d", sig, (int)p->pid);
    kill(p->pid, sig);
}

enum profsig_action profsig_handle(struct profsig_job *job, const struct profsig_program *p,
                                   int sig, uint64_t received)
{
    switch (sig) {
    case SIGINT:
    case SIGTERM:
    case SIGHUP:
    case SIGQUIT:
        /* Attached to someone else's process: the signal is for us only. */
        if (!p->attached)
            forward_if_needed(p, sig, received);
        return PROFSIG_STOP;
    case SIGTSTP:
    case SIGTTIN:
    case SIGTTOU:
        if (p->attached) {
            raise(SIGSTOP);
            return PROFSIG_JOB_CONTROL;
        }
        forward_if_needed(p, sig, received);
        job->stop_pending = true;
        job->since = monotonic_ns();
        return PROFSIG_JOB_CONTROL;
    default:
        return PROFSIG_OTHER;
    }
}

void profsig_follow_job_stop(struct profsig_job *job, const struct profsig_program *p,
                             int signal_fd)
{
    if (!job->stop_pending)
        return;
    if (monotonic_ns() - job->since > JOB_STOP_PATIENCE_NS) {
        job->stop_pending = false;
        return;
    }
    if (!p->job_stopped(p->ctx))
        return;
    job->stop_pending = false;
    uint64_t before = monotonic_ns();
    raise(SIGSTOP);
    /* Continued (fg).  The shell's SIGCONT normally reached the program
     * too; if it has not left its stop shortly, continue it ourselves. */
    struct pollfd pfd = {.fd = signal_fd, .events = POLLIN};
    for (int tries = 0; tries < 10 && p->job_stopped(p->ctx); tries++) {
        poll(&pfd, 1, 10);
        p->pump(p->ctx);
    }
    if (p->job_stopped(p->ctx) && !p->gone(p->ctx) && !p->got(p->ctx, SIGCONT, before))
        kill(p->pid, SIGCONT);
}
