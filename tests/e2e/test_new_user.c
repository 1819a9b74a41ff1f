/*
 * test_new_user.c - what a new user meets first (issue 20), end to end:
 *  - `record -o NAME` writes the format NAME asks for, as convert picks it
 *    (.pb.gz pprof, .folded, .prof gperftools, gmon.out and .gmon, .pbin),
 *    and refuses a name it would misread before the program starts;
 *  - `--engine auto` falling back to ptrace says so in one line;
 *  - `report` without a file reads ptprof.data, which record writes;
 *  - help texts and short options agree with each other, and `info` says
 *    PTPROF_ENGINE chose the engine when it did;
 *  - a gmon.out's call counts make the callers and callees gprof -q shows:
 *    the calls, and the time of each caller with the children's propagated.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/load.h"
#include "interop/pperf.h"
#include "gprof_run.h"
#include "report_csv.h"
#include "test_record_common.h"
#include "util/xalloc.h"

/* ptprof ARGS... in CWD (NULL: here) with ENV, into RES. */
static void ptprof_in(const char *cwd, const char *const *env, const char *const *args,
                      struct spawn_result *res)
{
    char *ptprof = build_ptprof();
    const char *argv[48] = {ptprof};
    size_t n = 1;
    for (; args[n - 1] && n < 47; n++)
        argv[n] = args[n - 1];
    argv[n] = NULL;
    run_argv(res, argv, env, cwd, 120);
    free(ptprof);
}

/* ptprof record OPTIONS... -- spin SECONDS in CWD, into RES. */
static void record_spin(const char *cwd, const char *const *prefix, const char *const *options,
                        const char *const *env, const char *seconds, struct spawn_result *res)
{
    char *ptprof = build_ptprof(), *spin = build_workload("spin");
    const char *argv[48];
    size_t n = 0;
    for (size_t i = 0; prefix && prefix[i]; i++)
        argv[n++] = prefix[i];
    argv[n++] = ptprof;
    argv[n++] = "record";
    for (size_t i = 0; options && options[i] && n < 40; i++)
        argv[n++] = options[i];
    argv[n++] = "--";
    argv[n++] = spin;
    argv[n++] = seconds;
    argv[n] = NULL;
    run_argv(res, argv, env, cwd, 90);
    free(ptprof);
    free(spin);
}

/* The format ptprof's own loader recognises in PATH ("pprof", "gmon"...). */
static char *format_of(const char *path)
{
    struct profile_file f;
    cr_assert_eq(profile_file_read(path, &f), 0, "%s cannot be read", path);
    char *name = xstrdup(profile_file_format(&f));
    profile_file_free(&f);
    return name;
}

/* --- 4. record -o NAME writes what NAME says --------------------------------- */

struct named_output {
    const char *name;   /* the file record writes */
    const char *format; /* what the loader must find in it */
};

Test(new_user, record_writes_the_format_its_output_name_asks_for, .timeout = 240)
{
    static const struct named_output outputs[] = {
        {"prof.pb.gz", "pprof"}, {"prof.folded", "folded"},  {"prof.prof", "gperftools"},
        {"gmon.out", "gmon"},    {"prof.gmon", "gmon"},      {"prof.pbin", "native"},
        {"prof.data", "native"}, {"prof.data.gz", "native"},
    };
    char *dir = test_mkdtemp();
    for (size_t i = 0; i < sizeof(outputs) / sizeof(outputs[0]); i++) {
        char *path = test_path(dir, outputs[i].name);
        const char *options[] = {"-o", path, NULL};
        struct spawn_result res;
        record_spin(dir, NULL, options, NULL, "0.3", &res);
        cr_assert_eq(spawn_exit_code(res.status), 0, "%s: " RUN_FMT, outputs[i].name,
                     RUN_ARGS(&res));
        char *format = format_of(path);
        cr_expect_str_eq(format, outputs[i].format, "record -o %s wrote %s", outputs[i].name,
                         format);
        free(format);
        spawn_result_free(&res);
        free(path);
    }
    /* The recordings converted from are gone. */
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        cr_expect(e->d_name[0] != '.' || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."),
                  "left behind: %s", e->d_name);
    closedir(d);
    /* The real readers take them: go tool pprof and gprof. */
    char *go = test_tool_path("go"), *gprof = test_tool_path("gprof");
    if (go) {
        char *pb = test_path(dir, "prof.pb.gz");
        const char *argv[] = {go, "tool", "pprof", "-top", pb, NULL};
        const char *env[] = {"HOME=/tmp", "GOCACHE=/tmp/ptprof-go-cache", NULL};
        struct spawn_result res;
        run_argv(&res, argv, env, dir, 120);
        cr_expect_eq(spawn_exit_code(res.status), 0, "go tool pprof: " RUN_FMT, RUN_ARGS(&res));
        cr_expect(strstr(res.out, "spin"), "go tool pprof names nothing of spin:\n%s", res.out);
        spawn_result_free(&res);
        free(pb);
    }
    if (gprof) {
        char *gmon = test_path(dir, "gmon.out"), *spin = build_workload("spin");
        const char *argv[] = {gprof, "-b", "-p", spin, gmon, NULL};
        struct spawn_result res;
        run_argv(&res, argv, NULL, dir, 120);
        cr_expect_eq(spawn_exit_code(res.status), 0, "gprof: " RUN_FMT, RUN_ARGS(&res));
        cr_expect(strstr(res.out, "Flat profile"), "gprof read no profile:\n%s", res.out);
        spawn_result_free(&res);
        free(gmon);
        free(spin);
    }
    free(go);
    free(gprof);
    test_rmtree(dir);
    free(dir);
}

