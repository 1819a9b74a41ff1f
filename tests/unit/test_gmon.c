/* test_gmon.c - interop/gmon.h: gprof's gmon.out, against gprof itself on
 * files that gcc -pg builds of the workloads write. */
#include "interop/gmon.h"
#include "format/load.h"
#include "symbol/elf_symtab.h"
#include "../lib/spawn.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- tools and files ------------------------------------------------------- */

/* A file of the source tree: $PTPROF_SRCDIR/REL, or REL from the working
 * directory or one of its parents. */
static char *source_file(const char *rel)
{
    const char *src = getenv("PTPROF_SRCDIR");
    char *path = NULL;
    if (src && *src) {
        cr_assert_geq(asprintf(&path, "%s/%s", src, rel), 0);
        return path;
    }
    const char *up[] = {"", "../", "../../", "../../../"};
    for (size_t i = 0; i < sizeof(up) / sizeof(up[0]); i++) {
        cr_assert_geq(asprintf(&path, "%s%s", up[i], rel), 0);
        if (access(path, R_OK) == 0) {
            char *abs = realpath(path, NULL);
            free(path);
            return abs;
        }
        free(path);
    }
    cr_assert_fail("cannot find %s; run from the source tree or set PTPROF_SRCDIR", rel);
    return NULL;
}

static void run_ok(const char *const *argv, const char *cwd, struct spawn_result *res)
{
    /* With GMON_OUT_PREFIX set, glibc writes PREFIX.PID instead. */
    const char *env[] = {"GMON_OUT_PREFIX", NULL};
    struct spawn_opts o = {.argv = argv, .env = env, .cwd = cwd, .timeout_s = 120};
    spawn_run(&o, res);
    cr_assert_eq(spawn_exit_code(res->status), 0, "%s: %s\n%s", argv[0],
                 spawn_status_text(res->status), res->err);
}

/* Build workload SRC (tests/workloads/SRC.c) with -pg and FLAGS into DIR,
 * run it there with ARGS so it writes DIR/gmon.out; returns the binary. */
static char *gmon_of_workload(const char *dir, const char *src, const char *flag1,
                              const char *flag2, const char *arg1, const char *arg2)
{
    char *gcc = test_need_tool("gcc");
    char *rel = NULL;
    cr_assert_geq(asprintf(&rel, "tests/workloads/%s.c", src), 0);
    char *source = source_file(rel);
    char *bin = test_path(dir, src);
    const char *cc[] = {gcc,   "-std=gnu11", "-g", "-pg",  "-pthread", flag1,
                        flag2, "-o",         bin,  source, "-lm",      NULL};
    struct spawn_result res;
    run_ok(cc, dir, &res);
    spawn_result_free(&res);
    const char *run[] = {bin, arg1, arg2, NULL};
    run_ok(run, dir, &res);
    spawn_result_free(&res);
    char *gmon = test_path(dir, "gmon.out");
    cr_assert(test_file_exists(gmon), "%s wrote no gmon.out", bin);
    free(gmon);
    free(gcc);
    free(rel);
    free(source);
    return bin;
}

static char *gprof_output(const char *opt, const char *bin, const char *gmon)
{
    char *gprof = test_need_tool("gprof");
    const char *argv[] = {gprof, "-b", opt, bin, gmon, NULL};
    struct spawn_result res;
    run_ok(argv, NULL, &res);
    char *out = strdup(res.out);
    spawn_result_free(&res);
    free(gprof);
    return out;
}

/* --- gprof's answers ------------------------------------------------------- */

struct fn_row {
    char name[128];
    double self; /* seconds, as printed */
    double percent;
    long long calls; /* -1: blank */
};

struct flat {
    struct fn_row rows[256];
    size_t n;
};

/* The rows of `gprof -b -p`: "%time cumulative self [calls self/call
 * total/call] name". */
static void parse_flat(const char *text, struct flat *f)
{
    memset(f, 0, sizeof(*f));
    const char *s = strstr(text, " time   seconds");
    cr_assert_not_null(s, "no flat profile in:\n%s", text);
    s = strchr(s, '\n');
    while (s && s[1] && s[1] != '\n' && f->n < 256) {
        s++;
        const char *end = strchr(s, '\n');
        char line[512];
        size_t len = end ? (size_t)(end - s) : strlen(s);
        if (len >= sizeof(line))
            len = sizeof(line) - 1;
        memcpy(line, s, len);
        line[len] = '\0';
        char *tok[16];
        int nt = 0;
        for (char *t = strtok(line, " \t"); t && nt < 16; t = strtok(NULL, " \t"))
            tok[nt++] = t;
        if (nt == 4 || nt == 7) {
            struct fn_row *r = &f->rows[f->n++];
            r->percent = atof(tok[0]);
            r->self = atof(tok[2]);
            r->calls = nt == 7 ? atoll(tok[3]) : -1;
            snprintf(r->name, sizeof(r->name), "%s", tok[nt - 1]);
        }
        s = end;
    }
}

static const struct fn_row *flat_row(const struct flat *f, const char *name)
{
    for (size_t i = 0; i < f->n; i++)
        if (strcmp(f->rows[i].name, name) == 0)
            return &f->rows[i];
    return NULL;
}

struct arc_row {
    char parent[128], child[128];
    long long count;
};

struct graph {
    struct arc_row arcs[512];
    size_t narcs;
    struct fn_row called[256]; /* calls = N or N+R of the primary line */
    size_t ncalled;
};

/* `gprof -b -q`: per entry, the callers' "self children called/total name
 * [i]" lines, then the primary "[i] %time self children called name [i]". */
