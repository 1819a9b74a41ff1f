/* report.c - see report.h */
#include "analyze/report.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

static const char *const metric_names[METRIC_COUNT] = {
    [METRIC_CPU] = "cpu",       [METRIC_WALL] = "wall",   [METRIC_SAMPLES] = "samples",
    [METRIC_ENERGY] = "energy", [METRIC_POWER] = "power", [METRIC_EXECUTIONS] = "executions",
};

int metric_parse(const char *name, enum metric *out)
{
    for (int m = 0; m < METRIC_COUNT; m++) {
        if (strcmp(name, metric_names[m]) == 0) {
            *out = (enum metric)m;
            return 0;
        }
    }
    if (strcmp(name, "time") == 0) {
        *out = METRIC_CPU;
        return 0;
    }
    return -1;
}

const char *metric_name(enum metric m)
{
    return m < METRIC_COUNT ? metric_names[m] : "?";
}

enum quantity metric_quantity(enum metric m)
{
    switch (m) {
    case METRIC_CPU:
        return Q_CPU;
    case METRIC_WALL:
        return Q_WALL;
    case METRIC_SAMPLES:
        return Q_SAMPLES;
    case METRIC_ENERGY:
    case METRIC_POWER:
        return Q_ENERGY;
    case METRIC_EXECUTIONS:
    case METRIC_COUNT:
        break;
    }
    return Q_EXECUTIONS;
}

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
    rt->rate_span_s = wt->rate_span_s;
    memcpy(rt->energy_source, wt->energy_source, sizeof(rt->energy_source));
}

double report_achieved_hz(const struct report_totals *t)
{
    return t->rate_span_s > 0 ? t->recorded_samples / t->rate_span_s : NAN;
}

double report_power(double energy_j, double time_s)
{
    return time_s > 0 ? energy_j / time_s : 0;
}

double report_mean_power(const struct report_totals *t)
{
    return report_power(t->energy_j, t->duration_s);
}

double report_value(const struct report_row *row, enum metric m, bool total)
{
    const double *q = total ? row->total : row->self;
    if (m == METRIC_POWER)
        return report_power(q[Q_ENERGY], q[Q_CPU] + row->idle_s);
    return q[metric_quantity(m)];
}

double report_base(const struct report *r, enum metric m)
{
    if (m == METRIC_POWER)
        return r->focus == FOCUS_NONE ? report_mean_power(&r->totals)
                                      : report_power(r->base[Q_ENERGY], r->base[Q_CPU]);
    return r->base[metric_quantity(m)];
}

double report_pct(const struct report *r, const struct report_row *row, enum metric m, bool total)
{
    double base = report_base(r, m);
    return base > 0 ? 100.0 * report_value(row, m, total) / base : 0;
}

void report_free(struct report *r)
{
    for (size_t i = 0; i < r->nrows; i++)
        free(r->rows[i].id);
    free(r->rows);
    free(r->focus_function);
    memset(r, 0, sizeof(*r));
}
