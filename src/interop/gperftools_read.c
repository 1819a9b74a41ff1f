/*
 * gperftools_read.c - see gperftools.h: a gperftools CPU profile, any slot
 * size and byte order, into a struct profile.
 */
#include "interop/gperftools.h"
#include "model/stack_table.h"
#include "model/maps.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Periods beyond this are not a profiler's (0.01 Hz). */
#define MAX_PERIOD_US 100000000u

/* What the records say per distinct call chain (stack id). */
struct chain {
    uint64_t ticks;
    bool cut; /* a record of it was deeper than GPERFTOOLS_MAX_DEPTH */
};

struct reader {
    const char *name;
    const unsigned char *data;
    size_t len;
    unsigned slot;
    bool big_endian;
};

static uint64_t load_slot(const unsigned char *p, unsigned size, bool big_endian)
{
    /* memcpy and a byte swap: a 100 MB profile is mostly slots. */
    if (size == 8) {
        uint64_t v;
        memcpy(&v, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return big_endian ? __builtin_bswap64(v) : v;
#else
        return big_endian ? v : __builtin_bswap64(v);
#endif
    }
    uint32_t v;
    memcpy(&v, p, 4);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return big_endian ? __builtin_bswap32(v) : v;
#else
    return big_endian ? v : __builtin_bswap32(v);
#endif
}

/* The slot at byte OFF; the caller has checked that it is in the file. */
static uint64_t slot_at(const struct reader *r, size_t off)
{
    return load_slot(r->data + off, r->slot, r->big_endian);
}

static size_t slots_left(const struct reader *r, size_t off)
{
    return off <= r->len ? (r->len - off) / r->slot : 0;
}

bool gperftools_detect(const void *data, size_t len, struct gperftools_layout *layout)
{
    const unsigned char *d = data;
    static const unsigned char zero[8];
    if (len < 12 || memcmp(d, zero, 4) != 0)
        return false;
    /* Slot 0 is 0 in either size; the header count (>= 3) lands in bytes
     * 4..7 of a 32-bit file and in bytes 8..15 of a 64-bit one, whose bytes
     * 4..7 are the upper half of slot 0. */
    unsigned size = memcmp(d + 4, zero, 4) != 0 ? 4 : 8;
    if (len < 3u * size)
        return false;
    for (int be = 0; be <= 1; be++) {
        uint64_t words = load_slot(d + size, size, be);
        if (words < 3 || words > GPERFTOOLS_MAX_HEADER_WORDS)
            continue;
        if (load_slot(d + 2 * size, size, be) != 0)
            return false; /* version: only 0 exists */
        if (layout)
            *layout = (struct gperftools_layout){.slot_size = size, .big_endian = be};
        return true;
    }
    return false;
}

/* --- the binary part ----------------------------------------------------- */

/* Header at the start; returns the offset of the first record, or 0 after
 * a message. */
static size_t read_header(const struct reader *r, uint64_t *period_us)
{
    uint64_t words = slot_at(r, r->slot);
    if (slots_left(r, 0) < 2 + words) {
        pt_err("%s: offset 0: the header of %" PRIu64 " slots is cut short (%zu bytes in the file)",
               r->name, 2 + words, r->len);
        return 0;
    }
    *period_us = slot_at(r, 3 * (size_t)r->slot);
    if (*period_us == 0 || *period_us > MAX_PERIOD_US) {
        pt_err("%s: offset %u: sampling period %" PRIu64 " us is out of range (1 to %u)", r->name,
               3 * r->slot, *period_us, MAX_PERIOD_US);
        return 0;
    }
    return (size_t)(2 + words) * r->slot;
}

/* The records up to and including the trailer.  Fills P's stacks and, per
 * stack id, its chain's ticks summed over its records in *CHAINS; returns
 * the offset after the trailer, or 0 after a message.  MAX_TICKS keeps the
 * CPU time they make inside 64 bits of nanoseconds. */
static size_t read_records(const struct reader *r, size_t off, uint64_t max_ticks,
                           struct profile *p, struct chain **chains, uint64_t *total)
{
    struct stack_table *table = stack_table_new();
    size_t chain_cap = 0;
    uint64_t *pcs = xmalloc(GPERFTOOLS_MAX_DEPTH * sizeof(*pcs));
    size_t end = 0;
    for (;;) {
        size_t left = slots_left(r, off);
        if (off == r->len) {
            pt_err("%s: offset %zu: the file ends without the trailer (0, 1, 0)", r->name, off);
            break;
        }
        if (left < 2) {
            pt_err("%s: offset %zu: record cut short (%zu bytes left)", r->name, off, r->len - off);
            break;
        }
        uint64_t count = slot_at(r, off);
        uint64_t depth = slot_at(r, off + r->slot);
        if (depth == 0) {
            pt_err("%s: offset %zu: record with no PCs", r->name, off);
            break;
        }
        if (depth > left - 2) {
            pt_err("%s: offset %zu: record of %" PRIu64 " PCs cut short (%zu slots left)", r->name,
                   off, depth, left - 2);
            break;
        }
        size_t first_pc = off + 2 * (size_t)r->slot;
        if (count == 0) {
            if (depth == 1 && slot_at(r, first_pc) == 0) {
                end = first_pc + r->slot;
                break;
            }
            pt_err("%s: offset %zu: record with a count of 0 that is not the trailer", r->name,
                   off);
            break;
        }
        if (count > max_ticks - *total) {
            pt_err("%s: offset %zu: count %" PRIu64 " makes more than %" PRIu64
                   " ticks in all (past 2^64 ns of CPU time)",
                   r->name, off, count, max_ticks);
            break;
        }
        *total += count;
        /* Deeper chains keep their innermost frames (leaf first). */
        uint32_t kept = depth > GPERFTOOLS_MAX_DEPTH ? GPERFTOOLS_MAX_DEPTH : (uint32_t)depth;
        for (uint32_t i = 0; i < kept; i++)
            pcs[i] = slot_at(r, first_pc + (size_t)i * r->slot);
        uint32_t id = stack_table_id(table, p, pcs, kept);
        if (id + 1 > chain_cap) {
            size_t old = chain_cap;
            *chains = xgrow(*chains, &chain_cap, (size_t)id + 1, sizeof(**chains));
            memset(*chains + old, 0, (chain_cap - old) * sizeof(**chains));
        }
        (*chains)[id].ticks += count;
        (*chains)[id].cut |= kept < depth;
        off = first_pc + (size_t)depth * r->slot;
    }
    free(pcs);
    stack_table_free(table);
    return end;
}

/* --- the mapped objects -------------------------------------------------- */

static bool word_char(char c)
{
    return c == '_' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* PATH with every "$build" that a non-word character (or the end) follows
 * replaced by BUILD. */
static char *substitute_build(const char *path, const char *build)
{
    static const char var[] = "$build";
    const size_t vlen = sizeof(var) - 1;
    size_t n = 0;
    for (const char *s = path; (s = strstr(s, var)); s += vlen)
        n += !word_char(s[vlen]);
    if (n == 0)
        return xstrdup(path);
    size_t blen = strlen(build);
    char *out = xmalloc(strlen(path) + n * blen + 1), *o = out;
    for (const char *s = path;;) {
        const char *hit = strstr(s, var);
        if (!hit) {
            strcpy(o, s);
            return out;
        }
        size_t keep = (size_t)(hit - s);
        memcpy(o, s, keep);
        o += keep;
        if (word_char(hit[vlen])) {
            memcpy(o, var, vlen);
            o += vlen;
        } else {
            memcpy(o, build, blen);
            o += blen;
        }
        s = hit + vlen;
    }
}

/* The mapped-objects text at offset AT of the file, up to its last whole
 * line: libprofiler ends it with a newline, so a last line without one was
 * cut short (and is left out: a cut path names another file).  Returns the
 * offset of that cut line, or 0 when the text is whole. */
static size_t read_maps(const char *text, size_t len, size_t at, struct profile *p, char **build)
{
    size_t cap = 0;
    const char *s = text, *end = text + len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl)
            return at + (size_t)(s - text);
        const char *line_end = nl;
        const char *t = s;
        while (t < line_end && *t == ' ')
            t++;
        if ((size_t)(line_end - t) >= 6 && memcmp(t, "build=", 6) == 0) {
            size_t n = (size_t)(line_end - t - 6);
            free(*build);
            *build = xmalloc(n + 1);
            memcpy(*build, t + 6, n);
            (*build)[n] = '\0';
        } else {
            /* Anything that is not a maps line is ignored, as the
             * format asks. */
            struct map_list one = {0};
            if (maps_parse(s, (size_t)(line_end - s), &one) == 0 && one.count == 1) {
                struct map_entry *e = &one.entries[0];
                p->maps = xgrow(p->maps, &cap, p->nmaps + 1, sizeof(*p->maps));
                p->maps[p->nmaps++] = (struct prof_map){
                    .start = e->start,
                    .end = e->end,
                    .offset = e->offset,
                    .inode = e->inode,
                    .dev_major = e->dev_major,
                    .dev_minor = e->dev_minor,
                    .perms = e->perms,
                    .path = *build ? substitute_build(e->path, *build) : xstrdup(e->path),
                };
            }
            maps_clear(&one);
        }
        s = line_end + 1;
    }
    return 0;
}

