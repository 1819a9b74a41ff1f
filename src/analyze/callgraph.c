/* callgraph.c - see callgraph.h */
#include "analyze/callgraph.h"
#include "analyze/call_cycles.h"
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

/* A call-graph arc counted by the program, by the keys of its two ends. */
struct arc_rec {
    uint32_t caller, callee;             /* key ids */
    uint32_t caller_fn[2], callee_fn[2]; /* function and mangled name ids */
    double count;
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
    /* Call counts (gmon.out): the arcs, and each function's own quantities
     * (the outermost frame of a sample's PC), by key id. */
    struct arc_rec *arcs;
    size_t narcs, arcs_cap;
    struct acc *selfs;
    size_t nselfs;
    int calls_column; /* the "calls" value column, -1 before the first arc */
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
    g->calls_column = -1;
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
    free(g->arcs);
    for (size_t k = 0; k < g->nselfs; k++)
        free(g->selfs[k].v);
    free(g->selfs);
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
    if (p->nframes) {
        uint32_t own = p->frames[p->nframes - 1].key;
        g->selfs = grow_zeroed(g->selfs, &g->nselfs, own, sizeof(*g->selfs));
        add_event(&g->selfs[own], e);
    }
}

void callgraph_arc(void *ctx, const struct walk_arc *a)
{
    struct callgraph *g = ctx;
    if (!a->caller->nframes || !a->callee->nframes)
        return;
    if (g->calls_column < 0) {
        char *error = NULL;
        struct prof_value_type calls = {"calls", "", PROF_VALUE_SUM};
        g->calls_column = value_columns_add(&g->columns, &calls, &error);
        free(error);
        if (g->calls_column < 0)
            return; /* the profile has a "calls" of its own: no call counts */
    }
    const struct path_frame *from = &a->caller->frames[a->caller->nframes - 1];
    const struct path_frame *to = &a->callee->frames[a->callee->nframes - 1];
    g->arcs = xgrow(g->arcs, &g->arcs_cap, g->narcs + 1, sizeof(*g->arcs));
    g->arcs[g->narcs++] = (struct arc_rec){
        from->key,        to->key, {from->function, from->mangled}, {to->function, to->mangled},
        (double)a->count,
    };
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

/* --- call counts: gprof's call graph ------------------------------------------ */

static bool fn_matches(struct callgraph *g, const uint32_t fn[2])
{
    return name_matches(g, fn[0]) || name_matches(g, fn[1]);
}

/* A row (or the base, with ID NULL) of Q's quantities and CALLS calls. */
static void put_counted(struct callgraph *g, struct report *out, char *id, const double *q,
                        double calls)
{
    struct acc a = {.seen = true};
    memcpy(a.q, q, sizeof(a.q));
    size_t n = out->values.n;
    double *v = n ? xcalloc(n, sizeof(*v)) : NULL;
    if (v && g->calls_column >= 0 && (size_t)g->calls_column < n)
        v[g->calls_column] = calls;
    a.v = v;
    a.nv = n;
    if (id) {
        put_row(out, id, &a);
    } else {
        memcpy(out->base, q, sizeof(out->base));
        out->vbase = v;
        v = NULL;
    }
    free(v);
}

/* Adds SHARE of Q to DST. */
static void add_share(double *dst, const double *q, double share)
{
    for (int k = 0; k < Q_EXECUTIONS; k++)
        dst[k] += q[k] * share;
}

/* The callers or callees of the matching functions as gprof's call graph
 * has them: a caller's row is the function's total times its share of the
 * calls ("[no caller]": a function nobody counted calling, gprof's
 * <spontaneous>); a callee's row is the callee's total times this
 * function's share of its calls, with "[self]" the function's own.  The
 * base is the matching functions' totals; "calls" counts the calls. */
static void counted_report(struct callgraph *g, struct report *out)
{
    size_t nkeys = g->nselfs;
    for (size_t i = 0; i < g->narcs; i++) {
        nkeys = g->arcs[i].caller + 1 > nkeys ? g->arcs[i].caller + 1 : nkeys;
        nkeys = g->arcs[i].callee + 1 > nkeys ? g->arcs[i].callee + 1 : nkeys;
    }
    /* gprof's totals: own time, children's propagated, cycles as one. */
    double *selfs = xcalloc((nkeys + 1) * Q_COUNT, sizeof(*selfs));
    for (size_t k = 0; k < g->nselfs; k++)
        memcpy(selfs + k * Q_COUNT, g->selfs[k].q, sizeof(g->selfs[k].q));
    struct call_arc *carcs = xcalloc(g->narcs + 1, sizeof(*carcs));
    double *calls_in = xcalloc(nkeys + 1, sizeof(*calls_in));
    for (size_t i = 0; i < g->narcs; i++) {
        carcs[i] = (struct call_arc){g->arcs[i].caller, g->arcs[i].callee, g->arcs[i].count};
        if (g->arcs[i].caller != g->arcs[i].callee)
            calls_in[g->arcs[i].callee] += g->arcs[i].count;
    }
    struct call_totals tot;
    call_totals_compute(nkeys, Q_COUNT, selfs, carcs, g->narcs, &tot);
    free(carcs);
    bool *focus = xcalloc(nkeys + 1, sizeof(*focus));
    for (size_t i = 0; i < g->narcs; i++) {
        const struct arc_rec *a = &g->arcs[i];
        focus[a->caller] = focus[a->caller] || fn_matches(g, a->caller_fn);
        focus[a->callee] = focus[a->callee] || fn_matches(g, a->callee_fn);
    }

    double base[Q_COUNT] = {0}, base_calls = 0;
    double *rows = xcalloc((nkeys + 1) * Q_COUNT, sizeof(*rows));
    double *row_calls = xcalloc(nkeys + 1, sizeof(*row_calls));
    bool *row_seen = xcalloc(nkeys + 1, sizeof(*row_seen));
    double edge[Q_COUNT] = {0};
    bool edge_seen = false;
    for (size_t f = 0; f < nkeys; f++) {
        if (!focus[f])
            continue;
        g->found = true;
        add_share(base, tot.member + f * Q_COUNT, 1.0);
        base_calls += calls_in[f];
        if (g->direction == FOCUS_CALLEES) {
            add_share(edge, f < g->nselfs ? g->selfs[f].q : (double[Q_COUNT]){0}, 1.0);
            edge_seen = true;
        } else if (calls_in[f] <= 0) {
            add_share(edge, tot.member + f * Q_COUNT, 1.0);
            edge_seen = true;
        }
        for (size_t i = 0; i < g->narcs; i++) {
            const struct arc_rec *a = &g->arcs[i];
            if (a->caller == a->callee)
                continue;
            uint32_t other;
            if (g->direction == FOCUS_CALLERS && a->callee == f)
                other = a->caller;
            else if (g->direction == FOCUS_CALLEES && a->caller == f)
                other = a->callee;
            else
                continue;
            /* A call inside a cycle passes no time (gprof prints none);
             * one into a cycle passes the cycle's time, as into a
             * function its own. */
            bool inside = tot.cycle[f] && tot.cycle[f] == tot.cycle[other];
            if (!inside && tot.group_calls[a->callee] > 0)
                add_share(rows + (size_t)other * Q_COUNT, tot.group + a->callee * Q_COUNT,
                          a->count / tot.group_calls[a->callee]);
            row_calls[other] += a->count;
            row_seen[other] = true;
        }
    }
    size_t n = 1;
    for (size_t k = 0; k < nkeys; k++)
        n += row_seen[k];
    out->rows = xcalloc(n, sizeof(*out->rows));
    for (size_t k = 0; k < nkeys; k++)
        if (row_seen[k])
            put_counted(g, out, xstrdup(strtab_get(g->keys, (uint32_t)k)), rows + k * Q_COUNT,
                        row_calls[k]);
    if (edge_seen)
        put_counted(g, out,
                    key_compose_all(&g->spec, g->direction == FOCUS_CALLERS ? CALLGRAPH_NO_CALLER
                                                                            : CALLGRAPH_SELF),
                    edge, 0);
    put_counted(g, out, NULL, base, g->direction == FOCUS_CALLERS ? base_calls : 0);
    if (g->direction == FOCUS_CALLEES) {
        /* The calls it made: what its callees' rows count. */
        double made = 0;
        for (size_t k = 0; k < nkeys; k++)
            made += row_calls[k];
        if (out->vbase && g->calls_column >= 0 && (size_t)g->calls_column < out->values.n)
            out->vbase[g->calls_column] = made;
    }
    out->focus_found = g->found;
    free(row_seen);
    free(row_calls);
    free(rows);
    free(focus);
    free(calls_in);
    free(selfs);
    call_totals_free(&tot);
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
    if (g->narcs) {
        counted_report(g, out);
        return;
    }
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

/* The flat report's totals by the call counts: gprof's self + children of
 * each function (a cycle's member: its callees' outside the cycle). */
static void set_counted_totals(const struct callgraph *g, struct strtab *keys, struct report *r)
{
    size_t n = 0;
    for (size_t i = 0; i < g->narcs; i++) {
        n = g->arcs[i].caller + 1 > n ? g->arcs[i].caller + 1 : n;
        n = g->arcs[i].callee + 1 > n ? g->arcs[i].callee + 1 : n;
    }
    uint32_t *ids = xcalloc(r->nrows + 1, sizeof(*ids));
    for (size_t k = 0; k < r->nrows; k++) {
        ids[k] = r->rows[k].unattributed ? UINT32_MAX : strtab_intern_str(keys, r->rows[k].id);
        n = ids[k] != UINT32_MAX && ids[k] + 1 > n ? ids[k] + 1 : n;
    }
    double *self = xcalloc(n * Q_COUNT + 1, sizeof(*self));
    for (size_t k = 0; k < r->nrows; k++)
        for (int q = 0; ids[k] != UINT32_MAX && q < Q_EXECUTIONS; q++)
            self[(size_t)ids[k] * Q_COUNT + q] += r->rows[k].self[q];
    struct call_arc *arcs = xcalloc(g->narcs + 1, sizeof(*arcs));
    for (size_t i = 0; i < g->narcs; i++)
        arcs[i] = (struct call_arc){g->arcs[i].caller, g->arcs[i].callee, g->arcs[i].count};
    struct call_totals t;
    call_totals_compute(n, Q_COUNT, self, arcs, g->narcs, &t);
    for (size_t k = 0; k < r->nrows; k++)
        for (int q = 0; ids[k] != UINT32_MAX && q < Q_EXECUTIONS; q++)
            r->rows[k].total[q] = t.member[(size_t)ids[k] * Q_COUNT + q];
    call_totals_free(&t);
    free(arcs);
    free(self);
    free(ids);
}

void callgraph_set_executions(const struct callgraph *g, struct strtab *keys, struct report *r)
{
    if (!g->narcs)
        return;
    size_t n = 0;
    for (size_t i = 0; i < g->narcs; i++)
        n = g->arcs[i].callee + 1 > n ? g->arcs[i].callee + 1 : n;
    double *calls = xcalloc(n + 1, sizeof(*calls));
    bool *shown = xcalloc(n + 1, sizeof(*shown));
    size_t unshown = 0;
    for (size_t i = 0; i < g->narcs; i++)
        calls[g->arcs[i].callee] += g->arcs[i].count;
    for (size_t k = 0; k < n; k++)
        unshown += calls[k] > 0;
    double all = 0;
    for (size_t k = 0; k < r->nrows; k++) {
        struct report_row *row = &r->rows[k];
        if (row->unattributed)
            continue;
        uint32_t id = strtab_intern_str(keys, row->id);
        double c = id < n ? calls[id] : 0;
        if (id < n && !shown[id]) {
            shown[id] = true;
            unshown -= c > 0;
        }
        row->self[Q_EXECUTIONS] = row->total[Q_EXECUTIONS] = c;
        all += c;
    }
    /* Functions called but never sampled: gprof lists them too. */
    if (unshown) {
        r->rows = xrealloc(r->rows, (r->nrows + unshown) * sizeof(*r->rows));
        for (size_t k = 0; k < n; k++) {
            if (shown[k] || calls[k] <= 0)
                continue;
            struct report_row *row = &r->rows[r->nrows++];
            memset(row, 0, sizeof(*row));
            row->id = xstrdup(strtab_get(keys, (uint32_t)k));
            row->self[Q_EXECUTIONS] = row->total[Q_EXECUTIONS] = calls[k];
            report_row_values(row, r->values.n);
            all += calls[k];
        }
    }
    r->totals.executions = all;
    r->base[Q_EXECUTIONS] = all;
    set_counted_totals(g, keys, r);
    free(shown);
    free(calls);
}
