/* test_flamegraph.c - analyze/flame.h and render/flamegraph_svg.h: the
 * layout (widths are the totals, children side by side inside their
 * parent, narrow frames left out without changing any total), the diff
 * colours' sign, inlined frames marked, and a well-formed document
 * (checked by xmllint) whatever the names hold. */
#include "analyze/calltree.h"
#include "analyze/flame.h"
#include "render/flamegraph_svg.h"
#include "test_report_fake.h"

#include "../lib/xmlcheck.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A call tree fed with stacks of names directly, as the walk would. */
struct fake_tree {
    struct strtab *keys;
    struct calltree *t;
};

static void tree_init(struct fake_tree *ft, struct strtab *shared)
{
    struct key_spec spec;
    char err[100];
    cr_assert_eq(key_spec_parse("procedure", &spec, err, sizeof(err)), 0);
    ft->keys = shared ? shared : strtab_new();
    ft->t = calltree_new(ft->keys, &spec);
}

/* STACK is "outer;inner;..." (names may not contain ';' here). A trailing
 * '+' on a name marks that frame inlined. */
static void tree_add(struct fake_tree *ft, const char *stack, double cpu_s)
{
    struct path_frame frames[64];
    uint32_t n = 0;
    char *copy = strdup(stack), *save = NULL;
    const char *names[64];
    for (char *tok = strtok_r(copy, ";", &save); tok && n < 64; tok = strtok_r(NULL, ";", &save))
        names[n++] = tok;
    for (uint32_t i = 0; i < n; i++) { /* innermost first */
        const char *name = names[n - 1 - i];
        size_t len = strlen(name);
        bool inl = len > 1 && name[len - 1] == '+';
        frames[i] = (struct path_frame){.key = strtab_intern(ft->keys, name, inl ? len - 1 : len),
                                        .inlined = inl};
    }
    struct path p = {.nframes = n, .frames = frames};
    double q[Q_COUNT] = {[Q_SAMPLES] = 1, [Q_CPU] = cpu_s, [Q_WALL] = cpu_s};
    struct walk_visitor v = calltree_visitor(ft->t);
    struct walk_event e = {.path = &p, .q = q};
    v.sample(v.ctx, &e);
    free(copy);
}

static void tree_finish(struct fake_tree *ft)
{
    struct walk_totals wt = {0};
    calltree_add_run(ft->t, &wt);
    calltree_finish(ft->t, metric_builtin(METRIC_CPU));
}

static void tree_free(struct fake_tree *ft, bool keys)
{
    calltree_free(ft->t);
    if (keys)
        strtab_free(ft->keys);
}

static char *render(const struct calltree *t, const struct calltree *base,
                    const struct flamegraph_options *o, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    cr_assert_not_null(f);
    cr_assert_eq(flamegraph_svg(f, t, base, o), 0);
    fclose(f);
    if (len)
        *len = n;
    return buf;
}

/* One frame as drawn: its name (the title's first line, as escaped), its
 * box and colour, and its class. */
struct drawn {
    char name[128];
    double x, y, w;
    char fill[16];
    bool inlined, removed;
    double value; /* data-v: the frame's own value in pixels (its width if none) */
    char title[512];
};

