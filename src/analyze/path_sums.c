/* path_sums.c - see path_sums.h */
#include "analyze/path_sums.h"
#include "util/hash.h"
#include "util/xalloc.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A path's sums hold only the columns some path has a nonzero amount in
 * (a pprof of counts adds samples and nothing else: 8 bytes a path, not
 * 32; issue 19), until path_sums_of() asks for them all. */
struct path_sums {
    size_t nq, ncols; /* the sums' columns: NQ quantities, then NCOLS values */
    /* Every path's elements, one after the other, each a varint of its key
     * and inlined mark (mostly 2 bytes, not 4: issue 19). */
    uint8_t *bytes;
    size_t nbytes, bytes_cap;
    /* Per path and one past the last: where its bytes start, in 4 bytes
     * until the bytes pass 4 GiB, then in AT64. */
    uint32_t *at;
    size_t *at64;
    size_t at_cap;   /* of at or at64 */
    uint32_t *elems; /* path_sums_elems()'s, or a path being hashed */
    size_t elems_cap;
    uint8_t *enc; /* the path being looked up, encoded */
    size_t enc_cap;
    double *sums;    /* per path: one per column kept */
    size_t sums_cap; /* paths the sums have room for */
    size_t npaths;
    uint32_t *kept; /* the columns kept, ascending */
    size_t nkept;
    bool *is_kept;   /* per column */
    bool all;        /* every column kept (path_sums_of() was called) */
    uint32_t *index; /* open addressing: path id + 1, 0 empty */
    size_t index_cap;
};

struct path_sums *path_sums_new(size_t nq)
{
    struct path_sums *s = xcalloc(1, sizeof(*s));
    s->nq = nq;
    s->is_kept = xcalloc(nq + 1, sizeof(*s->is_kept));
    return s;
}

void path_sums_free(struct path_sums *s)
{
    if (!s)
        return;
    free(s->bytes);
    free(s->at);
    free(s->at64);
    free(s->elems);
    free(s->enc);
    free(s->sums);
    free(s->kept);
    free(s->is_kept);
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

static size_t at(const struct path_sums *s, uint32_t id)
{
    return s->at64 ? s->at64[id] : s->at[id];
}

/* Room for path ID's start and end, the end being END. */
static void set_at(struct path_sums *s, uint32_t id, size_t start, size_t end)
{
    if (end > UINT32_MAX && !s->at64) {
        s->at64 = xmalloc((s->at_cap ? s->at_cap : 1) * sizeof(*s->at64));
        for (size_t i = 0; i <= s->npaths && s->at; i++)
            s->at64[i] = s->at[i];
        free(s->at);
        s->at = NULL;
    }
    if (s->at64) {
        s->at64 = xgrow(s->at64, &s->at_cap, (size_t)id + 2, sizeof(*s->at64));
        s->at64[id] = start;
        s->at64[id + 1] = end;
    } else {
        s->at = xgrow(s->at, &s->at_cap, (size_t)id + 2, sizeof(*s->at));
        s->at[id] = (uint32_t)start;
        s->at[id + 1] = (uint32_t)end;
    }
}

/* E's varint: the key shifted left, the inlined mark in bit 0. */
static size_t encode(uint8_t *out, uint32_t e)
{
    uint64_t v = (uint64_t)PATH_SUMS_KEY(e) << 1 | (e & PATH_SUMS_INLINED ? 1 : 0);
    size_t n = 0;
    for (; v >= 0x80; v >>= 7)
        out[n++] = (uint8_t)(v | 0x80);
    out[n++] = (uint8_t)v;
    return n;
}

/* The element at *P (moved past it). */
static uint32_t decode(const uint8_t **p)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        uint8_t b = *(*p)++;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    return (uint32_t)(v >> 1) | (v & 1 ? PATH_SUMS_INLINED : 0);
}

/* Path ID's elements into S->elems; returns how many. */
static uint32_t unpack(struct path_sums *s, uint32_t id)
{
    const uint8_t *p = s->bytes + at(s, id), *end = s->bytes + at(s, id + 1);
    uint32_t n = 0;
    while (p < end) {
        s->elems = xgrow(s->elems, &s->elems_cap, (size_t)n + 1, sizeof(*s->elems));
        s->elems[n++] = decode(&p);
    }
    return n;
}

const uint32_t *path_sums_elems(struct path_sums *s, uint32_t id, uint32_t *n)
{
    *n = unpack(s, id);
    return s->elems;
}

/* Room for NCOLS values (more than before), not kept unless all are. */
static void grow_columns(struct path_sums *s, size_t ncols)
{
    s->is_kept = xrealloc(s->is_kept, (s->nq + ncols + 1) * sizeof(*s->is_kept));
    memset(s->is_kept + s->nq + s->ncols, 0, (ncols - s->ncols) * sizeof(*s->is_kept));
    s->ncols = ncols;
}

/* Keeps the columns WANT marks besides those kept: the sums laid out
 * again, a column new to them 0 in every path. */
static void keep(struct path_sums *s, const bool *want)
{
    size_t n = s->nq + s->ncols, nkept = 0;
    for (size_t c = 0; c < n; c++)
        nkept += s->is_kept[c] || want[c];
    if (nkept == s->nkept)
        return;
    uint32_t *kept = xmalloc(nkept * sizeof(*kept));
    size_t k = 0;
    for (size_t c = 0; c < n; c++)
        if (s->is_kept[c] || want[c]) {
            kept[k++] = (uint32_t)c;
            s->is_kept[c] = true;
        }
    double *sums = xcalloc(s->sums_cap ? s->sums_cap : 1, nkept * sizeof(*sums));
    for (size_t i = 0, j = 0; j < s->nkept; j++) {
        while (kept[i] != s->kept[j])
            i++;
        for (size_t p = 0; p < s->npaths; p++)
            sums[p * nkept + i] = s->sums[p * s->nkept + j];
    }
    free(s->sums);
    free(s->kept);
    s->sums = sums;
    s->kept = kept;
    s->nkept = nkept;
}

