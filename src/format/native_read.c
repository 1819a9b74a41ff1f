/*
 * native_read.c - reader half of native.h (docs/format.md), and the
 * record-by-record dump that `ptprof dump` prints.
 *
 * Records come one at a time from a stream (util/instream.h): a file, a
 * pipe or memory, decompressed as read.  Nothing after the record being
 * read is decoded, so damage ends the reading, and a known record is held
 * only while it is applied.  Three layers, so that loading and dumping
 * agree on what is damage:
 *  - the decoder turns one record into a typed view pointing into the
 *    stream's buffer, after checking every field, string and array against
 *    the record's own length;
 *  - the validator checks what a record says about earlier ones (ids in
 *    order, references to records already read, depth and expansion
 *    limits) keeping only counters and small id tables;
 *  - the loader applies a valid record to the struct profile; the dumper
 *    prints it.
 * Nothing is allocated before the bytes that justify it have been checked,
 * and the only in-memory expansion, stacks naming a parent, is capped by a
 * budget proportional to the input.
 */
#include "format/native.h"
#include "format/native_records.h"
#include "util/instream.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Stacks that name a parent expand in memory; a hostile file of tiny
 * records must not turn into gigabytes, so the expansion is capped by the
 * bytes read up to each STACK record. */
#define FRAME_BUDGET_FIXED (64u << 20)
#define FRAME_BUDGET_PER_BYTE 32u

static const char *const type_names[] = {
    [REC_META] = "META",
    [REC_CHANNEL] = "CHANNEL",
    [REC_PROCESS] = "PROCESS",
    [REC_EXEC] = "EXEC",
    [REC_EXIT] = "EXIT",
    [REC_THREAD] = "THREAD",
    [REC_THREAD_EXIT] = "THREAD_EXIT",
    [REC_MAP] = "MAP",
    [REC_UNMAP] = "UNMAP",
    [REC_IMAGE] = "IMAGE",
    [REC_STACK] = "STACK",
    [REC_SAMPLE] = "SAMPLE",
    [REC_END] = "END",
    [REC_VALUE_TYPE] = "VALUE_TYPE",
    [REC_LOCATION] = "LOCATION",
};

static const char *type_name(unsigned type)
{
    if (type < sizeof(type_names) / sizeof(type_names[0]) && type_names[type])
        return type_names[type];
    return "unknown";
}

/* --- decoding ------------------------------------------------------------- */

static uint16_t get_u16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_u64(const unsigned char *p)
{
    return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}

static double get_f64(const unsigned char *p)
{
    uint64_t bits = get_u64(p);
    double d;
    memcpy(&d, &bits, sizeof(d));
    return d;
}

struct str {
    const unsigned char *p;
    uint32_t len;
};

/* One record, decoded: pointers into the input, valid while it is. */
struct rec {
    unsigned type, flags;
    uint32_t len;    /* payload bytes */
    uint64_t offset; /* of the record header */
    bool cut;        /* damage: the data ends inside this record */
    union {
        struct {
            struct str key, value;
        } meta;
        struct {
            uint32_t id, kind;
            struct str name, unit;
        } channel;
        struct {
            uint32_t pid, ppid;
            uint64_t time;
        } process;
        struct {
            uint32_t pid;
            uint64_t time;
            struct str path;
        } exec;
        struct {
            uint32_t pid;
            uint64_t time;
            int32_t status;
        } exit;
        struct {
            uint32_t pid, tid;
            uint64_t time;
            struct str name;
        } thread;
        struct {
            uint32_t tid;
            uint64_t time;
        } thread_exit;
        struct {
            uint32_t pid;
            uint64_t time, start, end, offset, inode;
            uint32_t dev_major, dev_minor, perms;
            struct str build_id, path;
        } map;
        struct {
            uint32_t pid;
            uint64_t time, start, end;
        } unmap;
        struct {
            uint32_t pid;
            uint64_t start;
            struct str name, data;
        } image;
        struct {
            uint32_t id, parent, count;
            const unsigned char *pcs;
        } stack;
        struct {
            uint32_t id, agg;
            struct str name, unit;
        } value_type;
        struct {
            uint64_t time;
            uint32_t nvalues, nthreads;
            const unsigned char *values, *threads;
            uint32_t nweights, per_thread; /* the 1.1 extension: 0 when absent */
            const unsigned char *weights, *thread_values;
        } sample;
        struct {
            uint64_t wall_ns, latency_ns, samples, ideal_samples;
        } end;
        struct {
            uint32_t pid, nframes;
            uint64_t pc, offset;
            uint8_t flags;
            const unsigned char *frames; /* checked by decode, read again by frame_next() */
            size_t frames_len;
        } location;
    };
};

/* Reads fields front to back; the first shortfall is remembered and every
 * later read yields zero, so a decoder checks once at the end. */
struct cursor {
    const unsigned char *p;
    size_t left;
    const char *bad; /* why the record is unusable, NULL while it is fine */
};

static const unsigned char *take(struct cursor *c, size_t n)
{
    if (c->bad || c->left < n) {
        if (!c->bad)
            c->bad = "its fields run past the end of the record";
        return NULL;
    }
    const unsigned char *p = c->p;
    c->p += n;
    c->left -= n;
    return p;
}

static uint8_t take_u8(struct cursor *c)
{
    const unsigned char *p = take(c, 1);
    return p ? p[0] : 0;
}

static uint32_t take_u32(struct cursor *c)
{
    const unsigned char *p = take(c, 4);
    return p ? get_u32(p) : 0;
}

static uint64_t take_u64(struct cursor *c)
{
    const unsigned char *p = take(c, 8);
    return p ? get_u64(p) : 0;
}

static struct str take_bytes(struct cursor *c, uint32_t max, const char *too_long)
{
    struct str s = {NULL, take_u32(c)};
    if (c->bad)
        return s;
    if (s.len > max) {
        c->bad = too_long;
        s.len = 0;
        return s;
    }
    s.p = take(c, s.len);
    if (!s.p)
        s.len = 0;
    return s;
}

static struct str take_str(struct cursor *c)
{
    struct str s = take_bytes(c, STRING_MAX, "a string is longer than the 1 MiB limit");
    if (!c->bad && s.len && memchr(s.p, '\0', s.len)) {
        c->bad = "a string contains a NUL byte";
        s.len = 0;
    }
    return s;
}

/* One frame of a LOCATION record. */
struct frame_view {
    struct str binary, path, function, mangled, file;
    uint32_t line;
    bool inlined;
};

static void take_frame(struct cursor *c, struct frame_view *f)
{
    f->binary = take_str(c);
    f->path = take_str(c);
    f->function = take_str(c);
    f->mangled = take_str(c);
    f->file = take_str(c);
    f->line = take_u32(c);
    f->inlined = take_u8(c) != 0;
}

