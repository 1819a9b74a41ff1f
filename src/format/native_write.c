/*
 * native_write.c - writer half of native.h (docs/format.md).
 *
 * The recorder calls native_write_sample() inside its sampling loop, so the
 * steady state must cost a memcpy: every record is formatted straight into
 * one large buffer that goes to stdio in big writes, the buffers only grow
 * and never shrink, and the stack table deduplicates with a hash table
 * without allocating once a stack has been seen.  Crash tolerance comes
 * from flushing the buffer to the kernel at least every 250 ms, decided by
 * a CLOCK_MONOTONIC read per sample (a vDSO call, no system call).
 */
#include "format/native.h"
#include "format/native_records.h"
#include "util/hash.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/timeutil.h"
#include "util/xalloc.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define BUF_SIZE (256u * 1024u)
#define FLUSH_NS (250u * 1000u * 1000u)

/* Where a known stack's frames live in the pool; its id is index + 1. */
struct stack_entry {
    uint64_t hash;
    size_t offset; /* into pcs_pool */
    uint32_t depth;
};

struct native_writer {
    struct outfile *out;
    FILE *stream;
    bool failed;
    bool published;
    unsigned char *buf; /* whole records waiting for the stream */
    size_t len;
    uint64_t written; /* bytes handed to the stream (before compression) */
    uint64_t last_flush_ns;

    struct stack_entry *stacks; /* stack id - 1 */
    size_t nstacks, stacks_cap;
    uint64_t *pcs_pool;
    size_t pool_len, pool_cap;
    uint32_t *slots; /* open addressing: stack id, 0 = empty */
    size_t nslots;   /* a power of two, kept at most half full */
    uint32_t nvalue_types;
};

/* --- encoding ------------------------------------------------------------- */

static unsigned char *put_u8(unsigned char *p, uint8_t v)
{
    p[0] = v;
    return p + 1;
}

static unsigned char *put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    return p + 2;
}

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

static unsigned char *put_f64(unsigned char *p, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof(bits));
    return put_u64(p, bits);
}

static unsigned char *put_bytes(unsigned char *p, const void *data, uint32_t len)
{
    p = put_u32(p, len);
    if (len)
        memcpy(p, data, len);
    return p + len;
}

/* A string longer than the format allows is cut, never refused: the reader
 * would reject the whole record otherwise. */
static uint32_t str_len(const char *s)
{
    return s ? (uint32_t)strnlen(s, STRING_MAX) : 0;
}

static unsigned char *put_str(unsigned char *p, const char *s)
{
    return put_bytes(p, s ? s : "", str_len(s));
}

/* --- output --------------------------------------------------------------- */

static int write_failed(struct native_writer *w)
{
    if (!w->failed)
        pt_err("cannot write '%s': %s", outfile_path(w->out),
               errno ? strerror(errno) : "write error");
    w->failed = true;
    return -1;
}

static int drain(struct native_writer *w)
{
    if (w->len == 0)
        return 0;
    errno = 0;
    size_t n = w->len;
    w->len = 0;
    if (fwrite(w->buf, n, 1, w->stream) != 1)
        return write_failed(w);
    w->written += n;
    return 0;
}

uint64_t native_writer_bytes(const struct native_writer *w)
{
    return w->written + w->len;
}

/* Hand everything written so far to the kernel: what a SIGKILL cannot undo. */
static int flush_all(struct native_writer *w)
{
    if (drain(w) != 0)
        return -1;
    errno = 0;
    if (fflush(w->stream) != 0)
        return write_failed(w);
    w->last_flush_ns = monotonic_ns();
    return 0;
}

/* Room for a record of PAYLOAD bytes; NULL when it does not fit the buffer
 * at all (the caller then formats it elsewhere). */
static unsigned char *reserve(struct native_writer *w, size_t payload)
{
    size_t need = REC_HEADER_SIZE + payload;
    if (need > BUF_SIZE)
        return NULL;
    if (BUF_SIZE - w->len < need && drain(w) != 0)
        return NULL;
    return w->buf + w->len;
}

static unsigned char *put_header(unsigned char *p, uint16_t type, uint32_t payload)
{
    p = put_u16(p, type);
    p = put_u16(p, 0); /* no type this writer knows is critical */
    return put_u32(p, payload);
}

/* Start a record: returns where its payload goes, in the buffer or, for a
 * record larger than it, in *BIG which the caller passes to end_record(). */