static void parse_graph(const char *text, struct graph *g)
{
    memset(g, 0, sizeof(*g));
    const char *s = strstr(text, "index % time");
    cr_assert_not_null(s, "no call graph in:\n%s", text);
    struct arc_row pending[64];
    size_t npending = 0;
    bool after_primary = false; /* the entry's callees follow */
    for (s = strchr(s, '\n'); s && s[1]; s = strchr(s + 1, '\n')) {
        const char *line_start = s + 1;
        if (strncmp(line_start, "Index by function name", 22) == 0)
            break;
        const char *end = strchr(line_start, '\n');
        char line[512];
        size_t len = end ? (size_t)(end - line_start) : strlen(line_start);
        if (len >= sizeof(line))
            len = sizeof(line) - 1;
        memcpy(line, line_start, len);
        line[len] = '\0';
        if (strncmp(line, "-----", 5) == 0) {
            npending = 0;
            after_primary = false;
            continue;
        }
        if (strstr(line, "<cycle") || strstr(line, "<spontaneous>"))
            continue;
        char *tok[16];
        int nt = 0;
        for (char *t = strtok(line, " \t"); t && nt < 16; t = strtok(NULL, " \t"))
            tok[nt++] = t;
        if (nt < 3 || tok[nt - 1][0] != '[')
            continue;
        const char *name = tok[nt - 2];
        if (tok[0][0] == '[') {
            /* Primary line: the callers seen so far call this one. */
            for (size_t i = 0; i < npending && g->narcs < 512; i++) {
                g->arcs[g->narcs] = pending[i];
                snprintf(g->arcs[g->narcs].child, sizeof(g->arcs[0].child), "%s", name);
                g->narcs++;
            }
            if (nt == 7 && g->ncalled < 256) {
                struct fn_row *r = &g->called[g->ncalled++];
                snprintf(r->name, sizeof(r->name), "%s", name);
                long long n = 0, rec = 0;
                sscanf(tok[4], "%lld+%lld", &n, &rec);
                r->calls = n + rec;
            }
            after_primary = true;
            continue;
        }
        if (!after_primary && nt == 5 && strchr(tok[2], '/') && npending < 64) {
            snprintf(pending[npending].parent, sizeof(pending[0].parent), "%s", name);
            pending[npending].count = atoll(tok[2]);
            npending++;
        }
    }
}

/* --- what our reader says -------------------------------------------------- */

struct fn_time {
    const char *name;
    double seconds;
    uint64_t samples;
};

struct model {
    struct fn_time fns[512];
    size_t n;
    double unnamed;
};

static struct fn_time *model_fn(struct model *m, const char *name)
{
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->fns[i].name, name) == 0)
            return &m->fns[i];
    cr_assert_lt(m->n, 512);
    m->fns[m->n] = (struct fn_time){.name = name};
    return &m->fns[m->n++];
}

/* The address PC of process PID as the map holding it says: file offset,
 * then link-time address through the PT_LOAD headers (what the report
 * does). */
static bool resolve(const struct profile *p, const struct elf_symtab *tab, uint32_t pid,
                    uint64_t pc, uint64_t *addr)
{
    for (size_t i = p->nmaps; i-- > 0;) {
        const struct prof_map *m = &p->maps[i];
        if (m->pid == pid && pc >= m->start && pc < m->end)
            return elf_symtab_vaddr(tab, pc - m->start + m->offset, addr) == 0;
    }
    return false;
}

/* gprof names an arc's ends by the symbol at or below the address. */
static const struct elf_symbol *gprof_symbol(const struct elf_symtab *tab, uint64_t addr)
{
    if (tab->count == 0 || addr < tab->syms[0].addr)
        return NULL;
    size_t lo = 0, hi = tab->count;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (tab->syms[mid].addr <= addr)
            lo = mid;
        else
            hi = mid;
    }
    return &tab->syms[lo];
}

static const char *gprof_name(const struct elf_symtab *tab, uint64_t addr)
{
    const struct elf_symbol *sym = gprof_symbol(tab, addr);
    return sym ? sym->name : NULL;
}

/* CPU time per function: each sample's CPU delta (the thread starts at 0),
 * named with elf_symtab_lookup() as the report names it, or with GPROF_RULE
 * by the symbol at or below the address. */
static void model_times(const struct profile *p, const struct elf_symtab *tab, bool gprof_rule,
                        struct model *m)
{
    memset(m, 0, sizeof(*m));
    uint64_t prev = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        cr_assert_eq(p->samples[i].nthreads, 1);
        const struct prof_thread_sample *th = &p->samples[i].threads[0];
        cr_assert_geq(th->cpu_ns, prev, "CPU time goes backwards at sample %zu", i);
        double dt = (double)(th->cpu_ns - prev) / 1e9;
        prev = th->cpu_ns;
        uint64_t addr;
        const struct elf_symbol *sym = NULL;
        if (resolve(p, tab, th->pid, th->pc, &addr))
            sym = gprof_rule ? gprof_symbol(tab, addr) : elf_symtab_lookup(tab, addr);
        if (!sym) {
            m->unnamed += dt;
            continue;
        }
        struct fn_time *f = model_fn(m, sym->name);
        f->seconds += dt;
        f->samples++;
    }
}

static long long model_arc(const struct profile *p, const struct elf_symtab *tab,
                           const char *parent, const char *child)
{
    long long n = 0;
    for (size_t i = 0; i < p->narcs; i++) {
        uint64_t from, self;
        cr_assert(resolve(p, tab, 0, p->arcs[i].from_pc, &from));
        cr_assert(resolve(p, tab, 0, p->arcs[i].self_pc, &self));
        const char *pn = gprof_name(tab, from), *cn = gprof_name(tab, self);
        if (pn && cn && (!parent || strcmp(pn, parent) == 0) && strcmp(cn, child) == 0)
            n += (long long)p->arcs[i].count;
    }
    return n;
}

/* Our profile of GMON against gprof's reading of it with BIN.  Without
 * the binary the reader cannot know where functions end, and a bin lying
 * wholly in the padding after one is not named by the report's lookup:
 * GPROF_RULE then names addresses as gprof does. */
