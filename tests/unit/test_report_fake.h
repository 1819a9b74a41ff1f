/*
 * test_report_fake.h - what the report unit tests share: a fake resolver
 * (address ranges standing for functions, so tests need no binaries),
 * builders for synthetic profiles, and running the flat aggregation.
 *
 * The fake looks return addresses up at pc - 1, as the symbolizer's
 * contract says, so a return address just past a function's end names
 * that function only when the analysis asks for a return address.
 */
#ifndef PTPROF_TESTS_UNIT_REPORT_FAKE_H
#define PTPROF_TESTS_UNIT_REPORT_FAKE_H

#include "analyze/aggregate.h"
#include "analyze/walk.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Address ranges of the fake program. */
#define PC_MAIN 0x1000
#define PC_FOO 0x1100
#define PC_BAR 0x1200
#define PC_INL 0x1280 /* the second half of bar is an inlined "inl" */
#define PC_REC 0x1300
#define PC_CXX 0x1400
#define PC_END 0x1500
#define PC_READ 0x5000 /* libc's read(), where a blocked thread's PC is */
#define PC_READ_END 0x5100
#define PC_HEAP 0x9000 /* the [heap]: no code, where a bad unwind may land */
#define PC_HEAP_END 0xa000

struct fake_range {
    uint64_t lo, hi;
    struct sym_location loc;
};

static const struct sym_frame fake_main = {"prog",   "/bin/prog", "main", "main",
                                           "main.c", 10,          false};
static const struct sym_frame fake_foo = {"prog", "/bin/prog", "foo", "foo", "foo.c", 20, false};
static const struct sym_frame fake_bar = {"prog", "/bin/prog", "bar", "bar", "bar.c", 30, false};
static const struct sym_frame fake_inl[2] = {
    {"prog", "/bin/prog", "inl", "inl", "inl.h", 5, true},
    {"prog", "/bin/prog", "bar", "bar", "bar.c", 33, false},
};
static const struct sym_frame fake_rec = {"prog", "/bin/prog", "rec", "rec", "rec.c", 40, false};
static const struct sym_frame fake_cxx = {"prog",  "/bin/prog", "ns::f(int)", "_ZN2ns1fEi",
                                          "ns.cc", 50,          false};
static const struct sym_frame fake_read = {"libc.so.6", "/lib/libc.so.6", "read", "read", "", 0,
                                           false};
static const struct sym_frame fake_heap = {"[heap]", "", "[heap]+0x10", "", "", 0, false};

static const struct fake_range fake_ranges[] = {
    {PC_MAIN, PC_FOO, {0x1000, 1, &fake_main, false}},
    {PC_FOO, PC_BAR, {0x1100, 1, &fake_foo, false}},
    {PC_BAR, PC_INL, {0x1200, 1, &fake_bar, false}},
    {PC_INL, PC_REC, {0x1280, 2, fake_inl, false}},
    {PC_REC, PC_CXX, {0x1300, 1, &fake_rec, false}},
    {PC_CXX, PC_END, {0x1400, 1, &fake_cxx, false}},
    {PC_READ, PC_READ_END, {0x5000, 1, &fake_read, false}},
    {PC_HEAP, PC_HEAP_END, {0x10, 1, &fake_heap, false}},
};

static inline const struct sym_location *fake_resolve(void *ctx, uint32_t pid, uint64_t time_ns,
                                                      uint64_t pc, bool return_address)
{
    (void)ctx;
    (void)pid;
    (void)time_ns;
    /* As the symbolizer marks a return address where no code is. */
    static const struct sym_location not_code = {0x10, 1, &fake_heap, true};
    uint64_t a = return_address ? pc - 1 : pc;
    for (size_t i = 0; i < sizeof(fake_ranges) / sizeof(fake_ranges[0]); i++)
        if (a >= fake_ranges[i].lo && a < fake_ranges[i].hi)
            return return_address && fake_ranges[i].lo == PC_HEAP ? &not_code : &fake_ranges[i].loc;
    return NULL;
}

static inline struct prof_thread_sample fake_th(uint32_t tid, uint64_t pc, uint64_t cpu_ns)
{
    return (struct prof_thread_sample){
        .pid = 1, .tid = tid, .pc = pc, .cpu_ns = cpu_ns, .syscall = -1};
}

