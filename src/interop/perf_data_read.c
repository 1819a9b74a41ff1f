/*
 * perf_data_read.c - see perf_data.h: perf.data into a profile.
 *
 * Three passes over the file's bytes: the header and its sections (event
 * attributes and their ids, feature sections: build-ids, command line,
 * host, clock reference), or the same from the synthesized records of a
 * pipe stream; an index of the kernel's records with their times, sorted
 * (perf writes each CPU's buffer in turn, so records are in time order
 * only within a round); then the records in time order, as the perf
 * engine handles them while recording.
 */
#include "interop/perf_data.h"
#include "model/stack_table.h"
#include "model/perf_records.h"
#include "model/maps.h"
#include "unwind/perf_regs.h"
#include "unwind/stack.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <math.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC 0x32454c4946524550ULL         /* "PERFILE2" read as a little-endian u64 */
#define MAGIC_SWAPPED 0x50455246494c4532ULL /* the same, written big-endian */
#define FILE_HEADER_SIZE 104u
#define PIPE_HEADER_SIZE 16u

/* perf's own record types (tools/perf/util/event.h). */
enum {
    USER_HEADER_ATTR = 64,
    USER_HEADER_BUILD_ID = 67,
    USER_HEADER_FEATURE = 80,
    USER_COMPRESSED = 81,
};

/* Feature sections (tools/perf/util/header.h). */
enum {
    FEAT_BUILD_ID = 2,
    FEAT_HOSTNAME = 3,
    FEAT_OSRELEASE = 4,
    FEAT_VERSION = 5,
    FEAT_CMDLINE = 11,
    FEAT_EVENT_DESC = 12,
    FEAT_CLOCK_DATA = 29,
    FEAT_BITS = 256,
};

#define BUILD_ID_SIZE_FLAG (1u << 15) /* PERF_RECORD_MISC_BUILD_ID_SIZE */
#define MAX_DEPTH 4096

struct event {
    struct perf_layout layout;
    char *name;
    uint64_t *ids;
    size_t nids;
};

struct build_id {
    char *path;
    uint8_t len;
    uint8_t id[20];
};

struct indexed {
    uint64_t time, seq;
    size_t off;
    uint16_t size;
};

/* tid or pid -> index, open addressing; 0 keys are fine (value+1 stored). */
struct u32map {
    uint32_t *keys, *vals;
    size_t cap, n;
};

struct proc_state {
    bool exec_pending;
    char *comm;
    /* --call-graph dwarf: the file mappings now, and their unwinder. */
    struct map_list maps;
    bool maps_changed;
    struct dwarf_unwinder *unwinder;
};

struct thread_state {
    uint64_t cpu_ns;
};

struct reader {
    const char *name;
    const uint8_t *d;
    size_t len;
    struct profile *p;
    struct stack_table *stacks;
    struct event *events;
    size_t nevents, events_cap;
    bool by_identifier;
    size_t cpu_event; /* the event whose samples are CPU time */
    bool cpu_is_clock;
    uint64_t ns_per_sample;
    struct build_id *bids;
    size_t nbids, bids_cap;
    bool has_clock_ref;
    uint64_t tod_ns, ref_ns;
    bool has_kernel_map;
    struct prof_map kernel_map;
    struct indexed *index;
    size_t nindex, index_cap;
    struct u32map thread_of, process_of;
    struct proc_state *procs;
    size_t nprocs; /* of them initialised */
    struct thread_state *threads;
    size_t procs_cap, threads_cap, pprocs_cap, pthreads_cap, maps_cap, samples_cap;
    uint64_t lost;
    size_t event; /* the event of the record being replayed */
    bool values;  /* each event is a value type (profile.h) */
    bool unwind;  /* some event samples user registers and stack: unwind them */
    uint64_t *pcs;
    char *cmdline, *host, *kernel, *perf_version;
    const char *err;
    size_t err_at;
};

static int fail(struct reader *r, size_t at, const char *what)
{
    r->err = what;
    r->err_at = at;
    return -1;
}

static uint64_t u64_at(const uint8_t *p)
{
    return perf_u64(p, 0);
}

