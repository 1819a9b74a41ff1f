/* flat_profile.c - see flat_profile.h */
#include "analyze/flat_profile.h"
#include "symbol/build_id.h"
#include "symbol/elf_symtab.h"
#include "symbol/syscall_names.h"
#include "util/log.h"
#include "util/xalloc.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define NO_ROW SIZE_MAX
#define NO_BINARY SIZE_MAX
/* Syscall numbers whose row is remembered by number, not looked up. */
#define SYSCALL_CACHE 512

/* One per distinct file (path + build-id) or captured image. */
struct binary {
    char *path; /* as recorded, without " (deleted)" */
    char *name; /* what rows call it */
    const struct prof_image *image;
    uint8_t build_id_len;
    uint8_t build_id[PROF_BUILD_ID_MAX];
    bool tried, loaded;
    struct elf_symtab tab;
    size_t *row_of_sym; /* tab.count entries, NO_ROW until first hit */
    size_t unknown_row;
};

/* A map in the lookup index: sorted by (pid, start).  max_end is the
 * largest end of the entries of the same pid up to this one, so a backward
 * walk knows when no earlier map can hold a PC. */
struct map_ref {
    uint32_t pid;
    uint64_t start, end, max_end;
    size_t map;
};

struct tid_slot {
    uint32_t tid;
    bool used;
    uint64_t cpu_ns;
};

struct row_slot {
    size_t row; /* NO_ROW: empty */
    uint64_t hash;
};

struct state {
    const struct profile *p;
    const struct flat_options *opts;
    struct binary *binaries;
    size_t nbinaries, binaries_cap;
    size_t *binary_of_map; /* per map, NO_BINARY until first used */
    struct map_ref *refs;
    size_t nrefs;
    struct tid_slot *tids;
    size_t tid_cap, tid_count;
    struct flat_row *rows;
    size_t nrows, rows_cap;
    struct row_slot *row_index;
    size_t row_index_cap;
    size_t syscall_row[SYSCALL_CACHE];
};

/* --- rows: unique by (binary, function) ---------------------------------- */

static uint64_t key_hash(const char *binary, const char *function)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *c = binary; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull; /* no byte of a string: a separator */
    for (const char *c = function; *c; c++)
        h = (h ^ (unsigned char)*c) * 1099511628211ull;
    return h;
}

static void row_index_insert(struct row_slot *slots, size_t cap, size_t row, uint64_t hash)
{
    size_t j = (size_t)hash & (cap - 1);
    while (slots[j].row != NO_ROW)
        j = (j + 1) & (cap - 1);
    slots[j] = (struct row_slot){row, hash};
}

static size_t row_for(struct state *s, const char *binary, const char *function)
{
    uint64_t hash = key_hash(binary, function);
    if (2 * (s->nrows + 1) > s->row_index_cap) {
        size_t cap = s->row_index_cap ? 2 * s->row_index_cap : 64;
        struct row_slot *slots = xmalloc(cap * sizeof(*slots));
        for (size_t i = 0; i < cap; i++)
            slots[i].row = NO_ROW;
        for (size_t i = 0; i < s->row_index_cap; i++)
            if (s->row_index[i].row != NO_ROW)
                row_index_insert(slots, cap, s->row_index[i].row, s->row_index[i].hash);
        free(s->row_index);
        s->row_index = slots;
        s->row_index_cap = cap;
    }
    size_t j = (size_t)hash & (s->row_index_cap - 1);
    for (; s->row_index[j].row != NO_ROW; j = (j + 1) & (s->row_index_cap - 1)) {
        const struct flat_row *r = &s->rows[s->row_index[j].row];
        if (s->row_index[j].hash == hash && strcmp(r->binary, binary) == 0 &&
            strcmp(r->function, function) == 0)
            return s->row_index[j].row;
    }
    s->rows = xgrow(s->rows, &s->rows_cap, s->nrows + 1, sizeof(*s->rows));
    s->rows[s->nrows] = (struct flat_row){.binary = xstrdup(binary), .function = xstrdup(function)};
    s->row_index[j] = (struct row_slot){s->nrows, hash};
    return s->nrows++;
}

static size_t unknown_row(struct state *s, struct binary *b)
{
    if (b->unknown_row == NO_ROW)
        b->unknown_row = row_for(s, b->name, FLAT_UNKNOWN);
    return b->unknown_row;
}

