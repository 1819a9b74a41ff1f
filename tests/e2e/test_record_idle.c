/*
 * test_record_idle.c - threads the ptrace engine does not stop: a thread
 * that has not run since its last copy is sampled from that copy (so
 * sleeping threads are not woken at every sample), a thread that ran never
 * is; and, with either engine, a thread blocked in a call is named by the
 * call its program made, also when the kernel restarted that call as
 * restart_syscall (tests/workloads/blockers.c, tests/workloads/phases.c).
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engines.h"
#include "record_native.h"
#include "report_csv.h"
#include "test_record_common.h"

/* The four calls blockers' threads sit in, as report names them. */
static const char *const blocked_in[] = {"[syscall clock_nanosleep]", "[syscall poll]",
                                         "[syscall futex]", "[syscall read]"};

/* report --wall -k procedure of PROFILE: every call of blocked_in holds
 * about a quarter of the threads' wall time (each thread waits in its call
 * the whole run; stopped threads and the helper child make up the rest),
 * and restart_syscall none. */
static void check_call_names(const char *profile)
{
    const char *args[] = {profile, "--wall", "-k", "procedure", NULL};
    char *csv = report_csv(args);
    for (size_t i = 0; i < sizeof(blocked_in) / sizeof(blocked_in[0]); i++) {
        double pct = report_csv_value(csv, blocked_in[i], "self_pct");
        cr_log_info("%s: %.1f%% of the wall time", blocked_in[i], pct);
        cr_expect(pct >= 15.0, "%s has %.1f%% of the wall time, want about 20-25%%:\n%.3000s",
                  blocked_in[i], pct, csv);
    }
    double restart = report_csv_value(csv, "[syscall restart_syscall]", "self_pct");
    cr_expect(isnan(restart), "%.1f%% of the wall time is named restart_syscall:\n%.3000s", restart,
              csv);
    free(csv);
}

/* Record blockers with ENGINE, OPTIONS (NULL-terminated) and the
 * workload's own WORKLOAD_ARGS, and check its calls' names and shares. */
static void record_blockers(const char *engine, const char *const *options,
                            const char *const *workload_args)
{
    char *wl = build_workload("blockers");
    const char *args[REC_ARGS_MAX];
    size_t n = 0;
    for (size_t i = 0; options[i] && n + 3 < REC_ARGS_MAX; i++)
        args[n++] = options[i];
    args[n++] = "--";
    args[n++] = wl;
    for (size_t i = 0; workload_args[i] && n + 1 < REC_ARGS_MAX; i++)
        args[n++] = workload_args[i];
    args[n] = NULL;
    struct recording r;
    record_native_engine(&r, engine, args, 0, 60);
    cr_assert(strstr(r.run.out, "blockers: ok"), "the workload failed:\n" REC_FMT,
              REC_ARGS(&r.run));
    check_call_names(r.path);
    recording_free(&r);
    free(wl);
}

/* A SIGSTOP/SIGCONT in the middle takes every sleeping call out of its
 * sleep; those that keep their state in the kernel come back as
 * restart_syscall, and must keep the name of the call the program made,
 * whichever engine looks at the blocked threads. */
ENGINE_TEST(record_idle, restarted_calls_keep_the_name_of_the_call_made, .timeout = 90)
{
    record_blockers(engine_p->name, (const char *[]){NULL}, (const char *[]){"1.5", "stop", NULL});
}

/* Attached to a process whose calls were already restarted, the recorder
 * never sees the original numbers: the kernel's wchan names them. */
