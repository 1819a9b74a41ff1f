/*
 * gmon_read.c - reader half of gmon.h: gprof's gmon.out into a struct
 * profile.
 *
 * The file is checked completely before anything is built (gmon_parse):
 * lengths are compared with the bytes present, histogram bins are summed in
 * place without being copied, and only arrays bounded by the input size
 * grow.  The profile is then built from the checked records: a few samples
 * per bin standing for its counts, however many (at most max_counts).
 */
#include "interop/gmon.h"
#include "model/maps.h"
#include "symbol/build_id.h"
#include "symbol/elf_symtab.h"
#include "util/log.h"
#include "util/slurp.h"
#include "util/xalloc.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* gprof's unit of text: bins and symbols are compared in 2-byte units. */
#define UNIT 2u
/* How far two histograms' scales may differ before gprof refuses them. */
#define SCALE_TOLERANCE 0.000001

struct ctx {
    const char *name;
    const unsigned char *d;
    size_t len;
    struct gmon_layout lay;
    uint64_t max_counts;
    char err[512];
};

/* A histogram record as found, before records of one range are unioned. */
struct hrec {
    uint64_t offset;
    uint64_t low, high;
    uint32_t nbins, rate;
    uint64_t bins_at;
};

/* An arc or block as found: INDEX keeps the order of first appearance. */
struct pending {
    uint64_t a, b, count;
    size_t index;
};

static int fail(struct ctx *c, uint64_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct ctx *c, uint64_t offset, const char *fmt, ...)
{
    int n = snprintf(c->err, sizeof(c->err), "%s: offset %" PRIu64 ": ", c->name, offset);
    if (n < 0 || (size_t)n >= sizeof(c->err))
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err + n, sizeof(c->err) - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static uint64_t get_uint(const struct ctx *c, size_t at, unsigned size)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < size; i++) {
        unsigned shift = c->lay.big_endian ? 8 * (size - 1 - i) : 8 * i;
        v |= (uint64_t)c->d[at + i] << shift;
    }
    return v;
}

static uint32_t get_u32(const struct ctx *c, size_t at)
{
    return (uint32_t)get_uint(c, at, 4);
}

static uint64_t get_addr(const struct ctx *c, size_t at)
{
    return get_uint(c, at, c->lay.addr_size);
}

/* Bins live in the input; this is the only place that decodes them. */
static uint16_t bin_at(const unsigned char *d, const struct gmon_layout *lay, uint64_t at)
{
    return lay->big_endian ? (uint16_t)(d[at] << 8 | d[at + 1])
                           : (uint16_t)(d[at] | d[at + 1] << 8);
}

bool gmon_detect(const void *data, size_t len)
{
    return len >= 4 && memcmp(data, GMON_MAGIC_BYTES, 4) == 0;
}

/* --- checking the records ------------------------------------------------ */

struct parse_state {
    struct hrec *hrecs;
    size_t nhrecs, hcap;
    struct pending *arcs;
    size_t narcs, acap;
    struct pending *bbs;
    size_t nbbs, bcap;
    double scale;
    char dimension[16];
    char abbrev;
    uint32_t rate;
    uint64_t total;
};

static void parse_state_free(struct parse_state *s)
{
    free(s->hrecs);
    free(s->arcs);
    free(s->bbs);
    memset(s, 0, sizeof(*s));
}

static const char *printable(const char *s, char *buf, size_t len)
{
    size_t n = 0;
    for (; *s && n + 1 < len; s++)
        buf[n++] = (*s >= 0x20 && *s < 0x7f) ? *s : '?';
    buf[n] = '\0';
    return buf;
}

