/*
 * stack.h - call stacks: copy inside the stop window, unwind outside it.
 *
 * Contract (see docs/stacks.md):
 *  - stack_capture() runs while the thread is in a ptrace-stop: one
 *    PTRACE_GETREGSET and one process_vm_readv of up to the snapshot's
 *    capacity from SP upwards.  A read cut short by the end of the stack's
 *    mapping is not an error (size says how much was copied, and complete
 *    says that nothing lies above it).  stack_capture_regs() and
 *    stack_copy_batch() are its two halves, the second for several threads
 *    of one process in one system call.
 *  - stack_copy_plan() decides how much to copy: the whole rest of the
 *    stack when its top is near, else the thread's limit, which
 *    stack_copy_grow() raises (up to a cap) after an unwind ran off the
 *    end of the copy.
 *  - unwind_fp() and dwarf_unwind() run afterwards, when the thread may be
 *    running again, on the snapshot only: they never read the live
 *    process, so they also work after it exited (dwarf: once its modules
 *    were reported, see dwarf_unwinder_new()).  Both write pcs[0] = the
 *    sampled PC, then return addresses as they are found on the stack
 *    (pcs[i] for i > 0): a symbolizer looks up pcs[i] - 1 to land inside
 *    the calling instruction.  They return the depth written (at most
 *    MAX), and set *TRUNCATED (when not NULL) when the unwind stopped
 *    because the next frame lay above the copied bytes of a copy that does
 *    not reach the top of the stack: the stack was cut, not ended.
 *  - stack_repair_fp() mends a frame-pointer chain whose innermost frames
 *    have no frame pointer (see below).
 * Nothing here is specific to ptrace but stack_capture*(): an engine that
 * gets registers and a stack copy another way fills a stack_snapshot and
 * uses the rest.
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
