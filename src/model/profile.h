/*
 * profile.h - a profile in memory, whatever file it came from.
 *
 * Every reader (native, the original raw format, and later gperftools,
 * gmon.out, pprof...) fills a struct profile; analysis and rendering read
 * only this.  Times are nanoseconds: `time_ns` fields are CLOCK_REALTIME
 * (since the epoch) so profiles join external measurements by time.
 *
 * Contract: everything hangs off the profile and is freed by
 * profile_free().  Arrays are in file order.  Stack ids index `stacks`
 * (id 0 is "no stack": depth 0).  A reader that meets damage keeps what it
 * read before it, sets `truncated` and says where in `truncated_at`.
 *
 * Weights and values: a thread sample stands for WEIGHT samples (a count
 * of N in a gperftools, pprof or folded file is one thread sample of
 * weight N, so memory follows the file, not the numbers in it); recorded
 * profiles carry no weights (1 each).  A profile may declare value types
 * (`value_types`: a pprof profile's sample types, a perf counter's
 * events); every thread sample then carries one unsigned value per type
 * (none in a sample whose values are all 0).  A sample's weights and
 * values sit in the block of its thread samples, after them
 * (profile_sample_alloc()): a sample is 32 bytes, the most numerous thing
 * a profile of many tiny samples holds.  Read them with prof_weight() and
 * prof_thread_values().
 *
 * The arena: a reader of a big file may put what it makes per sample or
 * per name (a sample's thread samples; the locations' frames and their
 * strings; the stacks' PCs) in the profile's arena instead of one malloc
 * each, and marks what it put there (prof_sample.in_arena,
 * profile.locations_in_arena, profile.stacks_in_arena): profile_free()
 * frees the arena as a whole and never those one by one.  Arena memory is
 * zeroed, 8-byte aligned, never moves and is never freed before the
 * profile: code that replaces such an array takes new memory (from the
 * arena or malloc, clearing the flag only when all of them are malloc'd)
 * and leaves the old one.
 */
#ifndef PTPROF_MODEL_PROFILE_H
#define PTPROF_MODEL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/channel.h"

#define PROF_BUILD_ID_MAX 64

struct prof_meta {
    char *key;
    char *value;
};

struct prof_channel {
    char *name;
    char *unit;
    enum pmu_kind kind;
};

struct prof_process {
    uint32_t pid;
    uint32_t ppid; /* 0 when unknown (the first process) */
    uint64_t start_ns;
    uint64_t exit_ns; /* 0 while running when the profile ended */
    bool exited;
    int32_t exit_status; /* raw wait status (WIFEXITED/WEXITSTATUS apply) */
    char *exe;           /* the program it runs (last exec), may be "" */
};

struct prof_thread {
    uint32_t pid;
    uint32_t tid;
    uint64_t start_ns;
    uint64_t end_ns; /* 0 if still alive at the end */
    char *name;      /* comm, may be "" */
};

/* A mapping of process PID, valid from time_ns until unmapped/replaced. */
struct prof_map {
    uint32_t pid;
    uint64_t time_ns;
    uint64_t start, end, offset;
    uint64_t inode;
    uint32_t dev_major, dev_minor;
    uint32_t perms; /* enum map_perm bits (record/maps.h) */
    uint8_t build_id_len;
    uint8_t build_id[PROF_BUILD_ID_MAX];
    char *path;
    uint64_t unmap_ns; /* 0 while mapped */
};

/* The IMAGE holding what a JIT's perf map and jitdump said of a process's
 * code, in perf-map syntax (record/jit_maps.h writes it, symbol/jit_symbols.h
 * reads it; docs/format.md). */
#define JIT_MAP_IMAGE "[perf-map]"

/* Bytes of memory captured from the target, e.g. the [vdso] image. */
struct prof_image {
    uint32_t pid;
    uint64_t start;
    char *name;
    uint8_t *data;
    size_t size;
};

struct prof_stack {
    uint32_t depth;
    uint64_t *pcs; /* leaf first */
};

enum prof_thread_flags {
    PROF_THREAD_IN_SYSCALL = 1,      /* stopped inside a system call: see syscall */
    PROF_THREAD_STOPPED = 2,         /* in a job-control stop */
    PROF_THREAD_STACK_TRUNCATED = 4, /* its stack lost outer frames (a depth limit, an
                                        unwinder that stopped short, the end of the
                                        recorder's stack copy) */
    PROF_THREAD_PART = 8,            /* the earlier part of an interval, cut where the
                                        thread's state or call changed: its time and
                                        energy count, it is no sample of its own */
};

