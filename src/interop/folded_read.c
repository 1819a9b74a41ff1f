/*
 * folded_read.c - see folded.h: folded stacks ("a;b;c 12" lines), read one
 * line at a time, into a struct profile, with synthetic PCs resolved by
 * the locations table.
 */
#include "interop/folded.h"
#include "interop/folded_names.h"
#include "model/stack_table.h"
#include "util/linereader.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest count token read ("12345.678..."): beyond this it is not one. */
#define MAX_COUNT_CHARS 64

struct folded_line {
    const char *stack;
    size_t stack_len;
    double count;
};

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Reads line S[0..N) (without its '\n').  Returns 1 with OUT filled, 0
 * for a blank line, -1 with the reason in WHY. */
static int parse_line(const char *s, size_t n, struct folded_line *out, char *why, size_t whylen)
{
    while (n > 0 && (blank(s[n - 1]) || s[n - 1] == '\r'))
        n--;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            snprintf(why, whylen, "not text (byte 0x%02x at column %zu)", c, i + 1);
            return -1;
        }
    }
    while (n > 0 && blank(*s)) {
        s++;
        n--;
    }
    if (n == 0)
        return 0;
    size_t sp = n;
    while (sp > 0 && !blank(s[sp - 1]))
        sp--;
    if (sp == 0) {
        snprintf(why, whylen, "no count after the stack (expected 'frame;frame;... COUNT')");
        return -1;
    }
    const char *num = s + sp;
    size_t nlen = n - sp;
    size_t digits = 0, dots = 0;
    bool ok = nlen <= MAX_COUNT_CHARS;
    for (size_t i = 0; ok && i < nlen; i++) {
        if (num[i] >= '0' && num[i] <= '9') {
            digits++;
        } else if (num[i] == '.' && dots == 0) {
            dots++;
        } else {
            ok = false;
        }
    }
    if (!ok || digits == 0) {
        snprintf(why, whylen, "the count '%.*s' is not a non-negative number",
                 (int)(nlen > 40 ? 40 : nlen), num);
        return -1;
    }
    char buf[MAX_COUNT_CHARS + 1];
    memcpy(buf, num, nlen);
    buf[nlen] = '\0';
    out->count = strtod(buf, NULL);
    while (sp > 0 && blank(s[sp - 1]))
        sp--;
    if (sp == 0) {
        snprintf(why, whylen, "no stack before the count");
        return -1;
    }
    out->stack = s;
    out->stack_len = sp;
    return 1;
}

bool folded_detect(const void *data, size_t len)
{
    /* The first line is judged whole however long (a deep stack): only
     * the lines after it stop at the limit. */
    size_t limit = FOLDED_DETECT_BYTES;
    const char *first_nl = memchr(data, '\n', len);
    if (first_nl && (size_t)(first_nl - (const char *)data) >= limit)
        limit = (size_t)(first_nl - (const char *)data) + 1;
    const char *s = data, *end = s + (len < limit ? len : limit);
    bool whole = len <= limit;
    size_t lines = 0;
    char why[128];
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl && !whole)
            break; /* cut by the limit: not judged */
        const char *e = nl ? nl : end;
        struct folded_line l;
        int rc = parse_line(s, (size_t)(e - s), &l, why, sizeof(why));
        /* No tool writes a stack that starts with '#': such a line is a
         * comment of some other text format. */
        if (rc < 0 || (rc == 1 && (l.stack[l.stack_len - 1] == ',' || l.stack[0] == '#')))
            return false;
        lines += (size_t)rc;
        s = e + 1;
    }
    return lines > 0;
}

struct reader {
    const char *name;
    struct profile *p;
    struct name_table *names;
    struct stack_table *stacks;
    double *counts; /* per stack id */
    bool *cut;      /* per stack id: a line of it was deeper than FOLDED_MAX_DEPTH */
    size_t counts_cap;
    size_t deep_lines, first_deep_line;
    double total;
    uint64_t *pcs; /* scratch, FOLDED_MAX_DEPTH */
    char *frame;   /* scratch for one frame's name */
    size_t frame_cap;
    /* The stack of the line before, and its id (0: none yet): a line that
     * repeats it needs no frame looked up again. */
    char *last;
    size_t last_len, last_cap;
    uint32_t last_id;
    bool last_deep;
};

/* google-pprof --collapsed appends "<ADDRESS>" (16 hex digits) to the
 * names it found in a symbol table: the function's address, not its name. */
static bool pprof_address(const char *s, size_t n, uint64_t *addr)
{
    if (n < 19 || s[n - 1] != '>' || s[n - 18] != '<')
        return false;
    uint64_t v = 0;
    for (size_t i = n - 17; i < n - 1; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return false;
        v = v << 4 | (uint64_t)d;
    }
    *addr = v;
    return true;
}