static size_t parse_frames(const char *svg, struct drawn *out, size_t max)
{
    const char *p = strstr(svg, "<g id=\"f\">");
    cr_assert_not_null(p);
    size_t n = 0;
    while ((p = strstr(p, "\n<g")) && n < max) {
        p++;
        struct drawn *d = &out[n];
        memset(d, 0, sizeof(*d));
        const char *t = strstr(p, "<title>"), *te = strstr(p, "</title>");
        cr_assert(t && te && te > t);
        char cls[32] = "";
        const char *c = strstr(p, " class=\""), *v = strstr(p, " data-v=\"");
        if (c && c < t)
            sscanf(c + 8, "%31[^\"]", cls);
        d->inlined = strcmp(cls, "i") == 0 || strncmp(cls, "i ", 2) == 0;
        d->removed = strstr(cls, "rm") != NULL;
        d->value = v && v < t ? strtod(v + 9, NULL) : -1;
        t += 7;
        size_t tl =
            (size_t)(te - t) < sizeof(d->title) - 1 ? (size_t)(te - t) : sizeof(d->title) - 1;
        memcpy(d->title, t, tl);
        const char *nl = memchr(t, '\n', (size_t)(te - t));
        size_t nlen = nl ? (size_t)(nl - t) : 0;
        if (nlen >= sizeof(d->name))
            nlen = sizeof(d->name) - 1;
        memcpy(d->name, t, nlen);
        cr_assert_eq(sscanf(te,
                            "</title><rect x=\"%lf\" y=\"%lf\" width=\"%lf\" height=\"15\" "
                            "fill=\"%15[^\"]\"",
                            &d->x, &d->y, &d->w, d->fill),
                     4, "frame %zu: %.200s", n, te);
        if (d->value < 0)
            d->value = d->w;
        n++;
    }
    return n;
}

static const struct drawn *find(const struct drawn *d, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(d[i].name, name) == 0)
            return &d[i];
    return NULL;
}

Test(flamegraph, widths_are_shares_of_the_total)
{
    struct fake_tree ft;
    tree_init(&ft, NULL);
    for (int i = 0; i < 6; i++)
        tree_add(&ft, "main;a;b", 0.01);
    for (int i = 0; i < 3; i++)
        tree_add(&ft, "main;a;c", 0.01);
    tree_add(&ft, "main;d", 0.01);
    tree_finish(&ft);
    struct flamegraph_options o = {.metric = *metric_builtin(METRIC_CPU)};
    char *svg = render(ft.t, NULL, &o, NULL);
    struct drawn d[16];
    size_t n = parse_frames(svg, d, 16);
    cr_assert_eq(n, 6, "all, main, a, b, c, d:\n%s", svg);
    const struct drawn *all = find(d, n, "all"), *m = find(d, n, "main"), *a = find(d, n, "a"),
                       *b = find(d, n, "b"), *c = find(d, n, "c"), *dd = find(d, n, "d");
    cr_assert(all && m && a && b && c && dd);
    cr_expect_float_eq(all->w, 1180, 0.05);
    cr_expect_float_eq(m->w, 1180, 0.05);
    cr_expect_float_eq(a->w, 1062, 0.05);
    cr_expect_float_eq(b->w, 708, 0.05);
    cr_expect_float_eq(c->w, 354, 0.05);
    cr_expect_float_eq(dd->w, 118, 0.05);
    /* Heaviest first, side by side, inside the parent; callees above callers. */
    cr_expect_float_eq(b->x, a->x, 0.05);
    cr_expect_float_eq(c->x, b->x + b->w, 0.1);
    cr_expect_float_eq(dd->x, a->x + a->w, 0.1);
    cr_expect_lt(a->y, m->y);
    cr_expect_float_eq(m->y - a->y, 16, 1e-9);
    cr_expect_float_eq(b->y, c->y, 1e-9);
    cr_expect(strstr(b->title, "6 samples, 60.00 ms CPU, 60.00%"), "%s", b->title);
    cr_expect(strstr(all->title, "10 samples, 100.00 ms CPU, 100.00%"), "%s", all->title);
    /* Same name, same colour; the colour does not depend on the position. */
    cr_expect_str_neq(b->fill, c->fill);
    free(svg);

    o.icicle = true;
    svg = render(ft.t, NULL, &o, NULL);
    n = parse_frames(svg, d, 16);
    all = find(d, n, "all");
    a = find(d, n, "a");
    cr_expect_gt(a->y, all->y, "icicle: the root on top");
    cr_expect(strstr(svg, ">Icicle Graph<"));
    free(svg);
    tree_free(&ft, true);
}

