/* gprof_run.c - see gprof_run.h */
#include "gprof_run.h"

#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdlib.h>

#include "test_record_common.h"
#include "util/xalloc.h"

/* Run ARGV in DIR with ENV; the test fails unless it exits 0. */
static void run_ok(const char *const *argv, const char *const *env, const char *dir,
                   struct spawn_result *res)
{
    run_argv(res, argv, env, dir, 120);
    cr_assert_eq(spawn_exit_code(res->status), 0, RUN_CONTEXT(res));
}

void gprof_run_build(struct gprof_run *run, const char *dir, const char *source, const char *name,
                     const char *opt, const char *const *args)
{
    char *gcc = test_tool_path("gcc"), *gprof = test_tool_path("gprof");
    bool have_gprof = gprof != NULL;
    free(gprof);
    if (!gcc || !have_gprof) {
        free(gcc);
        cr_skip_test("gcc or gprof is not installed: scripts/install-deps --test");
    }
    char *rel = xasprintf("workloads/%s", source);
    char *src = test_source_path(rel);
    free(rel);
    run->prog = test_path(dir, name);
    const char *cc[] = {gcc,  "-std=gnu11", opt, "-g",  "-pg", "-pthread",
                        "-o", run->prog,    src, "-lm", NULL};
    struct spawn_result res;
    run_ok(cc, NULL, dir, &res);
    spawn_result_free(&res);

    const char *argv[16] = {run->prog};
    size_t n = 1;
    for (size_t i = 0; args && args[i] && n + 1 < sizeof(argv) / sizeof(argv[0]); i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    const char *plain_gmon[] = {"GMON_OUT_PREFIX", NULL}; /* gmon.out, not gmon.out.PID */
    run_ok(argv, plain_gmon, dir, &res);
    spawn_result_free(&res);
    run->gmon = test_path(dir, "gmon.out");
    free(src);
    free(gcc);
}

char *gprof_run_text(const struct gprof_run *run, const char *option)
{
    char *gprof = test_need_tool("gprof");
    const char *argv[] = {gprof, "-b", option, run->prog, run->gmon, NULL};
    struct spawn_result res;
    run_ok(argv, NULL, NULL, &res);
    char *text = xstrdup(res.out);
    spawn_result_free(&res);
    free(gprof);
    return text;
}

void gprof_run_free(struct gprof_run *run)
{
    free(run->prog);
    free(run->gmon);
}
