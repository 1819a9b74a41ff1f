/*
 * test_attach.c - end-to-end tests of "ptprof record --pid": attach to a
 * running program (tests/workloads/timeloop.c, which checks its own
 * timing and the integrity of its blocked calls), sample it, detach at the
 * end of --duration or on Ctrl-C to the profiler, and leave it running as
 * if nothing had happened.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profile_query.h"
#include "engines.h"
#include "record_native.h"

/* Long enough to outlive any attach; the test ends it with SIGTERM. */
#define TIMELOOP_SECONDS "30"

static pid_t start_timeloop(struct spawn_proc *tp)
{
    char *timeloop = build_workload("timeloop");
    const char *argv[] = {timeloop, TIMELOOP_SECONDS, NULL};
    struct spawn_opts opts = {.argv = argv, .timeout_s = 60};
    spawn_start(&opts, tp);
    free(timeloop);
    /* Two ticks: both threads exist and the loop runs. */
    spawn_pump_until(tp, "tick 2\n", 10);
    return (pid_t)parse_after(tp->out, "timeloop: pid ");
}

/* The last "tick N" the program printed so far. */
static long last_tick(const struct spawn_proc *tp)
{
    long last = 0;
    for (const char *at = tp->out; at && (at = strstr(at, "tick ")); at += 5)
        last = strtol(at + 5, NULL, 10);
    return last;
}

/* After the profiler has gone: the program runs, untraced and not stopped,
 * keeps ticking, and on SIGTERM ends with its own verdict: nothing broke. */
static void check_left_running(struct spawn_proc *tp, pid_t pid)
{
    char state = '?';
    long tracer = -1;
    cr_assert(proc_state(pid, &state, &tracer), "timeloop %d is gone after the detach", (int)pid);
    cr_assert(state != 'T' && state != 't' && state != 'Z',
              "timeloop %d is in state %c after the detach", (int)pid, state);
    cr_assert_eq(tracer, 0, "timeloop %d is still traced by %ld after the detach", (int)pid,
                 tracer);

    char next[32];
    snprintf(next, sizeof(next), "tick %ld\n", last_tick(tp) + 3);
    spawn_pump_until(tp, next, 5);
    cr_assert(proc_state(pid, &state, &tracer) && tracer == 0 && state != 'T' && state != 't',
              "timeloop %d: state %c, tracer %ld while running on", (int)pid, state, tracer);

    cr_assert_eq(kill(pid, SIGTERM), 0, "kill timeloop");
    struct spawn_result res;
    spawn_finish(tp, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "timeloop after the attach:\n" REC_FMT,
                 REC_ARGS(&res));
    cr_assert(strstr(res.out, "timeloop: ok ") && strstr(res.out, " terminated"),
              "timeloop's verdict:\n" REC_FMT, REC_ARGS(&res));
    spawn_result_free(&res);
}

/* The profile of an attach: only PID's threads, both of them, and no exit. */
static void check_attach_profile(const struct profile *p, pid_t pid, double max_wall_s)
{
    cr_assert_str_eq(profile_meta(p, "attached"), "1", "META attached");
    cr_assert_eq(pq_first_pid(p), (uint32_t)pid, "META pid");
    cr_assert(p->has_totals && !p->truncated, "the profile is not complete");
    cr_assert_gt(p->nsamples, 20, "%zu samples", p->nsamples);
    double wall = (double)p->totals.wall_ns / 1e9;
    cr_assert(wall > 0.3 && wall < max_wall_s, "recorded wall time %.3f s", wall);
    const struct prof_process *pr = pq_process(p, (uint32_t)pid);
    cr_assert(pr, "process %d is not in the profile", (int)pid);
    cr_assert(!pr->exited, "the profile says %d exited", (int)pid);
    cr_assert_eq(p->nprocesses, 1, "%zu processes", p->nprocesses);

    size_t leader = 0, other = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        for (uint32_t t = 0; t < p->samples[i].nthreads; t++) {
            const struct prof_thread_sample *ts = &p->samples[i].threads[t];
            cr_assert_eq(ts->pid, (uint32_t)pid, "a sample of pid %u", ts->pid);
            if (ts->tid == (uint32_t)pid)
                leader++;
            else
                other++;
        }
    }
    cr_assert(leader > 20 && other > 20, "samples: %zu of the main thread, %zu of the waiter",
              leader, other);
}

ENGINE_TEST(attach, duration_detaches_and_leaves_the_program_running, .timeout = 90)
{
    const char *engine = engine_p->name;
    struct spawn_proc tp;
    pid_t pid = start_timeloop(&tp);
    char pid_text[32];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);

    const char *args[] = {"-f", "500", "--pid", pid_text, "--duration", "1", NULL};
    struct recording r;
    record_native_engine(&r, engine, args, 0, 30);
    check_left_running(&tp, pid);
    check_attach_profile(&r.prof, pid, 3.0);
    recording_free(&r);
}

/* Ctrl-C meant for the profiler only (SIGINT to its pid, not the group):
 * it ends the attach the same way and is not passed to the program, which
 * would die of it. */
ENGINE_TEST(attach, sigint_to_the_profiler_ends_the_attach_early, .timeout = 90)
{
    const char *engine = engine_p->name;
    struct spawn_proc tp;
    pid_t pid = start_timeloop(&tp);
    char pid_text[32];
    snprintf(pid_text, sizeof(pid_text), "%d", (int)pid);

    struct recording r;
    memset(&r, 0, sizeof(r));
    r.dir = test_mkdtemp();
    cr_assert_geq(asprintf(&r.path, "%s/profile.data", r.dir), 0);
    char *ptprof = build_ptprof();
    const char *argv[] = {ptprof, "record", "--engine", engine,   "-o", r.path,
                          "-f",   "500",    "--pid",    pid_text, NULL};
    struct spawn_opts opts = {.argv = argv, .timeout_s = 30};
    struct spawn_proc pp;
    spawn_start(&opts, &pp);

    /* Attached once the profile appears: either engine publishes it when
     * it starts sampling. */
    for (int i = 0; i < 500 && !test_file_exists(r.path); i++)
        spawn_pump(&pp, 0.02);
    cr_assert(test_file_exists(r.path), "%s engine: the profiler never attached to %d\n%s", engine,
              (int)pid, pp.err ? pp.err : "");
    spawn_pump(&pp, 1.0);
    cr_assert_eq(kill(pp.pid, SIGINT), 0, "kill -INT the profiler");
    spawn_finish(&pp, &r.run);
    cr_assert_eq(spawn_exit_code(r.run.status), 0, "profiler after SIGINT:\n" REC_FMT,
                 REC_ARGS(&r.run));
    cr_assert_lt(r.run.wall_s, 20, "the profiler took %.1f s", r.run.wall_s);
    check_left_running(&tp, pid);

    recording_load(&r, r.path);
    check_attach_profile(&r.prof, pid, 10.0);
    free(ptprof);
    recording_free(&r);
}