Test(flamegraph, layout_matches_the_tree_exactly)
{
    struct fake_tree ft;
    tree_init(&ft, NULL);
    tree_add(&ft, "main;a;b", 0.5);
    tree_add(&ft, "main;a", 0.25);
    tree_add(&ft, "main;c", 0.125);
    tree_add(&ft, "x", 0.125);
    tree_finish(&ft);
    struct flame f;
    cr_assert_eq(flame_build(&f, ft.t, metric_builtin(METRIC_CPU), 0, NULL), 0);
    cr_assert_eq(f.nframes, 6);
    cr_expect_eq(f.total, 1.0);
    cr_expect_eq(f.max_depth, 3);
    for (size_t i = 1; i < f.nframes; i++) {
        const struct flame_frame *fr = &f.frames[i], *p = &f.frames[fr->parent];
        cr_expect_lt(fr->parent, i, "parents come first");
        cr_expect_eq(fr->depth, p->depth + 1);
        cr_expect_geq(fr->start, p->start);
        cr_expect_leq(fr->start + fr->width, p->start + p->width + 1e-12);
        cr_expect_eq(fr->width, calltree_total(ft.t, fr->node)[Q_CPU]);
    }
    /* Children side by side: the sum of their widths is the parent's total
     * minus its self. */
    for (size_t i = 0; i < f.nframes; i++) {
        double kids = 0;
        for (size_t j = 0; j < f.nframes; j++)
            if (j > 0 && f.frames[j].parent == i)
                kids += f.frames[j].width;
        uint32_t n = f.frames[i].node;
        cr_expect_float_eq(kids, calltree_total(ft.t, n)[Q_CPU] - ft.t->nodes[n].self[Q_CPU], 1e-12,
                           "frame %zu", i);
    }
    flame_free(&f);
    cr_expect_eq(flame_build(&f, ft.t, metric_builtin(METRIC_ENERGY), 0, NULL), -1,
                 "no energy: nothing to draw");
    cr_expect_not(flame_metric_ok(metric_builtin(METRIC_POWER)));
    cr_expect_not(flame_metric_ok(metric_builtin(METRIC_EXECUTIONS)));
    tree_free(&ft, true);
}

Test(flamegraph, narrow_frames_are_left_out_and_totals_stay)
{
    struct fake_tree ft;
    tree_init(&ft, NULL);
    tree_add(&ft, "main;big", 1.0);
    char stack[64];
    for (int i = 0; i < 3000; i++) { /* 3000 callees of 1/4000 px each */
        snprintf(stack, sizeof(stack), "main;many;leaf%d;deeper", i);
        tree_add(&ft, stack, 1e-6);
    }
    tree_finish(&ft);
    struct flamegraph_options o = {.metric = *metric_builtin(METRIC_CPU)};
    size_t len;
    char *svg = render(ft.t, NULL, &o, &len);
    struct drawn d[16];
    size_t n = parse_frames(svg, d, 16);
    cr_expect_eq(n, 4, "all, main, big, many; the leaves are too narrow:\n%.2000s", svg);
    const struct drawn *all = find(d, n, "all"), *m = find(d, n, "main"), *big = find(d, n, "big"),
                       *many = find(d, n, "many");
    cr_assert(all && m && big && many);
    cr_expect_float_eq(all->w, 1180, 0.05);
    cr_expect_float_eq(m->w, 1180, 0.05);
    double share = 3000e-6 / (1.0 + 3000e-6);
    cr_expect_float_eq(many->w, 1180 * share, 0.05, "its width keeps what was left out");
    cr_expect(strstr(many->title, "3,000 samples"), "%s", many->title);
    cr_expect_lt(len, 12000, "left-out frames cost nothing: %zu bytes", len);
    struct flame f;
    cr_assert_eq(flame_build(&f, ft.t, metric_builtin(METRIC_CPU), 0.1 / 1180, NULL), 0);
    cr_expect_eq(f.pruned, 3000, "the leaves, not what is under them");
    cr_expect_float_eq(f.pruned_value, 3000e-6, 1e-12);
    flame_free(&f);
    free(svg);
    tree_free(&ft, true);
}

