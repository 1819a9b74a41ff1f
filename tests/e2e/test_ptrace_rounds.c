/*
 * test_ptrace_rounds.c - what a round of the ptrace engine stops (issue
 * 22).  The original format keeps the original's semantics: every sample
 * holds every live thread, stopped together, however many threads compete
 * for the CPUs.  A native recording with PTPROF_ROUNDS=periods and more
 * busy threads than CPUs leaves out of a round the threads that ran less
 * than half a period since their copy, and -d says so, round by round.
 * With 64 busy threads on the machine's CPUs every function keeps its
 * share of the CPU time within a point of what the workload measured.
 * The recorder stays in the program's session while its threads leave a
 * CPU free and moves to a session of its own when they want more CPUs than
 * there are, the program keeping the caller's (docs/recording.md, "The
 * recorder's own session").
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_query.h"
#include "record_native.h"
#include "report_csv.h"
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

/* --- 64 busy threads ---------------------------------------------------- */

#define BUSY_THREADS "64"
/* Points each function's inclusive share may be off: the 1, or
 * four standard errors of a share of the threads' copies, if wider (the
 * four functions alternate every few microseconds, so each copy is a
 * draw: 1 point needs some 20,000 equal copies, a test takes about
 * 5,000). */
#define MAX_SHARE_ERROR 1.0
#define STANDARD_ERRORS 4.0

static const char *const clock_funcs[] = {"work_alpha", "work_beta", "work_gamma", "work_delta"};

/* How many equal draws the profile's CPU time is worth: each thread
 * entry is a draw of where its thread was, weighted by the CPU time it
 * carries (since the thread's previous entry), and unequal weights count
 * for less (Kish's effective sample size, (sum w)^2 / sum w^2).  A round
 * that comes late gives its threads more time each, so fewer draws. */
static double effective_copies(const char *path)
{
    struct recording rec = {0};
    recording_load(&rec, path);
    struct pq_cpu_deltas cpu = {0};
    double sum = 0, sum_sq = 0;
    for (size_t i = 0; i < rec.prof.nsamples; i++) {
        const struct prof_sample *s = &rec.prof.samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            double w = (double)pq_cpu_delta(&cpu, &s->threads[t]);
            sum += w;
            sum_sq += w * w;
        }
    }
    pq_cpu_free(&cpu);
    profile_free(&rec.prof);
    cr_assert_gt(sum_sq, 0, "%s: no thread entry carries CPU time", path);
    return sum * sum / sum_sq;
}

static void sixty_four_threads_keep_their_shares(const char *stacks)
{
    char *dir = test_mkdtemp(), *profile = NULL;
    cr_assert(asprintf(&profile, "%s/profile", dir) > 0);
    char *ptprof = build_ptprof(), *clockwork = build_workload("clockwork");
    const char *argv[] = {ptprof,    "record",     "--engine", "ptrace",   "-g",    stacks,
                          "-f",      "1000",       "-d",       "-o",       profile, "--",
                          clockwork, BUSY_THREADS, "100",      "together", NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 300);
    cr_assert_eq(spawn_exit_code(res.status), 0, "ptprof record\n" RUN_FMT, RUN_ARGS(&res));
    const char *args[] = {profile, "-k", "procedure", NULL};
    char *csv = report_csv(args);
    double got[4], truth[4], got_sum = 0, true_sum = 0;
    for (int f = 0; f < 4; f++) {
        truth[f] = workload_value(res.out, clock_funcs[f]);
        got[f] = report_csv_value(csv, clock_funcs[f], "total_pct");
        cr_assert(truth[f] > 0, "no CPU time measured for %s:\n%s", clock_funcs[f], res.out);
        cr_assert(!isnan(got[f]), "-g %s: no row for %s in\n%.3000s", stacks, clock_funcs[f], csv);
        got_sum += got[f];
        true_sum += truth[f];
    }
    double copies = effective_copies(profile);
    for (int f = 0; f < 4; f++) {
        double share = 100.0 * got[f] / got_sum, want = 100.0 * truth[f] / true_sum;
        double p = want / 100, sampling = 100 * STANDARD_ERRORS * sqrt(p * (1 - p) / copies);
        double bound = build_tolerance(sampling > MAX_SHARE_ERROR ? sampling : MAX_SHARE_ERROR);
        cr_log_info("-g %s, %s busy threads: %-10s %6.2f%%, true %6.2f%% (%+.2f, %.0f copies)",
                    stacks, BUSY_THREADS, clock_funcs[f], share, want, share - want, copies);
        cr_expect_leq(fabs(share - want), bound,
                      "-g %s, %s busy threads: %s has %.2f%% of the four functions' time "
                      "inclusive, the workload measured %.2f%% (at most %.1f points apart)\n%s",
                      stacks, BUSY_THREADS, clock_funcs[f], share, want, bound, res.err);
    }
    free(csv);
    spawn_result_free(&res);
    free(ptprof);
    free(clockwork);
    free(profile);
    test_rmtree(dir);
}