/* A thread sample with stack STACK (an index into the profile's stacks). */
static inline struct prof_thread_sample fake_ths(uint32_t tid, uint32_t stack, uint64_t cpu_ns)
{
    struct prof_thread_sample t = fake_th(tid, 0, cpu_ns);
    t.stack = stack;
    return t;
}

#define FAKE_SAMPLE(t, arr)                                                                        \
    {                                                                                              \
        .time_ns = (t), .nthreads = sizeof(arr) / sizeof((arr)[0]), .threads = (arr)               \
    }

/* Run the flat aggregation over P with KEYS ("binary,procedure"...). */
static inline int fake_analyze_opts(const struct profile *p, const char *keys, enum metric_kind m,
                                    const struct metrics_options *mo, struct report *out,
                                    char **error)
{
    struct walk_options wo = {.metrics = mo ? *mo : (struct metrics_options){0}};
    char err[160];
    cr_assert_eq(key_spec_parse(keys, &wo.keys, err, sizeof(err)), 0, "%s", err);
    struct strtab *kt = strtab_new(), *nt = strtab_new();
    struct aggregate *a = aggregate_new(kt, &wo.keys);
    struct walk_visitor v = aggregate_visitor(a);
    struct frame_resolver r = {fake_resolve, NULL};
    struct walk_totals t;
    int rc = walk_profile(p, &r, &wo, kt, nt, &v, &t, error);
    if (rc == 0)
        aggregate_report(a, &t, metric_builtin(m), out);
    aggregate_free(a);
    strtab_free(nt);
    strtab_free(kt);
    return rc;
}

static inline void fake_analyze(const struct profile *p, const char *keys, struct report *out)
{
    char *error = NULL;
    cr_assert_eq(fake_analyze_opts(p, keys, METRIC_CPU, NULL, out, &error), 0, "%s", error);
}

/* The row whose ':'-joined key is KEY, or NULL. */
static inline const struct report_row *fake_find(const struct report *r, const char *key)
{
    for (size_t i = 0; i < r->nrows; i++) {
        char *k = key_display(r->rows[i].id);
        bool same = strcmp(k, key) == 0;
        free(k);
        if (same)
            return &r->rows[i];
    }
    return NULL;
}

static inline const struct report_row *fake_row(const struct report *r, const char *key)
{
    const struct report_row *row = fake_find(r, key);
    if (!row) {
        for (size_t i = 0; i < r->nrows; i++) {
            char *k = key_display(r->rows[i].id);
            fprintf(stderr, "row %s\n", k);
            free(k);
        }
        cr_assert_fail("no row %s", key);
    }
    return row;
}

static inline bool fake_close(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (fabs(a) + fabs(b) + 1e-9);
}

/* What every report must satisfy: the exclusive values add up to the
 * totals, no quantity but executions is less inclusive than exclusive, keys
 * unique. */
static inline void fake_expect_consistent(const struct report *r)
{
    double sum[Q_COUNT] = {0};
    for (size_t i = 0; i < r->nrows; i++) {
        for (int q = 0; q < Q_COUNT; q++) {
            sum[q] += r->rows[i].self[q];
            /* A key can be entered as the innermost frame more often than
             * it is entered onto the stack (main calling foo twice). */
            if (q == Q_EXECUTIONS)
                continue;
            cr_expect(r->rows[i].self[q] <= r->rows[i].total[q] + 1e-12,
                      "row %zu: self %g > total %g of quantity %d", i, r->rows[i].self[q],
                      r->rows[i].total[q], q);
        }
        for (size_t j = i + 1; j < r->nrows; j++)
            cr_expect(strcmp(r->rows[i].id, r->rows[j].id) != 0, "duplicate row %zu", i);
    }
    cr_expect(fake_close(sum[Q_SAMPLES], r->totals.thread_samples), "samples %g vs %g",
              sum[Q_SAMPLES], r->totals.thread_samples);
    cr_expect(fake_close(sum[Q_CPU], r->totals.cpu_s), "cpu %g vs %g", sum[Q_CPU], r->totals.cpu_s);
    cr_expect(fake_close(sum[Q_WALL], r->totals.wall_s), "wall %g vs %g", sum[Q_WALL],
              r->totals.wall_s);
    cr_expect(fake_close(sum[Q_ENERGY], r->totals.energy_j), "energy %g vs %g", sum[Q_ENERGY],
              r->totals.energy_j);
    cr_expect(fake_close(sum[Q_EXECUTIONS], r->totals.executions));
}

#endif