Test(new_user, record_refuses_an_output_name_it_would_misread_before_the_program_runs)
{
    char *dir = test_mkdtemp();
    static const char *const names[] = {"out.svg", "out.html", "out.json"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        char *path = test_path(dir, names[i]);
        const char *options[] = {"-o", path, NULL};
        struct spawn_result res;
        record_spin(dir, NULL, options, NULL, "0.3", &res);
        cr_expect_eq(spawn_exit_code(res.status), 1, "%s: " RUN_FMT, names[i], RUN_ARGS(&res));
        cr_expect_eq(count_lines(res.err), 1, "%s: not one line: " RUN_FMT, names[i],
                     RUN_ARGS(&res));
        cr_expect(strstr(res.err, names[i]), "%s: the message does not name it: %s", names[i],
                  res.err);
        cr_expect(!strstr(res.out, "spin: ready"), "%s: the program ran", names[i]);
        cr_expect(!test_file_exists(path), "%s was written", names[i]);
        spawn_result_free(&res);
        free(path);
    }
    /* A format and a name that disagree. */
    char *path = test_path(dir, "prof.pb.gz");
    const char *options[] = {"--format", "pperf", "-o", path, NULL};
    struct spawn_result res;
    record_spin(dir, NULL, options, NULL, "0.3", &res);
    cr_expect_eq(spawn_exit_code(res.status), 1, RUN_CONTEXT(&res));
    cr_expect(!strstr(res.out, "spin: ready"), "the program ran: " RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);
    free(path);
    test_rmtree(dir);
    free(dir);
}

/* --- 6. --engine auto says when it falls back ---------------------------------- */

