/*
 * report.h - the result of an analysis: rows per key with exclusive (self)
 * and inclusive (total) quantities, and the run's totals.
 *
 * Contract:
 *  - A row's quantities (metrics.h: samples, CPU s, wall s, energy J,
 *    executions) and values (one per value column of R->values: VSELF and
 *    VTOTAL, NULL when the report has no columns) are the mean over the
 *    runs the report stands for.  SELF counts thread samples whose
 *    innermost frame has the key; TOTAL counts those with the key anywhere
 *    on the path, once per path.  R->metric (metric.h) is what it is
 *    sorted and shown by.
 *  - Power is energy over the time that used it: self energy / (self CPU
 *    time + idle time), the same with totals; idle time is nonzero only on
 *    the "[unattributed]" row (the time no thread ran).
 *  - Percentages are of BASE and VBASE (the profile's totals, or the focus
 *    function's total for callers and callees); for power, of the run's
 *    mean power (energy / duration), and for a ratio or a mean, of the
 *    whole's ratio or mean, so those may exceed 100.
 *  - SQ_SELF and SQ_TOTAL (and SQ_BASE, over every thread sample) sum
 *    each thread sample's quantities squared over its weight (a sample
 *    standing for N counts as N samples of 1/N of it): what a share's
 *    uncertainty from the counts needs (uncertainty.h).
 *  - CI (with HAS_CI, filled by report_uncertainty()) is a row's interval;
 *    NaN where it is unknown.
 *  - report_free() frees everything the report owns.
 */
#ifndef PTPROF_ANALYZE_REPORT_H
#define PTPROF_ANALYZE_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/keys.h"
#include "analyze/metric.h"
#include "analyze/metrics.h"
#include "analyze/values.h"
#include "analyze/walk.h"

#define REPORT_UNATTRIBUTED "[unattributed]"

/* A 95 % interval (report --ci): of the chosen metric's self and total
 * share (percent, clipped to 0-100) with the half-width before clipping,
 * and of the self energy (J). */
struct report_interval {
    double lo, hi, half;
};

struct report_ci {
    struct report_interval self, total, energy;
};

struct report_row {
    char *id; /* components joined by KEY_SEP (keys.h) */
    double self[Q_COUNT];
    double total[Q_COUNT];
    double *vself, *vtotal; /* per value column; one allocation, vtotal = vself + n */
    double idle_s;
    bool unattributed;
    double sq_self[Q_COUNT], sq_total[Q_COUNT];
    struct report_ci ci;
};

struct report_totals {
    double runs;
    double samples, thread_samples, recorded_samples;
    double duration_s, latency_s, requested_hz;
    double cpu_s, wall_s, energy_j, unattributed_j, executions;
    bool has_energy, has_stacks, has_latency, truncated;
    bool per_cpu_second;       /* the achieved frequency is per CPU second (walk.h) */
    double rate_span_s;        /* what it is per: the duration, or that CPU time */
    bool requested_per_thread; /* the request is per thread, the rate not (walk.h) */
    char energy_source[256];
};

/* Samples per second as recorded: of wall time, or of CPU time for a
 * profile whose samples count CPU time (the perf engine); NAN if unknown. */
double report_achieved_hz(const struct report_totals *t);

enum report_focus {
    FOCUS_NONE,
    FOCUS_CALLERS,
    FOCUS_CALLEES,
};

struct report {
    struct key_spec keys;
    struct metric metric;
    struct value_columns values; /* the value columns of rows and VBASE */
    struct report_row *rows;
    size_t nrows;
    struct report_totals totals;
    double base[Q_COUNT]; /* what percentages are of */
    double *vbase;        /* per value column, NULL when there are none */
    double sq_base[Q_COUNT];
    bool has_ci;
    enum report_focus focus;
    char *focus_function;
    bool focus_found;
    size_t hidden; /* rows left out by report_select() */
};

void report_totals_from_walk(struct report_totals *rt, const struct walk_totals *wt);
double report_power(double energy_j, double time_s);
/* The run's mean power: energy / duration. */
double report_mean_power(const struct report_totals *t);
/* ROW's value of M, exclusive or inclusive. */
double report_value(const struct report_row *row, const struct metric *m, bool total);
/* ROW's share of the report's base in percent (0-100; for power, its
 * share of the energy). */
double report_pct(const struct report *r, const struct report_row *row, const struct metric *m,
                  bool total);
/* What percentages of M are of. */
double report_base(const struct report *r, const struct metric *m);
/* Zeroed VSELF and VTOTAL for ROW of a report with N value columns. */
void report_row_values(struct report_row *row, size_t n);
void report_free(struct report *r);
/* Only the rows (nrows 0 after); the rest stays for report_free(). */
void report_free_rows(struct report *r);

#endif
