/*
 * spells.h - where a thread's time between two entries changed from
 * running to waiting, or back (the ptrace engine; docs/recording.md,
 * "How finely a wait is measured").
 *
 * An entry stands for the wall time since the thread's previous one.  When
 * the two entries disagree (one running, the other blocked in a call or in
 * a job-control stop), charging the whole interval to the later one puts
 * a wait's start or end as far as a tick from where it was; on a machine
 * whose CPUs are busy the profiler's ticks come when the program gives a
 * CPU up, in its waits, and the waits came out wide.  The thread's
 * schedstat, read at both copies, says how the interval divides: the CPU
 * time it ran, the time it waited for a CPU, the rest blocked.  So the
 * interval is cut in two where the thread's state changed (the time the
 * profiler held it stopped after the earlier copy is the earlier place's,
 * not a wait):
 *
 *  - running, then blocked: the run (with the time it waited for a CPU
 *    meanwhile: preempted while computing) goes to the earlier place, the
 *    time blocked to the wait: the cut is that long before the later
 *    copy (not its round's tick, which came earlier), and the earlier
 *    place's entry takes all the CPU time;
 *  - blocked, then running: the wait (with the time it waited for a CPU
 *    once woken: by its own clock a call returns when the thread gets a
 *    CPU) goes to the earlier place, the run (with the time it was queued
 *    while running, preempted) to the later one: the cut is that long
 *    before the later copy, and the CPU time is the later one's.  The
 *    kernel counts how often the thread was put on a CPU, not how long
 *    each queue was: of N times, one followed the wake-up, so the wait
 *    takes 1/N of the time queued (all of it before this, four threads
 *    on two CPUs gave their waits 2.7 points of their computing).
 *
 * Both running: where the earlier place's run ended is not known.  Charged
 * whole to the later entry, every interval in which a thread moved on
 * would give the earlier place's share of it to the later one: each place
 * loses half an interval at its end and gains it at its start, which
 * cancels between two places but not at a thread's start, whose first
 * place only loses (40% of a 10 ms thread came out 36.5%).  So when the
 * run moved to another call (the stack above the leaf differs), the
 * interval is cut in the middle, each place taking half, as its expected
 * share; within one call (a loop) it is left whole, so a busy loop's
 * entries are not doubled.  Both blocked, the schedstat says how long the
 * thread ran between the waits, not how the time blocked divides between
 * them: the middle of the time blocked, counted from the earlier copy's
 * resume.
 *
 * Contract: spell_cut() takes the mark of the thread's previous entry and
 * what is known of it now; when the interval is cut it returns true with
 * *AT_NS (inside the interval, exclusive) and *FIRST, the earlier place's
 * entry to write at *AT_NS.  Pure: no I/O.
 */
#ifndef PTPROF_RECORD_PTRACE_SPELLS_H
#define PTPROF_RECORD_PTRACE_SPELLS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/profile.h"

/* A thread's entry, and its schedstat when that entry was true. */
struct spell_mark {
    bool valid;
    uint64_t time_ns; /* the sample it went into (realtime ns) */
    uint64_t seen_ns; /* when its schedstat below was read (realtime ns)... */
    uint64_t from_ns; /* ...and from when it counts again: a thread stopped by
                         the profiler neither runs nor queues until resumed,
                         and the program's clock counts that time to what it
                         was doing (its resume, else seen_ns) */
    uint64_t cpu_ns;  /* schedstat: time run */
    uint64_t wait_ns; /* schedstat: time waited for a CPU */
    uint64_t runs;    /* schedstat: times put on a CPU */
    uint64_t callers; /* the stack above the leaf, hashed: which call the entry
                         is in (0: no stack, nothing to tell calls apart by) */
    struct prof_thread_sample entry;
};

/* Whether ENTRY is a thread off its CPU of its own accord: blocked in a
 * call, or stopped by job control. */
bool spell_entry_blocked(const struct prof_thread_sample *entry);

bool spell_cut(const struct spell_mark *prev, const struct spell_mark *now, uint64_t *at_ns,
               struct prof_thread_sample *first);

/* A hash of PCS[1..DEPTH), the calls the leaf is in; 0 when DEPTH < 2. */
uint64_t spell_callers(const uint64_t *pcs, int depth);

#endif
