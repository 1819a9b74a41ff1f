/* perf_records.c - see perf_records.h */
#include "model/perf_records.h"

#include <linux/perf_event.h>
#include <stddef.h>

/* A cursor over one record's bytes: every take checks what is left. */
struct cursor {
    const uint8_t *p;
    size_t left;
    bool bad;
};

static uint64_t take_u64(struct cursor *c)
{
    if (c->bad || c->left < 8) {
        c->bad = true;
        return 0;
    }
    uint64_t v = perf_u64(c->p, 0);
    c->p += 8;
    c->left -= 8;
    return v;
}

static uint32_t take_u32(struct cursor *c)
{
    if (c->bad || c->left < 4) {
        c->bad = true;
        return 0;
    }
    uint32_t v;
    memcpy(&v, c->p, 4);
    c->p += 4;
    c->left -= 4;
    return v;
}

/* N bytes, or NULL (and the cursor goes bad) when they are not there. */
static const uint8_t *take_bytes(struct cursor *c, uint64_t n)
{
    if (c->bad || n > c->left) {
        c->bad = true;
        return NULL;
    }
    const uint8_t *at = c->p;
    c->p += n;
    c->left -= (size_t)n;
    return at;
}

/* N u64 words, refusing a count whose bytes would overflow. */
static const uint8_t *take_words(struct cursor *c, uint64_t n)
{
    if (n > c->left / 8) {
        c->bad = true;
        return NULL;
    }
    return take_bytes(c, n * 8);
}

/* A NUL-terminated string filling (part of) the rest of the record. */
static const char *take_string(struct cursor *c, size_t trailer)
{
    if (c->bad || c->left < trailer) {
        c->bad = true;
        return NULL;
    }
    size_t room = c->left - trailer;
    const uint8_t *nul = room ? memchr(c->p, '\0', room) : NULL;
    if (!nul) {
        c->bad = true;
        return NULL;
    }
    const char *s = (const char *)c->p;
    c->p += room; /* the string is padded to 8 bytes: the rest is padding */
    c->left = trailer;
    return s;
}

static uint64_t attr_u64(const uint8_t *attr, size_t off)
{
    uint64_t v;
    memcpy(&v, attr + off, 8);
    return v;
}

static uint32_t attr_u32(const uint8_t *attr, size_t off)
{
    uint32_t v;
    memcpy(&v, attr + off, 4);
    return v;
}

/* Bit positions in the flag word of perf_event_attr (after read_format). */
enum {
    ATTR_FLAG_EXCLUDE_KERNEL = 5,
    ATTR_FLAG_FREQ = 10,
    ATTR_FLAG_SAMPLE_ID_ALL = 18,
    ATTR_FLAG_USE_CLOCKID = 25,
};

int perf_layout_from_attr(const uint8_t *attr, size_t attr_size, struct perf_layout *l,
                          const char **why)
{
    memset(l, 0, sizeof(*l));
    size_t flags_off = offsetof(struct perf_event_attr, read_format) + 8;
    if (attr_size < flags_off + 8) {
        *why = "event attributes too short";
        return -1;
    }
    l->type = attr_u32(attr, offsetof(struct perf_event_attr, type));
    l->config = attr_u64(attr, offsetof(struct perf_event_attr, config));
    l->period = attr_u64(attr, offsetof(struct perf_event_attr, sample_period));
    l->sample_type = attr_u64(attr, offsetof(struct perf_event_attr, sample_type));
    l->read_format = attr_u64(attr, offsetof(struct perf_event_attr, read_format));
    uint64_t flags = attr_u64(attr, flags_off);
    l->freq = flags >> ATTR_FLAG_FREQ & 1;
    l->sample_id_all = flags >> ATTR_FLAG_SAMPLE_ID_ALL & 1;
    l->use_clockid = flags >> ATTR_FLAG_USE_CLOCKID & 1;
    l->exclude_kernel = flags >> ATTR_FLAG_EXCLUDE_KERNEL & 1;

    /* Later fields exist only in attrs that are long enough; a layout
     * that needs one of them from an attr that lacks it cannot be read. */
    size_t branch_off = offsetof(struct perf_event_attr, branch_sample_type);
    size_t regs_off = offsetof(struct perf_event_attr, sample_regs_user);
    size_t clock_off = offsetof(struct perf_event_attr, clockid);
    size_t intr_off = offsetof(struct perf_event_attr, sample_regs_intr);
    if (attr_size >= branch_off + 8)
        l->branch_sample_type = attr_u64(attr, branch_off);
    else if (l->sample_type & PERF_SAMPLE_BRANCH_STACK)
        goto too_short;
    if (attr_size >= regs_off + 8)
        l->regs_user_mask = attr_u64(attr, regs_off);
    else if (l->sample_type & PERF_SAMPLE_REGS_USER)
        goto too_short;
    if (attr_size >= clock_off + 4)
        l->clockid = (int32_t)attr_u32(attr, clock_off);
    if (attr_size >= intr_off + 8)
        l->regs_intr_mask = attr_u64(attr, intr_off);
    else if (l->sample_type & PERF_SAMPLE_REGS_INTR)
        goto too_short;
    return 0;
too_short:
    *why = "event attributes too short for their sample layout";
    return -1;
}