static void check_against_gprof(const struct profile *p, const char *bin, const char *gmon,
                                bool gprof_rule)
{
    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(bin, &tab), 0);
    struct model m;
    model_times(p, &tab, gprof_rule, &m);

    char *text = gprof_output("-p", bin, gmon);
    struct flat f;
    parse_flat(text, &f);
    cr_assert_gt(f.n, 0, "gprof printed no function:\n%s", text);
    /* Seconds as gprof prints them: two decimals. */
    for (size_t i = 0; i < f.n; i++) {
        const struct fn_row *r = &f.rows[i];
        double ours = 0;
        for (size_t k = 0; k < m.n; k++)
            if (strcmp(m.fns[k].name, r->name) == 0)
                ours = m.fns[k].seconds;
        cr_expect(fabs(ours - r->self) <= 0.005 + 1e-9, "%s: %.4f s here, gprof prints %.2f",
                  r->name, ours, r->self);
    }
    for (size_t k = 0; k < m.n; k++) {
        const struct fn_row *r = flat_row(&f, m.fns[k].name);
        cr_expect(r || m.fns[k].seconds < 0.005, "%s: %.4f s here, not in gprof's profile",
                  m.fns[k].name, m.fns[k].seconds);
    }
    cr_expect_lt(m.unnamed, 0.005, "%.4f s outside every function", m.unnamed);
    free(text);

    text = gprof_output("-q", bin, gmon);
    struct graph g;
    parse_graph(text, &g);
    cr_assert_gt(g.ncalled + g.narcs, 0, "no call counts in:\n%s", text);
    for (size_t i = 0; i < g.ncalled; i++)
        cr_expect_eq(model_arc(p, &tab, NULL, g.called[i].name), g.called[i].calls,
                     "calls of %s: %lld here, gprof %lld", g.called[i].name,
                     model_arc(p, &tab, NULL, g.called[i].name), g.called[i].calls);
    for (size_t i = 0; i < g.narcs; i++)
        cr_expect_eq(model_arc(p, &tab, g.arcs[i].parent, g.arcs[i].child), g.arcs[i].count,
                     "%s -> %s: %lld here, gprof %lld", g.arcs[i].parent, g.arcs[i].child,
                     model_arc(p, &tab, g.arcs[i].parent, g.arcs[i].child), g.arcs[i].count);
    free(text);
    elf_symtab_free(&tab);
}

/* Both ways in: with the binary, and by content with the default map. */
static void check_both_ways(const char *bin, const char *gmon)
{
    struct profile p;
    cr_assert_eq(gmon_load(gmon, bin, &p), 0);
    cr_assert_str_eq(p.format, "gmon");
    cr_assert_eq(p.nprocesses, 1);
    char *abs = realpath(bin, NULL);
    cr_expect_str_eq(p.processes[0].exe, abs);
    free(abs);
    check_against_gprof(&p, bin, gmon, false);
    profile_free(&p);

    cr_assert_eq(profile_load(gmon, &p), 0);
    cr_assert_str_eq(p.format, "gmon");
    cr_assert_eq(p.nmaps, 1);
    cr_expect_str_eq(p.maps[0].path, GMON_DEFAULT_BINARY);
    check_against_gprof(&p, bin, gmon, true);
    profile_free(&p);
}

Test(gmon, gcc_pg_pie_matches_gprof, .timeout = 120)
{
    char *dir = test_mkdtemp();
    char *bin = gmon_of_workload(dir, "callers", "-O2", "-fno-omit-frame-pointer", "1.5", NULL);
    char *gmon = test_path(dir, "gmon.out");
    check_both_ways(bin, gmon);

    /* It is a PIE: the histogram starts at address 0, not where it ran. */
    struct profile p;
    cr_assert_eq(gmon_load(gmon, bin, &p), 0);
    cr_expect_eq(p.frequency, 100);
    /* Every count of the file (however little CPU a loaded machine gave
     * the run), in samples standing for one count or more. */
    size_t len;
    char *data = test_read_file(gmon, &len);
    cr_assert_not_null(data);
    struct gmon_file g;
    cr_assert_eq(gmon_parse(gmon, data, len, NULL, 0, &g), 0);
    cr_expect_gt(g.total_counts, 0, "the run was never sampled");
    cr_expect_leq(p.nsamples, g.total_counts, "a sample stands for one count or more");
    cr_expect_eq(p.totals.samples, g.total_counts);
    uint64_t weights = 0;
    for (size_t i = 0; i < p.nsamples; i++)
        weights += prof_weight(&p.samples[i], 0);
    cr_expect_eq(weights, g.total_counts);
    gmon_file_free(&g);
    free(data);
    cr_expect_gt(p.narcs, 5);
    cr_expect_str_eq(profile_meta(&p, "gmon.layout"), "64-bit little-endian");
    profile_free(&p);
    free(gmon);
    free(bin);
    test_rmtree(dir);
    free(dir);
}

Test(gmon, gcc_pg_non_pie_matches_gprof, .timeout = 120)
{
    char *dir = test_mkdtemp();
    char *bin = gmon_of_workload(dir, "shares", "-O0", "-no-pie", "1", "1");
    char *gmon = test_path(dir, "gmon.out");
    check_both_ways(bin, gmon);
    struct profile p;
    cr_assert_eq(profile_load(gmon, &p), 0);
    /* glibc starts the histogram at the first PT_LOAD: 0x400000. */
    cr_expect_eq(p.maps[0].start, 0x400000);
    profile_free(&p);
    free(gmon);
    free(bin);
    test_rmtree(dir);
    free(dir);
}

/* --- files put together from a real one ------------------------------------ */

static unsigned char *read_all(const char *path, size_t *len)
{
    char *d = test_read_file(path, len);
    cr_assert_not_null(d, "cannot read %s", path);
    return (unsigned char *)d;
}

static void write_all(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    cr_assert_eq(fclose(f), 0);
}

/* One real gmon.out shared by the tests below (built once per test run
 * would be nicer; each test is its own process, so each builds it). */
struct real {
    char *dir, *bin, *gmon;
    unsigned char *data;
    size_t len;
};

static void real_gmon(struct real *r)
{
    r->dir = test_mkdtemp();
    r->bin = gmon_of_workload(r->dir, "callers", "-O2", "-fno-omit-frame-pointer", "0.5", NULL);
    r->gmon = test_path(r->dir, "gmon.out");
    r->data = read_all(r->gmon, &r->len);
}

static void real_free(struct real *r)
{
    test_rmtree(r->dir);
    free(r->dir);
    free(r->bin);
    free(r->gmon);
    free(r->data);
}

Test(gmon, repeated_records_are_unioned_as_gprof_does, .timeout = 120)
{
    struct real r;
    real_gmon(&r);
    /* Every record twice: gprof adds histograms of the same range and arcs
     * of the same pair. */
    size_t body = r.len - GMON_HEADER_SIZE;
    size_t len = r.len + body;
    unsigned char *twice = malloc(len);
    memcpy(twice, r.data, r.len);
    memcpy(twice + r.len, r.data + GMON_HEADER_SIZE, body);
    char *path = test_path(r.dir, "twice.out");
    write_all(path, twice, len);

    struct profile once, both;
    cr_assert_eq(gmon_load(r.gmon, r.bin, &once), 0);
    cr_assert_eq(gmon_load(path, r.bin, &both), 0);
    cr_expect_eq(both.totals.samples, 2 * once.totals.samples);
    cr_assert_eq(both.narcs, once.narcs);
    for (size_t i = 0; i < once.narcs; i++)
        cr_expect_eq(both.arcs[i].count, 2 * once.arcs[i].count);
    check_against_gprof(&both, r.bin, path, false);
    profile_free(&once);
    profile_free(&both);
    free(twice);
    free(path);
    real_free(&r);
}