Test(new_user, auto_says_in_one_line_that_it_falls_back_to_ptrace, .timeout = 60)
{
    char *dir = test_mkdtemp(), *noperf = build_workload("noperf");
    char *path = test_path(dir, "p.data");
    const char *prefix[] = {noperf, "EACCES", NULL};
    const char *options[] = {"-o", path, NULL};
    struct spawn_result res;
    record_spin(dir, prefix, options, NULL, "0.3", &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    cr_expect_eq(count_lines(res.err), 1, "not one line: " RUN_FMT, RUN_ARGS(&res));
    cr_expect(strstr(res.err, "ptrace") && strstr(res.err, "perf_event_open"),
              "the line says neither the fallback nor why: " RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);

    /* Where perf is permitted nothing is said. */
    record_spin(dir, NULL, options, NULL, "0.3", &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    cr_expect(!strstr(res.err, "ptrace"), "a fallback said where there was none: " RUN_FMT,
              RUN_ARGS(&res));
    spawn_result_free(&res);
    free(path);
    free(noperf);
    test_rmtree(dir);
    free(dir);
}

/* --- 7. report reads ptprof.data by default ------------------------------------ */

Test(new_user, report_without_a_file_reads_ptprof_data, .timeout = 60)
{
    char *dir = test_mkdtemp();
    struct spawn_result res;
    const char *options[] = {"-g", "none", NULL};
    record_spin(dir, NULL, options, NULL, "0.3", &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    spawn_result_free(&res);
    char *data = test_path(dir, "ptprof.data");
    cr_assert(test_file_exists(data), "record wrote no ptprof.data");

    const char *report[] = {"report", "--no-cache", NULL};
    ptprof_in(dir, NULL, report, &res);
    cr_expect_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    cr_expect(strstr(res.out, "spin"), "the report of ptprof.data names no spin: " RUN_FMT,
              RUN_ARGS(&res));
    spawn_result_free(&res);

    /* Without one: a clear line naming the file. */
    cr_assert_eq(unlink(data), 0);
    ptprof_in(dir, NULL, report, &res);
    cr_expect_eq(spawn_exit_code(res.status), 2, RUN_CONTEXT(&res));
    cr_expect(strstr(res.err, "ptprof.data"), "the error does not name ptprof.data: " RUN_FMT,
              RUN_ARGS(&res));
    spawn_result_free(&res);
    free(data);
    test_rmtree(dir);
    free(dir);
}

/* --- 9. help and short options --------------------------------------------------- */

/* The help text of COMMAND. */
static char *help_of(const char *command)
{
    const char *args[] = {command, "--help", NULL};
    struct spawn_result res;
    ptprof_in(NULL, NULL, args, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, "%s --help: " RUN_FMT, command, RUN_ARGS(&res));
    char *out = xstrdup(res.out);
    spawn_result_free(&res);
    return out;
}

/* The long option that the short option -C of a help's option lines stands
 * for ("  -C, --long", "  -X, -C, --long"), or NULL. */
static char *short_option(const char *help, char c)
{
    char pattern[8];
    snprintf(pattern, sizeof(pattern), " -%c, ", c);
    for (const char *line = help; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        size_t len = strcspn(line, "\n");
        if (strncmp(line, "  -", 3) != 0)
            continue;
        char *text = xasprintf("%.*s", (int)len, line);
        const char *at = strstr(text, pattern);
        const char *opt = at ? strstr(at, "--") : NULL;
        char *name = opt ? xasprintf("%.*s", (int)strcspn(opt, " =,"), opt) : NULL;
        free(text);
        if (name)
            return name;
    }
    return NULL;
}

Test(new_user, every_option_is_listed_once_and_a_short_option_means_one_thing, .timeout = 120)
{
    static const char *const commands[] = {"record",  "report",     "compare",
                                           "convert", "flamegraph", "timeline",
                                           "info",    "dump",       "postprocess"};
    const size_t n = sizeof(commands) / sizeof(commands[0]);
    char *helps[sizeof(commands) / sizeof(commands[0])];
    for (size_t i = 0; i < n; i++)
        helps[i] = help_of(commands[i]);

    /* No option twice in one help. */
    for (size_t i = 0; i < n; i++) {
        for (const char *at = strstr(helps[i], "\n  "); at; at = strstr(at + 1, "\n  ")) {
            const char *opt = strstr(at, "--");
            const char *eol = strchr(at + 1, '\n');
            if (!opt || (eol && opt > eol) || opt > at + 12)
                continue;
            size_t len = strcspn(opt, " =\n,");
            char *name = xasprintf("%.*s ", (int)len, opt);
            char *name_eq = xasprintf("%.*s=", (int)len, opt);
            int count = 0;
            for (const char *l = strstr(helps[i], "\n  "); l; l = strstr(l + 1, "\n  ")) {
                const char *o = strstr(l, "--");
                const char *e = strchr(l + 1, '\n');
                if (o && (!e || o < e) && o <= l + 12 &&
                    (strncmp(o, name, len + 1) == 0 || strncmp(o, name_eq, len + 1) == 0))
                    count++;
            }
            cr_expect_leq(count, 1, "%s --help lists %.*s %d times", commands[i], (int)len, opt,
                          count);
            free(name);
            free(name_eq);
        }
    }

    /* A short option is one long option wherever it exists. */
    for (char c = 'a'; c <= 'z'; c++) {
        char *first = NULL;
        const char *first_cmd = NULL;
        for (size_t i = 0; i < n; i++) {
            char *opt = short_option(helps[i], c);
            if (!opt)
                continue;
            if (!first) {
                first = opt;
                first_cmd = commands[i];
                continue;
            }
            cr_expect_str_eq(opt, first, "-%c is %s in %s but %s in %s", c, opt, commands[i], first,
                             first_cmd);
            free(opt);
        }
        free(first);
    }
    /* perf's meanings: -e an event, -F a frequency, -g call graphs, -o the output. */
    char *e = short_option(helps[0], 'e'), *F = short_option(helps[0], 'F');
    char *g = short_option(helps[0], 'g');
    cr_expect(e && strcmp(e, "--event") == 0, "record -e is %s", e ? e : "nothing");
    cr_expect(F && strcmp(F, "--frequency") == 0, "record -F is %s", F ? F : "nothing");
    cr_expect(g && strcmp(g, "--call-graph") == 0, "record -g is %s", g ? g : "nothing");
    free(e);
    free(F);
    free(g);

    /* record points to --help-events and lists it. */
    cr_expect(strstr(helps[0], "      --help-events"), "record --help does not list --help-events");
    /* info reads every format the other commands read. */
    cr_expect(!strstr(helps[6], "Reads ptprof's native format and the original sampler's raw"),
              "info --help says it reads two formats:\n%s", helps[6]);
    cr_expect(strstr(helps[6], "gmon.out") && strstr(helps[6], "pprof"),
              "info --help does not say it reads every format:\n%s", helps[6]);
    for (size_t i = 0; i < n; i++)
        free(helps[i]);
}

Test(new_user, info_says_when_ptprof_engine_chose_the_engine, .timeout = 60)
{
    char *dir = test_mkdtemp(), *path = test_path(dir, "p.data");
    const char *options[] = {"-o", path, NULL};
    const char *env[] = {"PTPROF_ENGINE=ptrace", NULL};
    struct spawn_result res;
    record_spin(dir, NULL, options, env, "0.2", &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    spawn_result_free(&res);
    const char *info[] = {"info", path, NULL};
    ptprof_in(dir, NULL, info, &res);
    cr_expect(strstr(res.out, "engine:     ptrace (PTPROF_ENGINE=ptrace)"),
              "info does not say the variable chose it:\n%s", res.out);
    spawn_result_free(&res);
    free(path);
    test_rmtree(dir);
    free(dir);
}

/* --- 5. gmon.out's call graph, as gprof -q shows it ------------------------------ */

/* A line of gprof -q's entry of a function: a caller (above the primary
 * line) or a callee (below): self and children seconds, calls. */
struct gprof_line {
    char name[64];
    double self, children;
    long long calls;
};

/* The callers (ABOVE) or callees of FN in the call graph TEXT, into OUT. */
static size_t gprof_entry(const char *text, const char *fn, bool above, struct gprof_line *out,
                          size_t max)
{
    size_t n = 0;
    const char *block = strstr(text, "index % time");
    cr_assert_not_null(block, "no call graph:\n%s", text);
    while ((block = strstr(block, "\n")) != NULL) {
        const char *end = strstr(block + 1, "\n-----");
        if (!end)
            break;
        /* Is this entry FN's?  Its primary line starts with "[". */
        size_t n_before = 0;
        bool primary_seen = false, ours = false;
        struct gprof_line lines[32];
        size_t nl = 0;
        for (const char *l = block + 1; l && l < end;
             l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
            char line[256];
            size_t len = strcspn(l, "\n");
            snprintf(line, sizeof(line), "%.*s", (int)(len < 255 ? len : 255), l);
            if (line[0] == '[') {
                /* "[i] %time self children [called] NAME [i]" */
                char *last = strrchr(line, '[');
                while (last && last > line && last[-1] == ' ')
                    *--last = '\0';
                char *name = last ? strrchr(line, ' ') : NULL;
                ours = name && strcmp(name + 1, fn) == 0;
                primary_seen = true;
                n_before = nl;
                continue;
            }
            struct gprof_line g;
            long long total;
            if (sscanf(line, "%lf %lf %lld/%lld %63s", &g.self, &g.children, &g.calls, &total,
                       g.name) == 5 &&
                nl < 32)
                lines[nl++] = g;
        }
        if (primary_seen && ours) {
            size_t from = above ? 0 : n_before, to = above ? n_before : nl;
            for (size_t i = from; i < to && n < max; i++)
                out[n++] = lines[i];
            return n;
        }
        block = end + 1;
    }
    return n;
}

Test(new_user, gmon_callers_and_callees_are_gprofs_call_graph, .timeout = 240)
{
    char *dir = test_mkdtemp();
    struct gprof_run run;
    gprof_run_build(&run, dir, "callers.c", "callers-pg", "-O2", (const char *[]){"1.5", NULL});
    const char *prog = run.prog, *gmon = run.gmon;
    char *graph = gprof_run_text(&run, "-q");

    /* Who calls hot, how often, and with how much of hot's time. */
    struct gprof_line lines[16];
    size_t n = gprof_entry(graph, "hot", true, lines, 16);
    cr_assert_geq(n, 2, "gprof shows no two callers of hot:\n%s", graph);
    const char *by_calls[] = {prog, gmon, "--callers", "hot", "-m", "calls", "--no-cache", NULL};
    char *csv = report_csv(by_calls);
    const char *by_time[] = {prog, gmon, "--callers", "hot", "--no-cache", NULL};
    char *csv_time = report_csv(by_time);
    for (size_t i = 0; i < n; i++) {
        char key[128];
        snprintf(key, sizeof(key), "callers-pg:%.63s", lines[i].name);
        double calls = report_csv_value(csv, key, "calls");
        cr_expect_eq((long long)calls, lines[i].calls, "%s calls hot %.0f times, gprof says %lld",
                     lines[i].name, calls, lines[i].calls);
        double cpu = report_csv_value(csv_time, key, "cpu_time");
        double want = lines[i].self + lines[i].children;
        cr_expect(fabs(cpu - want) <= 0.0051, "%s's share of hot: %.4f s, gprof %.2f s",
                  lines[i].name, cpu, want);
    }
    cr_expect(isnan(report_csv_value(csv_time, "[no caller]:[no caller]", "cpu_time")),
              "hot has a caller that gprof does not show:\n%s", csv_time);
    /* The flat report's executions are gprof's calls. */
    long long calls_of_hot = 0;
    for (size_t i = 0; i < n; i++)
        calls_of_hot += lines[i].calls;
    const char *flat[] = {prog, gmon, "-m", "executions", "--no-cache", NULL};
    char *csv_flat = report_csv(flat);
    double executions = report_csv_value(csv_flat, "callers-pg:hot", "executions");
    cr_expect_eq((long long)executions, calls_of_hot, "hot executed %.0f times, gprof: %lld calls",
                 executions, calls_of_hot);
    free(csv_flat);
    free(csv);
    free(csv_time);

    /* What main calls: its callees' time propagated up, as gprof's lines. */
    n = gprof_entry(graph, "main", false, lines, 16);
    cr_assert_geq(n, 2, "gprof shows no two callees of main:\n%s", graph);
    const char *callees[] = {prog, gmon, "--callees", "main", "--no-cache", NULL};
    csv = report_csv(callees);
    for (size_t i = 0; i < n; i++) {
        char key[128];
        snprintf(key, sizeof(key), "callers-pg:%.63s", lines[i].name);
        double cpu = report_csv_value(csv, key, "cpu_time");
        double want = lines[i].self + lines[i].children;
        cr_expect(fabs(cpu - want) <= 0.0051, "main -> %s: %.4f s, gprof %.2f s", lines[i].name,
                  cpu, want);
    }
    free(csv);
    free(graph);
    gprof_run_free(&run);
    test_rmtree(dir);
    free(dir);
}

/* --- 8. reports that misled ------------------------------------------------------- */

/* perf record -e EVENT -F HZ -o DIR/perf.data -- WORKLOAD ARG */
static char *perf_record_event(const char *dir, const char *event, const char *hz,
                               const char *workload, const char *arg)
{
    char *perf = test_need_tool("perf"), *wl = build_workload(workload);
    char *path = test_path(dir, "perf.data");
    const char *argv[] = {perf, "record", "-q", "-e", event, "-F", hz,
                          "-o", path,     "--", wl,   arg,   NULL};
    struct spawn_result res;
    run_argv(&res, argv, NULL, dir, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, "perf record: " RUN_FMT, RUN_ARGS(&res));
    spawn_result_free(&res);
    free(perf);
    free(wl);
    return path;
}

static char *perf_record(const char *dir, const char *hz, const char *workload, const char *arg)
{
    return perf_record_event(dir, "cpu-clock", hz, workload, arg);
}

/* The header's "frequency X Hz..." of a report. */
static double report_frequency(const char *out, bool *per_cpu)
{
    const char *at = strstr(out, "frequency ");
    cr_assert_not_null(at, "no frequency in:\n%s", out);
    *per_cpu = strncmp(strstr(at, "Hz") ? strstr(at, "Hz") : at, "Hz per CPU s", 12) == 0;
    return atof(at + strlen("frequency "));
}

/* Two threads sampled at 4 kHz of CPU time each: the rate is 4 kHz per CPU
 * second, as perf means it, not the sum over threads per wall second. */
Test(new_user, perf_data_frequency_is_per_cpu_second, .timeout = 120)
{
    char *dir = test_mkdtemp();
    char *data = perf_record(dir, "4000", "callers", "1");
    const char *args[] = {"report", data, "--no-cache", NULL};
    struct spawn_result res;
    ptprof_in(dir, NULL, args, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    bool per_cpu;
    double hz = report_frequency(res.out, &per_cpu);
    cr_expect(per_cpu, "the rate is not per CPU second:\n%.400s", res.out);
    cr_expect(hz > 3000 && hz < 5000, "%.1f Hz for perf record -F 4000:\n%.400s", hz, res.out);
    spawn_result_free(&res);
    free(data);
    test_rmtree(dir);
    free(dir);
}

/* An event that is not a clock (page faults) is requested per thread, as
 * often as its faults allow: its samples are counted per wall second over
 * all threads and the header says so, and does not set them against the
 * request as if both were one rate. */
Test(new_user, perf_data_of_another_event_says_what_its_rate_is_per, .timeout = 120)
{
    char *dir = test_mkdtemp();
    char *data = perf_record_event(dir, "page-faults", "4000", "pagefaults", "1");
    const char *args[] = {"report", data, "--no-cache", NULL};
    struct spawn_result res;
    ptprof_in(dir, NULL, args, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    const char *at = strstr(res.out, "frequency ");
    double hz = 0;
    char per[80] = "";
    cr_assert(at && sscanf(at, "frequency %lf Hz %79[^)]", &hz, per) == 2,
              "no frequency in:\n%.400s", res.out);
    cr_expect_str_eq(per, "per wall s, all threads (requested 4000 per thread",
                     "the rate does not say what it is per:\n%.400s", res.out);
    const char *s = strstr(res.out, "samples "), *d = strstr(res.out, "duration ");
    cr_assert(s && d, "no samples or duration in:\n%.400s", res.out);
    double samples = atof(s + strlen("samples ")), duration = atof(d + strlen("duration "));
    cr_assert_gt(samples, 10, "too few page faults sampled to say:\n%.400s", res.out);
    cr_expect(fabs(hz - samples / duration) <= 0.01 * hz + 0.1,
              "%.1f Hz, but %.0f samples in %.3f s:\n%.400s", hz, samples, duration, res.out);
    spawn_result_free(&res);

    const char *info[] = {"info", data, NULL};
    ptprof_in(dir, NULL, info, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    cr_expect(strstr(res.out, "4000 Hz requested per thread, ") &&
                  strstr(res.out, "Hz achieved per wall second, all threads"),
              "info does not say what the rate is per:\n%.600s", res.out);
    spawn_result_free(&res);
    free(data);
    test_rmtree(dir);
    free(dir);
}

/* A kallsyms file of kernel text at TEXT, naming nothing else. */
static char *fake_kallsyms(const char *dir, const char *text)
{
    char *path = test_path(dir, "kallsyms");
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "%s T _text\n%s T _stext\n", text, text);
    cr_assert_eq(fclose(f), 0);
    return path;
}

/* Kernel frames of a perf.data recorded here are named as perf names them,
 * from /proc/kallsyms; from another kernel (its text elsewhere), they stay
 * addresses rather than take this kernel's names. */
Test(new_user, kernel_frames_of_perf_data_are_named_from_kallsyms, .timeout = 120)
{
    char *text = test_read_file("/proc/kallsyms", NULL);
    bool readable = text && strstr(text, " T _text") && strncmp(text, "0000000000000000", 16) != 0;
    free(text);
    if (!readable)
        cr_skip_test("/proc/kallsyms hides its addresses here");
    char *dir = test_mkdtemp();
    char *data = perf_record(dir, "4000", "pagefaults", "1");
    const char *args[] = {data, "-k", "binary,procedure", "--no-cache", NULL};
    char *csv = report_csv(args);
    size_t kernel = 0, named = 0;
    for (const char *l = strstr(csv, "\n[kernel.kallsyms]:"); l;
         l = strstr(l + 1, "\n[kernel.kallsyms]:")) {
        kernel++;
        named += strncmp(l + 19, "[kernel.kallsyms]+0x", 20) != 0;
    }
    cr_assert_gt(kernel, 0, "no kernel frame sampled: the test proves nothing\n%s", csv);
    cr_expect_eq(named, kernel, "%zu of %zu kernel rows named:\n%.3000s", named, kernel, csv);
    free(csv);

    /* Another kernel's text address: nothing named from this one. */
    char *other = fake_kallsyms(dir, "ffffffff80000000");
    char *env_kallsyms = xasprintf("PTPROF_KALLSYMS=%s", other);
    const char *env[] = {env_kallsyms, NULL};
    const char *report[] = {"report",   data,  "-k",         "binary,procedure",
                            "--format", "csv", "--no-cache", NULL};
    struct spawn_result res;
    ptprof_in(dir, env, report, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    for (const char *l = strstr(res.out, "\n[kernel.kallsyms]:"); l;
         l = strstr(l + 1, "\n[kernel.kallsyms]:"))
        cr_expect(strncmp(l + 19, "[kernel.kallsyms]+0x", 20) == 0,
                  "named from a kernel it was not recorded on: %.80s", l + 1);
    spawn_result_free(&res);
    free(env_kallsyms);
    free(other);
    free(data);
    test_rmtree(dir);
    free(dir);
}

/* Power by key: a key's share is its share of the energy, so no row holds
 * more than all of it.  The original raw format with a power channel: 50
 * samples at 10 W in one place, then 50 at 1 W in another. */
Test(new_user, power_shares_add_up_to_the_whole, .timeout = 60)
{
    char *dir = test_mkdtemp(), *path = test_path(dir, "power.pperf");
    struct pperf_writer *w = pperf_writer_open(path, 3, 8);
    cr_assert_not_null(w);
    uint64_t t0 = 1700000000000000ull;
    for (uint32_t i = 0; i < 100; i++) {
        double watts = i < 50 ? 10.0 : 1.0;
        struct pperf_thread th = {4242, i < 50 ? 0x401000u : 0x402000u, (uint64_t)i * 1000000};
        cr_assert_eq(pperf_writer_sample(w, t0 + (uint64_t)i * 1000, &watts, 1, &th), 0);
    }
    struct pperf_map map = {0x400000, 0x10000, "power-demo"};
    cr_assert_eq(pperf_writer_finish(w, 100000, 0, &map, 1), 0);
    const char *args[] = {path, "-k", "pc", "--metric", "power", "--no-cache", NULL};
    char *csv = report_csv(args);
    double sum = 0;
    size_t rows = 0;
    for (const char *l = strchr(csv, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
        char key[64];
        if (sscanf(l + 1, "%63[^,]", key) != 1)
            continue;
        double pct = report_csv_value(csv, key, "self_pct");
        cr_expect_leq(pct, 100.0 + 1e-6, "%s holds %.1f%% of the power:\n%s", key, pct, csv);
        sum += pct;
        rows++;
    }
    cr_assert_geq(rows, 2, "%s", csv);
    cr_expect(sum > 99.0 && sum < 101.0, "the rows hold %.1f%% in all:\n%s", sum, csv);
    free(csv);
    free(path);
    test_rmtree(dir);
    free(dir);
}

/* Line 5 of a.c and line 5 of b.c are two places: -k line alone keys by
 * file and line. */
Test(new_user, a_line_key_is_file_and_line, .timeout = 120)
{
    char *gcc = test_need_tool("gcc"), *dir = test_mkdtemp();
    char *a = test_path(dir, "a.c"), *b = test_path(dir, "b.c"), *prog = test_path(dir, "ab");
    static const char body[] = "#include <stdint.h>\n"
                               "volatile uint64_t sink;\n"
                               "__attribute__((noinline)) void work_%s(void)\n"
                               "{\n"
                               "    for (uint64_t i = 0; i < 20000000; i++) sink += i * i;\n"
                               "}\n"
                               "%s";
    static const char main_a[] = "void work_b(void);\n"
                                 "int main(void)\n"
                                 "{\n"
                                 "    for (int i = 0; i < 6; i++) { work_a(); work_b(); }\n"
                                 "    return 0;\n"
                                 "}\n";
    FILE *f = fopen(a, "w");
    cr_assert_not_null(f);
    fprintf(f, body, "a", main_a);
    fclose(f);
    f = fopen(b, "w");
    cr_assert_not_null(f);
    fprintf(f, body, "b", "");
    fclose(f);
    const char *cc[] = {gcc, "-O1", "-g", "-fcommon", "-o", prog, a, b, NULL};
    struct spawn_result res;
    run_argv(&res, cc, NULL, dir, 120);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    spawn_result_free(&res);

    char *data = test_path(dir, "ab.data");
    const char *rec[] = {"record", "-g", "none", "-o", data, "--", prog, NULL};
    ptprof_in(dir, NULL, rec, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    spawn_result_free(&res);
    const char *args[] = {data, "-k", "line", "-m", "samples", "--no-cache", NULL};
    char *csv = report_csv(args);
    char *line_a = xasprintf("%s:5", a), *line_b = xasprintf("%s:5", b);
    double in_a = report_csv_value(csv, line_a, "samples");
    double in_b = report_csv_value(csv, line_b, "samples");
    cr_expect(in_a > 10 && in_b > 10, "%s: %.0f samples, %s: %.0f samples\n%.2000s", line_a, in_a,
              line_b, in_b, csv);
    cr_expect(isnan(report_csv_value(csv, "5", "samples")), "a bare line 5 row:\n%.2000s", csv);
    free(csv);
    free(line_a);
    free(line_b);
    free(data);
    free(prog);
    free(a);
    free(b);
    free(gcc);
    test_rmtree(dir);
    free(dir);
}

/* --- 2. deep recursion ------------------------------------------------------------- */

/* "thread samples N" of a plain report of DATA. */
static double thread_samples(const char *dir, const char *data)
{
    const char *args[] = {"report", data, "--no-cache", NULL};
    struct spawn_result res;
    ptprof_in(dir, NULL, args, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    const char *at = strstr(res.out, "thread samples ");
    cr_assert_not_null(at, "%s", res.out);
    double n = atof(at + strlen("thread samples "));
    spawn_result_free(&res);
    return n;
}

/* ptprof record --engine ENGINE (default settings otherwise) of recurse
 * 2000 frames deep for SECONDS; *ERR gets its stderr. */
static char *record_recursion(const char *dir, const char *engine, double seconds, char **err)
{
    char *data = test_path(dir, engine), *wl = build_workload("recurse");
    char secs[32];
    snprintf(secs, sizeof(secs), "%.1f", seconds);
    const char *args[] = {"record", "--engine", engine, "-o", data, "--", wl, "2000", secs, NULL};
    struct spawn_result res;
    ptprof_in(dir, NULL, args, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    *err = xstrdup(res.err);
    spawn_result_free(&res);
    free(wl);
    return data;
}

/* Samples a share of them is judged on. */
#define RECURSION_MIN_SAMPLES 100

/* Stacks neither whole nor marked cut: none but a sample's odd moment. */
#define ENDED_EARLY_MAX 0.01

/* Shares of the call tree's roots of DATA: "[stack cut]", the program's
 * start (whole stacks), and anything else (stacks that ended early
 * without saying so); the report's stderr into *ERR. */
static void tree_roots(const char *dir, const char *data, double *cut, double *whole, double *other,
                       char **err)
{
    const char *args[] = {"report",      data, "--tree",     "--format", "csv",
                          "--threshold", "0",  "--no-cache", NULL};
    struct spawn_result res;
    ptprof_in(dir, NULL, args, &res);
    cr_assert_eq(spawn_exit_code(res.status), 0, RUN_CONTEXT(&res));
    *cut = *whole = *other = 0;
    for (const char *l = res.out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        char key[256];
        int depth;
        double total;
        if (sscanf(l, "%255[^,],%d,%*f,%*f,%lf", key, &depth, &total) != 3 || depth != 0)
            continue;
        if (strcmp(key, "[stack cut]:[stack cut]") == 0)
            *cut += total;
        else if (strstr(key, "_start"))
            *whole += total;
        else
            *other += total;
    }
    *err = xstrdup(res.err);
    spawn_result_free(&res);
}

/* The ptrace engine reads the stopped thread's whole stack: at default
 * settings the samples of a 2,000-frame recursion reach main (before,
 * they stopped at 256 frames, unflagged). */
Test(new_user, a_deep_recursion_reaches_main_with_the_ptrace_engine, .timeout = 120)
{
    char *dir = test_mkdtemp(), *err;
    char *data = record_recursion(dir, "ptrace", 2, &err);
    free(err);
    double all = thread_samples(dir, data);
    if (all <= RECURSION_MIN_SAMPLES) {
        /* Unwinding 2,000 frames bounds the rate, lower still with the
         * sanitized recorder on a busy machine: this run's rate says how
         * long the next one needs, three times over (a margin of half
         * once gave 86 samples where 100 were needed). */
        double seconds = 2 * 3.0 * RECURSION_MIN_SAMPLES / (all > 10 ? all : 10);
        free(data);
        data = record_recursion(dir, "ptrace", seconds < 20 ? seconds : 20, &err);
        free(err);
        all = thread_samples(dir, data);
    }
    const char *args[] = {data, "-k", "procedure", "-m", "samples", "--no-cache", NULL};
    char *csv = report_csv(args);
    double main_samples = report_csv_value(csv, "main", "total_samples");
    cr_assert_gt(all, RECURSION_MIN_SAMPLES, "%.0f samples", all);
    cr_expect_geq(main_samples / all, 0.9, "%.0f of %.0f samples reach main:\n%.1500s",
                  main_samples, all, csv);
    free(csv);
    double cut, whole, other;
    tree_roots(dir, data, &cut, &whole, &other, &err);
    free(err);
    cr_expect_leq(other, ENDED_EARLY_MAX * (cut + whole + other),
                  "%.3f s of stacks neither whole nor marked cut (%.3f s cut, %.3f s whole)", other,
                  cut, whole);
    free(data);
    test_rmtree(dir);
    free(dir);
}

/* Where stacks are cut anyway (the perf engine: the kernel copies under
 * 64 KiB), every cut sample is counted, the call tree puts them under
 * "[stack cut]", and the advice names what keeps the whole stack. */
Test(new_user, cut_stacks_are_counted_shown_as_cut_and_the_advice_works, .timeout = 120)
{
    char *dir = test_mkdtemp(), *err;
    struct spawn_result probe;
    const char *perf_ok[] = {"record", "--engine", "perf", "-o", "/dev/null", "--", "true", NULL};
    ptprof_in(dir, NULL, perf_ok, &probe);
    bool permitted = spawn_exit_code(probe.status) == 0;
    spawn_result_free(&probe);
    if (!permitted)
        cr_skip_test("perf_event_open is not permitted here");
    char *data = record_recursion(dir, "perf", 2, &err);
    free(err);
    double all = thread_samples(dir, data);

    double cut, whole, other;
    tree_roots(dir, data, &cut, &whole, &other, &err);
    cr_expect(strstr(err, "--engine ptrace"), "the advice does not name --engine ptrace:\n%s", err);
    cr_expect(!strstr(err, "larger --stack-size"), "the advice names what cannot work:\n%s", err);
    free(err);
    cr_expect_gt(cut, 0.5 * (cut + whole + other), "cut %.3f s, whole %.3f s, other %.3f s", cut,
                 whole, other);
    cr_expect_leq(other, ENDED_EARLY_MAX * (cut + whole + other),
                  "%.3f s of stacks neither whole nor marked cut (%.3f s cut, %.3f s whole)", other,
                  cut, whole);

    /* info counts every cut sample. */
    struct spawn_result res;
    const char *info[] = {"info", data, NULL};
    ptprof_in(dir, NULL, info, &res);
    const char *at = strstr(res.out, "thread samples cut short");
    cr_assert_not_null(at, "%s", res.out);
    while (at > res.out && at[-1] != ';')
        at--;
    double counted = atof(at + 1);
    cr_expect_geq(counted, (1 - ENDED_EARLY_MAX) * all - 1 - all * whole / (cut + whole + other),
                  "info counts %.0f cut of %.0f:\n%s", counted, all, res.out);
    spawn_result_free(&res);
    free(data);
    test_rmtree(dir);
    free(dir);
}
