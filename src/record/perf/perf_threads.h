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

#define PERF_THREAD_LOOKS 4
#define PERF_THREAD_FOLLOWS 8

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
    /* Where its last CPU sample was: the time it ran after its last
     * sample is charged there (perf_engine.c, end_run()). */
    uint64_t last_pc;
    uint32_t last_stack, last_flags;
    /* Its spells: in a wait since off_since (switched out, not preempted),
     * else on a CPU or waiting for one since on_since, with a CPU sample
     * in that spell or not. */
    bool off, spell_sampled;
    uint64_t off_since, on_since;
    uint64_t last_switch; /* its last context switch record's time */
    /* In the spell: its time on a CPU so far (context switch records),
     * since when it is on one (0: preempted), and where it waited before. */
    uint64_t spell_cpu, on_cpu_since;
    uint64_t came_pc;
    uint32_t came_stack;
    /* The last looks at it, at ticks, the newest first: blocked (where)
     * or not, and when. */
    struct perf_look {
        uint64_t time, pc;
        bool blocked;
        int syscall;
        uint32_t stack, flags;
    } looks[PERF_THREAD_LOOKS];
    /* What came before its wait (the wait before it, and whether the run
     * in between computed or only woke up), and which wait followed the
     * same when a look saw it: a wait no look saw is taken for that one
     * (perf_engine.c, wait_look()). */
    struct perf_run_key {
        uint64_t pc; /* the wait before: its pc and stack, 0 for none */
        uint32_t stack;
        bool computed;
    } wait_key;
    struct perf_wait_follow {
        struct perf_run_key key;
        struct perf_look wait;
    } follows[PERF_THREAD_FOLLOWS];
    unsigned follows_next;
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
