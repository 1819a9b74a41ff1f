/*
 * gmon_write.c - writer half of gmon.h: what a profile sampled in its
 * executable, as the histogram and call-graph arcs gprof reads.
 *
 * Everything is resolved to the executable's link-time addresses first
 * (the profile's maps give file offsets, the ELF's PT_LOAD headers turn
 * those into addresses), collected sparsely (one entry per thread sample,
 * sorted and merged), and only then written, bins streamed so that a large
 * text costs no dense array.
 */
#include "interop/gmon.h"
#include "model/maps.h"
#include "symbol/elf_symtab.h"
#include "util/log.h"
#include "util/outfile.h"
#include "util/xalloc.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define UNIT 2u
#define BIN_MAX 0xffffu
#define DEFAULT_RATE 100u
/* Bins written per fwrite. */
#define BIN_CHUNK 32768u
/* A bin's count beyond 65535 continues in a further record of the whole
 * histogram: at most this many (a bin of 2 bytes of code holding 16.7
 * million samples, 46 hours at 100 Hz).  More is a profile whose CPU times
 * no program reached, and would write as many copies of the histogram. */
#define HIST_RECORDS_MAX 256u
/* An arc's count beyond 32 bits goes out in parts: at most this many. */
#define ARC_PARTS_MAX 256u

/* A map of the executable, in the order the lookup wants. */
struct exe_map {
    uint32_t pid;
    uint64_t start, end, offset;
    uint64_t time_ns, unmap_ns;
};

struct writer {
    const struct profile *p;
    const char *name;
    FILE *out;
    struct gmon_layout lay;
    struct elf_symtab tab;
    uint64_t lo, hi; /* the histogram's range, 2-byte aligned */
    struct exe_map *maps;
    size_t nmaps;
    uint32_t rate;
    double period_ns;
};

/* Time spent at one bin, or an arc: sorted, then merged. */
struct bin_ns {
    uint64_t bin;
    uint64_t ns;
};

struct edge {
    uint64_t from, self;
    uint64_t count;
};

/* A thread sample with a stack, grouped by (stack, pid). */
struct stack_use {
    uint32_t stack;
    uint32_t pid;
    uint64_t time_ns;
};

/* --- finding the executable ---------------------------------------------- */

static bool is_elf(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return false;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    unsigned char magic[SELFMAG];
    bool ok = read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
              memcmp(magic, ELFMAG, SELFMAG) == 0;
    close(fd);
    return ok;
}

/* The first process's executable as its maps name it. */
static const char *exe_map_path(const struct profile *p)
{
    uint32_t pid = p->processes[0].pid;
    const char *exe = p->processes[0].exe;
    if (exe && *exe)
        for (size_t i = 0; i < p->nmaps; i++)
            if (p->maps[i].pid == pid && strcmp(p->maps[i].path, exe) == 0)
                return exe;
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        if (m->pid == pid && (m->perms & MAP_PERM_EXEC) && m->path[0] && m->path[0] != '[')
            return m->path;
    }
    return NULL;
}

static char *find_file(const char *exe, const struct gmon_write_options *opts)
{
    if (opts && opts->binary)
        return xstrdup(opts->binary);
    if (exe[0] == '/' && is_elf(exe))
        return xstrdup(exe);
    const char *slash = strrchr(exe, '/');
    const char *base = slash ? slash + 1 : exe;
    for (size_t i = 0; opts && i < opts->nsearch_dirs; i++) {
        char *cand = xasprintf("%s/%s", opts->search_dirs[i], base);
        if (is_elf(cand))
            return cand;
        free(cand);
    }
    return NULL;
}

static int exe_map_cmp(const void *pa, const void *pb)
{
    const struct exe_map *a = pa, *b = pb;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->time_ns != b->time_ns)
        return a->time_ns < b->time_ns ? -1 : 1;
    return a->start < b->start ? -1 : a->start > b->start;
}

static void collect_maps(struct writer *w, const char *exe)
{
    const struct profile *p = w->p;
    for (size_t i = 0; i < p->nmaps; i++)
        w->nmaps += strcmp(p->maps[i].path, exe) == 0;
    w->maps = xmalloc((w->nmaps ? w->nmaps : 1) * sizeof(*w->maps));
    size_t n = 0;
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        if (strcmp(m->path, exe) == 0)
            w->maps[n++] =
                (struct exe_map){m->pid, m->start, m->end, m->offset, m->time_ns, m->unmap_ns};
    }
    qsort(w->maps, w->nmaps, sizeof(*w->maps), exe_map_cmp);
}