static size_t syscall_row(struct state *s, int32_t nr)
{
    if (nr < SYSCALL_CACHE && s->syscall_row[nr] != NO_ROW)
        return s->syscall_row[nr];
    const char *name = syscall_name(nr);
    char *function = name ? xasprintf("[syscall %s]", name) : xasprintf("[syscall %d]", (int)nr);
    size_t row = row_for(s, FLAT_KERNEL, function);
    free(function);
    if (nr < SYSCALL_CACHE)
        s->syscall_row[nr] = row;
    return row;
}

/* --- finding and loading a binary's file --------------------------------- */

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

static bool build_id_matches(const struct binary *b, const char *path)
{
    uint8_t id[PROF_BUILD_ID_MAX];
    int n = build_id_read(path, id, sizeof(id));
    return n == (int)b->build_id_len && memcmp(id, b->build_id, b->build_id_len) == 0;
}

/* The candidates, in order: the recorded path when absolute, then
 * DIR/BASENAME for every search directory.  A directory or script of the
 * same name is passed over (a source tree's "demo/" does not hide the
 * "demo" binary).  With a recorded build-id the first matching file wins,
 * else the first ELF file, with a warning that it may be another build. */
static char *find_file(const struct binary *b, const struct flat_options *opts)
{
    const char *path = b->path;
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t ndirs = opts ? opts->nsearch_dirs : 0;
    char *fallback = NULL;
    for (size_t i = 0; i <= ndirs; i++) {
        char *cand;
        if (i == 0) {
            if (path[0] != '/')
                continue;
            cand = xstrdup(path);
        } else {
            if (base[0] == '\0')
                break;
            cand = xasprintf("%s/%s", opts->search_dirs[i - 1], base);
        }
        if (!is_elf_file(cand)) {
            free(cand);
            continue;
        }
        if (b->build_id_len == 0 || build_id_matches(b, cand)) {
            free(fallback);
            return cand;
        }
        if (!fallback)
            fallback = cand;
        else
            free(cand);
    }
    if (fallback)
        pt_warn("%s: %s is not the build that was profiled (its build-id differs); "
                "its function names may be wrong",
                b->path, fallback);
    return fallback;
}

/* The captured bytes become a file for libelf through a memory file, so
 * nothing is left behind in the file system. */
static int load_image(struct binary *b)
{
    const struct prof_image *img = b->image;
    if (img->size < SELFMAG || memcmp(img->data, ELFMAG, SELFMAG) != 0) {
        pt_warn("%s: the captured image is not ELF; its samples are shown as %s", b->name,
                FLAT_UNKNOWN);
        return -1;
    }
    int fd = memfd_create("ptprof-image", MFD_CLOEXEC);
    if (fd < 0) {
        pt_warn("%s: cannot read the captured image: %s", b->name, strerror(errno));
        return -1;
    }
    int rc = -1;
    size_t done = 0;
    while (done < img->size) {
        ssize_t n = write(fd, img->data + done, img->size - done);
        if (n <= 0) {
            pt_warn("%s: cannot read the captured image: %s", b->name,
                    n < 0 ? strerror(errno) : "short write");
            goto out;
        }
        done += (size_t)n;
    }
    char *path = xasprintf("/proc/self/fd/%d", fd);
    rc = elf_symtab_load(path, &b->tab);
    free(path);
out:
    close(fd);
    return rc;
}

static void load_binary(struct binary *b, const struct flat_options *opts)
{
    int rc;
    if (b->image) {
        rc = load_image(b);
    } else {
        char *path = find_file(b, opts);
        if (!path) {
            pt_warn("%s: binary not found%s (add -s DIR); its samples are shown as %s", b->path,
                    b->path[0] == '/' ? "" : " in the search path", FLAT_UNKNOWN);
            return;
        }
        rc = elf_symtab_load(path, &b->tab);
        if (rc == 0)
            pt_debug("%s: symbols from %s", b->path, path);
        else
            pt_warn("%s: its samples are shown as %s", b->path, FLAT_UNKNOWN);
        free(path);
    }
    if (rc != 0)
        return;
    b->loaded = true;
    b->row_of_sym = xmalloc((b->tab.count ? b->tab.count : 1) * sizeof(*b->row_of_sym));
    for (size_t i = 0; i < b->tab.count; i++)
        b->row_of_sym[i] = NO_ROW;
}

/* --- binaries of maps ---------------------------------------------------- */

static const char deleted_suffix[] = " (deleted)";

