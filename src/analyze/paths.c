/* paths.c - see paths.h */
#include "analyze/paths.h"
#include "model/map_index.h"
#include "symbol/syscall_names.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL_BINARY "[kernel]"
#define NO_THREAD UINT32_MAX
/* Paths cached at most: beyond, the cache starts over (a profile of as
 * many distinct stacks as samples would keep one path per sample). */
#define PATH_CACHE_MAX ((size_t)1 << 17)
/* The cache starts at this bound and doubles at each start over while its
 * paths are used again, else halves back: a profile whose every stack is
 * distinct (a pprof of tiny samples) keeps 4,096 paths, not 131,072 that
 * no sample asks for twice (about 30 MB; issue 19). */
#define PATH_CACHE_MIN ((size_t)1 << 12)

/* A path and what keeps it alive: the cache, or the holds on it. */
struct held_path {
    struct path path;
    uint32_t holds;
    bool cached;
};

struct cache_key {
    uint64_t pc;
    uint32_t pid;
    uint64_t epoch; /* map_index_epoch(): the maps it was resolved with */
    uint32_t stack;
    int32_t syscall; /* -1: not in a system call */
    uint32_t thread_no;
};

struct cache_slot {
    struct cache_key key;
    uint64_t hash;
    struct path *path; /* NULL: empty */
};

struct path_builder {
    const struct profile *p;
    struct frame_resolver resolver;
    struct key_spec spec;
    struct strtab *keys, *names;
    bool by_thread;
    struct map_index *maps;
    struct cache_slot *slots;
    size_t nslots, count;
    size_t max_paths; /* PATH_CACHE_MAX, fewer in tests */
    size_t bound;     /* paths held this round: PATH_CACHE_MIN up to max_paths */
    size_t hits;      /* paths found in the cache this round */
    uint64_t serial;  /* paths built so far (struct path.serial) */
    /* scratch */
    struct path_frame *frames;
    size_t frames_cap;
    uint32_t *unique;
    size_t unique_cap;
    char *buf;
    size_t buf_cap;
};

struct path_builder *path_builder_new(const struct profile *p, const struct frame_resolver *r,
                                      const struct key_spec *spec, struct strtab *keys,
                                      struct strtab *names)
{
    struct path_builder *b = xcalloc(1, sizeof(*b));
    b->p = p;
    b->resolver = *r;
    b->spec = *spec;
    b->keys = keys;
    b->names = names;
    b->by_thread = key_spec_has(spec, KEY_THREAD);
    b->maps = map_index_new(p);
    b->nslots = 1024;
    b->slots = xcalloc(b->nslots, sizeof(*b->slots));
    b->max_paths = PATH_CACHE_MAX;
    b->bound = PATH_CACHE_MIN;
    return b;
}

static struct held_path *held_of(const struct path *p)
{
    return (struct held_path *)(uintptr_t)p; /* its first member */
}

/* The cache lets go of its paths: those held live on until released. */
static void drop_cached(struct path_builder *b)
{
    for (size_t i = 0; i < b->nslots; i++) {
        struct held_path *h = (struct held_path *)b->slots[i].path;
        if (!h)
            continue;
        h->cached = false;
        if (h->holds == 0)
            free(h);
        b->slots[i].path = NULL;
    }
    b->count = 0;
}

