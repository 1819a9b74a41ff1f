/* path_sums.c - see path_sums.h */
#include "analyze/path_sums.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <stdlib.h>
#include <string.h>

struct path_sums {
    size_t nq, ncols; /* a path's sums: NQ quantities, then NCOLS values */
    uint32_t *elems;  /* every path's elements, one after the other */
    size_t nelems, elems_cap;
    size_t *at;         /* per path: where its elements start */
    uint32_t *len;      /* per path: how many */
    double *sums;       /* per path: NQ + NCOLS */
    size_t npaths, cap; /* of at, len and sums */
    uint32_t *index;    /* open addressing: path id + 1, 0 empty */
    size_t index_cap;
};

struct path_sums *path_sums_new(size_t nq)
{
    struct path_sums *s = xcalloc(1, sizeof(*s));
    s->nq = nq;
    return s;
}

void path_sums_free(struct path_sums *s)
{
    if (!s)
        return;
    free(s->elems);
    free(s->at);
    free(s->len);
    free(s->sums);
    free(s->index);
    free(s);
}

size_t path_sums_count(const struct path_sums *s)
{
    return s->npaths;
}

size_t path_sums_columns(const struct path_sums *s)
{
    return s->ncols;
}

const uint32_t *path_sums_elems(const struct path_sums *s, uint32_t id, uint32_t *n)
{
    *n = s->len[id];
    return s->elems + s->at[id];
}

double *path_sums_of(struct path_sums *s, uint32_t id)
{
    return s->sums + (size_t)id * (s->nq + s->ncols);
}

/* Room for NCOLS values per path (more columns than before). */
static void restride(struct path_sums *s, size_t ncols)
{
    size_t from = s->nq + s->ncols, to = s->nq + ncols;
    double *sums = xcalloc(s->cap ? s->cap : 1, to * sizeof(*sums));
    for (size_t i = 0; i < s->npaths; i++)
        memcpy(sums + i * to, s->sums + i * from, from * sizeof(*sums));
    free(s->sums);
    s->sums = sums;
    s->ncols = ncols;
}

static void index_put(uint32_t *index, size_t cap, uint64_t h, uint32_t id)
{
    size_t j = (size_t)h & (cap - 1);
    while (index[j])
        j = (j + 1) & (cap - 1);
    index[j] = id + 1;
}

static void index_grow(struct path_sums *s)
{
    size_t cap = s->index_cap ? 2 * s->index_cap : 1024;
    uint32_t *index = xcalloc(cap, sizeof(*index));
    for (uint32_t id = 0; id < s->npaths; id++)
        index_put(index, cap, hash_u32s(s->elems + s->at[id], s->len[id]), id);
    free(s->index);
    s->index = index;
    s->index_cap = cap;
}

/* The id of path E[0..N), new (its sums 0) when not seen before. */
static uint32_t path_id(struct path_sums *s, const uint32_t *e, uint32_t n)
{
    if (4 * (s->npaths + 1) > 3 * s->index_cap)
        index_grow(s);
    uint64_t h = hash_u32s(e, n);
    size_t j = (size_t)h & (s->index_cap - 1);
    for (; s->index[j]; j = (j + 1) & (s->index_cap - 1)) {
        uint32_t id = s->index[j] - 1;
        if (s->len[id] == n && memcmp(s->elems + s->at[id], e, n * sizeof(*e)) == 0)
            return id;
    }
    size_t stride = s->nq + s->ncols;
    if (s->npaths + 1 > s->cap) {
        s->at = xgrow(s->at, &s->cap, s->npaths + 1, sizeof(*s->at));
        s->len = xrealloc(s->len, s->cap * sizeof(*s->len));
        s->sums = xrealloc(s->sums, s->cap * stride * sizeof(*s->sums));
    }
    /* Zeroed one path at a time: the room grown ahead takes no memory
     * before a path uses it. */
    memset(s->sums + s->npaths * stride, 0, stride * sizeof(*s->sums));
    s->elems = xgrow(s->elems, &s->elems_cap, s->nelems + n, sizeof(*s->elems));
    if (n)
        memcpy(s->elems + s->nelems, e, n * sizeof(*e));
    uint32_t id = (uint32_t)s->npaths++;
    s->at[id] = s->nelems;
    s->len[id] = n;
    s->nelems += n;
    s->index[j] = id + 1;
    return id;
}

void path_sums_add(struct path_sums *s, const uint32_t *elems, uint32_t n, const double *q,
                   const double *values, size_t nvalues)
{
    if (nvalues > s->ncols)
        restride(s, nvalues);
    double *sum = path_sums_of(s, path_id(s, elems, n));
    for (size_t i = 0; i < s->nq; i++)
        sum[i] += q[i];
    for (size_t c = 0; c < nvalues; c++)
        sum[s->nq + c] += values[c];
}

static int by_keys(const void *pa, const void *pb, void *ctx)
{
    const struct path_sums *s = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const uint32_t *x = s->elems + s->at[a], *y = s->elems + s->at[b];
    uint32_t n = s->len[a] < s->len[b] ? s->len[a] : s->len[b];
    for (uint32_t i = 0; i < n; i++) {
        uint32_t kx = PATH_SUMS_KEY(x[i]), ky = PATH_SUMS_KEY(y[i]);
        if (kx != ky)
            return kx < ky ? -1 : 1;
    }
    if (s->len[a] != s->len[b])
        return s->len[a] < s->len[b] ? -1 : 1;
    return a < b ? -1 : a > b; /* the same keys: first seen first */
}

uint32_t *path_sums_order(const struct path_sums *s)
{
    uint32_t *order = xmalloc((s->npaths ? s->npaths : 1) * sizeof(*order));
    for (uint32_t id = 0; id < s->npaths; id++)
        order[id] = id;
    qsort_r(order, s->npaths, sizeof(*order), by_keys, (void *)s);
    return order;
}
