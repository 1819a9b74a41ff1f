/*
 * priority.h - ask the scheduler to run the profiler promptly.
 *
 * Contract: recorder_prefer_latency() asks for a short scheduling slice for
 * the calling thread (EEVDF's per-task slice, sched_attr.sched_runtime,
 * Linux 6.12+), which needs no privilege and changes nothing for the
 * profiled program.  With more busy threads than CPUs, a profiler that is
 * preempted between resuming one thread and the next keeps the others
 * stopped; a short slice makes it win the CPU back sooner.  Failure
 * (older kernels) is silent: it is an optimisation.  Call it after the
 * target was forked, so the target does not inherit it.
 */
#ifndef PTPROF_RECORD_PRIORITY_H
#define PTPROF_RECORD_PRIORITY_H

void recorder_prefer_latency(void);

#endif
