/* tid_index.c - see tid_index.h */
#include "record/tid_index.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

static size_t home_of(const struct tid_index *x, pid_t tid)
{
    return (size_t)(((uint32_t)tid * 2654435769u) & (uint32_t)(x->size - 1));
}

/* The slot holding TID, or the empty slot where it would go. */
static size_t slot_of(const struct tid_index *x, pid_t tid)
{
    size_t s = home_of(x, tid);
    while (x->slots[s].pos >= 0 && x->slots[s].tid != tid)
        s = (s + 1) & (x->size - 1);
    return s;
}

/* Re-insert every entry but *SKIP's (NULL: none) into SIZE slots. */
static void rebuild(struct tid_index *x, size_t size, const pid_t *skip)
{
    struct tid_slot *old = x->slots;
    size_t old_size = x->size;
    x->slots = xmalloc(size * sizeof(*x->slots));
    for (size_t i = 0; i < size; i++)
        x->slots[i].pos = -1;
    x->size = size;
    x->count = 0;
    for (size_t i = 0; i < old_size; i++)
        if (old[i].pos >= 0 && !(skip && old[i].tid == *skip)) {
            x->slots[slot_of(x, old[i].tid)] = old[i];
            x->count++;
        }
    free(old);
}

void tid_index_init(struct tid_index *x)
{
    memset(x, 0, sizeof(*x));
    rebuild(x, 64, NULL);
}

void tid_index_free(struct tid_index *x)
{
    free(x->slots);
    memset(x, 0, sizeof(*x));
}

int32_t tid_index_find(const struct tid_index *x, pid_t tid)
{
    return x->slots[slot_of(x, tid)].pos;
}

void tid_index_put(struct tid_index *x, pid_t tid, size_t pos)
{
    size_t s = slot_of(x, tid);
    if (x->slots[s].pos < 0) {
        if ((x->count + 1) * 2 > x->size) {
            rebuild(x, x->size * 2, NULL);
            s = slot_of(x, tid);
        }
        x->count++;
    }
    x->slots[s] = (struct tid_slot){.tid = tid, .pos = (int32_t)pos};
}

void tid_index_remove(struct tid_index *x, pid_t tid)
{
    if (tid_index_find(x, tid) >= 0)
        rebuild(x, x->size, &tid);
}
