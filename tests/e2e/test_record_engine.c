/*
 * test_record_engine.c - which engine records, and why (src/record/
 * engine.h): auto takes perf where perf_event_open is permitted and falls
 * back to ptrace where it fails for real (a seccomp filter, the
 * tests/workloads/noperf.c helper), --engine perf refuses to run there,
 * the choice shows in -d, `ptprof info` and the profile's META; the
 * promise of no privileges holds for both engines as an unprivileged user;
 * -e counters are checked before the program runs.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "engines.h"
#include "format/load.h"
#include "test_record_common.h"

struct run {
    char *dir, *profile;
    struct spawn_result res;
};

/* [PREFIX...] ptprof record -o DIR/profile OPTIONS... -- spin SECONDS */
static void run_record(struct run *r, const char *const *prefix, const char *const *options,
                       const char *const *env, const char *seconds)
{
    memset(r, 0, sizeof(*r));
    r->dir = test_mkdtemp();
    cr_assert(asprintf(&r->profile, "%s/profile", r->dir) > 0);
    char *ptprof = build_ptprof(), *spin = build_workload("spin");
    const char *argv[40];
    size_t n = 0;
    for (size_t i = 0; prefix && prefix[i]; i++)
        argv[n++] = prefix[i];
    argv[n++] = ptprof;
    argv[n++] = "record";
    argv[n++] = "-o";
    argv[n++] = r->profile;
    for (size_t i = 0; options && options[i] && n < 34; i++)
        argv[n++] = options[i];
    argv[n++] = "--";
    argv[n++] = spin;
    argv[n++] = seconds;
    argv[n] = NULL;
    run_argv(&r->res, argv, env, NULL, 60);
    free(ptprof);
    free(spin);
}

static void run_free(struct run *r)
{
    spawn_result_free(&r->res);
    test_rmtree(r->dir);
    free(r->dir);
    free(r->profile);
}

/* The profile's META engine, and that info and -d say the same. */
static void check_engine(struct run *r, const char *want, const char *reason_part)
{
    struct profile p;
    cr_assert_eq(profile_load(r->profile, &p), 0, "no profile: " RUN_FMT, RUN_ARGS(&r->res));
    const char *engine = profile_meta(&p, "engine"), *why = profile_meta(&p, "engine_reason");
    cr_assert(engine && strcmp(engine, want) == 0, "META engine %s, want %s",
              engine ? engine : "(none)", want);
    cr_assert(why && strstr(why, reason_part), "META engine_reason '%s' lacks '%s'",
              why ? why : "(none)", reason_part);
    profile_free(&p);

    char line[128];
    snprintf(line, sizeof(line), "[debug] engine:      %s (", want);
    cr_assert(strstr(r->res.err, line), "-d does not say '%s':\n%s", line, r->res.err);

    char *ptprof = build_ptprof();
    const char *argv[] = {ptprof, "info", r->profile, NULL};
    struct spawn_result info;
    run_argv(&info, argv, NULL, NULL, 30);
    snprintf(line, sizeof(line), "  engine:     %s (", want);
    cr_assert(strstr(info.out, line), "info does not say '%s':\n%s", line, info.out);
    cr_assert(strstr(info.out, reason_part), "info does not say why ('%s'):\n%s", reason_part,
              info.out);
    spawn_result_free(&info);
    free(ptprof);
}

Test(record_engine, auto_records_with_perf_where_perf_event_open_is_permitted)
{
    struct run r;
    const char *options[] = {"-d", NULL};
    run_record(&r, NULL, options, NULL, "0.3");
    cr_assert_eq(spawn_exit_code(r.res.status), 0, RUN_CONTEXT(&r.res));
    check_engine(&r, "perf", "perf_event_paranoid");
    run_free(&r);
}

/* A seccomp filter makes perf_event_open fail in the profiler: auto falls
 * back to ptrace, says why, and the program runs as usual. */