/* PC of PID at TIME as an address of the executable; ANY_TIME for what
 * has no time (arcs).  The latest map holding it wins. */
static bool to_vaddr(const struct writer *w, uint32_t pid, uint64_t time, bool any_time,
                     uint64_t pc, uint64_t *vaddr)
{
    size_t lo = 0, hi = w->nmaps;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->maps[mid].pid < pid)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct exe_map *best = NULL;
    for (size_t i = lo; i < w->nmaps && w->maps[i].pid == pid; i++) {
        const struct exe_map *m = &w->maps[i];
        if (pc < m->start || pc >= m->end)
            continue;
        if (!any_time && (m->time_ns > time || (m->unmap_ns && time >= m->unmap_ns)))
            continue;
        best = m;
    }
    return best && elf_symtab_vaddr(&w->tab, pc - best->start + best->offset, vaddr) == 0;
}

static int open_executable(struct writer *w, const struct gmon_write_options *opts)
{
    const struct profile *p = w->p;
    if (p->nprocesses == 0) {
        pt_err("%s: the profile has no process to write", w->name);
        return -1;
    }
    const char *exe = exe_map_path(p);
    if (!exe) {
        pt_err("%s: the profile's first process has no executable map", w->name);
        return -1;
    }
    char *file = find_file(exe, opts);
    if (!file) {
        pt_err("%s: cannot find the executable %s (give its file, or a directory to search)",
               w->name, exe);
        return -1;
    }
    int rc = gmon_binary_layout(file, &w->lay) == 0 && elf_symtab_load(file, &w->tab) == 0 ? 0 : -1;
    if (rc == 0) {
        w->lo = UINT64_MAX;
        w->hi = 0;
        for (size_t i = 0; i < w->tab.nsegments; i++) {
            const struct elf_segment *s = &w->tab.segments[i];
            if (!(s->flags & PF_X) || s->filesz == 0)
                continue;
            if (s->vaddr < w->lo)
                w->lo = s->vaddr;
            if (s->vaddr + s->filesz > w->hi)
                w->hi = s->vaddr + s->filesz;
        }
        if (w->lo >= w->hi) {
            pt_err("%s: no executable segment", file);
            rc = -1;
        } else {
            w->lo &= ~(uint64_t)(UNIT - 1);
            w->hi = (w->hi + UNIT - 1) & ~(uint64_t)(UNIT - 1);
            if ((w->hi - w->lo) / UNIT > UINT32_MAX) {
                pt_err("%s: its code is too large for a gmon.out histogram", file);
                rc = -1;
            } else if (w->lay.addr_size == 4 && w->hi > UINT32_MAX) {
                pt_err("%s: 32-bit file with addresses above 4 GB", file);
                rc = -1;
            }
        }
    }
    if (rc == 0)
        collect_maps(w, exe);
    free(file);
    return rc;
}

/* --- what was sampled ------------------------------------------------------ */

static uint32_t choose_rate(const struct profile *p, const struct gmon_write_options *opts)
{
    if (opts && opts->rate)
        return opts->rate;
    if (p->frequency >= 1 && p->frequency < UINT32_MAX)
        return (uint32_t)llround(p->frequency);
    if (p->nsamples >= 2) {
        uint64_t first = p->samples[0].time_ns, last = p->samples[p->nsamples - 1].time_ns;
        if (last > first) {
            double hz = 1e9 * (double)(p->nsamples - 1) / (double)(last - first);
            if (hz >= 1 && hz < UINT32_MAX)
                return (uint32_t)llround(hz);
        }
    }
    return DEFAULT_RATE;
}

struct tid_slot {
    uint32_t tid;
    bool used;
    uint64_t cpu_ns;
};

struct tid_table {
    struct tid_slot *slots;
    size_t cap, count;
};

static struct tid_slot *tid_slot(struct tid_table *t, uint32_t tid)
{
    if (2 * (t->count + 1) > t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct tid_slot *slots = xcalloc(cap, sizeof(*slots));
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slots[i].used)
                continue;
            size_t j = (t->slots[i].tid * 2654435761u) & (cap - 1);
            while (slots[j].used)
                j = (j + 1) & (cap - 1);
            slots[j] = t->slots[i];
        }
        free(t->slots);
        t->slots = slots;
        t->cap = cap;
    }
    size_t j = (tid * 2654435761u) & (t->cap - 1);
    while (t->slots[j].used && t->slots[j].tid != tid)
        j = (j + 1) & (t->cap - 1);
    if (!t->slots[j].used) {
        t->slots[j] = (struct tid_slot){.tid = tid, .used = true, .cpu_ns = UINT64_MAX};
        t->count++;
    }
    return &t->slots[j];
}

