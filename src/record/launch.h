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

/*
 * The same start without ptrace, in two steps (the perf engine opens its
 * events on the child in between): launch_hold() forks a child that
 * restores CHILD_MASK and waits; launch_release() lets it exec and returns
 * 0, or, when exec failed, reaps it and returns the shell's exit code
 * after the same message as launch_traced(); launch_cancel() kills and
 * reaps a child that never ran the command.  Returns of launch_hold(): 0
 * with L filled, or PT_EXIT_USAGE after a message.
 */
struct launch_hold {
    pid_t pid;
    int go_fd, err_fd;
    const char *command;
};
int launch_hold(char *const argv[], const sigset_t *child_mask, struct launch_hold *l);
int launch_release(struct launch_hold *l);
void launch_cancel(struct launch_hold *l);

#endif
