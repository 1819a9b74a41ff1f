/*
 * test_pprof.c - pprof's profile.proto (interop/pprof.h,
 * interop/pprof_write.h): files made here with protobuf-c read back with the
 * values ptprof's metrics give (samples, CPU and wall time, energy, inline
 * frames, threads from labels), our writer's output decoded by protobuf-c,
 * by protoc and by go tool pprof, detection against every other format's
 * corpus, damaged and hostile files (clean errors with offsets), and the
 * kept fuzz corpus replayed.  Real recordings and real Go and gperftools
 * files are in tests/e2e/test_pprof.c.
 */
#include "../lib/corpus.h"
#include "../lib/spawn.h"
#include "analyze/metrics.h"
#include "format/load.h"
#include "interop/pprof.h"
#include "interop/pprof_wire.h"
#include "export/pprof_write.h"
#include "symbol/symbolizer.h"

#include "pprof.pb-c.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef Perftools__Profiles__Profile PbProfile;

#define MS 1000000ll

/* --- files made with protobuf-c ---------------------------------------------- */

struct crafted_sample {
    const uint64_t *locs;
    size_t nlocs;
    int64_t count, cpu_ns, wall_ns, energy_uj;
    int64_t pid, tid; /* -1: no label */
    const char *thread;
};

struct builder {
    PbProfile p;
    char *strings[128];
    ProtobufCBinaryData bytes[128]; /* the string table is bytes (pprof.proto) */
    size_t nstrings;
    Perftools__Profiles__ValueType types[4], *type_ptrs[4], period;
    Perftools__Profiles__Function funcs[8], *func_ptrs[8];
    Perftools__Profiles__Line lines[16], *line_ptrs[16];
    Perftools__Profiles__Location locs[8], *loc_ptrs[8];
    Perftools__Profiles__Mapping maps[2], *map_ptrs[2];
    Perftools__Profiles__Sample samples[16], *sample_ptrs[16];
    Perftools__Profiles__Label labels[48], *label_ptrs[48];
    uint64_t loc_ids[16][8];
    int64_t values[16][4];
};

static int64_t s_(struct builder *b, const char *s)
{
    for (size_t i = 0; i < b->nstrings; i++)
        if (strcmp(b->strings[i], s) == 0)
            return (int64_t)i;
    cr_assert_lt(b->nstrings, 128);
    b->strings[b->nstrings] = (char *)s;
    return (int64_t)b->nstrings++;
}

/* Functions: 1 main, 2 work (mangled _Z4workv), 3 inner (inlined into
 * work), 4 leaf.  Locations: 1 at 0x401000 = inner:10 inlined in work:20,
 * 2 at 0x402000 = main:5, 3 at 0x403000 = leaf:7. */
static const char *const fn_names[] = {"main", "work", "inner", "leaf"};
static const uint64_t L_INNER = 1, L_MAIN = 2, L_LEAF = 3;
static const uint64_t loc_addr[] = {0, 0x401000, 0x402000, 0x403000};

static void finish_strings(struct builder *b)
{
    for (size_t i = 0; i < b->nstrings; i++)
        b->bytes[i] = (ProtobufCBinaryData){strlen(b->strings[i]), (uint8_t *)b->strings[i]};
    b->p.n_string_table = b->nstrings;
    b->p.string_table = b->bytes;
}

static void build(struct builder *b, const struct crafted_sample *cs, size_t n, bool energy)
{
    memset(b, 0, sizeof(*b));
    perftools__profiles__profile__init(&b->p);
    s_(b, "");
    static const char *const tnames[4][2] = {{"samples", "count"},
                                             {"cpu", "nanoseconds"},
                                             {"wall", "nanoseconds"},
                                             {"energy", "microjoules"}};
    size_t ntypes = energy ? 4 : 3;
    for (size_t i = 0; i < ntypes; i++) {
        perftools__profiles__value_type__init(&b->types[i]);
        b->types[i].type = s_(b, tnames[i][0]);
        b->types[i].unit = s_(b, tnames[i][1]);
        b->type_ptrs[i] = &b->types[i];
    }
    b->p.n_sample_type = ntypes;
    b->p.sample_type = b->type_ptrs;
    perftools__profiles__value_type__init(&b->period);
    b->period.type = s_(b, "cpu");
    b->period.unit = s_(b, "nanoseconds");
    b->p.period_type = &b->period;
    b->p.period = 10 * MS;
    b->p.time_nanos = 1700000000000000000ll;
    b->p.duration_nanos = 5000 * MS;
    b->p.default_sample_type = s_(b, "cpu");

    perftools__profiles__mapping__init(&b->maps[0]);
    b->maps[0].id = 1;
    b->maps[0].memory_start = 0x400000;
    b->maps[0].memory_limit = 0x500000;
    b->maps[0].filename = s_(b, "/opt/app/bin/app");
    b->maps[0].build_id = s_(b, "0123456789abcdef0123456789abcdef01234567");
    b->maps[0].has_functions = true;
    b->map_ptrs[0] = &b->maps[0];
    b->p.n_mapping = 1;
    b->p.mapping = b->map_ptrs;

    for (size_t i = 0; i < 4; i++) {
        perftools__profiles__function__init(&b->funcs[i]);
        b->funcs[i].id = i + 1;
        b->funcs[i].name = s_(b, fn_names[i]);
        b->funcs[i].system_name = s_(b, i == 1 ? "_Z4workv" : fn_names[i]);
        b->funcs[i].filename = s_(b, "app.c");
        b->func_ptrs[i] = &b->funcs[i];
    }
    b->p.n_function = 4;
    b->p.function = b->func_ptrs;

    static const struct {
        uint64_t fn;
        int64_t line;
    } lines[] = {{3, 10}, {2, 20}, {1, 5}, {4, 7}};
    for (size_t i = 0; i < 4; i++) {
        perftools__profiles__line__init(&b->lines[i]);
        b->lines[i].function_id = lines[i].fn;
        b->lines[i].line = lines[i].line;
        b->line_ptrs[i] = &b->lines[i];
    }
    static const size_t first_line[] = {0, 2, 3}, nlines[] = {2, 1, 1};
    for (size_t i = 0; i < 3; i++) {
        perftools__profiles__location__init(&b->locs[i]);
        b->locs[i].id = i + 1;
        b->locs[i].mapping_id = 1;
        b->locs[i].address = loc_addr[i + 1];
        b->locs[i].n_line = nlines[i];
        b->locs[i].line = b->line_ptrs + first_line[i];
        b->loc_ptrs[i] = &b->locs[i];
    }
    b->p.n_location = 3;
    b->p.location = b->loc_ptrs;

    size_t nl = 0;
    cr_assert_leq(n, 16);
    for (size_t i = 0; i < n; i++) {
        Perftools__Profiles__Sample *s = &b->samples[i];
        perftools__profiles__sample__init(s);
        if (cs[i].nlocs)
            memcpy(b->loc_ids[i], cs[i].locs, cs[i].nlocs * sizeof(uint64_t));
        s->n_location_id = cs[i].nlocs;
        s->location_id = b->loc_ids[i];
        int64_t v[4] = {cs[i].count, cs[i].cpu_ns, cs[i].wall_ns, cs[i].energy_uj};
        memcpy(b->values[i], v, sizeof(v));
        s->n_value = ntypes;
        s->value = b->values[i];
        s->label = b->label_ptrs + nl;
        for (int k = 0; k < 3; k++) {
            Perftools__Profiles__Label *l = &b->labels[nl];
            perftools__profiles__label__init(l);
            if (k == 0 && cs[i].pid >= 0) {
                l->key = s_(b, "pid");
                l->num = cs[i].pid;
            } else if (k == 1 && cs[i].tid >= 0) {
                l->key = s_(b, "tid");
                l->num = cs[i].tid;
            } else if (k == 2 && cs[i].thread) {
                l->key = s_(b, "thread_comm");
                l->str = s_(b, cs[i].thread);
            } else {
                continue;
            }
            b->label_ptrs[nl++] = l;
            s->n_label++;
        }
        b->sample_ptrs[i] = s;
    }
    b->p.n_sample = n;
    b->p.sample = b->sample_ptrs;
    finish_strings(b);
}

