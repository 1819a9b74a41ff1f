/*
 * perf_script_read.c - see perf_script.h: the text of `perf script` (event
 * headers, call chains, source lines) into a struct profile.
 */
#include "interop/folded_names.h"
#include "model/stack_table.h"
#include "interop/perf_script.h"
#include "util/linereader.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tokens of a header line looked at: the comm, pid, cpu, time, period and
 * event take at most a few more than the comm's words. */
#define MAX_TOKENS 48
/* When nothing in the file says how long a sample stands for. */
#define DEFAULT_SAMPLE_NS 1000000u

struct span {
    const char *s;
    size_t n;
};

/* What an event's header line says of it in numbers. */
struct event_ids {
    bool has_pid;
    uint32_t pid, tid;
    bool has_time;
    uint64_t time_ns;
    bool has_period;
    uint64_t period;
};

struct header {
    struct event_ids id;
    struct span comm;
    struct span event; /* without its ':' */
    struct span rest;  /* what follows the event, trimmed */
};

struct frame {
    uint64_t ip;
    struct span sym, dso, file;
    uint32_t line;
    bool inlined;
};

enum line_kind {
    L_BLANK,
    L_COMMENT,
    L_HEADER,
    L_SIDEBAND,
    L_FRAME,
    L_SRCLINE,
    L_BAD,
};

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

static struct span trim(struct span t)
{
    while (t.n && blank(t.s[0])) {
        t.s++;
        t.n--;
    }
    while (t.n && (blank(t.s[t.n - 1]) || t.s[t.n - 1] == '\r'))
        t.n--;
    return t;
}

static bool span_eq(struct span t, const char *lit)
{
    size_t n = strlen(lit);
    return t.n == n && (n == 0 || memcmp(t.s, lit, n) == 0);
}

static bool all_digits(struct span t)
{
    if (t.n == 0)
        return false;
    for (size_t i = 0; i < t.n; i++)
        if (!is_digit(t.s[i]))
            return false;
    return true;
}

/* A decimal number of at most 19 digits into *OUT. */
static bool parse_u64(struct span t, uint64_t *out)
{
    if (!all_digits(t) || t.n > 19)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < t.n; i++)
        v = v * 10 + (uint64_t)(t.s[i] - '0');
    *out = v;
    return true;
}

static bool parse_u32(struct span t, uint32_t *out)
{
    uint64_t v;
    if (!parse_u64(t, &v) || v > UINT32_MAX)
        return false;
    *out = (uint32_t)v;
    return true;
}

/* "PID/TID" or "TID". */
static bool parse_ids(struct span t, struct header *h)
{
    const char *slash = memchr(t.s, '/', t.n);
    if (!slash) {
        h->id.has_pid = false;
        return parse_u32(t, &h->id.tid);
    }
    struct span a = {t.s, (size_t)(slash - t.s)}, b = {slash + 1, t.n - a.n - 1};
    h->id.has_pid = true;
    return parse_u32(a, &h->id.pid) && parse_u32(b, &h->id.tid);
}

/* "SECONDS.FRACTION:" (perf prints 6 or, with --ns, 9 decimals). */
static bool parse_time(struct span t, uint64_t *ns)
{
    if (t.n < 2 || t.s[t.n - 1] != ':')
        return false;
    t.n--;
    const char *dot = memchr(t.s, '.', t.n);
    struct span sec = {t.s, dot ? (size_t)(dot - t.s) : t.n};
    struct span frac = {dot ? dot + 1 : t.s + t.n, dot ? t.n - sec.n - 1 : 0};
    uint64_t s;
    if (!parse_u64(sec, &s) || s > UINT64_MAX / 1000000000u - 1)
        return false;
    if (dot && !all_digits(frac))
        return false;
    uint64_t f = 0, scale = 100000000u;
    for (size_t i = 0; i < frac.n; i++, scale /= 10)
        f += (uint64_t)(frac.s[i] - '0') * scale;
    *ns = s * 1000000000u + f;
    return true;
}

static bool is_time(struct span t)
{
    uint64_t ns;
    return parse_time(t, &ns);
}

static bool is_cpu(struct span t)
{
    return t.n >= 3 && t.s[0] == '[' && t.s[t.n - 1] == ']' &&
           all_digits((struct span){t.s + 1, t.n - 2});
}

static bool is_event(struct span t)
{
    return t.n >= 2 && t.s[t.n - 1] == ':' && !is_time(t);
}

/* The header whose pid/tid is token I: [CPU] [TIME:] [PERIOD] EVENT:, or
 * at least a time.  END is the end of the line. */
