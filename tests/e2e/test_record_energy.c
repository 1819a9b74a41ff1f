/*
 * test_record_energy.c - energy per function against a program that is its
 * own power meter (tests/workloads/metered.c, docs/pmu.md "The join"), on
 * both engines: it writes the power of the phase it is in (9 W, 3 W, 1 W
 * for three functions, phases of 8 to 12 ms) into a file that `record -p
 * file:PATH,mW` reads, and says how long each phase lasted on and off a
 * CPU.  Each function's share of the energy must be its own power's.
 *
 * On a busy machine the program waits for a CPU now and then, and the
 * energy measured meanwhile is nobody's ([unattributed], docs/pmu.md): the
 * shares are checked against the energy measured while it ran (each
 * phase's power times its CPU time), and [unattributed] against the share
 * of the run it spent off a CPU, which the program measured itself.  On a
 * quiet machine the two are the same as the energy of each phase's wall
 * time, and [unattributed] is under 1 %.  Where the program and the
 * profiler take turns on busy CPUs, the perf engine's readings come only
 * between the program's bursts and the bound on the shares widens with the
 * share of the run the program spent off a CPU (at most four times).
 * Against the perf engine before the join was fixed (each reading joined
 * to samples several milliseconds away, windows split by CPU time alone):
 * 54 % for a 70 % function at 1 kHz.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../lib/fake_powercap.h"
#include "engines.h"
#include "format/load.h"
#include "report_csv.h"
#include "test_record_common.h"
#include "util/xalloc.h"

static const char *const functions[] = {"phase_9w", "phase_3w", "phase_1w"};
#define NFUNCS 3

#define MAX_CHANGES 100000

struct truth {
    uint64_t changes[MAX_CHANGES]; /* realtime ns of each change of power, in order */
    double watts[MAX_CHANGES];     /* the power from that change on */
    size_t nchanges;
    double joules[NFUNCS];  /* power x wall time of its phases */
    double running[NFUNCS]; /* power x CPU time of its phases */
    double cpu, wall;
};

static void read_truth(const char *path, struct truth *t)
{
    memset(t, 0, sizeof(*t));
    FILE *f = fopen(path, "r");
    cr_assert(f, "no truth file %s", path);
    char name[64];
    double watts, seconds, joules, cpu;
    char line[256];
    unsigned long long at;
    while (fgets(line, sizeof(line), f)) {
        if (sscanf(line, "at %llu %lf", &at, &watts) == 2 && t->nchanges < MAX_CHANGES) {
            t->watts[t->nchanges] = watts;
            t->changes[t->nchanges++] = at;
        } else if (sscanf(line, "cpu %lf", &cpu) == 1)
            t->cpu = cpu;
        else if (sscanf(line, "wall %lf", &seconds) == 1)
            t->wall = seconds;
        else if (sscanf(line, "%63s %lf %lf %lf %lf", name, &watts, &seconds, &joules, &cpu) == 5)
            for (size_t i = 0; i < NFUNCS; i++)
                if (strcmp(name, functions[i]) == 0) {
                    t->joules[i] = joules;
                    t->running[i] = watts * cpu;
                }
    }
    fclose(f);
    cr_assert(t->wall > 0 && t->cpu > 0, "truth without cpu and wall lines: %s", path);
}

