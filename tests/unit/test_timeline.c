/*
 * test_timeline.c - the timeline (analyze/timeline.h) and its SVG and HTML
 * (render/timeline_svg.h) on synthetic profiles: a one-sample spike among a
 * million readings survives downsampling, short phases keep a column, keys'
 * times and the lanes' extent are exact, --start/--end clip before
 * downsampling, channels in their units (energy counters as power, current
 * times voltage), the busiest lanes kept; and hostile names in a profile's
 * symbol tables give well-formed documents (xmllint) with nothing injected.
 */
#include "test_report_fake.h"

#include "../lib/spawn.h"
#include "../lib/xmlcheck.h"
#include "analyze/timeline.h"
#include "render/timeline_svg.h"
#include "util/xalloc.h"

#define MS 1000000ull /* ns */

static struct timeline *build(const struct profile *p, const char *keys,
                              const struct timeline_options *o)
{
    struct key_spec spec;
    char err[160];
    cr_assert_eq(key_spec_parse(keys, &spec, err, sizeof(err)), 0, "%s", err);
    struct walk_options wo = {.keys = spec};
    struct strtab *kt = strtab_new(), *nt = strtab_new();
    char *error = NULL;
    struct timeline_builder *b = timeline_builder_new(p, kt, &spec, o, &error);
    cr_assert_not_null(b, "builder: %s", error);
    struct walk_visitor v = timeline_visitor(b);
    struct frame_resolver r = {fake_resolve, NULL};
    struct walk_totals t;
    cr_assert_eq(walk_profile(p, &r, &wo, kt, nt, &v, &t, &error), 0, "%s", error);
    struct timeline *tl = timeline_finish(b, &t);
    strtab_free(nt);
    strtab_free(kt);
    return tl;
}

static const struct timeline_key *key_named(const struct timeline *t, const char *name)
{
    for (size_t i = 0; i < t->nkeys; i++)
        if (strcmp(t->keys[i].name, name) == 0)
            return &t->keys[i];
    return NULL;
}

static size_t key_index(const struct timeline *t, const char *name)
{
    const struct timeline_key *k = key_named(t, name);
    cr_assert_not_null(k, "no key %s", name);
    return (size_t)(k - t->keys);
}

static bool near(double a, double b, double tol)
{
    return fabs(a - b) <= tol;
}

/* A lane's spans are in order, inside the picture and never overlap. */
static void expect_tiled(const struct timeline *t, const struct timeline_lane *l)
{
    for (size_t i = 0; i < l->nspans; i++) {
        const struct timeline_span *s = &l->spans[i];
        cr_expect(s->x0 < s->x1 && s->x1 <= t->columns, "span %zu: [%u, %u)", i, s->x0, s->x1);
        cr_expect(s->key < t->nkeys);
        if (i > 0)
            cr_expect_geq(s->x0, l->spans[i - 1].x1, "span %zu overlaps the one before", i);
    }
}

/* --- a long run of one thread: N samples 1 ms apart ------------------------------ */

struct long_run {
    struct profile p;
    struct prof_sample *samples;
    struct prof_thread_sample th[4]; /* main, foo, rec, cxx */
    double normal[1], spike[1], dip[1];
};

static void long_run_init(struct long_run *r, size_t n, bool power)
{
    static struct prof_channel ch[] = {{"package-0", "W", PMU_KIND_POWER}};
    memset(r, 0, sizeof(*r));
    r->th[0] = fake_th(1, PC_MAIN, 0);
    r->th[1] = fake_th(1, PC_FOO, 0);
    r->th[2] = fake_th(1, PC_REC, 0);
    r->th[3] = fake_th(1, PC_CXX, 0);
    r->normal[0] = 10;
    r->spike[0] = 1000;
    r->dip[0] = 0;
    r->samples = xcalloc(n, sizeof(*r->samples));
    for (size_t i = 0; i < n; i++)
        r->samples[i] = (struct prof_sample){.time_ns = i * MS,
                                             .values = power ? r->normal : NULL,
                                             .nthreads = 1,
                                             .threads = &r->th[0]};
    r->p.samples = r->samples;
    r->p.nsamples = n;
    if (power) {
        r->p.channels = ch;
        r->p.nchannels = 1;
    }
}

