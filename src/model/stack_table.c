/* stack_table.c - see stack_table.h */
#include "model/stack_table.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct stack_table {
    uint32_t *ids; /* stack ids, 0 = empty bucket (open addressing) */
    size_t mask;
    size_t used;
    size_t stacks_cap; /* of P->stacks */
    bool started;
};

struct stack_table *stack_table_new(void)
{
    return xcalloc(1, sizeof(struct stack_table));
}

static void grow(struct stack_table *t, const struct profile *p)
{
    size_t size = t->mask ? (t->mask + 1) * 2 : 1024;
    uint32_t *ids = xcalloc(size, sizeof(*ids));
    for (size_t i = 0; t->mask && i <= t->mask; i++) {
        uint32_t id = t->ids[i];
        if (!id)
            continue;
        size_t b = (size_t)hash_u64s(p->stacks[id].pcs, p->stacks[id].depth) & (size - 1);
        while (ids[b])
            b = (b + 1) & (size - 1);
        ids[b] = id;
    }
    free(t->ids);
    t->ids = ids;
    t->mask = size - 1;
}

uint32_t stack_table_id(struct stack_table *t, struct profile *p, const uint64_t *pcs,
                        uint32_t depth)
{
    if (depth == 0)
        return 0;
    if (!t->started) {
        t->stacks_cap = p->nstacks; /* what the reader allocated: no more is assumed */
        t->started = true;
        /* Every stack P gains comes through here: their PCs can all be in
         * the arena (a malloc each cost 16 bytes more a stack). */
        p->stacks_in_arena = true;
    }
    if ((t->used + 1) * 2 > t->mask + 1)
        grow(t, p);
    size_t b = (size_t)hash_u64s(pcs, depth) & t->mask;
    for (; t->ids[b]; b = (b + 1) & t->mask) {
        const struct prof_stack *s = &p->stacks[t->ids[b]];
        if (s->depth == depth && memcmp(s->pcs, pcs, depth * sizeof(*pcs)) == 0)
            return t->ids[b];
    }
    p->stacks = xgrow(p->stacks, &t->stacks_cap, p->nstacks + 1, sizeof(*p->stacks));
    uint64_t *copy = profile_arena_alloc(p, depth * sizeof(*copy));
    memcpy(copy, pcs, depth * sizeof(*copy));
    p->stacks[p->nstacks] = (struct prof_stack){.depth = depth, .pcs = copy};
    uint32_t id = (uint32_t)p->nstacks++;
    t->ids[b] = id;
    t->used++;
    return id;
}

void stack_table_free(struct stack_table *t)
{
    if (!t)
        return;
    free(t->ids);
    free(t);
}
