/* output_state.c - see output_state.h */
#include "record/output_state.h"
#include "record/output.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct kv {
    char *key, *value;
};

struct live_process {
    uint32_t pid, ppid;
    uint64_t start_ns, exec_ns;
    char *exe; /* NULL: no exec seen */
};

struct live_thread {
    uint32_t pid, tid;
    uint64_t start_ns;
    char *name;
};

struct image {
    uint32_t pid;
    uint64_t start;
    char *name;
    void *data;
    size_t size;
};

struct stack_entry {
    uint64_t hash;
    size_t offset; /* into pcs */
    uint32_t depth;
};

/* A thread's running totals: at its last sample, and where this file
 * counts them from. */
struct thread_base {
    uint32_t tid; /* 0: empty */
    uint64_t last_cpu, base_cpu;
    uint64_t *last_v, *base_v; /* per value type */
};

struct output_state {
    struct thread_base *bases; /* open addressing by tid */
    size_t nbases, bases_cap;
    struct kv *meta;
    size_t nmeta, meta_cap;
    struct prof_value_type *types;
    uint32_t ntypes;
    struct live_process *procs;
    size_t nprocs, procs_cap;
    struct live_thread *threads;
    size_t nthreads, threads_cap;
    struct prof_map *maps;
    size_t nmaps, maps_cap;
    struct image *images;
    size_t nimages, images_cap;
    struct prof_location *locs; /* names of an interpreter's frames (interp/interp.h) */
    size_t nlocs, locs_cap;
    /* Stacks: entries by id - 1, and an open-addressing index of them. */
    struct stack_entry *stacks;
    size_t nstacks, stacks_cap;
    uint64_t *pcs;
    size_t npcs, pcs_cap;
    uint32_t *slots; /* id, 0 empty */
    size_t nslots;
};

struct output_state *output_state_new(void)
{
    return xcalloc(1, sizeof(struct output_state));
}

static void free_map(struct prof_map *m)
{
    free(m->path);
}

static void free_location(struct prof_location *l)
{
    for (uint32_t f = 0; f < l->nframes; f++) {
        free(l->frames[f].binary);
        free(l->frames[f].path);
        free(l->frames[f].function);
        free(l->frames[f].mangled);
        free(l->frames[f].file);
    }
    free(l->frames);
}

static void free_image(struct image *im)
{
    free(im->name);
    free(im->data);
}

void output_state_free(struct output_state *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->nmeta; i++) {
        free(s->meta[i].key);
        free(s->meta[i].value);
    }
    free(s->meta);
    for (uint32_t i = 0; i < s->ntypes; i++) {
        free(s->types[i].name);
        free(s->types[i].unit);
    }
    free(s->types);
    for (size_t i = 0; i < s->nprocs; i++)
        free(s->procs[i].exe);
    free(s->procs);
    for (size_t i = 0; i < s->nthreads; i++)
        free(s->threads[i].name);
    free(s->threads);
    for (size_t i = 0; i < s->nmaps; i++)
        free_map(&s->maps[i]);
    free(s->maps);
    for (size_t i = 0; i < s->nimages; i++)
        free_image(&s->images[i]);
    free(s->images);
    for (size_t i = 0; i < s->nlocs; i++)
        free_location(&s->locs[i]);
    free(s->locs);
    free(s->stacks);
    free(s->pcs);
    free(s->slots);
    for (size_t i = 0; i < s->bases_cap; i++)
        free(s->bases[i].last_v);
    free(s->bases);
    free(s);
}

static struct thread_base *base_slot(struct thread_base *b, size_t cap, uint32_t tid)
{
    size_t i = (size_t)(tid * 0x9e3779b1u) & (cap - 1);
    while (b[i].tid && b[i].tid != tid)
        i = (i + 1) & (cap - 1);
    return &b[i];
}

