/*
 * timeutil.h - clocks used by the recorder and the readers.
 *
 * Contract: monotonic time measures durations and schedules samples;
 * realtime (epoch) time stamps samples so profiles can be joined with
 * external measurements by time.  All values are nanoseconds unless the
 * name says otherwise.
 */
#ifndef PTPROF_UTIL_TIMEUTIL_H
#define PTPROF_UTIL_TIMEUTIL_H

#include <stdint.h>
#include <time.h>

#define NSEC_PER_SEC 1000000000ULL
#define NSEC_PER_USEC 1000ULL

static inline uint64_t timespec_ns(const struct timespec *ts)
{
    return (uint64_t)ts->tv_sec * NSEC_PER_SEC + (uint64_t)ts->tv_nsec;
}

static inline struct timespec ns_timespec(uint64_t ns)
{
    struct timespec ts = {.tv_sec = (time_t)(ns / NSEC_PER_SEC),
                          .tv_nsec = (long)(ns % NSEC_PER_SEC)};
    return ts;
}

static inline uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return timespec_ns(&ts);
}

static inline uint64_t realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return timespec_ns(&ts);
}

#endif