static bool header_at(const struct span *tok, size_t ntok, size_t i, const char *line,
                      const char *end, struct header *h)
{
    memset(h, 0, sizeof(*h));
    if (!parse_ids(tok[i], h))
        return false;
    size_t j = i + 1;
    if (j < ntok && is_cpu(tok[j]))
        j++;
    if (j < ntok && parse_time(tok[j], &h->id.time_ns)) {
        h->id.has_time = true;
        j++;
    }
    if (j + 1 < ntok && all_digits(tok[j]) && is_event(tok[j + 1])) {
        if (!parse_u64(tok[j], &h->id.period))
            return false;
        h->id.has_period = true;
        j++;
    }
    if (j < ntok && is_event(tok[j])) {
        h->event = (struct span){tok[j].s, tok[j].n - 1};
        j++;
    } else if (!h->id.has_time) {
        return false;
    }
    h->comm = trim((struct span){line, (size_t)(tok[i].s - line)});
    const char *rest = j < ntok ? tok[j].s : end;
    h->rest = trim((struct span){rest, (size_t)(end - rest)});
    return h->comm.n > 0;
}

/* SYM+OFF (DSO) after an address, into F. */
static void parse_symbol(struct span r, struct frame *f)
{
    f->sym = (struct span){"", 0};
    f->dso = (struct span){"", 0};
    r = trim(r);
    if (r.n && r.s[r.n - 1] == ')') {
        /* The object is the last parenthesised group after a blank: C++
         * names have parentheses of their own, paths may ("(deleted)"). */
        int depth = 0;
        for (size_t k = r.n; k-- > 0;) {
            depth += r.s[k] == ')';
            depth -= r.s[k] == '(';
            if (depth == 0) {
                if (k == 0 || blank(r.s[k - 1])) {
                    f->dso = (struct span){r.s + k + 1, r.n - k - 2};
                    r.n = k;
                }
                break;
            }
        }
    }
    r = trim(r);
    /* "+0x1f": the offset into the symbol. */
    for (size_t k = r.n; k-- > 0;) {
        if (r.s[k] != '+')
            continue;
        struct span off = {r.s + k + 1, r.n - k - 1};
        bool hex = off.n > 2 && off.s[0] == '0' && off.s[1] == 'x';
        for (size_t m = 2; hex && m < off.n; m++)
            hex = hex_value(off.s[m]) >= 0;
        if (hex)
            r.n = k;
        break;
    }
    f->sym = r;
    if (span_eq(f->dso, "inlined")) {
        f->inlined = true;
        f->dso = (struct span){"", 0};
    }
}

/* "IP [SYM[+OFF]] [(DSO)]"; false when it does not start with an address. */
static bool parse_frame(struct span t, struct frame *f)
{
    memset(f, 0, sizeof(*f));
    t = trim(t);
    size_t n = 0;
    while (n < t.n && !blank(t.s[n]))
        n++;
    if (n == 0 || n > 16)
        return false;
    uint64_t ip = 0;
    for (size_t i = 0; i < n; i++) {
        int v = hex_value(t.s[i]);
        if (v < 0)
            return false;
        ip = ip << 4 | (uint64_t)v;
    }
    f->ip = ip;
    parse_symbol((struct span){t.s + n, t.n - n}, f);
    return true;
}

/* "FILE:LINE" after a frame (-F +srcline); false for what gives neither
 * ("??:0", "[kernel.kallsyms][ffffffff81000130]"). */
static bool parse_srcline(struct span t, struct span *file, uint32_t *line)
{
    const char *colon = NULL;
    for (size_t i = t.n; i-- > 0 && !colon;)
        if (t.s[i] == ':')
            colon = t.s + i;
    if (!colon)
        return false;
    struct span f = {t.s, (size_t)(colon - t.s)}, l = {colon + 1, t.n - f.n - 1};
    if (f.n == 0 || span_eq(f, "??") || !parse_u32(l, line) || *line == 0)
        return false;
    *file = f;
    return true;
}

/* What line S[0..N) is.  AFTER_FRAME: the previous line was a frame (a
 * source line may follow).  Fills H or F as the kind says. */
