/* walk.c - see walk.h */
#include "analyze/walk.h"
#include "util/xalloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct slot_state {
    const struct path *prev;
    char *label;
};

/* Thread names by tid: the profile's thread records, sorted, last wins. */
static int thread_cmp(const void *a, const void *b)
{
    const struct prof_thread *x = *(const struct prof_thread *const *)a;
    const struct prof_thread *y = *(const struct prof_thread *const *)b;
    if (x->tid != y->tid)
        return x->tid < y->tid ? -1 : 1;
    return x < y ? -1 : x > y; /* file order among records of one tid */
}

static const char *thread_name(const struct prof_thread *const *sorted, size_t n, uint32_t tid)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (sorted[mid]->tid <= tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || sorted[lo - 1]->tid != tid || !sorted[lo - 1]->name)
        return "";
    return sorted[lo - 1]->name;
}

static void fill_totals(const struct profile *p, const struct metrics_totals *mt,
                        struct walk_totals *t)
{
    t->has_latency = p->has_totals;
    t->truncated = p->truncated;
    t->requested_hz = p->frequency;
    const char *cpu_time = profile_meta(p, "cpu_time");
    t->per_cpu_second = cpu_time && strcmp(cpu_time, "sampled") == 0;
    t->requested_per_thread =
        !t->per_cpu_second && p->format && strcmp(p->format, "perf-data") == 0 && p->frequency > 0;
    double span = 0;
    if (p->nsamples > 1 && p->samples[p->nsamples - 1].time_ns > p->samples[0].time_ns)
        span = (double)(p->samples[p->nsamples - 1].time_ns - p->samples[0].time_ns) / 1e9;
    if (p->has_totals) {
        t->recorded_samples = (double)p->totals.samples;
        t->duration_s = (double)p->totals.wall_ns / 1e9;
        t->latency_s = (double)p->totals.latency_ns / 1e9;
    } else {
        t->recorded_samples = t->samples;
        t->duration_s = span;
    }
    t->rate_span_s = t->duration_s;
    if (t->per_cpu_second && p->has_totals && p->totals.ideal_samples && p->frequency > 0)
        t->rate_span_s = (double)p->totals.ideal_samples / p->frequency;
    else
        t->per_cpu_second = false; /* nothing measured the CPU time */
    t->cpu_s = mt->cpu_s;
    t->wall_s = mt->wall_s;
    t->energy_j = mt->energy_j;
    t->unattributed_j = mt->unattributed_j;
    t->idle_s = mt->idle_s;
    t->has_energy = mt->has_energy;
    snprintf(t->energy_source, sizeof(t->energy_source), "%s",
             mt->energy_source ? mt->energy_source : "");
    snprintf(t->default_metric, sizeof(t->default_metric), "%s",
             p->default_metric ? p->default_metric : "");
}

/* The samples sampling round S stands for: the most any of its threads
 * stands for (1 in a recording, and for a round without threads). */
static double round_weight(const struct prof_sample *s)
{
    uint64_t most = 1;
    uint32_t parts = 0;
    for (uint32_t j = 0; j < s->nthreads; j++) {
        parts += (s->threads[j].flags & PROF_THREAD_PART) != 0;
        uint64_t weight = prof_weight(s, j);
        if (weight > most)
            most = weight;
    }
    /* A sample holding only parts of intervals is no round (spells.h). */
    return s->nthreads && parts == s->nthreads ? 0 : (double)most;
}

/* The column of each of P's value types in V's columns; NULL when V takes
 * no values.  -1 with *ERROR when a type clashes with a column. */
static int map_values(const struct profile *p, const struct walk_visitor *v, uint32_t **columns,
                      char **error)
{
    *columns = NULL;
    if (!v->values)
        return 0;
    *columns = xcalloc(p->nvalue_types + 1, sizeof(**columns));
    for (size_t k = 0; k < p->nvalue_types; k++) {
        int c = value_columns_add(v->values, &p->value_types[k], error);
        if (c < 0)
            return -1;
        (*columns)[k] = (uint32_t)c;
    }
    return 0;
}