/* Check a LOCATION's frames once, front to back, without keeping them: the
 * loader and the dumper walk them again with take_frame(). */
static const char *decode_location(struct rec *r, struct cursor *c)
{
    r->location.pid = take_u32(c);
    r->location.pc = take_u64(c);
    r->location.flags = take_u8(c);
    r->location.offset = take_u64(c);
    r->location.nframes = take_u32(c);
    if (c->bad)
        return c->bad;
    if (r->location.nframes > NATIVE_LOCATION_FRAMES_MAX)
        return "more frames than the limit of 256";
    if (r->location.nframes > c->left / FRAME_FIXED)
        return "its frame count exceeds what the record holds";
    r->location.frames = c->p;
    for (uint32_t i = 0; i < r->location.nframes && !c->bad; i++) {
        struct frame_view f;
        take_frame(c, &f);
    }
    r->location.frames_len = (size_t)(c->p - r->location.frames);
    return c->bad;
}

/* Since 1.1 a SAMPLE may go on after its threads: u32 nweights (0 or
 * nthreads), u64 weights, u32 values per thread, u64 values (thread by
 * thread).  What follows them belongs to a newer minor version. */
static const char *decode_sample_extension(struct rec *r, struct cursor *c)
{
    uint32_t n = r->sample.nthreads;
    r->sample.nweights = take_u32(c);
    if (!c->bad && r->sample.nweights != 0 && r->sample.nweights != n)
        return "its weight count is neither 0 nor its thread count";
    r->sample.weights = take(c, (size_t)r->sample.nweights * 8);
    r->sample.per_thread = take_u32(c);
    if (c->bad)
        return c->bad;
    if (r->sample.per_thread > PROF_VALUE_TYPES_MAX)
        return "more values per thread than the limit of 64";
    if (n && (size_t)r->sample.per_thread > c->left / 8 / n)
        return "its value count exceeds what the record holds";
    r->sample.thread_values = take(c, (size_t)n * r->sample.per_thread * 8);
    for (uint32_t i = 0; !c->bad && i < r->sample.nweights; i++)
        if (get_u64(r->sample.weights + 8 * (size_t)i) == 0)
            return "a thread has a weight of 0";
    return c->bad;
}

/* Fill R's view of a known type from its payload; NULL or why it is bad. */
static const char *decode(struct rec *r, const unsigned char *payload)
{
    struct cursor c = {payload, r->len, NULL};
    switch (r->type) {
    case REC_META:
        r->meta.key = take_str(&c);
        r->meta.value = take_str(&c);
        break;
    case REC_CHANNEL:
        r->channel.id = take_u32(&c);
        r->channel.kind = take_u32(&c);
        r->channel.name = take_str(&c);
        r->channel.unit = take_str(&c);
        break;
    case REC_PROCESS:
        r->process.pid = take_u32(&c);
        r->process.ppid = take_u32(&c);
        r->process.time = take_u64(&c);
        break;
    case REC_EXEC:
        r->exec.pid = take_u32(&c);
        r->exec.time = take_u64(&c);
        r->exec.path = take_str(&c);
        break;
    case REC_EXIT:
        r->exit.pid = take_u32(&c);
        r->exit.time = take_u64(&c);
        r->exit.status = (int32_t)take_u32(&c);
        break;
    case REC_THREAD:
        r->thread.pid = take_u32(&c);
        r->thread.tid = take_u32(&c);
        r->thread.time = take_u64(&c);
        r->thread.name = take_str(&c);
        break;
    case REC_THREAD_EXIT:
        r->thread_exit.tid = take_u32(&c);
        r->thread_exit.time = take_u64(&c);
        break;
    case REC_MAP:
        r->map.pid = take_u32(&c);
        r->map.time = take_u64(&c);
        r->map.start = take_u64(&c);
        r->map.end = take_u64(&c);
        r->map.offset = take_u64(&c);
        r->map.inode = take_u64(&c);
        r->map.dev_major = take_u32(&c);
        r->map.dev_minor = take_u32(&c);
        r->map.perms = take_u32(&c);
        r->map.build_id = take_bytes(&c, PROF_BUILD_ID_MAX, "the build-id is longer than 64 bytes");
        r->map.path = take_str(&c);
        break;
    case REC_UNMAP:
        r->unmap.pid = take_u32(&c);
        r->unmap.time = take_u64(&c);
        r->unmap.start = take_u64(&c);
        r->unmap.end = take_u64(&c);
        break;
    case REC_IMAGE:
        r->image.pid = take_u32(&c);
        r->image.start = take_u64(&c);
        r->image.name = take_str(&c);
        r->image.data = take_bytes(&c, PAYLOAD_MAX, "the image is larger than a record");
        break;
    case REC_STACK:
        r->stack.id = take_u32(&c);
        r->stack.parent = take_u32(&c);
        r->stack.count = take_u32(&c);
        if (!c.bad && r->stack.count > STACK_DEPTH_MAX)
            return "more frames than the depth limit of 4096";
        r->stack.pcs = take(&c, (size_t)r->stack.count * 8);
        break;
    case REC_SAMPLE:
        r->sample.time = take_u64(&c);
        r->sample.nvalues = take_u32(&c);
        /* The count is checked against the bytes present before use. */
        if (!c.bad && r->sample.nvalues > c.left / 8)
            return "its value count exceeds what the record holds";
        r->sample.values = take(&c, (size_t)r->sample.nvalues * 8);
        r->sample.nthreads = take_u32(&c);
        if (!c.bad && r->sample.nthreads > c.left / THREAD_SIZE)
            return "its thread count exceeds what the record holds";
        r->sample.threads = take(&c, (size_t)r->sample.nthreads * THREAD_SIZE);
        if (!c.bad && c.left > 0)
            return decode_sample_extension(r, &c);
        break;
    case REC_VALUE_TYPE:
        r->value_type.id = take_u32(&c);
        r->value_type.agg = take_u32(&c);
        r->value_type.name = take_str(&c);
        r->value_type.unit = take_str(&c);
        break;
    case REC_END:
        r->end.wall_ns = take_u64(&c);
        r->end.latency_ns = take_u64(&c);
        r->end.samples = take_u64(&c);
        r->end.ideal_samples = take_u64(&c);
        break;
    case REC_LOCATION:
        return decode_location(r, &c);
    default:
        break;
    }
    /* Bytes left over are fields of a newer minor version: ignored. */
    return c.bad;
}

static bool known_type(unsigned type)
{
    return (type >= REC_META && type <= REC_VALUE_TYPE) || type == REC_LOCATION;
}

enum step {
    STEP_RECORD,   /* R holds a valid known record */
    STEP_SKIP,     /* an unknown, non-critical record: skipped */
    STEP_EOF,      /* no bytes left */
    STEP_DAMAGE,   /* cut short or malformed: the profile ends here */
    STEP_CRITICAL, /* unknown and critical: the file cannot be read */
};

