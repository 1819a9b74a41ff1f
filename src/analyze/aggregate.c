/* aggregate.c - see aggregate.h */
#include "analyze/aggregate.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct acc {
    double self[Q_COUNT];
    double total[Q_COUNT];
    double sq_self[Q_EXECUTIONS], sq_total[Q_EXECUTIONS]; /* for uncertainty (report.h) */
    bool seen;
};

struct aggregate {
    const struct strtab *keys;
    struct key_spec spec;
    struct acc *accs; /* by key id */
    size_t naccs;
    double unattributed_j, idle_s, unattributed_sq;
    double sq_base[Q_EXECUTIONS];
    bool has_unattributed;
    struct value_columns columns;
    double *values; /* by key id: self then total per column (stride 2 x nvalues) */
    size_t nvalues; /* columns the values are laid out for */
    double *vbase;  /* the run's total per column */
};

struct aggregate *aggregate_new(const struct strtab *keys, const struct key_spec *spec)
{
    struct aggregate *a = xcalloc(1, sizeof(*a));
    a->keys = keys;
    a->spec = *spec;
    return a;
}

void aggregate_free(struct aggregate *a)
{
    if (!a)
        return;
    free(a->accs);
    free(a->values);
    free(a->vbase);
    value_columns_free(&a->columns);
    free(a);
}

/* Lay the values out for N columns (a later profile brought more). */
static void restride(struct aggregate *a, size_t n)
{
    double *v = xcalloc(a->naccs * 2 * n + 1, sizeof(*v));
    for (size_t k = 0; a->values && k < a->naccs; k++)
        for (size_t c = 0; c < a->nvalues; c++) {
            v[k * 2 * n + c] = a->values[k * 2 * a->nvalues + c];
            v[k * 2 * n + n + c] = a->values[k * 2 * a->nvalues + a->nvalues + c];
        }
    free(a->values);
    a->values = v;
    a->vbase = xrealloc(a->vbase, (n + 1) * sizeof(*a->vbase));
    memset(a->vbase + a->nvalues, 0, (n + 1 - a->nvalues) * sizeof(*a->vbase));
    a->nvalues = n;
}

/* Room for key ids up to KEY, values included: rare, kept out of line so
 * acc_of() stays a bounds check and an index. */
static __attribute__((noinline)) void grow_accs(struct aggregate *a, uint32_t key)
{
    size_t n = a->naccs ? a->naccs : 256;
    while (n <= key)
        n *= 2;
    a->accs = xrealloc(a->accs, n * sizeof(*a->accs));
    memset(a->accs + a->naccs, 0, (n - a->naccs) * sizeof(*a->accs));
    if (a->nvalues) {
        size_t stride = 2 * a->nvalues;
        a->values = xrealloc(a->values, n * stride * sizeof(*a->values));
        memset(a->values + a->naccs * stride, 0, (n - a->naccs) * stride * sizeof(*a->values));
    }
    a->naccs = n;
}

static inline struct acc *acc_of(struct aggregate *a, uint32_t key)
{
    if (key >= a->naccs)
        grow_accs(a, key);
    return &a->accs[key];
}

