/*
 * test_report_views.c - the other views of a report on synthetic stacks:
 * callers and callees of a function (analyze/callgraph.h), the call tree
 * (analyze/calltree.h), the mean of several runs (analyze/multi.h), and
 * ordering and selection of rows (analyze/select.h).
 */
#include "test_report_fake.h"

#include "analyze/callgraph.h"
#include "analyze/calltree.h"
#include "analyze/multi.h"
#include "analyze/select.h"
#include "util/xalloc.h"

static const double NS = 1e-9;

/* bar called from foo (7 samples of 10 ns), from main directly (3), and
 * bar with no caller at all (1); main itself running (2). */
static uint64_t via_foo[] = {PC_BAR + 1, PC_FOO + 0x10, PC_MAIN + 0x10};
static uint64_t via_main[] = {PC_BAR + 2, PC_MAIN + 0x20};
static uint64_t alone[] = {PC_BAR + 3};
static uint64_t in_main[] = {PC_MAIN + 4};
static struct prof_stack stacks[] = {
    {0, NULL}, {3, via_foo}, {2, via_main}, {1, alone}, {1, in_main}};

#define NSAMPLES 14
static struct prof_thread_sample ths[NSAMPLES][1];
static struct prof_sample samples[NSAMPLES];

/* Sample 0 only introduces the thread; then 7 x via_foo, 3 x via_main,
 * 1 x alone, 2 x in_main, 10 ns of CPU each.  SCALE multiplies the CPU. */
static struct profile make_profile(uint64_t scale)
{
    static const uint32_t order[NSAMPLES] = {4, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 4, 4};
    for (int i = 0; i < NSAMPLES; i++) {
        ths[i][0] = fake_ths(1, order[i], (uint64_t)i * 10 * scale);
        samples[i] = (struct prof_sample){
            .time_ns = (uint64_t)(i + 1) * 100, .nthreads = 1, .threads = ths[i]};
    }
    return (struct profile){
        .samples = samples, .nsamples = NSAMPLES, .stacks = stacks, .nstacks = 5};
}

static void focus(const struct profile *p, const char *function, enum report_focus dir,
                  struct report *out)
{
    struct walk_options wo = {0};
    key_spec_default(&wo.keys);
    struct strtab *kt = strtab_new(), *nt = strtab_new();
    struct callgraph *g = callgraph_new(kt, nt, &wo.keys, function, dir);
    struct walk_visitor v = callgraph_visitor(g);
    struct frame_resolver r = {fake_resolve, NULL};
    struct walk_totals t;
    char *error = NULL;
    cr_assert_eq(walk_profile(p, &r, &wo, kt, nt, &v, &t, &error), 0);
    callgraph_report(g, &t, metric_builtin(METRIC_CPU), out);
    callgraph_free(g);
    strtab_free(nt);
    strtab_free(kt);
}

Test(report_views, callers_of_a_function_share_its_total)
{
    struct profile p = make_profile(1);
    struct report r;
    focus(&p, "bar", FOCUS_CALLERS, &r);
    cr_expect(r.focus_found);
    cr_expect(fake_close(report_base(&r, metric_builtin(METRIC_CPU)), 110 * NS));
    cr_expect(
        fake_close(report_pct(&r, fake_row(&r, "prog:foo"), metric_builtin(METRIC_CPU), false),
                   100.0 * 7 / 11));
    cr_expect(
        fake_close(report_pct(&r, fake_row(&r, "prog:main"), metric_builtin(METRIC_CPU), false),
                   100.0 * 3 / 11));
    cr_expect(fake_close(fake_row(&r, "[no caller]:[no caller]")->self[Q_CPU], 10 * NS));
    cr_expect_eq(r.nrows, 3);
    report_free(&r);
}

