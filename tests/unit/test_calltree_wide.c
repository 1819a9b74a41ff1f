/* test_calltree_wide.c - a call tree that keeps only its wide nodes
 * (calltree_keep_wide(), what the flame graph builds): against the whole
 * tree of the same walk, it holds exactly the nodes at least the fraction
 * wide under parents that are, each with the whole tree's totals, self,
 * values and inlined mark, over several runs, stacks cut short, energy no
 * thread used and values that may be negative. */
#include "analyze/calltree.h"
#include "analyze/path_sums.h"
#include "render/tree_render.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAMES 12
#define FRACTION 0.004

static uint64_t rng_state;

static uint32_t below(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

struct pair {
    struct strtab *keys;
    uint32_t names[NAMES + 2]; /* the last two only in the paths of values that cancel */
    struct calltree *whole, *wide;
};

static void feed(struct pair *p, const struct walk_event *e)
{
    struct calltree *trees[2] = {p->whole, p->wide};
    for (int i = 0; i < 2; i++) {
        struct walk_visitor v = calltree_visitor(trees[i]);
        v.sample(v.ctx, e);
    }
}

/* Two runs of random stacks over a few names (so paths share prefixes
 * and recurse), some inlined frames, some cut short, a skewed CPU time
 * (a few hot paths, many cold ones), one value column, energy no thread
 * used. */
static void walk_runs(struct pair *p, bool negative_values)
{
    struct prof_value_type type = {.name = "alloc_space", .unit = "bytes", .agg = PROF_VALUE_SUM};
    for (int i = 0; i < 2; i++) {
        char *error = NULL;
        struct calltree *t = i ? p->wide : p->whole;
        cr_assert_eq(value_columns_add(&t->columns, &type, &error), 0);
    }
    for (int run = 0; run < 2; run++) {
        for (int s = 0; s < 4000; s++) {
            struct path_frame frames[16];
            uint32_t n = 1 + below(10);
            bool hot = below(4) == 0;
            for (uint32_t f = 0; f < n; f++)
                frames[f] = (struct path_frame){
                    .key = p->names[hot ? (n - f) % 3 : below(NAMES)],
                    .inlined = f + 1 < n && below(8) == 0,
                };
            struct path path = {.nframes = n, .frames = frames};
            double cpu = hot ? 0.01 * (1 + below(5)) : 0.0001 * (1 + below(50));
            double q[Q_COUNT] = {
                [Q_SAMPLES] = 1, [Q_CPU] = cpu, [Q_WALL] = 2 * cpu, [Q_ENERGY] = 3 * cpu};
            double bytes = (double)below(4096);
            if (negative_values && below(5) == 0)
                bytes = -2 * bytes;
            struct walk_event e = {
                .path = &path,
                .q = q,
                .values = &bytes,
                .nvalues = 1,
                .stack_cut = below(50) == 0,
            };
            feed(p, &e);
        }
        if (negative_values) { /* g gives back what g;h took: g is narrow, not h */
            struct path_frame frames[2] = {{.key = p->names[NAMES + 1]}, {.key = p->names[NAMES]}};
            struct path path = {.nframes = 2, .frames = frames};
            double q[Q_COUNT] = {[Q_SAMPLES] = 1}, bytes = 1e7;
            struct walk_event e = {.path = &path, .q = q, .values = &bytes, .nvalues = 1};
            feed(p, &e);
            path = (struct path){.nframes = 1, .frames = frames + 1};
            bytes = -1e7;
            feed(p, &e);
        }
        struct calltree *trees[2] = {p->whole, p->wide};
        struct walk_totals wt = {.energy_j = 3, .unattributed_j = 1, .has_energy = true};
        for (int i = 0; i < 2; i++) {
            struct walk_visitor v = calltree_visitor(trees[i]);
            v.unattributed(v.ctx, 1.0, 0.5);
            calltree_add_run(trees[i], &wt);
        }
    }
}

static void pair_init(struct pair *p, uint64_t seed)
{
    rng_state = seed;
    struct key_spec spec;
    char err[100];
    cr_assert_eq(key_spec_parse("procedure", &spec, err, sizeof(err)), 0);
    p->keys = strtab_new();
    for (int i = 0; i < NAMES + 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), i < NAMES ? "f%d" : "g%d", i);
        p->names[i] = strtab_intern_str(p->keys, name);
    }
    p->whole = calltree_new(p->keys, &spec);
    p->wide = calltree_new(p->keys, &spec);
    calltree_keep_wide(p->wide, 2 * FRACTION); /* it keeps half the cut it is given */
}

static void pair_free(struct pair *p)
{
    calltree_free(p->whole);
    calltree_free(p->wide);
    strtab_free(p->keys);
}

static bool close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b)) + 1e-12;
}