static int hist_record(struct ctx *c, struct parse_state *s, size_t tag_at, size_t *pos)
{
    const unsigned a = c->lay.addr_size;
    const size_t hsz = 2 * (size_t)a + 4 + 4 + 15 + 1;
    size_t p = *pos;
    if (c->len - p < hsz)
        return fail(c, tag_at,
                    "histogram record cut short: its header needs %zu bytes, %zu are left", hsz,
                    c->len - p);
    struct hrec r = {.offset = tag_at};
    r.low = get_addr(c, p);
    r.high = get_addr(c, p + a);
    r.nbins = get_u32(c, p + 2 * a);
    r.rate = get_u32(c, p + 2 * a + 4);
    char dim[16];
    memcpy(dim, c->d + p + 2 * a + 8, 15);
    dim[15] = '\0';
    char abbrev = (char)c->d[p + 2 * a + 23];

    if (r.nbins == 0)
        return fail(c, p + 2 * a, "histogram of [0x%" PRIx64 ", 0x%" PRIx64 ") has no bins", r.low,
                    r.high);
    if (r.low > r.high)
        return fail(c, p,
                    "inverted histogram range: low_pc 0x%" PRIx64 " is above high_pc 0x%" PRIx64,
                    r.low, r.high);
    if (r.low == r.high)
        return fail(c, p, "empty histogram range at 0x%" PRIx64, r.low);
    double scale = (double)(r.high - r.low) / UNIT / r.nbins;
    if (s->nhrecs == 0) {
        if (r.rate == 0)
            return fail(c, p + 2 * a + 4, "histogram sampling rate of 0 Hz");
        memcpy(s->dimension, dim, sizeof(dim));
        s->abbrev = abbrev;
        s->scale = scale;
        s->rate = r.rate;
    } else {
        char b1[16], b2[16];
        if (strcmp(dim, s->dimension) != 0)
            return fail(c, p + 2 * a + 8,
                        "histogram dimension '%s' differs from the first histogram's '%s'",
                        printable(dim, b1, sizeof(b1)), printable(s->dimension, b2, sizeof(b2)));
        if (abbrev != s->abbrev)
            return fail(c, p + 2 * a + 23,
                        "histogram dimension abbreviation 0x%02x differs from the first "
                        "histogram's 0x%02x",
                        (unsigned char)abbrev, (unsigned char)s->abbrev);
        if (fabs(scale - s->scale) > SCALE_TOLERANCE)
            return fail(c, p + 2 * a,
                        "histogram scale of %g bytes per bin differs from the first "
                        "histogram's %g",
                        scale * UNIT, s->scale * UNIT);
    }
    p += hsz;
    if ((c->len - p) / 2 < r.nbins)
        return fail(c, tag_at + 1 + 2 * (size_t)a,
                    "histogram of %" PRIu32 " bins needs %" PRIu64 " bytes, %zu are left", r.nbins,
                    (uint64_t)r.nbins * 2, c->len - p);
    r.bins_at = p;
    for (uint32_t i = 0; i < r.nbins; i++) {
        s->total += bin_at(c->d, &c->lay, p + 2 * (uint64_t)i);
        if (s->total > c->max_counts)
            return fail(c, tag_at, "histogram counts exceed %" PRIu64 " in all, more than we load",
                        c->max_counts);
    }
    *pos = p + 2 * (size_t)r.nbins;
    s->hrecs = xgrow(s->hrecs, &s->hcap, s->nhrecs + 1, sizeof(*s->hrecs));
    s->hrecs[s->nhrecs++] = r;
    return 0;
}

static int arc_record(struct ctx *c, struct parse_state *s, size_t tag_at, size_t *pos)
{
    const unsigned a = c->lay.addr_size;
    const size_t size = 2 * (size_t)a + 4;
    if (c->len - *pos < size)
        return fail(c, tag_at, "call-graph arc record cut short: it needs %zu bytes, %zu are left",
                    size, c->len - *pos);
    s->arcs = xgrow(s->arcs, &s->acap, s->narcs + 1, sizeof(*s->arcs));
    s->arcs[s->narcs] = (struct pending){
        .a = get_addr(c, *pos),
        .b = get_addr(c, *pos + a),
        .count = get_u32(c, *pos + 2 * a),
        .index = s->narcs,
    };
    s->narcs++;
    *pos += size;
    return 0;
}

static int bb_record(struct ctx *c, struct parse_state *s, uint32_t version, size_t tag_at,
                     size_t *pos)
{
    const unsigned a = c->lay.addr_size;
    if (version == 0)
        return fail(c, tag_at, "basic-block records of version 0 files are not supported");
    if (c->len - *pos < 4)
        return fail(c, tag_at,
                    "basic-block record cut short: its count needs 4 bytes, %zu are left",
                    c->len - *pos);
    uint32_t n = get_u32(c, *pos);
    size_t p = *pos + 4;
    if ((c->len - p) / (2 * a) < n)
        return fail(c, *pos, "%" PRIu32 " basic blocks need %" PRIu64 " bytes, %zu are left", n,
                    (uint64_t)n * 2 * a, c->len - p);
    s->bbs = xgrow(s->bbs, &s->bcap, s->nbbs + n, sizeof(*s->bbs));
    for (uint32_t i = 0; i < n; i++, p += 2 * (size_t)a) {
        s->bbs[s->nbbs] = (struct pending){
            .a = get_addr(c, p),
            .count = get_addr(c, p + a),
            .index = s->nbbs,
        };
        s->nbbs++;
    }
    *pos = p;
    return 0;
}

static int hrec_cmp(const void *pa, const void *pb)
{
    const struct hrec *a = pa, *b = pb;
    if (a->low != b->low)
        return a->low < b->low ? -1 : 1;
    if (a->high != b->high)
        return a->high < b->high ? -1 : 1;
    return a->offset < b->offset ? -1 : a->offset > b->offset;
}

/* Same range: one gmon_hist.  Ranges that overlap otherwise are refused,
 * as gprof refuses them. */
