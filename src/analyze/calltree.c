/* calltree.c - see calltree.h */
#include "analyze/calltree.h"
#include "analyze/multi.h"
#include "analyze/path_sums.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct edge {
    uint32_t parent, key;
    uint32_t node; /* CALLTREE_NONE: empty */
};

static uint64_t edge_hash(uint32_t parent, uint32_t key)
{
    uint64_t h = ((uint64_t)parent << 32 | key) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 29);
}

/* Lay the values out for N columns (a later profile brought more). */
static void restride(struct calltree *t, size_t n)
{
    size_t cap = t->cap ? t->cap : 1;
    double *v = xcalloc(cap * 2 * n, sizeof(*v));
    for (size_t i = 0; t->values && i < t->nnodes; i++)
        for (size_t c = 0; c < t->nvalues; c++) {
            v[i * 2 * n + c] = t->values[i * 2 * t->nvalues + c];
            v[i * 2 * n + n + c] = t->values[i * 2 * t->nvalues + t->nvalues + c];
        }
    free(t->values);
    t->values = v;
    t->values_cap = cap;
    t->nvalues = n;
}

static uint32_t new_node(struct calltree *t, uint32_t parent, uint32_t key)
{
    t->nodes = xgrow(t->nodes, &t->cap, t->nnodes + 1, sizeof(*t->nodes));
    if (t->nvalues && t->values_cap < t->cap) {
        size_t stride = 2 * t->nvalues;
        t->values = xrealloc(t->values, t->cap * stride * sizeof(*t->values));
        memset(t->values + t->values_cap * stride, 0,
               (t->cap - t->values_cap) * stride * sizeof(*t->values));
        t->values_cap = t->cap;
    }
    uint32_t id = (uint32_t)t->nnodes++;
    struct calltree_node *n = &t->nodes[id];
    memset(n, 0, sizeof(*n));
    n->key = key;
    n->parent = parent;
    n->first_child = CALLTREE_NONE;
    n->next_sibling = CALLTREE_NONE;
    if (parent != CALLTREE_NONE) {
        n->next_sibling = t->nodes[parent].first_child;
        t->nodes[parent].first_child = id;
    }
    return id;
}

/* Marks node ID inlined: the marks grow with the tree only once one is set. */
static void mark_inlined(struct calltree *t, uint32_t id)
{
    if (id >= t->inlined_cap) {
        size_t cap = t->cap > id ? t->cap : (size_t)id + 1;
        t->inlined = xrealloc(t->inlined, cap);
        memset(t->inlined + t->inlined_cap, 0, cap - t->inlined_cap);
        t->inlined_cap = cap;
    }
    t->inlined[id] = 1;
}

uint32_t calltree_left_out(const struct calltree *t, uint32_t id)
{
    return t->left_out && id < t->nnodes ? t->left_out[id] : 0;
}

bool calltree_inlined(const struct calltree *t, uint32_t id)
{
    return id < t->inlined_cap && t->inlined[id];
}

static void index_insert(struct edge *idx, size_t cap, struct edge e)
{
    size_t j = edge_hash(e.parent, e.key) & (cap - 1);
    while (idx[j].node != CALLTREE_NONE)
        j = (j + 1) & (cap - 1);
    idx[j] = e;
}

static void index_grow(struct calltree *t)
{
    size_t cap = t->index_cap ? t->index_cap * 2 : 1024;
    struct edge *idx = xmalloc(cap * sizeof(*idx));
    for (size_t i = 0; i < cap; i++)
        idx[i].node = CALLTREE_NONE;
    struct edge *old = t->index;
    for (size_t i = 0; i < t->index_cap; i++)
        if (old[i].node != CALLTREE_NONE)
            index_insert(idx, cap, old[i]);
    free(old);
    t->index = idx;
    t->index_cap = cap;
}

static uint32_t child(struct calltree *t, uint32_t parent, uint32_t key)
{
    struct edge *idx = t->index;
    size_t j = edge_hash(parent, key) & (t->index_cap - 1);
    for (; idx[j].node != CALLTREE_NONE; j = (j + 1) & (t->index_cap - 1))
        if (idx[j].parent == parent && idx[j].key == key)
            return idx[j].node;
    uint32_t id = new_node(t, parent, key);
    idx[j] = (struct edge){parent, key, id};
    /* Up to three quarters full: the index is a third of a large tree's
     * memory at half (issue 19). */
    if (4 * t->nnodes > 3 * t->index_cap)
        index_grow(t);
    return id;
}

