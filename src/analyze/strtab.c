/* strtab.c - see strtab.h */
#include "analyze/strtab.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

/* Strings live in large chunks so that their addresses never move. */
#define CHUNK_SIZE (64 * 1024)
#define EMPTY UINT32_MAX

struct chunk {
    struct chunk *next;
    size_t used, size;
    char data[];
};

struct entry {
    const char *str;
    size_t len;
};

struct slot {
    uint32_t id;
    uint32_t hash;
};

struct strtab {
    struct chunk *chunks;
    struct entry *entries;
    size_t count, cap;
    struct slot *slots;
    size_t nslots; /* a power of two, at least twice count */
};

static uint32_t hash_bytes(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

struct strtab *strtab_new(void)
{
    struct strtab *t = xcalloc(1, sizeof(*t));
    t->nslots = 64;
    t->slots = xmalloc(t->nslots * sizeof(*t->slots));
    for (size_t i = 0; i < t->nslots; i++)
        t->slots[i].id = EMPTY;
    return t;
}

void strtab_free(struct strtab *t)
{
    if (!t)
        return;
    for (struct chunk *c = t->chunks, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(t->entries);
    free(t->slots);
    free(t);
}

static char *store(struct strtab *t, const char *s, size_t len)
{
    struct chunk *c = t->chunks;
    if (!c || c->size - c->used < len + 1) {
        size_t size = len + 1 > CHUNK_SIZE ? len + 1 : CHUNK_SIZE;
        c = xmalloc(sizeof(*c) + size);
        c->size = size;
        c->used = 0;
        c->next = t->chunks;
        t->chunks = c;
    }
    char *dst = c->data + c->used;
    memcpy(dst, s, len);
    dst[len] = '\0';
    c->used += len + 1;
    return dst;
}

static void grow_slots(struct strtab *t)
{
    size_t n = t->nslots * 2;
    struct slot *slots = xmalloc(n * sizeof(*slots));
    for (size_t i = 0; i < n; i++)
        slots[i].id = EMPTY;
    for (size_t i = 0; i < t->nslots; i++) {
        if (t->slots[i].id == EMPTY)
            continue;
        size_t j = t->slots[i].hash & (n - 1);
        while (slots[j].id != EMPTY)
            j = (j + 1) & (n - 1);
        slots[j] = t->slots[i];
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
}

uint32_t strtab_intern(struct strtab *t, const char *s, size_t len)
{
    uint32_t h = hash_bytes(s, len);
    size_t j = h & (t->nslots - 1);
    for (; t->slots[j].id != EMPTY; j = (j + 1) & (t->nslots - 1)) {
        uint32_t id = t->slots[j].id;
        if (t->slots[j].hash == h && t->entries[id].len == len &&
            memcmp(t->entries[id].str, s, len) == 0)
            return id;
    }
    t->entries = xgrow(t->entries, &t->cap, t->count + 1, sizeof(*t->entries));
    uint32_t id = (uint32_t)t->count++;
    t->entries[id] = (struct entry){store(t, s, len), len};
    t->slots[j] = (struct slot){id, h};
    if (2 * t->count > t->nslots)
        grow_slots(t);
    return id;
}

uint32_t strtab_intern_str(struct strtab *t, const char *s)
{
    return strtab_intern(t, s, strlen(s));
}

const char *strtab_get(const struct strtab *t, uint32_t id)
{
    return id < t->count ? t->entries[id].str : NULL;
}

size_t strtab_count(const struct strtab *t)
{
    return t->count;
}