static const struct prof_image *find_image(const struct profile *p, const struct prof_map *m)
{
    const struct prof_image *any = NULL;
    for (size_t i = 0; i < p->nimages; i++) {
        const struct prof_image *img = &p->images[i];
        if (strcmp(img->name, m->path) != 0)
            continue;
        if (img->pid == m->pid && img->start == m->start)
            return img;
        /* The kernel gives every process the same vDSO: another process's
         * copy names the same offsets. */
        if (!any)
            any = img;
    }
    return any;
}

static size_t binary_of_map(struct state *s, size_t mi)
{
    if (s->binary_of_map[mi] != NO_BINARY)
        return s->binary_of_map[mi];
    const struct prof_map *m = &s->p->maps[mi];
    size_t len = strlen(m->path);
    const size_t slen = sizeof(deleted_suffix) - 1;
    if (len > slen && strcmp(m->path + len - slen, deleted_suffix) == 0)
        len -= slen;
    const struct prof_image *image = m->path[0] == '[' ? find_image(s->p, m) : NULL;
    size_t b = 0;
    for (; b < s->nbinaries; b++) {
        const struct binary *bin = &s->binaries[b];
        if (strlen(bin->path) == len && strncmp(bin->path, m->path, len) == 0 &&
            bin->image == image && bin->build_id_len == m->build_id_len &&
            memcmp(bin->build_id, m->build_id, m->build_id_len) == 0)
            break;
    }
    if (b == s->nbinaries) {
        s->binaries = xgrow(s->binaries, &s->binaries_cap, s->nbinaries + 1, sizeof(*s->binaries));
        struct binary *bin = &s->binaries[s->nbinaries++];
        *bin = (struct binary){.path = xasprintf("%.*s", (int)len, m->path),
                               .image = image,
                               .build_id_len = m->build_id_len,
                               .unknown_row = NO_ROW};
        memcpy(bin->build_id, m->build_id, m->build_id_len);
        const char *slash = memrchr(bin->path, '/', len);
        bin->name = xstrdup(len == 0 ? FLAT_ANON : slash ? slash + 1 : bin->path);
        /* Pseudo files ("[stack]", "[vsyscall]"...) and anonymous memory
         * have no file: nothing to load or warn about. */
        bin->tried = !image && (len == 0 || bin->path[0] == '[');
    }
    s->binary_of_map[mi] = b;
    return b;
}

/* --- maps: which one held a PC at a time ---------------------------------- */

static int ref_cmp(const void *pa, const void *pb)
{
    const struct map_ref *a = pa, *b = pb;
    if (a->pid != b->pid)
        return a->pid < b->pid ? -1 : 1;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->map < b->map ? -1 : a->map > b->map;
}

static void index_maps(struct state *s)
{
    const struct profile *p = s->p;
    s->refs = xcalloc(p->nmaps ? p->nmaps : 1, sizeof(*s->refs));
    s->binary_of_map = xmalloc((p->nmaps ? p->nmaps : 1) * sizeof(*s->binary_of_map));
    for (size_t i = 0; i < p->nmaps; i++) {
        const struct prof_map *m = &p->maps[i];
        s->binary_of_map[i] = NO_BINARY;
        if (m->end <= m->start)
            continue;
        s->refs[s->nrefs++] =
            (struct map_ref){.pid = m->pid, .start = m->start, .end = m->end, .map = i};
    }
    qsort(s->refs, s->nrefs, sizeof(*s->refs), ref_cmp);
    for (size_t i = 0; i < s->nrefs; i++) {
        uint64_t prev = i > 0 && s->refs[i - 1].pid == s->refs[i].pid ? s->refs[i - 1].max_end : 0;
        s->refs[i].max_end = s->refs[i].end > prev ? s->refs[i].end : prev;
    }
}

static bool valid_at(const struct prof_map *m, uint64_t time)
{
    return time >= m->time_ns && (m->unmap_ns == 0 || time < m->unmap_ns);
}

/* The index of the map of PID valid at TIME that holds PC, or SIZE_MAX;
 * when several do (a record of the same range seen again), the latest. */
