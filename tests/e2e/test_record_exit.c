/*
 * test_record_exit.c - the profiler ends as its target does: the target's
 * exit status (128+N for a signal), 127/126 when the command cannot run, and
 * Ctrl-C or kill reach the target exactly once, leave a complete profile
 * and no process behind, with either recording engine (engines.h).
 */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include "engines.h"
#include "test_record_common.h"

/* ptprof record --engine ENGINE -o DIR/profile -- ARGS..., in a fresh DIR. */
static void record_cmd(const char *engine, struct spawn_result *res, char **dir, char **profile,
                       const char *const *cmd)
{
    *dir = test_mkdtemp();
    cr_assert(asprintf(profile, "%s/profile", *dir) > 0);
    char *ptprof = build_ptprof();
    const char *argv[32] = {ptprof, RECORD_WITH(engine), "-o", *profile, "--"};
    size_t n = 9;
    for (size_t i = 0; cmd[i] && n < 31; i++)
        argv[n++] = cmd[i];
    argv[n] = NULL;
    run_argv(res, argv, NULL, NULL, 60);
    free(ptprof);
}

static void check_exit_code(const char *engine, const char *const *cmd, int want,
                            bool profile_expected)
{
    struct spawn_result res;
    char *dir, *profile;
    record_cmd(engine, &res, &dir, &profile, cmd);
    cr_assert_eq(spawn_exit_code(res.status), want, "%s engine: want %d; " RUN_FMT, engine, want,
                 RUN_ARGS(&res));
    if (profile_expected) {
        struct profile prof;
        load_engine_profile(engine, profile, &prof);
        profile_free(&prof);
    }
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(profile);
}

ENGINE_TEST(record_exit, target_exit_status_is_passed_through)
{
    char *wl = build_workload("exitcode");
    const char *cmd[] = {wl, "3", NULL};
    check_exit_code(engine_p->name, cmd, 3, true);
    free(wl);
}

ENGINE_TEST(record_exit, zero_exit_status_is_passed_through)
{
    char *wl = build_workload("exitcode");
    const char *cmd[] = {wl, "0", NULL};
    check_exit_code(engine_p->name, cmd, 0, true);
    free(wl);
}

ENGINE_TEST(record_exit, target_killed_by_sigsegv_gives_139_and_a_profile)
{
    char *wl = build_workload("segv");
    const char *cmd[] = {wl, NULL};
    check_exit_code(engine_p->name, cmd, 128 + SIGSEGV, true);
    free(wl);
}

static void check_cannot_run(const char *engine, const char *command, int want)
{
    struct spawn_result res;
    char *dir, *profile;
    const char *cmd[] = {command, NULL};
    record_cmd(engine, &res, &dir, &profile, cmd);
    cr_assert_eq(spawn_exit_code(res.status), want, "%s engine: want %d; " RUN_FMT, engine, want,
                 RUN_ARGS(&res));
    cr_assert(!test_file_exists(profile), "%s engine: a profile of a command that never ran",
              engine);
    cr_assert(strstr(res.err, command), "the message does not name '%s'; " RUN_FMT, command,
              RUN_ARGS(&res));
    spawn_result_free(&res);
    test_rmtree(dir);
    free(dir);
    free(profile);
}

ENGINE_TEST(record_exit, missing_command_gives_127_naming_it)
{
    check_cannot_run(engine_p->name, "ptprof-test-no-such-command", 127);
}

ENGINE_TEST(record_exit, missing_command_path_gives_127_naming_it)
{
    check_cannot_run(engine_p->name, "/nonexistent-dir/no-such-command", 127);
}

