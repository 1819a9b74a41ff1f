/*
 * test_accuracy.c - accuracy against ground truth: the shares workload
 * measures its own per-function thread CPU time; at 5000+ samples the
 * report's inclusive share of every work function must be within 1.5
 * percentage points of what the workload measured, for one and four
 * threads, the frame-pointer build with -g fp and -g dwarf, and the
 * -O2 -fomit-frame-pointer build with -g dwarf, with either recording
 * engine (engines.h).  A "sample" is what the recorder counts: a tick that
 * stopped every thread (ptrace), or a thread's period of CPU time (perf).
 * With "shares ... clock" every function spends about half its time reading
 * the clock in libc and the vDSO, which keep no frame pointer for the walk:
 * the shares, this time of all the CPU time (unnormalised), must be within
 * 1 point.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines.h"
#include "record/host_steal.h"
#include "record_native.h"
#include "report_csv.h"
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

/* How a run is judged. */
struct accuracy_check {
    const char *engine;   /* --engine */
    const char *workload; /* "shares" or "shares-nofp" */
    const char *mode;     /* -g */
    int threads;
    double seconds;
    bool clock;        /* "shares ... clock" */
    bool unnormalised; /* shares of all CPU time, not of the four functions' */
    double max_error;  /* percentage points */
};

/* The workload's measured shares, in percent of the four functions' sum,
 * or of all its workers' CPU time when UNNORMALISED. */
static void read_truth(const char *path, bool unnormalised, double *pct)
{
    char *text = test_read_file(path, NULL);
    cr_assert_not_null(text, "the workload wrote no %s", path);
    double ns[NFUNCS] = {0}, sum = 0, cpu_total = 0;
    int found = 0;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        char name[64];
        unsigned long long v;
        cr_assert_eq(sscanf(line, "%63s %llu", name, &v), 2, "%s: bad line '%s'", path, line);
        if (strcmp(name, "cpu_total") == 0)
            cpu_total = (double)v;
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
    if (unnormalised)
        sum = cpu_total;
    cr_assert_gt(sum, 0, "%s: no CPU time measured", path);
    for (int f = 0; f < NFUNCS; f++)
        pct[f] = 100.0 * ns[f] / sum;
}

/* The work functions' total_pct in "report -k procedure" CSV of PROFILE,
 * rescaled to percent of their sum unless UNNORMALISED: total_pct is a
 * share of all the profile's CPU time, startup and libc included, which the
 * workload measures only as cpu_total. */
static void report_shares(const char *profile, bool unnormalised, double *pct)
{
    const char *args[] = {profile, "-k", "procedure", NULL};
    char *csv = report_csv(args);
    double sum = 0;
    for (int f = 0; f < NFUNCS; f++) {
        pct[f] = report_csv_value(csv, funcs[f], "total_pct");
        cr_assert(!isnan(pct[f]), "no row for %s in\n%.3000s", funcs[f], csv);
        sum += pct[f];
    }
    cr_assert_gt(sum, 0, "no CPU time in the work functions:\n%.3000s", csv);
    for (int f = 0; f < NFUNCS && !unnormalised; f++)
        pct[f] = 100.0 * pct[f] / sum;
    free(csv);
}

/* Record C's workload for SECONDS into R (a fresh directory), the
 * workload's truth going to TRUTH_PATH (allocated).  Returns the profile's
 * number of samples. */
static size_t record_once(struct recording *r, const struct accuracy_check *c, double seconds,
                          char **truth_path, double *steal)
{
    memset(r, 0, sizeof(*r));
    profile_init(&r->prof);
    r->dir = test_mkdtemp();
    cr_assert(asprintf(&r->path, "%s/profile.data", r->dir) > 0);
    cr_assert(asprintf(truth_path, "%s/truth", r->dir) > 0);
    char *env_truth = NULL;
    cr_assert(asprintf(&env_truth, "SHARES_OUT=%s", *truth_path) > 0);
    char *ptprof = build_ptprof(), *prog = build_workload(c->workload);
    char nthreads[16], secs[32];
    snprintf(nthreads, sizeof(nthreads), "%d", c->threads);
    snprintf(secs, sizeof(secs), "%.1f", seconds);

    const char *argv[] = {ptprof,  "record", "--engine", c->engine, "-g",
                          c->mode, "-f",     FREQ,       "-o",      r->path,
                          "--",    prog,     nthreads,   secs,      c->clock ? "clock" : NULL,
                          NULL};
    const char *env[] = {env_truth, NULL};
    struct host_steal before, after;
    host_steal_mark(&before);
    run_argv(&r->run, argv, env, NULL, seconds * 4 + 30);
    host_steal_mark(&after);
    *steal = host_steal_share(&before, &after);
    cr_assert_eq(spawn_exit_code(r->run.status), 0, "ptprof record\n" RUN_FMT, RUN_ARGS(&r->run));
    recording_load(r, r->path);
    free(env_truth);
    free(ptprof);
    free(prog);
    return r->prof.totals.samples;
}

