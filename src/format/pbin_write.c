/*
 * pbin_write.c - native_write_profile() of pbin.h: any profile re-emitted
 * as native records.
 *
 * The profile model keeps what happened but not the order of the records
 * it came from, and the native reader derives state from that order (a MAP
 * ends what it overlaps, an UNMAP ends every overlapping map, records refer
 * to the latest PROCESS and THREAD of their id).  So the writer rebuilds an
 * order: every timed fact becomes an event, sorted by time, then by a rank
 * that puts what a record depends on first (a process before its maps, an
 * unmap before the map that replaces it at the same instant), then by its
 * place in the model, so an array in time order (as every reader makes
 * them) keeps its order.
 */
#include "format/pbin.h"
#include "format/native.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- ordering the model's facts ------------------------------------------ */

/* Ranks at equal times; their order is what the reader needs. */
enum ev_kind {
    EV_PROCESS,
    EV_EXEC,
    EV_UNMAP,
    EV_MAP,
    EV_IMAGE,
    EV_THREAD,
    EV_SAMPLE,
    EV_THREAD_EXIT,
    EV_EXIT,
};

struct event {
    uint64_t time;
    uint32_t rank; /* an enum ev_kind: where it goes among equal times */
    uint32_t kind; /* what to write */
    size_t index;  /* into the model's array of that kind */
};

static int event_cmp(const void *a, const void *b)
{
    const struct event *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    if (x->index != y->index)
        return x->index < y->index ? -1 : 1;
    /* Same rank and index: a map, then its own unmap. */
    return x->kind < y->kind ? 1 : x->kind > y->kind ? -1 : 0;
}

/* When each pid first appears as a process: records naming it must not
 * come before, whatever their own time says. */
struct pid_start {
    uint32_t pid;
    uint64_t start;
};