struct calltree *calltree_new(struct strtab *keys, const struct key_spec *spec)
{
    struct calltree *t = xcalloc(1, sizeof(*t));
    t->keys = keys;
    t->spec = *spec;
    t->unattributed_node = CALLTREE_NONE;
    index_grow(t);
    new_node(t, CALLTREE_NONE, CALLTREE_NONE);
    char *id = key_compose_all(spec, REPORT_UNATTRIBUTED);
    t->unattributed = strtab_intern_str(keys, id);
    free(id);
    id = key_compose_all(spec, CALLTREE_STACK_CUT);
    t->stack_cut = strtab_intern_str(keys, id);
    free(id);
    return t;
}

void calltree_free(struct calltree *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nruns; i++)
        report_free(&t->runs[i]);
    free(t->runs);
    free(t->nodes);
    free(t->node_totals);
    free(t->index);
    free(t->values);
    free(t->inlined);
    value_columns_free(&t->columns);
    path_sums_free(t->paths);
    free(t->path_elems);
    free(t->left_out);
    free(t);
}

/* E's values to LEAF's self (the totals are added up at the end). */
static void add_values(struct calltree *t, const struct walk_event *e, uint32_t leaf)
{
    if (e->nvalues > t->nvalues)
        restride(t, e->nvalues);
    double *self = t->values + (size_t)leaf * 2 * t->nvalues;
    for (size_t c = 0; c < e->nvalues; c++)
        self[c] += e->values[c];
}

void calltree_keep_wide(struct calltree *t, double cut)
{
    if (!(cut > 0) || t->paths)
        return;
    t->keep_fraction = cut / 2;
    t->paths = path_sums_new(CALLTREE_Q);
}

/* E's path, outermost first, into T's paths (calltree_keep_wide()). */
static void add_path(struct calltree *t, const struct walk_event *e)
{
    const struct path *p = e->path;
    uint32_t n = 0;
    t->path_elems =
        xgrow(t->path_elems, &t->path_elems_cap, (size_t)p->nframes + 1, sizeof(*t->path_elems));
    if (e->stack_cut)
        t->path_elems[n++] = t->stack_cut;
    for (uint32_t i = p->nframes; i-- > 0;)
        t->path_elems[n++] = p->frames[i].key | (p->frames[i].inlined ? PATH_SUMS_INLINED : 0);
    path_sums_add(t->paths, t->path_elems, n, e->q, e->values, e->nvalues);
}

static void on_sample(void *ctx, const struct walk_event *e)
{
    struct calltree *t = ctx;
    if (t->paths) {
        add_path(t, e);
        return;
    }
    const struct path *p = e->path;
    uint32_t node = 0;
    /* A stack that lost its outer frames hangs under "[stack cut]", never
     * presented as a path from the program's start. */
    if (e->stack_cut)
        node = child(t, node, t->stack_cut);
    for (uint32_t i = p->nframes; i-- > 0;) {
        node = child(t, node, p->frames[i].key);
        if (p->frames[i].inlined)
            mark_inlined(t, node);
    }
    for (int q = 0; q < Q_EXECUTIONS; q++)
        t->nodes[node].self[q] += e->q[q];
    if (e->nvalues)
        add_values(t, e, node);
}

static void on_unattributed(void *ctx, double energy_j, double idle_s)
{
    struct calltree *t = ctx;
    t->idle_s += idle_s; /* the root's and the node's alike */
    if (t->paths) {
        double q[CALLTREE_Q] = {0};
        q[Q_ENERGY] = energy_j;
        path_sums_add(t->paths, &t->unattributed, 1, q, NULL, 0);
        t->unattributed_seen = true;
        return;
    }
    uint32_t node = child(t, 0, t->unattributed);
    t->unattributed_node = node;
    t->nodes[node].self[Q_ENERGY] += energy_j;
}