static void check_accuracy(const struct accuracy_check *c)
{
    struct recording r;
    char *truth_path = NULL;
    double seconds = c->seconds;
    const char *what = c->clock ? " clock" : "";
    double steal;
    size_t nsamples = record_once(&r, c, seconds, &truth_path, &steal);
    if (nsamples < MIN_SAMPLES) {
        /* The rate this run achieved says how long the next one needs. */
        double longer = seconds * (MIN_SAMPLES * 1.4) / (double)(nsamples ? nsamples : 1);
        longer = longer > MAX_SECONDS ? MAX_SECONDS : longer;
        cr_log_warn("%s engine, %s%s -g %s, %d threads: %zu samples in %.1f s; again for %.1f s",
                    c->engine, c->workload, what, c->mode, c->threads, nsamples, seconds, longer);
        recording_free(&r);
        free(truth_path);
        seconds = longer;
        nsamples = record_once(&r, c, seconds, &truth_path, &steal);
    }
    cr_assert_geq(nsamples, MIN_SAMPLES, "%s%s -g %s, %d threads: %zu samples in %.1f s",
                  c->workload, what, c->mode, c->threads, nsamples, seconds);

    double truth[NFUNCS], got[NFUNCS];
    read_truth(truth_path, c->unnormalised, truth);
    report_shares(r.path, c->unnormalised, got);
    for (int f = 0; f < NFUNCS; f++) {
        double err = got[f] - truth[f];
        cr_log_info("%s engine, %s%s -g %s, %d threads, %zu samples: %-11s true %6.2f%%  "
                    "reported %6.2f%%  error %+.2f points",
                    c->engine, c->workload, what, c->mode, c->threads, nsamples, funcs[f], truth[f],
                    got[f], err);
    }
    /* The perf engine's task-clock runs on while the VM's host holds a
     * thread's CPU (host_steal.h): a function gets the time stolen while it
     * ran, and the host steals in bursts, so up to that share more (or
     * less) of its own.  The ptrace engine's schedstat does not count it. */
    double over = strcmp(c->engine, "perf") == 0 && steal < 0.5 ? steal / (1 - steal) : 0;
    for (int f = 0; f < NFUNCS; f++) {
        double max_error = build_tolerance(c->max_error) + over * truth[f];
        cr_expect_leq(fabs(got[f] - truth[f]), max_error,
                      "%s engine, %s%s -g %s, %d threads, %zu samples: %s has %.2f%% of the %s, "
                      "the workload measured %.2f%% (error %+.2f points, at most %.1f; the host "
                      "took %.1f%% of the CPUs' time)",
                      c->engine, c->workload, what, c->mode, c->threads, nsamples, funcs[f], got[f],
                      c->unnormalised ? "CPU time" : "work functions' total", truth[f],
                      got[f] - truth[f], max_error, 100 * steal);
    }
    recording_free(&r);
    free(truth_path);
}

#define CHECK(wl, m, t, s)                                                                         \
    check_accuracy(                                                                                \
        &(struct accuracy_check){engine_p->name, wl, m, t, s, false, false, MAX_ERROR_POINTS})

ENGINE_TEST(accuracy, fp_build_fp_stacks_1_thread, .timeout = 200)
{
    CHECK("shares", "fp", 1, 6);
}

ENGINE_TEST(accuracy, fp_build_dwarf_stacks_1_thread, .timeout = 200)
{
    CHECK("shares", "dwarf", 1, 6);
}

ENGINE_TEST(accuracy, nofp_build_dwarf_stacks_1_thread, .timeout = 200)
{
    CHECK("shares-nofp", "dwarf", 1, 6);
}

ENGINE_TEST(accuracy, fp_build_fp_stacks_4_threads, .timeout = 200)
{
    CHECK("shares", "fp", 4, 10);
}

ENGINE_TEST(accuracy, fp_build_dwarf_stacks_4_threads, .timeout = 200)
{
    CHECK("shares", "dwarf", 4, 10);
}

ENGINE_TEST(accuracy, nofp_build_dwarf_stacks_4_threads, .timeout = 200)
{
    CHECK("shares-nofp", "dwarf", 4, 10);
}

/* Frame pointers through libc's and the vDSO's clock_gettime: the callers
 * of those frameless functions are found by their CFI (stack_repair_fp). */
ENGINE_TEST(accuracy, fp_stacks_through_frameless_clock_reads, .timeout = 200)
{
    check_accuracy(&(struct accuracy_check){engine_p->name, "shares", "fp", 1, 6, true, true, 1.0});
}

ENGINE_TEST(accuracy, dwarf_stacks_through_frameless_clock_reads, .timeout = 200)
{
    check_accuracy(
        &(struct accuracy_check){engine_p->name, "shares", "dwarf", 1, 6, true, true, 1.0});
}