/* Samples [FROM, FROM + N) in thread state K. */
static void long_run_set(struct long_run *r, size_t from, size_t n, int k)
{
    for (size_t i = from; i < from + n; i++)
        r->samples[i].threads = &r->th[k];
}

Test(timeline, a_one_sample_spike_among_a_million_readings_sets_its_column_maximum)
{
    enum { N = 1000000, SPIKE = 123457, DIP = 876543 };
    static struct long_run r;
    long_run_init(&r, N, true);
    r.samples[SPIKE].values = r.spike;
    r.samples[DIP].values = r.dip;
    struct timeline_options o = {.end_s = -1, .columns = 1000};
    struct timeline *t = build(&r.p, "procedure", &o);
    cr_assert_eq(t->nseries, 1);
    const struct timeline_series *s = &t->series[0];
    cr_expect_str_eq(s->unit, "W");
    cr_expect_str_eq(s->quantity, "power");
    cr_expect_eq(s->max, 1000);
    cr_expect_eq(s->min, 0);
    /* Sample I covers (I - 1, I] ms; the view is [0, 999.999] s. */
    double col_s = (N - 1) * 1e-3 / 1000;
    size_t spike_col = (size_t)(((SPIKE - 0.5) * 1e-3) / col_s);
    size_t dip_col = (size_t)(((DIP - 0.5) * 1e-3) / col_s);
    for (size_t c = 0; c < t->columns; c++) {
        const struct timeline_point *pt = &s->px[c];
        cr_assert_eq(pt->max, c == spike_col ? 1000 : 10, "column %zu max %g", c, pt->max);
        cr_assert_eq(pt->min, c == dip_col ? 0 : 10, "column %zu min %g", c, pt->min);
    }
    /* The mean is time-weighted: one millisecond of 1000 W in a column of
     * about a second. */
    cr_expect(near(s->px[spike_col].mean, 10 + 990 * 1e-3 / col_s, 1e-6), "mean %g",
              s->px[spike_col].mean);
    cr_expect(near(s->mean, 10 + (990 - 10) * 1e-3 / ((N - 1) * 1e-3), 1e-9), "overall mean %g",
              s->mean);
    /* The lane: main all along, one span over every column. */
    cr_assert_eq(t->nlanes, 1);
    cr_expect_eq(t->lanes[0].nspans, 1);
    cr_expect_eq(t->lanes[0].spans[0].x0, 0);
    cr_expect_eq(t->lanes[0].spans[0].x1, 1000);
    cr_expect_eq(t->view_samples, N);
    timeline_free(t);
    free(r.samples);
}

