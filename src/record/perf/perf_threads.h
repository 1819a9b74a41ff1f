/*
 * perf_threads.h - the threads the perf engine knows, by tid.
 *
 * Contract: entries are allocated one by one, so a pointer stays valid
 * until perf_threads_remove() of that tid; perf_threads_find() is O(1).
 * perf_threads_at() walks the live entries in no particular order
 * (indices shift on removal: do not remove while walking).
 */
#ifndef PTPROF_RECORD_PERF_PERF_THREADS_H
#define PTPROF_RECORD_PERF_PERF_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/syscall_origin.h"

#include "record/perf/perf_counters.h"
#include "record/tid_index.h"

struct perf_thread {
    pid_t tid, pid;
    size_t proc;     /* index in the engine's process table */
    char name[17];   /* comm */
    uint64_t cpu_ns; /* CPU time: read with its samples, or the sum of their periods */
    /* The values last read with a sample from each CPU's event (the
     * thread has an inherited event per CPU, each counting only there):
     * per CPU slot, task-clock then the counters; NULL until first read. */
    uint64_t *last_read;
    uint64_t sample_time; /* monotonic: its last CPU sample's, 0 before one */
    /* Off CPU: what the last look at /proc/PID/task/TID/syscall found. */
    int syscall_fd;
    bool blocked;
    int syscall_raw; /* the file's number: -1 blocked outside a call (stopped, a fault) */
    int syscall;     /* ...named: restart_syscall as the call it restarts */
    struct syscall_origin origin;
    uint64_t sp, pc;
    uint32_t blocked_stack;
};

struct perf_threads {
    struct perf_thread **all;
    size_t count, cap;
    struct tid_index index; /* tid -> position in all */
};

void perf_threads_init(struct perf_threads *t);
void perf_threads_free(struct perf_threads *t);
struct perf_thread *perf_threads_find(const struct perf_threads *t, pid_t tid);
/* A new entry for TID (an existing one is returned as it is). */
struct perf_thread *perf_threads_add(struct perf_threads *t, pid_t pid, pid_t tid, size_t proc);
void perf_threads_remove(struct perf_threads *t, pid_t tid);

#endif