double *path_sums_of(struct path_sums *s, uint32_t id)
{
    if (!s->all) {
        s->all = true;
        bool *want = xmalloc((s->nq + s->ncols + 1) * sizeof(*want));
        for (size_t c = 0; c < s->nq + s->ncols; c++)
            want[c] = true;
        keep(s, want);
        free(want);
    }
    return s->sums + (size_t)id * s->nkept;
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
    for (uint32_t id = 0; id < s->npaths; id++) {
        uint32_t n = unpack(s, id);
        index_put(index, cap, hash_u32s(s->elems, n), id);
    }
    free(s->index);
    s->index = index;
    s->index_cap = cap;
}

/* The id of path E[0..N), new (its sums 0) when not seen before. */
static uint32_t path_id(struct path_sums *s, const uint32_t *e, uint32_t n)
{
    if (4 * (s->npaths + 1) > 3 * s->index_cap)
        index_grow(s);
    s->enc = xgrow(s->enc, &s->enc_cap, 5 * (size_t)n + 1, 1);
    size_t len = 0;
    for (uint32_t i = 0; i < n; i++)
        len += encode(s->enc + len, e[i]);
    uint64_t h = hash_u32s(e, n);
    size_t j = (size_t)h & (s->index_cap - 1);
    for (; s->index[j]; j = (j + 1) & (s->index_cap - 1)) {
        uint32_t id = s->index[j] - 1;
        /* One encoding per path: equal bytes are equal elements. */
        if (at(s, id + 1) - at(s, id) == len && memcmp(s->bytes + at(s, id), s->enc, len) == 0)
            return id;
    }
    if (s->npaths + 1 > s->sums_cap) {
        size_t cap = s->sums_cap;
        s->sums = xgrow(s->sums, &cap, s->npaths + 1, (s->nkept ? s->nkept : 1) * sizeof(*s->sums));
        s->sums_cap = cap;
    }
    /* Zeroed one path at a time: the room grown ahead takes no memory
     * before a path uses it. */
    memset(s->sums + s->npaths * s->nkept, 0, s->nkept * sizeof(*s->sums));
    s->bytes = xgrow(s->bytes, &s->bytes_cap, s->nbytes + len, 1);
    if (len)
        memcpy(s->bytes + s->nbytes, s->enc, len);
    uint32_t id = (uint32_t)s->npaths;
    set_at(s, id, s->nbytes, s->nbytes + len);
    s->npaths++;
    s->nbytes += len;
    s->index[j] = id + 1;
    return id;
}

/* What path_sums_add() adds to column C. */
static double amount(const struct path_sums *s, size_t c, const double *q, const double *values,
                     size_t nvalues)
{
    return c < s->nq ? q[c] : c - s->nq < nvalues ? values[c - s->nq] : 0;
}

void path_sums_add(struct path_sums *s, const uint32_t *elems, uint32_t n, const double *q,
                   const double *values, size_t nvalues)
{
    if (nvalues > s->ncols)
        grow_columns(s, nvalues);
    /* A column gets a place once an amount of it is not 0: until then
     * every path's sum of it is 0 (zeros added to 0 are 0). */
    size_t ncols = s->nq + s->ncols;
    bool more = false;
    for (size_t c = 0; c < ncols && !more; c++)
        more = !s->is_kept[c] && (s->all || amount(s, c, q, values, nvalues) != 0);
    if (more) {
        bool *want = xmalloc((ncols + 1) * sizeof(*want));
        for (size_t c = 0; c < ncols; c++)
            want[c] = s->all || amount(s, c, q, values, nvalues) != 0;
        keep(s, want);
        free(want);
    }
    uint32_t id = path_id(s, elems, n); /* before S->sums: it may move them */
    double *sum = s->sums + (size_t)id * s->nkept;
    for (size_t k = 0; k < s->nkept; k++)
        sum[k] += amount(s, s->kept[k], q, values, nvalues);
}

static int by_keys(const void *pa, const void *pb, void *ctx)
{
    const struct path_sums *s = ctx;
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    const uint8_t *x = s->bytes + at(s, a), *xend = s->bytes + at(s, a + 1);
    const uint8_t *y = s->bytes + at(s, b), *yend = s->bytes + at(s, b + 1);
    while (x < xend && y < yend) {
        uint32_t kx = PATH_SUMS_KEY(decode(&x)), ky = PATH_SUMS_KEY(decode(&y));
        if (kx != ky)
            return kx < ky ? -1 : 1;
    }
    if ((x < xend) != (y < yend))
        return x < xend ? 1 : -1; /* the shorter first */
    return a < b ? -1 : a > b;    /* the same keys: first seen first */
}

uint32_t *path_sums_order(const struct path_sums *s)
{
    uint32_t *order = xmalloc((s->npaths ? s->npaths : 1) * sizeof(*order));
    for (uint32_t id = 0; id < s->npaths; id++)
        order[id] = id;
    qsort_r(order, s->npaths, sizeof(*order), by_keys, (void *)s);
    return order;
}
