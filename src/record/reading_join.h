/*
 * reading_join.h - the readings of a measurement source kept until the
 * samples of their time are written, for an engine whose samples come with
 * the kernel's timestamps (the perf engine; docs/pmu.md, "The join").
 *
 * Contract:
 *  - reading_join_add() keeps a copy of a reading: its values and the
 *    CLOCK_MONOTONIC instant it stands for (pmu.h, read_at), in the order
 *    taken.
 *  - reading_join_values_at(T) is the reading a sample taken at T joins:
 *    for values at an instant (PMU_AT_INSTANT), the reading nearest T (the
 *    earlier one on a tie); for averages over an interval
 *    (PMU_OVER_INTERVAL), the first reading taken at or after T, whose
 *    interval holds T, or the latest when none is yet.  NULL before the
 *    first reading.  A sample must be joined once the readings around it
 *    are kept: the perf engine writes samples older than the tick's
 *    reading.
 *  - reading_join_forget_before(T) drops the readings no sample taken at T
 *    or later can join.
 *  - At most READING_JOIN_MAX readings are kept: one added to a full join
 *    drops the oldest (counted in `dropped`), so a caller that stops
 *    writing never makes it grow.
 *  - No allocation after reading_join_init(); reading_join_free() frees.
 */
#ifndef PTPROF_RECORD_READING_JOIN_H
#define PTPROF_RECORD_READING_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmu/pmu.h"

#define READING_JOIN_MAX 64

struct joined_reading {
    uint64_t at; /* the instant it stands for, monotonic ns */
    double *values;
};

struct reading_join {
    enum pmu_timing timing;
    unsigned nchannels;
    struct joined_reading ring[READING_JOIN_MAX];
    size_t head, count;
    uint64_t dropped;
};

void reading_join_init(struct reading_join *j, enum pmu_timing timing, unsigned nchannels);
void reading_join_add(struct reading_join *j, const double *values, uint64_t at);
const double *reading_join_values_at(const struct reading_join *j, uint64_t t);
void reading_join_forget_before(struct reading_join *j, uint64_t t);
void reading_join_free(struct reading_join *j);

#endif