static enum line_kind classify(const char *s, size_t n, bool after_frame, struct header *h,
                               struct frame *f, char *why, size_t whylen)
{
    struct span line = {s, n};
    while (line.n && line.s[line.n - 1] == '\r')
        line.n--;
    for (size_t i = 0; i < line.n; i++) {
        unsigned char c = (unsigned char)line.s[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f) {
            snprintf(why, whylen, "not text (byte 0x%02x at column %zu)", c, i + 1);
            return L_BAD;
        }
    }
    struct span t = trim(line);
    if (t.n == 0)
        return L_BLANK;
    if (line.s[0] == '#')
        return L_COMMENT;
    if (line.s[0] == '\t') {
        if (parse_frame(t, f))
            return L_FRAME;
        snprintf(why, whylen, "call-chain line without an address ('%.*s')",
                 (int)(t.n > 40 ? 40 : t.n), t.s);
        return L_BAD;
    }
    if (after_frame && line.s[0] == ' ') {
        bool one_word = true;
        for (size_t i = 0; i < t.n && one_word; i++)
            one_word = !blank(t.s[i]);
        if (one_word)
            return L_SRCLINE;
    }
    struct span tok[MAX_TOKENS];
    size_t ntok = 0;
    for (size_t i = 0; i < t.n && ntok < MAX_TOKENS;) {
        while (i < t.n && blank(t.s[i]))
            i++;
        size_t b = i;
        while (i < t.n && !blank(t.s[i]))
            i++;
        if (i > b)
            tok[ntok++] = (struct span){t.s + b, i - b};
    }
    for (size_t i = 1; i < ntok; i++) {
        if (!header_at(tok, ntok, i, t.s, t.s + t.n, h))
            continue;
        if ((h->rest.n >= 12 && memcmp(h->rest.s, "PERF_RECORD_", 12) == 0) ||
            (h->event.n >= 12 && memcmp(h->event.s, "PERF_RECORD_", 12) == 0))
            return L_SIDEBAND;
        return L_HEADER;
    }
    for (size_t i = 0; i < ntok; i++)
        if (tok[i].n >= 12 && memcmp(tok[i].s, "PERF_RECORD_", 12) == 0)
            return L_SIDEBAND;
    /* A source file whose path has blanks in it. */
    if (after_frame && line.s[0] == ' ')
        return L_SRCLINE;
    snprintf(why, whylen, "not an event header ('COMM TID TIME: PERIOD EVENT:'): '%.*s'",
             (int)(t.n > 60 ? 60 : t.n), t.s);
    return L_BAD;
}

bool perf_script_detect(const void *data, size_t len)
{
    const char *s = data;
    const char *end = s + (len < PERF_SCRIPT_DETECT_BYTES ? len : PERF_SCRIPT_DETECT_BYTES);
    bool whole = len <= PERF_SCRIPT_DETECT_BYTES;
    size_t judged = 0;
    bool seen_header = false, after_frame = false;
    char why[160];
    while (s < end && judged < PERF_SCRIPT_DETECT_LINES) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        if (!nl && !whole)
            break; /* cut by the limit: not judged */
        const char *e = nl ? nl : end;
        struct header h;
        struct frame f;
        enum line_kind k = classify(s, (size_t)(e - s), after_frame, &h, &f, why, sizeof(why));
        s = e + 1;
        if (k == L_BAD)
            return false;
        if (!seen_header) {
            if (k == L_BLANK || k == L_COMMENT || k == L_SIDEBAND)
                continue;
            if (k != L_HEADER || h.event.n == 0)
                return false;
            struct frame hf;
            if (!h.id.has_time && !parse_frame(h.rest, &hf))
                return false;
            seen_header = true;
        }
        judged++;
        after_frame = k == L_FRAME || (k == L_HEADER && h.rest.n > 0);
    }
    return seen_header;
}

/* --- the reader ---------------------------------------------------------- */

struct map32 {
    uint32_t *keys, *vals; /* vals UINT32_MAX: empty */
    size_t mask, count;
};

static size_t map32_bucket(const struct map32 *m, uint32_t key)
{
    size_t b = (size_t)(key * 0x9e3779b1u) & m->mask;
    while (m->vals[b] != UINT32_MAX && m->keys[b] != key)
        b = (b + 1) & m->mask;
    return b;
}

static bool map32_get(const struct map32 *m, uint32_t key, uint32_t *val)
{
    if (!m->mask)
        return false;
    size_t b = map32_bucket(m, key);
    *val = m->vals[b];
    return *val != UINT32_MAX;
}

/* VAL must not be UINT32_MAX. */
static void map32_put(struct map32 *m, uint32_t key, uint32_t val)
{
    if ((m->count + 1) * 2 > m->mask + 1) {
        struct map32 g = {.mask = m->mask ? m->mask * 2 + 1 : 63};
        g.keys = xmalloc((g.mask + 1) * sizeof(*g.keys));
        g.vals = xmalloc((g.mask + 1) * sizeof(*g.vals));
        memset(g.vals, 0xff, (g.mask + 1) * sizeof(*g.vals));
        for (size_t i = 0; m->mask && i <= m->mask; i++)
            if (m->vals[i] != UINT32_MAX)
                map32_put(&g, m->keys[i], m->vals[i]);
        free(m->keys);
        free(m->vals);
        *m = g;
    }
    size_t b = map32_bucket(m, key);
    m->count += m->vals[b] == UINT32_MAX;
    m->keys[b] = key;
    m->vals[b] = val;
}