static unsigned char *begin_record(struct native_writer *w, uint16_t type, size_t payload,
                                   unsigned char **big)
{
    *big = NULL;
    if (w->failed)
        return NULL;
    if (payload > PAYLOAD_MAX) {
        pt_err("cannot write '%s': a record of type %u needs %zu bytes, more than the format's "
               "limit of %u",
               outfile_path(w->out), type, payload, PAYLOAD_MAX);
        return NULL;
    }
    unsigned char *p = reserve(w, payload);
    if (!p) {
        if (w->failed)
            return NULL;
        p = *big = xmalloc(8 + payload);
    }
    return put_header(p, type, (uint32_t)payload);
}

static int end_record(struct native_writer *w, unsigned char *end, unsigned char *big)
{
    if (!big) {
        w->len = (size_t)(end - w->buf);
        return 0;
    }
    int rc = drain(w);
    errno = 0;
    if (rc == 0 && fwrite(big, (size_t)(end - big), 1, w->stream) != 1)
        rc = write_failed(w);
    free(big);
    return rc;
}

/* --- life cycle ----------------------------------------------------------- */

struct native_writer *native_writer_open(const char *path)
{
    struct outfile *out = outfile_open(path);
    if (!out)
        return NULL;
    struct native_writer *w = xcalloc(1, sizeof(*w));
    w->out = out;
    w->stream = outfile_stream(out);
    w->buf = xmalloc(BUF_SIZE);
    memcpy(w->buf, NATIVE_MAGIC, 8);
    unsigned char *p = put_u16(w->buf + 8, NATIVE_MAJOR);
    p = put_u16(p, NATIVE_MINOR);
    p = put_u32(p, 0);
    w->len = (size_t)(p - w->buf);
    w->last_flush_ns = monotonic_ns();
    return w;
}

int native_writer_publish(struct native_writer *w)
{
    if (w->failed || drain(w) != 0)
        return -1;
    if (outfile_publish(w->out) != 0)
        return -1;
    w->published = true;
    w->last_flush_ns = monotonic_ns();
    return 0;
}

static void writer_free(struct native_writer *w)
{
    free(w->buf);
    free(w->stacks);
    free(w->pcs_pool);
    free(w->slots);
    free(w);
}

int native_writer_finish(struct native_writer *w, const struct prof_totals *t)
{
    unsigned char *big = NULL;
    unsigned char *p = t ? begin_record(w, REC_END, 32, &big) : NULL;
    if (p) {
        p = put_u64(p, t->wall_ns);
        p = put_u64(p, t->latency_ns);
        p = put_u64(p, t->samples);
        p = put_u64(p, t->ideal_samples);
        end_record(w, p, big);
    }
    int rc = -1;
    if (!w->failed && drain(w) == 0) {
        rc = outfile_commit(w->out);
    } else {
        outfile_abort(w->out);
    }
    writer_free(w);
    return rc;
}

void native_writer_abort(struct native_writer *w)
{
    if (!w)
        return;
    /* Once published, the records already written are the profile. */
    if (w->published && !w->failed)
        flush_all(w);
    outfile_abort(w->out);
    writer_free(w);
}

/* --- records -------------------------------------------------------------- */

static int simple_end(struct native_writer *w, unsigned char *p, unsigned char *big)
{
    if (!p)
        return -1;
    return end_record(w, p, big);
}

int native_write_meta(struct native_writer *w, const char *key, const char *value)
{
    unsigned char *big;
    unsigned char *p = begin_record(w, REC_META, 8 + (size_t)str_len(key) + str_len(value), &big);
    if (p) {
        p = put_str(p, key);
        p = put_str(p, value);
    }
    return simple_end(w, p, big);
}

int native_write_channel(struct native_writer *w, uint32_t id, const struct pmu_channel *ch)
{
    uint32_t nlen = (uint32_t)strnlen(ch->name, sizeof(ch->name));
    uint32_t ulen = (uint32_t)strnlen(ch->unit, sizeof(ch->unit));
    unsigned char *big;
    unsigned char *p = begin_record(w, REC_CHANNEL, 16 + (size_t)nlen + ulen, &big);
    if (p) {
        p = put_u32(p, id);
        p = put_u32(p, (uint32_t)ch->kind);
        p = put_bytes(p, ch->name, nlen);
        p = put_bytes(p, ch->unit, ulen);
    }
    return simple_end(w, p, big);
}

int native_write_process(struct native_writer *w, uint32_t pid, uint32_t ppid, uint64_t time_ns)
{
    unsigned char *big;
    unsigned char *p = begin_record(w, REC_PROCESS, 16, &big);
    if (p) {
        p = put_u32(p, pid);
        p = put_u32(p, ppid);
        p = put_u64(p, time_ns);
    }
    return simple_end(w, p, big);
}