static uint32_t u32_at(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* A section [off, off + size) that lies inside the file. */
static bool section_ok(const struct reader *r, uint64_t off, uint64_t size)
{
    return off <= r->len && size <= r->len - off;
}

/* --- small maps ----------------------------------------------------------- */

static size_t bucket(const struct u32map *m, uint32_t key)
{
    return (size_t)((key * 2654435761u) & (uint32_t)(m->cap - 1));
}

static bool u32map_get(const struct u32map *m, uint32_t key, uint32_t *val)
{
    if (!m->cap)
        return false;
    for (size_t b = bucket(m, key); m->vals[b]; b = (b + 1) & (m->cap - 1))
        if (m->keys[b] == key) {
            *val = m->vals[b] - 1;
            return true;
        }
    return false;
}

static void u32map_put(struct u32map *m, uint32_t key, uint32_t val)
{
    if ((m->n + 1) * 2 > m->cap) {
        struct u32map big = {.cap = m->cap ? m->cap * 2 : 64};
        big.keys = xcalloc(big.cap, sizeof(uint32_t));
        big.vals = xcalloc(big.cap, sizeof(uint32_t));
        for (size_t i = 0; i < m->cap; i++)
            if (m->vals[i])
                u32map_put(&big, m->keys[i], m->vals[i] - 1);
        free(m->keys);
        free(m->vals);
        *m = big;
    }
    size_t b = bucket(m, key);
    while (m->vals[b] && m->keys[b] != key)
        b = (b + 1) & (m->cap - 1);
    if (!m->vals[b])
        m->n++;
    m->keys[b] = key;
    m->vals[b] = val + 1;
}

static void u32map_free(struct u32map *m)
{
    free(m->keys);
    free(m->vals);
}

/* --- the header ------------------------------------------------------------ */

static char *string_at(const uint8_t *p, size_t n)
{
    size_t len = strnlen((const char *)p, n);
    char *s = xmalloc(len + 1);
    memcpy(s, p, len);
    s[len] = '\0';
    return s;
}

/* perf_header_string: u32 len, then len bytes (NUL-padded). */
static char *header_string(const uint8_t *p, size_t size, size_t *used)
{
    if (size < 4)
        return NULL;
    uint32_t n = u32_at(p);
    if (n > size - 4)
        return NULL;
    *used = 4 + (size_t)n;
    return string_at(p + 4, n);
}

static void add_event(struct reader *r, const struct perf_layout *l, const uint8_t *ids,
                      uint64_t nids)
{
    r->events = xgrow(r->events, &r->events_cap, r->nevents + 1, sizeof(*r->events));
    struct event *e = &r->events[r->nevents++];
    memset(e, 0, sizeof(*e));
    e->layout = *l;
    e->nids = (size_t)nids;
    e->ids = xcalloc(e->nids ? e->nids : 1, sizeof(uint64_t));
    for (size_t i = 0; i < e->nids; i++)
        e->ids[i] = perf_u64(ids, i);
}

static int read_attrs(struct reader *r, uint64_t entry, uint64_t off, uint64_t size)
{
    /* Each entry: the attr, then the section of its ids (16 bytes). */
    uint64_t attr_size = entry - 16;
    if (entry < 64 + 16 || entry > 4096 || !section_ok(r, off, size))
        return fail(r, 40, "event attribute section out of the file");
    for (uint64_t at = off; at + entry <= off + size; at += entry) {
        struct perf_layout l;
        const char *why;
        if (perf_layout_from_attr(r->d + at, (size_t)attr_size, &l, &why) != 0)
            return fail(r, (size_t)at, why);
        uint64_t ids_off = u64_at(r->d + at + attr_size),
                 ids_size = u64_at(r->d + at + attr_size + 8);
        if (!section_ok(r, ids_off, ids_size))
            return fail(r, (size_t)(at + attr_size), "event ids out of the file");
        add_event(r, &l, r->d + ids_off, ids_size / 8);
    }
    return r->nevents ? 0 : fail(r, (size_t)off, "no event attributes");
}

static void read_build_ids(struct reader *r, const uint8_t *p, size_t size)
{
    /* build_id_event: header, pid, build_id[24], filename padded. */
    size_t at = 0;
    while (size - at >= 8 + 4 + 24) {
        uint16_t misc, rec_size;
        memcpy(&misc, p + at + 4, 2);
        memcpy(&rec_size, p + at + 6, 2);
        if (rec_size < 8 + 4 + 24 || rec_size > size - at)
            return; /* damaged: keep the ones read */
        const uint8_t *id = p + at + 12;
        uint8_t len = (misc & BUILD_ID_SIZE_FLAG) && id[20] <= 20 ? id[20] : 20;
        r->bids = xgrow(r->bids, &r->bids_cap, r->nbids + 1, sizeof(*r->bids));
        struct build_id *b = &r->bids[r->nbids++];
        b->len = len;
        memcpy(b->id, id, 20);
        b->path = string_at(p + at + 36, rec_size - 36u);
        at += rec_size;
    }
}

static char *string_list(const uint8_t *p, size_t size)
{
    if (size < 4)
        return NULL;
    uint32_t n = u32_at(p);
    size_t at = 4, len = 0;
    char *out = xstrdup("");
    for (uint32_t i = 0; i < n && at < size; i++) {
        size_t used;
        char *s = header_string(p + at, size - at, &used);
        if (!s)
            break;
        size_t add = strlen(s);
        out = xrealloc(out, len + add + 2);
        if (len)
            out[len++] = ' ';
        memcpy(out + len, s, add + 1);
        len += add;
        free(s);
        at += used;
    }
    return out;
}

/* EVENT_DESC: nr, attr_size, then per event its attr, nr_ids, its name
 * and its ids.  Names the events read from the attrs section, in order. */
static void read_event_desc(struct reader *r, const uint8_t *p, size_t size)
{
    if (size < 8)
        return;
    uint32_t nr = u32_at(p), attr_size = u32_at(p + 4);
    size_t at = 8;
    for (uint32_t i = 0; i < nr && i < r->nevents; i++) {
        if (attr_size > size - at || size - at - attr_size < 4)
            return;
        at += attr_size;
        uint32_t nids = u32_at(p + at);
        at += 4;
        size_t used;
        char *name = header_string(p + at, size - at, &used);
        if (!name)
            return;
        at += used;
        free(r->events[i].name);
        r->events[i].name = name;
        if (nids > (size - at) / 8)
            return;
        at += (size_t)nids * 8;
    }
}

static void read_feature(struct reader *r, int feat, const uint8_t *p, size_t size)
{
    size_t used;
    switch (feat) {
    case FEAT_BUILD_ID:
        read_build_ids(r, p, size);
        break;
    case FEAT_HOSTNAME:
        free(r->host);
        r->host = header_string(p, size, &used);
        break;
    case FEAT_OSRELEASE:
        free(r->kernel);
        r->kernel = header_string(p, size, &used);
        break;
    case FEAT_VERSION:
        free(r->perf_version);
        r->perf_version = header_string(p, size, &used);
        break;
    case FEAT_CMDLINE:
        free(r->cmdline);
        r->cmdline = string_list(p, size);
        break;
    case FEAT_EVENT_DESC:
        read_event_desc(r, p, size);
        break;
    case FEAT_CLOCK_DATA:
        /* version, clockid, wall-clock ns, clockid ns at the same moment */
        if (size >= 24 && u32_at(p) >= 1) {
            r->has_clock_ref = true;
            r->tod_ns = u64_at(p + 8);
            r->ref_ns = u64_at(p + 16);
        }
        break;
    default:
        break;
    }
}

static int read_file_header(struct reader *r, size_t *data_off, size_t *data_size)
{
    if (r->len < FILE_HEADER_SIZE)
        return fail(r, r->len, "perf.data header cut short");
    const uint8_t *h = r->d;
    uint64_t attr_size = u64_at(h + 16);
    uint64_t attrs_off = u64_at(h + 24), attrs_size = u64_at(h + 32);
    uint64_t doff = u64_at(h + 40), dsize = u64_at(h + 48);
    if (!section_ok(r, doff, dsize))
        return fail(r, 40, "data section out of the file (cut short?)");
    if (read_attrs(r, attr_size, attrs_off, attrs_size) != 0)
        return -1;
    /* Feature sections follow the data, one perf_file_section per bit set
     * in the 256-bit flags, in bit order. */
    uint64_t feat_off = doff + dsize;
    for (int bit = 0; bit < FEAT_BITS; bit++) {
        if (!(h[72 + bit / 8] >> (bit % 8) & 1))
            continue;
        if (!section_ok(r, feat_off, 16))
            break; /* features missing: the recording itself is whole */
        uint64_t off = u64_at(r->d + feat_off), size = u64_at(r->d + feat_off + 8);
        feat_off += 16;
        if (section_ok(r, off, size))
            read_feature(r, bit, r->d + off, (size_t)size);
    }
    *data_off = (size_t)doff;
    *data_size = (size_t)dsize;
    return 0;
}

/* Pipe mode: the attributes, build-ids and features come as records. */
static int read_pipe_header_records(struct reader *r, size_t off, size_t size)
{
    for (size_t at = off; at + 8 <= off + size;) {
        uint32_t type = u32_at(r->d + at);
        uint16_t rec_size;
        memcpy(&rec_size, r->d + at + 6, 2);
        if (rec_size < 8 || rec_size > off + size - at)
            return fail(r, at, "record size does not fit the stream");
        const uint8_t *body = r->d + at + 8;
        size_t body_size = rec_size - 8u;
        if (type == USER_HEADER_ATTR && body_size >= 8) {
            uint32_t attr_size = u32_at(body + 4); /* attr.size */
            if (attr_size < 64 || attr_size > body_size)
                return fail(r, at, "attribute record too short");
            struct perf_layout l;
            const char *why;
            if (perf_layout_from_attr(body, attr_size, &l, &why) != 0)
                return fail(r, at, why);
            add_event(r, &l, body + attr_size, (body_size - attr_size) / 8);
        } else if (type == USER_HEADER_BUILD_ID) {
            read_build_ids(r, r->d + at, rec_size);
        } else if (type == USER_HEADER_FEATURE && body_size >= 8) {
            uint64_t feat = u64_at(body);
            if (feat < FEAT_BITS)
                read_feature(r, (int)feat, body + 8, body_size - 8);
        }
        at += rec_size;
    }
    return r->nevents ? 0 : fail(r, off, "no event attributes in the stream");
}

/* Every event's records must be readable with one layout, or carry the
 * IDENTIFIER that says whose they are. */
static int choose_layouts(struct reader *r)
{
    const struct perf_layout *a = &r->events[0].layout;
    bool same = true, identified = true;
    for (size_t i = 0; i < r->nevents; i++) {
        const struct perf_layout *b = &r->events[i].layout;
        same &= b->sample_type == a->sample_type && b->read_format == a->read_format &&
                b->regs_user_mask == a->regs_user_mask && b->sample_id_all == a->sample_id_all &&
                b->branch_sample_type == a->branch_sample_type &&
                b->regs_intr_mask == a->regs_intr_mask;
        identified &= (b->sample_type & PERF_SAMPLE_IDENTIFIER) != 0;
    }
    /* Several events: each record says whose it is. */
    r->by_identifier = r->nevents > 1 && identified;
    if (!same && !identified)
        return fail(r, 24, "events with different sample layouts and no PERF_SAMPLE_IDENTIFIER");
    /* CPU time comes from the first clock event, else the first one. */
    r->cpu_event = 0;
    for (size_t i = 0; i < r->nevents; i++) {
        const struct perf_layout *l = &r->events[i].layout;
        if (l->type == PERF_TYPE_SOFTWARE &&
            (l->config == PERF_COUNT_SW_CPU_CLOCK || l->config == PERF_COUNT_SW_TASK_CLOCK)) {
            r->cpu_event = i;
            r->cpu_is_clock = true;
            break;
        }
    }
    const struct perf_layout *cpu = &r->events[r->cpu_event].layout;
    r->ns_per_sample = cpu->freq && cpu->period ? 1000000000ULL / cpu->period : 1000000;
    return 0;
}

/* The event whose ids hold ID, or 0. */
static size_t event_with_id(const struct reader *r, uint64_t id)
{
    for (size_t i = 0; i < r->nevents; i++)
        for (size_t k = 0; k < r->events[i].nids; k++)
            if (r->events[i].ids[k] == id)
                return i;
    return 0;
}

static size_t event_of(const struct reader *r, const uint8_t *rec, size_t size, bool sample)
{
    if (!r->by_identifier)
        return 0;
    uint64_t id;
    if (!perf_record_identifier(rec, size, sample, &id))
        return 0;
    return event_with_id(r, id);
}

/* --- the records ------------------------------------------------------------ */

/* perf's clock to the wall clock: monotonic (saturating), so the order of
 * the records is kept whatever the reference says. */
static uint64_t wall_of(const struct reader *r, uint64_t t)
{
    if (!r->has_clock_ref)
        return t;
    if (t >= r->ref_ns)
        return t - r->ref_ns > UINT64_MAX - r->tod_ns ? UINT64_MAX : r->tod_ns + (t - r->ref_ns);
    return r->ref_ns - t > r->tod_ns ? 0 : r->tod_ns - (r->ref_ns - t);
}

static size_t process_index(struct reader *r, uint32_t pid, uint32_t ppid, uint64_t t);

static void add_map(struct reader *r, const struct prof_map *m)
{
    struct profile *p = r->p;
    /* mmap replaces what the new mapping overlaps (docs/format.md). */
    for (size_t i = 0; i < p->nmaps; i++) {
        struct prof_map *o = &p->maps[i];
        if (o->pid == m->pid && !o->unmap_ns && o->start < m->end && m->start < o->end)
            o->unmap_ns = m->time_ns;
    }
    p->maps = xgrow(p->maps, &r->maps_cap, p->nmaps + 1, sizeof(*p->maps));
    struct prof_map *n = &p->maps[p->nmaps++];
    *n = *m;
    n->path = xstrdup(m->path);
    for (size_t i = 0; i < r->nbids && !n->build_id_len; i++) {
        if (strcmp(r->bids[i].path, n->path) == 0) {
            n->build_id_len = r->bids[i].len;
            memcpy(n->build_id, r->bids[i].id, r->bids[i].len);
        }
    }
}

static size_t process_index(struct reader *r, uint32_t pid, uint32_t ppid, uint64_t t)
{
    uint32_t idx;
    if (u32map_get(&r->process_of, pid, &idx))
        return idx;
    struct profile *p = r->p;
    p->processes = xgrow(p->processes, &r->pprocs_cap, p->nprocesses + 1, sizeof(*p->processes));
    idx = (uint32_t)p->nprocesses++;
    p->processes[idx] = (struct prof_process){
        .pid = pid, .ppid = ppid, .start_ns = wall_of(r, t), .exe = xstrdup("")};
    r->procs = xgrow(r->procs, &r->procs_cap, p->nprocesses, sizeof(*r->procs));
    memset(&r->procs[idx], 0, sizeof(r->procs[idx]));
    r->nprocs = p->nprocesses;
    u32map_put(&r->process_of, pid, idx);
    if (r->has_kernel_map) {
        struct prof_map k = r->kernel_map;
        k.pid = pid;
        add_map(r, &k);
    }
    return idx;
}

static size_t thread_index(struct reader *r, uint32_t pid, uint32_t tid, uint64_t t,
                           const char *name)
{
    uint32_t idx;
    if (u32map_get(&r->thread_of, tid, &idx))
        return idx;
    process_index(r, pid, 0, t);
    struct profile *p = r->p;
    p->threads = xgrow(p->threads, &r->pthreads_cap, p->nthreads + 1, sizeof(*p->threads));
    idx = (uint32_t)p->nthreads++;
    p->threads[idx] = (struct prof_thread){
        .pid = pid, .tid = tid, .start_ns = wall_of(r, t), .name = xstrdup(name ? name : "")};
    r->threads = xgrow(r->threads, &r->threads_cap, p->nthreads, sizeof(*r->threads));
    memset(&r->threads[idx], 0, sizeof(r->threads[idx]));
    u32map_put(&r->thread_of, tid, idx);
    return idx;
}

static void set_string(char **dst, const char *s)
{
    free(*dst);
    *dst = xstrdup(s);
}

static void on_comm(void *ctx, const struct perf_record *rec)
{
    struct reader *r = ctx;
    const struct perf_comm *c = &rec->u.comm;
    size_t t = thread_index(r, c->pid, c->tid, rec->time, c->comm);
    set_string(&r->p->threads[t].name, c->comm);
    if (!c->exec)
        return;
    size_t proc = process_index(r, c->pid, 0, rec->time);
    uint64_t now = wall_of(r, rec->time);
    for (size_t i = 0; i < r->p->nmaps; i++) {
        struct prof_map *m = &r->p->maps[i];
        if (m->pid == c->pid && !m->unmap_ns &&
            (!r->has_kernel_map || strcmp(m->path, r->kernel_map.path) != 0))
            m->unmap_ns = now;
    }
    r->procs[proc].exec_pending = true;
    set_string(&r->p->processes[proc].exe, c->comm);
    /* A new program: new modules, and a new unwinder for them. */
    maps_clear(&r->procs[proc].maps);
    dwarf_unwinder_free(r->procs[proc].unwinder);
    r->procs[proc].unwinder = NULL;
    r->procs[proc].maps_changed = true;
}

static uint32_t map_perms(const struct perf_mmap *m)
{
    if (!m->mmap2)
        return 1 | 4; /* read, exec */
    return ((m->prot & 1) ? 1u : 0u) | ((m->prot & 2) ? 2u : 0u) | ((m->prot & 4) ? 4u : 0u) |
           ((m->flags & 1) ? 8u : 0u);
}

static void on_mmap(void *ctx, const struct perf_record *rec)
{
    struct reader *r = ctx;
    const struct perf_mmap *m = &rec->u.mmap;
    if (!m->filename || m->addr > UINT64_MAX - m->len)
        return;
    bool anon = strncmp(m->filename, "//anon", 6) == 0;
    struct prof_map map = {
        .pid = m->pid,
        .time_ns = wall_of(r, rec->time),
        .start = m->addr,
        .end = m->addr + m->len,
        .offset = m->pgoff,
        .inode = anon ? 0 : m->ino,
        .dev_major = m->maj,
        .dev_minor = m->min,
        .perms = map_perms(m),
        .path = (char *)(anon ? "" : m->filename),
    };
    if (m->has_build_id) {
        map.build_id_len = m->build_id_size;
        memcpy(map.build_id, m->build_id, m->build_id_size);
    }
    if (m->pid == UINT32_MAX) { /* the kernel's, for every process */
        free(r->kernel_map.path);
        r->kernel_map = map;
        r->kernel_map.path = xstrdup("[kernel.kallsyms]");
        r->kernel_map.time_ns = 0;
        r->has_kernel_map = true;
        for (size_t i = 0; i < r->p->nprocesses; i++) {
            struct prof_map k = r->kernel_map;
            k.pid = r->p->processes[i].pid;
            add_map(r, &k);
        }
        return;
    }
    size_t proc = process_index(r, m->pid, 0, rec->time);
    if (r->procs[proc].exec_pending && !anon && m->filename[0] == '/') {
        set_string(&r->p->processes[proc].exe, m->filename);
        r->procs[proc].exec_pending = false;
    }
    add_map(r, &map);
    if (r->unwind) {
        struct map_entry e = {.start = map.start,
                              .end = map.end,
                              .offset = map.offset,
                              .inode = map.inode,
                              .dev_major = map.dev_major,
                              .dev_minor = map.dev_minor,
                              .perms = map.perms,
                              .path = map.path};
        maps_replace(&r->procs[proc].maps, &e);
        r->procs[proc].maps_changed = true;
    }
}

static void on_fork(void *ctx, const struct perf_record *rec)
{
    struct reader *r = ctx;
    const struct perf_task *t = &rec->u.task;
    uint32_t parent_thread;
    const char *name = u32map_get(&r->thread_of, t->ptid, &parent_thread)
                           ? r->p->threads[parent_thread].name
                           : NULL;
    char *name_copy = name ? xstrdup(name) : NULL;
    if (t->pid != t->ppid && !u32map_get(&r->process_of, t->pid, &parent_thread)) {
        uint32_t parent;
        bool known = u32map_get(&r->process_of, t->ppid, &parent);
        size_t child = process_index(r, t->pid, t->ppid, rec->time);
        if (known) {
            /* A copy of the parent's address space and program. */
            set_string(&r->p->processes[child].exe, r->p->processes[parent].exe);
            uint64_t now = wall_of(r, rec->time);
            size_t n = r->p->nmaps;
            for (size_t i = 0; i < n; i++) {
                struct prof_map m = r->p->maps[i];
                if (m.pid != t->ppid || m.unmap_ns ||
                    (r->has_kernel_map && strcmp(m.path, r->kernel_map.path) == 0))
                    continue;
                m.pid = t->pid;
                m.time_ns = now;
                add_map(r, &m);
            }
            struct proc_state *from = &r->procs[parent], *to = &r->procs[child];
            for (size_t i = 0; i < from->maps.count; i++)
                maps_replace(&to->maps, &from->maps.entries[i]);
            to->maps_changed = true;
        }
    }
    thread_index(r, t->pid, t->tid, rec->time, name_copy);
    free(name_copy);
}

static void on_exit_task(void *ctx, const struct perf_record *rec)
{
    struct reader *r = ctx;
    const struct perf_task *t = &rec->u.task;
    uint32_t idx;
    if (u32map_get(&r->thread_of, t->tid, &idx))
        r->p->threads[idx].end_ns = wall_of(r, rec->time);
    if (t->tid == t->pid && u32map_get(&r->process_of, t->pid, &idx))
        r->p->processes[idx].exit_ns = wall_of(r, rec->time);
}

/*
 * --call-graph dwarf: the sample's registers and stack copy unwound by the
 * recorder's own libdwfl code (stack.h) over the process's file mappings
 * as the records built them, after the DEPTH kernel frames the call chain
 * may hold (perf asks for the kernel's part only).  Returns the new depth;
 * DEPTH when the sample has no user state.
 */
static uint32_t unwind_user_stack(struct reader *r, const struct perf_sample *s, uint32_t depth)
{
    const struct perf_layout *l = &r->events[r->event].layout;
    if (!(l->sample_type & PERF_SAMPLE_REGS_USER) || !(l->sample_type & PERF_SAMPLE_STACK_USER))
        return depth;
    struct stack_snapshot snap;
    if (!perf_sample_snapshot(s, l->regs_user_mask, &snap))
        return depth;
    uint32_t proc;
    if (!u32map_get(&r->process_of, s->pid, &proc))
        return depth;
    struct proc_state *ps = &r->procs[proc];
    if (!ps->unwinder)
        ps->unwinder = dwarf_unwinder_new_offline((pid_t)s->pid);
    if (!ps->unwinder)
        return depth;
    if (ps->maps_changed) {
        dwarf_unwinder_set_maps(ps->unwinder, ps->maps.entries, ps->maps.count);
        ps->maps_changed = false;
    }
    /* The kernel's frames end at its context marker; the user's begin. */
    int max = MAX_DEPTH - (int)depth < STACK_MAX_DEPTH ? MAX_DEPTH - (int)depth : STACK_MAX_DEPTH;
    int n = dwarf_unwind(ps->unwinder, (pid_t)s->tid, &snap, r->pcs + depth, max, NULL);
    return depth + (uint32_t)(n > 0 ? n : 0);
}

static void on_sample(void *ctx, const struct perf_record *rec)
{
    struct reader *r = ctx;
    size_t event = r->event;
    const struct perf_sample *s = &rec->u.sample;
    /* (A tid seen before under another pid keeps its thread: the sample's
     * process must exist all the same.) */
    process_index(r, s->pid, 0, rec->time);
    size_t t = thread_index(r, s->pid, s->tid, rec->time, NULL);
    if (event == r->cpu_event)
        r->threads[t].cpu_ns += r->cpu_is_clock ? s->period : r->ns_per_sample;
    uint32_t depth = 0;
    for (uint64_t i = 0; i < s->callchain_nr && depth < MAX_DEPTH; i++) {
        uint64_t pc = perf_u64(s->callchain, (size_t)i);
        if (pc < (uint64_t)PERF_CONTEXT_MAX)
            r->pcs[depth++] = pc;
    }
    if (r->unwind)
        depth = unwind_user_stack(r, s, depth);
    if (depth == 0)
        r->pcs[depth++] = s->ip;
    struct profile *p = r->p;
    p->samples = xgrow(p->samples, &r->samples_cap, p->nsamples + 1, sizeof(*p->samples));
    struct prof_sample *out = &p->samples[p->nsamples++];
    *out = (struct prof_sample){.time_ns = wall_of(r, rec->time)};
    profile_sample_alloc(p, out, 1, false, r->values)[0] = (struct prof_thread_sample){
        .pid = s->pid,
        .tid = s->tid,
        .pc = s->ip,
        .cpu_ns = r->threads[t].cpu_ns,
        .stack = stack_table_id(r->stacks, p, r->pcs, depth),
        .syscall = -1,
    };
    if (r->values) {
        /* The sample stands for its period of its event (one event when
         * the sample has no period). */
        bool period = (r->events[event].layout.sample_type & PERF_SAMPLE_PERIOD) != 0;
        prof_all_thread_values(out)[event] = period ? s->period : 1;
    }
}

static int index_records(struct reader *r, size_t off, size_t size)
{
    uint64_t last_time = 0;
    for (size_t at = off; at < off + size;) {
        if (off + size - at < 8)
            return fail(r, at, "record header cut short");
        uint32_t type = u32_at(r->d + at);
        uint16_t rec_size;
        memcpy(&rec_size, r->d + at + 6, 2);
        if (rec_size < 8 || rec_size > off + size - at)
            return fail(r, at, "record size does not fit the data section");
        if (type == USER_COMPRESSED)
            return fail(r, at,
                        "compressed records (perf record -z) are not read; record "
                        "without -z");
        if (type < USER_HEADER_ATTR) {
            size_t event = event_of(r, r->d + at, rec_size, type == PERF_RECORD_SAMPLE);
            struct perf_record rec;
            const char *why;
            if (perf_record_parse(&r->events[event].layout, r->d + at, rec_size, &rec, &why) == 0)
                return fail(r, at, why);
            if (rec.has_time)
                last_time = rec.time;
            r->index = xgrow(r->index, &r->index_cap, r->nindex + 1, sizeof(*r->index));
            r->index[r->nindex] = (struct indexed){
                .time = rec.has_time ? rec.time : last_time,
                .seq = r->nindex,
                .off = at,
                .size = rec_size,
            };
            r->nindex++;
        }
        at += rec_size;
    }
    return 0;
}

static int by_time(const void *a, const void *b)
{
    const struct indexed *x = a, *y = b;
    if (x->time != y->time)
        return x->time < y->time ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void count_lost(void *ctx, uint64_t count)
{
    ((struct reader *)ctx)->lost += count;
}

static const struct perf_record_visitor reader_visitor = {
    .sample = on_sample,
    .mmap = on_mmap,
    .comm = on_comm,
    .fork = on_fork,
    .exit = on_exit_task,
    .lost = count_lost,
};

static void replay(struct reader *r)
{
    if (r->nindex > 1)
        qsort(r->index, r->nindex, sizeof(*r->index), by_time);
    for (size_t i = 0; i < r->nindex; i++) {
        const uint8_t *at = r->d + r->index[i].off;
        size_t size = r->index[i].size;
        bool is_sample = u32_at(at) == PERF_RECORD_SAMPLE;
        size_t event = event_of(r, at, size, is_sample);
        struct perf_record rec;
        const char *why;
        if (perf_record_parse(&r->events[event].layout, at, size, &rec, &why) == 0)
            continue; /* checked when indexed */
        if (!rec.has_time)
            rec.time = r->index[i].time; /* the time of the record before it */
        /* Events of one layout without IDENTIFIER: a sample's ID says. */
        if (is_sample && !r->by_identifier && r->nevents > 1 &&
            (r->events[0].layout.sample_type & PERF_SAMPLE_ID))
            event = event_with_id(r, rec.u.sample.id);
        r->event = event;
        perf_record_visit(&rec, &reader_visitor, r);
    }
}

/* --- the profile ------------------------------------------------------------ */

static bool is_clock(const struct perf_layout *l)
{
    return l->type == PERF_TYPE_SOFTWARE &&
           (l->config == PERF_COUNT_SW_CPU_CLOCK || l->config == PERF_COUNT_SW_TASK_CLOCK);
}

/* Events as value types, each sample's period in its event's column, as
 * the perf script reader does: `perf record -e task-clock,page-faults`
 * gives metrics task-clock and page-faults (and cycles with instructions,
 * ipc).  A file of one clock event alone has none: its periods are the CPU
 * time already.  A value is named after its event without perf's
 * modifiers (cycles:u is cycles) unless two events would share the name. */
static void declare_values(struct reader *r)
{
    if ((r->nevents == 1 && is_clock(&r->events[0].layout)) || r->nevents > PROF_VALUE_TYPES_MAX)
        return;
    for (size_t e = 0; e < r->nevents; e++) {
        char fallback[32];
        snprintf(fallback, sizeof(fallback), "event%zu", e);
        const char *ev = r->events[e].name && *r->events[e].name ? r->events[e].name : fallback;
        size_t n = strcspn(ev, ":");
        bool shared = false;
        for (size_t k = 0; k < r->nevents; k++) {
            const char *other = r->events[k].name ? r->events[k].name : "";
            shared |= k != e && strcspn(other, ":") == n && strncmp(other, ev, n) == 0;
        }
        char *name = shared || n == 0 ? xstrdup(ev) : xasprintf("%.*s", (int)n, ev);
        /* Names must be distinct: a second event of the same name keeps
         * its index. */
        if (profile_value_type(r->p, name) >= 0) {
            free(name);
            name = xasprintf("%s#%zu", ev, e);
        }
        profile_add_value_type(r->p, name, is_clock(&r->events[e].layout) ? "nanoseconds" : "count",
                               PROF_VALUE_SUM);
        free(name);
    }
    r->values = true;
}

static void add_meta(struct profile *p, const char *key, const char *value)
{
    p->meta = xrealloc(p->meta, (p->nmeta + 1) * sizeof(*p->meta));
    p->meta[p->nmeta++] = (struct prof_meta){.key = xstrdup(key), .value = xstrdup(value)};
}

static void finish(struct reader *r)
{
    struct profile *p = r->p;
    const struct event *cpu = &r->events[r->cpu_event];
    const struct perf_layout *l = &cpu->layout;
    char buf[64];
    if (r->cmdline)
        add_meta(p, "command", r->cmdline);
    if (r->host)
        add_meta(p, "host", r->host);
    if (r->kernel)
        add_meta(p, "kernel", r->kernel);
    if (r->perf_version)
        add_meta(p, "perf_version", r->perf_version);
    if (cpu->name)
        add_meta(p, "event", cpu->name);
    if (l->freq)
        p->frequency = (double)l->period;
    else if (r->cpu_is_clock && l->period)
        p->frequency = 1e9 / (double)l->period;
    if (p->frequency > 0) {
        snprintf(buf, sizeof(buf), "%g", p->frequency);
        add_meta(p, "frequency", buf);
    }
    bool chains = false;
    for (size_t i = 0; i < r->nevents; i++)
        chains |= (r->events[i].layout.sample_type & PERF_SAMPLE_CALLCHAIN) != 0;
    add_meta(p, "stacks",
             r->unwind ? "dwarf (perf's user stack copies, unwound by ptprof)"
             : chains  ? "perf call chains"
                       : "none (perf record without -g)");
    if (r->cpu_is_clock)
        add_meta(p, "cpu_time", "sampled");
    add_meta(p, "clock",
             r->has_clock_ref ? "wall clock (from the file's clock data)"
                              : "perf's clock (no wall-clock reference in the file)");
    snprintf(buf, sizeof(buf), "%" PRIu64, r->lost);
    add_meta(p, "lost_samples", buf);
    /* Without a wall-clock reference the start is unknown ("0"). */
    snprintf(buf, sizeof(buf), "%" PRIu64,
             r->has_clock_ref && p->nsamples ? p->samples[0].time_ns : 0);
    add_meta(p, "start_time", buf);
    uint64_t span = 0;
    if (p->nsamples > 1 && p->samples[p->nsamples - 1].time_ns > p->samples[0].time_ns)
        span = p->samples[p->nsamples - 1].time_ns - p->samples[0].time_ns;
    p->totals = (struct prof_totals){.wall_ns = span, .samples = p->nsamples};
    /* A clock event's periods are the CPU time it sampled: its rate is per
     * CPU second, as perf's frequency is (and ptprof's perf engine's), not
     * per second of wall time, which counts every thread's samples. */
    if (r->cpu_is_clock && p->frequency > 0) {
        double cpu_ns = 0;
        for (size_t t = 0; t < p->nthreads; t++)
            cpu_ns += (double)r->threads[t].cpu_ns;
        p->totals.ideal_samples = (uint64_t)llround(cpu_ns / 1e9 * p->frequency);
    }
    p->has_totals = true;
    p->format = xstrdup("perf-data");
}

static void reader_free(struct reader *r)
{
    stack_table_free(r->stacks);
    for (size_t i = 0; i < r->nevents; i++) {
        free(r->events[i].ids);
        free(r->events[i].name);
    }
    free(r->events);
    for (size_t i = 0; i < r->nbids; i++)
        free(r->bids[i].path);
    free(r->bids);
    free(r->kernel_map.path);
    free(r->index);
    u32map_free(&r->thread_of);
    u32map_free(&r->process_of);
    for (size_t i = 0; i < r->nprocs; i++) {
        maps_clear(&r->procs[i].maps);
        dwarf_unwinder_free(r->procs[i].unwinder);
    }
    free(r->procs);
    free(r->threads);
    free(r->pcs);
    free(r->cmdline);
    free(r->host);
    free(r->kernel);
    free(r->perf_version);
}

bool perf_data_detect(const void *data, size_t len)
{
    if (len < 8)
        return false;
    uint64_t magic = u64_at(data);
    return magic == MAGIC || magic == MAGIC_SWAPPED;
}

int perf_data_load_buffer(const char *name, const void *data, size_t len, struct profile *out)
{
    profile_init(out);
    struct reader r = {.name = name, .d = data, .len = len, .p = out};
    int rc = -1;
    if (!perf_data_detect(data, len)) {
        fail(&r, 0, "not a perf.data file");
        goto out;
    }
    if (u64_at(r.d) == MAGIC_SWAPPED) {
        fail(&r, 0, "perf.data from a big-endian machine: not supported");
        goto out;
    }
    if (len < PIPE_HEADER_SIZE) {
        fail(&r, len, "perf.data header cut short");
        goto out;
    }
    size_t data_off, data_size;
    if (u64_at(r.d + 8) == PIPE_HEADER_SIZE) {
        data_off = PIPE_HEADER_SIZE;
        data_size = len - PIPE_HEADER_SIZE;
        if (read_pipe_header_records(&r, data_off, data_size) != 0)
            goto out;
    } else if (read_file_header(&r, &data_off, &data_size) != 0) {
        goto out;
    }
    if (choose_layouts(&r) != 0)
        goto out;
    r.stacks = stack_table_new();
    r.pcs = xmalloc(MAX_DEPTH * sizeof(*r.pcs));
    out->stacks = xcalloc(1, sizeof(*out->stacks)); /* id 0: no stack */
    out->nstacks = 1;
    if (index_records(&r, data_off, data_size) != 0)
        goto out;
    declare_values(&r);
    for (size_t i = 0; i < r.nevents; i++)
        r.unwind |= (r.events[i].layout.sample_type & PERF_SAMPLE_STACK_USER) &&
                    (r.events[i].layout.sample_type & PERF_SAMPLE_REGS_USER);
    replay(&r);
    finish(&r);
    rc = 0;
out:
    if (rc != 0) {
        pt_err("%s: offset %zu: %s (a perf.data file)", name, r.err_at, r.err);
        profile_free(out);
        profile_init(out);
    }
    reader_free(&r);
    return rc;
}
