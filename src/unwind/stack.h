/*
 * stack.h - call stacks: a snapshot of registers and stack, unwound into
 * return addresses.
 *
 * Contract (see docs/stacks.md):
 *  - A stack_snapshot holds a thread's registers and a copy of its stack
 *    from SP upwards (size says how much was copied, and complete says that
 *    nothing lies above it).  The ptrace engine fills one while the thread
 *    is stopped (record/stack_capture.h); a perf sample's REGS_USER and
 *    STACK_USER fill one too (unwind/perf_regs.h), live or from perf.data.
 *  - unwind_fp() and dwarf_unwind() run on the snapshot only: they never
 *    read the live process, so they also work after it exited (dwarf: once
 *    its modules were reported, see dwarf_unwinder_new()).  Both write
 *    pcs[0] = the sampled PC, then return addresses as they are found on
 *    the stack (pcs[i] for i > 0): a symbolizer looks up pcs[i] - 1 to land
 *    inside the calling instruction.  They return the depth written (at
 *    most MAX), and set *TRUNCATED (when not NULL) when the unwind stopped
 *    because the next frame lay above the copied bytes of a copy that does
 *    not reach the top of the stack: the stack was cut, not ended.
 *  - stack_repair_fp() mends a frame-pointer chain whose innermost frames
 *    have no frame pointer (see below).
 */
#ifndef PTPROF_UNWIND_STACK_H
#define PTPROF_UNWIND_STACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

enum stack_mode { STACK_NONE, STACK_FP, STACK_DWARF };

/* What a user gets without -g: see docs/stacks.md for why. */
#define STACK_MODE_DEFAULT STACK_DWARF
/* Frames kept per stack: deep recursion (thousands of frames) reaches main
 * where the copy holds the whole stack (the ptrace engine's); a deeper
 * stack is kept to this depth and flagged cut. */
#define STACK_MAX_DEPTH 4096
#define STACK_COPY_DEFAULT (8u * 1024u) /* as perf --call-graph dwarf */
#define STACK_COPY_MAX (1024u * 1024u)
/* A stack whose top lies within this many times the thread's limit above
 * SP is copied whole. */
#define STACK_COPY_NEAR_FACTOR 4u
/* A thread's limit doubles after each cut stack, up to this (or the
 * configured size, if larger). */
#define STACK_COPY_GROW_MAX (128u * 1024u)

/* "none", "fp" or "dwarf"; returns -1 for anything else. */
int stack_mode_parse(const char *name, enum stack_mode *mode);
const char *stack_mode_name(enum stack_mode mode);

struct stack_snapshot {
    struct user_regs_struct regs; /* all general registers (regs.h has REGS_PC) */
    uint64_t sp;                  /* stack pointer at capture */
    size_t size;                  /* bytes copied from sp upwards */
    bool complete;                /* the copy reaches the top of the stack */
    uint8_t *data;                /* holds capacity bytes */
    size_t capacity;              /* bytes data can hold */
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
/* Make room for SIZE bytes (at most STACK_COPY_MAX); the data is lost. */
void stack_snapshot_reserve(struct stack_snapshot *s, size_t size);

/* Frame-pointer walk over the snapshot.  It ends on a null, misaligned or
 * non-increasing frame pointer, or at a record outside the copy (setting
 * *TRUNCATED when the copy does not reach the top of the stack). */
int unwind_fp(const struct stack_snapshot *s, uint64_t *pcs, int max, bool *truncated);
/* The same walk from the frame pointer FP (the snapshot's registers give
 * only the copy), appending return addresses to PCS; returns the new
 * depth. */
int unwind_fp_from(const struct stack_snapshot *s, uint64_t fp, uint64_t *pcs, int depth, int max,
                   bool *truncated);

/* DWARF CFI unwinding with elfutils' libdwfl, one unwinder per process.
 * Modules come from /proc/PID/maps (and the vDSO from the process's
 * memory), reported at the first dwarf_unwind() and again at the first one
 * after dwarf_unwinder_maps_changed() (dlopen, munmap, exec).  When the
 * process is gone by then, the modules already known are kept. */
struct dwarf_unwinder;
struct dwarf_unwinder *dwarf_unwinder_new(pid_t pid);
/* An unwinder for a process that is not there (a recorded file's): its
 * modules are the file mappings dwarf_unwinder_set_maps() was last given
 * (each file opened by its path), never the live process's. */
struct map_entry;
struct dwarf_unwinder *dwarf_unwinder_new_offline(pid_t pid);
void dwarf_unwinder_set_maps(struct dwarf_unwinder *u, const struct map_entry *maps, size_t n);
void dwarf_unwinder_maps_changed(struct dwarf_unwinder *u);
int dwarf_unwind(struct dwarf_unwinder *u, pid_t tid, const struct stack_snapshot *s, uint64_t *pcs,
                 int max, bool *truncated);
void dwarf_unwinder_free(struct dwarf_unwinder *u);
/* The unwinder's libdwfl session with the process's modules reported (as
 * dwarf_unwind() would report them), for CFI lookups; NULL if none. */
struct Dwfl *dwarf_unwinder_modules(struct dwarf_unwinder *u);

/*
 * Frame pointers through frameless code.  A function without a frame
 * pointer (a leaf GCC builds without one, the vDSO's and libc's functions,
 * any function sampled in its prologue or epilogue) links no frame record,
 * so a frame-pointer walk skips its caller: the time of a program function
 * calling clock_gettime is charged to that function's caller.
 * stack_repair_fp() unwinds the innermost frames by their CFI (.eh_frame,
 * through U's modules: build U with dwarf_unwinder_new() for the process),
 * reading saved words from the snapshot S (registers plus a copy of the
 * stack from SP: a perf sample's REGS_USER and STACK_USER fill one), up to
 * the first two consecutive frames that keep a frame pointer; from the
 * outer of those it goes on with CHAIN (DEPTH entries: the frame-pointer
 * walk from S's registers, pc first then return addresses, as unwind_fp()
 * or the kernel's user callchain give it) where CHAIN passes that frame,
 * or else walks the frame records in the copy.  Writes the mended stack to
 * OUT (at most MAX; OUT may not alias CHAIN) and returns its depth.  Where
 * nothing is known (no module, no CFI for the leaf) OUT is CHAIN.  At most
 * STACK_REPAIR_MAX_FRAMES frames are unwound by CFI.  *TRUNCATED (when not
 * NULL) is set as unwind_fp() does when the mended part ran off the copy,
 * and left as the caller set it for CHAIN when CHAIN is used.  Cost: a CFI
 * lookup per frame unwound (about a microsecond), after the resume.
 */
#define STACK_REPAIR_MAX_FRAMES 8
int stack_repair_fp(struct dwarf_unwinder *u, const struct stack_snapshot *s, const uint64_t *chain,
                    int depth, uint64_t *out, int max, bool *truncated);

#endif