/* The record at the stream's position: decode it and move past it.  R's
 * views point into the stream's buffer, valid until the next call on it. */
static enum step next_record(struct instream *in, struct rec *r, char *why, size_t whylen)
{
    memset(r, 0, sizeof(*r));
    r->offset = instream_offset(in);
    const unsigned char *d;
    size_t got = instream_peek(in, REC_HEADER_SIZE, &d);
    if (got == 0)
        return STEP_EOF;
    if (got < REC_HEADER_SIZE) {
        snprintf(why, whylen, "the file ends inside a record header (%zu of %u bytes)", got,
                 REC_HEADER_SIZE);
        r->cut = true;
        return STEP_DAMAGE;
    }
    r->type = get_u16(d);
    r->flags = get_u16(d + 2);
    r->len = get_u32(d + 4);
    if (r->type == 0) {
        /* No writer writes type 0: this is what zeroed blocks, padding or
         * a stream of zeros look like, never a record to skip. */
        snprintf(why, whylen, "a record of type 0 (zero bytes where a record belongs)");
        return STEP_DAMAGE;
    }
    if (r->len > PAYLOAD_MAX) {
        snprintf(why, whylen,
                 "%s record (type %u) claims %" PRIu32 " bytes, more than the 64 MiB "
                 "limit",
                 type_name(r->type), r->type, r->len);
        return STEP_DAMAGE;
    }
    bool known = known_type(r->type);
    if (!known && (r->flags & REC_CRITICAL)) {
        snprintf(why, whylen,
                 "record type %u is marked critical and this reader does not "
                 "know it (written by a newer ptprof?)",
                 r->type);
        return STEP_CRITICAL;
    }
    /* An unknown record is skipped without being kept; a known one is
     * seen whole (the buffer grows with the bytes that arrive, not with
     * the length the header claims). */
    size_t avail;
    if (known) {
        avail = instream_peek(in, REC_HEADER_SIZE + (size_t)r->len, &d) - REC_HEADER_SIZE;
    } else {
        instream_consume(in, REC_HEADER_SIZE);
        avail = (size_t)instream_skip(in, r->len);
    }
    if (r->len > avail) {
        snprintf(why, whylen,
                 "the file ends inside a %s record (type %u): %zu of %" PRIu32
                 " payload bytes present",
                 type_name(r->type), r->type, avail, r->len);
        r->cut = true;
        return STEP_DAMAGE;
    }
    if (!known)
        return STEP_SKIP;
    const char *bad = decode(r, d + REC_HEADER_SIZE);
    if (bad) {
        snprintf(why, whylen, "%s record of %" PRIu32 " bytes: %s", type_name(r->type), r->len,
                 bad);
        return STEP_DAMAGE;
    }
    instream_consume(in, REC_HEADER_SIZE + (size_t)r->len);
    return STEP_RECORD;
}

/* The file header, from the stream's first bytes (not consumed); *D
 * points at its 16 bytes.  -1 after a message. */
static int check_header(struct instream *in, const unsigned char **d)
{
    const char *name = instream_name(in);
    size_t len = instream_peek(in, FILE_HEADER_SIZE, d);
    if (instream_end(in) == INSTREAM_FAILED) {
        pt_err("%s", instream_error(in));
        return -1;
    }
    size_t n = len < 8 ? len : 8;
    if (memcmp(*d, NATIVE_MAGIC, n) != 0) {
        pt_err("%s: offset 0: not a ptprof profile (bad magic)", name);
        return -1;
    }
    if (len < FILE_HEADER_SIZE) {
        pt_err("%s: offset %zu: the file ends inside its header (%zu of %u bytes)", name, len, len,
               FILE_HEADER_SIZE);
        return -1;
    }
    unsigned major = get_u16(*d + 8);
    if (major != NATIVE_MAJOR) {
        pt_err("%s: offset 8: format version %u.%u is not supported (this ptprof reads %u.x)", name,
               major, get_u16(*d + 10), NATIVE_MAJOR);
        return -1;
    }
    return 0;
}

int native_is_native(const void *data, size_t len)
{
    return len >= 8 && memcmp(data, NATIVE_MAGIC, 8) == 0;
}

/* A file image that may be native: the magic, or as much of it as there
 * is (a shorter one is a header cut short, said as such). */
static bool image_may_be_native(const void *data, size_t len)
{
    return len == 0 || memcmp(data, NATIVE_MAGIC, len < 8 ? len : 8) == 0;
}

/* --- validation ----------------------------------------------------------- */

/* u32 id -> index, open addressing; the latest insertion of a key wins. */
struct idmap {
    uint32_t *keys;
    size_t *vals; /* index + 1; 0 marks an empty slot */
    size_t used, cap;
};

static size_t id_slot(uint32_t key, size_t cap)
{
    return (size_t)((key * 0x9e3779b1u) ^ (key >> 16)) & (cap - 1);
}

static bool idmap_get(const struct idmap *m, uint32_t key, size_t *val)
{
    if (!m->cap)
        return false;
    for (size_t s = id_slot(key, m->cap); m->vals[s]; s = (s + 1) & (m->cap - 1)) {
        if (m->keys[s] == key) {
            *val = m->vals[s] - 1;
            return true;
        }
    }
    return false;
}

static void idmap_put(struct idmap *m, uint32_t key, size_t val)
{
    if ((m->used + 1) * 2 > m->cap) {
        struct idmap g = {NULL, NULL, 0, m->cap ? m->cap * 2 : 64};
        g.keys = xcalloc(g.cap, sizeof(*g.keys));
        g.vals = xcalloc(g.cap, sizeof(*g.vals));
        for (size_t i = 0; i < m->cap; i++)
            if (m->vals[i])
                idmap_put(&g, m->keys[i], m->vals[i] - 1);
        free(m->keys);
        free(m->vals);
        *m = g;
    }
    size_t s = id_slot(key, m->cap);
    while (m->vals[s] && m->keys[s] != key)
        s = (s + 1) & (m->cap - 1);
    if (!m->vals[s])
        m->used++;
    m->keys[s] = key;
    m->vals[s] = val + 1;
}

static void idmap_free(struct idmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof(*m));
}

/* What a record may refer to: everything the validator needs to decide, and
 * the same numbering the loader gives processes and threads. */
struct validator {
    uint64_t nstacks; /* including the empty stack 0 */
    uint16_t *depth;  /* per stack id */
    size_t depth_cap;
    uint64_t frames;
    uint32_t nchannels, nvalue_types;
    bool sampled, ended;
    struct idmap pids, tids; /* -> index of the latest process / thread */
    size_t nprocesses, nthreads;
};

