/*
 * perf_counters.h - the counters `ptprof record -e` reads with each sample.
 *
 * Contract: perf_counters_parse() turns "EVENT[,EVENT...]" into the
 * kernel's (type, config) pairs of perf's own event names (cycles,
 * instructions, cache-misses... on the CPU's PMU; page-faults,
 * context-switches, cpu-migrations... in software), refusing an unknown
 * name, a name given twice and more than PERF_COUNTERS_MAX events with one
 * line naming the problem.  Whether the CPU has a hardware event is only
 * known when it is opened (perf_events.h), still before the program runs.
 * Counters count in kernel mode too where the user may count kernel
 * events (as `perf stat` does), else in user mode only (`perf stat`'s
 * fallback to `:u`); a `kernel_only` event (context-switches,
 * cpu-migrations: the scheduler counts them from kernel mode) then counts
 * nothing and is refused (perf_events.h).
 */
#ifndef PTPROF_RECORD_PERF_PERF_COUNTERS_H
#define PTPROF_RECORD_PERF_PERF_COUNTERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PERF_COUNTERS_MAX 8

struct perf_counter {
    const char *name;  /* perf's name */
    const char *alias; /* perf's other name, or NULL */
    uint32_t type;     /* PERF_TYPE_HARDWARE or PERF_TYPE_SOFTWARE */
    uint64_t config;
    const char *unit; /* the profile's value type unit: count, nanoseconds */
    const char *about;
    bool kernel_only; /* the kernel counts it in kernel mode only (the scheduler's) */
};

struct perf_counter_list {
    size_t n;
    const struct perf_counter *c[PERF_COUNTERS_MAX];
};

/* Returns 0, or -1 after one line on stderr. */
int perf_counters_parse(const char *spec, struct perf_counter_list *out);
/* perf_counters_parse() for the command line: the same checks, no result. */
int perf_counters_check(const char *spec);
/* Every name -e accepts, with what it counts (--help-events). */
void perf_counters_list(FILE *out);
bool perf_counter_is_hardware(const struct perf_counter *c);

#endif
