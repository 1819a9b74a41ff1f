/*
 * host_steal.h - the share of the CPUs' time that a virtual machine's host
 * took for its other work ("steal", /proc/stat) between two marks.
 *
 * The perf engine's CPU time is its threads' task-clock, which runs on
 * while the host holds the CPU of a thread that is on it; the program's
 * own CPU clock (and the ptrace engine's schedstat) does not count that
 * time.  On a host that steals a third of the time, the perf engine's CPU
 * time comes out a half above the program's: -d prints the share, so such
 * a total can be read (docs/recording.md).
 *
 * Contract: host_steal_mark() never fails (an unreadable /proc/stat gives
 * zeros); host_steal_share() is in [0, 1], 0 when no tick passed.
 * host_steal_parse() reads the "cpu" line of a /proc/stat text; it
 * returns false when there is none (for tests).
 */
#ifndef PTPROF_RECORD_HOST_STEAL_H
#define PTPROF_RECORD_HOST_STEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct host_steal {
    uint64_t steal, all; /* USER_HZ ticks summed over the CPUs */
};

void host_steal_mark(struct host_steal *m);
double host_steal_share(const struct host_steal *from, const struct host_steal *to);
bool host_steal_parse(const char *text, size_t len, struct host_steal *m);

#endif