/* Is KEY in the sorted list of PREV's unique keys? */
static bool on_path(const struct path *prev, uint32_t key)
{
    size_t lo = 0, hi = prev->nunique;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (prev->unique[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < prev->nunique && prev->unique[lo] == key;
}

static void add_values(struct aggregate *a, const struct walk_event *e)
{
    if (e->nvalues > a->nvalues)
        restride(a, e->nvalues);
    const struct path *path = e->path;
    size_t n = a->nvalues, stride = 2 * n;
    double *self = a->values + (size_t)path->frames[0].key * stride;
    for (size_t c = 0; c < e->nvalues; c++) {
        self[c] += e->values[c];
        a->vbase[c] += e->values[c];
    }
    for (uint32_t i = 0; i < path->nunique; i++) {
        double *total = a->values + (size_t)path->unique[i] * stride + n;
        for (size_t c = 0; c < e->nvalues; c++)
            total[c] += e->values[c];
    }
}

static void on_sample(void *ctx, const struct walk_event *e)
{
    struct aggregate *a = ctx;
    const struct path *path = e->path;
    uint32_t leaf = path->frames[0].key;
    struct acc *s = acc_of(a, leaf);
    s->seen = true;
    /* Squares over the weight: a sample standing for N is N of 1/N each. */
    double w = e->q[Q_SAMPLES], sq[Q_EXECUTIONS];
    for (int q = 0; q < Q_EXECUTIONS; q++) {
        sq[q] = w > 0 ? e->q[q] * e->q[q] / w : 0;
        s->self[q] += e->q[q];
        s->sq_self[q] += sq[q];
        a->sq_base[q] += sq[q];
    }
    if (!e->prev || e->prev->frames[0].key != leaf)
        s->self[Q_EXECUTIONS] += 1;
    bool same_path = e->prev == path; /* paths are shared: nothing entered */
    for (uint32_t i = 0; i < path->nunique; i++) {
        struct acc *t = acc_of(a, path->unique[i]);
        t->seen = true;
        for (int q = 0; q < Q_EXECUTIONS; q++) {
            t->total[q] += e->q[q];
            t->sq_total[q] += sq[q];
        }
        if (!e->prev || (!same_path && !on_path(e->prev, path->unique[i])))
            t->total[Q_EXECUTIONS] += 1;
    }
    if (e->nvalues)
        add_values(a, e);
}

static void on_unattributed(void *ctx, double energy_j, double idle_s)
{
    struct aggregate *a = ctx;
    a->unattributed_j += energy_j;
    a->unattributed_sq += energy_j * energy_j;
    a->sq_base[Q_ENERGY] += energy_j * energy_j;
    a->idle_s += idle_s;
    if (energy_j > 0)
        a->has_unattributed = true;
}

struct walk_visitor aggregate_visitor(struct aggregate *a)
{
    return (struct walk_visitor){on_sample, on_unattributed, a, &a->columns};
}

const struct value_columns *aggregate_columns(const struct aggregate *a)
{
    return &a->columns;
}

void aggregate_report(struct aggregate *a, const struct walk_totals *t, const struct metric *m,
                      struct report *out)
{
    memset(out, 0, sizeof(*out));
    out->keys = a->spec;
    out->metric = *m;
    value_columns_copy(&out->values, &a->columns);
    size_t nv = out->values.n;
    if (nv > a->nvalues)
        restride(a, nv); /* columns of a profile without thread samples */
    report_totals_from_walk(&out->totals, t);
    size_t n = 0;
    for (size_t k = 0; k < a->naccs; k++)
        n += a->accs[k].seen;
    out->rows = xcalloc(n + 1, sizeof(*out->rows));
    for (size_t k = 0; k < a->naccs; k++) {
        const struct acc *c = &a->accs[k];
        if (!c->seen)
            continue;
        struct report_row *r = &out->rows[out->nrows++];
        r->id = xstrdup(strtab_get(a->keys, (uint32_t)k));
        memcpy(r->self, c->self, sizeof(r->self));
        memcpy(r->total, c->total, sizeof(r->total));
        memcpy(r->sq_self, c->sq_self, sizeof(c->sq_self));
        memcpy(r->sq_total, c->sq_total, sizeof(c->sq_total));
        report_row_values(r, nv);
        if (nv)
            memcpy(r->vself, a->values + k * 2 * nv, 2 * nv * sizeof(*r->vself));
        out->totals.executions += c->self[Q_EXECUTIONS];
    }
    if (a->has_unattributed) {
        out->rows = xrealloc(out->rows, (out->nrows + 1) * sizeof(*out->rows));
        struct report_row *r = &out->rows[out->nrows++];
        memset(r, 0, sizeof(*r));
        r->id = key_compose_all(&a->spec, REPORT_UNATTRIBUTED);
        report_row_values(r, nv);
        r->self[Q_ENERGY] = r->total[Q_ENERGY] = a->unattributed_j;
        r->sq_self[Q_ENERGY] = r->sq_total[Q_ENERGY] = a->unattributed_sq;
        r->idle_s = a->idle_s;
        r->unattributed = true;
    }
    out->base[Q_SAMPLES] = out->totals.thread_samples;
    out->base[Q_CPU] = out->totals.cpu_s;
    out->base[Q_WALL] = out->totals.wall_s;
    out->base[Q_ENERGY] = out->totals.energy_j;
    out->base[Q_EXECUTIONS] = out->totals.executions;
    memcpy(out->sq_base, a->sq_base, sizeof(a->sq_base));
    if (nv) {
        out->vbase = xcalloc(nv, sizeof(*out->vbase));
        memcpy(out->vbase, a->vbase, nv * sizeof(*out->vbase));
    }
}
