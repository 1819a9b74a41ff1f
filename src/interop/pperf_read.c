/*
 * pperf_read.c - reader half of pperf.h: the original sampler's raw format.
 *
 * The file is checked in one pass that allocates nothing: every count is
 * compared with the bytes that are really there.  Only then is a single
 * block sized from the validated counts, which are bounded by the input
 * length, and filled in a second pass.
 */
#include "interop/pperf.h"
#include "util/log.h"
#include "util/slurp.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static double get_double(const unsigned char *p)
{
    uint64_t bits = get_u64(p);
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
}

static size_t align8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

/* Check the whole file against H's counts; on success *NTHREADS is the sum
 * of all samples' thread counts, so the second pass needs no checks. */
static int validate(const char *name, const unsigned char *d, size_t len,
                    const struct pperf_profile *h, uint64_t *nthreads)
{
    const size_t fixed = 8 + (size_t)h->pmu_size + 4; /* a sample without threads */
    size_t pos = PPERF_HEADER_SIZE;

    /* Refuse an impossible count up front rather than loop towards it. */
    if (h->nsamples > (len - pos) / fixed) {
        pt_err("%s: offset 20: %" PRIu64 " samples of at least %zu bytes cannot fit in the %zu "
               "bytes after the header",
               name, h->nsamples, fixed, len - pos);
        return -1;
    }
    *nthreads = 0;
    for (uint64_t i = 0; i < h->nsamples; i++) {
        if (len - pos < fixed) {
            pt_err("%s: offset %zu: sample %" PRIu64 " of %" PRIu64 " is cut short (%zu of %zu "
                   "bytes before its thread list)",
                   name, pos, i, h->nsamples, len - pos, fixed);
            return -1;
        }
        size_t count_at = pos + fixed - 4;
        uint32_t n = get_u32(d + count_at);
        pos += fixed;
        if (n > (len - pos) / PPERF_THREAD_SIZE) {
            pt_err("%s: offset %zu: sample %" PRIu64 " claims %" PRIu32 " threads (%" PRIu64
                   " bytes) but only %zu bytes remain",
                   name, count_at, i, n, (uint64_t)n * PPERF_THREAD_SIZE, len - pos);
            return -1;
        }
        pos += (size_t)n * PPERF_THREAD_SIZE;
        *nthreads += n;
    }

    uint64_t want = (uint64_t)h->nmaps * PPERF_MAP_SIZE;
    size_t have = len - pos;
    if (want > have) {
        uint64_t whole = have / PPERF_MAP_SIZE;
        pt_err("%s: offset %zu: file ends inside map %" PRIu64 " of %" PRIu32
               " (the maps need %" PRIu64 " bytes from offset %zu, %zu are present)",
               name, len, whole, h->nmaps, want, pos, have);
        return -1;
    }
    if (want < have) {
        pt_err("%s: offset %" PRIu64 ": %" PRIu64
               " bytes of trailing garbage after the last of %" PRIu32 " maps",
               name, (uint64_t)pos + want, (uint64_t)have - want, h->nmaps);
        return -1;
    }
    return 0;
}

int pperf_load_buffer(const char *name, const void *data, size_t len, struct pperf_profile *out)
{
    const unsigned char *d = data;
    memset(out, 0, sizeof(*out));
    if (len < PPERF_HEADER_SIZE) {
        pt_err("%s: offset %zu: file ends inside the header (%u bytes needed, %zu present)", name,
               len, PPERF_HEADER_SIZE, len);
        return -1;
    }
    struct pperf_profile h = {
        .magic = get_u32(d),
        .wall_us = get_u64(d + 4),
        .latency_us = get_u64(d + 12),
        .nsamples = get_u64(d + 20),
        .pmu_size = get_u32(d + 28),
        .nmaps = get_u32(d + 32),
    };
    if (h.pmu_size > PPERF_PMU_SIZE_MAX) {
        pt_err("%s: offset 28: PMU sample size %" PRIu32 " exceeds the limit of %u bytes", name,
               h.pmu_size, PPERF_PMU_SIZE_MAX);
        return -1;
    }
    uint64_t nthreads;
    if (validate(name, d, len, &h, &nthreads) != 0)
        return -1;

    /* Every count below is bounded by LEN now, so these sizes cannot wrap. */
    const bool doubles = h.pmu_size % 8 == 0;
    size_t n = (size_t)h.nsamples;
    size_t samples_sz = align8(n * sizeof(struct pperf_sample));
    size_t threads_sz = align8((size_t)nthreads * sizeof(struct pperf_thread));
    size_t maps_sz = align8((size_t)h.nmaps * sizeof(struct pperf_map));
    size_t pmu_sz = align8(n * h.pmu_size);
    size_t total = samples_sz + threads_sz + maps_sz + pmu_sz + (doubles ? pmu_sz : 0);
    unsigned char *store = xmalloc(total ? total : 1);

    struct pperf_sample *samples = (void *)store;
    struct pperf_thread *threads = (void *)(store + samples_sz);
    struct pperf_map *maps = (void *)(store + samples_sz + threads_sz);
    unsigned char *raw = store + samples_sz + threads_sz + maps_sz;
    double *values = (void *)(raw + pmu_sz);

    size_t pos = PPERF_HEADER_SIZE;
    for (size_t i = 0; i < n; i++) {
        struct pperf_sample *s = &samples[i];
        s->wall_us = get_u64(d + pos);
        pos += 8;
        unsigned char *r = raw + i * h.pmu_size;
        memcpy(r, d + pos, h.pmu_size);
        s->pmu_raw = r;
        s->pmu = NULL;
        if (doubles) {
            double *v = values + i * (h.pmu_size / 8);
            for (uint32_t k = 0; k < h.pmu_size / 8; k++)
                v[k] = get_double(r + 8 * k);
            s->pmu = v;
        }
        pos += h.pmu_size;
        s->nthreads = get_u32(d + pos);
        pos += 4;
        s->threads = s->nthreads ? threads : NULL;
        for (uint32_t t = 0; t < s->nthreads; t++) {
            threads[t].tid = get_u32(d + pos);
            threads[t].pc = get_u64(d + pos + 4);
            threads[t].cpu_ns = get_u64(d + pos + 12);
            pos += PPERF_THREAD_SIZE;
        }
        threads += s->nthreads;
    }
    for (uint32_t i = 0; i < h.nmaps; i++) {
        maps[i].address = get_u64(d + pos);
        maps[i].size = get_u64(d + pos + 8);
        memcpy(maps[i].label, d + pos + 16, PPERF_LABEL_SIZE);
        /* The original could fill all 256 bytes; we promise a C string. */
        maps[i].label[PPERF_LABEL_SIZE - 1] = '\0';
        pos += PPERF_MAP_SIZE;
    }

    *out = h;
    out->samples = n ? samples : NULL;
    out->maps = h.nmaps ? maps : NULL;
    out->storage = store;
    return 0;
}

int pperf_load(const char *path, struct pperf_profile *out)
{
    memset(out, 0, sizeof(*out));
    struct slurp in;
    if (slurp_path(path, SLURP_DEFAULT_MAX, &in) != 0)
        return -1;
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    int rc;
    if (in.truncated) {
        /* Counts in the header describe the whole file: a prefix never
         * validates, and the compressed offset is the useful one. */
        pt_err("%s", in.error);
        rc = -1;
    } else {
        rc = pperf_load_buffer(name, in.data, in.len, out);
    }
    slurp_free(&in);
    return rc;
}

void pperf_free(struct pperf_profile *p)
{
    if (!p)
        return;
    free(p->storage);
    memset(p, 0, sizeof(*p));
}
