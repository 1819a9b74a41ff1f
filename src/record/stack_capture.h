/*
 * stack_capture.h - the part of stack sampling that runs inside the ptrace
 * stop window: registers and one copy of the top of the stack.
 *
 * Contract (see docs/stacks.md):
 *  - stack_capture() runs while the thread is in a ptrace-stop: one
 *    PTRACE_GETREGSET and one process_vm_readv of up to the snapshot's
 *    capacity from SP upwards.  A read cut short by the end of the stack's
 *    mapping is not an error.  stack_capture_regs() and stack_copy_batch()
 *    are its two halves, the second for several threads of one process in
 *    one system call.
 *  - stack_copy_plan() decides how much to copy: the whole rest of the
 *    stack when its top is near, else the thread's limit, which
 *    stack_copy_grow() raises (up to a cap) after an unwind ran off the
 *    end of the copy.
 * Unwinding the copy happens afterwards, outside the window (unwind/stack.h).
 */
#ifndef PTPROF_RECORD_STACK_CAPTURE_H
#define PTPROF_RECORD_STACK_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "unwind/stack.h"

/* TID must be in a ptrace-stop.  Copies min(COPY_SIZE, capacity) bytes at
 * most.  Returns 0, or -1 if the thread is gone (its registers cannot be
 * read); a stack that cannot be read at all leaves size 0. */
int stack_capture(pid_t tid, size_t copy_size, struct stack_snapshot *s);
/* The registers alone (sets regs and sp, empties the copy); 0 or -1. */
int stack_capture_regs(pid_t tid, struct stack_snapshot *s);

/* One stack copy of a batch: WANT bytes from the snapshot's SP (at most its
 * capacity); TO_TOP when they run exactly to the top of the stack. */
struct stack_copy {
    struct stack_snapshot *snap;
    size_t want;
    bool to_top;
};
/* Copies the stacks of several stopped threads of process PID with one
 * process_vm_readv (threads share their address space).  A copy the
 * kernel cuts short at the end of a mapping stops the batch there; the
 * rest are then copied one by one, so each ends as stack_capture() would
 * have left it. */
void stack_copy_batch(pid_t pid, struct stack_copy *copies, size_t n);

/* How many bytes to copy above SP for a thread whose limit is LIMIT, when
 * its stack mapping ends at TOP (0: not known).  Sets *TO_TOP when that is
 * the rest of the stack (the top is within STACK_COPY_NEAR_FACTOR limits). */
size_t stack_copy_plan(uint64_t sp, uint64_t top, size_t limit, bool *to_top);
/* The limit after an unwind of a copy of LIMIT bytes was cut short, for a
 * recording configured with CONFIGURED bytes. */
size_t stack_copy_grow(size_t limit, size_t configured);

#endif
