/*
 * interp.h - an interpreter's own frames, read from the target's memory and
 * merged with its native call stack (docs/python.md).
 *
 * An interpreted program's native stack shows the interpreter's eval loop,
 * not the program's functions.  Each interpreter module (one per
 * interpreter, behind struct interp_ops, the way measurement sources sit
 * behind pmu.h; CPython in python*.c) finds its runtime in a process and
 * reads a thread's frames; this layer keeps what every module shares: which
 * process runs which interpreter, the names of the frames (synthetic PCs
 * named by LOCATION records, docs/format.md, as the folded and JIT frames
 * are), the merge with the native stack, and the counts -d and info show.
 *
 * Contract:
 *  - interp_new() returns the recording's state, or NULL when interpreter
 *    frames are off (PTPROF_INTERP=0, or no stacks are recorded).  Every
 *    other function accepts NULL and then does nothing (merge returns the
 *    native depth unchanged).
 *  - interp_read() reads the frames of thread TID of process P now: exact
 *    while the thread cannot change them (stopped, or blocked in a call:
 *    WHEN->sample NULL).  For a sample taken earlier of a thread that ran
 *    on (the perf engine), WHEN->sample is what the sample copied, and frames
 *    that cannot be shown to be the sample's are dropped and counted
 *    (stale, or unchecked where the interpreter leaves no evidence).  It looks at P's maps again
 * only when they changed since the last call (p->maps_version): a process that runs no interpreter
 * costs one check per exec or map change. Returns false (ST empty) when P runs no readable
 * interpreter, the thread has no interpreter state, or the read failed validation; the last is
 * counted as an unreadable stack, never shown.
 *  - With WHEN->defer (a stopped thread), what a module can name from what
 *    it already knows waits for interp_finish(), after the resume: the stop
 *    reads only where the frames are.  The object that names a frame is
 *    read again then and must say what it said before, or the stack is
 *    counted torn and not shown.  interp_merge() merges nothing until then.
 *  - interp_merge() rewrites the native stack PCS (leaf first, DEPTH
 *    entries, room for MAX) with ST: each eval-loop frame is replaced by
 *    the interpreter frames it runs, native frames between them stay where
 *    they are (native code called from a function sits under it); frames
 *    of ST left over (a native stack cut short, no eval frame found) go to
 *    the outer end.  Returns the new depth (at most MAX).
 *  - Memory of the target is untrusted input: every read is bounded
 *    (depth, string lengths, table sizes), fails cleanly, and is counted;
 *    nothing is allocated from a size read there beyond fixed caps.
 */
#ifndef PTPROF_RECORD_INTERP_INTERP_H
#define PTPROF_RECORD_INTERP_INTERP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "record/output.h"
#include "record/process.h"
#include "unwind/stack.h"

/* Interpreter frames deeper than this are cut (counted as truncated). */
#define INTERP_MAX_FRAMES 128

/* Synthetic PCs of interpreter frames: non-canonical addresses on x86-64
 * (with 4- or 5-level paging) and aarch64, so never code of the process. */
#define INTERP_PC_BASE 0x5079000000000000ULL
#define INTERP_PC_END 0x507a000000000000ULL

/* One interpreter frame: its synthetic PC, and whether it is the outermost
 * frame one call of the eval loop runs (the next frame belongs to an outer
 * eval-loop call). */
struct interp_frame {
    uint64_t pc; /* 0 while its name waits for interp_finish() */
    bool entry;
};

/* A frame whose naming waits until the thread runs on (interp_when.defer):
 * the object that names it (a code object), where in it the frame was, and
 * what the module's cache said of that object, which must still hold. */
struct interp_deferred {
    uint64_t object, at;
    uint64_t expect[4];
};

struct interp_stack {
    struct interp_frame frames[INTERP_MAX_FRAMES];
    struct interp_deferred deferred[INTERP_MAX_FRAMES]; /* by frame, where its pc is 0 */
    uint32_t n, ndeferred;
    bool cut; /* deeper than INTERP_MAX_FRAMES */
};

/* What a module reports of one frame, before it is named. */
struct interp_frame_name {
    const char *function; /* qualified where the interpreter has it */
    const char *file;     /* the source file as the code object names it */
    uint32_t line;
};

struct interp_names; /* interp_names.c: names -> synthetic PCs, LOCATION records */
uint64_t interp_names_pc(struct interp_names *n, uint32_t pid, const struct interp_frame_name *f);

/* Why a read failed, for the counts. */
enum interp_failure {
    INTERP_NO_THREAD,  /* no thread state for the thread (not started yet, native only) */
    INTERP_BAD_READ,   /* memory that could not be read (freed, unmapped, torn) */
    INTERP_BAD_OBJECT, /* an object of the wrong type, a loop, an absurd size */
    INTERP_TORN,       /* the thread changed its frames during the read */
    INTERP_STALE,      /* read after the sample: the frames moved since it was taken */
    INTERP_UNCHECKED,  /* read after the sample, with nothing in it to check them against */
    INTERP_LATE,       /* read longer after the sample than MAX_AGE_NS: not read */
    INTERP_FAILURES
};

