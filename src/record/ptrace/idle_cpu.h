/*
 * idle_cpu.h - is a CPU free for the tracer to poll on?
 *
 * Polling for a stop instead of sleeping until its SIGCHLD cuts the time
 * the program stands still by three quarters on a virtual machine (a
 * halted CPU takes tens of microseconds to wake up), but only when the
 * poller has a CPU of its own: where every CPU has work, polling takes
 * one from a thread to stop or from another job and doubles the cost
 * (docs/recording.md).  This answers from the machine's count of runnable
 * tasks (the fourth field of /proc/loadavg, the caller included), read at
 * most once per IDLE_CPU_CHECK_NS.
 *
 * Contract: idle_cpu_open() never fails (an unreadable file answers
 * "no"); idle_cpu_free() is true when fewer tasks than NCPUS want a CPU,
 * not counting the caller.  PTPROF_LOADAVG=FILE reads FILE instead of
 * /proc/loadavg, so a test states the machine's load rather than
 * depending on it.
 */
#ifndef PTPROF_RECORD_PTRACE_IDLE_CPU_H
#define PTPROF_RECORD_PTRACE_IDLE_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IDLE_CPU_CHECK_NS (20 * 1000 * 1000ULL)

struct idle_cpu {
    int fd;
    uint64_t next_check; /* monotonic ns */
    bool free;
};

void idle_cpu_open(struct idle_cpu *c);
bool idle_cpu_free(struct idle_cpu *c, uint64_t now, size_t ncpus);
/* The runnable count of a /proc/loadavg text ("0.50 0.40 0.30 3/250 123"),
 * or -1 (for tests). */
long idle_cpu_parse_runnable(const char *text, size_t len);
void idle_cpu_close(struct idle_cpu *c);

#endif