static void map32_free(struct map32 *m)
{
    free(m->keys);
    free(m->vals);
}

/* Per sample, what the CPU-time and value passes need. */
struct event_info {
    uint32_t event;  /* index into reader.events */
    uint32_t thread; /* index into profile.threads */
    uint64_t period;
    bool has_period;
    bool timed; /* the event had its own time */
};

struct comm_pid {
    char *comm;
    uint32_t pid;
};

/* The event being read, its strings copied out of the lines they came in
 * (a line lives until the next is read): offsets of NUL-terminated strings
 * in reader.text. */
struct event_head {
    struct event_ids id;
    size_t comm, comm_n, event, event_n;
    size_t lineno;
};

struct kept_frame {
    uint64_t ip;
    size_t sym, dso, file; /* "" when none */
    uint32_t line;
    bool inlined;
};

struct reader {
    const char *name;
    struct profile *p;
    struct name_table *names;
    struct stack_table *stacks;
    size_t samples_cap, threads_cap, processes_cap, info_cap;
    struct event_info *info;
    uint64_t weight;        /* the samples all the events stand for */
    size_t *last_of_thread; /* per thread: its last sample + 1, 0 none */
    char **events;
    size_t nevents;
    struct map32 thread_of;  /* tid -> thread index */
    struct map32 process_of; /* pid -> process index */
    struct comm_pid *comms;  /* without pids: comm -> pid */
    size_t ncomms;
    bool any_chain;
    size_t cut_events, first_cut_line; /* chains deeper than PERF_SCRIPT_MAX_DEPTH */
    /* the event being read */
    bool open;
    struct event_head h;
    bool chain; /* call-chain lines seen */
    bool cut;   /* frames past PERF_SCRIPT_MAX_DEPTH left out */
    struct kept_frame *frames;
    size_t nframes, frames_cap;
    char *text;
    size_t text_len, text_cap;
    uint64_t last_time;
    /* scratch */
    uint64_t *pcs;
};

static bool span_is(struct span t, const char *s)
{
    return strlen(s) == t.n && (t.n == 0 || memcmp(s, t.s, t.n) == 0);
}

static char *span_dup(struct span t)
{
    char *s = xmalloc(t.n + 1);
    if (t.n) /* an empty span may have no pointer */
        memcpy(s, t.s, t.n);
    s[t.n] = '\0';
    return s;
}

/* T copied into the event's text; its offset there. */
static size_t keep(struct reader *r, struct span t)
{
    r->text = xgrow(r->text, &r->text_cap, r->text_len + t.n + 1, 1);
    if (t.n) /* an empty span may have no pointer */
        memcpy(r->text + r->text_len, t.s, t.n);
    r->text[r->text_len + t.n] = '\0';
    size_t at = r->text_len;
    r->text_len += t.n + 1;
    return at;
}

static struct span kept(const struct reader *r, size_t at, size_t n)
{
    return (struct span){r->text + at, n};
}

static uint32_t event_index(struct reader *r, struct span ev)
{
    for (size_t i = 0; i < r->nevents; i++)
        if (span_is(ev, r->events[i]))
            return (uint32_t)i;
    r->events = xrealloc(r->events, (r->nevents + 1) * sizeof(*r->events));
    r->events[r->nevents] = span_dup(ev);
    return (uint32_t)r->nevents++;
}

static uint32_t pid_of(struct reader *r, const struct event_head *h, struct span comm)
{
    if (h->id.has_pid)
        return h->id.pid;
    uint32_t t;
    if (map32_get(&r->thread_of, h->id.tid, &t))
        return r->p->threads[t].pid;
    for (size_t i = 0; i < r->ncomms; i++)
        if (span_is(comm, r->comms[i].comm))
            return r->comms[i].pid;
    r->comms = xrealloc(r->comms, (r->ncomms + 1) * sizeof(*r->comms));
    r->comms[r->ncomms++] = (struct comm_pid){.comm = span_dup(comm), .pid = h->id.tid};
    return h->id.tid;
}

static void set_name(char **dst, struct span comm)
{
    if (span_is(comm, *dst))
        return;
    free(*dst);
    *dst = span_dup(comm);
}

/* The thread of H (by tid), and the process PID, made when new.  A tid
 * that perf shows again under another pid keeps its thread entry. */