Test(report_views, callees_of_a_function_and_its_self_make_100_percent)
{
    struct profile p = make_profile(1);
    struct report r;
    focus(&p, "main", FOCUS_CALLEES, &r);
    cr_expect(fake_close(report_base(&r, metric_builtin(METRIC_CPU)), 120 * NS));
    cr_expect(fake_close(fake_row(&r, "prog:foo")->self[Q_CPU], 70 * NS));
    cr_expect(fake_close(fake_row(&r, "prog:bar")->self[Q_CPU], 30 * NS));
    cr_expect(fake_close(fake_row(&r, "[self]:[self]")->self[Q_CPU], 20 * NS));
    double sum = 0;
    for (size_t i = 0; i < r.nrows; i++)
        sum += report_pct(&r, &r.rows[i], metric_builtin(METRIC_CPU), false);
    cr_expect(fake_close(sum, 100));
    report_free(&r);

    focus(&p, "no_such_function", FOCUS_CALLEES, &r);
    cr_expect_not(r.focus_found);
    cr_expect_eq(r.nrows, 0);
    report_free(&r);
}

Test(report_views, recursion_and_cxx_names)
{
    uint64_t recursive[] = {PC_REC + 1, PC_REC + 0x11, PC_CXX + 0x11, PC_MAIN + 0x10};
    struct prof_stack st[] = {{0, NULL}, {4, recursive}};
    struct prof_thread_sample s0[] = {fake_ths(1, 1, 0)};
    struct prof_thread_sample s1[] = {fake_ths(1, 1, 40)};
    struct prof_sample sm[] = {FAKE_SAMPLE(1, s0), FAKE_SAMPLE(2, s1)};
    struct profile p = {.samples = sm, .nsamples = 2, .stacks = st, .nstacks = 2};
    struct report r;
    focus(&p, "rec", FOCUS_CALLERS, &r);
    /* rec calls itself and is called by ns::f: each once per stack. */
    cr_expect(fake_close(
        report_pct(&r, fake_row(&r, "prog:rec"), metric_builtin(METRIC_CPU), false), 100));
    cr_expect(fake_close(
        report_pct(&r, fake_row(&r, "prog:ns::f(int)"), metric_builtin(METRIC_CPU), false), 100));
    report_free(&r);
    /* A C++ function by its name without parameters, or mangled. */
    focus(&p, "ns::f", FOCUS_CALLERS, &r);
    cr_expect(fake_close(fake_row(&r, "prog:main")->self[Q_CPU], 40 * NS));
    report_free(&r);
    focus(&p, "_ZN2ns1fEi", FOCUS_CALLEES, &r);
    cr_expect(fake_close(fake_row(&r, "prog:rec")->self[Q_CPU], 40 * NS));
    report_free(&r);
    focus(&p, "ns", FOCUS_CALLERS, &r);
    cr_expect_not(r.focus_found, "a prefix of a name is not the name");
    report_free(&r);
}

Test(report_views, a_pattern_matches_every_function_it_names)
{
    struct profile p = make_profile(1);
    struct report r;
    /* "b*" is bar: the same answer as the name itself. */
    focus(&p, "b*", FOCUS_CALLERS, &r);
    cr_expect(r.focus_found);
    cr_expect(fake_close(report_base(&r, metric_builtin(METRIC_CPU)), 110 * NS));
    cr_expect(fake_close(fake_row(&r, "prog:foo")->self[Q_CPU], 70 * NS));
    report_free(&r);
    /* "[bf]o*" and "?ar" name foo and bar together: their callers are main
     * (for both) and foo (for bar); each path counts once. */
    focus(&p, "[fb]*", FOCUS_CALLERS, &r);
    cr_expect(fake_close(report_base(&r, metric_builtin(METRIC_CPU)), 110 * NS));
    cr_expect(fake_close(fake_row(&r, "prog:main")->self[Q_CPU], 100 * NS));
    cr_expect(fake_close(fake_row(&r, "prog:foo")->self[Q_CPU], 70 * NS));
    report_free(&r);
    focus(&p, "?ar", FOCUS_CALLEES, &r);
    cr_expect(fake_close(fake_row(&r, "[self]:[self]")->self[Q_CPU], 110 * NS));
    report_free(&r);
    /* A pattern that matches nothing finds nothing; a pattern is whole. */
    focus(&p, "zz*", FOCUS_CALLERS, &r);
    cr_expect_not(r.focus_found);
    report_free(&r);
    focus(&p, "a*", FOCUS_CALLERS, &r);
    cr_expect_not(r.focus_found, "a pattern matches whole names, not parts");
    report_free(&r);
}

