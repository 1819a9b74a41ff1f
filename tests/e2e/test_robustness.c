/*
 * test_robustness.c - what a hostile campaign found in the recorder's
 * dealings with the world (issue 19): every signal the profiler receives
 * reaches the program as often as it was sent.
 */
#include "../lib/spawn.h"
#include "engines.h"
#include "test_record_common.h"
#include "util/xalloc.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* kill(1) twice at the profiler: a program that handles SIGTERM sees two,
 * however soon the second follows the first's delivery. */
ENGINE_TEST(robustness, a_second_sigterm_to_the_profiler_reaches_the_target, .timeout = 90)
{
    char *dir = test_mkdtemp(), *profile = test_path(dir, "profile");
    char *ptprof = build_ptprof(), *spin = build_workload("spin");
    const char *argv[] = {ptprof,  "record", "--engine", engine_p->name, "-o",
                          profile, "--",     spin,       "--handler",    "--signals",
                          "2",     "20",     NULL};
    struct spawn_opts o = {.argv = argv, .timeout_s = 60};
    struct spawn_proc p;
    spawn_start(&o, &p);
    spawn_pump_until(&p, "spin: ready", 20);
    spawn_pump(&p, 0.5);
    cr_assert_eq(kill(p.pid, SIGTERM), 0);
    spawn_pump_until(&p, "got SIGTERM", 20);
    cr_assert_eq(kill(p.pid, SIGTERM), 0);
    struct spawn_result res;
    spawn_finish(&p, &res);
    cr_expect_eq(count_occurrences(res.out, "got SIGTERM"), 2, "%s engine: " RUN_FMT,
                 engine_p->name, RUN_ARGS(&res));
    cr_expect_eq(spawn_exit_code(res.status), 7, "%s engine: " RUN_FMT, engine_p->name,
                 RUN_ARGS(&res));
    spawn_result_free(&res);
    free(spin);
    free(ptprof);
    free(profile);
    test_rmtree(dir);
    free(dir);
}

/* --- pipes and FIFOs as inputs -------------------------------------------- */

/* bash -c SCRIPT with $P the ptprof binary and $F FILE; its stdout. */
static char *bash_out(const char *script, const char *file)
{
    char *bash = test_need_tool("bash"), *ptprof = build_ptprof();
    char *env_p = xasprintf("P=%s", ptprof), *env_f = xasprintf("F=%s", file);
    const char *argv[] = {bash, "-c", script, NULL};
    const char *env[] = {env_p, env_f, NULL};
    struct spawn_result res;
    run_argv(&res, argv, env, NULL, 30);
    cr_assert_eq(spawn_exit_code(res.status), 0, "%s (F=%s): " RUN_FMT, script, file,
                 RUN_ARGS(&res));
    char *out = xstrdup(res.out);
    spawn_result_free(&res);
    free(env_f);
    free(env_p);
    free(ptprof);
    free(bash);
    return out;
}

/* report and convert read a profile from <(...) and from a named FIFO as
 * they read the file itself: nothing of it is taken by a probe for an ELF
 * program first. */
static void check_piped(const char *file)
{
    char *want = bash_out("exec $P report -k procedure --format csv \"$F\"", file);
    char *piped = bash_out("exec $P report -k procedure --format csv <(cat \"$F\")", file);
    cr_expect_str_eq(piped, want, "%s through <(...)", file);
    char *fifo = bash_out("d=$(mktemp -d) && mkfifo $d/f && (cat \"$F\" >$d/f &) && "
                          "$P report -k procedure --format csv $d/f; rc=$?; rm -r $d; exit $rc",
                          file);
    cr_expect_str_eq(fifo, want, "%s through a FIFO", file);
    char *converted = bash_out("d=$(mktemp -d) && mkfifo $d/f && (cat \"$F\" >$d/f &) && "
                               "$P convert $d/f -o $d/x.folded && cat $d/x.folded; rc=$?; "
                               "rm -r $d; exit $rc",
                               file);
    char *direct = bash_out("d=$(mktemp -d) && $P convert \"$F\" -o $d/x.folded && cat "
                            "$d/x.folded; rc=$?; rm -r $d; exit $rc",
                            file);
    cr_expect_str_eq(converted, direct, "%s converted through a FIFO", file);
    free(direct);
    free(converted);
    free(fifo);
    free(piped);
    free(want);
}

Test(robustness, a_folded_profile_through_a_pipe_keeps_its_first_frame)
{
    char *dir = test_mkdtemp(), *path = test_path(dir, "x.folded");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("main;work;leaf 10\nmain;other 5\n", f);
    fclose(f);
    check_piped(path);
    free(path);
    test_rmtree(dir);
    free(dir);
}

Test(robustness, a_native_profile_through_a_pipe_is_a_profile)
{
    char *dir = test_mkdtemp(), *path = test_path(dir, "x.prof");
    char *ptprof = build_ptprof(), *spin = build_workload("spin");
    const char *argv[] = {ptprof, "record", "-o", path, "--", spin, "0.3", NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 30);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    spawn_result_free(&res);
    check_piped(path);
    free(spin);
    free(ptprof);
    free(path);
    test_rmtree(dir);
    free(dir);
}