/* --- the profile --------------------------------------------------------- */

/* Appends a sample of one thread standing for TICKS ticks of STACK, TICKS
 * periods after the previous one. */
static void push_chain(struct profile *p, uint32_t stack, bool cut, uint64_t ticks, uint64_t *done,
                       uint64_t period_ns)
{
    *done += ticks;
    uint64_t t = *done * period_ns;
    struct prof_thread_sample th = {
        .pc = p->stacks[stack].pcs[0],
        .cpu_ns = t,
        .stack = stack,
        .syscall = -1,
        .flags = cut ? PROF_THREAD_STACK_TRUNCATED : 0,
    };
    struct prof_sample *s = &p->samples[p->nsamples++];
    *s = (struct prof_sample){.time_ns = t};
    profile_sample_set_one(p, s, &th, ticks);
}

/* One sample per chain, standing for its ticks (weights), chains in order
 * of first appearance: the format's order of records means nothing
 * (libprofiler writes them as they leave its hash table).  The samples
 * form a timeline of one period per tick; the thread's first appearance
 * counts no wall time (analyze/metrics.h), so the first chain's first tick
 * is a sample of its own and only that one period is lost, as when every
 * tick was a sample. */
static void fill_samples(struct profile *p, const struct chain *chains, uint64_t total,
                         uint64_t period_ns)
{
    if (total == 0)
        return;
    p->samples = xcalloc(p->nstacks + 1, sizeof(*p->samples));
    uint64_t done = 0;
    for (uint32_t stack = 1; stack < p->nstacks; stack++) {
        uint64_t ticks = chains[stack].ticks;
        if (ticks == 0)
            continue;
        if (done == 0 && ticks > 1) {
            push_chain(p, stack, chains[stack].cut, 1, &done, period_ns);
            ticks--;
        }
        push_chain(p, stack, chains[stack].cut, ticks, &done, period_ns);
    }
}

