/*
 * test_symbols.c - names for the programs people really run, end to end:
 * the program named on the command line (`report prog gmon.out`,
 * --binary) for a gcc -pg program's gmon.out (against gprof) and for a
 * gperftools profile whose binary moved (against the report with the
 * binary in place), another build used with a warning; a stripped build
 * of the shares workload grouped by function (against the shares the
 * program measured itself); -k symbol against -k procedure on inlined
 * code; PLT stubs of a malloc/free loop.
 */
#include "../lib/spawn.h"
#include "../unit/real_tools.h"
#include "gprof_run.h"
#include "symbol/elf_symtab.h"
#include "util/xalloc.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_FMT "status: %s\n--- stdout ---\n%.3000s\n--- stderr ---\n%.3000s"
#define RUN_ARGS(res) spawn_status_text((res)->status), (res)->out, (res)->err

/* Percentage points a share may differ from the truth on a busy machine. */
#define SHARE_TOLERANCE 3.0

/* Run ARGV in CWD with ENV, expecting exit 0. */
static void run_in(const char *const *argv, const char *const *env, const char *cwd,
                   struct spawn_result *res)
{
    struct spawn_opts o = {.argv = argv, .env = env, .cwd = cwd, .timeout_s = 180};
    spawn_run(&o, res);
    cr_assert_eq(spawn_exit_code(res->status), 0, "%s %s: " RUN_FMT, argv[0],
                 argv[1] ? argv[1] : "", RUN_ARGS(res));
}

/* ptprof ARGS... (NULL-terminated), expecting exit 0; stdout and stderr in RES. */
static void ptprof_run(const char *const *args, struct spawn_result *res)
{
    char *ptprof = build_ptprof();
    const char *argv[40] = {ptprof};
    size_t n = 1;
    for (; args[n - 1] && n < 39; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    run_in(argv, NULL, NULL, res);
    free(ptprof);
}

/* Sum of the values of the rows whose name starts with PREFIX. */
/* C's rows as "name value" lines, for a failure's message (allocated). */
static char *rows_text(const struct fn_counts *c)
{
    char *text = xstrdup("");
    for (size_t i = 0; i < c->n && i < 40; i++) {
        char *more = xasprintf("%s  %-40s %6.2f\n", text, c->items[i].name, c->items[i].value);
        free(text);
        text = more;
    }
    return text;
}

static double prefix_sum(const struct fn_counts *c, const char *prefix)
{
    double sum = 0;
    for (size_t i = 0; i < c->n; i++)
        if (strncmp(c->items[i].name, prefix, strlen(prefix)) == 0)
            sum += c->items[i].value;
    return sum;
}

/* --- the program on the command line: gmon.out ------------------------------- */

/* gprof -b -p PROG GMON: self seconds of NAME (0 when absent). */
static double gprof_self(const char *flat, const char *name)
{
    for (const char *l = flat; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char fn[256];
        double pct, cum, self;
        if (sscanf(l, "%lf %lf %lf %*s %*s %*s %255s", &pct, &cum, &self, fn) == 4 &&
            strcmp(fn, name) == 0)
            return self;
        if (sscanf(l, "%lf %lf %lf %255s", &pct, &cum, &self, fn) == 4 && strcmp(fn, name) == 0)
            return self;
    }
    return 0;
}

/* Every function gprof -b -p lists, into OUT (names only). */
static size_t gprof_functions(const char *flat, char names[][128], size_t max)
{
    size_t n = 0;
    for (const char *l = flat; l && *l && n < max;
         l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char line[512], fn[128];
        snprintf(line, sizeof(line), "%.*s", (int)strcspn(l, "\n"), l);
        double pct, cum, self;
        if (sscanf(line, "%lf %lf %lf %*s %*s %*s %127s", &pct, &cum, &self, fn) == 4 ||
            sscanf(line, "%lf %lf %lf %127s", &pct, &cum, &self, fn) == 4)
            snprintf(names[n++], 128, "%s", fn);
    }
    return n;
}

/* Appends to the 64-bit little-endian gmon.out GMON a histogram record of
 * the range of its first one (gprof adds such records bin by bin) with
 * counts in every bin whose range holds the start of one of BINARY's
 * functions, 1 and 3 in turn: bins that gprof splits between the two
 * functions they straddle, in every run.  Returns how many. */
static size_t add_straddling_bins(const char *gmon, const char *binary)
{
    size_t len;
    unsigned char *d = (unsigned char *)test_read_file(gmon, &len);
    cr_assert(d && len >= 20 + 41 && d[20] == 0, "%s: no histogram first", gmon);
    uint64_t low = 0, high = 0;
    uint32_t nbins = 0;
    for (int i = 7; i >= 0; i--) {
        low = low << 8 | d[21 + i];
        high = high << 8 | d[29 + i];
    }
    for (int i = 3; i >= 0; i--)
        nbins = nbins << 8 | d[37 + i];
    cr_assert(nbins > 0 && high > low);
    uint16_t *bins = calloc(nbins, sizeof(*bins));
    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(binary, &tab), 0);
    const double scale = (double)(high - low) / 2 / nbins; /* units per bin */
    size_t n = 0;
    for (size_t k = 0; k < tab.count; k++) {
        uint64_t start = tab.syms[k].addr / 2;
        if (start <= low / 2)
            continue;
        for (uint32_t i = 0; i < nbins; i++) {
            uint64_t lo = low / 2 + (uint64_t)(scale * i),
                     hi = low / 2 + (uint64_t)(scale * (i + 1));
            if (lo < start && start < hi)
                bins[i] = n++ % 2 ? 3 : 1;
        }
    }
    elf_symtab_free(&tab);
    FILE *f = fopen(gmon, "ab");
    cr_assert_not_null(f);
    fwrite(d + 20, 1, 41, f); /* the same header: range, bins, rate, dimension */
    for (uint32_t i = 0; i < nbins; i++) {
        unsigned char b[2] = {(unsigned char)bins[i], (unsigned char)(bins[i] >> 8)};
        fwrite(b, 1, 2, f);
    }
    cr_assert_eq(fclose(f), 0);
    free(bins);
    free(d);
    return n;
}

