/*
 * test_record_polling.c - the ptrace engine polls for its stops only while
 * a CPU is free (src/record/ptrace/idle_cpu.h, docs/recording.md): where
 * the load it reads (stated by the test with PTPROF_LOADAVG, so that no
 * test depends on an idle machine) leaves a CPU free it polls for every
 * sample, where it leaves none it never does; with every CPU taken by real
 * jobs it sleeps until the stops come, and PTPROF_SPIN_NS=0 turns polling
 * off.
 */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "record_native.h"

/* The "[debug] polling:" share of the -d summary, in percent. */
static double polled_pct(const struct spawn_result *res)
{
    const char *line = strstr(res->err, "[debug] polling:");
    cr_assert(line, "no polling line in the -d summary:\n" REC_FMT, REC_ARGS(res));
    double pct;
    cr_assert_eq(sscanf(line, "[debug] polling: for the stops of %lf%%", &pct), 1, "%.120s", line);
    return pct;
}

static double record_spin(void)
{
    char *wl = build_workload("spin");
    const char *args[] = {"-d", "-g", "none", "-f", "1000", "--", wl, "1.0", NULL};
    struct recording r;
    record_native_engine(&r, "ptrace", args, 0, 60);
    double pct = polled_pct(&r.run);
    cr_log_info("polled for %.1f%% of the samples", pct);
    recording_free(&r);
    free(wl);
    return pct;
}

static long online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

/* The machine's load as /proc/loadavg says it, stated by the test: RUNNABLE
 * tasks want a CPU (the tracer included). */
static char *state_load(const char *dir, long runnable)
{
    char *path = test_path(dir, "loadavg");
    FILE *f = fopen(path, "w");
    cr_assert(f, "cannot write %s", path);
    fprintf(f, "0.50 0.40 0.30 %ld/250 12345\n", runnable);
    cr_assert_eq(fclose(f), 0);
    setenv("PTPROF_LOADAVG", path, 1);
    return path;
}

/* A free CPU, whatever else runs here: the tracer alone is runnable.  The
 * engine then polls for the stops of every sample. */
Test(record_polling, one_busy_thread_with_a_free_cpu_is_polled_for, .timeout = 60)
{
    char *dir = test_mkdtemp();
    char *load = state_load(dir, 1);
    double pct = record_spin();
    unsetenv("PTPROF_LOADAVG");
    cr_expect_geq(pct, 99.0, "polled for %.1f%% of the samples with a CPU free at every check",
                  pct);

    /* And not at all while every CPU has a task waiting for it. */
    free(state_load(dir, online_cpus() + 2));
    pct = record_spin();
    unsetenv("PTPROF_LOADAVG");
    cr_expect_leq(pct, 1.0, "polled for %.1f%% of the samples with no CPU free at any check", pct);
    free(load);
    test_rmtree(dir);
    free(dir);
}

Test(record_polling, no_polling_when_other_jobs_take_every_cpu, .timeout = 60)
{
    long n = online_cpus();
    pid_t jobs[64];
    if (n > 64)
        n = 64;
    for (long i = 0; i < n; i++) {
        jobs[i] = fork();
        cr_assert_geq(jobs[i], 0);
        if (jobs[i] == 0) {
            alarm(30);
            for (volatile unsigned long x = 0;; x++)
                ;
        }
    }
    double pct = record_spin();
    for (long i = 0; i < n; i++) {
        kill(jobs[i], SIGKILL);
        waitpid(jobs[i], NULL, 0);
    }
    cr_expect_leq(pct, 10.0, "polled for %.1f%% of the samples with %ld busy jobs on %ld CPUs", pct,
                  n, n);
}

Test(record_polling, spin_ns_zero_never_polls, .timeout = 60)
{
    setenv("PTPROF_SPIN_NS", "0", 1);
    double pct = record_spin();
    unsetenv("PTPROF_SPIN_NS");
    cr_expect_eq(pct, 0.0, "polled for %.1f%% of the samples with PTPROF_SPIN_NS=0", pct);
}
