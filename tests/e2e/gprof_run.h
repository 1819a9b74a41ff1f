/*
 * gprof_run.h - a workload built with gcc -pg and run once, for the tests
 * that set ptprof's reading of its gmon.out against gprof's.
 *
 * Contract: gprof_run_build() compiles tests/workloads/SOURCE into
 * DIR/NAME with "-std=gnu11 OPT -g -pg -pthread ... -lm", runs it with
 * ARGS in DIR (GMON_OUT_PREFIX unset, so it writes DIR/gmon.out) and fails
 * the test unless each step exits 0; RUN->prog and RUN->gmon are absolute
 * paths (free them with gprof_run_free).  gprof_run_text() returns
 * "gprof -b OPTION PROG GMON"'s stdout (free it); the test is skipped
 * where gcc or gprof is not installed.
 */
#ifndef PTPROF_TESTS_E2E_GPROF_RUN_H
#define PTPROF_TESTS_E2E_GPROF_RUN_H

struct gprof_run {
    char *prog, *gmon;
};

void gprof_run_build(struct gprof_run *run, const char *dir, const char *source, const char *name,
                     const char *opt, const char *const *args);
char *gprof_run_text(const struct gprof_run *run, const char *option);
void gprof_run_free(struct gprof_run *run);

#endif
