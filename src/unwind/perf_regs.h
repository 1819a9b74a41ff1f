/*
 * perf_regs.h - the user registers a perf sample carries
 * (PERF_SAMPLE_REGS_USER), as the struct user_regs_struct the unwinder
 * reads (stack.h).  The architecture-specific part of the perf engine and
 * of the perf.data reader's unwinding.
 *
 * Contract: PERF_REGS_USER_MASK asks for exactly the registers DWARF
 * unwinding needs.  perf_regs_to_user() fills *OUT from the values of a
 * sample taken with MASK (one u64 per bit set, in the kernel's bit order:
 * the engine's own mask, or whatever a perf.data file's attribute says)
 * and returns false when MASK lacks one of those registers.  Registers
 * MASK has beyond them are skipped.  perf_sample_snapshot() makes a
 * sample's registers and stack copy (PERF_SAMPLE_STACK_USER) the snapshot
 * the unwinders read, pointing into the sample; the copy is complete when
 * the kernel copied less than it had room for (the stack ended).
 */
#ifndef PTPROF_UNWIND_PERF_REGS_H
#define PTPROF_UNWIND_PERF_REGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/user.h>

#include "model/perf_records.h"
#include "unwind/regs.h"
#include "unwind/stack.h"

/* Where each register the unwinder needs sits: its bit in the kernel's
 * mask (enum perf_event_x86_regs and friends), and its place in struct
 * user_regs_struct. */
struct perf_reg_slot {
    unsigned bit;
    size_t offset;
};

#define PERF_REG_SLOT(bit, field)                                                                  \
    {                                                                                              \
        (bit), offsetof(struct user_regs_struct, field)                                            \
    }

#if defined(__x86_64__)
/* AX BX CX DX SI DI BP SP (bits 0-7), IP (8), R8-R15 (16-23). */
#define PERF_REGS_USER_MASK 0xff01ffULL
static const struct perf_reg_slot perf_reg_slots[] = {
    PERF_REG_SLOT(0, rax),  PERF_REG_SLOT(1, rbx),  PERF_REG_SLOT(2, rcx),  PERF_REG_SLOT(3, rdx),
    PERF_REG_SLOT(4, rsi),  PERF_REG_SLOT(5, rdi),  PERF_REG_SLOT(6, rbp),  PERF_REG_SLOT(7, rsp),
    PERF_REG_SLOT(8, rip),  PERF_REG_SLOT(16, r8),  PERF_REG_SLOT(17, r9),  PERF_REG_SLOT(18, r10),
    PERF_REG_SLOT(19, r11), PERF_REG_SLOT(20, r12), PERF_REG_SLOT(21, r13), PERF_REG_SLOT(22, r14),
    PERF_REG_SLOT(23, r15),
};
#elif defined(__aarch64__)
/* X0-X30 (bits 0-30), SP (31), PC (32). */
#define PERF_REGS_USER_MASK ((1ULL << 33) - 1)
#define PERF_REG_X(n) PERF_REG_SLOT(n, regs[n])
static const struct perf_reg_slot perf_reg_slots[] = {
    PERF_REG_X(0),  PERF_REG_X(1),         PERF_REG_X(2),         PERF_REG_X(3),  PERF_REG_X(4),
    PERF_REG_X(5),  PERF_REG_X(6),         PERF_REG_X(7),         PERF_REG_X(8),  PERF_REG_X(9),
    PERF_REG_X(10), PERF_REG_X(11),        PERF_REG_X(12),        PERF_REG_X(13), PERF_REG_X(14),
    PERF_REG_X(15), PERF_REG_X(16),        PERF_REG_X(17),        PERF_REG_X(18), PERF_REG_X(19),
    PERF_REG_X(20), PERF_REG_X(21),        PERF_REG_X(22),        PERF_REG_X(23), PERF_REG_X(24),
    PERF_REG_X(25), PERF_REG_X(26),        PERF_REG_X(27),        PERF_REG_X(28), PERF_REG_X(29),
    PERF_REG_X(30), PERF_REG_SLOT(31, sp), PERF_REG_SLOT(32, pc),
};
#elif defined(__riscv)
/* PC (bit 0), then x1-x31 (bits 1-31): user_regs_struct's own order, one
 * unsigned long each. */
#define PERF_REGS_USER_MASK ((1ULL << 32) - 1)
#define PERF_REG_R(n)                                                                              \
    {                                                                                              \
        (n), (n) * sizeof(unsigned long)                                                           \
    }
static const struct perf_reg_slot perf_reg_slots[] = {
    PERF_REG_R(0),  PERF_REG_R(1),  PERF_REG_R(2),  PERF_REG_R(3),  PERF_REG_R(4),  PERF_REG_R(5),
    PERF_REG_R(6),  PERF_REG_R(7),  PERF_REG_R(8),  PERF_REG_R(9),  PERF_REG_R(10), PERF_REG_R(11),
    PERF_REG_R(12), PERF_REG_R(13), PERF_REG_R(14), PERF_REG_R(15), PERF_REG_R(16), PERF_REG_R(17),
    PERF_REG_R(18), PERF_REG_R(19), PERF_REG_R(20), PERF_REG_R(21), PERF_REG_R(22), PERF_REG_R(23),
    PERF_REG_R(24), PERF_REG_R(25), PERF_REG_R(26), PERF_REG_R(27), PERF_REG_R(28), PERF_REG_R(29),
    PERF_REG_R(30), PERF_REG_R(31),
};
#else
#error "ptprof: unsupported architecture (x86_64, aarch64 and riscv64 are supported)"
#endif

static inline bool perf_regs_to_user(const uint8_t *regs, uint64_t mask,
                                     struct user_regs_struct *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < sizeof(perf_reg_slots) / sizeof(perf_reg_slots[0]); i++) {
        unsigned bit = perf_reg_slots[i].bit;
        if (!(mask >> bit & 1))
            return false;
        /* The value's index: the registers of lower bits come first. */
        size_t index = (size_t)__builtin_popcountll(mask & ((1ULL << bit) - 1));
        uint64_t v = perf_u64(regs, index);
        memcpy((uint8_t *)out + perf_reg_slots[i].offset, &v, sizeof(v));
    }
    return true;
}

static inline bool perf_sample_snapshot(const struct perf_sample *s, uint64_t mask,
                                        struct stack_snapshot *snap)
{
    memset(snap, 0, sizeof(*snap));
    if (s->regs_abi == 0 || !s->regs || !perf_regs_to_user(s->regs, mask, &snap->regs))
        return false;
    snap->sp = (uint64_t)REGS_SP(snap->regs);
    snap->data = (uint8_t *)(uintptr_t)s->stack;
    snap->size = snap->capacity = (size_t)s->stack_size;
    /* The kernel copies less than asked only where the stack ends. */
    snap->complete = s->stack_size < s->stack_requested;
    return true;
}

#endif
