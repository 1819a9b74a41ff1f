/*
 * test_gmon_cycles.c - a gmon.out call graph with a cycle, against gprof -q
 * on the same file: tests/workloads/mutual.c built with gcc -pg (ping()
 * and pong() call each other: gprof's <cycle 1>).  For every function,
 * `report PROG gmon.out --callers F` and `--callees F` give each line of
 * F's entry in gprof's call graph: its calls, and its time (self +
 * children; none for a call inside the cycle, where gprof prints none),
 * and F's own total (the rows of --callees added, and the flat report's
 * total) is gprof's self + children of F's primary line.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gprof_run.h"
#include "report_csv.h"
#include "test_record_common.h"
#include "util/xalloc.h"

/* Two figures gprof printed to 0.01 s each, added. */
#define TWO_ROUNDED 0.0101

/* A line of an entry of gprof -q: a caller (above the primary line), the
 * primary line, or a callee.  TIMED is false for a call inside a cycle
 * (gprof prints its count alone). */
struct cg_line {
    char name[64];
    double self, children;
    long long calls;
    bool timed;
};

struct cg_entry {
    struct cg_line primary;
    struct cg_line parents[16], children[16];
    size_t nparents, nchildren;
    bool in_cycle;
};

/* Parses one line of an entry; false for lines that are not a function's
 * (<spontaneous>, blank).  *PRIMARY says whether it was the primary line,
 * *CYCLE whether its name carried "<cycle N>", *WHOLE whether it is the
 * cycle's own entry ("<cycle N as a whole>"). */
static bool cg_parse_line(const char *text, struct cg_line *out, bool *primary, bool *cycle,
                          bool *whole)
{
    char line[512];
    snprintf(line, sizeof(line), "%.*s", (int)strcspn(text, "\n"), text);
    char *tok[32];
    size_t n = 0;
    for (char *t = strtok(line, " \t"); t && n < 32; t = strtok(NULL, " \t"))
        tok[n++] = t;
    if (n && tok[n - 1][0] == '[')
        n--; /* the index after the name */
    *primary = n && tok[0][0] == '[';
    *cycle = *whole = false;
    size_t name_at = n ? n - 1 : 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(tok[i], "<cycle") == 0) {
            *cycle = true;
            *whole = i + 2 < n && strcmp(tok[i + 2], "as") == 0;
            name_at = i ? i - 1 : 0;
            break;
        }
    if (n < 2 || strcmp(tok[name_at], "<spontaneous>") == 0)
        return false;
    memset(out, 0, sizeof(*out));
    snprintf(out->name, sizeof(out->name), "%s", tok[name_at]);
    size_t at = *primary ? 2 : 0; /* past "[i] %time" */
    size_t nums = name_at - at;
    if (nums >= 2 && strchr(tok[at], '.')) {
        out->timed = true;
        out->self = atof(tok[at]);
        out->children = atof(tok[at + 1]);
        out->calls = nums >= 3 ? atoll(tok[at + 2]) : 0;
    } else if (nums >= 1) {
        out->calls = atoll(tok[at]);
    } else {
        return false;
    }
    return true;
}

/* FN's entry in the call graph TEXT; fails the test when there is none. */
static void cg_entry_of(const char *text, const char *fn, struct cg_entry *e)
{
    const char *block = strstr(text, "index % time");
    cr_assert_not_null(block, "no call graph:\n%s", text);
    block = strchr(block, '\n');
    while (block) {
        const char *end = strstr(block + 1, "\n-----");
        if (!end)
            break;
        memset(e, 0, sizeof(*e));
        bool seen_primary = false, ours = false;
        for (const char *l = block + 1; l && l < end;
             l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
            struct cg_line c;
            bool primary, cycle, whole;
            if (!cg_parse_line(l, &c, &primary, &cycle, &whole))
                continue;
            if (primary) {
                ours = !whole && strcmp(c.name, fn) == 0;
                e->primary = c;
                e->in_cycle = cycle;
                seen_primary = true;
            } else if (!seen_primary && e->nparents < 16) {
                e->parents[e->nparents++] = c;
            } else if (seen_primary && e->nchildren < 16) {
                e->children[e->nchildren++] = c;
            }
        }
        if (ours)
            return;
        block = strchr(end + 1, '\n');
    }
    cr_assert_fail("no entry of %s in the call graph:\n%s", fn, text);
}