static uint8_t *pack(const PbProfile *p, size_t *len)
{
    *len = perftools__profiles__profile__get_packed_size(p);
    uint8_t *buf = malloc(*len + 1);
    cr_assert_eq(perftools__profiles__profile__pack(p, buf), *len);
    return buf;
}

/* Thread A (pid 100) has two samples, thread B (pid 100, tid 101) two,
 * thread C (pid 200, no tid label) one counted once, and some energy no
 * thread used. */
static const uint64_t stack1[] = {L_INNER, L_MAIN};
static const uint64_t stack2[] = {L_LEAF, L_INNER, L_MAIN};
static const uint64_t stack3[] = {L_LEAF, L_MAIN};
static const uint64_t stack4[] = {L_MAIN};
static const struct crafted_sample basic[] = {
    {stack1, 2, 3, 30 * MS, 45 * MS, 900, 100, 100, "main"},
    {stack2, 3, 2, 20 * MS, 20 * MS, 400, 100, 100, "main"},
    {stack3, 2, 1, 10 * MS, 12 * MS, 100, 100, 101, "worker"},
    {stack1, 2, 4, 40 * MS, 60 * MS, 800, 100, 101, NULL},
    {stack4, 1, 1, 5 * MS, 7 * MS, 0, 200, -1, NULL},
    {NULL, 0, 0, 0, 0, 250, -1, -1, NULL},
};
#define NBASIC (sizeof(basic) / sizeof(basic[0]))

static char *load_quiet(const void *data, size_t len, struct profile *p, int *rc)
{
    char *text = NULL;
    size_t size = 0;
    FILE *mem = open_memstream(&text, &size);
    cr_assert_not_null(mem);
    FILE *saved = stderr;
    stderr = mem;
    *rc = pprof_load_buffer("t.pb", data, len, p);
    stderr = saved;
    fclose(mem);
    return text;
}

/* --- what metrics.h makes of a profile ------------------------------------------ */

struct fn_value {
    char name[64];
    uint32_t tid;
    double q[Q_COUNT];
};

struct measured {
    struct fn_value rows[32];
    size_t n;
    double total[Q_COUNT];
    double unattributed_j;
};

static void add_row(struct measured *m, const char *name, uint32_t tid, const double *q)
{
    size_t i = 0;
    while (i < m->n && (strcmp(m->rows[i].name, name) != 0 || m->rows[i].tid != tid))
        i++;
    if (i == m->n) {
        cr_assert_lt(m->n, 32);
        snprintf(m->rows[i].name, sizeof(m->rows[i].name), "%s", name);
        m->rows[i].tid = tid;
        m->n++;
    }
    for (int k = 0; k < Q_COUNT; k++) {
        m->rows[i].q[k] += q[k];
        m->total[k] += q[k];
    }
}

static const double *row(const struct measured *m, const char *name, uint32_t tid)
{
    static const double zero[Q_COUNT];
    for (size_t i = 0; i < m->n; i++)
        if (strcmp(m->rows[i].name, name) == 0 && m->rows[i].tid == tid)
            return m->rows[i].q;
    return zero;
}

/* Per (leaf function as the symbolizer names it, thread): what ptprof's
 * metrics count. */
static void measure(const struct profile *p, struct measured *out)
{
    memset(out, 0, sizeof(*out));
    char *error = NULL;
    struct metrics *m = metrics_new(p, NULL, &error);
    cr_assert_not_null(m, "%s", error);
    struct symbolizer *sym = symbolizer_new(p, NULL);
    struct thread_metrics tm[8];
    for (size_t i = 0; i < p->nsamples; i++) {
        const struct prof_sample *s = &p->samples[i];
        cr_assert_leq(s->nthreads, 8);
        double un, idle;
        metrics_sample(m, i, tm, &un, &idle);
        out->unattributed_j += un;
        for (uint32_t j = 0; j < s->nthreads; j++) {
            const struct prof_thread_sample *t = &s->threads[j];
            const struct sym_location *l =
                symbolizer_resolve(sym, t->pid, s->time_ns, t->pc, false);
            add_row(out, l->frames[0].function, t->tid, tm[j].q);
        }
    }
    symbolizer_free(sym);
    metrics_free(m);
}

/* What the crafted samples say, per leaf function and thread: a thread's
 * first sample is the one counted twice or more, or else loses its wall
 * time (pprof.h). */
static void expected(const struct crafted_sample *cs, size_t n, struct measured *out)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < n; i++) {
        if (cs[i].count == 0) {
            out->unattributed_j += (double)cs[i].energy_uj * 1e-6;
            continue;
        }
        uint32_t tid = (uint32_t)(cs[i].tid >= 0 ? cs[i].tid : cs[i].pid);
        bool alone = true;
        for (size_t k = 0; k < n; k++)
            alone &= k == i || cs[k].count == 0 ||
                     (uint32_t)(cs[k].tid >= 0 ? cs[k].tid : cs[k].pid) != tid;
        double q[Q_COUNT] = {0};
        q[Q_SAMPLES] = (double)cs[i].count;
        q[Q_CPU] = (double)cs[i].cpu_ns * 1e-9;
        q[Q_WALL] = alone && cs[i].count == 1 ? 0 : (double)cs[i].wall_ns * 1e-9;
        q[Q_ENERGY] = (double)cs[i].energy_uj * 1e-6;
        const char *leaf = fn_names[cs[i].locs[0] == L_INNER ? 2 : cs[i].locs[0] == L_MAIN ? 0 : 3];
        add_row(out, leaf, tid, q);
    }
}