Test(timeline, short_phases_keep_a_column_of_their_own)
{
    enum { N = 100000 }; /* 100 samples per column of 1000 */
    static struct long_run r;
    long_run_init(&r, N, false);
    long_run_set(&r, 50010, 30, 1); /* foo: 0.3 of column 500, main holds the rest */
    long_run_set(&r, 70010, 10, 1); /* foo again: 0.1 of a column, below the threshold */
    long_run_set(&r, 20020, 60, 2); /* rec: 60% of column 200, it wins it */
    long_run_set(&r, 30070, 60, 3); /* ns::f(int): straddles columns 300 and 301, 30 + 30 */
    struct timeline_options o = {.end_s = 100.0, .columns = 1000}; /* columns of 0.1 s */
    struct timeline *t = build(&r.p, "procedure", &o);
    cr_assert_eq(t->nlanes, 1);
    const struct timeline_lane *l = &t->lanes[0];
    expect_tiled(t, l);
    size_t foo = key_index(t, "foo"), rec = key_index(t, "rec"), cxx = key_index(t, "ns::f(int)");
    size_t main_key = key_index(t, "main");
    int nfoo = 0, nrec = 0, ncxx = 0;
    for (size_t i = 0; i < l->nspans; i++) {
        const struct timeline_span *s = &l->spans[i];
        if (s->key == foo) {
            nfoo++;
            cr_expect_eq(s->x0, 500);
            cr_expect_eq(s->x1, 501, "one pixel");
            cr_expect(s->phase);
            cr_expect(near(s->t0_s, 50.009, 1e-9) && near(s->t1_s, 50.039, 1e-9),
                      "the phase's own times: %.6f-%.6f", s->t0_s, s->t1_s);
            cr_expect(near(s->share, 0.3, 1e-4), "share %g", s->share);
        } else if (s->key == rec) {
            nrec++;
            cr_expect_eq(s->x0, 200);
            cr_expect_eq(s->x1, 201);
            cr_expect_not(s->phase, "rec won its column outright");
        } else if (s->key == cxx) {
            ncxx++;
            cr_expect(s->x0 == 300 || s->x0 == 301, "x0 %u", s->x0);
            cr_expect(s->phase);
        } else {
            cr_expect_eq(s->key, main_key);
        }
    }
    cr_expect_eq(nfoo, 1, "the 30 ms phase is drawn, the 10 ms one is not");
    cr_expect_eq(nrec, 1);
    cr_expect_eq(ncxx, 1, "a phase split between two columns still gets one");
    /* Every column has a key: main keeps its neighbours of each phase. */
    unsigned covered = 0;
    for (size_t i = 0; i < l->nspans; i++)
        covered += l->spans[i].x1 - l->spans[i].x0;
    cr_expect_eq(covered, 1000);
    /* The keys' times are exact, whatever the picture shows. */
    cr_expect(near(key_named(t, "foo")->wall_s, 0.040, 1e-9));
    cr_expect(near(key_named(t, "rec")->wall_s, 0.060, 1e-9));
    cr_expect(near(key_named(t, "ns::f(int)")->wall_s, 0.060, 1e-9));
    cr_expect(near(t->thread_wall_s, 99.999, 1e-6), "%g", t->thread_wall_s);
    cr_expect_str_eq(t->keys[0].name, "main", "keys sorted by time");
    timeline_free(t);
    free(r.samples);
}

/* --- two threads and a power channel, 1 ms apart ----------------------------------- */

#define TWO_N 1001

struct two {
    struct profile p;
    struct prof_sample samples[TWO_N];
    struct prof_thread_sample th[TWO_N][2];
    double ten[1], twenty[1];
};

/* Thread 1 in main up to 500 ms, then foo; thread 2 in bar from 600 ms;
 * 10 W up to 500 ms, then 20 W. */
static void two_init(struct two *w)
{
    static struct prof_channel ch[] = {{"package-0", "W", PMU_KIND_POWER}};
    memset(w, 0, sizeof(*w));
    w->ten[0] = 10;
    w->twenty[0] = 20;
    for (size_t i = 0; i < TWO_N; i++) {
        w->th[i][0] = fake_th(1, i <= 500 ? PC_MAIN : PC_FOO, i * MS / 2);
        w->th[i][1] = fake_th(2, PC_BAR, (i - 600) * MS);
        w->samples[i] = (struct prof_sample){.time_ns = 5000 * MS + i * MS,
                                             .values = i <= 500 ? w->ten : w->twenty,
                                             .nthreads = i >= 600 ? 2 : 1,
                                             .threads = w->th[i]};
    }
    w->p.samples = w->samples;
    w->p.nsamples = TWO_N;
    w->p.channels = ch;
    w->p.nchannels = 1;
}

