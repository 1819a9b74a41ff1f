/* profile_query.c - see profile_query.h. */
#include "profile_query.h"

#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/spawn.h"
#include "symbol/elf_symtab.h"

/* One ELF file (KEY is its path) or captured image (KEY "image:PID:START"),
 * opened at most once; OK false when it could not be read. */
struct pq_binary {
    char *key;
    bool ok;
    struct elf_symtab tab;
};

static void *must(void *ptr)
{
    if (!ptr)
        cr_assert_fail("out of memory in profile_query");
    return ptr;
}

void pq_init(struct profile_query *q, const struct profile *prof)
{
    memset(q, 0, sizeof(*q));
    q->prof = prof;
}

void pq_free(struct profile_query *q)
{
    for (size_t i = 0; i < q->nbins; i++) {
        free(q->bins[i].key);
        if (q->bins[i].ok)
            elf_symtab_free(&q->bins[i].tab);
    }
    free(q->bins);
    if (q->tmpdir) {
        test_rmtree(q->tmpdir);
        free(q->tmpdir);
    }
    memset(q, 0, sizeof(*q));
}

const struct prof_process *pq_process(const struct profile *p, uint32_t pid)
{
    for (size_t i = 0; i < p->nprocesses; i++) {
        if (p->processes[i].pid == pid)
            return &p->processes[i];
    }
    return NULL;
}

const struct prof_thread *pq_thread(const struct profile *p, uint32_t tid)
{
    const struct prof_thread *found = NULL;
    for (size_t i = 0; i < p->nthreads; i++) {
        if (p->threads[i].tid == tid)
            found = &p->threads[i];
    }
    return found;
}

uint32_t pq_first_pid(const struct profile *p)
{
    const char *pid = profile_meta(p, "pid");
    return pid ? (uint32_t)strtoul(pid, NULL, 10) : 0;
}

const struct prof_map *pq_map_at(const struct profile *p, uint32_t pid, uint64_t pc,
                                 uint64_t time_ns)
{
    const struct prof_map *best = NULL;
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        if (m->pid != pid || pc < m->start || pc >= m->end || m->time_ns > time_ns)
            continue;
        if (m->unmap_ns != 0 && m->unmap_ns <= time_ns)
            continue;
        /* Should two claim the range, the newer one holds. */
        if (!best || m->time_ns >= best->time_ns)
            best = m;
    }
    return best;
}

const struct prof_map *pq_map_ever(const struct profile *p, uint32_t pid, uint64_t pc)
{
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        if (m->pid == pid && pc >= m->start && pc < m->end)
            return m;
    }
    return NULL;
}

const struct prof_image *pq_image(const struct profile *p, uint32_t pid, const char *name)
{
    for (size_t i = 0; i < p->nimages; i++) {
        const struct prof_image *im = &p->images[i];
        if (im->pid == pid && im->name && strcmp(im->name, name) == 0)
            return im;
    }
    return NULL;
}

const char *pq_basename(const char *path)
{
    if (!path)
        return "";
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* Write an image out so that libelf and elf_symtab can read it as a file. */
static char *image_file(struct profile_query *q, const struct prof_image *im)
{
    if (!q->tmpdir)
        q->tmpdir = test_mkdtemp();
    char *path = NULL;
    if (asprintf(&path, "%s/image-%" PRIu32 "-%" PRIx64, q->tmpdir, im->pid, im->start) < 0)
        return NULL;
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(im->data, 1, im->size, f) == im->size;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok) {
        free(path);
        return NULL;
    }
    return path;
}

/* The image captured for a map without a file: same process, same start. */
static const struct prof_image *image_for(const struct profile *p, const struct prof_map *m)
{
    for (size_t i = 0; i < p->nimages; i++) {
        const struct prof_image *im = &p->images[i];
        if (im->pid == m->pid && im->start == m->start)
            return im;
    }
    return NULL;
}