/* The node of the whole tree at the path of the wide tree's node ID. */
static uint32_t whole_node(const struct pair *p, uint32_t id)
{
    if (id == 0)
        return 0;
    uint32_t parent = whole_node(p, p->wide->nodes[id].parent);
    if (parent == CALLTREE_NONE)
        return CALLTREE_NONE;
    for (uint32_t c = p->whole->nodes[parent].first_child; c != CALLTREE_NONE;
         c = p->whole->nodes[c].next_sibling)
        if (p->whole->nodes[c].key == p->wide->nodes[id].key)
            return c;
    return CALLTREE_NONE;
}

/* Nodes of the whole tree the wide one must hold: wide enough, under
 * parents that are. */
static size_t count_wide(const struct calltree *t, uint32_t id, double threshold)
{
    double v = calltree_value(t, id, &t->metric, true);
    if (id != 0 && (!(v > 0) || v < threshold))
        return 0;
    size_t n = 1;
    for (uint32_t c = t->nodes[id].first_child; c != CALLTREE_NONE; c = t->nodes[c].next_sibling)
        n += count_wide(t, c, threshold);
    return n;
}

/* Children of node ID of T the wide tree must have left out. */
static uint32_t narrow_children(const struct calltree *t, uint32_t id, double threshold)
{
    uint32_t n = 0;
    for (uint32_t c = t->nodes[id].first_child; c != CALLTREE_NONE; c = t->nodes[c].next_sibling) {
        double v = calltree_value(t, c, &t->metric, true);
        n += !(v > 0) || v < threshold;
    }
    return n;
}

/* Nodes of the whole tree wide enough under a parent that is not. */
static size_t wide_under_narrow(const struct calltree *t, double threshold)
{
    size_t n = 0;
    for (uint32_t id = 1; id < t->nnodes; id++) {
        uint32_t up = t->nodes[id].parent;
        double v = calltree_value(t, id, &t->metric, true),
               pv = calltree_value(t, up, &t->metric, true);
        n += up != 0 && v >= threshold && !(pv >= threshold);
    }
    return n;
}

static void check_against_whole(const char *metric_name, bool negative_values, uint64_t seed)
{
    struct pair p;
    pair_init(&p, seed);
    walk_runs(&p, negative_values);
    struct metric m;
    cr_assert_eq(metric_resolve(metric_name, &p.whole->columns, &m), 0);
    calltree_finish(p.whole, &m);
    calltree_finish(p.wide, &m);
    double root = calltree_value(p.whole, 0, &m, true);
    cr_assert_gt(root, 0);
    size_t expected = count_wide(p.whole, 0, FRACTION * root);
    cr_log_info("%s: %zu nodes, %zu kept (%zu expected)", metric_name, p.whole->nnodes,
                p.wide->nnodes, expected);
    /* The test means something: nodes were left out, and many kept. */
    cr_assert_lt(expected, p.whole->nnodes / 4);
    cr_assert_gt(expected, 20);
    if (negative_values)
        cr_assert_gt(wide_under_narrow(p.whole, FRACTION * root), 0);
    cr_expect_eq(p.wide->nnodes, expected, "%zu nodes kept, %zu expected", p.wide->nnodes,
                 expected);
    for (uint32_t id = 0; id < p.wide->nnodes; id++) {
        uint32_t w = whole_node(&p, id);
        cr_assert_neq(w, CALLTREE_NONE, "node %u of the wide tree is not in the whole one", id);
        const char *name = id ? strtab_get(p.keys, p.wide->nodes[id].key) : "root";
        for (int q = 0; q < CALLTREE_Q; q++) {
            cr_expect(close_to(calltree_total(p.wide, id)[q], calltree_total(p.whole, w)[q]),
                      "%s: total %d %g, whole %g", name, q, calltree_total(p.wide, id)[q],
                      calltree_total(p.whole, w)[q]);
            cr_expect(close_to(p.wide->nodes[id].self[q], p.whole->nodes[w].self[q]),
                      "%s: self %d %g, whole %g", name, q, p.wide->nodes[id].self[q],
                      p.whole->nodes[w].self[q]);
        }
        for (size_t c = 0; c < 2; c++)
            cr_expect(close_to(calltree_values(p.wide, id)[c], calltree_values(p.whole, w)[c]),
                      "%s: value %zu", name, c);
        cr_expect_eq(calltree_inlined(p.wide, id), calltree_inlined(p.whole, w), "%s inlined",
                     name);
        cr_expect_eq(calltree_left_out(p.wide, id), narrow_children(p.whole, w, FRACTION * root),
                     "%s: %u children left out", name, calltree_left_out(p.wide, id));
        cr_expect(
            close_to(calltree_value(p.wide, id, &m, true), calltree_value(p.whole, w, &m, true)));
        cr_expect_eq(id == p.wide->unattributed_node, w == p.whole->unattributed_node);
        /* Children in order, widest first. */
        uint32_t c = p.wide->nodes[id].first_child;
        for (; c != CALLTREE_NONE && p.wide->nodes[c].next_sibling != CALLTREE_NONE;
             c = p.wide->nodes[c].next_sibling)
            cr_expect_geq(calltree_value(p.wide, c, &m, true),
                          calltree_value(p.wide, p.wide->nodes[c].next_sibling, &m, true));
    }
    cr_expect(close_to(p.wide->totals.energy_j, p.whole->totals.energy_j));
    pair_free(&p);
}

