/* detached.c - see detached.h */
#include "record/detached.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child: only the standard three and the result's pipe. */
static void close_others(int keep)
{
    if (keep > 3)
        close_range(3, (unsigned)keep - 1, 0);
    close_range((unsigned)keep + 1, ~0U, 0);
}

int detached_start(int (*fn)(void *ctx), void *ctx, struct detached_job *job)
{
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        pt_warn("cannot start a background process: %s", strerror(errno));
        return -1;
    }
    fflush(NULL); /* nothing buffered is written twice */
    pid_t child = fork();
    if (child < 0) {
        pt_warn("cannot start a background process: %s", strerror(errno));
        close(fds[0]);
        close(fds[1]);
        return -1;
    }
    if (child == 0) {
        close(fds[0]);
        close_others(fds[1]);
        if (setpriority(PRIO_PROCESS, 0, 10) != 0) {
            /* only an optimisation */
        }
        unsigned char result = fn(ctx) == 0 ? 0 : 1;
        ssize_t w = write(fds[1], &result, 1);
        _exit(w == 1 ? 0 : 1);
    }
    close(fds[1]);
    /* Nothing waited between the fork and here: the pid is still the child's. */
    job->pidfd = pidfd_open(child, 0);
    job->result_fd = fds[0];
    return 0;
}

bool detached_finished(const struct detached_job *job)
{
    struct pollfd p = {.fd = job->result_fd, .events = POLLIN};
    return poll(&p, 1, 0) > 0;
}

int detached_wait(struct detached_job *job)
{
    unsigned char result;
    ssize_t n;
    while ((n = read(job->result_fd, &result, 1)) < 0 && errno == EINTR)
        ;
    close(job->result_fd);
    job->result_fd = -1;
    if (job->pidfd >= 0) {
        siginfo_t info;
        /* ECHILD: the ptrace engine's waitpid(-1) reaped it already. */
        while (waitid(P_PIDFD, (id_t)job->pidfd, &info, WEXITED) < 0 && errno == EINTR)
            ;
        close(job->pidfd);
        job->pidfd = -1;
    }
    return n == 1 && result == 0 ? 0 : -1;
}
