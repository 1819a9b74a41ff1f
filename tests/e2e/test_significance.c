/*
 * test_significance.c - differences you can trust, end to end: `report
 * --ci` and `compare A1 A2 -- B1 B2` on recordings of the manyshares
 * workload, whose 64 functions have known weights and which measures its
 * own CPU time per function.
 *  - Two sets of runs of the same program: at most about 5 % of the keys
 *    are flagged at the 95 % level, over the count test (one run a side)
 *    and Welch's test (two runs a side).
 *  - A share moved by 5 points (the workload's own measurement says how
 *    much): flagged, and the first row, by both tests.
 *  - --ci from the counts: each interval is the binomial one for
 *    --metric samples, holds the share shown, and covers the share the
 *    program measured for nearly every function; over several runs it is
 *    t(0.975, n-1) s / sqrt(n) of the runs' own shares, and the energy
 *    column's interval likewise of the runs' energies; the table and the
 *    HTML page (well-formed) show the interval columns.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/xmlcheck.h"
#include "report_csv.h"
#include "test_record_common.h"
#include "util/xalloc.h"

#define NFUNCS 64
#define SECONDS "2" /* of CPU time */

static char *many_name(int i)
{
    return xasprintf("many_%o%o", i / 8, i % 8);
}

/* Record manyshares (ARG1 ARG2 may be NULL) into DIR/NAME.data, its own
 * measurement into DIR/NAME.txt, with EXTRA record options. */
static char *record_many(const char *dir, const char *name, const char *arg1, const char *arg2,
                         const char *const *extra)
{
    char *ptprof = build_ptprof(), *prog = build_workload("manyshares");
    char *out = xasprintf("%s/%s.data", dir, name);
    char *truth = xasprintf("SHARES_OUT=%s/%s.txt", dir, name);
    const char *argv[24] = {ptprof, "record", "-f", "1000", "-o", out};
    size_t n = 6;
    for (size_t i = 0; extra && extra[i]; i++)
        argv[n++] = extra[i];
    argv[n++] = "--";
    argv[n++] = prog;
    argv[n++] = SECONDS;
    if (arg1) {
        argv[n++] = arg1;
        argv[n++] = arg2;
    }
    argv[n] = NULL;
    const char *env[] = {truth, NULL};
    struct spawn_result res;
    run_argv(&res, argv, env, NULL, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "record manyshares: " RUN_CONTEXT(&res));
    spawn_result_free(&res);
    free(truth);
    free(prog);
    free(ptprof);
    return out;
}

/* The program's own share of function I, in percent of the 64's CPU time. */
static double truth_share(const char *dir, const char *name, int i)
{
    char *path = xasprintf("%s/%s.txt", dir, name);
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s: no measurement", path);
    char fn[64];
    unsigned long long ns, all = 0, mine = 0;
    char *want = many_name(i);
    while (fscanf(f, "%63s %llu", fn, &ns) == 2) {
        if (strncmp(fn, "many_", 5) == 0)
            all += ns;
        if (strcmp(fn, want) == 0)
            mine = ns;
    }
    fclose(f);
    free(want);
    free(path);
    cr_assert_gt(all, 0);
    return 100.0 * (double)mine / (double)all;
}

/* "ptprof compare -k procedure --format csv ARGS...": stdout. */
static char *compare_csv(const char *const *args)
{
    char *ptprof = build_ptprof();
    const char *argv[24] = {ptprof, "compare", "-k", "procedure", "--format", "csv"};
    size_t n = 6;
    for (size_t i = 0; args[i]; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "compare: " RUN_CONTEXT(&res));
    char *out = res.out;
    res.out = NULL;
    spawn_result_free(&res);
    free(ptprof);
    return out;
}

/* How many of the 64 functions CSV flags as significant (one that no run
 * of either side sampled is not). */
static int flagged(const char *csv)
{
    int n = 0;
    for (int i = 0; i < NFUNCS; i++) {
        char *fn = many_name(i);
        n += report_csv_value(csv, fn, "significant") == 1;
        free(fn);
    }
    return n;
}

/* The first row's key of a CSV (after the header). */
static char *first_key(const char *csv)
{
    const char *line = strchr(csv, '\n');
    cr_assert(line && line[1], "no rows:\n%s", csv);
    line++;
    return xasprintf("%.*s", (int)strcspn(line, ",\n"), line);
}