static void put_le(unsigned char *b, uint64_t v, unsigned size)
{
    for (unsigned i = 0; i < size; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

Test(gmon, basic_block_records_are_read_and_kept_out, .timeout = 120)
{
    struct real r;
    real_gmon(&r);
    /* Two blocks, one address twice: they add up to two distinct blocks. */
    unsigned char bb[1 + 4 + 3 * 16];
    bb[0] = GMON_TAG_BB;
    put_le(bb + 1, 3, 4);
    put_le(bb + 5, 0x1500, 8);
    put_le(bb + 13, 7, 8);
    put_le(bb + 21, 0x1550, 8);
    put_le(bb + 29, 1, 8);
    put_le(bb + 37, 0x1500, 8);
    put_le(bb + 45, 5, 8);
    size_t len = r.len + sizeof(bb);
    unsigned char *with = malloc(len);
    memcpy(with, r.data, r.len);
    memcpy(with + r.len, bb, sizeof(bb));
    char *path = test_path(r.dir, "bb.out");
    write_all(path, with, len);

    struct gmon_file g;
    cr_assert_eq(gmon_parse(path, with, len, NULL, 0, &g), 0);
    cr_assert_eq(g.nbbs, 2);
    cr_expect_eq(g.bbs[0].addr, 0x1500);
    cr_expect_eq(g.bbs[0].count, 12);
    cr_expect_eq(g.bbs[1].count, 1);
    gmon_file_free(&g);

    struct profile plain, p;
    cr_assert_eq(gmon_load(r.gmon, r.bin, &plain), 0);
    cr_assert_eq(gmon_load(path, r.bin, &p), 0);
    cr_expect_eq(p.nsamples, plain.nsamples);
    cr_expect_eq(p.narcs, plain.narcs);
    cr_expect_str_eq(profile_meta(&p, "gmon.basic_blocks"), "2");
    /* gprof reads it too (and says it ignores the blocks). */
    check_against_gprof(&p, r.bin, path, false);
    profile_free(&plain);
    profile_free(&p);
    free(with);
    free(path);
    real_free(&r);
}

/* --- hostile input ------------------------------------------------------------ */

/* Run the reader on DATA with stderr captured; returns its rc and the
 * message in MSG. */
static int parse_captured(const char *name, const void *data, size_t len, uint64_t max, char *msg,
                          size_t msg_size)
{
    fflush(stderr);
    int saved = dup(2);
    FILE *tmp = tmpfile();
    cr_assert_not_null(tmp);
    dup2(fileno(tmp), 2);
    struct gmon_file g;
    int rc = gmon_parse(name, data, len, NULL, max, &g);
    struct gmon_read_options opts = {.max_counts = max};
    struct profile p;
    int lrc = gmon_load_buffer_opts(name, data, len, &opts, &p);
    cr_expect_eq(rc, lrc, "gmon_parse and gmon_load_buffer disagree");
    if (rc == 0)
        gmon_file_free(&g);
    profile_free(&p);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    size_t n = fread(msg, 1, msg_size - 1, tmp);
    msg[n] = '\0';
    fclose(tmp);
    return rc;
}

/* The record boundaries of a well-formed 64-bit little-endian file. */
static size_t boundaries(const unsigned char *d, size_t len, size_t *at, size_t max)
{
    size_t n = 0, pos = GMON_HEADER_SIZE;
    at[n++] = pos;
    while (pos < len && n < max) {
        uint8_t tag = d[pos];
        if (tag == GMON_TAG_HIST) {
            uint32_t bins = (uint32_t)d[pos + 17] | (uint32_t)d[pos + 18] << 8 |
                            (uint32_t)d[pos + 19] << 16 | (uint32_t)d[pos + 20] << 24;
            pos += 1 + 40 + 2 * (size_t)bins;
        } else {
            cr_assert_eq(tag, GMON_TAG_ARC);
            pos += 1 + 20;
        }
        at[n++] = pos;
    }
    cr_assert_eq(pos, len);
    return n;
}

Test(gmon, every_truncation_fails_cleanly_or_ends_on_a_record, .timeout = 120)
{
    struct real r;
    real_gmon(&r);
    size_t at[4096];
    size_t nat = boundaries(r.data, r.len, at, 4096);
    size_t failed = 0;
    for (size_t cut = 0; cut < r.len; cut++) {
        /* Exactly CUT bytes, so a sanitizer sees any read past them. */
        unsigned char *d = malloc(cut ? cut : 1);
        memcpy(d, r.data, cut);
        char msg[1024];
        int rc = parse_captured("cut.out", d, cut, 0, msg, sizeof(msg));
        bool boundary = false;
        for (size_t i = 0; i < nat; i++)
            boundary |= at[i] == cut;
        if (rc == 0) {
            cr_expect(boundary, "a file cut at %zu (inside a record) loads", cut);
        } else {
            failed++;
            cr_expect(!boundary || cut < GMON_HEADER_SIZE, "cut at record boundary %zu fails: %s",
                      cut, msg);
            char want[64];
            snprintf(want, sizeof(want), "cut.out: offset ");
            cr_expect_not_null(strstr(msg, want), "cut at %zu: %s", cut, msg);
        }
        free(d);
    }
    cr_expect_gt(failed, r.len / 2);
    real_free(&r);
}

/* A synthetic file: 64-bit little-endian unless changed. */
struct synth {
    unsigned char d[4096];
    size_t len;
    unsigned a; /* address size */
    bool be;
};

static void put(struct synth *s, size_t at, uint64_t v, unsigned size)
{
    for (unsigned i = 0; i < size; i++)
        s->d[at + i] = (unsigned char)(v >> (8 * (s->be ? size - 1 - i : i)));
}

static void synth_header_as(struct synth *s, uint32_t version, unsigned a, bool be)
{
    memset(s, 0, sizeof(*s));
    s->a = a;
    s->be = be;
    memcpy(s->d, "gmon", 4);
    put(s, 4, version, 4);
    s->len = GMON_HEADER_SIZE;
}

static void synth_header(struct synth *s, uint32_t version)
{
    synth_header_as(s, version, 8, false);
}

/* Returns the offset of the record's tag; bins follow its 2a + 25 bytes. */
static size_t synth_hist(struct synth *s, uint64_t low, uint64_t high, uint32_t bins, uint32_t rate,
                         const char *dim, uint16_t fill)
{
    size_t at = s->len, a = s->a;
    s->d[at] = GMON_TAG_HIST;
    put(s, at + 1, low, s->a);
    put(s, at + 1 + a, high, s->a);
    put(s, at + 1 + 2 * a, bins, 4);
    put(s, at + 5 + 2 * a, rate, 4);
    memset(s->d + at + 9 + 2 * a, 0, 16);
    memcpy(s->d + at + 9 + 2 * a, dim, strlen(dim));
    s->d[at + 24 + 2 * a] = (unsigned char)dim[0];
    s->len += 25 + 2 * a;
    for (uint32_t i = 0; i < bins && s->len + 2 <= sizeof(s->d); i++) {
        put(s, s->len, fill, 2);
        s->len += 2;
    }
    return at;
}

static size_t synth_arc(struct synth *s, uint64_t from, uint64_t self, uint32_t count)
{
    size_t at = s->len;
    s->d[at] = GMON_TAG_ARC;
    put(s, at + 1, from, s->a);
    put(s, at + 1 + s->a, self, s->a);
    put(s, at + 1 + 2 * s->a, count, 4);
    s->len += 5 + 2 * s->a;
    return at;
}

static void expect_error(const struct synth *s, uint64_t max, size_t offset, const char *what)
{
    char msg[1024];
    int rc = parse_captured("bad.out", s->d, s->len, max, msg, sizeof(msg));
    cr_expect_eq(rc, -1, "accepted: %s", what);
    char want[64];
    snprintf(want, sizeof(want), "bad.out: offset %zu: ", offset);
    cr_expect_not_null(strstr(msg, want), "%s: wanted \"%s...\", got: %s", what, want, msg);
    cr_expect_not_null(strstr(msg, what), "wanted \"%s\" in: %s", what, msg);
}

Test(gmon, hostile_histograms_name_file_and_offset)
{
    struct synth s;
    synth_header(&s, 1);
    size_t at = synth_hist(&s, 0x1000, 0x2000, 0, 100, "seconds", 0);
    expect_error(&s, 0, at + 17, "no bins");

    synth_header(&s, 1);
    at = synth_hist(&s, 0x2000, 0x1000, 4, 100, "seconds", 1);
    expect_error(&s, 0, at + 1, "inverted");

    synth_header(&s, 1);
    at = synth_hist(&s, 0x2000, 0x2000, 4, 100, "seconds", 1);
    expect_error(&s, 0, at + 1, "empty histogram range");

    /* Absurd bin counts: refused against the bytes present, not allocated. */
    synth_header(&s, 1);
    at = synth_hist(&s, 0x1000, 0x2000, 0xffffffffu, 100, "seconds", 1);
    expect_error(&s, 0, at + 17, "bins needs");

    synth_header(&s, 1);
    at = synth_hist(&s, 0x1000, 0x2000, 16, 0, "seconds", 1);
    expect_error(&s, 0, at + 21, "rate of 0");

    /* Ranges that overlap without being the same. */
    synth_header(&s, 1);
    synth_hist(&s, 0x1000, 0x2000, 16, 100, "seconds", 1);
    at = synth_hist(&s, 0x1800, 0x2800, 16, 100, "seconds", 1);
    expect_error(&s, 0, at, "overlap");

    synth_header(&s, 1);
    at = synth_hist(&s, 0x1000, 0x5000, 64, 100, "seconds", 1);
    synth_hist(&s, 0x1000, 0x2000, 16, 100, "seconds", 1);
    expect_error(&s, 0, at + 1 + 40 + 128, "overlap");

    /* One range containing later ones, which do not touch each other. */
    synth_header(&s, 1);
    synth_hist(&s, 0x3000, 0x3400, 4, 100, "seconds", 1);
    synth_hist(&s, 0x1000, 0x1400, 4, 100, "seconds", 1);
    at = synth_hist(&s, 0x0000, 0x8000, 128, 100, "seconds", 1);
    expect_error(&s, 0, at, "overlap");

    synth_header(&s, 1);
    synth_hist(&s, 0x1000, 0x2000, 16, 100, "seconds", 1);
    at = synth_hist(&s, 0x3000, 0x4000, 32, 100, "seconds", 1);
    expect_error(&s, 0, at + 17, "scale");

    synth_header(&s, 1);
    synth_hist(&s, 0x1000, 0x2000, 16, 100, "seconds", 1);
    at = synth_hist(&s, 0x3000, 0x4000, 16, 100, "cycles", 1);
    expect_error(&s, 0, at + 25, "dimension");

    /* More counts than we load. */
    synth_header(&s, 1);
    at = synth_hist(&s, 0x1000, 0x2000, 16, 100, "seconds", 1000);
    expect_error(&s, 15999, at, "counts exceed 15999 in all");
}

Test(gmon, hostile_headers_and_records_name_file_and_offset)
{
    struct synth s;
    synth_header(&s, 2);
    expect_error(&s, 0, 4, "version 2");
    synth_header(&s, 0x1ffff);
    expect_error(&s, 0, 4, "version");

    synth_header(&s, 1);
    s.len = 12;
    expect_error(&s, 0, 12, "header");

    synth_header(&s, 1);
    memcpy(s.d, "gmoN", 4);
    expect_error(&s, 0, 0, "gmon");

    synth_header(&s, 1);
    s.d[s.len++] = 7;
    expect_error(&s, 0, GMON_HEADER_SIZE, "tag 7");

    synth_header(&s, 1);
    size_t at = synth_arc(&s, 0x1100, 0x1200, 3);
    s.len -= 5;
    expect_error(&s, 0, at, "arc record cut short");

    /* A basic-block count far beyond the file. */
    synth_header(&s, 1);
    s.d[s.len] = GMON_TAG_BB;
    put_le(s.d + s.len + 1, 0x10000000, 4);
    s.len += 5;
    expect_error(&s, 0, GMON_HEADER_SIZE + 1, "basic blocks need");
}

/* 8 bins of 4 bytes at 0x1000, bin 2 holding 3 counts; three arcs, two of
 * one pair. */
static void synth_small(struct synth *s, unsigned a, bool be)
{
    synth_header_as(s, 1, a, be);
    size_t at = synth_hist(s, 0x1000, 0x1020, 8, 1000, "seconds", 0);
    put(s, at + 25 + 2 * a + 2 * 2, 3, 2);
    synth_arc(s, 0x1104, 0x1010, 5);
    synth_arc(s, 0x1200, 0x1010, 1);
    synth_arc(s, 0x1104, 0x1010, 2);
}

Test(gmon, synthetic_files_of_any_layout_spread_bins_and_merge_arcs)
{
    const struct {
        unsigned a;
        bool be;
        const char *layout;
    } cases[] = {
        {8, false, "64-bit little-endian"},
        {8, true, "64-bit big-endian"},
        {4, false, "32-bit little-endian"},
        {4, true, "32-bit big-endian"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        struct synth s;
        synth_small(&s, cases[c].a, cases[c].be);
        struct profile p;
        cr_assert_eq(gmon_load_buffer("s.out", s.d, s.len, &p), 0, "%s", cases[c].layout);
        cr_expect_str_eq(profile_meta(&p, "gmon.layout"), cases[c].layout);
        /* Spread over the bin's two 2-byte units (2 counts, then 1: one
         * sample per unit standing for its counts, the very first count a
         * sample of its own).  gprof credits each unit half the bin's
         * 3 ms, 1.5 ms, whatever the counts' whole spread; the first
         * unit's two samples share its credit. */
        cr_assert_eq(p.nsamples, 3, "%s", cases[c].layout);
        const uint64_t pcs[] = {0x1009, 0x1009, 0x100b}; /* a unit's last byte */
        const uint64_t cpu[] = {750000, 1500000, 3000000};
        for (size_t i = 0; i < 3; i++) {
            cr_expect_eq(p.samples[i].threads[0].pc, pcs[i]);
            cr_expect_eq(prof_weight(&p.samples[i], 0), 1);
            cr_expect_eq(p.samples[i].threads[0].cpu_ns, cpu[i]);
        }
        cr_expect_eq(p.frequency, 1000);
        cr_expect_eq(p.totals.samples, 3);
        cr_assert_eq(p.narcs, 2, "%s", cases[c].layout);
        cr_expect_eq(p.arcs[0].from_pc, 0x1104);
        cr_expect_eq(p.arcs[0].self_pc, 0x1010);
        cr_expect_eq(p.arcs[0].count, 7);
        cr_expect_eq(p.arcs[1].from_pc, 0x1200);
        cr_expect_eq(p.arcs[1].count, 1);
        cr_expect_eq(p.maps[0].start, 0x1000);
        profile_free(&p);
    }
}

/* Memory and time follow the file, not its counts: 24 records of one
 * range, every bin full (100 million counts, 11 days of CPU at 100 Hz, in
 * 4 KB), are a few samples per bin with the exact totals. */
Test(gmon, huge_counts_cost_nothing_and_add_up_exactly)
{
    test_limit_address_space();
    struct synth s;
    synth_header(&s, 1);
    for (int r = 0; r < 24; r++)
        synth_hist(&s, 0x1000, 0x1000 + 64 * 4, 64, 100, "seconds", 65535);
    size_t before = test_heap_in_use();
    struct profile p;
    cr_assert_eq(gmon_load_buffer("big.out", s.d, s.len, &p), 0);
    cr_expect_lt(test_heap_in_use() - before, 1u << 20, "a %zu-byte file kept %zu bytes", s.len,
                 test_heap_in_use() - before);
    const uint64_t counts = 64ull * 65535 * 24;
    cr_expect_leq(p.nsamples, 2 * 64 + 1, "a sample per unit of each bin (and the first count)");
    uint64_t weights = 0;
    for (size_t i = 0; i < p.nsamples; i++)
        weights += prof_weight(&p.samples[i], 0);
    cr_expect_eq(weights, counts);
    cr_expect_eq(p.totals.samples, counts);
    cr_expect_eq(p.samples[p.nsamples - 1].threads[0].cpu_ns, counts * 10000000,
                 "every count 10 ms of CPU");
    profile_free(&p);
}

/* Two adjacent functions of the running test binary, each at least 4 units
 * long as gprof sees them (to the next symbol): *F is at index I, G at
 * I + 1. */
static size_t two_adjacent_functions(const struct elf_symtab *tab)
{
    for (size_t i = 0; i + 2 < tab->count; i++) {
        uint64_t a = tab->syms[i].addr / 2, b = tab->syms[i + 1].addr / 2,
                 c = tab->syms[i + 2].addr / 2;
        if (b - a >= 4 && c - b >= 4 && (i == 0 || tab->syms[i - 1].addr / 2 < a) &&
            tab->syms[i].size > 0 && tab->syms[i + 1].size > 0)
            return i;
    }
    cr_assert_fail("no two adjacent functions in the test binary");
    return 0;
}

/* A bin whose range holds the start of a function: gprof credits each
 * function the bin overlaps its share of the bin's time (overlap / bin
 * width), whatever the counts (binutils gprof/hist.c,
 * hist_assign_samples).  One bin of 2 units, one in each function. */
Test(gmon, a_bin_straddling_two_functions_is_split_as_gprof_splits_it)
{
    char *exe = realpath("/proc/self/exe", NULL);
    cr_assert_not_null(exe);
    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(exe, &tab), 0);
    size_t i = two_adjacent_functions(&tab);
    const char *f = tab.syms[i].name, *g = tab.syms[i + 1].name;
    uint64_t start = tab.syms[i + 1].addr / 2; /* g's unit */
    static const uint16_t counts[] = {1, 2, 3, 7};
    for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
        struct synth s;
        synth_header(&s, 1);
        size_t at = synth_hist(&s, 2 * (start - 1), 2 * (start + 1), 1, 100, "seconds", 0);
        put(&s, at + 41, counts[c], 2);
        struct gmon_read_options opts = {.binary = exe};
        struct profile p;
        cr_assert_eq(gmon_load_buffer_opts("straddle.out", s.d, s.len, &opts, &p), 0);
        struct model m;
        model_times(&p, &tab, false, &m);
        /* Half the bin each: half of its counts' 10 ms. */
        double want = counts[c] * 0.010 / 2;
        cr_expect_float_eq(model_fn(&m, f)->seconds, want, 1e-9, "%u counts: %s %.4f s, want %.4f",
                           counts[c], f, model_fn(&m, f)->seconds, want);
        cr_expect_float_eq(model_fn(&m, g)->seconds, want, 1e-9, "%u counts: %s %.4f s, want %.4f",
                           counts[c], g, model_fn(&m, g)->seconds, want);
        cr_expect_float_eq(m.unnamed, 0, 1e-12);
        /* Counts stay whole: spread over both units, one at least each. */
        uint64_t weights = 0;
        for (size_t k = 0; k < p.nsamples; k++)
            weights += prof_weight(&p.samples[k], 0);
        cr_expect_eq(weights, counts[c] < 2 ? 2 : counts[c], "%u counts: %" PRIu64 " in samples",
                     counts[c], weights);
        cr_expect_eq(p.totals.samples, counts[c]);
        profile_free(&p);
    }
    elf_symtab_free(&tab);
    free(exe);
}

Test(gmon, uneven_bins_credit_as_gprof_does)
{
    /* 3 bins over 10 bytes (5 units): gprof's bins are 1.67 units, cut at
     * units 0, 1, 3, 5.  Bin 1 (2 units) holds 2 counts: one per unit, each
     * credited 2 / 1.67 = 1.2 counts of 10 ms. */
    struct synth s;
    synth_header(&s, 1);
    size_t at = synth_hist(&s, 0x2000, 0x200a, 3, 100, "seconds", 0);
    put(&s, at + 41 + 2, 2, 2);
    struct profile p;
    cr_assert_eq(gmon_load_buffer("u.out", s.d, s.len, &p), 0);
    cr_assert_eq(p.nsamples, 2);
    /* Each at its unit's last byte, which names the unit as gprof does. */
    cr_expect_eq(p.samples[0].threads[0].pc, 0x2003);
    cr_expect_eq(p.samples[1].threads[0].pc, 0x2005);
    cr_expect_eq(p.samples[0].threads[0].cpu_ns, 12000000);
    cr_expect_eq(p.samples[1].threads[0].cpu_ns, 24000000);
    profile_free(&p);

    /* Another dimension than seconds: samples, but no CPU time. */
    synth_header(&s, 1);
    at = synth_hist(&s, 0x2000, 0x2010, 4, 1, "i-cache misses", 2);
    cr_assert_eq(gmon_load_buffer("d.out", s.d, s.len, &p), 0);
    cr_expect_eq(p.nsamples, 8);
    for (size_t i = 0; i < p.nsamples; i++)
        cr_expect_eq(p.samples[i].threads[0].cpu_ns, 0);
    cr_expect_str_eq(profile_meta(&p, "gmon.dimension"), "i-cache misses");
    profile_free(&p);
}

/* gprof gives a 2-byte unit to the function whose address halved is at or
 * below it: a function starting at an odd address owns the unit holding
 * its first byte and the byte before it (the last of the function before).
 * A real -O1 build has such starts; counts put only in the bins holding
 * them must be credited as gprof credits them (before: to the function
 * before, as a unit was read at its even byte). */
Test(gmon, a_unit_where_a_function_starts_at_an_odd_address_is_that_functions, .timeout = 120)
{
    char *dir = test_mkdtemp();
    char *bin = gmon_of_workload(dir, "shares", "-O1", "-fno-omit-frame-pointer", "1", "0.3");
    char *gmon = test_path(dir, "gmon.out");
    size_t len;
    unsigned char *d = read_all(gmon, &len);
    cr_assert_eq(d[GMON_HEADER_SIZE], GMON_TAG_HIST, "the first record is not the histogram");
    const unsigned char *h = d + GMON_HEADER_SIZE + 1;
    uint64_t low = 0, high = 0;
    uint32_t nbins = 0;
    for (int i = 7; i >= 0; i--) {
        low = low << 8 | h[i];
        high = high << 8 | h[8 + i];
    }
    for (int i = 3; i >= 0; i--)
        nbins = nbins << 8 | h[16 + i];
    unsigned char *bins = d + GMON_HEADER_SIZE + 1 + 16 + 8 + 16;
    cr_assert_leq((size_t)(bins - d) + 2 * (size_t)nbins, len);
    memset(bins, 0, 2 * (size_t)nbins);

    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(bin, &tab), 0);
    const double scale = (double)(high / 2 - low / 2) / nbins;
    size_t odd = 0;
    for (size_t k = 0; k < tab.count; k++) {
        uint64_t a = tab.syms[k].addr, unit = a / 2;
        if (a % 2 == 0 || a < low || a >= high)
            continue;
        uint32_t i = (uint32_t)((double)(unit - low / 2) / scale);
        while (i > 0 && low / 2 + (uint64_t)(scale * i) > unit)
            i--;
        while (i + 1 < nbins && low / 2 + (uint64_t)(scale * (i + 1)) <= unit)
            i++;
        put_le(bins + 2 * (size_t)i, 100, 2);
        odd++;
    }
    elf_symtab_free(&tab);
    cr_assert_geq(odd, 3, "only %zu functions start at an odd address: the test proves nothing",
                  odd);
    char *path = test_path(dir, "odd.out");
    write_all(path, d, len);
    struct profile p;
    cr_assert_eq(gmon_load(path, bin, &p), 0);
    check_against_gprof(&p, bin, path, false);
    profile_free(&p);
    free(path);
    free(d);
    free(gmon);
    free(bin);
    test_rmtree(dir);
    free(dir);
}

