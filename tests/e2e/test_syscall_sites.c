/*
 * test_syscall_sites.c - samples land where the program is, not where it
 * next enters the kernel (issue 26).  The clockwork workload reads its
 * thread CPU clock every few microseconds (a system call made from the
 * vDSO's clock_gettime) in four functions of known weights, and prints
 * their CPU time and its own user and kernel time.  With either engine
 * (engines.h), in 500 threads run one after another and in one long
 * thread, the profile must give every function its inclusive share within
 * 2 points of what the workload measured, and the system call's site (the
 * vDSO's and libc's clock_gettime, self) about the kernel's part of the
 * program's CPU time: that is what the call cost, as the perf engine
 * charges it (kernel-mode samples at the call's site).  The site also
 * holds the vDSO's own code, and the kernel's user/system split is itself
 * sampled at its ticks: under the perf engine the site came out 1 to 3.6
 * points above the kernel share, so it may exceed it by 4 points.  Below,
 * it must keep at least half of it (a fix that moved every stop away from
 * the call would fail): under the ptrace engine the program's kernel time
 * also holds what the stops cost it in the kernel (2 to 4 points at 2 kHz
 * here), which is not the call's.  A ptrace stop that took effect at the
 * call's exit used to charge the site every such sample: 15-40% against
 * 10% of kernel time.  The workload also measures what a call costs, by
 * reads back to back: the site may be 4 points above the larger of the
 * two.  Where the calls' share is more than 4 points above the kernel's,
 * the split does not hold the call's cost (a PVM guest leaves the
 * way into the kernel and back to user time: the calls took 29-35% of
 * the CPU time, the kernel counted 20-29%, the perf engine's site 34-39%)
 * and the site is shown, not judged.  Where perf record's own shares or
 * site miss the same way on the machine, the perf engine, which samples
 * as perf does, is held to perf record's distance plus chance (PEER_SLACK).
 * Either engine's site is shown, not judged, where other work kept the
 * CPUs busy during the run (check_sites() says why).
 *
 * 2000 Hz and 5 s of CPU time: at 1 kHz over 2 s a share of 40% moves by
 * 1.1 points from run to run by sampling alone, too close to the target.
 * Each clockwork thread starts at a random point of its cycle: a thread's
 * first function loses half a tick to its first sample on either engine
 * (docs/recording.md, "A thread's first and last sample"), a different
 * effect, which threads that all begin with the same function would show
 * here too (about 3 points on the first function at 200 threads).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines.h"
#include "report_csv.h"
#include "test_record_common.h"

#define NFUNCS 4
#define FREQ "2000"
#define MAX_SHARE_ERROR 2.0 /* points, each function's inclusive share */
/* Where the perf engine misses a bound, perf record itself records the
 * workload on the machine: the kernel's samples may be off the program's
 * clock there (a PVM guest: perf record's work_alpha 1.2 to 3.2 points
 * high, run by run), and the perf engine, which samples as perf does, may
 * then be as far off as perf record, within chance: two runs' shares of
 * 10,000 samples differ by 0.7 points (one standard deviation) by chance
 * alone, PEER_SLACK is three. */
#define PEER_SLACK 2.0
/* Points the call site's self share may lie above the kernel time; below,
 * it must keep half of it. */
#define MAX_SITE_ABOVE 4.0

static const char *const funcs[NFUNCS] = {"work_alpha", "work_beta", "work_gamma", "work_delta"};
/* Where the clock read enters the kernel, and the C library's wrapper. */
static const char *const site_funcs[] = {"__vdso_clock_gettime", "clock_gettime",
                                         "__clock_gettime"};

struct truth {
    double ns[NFUNCS];
    double user_ns, sys_ns;
    double reads, call_ns; /* clock reads made, and what one costs */
};

