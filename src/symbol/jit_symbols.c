/* jit_symbols.c - see jit_symbols.h */
#include "symbol/jit_symbols.h"
#include "model/profile.h"
#include "util/xalloc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* How far a lookup looks back past pieces that start below an address
 * but end before it, for one that still covers it. */
#define OVERLAP_WALK 64

struct jit_piece {
    uint32_t pid;
    uint64_t start, end;
    uint64_t order; /* publication order: the later wins */
    char *name;
};

struct jit_symbols {
    struct jit_piece *pieces; /* by pid, then start, then order */
    size_t count;
};

static int piece_cmp(const void *a, const void *b)
{
    const struct jit_piece *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->order < y->order ? -1 : x->order > y->order;
}

static void parse(struct jit_symbols *j, size_t *cap, const struct prof_image *img)
{
    const char *p = (const char *)img->data, *end = p + img->size;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        char buf[64];
        size_t head =
            (size_t)(line_end - p) < sizeof(buf) - 1 ? (size_t)(line_end - p) : sizeof(buf) - 1;
        memcpy(buf, p, head);
        buf[head] = '\0';
        char *e1 = buf, *e2 = buf;
        errno = 0;
        uint64_t start = strtoull(buf, &e1, 16);
        uint64_t size = *e1 == ' ' ? strtoull(e1 + 1, &e2, 16) : 0;
        if (!errno && e1 != buf && size > 0 && *e1 == ' ' && e2 != e1 + 1 && *e2 == ' ' &&
            start + size > start) {
            const char *name = p + (e2 + 1 - buf);
            if (name < line_end) {
                j->pieces = xgrow(j->pieces, cap, j->count + 1, sizeof(*j->pieces));
                j->pieces[j->count] = (struct jit_piece){
                    .pid = img->pid,
                    .start = start,
                    .end = start + size,
                    .order = j->count,
                    .name = xasprintf("%.*s", (int)(line_end - name), name),
                };
                j->count++;
            }
        }
        p = line_end + 1;
    }
}

struct jit_symbols *jit_symbols_new(const struct profile *p)
{
    struct jit_symbols *j = xcalloc(1, sizeof(*j));
    size_t cap = 0;
    for (size_t i = 0; i < p->nimages; i++)
        if (p->images[i].name && strcmp(p->images[i].name, JIT_MAP_IMAGE) == 0 && p->images[i].data)
            parse(j, &cap, &p->images[i]);
    if (j->count)
        qsort(j->pieces, j->count, sizeof(*j->pieces), piece_cmp);
    return j;
}

const char *jit_symbols_find(const struct jit_symbols *j, uint32_t pid, uint64_t addr)
{
    /* The last piece of PID starting at or below ADDR... */
    size_t lo = 0, hi = j->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct jit_piece *m = &j->pieces[mid];
        if (m->pid < pid || (m->pid == pid && m->start <= addr))
            lo = mid + 1;
        else
            hi = mid;
    }
    /* ...and the latest of those before it that still cover ADDR. */
    const struct jit_piece *best = NULL;
    for (size_t k = lo, walked = 0; k-- > 0 && walked < OVERLAP_WALK; walked++) {
        const struct jit_piece *c = &j->pieces[k];
        if (c->pid != pid)
            break;
        if (addr < c->end && (!best || c->order > best->order))
            best = c;
    }
    return best ? best->name : NULL;
}

void jit_symbols_free(struct jit_symbols *j)
{
    if (!j)
        return;
    for (size_t i = 0; i < j->count; i++)
        free(j->pieces[i].name);
    free(j->pieces);
    free(j);
}
