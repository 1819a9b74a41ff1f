/*
 * perf_regs.h - the user registers a perf sample carries
 * (PERF_SAMPLE_REGS_USER), as the struct user_regs_struct the unwinder
 * reads (stack.h).  The architecture-specific part of the perf engine.
 *
 * Contract: PERF_REGS_USER_MASK asks for exactly the registers DWARF
 * unwinding needs; perf_regs_to_user() fills *OUT from the NREGS values
 * of a sample taken with that mask (in the kernel's bit order) and returns
 * false when the sample has another count (a 32-bit task, say).
 */
#ifndef PTPROF_RECORD_PERF_REGS_H
#define PTPROF_RECORD_PERF_REGS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/user.h>

#include "interop/perf_records.h"

#if defined(__x86_64__)
/* AX BX CX DX SI DI BP SP (bits 0-7), IP (8), R8-R15 (16-23). */
#define PERF_REGS_USER_MASK 0xff01ffULL
#define PERF_REGS_USER_COUNT 17

static inline bool perf_regs_to_user(const uint8_t *regs, unsigned nregs,
                                     struct user_regs_struct *out)
{
    if (nregs != PERF_REGS_USER_COUNT)
        return false;
    memset(out, 0, sizeof(*out));
    out->rax = perf_u64(regs, 0);
    out->rbx = perf_u64(regs, 1);
    out->rcx = perf_u64(regs, 2);
    out->rdx = perf_u64(regs, 3);
    out->rsi = perf_u64(regs, 4);
    out->rdi = perf_u64(regs, 5);
    out->rbp = perf_u64(regs, 6);
    out->rsp = perf_u64(regs, 7);
    out->rip = perf_u64(regs, 8);
    out->r8 = perf_u64(regs, 9);
    out->r9 = perf_u64(regs, 10);
    out->r10 = perf_u64(regs, 11);
    out->r11 = perf_u64(regs, 12);
    out->r12 = perf_u64(regs, 13);
    out->r13 = perf_u64(regs, 14);
    out->r14 = perf_u64(regs, 15);
    out->r15 = perf_u64(regs, 16);
    return true;
}
#elif defined(__aarch64__)
/* X0-X30 (bits 0-30), SP (31), PC (32). */
#define PERF_REGS_USER_MASK ((1ULL << 33) - 1)
#define PERF_REGS_USER_COUNT 33

static inline bool perf_regs_to_user(const uint8_t *regs, unsigned nregs,
                                     struct user_regs_struct *out)
{
    if (nregs != PERF_REGS_USER_COUNT)
        return false;
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < 31; i++)
        out->regs[i] = perf_u64(regs, (size_t)i);
    out->sp = perf_u64(regs, 31);
    out->pc = perf_u64(regs, 32);
    return true;
}
#elif defined(__riscv)
/* PC (bit 0), then x1-x31 (bits 1-31): user_regs_struct's own order. */
#define PERF_REGS_USER_MASK ((1ULL << 32) - 1)
#define PERF_REGS_USER_COUNT 32

static inline bool perf_regs_to_user(const uint8_t *regs, unsigned nregs,
                                     struct user_regs_struct *out)
{
    if (nregs != PERF_REGS_USER_COUNT)
        return false;
    unsigned long *x = (unsigned long *)out;
    for (size_t i = 0; i < PERF_REGS_USER_COUNT; i++)
        x[i] = perf_u64(regs, i);
    return true;
}
#else
#error "ptprof: unsupported architecture (x86_64, aarch64 and riscv64 are supported)"
#endif

#endif
