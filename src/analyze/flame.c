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
 * none), and for every baseline node the node of T (*INV).  Nodes are
 * created after their parents, so one pass in id order sees each parent
 * matched before its children. */
static uint32_t *match_baseline(const struct calltree *t, const struct calltree *b, uint32_t **inv)
{
    struct edge_index ix;
    index_build(&ix, b);
    uint32_t *map = xmalloc(t->nnodes * sizeof(*map));
    *inv = xmalloc(b->nnodes * sizeof(**inv));
    for (uint32_t n = 0; n < b->nnodes; n++)
        (*inv)[n] = CALLTREE_NONE;
    map[0] = 0;
    (*inv)[0] = 0;
    for (uint32_t n = 1; n < t->nnodes; n++) {
        uint32_t p = map[t->nodes[n].parent];
        map[n] = p == CALLTREE_NONE ? CALLTREE_NONE : index_find(&ix, p, t->nodes[n].key);
        if (map[n] != CALLTREE_NONE)
            (*inv)[map[n]] = n;
    }
    free(ix.slots);
    return map;
}

static double positive(double v)
{
    return v > 0 ? v : 0;
}

/* Per node of T, the baseline's time on paths under it that T lacks, in
 * T's units (SCALE: T's total over the baseline's): what widens the node
 * so its removed children fit.  Counted at the outermost missing node. */
static double *removed_below(const struct calltree *t, const struct calltree *b,
                             const uint32_t *inv, const struct metric *q, double scale)
{
    double *r = xcalloc(t->nnodes, sizeof(*r));
    for (uint32_t n = 1; n < b->nnodes; n++) {
        uint32_t parent = inv[b->nodes[n].parent];
        if (inv[n] == CALLTREE_NONE && parent != CALLTREE_NONE)
            r[parent] += scale * positive(node_value(b, n, q));
    }
    for (uint32_t n = (uint32_t)t->nnodes; n-- > 1;)
        r[t->nodes[n].parent] += r[n];
    return r;
}

/* A frame whose children are still to be placed: first CHILD and its
 * siblings (nodes of T), then BCHILD and its siblings (nodes of the
 * baseline, those T lacks). */
struct pending {
    uint32_t frame;
    uint32_t child, bchild;
    double x; /* where the next child starts */
};

struct layout {
    struct flame *f;
    size_t cap;
    double min_width;
};

/* Append a frame under PARENT at depth DEPTH; false when it is too narrow
 * (left out, with everything under it). */
static bool place(struct layout *l, const struct flame_frame *fr)
{
    struct flame *f = l->f;
    if (!(fr->width > 0) || fr->width < l->min_width) {
        f->pruned++;
        f->pruned_value += positive(fr->width);
        return false;
    }
    f->frames = xgrow(f->frames, &l->cap, f->nframes + 1, sizeof(*f->frames));
    f->frames[f->nframes++] = *fr;
    if (fr->depth > f->max_depth)
        f->max_depth = fr->depth;
    return true;
}

int flame_build(struct flame *f, const struct calltree *t, const struct metric *m,
                double min_fraction, const struct calltree *baseline)
{
    memset(f, 0, sizeof(*f));
    const struct metric *q = m;
    f->total = node_value(t, 0, q);
    if (!(f->total > 0))
        return -1;
    uint32_t *map = NULL, *inv = NULL;
    double *removed = NULL, base_total = 0, scale = 0;
    /* The baseline's value columns are its own: the same metric by name
     * (BQ NULL: the baseline lacks that value, 0 in it). */
    struct metric bm = *m;
    const struct metric *bq = &bm;
    if (baseline && m->kind >= METRIC_BUILTINS &&
        metric_resolve(m->name, &baseline->columns, &bm) != 0)
        bq = NULL;
    if (baseline) {
        f->has_base = true;
        map = match_baseline(t, baseline, &inv);
        base_total = node_value(baseline, 0, bq);
        scale = base_total > 0 ? f->total / base_total : 0;
        removed = removed_below(t, baseline, inv, bq, scale);
        f->removed = removed[0];
        f->gone_share = f->removed / f->total;
    }
    f->span = f->total + f->removed;
    struct layout l = {.f = f, .min_width = min_fraction * f->span};
    size_t scap = 0, depth = 0;
    struct pending *stack = NULL;

    struct flame_frame root = {.node = 0,
                               .parent = UINT32_MAX,
                               .width = f->span,
                               .value = f->total,
                               .share = 1,
                               .base_share = base_total > 0 ? 1 : 0,
                               .in_base = baseline != NULL};
    place(&l, &root);
    stack = xgrow(stack, &scap, 1, sizeof(*stack));
    stack[depth++] = (struct pending){0, t->nodes[0].first_child,
                                      baseline ? baseline->nodes[0].first_child : CALLTREE_NONE, 0};
    while (depth > 0) {
        struct pending *top = &stack[depth - 1];
        struct flame_frame fr = {.parent = top->frame, .depth = (uint32_t)depth, .start = top->x};
        uint32_t first_child = CALLTREE_NONE, first_bchild = CALLTREE_NONE;
        if (top->child != CALLTREE_NONE) {
            uint32_t c = top->child;
            top->child = t->nodes[c].next_sibling;
            fr.node = c;
            fr.value = positive(node_value(t, c, q));
            fr.width = fr.value + (removed ? removed[c] : 0);
            fr.share = fr.value / f->total;
            first_child = t->nodes[c].first_child;
            if (map && map[c] != CALLTREE_NONE) {
                fr.in_base = true;
                fr.base_share = base_total > 0 ? node_value(baseline, map[c], bq) / base_total : 0;
                first_bchild = baseline->nodes[map[c]].first_child;
            }
        } else if (top->bchild != CALLTREE_NONE) {
            uint32_t b = top->bchild;
            top->bchild = baseline->nodes[b].next_sibling;
            if (inv[b] != CALLTREE_NONE)
                continue; /* T has it: placed among T's children */
            fr.node = b;
            fr.removed = fr.in_base = true;
            fr.width = scale * positive(node_value(baseline, b, bq));
            fr.base_share = base_total > 0 ? node_value(baseline, b, bq) / base_total : 0;
            first_bchild = baseline->nodes[b].first_child;
        } else {
            depth--;
            continue;
        }
        top->x += fr.width;
        if (!place(&l, &fr))
            continue;
        stack = xgrow(stack, &scap, depth + 1, sizeof(*stack));
        stack[depth++] =
            (struct pending){(uint32_t)f->nframes - 1, first_child, first_bchild, fr.start};
    }
    free(stack);
    free(map);
    free(inv);
    free(removed);
    return 0;
}

void flame_free(struct flame *f)
{
    free(f->frames);
    memset(f, 0, sizeof(*f));
}
