/*
 * profile.c - see profile.h: the in-memory profile's life cycle, and the
 * words a profile's channel kinds and exit statuses are described with.
 */
#include "model/profile.h"
#include "util/xalloc.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

/* Readers make one per sample, millions for a big pprof file: its weights
 * and thread values follow its thread samples rather than costing two
 * pointers, and the flags sit in what would be padding. */
_Static_assert(sizeof(struct prof_sample) == 32, "prof_sample grew");
/* And a thread sample per thread of each: 32 bytes, the syscall and flags
 * in 16 bits each. */
_Static_assert(sizeof(struct prof_thread_sample) == 32, "prof_thread_sample grew");
_Static_assert(sizeof(struct prof_thread_sample) % sizeof(uint64_t) == 0,
               "the weights after the thread samples would be misaligned");

/* Blocks of 64 KiB at first, twice the last up to 4 MiB: a small profile
 * wastes little, a big one makes few blocks. */
#define ARENA_FIRST_BLOCK ((size_t)64 << 10)
#define ARENA_MAX_BLOCK ((size_t)4 << 20)
/* Bigger requests get a block of their own, so no block is left mostly
 * unused. */
#define ARENA_OWN_BLOCK (ARENA_MAX_BLOCK / 4)

struct prof_arena_block {
    struct prof_arena_block *next;
    uint64_t data[]; /* 8-byte aligned */
};

/* A zeroed block of SIZE data bytes. */
static struct prof_arena_block *arena_block(size_t size)
{
    if (size > SIZE_MAX - sizeof(struct prof_arena_block))
        return xmalloc(SIZE_MAX); /* no such memory: dies saying so */
    return xcalloc(1, sizeof(struct prof_arena_block) + size);
}

/* A new block to fill of at least NEED bytes, the old head behind it. */
static void arena_new_head(struct prof_arena *a, size_t need)
{
    size_t size = !a->size                    ? ARENA_FIRST_BLOCK
                  : a->size < ARENA_MAX_BLOCK ? a->size * 2
                                              : ARENA_MAX_BLOCK;
    while (size < need)
        size *= 2; /* NEED <= ARENA_OWN_BLOCK: no overflow */
    struct prof_arena_block *b = arena_block(size);
    b->next = a->head;
    a->head = b;
    a->size = size;
    a->used = 0;
}