int native_write_exec(struct native_writer *w, uint32_t pid, uint64_t time_ns, const char *path)
{
    unsigned char *big;
    unsigned char *p = begin_record(w, REC_EXEC, 16 + (size_t)str_len(path), &big);
    if (p) {
        p = put_u32(p, pid);
        p = put_u64(p, time_ns);
        p = put_str(p, path);
    }
    return simple_end(w, p, big);
}

int native_write_exit(struct native_writer *w, uint32_t pid, uint64_t time_ns, int32_t status)
{
    unsigned char *big;
    unsigned char *p = begin_record(w, REC_EXIT, 16, &big);
    if (p) {
        p = put_u32(p, pid);
        p = put_u64(p, time_ns);
        p = put_u32(p, (uint32_t)status);
    }
    return simple_end(w, p, big);
}

int native_write_thread(struct native_writer *w, uint32_t pid, uint32_t tid, uint64_t time_ns,
                        const char *name)
{
    unsigned char *big;
    unsigned char *p = begin_record(w, REC_THREAD, 20 + (size_t)str_len(name), &big);
    if (p) {
        p = put_u32(p, pid);
        p = put_u32(p, tid);
        p = put_u64(p, time_ns);
        p = put_str(p, name);
    }
    return simple_end(w, p, big);
}

int native_write_thread_exit(struct native_writer *w, uint32_t tid, uint64_t time_ns)
{
    unsigned char *big;
    unsigned char *p = begin_record(w, REC_THREAD_EXIT, 12, &big);
    if (p) {
        p = put_u32(p, tid);
        p = put_u64(p, time_ns);
    }
    return simple_end(w, p, big);
}

int native_write_map(struct native_writer *w, const struct prof_map *m)
{
    uint32_t blen = m->build_id_len > PROF_BUILD_ID_MAX ? PROF_BUILD_ID_MAX : m->build_id_len;
    unsigned char *big;
    size_t payload = 4 + 8 + 8 * 4 + 4 * 3 + 4 + blen + 4 + (size_t)str_len(m->path);
    unsigned char *p = begin_record(w, REC_MAP, payload, &big);
    if (p) {
        p = put_u32(p, m->pid);
        p = put_u64(p, m->time_ns);
        p = put_u64(p, m->start);
        p = put_u64(p, m->end);
        p = put_u64(p, m->offset);
        p = put_u64(p, m->inode);
        p = put_u32(p, m->dev_major);
        p = put_u32(p, m->dev_minor);
        p = put_u32(p, m->perms);
        p = put_bytes(p, m->build_id, blen);
        p = put_str(p, m->path);
    }
    return simple_end(w, p, big);
}

int native_write_unmap(struct native_writer *w, uint32_t pid, uint64_t time_ns, uint64_t start,
                       uint64_t end)
{
    unsigned char *big;
    unsigned char *p = begin_record(w, REC_UNMAP, 28, &big);
    if (p) {
        p = put_u32(p, pid);
        p = put_u64(p, time_ns);
        p = put_u64(p, start);
        p = put_u64(p, end);
    }
    return simple_end(w, p, big);
}

int native_write_image(struct native_writer *w, uint32_t pid, uint64_t start, const char *name,
                       const void *data, size_t size)
{
    if (size > PAYLOAD_MAX) {
        pt_err("cannot write '%s': image '%s' of %zu bytes exceeds the format's limit",
               outfile_path(w->out), name ? name : "", size);
        return -1;
    }
    unsigned char *big;
    size_t payload = 4 + 8 + 4 + (size_t)str_len(name) + 4 + size;
    unsigned char *p = begin_record(w, REC_IMAGE, payload, &big);
    if (p) {
        p = put_u32(p, pid);
        p = put_u64(p, start);
        p = put_str(p, name);
        p = put_bytes(p, data, (uint32_t)size);
    }
    return simple_end(w, p, big);
}

/* --- stacks --------------------------------------------------------------- */

static void rehash(struct native_writer *w)
{
    size_t n = w->nslots ? w->nslots * 2 : 1024;
    free(w->slots);
    w->slots = xcalloc(n, sizeof(*w->slots));
    w->nslots = n;
    for (size_t i = 0; i < w->nstacks; i++) {
        size_t s = (size_t)w->stacks[i].hash & (n - 1);
        while (w->slots[s])
            s = (s + 1) & (n - 1);
        w->slots[s] = (uint32_t)(i + 1);
    }
}

