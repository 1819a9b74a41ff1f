/* metric.c - see metric.h */
#include "analyze/metric.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct metric_derived METRIC_DERIVED[] = {
    {"ipc", "instructions", "cycles", "", 1},
    {"ipc", "instructions", "cpu-cycles", "", 1},
    {"cache_miss_rate", "cache-misses", "cache-references", "%", 100},
    {"branch_miss_rate", "branch-misses", "branches", "%", 100},
    {"branch_miss_rate", "branch-misses", "branch-instructions", "%", 100},
};
const size_t METRIC_NDERIVED = sizeof(METRIC_DERIVED) / sizeof(METRIC_DERIVED[0]);

static const struct metric builtins[METRIC_BUILTINS] = {
    [METRIC_CPU] = {METRIC_CPU, 0, 0, 1, false, "cpu", "s", "cpu s"},
    [METRIC_WALL] = {METRIC_WALL, 0, 0, 1, false, "wall", "s", "wall s"},
    [METRIC_SAMPLES] = {METRIC_SAMPLES, 0, 0, 1, true, "samples", "", "samples"},
    [METRIC_ENERGY] = {METRIC_ENERGY, 0, 0, 1, false, "energy", "J", "energy J"},
    [METRIC_POWER] = {METRIC_POWER, 0, 0, 1, false, "power", "W", "power W"},
    [METRIC_EXECUTIONS] = {METRIC_EXECUTIONS, 0, 0, 1, true, "executions", "", "executions"},
};

const struct metric *metric_builtin(enum metric_kind kind)
{
    return kind >= METRIC_CPU && kind < METRIC_BUILTINS ? &builtins[kind] : &builtins[METRIC_CPU];
}

const struct metric *metric_share(const struct metric *m)
{
    return m->kind == METRIC_POWER ? metric_builtin(METRIC_ENERGY) : m;
}

/* Seconds per unit of a time unit, 0 for anything else. */
static double time_unit_seconds(const char *unit)
{
    static const struct {
        const char *name;
        double s;
    } units[] = {{"nanoseconds", 1e-9},  {"ns", 1e-9}, {"microseconds", 1e-6}, {"us", 1e-6},
                 {"milliseconds", 1e-3}, {"ms", 1e-3}, {"seconds", 1},         {"s", 1}};
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(unit, units[i].name) == 0)
            return units[i].s;
    return 0;
}

static void set_title(struct metric *m)
{
    snprintf(m->title, sizeof(m->title), "%s%s%s", m->name, *m->unit ? " " : "", m->unit);
}

static void column_metric(const struct prof_value_type *t, uint32_t column, struct metric *out)
{
    memset(out, 0, sizeof(*out));
    out->kind = t->agg == PROF_VALUE_LEVEL ? METRIC_MEAN : METRIC_VALUE;
    out->a = column;
    snprintf(out->name, sizeof(out->name), "%s", t->name);
    double seconds = time_unit_seconds(t->unit);
    if (seconds > 0) {
        out->scale = seconds;
        snprintf(out->unit, sizeof(out->unit), "s");
    } else {
        out->scale = 1;
        /* A count is a number: no unit to show. */
        if (strcmp(t->unit, "count") != 0)
            snprintf(out->unit, sizeof(out->unit), "%s", t->unit);
        out->integral = out->kind == METRIC_VALUE;
    }
    set_title(out);
}

int metric_resolve(const char *name, const struct value_columns *columns, struct metric *out)
{
    if (strcmp(name, "time") == 0)
        name = "cpu";
    for (int k = METRIC_CPU; k < METRIC_BUILTINS; k++)
        if (strcmp(name, builtins[k].name) == 0) {
            *out = builtins[k];
            return 0;
        }
    int c = columns ? value_columns_find(columns, name) : -1;
    if (c >= 0) {
        column_metric(&columns->types[c], (uint32_t)c, out);
        return 0;
    }
    for (size_t i = 0; columns && i < METRIC_NDERIVED; i++) {
        const struct metric_derived *d = &METRIC_DERIVED[i];
        int a = value_columns_find(columns, d->numerator);
        int b = value_columns_find(columns, d->denominator);
        if (strcmp(name, d->name) != 0 || a < 0 || b < 0)
            continue;
        memset(out, 0, sizeof(*out));
        out->kind = METRIC_RATIO;
        out->a = (uint32_t)a;
        out->b = (uint32_t)b;
        out->scale = d->scale;
        snprintf(out->name, sizeof(out->name), "%s", d->name);
        snprintf(out->unit, sizeof(out->unit), "%s", d->unit);
        set_title(out);
        return 0;
    }
    return -1;
}

