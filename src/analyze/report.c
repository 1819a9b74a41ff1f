/* report.c - see report.h */
#include "analyze/report.h"
#include "util/xalloc.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

void report_totals_from_walk(struct report_totals *rt, const struct walk_totals *wt)
{
    memset(rt, 0, sizeof(*rt));
    rt->runs = 1;
    rt->samples = wt->samples;
    rt->thread_samples = wt->thread_samples;
    rt->recorded_samples = wt->recorded_samples;
    rt->duration_s = wt->duration_s;
    rt->latency_s = wt->latency_s;
    rt->requested_hz = wt->requested_hz;
    rt->cpu_s = wt->cpu_s;
    rt->wall_s = wt->wall_s;
    rt->energy_j = wt->energy_j;
    rt->unattributed_j = wt->unattributed_j;
    rt->has_energy = wt->has_energy;
    rt->has_stacks = wt->has_stacks;
    rt->has_latency = wt->has_latency;
    rt->truncated = wt->truncated;
    rt->per_cpu_second = wt->per_cpu_second;
    rt->requested_per_thread = wt->requested_per_thread;
    rt->rate_span_s = wt->rate_span_s;
    memcpy(rt->energy_source, wt->energy_source, sizeof(rt->energy_source));
}

double report_achieved_hz(const struct report_totals *t)
{
    return t->rate_span_s > 0 ? t->recorded_samples / t->rate_span_s : NAN;
}

double report_power(double energy_j, double time_s)
{
    return metric_power(energy_j, time_s);
}

double report_mean_power(const struct report_totals *t)
{
    return report_power(t->energy_j, t->duration_s);
}

double report_value(const struct report_row *row, const struct metric *m, bool total)
{
    return metric_of(m, total ? row->total : row->self, total ? row->vtotal : row->vself,
                     row->idle_s);
}

double report_base(const struct report *r, const struct metric *m)
{
    if (m->kind == METRIC_POWER && r->focus == FOCUS_NONE)
        return report_mean_power(&r->totals);
    return metric_of(m, r->base, r->vbase, 0);
}

double report_pct(const struct report *r, const struct report_row *row, const struct metric *m,
                  bool total)
{
    /* A row's power is its energy over its own time, which may exceed the
     * run's mean power: its share is of the energy, what it adds to the
     * mean, so rows add up to 100 %. */
    if (m->kind == METRIC_POWER)
        m = metric_builtin(METRIC_ENERGY);
    double base = report_base(r, m);
    return base > 0 ? 100.0 * report_value(row, m, total) / base : 0;
}

void report_row_values(struct report_row *row, size_t n)
{
    row->vself = n ? xcalloc(2 * n, sizeof(*row->vself)) : NULL;
    row->vtotal = n ? row->vself + n : NULL;
}

void report_free_rows(struct report *r)
{
    for (size_t i = 0; i < r->nrows; i++) {
        free(r->rows[i].id);
        free(r->rows[i].vself);
    }
    free(r->rows);
    r->rows = NULL;
    r->nrows = 0;
}

void report_free(struct report *r)
{
    report_free_rows(r);
    free(r->vbase);
    value_columns_free(&r->values);
    free(r->focus_function);
    memset(r, 0, sizeof(*r));
}