static struct thread_base *base_of(struct output_state *s, uint32_t tid)
{
    if ((s->nbases + 1) * 2 > s->bases_cap) {
        size_t cap = s->bases_cap ? s->bases_cap * 2 : 256;
        struct thread_base *b = xcalloc(cap, sizeof(*b));
        for (size_t i = 0; i < s->bases_cap; i++)
            if (s->bases[i].tid)
                *base_slot(b, cap, s->bases[i].tid) = s->bases[i];
        free(s->bases);
        s->bases = b;
        s->bases_cap = cap;
    }
    struct thread_base *t = base_slot(s->bases, s->bases_cap, tid);
    if (!t->tid) {
        t->tid = tid;
        s->nbases++;
        if (s->ntypes) {
            t->last_v = xcalloc(2 * (size_t)s->ntypes, sizeof(*t->last_v));
            t->base_v = t->last_v + s->ntypes;
        }
    }
    return t;
}

void output_state_rebase(struct output_state *s, struct prof_thread_sample *t, uint64_t *values)
{
    if (!t->tid)
        return;
    struct thread_base *b = base_of(s, t->tid);
    b->last_cpu = t->cpu_ns;
    t->cpu_ns = t->cpu_ns >= b->base_cpu ? t->cpu_ns - b->base_cpu : t->cpu_ns;
    for (uint32_t k = 0; values && b->last_v && k < s->ntypes; k++) {
        if (s->types[k].agg != PROF_VALUE_COUNTER)
            continue;
        b->last_v[k] = values[k];
        values[k] = values[k] >= b->base_v[k] ? values[k] - b->base_v[k] : values[k];
    }
}

void output_state_new_file(struct output_state *s)
{
    for (size_t i = 0; i < s->bases_cap; i++) {
        struct thread_base *b = &s->bases[i];
        if (!b->tid)
            continue;
        b->base_cpu = b->last_cpu;
        for (uint32_t k = 0; b->last_v && k < s->ntypes; k++)
            b->base_v[k] = b->last_v[k];
    }
}

void output_state_note_meta(struct output_state *s, const char *key, const char *value)
{
    s->meta = xgrow(s->meta, &s->meta_cap, s->nmeta + 1, sizeof(*s->meta));
    s->meta[s->nmeta++] = (struct kv){xstrdup(key), xstrdup(value ? value : "")};
}

void output_state_note_value_types(struct output_state *s, const struct prof_value_type *types,
                                   uint32_t n)
{
    s->types = xcalloc(n + 1, sizeof(*s->types));
    for (uint32_t i = 0; i < n; i++) {
        s->types[i] = types[i];
        s->types[i].name = xstrdup(types[i].name);
        s->types[i].unit = xstrdup(types[i].unit);
    }
    s->ntypes = n;
}

static struct live_process *process_of(struct output_state *s, uint32_t pid)
{
    for (size_t i = s->nprocs; i-- > 0;)
        if (s->procs[i].pid == pid)
            return &s->procs[i];
    return NULL;
}

void output_state_note_process(struct output_state *s, uint32_t pid, uint32_t ppid,
                               uint64_t time_ns)
{
    output_state_note_exit(s, pid); /* a reused pid is a new process */
    s->procs = xgrow(s->procs, &s->procs_cap, s->nprocs + 1, sizeof(*s->procs));
    s->procs[s->nprocs++] = (struct live_process){.pid = pid, .ppid = ppid, .start_ns = time_ns};
}

/* Forget what PID held: its maps and images, and with THREADS its threads. */
static void forget_pid(struct output_state *s, uint32_t pid, bool threads)
{
    size_t kept = 0;
    for (size_t i = 0; i < s->nmaps; i++) {
        if (s->maps[i].pid == pid)
            free_map(&s->maps[i]);
        else
            s->maps[kept++] = s->maps[i];
    }
    s->nmaps = kept;
    kept = 0;
    for (size_t i = 0; i < s->nimages; i++) {
        if (s->images[i].pid == pid)
            free_image(&s->images[i]);
        else
            s->images[kept++] = s->images[i];
    }
    s->nimages = kept;
    kept = 0;
    for (size_t i = 0; threads && i < s->nthreads; i++) {
        if (s->threads[i].pid == pid)
            free(s->threads[i].name);
        else
            s->threads[kept++] = s->threads[i];
    }
    if (threads)
        s->nthreads = kept;
}