Test(record_engine, auto_falls_back_to_ptrace_where_perf_event_open_fails)
{
    char *noperf = build_workload("noperf");
    const char *errors[] = {"EACCES", "ENOSYS"};
    for (int i = 0; i < 2; i++) {
        struct run r;
        const char *prefix[] = {noperf, errors[i], NULL};
        const char *options[] = {"-d", NULL};
        run_record(&r, prefix, options, NULL, "0.3");
        cr_assert_eq(spawn_exit_code(r.res.status), 0, "%s: " RUN_FMT, errors[i], RUN_ARGS(&r.res));
        cr_assert(strstr(r.res.out, "spin: ready"), "%s: the program did not run", errors[i]);
        check_engine(&r, "ptrace", "perf_event_paranoid");
        run_free(&r);
    }
    free(noperf);
}

/* --engine perf where it is refused: one line naming the setting and the
 * fallback, exit 1, the program never started, an existing file kept. */
Test(record_engine, engine_perf_where_not_permitted_is_refused_before_anything_starts)
{
    char *noperf = build_workload("noperf");
    struct run r;
    memset(&r, 0, sizeof(r));
    const char *prefix[] = {noperf, "EACCES", NULL};
    const char *options[] = {"--engine", "perf", NULL};
    run_record(&r, prefix, options, NULL, "0.3");
    cr_assert_eq(spawn_exit_code(r.res.status), 1, RUN_CONTEXT(&r.res));
    cr_assert_eq(count_lines(r.res.err), 1, "not one line: " RUN_FMT, RUN_ARGS(&r.res));
    cr_assert(strstr(r.res.err, "perf_event_paranoid"), RUN_CONTEXT(&r.res));
    cr_assert(strstr(r.res.err, "--engine auto"), RUN_CONTEXT(&r.res));
    cr_assert(!strstr(r.res.out, "spin: ready"), "the program ran: " RUN_FMT, RUN_ARGS(&r.res));
    cr_assert(!test_file_exists(r.profile), "a profile was written");
    run_free(&r);
    free(noperf);
}

Test(record_engine, ptprof_engine_variable_chooses_and_the_option_wins)
{
    struct run r;
    const char *env[] = {"PTPROF_ENGINE=ptrace", NULL};
    const char *debug[] = {"-d", NULL};
    run_record(&r, NULL, debug, env, "0.2");
    cr_assert_eq(spawn_exit_code(r.res.status), 0, RUN_CONTEXT(&r.res));
    check_engine(&r, "ptrace", "PTPROF_ENGINE=ptrace");
    run_free(&r);

    const char *perf[] = {"-d", "--engine", "perf", NULL};
    run_record(&r, NULL, perf, env, "0.2");
    cr_assert_eq(spawn_exit_code(r.res.status), 0, RUN_CONTEXT(&r.res));
    check_engine(&r, "perf", "perf_event_paranoid");
    run_free(&r);

    const char *bad_env[] = {"PTPROF_ENGINE=kernel", NULL};
    run_record(&r, NULL, NULL, bad_env, "0.2");
    cr_assert_eq(spawn_exit_code(r.res.status), 1, RUN_CONTEXT(&r.res));
    cr_assert(strstr(r.res.err, "PTPROF_ENGINE") && strstr(r.res.err, "kernel"),
              RUN_CONTEXT(&r.res));
    cr_assert(!strstr(r.res.out, "spin: ready"), "the program ran: " RUN_FMT, RUN_ARGS(&r.res));
    run_free(&r);
}

/* The original format is the original sampler's, which stopped every
 * thread at each tick: --format pperf keeps ptrace under auto. */
Test(record_engine, format_pperf_keeps_the_ptrace_engine)
{
    struct run r;
    const char *options[] = {"-d", "--format", "pperf", NULL};
    run_record(&r, NULL, options, NULL, "0.2");
    cr_assert_eq(spawn_exit_code(r.res.status), 0, RUN_CONTEXT(&r.res));
    cr_assert(strstr(r.res.err, "[debug] engine:      ptrace (--format pperf"),
              RUN_CONTEXT(&r.res));
    run_free(&r);
}

/* No root: as a throwaway user (the tests run as root in CI), each engine
 * records a program and writes its profile. */