Test(timeline, the_whole_profile_keys_lanes_and_extent)
{
    static struct two w;
    two_init(&w);
    struct timeline_options o = {.end_s = -1, .columns = 100};
    struct timeline *t = build(&w.p, "procedure", &o);
    cr_expect_eq(t->origin_ns, 5000 * MS, "the first sample, without a start_time");
    cr_expect_eq(t->t0_s, 0);
    cr_expect(near(t->t1_s, 1.0, 1e-12));
    cr_expect(near(t->profile_end_s, 1.0, 1e-12));
    cr_expect_eq(t->view_samples, TWO_N);
    cr_expect_eq(t->thread_samples, TWO_N + 401);
    cr_assert_eq(t->nkeys, 3);
    cr_expect(near(key_named(t, "main")->wall_s, 0.5, 1e-9));
    cr_expect(near(key_named(t, "foo")->wall_s, 0.5, 1e-9));
    /* A thread's first sample stands for the interval before it too. */
    cr_expect(near(key_named(t, "bar")->wall_s, 0.401, 1e-9));
    cr_expect(near(key_named(t, "bar")->cpu_s, 0.4, 1e-9));
    cr_assert_eq(t->nlanes, 2);
    cr_expect_eq(t->threads_in_view, 2);
    const struct timeline_lane *l1 = &t->lanes[0], *l2 = &t->lanes[1];
    expect_tiled(t, l1);
    expect_tiled(t, l2);
    cr_assert_eq(l1->nspans, 2);
    cr_expect_eq(l1->spans[0].x0, 0);
    cr_expect_eq(l1->spans[0].x1, 50);
    cr_expect_eq(l1->spans[1].x1, 100);
    cr_expect_eq(t->keys[l1->spans[0].key].name[0], 'm');
    cr_assert_eq(l2->nspans, 1);
    cr_expect_eq(l2->spans[0].x0, 59, "bar from 599 ms");
    cr_expect_eq(l2->spans[0].x1, 100);
    cr_expect(near(l1->cpu_s, 0.5, 1e-9));
    cr_expect(near(l2->wall_s, 0.401, 1e-9));
    cr_expect_eq(t->series[0].min, 10);
    cr_expect_eq(t->series[0].max, 20);
    timeline_free(t);
}

Test(timeline, start_and_end_clip_before_downsampling)
{
    static struct two w;
    two_init(&w);
    struct timeline_options o = {.start_s = 0.55, .end_s = 0.8, .columns = 100};
    struct timeline *t = build(&w.p, "procedure", &o);
    cr_expect(near(t->t0_s, 0.55, 1e-12) && near(t->t1_s, 0.8, 1e-12));
    cr_expect_eq(t->view_samples, 250);
    cr_expect_null(key_named(t, "main"), "main ended before the view");
    cr_expect(near(key_named(t, "foo")->wall_s, 0.25, 1e-9));
    cr_expect(near(key_named(t, "bar")->wall_s, 0.201, 1e-9));
    cr_expect_eq(t->series[0].min, 20);
    cr_expect_eq(t->series[0].max, 20);
    cr_assert_eq(t->nlanes, 2);
    /* 2.5 ms per column now: bar's first interval (599, 600] ms is in
     * column 19, and it runs to the end of the view. */
    cr_assert_eq(t->lanes[1].nspans, 1);
    cr_expect_eq(t->lanes[1].spans[0].x0, 19);
    cr_expect_eq(t->lanes[1].spans[0].x1, 100);
    cr_expect_eq(t->lanes[0].spans[0].x0, 0);
    timeline_free(t);

    /* A view in the middle of an interval takes the part it covers. */
    struct timeline_options mid = {.start_s = 0.5995, .end_s = 0.6005, .columns = 10};
    t = build(&w.p, "procedure", &mid);
    cr_expect(near(key_named(t, "bar")->wall_s, 0.001, 1e-9), "%g", key_named(t, "bar")->wall_s);
    cr_expect_eq(t->view_samples, 2);
    timeline_free(t);

    /* An --end past the profile stops at its last sample. */
    struct timeline_options past = {.start_s = 0.9, .end_s = 50, .columns = 10};
    t = build(&w.p, "procedure", &past);
    cr_expect(near(t->t1_s, 1.0, 1e-12));
    timeline_free(t);

    struct key_spec spec;
    key_spec_default(&spec);
    struct strtab *kt = strtab_new();
    char *error = NULL;
    struct timeline_options late = {.start_s = 2, .end_s = -1, .columns = 10};
    cr_expect_null(timeline_builder_new(&w.p, kt, &spec, &late, &error));
    cr_expect(error && strstr(error, "past the profile's end"), "%s", error);
    free(error);
    strtab_free(kt);
}

