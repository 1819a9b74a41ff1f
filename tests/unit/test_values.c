/*
 * test_values.c - per-sample values end to end: a profile whose samples
 * carry counters, written as a recording engine writes one (record/
 * output.h: value types declared first, values per thread sample) over
 * the real callers workload binary, then every command that analyses it:
 * each value a metric by its name (report, the tree, callers, compare,
 * flame graphs), the derived ipc, the three aggregations (sum, counter,
 * level), the CSV/JSON/HTML columns, info, and the exports (native, pprof
 * read back by go tool pprof, folded stacks) keeping the exact values.
 * Needs the workloads under $PTPROF_BUILD (default build/) and go.
 */
#include "real_tools.h"
#include "model/maps.h"
#include "record/output.h"
#include "symbol/elf_symtab.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T0 1700000000000000000ull
#define MS 1000000ull
#define LOAD_BASE 0x555555554000ull

enum { V_INSTRUCTIONS, V_CYCLES, V_FAULTS, V_SWITCHES, V_RSS, NVALUES };

static const struct prof_value_type value_types[NVALUES] = {
    [V_INSTRUCTIONS] = {"instructions", "count", PROF_VALUE_SUM},
    [V_CYCLES] = {"cycles", "count", PROF_VALUE_SUM},
    [V_FAULTS] = {"page-faults", "count", PROF_VALUE_SUM},
    [V_SWITCHES] = {"context-switches", "count", PROF_VALUE_COUNTER},
    [V_RSS] = {"rss", "bytes", PROF_VALUE_LEVEL},
};

/* What the profile holds (thread 101: 100 samples in hot via via_a, 50 in
 * hot via via_b; thread 102: 50 in weigh), so what reports must say. */
#define N_A 100
#define N_B 50
#define N_W 50

/* PC inside function NAME of the callers binary, as mapped at LOAD_BASE. */
static uint64_t pc_in(const struct elf_symtab *tab, const char *name, uint64_t into)
{
    for (size_t i = 0; i < tab->count; i++)
        if (strcmp(tab->syms[i].name, name) == 0)
            return LOAD_BASE + tab->syms[i].addr - tab->load_vaddr + into;
    cr_assert_fail("no %s in %s", name, tab->path);
    return 0;
}

/* The profile, through output.h as the recorder's engines write. */
static void write_profile(const char *path, const char *bin)
{
    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(bin, &tab), 0);
    uint64_t main_ra = pc_in(&tab, "main", 8), via_a_ra = pc_in(&tab, "via_a", 8);
    uint64_t via_b_ra = pc_in(&tab, "via_b", 8), hot = pc_in(&tab, "hot", 4);
    uint64_t weigh = pc_in(&tab, "weigh", 4);

    struct output *out = output_open(path, OUTPUT_NATIVE, NULL);
    cr_assert_not_null(out);
    output_meta(out, "command", bin);
    output_meta(out, "frequency", "1000");
    output_meta(out, "stacks", "fp");
    output_process(out, 100, 0, T0);
    output_exec(out, 100, T0, bin);
    struct prof_map m = {.pid = 100,
                         .time_ns = T0,
                         .start = LOAD_BASE,
                         .end = LOAD_BASE + (16u << 20),
                         .perms = MAP_PERM_READ | MAP_PERM_EXEC,
                         .path = (char *)bin};
    output_map(out, &m);
    output_thread(out, 100, 101, T0, "main");
    output_thread(out, 100, 102, T0, "worker");
    cr_assert_eq(output_value_types(out, value_types, NVALUES), 0);
    cr_assert_eq(output_started(out), 0);
    const uint64_t stack_a[] = {hot, via_a_ra, main_ra}, stack_b[] = {hot, via_b_ra, main_ra};
    const uint64_t stack_w[] = {weigh, main_ra};
    uint32_t sa = output_stack(out, stack_a, 3), sb = output_stack(out, stack_b, 3);
    uint32_t sw = output_stack(out, stack_w, 2);
    /* One round a millisecond: thread 101 in A for 100 rounds then B for
     * 50; thread 102 in weigh for the first 50.  Each sample is 1 ms of CPU. */
    for (uint64_t i = 0; i < N_A + N_B; i++) {
        struct prof_thread_sample t[2] = {
            {100, 101, hot, (i + 1) * MS, i < N_A ? sa : sb, -1, 0},
            {100, 102, weigh, (i + 1) * MS, sw, -1, 0},
        };
        uint64_t v[2][NVALUES] = {
            {i < N_A ? 3000 : 1000, 1000, 0, 2 * (i + 1), 1000000},
            {500, 1000, 1, i + 1, 2000000},
        };
        uint32_t n = i < N_W ? 2 : 1;
        cr_assert_eq(output_sample_values(out, T0 + (i + 1) * MS, NULL, t, n, &v[0][0]), 0);
    }
    struct prof_totals tot = {(N_A + N_B + 1) * MS, 0, N_A + N_B, N_A + N_B + 1};
    cr_assert_eq(output_finish(out, &tot, NULL), 0);
    elf_symtab_free(&tab);
}

