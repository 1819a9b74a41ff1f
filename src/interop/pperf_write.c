/*
 * pperf_write.c - writer half of pperf.h: the original sampler's raw format.
 *
 * The header's counts are only known at the end.  A regular file is written
 * in place with a placeholder header that finish() overwrites; standard
 * output cannot seek, so there the body is spooled to an unlinked temporary
 * file and copied out after the header.
 */
#include "interop/pperf.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct pperf_writer {
    struct outfile *out;
    FILE *spool; /* holds the body when the output cannot seek, else NULL */
    FILE *body;  /* where samples go: the spool or the output itself */
    uint32_t magic, pmu_size;
    uint64_t nsamples;
    bool failed;
    /* One sample is formatted here and handed to stdio in one fwrite; the
     * buffer only grows when a sample has more threads than any before. */
    unsigned char *buf;
    size_t cap;
};

static unsigned char *put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
    return p + 4;
}

static unsigned char *put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
    return p + 8;
}

static void format_header(unsigned char *h, uint32_t magic, uint64_t wall_us, uint64_t latency_us,
                          uint64_t nsamples, uint32_t pmu_size, uint32_t nmaps)
{
    unsigned char *p = put_u32(h, magic);
    p = put_u64(p, wall_us);
    p = put_u64(p, latency_us);
    p = put_u64(p, nsamples);
    p = put_u32(p, pmu_size);
    put_u32(p, nmaps);
}

/* Report the first write error only: later ones are its consequences. */
static int write_failed(struct pperf_writer *w, FILE *f)
{
    if (!w->failed) {
        const char *why = errno ? strerror(errno) : "write error";
        if (f == w->spool)
            pt_err("cannot write '%s': temporary spool file: %s", outfile_path(w->out), why);
        else
            pt_err("cannot write '%s': %s", outfile_path(w->out), why);
    }
    w->failed = true;
    return -1;
}

struct pperf_writer *pperf_writer_open(const char *path, uint32_t magic, uint32_t pmu_size)
{
    if (pmu_size > PPERF_PMU_SIZE_MAX) {
        pt_err("cannot write '%s': PMU sample size %" PRIu32 " exceeds %u bytes", path, pmu_size,
               PPERF_PMU_SIZE_MAX);
        return NULL;
    }
    struct outfile *out = outfile_open(path);
    if (!out)
        return NULL;

    struct pperf_writer *w = xcalloc(1, sizeof(*w));
    w->out = out;
    w->magic = magic;
    w->pmu_size = pmu_size;
    if (outfile_seekable(out)) {
        w->body = outfile_stream(out);
        unsigned char h[PPERF_HEADER_SIZE];
        format_header(h, magic, 0, 0, 0, pmu_size, 0);
        errno = 0;
        if (fwrite(h, sizeof(h), 1, w->body) != 1) {
            write_failed(w, w->body);
            pperf_writer_abort(w);
            return NULL;
        }
    } else {
        w->spool = w->body = tmpfile();
        if (!w->spool) {
            pt_err("cannot write '%s': temporary spool file: %s", path, strerror(errno));
            pperf_writer_abort(w);
            return NULL;
        }
    }
    w->cap = 12 + (size_t)pmu_size + 64 * (size_t)PPERF_THREAD_SIZE;
    w->buf = xmalloc(w->cap);
    return w;
}

int pperf_writer_sample(struct pperf_writer *w, uint64_t wall_us, const void *pmu_data,
                        uint32_t nthreads, const struct pperf_thread *threads)
{
    if (w->failed)
        return -1;
    size_t need = 12 + (size_t)w->pmu_size + (size_t)nthreads * PPERF_THREAD_SIZE;
    if (need > w->cap) {
        w->cap = need + need / 2;
        free(w->buf);
        w->buf = xmalloc(w->cap);
    }
    unsigned char *p = put_u64(w->buf, wall_us);
    /* PMU bytes are the source's doubles as the host holds them: the
     * original wrote its packed struct verbatim on little-endian machines. */
    if (pmu_data)
        memcpy(p, pmu_data, w->pmu_size);
    else
        memset(p, 0, w->pmu_size);
    p = put_u32(p + w->pmu_size, nthreads);
    for (uint32_t i = 0; i < nthreads; i++) {
        p = put_u32(p, threads[i].tid);
        p = put_u64(p, threads[i].pc);
        p = put_u64(p, threads[i].cpu_ns);
    }
    errno = 0;
    if (fwrite(w->buf, (size_t)(p - w->buf), 1, w->body) != 1)
        return write_failed(w, w->body);
    w->nsamples++;
    return 0;
}

static int write_maps(struct pperf_writer *w, FILE *f, const struct pperf_map *maps, uint32_t nmaps)
{
    unsigned char rec[PPERF_MAP_SIZE];
    for (uint32_t i = 0; i < nmaps; i++) {
        unsigned char *p = put_u64(rec, maps[i].address);
        p = put_u64(p, maps[i].size);
        /* NUL padding, never stale bytes, and room for the terminator. */
        size_t n = strnlen(maps[i].label, PPERF_LABEL_SIZE - 1);
        memset(p, 0, PPERF_LABEL_SIZE);
        memcpy(p, maps[i].label, n);
        errno = 0;
        if (fwrite(rec, sizeof(rec), 1, f) != 1)
            return write_failed(w, f);
    }
    return 0;
}

/* Copy the spooled body after the header on a stream that cannot seek. */
static int copy_spool(struct pperf_writer *w, FILE *dst)
{
    errno = 0;
    if (fflush(w->body) != 0 || fseek(w->body, 0, SEEK_SET) != 0)
        return write_failed(w, w->body);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), w->body)) > 0) {
        errno = 0;
        if (fwrite(chunk, 1, n, dst) != n)
            return write_failed(w, dst);
    }
    if (ferror(w->body))
        return write_failed(w, w->body);
    return 0;
}

int pperf_writer_finish(struct pperf_writer *w, uint64_t wall_us, uint64_t latency_us,
                        const struct pperf_map *maps, uint32_t nmaps)
{
    if (w->failed) {
        pperf_writer_abort(w);
        return -1;
    }
    FILE *dst = outfile_stream(w->out);
    unsigned char h[PPERF_HEADER_SIZE];
    format_header(h, w->magic, wall_us, latency_us, w->nsamples, w->pmu_size, nmaps);

    int rc;
    if (!w->spool) {
        rc = write_maps(w, dst, maps, nmaps);
        errno = 0;
        if (rc == 0 && (fseek(dst, 0, SEEK_SET) != 0 || fwrite(h, sizeof(h), 1, dst) != 1))
            rc = write_failed(w, dst);
    } else {
        errno = 0;
        rc = fwrite(h, sizeof(h), 1, dst) == 1 ? 0 : write_failed(w, dst);
        if (rc == 0)
            rc = copy_spool(w, dst);
        if (rc == 0)
            rc = write_maps(w, dst, maps, nmaps);
    }
    if (rc != 0) {
        pperf_writer_abort(w);
        return -1;
    }
    rc = outfile_commit(w->out);
    w->out = NULL;
    pperf_writer_abort(w);
    return rc;
}

void pperf_writer_abort(struct pperf_writer *w)
{
    if (!w)
        return;
    if (w->spool)
        fclose(w->spool);
    outfile_abort(w->out);
    free(w->buf);
    free(w);
}