static int union_histograms(struct ctx *c, struct parse_state *s, struct gmon_file *g)
{
    if (s->nhrecs == 0)
        return 0;
    qsort(s->hrecs, s->nhrecs, sizeof(*s->hrecs), hrec_cmp);
    g->bins_at = xmalloc(s->nhrecs * sizeof(*g->bins_at));
    g->nbins_at = s->nhrecs;
    g->hists = xmalloc(s->nhrecs * sizeof(*g->hists));
    /* The range reaching furthest so far, to catch one that swallows
     * several later ones. */
    size_t reach = SIZE_MAX;
    for (size_t i = 0; i < s->nhrecs; i++) {
        const struct hrec *r = &s->hrecs[i];
        g->bins_at[i] = r->bins_at;
        struct gmon_hist *last = g->nhists ? &g->hists[g->nhists - 1] : NULL;
        if (last && last->low_pc == r->low && last->high_pc == r->high) {
            if (r->nbins != last->nbins)
                return fail(c, r->offset,
                            "histogram of the same range as the one at offset %" PRIu64
                            " has %" PRIu32 " bins instead of %" PRIu32,
                            last->offset, r->nbins, last->nbins);
            last->nrecs++;
            continue;
        }
        if (reach != SIZE_MAX && g->hists[reach].high_pc > r->low) {
            const struct gmon_hist *o = &g->hists[reach];
            uint64_t later = o->offset > r->offset ? o->offset : r->offset;
            uint64_t earlier = o->offset > r->offset ? r->offset : o->offset;
            return fail(c, later,
                        "histogram ranges overlap: [0x%" PRIx64 ", 0x%" PRIx64 ") and [0x%" PRIx64
                        ", 0x%" PRIx64 ") (the other record is at offset %" PRIu64 ")",
                        o->low_pc, o->high_pc, r->low, r->high, earlier);
        }
        g->hists[g->nhists] = (struct gmon_hist){
            .offset = r->offset,
            .low_pc = r->low,
            .high_pc = r->high,
            .nbins = r->nbins,
            .rate = r->rate,
            .first_rec = i,
            .nrecs = 1,
        };
        if (reach == SIZE_MAX || r->high > g->hists[reach].high_pc)
            reach = g->nhists;
        g->nhists++;
    }
    return 0;
}