/* Every function gprof lists for GMON has ptprof's CPU seconds, to gprof's
 * printed precision (half its last digit: ptprof computes gprof's figure,
 * gprof rounds it).  By ELF symbol, as gprof names them: -k procedure
 * names a function inlined into another (shares.c's monotonic_read) on
 * its own. */
static void expect_gprofs_self_seconds(const struct gprof_run *run)
{
    const char *binary = run->prog, *gmon = run->gmon;
    char *flat = gprof_run_text(run, "-p");
    static char names[256][128];
    size_t n = gprof_functions(flat, names, 256);
    cr_expect_geq(n, 4, "gprof lists no functions:\n%s", flat);
    struct fn_counts got;
    const char *before[] = {"-k", "symbol", binary, NULL};
    report_column(gmon, "cpu", "cpu_time", before, &got);
    for (size_t i = 0; i < n; i++) {
        double want = gprof_self(flat, names[i]);
        cr_expect(fabs(fn_get(&got, names[i]) - want) <= 0.005 + 1e-6,
                  "%s: %s %.4f s, gprof %.2f s\n%s", gmon, names[i], fn_get(&got, names[i]), want,
                  flat);
    }
    fn_free(&got);
    free(flat);
}

Test(symbols, program_before_a_gmon_out_names_it_as_gprof_does, .timeout = 240)
{
    char *dir = test_mkdtemp();
    struct gprof_run run;
    gprof_run_build(&run, dir, "shares.c", "shares-pg", "-O1", (const char *[]){"1", "1.5", NULL});
    const char *gmon = run.gmon;
    /* The program moves away and is renamed: nothing called a.out. */
    char *moved = test_path(dir, "renamed-prog");
    cr_assert_eq(rename(run.prog, moved), 0);
    free(run.prog);
    run.prog = moved;

    struct fn_counts none, positional, option;
    report_column(gmon, "cpu", "cpu_time", NULL, &none);
    cr_expect_eq(prefix_sum(&none, "work_"), 0, "no names without the program");
    cr_expect_gt(prefix_sum(&none, "a.out+0x"), 0, "the histogram is a.out's");
    const char *before[] = {moved, NULL}, *opt[] = {"--binary", moved, NULL};
    report_column(gmon, "cpu", "cpu_time", before, &positional);
    report_column(gmon, "cpu", "cpu_time", opt, &option);
    static const char *const fns[] = {"work_heavy", "work_medium", "work_light", "work_tiny"};
    for (size_t i = 0; i < 4; i++)
        cr_expect_float_eq(fn_get(&option, fns[i]), fn_get(&positional, fns[i]), 1e-9);
    /* Every function gprof lists, as gprof credits it: also the bins that
     * straddle two functions (gprof splits them by the overlap), which a
     * run has or not by chance, and the copy has for certain. */
    expect_gprofs_self_seconds(&run);
    struct gprof_run straddled = {.prog = moved, .gmon = test_path(dir, "straddled.out")};
    char *cp = xasprintf("cp '%s' '%s'", gmon, straddled.gmon);
    cr_assert_eq(system(cp), 0);
    free(cp);
    cr_expect_geq(add_straddling_bins(straddled.gmon, moved), 4, "a bin at each function's start");
    expect_gprofs_self_seconds(&straddled);
    free(straddled.gmon);
    /* Wall-time bound work: on a busy machine it gets less CPU, but heavy
     * keeps about half of what the four got. */
    double four = 0;
    for (size_t i = 0; i < 4; i++)
        four += fn_get(&positional, fns[i]);
    cr_expect_gt(four, 0.05, "the four functions ran");
    cr_expect_gt(fn_get(&positional, "work_heavy"), 0.3 * four, "work_heavy has about half");

    /* Every analysing command takes it: a flame graph and a conversion. */
    char *svg = test_path(dir, "f.svg"), *folded = test_path(dir, "g.folded");
    const char *fg[] = {"flamegraph", moved, gmon, "-o", svg, "--no-cache", NULL};
    struct spawn_result res;
    ptprof_run(fg, &res);
    spawn_result_free(&res);
    const char *cv[] = {"convert", "--binary", moved, gmon, "-o", folded, "--no-cache", NULL};
    ptprof_run(cv, &res);
    spawn_result_free(&res);
    char *text = test_read_file(svg, NULL);
    cr_expect(text && strstr(text, "work_heavy"), "the flame graph names work_heavy");
    free(text);
    text = test_read_file(folded, NULL);
    cr_expect(text && strstr(text, "work_medium"), "the folded stacks name work_medium");
    free(text);

    fn_free(&none);
    fn_free(&positional);
    fn_free(&option);
    free(svg);
    free(folded);
    gprof_run_free(&run);
    test_rmtree(dir);
    free(dir);
}