/* "PROG-BASE:NAME", the key of a function's row. */
static char *row_key(const char *name)
{
    return xasprintf("mutual-pg:%s", name);
}

/* F's lines (callers or callees) of gprof's entry against ptprof's rows. */
static void expect_lines(const char *prog, const char *gmon, const char *fn, bool callers,
                         const struct cg_line *lines, size_t n, const char *graph)
{
    const char *view = callers ? "--callers" : "--callees";
    const char *by_time[] = {prog, gmon, view, fn, "--no-cache", NULL};
    const char *by_calls[] = {prog, gmon, view, fn, "-m", "calls", "--no-cache", NULL};
    char *t = report_csv(by_time), *c = report_csv(by_calls);
    for (size_t i = 0; i < n; i++) {
        char *key = row_key(lines[i].name);
        double cpu = report_csv_value(t, key, "cpu_time");
        double calls = report_csv_value(c, key, "calls");
        cr_expect_eq((long long)llround(calls), lines[i].calls, "%s %s: %s, %.0f calls, gprof %lld",
                     fn, view, lines[i].name, calls, lines[i].calls);
        if (lines[i].timed) {
            double want = lines[i].self + lines[i].children;
            cr_expect(fabs(cpu - want) <= TWO_ROUNDED,
                      "%s %s: %s %.4f s, gprof %.2f + %.2f\n%s\n%s", fn, view, lines[i].name, cpu,
                      lines[i].self, lines[i].children, t, graph);
        } else {
            cr_expect(fabs(cpu) < 1e-9, "%s %s: %s inside the cycle has %.4f s, gprof none\n%s", fn,
                      view, lines[i].name, cpu, t);
        }
        free(key);
    }
    free(t);
    free(c);
}

Test(gmon_cycles, a_cycles_callers_callees_and_totals_are_gprofs, .timeout = 240)
{
    char *dir = test_mkdtemp();
    struct gprof_run run;
    gprof_run_build(&run, dir, "mutual.c", "mutual-pg", "-O2", (const char *[]){"1", NULL});
    const char *prog = run.prog, *gmon = run.gmon;
    char *graph = gprof_run_text(&run, "-q");

    const char *flat_args[] = {prog, gmon, "--no-cache", NULL};
    char *flat = report_csv(flat_args);
    static const char *const fns[] = {"ping", "pong", "outside", "alone", "main"};
    for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++) {
        struct cg_entry e;
        cg_entry_of(graph, fns[f], &e);
        if (f < 2)
            cr_assert(e.in_cycle, "gprof made no cycle of ping and pong:\n%s", graph);
        expect_lines(prog, gmon, fns[f], true, e.parents, e.nparents, graph);
        expect_lines(prog, gmon, fns[f], false, e.children, e.nchildren, graph);
        /* F's total: its own time and what its callees' rows pass up. */
        const char *callees[] = {prog, gmon, "--callees", fns[f], "--no-cache", NULL};
        char *csv = report_csv(callees);
        double total = isnan(report_csv_value(csv, "[self]:[self]", "cpu_time"))
                           ? 0
                           : report_csv_value(csv, "[self]:[self]", "cpu_time");
        for (size_t i = 0; i < e.nchildren; i++) {
            char *key = row_key(e.children[i].name);
            double v = report_csv_value(csv, key, "cpu_time");
            total += isnan(v) ? 0 : v;
            free(key);
        }
        double want = e.primary.self + e.primary.children;
        cr_expect(fabs(total - want) <= TWO_ROUNDED, "%s's total %.4f s, gprof %.2f + %.2f\n%s\n%s",
                  fns[f], total, e.primary.self, e.primary.children, csv, graph);
        free(csv);
        /* The flat report's total is the same (main, never sampled and
         * never called, has no row). */
        char *key = row_key(fns[f]);
        double flat_total = report_csv_value(flat, key, "total_cpu_time");
        cr_expect(strcmp(fns[f], "main") == 0 || fabs(flat_total - want) <= TWO_ROUNDED,
                  "%s's total in the flat report %.4f s, gprof %.2f + %.2f\n%s", fns[f], flat_total,
                  e.primary.self, e.primary.children, flat);
        free(key);
    }
    free(flat);
    free(graph);
    gprof_run_free(&run);
    test_rmtree(dir);
    free(dir);
}
