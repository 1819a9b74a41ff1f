/* flat_profile.c - see flat_profile.h */
#include "analyze/flat_profile.h"
#include "symbol/elf_symtab.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NO_ROW SIZE_MAX

/* One binary per distinct label; several maps may share it. */
struct binary {
    const char *label;
    bool tried, loaded;
    struct elf_symtab tab;
    size_t *row_of_sym; /* tab.count entries, NO_ROW until first hit */
    size_t unknown_row;
};

struct map_range {
    uint64_t start, end;
    size_t binary;
};

struct tid_slot {
    uint32_t tid;
    bool used;
    uint64_t cpu_ns;
};

struct state {
    const struct flat_options *opts;
    struct binary *binaries;
    size_t nbinaries;
    struct map_range *ranges;
    size_t nranges;
    struct tid_slot *tids;
    size_t tid_cap, tid_count;
    struct flat_row *rows;
    size_t nrows, rows_cap;
    size_t unmapped_row;
};

/* --- binaries ------------------------------------------------------------ */

static bool is_elf_file(const char *path)
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

/* The file a label names: itself when absolute, else the first DIR/LABEL
 * that is an ELF file (a directory or script of the same name is skipped,
 * so a source tree's "demo/" does not hide the "demo" binary). */
static char *find_binary(const char *label, const struct flat_options *opts)
{
    if (label[0] == '\0' || label[0] == '[')
        return NULL; /* anonymous memory or a kernel pseudo file */
    if (label[0] == '/' && is_elf_file(label))
        return xstrdup(label);
    const char *base = strrchr(label, '/') ? strrchr(label, '/') + 1 : label;
    if (base[0] == '\0')
        return NULL;
    for (size_t i = 0; opts && i < opts->nsearch_dirs; i++) {
        char *path = xasprintf("%s/%s", opts->search_dirs[i], base);
        if (is_elf_file(path))
            return path;
        free(path);
    }
    return NULL;
}

static void load_binary(struct binary *b, const struct flat_options *opts)
{
    char *path = find_binary(b->label, opts);
    if (!path) {
        if (b->label[0] != '[' && b->label[0] != '\0')
            pt_warn("%s: binary not found in the search path (add -s DIR); "
                    "its samples are shown as %s",
                    b->label, FLAT_UNKNOWN);
        return;
    }
    if (elf_symtab_load(path, &b->tab) == 0) {
        b->loaded = true;
        b->row_of_sym = xmalloc(b->tab.count * sizeof(*b->row_of_sym));
        for (size_t i = 0; i < b->tab.count; i++)
            b->row_of_sym[i] = NO_ROW;
        pt_debug("%s: symbols from %s", b->label, path);
    } else {
        pt_warn("%s: its samples are shown as %s", b->label, FLAT_UNKNOWN);
    }
    free(path);
}

/* --- rows ---------------------------------------------------------------- */

static size_t add_row(struct state *s, const char *binary, const char *function)
{
    s->rows = xgrow(s->rows, &s->rows_cap, s->nrows + 1, sizeof(*s->rows));
    s->rows[s->nrows] = (struct flat_row){.binary = xstrdup(binary), .function = xstrdup(function)};
    return s->nrows++;
}

static size_t unknown_row(struct state *s, struct binary *b)
{
    if (b->unknown_row == NO_ROW)
        b->unknown_row = add_row(s, b->label, FLAT_UNKNOWN);
    return b->unknown_row;
}

/* --- maps ---------------------------------------------------------------- */

static int range_cmp(const void *pa, const void *pb)
{
    const struct map_range *a = pa, *b = pb;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return 0;
}

static void index_maps(struct state *s, const struct pperf_map *maps, size_t nmaps)
{
    s->binaries = xcalloc(nmaps, sizeof(*s->binaries));
    s->ranges = xcalloc(nmaps, sizeof(*s->ranges));
    for (size_t i = 0; i < nmaps; i++) {
        const struct pperf_map *m = &maps[i];
        if (m->size == 0)
            continue;
        size_t b = 0;
        while (b < s->nbinaries && strcmp(s->binaries[b].label, m->label) != 0)
            b++;
        if (b == s->nbinaries) {
            s->binaries[b] = (struct binary){.label = m->label, .unknown_row = NO_ROW};
            s->nbinaries++;
        }
        uint64_t end = m->address + m->size < m->address ? UINT64_MAX : m->address + m->size;
        s->ranges[s->nranges++] = (struct map_range){.start = m->address, .end = end, .binary = b};
    }
    qsort(s->ranges, s->nranges, sizeof(*s->ranges), range_cmp);
}

static const struct map_range *find_range(const struct state *s, uint64_t pc)
{
    if (s->nranges == 0 || pc < s->ranges[0].start)
        return NULL;
    size_t lo = 0, hi = s->nranges;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->ranges[mid].start <= pc)
            lo = mid;
        else
            hi = mid;
    }
    /* Ranges should not overlap, but a library unloaded and another loaded
     * in its place may leave both: the latest-starting one that holds PC. */
    for (size_t i = lo + 1; i-- > 0;)
        if (pc < s->ranges[i].end)
            return &s->ranges[i];
    return NULL;
}

