/*
 * test_crash.c - end-to-end test of a profiler killed with SIGKILL in the
 * middle of a recording: the profile written so far stays readable and
 * says it is incomplete, and the program it traced runs on to its normal
 * end (tests/workloads/timeloop.c checks itself).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "profile_query.h"
#include "engines.h"
#include "record_native.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wait for PID (our child, as the subreaper) with a hard deadline. */
static int wait_with_deadline(pid_t pid, double seconds)
{
    double until = now_s() + seconds;
    for (;;) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return status;
        cr_assert(r == 0 || errno == EINTR, "waitpid %d: %s", (int)pid, strerror(errno));
        if (now_s() > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            cr_assert_fail("timeloop %d did not finish within %.0f s", (int)pid, seconds);
        }
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

ENGINE_TEST(crash, sigkill_of_the_profiler_leaves_a_readable_profile_and_a_running_program,
            .timeout = 60)
{
    const char *engine = engine_p->name;
    /* The program outlives its parent, the profiler: as the subreaper this
     * test inherits it and sees its real exit status. */
    cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0, "PR_SET_CHILD_SUBREAPER");

    struct recording r;
    memset(&r, 0, sizeof(r));
    r.dir = test_mkdtemp();
    char *summary = NULL;
    cr_assert_geq(asprintf(&r.path, "%s/profile.data", r.dir), 0);
    cr_assert_geq(asprintf(&summary, "%s/summary", r.dir), 0);
    char *ptprof = build_ptprof(), *timeloop = build_workload("timeloop");
    const char *argv[] = {ptprof, "record", "--engine", engine, "-o",    r.path, "-f",
                          "500",  "--",     timeloop,   "4",    summary, NULL};
    struct spawn_opts opts = {.argv = argv, .timeout_s = 30};
    struct spawn_proc pp;
    spawn_start(&opts, &pp);

    /* About a second into the run. */
    spawn_pump_until(&pp, "tick 10\n", 10);
    pid_t target = (pid_t)parse_after(pp.out, "timeloop: pid ");
    cr_assert_eq(kill(pp.pid, SIGKILL), 0, "kill -KILL the profiler");

    /* The kernel detached the program: it runs on, untraced, not stopped. */
    char state = '?';
    long tracer = -1;
    for (int i = 0; i < 50; i++) {
        if (!proc_state(target, &state, &tracer) || (tracer == 0 && state != 't'))
            break;
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    cr_assert(proc_state(target, &state, &tracer),
              "timeloop %d is gone right after the profiler was killed", (int)target);
    cr_assert(state != 'T' && state != 't' && state != 'Z', "timeloop %d is in state %c",
              (int)target, state);
    cr_assert_eq(tracer, 0, "timeloop %d is still traced by %ld", (int)target, tracer);

    /* (This waits while the program, which shares the profiler's stdout,
     * keeps the pipes open.) */
    spawn_finish(&pp, &r.run);
    cr_assert(WIFSIGNALED(r.run.status) && WTERMSIG(r.run.status) == SIGKILL, "the profiler: %s",
              spawn_status_text(r.run.status));

    int status = wait_with_deadline(target, 15);
    char *verdict = test_read_file(summary, NULL);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "timeloop after its profiler died: %s, summary: %s", spawn_status_text(status),
              verdict ? verdict : "(none)");
    cr_assert(verdict && strncmp(verdict, "timeloop: ok ticks=40 ", 22) == 0,
              "timeloop's verdict: %s", verdict ? verdict : "(none)");
    cr_assert(!strstr(verdict, "terminated"), "timeloop was terminated: %s", verdict);

    /* What was written up to the kill reads back, marked incomplete. */
    recording_load(&r, r.path);
    cr_assert_gt(r.prof.nsamples, 0, "no samples in the profile of a killed profiler");
    cr_assert(!r.prof.has_totals, "a killed profiler's profile has an END record");
    cr_assert(pq_process(&r.prof, (uint32_t)target), "the program is not in the profile");
    for (size_t i = 0; i < r.prof.nsamples; i++)
        cr_assert(r.prof.samples[i].nthreads == 0 ||
                      r.prof.samples[i].threads[0].pid == (uint32_t)target,
                  "sample %zu of another process", i);

    const char *info_argv[] = {ptprof, "info", r.path, NULL};
    struct spawn_opts info_opts = {.argv = info_argv, .timeout_s = 20};
    struct spawn_result info;
    spawn_run(&info_opts, &info);
    cr_assert_eq(spawn_exit_code(info.status), 0, "ptprof info on the cut profile:\n" REC_FMT,
                 REC_ARGS(&info));
    cr_assert(strstr(info.out, "TRUNCATED") || strstr(info.out, "truncated"),
              "ptprof info does not say the profile is incomplete:\n%s", info.out);

    spawn_result_free(&info);
    free(verdict);
    free(summary);
    free(ptprof);
    free(timeloop);
    recording_free(&r);
}
