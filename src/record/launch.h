/*
 * launch.h - start a command under ptrace without the command noticing.
 *
 * Contract: launch_traced() forks; the child restores the signal mask the
 * profiler started with and waits on a pipe; the parent PTRACE_SEIZEs it
 * with OPTIONS and only then lets it exec, so the very first instruction of
 * the new program already runs traced.  No signal is sent to the child.
 * On success the child is in its PTRACE_EVENT_EXEC stop and *PID is set.
 * When exec fails the child's errno is reported ("COMMAND: command not
 * found" / "...: Permission denied"), the child is reaped and the return
 * value is the shell's exit code (127 not found, 126 not executable).
 * Returns 0 on success.
 */
#ifndef PTPROF_RECORD_LAUNCH_H
#define PTPROF_RECORD_LAUNCH_H

#include <signal.h>
#include <sys/types.h>

int launch_traced(char *const argv[], const sigset_t *child_mask, unsigned long options,
                  pid_t *pid);

#endif