/* --- the writer -------------------------------------------------------------- */

static void gprof_flat(const char *bin, const char *gmon, struct flat *f)
{
    char *text = gprof_output("-p", bin, gmon);
    parse_flat(text, f);
    free(text);
}

Test(gmon, written_back_gprof_prints_the_same, .timeout = 120)
{
    struct real r;
    real_gmon(&r);
    struct profile p;
    cr_assert_eq(profile_load(r.gmon, &p), 0);
    char *out = test_path(r.dir, "again.gmon");
    struct gmon_write_options o = {.binary = r.bin};
    cr_assert_eq(gmon_write(&p, out, &o), 0);
    profile_free(&p);

    struct flat a, b;
    gprof_flat(r.bin, r.gmon, &a);
    gprof_flat(r.bin, out, &b);
    cr_assert_gt(a.n, 0);
    for (size_t i = 0; i < a.n; i++) {
        const struct fn_row *w = flat_row(&b, a.rows[i].name);
        cr_assert_not_null(w, "%s is gone", a.rows[i].name);
        cr_expect(fabs(w->self - a.rows[i].self) <= 0.011, "%s: %.2f s, was %.2f", w->name, w->self,
                  a.rows[i].self);
        cr_expect_eq(w->calls, a.rows[i].calls, "%s: %lld calls, was %lld", w->name, w->calls,
                     a.rows[i].calls);
    }
    free(out);
    real_free(&r);
}