static void rgb(const char *fill, int *r, int *g, int *b)
{
    cr_assert_eq(sscanf(fill, "#%2x%2x%2x", (unsigned *)r, (unsigned *)g, (unsigned *)b), 3, "%s",
                 fill);
}

Test(flamegraph, diff_colours_follow_the_change_of_share)
{
    struct strtab *keys = strtab_new();
    struct fake_tree base, now;
    tree_init(&base, keys);
    tree_init(&now, keys);
    /* Baseline: b and c even, gone only there.  Now: b grew, c shrank, fresh
     * is new; "same" keeps its share though the profiles' lengths differ. */
    for (int i = 0; i < 40; i++) {
        tree_add(&base, "main;a;b", 0.01);
        tree_add(&base, "main;a;c", 0.01);
    }
    for (int i = 0; i < 10; i++)
        tree_add(&base, "main;gone", 0.01);
    for (int i = 0; i < 10; i++)
        tree_add(&base, "same", 0.01);
    for (int i = 0; i < 140; i++)
        tree_add(&now, "main;a;b", 0.01);
    for (int i = 0; i < 20; i++)
        tree_add(&now, "main;a;c", 0.01);
    for (int i = 0; i < 20; i++)
        tree_add(&now, "main;fresh", 0.01);
    for (int i = 0; i < 20; i++)
        tree_add(&now, "same", 0.01);
    tree_finish(&base);
    tree_finish(&now);
    struct flame f;
    cr_assert_eq(flame_build(&f, now.t, metric_builtin(METRIC_CPU), 0, base.t), 0);
    cr_expect_float_eq(f.gone_share, 0.1, 1e-12, "gone held 10%% of the baseline");
    /* Removed time in the new profile's units: 10 % of its 2 s. */
    cr_expect_float_eq(f.removed, 0.2, 1e-9);
    cr_expect_float_eq(f.span, 2.2, 1e-9);
    flame_free(&f);

    struct flamegraph_options o = {.metric = *metric_builtin(METRIC_CPU)};
    char *svg = render(now.t, base.t, &o, NULL);
    struct drawn d[16];
    size_t n = parse_frames(svg, d, 16);
    int r, g, bl;
    const struct drawn *b = find(d, n, "b"), *c = find(d, n, "c"), *fresh = find(d, n, "fresh"),
                       *same = find(d, n, "same"), *all = find(d, n, "all");
    const struct drawn *gone = find(d, n, "gone"), *main_ = find(d, n, "main");
    cr_assert(b && c && fresh && same && all && main_, "%s", svg);
    /* gone is drawn as removed time: where it was (on main, after main's
     * own children), as wide as its 10 %% of the baseline applied to the
     * new profile, which widens main and the root by as much. */
    cr_assert_not_null(gone, "the frame only in the baseline is drawn: %s", svg);
    cr_expect(gone->removed && !c->removed && !all->removed, "only gone is removed");
    cr_expect_float_eq(gone->w / all->w, 0.2 / 2.2, 1e-3, "gone's width: %g of %g", gone->w,
                       all->w);
    cr_expect_float_eq(main_->w / all->w, 2.0 / 2.2, 1e-3, "main holds 1.8 s and gone's 0.2 s");
    cr_expect_float_eq(gone->x, main_->x + main_->w - gone->w, 0.15, "after main's children");
    cr_expect_lt(gone->y, main_->y, "above main, its caller");
    cr_expect_float_eq(gone->value, 0, 1e-9, "no time of the new profile");
    cr_expect_float_eq(all->value / all->w, 2.0 / 2.2, 1e-3, "the root's own value is 2 s");
    rgb(gone->fill, &r, &g, &bl);
    cr_expect(bl == 255 && r < 255 && g == r, "gone shrank to nothing: blue, not %s", gone->fill);
    cr_expect(strstr(gone->title, "only in the baseline: 10 samples"), "%s", gone->title);
    cr_expect(strstr(gone->title, "removed, -10.00 points"), "%s", gone->title);
    rgb(b->fill, &r, &g, &bl);
    cr_expect(r == 255 && g < 255 && bl == g, "b grew from 40%% to 70%%: red, not %s", b->fill);
    int r2, g2, b2;
    rgb(c->fill, &r2, &g2, &b2);
    cr_expect(b2 == 255 && r2 < 255 && g2 == r2, "c shrank from 40%% to 10%%: blue, not %s",
              c->fill);
    rgb(fresh->fill, &r2, &g2, &b2);
    cr_expect(r2 == 255 && g2 < 255, "fresh is new: red, not %s", fresh->fill);
    cr_expect(g2 > g, "a smaller change is paler (fresh +10 points, b +30): %s vs %s", fresh->fill,
              b->fill);
    cr_expect_str_eq(same->fill, "#f0f0f0", "10%% of both: no change");
    cr_expect_str_eq(all->fill, "#f0f0f0");
    cr_expect(strstr(b->title, "baseline 40.00%, +30.00 points"), "%s", b->title);
    cr_expect(strstr(c->title, "baseline 40.00%, -30.00 points"), "%s", c->title);
    cr_expect(strstr(fresh->title, "not in the baseline"), "%s", fresh->title);
    cr_expect(strstr(svg, "Differential Flame Graph"));
    free(svg);
    tree_free(&now, false);
    tree_free(&base, false);
    strtab_free(keys);
}

