/*
 * test_accuracy.c - accuracy against ground truth: the shares workload
 * measures its own per-function thread CPU time; at 5000+ samples the
 * report's inclusive share of every work function must be within 1.5
 * percentage points of what the workload measured, for one and four
 * threads, the frame-pointer build with -g fp and -g dwarf, and the
 * -O2 -fomit-frame-pointer build with -g dwarf, with either recording
 * engine (engines.h).  A "sample" is what the recorder counts: a tick that
 * stopped every thread (ptrace), or a thread's period of CPU time (perf).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines.h"
#include "record_native.h"
#include "test_record_common.h"

#define NFUNCS 4
#define MIN_SAMPLES 5000
/* Percentage points a function's share may differ from its true share. */
#define MAX_ERROR_POINTS 1.5
#define FREQ "2000"
/* A run that fell short of MIN_SAMPLES is repeated once, longer, up to
 * this many seconds: the achieved rate depends on how busy the machine is. */
#define MAX_SECONDS 30.0

static const char *const funcs[NFUNCS] = {"work_heavy", "work_medium", "work_light", "work_tiny"};

/* The workload's measured shares, in percent of the four functions' sum. */
static void read_truth(const char *path, double *pct)
{
    char *text = test_read_file(path, NULL);
    cr_assert_not_null(text, "the workload wrote no %s", path);
    double ns[NFUNCS] = {0}, sum = 0;
    int found = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char name[64];
        unsigned long long v;
        cr_assert_eq(sscanf(line, "%63s %llu", name, &v), 2, "%s: bad line '%s'", path, line);
        for (int f = 0; f < NFUNCS; f++) {
            if (strcmp(name, funcs[f]) == 0) {
                ns[f] = (double)v;
                found++;
            }
        }
    }
    free(text);
    cr_assert_eq(found, NFUNCS, "%s: expected one line per work function", path);
    for (int f = 0; f < NFUNCS; f++)
        sum += ns[f];
    cr_assert_gt(sum, 0, "%s: no CPU time measured", path);
    for (int f = 0; f < NFUNCS; f++)
        pct[f] = 100.0 * ns[f] / sum;
}

/* Index of column NAME in the CSV header line HEADER, or -1. */
static int csv_column(const char *header, const char *name)
{
    size_t len = strlen(name);
    int col = 0;
    for (const char *p = header; *p; col++) {
        if (strncmp(p, name, len) == 0 && (p[len] == ',' || p[len] == '\n' || p[len] == '\0'))
            return col;
        p = strchr(p, ',');
        if (!p)
            break;
        p++;
    }
    return -1;
}

/* Field COL of the CSV row LINE as a number.  The work functions' rows
 * have no quoted fields, so commas separate fields. */
static double csv_field(const char *line, int col)
{
    for (int c = 0; c < col; c++) {
        line = strchr(line, ',');
        if (!line)
            return NAN;
        line++;
    }
    char *end;
    double v = strtod(line, &end);
    return end == line ? NAN : v;
}

/* The work functions' total_pct in "report -k procedure" CSV of PROFILE,
 * rescaled to percent of their sum: total_pct is a share of all the
 * profile's CPU time, startup and libc included, which the workload does
 * not measure. */
static void report_shares(const char *profile, double *pct)
{
    char *ptprof = build_ptprof();
    const char *argv[] = {ptprof, "report", profile, "--format", "csv", "-k", "procedure", NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "ptprof report\n" RUN_FMT, RUN_ARGS(&res));
    int col = csv_column(res.out, "total_pct");
    cr_assert_geq(col, 0, "no total_pct column in\n%.2000s", res.out);

    double sum = 0;
    for (int f = 0; f < NFUNCS; f++) {
        pct[f] = NAN;
        size_t len = strlen(funcs[f]);
        for (const char *line = res.out; line && *line; line = strchr(line, '\n')) {
            if (*line == '\n')
                line++;
            if (strncmp(line, funcs[f], len) == 0 && line[len] == ',') {
                pct[f] = csv_field(line, col);
                break;
            }
        }
        cr_assert(!isnan(pct[f]), "no row for %s in\n%.3000s", funcs[f], res.out);
        sum += pct[f];
    }
    cr_assert_gt(sum, 0, "no CPU time in the work functions:\n%.3000s", res.out);
    for (int f = 0; f < NFUNCS; f++)
        pct[f] = 100.0 * pct[f] / sum;
    spawn_result_free(&res);
    free(ptprof);
}

/* Record WORKLOAD THREADS SECONDS with -g MODE into R (a fresh directory),
 * the workload's truth going to TRUTH_PATH (allocated).  Returns the
 * profile's number of samples. */