struct walk_visitor calltree_visitor(struct calltree *t)
{
    return (struct walk_visitor){on_sample, on_unattributed, t, &t->columns};
}

void calltree_add_run(struct calltree *t, const struct walk_totals *wt)
{
    t->runs = xrealloc(t->runs, (t->nruns + 1) * sizeof(*t->runs));
    struct report *r = &t->runs[t->nruns++];
    memset(r, 0, sizeof(*r));
    report_totals_from_walk(&r->totals, wt);
}

const double *calltree_total(const struct calltree *t, uint32_t id)
{
    return t->node_totals + (size_t)id * CALLTREE_Q;
}

const double *calltree_values(const struct calltree *t, uint32_t id)
{
    return t->nvalues ? t->values + (size_t)id * 2 * t->nvalues : NULL;
}

double calltree_value(const struct calltree *t, uint32_t id, const struct metric *m, bool total)
{
    const struct calltree_node *n = &t->nodes[id];
    const double *v = calltree_values(t, id);
    double q[Q_COUNT] = {0};
    memcpy(q, total ? calltree_total(t, id) : n->self, sizeof(n->self));
    double idle_s = id == 0 || id == t->unattributed_node ? t->idle_s : 0;
    return metric_of(m, q, v && total ? v + t->nvalues : v, idle_s);
}

struct sort_ctx {
    const struct calltree *t;
    const struct metric *m;
};

static int child_cmp(const void *pa, const void *pb, void *ctx)
{
    const struct sort_ctx *c = ctx;
    uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
    double x = calltree_value(c->t, ia, c->m, true), y = calltree_value(c->t, ib, c->m, true);
    if (x != y)
        return x > y ? -1 : 1;
    return strcmp(strtab_get(c->t->keys, c->t->nodes[ia].key),
                  strtab_get(c->t->keys, c->t->nodes[ib].key));
}

/* Every node's totals, of the quantities and of the values: its self and
 * its children's totals, children first (a child's id is above its
 * parent's). */
static void add_up_totals(struct calltree *t)
{
    t->node_totals = xmalloc(t->nnodes * CALLTREE_Q * sizeof(*t->node_totals));
    for (size_t i = 0; i < t->nnodes; i++)
        memcpy(t->node_totals + i * CALLTREE_Q, t->nodes[i].self, sizeof(t->nodes[i].self));
    size_t n = t->nvalues;
    for (size_t i = 0; i < t->nnodes && n; i++)
        memcpy(t->values + i * 2 * n + n, t->values + i * 2 * n, n * sizeof(*t->values));
    for (size_t i = t->nnodes; i-- > 1;) {
        const double *from = t->node_totals + i * CALLTREE_Q;
        double *to = t->node_totals + (size_t)t->nodes[i].parent * CALLTREE_Q;
        for (int q = 0; q < CALLTREE_Q; q++)
            to[q] += from[q];
        for (size_t c = 0; c < n; c++)
            t->values[(size_t)t->nodes[i].parent * 2 * n + n + c] += t->values[i * 2 * n + n + c];
    }
}

/* The depth-first walk of a tree kept wide: per depth of the open path,
 * its node and what its subtree holds so far (CALLTREE_Q quantities, then
 * the values). */
struct wide_walk {
    struct calltree *t;
    const struct metric *by; /* metric_share() of the tree's metric */
    double threshold;
    size_t nv; /* value columns */
    uint32_t *node;
    uint32_t *left_out; /* children left out so far */
    double *acc;
    size_t cap;                  /* depths of NODE, LEFT_OUT and ACC */
    size_t kept_cap, totals_cap; /* of T->left_out and T->node_totals */
};

static double *wide_acc(struct wide_walk *w, size_t depth)
{
    return w->acc + depth * (CALLTREE_Q + w->nv);
}

