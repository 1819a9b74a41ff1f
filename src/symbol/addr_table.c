/* addr_table.c - see addr_table.h */
#include "symbol/addr_table.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct addr_slot {
    uint64_t a, b, value;
    bool used;
};

static size_t slot_of(uint64_t a, uint64_t b, size_t nslots)
{
    /* Addresses share their low and high bits a lot: mix them all in. */
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xc2b2ae3d27d4eb4full;
    h ^= h >> 29;
    return (size_t)h & (nslots - 1);
}

static void grow(struct addr_table *t)
{
    size_t n = t->nslots ? 2 * t->nslots : 64;
    struct addr_slot *slots = xcalloc(n, sizeof(*slots));
    for (size_t i = 0; i < t->nslots; i++) {
        const struct addr_slot *s = &t->slots[i];
        if (!s->used)
            continue;
        size_t j = slot_of(s->a, s->b, n);
        while (slots[j].used)
            j = (j + 1) & (n - 1);
        slots[j] = *s;
    }
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
}

bool addr_table_get(const struct addr_table *t, uint64_t a, uint64_t b, uint64_t *value)
{
    if (t->count == 0)
        return false;
    for (size_t j = slot_of(a, b, t->nslots); t->slots[j].used; j = (j + 1) & (t->nslots - 1)) {
        if (t->slots[j].a == a && t->slots[j].b == b) {
            *value = t->slots[j].value;
            return true;
        }
    }
    return false;
}

void addr_table_put(struct addr_table *t, uint64_t a, uint64_t b, uint64_t value)
{
    if (2 * (t->count + 1) > t->nslots)
        grow(t);
    size_t j = slot_of(a, b, t->nslots);
    for (; t->slots[j].used; j = (j + 1) & (t->nslots - 1)) {
        if (t->slots[j].a == a && t->slots[j].b == b) {
            t->slots[j].value = value;
            return;
        }
    }
    t->slots[j] = (struct addr_slot){.a = a, .b = b, .value = value, .used = true};
    t->count++;
}

void addr_table_clear(struct addr_table *t)
{
    if (t->slots)
        memset(t->slots, 0, t->nslots * sizeof(*t->slots));
    t->count = 0;
}

void addr_table_free(struct addr_table *t)
{
    free(t->slots);
    memset(t, 0, sizeof(*t));
}
