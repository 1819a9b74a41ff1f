/*
 * test_record_lifetimes.c - short-lived processes and threads keep their
 * shares: a program made of many processes (or threads) that each live a
 * few milliseconds must have its functions' CPU time where the program's
 * own clock says it went, whichever engine records it (engines.h).  The
 * brief workload (tests/workloads/brief.c) spends 40/30/20/10% of each
 * process's (thread's) CPU time in four functions, one after the other,
 * and prints what its thread CPU clock measured in each: what a process
 * does first and last lives at its boundaries, where a recorder's first and
 * last sample of it decide (docs/recording.md).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines.h"
#include "record_native.h"
#include "report_csv.h"
#include "test_record_common.h"

#define NFUNCS 4
/* Percentage points a function's share may be off the program's own. */
#define TOLERANCE_PP 2.0

static const char *const funcs[NFUNCS] = {"brief_first", "brief_second", "brief_third",
                                          "brief_last"};

/* "brief: first NS second NS third NS last NS" from OUT. */
static void read_truth(const char *out, double ns[NFUNCS])
{
    const char *line = strstr(out, "brief: first ");
    unsigned long long v[NFUNCS];
    cr_assert(line && sscanf(line, "brief: first %llu second %llu third %llu last %llu", &v[0],
                             &v[1], &v[2], &v[3]) == NFUNCS,
              "the workload printed no truth:\n%.2000s", out);
    for (int f = 0; f < NFUNCS; f++)
        ns[f] = (double)v[f];
}

/* Record brief with ENGINE at 1 kHz and WORKLOAD_ARGS; every function's
 * share of the four's CPU time (report -k procedure, inclusive) must be
 * within TOLERANCE_PP of what the program measured.  Returns the run's
 * -d output in R (free it). */
static void check_shares(struct recording *r, const char *engine, const char *const *workload_args)
{
    char *wl = build_workload("brief");
    const char *args[REC_ARGS_MAX] = {"-d", "-f", "1000", "--", wl};
    size_t n = 5;
    for (size_t i = 0; workload_args[i] && n + 1 < REC_ARGS_MAX; i++)
        args[n++] = workload_args[i];
    args[n] = NULL;
    record_native_engine(r, engine, args, 0, 120);
    double truth[NFUNCS], got[NFUNCS], truth_sum = 0, got_sum = 0;
    read_truth(r->run.out, truth);
    const char *report_args[] = {r->path, "-k", "procedure", NULL};
    char *csv = report_csv(report_args);
    for (int f = 0; f < NFUNCS; f++) {
        got[f] = report_csv_value(csv, funcs[f], "total_cpu_time");
        cr_assert(!isnan(got[f]), "%s: no row for %s:\n%.3000s", engine, funcs[f], csv);
        truth_sum += truth[f];
        got_sum += got[f];
    }
    cr_assert_gt(got_sum, 0, "%s: no CPU time in the four functions", engine);
    for (int f = 0; f < NFUNCS; f++) {
        double want = 100.0 * truth[f] / truth_sum, share = 100.0 * got[f] / got_sum;
        cr_log_info("%s: %s %.1f%% of the four functions' CPU time, measured %.1f%%", engine,
                    funcs[f], share, want);
        cr_expect(fabs(share - want) <= build_tolerance(TOLERANCE_PP),
                  "%s: %s has %.1f%% of the four functions' CPU time, the program measured "
                  "%.1f%%:\n%.3000s",
                  engine, funcs[f], share, want, csv);
    }
    free(csv);
    free(wl);
}

/* 100 processes of 20 ms, one after the other (fork, exec, wait: a shell
 * loop).  The perf engine's -d summary also counts the processes that
 * ended and their CPU samples: one per millisecond of their CPU, which the
 * workload reads with getrusage (a process's start and exit take more of
 * it on a busy machine: 25-27 ms each beside two CPU-bound jobs, against
 * 20-23 on a quiet one). */
ENGINE_TEST(record_lifetimes, short_processes_keep_their_shares, .timeout = 180)
{
    struct recording r;
    check_shares(&r, engine_p->name, (const char *[]){"processes", "100", "20", NULL});
    if (engine_is_perf(engine_p->name)) {
        const char *line = strstr(r.run.err, "[debug] children:");
        unsigned long long ended, samples;
        cr_assert(line && sscanf(line, "[debug] children: %llu ended, with %llu CPU samples",
                                 &ended, &samples) == 2,
                  "no children line in the -d summary:\n" REC_FMT, REC_ARGS(&r.run));
        cr_expect_eq(ended, 100, "%llu processes ended, 100 ran", ended);
        const char *children = strstr(r.run.out, "brief: children cpu ");
        unsigned long long cpu_ns;
        cr_assert(children && sscanf(children, "brief: children cpu %llu", &cpu_ns) == 1,
                  "the workload printed no children's CPU time:\n" REC_FMT, REC_ARGS(&r.run));
        /* At 1 kHz, a sample per millisecond of their CPU time; the kernel
         * counts CPU time at its ticks, hence the margin. */
        double want = (double)cpu_ns / 1e6;
        cr_log_info("%llu processes ended with %llu CPU samples, %.0f ms of CPU time", ended,
                    samples, want);
        cr_expect((double)samples >= 0.9 * want && (double)samples <= 1.1 * want,
                  "%llu CPU samples of the processes that ended, their CPU time says %.0f", samples,
                  want);
    }
    recording_free(&r);
}

/* 200 threads of 10 ms, each created when the previous one was joined.
 * The ptrace engine's entries are cut in the middle where a thread ran on
 * in another call, and each thread's run after its last entry goes to that
 * entry at its exit: without either, a thread's first function lost half a
 * tick (36.9% instead of 40% here; docs/recording.md, "A thread's first
 * and last sample"), and -d counts both. */
ENGINE_TEST(record_lifetimes, short_threads_keep_their_shares, .timeout = 180)
{
    struct recording r;
    check_shares(&r, engine_p->name, (const char *[]){"threads", "200", "10", NULL});
    if (!engine_is_perf(engine_p->name)) {
        const char *line = strstr(r.run.err, "[debug] spells:");
        unsigned long long into, from, moved, tails;
        cr_assert(line && sscanf(line,
                                 "[debug] spells: %llu intervals cut where a thread began a wait, "
                                 "%llu where it came out of one, %llu in the middle where it ran "
                                 "on in another call; %llu runs",
                                 &into, &from, &moved, &tails) == 4,
                  "no spells line in the -d summary:\n" REC_FMT, REC_ARGS(&r.run));
        cr_log_info("%llu cut in the middle, %llu exit tails", moved, tails);
        /* Each thread moves on three times, and ends once; so does the
         * main thread, whose last entry is seldom a run (it waits in a
         * join): 201 tails at most. */
        cr_expect_geq(moved, 200, "%llu intervals cut where a thread moved on", moved);
        cr_expect(tails >= 150 && tails <= 201, "%llu exit tails of 200 threads and main", tails);
    }
    recording_free(&r);
}
