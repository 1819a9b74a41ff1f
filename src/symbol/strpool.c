/* strpool.c - see strpool.h */
#include "symbol/strpool.h"
#include "util/xalloc.h"

#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BLOCK_SIZE (64 * 1024)

struct block {
    struct block *next;
    size_t used, size;
    alignas(max_align_t) unsigned char data[];
};

struct slot {
    const char *s; /* NULL: empty */
    size_t len;
    uint64_t hash;
};

struct strpool {
    struct block *blocks;
    struct slot *slots;
    size_t nslots, count;
};

struct strpool *strpool_new(void)
{
    return xcalloc(1, sizeof(struct strpool));
}

void *strpool_alloc(struct strpool *pool, size_t size)
{
    const size_t align = alignof(max_align_t);
    size = (size + align - 1) & ~(align - 1);
    struct block *b = pool->blocks;
    if (!b || b->size - b->used < size) {
        /* A large request gets a block of its own, so the current block
         * keeps serving small ones. */
        size_t bytes = size > BLOCK_SIZE / 4 ? size : BLOCK_SIZE;
        struct block *nb = xmalloc(sizeof(*nb) + bytes);
        nb->used = 0;
        nb->size = bytes;
        if (b && bytes != BLOCK_SIZE) {
            nb->next = b->next;
            b->next = nb;
        } else {
            nb->next = b;
            pool->blocks = nb;
        }
        b = nb;
    }
    void *p = b->data + b->used;
    b->used += size;
    memset(p, 0, size);
    return p;
}

/* S[0..LEN) and a terminator in the pool's memory. */
static char *copy_len(struct strpool *pool, const char *s, size_t len)
{
    char *copy = strpool_alloc(pool, len + 1); /* zeroed: the terminator is there */
    memcpy(copy, s, len);
    return copy;
}

const char *strpool_copy(struct strpool *pool, const char *s)
{
    return copy_len(pool, s, strlen(s));
}

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    return h;
}

static void grow(struct strpool *pool)
{
    size_t n = pool->nslots ? 2 * pool->nslots : 256;
    struct slot *slots = xcalloc(n, sizeof(*slots));
    for (size_t i = 0; i < pool->nslots; i++) {
        if (!pool->slots[i].s)
            continue;
        size_t j = (size_t)pool->slots[i].hash & (n - 1);
        while (slots[j].s)
            j = (j + 1) & (n - 1);
        slots[j] = pool->slots[i];
    }
    free(pool->slots);
    pool->slots = slots;
    pool->nslots = n;
}

const char *strpool_intern_len(struct strpool *pool, const char *s, size_t len)
{
    if (2 * (pool->count + 1) > pool->nslots)
        grow(pool);
    uint64_t h = hash_bytes(s, len);
    size_t j = (size_t)h & (pool->nslots - 1);
    for (; pool->slots[j].s; j = (j + 1) & (pool->nslots - 1)) {
        const struct slot *sl = &pool->slots[j];
        if (sl->hash == h && sl->len == len && memcmp(sl->s, s, len) == 0)
            return sl->s;
    }
    char *copy = copy_len(pool, s, len);
    pool->slots[j] = (struct slot){copy, len, h};
    pool->count++;
    return copy;
}

const char *strpool_intern(struct strpool *pool, const char *s)
{
    return strpool_intern_len(pool, s, strlen(s));
}

void strpool_free(struct strpool *pool)
{
    if (!pool)
        return;
    for (struct block *b = pool->blocks; b;) {
        struct block *next = b->next;
        free(b);
        b = next;
    }
    free(pool->slots);
    free(pool);
}
