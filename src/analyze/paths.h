/*
 * paths.h - a thread sample as a list of keyed frames: the call path.
 *
 * Contract: path_builder_get() returns the path of thread sample T taken
 * at TIME_NS, innermost frame first:
 *  - "[syscall NAME]" in binary "[kernel]" when T was stopped inside a
 *    system call (PROF_THREAD_IN_SYSCALL with a number >= 0; "[syscall N]"
 *    for a number without a name), since its time there is the kernel's;
 *  - the frames of its PC (its stack's pcs[0], or T->pc without a stack),
 *    inlined functions first, as the resolver gives them; where the keys
 *    cannot tell an inlined frame from the frame it was inlined into (the
 *    same key: -k binary, -k symbol), the two are one frame, the outer;
 *  - the frames of each return address of its stack (pcs[1..]), resolved
 *    as return addresses (the call instruction is named), up to the first
 *    one the resolver marks not_code (an unwinder's misreading: it and
 *    the frames after it are left out).
 *  A resolver that returns NULL or no frames gives one frame
 *  "[unknown]" in binary "[unknown]".
 *  Each frame carries the interned id of its key (keys.h, under SPEC, in
 *  KEYS) and of its function's demangled and mangled names (in NAMES),
 *  and whether the resolver marked it inlined (sym_frame.inlined: the
 *  frame was compiled into the frame after it; synthetic frames are not).
 *  UNIQUE lists the distinct key ids of the path in ascending order, so a
 *  recursive function counts once.
 *
 * Paths are computed once per distinct (process, stack, PC, system call,
 * thread when the keys include it) and per state of the process's maps
 * (a new map or unmap starts a new state).  The cache holds at most
 * PATH_CACHE_MAX paths (paths.c), fewer while the paths it held were
 * seldom asked for again, then starts over, so that memory follows the
 * distinct stacks a stretch of samples holds, not all of them (a pprof of
 * many tiny samples has as many stacks as samples): a path is
 * valid until the next path_builder_get(), or, held with
 * path_builder_hold(), until path_builder_release().  A path rebuilt is
 * equal to the one before, not the same pointer or serial.  Strings from the
 * resolver are copied.
 */
#ifndef PTPROF_ANALYZE_PATHS_H
#define PTPROF_ANALYZE_PATHS_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze/keys.h"
#include "analyze/strtab.h"
#include "model/profile.h"
#include "symbol/symbolizer.h"

/* Where frames come from: symbolizer_resolve() in ptprof, a fake in tests. */
struct frame_resolver {
    const struct sym_location *(*resolve)(void *ctx, uint32_t pid, uint64_t time_ns, uint64_t pc,
                                          bool return_address);
    void *ctx;
};

struct path_frame {
    uint32_t key;
    uint32_t function;
    uint32_t mangled;
    bool inlined; /* the resolver marked it inlined into the frame after it */
};

struct path {
    uint32_t nframes;
    uint32_t nunique;
    const struct path_frame *frames;
    const uint32_t *unique;
    /* Its number among the paths the builder made (from 1): what a cache
     * keyed by path holds it by, since a path dropped from the builder's
     * cache may leave its address to another. */
    uint64_t serial;
};

struct path_builder;

struct path_builder *path_builder_new(const struct profile *p, const struct frame_resolver *r,
                                      const struct key_spec *spec, struct strtab *keys,
                                      struct strtab *names);
/* THREAD_LABEL and THREAD_NO name T's thread (used with the thread key). */
const struct path *path_builder_get(struct path_builder *b, uint64_t time_ns,
                                    const struct prof_thread_sample *t, const char *thread_label,
                                    uint32_t thread_no);
/* Keep P valid past later path_builder_get() calls (one hold each);
 * release every hold before path_builder_free().  NULL is ignored. */
void path_builder_hold(const struct path *p);
void path_builder_release(const struct path *p);
/* Tests: start the cache over past MAX_PATHS paths (at least 1). */
void path_builder_set_max_paths(struct path_builder *b, size_t max_paths);
void path_builder_free(struct path_builder *b);

#endif
