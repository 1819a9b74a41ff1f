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
 * that ran at their last look as before, and postpones the quiet ones
 * (those that had not), the ones its last look left out that had not run
 * since the look before (they wait for a CPU), and those in a ptrace stop
 * or waiting for a CPU to enter one, whose last read stands in the sum.
 * Then, per process, one read of its clock:
 *
 *  - it equals the offset (the time no thread of the table holds: threads
 *    gone) plus every thread's time as last known: no quiet thread's CPU
 *    time moved, and each is reused without a read;
 *  - it is more: the postponed ones are read, those seen running longest
 *    ago first (a fair scheduler gives the CPU to the thread that waited
 *    longest), the stopped and stopping ones last and for the sum only,
 *    until the time they ran makes up the difference; the rest are
 *    reused (left out again) without a read;
 *  - the difference cannot be made up (a thread gone, time run after the
 *    clock was read, the offset not known yet): every quiet thread is
 *    read, as before, and the offset is set anew from the clock read
 *    after them.
 *
 * What it cannot see: the kernel adds a running thread's time at its
 * scheduler ticks and when it leaves the CPU, so a quiet thread put on a
 * CPU less than a tick ago passes for quiet.  A crowded round leaves such
 * a thread out anyway (it ran less than half a period since its copy):
 * it is reused instead, its copy standing for the round, and its time
 * goes to its next copy either way.  So only crowded rounds use this;
 * the others read every thread.
 *
 * Contract: between quiet_threads_begin() and quiet_threads_end() the
 * thread table does not change; every thread of the table is given to
 * exactly one of quiet_threads_read() (the round read it),
 * quiet_threads_unlooked() (the round did not read it: read here, for the
 * sum only, or postponed when stopped or stopping) or
 * quiet_threads_postpone().  quiet_threads_end() settles the postponed
 * through LOOK (read and sort it as the round does: false when it could
 * not be read) or REUSE (it did not run); the stopped and stopping ones it
 * reads for the sum only, or leaves, and never gives back.
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

struct quiet_threads {
    bool off; /* PTPROF_QUIET=0: every thread is read */
    struct quiet_process *procs;
    size_t nprocs, procs_cap;
    size_t *postponed; /* indexes into the thread table */
    size_t npostponed, postponed_cap;
    /* for -d */
    uint64_t reads_saved;    /* quiet threads reused without a read */
    uint64_t postponed_seen; /* threads postponed, summed over rounds */
    uint64_t stops_unread;   /* threads stopped or to stop left unread */
};

void quiet_threads_free(struct quiet_threads *q);

/* A round over NPROCS processes (the tracer's table) begins. */
void quiet_threads_begin(struct quiet_threads *q, size_t nprocs);
/* TH was read by the round: CPU_NS is its time now. */
void quiet_threads_read(struct quiet_threads *q, const struct thread *th, uint64_t cpu_ns);
/* Thread I of TT was not read by the round (stopped, late, left out...):
 * its time is read here, for the sum; or, for a thread in a ptrace stop or
 * waiting to enter one (a CPU to enter it is all it can run), the time its
 * last read found stands in the sum until the clock says otherwise. */
void quiet_threads_unlooked(struct quiet_threads *q, const struct thread_table *tt, size_t i);
/* Whether thread I of TT waits for its process's clock (true: the round
 * leaves it to quiet_threads_end()): quiet at its last look, or left out
 * by that look and still since the look before (waiting for a CPU). */
bool quiet_threads_postpone(struct quiet_threads *q, const struct thread_table *tt, size_t i);
/* Settles the postponed threads (above). */
void quiet_threads_end(struct quiet_threads *q, struct thread_table *tt,
                       bool (*look)(void *ctx, struct thread *th, uint64_t *cpu_ns),
                       void (*reuse)(void *ctx, struct thread *th), void *ctx);

#endif