static void validator_init(struct validator *v)
{
    memset(v, 0, sizeof(*v));
    v->nstacks = 1;
    v->depth = xcalloc(64, sizeof(*v->depth));
    v->depth_cap = 64;
}

static void validator_free(struct validator *v)
{
    free(v->depth);
    idmap_free(&v->pids);
    idmap_free(&v->tids);
}

static int need_process(const struct validator *v, uint32_t pid, char *why, size_t whylen,
                        const char *what)
{
    size_t ignored;
    if (idmap_get(&v->pids, pid, &ignored))
        return 0;
    snprintf(why, whylen,
             "%s names process %" PRIu32 ", which no earlier PROCESS record "
             "introduced",
             what, pid);
    return -1;
}

/* Check R against the records before it, then account for it. */
static int validate(struct validator *v, const struct rec *r, char *why, size_t whylen)
{
    switch (r->type) {
    case REC_CHANNEL:
        if (v->sampled) {
            snprintf(why, whylen, "CHANNEL record after the first SAMPLE");
            return -1;
        }
        if (r->channel.id != v->nchannels) {
            snprintf(why, whylen, "CHANNEL id %" PRIu32 " out of order (expected %" PRIu32 ")",
                     r->channel.id, v->nchannels);
            return -1;
        }
        v->nchannels++;
        return 0;
    case REC_PROCESS:
        idmap_put(&v->pids, r->process.pid, v->nprocesses++);
        return 0;
    case REC_EXEC:
        return need_process(v, r->exec.pid, why, whylen, "EXEC");
    case REC_EXIT:
        return need_process(v, r->exit.pid, why, whylen, "EXIT");
    case REC_THREAD:
        if (need_process(v, r->thread.pid, why, whylen, "THREAD") != 0)
            return -1;
        idmap_put(&v->tids, r->thread.tid, v->nthreads++);
        return 0;
    case REC_THREAD_EXIT: {
        size_t ignored;
        if (idmap_get(&v->tids, r->thread_exit.tid, &ignored))
            return 0;
        snprintf(why, whylen,
                 "THREAD_EXIT names thread %" PRIu32 ", which no earlier THREAD "
                 "record introduced",
                 r->thread_exit.tid);
        return -1;
    }
    case REC_MAP:
        return need_process(v, r->map.pid, why, whylen, "MAP");
    case REC_UNMAP:
        return need_process(v, r->unmap.pid, why, whylen, "UNMAP");
    case REC_IMAGE:
        return need_process(v, r->image.pid, why, whylen, "IMAGE");
    case REC_STACK: {
        if (r->stack.id != v->nstacks) {
            snprintf(why, whylen, "STACK id %" PRIu32 " out of order (expected %" PRIu64 ")",
                     r->stack.id, v->nstacks);
            return -1;
        }
        if (r->stack.parent >= r->stack.id) {
            snprintf(why, whylen,
                     "STACK %" PRIu32 " names parent %" PRIu32 ", which is not an "
                     "earlier stack",
                     r->stack.id, r->stack.parent);
            return -1;
        }
        uint32_t depth = r->stack.count + v->depth[r->stack.parent];
        if (depth > STACK_DEPTH_MAX) {
            snprintf(why, whylen,
                     "STACK %" PRIu32 " is %" PRIu32 " frames deep, more than the "
                     "limit of 4096",
                     r->stack.id, depth);
            return -1;
        }
        /* The input read so far, this record included, pays for it. */
        uint64_t read = r->offset + REC_HEADER_SIZE + r->len;
        uint64_t budget = (FRAME_BUDGET_FIXED + read * FRAME_BUDGET_PER_BYTE) / 8;
        if (depth > budget - v->frames) {
            snprintf(why, whylen,
                     "STACK %" PRIu32 ": the stack table expands beyond %" PRIu64
                     " frames, more than the %" PRIu64 " bytes read so far justify",
                     r->stack.id, budget, read);
            return -1;
        }
        v->frames += depth;
        v->depth = xgrow(v->depth, &v->depth_cap, (size_t)v->nstacks + 1, sizeof(*v->depth));
        v->depth[v->nstacks++] = (uint16_t)depth;
        return 0;
    }
    case REC_VALUE_TYPE:
        if (v->sampled) {
            snprintf(why, whylen, "VALUE_TYPE record after the first SAMPLE");
            return -1;
        }
        if (r->value_type.name.len == 0) {
            snprintf(why, whylen, "VALUE_TYPE %" PRIu32 " has no name", r->value_type.id);
            return -1;
        }
        if (r->value_type.id != v->nvalue_types || r->value_type.id >= PROF_VALUE_TYPES_MAX) {
            snprintf(why, whylen,
                     "VALUE_TYPE id %" PRIu32 " out of order (expected %" PRIu32
                     ", at most %u types)",
                     r->value_type.id, v->nvalue_types, PROF_VALUE_TYPES_MAX);
            return -1;
        }
        v->nvalue_types++;
        return 0;
    case REC_SAMPLE:
        if (r->sample.nvalues != v->nchannels) {
            snprintf(why, whylen, "SAMPLE has %" PRIu32 " values for %" PRIu32 " channels",
                     r->sample.nvalues, v->nchannels);
            return -1;
        }
        if (r->sample.per_thread != 0 && r->sample.per_thread != v->nvalue_types) {
            snprintf(why, whylen,
                     "SAMPLE has %" PRIu32 " values per thread for %" PRIu32 " value types",
                     r->sample.per_thread, v->nvalue_types);
            return -1;
        }
        for (uint32_t i = 0; i < r->sample.nthreads; i++) {
            const unsigned char *t = r->sample.threads + (size_t)i * THREAD_SIZE;
            uint32_t stack = get_u32(t + 24);
            if (stack >= v->nstacks) {
                snprintf(why, whylen,
                         "SAMPLE thread %" PRIu32 " (tid %" PRIu32 ") names stack %" PRIu32
                         ", which does not exist (%" PRIu64 " stacks so far)",
                         i, get_u32(t + 4), stack, v->nstacks - 1);
                return -1;
            }
        }
        v->sampled = true;
        return 0;
    case REC_END:
        v->ended = true;
        return 0;
    case REC_LOCATION:
        return need_process(v, r->location.pid, why, whylen, "LOCATION");
    default:
        return 0;
    }
}

/* Run the validator on record-level outcome STEP: the combined verdict. */
static enum step validate_step(struct validator *v, enum step step, const struct rec *r, char *why,
                               size_t whylen)
{
    if (step == STEP_EOF || step == STEP_DAMAGE || step == STEP_CRITICAL)
        return step;
    if (v->ended) {
        snprintf(why, whylen, "a %s record (type %u) follows the END record", type_name(r->type),
                 r->type);
        return STEP_DAMAGE;
    }
    if (step == STEP_RECORD && validate(v, r, why, whylen) != 0)
        return STEP_DAMAGE;
    return step;
}