int walk_profile(const struct profile *p, const struct frame_resolver *r,
                 const struct walk_options *opts, struct strtab *keys, struct strtab *names,
                 const struct walk_visitor *v, struct walk_totals *totals, char **error)
{
    memset(totals, 0, sizeof(*totals));
    uint32_t *columns;
    if (map_values(p, v, &columns, error) != 0) {
        free(columns);
        return -1;
    }
    struct metrics *m = metrics_new(p, &opts->metrics, error);
    if (!m) {
        free(columns);
        return -1;
    }
    size_t nvalues = v->values ? v->values->n : 0;
    double *values = v->values ? xcalloc(nvalues + 1, sizeof(*values)) : NULL;
    struct path_builder *pb = path_builder_new(p, r, &opts->keys, keys, names);
    if (opts->max_paths)
        path_builder_set_max_paths(pb, opts->max_paths);
    const struct prof_thread **sorted = xcalloc(p->nthreads + 1, sizeof(*sorted));
    for (size_t i = 0; i < p->nthreads; i++)
        sorted[i] = &p->threads[i];
    qsort(sorted, p->nthreads, sizeof(*sorted), thread_cmp);

    struct slot_state *slots = NULL;
    size_t slots_cap = 0;
    struct thread_metrics *tm = NULL;
    size_t tm_cap = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        tm = xgrow(tm, &tm_cap, s->nthreads + 1, sizeof(*tm));
        double unattributed, idle;
        metrics_sample(m, i, tm, &unattributed, &idle);
        const double *sample_values = metrics_values(m);
        size_t old_cap = slots_cap;
        slots = xgrow(slots, &slots_cap, metrics_nslots(m) + 1, sizeof(*slots));
        memset(slots + old_cap, 0, (slots_cap - old_cap) * sizeof(*slots));
        for (uint32_t j = 0; j < s->nthreads; j++) {
            const struct prof_thread_sample *t = &s->threads[j];
            struct slot_state *st = &slots[tm[j].slot];
            if (tm[j].first) {
                path_builder_release(st->prev);
                st->prev = NULL;
                st->label =
                    xasprintf("%s#%u", thread_name(sorted, p->nthreads, t->tid), tm[j].slot + 1);
            }
            if (t->stack != 0 && t->stack < p->nstacks && p->stacks[t->stack].depth > 1)
                totals->has_stacks = true;
            const struct path *path =
                path_builder_get(pb, s->time_ns, t, st->label, tm[j].slot + 1);
            if (values && sample_values) {
                const double *sv = sample_values + (size_t)j * p->nvalue_types;
                for (size_t k = 0; k < p->nvalue_types; k++)
                    values[columns[k]] = sv[k];
            }
            struct walk_event e = {path,      st->prev,
                                   tm[j].q,   values,
                                   nvalues,   tm[j].slot,
                                   i,         s->time_ns,
                                   st->label, (t->flags & PROF_THREAD_STACK_TRUNCATED) != 0};
            v->sample(v->ctx, &e);
            /* Held: the cache may start over before its thread's next. */
            path_builder_hold(path);
            path_builder_release(st->prev);
            st->prev = path;
            totals->thread_samples += tm[j].q[Q_SAMPLES];
        }
        totals->samples += round_weight(s);
        if (v->unattributed && metrics_totals(m)->has_energy)
            v->unattributed(v->ctx, unattributed, idle);
    }
    fill_totals(p, metrics_totals(m), totals);
    size_t nslots = metrics_nslots(m);
    for (size_t i = 0; i < nslots; i++) {
        free(slots[i].label);
        path_builder_release(slots[i].prev);
    }
    free(slots);
    free(tm);
    free(values);
    free(columns);
    free(sorted);
    path_builder_free(pb);
    metrics_free(m);
    return 0;
}

/* --- fan-out ------------------------------------------------------------ */