static int pid_start_cmp(const void *a, const void *b)
{
    const struct pid_start *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

struct order {
    struct pid_start *starts; /* sorted by pid, one per pid */
    size_t nstarts;
    uint32_t *orphans; /* pids named without a PROCESS record */
    size_t norphans, cap_orphans;
    uint64_t first_time; /* of the earliest event: where orphans start */
    struct event *events;
    size_t nevents, cap_events;
};

static const struct pid_start *find_start(const struct order *o, uint32_t pid)
{
    struct pid_start key = {pid, 0};
    size_t lo = 0, hi = o->nstarts;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (o->starts[mid].pid < key.pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < o->nstarts && o->starts[lo].pid == pid ? &o->starts[lo] : NULL;
}

static void index_processes(struct order *o, const struct profile *p)
{
    o->starts = p->nprocesses ? xcalloc(p->nprocesses, sizeof(*o->starts)) : NULL;
    for (size_t i = 0; i < p->nprocesses; i++)
        o->starts[i] = (struct pid_start){p->processes[i].pid, p->processes[i].start_ns};
    if (p->nprocesses > 1)
        qsort(o->starts, p->nprocesses, sizeof(*o->starts), pid_start_cmp);
    /* Keep the earliest start of each pid. */
    size_t n = 0;
    for (size_t i = 0; i < p->nprocesses; i++)
        if (n == 0 || o->starts[n - 1].pid != o->starts[i].pid)
            o->starts[n++] = o->starts[i];
    o->nstarts = n;
}

/* A pid that records name but no process introduces. */
static void need_pid(struct order *o, uint32_t pid)
{
    if (find_start(o, pid))
        return;
    for (size_t i = 0; i < o->norphans; i++)
        if (o->orphans[i] == pid)
            return;
    o->orphans = xgrow(o->orphans, &o->cap_orphans, o->norphans + 1, sizeof(*o->orphans));
    o->orphans[o->norphans++] = pid;
}

/* T, but not before the first process of PID (orphans start first). */
static uint64_t after_start(const struct order *o, uint32_t pid, uint64_t t)
{
    const struct pid_start *s = find_start(o, pid);
    uint64_t start = s ? s->start : o->first_time;
    return t > start ? t : start;
}

static void add_ranked(struct order *o, uint64_t time, enum ev_kind rank, enum ev_kind kind,
                       size_t index)
{
    o->events = xgrow(o->events, &o->cap_events, o->nevents + 1, sizeof(*o->events));
    o->events[o->nevents++] = (struct event){time, rank, kind, index};
}

static void add_event(struct order *o, uint64_t time, enum ev_kind kind, size_t index)
{
    add_ranked(o, time, kind, kind, index);
}

static uint64_t earliest_time(const struct profile *p)
{
    uint64_t t = UINT64_MAX;
    for (size_t i = 0; i < p->nprocesses; i++)
        t = p->processes[i].start_ns < t ? p->processes[i].start_ns : t;
    for (size_t i = 0; i < p->nthreads; i++)
        t = p->threads[i].start_ns < t ? p->threads[i].start_ns : t;
    for (size_t i = 0; i < p->nmaps; i++)
        t = p->maps[i].time_ns < t ? p->maps[i].time_ns : t;
    for (size_t i = 0; i < p->nsamples; i++)
        t = p->samples[i].time_ns < t ? p->samples[i].time_ns : t;
    return t == UINT64_MAX ? 0 : t;
}

static void build_order(struct order *o, const struct profile *p)
{
    memset(o, 0, sizeof(*o));
    index_processes(o, p);
    o->first_time = earliest_time(p);
    for (size_t i = 0; i < p->nthreads; i++)
        need_pid(o, p->threads[i].pid);
    for (size_t i = 0; i < p->nmaps; i++)
        need_pid(o, p->maps[i].pid);
    for (size_t i = 0; i < p->nimages; i++)
        need_pid(o, p->images[i].pid);
    for (size_t i = 0; i < p->nlocations; i++)
        need_pid(o, p->locations[i].pid);

    for (size_t i = 0; i < p->nprocesses; i++) {
        const struct prof_process *pr = &p->processes[i];
        add_event(o, pr->start_ns, EV_PROCESS, i);
        /* Only the last program is known: it runs from the start. */
        if (pr->exe && pr->exe[0])
            add_event(o, pr->start_ns, EV_EXEC, i);
        if (pr->exited)
            add_event(o, pr->exit_ns > pr->start_ns ? pr->exit_ns : pr->start_ns, EV_EXIT, i);
    }
    for (size_t i = 0; i < o->norphans; i++)
        add_event(o, o->first_time, EV_PROCESS, p->nprocesses + i);
    for (size_t i = 0; i < p->nthreads; i++) {
        const struct prof_thread *t = &p->threads[i];
        uint64_t start = after_start(o, t->pid, t->start_ns);
        add_event(o, start, EV_THREAD, i);
        if (t->end_ns)
            add_event(o, t->end_ns > start ? t->end_ns : start, EV_THREAD_EXIT, i);
    }
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        uint64_t start = after_start(o, m->pid, m->time_ns);
        add_event(o, start, EV_MAP, i);
        /* An empty range never was mapped, so nothing ended it.  A map
         * that ended when it began is unmapped right after it is mapped,
         * before a later map of that instant could be hit as well. */
        if (m->unmap_ns && m->start < m->end) {
            if (m->unmap_ns > start)
                add_event(o, m->unmap_ns, EV_UNMAP, i);
            else
                add_ranked(o, start, EV_MAP, EV_UNMAP, i);
        }
    }
    /* Images carry no time: they belong to their process from its start. */
    for (size_t i = 0; i < p->nimages; i++)
        add_event(o, after_start(o, p->images[i].pid, 0), EV_IMAGE, i);
    for (size_t i = 0; i < p->nsamples; i++)
        add_event(o, p->samples[i].time_ns, EV_SAMPLE, i);
    if (o->nevents > 1)
        qsort(o->events, o->nevents, sizeof(*o->events), event_cmp);
}

static void order_free(struct order *o)
{
    free(o->starts);
    free(o->orphans);
    free(o->events);
}

/* --- writing ------------------------------------------------------------- */

static int write_channel(struct native_writer *w, uint32_t id, const struct prof_channel *c)
{
    struct pmu_channel ch = {.kind = c->kind};
    snprintf(ch.name, sizeof(ch.name), "%s", c->name ? c->name : "");
    snprintf(ch.unit, sizeof(ch.unit), "%s", c->unit ? c->unit : "");
    return native_write_channel(w, id, &ch);
}

/* Old stack id -> id in the new file (equal stacks share one). */
static uint32_t *write_stacks(struct native_writer *w, const struct profile *p)
{
    uint32_t *remap = xcalloc(p->nstacks ? p->nstacks : 1, sizeof(*remap));
    for (size_t i = 1; i < p->nstacks; i++)
        remap[i] = native_stack_id(w, p->stacks[i].pcs, p->stacks[i].depth);
    return remap;
}

static int write_sample(struct native_writer *w, const struct profile *p,
                        const struct prof_sample *s, const uint32_t *remap,
                        struct prof_thread_sample **buf, size_t *cap)
{
    if (s->nthreads)
        *buf = xgrow(*buf, cap, s->nthreads, sizeof(**buf));
    for (uint32_t t = 0; t < s->nthreads; t++) {
        (*buf)[t] = s->threads[t];
        uint32_t id = s->threads[t].stack;
        (*buf)[t].stack = id < p->nstacks ? remap[id] : 0;
    }
    return native_write_sample_values(w, s->time_ns, s->values, (uint32_t)p->nchannels, *buf,
                                      s->nthreads, prof_weights(s),
                                      p->nvalue_types ? prof_all_thread_values(s) : NULL);
}

static int write_event(struct native_writer *w, const struct profile *p, const struct order *o,
                       const struct event *e, const uint32_t *remap,
                       struct prof_thread_sample **buf, size_t *cap)
{
    switch ((enum ev_kind)e->kind) {
    case EV_PROCESS:
        if (e->index >= p->nprocesses)
            return native_write_process(w, o->orphans[e->index - p->nprocesses], 0, e->time);
        return native_write_process(w, p->processes[e->index].pid, p->processes[e->index].ppid,
                                    e->time);
    case EV_EXEC:
        return native_write_exec(w, p->processes[e->index].pid, e->time,
                                 p->processes[e->index].exe);
    case EV_EXIT:
        return native_write_exit(w, p->processes[e->index].pid, e->time,
                                 p->processes[e->index].exit_status);
    case EV_THREAD:
        return native_write_thread(w, p->threads[e->index].pid, p->threads[e->index].tid, e->time,
                                   p->threads[e->index].name);
    case EV_THREAD_EXIT:
        return native_write_thread_exit(w, p->threads[e->index].tid, e->time);
    case EV_MAP: {
        struct prof_map m = p->maps[e->index];
        m.time_ns = e->time;
        return native_write_map(w, &m);
    }
    case EV_UNMAP: {
        const struct prof_map *m = &p->maps[e->index];
        return native_write_unmap(w, m->pid, e->time, m->start, m->end);
    }
    case EV_IMAGE: {
        const struct prof_image *im = &p->images[e->index];
        return native_write_image(w, im->pid, im->start, im->name, im->data, im->size);
    }
    case EV_SAMPLE:
        return write_sample(w, p, &p->samples[e->index], remap, buf, cap);
    }
    return 0;
}

static int write_records(struct native_writer *w, const struct profile *p)
{
    int rc = 0;
    for (size_t i = 0; i < p->nmeta && rc == 0; i++)
        rc = native_write_meta(w, p->meta[i].key, p->meta[i].value);
    if (rc == 0 && p->default_metric && !profile_meta(p, "default_metric"))
        rc = native_write_meta(w, "default_metric", p->default_metric);
    for (size_t i = 0; i < p->nchannels && rc == 0; i++)
        rc = write_channel(w, (uint32_t)i, &p->channels[i]);
    for (size_t i = 0; i < p->nvalue_types && rc == 0; i++)
        rc = native_write_value_type(w, (uint32_t)i, p->value_types[i].name, p->value_types[i].unit,
                                     p->value_types[i].agg);
    if (rc != 0)
        return -1;

    uint32_t *remap = write_stacks(w, p);
    struct order o;
    build_order(&o, p);
    struct prof_thread_sample *buf = NULL;
    size_t cap = 0;
    for (size_t i = 0; i < o.nevents && rc == 0; i++)
        rc = write_event(w, p, &o, &o.events[i], remap, &buf, &cap);
    for (size_t i = 0; i < p->nlocations && rc == 0; i++)
        rc = native_write_location(w, &p->locations[i]);
    free(buf);
    order_free(&o);
    free(remap);
    return rc;
}

int native_write_profile(const char *path, const struct profile *p)
{
    struct native_writer *w = native_writer_open(path);
    if (!w)
        return -1;
    if (write_records(w, p) != 0) {
        native_writer_abort(w);
        return -1;
    }
    return native_writer_finish(w, p->has_totals ? &p->totals : NULL);
}