/* The records of a stream in order, each judged against those before it:
 * what the loader and the dumper share. */
struct scan {
    struct instream *in;
    struct validator v;
    size_t nrecords;
    char why[512];
};

static void scan_init(struct scan *sc, struct instream *in)
{
    sc->in = in;
    validator_init(&sc->v);
    sc->nrecords = 0;
    sc->why[0] = '\0';
    instream_consume(in, FILE_HEADER_SIZE);
}

static enum step scan_next(struct scan *sc, struct rec *r)
{
    enum step step = next_record(sc->in, r, sc->why, sizeof(sc->why));
    step = validate_step(&sc->v, step, r, sc->why, sizeof(sc->why));
    if (step == STEP_DAMAGE && sc->nrecords == 0 && !r->cut) {
        /* A recorder killed early leaves a header and part of a record;
         * a header followed by something that is no record at all (a
         * stream of zeros, say) is not a profile. */
        size_t n = strlen(sc->why);
        snprintf(sc->why + n, sizeof(sc->why) - n, "; not one record could be read");
        step = STEP_CRITICAL;
    }
    if (step == STEP_RECORD || step == STEP_SKIP)
        sc->nrecords++;
    return step;
}

/* Where the data stopped (at the end, or inside a record): did the input
 * end properly?  0 yes; 1 the compressed data is damaged there (a warning
 * ending in THEN); -1 it could not be read (an error).  Printed. */
static int scan_input_end(const struct scan *sc, const char *then)
{
    switch (instream_end(sc->in)) {
    case INSTREAM_DAMAGED:
        pt_warn("%s; %s", instream_error(sc->in), then);
        return 1;
    case INSTREAM_FAILED:
        pt_err("%s", instream_error(sc->in));
        return -1;
    default:
        return 0;
    }
}

/* --- loading -------------------------------------------------------------- */

/* Indices of the maps still mapped, per process index: what EXEC, UNMAP and
 * an overlapping MAP end.  Kept sorted by start address; since a MAP ends
 * what it overlaps, the live ranges never overlap, so they are sorted by end
 * too and every lookup is a binary search (a process may hold 65536 maps,
 * and the recorder writes them in address order: appending is the common
 * case).  Empty or inverted ranges are never live. */
struct live_maps {
    size_t *idx;
    size_t n, cap;
};

struct loader {
    struct profile *p;
    struct scan sc; /* its validator numbers processes and threads */
    size_t cap_meta, cap_channels, cap_processes, cap_threads, cap_maps, cap_images, cap_stacks,
        cap_samples, cap_locations;
    struct live_maps *live; /* per process index */
    size_t cap_live;
};

static char *dup_str(struct str s)
{
    char *c = xmalloc((size_t)s.len + 1);
    if (s.len)
        memcpy(c, s.p, s.len);
    c[s.len] = '\0';
    return c;
}

static size_t process_index(const struct loader *l, uint32_t pid)
{
    size_t i = 0;
    idmap_get(&l->sc.v.pids, pid, &i); /* the validator made sure it exists */
    return i;
}

/* End every live map of process PI that overlaps [START, END); returns
 * where a map of that range goes in the live list. */
static size_t end_maps(struct loader *l, size_t pi, uint64_t start, uint64_t end, uint64_t time)
{
    struct live_maps *lm = &l->live[pi];
    const struct prof_map *maps = l->p->maps;
    size_t lo = 0, hi = lm->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (maps[lm->idx[mid]].end <= start)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (start >= end)
        return lo;
    size_t k = lo;
    while (k < lm->n && maps[lm->idx[k]].start < end)
        l->p->maps[lm->idx[k++]].unmap_ns = time;
    if (k > lo) {
        memmove(lm->idx + lo, lm->idx + k, (lm->n - k) * sizeof(*lm->idx));
        lm->n -= k - lo;
    }
    return lo;
}

static void apply_map(struct loader *l, const struct rec *r)
{
    struct profile *p = l->p;
    size_t pi = process_index(l, r->map.pid);
    /* A new mapping replaces what it overlaps, as mmap does. */
    size_t at = end_maps(l, pi, r->map.start, r->map.end, r->map.time);
    p->maps = xgrow(p->maps, &l->cap_maps, p->nmaps + 1, sizeof(*p->maps));
    struct prof_map *m = &p->maps[p->nmaps];
    *m = (struct prof_map){
        .pid = r->map.pid,
        .time_ns = r->map.time,
        .start = r->map.start,
        .end = r->map.end,
        .offset = r->map.offset,
        .inode = r->map.inode,
        .dev_major = r->map.dev_major,
        .dev_minor = r->map.dev_minor,
        .perms = r->map.perms,
        .build_id_len = (uint8_t)r->map.build_id.len,
        .path = dup_str(r->map.path),
    };
    if (r->map.build_id.len)
        memcpy(m->build_id, r->map.build_id.p, r->map.build_id.len);
    size_t index = p->nmaps++;
    if (m->start >= m->end)
        return;
    struct live_maps *lm = &l->live[pi];
    lm->idx = xgrow(lm->idx, &lm->cap, lm->n + 1, sizeof(*lm->idx));
    memmove(lm->idx + at + 1, lm->idx + at, (lm->n - at) * sizeof(*lm->idx));
    lm->idx[at] = index;
    lm->n++;
}

static void apply_stack(struct loader *l, const struct rec *r)
{
    struct profile *p = l->p;
    const struct prof_stack *parent = &p->stacks[r->stack.parent];
    uint32_t depth = r->stack.count + parent->depth;
    uint64_t *pcs = depth ? xmalloc((size_t)depth * sizeof(*pcs)) : NULL;
    for (uint32_t i = 0; i < r->stack.count; i++)
        pcs[i] = get_u64(r->stack.pcs + 8 * (size_t)i);
    if (parent->depth)
        memcpy(pcs + r->stack.count, parent->pcs, parent->depth * sizeof(*pcs));
    p->stacks = xgrow(p->stacks, &l->cap_stacks, p->nstacks + 1, sizeof(*p->stacks));
    p->stacks[p->nstacks++] = (struct prof_stack){depth, pcs};
}