/* When frames are read, as the thread stands. */
struct interp_when {
    bool stopped; /* in a ptrace-stop: nothing can move, no need to check */
    /* The perf engine: the registers and stack copy of a sample taken
     * earlier, while the thread ran on; NULL: the frames wanted are the
     * thread's now (stopped, or blocked in a call). */
    const struct stack_snapshot *sample;
    /* How long before the read SAMPLE was taken, and the most that is read:
     * a thread that ran on long enough can have returned from the sample's
     * call and called another whose frame lies at the same address, which
     * the check against the sample cannot tell apart (docs/python.md). */
    uint64_t age_ns, max_age_ns;
    /* The thread's stack as copied at the same stop, or NULL: frames that
     * lie in it (an eval loop's entry frame on the C stack) are read from
     * the copy rather than from the process. */
    const struct stack_snapshot *copy;
    /* Stopped: frames whose objects the module already names are named
     * after the resume, by interp_finish(), not inside the stop. */
    bool defer;
};

/* One interpreter module. */
struct interp_ops {
    const char *name;
    /* Does process PID, with MAPS, run this interpreter?  Returns its
     * runtime, or NULL: *WHY empty when it does not run it, else one line
     * saying why it cannot be read (an unsupported version, a layout that
     * fails validation), which interp.c warns once. */
    void *(*probe)(pid_t pid, const struct map_list *maps, char *why, size_t whylen);
    /* Is the runtime still where it was found, now that the maps changed
     * (an exec or munmap drops it)? */
    bool (*still_mapped)(const void *rt, const struct map_list *maps);
    /* Describe the runtime in a few words ("CPython 3.12.1"). */
    const char *(*describe)(const void *rt);
    /* Read thread TID's frames into ST, naming them through NAMES (PID is
     * the process, for the names), as WHEN says: with a sample, kept only
     * if they can be shown to be the ones the thread ran then; unless
     * stopped, checked to be the same at the end of the read as at its
     * start.  Returns true, or false with *FAILURE. */
    bool (*read_thread)(void *rt, pid_t tid, const struct interp_when *when,
                        struct interp_names *names, uint32_t pid, struct interp_stack *st,
                        enum interp_failure *failure);
    /* Name ST's deferred frames, once the thread runs on: each object must
     * still be what it was (else INTERP_TORN, and the module forgets it). */
    bool (*finish_thread)(void *rt, struct interp_names *names, uint32_t pid,
                          struct interp_stack *st, enum interp_failure *failure);
    /* Is PC (a return address when RA) in the eval loop? */
    bool (*is_eval_pc)(const void *rt, uint64_t pc, bool ra);
    void (*release)(void *rt);
};

/* The merge itself, for any module: IS_EVAL(RT, pc, ra) says which native
 * frames are eval-loop frames.  Same contract as interp_merge(). */
typedef bool (*interp_is_eval_fn)(const void *rt, uint64_t pc, bool ra);
int interp_merge_stack(interp_is_eval_fn is_eval, const void *rt, const struct interp_stack *st,
                       uint64_t *pcs, int depth, int max);

/* Are interpreter frames wanted (stacks recorded, PTPROF_INTERP not 0)? */
bool interp_wanted(bool stacks);
/* Does the command ARGV (or process ATTACH_PID when not 0) look like an
 * interpreter a module reads, by its file names (interp_target.c)?  WHAT
 * gets the name that says so. */
bool interp_target_guess(char *const *argv, pid_t attach_pid, char *what, size_t size);

struct interp;

struct interp *interp_new(struct output *out, bool stacks);
bool interp_read(struct interp *in, struct process *p, pid_t tid, const struct interp_when *when,
                 struct interp_stack *st);
/* After a read with WHEN->defer, once the thread runs on: names the frames
 * that waited.  On failure ST is left empty (native frames only) and the
 * read counted as unreadable.  Nothing to do returns true. */
bool interp_finish(struct interp *in, const struct process *p, struct interp_stack *st);
int interp_merge(struct interp *in, const struct process *p, const struct interp_stack *st,
                 uint64_t *pcs, int depth, int max);
/* Frames of some process are read: the recorder keeps its reads timely. */
bool interp_found(const struct interp *in);
/* -d: what was read and what failed, and how consistency was kept
 * (CONSISTENCY: "read while stopped", ...). */
void interp_print_summary(const struct interp *in, FILE *f);
/* The META info shows (interp, interp_stacks, interp_unreadable...). */
void interp_write_meta(const struct interp *in, struct output *out, const char *consistency);
void interp_free(struct interp *in);

/* The modules, NULL-terminated. */
extern const struct interp_ops python_interp_ops; /* python.c */

#endif
