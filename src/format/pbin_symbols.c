/*
 * pbin_symbols.c - the symbol tables of pbin.h: every address a profile's
 * samples use, resolved once with the symbolizer and copied into
 * profile.locations, which native_write_profile() writes as LOCATION
 * records.
 */
#include "format/pbin.h"
#include "symbol/symbolizer.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* --- symbol tables ------------------------------------------------------- */

/* A set of addresses to resolve, (pid, pc, return address), and of the
 * (pid, stack) pairs already walked, so each stack is walked once per
 * process however many samples use it. */
enum key_kind { KEY_LEAF, KEY_RETURN, KEY_STACK };

struct key {
    uint64_t value; /* pc, or stack id */
    uint64_t time;  /* of the first sample using it */
    uint32_t pid;
    uint32_t kind;
};

struct keyset {
    struct key *keys;
    size_t n, cap;
    uint32_t *slots; /* index + 1, 0 = empty; a power of two, at most half full */
    size_t nslots;
};

static uint64_t key_hash(uint32_t pid, uint64_t value, uint32_t kind)
{
    uint64_t h = value * 0x9e3779b97f4a7c15ULL;
    h ^= ((uint64_t)pid << 2 | kind) * 0xff51afd7ed558ccdULL;
    return h ^ h >> 29;
}

static void keyset_rehash(struct keyset *ks)
{
    size_t n = ks->nslots ? ks->nslots * 2 : 4096;
    free(ks->slots);
    ks->slots = xcalloc(n, sizeof(*ks->slots));
    ks->nslots = n;
    for (size_t i = 0; i < ks->n; i++) {
        const struct key *k = &ks->keys[i];
        size_t s = (size_t)key_hash(k->pid, k->value, k->kind) & (n - 1);
        while (ks->slots[s])
            s = (s + 1) & (n - 1);
        ks->slots[s] = (uint32_t)(i + 1);
    }
}

/* Add the key; false when it was already there. */
static bool keyset_add(struct keyset *ks, uint32_t pid, uint64_t value, uint32_t kind,
                       uint64_t time)
{
    if ((ks->n + 1) * 2 > ks->nslots)
        keyset_rehash(ks);
    size_t mask = ks->nslots - 1;
    size_t s = (size_t)key_hash(pid, value, kind) & mask;
    for (; ks->slots[s]; s = (s + 1) & mask) {
        const struct key *k = &ks->keys[ks->slots[s] - 1];
        if (k->pid == pid && k->value == value && k->kind == kind)
            return false;
    }
    ks->keys = xgrow(ks->keys, &ks->cap, ks->n + 1, sizeof(*ks->keys));
    ks->keys[ks->n++] = (struct key){value, time, pid, kind};
    ks->slots[s] = (uint32_t)ks->n;
    return true;
}

static int key_cmp(const void *a, const void *b)
{
    const struct key *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->kind < y->kind ? -1 : x->kind > y->kind;
}

static void collect_addresses(const struct profile *p, struct keyset *ks)
{
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            const struct prof_thread_sample *ts = &s->threads[t];
            keyset_add(ks, ts->pid, ts->pc, KEY_LEAF, s->time_ns);
            if (ts->stack == 0 || ts->stack >= p->nstacks ||
                !keyset_add(ks, ts->pid, ts->stack, KEY_STACK, s->time_ns))
                continue;
            /* The innermost frame is where the thread was, not a call. */
            const struct prof_stack *st = &p->stacks[ts->stack];
            for (uint32_t f = 0; f < st->depth; f++)
                keyset_add(ks, ts->pid, st->pcs[f], f ? KEY_RETURN : KEY_LEAF, s->time_ns);
        }
    }
}

static char *dup_or_empty(const char *s)
{
    return xstrdup(s ? s : "");
}

static void copy_location(struct prof_location *dst, const struct key *k,
                          const struct sym_location *src)
{
    *dst = (struct prof_location){
        .pid = k->pid,
        .pc = k->value,
        .return_address = k->kind == KEY_RETURN,
        .offset = src ? src->offset : 0,
        .nframes = src ? src->nframes : 0,
    };
    if (!dst->nframes)
        return;
    dst->frames = xcalloc(dst->nframes, sizeof(*dst->frames));
    for (uint32_t f = 0; f < dst->nframes; f++) {
        const struct sym_frame *sf = &src->frames[f];
        dst->frames[f] = (struct prof_sym_frame){
            .binary = dup_or_empty(sf->binary),
            .path = dup_or_empty(sf->path),
            .function = dup_or_empty(sf->function),
            .mangled = dup_or_empty(sf->mangled),
            .file = dup_or_empty(sf->file),
            .line = sf->line,
            .inlined = sf->inlined,
        };
    }
}

size_t pbin_collect_locations(const struct profile *p, struct symbolizer *s,
                              struct prof_location **out)
{
    struct keyset ks = {0};
    collect_addresses(p, &ks);
    /* Stack markers sort among the addresses; drop them first. */
    size_t n = 0;
    for (size_t i = 0; i < ks.n; i++)
        if (ks.keys[i].kind != KEY_STACK)
            ks.keys[n++] = ks.keys[i];
    if (n > 1) /* a profile without samples has no array */
        qsort(ks.keys, n, sizeof(*ks.keys), key_cmp);
    *out = n ? xcalloc(n, sizeof(**out)) : NULL;
    for (size_t i = 0; i < n; i++) {
        const struct key *k = &ks.keys[i];
        copy_location(&(*out)[i], k,
                      symbolizer_resolve(s, k->pid, k->time, k->value, k->kind == KEY_RETURN));
    }
    free(ks.keys);
    free(ks.slots);
    return n;
}

void pbin_locations_free(struct prof_location *locs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        profile_location_release(&locs[i]);
    free(locs);
}

/* Set META KEY to VALUE, replacing what the profile said before. */
static void set_meta(struct profile *p, const char *key, const char *value)
{
    bool found = false;
    for (size_t i = 0; i < p->nmeta; i++) {
        if (strcmp(p->meta[i].key, key) == 0) {
            free(p->meta[i].value);
            p->meta[i].value = xstrdup(value);
            found = true;
        }
    }
    if (found)
        return;
    p->meta = xrealloc(p->meta, (p->nmeta + 1) * sizeof(*p->meta));
    p->meta[p->nmeta++] = (struct prof_meta){xstrdup(key), xstrdup(value)};
}

int pbin_symbolize(struct profile *p, const struct symbolizer_options *opts)
{
    struct symbolizer *s = symbolizer_new(p, opts);
    if (!s)
        return -1;
    symbolizer_prepare(s);
    struct prof_location *locs;
    size_t n = pbin_collect_locations(p, s, &locs);
    symbolizer_free(s);
    profile_replace_locations(p, locs, n);
    set_meta(p, "symbolized", "1");
    return 0;
}