/* --- the program on the command line: a gperftools profile ------------------- */

#define LIBPROFILER "/usr/lib/x86_64-linux-gnu/libprofiler.so"

Test(symbols, binary_of_a_gperftools_profile_that_moved, .timeout = 240)
{
    cr_assert(access(LIBPROFILER, R_OK) == 0, "%s missing: scripts/install-deps --test",
              LIBPROFILER);
    char *dir = test_mkdtemp(), *w = build_workload("callers");
    char *prog = test_path(dir, "callers"), *prof = test_path(dir, "callers.prof");
    char *cp = xasprintf("cp '%s' '%s'", w, prog);
    cr_assert_eq(system(cp), 0);
    char *out_env = xasprintf("CPUPROFILE=%s", prof);
    const char *env[] = {"LD_PRELOAD=" LIBPROFILER, out_env, "CPUPROFILE_FREQUENCY=500", NULL};
    const char *argv[] = {prog, "1", NULL};
    struct spawn_result res;
    run_in(argv, env, dir, &res);
    spawn_result_free(&res);

    struct fn_counts in_place, gone, given;
    report_column(prof, "samples", "samples", NULL, &in_place);
    cr_expect_gt(fn_get(&in_place, "hot"), 0, "the binary in place names hot");
    char *moved = test_path(dir, "callers.moved");
    cr_assert_eq(rename(prog, moved), 0);
    report_column(prof, "samples", "samples", NULL, &gone);
    cr_expect_eq(fn_get(&gone, "hot"), 0, "the recorded path is gone");
    const char *opt[] = {"--binary", moved, NULL};
    report_column(prof, "samples", "samples", opt, &given);
    cr_expect_eq(given.n, in_place.n, "the same rows as with the binary in place");
    for (size_t i = 0; i < in_place.n; i++)
        cr_expect_float_eq(fn_get(&given, in_place.items[i].name), in_place.items[i].value, 1e-9,
                           "%s", in_place.items[i].name);
    fn_free(&in_place);
    fn_free(&gone);
    fn_free(&given);
    free(moved);
    free(out_env);
    free(cp);
    free(prof);
    free(prog);
    free(w);
    test_rmtree(dir);
    free(dir);
}