Test(gmon, counts_beyond_16_bits_continue_in_more_records, .timeout = 120)
{
    struct real r;
    real_gmon(&r);
    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(r.bin, &tab), 0);
    uint64_t hot = 0;
    for (size_t i = 0; i < tab.count; i++)
        if (strcmp(tab.syms[i].name, "hot") == 0)
            hot = tab.syms[i].addr;
    cr_assert_neq(hot, 0);
    elf_symtab_free(&tab);

    /* 70000 samples of 10 ms at one address of hot(). */
    struct profile p;
    cr_assert_eq(gmon_load(r.gmon, r.bin, &p), 0);
    for (size_t i = 0; i < p.nsamples; i++)
        profile_sample_release(&p.samples[i]);
    free(p.samples);
    p.nsamples = 70000;
    p.samples = calloc(p.nsamples, sizeof(*p.samples));
    for (size_t i = 0; i < p.nsamples; i++) {
        struct prof_thread_sample *th = calloc(1, sizeof(*th));
        *th =
            (struct prof_thread_sample){.pc = hot + 4, .cpu_ns = (i + 1) * 10000000, .syscall = -1};
        p.samples[i] =
            (struct prof_sample){.time_ns = (i + 1) * 10000000, .nthreads = 1, .threads = th};
    }
    char *out = test_path(r.dir, "big.gmon");
    struct gmon_write_options o = {.binary = r.bin};
    cr_assert_eq(gmon_write(&p, out, &o), 0);
    profile_free(&p);

    size_t len;
    unsigned char *d = read_all(out, &len);
    struct gmon_file g;
    cr_assert_eq(gmon_parse(out, d, len, NULL, 0, &g), 0);
    cr_assert_eq(g.nhists, 1);
    cr_expect_eq(g.hists[0].nrecs, 2);
    cr_expect_eq(g.total_counts, 70000);
    gmon_file_free(&g);
    free(d);
    struct flat f;
    gprof_flat(r.bin, out, &f);
    const struct fn_row *row = flat_row(&f, "hot");
    cr_assert_not_null(row);
    cr_expect(fabs(row->self - 700.0) < 0.01, "hot: %.2f s", row->self);
    free(out);
    real_free(&r);
}

