/*
 * stack.h - call stacks: copy inside the stop window, unwind outside it.
 *
 * Contract (see docs/stacks.md):
 *  - stack_capture() runs while the thread is in a ptrace-stop: one
 *    PTRACE_GETREGSET and one process_vm_readv of up to the snapshot's
 *    capacity from SP upwards.  A read cut short by the end of the stack's
 *    mapping is not an error (size says how much was copied).
 *  - unwind_fp() and dwarf_unwind() run afterwards, when the thread may be
 *    running again.  Both write pcs[0] = the sampled PC, then return
 *    addresses as they are found on the stack (pcs[i] for i > 0): a
 *    symbolizer looks up pcs[i] - 1 to land inside the calling
 *    instruction.  They return the depth written (at most MAX).
 *  - dwarf_unwind() never reads the live process's memory: every stack word
 *    comes from the snapshot, so it also works after the process exited
 *    (once its modules were reported, see dwarf_unwinder_new()).
 */
#ifndef PTPROF_RECORD_STACK_H
#define PTPROF_RECORD_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

enum stack_mode { STACK_NONE, STACK_FP, STACK_DWARF };

/* What a user gets without -g: see docs/stacks.md for why. */
#define STACK_MODE_DEFAULT STACK_DWARF
#define STACK_MAX_DEPTH 256
#define STACK_COPY_DEFAULT (8u * 1024u) /* as perf --call-graph dwarf */
#define STACK_COPY_MAX (1024u * 1024u)

/* "none", "fp" or "dwarf"; returns -1 for anything else. */
int stack_mode_parse(const char *name, enum stack_mode *mode);
const char *stack_mode_name(enum stack_mode mode);

struct stack_snapshot {
    struct user_regs_struct regs; /* all general registers (regs.h has REGS_PC) */
    uint64_t sp;                  /* stack pointer at capture */
    size_t size;                  /* bytes copied from sp upwards */
    uint8_t *data;                /* holds capacity bytes */
    size_t capacity;              /* the configured copy size */
    /* Only the PC and the stack pointer of regs are known (a thread seen
     * blocked through /proc/PID/task/TID/syscall): dwarf_unwind() leaves
     * the other registers unknown, so a frame whose CFI needs one of them
     * ends the stack instead of being computed from a guess. */
    bool pc_sp_only;
};

/* Allocates COPY_SIZE bytes: 0 means STACK_COPY_DEFAULT, more than
 * STACK_COPY_MAX is clamped.  Aborts when memory runs out (xalloc). */
void stack_snapshot_init(struct stack_snapshot *s, size_t copy_size);
void stack_snapshot_free(struct stack_snapshot *s);

/* TID must be in a ptrace-stop.  Copies min(COPY_SIZE, capacity) bytes at
 * most.  Returns 0, or -1 if the thread is gone (its registers cannot be
 * read); a stack that cannot be read at all leaves size 0. */
int stack_capture(pid_t tid, size_t copy_size, struct stack_snapshot *s);

/* Frame-pointer walk.  A frame record outside the copy is read from the
 * process with process_vm_readv only when LIVE is true (the caller knows
 * the thread is still stopped); otherwise the walk ends there.  It also
 * ends on a null, misaligned or non-increasing frame pointer. */
int unwind_fp(pid_t pid, const struct stack_snapshot *s, bool live, uint64_t *pcs, int max);

/* DWARF CFI unwinding with elfutils' libdwfl, one unwinder per process.
 * Modules come from /proc/PID/maps (and the vDSO from the process's
 * memory), reported at the first dwarf_unwind() and again at the first one
 * after dwarf_unwinder_maps_changed() (dlopen, munmap, exec).  When the
 * process is gone by then, the modules already known are kept. */
struct dwarf_unwinder;
struct dwarf_unwinder *dwarf_unwinder_new(pid_t pid);
void dwarf_unwinder_maps_changed(struct dwarf_unwinder *u);
int dwarf_unwind(struct dwarf_unwinder *u, pid_t tid, const struct stack_snapshot *s, uint64_t *pcs,
                 int max);
void dwarf_unwinder_free(struct dwarf_unwinder *u);

#endif
