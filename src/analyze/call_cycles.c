/* call_cycles.c - see call_cycles.h */
#include "analyze/call_cycles.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* The arcs out of each function, self calls left out (CSR layout). */
struct adjacency {
    size_t *first; /* N + 1 */
    uint32_t *arc; /* arc indices, by caller */
};

static void adjacency_build(size_t n, const struct call_arc *arcs, size_t narcs,
                            struct adjacency *adj)
{
    adj->first = xcalloc(n + 1, sizeof(*adj->first));
    for (size_t i = 0; i < narcs; i++)
        if (arcs[i].caller != arcs[i].callee)
            adj->first[arcs[i].caller + 1]++;
    for (size_t v = 0; v < n; v++)
        adj->first[v + 1] += adj->first[v];
    adj->arc = xmalloc((adj->first[n] + 1) * sizeof(*adj->arc));
    size_t *fill = xmalloc((n + 1) * sizeof(*fill));
    memcpy(fill, adj->first, (n + 1) * sizeof(*fill));
    for (size_t i = 0; i < narcs; i++)
        if (arcs[i].caller != arcs[i].callee)
            adj->arc[fill[arcs[i].caller]++] = (uint32_t)i;
    free(fill);
}

/* Tarjan's strongly connected components, iteratively: GROUP[v] is the
 * component's number, numbered as they complete (callees before callers).
 * Returns how many there are. */
static size_t components(size_t n, const struct call_arc *arcs, const struct adjacency *adj,
                         uint32_t *group)
{
    const uint32_t unseen = UINT32_MAX;
    uint32_t *index = xmalloc((n + 1) * sizeof(*index)), *low = xmalloc((n + 1) * sizeof(*low));
    uint32_t *stack = xmalloc((n + 1) * sizeof(*stack)), *path = xmalloc((n + 1) * sizeof(*path));
    size_t *next = xmalloc((n + 1) * sizeof(*next));
    bool *on_stack = xcalloc(n + 1, sizeof(*on_stack));
    for (size_t v = 0; v < n; v++)
        index[v] = unseen;
    uint32_t counter = 0;
    size_t nstack = 0, ngroups = 0;
    for (size_t root = 0; root < n; root++) {
        if (index[root] != unseen)
            continue;
        size_t depth = 0;
        path[depth++] = (uint32_t)root;
        index[root] = low[root] = counter++;
        next[root] = adj->first[root];
        stack[nstack++] = (uint32_t)root;
        on_stack[root] = true;
        while (depth) {
            uint32_t v = path[depth - 1];
            if (next[v] < adj->first[v + 1]) {
                uint32_t w = arcs[adj->arc[next[v]++]].callee;
                if (index[w] == unseen) {
                    index[w] = low[w] = counter++;
                    next[w] = adj->first[w];
                    stack[nstack++] = w;
                    on_stack[w] = true;
                    path[depth++] = w;
                } else if (on_stack[w] && index[w] < low[v]) {
                    low[v] = index[w];
                }
                continue;
            }
            if (low[v] == index[v]) {
                uint32_t w;
                do {
                    w = stack[--nstack];
                    on_stack[w] = false;
                    group[w] = (uint32_t)ngroups;
                } while (w != v);
                ngroups++;
            }
            depth--;
            if (depth) {
                uint32_t parent = path[depth - 1];
                low[parent] = low[v] < low[parent] ? low[v] : low[parent];
            }
        }
    }
    free(index);
    free(low);
    free(stack);
    free(path);
    free(next);
    free(on_stack);
    return ngroups;
}

void call_totals_compute(size_t n, size_t width, const double *self, const struct call_arc *arcs,
                         size_t narcs, struct call_totals *out)
{
    memset(out, 0, sizeof(*out));
    out->member = xcalloc(n * width + 1, sizeof(*out->member));
    out->group = xcalloc(n * width + 1, sizeof(*out->group));
    out->group_calls = xcalloc(n + 1, sizeof(*out->group_calls));
    out->cycle = xcalloc(n + 1, sizeof(*out->cycle));
    if (n == 0)
        return;
    memcpy(out->member, self, n * width * sizeof(*self));
    struct adjacency adj;
    adjacency_build(n, arcs, narcs, &adj);
    uint32_t *group = xmalloc(n * sizeof(*group));
    size_t ngroups = components(n, arcs, &adj, group);

    /* Per group: its members (by completion order), own total, calls in. */
    size_t *size = xcalloc(ngroups + 1, sizeof(*size));
    double *gtotal = xcalloc(ngroups * width + 1, sizeof(*gtotal));
    double *gcalls = xcalloc(ngroups + 1, sizeof(*gcalls));
    for (size_t v = 0; v < n; v++) {
        size[group[v]]++;
        for (size_t k = 0; k < width; k++)
            gtotal[group[v] * width + k] += self[v * width + k];
    }
    for (size_t i = 0; i < narcs; i++)
        if (group[arcs[i].caller] != group[arcs[i].callee])
            gcalls[group[arcs[i].callee]] += arcs[i].count;
    size_t *first = xcalloc(ngroups + 1, sizeof(*first));
    for (size_t c = 0; c < ngroups; c++)
        first[c + 1] = first[c] + size[c];
    uint32_t *members = xmalloc(n * sizeof(*members));
    size_t *fill = xmalloc((ngroups + 1) * sizeof(*fill));
    memcpy(fill, first, (ngroups + 1) * sizeof(*fill));
    for (size_t v = 0; v < n; v++)
        members[fill[group[v]]++] = (uint32_t)v;

    /* Groups complete callees first: every group an arc leaves for is
     * done when its caller's group is reached. */
    for (size_t c = 0; c < ngroups; c++) {
        for (size_t m = first[c]; m < first[c + 1]; m++) {
            uint32_t v = members[m];
            for (size_t e = adj.first[v]; e < adj.first[v + 1]; e++) {
                const struct call_arc *a = &arcs[adj.arc[e]];
                uint32_t to = group[a->callee];
                if (to == c || gcalls[to] <= 0)
                    continue;
                double share = a->count / gcalls[to];
                for (size_t k = 0; k < width; k++) {
                    double passed = gtotal[to * width + k] * share;
                    out->member[v * width + k] += passed;
                    gtotal[c * width + k] += passed;
                }
            }
        }
    }
    /* Cycles numbered in the order their first function appears. */
    uint32_t *number = xcalloc(ngroups + 1, sizeof(*number));
    for (size_t v = 0; v < n; v++) {
        uint32_t c = group[v];
        if (size[c] > 1 && number[c] == 0)
            number[c] = ++out->ncycles;
        out->cycle[v] = number[c];
        memcpy(out->group + v * width, gtotal + c * width, width * sizeof(*gtotal));
        out->group_calls[v] = gcalls[c];
    }
    free(number);
    free(fill);
    free(members);
    free(first);
    free(gcalls);
    free(gtotal);
    free(size);
    free(group);
    free(adj.first);
    free(adj.arc);
}

void call_totals_free(struct call_totals *t)
{
    if (!t)
        return;
    free(t->member);
    free(t->group);
    free(t->group_calls);
    free(t->cycle);
    memset(t, 0, sizeof(*t));
}
