/*
 * csv_join.h - a device's timeline (csv_timeline.h) joined by time to a
 * recorded profile as PMU channels (docs/formats/csv.md, "Joining").
 *
 * It lives in format/ because it is the second half of reading the CSV
 * format: it fills struct profile (channels and sample values) from the
 * timeline and the profile's own sample times, and needs nothing from
 * symbols or analysis.
 *
 * Contract: csv_join() appends one channel per timeline series to P (name
 * from the header, unit W/A/V/J or as written, kind), plus derived power
 * channels: with O->voltage > 0, each current series times that voltage;
 * without it, when the CSV has no power column, each current series times
 * the CSV's only voltage series, reading by reading.  Every sample gets a
 * value per new channel:
 *  - the device's signal between readings is, with CSV_STEP, each
 *    reading's value over the time since the previous reading (the way
 *    ptprof's own power channels and averaging meters count), with
 *    CSV_LINEAR the straight line between readings; missing readings are
 *    skipped;
 *  - a sample's value is the mean of that signal over the interval since
 *    the previous sample (the interval metrics.h multiplies by), its point
 *    value for the first sample or an empty interval; an energy counter's
 *    value is the counter interpolated at the sample's time;
 *  - a sample whose interval is not wholly inside the CSV's first and last
 *    readings gets NaN (no energy in metrics.h).
 * CSV times plus the offset are CLOCK_REALTIME nanoseconds.  O->offset is
 * seconds (decimal, may be negative or epoch seconds), an ISO 8601
 * date-time, or "profile" or "profile+S"/"profile-S" (the profile's start:
 * META start_time, else its first sample).  Relative times without an
 * offset, a CSV that covers none of the profile, or a profile without
 * samples are errors: one message naming the CSV, and -1 with P unchanged.
 * When the CSV covers only part of the profile a warning says how much;
 * when P already had power or energy channels a warning says that reports
 * sum them all unless one is chosen.  META "csv_join" records the file and
 * offset.  R, when not NULL, receives what was done.
 */
#ifndef PTPROF_ANALYZE_CSV_JOIN_H
#define PTPROF_ANALYZE_CSV_JOIN_H

#include <stddef.h>
#include <stdint.h>

#include "interop/csv_timeline.h"
#include "model/profile.h"

enum csv_interpolation {
    CSV_STEP,
    CSV_LINEAR,
};

struct csv_join_options {
    const char *offset; /* NULL: none */
    double voltage;     /* > 0: currents times this are power */
    enum csv_interpolation interpolation;
};

struct csv_join_result {
    size_t nchannels;       /* channels added */
    size_t covered_samples; /* samples with a value */
    double covered;         /* fraction of the profile's span the CSV covers, 0..1 */
    int64_t offset_ns;      /* what was added to the CSV's times */
};

int csv_join(const char *name, const struct csv_timeline *t, const struct csv_join_options *o,
             struct profile *p, struct csv_join_result *r);

/* Parse an offset as O->offset describes it; PROFILE_START_NS answers
 * "profile".  0, or -1 (nothing printed). */
int csv_parse_offset(const char *s, int64_t profile_start_ns, int64_t *out);

#endif
