/*
 * test_switch_output.c - `ptprof record --switch-output`: a recording as a
 * series of files, as a long-running service is watched.  With both
 * engines, the shares workload (which measures its own CPU time) recorded
 * with a new file every second: several files named by the %t pattern in
 * time order, each complete and read alone by `info` and `report`, and
 * their CPU time adds up to what the program measured (no sample lost or
 * counted twice at a switch).  On SIGUSR2 to the profiler alone: a new
 * file each time, the program never sees the signal (it exits 0, as it
 * would die of an unhandled SIGUSR2), and --switch-max-files=2 leaves the
 * last two.  By size: every file but the last reaches it, none goes far
 * past it.  In another format by -o's suffix (pprof, folded): each file
 * converted when finished, named with the timestamp before the suffix,
 * read by `go tool pprof` (when go is there) and `report`, the CPU time
 * adding up as before, no native recording left behind, and
 * --switch-max-files counting the converted files.  Bad values, and a
 * name no timestamp can enter (gmon.out), are refused before the program
 * runs.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engines.h"
#include "record/host_steal.h"
#include "test_record_common.h"
#include "../unit/real_tools.h"
#include "util/xalloc.h"

#define PREFIX "snap-"

/* The files of the series in DIR, sorted (by name: by time). */
static size_t series(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    cr_assert(d);
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, PREFIX, strlen(PREFIX)) != 0)
            continue;
        names = xrealloc(names, (n + 1) * sizeof(*names));
        names[n++] = xasprintf("%s/%s", dir, e->d_name);
    }
    closedir(d);
    for (size_t i = 1; i < n; i++) /* insertion sort: a handful */
        for (size_t j = i; j > 0 && strcmp(names[j - 1], names[j]) > 0; j--) {
            char *t = names[j];
            names[j] = names[j - 1];
            names[j - 1] = t;
        }
    *out = names;
    return n;
}