static uint32_t thread_index(struct reader *r, const struct event_head *h, struct span comm,
                             uint32_t pid, uint64_t time_ns)
{
    struct profile *p = r->p;
    uint32_t proc;
    if (!map32_get(&r->process_of, pid, &proc)) {
        p->processes =
            xgrow(p->processes, &r->processes_cap, p->nprocesses + 1, sizeof(*p->processes));
        p->processes[p->nprocesses] =
            (struct prof_process){.pid = pid, .start_ns = time_ns, .exe = span_dup(comm)};
        map32_put(&r->process_of, pid, (uint32_t)p->nprocesses++);
    }
    uint32_t t;
    if (map32_get(&r->thread_of, h->id.tid, &t)) {
        set_name(&p->threads[t].name, comm);
        return t;
    }
    p->threads = xgrow(p->threads, &r->threads_cap, p->nthreads + 1, sizeof(*p->threads));
    r->last_of_thread = xrealloc(r->last_of_thread, r->threads_cap * sizeof(*r->last_of_thread));
    r->last_of_thread[p->nthreads] = 0;
    p->threads[p->nthreads] = (struct prof_thread){
        .pid = pid, .tid = h->id.tid, .start_ns = time_ns, .name = span_dup(comm)};
    map32_put(&r->thread_of, h->id.tid, (uint32_t)p->nthreads);
    return (uint32_t)p->nthreads++;
}

/* The synthetic PCs of the event's frames into r->pcs; returns how many.
 * Inlined frames join the location of the frame after them. */
static uint32_t event_pcs(struct reader *r, uint32_t pid)
{
    uint32_t depth = 0;
    size_t first = 0;
    for (size_t i = 0; i < r->nframes; i++) {
        const struct kept_frame *real = &r->frames[i];
        if (real->inlined && i + 1 < r->nframes && i + 1 - first < NAME_MAX_INLINE)
            continue;
        /* Frames FIRST..I are one location, I the function holding the
         * others (an inlined frame ending the chain stands alone). */
        const char *dso = r->text + real->dso;
        if (!dso[0] || strcmp(dso, "[unknown]") == 0)
            dso = "[unknown]";
        const char *base = strrchr(dso, '/');
        struct name_frame nf[NAME_MAX_INLINE];
        uint32_t n = (uint32_t)(i + 1 - first);
        for (uint32_t k = 0; k < n; k++) {
            const struct kept_frame *f = &r->frames[first + k];
            const char *sym = r->text + f->sym;
            nf[k] = (struct name_frame){
                .function = sym[0] ? sym : "[unknown]",
                .binary = base ? base + 1 : dso,
                .path = base ? dso : "",
                .file = r->text + f->file,
                .line = f->line,
                .inlined = k + 1 < n,
            };
        }
        r->pcs[depth++] = name_table_pc(r->names, pid, real->ip, nf, n);
        first = i + 1;
    }
    if (depth == 0) {
        struct name_frame unknown = {.function = "[unknown]", .binary = "[unknown]"};
        r->pcs[depth++] = name_table_pc(r->names, pid, 0, &unknown, 1);
    }
    return depth;
}

/* Another event exactly like the thread's last sample (the same time, so
 * no wall time passes between them: only a file whose lines repeat has
 * such events) stands in that sample as one more of its weight, so memory
 * follows the distinct events, not the file's size. */
static bool same_as_last(const struct reader *r, uint32_t thread,
                         const struct prof_thread_sample *ts, uint64_t t,
                         const struct event_info *e)
{
    size_t last = r->last_of_thread[thread];
    if (!last || !e->timed)
        return false;
    const struct prof_sample *s = &r->p->samples[last - 1];
    const struct prof_thread_sample *o = &s->threads[0];
    const struct event_info *oe = &r->info[last - 1];
    return oe->timed && s->time_ns == t && o->pid == ts->pid && o->stack == ts->stack &&
           o->flags == ts->flags && oe->event == e->event && oe->period == e->period &&
           oe->has_period == e->has_period;
}

static void add_weight(struct profile *p, struct prof_sample *s)
{
    profile_sample_extend(p, s, true, false);
    prof_weights(s)[0]++;
}