/* A node for KEY at DEPTH (its parent the open node above). */
static void wide_open(struct wide_walk *w, size_t depth, uint32_t key)
{
    struct calltree *t = w->t;
    size_t stride = CALLTREE_Q + w->nv;
    if (depth + 1 > w->cap) {
        size_t cap = w->cap;
        w->node = xgrow(w->node, &cap, depth + 1, sizeof(*w->node));
        w->left_out = xrealloc(w->left_out, cap * sizeof(*w->left_out));
        w->acc = xrealloc(w->acc, cap * stride * sizeof(*w->acc));
        w->cap = cap;
    }
    uint32_t id = new_node(t, w->node[depth - 1], key);
    /* Ids are reused after a node left out: nothing of its may stay. */
    if (w->nv)
        memset(t->values + (size_t)id * 2 * w->nv, 0, 2 * w->nv * sizeof(*t->values));
    if (id < t->inlined_cap)
        t->inlined[id] = 0;
    w->node[depth] = id;
    w->left_out[depth] = 0;
    memset(wide_acc(w, depth), 0, stride * sizeof(*w->acc));
}

/* Node ID, the open node at DEPTH, is kept: its totals are what its
 * subtree held. */
static void wide_keep(struct wide_walk *w, uint32_t id, size_t depth)
{
    struct calltree *t = w->t;
    const double *acc = wide_acc(w, depth);
    t->left_out = xgrow(t->left_out, &w->kept_cap, (size_t)id + 1, sizeof(*t->left_out));
    t->left_out[id] = w->left_out[depth];
    t->node_totals =
        xgrow(t->node_totals, &w->totals_cap, (size_t)id + 1, CALLTREE_Q * sizeof(*t->node_totals));
    memcpy(t->node_totals + (size_t)id * CALLTREE_Q, acc, CALLTREE_Q * sizeof(*acc));
    if (w->nv)
        memcpy(t->values + (size_t)id * 2 * w->nv + w->nv, acc + CALLTREE_Q, w->nv * sizeof(*acc));
}

/* The open node at DEPTH is complete: its total to its parent's, and the
 * node kept when wide enough, else left out with all under it (the last
 * nodes made, so the tree just ends before it). */
static void wide_close(struct wide_walk *w, size_t depth)
{
    struct calltree *t = w->t;
    uint32_t id = w->node[depth];
    const double *acc = wide_acc(w, depth);
    double *up = wide_acc(w, depth - 1);
    for (size_t i = 0; i < CALLTREE_Q + w->nv; i++)
        up[i] += acc[i];
    double q[Q_COUNT] = {0};
    memcpy(q, acc, CALLTREE_Q * sizeof(*q));
    bool unattributed = depth == 1 && t->unattributed_seen && t->nodes[id].key == t->unattributed;
    double v = metric_of(w->by, q, w->nv ? acc + CALLTREE_Q : NULL, unattributed ? t->idle_s : 0);
    if (!(v > 0) || v < w->threshold) {
        t->nodes[t->nodes[id].parent].first_child = t->nodes[id].next_sibling;
        t->nnodes = id;
        w->left_out[depth - 1]++;
        return;
    }
    wide_keep(w, id, depth);
}

/* The nodes of a tree kept wide, from its paths: in the order of their
 * keys, the paths are a depth-first walk of the whole tree, so each
 * node's subtree is complete when the walk leaves it and only the open
 * path is ever held beyond the nodes kept. */