static void arena_free(struct prof_arena *a)
{
    for (struct prof_arena_block *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
}

void profile_init(struct profile *p)
{
    memset(p, 0, sizeof(*p));
}

void profile_free(struct profile *p)
{
    if (!p)
        return;
    free(p->format);
    for (size_t i = 0; i < p->nmeta; i++) {
        free(p->meta[i].key);
        free(p->meta[i].value);
    }
    free(p->meta);
    for (size_t i = 0; i < p->nchannels; i++) {
        free(p->channels[i].name);
        free(p->channels[i].unit);
    }
    free(p->channels);
    for (size_t i = 0; i < p->nvalue_types; i++) {
        free(p->value_types[i].name);
        free(p->value_types[i].unit);
    }
    free(p->value_types);
    free(p->default_metric);
    for (size_t i = 0; i < p->nprocesses; i++)
        free(p->processes[i].exe);
    free(p->processes);
    for (size_t i = 0; i < p->nthreads; i++)
        free(p->threads[i].name);
    free(p->threads);
    for (size_t i = 0; i < p->nmaps; i++)
        free(p->maps[i].path);
    free(p->maps);
    for (size_t i = 0; i < p->nimages; i++) {
        free(p->images[i].name);
        free(p->images[i].data);
    }
    free(p->images);
    for (size_t i = 0; !p->stacks_in_arena && i < p->nstacks; i++)
        free(p->stacks[i].pcs);
    free(p->stacks);
    for (size_t i = 0; i < p->nsamples; i++) {
        free(p->samples[i].values);
        profile_sample_release(&p->samples[i]);
    }
    free(p->samples);
    profile_replace_locations(p, NULL, 0);
    free(p->arcs);
    arena_free(&p->arena);
    profile_init(p);
}

void profile_sample_release(struct prof_sample *s)
{
    if (!s->in_arena)
        free(s->threads);
}

void profile_location_release(struct prof_location *loc)
{
    for (uint32_t f = 0; f < loc->nframes; f++) {
        struct prof_sym_frame *fr = &loc->frames[f];
        free(fr->binary);
        free(fr->path);
        free(fr->function);
        free(fr->mangled);
        free(fr->file);
    }
    free(loc->frames);
}

void profile_replace_locations(struct profile *p, struct prof_location *locs, size_t n)
{
    for (size_t i = 0; !p->locations_in_arena && i < p->nlocations; i++)
        profile_location_release(&p->locations[i]);
    free(p->locations);
    p->locations = locs;
    p->nlocations = n;
    p->locations_in_arena = false;
}

void *profile_arena_alloc(struct profile *p, size_t size)
{
    struct prof_arena *a = &p->arena;
    if (size > SIZE_MAX - 7)
        return xmalloc(SIZE_MAX); /* dies saying so */
    size_t need = size ? (size + 7) & ~(size_t)7 : 8;
    if (need > ARENA_OWN_BLOCK) {
        if (!a->head)
            arena_new_head(a, 0);
        /* Behind the head: the head keeps filling. */
        struct prof_arena_block *b = arena_block(need);
        b->next = a->head->next;
        a->head->next = b;
        return b->data;
    }
    if (!a->head || need > a->size - a->used)
        arena_new_head(a, need);
    void *at = (char *)a->head->data + a->used;
    a->used += need;
    return at;
}

char *profile_arena_strdup(struct profile *p, const char *s)
{
    size_t n = strlen(s);
    char *copy = profile_arena_alloc(p, n + 1); /* n + 1: n < SIZE_MAX for a string */
    memcpy(copy, s, n);
    return copy;
}

/* Bytes of the block of NTHREADS thread samples with weights and NVALUES
 * values per thread when asked (dies when that overflows). */
static size_t sample_block_size(uint32_t nthreads, bool weights, size_t nvalues)
{
    size_t per_thread = sizeof(struct prof_thread_sample) + (weights ? sizeof(uint64_t) : 0);
    if (nvalues > (SIZE_MAX - per_thread) / sizeof(uint64_t))
        return SIZE_MAX;
    per_thread += nvalues * sizeof(uint64_t);
    return nthreads > SIZE_MAX / per_thread ? SIZE_MAX : (size_t)nthreads * per_thread;
}

struct prof_thread_sample *profile_sample_alloc(struct profile *p, struct prof_sample *s,
                                                uint32_t nthreads, bool weights, bool thread_values)
{
    size_t nvalues = thread_values ? p->nvalue_types : 0;
    s->threads = profile_arena_alloc(p, sample_block_size(nthreads, weights, nvalues));
    s->nthreads = nthreads;
    s->in_arena = true;
    s->has_weights = weights;
    s->has_thread_values = thread_values;
    uint64_t *w = prof_weights(s);
    for (uint32_t j = 0; w && j < nthreads; j++)
        w[j] = 1;
    return s->threads;
}

void profile_sample_extend(struct profile *p, struct prof_sample *s, bool weights,
                           bool thread_values)
{
    weights |= s->has_weights;
    thread_values |= s->has_thread_values;
    if (weights == s->has_weights && thread_values == s->has_thread_values)
        return;
    struct prof_sample old = *s;
    profile_sample_alloc(p, s, old.nthreads, weights, thread_values);
    if (old.nthreads)
        memcpy(s->threads, old.threads, old.nthreads * sizeof(*old.threads));
    if (old.has_weights)
        memcpy(prof_weights(s), prof_weights(&old), old.nthreads * sizeof(uint64_t));
    if (old.has_thread_values)
        memcpy(prof_all_thread_values(s), prof_all_thread_values(&old),
               old.nthreads * p->nvalue_types * sizeof(uint64_t));
    profile_sample_release(&old);
}

void profile_sample_set_one(struct profile *p, struct prof_sample *s,
                            const struct prof_thread_sample *th, uint64_t weight)
{
    profile_sample_alloc(p, s, 1, weight != 1, false)[0] = *th;
    if (weight != 1)
        prof_weights(s)[0] = weight;
}

const char *profile_meta(const struct profile *p, const char *key)
{
    /* A key written twice means the later value replaces the earlier. */
    for (size_t i = p->nmeta; i-- > 0;)
        if (strcmp(p->meta[i].key, key) == 0)
            return p->meta[i].value;
    return NULL;
}

size_t profile_add_value_type(struct profile *p, const char *name, const char *unit,
                              enum prof_value_agg agg)
{
    p->value_types = xrealloc(p->value_types, (p->nvalue_types + 1) * sizeof(*p->value_types));
    p->value_types[p->nvalue_types] =
        (struct prof_value_type){xstrdup(name), xstrdup(unit ? unit : ""), agg};
    return p->nvalue_types++;
}

int profile_value_type(const struct profile *p, const char *name)
{
    for (size_t i = 0; i < p->nvalue_types; i++)
        if (strcmp(p->value_types[i].name, name) == 0)
            return (int)i;
    return -1;
}

const char *profile_value_agg_name(enum prof_value_agg agg)
{
    switch (agg) {
    case PROF_VALUE_COUNTER:
        return "counter";
    case PROF_VALUE_LEVEL:
        return "level";
    case PROF_VALUE_SUM:
    default:
        return "sum";
    }
}

uint64_t profile_truncated_stacks(const struct profile *p)
{
    uint64_t n = 0;
    for (size_t i = 0; i < p->nsamples; i++)
        for (uint32_t j = 0; j < p->samples[i].nthreads; j++)
            n += (p->samples[i].threads[j].flags & PROF_THREAD_STACK_TRUNCATED) != 0;
    return n;
}

const char *profile_kind_name(enum pmu_kind kind)
{
    switch (kind) {
    case PMU_KIND_CURRENT:
        return "current";
    case PMU_KIND_VOLTAGE:
        return "voltage";
    case PMU_KIND_POWER:
        return "power";
    case PMU_KIND_ENERGY:
        return "energy";
    case PMU_KIND_CUSTOM:
    default:
        return "custom";
    }
}

void profile_describe_status(int32_t status, char *buf, size_t len)
{
    int st = (int)status;
    if (WIFEXITED(st)) {
        snprintf(buf, len, "exit %d", WEXITSTATUS(st));
    } else if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        const char *abbrev = sigabbrev_np(sig);
        if (abbrev)
            snprintf(buf, len, "killed by SIG%s%s", abbrev, WCOREDUMP(st) ? " (core dumped)" : "");
        else
            snprintf(buf, len, "killed by signal %d%s", sig, WCOREDUMP(st) ? " (core dumped)" : "");
    } else {
        snprintf(buf, len, "status 0x%x", (unsigned)st);
    }
}