static void free_series(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* ptprof info says FILE of the series is complete (its writer closed it);
 * WHAT starts the message. */
static void expect_complete(const char *file, const char *what)
{
    char *info = ptprof_stdout((const char *[]){"info", file, NULL});
    cr_expect(strstr(info, "status:     complete"), "%s: %s is not complete:\n%s", what, file,
              info);
    free(info);
}

/* The CPU time a file's report shows. */
static double file_cpu(const char *file)
{
    char *json = ptprof_stdout((const char *[]){"report", "--format", "json", file, NULL});
    const char *p = strstr(json, "\"cpu_time\":");
    cr_assert(p, "%s: no cpu_time in\n%.500s", file, json);
    double v = strtod(p + strlen("\"cpu_time\":"), NULL);
    free(json);
    return v;
}

/* What the program measured of itself, in s: NAME's ns in TRUTH. */
static double measured(const char *truth, const char *name)
{
    FILE *f = fopen(truth, "r");
    cr_assert(f, "%s: the program wrote no measurement", truth);
    char got[64];
    unsigned long long ns, value = 0;
    while (fscanf(f, "%63s %llu", got, &ns) == 2)
        if (strcmp(got, name) == 0)
            value = ns;
    fclose(f);
    return (double)value / 1e9;
}

static double measured_cpu(const char *truth)
{
    return measured(truth, "cpu_total");
}

ENGINE_TEST(switch_output, a_file_every_second_and_no_cpu_lost, .timeout = 300)
{
    const char *engine = engine_p->name;
    char *dir = test_mkdtemp(), *ptprof = build_ptprof(), *prog = build_workload("shares");
    char *pattern = xasprintf("%s/" PREFIX "%%t.data", dir);
    char *truth = xasprintf("%s/truth.txt", dir), *env_truth = xasprintf("SHARES_OUT=%s", truth);
    const char *argv[] = {ptprof, "record", "--engine", engine, "--switch-output=1s",
                          "-o",   pattern,  "--",       prog,   "2",
                          "3.5",  NULL};
    const char *env[] = {env_truth, NULL};
    struct spawn_result res;
    struct host_steal before, after;
    host_steal_mark(&before);
    run_argv(&res, argv, env, NULL, 120);
    host_steal_mark(&after);
    cr_assert_eq(spawn_exit_code(res.status), 0, "%s: " RUN_CONTEXT(&res), engine);
    spawn_result_free(&res);

    char **files;
    size_t n = series(dir, &files);
    /* 3.5 s of the program's own clock, a file a second (and the profiler's
     * start and end around it). */
    cr_assert(n >= 4 && n <= 6, "%s: %zu files for 3.5 s at one a second", engine, n);
    double cpu = 0;
    for (size_t i = 0; i < n; i++) {
        const char *base = strrchr(files[i], '/') + 1;
        cr_expect_eq(strlen(base), strlen(PREFIX "20261126114141123.data"), "%s: name %s", engine,
                     base);
        expect_complete(files[i], engine);
        double c = file_cpu(files[i]);
        cr_expect_gt(c, 0, "%s: %s holds no CPU time", engine, files[i]);
        cpu += c;
    }
    /* Every file counts from each thread's previous sample: together they
     * are the run's CPU time, none lost or counted twice at a switch.  The
     * perf engine's task-clock also counts the time the VM's host took
     * while a thread was on a CPU, which the program's clock does not
     * (host_steal.h): a third of the time stolen made 3.8 s of 2.6. */
    double truth_s = measured_cpu(truth), steal = host_steal_share(&before, &after);
    double over = strcmp(engine, "perf") == 0 && steal < 0.5 ? steal / (1 - steal) : 0;
    cr_expect(cpu >= 0.95 * truth_s && cpu <= (1.05 + over) * truth_s,
              "%s: the files hold %.3f s of CPU time, the program used %.3f s (the host took "
              "%.1f%% of the CPUs' time)",
              engine, cpu, truth_s, 100 * steal);
    free_series(files, n);
    free(env_truth);
    free(truth);
    free(pattern);
    free(prog);
    free(ptprof);
    test_rmtree(dir);
    free(dir);
}

/* Wait until DIR holds N files of the series (the profiler wrote one). */
static void wait_for_files(struct spawn_proc *p, const char *dir, size_t n)
{
    for (int i = 0; i < 200; i++) {
        char **files;
        size_t have = series(dir, &files);
        free_series(files, have);
        if (have >= n)
            return;
        spawn_pump(p, 0.05);
    }
    cr_assert_fail("no new file after SIGUSR2 (wanted %zu in %s)", n, dir);
}

/* Wait until the profiler PID has started the program (its child runs
 * PROG): its signals are caught by then. */
static void wait_for_program(struct spawn_proc *p, const char *prog)
{
    const char *name = strrchr(prog, '/') + 1;
    char *children = xasprintf("/proc/%d/task/%d/children", (int)p->pid, (int)p->pid);
    for (int i = 0; i < 600; i++) {
        char *list = test_read_file(children, NULL);
        bool running = false;
        for (char *c = list; c && *c && !running;) {
            char *end;
            long child = strtol(c, &end, 10);
            if (end == c)
                break;
            c = end;
            char *comm_path = xasprintf("/proc/%ld/comm", child);
            char *comm = test_read_file(comm_path, NULL);
            running = comm && strncmp(comm, name, strlen(name)) == 0;
            free(comm);
            free(comm_path);
        }
        free(list);
        if (running) {
            free(children);
            return;
        }
        spawn_pump(p, 0.05);
    }
    cr_assert_fail("the profiler never started %s", prog);
}

Test(switch_output, on_sigusr2_keeping_the_last_two, .timeout = 300)
{
    char *dir = test_mkdtemp(), *ptprof = build_ptprof(), *prog = build_workload("shares");
    char *pattern = xasprintf("%s/" PREFIX "%%t.data", dir);
    const char *argv[] = {
        ptprof, "record", "--switch-output", "--switch-max-files=2", "-o", pattern, "--", prog, "1",
        "4",    NULL};
    struct spawn_opts o = {.argv = argv, .timeout_s = 120};
    struct spawn_proc p;
    spawn_start(&o, &p);
    wait_for_program(&p, prog);
    /* Each SIGUSR2 closes a file (it appears complete) and opens the next. */
    for (size_t k = 1; k <= 3; k++) {
        spawn_pump(&p, 0.3);
        cr_assert_eq(kill(p.pid, SIGUSR2), 0);
        wait_for_files(&p, dir, k < 2 ? k : 2);
    }
    struct spawn_result res;
    spawn_finish(&p, &res);
    /* The program never got it: an unhandled SIGUSR2 would have killed it. */
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);
    char **files;
    size_t n = series(dir, &files);
    cr_assert_eq(n, 2, "--switch-max-files=2 left %zu files", n);
    for (size_t i = 0; i < n; i++)
        expect_complete(files[i], "--switch-max-files=2");
    free_series(files, n);
    free(pattern);
    free(prog);
    free(ptprof);
    test_rmtree(dir);
    free(dir);
}