static void read_truth(const char *out, struct truth *t)
{
    for (int f = 0; f < NFUNCS; f++) {
        t->ns[f] = workload_value(out, funcs[f]);
        cr_assert(t->ns[f] > 0, "the workload printed no CPU time for %s:\n%s", funcs[f], out);
    }
    t->user_ns = workload_value(out, "user_ns");
    t->sys_ns = workload_value(out, "sys_ns");
    cr_assert(t->user_ns > 0 && !isnan(t->sys_ns), "the workload printed no rusage:\n%s", out);
    t->reads = workload_value(out, "clock_reads");
    t->call_ns = workload_value(out, "call_ns");
    cr_assert(t->reads > 0 && t->call_ns > 0, "the workload printed no clock reads:\n%s", out);
}

/* The ptrace engine's -d says how many samples stopped at a call's exit,
 * how much CPU time those kept there carry, and the program's kernel time,
 * which bounds it. */
static void check_debug_lines(const char *err)
{
    const char *exits = strstr(err, "[debug] call exits:");
    const char *program = strstr(err, "[debug] program:");
    cr_assert(exits && program, "no call exits or program line in -d:\n%s", err);
    unsigned long long stops, ran, kept, moved;
    double pct, kept_s, moved_s, user_s, kernel_s;
    cr_assert_eq(sscanf(exits,
                        "[debug] call exits: %llu of %llu samples of threads that ran stopped at a "
                        "system call's exit (%lf%%); %llu kept there (%lf s of CPU), %llu charged "
                        "to the code that made the call (%lf s)",
                        &stops, &ran, &pct, &kept, &kept_s, &moved, &moved_s),
                 7, "cannot read %.300s", exits);
    cr_assert_eq(sscanf(program, "[debug] program: %lf s user, %lf s kernel", &user_s, &kernel_s),
                 2, "cannot read %.200s", program);
    cr_expect_gt(stops, 0, "clockwork makes a call every few us: some stops are at its exit");
    cr_expect_eq(stops, kept + moved, "%s", exits);
    cr_expect_leq(kept_s, kernel_s + 0.01,
                  "kept %.3f s at calls, the program spent %.3f s in the "
                  "kernel",
                  kept_s, kernel_s);
    cr_expect_gt(user_s, 1.0, "%s", program);
}

/* The four functions' inclusive shares in the profile at PATH against T:
 * each share's distance from the truth into ERR; the largest returned. */
static double share_errors(const char *path, const struct truth *t, double err[NFUNCS])
{
    const char *args[] = {path, "-k", "procedure", NULL};
    char *csv = report_csv(args);
    double got[NFUNCS], got_sum = 0, true_sum = 0, worst = 0;
    for (int f = 0; f < NFUNCS; f++) {
        got[f] = report_csv_value(csv, funcs[f], "total_pct");
        cr_assert(!isnan(got[f]), "%s: no row for %s in\n%.3000s", path, funcs[f], csv);
        got_sum += got[f];
        true_sum += t->ns[f];
    }
    for (int f = 0; f < NFUNCS; f++) {
        err[f] = 100.0 * got[f] / got_sum - 100.0 * t->ns[f] / true_sum;
        worst = fabs(err[f]) > worst ? fabs(err[f]) : worst;
    }
    free(csv);
    return worst;
}

/* The clock read's call site in percent of the profile at PATH's CPU
 * time: the site's own samples (ptprof charges a kernel-mode sample to the
 * call that entered the kernel), or with BELOW those of the kernel code
 * under it too (perf record's samples hold kernel frames): the outermost
 * site function's inclusive share. */
static double site_share(const char *path, bool below)
{
    const char *args[] = {path, "-k", "procedure", NULL};
    char *csv = report_csv(args);
    double site = 0;
    for (size_t k = 0; k < sizeof(site_funcs) / sizeof(site_funcs[0]); k++) {
        double v = report_csv_value(csv, site_funcs[k], below ? "total_pct" : "self_pct");
        if (!isnan(v))
            site = below ? fmax(site, v) : site + v;
    }
    free(csv);
    return site;
}

