/*
 * test_robustness.c - what a hostile campaign found in the recorder's
 * dealings with the world (issue 19): every signal the profiler receives
 * reaches the program as often as it was sent.
 */
#include "../lib/spawn.h"
#include "engines.h"
#include "test_record_common.h"

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