Test(symbols, another_build_is_read_when_named_with_a_warning, .timeout = 120)
{
    char *dir = test_mkdtemp(), *w = build_workload("callers");
    char *prog = test_path(dir, "callers"), *data = test_path(dir, "callers.data");
    char *cp = xasprintf("cp '%s' '%s'", w, prog);
    cr_assert_eq(system(cp), 0);
    char *ptprof = build_ptprof();
    const char *rec[] = {ptprof, "record", "-o", data, "--", prog, "1", NULL};
    struct spawn_result res;
    run_in(rec, NULL, dir, &res);
    spawn_result_free(&res);
    /* The same source built without frame pointers: another build-id. */
    char *other = build_workload("callers-nofp");
    const char *without[] = {"report", "--no-cache", data, NULL};
    cr_assert_eq(unlink(prog), 0);
    ptprof_run(without, &res);
    cr_expect_null(strstr(res.out, " hot\n"), "no names without the binary:\n%s", res.out);
    spawn_result_free(&res);
    const char *with[] = {"report", "--no-cache", "--binary", other, data, NULL};
    ptprof_run(with, &res);
    cr_expect_not_null(strstr(res.err, "another build than the one profiled"), "%s", res.err);
    cr_expect_not_null(strstr(res.err, other), "the warning names the file:\n%s", res.err);
    spawn_result_free(&res);
    free(other);
    free(ptprof);
    free(cp);
    free(data);
    free(prog);
    free(w);
    test_rmtree(dir);
    free(dir);
}

/* --- stripped code, grouped by function ---------------------------------------- */

static const char *const shares_fns[] = {"work_heavy", "work_medium", "work_light", "work_tiny"};

/* "BINARY+0x" and the file offset of function NAME of ELF PATH. */
static char *unnamed_name(const char *binary, const char *path, const char *name)
{
    struct elf_symtab tab;
    cr_assert_eq(elf_symtab_load(path, &tab), 0);
    char *out = NULL;
    for (size_t i = 0; i < tab.count && !out; i++) {
        if (strcmp(tab.syms[i].name, name) != 0)
            continue;
        for (size_t k = 0; k < tab.nsegments && !out; k++) {
            const struct elf_segment *s = &tab.segments[k];
            if (tab.syms[i].addr >= s->vaddr && tab.syms[i].addr < s->vaddr + s->filesz)
                out = xasprintf("%s+0x%llx", binary,
                                (unsigned long long)(tab.syms[i].addr - s->vaddr + s->offset));
        }
    }
    elf_symtab_free(&tab);
    cr_assert_not_null(out, "%s has no %s", path, name);
    return out;
}

Test(symbols, a_stripped_program_is_grouped_by_function, .timeout = 180)
{
    char *dir = test_mkdtemp(), *w = build_workload("shares");
    char *prog = test_path(dir, "shares-stripped"), *data = test_path(dir, "shares.data");
    char *truth = test_path(dir, "truth.txt");
    char *cmd = xasprintf("strip --strip-all -o '%s' '%s'", prog, w);
    cr_assert_eq(system(cmd), 0, "%s", cmd);
    char *ptprof = build_ptprof(), *truth_env = xasprintf("SHARES_OUT=%s", truth);
    const char *rec[] = {ptprof, "record", "-o", data, "--", prog, "1", "2", NULL};
    const char *env[] = {truth_env, NULL};
    struct spawn_result res;
    run_in(rec, env, dir, &res);
    spawn_result_free(&res);

    char *text = test_read_file(truth, NULL);
    cr_assert_not_null(text, "the workload wrote no %s", truth);
    double ns[4], sum = 0;
    for (size_t f = 0; f < 4; f++) {
        const char *at = strstr(text, shares_fns[f]);
        cr_assert_not_null(at);
        ns[f] = strtod(at + strlen(shares_fns[f]), NULL);
        sum += ns[f];
    }
    struct fn_counts rows;
    report_column(data, "cpu", "cpu_time_pct", NULL, &rows);
    for (size_t f = 0; f < 4; f++) {
        /* The unstripped build says where each function starts. */
        char *name = unnamed_name("shares-stripped", w, shares_fns[f]);
        double got = fn_get(&rows, name), want = 100 * ns[f] / sum;
        cr_expect(fabs(got - want) <= SHARE_TOLERANCE, "%s (%s): %.1f%%, the run measured %.1f%%",
                  name, shares_fns[f], got, want);
        free(name);
    }
    /* One row per function: the stripped binary has few rows. */
    size_t own = 0;
    for (size_t i = 0; i < rows.n; i++)
        own += strncmp(rows.items[i].name, "shares-stripped+0x", 18) == 0;
    cr_expect_leq(own, 12, "%zu rows for the stripped program's functions", own);
    fn_free(&rows);
    free(text);
    free(truth_env);
    free(ptprof);
    free(cmd);
    free(truth);
    free(data);
    free(prog);
    free(w);
    test_rmtree(dir);
    free(dir);
}

