/* flame.c - see flame.h: laying out a call tree as a flame graph. */
#include "analyze/flame.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

bool flame_metric_ok(const struct metric *m)
{
    return metric_additive(m);
}

const char *flame_metric_words(const struct metric *m)
{
    switch (m->kind) {
    case METRIC_CPU:
        return "CPU time";
    case METRIC_WALL:
        return "wall time";
    case METRIC_SAMPLES:
        return "samples";
    case METRIC_ENERGY:
        return "energy";
    default:
        return m->name;
    }
}

/* Node N's total of M; 0 without M (a baseline without that value). */
static double node_value(const struct calltree *t, uint32_t n, const struct metric *m)
{
    return m ? calltree_value(t, n, m, true) : 0;
}

/* The baseline's edges (parent, key) -> node, to follow a path into it. */
struct edge_index {
    struct {
        uint32_t parent, key, node;
    } * slots;
    size_t cap;
};

static size_t edge_slot(uint32_t parent, uint32_t key, size_t cap)
{
    uint64_t h = ((uint64_t)parent << 32 | key) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

static void index_build(struct edge_index *ix, const struct calltree *b)
{
    ix->cap = 16;
    while (ix->cap < 2 * b->nnodes)
        ix->cap *= 2;
    ix->slots = xmalloc(ix->cap * sizeof(*ix->slots));
    for (size_t i = 0; i < ix->cap; i++)
        ix->slots[i].node = CALLTREE_NONE;
    for (uint32_t n = 1; n < b->nnodes; n++) {
        size_t j = edge_slot(b->nodes[n].parent, b->nodes[n].key, ix->cap);
        while (ix->slots[j].node != CALLTREE_NONE)
            j = (j + 1) & (ix->cap - 1);
        ix->slots[j].parent = b->nodes[n].parent;
        ix->slots[j].key = b->nodes[n].key;
        ix->slots[j].node = n;
    }
}

static uint32_t index_find(const struct edge_index *ix, uint32_t parent, uint32_t key)
{
    for (size_t j = edge_slot(parent, key, ix->cap); ix->slots[j].node != CALLTREE_NONE;
         j = (j + 1) & (ix->cap - 1))
        if (ix->slots[j].parent == parent && ix->slots[j].key == key)
            return ix->slots[j].node;
    return CALLTREE_NONE;
}

/* For every node of T, the baseline node at the same path (CALLTREE_NONE if
 * none).  Nodes are created after their parents, so one pass in id order
 * sees each parent matched before its children. */
static uint32_t *match_baseline(const struct calltree *t, const struct calltree *b,
                                const struct metric *q, double *gone_share)
{
    struct edge_index ix;
    index_build(&ix, b);
    uint32_t *map = xmalloc(t->nnodes * sizeof(*map));
    bool *matched = xcalloc(b->nnodes, sizeof(*matched));
    map[0] = 0;
    matched[0] = true;
    for (uint32_t n = 1; n < t->nnodes; n++) {
        uint32_t p = map[t->nodes[n].parent];
        map[n] = p == CALLTREE_NONE ? CALLTREE_NONE : index_find(&ix, p, t->nodes[n].key);
        if (map[n] != CALLTREE_NONE)
            matched[map[n]] = true;
    }
    double base_total = node_value(b, 0, q), gone = 0;
    for (uint32_t n = 1; n < b->nnodes; n++)
        if (!matched[n] && matched[b->nodes[n].parent])
            gone += node_value(b, n, q);
    *gone_share = base_total > 0 ? gone / base_total : 0;
    free(matched);
    free(ix.slots);
    return map;
}

struct pending {
    uint32_t frame; /* the parent frame */
    uint32_t child; /* its next child node to place */
    double x;       /* where that child starts */
};

int flame_build(struct flame *f, const struct calltree *t, const struct metric *m,
                double min_fraction, const struct calltree *baseline)
{
    memset(f, 0, sizeof(*f));
    const struct metric *q = m;
    f->total = node_value(t, 0, q);
    if (!(f->total > 0))
        return -1;
    uint32_t *map = NULL;
    double base_total = 0;
    /* The baseline's value columns are its own: the same metric by name. */
    struct metric bm = *m;
    const struct metric *bq = &bm;
    if (baseline && m->kind >= METRIC_BUILTINS &&
        metric_resolve(m->name, &baseline->columns, &bm) != 0)
        bq = NULL;
    if (baseline) {
        f->has_base = true;
        map = match_baseline(t, baseline, bq, &f->gone_share);
        base_total = node_value(baseline, 0, bq);
    }
    double min_width = min_fraction * f->total;
    size_t cap = 0, scap = 0, depth = 0;
    struct pending *stack = NULL;

    f->frames = xgrow(f->frames, &cap, 1, sizeof(*f->frames));
    f->frames[0] = (struct flame_frame){.node = 0,
                                        .parent = UINT32_MAX,
                                        .width = f->total,
                                        .share = 1,
                                        .base_share = base_total > 0 ? 1 : 0,
                                        .in_base = baseline != NULL};
    f->nframes = 1;
    stack = xgrow(stack, &scap, 1, sizeof(*stack));
    stack[depth++] = (struct pending){0, t->nodes[0].first_child, 0};
    while (depth > 0) {
        struct pending *top = &stack[depth - 1];
        uint32_t c = top->child;
        if (c == CALLTREE_NONE) {
            depth--;
            continue;
        }
        top->child = t->nodes[c].next_sibling;
        double w = node_value(t, c, q), x = top->x;
        top->x += w > 0 ? w : 0;
        if (!(w > 0) || w < min_width) {
            f->pruned++;
            f->pruned_value += w > 0 ? w : 0;
            continue;
        }
        uint32_t parent = top->frame;
        f->frames = xgrow(f->frames, &cap, f->nframes + 1, sizeof(*f->frames));
        struct flame_frame *fr = &f->frames[f->nframes];
        *fr = (struct flame_frame){.node = c,
                                   .parent = parent,
                                   .depth = (uint32_t)depth,
                                   .start = x,
                                   .width = w,
                                   .share = w / f->total};
        if (map && map[c] != CALLTREE_NONE) {
            fr->in_base = true;
            fr->base_share = base_total > 0 ? node_value(baseline, map[c], bq) / base_total : 0;
        }
        if (fr->depth > f->max_depth)
            f->max_depth = fr->depth;
        uint32_t id = (uint32_t)f->nframes++;
        stack = xgrow(stack, &scap, depth + 1, sizeof(*stack));
        stack[depth++] = (struct pending){id, t->nodes[c].first_child, x};
    }
    free(stack);
    free(map);
    return 0;
}

void flame_free(struct flame *f)
{
    free(f->frames);
    memset(f, 0, sizeof(*f));
}