static void expect_same(const struct measured *got, const struct measured *want)
{
    static const char *const names[] = {"samples", "cpu", "wall", "energy"};
    for (size_t i = 0; i < want->n; i++)
        for (int k = Q_SAMPLES; k <= Q_ENERGY; k++) {
            const double *g = row(got, want->rows[i].name, want->rows[i].tid);
            cr_expect_float_eq(g[k], want->rows[i].q[k], 1e-9, "%s in thread %u: %s %g, want %g",
                               want->rows[i].name, want->rows[i].tid, names[k], g[k],
                               want->rows[i].q[k]);
        }
    for (int k = Q_SAMPLES; k <= Q_ENERGY; k++)
        cr_expect_float_eq(got->total[k], want->total[k], 1e-9, "total %s %g, want %g", names[k],
                           got->total[k], want->total[k]);
    cr_expect_float_eq(got->unattributed_j, want->unattributed_j, 1e-12);
}

/* --- reading --------------------------------------------------------------------- */

Test(pprof, metrics_give_back_the_files_values)
{
    struct builder b;
    build(&b, basic, NBASIC, true);
    size_t len;
    uint8_t *buf = pack(&b.p, &len);
    cr_assert(pprof_detect(buf, len));
    struct profile p;
    int rc;
    char *msg = load_quiet(buf, len, &p, &rc);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_expect_str_eq(p.format, "pprof");
    cr_expect_float_eq(p.frequency, 100, 1e-9);
    cr_expect(p.has_totals);
    cr_expect_eq(p.totals.wall_ns, 5000 * MS);
    cr_expect_eq(p.totals.samples, 11);
    cr_assert_geq(p.nsamples, 1);
    cr_expect_geq(p.samples[0].time_ns, 1700000000000000000ull);

    /* Processes and threads from the labels. */
    cr_assert_eq(p.nprocesses, 2);
    cr_expect_eq(p.processes[0].pid, 100);
    cr_expect_eq(p.processes[1].pid, 200);
    cr_expect_str_eq(p.processes[0].exe, "/opt/app/bin/app");
    cr_assert_eq(p.nthreads, 3);
    cr_expect_eq(p.threads[0].tid, 100);
    cr_expect_str_eq(p.threads[0].name, "main");
    cr_expect_eq(p.threads[1].tid, 101);
    cr_expect_str_eq(p.threads[1].name, "worker");
    cr_expect_eq(p.threads[2].pid, 200);
    cr_expect_eq(p.threads[2].tid, 200);

    /* Maps per process, with the build-id. */
    cr_assert_eq(p.nmaps, 2);
    cr_expect_eq(p.maps[0].start, 0x400000);
    cr_expect_eq(p.maps[0].build_id_len, 20);
    cr_expect_eq(p.maps[0].build_id[0], 0x01);
    cr_expect_eq(p.maps[0].build_id[19], 0x67);

    /* Inline chains, innermost first, from the table. */
    struct symbolizer *sym = symbolizer_new(&p, NULL);
    for (int ra = 0; ra <= 1; ra++) {
        const struct sym_location *l = symbolizer_resolve(sym, 100, 0, loc_addr[L_INNER], ra);
        cr_assert_eq(l->nframes, 2);
        cr_expect_str_eq(l->frames[0].function, "inner");
        cr_expect(l->frames[0].inlined);
        cr_expect_eq(l->frames[0].line, 10);
        cr_expect_str_eq(l->frames[1].function, "work");
        cr_expect_str_eq(l->frames[1].mangled, "_Z4workv");
        cr_expect(!l->frames[1].inlined);
        cr_expect_str_eq(l->frames[1].binary, "app");
        cr_expect_str_eq(l->frames[1].file, "app.c");
    }
    symbolizer_free(sym);

    struct measured got, want;
    measure(&p, &got);
    expected(basic, NBASIC, &want);
    expect_same(&got, &want);
    profile_free(&p);
    free(msg);
    free(buf);
}

Test(pprof, without_a_count_each_sample_is_one_and_the_period_is_cpu)
{
    /* Only samples/count: CPU time is the period per sample. */
    struct builder b;
    build(&b, basic, 5, false);
    b.p.n_sample_type = 1;
    for (size_t i = 0; i < 5; i++)
        b.samples[i].n_value = 1;
    size_t len;
    uint8_t *buf = pack(&b.p, &len);
    struct profile p;
    int rc;
    char *msg = load_quiet(buf, len, &p, &rc);
    cr_assert_eq(rc, 0, "%s", msg);
    struct measured got;
    measure(&p, &got);
    cr_expect_float_eq(got.total[Q_SAMPLES], 11, 1e-9);
    cr_expect_float_eq(got.total[Q_CPU], 11 * 0.010, 1e-9);
    cr_expect_eq(p.nchannels, 0);
    profile_free(&p);
    free(msg);
    free(buf);

    /* Only cpu/nanoseconds: one sample per pprof sample. */
    build(&b, basic, 5, false);
    b.types[0] = b.types[1];
    b.p.n_sample_type = 1;
    for (size_t i = 0; i < 5; i++) {
        b.values[i][0] = b.values[i][1];
        b.samples[i].n_value = 1;
    }
    buf = pack(&b.p, &len);
    msg = load_quiet(buf, len, &p, &rc);
    cr_assert_eq(rc, 0, "%s", msg);
    measure(&p, &got);
    cr_expect_float_eq(got.total[Q_SAMPLES], 5, 1e-9);
    cr_expect_float_eq(got.total[Q_CPU], 0.105, 1e-9);
    profile_free(&p);
    free(msg);
    free(buf);
}

/* Every sample type is read: those ptprof does not measure itself become
 * value types by their name (TYPE/UNIT when the name is a built-in
 * metric's), metrics' values give back the file's, exactly, and the
 * default sample type is the profile's default metric. */
Test(pprof, every_sample_type_is_a_value_with_its_exact_totals)
{
    struct builder b;
    build(&b, basic, 5, false);
    b.types[2].type = s_(&b, "alloc_space");
    b.types[2].unit = s_(&b, "bytes");
    perftools__profiles__value_type__init(&b.types[3]);
    b.types[3].type = s_(&b, "wall");
    b.types[3].unit = s_(&b, "count");
    b.type_ptrs[3] = &b.types[3];
    b.p.n_sample_type = 4;
    b.p.default_sample_type = s_(&b, "alloc_space");
    int64_t want[2] = {0, 0};
    for (size_t i = 0; i < 5; i++) {
        b.values[i][2] = ((int64_t)1 << 40) + (int64_t)i * 1000003; /* not divisible by counts */
        b.values[i][3] = (int64_t)i + 1;
        b.samples[i].n_value = 4;
        want[0] += b.values[i][2];
        want[1] += b.values[i][3];
    }
    finish_strings(&b);
    size_t len;
    uint8_t *buf = pack(&b.p, &len);
    struct profile p;
    int rc;
    char *msg = load_quiet(buf, len, &p, &rc);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_assert_eq(p.nvalue_types, 2);
    cr_expect_str_eq(p.value_types[0].name, "alloc_space");
    cr_expect_str_eq(p.value_types[0].unit, "bytes");
    cr_expect_eq(p.value_types[0].agg, PROF_VALUE_SUM);
    cr_expect_str_eq(p.value_types[1].name, "wall/count", "wall is taken: a built-in metric");
    cr_expect_str_eq(p.default_metric, "alloc_space");
    char *error = NULL;
    struct metrics *m = metrics_new(&p, NULL, &error);
    cr_assert_not_null(m, "%s", error);
    struct thread_metrics tm[4];
    double got[2] = {0, 0}, samples = 0;
    for (size_t i = 0; i < p.nsamples; i++) {
        double un, idle;
        cr_assert_leq(p.samples[i].nthreads, 4);
        metrics_sample(m, i, tm, &un, &idle);
        const double *v = metrics_values(m);
        for (uint32_t j = 0; j < p.samples[i].nthreads; j++) {
            samples += tm[j].q[Q_SAMPLES];
            got[0] += v[2 * j];
            got[1] += v[2 * j + 1];
        }
    }
    cr_expect_eq(samples, 11);
    cr_expect_eq(got[0], (double)want[0], "alloc_space %.0f, want %lld", got[0],
                 (long long)want[0]);
    cr_expect_eq(got[1], (double)want[1]);
    metrics_free(m);
    profile_free(&p);
    free(msg);
    free(buf);
}