Test(significance, same_program_flags_about_five_percent_of_keys, .timeout = 600)
{
    char *dir = test_mkdtemp();
    char *a[4];
    for (int i = 0; i < 4; i++) {
        char name[16];
        snprintf(name, sizeof(name), "a%d", i);
        a[i] = record_many(dir, name, NULL, NULL, NULL);
    }
    int tests = 0, flags = 0;
    static const int pairs[][2] = {{0, 1}, {2, 3}, {0, 2}, {1, 3}};
    char report[4096];
    size_t used = 0;
    for (size_t p = 0; p < 4; p++) {
        const char *args[] = {a[pairs[p][0]], "--", a[pairs[p][1]], NULL};
        char *csv = compare_csv(args);
        cr_assert(strstr(csv, ",p,significant\n"), "no test columns:\n%.500s", csv);
        int f = flagged(csv);
        used += (size_t)snprintf(report + used, sizeof(report) - used, "counts %d-%d: %d; ",
                                 pairs[p][0], pairs[p][1], f);
        flags += f;
        tests += NFUNCS;
        free(csv);
    }
    const char *w1[] = {a[0], a[1], "--", a[2], a[3], NULL};
    const char *w2[] = {a[0], a[2], "--", a[1], a[3], NULL};
    const char *const *welch[] = {w1, w2};
    for (size_t w = 0; w < 2; w++) {
        char *csv = compare_csv(welch[w]);
        int f = flagged(csv);
        used += (size_t)snprintf(report + used, sizeof(report) - used, "welch %zu: %d; ", w, f);
        flags += f;
        tests += NFUNCS;
        free(csv);
    }
    /* At 95 % a calibrated test flags 5 % of unchanged keys by chance:
     * 19 of 384 expected, 29 is 2.3 standard deviations above that. */
    cr_assert_leq(flags, tests * 75 / 1000, "%d of %d keys flagged between runs of one program: %s",
                  flags, tests, report);
    cr_log_info("significance: %d of %d keys flagged between runs of one program (%s)", flags,
                tests, report);
    for (int i = 0; i < 4; i++)
        free(a[i]);
    test_rmtree(dir);
    free(dir);
}

Test(significance, a_five_point_change_is_flagged_first, .timeout = 600)
{
    char *dir = test_mkdtemp();
    char *a0 = record_many(dir, "a0", NULL, NULL, NULL);
    char *a1 = record_many(dir, "a1", NULL, NULL, NULL);
    char *a2 = record_many(dir, "a2", NULL, NULL, NULL);
    char *b0 = record_many(dir, "b0", "5", "5", NULL);
    char *b1 = record_many(dir, "b1", "5", "5", NULL);
    char *b2 = record_many(dir, "b2", "5", "5", NULL);
    /* The program moved many_05 by 5 points, by its own measurement. */
    double moved = truth_share(dir, "b0", 5) - truth_share(dir, "a0", 5);
    cr_assert(fabs(moved - 5) < 1, "the workload moved many_05 by %.2f points, not 5", moved);

    const char *one[] = {a0, "--", b0, NULL};
    const char *three[] = {a0, a1, a2, "--", b0, b1, b2, NULL};
    const char *const *cases[] = {one, three};
    for (size_t c = 0; c < 2; c++) {
        char *csv = compare_csv(cases[c]);
        char *first = first_key(csv);
        cr_assert_str_eq(first, "many_05", "%s test: the moved function is not first:\n%.2000s",
                         c ? "Welch's" : "the counts'", csv);
        cr_assert_eq(report_csv_value(csv, "many_05", "significant"), 1);
        /* The difference shown is the one measured (shares in points). */
        double diff = report_csv_value(csv, "many_05", c ? "b0.data+2_error" : "b0.data_error");
        cr_assert(fabs(diff - moved) < 1.5, "difference %.2f points, the program moved %.2f", diff,
                  moved);
        free(first);
        free(csv);
    }
    free(a0);
    free(a1);
    free(a2);
    free(b0);
    free(b1);
    free(b2);
    test_rmtree(dir);
    free(dir);
}

/* Student's t quantile for 0.975 and 2 degrees of freedom. */
#define T_975_2 4.302652729749464