Test(report_views, frames_from_memory_without_code_end_the_stack)
{
    /* foo's caller was read from the heap (a bad unwind); what follows is
     * garbage too, even where it looks like main. */
    uint64_t bogus[] = {PC_FOO + 1, PC_HEAP + 0x11, PC_MAIN + 0x10};
    struct prof_stack st[] = {{0, NULL}, {3, bogus}};
    struct prof_thread_sample s0[] = {fake_ths(1, 1, 0)};
    struct prof_thread_sample s1[] = {fake_ths(1, 1, 40)};
    struct prof_sample sm[] = {FAKE_SAMPLE(1, s0), FAKE_SAMPLE(2, s1)};
    struct profile p = {.samples = sm, .nsamples = 2, .stacks = st, .nstacks = 2};
    struct report r;
    fake_analyze(&p, "binary", &r);
    cr_expect_null(fake_find(&r, "[heap]"), "no row for a frame that is not code");
    cr_expect(fake_close(fake_row(&r, "prog")->total[Q_CPU], 40 * NS));
    report_free(&r);
    fake_analyze(&p, "procedure", &r);
    cr_expect_null(fake_find(&r, "main"), "frames after a bogus one are dropped");
    cr_expect(fake_close(fake_row(&r, "foo")->self[Q_CPU], 40 * NS));
    report_free(&r);
}

static const struct calltree_node *tree_child(const struct calltree *t, uint32_t node,
                                              const char *key)
{
    for (uint32_t k = t->nodes[node].first_child; k != CALLTREE_NONE;
         k = t->nodes[k].next_sibling) {
        char *d = key_display(strtab_get(t->keys, t->nodes[k].key));
        bool same = strcmp(d, key) == 0;
        free(d);
        if (same)
            return &t->nodes[k];
    }
    cr_assert_fail("no child %s", key);
    return NULL;
}

Test(report_views, call_tree_of_two_runs_is_their_mean)
{
    struct walk_options wo = {0};
    key_spec_default(&wo.keys);
    struct strtab *kt = strtab_new(), *nt = strtab_new();
    struct calltree *t = calltree_new(kt, &wo.keys);
    struct walk_visitor v = calltree_visitor(t);
    struct frame_resolver r = {fake_resolve, NULL};
    for (uint64_t scale = 1; scale <= 3; scale += 2) {
        struct profile p = make_profile(scale);
        struct walk_totals wt;
        char *error = NULL;
        cr_assert_eq(walk_profile(&p, &r, &wo, kt, nt, &v, &wt, &error), 0);
        calltree_add_run(t, &wt);
    }
    calltree_finish(t, metric_builtin(METRIC_CPU));
    cr_expect_eq(t->totals.runs, 2);
    /* Mean of 1x and 3x: 2x. */
    cr_expect(fake_close(calltree_total(t, 0)[Q_CPU], 260 * NS));
    const struct calltree_node *main_ = tree_child(t, 0, "prog:main");
    uint32_t mi = (uint32_t)(main_ - t->nodes);
    cr_expect(fake_close(calltree_total(t, mi)[Q_CPU], 240 * NS));
    cr_expect(fake_close(main_->self[Q_CPU], 40 * NS));
    const struct calltree_node *foo = tree_child(t, mi, "prog:foo");
    uint32_t fi = (uint32_t)(foo - t->nodes);
    cr_expect(fake_close(calltree_total(t, fi)[Q_CPU], 140 * NS));
    cr_expect(fake_close(tree_child(t, fi, "prog:bar")->self[Q_CPU], 140 * NS));
    uint32_t bar_in_main = (uint32_t)(tree_child(t, mi, "prog:bar") - t->nodes);
    uint32_t bar_alone = (uint32_t)(tree_child(t, 0, "prog:bar") - t->nodes);
    cr_expect(fake_close(calltree_total(t, bar_in_main)[Q_CPU], 60 * NS));
    cr_expect(fake_close(calltree_total(t, bar_alone)[Q_CPU], 20 * NS));
    /* Children come ordered by their total. */
    cr_expect_eq(t->nodes[mi].first_child, (uint32_t)(foo - t->nodes));
    calltree_free(t);
    strtab_free(nt);
    strtab_free(kt);
}

