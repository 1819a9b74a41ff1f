/*
 * test_record_behaviour.c - a profiled program behaves as it does without
 * the profiler: thread churn, its own signal handling and blocked signals,
 * and job control (stopping itself) all work, and samples are still taken,
 * with either recording engine (engines.h).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engines.h"
#include "test_record_common.h"

struct recorded {
    const char *engine;
    char *dir, *profile;
    struct spawn_result res;
    struct profile prof;
    bool loaded;
};

/* ptprof record --engine ENGINE -o DIR/profile -f FREQ -- WORKLOAD ARGS... */
static void record_workload(struct recorded *r, const char *engine, const char *freq,
                            const char *workload, const char *const *args)
{
    memset(r, 0, sizeof(*r));
    r->engine = engine;
    r->dir = test_mkdtemp();
    cr_assert(asprintf(&r->profile, "%s/profile", r->dir) > 0);
    char *ptprof = build_ptprof(), *wl = build_workload(workload);
    const char *argv[32] = {ptprof, RECORD_WITH(engine), "-o", r->profile, "-f", freq, "--", wl};
    size_t n = 12;
    for (size_t i = 0; args && args[i] && n < 31; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    run_argv(&r->res, argv, NULL, NULL, 120);
    free(ptprof);
    free(wl);
}

static void recorded_free(struct recorded *r)
{
    if (r->loaded)
        profile_free(&r->prof);
    spawn_result_free(&r->res);
    test_rmtree(r->dir);
    free(r->dir);
    free(r->profile);
}

/* The same workload without the profiler, for its reference output. */
static char *run_native(const char *workload, const char *const *args)
{
    char *wl = build_workload(workload);
    const char *argv[16] = {wl};
    size_t n = 1;
    for (size_t i = 0; args && args[i] && n < 15; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, "%s alone: " RUN_FMT, workload, RUN_ARGS(&res));
    char *out = strdup(res.out);
    spawn_result_free(&res);
    free(wl);
    return out;
}

/* Thread samples in the profile, over every SAMPLE. */
static size_t thread_samples(const struct profile *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->nsamples; i++)
        n += p->samples[i].nthreads;
    return n;
}

ENGINE_TEST(record_behaviour, thousand_threads_run_correctly_and_are_sampled)
{
    const char *engine = engine_p->name;
    char *expected = run_native("threads1000", NULL);
    struct recorded r;
    /* The perf engine samples CPU time: a thread is seen once it has run a
     * whole period (1/f of CPU time), and the busy threads here run about
     * 0.1 ms each. */
    record_workload(&r, engine, engine_is_perf(engine) ? "20000" : "1000", "threads1000", NULL);
    cr_assert_eq(spawn_exit_code(r.res.status), 0, "%s engine: " RUN_FMT, engine, RUN_ARGS(&r.res));
    cr_assert_str_eq(r.res.out, expected, "output differs from a run without the profiler");

    load_engine_profile(engine, r.profile, &r.prof);
    r.loaded = true;
    cr_assert_gt(thread_samples(&r.prof), 0, "%s engine: no samples", engine);
    uint32_t first = 0;
    bool several = false;
    for (size_t i = 0; i < r.prof.nsamples && !several; i++) {
        const struct prof_sample *s = &r.prof.samples[i];
        for (uint32_t t = 0; t < s->nthreads; t++) {
            if (!first)
                first = s->threads[t].tid;
            else if (s->threads[t].tid != first)
                several = true;
        }
    }
    cr_assert(several, "%s engine: only one thread in %zu samples of a program with 1000 threads",
              engine, r.prof.nsamples);
    free(expected);
    recorded_free(&r);
}

ENGINE_TEST(record_behaviour, own_signal_handling_and_blocked_signals_survive)
{
    const char *engine = engine_p->name;
    struct recorded r;
    const char *args[] = {"200", NULL};
    record_workload(&r, engine, "1000", "signals", args);
    cr_assert_eq(spawn_exit_code(r.res.status), 0, "%s engine: " RUN_FMT, engine, RUN_ARGS(&r.res));
    cr_assert(strstr(r.res.out, "signals: ok"), "%s engine: " RUN_FMT, engine, RUN_ARGS(&r.res));

    load_engine_profile(engine, r.profile, &r.prof);
    r.loaded = true;
    cr_assert_geq(thread_samples(&r.prof), 20, "%s engine: only %zu thread samples", engine,
                  thread_samples(&r.prof));
    recorded_free(&r);
}

ENGINE_TEST(record_behaviour, program_stopping_itself_completes_and_is_sampled_around_the_stop)
{
    const char *engine = engine_p->name;
    struct recorded r;
    const char *args[] = {"300", NULL};
    record_workload(&r, engine, "1000", "selfstop", args);
    cr_assert_eq(spawn_exit_code(r.res.status), 0, "%s engine: " RUN_FMT, engine, RUN_ARGS(&r.res));
    unsigned long long stop_us = 0, cont_us = 0;
    const char *line = strstr(r.res.out, "stopped_us ");
    cr_assert(line && sscanf(line, "stopped_us %llu %llu", &stop_us, &cont_us) == 2,
              RUN_CONTEXT(&r.res));

    load_engine_profile(engine, r.profile, &r.prof);
    r.loaded = true;
    /* Thread samples taken while running (the stop itself is off CPU). */
    uint64_t before = 0, after = 0;
    for (size_t i = 0; i < r.prof.nsamples; i++) {
        const struct prof_sample *s = &r.prof.samples[i];
        uint64_t us = s->time_ns / 1000;
        for (uint32_t t = 0; t < s->nthreads; t++) {
            if (s->threads[t].flags & (PROF_THREAD_IN_SYSCALL | PROF_THREAD_STOPPED))
                continue;
            before += us < stop_us;
            after += us > cont_us;
        }
    }
    /* 300 ms of work on each side at 1000 Hz: a tenth of that is plenty. */
    cr_assert_geq(before, 30, "%s engine: %" PRIu64 " samples before the stop", engine, before);
    cr_assert_geq(after, 30, "%s engine: %" PRIu64 " samples after the stop", engine, after);
    recorded_free(&r);
}
