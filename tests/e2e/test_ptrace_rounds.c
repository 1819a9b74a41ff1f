/*
 * test_ptrace_rounds.c - what a round of the ptrace engine stops (issue
 * 22).  The original format keeps the original's semantics: every sample
 * holds every live thread, stopped together, however many threads compete
 * for the CPUs.  A native recording with PTPROF_ROUNDS=periods and more
 * busy threads than CPUs leaves out of a round the threads that ran less
 * than half a period since their copy, and -d says so, round by round.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_record_common.h"

#define NTHREADS 8

/* shares NTHREADS workers (the main thread is one), busy for SECONDS. */
static void record_shares(const char *format, const char *profile, struct spawn_result *res)
{
    char *ptprof = build_ptprof(), *shares = build_workload("shares");
    char nthreads[16];
    snprintf(nthreads, sizeof(nthreads), "%d", NTHREADS);
    const char *argv[] = {ptprof,  "record", "--engine", "ptrace", "--format", format,
                          "-g",    "none",   "-f",       "1000",   "-d",       "-o",
                          profile, "--",     shares,     nthreads, "2",        NULL};
    run_argv(res, argv, NULL, NULL, 120);
    cr_assert_eq(spawn_exit_code(res->status), 0, "ptprof record\n" RUN_FMT, RUN_ARGS(res));
    free(ptprof);
    free(shares);
}

Test(ptrace_rounds, pperf_samples_hold_every_live_thread, .timeout = 150)
{
    char *dir = test_mkdtemp(), *profile = NULL;
    cr_assert(asprintf(&profile, "%s/profile.pperf", dir) > 0);
    struct spawn_result res;
    record_shares("pperf", profile, &res);
    struct pperf_profile prof;
    load_valid_profile(profile, &prof);
    cr_assert_gt(prof.nsamples, 100, "%llu samples", (unsigned long long)prof.nsamples);

    /* Every worker lives from the start to the end: once a thread was in
     * a sample it is in every sample up to its last. */
    uint32_t tids[NTHREADS + 4];
    size_t first[NTHREADS + 4], last[NTHREADS + 4], ntids = 0;
    for (size_t i = 0; i < prof.nsamples; i++) {
        const struct pperf_sample *s = &prof.samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            size_t k = 0;
            while (k < ntids && tids[k] != s->threads[t].tid)
                k++;
            if (k == ntids) {
                cr_assert_lt(ntids, NTHREADS + 4, "more threads than the workload has");
                tids[ntids] = s->threads[t].tid;
                first[ntids++] = i;
            }
            last[k] = i;
        }
    }
    cr_assert_eq(ntids, NTHREADS, "%zu threads in the samples, the workload runs %d", ntids,
                 NTHREADS);
    size_t all_from = 0, all_to = prof.nsamples;
    for (size_t k = 0; k < ntids; k++) {
        all_from = first[k] > all_from ? first[k] : all_from;
        all_to = last[k] < all_to ? last[k] : all_to;
    }
    cr_expect_gt(all_to, all_from + 100, "all %d threads were in samples %zu to %zu only", NTHREADS,
                 all_from, all_to);
    for (size_t i = 0; i < prof.nsamples; i++) {
        const struct pperf_sample *s = &prof.samples[i];
        for (size_t k = 0; k < ntids; k++) {
            bool in = false;
            for (uint32_t t = 0; t < s->nthreads && !in; t++)
                in = s->threads[t].tid == tids[k];
            cr_expect(in || i < first[k] || i > last[k],
                      "sample %zu of %llu lacks thread %u, which was in samples %zu to %zu", i,
                      (unsigned long long)prof.nsamples, tids[k], first[k], last[k]);
        }
    }
    const char *stops = strstr(res.err, "[debug] stops:");
    cr_assert(stops, "no stops line in -d:\n%s", res.err);
    double stopped, reused, left_out, deferred;
    cr_assert_eq(sscanf(stops,
                        "[debug] stops: %lf threads stopped, %lf reused (idle since their last "
                        "copy), %lf left out (ran less than a period), %lf deferred",
                        &stopped, &reused, &left_out, &deferred),
                 4, "%.300s", stops);
    cr_expect_eq(left_out, 0, "the original's format leaves no thread out: %.300s", stops);
    pperf_free(&prof);
    spawn_result_free(&res);
    test_rmtree(dir);
    free(profile);
}

Test(ptrace_rounds, periods_rounds_leave_out_threads_that_ran_little, .timeout = 150)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) >= NTHREADS)
        cr_skip_test("as many CPUs as busy threads: no round has more threads that ran");
    char *dir = test_mkdtemp(), *profile = NULL;
    cr_assert(asprintf(&profile, "%s/profile", dir) > 0);
    struct spawn_result res;
    setenv("PTPROF_ROUNDS", "periods", 1);
    record_shares("native", profile, &res);
    unsetenv("PTPROF_ROUNDS");
    const char *stops = strstr(res.err, "[debug] stops:");
    const char *window = strstr(res.err, "[debug] window:");
    cr_assert(stops && window, "no stops or window line in -d:\n%s", res.err);
    double stopped, reused, left_out, deferred, window_us;
    cr_assert_eq(sscanf(stops,
                        "[debug] stops: %lf threads stopped, %lf reused (idle since their last "
                        "copy), %lf left out (ran less than a period), %lf deferred",
                        &stopped, &reused, &left_out, &deferred),
                 4, "%.300s", stops);
    cr_assert_eq(sscanf(window, "[debug] window: %lf us", &window_us), 1, "%.200s", window);
    cr_expect_gt(left_out, 0, "%d busy threads on fewer CPUs: %.300s", NTHREADS, stops);
    cr_expect_gt(stopped, 0, "%.300s", stops);
    cr_expect_gt(window_us, 0, "%.200s", window);
    spawn_result_free(&res);
    test_rmtree(dir);
    free(profile);
}
