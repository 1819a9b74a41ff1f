/*
 * significance.h - is the difference between two sides' mean shares real:
 * a two-sided test, for `compare A1 A2 -- B1 B2` (docs/report.md).
 *
 * Contract: side_test() gets each side's shares, one per run (percent; a
 * run without the key has 0), and for a side of one run the variance of
 * that share from its counts (uncertainty.h; percent squared, ignored for
 * sides of several runs).  The variance of a side's mean is s^2 / n, s the
 * standard deviation of its runs' shares, or the single run's variance.
 *  - Both sides with two runs or more: Welch's t-test, t = (mean B - mean
 *    A) / sqrt(vA + vB) with the Welch-Satterthwaite degrees of freedom.
 *  - Otherwise: a z-test (normal) on the same statistic.
 *  Returns the p-value (0-1): the chance of a difference at least this
 *  large if both sides had the same share.  With no variance at all it is
 *  1 for equal means and 0 for different ones; NaN when a variance is
 *  unknown (a single run of a metric that counts nothing).
 */
#ifndef PTPROF_ANALYZE_SIGNIFICANCE_H
#define PTPROF_ANALYZE_SIGNIFICANCE_H

#include <stddef.h>

#define SIGNIFICANCE_ALPHA 0.05

struct side_shares {
    const double *shares;
    size_t n;
    double single_var; /* n == 1: the variance from the counts */
};

double side_test(const struct side_shares *a, const struct side_shares *b);

#endif