ENGINE_TEST(record_exit, non_executable_file_gives_126_naming_it)
{
    char *dir = test_mkdtemp(), *path = NULL;
    cr_assert(asprintf(&path, "%s/not-executable", dir) > 0);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    cr_assert_geq(fd, 0);
    cr_assert_eq(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
    close(fd);
    check_cannot_run(engine_p->name, path, 126);
    test_rmtree(dir);
    free(dir);
    free(path);
}

/* --- interruption ------------------------------------------------------- */

enum deliver { TO_GROUP, TO_PROFILER, TO_TARGET };

struct interrupted {
    struct spawn_result res;
    char *dir, *profile;
};

/* Run "ptprof record -o F -- spin [--handler]" as a foreground job in its own
 * process group, wait until the target is ready and has been sampled for a
 * second, then deliver SIG the way a terminal (the whole group) or kill(1)
 * (the profiler alone, or the target alone) would.  The profile is written
 * in FORMAT (NULL: the engine's usual one, record_format_for()). */
static void interrupt_spin_as(const char *engine, struct interrupted *r, bool handler, int sig,
                              enum deliver how, const char *format)
{
    memset(r, 0, sizeof(*r));
    r->dir = test_mkdtemp();
    cr_assert(asprintf(&r->profile, "%s/profile", r->dir) > 0);
    char *ptprof = build_ptprof(), *spin = build_workload("spin");
    const char *argv[] = {ptprof,
                          "record",
                          "--engine",
                          engine,
                          "--format",
                          format ? format : record_format_for(engine),
                          "-o",
                          r->profile,
                          "--",
                          spin,
                          handler ? "--handler" : "20",
                          NULL};
    struct spawn_opts opts = {.argv = argv, .timeout_s = 60};
    struct spawn_proc p;
    spawn_start(&opts, &p);
    spawn_pump_until(&p, "spin: ready", 20);
    cr_assert_not(spawn_pump(&p, 1.0), "spin ended by itself: %s", p.err ? p.err : "");
    pid_t pgid = p.pid;
    int target = 0;
    cr_assert(sscanf(strstr(p.out, "spin: ready"), "spin: ready, pid %d", &target) == 1);
    if (how == TO_GROUP)
        cr_assert_eq(killpg(pgid, sig), 0);
    else
        cr_assert_eq(kill(how == TO_TARGET ? target : p.pid, sig), 0);
    spawn_finish(&p, &r->res);

    char survivors[1024];
    int left = spawn_group_survivors(pgid, 3.0, survivors, sizeof(survivors));
    if (left)
        killpg(pgid, SIGKILL); /* do not leave them to the next test */
    cr_assert_eq(left, 0, "processes left behind: %s", survivors);
    free(ptprof);
    free(spin);
}

static void interrupt_spin(const char *engine, struct interrupted *r, bool handler, int sig,
                           enum deliver how)
{
    interrupt_spin_as(engine, r, handler, sig, how, NULL);
}

static void interrupted_free(struct interrupted *r)
{
    spawn_result_free(&r->res);
    test_rmtree(r->dir);
    free(r->dir);
    free(r->profile);
}

static void check_profile_has_samples(const char *engine, const char *path)
{
    struct profile prof;
    load_engine_profile(engine, path, &prof);
    size_t running = 0;
    for (size_t i = 0; i < prof.nsamples; i++)
        for (uint32_t t = 0; t < prof.samples[i].nthreads; t++)
            running += !(prof.samples[i].threads[t].flags & PROF_THREAD_IN_SYSCALL);
    cr_assert_gt(running, 10, "%s engine: only %zu samples in a second of spinning", engine,
                 running);
    profile_free(&prof);
}

ENGINE_TEST(record_exit, ctrl_c_reaches_the_target_handler_once)
{
    struct interrupted r;
    interrupt_spin(engine_p->name, &r, true, SIGINT, TO_GROUP);
    cr_assert_eq(count_occurrences(r.res.out, "got SIGINT"), 1, RUN_CONTEXT(&r.res));
    cr_assert_eq(spawn_exit_code(r.res.status), 7, "want the target's 7; " RUN_CONTEXT(&r.res));
    check_profile_has_samples(engine_p->name, r.profile);
    interrupted_free(&r);
}

ENGINE_TEST(record_exit, sigterm_to_the_profiler_reaches_the_target_once)
{
    struct interrupted r;
    interrupt_spin(engine_p->name, &r, true, SIGTERM, TO_PROFILER);
    cr_assert_eq(count_occurrences(r.res.out, "got SIGTERM"), 1, RUN_CONTEXT(&r.res));
    cr_assert_eq(count_occurrences(r.res.out, "got SIGINT"), 0, RUN_CONTEXT(&r.res));
    cr_assert_eq(spawn_exit_code(r.res.status), 7, "want the target's 7; " RUN_CONTEXT(&r.res));
    check_profile_has_samples(engine_p->name, r.profile);
    interrupted_free(&r);
}

ENGINE_TEST(record_exit, ctrl_c_kills_a_target_without_handler_with_130)
{
    struct interrupted r;
    interrupt_spin(engine_p->name, &r, false, SIGINT, TO_GROUP);
    cr_assert_eq(spawn_exit_code(r.res.status), 128 + SIGINT, RUN_CONTEXT(&r.res));
    check_profile_has_samples(engine_p->name, r.profile);
    interrupted_free(&r);
}

ENGINE_TEST(record_exit, sigterm_to_the_profiler_kills_a_target_without_handler_with_143)
{
    struct interrupted r;
    interrupt_spin(engine_p->name, &r, false, SIGTERM, TO_PROFILER);
    cr_assert_eq(spawn_exit_code(r.res.status), 128 + SIGTERM, RUN_CONTEXT(&r.res));
    check_profile_has_samples(engine_p->name, r.profile);
    interrupted_free(&r);
}

ENGINE_TEST(record_exit, target_killed_from_outside_gives_137_and_a_profile)
{
    struct interrupted r;
    interrupt_spin(engine_p->name, &r, false, SIGKILL, TO_TARGET);
    cr_assert_eq(spawn_exit_code(r.res.status), 128 + SIGKILL, RUN_CONTEXT(&r.res));
    check_profile_has_samples(engine_p->name, r.profile);
    interrupted_free(&r);
}

/* What "ptprof info" says of the first process of PROFILE. */
static void check_info_says(const char *profile, const char *want)
{
    char *ptprof = build_ptprof();
    const char *argv[] = {ptprof, "info", profile, NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 30);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    cr_assert(strstr(res.out, want), "info does not say '%s':\n" RUN_FMT, want, RUN_ARGS(&res));
    spawn_result_free(&res);
    free(ptprof);
}

/* The target dies of the signal the profiler forwarded: the profile says
 * so (the ptrace engine waits for that death before writing it). */
Test(record_exit, a_target_killed_by_a_forwarded_sigterm_is_recorded_as_such)
{
    struct interrupted r;
    interrupt_spin_as("ptrace", &r, false, SIGTERM, TO_PROFILER, "native");
    cr_assert_eq(spawn_exit_code(r.res.status), 128 + SIGTERM, RUN_CONTEXT(&r.res));
    check_info_says(r.profile, "killed by SIGTERM");
    interrupted_free(&r);
}

Test(record_exit, a_target_killed_by_ctrl_c_is_recorded_as_such)
{
    struct interrupted r;
    interrupt_spin_as("ptrace", &r, false, SIGINT, TO_GROUP, "native");
    cr_assert_eq(spawn_exit_code(r.res.status), 128 + SIGINT, RUN_CONTEXT(&r.res));
    check_info_says(r.profile, "killed by SIGINT");
    interrupted_free(&r);
}

/* A handler that exits: its exit status is recorded too. */
Test(record_exit, a_target_exiting_from_its_sigterm_handler_is_recorded_as_such)
{
    struct interrupted r;
    interrupt_spin_as("ptrace", &r, true, SIGTERM, TO_PROFILER, "native");
    cr_assert_eq(spawn_exit_code(r.res.status), 7, RUN_CONTEXT(&r.res));
    check_info_says(r.profile, "exit 7");
    interrupted_free(&r);
}