/* An inlined frame's mark at the end of its name: google-pprof --collapsed
 * writes "[inline]", FlameGraph's stackcollapse-perf.pl --inline "_[i]".
 * The name is the function's (google-pprof --text counts it under it). */
static bool inline_mark(const char *s, size_t *n)
{
    static const char *const marks[] = {"[inline]", "_[i]"};
    for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
        size_t len = strlen(marks[i]);
        if (*n > len && memcmp(s + *n - len, marks[i], len) == 0) {
            *n -= len;
            return true;
        }
    }
    return false;
}

static uint64_t frame_pc(struct reader *r, const char *s, size_t n)
{
    uint64_t offset = 0;
    if (pprof_address(s, n, &offset))
        n -= 18;
    bool inlined = inline_mark(s, &n);
    if (n == 0) {
        s = "[unknown]";
        n = strlen(s);
    }
    r->frame = xgrow(r->frame, &r->frame_cap, n + 1, 1);
    memcpy(r->frame, s, n);
    r->frame[n] = '\0';
    struct name_frame f = {.function = r->frame, .binary = "[unknown]", .inlined = inlined};
    return name_table_pc(r->names, 0, offset, &f, 1);
}

/* The stack id of L's frames, and whether they were more than
 * FOLDED_MAX_DEPTH (*DEEP). */
static uint32_t stack_of(struct reader *r, const struct folded_line *l, bool *deep)
{
    size_t depth = 1;
    for (size_t i = 0; i < l->stack_len; i++)
        depth += l->stack[i] == ';';
    /* Root first in the file, leaf first in the profile: keep the
     * innermost FOLDED_MAX_DEPTH frames of a deeper stack. */
    size_t skip = depth > FOLDED_MAX_DEPTH ? depth - FOLDED_MAX_DEPTH : 0;
    uint32_t kept = (uint32_t)(depth - skip);
    const char *s = l->stack, *end = l->stack + l->stack_len;
    for (size_t i = 0; i < depth; i++) {
        const char *semi = memchr(s, ';', (size_t)(end - s));
        const char *e = semi ? semi : end;
        if (i >= skip)
            r->pcs[kept - 1 - (i - skip)] = frame_pc(r, s, (size_t)(e - s));
        s = e + 1;
    }
    *deep = skip > 0;
    return stack_table_id(r->stacks, r->p, r->pcs, kept);
}

static void add_line(struct reader *r, const struct folded_line *l, size_t lineno)
{
    bool deep = r->last_deep;
    uint32_t id = r->last_id;
    if (!id || l->stack_len != r->last_len || memcmp(l->stack, r->last, l->stack_len) != 0) {
        id = stack_of(r, l, &deep);
        r->last = xgrow(r->last, &r->last_cap, l->stack_len + 1, 1);
        memcpy(r->last, l->stack, l->stack_len);
        r->last_len = l->stack_len;
        r->last_id = id;
        r->last_deep = deep;
    }
    if (id >= r->counts_cap) {
        size_t old = r->counts_cap;
        r->counts = xgrow(r->counts, &r->counts_cap, (size_t)id + 1, sizeof(*r->counts));
        r->cut = xrealloc(r->cut, r->counts_cap * sizeof(*r->cut));
        memset(r->counts + old, 0, (r->counts_cap - old) * sizeof(*r->counts));
        memset(r->cut + old, 0, (r->counts_cap - old) * sizeof(*r->cut));
    }
    r->counts[id] += l->count;
    if (deep) {
        r->cut[id] = true;
        if (r->deep_lines++ == 0)
            r->first_deep_line = lineno;
    }
}

/* The samples stack ID's COUNT stands for (folded.h): the count itself
 * when whole, else rounded, at least 1. */
static uint64_t weight_of(double count)
{
    double n = nearbyint(count);
    return n < 1 ? 1 : (uint64_t)n;
}

/* A sample of stack ID standing for WEIGHT samples, after *USED counts
 * (CPU time so far) and COUNT more. */
static void push_stack(struct reader *r, uint32_t id, uint64_t weight, double count, double *used)
{
    struct profile *p = r->p;
    *used += count;
    uint64_t cpu = (uint64_t)llround(*used * FOLDED_COUNT_NS);
    struct prof_thread_sample t = {
        .pc = p->stacks[id].pcs[0],
        .cpu_ns = cpu,
        .stack = id,
        .syscall = -1,
        .flags = r->cut[id] ? PROF_THREAD_STACK_TRUNCATED : 0,
    };
    struct prof_sample *s = &p->samples[p->nsamples++];
    *s = (struct prof_sample){.time_ns = cpu};
    profile_sample_set_one(p, s, &t, weight);
}

