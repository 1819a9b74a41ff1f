/*
 * unwind_fp.c - see stack.h: the frame-pointer walk over a stack snapshot.
 *
 * Every supported ABI keeps a two-word frame record {caller's frame
 * pointer, return address} that the frame pointer points at (x86_64,
 * aarch64) or just below (riscv64).  Code built without frame pointers
 * leaves an arbitrary value in that register, so the walk checks every
 * step and stops at the first record that cannot be one.
 */
#include "unwind/stack.h"
#include "unwind/regs.h"

#include <string.h>

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

/* The frame record at ADDR, from the copy. */
static bool read_record(const struct stack_snapshot *s, uint64_t addr, uint64_t record[2])
{
    if (addr >= s->sp && s->size >= 16 && addr - s->sp <= s->size - 16) {
        memcpy(record, s->data + (addr - s->sp), 16);
        return true;
    }
    return false;
}

int unwind_fp_from(const struct stack_snapshot *s, uint64_t fp, uint64_t *pcs, int depth, int max,
                   bool *truncated)
{
    while (depth < max) {
        if (fp == 0 || fp % 8 != 0)
            break;
        uint64_t addr = fp + (uint64_t)(int64_t)FP_RECORD_OFFSET;
        /* A record below the stack pointer belongs to no live frame. */
        if (addr < s->sp || addr > UINT64_MAX - 16)
            break;
        uint64_t record[2];
        if (!read_record(s, addr, record)) {
            /* Above the copy: the stack goes on, unless the copy already
             * holds everything up to its top (then FP was not a frame). */
            if (truncated && !s->complete)
                *truncated = true;
            break;
        }
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

int unwind_fp(const struct stack_snapshot *s, uint64_t *pcs, int max, bool *truncated)
{
    if (truncated)
        *truncated = false;
    if (max <= 0)
        return 0;
    pcs[0] = (uint64_t)REGS_PC(s->regs);
    return unwind_fp_from(s, (uint64_t)REGS_FP(s->regs), pcs, 1, max, truncated);
}
