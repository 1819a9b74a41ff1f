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
 */
#ifndef PTPROF_FORMAT_PROFILE_H
#define PTPROF_FORMAT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/pmu.h"

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
    PROF_THREAD_STACK_TRUNCATED = 4, /* the stack was cut at the end of the copied bytes */
};

struct prof_thread_sample {
    uint32_t pid;
    uint32_t tid;
    uint64_t pc;
    uint64_t cpu_ns; /* cumulative CPU time of the thread */
    uint32_t stack;  /* index into profile.stacks, 0 = none */
    int32_t syscall; /* syscall number when PROF_THREAD_IN_SYSCALL, else -1 */
    uint32_t flags;
};

struct prof_sample {
    uint64_t time_ns;
    double *values; /* nchannels values */
    uint32_t nthreads;
    struct prof_thread_sample *threads;
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

struct profile {
    char *format; /* "native", "pperf", ... */
    struct prof_meta *meta;
    size_t nmeta;
    struct prof_channel *channels;
    size_t nchannels;
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
    struct prof_sample *samples;
    size_t nsamples;
    struct prof_location *locations; /* symbol tables of a .pbin, else none */
    size_t nlocations;
    struct prof_arc *arcs; /* call counts (gmon.out), else none */
    size_t narcs;
    struct prof_totals totals;
    bool has_totals; /* false: the recorder never finished (killed) */
    bool truncated;  /* the file ends inside a record or is damaged */
    uint64_t truncated_at;
    double frequency; /* requested Hz, 0 if unknown */
};

void profile_init(struct profile *p);
void profile_free(struct profile *p);
/* The value of META key KEY, or NULL. */
const char *profile_meta(const struct profile *p, const char *key);

/* Words shared by info and dump: a channel kind's name ("custom",
 * "current", "voltage", "power", "energy"), and a raw wait status as
 * "exit 3", "killed by SIGSEGV", "killed by SIGABRT (core dumped)"... */
const char *profile_kind_name(enum pmu_kind kind);
void profile_describe_status(int32_t status, char *buf, size_t len);

/* Thread samples with a stack, and how many of them the recorder cut at
 * the end of its stack copy (PROF_THREAD_STACK_TRUNCATED): their outer
 * callers are missing. */
void profile_count_cut_stacks(const struct profile *p, uint64_t *with_stack, uint64_t *cut);

#endif