static void build_wide(struct calltree *t, double runs)
{
    struct path_sums *ps = t->paths;
    size_t npaths = path_sums_count(ps), ncols = path_sums_columns(ps);
    struct wide_walk w = {.t = t, .by = metric_share(&t->metric), .nv = t->nvalues};
    size_t stride = CALLTREE_Q + w.nv;
    double *root = xcalloc(stride, sizeof(*root));
    for (uint32_t id = 0; id < npaths; id++) {
        double *sum = path_sums_of(ps, id);
        for (size_t i = 0; i < CALLTREE_Q + ncols; i++) {
            sum[i] /= runs;
            root[i] += sum[i];
        }
    }
    double q[Q_COUNT] = {0};
    memcpy(q, root, CALLTREE_Q * sizeof(*q));
    w.threshold = t->keep_fraction * metric_of(w.by, q, w.nv ? root + CALLTREE_Q : NULL, t->idle_s);
    free(root);
    w.cap = 1;
    w.node = xcalloc(1, sizeof(*w.node));
    w.left_out = xcalloc(1, sizeof(*w.left_out));
    w.acc = xcalloc(stride, sizeof(*w.acc));
    uint32_t *order = path_sums_order(ps);
    uint32_t *open = NULL; /* the elements of the open path */
    size_t open_cap = 0;
    uint32_t depth = 0;
    for (size_t k = 0; k < npaths; k++) {
        uint32_t n;
        const uint32_t *e = path_sums_elems(ps, order[k], &n);
        uint32_t common = 0;
        while (common < depth && common < n &&
               PATH_SUMS_KEY(open[common]) == PATH_SUMS_KEY(e[common]))
            common++;
        for (; depth > common; depth--)
            wide_close(&w, depth);
        for (; depth < n; depth++)
            wide_open(&w, depth + 1, PATH_SUMS_KEY(e[depth]));
        open = xgrow(open, &open_cap, (size_t)n + 1, sizeof(*open));
        if (n)
            memcpy(open, e, n * sizeof(*e));
        for (uint32_t i = 0; i < n; i++)
            if (e[i] & PATH_SUMS_INLINED)
                mark_inlined(t, w.node[i + 1]);
        const double *sum = path_sums_of(ps, order[k]);
        uint32_t id = w.node[n];
        double *acc = wide_acc(&w, n);
        for (size_t i = 0; i < CALLTREE_Q; i++) {
            t->nodes[id].self[i] += sum[i];
            acc[i] += sum[i];
        }
        for (size_t c = 0; c < ncols && c < w.nv; c++) {
            t->values[(size_t)id * 2 * w.nv + c] += sum[CALLTREE_Q + c];
            acc[CALLTREE_Q + c] += sum[CALLTREE_Q + c];
        }
    }
    for (; depth > 0; depth--)
        wide_close(&w, depth);
    wide_keep(&w, 0, 0); /* the root, always */
    for (uint32_t c = t->nodes[0].first_child; c != CALLTREE_NONE && t->unattributed_seen;
         c = t->nodes[c].next_sibling)
        if (t->nodes[c].key == t->unattributed)
            t->unattributed_node = c;
    free(order);
    free(open);
    free(w.node);
    free(w.left_out);
    free(w.acc);
    path_sums_free(ps);
    t->paths = NULL;
    free(t->path_elems);
    t->path_elems = NULL;
}

void calltree_finish(struct calltree *t, const struct metric *m)
{
    double runs = t->nruns ? (double)t->nruns : 1;
    t->metric = *m;
    if (t->columns.n > t->nvalues)
        restride(t, t->columns.n);
    for (size_t i = 0; i < t->nnodes; i++) {
        for (int q = 0; q < CALLTREE_Q; q++)
            t->nodes[i].self[q] /= runs;
        for (size_t c = 0; c < 2 * t->nvalues; c++)
            t->values[i * 2 * t->nvalues + c] /= runs;
    }
    t->idle_s /= runs;
    /* The index of edges is not needed any more: it goes before the
     * totals are made, so the two are never held together. */
    free(t->index);
    t->index = NULL;
    t->index_cap = 0;
    if (t->paths)
        build_wide(t, runs);
    else
        add_up_totals(t);
    const struct report **rs = xcalloc(t->nruns + 1, sizeof(*rs));
    for (size_t i = 0; i < t->nruns; i++)
        rs[i] = &t->runs[i];
    struct report mean;
    report_mean(rs, t->nruns, &mean);
    t->totals = mean.totals;
    report_free(&mean);
    free(rs);

    /* Children lists in order: sort each node's children once. */
    uint32_t *kids = NULL;
    size_t cap = 0;
    struct sort_ctx c = {t, &t->metric};
    for (size_t i = 0; i < t->nnodes; i++) {
        size_t n = 0;
        for (uint32_t k = t->nodes[i].first_child; k != CALLTREE_NONE;
             k = t->nodes[k].next_sibling) {
            kids = xgrow(kids, &cap, n + 1, sizeof(*kids));
            kids[n++] = k;
        }
        if (n < 2)
            continue;
        qsort_r(kids, n, sizeof(*kids), child_cmp, &c);
        t->nodes[i].first_child = kids[0];
        for (size_t k = 0; k + 1 < n; k++)
            t->nodes[kids[k]].next_sibling = kids[k + 1];
        t->nodes[kids[n - 1]].next_sibling = CALLTREE_NONE;
    }
    free(kids);
}