static void finish_event(struct reader *r)
{
    if (!r->open)
        return;
    r->open = false;
    struct profile *p = r->p;
    const struct event_head *h = &r->h;
    struct span comm = kept(r, h->comm, h->comm_n);
    uint64_t t = h->id.has_time ? h->id.time_ns : r->last_time + DEFAULT_SAMPLE_NS;
    r->last_time = t;
    uint32_t pid = pid_of(r, h, comm);
    uint32_t thread = thread_index(r, h, comm, pid, t);
    uint32_t depth = event_pcs(r, pid);
    uint32_t stack = stack_table_id(r->stacks, p, r->pcs, depth);
    if (r->cut && r->cut_events++ == 0)
        r->first_cut_line = h->lineno;
    struct prof_thread_sample ts = {
        .pid = pid,
        .tid = h->id.tid,
        .pc = r->pcs[0],
        .stack = stack,
        .syscall = -1,
        .flags = r->cut ? PROF_THREAD_STACK_TRUNCATED : 0,
    };
    struct event_info e = {
        .event = event_index(r, kept(r, h->event, h->event_n)),
        .thread = thread,
        .period = h->id.period,
        .has_period = h->id.has_period,
        .timed = h->id.has_time,
    };
    r->nframes = 0;
    r->text_len = 0;
    r->weight++;
    if (same_as_last(r, thread, &ts, t, &e)) {
        add_weight(p, &p->samples[r->last_of_thread[thread] - 1]);
        return;
    }
    p->samples = xgrow(p->samples, &r->samples_cap, p->nsamples + 1, sizeof(*p->samples));
    p->samples[p->nsamples] = (struct prof_sample){.time_ns = t};
    profile_sample_set_one(p, &p->samples[p->nsamples], &ts, 1);
    r->info = xgrow(r->info, &r->info_cap, p->nsamples + 1, sizeof(*r->info));
    r->info[p->nsamples] = e;
    r->last_of_thread[thread] = ++p->nsamples;
}

static void start_event(struct reader *r, const struct header *h, size_t lineno)
{
    finish_event(r);
    r->open = true;
    r->chain = false;
    r->cut = false;
    r->nframes = 0;
    r->text_len = 0;
    r->h = (struct event_head){
        .id = h->id,
        .comm = keep(r, h->comm),
        .comm_n = h->comm.n,
        .event = keep(r, h->event),
        .event_n = h->event.n,
        .lineno = lineno,
    };
}

/* F, parsed from a line, into the event: its strings copied. */
static void push_frame(struct reader *r, const struct frame *f)
{
    if (r->nframes == PERF_SCRIPT_MAX_DEPTH) {
        r->cut = true; /* the chain is leaf first: the outermost frames go */
        return;
    }
    r->frames = xgrow(r->frames, &r->frames_cap, r->nframes + 1, sizeof(*r->frames));
    r->frames[r->nframes++] = (struct kept_frame){
        .ip = f->ip,
        .sym = keep(r, f->sym),
        .dso = keep(r, f->dso),
        .file = keep(r, f->file),
        .line = f->line,
        .inlined = f->inlined,
    };
}

/* --- CPU time ------------------------------------------------------------ */

static uint64_t sample_weight(const struct prof_sample *s)
{
    return prof_weight(s, 0);
}

struct weighted {
    uint64_t v, w;
};

static int cmp_weighted(const void *a, const void *b)
{
    uint64_t x = ((const struct weighted *)a)->v, y = ((const struct weighted *)b)->v;
    return x < y ? -1 : x > y;
}

/* The middle value of V as if each came W times. */
static uint64_t median(struct weighted *v, size_t n)
{
    qsort(v, n, sizeof(*v), cmp_weighted);
    uint64_t all = 0, seen = 0;
    for (size_t i = 0; i < n; i++)
        all += v[i].w;
    for (size_t i = 0; i < n; i++) {
        seen += v[i].w;
        if (seen > all / 2)
            return v[i].v;
    }
    return v[n - 1].v;
}

static bool clock_event(const char *ev)
{
    /* "cpu-clock", "task-clock:u", "cpu-clock:ppp" */
    size_t n = strcspn(ev, ":");
    return (n == 9 && strncmp(ev, "cpu-clock", 9) == 0) ||
           (n == 10 && strncmp(ev, "task-clock", 10) == 0);
}

static uint64_t times_weight(uint64_t v, uint64_t w)
{
    return w && v > UINT64_MAX / w ? UINT64_MAX : v * w;
}