Test(switch_output, a_file_every_32k, .timeout = 300)
{
    char *dir = test_mkdtemp(), *ptprof = build_ptprof(), *prog = build_workload("shares");
    char *pattern = xasprintf("%s/" PREFIX "%%t.data", dir);
    const char *argv[] = {ptprof, "record", "--switch-output=32K", "-o", pattern, "--", prog, "2",
                          "2",    NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, NULL, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    spawn_result_free(&res);
    char **files;
    size_t n = series(dir, &files);
    cr_assert_geq(n, 2, "2 s of two threads make more than 32K of samples");
    for (size_t i = 0; i < n; i++) {
        size_t len = 0;
        char *data = test_read_file(files[i], &len);
        cr_assert(data);
        free(data);
        /* Checked at every tick: a file passes the size by a tick's worth. */
        if (i + 1 < n)
            cr_expect(len >= 32768 && len < 32768 + 65536, "%s: %zu bytes for 32K", files[i], len);
        expect_complete(files[i], "--switch-output=32K");
    }
    free_series(files, n);
    free(pattern);
    free(prog);
    free(ptprof);
    test_rmtree(dir);
    free(dir);
}

/* Record shares (two threads, 3 s of its own clock) with a file every
 * second, to DIR/NAME, with EXTRA (an option or NULL); the program's
 * measurements are in DIR/truth.txt. */
static void record_series(const char *engine, const char *dir, const char *name, const char *extra)
{
    char *ptprof = build_ptprof(), *prog = build_workload("shares");
    char *out = xasprintf("%s/%s", dir, name);
    char *truth = xasprintf("%s/truth.txt", dir), *env_truth = xasprintf("SHARES_OUT=%s", truth);
    const char *argv[] = {ptprof, "record", "--engine", engine, "--switch-output=1s",
                          "-o",   out,      "--",       prog,   "2",
                          "3",    NULL,     NULL};
    if (extra) {
        memmove(argv + 5, argv + 4, 8 * sizeof(*argv));
        argv[4] = extra;
    }
    const char *env[] = {env_truth, NULL};
    struct spawn_result res;
    run_argv(&res, argv, env, NULL, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "%s, -o %s: " RUN_CONTEXT(&res), engine, name);
    cr_expect_str_empty(res.err, "-o %s: the profiler said:\n%s", name, res.err);
    spawn_result_free(&res);
    /* The native recordings the files were converted from are gone. */
    DIR *d = opendir(dir);
    cr_assert(d);
    for (struct dirent *e; (e = readdir(d));)
        cr_expect(e->d_name[0] != '.' || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."),
                  "-o %s: left behind: %s", name, e->d_name);
    closedir(d);
    free(env_truth);
    free(truth);
    free(out);
    free(prog);
    free(ptprof);
}

/* The file's name is STEM, the timestamp, then SUFFIX. */
static void expect_named(const char *file, const char *stem, const char *suffix)
{
    const char *base = strrchr(file, '/') + 1;
    size_t stamp = strlen("20261126114141123");
    cr_expect(strlen(base) == strlen(stem) + stamp + strlen(suffix) &&
                  strncmp(base, stem, strlen(stem)) == 0 &&
                  strspn(base + strlen(stem), "0123456789") == stamp &&
                  strcmp(base + strlen(stem) + stamp, suffix) == 0,
              "%s: not %sTIMESTAMP%s", base, stem, suffix);
}

/* The CPU time go tool pprof -raw reads in a pprof file, in s. */
static double pprof_cpu(const char *go, const char *dir, const char *file)
{
    char *home = xasprintf("HOME=%s", dir), *cache = xasprintf("GOCACHE=%s/gocache", dir);
    const char *env[] = {home,
                         cache,
                         "GO111MODULE=off",
                         "GOFLAGS=",
                         "GOPROXY=off",
                         "GOTOOLCHAIN=local",
                         "GOTELEMETRY=off",
                         NULL};
    const char *argv[] = {go, "tool", "pprof", "-raw", file, NULL};
    struct spawn_result res;
    run_argv(&res, argv, env, dir, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "go tool pprof %s: " RUN_CONTEXT(&res), file);
    /* "Samples:", the types ("samples/count cpu/nanoseconds[dflt] ..."),
     * then "  V1 V2 V3: LOCATIONS" up to "Locations". */
    char *types = strstr(res.out, "Samples:\n");
    cr_assert(types, "%s: no samples in\n%.1000s", file, res.out);
    types += strlen("Samples:\n");
    int col = 0, cpu_col = -1;
    for (char *t = types; *t != '\n'; col++) {
        if (strncmp(t, "cpu/nanoseconds", 15) == 0)
            cpu_col = col;
        t += strcspn(t, " \n");
        t += strspn(t, " ");
    }
    cr_assert_geq(cpu_col, 0, "%s: no cpu/nanoseconds in %.200s", file, types);
    char *end = strstr(types, "\nLocations");
    cr_assert(end);
    double ns = 0;
    for (char *line = strchr(types, '\n') + 1; line < end; line = strchr(line, '\n') + 1) {
        char *colon = strchr(line, ':'), *eol = strchr(line, '\n');
        if (!colon || colon > eol || memchr(line, '[', (size_t)(eol - line)))
            continue; /* a label line */
        char *v = line;
        for (int i = 0; i < cpu_col; i++)
            strtod(v, &v);
        ns += strtod(v, NULL);
    }
    spawn_result_free(&res);
    free(cache);
    free(home);
    return ns / 1e9;
}

/* With both engines: the ptrace engine's waitpid(-1) meets the converters. */
ENGINE_TEST(switch_output, pprof_files_read_by_pprof_and_report, .timeout = 300)
{
    char *dir = test_mkdtemp();
    struct host_steal before, after;
    host_steal_mark(&before);
    record_series(engine_p->name, dir, PREFIX "svc.pb.gz", NULL);
    host_steal_mark(&after);
    char *truth = xasprintf("%s/truth.txt", dir);
    double truth_s = measured_cpu(truth), steal = host_steal_share(&before, &after);
    /* The time the VM's host took counts for the perf engine (above). */
    double over = strcmp(engine_p->name, "perf") == 0 && steal < 0.5 ? steal / (1 - steal) : 0;
    free(truth);
    char **files;
    size_t n = series(dir, &files);
    cr_assert(n >= 3 && n <= 5, "%s: %zu files for 3 s at one a second", engine_p->name, n);
    char *go = test_tool_path("go");
    double cpu = 0, go_cpu = 0;
    for (size_t i = 0; i < n; i++) {
        expect_named(files[i], PREFIX "svc.", ".pb.gz");
        char *info = ptprof_stdout((const char *[]){"info", files[i], NULL});
        cr_expect(strstr(info, "pprof"), "%s is not a pprof file:\n%s", files[i], info);
        free(info);
        double c = file_cpu(files[i]);
        cr_expect(c > 0 || i + 1 == n, "%s holds no CPU time", files[i]);
        cpu += c;
        if (go)
            go_cpu += pprof_cpu(go, dir, files[i]);
    }
    cr_expect(cpu >= 0.95 * truth_s && cpu <= (1.05 + over) * truth_s,
              "%s: the pprof files hold %.3f s of CPU time (report), the program used %.3f s (the "
              "host took %.1f%% of the CPUs' time)",
              engine_p->name, cpu, truth_s, 100 * steal);
    if (go)
        cr_expect(go_cpu >= 0.95 * truth_s && go_cpu <= (1.05 + over) * truth_s,
                  "%s: the pprof files hold %.3f s of CPU time (go tool pprof), the program used "
                  "%.3f s (the host took %.1f%% of the CPUs' time)",
                  engine_p->name, go_cpu, truth_s, 100 * steal);
    else
        cr_log_warn("go is not installed: the files were not read by go tool pprof");
    free(go);
    free_series(files, n);
    test_rmtree(dir);
    free(dir);
}

/* Folded stacks count samples (their default metric): the functions'
 * shares of them over the series are the shares of CPU time the program
 * measured. */
Test(switch_output, folded_files_hold_the_shares, .timeout = 300)
{
    char *dir = test_mkdtemp();
    record_series("auto", dir, PREFIX "svc.folded", NULL);
    char **files;
    size_t n = series(dir, &files);
    cr_assert(n >= 3 && n <= 5, "%zu files for 3 s at one a second", n);
    static const char *const work[] = {"work_heavy", "work_medium", "work_light", "work_tiny"};
    double samples[4] = {0}, all = 0;
    for (size_t i = 0; i < n; i++) {
        expect_named(files[i], PREFIX "svc.", ".folded");
        char *text = test_read_file(files[i], NULL);
        cr_assert(text);
        double in_file = 0;
        /* "FRAME;FRAME;...;LEAF COUNT" */
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
            char *space = strrchr(line, ' ');
            cr_assert(space, "%s: not folded: %s", files[i], line);
            *space = '\0';
            double count = strtod(space + 1, NULL);
            const char *leaf = strrchr(line, ';') ? strrchr(line, ';') + 1 : line;
            for (size_t w = 0; w < 4; w++)
                if (strcmp(leaf, work[w]) == 0)
                    samples[w] += count;
            in_file += count;
        }
        /* The last one may be a moment after the last switch. */
        cr_expect(in_file > 0 || i + 1 == n, "%s holds no sample", files[i]);
        all += in_file;
        free(text);
    }
    char *truth = xasprintf("%s/truth.txt", dir);
    double truth_all = 0, truth_w[4];
    for (size_t w = 0; w < 4; w++)
        truth_all += truth_w[w] = measured(truth, work[w]);
    cr_assert_gt(all, 0);
    for (size_t w = 0; w < 4; w++)
        cr_expect(fabs(samples[w] / all - truth_w[w] / truth_all) <= 0.05,
                  "%s: %.1f %% of the folded samples, %.1f %% of the CPU time it measured", work[w],
                  100 * samples[w] / all, 100 * truth_w[w] / truth_all);
    free(truth);
    free_series(files, n);
    test_rmtree(dir);
    free(dir);
}