/* Memory and time follow the file, not its counts: samples counted 2^40
 * times are one thread sample each, with the exact totals. */
Test(pprof, huge_counts_cost_nothing_and_add_up_exactly)
{
    test_limit_address_space();
    struct builder b;
    build(&b, basic, NBASIC, true);
    uint64_t want = 0;
    for (size_t i = 0; i < 5; i++) {
        b.values[i][0] = ((int64_t)1 << 40) + (int64_t)i;
        want += (uint64_t)b.values[i][0];
    }
    size_t len;
    uint8_t *buf = pack(&b.p, &len);
    size_t before = test_heap_in_use();
    struct profile p;
    int rc;
    char *msg = load_quiet(buf, len, &p, &rc);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_expect_lt(test_heap_in_use() - before, 1u << 20, "a %zu-byte file kept %zu bytes", len,
                 test_heap_in_use() - before);
    cr_expect_eq(p.totals.samples, want);
    struct measured got;
    measure(&p, &got);
    cr_expect_eq(got.total[Q_SAMPLES], (double)want);
    cr_expect_float_eq(got.total[Q_CPU], 0.105, 1e-9, "the CPU time is the file's");
    profile_free(&p);
    free(msg);
    free(buf);
}

Test(pprof, unsymbolized_locations_keep_their_addresses_and_maps)
{
    /* No lines anywhere: the binaries are read through the maps. */
    struct builder b;
    build(&b, basic, 5, false);
    for (size_t i = 0; i < 3; i++)
        b.locs[i].n_line = 0;
    b.p.n_function = 0;
    size_t len;
    uint8_t *buf = pack(&b.p, &len);
    struct profile p;
    int rc;
    char *msg = load_quiet(buf, len, &p, &rc);
    cr_assert_eq(rc, 0, "%s", msg);
    cr_expect_eq(p.nlocations, 0);
    cr_assert_geq(p.nstacks, 2);
    bool seen = false;
    for (size_t i = 1; i < p.nstacks; i++)
        seen |= p.stacks[i].depth == 3 && p.stacks[i].pcs[0] == loc_addr[L_LEAF] &&
                p.stacks[i].pcs[1] == loc_addr[L_INNER] && p.stacks[i].pcs[2] == loc_addr[L_MAIN];
    cr_expect(seen, "stack leaf, inner, main not found with its addresses");
    profile_free(&p);
    free(msg);
    free(buf);
}

Test(pprof, profile_load_recognises_it_and_no_other_format_is_pprof)
{
    struct builder b;
    build(&b, basic, NBASIC, true);
    size_t len;
    uint8_t *buf = pack(&b.p, &len);
    struct profile_file f = {.name = "t.pb", .raw = {.data = buf, .len = len}};
    cr_expect_str_eq(profile_file_format(&f), "pprof");
    struct profile p;
    cr_assert_eq(profile_parse(&f, &p), 0);
    cr_expect_str_eq(p.format, "pprof");
    profile_free(&p);
    free(buf);

    /* Every kept file of the other formats, valid or damaged. */
    static const char *const corpora[] = {
        "tests/fuzz/corpus/gmon",        "tests/fuzz/corpus/gperftools",
        "tests/fuzz/corpus/native",      "tests/fuzz/corpus/pbin",
        "tests/fuzz/corpus/pperf",       "tests/fuzz/corpus/folded",
        "tests/fuzz/corpus/perf_script", "tests/fuzz/corpus/csv_timeline"};
    size_t checked = 0;
    for (size_t c = 0; c < sizeof(corpora) / sizeof(corpora[0]); c++) {
        char *dir = corpus_dir(corpora[c]);
        DIR *d = opendir(dir);
        cr_assert_not_null(d);
        for (struct dirent *e; (e = readdir(d));) {
            if (e->d_name[0] == '.')
                continue;
            char *path;
            cr_assert_geq(asprintf(&path, "%s/%s", dir, e->d_name), 0);
            size_t n;
            char *data = test_read_file(path, &n);
            cr_assert_not_null(data);
            cr_expect(!pprof_detect(data, n), "%s is taken for pprof", path);
            checked++;
            free(data);
            free(path);
        }
        closedir(d);
        free(dir);
    }
    cr_expect_geq(checked, 20);
    static const char *const texts[] = {"", "main;work;leaf 12\n", "time,power\n0,1.5\n",
                                        "\x1f\x8b\x08", "gmon"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        cr_expect(!pprof_detect(texts[i], strlen(texts[i])), "\"%s\" is taken for pprof", texts[i]);
}

/* --- damage ----------------------------------------------------------------------- */

Test(pprof, truncated_at_every_offset)
{
    struct builder b;
    build(&b, basic, NBASIC, true);
    size_t len;
    uint8_t *buf = pack(&b.p, &len);
    size_t errors = 0;
    for (size_t n = 0; n < len; n++) {
        /* Exactly N bytes, so a sanitizer sees any read past the end. */
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, buf, n);
        struct profile p;
        int rc;
        char *msg = load_quiet(cut, n, &p, &rc);
        if (rc != 0) {
            errors++;
            cr_expect_not_null(strstr(msg, "t.pb: offset "), "%zu bytes: %s", n, msg);
            cr_expect_null(p.format);
            cr_expect_eq(p.nsamples, 0);
        }
        profile_free(&p);
        free(msg);
        free(cut);
    }
    cr_expect_geq(errors, len / 2);
    free(buf);
}

static void expect_error(const PbProfile *pb, const char *text)
{
    size_t len;
    uint8_t *buf = pack(pb, &len);
    struct profile p;
    int rc;
    char *msg = load_quiet(buf, len, &p, &rc);
    cr_expect_eq(rc, -1, "accepted; expected \"%s\"", text);
    cr_expect_not_null(strstr(msg, "t.pb: offset "), "no offset in: %s", msg);
    cr_expect_not_null(strstr(msg, text), "\"%s\" not in: %s", text, msg);
    cr_expect_eq(p.nsamples, 0);
    cr_expect_null(p.format);
    profile_free(&p);
    free(msg);
    free(buf);
}