/* --- resolution ---------------------------------------------------------- */

static size_t resolve(struct state *s, uint64_t pc)
{
    const struct map_range *r = find_range(s, pc);
    if (!r) {
        if (s->unmapped_row == NO_ROW)
            s->unmapped_row = add_row(s, FLAT_UNMAPPED, FLAT_UNMAPPED);
        return s->unmapped_row;
    }
    struct binary *b = &s->binaries[r->binary];
    if (!b->tried) {
        b->tried = true; /* load (and warn) once per binary */
        load_binary(b, s->opts);
    }
    if (!b->loaded)
        return unknown_row(s, b);
    const struct elf_symbol *sym = elf_symtab_lookup(&b->tab, pc - r->start + b->tab.load_vaddr);
    if (!sym)
        return unknown_row(s, b);
    size_t idx = (size_t)(sym - b->tab.syms);
    if (b->row_of_sym[idx] == NO_ROW)
        b->row_of_sym[idx] = add_row(s, b->label, sym->name);
    return b->row_of_sym[idx];
}

/* --- per-thread CPU time ------------------------------------------------- */

static struct tid_slot *tid_slot(struct state *s, uint32_t tid)
{
    if (2 * (s->tid_count + 1) > s->tid_cap) {
        size_t cap = s->tid_cap ? 2 * s->tid_cap : 64;
        struct tid_slot *slots = xcalloc(cap, sizeof(*slots));
        for (size_t i = 0; i < s->tid_cap; i++) {
            if (!s->tids[i].used)
                continue;
            size_t j = (s->tids[i].tid * 2654435761u) & (cap - 1);
            while (slots[j].used)
                j = (j + 1) & (cap - 1);
            slots[j] = s->tids[i];
        }
        free(s->tids);
        s->tids = slots;
        s->tid_cap = cap;
    }
    size_t j = (tid * 2654435761u) & (s->tid_cap - 1);
    while (s->tids[j].used && s->tids[j].tid != tid)
        j = (j + 1) & (s->tid_cap - 1);
    return &s->tids[j];
}

/* CPU time since the thread's previous appearance; 0 on its first. */
static uint64_t cpu_delta(struct state *s, uint32_t tid, uint64_t cpu_ns)
{
    struct tid_slot *slot = tid_slot(s, tid);
    uint64_t delta = 0;
    if (slot->used && cpu_ns >= slot->cpu_ns)
        delta = cpu_ns - slot->cpu_ns;
    if (!slot->used) {
        slot->used = true;
        slot->tid = tid;
        s->tid_count++;
    }
    slot->cpu_ns = cpu_ns;
    return delta;
}

/* --- entry points -------------------------------------------------------- */

int flat_profile_compute(const struct pperf_sample *samples, size_t nsamples,
                         const struct pperf_map *maps, size_t nmaps,
                         const struct flat_options *opts, struct flat_profile *out)
{
    memset(out, 0, sizeof(*out));
    struct state s = {.opts = opts, .unmapped_row = NO_ROW};
    index_maps(&s, maps, nmaps);

    for (size_t i = 0; i < nsamples; i++) {
        const struct pperf_sample *smp = &samples[i];
        for (uint32_t t = 0; t < smp->nthreads; t++) {
            const struct pperf_thread *th = &smp->threads[t];
            /* resolve() may grow the rows: index them only afterwards. */
            size_t r = resolve(&s, th->pc);
            struct flat_row *row = &s.rows[r];
            uint64_t delta = cpu_delta(&s, th->tid, th->cpu_ns);
            row->samples++;
            row->cpu_ns += delta;
            out->thread_samples++;
            out->cpu_ns += delta;
        }
    }
    out->samples = nsamples;
    out->rows = s.rows;
    out->count = s.nrows;

    for (size_t i = 0; i < s.nbinaries; i++) {
        elf_symtab_free(&s.binaries[i].tab);
        free(s.binaries[i].row_of_sym);
    }
    free(s.binaries);
    free(s.ranges);
    free(s.tids);
    return 0;
}

int flat_profile_from_pperf(const struct pperf_profile *p, const struct flat_options *opts,
                            struct flat_profile *out)
{
    if (flat_profile_compute(p->samples, (size_t)p->nsamples, p->maps, p->nmaps, opts, out) != 0)
        return -1;
    out->wall_us = p->wall_us;
    out->latency_us = p->latency_us;
    if (out->wall_us == 0 && p->nsamples >= 2) {
        uint64_t first = p->samples[0].wall_us, last = p->samples[p->nsamples - 1].wall_us;
        out->wall_us = last > first ? last - first : 0;
    }
    return 0;
}

void flat_profile_free(struct flat_profile *fp)
{
    if (!fp)
        return;
    for (size_t i = 0; i < fp->count; i++) {
        free(fp->rows[i].binary);
        free(fp->rows[i].function);
    }
    free(fp->rows);
    memset(fp, 0, sizeof(*fp));
}