static int pending_key_cmp(const void *pa, const void *pb)
{
    const struct pending *a = pa, *b = pb;
    if (a->a != b->a)
        return a->a < b->a ? -1 : 1;
    if (a->b != b->b)
        return a->b < b->b ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static int pending_index_cmp(const void *pa, const void *pb)
{
    const struct pending *a = pa, *b = pb;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Entries with the same key add up (saturating: counts are the file's),
 * in the order each key first appeared.  Returns the new count. */
static size_t merge_pending(struct pending *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof(*v), pending_key_cmp);
    size_t out = 0;
    for (size_t i = 0; i < n; i++) {
        if (out && v[out - 1].a == v[i].a && v[out - 1].b == v[i].b) {
            uint64_t sum = v[out - 1].count + v[i].count;
            v[out - 1].count = sum < v[i].count ? UINT64_MAX : sum;
        } else {
            v[out++] = v[i];
        }
    }
    qsort(v, out, sizeof(*v), pending_index_cmp);
    return out;
}

static int parse_with(struct ctx *c, struct gmon_file *g)
{
    memset(g, 0, sizeof(*g));
    struct parse_state s = {0};
    g->version = get_u32(c, 4);
    if (g->version != 1 && g->version != 0)
        return fail(c, 4, "unsupported gmon.out version %" PRIu32 " (gprof writes version 1)",
                    g->version);
    size_t pos = GMON_HEADER_SIZE;
    int rc = 0;
    while (rc == 0 && pos < c->len) {
        size_t tag_at = pos++;
        switch (c->d[tag_at]) {
        case GMON_TAG_HIST:
            rc = hist_record(c, &s, tag_at, &pos);
            break;
        case GMON_TAG_ARC:
            rc = arc_record(c, &s, tag_at, &pos);
            break;
        case GMON_TAG_BB:
            rc = bb_record(c, &s, g->version, tag_at, &pos);
            break;
        default:
            rc = fail(c, tag_at,
                      "unknown record tag %u (0 histogram, 1 call-graph arc, 2 basic-block "
                      "counts)",
                      c->d[tag_at]);
        }
    }
    if (rc == 0)
        rc = union_histograms(c, &s, g);
    if (rc != 0) {
        parse_state_free(&s);
        gmon_file_free(g);
        return -1;
    }
    g->layout = c->lay;
    snprintf(g->dimension, sizeof(g->dimension), "%s", s.nhrecs ? s.dimension : "seconds");
    g->abbrev = s.nhrecs ? s.abbrev : 's';
    g->rate = s.rate;
    g->total_counts = s.total;
    g->data = c->d;

    g->narcs = merge_pending(s.arcs, s.narcs);
    if (g->narcs) {
        g->arcs = xmalloc(g->narcs * sizeof(*g->arcs));
        for (size_t i = 0; i < g->narcs; i++)
            g->arcs[i] = (struct prof_arc){s.arcs[i].a, s.arcs[i].b, s.arcs[i].count};
    }
    g->nbbs = merge_pending(s.bbs, s.nbbs);
    if (g->nbbs) {
        g->bbs = xmalloc(g->nbbs * sizeof(*g->bbs));
        for (size_t i = 0; i < g->nbbs; i++)
            g->bbs[i] = (struct gmon_bb){s.bbs[i].a, s.bbs[i].count};
    }
    parse_state_free(&s);
    return 0;
}

int gmon_parse(const char *name, const void *data, size_t len, const struct gmon_layout *layout,
               uint64_t max_counts, struct gmon_file *out)
{
    memset(out, 0, sizeof(*out));
    struct ctx c = {
        .name = name,
        .d = data,
        .len = len,
        .max_counts = max_counts ? max_counts : GMON_MAX_COUNTS,
    };
    if (len < GMON_HEADER_SIZE || !gmon_detect(data, len)) {
        if (!gmon_detect(data, len))
            fail(&c, 0, "not a gmon.out file (no \"gmon\" magic)");
        else
            fail(&c, len, "the file ends inside the %u-byte header", GMON_HEADER_SIZE);
        pt_err("%s", c.err);
        return -1;
    }
    if (layout) {
        c.lay = *layout;
        if (parse_with(&c, out) != 0) {
            pt_err("%s", c.err);
            return -1;
        }
        return 0;
    }
    /* The version is 1: the byte order that reads it so is the file's. */
    const unsigned char *v = c.d + 4;
    c.lay.big_endian = v[0] == 0 && v[3] != 0;
    c.lay.addr_size = 8;
    if (parse_with(&c, out) == 0)
        return 0;
    char first[sizeof(c.err)];
    memcpy(first, c.err, sizeof(first));
    c.lay.addr_size = 4;
    if (parse_with(&c, out) == 0)
        return 0;
    pt_err("%s", first);
    return -1;
}

uint64_t gmon_hist_count(const struct gmon_file *g, size_t h, uint32_t bin)
{
    const struct gmon_hist *hist = &g->hists[h];
    uint64_t sum = 0;
    for (size_t r = 0; r < hist->nrecs; r++)
        sum += bin_at(g->data, &g->layout, g->bins_at[hist->first_rec + r] + 2 * (uint64_t)bin);
    return sum;
}

void gmon_file_free(struct gmon_file *g)
{
    if (!g)
        return;
    free(g->hists);
    free(g->bins_at);
    free(g->arcs);
    free(g->bbs);
    memset(g, 0, sizeof(*g));
}

/* --- the executable -------------------------------------------------------- */

int gmon_binary_layout(const char *binary, struct gmon_layout *out)
{
    unsigned char ident[EI_NIDENT];
    int fd = open(binary, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        pt_err("%s: %s", binary, strerror(errno));
        return -1;
    }
    ssize_t n = read(fd, ident, sizeof(ident));
    close(fd);
    if (n != (ssize_t)sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG) != 0 ||
        (ident[EI_CLASS] != ELFCLASS32 && ident[EI_CLASS] != ELFCLASS64) ||
        (ident[EI_DATA] != ELFDATA2LSB && ident[EI_DATA] != ELFDATA2MSB)) {
        pt_err("%s: not an ELF file", binary);
        return -1;
    }
    out->addr_size = ident[EI_CLASS] == ELFCLASS64 ? 8 : 4;
    out->big_endian = ident[EI_DATA] == ELFDATA2MSB;
    return 0;
}

static void set_meta(struct profile *p, const char *key, const char *value)
{
    for (size_t i = 0; i < p->nmeta; i++)
        if (strcmp(p->meta[i].key, key) == 0) {
            free(p->meta[i].value);
            p->meta[i].value = xstrdup(value);
            return;
        }
    p->meta = xrealloc(p->meta, (p->nmeta + 1) * sizeof(*p->meta));
    p->meta[p->nmeta++] = (struct prof_meta){xstrdup(key), xstrdup(value)};
}

static char *layout_name(const struct gmon_layout *lay)
{
    return xasprintf("%u-bit %s-endian", lay->addr_size * 8, lay->big_endian ? "big" : "little");
}

/* gprof credits an address to the function starting at or below it, up to
 * where the next one starts; the symbolizers name only a function's own
 * bytes.  profil() rounds, so a bin may lie wholly in the padding after a
 * function (holding, say, the first instruction of the next one), and gprof
 * credits it to the function before: its samples move onto that function's
 * last byte so that every report agrees with gprof.  A symbol without a
 * size (_init, whose range gprof runs over the PLT to _start) names only
 * its first byte in the report: samples past it move there. */
static void snap_to_functions(struct profile *p, const struct elf_symtab *tab)
{
    for (size_t i = 0; i < p->nsamples; i++) {
        for (uint32_t t = 0; t < p->samples[i].nthreads; t++) {
            struct prof_thread_sample *th = &p->samples[i].threads[t];
            if (tab->count == 0 || th->pc < tab->syms[0].addr)
                continue;
            const struct elf_symbol *in = elf_symtab_lookup(tab, th->pc);
            if (in && in->size > 0)
                continue;
            size_t lo = 0, hi = tab->count;
            while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (tab->syms[mid].addr <= th->pc)
                    lo = mid;
                else
                    hi = mid;
            }
            const struct elf_symbol *below = &tab->syms[lo];
            /* The last symbol's range ends with the histogram: gprof too
             * has nothing after it to end it. */
            th->pc = below->size > 0 ? below->addr + below->size - 1 : below->addr;
        }
    }
}