static struct pq_binary *binary_for(struct profile_query *q, const struct prof_map *m)
{
    char key[4200];
    const struct prof_image *im = NULL;
    if (m->path && m->path[0] == '/') {
        snprintf(key, sizeof(key), "%s", m->path);
    } else {
        im = image_for(q->prof, m);
        if (!im)
            return NULL;
        snprintf(key, sizeof(key), "image:%" PRIu32 ":%" PRIx64, im->pid, im->start);
    }
    for (size_t i = 0; i < q->nbins; i++) {
        if (strcmp(q->bins[i].key, key) == 0)
            return q->bins[i].ok ? &q->bins[i] : NULL;
    }
    q->bins = must(realloc(q->bins, (q->nbins + 1) * sizeof(*q->bins)));
    struct pq_binary *b = &q->bins[q->nbins++];
    memset(b, 0, sizeof(*b));
    b->key = must(strdup(key));
    char *path = im ? image_file(q, im) : must(strdup(m->path));
    if (path && elf_symtab_load(path, &b->tab) == 0)
        b->ok = true;
    free(path);
    return b->ok ? b : NULL;
}

const char *pq_function_in(struct profile_query *q, const struct prof_map *map, uint64_t addr)
{
    if (!map || addr < map->start || addr >= map->end)
        return NULL;
    struct pq_binary *b = binary_for(q, map);
    if (!b)
        return NULL;
    uint64_t vaddr;
    if (elf_symtab_vaddr(&b->tab, addr - map->start + map->offset, &vaddr) != 0)
        return NULL;
    const struct elf_symbol *sym = elf_symtab_lookup(&b->tab, vaddr);
    return sym ? sym->name : NULL;
}

const char *pq_function(struct profile_query *q, uint32_t pid, uint64_t pc, uint64_t time_ns)
{
    return pq_function_in(q, pq_map_at(q->prof, pid, pc, time_ns), pc);
}

size_t pq_frames(struct profile_query *q, const struct prof_sample *s,
                 const struct prof_thread_sample *ts, struct pq_frame *out, size_t max)
{
    const struct profile *p = q->prof;
    const uint64_t *pcs = &ts->pc;
    size_t depth = 1;
    if (ts->stack != 0 && ts->stack < p->nstacks && p->stacks[ts->stack].depth > 0) {
        pcs = p->stacks[ts->stack].pcs;
        depth = p->stacks[ts->stack].depth;
    }
    size_t n = depth < max ? depth : max;
    for (size_t i = 0; i < n; i++) {
        /* A return address may already point past its call's function. */
        uint64_t lookup = i == 0 || pcs[i] == 0 ? pcs[i] : pcs[i] - 1;
        const struct prof_map *m = pq_map_at(p, ts->pid, lookup, s->time_ns);
        const char *name = pq_function_in(q, m, lookup);
        out[i] = (struct pq_frame){.pc = pcs[i], .map = m, .name = name ? name : "?"};
    }
    return n;
}

int pq_find_frame(const struct pq_frame *frames, size_t n, size_t from, const char *name)
{
    for (size_t i = from; i < n; i++) {
        if (strcmp(frames[i].name, name) == 0)
            return (int)i;
    }
    return -1;
}

const char *pq_describe(const struct pq_frame *frames, size_t n, char *buf, size_t size)
{
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        int w;
        if (strcmp(frames[i].name, "?") == 0)
            w = snprintf(buf + used, size - used, "%s%#" PRIx64 "(%s)", i ? " <- " : "",
                         frames[i].pc, frames[i].map ? pq_basename(frames[i].map->path) : "no map");
        else
            w = snprintf(buf + used, size - used, "%s%s", i ? " <- " : "", frames[i].name);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    return buf;
}

uint64_t pq_cpu_delta(struct pq_cpu_deltas *d, const struct prof_thread_sample *ts)
{
    size_t k = 0;
    while (k < d->count && d->tids[k] != ts->tid)
        k++;
    if (k == d->count) {
        if (d->count == d->cap) {
            d->cap = d->cap ? 2 * d->cap : 64;
            d->tids = realloc(d->tids, d->cap * sizeof(*d->tids));
            d->last = realloc(d->last, d->cap * sizeof(*d->last));
            cr_assert(d->tids && d->last, "out of memory for %zu threads", d->cap);
        }
        d->tids[d->count] = ts->tid;
        d->last[d->count++] = ts->cpu_ns;
        return 0;
    }
    uint64_t delta = ts->cpu_ns > d->last[k] ? ts->cpu_ns - d->last[k] : 0;
    d->last[k] = ts->cpu_ns;
    return delta;
}

void pq_cpu_free(struct pq_cpu_deltas *d)
{
    free(d->tids);
    free(d->last);
    memset(d, 0, sizeof(*d));
}