void path_builder_free(struct path_builder *b)
{
    if (!b)
        return;
    drop_cached(b);
    free(b->slots);
    map_index_free(b->maps);
    free(b->frames);
    free(b->unique);
    free(b->buf);
    free(b);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t key_hash(const struct cache_key *k)
{
    uint64_t h = mix(k->pc, k->pid);
    h = mix(h, k->epoch);
    h = mix(h, k->stack);
    h = mix(h, (uint32_t)k->syscall);
    return mix(h, k->thread_no);
}

static bool key_eq(const struct cache_key *a, const struct cache_key *b)
{
    return a->pc == b->pc && a->pid == b->pid && a->epoch == b->epoch && a->stack == b->stack &&
           a->syscall == b->syscall && a->thread_no == b->thread_no;
}

static void cache_grow(struct path_builder *b)
{
    size_t n = b->nslots * 2;
    struct cache_slot *slots = xcalloc(n, sizeof(*slots));
    for (size_t i = 0; i < b->nslots; i++) {
        if (!b->slots[i].path)
            continue;
        size_t j = b->slots[i].hash & (n - 1);
        while (slots[j].path)
            j = (j + 1) & (n - 1);
        slots[j] = b->slots[i];
    }
    free(b->slots);
    b->slots = slots;
    b->nslots = n;
}

/* MERGE: the frame before is an inner frame of the same address; when
 * the keys cannot tell them apart (-k binary, -k symbol) the outer one
 * replaces it, so an inline chain is one frame, not a call to itself. */
static void add_frame(struct path_builder *b, size_t *n, const struct key_frame *kf, bool inlined,
                      bool merge)
{
    size_t len = key_compose(&b->spec, kf, &b->buf, &b->buf_cap);
    uint32_t key = strtab_intern(b->keys, b->buf, len);
    if (merge && *n > 0 && b->frames[*n - 1].key == key)
        (*n)--;
    b->frames = xgrow(b->frames, &b->frames_cap, *n + 1, sizeof(*b->frames));
    struct path_frame *f = &b->frames[(*n)++];
    f->key = key;
    f->function = strtab_intern_str(b->names, kf->function);
    f->mangled =
        kf->mangled && kf->mangled[0] ? strtab_intern_str(b->names, kf->mangled) : f->function;
    f->inlined = inlined;
}

/* False when PC is a return address into memory that holds no code: the
 * stack's remaining frames are an unwinder's misreading, not calls. */
static bool add_location(struct path_builder *b, size_t *n, uint32_t pid, uint64_t time,
                         uint64_t pc, bool return_address, const char *thread)
{
    const struct sym_location *loc =
        b->resolver.resolve(b->resolver.ctx, pid, time, pc, return_address);
    if (loc && loc->not_code && return_address)
        return false;
    char pcbuf[32];
    snprintf(pcbuf, sizeof(pcbuf), "0x%" PRIx64, loc ? loc->offset : pc);
    if (!loc || loc->nframes == 0 || !loc->frames) {
        struct key_frame kf = {.pc = pcbuf,
                               .binary = KEY_UNKNOWN,
                               .file = "",
                               .function = KEY_UNKNOWN,
                               .mangled = "",
                               .thread = thread};
        add_frame(b, n, &kf, false, false);
        return true;
    }
    const char *symbol = loc->frames[loc->nframes - 1].function;
    for (uint32_t i = 0; i < loc->nframes; i++) {
        const struct sym_frame *f = &loc->frames[i];
        struct key_frame kf = {.pc = pcbuf,
                               .binary = f->binary ? f->binary : KEY_UNKNOWN,
                               .file = f->file ? f->file : "",
                               .function = f->function ? f->function : KEY_UNKNOWN,
                               .mangled = f->mangled ? f->mangled : "",
                               .symbol = symbol ? symbol : KEY_UNKNOWN,
                               .line = f->line,
                               .thread = thread};
        add_frame(b, n, &kf, f->inlined, i > 0);
    }
    return true;
}

static int u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static struct path *build(struct path_builder *b, uint64_t time, const struct prof_thread_sample *t,
                          const struct cache_key *k, const char *thread)
{
    size_t n = 0;
    if (k->syscall >= 0) {
        const char *name = syscall_name(k->syscall);
        char fn[64];
        if (name)
            snprintf(fn, sizeof(fn), "[syscall %s]", name);
        else
            snprintf(fn, sizeof(fn), "[syscall %" PRId32 "]", k->syscall);
        struct key_frame kf = {.pc = KERNEL_BINARY,
                               .binary = KERNEL_BINARY,
                               .file = "",
                               .function = fn,
                               .mangled = "",
                               .thread = thread};
        add_frame(b, &n, &kf, false, false);
    }
    const uint64_t *pcs = &t->pc;
    uint32_t depth = 1;
    if (k->stack) {
        pcs = b->p->stacks[k->stack].pcs;
        depth = b->p->stacks[k->stack].depth;
    }
    for (uint32_t i = 0; i < depth; i++)
        if (!add_location(b, &n, t->pid, time, pcs[i], i > 0, thread))
            break;

    b->unique = xgrow(b->unique, &b->unique_cap, n, sizeof(*b->unique));
    for (size_t i = 0; i < n; i++)
        b->unique[i] = b->frames[i].key;
    qsort(b->unique, n, sizeof(*b->unique), u32_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || b->unique[u - 1] != b->unique[i])
            b->unique[u++] = b->unique[i];

    struct held_path *h =
        xmalloc(sizeof(*h) + n * sizeof(struct path_frame) + u * sizeof(uint32_t));
    struct path_frame *frames = (struct path_frame *)(h + 1);
    uint32_t *unique = (uint32_t *)(frames + n);
    memcpy(frames, b->frames, n * sizeof(*frames));
    memcpy(unique, b->unique, u * sizeof(*unique));
    h->path = (struct path){(uint32_t)n, (uint32_t)u, frames, unique, ++b->serial};
    h->holds = 0;
    h->cached = true;
    return &h->path;
}

/* The cache lets go of its paths and sets its next bound by how often
 * this round's were found again. */
static void start_over(struct path_builder *b)
{
    size_t floor = PATH_CACHE_MIN < b->max_paths ? PATH_CACHE_MIN : b->max_paths;
    size_t bound = b->bound;
    if (b->hits >= b->count)
        bound = 2 * bound < b->max_paths ? 2 * bound : b->max_paths;
    else if (4 * b->hits < b->count)
        bound = bound / 2 > floor ? bound / 2 : floor;
    drop_cached(b);
    if (bound < b->bound && b->nslots > 1024) {
        free(b->slots);
        b->nslots = 1024;
        b->slots = xcalloc(b->nslots, sizeof(*b->slots));
    }
    b->bound = bound;
    b->hits = 0;
}

const struct path *path_builder_get(struct path_builder *b, uint64_t time_ns,
                                    const struct prof_thread_sample *t, const char *thread_label,
                                    uint32_t thread_no)
{
    struct cache_key k = {
        .pid = t->pid,
        .epoch = map_index_epoch(b->maps, t->pid, time_ns),
        .syscall = (t->flags & PROF_THREAD_IN_SYSCALL) && t->syscall >= 0 ? t->syscall : -1,
        .thread_no = b->by_thread ? thread_no : NO_THREAD,
    };
    if (t->stack != 0 && t->stack < b->p->nstacks && b->p->stacks[t->stack].depth > 0)
        k.stack = t->stack;
    else
        k.pc = t->pc;
    uint64_t h = key_hash(&k);
    size_t j = h & (b->nslots - 1);
    for (; b->slots[j].path; j = (j + 1) & (b->nslots - 1))
        if (b->slots[j].hash == h && key_eq(&b->slots[j].key, &k)) {
            b->hits++;
            return b->slots[j].path;
        }
    if (b->count >= b->bound) {
        start_over(b);
        j = h & (b->nslots - 1);
    }
    struct path *path = build(b, time_ns, t, &k, thread_label);
    b->slots[j] = (struct cache_slot){k, h, path};
    if (2 * ++b->count > b->nslots)
        cache_grow(b);
    return path;
}

void path_builder_hold(const struct path *p)
{
    if (p)
        held_of(p)->holds++;
}

void path_builder_release(const struct path *p)
{
    if (!p)
        return;
    struct held_path *h = held_of(p);
    if (--h->holds == 0 && !h->cached)
        free(h);
}

void path_builder_set_max_paths(struct path_builder *b, size_t max_paths)
{
    b->max_paths = max_paths ? max_paths : 1;
    b->bound = PATH_CACHE_MIN < b->max_paths ? PATH_CACHE_MIN : b->max_paths;
}
