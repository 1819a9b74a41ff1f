/*
 * detached.h - run a piece of work in a process of its own, beside the
 * recording, without it ever being a child the recorder could wait for.
 *
 * Contract: detached_start(FN, CTX) runs FN(CTX) in a grandchild (a copy of
 * this process forked twice: the child in between is reaped at once, so
 * the ptrace engine's waitpid(-1) never sees the work), at a lower
 * priority (nice 10: the profiled program comes first), with the
 * profiler's descriptors closed but the standard three and its signals
 * still blocked (a Ctrl-C to the group does not cut a file in half).
 * Returns a handle (>= 0), or -1 after a warning when no process could be
 * made: the caller may then run FN itself.  detached_wait(HANDLE) blocks
 * until the work is over and returns FN's result, or -1 if it died; each
 * handle is waited for once.  The work must end with the profiler's
 * buffered output untouched: FN writes files, and messages on stderr.
 */
#ifndef PTPROF_RECORD_DETACHED_H
#define PTPROF_RECORD_DETACHED_H

int detached_start(int (*fn)(void *ctx), void *ctx);
int detached_wait(int handle);

#endif
