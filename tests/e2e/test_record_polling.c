/*
 * test_record_polling.c - the ptrace engine polls for its stops only while
 * a CPU is free (src/record/ptrace/idle_cpu.h, docs/recording.md): with one busy
 * thread on a machine of two CPUs or more it polls, with every CPU taken
 * by other jobs it sleeps until the stops come, and PTPROF_SPIN_NS=0 turns
 * polling off.
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

Test(record_polling, one_busy_thread_with_a_free_cpu_is_polled_for, .timeout = 60)
{
    if (online_cpus() < 2)
        cr_skip_test("one CPU: never a free one");
    double pct = record_spin();
    cr_expect_geq(pct, 30.0, "polled for %.1f%% of the samples of one thread on %ld CPUs", pct,
                  online_cpus());
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