Test(flamegraph, inlined_frames_are_marked)
{
    /* Through the real path builder: the fake resolver gives "inl" inlined
     * into "bar" (test_report_fake.h). */
    uint64_t chain[] = {PC_INL + 4, PC_FOO + 0x10, PC_MAIN + 0x10};
    struct prof_stack st[] = {{0, NULL}, {3, chain}};
    struct prof_thread_sample s0[] = {fake_ths(1, 1, 0)};
    struct prof_thread_sample s1[] = {fake_ths(1, 1, 1000000)};
    struct prof_sample sm[] = {FAKE_SAMPLE(1, s0), FAKE_SAMPLE(2, s1)};
    struct profile p = {.samples = sm, .nsamples = 2, .stacks = st, .nstacks = 2};
    struct walk_options wo = {0};
    key_spec_default(&wo.keys);
    struct strtab *kt = strtab_new(), *nt = strtab_new();
    struct calltree *t = calltree_new(kt, &wo.keys);
    struct walk_visitor v = calltree_visitor(t);
    struct frame_resolver res = {fake_resolve, NULL};
    struct walk_totals wt;
    char *error = NULL;
    cr_assert_eq(walk_profile(&p, &res, &wo, kt, nt, &v, &wt, &error), 0);
    calltree_add_run(t, &wt);
    calltree_finish(t, metric_builtin(METRIC_CPU));
    struct flamegraph_options o = {.metric = *metric_builtin(METRIC_SAMPLES)};
    char *svg = render(t, NULL, &o, NULL);
    struct drawn d[16];
    size_t n = parse_frames(svg, d, 16);
    const struct drawn *inl = find(d, n, "inl"), *bar = find(d, n, "bar");
    cr_assert(inl && bar, "%s", svg);
    cr_expect(inl->inlined, "%s", svg);
    cr_expect(strstr(inl->title, "prog, inlined, "), "%s", inl->title);
    cr_expect_not(bar->inlined);
    cr_expect_lt(inl->y, bar->y, "inl drawn on top of the function it was inlined into");
    free(svg);
    calltree_free(t);
    strtab_free(nt);
    strtab_free(kt);
}

