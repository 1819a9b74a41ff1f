/*
 * metric.h - what an analysis measures by: the built-in metrics
 * (docs/report.md: cpu, wall, samples, energy, power, executions), one
 * metric per value column (values.h) by its name, and ratios derived from
 * value columns (ipc = instructions / cycles where both exist).
 *
 * Contract:
 *  - metric_resolve() finds NAME: a built-in name ("time" is cpu), a value
 *    column's name, or a derived metric whose two columns COLUMNS has
 *    (METRIC_DERIVED below); returns 0 with OUT filled, -1 when there is
 *    no such metric.  metric_builtin() is a built-in by kind.
 *  - metric_of() is a metric's value, as shown, of a quantity vector: Q
 *    (the Q_COUNT built-in quantities, metrics.h), V (one per value column;
 *    NULL when there are none: read as 0) and IDLE_S (the idle time power
 *    divides by).  A built-in is its quantity (power: energy over CPU plus
 *    idle time); a sum or counter column is its value; a level column its
 *    mean per sample (value x weight summed, over Q_SAMPLES); a derived
 *    metric the ratio of its columns (0 over 0).  Values in a time unit are
 *    shown in seconds, as cpu and wall are (M->scale); others in their own
 *    unit.
 *  - metric_additive(): the metric adds up over keys and along a stack
 *    (flame graphs, folded stacks, percentages that sum to 100): cpu,
 *    wall, samples, energy, sum and counter columns.  metric_basis() is the
 *    additive metric behind any metric (energy for power, the denominator
 *    of a ratio, samples for a mean), what compare weighs keys by.
 *    metric_share() is what a share of M is a share of, where a tree shows
 *    percentages: M itself, but energy for power (a node's power is its
 *    energy over its time, which may well exceed the run's mean: its
 *    share of the energy is what it adds to the mean).
 *  - M->name is what --metric takes, M->unit the unit as shown ("s", "J",
 *    "W", "bytes", "" for counts), M->title a column title ("cpu s",
 *    "alloc_space bytes", "ipc"); M->integral marks counts (shown without
 *    decimals).
 *  - metric_all() gives every metric a profile with COLUMNS can be measured
 *    by (allocated, *N of them): the built-ins, then one per column (a
 *    column named like a built-in is left out: the name means the
 *    built-in), then the derived metrics COLUMNS allow;
 *    metric_list() writes their names, comma-separated, for messages.
 */
#ifndef PTPROF_ANALYZE_METRIC_H
#define PTPROF_ANALYZE_METRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyze/metrics.h"
#include "analyze/values.h"

/* From 1: a kind passed where a metric is wanted does not compile (0
 * would silently be a null pointer). */
enum metric_kind {
    METRIC_CPU = 1,
    METRIC_WALL,
    METRIC_SAMPLES,
    METRIC_ENERGY,
    METRIC_POWER,
    METRIC_EXECUTIONS,
    METRIC_BUILTINS,                /* the value metrics follow */
    METRIC_VALUE = METRIC_BUILTINS, /* a sum or counter column: A */
    METRIC_MEAN,                    /* a level column: A per sample */
    METRIC_RATIO,                   /* derived: column A / column B */
};

#define METRIC_NAME_MAX 128

struct metric {
    enum metric_kind kind;
    uint32_t a, b;
    double scale; /* shown = quantity x scale */
    bool integral;
    char name[METRIC_NAME_MAX];
    char unit[32];
    char title[METRIC_NAME_MAX + 32]; /* name and unit */
};

/* The derived metrics: NAME = NUMERATOR / DENOMINATOR x SCALE, in UNIT. */
struct metric_derived {
    const char *name, *numerator, *denominator, *unit;
    double scale;
};
extern const struct metric_derived METRIC_DERIVED[];
extern const size_t METRIC_NDERIVED;

int metric_resolve(const char *name, const struct value_columns *columns, struct metric *out);
const struct metric *metric_builtin(enum metric_kind kind);
double metric_of(const struct metric *m, const double *q, const double *v, double idle_s);
bool metric_additive(const struct metric *m);
const struct metric *metric_share(const struct metric *m);
void metric_basis(const struct metric *m, struct metric *out);
struct metric *metric_all(const struct value_columns *columns, size_t *n);
void metric_list(const struct value_columns *columns, char *buf, size_t len);
/* Energy over time, 0 for no time. */
double metric_power(double energy_j, double time_s);

#endif