Test(ptrace_rounds, sixty_four_busy_threads_keep_their_shares_without_stacks, .timeout = 300)
{
    sixty_four_threads_keep_their_shares("none");
}

Test(ptrace_rounds, sixty_four_busy_threads_keep_their_shares_with_dwarf_stacks, .timeout = 300)
{
    sixty_four_threads_keep_their_shares("dwarf");
}

/* From /proc/PID/stat: the parent, process group and session of PID. */
static void process_ids(pid_t pid, pid_t *ppid, pid_t *pgrp, pid_t *sid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s: cannot open", path);
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *after = strrchr(buf, ')');
    int p = 0, g = 0, s = 0;
    cr_assert(after && sscanf(after, ") %*c %d %d %d", &p, &g, &s) == 3, "%s: %s", path, buf);
    *ppid = p;
    *pgrp = g;
    *sid = s;
}

static bool autogroup_enabled(void)
{
    FILE *f = fopen("/proc/sys/kernel/sched_autogroup_enabled", "r");
    int c = f ? fgetc(f) : EOF;
    if (f)
        fclose(f);
    return c == '1';
}

/* The only child of PID (from /proc/PID/task/PID/children), 0 if none. */
static pid_t only_child(pid_t pid)
{
    char path[96];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
    FILE *f = fopen(path, "r");
    int child = 0;
    if (f) {
        if (fscanf(f, "%d", &child) != 1)
            child = 0;
        fclose(f);
    }
    return child;
}

/* The ids of the front (ptprof as started), the recorder (its child) and
 * the program (the recorder's child). */
struct session_ids {
    pid_t front, front_pgrp, front_sid;
    pid_t recorder, recorder_parent, recorder_pgrp, recorder_sid;
    pid_t target, target_parent, target_pgrp, target_sid;
};

static void read_session_ids(struct session_ids *ids, pid_t front, pid_t target)
{
    pid_t parent;
    ids->front = front;
    process_ids(front, &parent, &ids->front_pgrp, &ids->front_sid);
    ids->target = target;
    process_ids(target, &ids->target_parent, &ids->target_pgrp, &ids->target_sid);
    ids->recorder = ids->target_parent;
    process_ids(ids->recorder, &ids->recorder_parent, &ids->recorder_pgrp, &ids->recorder_sid);
}

/* ptprof record --engine ptrace -d -- WORKLOAD ARGS... started as a job of
 * its own (spawn_start() makes ptprof a process group leader, as a shell
 * does), with the program's pid once it is running. */
static void start_recording(struct spawn_proc *p, char **profile, char **dir, const char *workload,
                            const char *arg1, const char *arg2)
{
    *dir = test_mkdtemp();
    cr_assert(asprintf(profile, "%s/profile", *dir) > 0);
    char *ptprof = build_ptprof(), *wl = build_workload(workload);
    const char *argv[] = {ptprof,   "record", "--engine", "ptrace", "-d", "-o",
                          *profile, "--",     wl,         arg1,     arg2, NULL};
    struct spawn_opts opts = {.argv = argv, .timeout_s = 60};
    spawn_start(&opts, p);
    free(ptprof);
    free(wl);
}

/* A program whose threads leave a CPU free: the recorder stays in its
 * session, where its short slice takes a CPU the moment its tick is due
 * (docs/recording.md, "The recorder's own session"), and a signal to the
 * process group, which reaches the recorder directly and through the front,
 * counts once: the program's handler sees the one Ctrl-C, and ptprof exits
 * as the program does. */
