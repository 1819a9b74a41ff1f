/*
 * syscall_exits.h - what a ptrace sample that stopped at a system call's
 * exit stands for (docs/recording.md, "Where an interrupt stops a thread").
 *
 * PTRACE_INTERRUPT reaches a thread running on another CPU through an
 * inter-processor interrupt that takes microseconds; the kernel also looks
 * for the pending stop on every return to user space, so a thread that
 * makes a system call meanwhile stops on that call's way out.  Such a stop
 * stands for the call's kernel time, or for the user code that led to the
 * call; a program that calls the kernel every few microseconds otherwise
 * shows the call's site several times wider than its kernel time.
 *
 * Contract:
 *  - syscall_exits_keep() decides, for a sample of process PROC (pid PID)
 *    that stopped at a call's exit and carries DELTA_NS of CPU time, whether
 *    it stays at the call (it stands for kernel time) or moves to the code
 *    that made the call.  Samples stay while the CPU time they carry,
 *    summed per process, does not pass the process's kernel time
 *    (/proc/PID/stat, read at most every STAT_INTERVAL), which the first
 *    call takes as the base: what the process spent in the kernel before
 *    then stays out of it (attached, or before sampling began).
 *  - syscall_exits_to_caller() rewrites a stack (pcs[0] the PC, then return
 *    addresses) to start in the code that made the call: the vDSO's frames
 *    and then those of the shared library the call was made from go, and
 *    the new leaf is the calling instruction (return address - 1).  A call
 *    made from the main program's own code (an inline `syscall`) changes
 *    nothing.  Returns the new depth.
 *  - With `raw` set every sample stays (the engine as it was, to measure).
 *  - The counts are the -d summary's.  x86-64 only: regs_syscall_exit()
 *    says -1 elsewhere, and nothing here is used.
 */
#ifndef PTPROF_RECORD_PTRACE_SYSCALL_EXITS_H
#define PTPROF_RECORD_PTRACE_SYSCALL_EXITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/process.h"

/* The kernel's user/system split moves in clock ticks: no use reading it
 * more often. */
#define SYSCALL_EXITS_STAT_INTERVAL_NS (10 * 1000 * 1000ULL)

struct syscall_exit_credit {
    bool started;
    uint64_t base_ns;    /* kernel time at the first decision */
    uint64_t kernel_ns;  /* kernel time as last read */
    uint64_t read_at;    /* monotonic ns of that read */
    uint64_t charged_ns; /* CPU time of the samples kept at a call */
    char exe[256];       /* the main program's path, for to_caller */
    uint64_t exe_maps_version;
    bool exe_known;
};

struct syscall_exits {
    struct syscall_exit_credit *procs; /* by process index */
    size_t count;
    bool raw; /* keep every sample at its call (PTPROF_CALL_EXITS=raw, a benchmark knob) */
    /* for -d */
    uint64_t stops;       /* samples of threads that ran, stopped at a call's exit */
    uint64_t kept;        /* ...kept there */
    uint64_t kept_ns;     /* CPU time they carried */
    uint64_t moved_ns;    /* CPU time of those moved to the calling code */
    uint64_t ran_samples; /* samples of threads that ran (CPU time moved) */
};

void syscall_exits_free(struct syscall_exits *x);
bool syscall_exits_keep(struct syscall_exits *x, size_t proc, pid_t pid, uint64_t delta_ns,
                        uint64_t now);
int syscall_exits_to_caller(struct syscall_exits *x, size_t proc, const struct process *p,
                            uint64_t *pcs, int depth);
/* A process's user and kernel time from /proc/PID/stat, in ns; false when
 * it cannot be read. */
bool syscall_exits_process_times(pid_t pid, uint64_t *user_ns, uint64_t *kernel_ns);

#endif