static size_t record_once(struct recording *r, const char *engine, const char *workload,
                          const char *mode, int threads, double seconds, char **truth_path)
{
    memset(r, 0, sizeof(*r));
    profile_init(&r->prof);
    r->dir = test_mkdtemp();
    cr_assert(asprintf(&r->path, "%s/profile.data", r->dir) > 0);
    cr_assert(asprintf(truth_path, "%s/truth", r->dir) > 0);
    char *env_truth = NULL;
    cr_assert(asprintf(&env_truth, "SHARES_OUT=%s", *truth_path) > 0);
    char *ptprof = build_ptprof(), *prog = build_workload(workload);
    char nthreads[16], secs[32];
    snprintf(nthreads, sizeof(nthreads), "%d", threads);
    snprintf(secs, sizeof(secs), "%.1f", seconds);

    const char *argv[] = {ptprof, "record", "--engine", engine, "-g",     mode, "-f", FREQ,
                          "-o",   r->path,  "--",       prog,   nthreads, secs, NULL};
    const char *env[] = {env_truth, NULL};
    run_argv(&r->run, argv, env, NULL, seconds * 4 + 30);
    cr_assert_eq(spawn_exit_code(r->run.status), 0, "ptprof record\n" RUN_FMT, RUN_ARGS(&r->run));
    recording_load(r, r->path);
    free(env_truth);
    free(ptprof);
    free(prog);
    return r->prof.totals.samples;
}

static void check_accuracy(const char *engine, const char *workload, const char *mode, int threads,
                           double seconds)
{
    struct recording r;
    char *truth_path = NULL;
    size_t nsamples = record_once(&r, engine, workload, mode, threads, seconds, &truth_path);
    if (nsamples < MIN_SAMPLES) {
        /* The rate this run achieved says how long the next one needs. */
        double longer = seconds * (MIN_SAMPLES * 1.4) / (double)(nsamples ? nsamples : 1);
        longer = longer > MAX_SECONDS ? MAX_SECONDS : longer;
        cr_log_warn("%s -g %s, %d threads: %zu samples in %.1f s; again for %.1f s", workload, mode,
                    threads, nsamples, seconds, longer);
        recording_free(&r);
        free(truth_path);
        seconds = longer;
        nsamples = record_once(&r, engine, workload, mode, threads, seconds, &truth_path);
    }
    cr_assert_geq(nsamples, MIN_SAMPLES, "%s -g %s, %d threads: %zu samples in %.1f s", workload,
                  mode, threads, nsamples, seconds);

    double truth[NFUNCS], got[NFUNCS];
    read_truth(truth_path, truth);
    report_shares(r.path, got);
    for (int f = 0; f < NFUNCS; f++) {
        double err = got[f] - truth[f];
        cr_log_info("%s engine, %s -g %s, %d threads, %zu samples: %-11s true %6.2f%%  "
                    "reported %6.2f%%  error %+.2f points",
                    engine, workload, mode, threads, nsamples, funcs[f], truth[f], got[f], err);
    }
    for (int f = 0; f < NFUNCS; f++)
        cr_expect_leq(fabs(got[f] - truth[f]), MAX_ERROR_POINTS,
                      "%s engine, %s -g %s, %d threads, %zu samples: %s has %.2f%% of the work "
                      "functions' total, the workload measured %.2f%% (error %+.2f points, at "
                      "most %.1f)",
                      engine, workload, mode, threads, nsamples, funcs[f], got[f], truth[f],
                      got[f] - truth[f], MAX_ERROR_POINTS);
    recording_free(&r);
    free(truth_path);
}

ENGINE_TEST(accuracy, fp_build_fp_stacks_1_thread, .timeout = 200)
{
    check_accuracy(engine_p->name, "shares", "fp", 1, 6);
}

ENGINE_TEST(accuracy, fp_build_dwarf_stacks_1_thread, .timeout = 200)
{
    check_accuracy(engine_p->name, "shares", "dwarf", 1, 6);
}

ENGINE_TEST(accuracy, nofp_build_dwarf_stacks_1_thread, .timeout = 200)
{
    check_accuracy(engine_p->name, "shares-nofp", "dwarf", 1, 6);
}

ENGINE_TEST(accuracy, fp_build_fp_stacks_4_threads, .timeout = 200)
{
    check_accuracy(engine_p->name, "shares", "fp", 4, 10);
}

ENGINE_TEST(accuracy, fp_build_dwarf_stacks_4_threads, .timeout = 200)
{
    check_accuracy(engine_p->name, "shares", "dwarf", 4, 10);
}

ENGINE_TEST(accuracy, nofp_build_dwarf_stacks_4_threads, .timeout = 200)
{
    check_accuracy(engine_p->name, "shares-nofp", "dwarf", 4, 10);
}