Test(report_ci, intervals_from_counts_and_from_runs, .timeout = 600)
{
    char *dir = test_mkdtemp();
    char *power = xasprintf("%s/power", dir);
    FILE *f = fopen(power, "w");
    cr_assert(f);
    fputs("12.5\n", f);
    fclose(f);
    char *pmu = xasprintf("file:%s,W", power);
    const char *extra[] = {"-p", pmu, NULL};
    char *runs[3];
    for (int i = 0; i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "r%d", i);
        runs[i] = record_many(dir, name, NULL, NULL, extra);
    }

    /* One run, by samples: the binomial interval, around the share shown. */
    const char *by_samples[] = {"--ci", "-k", "procedure", "-m", "samples", runs[0], NULL};
    char *csv = report_csv(by_samples);
    double n = 0;
    for (int i = 0; i < NFUNCS; i++) {
        char *fn = many_name(i);
        n = report_csv_value(csv, fn, "self") / (report_csv_value(csv, fn, "self_pct") / 100);
        free(fn);
        if (isfinite(n))
            break;
    }
    for (int i = 0; i < NFUNCS; i++) {
        char *fn = many_name(i);
        double pct = report_csv_value(csv, fn, "self_pct");
        double lo = report_csv_value(csv, fn, "self_pct_lo");
        double hi = report_csv_value(csv, fn, "self_pct_hi");
        double p = pct / 100, half = 100 * 1.959963984540054 * sqrt(p * (1 - p) / n);
        cr_assert(lo <= pct && pct <= hi, "%s: %g not in [%g, %g]", fn, pct, lo, hi);
        cr_assert(fabs(hi - pct - half) < 1e-3 * half + 1e-6, "%s: +%g, binomial +%g", fn, hi - pct,
                  half);
        free(fn);
    }
    free(csv);

    /* By CPU time: the interval covers what the program measured for nearly
     * every function (attribution has errors of its own). */
    int covered = 0;
    for (int r = 0; r < 3; r++) {
        const char *by_cpu[] = {"--ci", "-k", "procedure", runs[r], NULL};
        csv = report_csv(by_cpu);
        char name[16];
        snprintf(name, sizeof(name), "r%d", r);
        for (int i = 0; i < NFUNCS; i++) {
            char *fn = many_name(i);
            double truth = truth_share(dir, name, i);
            double lo = report_csv_value(csv, fn, "self_pct_lo");
            double hi = report_csv_value(csv, fn, "self_pct_hi");
            covered += lo <= truth && truth <= hi;
            free(fn);
        }
        free(csv);
    }
    cr_assert_geq(covered, 3 * NFUNCS * 85 / 100, "only %d of %d intervals cover the truth",
                  covered, 3 * NFUNCS);

    /* Three runs: t(0.975, 2) s / sqrt(3) of the runs' own shares and energies. */
    double share[3][NFUNCS], energy[3][NFUNCS];
    for (int r = 0; r < 3; r++) {
        const char *one[] = {"-k", "procedure", runs[r], NULL};
        csv = report_csv(one);
        for (int i = 0; i < NFUNCS; i++) {
            char *fn = many_name(i);
            share[r][i] = report_csv_value(csv, fn, "self_pct");
            energy[r][i] = report_csv_value(csv, fn, "energy");
            share[r][i] = isnan(share[r][i]) ? 0 : share[r][i];
            energy[r][i] = isnan(energy[r][i]) ? 0 : energy[r][i];
            free(fn);
        }
        free(csv);
    }
    const char *mean[] = {"--ci", "-k", "procedure", runs[0], runs[1], runs[2], NULL};
    csv = report_csv(mean);
    for (int i = 0; i < NFUNCS; i++) {
        char *fn = many_name(i);
        double x[2][3] = {{share[0][i], share[1][i], share[2][i]},
                          {energy[0][i], energy[1][i], energy[2][i]}};
        const char *col[2] = {"self_pct", "energy"};
        for (int k = 0; k < 2; k++) {
            double m = (x[k][0] + x[k][1] + x[k][2]) / 3, ss = 0;
            for (int r = 0; r < 3; r++)
                ss += (x[k][r] - m) * (x[k][r] - m);
            double half = T_975_2 * sqrt(ss / 2) / sqrt(3);
            char *hi_col = xasprintf("%s_hi", col[k]);
            double shown = report_csv_value(csv, fn, col[k]);
            double hi = report_csv_value(csv, fn, hi_col);
            /* Unless clipped at 100 %, the upper bound is the share shown + half. */
            cr_assert(fabs(hi - shown - half) < 1e-3 * half + 1e-6, "%s %s: +%g, from the runs +%g",
                      fn, col[k], hi - shown, half);
            free(hi_col);
        }
        free(fn);
    }
    free(csv);

    /* The same intervals on the HTML page (well-formed, with the columns)
     * and in the table. */
    char *page = xasprintf("%s/ci.html", dir), *ptprof = build_ptprof();
    const char *html[] = {ptprof,  "report", "--ci",   "-k", "procedure", runs[0],
                          runs[1], runs[2],  "--html", page, NULL};
    struct spawn_result res;
    run_argv(&res, html, NULL, NULL, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "report --ci --html: " RUN_CONTEXT(&res));
    spawn_result_free(&res);
    char *msg = NULL;
    cr_expect(xmlcheck_file(page, &msg), "%s: %s", page, msg);
    free(msg);
    char *text = test_read_file(page, NULL);
    cr_expect(strstr(text, ">self ±95%</th>") && strstr(text, ">total ±95%</th>") &&
                  strstr(text, ">energy ±95% J</th>"),
              "the page lacks the interval columns");
    free(text);
    const char *table[] = {ptprof, "report", "--ci", "-k", "procedure", runs[0], NULL};
    run_argv(&res, table, NULL, NULL, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "report --ci: " RUN_CONTEXT(&res));
    cr_expect(strstr(res.out, "±95%") && strstr(res.out, "±95% J"), "table:\n%.1500s", res.out);
    spawn_result_free(&res);
    free(ptprof);
    free(page);
    for (int i = 0; i < 3; i++)
        free(runs[i]);
    free(pmu);
    free(power);
    test_rmtree(dir);
    free(dir);
}