static int bin_cmp(const void *pa, const void *pb)
{
    const struct bin_ns *a = pa, *b = pb;
    return a->bin < b->bin ? -1 : a->bin > b->bin;
}

/* CPU time per bin, sorted by bin and merged. */
static struct bin_ns *sample_bins(struct writer *w, size_t *count, uint64_t *outside)
{
    const struct profile *p = w->p;
    struct tid_table tids = {0};
    struct bin_ns *bins = NULL;
    size_t n = 0, cap = 0;
    *outside = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            const struct prof_thread_sample *th = &s->threads[t];
            struct tid_slot *slot = tid_slot(&tids, th->tid);
            uint64_t delta;
            /* Its first sample: at most a period per sample it stands for. */
            double most = w->period_ns * (double)prof_weight(s, t);
            if (slot->cpu_ns == UINT64_MAX)
                delta = (double)th->cpu_ns < most ? th->cpu_ns : (uint64_t)llround(most);
            else
                delta = th->cpu_ns >= slot->cpu_ns ? th->cpu_ns - slot->cpu_ns : 0;
            slot->cpu_ns = th->cpu_ns;
            if (delta == 0)
                continue;
            uint64_t vaddr;
            if (!to_vaddr(w, th->pid, s->time_ns, false, th->pc, &vaddr) || vaddr < w->lo ||
                vaddr >= w->hi) {
                (*outside)++;
                continue;
            }
            bins = xgrow(bins, &cap, n + 1, sizeof(*bins));
            bins[n++] = (struct bin_ns){(vaddr - w->lo) / UNIT, delta};
        }
    }
    free(tids.slots);
    if (n)
        qsort(bins, n, sizeof(*bins), bin_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && bins[m - 1].bin == bins[i].bin)
            bins[m - 1].ns += bins[i].ns;
        else
            bins[m++] = bins[i];
    }
    *count = m;
    return bins;
}

/* Time to counts, rounding the running total so that the counts add up to
 * the rounded total time.  NS becomes the count. */
static uint64_t to_counts(struct bin_ns *bins, size_t n, double period_ns)
{
    double total = 0;
    uint64_t given = 0, max = 0;
    for (size_t i = 0; i < n; i++) {
        total += (double)bins[i].ns;
        uint64_t upto = (uint64_t)llround(total / period_ns);
        bins[i].ns = upto > given ? upto - given : 0;
        given += bins[i].ns;
        if (bins[i].ns > max)
            max = bins[i].ns;
    }
    return max;
}

static int edge_cmp(const void *pa, const void *pb)
{
    const struct edge *a = pa, *b = pb;
    if (a->from != b->from)
        return a->from < b->from ? -1 : 1;
    return a->self < b->self ? -1 : a->self > b->self;
}

static int use_cmp(const void *pa, const void *pb)
{
    const struct stack_use *a = pa, *b = pb;
    if (a->stack != b->stack)
        return a->stack < b->stack ? -1 : 1;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    return a->time_ns < b->time_ns ? -1 : a->time_ns > b->time_ns;
}

static void add_edge(struct edge **edges, size_t *n, size_t *cap, uint64_t from, uint64_t self,
                     uint64_t count)
{
    *edges = xgrow(*edges, cap, *n + 1, sizeof(**edges));
    (*edges)[(*n)++] = (struct edge){from, self, count};
}

/* The edges of one stack as seen by PID at TIME, each once, COUNT times. */
static void stack_edges(const struct writer *w, const struct prof_stack *st, uint32_t pid,
                        uint64_t time, uint64_t count, struct edge **edges, size_t *n, size_t *cap)
{
    size_t first = *n;
    uint64_t callee = 0;
    bool have_callee = false;
    for (uint32_t k = 0; k < st->depth; k++) {
        uint64_t vaddr;
        bool in_exe = to_vaddr(w, pid, time, false, st->pcs[k], &vaddr);
        if (in_exe && have_callee) {
            bool seen = false;
            for (size_t e = first; e < *n && !seen; e++)
                seen = (*edges)[e].from == vaddr && (*edges)[e].self == callee;
            if (!seen)
                add_edge(edges, n, cap, vaddr, callee, count);
        }
        have_callee = false;
        if (in_exe) {
            /* A return address names the call before it. */
            const struct elf_symbol *sym = elf_symtab_lookup(&w->tab, k ? vaddr - 1 : vaddr);
            callee = sym ? sym->addr : vaddr;
            have_callee = true;
        }
    }
}

