/*
 * folded_names.c - see folded_names.h: synthetic PCs for named frames, the
 * locations that resolve them, and distinct stacks, for the readers of
 * folded stacks and perf script.
 */
#include "interop/folded_names.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct name_entry {
    uint32_t pid;
    uint64_t offset;
    uint64_t hash;
    uint32_t nframes;
    struct prof_sym_frame *frames; /* path is the object's path */
};

struct name_table {
    struct profile *p; /* whose arena holds the frames and names */
    /* The last object and source file named: consecutive names mostly
     * share them, so they are kept once. */
    char *last_binary, *last_path, *last_file;
    struct name_entry *entries;
    size_t count, cap;
    uint32_t *slots; /* entry index + 1, 0 = empty */
    size_t mask;
};

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v;
    h *= 0xff51afd7ed558ccdu;
    return h ^ (h >> 32);
}

static uint64_t mix_str(uint64_t h, const char *s)
{
    /* FNV-1a over the bytes, then folded in: names are short. */
    uint64_t f = 0xcbf29ce484222325u;
    for (; s && *s; s++)
        f = (f ^ (unsigned char)*s) * 0x100000001b3u;
    return mix(h, f);
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static uint64_t location_hash(uint32_t pid, uint64_t offset, const struct name_frame *f, uint32_t n)
{
    uint64_t h = mix(mix(0x9e3779b97f4a7c15u, pid), offset);
    for (uint32_t i = 0; i < n; i++) {
        h = mix_str(h, f[i].function);
        h = mix_str(h, f[i].binary);
        h = mix_str(h, f[i].path);
        h = mix_str(h, f[i].file);
        h = mix(h, (uint64_t)f[i].line << 1 | f[i].inlined);
    }
    return h;
}

static bool same_location(const struct name_entry *e, uint32_t pid, uint64_t offset,
                          const struct name_frame *f, uint32_t n)
{
    if (e->pid != pid || e->offset != offset || e->nframes != n)
        return false;
    for (uint32_t i = 0; i < n; i++) {
        const struct prof_sym_frame *g = &e->frames[i];
        if (g->line != f[i].line || g->inlined != f[i].inlined ||
            strcmp(g->function, or_empty(f[i].function)) != 0 ||
            strcmp(g->binary, or_empty(f[i].binary)) != 0 ||
            strcmp(g->path, or_empty(f[i].path)) != 0 || strcmp(g->file, or_empty(f[i].file)) != 0)
            return false;
    }
    return true;
}

struct name_table *name_table_new(struct profile *p)
{
    struct name_table *t = xcalloc(1, sizeof(struct name_table));
    t->p = p;
    return t;
}

static void name_table_grow(struct name_table *t)
{
    size_t size = t->mask ? (t->mask + 1) * 2 : 256;
    uint32_t *slots = xcalloc(size, sizeof(*slots));
    for (size_t i = 0; i < t->count; i++) {
        size_t b = (size_t)t->entries[i].hash & (size - 1);
        while (slots[b])
            b = (b + 1) & (size - 1);
        slots[b] = (uint32_t)i + 1;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = size - 1;
}

/* S (NULL: "") in the profile's arena, the copy *LAST when S equals it. */
static char *keep_last(struct name_table *t, char **last, const char *s)
{
    s = or_empty(s);
    if (!*last || strcmp(*last, s) != 0)
        *last = profile_arena_strdup(t->p, s);
    return *last;
}

uint64_t name_table_pc(struct name_table *t, uint32_t pid, uint64_t offset,
                       const struct name_frame *frames, uint32_t nframes)
{
    if ((t->count + 1) * 2 > t->mask + 1)
        name_table_grow(t);
    uint64_t h = location_hash(pid, offset, frames, nframes);
    size_t b = (size_t)h & t->mask;
    for (; t->slots[b]; b = (b + 1) & t->mask) {
        const struct name_entry *e = &t->entries[t->slots[b] - 1];
        if (e->hash == h && same_location(e, pid, offset, frames, nframes))
            return (uint64_t)t->slots[b] << 4;
    }
    t->entries = xgrow(t->entries, &t->cap, t->count + 1, sizeof(*t->entries));
    struct name_entry *e = &t->entries[t->count];
    *e = (struct name_entry){.pid = pid, .offset = offset, .hash = h, .nframes = nframes};
    e->frames = profile_arena_alloc(t->p, nframes * sizeof(*e->frames));
    for (uint32_t i = 0; i < nframes; i++) {
        /* The name is the mangled one too: one string serves both. */
        char *fn = profile_arena_strdup(t->p, or_empty(frames[i].function));
        e->frames[i] = (struct prof_sym_frame){
            .binary = keep_last(t, &t->last_binary, frames[i].binary),
            .path = keep_last(t, &t->last_path, frames[i].path),
            .function = fn,
            .mangled = fn,
            .file = keep_last(t, &t->last_file, frames[i].file),
            .line = frames[i].line,
            .inlined = frames[i].inlined,
        };
    }
    t->slots[b] = (uint32_t)++t->count;
    return (uint64_t)t->count << 4;
}

size_t name_table_count(const struct name_table *t)
{
    return t->count;
}

void name_table_locations(struct name_table *t)
{
    struct profile *p = t->p;
    size_t n = p->nlocations + 2 * t->count;
    p->locations = xrealloc(p->locations, (n ? n : 1) * sizeof(*p->locations));
    p->locations_in_arena = true;
    for (size_t i = 0; i < t->count; i++) {
        const struct name_entry *e = &t->entries[i];
        /* Both entries share the frames: they are the same names. */
        for (int ra = 0; ra <= 1; ra++)
            p->locations[p->nlocations++] = (struct prof_location){
                .pid = e->pid,
                .pc = (uint64_t)(i + 1) << 4,
                .return_address = ra,
                .offset = e->offset,
                .nframes = e->nframes,
                .frames = e->frames,
            };
    }
}

void name_table_free(struct name_table *t)
{
    if (!t)
        return;
    free(t->entries);
    free(t->slots);
    free(t);
}