/* What a profile from elsewhere may call its functions. */
static const char *const hostile[] = {
    "<script>alert(1)</script>",
    "</script><script>alert(2)</script>",
    "]]><g onload=\"alert(3)\"/><![CDATA[",
    "a & b < c > d \" e ' f",
    "&lt not&amp entity &#x41",
    "ctl\x01\x02\x1b\x7f\xc2\x85",
    "nl\nin\tname\r",
    "bad\xff\xfeutf8\xc3",
    "\xed\xa0\x80surrogate\xf4\x90\x80\x80",
    "caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x94\xa5",
    "operator<<(std::ostream&, std::vector<int, std::allocator<int> > const&)",
};

Test(flamegraph, hostile_names_give_a_well_formed_document)
{
    cr_assert(xmlcheck_available(), "xmllint missing: scripts/install-deps --test");
    struct fake_tree ft;
    tree_init(&ft, NULL);
    size_t nh = sizeof(hostile) / sizeof(*hostile);
    char *longname = malloc(5001);
    for (int i = 0; i < 5000; i++)
        longname[i] = "<&>\"'x]"[i % 7];
    longname[5000] = '\0';
    char stack[4096];
    for (size_t i = 0; i < nh; i++) {
        snprintf(stack, sizeof(stack), "main;%s;%s", hostile[i], hostile[(i + 1) % nh]);
        tree_add(&ft, stack, 0.01 * (double)(i + 1));
    }
    struct path_frame lf[2] = {
        {.key = strtab_intern_str(ft.keys, longname)},
        {.key = strtab_intern_str(ft.keys, "main")},
    };
    struct path lp = {.nframes = 2, .frames = lf};
    double q[Q_COUNT] = {[Q_SAMPLES] = 1, [Q_CPU] = 0.5};
    struct walk_event e = {.path = &lp, .q = q};
    struct walk_visitor v = calltree_visitor(ft.t);
    v.sample(v.ctx, &e);
    tree_finish(&ft);

    for (int icicle = 0; icicle < 2; icicle++) {
        struct flamegraph_options o = {
            .metric = *metric_builtin(METRIC_CPU),
            .icicle = icicle,
            .title = "title </script> ]]> & \x01",
            .subtitle = hostile[2],
        };
        size_t len;
        char *svg = render(ft.t, NULL, &o, &len);
        char *msg;
        cr_expect(xmlcheck_string(svg, len, &msg), "xmllint: %s", msg);
        free(msg);
        /* Nothing from a name became markup or script. */
        const char *s1 = strstr(svg, "<script"), *s2 = s1 ? strstr(s1 + 1, "<script") : NULL;
        cr_expect(s1 && !s2, "one script element, ours");
        const char *c1 = strstr(svg, "]]>");
        cr_expect(c1 && !strstr(c1 + 1, "]]>"), "one CDATA end, ours");
        cr_expect_null(strstr(svg, "<script>alert"));
        cr_expect_null(strstr(svg, "<g onload"));
        for (size_t i = 0; i < len; i++)
            cr_assert(!((unsigned char)svg[i] < 0x20 && svg[i] != '\n' && svg[i] != '\t'),
                      "control byte 0x%02x at %zu", svg[i], i);
        /* Every frame drawn, each name once per frame in the titles: the long
         * one is there whole (5000 characters, escaped). */
        struct drawn d[64];
        size_t n = parse_frames(svg, d, 64);
        cr_expect_eq(n, 2 + 2 * nh + 1, "all, main, the names, the long one: %zu", n);
        cr_expect(strstr(svg, "&lt;&amp;&gt;&quot;&#39;x]&lt;&amp;&gt;"));
        free(svg);
    }
    free(longname);
    tree_free(&ft, true);
}

