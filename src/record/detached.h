/*
 * detached.h - run a piece of work in a process of its own, beside the
 * recording, without the recording ever waiting for it to start.
 *
 * Contract: detached_start(FN, CTX, JOB) forks once and runs FN(CTX) in
 * the child, at a lower priority (nice 10: the profiled program comes
 * first), with the profiler's descriptors closed but the standard three,
 * and its signals still blocked (a Ctrl-C to the group does not cut a file
 * in half).  The parent goes on at once: it pays the fork, never the
 * child's start.  The child reports FN's result through a pipe and is
 * reaped through a pidfd, so the ptrace engine's waitpid(-1) may reap it
 * first (it ignores a pid it does not trace) and a pid reused since is
 * never waited for.  Returns 0, or -1 after a warning when no process
 * could be made (the caller may run FN itself).  detached_finished() says,
 * without blocking, whether the work is over; detached_wait() blocks until
 * it is, reaps it and returns FN's result (0), or -1 if it failed or died.
 * Each job is waited for once.  FN writes files, and messages on stderr.
 */
#ifndef PTPROF_RECORD_DETACHED_H
#define PTPROF_RECORD_DETACHED_H

#include <stdbool.h>

struct detached_job {
    int result_fd; /* its result, one byte, then EOF */
    int pidfd;     /* -1: none (already reaped) */
};

int detached_start(int (*fn)(void *ctx), void *ctx, struct detached_job *job);
bool detached_finished(const struct detached_job *job);
int detached_wait(struct detached_job *job);

#endif