void output_state_note_exec(struct output_state *s, uint32_t pid, uint64_t time_ns,
                            const char *path)
{
    struct live_process *p = process_of(s, pid);
    if (!p) {
        output_state_note_process(s, pid, 0, time_ns);
        p = process_of(s, pid);
    }
    free(p->exe);
    p->exe = xstrdup(path ? path : "");
    p->exec_ns = time_ns;
    forget_pid(s, pid, false); /* the old program's maps and images went with it */
}

void output_state_note_exit(struct output_state *s, uint32_t pid)
{
    struct live_process *p = process_of(s, pid);
    if (!p)
        return;
    free(p->exe);
    *p = s->procs[--s->nprocs];
    forget_pid(s, pid, true);
    /* Its names go with it; an exec keeps them (they name no file's
     * addresses, and the process's later stacks may use them again). */
    size_t kept = 0;
    for (size_t i = 0; i < s->nlocs; i++) {
        if (s->locs[i].pid == pid)
            free_location(&s->locs[i]);
        else
            s->locs[kept++] = s->locs[i];
    }
    s->nlocs = kept;
}

void output_state_note_location(struct output_state *s, const struct prof_location *loc)
{
    s->locs = xgrow(s->locs, &s->locs_cap, s->nlocs + 1, sizeof(*s->locs));
    struct prof_location *l = &s->locs[s->nlocs++];
    *l = *loc;
    l->frames = xcalloc(loc->nframes ? loc->nframes : 1, sizeof(*l->frames));
    for (uint32_t f = 0; f < loc->nframes; f++) {
        const struct prof_sym_frame *from = &loc->frames[f];
#define DUP(x) ((x) ? xstrdup(x) : NULL)
        l->frames[f] = (struct prof_sym_frame){.binary = DUP(from->binary),
                                               .path = DUP(from->path),
                                               .function = DUP(from->function),
                                               .mangled = DUP(from->mangled),
                                               .file = DUP(from->file),
                                               .line = from->line,
                                               .inlined = from->inlined};
#undef DUP
    }
}

void output_state_note_thread(struct output_state *s, uint32_t pid, uint32_t tid, uint64_t time_ns,
                              const char *name)
{
    for (size_t i = 0; i < s->nthreads; i++) {
        if (s->threads[i].tid == tid) { /* renamed (or reused) */
            free(s->threads[i].name);
            s->threads[i] = (struct live_thread){pid, tid, time_ns, xstrdup(name ? name : "")};
            return;
        }
    }
    s->threads = xgrow(s->threads, &s->threads_cap, s->nthreads + 1, sizeof(*s->threads));
    s->threads[s->nthreads++] = (struct live_thread){pid, tid, time_ns, xstrdup(name ? name : "")};
}

void output_state_note_thread_exit(struct output_state *s, uint32_t tid)
{
    for (size_t i = 0; i < s->nthreads; i++) {
        if (s->threads[i].tid == tid) {
            free(s->threads[i].name);
            s->threads[i] = s->threads[--s->nthreads];
            return;
        }
    }
}

void output_state_note_map(struct output_state *s, const struct prof_map *m)
{
    s->maps = xgrow(s->maps, &s->maps_cap, s->nmaps + 1, sizeof(*s->maps));
    struct prof_map *c = &s->maps[s->nmaps++];
    *c = *m;
    c->path = m->path ? xstrdup(m->path) : NULL;
}

void output_state_note_unmap(struct output_state *s, uint32_t pid, uint64_t start, uint64_t end)
{
    for (size_t i = 0; i < s->nmaps;) {
        struct prof_map *m = &s->maps[i];
        if (m->pid != pid || m->end <= start || m->start >= end) {
            i++;
            continue;
        }
        if (m->start >= start && m->end <= end) { /* all of it */
            free_map(m);
            *m = s->maps[--s->nmaps];
            continue;
        }
        if (m->start < start && m->end > end) { /* a hole: two maps remain */
            struct prof_map after = *m;
            after.path = m->path ? xstrdup(m->path) : NULL;
            after.offset += end - m->start;
            after.start = end;
            m->end = start;
            s->maps = xgrow(s->maps, &s->maps_cap, s->nmaps + 1, sizeof(*s->maps));
            s->maps[s->nmaps++] = after;
            i++;
            continue;
        }
        if (m->start < start) { /* its end */
            m->end = start;
        } else { /* its beginning */
            m->offset += end - m->start;
            m->start = end;
        }
        i++;
    }
}