static struct edge *sampled_edges(const struct writer *w, size_t *count)
{
    const struct profile *p = w->p;
    struct stack_use *uses = NULL;
    size_t nuses = 0, ucap = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            uint32_t id = s->threads[t].stack;
            if (id == 0 || id >= p->nstacks || p->stacks[id].depth < 2)
                continue;
            uses = xgrow(uses, &ucap, nuses + 1, sizeof(*uses));
            uses[nuses++] = (struct stack_use){id, s->threads[t].pid, s->time_ns};
        }
    }
    if (nuses)
        qsort(uses, nuses, sizeof(*uses), use_cmp);
    struct edge *edges = NULL;
    size_t n = 0, cap = 0;
    /* A stack's frames resolve alike for the whole life of a process (its
     * executable is mapped once), so each (stack, pid) is resolved once, at
     * its first sample's time. */
    for (size_t i = 0; i < nuses;) {
        size_t j = i;
        while (j < nuses && uses[j].stack == uses[i].stack && uses[j].pid == uses[i].pid)
            j++;
        stack_edges(w, &p->stacks[uses[i].stack], uses[i].pid, uses[i].time_ns, j - i, &edges, &n,
                    &cap);
        i = j;
    }
    free(uses);
    if (n)
        qsort(edges, n, sizeof(*edges), edge_cmp);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && edges[m - 1].from == edges[i].from && edges[m - 1].self == edges[i].self)
            edges[m - 1].count += edges[i].count;
        else
            edges[m++] = edges[i];
    }
    *count = m;
    return edges;
}

/* The profile's own call counts (a gmon.out read back), as addresses of
 * the executable. */
static struct edge *profile_arcs(const struct writer *w, size_t *count)
{
    const struct profile *p = w->p;
    struct edge *edges = xmalloc(p->narcs * sizeof(*edges));
    size_t n = 0;
    uint32_t pid = p->processes[0].pid;
    for (size_t i = 0; i < p->narcs; i++) {
        uint64_t from, self;
        if (to_vaddr(w, pid, 0, true, p->arcs[i].from_pc, &from) &&
            to_vaddr(w, pid, 0, true, p->arcs[i].self_pc, &self))
            edges[n++] = (struct edge){from, self, p->arcs[i].count};
    }
    *count = n;
    return edges;
}

/* --- bytes ------------------------------------------------------------------ */

static void put_uint(unsigned char *b, uint64_t v, unsigned size, bool big_endian)
{
    for (unsigned i = 0; i < size; i++) {
        unsigned shift = big_endian ? 8 * (size - 1 - i) : 8 * i;
        b[i] = (unsigned char)(v >> shift);
    }
}

static void write_header(const struct writer *w)
{
    unsigned char h[GMON_HEADER_SIZE] = {0};
    memcpy(h, GMON_MAGIC_BYTES, 4);
    put_uint(h + 4, 1, 4, w->lay.big_endian);
    fwrite(h, 1, sizeof(h), w->out);
}

/* Record REC of the histogram: what is left of each bin's count after
 * REC records of BIN_MAX. */
static void write_hist(const struct writer *w, const struct bin_ns *bins, size_t n, uint64_t rec,
                       uint16_t *chunk)
{
    const unsigned a = w->lay.addr_size;
    unsigned char h[1 + 2 * 8 + 4 + 4 + 16] = {0};
    uint32_t nbins = (uint32_t)((w->hi - w->lo) / UNIT);
    h[0] = GMON_TAG_HIST;
    put_uint(h + 1, w->lo, a, w->lay.big_endian);
    put_uint(h + 1 + a, w->hi, a, w->lay.big_endian);
    put_uint(h + 1 + 2 * a, nbins, 4, w->lay.big_endian);
    put_uint(h + 1 + 2 * a + 4, w->rate, 4, w->lay.big_endian);
    memcpy(h + 1 + 2 * a + 8, "seconds", 7);
    h[1 + 2 * a + 8 + 15] = 's';
    fwrite(h, 1, 1 + 2 * (size_t)a + 24, w->out);

    size_t next = 0;
    for (uint64_t start = 0; start < nbins; start += BIN_CHUNK) {
        uint64_t len = nbins - start < BIN_CHUNK ? nbins - start : BIN_CHUNK;
        memset(chunk, 0, len * sizeof(*chunk));
        for (; next < n && bins[next].bin < start + len; next++) {
            uint64_t c = bins[next].ns, done = rec * BIN_MAX;
            uint64_t v = c > done ? c - done : 0;
            unsigned char *b = (unsigned char *)&chunk[bins[next].bin - start];
            put_uint(b, v > BIN_MAX ? BIN_MAX : v, 2, w->lay.big_endian);
        }
        fwrite(chunk, sizeof(*chunk), len, w->out);
    }
}