static void split_straddling_bins(struct profile *p, const struct elf_symtab *tab);

int gmon_set_binary(struct profile *p, const char *binary)
{
    if (!p->format || strcmp(p->format, "gmon") != 0) {
        pt_err("%s: only a gmon.out profile takes its executable from an option", binary);
        return -1;
    }
    struct gmon_layout lay;
    if (gmon_binary_layout(binary, &lay) != 0)
        return -1;
    const char *read_as = profile_meta(p, "gmon.layout");
    char *want = layout_name(&lay);
    if (read_as && strcmp(read_as, want) != 0) {
        pt_err("%s: its gmon.out would be %s, but the profile was read as %s; read it again "
               "with this binary",
               binary, want, read_as);
        free(want);
        return -1;
    }
    free(want);
    char *abs = realpath(binary, NULL);
    if (!abs) {
        pt_err("%s: %s", binary, strerror(errno));
        return -1;
    }
    struct elf_symtab tab;
    if (elf_symtab_load(abs, &tab) != 0) {
        free(abs);
        return -1;
    }
    size_t nmaps = 0;
    for (size_t i = 0; i < tab.nsegments; i++)
        nmaps += tab.segments[i].filesz > 0;
    if (nmaps == 0) {
        pt_err("%s: no loadable segment", abs);
        elf_symtab_free(&tab);
        free(abs);
        return -1;
    }
    uint8_t id[PROF_BUILD_ID_MAX];
    int idlen = build_id_read(abs, id, sizeof(id));

    uint32_t pid = p->nprocesses ? p->processes[0].pid : 0;
    size_t keep = 0;
    for (size_t i = 0; i < p->nmaps; i++) {
        if (p->maps[i].pid == pid) {
            free(p->maps[i].path);
            continue;
        }
        p->maps[keep++] = p->maps[i];
    }
    p->maps = xrealloc(p->maps, (keep + nmaps) * sizeof(*p->maps));
    p->nmaps = keep;
    for (size_t i = 0; i < tab.nsegments; i++) {
        const struct elf_segment *seg = &tab.segments[i];
        if (seg->filesz == 0)
            continue;
        struct prof_map m = {
            .pid = pid,
            .start = seg->vaddr,
            .end = seg->vaddr + seg->filesz < seg->vaddr ? UINT64_MAX : seg->vaddr + seg->filesz,
            .offset = seg->offset,
            .perms = ((seg->flags & PF_R) ? MAP_PERM_READ : 0u) |
                     ((seg->flags & PF_W) ? MAP_PERM_WRITE : 0u) |
                     ((seg->flags & PF_X) ? MAP_PERM_EXEC : 0u),
            .path = xstrdup(abs),
        };
        if (idlen > 0) {
            m.build_id_len = (uint8_t)idlen;
            memcpy(m.build_id, id, (size_t)idlen);
        }
        p->maps[p->nmaps++] = m;
    }
    const char *had_binary = profile_meta(p, "gmon.binary");
    if (!had_binary || !*had_binary)
        split_straddling_bins(p, &tab);
    snap_to_functions(p, &tab);
    elf_symtab_free(&tab);
    if (p->nprocesses) {
        free(p->processes[0].exe);
        p->processes[0].exe = xstrdup(abs);
    }
    set_meta(p, "gmon.binary", abs);
    free(abs);
    return 0;
}

/* --- the profile ------------------------------------------------------------ */

/* Appends a sample of one thread standing for WEIGHT counts at PC, the
 * counts so far being COUNTS and the CPU credit CREDIT (in counts). */
static void push_point(struct profile *p, size_t *cap, uint64_t pc, uint64_t weight,
                       uint64_t counts, double credit, bool seconds, double ns_per_count)
{
    p->samples = xgrow(p->samples, cap, p->nsamples + 1, sizeof(*p->samples));
    uint64_t t = (uint64_t)llround((seconds ? credit : (double)counts) * ns_per_count);
    struct prof_thread_sample th = {.pc = pc, .cpu_ns = seconds ? t : 0, .syscall = -1};
    struct prof_sample *s = &p->samples[p->nsamples++];
    *s = (struct prof_sample){.time_ns = t};
    profile_sample_set_one(p, s, &th, weight);
}

