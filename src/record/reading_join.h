/*
 * reading_join.h - the readings of a measurement source waiting for the
 * CPU samples of their interval, for an engine whose samples come with the
 * kernel's timestamps (the perf engine; docs/pmu.md, "The join").
 *
 * Contract:
 *  - reading_join_add() keeps a copy of a reading: its values and the
 *    CLOCK_MONOTONIC instant it stands for (pmu.h, read_at).  Its interval
 *    starts where the previous reading's ended and ends, for a reading over
 *    an interval (PMU_OVER_INTERVAL), at its own instant; for a reading at
 *    an instant (PMU_AT_INSTANT), halfway to the next reading's instant, so
 *    that every moment belongs to the reading nearest it.  That end is
 *    known when the next reading is added, or reading_join_close() says no
 *    reading follows (the end is then the reading's own instant).
 *  - reading_join_ended(T) is the oldest reading kept whose interval ended
 *    before T (a sample taken at T belongs to a later one), NULL when there
 *    is none: the caller writes it with the samples it gathered, then
 *    reading_join_pop().  reading_join_newest() is the reading whose
 *    interval is the latest (NULL before the first).
 *  - At most READING_JOIN_MAX readings are kept: one added to a full join
 *    drops the oldest (its samples then join the next; counted in
 *    `dropped`), so a caller that stops writing never makes it grow.
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
    uint64_t at;  /* the instant it stands for, monotonic ns */
    uint64_t end; /* its interval's end, when known */
    bool end_known;
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
void reading_join_close(struct reading_join *j);
const struct joined_reading *reading_join_ended(const struct reading_join *j, uint64_t t);
const struct joined_reading *reading_join_newest(const struct reading_join *j);
void reading_join_pop(struct reading_join *j);
void reading_join_free(struct reading_join *j);

#endif