/* --- the function the code lives in; PLT stubs --------------------------------- */

Test(symbols, symbol_key_names_the_function_inlined_code_lives_in, .timeout = 120)
{
    char *dir = test_mkdtemp(), *w = build_workload("inlines"), *ptprof = build_ptprof();
    char *data = test_path(dir, "inlines.data");
    const char *rec[] = {ptprof, "record", "-o", data, "--", w, "1", NULL};
    struct spawn_result res;
    run_in(rec, NULL, dir, &res);
    spawn_result_free(&res);
    struct fn_counts proc, sym;
    report_column(data, "samples", "self_pct", NULL, &proc);
    const char *by_symbol[] = {"-k", "symbol", NULL};
    report_column(data, "samples", "self_pct", by_symbol, &sym);
    cr_expect_gt(fn_get(&proc, "mix"), 80, "-k procedure: the inlined mix has the time");
    cr_expect_eq(fn_get(&sym, "mix"), 0, "-k symbol: mix has no code of its own");
    double callers = fn_get(&sym, "caller_a") + fn_get(&sym, "caller_b");
    cr_expect_gt(callers, 95, "-k symbol: caller_a and caller_b hold mix's code (%.1f%%)", callers);
    cr_expect_gt(fn_get(&sym, "caller_a"), 25);
    cr_expect_gt(fn_get(&sym, "caller_b"), 25);
    fn_free(&proc);
    fn_free(&sym);
    free(data);
    free(ptprof);
    free(w);
    test_rmtree(dir);
    free(dir);
}

Test(symbols, plt_stubs_of_a_malloc_loop_are_named, .timeout = 120)
{
    static const char src[] = "#include <stdlib.h>\n"
                              "#include <time.h>\n"
                              "int main(void)\n"
                              "{\n"
                              "    volatile size_t sink = 0;\n"
                              "    time_t end = time(NULL) + 2;\n"
                              "    while (time(NULL) < end)\n"
                              "        for (int i = 0; i < 10000; i++) {\n"
                              "            void *p = malloc(16);\n"
                              "            sink += (size_t)p;\n"
                              "            free(p);\n"
                              "        }\n"
                              "    return (int)(sink & 1);\n"
                              "}\n";
    char *dir = test_mkdtemp(), *gcc = test_need_tool("gcc"), *ptprof = build_ptprof();
    char *c = test_path(dir, "loop.c"), *prog = test_path(dir, "loop");
    char *data = test_path(dir, "loop.data");
    FILE *f = fopen(c, "w");
    cr_assert_not_null(f);
    fputs(src, f);
    fclose(f);
    const char *cc[] = {gcc, "-O2", "-o", prog, c, NULL};
    struct spawn_result res;
    run_in(cc, NULL, dir, &res);
    spawn_result_free(&res);
    const char *rec[] = {ptprof, "record", "-o", data, "--", prog, NULL};
    run_in(rec, NULL, dir, &res);
    spawn_result_free(&res);
    struct fn_counts rows;
    report_column(data, "samples", "self_pct", NULL, &rows);
    double stubs = fn_get(&rows, "malloc@plt") + fn_get(&rows, "free@plt");
    char *text = rows_text(&rows);
    cr_expect_gt(stubs, 0.5, "malloc@plt and free@plt: %.2f%% of the samples:\n%s", stubs, text);
    free(text);
    cr_expect_eq(prefix_sum(&rows, "loop+0x"), 0, "no unnamed address in the program");
    fn_free(&rows);
    free(data);
    free(prog);
    free(c);
    free(ptprof);
    free(gcc);
    test_rmtree(dir);
    free(dir);
}