/* Point U of K over a bin of COUNT counts: the counts a unit of the range
 * gets when each count J lands on unit J x K / COUNT (gprof's even
 * spread), at least one since K <= COUNT. */
static uint64_t point_counts(uint64_t count, uint64_t k, uint64_t u)
{
    unsigned __int128 hi = ((unsigned __int128)count * (u + 1) + k - 1) / k;
    unsigned __int128 lo = ((unsigned __int128)count * u + k - 1) / k;
    return (uint64_t)(hi - lo);
}

/* Bin I of histogram HIST: its first unit and how many units it spans, as
 * gprof truncates its edges, and how many points its COUNT counts become. */
struct bin {
    uint64_t lo, width, points;
    double scale; /* units per bin: gprof credits a unit COUNT / scale counts */
};

static double hist_scale(const struct gmon_hist *hist)
{
    return (double)(hist->high_pc - hist->low_pc) / UNIT / hist->nbins;
}

static struct bin bin_of(const struct gmon_hist *hist, uint32_t i, uint64_t count)
{
    const uint64_t low_unit = hist->low_pc / UNIT;
    struct bin b = {.lo = low_unit + (uint64_t)(hist_scale(hist) * i), .scale = hist_scale(hist)};
    uint64_t hi = low_unit + (uint64_t)(b.scale * ((double)i + 1));
    b.width = hi > b.lo ? hi - b.lo : 0;
    b.points = count < b.width ? count : b.width;
    b.points = b.points < GMON_SPREAD_MAX ? b.points : GMON_SPREAD_MAX;
    b.points = count && !b.points ? 1 : b.points;
    return b;
}

/* The first unit of point U of bin B (point U covers up to point U + 1's). */
static uint64_t point_unit(const struct bin *b, uint64_t u)
{
    return b->lo + (uint64_t)((unsigned __int128)u * b->width / b->points);
}

static void fill_samples(const struct gmon_file *g, struct profile *p)
{
    if (g->total_counts == 0)
        return;
    size_t cap = 0;
    const bool seconds = strcmp(g->dimension, "seconds") == 0;
    const double ns_per_count = 1e9 / g->rate;
    double credit = 0;   /* gprof's credit so far, in counts */
    uint64_t counts = 0; /* counts so far */
    for (size_t h = 0; h < g->nhists; h++) {
        for (uint32_t i = 0; i < g->hists[h].nbins; i++) {
            uint64_t count = gmon_hist_count(g, h, i);
            if (count == 0)
                continue;
            struct bin b = bin_of(&g->hists[h], i, count);
            for (uint64_t u = 0; u < b.points; u++) {
                uint64_t w = point_counts(count, b.points, u);
                uint64_t first = point_unit(&b, u), end = point_unit(&b, u + 1);
                /* gprof credits every unit of the bin alike, whatever
                 * the counts' integer spread: each point its units'. */
                double point_credit = (double)count * (double)(end - first) / b.scale;
                /* The unit's last byte: gprof gives a unit to the symbol
                 * whose address halved is at or below it, so a function
                 * starting at an odd address owns the unit it starts in. */
                uint64_t pc = first * UNIT + (UNIT - 1);
                /* The thread's first appearance counts no wall time: its
                 * first count alone, as when every count was a sample. */
                if (counts == 0 && w > 1) {
                    credit += point_credit / (double)w;
                    point_credit -= point_credit / (double)w;
                    push_point(p, &cap, pc, 1, ++counts, credit, seconds, ns_per_count);
                    w--;
                }
                credit += point_credit;
                counts += w;
                push_point(p, &cap, pc, w, counts, credit, seconds, ns_per_count);
            }
        }
    }
}