ENGINE_TEST(record_engine, records_as_an_unprivileged_user, .timeout = 60)
{
    const char *engine = engine_p->name;
    if (geteuid() != 0)
        cr_skip_test("not root: cannot switch to uid 65534 (the test needs CI's root)");
    /* The output directory must be the throwaway user's to write. */
    char *dir = test_mkdtemp();
    cr_assert_eq(chmod(dir, 0777), 0);
    char *setpriv = test_need_tool("setpriv");
    /* Copies the throwaway user can run wherever the build tree is. */
    char *built_ptprof = build_ptprof(), *built_spin = build_workload("spin");
    char *ptprof = test_path(dir, "ptprof"), *spin = test_path(dir, "spin");
    test_copy_executable(built_ptprof, ptprof);
    test_copy_executable(built_spin, spin);
    free(built_ptprof);
    free(built_spin);
    char *profile = test_path(dir, "profile");
    const char *argv[] = {AS_NOBODY(setpriv),
                          ptprof,
                          "record",
                          "-d",
                          "--engine",
                          engine,
                          "-o",
                          profile,
                          "--",
                          spin,
                          "0.5",
                          NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, "%s engine as uid 65534: " RUN_FMT, engine,
                 RUN_ARGS(&res));
    char want[64];
    snprintf(want, sizeof(want), "[debug] engine:      %s (", engine);
    cr_assert(strstr(res.err, want), "%s engine as uid 65534: " RUN_FMT, engine, RUN_ARGS(&res));
    struct stat st;
    cr_assert_eq(stat(profile, &st), 0, "no profile");
    cr_assert_eq(st.st_uid, 65534, "the profile belongs to uid %u", (unsigned)st.st_uid);
    struct profile p;
    cr_assert_eq(profile_load(profile, &p), 0);
    size_t running = 0;
    for (size_t i = 0; i < p.nsamples; i++)
        for (uint32_t t = 0; t < p.samples[i].nthreads; t++)
            running += !(p.samples[i].threads[t].flags & PROF_THREAD_IN_SYSCALL);
    cr_assert_gt(running, 50, "%s engine as uid 65534: %zu samples in 0.5 s of spinning", engine,
                 running);
    profile_free(&p);
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(profile);
    free(ptprof);
    free(spin);
    free(setpriv);
}

/* Counters: a name perf does not know, too many, and counters asked of the
 * ptrace engine are refused before the program runs. */
