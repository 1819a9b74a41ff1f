/*
 * unwind_repair.c - see stack.h: stack_repair_fp(), frame pointers through
 * frameless code.
 *
 * The innermost frames are unwound by their CFI, one step at a time, with
 * a small evaluator for the rules .eh_frame uses (the CFA as a register
 * plus an offset, registers saved at CFA-relative slots, kept, or held in
 * another register).  Only the stack pointer, the frame pointer and the
 * return address are followed beyond the first frame: that is all it
 * takes to find a caller and, at the first frame that keeps a frame
 * pointer, the frame-pointer chain to continue with.  Every stack word
 * comes from the snapshot, as in the DWARF unwinder (unwind_dwarf.c).
 */
#include "unwind/regs.h"
#include "unwind/stack.h"

#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <stdlib.h>
#include <string.h>

/* DWARF register numbers of the stack pointer, the frame pointer and the
 * return address column, and how many registers the leaf's snapshot
 * gives. */
#if defined(__x86_64__)
enum { REG_SP = 7, REG_FP = 6, REG_RA = 16, NREGS = 17 };
#elif defined(__aarch64__)
enum { REG_SP = 31, REG_FP = 29, REG_RA = 30, NREGS = 32 };
#elif defined(__riscv)
enum { REG_SP = 2, REG_FP = 8, REG_RA = 1, NREGS = 32 };
#endif

/* A frame's registers: all of them for the leaf, then only those the
 * unwinding follows. */
struct frame_regs {
    uint64_t value[NREGS];
    bool known[NREGS];
};

static void leaf_registers(const struct user_regs_struct *r, struct frame_regs *f)
{
#if defined(__x86_64__)
    const uint64_t v[NREGS] = {r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi,
                               r->rbp, r->rsp, r->r8,  r->r9,  r->r10, r->r11,
                               r->r12, r->r13, r->r14, r->r15, r->rip};
    memcpy(f->value, v, sizeof(v));
#elif defined(__aarch64__)
    for (int i = 0; i < 31; i++)
        f->value[i] = r->regs[i];
    f->value[31] = r->sp;
#elif defined(__riscv)
    /* user_regs_struct is pc, then x1..x31 in order; x0 is zero. */
    const unsigned long *x = (const unsigned long *)r;
    f->value[0] = 0;
    for (int i = 1; i < 32; i++)
        f->value[i] = x[i];
#endif
    for (int i = 0; i < NREGS; i++)
        f->known[i] = true;
}

static bool stack_word(const struct stack_snapshot *s, uint64_t addr, uint64_t *word,
                       bool *above_copy)
{
    if (addr < s->sp || s->size < 8 || addr - s->sp > s->size - 8) {
        if (addr >= s->sp)
            *above_copy = true;
        return false;
    }
    memcpy(word, s->data + (addr - s->sp), 8);
    return true;
}

static bool reg_value(const struct frame_regs *f, uint64_t regno, uint64_t *v)
{
    if (regno >= NREGS || !f->known[regno])
        return false;
    *v = f->value[regno];
    return true;
}

/*
 * Evaluate a CFI expression as libdw hands it out (dwarf_frame_cfa(),
 * dwarf_frame_register()).  *IS_VALUE tells a value (DW_OP_stack_value, or
 * a register's content) from the address of a stack slot.  Dereferences
 * (a signal frame's CFA is the stack pointer the kernel saved) read the
 * copy.
 */