ENGINE_TEST(record_idle, calls_restarted_before_an_attach_are_named_too, .timeout = 90)
{
    char *wl = build_workload("blockers"), *ptprof = build_ptprof();
    const char *wl_argv[] = {wl, "6", NULL};
    struct spawn_opts wl_opts = {.argv = wl_argv, .timeout_s = 60};
    struct spawn_proc tp;
    spawn_start(&wl_opts, &tp);
    spawn_pump_until(&tp, "blockers: pid", 10);
    pid_t pid = (pid_t)parse_after(tp.out, "blockers: pid ");
    struct timespec settle = {.tv_nsec = 200 * 1000 * 1000};
    nanosleep(&settle, NULL);
    cr_assert_eq(kill(pid, SIGSTOP), 0);
    nanosleep(&settle, NULL);
    cr_assert_eq(kill(pid, SIGCONT), 0);
    nanosleep(&settle, NULL);

    char *dir = test_mkdtemp(), *profile = NULL, *pidtext = NULL;
    cr_assert(asprintf(&profile, "%s/profile.data", dir) > 0);
    cr_assert(asprintf(&pidtext, "%d", (int)pid) > 0);
    const char *argv[] = {ptprof,  "record", "--engine",   engine_p->name, "-o", profile,
                          "--pid", pidtext,  "--duration", "1.5",          NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    check_call_names(profile);

    struct spawn_result wl_res;
    spawn_finish(&tp, &wl_res);
    cr_assert(strstr(wl_res.out, "blockers: ok"), "the workload failed:\n" REC_FMT,
              REC_ARGS(&wl_res));
    spawn_result_free(&wl_res);
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(profile);
    free(pidtext);
    free(wl);
    free(ptprof);
}

/* "[debug] stops: S threads stopped, R reused per sample" */
static void stops_per_sample(const struct spawn_result *res, double *stopped, double *reused)
{
    const char *line = strstr(res->err, "[debug] stops:");
    cr_assert(line, "no stops line in the -d summary:\n" RUN_FMT, RUN_ARGS(res));
    cr_assert_eq(sscanf(line, "[debug] stops: %lf threads stopped, %lf reused", stopped, reused), 2,
                 "%.200s", line);
}

#define CALLS_KEPT 512 /* call numbers counted: blockers' are under 300 */

/* One thread's samples by the call it sat in. */
struct thread_calls {
    uint32_t tid;
    unsigned count[CALLS_KEPT]; /* samples in each call, by number */
    unsigned most;              /* samples in its usual call(s) */
};

static struct thread_calls *calls_of(struct thread_calls *threads, size_t n, uint32_t tid)
{
    for (size_t j = 0; j < n; j++)
        if (threads[j].tid == tid)
            return &threads[j];
    return NULL;
}

/* The samples of PROF in which a thread ran code or sat in a call other
 * than the one it is in most often: the program's start and end.  There
 * every thread that ran is stopped, as it should be, and on a busy machine
 * the start spreads over many rounds. */
static size_t samples_unsettled(const struct profile *prof)
{
    static struct thread_calls threads[8];
    memset(threads, 0, sizeof(threads));
    size_t nthreads = 0, unsettled = 0;
    for (size_t i = 0; i < prof->nsamples; i++)
        for (uint32_t k = 0; k < prof->samples[i].nthreads; k++) {
            const struct prof_thread_sample *t = &prof->samples[i].threads[k];
            struct thread_calls *c = calls_of(threads, nthreads, t->tid);
            if (!c && nthreads < 8) {
                c = &threads[nthreads++];
                c->tid = t->tid;
            }
            if (c && t->syscall >= 0 && t->syscall < CALLS_KEPT)
                c->count[t->syscall]++;
        }
    for (size_t j = 0; j < nthreads; j++)
        for (size_t nr = 0; nr < CALLS_KEPT; nr++)
            if (threads[j].count[nr] > threads[j].most)
                threads[j].most = threads[j].count[nr];
    for (size_t i = 0; i < prof->nsamples; i++) {
        bool settled = true;
        for (uint32_t k = 0; k < prof->samples[i].nthreads; k++) {
            const struct prof_thread_sample *t = &prof->samples[i].threads[k];
            const struct thread_calls *c = calls_of(threads, nthreads, t->tid);
            if (!c || t->syscall < 0 || t->syscall >= CALLS_KEPT || c->count[t->syscall] < c->most)
                settled = false;
        }
        unsettled += !settled;
    }
    return unsettled;
}

/* Four threads asleep the whole run: each is stopped once or twice (its
 * first copy, and its return into the call), not at every sample; none of
 * them notices (no EINTR, no lost wake-up). */
Test(record_idle, sleeping_threads_are_not_stopped_again, .timeout = 60)
{
    char *wl = build_workload("blockers");
    const char *args[] = {"-d", "-f", "1000", "--", wl, "1.5", NULL};
    struct recording r;
    record_native_engine(&r, "ptrace", args, 0, 60);
    cr_assert(strstr(r.run.out, "blockers: ok"), "the workload failed:\n" REC_FMT,
              REC_ARGS(&r.run));
    double stopped, reused;
    stops_per_sample(&r.run, &stopped, &reused);
    double rounds = (double)parse_after(strstr(r.run.err, "[debug] rounds:"), " of ");
    /* While the program starts and ends every round may stop all four;
     * in between, 4 threads x 2 stops over ~1500 samples is 0.005 per
     * sample. */
    size_t unsettled = samples_unsettled(&r.prof);
    double settled = rounds - (double)unsettled;
    double stops_settled = stopped * rounds - 4.0 * (double)unsettled;
    cr_log_info("%.3f threads stopped, %.3f reused per sample; %zu of %.0f rounds while the "
                "program started or ended",
                stopped, reused, unsettled, rounds);
    cr_assert_gt(settled, 500, "the threads sat in their calls only %.0f of %.0f rounds:\n" REC_FMT,
                 settled, rounds, REC_ARGS(&r.run));
    cr_assert_lt(stops_settled / settled, 0.05,
                 "%.3f threads stopped per sample while they sat in their calls (%.3f in all, "
                 "%zu of %.0f rounds while the program started or ended):\n" REC_FMT,
                 stops_settled / settled, stopped, unsettled, rounds, REC_ARGS(&r.run));
    cr_assert_gt(reused, 3.5, "%.3f threads reused per sample:\n" REC_FMT, reused,
                 REC_ARGS(&r.run));
    check_call_names(r.path);
    recording_free(&r);
    free(wl);
}

/* --- a thread that ran is never taken for one that did not ----------------- */

#define MAX_GAPS_READ (1u << 20)

/* When one thread of phases did not run: its gaps, sorted by start. */
struct thread_gaps {
    int tid;
    uint64_t (*gap)[2];
    size_t n;
};

static size_t read_gaps(const char *path, struct thread_gaps *threads, size_t max)
{
    FILE *f = fopen(path, "r");
    cr_assert(f, "phases wrote no %s", path);
    size_t n = 0;
    char line[128];
    while (fgets(line, sizeof(line), f)) {
        int tid;
        unsigned long long a, b;
        if (sscanf(line, "thread %d", &tid) == 1) {
            cr_assert_lt(n, max, "too many threads in %s", path);
            threads[n].tid = tid;
            threads[n].gap = malloc(MAX_GAPS_READ * sizeof(*threads[n].gap));
            threads[n].n = 0;
            n++;
        } else if (sscanf(line, "%llu %llu", &a, &b) == 2 && n > 0 &&
                   threads[n - 1].n < MAX_GAPS_READ) {
            threads[n - 1].gap[threads[n - 1].n][0] = a;
            threads[n - 1].gap[threads[n - 1].n][1] = b;
            threads[n - 1].n++;
        }
    }
    fclose(f);
    return n;
}

/* Above 1 kHz the perf engine's loop looks at blocked threads every
 * millisecond, not at every period (docs/recording.md): an entry covers
 * the wall time since the thread's previous one, so the calls keep their
 * shares of the wall time. */
Test(record_idle, perf_engine_wall_shares_hold_above_1khz, .timeout = 90)
{
    record_blockers("perf", (const char *[]){"-f", "5000", NULL}, (const char *[]){"1.5", NULL});
}

/*
 * A program busy for 100 ms, then asleep for 20 ms, over and over: the
 * perf engine's ticks relax during every busy spell (100 Hz, no wait to
 * look at) and see each nap up to a relaxed period late, yet the nap
 * keeps its whole share of the wall time: a wait's entry covers the time
 * since the thread's last CPU sample, which is stamped with the end of
 * its own tick period, not with the late tick's time.  The ptrace engine
 * never relaxes; both must agree with what the program measured.
 */
ENGINE_TEST(record_idle, a_wait_after_a_busy_spell_keeps_its_wall_share, .timeout = 90)
{
    char *wl = build_workload("naps");
    const char *args[] = {"-d", "-f", "1000", "--", wl, "1.5", "100", "20", NULL};
    struct recording r;
    double before = cpu_pressure(0.3);
    struct machine_mark mark;
    machine_mark(&mark);
    record_native_engine(&r, engine_p->name, args, 0, 60);
    double others = others_busy_since(&mark);
    double after = cpu_pressure(0.3), busy = before > after ? before : after;
    const char *said = strstr(r.run.out, "naps: napped ");
    double napped, whole;
    cr_assert(said && sscanf(said, "naps: napped %lf of %lf ms", &napped, &whole) == 2,
              "the workload failed:\n" REC_FMT, REC_ARGS(&r.run));
    if (engine_is_perf(engine_p->name)) {
        long relaxed;
        perf_ticks_line(r.run.err, &relaxed);
        cr_expect_gt(relaxed, 20, "%ld ticks relaxed in the busy spells:\n" REC_FMT, relaxed,
                     REC_ARGS(&r.run));
    }
    const char *report_args[] = {r.path, "--wall", "-k", "procedure", NULL};
    char *csv = report_csv(report_args);
    double want = 100.0 * napped / whole, got = report_csv_value(csv, "nap", "total_pct");
    cr_log_info("%s: nap() holds %.1f%% of the wall time, measured %.1f%%", engine_p->name, got,
                want);
    /* The ptrace engine's waits on a machine whose CPUs other work keeps
     * busy come out wide (docs/recording.md, "How finely the ptrace engine
     * measures a wait"): shown, not judged, as in test_record_waits.c. */
    bool judged = engine_is_perf(engine_p->name) || (busy <= 0.15 && others <= 0.25);
    if (!judged)
        cr_log_warn("ptrace engine, CPU pressure %.0f%% around the run, other work %.0f%% of the "
                    "CPUs during it: not judged",
                    busy * 100, others * 100);
    cr_expect(!judged || fabs(got - want) <= 2.0,
              "%s: nap() holds %.1f%% of the wall time, the program measured %.1f%%:\n%.2000s",
              engine_p->name, got, want, csv);
    free(csv);
    recording_free(&r);
    free(wl);
}

/* How long the thread ran in [FROM, TO]: the span minus its gaps. */
static uint64_t ran_between(const struct thread_gaps *t, uint64_t from, uint64_t to)
{
    if (to <= from)
        return 0;
    uint64_t idle = 0;
    for (size_t g = 0; g < t->n; g++) {
        uint64_t a = t->gap[g][0] > from ? t->gap[g][0] : from;
        uint64_t b = t->gap[g][1] < to ? t->gap[g][1] : to;
        if (b > a)
            idle += b - a;
    }
    return to - from - (idle < to - from ? idle : to - from);
}

/* The end of the first gap that ends after T: the thread's copy of the
 * sample taken at T was made during that gap (it ran no instruction
 * between the interrupt and its stop). */
static uint64_t resumed_after(const struct thread_gaps *t, uint64_t time)
{
    for (size_t g = 0; g < t->n; g++)
        if (t->gap[g][1] > time)
            return t->gap[g][1];
    return UINT64_MAX;
}

/*
 * Three threads spinning on two CPUs (one often waits for a CPU: reusing
 * its copy is right then), each changing its PC and stack every 20 us of
 * running.  For every two consecutive samples of a thread that show the
 * same PC and stack, the thread's own log says whether it ran between its
 * copy for the first and the second sample: more than 200 us of running
 * means the recorder reused the copy of a thread that ran.  A recorder
 * that judged idleness by CPU time alone (which the kernel updates only at
 * a running thread's ticks) fails this at once.
 */
Test(record_idle, a_thread_that_ran_is_never_reused, .timeout = 90)
{
    char *wl = build_workload("phases");
    struct recording r;
    char *log = NULL;
    char *dir = test_mkdtemp();
    cr_assert(asprintf(&log, "%s/gaps", dir) > 0);
    const char *args[] = {"-d", "-f", "1000", "--", wl, "3", "3", log, NULL};
    record_native_engine(&r, "ptrace", args, 0, 60);
    cr_assert(strstr(r.run.out, "phases: ok"), REC_FMT, REC_ARGS(&r.run));
    struct thread_gaps threads[8];
    size_t nthreads = read_gaps(log, threads, 8);
    cr_assert_eq(nthreads, 3, "%zu threads in the log", nthreads);

    size_t pairs = 0, same = 0, wrong = 0;
    char example[256] = "";
    for (size_t t = 0; t < nthreads; t++) {
        const struct prof_thread_sample *prev = NULL;
        uint64_t prev_time = 0;
        for (size_t i = 0; i < r.prof.nsamples; i++) {
            const struct prof_sample *s = &r.prof.samples[i];
            for (uint32_t k = 0; k < s->nthreads; k++) {
                const struct prof_thread_sample *ts = &s->threads[k];
                /* A part of an interval (cut where the thread moved on)
                 * is the earlier place's by design, not a reused copy. */
                if (ts->tid != (uint32_t)threads[t].tid || (ts->flags & PROF_THREAD_PART))
                    continue;
                if (prev) {
                    pairs++;
                    if (ts->pc == prev->pc && ts->stack == prev->stack) {
                        same++;
                        uint64_t from = resumed_after(&threads[t], prev_time);
                        uint64_t ran = ran_between(&threads[t], from, s->time_ns);
                        if (ran > 200000) {
                            wrong++;
                            snprintf(example, sizeof(example),
                                     "thread %d at %#llx in samples %.6f s apart ran %.0f us",
                                     threads[t].tid, (unsigned long long)ts->pc,
                                     (double)(s->time_ns - prev_time) / 1e9, (double)ran / 1e3);
                        }
                    }
                }
                prev = ts;
                prev_time = s->time_ns;
            }
        }
    }
    double stopped, reused;
    stops_per_sample(&r.run, &stopped, &reused);
    cr_log_info("%zu consecutive pairs, %zu the same, %zu of them after the thread ran; "
                "%.2f threads stopped, %.2f reused per sample",
                pairs, same, wrong, stopped, reused);
    cr_assert_gt(pairs, 1000, "%zu pairs of samples\n" REC_FMT, pairs, REC_ARGS(&r.run));
    /* Coming back to the same phase at the same PC: rare, never a habit. */
    cr_assert_leq(wrong * 100, pairs, "%zu of %zu pairs show a thread that ran as not run, e.g. %s",
                  wrong, pairs, example);
    for (size_t t = 0; t < nthreads; t++)
        free(threads[t].gap);
    recording_free(&r);
    test_rmtree(dir);
    free(dir);
    free(log);
    free(wl);
}