static size_t find_map(const struct state *s, uint32_t pid, uint64_t pc, uint64_t time)
{
    /* First entry past (pid, pc). */
    size_t lo = 0, hi = s->nrefs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct map_ref *r = &s->refs[mid];
        if (r->pid < pid || (r->pid == pid && r->start <= pc))
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t best = SIZE_MAX;
    for (size_t k = lo; k-- > 0;) {
        const struct map_ref *r = &s->refs[k];
        if (r->pid != pid || r->max_end <= pc)
            break;
        if (pc >= r->end)
            continue;
        const struct prof_map *m = &s->p->maps[r->map];
        if (!valid_at(m, time))
            continue;
        if (best == SIZE_MAX || m->time_ns > s->p->maps[best].time_ns ||
            (m->time_ns == s->p->maps[best].time_ns && r->map > best))
            best = r->map;
    }
    return best;
}

/* --- resolution ---------------------------------------------------------- */

static size_t resolve_pc(struct state *s, uint32_t pid, uint64_t pc, uint64_t time)
{
    size_t mi = find_map(s, pid, pc, time);
    if (mi == SIZE_MAX)
        return row_for(s, FLAT_UNMAPPED, FLAT_UNMAPPED);
    /* binary_of_map() may grow the array: index it only afterwards. */
    size_t bi = binary_of_map(s, mi);
    struct binary *b = &s->binaries[bi];
    if (!b->tried) {
        b->tried = true; /* load (and warn) once per binary */
        load_binary(b, s->opts);
    }
    if (!b->loaded)
        return unknown_row(s, b);
    const struct prof_map *m = &s->p->maps[mi];
    uint64_t addr;
    if (elf_symtab_vaddr(&b->tab, pc - m->start + m->offset, &addr) != 0)
        return unknown_row(s, b);
    const struct elf_symbol *sym = elf_symtab_lookup(&b->tab, addr);
    if (!sym)
        return unknown_row(s, b);
    size_t idx = (size_t)(sym - b->tab.syms);
    if (b->row_of_sym[idx] == NO_ROW)
        b->row_of_sym[idx] = row_for(s, b->name, sym->name);
    return b->row_of_sym[idx];
}

static size_t resolve(struct state *s, const struct prof_thread_sample *t, uint64_t time)
{
    if ((t->flags & PROF_THREAD_IN_SYSCALL) && t->syscall >= 0)
        return syscall_row(s, t->syscall);
    return resolve_pc(s, t->pid, t->pc, time);
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

static void set_totals(const struct profile *p, struct flat_profile *out)
{
    out->samples = p->nsamples;
    out->has_totals = p->has_totals;
    out->truncated = p->truncated;
    out->frequency = p->frequency;
    if (p->has_totals) {
        out->wall_ns = p->totals.wall_ns;
        out->latency_ns = p->totals.latency_ns;
        out->recorded_samples = p->totals.samples;
        out->ideal_samples = p->totals.ideal_samples;
    } else {
        out->recorded_samples = p->nsamples;
    }
    /* A header without a wall time (a killed recorder, or an original
     * writer that left it 0): what the samples span. */
    if (out->wall_ns == 0 && p->nsamples >= 2) {
        uint64_t first = p->samples[0].time_ns, last = p->samples[p->nsamples - 1].time_ns;
        out->wall_ns = last > first ? last - first : 0;
    }
}

int flat_profile_compute(const struct profile *p, const struct flat_options *opts,
                         struct flat_profile *out)
{
    memset(out, 0, sizeof(*out));
    struct state s = {.p = p, .opts = opts};
    for (size_t i = 0; i < SYSCALL_CACHE; i++)
        s.syscall_row[i] = NO_ROW;
    index_maps(&s);

    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *smp = &p->samples[i];
        for (uint32_t t = 0; t < smp->nthreads; t++) {
            const struct prof_thread_sample *th = &smp->threads[t];
            /* resolve() may grow the rows: index them only afterwards. */
            size_t r = resolve(&s, th, smp->time_ns);
            struct flat_row *row = &s.rows[r];
            uint64_t delta = cpu_delta(&s, th->tid, th->cpu_ns);
            row->samples++;
            row->cpu_ns += delta;
            out->thread_samples++;
            out->cpu_ns += delta;
        }
    }
    set_totals(p, out);
    out->rows = s.rows;
    out->count = s.nrows;

    for (size_t i = 0; i < s.nbinaries; i++) {
        elf_symtab_free(&s.binaries[i].tab);
        free(s.binaries[i].row_of_sym);
        free(s.binaries[i].path);
        free(s.binaries[i].name);
    }
    free(s.binaries);
    free(s.binary_of_map);
    free(s.refs);
    free(s.tids);
    free(s.row_index);
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