uint32_t native_stack_id(struct native_writer *w, const uint64_t *pcs, uint32_t depth)
{
    if (w->failed || depth == 0)
        return 0;
    /* The format's limit; the frames nearest the leaf matter most. */
    if (depth > STACK_DEPTH_MAX)
        depth = STACK_DEPTH_MAX;
    if (w->nstacks >= UINT32_MAX - 1)
        return 0;
    if ((w->nstacks + 1) * 2 > w->nslots)
        rehash(w);

    uint64_t h = hash_u64s(pcs, depth);
    size_t mask = w->nslots - 1;
    size_t s = (size_t)h & mask;
    for (; w->slots[s]; s = (s + 1) & mask) {
        const struct stack_entry *e = &w->stacks[w->slots[s] - 1];
        if (e->hash == h && e->depth == depth &&
            memcmp(w->pcs_pool + e->offset, pcs, depth * sizeof(*pcs)) == 0)
            return w->slots[s];
    }

    uint32_t id = (uint32_t)w->nstacks + 1;
    unsigned char *big;
    unsigned char *p = begin_record(w, REC_STACK, 12 + (size_t)depth * 8, &big);
    if (!p)
        return 0;
    p = put_u32(p, id);
    p = put_u32(p, 0); /* full stacks; the parent field is for a compact encoding */
    p = put_u32(p, depth);
    for (uint32_t i = 0; i < depth; i++)
        p = put_u64(p, pcs[i]);
    if (end_record(w, p, big) != 0)
        return 0;

    w->pcs_pool = xgrow(w->pcs_pool, &w->pool_cap, w->pool_len + depth, sizeof(*w->pcs_pool));
    memcpy(w->pcs_pool + w->pool_len, pcs, depth * sizeof(*pcs));
    w->stacks = xgrow(w->stacks, &w->stacks_cap, w->nstacks + 1, sizeof(*w->stacks));
    w->stacks[w->nstacks++] =
        (struct stack_entry){.hash = h, .offset = w->pool_len, .depth = depth};
    w->pool_len += depth;
    w->slots[s] = id;
    return id;
}

/* --- samples -------------------------------------------------------------- */

int native_write_value_type(struct native_writer *w, uint32_t id, const char *name,
                            const char *unit, enum prof_value_agg agg)
{
    if (id != w->nvalue_types || id >= PROF_VALUE_TYPES_MAX) {
        pt_err("cannot write '%s': value type %u declared out of order or beyond the limit of %u",
               outfile_path(w->out), id, PROF_VALUE_TYPES_MAX);
        w->failed = true;
        return -1;
    }
    unsigned char *big;
    size_t payload = VALUE_TYPE_FIXED + 8 + (size_t)str_len(name) + str_len(unit);
    unsigned char *p = begin_record(w, REC_VALUE_TYPE, payload, &big);
    if (!p)
        return -1;
    p = put_u32(p, id);
    p = put_u32(p, (uint32_t)agg);
    p = put_str(p, name);
    p = put_str(p, unit);
    if (end_record(w, p, big) != 0)
        return -1;
    w->nvalue_types++;
    return 0;
}

static bool all_ones(const uint64_t *weights, uint32_t n)
{
    for (uint32_t i = 0; weights && i < n; i++)
        if (weights[i] != 1)
            return false;
    return true;
}

int native_write_sample(struct native_writer *w, uint64_t time_ns, const double *values,
                        uint32_t nvalues, const struct prof_thread_sample *threads,
                        uint32_t nthreads)
{
    return native_write_sample_values(w, time_ns, values, nvalues, threads, nthreads, NULL, NULL);
}