Test(calltree_wide, keeps_exactly_the_wide_nodes_with_the_whole_trees_totals_by_cpu)
{
    check_against_whole("cpu", false, 0x9e3779b97f4a7c15ull);
}

Test(calltree_wide, keeps_exactly_the_wide_nodes_by_energy_with_energy_no_thread_used)
{
    check_against_whole("energy", false, 0x2545f4914f6cdd1dull);
}

/* A value that may be negative (a pprof of differences): a node narrower
 * than the fraction goes with its subtree even where a child is wider. */
Test(calltree_wide, keeps_exactly_the_wide_nodes_by_a_value_that_may_be_negative)
{
    check_against_whole("alloc_space", true, 0xda942042e4dd58b5ull);
}

/* The paths come out in the order of a depth-first walk: a prefix before
 * what extends it, keys compared without their inlined mark. */
Test(calltree_wide, paths_come_out_in_depth_first_order)
{
    struct path_sums *s = path_sums_new(1);
    const uint32_t a[] = {2, 5}, b[] = {2}, c[] = {2, 5 | PATH_SUMS_INLINED, 1}, d[] = {1, 9};
    double one = 1;
    path_sums_add(s, a, 2, &one, NULL, 0);
    path_sums_add(s, b, 1, &one, NULL, 0);
    path_sums_add(s, c, 3, &one, NULL, 0);
    path_sums_add(s, d, 2, &one, NULL, 0);
    path_sums_add(s, a, 2, &one, NULL, 0);
    double two = 2;
    path_sums_add(s, b, 1, &two, &two, 1); /* a column more */
    cr_assert_eq(path_sums_count(s), 4);
    cr_assert_eq(path_sums_columns(s), 1);
    uint32_t *order = path_sums_order(s);
    const uint32_t want_first[] = {1, 2, 2, 2}, want_len[] = {2, 1, 2, 3};
    const double want_q[] = {1, 3, 2, 1}, want_v[] = {0, 2, 0, 0};
    for (int i = 0; i < 4; i++) {
        uint32_t n;
        const uint32_t *e = path_sums_elems(s, order[i], &n);
        cr_expect_eq(n, want_len[i], "path %d", i);
        cr_expect_eq(PATH_SUMS_KEY(e[0]), want_first[i], "path %d", i);
        cr_expect_eq(path_sums_of(s, order[i])[0], want_q[i], "path %d", i);
        cr_expect_eq(path_sums_of(s, order[i])[1], want_v[i], "path %d", i);
    }
    free(order);
    path_sums_free(s);
}

static char *tree_text(const struct calltree *t, double threshold_pct, enum render_format format)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    cr_assert_eq(render_tree(f, t, &t->metric, threshold_pct, format, 100), 0);
    fclose(f);
    return buf;
}

/* `report --tree` builds a tree kept wide at half its threshold: shown as
 * text, CSV and JSON, it is the whole tree's, the count of the subtrees
 * hidden included.  By samples, whose sums are exact whatever their order,
 * so equal totals order alike. */
Test(calltree_wide, a_tree_kept_at_half_the_threshold_renders_as_the_whole_tree)
{
    struct pair p;
    pair_init(&p, 0x5851f42d4c957f2dull);
    calltree_free(p.wide);
    struct key_spec spec;
    char err[100];
    cr_assert_eq(key_spec_parse("procedure", &spec, err, sizeof(err)), 0);
    p.wide = calltree_new(p.keys, &spec);
    calltree_keep_wide(p.wide, 0.5 / 100);
    walk_runs(&p, false);
    calltree_finish(p.whole, metric_builtin(METRIC_SAMPLES));
    calltree_finish(p.wide, metric_builtin(METRIC_SAMPLES));
    enum render_format formats[] = {RENDER_TABLE, RENDER_CSV, RENDER_JSON};
    for (size_t i = 0; i < 3; i++) {
        char *whole = tree_text(p.whole, 0.5, formats[i]),
             *wide = tree_text(p.wide, 0.5, formats[i]);
        cr_expect_str_eq(wide, whole, "format %zu", i);
        if (i == 0)
            cr_expect(strstr(whole, "subtrees under 0.5% not shown"), "%s", whole);
        free(whole);
        free(wide);
    }
    cr_assert_lt(p.wide->nnodes, p.whole->nnodes / 10);
    pair_free(&p);
}