Test(timeline, energy_counters_become_power_and_current_times_voltage_is_power)
{
    struct prof_thread_sample th[] = {fake_th(1, PC_MAIN, 0)};
    struct prof_channel energy[] = {{"counter", "mJ", PMU_KIND_ENERGY}};
    double e[4][1] = {{0}, {1000}, {3000}, {2000}}; /* the counter went back at the end */
    struct prof_sample s[4];
    for (int i = 0; i < 4; i++)
        s[i] = (struct prof_sample){
            .time_ns = (uint64_t)i * 1000 * MS, .values = e[i], .nthreads = 1, .threads = th};
    struct profile p = {.samples = s, .nsamples = 4, .channels = energy, .nchannels = 1};
    struct timeline_options o = {.end_s = -1, .columns = 3};
    struct timeline *t = build(&p, "procedure", &o);
    cr_assert_eq(t->nseries, 1);
    cr_expect_str_eq(t->series[0].unit, "mW");
    cr_expect(t->series[0].derived);
    cr_expect(near(t->series[0].px[0].mean, 1000, 1e-9), "%g", t->series[0].px[0].mean);
    cr_expect(near(t->series[0].px[1].mean, 2000, 1e-9));
    cr_expect(isnan(t->series[0].px[2].mean), "a decrease is a gap");
    timeline_free(t);

    struct prof_channel iv[] = {{"shunt", "A", PMU_KIND_CURRENT}, {"bus", "V", PMU_KIND_VOLTAGE}};
    double v[4][2] = {{2, 5}, {2, 5}, {3, 5}, {3, 4}};
    for (int i = 0; i < 4; i++)
        s[i].values = v[i];
    p.channels = iv;
    p.nchannels = 2;
    t = build(&p, "procedure", &o);
    cr_assert_eq(t->nseries, 3);
    cr_expect_str_eq(t->series[0].quantity, "current");
    cr_expect_str_eq(t->series[1].unit, "V");
    cr_expect_str_eq(t->series[2].name, "shunt x bus");
    cr_expect_str_eq(t->series[2].unit, "W");
    cr_expect(near(t->series[2].px[0].mean, 10, 1e-9));
    cr_expect(near(t->series[2].px[2].mean, 12, 1e-9));
    cr_expect_eq(t->series[2].max, 15);
    timeline_free(t);
}

Test(timeline, with_too_many_threads_the_busiest_keep_their_lanes)
{
    /* CPU per second: thread 1 10 %, thread 2 90 %, thread 3 50 %. */
    struct prof_thread_sample a[] = {fake_th(1, PC_MAIN, 0), fake_th(2, PC_FOO, 0),
                                     fake_th(3, PC_BAR, 0)};
    struct prof_thread_sample b[] = {fake_th(1, PC_MAIN, 100 * MS), fake_th(2, PC_FOO, 900 * MS),
                                     fake_th(3, PC_BAR, 500 * MS)};
    struct prof_sample s[] = {FAKE_SAMPLE(0, a), FAKE_SAMPLE(1000 * MS, b)};
    struct profile p = {.samples = s, .nsamples = 2};
    struct timeline_options o = {.end_s = -1, .columns = 10, .max_lanes = 2};
    struct timeline *t = build(&p, "procedure", &o);
    cr_expect_eq(t->threads_in_view, 3);
    cr_assert_eq(t->nlanes, 2);
    cr_expect_eq(t->lanes[0].slot, 1, "thread 2, in the order threads appeared");
    cr_expect_eq(t->lanes[1].slot, 2);
    cr_expect_str_eq(t->lanes[0].label, "#2");
    cr_expect_eq(t->nkeys, 3, "the legend still counts every thread");
    timeline_free(t);
}

/* --- hostile names ----------------------------------------------------------------- */