static void write_arcs(const struct writer *w, const struct edge *edges, size_t n)
{
    const unsigned a = w->lay.addr_size;
    unsigned char r[1 + 2 * 8 + 4];
    for (size_t i = 0; i < n; i++) {
        /* A count beyond 32 bits goes out in parts, which gprof adds. */
        for (uint64_t left = edges[i].count; left > 0;) {
            uint32_t part = left > UINT32_MAX ? UINT32_MAX : (uint32_t)left;
            r[0] = GMON_TAG_ARC;
            put_uint(r + 1, edges[i].from, a, w->lay.big_endian);
            put_uint(r + 1 + a, edges[i].self, a, w->lay.big_endian);
            put_uint(r + 1 + 2 * a, part, 4, w->lay.big_endian);
            fwrite(r, 1, 1 + 2 * (size_t)a + 4, w->out);
            left -= part;
        }
    }
}

int gmon_write_stream(const struct profile *p, const char *name, FILE *out,
                      const struct gmon_write_options *opts)
{
    struct writer w = {.p = p, .name = name, .out = out};
    if (open_executable(&w, opts) != 0) {
        elf_symtab_free(&w.tab);
        return -1;
    }
    w.rate = choose_rate(p, opts);
    w.period_ns = 1e9 / w.rate;

    size_t nbins, nedges;
    uint64_t outside;
    struct bin_ns *bins = sample_bins(&w, &nbins, &outside);
    uint64_t max = to_counts(bins, nbins, w.period_ns);
    struct edge *edges = p->narcs ? profile_arcs(&w, &nedges) : sampled_edges(&w, &nedges);
    if (nbins == 0)
        pt_warn("%s: no sample with CPU time falls in %s's code; the histogram is empty", name,
                w.tab.path);
    else if (outside)
        pt_debug("%s: %" PRIu64 " samples outside %s are left out", name, outside, w.tab.path);

    /* The file must stay in proportion to what the profile holds. */
    uint64_t records = max > BIN_MAX ? (max + BIN_MAX - 1) / BIN_MAX : 1;
    uint64_t max_arc = 0;
    for (size_t i = 0; i < nedges; i++)
        if (edges[i].count > max_arc)
            max_arc = edges[i].count;
    int rc = 0;
    if (records > HIST_RECORDS_MAX) {
        pt_err("%s: a histogram bin would count %" PRIu64 " samples (%.3g s of CPU time at %" PRIu32
               " Hz in 2 bytes of code): the profile's CPU times are implausible; not written",
               name, max, (double)max / w.rate, w.rate);
        rc = GMON_WRITE_BAD_INPUT;
    } else if (max_arc / UINT32_MAX >= ARC_PARTS_MAX) {
        pt_err("%s: an arc would count %" PRIu64 " calls: the profile's call counts are "
               "implausible; not written",
               name, max_arc);
        rc = GMON_WRITE_BAD_INPUT;
    }
    if (rc != 0) {
        free(bins);
        free(edges);
        free(w.maps);
        elf_symtab_free(&w.tab);
        return rc;
    }

    write_header(&w);
    uint16_t *chunk = xmalloc(BIN_CHUNK * sizeof(*chunk));
    for (uint64_t r = 0; r < records; r++)
        write_hist(&w, bins, nbins, r, chunk);
    free(chunk);
    write_arcs(&w, edges, nedges);
    free(bins);
    free(edges);
    free(w.maps);
    elf_symtab_free(&w.tab);
    if (fflush(out) != 0 || ferror(out)) {
        pt_err("%s: %s", name, strerror(errno ? errno : EIO));
        return -1;
    }
    return 0;
}

int gmon_write(const struct profile *p, const char *path, const struct gmon_write_options *opts)
{
    struct outfile *o = outfile_open(path);
    if (!o)
        return -1;
    const char *name = strcmp(path, "-") == 0 ? "<stdout>" : path;
    int rc = gmon_write_stream(p, name, outfile_stream(o), opts);
    if (rc != 0) {
        outfile_abort(o);
        return rc;
    }
    return outfile_commit(o);
}

int gmon_write_path(const struct profile *p, const char *path)
{
    return gmon_write(p, path, NULL);
}