/* The measured total: every row's energy, [unattributed] included. */
static double csv_total_energy(const char *csv)
{
    double total = 0;
    for (const char *line = strchr(csv, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        const char *field = line + 1;
        for (int k = 0; k < 6 && field; k++) /* key,samples,cpu,%,wall,%,energy */
            field = strchr(field, ',') ? strchr(field, ',') + 1 : NULL;
        if (field)
            total += strtod(field, NULL);
    }
    return total;
}

/* The profile's readings (its SAMPLE records' instants) against the
 * program's log of its changes of power (TRUTH), in one pass:
 *
 * *LATE: the share of the profile's span that lies in intervals between
 * two readings longer than three periods of HZ (readings the profiler,
 * kept off a CPU, took late) in which the power changed: what the source
 * said there is a guess.
 *
 * *SPREAD: how far the profile's account of the energy may stray from the
 * program's by where its readings fell alone (joules, one standard
 * deviation).  Readings split each interval at their ends, and a change of
 * power at a random place inside an interval of length DT moves the
 * interval's energy by about its step times DT times a uniform variable of
 * variance 1/12.  At 100 Hz, phases of 8 to 12 ms against readings 10 ms
 * apart, about 1.3 % of the total: the ptrace engine's total missed a
 * bound of 3 % alone in 3 of 7 runs at 100 Hz beside two CPU-bound jobs.
 */
static void readings_against_log(const char *path, double hz, const struct truth *t, double *late,
                                 double *spread)
{
    struct profile p;
    cr_assert_eq(profile_load(path, &p), 0, "cannot load %s", path);
    double late_s = 0, span = 0, variance = 0;
    size_t c = 0;
    for (size_t i = 1; i < p.nsamples; i++) {
        uint64_t from = p.samples[i - 1].time_ns, to = p.samples[i].time_ns;
        double dt = (double)(to - from) / 1e9;
        span += dt;
        while (c < t->nchanges && t->changes[c] <= from)
            c++;
        if (dt > 3 / hz && c < t->nchanges && t->changes[c] <= to)
            late_s += dt;
        double watts = c ? t->watts[c - 1] : 1.0; /* the file's first content: 1000 mW */
        for (size_t k = c; k < t->nchanges && t->changes[k] <= to; k++) {
            double step = t->watts[k] - watts;
            variance += step * step * dt * dt / 12;
            watts = t->watts[k];
        }
    }
    profile_free(&p);
    *late = span > 0 ? late_s / span : 0;
    *spread = sqrt(variance);
}

/* Write TEXT (milliwatts, as the file: source reads them) to PATH. */
static void write_power(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s: %s", path, strerror(errno));
    fputs(text, f);
    cr_assert_eq(fclose(f), 0, "%s: %s", path, strerror(errno));
}

/* Record the metered program for SECONDS at HZ with ENGINE; check each
 * function's share of the energy within TOLERANCE (a fraction). */
static void check_shares(const char *engine, const char *hz, const char *seconds, double tolerance)
{
    char *dir = test_mkdtemp();
    char *power = xasprintf("%s/power", dir), *truth_path = xasprintf("%s/truth", dir);
    char *profile = xasprintf("%s/energy.data", dir), *spec = xasprintf("file:%s,mW", power);
    write_power(power, "  1000\n");
    char *ptprof = build_ptprof(), *metered = build_workload("metered");
    const char *argv[] = {ptprof, "record", "--engine", engine,  "-f",  hz,      "-p",       spec,
                          "-o",   profile,  "--",       metered, power, seconds, truth_path, NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    spawn_result_free(&res);
    static struct truth truth;
    struct truth *t = &truth;
    read_truth(truth_path, t);

    char *csv =
        report_csv((const char *[]){profile, "-k", "procedure", "--metric", "energy", NULL});
    double total = 0, unattributed = report_csv_value(csv, "[unattributed]", "energy");
    double got[NFUNCS], truth_j = 0, running_j = 0;
    for (size_t i = 0; i < NFUNCS; i++) {
        got[i] = report_csv_value(csv, functions[i], "total_energy");
        cr_assert(isfinite(got[i]), "%s engine: no row for %s:\n%s", engine, functions[i], csv);
        truth_j += t->joules[i];
        running_j += t->running[i];
    }
    total = csv_total_energy(csv);
    cr_assert(isfinite(unattributed), "%s engine: no [unattributed] row:\n%s", engine, csv);
    /* The readings' integral is the program's own account of its energy,
     * give or take the first and last reading intervals, the intervals
     * in which the profiler, kept off a CPU, took no reading, and four
     * standard deviations of where the readings fell (readings_against_log()). */
    double late, spread;
    readings_against_log(profile, atof(hz), t, &late, &spread);
    cr_expect(fabs(total - truth_j) <= (0.03 + late) * truth_j + 4 * spread,
              "%s engine at %s Hz: %.3f J measured, the program spent %.3f J (%.1f%% of the run "
              "between late readings; where the readings fell spreads the account by %.3f J)",
              engine, hz, total, truth_j, 100 * late, spread);

    /* A sample joins the reading nearest it; a program kept off a CPU for
     * a share of the run meets a profiler kept off it too, whose readings
     * come late: the bound widens with that share (what the program saw),
     * up to four times, and by the share of the run between late readings
     * (what the profile shows); it is TOLERANCE on a quiet machine. */
    /* The shares are of the three functions' energy: the program's own
     * account of each phase's CPU time leaves out its write of the power
     * file and its loop, which the profile gives to main (0.1-0.6 % of
     * the energy here, taken from every function's share alike). */
    double functions_j = 0, off_cpu = 1 - t->cpu / t->wall;
    for (size_t i = 0; i < NFUNCS; i++)
        functions_j += got[i];
    double bound = build_tolerance(tolerance) / (off_cpu < 0.75 ? 1 - off_cpu : 0.25) + late;
    for (size_t i = 0; i < NFUNCS; i++) {
        double share = got[i] / functions_j, want = t->running[i] / running_j;
        cr_expect(fabs(share - want) <= bound,
                  "%s engine at %s Hz: %s has %.1f%% of the three functions' energy, its power "
                  "times its CPU time is %.1f%% (%.1f%% of the wall time's; %.1f%% "
                  "unattributed, %.1f%% elsewhere, %.1f%% of the run off a CPU: within %.1f pp)",
                  engine, hz, functions[i], 100 * share, 100 * want, 100 * t->joules[i] / truth_j,
                  100 * unattributed / total, 100 * (total - unattributed - functions_j) / total,
                  100 * off_cpu, 100 * bound);
    }
    /* A program that never sleeps leaves nothing unattributed but the time
     * it waited for a CPU: under 1 % on a quiet machine.  On a busy one the
     * windows the perf engine splits by place a sample's CPU time right
     * before it, not where it ran before the program was preempted: a
     * quarter more than the time off a CPU is allowed. */
    cr_expect(unattributed / total <= 0.01 + 1.25 * off_cpu,
              "%s engine at %s Hz: %.2f%% of the energy unattributed, the program was off a CPU "
              "%.2f%% of the run",
              engine, hz, 100 * unattributed / total, 100 * off_cpu);
    free(csv);
    free(ptprof);
    free(metered);
    free(power);
    free(truth_path);
    free(profile);
    free(spec);
    test_rmtree(dir);
    free(dir);
}

/* The perf engine joins each sample to the reading nearest it, so a
 * change of power between two readings blurs (docs/pmu.md, "How exact it
 * is"): about a point off the 9 W function with samples anywhere between
 * two readings.  On the PVM guest they do not fall evenly: three in four
 * 0.4 to 0.8 of the way from one reading to the next (8 of 2,993 in the
 * last tenth), so the nearest reading is mostly the next one, past a
 * change that came after the sample: 1.2 to 2.4 points off, run by run,
 * where 2 were allowed.  The ptrace engine reads at its samples'
 * instant. */
ENGINE_TEST(record_energy, each_function_gets_its_own_power_at_1khz, .timeout = 300)
{
    check_shares(engine_p->name, "1000", "3", engine_is_perf(engine_p->name) ? 0.025 : 0.02);
}

ENGINE_TEST(record_energy, each_function_gets_its_own_power_at_100hz, .timeout = 300)
{
    check_shares(engine_p->name, "100", "6", 0.05);
}

/* --- a source that fails ----------------------------------------------------------- */

struct rewriter {
    const char *path;
    atomic_bool stop;
    unsigned rewrites;
};

/* Rewrites the file as `echo 2000 > file` does, truncated then written,
 * every millisecond; one rewrite in ten leaves it empty for a millisecond,
 * so that reads are sure to meet it so. */
static void *rewrite(void *arg)
{
    struct rewriter *w = arg;
    while (!atomic_load(&w->stop)) {
        int fd = open(w->path, O_WRONLY | O_TRUNC);
        if (fd < 0)
            break;
        struct timespec empty = {0, 1000000}, full = {0, 1000000};
        if (w->rewrites % 10 == 0)
            nanosleep(&empty, NULL);
        if (write(fd, "2000\n", 5) != 5)
            break;
        close(fd);
        w->rewrites++;
        nanosleep(&full, NULL);
    }
    return NULL;
}

static unsigned long debug_count(const char *err, const char *label, const char *after)
{
    const char *line = strstr(err, label);
    const char *at = line ? strstr(line, after) : NULL;
    cr_assert(at, "no '%s ... %s' in:\n%s", label, after, err);
    while (at > line && at[-1] == ' ')
        at--;
    while (at > line && at[-1] >= '0' && at[-1] <= '9')
        at--;
    return strtoul(at, NULL, 10);
}

/* A file another program rewrites the way scripts do is sometimes empty
 * when read: that reading is NaN and the next tick reads again; the run
 * keeps its measurement (issue: one empty read used to silence the source
 * for the rest of the run). */
ENGINE_TEST(record_energy, a_file_met_empty_is_read_again_at_the_next_tick, .timeout = 120)
{
    const char *engine = engine_p->name;
    char *dir = test_mkdtemp();
    char *power = xasprintf("%s/power", dir), *profile = xasprintf("%s/p.data", dir);
    char *spec = xasprintf("file:%s,mW", power);
    write_power(power, "2000\n");
    static struct rewriter w;
    w.path = power;
    w.rewrites = 0;
    atomic_init(&w.stop, false);
    pthread_t thread;
    cr_assert_eq(pthread_create(&thread, NULL, rewrite, &w), 0);
    char *ptprof = build_ptprof(), *spin = build_workload("spin");
    const char *argv[] = {ptprof, "record", "--engine", engine, "-d", "-f",  "1000", "-p",
                          spec,   "-o",     profile,    "--",   spin, "1.5", NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 60);
    atomic_store(&w.stop, true);
    pthread_join(thread, NULL);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    cr_assert_gt(w.rewrites, 100, "the file was rewritten %u times", w.rewrites);
    cr_expect_null(strstr(res.err, "given up"), "%s engine gave the source up: " RUN_FMT, engine,
                   RUN_ARGS(&res));
    unsigned long readings = debug_count(res.err, "[debug] measurement:", "readings");
    unsigned long failed = debug_count(res.err, "[debug] measurement:", "failed and taken again");
    cr_expect_gt(failed, 0, "%s engine: no read met the file empty: " RUN_FMT, engine,
                 RUN_ARGS(&res));
    cr_expect(strstr(res.err, "readings failed and were taken again"),
              "%s engine: the failures are not reported: " RUN_FMT, engine, RUN_ARGS(&res));
    spawn_result_free(&res);

    /* The energy is measured over the readings that were taken, and still
     * adds up: 2 W over the rest of the run. */
    char *csv = report_csv((const char *[]){profile, "--metric", "energy", NULL});
    double total = csv_total_energy(csv), share = (double)(readings - failed) / (double)readings;
    cr_expect(total > 0.8 * share * 2 * 1.5 && total < 1.2 * 2 * 1.5,
              "%s engine: %.3f J measured, %.0f%% of the readings at 2 W over 1.5 s", engine, total,
              100 * share);
    free(csv);
    free(ptprof);
    free(spin);
    free(power);
    free(profile);
    free(spec);
    test_rmtree(dir);
    free(dir);
}

/* A source that keeps failing (its file removed) is given up after a
 * second of failures, in one line that says why; the profile is written. */
Test(record_energy, a_source_failing_for_a_second_is_given_up_with_a_message, .timeout = 120)
{
    char *dir = test_mkdtemp();
    char *power = xasprintf("%s/power", dir), *profile = xasprintf("%s/p.data", dir);
    char *spec = xasprintf("file:%s,mW", power);
    write_power(power, "2000\n");
    char *ptprof = build_ptprof(), *spin = build_workload("spin");
    /* The file goes 0.3 s into a 2.5 s run and never comes back. */
    char *script = xasprintf("(sleep 0.3; rm -f '%s') & exec '%s' 2.5", power, spin);
    const char *argv[] = {ptprof,  "record", "-f",      "200", "-p",   spec, "-o",
                          profile, "--",     "/bin/sh", "-c",  script, NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 60);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    const char *msg = strstr(res.err, "given up");
    cr_assert(msg, "no message: " RUN_FMT, RUN_ARGS(&res));
    cr_expect(strstr(res.err, "failed for 1.") && strstr(res.err, "No such file"),
              "the message says how long and why: " RUN_FMT, RUN_ARGS(&res));
    cr_expect(access(profile, F_OK) == 0, "no profile written");
    spawn_result_free(&res);
    free(script);
    free(ptprof);
    free(spin);
    free(power);
    free(profile);
    free(spec);
    test_rmtree(dir);
    free(dir);
}

/* --- rapl as an unprivileged user meets it ------------------------------------------- */

/* Since Linux 5.10 energy_uj is root's only: an unprivileged `-p rapl`
 * says so in one line and names what works instead, before the program
 * starts. */
Test(record_energy, unprivileged_rapl_says_root_only_and_what_works_instead, .timeout = 60)
{
    if (geteuid() != 0)
        cr_skip_test("not root: cannot switch to uid 65534 (the test needs CI's root)");
    char *setpriv = test_need_tool("setpriv");
    struct fake_powercap *fp = fake_powercap_create();
    cr_assert_not_null(fp);
    cr_assert_eq(fake_powercap_add(fp, "intel-rapl:0", "package-0", 1000, 262143328850ULL), 0);
    cr_assert_eq(fake_powercap_root_only(fp, "intel-rapl:0"), 0);
    char *env_root = xasprintf("PTPROF_SYSFS_ROOT=%s", fake_powercap_root(fp));
    const char *env[] = {env_root, NULL};
    /* A copy of ptprof that uid 65534 may run, wherever the build is. */
    char *dir = test_mkdtemp();
    cr_assert_eq(chmod(dir, 0755), 0);
    char *built = build_ptprof(), *ptprof = test_path(dir, "ptprof");
    test_copy_executable(built, ptprof);
    free(built);
    const char *echo = "/bin/echo";
    const char *argv[] = {AS_NOBODY(setpriv), ptprof, "record", "-p",      "rapl", "-o",
                          "/dev/null",        "--",   echo,     "started", NULL};
    struct spawn_result res;
    run_argv(&res, argv, env, "/", 60);
    cr_assert_eq(spawn_exit_code(res.status), 1, RUN_CONTEXT(&res));
    cr_expect_null(strstr(res.out, "started"), "the program ran: " RUN_FMT, RUN_ARGS(&res));
    const char *nl = strchr(res.err, '\n');
    cr_expect(nl && nl[1] == '\0', "not one line: " RUN_FMT, RUN_ARGS(&res));
    static const char *const says[] = {"energy_uj", "root only", "hwmon", "-p file:", "CSV"};
    for (size_t i = 0; i < sizeof(says) / sizeof(says[0]); i++)
        cr_expect(strstr(res.err, says[i]), "the message lacks '%s': " RUN_FMT, says[i],
                  RUN_ARGS(&res));
    spawn_result_free(&res);

    /* As root the same tree measures. */
    const char *as_root[] = {ptprof,      "record", "-p", "rapl", "-o",
                             "/dev/null", "--",     echo, "x",    NULL};
    run_argv(&res, as_root, env, NULL, 60);
    cr_expect_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    spawn_result_free(&res);
    free(ptprof);
    free(setpriv);
    free(env_root);
    test_rmtree(dir);
    free(dir);
    fake_powercap_destroy(fp);
}