static void apply_sample(struct loader *l, const struct rec *r)
{
    struct profile *p = l->p;
    struct prof_sample s = {.time_ns = r->sample.time};
    if (r->sample.nvalues) {
        s.values = xmalloc(r->sample.nvalues * sizeof(double));
        for (uint32_t i = 0; i < r->sample.nvalues; i++)
            s.values[i] = get_f64(r->sample.values + 8 * (size_t)i);
    }
    size_t nv = (size_t)r->sample.nthreads * r->sample.per_thread;
    profile_sample_alloc(p, &s, r->sample.nthreads, r->sample.nweights != 0, nv != 0);
    for (uint32_t i = 0; i < s.nthreads; i++) {
        const unsigned char *t = r->sample.threads + (size_t)i * THREAD_SIZE;
        s.threads[i] = (struct prof_thread_sample){
            .pid = get_u32(t),
            .tid = get_u32(t + 4),
            .pc = get_u64(t + 8),
            .cpu_ns = get_u64(t + 16),
            .stack = get_u32(t + 24),
            .syscall = prof_syscall((int32_t)get_u32(t + 28)),
            .flags = (uint16_t)get_u32(t + 32), /* the flags ptprof knows are 16 bits */
        };
    }
    uint64_t *weights = prof_weights(&s), *values = prof_all_thread_values(&s);
    for (uint32_t i = 0; weights && i < s.nthreads; i++)
        weights[i] = get_u64(r->sample.weights + 8 * (size_t)i);
    for (size_t i = 0; i < nv; i++)
        values[i] = get_u64(r->sample.thread_values + 8 * i);
    p->samples = xgrow(p->samples, &l->cap_samples, p->nsamples + 1, sizeof(*p->samples));
    p->samples[p->nsamples++] = s;
}

static void apply_location(struct loader *l, const struct rec *r)
{
    struct profile *p = l->p;
    struct prof_location loc = {
        .pid = r->location.pid,
        .pc = r->location.pc,
        .return_address = (r->location.flags & LOCATION_RETURN_ADDRESS) != 0,
        .offset = r->location.offset,
        .nframes = r->location.nframes,
    };
    if (loc.nframes)
        loc.frames = xcalloc(loc.nframes, sizeof(*loc.frames));
    struct cursor c = {r->location.frames, r->location.frames_len, NULL};
    for (uint32_t i = 0; i < loc.nframes; i++) {
        struct frame_view f;
        take_frame(&c, &f);
        loc.frames[i] = (struct prof_sym_frame){
            .binary = dup_str(f.binary),
            .path = dup_str(f.path),
            .function = dup_str(f.function),
            .mangled = dup_str(f.mangled),
            .file = dup_str(f.file),
            .line = f.line,
            .inlined = f.inlined,
        };
    }
    p->locations = xgrow(p->locations, &l->cap_locations, p->nlocations + 1, sizeof(*p->locations));
    p->locations[p->nlocations++] = loc;
}

/* Apply a record that passed validation. */
static void apply(struct loader *l, const struct rec *r)
{
    struct profile *p = l->p;
    switch (r->type) {
    case REC_META:
        p->meta = xgrow(p->meta, &l->cap_meta, p->nmeta + 1, sizeof(*p->meta));
        p->meta[p->nmeta++] = (struct prof_meta){dup_str(r->meta.key), dup_str(r->meta.value)};
        break;
    case REC_CHANNEL: {
        /* Kinds are fixed in version 1; anything else reads as custom. */
        enum pmu_kind kind =
            r->channel.kind <= PMU_KIND_ENERGY ? (enum pmu_kind)r->channel.kind : PMU_KIND_CUSTOM;
        p->channels = xgrow(p->channels, &l->cap_channels, p->nchannels + 1, sizeof(*p->channels));
        p->channels[p->nchannels++] =
            (struct prof_channel){dup_str(r->channel.name), dup_str(r->channel.unit), kind};
        break;
    }
    case REC_VALUE_TYPE: {
        /* An aggregation this version does not define reads as a sum. */
        uint32_t agg = r->value_type.agg <= PROF_VALUE_AGG_MAX ? r->value_type.agg : PROF_VALUE_SUM;
        char *name = dup_str(r->value_type.name), *unit = dup_str(r->value_type.unit);
        profile_add_value_type(p, name, unit, (enum prof_value_agg)agg);
        free(name);
        free(unit);
        break;
    }
    case REC_PROCESS:
        p->processes =
            xgrow(p->processes, &l->cap_processes, p->nprocesses + 1, sizeof(*p->processes));
        p->processes[p->nprocesses++] = (struct prof_process){
            .pid = r->process.pid,
            .ppid = r->process.ppid,
            .start_ns = r->process.time,
            .exe = xstrdup(""),
        };
        l->live = xgrow(l->live, &l->cap_live, p->nprocesses, sizeof(*l->live));
        l->live[p->nprocesses - 1] = (struct live_maps){0};
        break;
    case REC_EXEC: {
        size_t pi = process_index(l, r->exec.pid);
        free(p->processes[pi].exe);
        p->processes[pi].exe = dup_str(r->exec.path);
        /* The new program starts with an empty address space. */
        struct live_maps *lm = &l->live[pi];
        for (size_t k = 0; k < lm->n; k++)
            p->maps[lm->idx[k]].unmap_ns = r->exec.time;
        lm->n = 0;
        break;
    }
    case REC_EXIT: {
        struct prof_process *proc = &p->processes[process_index(l, r->exit.pid)];
        proc->exited = true;
        proc->exit_status = r->exit.status;
        proc->exit_ns = r->exit.time;
        break;
    }
    case REC_THREAD:
        p->threads = xgrow(p->threads, &l->cap_threads, p->nthreads + 1, sizeof(*p->threads));
        p->threads[p->nthreads++] = (struct prof_thread){
            .pid = r->thread.pid,
            .tid = r->thread.tid,
            .start_ns = r->thread.time,
            .name = dup_str(r->thread.name),
        };
        break;
    case REC_THREAD_EXIT: {
        size_t ti = 0;
        idmap_get(&l->sc.v.tids, r->thread_exit.tid, &ti);
        p->threads[ti].end_ns = r->thread_exit.time;
        break;
    }
    case REC_MAP:
        apply_map(l, r);
        break;
    case REC_UNMAP:
        end_maps(l, process_index(l, r->unmap.pid), r->unmap.start, r->unmap.end, r->unmap.time);
        break;
    case REC_IMAGE: {
        p->images = xgrow(p->images, &l->cap_images, p->nimages + 1, sizeof(*p->images));
        struct prof_image *im = &p->images[p->nimages++];
        *im = (struct prof_image){
            .pid = r->image.pid,
            .start = r->image.start,
            .name = dup_str(r->image.name),
            .size = r->image.data.len,
        };
        if (im->size) {
            im->data = xmalloc(im->size);
            memcpy(im->data, r->image.data.p, im->size);
        }
        break;
    }
    case REC_STACK:
        apply_stack(l, r);
        break;
    case REC_SAMPLE:
        apply_sample(l, r);
        break;
    case REC_END:
        p->totals = (struct prof_totals){r->end.wall_ns, r->end.latency_ns, r->end.samples,
                                         r->end.ideal_samples};
        p->has_totals = true;
        break;
    case REC_LOCATION:
        apply_location(l, r);
        break;
    default:
        break;
    }
}