Test(switch_output, max_files_counts_the_converted_files, .timeout = 300)
{
    char *dir = test_mkdtemp();
    record_series("auto", dir, PREFIX "%t.pb.gz", "--switch-max-files=2");
    char **files;
    size_t n = series(dir, &files);
    cr_expect_eq(n, 2, "--switch-max-files=2 left %zu files", n);
    for (size_t i = 0; i < n; i++) {
        expect_named(files[i], PREFIX, ".pb.gz");
        /* The last one may be a moment after the last switch. */
        cr_expect(file_cpu(files[i]) > 0 || i + 1 == n, "%s holds no CPU time", files[i]);
    }
    free_series(files, n);
    test_rmtree(dir);
    free(dir);
}

Test(switch_output, bad_values_are_refused_before_the_program_runs, .timeout = 60)
{
    char *dir = test_mkdtemp(), *ptprof = build_ptprof(), *prog = build_workload("shares");
    char *out = xasprintf("%s/x.data", dir), *gmon = xasprintf("%s/gmon.out", dir);
    const char *cases[][3] = {
        {"--switch-output=1K", "-o", out},   {"--switch-output=0s", "-o", out},
        {"--switch-output=soon", "-o", out}, {"--switch-max-files=2", "-o", out},
        {"--switch-output", "-o", "-"},      {"--switch-output", "-o", gmon},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *argv[] = {ptprof, "record", cases[i][0], cases[i][1], cases[i][2],
                              "--",   prog,     "1",         "1",         NULL};
        struct spawn_result res;
        run_argv(&res, argv, NULL, NULL, 60);
        cr_expect_eq(spawn_exit_code(res.status), 1, "%s: " RUN_CONTEXT(&res), cases[i][0]);
        cr_expect(!strstr(res.out, "shares: pid"), "%s: the program ran", cases[i][0]);
        cr_expect_eq(count_lines(res.err), 1, "%s: one line wanted:\n%s", cases[i][0], res.err);
        spawn_result_free(&res);
    }
    free(gmon);
    free(out);
    free(prog);
    free(ptprof);
    test_rmtree(dir);
    free(dir);
}