static void fill_profile(const struct gmon_file *g, struct profile *p)
{
    p->format = xstrdup("gmon");
    char *s = xasprintf("%" PRIu32, g->version);
    set_meta(p, "gmon.version", s);
    free(s);
    s = layout_name(&g->layout);
    set_meta(p, "gmon.layout", s);
    free(s);
    char dim[16];
    set_meta(p, "gmon.dimension", printable(g->dimension, dim, sizeof(dim)));
    s = xasprintf("%zu", g->nbbs);
    set_meta(p, "gmon.basic_blocks", s);
    free(s);
    set_meta(p, "gmon.binary", "");
    /* The bins' ranges, for splitting a bin between the functions it
     * overlaps once the binary names them (gmon_set_binary). */
    /* At most 48 bytes a range ("0x" + 16 digits, twice, "/", 10, ","). */
    char *ranges = xmalloc(g->nhists * 48 + 1);
    size_t used = 0;
    ranges[0] = '\0';
    for (size_t h = 0; h < g->nhists; h++)
        used += (size_t)snprintf(ranges + used, 48 + 1, "%s0x%" PRIx64 "-0x%" PRIx64 "/%" PRIu32,
                                 h ? "," : "", g->hists[h].low_pc, g->hists[h].high_pc,
                                 g->hists[h].nbins);
    set_meta(p, "gmon.histograms", ranges);
    free(ranges);

    p->processes = xcalloc(1, sizeof(*p->processes));
    p->nprocesses = 1;
    p->processes[0] = (struct prof_process){.exe = xstrdup(GMON_DEFAULT_BINARY)};
    p->threads = xcalloc(1, sizeof(*p->threads));
    p->nthreads = 1;
    p->threads[0] = (struct prof_thread){.name = xstrdup("")};
    p->stacks = xcalloc(1, sizeof(*p->stacks));
    p->nstacks = 1;

    uint64_t start = UINT64_MAX;
    for (size_t h = 0; h < g->nhists; h++)
        if (g->hists[h].low_pc < start)
            start = g->hists[h].low_pc;
    p->maps = xcalloc(1, sizeof(*p->maps));
    p->nmaps = 1;
    p->maps[0] = (struct prof_map){
        .start = start == UINT64_MAX ? 0 : start & ~(uint64_t)(UNIT - 1),
        .end = UINT64_MAX,
        .perms = MAP_PERM_READ | MAP_PERM_EXEC,
        .path = xstrdup(GMON_DEFAULT_BINARY),
    };

    if (g->narcs) {
        p->arcs = xmalloc(g->narcs * sizeof(*p->arcs));
        memcpy(p->arcs, g->arcs, g->narcs * sizeof(*p->arcs));
        p->narcs = g->narcs;
    }
    fill_samples(g, p);
    p->frequency = g->rate;
    uint64_t end = p->nsamples ? p->samples[p->nsamples - 1].time_ns : 0;
    p->totals = (struct prof_totals){
        .wall_ns = end,
        .samples = g->total_counts,
        .ideal_samples = g->total_counts,
    };
    p->has_totals = true;
}

/* The histograms' ranges from the meta entry fill_profile() wrote; how
 * many were read (0 when there is none or it does not parse). */
static size_t read_ranges(const struct profile *p, struct gmon_hist **out)
{
    *out = NULL;
    const char *s = profile_meta(p, "gmon.histograms");
    size_t n = 0, cap = 0;
    while (s && *s) {
        struct gmon_hist h = {0};
        char *end;
        h.low_pc = strtoull(s, &end, 16);
        if (*end != '-')
            break;
        h.high_pc = strtoull(end + 1, &end, 16);
        if (*end != '/')
            break;
        unsigned long bins = strtoul(end + 1, &end, 10);
        if (bins == 0 || bins > UINT32_MAX || h.high_pc <= h.low_pc || (*end && *end != ','))
            break;
        h.nbins = (uint32_t)bins;
        *out = xgrow(*out, &cap, n + 1, sizeof(**out));
        (*out)[n++] = h;
        s = *end ? end + 1 : end;
    }
    return n;
}

/* The bin of H holding unit UNIT, as bin_of() draws its edges; false when
 * none does. */
static bool bin_holding(const struct gmon_hist *h, uint64_t unit, struct bin *out)
{
    const uint64_t low_unit = h->low_pc / UNIT;
    if (unit < low_unit)
        return false;
    double guess = (double)(unit - low_unit) / hist_scale(h);
    int64_t i = (int64_t)guess;
    for (int64_t j = i - 2; j <= i + 2; j++) {
        if (j < 0 || j >= (int64_t)h->nbins)
            continue;
        struct bin b = bin_of(h, (uint32_t)j, 1);
        if (b.lo <= unit && unit < b.lo + b.width) {
            *out = b;
            return true;
        }
    }
    return false;
}

/* The first symbol whose unit (address halved, gprof's scaled address) is
 * above UNIT: gprof's functions start there. */