static double meta_frequency(const struct profile *p)
{
    const char *s = profile_meta(p, "frequency");
    if (!s)
        return 0;
    char *end;
    double f = strtod(s, &end);
    return end != s && *end == '\0' && isfinite(f) && f > 0 ? f : 0;
}

int native_load_stream(struct instream *in, struct profile *out)
{
    const char *name = instream_name(in);
    const unsigned char *d;
    profile_init(out);
    if (check_header(in, &d) != 0)
        return -1;

    struct loader l = {.p = out};
    struct scan *sc = &l.sc;
    scan_init(sc, in);
    out->format = xstrdup("native");
    out->stacks = xgrow(NULL, &l.cap_stacks, 1, sizeof(*out->stacks));
    out->stacks[0] = (struct prof_stack){0, NULL};
    out->nstacks = 1;

    int rc = 0;
    for (;;) {
        struct rec r;
        enum step step = scan_next(sc, &r);
        if (step == STEP_CRITICAL) {
            pt_err("%s: offset %" PRIu64 ": %s", name, r.offset, sc->why);
            rc = -1;
            break;
        }
        if (step == STEP_DAMAGE) {
            pt_warn("%s: offset %" PRIu64 ": %s; the profile is truncated there (%zu records kept)",
                    name, r.offset, sc->why, sc->nrecords);
            out->truncated = true;
            out->truncated_at = r.offset;
        }
        if (step == STEP_EOF || (step == STEP_DAMAGE && r.cut)) {
            /* What decompressed is a prefix; where the compressed data
             * broke is the useful offset for the user. */
            int end = scan_input_end(sc, "the profile ends there");
            if (end < 0)
                rc = -1;
            if (end > 0 && !out->truncated) {
                out->truncated = true;
                out->truncated_at = instream_offset(in);
            }
        }
        if (step != STEP_RECORD && step != STEP_SKIP)
            break;
        if (step == STEP_RECORD)
            apply(&l, &r);
    }

    for (size_t i = 0; i < out->nprocesses; i++)
        free(l.live[i].idx);
    free(l.live);
    validator_free(&sc->v);
    if (rc != 0) {
        profile_free(out);
        return -1;
    }
    out->frequency = meta_frequency(out);
    const char *metric = profile_meta(out, "default_metric");
    if (metric && *metric)
        out->default_metric = xstrdup(metric);
    return 0;
}

int native_load_buffer(const char *name, const void *data, size_t len, struct profile *out)
{
    /* The bytes are the file image: never taken for a compressed file. */
    if (!image_may_be_native(data, len)) {
        profile_init(out);
        pt_err("%s: offset 0: not a ptprof profile (bad magic)", name);
        return -1;
    }
    struct instream *in = instream_open_memory(name, data, len);
    int rc = native_load_stream(in, out);
    instream_close(in);
    return rc;
}

/* --- dumping -------------------------------------------------------------- */

