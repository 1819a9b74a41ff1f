/*
 * offcpu.h - threads off CPU, looked at without stopping them.
 *
 * The kernel's CPU-time samples say nothing about a thread that sleeps.
 * At every tick the perf engine looks at each thread that took no sample
 * since the previous tick through /proc/PID/task/TID/syscall (the ptrace
 * engine reads the same file to see whether a blocked thread is still in
 * the same call), which the kernel answers without disturbing the thread:
 * "running", or the system call it is blocked in with its stack pointer
 * and PC ("-1 SP PC" when it is blocked outside a system call: stopped,
 * or waiting for a page).  A blocked thread's stack does not change while
 * it sleeps, so it is copied with process_vm_readv and unwound by CFI from
 * the PC and the stack pointer alone (the file gives no other register;
 * docs/stacks.md).  A copy during which the thread woke up is thrown away.
 *
 * Contract: offcpu_look() opens the file into *FD on first use and
 * re-reads it with pread; offcpu_stack() returns the depth written into
 * PCS (at least 1: the PC).
 */
#ifndef PTPROF_RECORD_OFFCPU_H
#define PTPROF_RECORD_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/stack.h"

enum offcpu_state {
    OFFCPU_GONE,       /* the file cannot be read: the thread exited */
    OFFCPU_RUNNING,    /* on a CPU or ready to run */
    OFFCPU_IN_SYSCALL, /* blocked in system call `syscall` */
    OFFCPU_BLOCKED,    /* blocked outside a system call */
};

struct offcpu_look {
    enum offcpu_state state;
    int syscall; /* -1 unless OFFCPU_IN_SYSCALL */
    uint64_t sp, pc;
};

struct offcpu_look offcpu_look(int *fd, pid_t pid, pid_t tid);
/* Parse the file's text (for tests). */
struct offcpu_look offcpu_parse(const char *text, size_t len);
/* Stopped by job control ('T' in /proc/PID/task/TID/stat)? */
bool offcpu_stopped(pid_t pid, pid_t tid);
/* Copy and unwind the stack of a thread LOOK found blocked; SNAP is
 * scratch of the copy size; U may be NULL (then the PC alone). */
int offcpu_stack(pid_t pid, pid_t tid, int *fd, const struct offcpu_look *look,
                 struct stack_snapshot *snap, struct dwarf_unwinder *u, uint64_t *pcs, int max);

#endif