int native_write_sample_values(struct native_writer *w, uint64_t time_ns, const double *values,
                               uint32_t nvalues, const struct prof_thread_sample *threads,
                               uint32_t nthreads, const uint64_t *weights,
                               const uint64_t *thread_values)
{
    /* Weights of 1 and no values: the SAMPLE of version 1.0, byte for
     * byte.  Otherwise the 1.1 extension after the thread list. */
    uint32_t nweights = all_ones(weights, nthreads) ? 0 : nthreads;
    uint32_t per_thread = thread_values && nthreads ? w->nvalue_types : 0;
    bool extended = nweights || per_thread;
    unsigned char *big;
    size_t payload = 8 + 4 + (size_t)nvalues * 8 + 4 + (size_t)nthreads * THREAD_SIZE;
    if (extended)
        payload += 4 + (size_t)nweights * 8 + 4 + (size_t)nthreads * per_thread * 8;
    unsigned char *p = begin_record(w, REC_SAMPLE, payload, &big);
    if (!p)
        return -1;
    p = put_u64(p, time_ns);
    p = put_u32(p, nvalues);
    for (uint32_t i = 0; i < nvalues; i++)
        p = put_f64(p, values[i]);
    p = put_u32(p, nthreads);
    for (uint32_t i = 0; i < nthreads; i++) {
        const struct prof_thread_sample *t = &threads[i];
        p = put_u32(p, t->pid);
        p = put_u32(p, t->tid);
        p = put_u64(p, t->pc);
        p = put_u64(p, t->cpu_ns);
        p = put_u32(p, t->stack);
        p = put_u32(p, (uint32_t)t->syscall);
        p = put_u32(p, t->flags);
    }
    if (extended) {
        p = put_u32(p, nweights);
        for (uint32_t i = 0; i < nweights; i++)
            p = put_u64(p, weights[i]);
        p = put_u32(p, per_thread);
        for (size_t i = 0; i < (size_t)nthreads * per_thread; i++)
            p = put_u64(p, thread_values[i]);
    }
    if (end_record(w, p, big) != 0)
        return -1;
    if (monotonic_ns() - w->last_flush_ns >= FLUSH_NS)
        return flush_all(w);
    return 0;
}

/* --- symbol tables -------------------------------------------------------- */

static uint32_t str_len_max(const char *s, uint32_t max)
{
    return s ? (uint32_t)strnlen(s, max) : 0;
}

static unsigned char *put_str_max(unsigned char *p, const char *s, uint32_t max)
{
    return put_bytes(p, s ? s : "", str_len_max(s, max));
}

/* The frames a LOCATION keeps: all of them, or for an absurd inline chain
 * what a reader shows first (the innermost frames) and what it aggregates
 * by (the last, the function the code was compiled into). */
static uint32_t location_frames(const struct prof_location *loc)
{
    return loc->nframes > NATIVE_LOCATION_FRAMES_MAX ? NATIVE_LOCATION_FRAMES_MAX : loc->nframes;
}

static const struct prof_sym_frame *location_frame(const struct prof_location *loc, uint32_t i)
{
    if (loc->nframes > NATIVE_LOCATION_FRAMES_MAX && i == NATIVE_LOCATION_FRAMES_MAX - 1)
        return &loc->frames[loc->nframes - 1];
    return &loc->frames[i];
}

/* Payload of a LOCATION whose strings are cut at MAX bytes. */
static size_t location_payload(const struct prof_location *loc, uint32_t max)
{
    uint32_t n = location_frames(loc);
    size_t payload = LOCATION_FIXED + (size_t)n * FRAME_FIXED;
    for (uint32_t i = 0; i < n; i++) {
        const struct prof_sym_frame *f = location_frame(loc, i);
        payload += (size_t)str_len_max(f->binary, max) + str_len_max(f->path, max) +
                   str_len_max(f->function, max) + str_len_max(f->mangled, max) +
                   str_len_max(f->file, max);
    }
    return payload;
}

int native_write_location(struct native_writer *w, const struct prof_location *loc)
{
    if (w->failed)
        return -1;
    uint32_t n = location_frames(loc);
    /* Strings of up to 1 MiB each could overflow a record's 64 MiB; then
     * every string is cut to an equal share instead of losing the record. */
    uint32_t max = STRING_MAX;
    size_t payload = location_payload(loc, max);
    if (payload > PAYLOAD_MAX) {
        max = (uint32_t)((PAYLOAD_MAX - LOCATION_FIXED - (size_t)n * FRAME_FIXED) /
                         ((size_t)n * FRAME_STRINGS));
        payload = location_payload(loc, max);
    }
    unsigned char *big;
    unsigned char *p = begin_record(w, REC_LOCATION, payload, &big);
    if (!p)
        return -1;
    p = put_u32(p, loc->pid);
    p = put_u64(p, loc->pc);
    p = put_u8(p, loc->return_address ? LOCATION_RETURN_ADDRESS : 0);
    p = put_u64(p, loc->offset);
    p = put_u32(p, n);
    for (uint32_t i = 0; i < n; i++) {
        const struct prof_sym_frame *f = location_frame(loc, i);
        p = put_str_max(p, f->binary, max);
        p = put_str_max(p, f->path, max);
        p = put_str_max(p, f->function, max);
        p = put_str_max(p, f->mangled, max);
        p = put_str_max(p, f->file, max);
        p = put_u32(p, f->line);
        p = put_u8(p, f->inlined ? 1 : 0);
    }
    return end_record(w, p, big);
}