struct fixture {
    char *dir, *bin, *data;
};

static void fixture_init(struct fixture *f)
{
    f->dir = test_mkdtemp();
    char *bin = build_workload("callers"), real[PATH_MAX];
    cr_assert_not_null(realpath(bin, real));
    f->bin = strdup(real);
    free(bin);
    f->data = test_path(f->dir, "values.data");
    write_profile(f->data, f->bin);
}

static void fixture_free(struct fixture *f)
{
    test_rmtree(f->dir);
    free(f->dir);
    free(f->bin);
    free(f->data);
}

static void expect_column(const char *file, const char *metric, const char *column,
                          const char *const *extra, const char *fn, double want)
{
    struct fn_counts c;
    report_column(file, metric, column, extra, &c);
    cr_expect_float_eq(fn_get(&c, fn), want, 1e-7 * (fabs(want) + 1), "%s %s of %s: %g, want %g",
                       metric, column, fn, fn_get(&c, fn), want);
    fn_free(&c);
}

static char *ptprof_out(const char *const *args, int want_rc)
{
    char *ptprof = build_ptprof();
    const char *argv[24] = {ptprof};
    size_t n = 1;
    for (; args[n - 1] && n < 23; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    struct spawn_opts o = {.argv = argv, .timeout_s = 120};
    struct spawn_result res;
    spawn_run(&o, &res);
    cr_assert_eq(spawn_exit_code(res.status), want_rc, "ptprof %s: %s\n%s", args[0],
                 spawn_status_text(res.status), res.err);
    char *text = want_rc == 0 ? strdup(res.out) : strdup(res.err);
    spawn_result_free(&res);
    free(ptprof);
    return text;
}

/* The values as metrics of report and its views, with the exact sums. */
Test(values, every_value_is_a_metric_of_report)
{
    struct fixture f;
    fixture_init(&f);
    const double instr_hot = N_A * 3000.0 + N_B * 1000.0, instr_weigh = N_W * 500.0;
    expect_column(f.data, "instructions", "self", NULL, "hot", instr_hot);
    expect_column(f.data, "instructions", "self", NULL, "weigh", instr_weigh);
    expect_column(f.data, "instructions", "total", NULL, "via_a", N_A * 3000.0);
    expect_column(f.data, "instructions", "total", NULL, "main", instr_hot + instr_weigh);
    /* Every value has its columns whatever the chosen metric. */
    expect_column(f.data, "cpu", "instructions", NULL, "hot", instr_hot);
    expect_column(f.data, "cpu", "total_cycles", NULL, "main", (N_A + N_B + N_W) * 1000.0);
    expect_column(f.data, "cpu", "page-faults", NULL, "weigh", N_W);
    /* ipc = instructions / cycles, per row and in all. */
    expect_column(f.data, "ipc", "self", NULL, "hot", instr_hot / ((N_A + N_B) * 1000.0));
    expect_column(f.data, "ipc", "self", NULL, "weigh", 0.5);
    expect_column(f.data, "cpu", "total_ipc", NULL, "main",
                  (instr_hot + instr_weigh) / ((N_A + N_B + N_W) * 1000.0));
    /* A counter counts its increase per thread (2 a sample, 1 a sample,
     * all of it at a thread's first), a level its mean over the samples. */
    expect_column(f.data, "context-switches", "self", NULL, "hot", 2.0 * (N_A + N_B));
    expect_column(f.data, "context-switches", "self", NULL, "weigh", N_W);
    expect_column(f.data, "rss", "self", NULL, "hot", 1e6);
    expect_column(f.data, "rss", "total", NULL, "main",
                  ((N_A + N_B) * 1e6 + N_W * 2e6) / (N_A + N_B + N_W));
    /* Callers: hot's instructions come through via_a 3 to 1. */
    const char *const callers[] = {"--callers", "hot", NULL};
    expect_column(f.data, "instructions", "self", callers, "via_a", N_A * 3000.0);
    expect_column(f.data, "instructions", "self", callers, "via_b", N_B * 1000.0);

    /* The table and JSON show it by name; the tree too. */
    char *text = ptprof_out((const char *[]){"report", "--metric", "instructions", "-k",
                                             "procedure", "--no-cache", f.data, NULL},
                            0);
    cr_expect_not_null(strstr(text, "instructions 375000 in all"), "%s", text);
    cr_expect_not_null(strstr(text, " instructions "), "the column title: %s", text);
    free(text);
    text = ptprof_out((const char *[]){"report", "--metric", "ipc", "--format", "json", "-k",
                                       "procedure", "--no-cache", f.data, NULL},
                      0);
    cr_expect_not_null(strstr(text, "\"metric\":\"ipc\""), "%.300s", text);
    cr_expect_not_null(strstr(text, "\"instructions\":375000,"), "%.2000s", text);
    cr_expect_not_null(strstr(text, "\"ipc\":1.875"), "%.2000s", text);
    free(text);
    text = ptprof_out((const char *[]){"report", "--tree", "--metric", "instructions", "--format",
                                       "csv", "-k", "procedure", "--no-cache", f.data, NULL},
                      0);
    cr_expect_not_null(strstr(text, "main;via_a;hot,2,300000,"), "%s", text);
    free(text);

    /* A metric the profile lacks: its own error, listing what it has. */
    text = ptprof_out(
        (const char *[]){"report", "--metric", "alloc_space", "--no-cache", f.data, NULL}, 2);
    cr_expect_not_null(strstr(text, "no metric 'alloc_space'"), "%s", text);
    cr_expect_not_null(strstr(text, "instructions, cycles, page-faults, context-switches, rss, "
                                    "ipc"),
                       "%s", text);
    free(text);
    fixture_free(&f);
}

/* info lists the values; compare, flame graphs and the HTML page take them. */
Test(values, other_commands_take_the_values)
{
    struct fixture f;
    fixture_init(&f);
    char *text = ptprof_out((const char *[]){"info", f.data, NULL}, 0);
    cr_expect_not_null(strstr(text, "  values:     5\n"), "%s", text);
    cr_expect_not_null(strstr(text, "    instructions          count         sum\n"), "%s", text);
    cr_expect_not_null(strstr(text, "    context-switches      count         counter\n"), "%s",
                       text);
    cr_expect_not_null(strstr(text, "    rss                   bytes         level\n"), "%s", text);
    free(text);

    text = ptprof_out((const char *[]){"compare", "--metric", "instructions", "--format", "csv",
                                       "-k", "procedure", "--no-cache", f.data, f.data, NULL},
                      0);
    cr_expect_not_null(strstr(text, "hot,350000,350000,0"), "%s", text);
    free(text);

    char *svg = test_path(f.dir, "i.svg");
    free(ptprof_out((const char *[]){"flamegraph", "--metric", "instructions", "--no-cache", f.data,
                                     "-o", svg, NULL},
                    0));
    text = test_read_file(svg, NULL);
    cr_assert_not_null(text);
    cr_expect_not_null(strstr(text, "instructions, "), "tooltips name the metric");
    cr_expect_not_null(strstr(text, "instructions, 375000 in"), "the subtitle: %.3000s", text);
    free(text);
    /* A ratio does not add up along a stack. */
    text = ptprof_out(
        (const char *[]){"flamegraph", "--metric", "ipc", "--no-cache", f.data, "-o", svg, NULL},
        2);
    cr_expect_not_null(strstr(text, "the ipc metric does not add up"), "%s", text);
    free(text);

    char *html = test_path(f.dir, "r.html");
    free(ptprof_out((const char *[]){"report", "--metric", "instructions", "--html", html,
                                     "--no-cache", f.data, NULL},
                    0));
    text = test_read_file(html, NULL);
    cr_assert_not_null(text);
    cr_expect_not_null(strstr(text, "<h2>Top rows by instructions</h2>"));
    cr_expect_not_null(strstr(text, "<th data-t=\"n\">cycles</th>"));
    cr_expect_not_null(strstr(text, "<th data-t=\"n\">ipc</th>"));
    cr_expect_not_null(strstr(text, "<th data-t=\"n\">rss bytes</th>"));
    free(text);
    free(html);
    free(svg);
    fixture_free(&f);
}

/* Written as native (a copy), pprof (every value a sample type, go tool
 * pprof reads them) and folded stacks, the values stay exact. */
Test(values, exports_keep_the_values, .timeout = 120)
{
    struct fixture f;
    fixture_init(&f);
    char *copy = test_path(f.dir, "copy.data"), *pb = test_path(f.dir, "v.pb.gz");
    char *folded = test_path(f.dir, "v.folded");
    free(ptprof_out((const char *[]){"convert", f.data, "-o", copy, NULL}, 0));
    expect_column(copy, "instructions", "self", NULL, "hot", 350000);
    expect_column(copy, "rss", "total", NULL, "main", 1.25e6);
    char *text = ptprof_out((const char *[]){"info", copy, NULL}, 0);
    cr_expect_not_null(strstr(text, "  values:     5\n"), "%s", text);
    free(text);

    free(ptprof_out((const char *[]){"convert", f.data, "-o", pb, "--no-cache", NULL}, 0));
    char *go = test_need_tool("go");
    char *env_home, *env_cache;
    cr_assert_geq(asprintf(&env_home, "HOME=%s", f.dir), 0);
    cr_assert_geq(asprintf(&env_cache, "GOCACHE=%s/gocache", f.dir), 0);
    const char *env[] = {env_home,          env_cache,      "GOTOOLCHAIN=local",
                         "GOTELEMETRY=off", "PPROF_TMPDIR", NULL};
    struct spawn_result res;
    run_ok((const char *[]){go, "tool", "pprof", "-top", "-sample_index=instructions", pb, NULL},
           env, &res);
    cr_expect_not_null(strstr(res.out, "Type: instructions"), "%s", res.out);
    cr_expect_not_null(strstr(res.out, "350000 93.33% 93.33%     350000 93.33%  hot"), "%s",
                       res.out);
    spawn_result_free(&res);
    run_ok((const char *[]){go, "tool", "pprof", "-raw", pb, NULL}, env, &res);
    cr_expect_not_null(strstr(res.out, "instructions/count cycles/count page-faults/count "
                                       "context-switches/count rss/bytes"),
                       "%.1000s", res.out);
    spawn_result_free(&res);
    /* Read back by ptprof: the same values. */
    expect_column(pb, "instructions", "self", NULL, "hot", 350000);
    expect_column(pb, "ipc", "self", NULL, "weigh", 0.5);

    free(ptprof_out((const char *[]){"convert", f.data, "-o", folded, "--metric", "instructions",
                                     "--no-cache", NULL},
                    0));
    text = test_read_file(folded, NULL);
    cr_assert_not_null(text);
    cr_expect_str_eq(text, "callers;main;via_a;hot 300000\n"
                           "callers;main;via_b;hot 50000\n"
                           "callers;main;weigh 25000\n");
    free(text);
    /* -k names the frames as report does. */
    free(ptprof_out((const char *[]){"convert", f.data, "-o", folded, "--metric", "page-faults",
                                     "-k", "binary,procedure", "--no-cache", NULL},
                    0));
    text = test_read_file(folded, NULL);
    cr_assert_not_null(text);
    cr_expect_str_eq(text, "callers;callers:main;callers:weigh 50\n");
    free(text);
    /* Folded stacks of a ratio would not add up. */
    text = ptprof_out(
        (const char *[]){"convert", f.data, "-o", folded, "--metric", "ipc", "--no-cache", NULL},
        1);
    cr_expect_not_null(strstr(text, "the ipc metric does not"), "%s", text);
    free(text);

    free(env_home);
    free(env_cache);
    free(go);
    free(copy);
    free(pb);
    free(folded);
    fixture_free(&f);
}