Test(record_engine, bad_counters_are_refused_before_the_program_runs)
{
    struct {
        const char *events, *engine, *says;
    } cases[] = {
        {"page-faults,no-such-event", "auto", "no-such-event"},
        {"page-faults,page-faults", "auto", "twice"},
        {"page-faults,minor-faults,major-faults,context-switches,cpu-migrations,task-clock,"
         "cpu-clock,alignment-faults,emulation-faults",
         "auto", "at most"},
        {"page-faults", "ptrace", "perf engine"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct run r;
        const char *options[] = {"--engine", cases[i].engine, "-e", cases[i].events, NULL};
        run_record(&r, NULL, options, NULL, "0.2");
        cr_assert_eq(spawn_exit_code(r.res.status), 1, "-e %s: " RUN_FMT, cases[i].events,
                     RUN_ARGS(&r.res));
        cr_assert_eq(count_lines(r.res.err), 1, "-e %s: " RUN_FMT, cases[i].events,
                     RUN_ARGS(&r.res));
        cr_assert(strstr(r.res.err, cases[i].says), "-e %s: " RUN_FMT, cases[i].events,
                  RUN_ARGS(&r.res));
        cr_assert(!strstr(r.res.out, "spin: ready"), "-e %s: the program ran", cases[i].events);
        cr_assert(!test_file_exists(r.profile), "-e %s: a profile was written", cases[i].events);
        run_free(&r);
    }
}

/* A hardware counter on a CPU without one (this project's VMs have none):
 * a clear error before the program runs, not a column of zeros.  Where
 * the CPU has the counter, it is counted. */
Test(record_engine, hardware_counter_without_the_hardware_is_a_clear_error)
{
    struct run r;
    const char *options[] = {"-d", "-e", "cycles", NULL};
    run_record(&r, NULL, options, NULL, "0.2");
    int code = spawn_exit_code(r.res.status);
    if (code == 0) {
        cr_assert(strstr(r.res.err, "[debug] counter:     cycles "), RUN_CONTEXT(&r.res));
    } else {
        cr_assert_eq(code, 1, RUN_CONTEXT(&r.res));
        cr_assert_eq(count_lines(r.res.err), 1, RUN_CONTEXT(&r.res));
        cr_assert(strstr(r.res.err, "cycles") &&
                      (strstr(r.res.err, "hardware counter") || strstr(r.res.err, "Linux 6.12")),
                  RUN_CONTEXT(&r.res));
        cr_assert(!strstr(r.res.out, "spin: ready"), "the program ran: " RUN_FMT, RUN_ARGS(&r.res));
    }
    run_free(&r);
}

/* Software counters are read with each sample (-d shows their totals;
 * test_record_counters.c follows their values into the profile). */
Test(record_engine, software_counters_are_read_with_the_samples)
{
    struct run r;
    const char *options[] = {"-d", "-e", "page-faults,context-switches", NULL};
    run_record(&r, NULL, options, NULL, "0.5");
    if (spawn_exit_code(r.res.status) == 1 && strstr(r.res.err, "Linux 6.12"))
        cr_skip_test("this kernel cannot read inherited counters with each sample");
    cr_assert_eq(spawn_exit_code(r.res.status), 0, RUN_CONTEXT(&r.res));
    cr_assert(strstr(r.res.err, "[debug] counter:     page-faults "), RUN_CONTEXT(&r.res));
    cr_assert(strstr(r.res.err, "[debug] counter:     context-switches "), RUN_CONTEXT(&r.res));
    run_free(&r);
}

/* The kernel samples at the requested rate; the loop that looks at
 * blocked threads wakes at most 1000 times a second, and about 100 times
 * while no thread starts a wait (a busy program), unless a measurement
 * source must be read at the requested rate (docs/recording.md). */
Test(record_engine, perf_engine_ticks_at_most_1khz_unless_measuring, .timeout = 60)
{
    struct run r;
    const char *options[] = {"--engine", "perf", "-d", "-g", "none", "-f", "5000", NULL};
    run_record(&r, NULL, options, NULL, "1.0");
    cr_assert_eq(spawn_exit_code(r.res.status), 0, RUN_CONTEXT(&r.res));
    long relaxed;
    double ticks = perf_ticks_line(r.res.err, &relaxed);
    cr_expect_leq(ticks, 300.0, "busy, ticks at %.1f Hz: " RUN_FMT, ticks, RUN_ARGS(&r.res));
    cr_expect_geq(ticks, 80.0, "busy, ticks at %.1f Hz: " RUN_FMT, ticks, RUN_ARGS(&r.res));
    cr_expect_gt(relaxed, 50, "busy, %ld ticks relaxed: " RUN_FMT, relaxed, RUN_ARGS(&r.res));
    /* The CPU samples' own rate is the kernel's timer's, late by however
     * long a loaded host keeps it waiting: not judged here. */
    run_free(&r);

    /* A measurement is read at every tick: at the requested rate. */
    char *dir = test_mkdtemp(), *source = NULL, *spec = NULL;
    cr_assert(asprintf(&source, "%s/power", dir) > 0 && asprintf(&spec, "file:%s", source) > 0);
    FILE *f = fopen(source, "w");
    cr_assert(f);
    fputs("12\n", f);
    fclose(f);
    const char *measuring[] = {"--engine", "perf", "-d", "-g", "none",
                               "-f",       "5000", "-p", spec, NULL};
    run_record(&r, NULL, measuring, NULL, "1.0");
    cr_assert_eq(spawn_exit_code(r.res.status), 0, RUN_CONTEXT(&r.res));
    ticks = perf_ticks_line(r.res.err, &relaxed);
    cr_expect_geq(ticks, 3000.0, "measuring, ticks at %.1f Hz: " RUN_FMT, ticks, RUN_ARGS(&r.res));
    cr_expect_eq(relaxed, 0, "measuring, %ld ticks relaxed: " RUN_FMT, relaxed, RUN_ARGS(&r.res));
    cr_expect(strstr(r.res.err, "at the requested rate throughout: a source is measured"),
              "-d does not say why the ticks keep the rate: " RUN_FMT, RUN_ARGS(&r.res));
    run_free(&r);
    test_rmtree(dir);
    free(dir);
    free(source);
    free(spec);
}