Test(ptrace_rounds, beside_few_busy_threads_the_recorder_stays_in_the_programs_session,
     .timeout = 120)
{
    if (!autogroup_enabled())
        cr_skip_test("the kernel's autogroup is off: the recorder stays in the program's session");
    struct spawn_proc p;
    char *profile, *dir;
    start_recording(&p, &profile, &dir, "spin", "--handler", "20");
    spawn_pump_until(&p, "spin: ready", 20);
    cr_assert_not(spawn_pump(&p, 0.5), "spin ended by itself: %s", p.err ? p.err : "");
    int target = 0;
    cr_assert(sscanf(strstr(p.out, "spin: ready"), "spin: ready, pid %d", &target) == 1);
    struct session_ids ids;
    read_session_ids(&ids, p.pid, target);
    killpg(ids.front_pgrp, SIGINT);
    struct spawn_result res;
    spawn_finish(&p, &res);

    cr_expect_eq(ids.recorder_parent, ids.front, "the program's tracer %d is not ptprof's child",
                 (int)ids.recorder);
    cr_expect_eq(ids.recorder_sid, ids.front_sid, "the recorder left the program's session");
    cr_expect_eq(ids.recorder_pgrp, ids.front_pgrp, "the recorder left the program's group");
    cr_expect_eq(ids.target_sid, ids.front_sid, "the program left the caller's session");
    cr_expect_eq(ids.target_pgrp, ids.front_pgrp, "the program left the caller's process group");
    cr_expect_eq(count_occurrences(res.out, "got SIGINT"), 1, RUN_CONTEXT(&res));
    cr_expect_eq(spawn_exit_code(res.status), 7, "want the program's 7: " RUN_CONTEXT(&res));
    cr_expect(strstr(res.err, "[debug] session:     the recorder in the program's session (its "
                              "threads never wanted more than the CPUs)"),
              "-d does not say where the recorder ran:\n%s", res.err);
    spawn_result_free(&res);
    free(profile);
    test_rmtree(dir);
    free(dir);
}

/* A program whose threads want more CPUs than there are: the recorder
 * moves to a session of its own, where it competes with the program as a
 * whole, while the program keeps the caller's session and process group. */
Test(ptrace_rounds, beside_more_busy_threads_than_cpus_the_recorder_has_a_session_of_its_own,
     .timeout = 120)
{
    if (!autogroup_enabled())
        cr_skip_test("the kernel's autogroup is off: the recorder stays in the program's session");
    char threads[32];
    snprintf(threads, sizeof(threads), "%ld", 4 * sysconf(_SC_NPROCESSORS_ONLN));
    struct spawn_proc p;
    char *profile, *dir;
    start_recording(&p, &profile, &dir, "shares", threads, "20");
    struct session_ids ids = {0};
    for (int tries = 0; tries < 200; tries++) {
        pid_t recorder = only_child(p.pid), target = recorder ? only_child(recorder) : 0;
        if (target) {
            read_session_ids(&ids, p.pid, target);
            if (ids.recorder_sid != ids.front_sid)
                break;
        }
        cr_assert_not(spawn_pump(&p, 0.05), "ptprof ended early: %s", p.err ? p.err : "");
    }
    cr_assert(ids.target, "no program under ptprof %d", (int)p.pid);
    killpg(ids.front_pgrp, SIGINT);
    struct spawn_result res;
    spawn_finish(&p, &res);

    cr_expect_eq(ids.recorder_parent, ids.front, "the program's tracer %d is not ptprof's child",
                 (int)ids.recorder);
    cr_expect_eq(ids.recorder_sid, ids.recorder, "the recorder %d is in session %d, not its own",
                 (int)ids.recorder, (int)ids.recorder_sid);
    cr_expect_eq(ids.target_sid, ids.front_sid, "the program left the caller's session");
    cr_expect_eq(ids.target_pgrp, ids.front_pgrp, "the program left the caller's process group");
    cr_expect_eq(spawn_exit_code(res.status), 128 + SIGINT, RUN_CONTEXT(&res));
    const char *line = strstr(res.err, "[debug] session:     the recorder in a session of its own");
    double wanted = 0;
    cr_expect(line && sscanf(line,
                             "[debug] session:     the recorder in a session of its own (its own "
                             "autogroup) from %*f s, when the program's threads wanted %lf",
                             &wanted) == 1,
              "-d does not say where the recorder ran:\n%s", res.err);
    cr_expect_gt(wanted, (double)sysconf(_SC_NPROCESSORS_ONLN),
                 "it left when the threads wanted %.1f CPUs", wanted);
    spawn_result_free(&res);
    free(profile);
    test_rmtree(dir);
    free(dir);
}
