/*
 * timeline.h - a profile over time, reduced to a picture's width: every
 * measurement channel as a per-column envelope, and per thread which key
 * (function, binary...) it was in, column by column (docs/timeline.md).
 *
 * Time is in seconds from the profile's start: the recorder's start_time
 * when it lies before the first sample and no further from it than the
 * samples span (plus a second), else the first sample.  Sample times that
 * go back are held at the latest time seen.  Sample I stands for the
 * interval from the sample before it (the start, for the first) up to its
 * own time, as in the report's wall time and energy (metrics.h).
 *
 * The view is [start_s, end_s] (end_s below 0, or past the profile's last
 * sample: the last sample), divided into COLUMNS equal columns.
 *
 * Channels (timeline_series): each channel of the profile in its own unit,
 * an energy counter turned into power (its increase over the interval /
 * the interval; unit J becomes W, mJ mW...), power, current, voltage and
 * custom readings as recorded; and when the profile has no power or energy
 * channel but a current and a voltage one (the first of each, as
 * metrics.h chooses), their product as power in W.  Per column: the
 * minimum and maximum of the values whose interval touches it (a reading
 * of zero duration counts at its time), and their mean weighted by the
 * time they cover there, so one spike among a million readings still sets
 * its column's maximum.  Non-finite values and an energy counter's
 * decreases are gaps (NaN).
 *
 * Lanes (timeline_lane): one per thread seen in the view.  Each column
 * gets the key in which the thread spent most of the time it was sampled
 * there (the earliest such key on a tie), and adjacent columns of one key
 * are merged into spans.  A short phase is not lost to that majority: a
 * run of consecutive samples in one key lasting at least
 * TIMELINE_PHASE_MIN_COLUMNS of a column, whose key won none of the
 * columns it touches, takes the column where it holds the most time,
 * provided the key it displaces still holds a neighbouring column (longest
 * runs first; one phase per column).  Such spans have PHASE set and give
 * the run's own times.  A run of two columns or more always covers a whole
 * column, which it wins.  With more threads than MAX_LANES, the lanes kept
 * are those with the most CPU time (then wall time) in the view, in the
 * order the threads appeared.
 *
 * Keys are the innermost frame's key under the walk's key spec; KEYS lists
 * those seen in the view, the most thread time first.
 *
 * Contract: timeline_builder_new() checks the view against the profile
 * and returns NULL with a message in *ERROR (allocated) when it holds no
 * time of the profile.  Its visitor is given to walk_profile() (or a
 * session) over the same profile and key table, then timeline_finish()
 * builds the result, freeing the builder; the profile and tables must
 * live until then.  Memory is bounded by the columns times the lanes, the
 * samples are never stored.  timeline_build() does it all for a loaded
 * profile through a session (analyze/session.h), returning -1 after a
 * message naming PATH.
 */
#ifndef PTPROF_ANALYZE_TIMELINE_H
#define PTPROF_ANALYZE_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/session.h"
#include "analyze/strtab.h"
#include "analyze/walk.h"
#include "model/profile.h"

#define TIMELINE_PHASE_MIN_COLUMNS 0.25

struct timeline_options {
    double start_s; /* >= 0 */
    double end_s;   /* < 0: to the end */
    unsigned columns;
    size_t max_lanes; /* 0: every thread */
};

struct timeline_point {
    double min, max, mean; /* NaN: no reading in the column */
};

struct timeline_series {
    char *name;                /* the channel's name, or "CURRENT x VOLTAGE" */
    char *quantity;            /* "power", "current", "voltage" or "custom" */
    char *unit;                /* of the values, may be "" */
    bool derived;              /* computed: power from an energy counter, or I x V */
    enum pmu_kind source_kind; /* the channel's kind (POWER for I x V) */
    double min, max, mean;     /* over the view; NaN without readings */
    struct timeline_point *px; /* one per column */
};

struct timeline_span {
    uint32_t x0, x1; /* columns [x0, x1) */
    uint32_t key;    /* index into timeline.keys */
    bool phase;      /* a short phase given a column of its own */
    float share;     /* of the thread's sampled time in the span spent in KEY */
    double t0_s, t1_s;
};

struct timeline_lane {
    char *label; /* "NAME#N", as the thread key names it */
    uint32_t slot;
    double cpu_s, wall_s; /* in the view */
    struct timeline_span *spans;
    size_t nspans;
};

struct timeline_key {
    char *id;             /* the identity under the key spec (keys.h) */
    char *name;           /* as shown: components joined by ':' */
    double wall_s, cpu_s; /* thread time in the view */
};

struct timeline {
    /* The run, for the title. */
    char *program;
    double duration_s;
    double recorded_samples; /* the recorder's count, else the file's */
    double samples;          /* sampling rounds in the file */
    double thread_samples;
    double requested_hz, achieved_hz; /* 0 if unknown */
    bool achieved_per_cpu_second;     /* as report: per CPU second (a perf engine profile) */
    bool requested_per_thread;        /* as report: the request is per thread (walk.h) */
    double latency_per_sample_s;      /* NaN if unknown */
    bool truncated;
    char *key_names; /* "procedure", "binary:procedure"... */
    /* The view. */
    uint64_t origin_ns;
    double profile_end_s; /* the last sample */
    double t0_s, t1_s;
    unsigned columns;
    size_t view_samples; /* sampling rounds whose interval meets the view */
    struct timeline_series *series;
    size_t nseries;
    struct timeline_lane *lanes;
    size_t nlanes;
    size_t threads_in_view; /* nlanes is fewer when max_lanes cut */
    struct timeline_key *keys;
    size_t nkeys;
    double thread_wall_s; /* the keys' wall time, summed */
};

struct timeline_builder;

struct timeline_builder *timeline_builder_new(const struct profile *p, const struct strtab *keys,
                                              const struct key_spec *spec,
                                              const struct timeline_options *o, char **error);
struct walk_visitor timeline_visitor(struct timeline_builder *b);
struct timeline *timeline_finish(struct timeline_builder *b, const struct walk_totals *t);
void timeline_free(struct timeline *t);

int timeline_build(const char *path, const struct profile *p, const struct session_options *so,
                   const struct timeline_options *o, struct timeline **out);

#endif
