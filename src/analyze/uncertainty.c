/* uncertainty.c - see uncertainty.h */
#include "analyze/uncertainty.h"
#include "analyze/stats.h"
#include "analyze/strtab.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The quantity a metric counts, or -1. */
static int counted_quantity(const struct metric *m)
{
    switch (m->kind) {
    case METRIC_SAMPLES:
        return Q_SAMPLES;
    case METRIC_CPU:
        return Q_CPU;
    case METRIC_WALL:
        return Q_WALL;
    case METRIC_ENERGY:
        return Q_ENERGY;
    default:
        return -1;
    }
}

static double quantity_share_var(const struct report *r, const struct report_row *row, int q,
                                 bool total)
{
    if (q < 0 || r->focus != FOCUS_NONE || !(r->base[q] > 0))
        return NAN;
    double x = r->base[q];
    double p = (total ? row->total[q] : row->self[q]) / x;
    double s2k = total ? row->sq_total[q] : row->sq_self[q];
    double v = (s2k * (1 - 2 * p) + p * p * r->sq_base[q]) / (x * x);
    return v > 0 ? v : 0;
}

double report_share_var(const struct report *r, const struct report_row *row,
                        const struct metric *m, bool total)
{
    return quantity_share_var(r, row, counted_quantity(m), total);
}

static struct report_interval interval(double centre, double half, double max)
{
    struct report_interval i = {NAN, NAN, half};
    if (isnan(half) || isnan(centre))
        return i;
    i.lo = centre - half < 0 ? 0 : centre - half;
    i.hi = centre + half > max ? max : centre + half;
    return i;
}

/* Shares of power, ratios and means may exceed 100. */
static double share_max(const struct report *r)
{
    return metric_additive(&r->metric) ? 100 : INFINITY;
}

static void from_counts(struct report *r)
{
    double z = stats_t_quantile(1 - UNCERTAINTY_LEVEL, INFINITY);
    double energy = r->base[Q_ENERGY];
    for (size_t i = 0; i < r->nrows; i++) {
        struct report_row *row = &r->rows[i];
        for (int t = 0; t < 2; t++) {
            double var = report_share_var(r, row, &r->metric, t);
            struct report_interval iv =
                interval(report_pct(r, row, &r->metric, t), 100 * z * sqrt(var), share_max(r));
            if (t)
                row->ci.total = iv;
            else
                row->ci.self = iv;
        }
        double evar = r->totals.has_energy ? quantity_share_var(r, row, Q_ENERGY, false) : NAN;
        row->ci.energy = interval(row->self[Q_ENERGY], energy * z * sqrt(evar), INFINITY);
    }
}

/* Mean and sample standard deviation of X[0..N). */
static double spread(const double *x, size_t n)
{
    double mean = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        mean += x[i] / (double)n;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    return sqrt(ss / (double)(n - 1));
}

static void from_spread(struct report *r, const struct report *const *runs, size_t n)
{
    double t = stats_t_quantile(1 - UNCERTAINTY_LEVEL, (double)(n - 1));
    struct strtab *ids = strtab_new();
    for (size_t i = 0; i < r->nrows; i++)
        strtab_intern_str(ids, r->rows[i].id);
    /* Per row, per run: self share, total share, energy. */
    enum { SELF, TOTAL, ENERGY, NKINDS };
    double *x = xcalloc(r->nrows * NKINDS * n + 1, sizeof(*x));
    for (size_t k = 0; k < n; k++) {
        const struct report *run = runs[k];
        for (size_t j = 0; j < run->nrows; j++) {
            const struct report_row *row = &run->rows[j];
            size_t at = strtab_intern_str(ids, row->id);
            if (at >= r->nrows)
                continue; /* not in the mean: cannot happen, but stay in bounds */
            double *v = x + at * NKINDS * n;
            v[SELF * n + k] = report_pct(run, row, &run->metric, false);
            v[TOTAL * n + k] = report_pct(run, row, &run->metric, true);
            v[ENERGY * n + k] = row->self[Q_ENERGY];
        }
    }
    double se_scale = t / sqrt((double)n);
    for (size_t i = 0; i < r->nrows; i++) {
        struct report_row *row = &r->rows[i];
        const double *v = x + i * NKINDS * n;
        row->ci.self = interval(report_pct(r, row, &r->metric, false),
                                se_scale * spread(v + SELF * n, n), share_max(r));
        row->ci.total = interval(report_pct(r, row, &r->metric, true),
                                 se_scale * spread(v + TOTAL * n, n), share_max(r));
        row->ci.energy =
            r->totals.has_energy
                ? interval(row->self[Q_ENERGY], se_scale * spread(v + ENERGY * n, n), INFINITY)
                : interval(NAN, NAN, INFINITY);
    }
    free(x);
    strtab_free(ids);
}

void report_uncertainty(struct report *mean, const struct report *const *runs, size_t n)
{
    if (n > 1)
        from_spread(mean, runs, n);
    else
        from_counts(mean);
    if (!mean->totals.has_energy)
        for (size_t i = 0; i < mean->nrows; i++)
            mean->rows[i].ci.energy = interval(NAN, NAN, INFINITY);
    mean->has_ci = true;
}
