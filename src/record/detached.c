/* detached.c - see detached.h */
#include "record/detached.h"
#include "util/log.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the grandchild: only the standard three and the result's pipe. */
static void close_others(int keep)
{
    if (keep > 3)
        close_range(3, (unsigned)keep - 1, 0);
    close_range((unsigned)keep + 1, ~0U, 0);
}

int detached_start(int (*fn)(void *ctx), void *ctx)
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
        pid_t grandchild = fork();
        if (grandchild != 0)
            _exit(grandchild < 0 ? 1 : 0);
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
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        pt_warn("cannot start a background process");
        close(fds[0]);
        return -1;
    }
    return fds[0];
}

int detached_wait(int handle)
{
    unsigned char result;
    ssize_t n;
    while ((n = read(handle, &result, 1)) < 0 && errno == EINTR)
        ;
    close(handle);
    return n == 1 && result == 0 ? 0 : -1;
}