Test(pprof, bad_ids_and_values_are_clean_errors)
{
    struct builder b;
    build(&b, basic, NBASIC, true);
    b.loc_ids[1][1] = 99;
    expect_error(&b.p, "location 99");

    build(&b, basic, NBASIC, true);
    b.lines[1].function_id = 42;
    expect_error(&b.p, "function 42");

    build(&b, basic, NBASIC, true);
    b.locs[2].mapping_id = 7;
    expect_error(&b.p, "mapping 7");

    build(&b, basic, NBASIC, true);
    b.locs[2].id = 1;
    expect_error(&b.p, "used twice");

    build(&b, basic, NBASIC, true);
    b.funcs[0].id = 0;
    expect_error(&b.p, "id 0");

    build(&b, basic, NBASIC, true);
    b.funcs[3].name = 1000;
    expect_error(&b.p, "not in the string table");

    build(&b, basic, NBASIC, true);
    b.labels[0].key = -3;
    expect_error(&b.p, "not in the string table");

    build(&b, basic, NBASIC, true);
    b.samples[2].n_value = 2;
    expect_error(&b.p, "2 values");

    build(&b, basic, NBASIC, true);
    b.values[3][1] = -5;
    expect_error(&b.p, "negative");

    build(&b, basic, NBASIC, true);
    b.values[0][0] = INT64_MAX; /* an absurd count: refused before anything is allocated */
    expect_error(&b.p, "samples in all");

    build(&b, basic, NBASIC, true);
    b.values[0][1] = INT64_MAX;
    expect_error(&b.p, "out of range");

    build(&b, basic, NBASIC, true);
    b.labels[0].num = (int64_t)1 << 40; /* a pid over 32 bits */
    expect_error(&b.p, "label pid");

    build(&b, basic, NBASIC, true);
    b.p.n_sample_type = 0; /* samples that measure nothing */
    for (size_t i = 0; i < NBASIC; i++)
        b.samples[i].n_value = 0;
    expect_error(&b.p, "no sample types");
}

static void expect_wire_error(const void *data, size_t len, const char *text)
{
    struct profile p;
    int rc;
    char *msg = load_quiet(data, len, &p, &rc);
    cr_expect_eq(rc, -1, "accepted; expected \"%s\"", text);
    cr_expect_not_null(strstr(msg, text), "\"%s\" not in: %s", text, msg);
    cr_expect(!pprof_detect(data, len));
    profile_free(&p);
    free(msg);
}

