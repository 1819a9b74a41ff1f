/*
 * test_significance.c - analyze/stats.h, significance.h and
 * uncertainty.h against values known in closed form: Student's t with 1
 * and 2 degrees of freedom (Cauchy; 1 - t / sqrt(2 + t^2)), table
 * quantiles, Welch's test and the count test on hand-made sides, and a
 * share's variance from counts (the binomial one when every sample is 1).
 */
#include "analyze/significance.h"
#include "analyze/stats.h"
#include "analyze/uncertainty.h"
#include "util/xalloc.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#define PI 3.14159265358979323846

static void near(double got, double want, double tol, const char *what)
{
    cr_assert(fabs(got - want) <= tol, "%s: %.12g, expected %.12g", what, got, want);
}

Test(stats, t_tails_in_closed_form)
{
    for (double t = 0.25; t < 40; t *= 2) {
        near(stats_t_two_sided_p(t, 1), 1 - 2 / PI * atan(t), 1e-10, "df 1");
        near(stats_t_two_sided_p(t, 2), 1 - t / sqrt(2 + t * t), 1e-10, "df 2");
        near(stats_t_two_sided_p(-t, 2), 1 - t / sqrt(2 + t * t), 1e-10, "df 2, t < 0");
        near(stats_t_two_sided_p(t, INFINITY), erfc(t / sqrt(2.0)), 1e-15, "normal");
    }
    near(stats_t_two_sided_p(0, 3), 1, 1e-12, "t = 0");
    cr_assert(isnan(stats_t_two_sided_p(NAN, 3)));
    cr_assert(isnan(stats_t_two_sided_p(1, 0)));
}

Test(stats, quantiles_from_the_tables)
{
    near(stats_t_quantile(0.05, INFINITY), 1.959963984540054, 1e-9, "z 0.975");
    near(stats_t_quantile(0.05, 1), 12.706204736174705, 1e-8, "t 0.975, 1");
    near(stats_t_quantile(0.05, 2), 4.302652729749464, 1e-9, "t 0.975, 2");
    near(stats_t_quantile(0.05, 4), 2.776445105197793, 1e-9, "t 0.975, 4");
    near(stats_t_quantile(0.05, 10), 2.228138851986274, 1e-9, "t 0.975, 10");
    near(stats_t_quantile(0.01, 30), 2.749995653567, 1e-8, "t 0.995, 30");
    cr_assert(isnan(stats_t_quantile(0, 3)));
}

Test(significance, welch_on_two_runs_a_side)
{
    /* Variances 2 and 2: t = 4 / sqrt(1 + 1), df = 4 / (1 + 1) = 2. */
    double a[] = {1, 3}, b[] = {5, 7};
    struct side_shares x = {a, 2, NAN}, y = {b, 2, NAN};
    double t = 4 / sqrt(2.0);
    near(side_test(&x, &y), 1 - t / sqrt(2 + t * t), 1e-10, "welch");
    near(side_test(&y, &x), 1 - t / sqrt(2 + t * t), 1e-10, "welch, sides swapped");
}

Test(significance, count_test_with_a_single_run)
{
    /* 10 +- 1 against 12 +- sqrt(3): z = 2 / 2 = 1. */
    double a[] = {10}, b[] = {12};
    struct side_shares x = {a, 1, 1}, y = {b, 1, 3};
    near(side_test(&x, &y), erfc(1 / sqrt(2.0)), 1e-12, "z");
    /* One run against three: that side's variance of its mean, s^2 / n. */
    double c[] = {11, 12, 13}; /* s^2 = 1: 1/3 */
    struct side_shares z = {c, 3, NAN}, single = {a, 1, 2.0 / 3};
    near(side_test(&single, &z), erfc(2 / sqrt(2.0)), 1e-12, "z, one against three");
}

Test(significance, no_variance_at_all)
{
    double a[] = {4, 4}, b[] = {4, 4}, c[] = {5, 5};
    struct side_shares x = {a, 2, NAN}, y = {b, 2, NAN}, z = {c, 2, NAN};
    near(side_test(&x, &y), 1, 0, "same");
    near(side_test(&x, &z), 0, 0, "different");
    double d[] = {3};
    struct side_shares unknown = {d, 1, NAN};
    cr_assert(isnan(side_test(&unknown, &x)), "a single run without counts is untested");
}

/* A one-row report by samples: the row has K of N unit samples. */
static void counted(struct report *r, struct report_row *row, double k, double n)
{
    memset(r, 0, sizeof(*r));
    memset(row, 0, sizeof(*row));
    r->metric = *metric_builtin(METRIC_SAMPLES);
    r->base[Q_SAMPLES] = r->sq_base[Q_SAMPLES] = n;
    r->totals.thread_samples = n;
    row->self[Q_SAMPLES] = row->total[Q_SAMPLES] = k;
    row->sq_self[Q_SAMPLES] = row->sq_total[Q_SAMPLES] = k;
    row->id = (char *)"k";
    r->rows = row;
    r->nrows = 1;
}

Test(uncertainty, unit_samples_give_the_binomial_variance)
{
    struct report r;
    struct report_row row;
    counted(&r, &row, 20, 100);
    near(report_share_var(&r, &row, &r.metric, false), 0.2 * 0.8 / 100, 1e-15, "binomial");
    /* One thread sample standing for 10 counts as 10 of 1. */
    row.sq_self[Q_SAMPLES] = 20; /* two samples of weight 10: 2 x 10^2 / 10 */
    near(report_share_var(&r, &row, &r.metric, false), 0.2 * 0.8 / 100, 1e-15, "weights");
    /* Power has nothing to count. */
    cr_assert(isnan(report_share_var(&r, &row, metric_builtin(METRIC_POWER), false)));
    report_uncertainty(&r, NULL, 1);
    cr_assert(r.has_ci);
    double half = 100 * 1.959963984540054 * sqrt(0.0016);
    near(row.ci.self.half, half, 1e-9, "half-width");
    near(row.ci.self.lo, 20 - half, 1e-9, "lo");
    near(row.ci.self.hi, 20 + half, 1e-9, "hi");
    cr_assert(isnan(row.ci.energy.lo), "no energy, no energy interval");
}

Test(uncertainty, several_runs_from_their_spread)
{
    struct report runs[3], mean;
    struct report_row rows[3], mrow;
    double k[] = {18, 20, 25};
    for (int i = 0; i < 3; i++)
        counted(&runs[i], &rows[i], k[i], 100);
    counted(&mean, &mrow, 21, 100);
    const struct report *ptrs[] = {&runs[0], &runs[1], &runs[2]};
    report_uncertainty(&mean, ptrs, 3);
    /* s of 18, 20, 25 (percent) is sqrt(13); t(0.975, 2) s / sqrt(3). */
    double half = 4.302652729749464 * sqrt(13.0) / sqrt(3.0);
    near(mrow.ci.self.half, half, 1e-9, "half-width");
    near(mrow.ci.self.lo, 21 - half, 1e-9, "lo");
}