/* What the calls cost, in percent of T's CPU time, and the kernel's part. */
static double calls_pct(const struct truth *t)
{
    return 100.0 * t->reads * t->call_ns / (t->user_ns + t->sys_ns);
}
static double kernel_pct(const struct truth *t)
{
    return 100.0 * t->sys_ns / (t->user_ns + t->sys_ns);
}

/* How far perf record's own recording is off its run's truth. */
struct peer {
    bool ran;
    double err[NFUNCS]; /* each function's share minus the truth, points */
    double site_above;  /* its call site's share above the calls' cost */
};

/* A recording of clockwork THREADS MS into DIR by `perf record` itself,
 * sampling the task clock as the perf engine does, with DWARF stacks,
 * against the truth that run printed, into PEER; PEER->ran false where
 * perf is missing or cannot record. */
static void perf_record_peer(const char *dir, const char *threads, const char *ms,
                             struct peer *peer)
{
    peer->ran = false;
    char *perf = test_tool_path("perf");
    if (!perf)
        return;
    char *data = test_path(dir, "perf.data"), *clockwork = build_workload("clockwork");
    const char *argv[] = {perf,         "record",       "-q",    "-F", FREQ, "-e",
                          "task-clock", "--call-graph", "dwarf", "-o", data, "--",
                          clockwork,    threads,        ms,      NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 300);
    if (spawn_exit_code(res.status) == 0) {
        struct truth t;
        read_truth(res.out, &t);
        double *err = peer->err, site = site_share(data, true);
        share_errors(data, &t, err);
        peer->site_above = site - fmax(calls_pct(&t), kernel_pct(&t));
        peer->ran = true;
        cr_log_info("perf record, clockwork %s %s: alpha %+.2f beta %+.2f gamma %+.2f delta %+.2f, "
                    "call site %.2f%% with the kernel under it (%+.2f)",
                    threads, ms, err[0], err[1], err[2], err[3], site, peer->site_above);
    } else {
        cr_log_warn("perf record could not record clockwork:\n" RUN_FMT, RUN_ARGS(&res));
    }
    spawn_result_free(&res);
    unlink(data);
    free(clockwork);
    free(data);
    free(perf);
}