/* Each sample's CPU time as perf_script.h says, as cumulative cpu_ns. */
static void fill_cpu(struct reader *r)
{
    struct profile *p = r->p;
    if (p->nsamples == 0)
        return;
    uint32_t cpu_event = 0;
    bool is_clock = false;
    for (size_t i = 0; i < r->nevents && !is_clock; i++)
        if (clock_event(r->events[i])) {
            cpu_event = (uint32_t)i;
            is_clock = true;
        }
    size_t n = 0, nperiods = 0;
    bool all_periods = true, one_period = true;
    uint64_t period0 = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct event_info *e = &r->info[i];
        if (e->event != cpu_event)
            continue;
        n++;
        if (!e->has_period) {
            all_periods = false;
            continue;
        }
        if (nperiods++ == 0)
            period0 = e->period;
        one_period = one_period && e->period == period0;
    }
    double ns_per_unit = 1, default_units = 1;
    if (!is_clock || !all_periods) {
        /* A time for the period: a running thread's samples are one
         * sampling interval apart; its sleeps are rarer than that. */
        struct weighted *gaps = xmalloc(n * sizeof(*gaps)),
                        *periods = xmalloc(n * sizeof(*periods));
        uint64_t *last = xcalloc(p->nthreads ? p->nthreads : 1, sizeof(*last));
        size_t ngaps = 0, np = 0;
        for (size_t i = 0; i < p->nsamples; i++) {
            const struct event_info *e = &r->info[i];
            if (e->event != cpu_event)
                continue;
            uint64_t t = p->samples[i].time_ns;
            if (last[e->thread] && t > last[e->thread])
                gaps[ngaps++] = (struct weighted){t - last[e->thread], 1};
            last[e->thread] = t;
            if (e->has_period && e->period > 0)
                periods[np++] = (struct weighted){e->period, sample_weight(&p->samples[i])};
        }
        double unit = np ? (double)median(periods, np) : 1;
        double gap = ngaps ? (double)median(gaps, ngaps) : DEFAULT_SAMPLE_NS;
        ns_per_unit = gap / unit;
        default_units = unit;
        free(gaps);
        free(periods);
        free(last);
    }
    uint64_t *cpu = xcalloc(p->nthreads ? p->nthreads : 1, sizeof(*cpu));
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct event_info *e = &r->info[i];
        if (e->event == cpu_event) {
            double units = e->has_period ? (double)e->period : default_units;
            double ns = units * ns_per_unit * (double)sample_weight(&p->samples[i]);
            /* A hostile period must not wrap the counter. */
            if (ns > 1e15)
                ns = 1e15;
            cpu[e->thread] += (uint64_t)(ns + 0.5);
        }
        p->samples[i].threads[0].cpu_ns = cpu[e->thread];
    }
    free(cpu);
    if (is_clock && all_periods && one_period && period0 > 0)
        p->frequency = 1e9 / (double)period0;
}

/* Events as value types (profile.h), each sample's period (times the
 * events it stands for) in its event's column: `perf record -e
 * instructions,cycles` gives metrics instructions and cycles, and so ipc.
 * A file of one clock event alone has none: its periods are the CPU time
 * already.  A value is named after its event without perf's modifiers
 * (cycles:u is cycles) unless two events would share the name. */
static void fill_values(struct reader *r)
{
    struct profile *p = r->p;
    bool periods = false;
    for (size_t i = 0; i < p->nsamples && !periods; i++)
        periods = r->info[i].has_period;
    if (!periods || (r->nevents == 1 && clock_event(r->events[0])) ||
        r->nevents > PROF_VALUE_TYPES_MAX)
        return;
    for (size_t e = 0; e < r->nevents; e++) {
        const char *ev = r->events[e];
        size_t n = strcspn(ev, ":");
        bool shared = false;
        for (size_t k = 0; k < r->nevents; k++)
            shared |=
                k != e && strcspn(r->events[k], ":") == n && strncmp(r->events[k], ev, n) == 0;
        char *name = shared || n == 0 ? xstrdup(ev) : xasprintf("%.*s", (int)n, ev);
        profile_add_value_type(p, name, clock_event(ev) ? "nanoseconds" : "count", PROF_VALUE_SUM);
        free(name);
    }
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct event_info *e = &r->info[i];
        if (!e->has_period || e->period == 0)
            continue;
        profile_sample_extend(p, &p->samples[i], false, true);
        prof_all_thread_values(&p->samples[i])[e->event] =
            times_weight(e->period, sample_weight(&p->samples[i]));
    }
}

static void add_meta(struct profile *p, const char *key, const char *value)
{
    p->meta = xrealloc(p->meta, (p->nmeta + 1) * sizeof(*p->meta));
    p->meta[p->nmeta++] = (struct prof_meta){.key = xstrdup(key), .value = xstrdup(value)};
}