static void put_quoted(FILE *f, struct str s)
{
    fputc('"', f);
    for (uint32_t i = 0; i < s.len; i++) {
        unsigned char c = s.p[i];
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c == 0x7f)
            fprintf(f, "\\x%02x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

/* Shortest of %.15g and %.17g that reads back as the same double. */
static void put_double(FILE *f, double d)
{
    char buf[40];
    snprintf(buf, sizeof(buf), "%.15g", d);
    if (strtod(buf, NULL) != d && !isnan(d))
        snprintf(buf, sizeof(buf), "%.17g", d);
    fputs(buf, f);
}

static void put_time(FILE *f, const char *label, uint64_t ns)
{
    fprintf(f, " %s=%" PRIu64 ".%09" PRIu64, label, ns / 1000000000u, ns % 1000000000u);
}

/* One line for the address, then its frames indented below it, innermost
 * first, as a sample's threads are. */
static void dump_location(FILE *f, const struct rec *r)
{
    fprintf(f,
            " pid=%" PRIu32 " pc=0x%" PRIx64 " flags=0x%x%s offset=0x%" PRIx64 " frames=%" PRIu32
            "\n",
            r->location.pid, r->location.pc, r->location.flags,
            r->location.flags & LOCATION_RETURN_ADDRESS ? " (return address)" : "",
            r->location.offset, r->location.nframes);
    struct cursor c = {r->location.frames, r->location.frames_len, NULL};
    for (uint32_t i = 0; i < r->location.nframes; i++) {
        struct frame_view fr;
        take_frame(&c, &fr);
        fputs("    function=", f);
        put_quoted(f, fr.function);
        fputs(" mangled=", f);
        put_quoted(f, fr.mangled);
        fputs(" file=", f);
        put_quoted(f, fr.file);
        fprintf(f, " line=%" PRIu32 " binary=", fr.line);
        put_quoted(f, fr.binary);
        fputs(" path=", f);
        put_quoted(f, fr.path);
        fputs(fr.inlined ? " inlined\n" : "\n", f);
    }
}

static void dump_record(FILE *f, const struct rec *r)
{
    fprintf(f, "@%" PRIu64 " %s", r->offset, type_name(r->type));
    switch (r->type) {
    case REC_META:
        fputc(' ', f);
        put_quoted(f, r->meta.key);
        fputs(" = ", f);
        put_quoted(f, r->meta.value);
        break;
    case REC_CHANNEL:
        fprintf(f, " id=%" PRIu32 " kind=%" PRIu32 " (%s) name=", r->channel.id, r->channel.kind,
                profile_kind_name(r->channel.kind <= PMU_KIND_ENERGY
                                      ? (enum pmu_kind)r->channel.kind
                                      : PMU_KIND_CUSTOM));
        put_quoted(f, r->channel.name);
        fputs(" unit=", f);
        put_quoted(f, r->channel.unit);
        break;
    case REC_PROCESS:
        fprintf(f, " pid=%" PRIu32 " ppid=%" PRIu32, r->process.pid, r->process.ppid);
        put_time(f, "time", r->process.time);
        break;
    case REC_EXEC:
        fprintf(f, " pid=%" PRIu32, r->exec.pid);
        put_time(f, "time", r->exec.time);
        fputs(" path=", f);
        put_quoted(f, r->exec.path);
        break;
    case REC_EXIT: {
        char status[64];
        profile_describe_status(r->exit.status, status, sizeof(status));
        fprintf(f, " pid=%" PRIu32, r->exit.pid);
        put_time(f, "time", r->exit.time);
        fprintf(f, " status=0x%" PRIx32 " (%s)", (uint32_t)r->exit.status, status);
        break;
    }
    case REC_THREAD:
        fprintf(f, " pid=%" PRIu32 " tid=%" PRIu32, r->thread.pid, r->thread.tid);
        put_time(f, "time", r->thread.time);
        fputs(" name=", f);
        put_quoted(f, r->thread.name);
        break;
    case REC_THREAD_EXIT:
        fprintf(f, " tid=%" PRIu32, r->thread_exit.tid);
        put_time(f, "time", r->thread_exit.time);
        break;
    case REC_MAP:
        fprintf(f, " pid=%" PRIu32, r->map.pid);
        put_time(f, "time", r->map.time);
        fprintf(f,
                " start=0x%" PRIx64 " end=0x%" PRIx64 " offset=0x%" PRIx64 " perms=%c%c%c%c"
                " dev=%" PRIx32 ":%" PRIx32 " inode=%" PRIu64 " build_id=",
                r->map.start, r->map.end, r->map.offset, r->map.perms & 1 ? 'r' : '-',
                r->map.perms & 2 ? 'w' : '-', r->map.perms & 4 ? 'x' : '-',
                r->map.perms & 8 ? 's' : 'p', r->map.dev_major, r->map.dev_minor, r->map.inode);
        for (uint32_t i = 0; i < r->map.build_id.len; i++)
            fprintf(f, "%02x", r->map.build_id.p[i]);
        if (!r->map.build_id.len)
            fputs("-", f);
        fputs(" path=", f);
        put_quoted(f, r->map.path);
        break;
    case REC_UNMAP:
        fprintf(f, " pid=%" PRIu32, r->unmap.pid);
        put_time(f, "time", r->unmap.time);
        fprintf(f, " start=0x%" PRIx64 " end=0x%" PRIx64, r->unmap.start, r->unmap.end);
        break;
    case REC_IMAGE:
        fprintf(f, " pid=%" PRIu32 " start=0x%" PRIx64 " name=", r->image.pid, r->image.start);
        put_quoted(f, r->image.name);
        fprintf(f, " size=%" PRIu32, r->image.data.len);
        break;
    case REC_STACK:
        fprintf(f, " id=%" PRIu32 " parent=%" PRIu32 " count=%" PRIu32 " pcs=", r->stack.id,
                r->stack.parent, r->stack.count);
        for (uint32_t i = 0; i < r->stack.count; i++)
            fprintf(f, "%s0x%" PRIx64, i ? "," : "", get_u64(r->stack.pcs + 8 * (size_t)i));
        if (!r->stack.count)
            fputs("-", f);
        break;
    case REC_SAMPLE:
        put_time(f, "time", r->sample.time);
        fputs(" values=[", f);
        for (uint32_t i = 0; i < r->sample.nvalues; i++) {
            if (i)
                fputc(',', f);
            put_double(f, get_f64(r->sample.values + 8 * (size_t)i));
        }
        fprintf(f, "] threads=%" PRIu32 "\n", r->sample.nthreads);
        for (uint32_t i = 0; i < r->sample.nthreads; i++) {
            const unsigned char *t = r->sample.threads + (size_t)i * THREAD_SIZE;
            fprintf(f,
                    "    pid=%" PRIu32 " tid=%" PRIu32 " pc=0x%" PRIx64 " cpu_ns=%" PRIu64
                    " stack=%" PRIu32 " syscall=%" PRId32 " flags=0x%" PRIx32,
                    get_u32(t), get_u32(t + 4), get_u64(t + 8), get_u64(t + 16), get_u32(t + 24),
                    (int32_t)get_u32(t + 28), get_u32(t + 32));
            if (r->sample.nweights)
                fprintf(f, " weight=%" PRIu64, get_u64(r->sample.weights + 8 * (size_t)i));
            if (r->sample.per_thread) {
                fputs(" values=[", f);
                for (uint32_t k = 0; k < r->sample.per_thread; k++)
                    fprintf(f, "%s%" PRIu64, k ? "," : "",
                            get_u64(r->sample.thread_values +
                                    8 * ((size_t)i * r->sample.per_thread + k)));
                fputc(']', f);
            }
            fputc('\n', f);
        }
        return;
    case REC_VALUE_TYPE:
        fprintf(f, " id=%" PRIu32 " aggregation=%" PRIu32 " (%s) name=", r->value_type.id,
                r->value_type.agg,
                profile_value_agg_name(r->value_type.agg <= PROF_VALUE_AGG_MAX
                                           ? (enum prof_value_agg)r->value_type.agg
                                           : PROF_VALUE_SUM));
        put_quoted(f, r->value_type.name);
        fputs(" unit=", f);
        put_quoted(f, r->value_type.unit);
        break;
    case REC_END:
        fprintf(f,
                " wall_ns=%" PRIu64 " latency_ns=%" PRIu64 " samples=%" PRIu64
                " ideal_samples=%" PRIu64,
                r->end.wall_ns, r->end.latency_ns, r->end.samples, r->end.ideal_samples);
        break;
    case REC_LOCATION:
        dump_location(f, r);
        return;
    default:
        break;
    }
    fputc('\n', f);
}

int native_dump_stream(struct instream *in, FILE *out)
{
    const char *name = instream_name(in);
    const unsigned char *d;
    if (check_header(in, &d) != 0)
        return -1;
    fprintf(out, "@0 HEADER ptprof native %u.%u flags=0x%" PRIx32 "\n", get_u16(d + 8),
            get_u16(d + 10), get_u32(d + 12));

    struct scan sc;
    scan_init(&sc, in);
    int rc = 0;
    for (;;) {
        struct rec r;
        enum step step = scan_next(&sc, &r);
        if (step == STEP_EOF)
            fprintf(out, "@%" PRIu64 " EOF%s\n", r.offset,
                    sc.v.ended ? "" : " without an END record: the recorder did not finish");
        if (step == STEP_CRITICAL) {
            fprintf(out, "@%" PRIu64 " ERROR %s\n", r.offset, sc.why);
            fflush(out);
            pt_err("%s: offset %" PRIu64 ": %s", name, r.offset, sc.why);
            rc = -1;
        }
        if (step == STEP_DAMAGE)
            fprintf(out, "@%" PRIu64 " TRUNCATED %s\n", r.offset, sc.why);
        if (step == STEP_EOF || (step == STEP_DAMAGE && r.cut)) {
            fflush(out);
            if (scan_input_end(&sc, "the dump ends there") < 0)
                rc = -1;
        }
        if (step == STEP_SKIP)
            fprintf(out, "@%" PRIu64 " UNKNOWN type=%u flags=0x%x length=%" PRIu32 " (skipped)\n",
                    r.offset, r.type, r.flags, r.len);
        else if (step == STEP_RECORD)
            dump_record(out, &r);
        else
            break;
    }
    validator_free(&sc.v);
    return rc;
}

int native_dump_buffer(const char *name, const void *data, size_t len, FILE *out)
{
    if (!image_may_be_native(data, len)) {
        pt_err("%s: offset 0: not a ptprof profile (bad magic)", name);
        return -1;
    }
    struct instream *in = instream_open_memory(name, data, len);
    int rc = native_dump_stream(in, out);
    instream_close(in);
    return rc;
}