struct prof_thread_sample {
    uint32_t pid;
    uint32_t tid;
    uint64_t pc;
    uint64_t cpu_ns; /* cumulative CPU time of the thread */
    uint32_t stack;  /* index into profile.stacks, 0 = none */
    int16_t syscall; /* syscall number when PROF_THREAD_IN_SYSCALL, else -1: see
                        prof_syscall() */
    uint16_t flags;  /* prof_thread_flags */
};

/* The syscall number NR as a thread sample holds it: -1 when none, or when
 * it is beyond 16 bits (an x32 call, a number no kernel has): such a
 * thread is in a system call without a name. */
static inline int16_t prof_syscall(int64_t nr)
{
    return nr >= 0 && nr <= INT16_MAX ? (int16_t)nr : -1;
}

struct prof_sample {
    uint64_t time_ns;
    double *values; /* nchannels values, malloc'd (NULL when the profile has no channels) */
    /* nthreads thread samples, then in the same block the weights when
     * has_weights (per thread: the samples it stands for, >= 1), then the
     * thread values when has_thread_values (nthreads x profile.nvalue_types,
     * thread J's from J x nvalue_types), 8-byte aligned: a thread sample's
     * size is a multiple of 8 (profile.c checks). */
    struct prof_thread_sample *threads;
    uint32_t nthreads;
    bool in_arena;          /* the block is in the profile's arena, else malloc'd */
    bool has_weights;       /* else each thread sample stands for 1 */
    bool has_thread_values; /* else every value of every thread sample is 0 */
};

/* How a value type's values become what a thread sample is worth. */
enum prof_value_agg {
    PROF_VALUE_SUM = 0,     /* the amount the thread sample stands for (bytes, events) */
    PROF_VALUE_COUNTER = 1, /* a per-thread running total, as cpu_ns: the increase since
                               the thread's previous sample */
    PROF_VALUE_LEVEL = 2,   /* a reading (a gauge): analyses give its mean over samples */
};
#define PROF_VALUE_AGG_MAX PROF_VALUE_LEVEL
#define PROF_VALUE_TYPES_MAX 64 /* value types a profile may declare */

/* What every thread sample's value I measures: a name ("alloc_space",
 * "instructions"), the unit of its integers ("bytes", "nanoseconds",
 * "count", "" when none), and how it aggregates. */
struct prof_value_type {
    char *name;
    char *unit;
    enum prof_value_agg agg;
};

/* A symbolized address (.pbin files): what symbolizer_resolve() answered. */
struct prof_sym_frame {
    char *binary;
    char *path;
    char *function;
    char *mangled;
    char *file;
    uint32_t line;
    bool inlined;
};

struct prof_location {
    uint32_t pid;
    uint64_t pc;
    bool return_address; /* resolved as PC - 1 (a caller's frame) */
    uint64_t offset;
    uint32_t nframes;
    struct prof_sym_frame *frames;
};

/* A call-graph arc counted by an instrumented program (gmon.out): calls
 * made from the instruction before FROM_PC (a return address in the
 * caller) into the function containing SELF_PC, COUNT times.  Both are
 * addresses of the first process, resolved through its maps as sampled PCs
 * are (gmon.out stores the executable's link-time addresses and its reader
 * maps the executable there).  One entry per (from_pc, self_pc) pair.
 * Formats without call counts leave the table empty (zeroed by
 * profile_init, freed by profile_free). */
struct prof_arc {
    uint64_t from_pc, self_pc;
    uint64_t count;
};

struct prof_totals {
    uint64_t wall_ns;
    uint64_t latency_ns;
    uint64_t samples;       /* as counted by the recorder */
    uint64_t ideal_samples; /* wall time x requested frequency */
};

/* Blocks of a profile's arena (profile.h's first comment). */
struct prof_arena_block;
struct prof_arena {
    struct prof_arena_block *head; /* the block being filled; earlier ones follow */
    size_t used, size;             /* bytes of head's data used, and its capacity */
};

struct profile {
    struct prof_arena arena;
    char *format; /* "native", "pperf", ... */
    struct prof_meta *meta;
    size_t nmeta;
    struct prof_channel *channels;
    size_t nchannels;
    struct prof_value_type *value_types; /* what thread_values hold, NULL when none */
    size_t nvalue_types;
    char *default_metric; /* the metric analyses show unless told (pprof's
                             default_sample_type), NULL: ptprof's default */
    struct prof_process *processes;
    size_t nprocesses;
    struct prof_thread *threads;
    size_t nthreads;
    struct prof_map *maps;
    size_t nmaps;
    struct prof_image *images;
    size_t nimages;
    struct prof_stack *stacks; /* stacks[0] is the empty stack */
    size_t nstacks;
    bool stacks_in_arena; /* every stack's pcs are in the arena */
    struct prof_sample *samples;
    size_t nsamples;
    struct prof_location *locations; /* symbol tables of a .pbin, else none */
    size_t nlocations;
    bool locations_in_arena; /* every location's frames and strings are in the arena */
    struct prof_arc *arcs;   /* call counts (gmon.out), else none */
    size_t narcs;
    struct prof_totals totals;
    bool has_totals; /* false: the recorder never finished (killed) */
    bool truncated;  /* the file ends inside a record or is damaged */
    uint64_t truncated_at;
    double frequency; /* requested Hz, 0 if unknown */
};