static bool evaluate(const Dwarf_Op *ops, size_t nops, uint64_t cfa, const struct frame_regs *f,
                     const struct stack_snapshot *s, uint64_t *result, bool *is_value,
                     bool *above_copy)
{
    uint64_t stack[8];
    size_t depth = 0;
    *is_value = false;
    for (size_t i = 0; i < nops; i++) {
        const Dwarf_Op *op = &ops[i];
        uint64_t v;
        if (op->atom == DW_OP_stack_value) {
            *is_value = true;
            continue;
        }
        if (op->atom == DW_OP_plus || op->atom == DW_OP_minus) {
            if (depth < 2)
                return false;
            uint64_t b = stack[--depth];
            stack[depth - 1] = op->atom == DW_OP_plus ? stack[depth - 1] + b : stack[depth - 1] - b;
            continue;
        }
        if (op->atom == DW_OP_plus_uconst) {
            if (depth < 1)
                return false;
            stack[depth - 1] += op->number;
            continue;
        }
        if (op->atom == DW_OP_deref) {
            if (depth < 1 || !stack_word(s, stack[depth - 1], &stack[depth - 1], above_copy))
                return false;
            continue;
        }
        if (op->atom == DW_OP_call_frame_cfa) {
            v = cfa;
        } else if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31) {
            if (!reg_value(f, op->atom - DW_OP_breg0, &v))
                return false;
            v += op->number;
        } else if (op->atom == DW_OP_bregx) {
            if (!reg_value(f, op->number, &v))
                return false;
            v += op->number2;
        } else if (op->atom >= DW_OP_reg0 && op->atom <= DW_OP_reg31) {
            if (nops != 1 || !reg_value(f, op->atom - DW_OP_reg0, result))
                return false;
            *is_value = true; /* the register holds it */
            return true;
        } else if (op->atom == DW_OP_regx) {
            if (nops != 1 || !reg_value(f, op->number, result))
                return false;
            *is_value = true;
            return true;
        } else if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31) {
            v = op->atom - DW_OP_lit0;
        } else if (op->atom == DW_OP_consts || op->atom == DW_OP_constu ||
                   (op->atom >= DW_OP_const1u && op->atom <= DW_OP_const8s)) {
            v = op->number;
        } else {
            return false; /* branches, sized dereferences: not for this walk */
        }
        if (depth == sizeof(stack) / sizeof(stack[0]))
            return false;
        stack[depth++] = v;
    }
    /* The value is the top of the stack: libdw starts register expressions
     * with the CFA pushed, as DWARF says. */
    if (depth == 0)
        return false;
    *result = stack[depth - 1];
    return true;
}

enum rule_result { RULE_OK, RULE_UNDEFINED, RULE_FAILED };

/* The caller's value of register REGNO in frame F. */
static enum rule_result caller_register(Dwarf_Frame *frame, int regno, uint64_t cfa,
                                        const struct frame_regs *f, const struct stack_snapshot *s,
                                        uint64_t *out, bool *above_copy)
{
    Dwarf_Op mem[3], *ops;
    size_t nops;
    if (dwarf_frame_register(frame, regno, mem, &ops, &nops) != 0)
        return RULE_FAILED;
    if (nops == 0) {
        if (ops != NULL)
            return RULE_UNDEFINED;
        return reg_value(f, (uint64_t)regno, out) ? RULE_OK : RULE_FAILED; /* same value */
    }
    uint64_t v;
    bool is_value;
    if (!evaluate(ops, nops, cfa, f, s, &v, &is_value, above_copy))
        return RULE_FAILED;
    if (is_value) {
        *out = v;
        return RULE_OK;
    }
    return stack_word(s, v, out, above_copy) ? RULE_OK : RULE_FAILED;
}

/* The CFI of the code at PC (a return address unless EXACT: the leaf's,
 * or the PC a signal interrupted). */
static Dwarf_Frame *frame_at(Dwfl *dwfl, uint64_t pc, bool exact)
{
    uint64_t lookup = exact ? pc : pc - 1;
    Dwfl_Module *mod = dwfl_addrmodule(dwfl, lookup);
    if (mod == NULL)
        return NULL;
    Dwarf_Addr bias;
    Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
    Dwarf_Frame *frame = NULL;
    if (cfi == NULL || dwarf_cfi_addrframe(cfi, lookup - bias, &frame) != 0)
        return NULL;
    return frame;
}

/* Whether the CFA is the frame pointer plus an offset: a frame that keeps
 * a frame pointer, where the frame-pointer chain is right. */
static bool cfa_from_frame_pointer(const Dwarf_Op *ops, size_t nops)
{
    if (nops != 1)
        return false;
    if (ops[0].atom == DW_OP_bregx)
        return ops[0].number == REG_FP;
    return ops[0].atom == DW_OP_breg0 + REG_FP;
}

/* Where the CFI walk ended. */
enum walk_end {
    WALK_FP_FRAMES, /* at the second of two frames that keep a frame pointer */
    WALK_NO_CFI,    /* at code the CFI does not describe (or after enough steps) */
    WALK_STACK_END, /* the outermost frame: nothing above */
    WALK_CUT,       /* a word lay above the copy */
};

/* Where CHAIN goes on from the frame whose frame pointer is FP: CHAIN's
 * return addresses were read from the records the frame pointer links
 * from the registers' value on; record i sitting at FP makes chain[i + 1]
 * that frame's return address.  Records are followed in the copy; -1 when
 * FP is not found there. */