Test(report_views, mean_of_two_runs_per_key)
{
    struct report a, b;
    struct profile p = make_profile(1);
    fake_analyze(&p, "procedure", &a);
    /* The second run is three times as long, and has a key of its own. */
    p = make_profile(3);
    ths[NSAMPLES - 1][0].stack = 0;
    ths[NSAMPLES - 1][0].pc = PC_REC;
    fake_analyze(&p, "procedure", &b);
    const struct report *both[] = {&a, &b};
    struct report m;
    report_mean(both, 2, &m);
    fake_expect_consistent(&m);
    cr_expect_eq(m.totals.runs, 2);
    cr_expect(fake_close(m.totals.cpu_s, (130 + 390) * NS / 2));
    cr_expect(fake_close(fake_row(&m, "bar")->self[Q_CPU], (110 + 330) * NS / 2));
    cr_expect(fake_close(fake_row(&m, "main")->self[Q_CPU], (20 + 30) * NS / 2));
    cr_expect(fake_close(fake_row(&m, "rec")->self[Q_CPU], 30 * NS / 2), "absent in run 1");
    cr_expect(fake_close(fake_row(&m, "main")->total[Q_CPU], (120 + 330) * NS / 2));
    cr_expect(fake_close(m.totals.samples, NSAMPLES));
    cr_expect(fake_close(report_pct(&m, fake_row(&m, "bar"), metric_builtin(METRIC_CPU), false),
                         100.0 * 440 / 520));
    report_free(&m);
    report_free(&a);
    report_free(&b);
}

/* The mean that uses its inputs up is the same mean: of one run, the run's
 * own rows (not a copy), of several, the inputs' rows freed once merged. */
Test(report_views, mean_taking_its_inputs_is_the_same_mean_without_a_copy)
{
    struct report a, b, a_copy, b_copy;
    struct profile p = make_profile(1);
    fake_analyze(&p, "procedure", &a);
    fake_analyze(&p, "procedure", &a_copy);
    p = make_profile(3);
    fake_analyze(&p, "procedure", &b);
    fake_analyze(&p, "procedure", &b_copy);

    const struct report *one[] = {&a_copy};
    struct report expected, m;
    report_mean(one, 1, &expected);
    struct report_row *rows = a.rows;
    struct report *one_taken[] = {&a};
    report_mean_taking(one_taken, 1, &m);
    cr_expect_eq(m.rows, rows, "one run's rows are the mean's");
    cr_expect_eq(a.nrows, 0);
    cr_expect_eq(m.nrows, expected.nrows);
    cr_expect(fake_close(m.totals.cpu_s, expected.totals.cpu_s));
    cr_expect(
        fake_close(fake_row(&m, "bar")->self[Q_CPU], fake_row(&expected, "bar")->self[Q_CPU]));
    cr_expect(
        fake_close(fake_row(&m, "main")->total[Q_CPU], fake_row(&expected, "main")->total[Q_CPU]));
    report_free(&m);
    report_free(&expected);
    report_free(&a);

    p = make_profile(1);
    fake_analyze(&p, "procedure", &a);
    const struct report *both[] = {&a_copy, &b_copy};
    struct report *both_taken[] = {&a, &b};
    report_mean(both, 2, &expected);
    report_mean_taking(both_taken, 2, &m);
    cr_expect_eq(a.nrows + b.nrows, 0, "merged rows are freed");
    cr_expect(a.rows == NULL && b.rows == NULL);
    cr_expect_eq(m.nrows, expected.nrows);
    cr_expect(fake_close(m.totals.cpu_s, expected.totals.cpu_s));
    cr_expect(
        fake_close(fake_row(&m, "bar")->self[Q_CPU], fake_row(&expected, "bar")->self[Q_CPU]));
    report_free(&m);
    report_free(&expected);
    report_free(&a);
    report_free(&b);
    report_free(&a_copy);
    report_free(&b_copy);
}

static void add_row(struct report *r, const char *id, double self, double total)
{
    r->rows = xrealloc(r->rows, (r->nrows + 1) * sizeof(*r->rows));
    struct report_row *row = &r->rows[r->nrows++];
    memset(row, 0, sizeof(*row));
    row->id = xstrdup(id);
    row->self[Q_CPU] = self;
    row->total[Q_CPU] = total;
}