void profile_init(struct profile *p);
void profile_free(struct profile *p);

/* SIZE zeroed bytes, 8-byte aligned, from P's arena (never NULL: dies when
 * out of memory), and a copy of S there. */
void *profile_arena_alloc(struct profile *p, size_t size);
char *profile_arena_strdup(struct profile *p, const char *s);
/* Frees S's block of thread samples unless it lives in the arena
 * (profile_free does this for every sample; the values stay). */
void profile_sample_release(struct prof_sample *s);
/* Frees LOC's malloc'd frames and strings. */
void profile_location_release(struct prof_location *loc);
/* Replaces P's locations by the N of LOCS (all malloc'd), freeing the old
 * ones unless they live in the arena. */
void profile_replace_locations(struct profile *p, struct prof_location *locs, size_t n);
/* Gives S, which owns no block yet, NTHREADS zeroed thread samples in one
 * block of P's arena, followed by weights (1 each) when WEIGHTS and by
 * P->nvalue_types zeroed values per thread when THREAD_VALUES; returns
 * S->threads (time_ns and values stay). */
struct prof_thread_sample *profile_sample_alloc(struct profile *p, struct prof_sample *s,
                                                uint32_t nthreads, bool weights,
                                                bool thread_values);
/* Gives S the weights (1 each) or thread values (0) it lacks of those
 * asked: a new block of P's arena with its thread samples and what it
 * had, the old block left where it is (freed when malloc'd). */
void profile_sample_extend(struct profile *p, struct prof_sample *s, bool weights,
                           bool thread_values);
/* Makes S, which owns no block yet, a sample of one thread sample TH
 * standing for WEIGHT samples, in P's arena (time_ns and values stay). */
void profile_sample_set_one(struct profile *p, struct prof_sample *s,
                            const struct prof_thread_sample *th, uint64_t weight);

/* S's weights, one per thread, or NULL (1 each); its thread values
 * (nthreads x nvalue_types), or NULL (all 0).  Writable for the code that
 * builds S. */
static inline uint64_t *prof_weights(const struct prof_sample *s)
{
    return s->has_weights ? (uint64_t *)(void *)(s->threads + s->nthreads) : NULL;
}
static inline uint64_t *prof_all_thread_values(const struct prof_sample *s)
{
    if (!s->has_thread_values)
        return NULL;
    return (uint64_t *)(void *)(s->threads + s->nthreads) + (s->has_weights ? s->nthreads : 0);
}
/* Thread J of sample S: the samples it stands for, and its values (NULL
 * when it carries none: read them as 0). */
static inline uint64_t prof_weight(const struct prof_sample *s, uint32_t j)
{
    return s->has_weights ? prof_weights(s)[j] : 1;
}
/* The samples thread J of S counts as: its weight, none when it is the
 * earlier part of a cut interval (PROF_THREAD_PART). */
static inline uint64_t prof_counted(const struct prof_sample *s, uint32_t j)
{
    return s->threads[j].flags & PROF_THREAD_PART ? 0 : prof_weight(s, j);
}
static inline const uint64_t *prof_thread_values(const struct profile *p,
                                                 const struct prof_sample *s, uint32_t j)
{
    const uint64_t *all = prof_all_thread_values(s);
    return all ? all + (size_t)j * p->nvalue_types : NULL;
}
/* Declare a value type (copies NAME and UNIT); returns its index. */
size_t profile_add_value_type(struct profile *p, const char *name, const char *unit,
                              enum prof_value_agg agg);
/* The index of value type NAME, or -1. */
int profile_value_type(const struct profile *p, const char *name);
/* "sum", "counter", "level". */
const char *profile_value_agg_name(enum prof_value_agg agg);
/* Thread samples whose stack lost outer frames (PROF_THREAD_STACK_TRUNCATED). */
uint64_t profile_truncated_stacks(const struct profile *p);
/* The value of META key KEY, or NULL. */
const char *profile_meta(const struct profile *p, const char *key);

/* Words shared by info and dump: a channel kind's name ("custom",
 * "current", "voltage", "power", "energy"), and a raw wait status as
 * "exit 3", "killed by SIGSEGV", "killed by SIGABRT (core dumped)"... */
const char *profile_kind_name(enum pmu_kind kind);
void profile_describe_status(int32_t status, char *buf, size_t len);

#endif
