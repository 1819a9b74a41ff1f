/*
 * unwind_fp.c - see stack.h: the frame-pointer walk over a stack snapshot.
 *
 * Every supported ABI keeps a two-word frame record {caller's frame
 * pointer, return address} that the frame pointer points at (x86_64,
 * aarch64) or just below (riscv64).  Code built without frame pointers
 * leaves an arbitrary value in that register, so the walk checks every
 * step and stops at the first record that cannot be one.
 */
#include "record/stack.h"
#include "record/regs.h"

#include <string.h>
#include <sys/uio.h>

#if defined(__riscv)
#define FP_RECORD_OFFSET (-16)
#else
#define FP_RECORD_OFFSET 0
#endif

#ifndef REGS_FP
#if defined(__x86_64__)
#define REGS_FP(r) ((r).rbp)
#elif defined(__aarch64__)
#define REGS_FP(r) ((r).regs[29])
#elif defined(__riscv)
#define REGS_FP(r) ((r).s0)
#endif
#endif

/* The frame record at ADDR, from the copy, or from the process if allowed. */
static bool read_record(pid_t pid, const struct stack_snapshot *s, bool live, uint64_t addr,
                        uint64_t record[2])
{
    if (addr >= s->sp && s->size >= 16 && addr - s->sp <= s->size - 16) {
        memcpy(record, s->data + (addr - s->sp), 16);
        return true;
    }
    if (!live)
        return false;
    struct iovec local = {.iov_base = record, .iov_len = 16};
    struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = 16};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == 16;
}

int unwind_fp(pid_t pid, const struct stack_snapshot *s, bool live, uint64_t *pcs, int max)
{
    if (max <= 0)
        return 0;
    int depth = 0;
    pcs[depth++] = (uint64_t)REGS_PC(s->regs);

    uint64_t fp = (uint64_t)REGS_FP(s->regs);
    while (depth < max) {
        if (fp == 0 || fp % 8 != 0)
            break;
        uint64_t addr = fp + (uint64_t)(int64_t)FP_RECORD_OFFSET;
        /* A record below the stack pointer belongs to no live frame. */
        if (addr < s->sp || addr > UINT64_MAX - 16)
            break;
        uint64_t record[2];
        if (!read_record(pid, s, live, addr, record))
            break;
        if (record[1] == 0)
            break;
        pcs[depth++] = record[1];
        /* Stacks grow down: each caller's record lies above its callee's.
         * Anything else is a register reused for data, or a loop. */
        if (record[0] <= fp)
            break;
        fp = record[0];
    }
    return depth;
}
