/*
 * reading_join.h - the readings of a measurement source waiting for the
 * CPU samples of their interval, for an engine whose samples come with the
 * kernel's timestamps (the perf engine; docs/pmu.md, "The join").
 *
 * Contract:
 *  - reading_join_add() keeps a copy of a reading: its values and the
 *    CLOCK_MONOTONIC instant it stands for (pmu.h, read_at).  Its interval
 *    starts where the previous reading's ended.  A reading over an interval
 *    (PMU_OVER_INTERVAL) ends at its own instant.  A reading at an instant
 *    (PMU_AT_INSTANT) ends somewhere between its instant and the next
 *    reading's, which the caller decides (reading_join_next_at() gives that
 *    instant once the next reading is added) and sets with
 *    reading_join_set_end(); reading_join_close() says no reading follows:
 *    the last one then ends at its own instant.
 *  - reading_join_ended(T) is the oldest reading kept whose interval ended
 *    before T (a sample taken at T belongs to a later one), NULL when there
 *    is none or its end is not decided yet: the caller writes it with the
 *    samples it gathered, then reading_join_pop().  reading_join_newest()
 *    is the latest reading (NULL before the first).
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
/* The instant of the reading after the oldest: false when none is kept. */
bool reading_join_next_at(const struct reading_join *j, uint64_t *at);
void reading_join_set_end(struct reading_join *j, uint64_t end);
const struct joined_reading *reading_join_ended(const struct reading_join *j, uint64_t t);
const struct joined_reading *reading_join_newest(const struct reading_join *j);
void reading_join_pop(struct reading_join *j);
void reading_join_free(struct reading_join *j);

#endif