static size_t first_symbol_after(const struct elf_symtab *tab, uint64_t unit)
{
    size_t lo = 0, hi = tab->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (tab->syms[mid].addr / UNIT <= unit)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* gprof credits a bin to every function its range overlaps, in proportion
 * to the overlap (binutils' hist_assign_samples): a function starts at its
 * symbol's unit and runs to the next symbol's.  A point standing for
 * several units (a bin of fewer counts than units) that a function starts
 * inside becomes one sample per function, at the first unit of each,
 * with the CPU time of its units; its counts are spread evenly over them,
 * at least one each, so such a sample counts once more than the file. */
static void split_straddling_bins(struct profile *p, const struct elf_symtab *tab)
{
    struct gmon_hist *hists;
    size_t nhists = read_ranges(p, &hists);
    if (nhists == 0 || tab->count == 0)
        return;
    struct prof_sample *out = NULL;
    size_t nout = 0, cap = 0;
    uint64_t prev_cpu = 0, prev_time = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        struct prof_sample *s = &p->samples[i];
        uint64_t unit = s->nthreads == 1 ? s->threads[0].pc / UNIT : 0;
        struct bin b = {0};
        bool in_bin = false;
        if (s->nthreads == 1) {
            /* The ranges are sorted and apart: the last starting at or
             * below the unit is the only one that may hold it. */
            size_t lo = 0, hi = nhists;
            while (hi - lo > 1) {
                size_t mid = lo + (hi - lo) / 2;
                if (hists[mid].low_pc / UNIT <= unit)
                    lo = mid;
                else
                    hi = mid;
            }
            in_bin = bin_holding(&hists[lo], unit, &b);
        }
        /* The point's units: to the next point of the bin, or its end. */
        uint64_t end = b.lo + b.width;
        for (size_t j = i + 1; in_bin && j < p->nsamples; j++) {
            if (p->samples[j].nthreads != 1 || p->samples[j].threads[0].pc / UNIT == unit)
                continue;
            uint64_t next = p->samples[j].threads[0].pc / UNIT;
            if (next > unit && next < end)
                end = next;
            break;
        }
        size_t first_sym = first_symbol_after(tab, unit), nsplit = 0;
        uint64_t starts[GMON_SPREAD_MAX + 1];
        starts[nsplit++] = unit;
        for (size_t k = first_sym; in_bin && k < tab->count && tab->syms[k].addr / UNIT < end; k++)
            if (tab->syms[k].addr / UNIT != starts[nsplit - 1] && nsplit <= GMON_SPREAD_MAX)
                starts[nsplit++] = tab->syms[k].addr / UNIT;
        uint64_t cpu = s->nthreads ? s->threads[0].cpu_ns : 0, time = s->time_ns;
        if (nsplit == 1) {
            out = xgrow(out, &cap, nout + 1, sizeof(*out));
            out[nout++] = *s;
        } else {
            uint64_t weight = prof_weight(s, 0);
            out = xgrow(out, &cap, nout + nsplit, sizeof(*out));
            for (size_t k = 0; k < nsplit; k++) {
                uint64_t seg_end = k + 1 < nsplit ? starts[k + 1] : end;
                double upto = (double)(seg_end - unit) / (double)(end - unit);
                struct prof_sample *t = &out[nout++];
                *t = (struct prof_sample){
                    .time_ns = k + 1 < nsplit ? prev_time + (uint64_t)llround(
                                                                (double)(time - prev_time) * upto)
                                              : time,
                };
                struct prof_thread_sample th = s->threads[0];
                th.pc = starts[k] * UNIT + (UNIT - 1);
                th.cpu_ns = k + 1 < nsplit
                                ? prev_cpu + (uint64_t)llround((double)(cpu - prev_cpu) * upto)
                                : cpu;
                profile_sample_set_one(p, t, &th,
                                       weight >= nsplit ? point_counts(weight, nsplit, k) : 1);
            }
            /* Arena memory stays until the profile goes. */
            profile_sample_release(s);
        }
        prev_cpu = cpu;
        prev_time = time;
    }
    free(p->samples);
    p->samples = out;
    p->nsamples = nout;
    free(hists);
}

int gmon_load_buffer_opts(const char *name, const void *data, size_t len,
                          const struct gmon_read_options *opts, struct profile *out)
{
    profile_init(out);
    const char *binary = opts ? opts->binary : NULL;
    struct gmon_layout lay;
    if (binary && gmon_binary_layout(binary, &lay) != 0)
        return -1;
    struct gmon_file g;
    if (gmon_parse(name, data, len, binary ? &lay : NULL, opts ? opts->max_counts : 0, &g) != 0)
        return -1;
    fill_profile(&g, out);
    gmon_file_free(&g);
    if (binary && gmon_set_binary(out, binary) != 0) {
        profile_free(out);
        return -1;
    }
    return 0;
}

int gmon_load_buffer(const char *name, const void *data, size_t len, struct profile *out)
{
    return gmon_load_buffer_opts(name, data, len, NULL, out);
}

int gmon_load(const char *path, const char *binary, struct profile *out)
{
    profile_init(out);
    struct slurp s;
    if (slurp_path(path, SLURP_DEFAULT_MAX, &s) != 0)
        return -1;
    const char *name = strcmp(path, "-") == 0 ? "<stdin>" : path;
    int rc = -1;
    if (s.truncated) {
        /* A prefix of a gmon.out is not one: histograms are whole. */
        pt_err("%s", s.error);
    } else {
        struct gmon_read_options opts = {.binary = binary};
        rc = gmon_load_buffer_opts(name, s.data, s.len, &opts, out);
    }
    slurp_free(&s);
    return rc;
}
