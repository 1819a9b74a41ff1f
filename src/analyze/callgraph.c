/* callgraph.c - see callgraph.h */
#include "analyze/callgraph.h"
#include "util/xalloc.h"

#include <fnmatch.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum match { MATCH_UNKNOWN, MATCH_NO, MATCH_YES };

struct acc {
    double q[Q_COUNT];
    double *v; /* per value column, NULL until it has one */
    size_t nv;
    uint64_t stamp; /* the last path counted, so a key counts once per path */
    bool seen;
};

struct callgraph {
    const struct strtab *keys, *names;
    struct key_spec spec;
    char *function;
    size_t function_len;
    bool pattern; /* FUNCTION holds a wildcard: also matched with fnmatch() */
    enum report_focus direction;
    unsigned char *matches; /* enum match by name id */
    size_t nmatches;
    struct acc *accs; /* by key id */
    size_t naccs;
    struct acc edge; /* [no caller] or [self] */
    struct acc focus;
    bool found;
    uint64_t stamp;
    struct value_columns columns;
};

struct callgraph *callgraph_new(const struct strtab *keys, const struct strtab *names,
                                const struct key_spec *spec, const char *function,
                                enum report_focus direction)
{
    struct callgraph *g = xcalloc(1, sizeof(*g));
    g->keys = keys;
    g->names = names;
    g->spec = *spec;
    g->function = xstrdup(function);
    g->function_len = strlen(function);
    g->pattern = strpbrk(function, "*?[") != NULL;
    g->direction = direction;
    return g;
}

void callgraph_free(struct callgraph *g)
{
    if (!g)
        return;
    free(g->function);
    free(g->matches);
    for (size_t k = 0; k < g->naccs; k++)
        free(g->accs[k].v);
    free(g->accs);
    free(g->edge.v);
    free(g->focus.v);
    value_columns_free(&g->columns);
    free(g);
}

static void *grow_zeroed(void *p, size_t *n, size_t need, size_t size)
{
    if (need < *n)
        return p;
    size_t m = *n ? *n : 256;
    while (m <= need)
        m *= 2;
    p = xrealloc(p, m * size);
    memset((char *)p + *n * size, 0, (m - *n) * size);
    *n = m;
    return p;
}

static bool name_matches(struct callgraph *g, uint32_t id)
{
    g->matches = grow_zeroed(g->matches, &g->nmatches, id, 1);
    if (g->matches[id] == MATCH_UNKNOWN) {
        const char *s = strtab_get(g->names, id);
        bool yes =
            s && (strcmp(s, g->function) == 0 ||
                  (strncmp(s, g->function, g->function_len) == 0 && s[g->function_len] == '(') ||
                  (g->pattern && fnmatch(g->function, s, 0) == 0));
        g->matches[id] = yes ? MATCH_YES : MATCH_NO;
    }
    return g->matches[id] == MATCH_YES;
}

/* E's quantities and values into A (executions are not counted). */
static void add_event(struct acc *a, const struct walk_event *e)
{
    a->seen = true;
    for (int i = 0; i < Q_EXECUTIONS; i++)
        a->q[i] += e->q[i];
    if (!e->nvalues)
        return;
    if (a->nv < e->nvalues) {
        a->v = xrealloc(a->v, e->nvalues * sizeof(*a->v));
        memset(a->v + a->nv, 0, (e->nvalues - a->nv) * sizeof(*a->v));
        a->nv = e->nvalues;
    }
    for (size_t c = 0; c < e->nvalues; c++)
        a->v[c] += e->values[c];
}

static void add(struct callgraph *g, struct acc *a, const struct walk_event *e)
{
    if (a->stamp == g->stamp)
        return;
    a->stamp = g->stamp;
    add_event(a, e);
}

static void on_sample(void *ctx, const struct walk_event *e)
{
    struct callgraph *g = ctx;
    const struct path *p = e->path;
    bool found = false;
    g->stamp++;
    for (uint32_t m = 0; m < p->nframes; m++) {
        const struct path_frame *f = &p->frames[m];
        if (!name_matches(g, f->function) && !name_matches(g, f->mangled))
            continue;
        found = true;
        bool edge = g->direction == FOCUS_CALLERS ? m + 1 == p->nframes : m == 0;
        if (edge) {
            add(g, &g->edge, e);
            continue;
        }
        uint32_t key = p->frames[g->direction == FOCUS_CALLERS ? m + 1 : m - 1].key;
        g->accs = grow_zeroed(g->accs, &g->naccs, key, sizeof(*g->accs));
        add(g, &g->accs[key], e);
    }
    if (found) {
        g->found = true;
        add_event(&g->focus, e);
    }
}

struct walk_visitor callgraph_visitor(struct callgraph *g)
{
    return (struct walk_visitor){on_sample, NULL, g, &g->columns};
}

const struct value_columns *callgraph_columns(const struct callgraph *g)
{
    return &g->columns;
}

/* A's values over N columns (those it never met are 0). */
static void copy_values(double *dst, const struct acc *a, size_t n)
{
    for (size_t c = 0; c < n; c++)
        dst[c] = c < a->nv ? a->v[c] : 0;
}

static void put_row(struct report *out, char *id, const struct acc *a)
{
    struct report_row *r = &out->rows[out->nrows++];
    memset(r, 0, sizeof(*r));
    r->id = id;
    memcpy(r->self, a->q, sizeof(r->self));
    memcpy(r->total, a->q, sizeof(r->total));
    size_t n = out->values.n;
    report_row_values(r, n);
    if (n) {
        copy_values(r->vself, a, n);
        copy_values(r->vtotal, a, n);
    }
}

void callgraph_report(struct callgraph *g, const struct walk_totals *t, const struct metric *m,
                      struct report *out)
{
    memset(out, 0, sizeof(*out));
    out->keys = g->spec;
    out->metric = *m;
    value_columns_copy(&out->values, &g->columns);
    out->focus = g->direction;
    out->focus_function = xstrdup(g->function);
    out->focus_found = g->found;
    report_totals_from_walk(&out->totals, t);
    size_t n = 1;
    for (size_t k = 0; k < g->naccs; k++)
        n += g->accs[k].seen;
    out->rows = xcalloc(n, sizeof(*out->rows));
    for (size_t k = 0; k < g->naccs; k++)
        if (g->accs[k].seen)
            put_row(out, xstrdup(strtab_get(g->keys, (uint32_t)k)), &g->accs[k]);
    if (g->edge.seen)
        put_row(out,
                key_compose_all(&g->spec, g->direction == FOCUS_CALLERS ? CALLGRAPH_NO_CALLER
                                                                        : CALLGRAPH_SELF),
                &g->edge);
    memcpy(out->base, g->focus.q, sizeof(out->base));
    if (out->values.n) {
        out->vbase = xcalloc(out->values.n, sizeof(*out->vbase));
        copy_values(out->vbase, &g->focus, out->values.n);
    }
}
