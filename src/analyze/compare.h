/*
 * compare.h - profiles against a baseline, key by key (docs/report.md).
 *
 * Contract:
 *  - The value of a key in a profile is its exclusive value of the chosen
 *    metric (inclusive with OPTS->inclusive; its percentage of the
 *    profile's total instead with OPTS->share); 0 where the key is absent.
 *  - Each report is measured by its own metric (report.h: the same name,
 *    resolved against its value columns).
 *  - The weight of a key is its share of the baseline (0-1): its value of
 *    the metric's basis (metric.h: energy for power, the denominator of a
 *    ratio) over the baseline's total.
 *  - compare_error(), with b the baseline's value, v the profile's and w
 *    the weight:  error v-b; absolute_error |v-b|; relative_error (v-b)/b;
 *    absolute_relative_error |v-b|/|b|; weighted_error w(v-b);
 *    absolute_weighted_error w|v-b|; weighted_relative_error w(v-b)/b;
 *    absolute_weighted_relative_error w|v-b|/|b|.  A relative error over
 *    b = 0 is 0 when v = 0, else +-infinity; a weighted one is 0 (w = 0).
 *  - compare_aggregate() over errors e_i with weights w_i: sum; min; max;
 *    mean; wmean = sum w_i e_i / sum w_i; rmse = sqrt(mean of e_i^2);
 *    wrmse = sqrt(sum w_i e_i^2 / sum w_i).  Terms with w_i = 0 are left
 *    out of the weighted ones; an empty mean, min or max is NaN, as is a
 *    weighted one without weight.
 *  - compare_reports(): one row per key of any input, sorted by the
 *    baseline's value, then the largest other value (descending), then
 *    key.  THRESHOLD (percent, < 0 off) keeps a key whose share reaches it
 *    in at least one profile; LIMIT (percent, < 0 off) then keeps rows until
 *    the baseline shares of those kept reach it.  Aggregates are over the
 *    rows kept.
 *  - compare_sides(): two sides of NA and NB runs (`compare A1 A2 -- B1
 *    B2`), each side's report the mean of its runs (multi.h), compared as
 *    compare_reports() compares a baseline (side A) with one profile (side
 *    B), and per key a two-sided test (significance.h) that the sides'
 *    shares (by OPTS->inclusive) are the same: Welch's over the runs'
 *    shares when both sides have two runs or more, else a z-test with a
 *    single run's variance from its counts (uncertainty.h).  Rows are
 *    sorted by the p-value (smallest first, untested last), then by the
 *    size of the difference, then key; the threshold and limit apply in
 *    that order.
 */
#ifndef PTPROF_ANALYZE_COMPARE_H
#define PTPROF_ANALYZE_COMPARE_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/report.h"

enum error_fn {
    ERR_ERROR,
    ERR_ABSOLUTE,
    ERR_RELATIVE,
    ERR_ABSOLUTE_RELATIVE,
    ERR_WEIGHTED,
    ERR_ABSOLUTE_WEIGHTED,
    ERR_WEIGHTED_RELATIVE,
    ERR_ABSOLUTE_WEIGHTED_RELATIVE,
    ERR_COUNT,
};

enum aggregate_fn {
    AGG_NONE,
    AGG_SUM,
    AGG_MIN,
    AGG_MAX,
    AGG_MEAN,
    AGG_WMEAN,
    AGG_RMSE,
    AGG_WRMSE,
    AGG_COUNT,
};

struct compare_options {
    struct metric metric; /* for titles: each report is measured by its own (by name) */
    enum error_fn error;
    enum aggregate_fn aggregate;
    bool inclusive;
    bool share;
    double limit_pct, threshold_pct;
};

struct compare_row {
    char *id;
    double baseline;
    double weight;
    double *values; /* one per compared profile */
    double *errors;
    double p_value; /* sides: the test's p-value; NaN when untested */
};

struct compare_result {
    struct key_spec keys;
    struct compare_options opts;
    size_t nprofiles; /* compared against the baseline */
    struct compare_row *rows;
    size_t nrows;
    size_t hidden;
    double baseline_total;
    double *totals;     /* each profile's total of the metric */
    double *aggregates; /* one per profile, with an aggregate function */
    bool sides;         /* compare_sides(): rows carry p-values */
    size_t runs[2];     /* sides: the runs of side A and side B */
};

int error_fn_parse(const char *name, enum error_fn *out);
const char *error_fn_name(enum error_fn fn);
int aggregate_fn_parse(const char *name, enum aggregate_fn *out);
const char *aggregate_fn_name(enum aggregate_fn fn);

double compare_error(enum error_fn fn, double baseline, double value, double weight);
double compare_aggregate(enum aggregate_fn fn, const double *errors, const double *weights,
                         size_t n);

void compare_reports(const struct report *baseline, const struct report *const *others, size_t n,
                     const struct compare_options *opts, struct compare_result *out);
void compare_sides(const struct report *const *a, size_t na, const struct report *const *b,
                   size_t nb, const struct compare_options *opts, struct compare_result *out);
/* The row's difference is significant at the 95 % level (p < 0.05). */
bool compare_significant(const struct compare_row *row);
/* "welch", "counts" (sides), "none". */
const char *compare_test_name(const struct compare_result *r);
void compare_free(struct compare_result *r);

#endif