Test(flamegraph, stats_follow_the_metric)
{
    struct fake_tree ft;
    tree_init(&ft, NULL);
    tree_add(&ft, "main;w", 2.5);
    tree_add(&ft, "main;w", 2.5);
    tree_finish(&ft);
    struct flamegraph_options o = {.metric = *metric_builtin(METRIC_WALL)};
    char *svg = render(ft.t, NULL, &o, NULL);
    struct drawn d[8];
    size_t n = parse_frames(svg, d, 8);
    const struct drawn *w = find(d, n, "w");
    cr_assert(w);
    cr_expect(strstr(w->title, "2 samples, 5.00 s wall, 100.00%"), "%s", w->title);
    free(svg);
    tree_free(&ft, true);
}

static double hue_of(const char *fill)
{
    int r, g, b;
    rgb(fill, &r, &g, &b);
    double R = r / 255.0, G = g / 255.0, B = b / 255.0;
    double mx = fmax(R, fmax(G, B)), mn = fmin(R, fmin(G, B)), d = mx - mn, h;
    cr_assert_gt(d, 0, "%s is grey", fill);
    if (mx == R)
        h = fmod((G - B) / d, 6);
    else if (mx == G)
        h = (B - R) / d + 2;
    else
        h = (R - G) / d + 4;
    h *= 60;
    return h < 0 ? h + 360 : h;
}

Test(flamegraph, binary_palette_gives_each_binary_its_hue)
{
    struct key_spec spec;
    char err[100];
    cr_assert_eq(key_spec_parse("binary,procedure", &spec, err, sizeof(err)), 0);
    struct strtab *keys = strtab_new();
    struct calltree *t = calltree_new(keys, &spec);
    struct walk_visitor v = calltree_visitor(t);
    const char *stacks[][3] = {
        {"prog\x1fmain",
         "prog\x1f"
         "compute",
         "libm.so.6\x1fsin"},
        {"prog\x1fmain", "prog\x1fparse", "libc.so.6\x1fstrlen"},
        {"prog\x1fmain", "libc.so.6\x1fqsort",
         "prog\x1f"
         "compare"},
    };
    for (int s = 0; s < 3; s++) {
        struct path_frame fr[3];
        for (int i = 0; i < 3; i++)
            fr[i] = (struct path_frame){.key = strtab_intern_str(keys, stacks[s][2 - i])};
        struct path p = {.nframes = 3, .frames = fr};
        double q[Q_COUNT] = {[Q_SAMPLES] = 1, [Q_CPU] = 1};
        struct walk_event e = {.path = &p, .q = q};
        v.sample(v.ctx, &e);
    }
    struct walk_totals wt = {0};
    calltree_add_run(t, &wt);
    calltree_finish(t, metric_builtin(METRIC_CPU));
    struct flamegraph_options o = {.metric = *metric_builtin(METRIC_CPU), .colour_by_binary = true};
    char *svg = render(t, NULL, &o, NULL);
    struct drawn d[16];
    size_t n = parse_frames(svg, d, 16);
    const struct drawn *main_ = find(d, n, "main"), *compute = find(d, n, "compute"),
                       *compare = find(d, n, "compare"), *sin_ = find(d, n, "sin"),
                       *qsort_ = find(d, n, "qsort"), *strlen_ = find(d, n, "strlen");
    cr_assert(main_ && compute && compare && sin_ && qsort_ && strlen_, "%s", svg);
    cr_expect_float_eq(hue_of(main_->fill), hue_of(compute->fill), 1.5, "%s %s", main_->fill,
                       compute->fill);
    cr_expect_float_eq(hue_of(main_->fill), hue_of(compare->fill), 1.5);
    cr_expect_float_eq(hue_of(qsort_->fill), hue_of(strlen_->fill), 1.5);
    double dh = fabs(hue_of(main_->fill) - hue_of(qsort_->fill));
    cr_expect_gt(fmin(dh, 360 - dh), 5, "prog and libc apart: %s %s", main_->fill, qsort_->fill);
    cr_expect(strstr(compute->title, "compute\nprog, "), "%s", compute->title);
    free(svg);
    calltree_free(t);
    strtab_free(keys);
}
