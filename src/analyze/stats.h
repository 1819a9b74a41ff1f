/*
 * stats.h - the few distributions that significance and intervals need:
 * Student's t (and the normal, its limit) for two-sided tail
 * probabilities and quantiles.
 *
 * Contract:
 *  - stats_t_two_sided_p(T, DF) is P(|X| >= |T|) for X ~ Student's t with
 *    DF degrees of freedom (DF > 0, fractional allowed: Welch's test); DF =
 *    INFINITY is the standard normal.  NaN in, NaN out.
 *  - stats_t_quantile(ALPHA, DF) is the t > 0 with stats_t_two_sided_p(t,
 *    DF) = ALPHA (0 < ALPHA < 1): 1.96 for 0.05 and the normal, 4.303 for
 *    two degrees of freedom.  Accurate to 1e-9.
 *  Pure functions: no state, no allocation.
 */
#ifndef PTPROF_ANALYZE_STATS_H
#define PTPROF_ANALYZE_STATS_H

double stats_t_two_sided_p(double t, double df);
double stats_t_quantile(double alpha, double df);

#endif
