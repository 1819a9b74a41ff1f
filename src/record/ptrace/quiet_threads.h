/*
 * quiet_threads.h - a crowded round's quiet threads, known without reading
 * each one's schedstat (the ptrace engine; docs/recording.md, "Many
 * threads: which threads a round stops").
 *
 * In a crowded round most threads have not run since their last look
 * (they sleep, or wait for a CPU), and reading each one's schedstat only to
 * learn so is most of the round's checking: with a pool of 500 threads at
 * rest, 252 us a round, 54 us with this (bench/RESULTS.md).  The kernel
 * sums the same counter over a process: clock_gettime() on the process's CPU clock
 * is every thread's schedstat CPU time, plus the time of its threads gone,
 * in one call of about 0.5 us at 64 threads.  So a round reads the threads
 * that ran at their last look as before, and postpones the others: the
 * quiet ones (those that had not run since their copy), those its last
 * look left out waiting for a CPU, and those the round does not look at
 * (a stop asked of them and not come yet), each counted for its time as
 * last read.  Then, per process, one read of its clock:
 *
 *  - it equals the offset (the time no thread of the table holds: threads
 *    gone) plus every thread's time as last known: no quiet thread's CPU
 *    time moved, and each is reused without a read;
 *  - it is more: the postponed are read, those copied longest ago first
 *    (a fair scheduler gives the CPU to the thread that waited longest)
 *    and those waiting for a stop last (they run only to stop), until the
 *    time they ran makes up the difference; the rest keep their state
 *    without a read;
 *  - the difference cannot be made up (a thread gone, time run after the
 *    clock was read, the offset not known yet): every postponed thread
 *    is read, as before, and the offset is set anew from the clock read
 *    after them.
 *
 * What it cannot see: the kernel adds a running thread's time at its
 * scheduler ticks and when it leaves the CPU, so a quiet thread put on a
 * CPU less than a tick ago passes for quiet (or for still waiting).  A
 * crowded round leaves such a thread out anyway (it ran less than half a period since its copy):
 * it is reused instead, its copy standing for the round, and its time
 * goes to its next copy either way.  So only crowded rounds use this;
 * the others read every thread.
 *
 * Contract: between quiet_threads_begin() and quiet_threads_end() the
 * thread table does not change; every thread of the table is given to
 * exactly one of quiet_threads_read() (the round read it),
 * quiet_threads_unlooked() (the round does not look at it: it counts for
 * the sum only) or quiet_threads_postpone().  quiet_threads_end() settles
 * the postponed through LOOK (read and sort it as the round does: false
 * when it could not be read) or REUSE (it did not run since its last look).
 */
#ifndef PTPROF_RECORD_PTRACE_QUIET_THREADS_H
#define PTPROF_RECORD_PTRACE_QUIET_THREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "record/ptrace/threads.h"

/* A process's accounts: the offset persists between rounds. */
struct quiet_process {
    pid_t pid;
    bool offset_known;
    uint64_t offset; /* its clock minus its threads' times: threads gone */
    /* this round */
    bool seen;        /* a thread of it was given */
    uint64_t sum;     /* its threads' times as last known */
    bool broken;      /* a thread could not be read: no sum */
    size_t postponed; /* its quiet threads waiting for the clock */
};

/* A thread waiting for its process's clock. */
struct quiet_postponed {
    size_t thread; /* its index in the thread table */
    bool sum_only; /* the round does not look at it: read only if the sum needs it */
};

struct quiet_threads {
    bool off; /* PTPROF_QUIET=0: every thread is read */
    struct quiet_process *procs;
    size_t nprocs, procs_cap;
    struct quiet_postponed *postponed;
    size_t npostponed, postponed_cap;
    /* for -d */
    uint64_t reads_saved;    /* quiet threads reused without a read */
    uint64_t postponed_seen; /* threads postponed, summed over rounds */
};

void quiet_threads_free(struct quiet_threads *q);

/* A round over NPROCS processes (the tracer's table) begins. */
void quiet_threads_begin(struct quiet_threads *q, size_t nprocs);
/* TH was read by the round: CPU_NS is its time now. */
void quiet_threads_read(struct quiet_threads *q, const struct thread *th, uint64_t cpu_ns);
/* Thread I of TT is not looked at by the round (stopped, late, left
 * out...): it counts in the sum for its time as last read
 * (thread.read_cpu_ns), read again only when the clock says a postponed
 * thread ran, or at once when nothing was read of it yet. */
void quiet_threads_unlooked(struct quiet_threads *q, struct thread_table *tt, size_t i);
/* Whether thread I of TT waits for its process's clock (true: the round
 * leaves it to quiet_threads_end()): it was quiet at its last look, or
 * left out waiting for a CPU (thread.waiting). */
bool quiet_threads_postpone(struct quiet_threads *q, const struct thread_table *tt, size_t i);
/* Settles the postponed threads (above); those not looked at are read
 * without LOOK and never given to REUSE. */
void quiet_threads_end(struct quiet_threads *q, struct thread_table *tt,
                       bool (*look)(void *ctx, struct thread *th, uint64_t *cpu_ns),
                       void (*reuse)(void *ctx, struct thread *th), void *ctx);

#endif
