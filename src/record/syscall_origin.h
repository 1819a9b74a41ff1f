/*
 * syscall_origin.h - which system call a blocked thread is really in.
 *
 * A thread taken out of an interruptible sleep without a signal handler to
 * run (a ptrace interrupt, a stop signal, the freezer) goes back into its
 * call through the kernel's restart machinery.  Calls that restart with
 * their own arguments (read, futex without a timeout, select...) re-enter
 * under their own number; those that keep their state in the kernel's
 * restart block (nanosleep, clock_nanosleep, poll, futex with a timeout)
 * come back as restart_syscall, and from then on the registers and
 * /proc/PID/task/TID/syscall name restart_syscall instead of the call the
 * program made.  A sampler that interrupts a sleeping thread thus sees the
 * real call once and restart_syscall ever after.
 *
 * Contract: one struct syscall_origin per thread, set up with
 * syscall_origin_init().  Feed syscall_origin_name() every observation of
 * the thread blocked in a call: the number the kernel reports (orig_rax,
 * or the first field of /proc/PID/task/TID/syscall) with the PC and SP it
 * reports.  It returns the number to record: NR itself, unless NR is
 * restart_syscall; then the call last seen at the same PC and SP (the
 * restart re-executes the very system call instruction, on the same
 * stack); failing that, the call that the kernel function the thread
 * sleeps in (/proc/PID/task/TID/wchan) belongs to; failing that, NR.
 * Nothing here uses ptrace or stops the thread, so any engine can use it
 * (the perf engine reads /proc/PID/task/TID/syscall of off-CPU threads).
 * Architecture-neutral: restart_syscall is SYS_restart_syscall.
 */
#ifndef PTPROF_RECORD_SYSCALL_ORIGIN_H
#define PTPROF_RECORD_SYSCALL_ORIGIN_H

#include <stdint.h>
#include <sys/types.h>

struct syscall_origin {
    int nr;      /* the last real call seen, or -1 */
    uint64_t pc; /* ...at this PC (after the system call instruction) */
    uint64_t sp; /* ...and this SP */
};

void syscall_origin_init(struct syscall_origin *o);

/* The call thread TID of process PID is really in, given what the kernel
 * reports now (see above); NR < 0 (not in a call) is returned as is and
 * forgets nothing. */
int syscall_origin_name(struct syscall_origin *o, int nr, uint64_t pc, uint64_t sp, pid_t pid,
                        pid_t tid);

/* True when NR is restart_syscall on this architecture. */
int syscall_is_restart(int nr);

/* The system call a kernel function named by wchan sleeps for, or -1 when
 * the name says nothing certain (exposed for tests). */
int syscall_from_wchan(const char *wchan);

#endif