double metric_power(double energy_j, double time_s)
{
    return time_s > 0 ? energy_j / time_s : 0;
}

double metric_of(const struct metric *m, const double *q, const double *v, double idle_s)
{
    switch (m->kind) {
    case METRIC_CPU:
        return q[Q_CPU];
    case METRIC_WALL:
        return q[Q_WALL];
    case METRIC_SAMPLES:
        return q[Q_SAMPLES];
    case METRIC_ENERGY:
        return q[Q_ENERGY];
    case METRIC_POWER:
        return metric_power(q[Q_ENERGY], q[Q_CPU] + idle_s);
    case METRIC_EXECUTIONS:
        return q[Q_EXECUTIONS];
    case METRIC_VALUE:
        return v ? v[m->a] * m->scale : 0;
    case METRIC_MEAN:
        return v && q[Q_SAMPLES] > 0 ? v[m->a] / q[Q_SAMPLES] * m->scale : 0;
    case METRIC_RATIO:
        return v && v[m->b] != 0 ? v[m->a] / v[m->b] * m->scale : 0;
    }
    return 0;
}

bool metric_additive(const struct metric *m)
{
    switch (m->kind) {
    case METRIC_CPU:
    case METRIC_WALL:
    case METRIC_SAMPLES:
    case METRIC_ENERGY:
    case METRIC_VALUE:
        return true;
    default:
        return false;
    }
}

void metric_basis(const struct metric *m, struct metric *out)
{
    *out = *m;
    if (m->kind == METRIC_POWER) {
        *out = builtins[METRIC_ENERGY];
    } else if (m->kind == METRIC_MEAN) {
        *out = builtins[METRIC_SAMPLES];
    } else if (m->kind == METRIC_RATIO) {
        out->kind = METRIC_VALUE;
        out->a = m->b;
        out->scale = 1;
    }
}

/* S after what BUF holds (USED bytes), comma-separated, cut to LEN. */
static void append_name(char *buf, size_t len, size_t *used, const char *s)
{
    int n = snprintf(buf + *used, len - *used, "%s%s", *used ? ", " : "", s);
    if (n > 0)
        *used = *used + (size_t)n < len ? *used + (size_t)n : len - 1;
}

struct metric *metric_all(const struct value_columns *columns, size_t *n)
{
    size_t ncols = columns ? columns->n : 0;
    struct metric *all = xcalloc(METRIC_BUILTINS + ncols + METRIC_NDERIVED, sizeof(*all));
    *n = 0;
    for (int k = METRIC_CPU; k < METRIC_BUILTINS; k++)
        all[(*n)++] = builtins[k];
    for (size_t i = 0; i < ncols; i++)
        if (metric_resolve(columns->types[i].name, columns, &all[*n]) == 0 &&
            all[*n].kind >= METRIC_BUILTINS && all[*n].a == i)
            (*n)++;
    for (size_t i = 0; i < METRIC_NDERIVED; i++) {
        /* A name with two spellings of an operand is listed once. */
        bool listed = false;
        for (size_t j = 0; j < *n; j++)
            listed |= strcmp(all[j].name, METRIC_DERIVED[i].name) == 0;
        if (!listed && metric_resolve(METRIC_DERIVED[i].name, columns, &all[*n]) == 0 &&
            all[*n].kind == METRIC_RATIO)
            (*n)++;
    }
    return all;
}

void metric_list(const struct value_columns *columns, char *buf, size_t len)
{
    size_t n, used = 0;
    struct metric *all = metric_all(columns, &n);
    buf[0] = '\0';
    for (size_t i = 0; i < n; i++)
        append_name(buf, len, &used, all[i].name);
    free(all);
}