void walk_fanout_add(struct walk_fanout *f, struct walk_visitor v)
{
    if (f->n < WALK_FANOUT_MAX)
        f->to[f->n++] = v;
}

/* Visitor I's column for each fan-out column up to N, added as they come
 * (a name in another unit there gets no column: its values are dropped). */
static const uint32_t *columns_for(struct walk_fanout *f, size_t i, size_t n)
{
    if (f->mapped[i] < n) {
        f->column_of[i] = xrealloc(f->column_of[i], n * sizeof(*f->column_of[i]));
        for (size_t c = f->mapped[i]; c < n; c++) {
            char *error = NULL;
            int k = value_columns_add(f->to[i].values, &f->columns.types[c], &error);
            free(error);
            f->column_of[i][c] = k < 0 ? UINT32_MAX : (uint32_t)k;
        }
        f->mapped[i] = n;
    }
    return f->column_of[i];
}

static void fanout_sample(void *ctx, const struct walk_event *e)
{
    struct walk_fanout *f = ctx;
    for (size_t i = 0; i < f->n; i++) {
        if (!e->nvalues || !f->to[i].values) {
            f->to[i].sample(f->to[i].ctx, e);
            continue;
        }
        const uint32_t *column = columns_for(f, i, e->nvalues);
        size_t n = f->to[i].values->n;
        f->scratch = xgrow(f->scratch, &f->scratch_cap, n + 1, sizeof(*f->scratch));
        memset(f->scratch, 0, n * sizeof(*f->scratch));
        for (size_t c = 0; c < e->nvalues; c++)
            if (column[c] != UINT32_MAX)
                f->scratch[column[c]] = e->values[c];
        struct walk_event moved = *e;
        moved.values = f->scratch;
        moved.nvalues = n;
        f->to[i].sample(f->to[i].ctx, &moved);
    }
}

static void fanout_unattributed(void *ctx, double energy_j, double idle_s)
{
    struct walk_fanout *f = ctx;
    for (size_t i = 0; i < f->n; i++)
        if (f->to[i].unattributed)
            f->to[i].unattributed(f->to[i].ctx, energy_j, idle_s);
}

struct walk_visitor walk_fanout_visitor(struct walk_fanout *f)
{
    return (struct walk_visitor){fanout_sample, fanout_unattributed, f, &f->columns};
}

void walk_fanout_clear(struct walk_fanout *f)
{
    for (size_t i = 0; i < f->n; i++) {
        free(f->column_of[i]);
        f->column_of[i] = NULL;
        f->mapped[i] = 0;
    }
    f->n = 0;
}

void walk_fanout_free(struct walk_fanout *f)
{
    walk_fanout_clear(f);
    value_columns_free(&f->columns);
    free(f->scratch);
    f->scratch = NULL;
    f->scratch_cap = 0;
}

int walk_arcs(const struct profile *p, const struct frame_resolver *r,
              const struct walk_options *opts, struct strtab *keys, struct strtab *names,
              void (*fn)(void *ctx, const struct walk_arc *a), void *ctx)
{
    struct path_builder *pb = path_builder_new(p, r, &opts->keys, keys, names);
    /* The arcs are the first process's (model/profile.h). */
    const uint32_t pid = p->nprocesses ? p->processes[0].pid : 0;
    for (size_t i = 0; i < p->narcs; i++) {
        const struct prof_arc *a = &p->arcs[i];
        struct prof_thread_sample from = {.pid = pid, .tid = pid, .syscall = -1},
                                  to = {.pid = pid, .tid = pid, .syscall = -1};
        /* The call instruction, before the return address the arc holds. */
        from.pc = a->from_pc ? a->from_pc - 1 : 0;
        to.pc = a->self_pc;
        struct walk_arc arc = {path_builder_get(pb, 0, &from, "", 0), NULL, a->count};
        path_builder_hold(arc.caller); /* through the callee's lookup */
        arc.callee = path_builder_get(pb, 0, &to, "", 0);
        fn(ctx, &arc);
        path_builder_release(arc.caller);
    }
    path_builder_free(pb);
    return 0;
}
