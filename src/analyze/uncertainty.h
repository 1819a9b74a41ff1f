/*
 * uncertainty.h - how sure a share is: a 95 % interval for each row of a
 * report, from one run's sample counts or from several runs' spread; and
 * the variance of one run's share from its counts (compare's test).
 *
 * Contract:
 *  - report_share_var(R, ROW, M, TOTAL) is the variance of ROW's self (or
 *    total) share of M, as a fraction 0-1, from the run's counts: the
 *    thread samples are taken as independent draws, the share is the
 *    ratio of the row's sum of M to the whole's, and the variance of that
 *    ratio is, by the delta method,
 *        (S2k (1 - 2p) + p^2 S2) / X^2
 *    with X the whole, p the share, S2k and S2 the sums of the row's and
 *    all thread samples' M squared over their weight (report.h).  With
 *    every sample worth 1 this is p (1 - p) / N, the binomial variance.
 *    NaN for a metric other than samples, cpu, wall and energy (nothing
 *    to count), for the callers/callees views, and when X is 0.
 *  - report_uncertainty(MEAN, RUNS, N) fills every row's CI in MEAN (the
 *    report_mean() of the N RUNS, flat views only) and sets HAS_CI.
 *    With one run: the share +- 1.96 sqrt(var) (normal approximation);
 *    the energy interval is the measured total times the energy share's
 *    interval (the total is measured, the split is what is uncertain).
 *    With several: the share shown +- t(0.975, N-1) s / sqrt(N), s the
 *    standard deviation of the runs' shares (0 where a run lacks the
 *    key), and the energy likewise from the runs' energies.  Bounds are
 *    clipped to 0-100 % (0 and more for energy); HALF is the half-width
 *    before clipping.  NaN where the variance is.
 */
#ifndef PTPROF_ANALYZE_UNCERTAINTY_H
#define PTPROF_ANALYZE_UNCERTAINTY_H

#include <stdbool.h>
#include <stddef.h>

#include "analyze/report.h"

#define UNCERTAINTY_LEVEL 0.95

double report_share_var(const struct report *r, const struct report_row *row,
                        const struct metric *m, bool total);
void report_uncertainty(struct report *mean, const struct report *const *runs, size_t n);

#endif