static void make_rows(struct report *r)
{
    memset(r, 0, sizeof(*r));
    key_spec_default(&r->keys);
    r->metric = *metric_builtin(METRIC_CPU);
    r->base[Q_CPU] = 100;
    add_row(r, "e", 5, 5);
    add_row(r, "b", 30, 30);
    add_row(r, "top", 0, 80);
    add_row(r, "a", 50, 90);
    add_row(r, "c", 15, 15);
    add_row(r, "d", 0, 0);
}

static const char *id_at(const struct report *r, size_t i)
{
    return i < r->nrows ? r->rows[i].id : "(none)";
}

Test(report_views, rows_sort_by_self_then_total_then_key)
{
    struct report r;
    make_rows(&r);
    report_select(&r, -1, -1);
    const char *order[] = {"a", "b", "c", "e", "top", "d"};
    cr_assert_eq(r.nrows, 6);
    for (size_t i = 0; i < 6; i++)
        cr_expect_str_eq(id_at(&r, i), order[i]);
    cr_expect_eq(r.hidden, 0);
    report_free(&r);
}

Test(report_views, threshold_and_limit)
{
    struct report r;
    make_rows(&r);
    /* Under 10 % both ways: e and d go; "top" stays by its total. */
    report_select(&r, -1, 10);
    cr_assert_eq(r.nrows, 4);
    cr_expect_str_eq(id_at(&r, 3), "top");
    cr_expect_eq(r.hidden, 2);
    report_free(&r);

    /* The top rows until they hold 80 %: a (50) then b (reaches 80). */
    make_rows(&r);
    report_select(&r, 80, -1);
    cr_assert_eq(r.nrows, 2);
    cr_expect_str_eq(id_at(&r, 0), "a");
    cr_expect_str_eq(id_at(&r, 1), "b");
    report_free(&r);

    make_rows(&r);
    report_select(&r, 81, -1);
    cr_expect_eq(r.nrows, 3);
    report_free(&r);
}

/* Rows with these self values (the base is their sum), then a caller
 * with no self value and a row with nothing. */
static void make_share_rows(struct report *r, const double *self, size_t n)
{
    memset(r, 0, sizeof(*r));
    key_spec_default(&r->keys);
    r->metric = *metric_builtin(METRIC_CPU);
    double base = 0;
    char id[24]; /* "r" and any size_t */
    for (size_t i = 0; i < n; i++) {
        snprintf(id, sizeof(id), "r%zu", i);
        add_row(r, id, self[i], self[i]);
        base += self[i];
    }
    r->base[Q_CPU] = base;
    add_row(r, "caller", 0, base);
    add_row(r, "nothing", 0, 0);
}

/* The shares of 915, 856 and 30 of 1801 add up to 100.00000000000001 in
 * doubles, those of 786, 781 and 3 of 1570 to 99.99999999999999: whether
 * the rows without a self share stayed under --limit 100 was decided by
 * that rounding (a pprof file read back sums the same CPU time in another
 * grouping, and its report lost a [syscall futex] sample the recording's
 * report showed).  100 keeps every row. */
Test(report_views, limit_100_keeps_every_row_however_the_shares_round)
{
    static const double over[] = {915, 856, 30}, under[] = {786, 781, 3};
    const double *sets[] = {over, under};
    for (size_t k = 0; k < 2; k++) {
        struct report r;
        make_share_rows(&r, sets[k], 3);
        report_select(&r, 100, 0);
        cr_expect_eq(r.nrows, 5, "set %zu: %zu rows kept of 5", k, r.nrows);
        cr_expect_eq(r.hidden, 0);
        report_free(&r);
    }
}

/* 677, 257 and 182 are exactly 90 % of 1240, 89.99999999999999 % in
 * doubles: the row of 10 % after them goes under --limit 90. */
Test(report_views, limit_reached_exactly_is_reached_however_the_shares_round)
{
    static const double self[] = {677, 257, 182, 124};
    struct report r;
    make_share_rows(&r, self, 4);
    report_select(&r, 90, -1);
    cr_assert_eq(r.nrows, 3, "%zu rows kept, the fourth is %s", r.nrows, id_at(&r, 3));
    cr_expect_str_eq(id_at(&r, 2), "r2");
    report_free(&r);
    cr_expect(report_limit_reached(90 - 1e-12, 90));
    cr_expect(!report_limit_reached(90 - 1e-6, 90));
    cr_expect(!report_limit_reached(100.5, -1));
}