static const char *const hostile[] = {
    "<script>alert(1)</script>",
    "a & b < c > d \"quoted\" 'single'",
    "]]> <![CDATA[ x ]]>",
    "</svg></html><svg onload=alert(1)>",
    "ctl\x01\x02\x1b[31m\x7f\t\r\nend",
    "bad utf8 \xff\xfe \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 \xe2\x82",
    "&amp; &#0; &#x1; &lt;",
    "<!-- comment --> <?pi x?>",
    NULL, /* the long one */
};
#define NHOSTILE (sizeof(hostile) / sizeof(hostile[0]))

static char *long_name(void)
{
    char *s = xmalloc(5001);
    for (int i = 0; i < 5000; i++)
        s[i] = "<&>\"'x"[i % 6];
    s[5000] = '\0';
    return s;
}

/* Every sample has one thread per hostile name, in a function of that
 * name from a binary of that name, as a .pbin's tables say. */
static void hostile_profile(struct profile *p, char *longest)
{
    static struct prof_channel ch[1];
    static struct prof_meta meta[1];
    static struct prof_thread threads[NHOSTILE];
    static struct prof_thread_sample th[20][NHOSTILE];
    static struct prof_sample s[20];
    static double values[20][1];
    static struct prof_location locs[NHOSTILE];
    static struct prof_sym_frame frames[NHOSTILE];
    profile_init(p);
    ch[0] = (struct prof_channel){(char *)hostile[0], (char *)hostile[5], PMU_KIND_POWER};
    meta[0] = (struct prof_meta){"command", (char *)hostile[3]};
    for (size_t k = 0; k < NHOSTILE; k++) {
        const char *name = hostile[k] ? hostile[k] : longest;
        threads[k] = (struct prof_thread){1, (uint32_t)k + 10, 0, 0, (char *)name};
        frames[k] = (struct prof_sym_frame){
            (char *)name, (char *)name, (char *)name, (char *)name, (char *)name, 7, false};
        locs[k] = (struct prof_location){1, 0x1000 + k * 0x10, false, 0x10, 1, &frames[k]};
    }
    for (size_t i = 0; i < 20; i++) {
        for (size_t k = 0; k < NHOSTILE; k++) {
            th[i][k] = fake_th((uint32_t)k + 10, 0x1000 + k * 0x10, i * MS);
            /* Threads change function now and then, so lanes have spans. */
            if ((i / 5) % 2 && k + 1 < NHOSTILE)
                th[i][k].pc = 0x1000 + (k + 1) * 0x10;
        }
        values[i][0] = (double)(i % 7);
        s[i] = (struct prof_sample){
            .time_ns = i * 10 * MS, .values = values[i], .nthreads = NHOSTILE, .threads = th[i]};
    }
    p->channels = ch;
    p->nchannels = 1;
    p->meta = meta;
    p->nmeta = 1;
    p->threads = threads;
    p->nthreads = NHOSTILE;
    p->samples = s;
    p->nsamples = 20;
    p->locations = locs;
    p->nlocations = NHOSTILE;
}

/* What xmllint --xpath computes for EXPR over the document at PATH. */
static char *xpath(const char *path, const char *expr)
{
    const char *lint = getenv("PTPROF_XMLLINT");
    const char *argv[] = {
        lint && *lint ? lint : "/usr/bin/xmllint", "--nonet", "--xpath", expr, path, NULL};
    struct spawn_opts o = {.argv = argv, .timeout_s = 60};
    struct spawn_result r;
    spawn_run(&o, &r);
    char *out = xstrdup(r.out);
    out[strcspn(out, "\n")] = '\0';
    spawn_result_free(&r);
    return out;
}

static void expect_xpath(const char *path, const char *expr, const char *want)
{
    char *got = xpath(path, expr);
    cr_expect_str_eq(got, want, "%s: %s is %s, want %s", path, expr, got, want);
    free(got);
}