Test(gmon, recorded_profile_reads_in_gprof_with_its_shares, .timeout = 180)
{
    char *ptprof = build_ptprof();
    char *callers = build_workload("callers");
    if (access(ptprof, X_OK) != 0 || access(callers, X_OK) != 0)
        cr_skip_test("%s or %s is not built", ptprof, callers);
    char *dir = test_mkdtemp();
    char *rec = test_path(dir, "rec.data");
    const char *argv[] = {ptprof, "record", "-f", "1000", "-o", rec, "--", callers, "2", NULL};
    struct spawn_result res;
    run_ok(argv, NULL, &res);
    spawn_result_free(&res);

    struct profile p;
    cr_assert_eq(profile_load(rec, &p), 0);
    char *out = test_path(dir, "rec.gmon");
    cr_assert_eq(gmon_write(&p, out, NULL), 0, "the executable is found from the maps");

    /* The report's CPU time per function of the executable (column 3 of
     * the CSV: self cpu_time, seconds); gprof's histogram holds only that
     * executable. */
    const char *rargv[] = {ptprof, "report",           "--format", "csv",
                           "-k",   "binary,procedure", rec,        NULL};
    struct spawn_result rep;
    run_ok(rargv, NULL, &rep);
    char names[64][128];
    double secs[64];
    size_t nrows = 0;
    double exe_s = 0;
    char *save = NULL;
    for (char *line = strtok_r(rep.out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char fn[128];
        double cpu;
        if (strncmp(line, "callers:", 8) != 0 || nrows == 64)
            continue;
        if (sscanf(line + 8, "%127[^,],%*[^,],%lf", fn, &cpu) != 2)
            continue;
        snprintf(names[nrows], sizeof(names[nrows]), "%s", fn);
        secs[nrows++] = cpu;
        exe_s += cpu;
    }
    spawn_result_free(&rep);
    cr_assert_gt(exe_s, 0);

    struct flat f;
    gprof_flat(callers, out, &f);
    cr_assert_geq(f.n, 3, "gprof lists %zu functions", f.n);
    size_t checked = 0;
    for (size_t i = 0; i < nrows; i++) {
        double share = 100.0 * secs[i] / exe_s;
        if (share < 3)
            continue;
        const struct fn_row *g = flat_row(&f, names[i]);
        cr_assert_not_null(g, "%s (%.1f%%) is not in gprof's profile", names[i], share);
        cr_expect(fabs(g->percent - share) <= 1.0, "%s: %.2f%% in gprof, %.2f%% here", names[i],
                  g->percent, share);
        checked++;
    }
    cr_expect_geq(checked, 2, "hot and weigh at least");

    /* The call graph estimated from the stacks: hot is reached through
     * via_a on 7 calls out of 10. */
    char *text = gprof_output("-q", callers, out);
    struct graph g;
    parse_graph(text, &g);
    long long a = 0, b = 0;
    for (size_t i = 0; i < g.narcs; i++) {
        if (strcmp(g.arcs[i].child, "hot") != 0)
            continue;
        if (strcmp(g.arcs[i].parent, "via_a") == 0)
            a = g.arcs[i].count;
        if (strcmp(g.arcs[i].parent, "via_b") == 0)
            b = g.arcs[i].count;
    }
    cr_assert_gt(a + b, 100, "via_a -> hot %lld, via_b -> hot %lld in:\n%s", a, b, text);
    double ratio = (double)a / (double)(a + b);
    cr_expect(ratio > 0.6 && ratio < 0.8, "via_a's share of hot's callers: %.2f", ratio);
    free(text);

    profile_free(&p);
    free(out);
    free(rec);
    test_rmtree(dir);
    free(dir);
    free(ptprof);
    free(callers);
}
