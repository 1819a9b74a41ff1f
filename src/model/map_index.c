/* map_index.c - see map_index.h */
#include "model/map_index.h"
#include "util/xalloc.h"

#include <stdlib.h>

/* A map in the lookup index, sorted by (pid, start).  max_end is the
 * largest end of this pid's entries up to this one, so a backward walk
 * knows when no earlier map can hold a PC. */
struct map_ref {
    uint32_t pid;
    uint64_t start, end, max_end;
    size_t map;
};

/* A time at which some map of PID was mapped or unmapped. */
struct map_event {
    uint32_t pid;
    uint64_t time;
};

struct map_index {
    const struct profile *p;
    struct map_ref *refs;
    size_t nrefs;
    struct map_event *events;
    size_t nevents;
};

static int ref_cmp(const void *pa, const void *pb)
{
    const struct map_ref *a = pa, *b = pb;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->map < b->map ? -1 : a->map > b->map;
}

static int event_cmp(const void *pa, const void *pb)
{
    const struct map_event *a = pa, *b = pb;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return a->time < b->time ? -1 : a->time > b->time;
}

struct map_index *map_index_new(const struct profile *p)
{
    struct map_index *ix = xcalloc(1, sizeof(*ix));
    ix->p = p;
    size_t n = p->nmaps ? p->nmaps : 1;
    ix->refs = xcalloc(n, sizeof(*ix->refs));
    ix->events = xcalloc(2 * n, sizeof(*ix->events));
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        ix->events[ix->nevents++] = (struct map_event){m->pid, m->time_ns};
        if (m->unmap_ns)
            ix->events[ix->nevents++] = (struct map_event){m->pid, m->unmap_ns};
        if (m->end > m->start)
            ix->refs[ix->nrefs++] =
                (struct map_ref){.pid = m->pid, .start = m->start, .end = m->end, .map = i};
    }
    qsort(ix->refs, ix->nrefs, sizeof(*ix->refs), ref_cmp);
    qsort(ix->events, ix->nevents, sizeof(*ix->events), event_cmp);
    for (size_t i = 0; i < ix->nrefs; i++) {
        struct map_ref *r = &ix->refs[i];
        uint64_t prev = i > 0 && r[-1].pid == r->pid ? r[-1].max_end : 0;
        r->max_end = r->end > prev ? r->end : prev;
    }
    return ix;
}

static bool valid_at(const struct prof_map *m, uint64_t time)
{
    return time >= m->time_ns && (m->unmap_ns == 0 || time < m->unmap_ns);
}

size_t map_index_find(const struct map_index *ix, uint32_t pid, uint64_t pc, uint64_t time)
{
    size_t lo = 0, hi = ix->nrefs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct map_ref *r = &ix->refs[mid];
        if (r->pid < pid || (r->pid == pid && r->start <= pc))
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct prof_map *maps = ix->p->maps;
    size_t best = MAP_INDEX_NONE;
    for (size_t k = lo; k-- > 0;) {
        const struct map_ref *r = &ix->refs[k];
        if (r->pid != pid || r->max_end <= pc)
            break;
        if (pc >= r->end || !valid_at(&maps[r->map], time))
            continue;
        const struct prof_map *m = &maps[r->map];
        if (best == MAP_INDEX_NONE || m->time_ns > maps[best].time_ns ||
            (m->time_ns == maps[best].time_ns && r->map > best))
            best = r->map;
    }
    return best;
}

uint64_t map_index_epoch(const struct map_index *ix, uint32_t pid, uint64_t time)
{
    /* The events of PID up to TIME, counted with all those of lower pids:
     * the count changes exactly when one of PID's maps does. */
    size_t lo = 0, hi = ix->nevents;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct map_event *e = &ix->events[mid];
        if (e->pid < pid || (e->pid == pid && e->time <= time))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void map_index_free(struct map_index *ix)
{
    if (!ix)
        return;
    free(ix->refs);
    free(ix->events);
    free(ix);
}