static void expect_clean(const char *path, const char *longest)
{
    char *msg = NULL;
    cr_expect(xmlcheck_file(path, &msg), "%s: xmllint: %s", path, msg);
    free(msg);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    char *doc = xmalloc(4 << 20);
    size_t n = fread(doc, 1, (4 << 20) - 1, f);
    fclose(f);
    doc[n] = '\0';
    cr_expect_lt(n, (size_t)(2 << 20), "%s: %zu bytes", path, n);
    cr_expect_null(strstr(doc, "<script"), "%s: a script element", path);
    cr_expect_null(strstr(doc, "<!--"), "%s: a comment from a name", path);
    cr_expect_null(strstr(doc, "<![CDATA["), "%s: a CDATA section from a name", path);
    cr_expect_null(memchr(doc, '\x01', n), "%s: a control character", path);
    cr_expect_null(strstr(doc, "\xff"), "%s: invalid UTF-8", path);
    /* The names are there, escaped. */
    cr_expect_not_null(strstr(doc, "&lt;script&gt;alert(1)&lt;/script&gt;"), "%s", path);
    cr_expect_not_null(strstr(doc, "a &amp; b &lt; c &gt; d"), "%s", path);
    /* The long name is cut: never written whole. */
    cr_expect_null(strstr(doc, longest), "%s: the 5000-character name whole", path);
    free(doc);
    /* As a parser sees it: one picture, no script, no event handler, no
     * element of a name's making, and the names whole in the tooltips. */
    expect_xpath(path, "count(//*[local-name()='svg'])", "1");
    expect_xpath(path, "count(//*[local-name()='script'] | //@*[starts-with(name(), 'on')])", "0");
    expect_xpath(path,
                 "count(//*[local-name()='title'][contains(., '<script>alert(1)</script>')]) "
                 "> 0",
                 "true");
    expect_xpath(path, "count(//*[local-name()='title'][contains(., 'a & b < c > d')]) > 0",
                 "true");
}

Test(timeline, hostile_names_give_well_formed_svg_and_html)
{
    cr_assert(xmlcheck_available(), "xmllint missing: scripts/install-deps --test");
    char *longest = long_name();
    struct profile p;
    hostile_profile(&p, longest);
    struct session_options so = {.cache = false};
    key_spec_parse("binary,procedure", &so.walk.keys, (char[160]){0}, 160);
    struct timeline_options o = {.end_s = -1, .columns = timeline_svg_columns(900)};
    struct timeline *t = NULL;
    cr_assert_eq(timeline_build("hostile.pbin", &p, &so, &o, &t), 0);
    cr_assert_eq(t->nlanes, NHOSTILE);
    cr_assert_geq(t->nkeys, NHOSTILE);
    cr_expect_not_null(key_named(t, "<script>alert(1)</script>:<script>alert(1)</script>"),
                       "names reach the timeline unchanged");
    char *dir = test_mkdtemp();
    char *svg = test_path(dir, "t.svg"), *html = test_path(dir, "t.html");
    struct timeline_svg_options so_svg = {.legend_keys = 30};
    FILE *f = fopen(svg, "w");
    cr_assert_not_null(f);
    cr_assert_eq(timeline_svg_write(f, t, &so_svg), 0);
    fclose(f);
    f = fopen(html, "w");
    cr_assert_not_null(f);
    cr_assert_eq(timeline_html_write(f, t, &so_svg), 0);
    fclose(f);
    expect_clean(svg, longest);
    expect_clean(html, longest);
    timeline_free(t);
    test_rmtree(dir);
    free(dir);
    free(svg);
    free(html);
    free(longest);
}

Test(timeline, an_empty_profile_still_draws_a_page)
{
    cr_assert(xmlcheck_available(), "xmllint missing: scripts/install-deps --test");
    struct profile p;
    profile_init(&p);
    struct timeline_options o = {.end_s = -1, .columns = timeline_svg_columns(400)};
    struct timeline *t = build(&p, "procedure", &o);
    cr_expect_eq(t->nlanes, 0);
    cr_expect_eq(t->nseries, 0);
    char *doc = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&doc, &len);
    struct timeline_svg_options so = {0};
    cr_assert_eq(timeline_svg_write(f, t, &so), 0);
    fclose(f);
    char *msg = NULL;
    cr_expect(xmlcheck_string(doc, len, &msg), "xmllint: %s", msg);
    cr_expect_not_null(strstr(doc, "No thread was sampled"));
    free(msg);
    free(doc);
    timeline_free(t);
}
