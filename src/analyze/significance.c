/* significance.c - see significance.h */
#include "analyze/significance.h"
#include "analyze/stats.h"

#include <math.h>

/* A side's mean and the variance of that mean. */
static void side_moments(const struct side_shares *s, double *mean, double *var)
{
    double m = 0, ss = 0;
    for (size_t i = 0; i < s->n; i++)
        m += s->shares[i] / (double)s->n;
    if (s->n < 2) {
        *mean = m;
        *var = s->single_var;
        return;
    }
    for (size_t i = 0; i < s->n; i++)
        ss += (s->shares[i] - m) * (s->shares[i] - m);
    *mean = m;
    *var = ss / (double)(s->n - 1) / (double)s->n;
}

double side_test(const struct side_shares *a, const struct side_shares *b)
{
    double ma, va, mb, vb;
    side_moments(a, &ma, &va);
    side_moments(b, &mb, &vb);
    if (isnan(va) || isnan(vb) || a->n == 0 || b->n == 0)
        return NAN;
    double v = va + vb;
    if (!(v > 0))
        return ma == mb ? 1 : 0;
    double t = (mb - ma) / sqrt(v);
    if (a->n < 2 || b->n < 2)
        return stats_t_two_sided_p(t, INFINITY);
    /* Welch-Satterthwaite; a side without spread adds nothing below. */
    double da = a->n > 1 ? va * va / (double)(a->n - 1) : 0;
    double db = b->n > 1 ? vb * vb / (double)(b->n - 1) : 0;
    double df = v * v / (da + db);
    return stats_t_two_sided_p(t, df);
}