static int chain_continues_at(const struct stack_snapshot *s, uint64_t fp, int depth)
{
    uint64_t f = (uint64_t)REGS_FP(s->regs);
    for (int i = 0; i + 1 < depth; i++) {
        if (f == fp)
            return i + 1;
        uint64_t record[2];
        bool above = false;
        if (!stack_word(s, f, &record[0], &above) || record[0] <= f)
            return -1;
        f = record[0];
    }
    return -1;
}

/*
 * A frame-pointer walk loses the caller of every frame without a frame
 * pointer, and such frames sit innermost (a leaf, the vDSO, libc called
 * from the program).  So the innermost frames are unwound by their CFI up
 * to the first two consecutive frames that keep a frame pointer: from the
 * outer of those the frame pointers are right again (at least as far as
 * the code keeps them), and CHAIN, or the copy, goes on.
 */
int stack_repair_fp(struct dwarf_unwinder *u, const struct stack_snapshot *s, const uint64_t *chain,
                    int depth, uint64_t *out, int max, bool *truncated)
{
    int n = depth < max ? depth : max;
    Dwfl *dwfl = u && n > 0 ? dwarf_unwinder_modules(u) : NULL;
    if (dwfl == NULL) {
        memcpy(out, chain, (size_t)(n > 0 ? n : 0) * sizeof(*out));
        return n > 0 ? n : 0;
    }

    struct frame_regs f;
    leaf_registers(&s->regs, &f);
    uint64_t pc = chain[0];
    int found = 0;
    out[found++] = pc;
    enum walk_end end = WALK_NO_CFI;
    bool above_copy = false, callee_keeps_fp = false, exact = true;
    for (int step = 0; found < max; step++) {
        Dwarf_Frame *frame = frame_at(dwfl, pc, exact);
        Dwarf_Op *cfa_ops;
        size_t cfa_nops;
        if (frame == NULL || dwarf_frame_cfa(frame, &cfa_ops, &cfa_nops) != 0 || cfa_nops == 0) {
            free(frame);
            end = WALK_NO_CFI;
            break;
        }
        bool keeps_fp = cfa_from_frame_pointer(cfa_ops, cfa_nops);
        if ((keeps_fp && callee_keeps_fp) || step == STACK_REPAIR_MAX_FRAMES) {
            free(frame);
            end = keeps_fp ? WALK_FP_FRAMES : WALK_NO_CFI;
            break;
        }
        uint64_t cfa, ra, fp = 0;
        bool is_value, signal_frame = false;
        if (!evaluate(cfa_ops, cfa_nops, 0, &f, s, &cfa, &is_value, &above_copy)) {
            free(frame);
            end = above_copy ? WALK_CUT : WALK_NO_CFI;
            break;
        }
        /* A signal frame's "return address" is the interrupted PC itself. */
        dwarf_frame_info(frame, NULL, NULL, &signal_frame);
        enum rule_result ra_rule = caller_register(frame, REG_RA, cfa, &f, s, &ra, &above_copy);
        enum rule_result fp_rule = caller_register(frame, REG_FP, cfa, &f, s, &fp, &above_copy);
        free(frame);
        if (ra_rule == RULE_UNDEFINED || (ra_rule == RULE_OK && ra == 0)) {
            end = WALK_STACK_END; /* _start, a thread's entry: the CFI says so */
            break;
        }
        if (ra_rule != RULE_OK) {
            end = above_copy ? WALK_CUT : WALK_NO_CFI;
            break;
        }
        /* Only the registers this walk follows are known in the caller. */
        memset(f.known, 0, sizeof(f.known));
        f.value[REG_SP] = cfa;
        f.known[REG_SP] = true;
        f.value[REG_FP] = fp;
        f.known[REG_FP] = fp_rule == RULE_OK;
        f.value[REG_RA] = ra;
        callee_keeps_fp = keeps_fp;
        exact = signal_frame;
        pc = ra;
        out[found++] = pc;
    }

    if (end == WALK_STACK_END || end == WALK_CUT || found >= max || !f.known[REG_FP]) {
        if (truncated)
            *truncated = end == WALK_CUT && !s->complete;
        return found;
    }
    /* Go on by frame pointers from the frame reached: with CHAIN where it
     * passes that frame (its truncation stands), else over the copy. */
    int at = chain_continues_at(s, f.value[REG_FP], n);
    if (at >= 0) {
        for (int i = at; i < n && found < max; i++)
            out[found++] = chain[i];
        return found;
    }
    bool cut = false;
    found = unwind_fp_from(s, f.value[REG_FP], out, found, max, &cut);
    if (truncated)
        *truncated = cut;
    return found;
}