static void check_sites(const char *engine, const char *threads, const char *ms)
{
    char *dir = test_mkdtemp(), *profile = NULL;
    cr_assert(asprintf(&profile, "%s/profile", dir) > 0);
    char *ptprof = build_ptprof(), *clockwork = build_workload("clockwork");
    const char *argv[] = {ptprof, "record", "--engine", engine,    "-f",    FREQ, "-d",
                          "-o",   profile,  "--",       clockwork, threads, ms,   NULL};
    struct spawn_result res;
    struct busy_watch watch;
    busy_watch_start(&watch);
    run_argv(&res, argv, NULL, NULL, 300);
    bool busy = busy_watch_end(&watch);
    cr_assert_eq(spawn_exit_code(res.status), 0, "ptprof record\n" RUN_FMT, RUN_ARGS(&res));
    struct truth t;
    read_truth(res.out, &t);

    const char *args[] = {profile, "-k", "procedure", NULL};
    char *csv = report_csv(args);
    double true_sum = 0;
    for (int f = 0; f < NFUNCS; f++)
        true_sum += t.ns[f];
    double site = site_share(profile, false), kernel = kernel_pct(&t), calls = calls_pct(&t);
    cr_log_info("%s engine, clockwork %s %s: call site %.2f%% self, the calls %.2f%% of the CPU "
                "time, kernel time %.2f%%",
                engine, threads, ms, site, calls, kernel);
    double err[NFUNCS], worst = share_errors(profile, &t, err),
                        allowed = build_tolerance(MAX_SHARE_ERROR);
    /* Where the calls cost more than the kernel's time and the vDSO's code
     * explain (a PVM guest leaves the way in and out to user time), the
     * kernel's split cannot judge the site: it is shown, not judged. */
    bool split_holds = calls - kernel <= MAX_SITE_ABOVE, judged = split_holds;
    /* Where other work keeps the CPUs busy, the program is preempted
     * often, and a thread that makes a call every microsecond or two is
     * mostly preempted at a call's exit, where the kernel looks for a
     * task to switch to.  On a PVM guest the switch is kernel time of its
     * own, spent at the call's site: the perf engine charges a kernel-mode
     * sample to that site, and the ptrace engine keeps a sample that
     * stopped at a call's exit at the call while the process's kernel time
     * allows (syscall_exits.h).  So the site holds more than the calls (CI,
     * two CPU-bound jobs: the ptrace engine's site 5 to 6.3 points above
     * the larger of the calls' and the kernel's share; the perf engine's
     * 8.2 under ASan beside a build).  The kernel's CPU pressure around
     * the run and what other processes used of the CPUs during it tell
     * such a machine (busy_watch): the site is then shown. */
    if (judged && busy) {
        cr_log_warn("%s engine, CPU pressure %.0f%% around the run, other work %.0f%% of the "
                    "CPUs during it: the call site (%.2f%%) is not judged on a busy machine",
                    engine, watch.pressure * 100, watch.others * 100, site);
        judged = false;
    }
    double above = site - fmax(calls, kernel), site_allowed = build_tolerance(MAX_SITE_ABOVE);
    /* The perf engine's samples are the kernel's: where they miss, so may
     * it, but not by much more than perf record's own on this machine. */
    struct peer peer = {.ran = false};
    if (engine_is_perf(engine) && (worst > allowed || (judged && above > site_allowed)))
        perf_record_peer(dir, threads, ms, &peer);
    for (int f = 0; f < NFUNCS; f++) {
        double truth = 100.0 * t.ns[f] / true_sum;
        bool as_perf = peer.ran && fabs(err[f] - peer.err[f]) <= PEER_SLACK;
        cr_log_info("%s engine, clockwork %s %s: %-10s %6.2f%%, true %6.2f%% (%+.2f)", engine,
                    threads, ms, funcs[f], truth + err[f], truth, err[f]);
        cr_expect(fabs(err[f]) <= allowed || as_perf,
                  "%s engine, clockwork %s %s: %s has %.2f%% of the four functions' time "
                  "inclusive, the workload measured %.2f%% (at most %.1f points apart%s%.2f)",
                  engine, threads, ms, funcs[f], truth + err[f], truth, allowed,
                  peer.ran ? ", or as far as perf record's " : "", peer.ran ? peer.err[f] : 0.0);
    }
    if (!split_holds)
        cr_log_warn("%s engine: the calls took %.2f%% of the CPU time, the kernel counted %.2f%%: "
                    "this machine's split of user and kernel time does not judge the call site "
                    "(%.2f%%)",
                    engine, calls, kernel, site);
    bool site_as_perf = peer.ran && fabs(above - peer.site_above) <= PEER_SLACK;
    if (peer.ran)
        cr_log_info("perf record's call site is %+.2f points from the calls' cost, the perf "
                    "engine's %+.2f",
                    peer.site_above, above);
    cr_expect(!judged || ((above <= site_allowed || site_as_perf) && site >= kernel / 2),
              "%s engine, clockwork %s %s: clock_gettime's system call site has %.2f%% of the CPU "
              "time self, the program spent %.2f%% of its CPU time in the kernel (at least half "
              "of it) and the calls took %.2f%% (%.0f reads of %.0f ns; at most %.1f points above "
              "the larger)\n%.2000s",
              engine, threads, ms, site, kernel, calls, t.reads, t.call_ns, site_allowed, csv);
    if (!engine_is_perf(engine))
        check_debug_lines(res.err);
    free(csv);
    spawn_result_free(&res);
    free(ptprof);
    free(clockwork);
    free(profile);
    test_rmtree(dir);
}

ENGINE_TEST(syscall_sites, many_short_threads, .timeout = 400)
{
    check_sites(engine_p->name, "500", "10");
}

ENGINE_TEST(syscall_sites, one_long_thread, .timeout = 400)
{
    check_sites(engine_p->name, "1", "5000");
}
