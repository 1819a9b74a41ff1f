/*
 * metrics.h - what each thread sample of a profile is worth: one sample,
 * the CPU time and wall time it stands for, and its share of the measured
 * energy (DESIGN.md, "Analysis semantics"; docs/report.md).
 *
 * Contract: metrics_sample() is called for samples 0, 1, 2... in order and
 * fills one entry per thread of that sample, in the sample's order:
 *  - Q_SAMPLES is the thread sample's weight (the samples it stands for:
 *    1 in a recording);
 *  - Q_CPU (seconds) is the thread's cumulative CPU time minus what it was
 *    at its previous appearance (same tid); at its first appearance all of
 *    it (it was born inside the recording), or 0 when the profile was
 *    attached to a running process (--pid); 0 when the counter went back
 *    (a reused tid);
 *  - Q_WALL (seconds) is the time since its previous appearance, 0 at the
 *    first; with account_latency, minus the profiler's mean latency per
 *    sample for every sample in that span (never below 0);
 *  - Q_ENERGY (J): the interval since the previous sample has energy E
 *    (sum over the chosen channels: an energy counter's increase, or a
 *    power reading times the interval, or current times voltage times the
 *    interval; NaN and negative steps count 0).  Of E, the share
 *    min(1, sum of busy / interval) is split over the sample's threads in
 *    proportion to their Q_CPU, busy being a thread's Q_CPU plus the share
 *    of the profiler's mean stop per sample (the profile's latency: the
 *    time ptrace held it) that it ran of the rest of the span since its
 *    previous sample; the rest is returned as *UNATTRIBUTED together
 *    with the idle time (1 - that share) * interval, so that the threads
 *    and the unattributed rest add up to the measured energy.  A profile
 *    whose CPU time is "sampled" (the perf engine) is split over windows
 *    of at least ten periods instead: the windows attribute their energy
 *    times the share of them their threads were busy; with META pmu_timing
 *    "instant" each thread sample gets the power of its own interval times
 *    its Q_CPU (scaled in a window whose threads ran in parallel), times
 *    one factor making the profile's samples add up to what its windows
 *    attribute (docs/pmu.md, "The join"), else its window's attributed
 *    energy by Q_CPU; each sample takes its part of its window's rest by
 *    its duration.
 *  - Q_EXECUTIONS is 0 (executions depend on keys: see walk.h).
 *  SLOT numbers the profile's distinct tids from 0 in order of first
 *  appearance; FIRST is set at that first appearance.
 *  metrics_values() then gives that sample's value types (profile.h),
 *  thread by thread, nvalue_types each: a sum as it is; a counter as its
 *  increase since the thread's previous sample (all of it at the first
 *  when the CPU time counts from the start, as Q_CPU; 0 when it went
 *  back); a level as value x weight (a level's mean is that sum over
 *  Q_SAMPLES).  NULL when the profile has no value types.
 *
 * Channels: by default every power and energy channel is used (their sum;
 * the rapl source records only package domains unless asked, which do not
 * overlap); with no such channel, the first current channel times the
 * first voltage channel; with none of these the profile has no energy.
 * OPTS->channel names one channel (its name or its index from 0); it must
 * be a power or energy channel, else metrics_new() fails with a message
 * in *ERROR (allocated).
 */
#ifndef PTPROF_ANALYZE_METRICS_H
#define PTPROF_ANALYZE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/profile.h"

enum quantity {
    Q_SAMPLES,
    Q_CPU,
    Q_WALL,
    Q_ENERGY,
    Q_EXECUTIONS,
    Q_COUNT,
};

struct metrics_options {
    bool account_latency;
    const char *channel; /* NULL: the default choice */
};

struct thread_metrics {
    double q[Q_COUNT];
    double busy;  /* s: the CPU time, and the share of the profiler's stop it would have run */
    double since; /* s: the span since its previous appearance (0 at the first) */
    uint32_t slot;
    bool first;
};

struct metrics_totals {
    double cpu_s, wall_s, energy_j, unattributed_j, idle_s;
    double latency_per_sample_s; /* what account_latency subtracts */
    bool has_energy;
    char *energy_source; /* the channels used, e.g. "package-0 (intel-rapl:0)" */
};

struct metrics;

struct metrics *metrics_new(const struct profile *p, const struct metrics_options *opts,
                            char **error);
void metrics_sample(struct metrics *m, size_t i, struct thread_metrics *out, double *unattributed_j,
                    double *idle_s);
const double *metrics_values(const struct metrics *m);
/* Sums over the samples passed so far. */
const struct metrics_totals *metrics_totals(const struct metrics *m);
size_t metrics_nslots(const struct metrics *m);
void metrics_free(struct metrics *m);

#endif