static void fill_process(struct profile *p, const char *build, uint64_t total, uint64_t period_ns)
{
    const char *exe = build;
    for (size_t i = 0; !exe && i < p->nmaps; i++)
        if (p->maps[i].path[0] == '/')
            exe = p->maps[i].path;
    p->processes = xcalloc(1, sizeof(*p->processes));
    p->nprocesses = 1;
    p->processes[0] = (struct prof_process){.exe = xstrdup(exe ? exe : "")};
    p->threads = xcalloc(1, sizeof(*p->threads));
    p->nthreads = 1;
    p->threads[0] = (struct prof_thread){.name = xstrdup("")};
    p->totals = (struct prof_totals){
        .wall_ns = total * period_ns,
        .samples = total,
        .ideal_samples = total,
    };
    p->has_totals = true;
}

int gperftools_load_buffer(const char *name, const void *data, size_t len, struct profile *out)
{
    profile_init(out);
    struct gperftools_layout layout;
    if (!gperftools_detect(data, len, &layout)) {
        pt_err("%s: offset 0: not a gperftools CPU profile (no header 0, 3, 0)", name);
        return -1;
    }
    struct reader r = {.name = name,
                       .data = data,
                       .len = len,
                       .slot = layout.slot_size,
                       .big_endian = layout.big_endian};
    uint64_t period_us = 0;
    size_t off = read_header(&r, &period_us);
    if (off == 0)
        return -1;

    out->stacks = xcalloc(1, sizeof(*out->stacks)); /* id 0: no stack */
    out->nstacks = 1;
    struct chain *chains = NULL;
    uint64_t total = 0, period_ns = period_us * 1000;
    size_t text = read_records(&r, off, UINT64_MAX / period_ns, out, &chains, &total);
    if (text == 0) {
        free(chains);
        profile_free(out);
        return -1;
    }

    char *build = NULL;
    size_t cut = read_maps((const char *)r.data + text, len - text, text, out, &build);
    if (cut) {
        pt_warn("%s: offset %zu: the mapped-objects text ends inside a line; the profile is "
                "truncated there",
                name, cut);
        out->truncated = true;
        out->truncated_at = cut;
    }
    fill_samples(out, chains, total, period_ns);
    fill_process(out, build, total, period_ns);
    size_t deep = 0;
    for (size_t i = 1; i < out->nstacks; i++)
        deep += chains[i].cut;
    if (deep)
        pt_warn("%s: %zu call chain%s deeper than %u frames kept only %s innermost %u", name, deep,
                deep == 1 ? "" : "s", GPERFTOOLS_MAX_DEPTH, deep == 1 ? "its" : "their",
                GPERFTOOLS_MAX_DEPTH);
    free(build);
    free(chains);
    out->format = xstrdup("gperftools");
    out->frequency = 1e6 / (double)period_us;
    return 0;
}