Test(pprof, bad_protobuf_is_an_error_with_its_offset)
{
    /* 0x32 0x00: the string table's "" first, at offset 0. */
    static const uint8_t varint11[] = {0x32, 0x00, 0x48, 0xff, 0xff, 0xff, 0xff,
                                       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    expect_wire_error(varint11, sizeof(varint11), "t.pb: offset 2: varint");
    static const uint8_t too_long[] = {0x32, 0x00, 0x12, 0x10, 0x08, 0x01};
    expect_wire_error(too_long, sizeof(too_long), "t.pb: offset 2: field 2 of a Profile is 16");
    static const uint8_t group[] = {0x32, 0x00, 0x13, 0x14};
    expect_wire_error(group, sizeof(group), "t.pb: offset 2: wire type 3");
    static const uint8_t field0[] = {0x32, 0x00, 0x00, 0x00};
    expect_wire_error(field0, sizeof(field0), "t.pb: offset 2: field number 0");
    static const uint8_t first_string[] = {0x32, 0x01, 0x41};
    expect_wire_error(first_string, sizeof(first_string), "t.pb: offset 0: the string table");
    static const uint8_t no_strings[] = {0x48, 0x01};
    expect_wire_error(no_strings, sizeof(no_strings), "no string table");
    /* A sample (offset 2) whose label (offset 4) holds a string where the
     * key, a number, belongs. */
    static const uint8_t wrong_type[] = {0x32, 0x00, 0x12, 0x05, 0x1a, 0x03, 0x0a, 0x01, 0x41};
    expect_wire_error(wrong_type, sizeof(wrong_type), "t.pb: offset 6: bytes where");
    static const uint8_t packed_cut[] = {0x32, 0x00, 0x12, 0x03, 0x0a, 0x01, 0x80};
    expect_wire_error(packed_cut, sizeof(packed_cut), "t.pb: offset 4: packed");
}

/* --- writing ---------------------------------------------------------------------- */

/* A resolver for the profile made below: 0x1100 is leafy() inlined into
 * outer(), 0x1200 caller(); anything else is unnamed. */
static struct sym_frame fake_frames[] = {
    {"app", "/opt/x/app", "leafy", "", "x.c", 11, true},
    {"app", "/opt/x/app", "outer", "_Z5outerv", "x.c", 22, false},
    {"app", "/opt/x/app", "caller", "", "x.c", 33, false},
    {"app", "/opt/x/app", "app+0x3000", "", "", 0, false},
};

static const struct sym_location *fake_resolve(void *ctx, uint32_t pid, uint64_t time_ns,
                                               uint64_t pc, bool return_address)
{
    (void)ctx;
    (void)pid;
    (void)time_ns;
    static struct sym_location locs[3] = {{0x1100, 2, fake_frames, false},
                                          {0x1200, 1, fake_frames + 2, false},
                                          {0x3000, 1, fake_frames + 3, false}};
    uint64_t at = return_address ? pc - 1 : pc;
    if (at >= 0x1100 && at < 0x1200)
        return &locs[0];
    if (at >= 0x1200 && at < 0x1300)
        return &locs[1];
    return &locs[2];
}

static void add_thread_sample(struct profile *p, uint64_t t, double energy,
                              struct prof_thread_sample ts)
{
    p->samples = realloc(p->samples, (p->nsamples + 1) * sizeof(*p->samples));
    struct prof_sample *s = &p->samples[p->nsamples++];
    *s = (struct prof_sample){.time_ns = t, .nthreads = 1, .threads = malloc(sizeof(ts))};
    s->threads[0] = ts;
    s->values = malloc(sizeof(double));
    s->values[0] = energy;
}

/* One process, two threads, an energy counter, a stack through an inline
 * chain, a thread in a system call, an unnamed address. */
static void make_profile(struct profile *p)
{
    profile_init(p);
    p->format = strdup("native");
    p->frequency = 1000;
    p->processes = calloc(1, sizeof(*p->processes));
    p->processes[0] = (struct prof_process){.pid = 42, .exe = strdup("/opt/x/app")};
    p->nprocesses = 1;
    p->threads = calloc(2, sizeof(*p->threads));
    p->threads[0] = (struct prof_thread){.pid = 42, .tid = 42, .name = strdup("app")};
    p->threads[1] = (struct prof_thread){.pid = 42, .tid = 43, .name = strdup("")};
    p->nthreads = 2;
    p->maps = calloc(1, sizeof(*p->maps));
    p->maps[0] = (struct prof_map){
        .pid = 42, .start = 0x1000, .end = 0x9000, .perms = 5, .path = strdup("/opt/x/app")};
    p->maps[0].build_id_len = 4;
    memcpy(p->maps[0].build_id, "\xde\xad\xbe\xef", 4);
    p->nmaps = 1;
    p->channels = calloc(1, sizeof(*p->channels));
    p->channels[0] = (struct prof_channel){strdup("pkg"), strdup("J"), PMU_KIND_ENERGY};
    p->nchannels = 1;
    p->stacks = calloc(3, sizeof(*p->stacks));
    p->stacks[1] = (struct prof_stack){2, malloc(2 * sizeof(uint64_t))};
    p->stacks[1].pcs[0] = 0x1110;
    p->stacks[1].pcs[1] = 0x1205; /* return address into caller */
    p->stacks[2] = (struct prof_stack){1, malloc(sizeof(uint64_t))};
    p->stacks[2].pcs[0] = 0x3000;
    p->nstacks = 3;
    uint64_t t = 1000 * MS, cpu42 = 0, cpu43 = 0;
    double e = 10;
    for (int i = 0; i < 40; i++) {
        t += MS;
        e += 0.002;
        cpu42 += MS * 9 / 10;
        add_thread_sample(
            p, t, e,
            (struct prof_thread_sample){
                .pid = 42, .tid = 42, .pc = 0x1110, .cpu_ns = cpu42, .stack = 1, .syscall = -1});
        if (i % 4 == 0) {
            cpu43 += MS / 4;
            struct prof_thread_sample ts = {.pid = 42,
                                            .tid = 43,
                                            .pc = 0x3000,
                                            .cpu_ns = cpu43,
                                            .stack = i % 8 ? 2 : 0,
                                            .syscall = -1};
            if (i % 8 == 4) {
                ts.flags = PROF_THREAD_IN_SYSCALL;
                ts.syscall = 0; /* read */
            }
            add_thread_sample(p, t + MS / 2, e, ts);
        }
    }
}

static const char *pb_str(const PbProfile *pb, int64_t i)
{
    static char ring[16][256];
    static unsigned next;
    cr_assert(i >= 0 && (size_t)i < pb->n_string_table, "string %lld", (long long)i);
    char *s = ring[next++ % 16];
    snprintf(s, 256, "%.*s", (int)pb->string_table[i].len, (const char *)pb->string_table[i].data);
    return s;
}

static const Perftools__Profiles__Function *pb_function(const PbProfile *pb, uint64_t id)
{
    for (size_t i = 0; i < pb->n_function; i++)
        if (pb->function[i]->id == id)
            return pb->function[i];
    cr_assert_fail("no function %llu", (unsigned long long)id);
    return NULL;
}

static const Perftools__Profiles__Location *pb_location(const PbProfile *pb, uint64_t id)
{
    for (size_t i = 0; i < pb->n_location; i++)
        if (pb->location[i]->id == id)
            return pb->location[i];
    cr_assert_fail("no location %llu", (unsigned long long)id);
    return NULL;
}

static double column_sum(const PbProfile *pb, size_t col)
{
    double sum = 0;
    for (size_t i = 0; i < pb->n_sample; i++)
        sum += (double)pb->sample[i]->value[col];
    return sum;
}

Test(pprof_export, what_is_written_decodes_with_protobuf_c)
{
    struct profile p;
    make_profile(&p);
    struct frame_resolver r = {fake_resolve, NULL};
    struct export_options o = {.metric = NULL};
    uint8_t *buf;
    size_t len;
    char *error;
    cr_assert_eq(pprof_encode(&p, &r, &o, &buf, &len, &error), 0, "%s", error);
    PbProfile *pb = perftools__profiles__profile__unpack(NULL, len, buf);
    cr_assert_not_null(pb, "protobuf-c cannot decode what we wrote");

    cr_assert_geq(pb->n_string_table, 1);
    cr_expect_eq(pb->string_table[0].len, 0);
    static const char *const types[][2] = {{"samples", "count"},
                                           {"cpu", "nanoseconds"},
                                           {"wall", "nanoseconds"},
                                           {"energy", "microjoules"}};
    cr_assert_eq(pb->n_sample_type, 4);
    for (size_t i = 0; i < 4; i++) {
        cr_expect_str_eq(pb_str(pb, pb->sample_type[i]->type), types[i][0]);
        cr_expect_str_eq(pb_str(pb, pb->sample_type[i]->unit), types[i][1]);
    }
    cr_expect_str_eq(pb_str(pb, pb->default_sample_type), "cpu");
    cr_assert_not_null(pb->period_type);
    cr_expect_str_eq(pb_str(pb, pb->period_type->type), "cpu");
    cr_expect_eq(pb->period, MS); /* 1 / 1000 Hz */
    cr_expect_eq(pb->time_nanos, (int64_t)p.samples[0].time_ns);

    /* The columns add up to what metrics.h counts. */
    char *err2 = NULL;
    struct metrics *m = metrics_new(&p, NULL, &err2);
    struct thread_metrics tm[2];
    double total[Q_COUNT] = {0}, unattributed = 0;
    for (size_t i = 0; i < p.nsamples; i++) {
        double un, idle;
        metrics_sample(m, i, tm, &un, &idle);
        unattributed += un;
        for (int k = 0; k < Q_COUNT; k++)
            total[k] += tm[0].q[k];
    }
    metrics_free(m);
    cr_expect_float_eq(column_sum(pb, 0), total[Q_SAMPLES], 1e-9);
    cr_expect_float_eq(column_sum(pb, 1), round(total[Q_CPU] * 1e9), 0.5);
    cr_expect_float_eq(column_sum(pb, 2), round(total[Q_WALL] * 1e9), 0.5);
    cr_expect_float_eq(column_sum(pb, 3), round((total[Q_ENERGY] + unattributed) * 1e6), 0.5);
    cr_expect_gt(unattributed, 0);

    /* Samples: labels, leaf first, the system call on top, the inline
     * chain innermost first, a caller's address inside its call. */
    bool saw_chain = false, saw_syscall = false, saw_unattributed = false;
    for (size_t i = 0; i < pb->n_sample; i++) {
        const Perftools__Profiles__Sample *s = pb->sample[i];
        const Perftools__Profiles__Location *leaf = pb_location(pb, s->location_id[0]);
        const char *leaf_fn = pb_str(pb, pb_function(pb, leaf->line[0]->function_id)->name);
        if (strcmp(leaf_fn, "[unattributed]") == 0) {
            saw_unattributed = true;
            cr_expect_eq(s->n_label, 0);
            cr_expect_eq(s->value[0], 0);
            cr_expect_float_eq((double)s->value[3], unattributed * 1e6, 1);
            continue;
        }
        cr_assert_geq(s->n_label, 2);
        cr_expect_str_eq(pb_str(pb, s->label[0]->key), "pid");
        cr_expect_eq(s->label[0]->num, 42);
        cr_expect_str_eq(pb_str(pb, s->label[1]->key), "tid");
        if (s->label[1]->num == 42) {
            cr_assert_eq(s->n_label, 3);
            cr_expect_str_eq(pb_str(pb, s->label[2]->key), "thread_comm");
            cr_expect_str_eq(pb_str(pb, s->label[2]->str), "app");
            cr_assert_eq(s->n_location_id, 2);
            cr_expect_eq(leaf->address, 0x1110);
            cr_assert_eq(leaf->n_line, 2);
            cr_expect_str_eq(leaf_fn, "leafy");
            const Perftools__Profiles__Function *outer =
                pb_function(pb, leaf->line[1]->function_id);
            cr_expect_str_eq(pb_str(pb, outer->name), "outer");
            cr_expect_str_eq(pb_str(pb, outer->system_name), "_Z5outerv");
            cr_expect_str_eq(pb_str(pb, outer->filename), "x.c");
            cr_expect_eq(leaf->line[1]->line, 22);
            const Perftools__Profiles__Location *caller = pb_location(pb, s->location_id[1]);
            cr_expect_eq(caller->address, 0x1204);
            saw_chain = true;
        } else if (strncmp(leaf_fn, "[syscall", 8) == 0) {
            cr_expect_str_eq(leaf_fn, "[syscall read]");
            cr_expect_eq(leaf->mapping_id, 0);
            cr_assert_eq(s->n_location_id, 2);
            saw_syscall = true;
        } else {
            cr_expect_str_eq(leaf_fn, "app+0x3000");
            cr_expect_eq(s->n_label, 2, "a thread without a name has no thread_comm");
        }
    }
    cr_expect(saw_chain && saw_syscall && saw_unattributed);

    /* The mapping, with its build-id in hex. */
    cr_assert_eq(pb->n_mapping, 1);
    cr_expect_str_eq(pb_str(pb, pb->mapping[0]->filename), "/opt/x/app");
    cr_expect_str_eq(pb_str(pb, pb->mapping[0]->build_id), "deadbeef");
    cr_expect_eq(pb->mapping[0]->memory_start, 0x1000);
    cr_expect_eq(pb->mapping[0]->memory_limit, 0x9000);
    cr_expect(pb->mapping[0]->has_functions);
    cr_expect(pb->mapping[0]->has_inline_frames);
    cr_expect(pb->mapping[0]->has_line_numbers);
    perftools__profiles__profile__free_unpacked(pb, NULL);

    /* --metric chooses the default sample type; energy needs energy. */
    o.metric = "wall";
    free(buf);
    cr_assert_eq(pprof_encode(&p, &r, &o, &buf, &len, &error), 0, "%s", error);
    pb = perftools__profiles__profile__unpack(NULL, len, buf);
    cr_assert_not_null(pb);
    cr_expect_str_eq(pb_str(pb, pb->default_sample_type), "wall");
    perftools__profiles__profile__free_unpacked(pb, NULL);
    free(buf);
    o.metric = "energy";
    free(p.channels[0].name);
    free(p.channels[0].unit);
    p.nchannels = 0;
    cr_expect_eq(pprof_encode(&p, &r, &o, &buf, &len, &error), -1);
    cr_expect_not_null(error && strstr(error, "energy"));
    free(error);
    profile_free(&p);
}

/* P written by pprof_encode (the fake resolver's names, every metric) and
 * read back by the pprof loader into BACK, failing the test on either's
 * error. */
static void encode_and_read_back(const struct profile *p, struct profile *back)
{
    struct frame_resolver r = {fake_resolve, NULL};
    struct export_options o = {.metric = NULL};
    uint8_t *buf;
    size_t len;
    char *error;
    cr_assert_eq(pprof_encode(p, &r, &o, &buf, &len, &error), 0, "%s", error);
    int rc;
    char *msg = load_quiet(buf, len, back, &rc);
    cr_assert_eq(rc, 0, "%s", msg);
    free(msg);
    free(buf);
}

Test(pprof_export, read_back_it_gives_the_same_values)
{
    struct profile p;
    make_profile(&p);
    struct profile back;
    encode_and_read_back(&p, &back);

    /* Per leaf function: ours (the fake resolver's names) and back. */
    struct measured want, got;
    memset(&want, 0, sizeof(want));
    char *e = NULL;
    struct metrics *m = metrics_new(&p, NULL, &e);
    struct thread_metrics tm[2];
    for (size_t i = 0; i < p.nsamples; i++) {
        double un, idle;
        metrics_sample(m, i, tm, &un, &idle);
        want.unattributed_j += un;
        const struct prof_thread_sample *t = &p.samples[i].threads[0];
        const char *name = (t->flags & PROF_THREAD_IN_SYSCALL)
                               ? "[syscall read]"
                               : fake_resolve(NULL, 42, 0, t->pc, false)->frames[0].function;
        add_row(&want, name, t->tid, tm[0].q);
    }
    metrics_free(m);
    measure(&back, &got);
    for (size_t i = 0; i < want.n; i++) {
        const double *g = row(&got, want.rows[i].name, want.rows[i].tid);
        cr_expect_float_eq(g[Q_SAMPLES], want.rows[i].q[Q_SAMPLES], 1e-9, "%s", want.rows[i].name);
        cr_expect_float_eq(g[Q_CPU], want.rows[i].q[Q_CPU], 1e-9, "%s", want.rows[i].name);
        cr_expect_float_eq(g[Q_WALL], want.rows[i].q[Q_WALL], 1e-9, "%s", want.rows[i].name);
        /* Energy in whole microjoules. */
        cr_expect_float_eq(g[Q_ENERGY], want.rows[i].q[Q_ENERGY], 1e-6, "%s", want.rows[i].name);
    }
    cr_expect_float_eq(got.unattributed_j, want.unattributed_j, 1e-6);

    profile_free(&back);
    profile_free(&p);
}

/* The samples an incident's pprof file seemed to lose (a recording's one
 * sample of a thread in futex, which read back showed none of, under
 * --limit 100: analyze/select.h): a thread seen once, blocked, with no
 * CPU time and no wall time, at the time of another thread's sample, and
 * a second sample of thread 42 at the time of its last.  Each is one
 * sample read back. */
Test(pprof_export, a_blocked_thread_seen_once_keeps_its_sample)
{
    struct profile p;
    make_profile(&p);
    p.threads = realloc(p.threads, 3 * sizeof(*p.threads));
    p.threads[p.nthreads++] = (struct prof_thread){.pid = 42, .tid = 44, .name = strdup("waiter")};
    const struct prof_sample *last = &p.samples[p.nsamples - 1];
    uint64_t t = last->time_ns, cpu = last->threads[0].cpu_ns;
    add_thread_sample(&p, t, last->values[0],
                      (struct prof_thread_sample){.pid = 42,
                                                  .tid = 44,
                                                  .pc = 0x3000,
                                                  .syscall = 202, /* futex */
                                                  .flags = PROF_THREAD_IN_SYSCALL});
    add_thread_sample(&p, t, p.samples[p.nsamples - 1].values[0],
                      (struct prof_thread_sample){
                          .pid = 42, .tid = 43, .pc = 0x3000, .cpu_ns = cpu, .syscall = -1});
    struct profile back;
    encode_and_read_back(&p, &back);
    struct measured got;
    measure(&back, &got);
    cr_expect_float_eq(got.total[Q_SAMPLES], (double)p.nsamples, 1e-9, "%g samples of %zu",
                       got.total[Q_SAMPLES], p.nsamples);
    const double *futex = row(&got, "[syscall futex]", 44);
    cr_expect_float_eq(futex[Q_SAMPLES], 1, 1e-9);
    cr_expect_float_eq(futex[Q_CPU], 0, 1e-12);
    cr_expect_float_eq(futex[Q_WALL], 0, 1e-12);
    profile_free(&back);
    profile_free(&p);
}

/* A count is written as the integer it is: one sample standing for 2^61
 * and more must not swallow the small counts written after it (they were
 * summed as doubles, which have no room for them there). */
Test(pprof_export, a_huge_count_keeps_the_small_ones_beside_it)
{
    struct profile p;
    make_profile(&p);
    const uint64_t huge = ((uint64_t)1 << 61) + 3;
    uint64_t want = 0;
    for (size_t i = 0; i < p.nsamples; i++) {
        profile_sample_extend(&p, &p.samples[i], true, false);
        prof_weights(&p.samples[i])[0] = i == 0 ? huge : 2;
        want += prof_weight(&p.samples[i], 0);
    }
    struct profile back;
    encode_and_read_back(&p, &back);
    uint64_t got = 0;
    for (size_t i = 0; i < back.nsamples; i++)
        for (uint32_t t = 0; t < back.samples[i].nthreads; t++)
            got += prof_weight(&back.samples[i], t);
    cr_expect_eq(got, want, "%" PRIu64 " samples read back of %" PRIu64, got, want);
    profile_free(&back);
    profile_free(&p);
}

/* pprof has no rounds: a recording's samples (rounds) and ideal count, and
 * whether its CPU time was sampled (the perf engine), come back from the
 * comment ptprof writes, so the rate read back is the recording's. */
Test(pprof_export, read_back_it_keeps_the_recorded_and_ideal_samples)
{
    struct profile p;
    make_profile(&p);
    p.has_totals = true;
    p.totals.samples = 510;
    p.totals.ideal_samples = 536;
    struct profile back;
    encode_and_read_back(&p, &back);
    cr_expect_eq(back.totals.samples, 510, "%" PRIu64 " samples recorded", back.totals.samples);
    cr_expect_eq(back.totals.ideal_samples, 536, "%" PRIu64 " ideal", back.totals.ideal_samples);
    cr_expect_null(profile_meta(&back, "cpu_time"), "a ptrace recording read back as sampled");
    profile_free(&back);

    p.meta = realloc(p.meta, (p.nmeta + 1) * sizeof(*p.meta));
    p.meta[p.nmeta++] = (struct prof_meta){strdup("cpu_time"), strdup("sampled")};
    encode_and_read_back(&p, &back);
    const char *sampled = profile_meta(&back, "cpu_time");
    cr_expect(sampled && strcmp(sampled, "sampled") == 0,
              "a perf engine recording read back without its CPU time sampled");
    profile_free(&back);
    profile_free(&p);
}

/* --- real decoders ---------------------------------------------------------------- */

Test(pprof_export, protoc_and_go_tool_pprof_read_it, .timeout = 120)
{
    struct profile p;
    make_profile(&p);
    struct frame_resolver r = {fake_resolve, NULL};
    struct export_options o = {.metric = NULL};
    uint8_t *buf;
    size_t len;
    char *error;
    cr_assert_eq(pprof_encode(&p, &r, &o, &buf, &len, &error), 0, "%s", error);
    char *dir = test_mkdtemp();
    char *file, *home, *cache, *schema_dir = corpus_dir("src/interop");
    cr_assert_geq(asprintf(&file, "%s/out.pb", dir), 0);
    cr_assert_geq(asprintf(&home, "HOME=%s", dir), 0);
    cr_assert_geq(asprintf(&cache, "GOCACHE=%s/gocache", dir), 0);
    FILE *f = fopen(file, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(buf, 1, len, f), len);
    fclose(f);

    /* protoc, Google's own decoder, with our schema. */
    char *protoc = test_need_tool("protoc"), *proto_path;
    cr_assert_geq(asprintf(&proto_path, "--proto_path=%s", schema_dir), 0);
    struct spawn_opts so = {.argv = (const char *[]){protoc, proto_path,
                                                     "--decode=perftools.profiles.Profile",
                                                     "pprof.proto", NULL},
                            .input = buf,
                            .input_len = len};
    struct spawn_result res;
    spawn_run(&so, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "protoc: %s", res.err);
    cr_expect_not_null(strstr(res.out, "string_table: \"\"\n"));
    cr_expect_not_null(strstr(res.out, "string_table: \"microjoules\""));
    cr_expect_not_null(strstr(res.out, "string_table: \"[syscall read]\""));
    cr_expect_not_null(strstr(res.out, "has_inline_frames: true"));
    spawn_result_free(&res);

    /* go tool pprof: the samples with every type, energy included. */
    char *go = test_need_tool("go");
    const char *env[] = {home, cache, "GOFLAGS=", "GOPROXY=off", "GOTOOLCHAIN=local", NULL};
    struct spawn_opts go_opts = {.argv = (const char *[]){go, "tool", "pprof", "-raw", file, NULL},
                                 .env = env,
                                 .timeout_s = 100};
    spawn_run(&go_opts, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "go tool pprof: %s", res.err);
    cr_expect_not_null(strstr(res.out, "samples/count cpu/nanoseconds"), "%s", res.out);
    cr_expect_not_null(strstr(res.out, "wall/nanoseconds energy/microjoules\n"), "%s", res.out);
    cr_expect_not_null(strstr(res.out, "leafy"), "%s", res.out);
    spawn_result_free(&res);

    free(protoc);
    free(proto_path);
    free(go);
    free(schema_dir);
    free(file);
    free(home);
    free(cache);
    test_rmtree(dir);
    free(dir);
    free(buf);
    profile_free(&p);
}

/* --- the kept fuzz corpus ---------------------------------------------------------- */

static void replay_one(const struct corpus_file *f, void *ctx)
{
    (void)ctx;
    struct profile p;
    int rc = pprof_load_buffer(f->name, f->data, f->len, &p);
    if (f->must_load)
        cr_expect_eq(rc, 0, "%s does not load", f->path);
    if (rc == 0) {
        cr_expect_str_eq(p.format, "pprof");
        for (size_t i = 0; i < p.nsamples; i++)
            for (uint32_t t = 0; t < p.samples[i].nthreads; t++)
                cr_expect_lt(p.samples[i].threads[t].stack, p.nstacks);
    } else {
        cr_expect_null(p.format);
    }
    profile_free(&p);
}

Test(pprof, fuzz_corpus_replays)
{
    cr_expect_geq(corpus_replay("tests/fuzz/corpus/pprof", replay_one, NULL), 5);
}
