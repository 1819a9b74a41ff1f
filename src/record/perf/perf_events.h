/*
 * perf_events.h - the kernel side of the perf engine: which events are
 * opened on the program, how, and where their records go.
 *
 * Contract:
 *  - One sampling event per task and CPU: the software task-clock with a
 *    fixed period of 1/HZ of the thread's CPU time (frequency mode gives
 *    the same for this event: the kernel turns a frequency into that
 *    period), `inherit` so every thread and child created later is
 *    sampled too, excluding the kernel (samples that land in a system call
 *    are taken at the user-space PC that made it).  A sample holds IP, TID,
 *    TIME (CLOCK_MONOTONIC), CPU, PERIOD and the stack -g asks for: the user
 *    call chain (fp), the user registers and the top of the user stack
 *    (dwarf), or nothing (none).  The event also reports MMAP2, COMM
 *    (exec), FORK and EXIT records, and each thread's context switches
 *    (SWITCH) where the kernel writes them (`switches`).
 *  - With counters (-e) each sampling event leads a group of them, and
 *    each sample carries the group's values for its thread
 *    (PERF_SAMPLE_READ; needs a kernel that reads inherited groups per
 *    thread, Linux 6.12 or later: an older one is refused, one line, before
 *    the program runs).  Counters count in kernel mode too where this user
 *    may count kernel events, else in user mode only, and an event the
 *    kernel counts in kernel mode only is then refused by
 *    perf_events_init().
 *  - Every event of CPU c writes into CPU c's ring buffer (perf_ring.h).
 *  - perf_events_permitted() says whether the sampling event may be opened
 *    on PID (0: ourselves, which is what a program we start will be)
 *    without opening anything that stays; the reason names
 *    kernel.perf_event_paranoid when it is not permitted.
 *  - perf_events_open_task() opens the events of one task on every CPU
 *    and returns 0, or -1 after one line naming the event and the cause
 *    (an event the CPU lacks, more hardware events than counters).
 */
#ifndef PTPROF_RECORD_PERF_PERF_EVENTS_H
#define PTPROF_RECORD_PERF_PERF_EVENTS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/perf_records.h"
#include "record/perf/perf_counters.h"
#include "record/perf/perf_ring.h"

struct record_options;

struct perf_event_set {
    struct perf_event_attr attr; /* the sampling event */
    struct perf_layout layout;   /* what its records hold */
    struct perf_counter_list counters;
    bool kernel;   /* kernel mode is sampled and counted too (this user may) */
    bool read_cpu; /* each sample reads the thread's task-clock (PERF_SAMPLE_READ) */
    bool switches; /* the rings get each thread's context switches (PERF_RECORD_SWITCH) */
    size_t ncpus;
    int *cpus;               /* online CPU numbers */
    int *slot_of_cpu;        /* CPU number -> index in cpus, -1 for none */
    size_t slots_of_cpus;    /* entries of slot_of_cpu */
    struct perf_ring *rings; /* one per CPU, mapped at the first task */
    int *ring_fd;            /* the fd each ring belongs to, -1 before */
    int *leaders;            /* every sampling event opened */
    size_t nleaders, leaders_cap;
    int *members; /* every counter opened */
    size_t nmembers, members_cap;
    size_t ring_pages;
};

bool perf_events_permitted(const struct record_options *opts, char *why, size_t size);

/* Set up S for OPTS (no event opened yet).  Returns 0, or -1 after a
 * message (bad counters). */
int perf_events_init(struct perf_event_set *s, const struct record_options *opts);
/* Open the events of TID on every CPU: disabled until TID calls exec when
 * ON_EXEC, else counting at once. */
int perf_events_open_task(struct perf_event_set *s, pid_t tid, bool on_exec);
/* The index in S->cpus of CPU number CPU, or -1. */
int perf_events_cpu_slot(const struct perf_event_set *s, uint32_t cpu);
/* The bytes of stack each -g dwarf sample brings (--stack-size, or the
 * perf engine's default, at most what a record holds). */
size_t perf_events_stack_copy(const struct record_options *opts);
/* CPU time the sampling events counted, over every task they cover (ns). */
uint64_t perf_events_task_clock(const struct perf_event_set *s);
/* Stop sampling (the rings keep what was written). */
void perf_events_disable(struct perf_event_set *s);
void perf_events_close(struct perf_event_set *s);

/* kernel.perf_event_paranoid, or INT32_MIN when unreadable. */
int perf_event_paranoid(void);

#endif
