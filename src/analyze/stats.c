/* stats.c - see stats.h */
#include "analyze/stats.h"

#include <math.h>

#define TINY 1e-300

/* The continued fraction of the regularised incomplete beta function,
 * 1 / (1 + d1 / (1 + d2 / ...)), evaluated by Lentz's method. */
static double beta_fraction(double a, double b, double x)
{
    double f = 1, c = 1, d = 0;
    for (int j = 1; j < 1000; j++) {
        int m = j / 2;
        double coef;
        if (j % 2) /* d(2m+1) */
            coef = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1));
        else /* d(2m) */
            coef = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m));
        d = 1 + coef * d;
        d = fabs(d) < TINY ? 1 / TINY : 1 / d;
        c = 1 + coef / c;
        if (fabs(c) < TINY)
            c = TINY;
        double delta = c * d;
        f *= delta;
        if (fabs(delta - 1) < 1e-15)
            break;
    }
    return 1 / f;
}

/* I_x(a, b), the regularised incomplete beta function. */
static double incomplete_beta(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    double front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    /* The fraction converges fast on this side; the other by symmetry. */
    if (x < (a + 1) / (a + b + 2))
        return front * beta_fraction(a, b, x) / a;
    return 1 - front * beta_fraction(b, a, 1 - x) / b;
}

double stats_t_two_sided_p(double t, double df)
{
    if (isnan(t) || isnan(df) || df <= 0)
        return NAN;
    if (isinf(t))
        return 0;
    if (isinf(df) || df > 1e7)
        return erfc(fabs(t) / sqrt(2.0));
    return incomplete_beta(df / 2, 0.5, df / (df + t * t));
}

double stats_t_quantile(double alpha, double df)
{
    if (!(alpha > 0 && alpha < 1) || isnan(df) || df <= 0)
        return NAN;
    /* The tail falls as t grows: bisect, after finding an upper bound. */
    double lo = 0, hi = 1;
    while (stats_t_two_sided_p(hi, df) > alpha && hi < 1e12)
        hi *= 2;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; i++) {
        double mid = (lo + hi) / 2;
        if (stats_t_two_sided_p(mid, df) > alpha)
            lo = mid;
        else
            hi = mid;
    }
    return (lo + hi) / 2;
}