/* One sample per stack standing for its count (folded.h); the thread's
 * first appearance counts no wall time (analyze/metrics.h), so the first
 * stack's first sample is one of its own. */
static void fill_samples(struct reader *r)
{
    struct profile *p = r->p;
    p->samples = xcalloc(p->nstacks + 1, sizeof(*p->samples));
    double used = 0; /* counts laid out so far */
    uint64_t n = 0;
    for (uint32_t id = 1; id < p->nstacks; id++) {
        double c = r->counts[id];
        if (c <= 0)
            continue;
        uint64_t w = weight_of(c);
        if (n == 0 && w > 1) {
            push_stack(r, id, 1, c / (double)w, &used);
            push_stack(r, id, w - 1, c - c / (double)w, &used);
        } else {
            push_stack(r, id, w, c, &used);
        }
        n += w;
    }
    uint64_t cpu = (uint64_t)llround(used * FOLDED_COUNT_NS);
    p->totals = (struct prof_totals){.wall_ns = cpu, .samples = n, .ideal_samples = n};
    p->has_totals = true;
}

static void add_meta(struct profile *p, const char *key, const char *value)
{
    p->meta = xrealloc(p->meta, (p->nmeta + 1) * sizeof(*p->meta));
    p->meta[p->nmeta++] = (struct prof_meta){.key = xstrdup(key), .value = xstrdup(value)};
}

int folded_load_stream(struct instream *in, struct profile *out)
{
    profile_init(out);
    const char *name = instream_name(in);
    struct reader r = {
        .name = name,
        .p = out,
        .names = name_table_new(out),
        .stacks = stack_table_new(),
        .pcs = xmalloc(FOLDED_MAX_DEPTH * sizeof(uint64_t)),
    };
    r.counts = xcalloc(1, sizeof(*r.counts)); /* id 0, the empty stack, has none */
    r.cut = xcalloc(1, sizeof(*r.cut));
    r.counts_cap = 1;
    out->stacks = xcalloc(1, sizeof(*out->stacks)); /* id 0: no stack */
    out->nstacks = 1;
    struct line_reader lines;
    line_reader_init(&lines, in);
    const char *s;
    size_t n;
    int rc = 0, got = 0;
    char why[160];
    while (rc == 0 && (got = line_reader_next(&lines, &s, &n)) == 1) {
        size_t lineno = (size_t)lines.lineno;
        struct folded_line l;
        int lr = parse_line(s, n, &l, why, sizeof(why));
        if (lr < 0) {
            pt_err("%s:%zu: %s", name, lineno, why);
            rc = -1;
        } else if (lr == 1 && l.count > FOLDED_MAX_TOTAL - r.total) {
            pt_err("%s:%zu: the counts add up to more than %.0e", name, lineno, FOLDED_MAX_TOTAL);
            rc = -1;
        } else if (lr == 1) {
            r.total += l.count;
            add_line(&r, &l, lineno);
        }
    }
    if (rc == 0 && got < 0)
        rc = -1;
    if (rc == 0) {
        if (r.deep_lines)
            pt_warn("%s:%zu: %zu stack%s deeper than %u frames kept only %s innermost %u", name,
                    r.first_deep_line, r.deep_lines, r.deep_lines == 1 ? "" : "s", FOLDED_MAX_DEPTH,
                    r.deep_lines == 1 ? "its" : "their", FOLDED_MAX_DEPTH);
        fill_samples(&r);
        name_table_locations(r.names);
        out->processes = xcalloc(1, sizeof(*out->processes));
        out->nprocesses = 1;
        out->processes[0] = (struct prof_process){.exe = xstrdup("")};
        out->threads = xcalloc(1, sizeof(*out->threads));
        out->nthreads = 1;
        out->threads[0] = (struct prof_thread){.name = xstrdup("")};
        out->frequency = 1e9 / FOLDED_COUNT_NS;
        add_meta(out, "stacks", "folded (names only)");
        add_meta(out, "start_time", "0");
        out->format = xstrdup("folded");
    } else {
        profile_free(out);
    }
    name_table_free(r.names);
    stack_table_free(r.stacks);
    free(r.counts);
    free(r.cut);
    free(r.pcs);
    free(r.frame);
    free(r.last);
    return rc;
}

int folded_load_buffer(const char *name, const void *data, size_t len, struct profile *out)
{
    struct instream *in = instream_open_memory_plain(name, data, len);
    int rc = folded_load_stream(in, out);
    instream_close(in);
    return rc;
}