size_t perf_layout_id_trailer_size(const struct perf_layout *l)
{
    if (!l->sample_id_all)
        return 0;
    uint64_t t = l->sample_type;
    size_t n = 0;
    n += (t & PERF_SAMPLE_TID) ? 8 : 0;
    n += (t & PERF_SAMPLE_TIME) ? 8 : 0;
    n += (t & PERF_SAMPLE_ID) ? 8 : 0;
    n += (t & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
    n += (t & PERF_SAMPLE_CPU) ? 8 : 0;
    n += (t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
    return n;
}

static void parse_trailer(const struct perf_layout *l, struct cursor *c, struct perf_record *r)
{
    uint64_t t = l->sample_type;
    if (t & PERF_SAMPLE_TID) {
        r->pid = take_u32(c);
        r->tid = take_u32(c);
        r->has_tid = true;
    }
    if (t & PERF_SAMPLE_TIME) {
        r->time = take_u64(c);
        r->has_time = true;
    }
    if (t & PERF_SAMPLE_ID)
        take_u64(c);
    if (t & PERF_SAMPLE_STREAM_ID)
        take_u64(c);
    if (t & PERF_SAMPLE_CPU)
        take_u64(c);
    if (t & PERF_SAMPLE_IDENTIFIER)
        take_u64(c);
}

uint64_t perf_read_value(const struct perf_read_values *r, uint64_t i, uint64_t *id)
{
    const uint8_t *e = r->entries + i * r->stride * 8;
    if (id)
        *id = r->stride > 1 ? perf_u64(e, 1) : 0;
    return perf_u64(e, 0);
}

static void parse_read(const struct perf_layout *l, struct cursor *c, struct perf_read_values *rv)
{
    uint64_t f = l->read_format;
    /* Per value: the value, its id, its lost count. */
    rv->stride = 1 + ((f & PERF_FORMAT_ID) ? 1 : 0) + ((f & PERF_FORMAT_LOST) ? 1 : 0);
    if (f & PERF_FORMAT_GROUP) {
        rv->nr = take_u64(c);
        if (f & PERF_FORMAT_TOTAL_TIME_ENABLED)
            rv->time_enabled = take_u64(c);
        if (f & PERF_FORMAT_TOTAL_TIME_RUNNING)
            rv->time_running = take_u64(c);
        if (rv->nr > c->left / 8 / rv->stride) {
            c->bad = true;
            return;
        }
        rv->entries = take_words(c, rv->nr * rv->stride);
        return;
    }
    /* One value: value, [enabled], [running], [id], [lost].  The entry is
     * the value alone (its id, if any, is not next to it). */
    rv->nr = 1;
    rv->stride = 1;
    rv->entries = take_bytes(c, 8);
    if (f & PERF_FORMAT_TOTAL_TIME_ENABLED)
        rv->time_enabled = take_u64(c);
    if (f & PERF_FORMAT_TOTAL_TIME_RUNNING)
        rv->time_running = take_u64(c);
    if (f & PERF_FORMAT_ID)
        take_u64(c);
    if (f & PERF_FORMAT_LOST)
        take_u64(c);
}

static unsigned popcount64(uint64_t v)
{
    return (unsigned)__builtin_popcountll(v);
}

static void parse_sample(const struct perf_layout *l, struct cursor *c, struct perf_record *r)
{
    struct perf_sample *s = &r->u.sample;
    uint64_t t = l->sample_type;
    if (t & PERF_SAMPLE_IDENTIFIER)
        s->identifier = take_u64(c);
    if (t & PERF_SAMPLE_IP)
        s->ip = take_u64(c);
    if (t & PERF_SAMPLE_TID) {
        s->pid = take_u32(c);
        s->tid = take_u32(c);
        r->pid = s->pid;
        r->tid = s->tid;
        r->has_tid = true;
    }
    if (t & PERF_SAMPLE_TIME) {
        s->time = take_u64(c);
        r->time = s->time;
        r->has_time = true;
    }
    if (t & PERF_SAMPLE_ADDR)
        s->addr = take_u64(c);
    if (t & PERF_SAMPLE_ID)
        s->id = take_u64(c);
    if (t & PERF_SAMPLE_STREAM_ID)
        s->stream_id = take_u64(c);
    if (t & PERF_SAMPLE_CPU) {
        s->cpu = take_u32(c);
        take_u32(c);
    }
    if (t & PERF_SAMPLE_PERIOD)
        s->period = take_u64(c);
    if (t & PERF_SAMPLE_READ)
        parse_read(l, c, &s->read);
    if (t & PERF_SAMPLE_CALLCHAIN) {
        s->callchain_nr = take_u64(c);
        s->callchain = take_words(c, s->callchain_nr);
    }
    if (t & PERF_SAMPLE_RAW) {
        uint32_t size = take_u32(c);
        take_bytes(c, size);
    }
    if (t & PERF_SAMPLE_BRANCH_STACK) {
        uint64_t nr = take_u64(c);
        if (l->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX)
            take_u64(c);
        if (nr > c->left / 24)
            c->bad = true;
        else
            take_bytes(c, nr * 24);
    }
    if (t & PERF_SAMPLE_REGS_USER) {
        s->regs_abi = take_u64(c);
        if (s->regs_abi) {
            s->nregs = popcount64(l->regs_user_mask);
            s->regs = take_words(c, s->nregs);
        }
    }
    if (t & PERF_SAMPLE_STACK_USER) {
        uint64_t size = take_u64(c);
        if (size) {
            const uint8_t *data = take_bytes(c, size);
            uint64_t dyn = take_u64(c);
            /* dyn_size: how much of the copy is real stack. */
            s->stack = data;
            s->stack_size = dyn < size ? dyn : size;
            s->stack_requested = size;
        }
    }
    if (t & PERF_SAMPLE_WEIGHT || t & PERF_SAMPLE_WEIGHT_STRUCT)
        take_u64(c);
    if (t & PERF_SAMPLE_DATA_SRC)
        take_u64(c);
    if (t & PERF_SAMPLE_TRANSACTION)
        take_u64(c);
    if (t & PERF_SAMPLE_REGS_INTR) {
        if (take_u64(c))
            take_words(c, popcount64(l->regs_intr_mask));
    }
    /* PHYS_ADDR, CGROUP, DATA_PAGE_SIZE, CODE_PAGE_SIZE, AUX: nothing we
     * use follows them, so they need not be walked. */
}

static void parse_mmap(const struct perf_layout *l, struct cursor *c, struct perf_record *r)
{
    struct perf_mmap *m = &r->u.mmap;
    m->mmap2 = r->type == PERF_REC_MMAP2;
    m->pid = take_u32(c);
    m->tid = take_u32(c);
    m->addr = take_u64(c);
    m->len = take_u64(c);
    m->pgoff = take_u64(c);
    if (m->mmap2) {
        if (r->misc & PERF_REC_MISC_MMAP_BUILD_ID) {
            /* u8 size, 3 reserved, 20 bytes of build-id */
            const uint8_t *b = take_bytes(c, 24);
            if (b) {
                m->has_build_id = true;
                m->build_id_size = b[0] <= 20 ? b[0] : 20;
                m->build_id = b + 4;
            }
        } else {
            m->maj = take_u32(c);
            m->min = take_u32(c);
            m->ino = take_u64(c);
            m->ino_generation = take_u64(c);
        }
        m->prot = take_u32(c);
        m->flags = take_u32(c);
    } else {
        m->prot = 0x4; /* PROT_EXEC: MMAP records name executable mappings */
    }
    m->filename = take_string(c, perf_layout_id_trailer_size(l));
    r->pid = m->pid;
    r->tid = m->tid;
    r->has_tid = true;
}

size_t perf_record_parse(const struct perf_layout *l, const uint8_t *data, size_t avail,
                         struct perf_record *out, const char **why)
{
    memset(out, 0, sizeof(*out));
    if (avail < PERF_REC_HEADER_SIZE) {
        *why = "record header cut short";
        return 0;
    }
    memcpy(&out->type, data, 4);
    memcpy(&out->misc, data + 4, 2);
    memcpy(&out->size, data + 6, 2);
    if (out->size < PERF_REC_HEADER_SIZE) {
        *why = "record size below its header";
        return 0;
    }
    if (out->size > avail) {
        *why = "record cut short";
        return 0;
    }
    struct cursor c = {.p = data + PERF_REC_HEADER_SIZE, .left = out->size - PERF_REC_HEADER_SIZE};
    size_t trailer = perf_layout_id_trailer_size(l);
    switch (out->type) {
    case PERF_REC_SAMPLE:
        parse_sample(l, &c, out);
        break;
    case PERF_REC_MMAP:
    case PERF_REC_MMAP2:
        parse_mmap(l, &c, out);
        break;
    case PERF_REC_COMM:
        out->u.comm.pid = take_u32(&c);
        out->u.comm.tid = take_u32(&c);
        out->u.comm.exec = (out->misc & PERF_REC_MISC_COMM_EXEC) != 0;
        out->u.comm.comm = take_string(&c, trailer);
        out->pid = out->u.comm.pid;
        out->tid = out->u.comm.tid;
        out->has_tid = true;
        break;
    case PERF_REC_FORK:
    case PERF_REC_EXIT:
        out->u.task.pid = take_u32(&c);
        out->u.task.ppid = take_u32(&c);
        out->u.task.tid = take_u32(&c);
        out->u.task.ptid = take_u32(&c);
        out->u.task.time = take_u64(&c);
        out->pid = out->u.task.pid;
        out->tid = out->u.task.tid;
        out->has_tid = true;
        break;
    case PERF_REC_LOST:
        out->u.lost.id = take_u64(&c);
        out->u.lost.lost = take_u64(&c);
        break;
    case PERF_REC_LOST_SAMPLES:
        out->u.dropped = take_u64(&c);
        break;
    case PERF_REC_SWITCH: /* nothing but its sample_id trailer */
        break;
    default:
        return out->size; /* known by its size only */
    }
    if (c.bad) {
        *why = "record fields do not fit its size";
        return 0;
    }
    /* The sample_id_all trailer sits at the very end of the others. */
    if (out->type != PERF_REC_SAMPLE && trailer) {
        if (c.left < trailer) {
            *why = "record too short for its sample_id trailer";
            return 0;
        }
        struct cursor tc = {.p = data + out->size - trailer, .left = trailer};
        uint32_t pid = out->pid, tid = out->tid;
        bool had_tid = out->has_tid;
        parse_trailer(l, &tc, out);
        if (had_tid) { /* the record's own ids win over the trailer's */
            out->pid = pid;
            out->tid = tid;
        }
        if (out->type == PERF_REC_FORK || out->type == PERF_REC_EXIT) {
            out->time = out->u.task.time;
            out->has_time = true;
        }
    } else if (out->type == PERF_REC_FORK || out->type == PERF_REC_EXIT) {
        out->time = out->u.task.time;
        out->has_time = true;
    }
    return out->size;
}

bool perf_record_identifier(const uint8_t *rec, size_t size, bool is_sample, uint64_t *id)
{
    if (size < PERF_REC_HEADER_SIZE + 8)
        return false;
    *id = is_sample ? perf_u64(rec + PERF_REC_HEADER_SIZE, 0) : perf_u64(rec + size - 8, 0);
    return true;
}

void perf_record_visit(const struct perf_record *r, const struct perf_record_visitor *v, void *ctx)
{
    switch (r->type) {
    case PERF_REC_SAMPLE:
        if (v->sample)
            v->sample(ctx, r);
        break;
    case PERF_REC_MMAP:
    case PERF_REC_MMAP2:
        if (v->mmap)
            v->mmap(ctx, r);
        break;
    case PERF_REC_COMM:
        if (v->comm)
            v->comm(ctx, r);
        break;
    case PERF_REC_FORK:
        if (v->fork)
            v->fork(ctx, r);
        break;
    case PERF_REC_EXIT:
        if (v->exit)
            v->exit(ctx, r);
        break;
    case PERF_REC_LOST:
        if (v->lost)
            v->lost(ctx, r->u.lost.lost);
        break;
    case PERF_REC_LOST_SAMPLES:
        if (v->lost)
            v->lost(ctx, r->u.dropped);
        break;
    case PERF_REC_THROTTLE:
        if (v->throttle)
            v->throttle(ctx);
        break;
    case PERF_REC_SWITCH:
        if (v->context_switch)
            v->context_switch(ctx, r);
        break;
    default:
        break;
    }
}