static void finish_profile(struct reader *r)
{
    struct profile *p = r->p;
    if (r->cut_events)
        pt_warn("%s:%zu: %zu call chain%s deeper than %u frames kept only %s innermost %u", r->name,
                r->first_cut_line, r->cut_events, r->cut_events == 1 ? "" : "s",
                PERF_SCRIPT_MAX_DEPTH, r->cut_events == 1 ? "its" : "their", PERF_SCRIPT_MAX_DEPTH);
    fill_cpu(r);
    fill_values(r);
    name_table_locations(r->names);
    /* A process is named by its main thread when perf saw it. */
    for (size_t i = 0; i < p->nthreads; i++) {
        const struct prof_thread *t = &p->threads[i];
        uint32_t proc;
        if (t->tid == t->pid && map32_get(&r->process_of, t->pid, &proc))
            set_name(&p->processes[proc].exe, (struct span){t->name, strlen(t->name)});
    }
    uint64_t span = 0;
    if (p->nsamples > 1 && p->samples[p->nsamples - 1].time_ns > p->samples[0].time_ns)
        span = p->samples[p->nsamples - 1].time_ns - p->samples[0].time_ns;
    p->totals =
        (struct prof_totals){.wall_ns = span, .samples = r->weight, .ideal_samples = r->weight};
    p->has_totals = true;
    add_meta(p, "stacks", r->any_chain ? "perf call chains" : "none (perf script without -g)");
    add_meta(p, "start_time", "0");
    if (r->nevents)
        add_meta(p, "perf.event", r->events[0]);
    p->format = xstrdup("perf-script");
}

static void reader_free(struct reader *r)
{
    name_table_free(r->names);
    stack_table_free(r->stacks);
    free(r->info);
    free(r->last_of_thread);
    for (size_t i = 0; i < r->nevents; i++)
        free(r->events[i]);
    free(r->events);
    map32_free(&r->thread_of);
    map32_free(&r->process_of);
    for (size_t i = 0; i < r->ncomms; i++)
        free(r->comms[i].comm);
    free(r->comms);
    free(r->frames);
    free(r->pcs);
    free(r->text);
}

/* One line of the text, LINENO, into the reader; -1 after a message. */
static int read_line(struct reader *r, const char *s, size_t n, size_t lineno, bool *after_frame)
{
    struct header h;
    struct frame f;
    char why[200];
    enum line_kind k = classify(s, n, *after_frame, &h, &f, why, sizeof(why));
    *after_frame = false;
    switch (k) {
    case L_BAD:
        pt_err("%s:%zu: %s", r->name, lineno, why);
        return -1;
    case L_BLANK:
        finish_event(r);
        break;
    case L_COMMENT:
    case L_SIDEBAND:
        break;
    case L_HEADER: {
        start_event(r, &h, lineno);
        struct frame hf;
        if (h.rest.n && parse_frame(h.rest, &hf)) {
            push_frame(r, &hf);
            *after_frame = true;
        }
        break;
    }
    case L_FRAME:
        if (!r->open) {
            pt_err("%s:%zu: a call-chain line outside an event (no header before it)", r->name,
                   lineno);
            return -1;
        }
        if (!r->chain) {
            r->nframes = 0; /* the chain replaces the header's frame */
            r->chain = true;
            r->any_chain = true;
        }
        push_frame(r, &f);
        *after_frame = true;
        break;
    case L_SRCLINE: {
        struct span file;
        uint32_t line;
        struct span t = trim((struct span){s, n});
        /* A frame left out past the depth limit keeps no source line. */
        if (r->nframes && !r->cut && parse_srcline(t, &file, &line)) {
            r->frames[r->nframes - 1].file = keep(r, file);
            r->frames[r->nframes - 1].line = line;
        }
        *after_frame = true;
        break;
    }
    }
    return 0;
}

int perf_script_load_stream(struct instream *in, struct profile *out)
{
    profile_init(out);
    struct reader r = {
        .name = instream_name(in),
        .p = out,
        .names = name_table_new(out),
        .stacks = stack_table_new(),
        .pcs = xmalloc(PERF_SCRIPT_MAX_DEPTH * sizeof(uint64_t)),
    };
    out->stacks = xcalloc(1, sizeof(*out->stacks)); /* id 0: no stack */
    out->nstacks = 1;
    struct line_reader lines;
    line_reader_init(&lines, in);
    const char *s;
    size_t n;
    bool after_frame = false;
    int rc = 0, got = 0;
    while (rc == 0 && (got = line_reader_next(&lines, &s, &n)) == 1)
        rc = read_line(&r, s, n, (size_t)lines.lineno, &after_frame);
    if (rc == 0 && got < 0)
        rc = -1;
    if (rc == 0) {
        /* Damage ended the text inside an event: its chain may have lost
         * outer frames. */
        r.cut = r.cut || (r.open && instream_end(in) == INSTREAM_DAMAGED);
        finish_event(&r);
        finish_profile(&r);
    } else {
        profile_free(out);
    }
    reader_free(&r);
    return rc;
}

int perf_script_load_buffer(const char *name, const void *data, size_t len, struct profile *out)
{
    struct instream *in = instream_open_memory_plain(name, data, len);
    int rc = perf_script_load_stream(in, out);
    instream_close(in);
    return rc;
}