void output_state_note_image(struct output_state *s, uint32_t pid, uint64_t start, const char *name,
                             const void *data, size_t size)
{
    const char *n = name ? name : "";
    struct image *im = NULL;
    for (size_t i = 0; i < s->nimages && !im; i++) /* a newer image of the same replaces it */
        if (s->images[i].pid == pid && s->images[i].start == start &&
            strcmp(s->images[i].name, n) == 0)
            im = &s->images[i];
    if (im) {
        free_image(im);
    } else {
        s->images = xgrow(s->images, &s->images_cap, s->nimages + 1, sizeof(*s->images));
        im = &s->images[s->nimages++];
    }
    im->pid = pid;
    im->start = start;
    im->name = xstrdup(n);
    im->data = xmalloc(size ? size : 1);
    memcpy(im->data, data, size);
    im->size = size;
}

static void index_stack(struct output_state *s, uint32_t id)
{
    size_t mask = s->nslots - 1, i = (size_t)s->stacks[id - 1].hash & mask;
    while (s->slots[i])
        i = (i + 1) & mask;
    s->slots[i] = id;
}

uint32_t output_state_stack(struct output_state *s, const uint64_t *pcs, uint32_t depth)
{
    uint64_t h = hash_u64s(pcs, depth);
    if (s->nslots) {
        size_t mask = s->nslots - 1;
        for (size_t i = (size_t)h & mask; s->slots[i]; i = (i + 1) & mask) {
            const struct stack_entry *e = &s->stacks[s->slots[i] - 1];
            if (e->hash == h && e->depth == depth &&
                memcmp(s->pcs + e->offset, pcs, depth * sizeof(*pcs)) == 0)
                return s->slots[i];
        }
    }
    s->stacks = xgrow(s->stacks, &s->stacks_cap, s->nstacks + 1, sizeof(*s->stacks));
    s->pcs = xgrow(s->pcs, &s->pcs_cap, s->npcs + depth, sizeof(*s->pcs));
    memcpy(s->pcs + s->npcs, pcs, depth * sizeof(*pcs));
    s->stacks[s->nstacks++] = (struct stack_entry){h, s->npcs, depth};
    s->npcs += depth;
    uint32_t id = (uint32_t)s->nstacks;
    if ((s->nstacks + 1) * 2 > s->nslots) { /* grow and re-index */
        free(s->slots);
        s->nslots = s->nslots ? s->nslots * 2 : 1024;
        s->slots = xcalloc(s->nslots, sizeof(*s->slots));
        for (uint32_t k = 1; k <= s->nstacks; k++)
            index_stack(s, k);
    } else {
        index_stack(s, id);
    }
    return id;
}

const uint64_t *output_state_stack_pcs(const struct output_state *s, uint32_t id, uint32_t *depth)
{
    if (id == 0 || id > s->nstacks)
        return NULL;
    *depth = s->stacks[id - 1].depth;
    return s->pcs + s->stacks[id - 1].offset;
}

int output_state_replay(const struct output_state *s, struct output *to)
{
    for (size_t i = 0; i < s->nmeta; i++)
        output_meta(to, s->meta[i].key, s->meta[i].value);
    if (s->ntypes && output_value_types(to, s->types, s->ntypes) != 0)
        return -1;
    for (size_t i = 0; i < s->nprocs; i++) {
        const struct live_process *p = &s->procs[i];
        output_process(to, p->pid, p->ppid, p->start_ns);
        if (p->exe)
            output_exec(to, p->pid, p->exec_ns, p->exe);
    }
    for (size_t i = 0; i < s->nthreads; i++)
        output_thread(to, s->threads[i].pid, s->threads[i].tid, s->threads[i].start_ns,
                      s->threads[i].name);
    for (size_t i = 0; i < s->nmaps; i++)
        output_map(to, &s->maps[i]);
    for (size_t i = 0; i < s->nimages; i++)
        output_image(to, s->images[i].pid, s->images[i].start, s->images[i].name, s->images[i].data,
                     s->images[i].size);
    for (size_t i = 0; i < s->nlocs; i++)
        output_location(to, &s->locs[i]);
    return 0;
}
